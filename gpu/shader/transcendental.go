package shader

import (
	"math"
	"math/big"
)

// Transcendental, scaling and division-helper VALU operations (Vega ISA / AMDGPUUsage; the
// pseudocode of V_DIV_SCALE, V_DIV_FMAS and V_DIV_FIXUP is the one AMD's ISA guides give).
// Hardware computes the transcendentals to within 1 ULP; here they are the correctly rounded Go
// math results, which lie within that bound. Tests compare them with a tolerance.

func exp32(x uint32) int { return int(x>>23) & 0xff }
func exp64(x uint64) int { return int(x>>52) & 0x7ff }

func isDenorm32(f float32) bool { return f != 0 && math.Abs(float64(f)) < 0x1p-126 }
func isDenorm64(f float64) bool { return f != 0 && math.Abs(f) < 0x1p-1022 }

// tiny32/tiny64: V_DIV_SCALE's "1/S1 == DENORM" and "S2/S1 == DENORM" tests, on a quotient of nonzero
// finite operands computed in float64 (exact enough for an exponent test): below the smallest normal,
// including a quotient too small even for a denormal (it rounds to 0). Testing for a denormal alone
// let a tiny numerator over a huge denominator fall through to the "numerator is tiny" case, which
// scaled the denominator by 2^128 to infinity: the division gave NaN instead of 0.
func tiny32(x float64) bool { return math.Abs(x) < 0x1p-126 }
func tiny64(x float64) bool { return math.Abs(x) < 0x1p-1022 }

// divScale32 is V_DIV_SCALE_F32: D = S0 scaled to keep the Newton steps of a division in range;
// vcc says the result of the division needs the inverse scale (V_DIV_FMAS).
func divScale32(s0, s1, s2 uint32) (d uint32, vcc bool) {
	a, b, c := f32(s0), f32(s1), f32(s2)
	d = s0
	switch {
	case c == 0 || b == 0:
		d = u32(float32(math.NaN()))
	case exp32(s2)-exp32(s1) >= 96:
		vcc = true
		if s0 == s1 {
			d = u32(float32(math.Ldexp(float64(a), 64)))
		}
	case isDenorm32(b):
		d = u32(float32(math.Ldexp(float64(a), 64)))
	case tiny32(1/float64(b)) && tiny32(float64(c)/float64(b)):
		vcc = true
		if s0 == s1 { // only the denominator, down (see divScale64)
			d = u32(float32(math.Ldexp(float64(a), -64)))
		}
	case tiny32(1 / float64(b)):
		d = u32(float32(math.Ldexp(float64(a), -64)))
	case tiny32(float64(c) / float64(b)):
		vcc = true
		if s0 == s2 {
			d = u32(float32(math.Ldexp(float64(a), 64)))
		}
	case exp32(s2) <= 23:
		d = u32(float32(math.Ldexp(float64(a), 64)))
	}
	return d, vcc
}

func divScale64(s0, s1, s2 uint64) (d uint64, vcc bool) {
	a, b, c := f64(s0), f64(s1), f64(s2)
	d = s0
	switch {
	case c == 0 || b == 0:
		d = u64(math.NaN())
	case exp64(s2)-exp64(s1) >= 768:
		vcc = true
		if s0 == s1 {
			d = u64(math.Ldexp(a, 128))
		}
	case isDenorm64(b):
		d = u64(math.Ldexp(a, 128))
	case tiny64(1/b) && tiny64(c/b):
		// A huge denominator and a quotient below the normal range: the denominator is scaled by
		// 2^-128 (the ISA text says 2^+128 here, which overflows every such denominator to infinity
		// and turns the quotient into NaN; with 2^-128 the Newton steps see the quotient times 2^128,
		// a normal number, and V_DIV_FMAS scales it back down under VCC, rounding once).
		vcc = true
		if s0 == s1 {
			d = u64(math.Ldexp(a, -128))
		}
	case tiny64(1 / b):
		d = u64(math.Ldexp(a, -128))
	case tiny64(c / b):
		vcc = true
		if s0 == s2 {
			d = u64(math.Ldexp(a, 128))
		}
	case exp64(s2) <= 53:
		d = u64(math.Ldexp(a, 128))
	}
	return d, vcc
}

