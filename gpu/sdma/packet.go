package sdma

import "encoding/binary"

// SDMA v4 opcodes (linux drivers/gpu/drm/amd/amdgpu/vega10_sdma_pkt_open.h, SDMA_OP_*).
const (
	OpNOP        = 0
	OpCopy       = 1
	OpWrite      = 2
	OpIndirect   = 4
	OpFence      = 5
	OpTrap       = 6
	OpSem        = 7
	OpPollRegMem = 8
	OpCondExe    = 9
	OpAtomic     = 10
	OpConstFill  = 11
	OpPTEPDE     = 12
	OpTimestamp  = 13
	OpSRBMWrite  = 14
	OpPreExe     = 15
	OpDummyTrap  = 16
	OpGCRReq     = 17 // SDMA v5 (gfx10, navi10_sdma_pkt_open.h SDMA_OP_GCR_REQ); not an SDMA v4 packet
)

// Sub-opcodes (vega10_sdma_pkt_open.h SDMA_SUBOP_*).
const (
	SubCopyLinear          = 0
	SubCopyTiled           = 1
	SubCopySOA             = 3
	SubCopyLinearSubWindow = 4 // ROCr: SDMA_SUBOP_COPY_LINEAR_RECT
	SubCopyTiledSubWindow  = 5
	SubCopyT2TSubWindow    = 6
	SubCopyDirtyPage       = 7
	SubCopyLinearPhy       = 8

	SubWriteLinear = 0
	SubWriteTiled  = 1

	SubPollRegMem       = 0
	SubPollRegWriteMem  = 1
	SubPollDbitWriteMem = 2
	SubPollMemVerify    = 3

	SubConstFill     = 0
	SubDataFillMulti = 1

	SubTimestampSet       = 0 // SET (the local timestamp)
	SubTimestampGet       = 1 // GET (local)
	SubTimestampGetGlobal = 2 // GET_GLOBAL
)

// Header bits (vega10_sdma_pkt_open.h *_HEADER_*_shift).
const (
	copyEncryptBit   = 1 << 16 // SDMA_PKT_COPY_LINEAR_HEADER_encrypt_shift 16
	tmzBit           = 1 << 18 // *_HEADER_tmz_shift 18 (copy, write, atomic)
	copyBroadcastBit = 1 << 27 // SDMA_PKT_COPY_LINEAR_HEADER_broadcast_shift 27
	pollHDPFlushBit  = 1 << 26 // SDMA_PKT_POLL_REGMEM_HEADER_hdp_flush_shift 26
	pollMemBit       = 1 << 31 // SDMA_PKT_POLL_REGMEM_HEADER_mem_poll_shift 31
	atomicLoopBit    = 1 << 16 // SDMA_PKT_ATOMIC_HEADER_loop_shift 16
)

// Field limits.
const (
	MaxCopyBytes   = 1 << 22 // COPY_LINEAR count is 22 bits of "bytes - 1" (COUNT_count_mask 0x3FFFFF); 30 on some engines (Config.WideCopyCount)
	MaxFillBytes   = 1 << 22 // CONSTANT_FILL count is 22 bits (COUNT_count_mask 0x3FFFFF)
	MaxWriteDwords = 1 << 20 // WRITE_UNTILED count is 20 bits of "dwords - 1" (DW_3_count_mask 0x000FFFFF)
	MaxNOPCount    = 1<<14 - 1
	RetryForever   = 0xfff // POLL_REGMEM retry_count that never expires (ROCr BuildPollCommand)
)

// Fixed packet sizes in dwords (vega10_sdma_pkt_open.h field offsets; ROCr sdma_registers.h).
const (
	copyLinearDwords    = 7
	copyBroadcastDwords = 9 // SDMA_PKT_COPY_BROADCAST_LINEAR: a second DST_ADDR pair
	copySubWindowDwords = 13
	writeHeaderDwords   = 4 // data follows at DW 4
	fenceDwords         = 4
	trapDwords          = 2
	pollDwords          = 6
	atomicDwords        = 8
	fillDwords          = 5
	timestampDwords     = 3
	maxFixedDwords      = copySubWindowDwords
)

// PollFunc is POLL_REGMEM's compare function: (memory & mask) func value.
type PollFunc uint8

// Compare functions of POLL_REGMEM (ROCr BuildPollCommand: 3 = "IsEqual").
const (
	PollAlways PollFunc = iota
	PollLess
	PollLessEqual
	PollEqual
	PollNotEqual
	PollGreaterEqual
	PollGreater
)

