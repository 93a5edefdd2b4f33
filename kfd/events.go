package kfd

import (
	"encoding/binary"
	"errors"
	"slices"
	"syscall"
	"time"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/mmu"
)

// Events follow kfd_events.c: signal events own a slot of the signal page (4096 slots of 8 bytes,
// all-ones = unsignalled) whose index is the event id; other event types get ids from
// (INT_MAX >> 1) + 1 upwards. Waiters never hold Process.mu while blocked.

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
	signaled  bool
	sets      uint64 // signals so far; a waiter registered at sets == n is activated once it moves
	age       uint64
	waiters   int
	memExc    *abi.HSAMemoryExceptionData
	hwExc     *abi.HSAHWExceptionData
}

type eventState struct {
	page      []byte // the signal page: a user BO on dGPU (pageBO) or a kfd-space page
	pageBO    *bo
	pageOff   int64
	own       bool // page allocated by the driver in the kfd space
	nextOther uint32
	changed   chan struct{} // closed and replaced on every state change
}

func (e *eventState) init() {
	e.nextOther = firstOtherID
	e.changed = make(chan struct{})
}

// broadcast wakes every waiter of the process; called with Process.mu held.
func (e *eventState) broadcast() {
	close(e.changed)
	e.changed = make(chan struct{})
}

func (e *eventState) closeAll(p *Process) {
	p.events = map[uint32]*event{}
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
	ev := &event{typ: a.EventType, autoReset: a.AutoReset != 0}
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
	p.evt.broadcast()
	return 0
}

// signalLocked is set_event: age advances (skipping 0 and 1 on wrap); every current waiter is
// activated, and an auto-reset event with waiters does not stay signalled
// ("ev->signaled = !ev->auto_reset || !waitqueue_active(&ev->wq)").
func (p *Process) signalLocked(ev *event) {
	ev.age++
	if ev.age < 2 {
		ev.age = 2
	}
	ev.sets++
	ev.signaled = !ev.autoReset || ev.waiters == 0
	p.evt.broadcast()
}

func setEvent(p *Process, c Caller, a *abi.SetEventArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	ev := p.events[a.EventID]
	if ev == nil || (ev.typ != abi.KFD_IOC_EVENT_SIGNAL && ev.typ != abi.KFD_IOC_EVENT_DEBUG_EVENT) {
		return syscall.EINVAL // event_can_be_cpu_signaled
	}
	p.signalLocked(ev)
	return 0
}

func resetEvent(p *Process, c Caller, a *abi.ResetEventArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	ev := p.events[a.EventID]
	if ev == nil || (ev.typ != abi.KFD_IOC_EVENT_SIGNAL && ev.typ != abi.KFD_IOC_EVENT_DEBUG_EVENT) {
		return syscall.EINVAL
	}
	ev.signaled = false
	return 0
}

// SignalInterrupt is kfd_signal_event_interrupt for the hardware model: the CP wrote id to an event
// mailbox; the matching signal event is set.
func (p *Process) SignalInterrupt(id uint32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev := p.events[id]; ev != nil && (ev.typ == abi.KFD_IOC_EVENT_SIGNAL || ev.typ == abi.KFD_IOC_EVENT_DEBUG_EVENT) {
		// acknowledge_signal: the slot the CP wrote goes back to "unsignalled".
		if p.evt.page != nil && int(id) < signalSlots {
			word64(p.evt.page[8*id:]).Store(slotUnsignalled)
		}
		p.signalLocked(ev)
	}
}

// SignalEventInterrupt is kfd_signal_event_interrupt(pasid, partial_id, valid_id_bits) as the v9
// interrupt handler calls it for a wave's s_sendmsg(MSG_INTERRUPT) (kfd_int_process_v9.c: the
// SQ_INTERRUPT_MSG source with its 24 data bits, M0[23:0]): the event with that id is set if its slot
// in the signal page was written (lookup_signaled_event_by_partial_id); if none matches, every event
// whose slot was written is set (the exhaustive search). Each event set has its slot acknowledged.
func (p *Process) SignalEventInterrupt(partial uint32, validBits uint) {
	p.mu.Lock()
	defer p.mu.Unlock()
	page := p.evt.page
	if page == nil {
		return
	}
	written := func(id uint32) bool {
		return int(id) < signalSlots && word64(page[8*id:]).Load() != slotUnsignalled
	}
	set := func(id uint32, ev *event) { // set_event_from_interrupt: acknowledge_signal, then set_event
		if ev == nil || ev.typ != abi.KFD_IOC_EVENT_SIGNAL && ev.typ != abi.KFD_IOC_EVENT_DEBUG_EVENT {
			return // event_can_be_gpu_signaled
		}
		word64(page[8*id:]).Store(slotUnsignalled)
		p.signalLocked(ev)
	}
	if int(partial) < signalSlots {
		step := uint32(0)
		if validBits < 32 && 1<<validBits < signalSlots {
			step = 1 << validBits // a partial id: every id with the same low bits
		}
		for id := partial; int(id) < signalSlots; id += step {
			if ev := p.events[id]; ev != nil && written(id) {
				set(id, ev)
				return
			}
			if step == 0 {
				break
			}
		}
	}
	ids := make([]uint32, 0, len(p.events))
	for id := range p.events {
		ids = append(ids, id)
	}
	slices.Sort(ids) // idr_for_each_entry order
	for _, id := range ids {
		if written(id) {
			set(id, p.events[id])
		}
	}
}

