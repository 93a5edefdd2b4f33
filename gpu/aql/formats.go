// Package aql holds the HSA and AMD architected formats the emulated GPU reads and writes in
// client memory (AQL packets and the structures around them), as Go types with explicit layout
// and little-endian encode/decode helpers:
//
//   - AQL packets (hsa.h: hsa_kernel_dispatch_packet_t, hsa_agent_dispatch_packet_t,
//     hsa_barrier_and_packet_t, hsa_barrier_or_packet_t; hsa_ext_amd.h: hsa_amd_barrier_value_packet_t),
//     the packet header bits ([PSA] Table 2-4) and the dispatch setup word;
//   - hsa_queue_t and amd_queue_t (amd_hsa_queue.h), amd_signal_t (amd_hsa_signal.h);
//   - amd_kernel_code_t (amd_hsa_kernel_code.h, code object V2) and the AMDHSA kernel descriptor
//     (LLVM AMDHSAKernelDescriptor.h / AMDGPUUsage "Kernel Descriptor", code object V3+) with the bit
//     fields of COMPUTE_PGM_RSRC1/2/3 and kernel_code_properties.
//
// inactive.go adds the queue-inactive codes the CP stores in amd_queue_t.queue_inactive_signal, the
// error classes the packet processor and the shader model mark their errors with, and the one table
// between them (QueueInactiveCode). No other behaviour lives here. hsa_c_test.go checks every size, offset and constant against Debian's
// ROCr 5.2.3 headers (libhsa-runtime-dev) with gcc, and kd_c_test.go the kernel descriptor against
// LLVM 14's AMDHSAKernelDescriptor.h (llvm-14-dev) with g++ plus the reference table for the fields
// added after LLVM 14. The package has no locks and no goroutines.
package aql

import (
	"encoding/binary"
	"errors"
)

// AQL packet types (hsa_packet_type_t, [PSA] Table 2-4 "format").
const (
	PacketTypeVendorSpecific = 0
	PacketTypeInvalid        = 1
	PacketTypeKernelDispatch = 2
	PacketTypeBarrierAnd     = 3
	PacketTypeAgentDispatch  = 4
	PacketTypeBarrierOr      = 5
)

// Header fields (hsa_packet_header_t bit offsets, hsa_packet_header_width_t widths) and fence scopes
// (hsa_fence_scope_t; [PSA] Tables 2-5, 2-6).
const (
	HeaderType                    = 0 // bit offsets
	HeaderBarrier                 = 8
	HeaderAcquireFenceScope       = 9
	HeaderReleaseFenceScope       = 11
	HeaderWidthType               = 8
	HeaderWidthBarrier            = 1
	HeaderWidthFenceScope         = 2
	HeaderReservedMask            = 0xE000 // bits 15:13, "Reserved, must be 0" ([PSA] Table 2-4)
	FenceScopeNone                = 0
	FenceScopeAgent               = 1
	FenceScopeSystem              = 2
	FenceScopeReserved            = 3
	PacketSize                    = 64
	KernelDispatchSetupDimensions = 0 // hsa_kernel_dispatch_packet_setup_t
	KernelDispatchSetupWidthDims  = 2 // hsa_kernel_dispatch_packet_setup_width_t
)

// hsa_queue_type_t and hsa_queue_feature_t.
const (
	QueueTypeMulti              = 0
	QueueTypeSingle             = 1
	QueueTypeCooperative        = 2
	QueueFeatureKernelDispatch  = 1
	QueueFeatureAgentDispatch   = 2
	AMDPacketTypeBarrierValue   = 2 // hsa_amd_packet_type_t HSA_AMD_PACKET_TYPE_BARRIER_VALUE
	SignalConditionEQ           = 0 // hsa_signal_condition_t
	SignalConditionNE           = 1
	SignalConditionLT           = 2
	SignalConditionGTE          = 3
	AMDQueueAlignBytes          = 64 // AMD_QUEUE_ALIGN_BYTES
	AMDSignalAlignBytes         = 64 // AMD_SIGNAL_ALIGN_BYTES
	AMDKernelCodeAlignBytes     = 64 // AMD_KERNEL_CODE_ALIGN_BYTES
	AMDISAAlignBytes            = 256
	KernelDescriptorAlignBytes  = 64 // "CP microcode requires the Kernel descriptor to be allocated on 64-byte alignment"
	KernelDescriptorSize        = 64
	AMDKernelCodeSize           = 256
	AMDQueueSize                = 256
	AMDSignalSize               = 64
	KernelCodeVersionMajor      = 1 // AMD_KERNEL_CODE_VERSION_MAJOR
	KernelCodeVersionMinor      = 1
	MachineKindUndefined        = 0 // amd_machine_kind_t
	MachineKindAMDGPU           = 1
	AMDQueueCapsCPAsyncReclaim  = 1 << 0 // newer ROCr only (amd_queue_t.caps; reserved1[0] in 5.2.3)
	AMDQueueCapsSWAsyncReclaim  = 1 << 1
	SystemVGPRWorkitemIDX       = 0 // SYSTEM_VGPR_WORKITEM_ID_*
	SystemVGPRWorkitemIDXY      = 1
	SystemVGPRWorkitemIDXYZ     = 2
	SystemVGPRWorkitemUndefined = 3
)

