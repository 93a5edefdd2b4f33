package cp

import (
	"encoding/binary"
	"github.com/kfdemu/kfdemu/gpu/hqd"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
)

const fuzzSlots = 8

// FuzzRing fills a ring with client bytes and lets the packet processor loose on it: it must never
// panic, never hang (every wait is bounded by a hang guard), report at most one queue error, and
// never release more packets than were written. Words whose top byte is 0xAA are remapped to one of
// 16 real signals so the fuzzer reaches the barrier, completion and mailbox paths.
// sigZeros says which signals start at 0; its top bit also selects the memory (qopt.adder).
func FuzzRing(f *testing.F) {
	seed := func(pkts ...[]byte) []byte {
		var b []byte
		for _, p := range pkts {
			b = append(b, p...)
		}
		return b
	}
	sig := func(i uint64) uint64 { return 0xAA<<56 | i }
	f.Add(seed(barrier(aql.PacketTypeBarrierAnd, false, sig(1), sig(2))), uint16(0))
	f.Add(seed(barrier(aql.PacketTypeBarrierOr, true, sig(3), sig(4), 0, sig(5)),
		dispatchPacket(validDispatch(sig(6)))), uint16(0xffff))
	f.Add(seed(dispatchPacket(validDispatch(0)), barrier(6, false, 0)), uint16(1))
	f.Add(make([]byte, 64*fuzzSlots), uint16(0x5555))
	f.Fuzz(func(t *testing.T, data []byte, sigZeros uint16) {
		e := newEnv(t)
		// The top bit also picks the memory: with AtomicAdd/AtomicAddTail as the daemon's GPUVM ports
		// (completions read the mailbox in the decrement's access) or without.
		q := e.queue(qopt{size: fuzzSlots, noStart: true, maxPoll: 100 * time.Microsecond, adder: sigZeros&0x8000 != 0})
		var sigs [16]uint64
		for i := range sigs {
			v := int64(1)
			if sigZeros&(1<<i) != 0 {
				v = 0
			}
			sigs[i] = e.signal(v)
		}
		// Signal 7 has an event mailbox.
		e.m.Write(sigs[7]+aql.SignalMailboxOffset, le64(mailboxVA))
		e.host.dispatch = func(_ *Queue, p *aql.KernelDispatchPacket) error {
			if p.KernelObject&1 != 0 {
				return errUnmapped
			}
			return nil
		}
		n := 0
		for n < fuzzSlots && len(data) > 0 {
			var pkt [64]byte
			copy(pkt[:], data)
			if len(data) > 64 {
				data = data[64:]
			} else {
				data = nil
			}
			for off := 8; off < 64; off += 8 {
				w := binary.LittleEndian.Uint64(pkt[off:])
				if w>>56 == 0xAA {
					binary.LittleEndian.PutUint64(pkt[off:], sigs[w&15])
				}
			}
			id := q.reserve()
			q.write(id, pkt[:])
			n++
		}
		if err := q.Start(); err != nil {
			t.Fatal(err)
		}
		quiesce := func() {
			waitFor(t, "quiescence", func() bool {
				s := q.Status()
				return (s.Scans > 0 && s.State == hqd.StateIdle) || s.State == hqd.StateBlocked || s.State == hqd.StateError
			})
		}
		quiesce()
		if q.State() == hqd.StateBlocked { // release every dependency, then let it settle again
			for _, s := range sigs {
				e.set(s, 0)
			}
			q.Kick()
			time.Sleep(200 * time.Microsecond)
			quiesce()
		}
		stopWithin(t, q.Queue)
		st := q.Status()
		if st.ReadIndex > uint64(n) || st.Packets > uint64(n) {
			t.Fatalf("released %d / completed %d of %d packets", st.ReadIndex, st.Packets, n)
		}
		if errs := e.host.queueErrors(q.Queue); len(errs) > 1 || (len(errs) == 1) != (st.Err != nil) {
			t.Fatalf("queue errors %v, status error %v", errs, st.Err)
		}
		if rd := atomic.LoadUint64(e.m.word64(q.rdVA)); rd != st.ReadIndex {
			t.Fatalf("read index in memory %d, CP %d", rd, st.ReadIndex)
		}
	})
}

