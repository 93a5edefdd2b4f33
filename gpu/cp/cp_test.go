package cp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/kfdemu/kfdemu/gpu/hqd"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
)

// PSA §2.9.8 / reference checklist 10: barrier-AND with deps {s1, 0, 0, 0, 0} completes only after
// s1 reaches 0, then decrements its completion signal; the slot is INVALID and the read index past it.
// No doorbell is rung after s1 changes: the backoff poll must see it (PSA-2.10-04).
func TestBarrierAndSingle(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{})
	dep, done := e.signal(1), e.signal(1)
	id := q.submit(barrier(aql.PacketTypeBarrierAnd, false, done, dep))
	waitFor(t, "queue blocked on barrier", func() bool { return q.State() == hqd.StateBlocked })
	if e.value(done) != 1 || q.readIndex() != 0 {
		t.Fatalf("barrier completed with its dependency at 1: done=%d rd=%d", e.value(done), q.readIndex())
	}
	e.set(dep, 0)
	waitFor(t, "completion signal", func() bool { return e.value(done) == 0 })
	waitFor(t, "read index", func() bool { return q.readIndex() == id+1 })
	if h := atomic.LoadUint32(e.m.word32(q.base)); aql.PacketType(uint16(h)) != aql.PacketTypeInvalid {
		t.Errorf("slot header %#x after release, want INVALID (PSA-2.8-Q17)", h)
	}
	st := q.Status()
	if st.ReadIndex != 1 || st.WriteIndex != 1 || st.Packets != 1 || st.Err != nil {
		t.Errorf("status %+v", st)
	}
}

// PSA §2.9.8: the dependencies need not be 0 at the same time; each is latched once observed.
// NULL dependencies are satisfied.
func TestBarrierAndLatchesObservedZeros(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{})
	a, b, done := e.signal(0), e.signal(1), e.signal(1)
	q.submit(barrier(aql.PacketTypeBarrierAnd, false, done, 0, a, 0, b, 0))
	waitFor(t, "blocked", func() bool { return q.State() == hqd.StateBlocked })
	e.set(a, 5) // a was already observed at 0
	e.set(b, 0)
	q.Kick()
	waitFor(t, "completion", func() bool { return e.value(done) == 0 })
}

// PSA-2.10-06 and §2.9.8 across queues: queue B's barrier waits on the completion signal of a
// barrier on queue A. Polling is disabled, so only a kick (A) and Group.Wake (B) can make progress.
// While B is blocked, A keeps processing.
func TestBarrierChainAcrossQueues(t *testing.T) {
	e := newEnv(t)
	g := &Group{}
	qa := e.queue(qopt{group: g, noPoll: true})
	qb := e.queue(qopt{group: g, noPoll: true})
	gate, aDone, bDone, other := e.signal(1), e.signal(1), e.signal(1), e.signal(1)
	qb.submit(barrier(aql.PacketTypeBarrierAnd, false, bDone, aDone))
	waitFor(t, "B blocked", func() bool { return qb.State() == hqd.StateBlocked })
	qa.submit(barrier(aql.PacketTypeBarrierAnd, false, other)) // no deps: completes at once
	waitFor(t, "A runs while B is blocked", func() bool { return e.value(other) == 0 })
	qa.submit(barrier(aql.PacketTypeBarrierAnd, false, aDone, gate))
	waitFor(t, "A blocked", func() bool { return qa.State() == hqd.StateBlocked })
	if e.value(bDone) != 1 {
		t.Fatal("B completed before A")
	}
	e.set(gate, 0)
	qa.Kick() // the client's doorbell-less signal store is seen on the next kick
	waitFor(t, "B completes after A", func() bool { return e.value(bDone) == 0 })
	if e.value(aDone) != 0 {
		t.Error("A's completion signal not decremented")
	}
}

