// Package hws models the hardware scheduler of an AMD GPU's compute engine as amdkfd drives it
// (kfd_device_queue_manager.c with HWS: the runlist of kfd_packet_manager.c, the CP firmware that
// maps runlist entries onto hardware queue descriptors): a GPU has a fixed number of hardware queue
// slots (HQDs); every active user queue of every process is in the runlist; when there are more
// active queues than slots, the scheduler time-slices them, preempting mapped queues and mapping
// waiting ones each quantum. Queues of every engine are in the runlist: AQL and PM4 compute queues
// share the HQD slots, an SDMA queue has its own (Params.Dedicated). Slices are shared by stride
// scheduling: a queue's share grows with its priority (0-15: priority p gets p+1 shares), so
// higher priorities run more often and no queue starves. A queue with percentage 0, a ring unset
// by UPDATE_QUEUE, or evicted is inactive and never mapped.
//
// Preempting a queue is the Queue's business (Unmap): kfd suspends its in-flight dispatch's waves
// where they stand and resumes them when the queue is mapped again (gpu/shader's CWSR). An Unmap
// that does not finish within the preemption timeout is a hung queue: the Queue resets itself and
// the scheduler drops it from the runlist (kfd: dqm->is_hws_hang, a GPU reset; here only that
// queue is reset).
//
// Concurrency: Scheduler.mu guards the runlist; Map and Unmap of Queues are called with it
// released, from the scheduler goroutine or the caller of Add/Remove/Update (serialized by
// Scheduler.opMu). Lock order: opMu before mu. The scheduler goroutine sleeps unless the GPU is
// oversubscribed.
package hws

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Queue is a schedulable user queue.
type Queue interface {
	// Map makes the queue resident: it processes its ring until Unmap.
	Map() error
	// Unmap preempts the queue; it returns once the queue's state is saved, or with an error
	// after timeout, when the queue has been reset instead.
	Unmap(timeout time.Duration) error
	// Name identifies the queue in the debugfs view.
	Name() string
}

// Params are a queue's scheduling parameters (UPDATE_QUEUE's percentage and priority).
type Params struct {
	Priority   uint32 // 0..15, higher first
	Percentage uint32 // 0: inactive
	// RingUnset: UPDATE_QUEUE gave a NULL ring address or size 0, so the queue is inactive
	// (QUEUE_IS_ACTIVE in kfd_priv.h: queue_size > 0, queue_address != 0, queue_percent > 0).
	RingUnset bool
	Evicted   bool // the process's queues are evicted (kfd_process_evict_queues) until restored
	// Dedicated marks a queue whose hardware slot is its own, assigned by the driver at creation
	// (an SDMA queue's RLC queue of its engine): it is mapped whenever it is runnable, never takes a
	// compute HQD and is not time-sliced. The runlist still holds it: eviction, percentage,
	// priority and preemption apply as to any queue (pm_create_runlist_ib maps SDMA queues too).
	Dedicated bool
}

type entry struct {
	q        Queue
	p        Params
	mapped   bool
	slot     int    // hardware slot while mapped
	lastRun  uint64 // scheduling round it was last mapped in
	pass     uint64 // stride scheduling: virtual time; the smallest passes are mapped
	mappings uint64
	slices   uint64 // time slices charged (rotations it was mapped across)
	hung     bool
}

// Config configures a scheduler.
type Config struct {
	Slots             int           // hardware queue slots (HQDs) for user queues
	Quantum           time.Duration // time slice when oversubscribed
	PreemptionTimeout time.Duration // amdgpu.queue_preemption_timeout_ms
	// OnHang is called (without scheduler locks) when a queue failed to preempt in time.
	OnHang func(q Queue)
}

// Defaults: amdkfd's HWS has 4 pipes x 8 queues on MEC1 for user queues; the timeslice of the CP
// firmware's runlist is in the low milliseconds; queue_preemption_timeout_ms defaults to 9000.
const (
	DefaultSlots             = 32
	DefaultQuantum           = 2 * time.Millisecond
	DefaultPreemptionTimeout = 9 * time.Second
)

// Scheduler is one GPU's hardware scheduler.
type Scheduler struct {
	cfg  Config
	opMu sync.Mutex // serializes runlist updates (a map/unmap pass at a time)

	mu      sync.Mutex
	queues  []*entry
	round   uint64
	stopped bool
	wake    chan struct{} // never closed
	stop    chan struct{}
	done    chan struct{}
	stats   Stats
}

// Stats are the scheduler's counters.
type Stats struct {
	Rounds       uint64 // runlist passes that changed the mapping
	Preemptions  uint64 // successful unmaps
	Hangs        uint64 // unmaps that timed out
	MaxUnmapTime time.Duration
}

