package kfd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kfdemu/kfdemu/gpu/cp"
	"github.com/kfdemu/kfdemu/gpu/hsa"
	"github.com/kfdemu/kfdemu/gpu/shader"
)

// The AQL engine: gpu/cp's packet processor on the queue's ring, with kernel dispatches handed to
// gpu/shader, completion-signal interrupts delivered as kfd events, and queue errors reported the
// way the CP firmware reports them to ROCr: an error code stored in amd_queue_t's
// queue_inactive_signal (whose event mailbox raises its event), plus, for GPUVM faults, a memory
// exception event (kfd_signal_vm_fault_event).

type aqlEngine struct {
	q   *queue
	cq  *cp.Queue
	pre preemptState // context save of the dispatch a preemption stopped
}

// Error codes of the queue-inactive signal (ROCr AqlQueue::DynamicScratchHandler).
const (
	qerrInvalidDim     = 2
	qerrInvalidGroup   = 4
	qerrInvalidCode    = 8
	qerrInvalidFormat  = 32
	qerrGroupTooLarge  = 64
	qerrOutOfVGPRs     = 128
	qerrVendorFormat   = 256
	qerrMemViolation   = 0x20000000
	qerrIllegalInst    = 0x40000000
	qerrDebugTrap      = 0x80000000
	amdQueueScratchLoc = 160 // amd_queue_t.scratch_backing_memory_location
)

func newAQL(q *queue) (*aqlEngine, error) {
	a := q.args
	e := &aqlEngine{q: q}
	cq, err := cp.New(cp.Config{RingBase: a.RingBaseAddress, RingSize: a.RingSize / hsa.PacketSize,
		ReadIndexVA: a.ReadPointerAddress, WriteIndexVA: a.WritePointerAddress,
		Doorbell: func() uint64 { return word64(q.pd.doorbellMem[8*q.doorbellID:]).Load() },
		Memory:   q.mem, Host: e, Group: &q.pd.group, Tag: q})
	if err != nil {
		return nil, err
	}
	e.cq = cq
	return e, nil
}

func (e *aqlEngine) Start() error { return e.cq.Start() }
func (e *aqlEngine) Stop()        { e.cq.Stop() }
func (e *aqlEngine) Kick()        { e.cq.Kick() }
func (e *aqlEngine) Err() error   { return e.cq.Err() }

func (e *aqlEngine) status() string {
	s := e.cq.Status()
	return fmt.Sprintf("%s read=%d write=%d doorbell=%d packets=%d", s.State, s.ReadIndex, s.WriteIndex, s.Doorbell, s.Packets)
}

// amdQueue is the address of the amd_queue_t the ring belongs to: ROCr passes
// &amd_queue_.read_dispatch_id as the read pointer.
func (e *aqlEngine) amdQueue() uint64 {
	rp := e.q.args.ReadPointerAddress
	if rp < hsa.AMDQueueReadDispatchIDOffset || e.q.args.WritePointerAddress != rp-hsa.AMDQueueReadDispatchIDOffset+hsa.AMDQueueWriteDispatchIDOffset {
		return 0
	}
	return rp - hsa.AMDQueueReadDispatchIDOffset
}

// RaiseEvent implements cp.Host: the CP wrote event_id to the mailbox and interrupts.
func (e *aqlEngine) RaiseEvent(_ *cp.Queue, id uint64) { e.q.p.SignalInterrupt(uint32(id)) }

