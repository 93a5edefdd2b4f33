package shader

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
)

// The rarely used GFX9 operations: cube-map helpers, the legacy transcendentals, packed SADs, the
// legacy fork/join branch stack, VGPR index mode, VSKIP, messages and halt (AMD "Vega" ISA and the
// MI200 ISA; pseudo-code as quoted by gem5's Vega model, src/arch/amdgpu/vega/insts/*.cc).

// MODE register fields used by the control operations below (Vega ISA, "MODE" hardware register):
// GPR_IDX_EN[27], VSKIP[28], CSP[31:29] (the fork/join conditional stack pointer).
const (
	modeGPRIdxEn = 1 << 27
	modeVSkip    = 1 << 28
	modeCSPShift = 29
)

// ErrHalted is wrapped by the error of a wave that executed s_sethalt 1 or s_sendmsghalt: a real wave
// would stop until a debugger resumed it, and there is none here.
var ErrHalted = errors.New("shader: wave halted (s_sethalt/s_sendmsghalt) with no debugger to resume it")

// Interrupt is a host interrupt a compute wave raised with s_sendmsg sendmsg(MSG_INTERRUPT) (Vega ISA
// "S_SENDMSG": message 1, M0[23:0] carries user data). The model counts them in Stats.Interrupts and
// passes each to DispatchParams.Interrupt / RegParams.Interrupt when set (SQ raises an SQ_INTERRUPT_MSG
// to the driver's interrupt handler; what the host does with it is the caller's business). The wave
// continues: the message does not change the program's state.
type Interrupt struct {
	PC   uint64 // address of the s_sendmsg
	Wave int    // wave index in the work-group
	Data uint32 // M0[23:0]
	Priv bool   // sent from the trap handler (SQ_INTERRUPT_WORD_WAVE_CTXID.PRIV)
}

