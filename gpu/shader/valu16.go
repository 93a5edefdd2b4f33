package shader

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
)

// 16-bit VALU of gfx90a (GFX9): binary16 and 16-bit integer VOP1/VOP2/VOP3 operations, the
// packed 16-bit VOP3P operations, dot products and the mixed-precision FMAs.
//
// Sources: the GFX9 ("Vega") and MI200 ISA descriptions (the gem5 Vega model's ".arch file"
// pseudo-code in src/arch/amdgpu/vega/insts/instructions.cc quotes them); where the text is silent,
// LLVM's AMDGPU backend (GCNSubtarget::zeroesHigh16BitsOfDest for the destination's high half,
// ConstantFolding's amdgcn_fract for V_FRACT, SIISelLowering for the legal modifiers).
//
// Destination high half (GFX9, LLVM zeroesHigh16BitsOfDest): the VOP1/VOP2 16-bit operations and
// their VOP3 (_e64) forms, and the VOP3 "_legacy" opcodes (the GFX8 encodings), write bits 15:0 and
// zero bits 31:16. v_mac_f16, v_madmk_f16 and v_madak_f16 are the exception LLVM lists: on GFX9 they
// preserve bits 31:16. The GFX9 VOP3 opcodes with op_sel (v_mad_f16/u16/i16, v_fma_f16,
// v_div_fixup_f16, v_min3/max3/med3 f16/i16/u16, v_add/sub_i16) read the high half of source i
// when op_sel[i] is set and write the high half when op_sel[3] is set; the other half of the
// destination is preserved.
//
// Denormals: MODE.FP_DENORM bits 7:6 (FLOAT_DENORM_MODE_16_64) govern binary16 as bits 5:4 govern
// f32 (v32): bit 6 clear flushes denormal f16 inputs, bit 7 clear flushes denormal f16 results, to a
// zero of the same sign. Each operand follows its own format (an f32 operand follows bits 5:4).

// Operand kinds of a 16-bit VALU operation.
const (
	oF16   = iota // binary16 in one half of the dword (op_sel / SDWA select it); abs/neg on bit 15
	oI16          // 16-bit integer in one half of the dword
	oF32          // f32; abs/neg on bit 31
	oU32          // 32 raw bits
	oPkF16        // two binary16 values (packed), denormals flushed per half
)

// Result kinds.
const (
	rF16 = iota // binary16: omod, clamp to [0, 1], FP16 output denormal mode
	rI16        // 16-bit integer
	rF32        // f32: omod, clamp, FP32 output denormal mode
	rU32        // 32 raw bits (the function finishes packed f16 halves with h16ctx.h)
)

// Destination half policies of 16-bit results.
const (
	hiZero = iota // bits 15:0 written, bits 31:16 zeroed
	hiSel         // op_sel[3] selects the half written, the other half is preserved
	hiKeep        // bits 15:0 written, bits 31:16 preserved
)

// Extensions a VOP1/VOP2 16-bit operation accepts.
const (
	xDPP  = 1
	xSDWA = 2
)

// h16ctx carries the output modifiers and modes to an operation's function.
type h16ctx struct {
	clamp bool
	out16 bool // flush denormal f16 results
}

// h finishes one binary16 half of a packed result: clamp to [0, 1] and the output denormal mode.
func (x *h16ctx) h(v uint32) uint32 {
	v &= 0xffff
	if x.clamp {
		v = uint32(h16Clamp(uint16(v)))
	}
	if x.out16 {
		v = h16Flush(v)
	}
	return v
}

type h16spec struct {
	n     int
	src   [3]uint8
	res   uint8
	hi    uint8
	opsel bool // VOP3 op_sel selects source halves (and with hiSel the destination half)
	acc   bool // src2 is the destination register (v_mac_f16, v_dot*c)
	lit   bool // src2 is the literal K (v_madak_f16; v_madmk_f16's function takes it as the factor)
	ext   uint8
	f     func(x *h16ctx, a, b, c uint32) uint32
}

