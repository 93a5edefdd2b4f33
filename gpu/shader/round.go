package shader

import (
	"fmt"
	"math"
	"math/big"
)

// Directed rounding. MODE.FP_ROUND (GFX9 ISA, "MODE register"): bits [1:0] round single precision,
// bits [3:2] double and half precision; 0 nearest even, 1 toward +infinity, 2 toward -infinity,
// 3 toward zero. The descriptor's FLOAT_ROUND_MODE_32/_16_64 and s_setreg set them.
//
// The interpreter's ordinary routines round to nearest even (Go's float arithmetic). An operation
// whose result depends on the rounding mode is wrapped (withRounding): under a directed mode it runs
// again on the exact value in math/big, rounded once in the required direction, with subnormal results
// rounded at the format's fixed quantum and overflow giving infinity or the largest finite value as
// IEEE 754 prescribes for that direction. Operations that depend on the mode and have no directed
// version stop the wave (ErrUnimplemented) instead of silently rounding to nearest.

// fpFormat is an IEEE binary format: precision (with the hidden bit), minimum normal exponent, maximum
// exponent, the bits of its largest finite value.
type fpFormat struct {
	prec, emin, emax int
	maxFinite        uint64
}

var (
	fpF16 = fpFormat{11, -14, 15, 0x7bff}
	fpF32 = fpFormat{24, -126, 127, 0x7f7fffff}
	fpF64 = fpFormat{53, -1022, 1023, 0x7fefffffffffffff}
)

// roundModes maps FP_ROUND values 1-3 to math/big's modes.
var roundModes = [4]big.RoundingMode{big.ToNearestEven, big.ToPositiveInf, big.ToNegativeInf, big.ToZero}

const exactPrec = 4400 // enough for any f64 sum or fused product-sum without loss

func exact(x float64) *big.Float { return new(big.Float).SetPrec(exactPrec).SetFloat64(x) }

// roundTo rounds the finite exact value x to format f in mode m and returns it as a float64 holding
// exactly the format's value (or ±Inf on overflow in the modes that overflow to infinity).
func roundTo(x *big.Float, f fpFormat, m big.RoundingMode) float64 {
	if x.Sign() == 0 {
		if x.Signbit() {
			return math.Copysign(0, -1)
		}
		return 0
	}
	e := x.MantExp(nil) // |x| = mant·2^e, mant in [0.5, 1): the IEEE exponent is e-1
	var r *big.Float
	if e-1 < f.emin {
		// subnormal range: round to a multiple of the smallest subnormal 2^(emin-prec+1)
		q := f.emin - f.prec + 1
		y := new(big.Float).SetPrec(exactPrec).SetMantExp(x, -q)
		n := roundInt(y, m)
		r = new(big.Float).SetPrec(exactPrec).SetMantExp(new(big.Float).SetInt(n), q)
		if n.Sign() == 0 && x.Signbit() {
			return math.Copysign(0, -1)
		}
	} else {
		r = new(big.Float).SetPrec(uint(f.prec)).SetMode(m).Set(x)
		if e2 := r.MantExp(nil); e2-1 > f.emax {
			neg := x.Signbit()
			toInf := m == big.ToNearestEven || m == big.AwayFromZero || (m == big.ToPositiveInf && !neg) || (m == big.ToNegativeInf && neg)
			if toInf {
				return math.Inf(map[bool]int{false: 1, true: -1}[neg])
			}
			v := fromFormat(f, f.maxFinite)
			if neg {
				v = -v
			}
			return v
		}
	}
	v, _ := r.Float64() // exact: r is representable in f, which f64 contains
	return v
}

// roundInt rounds y to an integer in mode m.
func roundInt(y *big.Float, m big.RoundingMode) *big.Int {
	i, _ := y.Int(nil) // toward zero
	frac := new(big.Float).SetPrec(exactPrec).Sub(y, new(big.Float).SetPrec(exactPrec).SetInt(i))
	one := big.NewInt(1)
	switch m {
	case big.ToPositiveInf:
		if frac.Sign() > 0 {
			i.Add(i, one)
		}
	case big.ToNegativeInf:
		if frac.Sign() < 0 {
			i.Sub(i, one)
		}
	case big.ToNearestEven:
		half := new(big.Float).SetFloat64(0.5)
		switch c := new(big.Float).Abs(frac).Cmp(half); {
		case c > 0 || c == 0 && i.Bit(0) == 1:
			if frac.Sign() > 0 {
				i.Add(i, one)
			} else {
				i.Sub(i, one)
			}
		}
	}
	return i
}

