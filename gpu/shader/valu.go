package shader

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"unsafe"
)

// Value kinds of VALU operands.
const (
	tU32 = iota
	tF32
	tU64
	tF64
	tF16
)

func kindOf(t int) int {
	switch t {
	case tU64:
		return k64i
	case tF64:
		return k64f
	case tF16:
		return k16f
	}
	return k32
}

// modF32 applies VOP3/DPP/SDWA abs and neg to source i of an f32/f16 operation (sign-bit operations).
func modBits(v uint32, in *Inst, i int, sign uint32) uint32 {
	if in.Abs>>i&1 != 0 {
		v &^= sign
	}
	if in.Neg>>i&1 != 0 {
		v ^= sign
	}
	return v
}

// checkExt refuses DPP/SDWA and VOP3 op_sel on an operation without them; the common case is
// inlined.
func (w *wave) checkExt(in *Inst) error {
	if in.Ext == extNone && (in.OpSel == 0 || in.Fmt != FmtVOP3) {
		return nil
	}
	return extErr(in)
}

func extErr(in *Inst) error {
	if in.Ext != extNone {
		return fmt.Errorf("%w: DPP/SDWA operand modifiers on this operation", ErrUnimplemented)
	}
	if in.Fmt == FmtVOP3 && in.OpSel != 0 {
		return fmt.Errorf("%w: VOP3 op_sel", ErrUnimplemented)
	}
	return nil
}

// v32 builds a 32-bit VALU operation of n sources; float kinds honour abs/neg/clamp/omod.
func v32(t, n int, f func(a, b, c uint32) uint32) execFn { return v32k(t, n, f, nil) }

// kern32 computes an operation for all 64 lanes: d = f(a, b, c) lane by lane, without a call per
// lane. d may be a, b or c.
type kern32 func(d, a, b, c *[lanes]uint32)

// kernels lists every operation's lane loop with its per-lane function (TestKernels compares them).
var kernels []kernPair

type kernPair struct {
	f func(a, b, c uint32) uint32
	k kern32
}

// v32k is v32 with k, if not nil, the operation's lane loop: it runs when many lanes are active and
// no output modifier or SDWA destination applies. Not inlined into the tables that call it: the
// routine is then compiled once, outside those large init functions, where Go's inliner gives
// calls a small budget (their copies of it called w.exec and w.vreg instead of inlining them).
//
//go:noinline
func v32k(t, n int, f func(a, b, c uint32) uint32, k kern32) execFn {
	if k != nil {
		kernels = append(kernels, kernPair{f, k})
	}
	var spec *v32spec
	if kindOf(t) == k32 { // Inst.pre holds k32 constants
		spec = &v32spec{t: t, n: n, f: f, k: k}
		if t == tF32 {
			spec.fl = 0x30
		}
	}
	fn := func(w *wave, in *Inst) error {
		if spec != nil && v32fast(w, in, spec) {
			return nil
		}
		return v32lanes(w, in, t, n, f, k)
	}
	if spec != nil && !tablesBuilt {
		v32specs[funcID(fn)] = spec
	}
	return fn
}

// v32spec is the operation of a routine v32k built: the turn loop runs its one-lane case
// (v32fast) without calling the routine (Inst.v32).
type v32spec struct {
	t, n int
	f    func(a, b, c uint32) uint32
	k    kern32
	fl   uint32 // MODE.FP_DENORM's f32 bits (0x30) for an f32 operation, else 0: v32fast flushes where they are clear
	op   uint8  // v32Add, v32Mul: f is that operation, which v32run computes without calling f (v32tag)
}

const (
	v32Call = iota // v32run calls f
	v32Add         // f32(a) + f32(b)
	v32Mul         // f32(a) * f32(b)
)

// v32tag marks the operation of the v32k routine fn (registered while the tables are built) as
// op: its f is that operation (TestV32Apply).
func v32tag(fn execFn, op uint8) execFn {
	if s := v32specs[funcID(fn)]; s != nil {
		s.op = op
	}
	return fn
}

// v32opResult is the operation op (not v32Call) of a and b: what f of a spec v32tag marked op
// computes (TestV32Tagged), without the call.
func v32opResult(op uint8, a, b uint32) uint32 {
	if op == v32Add {
		return u32(f32(a) + f32(b))
	}
	return u32(f32(a) * f32(b))
}

// v32specs maps the routines v32k built while the tables were filled to their operations; init
// gives each Op whose routine is one of them its spec (opRec.v32). Routines v32k builds later
// (inside other routines, on copies of an instruction) are not registered.
var (
	v32specs    = map[unsafe.Pointer]*v32spec{}
	tablesBuilt bool
)

// funcID is the identity of a func value (its closure record; func values do not compare).
func funcID(f execFn) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&f)) }

// v32lanes is v32k's routine past the one-lane fast path (its own function: the routine's frame
// stays small).
func v32lanes(w *wave, in *Inst, t, n int, f func(a, b, c uint32) uint32, k kern32) error {
	m := w.exec()
	if k != nil && m == ^uint64(0) && plainRows(w, in, t) {
		if a, b, c, d := w.rows3(in, n); d != nil {
			k(d, a, b, c) // the common case: register rows, no modifier, a full EXEC
			return nil
		}
		if n == 1 {
			if d := w.vreg(in.Opnd[fDst]); d != nil && in.Opnd[fSrc0] < opVGPR0 {
				return fill32(w, in, d, f) // one constant source: one result for every lane
			}
		}
	}
	if in.Ext == extNone {
		if m&(m-1) == 0 && m != 0 && in.Abs|in.Neg|in.Omod == 0 && !in.Clamp && oneLanePath {
			return v32one(w, in, t, n, f, bits.TrailingZeros64(m))
		}
		if bits.OnesCount64(m) < denseLanes {
			return v32sparse(w, in, t, n, f)
		}
	}
	return v32dense(w, in, t, n, f, k, m)
}

