package shader

import (
	"fmt"
	"math"
	"math/bits"
)

// Cross-lane VALU and LDS-unit operations, floating-point class tests, and the remaining 32/64-bit VALU
// and SALU operations of GFX9 (Vega ISA, "Vector ALU Operations" and "Scalar ALU Operations"; LLVM
// SIInstructions.td / VOP*Instructions.td for the operand forms).

// xlaneOps registers the cross-lane VALU operations.
func xlaneOps() {
	// V_READFIRSTLANE_B32: the value of the first active lane (lane 0 when EXEC is zero) into an SGPR.
	def(OpVReadfirstlaneB32, func(w *wave, in *Inst) error {
		if err := w.checkExt(in); err != nil {
			return err
		}
		s, err := w.vsrc(in, in.Opnd[fSrc0], k32, 0)
		if err != nil {
			return err
		}
		l := 0
		if e := w.exec(); e != 0 {
			l = bits.TrailingZeros64(e)
		}
		w.sset(in.Opnd[fDst], s[l])
		return nil
	})
	// V_READLANE_B32: SGPR = S0 of lane S1[5:0], whatever EXEC holds.
	def(OpVReadlaneB32, func(w *wave, in *Inst) error {
		if err := w.checkExt(in); err != nil {
			return err
		}
		s, err := w.vsrc(in, in.Opnd[fSrc0], k32, 0)
		if err != nil {
			return err
		}
		lane, err := w.scalar(in, in.Opnd[fSrc1], k32)
		if err != nil {
			return err
		}
		w.sset(in.Opnd[fDst], s[lane&63])
		return nil
	})
	// V_WRITELANE_B32: VGPR lane S1[5:0] = S0 (a scalar), whatever EXEC holds.
	def(OpVWritelaneB32, func(w *wave, in *Inst) error {
		if err := w.checkExt(in); err != nil {
			return err
		}
		v, err := w.scalar(in, in.Opnd[fSrc0], k32)
		if err != nil {
			return err
		}
		lane, err := w.scalar(in, in.Opnd[fSrc1], k32)
		if err != nil {
			return err
		}
		d, err := w.vdst(in.Opnd[fDst], 1)
		if err != nil {
			return err
		}
		d[lane&63] = uint32(v)
		return nil
	})
	// V_MBCNT_LO/HI_U32_B32: the set bits of S0 below the lane's own bit (in the low or high half of
	// the 64-lane mask), plus S1.
	mbcnt := func(hi bool) execFn {
		return func(w *wave, in *Inst) error {
			return v32(tU32, 2, func(a, b, _ uint32) uint32 {
				below := uint64(1)<<w.lane - 1
				if hi {
					return uint32(bits.OnesCount32(a&uint32(below>>32))) + b
				}
				return uint32(bits.OnesCount32(a&uint32(below))) + b
			})(w, in)
		}
	}
	def(OpVMbcntLoU32B32, mbcnt(false))
	def(OpVMbcntHiU32B32, mbcnt(true))
	// V_SWAP_B32: exchange the two VGPRs in active lanes.
	def(OpVSwapB32, func(w *wave, in *Inst) error {
		if err := w.checkExt(in); err != nil {
			return err
		}
		a, err := w.vdst(in.Opnd[fDst], 1)
		if err != nil {
			return err
		}
		b, err := w.vdst(in.Opnd[fSrc0], 1)
		if err != nil {
			return err
		}
		for m := w.exec(); m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			a[l], b[l] = b[l], a[l]
		}
		return nil
	})
}

