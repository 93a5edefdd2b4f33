package kfd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/gpu/hws"
	"github.com/kfdemu/kfdemu/gpu/shader"
	"github.com/kfdemu/kfdemu/topology"
	"golang.org/x/sys/cpu"
)

// Scheduling: every GPU has a hardware scheduler (package gpu/hws) whose runlist holds the queues
// of all processes, whatever their engine; a compute queue (AQL or PM4) runs while it holds one of
// the GPU's hardware slots, an SDMA queue while it is active (its RLC queue is its own). Unmapping
// a compute queue saves its dispatch in flight: the waves are suspended in place (gpu/shader
// CWSR) and resumed exactly when the queue is mapped again (preemptState, runDispatch). Only
// queues with work are time-sliced (HasWork); an unmapped queue's doorbell asks for a slot (kick).

// SetScheduling sets the hardware-scheduler configuration of GPUs whose scheduler does not exist
// yet (call it before the first queue): slots (0: the node's num_cp_queues), time slice and
// preemption timeout.
func (d *Driver) SetScheduling(cfg hws.Config) {
	d.mu.Lock()
	d.hwsCfg = cfg
	d.mu.Unlock()
}

// scheduler returns GPU gpuID's hardware scheduler, creating it.
func (d *Driver) scheduler(gpuID uint32) *hws.Scheduler {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.scheds[gpuID]
	if s == nil {
		cfg := d.hwsCfg
		if n := d.sys.NodeByGPUID(gpuID); cfg.Slots == 0 && n != nil {
			// The node's num_cp_queues: the CP queues amdkfd's HWS maps user queues to.
			cfg.Slots = int(n.Prop(topology.NumCPQueues))
		}
		cfg.OnHang = func(q hws.Queue) { q.(*queue).reset() }
		s = hws.New(cfg)
		d.scheds[gpuID] = s
	}
	return s
}

func (d *Driver) closeSchedulers() {
	d.mu.Lock()
	ss := d.scheds
	d.scheds = map[uint32]*hws.Scheduler{}
	d.mu.Unlock()
	for _, s := range ss {
		s.Close()
	}
}

// params are the queue's runlist parameters; under Process.mu.
func (q *queue) params() hws.Params {
	return hws.Params{Priority: q.args.QueuePriority, Percentage: q.args.QueuePercentage & 0xff, RingUnset: q.ringUnset,
		Evicted: q.p.evicted || q.suspended || q.pd.vmFaultEvicted, Dedicated: isSDMA(q.args.QueueType)}
}

// EvictQueues preempts every AQL queue of process tgid and keeps them off the hardware
// (kfd_process_evict_queues: what memory eviction, userptr invalidation and the debugger use);
// dispatches in flight are saved at a work-group boundary. RestoreQueues maps them again
// (kfd_process_restore_queues). kfdemu has no memory pressure or MMU notifier to trigger them:
// they are here for tools and tests.
func (d *Driver) EvictQueues(tgid int) error   { return d.setEvicted(tgid, true) }
func (d *Driver) RestoreQueues(tgid int) error { return d.setEvicted(tgid, false) }

func (d *Driver) setEvicted(tgid int, ev bool) error {
	d.mu.Lock()
	p := d.procs[tgid]
	d.mu.Unlock()
	if p == nil {
		return fmt.Errorf("kfd: no process %d", tgid)
	}
	p.mu.Lock()
	switch now := time.Now(); {
	case ev && !p.evicted:
		p.evictedAt = now
	case !ev && p.evicted: // restore: evict_duration_counter += now - last_evict_timestamp
		p.evictedFor += now.Sub(p.evictedAt)
	}
	p.evicted = ev
	var qs []*queue
	for _, q := range p.queues {
		if q.scheduled {
			qs = append(qs, q)
		}
	}
	p.mu.Unlock()
	for _, q := range qs {
		p.mu.Lock()
		par := q.params()
		p.mu.Unlock()
		d.scheduler(q.pd.gpuID).Update(q, par)
	}
	return nil
}

