package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kfdemu/kfdemu/fs/nsexec"
	"github.com/kfdemu/kfdemu/runtime/kmt"
	"golang.org/x/sys/unix"
)

// Idle figures of kfdemu bench: the daemon's CPU while queues sit idle, and the latency of the
// first doorbell after a long idle (issue 20: <= 0.5 % of a CPU with 64 idle queues in 16
// processes, the first doorbell after 10 s of idle seen within 2 ms).

const (
	idleSpan          = 2 * time.Second         // CPU measurement window
	idleSettle        = 2500 * time.Millisecond // the doorbell watcher reaches its deep-idle poll 2 s after the last store
	idleProcs         = 16
	idleQueuesPerProc = 4
	idleCPUGoal       = 0.5                  // % of one CPU
	firstDoorbellGoal = 2 * time.Millisecond // p99, after firstDoorbellIdle
	firstDoorbellIdle = 10 * time.Second
)

// selfCPU is this process's user + system CPU time. The daemon runs in the bench process, which
// does nothing else while it measures.
func selfCPU() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// idleCPU sleeps settle, then returns the CPU time this process takes over idleSpan.
func idleCPU(settle time.Duration) time.Duration {
	time.Sleep(settle)
	c0 := selfCPU()
	time.Sleep(idleSpan)
	return selfCPU() - c0
}

func goalText(met bool) string {
	if met {
		return "met"
	}
	return "NOT met"
}

// benchIdle is the daemon's CPU time over 2 s with two AQL queues created and left idle (measured
// once the doorbell watcher has settled into its idle polling, 2.5 s after the last store),
// against 2 s with no client at all, which it also returns (the floor of benchIdleProcs).
func benchIdle(mnt string) (figure, time.Duration, error) {
	base := idleCPU(200 * time.Millisecond)
	a, err := newAQLClient(mnt)
	if err != nil {
		return figure{}, 0, err
	}
	defer a.Close()
	b, err := newQueueClient(a.d)
	if err != nil {
		return figure{}, 0, err
	}
	defer b.Close()
	busy := idleCPU(idleSettle)
	return figure{Name: "daemon CPU over 2 s, 2 idle AQL queues", Unit: "ms", Value: float64(busy) / 1e6,
		Floor: "daemon CPU over 2 s, no client", FloorValue: float64(base) / 1e6, Ratio: ratio(float64(busy), float64(base)),
		Note: fmt.Sprintf("%.2f%% of one CPU", 100*float64(busy)/float64(idleSpan))}, base, nil
}

// benchIdleProcs is the daemon's CPU time over 2 s while procs client processes (re-executions
// of this binary, benchclient.go) hold queuesPer idle AQL queues each, against base, the same
// span with no client.
func benchIdleProcs(mnt string, base time.Duration, procs, queuesPer int) (figure, error) {
	ps, err := startClients(mnt, procs, clientSpec{queues: queuesPer}, time.Minute)
	if err != nil {
		return figure{}, err
	}
	busy := idleCPU(idleSettle)
	if err := stopClients(ps, 10*time.Second); err != nil {
		return figure{}, err
	}
	pct := 100 * float64(busy) / float64(idleSpan)
	return figure{Name: fmt.Sprintf("daemon CPU over 2 s, %d idle AQL queues in %d processes", procs*queuesPer, procs), Unit: "ms",
		Value: float64(busy) / 1e6, Floor: "daemon CPU over 2 s, no client", FloorValue: float64(base) / 1e6,
		Ratio: ratio(float64(busy), float64(base)),
		Note: fmt.Sprintf("%.2f%% of one CPU (goal <= %.1f%%: %s); %s", pct, idleCPUGoal, goalText(pct <= idleCPUGoal),
			slotsNote(mnt, procs, queuesPer))}, nil
}

// slotsNote says how the clients' queues fall on the GPUs (client i uses GPU i mod the GPU count)
// against each GPU's hardware queue slots (num_cp_queues): a GPU with more runnable queues than
// slots is oversubscribed, but its hardware scheduler (gpu/hws), which the daemon runs, only
// time-slices queues with work: idle ones keep their slots or wait for a doorbell.
func slotsNote(mnt string, procs, queuesPer int) string {
	t, err := kmt.ReadTopology(filepath.Join(mnt, nsexec.TopologyPath))
	if err != nil || len(t.GPUs()) == 0 {
		return "GPU slots unknown"
	}
	gpus := t.GPUs()
	perGPU := make([]int, len(gpus))
	for i := range procs {
		perGPU[i%len(gpus)] += queuesPer
	}
	slots := int(gpus[0].Props.Get("num_cp_queues"))
	if perGPU[0] > slots {
		return fmt.Sprintf("%d queues on GPU 0, which has %d hardware queue slots: oversubscribed, but idle queues are not time-sliced",
			perGPU[0], slots)
	}
	return fmt.Sprintf("at most %d queues per GPU (%d GPUs, %d hardware queue slots each): not oversubscribed", perGPU[0], len(gpus), slots)
}

