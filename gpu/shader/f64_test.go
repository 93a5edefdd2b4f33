package shader

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/kfdemu/kfdemu/internal/testenv"
)

// Differential tests of the f64 VALU: each opcode (and clang-14's division sequence) assembled with
// llvm-mc-14 runs over edge values (±0, ±inf, quiet and signaling NaN, the smallest and largest
// denormals and normals, the largest finite value, exponents near the scaling limits of the division)
// in every pairing and over random values of every exponent, and is compared with Go's float64
// arithmetic or math/big. NaN results are compared as NaN (the payload is the hardware's); every other
// result bit for bit, except where the opcode's accuracy is documented otherwise (v_rsq_f64).

var f64Edges = []uint64{
	0, 1 << 63, // ±0
	0x7ff0000000000000, 0xfff0000000000000, // ±inf
	0x7ff8000000000000, 0x7ff0000000000001, // qNaN, sNaN
	1, 0x800fffffffffffff, 0x000fffffffffffff, // denormals: smallest, -largest, largest
	0x0010000000000000, 0x8010000000000000, // ±smallest normal
	0x7fefffffffffffff, 0xffefffffffffffff, // ±largest finite
	u64(1), u64(-1), u64(2), u64(0.5), u64(3), u64(7), u64(-7), u64(1.5), u64(0.1), u64(-2.5),
	u64(2654435761), u64(379205108.71428573), u64(4294967295.5), u64(-2147483648.5), u64(2147483647.9),
	u64(0x1p1000), u64(0x1p-1000), u64(0x1p-1021), u64(0x1p1023), u64(-0x1p-1070), u64(0x1.fffffffffffffp-1),
	u64(0x1p-969), u64(0x1p969), u64(0x1p-53), u64(0x1p54), u64(1e300), u64(-1e-300), u64(0x1.8p-1074),
}

// f64Random gives n values whose exponents cover the whole range (denormals and infinities included).
func f64Random(r *rand.Rand, n int) []uint64 {
	v := make([]uint64, n)
	for i := range v {
		v[i] = uint64(r.Int63n(2))<<63 | uint64(r.Intn(0x7ff))<<52 | r.Uint64()&(1<<52-1)
		if i%4 == 0 { // moderate exponents, where most arithmetic happens
			v[i] = u64(math.Ldexp(r.Float64()+0.5, r.Intn(120)-60) * float64(1-2*r.Intn(2)))
		}
	}
	return v
}

// f64Inputs is every pair of edge values plus random triples.
func f64Inputs(nsrc int) [][3]uint64 {
	r := rand.New(rand.NewSource(16))
	var in [][3]uint64
	switch nsrc {
	case 1:
		for _, a := range f64Edges {
			in = append(in, [3]uint64{a})
		}
	default:
		for _, a := range f64Edges {
			for _, b := range f64Edges {
				in = append(in, [3]uint64{a, b, f64Edges[(len(in)*7)%len(f64Edges)]})
			}
		}
	}
	rv := f64Random(r, 3*1024)
	for i := 0; i < 1024; i++ {
		in = append(in, [3]uint64{rv[3*i], rv[3*i+1], rv[3*i+2]})
	}
	return in
}

// f64Kernel is the body run per lane: sources in v[2:3], v[4:5], v[6:7], the result in v[8:9] (v8
// for a 32-bit result).
func f64Kernel(t *testing.T, body string) []uint32 {
	return asm(t, `
	v_lshlrev_b32 v10, 5, v0
	global_load_dwordx2 v[2:3], v10, s[0:1]
	global_load_dwordx2 v[4:5], v10, s[0:1] offset:8
	global_load_dwordx2 v[6:7], v10, s[0:1] offset:16
	v_mov_b32 v9, 0
	s_waitcnt vmcnt(0)
`+body+`
	global_store_dwordx2 v10, v[8:9], s[0:1] offset:24
	s_endpgm
`)
}

