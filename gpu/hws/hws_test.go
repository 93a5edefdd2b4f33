package hws

import (
	"errors"
	"fmt"
	"sync"
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

// TestOversubscriptionFairness: eight equal queues on two slots are time-sliced; never more than
// two are mapped, and each gets a quarter of the slot time (2/8 of the elapsed time) within 35%.
func TestOversubscriptionFairness(t *testing.T) {
	s := New(Config{Slots: 2, Quantum: time.Millisecond})
	defer s.Close()
	var qs []*fakeQueue
	for i := range 8 {
		q := &fakeQueue{name: fmt.Sprint("q", i)}
		qs = append(qs, q)
		s.Add(q, Params{Priority: 7, Percentage: 100})
	}
	start := time.Now()
	for time.Since(start) < 300*time.Millisecond {
		if n := mappedCount(qs); n > 2 {
			t.Fatalf("%d queues mapped on 2 slots", n)
		}
		time.Sleep(100 * time.Microsecond)
	}
	el := time.Since(start)
	for _, q := range qs {
		s.Remove(q)
	}
	want := el * 2 / 8
	for _, q := range qs {
		if got := q.total; got < want*65/100 || got > want*135/100 {
			t.Errorf("%s mapped %v of %v, want about %v (fair share)", q.name, got, el, want)
		}
	}
	if st := s.Stats(); st.Preemptions == 0 || st.Rounds == 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestPriorities: with one slot, the higher-priority queue keeps it; the lower one runs only
// once the higher one becomes inactive (percentage 0); a new higher-priority queue preempts it.
func TestPriorities(t *testing.T) {
	s := New(Config{Slots: 1, Quantum: time.Millisecond})
	defer s.Close()
	low, high := &fakeQueue{name: "low"}, &fakeQueue{name: "high"}
	s.Add(low, Params{Priority: 2, Percentage: 100})
	s.Add(high, Params{Priority: 12, Percentage: 100})
	time.Sleep(30 * time.Millisecond)
	if !s.IsMapped(high) || s.IsMapped(low) || low.share() != 0 && low.maps > 1 {
		t.Fatalf("high mapped %v, low mapped %v (%d mappings)", s.IsMapped(high), s.IsMapped(low), low.maps)
	}
	s.Update(high, Params{Priority: 12, Percentage: 0})
	time.Sleep(5 * time.Millisecond)
	if s.IsMapped(high) || !s.IsMapped(low) {
		t.Fatalf("after percentage 0: high mapped %v, low mapped %v", s.IsMapped(high), s.IsMapped(low))
	}
	urgent := &fakeQueue{name: "urgent"}
	s.Add(urgent, Params{Priority: 15, Percentage: 100})
	if !s.IsMapped(urgent) || s.IsMapped(low) {
		t.Fatalf("a priority-15 queue did not preempt the priority-2 one")
	}
	t.Log("\n" + s.Runlist())
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