// schedule starts a new queue: every queue enters its GPU's runlist and runs once it is mapped
// (compute queues hold an HQD slot, an SDMA queue its own RLC queue).
func (q *queue) schedule() error {
	q.p.mu.Lock()
	par := q.params()
	q.p.mu.Unlock()
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return errQueueState
	}
	q.scheduled = true
	q.mu.Unlock()
	h, err := q.p.d.scheduler(q.pd.gpuID).Add(q, par)
	if err != nil {
		return err
	}
	q.hw.Store(h)
	h.Doorbell() // a doorbell that rang before the handle was stored
	return nil
}

// kick is the queue's doorbell (the doorbell watcher calls it): the engine re-scans its ring, and
// an unmapped queue tells its scheduler it has work (hws.Handle.Doorbell: one atomic load when
// mapped; no lock, no allocation).
func (q *queue) kick() {
	q.eng.Kick()
	if h := q.hw.Load(); h != nil {
		h.Doorbell()
	}
}

// HasWork implements hws.Worker: a doorbell not taken, a packet executing or waiting, or a ring
// not drained (gpu/hqd Runner.HasWork; a dispatch saved by a preemption is a scan not finished).
// Only queues with work are time-sliced.
func (q *queue) HasWork() bool { return q.eng.HasWork() }

// Name implements hws.Queue.
func (q *queue) Name() string { return fmt.Sprintf("tgid %d queue %d", q.p.tgid, q.id) }

// Map implements hws.Queue: the queue's engine runs.
func (q *queue) Map() error { return q.eng.Start() }

// errPreemptTimeout is an Unmap whose dispatch did not reach a work-group boundary in time.
// (The CP reports it to ROCr as an illegal instruction, as a queue reset after a hang looks.)
var errPreemptTimeout = aql.NewError("kfd: queue preemption timed out", aql.ErrIllegalInstruction)

// Unmap implements hws.Queue: preempt the engine; a dispatch in flight (AQL or PM4) stops at its
// next work-group boundary and its resume point is kept for the next Map (context save); an SDMA
// queue stops between packets. If it does not stop within timeout its waves are abandoned and
// the queue is hung.
func (q *queue) Unmap(timeout time.Duration) error {
	return q.preempt(timeout, q.destroying.Load())
}

// reset is the hung-queue path (kfd_hws_hang, evict and reset): the queue enters the error
// state with a queue-inactive code and its process gets a hardware exception; other processes
// are not affected.
func (q *queue) reset() {
	q.p.d.log.Warn("queue did not preempt in time: reset", "tgid", q.p.tgid, "queue", q.id)
	q.fail(errPreemptTimeout)
	q.pre.discard()
	if e, ok := q.eng.(*aqlEngine); ok {
		_ = e.cq.ReportInactive(errPreemptTimeout)
	}
	q.p.mu.Lock()
	q.p.raiseHWExceptionLocked(q.pd.gpuID)
	q.p.mu.Unlock()
}

// preemptState is an AQL engine's context-save state: the kill channel of the current mapping
// and the saved resume point of a preempted dispatch.
type preemptState struct {
	mu      sync.Mutex
	kill    chan struct{} // closed: waves stop inside their work-group
	killed  bool
	resume  *resumePoint
	resumes uint64 // dispatches resumed from a saved point
	saves   uint64
}

// resumePoint is what the context-save area holds for a dispatch preempted at a work-group
// boundary: the packet's dispatch id and the next work-group.
type resumePoint struct {
	DispatchID uint64
	NextGroup  uint64
	// Suspended is the dispatch's waves suspended in place (gpu/shader CWSR): the next mapping
	// resumes them exactly where they stood. Nil for a dispatch saved at a work-group boundary.
	Suspended *shader.Suspended
}

