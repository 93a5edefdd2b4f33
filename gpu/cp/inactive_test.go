package cp

import (
	"context"
	"errors"
	"fmt"
	"github.com/kfdemu/kfdemu/gpu/hqd"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/gpu/shader"
)

// aqlQueue is a queue whose ring belongs to an amd_queue_t laid out as ROCr lays it out (read and
// write pointers at &read_dispatch_id / &write_dispatch_id) with an interrupt-style queue-inactive
// signal, so the CP's amd_queue_t protocol (scratch, profiling, inactive codes) is exercised.
type aqlQueue struct {
	*tq
	aq, inactive uint64
}

const (
	amdQueueArea = memBase + 0x180000 // amd_queue_t objects, 256 bytes each
	inactiveID   = 77                 // event id of the queue-inactive signal
	inactiveMB   = memBase + 0x3ff800 // its mailbox
)

func (e *env) aqlQueue(clock func() uint64) *aqlQueue {
	i := e.nq
	e.nq++
	aq := uint64(amdQueueArea + i*256)
	t := &tq{e: e, base: ringArea + uint64(i)*0x10000, size: 64, rdVA: aq + aql.AMDQueueReadDispatchIDOffset,
		wrVA: aq + aql.AMDQueueWriteDispatchIDOffset}
	for s := uint64(0); s < 64; s++ {
		atomic.StoreUint32(e.m.word32(t.base+s*64), aql.PacketTypeInvalid)
	}
	sig := e.signal(0)
	atomic.StoreUint64(e.m.word64(sig+aql.SignalMailboxOffset), inactiveMB)
	atomic.StoreUint32(e.m.word32(sig+aql.SignalEventIDOffset), inactiveID)
	atomic.StoreUint64(e.m.word64(aq+aql.AMDQueueInactiveSignalOffset), sig)
	var mem Memory = e.m
	if e.vec {
		vm := &vecTestMemory{memory: e.m, t: e.t}
		e.vm, mem = vm, vm
		e.t.Cleanup(func() {
			if vm.reads.Load() == 0 || vm.writes.Load()+vm.afters.Load() == 0 {
				e.t.Errorf("the queue made %d ReadV, %d WriteV and %d AtomicAddTailAfter calls: the vectored accesses were not used",
					vm.reads.Load(), vm.writes.Load(), vm.afters.Load())
			}
		})
	}
	var bell func() uint64
	if e.bell != nil {
		bell = e.bell.Load
	}
	q, err := New(Config{RingBase: t.base, RingSize: 64, ReadIndexVA: t.rdVA, WriteIndexVA: t.wrVA, Memory: mem,
		Host: e.host, Clock: clock, ClientMemory: e.vec, Doorbell: bell})
	if err != nil {
		e.t.Fatal(err)
	}
	if q.AMDQueue() != aq {
		e.t.Fatalf("AMDQueue() = %#x, want %#x", q.AMDQueue(), aq)
	}
	t.Queue = q
	if err := q.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(q.Stop)
	return &aqlQueue{tq: t, aq: aq, inactive: sig}
}

func (a *aqlQueue) props() *uint32 { return a.e.m.word32(a.aq + aql.AMDQueuePropertiesOffset) }

// rocrScratch plays ROCr 5.2.3's AqlQueue::DynamicScratchHandler for codes 1 and 512: it allocates
// size_per_thread = AlignUp(private_segment_size, 16) for slots waves (base at the given VA), fills
// amd_queue_t as InitScratchSRD does, optionally marks the allocation single-use, and restarts the
// queue; on 512 it zeroes the fields, stores 0 and clears USE_SCRATCH_ONCE. It records every code.
type rocrScratch struct {
	a     *aqlQueue
	base  uint64
	slots uint64
	once  bool
	mu    sync.Mutex
	codes []uint64
}

