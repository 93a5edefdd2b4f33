package shader

import (
	"fmt"
	"math/bits"
)

// s32 and s64 read scalar source field f as 32 or 64 bits: an SGPR (or VCC, M0, EXEC, TTMP) inline,
// as scalar does, anything else through scalar.
func (w *wave) s32(in *Inst, f opField) uint32 {
	if c := in.Opnd[f]; c < 128 {
		return w.s[c]
	}
	return w.s32Other(in, f)
}

func (w *wave) s32Other(in *Inst, f opField) uint32 {
	v, err := w.scalar(in, in.Opnd[f], k32)
	if err != nil {
		w.fail(err)
	}
	return uint32(v)
}

func (w *wave) s64(in *Inst, f opField) uint64 {
	if c := in.Opnd[f]; c < 127 {
		return w.sget64(c)
	}
	return w.s64Other(in, f)
}

func (w *wave) s64Other(in *Inst, f opField) uint64 {
	v, err := w.scalar(in, in.Opnd[f], k64i)
	if err != nil {
		w.fail(err)
	}
	return v
}

// fail records an operand error of a helper that returns a value (s32, s64): the instruction
// finishes with a zero operand and step stops the wave with the error, before anything reads the
// instruction's results.
func (w *wave) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

func sop2u(f func(a, b uint32) (uint32, bool)) execFn {
	return func(w *wave, in *Inst) error {
		r, scc := f(w.s32(in, fSrc0), w.s32(in, fSrc1))
		w.sset(in.Opnd[fDst], r)
		w.scc = scc
		return nil
	}
}

func sop2u64(f func(a, b uint64) (uint64, bool)) execFn {
	return func(w *wave, in *Inst) error {
		r, scc := f(w.s64(in, fSrc0), w.s64(in, fSrc1))
		w.sset64(in.Opnd[fDst], r)
		w.scc = scc
		return nil
	}
}

// sop2sh is a 64-bit operation whose second operand is 32 bits (shifts, bfe).
func sop2sh(f func(a uint64, b uint32) (uint64, bool)) execFn {
	return func(w *wave, in *Inst) error {
		r, scc := f(w.s64(in, fSrc0), w.s32(in, fSrc1))
		w.sset64(in.Opnd[fDst], r)
		w.scc = scc
		return nil
	}
}

func sop1u(f func(w *wave, a uint32) uint32, setSCC bool) execFn {
	return func(w *wave, in *Inst) error {
		r := f(w, w.s32(in, fSrc0))
		w.sset(in.Opnd[fDst], r)
		if setSCC {
			w.scc = r != 0
		}
		return nil
	}
}

func sop1u64(f func(a uint64) uint64, setSCC bool) execFn {
	return func(w *wave, in *Inst) error {
		r := f(w.s64(in, fSrc0))
		w.sset64(in.Opnd[fDst], r)
		if setSCC {
			w.scc = r != 0
		}
		return nil
	}
}

func saveexec(f func(s, e uint64) uint64) execFn {
	return func(w *wave, in *Inst) error {
		s := w.s64(in, fSrc0)
		e := w.exec()
		w.sset64(in.Opnd[fDst], e)
		n := f(s, e)
		w.setExec(n)
		w.scc = n != 0
		return nil
	}
}

func sopc(f func(a, b uint32) bool) execFn {
	return func(w *wave, in *Inst) error {
		w.scc = f(w.s32(in, fSrc0), w.s32(in, fSrc1))
		return nil
	}
}

// sopkCmp is S_CMPK_*: SCC = f(SDST, SIMM16); no register is written.
func sopkCmp(f func(d uint32, k uint16) bool) execFn {
	return func(w *wave, in *Inst) error {
		var cur uint32
		if d := in.Opnd[fDst]; d < 128 {
			cur = w.s[d]
		}
		w.scc = f(cur, uint16(in.Imm))
		return nil
	}
}

// sop2keep is a SOP2 operation whose SCC column in the ISA is empty (S_PACK_*): SCC is kept.
func sop2keep(f func(a, b uint32) uint32) execFn {
	return func(w *wave, in *Inst) error {
		w.sset(in.Opnd[fDst], f(w.s32(in, fSrc0), w.s32(in, fSrc1)))
		return nil
	}
}

