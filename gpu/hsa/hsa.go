// Package hsa holds the HSA and AMD architected formats the emulated GPU reads and writes in client
// memory: AQL packets (hsa.h), amd_signal_t (amd_hsa_signal.h) and amd_queue_t (amd_hsa_queue.h), as
// Go types with explicit layout. No behaviour lives here; hsa_c_test.go checks every size and offset
// against Debian's ROCr 5.2.3 headers (libhsa-runtime-dev).
package hsa

// AQL packet types (hsa_packet_type_t) and header fields (hsa_packet_header_t,
// hsa_packet_header_width_t).
const (
	PacketTypeVendorSpecific = 0
	PacketTypeInvalid        = 1
	PacketTypeKernelDispatch = 2
	PacketTypeBarrierAnd     = 3
	PacketTypeAgentDispatch  = 4
	PacketTypeBarrierOr      = 5

	HeaderType                    = 0 // bit offsets
	HeaderBarrier                 = 8
	HeaderAcquireFenceScope       = 9
	HeaderReleaseFenceScope       = 11
	HeaderWidthType               = 8
	HeaderWidthBarrier            = 1
	HeaderWidthFenceScope         = 2
	FenceScopeNone                = 0
	FenceScopeAgent               = 1
	FenceScopeSystem              = 2
	PacketSize                    = 64
	KernelDispatchSetupDimensions = 0
)

// PacketType extracts the type from a header.
func PacketType(header uint16) uint8 { return uint8(header >> HeaderType & (1<<HeaderWidthType - 1)) }

// Barrier reports the header's barrier bit.
func Barrier(header uint16) bool { return header>>HeaderBarrier&1 != 0 }

// KernelDispatchPacket is hsa_kernel_dispatch_packet_t.
type KernelDispatchPacket struct {
	Header             uint16
	Setup              uint16
	WorkgroupSizeX     uint16
	WorkgroupSizeY     uint16
	WorkgroupSizeZ     uint16
	Reserved0          uint16
	GridSizeX          uint32
	GridSizeY          uint32
	GridSizeZ          uint32
	PrivateSegmentSize uint32
	GroupSegmentSize   uint32
	KernelObject       uint64
	KernargAddress     uint64
	Reserved2          uint64
	CompletionSignal   uint64
}

// AgentDispatchPacket is hsa_agent_dispatch_packet_t.
type AgentDispatchPacket struct {
	Header           uint16
	Type             uint16
	Reserved0        uint32
	ReturnAddress    uint64
	Arg              [4]uint64
	Reserved2        uint64
	CompletionSignal uint64
}

// BarrierPacket is hsa_barrier_and_packet_t and hsa_barrier_or_packet_t (same layout).
type BarrierPacket struct {
	Header           uint16
	Reserved0        uint16
	Reserved1        uint32
	DepSignal        [5]uint64
	Reserved2        uint64
	CompletionSignal uint64
}

// Signal is amd_signal_t: a signal handle is the address of this structure.
type Signal struct {
	Kind            int64
	Value           int64 // union with the hardware doorbell pointers of doorbell signals
	EventMailboxPtr uint64
	EventID         uint32
	Reserved1       uint32
	StartTS         uint64
	EndTS           uint64
	QueuePtr        uint64
	Reserved3       [2]uint32
}

// amd_signal_kind_t.
const (
	SignalKindInvalid        = 0
	SignalKindUser           = 1
	SignalKindDoorbell       = -1
	SignalKindLegacyDoorbell = -2
)

// Offsets into Signal used by the packet processor.
const (
	SignalValueOffset   = 8
	SignalMailboxOffset = 16
	SignalEventIDOffset = 24
)

// Queue is hsa_queue_t.
type Queue struct {
	Type           uint32
	Features       uint32
	BaseAddress    uint64
	DoorbellSignal uint64
	Size           uint32
	Reserved1      uint32
	ID             uint64
}

// AMDQueue is amd_queue_t (256 bytes, 64-byte aligned).
type AMDQueue struct {
	HSAQueue                          Queue
	Reserved1                         [4]uint32
	WriteDispatchID                   uint64
	GroupSegmentApertureBaseHi        uint32
	PrivateSegmentApertureBaseHi      uint32
	MaxCUID                           uint32
	MaxWaveID                         uint32
	MaxLegacyDoorbellDispatchIDPlus1  uint64
	LegacyDoorbellLock                uint32
	Reserved2                         [9]uint32
	ReadDispatchID                    uint64
	ReadDispatchIDFieldBaseByteOffset uint32
	ComputeTmpringSize                uint32
	ScratchResourceDescriptor         [4]uint32
	ScratchBackingMemoryLocation      uint64
	ScratchBackingMemoryByteSize      uint64
	ScratchWave64LaneByteSize         uint32
	QueueProperties                   uint32
	Reserved3                         [2]uint32
	QueueInactiveSignal               uint64
	Reserved4                         [14]uint32
}
