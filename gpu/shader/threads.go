package shader

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Host threads for runnable work-groups.
//
// A worker token stands for a host thread, but a goroutine runs only on a P of the Go runtime, and
// a goroutine in a blocking system call keeps its P until the runtime's sysmon retakes it; sysmon,
// finding nothing to retake for a millisecond, doubles its sleep up to 10 ms and needs two looks
// at a call to retake its P (runtime/proc.go: sysmon, retake). The daemon's FUSE readers (go-fuse
// blocks in read(2) of /dev/fuse: fuse/fusefd.go) and a client waiting in WAIT_EVENTS enter such
// calls at every dispatch's start and end. So the work-groups a dispatch made runnable found no P:
// in a runtime trace of BenchmarkInterpreter's vadd on 2 workers (cmd/kfdemu), one worker ran
// while the other's goroutine stayed runnable for 1.7 to 7.3 ms at the start of each 55 ms
// dispatch, every P but the running one held by a reader in read(2) or the client's ioctl: 73 to
// 126 ms of 2.2 s with one of the 2 workers idle.
//
// A worker that sees the same want (a work-group's goroutine spawned or waiting for a token, a
// token free) at two looks starveAfter apart stops the world once (runtime.ReadMemStats): the
// stop takes every P held in a system call, and the restart gives the idle ones to the runnable
// goroutines (proc.go: stopTheWorldWithSema, startTheWorldWithSema). One stop took 83 µs (p50) and
// 116 µs (p90) on the 2-core VM with two goroutines spinning (a throwaway program timing 200
// ReadMemStats calls), but 2.5 ms at p90 with GOMAXPROCS 3 on those 2 CPUs, as the daemon runs:
// a running goroutine whose thread is off its CPU must be preempted too. At most one stop per
// kickEvery, process-wide. Workers look at each work-group they start (every threadLook-th) and in
// a long wave's periodic stop check (waveStopCheck), so the look costs a few atomic loads per 16
// groups. The stops are bounded whatever clients do: a client that keeps readers busy while its
// kernels run costs every client at most one pause per kickEvery (about 4 % of the time at the
// median cost), the price of the requests it already makes.
const (
	starveAfter = 200 * time.Microsecond
	kickEvery   = 2 * time.Millisecond
	threadLook  = 16
)

var (
	// threadWant counts goroutines of work-groups that want a host thread and do not run yet:
	// spawned and not started, or waiting in take for a token.
	threadWant atomic.Int64
	// threadHeld counts tokens held by goroutines that have run since taking them.
	threadHeld atomic.Int64
	watch      threadWatch
)

// threadWatch decides when a want of host threads has lasted long enough to stop the world.
type threadWatch struct {
	since atomic.Int64 // when the current want was first seen (0: none)
	last  atomic.Int64 // the last stop
	mu    sync.Mutex   // one stop at a time
	kicks atomic.Uint64
}

// starved reports whether a work-group's goroutine wants a host thread while a token is free, in a
// pool no larger than the Ps (a larger one, --gpu-threads above the CPUs, leaves goroutines
// without a P by design; a stop would not help them).
func starved() bool {
	return threadWant.Load() > 0 && threadHeld.Load() < int64(Workers()) && Workers() <= runtime.GOMAXPROCS(0)
}

// look is a worker's look at the pool at time now (nanoseconds, monotonic); it reports whether the
// caller should stop the world (and records the time as the last stop's).
func (t *threadWatch) look(now int64, want bool) bool {
	if !want {
		if t.since.Load() != 0 {
			t.since.Store(0)
		}
		return false
	}
	s := t.since.Load()
	if s == 0 {
		t.since.CompareAndSwap(0, now)
		return false
	}
	if now-s < int64(starveAfter) {
		return false
	}
	l := t.last.Load()
	if now-l < int64(kickEvery) || !t.last.CompareAndSwap(l, now) {
		return false
	}
	t.since.Store(0)
	return true
}

var memStats runtime.MemStats // the stop's by-product, written under watch.mu

// lookThreads is look at the pool now; when it says so, it stops the world.
func lookThreads() {
	if !watch.look(nanotime(), starved()) {
		return
	}
	if watch.mu.TryLock() { // else a stop that outlasted kickEvery is still running
		runtime.ReadMemStats(&memStats)
		watch.kicks.Add(1)
		watch.mu.Unlock()
	}
}

// ThreadKicks counts the stops of the world made for work-groups without a host thread.
func ThreadKicks() uint64 { return watch.kicks.Load() }

var clockStart = time.Now()

func nanotime() int64 { return int64(time.Since(clockStart)) }