// v32dense is v32k's general path: many active lanes or DPP/SDWA, operands as rows (constants
// broadcast), modifiers applied, the lane loop or f per active lane. (Its own function: the
// routine's fast paths keep a small frame.)
func v32dense(w *wave, in *Inst, t, n int, f func(a, b, c uint32) uint32, k kern32, m uint64) error {
	if in.Ext == extNone || n > 2 {
		if err := w.checkExt(in); err != nil {
			return err
		}
	}
	if in.Fmt == FmtVOP3 && in.OpSel != 0 {
		return w.checkExt(in)
	}
	var src [3]*[lanes]uint32
	fs := [3]opField{fSrc0, fSrc1, fSrc2}
	writeMask := ^uint64(0)
	for i := 0; i < n; i++ {
		s, err := w.vsrc(in, in.Opnd[fs[i]], kindOf(t), i)
		if err != nil {
			return err
		}
		switch {
		case t == tF32 && w.mode&0x10 == 0 && hasDenorm32(s):
			// FP_DENORM single precision: input denormals flushed to signed zero.
			d := &w.tmp[4+i]
			for l := range d {
				d[l] = flush32(s[l])
			}
			s = d
			if in.Ext == extDPP && i == 0 {
				s, writeMask = w.applyDPP(in, s)
			}
		case in.Ext == extDPP && i == 0:
			s, writeMask = w.applyDPP(in, s)
		case in.Ext == extSDWA:
			sel, sext := in.SDWASrc0Sel, in.SDWASext0
			if i == 1 {
				sel, sext = in.SDWASrc1Sel, in.SDWASext1
			}
			if sel != selDword || sext {
				d := &w.tmp[4+i]
				for l := range d {
					d[l] = sdwaExtract(s[l], sel, sext && (t == tU32))
				}
				s = d
			}
		}
		if (t == tF32 || t == tF16) && (in.Abs>>i&1 != 0 || in.Neg>>i&1 != 0) {
			sign := uint32(0x80000000)
			if t == tF16 {
				sign = 0x8000
			}
			d := &w.tmp[3]
			if i > 0 {
				d = &w.tmp[i] // may be s itself (a constant broadcast there): modBits works in place
			}
			for l := range d {
				d[l] = modBits(s[l], in, i, sign)
			}
			if i == 0 {
				w.tmp[0] = *d
				s = &w.tmp[0]
			} else {
				s = d
			}
		}
		src[i] = s
	}
	dst, err := w.vdst(in.Opnd[fDst], 1)
	if err != nil {
		return err
	}
	a, b, c := src[0], src[1], src[2]
	if b == nil {
		b = a
	}
	if c == nil {
		c = a
	}
	clampF := in.Clamp && t == tF32
	omod := in.Omod
	sdwaDst := in.Ext == extSDWA && in.SDWADstSel != selDword
	flushOut := t == tF32 && w.mode&0x20 == 0 && !in.notF32
	m &= writeMask
	if k != nil && !clampF && omod == 0 && !sdwaDst && !flushOut {
		if m == ^uint64(0) { // the lane loops read each lane's sources before writing it
			k(dst, a, b, c)
			return nil
		}
		r := &w.tmp[7]
		k(r, a, b, c)
		w.merge(dst, r, m)
		return nil
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros64(m)
		w.lane = l
		r := f(a[l], b[l], c[l])
		if t == tF32 && (omod != 0 || clampF) {
			r = outMod32(r, omod, clampF)
		}
		if flushOut {
			r = flush32(r)
		}
		if sdwaDst {
			r = sdwaInsert(dst[l], r, in.SDWADstSel, in.SDWADstUnused)
		}
		dst[l] = r
	}
	return nil
}

// plainRows reports whether a v32k operation runs its lane loop on its operands' rows as they are:
// no DPP/SDWA, op_sel, abs/neg, clamp or omod, and no denormal flush of f32 sources or result by
// MODE.
func plainRows(w *wave, in *Inst, t int) bool {
	if in.Ext != extNone || in.Abs|in.Neg|in.Omod != 0 || in.Clamp || in.Fmt == FmtVOP3 && in.OpSel != 0 {
		return false
	}
	return t != tF32 || w.mode&0x10 != 0 && (w.mode&0x20 != 0 || in.notF32)
}

// rows3 returns the register rows of n VGPR sources (a missing one is source 0) and of the VGPR
// destination, or d nil when an operand is not a VGPR inside the file (the general path decides).
func (w *wave) rows3(in *Inst, n int) (a, b, c, d *[lanes]uint32) {
	if a = w.vreg(in.Opnd[fSrc0]); a == nil {
		return
	}
	b, c = a, a
	if n > 1 {
		if b = w.vreg(in.Opnd[fSrc1]); b == nil {
			return
		}
	}
	if n > 2 {
		if c = w.vreg(in.Opnd[fSrc2]); c == nil {
			return
		}
	}
	return a, b, c, w.vreg(in.Opnd[fDst])
}