func fromFormat(f fpFormat, v uint64) float64 {
	switch f {
	case fpF16:
		return float64(f16to32(uint16(v)))
	case fpF32:
		return float64(f32(uint32(v)))
	}
	return f64(v)
}

func toFormat(f fpFormat, x float64) uint64 {
	switch f {
	case fpF16:
		return uint64(f64to16(x)) // exact: x is an f16 value or an infinity
	case fpF32:
		return uint64(u32(float32(x)))
	}
	return u64(x)
}

// directed evaluates g on the exact values of finite inputs and rounds once; with a NaN or infinite
// input the nearest-even routine's result stands (such results do not depend on the rounding).
func directed(f fpFormat, m big.RoundingMode, near func(a, b, c float64) float64, g func(a, b, c *big.Float) *big.Float) func(a, b, c float64) uint64 {
	return func(a, b, c float64) uint64 {
		if math.IsInf(a, 0) || math.IsNaN(a) || math.IsInf(b, 0) || math.IsNaN(b) || math.IsInf(c, 0) || math.IsNaN(c) {
			return toFormat(f, near(a, b, c))
		}
		return toFormat(f, roundTo(g(exact(a), exact(b), exact(c)), f, m))
	}
}

func bigAdd(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(exactPrec).Add(a, b) }
func bigMul(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(exactPrec).Mul(a, b) }
func bigFMA(a, b, c *big.Float) *big.Float {
	return bigAdd(bigMul(a, b), c)
}

// roundRule is the FP_ROUND field a mode-dependent operation obeys (opRec.round).
type roundRule uint8

const (
	roundNone   roundRule = iota // not mode-dependent
	roundSingle                  // FP_ROUND bits 1:0 (f32)
	roundDouble                  // FP_ROUND bits 3:2 (f64 and f16)
)