// valuBitOps registers the VALU bit, SAD, min3/max3/med3 and legacy-multiply operations.
func valuBitOps() {
	// 32-bit VALU
	def(OpVXnorB32, v32(tU32, 2, func(a, b, _ uint32) uint32 { return ^(a ^ b) }))
	def(OpVCvtF32Ubyte0, v32(tU32, 1, func(a, _, _ uint32) uint32 { return u32(float32(a & 0xff)) }))
	def(OpVCvtF32Ubyte1, v32(tU32, 1, func(a, _, _ uint32) uint32 { return u32(float32(a >> 8 & 0xff)) }))
	def(OpVCvtF32Ubyte2, v32(tU32, 1, func(a, _, _ uint32) uint32 { return u32(float32(a >> 16 & 0xff)) }))
	def(OpVCvtF32Ubyte3, v32(tU32, 1, func(a, _, _ uint32) uint32 { return u32(float32(a >> 24)) }))
	// V_CVT_FLR_I32_F32 = (int)floor(S0), V_CVT_RPI_I32_F32 = (int)floor(S0 + 0.5), saturating, NaN -> 0.
	def(OpVCvtFlrI32F32, v32(tF32, 1, func(a, _, _ uint32) uint32 { return satI32(math.Floor(float64(f32(a)))) }))
	def(OpVCvtRpiI32F32, v32(tF32, 1, func(a, _, _ uint32) uint32 { return satI32(math.Floor(float64(f32(a)) + 0.5)) }))
	// V_FFBH_I32: the position, counted from the MSB, of the first bit that differs from the sign bit;
	// -1 for 0 and -1.
	def(OpVFfbhI32, v32(tU32, 1, func(a, _, _ uint32) uint32 { return flbitI32(a) }))
	// V_ADD_I32/V_SUB_I32 (VOP3, GFX9): signed, saturating when clamp is set.
	def(OpVAddI32, addSubI32(false))
	def(OpVSubI32, addSubI32(true))
	// three-operand min/max/median
	def(OpVMin3F32, v32(tF32, 3, func(a, b, c uint32) uint32 { return minF32(minF32(a, b), c) }))
	def(OpVMax3F32, v32(tF32, 3, func(a, b, c uint32) uint32 { return maxF32(maxF32(a, b), c) }))
	def(OpVMed3F32, v32(tF32, 3, med3F32))
	def(OpVMed3I32, v32(tU32, 3, func(a, b, c uint32) uint32 {
		x, y, z := int32(a), int32(b), int32(c)
		return uint32(max(min(x, y), min(max(x, y), z)))
	}))
	def(OpVMed3U32, v32(tU32, 3, func(a, b, c uint32) uint32 { return max(min(a, b), min(max(a, b), c)) }))
	// DX9 "legacy" multiply: 0 times anything (infinity, NaN) is 0.
	def(OpVMulLegacyF32, v32(tF32, 2, func(a, b, _ uint32) uint32 { return mulLegacy(a, b) }))
	def(OpVMadLegacyF32, v32(tF32, 3, func(a, b, c uint32) uint32 { return u32(f32(mulLegacy(a, b)) + f32(c)) }))
	// sums of absolute differences
	def(OpVSadU8, v32(tU32, 3, func(a, b, c uint32) uint32 { return sadU8(a, b) + c }))
	def(OpVSadHiU8, v32(tU32, 3, func(a, b, c uint32) uint32 { return sadU8(a, b)<<16 + c }))
	def(OpVSadU16, v32(tU32, 3, func(a, b, c uint32) uint32 {
		return absDiff(a&0xffff, b&0xffff) + absDiff(a>>16, b>>16) + c
	}))
	def(OpVSadU32, v32(tU32, 3, func(a, b, c uint32) uint32 { return absDiff(a, b) + c }))
	// V_MSAD_U8: as SAD_U8, bytes where the reference (S1) is 0 are skipped.
	def(OpVMsadU8, v32(tU32, 3, func(a, b, c uint32) uint32 {
		s := c
		for i := 0; i < 32; i += 8 {
			if b>>i&0xff != 0 {
				s += absDiff(a>>i&0xff, b>>i&0xff)
			}
		}
		return s
	}))
	// V_LERP_U8: per byte, (S0 + S1 + S2[0]) >> 1 (rounding as S2's byte LSB says).
	def(OpVLerpU8, v32(tU32, 3, func(a, b, c uint32) uint32 {
		var d uint32
		for i := 0; i < 32; i += 8 {
			d |= ((a>>i&0xff + b>>i&0xff + c>>i&1) >> 1) << i
		}
		return d
	}))
	// V_CVT_PK_U8_F32: legacy.go (cvtPkU8).
	defs([]Op{OpVNop, OpVClrexcp}, func(*wave, *Inst) error { return nil })

	// 64-bit rounding
	def(OpVFloorF64, v64(tF64, tF64, 1, func(a, _, _ uint64) uint64 { return u64(math.Floor(f64(a))) }))
	def(OpVCeilF64, v64(tF64, tF64, 1, func(a, _, _ uint64) uint64 { return u64(math.Ceil(f64(a))) }))
	def(OpVTruncF64, v64(tF64, tF64, 1, func(a, _, _ uint64) uint64 { return u64(math.Trunc(f64(a))) }))
	def(OpVRndneF64, v64(tF64, tF64, 1, func(a, _, _ uint64) uint64 { return u64(math.RoundToEven(f64(a))) }))
}