// fill32 is a one-source lane loop under a full EXEC whose source is not a VGPR (an SGPR or a
// constant): f of it once, written to every lane of d. Only operations with a lane loop take
// it (their f is a pure function of the lane's operands, TestKernels).
func fill32(w *wave, in *Inst, d *[lanes]uint32, f func(a, b, c uint32) uint32) error {
	s, err := w.src32(in, in.Opnd[fSrc0], k32)
	if err != nil {
		return err
	}
	fillRow(d, f(s.c, s.c, s.c))
	return nil
}

// fillRow writes r to every lane of d: when d is 8-aligned (the register rows: see u64Row) as 32
// 64-bit words holding r in both halves, eight words per round, else eight lanes per round.
func fillRow(d *[lanes]uint32, r uint32) {
	if simd {
		fillAVX2(d, r)
		return
	}
	if uintptr(unsafe.Pointer(d))&7 == 0 {
		qs, v := u64Row(d)[:], uint64(r)*(1|1<<32)
		for l := 0; l < lanes/2; l += 8 {
			qs[l], qs[l+1], qs[l+2], qs[l+3], qs[l+4], qs[l+5], qs[l+6], qs[l+7] = v, v, v, v, v, v, v, v
		}
		return
	}
	ds := d[:]
	for l := 0; l < lanes; l += 8 {
		ds[l], ds[l+1], ds[l+2], ds[l+3], ds[l+4], ds[l+5], ds[l+6], ds[l+7] = r, r, r, r, r, r, r, r
	}
}

// oneLanePath enables v32one and carryOne; TestDenseMatchesLaneByLane turns it off for its
// reference runs, which take v32sparse and the carry ops' sparse loop.
var oneLanePath = true

// v32one is v32sparse for one active lane l and no abs/neg/clamp/omod (no DPP or SDWA): the
// operands are read for that lane only, without a per-source loop.
func v32one(w *wave, in *Inst, t, n int, f func(a, b, c uint32) uint32, l int) error {
	if in.OpSel != 0 && in.Fmt == FmtVOP3 {
		return w.checkExt(in)
	}
	var x [3]uint32
	var err error
	var ok bool
	if x[0], ok = w.lane1Reg(in.Opnd[fSrc0], l); !ok {
		if x[0], err = w.lane1(in, in.Opnd[fSrc0], t, l); err != nil {
			return err
		}
	}
	x[1], x[2] = x[0], x[0] // as v32: a missing source is source 0
	if n > 1 {
		if x[1], ok = w.lane1Reg(in.Opnd[fSrc1], l); !ok {
			if x[1], err = w.lane1(in, in.Opnd[fSrc1], t, l); err != nil {
				return err
			}
		}
		if n > 2 {
			if x[2], ok = w.lane1Reg(in.Opnd[fSrc2], l); !ok {
				if x[2], err = w.lane1(in, in.Opnd[fSrc2], t, l); err != nil {
					return err
				}
			}
		}
	}
	dst := w.vreg(in.Opnd[fDst])
	if dst == nil {
		if dst, err = w.vdst(in.Opnd[fDst], 1); err != nil {
			return err
		}
	}
	if t == tF32 && w.mode&0x10 == 0 { // FP_DENORM single precision: input denormals flushed
		x[0], x[1], x[2] = flush32(x[0]), flush32(x[1]), flush32(x[2])
	}
	w.lane = l
	r := f(x[0], x[1], x[2])
	if t == tF32 && w.mode&0x20 == 0 && !in.notF32 {
		r = flush32(r)
	}
	dst[l] = r
	return nil
}

// preOps are the operands of a VOP1/VOP2/VOP3 instruction as bind resolved them (resolvePre) for
// v32fast: each source a register row, an SGPR or a k32 constant (what src32 reads), the
// destination a register row. opnd is the operands resolved: a routine that runs on a copy of the
// instruction with other operands (GPR index mode, the directed v_fmac forms, ...) takes v32one.
// The copies clear modifiers, never set them (a copy that sets one must clear ok).
type preOps struct {
	opnd [4]uint16 // Opnd[fDst], Opnd[fSrc0..fSrc2]
	ok   bool      // all resolved, no abs/neg/clamp/omod/op_sel, DPP or SDWA
	run  bool      // ok, and Inst.v32 and Inst.near set (bind): v32run's instruction
	top  uint16    // 1 + the highest register row read or written
	kind [3]uint8
	x    [3]uint32 // the row, the SGPR or the constant
	dst  uint16    // the destination row
}

const (
	srcOther = iota
	srcVGPR
	srcSGPR // an operand code below 128, SGPRs to exec_hi (lane1Reg's)
	srcConst
)

func resolvePre(in *Inst) (p preOps) {
	copy(p.opnd[:], in.Opnd[:4])
	if !(in.Fmt == FmtVOP1 || in.Fmt == FmtVOP2 || in.Fmt == FmtVOP3) || in.Ext != extNone ||
		in.Abs|in.Neg|in.Omod|in.OpSel != 0 || in.Clamp || in.Opnd[fDst] < opVGPR0 {
		return p
	}
	p.dst = in.Opnd[fDst] - opVGPR0
	p.top = p.dst + 1
	for i, code := range in.Opnd[fSrc0 : fSrc2+1] {
		switch {
		case code >= opVGPR0:
			p.kind[i], p.x[i] = srcVGPR, uint32(code-opVGPR0)
			p.top = max(p.top, code-opVGPR0+1)
		case code < 128:
			p.kind[i], p.x[i] = srcSGPR, uint32(code)
		case code >= 128 && code <= 208, code >= 240 && code <= 248, code == opLiteral:
			c, _ := (*wave)(nil).scalar(in, code, k32) // inline constants and the literal: no wave read
			p.kind[i], p.x[i] = srcConst, uint32(c)
		default:
			return p
		}
	}
	p.ok = true
	return p
}