// h16op builds a 16-bit VOP1/VOP2/VOP3 operation.
func h16op(sp h16spec) execFn {
	return func(w *wave, in *Inst) error {
		switch {
		case in.Ext == extDPP && sp.ext&xDPP == 0, in.Ext == extSDWA && sp.ext&xSDWA == 0:
			return fmt.Errorf("%w: DPP/SDWA operand modifiers on this operation", ErrUnimplemented)
		case in.Fmt == FmtVOP3 && in.OpSel != 0 && !sp.opsel:
			return fmt.Errorf("%w: VOP3 op_sel", ErrUnimplemented)
		}
		for i := 0; i < sp.n; i++ {
			if sp.src[i] == oPkF16 && (in.Abs|in.Neg)>>i&1 != 0 {
				return fmt.Errorf("%w: abs/neg on a packed operand", ErrUnimplemented)
			}
		}
		codes := [3]uint16{in.Opnd[fSrc0], in.Opnd[fSrc1], in.Opnd[fSrc2]}
		if sp.acc {
			codes[2] = in.Opnd[fDst]
		}
		if sp.lit {
			codes[2] = opLiteral
		}
		var raw [3]*[lanes]uint32
		writeMask := ^uint64(0)
		for i := 0; i < sp.n; i++ {
			kind := k32
			if sp.src[i] == oF16 || sp.src[i] == oPkF16 {
				kind = k16f
			}
			s, err := w.vsrc(in, codes[i], kind, i)
			if err != nil {
				return err
			}
			if in.Ext == extDPP && i == 0 {
				s, writeMask = w.applyDPP(in, s)
			}
			raw[i] = s
		}
		dst, err := w.vdst(in.Opnd[fDst], 1)
		if err != nil {
			return err
		}
		in16, in32 := w.mode&0x40 == 0, w.mode&0x10 == 0
		x := h16ctx{clamp: in.Clamp, out16: w.mode&0x80 == 0}
		out32 := w.mode&0x20 == 0
		sdwaDst := in.Ext == extSDWA && in.SDWADstSel != selDword
		for m := w.exec() & writeMask; m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			w.lane = l
			var v [3]uint32
			for i := 0; i < sp.n; i++ {
				s := raw[i][l]
				switch sp.src[i] {
				case oF16, oI16:
					s = h16half(s, in, i, sp.opsel, sp.src[i] == oI16)
					if sp.src[i] == oF16 {
						s = modBits(s, in, i, 0x8000)
						if in16 {
							s = h16Flush(s)
						}
					}
				case oF32:
					if in.Ext == extSDWA && i < 2 {
						s = sdwaExtract(s, h16SdwaSel(in, i), false)
					}
					s = modBits(s, in, i, 0x80000000)
					if in32 {
						s = flush32(s)
					}
				case oU32:
					if in.Ext == extSDWA && i < 2 {
						sext := in.SDWASext0
						if i == 1 {
							sext = in.SDWASext1
						}
						s = sdwaExtract(s, h16SdwaSel(in, i), sext)
					}
				case oPkF16:
					if in16 {
						s = h16Flush(s&0xffff) | h16Flush(s>>16)<<16
					}
				}
				v[i] = s
			}
			r := sp.f(&x, v[0], v[1], v[2])
			switch sp.res {
			case rF16:
				r = uint32(h16OutMod(uint16(r), in.Omod, in.Clamp))
				if x.out16 {
					r = h16Flush(r)
				}
			case rF32:
				if in.Omod != 0 || in.Clamp {
					r = outMod32(r, in.Omod, in.Clamp)
				}
				if out32 {
					r = flush32(r)
				}
			}
			switch {
			case sdwaDst:
				r = sdwaInsert(dst[l], r, in.SDWADstSel, in.SDWADstUnused)
			case sp.res == rF16 || sp.res == rI16:
				switch {
				case sp.hi == hiSel && in.OpSel&8 != 0:
					r = dst[l]&0xffff | r<<16
				case sp.hi == hiZero:
					r &= 0xffff
				default: // hiKeep, hiSel writing the low half
					r = dst[l]&0xffff0000 | r&0xffff
				}
			}
			dst[l] = r
		}
		return nil
	}
}

func h16SdwaSel(in *Inst, i int) uint8 {
	if i == 1 {
		return in.SDWASrc1Sel
	}
	return in.SDWASrc0Sel
}

// h16half is the 16-bit operand i of a dword: the SDWA select (sign-extended for integers when
// asked), the half VOP3 op_sel picks, or the low half.
func h16half(s uint32, in *Inst, i int, opsel, integer bool) uint32 {
	switch {
	case in.Ext == extSDWA && i < 2:
		sext := in.SDWASext0
		if i == 1 {
			sext = in.SDWASext1
		}
		s = sdwaExtract(s, h16SdwaSel(in, i), sext && integer)
	case in.Fmt == FmtVOP3 && opsel && in.OpSel>>i&1 != 0:
		s >>= 16
	}
	return s & 0xffff
}