// Without a Group and without polling, a blocked barrier is re-checked on the doorbell (Kick).
func TestKickRechecksBarrier(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{noPoll: true})
	dep, done := e.signal(1), e.signal(1)
	q.submit(barrier(aql.PacketTypeBarrierAnd, false, done, dep))
	waitFor(t, "blocked", func() bool { return q.State() == hqd.StateBlocked })
	e.set(dep, 0)
	q.Kick()
	waitFor(t, "completion after kick", func() bool { return e.value(done) == 0 })
}

// PSA §2.9.9 / checklist 11: barrier-OR completes when any dependency reaches 0; with only NULL
// dependencies it never completes (legal, not an error) and Stop still returns.
func TestBarrierOr(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{})
	s1, s2, done := e.signal(1), e.signal(1), e.signal(1)
	q.submit(barrier(aql.PacketTypeBarrierOr, false, done, s1, s2))
	waitFor(t, "blocked", func() bool { return q.State() == hqd.StateBlocked })
	e.set(s2, 0)
	q.Kick()
	waitFor(t, "OR completion", func() bool { return e.value(done) == 0 })

	never := e.signal(1)
	q.submit(barrier(aql.PacketTypeBarrierOr, false, never))
	waitFor(t, "blocked on all-NULL OR", func() bool { return q.State() == hqd.StateBlocked })
	settle(t, q)
	if e.value(never) != 1 || q.Err() != nil {
		t.Fatalf("all-NULL barrier-OR completed or failed: %d %v", e.value(never), q.Err())
	}
	stopWithin(t, q.Queue)
}

// [PSA] Table 2-4 barrier bit and §3.6 launch conditions: B (barrier=1) must not launch before A
// has completed, i.e. A's completion signal is decremented when B's Dispatch is called.
func TestBarrierBitOrdering(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{})
	aDone, bDone := e.signal(1), e.signal(1)
	release := make(chan struct{})
	var order []uint64
	var aAtB int64 = -1
	e.host.dispatch = func(_ *Queue, p *aql.KernelDispatchPacket) error {
		order = append(order, p.KernelObject)
		if p.KernelObject == 0xa000 {
			<-release
		} else {
			aAtB = e.value(aDone)
		}
		return nil
	}
	pa, pb := validDispatch(aDone), validDispatch(bDone)
	pa.KernelObject, pb.KernelObject = 0xa000, 0xb000
	pa.Header = aql.MakeHeader(aql.PacketTypeKernelDispatch, false, aql.FenceScopeAgent, aql.FenceScopeAgent)
	q.submit(dispatchPacket(pa))
	q.submit(dispatchPacket(pb))
	waitFor(t, "A active", func() bool { return q.State() == hqd.StateActive })
	if e.value(bDone) != 1 {
		t.Fatal("B completed while A runs")
	}
	close(release)
	waitFor(t, "B", func() bool { return e.value(bDone) == 0 })
	if len(order) != 2 || order[0] != 0xa000 || order[1] != 0xb000 || aAtB != 0 {
		t.Errorf("order %x, A's signal when B launched %d (want 0)", order, aAtB)
	}
}

// PSA-2.8-Q19/Q23 (checklist 7): an INVALID slot at the read index blocks later valid slots; once
// it is published and the doorbell rung, both run in order.
func TestInvalidSlotBlocks(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{})
	s0, s1 := e.signal(1), e.signal(1)
	id0, id1 := q.reserve(), q.reserve()
	q.write(id1, barrier(aql.PacketTypeBarrierAnd, false, s1))
	settle(t, q)
	if e.value(s1) != 1 || q.readIndex() != 0 || q.State() != hqd.StateIdle {
		t.Fatalf("slot 1 processed behind an INVALID slot 0: s1=%d rd=%d %v", e.value(s1), q.readIndex(), q.State())
	}
	q.write(id0, barrier(aql.PacketTypeBarrierAnd, false, s0))
	q.Kick()
	waitFor(t, "both", func() bool { return e.value(s0) == 0 && e.value(s1) == 0 && q.readIndex() == 2 })
}

