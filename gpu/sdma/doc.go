// Package sdma models an SDMA v4 queue of a GFX9 GPU (gfx90a): the ring a client fills with SDMA
// packets after kfd's CREATE_QUEUE with KFD_IOC_QUEUE_TYPE_SDMA, SDMA_XGMI or SDMA_BY_ENG_ID,
// consumed by an RLC queue of an SDMA engine. Encodings follow
// drivers/gpu/drm/amd/amdgpu/vega10_sdma_pkt_open.h; the packets and pointer conventions are the
// ones ROCr 5.2.3's BlitSdmaV4 (amd_blit_sdma.cpp: BlitSdma<uint64_t, true, -1>) and kfdtest's
// SDMAQueue/SDMAPacket use. Like gpu/cp it does not know kfd: it reaches client memory through
// Memory and reports through Host.
//
// Pointers are 64-bit byte indices that never wrap (HwIndexMonotonic): the ring offset is the
// index modulo the ring size. The queue's run state, doorbell and stop are gpu/hqd's Runner; this
// package's step loads the write pointer, executes the packet at the read pointer and stores the
// read pointer after it. A packet not completely
// written is left until the next kick.
//
// Packets: NOP (count dwords skipped), COPY_LINEAR (and its broadcast form), WRITE_UNTILED
// (linear), FENCE (32-bit store), TRAP (Host.Interrupt with the 28-bit int_context, the event id
// kfd signals), POLL_REGMEM on memory (functions 0-6 of (value & mask) against the reference,
// waiting with hqd.Runner.Wait: StateBlocked, re-checked on every kick and on a 20 µs..1 ms backoff,
// 50 ms after a second; retry_count is not modelled: a poll waits until it holds or the queue stops), POLL_REGMEM with hdp_flush (ROCr's
// HDP flush: a no-op, memory is coherent) or with the "always" function (passes at once; ROCr
// 5.2.3 starts its SDMA ring with one on a register), ATOMIC (every TC 32/64-bit opcode, returning or not),
// CONSTANT_FILL (byte, word and dword elements), TIMESTAMP (GET and GET_GLOBAL write
// Host.Timestamp; SET is accepted and ignored), COPY_LINEAR_SUB_WINDOW (ROCr's 2-D/3-D copies:
// rectangles of 1- to 16-byte elements with pitches and slice pitches). Everything else (tiled copies, SRBM
// writes, register polls, predicated execution, indirect buffers) is a queue error with
// ErrUnsupported rather than a guess; a memory error is a *FaultError (errors.Is ErrFault).
//
// RunIB executes an indirect buffer (a command submission's IB on the render node, which amdgpu's
// SDMA ring reaches through an INDIRECT packet) with the same decoder and executor, synchronously on
// the caller's goroutine; see ib.go.
//
// Concurrency: Kick takes no lock and does not allocate (gpu/hqd). The runner's lock guards
// start/stop and the error and is never held while calling Memory or Host; everything else
// belongs to the queue goroutine.
package sdma