func (r *rocrScratch) run(stop <-chan struct{}) {
	m := r.a.e.m
	for {
		var v uint64
		for v = atomic.LoadUint64(m.word64(r.a.inactive + aql.SignalValueOffset)); v == 0; v = atomic.LoadUint64(m.word64(r.a.inactive + aql.SignalValueOffset)) {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Microsecond):
			}
		}
		r.mu.Lock()
		r.codes = append(r.codes, v)
		r.mu.Unlock()
		aq := r.a.aq
		switch v {
		case aql.QueueInactiveInsufficientScratch:
			rd := atomic.LoadUint64(m.word64(aq + aql.AMDQueueReadDispatchIDOffset))
			var p aql.KernelDispatchPacket
			b := make([]byte, 64)
			m.Read(r.a.base+rd%64*64, b)
			p.Decode(b)
			spt := (uint64(p.PrivateSegmentSize) + 15) &^ 15
			size := spt * r.slots * 64
			waveKiB := (64*spt + 1023) / 1024
			tmp := aql.TmpringWaveSize.Set(0, uint32(waveKiB))
			tmp = aql.TmpringWaves.Set(tmp, uint32(size/(waveKiB*1024)))
			atomic.StoreUint32(m.word32(aq+aql.AMDQueueComputeTmpringSizeOffset), tmp)
			for i, w := range [4]uint32{uint32(r.base), uint32(r.base>>32) | 1<<31, uint32(size), 0x00ea7fac} {
				atomic.StoreUint32(m.word32(aq+aql.AMDQueueScratchResourceDescOffset+uint64(4*i)), w)
			}
			atomic.StoreUint64(m.word64(aq+aql.AMDQueueScratchLocationOffset), r.base)
			atomic.StoreUint64(m.word64(aq+aql.AMDQueueScratchByteSizeOffset), size)
			atomic.StoreUint32(m.word32(aq+aql.AMDQueueScratchLaneByteSizeOffset), uint32(spt))
			if r.once {
				p := r.a.props()
				atomic.StoreUint32(p, aql.QueuePropUseScratchOnce.Set(atomic.LoadUint32(p), 1))
			}
			atomic.StoreUint64(m.word64(r.a.inactive+aql.SignalValueOffset), 0) // restart
		case aql.QueueInactiveScratchReclaim:
			atomic.StoreUint32(m.word32(aq+aql.AMDQueueComputeTmpringSizeOffset), 0)
			for _, o := range []uint64{aql.AMDQueueScratchLocationOffset, aql.AMDQueueScratchByteSizeOffset} {
				atomic.StoreUint64(m.word64(aq+o), 0)
			}
			atomic.StoreUint64(m.word64(r.a.inactive+aql.SignalValueOffset), 0)
			p := r.a.props()
			atomic.StoreUint32(p, aql.QueuePropUseScratchOnce.Set(atomic.LoadUint32(p), 0)) // resumes the queue
		default:
			return // a queue error: ROCr reports it and suspends the queue
		}
	}
}

func (r *rocrScratch) seen() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]uint64(nil), r.codes...)
}

// A dispatch needing more private segment than the queue has is not launched: the CP stores
// "insufficient scratch" (1) in the inactive signal, raises its event, leaves the packet in the
// ring and launches it once ROCr has filled the scratch fields and stored 0; the dispatch sees the
// scratch ROCr set. A second dispatch that fits is launched without a report; one needing more
// grows it again.
func TestDynamicScratch(t *testing.T) { withVecMemory(t, testDynamicScratch) }

