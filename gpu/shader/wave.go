package shader

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/kfdemu/kfdemu/gpu/aql"
)

// Memory is the GPU virtual address space a dispatch runs against (the emulated GPUVM). Addresses are GPU
// virtual addresses; an error from any method becomes a *Fault that stops the wave.
type Memory interface {
	Read(va uint64, p []byte) error
	Write(va uint64, p []byte) error
	// Atomic performs an atomic read-modify-write of size (4 or 8) bytes at va, little-endian: it
	// stores f(old) and returns old. It must be atomic with respect to every other access of the Memory.
	Atomic(va uint64, size int, f func(old uint64) uint64) (uint64, error)
}

// VecMemory is a Memory that moves several pieces, each within one page, in one call (mmu.Port's
// ReadV and WriteV: the lanes of a wave on distinct pages of client memory cost one
// process_vm_readv/writev). The pieces move as Read or Write would move them one after the other;
// n is how many did before err, which is the error of piece n.
type VecMemory interface {
	ReadV(vas []uint64, bufs [][]byte) (n int, err error)
	WriteV(vas []uint64, bufs [][]byte) (n int, err error)
}

// Fault is a memory access error of a wave: the access at Addr failed (unmapped, permission, ...).
type Fault struct {
	Addr  uint64
	Write bool
	PC    uint64
	Inst  string // disassembly of the faulting instruction
	Err   error  // the Memory error
}

func (f *Fault) Error() string {
	op := "read"
	if f.Write {
		op = "write"
	}
	return fmt.Sprintf("shader: memory fault: %s of %#x at pc %#x (%s): %v", op, f.Addr, f.PC, f.Inst, f.Err)
}

func (f *Fault) Unwrap() error { return f.Err }

// Is makes a wave's fault a memory violation for the queue (aql.QueueInactiveCode).
func (f *Fault) Is(target error) bool { return target == aql.ErrMemoryViolation }

// ErrUnimplemented is wrapped by the error a wave stops with at an instruction the interpreter lacks.
var ErrUnimplemented = errors.New("shader: unimplemented instruction")

// ErrIllegal is wrapped by the error of an undecodable instruction.
var ErrIllegal = errors.New("shader: illegal instruction")

// ErrInternal wraps a panic inside an instruction's routine: a bug of the interpreter, not of the
// program. The wave stops (the daemon never panics on client code) and fuzzers treat it as a failure.
var ErrInternal = errors.New("shader: internal error")

// ErrStepLimit stops a wave that executed DispatchParams.MaxWaveInstructions instructions (hang guard).
var ErrStepLimit = errors.New("shader: wave instruction limit reached")

// WaveError stops a wave: an unimplemented or illegal instruction, or an unsupported operand.
type WaveError struct {
	PC   uint64
	Inst string
	Err  error
	// Stack is the goroutine's stack at the panic of an ErrInternal error (runtime/debug.Stack),
	// for the daemon's log: the panic value alone rarely names the routine. Nil otherwise.
	Stack []byte
}

func (e *WaveError) Error() string {
	return fmt.Sprintf("shader: wave stopped at pc %#x (%s): %v", e.PC, e.Inst, e.Err)
}

func (e *WaveError) Unwrap() error { return e.Err }

// TrapError is s_trap with a code that halts the wave (llvm.trap = 2, breakpoint = 1, reserved codes):
// CO V4+ trap handler ABI (AMDGPUUsage "Trap Handler ABI"). The queue goes to the error state.
type TrapError struct {
	PC   uint64
	Code uint8
}

func (e *TrapError) Error() string {
	return fmt.Sprintf("shader: s_trap %d at pc %#x", e.Code, e.PC)
}

// Is makes a trap a debug trap (aql.ErrDebugTrap: queue-inactive code 0x80000000, which ROCr reports
// as HSA_STATUS_ERROR_EXCEPTION), as ROCr's trap handler reports s_trap 2 on a GPU: a failed
// device-side assert aborts with "HSA_STATUS_ERROR_EXCEPTION ... code: 0x1016", not as an illegal
// instruction.
func (e *TrapError) Is(target error) bool { return target == aql.ErrDebugTrap }

const lanes = 64