// ErrShort is returned by the decoders when the buffer is smaller than the structure.
var ErrShort = errors.New("hsa: buffer too short")

// PacketType extracts the format from a header.
func PacketType(header uint16) uint8 { return uint8(header >> HeaderType & (1<<HeaderWidthType - 1)) }

// Barrier reports the header's barrier bit.
func Barrier(header uint16) bool { return header>>HeaderBarrier&1 != 0 }

// AcquireFenceScope extracts the acquire fence scope (0..3) from a header.
func AcquireFenceScope(header uint16) uint8 { return uint8(header >> HeaderAcquireFenceScope & 3) }

// ReleaseFenceScope extracts the release fence scope (0..3) from a header.
func ReleaseFenceScope(header uint16) uint8 { return uint8(header >> HeaderReleaseFenceScope & 3) }

// MakeHeader builds a header: format | barrier<<8 | acquire<<9 | release<<11 ([PSA] §2.9.1).
// Scopes are masked to two bits.
func MakeHeader(packetType uint8, barrier bool, acquire, release uint8) uint16 {
	h := uint16(packetType) | uint16(acquire&3)<<HeaderAcquireFenceScope | uint16(release&3)<<HeaderReleaseFenceScope
	if barrier {
		h |= 1 << HeaderBarrier
	}
	return h
}

// Dimensions extracts the dimension count from a kernel dispatch setup word.
func Dimensions(setup uint16) uint8 { return uint8(setup & (1<<KernelDispatchSetupWidthDims - 1)) }

var le = binary.LittleEndian

// KernelDispatchPacket is hsa_kernel_dispatch_packet_t ([PSA] Table 2-7).
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

// Decode fills p from the first 64 bytes of b.
func (p *KernelDispatchPacket) Decode(b []byte) error {
	if len(b) < PacketSize {
		return ErrShort
	}
	*p = KernelDispatchPacket{
		Header: le.Uint16(b[0:]), Setup: le.Uint16(b[2:]),
		WorkgroupSizeX: le.Uint16(b[4:]), WorkgroupSizeY: le.Uint16(b[6:]), WorkgroupSizeZ: le.Uint16(b[8:]),
		Reserved0: le.Uint16(b[10:]),
		GridSizeX: le.Uint32(b[12:]), GridSizeY: le.Uint32(b[16:]), GridSizeZ: le.Uint32(b[20:]),
		PrivateSegmentSize: le.Uint32(b[24:]), GroupSegmentSize: le.Uint32(b[28:]),
		KernelObject: le.Uint64(b[32:]), KernargAddress: le.Uint64(b[40:]), Reserved2: le.Uint64(b[48:]),
		CompletionSignal: le.Uint64(b[56:]),
	}
	return nil
}

// Encode writes p into the first 64 bytes of b.
func (p *KernelDispatchPacket) Encode(b []byte) error {
	if len(b) < PacketSize {
		return ErrShort
	}
	le.PutUint16(b[0:], p.Header)
	le.PutUint16(b[2:], p.Setup)
	le.PutUint16(b[4:], p.WorkgroupSizeX)
	le.PutUint16(b[6:], p.WorkgroupSizeY)
	le.PutUint16(b[8:], p.WorkgroupSizeZ)
	le.PutUint16(b[10:], p.Reserved0)
	le.PutUint32(b[12:], p.GridSizeX)
	le.PutUint32(b[16:], p.GridSizeY)
	le.PutUint32(b[20:], p.GridSizeZ)
	le.PutUint32(b[24:], p.PrivateSegmentSize)
	le.PutUint32(b[28:], p.GroupSegmentSize)
	le.PutUint64(b[32:], p.KernelObject)
	le.PutUint64(b[40:], p.KernargAddress)
	le.PutUint64(b[48:], p.Reserved2)
	le.PutUint64(b[56:], p.CompletionSignal)
	return nil
}