func testDynamicScratch(t *testing.T, vec bool) {
	e := newEnv(t)
	e.vec = vec
	var got []Scratch
	e.host.dispatch = func(q *Queue, p *aql.KernelDispatchPacket) error {
		got = append(got, q.Scratch())
		return nil
	}
	a := e.aqlQueue(nil)
	r := &rocrScratch{a: a, base: 0x7e0000000000, slots: 8}
	stop := make(chan struct{})
	defer close(stop)

	sigs := []uint64{e.signal(1), e.signal(1), e.signal(1)}
	privs := []uint32{40, 32, 1000}
	for i, s := range sigs {
		p := validDispatch(s)
		p.PrivateSegmentSize = privs[i]
		a.submit(dispatchPacket(p))
	}
	// Nothing runs until the runtime answers: the first packet stays at the read index.
	waitFor(t, "insufficient scratch report", func() bool { return e.value(a.inactive) == aql.QueueInactiveInsufficientScratch })
	time.Sleep(5 * time.Millisecond)
	if n := len(e.host.dispatches); n != 0 || a.readIndex() != 0 || e.value(sigs[0]) != 1 {
		t.Fatalf("launched while inactive: %d dispatches, read index %d", n, a.readIndex())
	}
	if mb := atomic.LoadUint64(e.m.word64(inactiveMB)); mb != inactiveID {
		t.Fatalf("inactive signal mailbox = %d, want event %d", mb, inactiveID)
	}
	go r.run(stop)
	waitFor(t, "three dispatches", func() bool { return e.value(sigs[2]) == 0 })
	if codes := r.seen(); fmt.Sprint(codes) != "[1 1]" {
		t.Fatalf("inactive codes %v, want [1 1] (grow for 40 bytes, fits 32, grow for 1000)", codes)
	}
	if len(got) != 3 || a.Status().ScratchWaits != 2 {
		t.Fatalf("%d dispatches, %d scratch waits", len(got), a.Status().ScratchWaits)
	}
	// 40 bytes per lane -> 48 (AlignUp 16) -> 3 KiB per wave, 8 slots.
	want := Scratch{Base: r.base, Size: 48 * 64 * 8, WaveBytes: 3 << 10, Waves: 8,
		Resource: [4]uint32{uint32(r.base), uint32(r.base>>32) | 1<<31, 48 * 64 * 8, 0x00ea7fac}}
	if got[0] != want || got[1] != want {
		t.Fatalf("scratch seen by the dispatches:\n%+v\n%+v\nwant %+v", got[0], got[1], want)
	}
	if got[2].WaveBytes != 63<<10 || got[2].Size != 1008*64*8 {
		t.Fatalf("third dispatch scratch %+v, want 63 KiB per wave", got[2])
	}
	if a.State() == hqd.StateError || len(e.host.queueErrors(a.Queue)) != 0 {
		t.Fatalf("queue error: %v", e.host.queueErrors(a.Queue))
	}
}

// Scratch ROCr marks single-use (AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE) is returned after the one
// dispatch: the CP reports 512 and waits until ROCr released it, stored 0 and cleared the property,
// so the next dispatch needing scratch asks again.
func TestScratchReclaim(t *testing.T) { withVecMemory(t, testScratchReclaim) }

func testScratchReclaim(t *testing.T, vec bool) {
	e := newEnv(t)
	e.vec = vec
	var got []Scratch
	e.host.dispatch = func(q *Queue, p *aql.KernelDispatchPacket) error {
		got = append(got, q.Scratch())
		return nil
	}
	a := e.aqlQueue(nil)
	r := &rocrScratch{a: a, base: 0x7e0000000000, slots: 4, once: true}
	stop := make(chan struct{})
	defer close(stop)
	go r.run(stop)
	s1, s2 := e.signal(1), e.signal(1)
	a.submit(dispatchPacket(validDispatch(s1)))
	a.submit(dispatchPacket(validDispatch(s2)))
	waitFor(t, "both dispatches", func() bool { return e.value(s2) == 0 })
	waitFor(t, "the last reclaim", func() bool { return len(r.seen()) == 4 && a.State() == hqd.StateIdle })
	if codes := r.seen(); fmt.Sprint(codes) != "[1 512 1 512]" {
		t.Fatalf("inactive codes %v, want [1 512 1 512]", codes)
	}
	if len(got) != 2 || got[0].Size == 0 || got[1].Size == 0 {
		t.Fatalf("dispatches saw %+v", got)
	}
	if v := atomic.LoadUint64(e.m.word64(a.aq + aql.AMDQueueScratchByteSizeOffset)); v != 0 {
		t.Fatalf("scratch size after reclaim = %d", v)
	}
}

// With ENABLE_PROFILING in queue_properties the CP writes the completion signal's start_ts (launch)
// and end_ts (completion) from Config.Clock before decrementing it; without it, neither.
func TestProfilingTimestamps(t *testing.T) { withVecMemory(t, testProfilingTimestamps) }

