package pm4

import (
	"encoding/binary"
	"errors"
	"github.com/kfdemu/kfdemu/gpu/hqd"
	"testing"
)

const fuzzRingBytes = 1024

func dwordBytes(dws []uint32) []byte {
	b := make([]byte, 4*len(dws))
	for i, d := range dws {
		binary.LittleEndian.PutUint32(b[4*i:], d)
	}
	return b
}

// FuzzRing fills a 256-dword ring with client bytes (the same bytes also fill the IB and data
// areas, so IB pointers and polls the fuzzer writes find its packets and values) and lets the
// CP loose on it. It must never panic or hang: the queue must go idle, wait, or fail, and Stop
// must return. At most one queue error is reported, and Err agrees with it.
func FuzzRing(f *testing.F) {
	dispatchIB := cat(setSH(RegComputeNumThreadX, 64, 1, 1), setSH(RegComputePgmLo, pgmVA>>8, 0), dispatch(2, 1, 1, 1))
	f.Add(dwordBytes(cat(writeData(dataVA, 1, 2), releaseMem(EventCacheFlushAndInvTS, DataSel64, IntSelInterruptAfterWrite, dataVA+8, 7, 7))))
	f.Add(dwordBytes(cat(ib(ibVA+16, uint32(len(dispatchIB)), false), dispatchIB)))
	f.Add(dwordBytes(cat(waitMem(3, dataVA, hdr(OpWaitRegMem, waitRegMemCount), 0xFFFFFFFF), writeData(dataVA+64, 1))))
	f.Add(dwordBytes(cat([]uint32{0x80000000, 0xFFFF1002}, nop(4), acquireMem(), partialFlush(), ib(ibVA, 4, false))))
	f.Add(dwordBytes(cat(ib(ibVA+16, 4, false), ib(ibVA+16, 4, true))))
	f.Add(dwordBytes([]uint32{hdr(OpSetSHReg, 0x3FFE), 0}))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > fuzzRingBytes {
			data = data[:fuzzRingBytes]
		}
		data = data[:len(data)&^3]
		e := newEnv(t)
		e.host.dispatch = func(_ *Queue, cs *ComputeState) error {
			if cs.PGM&0x100 != 0 {
				return errors.New("shader fault")
			}
			return nil
		}
		for _, va := range []uint64{ringVA, ibVA, dataVA} {
			if err := e.m.Write(va, data); err != nil {
				t.Fatal(err)
			}
		}
		q := e.queue(qopt{ringBytes: fuzzRingBytes, noStart: true})
		q.w = uint64(len(data) / 4)
		q.publish()
		if err := q.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "quiescence", func() bool {
			s := q.Status()
			return (s.Scans > 0 && s.State == hqd.StateIdle) || s.State == hqd.StateBlocked || s.State == hqd.StateError
		})
		stopWithin(t, q.Queue)
		_, _, errs := e.host.snapshot()
		if len(errs) > 1 || (len(errs) == 1) != (q.Err() != nil) || (q.Err() != nil) != (q.State() == hqd.StateError) {
			t.Fatalf("host errors %v, queue error %v, state %v", errs, q.Err(), q.State())
		}
		if err := q.Err(); err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsupported) &&
			!errors.Is(err, ErrFault) && !errors.Is(err, ErrInvalidDispatch) && !errors.Is(err, ErrDispatchFailed) &&
			!errors.Is(err, ErrWritePointer) {
			t.Fatalf("queue error without a sentinel: %v", err)
		}
	})
}
