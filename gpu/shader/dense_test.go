package shader

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestDenseMatchesLaneByLane: the dense lane loops (many active lanes: whole rows, full-EXEC fast
// paths, eight-lane carry rounds) give what the same instruction gives run one lane at a time
// (each single-lane run takes the sparse per-lane path): every VGPR lane, the SGPR results (carry-out,
// compare masks; inactive lanes' bits 0) and nothing else, for full, dense partial and sparse EXEC
// masks, register, SGPR, inline and literal operands, and destinations that are also sources.
func TestDenseMatchesLaneByLane(t *testing.T) {
	src := []string{
		"v_add_co_u32 v10, vcc, v1, v2",
		"v_add_co_u32 v10, vcc, s2, v2",
		"v_add_co_u32 v1, vcc, v1, v1",
		"v_add_co_u32_e64 v10, s[4:5], v1, 5",
		"v_add_co_u32_e64 v10, s[4:5], v1, s3",
		"v_add_co_u32_e64 v10, s[4:5], -1, s3",
		"v_sub_co_u32 v10, vcc, v1, v2",
		"v_sub_co_u32 v2, vcc, s2, v2",
		"v_sub_co_u32_e64 v10, s[4:5], v1, s3",
		"v_sub_co_u32_e64 v10, s[4:5], 64, v3",
		"v_subrev_co_u32 v10, vcc, v1, v2",
		"v_subrev_co_u32 v10, vcc, s2, v2",
		"v_subrev_co_u32_e64 v10, s[4:5], v1, 7",
		"v_addc_co_u32 v10, vcc, v1, v2, vcc",
		"v_addc_co_u32 v3, vcc, v3, v1, vcc",
		"v_addc_co_u32 v10, vcc, 5, v2, vcc",
		"v_addc_co_u32_e64 v10, s[4:5], v1, 7, s[6:7]",
		"v_addc_co_u32_e64 v10, s[4:5], v1, -1, s[6:7]",
		"v_addc_co_u32_e64 v10, s[4:5], 0, 0, s[6:7]",
		"v_subb_co_u32 v10, vcc, v1, v2, vcc",
		"v_subb_co_u32 v10, vcc, -3, v2, vcc",
		"v_subb_co_u32_e64 v10, s[4:5], v1, 1, s[6:7]",
		"v_subbrev_co_u32 v10, vcc, v1, v2, vcc",
		"v_subbrev_co_u32 v10, vcc, 9, v2, vcc",
		"v_subbrev_co_u32_e64 v10, s[4:5], v1, 0, s[6:7]",
		"v_mad_u64_u32 v[10:11], s[4:5], v1, v2, v[4:5]",
		"v_mad_u64_u32 v[0:1], s[4:5], s2, v2, v[0:1]",
		"v_mad_u64_u32 v[10:11], s[4:5], v1, 3, s[6:7]",
		"v_mad_i64_i32 v[10:11], s[4:5], v1, v2, v[4:5]",
		"v_mad_i64_i32 v[2:3], s[4:5], v2, v3, v[2:3]",
		"v_cmp_gt_u64 vcc, s[0:1], v[0:1]",
		"v_cmp_lt_u64_e64 s[8:9], v[2:3], v[4:5]",
		"v_cmp_eq_u64 vcc, v[2:3], v[2:3]",
		"v_cmp_ne_u64 vcc, 5, v[4:5]",
		"v_cmp_ge_i64 vcc, v[2:3], v[4:5]",
		"v_cmp_le_i64_e64 s[8:9], s[0:1], v[4:5]",
		"v_cmp_ge_u64_e64 s[8:9], v[4:5], 7",
		"v_cmp_lt_i64_e64 s[8:9], v[2:3], s[2:3]",
		"v_cmp_gt_u32 vcc, s8, v4",
		"v_cmp_gt_u32_e64 s[2:3], s10, v6",
		"v_cmp_lt_i32 vcc, v1, v2",
		"v_cmp_eq_u32 vcc, 3, v5",
		"v_cmp_lt_f32 vcc, v1, v2",
		"v_cmp_lt_i16 vcc, v1, v2",
		"v_cmp_ge_u16_e64 s[8:9], v1, -2",
		"v_cmp_ne_i32_e64 s[8:9], s3, v1",
		"v_cmpx_lt_u32 vcc, v1, v2",
		"v_cmpx_le_i64 vcc, v[2:3], v[4:5]",
		"v_cmp_t_u32 vcc, v1, v2",
		"v_cmp_f_i64 vcc, v[2:3], v[4:5]",
		"v_cmp_neq_f64 vcc, v[2:3], v[4:5]",
		"v_lshlrev_b64 v[10:11], 2, v[0:1]",
		"v_lshlrev_b64 v[0:1], v3, v[0:1]",
		"v_lshrrev_b64 v[10:11], v2, v[4:5]",
		"v_ashrrev_i64 v[10:11], 33, v[4:5]",
		"v_add_f64 v[10:11], v[2:3], v[4:5]",
		"v_mul_f64 v[4:5], v[4:5], v[6:7]",
		"v_mov_b32 v10, s3",
		"v_mov_b32 v10, v1",
		"v_mov_b32 v10, 0x3f800000",
		"v_sub_co_u32 v10, vcc, 0x12345, v3",
		"v_subb_co_u32_e64 v10, s[4:5], v1, v2, s[6:7]",
		"v_addc_co_u32 v10, vcc, v2, v2, vcc",
		"v_add_u32 v10, s2, v6",
		"v_add_u32 v6, 16, v6",
		"v_add_f32 v2, v6, v7",
		"v_fmac_f32 v8, v14, v22",
		"v_lshlrev_b32 v0, 2, v6",
		"v_add3_u32 v0, v6, v0, s2",
		"v_sub_u32 v10, v1, v2",
		"v_lshlrev_b32 v10, v1, v2",
		"v_sub_f32 v10, v1, v2",
		"v_mul_f32 v1, v1, v2",
		"v_lshl_add_u32 v10, v1, v2, v3",
		"v_fma_f32 v10, v1, v2, v3",
		"v_cvt_u32_f32 v10, v1",
		"v_cndmask_b32 v10, v1, v2, vcc",
		"v_cndmask_b32_e64 v10, v1, 2, s[6:7]",
		// one active lane (v32one) and one constant source under a full EXEC (fill32): f32 with
		// SGPR, inline and literal operands, transcendental, conversions, VOP3 three-source forms
		"v_add_f32 v0, 2.0, v0",
		"v_add_f32 v10, s8, v17",
		"v_mul_f32 v10, 0x3fb8aa3b, v18",
		"v_cvt_f32_i32 v17, s1",
		"v_cvt_f32_u32 v10, 7",
		"v_log_f32 v10, v1",
		"v_exp_f32 v10, v2",
		"v_sqrt_f32 v10, v3",
		"v_rsq_f32 v10, v3",
		"v_fma_f32 v10, s2, v2, 1.0",
		"v_fma_f32 v10, v1, -4.0, s3",
		"v_mad_u32_u24 v10, v1, s2, v3",
		"v_add3_u32 v10, s2, 5, v1",
		"v_mov_b32 v10, -7",
		"v_mov_b32 v10, vcc_lo",
		"v_not_b32 v10, s3",
		"v_lshlrev_b32 v10, 4, s3",
		"v_add_f32_e64 v10, |v1|, -v2",
		"v_mul_f32_e64 v10, v1, v2 clamp",
		"v_add_u32 v10, 0x1234, v2",
		// 64-bit shifts by a constant on register pairs under a full EXEC (shiftRows)
		"v_lshrrev_b64 v[4:5], 7, v[4:5]",
		"v_ashrrev_i64 v[10:11], s3, v[4:5]",
		"v_lshlrev_b64 v[2:3], 40, v[2:3]",
		"v_ashrrev_i64 v[4:5], 63, v[4:5]",
	}
	code := asm(t, joinLines(src))
	rnd := rand.New(rand.NewPCG(5, 6))
	specials := []uint32{0, 1, 0xffffffff, 0x80000000, 0x7fffffff, 2, 0xfffffffe, 0x807fffff, 0x00400000}
	pick := func() uint32 {
		if rnd.IntN(3) == 0 {
			return specials[rnd.IntN(len(specials))]
		}
		return rnd.Uint32()
	}
	var base wave
	base.v = make([][lanes]uint32, 32)
	for r := range base.v {
		for l := range base.v[r] {
			base.v[r][l] = pick()
		}
	}
	for i := 0; i < 16; i++ {
		base.s[i] = pick()
	}
	base.s[opVCCLo], base.s[opVCCHi] = rnd.Uint32(), rnd.Uint32()
	mode := uint32(0)
	clone := func(exec uint64) *wave {
		w := &wave{s: base.s, mode: mode}
		w.v = make([][lanes]uint32, len(base.v))
		copy(w.v, base.v)
		w.setExec(exec)
		return w
	}
	masks := []uint64{^uint64(0), 0xfffffffffffffff0, 0x0000ffff0000ffff, 0x8000000000000005, 1 << 63, 1 << 17, 1, 1 << 40}
	// FP_DENORM: f32/f64 denormals kept (0xf0), and f32 inputs and results flushed in each combination
	insts := decodeAll(t, code)
	fast := 0
	defer func() {
		if !t.Failed() && fast < 4*4*25 { // 25 one-lane operations with a spec, 4 masks, 4 modes
			t.Errorf("turn's one-lane path compared %d times", fast)
		}
	}()
	for _, mode = range []uint32{0xf0, 0xe0, 0xd0, 0xc0} {
		for _, in := range insts {
			text := in.String()
			for _, m := range masks {
				dense := clone(m)
				if err := in.exec(dense, &in); err != nil {
					t.Fatalf("%s mode %#x exec %#x: %v", text, mode, m, err)
				}
				// turn's form of a v32k routine's one-lane case (Inst.v32, the spec bind found)
				if s := in.v32; s != nil {
					w := clone(m)
					if v32own(w, &in, s) {
						fast++
					} else if err := v32lanes(w, &in, s.t, s.n, s.f, s.k); err != nil {
						t.Fatalf("%s mode %#x exec %#x: %v", text, mode, m, err)
					}
					if !slices.Equal(w.v, dense.v) || w.s != dense.s {
						t.Fatalf("%s mode %#x exec %#x: turn's run of the routine (v32own, v32lanes) differs from the routine", text, mode, m)
					}
				}
				want := clone(m)
				// SGPR pairs a single-lane run wrote (a result mask: only its lane's bit can be set;
				// the random base differs from any such mask), and the bits the lanes set.
				written := map[int]uint64{}
				// EXEC: a cmpx writes each lane's result bit; lanes that leave it set look unchanged.
				var execBits uint64
				execWritten := false
				for mm := m; mm != 0; mm &= mm - 1 {
					l := trailingZeros(mm)
					one := clone(1 << l)
					oneLanePath = false // the reference: v32sparse, not its one-lane form
					err := in.exec(one, &in)
					oneLanePath = true
					if err != nil {
						t.Fatalf("%s lane %d: %v", text, l, err)
					}
					for r := range one.v {
						want.v[r][l] = one.v[r][l]
					}
					for p := 0; p < opExecLo; p += 2 {
						if v := one.sget64(uint16(p)); v != base.sget64(uint16(p)) {
							written[p] |= v & (1 << l)
						}
					}
					if e := one.exec(); e != 1<<l {
						execWritten = true
					}
					execBits |= one.exec() & (1 << l)
				}
				if execWritten {
					want.setExec(execBits)
				}
				if got, exp := dense.exec(), want.exec(); got != exp {
					t.Fatalf("%s mode %#x exec %#x: EXEC %#x, lane by lane %#x", text, mode, m, got, exp)
				}
				for p, v := range written {
					want.sset64(uint16(p), v)
				}
				for r := range want.v {
					if dense.v[r] != want.v[r] {
						for l := range want.v[r] {
							if dense.v[r][l] != want.v[r][l] {
								t.Fatalf("%s mode %#x exec %#x: v%d lane %d = %#x, lane by lane %#x", text, mode, m, r, l, dense.v[r][l], want.v[r][l])
							}
						}
					}
				}
				for p := 0; p < opExecLo; p += 2 {
					if got, exp := dense.sget64(uint16(p)), want.sget64(uint16(p)); got != exp {
						t.Fatalf("%s mode %#x exec %#x: s[%d:%d] = %#x, lane by lane %#x", text, mode, m, p, p+1, got, exp)
					}
				}
			}
		}
	}
}

func joinLines(s []string) string {
	out := ""
	for _, l := range s {
		out += "\t" + l + "\n"
	}
	return out
}

func trailingZeros(m uint64) int {
	n := 0
	for m&1 == 0 {
		m >>= 1
		n++
	}
	return n
}

// TestFma32FastPath: fma32's float64-FMA path gives what the round-to-odd path gives, for random
// operands, special values, and sums whose float64 rounding lands on an f32 tie (4097*4097 is
// halfway between two f32 values; adding 2^-40 must round up, 4097*4097-2^-40 down: rounding the
// float64 FMA to f32 directly would give the even neighbour in both).
func TestFma32FastPath(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	specials := []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 1, 0x807fffff,
		0x00800000, 0x3f800000, 0xbf800000, 0x7f7fffff, 0xff7fffff, 0x33800000, 0x45800800, 0x2b800000, 0xab800000}
	var ka, kb, kc, kd [lanes]uint32
	kn := 0
	kernRow := func() {
		fmaKern(&kd, &ka, &kb, &kc)
		for l := 0; l < kn; l++ {
			if want := fma32Odd(ka[l], kb[l], kc[l]); kd[l] != want {
				t.Fatalf("fmaKern lane %d: (%#x, %#x, %#x) = %#x, round-to-odd path %#x", l, ka[l], kb[l], kc[l], kd[l], want)
			}
		}
		kn = 0
	}
	check := func(a, b, c uint32) {
		// The fast path's float64 a*b+c is math.FMA's (the f32 product is exact), NaN aside.
		x, y, z := float64(f32(a)), float64(f32(b)), float64(f32(c))
		if p, q := x*y+z, math.FMA(x, y, z); p == p && math.Float64bits(p) != math.Float64bits(q) {
			t.Fatalf("%#x*%#x+%#x: float64 %v, math.FMA %v", a, b, c, p, q)
		}
		if got, want := fma32(a, b, c), fma32Odd(a, b, c); got != want {
			t.Fatalf("fma32(%#x, %#x, %#x) = %#x, round-to-odd path %#x", a, b, c, got, want)
		}
		// The lane loop (fmaKern, its own copy of the fast path's test) on the same operands.
		ka[kn], kb[kn], kc[kn] = a, b, c
		if kn++; kn == lanes {
			kernRow()
		}
	}
	// 0x45800800 = 4097, 0x2b800000 = 2^-40
	if got := fma32(0x45800800, 0x45800800, 0x2b800000); got != 0x4b801001 {
		t.Fatalf("4097*4097 + 2^-40 = %#x, want 0x4b801001 (16785410)", got)
	}
	if got := fma32(0x45800800, 0x45800800, 0xab800000); got != 0x4b801000 {
		t.Fatalf("4097*4097 - 2^-40 = %#x, want 0x4b801000 (16785408)", got)
	}
	for _, a := range specials {
		for _, b := range specials {
			for _, c := range specials {
				check(a, b, c)
			}
		}
	}
	for i := 0; i < 200000; i++ {
		a, b, c := rnd.Uint32(), rnd.Uint32(), rnd.Uint32()
		switch i % 4 {
		case 1: // products and addends of close magnitude: cancellation, subnormal results
			c = (a*b)&0x807fffff | (a>>23&0xff+b>>23&0xff-127)&0xff<<23
		case 2: // small integers: exact products at f32 ties
			a, b, c = u32(float32(rnd.IntN(1<<13))), u32(float32(rnd.IntN(1<<13))), u32(float32(rnd.IntN(64))*0x1p-30)
		case 3:
			c = specials[rnd.IntN(len(specials))]
		}
		check(a, b, c)
	}
	kernRow()
}