// New starts a scheduler.
func New(cfg Config) *Scheduler {
	if cfg.Slots <= 0 {
		cfg.Slots = DefaultSlots
	}
	if cfg.Quantum <= 0 {
		cfg.Quantum = DefaultQuantum
	}
	if cfg.PreemptionTimeout <= 0 {
		cfg.PreemptionTimeout = DefaultPreemptionTimeout
	}
	s := &Scheduler{cfg: cfg, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

// Slots is the number of hardware slots.
func (s *Scheduler) Slots() int { return s.cfg.Slots }

// Add puts a queue in the runlist and maps it if a slot is free (or its priority wins one).
func (s *Scheduler) Add(q Queue, p Params) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return fmt.Errorf("hws: scheduler stopped")
	}
	e := &entry{q: q, p: p, slot: -1, pass: s.minPass()}
	s.queues = append(s.queues, e)
	s.mu.Unlock()
	s.reschedule(false)
	return nil
}

// Update changes a queue's priority or percentage (UPDATE_QUEUE) and reschedules.
func (s *Scheduler) Update(q Queue, p Params) {
	s.mu.Lock()
	if e := s.find(q); e != nil {
		e.p = p
	}
	s.mu.Unlock()
	s.reschedule(false)
}

// Remove takes a queue out of the runlist, unmapping it first (DESTROY_QUEUE preempts first). It
// returns the Unmap error (a hung queue).
func (s *Scheduler) Remove(q Queue) error {
	s.opMu.Lock()
	s.mu.Lock()
	e := s.find(q)
	if e == nil {
		s.mu.Unlock()
		s.opMu.Unlock()
		return nil
	}
	s.queues = removeEntry(s.queues, e)
	wasMapped := e.mapped
	e.mapped = false
	s.mu.Unlock()
	var err error
	if wasMapped {
		err = s.unmap(e)
	}
	s.opMu.Unlock()
	s.reschedule(false) // a slot may have been freed
	return err
}

// IsMapped reports whether q holds a hardware slot.
func (s *Scheduler) IsMapped(q Queue) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.find(q)
	return e != nil && e.mapped
}

// Slices is how many time slices q has been charged for: the unit stride scheduling shares out,
// independent of how long the host took to end each slice.
func (s *Scheduler) Slices(q Queue) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.find(q); e != nil {
		return e.slices
	}
	return 0
}

// Close unmaps nothing (the owner destroys its queues) and stops the scheduler goroutine.
func (s *Scheduler) Close() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	s.mu.Unlock()
	close(s.stop)
	<-s.done
}

// strideUnit is the stride of a priority-0 queue; priority p strides strideUnit/(p+1).
const strideUnit = 1 << 20

func stride(p Params) uint64 { return strideUnit / uint64(min(p.Priority, 15)+1) }

// minPass is where a new queue starts: no ahead of the queues that already wait, no behind.
func (s *Scheduler) minPass() uint64 {
	var m uint64
	first := true
	for _, e := range s.queues {
		if e.runnable() && (first || e.pass < m) {
			m, first = e.pass, false
		}
	}
	return m
}

func (s *Scheduler) find(q Queue) *entry {
	for _, e := range s.queues {
		if e.q == q {
			return e
		}
	}
	return nil
}

func removeEntry(es []*entry, e *entry) []*entry {
	out := es[:0]
	for _, x := range es {
		if x != e {
			out = append(out, x)
		}
	}
	return out
}

// run time-slices while oversubscribed and sleeps otherwise.
func (s *Scheduler) run() {
	defer close(s.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		s.mu.Lock()
		over := s.oversubscribed()
		s.mu.Unlock()
		if over {
			timer.Reset(s.cfg.Quantum)
			select {
			case <-s.stop:
				timer.Stop()
				return
			case <-s.wake:
				timer.Stop()
			case <-timer.C:
				s.reschedule(true)
			}
			continue
		}
		select {
		case <-s.stop:
			return
		case <-s.wake:
		}
	}
}

func (s *Scheduler) oversubscribed() bool {
	n := 0
	for _, e := range s.queues {
		if e.runnable() && !e.p.Dedicated {
			n++
		}
	}
	return n > s.cfg.Slots
}

func (e *entry) runnable() bool {
	return e.p.Percentage > 0 && !e.p.RingUnset && !e.p.Evicted && !e.hung
}