// A doorbell stored after the queue was made announces the packets up to its value (ROCr's AQL
// doorbell: a packet's index, stored after its header; the CP's write pointer): packet rd is
// processed on its header without the write index. A doorbell still at its value from before the
// queue, or below rd, leaves the decision to the write index, and an INVALID header announced by
// the doorbell waits (PSA-2.8-Q19).
func TestDoorbellAnnouncesPacket(t *testing.T) {
	e := newEnv(t)
	var bell atomic.Uint64
	bell.Store(^uint64(0)) // kfd's value of a doorbell not yet rung
	q := e.queue(qopt{bell: &bell})
	s0, s1, s2 := e.signal(1), e.signal(1), e.signal(1)
	q.write(0, barrier(aql.PacketTypeBarrierAnd, false, s0)) // the write index stays 0
	q.Kick()
	settle(t, q)
	if e.value(s0) != 1 || q.readIndex() != 0 {
		t.Fatalf("packet 0 processed with the write index at 0 and the doorbell not rung: s0=%d rd=%d", e.value(s0), q.readIndex())
	}
	bell.Store(0)
	q.Kick()
	waitFor(t, "packet 0 on its doorbell", func() bool { return e.value(s0) == 0 && q.readIndex() == 1 })
	q.write(1, barrier(aql.PacketTypeBarrierAnd, false, s1)) // doorbell 0 < rd 1: the write index decides
	q.Kick()
	settle(t, q)
	if e.value(s1) != 1 || q.readIndex() != 1 {
		t.Fatalf("packet 1 processed with the write index at 0 and the doorbell at 0: s1=%d rd=%d", e.value(s1), q.readIndex())
	}
	bell.Store(5) // announces 1 to 5; slot 2 is still INVALID
	q.Kick()
	waitFor(t, "packet 1", func() bool { return e.value(s1) == 0 && q.readIndex() == 2 })
	settle(t, q)
	if q.readIndex() != 2 || q.State() != hqd.StateIdle || len(e.host.queueErrors(q.Queue)) != 0 {
		t.Fatalf("after an announced INVALID slot: rd=%d %v errors %v", q.readIndex(), q.State(), e.host.queueErrors(q.Queue))
	}
	q.write(2, barrier(aql.PacketTypeBarrierAnd, false, s2))
	q.Kick()
	waitFor(t, "packet 2", func() bool { return e.value(s2) == 0 && q.readIndex() == 3 })
}

// The look after an announced packet leaves the write index for the queue's recheck, which must
// still find a packet published without its own doorbell: here packets 0 and 1 are published (write
// index 2) and only packet 0 is rung, with no kick after it.
func TestWriteIndexRecheckedAfterAnnouncedPacket(t *testing.T) {
	e := newEnv(t)
	var bell atomic.Uint64
	bell.Store(^uint64(0))
	q := e.queue(qopt{bell: &bell, noStart: true})
	s0, s1 := e.signal(1), e.signal(1)
	q.write(q.reserve(), barrier(aql.PacketTypeBarrierAnd, false, s0))
	q.write(q.reserve(), barrier(aql.PacketTypeBarrierAnd, false, s1))
	bell.Store(0)
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	q.Kick()
	waitFor(t, "both packets", func() bool { return e.value(s0) == 0 && e.value(s1) == 0 && q.readIndex() == 2 })
	if st := q.Status(); st.WriteIndex != 2 {
		t.Errorf("status write index %d, want 2", st.WriteIndex)
	}
}

// PSA-2.8-I02/I04: many packets through a small ring; indices never wrap, slots do.
func TestRingWrapAround(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{size: 4})
	const n = 2000
	done := e.signal(n)
	for i := 0; i < n; i++ {
		q.submit(barrier(aql.PacketTypeBarrierAnd, i%3 == 0, done))
	}
	waitFor(t, "all packets", func() bool { return e.value(done) == 0 })
	waitFor(t, "read index", func() bool { return q.readIndex() == n })
	if st := q.Status(); st.Packets != n || st.ReadIndex != n || st.WriteIndex != n {
		t.Errorf("status %+v", st)
	}
}

