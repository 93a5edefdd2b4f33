package shader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"
)

// h16tRound rounds an exact value to binary16, nearest even, with the format's subnormal quantum
// (2^-24) and overflow to infinity: an independent reference for the interpreter's roundings.
func h16tRound(x *big.Float) uint16 {
	sign := uint16(0)
	if x.Signbit() {
		sign = 0x8000
	}
	a := new(big.Float).SetPrec(4096).Abs(x)
	if a.Sign() == 0 {
		return sign
	}
	e := a.MantExp(nil) // a = m·2^e, m in [0.5, 1): the binary exponent is e-1
	p := 11
	if e-1 < -14 { // subnormal: bits above the 2^-24 quantum
		p = e + 24
	}
	if p <= 0 { // below 2^-25 rounds to 0; 2^-25 is a tie (0 is even); above it 2^-24
		half := new(big.Float).SetMantExp(big.NewFloat(1), -25)
		if a.Cmp(half) > 0 {
			return sign | 1
		}
		return sign
	}
	r := new(big.Float).SetPrec(uint(p)).SetMode(big.ToNearestEven).Set(a)
	v, _ := r.Float64() // exact: r has at most 11 significant bits
	if v >= 65520 {
		return sign | 0x7c00
	}
	return sign | f64to16(v) // exact
}

func h16tVal(h uint16) float64 { return float64(f16to32(h)) }
func h16tIsNaN(h uint16) bool  { return h&0x7c00 == 0x7c00 && h&0x3ff != 0 }
func h16tBig(x float64) *big.Float {
	return new(big.Float).SetPrec(4096).SetFloat64(x)
}

// h16tFma is a*b+c of binary16 values, computed exactly and rounded once.
func h16tFma(a, b, c uint16) uint16 {
	x, y, z := h16tVal(a), h16tVal(b), h16tVal(c)
	if math.IsNaN(x) || math.IsNaN(y) || math.IsNaN(z) || math.IsInf(x, 0) || math.IsInf(y, 0) || math.IsInf(z, 0) {
		return f64to16(x*y + z)
	}
	p := new(big.Float).SetPrec(4096).Mul(h16tBig(x), h16tBig(y))
	s := new(big.Float).SetPrec(4096).Add(p, h16tBig(z))
	if s.Sign() == 0 {
		return f64to16(x*y + z) // the sign of an exact zero sum as IEEE gives it
	}
	return h16tRound(s)
}

// h16tDivFixup is V_DIV_FIXUP_F16 from the ISA's pseudo-code (S0 quotient, S1 denominator, S2
// numerator).
func h16tDivFixup(q, d, n uint16) uint16 {
	sign := (d ^ n) & 0x8000
	dv, nv := h16tVal(d), h16tVal(n)
	switch {
	case h16tIsNaN(n):
		return n | 0x200
	case h16tIsNaN(d):
		return d | 0x200
	case dv == 0 && nv == 0, math.IsInf(dv, 0) && math.IsInf(nv, 0):
		return 0x7e00
	case dv == 0 || math.IsInf(nv, 0):
		return sign | 0x7c00
	case math.IsInf(dv, 0) || nv == 0:
		return sign
	}
	return sign | q&0x7fff
}

// h16tNear accepts results within one binary16 ULP (same sign), or any NaN for a NaN.
func h16tNear(got, want uint16) bool {
	if h16tIsNaN(want) {
		return h16tIsNaN(got)
	}
	if got == want {
		return true
	}
	d := int(got&0x7fff) - int(want&0x7fff)
	return got&0x8000 == want&0x8000 && d >= -1 && d <= 1
}

func h16tSame(got, want uint16) bool {
	return got == want || h16tIsNaN(got) && h16tIsNaN(want)
}