// h16Flush flushes a denormal binary16 (in the low 16 bits) to a zero of the same sign.
func h16Flush(v uint32) uint32 {
	if v&0x7c00 == 0 {
		return v & 0x8000
	}
	return v
}

// h16Clamp is the VOP3 clamp of a binary16: to [0, 1], NaN to 0 (as outMod32 does for f32).
func h16Clamp(v uint16) uint16 {
	x := f16to32(v)
	switch {
	case x < 0 || x != x:
		return 0
	case x > 1:
		return 0x3c00
	}
	return v
}

// h16OutMod applies omod (*2, *4, /2) and clamp to a binary16 result.
func h16OutMod(r uint16, omod uint8, clamp bool) uint16 {
	if omod != 0 {
		x := float64(f16to32(r))
		switch omod {
		case 1:
			x *= 2
		case 2:
			x *= 4
		case 3:
			x /= 2
		}
		r = f64to16(x)
	}
	if clamp {
		r = h16Clamp(r)
	}
	return r
}

func h16f(v uint32) float64 { return float64(f16to32(uint16(v))) }
func h16r(x float64) uint32 { return uint32(f64to16(x)) }
func h16NaN(v uint32) bool  { return v&0x7c00 == 0x7c00 && v&0x3ff != 0 }

// sumOdd returns p+c rounded to odd at float64 precision: the exact sum when it is representable,
// else whichever of its two float64 neighbours has an odd significand. The rounding error comes
// from TwoSum (Knuth), exact without overflow. Rounding a round-to-odd value once more to a format
// of at most 51 significant bits (f32, f16) gives the correctly rounded exact sum (Boldo and
// Melquiond), so fma(a, b, c) with an exact product p = a*b (f16 or f32 factors) is rounded once.
func sumOdd(p, c float64) float64 {
	s := p + c
	if math.IsInf(s, 0) || s != s {
		return s
	}
	bb := s - p
	e := (p - (s - bb)) + (c - bb)
	if e != 0 && math.Float64bits(s)&1 == 0 {
		s = math.Nextafter(s, math.Copysign(math.Inf(1), e))
	}
	return s
}

// h16Fma is a correctly rounded binary16 fused multiply-add: the product of two binary16 values is
// exact in float64, the sum is rounded to odd (sumOdd) and then once to binary16. (math.FMA in
// float64 followed by a rounding to binary16 would round twice.)
func h16Fma(a, b, c uint32) uint32 { return h16r(sumOdd(h16f(a)*h16f(b), h16f(c))) }

// h16Mad is V_MAD_F16/V_MAC_F16: unfused, the product rounded to binary16 before the addition (as
// v_mad_f32 here). The sum of two binary16 values is exact in float64.
func h16Mad(a, b, c uint32) uint32 { return h16r(h16f(h16r(h16f(a)*h16f(b))) + h16f(c)) }

// h16Min/h16Max are V_MIN_F16/V_MAX_F16 with the NaN convention of fmin32/fmax32 (IEEE mode: a NaN
// operand yields the other operand; -0 < +0).
func h16Min(a, b uint32) uint32 {
	switch {
	case h16NaN(a):
		return b
	case h16NaN(b):
		return a
	}
	x, y := h16f(a), h16f(b)
	if x < y || x == y && a&0x8000 != 0 {
		return a
	}
	return b
}

func h16Max(a, b uint32) uint32 {
	switch {
	case h16NaN(a):
		return b
	case h16NaN(b):
		return a
	}
	x, y := h16f(a), h16f(b)
	if x > y || x == y && a&0x8000 == 0 {
		return a
	}
	return b
}

// h16Med3 is V_MED3_F16: with a NaN operand the minimum of the three, else the middle value (the
// ISA's pseudo-code, as med3F32).
func h16Med3(a, b, c uint32) uint32 {
	if h16NaN(a) || h16NaN(b) || h16NaN(c) {
		return h16Min(h16Min(a, b), c)
	}
	mx := h16f(h16Max(h16Max(a, b), c))
	switch {
	case mx == h16f(a):
		return h16Max(b, c)
	case mx == h16f(b):
		return h16Max(a, c)
	}
	return h16Max(a, b)
}

