package shader

import (
	"math"
	"math/bits"
	"testing"
)

func TestCorpusDdot(t *testing.T) {
	l := load(t)
	const n, wg, groups = 3000, 256, 4
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], y[i] = math.Sqrt(float64(i)), 1/float64(i+1)
	}
	px, py, pp := l.put(x), l.put(y), l.put(make([]float64, groups))
	l.run(t, "ddot", [3]uint32{wg * groups, 1, 1}, [3]uint16{wg, 1, 1}, args(px, py, pp, uint32(n)))
	got := make([]float64, groups)
	l.get(pp, got)
	// reference: same association order as the kernel
	for g := 0; g < groups; g++ {
		tmp := make([]float64, wg)
		for lid := 0; lid < wg; lid++ {
			s := 0.0
			for i := g*wg + lid; i < n; i += wg * groups {
				s = math.FMA(x[i], y[i], s)
			}
			tmp[lid] = s
		}
		for w := wg / 2; w > 0; w >>= 1 {
			for lid := 0; lid < w; lid++ {
				tmp[lid] += tmp[lid+w]
			}
		}
		if got[g] != tmp[0] {
			t.Errorf("ddot group %d = %v, want %v", g, got[g], tmp[0])
		}
	}
}

func TestCorpusLDSReduce(t *testing.T) {
	l := load(t)
	const wg, groups = 256, 3
	in := make([]uint32, wg*groups)
	for i := range in {
		in[i] = uint32(i*7919) % 100003
	}
	pin, pout, pmax := l.put(in), l.put(make([]uint32, groups)), l.put(make([]uint32, groups))
	l.run(t, "lds_reduce", [3]uint32{wg * groups, 1, 1}, [3]uint16{wg, 1, 1}, args(pin, pout, pmax))
	out, mx := make([]uint32, groups), make([]uint32, groups)
	l.get(pout, out)
	l.get(pmax, mx)
	for g := 0; g < groups; g++ {
		var s, m uint32
		for _, v := range in[g*wg : (g+1)*wg] {
			s += v
			m = max(m, v)
		}
		if out[g] != s || mx[g] != m {
			t.Errorf("group %d: sum %d max %d, want %d %d", g, out[g], mx[g], s, m)
		}
	}
}

func TestCorpusGlobalAtomics(t *testing.T) {
	l := load(t)
	const n = 777
	in := make([]uint32, n)
	for i := range in {
		in[i] = uint32(i*31+5) % 2000
	}
	hist := make([]uint32, 18)
	pin, ph, ps, ps64, pmn := l.put(in), l.put(hist), l.put([]uint32{0}), l.put([]uint64{0}), l.put([]int32{math.MaxInt32})
	l.run(t, "gatomics", [3]uint32{1024, 1, 1}, [3]uint16{128, 1, 1}, args(pin, ph, ps, ps64, pmn, uint32(n)))
	l.get(ph, hist)
	var sum [1]uint32
	var sum64 [1]uint64
	var mn [1]int32
	l.get(ps, sum[:])
	l.get(ps64, sum64[:])
	l.get(pmn, mn[:])
	var wh [16]uint32
	var ws uint32
	var ws64 uint64
	wm := int32(math.MaxInt32)
	for _, v := range in {
		wh[v&15]++
		ws += v
		ws64 += uint64(v) * 3
		wm = min(wm, int32(v)-1000)
	}
	for i := 0; i < 16; i++ {
		if hist[i] != wh[i] {
			t.Errorf("hist[%d] = %d, want %d", i, hist[i], wh[i])
		}
	}
	if hist[16] != 7 || hist[17] == 0 || hist[17] > n {
		t.Errorf("xchg/cmpxchg slots = %d %d", hist[16], hist[17])
	}
	if sum[0] != ws || sum64[0] != ws64 || mn[0] != wm {
		t.Errorf("sum %d sum64 %d min %d, want %d %d %d", sum[0], sum64[0], mn[0], ws, ws64, wm)
	}
}

