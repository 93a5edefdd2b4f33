package hws

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeQueue records how long it was mapped.
type fakeQueue struct {
	name     string
	mu       sync.Mutex
	mapped   bool
	since    time.Time
	total    time.Duration
	maps     int
	hangs    bool
	unmapped chan struct{}
}

func (f *fakeQueue) Name() string { return f.name }
func (f *fakeQueue) Map() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mapped {
		panic("mapped twice")
	}
	f.mapped, f.since = true, time.Now()
	f.maps++
	return nil
}
func (f *fakeQueue) Unmap(timeout time.Duration) error {
	if f.hangs {
		time.Sleep(timeout)
		f.mu.Lock()
		f.mapped = false
		f.mu.Unlock()
		return errors.New("preemption timed out")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.mapped {
		panic("unmapped while not mapped")
	}
	f.mapped = false
	f.total += time.Since(f.since)
	return nil
}
func (f *fakeQueue) share() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.total
	if f.mapped {
		t += time.Since(f.since)
	}
	return t
}

func mappedCount(qs []*fakeQueue) int {
	n := 0
	for _, q := range qs {
		q.mu.Lock()
		if q.mapped {
			n++
		}
		q.mu.Unlock()
	}
	return n
}

// slicesUntil waits until qs together have been charged n time slices (the scheduler's unit:
// counting slices, not wall time, keeps the shares exact on a loaded host) and returns each
// queue's count. check runs while waiting.
func slicesUntil(t *testing.T, s *Scheduler, qs []*fakeQueue, n uint64, check func()) []uint64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := make([]uint64, len(qs))
		var sum uint64
		for i, q := range qs {
			got[i] = s.Slices(q)
			sum += got[i]
		}
		if sum >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d slices after 30 s\n%s", sum, n, s.Runlist())
		}
		check()
		time.Sleep(100 * time.Microsecond)
	}
}