// TestGlobalBatchLowDwordWrap: under a full EXEC, 64-bit lane addresses whose low dwords wrap past
// 2^32 while the high dwords stay equal are not contiguous (lanes 32-63 lie 4 GiB below lanes
// 0-31), even though the low dwords step by 4 and, with offset:-128, lane 0's element and 64 dwords
// after it fit in one page: each half goes to its own page, as the per-lane path puts it.
func TestGlobalBatchLowDwordWrap(t *testing.T) {
	code := asm(t, `
	v_lshlrev_b32 v2, 2, v0
	v_add_u32 v2, 0xffffff80, v2
	v_mov_b32 v3, 1
	v_add_u32 v4, 1000, v0
	global_store_dword v[2:3], v4, off offset:-128
	s_endpgm
`)
	m, _, err := runAsm(t, code, 64, 0, func(m *flatMem, p *DispatchParams) {
		m.mapRange(0x1_ffff_f000, 0x1000) // lanes 0-31: 1<<32 + 0xffffff00 + 4*l
		m.mapRange(0x0_ffff_f000, 0x1000) // lanes 32-63: 1<<32 + 4*(l-32) - 128
	})
	if err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	for l := 0; l < 64; l++ {
		a := uint64(0x1_ffff_ff00) + 4*uint64(l)
		if l >= 32 {
			a = 1<<32 + 4*uint64(l-32) - 128
		}
		m.Read(a, b[:])
		if got := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24; got != uint32(1000+l) {
			t.Fatalf("lane %d at %#x: %d, want %d", l, a, got, 1000+l)
		}
	}
}

