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