// reschedule computes the runlist's mapped set and applies it. rotate starts a new time slice:
// the queues that waited longest win ties, so mapped queues of a priority level give way to
// waiting ones of the same level.
func (s *Scheduler) reschedule(rotate bool) {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	if rotate {
		s.round++
		for _, e := range s.queues {
			if e.mapped {
				e.pass += stride(e.p) // charge the slice that ends
				e.slices++
			}
		}
	}
	cands := make([]*entry, 0, len(s.queues))
	want := map[*entry]bool{}
	for _, e := range s.queues {
		switch {
		case e.runnable() && e.p.Dedicated:
			want[e] = true // its own slot
		case e.runnable():
			cands = append(cands, e)
		}
	}
	round := s.round
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.pass != b.pass {
			return a.pass < b.pass
		}
		if a.mapped != b.mapped {
			return a.mapped // keep what runs
		}
		return a.lastRun < b.lastRun
	})
	for i, e := range cands {
		if i < s.cfg.Slots {
			want[e] = true
		}
	}
	var out, in []*entry
	for _, e := range s.queues {
		switch {
		case e.mapped && !want[e]:
			out = append(out, e)
			e.mapped = false
		case !e.mapped && want[e]:
			in = append(in, e)
			e.mapped = true
			e.lastRun = round
			e.mappings++
		case e.mapped:
			e.lastRun = round
		}
	}
	if len(out)+len(in) > 0 {
		s.stats.Rounds++
	}
	// Free slots of the queues going out, then give slots to the queues coming in.
	used := map[int]bool{}
	for _, e := range s.queues {
		if e.mapped && e.slot >= 0 {
			used[e.slot] = true
		}
	}
	for _, e := range out {
		e.slot = -1
	}
	for _, e := range in {
		if e.p.Dedicated {
			continue // no HQD: slot stays -1
		}
		for k := 0; k < s.cfg.Slots; k++ {
			if !used[k] {
				e.slot, used[k] = k, true
				break
			}
		}
	}
	s.mu.Unlock()
	for _, e := range out {
		s.unmap(e)
	}
	for _, e := range in {
		if err := e.q.Map(); err != nil {
			s.mu.Lock()
			e.mapped, e.slot, e.hung = false, -1, true // an errored queue leaves the runlist
			s.mu.Unlock()
		}
	}
	select {
	case s.wake <- struct{}{}: // the run loop re-evaluates oversubscription
	default:
	}
}

// unmap preempts e's queue; a timeout marks it hung and reports it.
func (s *Scheduler) unmap(e *entry) error {
	start := time.Now()
	err := e.q.Unmap(s.cfg.PreemptionTimeout)
	el := time.Since(start)
	s.mu.Lock()
	e.slot = -1
	if el > s.stats.MaxUnmapTime {
		s.stats.MaxUnmapTime = el
	}
	if err != nil {
		e.hung = true
		s.stats.Hangs++
	} else {
		s.stats.Preemptions++
	}
	s.mu.Unlock()
	if err != nil && s.cfg.OnHang != nil {
		s.cfg.OnHang(e.q)
	}
	return err
}

// Stats returns the counters.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// HQDs is the debugfs view of the hardware slots (kfd's hqds): which queue each slot holds.
func (s *Scheduler) HQDs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, s.cfg.Slots)
	for _, e := range s.queues {
		if e.mapped && e.slot >= 0 && e.slot < len(names) {
			names[e.slot] = e.q.Name()
		}
	}
	var b strings.Builder
	for i, n := range names {
		if n == "" {
			n = "(free)"
		}
		fmt.Fprintf(&b, "hqd %d: %s\n", i, n)
	}
	return b.String()
}

// Runlist is the debugfs view (kfd's rls and hqds): every queue of the runlist in scheduling
// order with its priority, percentage, slot and how often it was mapped.
func (s *Scheduler) Runlist() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "slots %d quantum %v preemption_timeout %v rounds %d preemptions %d hangs %d\n",
		s.cfg.Slots, s.cfg.Quantum, s.cfg.PreemptionTimeout, s.stats.Rounds, s.stats.Preemptions, s.stats.Hangs)
	fmt.Fprintf(&b, "%-5s %-28s %-8s %-10s %-8s %-8s %s\n", "hqd", "queue", "priority", "percentage", "mapped", "mappings", "slices")
	for _, e := range s.queues {
		slot := "-"
		switch {
		case e.mapped && e.p.Dedicated:
			slot = "own"
		case e.mapped:
			slot = fmt.Sprint(e.slot)
		}
		state := fmt.Sprint(e.mapped)
		if e.hung {
			state = "hung"
		}
		fmt.Fprintf(&b, "%-5s %-28s %-8d %-10d %-8s %-8d %d\n", slot, e.q.Name(), e.p.Priority, e.p.Percentage, state, e.mappings, e.slices)
	}
	return b.String()
}
