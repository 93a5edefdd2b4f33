package kfd

import (
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/mmu"
)

// Events follow kfd_events.c: signal events own a slot of the signal page (4096 slots of 8 bytes,
// all-ones = unsignalled) whose index is the event id; other event types get ids from
// (INT_MAX >> 1) + 1 upwards. Waiters never hold Process.mu while blocked.
//
// Locking, as amdkfd's per-event ev->lock: Process.mu guards the event table and each event's
// exception data; an event's own mu guards its state (signalled, sets, age, waiters), taken after
// Process.mu where both are held. The completion-signal interrupt (SignalInterrupt, a queue's hot
// path) takes neither Process.mu nor any lock another queue takes for its own events: it finds the
// event in eventState.hot (published under Process.mu), sets it under its mu, and takes Process.mu
// only when a WAIT_EVENTS is asleep (eventState.sleeping), to wake it. A waiter counts itself
// asleep before its last test of the events, a setter updates the event before it reads the count
// (both sequentially consistent), so one of them sees the other.

const (
	signalSlots     = abi.KFD_SIGNAL_EVENT_LIMIT
	slotUnsignalled = ^uint64(0)
	firstOtherID    = (1<<31-1)>>1 + 1
	// mmapTypeEvents is kfd_priv.h's KFD_MMAP_TYPE_EVENTS (0x2ULL << KFD_MMAP_TYPE_SHIFT, shift 62).
	mmapTypeEvents = 2 << 62
)

type event struct {
	id        uint32
	typ       uint32
	autoReset bool
	memExc    *abi.HSAMemoryExceptionData // under Process.mu
	hwExc     *abi.HSAHWExceptionData     // under Process.mu

	mu       sync.Mutex // ev->lock: guards the state below
	signaled bool
	sets     uint64 // signals so far; a waiter registered at sets == n is activated once it moves
	age      uint64
	waiters  int
}

// set is set_event under the event's lock: age advances (to 2, not 0, on wrap: 0 and 1 are
// reserved); every current waiter is activated, and an auto-reset event with waiters does not stay
// signalled ("ev->signaled = !ev->auto_reset || !waitqueue_active(&ev->wq)").
func (ev *event) set() {
	ev.mu.Lock()
	if ev.age++; ev.age == 0 {
		ev.age = 2
	}
	ev.sets++
	ev.signaled = !ev.autoReset || ev.waiters == 0
	ev.mu.Unlock()
}

// hotEvents is what the completion-signal interrupt reads without Process.mu: the signal page and
// the signal and debug events by slot (ids below signalSlots are only those).
type hotEvents struct {
	page []byte
	ev   [signalSlots]atomic.Pointer[event]
}

type eventState struct {
	page      []byte // the signal page: a user BO on dGPU (pageBO) or a kfd-space page
	pageBO    *bo
	pageOff   int64
	own       bool // page allocated by the driver in the kfd space
	nextOther uint32
	changed   chan struct{}             // closed and replaced on a state change while a waiter sleeps on it
	sleeping  atomic.Int32              // WAIT_EVENTS calls about to sleep or asleep on changed
	hot       atomic.Pointer[hotEvents] // set with the signal page; nil after closeAll
}

func (e *eventState) init() {
	e.nextOther = firstOtherID
	e.changed = make(chan struct{})
}

// broadcast wakes every waiter of the process; called with Process.mu held. With none asleep
// it does nothing (see the locking note above): the completion-signal interrupt of a client that
// spins (ROCr's active wait) costs no channel close and no allocation.
func (e *eventState) broadcast() {
	if e.sleeping.Load() == 0 {
		return
	}
	close(e.changed)
	e.changed = make(chan struct{})
}

func (e *eventState) closeAll(p *Process) {
	p.events = map[uint32]*event{}
	e.hot.Store(nil)
	if e.own && e.page != nil {
		p.kfdSpace.release(e.pageOff, e.page)
	}
	e.page, e.pageBO = nil, nil
	e.broadcast()
}

