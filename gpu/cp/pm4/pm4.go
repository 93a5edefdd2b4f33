package pm4

import (
	"errors"
	"fmt"
	"github.com/kfdemu/kfdemu/gpu/hqd"
)

// PM4 header fields (soc15d.h: CP_PACKET_GET_TYPE/COUNT, CP_PACKET3_GET_OPCODE; kfdtest
// pm4_pkt_struct_common.h PM4_TYPE_3_HEADER: predicate bit 0, shaderType bit 1).
const (
	PacketType0 = 0
	PacketType1 = 1
	PacketType2 = 2 // one-dword filler (CP_PACKET2 0x80000000, bits 29:0 ignored)
	PacketType3 = 3

	headerPredicate = 1 << 0
	headerCompute   = 1 << 1 // shader type: 1 compute (kfdtest), 0 (amdgpu's compute rings)

	// CountOneDwordNOP: a type-3 NOP whose count is 0x3FFF is a single dword (amdgpu's
	// ring->funcs->nop = PACKET3(PACKET3_NOP, 0x3FFF); kfdtest BaseQueue.hpp CMD_NOP_TYPE_3
	// 0xFFFF1002 pads the ring end with it).
	CountOneDwordNOP = 0x3FFF
)

// Type-3 opcodes (soc15d.h PACKET3_*, kfdtest kfd_pm4_opcodes.h IT_*).
const (
	OpNOP                 = 0x10
	OpDispatchDirect      = 0x15
	OpIndirectBufferConst = 0x33
	OpWriteData           = 0x37
	OpWaitRegMem          = 0x3C
	OpIndirectBuffer      = 0x3F
	OpEventWrite          = 0x46
	OpReleaseMem          = 0x49
	OpAcquireMem          = 0x58
	OpSetConfigReg        = 0x68
	OpSetSHReg            = 0x76
	OpSetUConfigReg       = 0x79
)

// Header builds a type-3 header: PACKET3(op, count) of soc15d.h; count is the number of body
// dwords minus one.
func Header(op uint8, count uint32) uint32 {
	return PacketType3<<30 | (count&0x3FFF)<<16 | uint32(op)<<8
}

// Register windows (soc15d.h PACKET3_SET_SH_REG_START/END, PACKET3_SET_UCONFIG_REG_START/END).
// Offsets are absolute dword register offsets, GC_BASE segment included (gfx9: segment 0 at 0x2000,
// segment 1 at 0xA000).
const (
	SHRegStart      = 0x2C00
	SHRegEnd        = 0x3000
	UConfigRegStart = 0xC000
	UConfigRegEnd   = 0xC400
)

// Compute SH registers, absolute (gc_9_4_2_offset.h regCOMPUTE_* BASE_IDX 0, + 0x2000).
const (
	RegComputeDispatchInitiator = 0x2E00
	RegComputeDimX              = 0x2E01 // .. Y 0x2E02, Z 0x2E03
	RegComputeStartX            = 0x2E04 // .. Y, Z
	RegComputeNumThreadX        = 0x2E07 // .. Y, Z
	RegComputePgmLo             = 0x2E0C
	RegComputePgmHi             = 0x2E0D
	RegComputeScratchBaseLo     = 0x2E10 // COMPUTE_DISPATCH_SCRATCH_BASE_LO
	RegComputeScratchBaseHi     = 0x2E11
	RegComputePgmRsrc1          = 0x2E12
	RegComputePgmRsrc2          = 0x2E13
	RegComputeResourceLimits    = 0x2E15
	RegComputeTmpringSize       = 0x2E18
	RegComputeRestartX          = 0x2E1B
	RegComputePgmRsrc3          = 0x2E2D
	RegComputeUserData0         = 0x2E40 // .. 15 at 0x2E4F
)

// DISPATCH_INITIATOR bits (kfdtest Dispatch.cpp DISPATCH_INIT_VALUE 0x21 = COMPUTE_SHADER_EN |
// USE_THREAD_DIMENSIONS).
const (
	InitiatorComputeShaderEn     = 1 << 0
	InitiatorForceStartAt000     = 1 << 2
	InitiatorUseThreadDimensions = 1 << 5
)