// h16DivFixup is V_DIV_FIXUP_F16(quotient S0, denominator S1, numerator S2), as divFixup32.
func h16DivFixup(s0, s1, s2 uint32) uint32 {
	q, d, n := h16f(s0), h16f(s1), h16f(s2)
	neg := (s1^s2)&0x8000 != 0
	sgn := func(v float64) uint32 {
		if neg {
			return h16r(-v)
		}
		return h16r(v)
	}
	switch {
	case n != n:
		return s2&0xffff | 0x200
	case d != d:
		return s1&0xffff | 0x200
	case d == 0 && n == 0, math.IsInf(d, 0) && math.IsInf(n, 0):
		return 0x7e00
	case d == 0 || math.IsInf(n, 0):
		return sgn(math.Inf(1))
	case math.IsInf(d, 0) || n == 0:
		return sgn(0)
	}
	return sgn(math.Abs(q))
}

// h16Fract is V_FRACT_F16: x - floor(x), at most the largest binary16 below 1 (LLVM's constant
// folding of amdgcn_fract: "the v_fract instruction behaves like the OpenCL spec"); NaN for ±inf.
func h16Fract(a uint32) uint32 {
	x := h16f(a)
	r := h16r(x - math.Floor(x))
	if r == 0x3c00 {
		r = 0x3bff
	}
	return r
}

// h16RTZ rounds a float64 to binary16 toward zero (V_CVT_PKRTZ_F16_F32): finite values beyond the
// range give the largest finite value, infinities stay infinite, NaN is quiet.
func h16RTZ(x float64) uint32 {
	sign := uint32(0)
	if math.Signbit(x) {
		sign = 0x8000
	}
	a := math.Abs(x)
	switch {
	case x != x:
		return sign | 0x7e00
	case math.IsInf(x, 0):
		return sign | 0x7c00
	case a >= 65504:
		return sign | 0x7bff
	case a < 0x1p-14:
		return sign | uint32(math.Floor(a*0x1p24))
	}
	e := math.Ilogb(a)
	q := uint32(math.Floor(math.Ldexp(a, 10-e)))
	return sign | uint32(e+15)<<10 | (q - 1024)
}

// h16Snorm/h16Unorm: V_CVT_*NORM_*16 (flt_to_snorm/unorm): clamped to [-1, 1] or [0, 1], scaled by
// 32767 or 65535 and rounded to nearest even (the product is exact in float64); NaN gives 0.
func h16Snorm(x float64) uint32 {
	if x != x {
		return 0
	}
	x = max(-1, min(1, x))
	return uint32(uint16(int16(math.RoundToEven(x * 32767))))
}

func h16Unorm(x float64) uint32 {
	if x != x {
		return 0
	}
	x = max(0, min(1, x))
	return uint32(math.RoundToEven(x * 65535))
}

// h16ToU16/I16 are V_CVT_U16_F16 and V_CVT_I16_F16: truncation, saturation, NaN -> 0 (as the f32
// conversions, cvtF32ToU32/I32).
func h16ToU16(a uint32) uint32 {
	x := h16f(a)
	switch {
	case x != x || x <= 0:
		return 0
	case x >= 65535:
		return 0xffff
	}
	return uint32(x)
}

func h16ToI16(a uint32) uint32 {
	x := h16f(a)
	switch {
	case x != x:
		return 0
	case x <= -32768:
		return 0x8000
	case x >= 32767:
		return 0x7fff
	}
	return uint32(uint16(int16(x)))
}

func h16SatU16(x int64) uint32 { return uint32(max(0, min(0xffff, x))) }
func h16SatI16(x int64) uint32 { return uint32(uint16(int16(max(-0x8000, min(0x7fff, x))))) }
func h16SatU32(x int64) uint32 { return uint32(max(0, min(0xffffffff, x))) }
func h16SatI32(x int64) uint32 {
	return uint32(int32(max(math.MinInt32, min(math.MaxInt32, x))))
}