func createEvent(p *Process, c Caller, a *abi.CreateEventArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a.EventPageOffset != 0 && a.EventType == abi.KFD_IOC_EVENT_SIGNAL || a.EventPageOffset != 0 && a.EventType == abi.KFD_IOC_EVENT_DEBUG_EVENT {
		// dGPU: the first CREATE_EVENT passes the handle of the user-allocated event page BO
		// (kfd_kmap_event_page).
		if p.evt.page != nil {
			return syscall.EINVAL // "Event page is already set"
		}
		b := p.bos[a.EventPageOffset]
		if b == nil || b.mem == nil || b.size < signalSlots*8 {
			return syscall.EINVAL
		}
		p.evt.page, p.evt.pageBO = b.mem[:signalSlots*8], b
	}
	ev := &event{typ: a.EventType, autoReset: a.AutoReset != 0, age: 1} // kfd_event_create: event_age = 1
	switch a.EventType {
	case abi.KFD_IOC_EVENT_SIGNAL, abi.KFD_IOC_EVENT_DEBUG_EVENT:
		if p.evt.page == nil {
			// No user page: the driver's own page, mapped by the client from dev/kfd.
			off, mem, err := p.kfdSpace.alloc(signalSlots * 8)
			if err != nil {
				return syscall.ENOMEM
			}
			for i := 0; i < len(mem); i += 8 {
				binary.LittleEndian.PutUint64(mem[i:], slotUnsignalled)
			}
			p.evt.page, p.evt.pageOff, p.evt.own = mem, off, true
		}
		if p.evt.hot.Load() == nil { // the page is set once: publish it for SignalInterrupt
			p.evt.hot.Store(&hotEvents{page: p.evt.page})
		}
		id := uint32(0)
		for i := uint32(1); i < signalSlots; i++ { // slot 0 stays reserved
			if p.events[i] == nil {
				id = i
				break
			}
		}
		if id == 0 {
			return syscall.ENOSPC
		}
		ev.id = id
		binary.LittleEndian.PutUint64(p.evt.page[8*id:], slotUnsignalled)
		a.EventTriggerData, a.EventSlotIndex = id, id
		// kfd_event_create answers every signal and debug event with the events page's mmap offset,
		// KFD_MMAP_TYPE_EVENTS; libhsakmt sets HWData2 (the slot's address) only when it is non-zero.
		// The driver's own page is served at its kfd-space offset (a FUSE file cannot be mapped at
		// 2^63); a client-supplied page is already mapped by the client and gets amdkfd's value.
		a.EventPageOffset = mmapTypeEvents
		if p.evt.own {
			a.EventPageOffset = uint64(p.evt.pageOff)
		}
	case abi.KFD_IOC_EVENT_NODECHANGE, abi.KFD_IOC_EVENT_DEVICESTATECHANGE, abi.KFD_IOC_EVENT_HW_EXCEPTION,
		abi.KFD_IOC_EVENT_SYSTEM_EVENT, abi.KFD_IOC_EVENT_PROFILE_EVENT, abi.KFD_IOC_EVENT_QUEUE_EVENT,
		abi.KFD_IOC_EVENT_MEMORY:
		if p.evt.nextOther == 0 {
			return syscall.ENOSPC
		}
		ev.id = p.evt.nextOther
		p.evt.nextOther++
		a.EventPageOffset = 0 // kfd_event_create: "*event_page_offset = 0" for other events
	default:
		return syscall.EINVAL
	}
	p.events[ev.id] = ev
	if h := p.evt.hot.Load(); h != nil && ev.id < signalSlots {
		h.ev[ev.id].Store(ev)
	}
	a.EventID = ev.id
	return 0
}

func destroyEvent(p *Process, c Caller, a *abi.DestroyEventArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.events[a.EventID] == nil {
		return syscall.EINVAL
	}
	delete(p.events, a.EventID)
	if h := p.evt.hot.Load(); h != nil && a.EventID < signalSlots {
		h.ev[a.EventID].Store(nil)
	}
	p.evt.broadcast()
	return 0
}