func bfe32(v, ctl uint32, signed bool) uint32 {
	off, wd := ctl&31, ctl>>16&0x7f
	if wd == 0 {
		return 0
	}
	if wd > 32 {
		wd = 32
	}
	if signed {
		if off+wd >= 32 {
			return uint32(int32(v) >> off)
		}
		return uint32(int32(v<<(32-off-wd)) >> (32 - wd))
	}
	if off+wd >= 32 {
		return v >> off
	}
	return v >> off & (1<<wd - 1)
}

func bfe64(v uint64, ctl uint32, signed bool) uint64 {
	off, wd := ctl&63, ctl>>16&0x7f
	if wd == 0 {
		return 0
	}
	if wd > 64 {
		wd = 64
	}
	if off+wd >= 64 {
		if signed {
			return uint64(int64(v) >> off)
		}
		return v >> off
	}
	if signed {
		return uint64(int64(v<<(64-off-wd)) >> (64 - wd))
	}
	return v >> off & (1<<wd - 1)
}

// sop2Ops registers the SOP2 operations.
func sop2Ops() {
	// SOP2 (AMD MI200 ISA "SOP2 instructions"); SCC as documented there.
	def(OpSAddU32, sop2u(func(a, b uint32) (uint32, bool) { r, c := bits.Add32(a, b, 0); return r, c != 0 }))
	def(OpSSubU32, sop2u(func(a, b uint32) (uint32, bool) { r, c := bits.Sub32(a, b, 0); return r, c != 0 }))
	def(OpSAddI32, sop2u(func(a, b uint32) (uint32, bool) {
		r := a + b
		return r, (a>>31 == b>>31) && (r>>31 != a>>31)
	}))
	def(OpSSubI32, sop2u(func(a, b uint32) (uint32, bool) {
		r := a - b
		return r, (a>>31 != b>>31) && (r>>31 != a>>31)
	}))
	def(OpSAddcU32, func(w *wave, in *Inst) error {
		r, c := bits.Add32(w.s32(in, fSrc0), w.s32(in, fSrc1), uint32(b2u(w.scc)))
		w.sset(in.Opnd[fDst], r)
		w.scc = c != 0
		return nil
	})
	def(OpSSubbU32, func(w *wave, in *Inst) error {
		r, c := bits.Sub32(w.s32(in, fSrc0), w.s32(in, fSrc1), uint32(b2u(w.scc)))
		w.sset(in.Opnd[fDst], r)
		w.scc = c != 0
		return nil
	})
	def(OpSMinI32, sop2u(func(a, b uint32) (uint32, bool) {
		if int32(a) < int32(b) {
			return a, true
		}
		return b, false
	}))
	def(OpSMinU32, sop2u(func(a, b uint32) (uint32, bool) {
		if a < b {
			return a, true
		}
		return b, false
	}))
	def(OpSMaxI32, sop2u(func(a, b uint32) (uint32, bool) {
		if int32(a) > int32(b) {
			return a, true
		}
		return b, false
	}))
	def(OpSMaxU32, sop2u(func(a, b uint32) (uint32, bool) {
		if a > b {
			return a, true
		}
		return b, false
	}))
	def(OpSCselectB32, func(w *wave, in *Inst) error {
		a, b := w.s32(in, fSrc0), w.s32(in, fSrc1)
		if w.scc {
			w.sset(in.Opnd[fDst], a)
		} else {
			w.sset(in.Opnd[fDst], b)
		}
		return nil
	})
	def(OpSCselectB64, func(w *wave, in *Inst) error {
		a, b := w.s64(in, fSrc0), w.s64(in, fSrc1)
		if w.scc {
			w.sset64(in.Opnd[fDst], a)
		} else {
			w.sset64(in.Opnd[fDst], b)
		}
		return nil
	})
	for _, l := range []struct {
		b32, b64, saveexec Op
		f                  func(a, b uint64) uint64
	}{
		{OpSAndB32, OpSAndB64, OpSAndSaveexecB64, func(a, b uint64) uint64 { return a & b }},
		{OpSOrB32, OpSOrB64, OpSOrSaveexecB64, func(a, b uint64) uint64 { return a | b }},
		{OpSXorB32, OpSXorB64, OpSXorSaveexecB64, func(a, b uint64) uint64 { return a ^ b }},
		{OpSAndn2B32, OpSAndn2B64, OpSAndn2SaveexecB64, func(a, b uint64) uint64 { return a &^ b }},
		{OpSOrn2B32, OpSOrn2B64, OpSOrn2SaveexecB64, func(a, b uint64) uint64 { return a | ^b }},
		{OpSNandB32, OpSNandB64, OpSNandSaveexecB64, func(a, b uint64) uint64 { return ^(a & b) }},
		{OpSNorB32, OpSNorB64, OpSNorSaveexecB64, func(a, b uint64) uint64 { return ^(a | b) }},
		{OpSXnorB32, OpSXnorB64, OpSXnorSaveexecB64, func(a, b uint64) uint64 { return ^(a ^ b) }},
	} {
		f := l.f
		def(l.b32, sop2u(func(a, b uint32) (uint32, bool) { r := uint32(f(uint64(a), uint64(b))); return r, r != 0 }))
		def(l.b64, sop2u64(func(a, b uint64) (uint64, bool) { r := f(a, b); return r, r != 0 }))
		def(l.saveexec, saveexec(f))
	}
	def(OpSLshlB32, sop2u(func(a, b uint32) (uint32, bool) { r := a << (b & 31); return r, r != 0 }))
	def(OpSLshrB32, sop2u(func(a, b uint32) (uint32, bool) { r := a >> (b & 31); return r, r != 0 }))
	def(OpSAshrI32, sop2u(func(a, b uint32) (uint32, bool) { r := uint32(int32(a) >> (b & 31)); return r, r != 0 }))
	def(OpSLshlB64, sop2sh(func(a uint64, b uint32) (uint64, bool) { r := a << (b & 63); return r, r != 0 }))
	def(OpSLshrB64, sop2sh(func(a uint64, b uint32) (uint64, bool) { r := a >> (b & 63); return r, r != 0 }))
	def(OpSAshrI64, sop2sh(func(a uint64, b uint32) (uint64, bool) { r := uint64(int64(a) >> (b & 63)); return r, r != 0 }))
	for k, op := range []Op{OpSLshl1AddU32, OpSLshl2AddU32, OpSLshl3AddU32, OpSLshl4AddU32} {
		k := uint32(k + 1)
		def(op, sop2u(func(a, b uint32) (uint32, bool) {
			r, c := bits.Add32(a<<k, b, 0)
			return r, c != 0 || a>>(32-k) != 0
		}))
	}
	def(OpSBfmB32, func(w *wave, in *Inst) error {
		a, b := w.s32(in, fSrc0), w.s32(in, fSrc1)
		w.sset(in.Opnd[fDst], (uint32(1)<<(a&31)-1)<<(b&31))
		return nil
	})
	def(OpSMulI32, func(w *wave, in *Inst) error {
		w.sset(in.Opnd[fDst], w.s32(in, fSrc0)*w.s32(in, fSrc1))
		return nil
	})
	def(OpSMulHiU32, func(w *wave, in *Inst) error {
		h, _ := bits.Mul32(w.s32(in, fSrc0), w.s32(in, fSrc1))
		w.sset(in.Opnd[fDst], h)
		return nil
	})
	def(OpSMulHiI32, func(w *wave, in *Inst) error {
		w.sset(in.Opnd[fDst], uint32(uint64(int64(int32(w.s32(in, fSrc0)))*int64(int32(w.s32(in, fSrc1))))>>32))
		return nil
	})
	def(OpSBfeU32, sop2u(func(a, b uint32) (uint32, bool) { r := bfe32(a, b, false); return r, r != 0 }))
	def(OpSBfeI32, sop2u(func(a, b uint32) (uint32, bool) { r := bfe32(a, b, true); return r, r != 0 }))
	def(OpSBfeU64, sop2sh(func(a uint64, b uint32) (uint64, bool) { r := bfe64(a, b, false); return r, r != 0 }))
	def(OpSBfeI64, sop2sh(func(a uint64, b uint32) (uint64, bool) { r := bfe64(a, b, true); return r, r != 0 }))
	def(OpSAbsdiffI32, sop2u(func(a, b uint32) (uint32, bool) {
		d := int32(a) - int32(b)
		if d < 0 {
			d = -d
		}
		return uint32(d), d != 0
	}))
	def(OpSPackLlB32B16, sop2keep(func(a, b uint32) uint32 { return a&0xffff | b<<16 }))
	def(OpSPackLhB32B16, sop2keep(func(a, b uint32) uint32 { return a&0xffff | b&0xffff0000 }))
	def(OpSPackHhB32B16, sop2keep(func(a, b uint32) uint32 { return a>>16 | b&0xffff0000 }))
}