func testProfilingTimestamps(t *testing.T, vec bool) {
	e := newEnv(t)
	e.vec = vec
	var clock atomic.Uint64
	clock.Store(1000)
	tick := func() uint64 { return clock.Add(10) }
	e.host.dispatch = func(q *Queue, p *aql.KernelDispatchPacket) error {
		clock.Add(500) // the kernel runs 500 ticks
		return nil
	}
	a := e.aqlQueue(tick)
	ts := func(s uint64) (uint64, uint64) {
		return atomic.LoadUint64(e.m.word64(s + aql.SignalStartTSOffset)), atomic.LoadUint64(e.m.word64(s + aql.SignalEndTSOffset))
	}
	off := e.signal(1)
	p := validDispatch(off)
	p.PrivateSegmentSize = 0
	a.submit(dispatchPacket(p))
	waitFor(t, "unprofiled dispatch", func() bool { return e.value(off) == 0 })
	if s, en := ts(off); s != 0 || en != 0 {
		t.Fatalf("profiling off: start %d end %d written", s, en)
	}
	atomic.StoreUint32(a.props(), aql.QueuePropEnableProfiling.Set(0, 1))
	d, b := e.signal(1), e.signal(1)
	p.CompletionSignal = d
	a.submit(dispatchPacket(p))
	a.submit(barrier(aql.PacketTypeBarrierAnd, true, b))
	waitFor(t, "profiled packets", func() bool { return e.value(b) == 0 })
	s, en := ts(d)
	if s == 0 || en < s+500 || en > s+600 {
		t.Fatalf("dispatch start %d end %d: want end - start in [500, 600]", s, en)
	}
	bs, be := ts(b)
	if bs < en || be <= bs {
		t.Fatalf("barrier start %d end %d after dispatch end %d", bs, be, en)
	}
	// A profiled barrier whose signal has an event mailbox: released (INVALID header, read index),
	// stamped, decremented and its event delivered; where the ring is client memory all of it after
	// one read of the packet with queue_properties and in one release-and-complete access.
	ev := e.signal(1)
	atomic.StoreUint64(e.m.word64(ev+aql.SignalMailboxOffset), mailboxVA)
	atomic.StoreUint32(e.m.word32(ev+aql.SignalEventIDOffset), 91)
	var reads, afters int64
	if vec {
		reads, afters = e.vm.reads.Load(), e.vm.afters.Load()
	}
	a.submit(barrier(aql.PacketTypeBarrierAnd, true, ev))
	waitFor(t, "profiled barrier with an event", func() bool { return e.value(ev) == 0 })
	waitFor(t, "its event", func() bool {
		e.host.mu.Lock()
		defer e.host.mu.Unlock()
		return len(e.host.events) > 0 && e.host.events[len(e.host.events)-1] == 91
	})
	if got := atomic.LoadUint64(e.m.word64(mailboxVA)); got != 91 {
		t.Errorf("mailbox holds %d, want event id 91", got)
	}
	if s, en := ts(ev); s < be || en <= s {
		t.Errorf("barrier start %d end %d after the last end %d", s, en, be)
	}
	if rd := atomic.LoadUint64(e.m.word64(a.rdVA)); rd != 4 {
		t.Errorf("read index %d after 4 packets", rd)
	}
	if h := atomic.LoadUint32(e.m.word32(a.base + 3*aql.PacketSize)); uint16(h) != aql.PacketTypeInvalid {
		t.Errorf("slot 3's header %#x after its release, want INVALID", h)
	}
	if vec {
		if r, n := e.vm.reads.Load()-reads, e.vm.afters.Load()-afters; r != 1 || n != 1 {
			t.Errorf("the barrier made %d ReadV and %d AtomicAddTailAfter calls, want 1 and 1", r, n)
		}
	}
}