func (s *preemptState) killChan() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kill == nil {
		s.kill = make(chan struct{})
	}
	return s.kill
}

func (s *preemptState) doKill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kill == nil {
		s.kill = make(chan struct{})
	}
	if !s.killed {
		close(s.kill)
		s.killed = true
	}
}

func (q *queue) preempt(timeout time.Duration, abandon bool) error {
	st := &q.pre
	if abandon {
		st.doKill()
	}
	timer := time.AfterFunc(timeout, st.doKill)
	q.eng.Stop() // returns once the dispatch (if any) has returned
	timer.Stop()
	st.mu.Lock()
	defer st.mu.Unlock()
	killed := st.killed
	st.kill, st.killed = nil, false // a fresh channel for the next mapping
	if killed && !abandon {
		return errPreemptTimeout
	}
	return nil
}

// save records the resume point of a dispatch the preemption stopped at a boundary.
func (s *preemptState) save(id, next uint64) {
	s.keep(&resumePoint{DispatchID: id, NextGroup: next})
}

// suspend records a dispatch the preemption suspended in place (context save).
func (s *preemptState) suspend(id uint64, e *shader.SuspendedError) {
	s.keep(&resumePoint{DispatchID: id, NextGroup: e.NextGroup, Suspended: e.S})
}

func (s *preemptState) keep(r *resumePoint) {
	s.mu.Lock()
	old := s.resume
	s.resume = r
	s.saves++
	s.mu.Unlock()
	if old != nil && old.Suspended != nil && old.Suspended != r.Suspended {
		old.Suspended.Abort()
	}
}

// restore returns where dispatch id starts: its suspended waves (context restore after a
// preemption), or the first work-group to run (0 unless it was preempted at a boundary). A saved
// context of another dispatch is dropped.
func (s *preemptState) restore(id uint64) (uint64, *shader.Suspended) {
	s.mu.Lock()
	r := s.resume
	s.resume = nil
	if r != nil && r.DispatchID == id {
		s.resumes++
		s.mu.Unlock()
		return r.NextGroup, r.Suspended
	}
	s.mu.Unlock()
	if r != nil && r.Suspended != nil {
		r.Suspended.Abort()
	}
	return 0, nil
}

// discard ends a saved context that will never be restored (queue destroyed, reset, process gone):
// its suspended waves are abandoned and their resources freed.
func (s *preemptState) discard() {
	s.mu.Lock()
	r := s.resume
	s.resume = nil
	s.mu.Unlock()
	if r != nil && r.Suspended != nil {
		r.Suspended.Abort()
	}
}