// A packet is counted (Status.Packets) before its completion signal is decremented: a client that
// saw the signal sees the count. The client spins on each packet's signal and reads the count at
// once, so every packet is a chance to fall between the two.
func TestPacketCountedBeforeCompletion(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{size: 4})
	const n = 3000
	for i := uint64(1); i <= n; i++ {
		done := e.signal(1)
		q.submit(barrier(aql.PacketTypeBarrierAnd, false, done))
		for k := 0; e.value(done) != 0; k++ {
			if k%1024 == 1023 {
				runtime.Gosched()
			}
		}
		if got := q.Status().Packets; got < i {
			t.Fatalf("packet %d completed, Status.Packets %d", i, got)
		}
	}
}

// PSA-2.8-Q25 (checklist 6): whenever the read index has passed a slot, its format is INVALID.
// An observer polls both while packets stream through.
func TestSlotInvalidBeforeReadIndex(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{size: 8})
	const n = 500
	done := e.signal(n)
	stop := make(chan struct{})
	bad := make(chan uint64, 1)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			rd := q.readIndex()
			if rd == 0 {
				continue
			}
			// The slot of packet rd-1 may legitimately hold packet rd-1+8 once the producer has
			// reserved it (write index > rd-1+8, stored before the slot is written). The write index
			// is loaded after the header, so if it is still <= rd-1+8 the header belonged to rd-1.
			last := rd - 1
			h := atomic.LoadUint32(e.m.word32(q.base + last%8*64))
			wr := atomic.LoadUint64(e.m.word64(q.wrVA))
			if aql.PacketType(uint16(h)) != aql.PacketTypeInvalid && wr <= last+8 {
				select {
				case bad <- last:
				default:
				}
			}
		}
	}()
	for i := 0; i < n; i++ {
		q.submit(barrier(aql.PacketTypeBarrierAnd, false, done))
		if i%50 == 0 {
			time.Sleep(time.Millisecond) // let the observer see a quiet ring too
		}
	}
	waitFor(t, "all", func() bool { return e.value(done) == 0 })
	close(stop)
	select {
	case id := <-bad:
		t.Errorf("read index passed packet %d while its slot was not INVALID", id)
	default:
	}
}

// Kernel dispatch: Host.Dispatch sees the packet fields; the completion signal is decremented after.
func TestDispatch(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{})
	done := e.signal(1)
	p := validDispatch(done)
	p.Setup, p.WorkgroupSizeY, p.WorkgroupSizeZ, p.GridSizeY, p.GridSizeZ = 3, 2, 4, 8, 12
	p.Reserved2 = 0x1234 // tools keep correlation ids here: not rejected
	var gotID, gotVA uint64
	var doneAtDispatch int64
	e.host.dispatch = func(qq *Queue, _ *aql.KernelDispatchPacket) error {
		gotID, gotVA = qq.CurrentPacket()
		doneAtDispatch = e.value(done)
		return nil
	}
	id := q.submit(dispatchPacket(p))
	waitFor(t, "completion", func() bool { return e.value(done) == 0 })
	e.host.mu.Lock()
	got := e.host.dispatches
	e.host.mu.Unlock()
	if len(got) != 1 || got[0] != p {
		t.Fatalf("dispatched %+v, want %+v", got, p)
	}
	if gotID != id || gotVA != q.base || doneAtDispatch != 1 {
		t.Errorf("CurrentPacket = %d %#x (want %d %#x); signal during dispatch %d", gotID, gotVA, id, q.base, doneAtDispatch)
	}
}