// AgentDispatchPacket is hsa_agent_dispatch_packet_t ([PSA] Table 2-8).
type AgentDispatchPacket struct {
	Header           uint16
	Type             uint16
	Reserved0        uint32
	ReturnAddress    uint64
	Arg              [4]uint64
	Reserved2        uint64
	CompletionSignal uint64
}

// Decode fills p from the first 64 bytes of b.
func (p *AgentDispatchPacket) Decode(b []byte) error {
	if len(b) < PacketSize {
		return ErrShort
	}
	*p = AgentDispatchPacket{Header: le.Uint16(b[0:]), Type: le.Uint16(b[2:]), Reserved0: le.Uint32(b[4:]),
		ReturnAddress: le.Uint64(b[8:]), Reserved2: le.Uint64(b[48:]), CompletionSignal: le.Uint64(b[56:])}
	for i := range p.Arg {
		p.Arg[i] = le.Uint64(b[16+8*i:])
	}
	return nil
}

// Encode writes p into the first 64 bytes of b.
func (p *AgentDispatchPacket) Encode(b []byte) error {
	if len(b) < PacketSize {
		return ErrShort
	}
	le.PutUint16(b[0:], p.Header)
	le.PutUint16(b[2:], p.Type)
	le.PutUint32(b[4:], p.Reserved0)
	le.PutUint64(b[8:], p.ReturnAddress)
	for i, a := range p.Arg {
		le.PutUint64(b[16+8*i:], a)
	}
	le.PutUint64(b[48:], p.Reserved2)
	le.PutUint64(b[56:], p.CompletionSignal)
	return nil
}

// BarrierPacket is hsa_barrier_and_packet_t and hsa_barrier_or_packet_t (same layout, [PSA] Tables
// 2-9 and 2-10).
type BarrierPacket struct {
	Header           uint16
	Reserved0        uint16
	Reserved1        uint32
	DepSignal        [5]uint64
	Reserved2        uint64
	CompletionSignal uint64
}

// Decode fills p from the first 64 bytes of b.
func (p *BarrierPacket) Decode(b []byte) error {
	if len(b) < PacketSize {
		return ErrShort
	}
	p.Header, p.Reserved0, p.Reserved1 = le.Uint16(b[0:]), le.Uint16(b[2:]), le.Uint32(b[4:])
	for i := range p.DepSignal {
		p.DepSignal[i] = le.Uint64(b[8+8*i:])
	}
	p.Reserved2, p.CompletionSignal = le.Uint64(b[48:]), le.Uint64(b[56:])
	return nil
}

// Encode writes p into the first 64 bytes of b.
func (p *BarrierPacket) Encode(b []byte) error {
	if len(b) < PacketSize {
		return ErrShort
	}
	le.PutUint16(b[0:], p.Header)
	le.PutUint16(b[2:], p.Reserved0)
	le.PutUint32(b[4:], p.Reserved1)
	for i, s := range p.DepSignal {
		le.PutUint64(b[8+8*i:], s)
	}
	le.PutUint64(b[48:], p.Reserved2)
	le.PutUint64(b[56:], p.CompletionSignal)
	return nil
}

// AMDVendorPacketHeader is hsa_amd_vendor_packet_header_t (hsa_ext_amd.h): the AQL header with
// format VENDOR_SPECIFIC followed by the AMD format byte.
type AMDVendorPacketHeader struct {
	Header    uint16
	AmdFormat uint8
	Reserved  uint8
}

// BarrierValuePacket is hsa_amd_barrier_value_packet_t (hsa_ext_amd.h): processing halts until
// (value(Signal) & Mask) Cond Value holds, Cond being an hsa_signal_condition_t; Signal 0 is a
// satisfied dependency.
type BarrierValuePacket struct {
	Header           AMDVendorPacketHeader
	Reserved0        uint32
	Signal           uint64
	Value            int64
	Mask             int64
	Cond             uint32
	Reserved1        uint32
	Reserved2        uint64
	Reserved3        uint64
	CompletionSignal uint64
}

