package shader

import (
	"fmt"
	"math/bits"
)

// h16pk is a packed 16-bit VOP3P operation: for the low result op_sel picks each source's half, for
// the high result op_sel_hi. Float forms: neg_lo/neg_hi negate, the FP16 denormal modes apply,
// clamp limits to [0, 1]; integer forms get clamp (saturation) as cl.
func h16pk(n int, float bool, f func(a, b, c uint32, cl bool) uint32) execFn {
	return func(w *wave, in *Inst) error {
		var src [3]*[lanes]uint32
		kind := k32
		if float {
			kind = k16f
		}
		for i := 0; i < n; i++ {
			s, err := w.vsrc(in, in.Opnd[[3]opField{fSrc0, fSrc1, fSrc2}[i]], kind, i)
			if err != nil {
				return err
			}
			src[i] = s
		}
		dst, err := w.vdst(in.Opnd[fDst], 1)
		if err != nil {
			return err
		}
		in16 := float && w.mode&0x40 == 0
		x := h16ctx{clamp: float && in.Clamp, out16: float && w.mode&0x80 == 0}
		for m := w.exec(); m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			var lo, hi [3]uint32
			for i := 0; i < n; i++ {
				v := src[i][l]
				lo[i] = v >> (16 * uint(in.OpSel>>i&1)) & 0xffff
				hi[i] = v >> (16 * uint(in.OpSelHi>>i&1)) & 0xffff
				if float {
					lo[i] ^= uint32(in.Neg>>i&1) << 15
					hi[i] ^= uint32(in.NegHi>>i&1) << 15
					if in16 {
						lo[i], hi[i] = h16Flush(lo[i]), h16Flush(hi[i])
					}
				}
			}
			rl, rh := f(lo[0], lo[1], lo[2], in.Clamp), f(hi[0], hi[1], hi[2], in.Clamp)
			if float {
				rl, rh = x.h(rl), x.h(rh)
			}
			dst[l] = rl&0xffff | rh<<16
		}
		return nil
	}
}

// h16DotInt is the sum of the products of the n-bit fields of a and b (signed or unsigned).
func h16DotInt(a, b uint32, n uint, signed bool) int64 {
	var s int64
	for i := uint(0); i < 32; i += n {
		x, y := int64(a>>i&(1<<n-1)), int64(b>>i&(1<<n-1))
		if signed {
			x, y = x<<(64-n)>>(64-n), y<<(64-n)>>(64-n)
		}
		s += x * y
	}
	return s
}

// h16DotExec is a VOP3P dot product: D = sum of S0[i]*S1[i] + S2 (S2 32-bit). For the 2-element forms
// op_sel/op_sel_hi pick the half that is element 0/1 of S0 and S1 (and for f16 neg_lo/neg_hi negate
// them, neg_lo[2] negates S2); the 4- and 8-element forms take the dwords as they are. Clamp
// saturates the integer sums to the 32-bit range and limits the f32 result to [0, 1]. The f32 sum
// is rounded once (h16DotF16). Modifiers whose meaning the ISA does not give stop the wave.
func h16DotExec(op Op) execFn {
	name := opNames[op]
	var n uint
	var signed, float bool
	switch op {
	case OpVDot2F32F16:
		n, float = 16, true
	case OpVDot2I32I16:
		n, signed = 16, true
	case OpVDot2U32U16:
		n = 16
	case OpVDot4I32I8:
		n, signed = 8, true
	case OpVDot4U32U8:
		n = 8
	case OpVDot8I32I4:
		n, signed = 4, true
	case OpVDot8U32U4:
		n = 4
	}
	return func(w *wave, in *Inst) error {
		switch {
		case in.OpSel&4 != 0 || in.OpSelHi&4 == 0:
			return fmt.Errorf("%w: op_sel on the 32-bit addend of %s", ErrUnimplemented, name)
		case n != 16 && (in.OpSel != 0 || in.OpSelHi != 7):
			return fmt.Errorf("%w: op_sel on %s", ErrUnimplemented, name)
		case !float && (in.Neg != 0 || in.NegHi != 0), float && in.NegHi&4 != 0:
			return fmt.Errorf("%w: neg_lo/neg_hi on %s", ErrUnimplemented, name)
		}
		var src [3]*[lanes]uint32
		for i := 0; i < 3; i++ {
			kind := k32
			if float && i < 2 {
				kind = k16f
			}
			s, err := w.vsrc(in, in.Opnd[[3]opField{fSrc0, fSrc1, fSrc2}[i]], kind, i)
			if err != nil {
				return err
			}
			src[i] = s
		}
		dst, err := w.vdst(in.Opnd[fDst], 1)
		if err != nil {
			return err
		}
		in16, in32, out32 := w.mode&0x40 == 0, w.mode&0x10 == 0, w.mode&0x20 == 0
		for m := w.exec(); m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			a, b, c := src[0][l], src[1][l], src[2][l]
			if n == 16 { // element 0 from the op_sel half, element 1 from the op_sel_hi half
				sel := func(v uint32, i int) uint32 {
					lo := v >> (16 * uint(in.OpSel>>i&1)) & 0xffff
					hi := v >> (16 * uint(in.OpSelHi>>i&1)) & 0xffff
					if float {
						lo ^= uint32(in.Neg>>i&1) << 15
						hi ^= uint32(in.NegHi>>i&1) << 15
						if in16 {
							lo, hi = h16Flush(lo), h16Flush(hi)
						}
					}
					return lo | hi<<16
				}
				a, b = sel(a, 0), sel(b, 1)
			}
			var r uint32
			if float {
				c ^= uint32(in.Neg>>2&1) << 31
				if in32 {
					c = flush32(c)
				}
				r = h16DotF16(a&0xffff, a>>16, b&0xffff, b>>16, c)
				if in.Clamp {
					r = outMod32(r, 0, true)
				}
				if out32 {
					r = flush32(r)
				}
			} else {
				s := h16DotInt(a, b, n, signed)
				if signed {
					s += int64(int32(c))
					if in.Clamp {
						r = h16SatI32(s)
					} else {
						r = uint32(s)
					}
				} else {
					s += int64(c)
					if in.Clamp {
						r = h16SatU32(s)
					} else {
						r = uint32(s)
					}
				}
			}
			dst[l] = r
		}
		return nil
	}
}

