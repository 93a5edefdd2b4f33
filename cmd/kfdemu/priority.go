package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// defaultNice is the nice value serve gives the daemon's threads. The daemon stands for hardware:
// the emulated GPU's compute units and engines run beside the CPUs on a real machine, but here
// they share the host's cores with the clients. A client waiting for a kernel often spins on its
// completion signal (ROCr 5.2.3 lets only a signal's first waiter sleep; HIP's default direct
// dispatch has two waiters), and with equal weights the spin takes a fair share of a core from the
// work-groups it waits for. At nice -5 the daemon's threads weigh about three times a nice-0
// client's (the kernel's sched_prio_to_weight: 3121 against 1024), so a contended core goes mostly
// to the emulated GPU; an idle daemon uses no CPU, so the weight costs clients nothing then. On
// the 2-core VM, alternating runs of one daemon reniced between 0 and -5: tests/hip rocsparse 18.1
// -> 15.7 s (14.7 s at -10), d2d_copy's spinning copy 0.38 -> 0.46-0.47 GB/s, its blocking-sync
// copy and launch_latency unchanged.
const defaultNice = -5

// setNice sets the nice value of every thread of this process to n (Linux nice values are per
// thread; a thread made later inherits its maker's). Threads made while it runs are found by
// reading /proc/self/task again until no new one appears.
func setNice(n int) error {
	if n < -20 || n > 19 {
		return fmt.Errorf("nice %d: must be in [-20, 19]", n)
	}
	done := map[int]bool{}
	for {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		more := false
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || done[tid] {
				continue
			}
			done[tid], more = true, true
			if err := unix.Setpriority(unix.PRIO_PROCESS, tid, n); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("setpriority(%d, %d): %w", tid, n, err)
			}
		}
		if !more {
			return nil
		}
	}
}

// applyNice is setNice for serve: without the privilege to raise the priority (CAP_SYS_NICE or
// RLIMIT_NICE) the daemon runs at its inherited nice value and says so.
func applyNice(n int, log *slog.Logger) {
	if n == 0 {
		return
	}
	if err := setNice(n); err != nil {
		log.Info("daemon threads keep their nice value", "want", n, "err", err)
		return
	}
	log.Debug("daemon threads reniced", "nice", n)
}