// signalLocked is set_event (event.set) and the wake-up of the process's waiters; under
// Process.mu.
func (p *Process) signalLocked(ev *event) {
	ev.set()
	p.evt.broadcast()
}

func setEvent(p *Process, c Caller, a *abi.SetEventArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	ev := p.events[a.EventID]
	if ev == nil || ev.typ != abi.KFD_IOC_EVENT_SIGNAL {
		return syscall.EINVAL // event_can_be_cpu_signaled: signal events only (debug events are the GPU's)
	}
	p.signalLocked(ev)
	return 0
}

func resetEvent(p *Process, c Caller, a *abi.ResetEventArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	ev := p.events[a.EventID]
	if ev == nil || ev.typ != abi.KFD_IOC_EVENT_SIGNAL {
		return syscall.EINVAL // event_can_be_cpu_signaled
	}
	ev.mu.Lock()
	ev.signaled = false
	ev.mu.Unlock()
	return 0
}

// SignalInterrupt is kfd_signal_event_interrupt for the hardware model: the CP wrote id to an event
// mailbox; the matching signal event is set (only signal and debug events have ids below
// signalSlots). It takes no lock shared with other queues: Process.mu only to wake a sleeping
// WAIT_EVENTS.
func (p *Process) SignalInterrupt(id uint32) {
	h := p.evt.hot.Load()
	if h == nil || id >= signalSlots {
		return
	}
	if ev := h.ev[id].Load(); ev != nil {
		p.setFromInterrupt(h, id, ev)
	}
}

// setFromInterrupt is set_event_from_interrupt: the event's slot goes back to "unsignalled"
// (acknowledge_signal), the event is set, and a WAIT_EVENTS asleep is woken. The slot table holds
// signal and debug events only (the ids below signalSlots), so event_can_be_gpu_signaled holds.
func (p *Process) setFromInterrupt(h *hotEvents, id uint32, ev *event) {
	word64(h.page[8*id:]).Store(slotUnsignalled)
	ev.set()
	if p.evt.sleeping.Load() != 0 {
		p.mu.Lock()
		p.evt.broadcast()
		p.mu.Unlock()
	}
}

// SignalEventInterrupt is kfd_signal_event_interrupt(pasid, partial_id, valid_id_bits) as the v9
// interrupt handler calls it for a wave's s_sendmsg(MSG_INTERRUPT) (kfd_int_process_v9.c: the
// SQ_INTERRUPT_MSG source with its 24 data bits, M0[23:0]): the event with that id is set if its slot
// in the signal page was written (lookup_signaled_event_by_partial_id); if none matches, every event
// whose slot was written is set, in id order (the exhaustive search over the signal slots). Each
// event set has its slot acknowledged. Like amdkfd, which searches under rcu_read_lock without
// p->event_mutex, it reads the events through the slot table and takes no lock shared with other
// queues (Process.mu only to wake a sleeping WAIT_EVENTS).
func (p *Process) SignalEventInterrupt(partial uint32, validBits uint) {
	h := p.evt.hot.Load()
	if h == nil {
		return // no signal page
	}
	written := func(id uint32) bool { return word64(h.page[8*id:]).Load() != slotUnsignalled }
	if int(partial) < signalSlots {
		step := uint32(0)
		if validBits < 32 && 1<<validBits < signalSlots {
			step = 1 << validBits // a partial id: every id with the same low bits
		}
		for id := partial; int(id) < signalSlots; id += step {
			if ev := h.ev[id].Load(); ev != nil && written(id) {
				p.setFromInterrupt(h, id, ev)
				return
			}
			if step == 0 {
				break
			}
		}
	}
	for id := range uint32(signalSlots) {
		if ev := h.ev[id].Load(); ev != nil && written(id) {
			p.setFromInterrupt(h, id, ev)
		}
	}
}