// RELEASE_MEM fields (kfd_pm4_headers_ai.h struct pm4_mec_release_mem; soc15d.h EVENT_TYPE,
// EVENT_INDEX, DATA_SEL(x) << 29, INT_SEL(x) << 24, DST_SEL(x) << 16).
const (
	EventIndexEOP = 5 // event_index__mec_release_mem__end_of_pipe

	DataSelNone      = 0
	DataSel32        = 1
	DataSel64        = 2
	DataSelTimestamp = 3 // send_gpu_clock_counter

	IntSelNone                = 0
	IntSelInterrupt           = 1 // send_interrupt_only
	IntSelInterruptAfterWrite = 2 // send_interrupt_after_write_confirm
	IntSelDataAfterWrite      = 3 // send_data_after_write_confirm (no interrupt)
)

// VGT event types used by RELEASE_MEM and EVENT_WRITE (enum VGT_EVENT_TYPE of the gfx9 enum
// headers; kfd_pm4_headers_ai.h CACHE_FLUSH_AND_INV_TS_EVENT = 0x14; kfdtest gfx_7_2_enum.h
// CS_PARTIAL_FLUSH = 7).
const (
	EventCacheFlushTS       = 0x04
	EventCacheFlush         = 0x06
	EventCSPartialFlush     = 0x07
	EventCacheFlushAndInvTS = 0x14
	EventCacheFlushAndInv   = 0x16
	EventBottomOfPipeTS     = 0x28
)

// Packet fields (soc15d.h PACKET3_*; kfdtest pm4_pkt_struct_common.h; kfd_pm4_headers_ai.h).
const (
	eventIndexOther          = 0
	eventIndexPartialFlush   = 4 // event_index_event_write_CS_VS_PS_PARTIAL_FLUSH_4
	eventIndexCacheFlush     = 7 // event_index_event_write_CACHE_FLUSH_7
	writeDataDstRegister     = 0 // WRITE_DATA dst_sel (soc15d.h WRITE_DATA_DST_SEL)
	writeDataDstMemorySync   = 1
	writeDataDstTCL2         = 2
	writeDataDstMemory       = 5 // memory (async), kfdtest dst_sel_mec_write_data_MEMORY_5
	writeDataWrOneAddr       = 1 << 16
	writeDataEngineShift     = 30
	waitMemSpaceRegister     = 0 // WAIT_REG_MEM mem_space (soc15d.h WAIT_REG_MEM_MEM_SPACE)
	waitMemSpaceMemory       = 1
	waitOpWait               = 0 // WAIT_REG_MEM operation: wait_reg_mem
	waitOpWaitMemPreemptable = 3 // ... wait_mem_preemptable
	waitFunctionReserved     = 7
	releaseMemDstMemory      = 0 // dst_sel__mec_release_mem__memory_controller
	releaseMemDstTCL2        = 1 // dst_sel__mec_release_mem__tc_l2
	indirectBufferChainBit   = 1 << 20
	indirectBufferValidBit   = 1 << 23
	indirectBufferSizeMask   = 0xFFFFF
	setRegReservedMask       = 0xFFFF0000 // SET_SH_REG/SET_UCONFIG_REG index / vmid_shift bits
	setRegOffsetMask         = 0xFFFF
	regOffsetMask            = 0x3FFFF // WRITE_DATA / WAIT_REG_MEM register address, bits 17:0

	// Counts (header count field = dwords - 2) of the fixed-size gfx9 packets.
	acquireMemCount      = 5 // PACKET3(PACKET3_ACQUIRE_MEM, 5) in gfx_v9_0.c: 7 dwords
	releaseMemCount      = 6 // PACKET3(PACKET3_RELEASE_MEM, 6): 8 dwords with int_ctxid
	waitRegMemCount      = 5 // PACKET3(PACKET3_WAIT_REG_MEM, 5)
	indirectBufferCount  = 2 // PACKET3(PACKET3_INDIRECT_BUFFER, 2)
	dispatchDirectCount  = 3 // kfdtest PM4DISPATCH_DIRECT: 5 dwords
	eventWriteShortCount = 0 // kfdtest PM4PartialFlushPacket: 2 dwords
	eventWriteLongCount  = 2 // EVENT_WRITE with an address: 4 dwords
)