// v32fast is v32one for one active lane and an instruction whose operands bind resolved
// (Inst.pre), the operation s: lane l's sources read without decoding operand codes. false
// (nothing done): not that case. The routine of s runs it first; turn runs it for the routine.
func v32fast(w *wave, in *Inst, s *v32spec) bool {
	if in.pre.opnd != [4]uint16(in.Opnd[:4]) {
		return false
	}
	return v32own(w, in, s)
}

// v32own is v32fast for an instruction whose operands are those bind resolved (turn's: a decoded
// instruction, never a routine's copy).
func v32own(w *wave, in *Inst, s *v32spec) bool {
	m := w.exec()
	p := &in.pre
	if m&(m-1) != 0 || m == 0 || !p.ok || int(p.top) > len(w.v) || !oneLanePath {
		return false
	}
	v32lane(w, in, s, bits.TrailingZeros64(m)&(lanes-1))
	return true
}

// v32lane computes s for lane l alone on the operands bind resolved (in.pre, p.ok, p.top inside
// the register file).
func v32lane(w *wave, in *Inst, s *v32spec, l int) {
	p := &in.pre
	fm := s.fl &^ w.mode // bit 4: input denormals flushed, bit 5: output denormals flushed
	a := p.at(w, 0, l)
	b, c := a, a // as v32: a missing source is source 0
	if s.n > 1 {
		b = p.at(w, 1, l)
		if s.n > 2 {
			c = p.at(w, 2, l)
		}
	}
	if fm&0x10 != 0 {
		a, b, c = flush32(a), flush32(b), flush32(c)
	}
	w.lane = l
	r := s.f(a, b, c)
	if fm&0x20 != 0 && !in.notF32 {
		r = flush32(r)
	}
	w.v[p.dst][l] = r
}

// v32run runs turn's one-lane VALU instructions from in on: each as turn would (its step
// checks passed, near, no rounding or index mode or VSKIP, Inst.v32 one lane, resolved operands,
// the next instruction cached), until one is not or n reaches waveTurn or w.steps chk. The
// instructions write a VGPR row and w.lane only: EXEC, MODE, the register file and the turn's
// tests stay as they were at the start. Returns the first instruction not run (w.cur, at w.pc)
// and n.
func v32run(w *wave, in *cinst, n int, chk uint64) (*cinst, int) {
	m := w.exec()
	if m&(m-1) != 0 || m == 0 || !oneLanePath || w.err != nil || w.mode&(modeGPRIdxEn|modeVSkip) != 0 {
		return in, n
	}
	l := bits.TrailingZeros64(m) & (lanes - 1)
	nv, mode := len(w.v), w.mode
	steps, pc := w.steps, w.pc
	w.lane = l // as it is already: turn calls v32run after v32own ran lane l
	for n < waveTurn && steps < chk {
		s, p := in.v32, &in.pre
		if !p.run || mode&in.rmask != 0 || int(p.top) > nv {
			break
		}
		next := in.next.Load()
		if next == nil {
			break
		}
		steps++
		n++
		// v32lane
		fm := s.fl &^ mode
		a := p.at(w, 0, l)
		b, c := a, a
		if s.n > 1 {
			b = p.at(w, 1, l)
			if s.n > 2 {
				c = p.at(w, 2, l)
			}
		}
		if fm&0x10 != 0 {
			a, b, c = flush32(a), flush32(b), flush32(c)
		}
		var r uint32
		if s.op != v32Call {
			r = v32opResult(s.op, a, b)
		} else {
			r = s.f(a, b, c)
		}
		if fm&0x20 != 0 && !in.notF32 {
			r = flush32(r)
		}
		w.v[p.dst][l] = r
		pc += uint64(in.Size)
		in = next
	}
	w.steps, w.pc, w.cur = steps, pc, in
	return in, n
}

// at is lane l of source i.
func (p *preOps) at(w *wave, i, l int) uint32 {
	x := p.x[i]
	switch p.kind[i] {
	case srcVGPR:
		x = w.v[x][l]
	case srcSGPR:
		x = w.s[x&127]
	}
	return x
}

// lane1 is lane l of a 32-bit source operand (v32sparse's read of one lane): a VGPR inside the
// file or an SGPR read inline, anything else by src32.
func (w *wave) lane1(in *Inst, code uint16, t, l int) (uint32, error) {
	if x, ok := w.lane1Reg(code, l); ok {
		return x, nil
	}
	s, err := w.src32(in, code, kindOf(t))
	return s.at(l), err
}

// lane1Reg is lane1's inlined first test: lane l (< lanes) of a VGPR inside the file or an SGPR.
func (w *wave) lane1Reg(code uint16, l int) (uint32, bool) {
	if n := int(code) - opVGPR0; uint(n) < uint(len(w.v)) {
		return w.v[n][l&(lanes-1)], true
	}
	if code < 128 {
		return w.s[code&127], true
	}
	return 0, false
}