// A Host.Dispatch error (the shader model cannot run the kernel) is a queue error, never a fake
// success: completion signal untouched, read index not advanced, later packets not launched.
func TestDispatchErrorIsQueueError(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{})
	errNoShader := errors.New("shader model not connected")
	e.host.dispatch = func(*Queue, *aql.KernelDispatchPacket) error { return errNoShader }
	done, later := e.signal(1), e.signal(1)
	q.submit(dispatchPacket(validDispatch(done)))
	q.submit(barrier(aql.PacketTypeBarrierAnd, false, later))
	waitFor(t, "error state", func() bool { return q.State() == hqd.StateError })
	errs := e.host.queueErrors(q.Queue)
	if len(errs) != 1 || !errors.Is(errs[0], ErrDispatchFailed) || !errors.Is(errs[0], errNoShader) {
		t.Fatalf("QueueError calls %v", errs)
	}
	var pe *PacketError
	if !errors.As(errs[0], &pe) || pe.ID != 0 {
		t.Errorf("error %v does not name packet 0", errs[0])
	}
	if e.value(done) != 1 || e.value(later) != 1 || q.readIndex() != 0 {
		t.Errorf("after error: done=%d later=%d rd=%d", e.value(done), e.value(later), q.readIndex())
	}
	if q.Start() != hqd.ErrQueueError {
		t.Error("Start of an errored queue succeeded")
	}
	q.Kick() // doorbells after the error are ignored (reference §2.10 tests)
	if e.value(later) != 1 {
		t.Error("packet launched after the error")
	}
}

// Malformed and unsupported packets ([PSA] §2.9.3, reference §3.7/§3.8 and checklist 13): error
// state, one QueueError, no later launch, read index unchanged; another queue keeps working.
func TestMalformedPackets(t *testing.T) {
	mk := func(f func(*aql.KernelDispatchPacket)) []byte {
		p := validDispatch(0)
		f(&p)
		return dispatchPacket(p)
	}
	bv := func(amdFormat uint8, cond uint32) []byte {
		p := aql.BarrierValuePacket{Header: aql.AMDVendorPacketHeader{
			Header: aql.MakeHeader(aql.PacketTypeVendorSpecific, false, 0, 0), AmdFormat: amdFormat}, Cond: cond}
		b := make([]byte, 64)
		p.Encode(b)
		return b
	}
	withHeader := func(h uint16) []byte {
		b := barrier(aql.PacketTypeBarrierAnd, false, 0)
		b[0], b[1] = byte(h), byte(h>>8)
		return b
	}
	agent := make([]byte, 64)
	agent[0] = aql.PacketTypeAgentDispatch
	for _, c := range []struct {
		name string
		pkt  []byte
		want error
	}{
		{"reserved format 6", withHeader(6), ErrMalformed},
		{"reserved format 0xff", withHeader(0xff), ErrMalformed},
		{"header bit 13", withHeader(aql.PacketTypeBarrierAnd | 1<<13), ErrMalformed},
		{"acquire scope 3", withHeader(aql.PacketTypeBarrierAnd | 3<<9), ErrMalformed},
		{"release scope 3", withHeader(aql.PacketTypeBarrierOr | 3<<11), ErrMalformed},
		{"agent dispatch", agent, ErrUnsupported},
		{"vendor packet, unknown AMD format", bv(7, 0), ErrUnsupported},
		{"barrier-value, bad condition", bv(aql.AMDPacketTypeBarrierValue, 9), ErrMalformed},
		{"0 dimensions", mk(func(p *aql.KernelDispatchPacket) { p.Setup = 0 }), ErrInvalidDispatch},
		{"work-group x 0", mk(func(p *aql.KernelDispatchPacket) { p.WorkgroupSizeX = 0 }), ErrInvalidDispatch},
		{"grid y 0 in 2D", mk(func(p *aql.KernelDispatchPacket) { p.Setup, p.GridSizeY = 2, 0 }), ErrInvalidDispatch},
		{"work-group z 0 in 3D", mk(func(p *aql.KernelDispatchPacket) { p.Setup, p.WorkgroupSizeZ = 3, 0 }), ErrInvalidDispatch},
		{"kernel object 0", mk(func(p *aql.KernelDispatchPacket) { p.KernelObject = 0 }), ErrInvalidDispatch},
		{"unmapped completion signal", barrier(aql.PacketTypeBarrierAnd, false, 0x1000), ErrFault},
		{"unmapped dependency", barrier(aql.PacketTypeBarrierAnd, false, 0, 0x1000), ErrFault},
		{"misaligned dependency", barrier(aql.PacketTypeBarrierOr, false, 0, signalArea+4), ErrFault},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			q := e.queue(qopt{})
			other := e.queue(qopt{})
			later, otherDone := e.signal(1), e.signal(1)
			q.submit(c.pkt)
			q.submit(barrier(aql.PacketTypeBarrierAnd, false, later))
			waitFor(t, "error state", func() bool { return q.State() == hqd.StateError })
			errs := e.host.queueErrors(q.Queue)
			if len(errs) != 1 || !errors.Is(errs[0], c.want) || !errors.Is(q.Status().Err, c.want) {
				t.Fatalf("QueueError calls %v, want one wrapping %v", errs, c.want)
			}
			if c.want != ErrFault && q.readIndex() != 0 {
				t.Errorf("read index %d advanced past a malformed packet", q.readIndex())
			}
			e.host.mu.Lock()
			nd := len(e.host.dispatches)
			e.host.mu.Unlock()
			if e.value(later) != 1 || nd != 0 {
				t.Error("a packet was launched after the error")
			}
			other.submit(barrier(aql.PacketTypeBarrierAnd, false, otherDone)) // PSA-2.9.3-04
			waitFor(t, "other queue", func() bool { return e.value(otherDone) == 0 })
		})
	}
}