// roundOps sets the rounding rules and the directed-rounding routines (opRec.round, .directed) of the
// 32- and 64-bit operations.
func roundOps() {
	single := func(ops ...Op) {
		for _, op := range ops {
			opTab[op].round = roundSingle
		}
	}
	double := func(ops ...Op) {
		for _, op := range ops {
			opTab[op].round = roundDouble
		}
	}
	// Every mode-dependent operation, with or without a directed routine below.
	single(OpVAddF32, OpVSubF32, OpVSubrevF32, OpVMulF32, OpVFmaF32, OpVFmacF32, OpVMadF32, OpVMacF32,
		OpVMadakF32, OpVMadmkF32, OpVCvtF32I32, OpVCvtF32U32, OpVCvtF32F64,
		OpVLdexpF32, OpVDivFmasF32, OpVPkAddF32, OpVPkMulF32, OpVPkFmaF32, OpVMulLegacyF32,
		OpVMadLegacyF32, OpVDot2F32F16, OpVDot2cF32F16, OpVFmaMixF32)
	double(OpVAddF64, OpVMulF64, OpVFmaF64, OpVFmacF64, OpVLdexpF64, OpVDivFmasF64,
		OpVAddF16, OpVSubF16, OpVSubrevF16, OpVMulF16, OpVFmaF16, OpVMadF16, OpVMacF16,
		OpVMadakF16, OpVMadmkF16, OpVLdexpF16, OpVCvtF16F32, OpVCvtF16U16, OpVCvtF16I16,
		OpVPkAddF16, OpVPkMulF16, OpVPkFmaF16, OpVPkFmacF16, OpVFmaMixloF16, OpVFmaMixhiF16,
		OpVMadLegacyF16, OpVFmaLegacyF16)

	// f32
	b32 := func(name Op, n int, g func(a, b, c *big.Float) *big.Float, near func(a, b, c float64) float64) {
		opTab[name].directed = func(m big.RoundingMode) execFn {
			h := directed(fpF32, m, near, g)
			return v32(tF32, n, func(a, b, c uint32) uint32 {
				return uint32(h(float64(f32(a)), float64(f32(b)), float64(f32(c))))
			})
		}
	}
	add := func(a, b, _ *big.Float) *big.Float { return bigAdd(a, b) }
	sub := func(a, b, _ *big.Float) *big.Float { return bigAdd(a, new(big.Float).Neg(b)) }
	subrev := func(a, b, _ *big.Float) *big.Float { return bigAdd(b, new(big.Float).Neg(a)) }
	mul := func(a, b, _ *big.Float) *big.Float { return bigMul(a, b) }
	fma := func(a, b, c *big.Float) *big.Float { return bigFMA(a, b, c) }
	nAdd := func(a, b, _ float64) float64 { return a + b }
	nSub := func(a, b, _ float64) float64 { return a - b }
	nSubrev := func(a, b, _ float64) float64 { return b - a }
	nMul := func(a, b, _ float64) float64 { return a * b }
	nFMA := func(a, b, c float64) float64 { return a*b + c } // only reached with an infinite or NaN input
	b32(OpVAddF32, 2, add, nAdd)
	b32(OpVSubF32, 2, sub, nSub)
	b32(OpVSubrevF32, 2, subrev, nSubrev)
	b32(OpVMulF32, 2, mul, nMul)
	b32(OpVFmaF32, 3, fma, nFMA)
	// v_fmac: the destination is the addend.
	opTab[OpVFmacF32].directed = func(m big.RoundingMode) execFn {
		h := directed(fpF32, m, nFMA, fma)
		return func(w *wave, in *Inst) error {
			in2 := *in
			in2.Opnd[fSrc2] = in.Opnd[fDst]
			return v32(tF32, 3, func(a, b, c uint32) uint32 {
				return uint32(h(float64(f32(a)), float64(f32(b)), float64(f32(c))))
			})(w, &in2)
		}
	}
	opTab[OpVCvtF32I32].directed = func(m big.RoundingMode) execFn {
		return v32(tU32, 1, func(a, _, _ uint32) uint32 {
			return uint32(toFormat(fpF32, roundTo(exact(float64(int32(a))), fpF32, m)))
		})
	}
	opTab[OpVCvtF32U32].directed = func(m big.RoundingMode) execFn {
		return v32(tU32, 1, func(a, _, _ uint32) uint32 {
			return uint32(toFormat(fpF32, roundTo(exact(float64(a)), fpF32, m)))
		})
	}
	opTab[OpVCvtF32F64].directed = func(m big.RoundingMode) execFn {
		return cvtFrom64(func(a uint64) uint32 {
			x := f64(a)
			if math.IsInf(x, 0) || math.IsNaN(x) {
				return u32(float32(x))
			}
			return uint32(toFormat(fpF32, roundTo(exact(x), fpF32, m)))
		})
	}
	opTab[OpVLdexpF32].directed = func(m big.RoundingMode) execFn {
		return v32(tF32, 2, func(a, b, _ uint32) uint32 {
			x := float64(f32(a))
			if math.IsInf(x, 0) || math.IsNaN(x) || x == 0 {
				return a
			}
			e := max(-1000, min(1000, int(int32(b))))
			return uint32(toFormat(fpF32, roundTo(new(big.Float).SetPrec(exactPrec).SetMantExp(exact(x), e), fpF32, m)))
		})
	}

	// v_mad/v_mac (unfused): the product rounded in the mode, then the sum.
	mad := func(m big.RoundingMode) func(a, b, c float64) uint64 {
		return func(a, b, c float64) uint64 {
			if math.IsInf(a, 0) || math.IsNaN(a) || math.IsInf(b, 0) || math.IsNaN(b) || math.IsInf(c, 0) || math.IsNaN(c) {
				return uint64(u32(float32(float32(a*b) + float32(c))))
			}
			p := roundTo(bigMul(exact(a), exact(b)), fpF32, m)
			if math.IsInf(p, 0) {
				return uint64(u32(float32(p + c)))
			}
			return toFormat(fpF32, roundTo(bigAdd(exact(p), exact(c)), fpF32, m))
		}
	}
	opTab[OpVMadF32].directed = func(m big.RoundingMode) execFn {
		h := mad(m)
		return v32(tF32, 3, func(a, b, c uint32) uint32 { return uint32(h(float64(f32(a)), float64(f32(b)), float64(f32(c)))) })
	}
	opTab[OpVMacF32].directed = func(m big.RoundingMode) execFn {
		h := mad(m)
		return func(w *wave, in *Inst) error {
			in2 := *in
			in2.Opnd[fSrc2] = in.Opnd[fDst]
			return v32(tF32, 3, func(a, b, c uint32) uint32 { return uint32(h(float64(f32(a)), float64(f32(b)), float64(f32(c)))) })(w, &in2)
		}
	}
	for _, k := range []struct {
		name Op
		mk   bool
	}{{OpVMadakF32, false}, {OpVMadmkF32, true}} {
		k := k
		opTab[k.name].directed = func(m big.RoundingMode) execFn {
			h := mad(m)
			return func(w *wave, in *Inst) error {
				kv := float64(f32(in.Lit))
				return v32(tF32, 2, func(a, b, _ uint32) uint32 {
					if k.mk {
						return uint32(h(float64(f32(a)), kv, float64(f32(b))))
					}
					return uint32(h(float64(f32(a)), float64(f32(b)), kv))
				})(w, in)
			}
		}
	}
	// DX9 legacy multiply (0 · anything = 0) and multiply-add, rounded in the mode.
	legacy := func(m big.RoundingMode, a, b uint32) float64 {
		if a&0x7fffffff == 0 || b&0x7fffffff == 0 {
			return float64(f32((a ^ b) & 0x80000000))
		}
		x, y := float64(f32(a)), float64(f32(b))
		if math.IsInf(x, 0) || math.IsNaN(x) || math.IsInf(y, 0) || math.IsNaN(y) {
			return x * y
		}
		return roundTo(bigMul(exact(x), exact(y)), fpF32, m)
	}
	opTab[OpVMulLegacyF32].directed = func(m big.RoundingMode) execFn {
		return v32(tF32, 2, func(a, b, _ uint32) uint32 { return u32(float32(legacy(m, a, b))) })
	}
	opTab[OpVMadLegacyF32].directed = func(m big.RoundingMode) execFn {
		return v32(tF32, 3, func(a, b, c uint32) uint32 {
			p, z := legacy(m, a, b), float64(f32(c))
			if math.IsInf(p, 0) || math.IsNaN(p) || math.IsInf(z, 0) || math.IsNaN(z) {
				return u32(float32(p + z))
			}
			return uint32(toFormat(fpF32, roundTo(bigAdd(exact(p), exact(z)), fpF32, m)))
		})
	}
	// packed f32 (VOP3P): the same rounding on both halves.
	for _, p := range []struct {
		name Op
		n    int
		g    func(a, b, c *big.Float) *big.Float
		near func(a, b, c float64) float64
	}{{OpVPkAddF32, 2, add, nAdd}, {OpVPkMulF32, 2, mul, nMul}, {OpVPkFmaF32, 3, fma, nFMA}} {
		p := p
		opTab[p.name].directed = func(m big.RoundingMode) execFn {
			h := directed(fpF32, m, p.near, p.g)
			return pk32(p.n, func(a, b, c uint32) uint32 { return uint32(h(float64(f32(a)), float64(f32(b)), float64(f32(c)))) })
		}
	}
	// v_div_fmas: the fma rounded in the mode; where VCC is set, the fma scaled by 2^±64 (2^±128 for
	// f64) and rounded once (divFmasScaled, shared with the nearest-even routine).
	opTab[OpVDivFmasF32].directed = func(m big.RoundingMode) execFn {
		h := directed(fpF32, m, nFMA, fma)
		return func(w *wave, in *Inst) error {
			vcc := w.vcc()
			return v32(tF32, 3, func(a, b, c uint32) uint32 {
				if vcc>>w.lane&1 != 0 {
					return uint32(divFmasScaled(fpF32, float64(f32(a)), float64(f32(b)), float64(f32(c)), exp32(c) >= 127, m))
				}
				return uint32(h(float64(f32(a)), float64(f32(b)), float64(f32(c))))
			})(w, in)
		}
	}
	opTab[OpVDivFmasF64].directed = func(m big.RoundingMode) execFn {
		h := directed(fpF64, m, nFMA, fma)
		return func(w *wave, in *Inst) error {
			vcc := w.vcc()
			return v64(tF64, tF64, 3, func(a, b, c uint64) uint64 {
				if vcc>>w.lane&1 != 0 {
					return divFmasScaled(fpF64, f64(a), f64(b), f64(c), exp64(c) >= 1023, m)
				}
				return h(f64(a), f64(b), f64(c))
			})(w, in)
		}
	}

	// f64
	b64 := func(name Op, n int, g func(a, b, c *big.Float) *big.Float, near func(a, b, c float64) float64) {
		opTab[name].directed = func(m big.RoundingMode) execFn {
			h := directed(fpF64, m, near, g)
			return v64(tF64, tF64, n, func(a, b, c uint64) uint64 { return h(f64(a), f64(b), f64(c)) })
		}
	}
	b64(OpVAddF64, 2, add, nAdd)
	b64(OpVMulF64, 2, mul, nMul)
	b64(OpVFmaF64, 3, fma, nFMA)
	opTab[OpVFmacF64].directed = func(m big.RoundingMode) execFn {
		h := directed(fpF64, m, nFMA, fma)
		return func(w *wave, in *Inst) error {
			in2 := *in
			in2.Opnd[fSrc2] = in.Opnd[fDst]
			return v64(tF64, tF64, 3, func(a, b, c uint64) uint64 { return h(f64(a), f64(b), f64(c)) })(w, &in2)
		}
	}
	opTab[OpVLdexpF64].directed = func(m big.RoundingMode) execFn {
		return v64(tF64, tU32, 2, func(a, b, _ uint64) uint64 {
			x := f64(a)
			if math.IsInf(x, 0) || math.IsNaN(x) || x == 0 {
				return a
			}
			e := max(-3000, min(3000, int(int32(uint32(b)))))
			return toFormat(fpF64, roundTo(new(big.Float).SetPrec(exactPrec).SetMantExp(exact(x), e), fpF64, m))
		})
	}
}