// raiseMemoryException is the GPUVM fault interrupt's handling (event_interrupt_wq_v9 ->
// kfd_set_dbg_ev_from_interrupt with EC_DEVICE_MEMORY_VIOLATION). err is the engine's error:
// when it holds the GPUVM's *mmu.FaultError, that fault's page and kind fill the data as the gfx9
// fault status does (NotPresent for a missing or invalid PTE, ReadOnly for a write without
// WRITEABLE, NoExecute for a fetch without EXECUTABLE); otherwise va and write describe the failed
// access. The VA is the faulting page (info->page_addr << PAGE_SHIFT). A debugger subscribed to
// the exception holds it; otherwise a GPUVM fault evicts the process's queues on the device
// (kfd_dqm_evict_pasid, evictForVMFault) and then every MEMORY event of the process gets the data
// and is set (kfd_signal_vm_fault_event). It reports whether it evicted: an engine error without
// an mmu fault (a misaligned or aperture access, which a GPU does not send to the memory
// controller) only sets the events.
func (p *Process) raiseMemoryException(gpuID uint32, err error, va uint64, write bool) (evicted bool) {
	f := mmu.Fault{VA: va, Kind: mmu.FaultNotPresent, Access: mmu.AccessRead}
	if write {
		f.Access = mmu.AccessWrite
	}
	var fe *mmu.FaultError
	vmFault := errors.As(err, &fe)
	if vmFault {
		f = fe.Fault
	}
	d := abi.HSAMemoryExceptionData{VA: f.VA &^ (pageSize - 1), GPUID: gpuID}
	switch {
	case f.Kind == mmu.FaultProtection && f.Access == mmu.AccessExec:
		d.Failure.NoExecute = 1
	case f.Kind == mmu.FaultProtection && (f.Access == mmu.AccessWrite || f.Access == mmu.AccessAtomic):
		d.Failure.ReadOnly = 1
	default:
		d.Failure.NotPresent = 1
	}
	p.d.log.Warn("GPU memory fault", "tgid", p.tgid, "gpu", gpuID, "va", hexVA(f.VA), "access", f.Access.String(), "kind", f.Kind.String())
	p.d.smiVMFault(gpuID, p.tgid)
	p.mu.Lock()
	pd := p.pdds[gpuID]
	held := p.dbgRaiseLocked(abi.KFD_EC_MASK(abi.EC_DEVICE_MEMORY_VIOLATION), pd, 0, &d)
	evict := !held && vmFault && pd != nil && !p.dead
	if evict {
		// The engine that faulted reports from its own goroutine and its queue is among those
		// preempted: the eviction runs apart, as amdkfd's interrupt worker does, and the events
		// are set after it. Teardown waits for it (Process.bg).
		p.bg.Add(1)
	}
	p.mu.Unlock()
	switch {
	case held:
		p.d.log.Info("GPU memory fault held for the debugger", "tgid", p.tgid)
	case evict:
		go func() {
			defer p.bg.Done()
			p.evictForVMFault(pd)
			p.signalMemoryException(d)
		}()
	default:
		p.signalMemoryException(d)
	}
	return evict
}

// evictForVMFault is kfd_dqm_evict_pasid: the process's queues on the device leave the hardware
// (evict_process_queues) and stay off it, those created later too (qpd->evicted): nothing
// restores them, the process is expected to die of the fault (ROCr's VMFaultHandler aborts).
func (p *Process) evictForVMFault(pd *pdd) {
	p.mu.Lock()
	if pd.vmFaultEvicted {
		p.mu.Unlock()
		return
	}
	pd.vmFaultEvicted = true
	var qs []*queue
	for _, q := range p.queues {
		if q.pd == pd {
			qs = append(qs, q)
		}
	}
	p.mu.Unlock()
	p.d.log.Warn("queues evicted after a GPU memory fault", "tgid", p.tgid, "gpu", pd.gpuID, "queues", len(qs))
	p.reschedule(qs)
}