// An unmapped ring is a fault on the first scan.
func TestUnmappedRing(t *testing.T) {
	e := newEnv(t)
	q, err := New(Config{RingBase: 0x10000, RingSize: 16, ReadIndexVA: indexArea, WriteIndexVA: indexArea + 8,
		Memory: e.m, Host: e.host})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	atomic.StoreUint64(e.m.word64(indexArea+8), 1)
	q.Start()
	waitFor(t, "error", func() bool { return q.State() == hqd.StateError })
	var fe *FaultError
	if !errors.As(q.Err(), &fe) || fe.VA != 0x10000 || fe.Op != "ring" {
		t.Errorf("error %v", q.Err())
	}
}

// AMD event mailbox: after the decrement, event_id is stored at event_mailbox_ptr and RaiseEvent
// called with it; with a memory that reads them with the decrement (AtomicAddTail) and without.
func TestEventMailbox(t *testing.T) {
	for _, adder := range []bool{true, false} {
		t.Run(fmt.Sprintf("adder=%v", adder), func(t *testing.T) { testEventMailbox(t, adder) })
	}
}

func testEventMailbox(t *testing.T, adder bool) {
	e := newEnv(t)
	q := e.queue(qopt{adder: adder})
	sig := e.signal(1)
	e.m.Write(sig+aql.SignalMailboxOffset, le64(mailboxVA))
	e.m.Write(sig+aql.SignalEventIDOffset, []byte{0x2a, 0, 0, 0})
	atomic.StoreUint64(e.m.word64(mailboxVA), ^uint64(0)) // kfd's "unsignalled" slot
	plain := e.signal(1)
	q.submit(barrier(aql.PacketTypeBarrierAnd, false, sig))
	q.submit(barrier(aql.PacketTypeBarrierAnd, false, plain))
	waitFor(t, "both", func() bool { return e.value(plain) == 0 })
	if e.value(sig) != 0 || atomic.LoadUint64(e.m.word64(mailboxVA)) != 0x2a {
		t.Errorf("signal %d mailbox %#x", e.value(sig), atomic.LoadUint64(e.m.word64(mailboxVA)))
	}
	e.host.mu.Lock()
	defer e.host.mu.Unlock()
	if len(e.host.events) != 1 || e.host.events[0] != 0x2a {
		t.Errorf("RaiseEvent calls %v, want [42]", e.host.events)
	}
}