// v32sparse is v32 without DPP or SDWA for few active lanes: it reads and computes only those.
func v32sparse(w *wave, in *Inst, t, n int, f func(a, b, c uint32) uint32) error {
	if err := w.checkExt(in); err != nil { // VOP3 op_sel
		return err
	}
	var src [3]lane32
	fs := [3]opField{fSrc0, fSrc1, fSrc2}
	for i := 0; i < n; i++ {
		if r := w.vreg(in.Opnd[fs[i]]); r != nil {
			src[i].r = r
			continue
		}
		s, err := w.src32(in, in.Opnd[fs[i]], kindOf(t))
		if err != nil {
			return err
		}
		src[i] = s
	}
	dst := w.vreg(in.Opnd[fDst])
	if dst == nil {
		var err error
		if dst, err = w.vdst(in.Opnd[fDst], 1); err != nil {
			return err
		}
	}
	flushIn := t == tF32 && w.mode&0x10 == 0 // FP_DENORM single precision: input denormals flushed
	sign := uint32(0x80000000)
	if t == tF16 {
		sign = 0x8000
	}
	mods := (t == tF32 || t == tF16) && (in.Abs|in.Neg) != 0
	clampF := in.Clamp && t == tF32
	omod := in.Omod
	flushOut := t == tF32 && w.mode&0x20 == 0 && !in.notF32
	for m := w.exec(); m != 0; m &= m - 1 {
		l := bits.TrailingZeros64(m)
		var x [3]uint32
		for i := 0; i < n; i++ {
			v := src[i].at(l)
			if flushIn {
				v = flush32(v)
			}
			if mods {
				v = modBits(v, in, i, sign)
			}
			x[i] = v
		}
		for i := n; i < 3; i++ { // as v32: a missing source is source 0
			x[i] = x[0]
		}
		w.lane = l
		r := f(x[0], x[1], x[2])
		if t == tF32 && (omod != 0 || clampF) {
			r = outMod32(r, omod, clampF)
		}
		if flushOut {
			r = flush32(r)
		}
		dst[l] = r
	}
	return nil
}

// flush32 is a denormal f32 flushed to zero of the same sign (FP_DENORM flush modes).
func flush32(v uint32) uint32 {
	if v&0x7f800000 == 0 {
		return v & 0x80000000
	}
	return v
}

// flush64 is a denormal f64 flushed to zero of the same sign (MODE.FP_DENORM bits 7:6, which
// govern f64 and binary16).
func flush64(v uint64) uint64 {
	if v&0x7ff0000000000000 == 0 {
		return v & (1 << 63)
	}
	return v
}

func hasDenorm32(s *[lanes]uint32) bool {
	for _, v := range s {
		if v&0x7f800000 == 0 && v&0x7fffff != 0 {
			return true
		}
	}
	return false
}

// floatResult reports whether a 32-bit VALU operation with f32 sources produces an f32 (its
// output is subject to the denormal mode): not conversions to integers or f16, not frexp_exp.
func floatResult(name string) bool {
	return !strings.HasPrefix(name, "v_cvt_") && !strings.HasPrefix(name, "v_frexp_exp")
}

func outMod32(r uint32, omod uint8, clamp bool) uint32 {
	x := f32(r)
	switch omod {
	case 1:
		x *= 2
	case 2:
		x *= 4
	case 3:
		x /= 2
	}
	if clamp {
		if x < 0 || x != x {
			x = 0
		} else if x > 1 {
			x = 1
		}
	}
	return u32(x)
}

// v64 builds an operation with 64-bit sources (t0 for src0, t1 for the others) and a 64-bit result.
func v64(t0, t1, n int, f func(a, b, c uint64) uint64) execFn { return v64k(t0, t1, n, f, nil) }

// kern64 computes a 64-bit operation for all 64 lanes without a call per lane (as kern32).
type kern64 func(d, a, b, c *[lanes]uint64)

// kernels64 lists the 64-bit lane loops with their per-lane functions (TestKernels).
var kernels64 []kernPair64

type kernPair64 struct {
	f func(a, b, c uint64) uint64
	k kern64
}

