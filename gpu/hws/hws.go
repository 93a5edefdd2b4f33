// Package hws models the hardware scheduler of an AMD GPU's compute engine as amdkfd drives it
// (kfd_device_queue_manager.c with HWS: the runlist of kfd_packet_manager.c, the CP firmware that
// maps runlist entries onto hardware queue descriptors): a GPU has a fixed number of hardware queue
// slots (HQDs); every active user queue of every process is in the runlist; when more queues with
// work than slots are active, the scheduler time-slices them, preempting mapped queues and mapping
// waiting ones each quantum. Queues of every engine are in the runlist: AQL and PM4 compute queues
// share the HQD slots, an SDMA queue has its own (Params.Dedicated). Slices are shared by stride
// scheduling: a queue's share grows with its priority (0-15: priority p gets p+1 shares), so
// higher priorities run more often and no queue starves. A queue with percentage 0, a ring unset
// by UPDATE_QUEUE, or evicted is inactive and never mapped.
//
// # Idle queues
//
// Like the CP firmware, which only switches away from a queue that has work pending (its write
// pointer ahead of its read pointer) when another one needs the slot, the scheduler time-slices
// only queues with work. A Queue that implements Worker reports it (gpu/hqd's Runner.HasWork: a
// doorbell not taken, a packet executing or waiting, a ring not drained); one that does not always
// has work. Oversubscription counts queues with work: idle queues are never rotated, so 64 idle
// queues on 24 slots cost nothing. An idle queue keeps its slot until a queue with work needs one
// (then idle queues are unmapped first), and free slots take idle unmapped queues, as the firmware
// maps the whole runlist when it fits. An idle queue is not charged time slices; when it gets
// work again its virtual time is raised to that of the queues with work (stride scheduling's rule
// for a client that rejoins), so sleeping earns no credit.
//
// An unmapped queue that gets work is mapped at once when a slot is free or held by an idle queue,
// else at its turn of the time slices: its doorbell reaches the scheduler through Handle.Doorbell,
// which the owner calls after kicking the queue. For a mapped queue, the hot path, it is one atomic
// load of the entry's own flag; for an unmapped one, a flag swap and a non-blocking send on the
// scheduler's bell channel once until the next pass looks at the queue. No allocation, and no lock
// shared between queues on a mapped queue's doorbell. A queue found with work after it was
// unmapped (its doorbell raced the preemption) rings the bell itself, so work is never stranded.
//
// Preempting a queue is the Queue's business (Unmap): kfd suspends its in-flight dispatch's waves
// where they stand and resumes them when the queue is mapped again (gpu/shader's CWSR). An Unmap
// that does not finish within the preemption timeout is a hung queue: the Queue resets itself and
// the scheduler drops it from the runlist (kfd: dqm->is_hws_hang, a GPU reset; here only that
// queue is reset).
//
// # Concurrency and lock order
//
// Scheduler.mu guards the runlist; Map and Unmap of Queues are called with it released, from the
// scheduler goroutine or the caller of Add/Remove/Update (serialized by Scheduler.opMu).
// Worker.HasWork is called under Scheduler.mu: it must not block, take a lock held around a call
// into the scheduler, or call the scheduler. Lock order: opMu before mu; Handle.Doorbell takes
// neither. The scheduler goroutine sleeps unless more queues with work than slots are active (it
// then wakes once per quantum) or a bell rings.
package hws

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
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

// Worker is implemented by a Queue that can tell whether it has work (see the package doc). The
// answer must be exact once the queue is unmapped (Unmap returned).
type Worker interface {
	HasWork() bool
}

// Handle is a queue's entry in the runlist, for its doorbell.
type Handle struct {
	s *Scheduler
	e *entry
}

// Doorbell tells the scheduler that the queue was kicked: call it after kicking the queue. A
// mapped queue's doorbell costs one atomic load; an unmapped queue's wakes the scheduler (once
// until its next pass) to map it. It never blocks, allocates or takes a lock shared by queues
// (the channel send happens only for an unmapped queue, once per pass).
func (h *Handle) Doorbell() {
	e := h.e
	if e.resident.Load() || e.rang.Swap(true) {
		return
	}
	h.s.bells.Add(1)
	h.s.ring()
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
	slices   uint64 // time slices charged (rotations it was mapped across with work)
	hung     bool
	worker   Worker // nil: the queue always has work
	busy     bool   // it had work at the last pass
	idle     bool   // it had no work (or was inactive) at the last pass
	h        Handle
	// resident is mapped as the doorbell sees it: set before Map, cleared before Unmap; rang is
	// set by the first doorbell while not resident and cleared when a pass looks at the queue.
	resident atomic.Bool
	rang     atomic.Bool
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
	bell    chan struct{} // an unmapped queue got a doorbell; never closed
	stop    chan struct{}
	done    chan struct{}
	stats   Stats
	over    bool // more queues with work than slots at the last pass: time-slicing
	bells   atomic.Uint64
}

