package kfd

import (
	"errors"
	"fmt"

	"github.com/kfdemu/kfdemu/gpu/hqd"
	"github.com/kfdemu/kfdemu/gpu/sdma"
	"github.com/kfdemu/kfdemu/topology"
)

// The SDMA engine: SDMA, SDMA_XGMI and SDMA_BY_ENG_ID queues are rings of SDMA packets consumed by
// gpu/sdma. A TRAP's int_context is the event id (kfd_int_process_v9.c: SDMA trap interrupts go to
// kfd_signal_event_interrupt with context_id0 & 0xfffffff); a fault raises the MEMORY events, any
// other queue error a hardware exception.

type sdmaEngine struct {
	q       *queue
	sq      *sdma.Queue
	counted uint64 // bytes already added to the driver's counter
}

// wideSDMACopyCount reports whether the GPU's SDMA takes COPY_LINEAR counts of 30 bits: gfx90a
// (9.0.10) and gfx10.3 and later, the ISAs ROCr 6.2.4 gives copy_size_override 0x3fffffff
// (GpuAgent::CreateBlitSdma); the rest (gfx9 otherwise, gfx940-942 included, gfx10.1) 22 bits.
func wideSDMACopyCount(gfxVersion uint64) bool {
	major, minor, step := gfxVersion/10000, gfxVersion/100%100, gfxVersion%100
	switch {
	case major == 9:
		return minor == 0 && step == 10
	case major == 10:
		return minor >= 3
	}
	return major >= 11
}

func newSDMA(q *queue) (*sdmaEngine, error) {
	a := q.args
	e := &sdmaEngine{q: q}
	sq, err := sdma.New(sdma.Config{RingBase: a.RingBaseAddress, RingSizeBytes: a.RingSize,
		ReadPtrVA: a.ReadPointerAddress, WritePtrVA: a.WritePointerAddress, Memory: q.mem, Host: e, Tag: q,
		WideCopyCount: wideSDMACopyCount(q.pd.node.Prop(topology.GfxTargetVersion))})
	if err != nil {
		return nil, err
	}
	e.sq = sq
	return e, nil
}

func (e *sdmaEngine) Start() error               { return e.sq.Start() }
func (e *sdmaEngine) Kick()                      { e.sq.Kick() }
func (e *sdmaEngine) HasWork() bool              { return e.sq.HasWork() }
func (e *sdmaEngine) SetDoorbell(d hqd.Doorbell) { e.sq.SetDoorbell(d) }
func (e *sdmaEngine) Err() error                 { return e.sq.Err() }

// Stop stops the queue and adds the bytes it moved to the driver's sdma_bytes counter.
func (e *sdmaEngine) Stop() {
	e.sq.Stop()
	b := e.sq.Status().Bytes
	e.q.p.d.stats.sdmaBytes.Add(b - e.counted)
	e.counted = b
}

func (e *sdmaEngine) status() string {
	s := e.sq.Status()
	st := s.State.String() // "blocked": a POLL_REGMEM waits
	if s.Err != nil {
		st = "error: " + s.Err.Error()
	}
	return fmt.Sprintf("%s engine=%d queue=%d read=%d write=%d doorbell=%d packets=%d bytes=%d", st, e.q.args.SDMAEngineID,
		e.q.sdmaQueue, s.ReadIndex, s.WriteIndex, int64(word64(e.q.pd.doorbellMem[8*e.q.doorbellID:]).Load()), s.Packets, s.Bytes)
}

// Interrupt implements sdma.Host.
func (e *sdmaEngine) Interrupt(_ *sdma.Queue, contextID uint32) { e.q.p.SignalInterrupt(contextID) }

// Timestamp implements sdma.Host: the 100 MHz GPU clock.
func (e *sdmaEngine) Timestamp() uint64 { return gpuClock() }

// QueueError implements sdma.Host.
func (e *sdmaEngine) QueueError(_ *sdma.Queue, err error) {
	q := e.q
	q.fail(err)
	var fe *sdma.FaultError
	if errors.As(err, &fe) {
		q.p.raiseMemoryException(q.pd.gpuID, err, fe.VA, false)
		return
	}
	q.p.mu.Lock()
	q.p.raiseHWExceptionLocked(q.pd.gpuID)
	q.p.mu.Unlock()
}