// Model limits.
const (
	maxIBDepth             = 2 // ring -> IB1 -> IB2
	maxChainsPerRingPacket = 4096
	packetMaxDwords        = 0x3FFF + 2 // count is 14 bits
	ringMinBytes           = 8          // cp_hqd_pq_control QUEUE_SIZE = log2(size/4) - 1 >= 0
	ringMaxBytes           = 1 << 30    // far above any kfd ring
	ringBaseAlign          = 256        // cp_hqd_pq_base = queue_address >> 8 (kfd_mqd_manager_v9.c)
	wptrAlign              = 8          // 64-bit write pointer on gfx9
	rptrAlign              = 4          // 32-bit read pointer report
	shRegs                 = SHRegEnd - SHRegStart
	uconfigRegs            = UConfigRegEnd - UConfigRegStart
)

// Sentinel errors. Queue errors wrap one of them in a *PacketError (faults in a *FaultError).
var (
	ErrConfig          = errors.New("pm4: invalid queue configuration")
	ErrMalformed       = errors.New("pm4: malformed PM4 packet")
	ErrUnsupported     = errors.New("pm4: PM4 packet or field not supported by this compute queue")
	ErrInvalidDispatch = errors.New("pm4: invalid dispatch state")
	ErrDispatchFailed  = errors.New("pm4: dispatch failed")
	ErrWritePointer    = errors.New("pm4: write pointer outside the ring")
	ErrFault           = errors.New("pm4: memory fault")
)

// PacketError is a queue error attributed to one packet.
type PacketError struct {
	ReadIndex uint64 // the ring read index (dwords, 64-bit) of the ring packet being executed
	Depth     int    // 0: the packet is in the ring; 1, 2: in an indirect buffer at that level
	VA        uint64 // address of the failing packet's header
	Header    uint32
	Err       error
}

func (e *PacketError) Error() string {
	where := "ring"
	if e.Depth > 0 {
		where = fmt.Sprintf("IB%d", e.Depth)
	}
	return fmt.Sprintf("pm4: packet %#08x at %#x (%s, ring index %d): %v", e.Header, e.VA, where, e.ReadIndex, e.Err)
}

func (e *PacketError) Unwrap() error { return e.Err }

// FaultError is a failed access to queue memory; errors.Is(err, ErrFault) holds.
type FaultError struct {
	VA  uint64
	Op  string // what the CP was accessing: "ring", "indirect buffer", "write data", ...
	Err error  // the Memory error
}

func (e *FaultError) Error() string {
	return fmt.Sprintf("pm4: memory fault at %#x (%s): %v", e.VA, e.Op, e.Err)
}

func (e *FaultError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrFault) true.
func (e *FaultError) Is(target error) bool { return target == ErrFault }

// Memory is the queue's GPU virtual address space (kfd: the owning process's GPUVM). Errors are
// faults. Atomic applies f to the naturally aligned size-byte word (size 4 or 8) at va as one
// atomic read-modify-write and returns the old value; f must be pure (it may run more than once).
// f == nil is an atomic load that never writes: the CP loads the words it shares with the client
// (write pointer, WAIT_REG_MEM poll) so, and stores them (read pointer, fences) with an f that
// ignores old. (A load done as a read-modify-write with f returning old would write the old value
// back; on memory the daemon reaches by copying, userptr pages, that write-back lost the client's
// concurrent write-pointer store and stalled the queue.) Memory must be safe for concurrent use
// (Status loads the write pointer from another goroutine).
type Memory interface {
	Read(va uint64, p []byte) error
	Write(va uint64, p []byte) error
	Atomic(va uint64, size int, f func(old uint64) uint64) (uint64, error)
}