// Stats are the scheduler's counters.
type Stats struct {
	Rounds       uint64 // runlist passes that changed the mapping
	Preemptions  uint64 // successful unmaps
	Hangs        uint64 // unmaps that timed out
	MaxUnmapTime time.Duration
	Bells        uint64 // doorbells of unmapped queues that woke the scheduler
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
	s := &Scheduler{cfg: cfg, wake: make(chan struct{}, 1), bell: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

// Slots is the number of hardware slots.
func (s *Scheduler) Slots() int { return s.cfg.Slots }

// Add puts a queue in the runlist and maps it if a slot is free (or it has work and its priority
// wins one). The handle is for the queue's doorbell; a doorbell that rang before the owner stored
// it is caught by calling Doorbell once after storing it.
func (s *Scheduler) Add(q Queue, p Params) (*Handle, error) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil, fmt.Errorf("hws: scheduler stopped")
	}
	e := &entry{q: q, p: p, slot: -1, pass: s.minPass()}
	e.worker, _ = q.(Worker)
	e.h = Handle{s: s, e: e}
	s.queues = append(s.queues, e)
	s.mu.Unlock()
	s.reschedule(false)
	return &e.h, nil
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
	e.resident.Store(false)
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

// minPass is where a new queue starts: no ahead of the queues with work, no behind.
func (s *Scheduler) minPass() uint64 {
	var m uint64
	first := true
	for _, e := range s.queues {
		if e.runnable() && !e.idle && (first || e.pass < m) {
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

// run time-slices while more queues with work than slots are active, and otherwise sleeps until
// a runlist change or a bell. The slice's deadline survives wake-ups: doorbells and runlist
// changes do not postpone the rotation.
func (s *Scheduler) run() {
	defer close(s.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var deadline time.Time
	for {
		s.mu.Lock()
		over := s.over
		s.mu.Unlock()
		if !over {
			deadline = time.Time{}
			select {
			case <-s.stop:
				return
			case <-s.wake:
			case <-s.bell:
				s.reschedule(false) // map the queue that got work
			}
			continue
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(s.cfg.Quantum)
		}
		timer.Reset(time.Until(deadline))
		select {
		case <-s.stop:
			timer.Stop()
			return
		case <-s.wake:
			timer.Stop()
		case <-s.bell:
			timer.Stop() // time-slicing: the queue that got work waits for its turn
		case <-timer.C:
			deadline = time.Time{}
			s.reschedule(true)
		}
	}
}

// ring wakes the scheduler goroutine for a pass (non-blocking).
func (s *Scheduler) ring() {
	select {
	case s.bell <- struct{}{}:
	default:
	}
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
	s.findWork()
	if rotate {
		s.round++
		for _, e := range s.queues {
			if e.mapped && e.busy && !e.p.Dedicated {
				e.pass += stride(e.p) // charge the slice that ends
				e.slices++
			}
		}
	}
	var cands, idle []*entry
	want := map[*entry]bool{}
	for _, e := range s.queues {
		switch {
		case !e.runnable():
		case e.p.Dedicated:
			want[e] = true // its own slot
		case e.busy:
			cands = append(cands, e)
		default:
			idle = append(idle, e)
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
	s.over = len(cands) > s.cfg.Slots
	// The slots left go to idle queues: those mapped keep theirs first (an idle queue is unmapped
	// only for a queue with work), then unmapped ones take free slots.
	sort.SliceStable(idle, func(i, j int) bool { return idle[i].mapped && !idle[j].mapped })
	for i, e := range idle {
		if i < s.cfg.Slots-min(len(cands), s.cfg.Slots) {
			want[e] = true
		}
	}
	var out, in []*entry
	for _, e := range s.queues {
		switch {
		case e.mapped && !want[e]:
			out = append(out, e)
			e.mapped = false
			e.resident.Store(false)
		case !e.mapped && want[e]:
			in = append(in, e)
			e.mapped = true
			e.resident.Store(true)
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
	over := s.over
	s.mu.Unlock()
	stranded := false
	for _, e := range out {
		s.unmap(e)
		// Unmapped as idle, but a doorbell may have come before its resident flag was cleared.
		stranded = stranded || (!over && e.worker != nil && e.worker.HasWork())
	}
	for _, e := range in {
		if err := e.q.Map(); err != nil {
			s.mu.Lock()
			e.mapped, e.slot, e.hung = false, -1, true // an errored queue leaves the runlist
			e.resident.Store(false)
			s.mu.Unlock()
		}
	}
	if stranded {
		s.ring()
	}
	select {
	case s.wake <- struct{}{}: // the run loop re-evaluates oversubscription
	default:
	}
}

// findWork asks every active queue whether it has work (under mu). A queue that gets work after
// a pass without any has its virtual time raised to the smallest of the queues that kept working:
// idle time earns no shares.
func (s *Scheduler) findWork() {
	var floor uint64
	haveFloor := false
	for _, e := range s.queues {
		e.busy = false
		if !e.runnable() || e.p.Dedicated {
			e.idle = true
			continue
		}
		e.rang.Store(false) // this pass looks at the queue: its next doorbell rings again
		e.busy = e.worker == nil || e.worker.HasWork()
		if e.busy && !e.idle && (!haveFloor || e.pass < floor) {
			floor, haveFloor = e.pass, true
		}
	}
	for _, e := range s.queues {
		if e.busy && e.idle && haveFloor && e.pass < floor {
			e.pass = floor
		}
		if !e.p.Dedicated && e.runnable() {
			e.idle = !e.busy
		}
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
	st := s.stats
	st.Bells = s.bells.Load()
	return st
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
	fmt.Fprintf(&b, "%-5s %-28s %-8s %-10s %-8s %-8s %-8s %s\n", "hqd", "queue", "priority", "percentage", "mapped", "mappings", "slices", "work")
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
		fmt.Fprintf(&b, "%-5s %-28s %-8d %-10d %-8s %-8d %-8d %v\n", slot, e.q.Name(), e.p.Priority, e.p.Percentage, state, e.mappings, e.slices, e.busy)
	}
	return b.String()
}