// divFixup32 is V_DIV_FIXUP_F32(quotient S0, denominator S1, numerator S2): the special cases of
// a division, else the quotient with the right sign.
func divFixup32(s0, s1, s2 uint32) uint32 {
	q, d, n := f32(s0), f32(s1), f32(s2)
	neg := (s1^s2)&0x80000000 != 0
	sgn := func(v float32) uint32 {
		if neg {
			return u32(-v)
		}
		return u32(v)
	}
	inf := float32(math.Inf(1))
	switch {
	case n != n:
		return s2 | 0x400000
	case d != d:
		return s1 | 0x400000
	case d == 0 && n == 0, math.IsInf(float64(d), 0) && math.IsInf(float64(n), 0):
		return 0x7fc00000
	case d == 0 || math.IsInf(float64(n), 0):
		return sgn(inf)
	case math.IsInf(float64(d), 0) || n == 0:
		return sgn(0)
	case exp32(s2)-exp32(s1) < -150: // underflow (the ISA's UNDERFLOW: 0 when rounding to nearest)
		return sgn(0)
	case exp32(s2)-exp32(s1) >= 129: // overflow (see divFixup64)
		return sgn(inf)
	}
	return sgn(float32(math.Abs(float64(q))))
}

func divFixup64(s0, s1, s2 uint64) uint64 {
	q, d, n := f64(s0), f64(s1), f64(s2)
	neg := (s1^s2)>>63 != 0
	sgn := func(v float64) uint64 {
		if neg {
			return u64(-v)
		}
		return u64(v)
	}
	switch {
	case n != n:
		return s2 | 1<<51
	case d != d:
		return s1 | 1<<51
	case d == 0 && n == 0, math.IsInf(d, 0) && math.IsInf(n, 0):
		return 0x7ff8000000000000
	case d == 0 || math.IsInf(n, 0):
		return sgn(math.Inf(1))
	case math.IsInf(d, 0) || n == 0:
		return sgn(0)
	case exp64(s2)-exp64(s1) < -1075: // underflow (the ISA's UNDERFLOW: 0 when rounding to nearest)
		return sgn(0)
	case exp64(s2)-exp64(s1) >= 1025:
		// Overflow. The ISA text tests "exponent(S1) == 2047" here, a case already taken above; a
		// quotient whose exponent fields differ by 1025 or more is at least 2^1024 (a denormal's field
		// of 0 only understates the difference) and overflows, while the division sequence's own
		// intermediate (the quotient times 2^-128 from V_DIV_SCALE) overflows too and leaves a NaN.
		return sgn(math.Inf(1))
	}
	return sgn(math.Abs(q))
}

// frexp: V_FREXP_MANT returns the mantissa in [0.5, 1) (the input for 0, inf, NaN), V_FREXP_EXP
// the exponent (0 for 0, inf, NaN).
func frexpMant(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || x != x {
		return x
	}
	m, _ := math.Frexp(x)
	return m
}

func frexpExp(x float64) uint32 {
	if x == 0 || math.IsInf(x, 0) || x != x {
		return 0
	}
	_, e := math.Frexp(x)
	return uint32(int32(e))
}

// exp2Ref and log2Ref are V_EXP_F32 and V_LOG_F32 on one lane: math.Exp2/Log2 of the f32 rounded
// to f32. exp2F32 and log2F32 (the routines' lane functions) give the same for every input
// (TestExp2Log2F32; all 2^32 with KFDEMU_EXHAUSTIVE=1), most of them faster.
func exp2Ref(a uint32) uint32 { return u32(float32(math.Exp2(float64(f32(a))))) }
func log2Ref(a uint32) uint32 { return u32(float32(math.Log2(float64(f32(a))))) }

// nearTie reports whether float64 y (a normal f32 result's approximation) lies within 2^12 ulps
// of a point halfway between two f32 values, where its rounding to f32 could differ from that
// of another approximation a few ulps away (math.Exp2/Log2's).
func nearTie(y float64) bool {
	d := int64(math.Float64bits(y)&(1<<29-1)) - 1<<28 // the 29 bits f32 rounding drops
	return d > -1<<12 && d < 1<<12
}

// exp2Tab[j] = 2^(j/64); exp2Poly: 2^r = 1 + sum c[n] r^n, c[n] = ln2^n/n!, |r| <= 1/128 (the
// first term left out, c[7]r^7 < 2^-60).
var exp2Tab, exp2Poly = func() (t [64]float64, c [7]float64) {
	for j := range t {
		t[j] = math.Exp2(float64(j) / 64)
	}
	c[0] = 1
	for n := 1; n < len(c); n++ {
		c[n] = c[n-1] * math.Ln2 / float64(n)
	}
	return
}()