// saluBitOps registers the SALU bit and EXEC-mask operations.
func saluBitOps() {
	// SALU
	def(OpSFf0I32B32, sop1u(func(_ *wave, a uint32) uint32 {
		if a == 0xffffffff {
			return 0xffffffff
		}
		return uint32(bits.TrailingZeros32(^a))
	}, false))
	def(OpSFf0I32B64, func(w *wave, in *Inst) error {
		a, r := w.s64(in, fSrc0), uint32(0xffffffff)
		if a != math.MaxUint64 {
			r = uint32(bits.TrailingZeros64(^a))
		}
		w.sset(in.Opnd[fDst], r)
		return nil
	})
	def(OpSFlbitI32B64, func(w *wave, in *Inst) error {
		a, r := w.s64(in, fSrc0), uint32(0xffffffff)
		if a != 0 {
			r = uint32(bits.LeadingZeros64(a))
		}
		w.sset(in.Opnd[fDst], r)
		return nil
	})
	// S_FLBIT_I32(_I64): as V_FFBH_I32.
	def(OpSFlbitI32, sop1u(func(_ *wave, a uint32) uint32 { return flbitI32(a) }, false))
	def(OpSFlbitI32I64, func(w *wave, in *Inst) error {
		a, r := w.s64(in, fSrc0), uint32(0xffffffff)
		if x := a ^ uint64(int64(a)>>63); x != 0 {
			r = uint32(bits.LeadingZeros64(x))
		}
		w.sset(in.Opnd[fDst], r)
		return nil
	})
	def(OpSBcnt0I32B64, func(w *wave, in *Inst) error {
		r := uint32(64 - bits.OnesCount64(w.s64(in, fSrc0)))
		w.sset(in.Opnd[fDst], r)
		w.scc = r != 0
		return nil
	})
	// S_BITSET0/1: D.bit[S0] = 0/1, D otherwise unchanged.
	bitset := func(one, wide bool) execFn {
		return func(w *wave, in *Inst) error {
			b := w.s32(in, fSrc0)
			if wide {
				d := w.sget64(in.Opnd[fDst])
				if one {
					d |= 1 << (b & 63)
				} else {
					d &^= 1 << (b & 63)
				}
				w.sset64(in.Opnd[fDst], d)
				return nil
			}
			d := w.s[in.Opnd[fDst]&127]
			if one {
				d |= 1 << (b & 31)
			} else {
				d &^= 1 << (b & 31)
			}
			w.sset(in.Opnd[fDst], d)
			return nil
		}
	}
	def(OpSBitset0B32, bitset(false, false))
	def(OpSBitset1B32, bitset(true, false))
	def(OpSBitset0B64, bitset(false, true))
	def(OpSBitset1B64, bitset(true, true))
	// S_WQM: each quad (4 bits) becomes all ones if any of its bits is set; S_QUADMASK: one bit per quad.
	def(OpSWqmB32, sop1u(func(_ *wave, a uint32) uint32 { return uint32(wqm(uint64(a))) }, true))
	def(OpSWqmB64, sop1u64(wqm, true))
	def(OpSQuadmaskB32, sop1u(func(_ *wave, a uint32) uint32 { return uint32(quadmask(uint64(a))) }, true))
	def(OpSQuadmaskB64, sop1u64(quadmask, true))
	def(OpSBitcmp0B64, func(w *wave, in *Inst) error {
		w.scc = w.s64(in, fSrc0)>>(w.s32(in, fSrc1)&63)&1 == 0
		return nil
	})
	def(OpSBitcmp1B64, func(w *wave, in *Inst) error {
		w.scc = w.s64(in, fSrc0)>>(w.s32(in, fSrc1)&63)&1 == 1
		return nil
	})
	def(OpSBfmB64, func(w *wave, in *Inst) error {
		a, b := w.s32(in, fSrc0), w.s32(in, fSrc1)
		w.sset64(in.Opnd[fDst], (uint64(1)<<(a&63)-1)<<(b&63))
		return nil
	})
	// S_ANDN1/ORN1_SAVEEXEC_B64: D = EXEC; EXEC = ~S0 op EXEC.
	def(OpSAndn1SaveexecB64, saveexec(func(s, e uint64) uint64 { return ^s & e }))
	def(OpSOrn1SaveexecB64, saveexec(func(s, e uint64) uint64 { return ^s | e }))
	def(OpSAndn1WrexecB64, wrexec(func(s, e uint64) uint64 { return ^s & e }))
	def(OpSAndn2WrexecB64, wrexec(func(s, e uint64) uint64 { return s &^ e }))
	// S_BITREPLICATE_B64_B32: each bit of S0[31:0] twice.
	def(OpSBitreplicateB64B32, func(w *wave, in *Inst) error {
		a, d := w.s32(in, fSrc0), uint64(0)
		for i := 0; i < 32; i++ {
			d |= uint64(a>>i&1) * 3 << (2 * i)
		}
		w.sset64(in.Opnd[fDst], d)
		return nil
	})
	// S_MOVRELS: D = SGPR[S0 + M0]; S_MOVRELD: SGPR[D + M0] = S0.
	movrel := func(src, wide bool) execFn {
		return func(w *wave, in *Inst) error {
			m0 := uint64(w.s[opM0])
			s, d := uint64(in.Opnd[fSrc0]), uint64(in.Opnd[fDst])
			if src {
				s += m0
			} else {
				d += m0
			}
			n := uint64(1)
			if wide {
				n = 2
			}
			if s+n > 102 || d+n > 102 { // 64-bit sums: M0 near 2^32 must not wrap into range
				return fmt.Errorf("%w: s_movrel beyond the SGPRs (M0 = %d)", ErrIllegal, m0)
			}
			for i := uint64(0); i < n; i++ {
				w.s[d+i] = w.s[s+i]
			}
			return nil
		}
	}
	def(OpSMovrelsB32, movrel(true, false))
	def(OpSMovrelsB64, movrel(true, true))
	def(OpSMovreldB32, movrel(false, false))
	def(OpSMovreldB64, movrel(false, true))
	// Wave priority, halt, kill and wake-up hints have no effect on a model that runs waves one at a
	// time (the ISA lists them as hints to the sequencer).
	defs([]Op{OpSWakeup, OpSSetkill}, func(*wave, *Inst) error { return nil })
}