// sop1Ops registers the SOP1 operations.
func sop1Ops() {
	// SOP1
	def(OpSMovB32, func(w *wave, in *Inst) error { w.sset(in.Opnd[fDst], w.s32(in, fSrc0)); return nil })
	def(OpSMovB64, func(w *wave, in *Inst) error { w.sset64(in.Opnd[fDst], w.s64(in, fSrc0)); return nil })
	def(OpSCmovB32, func(w *wave, in *Inst) error {
		if w.scc {
			w.sset(in.Opnd[fDst], w.s32(in, fSrc0))
		}
		return nil
	})
	def(OpSCmovB64, func(w *wave, in *Inst) error {
		if w.scc {
			w.sset64(in.Opnd[fDst], w.s64(in, fSrc0))
		}
		return nil
	})
	def(OpSNotB32, sop1u(func(_ *wave, a uint32) uint32 { return ^a }, true))
	def(OpSNotB64, sop1u64(func(a uint64) uint64 { return ^a }, true))
	def(OpSBrevB32, sop1u(func(_ *wave, a uint32) uint32 { return bits.Reverse32(a) }, false))
	def(OpSBrevB64, sop1u64(bits.Reverse64, false))
	def(OpSBcnt1I32B32, sop1u(func(_ *wave, a uint32) uint32 { return uint32(bits.OnesCount32(a)) }, true))
	def(OpSBcnt0I32B32, sop1u(func(_ *wave, a uint32) uint32 { return uint32(32 - bits.OnesCount32(a)) }, true))
	def(OpSBcnt1I32B64, func(w *wave, in *Inst) error {
		r := uint32(bits.OnesCount64(w.s64(in, fSrc0)))
		w.sset(in.Opnd[fDst], r)
		w.scc = r != 0
		return nil
	})
	def(OpSFf1I32B32, sop1u(func(_ *wave, a uint32) uint32 {
		if a == 0 {
			return 0xffffffff
		}
		return uint32(bits.TrailingZeros32(a))
	}, false))
	def(OpSFf1I32B64, func(w *wave, in *Inst) error {
		a := w.s64(in, fSrc0)
		r := uint32(0xffffffff)
		if a != 0 {
			r = uint32(bits.TrailingZeros64(a))
		}
		w.sset(in.Opnd[fDst], r)
		return nil
	})
	def(OpSFlbitI32B32, sop1u(func(_ *wave, a uint32) uint32 {
		if a == 0 {
			return 0xffffffff
		}
		return uint32(bits.LeadingZeros32(a))
	}, false))
	def(OpSSextI32I8, sop1u(func(_ *wave, a uint32) uint32 { return uint32(int32(int8(a))) }, false))
	def(OpSSextI32I16, sop1u(func(_ *wave, a uint32) uint32 { return uint32(int32(int16(a))) }, false))
	def(OpSAbsI32, sop1u(func(_ *wave, a uint32) uint32 {
		if int32(a) < 0 {
			return -a
		}
		return a
	}, true))
	def(OpSGetpcB64, func(w *wave, in *Inst) error { w.sset64(in.Opnd[fDst], w.pc+4); return nil })
	def(OpSSetpcB64, func(w *wave, in *Inst) error { w.pc = w.s64(in, fSrc0) - 4; return nil })
	def(OpSSwappcB64, func(w *wave, in *Inst) error {
		t := w.s64(in, fSrc0)
		w.sset64(in.Opnd[fDst], w.pc+4)
		w.pc = t - 4
		return nil
	})
}