// debugRunlists is debugfs kfd/rls: every GPU's runlist.
func (d *Driver) debugRunlists() string {
	var b strings.Builder
	for _, n := range d.sys.GPUs() {
		d.mu.Lock()
		s := d.scheds[n.GPUID]
		d.mu.Unlock()
		fmt.Fprintf(&b, "gpu_id %d\n", n.GPUID)
		if s == nil {
			fmt.Fprintf(&b, "  no queue yet\n")
			continue
		}
		for _, l := range strings.Split(strings.TrimRight(s.Runlist(), "\n"), "\n") {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	return b.String()
}

// debugHQDs is debugfs kfd/hqds: every GPU's hardware slots.
func (d *Driver) debugHQDs() string {
	var b strings.Builder
	for _, n := range d.sys.GPUs() {
		d.mu.Lock()
		s := d.scheds[n.GPUID]
		d.mu.Unlock()
		fmt.Fprintf(&b, "gpu_id %d\n", n.GPUID)
		if s != nil {
			for _, l := range strings.Split(strings.TrimRight(s.HQDs(), "\n"), "\n") {
				fmt.Fprintf(&b, "  %s\n", l)
			}
		}
	}
	return b.String()
}

// debugMQDs is debugfs kfd/mqds: the queue descriptors (what the MQD holds) of every compute
// queue (AQL and PM4).
func (d *Driver) debugMQDs() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %-5s %-10s %-18s %-8s %-8s %-10s %-8s %-18s %s\n", "tgid", "queue", "gpu_id", "ring", "size",
		"priority", "percentage", "cus", "cwsr", "saved")
	for _, p := range d.sortedProcs() {
		p.mu.Lock()
		for _, q := range p.queues {
			if isSDMA(q.args.QueueType) {
				continue
			}
			q.pre.mu.Lock()
			saved := "-"
			if r := q.pre.resume; r != nil {
				saved = fmt.Sprintf("dispatch %d group %d", r.DispatchID, r.NextGroup)
			}
			fmt.Fprintf(&b, "%-8d %-5d %-10d %#-18x %-8d %-8d %-10d %-8d %#-18x %s (saves %d resumes %d) groups per CU: %s\n", p.tgid, q.id, q.args.GPUID,
				q.args.RingBaseAddress, q.args.RingSize, q.args.QueuePriority, q.args.QueuePercentage&0xff, len(*q.cus.Load()),
				q.args.CtxSaveRestoreAddress, saved, q.pre.saves, q.pre.resumes, q.cuUsage())
			q.pre.mu.Unlock()
		}
		p.mu.Unlock()
	}
	return b.String()
}

// setCUs derives the CUs work-groups may use from the CU mask (mqd_symmetrically_map_cu_mask
// ignores bits beyond the device's CUs; a mask with none left means all CUs here).
func (q *queue) setCUs() {
	total := int(q.pd.node.ComputeUnits())
	if q.cuGroups == nil {
		q.cuGroups = make([]cuCount, total)
	}
	var cus []int
	for i, w := range q.cuMask {
		for b := 0; b < 32; b++ {
			if w&(1<<b) != 0 && 32*i+b < total {
				cus = append(cus, 32*i+b)
			}
		}
	}
	if len(cus) == 0 {
		for c := range total {
			cus = append(cus, c)
		}
	}
	q.cus.Store(&cus)
}

// cuCount is one CU's work-group count, on a cache line of its own: the workers run groups on
// neighbouring CUs (round robin) and count each one.
type cuCount struct {
	n atomic.Uint64
	_ cpu.CacheLinePad
}

// groupOnCU is shader.DispatchParams.GroupDone: count the work-groups each CU ran.
func (q *queue) groupOnCU(_ uint64, cu int) {
	if cu >= 0 && cu < len(q.cuGroups) {
		q.cuGroups[cu].n.Add(1)
	}
}

// cuUsage lists the CUs that ran work-groups of q and how many ("cu:groups ...").
func (q *queue) cuUsage() string {
	var parts []string
	for c := range q.cuGroups {
		if n := q.cuGroups[c].n.Load(); n > 0 {
			parts = append(parts, fmt.Sprintf("%d:%d", c, n))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// runDispatch runs dispatch id of q's engine with the context save of a preemption: a dispatch
// saved earlier is restored (its suspended waves resumed, or started at its saved work-group),
// and one the preemption stops is saved again. start runs it afresh from a work-group.
func runDispatch(ctx context.Context, q *queue, id uint64, kill <-chan struct{}, start func(group uint64) (shader.Stats, error)) (shader.Stats, error) {
	next, susp := q.pre.restore(id)
	var st shader.Stats
	var err error
	if susp != nil {
		st, err = shader.Resume(ctx, susp, kill)
	} else {
		st, err = start(next)
	}
	var se *shader.SuspendedError
	var pe *shader.PreemptedError
	switch {
	case errors.As(err, &se):
		q.pre.suspend(id, se) // context save: the waves resume where they stand when mapped again
	case errors.As(err, &pe) && !pe.MidGroup:
		q.pre.save(id, pe.NextGroup) // saved at a work-group boundary
	}
	return st, err
}