// v64k is v64 with k, if not nil, the lane loop used when no output modifier or flush applies.
func v64k(t0, t1, n int, f func(a, b, c uint64) uint64, k kern64) execFn {
	if k != nil {
		kernels64 = append(kernels64, kernPair64{f, k})
	}
	return func(w *wave, in *Inst) error {
		if in.Ext != extDPP {
			if err := w.checkExt(in); err != nil {
				return err
			}
		}
		writeMask := ^uint64(0)
		var src [3]*[lanes]uint64
		fs := [3]opField{fSrc0, fSrc1, fSrc2}
		for i := 0; i < n; i++ {
			t := t1
			if i == 0 {
				t = t0
			}
			var s *[lanes]uint64
			if t == tU32 || t == tF32 { // 32-bit operand (shift amounts, v_cvt_f64_{f32,i32,u32})
				s32, err := w.src32(in, in.Opnd[fs[i]], k32)
				if err != nil {
					return err
				}
				s = &w.tmp64[i]
				if r := s32.r; r != nil {
					for l := range s {
						s[l] = uint64(r[l])
					}
				} else {
					for l := range s {
						s[l] = uint64(s32.c)
					}
				}
			} else {
				var err error
				s, err = w.vsrc64(in, in.Opnd[fs[i]], kindOf(t), i)
				if err != nil {
					return err
				}
			}
			if i == 0 && in.Ext == extDPP { // gfx90a DPP on a 64-bit operation (s is a copy)
				s, writeMask = w.applyDPP64(in, s)
			}
			if t == tF32 || t == tF64 {
				// VOP3 abs/neg on the source's sign, then MODE.FP_DENORM's input bit (4: an f32
				// source, v_cvt_f64_f32's; 6: f64): clear, a denormal input is a zero of its sign.
				sign, flush := uint64(1)<<63, w.mode&0x40 == 0
				if t == tF32 {
					sign, flush = 1<<31, w.mode&0x10 == 0
				}
				abs, neg := in.Abs>>i&1 != 0, in.Neg>>i&1 != 0
				if abs || neg || flush {
					for l := range s {
						v := s[l]
						if abs {
							v &^= sign
						}
						if neg {
							v ^= sign
						}
						if flush && t == tF32 {
							v = uint64(flush32(uint32(v)))
						} else if flush {
							v = flush64(v)
						}
						s[l] = v
					}
				}
			}
			src[i] = s
		}
		if _, err := w.vdst(in.Opnd[fDst], 2); err != nil {
			return err
		}
		a, b, c := src[0], src[1], src[2]
		if b == nil {
			b = a
		}
		if c == nil {
			c = a
		}
		// f64 results (an f64 source) follow MODE bit 7: clear flushes denormal results.
		flushOut := w.mode&0x80 == 0 && (t0 == tF64 || t1 == tF64)
		m := w.exec() & writeMask
		if k != nil && !flushOut && (t1 != tF64 || in.Omod == 0 && !in.Clamp) && bits.OnesCount64(m) >= denseLanes {
			r := &w.tmp64[3]
			k(r, a, b, c)
			lo, hi := &w.v[in.Opnd[fDst]-opVGPR0], &w.v[in.Opnd[fDst]-opVGPR0+1]
			if m == ^uint64(0) {
				for l := range r {
					lo[l], hi[l] = uint32(r[l]), uint32(r[l]>>32)
				}
				return nil
			}
			for l := range r {
				if m>>l&1 != 0 {
					lo[l], hi[l] = uint32(r[l]), uint32(r[l]>>32)
				}
			}
			return nil
		}
		for ; m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			w.lane = l
			r := f(a[l], b[l], c[l])
			if in.Omod != 0 && t1 == tF64 { // VOP3 output modifier on the f64 result, before clamp
				r = u64(f64(r) * [4]float64{1, 2, 4, 0.5}[in.Omod])
			}
			if in.Clamp && t1 == tF64 {
				x := f64(r)
				if x < 0 || x != x {
					x = 0
				} else if x > 1 {
					x = 1
				}
				r = u64(x)
			}
			if flushOut {
				r = flush64(r)
			}
			w.setV64(in.Opnd[fDst], l, r)
		}
		return nil
	}
}

func fmin32(a, b float32) float32 {
	if a != a {
		return b
	}
	if b != b {
		return a
	}
	if a < b || a == b && math.Signbit(float64(a)) {
		return a
	}
	return b
}

func fmax32(a, b float32) float32 {
	if a != a {
		return b
	}
	if b != b {
		return a
	}
	if a > b || a == b && !math.Signbit(float64(a)) {
		return a
	}
	return b
}

// fma32 is a correctly rounded f32 fused multiply-add: the product of two f32 values is exact in
// float64 and the sum is rounded to odd (sumOdd, valu16.go) before the one rounding to f32. (Rounding
// the float64 a*b+c to f32 would round twice: a*b+c can need far more than 53 bits.)
// fmaKern is fma32's lane loop: fmaAVX2 where the host has it (simd_amd64.s), else fmaKernGo.
// The rows are read as f32 (f32Row: a load converts straight to float64, not through an integer
// register) and sliced once (one nil check each, no bounds checks in the loop), two lanes per
// round, and fma32's "exponent at least f32's normal range and not NaN" is one comparison of x<<1
// (the sign dropped): 897<<53 <= x<<1 <= 0x7ff<<53. The fallback reads the lane's bits again (d
// may be a source: only lane l of d is written before lane l+1 is read).
func fmaKern(d, a, b, c *[lanes]uint32) {
	if simd && fmaAVX2(d, a, b, c) {
		return
	}
	fmaKernGo(d, a, b, c)
}

// fmaKernGo is fmaKern's Go loop (every host; on AVX2 hosts the rows with a NaN result).
func fmaKernGo(d, a, b, c *[lanes]uint32) {
	ds, as, bs, cs := d[:], a[:], b[:], c[:]
	af, bf, cf := f32Row(a)[:], f32Row(b)[:], f32Row(c)[:]
	for l := 0; l < lanes; l += 2 {
		r0 := float64(af[l])*float64(bf[l]) + float64(cf[l]) // fma32, inline
		x0 := math.Float64bits(r0)
		if m := x0 << 1; x0&(1<<29-1) != 1<<28 && m-(1023-126)<<53 <= (0x7ff-(1023-126))<<53 || m == 0 {
			ds[l] = math.Float32bits(float32(r0))
		} else {
			ds[l] = fma32Odd(as[l], bs[l], cs[l])
		}
		r1 := float64(af[l+1])*float64(bf[l+1]) + float64(cf[l+1])
		x1 := math.Float64bits(r1)
		if m := x1 << 1; x1&(1<<29-1) != 1<<28 && m-(1023-126)<<53 <= (0x7ff-(1023-126))<<53 || m == 0 {
			ds[l+1] = math.Float32bits(float32(r1))
		} else {
			ds[l+1] = fma32Odd(as[l+1], bs[l+1], cs[l+1])
		}
	}
}

// f32Row is a register row read as f32 values (the same bits: Go's float32 is IEEE binary32).
func f32Row(r *[lanes]uint32) *[lanes]float32 { return (*[lanes]float32)(unsafe.Pointer(r)) }