// cubeAxis is the major axis of the cube-map coordinate (x, y, z) as the V_CUBE* pseudo-code picks it:
// z if |z| >= |x| and |z| >= |y|, else y if |y| >= |x|, else x (comparisons with NaN are false).
func cubeAxis(x, y, z float32) int {
	ax, ay, az := abs32(x), abs32(y), abs32(z)
	switch {
	case az >= ax && az >= ay:
		return 2
	case ay >= ax:
		return 1
	}
	return 0
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// neg32 flips the sign bit (the pseudo-code's -S.f, also on NaN).
func neg32(v uint32) uint32 { return v ^ 1<<31 }

// msadU8 is V_MSAD_U8 without the accumulator: bytes whose reference (b) byte is 0 are skipped.
func msadU8(a, b uint32) uint32 {
	var s uint32
	for i := 0; i < 32; i += 8 {
		if b>>i&0xff != 0 {
			s += absDiff(a>>i&0xff, b>>i&0xff)
		}
	}
	return s
}

// cvtOffF32I4 is V_CVT_OFF_F32_I4: S0[3:0] as a signed 4-bit integer divided by 16 (gem5's
// CVT_OFF_TABLE, the ISA's table of 0.0625 steps).
func cvtOffF32I4(a uint32) uint32 {
	return u32(float32(int32(a<<28)>>28) / 16)
}

// f32ToU8 is flt32_to_uint8 of V_CVT_PK_U8_F32/V_CVT_PKACCUM_U8_F32: rounded to nearest even and
// clamped to [0, 255], NaN -> 0 (as v_cvt_pk_u8_f32 in xlane.go).
func f32ToU8(a uint32) uint32 {
	x := math.RoundToEven(float64(f32(a)))
	switch {
	case x >= 255:
		return 255
	case x > 0:
		return uint32(x)
	}
	return 0
}

// legacyValuOps registers the cube-map, legacy transcendental, pack-accumulate and quad SAD VALU operations.
func legacyValuOps() {
	// V_CUBEID/SC/TC/MA_F32 (VOP3), coordinate (S0, S1, S2) = (x, y, z); Vega ISA pseudo-code:
	// ID: face 4/5 (+z/-z), 2/3 (y), 0/1 (x); SC: z-major: S2<0 ? -x : x, y-major: x, x-major: S0<0 ? z : -z;
	// TC: z-major: -y, y-major: S1<0 ? -z : z, x-major: -y; MA: 2 * the major coordinate.
	def(OpVCubeidF32, v32(tF32, 3, func(a, b, c uint32) uint32 {
		x, y, z := f32(a), f32(b), f32(c)
		var id float32
		switch cubeAxis(x, y, z) {
		case 2:
			id = 4
			if z < 0 {
				id = 5
			}
		case 1:
			id = 2
			if y < 0 {
				id = 3
			}
		default:
			id = 0
			if x < 0 {
				id = 1
			}
		}
		return u32(id)
	}))
	def(OpVCubescF32, v32(tF32, 3, func(a, b, c uint32) uint32 {
		x, y, z := f32(a), f32(b), f32(c)
		switch cubeAxis(x, y, z) {
		case 2:
			if z < 0 {
				return neg32(a)
			}
			return a
		case 1:
			return a
		}
		if x < 0 {
			return c
		}
		return neg32(c)
	}))
	def(OpVCubetcF32, v32(tF32, 3, func(a, b, c uint32) uint32 {
		x, y, z := f32(a), f32(b), f32(c)
		if cubeAxis(x, y, z) == 1 {
			if y < 0 {
				return neg32(c)
			}
			return c
		}
		return neg32(b)
	}))
	def(OpVCubemaF32, v32(tF32, 3, func(a, b, c uint32) uint32 {
		x, y, z := f32(a), f32(b), f32(c)
		return u32(2 * [3]float32{x, y, z}[cubeAxis(x, y, z)])
	}))

	// V_CVT_OFF_F32_I4: an integer source (no denormal flush of it), an f32 result that VOP3 clamp/omod apply to.
	def(OpVCvtOffF32I4, func(w *wave, in *Inst) error {
		return v32(tU32, 1, func(a, _, _ uint32) uint32 { return outMod32(cvtOffF32I4(a), in.Omod, in.Clamp) })(w, in)
	})
	// V_EXP_LEGACY_F32 / V_LOG_LEGACY_F32: "D.f = pow(2.0, S0.f) / log2(S0.f) with legacy semantics". The
	// ISA does not define the legacy semantics; gem5 computes std::pow(2.0, x) and std::log2(x), which is
	// mirrored here (the same correctly rounded results as v_exp_f32/v_log_f32 in transcendental.go).
	def(OpVExpLegacyF32, v32(tF32, 1, func(a, _, _ uint32) uint32 { return u32(float32(math.Exp2(float64(f32(a))))) }))
	def(OpVLogLegacyF32, v32(tF32, 1, func(a, _, _ uint32) uint32 { return u32(float32(math.Log2(float64(f32(a))))) }))
	// V_CVT_PKACCUM_U8_F32 (VOP3): byte S1[1:0] of D = flt32_to_uint8(S0.f), the other bytes of D kept
	// ("uses src_c to pass the destination in"). V_CVT_PK_U8_F32 is the same with S2 as the other bytes.
	def(OpVCvtPkaccumU8F32, cvtPkU8(true))
	def(OpVCvtPkU8F32, cvtPkU8(false))
	// v_cubema_f32's 2*S overflows to infinity, which a directed FP_ROUND mode would round differently:
	// listed as mode-dependent without a directed routine, it stops the wave under those modes
	// (round.go withRounding). The other new float operations do not round.
	opTab[OpVCubemaF32].round = roundSingle
	// The quad SADs (VOP3): four SAD_U8 (or MSAD_U8) of the byte windows S0[8k+31:8k] of the 64-bit S0
	// against S1, each plus its accumulator from S2, truncated to 16 bits (QSAD_PK_U16_U8,
	// MQSAD_PK_U16_U8: 4x16-bit D and S2) or to 32 bits (MQSAD_U32_U8: 4x32-bit D and S2).
	def(OpVQsadPkU16U8, quadSAD(sadU8, 16))
	def(OpVMqsadPkU16U8, quadSAD(msadU8, 16))
	def(OpVMqsadU32U8, quadSAD(msadU8, 32))
}

// legacySaluOps registers the GPR index mode, VSKIP, fork/join, exception-return, halt and end-of-program forms.
func legacySaluOps() {
	// Scalar control.

	// S_SET_GPR_IDX_ON (SOPC): MODE.GPR_IDX_EN = 1; M0[7:0] = S0[7:0]; M0[15:12] = the raw 4-bit S1 field
	// (VSRC0_REL, VSRC1_REL, VSRC2_REL, VDST_REL); the other M0 bits kept. The index is applied in step
	// (gprIndexed).
	def(OpSSetGprIdxOn, func(w *wave, in *Inst) error {
		idx := w.s32(in, fSrc0)
		w.s[opM0] = w.s[opM0]&^0xf0ff | idx&0xff | uint32(in.Opnd[fSrc1]&0xf)<<12
		w.mode |= modeGPRIdxEn
		return nil
	})
	def(OpSSetGprIdxOff, func(w *wave, in *Inst) error { w.mode &^= modeGPRIdxEn; return nil })
	// S_SET_GPR_IDX_IDX (SOP1): M0[7:0] = S0[7:0]. S_SET_GPR_IDX_MODE (SOPP): M0[15:12] = SIMM16[3:0].
	def(OpSSetGprIdxIdx, func(w *wave, in *Inst) error {
		w.s[opM0] = w.s[opM0]&^0xff | w.s32(in, fSrc0)&0xff
		return nil
	})
	def(OpSSetGprIdxMode, func(w *wave, in *Inst) error {
		w.s[opM0] = w.s[opM0]&^0xf000 | uint32(in.Imm&0xf)<<12
		return nil
	})
	// S_SETVSKIP (SOPC): MODE.VSKIP = S0[S1[4:0]]; while set, vector instructions are not issued (step).
	def(OpSSetvskip, func(w *wave, in *Inst) error {
		if w.s32(in, fSrc0)>>(w.s32(in, fSrc1)&31)&1 != 0 {
			w.mode |= modeVSkip
		} else {
			w.mode &^= modeVSkip
		}
		return nil
	})
	// The legacy branch stack (Vega ISA S_CBRANCH_G_FORK / S_CBRANCH_I_FORK / S_CBRANCH_JOIN, quoted by
	// gem5): a fork runs the half with fewer lanes first and pushes {target PC, the other lanes' mask} to
	// SGPR[CSP*4] (128 bits: EXEC mask in the low 64, PC in the high 64), CSP++; a join with CSP != S0
	// pops it and jumps there, else continues.
	def(OpSCbranchGFork, func(w *wave, in *Inst) error {
		return w.fork(in, w.s64(in, fSrc0), w.s64(in, fSrc1))
	})
	def(OpSCbranchIFork, func(w *wave, in *Inst) error {
		// SOPK: the mask SGPR pair is in the sdst field; target = PC + 4 + SIMM16*4.
		mask, err := w.scalar(in, in.Opnd[fDst], k64i)
		if err != nil {
			return err
		}
		return w.fork(in, mask, uint64(int64(w.pc)+4+4*int64(int16(in.Imm))))
	})
	def(OpSCbranchJoin, func(w *wave, in *Inst) error {
		saved := w.s32(in, fSrc0)
		csp := w.mode >> modeCSPShift
		if csp == saved {
			return nil // second arrival: continue
		}
		csp = (csp - 1) & 7
		w.mode = w.mode&^(7<<modeCSPShift) | csp<<modeCSPShift
		b := 4 * csp
		w.setExec(uint64(w.s[b]) | uint64(w.s[b+1])<<32)
		w.pc = (uint64(w.s[b+2]) | uint64(w.s[b+3])<<32) - uint64(in.Size) // step adds the size
		return nil
	})
	// S_RFE_B64 / S_RFE_RESTORE_B64: return from exception, PRIV = 0, PC = S0 (the restore form also sets
	// the instruction ATC bit from S1[0], not modelled: addresses are not translated differently). A wave is
	// in a trap handler only when its process has a second-level one and is debugged (trap.go).
	rfe := func(w *wave, in *Inst) error { w.priv = false; w.pc = w.s64(in, fSrc0) - uint64(in.Size); return nil }
	def(OpSRfeB64, rfe)
	def(OpSRfeRestoreB64, rfe)
	// S_SETHALT: HALT = SIMM16[0]. 0 is a no-op; 1 would stop the wave until a debugger resumed it.
	def(OpSSethalt, func(w *wave, in *Inst) error {
		if in.Imm&1 != 0 {
			return ErrHalted
		}
		return nil
	})
	def(OpSSendmsg, func(w *wave, in *Inst) error { return w.sendmsg(in) })
	def(OpSSendmsghalt, func(w *wave, in *Inst) error {
		if err := w.sendmsg(in); err != nil {
			return err
		}
		return ErrHalted
	})
	// S_ENDPGM_SAVED (end of a wave the context-switch handler saved) and S_ENDPGM_ORDERED_PS_DONE (end
	// of a pixel shader's POPS section) end the wave as s_endpgm; their extra signals go to the SPI's
	// context-save and POPS logic, which compute dispatch here does not have.
	defs([]Op{OpSEndpgmSaved, OpSEndpgmOrderedPsDone}, func(w *wave, in *Inst) error { w.done = true; return nil })
}

// cvtPkU8 builds V_CVT_PK_U8_F32 (accumulator S2) and V_CVT_PKACCUM_U8_F32 (accumulator D). Only S0 is a
// float (VOP3 abs/neg apply to it); the byte select S1 and the accumulator are integers, so they are not
// flushed as f32 denormals under FP_DENORM (an accumulator byte like 0x00000044 is a denormal bit pattern).
func cvtPkU8(accumDst bool) execFn {
	return func(w *wave, in *Inst) error {
		in2 := *in
		if accumDst {
			in2.Opnd[fSrc2] = in.Opnd[fDst]
		}
		neg, abs := in.Neg&1, in.Abs&1
		in2.Neg, in2.Abs = 0, 0
		return v32(tU32, 3, func(a, b, c uint32) uint32 {
			if abs != 0 {
				a &^= 1 << 31
			}
			if neg != 0 {
				a ^= 1 << 31
			}
			sh := 8 * (b & 3)
			return c&^(0xff<<sh) | f32ToU8(a)<<sh
		})(w, &in2)
	}
}

// quadSAD builds V_QSAD_PK_U16_U8 / V_MQSAD_PK_U16_U8 (width 16) and V_MQSAD_U32_U8 (width 32).
func quadSAD(sad func(a, b uint32) uint32, width int) execFn {
	return func(w *wave, in *Inst) error {
		if err := w.checkExt(in); err != nil {
			return err
		}
		if in.Clamp {
			return fmt.Errorf("%w: clamp on %s", ErrUnimplemented, in.Info.Name)
		}
		s0, err := w.vsrc64(in, in.Opnd[fSrc0], k64i, 0)
		if err != nil {
			return err
		}
		s1, err := w.vsrc(in, in.Opnd[fSrc1], k32, 1)
		if err != nil {
			return err
		}
		nd := width / 16 * 2 // destination / S2 dwords: 2 or 4
		acc := func(l, k int) uint32 { return 0 }
		c := in.Opnd[fSrc2]
		switch {
		case c >= opVGPR0:
			if !w.fit(int(c-opVGPR0) + nd) {
				return fmt.Errorf("%w: register %s beyond the allocation", ErrIllegal, regName(c, nd))
			}
			acc = func(l, k int) uint32 { return w.v[int(c-opVGPR0)+k][l] }
		case c < 128 && int(c)+nd <= 102:
			acc = func(_, k int) uint32 { return w.s[int(c)+k] }
		case nd == 2: // inline constant or literal: a 64-bit integer operand
			v, err := w.scalar(in, c, k64i)
			if err != nil {
				return err
			}
			acc = func(_, k int) uint32 { return uint32(v >> (32 * k)) }
		default:
			return fmt.Errorf("%w: 128-bit operand %s", ErrUnimplemented, regName(c, nd))
		}
		if _, err := w.vdst(in.Opnd[fDst], nd); err != nil {
			return err
		}
		d := int(in.Opnd[fDst] - opVGPR0)
		for m := w.exec(); m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			var r [4]uint32
			for k := 0; k < 4; k++ {
				win := uint32(s0[l] >> (8 * k))
				if width == 16 {
					a := acc(l, k/2) >> (16 * (k & 1)) & 0xffff
					r[k/2] |= (sad(win, s1[l]) + a) & 0xffff << (16 * (k & 1))
				} else {
					r[k] = sad(win, s1[l]) + acc(l, k)
				}
			}
			for k := 0; k < nd; k++ {
				w.v[d+k][l] = r[k]
			}
		}
		return nil
	}
}