// sopcOps registers the scalar compares (SOPC).
func sopcOps() {
	// SOPC
	for _, c := range []struct {
		cmp, cmpk Op
		signed    bool
		f         func(a, b uint32) bool
	}{
		{OpSCmpEqI32, OpSCmpkEqI32, true, func(a, b uint32) bool { return a == b }},
		{OpSCmpLgI32, OpSCmpkLgI32, true, func(a, b uint32) bool { return a != b }},
		{OpSCmpGtI32, OpSCmpkGtI32, true, func(a, b uint32) bool { return int32(a) > int32(b) }},
		{OpSCmpGeI32, OpSCmpkGeI32, true, func(a, b uint32) bool { return int32(a) >= int32(b) }},
		{OpSCmpLtI32, OpSCmpkLtI32, true, func(a, b uint32) bool { return int32(a) < int32(b) }},
		{OpSCmpLeI32, OpSCmpkLeI32, true, func(a, b uint32) bool { return int32(a) <= int32(b) }},
		{OpSCmpEqU32, OpSCmpkEqU32, false, func(a, b uint32) bool { return a == b }},
		{OpSCmpLgU32, OpSCmpkLgU32, false, func(a, b uint32) bool { return a != b }},
		{OpSCmpGtU32, OpSCmpkGtU32, false, func(a, b uint32) bool { return a > b }},
		{OpSCmpGeU32, OpSCmpkGeU32, false, func(a, b uint32) bool { return a >= b }},
		{OpSCmpLtU32, OpSCmpkLtU32, false, func(a, b uint32) bool { return a < b }},
		{OpSCmpLeU32, OpSCmpkLeU32, false, func(a, b uint32) bool { return a <= b }},
	} {
		f, signed := c.f, c.signed
		def(c.cmp, sopc(f))
		def(c.cmpk, sopkCmp(func(d uint32, k uint16) bool {
			kk := uint32(k)
			if signed {
				kk = uint32(int32(int16(k)))
			}
			return f(d, kk)
		}))
	}
	def(OpSCmpEqU64, func(w *wave, in *Inst) error { w.scc = w.s64(in, fSrc0) == w.s64(in, fSrc1); return nil })
	def(OpSCmpLgU64, func(w *wave, in *Inst) error { w.scc = w.s64(in, fSrc0) != w.s64(in, fSrc1); return nil })
	def(OpSBitcmp0B32, sopc(func(a, b uint32) bool { return a>>(b&31)&1 == 0 }))
	def(OpSBitcmp1B32, sopc(func(a, b uint32) bool { return a>>(b&31)&1 == 1 }))
}