// TestOversubscriptionFairness: eight equal queues on two slots are time-sliced; never more than
// two are mapped, and each gets a quarter of the slots' time slices (160 slices: 20 each, within
// two).
func TestOversubscriptionFairness(t *testing.T) {
	s := New(Config{Slots: 2, Quantum: time.Millisecond})
	defer s.Close()
	var qs []*fakeQueue
	for i := range 8 {
		q := &fakeQueue{name: fmt.Sprint("q", i)}
		qs = append(qs, q)
		s.Add(q, Params{Priority: 7, Percentage: 100})
	}
	got := slicesUntil(t, s, qs, 160, func() {
		if n := mappedCount(qs); n > 2 {
			t.Fatalf("%d queues mapped on 2 slots", n)
		}
	})
	for _, q := range qs {
		s.Remove(q)
	}
	var sum uint64
	for _, n := range got {
		sum += n
	}
	for i, n := range got {
		if want := sum / 8; n+2 < want || n > want+2 {
			t.Errorf("%s charged %d of %d slices, want about %d (fair share)", qs[i].name, n, sum, want)
		}
		if qs[i].total == 0 {
			t.Errorf("%s never mapped", qs[i].name)
		}
	}
	if st := s.Stats(); st.Preemptions == 0 || st.Rounds == 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestPriorities: on one slot, a priority-12 queue gets 13/4 the time slices of a priority-3
// queue (stride scheduling: p+1 shares), the lower one still runs (no starvation), and an inactive
// queue (percentage 0) never runs.
func TestPriorities(t *testing.T) {
	s := New(Config{Slots: 1, Quantum: 500 * time.Microsecond})
	defer s.Close()
	low, high, off := &fakeQueue{name: "low"}, &fakeQueue{name: "high"}, &fakeQueue{name: "off"}
	s.Add(low, Params{Priority: 3, Percentage: 100})
	s.Add(high, Params{Priority: 12, Percentage: 100})
	s.Add(off, Params{Priority: 15, Percentage: 0})
	got := slicesUntil(t, s, []*fakeQueue{low, high, off}, 170, func() {})
	t.Log("\n" + s.Runlist())
	for _, q := range []*fakeQueue{low, high, off} {
		s.Remove(q)
	}
	// 170 slices: 130 and 40, each exact to a slice or two.
	nl, nh, no := got[0], got[1], got[2]
	ratio := float64(nh) / float64(max(nl, 1))
	if nl < 36 || ratio < 13.0/4*0.9 || ratio > 13.0/4*1.1 || no != 0 || off.maps != 0 {
		t.Errorf("high %d slices, low %d (ratio %.2f, want %.2f), inactive charged %d, mapped %d times",
			nh, nl, ratio, 13.0/4, no, off.maps)
	}
}

// TestHungQueue: a queue that does not preempt in time is reported and leaves the runlist; the
// others go on.
func TestHungQueue(t *testing.T) {
	hung := make(chan Queue, 1)
	s := New(Config{Slots: 1, Quantum: time.Millisecond, PreemptionTimeout: 20 * time.Millisecond, OnHang: func(q Queue) { hung <- q }})
	defer s.Close()
	bad, good := &fakeQueue{name: "bad", hangs: true}, &fakeQueue{name: "good"}
	s.Add(bad, Params{Priority: 5, Percentage: 100})
	s.Add(good, Params{Priority: 5, Percentage: 100})
	select {
	case q := <-hung:
		if q != bad {
			t.Fatalf("hang reported for %s", q.Name())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no hang reported")
	}
	time.Sleep(10 * time.Millisecond)
	if !s.IsMapped(good) || s.IsMapped(bad) {
		t.Errorf("after the hang: good mapped %v, bad mapped %v", s.IsMapped(good), s.IsMapped(bad))
	}
	if st := s.Stats(); st.Hangs != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestIdleSchedulerSleeps: without oversubscription the scheduler does no passes.
func TestIdleSchedulerSleeps(t *testing.T) {
	s := New(Config{Slots: 4, Quantum: time.Millisecond})
	defer s.Close()
	for i := range 4 {
		s.Add(&fakeQueue{name: fmt.Sprint(i)}, Params{Percentage: 100})
	}
	r := s.Stats().Rounds
	time.Sleep(50 * time.Millisecond)
	if got := s.Stats().Rounds; got != r {
		t.Errorf("%d scheduling passes while not oversubscribed", got-r)
	}
}

// TestDedicatedQueues: queues with their own slot (SDMA) are mapped whenever runnable, take no
// HQD, are not time-sliced, and still follow eviction, percentage and an unset ring.
func TestDedicatedQueues(t *testing.T) {
	s := New(Config{Slots: 1, Quantum: time.Millisecond})
	defer s.Close()
	c := &fakeQueue{name: "compute"}
	d1, d2 := &fakeQueue{name: "sdma1"}, &fakeQueue{name: "sdma2"}
	s.Add(c, Params{Percentage: 100})
	s.Add(d1, Params{Percentage: 100, Dedicated: true})
	s.Add(d2, Params{Percentage: 100, Dedicated: true})
	if !s.IsMapped(c) || !s.IsMapped(d1) || !s.IsMapped(d2) {
		t.Fatalf("one HQD, one compute queue and two SDMA queues: all mapped?\n%s", s.Runlist())
	}
	if hqds := s.HQDs(); hqds != "hqd 0: compute\n" {
		t.Errorf("HQDs:\n%s", hqds)
	}
	time.Sleep(10 * time.Millisecond) // ten quanta: not oversubscribed, nothing moves
	if st := s.Stats(); st.Preemptions != 0 || d1.maps != 1 {
		t.Errorf("dedicated queues were time-sliced: %+v, maps %d", st, d1.maps)
	}
	for _, p := range []Params{{Percentage: 100, Dedicated: true, Evicted: true}, {Percentage: 0, Dedicated: true},
		{Percentage: 100, Dedicated: true, RingUnset: true}} {
		s.Update(d1, p)
		if s.IsMapped(d1) {
			t.Errorf("%+v: still mapped", p)
		}
		s.Update(d1, Params{Percentage: 100, Dedicated: true})
		if !s.IsMapped(d1) {
			t.Errorf("%+v then active: not mapped", p)
		}
	}
	if err := s.Remove(d2); err != nil || s.IsMapped(d2) {
		t.Errorf("remove: %v", err)
	}
}

// workQueue is a fakeQueue that reports whether it has work (Worker).
type workQueue struct {
	fakeQueue
	work atomic.Bool
}

func (w *workQueue) HasWork() bool { return w.work.Load() }

func newWorkQueues(s *Scheduler, n int, p Params) ([]*workQueue, []*Handle) {
	var qs []*workQueue
	var hs []*Handle
	for i := range n {
		q := &workQueue{fakeQueue: fakeQueue{name: fmt.Sprint("w", i)}}
		h, err := s.Add(q, p)
		if err != nil {
			panic(err)
		}
		qs, hs = append(qs, q), append(hs, h)
	}
	return qs, hs
}

func mappedWork(qs []*workQueue) int {
	n := 0
	for _, q := range qs {
		q.mu.Lock()
		if q.mapped {
			n++
		}
		q.mu.Unlock()
	}
	return n
}

// TestIdleQueuesNotRotated: sixteen idle queues on four slots fill the slots and are never
// time-sliced: no pass, no preemption, no slice charged, and the slots keep their queues.
func TestIdleQueuesNotRotated(t *testing.T) {
	s := New(Config{Slots: 4, Quantum: 500 * time.Microsecond})
	defer s.Close()
	qs, _ := newWorkQueues(s, 16, Params{Priority: 7, Percentage: 100})
	before, hqds := s.Stats(), s.HQDs()
	time.Sleep(50 * time.Millisecond) // a hundred quanta
	after := s.Stats()
	if after.Rounds != before.Rounds || after.Preemptions != 0 || s.HQDs() != hqds {
		t.Errorf("idle queues were rotated: %+v -> %+v\n%s", before, after, s.Runlist())
	}
	if n := mappedWork(qs); n != 4 {
		t.Errorf("%d idle queues mapped on 4 free slots", n)
	}
	for _, q := range qs {
		if n := s.Slices(q); n != 0 {
			t.Errorf("%s: idle, charged %d slices", q.name, n)
		}
	}
}

// TestIdleQueueGetsWork: an unmapped idle queue whose doorbell rings is mapped promptly (an idle
// mapped queue gives up its slot; no time slice is waited for), and once all are idle again
// nothing moves.
func TestIdleQueueGetsWork(t *testing.T) {
	s := New(Config{Slots: 2, Quantum: time.Hour}) // a rotation would never come in time
	defer s.Close()
	qs, hs := newWorkQueues(s, 8, Params{Priority: 7, Percentage: 100})
	var lat []time.Duration
	for i := 2; i < 8; i++ { // w0 and w1 hold the slots
		if s.IsMapped(qs[i]) {
			t.Fatalf("%s mapped\n%s", qs[i].name, s.Runlist())
		}
		start := time.Now()
		qs[i].work.Store(true)
		hs[i].Doorbell()
		for !s.IsMapped(qs[i]) {
			if time.Since(start) > 5*time.Second {
				t.Fatalf("%s got work and was not mapped in 5 s\n%s", qs[i].name, s.Runlist())
			}
			time.Sleep(20 * time.Microsecond)
		}
		lat = append(lat, time.Since(start))
		qs[i].work.Store(false) // done: it stays mapped until a queue with work needs its slot
		// IsMapped is the runlist's view: the queues' Map and Unmap callbacks run just after it,
		// so the count may lag for a moment, but never exceeds the slots.
		for n := mappedWork(qs); n != 2; n = mappedWork(qs) {
			if n > 2 || time.Since(start) > 5*time.Second {
				t.Fatalf("%d mapped on 2 slots", n)
			}
			time.Sleep(20 * time.Microsecond)
		}
	}
	t.Logf("doorbell to mapped: %v", lat)
	for _, l := range lat {
		if l > 100*time.Millisecond {
			t.Errorf("doorbell to mapped took %v (bound 100 ms)", l)
		}
	}
	if st := s.Stats(); st.Bells != 6 {
		t.Errorf("%d bells for six doorbells of unmapped queues", st.Bells)
	}
	for i := range qs { // a mapped queue's doorbell does not wake the scheduler
		if s.IsMapped(qs[i]) {
			hs[i].Doorbell()
		}
	}
	time.Sleep(5 * time.Millisecond)
	if st := s.Stats(); st.Bells != 6 {
		t.Errorf("%d bells: doorbells of mapped queues woke the scheduler", st.Bells)
	}
}

// TestBusyAmongIdleShareFairly: three queues with work among thirteen idle ones on two slots
// share the slots evenly; the idle queues are charged nothing and are unmapped for them.
func TestBusyAmongIdleShareFairly(t *testing.T) {
	s := New(Config{Slots: 2, Quantum: 500 * time.Microsecond})
	defer s.Close()
	qs, hs := newWorkQueues(s, 16, Params{Priority: 7, Percentage: 100})
	busy := []*workQueue{qs[3], qs[8], qs[13]}
	for i, q := range qs {
		if q == qs[3] || q == qs[8] || q == qs[13] {
			q.work.Store(true)
			hs[i].Doorbell()
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	var got [3]uint64
	for {
		var sum uint64
		for i, q := range busy {
			got[i] = s.Slices(q)
			sum += got[i]
		}
		if sum >= 150 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v slices after 30 s\n%s", got, s.Runlist())
		}
		if n := mappedWork(qs); n > 2 {
			t.Fatalf("%d mapped on 2 slots", n)
		}
		time.Sleep(100 * time.Microsecond)
	}
	var sum uint64
	for _, n := range got {
		sum += n
	}
	for i, n := range got {
		if want := sum / 3; n+2 < want || n > want+2 {
			t.Errorf("%s charged %d of %d slices, want about %d", busy[i].name, n, sum, want)
		}
	}
	for _, q := range qs {
		if q.work.Load() {
			continue
		}
		if n := s.Slices(q); n != 0 {
			t.Errorf("idle %s charged %d slices", q.name, n)
		}
		if s.IsMapped(q) {
			t.Errorf("idle %s holds a slot while three queues with work share two", q.name)
		}
	}
}

// TestRejoinEarnsNoCredit: a queue idle while two others shared the slot gets only its share
// when it gets work (its virtual time is raised to theirs), not the slot until it catches up.
func TestRejoinEarnsNoCredit(t *testing.T) {
	s := New(Config{Slots: 1, Quantum: 500 * time.Microsecond})
	defer s.Close()
	qs, hs := newWorkQueues(s, 3, Params{Priority: 7, Percentage: 100})
	qs[0].work.Store(true)
	qs[1].work.Store(true)
	hs[0].Doorbell()
	hs[1].Doorbell()
	for s.Slices(qs[0])+s.Slices(qs[1]) < 100 {
		time.Sleep(100 * time.Microsecond)
	}
	a0, b0 := s.Slices(qs[0]), s.Slices(qs[1])
	qs[2].work.Store(true)
	hs[2].Doorbell()
	for s.Slices(qs[2]) < 30 {
		time.Sleep(100 * time.Microsecond)
	}
	a, b, c := s.Slices(qs[0])-a0, s.Slices(qs[1])-b0, s.Slices(qs[2])
	t.Logf("after the rejoin: %d %d %d slices", a, b, c)
	if a+3 < c || b+3 < c {
		t.Errorf("the rejoining queue took %d slices while the others got %d and %d", c, a, b)
	}
}

// TestDoorbellAllocs: a doorbell, of a mapped or an unmapped queue, does not allocate.
func TestDoorbellAllocs(t *testing.T) {
	s := New(Config{Slots: 1, Quantum: time.Hour})
	defer s.Close()
	_, hs := newWorkQueues(s, 2, Params{Percentage: 100})
	for i, h := range hs {
		if n := testing.AllocsPerRun(1000, h.Doorbell); n != 0 {
			t.Errorf("queue %d (mapped %v): Doorbell allocates %v", i, i == 0, n)
		}
	}
}