// Atomic operations of the ATOMIC packet: the TC atomic opcodes (TC_OP in the gfx9 register
// enums, the same table ROCr's PM4 ATOMIC_MEM uses; ROCr sdma_registers.h SDMA_ATOMIC_ADD64 = 47).
// The *_RTN variants return the old value to the engine; a *_RTN op plus 0x40 is the non-returning
// form. 32-bit ops are 0x00-0x1f, 64-bit ops 0x20-0x3f.
const (
	AtomicSwap32    = 0x07
	AtomicCmpSwap32 = 0x08
	AtomicAdd32     = 0x0f
	AtomicSub32     = 0x10
	AtomicSMin32    = 0x11
	AtomicUMin32    = 0x12
	AtomicSMax32    = 0x13
	AtomicUMax32    = 0x14
	AtomicAnd32     = 0x15
	AtomicOr32      = 0x16
	AtomicXor32     = 0x17
	AtomicInc32     = 0x18
	AtomicDec32     = 0x19
	AtomicSwap64    = 0x27
	AtomicCmpSwap64 = 0x28
	AtomicAdd64     = 0x2f
	AtomicSub64     = 0x30
	AtomicSMin64    = 0x31
	AtomicUMin64    = 0x32
	AtomicSMax64    = 0x33
	AtomicUMax64    = 0x34
	AtomicAnd64     = 0x35
	AtomicOr64      = 0x36
	AtomicXor64     = 0x37
	AtomicInc64     = 0x38
	AtomicDec64     = 0x39
	AtomicNoReturn  = 0x40 // added to an op: the non-returning variant (TC_OP_ATOMIC_ADD_64 = 0x6f)
)

func header(op, sub uint32) uint32 { return op&0xff | (sub&0xff)<<8 }

func lo32(v uint64) uint32 { return uint32(v) }
func hi32(v uint64) uint32 { return uint32(v >> 32) }

func appendDwords(b []byte, dw ...uint32) []byte {
	for _, d := range dw {
		b = binary.LittleEndian.AppendUint32(b, d)
	}
	return b
}

// The Append* functions encode one packet the way ROCr 5.2.3 (amd_blit_sdma.cpp, BlitSdma<uint64_t,
// true, -1>: counts are "size - 1" on gfx9) and kfdtest (SDMAPacket.cpp, SDMA_COUNT) build them.
// They do not validate their arguments beyond masking them to the field widths.

// AppendNOP appends a NOP whose header skips count further dwords (zeros): 1+count dwords in all.
func AppendNOP(b []byte, count int) []byte {
	b = appendDwords(b, header(OpNOP, 0)|uint32(count&MaxNOPCount)<<16)
	for i := 0; i < count&MaxNOPCount; i++ {
		b = appendDwords(b, 0)
	}
	return b
}

// AppendCopyLinear appends COPY_LINEAR of n bytes (1 <= n <= MaxCopyBytes).
func AppendCopyLinear(b []byte, dst, src uint64, n uint32) []byte {
	return appendDwords(b, header(OpCopy, SubCopyLinear), (n-1)&(MaxCopyBytes-1), 0,
		lo32(src), hi32(src), lo32(dst), hi32(dst))
}

// AppendCopyBroadcast appends a broadcast COPY_LINEAR of n bytes from src to both dst1 and dst2
// (kfdtest SDMACopyDataPacket with two destinations).
func AppendCopyBroadcast(b []byte, dst1, dst2, src uint64, n uint32) []byte {
	return appendDwords(b, header(OpCopy, SubCopyLinear)|copyBroadcastBit, (n-1)&(MaxCopyBytes-1), 0,
		lo32(src), hi32(src), lo32(dst1), hi32(dst1), lo32(dst2), hi32(dst2))
}

// SubWindow describes COPY_LINEAR_SUB_WINDOW (ROCr SDMA_PKT_COPY_LINEAR_RECT). Offsets, pitches
// and the rectangle are in elements of 1<<Element bytes; pitches and the rectangle are the real
// sizes (the encoder stores them minus one).
type SubWindow struct {
	Element                 uint32 // log2 of the element size, 0..4
	Src, Dst                uint64 // dword-aligned base addresses
	SrcX, SrcY, SrcZ        uint32
	DstX, DstY, DstZ        uint32
	SrcPitch, SrcSlicePitch uint32 // elements per row, elements per slice (slice pitch 0: 2-D)
	DstPitch, DstSlicePitch uint32
	Width, Height, Depth    uint32 // rectangle in elements, rows, slices (each >= 1)
}

func minus1(v, mask uint32) uint32 { return (v - 1) & mask }

// AppendCopySubWindow appends COPY_LINEAR_SUB_WINDOW (ROCr BuildCopyRectCommand).
func AppendCopySubWindow(b []byte, w SubWindow) []byte {
	slice := func(v uint32) uint32 {
		if v == 0 {
			return 0
		}
		return minus1(v, 1<<28-1)
	}
	return appendDwords(b, header(OpCopy, SubCopyLinearSubWindow)|(w.Element&7)<<29,
		lo32(w.Src), hi32(w.Src),
		w.SrcX&0x3fff|(w.SrcY&0x3fff)<<16,
		w.SrcZ&0x7ff|minus1(w.SrcPitch, 1<<19-1)<<13,
		slice(w.SrcSlicePitch),
		lo32(w.Dst), hi32(w.Dst),
		w.DstX&0x3fff|(w.DstY&0x3fff)<<16,
		w.DstZ&0x7ff|minus1(w.DstPitch, 1<<19-1)<<13,
		slice(w.DstSlicePitch),
		minus1(w.Width, 0x3fff)|minus1(w.Height, 0x3fff)<<16,
		minus1(w.Depth, 0x7ff))
}