// u64Row is a register row read as 32 64-bit words, lanes 2i and 2i+1 in word i (lane 2i the low
// half on a little-endian host; callers check hostLittleEndian). r must be 8-aligned (checkptr
// checks it under -race): the rows of w.v are (a slice of whole 256-byte rows); other rows, as
// w.tmp's, need not be.
func u64Row(r *[lanes]uint32) *[lanes / 2]uint64 { return (*[lanes / 2]uint64)(unsafe.Pointer(r)) }

func fma32(a, b, c uint32) uint32 {
	// Fast path: the float64 a*b+c rounds the exact a*b+c once to float64, as math.FMA would: the
	// product of two f32 values is exact in float64 (48 significant bits, magnitude 2^-298 to
	// 2^256), so only the sum rounds (and a fused multiply-add the compiler may emit gives the same
	// float64). Plain float64 arithmetic needs no FMA instruction or math.FMA's software fallback
	// (whose call made the lane loop spill its registers). Rounding that to f32 is the correctly rounded f32 unless the float64 is exactly halfway
	// between two f32 values (its low 29 fraction bits 1<<28: the first rounding may have made the
	// tie): a result that is not a tie lies on the same side of every f32 rounding boundary as
	// the exact value (rounding is monotonic and the boundaries are float64 values). A zero is
	// exact (a nonzero a*b+c of f32 values is at least 2^-298 in magnitude) with IEEE's sign, as
	// fma32Odd gives it. Ties, f32 subnormal results (exponent below f32's normal range) and NaN
	// take fma32Odd.
	r := float64(f32(a))*float64(f32(b)) + float64(f32(c))
	if x := math.Float64bits(r); x&(1<<29-1) != 1<<28 && x>>52&0x7ff >= 1023-126 && r == r || x<<1 == 0 {
		return u32(float32(r))
	}
	return fma32Odd(a, b, c)
}

// fma32Odd is fma32 through the exact product and a round-to-odd float64 sum.
//
//go:noinline
func fma32Odd(a, b, c uint32) uint32 {
	return u32(float32(sumOdd(float64(f32(a))*float64(f32(b)), float64(f32(c)))))
}

func cvtF32ToU32(x float32) uint32 {
	switch {
	case x != x || x <= 0:
		return 0
	case x >= 4294967296:
		return 0xffffffff
	}
	return uint32(x)
}

func cvtF32ToI32(x float32) uint32 {
	switch {
	case x != x:
		return 0
	case x <= -2147483648:
		return 0x80000000
	case x >= 2147483648:
		return 0x7fffffff
	}
	return uint32(int32(x))
}

// cvtF64ToU32/cvtF64ToI32 are V_CVT_U32_F64/V_CVT_I32_F64: the f64 truncated toward zero, saturated,
// NaN -> 0. (They went through float32 once, so that (uint)379205108.71 came out as 379205120.)
func cvtF64ToU32(x float64) uint32 {
	switch {
	case x != x || x <= 0:
		return 0
	case x >= 4294967296:
		return 0xffffffff
	}
	return uint32(x)
}

func cvtF64ToI32(x float64) uint32 {
	switch {
	case x != x:
		return 0
	case x <= -2147483648:
		return 0x80000000
	case x >= 2147483648:
		return 0x7fffffff
	}
	return uint32(int32(x))
}

func cvtFrom64(f func(a uint64) uint32) execFn {
	return func(w *wave, in *Inst) error {
		if in.Ext != extDPP {
			if err := w.checkExt(in); err != nil {
				return err
			}
		}
		a, err := w.vsrc64(in, in.Opnd[fSrc0], k64f, 0)
		if err != nil {
			return err
		}
		writeMask := ^uint64(0)
		if in.Ext == extDPP { // gfx90a DPP on a 64-bit source (a is a copy)
			a, writeMask = w.applyDPP64(in, a)
		}
		dst, err := w.vdst(in.Opnd[fDst], 1)
		if err != nil {
			return err
		}
		// The f64 source follows MODE bit 6 (input denormals), an f32 result (v_cvt_f32_f64) bit 5.
		f32Out := in.Info.Op == OpVCvtF32F64
		flushOut := f32Out && w.mode&0x20 == 0
		for m := w.exec() & writeMask; m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			v := a[l]
			if in.Abs&1 != 0 {
				v &^= 1 << 63
			}
			if in.Neg&1 != 0 {
				v ^= 1 << 63
			}
			if w.mode&0x40 == 0 {
				v = flush64(v)
			}
			r := f(v)
			if f32Out && (in.Omod != 0 || in.Clamp) { // VOP3 output modifiers on the f32 result
				r = outMod32(r, in.Omod, in.Clamp)
			}
			if flushOut {
				r = flush32(r)
			}
			dst[l] = r
		}
		return nil
	}
}

// pkSrc reads a VOP3P source of 64 bits (two dwords for packed f32; low dword used for f16).
func (w *wave) pkSrc(in *Inst, i int, wide bool) (*[lanes]uint64, error) {
	code := in.Opnd[[3]opField{fSrc0, fSrc1, fSrc2}[i]]
	if wide {
		s, err := w.vsrc64(in, code, k64i, i)
		if err != nil {
			return nil, err
		}
		if code < opVGPR0 && (code >= 128) { // inline constant: the same 32-bit value in both halves
			for l := range s {
				s[l] = s[l]&0xffffffff | s[l]<<32
			}
		}
		return s, nil
	}
	s, err := w.vsrc(in, code, k16f, i)
	if err != nil {
		return nil, err
	}
	t := &w.tmp64[i]
	for l := range t {
		t[l] = uint64(s[l])
	}
	return t, nil
}