// flbitI32 is the ISA's loop "for i in 1..31: if S0[31-i] != S0[31] return i", -1 when none differs.
func flbitI32(a uint32) uint32 {
	if x := a ^ uint32(int32(a)>>31); x != 0 {
		return uint32(bits.LeadingZeros32(x))
	}
	return 0xffffffff
}

func satI32(x float64) uint32 {
	switch {
	case x != x:
		return 0
	case x >= math.MaxInt32:
		return math.MaxInt32
	case x <= math.MinInt32:
		return 0x80000000
	}
	return uint32(int32(x))
}

func addSubI32(sub bool) execFn {
	return func(w *wave, in *Inst) error {
		clamp := in.Clamp
		in2 := *in
		in2.Clamp = false
		return v32(tU32, 2, func(a, b, _ uint32) uint32 {
			x, y := int64(int32(a)), int64(int32(b))
			r := x + y
			if sub {
				r = x - y
			}
			if clamp {
				r = max(math.MinInt32, min(math.MaxInt32, r))
			}
			return uint32(r)
		})(w, &in2)
	}
}

// minF32/maxF32 are V_MIN_F32/V_MAX_F32 (IEEE mode: a NaN operand yields the other operand).
func minF32(a, b uint32) uint32 { return u32(fmin32(f32(a), f32(b))) }
func maxF32(a, b uint32) uint32 { return u32(fmax32(f32(a), f32(b))) }

// med3F32 is V_MED3_F32: with a NaN operand the minimum of the three, else the middle value.
func med3F32(a, b, c uint32) uint32 {
	if f32(a) != f32(a) || f32(b) != f32(b) || f32(c) != f32(c) {
		return minF32(minF32(a, b), c)
	}
	mx := maxF32(maxF32(a, b), c)
	switch mx {
	case a:
		return maxF32(b, c)
	case b:
		return maxF32(a, c)
	}
	return maxF32(a, b)
}

func mulLegacy(a, b uint32) uint32 {
	if a&0x7fffffff == 0 || b&0x7fffffff == 0 {
		return (a ^ b) & 0x80000000 // +/-0 (sign as an ordinary product of zero)
	}
	return u32(f32(a) * f32(b))
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

func sadU8(a, b uint32) uint32 {
	var s uint32
	for i := 0; i < 32; i += 8 {
		s += absDiff(a>>i&0xff, b>>i&0xff)
	}
	return s
}

func wqm(a uint64) uint64 {
	var d uint64
	for i := 0; i < 64; i += 4 {
		if a>>i&0xf != 0 {
			d |= 0xf << i
		}
	}
	return d
}

func quadmask(a uint64) uint64 {
	var d uint64
	for i := 0; i < 16; i++ {
		if a>>(4*i)&0xf != 0 {
			d |= 1 << i
		}
	}
	return d
}

// wrexec is S_ANDN1/ANDN2_WREXEC_B64: EXEC = D = f(S0, EXEC), SCC = (EXEC != 0).
func wrexec(f func(s, e uint64) uint64) execFn {
	return func(w *wave, in *Inst) error {
		n := f(w.s64(in, fSrc0), w.exec())
		w.setExec(n)
		w.sset64(in.Opnd[fDst], n)
		w.scc = n != 0
		return nil
	}
}