// wave is one 64-lane wavefront.
type wave struct {
	s     [128]uint32 // scalar operands 0..127 by operand code (SGPRs, FLAT_SCRATCH, VCC, TTMP, M0, EXEC)
	scc   bool
	v     [][lanes]uint32 // 256 VGPRs then 256 AGPRs (gfx90a unified file)
	pc    uint64
	id    int // wave index in the work-group
	lane  int // the lane a VALU per-lane function is computing (v32/v64 set it)
	done  bool
	bar   bool // waiting at s_barrier
	yield bool // s_sleep: the wave's turn ends
	priv  bool // STATUS.PRIV: in the trap handler (trap.go)
	// trapsts is SQ_WAVE_TRAPSTS as the model keeps it: the address-watch exception bits of the
	// last trap (trap.go).
	trapsts uint32
	// block, if not nil, stalls the wave until it is closed (a GWS semaphore or barrier); gw is
	// its waiter entry.
	block <-chan struct{}
	gw    *waiter
	cur   *cinst // the decoded instruction at pc, if known
	err   error  // an operand error recorded by fail, returned by step
	g     *group
	d     *dispatch
	tmp   [8][lanes]uint32 // constant broadcasts (0-2), modifier copy (3), flushed or SDWA-extracted sources (4-6), results of a dense lane loop (7)
	tmp64 [4][lanes]uint64 // 64-bit sources (0-2), results of a dense lane loop (3)
	mbuf  [64]byte         // memory transfer buffer of one access (a stack array would escape through Memory)
	bbuf  [1024]byte       // transfer buffer of a batched GLOBAL access (64 lanes x 4 dwords)
	runs  [lanes]laneRun   // globalBatch's plan
	kc    kcLast           // the wave's last scalar cache lines (kcache.go)
	steps uint64
	// pollKey is the instruction and address of the wave's last LDS read or coherent load;
	// polled says it repeated the one before, so the next s_waitcnt on memory ends the turn (poll.go).
	pollKey uint64
	polled  bool
	mode    uint32 // hardware MODE register (FP_ROUND[3:0], FP_DENORM[7:4], DX10_CLAMP[8], IEEE[9], ..., GPR_IDX_EN[27], VSKIP[28], CSP[31:29])
}

// laneRun is a run of n consecutive lanes from l whose elements are contiguous from address a.
type laneRun struct {
	l, n int
	a    uint64
}

// maxVRegs is the unified register file a wave can address: 256 VGPRs then 256 AGPRs (a[n] is
// register 256+n).
const maxVRegs = 512

// fit reports whether registers [0, n) exist, growing the wave's file to the whole 512 when a
// program addresses past what its descriptor allocated (hardware does not check the bound; the
// allocation only decides occupancy).
func (w *wave) fit(n int) bool {
	if n <= len(w.v) {
		return true
	}
	if n > maxVRegs {
		return false
	}
	v := make([][lanes]uint32, maxVRegs)
	copy(v, w.v)
	w.v = v
	return true
}

func (w *wave) exec() uint64     { return uint64(w.s[opExecLo]) | uint64(w.s[opExecHi])<<32 }
func (w *wave) setExec(m uint64) { w.s[opExecLo], w.s[opExecHi] = uint32(m), uint32(m>>32) }
func (w *wave) vcc() uint64      { return uint64(w.s[opVCCLo]) | uint64(w.s[opVCCHi])<<32 }

func (w *wave) sget64(code uint16) uint64 {
	if code < 127 {
		return uint64(w.s[code]) | uint64(w.s[code+1])<<32
	}
	return 0
}

func (w *wave) sset(code uint16, v uint32) {
	if code < 128 && code != 125 {
		w.s[code] = v
	}
}

func (w *wave) sset64(code uint16, v uint64) {
	if code < 127 {
		w.s[code], w.s[code+1] = uint32(v), uint32(v>>32)
	}
}

// Operand kinds for inline constants and literals.
const (
	k32  = iota // 32-bit integer or f32
	k64i        // 64-bit integer
	k64f        // f64
	k16f        // f16
)

var inlF32 = [...]uint32{0x3f000000, 0xbf000000, 0x3f800000, 0xbf800000, 0x40000000, 0xc0000000, 0x40800000, 0xc0800000, 0x3e22f983}
var inlF64 = [...]uint64{0x3fe0000000000000, 0xbfe0000000000000, 0x3ff0000000000000, 0xbff0000000000000,
	0x4000000000000000, 0xc000000000000000, 0x4010000000000000, 0xc010000000000000, 0x3fc45f306dc9c882}