// exp2F32: for -125 < x < 127.5 (normal f32 results) x = (64k+j)/64 + r, 2^x = 2^k * 2^(j/64) * 2^r
// within a few float64 ulps; near an f32 tie, and for other inputs, exp2Ref. Above 128 the f32 is
// +Inf, below -150 +0 (2^-150 is halfway to the smallest denormal: even).
func exp2F32(a, _, _ uint32) uint32 {
	x := float64(f32(a))
	switch {
	case x >= 128:
		return 0x7f800000
	case x <= -150:
		return 0
	case x > -125 && x < 127.5:
		t := math.Floor(x*64 + 0.5)
		r := x - t/64 // exact: |r| <= 1/128, no bit below x's last
		i := int(t)
		c := &exp2Poly
		y := exp2Tab[i&63] * (1 + r*(c[1]+r*(c[2]+r*(c[3]+r*(c[4]+r*(c[5]+r*c[6]))))))
		if !nearTie(y) {
			return u32(float32(y * math.Float64frombits(uint64(1023+i>>6)<<52)))
		}
	}
	return exp2Ref(a)
}

// log2Tab: per top 7 mantissa bits j, c = 1/m_j (m_j the interval's centre, halved for m >= 1.5;
// 1 next to 1) to 20 bits, so m*c is exact, and -log2(c). log2Poly: log2(1+r) = sum k[n] r^n,
// k[n] = (-1)^(n+1)/(n ln2), |r| < 2^-7.
var log2Tab, log2Poly = func() (t [128][2]float64, k [8]float64) {
	for j := range t {
		m := 1 + (float64(j)+0.5)/128
		if j >= 64 {
			m /= 2
		}
		c := 1.0
		if j != 0 && j != 127 {
			c = math.Ldexp(math.Round(math.Ldexp(1/m, 20)), -20)
		}
		t[j] = [2]float64{c, -math.Log2(c)}
	}
	for n := 1; n < len(k); n++ {
		k[n] = 1 / (float64(n) * math.Ln2)
		if n%2 == 0 {
			k[n] = -k[n]
		}
	}
	return
}()

// log2F32: for a positive normal x = 2^e * m, m in [0.75, 1.5), log2 x = e - log2(c) + log2(1+r)
// with r = m*c - 1 exact, within a few float64 ulps; near an f32 tie, and for other inputs,
// log2Ref.
func log2F32(a, _, _ uint32) uint32 {
	if f := a >> 23; f-1 < 254 { // sign 0, exponent field 1..254
		e := int(f) - 127
		j := a >> 16 & 127
		m := math.Float64frombits(uint64(1023)<<52 | uint64(a&0x7fffff)<<29) // [1, 2)
		if j >= 64 {
			m, e = m/2, e+1
		}
		tj := &log2Tab[j]
		r := m*tj[0] - 1
		k := &log2Poly
		q := r * (k[1] + r*(k[2]+r*(k[3]+r*(k[4]+r*(k[5]+r*(k[6]+r*k[7]))))))
		y := (float64(e) + tj[1]) + q
		if !nearTie(y) {
			return u32(float32(y))
		}
	}
	return log2Ref(a)
}

