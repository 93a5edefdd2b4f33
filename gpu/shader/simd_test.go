package shader

import (
	"math/rand/v2"
	"testing"
)

// simdOperand is a random f32/u32 lane value weighted toward the cases the SIMD kernels could get
// wrong: subnormals, values near overflow, zeros of both signs, infinities, NaNs, ties and carries.
func simdOperand(rnd *rand.Rand) uint32 {
	switch rnd.IntN(8) {
	case 0:
		return rnd.Uint32() & 0x807fffff // subnormal or zero
	case 1:
		return []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001,
			0xffffffff, 0xfffffffe, 1, 0x7f7fffff, 0xff7fffff, 0x00800000, 0x3f800000}[rnd.IntN(14)]
	case 2: // exponents near f32's subnormal boundary (products and sums that round into it)
		return rnd.Uint32()&0x80ffffff | uint32(rnd.IntN(24)+50)<<23
	case 3: // few significant bits: exact products whose sum is a tie
		return rnd.Uint32()&0xfff00000 | 1<<19
	}
	return rnd.Uint32()
}

// TestSIMDKernels: the AVX2 kernels (simd_amd64.s) give the Go loops' results bit for bit, NaN
// lanes included (fmaAVX2 declines a row with a NaN result and the Go loop runs), for random and
// edge operands, with the destination one of the sources.
func TestSIMDKernels(t *testing.T) {
	if !simd {
		t.Skip("no AVX2/FMA3 on this host (or a purego build): the Go loops are the only path")
	}
	defer func() { simd = true }()
	rnd := rand.New(rand.NewPCG(3, 4))
	declined := 0
	for round := range 20000 {
		var a, b, c [lanes]uint32
		for l := range a {
			a[l], b[l], c[l] = simdOperand(rnd), simdOperand(rnd), simdOperand(rnd)
			if round%4 != 0 { // most rows without infinities or NaNs, so that fmaAVX2 stores them
				for _, v := range []*uint32{&a[l], &b[l], &c[l]} {
					if *v&0x7f800000 == 0x7f800000 {
						*v = 0x3f800000
					}
				}
			}
		}
		alias := rnd.IntN(4) // 0: none; 1..3: the destination is a, b or c
		src := [3][lanes]uint32{a, b, c}
		var dGo, dSIMD [lanes]uint32
		fmaKernGo(&dGo, &a, &b, &c)
		d := &dSIMD
		x := src
		if alias > 0 {
			d = &x[alias-1]
		}
		if !fmaAVX2(d, &x[0], &x[1], &x[2]) {
			declined++
			if x != src {
				t.Fatalf("round %d: fmaAVX2 declined the row but changed a source", round)
			}
			continue
		}
		if *d != dGo {
			for l := range dGo {
				if d[l] != dGo[l] {
					t.Fatalf("round %d lane %d: fma(%#x, %#x, %#x) = %#x (Go), %#x (AVX2)", round, l, a[l], b[l], c[l], dGo[l], d[l])
				}
			}
		}

		for i, k := range []func(d, a, b *[lanes]uint32) bool{addF32AVX2, subF32AVX2, mulF32AVX2} {
			var got [lanes]uint32
			if !k(&got, &a, &b) {
				continue
			}
			for l := range got {
				want := [3]uint32{u32(f32(a[l]) + f32(b[l])), u32(f32(a[l]) - f32(b[l])), u32(f32(a[l]) * f32(b[l]))}[i]
				if got[l] != want {
					t.Fatalf("round %d: f32 op %d lane %d of %#x and %#x: %#x (Go), %#x (AVX2)", round, i, l, a[l], b[l], want, got[l])
				}
			}
		}

		// 64-bit compares and shifts of the pairs (a, b), against a key near some lane's.
		y := uint64(a[rnd.IntN(lanes)]) | uint64(b[rnd.IntN(lanes)])<<32
		y += uint64(rnd.IntN(3)) - 1
		for _, signed := range []bool{false, true} {
			for _, above := range []bool{false, true} {
				simd = false
				want := cmpPairOne(&a, &b, y, signed, above)
				simd = true
				if got := cmpPairOne(&a, &b, y, signed, above); got != want {
					t.Fatalf("round %d: cmpPairOne(y %#x, signed %v, above %v) = %#x (Go), %#x (AVX2)", round, y, signed, above, want, got)
				}
			}
		}
		s := uint32(rnd.IntN(64))
		for i, k := range []func(dlo, dhi, lo, hi *[lanes]uint32, s uint32){shl64AVX2, shr64AVX2, sar64AVX2} {
			var glo, ghi [lanes]uint32
			k(&glo, &ghi, &a, &b, s)
			for l := range glo {
				v := uint64(a[l]) | uint64(b[l])<<32
				want := [3]uint64{v << s, v >> s, uint64(int64(v) >> s)}[i]
				if got := uint64(glo[l]) | uint64(ghi[l])<<32; got != want {
					t.Fatalf("round %d: shift %d of %#x by %d: %#x, want %#x", round, i, v, s, got, want)
				}
			}
			lo, hi := a, b // in place
			k(&lo, &hi, &lo, &hi, s)
			if lo != glo || hi != ghi {
				t.Fatalf("round %d: shift %d in place differs", round, i)
			}
		}

		// v_mad_u64_u32/v_mad_i64_i32: the addend pair (c, a) (in place: into a and b).
		for _, signed := range []bool{false, true} {
			var wl, wh, gl, gh [lanes]uint32
			simd = false
			wco := mad64Rows(&wl, &wh, &a, &b, &c, &a, signed)
			simd = true
			gco := mad64Rows(&gl, &gh, &a, &b, &c, &a, signed)
			if gl != wl || gh != wh || gco != wco {
				t.Fatalf("round %d: mad64Rows signed %v: carry-outs %#x (Go), %#x (AVX2); results equal: %v", round, signed, wco, gco, gl == wl && gh == wh)
			}
			pa, pb := a, b
			if gco = mad64Rows(&pa, &pb, &pa, &pb, &c, &pa, signed); pa != wl || pb != wh || gco != wco {
				t.Fatalf("round %d: mad64Rows signed %v in place differs", round, signed)
			}
		}

		// globalBatch's contiguity test: a sequence, then one lane (or the high dword) off.
		x0, sz := a[0], []uint32{4, 8, 12, 16, 0, rnd.Uint32()}[rnd.IntN(6)]
		var sl, sh [lanes]uint32
		for l := range sl {
			sl[l], sh[l] = x0+uint32(l)*sz, b[0]
		}
		if !seqLoAVX2(&sl, x0, sz) || !seqLoHiAVX2(&sl, &sh, x0, sz, b[0]) {
			t.Fatalf("round %d: the sequence %#x + l*%d is not seen as one", round, x0, sz)
		}
		l := rnd.IntN(lanes)
		if sh[l]++; seqLoHiAVX2(&sl, &sh, x0, sz, b[0]) || !seqLoAVX2(&sl, x0, sz) {
			t.Fatalf("round %d: high dword of lane %d off: not seen", round, l)
		}
		if sl[l] ^= 1 << rnd.IntN(32); seqLoAVX2(&sl, x0, sz) {
			t.Fatalf("round %d: low dword of lane %d off: not seen", round, l)
		}
		var f [lanes]uint32
		fillAVX2(&f, c[0])
		for l := range f {
			if f[l] != c[0] {
				t.Fatalf("round %d: fillAVX2 lane %d %#x, want %#x", round, l, f[l], c[0])
			}
		}

		// cmpDense's 32-bit integer compares: rows, a row and a constant either side, every
		// predicate mask, signed and unsigned, under a random EXEC; half the lanes of b equal a's.
		cw := &wave{}
		eb := b
		for l := range eb {
			if rnd.IntN(2) == 0 {
				eb[l] = a[l]
			}
		}
		k32 := uint64(a[rnd.IntN(lanes)])
		for _, signed := range []bool{false, true} {
			for mask := uint8(0); mask < 8; mask++ {
				for form := range 3 {
					la, lb := lane64{lo: &a}, lane64{lo: &eb}
					if form == 1 {
						lb = lane64{c: k32}
					} else if form == 2 {
						la = lane64{c: k32}
					}
					m := rnd.Uint64()
					simd = false
					want := cmpDense(cw, la, lb, m, mask, false, 1<<32-1, 1<<31, signed)
					simd = true
					if got := cmpDense(cw, la, lb, m, mask, false, 1<<32-1, 1<<31, signed); got != want {
						t.Fatalf("round %d: 32-bit compare form %d mask %d signed %v: %#x (Go), %#x (AVX2)", round, form, mask, signed, want, got)
					}
				}
			}
		}

		ci, xr := rnd.Uint64(), []uint32{0, ^uint32(0), rnd.Uint32()}[rnd.IntN(3)]
		k := simdOperand(rnd)
		for form := range 3 {
			var la, lb lane32
			switch form {
			case 0:
				la, lb = lane32{r: &a}, lane32{r: &b}
			case 1:
				la, lb = lane32{r: &a}, lane32{c: k}
			case 2:
				la, lb = lane32{c: k}, lane32{r: &b}
			}
			for _, cin := range []uint64{ci, 0} {
				var want, got [lanes]uint32
				wco := carryKernGo(&want, la, lb, cin, xr)
				var gco uint64
				switch form {
				case 0:
					gco = carryRowsAVX2(&got, &b, &a, xr, cin)
				case 1:
					gco = carryConstAVX2(&got, &a, 0, k^xr, cin)
				case 2:
					gco = carryConstAVX2(&got, &b, xr, k, cin)
				}
				if got != want || gco != wco {
					t.Fatalf("round %d form %d carry-in %#x x %#x: carry-outs %#x (Go), %#x (AVX2); sums equal: %v", round, form, cin, xr, wco, gco, got == want)
				}
				// In place: the destination is the register source.
				in := a
				if form == 2 {
					in = b
				}
				if form == 0 {
					gco = carryRowsAVX2(&in, &b, &in, xr, cin)
				} else if form == 1 {
					gco = carryConstAVX2(&in, &in, 0, k^xr, cin)
				} else {
					gco = carryConstAVX2(&in, &in, xr, k, cin)
				}
				if in != want || gco != wco {
					t.Fatalf("round %d form %d: in place differs", round, form)
				}
			}
		}
	}
	if declined == 0 || declined > 20000/2 {
		t.Fatalf("fmaAVX2 declined %d of 20000 rows: the test's NaN mix is off", declined)
	}
}