// TestDSFullExecMatchesLaneByLane: the LDS read2 loops under a full EXEC (every lane in order, no
// mask walk) give what each lane gives alone (the mask-walking loops), for in-range, unaligned,
// wrapping and out-of-range addresses and a destination that is also the address register.
func TestDSFullExecMatchesLaneByLane(t *testing.T) {
	code := asm(t, `
	ds_read2_b32 v[22:23], v13 offset1:16
	ds_read2_b32 v[12:13], v13 offset0:5 offset1:255
	ds_read2_b64 v[14:17], v10 offset1:1
	ds_read2_b64 v[10:13], v10 offset0:3 offset1:200
	ds_read2st64_b64 v[14:17], v10 offset1:1
	ds_read2st64_b32 v[22:23], v13 offset0:2 offset1:3
`)
	rnd := rand.New(rand.NewPCG(9, 10))
	lds := make([]byte, 4096)
	for i := range lds {
		lds[i] = byte(rnd.Uint32())
	}
	base := make([][lanes]uint32, 32)
	for r := range base {
		for l := range base[r] {
			switch rnd.IntN(4) {
			case 0:
				base[r][l] = rnd.Uint32() // mostly out of range, some wrapping into it
			case 1:
				base[r][l] = uint32(rnd.IntN(5000)) // unaligned, some out of range
			default:
				base[r][l] = uint32(rnd.IntN(1024)) * 4
			}
		}
	}
	clone := func(exec uint64) *wave {
		w := &wave{v: make([][lanes]uint32, len(base)), g: &group{lds: lds}}
		copy(w.v, base)
		w.setExec(exec)
		return w
	}
	for _, in := range decodeAll(t, code) {
		full := clone(^uint64(0))
		if err := in.exec(full, &in); err != nil {
			t.Fatalf("%s: %v", in.String(), err)
		}
		for l := 0; l < lanes; l++ {
			one := clone(1 << l)
			if err := in.exec(one, &in); err != nil {
				t.Fatalf("%s lane %d: %v", in.String(), l, err)
			}
			for r := range one.v {
				if full.v[r][l] != one.v[r][l] {
					t.Fatalf("%s: v%d lane %d = %#x, lane alone %#x", in.String(), r, l, full.v[r][l], one.v[r][l])
				}
			}
		}
	}
}