func TestCorpusMatmul(t *testing.T) {
	l := load(t)
	const M, N, K = 37, 45, 29
	A, B := make([]float32, M*K), make([]float32, K*N)
	for i := range A {
		A[i] = float32(i%13) - 6
	}
	for i := range B {
		B[i] = float32(i%7) * 0.25
	}
	pa, pb, pc := l.put(A), l.put(B), l.put(make([]float32, M*N))
	l.run(t, "matmul", [3]uint32{48, 48, 1}, [3]uint16{16, 16, 1}, args(pa, pb, pc, uint32(M), uint32(N), uint32(K)))
	C := make([]float32, M*N)
	l.get(pc, C)
	for r := 0; r < M; r++ {
		for c := 0; c < N; c++ {
			var acc float32
			for k := 0; k < K; k++ {
				acc = float32(math.FMA(float64(A[r*K+k]), float64(B[k*N+c]), float64(acc)))
			}
			if C[r*N+c] != acc {
				t.Fatalf("C[%d][%d] = %v, want %v", r, c, C[r*N+c], acc)
			}
		}
	}
}

func TestCorpusDivergent(t *testing.T) {
	l := load(t)
	const n = 512
	in := make([]int32, n)
	for i := range in {
		in[i] = int32(i*37%1000) - 100
	}
	pin, pout := l.put(in), l.put(make([]int32, n))
	l.run(t, "divergent", [3]uint32{n, 1, 1}, [3]uint16{64, 1, 1}, args(pin, pout))
	out := make([]int32, n)
	l.get(pout, out)
	for i, v := range in {
		var r int32
		if v&1 != 0 {
			for k := int32(0); k < v&31; k++ {
				r += k * v
			}
		} else if v%3 == 0 {
			x := v
			for x > 1 {
				if x&1 != 0 {
					x = 3*x + 1
				} else {
					x >>= 1
				}
				r++
				if r > 200 {
					break
				}
			}
		} else {
			r = -v
		}
		if out[i] != r {
			t.Errorf("divergent[%d] (v=%d) = %d, want %d", i, v, out[i], r)
		}
	}
}

func TestCorpusPrivateArray(t *testing.T) {
	l := load(t)
	const n = 130
	in := make([]uint32, n)
	for i := range in {
		in[i] = uint32(i * 2654435761)
	}
	pin, pout := l.put(in), l.put(make([]uint32, n))
	l.run(t, "private_array", [3]uint32{n, 1, 1}, [3]uint16{128, 1, 1}, args(pin, pout, uint32(n)))
	out := make([]uint32, n)
	l.get(pout, out)
	for i := range in {
		var arr [200]uint32
		seed := in[i]
		for k := range arr {
			seed = seed*1664525 + 1013904223
			arr[k] = seed
		}
		var acc uint32
		for k := uint32(0); k < 200; k++ {
			acc += arr[(k*37+in[i])%200] ^ k
		}
		if out[i] != acc {
			t.Fatalf("private_array[%d] = %#x, want %#x", i, out[i], acc)
		}
	}
}

func TestCorpusIntops(t *testing.T) {
	l := load(t)
	const n = 256
	a, b := make([]int32, n), make([]int32, n)
	for i := range a {
		a[i] = int32(uint32(i)*2246822519) >> (i % 7)
		b[i] = int32(uint32(i)*3266489917) >> (i % 23)
		if i%17 == 0 {
			b[i] = 0
		}
	}
	pa, pb := l.put(a), l.put(b)
	pq, pbits, pq64 := l.put(make([]int32, 4*n)), l.put(make([]uint32, 4*n)), l.put(make([]int64, n))
	l.run(t, "intops", [3]uint32{n, 1, 1}, [3]uint16{64, 1, 1}, args(pa, pb, pq, pbits, pq64))
	q, bt, q64 := make([]int32, 4*n), make([]uint32, 4*n), make([]int64, n)
	l.get(pq, q)
	l.get(pbits, bt)
	l.get(pq64, q64)
	for i := 0; i < n; i++ {
		x, y := a[i], b[i]
		ux, uy := uint32(x), uint32(y)
		var w [4]int32
		if y != 0 {
			if !(x == math.MinInt32 && y == -1) {
				w[0], w[1] = x/y, x%y
			} else {
				w[0], w[1] = q[4*i], q[4*i+1] // undefined in C
			}
			w[2], w[3] = int32(ux/uy), int32(ux%uy)
		}
		s := uy & 31
		hi, _ := bits.Mul32(ux, uy)
		wb := [4]uint32{uint32(bits.OnesCount32(ux)), uint32(bits.LeadingZeros32(ux)),
			(ux<<s | ux>>((32-s)&31)) ^ (ux >> 7) ^ (ux << 3),
			hi + uint32((x&0xffff)*(y&0xffff)+5) + (ux &^ uy)}
		lx, ly := int64(x)*100003, int64(y|1)
		wq := lx/ly + lx%7
		for k := 0; k < 4; k++ {
			if q[4*i+k] != w[k] || bt[4*i+k] != wb[k] {
				t.Fatalf("intops[%d][%d]: q %d bits %#x, want %d %#x (x=%d y=%d)", i, k, q[4*i+k], bt[4*i+k], w[k], wb[k], x, y)
			}
		}
		if q64[i] != wq {
			t.Fatalf("intops q64[%d] = %d, want %d", i, q64[i], wq)
		}
	}
}