// sopkOps registers the SOPK operations.
func sopkOps() {
	// SOPK
	// S_MOVK_I32: D = signext(SIMM16); SCC is kept (it was cleared until 2026-12-03, which broke
	// clang's code that schedules an s_movk_i32 between an SCC def and its use: TestScalarSCCKept).
	def(OpSMovkI32, func(w *wave, in *Inst) error {
		w.sset(in.Opnd[fDst], uint32(int32(int16(in.Imm))))
		return nil
	})
	def(OpSCmovkI32, func(w *wave, in *Inst) error {
		if w.scc {
			w.sset(in.Opnd[fDst], uint32(int32(int16(in.Imm))))
		}
		return nil
	})
	def(OpSAddkI32, func(w *wave, in *Inst) error {
		d := in.Opnd[fDst]
		if d >= 128 {
			return nil
		}
		a, b := w.s[d], uint32(int32(int16(in.Imm)))
		r := a + b
		w.sset(d, r)
		w.scc = (a>>31 == b>>31) && (r>>31 != a>>31)
		return nil
	})
	def(OpSMulkI32, func(w *wave, in *Inst) error {
		d := in.Opnd[fDst]
		if d < 128 {
			w.sset(d, w.s[d]*uint32(int32(int16(in.Imm))))
		}
		return nil
	})
	def(OpSGetregB32, func(w *wave, in *Inst) error {
		id, off, size := in.Imm&0x3f, in.Imm>>6&0x1f, in.Imm>>11&0x1f+1
		var v uint32
		switch id {
		case 1: // HW_REG_MODE
			v = w.mode
		case 15: // HW_REG_SH_MEM_BASES: {SHARED_BASE[63:48] << 16 | PRIVATE_BASE[63:48]} (gfx9)
			v = uint32(w.d.l.ap.SharedBase>>48)<<16 | uint32(w.d.l.ap.PrivateBase>>48&0xffff)
		case 4: // HW_REG_HW_ID (gfx9): WAVE_ID[3:0] (the wave's index in its group here), CU_ID[11:8],
			// SH_ID[12], SE_ID[15:13] of the CU the group runs on (HIP's __smid reads CU_ID and SE_ID);
			// SIMD, pipe, queue, VMID and the rest read 0.
			se, sh, cu := w.d.dev.cuLocation(w.g.cu)
			v = uint32(w.id&0xf) | (cu&0xf)<<8 | (sh&1)<<12 | (se&7)<<13
		case 2: // HW_REG_STATUS: PRIV[5], EXECZ[9], VCCZ[10]
			v = w.status()
		case 3: // HW_REG_TRAPSTS: the exception that entered the trap handler (address watch only)
			v = w.trapsts
		case 7: // HW_REG_IB_STS: no XNACK replay in this model
			v = 0
		default:
			return fmt.Errorf("%w: s_getreg of hwreg %d", ErrUnimplemented, id)
		}
		mask := uint32(1<<uint(size) - 1)
		if size == 32 {
			mask = 0xffffffff
		}
		w.sset(in.Opnd[fDst], v>>uint(off)&mask)
		return nil
	})

	// s_setreg: only HW_REG_MODE is writable here (rounding and denormal modes, round.go and v32).
	setreg := func(w *wave, in *Inst, v uint32) error {
		id, off, size := in.Imm&0x3f, in.Imm>>6&0x1f, in.Imm>>11&0x1f+1
		if w.priv && (id == 2 || id == 7) {
			return nil // the trap handler restoring STATUS and IB_STS: nothing of them is writable state here
		}
		if id != 1 {
			return fmt.Errorf("%w: s_setreg of hwreg %d", ErrUnimplemented, id)
		}
		mask := uint32(1<<uint(size)-1) << uint(off)
		if size == 32 {
			mask = 0xffffffff
		}
		w.mode = w.mode&^mask | v<<uint(off)&mask
		return nil
	}
	def(OpSSetregB32, func(w *wave, in *Inst) error {
		v, err := w.scalar(in, in.Opnd[fDst], k32)
		if err != nil {
			return err
		}
		return setreg(w, in, uint32(v))
	})
	def(OpSSetregImm32B32, func(w *wave, in *Inst) error { return setreg(w, in, in.Lit) })
}