// TestDSWordsFullMatchesLaneByLane: dsWordsFull (full EXEC, every address aligned and inside LDS)
// against the same instruction run one lane at a time in lane order on one wave (the mask-walking
// loops), LDS and registers compared after each instruction; also with one lane unaligned and one
// out of range (dsWordsFull must decline those), with addresses repeated across lanes (the last
// lane's store wins) and with a destination that is the address register.
func TestDSWordsFullMatchesLaneByLane(t *testing.T) {
	code := asm(t, `
	ds_read_b32 v20, v1 offset:8
	ds_read2_b32 v[22:23], v2 offset0:1 offset1:7
	ds_read2st64_b32 v[22:23], v2 offset0:1 offset1:2
	ds_read_b64 v[24:25], v1 offset:16
	ds_read2_b64 v[26:29], v2 offset0:1 offset1:5
	ds_read2st64_b64 v[26:29], v1 offset1:1
	ds_write_b32 v1, v5 offset:12
	ds_write2_b32 v2, v5, v6 offset0:3 offset1:9
	ds_write2st64_b32 v1, v6, v5 offset1:1
	ds_write_b32 v2, v1
	ds_read2_b32 v[2:3], v2 offset1:3
	ds_read_b32 v2, v2
`)
	rnd := rand.New(rand.NewPCG(11, 12))
	for _, mode := range []string{"in range", "one unaligned", "one out of range", "repeated", "tile rows", "tile rows broken"} {
		lds := make([]byte, 4096)
		for i := range lds {
			lds[i] = byte(rnd.Uint32())
		}
		base := make([][lanes]uint32, 32)
		for r := range base {
			for l := range base[r] {
				base[r][l] = rnd.Uint32()
			}
		}
		for l := 0; l < lanes; l++ {
			base[1][l], base[2][l] = uint32(rnd.IntN(480))*4, uint32(rnd.IntN(480))*4
			if mode == "repeated" {
				base[1][l], base[2][l] = uint32(l%5)*4, 64
			}
			if strings.HasPrefix(mode, "tile rows") {
				// Quarter-waves as a tiled kernel reads LDS: a run of consecutive dwords (lane i
				// at a0+4i) or one address for all 16 (a row broadcast).
				g, i := l/16, uint32(l%16)
				if g%2 == 0 {
					base[1][l], base[2][l] = 256*uint32(g)+4*i, 1024+64*uint32(g)
				} else {
					base[1][l], base[2][l] = 256*uint32(g), 1024+64*uint32(g)+4*i
				}
			}
		}
		if mode == "tile rows broken" { // one lane of each quarter-wave off its run or broadcast
			for g := 0; g < lanes; g += 16 {
				l := g + []int{0, 7, 14, 15}[g/16]
				base[1][l] += 4
				base[2][l] += 8
			}
		}
		switch l := rnd.IntN(lanes); mode {
		case "one unaligned":
			base[1][l] += 2
			base[2][l] += 1
		case "one out of range":
			base[1][l], base[2][l] = 4096-8, 4096-4
		}
		full := &wave{v: make([][lanes]uint32, len(base)), g: &group{lds: append([]byte(nil), lds...)}}
		one := &wave{v: make([][lanes]uint32, len(base)), g: &group{lds: append([]byte(nil), lds...)}}
		copy(full.v, base)
		copy(one.v, base)
		for _, in := range decodeAll(t, code) {
			full.setExec(^uint64(0))
			if err := in.exec(full, &in); err != nil {
				t.Fatalf("%s: %v", in.String(), err)
			}
			for l := 0; l < lanes; l++ {
				one.setExec(1 << l)
				if err := in.exec(one, &in); err != nil {
					t.Fatalf("%s lane %d: %v", in.String(), l, err)
				}
			}
			for r := range one.v {
				if full.v[r] != one.v[r] {
					t.Fatalf("%s, %s: v%d = %#x, lane by lane %#x", mode, in.String(), r, full.v[r], one.v[r])
				}
			}
			if !bytes.Equal(full.g.lds, one.g.lds) {
				t.Fatalf("%s, %s: LDS differs from the lane-by-lane run", mode, in.String())
			}
		}
	}
}

