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

// hostScaling is the floor of the interpreter's multi-thread speed-up: how much faster the host
// itself runs on `workers` threads than on one, measured in the same run, for
//   - alu: a register-only loop (the CPUs' own scaling: SMT siblings or a busy hypervisor show
//     here), and
//   - fresh: c[i] = a[i] + b[i] over n float32s in a fresh shared-memory file (a memfd, as the
//     daemon's BOs are), the threads taking 1 KiB slices in turn as the workers take vadd's
//     work-groups (256 lanes of 4 bytes): the first touches of c's pages (kfdemu bench's single
//     vadd dispatch) and the memory bandwidth, which no interpreter can scale past;
//   - warm: the same once more over the same pages (BenchmarkInterpreter's repeated vadd).
//
// Each is the median of three rounds of one thread against `workers` threads.
func hostScaling(n, workers int) (alu, fresh, warm float64, err error) {
	if workers < 2 {
		return 1, 1, 1, nil
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
	vadd := func(w int) (fresh, warm time.Duration, err error) {
		fd, err := unix.MemfdCreate("kfdemu-bench-stream", unix.MFD_CLOEXEC)
		if err != nil {
			return 0, 0, err
		}
		defer unix.Close(fd)
		size := 3 * n * 4
		if err := unix.Ftruncate(fd, int64(size)); err != nil {
			return 0, 0, err
		}
		mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			return 0, 0, err
		}
		defer unix.Munmap(mem)
		all := unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), 3*n)
		a, b, c := all[:n], all[n:2*n], all[2*n:]
		for i := range n {
			a[i], b[i] = float32(i), 0.5
		}
		const slice = 256
		add := func(id, w int) {
			for off := id * slice; off < n; off += w * slice {
				end := min(off+slice, n)
				for i := off; i < end; i++ {
					c[i] = a[i] + b[i]
				}
			}
		}
		return par(w, add), par(w, add), nil
	}
	var alus, freshes, warms []float64
	for range 3 {
		t1, tw := par(1, spin(200_000_000)), par(workers, spin(200_000_000))
		alus = append(alus, float64(t1)/float64(tw))
		f1, w1, err := vadd(1)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("stream floor: %w", err)
		}
		fw, ww, err := vadd(workers)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("stream floor: %w", err)
		}
		freshes = append(freshes, float64(f1)/float64(fw))
		warms = append(warms, float64(w1)/float64(ww))
	}
	med := func(v []float64) float64 {
		slices.Sort(v)
		return v[len(v)/2]
	}
	return med(alus), med(freshes), med(warms), nil
}