// Decode fills p from the first 64 bytes of b.
func (p *BarrierValuePacket) Decode(b []byte) error {
	if len(b) < PacketSize {
		return ErrShort
	}
	*p = BarrierValuePacket{
		Header:    AMDVendorPacketHeader{Header: le.Uint16(b[0:]), AmdFormat: b[2], Reserved: b[3]},
		Reserved0: le.Uint32(b[4:]), Signal: le.Uint64(b[8:]), Value: int64(le.Uint64(b[16:])),
		Mask: int64(le.Uint64(b[24:])), Cond: le.Uint32(b[32:]), Reserved1: le.Uint32(b[36:]),
		Reserved2: le.Uint64(b[40:]), Reserved3: le.Uint64(b[48:]), CompletionSignal: le.Uint64(b[56:]),
	}
	return nil
}

// Encode writes p into the first 64 bytes of b.
func (p *BarrierValuePacket) Encode(b []byte) error {
	if len(b) < PacketSize {
		return ErrShort
	}
	le.PutUint16(b[0:], p.Header.Header)
	b[2], b[3] = p.Header.AmdFormat, p.Header.Reserved
	le.PutUint32(b[4:], p.Reserved0)
	le.PutUint64(b[8:], p.Signal)
	le.PutUint64(b[16:], uint64(p.Value))
	le.PutUint64(b[24:], uint64(p.Mask))
	le.PutUint32(b[32:], p.Cond)
	le.PutUint32(b[36:], p.Reserved1)
	le.PutUint64(b[40:], p.Reserved2)
	le.PutUint64(b[48:], p.Reserved3)
	le.PutUint64(b[56:], p.CompletionSignal)
	return nil
}

