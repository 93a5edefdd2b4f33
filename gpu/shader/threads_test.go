package shader

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestThreadWatchLook: a want of host threads seen at two looks starveAfter apart asks for one
// stop of the world; a look without a want forgets it; stops are kickEvery apart at least.
func TestThreadWatchLook(t *testing.T) {
	var w threadWatch
	const t0 = int64(10 * time.Second)
	sa, ke := int64(starveAfter), int64(kickEvery)
	steps := []struct {
		now  int64
		want bool
		kick bool
	}{
		{t0, false, false},
		{t0 + 1, true, false},         // first seen
		{t0 + sa, true, false},        // not yet starveAfter
		{t0 + 1 + sa, true, true},     // starved for starveAfter: stop
		{t0 + 2 + sa, true, false},    // seen anew
		{t0 + 3 + 2*sa, true, false},  // starved again, but within kickEvery of the stop
		{t0 + 4 + 2*sa, false, false}, // gone: forgotten
		{t0 + 1 + sa + ke, true, false},
		{t0 + 1 + 2*sa + ke, true, true}, // starved again, kickEvery after the stop
	}
	stops := 0
	for i, s := range steps {
		got := w.look(s.now, s.want)
		if got != s.kick {
			t.Fatalf("step %d (now %d, want %v): stop %v, expected %v", i, s.now-t0, s.want, got, s.kick)
		}
		if got {
			stops++
		}
	}
	if stops != 2 || w.last.Load() != t0+1+2*sa+ke {
		t.Fatalf("%d stops, the last at %d: want 2, the last at %d", stops, w.last.Load()-t0, 1+2*sa+ke)
	}
}

// TestThreadCountsSettle: the counts behind the watch (a work-group's goroutine wanting a host
// thread, a token held) return to zero after dispatches that end, fail in a work-group, and are
// stopped by their context mid-run with many groups waiting; else starved() would see a want
// that no goroutine has and stop the world in every later dispatch.
func TestThreadCountsSettle(t *testing.T) {
	check := func(what string) {
		t.Helper()
		if w, h := threadWant.Load(), threadHeld.Load(); w != 0 || h != 0 {
			t.Fatalf("%s: %d goroutines counted as wanting a host thread, %d tokens as held", what, w, h)
		}
	}
	for _, workers := range []int{1, 2, 4} {
		SetWorkers(workers)
		// 400 groups of 60K instructions, stopped by the context after 5 ms
		m, p := suspendSetup(t, 400)
		p.Device = NewDevice(DefaultDeviceConfig(4))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		_, err := Dispatch(ctx, m, p)
		cancel()
		var pe *PreemptedError
		if !errors.As(err, &pe) {
			t.Fatalf("%d workers: stopped dispatch: %v", workers, err)
		}
		check("a dispatch stopped by its context")
		// a fault in every group's wave: global_load_dword v1, v[2:3], off with v[2:3] = 0
		m, p = miniKernel(t, []uint32{0x7E040280, 0x7E060280, 0xDC508000, 0x017F0002, 0xBF810000})
		p.GridSize[0] = 64 * 300
		if _, err := Dispatch(context.Background(), m, p); err == nil {
			t.Fatalf("%d workers: faulting dispatch succeeded", workers)
		}
		check("a faulting dispatch")
		m, p = miniKernel(t, []uint32{0xBF810000})
		p.GridSize[0] = 64 * 5000
		if _, err := Dispatch(context.Background(), m, p); err != nil {
			t.Fatal(err)
		}
		check("a dispatch of 5000 groups")
	}
	SetWorkers(0)
}