func TestCorpusHalfMath(t *testing.T) {
	l := load(t)
	const n = 200
	a, b := make([]uint16, 2*n), make([]uint16, 2*n)
	fa := make([]float32, 2*n)
	for i := range a {
		a[i] = f64to16(float64(i%50)*0.37 - 4)
		b[i] = f64to16(float64(i%11)*1.5 - 2)
		fa[i] = float32(i)*0.1 - 3
	}
	pa, pb, pc, pfa, pfc := l.put(a), l.put(b), l.put(make([]uint16, 2*n)), l.put(fa), l.put(make([]float32, 2*n))
	l.run(t, "half_math", [3]uint32{n, 1, 1}, [3]uint16{64, 1, 1}, args(pa, pb, pc, pfa, pfc))
	c, fc := make([]uint16, 2*n), make([]float32, 2*n)
	l.get(pc, c)
	l.get(pfc, fc)
	for i := range c {
		x, y := float64(f16to32(a[i])), float64(f16to32(b[i]))
		if w := f64to16(math.FMA(x, y, x)); c[i] != w {
			t.Fatalf("half[%d] = %#x, want %#x", i, c[i], w)
		}
	}
	for i := 0; i < n; i++ {
		f0, f1 := fa[2*i], fa[2*i+1]
		w0 := float32(math.FMA(float64(f0), 2, float64(f1)))
		w1 := float32(math.FMA(float64(f1), 0.5, float64(f0)))
		if fc[2*i] != w0 || fc[2*i+1] != w1 {
			t.Fatalf("float2[%d] = %v %v, want %v %v", i, fc[2*i], fc[2*i+1], w0, w1)
		}
	}
}

// TestCorpusFmath: divisions (f32 and f64, through v_div_scale/fmas/fixup), transcendentals and
// scaling. Divisions and square roots are correctly rounded in both languages for f64; f32 results
// and the transcendentals (1 ULP on hardware) are compared within a relative tolerance.
func TestCorpusFmath(t *testing.T) {
	l := load(t)
	const n = 256
	a, b := make([]float32, n), make([]float32, n)
	da, db := make([]float64, n), make([]float64, n)
	for i := range a {
		a[i] = float32(i) - 100.5
		b[i] = float32(i%37) + 0.75
		da[i] = math.Sqrt(float64(i)) - 7
		db[i] = float64(i%29) + 1.25
	}
	pa, pb, po := l.put(a), l.put(b), l.put(make([]float32, 8*n))
	pda, pdb, pdo := l.put(da), l.put(db), l.put(make([]float64, 4*n))
	l.run(t, "fmath", [3]uint32{n, 1, 1}, [3]uint16{64, 1, 1}, args(pa, pb, po, pda, pdb, pdo))
	out, dout := make([]float32, 8*n), make([]float64, 4*n)
	l.get(po, out)
	l.get(pdo, dout)
	near := func(got, want float64, rel float64) bool {
		return got == want || math.Abs(got-want) <= rel*math.Abs(want) || math.Abs(got-want) < 1e-30
	}
	for i := range n {
		x, y := float64(a[i]), float64(b[i])
		rev := float64(a[i] * float32(0.01)) // the kernel's f32 product
		f32want := []float64{x / y, math.Exp2(x * 0.125), math.Log2(y), math.Sin(2 * math.Pi * rev),
			math.Cos(2 * math.Pi * rev), math.Sqrt(y), math.Ldexp(x, int(int32(y))), 0}
		f32want[7], _ = math.Frexp(y)
		for k, w := range f32want {
			if !near(float64(out[8*i+k]), w, 2e-7) {
				t.Errorf("fmath f32 result %d of element %d: %v, want %v", k, i, out[8*i+k], w)
			}
		}
		_, e := math.Frexp(db[i])
		f64want := []float64{da[i] / db[i], math.Sqrt(db[i]), 1 / db[i], math.Ldexp(da[i], e)}
		for k, w := range f64want {
			if !near(dout[4*i+k], w, 1e-15) {
				t.Errorf("fmath f64 result %d of element %d: %v, want %v", k, i, dout[4*i+k], w)
			}
		}
	}
}