// signalMemoryException is kfd_signal_vm_fault_event's delivery: every MEMORY event of the
// process gets the data and is set.
func (p *Process) signalMemoryException(d abi.HSAMemoryExceptionData) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ev := range p.events {
		if ev.typ == abi.KFD_IOC_EVENT_MEMORY {
			ev.memExc = &abi.HSAMemoryExceptionData{}
			*ev.memExc = d
			p.signalLocked(ev)
		}
	}
}

// raiseHWException delivers a hardware exception (queue reset) to every HW_EXCEPTION event.
func (p *Process) raiseHWExceptionLocked(gpuID uint32) {
	for _, ev := range p.events {
		if ev.typ == abi.KFD_IOC_EVENT_HW_EXCEPTION {
			ev.hwExc = &abi.HSAHWExceptionData{ResetType: 1, ResetCause: 1, MemoryLost: 0, GPUID: gpuID}
			p.signalLocked(ev)
		}
	}
}

// maxWaitEvents is the most waiters kfd_wait_on_events can allocate: kcalloc of 56-byte
// struct kfd_event_waiter is refused (ENOMEM) above KMALLOC_MAX_SIZE, 4 MiB on x86-64.
const maxWaitEvents = 4 << 20 / 56

// waiter is struct kfd_event_waiter: activated when the event was signalled at the start of the
// wait, when a non-zero last_event_age differs from the event's age, or when the event is set while
// the waiter is queued (its sets count moves).
type waiter struct {
	ev                 *event
	queued             bool
	sets               uint64
	activated, ageWait bool
}