// Every queue error reaches the inactive signal with the code of its class (aql.QueueInactiveCode):
// the CP's own errors and the shader model's, through the one table.
func TestInactiveCodes(t *testing.T) {
	mem := newMemory(memBase, 1<<16)
	_, tooLarge := shader.DispatchRegs(context.Background(), mem, shader.RegParams{PgmAddr: memBase,
		WorkgroupSize: [3]uint16{1024, 2, 1}, NumGroups: [3]uint32{1, 1, 1}})
	_, ldsTooLarge := shader.DispatchRegs(context.Background(), mem, shader.RegParams{PgmAddr: memBase,
		RSRC2: 0x1ff << 15, WorkgroupSize: [3]uint16{64, 1, 1}, NumGroups: [3]uint32{1, 1, 1}})
	_, badKD := shader.ParseKernelDescriptor(make([]byte, 10))
	for _, c := range []struct {
		name string
		host error // what Host.Dispatch returns (nil: the packet itself is bad)
		pkt  func(*aql.KernelDispatchPacket)
		code uint64
	}{
		{"zero dimensions", nil, func(p *aql.KernelDispatchPacket) { p.Setup = 0 }, aql.QueueInactiveInvalidDim},
		{"zero grid", nil, func(p *aql.KernelDispatchPacket) { p.GridSizeX = 0 }, aql.QueueInactiveInvalidDim},
		{"null kernel object", nil, func(p *aql.KernelDispatchPacket) { p.KernelObject = 0 }, aql.QueueInactiveInvalidCode},
		{"bad descriptor", badKD, nil, aql.QueueInactiveInvalidCode},
		{"work-group too large", tooLarge, nil, aql.QueueInactiveGroupTooLarge},
		{"LDS too large", ldsTooLarge, nil, aql.QueueInactiveGroupTooLarge},
		{"shader fault", &shader.Fault{Addr: 0x1000, Err: errUnmapped}, nil, aql.QueueInactiveMemoryViolation},
		{"unimplemented", &shader.WaveError{Err: shader.ErrUnimplemented}, nil, aql.QueueInactiveIllegalInstruction},
		{"trap", &shader.TrapError{Code: 2}, nil, aql.QueueInactiveDebugTrap},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.host != nil && !errors.Is(c.host, shader.ErrBadDispatch) && c.code != aql.QueueInactiveMemoryViolation &&
				c.code != aql.QueueInactiveIllegalInstruction && c.code != aql.QueueInactiveDebugTrap {
				t.Fatalf("setup: %v is not a shader dispatch error", c.host)
			}
			e := newEnv(t)
			e.host.dispatch = func(*Queue, *aql.KernelDispatchPacket) error { return c.host }
			a := e.aqlQueue(nil)
			p := validDispatch(e.signal(1))
			p.PrivateSegmentSize = 0
			if c.pkt != nil {
				c.pkt(&p)
			}
			a.submit(dispatchPacket(p))
			waitFor(t, "queue error", func() bool { return a.State() == hqd.StateError })
			if v := uint64(e.value(a.inactive)); v != c.code {
				t.Fatalf("inactive code %#x, want %#x (err %v)", v, c.code, a.Err())
			}
		})
	}
	// Packet format errors, on the ring itself.
	e := newEnv(t)
	a := e.aqlQueue(nil)
	vendor := make([]byte, 64)
	vendor[0] = aql.PacketTypeVendorSpecific
	vendor[2] = 9 // no such AMD vendor format
	a.submit(vendor)
	waitFor(t, "queue error", func() bool { return a.State() == hqd.StateError })
	if v := e.value(a.inactive); v != aql.QueueInactiveVendorFormat {
		t.Fatalf("vendor packet: code %#x, want 256", v)
	}
	b := newEnv(t).aqlQueue(nil)
	b.submit(barrier(aql.PacketTypeAgentDispatch, false, 0))
	waitFor(t, "queue error", func() bool { return b.State() == hqd.StateError })
	if v := b.e.value(b.inactive); v != aql.QueueInactiveInvalidFormat {
		t.Fatalf("agent dispatch: code %#x, want 32", v)
	}
	if err := b.ReportInactive(&FaultError{VA: 1}); err != nil || b.e.value(b.inactive) != aql.QueueInactiveMemoryViolation {
		t.Fatalf("ReportInactive(fault): %v, code %#x", err, b.e.value(b.inactive))
	}
}