// TestCorpusDPP: every DPP control the GFX9 encoding has, on one wave, with update_dpp's old
// value (-1) where a lane is not written (disabled row or bank, or an out-of-bounds source without
// bound_ctrl) and 0 where bound_ctrl zeroes it.
func TestCorpusDPP(t *testing.T) {
	l := load(t)
	in := make([]int32, 64)
	for i := range in {
		in[i] = int32(1000 + 7*i)
	}
	pin, pout := l.put(in), l.put(make([]int32, 640))
	l.run(t, "dpp", [3]uint32{64, 1, 1}, [3]uint16{64, 1, 1}, args(pin, pout))
	out := make([]int32, 640)
	l.get(pout, out)
	for i := 0; i < 64; i++ {
		row, r := i&^15, i&15
		v := func(j int) int32 { return in[j] }
		want := [10]int32{v(i ^ 3), -1, 0, v(row + (r-3)&15), v(row + 15 - r), v(i&^7 + 7 - i&7), -1, -1, -1, -1}
		if r > 0 {
			want[1] = v(i - 1) // row_shr:1
		}
		if r < 15 {
			want[2] = v(i + 1) // row_shl:1, bound_ctrl
		}
		if row == 16 || row == 48 {
			want[6] = v(row - 1) // row_bcast:15, row_mask 0xa
		}
		if row >= 32 {
			want[7] = v(31) // row_bcast:31, row_mask 0xc
		}
		if i > 0 {
			want[8] = v(i - 1) // wave_shr:1
		}
		if bank := i >> 2 & 3; bank == 0 || bank == 2 {
			want[9] = v((i + 1) % 64) // wave_rol:1, bank_mask 0x5
		}
		for k := range want {
			if out[10*i+k] != want[k] {
				t.Errorf("lane %d, control %d: %d, want %d", i, k, out[10*i+k], want[k])
			}
		}
	}
}

// TestCorpusSubdword: 8- and 16-bit arithmetic the compiler does with SDWA selects (bytes, words,
// sign extension) and destination selects.
func TestCorpusSubdword(t *testing.T) {
	l := load(t)
	const n = 64
	a, b := make([]uint32, n), make([]uint32, n)
	for i := range a {
		a[i] = uint32(i)*0x9E3779B9 + 0x01020304
		b[i] = uint32(i)*0x85EBCA6B + 0xF0E0D0C0
	}
	pa, pb, po := l.put(a), l.put(b), l.put(make([]uint32, 3*n))
	l.run(t, "subdword", [3]uint32{n, 1, 1}, [3]uint16{64, 1, 1}, args(pa, pb, po))
	out := make([]uint32, 3*n)
	l.get(po, out)
	for i := range n {
		x0, x1 := uint16(a[i]), uint16(a[i]>>16)
		y0, y1 := uint16(b[i]), uint16(b[i]>>16)
		p := [4]uint8{uint8(a[i]), uint8(a[i] >> 8), uint8(a[i] >> 16), uint8(a[i] >> 24)}
		q := [4]uint8{uint8(b[i]), uint8(b[i] >> 8), uint8(b[i] >> 16), uint8(b[i] >> 24)}
		want := [3]uint32{
			uint32(x1+y0) | uint32(x0*y1)<<16,
			uint32(p[3]+q[0]) | uint32(p[2]^q[1])<<8 | uint32(p[1]-q[2])<<16 | uint32(p[0]|q[3])<<24,
			uint32(int32(int16(x1))) * uint32(int32(int8(q[2]))),
		}
		for k := range want {
			if out[3*i+k] != want[k] {
				t.Errorf("element %d result %d: %#x, want %#x", i, k, out[3*i+k], want[k])
			}
		}
	}
}