// TestCorpusHalfScalar runs the corpus kernel half_scalar (binary16 arithmetic, conversions,
// comparisons and 16-bit integer arithmetic as clang-14 compiles them: v_add/sub/mul/min/max_f16,
// v_fma_f16 with modifiers, f16 division through v_rcp_f32 and v_div_fixup_f16, v_sqrt/rsq/rcp/
// sin/cos/exp/log_f16, v_floor/ceil/trunc/rndne/fract_f16, v_frexp_mant/exp, v_ldexp_f16 with an
// SDWA exponent, v_med3_f16, the f16<->i16/u16/f32 conversions, v_fma_mix_f32, VOPC f16, 16-bit
// shifts and arithmetic) on 256 work-items whose inputs include ±0, ±inf, NaN, denormals and the
// extremes. Every result is compared with a Go reference: bit-exact where the ISA is exact (NaN
// results only need to be NaN); the transcendentals (rcp, rsq, sqrt, sin, cos, exp, log) within
// one binary16 ULP, the accuracy the hardware documents for them. Divisions must equal the
// compiled sequence (f32 reciprocal, f32 product, conversion, v_div_fixup_f16) and lie within one
// ULP of the correctly rounded quotient.
func TestCorpusHalfScalar(t *testing.T) {
	l := load(t)
	const n = 256
	specials := []uint16{0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x8001, 0x03ff, 0x0400,
		0x7bff, 0xfbff, 0x3555, 0x4248, 0xc0f0, 0x5a00, 0x1400, 0x3bff, 0x3c01, 0x4b00, 0xb800, 0x3800, 0x4d00,
		0x0200, 0x8200, 0x6400, 0xe400, 0x2c00, 0x4e00, 0x3a00, 0xba00}
	seed := uint32(12345)
	rnd := func() uint32 { seed = seed*1664525 + 1013904223; return seed >> 8 }
	a, b, c := make([]uint16, n), make([]uint16, n), make([]uint16, n)
	k, g := make([]int16, n), make([]float32, n)
	for i := range a {
		pick := func(off int) uint16 {
			if (i+off)%3 == 0 {
				return specials[(i/3+off)%len(specials)]
			}
			// random finite values, mostly of moderate magnitude
			h := uint16(rnd())
			if h&0x7c00 == 0x7c00 || i%5 != 0 {
				h = h&0x83ff | uint16(8+rnd()%16)<<10
			}
			return h
		}
		a[i], b[i], c[i] = pick(0), pick(1), pick(2)
		k[i] = int16(rnd())
		g[i] = math.Float32frombits(rnd()&0x807fffff | (100+rnd()%60)<<23)
	}
	for i, v := range []float32{65519.99, 65520, 0x1p-25, 3 * 0x1p-26, 1e-8, -0, float32(math.Inf(-1)), float32(math.NaN()), 1.0009765625, 1.00048828125} {
		g[i*7] = v
	}
	pa, pb, pc, pk, pg := l.put(a), l.put(b), l.put(c), l.put(k), l.put(g)
	po, pio, pfo := l.put(make([]uint16, 32*n)), l.put(make([]int16, 8*n)), l.put(make([]float32, 2*n))
	l.run(t, "half_scalar", [3]uint32{n, 1, 1}, [3]uint16{64, 1, 1}, args(pa, pb, pc, pk, pg, po, pio, pfo))
	out, iout, fout := make([]uint16, 32*n), make([]int16, 8*n), make([]float32, 2*n)
	l.get(po, out)
	l.get(pio, iout)
	l.get(pfo, fout)

	r16 := func(v float64) uint16 { // v exact in float64
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return f64to16(v)
		}
		return h16tRound(h16tBig(v))
	}
	fmin := func(x, y uint16) uint16 {
		switch {
		case h16tIsNaN(x):
			return y
		case h16tIsNaN(y):
			return x
		case h16tVal(x) < h16tVal(y) || h16tVal(x) == h16tVal(y) && x&0x8000 != 0:
			return x
		}
		return y
	}
	fmax := func(x, y uint16) uint16 {
		switch {
		case h16tIsNaN(x):
			return y
		case h16tIsNaN(y):
			return x
		case h16tVal(x) > h16tVal(y) || h16tVal(x) == h16tVal(y) && x&0x8000 == 0:
			return x
		}
		return y
	}
	med3 := func(x, y, z uint16) uint16 { // the ISA's V_MED3_F16 pseudo-code
		if h16tIsNaN(x) || h16tIsNaN(y) || h16tIsNaN(z) {
			return fmin(fmin(x, y), z)
		}
		switch m := h16tVal(fmax(fmax(x, y), z)); m {
		case h16tVal(x):
			return fmax(y, z)
		case h16tVal(y):
			return fmax(x, z)
		}
		return fmax(x, y)
	}
	unary := func(h uint16, f func(float64) float64) uint16 {
		x := h16tVal(h)
		if math.IsNaN(x) {
			return 0x7e00
		}
		return f64to16(f(x)) // the tests of these ops allow one ULP; f64to16 rounds the float64 once
	}
	bad := 0
	for i := 0; i < n; i++ {
		x, y, z := a[i], b[i], c[i]
		fx, fy := h16tVal(x), h16tVal(y)
		// the compiled division: v_rcp_f32(y), v_mul_f32, v_cvt_f16_f32, v_div_fixup_f16
		q := f64to16(float64(float32(float32(fx) * (1 / float32(fy)))))
		quo := h16tDivFixup(q, y, x)
		e := int(k[i] % 20)
		fract := uint16(0x7e00)
		if !math.IsNaN(fx) && !math.IsInf(fx, 0) {
			fract = r16(fx - math.Floor(fx))
			if fract == 0x3c00 {
				fract = 0x3bff
			}
		}
		mant := x
		if fx != 0 && !math.IsInf(fx, 0) && !math.IsNaN(fx) {
			m, _ := math.Frexp(fx)
			mant = r16(m)
		}
		abs := func(h uint16) uint16 { return h &^ 0x8000 }
		exact := []struct {
			idx  int
			want uint16
		}{
			{0, r16(fx + fy)}, {1, r16(fx - fy)}, {2, r16(fx * fy)}, {3, quo}, {4, h16tFma(x, y, z)},
			{5, fmin(fmax(x, x), fmax(y, y))}, {6, fmax(fmax(x, x), fmax(z, z))},
			{8, r16(math.Floor(fx))}, {9, r16(math.Ceil(fx))}, {10, r16(math.Trunc(fx))}, {11, r16(math.RoundToEven(fx))},
			{12, x&0x7fff | y&0x8000}, {13, r16(math.Ldexp(fx, e))}, {16, fract}, {17, mant}, {18, med3(x, y, z)},
			{20, r16(float64(k[i]))}, {21, r16(float64(uint16(k[i])))}, {22, r16(float64(g[i]))},
			{24, h16tFma(x^0x8000, abs(z), y^0x8000)}, {27, h16tDivFixup(x, y, z)},
		}
		for _, w := range exact {
			if got := out[32*i+w.idx]; !h16tSame(got, w.want) {
				if bad++; bad < 30 {
					t.Errorf("element %d result %d: %#04x, want %#04x (x=%#04x y=%#04x z=%#04x k=%d g=%v)", i, w.idx, got, w.want, x, y, z, k[i], g[i])
				}
			}
		}
		if fq := fx / fy; !math.IsNaN(fq) && math.Abs(fq) >= 0x1p-14 && math.Abs(fq) < 65504 {
			if got := out[32*i+3]; !h16tNear(got, r16(fq)) {
				t.Errorf("element %d: %v / %v = %#04x, more than one ULP from %#04x", i, fx, fy, got, r16(fq))
			}
		}
		sinArg := r16(fx / 16)
		expArg := r16(fx / 4)
		approx := []struct {
			idx  int
			want uint16
		}{
			{7, unary(abs(x), math.Sqrt)}, {14, unary(y, func(v float64) float64 { return 1 / v })},
			{15, unary(abs(y), func(v float64) float64 { return 1 / math.Sqrt(v) })},
			{19, unary(sinArg, func(v float64) float64 { return math.Sin(2 * math.Pi * v) })},
			{23, unary(z, func(v float64) float64 { return math.Cos(2 * math.Pi * v) })},
			{25, unary(expArg, math.Exp2)}, {26, unary(abs(z), math.Log2)},
		}
		for _, w := range approx {
			if got := out[32*i+w.idx]; !h16tNear(got, w.want) {
				if bad++; bad < 30 {
					t.Errorf("element %d result %d: %#04x, want %#04x within 1 ULP (x=%#04x y=%#04x z=%#04x)", i, w.idx, got, w.want, x, y, z)
				}
			}
		}
		// 16-bit integer results
		toI16 := func(v float64) int16 {
			switch {
			case math.IsNaN(v):
				return 0
			case v <= -32768:
				return -32768
			case v >= 32767:
				return 32767
			}
			return int16(v)
		}
		toU16 := func(v float64) int16 {
			switch {
			case math.IsNaN(v) || v <= 0:
				return 0
			case v >= 65535:
				return -1
			}
			return int16(uint16(v))
		}
		fexp := int16(0)
		if fx != 0 && !math.IsInf(fx, 0) && !math.IsNaN(fx) {
			_, ex := math.Frexp(fx)
			fexp = int16(ex)
		}
		b2i := func(v bool) int16 {
			if v {
				return 1
			}
			return 0
		}
		fz := h16tVal(z)
		ki, ii := k[i], int16(i)
		wantI := []int16{toI16(fx), toU16(fx), fexp,
			b2i(fx < fy) | b2i(fx == fz)<<1 | b2i(fx >= fy)<<2 | b2i(fx != fx)<<3 | b2i(fy > fz)<<4,
			int16(int32(ki)*int32(ki) + int32(ii)), max(ki, ii), int16(uint16(ki)>>3) - ki>>2, int16(min(uint16(ki), uint16(ii)))}
		for j, w := range wantI {
			if got := iout[8*i+j]; got != w {
				if bad++; bad < 30 {
					t.Errorf("element %d integer result %d: %d, want %d (x=%#04x y=%#04x z=%#04x k=%d)", i, j, got, w, x, y, z, ki)
				}
			}
		}
		// f32 results: the conversion and v_fma_mix_f32 (exact product and sum, rounded once)
		wf := []float32{f16to32(x), 0}
		if fg := float64(g[i]); math.IsNaN(fx) || math.IsNaN(fy) || math.IsNaN(fg) || math.IsInf(fx, 0) || math.IsInf(fy, 0) || math.IsInf(fg, 0) {
			wf[1] = float32(fx*fy + fg)
		} else if s := new(big.Float).SetPrec(4096).Add(new(big.Float).SetPrec(4096).Mul(h16tBig(fx), h16tBig(fy)), h16tBig(fg)); s.Sign() == 0 {
			wf[1] = float32(fx*fy + fg)
		} else {
			wf[1], _ = s.Float32()
		}
		for j, w := range wf {
			got := fout[2*i+j]
			if got != w && !(got != got && w != w) && math.Float32bits(got) != math.Float32bits(w) {
				if bad++; bad < 30 {
					t.Errorf("element %d f32 result %d: %v, want %v (x=%#04x y=%#04x g=%v)", i, j, got, w, x, y, g[i])
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d mismatches", bad)
	}
}

// h16tRun runs src (gfx90a assembly, one lane) with FLOAT_DENORM_MODE_32 = 3 and
// FLOAT_DENORM_MODE_16_64 = mode16 and returns the n dwords it stored at the kernarg address s[0:1].
func h16tRun(t *testing.T, src string, mode16 uint32, n int) ([]uint32, error) {
	t.Helper()
	m, _, err := runAsm(t, asm(t, src+"\ns_endpgm\n"), 1, 0, func(m *flatMem, _ *DispatchParams) {
		var rsrc1 [4]byte
		binary.LittleEndian.PutUint32(rsrc1[:], 3<<16|mode16<<18)
		m.Write(0x1000+48, rsrc1[:])
	})
	if err != nil {
		return nil, err
	}
	got := make([]byte, 4*n)
	m.Read(asmOut, got)
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(got[4*i:])
	}
	return out, nil
}

// h16tPrologue sets the source registers of TestF16Instructions. f16 pairs are written hi:lo.
const h16tPrologue = `
	v_mov_b32 v0, 0
	v_mov_b32 v1, 0x44003c00   // f16 4.0 : 1.0
	v_mov_b32 v2, 0x42004000   // f16 3.0 : 2.0
	v_mov_b32 v3, 0x3800bc00   // f16 0.5 : -1.0
	v_mov_b32 v4, 0x40200000   // f32 2.5
	v_mov_b32 v5, 0x3f000000   // f32 0.5
	v_mov_b32 v6, 0xfffe0003   // i16 -2 : 3
	v_mov_b32 v7, 0x00050007   // i16 5 : 7
	v_mov_b32 v8, 100
	v_mov_b32 v9, 0x7fffffff
	v_mov_b32 v20, 0x80ff7f01  // bytes (high to low) -128, -1, 127, 1
	v_mov_b32 v21, 0x02030405  // bytes 2, 3, 4, 5
	v_mov_b32 v22, 0x078f4321  // nibbles (high to low) 0, 7, -8, -1, 4, 3, 2, 1
	v_mov_b32 v23, 0x22222222
	v_mov_b32 v28, 0x00010002  // i16 1 : 2
	v_mov_b32 v30, 0x3f800001  // f32 1 + 2^-23
	v_mov_b32 v31, 0xc788b800  // f32 -70000
	v_mov_b32 v33, 0xc0000000  // f32 -2.0
	v_mov_b32 v34, 70000
	v_mov_b32 v35, 5
	v_mov_b32 v36, -40000
	v_mov_b32 v37, 1234
	v_mov_b32 v40, 0x3c00      // f16 1.0
	v_mov_b32 v41, 0xc000      // f16 -2.0
	v_mov_b32 v42, 0
	v_mov_b32 v44, 0x3800      // f16 0.5
	v_mov_b32 v45, 0x0064012c  // i16 100 : 300
	v_mov_b32 v46, 0x7c00      // f16 +inf
	v_mov_b32 v47, 0x0001ffff  // i16 low half -1 (as i32: 131071)
	v_mov_b32 v48, 0xffffffe7  // -25
	v_mov_b32 v49, 0x7e00      // f16 NaN
	v_mov_b32 v50, 0xffff
	v_mov_b32 v51, 0x8001      // f16 -2^-24
	v_mov_b32 v52, 0x0001      // f16 2^-24
	v_mov_b32 v53, 0x3f801000  // f32 1 + 2^-11
	v_mov_b32 v54, 0x3f800000  // f32 1.0
	v_mov_b32 v55, 0x21800000  // f32 2^-60
	v_mov_b32 v56, 0x3f800800  // f32 1 + 2^-12
	v_mov_b32 v57, 0x1c800000  // f32 2^-70
	v_mov_b32 v58, 0x3c003800  // f16 1.0 : 0.5
	v_mov_b32 v59, 0x3c013c01  // f16 (1 + 2^-10) : (1 + 2^-10)
	v_mov_b32 v60, 0x3bff3bff  // f16 (1 - 2^-11) : (1 - 2^-11)
	v_mov_b32 v61, 0x00090009  // f16 9·2^-24 : 9·2^-24
	v_mov_b32 v63, 0xfffe0010  // i16 -2 : 16
	v_mov_b32 v64, 0x4400      // f16 4.0
`

// TestF16Instructions: single 16-bit instructions, most of which clang-14 does not emit for the
// corpus, with results worked out by hand from the GFX9/MI200 ISA descriptions. Each case
// initialises v200 (0xdeadbeef unless given: that value shows which half is zeroed or kept),
// runs one instruction writing v200, and stores it.
func TestF16Instructions(t *testing.T) {
	cases := []struct {
		inst string
		init uint32 // v200 before the instruction; 0 means 0xdeadbeef
		want uint32
		why  string
	}{
		// op_sel: source halves and the destination half (GFX9 VOP3 16-bit opcodes)
		{"v_fma_f16 v200, v1, v2, v3", 0, 0xdead3c00, "1*2 + -1 = 1.0 in the low half; the high half kept"},
		{"v_fma_f16 v200, v1, v2, v3 op_sel:[1,0,1,1]", 0, 0x4840beef, "4.0*2.0 + 0.5 = 8.5 = 0x4840 to the high half; the low half kept"},
		{"v_fma_legacy_f16 v200, v1, v2, v3", 0, 0x00003c00, "legacy (GFX8) opcode: 1.0, high half zeroed"},
		{"v_add_f16_e64 v200, v1, v2", 0, 0x00004200, "VOP3 form of a VOP2 op: 3.0, high half zeroed"},
		{"v_mad_u16 v200, v1, v2, v3 op_sel:[0,1,0,1]", 0, 0xbc00beef, "0x3c00*0x4200 = 0xf780000 (low 16 bits 0) + 0xbc00, to the high half"},
		{"v_mad_legacy_u16 v200, v1, v2, v3", 0, 0x0000bc00, "0x3c00*0x4000 = 0xf000000 (low 0) + 0xbc00; high zeroed"},
		{"v_mad_i16 v200, v6, v7, v28 op_sel:[1,1,1,0]", 0, 0xdeadfff7, "-2*5 + 1 = -9 = 0xfff7 to the low half"},
		{"v_mad_legacy_i16 v200, v6, v7, v28", 0, 0x00000017, "3*7 + 2 = 23; high zeroed"},
		{"v_mad_f16 v200, v1, v2, v3 op_sel:[1,1,1,1]", 0, 0x4a40beef, "4*3 + 0.5 = 12.5 = 1.5625*2^3 (exponent 18: 0x4800, mantissa 576: 0x240), high half"},
		{"v_mac_f16_e32 v200, v1, v2", 0, 0xdead3444, "2.0 + f16 0xbeef (-1.7333984375) = 0.2666015625 = 0x3444; GFX9 keeps the high half"},
		{"v_madak_f16 v200, v1, v2, 0x3800", 0, 0xdead4100, "1*2 + 0.5 = 2.5 = 0x4100, high kept"},
		{"v_madmk_f16 v200, v1, 0x4200, v2", 0, 0xdead4500, "1*3.0 + 2.0 = 5.0 = 0x4500, high kept"},
		{"v_pack_b32_f16 v200, v1, v2 op_sel:[1,0,0]", 0, 0x40004400, "low = high half of v1 (4.0), high = low half of v2 (2.0)"},
		{"v_add_i16 v200, v1, v2 op_sel:[1,1,1]", 0, 0x8600beef, "0x4400 + 0x4200 = 0x8600 (wraps), to the high half"},
		{"v_add_i16 v200, v1, v2 op_sel:[1,1,0] clamp", 0, 0xdead7fff, "17408 + 16896 = 34304 saturates to 32767"},
		{"v_sub_i16 v200, v3, v2 op_sel:[0,1,0] clamp", 0, 0xdead8000, "-17408 - 16896 = -34304 saturates to -32768"},
		{"v_med3_f16 v200, v1, v2, v3 op_sel:[1,1,1,0]", 0, 0xdead4200, "med3(4.0, 3.0, 0.5) = 3.0"},
		{"v_min3_u16 v200, v6, v7, v28 op_sel:[1,1,1,1]", 0, 0x0001beef, "min(0xfffe, 5, 1) = 1 to the high half"},
		{"v_max3_i16 v200, v6, v7, v28 op_sel:[1,0,0,0]", 0, 0xdead0007, "max(-2, 7, 2) = 7"},
		{"v_med3_i16 v200, v6, v7, v28", 0, 0xdead0003, "med3(3, 7, 2) = 3"},
		{"v_mad_u32_u16 v200, v1, v2, v35 op_sel:[1,1,0,0]", 0, 0x11880005, "high halves 0x4400*0x4200 = 0x11880000, + 5"},
		{"v_mad_i32_i16 v200, v3, v2, v8", 0, 0xef000064, "-17408*16384 + 100 = -285212572 = 0xef000064"},
		{"v_div_fixup_f16 v200, v1, v3, v2 op_sel:[1,0,0,1]", 0, 0xc400beef, "quotient 4.0, denominator -1.0, numerator 2.0: -|4.0| to the high half"},
		{"v_div_fixup_legacy_f16 v200, v40, v41, v42", 0, 0x00008000, "numerator 0, denominator -2: -0, high zeroed"},
		{"v_cvt_f16_f32_e32 v200, v4", 0, 0x00004100, "2.5f -> 0x4100, high zeroed"},
		// clamp and omod
		{"v_add_f16_e64 v200, v1, v2 clamp", 0, 0x00003c00, "1 + 2 = 3 clamps to 1.0"},
		{"v_mul_f16_e64 v200, v3, v2 clamp", 0, 0x00000000, "-1 * 2 = -2 clamps to 0"},
		{"v_sqrt_f16_e64 v200, v2 mul:2", 0, 0x000041a8, "sqrt(2) = 0x3da8 (1.4140625), *2 = 0x41a8"},
		{"v_fma_f16 v200, v1, v2, v3 op_sel:[1,1,1,1] clamp", 0, 0x3c00beef, "4*3 + 0.5 = 12.5 clamps to 1.0, high half"},
		{"v_pk_add_f16 v200, v1, v3 clamp", 0, 0x3c000000, "low 1 + -1 = 0, high 4 + 0.5 = 4.5 -> 1.0"},
		{"v_fma_mix_f32 v200, v1, v2, v5 op_sel:[1,1,0] op_sel_hi:[1,1,0] clamp", 0, 0x3f800000, "4*3 + 0.5 = 12.5 clamps to 1.0f"},
		// 16-bit integer clamp
		{"v_add_u16_e64 v200, v50, v7 clamp", 0, 0x0000ffff, "0xffff + 7 saturates"},
		{"v_add_u16_e64 v200, v50, v7", 0, 0x00000006, "0xffff + 7 wraps to 6"},
		{"v_sub_u16_e64 v200, v6, v7 clamp", 0, 0x00000000, "3 - 7 saturates to 0"},
		// packed 16-bit (VOP3P)
		{"v_pk_max_f16 v200, v1, v3 neg_hi:[1,0]", 0, 0x38003c00, "low max(1, -1) = 1.0; high max(-4, 0.5) = 0.5"},
		{"v_pk_min_f16 v200, v49, v1 op_sel_hi:[0,1]", 0, 0x44003c00, "NaN operands give the other operand: low 1.0, high 4.0"},
		{"v_pk_max_i16 v200, v6, v7", 0, 0x00050007, "max(3,7) = 7, max(-2,5) = 5"},
		{"v_pk_min_i16 v200, v6, v7", 0, 0xfffe0003, "min(3,7) = 3, min(-2,5) = -2"},
		{"v_pk_max_u16 v200, v6, v7", 0, 0xfffe0007, "max(3,7) = 7, max(0xfffe,5) = 0xfffe"},
		{"v_pk_min_u16 v200, v6, v7", 0, 0x00050003, "min(3,7) = 3, min(0xfffe,5) = 5"},
		{"v_pk_add_i16 v200, v6, v7 clamp", 0, 0x0003000a, "3+7 = 10, -2+5 = 3"},
		{"v_pk_sub_i16 v200, v6, v7", 0, 0xfff9fffc, "3-7 = -4, -2-5 = -7"},
		{"v_pk_sub_u16 v200, v7, v6 clamp", 0, 0x00000004, "7-3 = 4, 5-0xfffe saturates to 0"},
		{"v_pk_lshlrev_b16 v200, v7, v6", 0, 0xffc00180, "3<<7 = 0x180, 0xfffe<<5 = 0xffc0"},
		{"v_pk_lshrrev_b16 v200, v28, v6", 0, 0x7fff0000, "3>>2 = 0, 0xfffe>>1 = 0x7fff"},
		{"v_pk_ashrrev_i16 v200, v28, v6", 0, 0xffff0000, "3>>2 = 0, -2>>1 = -1"},
		{"v_pk_mad_i16 v200, v6, v7, v28", 0, 0xfff70017, "3*7+2 = 23, -2*5+1 = -9"},
		{"v_pk_mad_u16 v200, v6, v7, v28 clamp", 0, 0xffff0017, "3*7+2 = 23, 0xfffe*5+1 saturates"},
		{"v_pk_fmac_f16_e32 v200, v1, v2", 0x3c003800, 0x4a804100, "low 1*2 + 0.5 = 2.5 (0x4100), high 4*3 + 1 = 13 (0x4a80)"},
		// dot products
		{"v_dot2_f32_f16 v200, v1, v2, v5", 0, 0x41680000, "1*2 + 4*3 + 0.5 = 14.5"},
		{"v_dot2_f32_f16 v200, v1, v2, v5 op_sel:[1,0,0] op_sel_hi:[0,1,1]", 0, 0x41380000, "element 0 of S0 = 4.0, element 1 = 1.0: 4*2 + 1*3 + 0.5 = 11.5"},
		{"v_dot2_f32_f16 v200, v1, v2, v5 neg_lo:[1,0,0]", 0, 0x41280000, "-1*2 + 4*3 + 0.5 = 10.5"},
		{"v_dot2_i32_i16 v200, v6, v7, v8", 0, 111, "3*7 + -2*5 + 100 = 111"},
		{"v_dot2_u32_u16 v200, v6, v7, v8", 0, 0x5006f, "3*7 + 65534*5 + 100 = 327791"},
		{"v_dot2_i32_i16 v200, v6, v7, v9 clamp", 0, 0x7fffffff, "0x7fffffff + 11 saturates"},
		{"v_dot2_i32_i16 v200, v6, v7, v9", 0, 0x8000000a, "0x7fffffff + 11 wraps"},
		{"v_dot4_i32_i8 v200, v20, v21, v8", 0, 354, "1*5 + 127*4 + -1*3 + -128*2 + 100 = 354"},
		{"v_dot4_u32_u8 v200, v20, v21, v8", 0, 1634, "1*5 + 127*4 + 255*3 + 128*2 + 100 = 1634"},
		{"v_dot8_i32_i4 v200, v22, v23, v8", 0, 116, "2*(1+2+3+4-1-8+7+0) + 100 = 116"},
		{"v_dot8_u32_u4 v200, v22, v23, v8", 0, 180, "2*(1+2+3+4+15+8+7+0) + 100 = 180"},
		{"v_dot2c_f32_f16_e32 v200, v1, v2", 0x3f000000, 0x41680000, "1*2 + 4*3 + 0.5 (the destination) = 14.5"},
		{"v_dot2c_i32_i16_e32 v200, v6, v7", 100, 111, "3*7 + -2*5 + 100"},
		{"v_dot4c_i32_i8_e32 v200, v20, v21", 100, 354, "as v_dot4_i32_i8"},
		{"v_dot8c_i32_i4_e32 v200, v22, v23", 100, 116, "as v_dot8_i32_i4"},
		// mixed precision
		{"v_fma_mix_f32 v200, v1, v2, v5 op_sel_hi:[1,1,0]", 0, 0x40200000, "f16 1.0 * f16 2.0 + f32 0.5 = 2.5"},
		{"v_fma_mix_f32 v200, v1, v2, v5 op_sel:[1,1,0] op_sel_hi:[1,1,0]", 0, 0x41480000, "high halves: 4*3 + 0.5 = 12.5"},
		{"v_fma_mix_f32 v200, -|v3|, v2, v5 op_sel_hi:[1,1,0]", 0, 0xbfc00000, "-|-1.0| * 2 + 0.5 = -1.5"},
		{"v_fma_mixlo_f16 v200, v1, v2, v3 op_sel_hi:[1,1,1]", 0, 0xdead3c00, "1*2 + -1 = 1.0 to the low half, high kept"},
		{"v_fma_mixhi_f16 v200, v1, v2, v5 op_sel_hi:[1,1,0]", 0, 0x4100beef, "1*2 + 0.5f = 2.5 to the high half, low kept"},
		{"v_fma_mixlo_f16 v200, v53, v54, v55", 0, 0xdead3c01, "f32 (1+2^-11)*1 + 2^-60: just above the binary16 tie 1+2^-11, rounds up " +
			"to 1+2^-10 (double rounding through float64 would give the tie and round to even, 0x3c00)"},
		{"v_fma_f32 v200, v56, v56, v57", 0, 0x3f801001, "(1+2^-12)^2 + 2^-70 = 1 + 2^-11 + 2^-24 + 2^-70: above the f32 tie, " +
			"1+2^-11+2^-23 (math.FMA then float32 gives 0x3f801000)"},
		{"v_fma_f16 v200, v59, v60, v61", 0, 0xdead3c01, "(1+2^-10)(1-2^-11) + 9*2^-24 = 1 + 2^-11 + 2^-24, just above the tie: 1+2^-10 " +
			"(an unfused product would round to the tie's lower neighbour 1+2^-11-2^-21 -> 1.0 first)"},
		// packing conversions
		{"v_cvt_pkrtz_f16_f32 v200, v30, v31", 0, 0xfbff3c00, "1+2^-23 truncates to 1.0; -70000 is beyond the range: -65504 toward zero"},
		{"v_cvt_pknorm_i16_f32 v200, v5, v33", 0, 0x80014000, "0.5*32767 = 16383.5 -> 16384; -2 clamps to -1 -> -32767"},
		{"v_cvt_pknorm_u16_f32 v200, v5, v33", 0, 0x00008000, "0.5*65535 = 32767.5 -> 32768; -2 -> 0"},
		{"v_cvt_pknorm_i16_f16 v200, v1, v3 op_sel:[1,0,0]", 0, 0x80017fff, "high half of v1 4.0 -> 32767; low half of v3 -1.0 -> -32767"},
		{"v_cvt_pknorm_u16_f16 v200, v3, v1 op_sel:[1,1,0]", 0, 0xffff8000, "0.5 -> 32768; 4.0 -> 65535"},
		{"v_cvt_pk_u16_u32 v200, v34, v35", 0, 0x0005ffff, "70000 saturates to 0xffff; 5"},
		{"v_cvt_pk_i16_i32 v200, v36, v37", 0, 0x04d28000, "-40000 saturates to -32768; 1234"},
		{"v_sad_u16 v200, v6, v63, v8", 0, 113, "|3-16| + 100 (the high halves are equal, so whether they take part does not matter)"},
		// VOP1/VOP2 conversions and helpers
		{"v_cvt_norm_i16_f16_e32 v200, v3", 0, 0x00008001, "-1.0 -> -32767, high zeroed"},
		{"v_cvt_norm_u16_f16_e32 v200, v44", 0, 0x00008000, "0.5*65535 = 32767.5 -> 32768"},
		{"v_sat_pk_u8_i16_e32 v200, v45", 0, 0x000064ff, "300 -> 255, 100 -> 100"},
		{"v_cvt_u16_f16_e32 v200, v46", 0, 0x0000ffff, "+inf saturates"},
		{"v_cvt_i16_f16_e32 v200, v46", 0, 0x00007fff, "+inf saturates"},
		{"v_cvt_i16_f16_e32 v200, v49", 0, 0x00000000, "NaN -> 0"},
		{"v_cvt_u16_f16_e32 v200, v41", 0, 0x00000000, "-2.0 -> 0"},
		{"v_cvt_i16_f16_e32 v200, v41", 0, 0x0000fffe, "-2.0 -> -2"},
		{"v_ldexp_f16_e32 v200, v1, v47", 0, 0x00003800, "exponent = the i16 low half of S1 (-1): 0.5; as an i32 (131071) it would be inf"},
		{"v_ldexp_f16_e32 v200, v1, v48", 0, 0x00000000, "2^-25 is a tie between 0 and 2^-24: rounds to even 0"},
		{"v_fract_f16_e32 v200, v51", 0, 0x00003bff, "-2^-24 - floor = 1 - 2^-24 rounds to 1.0: limited to 0x3bff"},
		{"v_frexp_exp_i16_f16_e32 v200, v52", 0, 0x0000ffe9, "2^-24 = 0.5 * 2^-23: -23"},
		{"v_frexp_mant_f16_e32 v200, v52", 0, 0x00003800, "2^-24: mantissa 0.5"},
		{"v_max_f16_e32 v200, v49, v1", 0, 0x00003c00, "NaN operand: the other"},
		{"v_min_f16_e64 v200, -v40, |v41|", 0, 0x0000bc00, "min(-1, 2) = -1"},
		{"v_sub_f16_e32 v200, v1, v2", 0, 0x0000bc00, "1 - 2 = -1"},
		{"v_subrev_f16_e32 v200, v1, v2", 0, 0x00003c00, "2 - 1 = 1"},
		{"v_rcp_f16_e32 v200, v41", 0, 0x0000b800, "1/-2 = -0.5 (exact)"},
		{"v_exp_f16_e32 v200, v41", 0, 0x00003400, "2^-2 = 0.25 (exact)"},
		{"v_log_f16_e32 v200, v44", 0, 0x0000bc00, "log2(0.5) = -1 (exact)"},
		{"v_cos_f16_e32 v200, v44", 0, 0x0000bc00, "cos(2pi*0.5) = -1"},
		{"v_rsq_f16_e32 v200, v64", 0, 0x00003800, "1/sqrt(4) = 0.5 (exact)"},
		{"v_cvt_f16_u16_e32 v200, v50", 0, 0x00007c00, "65535 rounds to +inf"},
		{"v_cvt_f16_i16_e32 v200, v41", 0, 0x0000f400, "i16 0xc000 = -16384 = -2^14: exponent 29, 0xf400"},
		{"v_cvt_f32_f16_e32 v200, v52", 0, 0x33800000, "2^-24 as f32"},
		{"v_add_f16_sdwa v200, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:WORD_0", 0, 0x4600beef,
			"SDWA: high half of v1 (4.0) + low half of v2 (2.0) = 6.0 into the high half, low kept"},
		{"v_mul_f16_dpp v200, v1, v2 quad_perm:[0,0,0,0] row_mask:0xf bank_mask:0xf", 0, 0x00004000, "DPP (lane 0 reads itself): 1*2"},
	}
	var src strings.Builder
	src.WriteString(h16tPrologue)
	for i, c := range cases {
		init := c.init
		if init == 0 {
			init = 0xdeadbeef
		}
		fmt.Fprintf(&src, "\tv_mov_b32 v200, 0x%x\n\t%s\n\tglobal_store_dword v0, v200, s[0:1] offset:%d\n", init, c.inst, 4*i)
	}
	got, err := h16tRun(t, src.String(), 3, len(cases))
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("%s: %#08x, want %#08x (%s)", c.inst, got[i], c.want, c.why)
		}
	}
}