// waitEvents is kfd_wait_on_events: timeout 0 polls, 0xffffffff waits forever, otherwise ms. Each
// event's waiter is set up in order (init_event_waiter: an auto-reset event's signalled state is
// consumed there, and stays consumed if a later id is unknown); a signal event with a non-zero
// last_event_age is age-tracked (KFD 1.14: the age it returns on completion tells the client which
// set it has seen, so a set between two waits is never missed). On completion the activated
// waiters' data is copied back (copy_signaled_event_data: exception data, the age of age-tracked
// signal events); an event destroyed under the wait fails it with EIO.
func waitEvents(p *Process, c Caller, a *abi.WaitEventsArgs) syscall.Errno {
	if a.NumEvents > maxWaitEvents {
		return syscall.ENOMEM
	}
	n := int(a.NumEvents)
	raw := make([]byte, 48*n)
	if n > 0 {
		if err := c.ReadMemory(a.EventsPtr, raw); err != nil {
			return syscall.EFAULT
		}
	}
	var deadline <-chan time.Time
	if a.Timeout != 0xffffffff && a.Timeout != 0 {
		t := time.NewTimer(time.Duration(min(a.Timeout, 0x7fffffff)) * time.Millisecond)
		defer t.Stop()
		deadline = t.C
	}
	all := a.WaitForAll != 0
	p.mu.Lock()
	ws := make([]waiter, n)
	ids := make([]uint32, n)
	release := func() {
		for i := range ws {
			if w := &ws[i]; w.queued {
				w.ev.mu.Lock()
				w.ev.waiters--
				w.ev.mu.Unlock()
			}
		}
	}
	for i := range ws {
		ids[i] = binary.LittleEndian.Uint32(raw[48*i+40:])
		ev := p.events[ids[i]]
		if ev == nil {
			release()
			p.mu.Unlock()
			return syscall.EINVAL
		}
		w := &ws[i]
		ev.mu.Lock()
		w.ev, w.activated = ev, ev.signaled
		ev.signaled = ev.signaled && !ev.autoReset
		if age := binary.LittleEndian.Uint64(raw[48*i:]); ev.typ == abi.KFD_IOC_EVENT_SIGNAL && age != 0 {
			w.ageWait = true // "last_event_age = 0 reserved for backward compatible"
			if ev.age != age {
				w.activated = true
			}
		}
		if !w.activated {
			w.queued, w.sets = true, ev.sets
			ev.waiters++
		}
		ev.mu.Unlock()
	}
	// test_event_condition
	test := func() uint32 {
		count := 0
		for i := range ws {
			w := &ws[i]
			if p.events[ids[i]] != w.ev {
				return abi.KFD_IOC_WAIT_RESULT_FAIL // destroyed (or its id reused) under the wait
			}
			if w.queued {
				w.ev.mu.Lock()
				w.activated = w.activated || w.ev.sets != w.sets
				w.ev.mu.Unlock()
			}
			if w.activated {
				if !all {
					return abi.KFD_IOC_WAIT_RESULT_COMPLETE
				}
				count++
			}
		}
		if count == len(ws) {
			return abi.KFD_IOC_WAIT_RESULT_COMPLETE
		}
		return abi.KFD_IOC_WAIT_RESULT_TIMEOUT
	}
	var errno syscall.Errno
	result := test()
	for result == abi.KFD_IOC_WAIT_RESULT_TIMEOUT && a.Timeout != 0 {
		if p.dead {
			errno = syscall.ENODEV // the driver went away (daemon stopping) under the wait
			break
		}
		// Counted asleep first, then tested again: a set the test misses sees the count.
		p.evt.sleeping.Add(1)
		if result = test(); result != abi.KFD_IOC_WAIT_RESULT_TIMEOUT {
			p.evt.sleeping.Add(-1)
			break
		}
		ch := p.evt.changed
		p.mu.Unlock()
		timedOut := false
		select {
		case <-ch:
		case <-deadline:
			timedOut = true
		case <-c.Interrupted():
			errno = syscall.EINTR // kfd_wait_on_events: -ERESTARTSYS on a pending signal
		}
		p.mu.Lock()
		p.evt.sleeping.Add(-1)
		if errno == 0 && p.dead {
			// Woken by the teardown (closeAll emptied the events): the driver went away, not
			// the events, so no FAIL result (amdkfd tears a process down only after its exit).
			errno = syscall.ENODEV
		}
		if errno != 0 {
			break
		}
		result = test()
		if timedOut {
			break
		}
	}
	release()
	if errno == syscall.EINTR {
		// free_waiters(undo_auto_reset): an interrupted wait, off the wait queues, gives back the
		// auto-reset sets it took.
		for i := range ws {
			if w := &ws[i]; w.activated && w.ev.autoReset && p.events[ids[i]] == w.ev {
				p.signalLocked(w.ev)
			}
		}
	}
	if errno == 0 && result == abi.KFD_IOC_WAIT_RESULT_COMPLETE {
		for i := range ws {
			w := &ws[i]
			if !w.activated {
				continue
			}
			d := raw[48*i : 48*i+48]
			switch {
			case w.ev.typ == abi.KFD_IOC_EVENT_MEMORY:
				var m abi.HSAMemoryExceptionData
				if w.ev.memExc != nil {
					m = *w.ev.memExc
				}
				encode(d[:32], m)
			case w.ev.typ == abi.KFD_IOC_EVENT_HW_EXCEPTION:
				var h abi.HSAHWExceptionData
				if w.ev.hwExc != nil {
					h = *w.ev.hwExc
				}
				encode(d[:16], h)
			case w.ev.typ == abi.KFD_IOC_EVENT_SIGNAL && w.ageWait:
				w.ev.mu.Lock()
				binary.LittleEndian.PutUint64(d, w.ev.age) // signal_event_data.last_event_age
				w.ev.mu.Unlock()
			}
		}
	}
	p.mu.Unlock()
	if errno != 0 {
		return errno
	}
	a.WaitResult = result
	if result == abi.KFD_IOC_WAIT_RESULT_FAIL {
		return syscall.EIO // kfd_wait_on_events: "else if (*wait_result == KFD_IOC_WAIT_RESULT_FAIL) ret = -EIO"
	}
	if result == abi.KFD_IOC_WAIT_RESULT_COMPLETE && n > 0 {
		if err := c.WriteMemory(a.EventsPtr, raw); err != nil {
			return syscall.EFAULT
		}
	}
	return 0
}
