// Package pm4 models a PM4 compute queue of an AMD GFX9 (gfx90a) GPU: the ring a client fills
// with PM4 type-3 packets after kfd's CREATE_QUEUE with KFD_IOC_QUEUE_TYPE_COMPUTE, consumed by an
// HQD of the CP's micro engine (MEC). It follows how the kfd tests drive such a queue
// (ROCT-Thunk-Interface tests/kfdtest/src PM4Queue.cpp, BaseQueue.cpp, PM4Packet.cpp,
// Dispatch.cpp) and the kernel's encodings (amdgpu/soc15d.h PACKET3_*, amdkfd/kfd_pm4_headers_ai.h
// struct pm4_mec_release_mem, kfd_pm4_opcodes.h, kfd_mqd_manager_v9.c, and the register offsets of
// include/asic_reg/gc/gc_9_4_2_offset.h). Like gpu/cp it does not know kfd: it reaches client
// memory through Memory (the process's GPUVM) and reports through Host.
//
// # Ring pointers
//
// Pointers count dwords. The write pointer at Config.WritePtrVA is 64 bits on gfx9 and never
// wraps (kfdtest PM4Queue::SubmitPacket stores m_pendingWptr64 for FAMILY_AI and later;
// kfd_mqd_manager_v9.c load_mqd passes wptr_shift 0 for non-AQL queues). The read pointer at
// Config.ReadPtrVA is 32 bits and wraps at the ring size (PM4Queue::Rptr: "It's still 32-bit even
// on Vega10"; RptrWhenConsumed is the write pointer modulo the ring size). The CP keeps a 64-bit
// read index; New derives it from both pointers, the dwords pending being (wptr - rptr) mod size.
// The read pointer is published (a 32-bit atomic store) after each ring packet completes, so it
// stays at a packet that fails or waits. A write pointer behind the read index or more than a ring
// ahead of it is a queue error (ErrWritePointer).
//
// # Processing
//
// The queue's run state, doorbell and stop are gpu/hqd's Runner (one goroutine per running queue
// sleeps until Kick); this package supplies the step: load the write pointer (a 64-bit atomic
// load) once the packets it published are consumed, and execute packets one at a time until the
// ring is empty. Packets may wrap the
// ring end (amdgpu writes across it; kfdtest pads with one-dword NOPs instead). A packet that is
// not completely written yet (fewer dwords pending than its size) is left until the next kick.
// The fetch stack holds the ring and up to two indirect buffers (IB1, IB2); the ring packet of an
// IB retires when its IB ends. Packets:
//
//   - type 2: one-dword filler. Type 0 (register writes): ErrUnsupported. Type 1: ErrMalformed.
//   - NOP: the body is skipped unread; count 0x3FFF is a one-dword NOP (CMD_NOP_TYPE_3).
//   - WRITE_DATA: dst_sel memory (5, 1) and TC L2 (2) write the data (a 1-dword write, or a
//     2-dword write to an 8-byte aligned address, is one atomic store); WR_ONE_ADDR writes every
//     dword to the same address. dst_sel 0 writes this queue's register file. WR_CONFIRM holds
//     trivially: writes complete before the next packet.
//   - RELEASE_MEM: the gfx9 8-dword form; end-of-pipe event types CACHE_FLUSH_TS,
//     CACHE_FLUSH_AND_INV_TS_EVENT (kfdtest's 0x14) and BOTTOM_OF_PIPE_TS; DATA_SEL none, 32-bit
//     (address bits 31:2), 64-bit and GPU clock (Host.Timestamp; address bits 31:3); INT_SEL 1 and
//     2 call Host.Interrupt with int_ctxid after the write, which is what kfd's
//     kfd_int_process_v9.c passes to kfd_signal_event_interrupt (kfdtest puts the event id
//     there), INT_SEL 3 writes without an interrupt.
//   - WAIT_REG_MEM: memory space polls a 32-bit word with Memory.Atomic (load), compares
//     (value & mask) with ref by function 0-6; register space reads this queue's register file
//     (SH and UCONFIG windows) and is ErrUnsupported for other registers. POLL_INTERVAL (hardware
//     clocks) is not used; the queue waits with hqd.Runner.Wait (StateBlocked: re-checked on every
//     Kick and on a backoff from 20 µs doubling to 1 ms, 50 ms after a second of waiting); there is
//     no spinning, and Stop ends the wait with the fetch position still at the packet.
//   - INDIRECT_BUFFER: executes ib_size dwords at ib_base (bits 47:2); a packet crossing the IB end
//     is malformed; nesting deeper than IB2 is malformed; CHAIN replaces the current IB (only
//     inside an IB; at most 4096 chains per ring packet, so a chain loop ends in a queue error);
//     VALID = 0 is ErrUnsupported. INDIRECT_BUFFER_CONST (constant engine) is ErrUnsupported.
//   - ACQUIRE_MEM (gfx9: 7 dwords) and EVENT_WRITE CS_PARTIAL_FLUSH / CACHE_FLUSH /
//     CACHE_FLUSH_AND_INV: cache operations and waits for earlier work; memory is coherent and
//     earlier packets are complete, so they are ordering points with nothing to do. Other events
//     are ErrUnsupported.
//   - SET_SH_REG / SET_UCONFIG_REG: every register of the SH window [0x2C00, 0x3000) and the
//     UCONFIG window [0xC000, 0xC400) is kept in a fixed per-queue register file (no map, no
//     allocation); a write beyond the window is malformed; the index/vmid_shift bits are
//     ErrUnsupported. SET_CONFIG_REG is ErrUnsupported (no kfd user).
//   - DISPATCH_DIRECT: builds a ComputeState from the register file (COMPUTE_PGM_LO/HI shifted
//     to a byte address, RSRC1-3, USER_DATA_0-15, NUM_THREAD, START, TMPRING_SIZE, ...) and calls
//     Host.Dispatch, which returns when the grid is complete. Groups are the dims, or with
//     USE_THREAD_DIMENSIONS ceil(dim / NUM_THREAD). COMPUTE_SHADER_EN clear, a zero NUM_THREAD or
//     a zero program address is ErrInvalidDispatch; a grid without work-groups launches nothing.
//
// Unknown opcodes, predicated packets, malformed counts, memory faults and Host.Dispatch errors
// put the queue in hqd.StateError: Host.QueueError is called once and nothing more is fetched. A
// dispatch abandoned by Stop runs again after Start with the same DispatchID, so the host can
// resume it at the work-group a preemption saved.
//
// # Concurrency and lock order
//
// Kick takes no lock and does not allocate (gpu/hqd). The runner's lock guards only start/stop
// bookkeeping and the error; it is never held while calling Host or Memory, and this package has
// no lock of its own, so there is no lock order to respect. The register file, fetch stack and packet buffer belong to the queue
// goroutine (Stop waits for it, so a later Start's goroutine sees them). Packet execution does not
// allocate.
package pm4
