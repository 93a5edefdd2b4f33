// Package spin is the yield of busy-wait loops that wait for another thread: the doorbell
// scanner's fast phase (doorbell) and a client waiting on a signal or for a free queue slot before
// it blocks (runtime/hsa).
//
// runtime.Gosched yields only to goroutines queued on the caller's P: when there are none it
// returns at once and the thread keeps its CPU. The daemon runs more Ps than CPUs (cmd/kfdemu
// reserveSyscallProcs) and clients spin beside it, so runnable threads often outnumber CPUs: a
// thread the kernel wakes (a work-group's, a FUSE reader answering an ioctl, the client) then
// waits until a spinner's time slice ends. Yield also calls sched_yield(2), which lets the kernel
// run such a thread on this CPU first (kernel/sched yield_task_fair pushes the caller's deadline
// out). Measured on 2 CPUs with cmd/kfdemu BenchmarkKernelRoundTrip (one-wave dispatches back to
// back, the client in the daemon's process), three runs alternating the builds: round trip p99
// 448-467 µs with Gosched alone, 122-139 µs with Yield in the scanner and the client (p50 9.1-10.5
// against 10.5-12.2 µs).
//
// A queue polling its own doorbell (gpu/hqd Runner.spin) keeps runtime.Gosched: it is the path
// that sees a client's store, and a client spinning without a yield of its own (ROCr's active
// wait) takes the CPU it gives up for as long as its own spin runs. With Yield there too, a
// barrier packet whose completion signal faults took 18 µs at p50 instead of 4 µs (kfdemu bench's
// one-packet-at-a-time fault figure, whose client yields every 4096 looks).
//
// Yield is for loops that have found no work: the doorbell -> packet -> signal path itself makes
// no system call.
package spin

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// Yield lets other goroutines of this P run, then other threads of this CPU.
func Yield() {
	runtime.Gosched()
	// sched_yield never blocks nor fails: no need to tell the Go scheduler (RawSyscall).
	unix.RawSyscallNoError(unix.SYS_SCHED_YIELD, 0, 0, 0)
}