// Dispatch implements cp.Host: run the grid on the shader model.
func (e *aqlEngine) Dispatch(cq *cp.Queue, pkt *hsa.KernelDispatchPacket) error {
	id, slot := cq.CurrentPacket()
	params := shader.DispatchParams{
		GridSize:           [3]uint32{pkt.GridSizeX, pkt.GridSizeY, pkt.GridSizeZ},
		WorkgroupSize:      [3]uint16{pkt.WorkgroupSizeX, pkt.WorkgroupSizeY, pkt.WorkgroupSizeZ},
		KernelObject:       pkt.KernelObject,
		KernargAddress:     pkt.KernargAddress,
		PrivateSegmentSize: pkt.PrivateSegmentSize,
		GroupSegmentSize:   pkt.GroupSegmentSize,
		DispatchPacket:     slot,
		Queue:              e.amdQueue(),
		DispatchID:         id,
		Apertures:          shader.Apertures{SharedBase: ldsApertureBase, PrivateBase: scratchApertureBase},
		StartGroup:         e.restore(id), // context restore after a preemption
		Kill:               e.pre.killChan(),
		GroupDone:          e.q.groupOnCU,
		// s_sendmsg(MSG_INTERRUPT): the SQ interrupt's 24 data bits go to kfd_signal_event_interrupt.
		Interrupt: func(i shader.Interrupt) { e.q.p.SignalEventInterrupt(i.Data, 24) },
	}
	for d := hsa.Dimensions(pkt.Setup); d < 3; d++ { // unused dimensions are 1
		params.GridSize[d], params.WorkgroupSize[d] = 1, 1
	}
	if aq := params.Queue; aq != 0 {
		var sc [2]uint64
		if loc, err := e.q.mem.Load64(aq + amdQueueScratchLoc); err == nil {
			sc[0] = loc
		}
		if sz, err := e.q.mem.Load64(aq + amdQueueScratchLoc + 8); err == nil {
			sc[1] = sz
		}
		params.ScratchBase, params.ScratchSize = sc[0], sc[1]
	}
	ctx, cancel := stopContext(cq.Stopping())
	defer cancel()
	defer e.q.p.d.busy(e.q.pd.gpuID)() // gpu_busy_percent (activity.go)
	st, err := shader.Dispatch(ctx, e.q.mem, params)
	e.q.p.d.stats.waveInstructions.Add(st.WaveInstructions)
	var pe *shader.PreemptedError
	if errors.As(err, &pe) && !pe.MidGroup {
		e.save(id, pe.NextGroup) // context save: resume at this work-group when mapped again
	}
	return err
}

// QueueError implements cp.Host.
func (e *aqlEngine) QueueError(_ *cp.Queue, err error) {
	q := e.q
	q.fail(err)
	code := uint64(qerrInvalidFormat)
	var fault *shader.Fault
	switch {
	case errors.As(err, &fault):
		q.p.raiseMemoryException(q.pd.gpuID, err, fault.Addr, fault.Write)
		code = qerrMemViolation
	case errors.Is(err, cp.ErrFault):
		var fe *cp.FaultError
		va := uint64(0)
		if errors.As(err, &fe) {
			va = fe.VA
		}
		q.p.raiseMemoryException(q.pd.gpuID, err, va, false)
		code = qerrMemViolation
	case errors.Is(err, cp.ErrInvalidDispatch):
		code = qerrInvalidDim
		if strings.Contains(err.Error(), "kernel_object") {
			code = qerrInvalidCode
		}
	case errors.Is(err, shader.ErrBadDispatch):
		code = qerrInvalidCode
		if strings.Contains(err.Error(), "LDS") || strings.Contains(err.Error(), "work-group of") {
			code = qerrGroupTooLarge
		}
	case errors.Is(err, cp.ErrDispatchFailed):
		code = qerrIllegalInst
	case errors.Is(err, cp.ErrUnsupported), errors.Is(err, cp.ErrMalformed):
		var pe *cp.PacketError
		if errors.As(err, &pe) && hsa.PacketType(pe.Header) == hsa.PacketTypeVendorSpecific {
			code = qerrVendorFormat
		}
	}
	e.reportInactive(code)
}

// reportInactive stores the error code in amd_queue_t.queue_inactive_signal and raises its event,
// as the CP does when it takes an AQL queue offline.
func (e *aqlEngine) reportInactive(code uint64) {
	aq := e.amdQueue()
	if aq == 0 {
		return
	}
	m := e.q.mem
	sig, err := m.Load64(aq + hsa.AMDQueueInactiveSignalOffset)
	if err != nil || sig == 0 || sig%8 != 0 {
		return
	}
	if m.Store64(sig+hsa.SignalValueOffset, code) != nil {
		return
	}
	mb, err := m.Load64(sig + hsa.SignalMailboxOffset)
	if err != nil || mb == 0 {
		return
	}
	id, err := m.Load32(sig + hsa.SignalEventIDOffset)
	if err == nil && m.Store64(mb, uint64(id)) == nil {
		e.q.p.SignalInterrupt(id)
	}
}

// stopContext is a context cancelled when stop closes (the queue is being stopped, so a dispatch
// ends at the next work-group boundary); cancel releases it.
func stopContext(stop <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
