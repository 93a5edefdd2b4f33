package cp

import (
	"encoding/binary"

	"github.com/kfdemu/kfdemu/gpu/aql"
)

// The CP's side of the amd_queue_t protocol with ROCr: the queue-inactive signal (errors and dynamic
// scratch), the scratch fields the runtime fills, and profiling timestamps.

// Scratch is the queue's scratch as the CP loaded it from amd_queue_t for the dispatch being
// launched (ROCr AqlQueue::InitScratchSRD fills these fields).
type Scratch struct {
	Base      uint64    // scratch_backing_memory_location: on GFX9+ the absolute VA (Flat Scratch Init)
	Size      uint64    // scratch_backing_memory_byte_size
	Resource  [4]uint32 // scratch_resource_descriptor: the Private Segment Buffer V#
	WaveBytes uint64    // COMPUTE_TMPRING_SIZE.WAVESIZE * 1 KiB: the scratch slot of one wave
	Waves     uint32    // COMPUTE_TMPRING_SIZE.WAVES: how many waves may hold a slot at once
}

// amdQueueOf is the amd_queue_t a ring belongs to: ROCr passes &amd_queue_t.read_dispatch_id and
// &amd_queue_t.write_dispatch_id as the queue's read and write pointers. Queues created otherwise
// (kfdtest, PM4-style clients) have none: 0.
func amdQueueOf(rp, wp uint64) uint64 {
	if rp < aql.AMDQueueReadDispatchIDOffset || wp != rp-aql.AMDQueueReadDispatchIDOffset+aql.AMDQueueWriteDispatchIDOffset {
		return 0
	}
	return rp - aql.AMDQueueReadDispatchIDOffset
}

// loadScratch reads the queue's scratch fields (the CP reads them at each dispatch: ROCr changes
// them while the queue is inactive), and queue_properties with them: they are read in one access,
// from compute_tmpring_size to queue_properties, where amd_queue_t lies in client memory (ROCr's,
// registered as userptr) each access being a system call.
func (q *Queue) loadScratch() (s Scratch, props uint32, err error) {
	aq := q.amdQueue
	if aq == 0 {
		return s, 0, nil
	}
	b := q.scratchBuf[:] // the queue's own: a local buffer would escape through the interface call
	va := aq + aql.AMDQueueComputeTmpringSizeOffset
	if va%8 != 4 { // amd_queue_t is 64-byte aligned; a misaligned one faults as the loads did
		return s, 0, &FaultError{VA: va, Op: "amd_queue_t"}
	}
	if err := q.cfg.Memory.Read(va, b); err != nil {
		return s, 0, &FaultError{VA: va, Op: "amd_queue_t", Err: err}
	}
	s, props = q.decodeScratch()
	return s, props, nil
}

// decodeScratch decodes the fields loadScratch read into scratchBuf.
func (q *Queue) decodeScratch() (s Scratch, props uint32) {
	b := q.scratchBuf[:]
	at := func(off uint64) []byte { return b[off-aql.AMDQueueComputeTmpringSizeOffset:] }
	tmp := binary.LittleEndian.Uint32(at(aql.AMDQueueComputeTmpringSizeOffset))
	s.WaveBytes = uint64(aql.TmpringWaveSize.Get(tmp)) << 10
	s.Waves = aql.TmpringWaves.Get(tmp)
	for i := range s.Resource {
		s.Resource[i] = binary.LittleEndian.Uint32(at(aql.AMDQueueScratchResourceDescOffset + 4*uint64(i)))
	}
	s.Base = binary.LittleEndian.Uint64(at(aql.AMDQueueScratchLocationOffset))
	s.Size = binary.LittleEndian.Uint64(at(aql.AMDQueueScratchByteSizeOffset))
	return s, binary.LittleEndian.Uint32(at(aql.AMDQueuePropertiesOffset))
}