// CompareSignal evaluates an hsa_signal_condition_t on signed values ([PSA] §2.5: "The signal value
// is considered a signed integer"). ok is false for an unknown condition.
func CompareSignal(cond uint32, v, want int64) (met, ok bool) {
	switch cond {
	case SignalConditionEQ:
		return v == want, true
	case SignalConditionNE:
		return v != want, true
	case SignalConditionLT:
		return v < want, true
	case SignalConditionGTE:
		return v >= want, true
	}
	return false, false
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

// Offsets into amd_signal_t used by the packet processor.
const (
	SignalKindOffset    = 0
	SignalValueOffset   = 8
	SignalMailboxOffset = 16
	SignalEventIDOffset = 24
	SignalStartTSOffset = 32
	SignalEndTSOffset   = 40
	SignalQueuePtrOff   = 48
)

// Queue is hsa_queue_t ([PSA] Table 2-1).
type Queue struct {
	Type           uint32
	Features       uint32
	BaseAddress    uint64
	DoorbellSignal uint64
	Size           uint32
	Reserved1      uint32
	ID             uint64
}

// AMDQueue is amd_queue_t (256 bytes, 64-byte aligned) as in ROCr 5.2.3. Newer ROCr names
// Reserved1[0] "caps" (AMDQueueCaps*) and splits Reserved3/Reserved4 into scratch fields; the offsets
// below are the same in both.
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

// Byte offsets into amd_queue_t that the driver and packet processor use: CREATE_QUEUE's
// read_pointer_address / write_pointer_address are the addresses of ReadDispatchID / WriteDispatchID
// (ROCr AqlQueue passes &amd_queue_.read_dispatch_id and &amd_queue_.write_dispatch_id).
const (
	AMDQueueHSAQueueOffset            = 0
	AMDQueueBaseAddressOffset         = 8
	AMDQueueDoorbellSignalOffset      = 16
	AMDQueueSizeOffset                = 24
	AMDQueueIDOffset                  = 32
	AMDQueueCapsOffset                = 40
	AMDQueueWriteDispatchIDOffset     = 56
	AMDQueueMaxCUIDOffset             = 72
	AMDQueueReadDispatchIDOffset      = 128
	AMDQueueComputeTmpringSizeOffset  = 140
	AMDQueueScratchResourceDescOffset = 144
	AMDQueueScratchLocationOffset     = 160 // scratch_backing_memory_location (GFX9+: absolute VA)
	AMDQueueScratchByteSizeOffset     = 168
	AMDQueueScratchLaneByteSizeOffset = 176 // scratch_wave64_lane_byte_size
	AMDQueuePropertiesOffset          = 180
	AMDQueueInactiveSignalOffset      = 192
)

// Field is a bit field of a 32-bit register-like word, encoded as shift | width<<8 so that the
// fields can be constants. The C headers spell the same thing NAME_SHIFT / NAME_WIDTH / NAME (mask).
type Field uint16

// Shift is the field's lowest bit.
func (f Field) Shift() uint { return uint(f & 0xff) }

// Width is the field's width in bits.
func (f Field) Width() uint { return uint(f >> 8) }

// Mask is the field's mask in place (NAME in the C headers).
func (f Field) Mask() uint32 { return uint32((uint64(1)<<f.Width())-1) << f.Shift() }

// Get extracts the field from v.
func (f Field) Get(v uint32) uint32 { return v & f.Mask() >> f.Shift() }

// Set returns v with the field replaced by x (truncated to the field width).
func (f Field) Set(v, x uint32) uint32 { return v&^f.Mask() | x<<f.Shift()&f.Mask() }

// COMPUTE_TMPRING_SIZE on GFX9 (ROCr amd_aql_queue.cpp InitScratchSRD): WAVES concurrent scratch
// waves, WAVESIZE bytes per wave in 1 KiB units.
const (
	TmpringWaves    = Field(0 | 12<<8)
	TmpringWaveSize = Field(12 | 13<<8)
)

// amd_queue_properties_t (amd_hsa_queue.h).
const (
	QueuePropEnableTrapHandler          = Field(0 | 1<<8)
	QueuePropIsPtr64                    = Field(1 | 1<<8)
	QueuePropEnableTrapHandlerDebugSGPR = Field(2 | 1<<8)
	QueuePropEnableProfiling            = Field(3 | 1<<8)
	QueuePropUseScratchOnce             = Field(4 | 1<<8)
	QueuePropReserved1                  = Field(5 | 27<<8)
)

// COMPUTE_PGM_RSRC1 (LLVM AMDHSAKernelDescriptor.h; amd_compute_pgm_rsrc_one_t has the same bits
// 25:0 and calls 31:26 reserved).
const (
	RSRC1GranulatedWorkitemVGPRCount  = Field(0 | 6<<8)
	RSRC1GranulatedWavefrontSGPRCount = Field(6 | 4<<8)
	RSRC1Priority                     = Field(10 | 2<<8)
	RSRC1FloatRoundMode32             = Field(12 | 2<<8)
	RSRC1FloatRoundMode16_64          = Field(14 | 2<<8)
	RSRC1FloatDenormMode32            = Field(16 | 2<<8)
	RSRC1FloatDenormMode16_64         = Field(18 | 2<<8)
	RSRC1Priv                         = Field(20 | 1<<8)
	RSRC1EnableDX10Clamp              = Field(21 | 1<<8) // GFX12: WG_RR_EN
	RSRC1DebugMode                    = Field(22 | 1<<8)
	RSRC1EnableIEEEMode               = Field(23 | 1<<8)
	RSRC1Bulky                        = Field(24 | 1<<8)
	RSRC1CdbgUser                     = Field(25 | 1<<8)
	RSRC1FP16Ovfl                     = Field(26 | 1<<8) // GFX9+
	RSRC1Reserved0                    = Field(27 | 2<<8)
	RSRC1WGPMode                      = Field(29 | 1<<8) // GFX10+
	RSRC1MemOrdered                   = Field(30 | 1<<8) // GFX10+
	RSRC1FwdProgress                  = Field(31 | 1<<8) // GFX10+
)

// COMPUTE_PGM_RSRC2 (LLVM; amd_compute_pgm_rsrc_two_t names bit 0
// ENABLE_SGPR_PRIVATE_SEGMENT_WAVE_BYTE_OFFSET).
const (
	RSRC2EnablePrivateSegment           = Field(0 | 1<<8)
	RSRC2UserSGPRCount                  = Field(1 | 5<<8)
	RSRC2EnableTrapHandler              = Field(6 | 1<<8)
	RSRC2EnableSGPRWorkgroupIDX         = Field(7 | 1<<8)
	RSRC2EnableSGPRWorkgroupIDY         = Field(8 | 1<<8)
	RSRC2EnableSGPRWorkgroupIDZ         = Field(9 | 1<<8)
	RSRC2EnableSGPRWorkgroupInfo        = Field(10 | 1<<8)
	RSRC2EnableVGPRWorkitemID           = Field(11 | 2<<8)
	RSRC2EnableExceptionAddressWatch    = Field(13 | 1<<8)
	RSRC2EnableExceptionMemory          = Field(14 | 1<<8)
	RSRC2GranulatedLDSSize              = Field(15 | 9<<8)
	RSRC2EnableExceptionFPInvalidOp     = Field(24 | 1<<8)
	RSRC2EnableExceptionFPDenormalSrc   = Field(25 | 1<<8)
	RSRC2EnableExceptionFPDivByZero     = Field(26 | 1<<8)
	RSRC2EnableExceptionFPOverflow      = Field(27 | 1<<8)
	RSRC2EnableExceptionFPUnderflow     = Field(28 | 1<<8)
	RSRC2EnableExceptionFPInexact       = Field(29 | 1<<8)
	RSRC2EnableExceptionIntDivideByZero = Field(30 | 1<<8)
	RSRC2Reserved0                      = Field(31 | 1<<8)
)

// COMPUTE_PGM_RSRC3 per family (LLVM; GFX11/GFX12 rows from AMDGPUUsage via the reference digest).
const (
	RSRC3GFX90AAccumOffset    = Field(0 | 6<<8)
	RSRC3GFX90AReserved0      = Field(6 | 10<<8)
	RSRC3GFX90ATGSplit        = Field(16 | 1<<8)
	RSRC3GFX90AReserved1      = Field(17 | 15<<8)
	RSRC3GFX10SharedVGPRCount = Field(0 | 4<<8)
	RSRC3GFX11InstPrefSize    = Field(4 | 6<<8)
	RSRC3GFX11TrapOnStart     = Field(10 | 1<<8)
	RSRC3GFX11TrapOnEnd       = Field(11 | 1<<8)
	RSRC3GFX11ImageOp         = Field(31 | 1<<8)
	RSRC3GFX12InstPrefSize    = Field(4 | 8<<8)
	RSRC3GFX12GLGEn           = Field(13 | 1<<8)
	RSRC3GFX12ImageOp         = Field(31 | 1<<8)
	RSRC3GFX10Reserved0LLVM14 = Field(4 | 28<<8) // LLVM 14's view of GFX10: 31:4 reserved
)

// kernel_code_properties of the kernel descriptor (u16 at byte 56; LLVM KERNEL_CODE_PROPERTY_*).
const (
	KDPropEnableSGPRPrivateSegmentBuffer = Field(0 | 1<<8)
	KDPropEnableSGPRDispatchPtr          = Field(1 | 1<<8)
	KDPropEnableSGPRQueuePtr             = Field(2 | 1<<8)
	KDPropEnableSGPRKernargSegmentPtr    = Field(3 | 1<<8)
	KDPropEnableSGPRDispatchID           = Field(4 | 1<<8)
	KDPropEnableSGPRFlatScratchInit      = Field(5 | 1<<8)
	KDPropEnableSGPRPrivateSegmentSize   = Field(6 | 1<<8)
	KDPropReserved0                      = Field(7 | 3<<8)
	KDPropEnableWavefrontSize32          = Field(10 | 1<<8) // GFX10+
	KDPropUsesDynamicStack               = Field(11 | 1<<8) // code object V5+, after LLVM 14
	KDPropReserved1                      = Field(12 | 4<<8)
	KDKernargPreloadSpecLength           = Field(0 | 7<<8) // of KernargPreload (u16 at byte 58), GFX90A/GFX942
	KDKernargPreloadSpecOffset           = Field(7 | 9<<8)
)

// amd_kernel_code_properties_t (amd_kernel_code_t.kernel_code_properties, u32 at byte 56).
const (
	KCPropEnableSGPRPrivateSegmentBuffer = Field(0 | 1<<8)
	KCPropEnableSGPRDispatchPtr          = Field(1 | 1<<8)
	KCPropEnableSGPRQueuePtr             = Field(2 | 1<<8)
	KCPropEnableSGPRKernargSegmentPtr    = Field(3 | 1<<8)
	KCPropEnableSGPRDispatchID           = Field(4 | 1<<8)
	KCPropEnableSGPRFlatScratchInit      = Field(5 | 1<<8)
	KCPropEnableSGPRPrivateSegmentSize   = Field(6 | 1<<8)
	KCPropEnableSGPRGridWorkgroupCountX  = Field(7 | 1<<8)
	KCPropEnableSGPRGridWorkgroupCountY  = Field(8 | 1<<8)
	KCPropEnableSGPRGridWorkgroupCountZ  = Field(9 | 1<<8)
	KCPropReserved1                      = Field(10 | 6<<8)
	KCPropEnableOrderedAppendGDS         = Field(16 | 1<<8)
	KCPropPrivateElementSize             = Field(17 | 2<<8)
	KCPropIsPtr64                        = Field(19 | 1<<8)
	KCPropIsDynamicCallstack             = Field(20 | 1<<8)
	KCPropIsDebugEnabled                 = Field(21 | 1<<8)
	KCPropIsXNACKEnabled                 = Field(22 | 1<<8)
	KCPropReserved2                      = Field(23 | 9<<8)
)

// KernelDescriptor is the AMDHSA kernel descriptor (code object V3+, 64 bytes, 64-byte aligned); the
// AQL kernel_object of an LLVM-compiled kernel is its address. LLVM 14 declares bytes 58..63 as
// reserved2[6]; AMDGPUUsage (and LLVM 17+) put kernarg_preload (u16) at 58 and keep 60..63 reserved.
type KernelDescriptor struct {
	GroupSegmentFixedSize     uint32
	PrivateSegmentFixedSize   uint32
	KernargSize               uint32
	Reserved0                 [4]uint8
	KernelCodeEntryByteOffset int64
	Reserved1                 [20]uint8
	ComputePgmRsrc3           uint32
	ComputePgmRsrc1           uint32
	ComputePgmRsrc2           uint32
	KernelCodeProperties      uint16
	KernargPreload            uint16
	Reserved2                 [4]uint8
}

// Kernel descriptor byte offsets (LLVM *_OFFSET enumerators; KernargPreload per AMDGPUUsage).
const (
	KDGroupSegmentFixedSizeOffset     = 0
	KDPrivateSegmentFixedSizeOffset   = 4
	KDKernargSizeOffset               = 8
	KDReserved0Offset                 = 12
	KDKernelCodeEntryByteOffsetOffset = 16
	KDReserved1Offset                 = 24
	KDComputePgmRsrc3Offset           = 44
	KDComputePgmRsrc1Offset           = 48
	KDComputePgmRsrc2Offset           = 52
	KDKernelCodePropertiesOffset      = 56
	KDKernargPreloadOffset            = 58
	KDReserved2Offset                 = 60
)

// Decode fills d from the first 64 bytes of b.
func (d *KernelDescriptor) Decode(b []byte) error {
	if len(b) < KernelDescriptorSize {
		return ErrShort
	}
	*d = KernelDescriptor{
		GroupSegmentFixedSize: le.Uint32(b[0:]), PrivateSegmentFixedSize: le.Uint32(b[4:]), KernargSize: le.Uint32(b[8:]),
		KernelCodeEntryByteOffset: int64(le.Uint64(b[16:])),
		ComputePgmRsrc3:           le.Uint32(b[44:]), ComputePgmRsrc1: le.Uint32(b[48:]), ComputePgmRsrc2: le.Uint32(b[52:]),
		KernelCodeProperties: le.Uint16(b[56:]), KernargPreload: le.Uint16(b[58:]),
	}
	copy(d.Reserved0[:], b[12:16])
	copy(d.Reserved1[:], b[24:44])
	copy(d.Reserved2[:], b[60:64])
	return nil
}

// Encode writes d into the first 64 bytes of b.
func (d *KernelDescriptor) Encode(b []byte) error {
	if len(b) < KernelDescriptorSize {
		return ErrShort
	}
	le.PutUint32(b[0:], d.GroupSegmentFixedSize)
	le.PutUint32(b[4:], d.PrivateSegmentFixedSize)
	le.PutUint32(b[8:], d.KernargSize)
	copy(b[12:16], d.Reserved0[:])
	le.PutUint64(b[16:], uint64(d.KernelCodeEntryByteOffset))
	copy(b[24:44], d.Reserved1[:])
	le.PutUint32(b[44:], d.ComputePgmRsrc3)
	le.PutUint32(b[48:], d.ComputePgmRsrc1)
	le.PutUint32(b[52:], d.ComputePgmRsrc2)
	le.PutUint16(b[56:], d.KernelCodeProperties)
	le.PutUint16(b[58:], d.KernargPreload)
	copy(b[60:64], d.Reserved2[:])
	return nil
}

// EntryPoint is the kernel's first instruction: descriptor address + KERNEL_CODE_ENTRY_BYTE_OFFSET
// (possibly negative; must be 256-byte aligned, reported by ok).
func (d *KernelDescriptor) EntryPoint(kdAddr uint64) (pc uint64, ok bool) {
	pc = kdAddr + uint64(d.KernelCodeEntryByteOffset)
	return pc, pc%AMDISAAlignBytes == 0
}

// ControlDirectives is amd_control_directives_t (128 bytes).
type ControlDirectives struct {
	EnabledControlDirectives uint64
	EnableBreakExceptions    uint16
	EnableDetectExceptions   uint16
	MaxDynamicGroupSize      uint32
	MaxFlatGridSize          uint64
	MaxFlatWorkgroupSize     uint32
	RequiredDim              uint8
	Reserved1                [3]uint8
	RequiredGridSize         [3]uint64
	RequiredWorkgroupSize    [3]uint32
	Reserved2                [60]uint8
}

// KernelCode is amd_kernel_code_t (code object V2, 256 bytes, 64-byte aligned). Its CP-used fields
// (entry offset @16, RSRC1/2 @48/52, properties @56) sit at the kernel descriptor's offsets.
type KernelCode struct {
	VersionMajor                           uint32
	VersionMinor                           uint32
	MachineKind                            uint16
	MachineVersionMajor                    uint16
	MachineVersionMinor                    uint16
	MachineVersionStepping                 uint16
	KernelCodeEntryByteOffset              int64
	KernelCodePrefetchByteOffset           int64
	KernelCodePrefetchByteSize             uint64
	MaxScratchBackingMemoryByteSize        uint64
	ComputePgmRsrc1                        uint32
	ComputePgmRsrc2                        uint32
	KernelCodeProperties                   uint32
	WorkitemPrivateSegmentByteSize         uint32
	WorkgroupGroupSegmentByteSize          uint32
	GDSSegmentByteSize                     uint32
	KernargSegmentByteSize                 uint64
	WorkgroupFbarrierCount                 uint32
	WavefrontSGPRCount                     uint16
	WorkitemVGPRCount                      uint16
	ReservedVGPRFirst                      uint16
	ReservedVGPRCount                      uint16
	ReservedSGPRFirst                      uint16
	ReservedSGPRCount                      uint16
	DebugWavefrontPrivateSegmentOffsetSGPR uint16
	DebugPrivateSegmentBufferSGPR          uint16
	KernargSegmentAlignment                uint8
	GroupSegmentAlignment                  uint8
	PrivateSegmentAlignment                uint8
	WavefrontSize                          uint8
	CallConvention                         int32
	Reserved1                              [12]uint8
	RuntimeLoaderKernelSymbol              uint64
	ControlDirectives                      ControlDirectives
}

// Decode decodes a fixed-layout structure of this package (AMDQueue, Queue, Signal, KernelCode,
// ControlDirectives, or any packet type) from little-endian bytes. Every such type has no implicit
// padding (checked by tests), so the encoding/binary layout equals the C layout.
func Decode(b []byte, v any) error {
	if n := binary.Size(v); n < 0 || len(b) < n {
		if n < 0 {
			return errors.New("hsa: Decode: not a fixed-size structure")
		}
		return ErrShort
	}
	_, err := binary.Decode(b, le, v)
	return err
}

// Encode is the inverse of Decode; b must hold the structure.
func Encode(b []byte, v any) error {
	if n := binary.Size(v); n < 0 || len(b) < n {
		if n < 0 {
			return errors.New("hsa: Encode: not a fixed-size structure")
		}
		return ErrShort
	}
	_, err := binary.Encode(b, le, v)
	return err
}