// hsa_amd_barrier_value_packet_t: waits for (value & mask) cond value; NULL signal is satisfied.
func TestBarrierValue(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{})
	s, done, done0 := e.signal(0x13), e.signal(1), e.signal(1)
	p := aql.BarrierValuePacket{Header: aql.AMDVendorPacketHeader{
		Header:    aql.MakeHeader(aql.PacketTypeVendorSpecific, true, aql.FenceScopeSystem, aql.FenceScopeSystem),
		AmdFormat: aql.AMDPacketTypeBarrierValue}, Signal: s, Value: 0x20, Mask: 0xf0, Cond: aql.SignalConditionEQ,
		CompletionSignal: done}
	b := make([]byte, 64)
	p.Encode(b)
	q.submit(b)
	waitFor(t, "blocked", func() bool { return q.State() == hqd.StateBlocked })
	e.set(s, 0x2f) // 0x2f & 0xf0 == 0x20
	q.Kick()
	waitFor(t, "completion", func() bool { return e.value(done) == 0 })
	p.Signal, p.CompletionSignal = 0, done0
	p.Encode(b)
	q.submit(b)
	waitFor(t, "NULL signal satisfied", func() bool { return e.value(done0) == 0 })
}

// Stop with a blocked barrier: Stop returns, the packet stays in the ring, Start resumes it.
// Stop with a dispatch in flight: the dispatch sees Stopping, its error is not a queue error.
func TestStopWithPacketsInFlight(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{})
	dep, done := e.signal(1), e.signal(1)
	q.submit(barrier(aql.PacketTypeBarrierAnd, false, done, dep))
	waitFor(t, "blocked", func() bool { return q.State() == hqd.StateBlocked })
	stopWithin(t, q.Queue)
	if q.State() != hqd.StateStopped || q.readIndex() != 0 || q.Err() != nil {
		t.Fatalf("after Stop: %v rd=%d err=%v", q.State(), q.readIndex(), q.Err())
	}
	e.set(dep, 0)
	q.Kick() // a stopped queue ignores doorbells
	time.Sleep(time.Millisecond)
	if e.value(done) != 1 {
		t.Fatal("stopped queue processed a packet")
	}
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "resumed barrier", func() bool { return e.value(done) == 0 && q.readIndex() == 1 })

	entered := make(chan struct{})
	e.host.dispatch = func(qq *Queue, _ *aql.KernelDispatchPacket) error {
		close(entered)
		<-qq.Stopping()
		return errors.New("preempted")
	}
	kdone := e.signal(1)
	q.submit(dispatchPacket(validDispatch(kdone)))
	<-entered
	stopWithin(t, q.Queue)
	if q.State() != hqd.StateStopped || q.Err() != nil || len(e.host.queueErrors(q.Queue)) != 0 {
		t.Errorf("after Stop during dispatch: %v err=%v", q.State(), q.Err())
	}
	if e.value(kdone) != 1 || q.readIndex() != 1 {
		t.Errorf("aborted dispatch completed: signal %d rd %d", e.value(kdone), q.readIndex())
	}
}

func TestKickDoesNotAllocate(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{})
	if n := testing.AllocsPerRun(1000, q.Kick); n != 0 {
		t.Errorf("Kick allocates %v times", n)
	}
}