// h16MixExec is V_FMA_MIX_F32 (which 0), V_FMA_MIXLO_F16 (1) and V_FMA_MIXHI_F16 (2): D = S0*S1 + S2
// fused, each source an f32 (op_sel_hi[i] = 0) or the binary16 half op_sel[i] selects (op_sel_hi[i]
// = 1), converted exactly; neg_lo negates and neg_hi takes the absolute value (LLVM prints them as
// -|x|). The f32 result, or the binary16 result written to the low (mixlo) or high (mixhi) half with
// the other half preserved, is rounded once (sumOdd); clamp limits it to [0, 1]. Inline constants
// are read in the source's format.
func h16MixExec(which int) execFn {
	return func(w *wave, in *Inst) error {
		var src [3]*[lanes]uint32
		for i := 0; i < 3; i++ {
			kind := k32
			if in.OpSelHi>>i&1 != 0 {
				kind = k16f
			}
			s, err := w.vsrc(in, in.Opnd[[3]opField{fSrc0, fSrc1, fSrc2}[i]], kind, i)
			if err != nil {
				return err
			}
			src[i] = s
		}
		dst, err := w.vdst(in.Opnd[fDst], 1)
		if err != nil {
			return err
		}
		in16, in32 := w.mode&0x40 == 0, w.mode&0x10 == 0
		x := h16ctx{clamp: in.Clamp, out16: w.mode&0x80 == 0}
		for m := w.exec(); m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			var v [3]float64
			for i := 0; i < 3; i++ {
				s := src[i][l]
				if in.OpSelHi>>i&1 != 0 {
					h := s >> (16 * uint(in.OpSel>>i&1)) & 0xffff
					if in.NegHi>>i&1 != 0 {
						h &^= 0x8000
					}
					h ^= uint32(in.Neg>>i&1) << 15
					if in16 {
						h = h16Flush(h)
					}
					v[i] = h16f(h)
				} else {
					if in.NegHi>>i&1 != 0 {
						s &^= 1 << 31
					}
					s ^= uint32(in.Neg>>i&1) << 31
					if in32 {
						s = flush32(s)
					}
					v[i] = float64(f32(s))
				}
			}
			r := h16MixFma(v[0], v[1], v[2])
			switch which {
			case 0:
				o := u32(float32(r))
				if in.Clamp {
					o = outMod32(o, 0, true)
				}
				if w.mode&0x20 == 0 {
					o = flush32(o)
				}
				dst[l] = o
			case 1:
				dst[l] = dst[l]&0xffff0000 | x.h(h16r(r))
			default:
				dst[l] = dst[l]&0xffff | x.h(h16r(r))<<16
			}
		}
		return nil
	}
}