// needsScratch reports whether a dispatch whose packet asks for priv bytes per work-item does not
// fit the queue's scratch: a wave64 needs priv*64 bytes rounded up to the 1 KiB WAVESIZE unit
// (ROCr's handler sizes the allocation the same way: AlignUp(private_segment_size, 16) per lane),
// and at least one wave slot must exist.
func needsScratch(priv uint32, s *Scratch) bool {
	if priv == 0 {
		return false
	}
	need := (uint64(priv)*64 + 1023) &^ 1023
	return s.Waves == 0 || s.WaveBytes < need || s.Size < need
}

// properties loads amd_queue_t.queue_properties (0 without an amd_queue_t).
func (q *Queue) properties() (uint32, error) {
	if q.amdQueue == 0 {
		return 0, nil
	}
	return q.load32(q.amdQueue+aql.AMDQueuePropertiesOffset, "amd_queue_t queue_properties")
}

// inactiveSignal returns the handle of amd_queue_t.queue_inactive_signal (0: none).
func (q *Queue) inactiveSignal() (uint64, error) {
	if q.amdQueue == 0 {
		return 0, nil
	}
	return q.load64(q.amdQueue+aql.AMDQueueInactiveSignalOffset, "queue inactive signal")
}

// reportInactive stores code in the queue-inactive signal and raises its event (the signal's
// mailbox and interrupt, as for a completion signal): how the CP tells ROCr it took the queue
// offline. A queue without an amd_queue_t or without a signal reports nothing (reported false).
func (q *Queue) reportInactive(code uint64) (reported bool, err error) {
	sig, err := q.inactiveSignal()
	if err != nil || sig == 0 {
		return false, err
	}
	if err := q.store64(sig+aql.SignalValueOffset, code, "queue inactive signal"); err != nil {
		return false, err
	}
	return true, q.notify(sig)
}

// waitResume waits, with the queue blocked, until ROCr restarts it: the inactive signal's value is 0
// again and, if once is set, AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE is clear (the last store of
// ROCr's large-scratch reclaim). Stop ends the wait (ROCr suspends or destroys a queue whose error
// it cannot handle).
func (q *Queue) waitResume(stop <-chan struct{}, once bool) error {
	return q.Wait(stop, func() (bool, error) {
		sig, err := q.inactiveSignal()
		if err != nil || sig == 0 {
			return sig == 0, err
		}
		v, err := q.signalValue(sig)
		if err != nil || v != 0 {
			return false, err
		}
		if !once {
			return true, nil
		}
		p, err := q.properties()
		return aql.QueuePropUseScratchOnce.Get(p) == 0, err
	})
}

// ReportInactive takes the queue offline from outside the packet processor (the driver's reset of
// a queue that did not preempt in time): err's queue-inactive code goes to the inactive signal.
// Call it only while the queue is stopped.
func (q *Queue) ReportInactive(err error) error {
	_, e := q.reportInactive(aql.QueueInactiveCode(err))
	return e
}

// AMDQueue returns the VA of the queue's amd_queue_t (0 if the ring is not an AQL queue of ROCr's
// layout): the Queue Ptr a kernel receives.
func (q *Queue) AMDQueue() uint64 { return q.amdQueue }

// Scratch returns the scratch the CP checked for the dispatch being executed; valid during
// Host.Dispatch.
func (q *Queue) Scratch() Scratch { return q.scratch }

// timestamps writes amd_signal_t start_ts and end_ts of a completion signal (profiling on).
func (q *Queue) timestamps(sig, start, end uint64) error {
	// start_ts and end_ts are adjacent: one access (a system call where the signal lies in
	// client memory). Nobody reads them before the completion that follows.
	va := sig + aql.SignalStartTSOffset
	if va%8 != 0 {
		return &FaultError{VA: va, Op: "completion signal start_ts"}
	}
	binary.LittleEndian.PutUint64(q.tsBuf[:], start)
	binary.LittleEndian.PutUint64(q.tsBuf[8:], end)
	if err := q.cfg.Memory.Write(va, q.tsBuf[:]); err != nil {
		return &FaultError{VA: va, Op: "completion signal start_ts", Err: err}
	}
	return nil
}