// A queue error the host keeps from the CP (Host.QueueError false: a GPUVM fault, which amdkfd
// answers by evicting the queue) stores no code and raises no interrupt: the queue is in the error
// state, its packet unlaunched and its completion signal untouched.
func TestQueueErrorWithoutCode(t *testing.T) {
	e := newEnv(t)
	e.host.keepCode = true
	e.host.dispatch = func(*Queue, *aql.KernelDispatchPacket) error {
		return &shader.Fault{Addr: 0x1000, Err: errUnmapped}
	}
	a := e.aqlQueue(nil)
	done := e.signal(1)
	p := validDispatch(done)
	p.PrivateSegmentSize = 0
	a.submit(dispatchPacket(p))
	waitFor(t, "queue error", func() bool { return a.State() == hqd.StateError })
	if v := e.value(a.inactive); v != 0 {
		t.Errorf("inactive code %#x stored, want none", v)
	}
	if n := len(e.host.queueErrors(a.Queue)); n != 1 {
		t.Errorf("%d QueueError calls, want 1", n)
	}
	e.host.mu.Lock()
	events := len(e.host.events)
	e.host.mu.Unlock()
	if events != 0 || e.value(done) != 1 || a.readIndex() != 0 {
		t.Errorf("after the error: %d interrupts, signal %d, read index %d", events, e.value(done), a.readIndex())
	}
}

// An amd_queue_t without a queue-inactive signal cannot be given scratch by anyone: the dispatch is
// launched (the shader model then fails it on its own scratch check) instead of hanging the queue.
func TestScratchWithoutInactiveSignal(t *testing.T) {
	e := newEnv(t)
	a := e.aqlQueue(nil)
	atomic.StoreUint64(e.m.word64(a.aq+aql.AMDQueueInactiveSignalOffset), 0)
	s := e.signal(1)
	a.submit(dispatchPacket(validDispatch(s)))
	waitFor(t, "the dispatch", func() bool { return e.value(s) == 0 })
	if len(e.host.dispatches) != 1 || a.Status().ScratchWaits != 0 {
		t.Fatalf("%d dispatches, %d scratch waits", len(e.host.dispatches), a.Status().ScratchWaits)
	}
}

// A packet announced by its doorbell, in client memory, is read whole with amd_queue_t's fields in
// one access (no header load before it): its doorbell was stored after its header. Its body, its
// profiling and its completion come out as with the header read first; an INVALID slot announced
// by the doorbell still waits (PSA-2.8-Q19); a packet published with the write index alone still
// has its header loaded first.
func TestAnnouncedPacketReadWhole(t *testing.T) {
	e := newEnv(t)
	e.vec = true
	var bell atomic.Uint64
	bell.Store(^uint64(0)) // kfd's value of a doorbell not yet rung
	e.bell = &bell
	var clock atomic.Uint64
	a := e.aqlQueue(func() uint64 { return clock.Add(10) })
	atomic.StoreUint32(a.props(), aql.QueuePropEnableProfiling.Set(0, 1))
	m := e.vm
	type counts struct{ loads, reads, afters int64 }
	now := func() counts { return counts{m.load32s.Load(), m.reads.Load(), m.afters.Load()} }
	ring := func(id uint64) { bell.Store(id); a.Kick() }
	// The queue's first look (at its start) done before the first packet: one that came late
	// would find that packet by the write index, before its doorbell (seen under -race in CI).
	settle(t, a.tq)

	before := now()
	s0 := e.signal(1)
	a.write(a.reserve(), barrier(aql.PacketTypeBarrierAnd, true, s0))
	ring(0)
	waitFor(t, "announced barrier", func() bool { return e.value(s0) == 0 && a.readIndex() == 1 })
	if c := now(); c != (counts{before.loads, before.reads + 1, before.afters + 1}) {
		t.Errorf("announced barrier: %d header loads, %d ReadV, %d AtomicAddTailAfter; want 0, 1, 1",
			c.loads-before.loads, c.reads-before.reads, c.afters-before.afters)
	}
	if s, en := atomic.LoadUint64(e.m.word64(s0+aql.SignalStartTSOffset)), atomic.LoadUint64(e.m.word64(s0+aql.SignalEndTSOffset)); s == 0 || en <= s {
		t.Errorf("announced barrier: start %d end %d (profiling read with the packet)", s, en)
	}

	before = now()
	s1 := e.signal(1)
	p := validDispatch(s1)
	p.PrivateSegmentSize = 0
	a.write(a.reserve(), dispatchPacket(p))
	ring(1)
	waitFor(t, "announced dispatch", func() bool { return e.value(s1) == 0 && a.readIndex() == 2 })
	if c := now(); c.loads != before.loads || c.reads != before.reads+1 {
		t.Errorf("announced dispatch: %d header loads and %d ReadV, want 0 and 1", c.loads-before.loads, c.reads-before.reads)
	}
	e.host.mu.Lock()
	got := e.host.dispatches[len(e.host.dispatches)-1]
	e.host.mu.Unlock()
	if got != p {
		t.Errorf("announced dispatch decoded as %+v, want %+v", got, p)
	}

	bell.Store(5) // announces 2 to 5; slot 2 is still INVALID
	a.Kick()
	settle(t, a.tq)
	if a.readIndex() != 2 || len(e.host.queueErrors(a.Queue)) != 0 {
		t.Fatalf("after an announced INVALID slot: rd=%d errors %v", a.readIndex(), e.host.queueErrors(a.Queue))
	}
	// Published with the write index alone (the doorbell stays below it): the header first.
	bell.Store(1)
	settle(t, a.tq) // no look that still saw the doorbell at 5 (a whole read of slot 2) overlaps the write below
	before = now()
	s2 := e.signal(1)
	a.write(a.reserve(), barrier(aql.PacketTypeBarrierAnd, true, s2))
	a.Kick()
	waitFor(t, "barrier on the write index", func() bool { return e.value(s2) == 0 && a.readIndex() == 3 })
	if c := now(); c.loads == before.loads {
		t.Errorf("a packet published with the write index alone was read without loading its header first")
	}
}