// The packet path (a barrier-AND whose completion signal is decremented) does not allocate on a
// memory with AtomicAdd, as the daemon's GPUVM ports are; both ways decrement the signal.
func TestBarrierDoesNotAllocate(t *testing.T) {
	for _, adder := range []bool{true, false} {
		e := newEnv(t)
		q := e.queue(qopt{noStart: true, adder: adder})
		sig := e.signal(1 << 20)
		pkt := barrier(aql.PacketTypeBarrierAnd, false, sig)
		stop := make(chan struct{})
		n := 0
		allocs := testing.AllocsPerRun(100, func() {
			q.write(q.reserve(), pkt)
			n++
			if progressed, err := q.step(stop); !progressed || err != nil {
				t.Fatalf("step: %v %v", progressed, err)
			}
		})
		if got := e.value(sig); got != 1<<20-int64(n) {
			t.Fatalf("adder %v: signal %d after %d packets", adder, got, n)
		}
		if adder && allocs != 0 {
			t.Errorf("%v allocations per barrier packet", allocs)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	e := newEnv(t)
	good := Config{RingBase: ringArea, RingSize: 64, ReadIndexVA: indexArea, WriteIndexVA: indexArea + 8, Memory: e.m, Host: e.host}
	for name, mod := range map[string]func(*Config){
		"size 0":            func(c *Config) { c.RingSize = 0 },
		"size 3":            func(c *Config) { c.RingSize = 3 },
		"size 1000":         func(c *Config) { c.RingSize = 1000 },
		"unaligned base":    func(c *Config) { c.RingBase += 8 },
		"wrapping ring":     func(c *Config) { c.RingBase = ^uint64(0) &^ 63 },
		"unaligned rd":      func(c *Config) { c.ReadIndexVA += 4 },
		"no memory":         func(c *Config) { c.Memory = nil },
		"no host":           func(c *Config) { c.Host = nil },
		"negative max poll": func(c *Config) { c.MaxPoll = -1 },
	} {
		c := good
		mod(&c)
		if _, err := New(c); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: err %v", name, err)
		}
	}
	c := good
	c.ReadIndexVA = 0x1000
	if _, err := New(c); !errors.Is(err, ErrFault) {
		t.Errorf("unmapped read index: %v", err)
	}
	if _, err := New(good); err != nil {
		t.Error(err)
	}
}

func le64(v uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

func stopWithin(t testing.TB, q *Queue) {
	t.Helper()
	ch := make(chan struct{})
	go func() { q.Stop(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop hung")
	}
}

// TestPM4IBPacket: ROCr's AMD_AQL_FORMAT_PM4_IB packet (an INDIRECT_BUFFER to an ACQUIRE_MEM, the
// cache invalidation it sends after loading code) completes; any other PM4 opcode is a queue error.
func TestPM4IBPacket(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{})
	ib, done := e.signal(0), e.signal(1) // the 64 bytes behind a signal hold the 8-dword IB
	words := []uint32{3<<30 | 5<<16 | pm4OpAcquireMem<<8, 0, 0xffffffff, 0xff, 0, 0, 4, 3<<30 | 0x3fff<<16 | pm4OpNOP<<8}
	b := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	if err := e.m.Write(ib, b); err != nil {
		t.Fatal(err)
	}
	pkt := func(ibVA uint64, n uint32, completion uint64) []byte {
		p := make([]byte, 64)
		binary.LittleEndian.PutUint16(p, aql.MakeHeader(aql.PacketTypeVendorSpecific, true, aql.FenceScopeSystem, aql.FenceScopeSystem))
		p[2] = amdFormatPM4IB
		for i, w := range []uint32{3<<30 | 2<<16 | pm4OpIB<<8, uint32(ibVA), uint32(ibVA >> 32), n | 1<<23, n} {
			binary.LittleEndian.PutUint32(p[4+4*i:], w)
		}
		binary.LittleEndian.PutUint64(p[56:], completion)
		return p
	}
	q.submit(pkt(ib, uint32(len(words)), done))
	waitFor(t, "PM4-IB completion", func() bool { return e.value(done) == 0 })
	// WRITE_DATA (0x37) is not a cache operation: unsupported, the queue stops.
	binary.LittleEndian.PutUint32(b, 3<<30|5<<16|0x37<<8)
	e.m.Write(ib, b)
	q.submit(pkt(ib, uint32(len(words)), 0))
	waitFor(t, "queue error", func() bool { return q.Err() != nil })
	if !errors.Is(q.Err(), ErrUnsupported) {
		t.Errorf("error %v, want ErrUnsupported", q.Err())
	}
}