// vop3pF16Ops registers the packed 16-bit, dot-product and mix operations (VOP3P and their VOP2 accumulating forms).
func vop3pF16Ops() {
	// VOP2 packed and dot-product accumulations (the destination is the addend).
	def16(OpVPkFmacF16, h16spec{n: 3, src: [3]uint8{oPkF16, oPkF16, oPkF16}, res: rU32, acc: true,
		f: func(x *h16ctx, a, b, c uint32) uint32 {
			return x.h(h16Fma(a&0xffff, b&0xffff, c&0xffff)) | x.h(h16Fma(a>>16, b>>16, c>>16))<<16
		}})
	def16(OpVDot2cF32F16, h16spec{n: 3, src: [3]uint8{oPkF16, oPkF16, oF32}, res: rF32, acc: true, ext: xDPP,
		f: func(_ *h16ctx, a, b, c uint32) uint32 { return h16DotF16(a&0xffff, a>>16, b&0xffff, b>>16, c) }})
	dotc := func(f func(a, b uint32) int64) h16spec {
		return h16spec{n: 3, src: [3]uint8{oU32, oU32, oU32}, res: rU32, acc: true, ext: xDPP,
			f: func(_ *h16ctx, a, b, c uint32) uint32 { return uint32(f(a, b) + int64(int32(c))) }}
	}
	def16(OpVDot2cI32I16, dotc(func(a, b uint32) int64 { return h16DotInt(a, b, 16, true) }))
	def16(OpVDot4cI32I8, dotc(func(a, b uint32) int64 { return h16DotInt(a, b, 8, true) }))
	def16(OpVDot8cI32I4, dotc(func(a, b uint32) int64 { return h16DotInt(a, b, 4, true) }))

	// VOP3P packed 16-bit
	fl := func(f func(a, b, c uint32) uint32) func(a, b, c uint32, _ bool) uint32 {
		return func(a, b, c uint32, _ bool) uint32 { return f(a, b, c) }
	}
	def(OpVPkFmaF16, h16pk(3, true, fl(h16Fma)))
	def(OpVPkAddF16, h16pk(2, true, fl(func(a, b, _ uint32) uint32 { return h16r(h16f(a) + h16f(b)) })))
	def(OpVPkMulF16, h16pk(2, true, fl(func(a, b, _ uint32) uint32 { return h16r(h16f(a) * h16f(b)) })))
	def(OpVPkMinF16, h16pk(2, true, fl(func(a, b, _ uint32) uint32 { return h16Min(a, b) })))
	def(OpVPkMaxF16, h16pk(2, true, fl(func(a, b, _ uint32) uint32 { return h16Max(a, b) })))
	def(OpVPkAddU16, h16pk(2, false, func(a, b, _ uint32, cl bool) uint32 {
		if cl {
			return h16SatU16(int64(a) + int64(b))
		}
		return a + b
	}))
	def(OpVPkSubU16, h16pk(2, false, func(a, b, _ uint32, cl bool) uint32 {
		if cl {
			return h16SatU16(int64(a) - int64(b))
		}
		return a - b
	}))
	def(OpVPkAddI16, h16pk(2, false, func(a, b, _ uint32, cl bool) uint32 {
		if cl {
			return h16SatI16(int64(int16(a)) + int64(int16(b)))
		}
		return a + b
	}))
	def(OpVPkSubI16, h16pk(2, false, func(a, b, _ uint32, cl bool) uint32 {
		if cl {
			return h16SatI16(int64(int16(a)) - int64(int16(b)))
		}
		return a - b
	}))
	def(OpVPkMulLoU16, h16pk(2, false, func(a, b, _ uint32, _ bool) uint32 { return a * b }))
	def(OpVPkMadU16, h16pk(3, false, func(a, b, c uint32, cl bool) uint32 {
		if cl {
			return h16SatU16(int64(a)*int64(b) + int64(c))
		}
		return a*b + c
	}))
	def(OpVPkMadI16, h16pk(3, false, func(a, b, c uint32, cl bool) uint32 {
		r := int64(int16(a))*int64(int16(b)) + int64(int16(c))
		if cl {
			return h16SatI16(r)
		}
		return uint32(r)
	}))
	def(OpVPkLshlrevB16, h16pk(2, false, func(a, b, _ uint32, _ bool) uint32 { return b << (a & 15) }))
	def(OpVPkLshrrevB16, h16pk(2, false, func(a, b, _ uint32, _ bool) uint32 { return b >> (a & 15) }))
	def(OpVPkAshrrevI16, h16pk(2, false, func(a, b, _ uint32, _ bool) uint32 { return uint32(int16(b) >> (a & 15)) }))
	def(OpVPkMaxU16, h16pk(2, false, func(a, b, _ uint32, _ bool) uint32 { return max(a, b) }))
	def(OpVPkMinU16, h16pk(2, false, func(a, b, _ uint32, _ bool) uint32 { return min(a, b) }))
	def(OpVPkMaxI16, h16pk(2, false, func(a, b, _ uint32, _ bool) uint32 { return uint32(max(int16(a), int16(b))) }))
	def(OpVPkMinI16, h16pk(2, false, func(a, b, _ uint32, _ bool) uint32 { return uint32(min(int16(a), int16(b))) }))

	for _, op := range []Op{OpVDot2F32F16, OpVDot2I32I16, OpVDot2U32U16, OpVDot4I32I8, OpVDot4U32U8, OpVDot8I32I4,
		OpVDot8U32U4} {
		def(op, h16DotExec(op))
	}
	def(OpVFmaMixF32, h16MixExec(0))
	def(OpVFmaMixloF16, h16MixExec(1))
	def(OpVFmaMixhiF16, h16MixExec(2))
}