// h16DotF16 is a·b + c of two packed binary16 pairs and an f32, rounded once to f32. The products
// are exact in float64; the sum of the three terms is formed exactly with math/big (at most ~200
// significant bits) and rounded to nearest even by big.Float.Float32.
func h16DotF16(a0, a1, b0, b1, c uint32) uint32 {
	p0, p1, z := h16f(a0)*h16f(b0), h16f(a1)*h16f(b1), float64(f32(c))
	if math.IsInf(p0, 0) || math.IsInf(p1, 0) || math.IsInf(z, 0) || p0 != p0 || p1 != p1 || z != z {
		return u32(float32(p0 + p1 + z))
	}
	var s, t big.Float
	s.SetPrec(512).SetFloat64(p0)
	t.SetPrec(512).SetFloat64(p1)
	s.Add(&s, &t)
	t.SetFloat64(z)
	s.Add(&s, &t)
	if s.Sign() == 0 { // the sign of an exact zero as IEEE addition gives it
		return u32(float32(p0 + p1 + z))
	}
	r, _ := s.Float32()
	return u32(r)
}

// h16MixFma is the V_FMA_MIX fused multiply-add of three values given as float64 (f32 or f16 sources,
// exact): the product is exact, the sum rounded to odd, the caller rounds once more.
func h16MixFma(a, b, c float64) float64 { return sumOdd(a*b, c) }

// Shorthand builders of the 16-bit operation specs: unary and binary binary16, binary 16-bit integer.
func h16f1(f func(x float64) float64) h16spec {
	return h16spec{n: 1, src: [3]uint8{oF16}, res: rF16, ext: xDPP | xSDWA,
		f: func(_ *h16ctx, a, _, _ uint32) uint32 { return h16r(f(h16f(a))) }}
}

func h16f2(f func(a, b uint32) uint32) h16spec {
	return h16spec{n: 2, src: [3]uint8{oF16, oF16}, res: rF16, ext: xDPP | xSDWA,
		f: func(_ *h16ctx, a, b, _ uint32) uint32 { return f(a, b) }}
}

func h16i2(f func(x *h16ctx, a, b uint32) uint32) h16spec {
	return h16spec{n: 2, src: [3]uint8{oI16, oI16}, res: rI16, ext: xDPP | xSDWA,
		f: func(x *h16ctx, a, b, _ uint32) uint32 { return f(x, a, b) }}
}

// def16 sets a 16-bit operation's spec (its high-half and op_sel rule, which round.go reuses) and its
// routine.
func def16(op Op, sp h16spec) {
	opTab[op].h16 = &sp
	def(op, h16op(sp))
}