// TestF16OpSelRefused: VOP3 op_sel on an operation without it (here v_add_f16_e64, whose op_sel bits
// LLVM does not accept) stops the wave with ErrUnimplemented instead of being ignored.
func TestF16OpSelRefused(t *testing.T) {
	// v_add_f16_e64 v0, v1, v2 (D11F0000 00020501) with op_sel[0] (bit 11) set
	m, p := miniKernel(t, []uint32{0xd11f0800, 0x00020501, 0xbf810000})
	if _, err := Dispatch(context.Background(), m, p); !errors.Is(err, ErrUnimplemented) {
		t.Fatalf("err = %v, want ErrUnimplemented", err)
	}
}

// TestF16F64DenormModes: FLOAT_DENORM_MODE_16_64 (MODE bits 7:6) for binary16 and f64, as
// TestDenormModes for f32: 0 flushes denormal inputs and results, 1 keeps inputs and flushes
// results, 2 flushes inputs and keeps results, 3 keeps both. The f32 mode is 3 throughout, so the
// f32 product of a denormal is unaffected.
//
//	v2 = 1.0 * f16 0x8200 (-2^-15, denormal input): -0 (0x8000) when inputs are flushed, else the
//	     denormal product 0x8200, flushed to -0 when results are flushed.
//	v3 = 0.5 * f16 0x0400 (2^-14, normal): the denormal result 2^-15 (0x0200), or +0 when flushed.
//	v[8:9], v[12:13]: the same for f64 (-2^-1023 = 0x8008000000000000; 0.5 * 2^-1022 = 2^-1023).
//	v14 = f32 1.0 * 0x80400000: always 0x80400000.
//	v16 = v_cvt_f32_f16 of 0x0200: 2^-15 = 0x38000000, or 0 when f16 inputs are flushed.
//	v18 = v_pk_mul_f16 of (-2^-15 : 2^-15) and (1.0 : 1.0): 0x82000200, or signed zeros.
//	v24 = v_cvt_f16_f32 of f32 2^-15 (normal in f32): the f16 denormal 0x0200, or 0 when results flush.
//	v25 = v_fma_mix_f32 of f16 2^-15 * 1.0 + 0: 2^-15 in f32, or 0 when f16 inputs are flushed.
func TestF16F64DenormModes(t *testing.T) {
	src := `
	v_mov_b32 v0, 0
	v_mov_b32 v1, 0x8200
	v_mul_f16 v2, 1.0, v1
	v_mov_b32 v4, 0x0400
	v_mul_f16 v3, 0.5, v4
	v_mov_b32 v6, 0
	v_mov_b32 v7, 0x80080000
	v_mul_f64 v[8:9], 1.0, v[6:7]
	v_mov_b32 v10, 0
	v_mov_b32 v11, 0x00100000
	v_mul_f64 v[12:13], 0.5, v[10:11]
	v_mov_b32 v15, 0x80400000
	v_mul_f32 v14, 1.0, v15
	v_mov_b32 v17, 0x0200
	v_cvt_f32_f16 v16, v17
	v_mov_b32 v19, 0x82000200
	v_mov_b32 v20, 0x3c003c00
	v_pk_mul_f16 v18, v19, v20
	v_mov_b32 v21, 0x38000000
	v_cvt_f16_f32 v24, v21
	v_fma_mix_f32 v25, v17, v20, 0 op_sel_hi:[1,1,0]
	global_store_dword v0, v2, s[0:1]
	global_store_dword v0, v3, s[0:1] offset:4
	global_store_dwordx2 v0, v[8:9], s[0:1] offset:8
	global_store_dwordx2 v0, v[12:13], s[0:1] offset:16
	global_store_dword v0, v14, s[0:1] offset:24
	global_store_dword v0, v16, s[0:1] offset:28
	global_store_dword v0, v18, s[0:1] offset:32
	global_store_dword v0, v24, s[0:1] offset:36
	global_store_dword v0, v25, s[0:1] offset:40
`
	for _, tc := range []struct {
		mode uint32
		want [11]uint32
	}{
		{0, [11]uint32{0x8000, 0, 0, 0x80000000, 0, 0, 0x80400000, 0, 0x80000000, 0, 0}},
		{1, [11]uint32{0x8000, 0, 0, 0x80000000, 0, 0, 0x80400000, 0x38000000, 0x80000000, 0, 0x38000000}},
		{2, [11]uint32{0x8000, 0x0200, 0, 0x80000000, 0, 0x00080000, 0x80400000, 0, 0x80000000, 0x0200, 0}},
		{3, [11]uint32{0x8200, 0x0200, 0, 0x80080000, 0, 0x00080000, 0x80400000, 0x38000000, 0x82000200, 0x0200, 0x38000000}},
	} {
		got, err := h16tRun(t, src, tc.mode, 11)
		if err != nil {
			t.Fatal(err)
		}
		if [11]uint32(got) != tc.want {
			t.Errorf("FLOAT_DENORM_MODE_16_64 = %d:\n got  %#x\n want %#x", tc.mode, got, tc.want)
		}
	}
}