// AppendWrite appends WRITE_UNTILED (linear) of the given dwords (1..MaxWriteDwords) to dst
// (kfdtest SDMAWriteDataPacket).
func AppendWrite(b []byte, dst uint64, data []uint32) []byte {
	b = appendDwords(b, header(OpWrite, SubWriteLinear), lo32(dst), hi32(dst), uint32(len(data)-1)&(MaxWriteDwords-1))
	return appendDwords(b, data...)
}

// FillSize is CONSTANT_FILL's fillsize: the fill element is 1<<FillSize bytes.
type FillSize uint32

// Fill element sizes (kfdtest SDMAFillDataPacket: 2 = DW fill, 0 = byte fill).
const (
	FillByte  FillSize = 0
	FillWord  FillSize = 1
	FillDword FillSize = 2
)

// AppendConstFill appends CONSTANT_FILL of n bytes (a multiple of the element size) with the low
// 1<<size bytes of value, count encoded as kfdtest does (n - 1).
func AppendConstFill(b []byte, dst uint64, value uint32, size FillSize, n uint32) []byte {
	return appendDwords(b, header(OpConstFill, SubConstFill)|uint32(size&3)<<30,
		lo32(dst), hi32(dst), value, (n-1)&(MaxFillBytes-1))
}

// AppendFence appends FENCE: store the 32-bit value at addr.
func AppendFence(b []byte, addr uint64, value uint32) []byte {
	return appendDwords(b, header(OpFence, 0), lo32(addr), hi32(addr), value)
}

// AppendTrap appends TRAP with a 28-bit interrupt context (kfdtest: the event ID).
func AppendTrap(b []byte, intContext uint32) []byte {
	return appendDwords(b, header(OpTrap, 0), intContext&0x0fffffff)
}

// Poll describes POLL_REGMEM.
type Poll struct {
	Addr        uint64 // memory address (MemPoll) or register (not modelled)
	Value, Mask uint32
	Func        PollFunc
	Interval    uint16 // poll interval field
	Retry       uint16 // retry count, 12 bits; RetryForever (0xfff) never expires
	MemPoll     bool
	HDPFlush    bool
}

// AppendPoll appends POLL_REGMEM (ROCr BuildPollCommand: MemPoll, PollEqual, mask ~0, interval 4,
// retry 0xfff).
func AppendPoll(b []byte, p Poll) []byte {
	h := header(OpPollRegMem, SubPollRegMem) | uint32(p.Func&7)<<28
	if p.MemPoll {
		h |= pollMemBit
	}
	if p.HDPFlush {
		h |= pollHDPFlushBit
	}
	return appendDwords(b, h, lo32(p.Addr), hi32(p.Addr), p.Value, p.Mask,
		uint32(p.Interval)|uint32(p.Retry&0xfff)<<16)
}

// Atomic describes the ATOMIC packet.
type Atomic struct {
	Op           uint32 // TC atomic opcode (Atomic*)
	Addr         uint64
	Src, Cmp     uint64
	Loop         bool   // CMPSWAP: retry until the compare succeeds
	LoopInterval uint32 // 13 bits
}

// AppendAtomic appends ATOMIC (ROCr BuildAtomicDecrementCommand: AtomicAdd64 with src -1).
func AppendAtomic(b []byte, a Atomic) []byte {
	h := header(OpAtomic, 0) | (a.Op&0x7f)<<25
	if a.Loop {
		h |= atomicLoopBit
	}
	return appendDwords(b, h, lo32(a.Addr), hi32(a.Addr), lo32(a.Src), hi32(a.Src),
		lo32(a.Cmp), hi32(a.Cmp), a.LoopInterval&0x1fff)
}

// AppendTimestampGet appends TIMESTAMP GET_GLOBAL (global=true, ROCr
// BuildGetGlobalTimestampCommand) or GET (the local timestamp), writing 64 bits at addr.
func AppendTimestampGet(b []byte, addr uint64, global bool) []byte {
	sub := uint32(SubTimestampGet)
	if global {
		sub = SubTimestampGetGlobal
	}
	return appendDwords(b, header(OpTimestamp, sub), lo32(addr), hi32(addr))
}

// AppendTimestampSet appends TIMESTAMP SET: the local timestamp becomes v.
func AppendTimestampSet(b []byte, v uint64) []byte {
	return appendDwords(b, header(OpTimestamp, SubTimestampSet), lo32(v), hi32(v))
}