// vop2F16Ops registers the binary16 and 16-bit integer VOP2 operations.
func vop2F16Ops() {
	// VOP2 binary16
	def16(OpVAddF16, h16f2(func(a, b uint32) uint32 { return h16r(h16f(a) + h16f(b)) }))
	def16(OpVSubF16, h16f2(func(a, b uint32) uint32 { return h16r(h16f(a) - h16f(b)) }))
	def16(OpVSubrevF16, h16f2(func(a, b uint32) uint32 { return h16r(h16f(b) - h16f(a)) }))
	def16(OpVMulF16, h16f2(func(a, b uint32) uint32 { return h16r(h16f(a) * h16f(b)) }))
	def16(OpVMaxF16, h16f2(h16Max))
	def16(OpVMinF16, h16f2(h16Min))
	// V_LDEXP_F16: D.f16 = S0.f16 * 2**S1.i16 (the exponent is the signed low half of S1; LLVM
	// clamps an i32 exponent to the i16 range before using it). The scaling is exact in float64
	// and the result is rounded once (overflow to inf, underflow through denormals to 0).
	ldexp := h16f2(func(a, b uint32) uint32 { return h16r(math.Ldexp(h16f(a), int(int16(b)))) })
	ldexp.src[1] = oI16
	def16(OpVLdexpF16, ldexp)
	// V_MAC_F16: D = S0*S1 + D; V_MADMK_F16: D = S0*K + S1; V_MADAK_F16: D = S0*S1 + K (K the low
	// half of the literal dword). On GFX9 the three keep bits 31:16 of the destination.
	mad := func(_ *h16ctx, a, b, c uint32) uint32 { return h16Mad(a, b, c) }
	def16(OpVMacF16, h16spec{n: 3, src: [3]uint8{oF16, oF16, oF16}, res: rF16, hi: hiKeep, acc: true, ext: xDPP, f: mad})
	def16(OpVMadakF16, h16spec{n: 3, src: [3]uint8{oF16, oF16, oF16}, res: rF16, hi: hiKeep, lit: true, f: mad})
	def16(OpVMadmkF16, h16spec{n: 3, src: [3]uint8{oF16, oF16, oF16}, res: rF16, hi: hiKeep, lit: true,
		f: func(_ *h16ctx, a, b, k uint32) uint32 { return h16Mad(a, k, b) }})

	// VOP2 16-bit integer; clamp saturates the additions and subtractions.
	def16(OpVAddU16, h16i2(func(x *h16ctx, a, b uint32) uint32 {
		if x.clamp {
			return h16SatU16(int64(a) + int64(b))
		}
		return a + b
	}))
	def16(OpVSubU16, h16i2(func(x *h16ctx, a, b uint32) uint32 {
		if x.clamp {
			return h16SatU16(int64(a) - int64(b))
		}
		return a - b
	}))
	def16(OpVSubrevU16, h16i2(func(x *h16ctx, a, b uint32) uint32 {
		if x.clamp {
			return h16SatU16(int64(b) - int64(a))
		}
		return b - a
	}))
	def16(OpVMulLoU16, h16i2(func(_ *h16ctx, a, b uint32) uint32 { return a * b }))
	def16(OpVLshlrevB16, h16i2(func(_ *h16ctx, a, b uint32) uint32 { return b << (a & 15) }))
	def16(OpVLshrrevB16, h16i2(func(_ *h16ctx, a, b uint32) uint32 { return b >> (a & 15) }))
	def16(OpVAshrrevI16, h16i2(func(_ *h16ctx, a, b uint32) uint32 { return uint32(int16(b) >> (a & 15)) }))
	def16(OpVMaxU16, h16i2(func(_ *h16ctx, a, b uint32) uint32 { return max(a, b) }))
	def16(OpVMinU16, h16i2(func(_ *h16ctx, a, b uint32) uint32 { return min(a, b) }))
	def16(OpVMaxI16, h16i2(func(_ *h16ctx, a, b uint32) uint32 { return uint32(max(int16(a), int16(b))) }))
	def16(OpVMinI16, h16i2(func(_ *h16ctx, a, b uint32) uint32 { return uint32(min(int16(a), int16(b))) }))
}

// vop1F16Ops registers the binary16 VOP1 operations and conversions.
func vop1F16Ops() {
	// VOP1 binary16. The transcendentals are computed in float64 and rounded once to binary16 (the
	// hardware's are approximations within about 1 ULP); sin/cos take the angle in revolutions, as
	// v_sin_f32/v_cos_f32 do.
	def16(OpVRcpF16, h16f1(func(x float64) float64 { return 1 / x }))
	def16(OpVSqrtF16, h16f1(math.Sqrt))
	def16(OpVRsqF16, h16f1(func(x float64) float64 { return 1 / math.Sqrt(x) }))
	def16(OpVLogF16, h16f1(math.Log2))
	def16(OpVExpF16, h16f1(math.Exp2))
	def16(OpVSinF16, h16f1(func(x float64) float64 { return math.Sin(2 * math.Pi * x) }))
	def16(OpVCosF16, h16f1(func(x float64) float64 { return math.Cos(2 * math.Pi * x) }))
	def16(OpVFrexpMantF16, h16f1(frexpMant))
	def16(OpVFloorF16, h16f1(math.Floor))
	def16(OpVCeilF16, h16f1(math.Ceil))
	def16(OpVTruncF16, h16f1(math.Trunc))
	def16(OpVRndneF16, h16f1(math.RoundToEven))
	fract := h16f1(nil)
	fract.f = func(_ *h16ctx, a, _, _ uint32) uint32 { return h16Fract(a) }
	def16(OpVFractF16, fract)
	toInt := func(f func(a uint32) uint32) h16spec {
		return h16spec{n: 1, src: [3]uint8{oF16}, res: rI16, ext: xDPP | xSDWA,
			f: func(_ *h16ctx, a, _, _ uint32) uint32 { return f(a) }}
	}
	def16(OpVFrexpExpI16F16, toInt(func(a uint32) uint32 { return frexpExp(h16f(a)) & 0xffff }))
	def16(OpVCvtU16F16, toInt(h16ToU16))
	def16(OpVCvtI16F16, toInt(h16ToI16))
	def16(OpVCvtNormI16F16, toInt(func(a uint32) uint32 { return h16Snorm(h16f(a)) }))
	def16(OpVCvtNormU16F16, toInt(func(a uint32) uint32 { return h16Unorm(h16f(a)) }))
	fromInt := func(f func(a uint32) float64) h16spec {
		return h16spec{n: 1, src: [3]uint8{oI16}, res: rF16, ext: xDPP | xSDWA,
			f: func(_ *h16ctx, a, _, _ uint32) uint32 { return h16r(f(a)) }}
	}
	def16(OpVCvtF16U16, fromInt(func(a uint32) float64 { return float64(uint16(a)) }))
	def16(OpVCvtF16I16, fromInt(func(a uint32) float64 { return float64(int16(a)) }))
	// V_SAT_PK_U8_I16: D = {16'b0, sat_u8(S0.i16[1]), sat_u8(S0.i16[0])}.
	def16(OpVSatPkU8I16, h16spec{n: 1, src: [3]uint8{oU32}, res: rI16, ext: xDPP | xSDWA,
		f: func(_ *h16ctx, a, _, _ uint32) uint32 {
			s := func(v uint32) uint32 { return uint32(max(0, min(255, int32(int16(v))))) }
			return s(a) | s(a>>16)<<8
		}})
	def16(OpVCvtF16F32, h16spec{n: 1, src: [3]uint8{oF32}, res: rF16, ext: xDPP | xSDWA,
		f: func(_ *h16ctx, a, _, _ uint32) uint32 { return uint32(f32to16(f32(a))) }})
	def16(OpVCvtF32F16, h16spec{n: 1, src: [3]uint8{oF16}, res: rF32, ext: xDPP | xSDWA,
		f: func(_ *h16ctx, a, _, _ uint32) uint32 { return u32(f16to32(uint16(a))) }})
}