// FuzzAMDQueue runs client packets on a ring with an amd_queue_t whose scratch fields and
// queue_properties the client controls (the dynamic-scratch, reclaim and profiling paths): the
// processor must never panic or hang (a queue waiting for the runtime is released by storing 0 and
// clearing USE_SCRATCH_ONCE, as ROCr does), report at most one queue error, and leave only a
// queue-inactive code of the table (or 0) in the inactive signal.
func FuzzAMDQueue(f *testing.F) {
	d := validDispatch(0)
	f.Add(dispatchPacket(d), uint32(0), uint32(0), uint64(0))
	f.Add(dispatchPacket(d), uint32(3<<12|8), uint32(1<<4|1<<3), uint64(1<<20))
	d.PrivateSegmentSize = 0xffffffff
	f.Add(append(dispatchPacket(d), barrier(aql.PacketTypeBarrierAnd, true, 0)...), uint32(0x1fff<<12|0xfff), uint32(0xff), uint64(1<<63))
	f.Fuzz(func(t *testing.T, data []byte, tmpring, props uint32, size uint64) {
		e := newEnv(t)
		var clock atomic.Uint64
		a := e.aqlQueue(func() uint64 { return clock.Add(1) })
		a.Stop()
		m := e.m
		atomic.StoreUint32(m.word32(a.aq+aql.AMDQueueComputeTmpringSizeOffset), tmpring)
		atomic.StoreUint32(a.props(), props)
		atomic.StoreUint64(m.word64(a.aq+aql.AMDQueueScratchByteSizeOffset), size)
		atomic.StoreUint64(m.word64(a.aq+aql.AMDQueueScratchLocationOffset), memBase)
		for n := 0; n < fuzzSlots && len(data) > 0; n++ {
			var pkt [64]byte
			copy(pkt[:], data)
			data = data[min(64, len(data)):]
			a.write(a.reserve(), pkt[:])
		}
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 4; i++ { // answer up to four runtime requests
			waitFor(t, "quiescence", func() bool {
				s := a.Status()
				return (s.Scans > 0 && s.State == hqd.StateIdle) || s.State == hqd.StateBlocked || s.State == hqd.StateError
			})
			if a.State() != hqd.StateBlocked {
				break
			}
			// As ROCr: the fields first, then 0 in the inactive signal, which the CP waits on.
			atomic.StoreUint32(a.props(), 0)
			atomic.StoreUint32(m.word32(a.aq+aql.AMDQueueComputeTmpringSizeOffset), aql.TmpringWaves.Set(aql.TmpringWaveSize.Set(0, 0x1fff), 1))
			atomic.StoreUint64(m.word64(a.aq+aql.AMDQueueScratchByteSizeOffset), 0x1fff<<10)
			atomic.StoreUint64(m.word64(a.inactive+aql.SignalValueOffset), 0)
			a.Kick()
			time.Sleep(200 * time.Microsecond)
		}
		stopWithin(t, a.Queue)
		st := a.Status()
		if errs := e.host.queueErrors(a.Queue); len(errs) > 1 || (len(errs) == 1) != (st.Err != nil) {
			t.Fatalf("queue errors %v, status error %v", errs, st.Err)
		}
		switch v := uint64(e.value(a.inactive)); v {
		case 0, aql.QueueInactiveInsufficientScratch, aql.QueueInactiveScratchReclaim, aql.QueueInactiveInvalidDim,
			aql.QueueInactiveInvalidCode, aql.QueueInactiveInvalidFormat, aql.QueueInactiveVendorFormat,
			aql.QueueInactiveMemoryViolation, aql.QueueInactiveIllegalInstruction:
		default:
			t.Fatalf("inactive signal holds %#x", v)
		}
	})
}