// firstDoorbell leaves c's queue (and every other) idle for wait, so that the doorbell watcher
// backs off to its deep-idle poll, then times one barrier round trip (doorbell store ->
// completion signal); samples times. Nothing in the process makes a kfd ioctl meanwhile (an ioctl
// would wake the watcher). Each sample is followed by a sample of the floor, idleWake after the
// same idle time: what waking one thread that slept that long costs on this machine, which any
// doorbell path after an idle pays at least once (the daemon's pays it for the eBPF ring-buffer
// reader blocked in epoll_wait). The idle wake-up of a VM's vCPUs varies by 10x between runs, so
// the figure alone says little about the daemon; the ratio does.
func firstDoorbell(c *aqlClient, wait time.Duration, samples int) (figure, error) {
	var lat, floor []time.Duration
	for range samples {
		time.Sleep(wait)
		d, err := c.barrier(5 * time.Second)
		if err != nil {
			return figure{}, err
		}
		lat = append(lat, d)
		f, err := idleWake(wait)
		if err != nil {
			return figure{}, err
		}
		floor = append(floor, f)
	}
	s, fs := slices.Clone(lat), slices.Clone(floor)
	slices.Sort(s)
	slices.Sort(fs)
	p50, worst, f50 := s[len(s)/2], s[len(s)-1], fs[len(fs)/2]
	goal := "goal (after 10 s idle) not judged"
	if wait >= firstDoorbellIdle {
		goal = fmt.Sprintf("goal p99 <= %v: %s", firstDoorbellGoal, goalText(worst <= firstDoorbellGoal))
	}
	return figure{Name: fmt.Sprintf("first doorbell after %v idle (doorbell -> signal)", wait), Unit: "ns",
		Value: float64(p50), Max: float64(worst), Floor: fmt.Sprintf("futex wake of a thread asleep %v", wait),
		FloorValue: float64(f50), Ratio: ratio(float64(p50), float64(f50)),
		Note: fmt.Sprintf("max %v of %d samples (%v), floor samples %v; %s", worst.Round(time.Microsecond), samples,
			roundAll(lat, time.Microsecond), roundAll(floor, time.Microsecond), goal)}, nil
}

// futex(2) operations (linux/futex.h: FUTEX_WAIT, FUTEX_WAKE | FUTEX_PRIVATE_FLAG); x/sys/unix
// has no names for them.
const (
	futexWaitPrivate = 0 | 128
	futexWakePrivate = 1 | 128
)

// idleWake times the wake-up of a thread that slept for wait in FUTEX_WAIT (a blocking system
// call: its own OS thread, as the daemon's ring-buffer reader in epoll_wait), woken by this one
// after its own sleep of wait: FUTEX_WAKE -> the sleeper returns to Go and stores a flag -> this
// thread sees it.
func idleWake(wait time.Duration) (time.Duration, error) {
	var word uint32
	var seen atomic.Bool
	ready := make(chan struct{})
	go func() {
		close(ready)
		for atomic.LoadUint32(&word) == 0 {
			_, _, e := unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&word)), futexWaitPrivate, 0, 0, 0, 0)
			if e != 0 && e != unix.EAGAIN && e != unix.EINTR {
				break
			}
		}
		seen.Store(true)
	}()
	<-ready
	time.Sleep(wait)
	start := time.Now()
	atomic.StoreUint32(&word, 1)
	if _, _, e := unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&word)), futexWakePrivate, 1, 0, 0, 0); e != 0 {
		return 0, fmt.Errorf("futex wake: %w", e)
	}
	for i := 0; !seen.Load(); i++ {
		if i%4096 == 4095 { // as aqlClient.submit: spin, yield now and then
			clientYield()
		}
		if time.Since(start) > 5*time.Second {
			return 0, fmt.Errorf("futex wake: the sleeper did not run within 5 s")
		}
	}
	return time.Since(start), nil
}

func roundAll(ds []time.Duration, m time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(m)
	}
	return out
}