// TestGlobalBatchFullMatchesLaneByLane: GLOBAL dword loads and stores under a full EXEC, with the
// 64 addresses contiguous in one page (globalBatch's one-run check) and with one lane, in each of
// the 64 positions, off the run by its low dword, its high dword or its saddr offset: memory and
// registers as when the lanes run one at a time in lane order (the per-lane path).
func TestGlobalBatchFullMatchesLaneByLane(t *testing.T) {
	code := decodeAll(t, asm(t, `
	global_store_dword v[2:3], v5, off
	global_load_dword v6, v[2:3], off offset:-64
	global_store_dword v1, v5, s[0:1] offset:8
	global_load_dword v7, v1, s[0:1]
	global_load_dwordx2 v[8:9], v[2:3], off
	global_store_dwordx2 v1, v[8:9], s[0:1] offset:512
`))
	const base = 0x2_0000_1000 // lane l at base+0x100+4l; a high dword one above maps too
	setup := func(p int, how string) *wave {
		m := newMem()
		m.mapRange(base, 0x2000)
		m.mapRange(base+1<<32, 0x2000)
		init := make([]byte, 0x2000)
		for i := range init {
			init[i] = byte(i*7 + 3)
		}
		m.Write(base, init)
		m.Write(base+1<<32, init)
		w := &wave{v: make([][lanes]uint32, 16), g: &group{mem: m}, d: &dispatch{}}
		b := uint64(base)
		w.s[0], w.s[1] = uint32(b), uint32(b>>32)
		for l := 0; l < lanes; l++ {
			a := b + 0x100 + 4*uint64(l)
			w.v[1][l] = uint32(0x100 + 4*l)
			w.v[2][l], w.v[3][l] = uint32(a), uint32(a>>32)
			w.v[5][l] = uint32(1000 + l)
		}
		switch how {
		case "low":
			w.v[2][p] += 8
			w.v[1][p] += 8
		case "high":
			w.v[3][p]++
			w.v[1][p] += 0x1000 // the next page
		case "swap":
			q := p ^ 1
			w.v[2][p], w.v[2][q] = w.v[2][q], w.v[2][p]
			w.v[1][p], w.v[1][q] = w.v[1][q], w.v[1][p]
		}
		return w
	}
	dump := func(w *wave) []byte {
		b := make([]byte, 0x4000)
		w.g.mem.Read(base, b[:0x2000])
		w.g.mem.Read(base+1<<32, b[0x2000:])
		return b
	}
	for _, how := range []string{"contiguous", "low", "high", "swap"} {
		for p := 0; p < lanes; p++ {
			if how == "contiguous" && p > 0 {
				break
			}
			full, one := setup(p, how), setup(p, how)
			for _, in := range code {
				full.setExec(^uint64(0))
				if err := in.exec(full, &in); err != nil {
					t.Fatalf("%s: %v", in.String(), err)
				}
				for l := 0; l < lanes; l++ {
					one.setExec(1 << l)
					if err := in.exec(one, &in); err != nil {
						t.Fatalf("%s lane %d: %v", in.String(), l, err)
					}
				}
				for r := range one.v {
					if full.v[r] != one.v[r] {
						t.Fatalf("%s lane %d, %s: v%d = %#x, lane by lane %#x", how, p, in.String(), r, full.v[r], one.v[r])
					}
				}
				if !bytes.Equal(dump(full), dump(one)) {
					t.Fatalf("%s lane %d, %s: memory differs from the lane-by-lane run", how, p, in.String())
				}
			}
		}
	}
}