// raiseMemoryException is kfd_signal_vm_fault_event: every MEMORY event of the process gets the
// fault's data and is set. err is the engine's error: when it holds the GPUVM's *mmu.FaultError,
// that fault's page and kind fill the data as the gfx9 fault status does (NotPresent for a missing
// or invalid PTE, ReadOnly for a write without WRITEABLE, NoExecute for a fetch without
// EXECUTABLE); otherwise va and write describe the failed access. The VA is the faulting page
// (info->page_addr << PAGE_SHIFT).
func (p *Process) raiseMemoryException(gpuID uint32, err error, va uint64, write bool) {
	f := mmu.Fault{VA: va, Kind: mmu.FaultNotPresent, Access: mmu.AccessRead}
	if write {
		f.Access = mmu.AccessWrite
	}
	var fe *mmu.FaultError
	if errors.As(err, &fe) {
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

const maxWaitEvents = signalSlots

// waitEvents is kfd_wait_on_events: timeout 0 polls, 0xffffffff waits forever, otherwise ms.
func waitEvents(p *Process, c Caller, a *abi.WaitEventsArgs) syscall.Errno {
	if a.NumEvents == 0 || a.NumEvents > maxWaitEvents {
		return syscall.EINVAL
	}
	raw := make([]byte, 48*int(a.NumEvents))
	if err := c.ReadMemory(a.EventsPtr, raw); err != nil {
		return syscall.EFAULT
	}
	ids := make([]uint32, a.NumEvents)
	for i := range ids {
		ids[i] = binary.LittleEndian.Uint32(raw[48*i+40:])
	}
	var deadline <-chan time.Time
	if a.Timeout != 0xffffffff && a.Timeout != 0 {
		t := time.NewTimer(time.Duration(a.Timeout) * time.Millisecond)
		defer t.Stop()
		deadline = t.C
	}
	p.mu.Lock()
	evs := make([]*event, len(ids))
	for i, id := range ids {
		if evs[i] = p.events[id]; evs[i] == nil {
			p.mu.Unlock()
			return syscall.EINVAL
		}
	}
	seen := make([]uint64, len(evs))
	for i, ev := range evs {
		ev.waiters++
		seen[i] = ev.sets
	}
	active := func(i int) bool { return evs[i].signaled || evs[i].sets != seen[i] }
	result := uint32(abi.KFD_IOC_WAIT_RESULT_TIMEOUT)
	var errno syscall.Errno
	for {
		done, n := true, 0
		for i := range evs {
			if active(i) {
				n++
			} else {
				done = false
			}
		}
		if (a.WaitForAll != 0 && done) || (a.WaitForAll == 0 && n > 0) {
			result = abi.KFD_IOC_WAIT_RESULT_COMPLETE
			break
		}
		if p.dead {
			errno = syscall.ENODEV // the driver went away (daemon stopping) under the wait
			break
		}
		if a.Timeout == 0 {
			break
		}
		ch := p.evt.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			p.mu.Lock()
			goto out
		case <-c.Interrupted():
			p.mu.Lock()
			errno = syscall.EINTR // kfd_wait_on_events: -ERESTARTSYS on a pending signal
			goto out
		}
		p.mu.Lock()
		if p.dead {
			errno = syscall.ENODEV
			break
		}
		// An event destroyed while waited on fails the wait (kfd: -EINVAL... wait_result FAIL).
		for i, id := range ids {
			if p.events[id] != evs[i] {
				result = abi.KFD_IOC_WAIT_RESULT_FAIL
				goto out
			}
		}
	}
out:
	for i, ev := range evs {
		ev.waiters--
		d := raw[48*i : 48*i+48]
		switch {
		case ev.memExc != nil:
			b := make([]byte, 32)
			encode(b, *ev.memExc)
			copy(d, b)
		case ev.hwExc != nil:
			b := make([]byte, 16)
			encode(b, *ev.hwExc)
			copy(d, b)
		case ev.typ == abi.KFD_IOC_EVENT_SIGNAL:
			binary.LittleEndian.PutUint64(d, ev.age) // signal_event_data.last_event_age
		}
		// A waiter that found an auto-reset event signalled consumes it (test_event_condition).
		if result == abi.KFD_IOC_WAIT_RESULT_COMPLETE && ev.autoReset && ev.signaled {
			ev.signaled = false
		}
	}
	p.mu.Unlock()
	if errno != 0 {
		return errno
	}
	if err := c.WriteMemory(a.EventsPtr, raw); err != nil {
		return syscall.EFAULT
	}
	a.WaitResult = result
	return 0
}