// fork is the common part of S_CBRANCH_G_FORK and S_CBRANCH_I_FORK (target: the branch's byte address).
func (w *wave) fork(in *Inst, mask, target uint64) error {
	exec := w.exec()
	pass, fail := mask&exec, ^mask&exec
	sz := uint64(in.Size)
	next := w.pc + sz
	jump := func(pc uint64) { w.pc = pc - sz } // step adds the instruction size
	switch {
	case pass == exec:
		jump(target)
		return nil
	case fail == exec:
		return nil
	}
	csp := w.mode >> modeCSPShift & 7
	b := 4 * csp
	push := func(pc, m uint64) {
		w.s[b], w.s[b+1], w.s[b+2], w.s[b+3] = uint32(m), uint32(m>>32), uint32(pc), uint32(pc>>32)
		w.mode = w.mode&^(7<<modeCSPShift) | (csp+1)&7<<modeCSPShift
	}
	if bits.OnesCount64(fail) < bits.OnesCount64(pass) {
		w.setExec(fail)
		push(target, pass)
		return nil
	}
	w.setExec(pass)
	push(next, fail)
	jump(target)
	return nil
}

// Message ids of S_SENDMSG SIMM16[3:0] (LLVM SIDefines.h SendMsg, GFX9).
const (
	msgInterrupt = 1
	// msgGetDoorbell is MSG_GET_DOORBELL (gfx9 SQ message 10).
	msgGetDoorbell = 10
	msgSysMsg      = 15
)