// A fault in the one write of a release (releaseComplete) names the piece that faulted: before
// the read index is written the packet is not released (the CP's read index and packet count roll
// back); after it, the packet is released and the error names the timestamps or the signal, which
// keeps its value.
func TestReleaseFaults(t *testing.T) {
	for _, c := range []struct {
		name    string
		fail    func(a *aqlQueue, slot, sig uint64) uint64
		op      string
		release bool // the read index passed the packet
	}{
		{"ring", func(a *aqlQueue, slot, sig uint64) uint64 { return slot }, "ring", false},
		{"read index", func(a *aqlQueue, slot, sig uint64) uint64 { return a.rdVA }, "read index", false},
		{"start_ts", func(a *aqlQueue, slot, sig uint64) uint64 { return sig + aql.SignalStartTSOffset }, "completion signal start_ts", true},
		{"signal", func(a *aqlQueue, slot, sig uint64) uint64 { return sig + aql.SignalValueOffset }, "completion signal", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.vec = true
			var clock atomic.Uint64
			a := e.aqlQueue(func() uint64 { return clock.Add(10) })
			atomic.StoreUint32(a.props(), aql.QueuePropEnableProfiling.Set(0, 1))
			ok := e.signal(1)
			a.submit(barrier(aql.PacketTypeBarrierAnd, true, ok)) // a packet released as usual first
			waitFor(t, "first packet", func() bool { return e.value(ok) == 0 })

			sig := e.signal(1)
			slot := a.base + 64
			want := c.fail(a, slot, sig)
			e.vm.failWrite.Store(want)
			a.submit(barrier(aql.PacketTypeBarrierAnd, true, sig))
			waitFor(t, "queue error", func() bool { return a.State() == hqd.StateError })
			var fe *FaultError
			if err := a.Err(); !errors.As(err, &fe) || !errors.Is(err, errInjected) || fe.VA != want || fe.Op != c.op {
				t.Fatalf("queue error %v, want a fault at %#x (%s)", err, want, c.op)
			}
			st := a.Status()
			rd, packets := uint64(1), uint64(1)
			if c.release {
				rd, packets = 2, 2
			}
			if st.ReadIndex != rd || st.Packets != packets {
				t.Errorf("CP read index %d, packets %d; want %d, %d", st.ReadIndex, st.Packets, rd, packets)
			}
			if got := a.readIndex(); got != rd {
				t.Errorf("read index in memory %d, want %d", got, rd)
			}
			if e.value(sig) != 1 {
				t.Errorf("signal %d after a failed release, want 1", e.value(sig))
			}
		})
	}
}