// TestCmpPairSelect: cmpPairSelect (one mask for the predicates other than eq/ne) against
// cmpSelect of both masks, for every integer predicate, signed and unsigned, with lanes equal to,
// just below and just above the constant (in the low and in the high dword) and random ones.
func TestCmpPairSelect(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	for _, y := range []uint64{0, 1, 0x1_0000_0000, 0xffff_ffff, 1 << 63, 0x8000_0000_0000_0001, ^uint64(0), 0x1234_5678_9abc_def0} {
		var lo, hi [lanes]uint32
		for l := range lanes {
			x := y
			switch l % 6 {
			case 1:
				x = y - 1
			case 2:
				x = y + 1
			case 3:
				x = y + 1<<32
			case 4:
				x = y - 1<<32
			case 5:
				x = rnd.Uint64()
			}
			lo[l], hi[l] = uint32(x), uint32(x>>32)
		}
		for _, signed := range []bool{false, true} {
			key := y
			if signed {
				key ^= 1 << 63 // cmpKey's signed key of y
			}
			for mask := uint8(0); mask < 8; mask++ {
				lt, gt := cmpPairConst(&lo, &hi, key, signed)
				if got, want := cmpPairSelect(&lo, &hi, key, signed, mask), cmpSelect(lt, gt, mask); got != want {
					t.Fatalf("y %#x signed %v mask %d: %#x, want %#x", y, signed, mask, got, want)
				}
			}
		}
	}
}

