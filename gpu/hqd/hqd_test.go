package hqd

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestStateString(t *testing.T) {
	want := []string{"stopped", "idle", "active", "blocked", "error"}
	for i, w := range want {
		if State(i).String() != w {
			t.Errorf("State(%d) = %q", i, State(i).String())
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// ring is a toy engine: it consumes published "packets" (a counter) one per Step.
type ring struct {
	r              Runner
	published, pos atomic.Uint64
	failAt         uint64
	failed         atomic.Int32
	idles          atomic.Int32
}

func newRing(failAt uint64) *ring {
	g := &ring{failAt: failAt}
	g.r.Init(Engine{
		Step: func(stop <-chan struct{}) (bool, error) {
			p := g.pos.Load()
			if p >= g.published.Load() {
				return false, nil
			}
			if p+1 == g.failAt {
				return false, errors.New("bad packet")
			}
			g.pos.Add(1)
			return true, nil
		},
		Idle: func() error { g.idles.Add(1); return nil },
		Fail: func(error) { g.failed.Add(1) },
	})
	return g
}

func TestRunStopRestart(t *testing.T) {
	g := newRing(0)
	if g.r.State() != StateStopped || g.r.Stopping() != nil {
		t.Fatalf("new runner: %v", g.r.State())
	}
	g.published.Store(3)
	if err := g.r.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "three packets", func() bool { return g.pos.Load() == 3 && g.r.State() == StateIdle })
	if g.idles.Load() == 0 || g.r.Scans() == 0 {
		t.Errorf("idles %d scans %d", g.idles.Load(), g.r.Scans())
	}
	stopping := g.r.Stopping()
	g.r.Stop()
	g.r.Stop() // idempotent
	select {
	case <-stopping:
	default:
		t.Error("Stopping not closed by Stop")
	}
	if g.r.State() != StateStopped {
		t.Errorf("after Stop: %v", g.r.State())
	}
	g.published.Store(5) // no doorbell reaches a stopped queue
	g.r.Kick()
	time.Sleep(5 * time.Millisecond)
	if g.pos.Load() != 3 {
		t.Fatalf("a stopped queue processed packets: %d", g.pos.Load())
	}
	if err := g.r.Start(); err != nil { // Start looks at the ring once
		t.Fatal(err)
	}
	waitFor(t, "resumed", func() bool { return g.pos.Load() == 5 })
	g.r.Stop()
}

func TestErrorState(t *testing.T) {
	g := newRing(2)
	g.published.Store(4)
	g.r.Start()
	waitFor(t, "error", func() bool { return g.r.State() == StateError })
	if g.pos.Load() != 1 || g.failed.Load() != 1 || g.r.Err() == nil {
		t.Fatalf("pos %d failed %d err %v", g.pos.Load(), g.failed.Load(), g.r.Err())
	}
	if err := g.r.Start(); !errors.Is(err, ErrQueueError) {
		t.Errorf("Start in the error state: %v", err)
	}
	g.r.Fail(errors.New("second"))
	if g.failed.Load() != 1 {
		t.Error("a second error was reported")
	}
	g.r.Stop()
}

// TestWaitKickAndPoll: a wait wakes on a kick alone (polling disabled), on the poll alone, and
// ends with ErrStopped on Stop without a queue error.
func TestWaitKickAndPoll(t *testing.T) {
	var flag atomic.Bool
	var blocked atomic.Int32
	var r Runner
	waits := 0
	res := make(chan error, 4)
	r.Init(Engine{
		Step: func(stop <-chan struct{}) (bool, error) {
			if waits >= 2 {
				return false, nil
			}
			waits++
			err := r.Wait(stop, func() (bool, error) { return flag.Load(), nil })
			res <- err
			flag.Store(false)
			return err == nil, err
		},
		Blocking: func(b bool) {
			if b {
				blocked.Add(1)
			} else {
				blocked.Add(-1)
			}
		},
		Fail: func(err error) { t.Errorf("queue error: %v", err) },
	})
	r.SetMinPoll(time.Hour) // only kicks wake the first wait
	r.Start()
	waitFor(t, "blocked", func() bool { return r.State() == StateBlocked && blocked.Load() == 1 })
	flag.Store(true)
	time.Sleep(2 * time.Millisecond)
	if r.State() != StateBlocked {
		t.Fatal("woke without a kick with polling disabled")
	}
	r.Kick()
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	// The second wait: stopped.
	waitFor(t, "blocked again", func() bool { return r.State() == StateBlocked })
	r.Stop()
	if err := <-res; !errors.Is(err, ErrStopped) {
		t.Fatalf("wait ended by Stop: %v", err)
	}
	if r.Err() != nil || r.State() != StateStopped || blocked.Load() != 0 {
		t.Fatalf("err %v state %v blocked %d", r.Err(), r.State(), blocked.Load())
	}
}

func TestWaitPolls(t *testing.T) {
	var r Runner
	var flag atomic.Bool
	done := make(chan error, 1)
	r.Init(Engine{Step: func(stop <-chan struct{}) (bool, error) {
		select {
		case <-done:
			return false, nil
		default:
		}
		err := r.Wait(stop, func() (bool, error) { return flag.Load(), nil })
		done <- err
		return false, err
	}})
	r.Start()
	waitFor(t, "blocked", func() bool { return r.State() == StateBlocked })
	flag.Store(true) // no kick: the backoff poll sees it within MaxPoll
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the poll never re-checked")
	}
	r.Stop()
}

// TestKickAllocs: the doorbell path allocates nothing.
func TestKickAllocs(t *testing.T) {
	var r Runner
	r.Init(Engine{Step: func(<-chan struct{}) (bool, error) { return false, nil }})
	if n := testing.AllocsPerRun(1000, r.Kick); n != 0 {
		t.Errorf("Kick allocates %v", n)
	}
}

// TestHasWork: a queue has work from a doorbell until a scan drains its ring, while a packet
// waits, and after a stop in the middle of its ring; not when drained or in the error state.
func TestHasWork(t *testing.T) {
	var r Runner
	var published, pos atomic.Uint64
	var release atomic.Bool
	r.Init(Engine{Step: func(stop <-chan struct{}) (bool, error) {
		if pos.Load() >= published.Load() {
			return false, nil
		}
		if err := r.Wait(stop, func() (bool, error) { return release.Load(), nil }); err != nil {
			return false, err
		}
		pos.Add(1)
		return true, nil
	}})
	if r.HasWork() {
		t.Fatal("a new queue has work")
	}
	r.Kick() // a doorbell on an unmapped queue
	if !r.HasWork() {
		t.Fatal("a stopped queue with a doorbell pending has no work")
	}
	r.Start()
	waitFor(t, "drained", func() bool { return !r.HasWork() && r.State() == StateIdle })
	published.Store(1)
	r.Kick()
	waitFor(t, "blocked", func() bool { return r.State() == StateBlocked })
	if !r.HasWork() {
		t.Error("a queue blocked on a packet has no work")
	}
	r.Stop() // unmapped while its packet waits
	if !r.HasWork() {
		t.Error("a queue stopped in the middle of its ring has no work")
	}
	release.Store(true)
	r.Start()
	waitFor(t, "drained again", func() bool { return pos.Load() == 1 && !r.HasWork() })
	r.Stop()
	if r.HasWork() {
		t.Error("a drained, stopped queue has work")
	}
}

// testBell is doorbell.Bell's queue side.
type testBell struct {
	word, seen atomic.Uint64
	held       atomic.Int32
}

func (b *testBell) Poll() bool {
	old := b.seen.Load()
	v := b.word.Load()
	return v != old && b.seen.CompareAndSwap(old, v)
}

func (b *testBell) Hold(on bool) {
	if on {
		b.held.Add(1)
	} else {
		b.held.Add(-1)
	}
}

// A queue given its doorbell takes a store made after its ring drained without a kick (the MEC's
// own poll of an active queue's doorbell) while its spin lasts, holding the doorbell; after that it
// gives the doorbell back and needs the kick again.
func TestDoorbellSpin(t *testing.T) {
	for _, spin := range []time.Duration{time.Hour, time.Millisecond} {
		g := &ring{}
		g.r.Init(Engine{Step: func(<-chan struct{}) (bool, error) {
			if p := g.pos.Load(); p < g.published.Load() {
				g.pos.Add(1)
				return true, nil
			}
			return false, nil
		}, DoorbellSpin: spin})
		d := &testBell{}
		bell := &d.word
		g.r.SetDoorbell(d)
		if err := g.r.Start(); err != nil {
			t.Fatal(err)
		}
		if spin == time.Hour {
			for i := uint64(1); i <= 100; i++ {
				g.published.Store(i)
				bell.Store(i) // no Kick
				waitFor(t, "the packet taken from the doorbell alone", func() bool { return g.pos.Load() == i })
			}
			if h := d.held.Load(); h != 1 {
				t.Fatalf("spinning queue: doorbell held %d times, want 1", h)
			}
			g.r.Stop()
			if h := d.held.Load(); h != 0 {
				t.Fatalf("stopped queue: doorbell held %d times", h)
			}
			continue
		}
		// The spin ends: a store alone is no longer seen, a kick is.
		waitFor(t, "the first scan", func() bool { return g.r.Scans() > 0 })
		time.Sleep(20 * spin)
		if h := d.held.Load(); h != 0 {
			t.Fatalf("after the spin: doorbell held %d times", h)
		}
		g.published.Store(1)
		bell.Store(1)
		time.Sleep(20 * spin)
		if g.pos.Load() != 0 {
			t.Fatalf("a store seen %v after a %v spin ended, without a kick", 20*spin, spin)
		}
		g.r.Kick()
		waitFor(t, "the packet after a kick", func() bool { return g.pos.Load() == 1 })
		// Without a doorbell the queue waits for kicks only (from its next scan on).
		g.r.SetDoorbell(nil)
		time.Sleep(20 * spin)
		g.published.Store(2)
		bell.Store(2)
		time.Sleep(20 * spin)
		if g.pos.Load() != 1 {
			t.Fatal("a store seen without a doorbell and a kick")
		}
		g.r.Kick()
		waitFor(t, "the packet after a kick", func() bool { return g.pos.Load() == 2 })
		g.r.Stop()
	}
}

// A queue blocked in Wait gives its doorbell back (submissions kick the wait through the watcher)
// and takes it again when the wait ends.
func TestWaitReleasesDoorbell(t *testing.T) {
	g := &ring{}
	var open atomic.Bool
	g.r.Init(Engine{Step: func(stop <-chan struct{}) (bool, error) {
		if g.pos.Load() >= g.published.Load() {
			return false, nil
		}
		if err := g.r.Wait(stop, func() (bool, error) { return open.Load(), nil }); err != nil {
			return false, err
		}
		g.pos.Add(1)
		return true, nil
	}, DoorbellSpin: time.Hour})
	d := &testBell{}
	g.r.SetDoorbell(d)
	g.published.Store(1)
	if err := g.r.Start(); err != nil {
		t.Fatal(err)
	}
	defer g.r.Stop()
	waitFor(t, "the wait", func() bool { return g.r.State() == StateBlocked })
	if h := d.held.Load(); h != 0 {
		t.Fatalf("blocked queue: doorbell held %d times", h)
	}
	open.Store(true)
	g.r.Kick()
	waitFor(t, "the packet", func() bool { return g.pos.Load() == 1 })
	waitFor(t, "the doorbell taken again", func() bool { return d.held.Load() == 1 })
}