var msgNames = map[uint16]string{1: "MSG_INTERRUPT", 2: "MSG_GS", 3: "MSG_GS_DONE", 4: "MSG_SAVEWAVE",
	5: "MSG_STALL_WAVE_GEN", 6: "MSG_HALT_WAVES", 7: "MSG_ORDERED_PS_DONE", 8: "MSG_EARLY_PRIM_DEALLOC",
	9: "MSG_GS_ALLOC_REQ", 10: "MSG_GET_DOORBELL", 15: "MSG_SYSMSG"}

// sendmsg runs S_SENDMSG for a compute wave. MSG_INTERRUPT raises a host interrupt (Interrupt): counted in
// Stats and handed to the dispatch's Interrupt callback; the wave goes on. The geometry-shader, pixel-shader,
// context-save, wave-stall/halt, doorbell and system messages have no meaning for a compute wave without a
// trap handler or debugger; they stop the wave with ErrUnimplemented naming the message, rather than being
// dropped.
func (w *wave) sendmsg(in *Inst) error {
	id := uint16(in.Imm) & 0xf
	if id == msgInterrupt {
		d := w.d
		atomic.AddUint64(&d.stats.Interrupts, 1)
		if d.l.interrupt != nil {
			d.l.interrupt(Interrupt{PC: w.pc, Wave: w.id, Data: w.s[opM0] & 0xffffff, Priv: w.priv})
		}
		return nil
	}
	if id == msgGetDoorbell {
		// MSG_GET_DOORBELL (gfx9): EXEC_LO gets the queue's doorbell id, its bit 31 clear when the
		// message has returned (cwsr_trap_gfx9.asm and ROCr's trap handler poll that bit).
		w.s[opExecLo] = w.d.l.doorbell & 0x3ff
		return nil
	}
	n, ok := msgNames[id]
	if !ok {
		n = fmt.Sprint(id)
	}
	return fmt.Errorf("%w: s_sendmsg message %s in a compute wave", ErrUnimplemented, n)
}