func pkMov(w *wave, in *Inst) error {
	a, err := w.pkSrc(in, 0, true)
	if err != nil {
		return err
	}
	b, err := w.pkSrc(in, 1, true)
	if err != nil {
		return err
	}
	if _, err := w.vdst(in.Opnd[fDst], 2); err != nil {
		return err
	}
	for m := w.exec(); m != 0; m &= m - 1 {
		l := bits.TrailingZeros64(m)
		lo := uint32(a[l] >> (32 * uint(in.OpSel&1)))
		hi := uint32(b[l] >> (32 * uint(in.OpSel>>1&1)))
		w.setV64(in.Opnd[fDst], l, uint64(lo)|uint64(hi)<<32)
	}
	return nil
}

// pk32 is a packed-f32 VOP3P operation (gfx90a): op_sel picks the dword for the low result, op_sel_hi for
// the high result; neg_lo/neg_hi negate.
func pk32(n int, f func(a, b, c uint32) uint32) execFn {
	return func(w *wave, in *Inst) error {
		var src [3]*[lanes]uint64
		for i := 0; i < n; i++ {
			s, err := w.pkSrc(in, i, true)
			if err != nil {
				return err
			}
			src[i] = s
		}
		if _, err := w.vdst(in.Opnd[fDst], 2); err != nil {
			return err
		}
		// The packed f32 operations are f32 operations: MODE.FP_DENORM bit 4 (clear: input
		// denormals flushed) and bit 5 (clear: denormal results flushed) apply to each half, as
		// they do to v_add_f32 (LLVM selects v_pk_add_f32 for two float adds under
		// -fgpu-flush-denormals-to-zero and relies on it); VOP3P clamp to [0, 1] on each half.
		flushIn, flushOut := w.mode&0x10 == 0, w.mode&0x20 == 0
		for m := w.exec(); m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			var lo, hi [3]uint32
			for i := 0; i < n; i++ {
				v := src[i][l]
				lo[i] = uint32(v >> (32 * uint(in.OpSel>>i&1)))
				hi[i] = uint32(v >> (32 * uint(in.OpSelHi>>i&1)))
				if in.Neg>>i&1 != 0 {
					lo[i] ^= 1 << 31
				}
				if in.NegHi>>i&1 != 0 {
					hi[i] ^= 1 << 31
				}
				if flushIn {
					lo[i], hi[i] = flush32(lo[i]), flush32(hi[i])
				}
			}
			rl, rh := f(lo[0], lo[1], lo[2]), f(hi[0], hi[1], hi[2])
			if in.Clamp {
				rl, rh = outMod32(rl, 0, true), outMod32(rh, 0, true)
			}
			if flushOut {
				rl, rh = flush32(rl), flush32(rh)
			}
			w.setV64(in.Opnd[fDst], l, uint64(rl)|uint64(rh)<<32)
		}
		return nil
	}
}

// f16to32 converts an IEEE binary16 to float32 (exact).
func f16to32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h >> 10 & 0x1f)
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return f32(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return f32(sign)
		}
		x := float32(man) / 16777216 // man * 2^-24
		if sign != 0 {
			x = -x
		}
		return x
	}
	return f32(sign | (exp+112)<<23 | man<<13)
}

// f64to16 rounds a float64 to binary16, round-to-nearest-even, with overflow to infinity.
func f64to16(x float64) uint16 {
	b := u64(x)
	sign := uint16(b>>48) & 0x8000
	if x != x {
		return sign | 0x7e00
	}
	a := math.Abs(x)
	if a >= 65520 { // rounds to infinity
		return sign | 0x7c00
	}
	if a < 6.103515625e-05 { // subnormal: quantum 2^-24
		q := math.RoundToEven(a * 16777216)
		return sign | uint16(q)
	}
	e := math.Ilogb(a)
	q := math.RoundToEven(math.Ldexp(a, 10-e)) // 1024..2048
	if q == 2048 {
		q = 1024
		e++
	}
	if e > 15 {
		return sign | 0x7c00
	}
	return sign | uint16(e+15)<<10 | uint16(q-1024)
}

func f32to16(x float32) uint16 { return f64to16(float64(x)) }

// permB32 is v_perm_b32: each result byte selects a byte of {S0, S1} (S1 the low four), the sign of
// byte 1, 3, 5 or 7 (selectors 8-11), 0x00 (12) or 0xff (13 and above) (GFX9 ISA, V_PERM_B32).
func permB32(s0, s1, sel uint32) uint32 {
	in := uint64(s0)<<32 | uint64(s1)
	var d uint32
	for i := 0; i < 4; i++ {
		var b uint32
		switch x := sel >> (8 * i) & 0xff; {
		case x >= 13:
			b = 0xff
		case x == 12:
			b = 0
		case x >= 8:
			b = uint32(in>>(16*(x-8)+15)&1) * 0xff
		default:
			b = uint32(in >> (8 * x) & 0xff)
		}
		d |= b << (8 * i)
	}
	return d
}

func minMax64(a, b uint64, isMin bool) uint64 {
	x, y := f64(a), f64(b)
	switch {
	case x != x:
		return b
	case y != y:
		return a
	case x == y: // ±0: min takes the negative zero, max the positive
		if (a>>63 == 1) == isMin {
			return a
		}
		return b
	case (x < y) == isMin:
		return a
	}
	return b
}
