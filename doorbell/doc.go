// Package doorbell models the doorbell aperture of an amdgpu device as amdkfd uses it
// (drivers/gpu/drm/amd/amdkfd/kfd_doorbell.c, kfd_device_queue_manager.c) and detects the stores
// clients make to it.
//
// # Aperture and slices
//
// On GFX9 and later each doorbell is 8 bytes and every process gets a slice of
// KFD_MAX_NUM_OF_QUEUES_PER_PROCESS (1024) doorbells, 8 KiB (kfd_doorbell_process_slice). Inside
// a slice, SOC15 reserves the doorbell ids the BIF routes to SDMA, IH and VCN
// (init_doorbell_bitmap: ids first_non_cp..last_non_cp and the same ids + 512, the "mirror"
// half): compute queues take the lowest free id outside them (allocate_doorbell), SDMA queues get
// the fixed id sdma_engine[engine] + (queue&1)*512 + queue>>1. Slice tracks those ids; Layout
// holds the per-family values (amdgpu_doorbell.h, vega10_reg_init.c / vega20_reg_init.c).
// The slice's memory itself is a page range of the process's dev/kfd memfd (package kfd), which
// the client maps through FUSE passthrough.
//
// # Write detection
//
// A client rings a doorbell with a plain store into shared memory: there is no syscall and
// nothing a FUSE server sees. Watcher therefore polls the doorbell words of live queues,
// adaptively: after a change it spins for SpinFor, yielding to other threads as well (internal/spin),
// then sleeps with an exponential
// backoff from MinPoll up to MaxPoll, reached after IdleAfter without a store, and DeepPoll after
// DeepAfter (defaults: 10 ms after 100 ms, 50 ms after 2 s). The sleeps are internal/hrtimer's:
// a time.Timer under a millisecond sleeps at least a millisecond while the daemon is otherwise
// idle (the netpoller's epoll_wait counts in milliseconds), which made every step of the backoff
// below 1 ms a 1.05-1.2 ms sleep. With no doorbell registered it does not wake at all. Poke (called by kfd on every ioctl of a process with queues, so in particular when a client
// blocks in WAIT_EVENTS) scans at once and restarts the backoff from MinPoll, without the spin (an
// ioctl is not a store; spinning after each kept a CPU busy while a client made ioctls back to back).
//
// Polling stops while the watcher is armed: after ArmAfter (100 ms) without a store it calls the
// arm function its owner set (SetArm). kfd's arm function (kfd/doorbellarm.go) takes the doorbell
// pages out of the clients' page tables and asks package mmnotify for a notice at the next page
// fault there: the next store faults, the notice calls Touched, and the watcher kicks every
// doorbell once and re-enters its fast phase, where it sees the store (the notice precedes it).
// While armed it polls only every ArmedPoll (1 s), a safety net for stores no fault announces
// (a mapping made after arming; writes through /proc/PID/mem). So an idle daemon does no work,
// and the first store after any idle time is seen within microseconds. Without the notices (not
// root, no eBPF, another architecture) the deep-idle poll bounds it at 50 ms.
//
// A queue that is running looks at its own doorbell (Bell.Poll), as the MEC polls the doorbell of
// an active queue: while it scans its ring and for a short spin after the ring drains (gpu/hqd
// DoorbellSpin) it holds the bell (Bell.Hold), and the scanner skips it: no kick, no spin after the
// store, no arming while a queue holds one. A client that submits again right after its completion
// signal (a barrier round trip) is then served by the queue alone, without the scan-and-kick
// handoff between goroutines. A blocked queue (a barrier waiting on a signal) gives its bell back.
// Giving a bell back pokes the scanner, whose backoff climbed while the bell was held: a store
// made just after the queue's spin ended is seen within about the time since, not after the
// backoff's ceiling.
//
// A changed value calls the doorbell's kick function, which must not block (the packet
// processors' Kick is a non-blocking channel send). kfdemu bench and BenchmarkIdle measure the
// idle cost; the README quotes it.
//
// # Concurrency and lock order
//
// Bell.last (the value taken) and Bell.held are atomics shared by the scanner and the bell's
// queue; Poll takes a store with a compare-and-swap, so a store is the scanner's or the queue's,
// never both. Watcher.mu guards registration only; the scanner reads an atomic copy-on-write snapshot of the
// registered doorbells and holds Watcher.scanMu while it reads their words, so Bell.Close (which
// takes scanMu after unregistering) guarantees that the word is no longer read when it returns
// and the memory behind it may be unmapped. Lock order: Watcher.mu, then Watcher.scanMu. Slice
// has its own mutex and is never held with the Watcher's. The arm function runs on the scanner
// goroutine with no Watcher lock held; Touched and Poke take none.
package doorbell