// soppOps registers the program control operations (SOPP): branches, waits, messages, traps.
func soppOps() {
	// SOPP
	defs([]Op{OpSNop, OpSIcacheInv, OpSIncperflevel, OpSDecperflevel, OpSTtracedata, OpSSetprio}, func(*wave, *Inst) error { return nil })
	// s_waitcnt: memory is complete when an access returns, so there is nothing to wait for, except
	// that a wave polling memory (poll.go) gives up its turn here, as a wave waiting for a load
	// that bypassed its caches leaves the SIMD to the others on hardware.
	def(OpSWaitcnt, func(w *wave, in *Inst) error {
		if w.polled && waitsForMemory(uint16(in.Imm)) {
			w.polled = false
			w.yield = true
		}
		return nil
	})
	// s_sleep: the wave gives up its turn (workgroup.go), so a polling loop lets others run.
	def(OpSSleep, func(w *wave, in *Inst) error { w.yield = true; return nil })
	def(OpSEndpgm, func(w *wave, in *Inst) error { w.done = true; return nil })
	def(OpSBarrier, func(w *wave, in *Inst) error { w.bar = true; return nil })
	branch := func(cond func(w *wave) bool) execFn {
		return func(w *wave, in *Inst) error {
			if cond(w) {
				w.pc = uint64(int64(w.pc) + 4*int64(in.Imm))
			}
			return nil
		}
	}
	def(OpSBranch, branch(func(*wave) bool { return true }))
	// The conditional-debug branches test STATUS.COND_DBG_SYS/USER, which only a debugger sets: never
	// taken here.
	defs([]Op{OpSCbranchCdbgsys, OpSCbranchCdbguser, OpSCbranchCdbgsysOrUser, OpSCbranchCdbgsysAndUser},
		branch(func(*wave) bool { return false }))
	// S_CALL_B64: D = PC + 4, then a relative branch as S_BRANCH.
	def(OpSCallB64, func(w *wave, in *Inst) error {
		w.sset64(in.Opnd[fDst], w.pc+4)
		w.pc = uint64(int64(w.pc) + 4*int64(int16(in.Imm)))
		return nil
	})
	def(OpSCbranchScc0, branch(func(w *wave) bool { return !w.scc }))
	def(OpSCbranchScc1, branch(func(w *wave) bool { return w.scc }))
	def(OpSCbranchVccz, branch(func(w *wave) bool { return w.vcc() == 0 }))
	def(OpSCbranchVccnz, branch(func(w *wave) bool { return w.vcc() != 0 }))
	def(OpSCbranchExecz, branch(func(w *wave) bool { return w.exec() == 0 }))
	def(OpSCbranchExecnz, branch(func(w *wave) bool { return w.exec() != 0 }))
	// s_trap: CO V4+ trap handler ABI. 3 (llvm.debugtrap) is a no-op without a debugger; every other code
	// halts the wave and puts the queue into the error state.
	def(OpSTrap, func(w *wave, in *Inst) error {
		code := uint8(in.Imm)
		if t := w.d.l.trap; t != nil && code != 0 {
			if t.TBA == 0 {
				return nil // cwsr_trap_gfx9.asm without a second level (L_TRAP_CASE): past the s_trap
			}
			w.trapsts = 0
			w.enterTrap(code, w.pc, in.Size)
			return nil
		}
		if code == 3 {
			return nil
		}
		return &TrapError{PC: w.pc, Code: code}
	})
}
