package kfd

import (
	"errors"
	"fmt"

	"github.com/kfdemu/kfdemu/gpu/cp/pm4"
	"github.com/kfdemu/kfdemu/gpu/hqd"
	"github.com/kfdemu/kfdemu/gpu/shader"
)

// The PM4 engine: a KFD_IOC_QUEUE_TYPE_COMPUTE queue is a ring of PM4 type-3 packets consumed by
// gpu/cp/pm4 (an HQD of the MEC). DISPATCH_DIRECT runs on gpu/shader from the SET_SH_REG state,
// RELEASE_MEM interrupts carry the event id in int_ctxid (kfd_int_process_v9.c passes context_id0
// to kfd_signal_event_interrupt), and a queue error is reported as a GPU fault (memory exception
// event) or a hardware exception, as the kfd interrupt handlers do for a hung or faulting queue.

type pm4Engine struct {
	q  *queue
	pq *pm4.Queue
}

func newPM4(q *queue) (*pm4Engine, error) {
	a := q.args
	e := &pm4Engine{q: q}
	pq, err := pm4.New(pm4.Config{RingBase: a.RingBaseAddress, RingSizeBytes: a.RingSize,
		ReadPtrVA: a.ReadPointerAddress, WritePtrVA: a.WritePointerAddress, Memory: q.mem, Host: e, Tag: q})
	if err != nil {
		return nil, err
	}
	e.pq = pq
	return e, nil
}

func (e *pm4Engine) Start() error               { return e.pq.Start() }
func (e *pm4Engine) Stop()                      { e.pq.Stop() }
func (e *pm4Engine) Kick()                      { e.pq.Kick() }
func (e *pm4Engine) HasWork() bool              { return e.pq.HasWork() }
func (e *pm4Engine) SetDoorbell(d hqd.Doorbell) { e.pq.SetDoorbell(d) }
func (e *pm4Engine) Err() error                 { return e.pq.Err() }

func (e *pm4Engine) status() string {
	s := e.pq.Status()
	return fmt.Sprintf("%s rptr=%d wptr=%d packets=%d dispatches=%d interrupts=%d", s.State, s.ReadPtr, s.WritePtr,
		s.Packets, s.Dispatches, s.Interrupts)
}

// Dispatch implements pm4.Host: DISPATCH_DIRECT with the queue's compute registers.
func (e *pm4Engine) Dispatch(pq *pm4.Queue, cs *pm4.ComputeState) error {
	r := shader.RegParams{
		PgmAddr: cs.PGM, RSRC1: cs.RSRC1, RSRC2: cs.RSRC2, RSRC3: cs.RSRC3, UserData: cs.UserData,
		NumGroups:   cs.Groups,
		TmpringSize: cs.TmpRingSize, ScratchBase: cs.ScratchBase,
		// The scratch ring is COMPUTE_TMPRING_SIZE.WAVES slots of WAVESIZE KiB from
		// COMPUTE_DISPATCH_SCRATCH_BASE (the CP divides it among the waves it launches).
		ScratchSize: uint64(cs.TmpRingSize&0xfff) * uint64(cs.TmpRingSize>>12&0x1fff) << 10,
		Apertures:   shader.Apertures{SharedBase: ldsApertureBase, PrivateBase: scratchApertureBase},
		GroupDone:   e.q.groupOnCU, Engine: e.q.engine(), Interrupt: e.q.sqInterrupt,
		// Context save and restore across a preemption, as for AQL dispatches (sched.go).
		Kill: e.q.pre.killChan(), Suspendable: true,
	}
	for i := range r.WorkgroupSize {
		r.WorkgroupSize[i] = uint16(cs.NumThread[i])
	}
	ctx := stopContext(pq.Stopping())
	defer e.q.p.d.busy(e.q.pd.gpuID)() // gpu_busy_percent (activity.go)
	st, err := runDispatch(ctx, e.q, pq.DispatchID(), r.Kill, func(start uint64) (shader.Stats, error) {
		r.StartGroup = start
		return shader.DispatchRegs(ctx, e.q.mem, r)
	})
	e.q.p.d.stats.waveInstructions.Add(st.WaveInstructions)
	return err
}

// Interrupt implements pm4.Host: RELEASE_MEM with INT_SEL raised the end-of-pipe interrupt.
func (e *pm4Engine) Interrupt(_ *pm4.Queue, contextID uint32) { e.q.p.SignalInterrupt(contextID) }

// Timestamp implements pm4.Host: the 100 MHz GPU clock of GET_CLOCK_COUNTERS.
func (e *pm4Engine) Timestamp() uint64 { return gpuClock() }

// QueueError implements pm4.Host.
func (e *pm4Engine) QueueError(_ *pm4.Queue, err error) {
	q := e.q
	q.fail(err)
	q.waveExceptionToRuntime(err)
	var fault *shader.Fault
	var fe *pm4.FaultError
	switch {
	case errors.As(err, &fault):
		q.p.raiseMemoryException(q.pd.gpuID, err, fault.Addr, fault.Write)
	case errors.As(err, &fe):
		q.p.raiseMemoryException(q.pd.gpuID, err, fe.VA, false)
	default:
		q.p.mu.Lock()
		q.p.raiseHWExceptionLocked(q.pd.gpuID)
		q.p.mu.Unlock()
	}
}