// Host is what the queue reports to. Dispatch, Interrupt, Timestamp and QueueError are called
// from the queue's goroutine only, never under a lock of this package.
type Host interface {
	// Dispatch runs the grid described by cs to completion: it returns only when every work-group
	// has finished and its stores are visible. cs is owned by the queue and valid only during the
	// call. A non-nil error puts the queue in the error state. A long dispatch should watch
	// q.Stopping() and return early when it is closed.
	Dispatch(q *Queue, cs *ComputeState) error
	// Interrupt is the end-of-pipe interrupt of a RELEASE_MEM with INT_SEL 1 or 2: contextID is
	// the packet's int_ctxid, which the IH ring entry carries as context_id0 and kfd passes to
	// kfd_signal_event_interrupt(pasid, context_id0, 32) (kfd_int_process_v9.c).
	Interrupt(q *Queue, contextID uint32)
	// Timestamp is the 64-bit GPU clock counter (RELEASE_MEM DATA_SEL 3).
	Timestamp() uint64
	// QueueError reports the queue's first and only error; the queue has stopped.
	QueueError(q *Queue, err error)
}

// ComputeState is what SET_SH_REG accumulated and DISPATCH_DIRECT launches. Register values are
// raw (the shader model decodes RSRC1/2/3 and the NUM_THREAD full/partial fields).
type ComputeState struct {
	PGM            uint64 // COMPUTE_PGM_LO | (COMPUTE_PGM_HI bits 7:0) << 32, shifted left by 8
	RSRC1          uint32 // COMPUTE_PGM_RSRC1
	RSRC2          uint32 // COMPUTE_PGM_RSRC2
	RSRC3          uint32 // COMPUTE_PGM_RSRC3
	UserData       [16]uint32
	NumThread      [3]uint32 // COMPUTE_NUM_THREAD_X/Y/Z (work-group size; bits 15:0 full groups)
	Start          [3]uint32 // COMPUTE_START_X/Y/Z (first work-group id)
	TmpRingSize    uint32    // COMPUTE_TMPRING_SIZE (WAVES bits 11:0, WAVESIZE bits 24:12)
	ResourceLimits uint32    // COMPUTE_RESOURCE_LIMITS
	ScratchBase    uint64    // COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI shifted left by 8
	Restart        [3]uint32 // COMPUTE_RESTART_X/Y/Z
	Groups         [3]uint32 // DISPATCH_DIRECT dim_x/y/z (number of work-groups)
	Initiator      uint32    // DISPATCH_INITIATOR
}

// Config describes one PM4 compute queue (kfd CREATE_QUEUE with KFD_IOC_QUEUE_TYPE_COMPUTE:
// ring_base_address, ring_size, read_pointer_address, write_pointer_address).
type Config struct {
	RingBase      uint64 // 256-byte aligned (cp_hqd_pq_base = address >> 8, kfd_mqd_manager_v9.c)
	RingSizeBytes uint32 // power of two, >= 8 (cp_hqd_pq_control QUEUE_SIZE = log2(size/4) - 1)
	ReadPtrVA     uint64 // 32-bit read pointer in dwords, written by the CP; 4-byte aligned
	WritePtrVA    uint64 // 64-bit write pointer in dwords, written by the client; 8-byte aligned
	Memory        Memory
	Host          Host
	Tag           any // the owner's data (kfd's queue), returned by Queue.Tag
}

// Status is a snapshot for debugfs.
type Status struct {
	State         hqd.State
	ReadPtr       uint32 // last read pointer stored at ReadPtrVA (dwords, wraps at the ring size)
	ReadIndex     uint64 // the CP's 64-bit read index (dwords, never wraps)
	WritePtr      uint64 // write pointer as the queue last loaded it from WritePtrVA
	RingBase      uint64
	RingSizeBytes uint32
	Depth         int    // IB nesting of the packet being executed (0 in the ring)
	Packets       uint64 // ring packets retired
	Dispatches    uint64 // DISPATCH_DIRECT packets handed to Host.Dispatch
	Interrupts    uint64 // Host.Interrupt calls
	Scans         uint64 // ring scans finished (a kick starts one)
	Err           error
}