// roundOps16 sets the directed-rounding functions of the binary16 operations of valu16.go (opRec.h16dir),
// called with their spec's operands (madmk's third operand is the literal factor, as there), and the
// routines of the packed f16 ones.
func roundOps16() {
	bin := func(g func(a, b, c *big.Float) *big.Float, near func(a, b, c float64) float64) func(m big.RoundingMode) func(x *h16ctx, a, b, c uint32) uint32 {
		return func(m big.RoundingMode) func(x *h16ctx, a, b, c uint32) uint32 {
			h := directed(fpF16, m, near, g)
			return func(_ *h16ctx, a, b, c uint32) uint32 { return uint32(h(h16f(a), h16f(b), h16f(c))) }
		}
	}
	opTab[OpVAddF16].h16dir = bin(func(a, b, _ *big.Float) *big.Float { return bigAdd(a, b) }, func(a, b, _ float64) float64 { return a + b })
	opTab[OpVSubF16].h16dir = bin(func(a, b, _ *big.Float) *big.Float { return bigAdd(a, new(big.Float).Neg(b)) }, func(a, b, _ float64) float64 { return a - b })
	opTab[OpVSubrevF16].h16dir = bin(func(a, b, _ *big.Float) *big.Float { return bigAdd(b, new(big.Float).Neg(a)) }, func(a, b, _ float64) float64 { return b - a })
	opTab[OpVMulF16].h16dir = bin(func(a, b, _ *big.Float) *big.Float { return bigMul(a, b) }, func(a, b, _ float64) float64 { return a * b })
	fma := bin(bigFMA, func(a, b, c float64) float64 { return a*b + c })
	opTab[OpVFmaF16].h16dir = fma
	opTab[OpVFmaLegacyF16].h16dir = fma
	// unfused: the product rounded in the mode, then the sum
	mad := func(m big.RoundingMode, a, b, c uint32) uint32 {
		x, y, z := h16f(a), h16f(b), h16f(c)
		if math.IsInf(x, 0) || math.IsNaN(x) || math.IsInf(y, 0) || math.IsNaN(y) || math.IsInf(z, 0) || math.IsNaN(z) {
			return h16Mad(a, b, c)
		}
		p := roundTo(bigMul(exact(x), exact(y)), fpF16, m)
		if math.IsInf(p, 0) {
			return h16r(p + z)
		}
		return uint32(toFormat(fpF16, roundTo(bigAdd(exact(p), exact(z)), fpF16, m)))
	}
	for _, n := range []Op{OpVMadF16, OpVMadLegacyF16, OpVMacF16, OpVMadakF16} {
		opTab[n].h16dir = func(m big.RoundingMode) func(x *h16ctx, a, b, c uint32) uint32 {
			return func(_ *h16ctx, a, b, c uint32) uint32 { return mad(m, a, b, c) }
		}
	}
	opTab[OpVMadmkF16].h16dir = func(m big.RoundingMode) func(x *h16ctx, a, b, c uint32) uint32 {
		return func(_ *h16ctx, a, b, k uint32) uint32 { return mad(m, a, k, b) }
	}
	opTab[OpVLdexpF16].h16dir = func(m big.RoundingMode) func(x *h16ctx, a, b, c uint32) uint32 {
		return func(_ *h16ctx, a, b, _ uint32) uint32 {
			x := h16f(a)
			if math.IsInf(x, 0) || math.IsNaN(x) || x == 0 {
				return a & 0xffff
			}
			return uint32(toFormat(fpF16, roundTo(new(big.Float).SetPrec(exactPrec).SetMantExp(exact(x), int(int16(b))), fpF16, m)))
		}
	}
	conv := func(val func(a uint32) float64) func(m big.RoundingMode) func(x *h16ctx, a, b, c uint32) uint32 {
		return func(m big.RoundingMode) func(x *h16ctx, a, b, c uint32) uint32 {
			return func(_ *h16ctx, a, _, _ uint32) uint32 {
				v := val(a)
				if math.IsInf(v, 0) || math.IsNaN(v) {
					return h16r(v)
				}
				return uint32(toFormat(fpF16, roundTo(exact(v), fpF16, m)))
			}
		}
	}
	// packed binary16 (VOP3P): the same rounding on both halves.
	for _, p := range []struct {
		name Op
		n    int
		g    func(a, b, c *big.Float) *big.Float
		near func(a, b, c float64) float64
	}{
		{OpVPkAddF16, 2, func(a, b, _ *big.Float) *big.Float { return bigAdd(a, b) }, func(a, b, _ float64) float64 { return a + b }},
		{OpVPkMulF16, 2, func(a, b, _ *big.Float) *big.Float { return bigMul(a, b) }, func(a, b, _ float64) float64 { return a * b }},
		{OpVPkFmaF16, 3, bigFMA, func(a, b, c float64) float64 { return a*b + c }},
	} {
		p := p
		opTab[p.name].directed = func(m big.RoundingMode) execFn {
			h := directed(fpF16, m, p.near, p.g)
			return h16pk(p.n, true, func(a, b, c uint32, _ bool) uint32 { return uint32(h(h16f(a), h16f(b), h16f(c))) })
		}
	}
	opTab[OpVCvtF16U16].h16dir = conv(func(a uint32) float64 { return float64(uint16(a)) })
	opTab[OpVCvtF16I16].h16dir = conv(func(a uint32) float64 { return float64(int16(a)) })
	opTab[OpVCvtF16F32].h16dir = conv(func(a uint32) float64 { return float64(f32(a)) })
}