// f64Run runs code over the inputs, 64 lanes per dispatch, with FLOAT_DENORM_MODE_32/_16_64 = 3
// (denormals kept, as clang-14 sets them), and returns the results.
func f64Run(t *testing.T, code []uint32, in [][3]uint64) []uint64 {
	out := make([]uint64, 0, len(in))
	for lo := 0; lo < len(in); lo += 64 {
		chunk := in[lo:min(lo+64, len(in))]
		m, _, err := runAsm(t, code, 64, 0, func(m *flatMem, p *DispatchParams) {
			var rs [4]byte
			binary.LittleEndian.PutUint32(rs[:], 3<<16|3<<18) // COMPUTE_PGM_RSRC1 float denorm modes
			m.Write(p.KernelObject+48, rs[:])
			b := make([]byte, 32*64)
			for i, s := range chunk {
				for k := 0; k < 3; k++ {
					binary.LittleEndian.PutUint64(b[32*i+8*k:], s[k])
				}
			}
			m.Write(asmOut, b)
		})
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 32*64)
		m.Read(asmOut, b)
		for i := range chunk {
			out = append(out, binary.LittleEndian.Uint64(b[32*i+24:]))
		}
	}
	return out
}

func isNaN64(v uint64) bool { return v&0x7ff0000000000000 == 0x7ff0000000000000 && v&(1<<52-1) != 0 }

// ulpDiff is the distance in units in the last place between two finite or infinite f64 of one sign.
func ulpDiff(a, b uint64) uint64 {
	if a>>63 != b>>63 {
		if a<<1 == 0 && b<<1 == 0 {
			return 0
		}
		return math.MaxUint64
	}
	if a > b {
		return a - b
	}
	return b - a
}

type f64Case struct {
	body string
	nsrc int
	ref  func(a, b, c uint64) uint64
	ulps uint64 // allowed distance from ref (0: bit-exact)
	r32  bool   // 32-bit result in v8
}

// bigRound is x rounded once to f64 (nearest even), through math/big, with the IEEE subnormal quantum.
func bigRound(x *big.Float) uint64 { return u64(roundTo(x, fpF64, big.ToNearestEven)) }

func refRsq(a, _, _ uint64) uint64 {
	x := f64(a)
	if x <= 0 || math.IsInf(x, 0) || x != x {
		return u64(1 / math.Sqrt(x))
	}
	s := new(big.Float).SetPrec(300).Sqrt(new(big.Float).SetPrec(300).SetFloat64(x))
	return bigRound(new(big.Float).SetPrec(300).Quo(big.NewFloat(1), s))
}

func refMinMax(isMin bool) func(a, b, _ uint64) uint64 {
	return func(a, b, _ uint64) uint64 {
		x, y := f64(a), f64(b)
		switch {
		case x != x && y != y:
			return u64(math.NaN())
		case x != x:
			return b
		case y != y:
			return a
		case x == y: // ±0: min prefers -0, max +0
			if (a>>63 == 1) == isMin {
				return a
			}
			return b
		case (x < y) == isMin:
			return a
		}
		return b
	}
}

