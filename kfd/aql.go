package kfd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/gpu/cp"
	"github.com/kfdemu/kfdemu/gpu/hqd"
	"github.com/kfdemu/kfdemu/gpu/shader"
)

// The AQL engine: gpu/cp's packet processor on the queue's ring, with kernel dispatches handed to
// gpu/shader and completion-signal interrupts delivered as kfd events. The CP reports queue errors
// to ROCr itself (amd_queue_t's queue_inactive_signal); the driver only learns that the queue went
// inactive. A GPUVM fault is the driver's instead: it evicts the queues and raises the memory
// exception event (kfd_signal_vm_fault_event), and the CP reports nothing.

type aqlEngine struct {
	q  *queue
	cq *cp.Queue
}

func newAQL(q *queue) (*aqlEngine, error) {
	a := q.args
	e := &aqlEngine{q: q}
	cq, err := cp.New(cp.Config{RingBase: a.RingBaseAddress, RingSize: a.RingSize / aql.PacketSize,
		ReadIndexVA: a.ReadPointerAddress, WriteIndexVA: a.WritePointerAddress,
		Doorbell: func() uint64 { return word64(q.pd.doorbellMem[8*q.doorbellID:]).Load() },
		Memory:   q.mem, Host: e, Group: &q.pd.group, Tag: q, Clock: gpuClock, ClientMemory: q.ringInClientMemory()})
	if err != nil {
		return nil, err
	}
	e.cq = cq
	return e, nil
}

// ringInClientMemory reports whether the queue's ring lies outside the daemon's mappings: in a
// userptr BO (ROCr's rings) or in SVM memory (no BO among the acquired buffers holds it).
func (q *queue) ringInClientMemory() bool {
	va := q.args.RingBaseAddress
	for _, b := range q.bufs {
		if va >= b.va && va-b.va < b.size {
			return b.mem == nil
		}
	}
	return true
}

func (e *aqlEngine) Start() error               { return e.cq.Start() }
func (e *aqlEngine) Stop()                      { e.cq.Stop() }
func (e *aqlEngine) Kick()                      { e.cq.Kick() }
func (e *aqlEngine) HasWork() bool              { return e.cq.HasWork() }
func (e *aqlEngine) SetDoorbell(d hqd.Doorbell) { e.cq.SetDoorbell(d) }
func (e *aqlEngine) Err() error                 { return e.cq.Err() }

func (e *aqlEngine) status() string {
	s := e.cq.Status()
	return fmt.Sprintf("%s read=%d write=%d doorbell=%d packets=%d", s.State, s.ReadIndex, s.WriteIndex, s.Doorbell, s.Packets)
}

// RaiseEvent implements cp.Host: the CP wrote event_id to the mailbox and interrupts.
func (e *aqlEngine) RaiseEvent(_ *cp.Queue, id uint64) { e.q.p.SignalInterrupt(uint32(id)) }

// Dispatch implements cp.Host: run the grid on the shader model with the scratch the CP checked.
func (e *aqlEngine) Dispatch(cq *cp.Queue, pkt *aql.KernelDispatchPacket) error {
	id, slot := cq.CurrentPacket()
	sc := cq.Scratch()
	params := shader.DispatchParams{
		GridSize:           [3]uint32{pkt.GridSizeX, pkt.GridSizeY, pkt.GridSizeZ},
		WorkgroupSize:      [3]uint16{pkt.WorkgroupSizeX, pkt.WorkgroupSizeY, pkt.WorkgroupSizeZ},
		KernelObject:       pkt.KernelObject,
		KernargAddress:     pkt.KernargAddress,
		PrivateSegmentSize: pkt.PrivateSegmentSize,
		GroupSegmentSize:   pkt.GroupSegmentSize,
		DispatchPacket:     slot,
		Queue:              cq.AMDQueue(),
		DispatchID:         id,
		ScratchBase:        sc.Base,
		ScratchSize:        sc.Size,
		ScratchResource:    sc.Resource,
		ScratchWaveBytes:   sc.WaveBytes,
		Apertures:          shader.Apertures{SharedBase: ldsApertureBase, PrivateBase: scratchApertureBase},
		Kill:               e.q.pre.killChan(),
		Suspendable:        true, // a preemption saves the waves in place (CWSR)
		GroupDone:          e.q.groupOnCU,
		// s_sendmsg(MSG_INTERRUPT): the SQ interrupt's 24 data bits go to kfd_signal_event_interrupt.
		Interrupt: e.q.sqInterrupt,
		Engine:    e.q.engine(),
	}
	for d := aql.Dimensions(pkt.Setup); d < 3; d++ { // unused dimensions are 1
		params.GridSize[d], params.WorkgroupSize[d] = 1, 1
	}
	ctx := stopContext(cq.Stopping())
	defer e.q.p.d.busy(e.q.pd.gpuID)() // gpu_busy_percent (activity.go)
	st, err := runDispatch(ctx, e.q, id, params.Kill, func(start uint64) (shader.Stats, error) {
		params.StartGroup = start
		return shader.Dispatch(ctx, e.q.mem, params)
	})
	e.q.p.d.stats.waveInstructions.Add(st.WaveInstructions)
	return err
}

// QueueError implements cp.Host: the CP has stopped the queue. The driver logs the error; a GPUVM
// fault is the memory controller's interrupt, not the CP's: the driver evicts the process's queues
// on the device and raises the memory exception (raiseMemoryException), and the CP stores no
// queue-inactive code. Every other error's code is stored (the trap handler's or the CP's report).
func (e *aqlEngine) QueueError(_ *cp.Queue, err error) bool {
	q := e.q
	q.fail(err)
	q.waveExceptionToRuntime(err)
	var fault *shader.Fault
	var fe *cp.FaultError
	switch {
	case errors.As(err, &fault):
		return !q.p.raiseMemoryException(q.pd.gpuID, err, fault.Addr, fault.Write)
	case errors.As(err, &fe):
		return !q.p.raiseMemoryException(q.pd.gpuID, err, fe.VA, false)
	}
	return true
}

// stopContext is a context done when stop closes (the queue is being stopped, so a dispatch ends
// at the next work-group boundary). Its Done is stop itself: no goroutine waits to cancel it (a
// context.WithCancel fed by one cost a goroutine per dispatch).
func stopContext(stop <-chan struct{}) context.Context { return stopCtx{stop} }

type stopCtx struct{ stop <-chan struct{} }

func (stopCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c stopCtx) Done() <-chan struct{}     { return c.stop }
func (stopCtx) Value(any) any               { return nil }

func (c stopCtx) Err() error {
	select {
	case <-c.stop:
		return context.Canceled
	default:
		return nil
	}
}