// roundMask is the MODE bits of the FP_ROUND field op obeys (0: not mode-dependent or no routine),
// the bits withRounding's routine tests.
func roundMask(op Op) uint32 {
	r := &opTab[op]
	switch {
	case r.round == roundNone || r.exec == nil:
		return 0
	case r.round == roundDouble:
		return 3 << 2
	}
	return 3
}

// withRounding wraps a mode-dependent operation: under a directed FP_ROUND mode it runs the directed
// routine, or stops the wave when there is none.
func withRounding(op Op, fn execFn) execFn {
	r := &opTab[op]
	if r.round == roundNone || fn == nil {
		return fn
	}
	field := uint32(0)
	if r.round == roundDouble {
		field = 2
	}
	alt := r.directed
	if g, sp := r.h16dir, r.h16; alt == nil && g != nil && sp != nil {
		alt = func(m big.RoundingMode) execFn {
			sp2 := *sp
			sp2.f = g(m)
			return h16op(sp2)
		}
	}
	name := opNames[op]
	return func(w *wave, in *Inst) error {
		m := w.mode >> field & 3
		if m == 0 {
			return fn(w, in)
		}
		if alt == nil {
			return fmt.Errorf("%w: %s under FP_ROUND mode %d (only round to nearest even)", ErrUnimplemented, name, m)
		}
		return alt(roundModes[m])(w, in)
	}
}