// gprIndexed returns the instruction with the VGPR index mode applied (MODE.GPR_IDX_EN): M0[7:0] is added
// to the VGPR operands that M0[12] (src0), M0[13] (src1), M0[14] (src2) and M0[15] (vdst) select, on VALU
// encodings (Vega ISA S_SET_GPR_IDX_ON: "vector operations after this will perform relative GPR addressing
// based on the contents of M0"). Scalar and constant operands are not indexed. An indexed operand must stay
// in its register file (v or a).
func (w *wave) gprIndexed(in *Inst) (*Inst, error) {
	switch in.Fmt {
	case FmtVOP1, FmtVOP2, FmtVOPC, FmtVOP3, FmtVOP3P:
	default:
		return in, nil
	}
	m0 := w.s[opM0]
	idx := uint16(m0 & 0xff)
	in2 := *in
	for i, f := range [4]opField{fSrc0, fSrc1, fSrc2, fDst} {
		c := in.Opnd[f]
		if m0>>(12+i)&1 == 0 || c < opVGPR0 || c == opOff {
			continue
		}
		n := c + idx
		if (c < opAGPR0) != (n < opAGPR0) || n >= opAGPR0+256 {
			return nil, fmt.Errorf("%w: %s indexed by %d leaves the register file", ErrIllegal, regName(c, 1), idx)
		}
		in2.Opnd[f] = n
	}
	return &in2, nil
}

// isVector reports whether an instruction is a vector instruction that VSKIP suppresses (VOP*, DS and
// the vector memory encodings; "no VOP*/M*BUF/MIMG/DS/FLAT/EXP instructions are issued").
func isVector(f Format) bool {
	switch f {
	case FmtVOP1, FmtVOP2, FmtVOPC, FmtVOP3, FmtVOP3P, FmtDS, FmtFLAT, FmtGLOBAL, FmtSCRATCH, FmtMUBUF:
		return true
	}
	return false
}