var inlF16 = [...]uint32{0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118}

// scalar reads a non-VGPR operand (SGPR, special register, inline constant, literal) as a 64-bit value.
func (w *wave) scalar(in *Inst, code uint16, kind int) (uint64, error) {
	switch {
	case code < 128:
		if kind == k64i || kind == k64f {
			return w.sget64(code), nil
		}
		return uint64(w.s[code]), nil
	case code <= 192:
		return uint64(code - 128), nil
	case code <= 208:
		v := int64(192 - int(code))
		if kind == k64i || kind == k64f {
			return uint64(v), nil
		}
		return uint64(uint32(v)), nil
	case code >= 240 && code <= 248:
		switch kind {
		case k64f, k64i:
			// A 64-bit operand's float inline constant is the f64 value whatever the operation's
			// type (LLVM's isInlinableLiteral64 for integer and float 64-bit operands alike):
			// clang -O0 materializes the 1.0 of f64 division as s_mov_b64 s[8:9], 1.0.
			return inlF64[code-240], nil
		case k16f:
			return uint64(inlF16[code-240]), nil
		}
		return uint64(inlF32[code-240]), nil
	case code == opLiteral:
		if kind == k64f {
			return uint64(in.Lit) << 32, nil
		}
		return uint64(in.Lit), nil
	case code == opSharedBase, code == opPrivBase:
		base := w.d.l.ap.SharedBase
		if code == opPrivBase {
			base = w.d.l.ap.PrivateBase
		}
		if kind == k64i || kind == k64f {
			return base, nil
		}
		return base >> 32, nil
	case code == opSharedLimit, code == opPrivLimit:
		base := w.d.l.ap.SharedBase
		if code == opPrivLimit {
			base = w.d.l.ap.PrivateBase
		}
		lim := base | 0xffffffff
		if kind == k64i || kind == k64f {
			return lim, nil
		}
		return lim >> 32, nil
	case code == opVCCZ:
		return b2u(w.vcc() == 0), nil
	case code == opEXECZ:
		return b2u(w.exec() == 0), nil
	case code == opSCC:
		return b2u(w.scc), nil
	}
	return 0, fmt.Errorf("%w: operand %s", ErrUnimplemented, regName(code, 1))
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// vsrc returns the 64 lanes of a 32-bit source operand; constants are broadcast into w.tmp[slot].
func (w *wave) vsrc(in *Inst, code uint16, kind, slot int) (*[lanes]uint32, error) {
	if code >= opVGPR0 {
		n := int(code - opVGPR0)
		if !w.fit(n + 1) {
			return nil, fmt.Errorf("%w: register %s beyond the allocation", ErrIllegal, regName(code, 1))
		}
		return &w.v[n], nil
	}
	c, err := w.scalar(in, code, kind)
	if err != nil {
		return nil, err
	}
	t := &w.tmp[slot]
	fillRow(t, uint32(c))
	return t, nil
}

// vsrc64 returns the 64 lanes of a 64-bit source operand in w.tmp64[slot].
func (w *wave) vsrc64(in *Inst, code uint16, kind, slot int) (*[lanes]uint64, error) {
	t := &w.tmp64[slot]
	if code >= opVGPR0 {
		n := int(code - opVGPR0)
		if !w.fit(n + 2) {
			return nil, fmt.Errorf("%w: register %s beyond the allocation", ErrIllegal, regName(code, 2))
		}
		lo, hi := &w.v[n], &w.v[n+1]
		for i := range t {
			t[i] = uint64(lo[i]) | uint64(hi[i])<<32
		}
		return t, nil
	}
	c, err := w.scalar(in, code, kind)
	if err != nil {
		return nil, err
	}
	for i := range t {
		t[i] = c
	}
	return t, nil
}

func (w *wave) vdst(code uint16, n int) (*[lanes]uint32, error) {
	if code < opVGPR0 || !w.fit(int(code-opVGPR0)+n) {
		return nil, fmt.Errorf("%w: destination %s", ErrIllegal, regName(code, n))
	}
	return &w.v[code-opVGPR0], nil
}

func (w *wave) setV64(code uint16, lane int, v uint64) {
	n := code - opVGPR0
	w.v[n][lane] = uint32(v)
	w.v[n+1][lane] = uint32(v >> 32)
}

// forLanes calls f for each active lane.
func forLanes(m uint64, f func(l int)) {
	for m != 0 {
		l := bits.TrailingZeros64(m)
		m &= m - 1
		f(l)
	}
}

func f32(u uint32) float32 { return math.Float32frombits(u) }
func u32(f float32) uint32 { return math.Float32bits(f) }
func f64(u uint64) float64 { return math.Float64frombits(u) }
func u64(f float64) uint64 { return math.Float64bits(f) }

// baseName strips the encoding suffix LLVM appends (_e32, _e64).
func baseName(n string) string {
	n = strings.TrimSuffix(n, "_e32")
	return strings.TrimSuffix(n, "_e64")
}

// lane32 is a 32-bit source read lane by lane: a register row, or a constant when r is nil. Unlike
// vsrc it broadcasts nothing, so an instruction with few active lanes does work for those only.
type lane32 struct {
	r *[lanes]uint32
	c uint32
}

func (s *lane32) at(l int) uint32 {
	if s.r != nil {
		return s.r[l]
	}
	return s.c
}

// lane64 is a 64-bit source read lane by lane: a register pair, or a constant when lo is nil.
type lane64 struct {
	lo, hi *[lanes]uint32
	c      uint64
}

func (s *lane64) at(l int) uint64 {
	if s.lo != nil {
		return uint64(s.lo[l]) | uint64(s.hi[l])<<32
	}
	return s.c
}

// src32 is vsrc without the broadcast.
func (w *wave) src32(in *Inst, code uint16, kind int) (lane32, error) {
	if code >= opVGPR0 {
		n := int(code - opVGPR0)
		if !w.fit(n + 1) {
			return lane32{}, fmt.Errorf("%w: register %s beyond the allocation", ErrIllegal, regName(code, 1))
		}
		return lane32{r: &w.v[n]}, nil
	}
	switch {
	case code < 128: // an SGPR or special register up to exec_hi: scalar's (low) dword for every kind
		return lane32{c: w.s[code]}, nil
	case code <= 192: // inline 0..64
		return lane32{c: uint32(code - 128)}, nil
	}
	c, err := w.scalar(in, code, kind)
	return lane32{c: uint32(c)}, err
}

// vreg is the row of a VGPR/AGPR operand inside the wave's register file, or nil (any other operand,
// or one src32 must check): the inlined first test of the hot paths' source reads.
func (w *wave) vreg(code uint16) *[lanes]uint32 {
	if n := int(code) - opVGPR0; uint(n) < uint(len(w.v)) {
		return &w.v[n]
	}
	return nil
}

// src64 is vsrc64 without the copy.
func (w *wave) src64(in *Inst, code uint16, kind int) (lane64, error) {
	if code >= opVGPR0 {
		n := int(code - opVGPR0)
		if !w.fit(n + 2) {
			return lane64{}, fmt.Errorf("%w: register %s beyond the allocation", ErrIllegal, regName(code, 2))
		}
		return lane64{lo: &w.v[n], hi: &w.v[n+1]}, nil
	}
	c, err := w.scalar(in, code, kind)
	return lane64{c: c}, err
}

// denseLanes is the number of active lanes from which a VALU operation computes every lane in a
// loop without per-lane mask tests and keeps the active ones (merge); below it, it visits only the
// active lanes (bits.TrailingZeros64 iteration).
const denseLanes = 16

// row returns the 64 lanes of s, a constant broadcast into w.tmp[slot].
func (w *wave) row(s lane32, slot int) *[lanes]uint32 {
	if s.r != nil {
		return s.r
	}
	t := &w.tmp[slot]
	for i := range t {
		t[i] = s.c
	}
	return t
}

// merge writes the lanes of r that m selects to dst (all of them when m is full).
func (w *wave) merge(dst, r *[lanes]uint32, m uint64) {
	if m == ^uint64(0) {
		*dst = *r
		return
	}
	for l := range dst {
		if m>>l&1 != 0 {
			dst[l] = r[l]
		}
	}
}

func (w *wave) fault(in *Inst, addr uint64, write bool, err error) error {
	return &Fault{Addr: addr, Write: write, PC: w.pc, Inst: in.String(), Err: err}
}
