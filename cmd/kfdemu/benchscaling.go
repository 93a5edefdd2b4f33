package main

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hostFloor is hostScaling's speed-ups; Rounds and PacedElement describe its paced loop.
type hostFloor struct {
	ALU, Fresh, Warm, Paced float64
	Rounds                  int
	PacedElement            time.Duration // one thread's time per element of the paced loop
}

// hostScaling is the floor of the interpreter's multi-thread speed-up: how much faster the host
// itself runs on `workers` threads than on one, measured in the same run, for
//   - ALU: a register-only loop (the CPUs' own scaling: SMT siblings or a busy hypervisor show
//     here);
//   - Fresh: c[i] = a[i] + b[i] over n float32s in a fresh shared-memory file (a memfd, as the
//     daemon's BOs are), the threads taking 1 KiB slices in turn as the workers take vadd's
//     work-groups (256 lanes of 4 bytes): the first touches of c's pages (a first dispatch over
//     fresh buffers) and the memory bandwidth, which no interpreter can scale past;
//   - Warm: the same once more over the same pages;
//   - Paced: the warm loop with Rounds rounds of register work per element, as many as make one
//     thread take pace per element (the interpreter's own time per element on one worker): a
//     host loop as fast as the interpreter, whose speed-up shows how much of the memory system's
//     limit is left at that pace (pace 0: not measured).
//
// Each is the median of three rounds of one thread against `workers` threads.
func hostScaling(n, workers int, pace time.Duration) (hostFloor, error) {
	if workers < 2 {
		return hostFloor{ALU: 1, Fresh: 1, Warm: 1, Paced: 1}, nil
	}
	par := func(w int, f func(id, w int)) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		for id := range w {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread() // a thread of its own, as the pool's workers
				defer runtime.UnlockOSThread()
				f(id, w)
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	var sink [8]uint64
	spin := func(iters int) func(id, w int) {
		return func(id, w int) {
			x := uint64(id) + 1
			for range iters / w {
				x = x*6364136223846793005 + 1442695040888963407
			}
			sink[id%len(sink)] = x
		}
	}
	fd, err := unix.MemfdCreate("kfdemu-bench-stream", unix.MFD_CLOEXEC)
	if err != nil {
		return hostFloor{}, err
	}
	defer unix.Close(fd)
	size := 3 * n * 4
	// stream runs c = a + b (with rounds of register work per element) on w threads over the
	// arrays of mem, taking 1 KiB slices in turn.
	stream := func(mem []byte, w, rounds int) time.Duration {
		all := unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), 3*n)
		a, b, c := all[:n], all[n:2*n], all[2*n:]
		const slice = 256
		return par(w, func(id, w int) {
			x := uint64(id) + 1
			for off := id * slice; off < n; off += w * slice {
				end := min(off+slice, n)
				for i := off; i < end; i++ {
					c[i] = a[i] + b[i]
					for range rounds {
						x = x*6364136223846793005 + 1442695040888963407
					}
				}
			}
			sink[id%len(sink)] = x
		})
	}
	// vadd: a fresh file's pages (truncated away and back), then the same pages again.
	vadd := func(w int) (fresh, warm time.Duration, err error) {
		if err := unix.Ftruncate(fd, 0); err != nil {
			return 0, 0, err
		}
		if err := unix.Ftruncate(fd, int64(size)); err != nil {
			return 0, 0, err
		}
		mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			return 0, 0, err
		}
		defer unix.Munmap(mem)
		all := unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), 2*n)
		for i := range n {
			all[i], all[n+i] = float32(i), 0.5
		}
		return stream(mem, w, 0), stream(mem, w, 0), nil
	}
	var f hostFloor
	var alus, freshes, warms, paced []float64
	for range 3 {
		t1, tw := par(1, spin(200_000_000)), par(workers, spin(200_000_000))
		alus = append(alus, float64(t1)/float64(tw))
		f1, w1, err := vadd(1)
		if err != nil {
			return hostFloor{}, fmt.Errorf("stream floor: %w", err)
		}
		fw, ww, err := vadd(workers)
		if err != nil {
			return hostFloor{}, fmt.Errorf("stream floor: %w", err)
		}
		freshes = append(freshes, float64(f1)/float64(fw))
		warms = append(warms, float64(w1)/float64(ww))
	}
	if pace > 0 {
		mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			return hostFloor{}, fmt.Errorf("paced floor: %w", err)
		}
		defer unix.Munmap(mem)
		stream(mem, 1, 0) // touch the pages once
		// Rounds: doubled until one thread is at least as slow as pace per element (at most
		// 1024), then interpolated between the last two.
		per := func(rounds int) time.Duration { return stream(mem, 1, rounds) / time.Duration(n) }
		lo, tlo := 0, per(0)
		hi, thi := lo, tlo
		for thi < pace && hi < 1024 {
			lo, tlo = hi, thi
			hi = max(1, 2*hi)
			thi = per(hi)
		}
		f.Rounds = hi
		if thi > tlo && thi > pace {
			f.Rounds = lo + int(float64(hi-lo)*float64(pace-tlo)/float64(thi-tlo)+0.5)
		}
		for range 3 {
			t1, tw := stream(mem, 1, f.Rounds), stream(mem, workers, f.Rounds)
			paced = append(paced, float64(t1)/float64(tw))
			f.PacedElement = t1 / time.Duration(n)
		}
	}
	f.ALU, f.Fresh, f.Warm, f.Paced = median(alus), median(freshes), median(warms), median(paced)
	return f, nil
}

// median is the middle value of v (the upper one of an even count; 0 when empty). It sorts v.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}