func TestF64Differential(t *testing.T) {
	exactFMA := func(a, b, c uint64) uint64 { return u64(math.FMA(f64(a), f64(b), f64(c))) }
	cases := map[string]f64Case{
		"v_add_f64":  {"v_add_f64 v[8:9], v[2:3], v[4:5]", 2, func(a, b, _ uint64) uint64 { return u64(f64(a) + f64(b)) }, 0, false},
		"v_mul_f64":  {"v_mul_f64 v[8:9], v[2:3], v[4:5]", 2, func(a, b, _ uint64) uint64 { return u64(f64(a) * f64(b)) }, 0, false},
		"v_fma_f64":  {"v_fma_f64 v[8:9], v[2:3], v[4:5], v[6:7]", 3, exactFMA, 0, false},
		"v_fmac_f64": {"v_mov_b32 v8, v6\n v_mov_b32 v9, v7\n v_fmac_f64 v[8:9], v[2:3], v[4:5]", 3, exactFMA, 0, false},
		"v_fma_f64 neg": {"v_fma_f64 v[8:9], -v[2:3], v[4:5], 1.0", 2,
			func(a, b, _ uint64) uint64 { return u64(math.FMA(-f64(a), f64(b), 1)) }, 0, false},
		// VOP3 output modifiers on f64 results (they were ignored): the rounded result times 2, 4 or 1/2,
		// then clamp to [0, 1] (NaN -> 0).
		"v_add_f64 mul:2": {"v_add_f64 v[8:9], v[2:3], v[4:5] mul:2", 2, func(a, b, _ uint64) uint64 { return u64((f64(a) + f64(b)) * 2) }, 0, false},
		"v_fma_f64 div:2": {"v_fma_f64 v[8:9], v[2:3], v[4:5], v[6:7] div:2", 3, func(a, b, c uint64) uint64 { return u64(math.FMA(f64(a), f64(b), f64(c)) / 2) }, 0, false},
		"v_mul_f64 clamp mul:4": {"v_mul_f64 v[8:9], v[2:3], v[4:5] clamp mul:4", 2, func(a, b, _ uint64) uint64 {
			x := f64(a) * f64(b) * 4
			if x < 0 || x != x {
				return 0
			}
			return u64(math.Min(x, 1))
		}, 0, false},
		"v_cvt_f32_f64 div:2 clamp": {"v_cvt_f32_f64 v8, v[2:3] clamp div:2", 1, func(a, _, _ uint64) uint64 {
			x := float32(f64(a)) / 2
			if x < 0 || x != x {
				return 0
			}
			return uint64(math.Float32bits(min(x, 1)))
		}, 0, true},
		// v_div_fixup_f64(q, d, n) with q the IEEE quotient n/d (the input set below) returns n/d for
		// every pair: the special cases (NaN, 0/0, inf/inf, x/0, inf/y, x/inf, 0/y) and the sign.
		"v_div_fixup_f64": {"v_div_fixup_f64 v[8:9], v[6:7], v[4:5], v[2:3]", 3, func(a, b, _ uint64) uint64 { return u64(f64(a) / f64(b)) }, 0, false},
		// v_rcp_f64 and v_sqrt_f64 are correctly rounded here (hardware: about 1 ULP).
		"v_rcp_f64":  {"v_rcp_f64 v[8:9], v[2:3]", 1, func(a, _, _ uint64) uint64 { return u64(1 / f64(a)) }, 0, false},
		"v_sqrt_f64": {"v_sqrt_f64 v[8:9], v[2:3]", 1, func(a, _, _ uint64) uint64 { return u64(math.Sqrt(f64(a))) }, 0, false},
		// v_rsq_f64 is 1/sqrt(x) in two float64 roundings: within 1 ULP of the true value, as hardware.
		"v_rsq_f64": {"v_rsq_f64 v[8:9], v[2:3]", 1, refRsq, 1, false},
		"v_ldexp_f64": {"v_ldexp_f64 v[8:9], v[2:3], v4", 2, func(a, b, _ uint64) uint64 {
			e := int(int32(uint32(b))) // the exponent: an i32 (edge/random bits, huge ones included)
			if x := f64(a); x == 0 || math.IsInf(x, 0) || x != x {
				return a
			}
			return bigRound(new(big.Float).SetPrec(exactPrec).SetMantExp(exact(f64(a)), e))
		}, 0, false},
		"v_frexp_mant_f64": {"v_frexp_mant_f64 v[8:9], v[2:3]", 1, func(a, _, _ uint64) uint64 {
			x := f64(a)
			if x == 0 || math.IsInf(x, 0) || x != x {
				return a
			}
			m, _ := math.Frexp(x)
			return u64(m)
		}, 0, false},
		"v_frexp_exp_i32_f64": {"v_frexp_exp_i32_f64 v8, v[2:3]", 1, func(a, _, _ uint64) uint64 {
			x := f64(a)
			if x == 0 || math.IsInf(x, 0) || x != x {
				return 0
			}
			_, e := math.Frexp(x)
			return uint64(uint32(int32(e)))
		}, 0, true},
		"v_fract_f64": {"v_fract_f64 v[8:9], v[2:3]", 1, func(a, _, _ uint64) uint64 {
			x := f64(a)
			if math.IsInf(x, 0) || x != x {
				return u64(math.NaN())
			}
			f := new(big.Float).SetPrec(exactPrec).Sub(exact(x), exact(math.Floor(x))) // exact: x - floor(x)
			return u64(math.Min(f64(bigRound(f)), 0x1.fffffffffffffp-1))
		}, 0, false},
		"v_floor_f64": {"v_floor_f64 v[8:9], v[2:3]", 1, func(a, _, _ uint64) uint64 { return u64(math.Floor(f64(a))) }, 0, false},
		"v_ceil_f64":  {"v_ceil_f64 v[8:9], v[2:3]", 1, func(a, _, _ uint64) uint64 { return u64(math.Ceil(f64(a))) }, 0, false},
		"v_trunc_f64": {"v_trunc_f64 v[8:9], v[2:3]", 1, func(a, _, _ uint64) uint64 { return u64(math.Trunc(f64(a))) }, 0, false},
		"v_rndne_f64": {"v_rndne_f64 v[8:9], v[2:3]", 1, func(a, _, _ uint64) uint64 { return u64(math.RoundToEven(f64(a))) }, 0, false},
		"v_min_f64":   {"v_min_f64 v[8:9], v[2:3], v[4:5]", 2, refMinMax(true), 0, false},
		"v_max_f64":   {"v_max_f64 v[8:9], v[2:3], v[4:5]", 2, refMinMax(false), 0, false},
		"v_cvt_f32_f64": {"v_cvt_f32_f64 v8, v[2:3]", 1, func(a, _, _ uint64) uint64 {
			return uint64(math.Float32bits(float32(f64(a))))
		}, 0, true},
		"v_cvt_i32_f64": {"v_cvt_i32_f64 v8, v[2:3]", 1, func(a, _, _ uint64) uint64 {
			x := math.Trunc(f64(a))
			switch {
			case x != x:
				return 0
			case x < math.MinInt32:
				return 0x80000000
			case x > math.MaxInt32:
				return 0x7fffffff
			}
			return uint64(uint32(int32(x)))
		}, 0, true},
		"v_cvt_u32_f64": {"v_cvt_u32_f64 v8, v[2:3]", 1, func(a, _, _ uint64) uint64 {
			x := math.Trunc(f64(a))
			switch {
			case x != x || x < 0:
				return 0
			case x > math.MaxUint32:
				return 0xffffffff
			}
			return uint64(uint32(x))
		}, 0, true},
		"v_cvt_f64_i32": {"v_cvt_f64_i32 v[8:9], v2", 1, func(a, _, _ uint64) uint64 { return u64(float64(int32(uint32(a)))) }, 0, false},
		"v_cvt_f64_u32": {"v_cvt_f64_u32 v[8:9], v2", 1, func(a, _, _ uint64) uint64 { return u64(float64(uint32(a))) }, 0, false},
		"v_cvt_f64_f32": {"v_cvt_f64_f32 v[8:9], v2", 1, func(a, _, _ uint64) uint64 { return u64(float64(math.Float32frombits(uint32(a)))) }, 0, false},
		// clang-14's f64 division (llvm-objdump of a / b, numerator v[2:3], denominator v[4:5]): the
		// quotient must be the correctly rounded IEEE one, as on hardware. This covers
		// v_div_scale_f64 (both forms), v_rcp_f64, v_fma_f64, v_fmac_f64, v_mul_f64, v_div_fmas_f64
		// (VCC scaling) and v_div_fixup_f64 (the special cases) together.
		"division": {`
	v_div_scale_f64 v[12:13], s[4:5], v[4:5], v[4:5], v[2:3]
	v_rcp_f64_e32 v[14:15], v[12:13]
	v_div_scale_f64 v[16:17], vcc, v[2:3], v[4:5], v[2:3]
	v_fma_f64 v[18:19], -v[12:13], v[14:15], 1.0
	v_fmac_f64_e32 v[14:15], v[14:15], v[18:19]
	v_fma_f64 v[18:19], -v[12:13], v[14:15], 1.0
	v_fmac_f64_e32 v[14:15], v[14:15], v[18:19]
	v_mul_f64 v[18:19], v[16:17], v[14:15]
	v_fma_f64 v[12:13], -v[12:13], v[18:19], v[16:17]
	v_div_fmas_f64 v[12:13], v[12:13], v[14:15], v[18:19]
	v_div_fixup_f64 v[8:9], v[12:13], v[4:5], v[2:3]`, 2, func(a, b, _ uint64) uint64 { return u64(f64(a) / f64(b)) }, 0, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			in := f64Inputs(c.nsrc)
			if name == "v_div_fixup_f64" {
				for i := range in {
					in[i][2] = u64(f64(in[i][0]) / f64(in[i][1]))
				}
			}
			if name == "v_ldexp_f64" { // exponents: small ones, the limits, and random i32
				for i := range in {
					e := []int64{0, 1, -1, 52, -52, 1023, -1074, 2000, -2000, math.MaxInt32, math.MinInt32}[i%11]
					if i%3 == 0 {
						e = int64(int32(in[i][1]))
					}
					in[i][1] = uint64(uint32(int32(e)))
				}
			}
			got := f64Run(t, f64Kernel(t, c.body), in)
			bad := 0
			for i, s := range in {
				want, g := c.ref(s[0], s[1], s[2]), got[i]
				ok := g == want
				switch {
				case c.r32:
					ok = uint32(g) == uint32(want) && g>>32 == 0
					if !ok && c.body[:9] == "v_cvt_f32" {
						ok = isNaN32(uint32(g)) && isNaN32(uint32(want))
					}
				case isNaN64(want):
					ok = isNaN64(g)
				case c.ulps > 0:
					ok = !isNaN64(g) && ulpDiff(g, want) <= c.ulps
				}
				if !ok {
					if bad++; bad <= 5 {
						t.Errorf("%s(%#x %#x %#x) = %#x (%v), want %#x (%v)", name, s[0], s[1], s[2], g, f64(g), want, f64(want))
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d inputs wrong", bad, len(in))
			}
		})
	}
}

func isNaN32(v uint32) bool { return v&0x7f800000 == 0x7f800000 && v&0x7fffff != 0 }

// TestF64DivisionOpenCL: OpenCL C double division compiled by clang-14 (testdata/f64div.cl), over the
// edge values in every pairing and random operands, bit-exact against Go's IEEE quotient; and
// (double)u / 7.0 for 32-bit integers, converted back to uint and int on the GPU (v_cvt_u32_f64 and
// v_cvt_i32_f64, which used to go through float32: (uint)379205108.71 gave 379205120).
func TestF64DivisionOpenCL(t *testing.T) {
	l := loadPath(t, testenv.CodeObject(t, "testdata/f64div.cl"))
	in := f64Inputs(2)
	n := (len(in) + 63) &^ 63
	a, b := make([]float64, n), make([]float64, n)
	for i, s := range in {
		a[i], b[i] = f64(s[0]), f64(s[1])
	}
	for i := len(in); i < n; i++ {
		a[i], b[i] = 1, 3
	}
	pa, pb, pq := l.put(a), l.put(b), l.put(make([]float64, n))
	l.run(t, "ddiv", [3]uint32{uint32(n), 1, 1}, [3]uint16{64, 1, 1}, args(pa, pb, pq))
	q := make([]float64, n)
	l.get(pq, q)
	bad := 0
	for i := range a {
		want := a[i] / b[i]
		if u64(q[i]) != u64(want) && !(want != want && q[i] != q[i]) {
			if bad++; bad <= 5 {
				t.Errorf("%v / %v = %v (%#x), want %v (%#x)", a[i], b[i], q[i], u64(q[i]), want, u64(want))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d quotients wrong", bad, n)
	}

	u := []uint32{2654435761, 0, 1, 7, 0xffffffff, 0x80000000, 123456789}
	for i := uint32(0); len(u) < 128; i++ {
		u = append(u, i*2654435761)
	}
	pu, pq2, pqu, pqi := l.put(u), l.put(make([]float64, len(u))), l.put(make([]uint32, len(u))), l.put(make([]int32, len(u)))
	l.run(t, "udiv7", [3]uint32{uint32(len(u)), 1, 1}, [3]uint16{64, 1, 1}, args(pu, pq2, pqu, pqi))
	q2, qu, qi := make([]float64, len(u)), make([]uint32, len(u)), make([]int32, len(u))
	l.get(pq2, q2)
	l.get(pqu, qu)
	l.get(pqi, qi)
	for i, x := range u {
		want := float64(x) / 7
		if q2[i] != want || qu[i] != uint32(want) || qi[i] != int32(want-300000000) {
			t.Errorf("(double)%d / 7.0 = %v, (uint) %d, (int)(q - 3e8) %d; want %v %d %d", x, q2[i], qu[i], qi[i], want, uint32(want), int32(want-300000000))
		}
	}
	if q2[0] != 379205108.71428573 || qu[0] != 379205108 {
		t.Errorf("(double)2654435761u / 7.0 = %.17g, as uint %d; want 379205108.71428573, 379205108", q2[0], qu[0])
	}
}

// TestF32DivisionSequence: llc-14's correctly rounded f32 division (fdiv float with IEEE denormals) over
// every pair of f32 edge values and random operands, bit-exact against Go's float32 quotient: it
// checks the f32 forms of the V_DIV_SCALE/V_DIV_FMAS/V_DIV_FIXUP decisions above.
func TestF32DivisionSequence(t *testing.T) {
	edges := []uint32{0, 1 << 31, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 1, 0x807fffff, 0x007fffff,
		0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000, 0x40000000, 0x3f000000, 0x40400000,
		0x40e00000, 0xc0e00000, 0x3dcccccd, 0x4f1e3779, 0x7e800000, 0x01000000, 0x1f800000, 0x5f800000,
		0x0c800000, 0x72800000, 0x3f7fffff, 0x33800000, 0x4b000000}
	var in [][3]uint64
	for _, a := range edges {
		for _, b := range edges {
			in = append(in, [3]uint64{uint64(a), uint64(b)})
		}
	}
	r := rand.New(rand.NewSource(32))
	for i := 0; i < 1024; i++ {
		a, b := r.Uint32(), r.Uint32()
		if i%2 == 0 {
			a = math.Float32bits(float32(math.Ldexp(r.Float64()+0.5, r.Intn(60)-30)))
		}
		in = append(in, [3]uint64{uint64(a), uint64(b)})
	}
	code := f64Kernel(t, `
	v_div_scale_f32 v12, s[4:5], v4, v4, v2
	v_rcp_f32_e32 v13, v12
	v_fma_f32 v14, -v12, v13, 1.0
	v_fmac_f32_e32 v13, v14, v13
	v_div_scale_f32 v14, vcc, v2, v4, v2
	v_mul_f32_e32 v15, v14, v13
	v_fma_f32 v16, -v12, v15, v14
	v_fmac_f32_e32 v15, v16, v13
	v_fma_f32 v12, -v12, v15, v14
	v_div_fmas_f32 v12, v12, v13, v15
	v_div_fixup_f32 v8, v12, v4, v2`)
	got := f64Run(t, code, in)
	bad := 0
	for i, s := range in {
		a, b := math.Float32frombits(uint32(s[0])), math.Float32frombits(uint32(s[1]))
		want := a / b
		g := uint32(got[i])
		if g != math.Float32bits(want) && !(want != want && isNaN32(g)) {
			if bad++; bad <= 5 {
				t.Errorf("%v / %v (%#x / %#x) = %v (%#x), want %v (%#x)", a, b, s[0], s[1], math.Float32frombits(g), g, want, math.Float32bits(want))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d quotients wrong", bad, len(in))
	}
}