// TestFillRow: fillRow writes every lane of an 8-aligned row (its 64-bit path) and of a row that
// is not (the 32-bit loop), and nothing outside the row.
func TestFillRow(t *testing.T) {
	buf := make([]uint32, lanes+4) // 8-aligned: Go's allocations of 8 bytes or more are
	for off := 0; off < 2; off++ {
		for i := range buf {
			buf[i] = 0xdead0000 + uint32(i)
		}
		d := (*[lanes]uint32)(buf[1+off:])
		fillRow(d, 0x12345678)
		for i, v := range buf {
			want := 0xdead0000 + uint32(i)
			if i >= 1+off && i < 1+off+lanes {
				want = 0x12345678
			}
			if v != want {
				t.Fatalf("row at offset %d: word %d = %#x, want %#x", 1+off, i, v, want)
			}
		}
	}
}

// TestCheckVRegsNeed: checkVRegs' shortcut (a file of at least Inst.vneed-1 rows passes) against
// its loop (vneed 0), on memory instructions whose highest register is near the ends of the
// architected and the AGPR file, for files just below, at and above what they need: the same
// error or none, and the same file size after (the loop grows the file up to 512 rows).
func TestCheckVRegsNeed(t *testing.T) {
	insts := decodeAll(t, asm(t, `
	global_load_dwordx4 v[250:253], v[2:3], off
	global_store_dwordx2 v[254:255], v[4:5], off
	global_load_dword v9, v250, s[0:1]
	global_atomic_add v250, v[2:3], v9, off glc
	global_atomic_cmpswap_x2 v[250:251], v[2:3], v[4:7], off glc
	global_atomic_add v[2:3], v9, off
	ds_read2_b64 v[252:255], v200 offset1:1
	ds_write_b64 v1, v[100:101]
	buffer_load_dwordx4 v[248:251], v1, s[0:3], 0 offen
	global_load_dwordx4 a[252:255], v[2:3], off
	global_load_dwordx2 a[254:255], v[2:3], off
	flat_load_dword v0, v[254:255]
`))
	checked := 0
	for _, in := range insts {
		if in.vneed == 0 {
			t.Fatalf("%s: no vneed", in.String())
		}
		need := int(in.vneed) - 1
		name := in.Info.Name
		atomic, cmpswap := strings.Contains(name, "atomic"), strings.Contains(name, "cmpswap")
		for _, n := range []int{need - 3, need - 1, need, need + 1, 256, 512} {
			if n < 1 || n > 512 {
				continue
			}
			slow := in
			slow.vneed = 0
			fw, sw := &wave{v: make([][lanes]uint32, n)}, &wave{v: make([][lanes]uint32, n)}
			ferr, serr := fw.checkVRegs(&in, atomic, cmpswap), sw.checkVRegs(&slow, atomic, cmpswap)
			if fmt.Sprint(ferr) != fmt.Sprint(serr) || len(fw.v) != len(sw.v) {
				t.Fatalf("%s with %d rows: %v and %d rows after, the loop %v and %d", in.String(), n, ferr, len(fw.v), serr, len(sw.v))
			}
			checked++
		}
	}
	if checked < 40 {
		t.Fatalf("%d comparisons", checked)
	}
}
