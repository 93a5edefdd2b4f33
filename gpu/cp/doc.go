// Package cp models the AQL packet processor of one hardware queue of an AMD GPU (the CP's HQD
// running in AQL mode): it consumes the user-mode ring a client fills with AQL packets, following the
// HSA rules in shared/reference/hsa-requirements.md (rule IDs cited at each step) and the AMD
// conventions ROCr relies on (amd_queue_t read/write dispatch ids, amd_signal_t completion signals
// with event mailboxes, hsa_amd_barrier_value_packet_t).
//
// The package does not know kfd. A Queue reaches client memory only through the Memory interface
// (the queue's GPU virtual address space: kfd translates through the process's GPUVM, so a packet
// processor never touches another process's memory, PSA-2.8-Q27) and reports to its owner through
// Host (kernel dispatch to the shader model, event interrupts, queue errors).
//
// # Processing
//
// Each running Queue has one goroutine (one "queue engine", PSA-2.10-06: a barrier blocked on one
// queue never blocks another); its run state, doorbell, stop and error state are gpu/hqd's Runner,
// shared with the PM4 and SDMA engines, and this package supplies the step. It sleeps until Kick (the doorbell, PSA-2.8-Q04; the doorbell value itself is only
// a hint, PSA-2.8-Q21/Q22) and then scans from its read index:
//
//  1. If read index >= write index (amd_queue_t.write_dispatch_id, loaded atomically) the queue is
//     empty (PSA-2.8-I05) and the engine sleeps again.
//  2. The first 32 bits of the slot at base + (index % size) * 64 (PSA-2.8-I02) are loaded with one
//     32-bit atomic load (PSA-2.8-Q20), which is an acquire (PSA-2.8-Q02). An INVALID format blocks
//     the queue (PSA-2.8-Q19, Q23): the engine sleeps until the next Kick re-scans; there is no spin.
//  3. The header is validated: reserved format values, header bits 15:13 set, or fence scope 3 are a
//     malformed packet (reference §3.1, §3.8); AGENT_DISPATCH is not supported by a GPU queue
//     (features = KERNEL_DISPATCH, reference §3.7); a VENDOR_SPECIFIC packet must be the AMD
//     BARRIER_VALUE packet. Then the remaining 60 bytes are copied (PSA-2.8-Q03). Where the ring is
//     client memory (Config.ClientMemory: each access a system call), a packet its doorbell
//     announced (a doorbell value at or past the read index, stored by ROCr after the header) is
//     read whole in one access with the amd_queue_t fields the launch needs: every byte of it was
//     written before the doorbell value that was seen.
//  4. The packet runs: a kernel dispatch is validated (dimensions 1..3, non-zero work-group and grid
//     sizes in the used dimensions, kernel_object != 0) and handed to Host.Dispatch; barrier-AND/OR
//     (PSA §2.9.8/§2.9.9) and barrier-value wait for their condition.
//  5. Completion ([PSA] §2.9.2): acquire fence (barriers only), release fence, then the slot is
//     released: format set to INVALID with a release store and only then the read index advanced
//     (PSA-2.8-Q25; the slot is released after execution, which Q24 allows, so a kernel's
//     dispatch_ptr may point at its ring slot while it runs and a malformed or failing packet stays in
//     the ring for inspection). Last, the completion signal (amd_signal_t.value at handle+8) is
//     decremented by one with a 64-bit atomic; if its event_mailbox_ptr is non-zero, event_id is
//     stored there (64-bit store) and Host.RaiseEvent is called. In client memory the release,
//     the profiling timestamps and the decrement are one read (value, mailbox, event id) and one
//     write of all of them in that order (mmu Port.AtomicAddTailAfter).
//
// Packets run one at a time per queue: Host.Dispatch returns only when the grid is complete. The
// barrier bit ("launch only when all preceding packets are complete", [PSA] Table 2-4) is therefore
// always satisfied at launch; in-order completion is one of the orders PSA-2.8-Q23 permits.
//
// Fences: the emulated agent and the host share one sequentially consistent memory (Go's sync/atomic
// operations are sequentially consistent, and Memory's Load/Store/Atomic are single-copy atomic).
// Acquire and release fences of any scope are therefore ordering points with nothing to flush: the
// atomic header load is the acquire, the atomic header/read-index stores and the atomic signal
// decrement are the releases, and Host.Dispatch must make all stores of the grid happen-before its
// return. Scope 3 (reserved) is rejected.
//
// Errors ([PSA] §2.9.3): a malformed packet, an invalid dispatch, a memory fault (any Memory error or
// a misaligned atomic), or a Host.Dispatch error puts the queue in hqd.StateError; Host.QueueError is
// called once, no further packet is launched, the failing packet is not released and its completion
// signal is not touched. Other queues are unaffected (PSA-2.9.3-04). Then the CP takes the queue
// offline for ROCr as the firmware does: every queue error has a class of gpu/aql (errors.Is: the
// sentinels here and gpu/shader's errors carry one), hsa.QueueInactiveCode maps it to the code stored
// in amd_queue_t.queue_inactive_signal, and the signal's event is raised like a completion signal's.
// The host (kfd) only logs and raises what the driver raises (memory exceptions for faults).
//
// # The amd_queue_t protocol (inactive.go)
//
// A ring whose read and write indices are amd_queue_t's read_dispatch_id and write_dispatch_id (ROCr's
// layout) has an amd_queue_t; the CP reads it at each kernel dispatch:
//
//   - Dynamic scratch (ROCr 5.2.3 AqlQueue::DynamicScratchHandler): a dispatch whose packet
//     private_segment_size needs more than COMPUTE_TMPRING_SIZE gives (WAVESIZE, 1 KiB per wave, <
//     size*64 rounded up to 1 KiB; or no WAVES) is not launched: the CP stores 1 in the inactive
//     signal, raises its event and blocks (StateBlocked, re-checked on kicks and by polling) until the
//     value is 0 again, then processes the packet from the start, re-reading the scratch fields.
//     Host.Dispatch gets them through Queue.Scratch: the V# (scratch_resource_descriptor), the base
//     (scratch_backing_memory_location, absolute on GFX9) and size, and the per-wave slot.
//   - Single-use scratch: after a dispatch with a private segment, if queue_properties has
//     USE_SCRATCH_ONCE, the CP stores 512 and blocks until the value is 0 and the property is clear
//     (ROCr released the scratch).
//   - Profiling: with ENABLE_PROFILING in queue_properties and a Config.Clock, each completion signal
//     gets start_ts (the packet's launch) and end_ts (its completion) before it is decremented.
//
// Queue.ReportInactive lets the host take a stopped queue offline with an error's code (kfd's reset of
// a queue that did not preempt in time).
//
// Barrier waits (PSA-2.10-04/05, hqd.Runner.Wait): a blocked queue re-checks its dependencies on every Kick, when any
// queue of the same Group decrements a completion signal (Group.Wake; kfd can also call it on
// SET_EVENT, which is how ROCr publishes host stores to interrupt signals), and otherwise by a
// bounded backoff poll from 20 µs doubling to Config.MaxPoll (default 1 ms); after one second
// blocked the ceiling rises to 50×MaxPoll (50 ms). A barrier-OR on NULL signals only can never
// complete and does not poll. CPU use (BenchmarkBlockedQueueCPU, 2-core Xeon VM, 8 queues): idle
// queues cost nothing (they sleep on their kick channel); blocked queues cost about 0.3-0.6% of a
// core each during their first second and are indistinguishable from the no-queue baseline (~0.8%
// of a core for the benchmark loop itself) afterwards. A signal stored by the client's CPU without
// a doorbell or event is therefore seen within 1 ms, or within 50 ms for a long-blocked barrier.
//
// # Concurrency and lock order
//
// Kick takes no lock and does not allocate: a non-blocking send on the queue's own 1-buffered
// channel (gpu/hqd). The runner's lock guards only start/stop bookkeeping and the error; it is never
// held while calling Host or Memory. Group.mu guards only membership changes (Wake reads an atomic
// snapshot). Lock order: the runner's lock before Group.mu (Start adds the queue to its Group under
// it, hqd.Engine.Starting); never the reverse. Host methods are called from the queue goroutine
// only, never under a lock of this package.
package cp