func transOps() {
	un := func(f func(x float64) float64) execFn {
		return v32(tF32, 1, func(a, _, _ uint32) uint32 { return u32(float32(f(float64(f32(a))))) })
	}
	def(OpVExpF32, v32(tF32, 1, exp2F32))
	def(OpVLogF32, v32(tF32, 1, log2F32))
	// V_SIN/V_COS take the angle in revolutions (x * 2pi radians).
	def(OpVSinF32, un(func(x float64) float64 { return math.Sin(2 * math.Pi * x) }))
	def(OpVCosF32, un(func(x float64) float64 { return math.Cos(2 * math.Pi * x) }))
	// V_FRACT: x - floor(x), limited to the largest value below 1 (a tiny negative x would round to 1;
	// LLVM's amdgcn_fract folding, as valu16.go's h16Fract).
	def(OpVFractF32, un(func(x float64) float64 { return math.Min(x-math.Floor(x), float64(math.Float32frombits(0x3f7fffff))) }))
	def(OpVFrexpMantF32, un(frexpMant))
	def(OpVFrexpExpI32F32, v32(tF32, 1, func(a, _, _ uint32) uint32 { return frexpExp(float64(f32(a))) }))
	def(OpVLdexpF32, v32(tF32, 2, func(a, b, _ uint32) uint32 { return u32(float32(math.Ldexp(float64(f32(a)), int(int32(b))))) }))
	def(OpVDivFixupF32, v32(tF32, 3, divFixup32))

	un64 := func(f func(x float64) float64) execFn {
		return v64(tF64, tF64, 1, func(a, _, _ uint64) uint64 { return u64(f(f64(a))) })
	}
	def(OpVRcpF64, un64(func(x float64) float64 { return 1 / x }))
	def(OpVRsqF64, un64(func(x float64) float64 { return 1 / math.Sqrt(x) }))
	def(OpVSqrtF64, un64(math.Sqrt))
	def(OpVFractF64, un64(func(x float64) float64 { return math.Min(x-math.Floor(x), math.Float64frombits(0x3fefffffffffffff)) }))
	def(OpVFrexpMantF64, un64(frexpMant))
	def(OpVFrexpExpI32F64, cvtFrom64(func(a uint64) uint32 { return frexpExp(f64(a)) }))
	def(OpVLdexpF64, v64(tF64, tU32, 2, func(a, b, _ uint64) uint64 { return u64(math.Ldexp(f64(a), int(int32(uint32(b))))) }))
	def(OpVDivFixupF64, v64(tF64, tF64, 3, divFixup64))

	// V_DIV_SCALE (VOP3B): a per-lane flag goes to the sdst SGPR pair.
	def(OpVDivScaleF32, func(w *wave, in *Inst) error {
		var flags uint64
		err := v32(tF32, 3, func(a, b, c uint32) uint32 {
			d, f := divScale32(a, b, c)
			if f {
				flags |= 1 << w.lane
			}
			return d
		})(w, in)
		if err == nil {
			w.sset64(in.Opnd[fSDst], flags)
		}
		return err
	})
	def(OpVDivScaleF64, func(w *wave, in *Inst) error {
		var flags uint64
		err := v64(tF64, tF64, 3, func(a, b, c uint64) uint64 {
			d, f := divScale64(a, b, c)
			if f {
				flags |= 1 << w.lane
			}
			return d
		})(w, in)
		if err == nil {
			w.sset64(in.Opnd[fSDst], flags)
		}
		return err
	})
	// V_DIV_FMAS: fma, scaled by 2^±64 (f32) or 2^±128 (f64) where VCC is set, in the direction the
	// numerator's exponent says.
	def(OpVDivFmasF32, func(w *wave, in *Inst) error {
		vcc := w.vcc()
		return v32(tF32, 3, func(a, b, c uint32) uint32 {
			if vcc>>w.lane&1 != 0 {
				return uint32(divFmasScaled(fpF32, float64(f32(a)), float64(f32(b)), float64(f32(c)), exp32(c) >= 127, big.ToNearestEven))
			}
			return fma32(a, b, c)
		})(w, in)
	})
	def(OpVDivFmasF64, func(w *wave, in *Inst) error {
		vcc := w.vcc()
		return v64(tF64, tF64, 3, func(a, b, c uint64) uint64 {
			if vcc>>w.lane&1 != 0 {
				return divFmasScaled(fpF64, f64(a), f64(b), f64(c), exp64(c) >= 1023, big.ToNearestEven)
			}
			return u64(math.FMA(f64(a), f64(b), f64(c)))
		})(w, in)
	})
}

// divFmasScaled is V_DIV_FMAS where VCC is set: fma(a, b, c) times 2^64 (f32) or 2^128 (f64) when c's
// exponent says the quotient is large, else times 2^-64 / 2^-128, rounded once in mode m to format f
// (returned as its bits). Rounding the fma first and then the scaled value would round twice where the
// result lands among the denormals (-0x000fffffffffffff / 0x3fefffffffffffff came out as -2^-1022).
func divFmasScaled(f fpFormat, a, b, c float64, large bool, m big.RoundingMode) uint64 {
	sc := 128
	if f == fpF32 {
		sc = 64
	}
	if !large {
		sc = -sc
	}
	if math.IsInf(a, 0) || math.IsNaN(a) || math.IsInf(b, 0) || math.IsNaN(b) || math.IsInf(c, 0) || math.IsNaN(c) {
		return toFormat(f, math.Ldexp(a*b+c, sc)) // NaN or infinite: no rounding involved
	}
	x := new(big.Float).SetPrec(exactPrec).SetMantExp(bigFMA(exact(a), exact(b), exact(c)), sc)
	return toFormat(f, roundTo(x, f, m))
}

// The 16-bit integer VOP2/VOP3 operations are in valu16.go.