// vop3F16Ops registers the VOP3-only 16-bit operations (op_sel and _legacy forms) and the packing conversions.
func vop3F16Ops() {
	// VOP3-only binary16 with op_sel (GFX9 opcodes) and their _legacy (GFX8) forms.
	f3 := func(hi uint8, f func(a, b, c uint32) uint32) h16spec {
		return h16spec{n: 3, src: [3]uint8{oF16, oF16, oF16}, res: rF16, hi: hi, opsel: hi == hiSel,
			f: func(_ *h16ctx, a, b, c uint32) uint32 { return f(a, b, c) }}
	}
	def16(OpVMadF16, f3(hiSel, h16Mad))
	def16(OpVMadLegacyF16, f3(hiZero, h16Mad))
	def16(OpVFmaF16, f3(hiSel, h16Fma))
	def16(OpVFmaLegacyF16, f3(hiZero, h16Fma))
	def16(OpVDivFixupF16, f3(hiSel, h16DivFixup))
	def16(OpVDivFixupLegacyF16, f3(hiZero, h16DivFixup))
	def16(OpVMin3F16, f3(hiSel, func(a, b, c uint32) uint32 { return h16Min(h16Min(a, b), c) }))
	def16(OpVMax3F16, f3(hiSel, func(a, b, c uint32) uint32 { return h16Max(h16Max(a, b), c) }))
	def16(OpVMed3F16, f3(hiSel, h16Med3))

	// VOP3-only 16-bit integer
	i3 := func(hi uint8, f func(x *h16ctx, a, b, c uint32) uint32) h16spec {
		return h16spec{n: 3, src: [3]uint8{oI16, oI16, oI16}, res: rI16, hi: hi, opsel: hi == hiSel, f: f}
	}
	madU := func(x *h16ctx, a, b, c uint32) uint32 {
		if x.clamp {
			return h16SatU16(int64(a)*int64(b) + int64(c))
		}
		return a*b + c
	}
	madI := func(x *h16ctx, a, b, c uint32) uint32 {
		r := int64(int16(a))*int64(int16(b)) + int64(int16(c))
		if x.clamp {
			return h16SatI16(r)
		}
		return uint32(r)
	}
	def16(OpVMadU16, i3(hiSel, madU))
	def16(OpVMadLegacyU16, i3(hiZero, madU))
	def16(OpVMadI16, i3(hiSel, madI))
	def16(OpVMadLegacyI16, i3(hiZero, madI))
	u3 := func(f func(a, b, c uint32) uint32) h16spec {
		return i3(hiSel, func(_ *h16ctx, a, b, c uint32) uint32 { return f(a, b, c) })
	}
	s3 := func(f func(a, b, c int16) int16) h16spec {
		return i3(hiSel, func(_ *h16ctx, a, b, c uint32) uint32 { return uint32(uint16(f(int16(a), int16(b), int16(c)))) })
	}
	def16(OpVMin3U16, u3(func(a, b, c uint32) uint32 { return min(a, b, c) }))
	def16(OpVMax3U16, u3(func(a, b, c uint32) uint32 { return max(a, b, c) }))
	def16(OpVMed3U16, u3(func(a, b, c uint32) uint32 { return max(min(a, b), min(max(a, b), c)) }))
	def16(OpVMin3I16, s3(func(a, b, c int16) int16 { return min(a, b, c) }))
	def16(OpVMax3I16, s3(func(a, b, c int16) int16 { return max(a, b, c) }))
	def16(OpVMed3I16, s3(func(a, b, c int16) int16 { return max(min(a, b), min(max(a, b), c)) }))
	addSub := func(sub bool) h16spec {
		sp := i3(hiSel, func(x *h16ctx, a, b, _ uint32) uint32 {
			r := int64(int16(a)) + int64(int16(b))
			if sub {
				r = int64(int16(a)) - int64(int16(b))
			}
			if x.clamp {
				return h16SatI16(r)
			}
			return uint32(r)
		})
		sp.n = 2
		return sp
	}
	def16(OpVAddI16, addSub(false))
	def16(OpVSubI16, addSub(true))
	// V_MAD_U32_U16 / V_MAD_I32_I16: a 16x16 product plus a 32-bit addend; op_sel selects the halves
	// of the 16-bit sources only (bits 2 and 3 address the 32-bit src2 and result: ignored).
	def16(OpVMadU32U16, h16spec{n: 3, src: [3]uint8{oI16, oI16, oU32}, res: rU32, opsel: true,
		f: func(x *h16ctx, a, b, c uint32) uint32 {
			r := int64(a)*int64(b) + int64(c)
			if x.clamp {
				return h16SatU32(r)
			}
			return uint32(r)
		}})
	def16(OpVMadI32I16, h16spec{n: 3, src: [3]uint8{oI16, oI16, oU32}, res: rU32, opsel: true,
		f: func(x *h16ctx, a, b, c uint32) uint32 {
			r := int64(int16(a))*int64(int16(b)) + int64(int32(c))
			if x.clamp {
				return h16SatI32(r)
			}
			return uint32(r)
		}})

	// Packing conversions (VOP3, 32-bit results): D[15:0] from S0, D[31:16] from S1.
	pack := func(src uint8, opsel bool, f func(x *h16ctx, v uint32) uint32) h16spec {
		return h16spec{n: 2, src: [3]uint8{src, src}, res: rU32, opsel: opsel,
			f: func(x *h16ctx, a, b, _ uint32) uint32 { return f(x, a)&0xffff | f(x, b)<<16 }}
	}
	// V_PACK_B32_F16 is a floating-point operation (abs/neg, clamp, the FP16 denormal mode; LLVM
	// uses it for build_vector only of canonicalized values).
	def16(OpVPackB32F16, pack(oF16, true, func(x *h16ctx, v uint32) uint32 { return x.h(v) }))
	def16(OpVCvtPkrtzF16F32, pack(oF32, false, func(x *h16ctx, v uint32) uint32 { return x.h(h16RTZ(float64(f32(v)))) }))
	def16(OpVCvtPknormI16F32, pack(oF32, false, func(_ *h16ctx, v uint32) uint32 { return h16Snorm(float64(f32(v))) }))
	def16(OpVCvtPknormU16F32, pack(oF32, false, func(_ *h16ctx, v uint32) uint32 { return h16Unorm(float64(f32(v))) }))
	def16(OpVCvtPknormI16F16, pack(oF16, true, func(_ *h16ctx, v uint32) uint32 { return h16Snorm(h16f(v)) }))
	def16(OpVCvtPknormU16F16, pack(oF16, true, func(_ *h16ctx, v uint32) uint32 { return h16Unorm(h16f(v)) }))
	def16(OpVCvtPkU16U32, pack(oU32, false, func(_ *h16ctx, v uint32) uint32 { return min(v, 0xffff) }))
	def16(OpVCvtPkI16I32, pack(oU32, false, func(_ *h16ctx, v uint32) uint32 { return h16SatI16(int64(int32(v))) }))
}
