package shader

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// classOf is the V_CMP_CLASS class index of x, written from the ISA table with Go's float predicates.
func classOf(x float64, denormal bool) uint {
	neg := math.Signbit(x)
	pick := func(p, n uint) uint {
		if neg {
			return n
		}
		return p
	}
	switch {
	case math.IsNaN(x):
		return 1 // the corpus only holds quiet NaNs
	case math.IsInf(x, 0):
		return pick(9, 2)
	case x == 0:
		return pick(6, 5)
	case denormal:
		return pick(7, 4)
	}
	return pick(8, 3)
}

// TestCorpusCrossLane: the xlane corpus kernel (readfirstlane in full and partial EXEC, readlane,
// mbcnt, ds_swizzle quad and bit-mask modes, ds_bpermute, ds_permute, the SAD family, v_lerp_u8,
// v_cmp_class f32/f64 with the class predicates built on it, floor conversion, med3/min3/max3,
// v_cvt_f32_ubyte*, f64 floor/ceil/trunc/rint), each lane checked against a Go formula.
func TestCorpusCrossLane(t *testing.T) {
	l := load(t)
	in := make([]uint32, 64)
	f := make([]float32, 64)
	d := make([]float64, 64)
	for i := range in {
		in[i] = uint32(i)*0x9E3779B9 ^ 0x5bd1e995
		f[i] = float32(i%13)*1.75 - 9.5
		d[i] = float64(i%17)*2.25 - 19.5
	}
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), math.Float32frombits(0x00000300), 1e-38}
	copy(f, specials)
	dspec := []float64{math.NaN(), math.Inf(-1), math.Inf(1), math.Copysign(0, -1), 0, math.Float64frombits(5), 2.5, -2.5, 3.5, -0.5}
	copy(d, dspec)
	pin, pout, pf, pd := l.put(in), l.put(make([]uint32, 16*64)), l.put(f), l.put(d)
	pfo, pdo := l.put(make([]float32, 4*64)), l.put(make([]float64, 4*64))
	l.run(t, "xlane", [3]uint32{64, 1, 1}, [3]uint16{64, 1, 1}, args(pin, pout, pf, pd, pfo, pdo))
	out := make([]uint32, 16*64)
	fo := make([]float32, 4*64)
	do := make([]float64, 4*64)
	l.get(pout, out)
	l.get(pfo, fo)
	l.get(pdo, do)

	sad := func(a, b uint32, w int) uint32 {
		var s uint32
		for i := 0; i < 32; i += w {
			x, y := int(a>>i&(1<<w-1)), int(b>>i&(1<<w-1))
			if x > y {
				s += uint32(x - y)
			} else {
				s += uint32(y - x)
			}
		}
		return s
	}
	for i := 0; i < 64; i++ {
		v := in[i]
		below := uint64(1)<<i - 1
		msad := uint32(1)
		for b := 0; b < 32; b += 8 {
			if ref := (v & 0xff00ff00) >> b & 0xff; ref != 0 {
				msad += sad(v>>b&0xff, ref, 8)
			}
		}
		var lerp uint32
		for b := 0; b < 32; b += 8 {
			lerp |= ((v>>b&0xff + (v*3)>>b&0xff + uint32(i)>>b&1) >> 1) << b
		}
		x, y := float64(f[i]), d[i]
		m1, m2 := uint32(0x3ff&(i*37)), uint32(0x3ff&(i*53))
		cls := uint32(m1>>classOf(x, f[i] != 0 && math.Abs(x) < 0x1p-126)&1) |
			uint32(m2>>classOf(y, y != 0 && math.Abs(y) < 0x1p-1022)&1)<<1
		b2u := func(b bool) uint32 {
			if b {
				return 1
			}
			return 0
		}
		cls |= b2u(math.IsNaN(x))<<2 | b2u(math.IsInf(y, 0))<<3 | b2u(!math.IsNaN(x) && !math.IsInf(x, 0))<<4 |
			b2u(!math.IsNaN(y) && !math.IsInf(y, 0) && math.Abs(y) >= 0x1p-1022)<<5
		want := map[int]uint32{
			0:  in[0],
			1:  in[37],
			2:  uint32(bits.OnesCount32(0xaaaaaaaa&uint32(below>>32))+bits.OnesCount32(0x55555555&uint32(below))) + 100,
			3:  in[i&^3|(3-i&3)],
			4:  in[i^1],
			5:  in[i^5],
			6:  in[(i-3)&63],
			7:  7,
			8:  sad(v, v*7, 8) + 3,
			9:  msad,
			10: sad(v, ^v, 8)<<16 + 5,
			11: sad(v, v>>3, 16) + 2,
			12: lerp,
			13: cls,
		}
		if i >= 10 {
			// LLVM hoists the readfirstlane out of the branch (it reads the full wave's lane 0);
			// TestLaneWrites covers readfirstlane under a partial EXEC.
			want[7] = in[0]
		}
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			want[14] = uint32(int32(math.Floor(float64(f[i] * 3.5))))
		}
		for k, w := range want {
			if out[16*i+k] != w {
				t.Errorf("lane %d result %d: %#x, want %#x", i, k, out[16*i+k], w)
			}
		}
		a, b, c := f[i], f[(i+1)&63], f[(i+2)&63]
		finite := true
		for _, k := range []int{i, i + 1, i + 2, i + 5, i + 9} {
			finite = finite && k&63 >= len(specials)
		}
		if finite {
			med := max(min(a, b), min(max(a, b), c))
			mn := min(min(a, f[(i+5)&63]), f[(i+9)&63])
			mx := max(max(a, f[(i+5)&63]), f[(i+9)&63])
			if fo[4*i] != med || fo[4*i+2] != mn || fo[4*i+3] != mx {
				t.Errorf("lane %d: med3/min3/max3 = %v %v %v, want %v %v %v", i, fo[4*i], fo[4*i+2], fo[4*i+3], med, mn, mx)
			}
		}
		if w := float32(v>>8&0xff) + float32(v>>24); fo[4*i+1] != w {
			t.Errorf("lane %d: ubyte conversions %v, want %v", i, fo[4*i+1], w)
		}
		for k, w := range []float64{math.Floor(y), math.Ceil(y), math.Trunc(y), math.RoundToEven(y)} {
			if got := do[4*i+k]; got != w && !(math.IsNaN(w) && math.IsNaN(got)) || math.Signbit(got) != math.Signbit(w) && !math.IsNaN(w) {
				t.Errorf("lane %d: f64 rounding %d of %v = %v, want %v", i, k, y, got, w)
			}
		}
	}
}

// TestLaneWrites: v_writelane_b32 writes one lane whatever EXEC holds, v_readlane_b32 takes its lane
// from an SGPR, v_readfirstlane_b32 reads lane 0 with EXEC = 0 and the first active lane otherwise;
// ds_swizzle reads 0 from inactive lanes; s_bitset/s_ff0/s_flbit_i32/s_wqm/s_quadmask against hand-computed values.
func TestLaneWrites(t *testing.T) {
	code := asm(t, `
	v_mov_b32 v1, v0
	s_movk_i32 s16, 77
	s_mov_b64 exec, 0
	v_writelane_b32 v1, s16, 9
	v_readfirstlane_b32 s8, v1
	s_mov_b64 exec, -1
	s_mov_b32 s9, 41
	v_readlane_b32 s10, v1, s9
	s_mov_b32 exec_lo, 0xfffffff0
	ds_swizzle_b32 v2, v1 offset:swizzle(SWAP,2)
	v_readfirstlane_b32 s16, v1
	s_mov_b64 exec, -1
	s_mov_b32 s11, 0
	s_bitset1_b32 s11, 5
	s_bitset1_b32 s11, 31
	s_bitset0_b32 s11, 5
	s_ff0_i32_b32 s12, 0x1ff
	s_flbit_i32 s13, -8
	s_wqm_b32 s14, 0x1001
	s_quadmask_b32 s15, 0xf0001
	v_mov_b32 v3, s8
	v_mov_b32 v4, s10
	v_mov_b32 v5, s11
	v_mov_b32 v6, s12
	v_mov_b32 v7, s13
	v_mov_b32 v8, s14
	v_mov_b32 v9, s15
	v_mov_b32 v12, v1
	v_mov_b32 v13, s16
	v_lshlrev_b32 v10, 6, v0
	global_store_dwordx4 v10, v[2:5], s[0:1]
	global_store_dwordx4 v10, v[6:9], s[0:1] offset:16
	global_store_dwordx2 v10, v[12:13], s[0:1] offset:32
	s_endpgm
`)
	got := runAsmBytes(t, code, 64, 0, 64*64)
	u := func(lane, k int) uint32 { return binary.LittleEndian.Uint32(got[64*lane+4*k:]) }
	for lane := 0; lane < 64; lane++ {
		v1 := uint32(lane)
		if lane == 9 {
			v1 = 77
		}
		sw := uint32(0) // SWAP,2 = xor 2 within 32; lanes 0-3 were inactive
		if src := lane ^ 2; src >= 4 {
			sw = uint32(src)
			if src == 9 {
				sw = 77
			}
		}
		if lane < 4 {
			sw = 0 // not written: v2 of inactive lanes stays 0
		}
		// s_flbit_i32 -8 (0xfffffff8): bit 31-29 = bit 2 is the first that differs from the sign -> 29;
		// s_quadmask 0xf0001: quads 0 and 4 have a bit set -> 0x11; readfirstlane with EXEC =
		// 0xfffffff0 -> lane 4.
		want := []uint32{sw, 0, 41, 1 << 31, 9, 29, 0xf00f, 0x11, v1, 4}
		for k, w := range want {
			if u(lane, k) != w {
				t.Errorf("lane %d word %d: %#x, want %#x", lane, k, u(lane, k), w)
			}
		}
	}
}

// TestD16 exercises the D16 memory forms: loads that write one 16-bit half and keep the other
// (zero- and sign-extended bytes, shorts, low and high), stores of the high half, and the LDS forms.
// Expected values are worked from the bytes below by hand.
func TestD16(t *testing.T) {
	code := asm(t, `
	v_mov_b32 v9, 0
	v_mov_b32 v2, 0xaaaabbbb
	v_mov_b32 v3, 0xccccdddd
	v_mov_b32 v4, 0xeeeeffff
	v_mov_b32 v5, 0x11112222
	global_load_ubyte_d16_hi v2, v9, s[0:1]
	global_load_sbyte_d16 v3, v9, s[0:1]
	global_load_short_d16 v4, v9, s[0:1] offset:2
	global_load_short_d16_hi v5, v9, s[0:1] offset:2
	s_waitcnt vmcnt(0)
	global_store_short_d16_hi v9, v5, s[0:1] offset:16
	global_store_byte_d16_hi v9, v2, s[0:1] offset:18
	v_mov_b32 v10, 0x5678abcd
	ds_write_b16_d16_hi v9, v10
	v_mov_b32 v6, 0x99990000
	v_mov_b32 v7, 0x44440000
	s_waitcnt lgkmcnt(0)
	ds_read_u16_d16_hi v6, v9
	ds_read_i8_d16 v7, v9 offset:1
	s_waitcnt lgkmcnt(0)
	global_store_dwordx4 v9, v[2:5], s[0:1] offset:32
	global_store_dwordx2 v9, v[6:7], s[0:1] offset:48
	s_endpgm
`)
	m, _, err := runAsm(t, code, 1, 64, func(m *flatMem, _ *DispatchParams) {
		m.Write(asmOut, []byte{0x81, 0x7f, 0x34, 0x12})
	})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 64)
	m.Read(asmOut, got)
	u := func(off int) uint32 { return binary.LittleEndian.Uint32(got[off:]) }
	for _, c := range []struct {
		off  int
		want uint32
		what string
	}{
		{32, 0x0081bbbb, "load_ubyte_d16_hi: byte 0x81 into [31:16], low kept"},
		{36, 0xccccff81, "load_sbyte_d16: 0x81 sign-extended to 0xff81 in [15:0], high kept"},
		{40, 0xeeee1234, "load_short_d16: 0x1234 into [15:0]"},
		{44, 0x12342222, "load_short_d16_hi: 0x1234 into [31:16]"},
		{16, 0x00811234, "store_short_d16_hi (0x1234 at 16) and store_byte_d16_hi (v2[23:16] = 0x81 at 18)"},
		{48, 0x56780000, "ds_write_b16_d16_hi stored 0x5678; ds_read_u16_d16_hi puts it in [31:16]"},
		{52, 0x44440056, "ds_read_i8_d16 of LDS byte 1 (0x56) into [15:0]"},
	} {
		if g := u(c.off); g != c.want {
			t.Errorf("%s: %#08x, want %#08x", c.what, g, c.want)
		}
	}
}

// TestTrigPreop: the 2/π table computed by Machin's formula matches the leading 256 bits of 4/π in Go's
// math/trig_reduce.go (mPi4, an independent source), and V_TRIG_PREOP_F64 returns its 53-bit segments:
// segment 0 of 1.0 is 2/π truncated (0x3FE45F306DC9C882, the mantissa of the ISA's 1/(2π) inline
// constant), segments add up to 2/π truncated to 106 and 159 bits, and large exponents shift the window.
func TestTrigPreop(t *testing.T) {
	mPi4 := []uint64{0x0000000000000001, 0x45f306dc9c882a53, 0xf84eafa3ea69bb81, 0xb6c52b3278872083, 0xfca2c757bd778ac3}
	tab := twoOverPiBits()
	// 2/π = (4/π)/2 = 0.1xxx: its first fraction bit is 4/π's integer 1, fraction bit i (from the
	// MSB, i >= 1) is 4/π's fraction bit i-1.
	for i := 0; i < 256; i++ {
		want := uint64(1)
		if j := i - 1; j >= 0 {
			want = mPi4[1+j/64] >> (63 - j%64) & 1
		}
		if got := tab.Bit(1200 - i); uint64(got) != want {
			t.Fatalf("2/π fraction bit %d = %d, Go's 4/π table says %d", i, got, want)
		}
	}
	if got := trigPreop(u64(1.0), 0); got != 0x3FE45F306DC9C882 {
		t.Errorf("trig_preop(1.0, 0) = %#x, want 0x3FE45F306DC9C882", got)
	}
	seg1, seg2 := f64(trigPreop(u64(1.0), 1)), f64(trigPreop(u64(1.0), 2))
	if seg1 >= 0x1p-53 || seg1 <= 0 || seg2 >= 0x1p-106 || seg2 <= 0 {
		t.Errorf("segments 1 and 2 out of range: %g %g", seg1, seg2)
	}
	// segment 1 holds fraction bits 53..105: compare with the table directly.
	want1 := new(big.Int).Rsh(tab, 1201-106)
	want1.And(want1, big.NewInt(1<<53-1))
	if got := math.Ldexp(seg1, 106); got != float64(want1.Uint64()) {
		t.Errorf("segment 1 · 2^106 = %v, want %v", got, want1.Uint64())
	}
	// A large argument (exponent 1100) skips 23 more bits: its segment 0 is bits 23..75 at 2^-76.
	big1100 := uint64(1100) << 52
	want := new(big.Int).Rsh(tab, 1201-76)
	want.And(want, big.NewInt(1<<53-1))
	if got := math.Ldexp(f64(trigPreop(big1100, 0)), 76); got != float64(want.Uint64()) {
		t.Errorf("exponent 1100 segment 0 · 2^76 = %v, want %v", got, want.Uint64())
	}
}

// TestTrigPreopInstruction runs V_TRIG_PREOP_F64 through the decoder with an inline 1.0 and a segment
// in a VGPR.
func TestTrigPreopInstruction(t *testing.T) {
	code := asm(t, `
	v_mov_b32 v4, 0
	v_trig_preop_f64 v[2:3], 1.0, v4
	global_store_dwordx2 v4, v[2:3], s[0:1]
	s_endpgm
`)
	got := runAsmBytes(t, code, 1, 0, 8)
	if v := binary.LittleEndian.Uint64(got); v != 0x3FE45F306DC9C882 {
		t.Errorf("v_trig_preop_f64 1.0, 0 = %#x, want 0x3FE45F306DC9C882", v)
	}
}

// TestCorpusCompareSDWA: comparisons of bytes and shorts, compiled to v_cmp_*_sdwa with byte/word
// selects and sext (and an SGPR-pair destination), checked against Go.
func TestCorpusCompareSDWA(t *testing.T) {
	l := load(t)
	a, b := make([]uint32, 64), make([]uint32, 64)
	for i := range a {
		a[i] = uint32(i)*0x9E3779B9 + 0x80ff7f01
		b[i] = uint32(i)*0x85EBCA6B ^ 0x7f80ff10
	}
	pa, pb, po := l.put(a), l.put(b), l.put(make([]uint32, 64))
	l.run(t, "cmpsdwa", [3]uint32{64, 1, 1}, [3]uint16{64, 1, 1}, args(pa, pb, po))
	out := make([]uint32, 64)
	l.get(po, out)
	b2u := func(c bool) uint32 {
		if c {
			return 1
		}
		return 0
	}
	for i := range a {
		p := [4]uint8{uint8(a[i]), uint8(a[i] >> 8), uint8(a[i] >> 16), uint8(a[i] >> 24)}
		q := [4]uint8{uint8(b[i]), uint8(b[i] >> 8), uint8(b[i] >> 16), uint8(b[i] >> 24)}
		x := [2]int16{int16(a[i]), int16(a[i] >> 16)}
		y := [2]int16{int16(b[i]), int16(b[i] >> 16)}
		want := b2u(p[1] < q[2]) | b2u(p[3] == q[0])<<1 | b2u(int8(p[2]) > int8(q[1]))<<2 | b2u(x[1] < y[0])<<3 |
			b2u(p[0] >= q[3])<<4 | b2u(int8(p[3]) <= int8(q[3]))<<5 | b2u(uint16(x[1]) > uint16(y[1]))<<6
		if out[i] != want {
			t.Errorf("lane %d: %07b, want %07b", i, out[i], want)
		}
	}
}

// TestScalarStoresAndAtomics: s_store_dword(x2), s_atomic_add with glc (old value returned),
// s_atomic_cmpswap_x2 (new value, compare value) and s_atomic_umax without glc; values worked by hand.
func TestScalarStoresAndAtomics(t *testing.T) {
	code := asm(t, `
	s_mov_b32 s4, 0x11223344
	s_mov_b32 s5, 0x55667788
	s_store_dwordx2 s[4:5], s[0:1], 0x0
	s_mov_b32 s6, 5
	s_atomic_add s6, s[0:1], 0x10 glc
	s_mov_b32 s8, 0xaaaa
	s_mov_b32 s9, 0xbbbb
	s_mov_b32 s10, 7
	s_mov_b32 s11, 0
	s_atomic_cmpswap_x2 s[8:11], s[0:1], 0x18
	s_mov_b32 s12, 3
	s_atomic_umax s12, s[0:1], 0x20
	s_waitcnt lgkmcnt(0)
	s_store_dword s6, s[0:1], 0x28
	s_endpgm
`)
	m, _, err := runAsm(t, code, 1, 0, func(m *flatMem, _ *DispatchParams) {
		init := make([]byte, 0x30)
		binary.LittleEndian.PutUint32(init[0x10:], 100) // add target
		binary.LittleEndian.PutUint64(init[0x18:], 7)   // cmpswap: equal to the compare value 7
		binary.LittleEndian.PutUint32(init[0x20:], 9)   // umax(9, 3) keeps 9
		m.Write(asmOut, init)
	})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 0x30)
	m.Read(asmOut, got)
	for _, c := range []struct {
		off  int
		want uint64
		what string
	}{
		{0, 0x5566778811223344, "s_store_dwordx2"},
		{0x10, 105, "s_atomic_add: 100 + 5"},
		{0x28, 100, "s_atomic_add glc returned the old value"},
		{0x18, 0x0000bbbb0000aaaa, "s_atomic_cmpswap_x2 swapped in s[8:9]"},
		{0x20, 9, "s_atomic_umax(9, 3)"},
	} {
		g := binary.LittleEndian.Uint64(got[c.off:])
		if c.off == 0x10 || c.off == 0x28 || c.off == 0x20 {
			g = uint64(binary.LittleEndian.Uint32(got[c.off:]))
		}
		if g != c.want {
			t.Errorf("%s: %#x, want %#x", c.what, g, c.want)
		}
	}
}

// TestDPPNewBcast: gfx90a's row_newbcast:n (every lane of a row reads the row's lane n) on a 32-bit
// move and on operations with 64-bit operands (v_cvt_f32_f64_dpp, v_fmac_f64_dpp: both dwords move
// together); row_mask limits the written rows.
func TestDPPNewBcast(t *testing.T) {
	code := asm(t, `
	v_cvt_f64_u32 v[2:3], v0
	v_mov_b32 v4, -1
	v_cvt_f32_f64_dpp v4, v[2:3] row_newbcast:5 row_mask:0xd bank_mask:0xf
	v_mov_b32 v5, -1
	v_mov_b32_dpp v5, v0 row_newbcast:15 row_mask:0xf bank_mask:0xf
	v_mov_b32 v6, 0
	v_mov_b32 v7, 0
	v_mov_b32 v8, 0
	v_mov_b32 v9, 0x40000000
	v_fmac_f64_dpp v[6:7], v[2:3], v[8:9] row_newbcast:1 row_mask:0xf bank_mask:0xf
	v_lshlrev_b32 v10, 4, v0
	global_store_dwordx2 v10, v[4:5], s[0:1]
	global_store_dwordx2 v10, v[6:7], s[0:1] offset:8
	s_endpgm
`)
	got := runAsmBytes(t, code, 64, 0, 64*16)
	for l := 0; l < 64; l++ {
		row := l &^ 15
		want4 := math.Float32bits(float32(row + 5))
		if row == 16 { // row_mask 0xd leaves row 1 unwritten
			want4 = 0xffffffff
		}
		if g := binary.LittleEndian.Uint32(got[16*l:]); g != want4 {
			t.Errorf("lane %d: cvt_f32_f64 row_newbcast:5 = %#x, want %#x", l, g, want4)
		}
		if g := binary.LittleEndian.Uint32(got[16*l+4:]); g != uint32(row+15) {
			t.Errorf("lane %d: mov row_newbcast:15 = %d, want %d", l, g, row+15)
		}
		if g := math.Float64frombits(binary.LittleEndian.Uint64(got[16*l+8:])); g != float64(2*(row+1)) {
			t.Errorf("lane %d: fmac_f64 row_newbcast:1 = %v, want %v", l, g, 2*(row+1))
		}
	}
}

// TestFractAndMinMax64: v_fract of a tiny negative value is the largest value below 1, not 1;
// v_min/max_f64 ignore a NaN operand and order -0 below +0 (IEEE mode, as the f32 forms).
func TestFractAndMinMax64(t *testing.T) {
	code := asm(t, `
	v_mov_b32 v1, 0xb0000000
	v_fract_f32 v2, v1
	v_mov_b32 v4, 0
	v_mov_b32 v5, 0xbc300000
	v_fract_f64 v[6:7], v[4:5]
	v_mov_b32 v8, 0
	v_mov_b32 v9, 0x7ff80000
	v_mov_b32 v10, 0
	v_mov_b32 v11, 0x40000000
	v_min_f64 v[12:13], v[8:9], v[10:11]
	v_max_f64 v[14:15], v[10:11], v[8:9]
	v_mov_b32 v16, 0
	v_mov_b32 v17, 0x80000000
	v_mov_b32 v18, 0
	v_mov_b32 v19, 0
	v_min_f64 v[20:21], v[18:19], v[16:17]
	v_max_f64 v[22:23], v[16:17], v[18:19]
	v_mov_b32 v0, 0
	global_store_dword v0, v2, s[0:1]
	global_store_dwordx2 v0, v[6:7], s[0:1] offset:8
	global_store_dwordx4 v0, v[12:15], s[0:1] offset:16
	global_store_dwordx4 v0, v[20:23], s[0:1] offset:32
	s_endpgm
`)
	got := runAsmBytes(t, code, 1, 0, 48)
	if g := binary.LittleEndian.Uint32(got); g != 0x3f7fffff {
		t.Errorf("v_fract_f32(-2^-31) = %#x, want 0x3f7fffff", g)
	}
	for _, c := range []struct {
		off  int
		want uint64
		what string
	}{
		{8, 0x3fefffffffffffff, "v_fract_f64(-2^-60)"},
		{16, 0x4000000000000000, "v_min_f64(NaN, 2)"},
		{24, 0x4000000000000000, "v_max_f64(2, NaN)"},
		{32, 0x8000000000000000, "v_min_f64(+0, -0)"},
		{40, 0, "v_max_f64(-0, +0)"},
	} {
		if g := binary.LittleEndian.Uint64(got[c.off:]); g != c.want {
			t.Errorf("%s = %#x, want %#x", c.what, g, c.want)
		}
	}
}

// TestDSMskorWrxchg2AndCall: ds_mskor_rtn_b32 (MEM = MEM & ~DATA | DATA2, old value returned),
// ds_wrxchg2_rtn_b32 (two exchanges, both old values returned), and s_call_b64 into a subroutine that
// returns with s_setpc_b64. Values worked by hand.
func TestDSMskorWrxchg2AndCall(t *testing.T) {
	code := asm(t, `
	v_mov_b32 v9, 0
	v_mov_b32 v1, 0xf0f0f0f0
	ds_write_b32 v9, v1
	v_mov_b32 v2, 0x000000ff
	v_mov_b32 v3, 0x0000000a
	ds_mskor_rtn_b32 v4, v9, v2, v3
	v_mov_b32 v5, 0x11
	v_mov_b32 v6, 0x22
	ds_write_b32 v9, v5 offset:8
	ds_write_b32 v9, v6 offset:12
	v_mov_b32 v7, 0x33
	v_mov_b32 v8, 0x44
	ds_wrxchg2_rtn_b32 v[10:11], v9, v7, v8 offset0:2 offset1:3
	s_waitcnt lgkmcnt(0)
	ds_read_b32 v12, v9
	ds_read2_b32 v[14:15], v9 offset0:2 offset1:3
	s_mov_b32 s20, 0
	s_call_b64 s[30:31], sub
	s_waitcnt lgkmcnt(0)
	v_mov_b32 v13, s20
	global_store_dwordx2 v9, v[10:11], s[0:1]
	global_store_dwordx4 v9, v[12:15], s[0:1] offset:8
	global_store_dword v9, v4, s[0:1] offset:24
	s_endpgm
sub:
	s_mov_b32 s20, 77
	s_setpc_b64 s[30:31]
`)
	got := runAsmBytes(t, code, 1, 64, 28)
	u := func(i int) uint32 { return binary.LittleEndian.Uint32(got[4*i:]) }
	for i, c := range []struct {
		want uint32
		what string
	}{
		{0x11, "wrxchg2 old value at offset0"}, {0x22, "wrxchg2 old value at offset1"},
		{0xf0f0f00a, "LDS after mskor: 0xf0f0f0f0 & ~0xff | 0x0a"}, {77, "s_call_b64 ran the subroutine and returned"},
		{0x33, "LDS offset0 after the exchange"}, {0x44, "LDS offset1 after the exchange"},
		{0xf0f0f0f0, "mskor returned the old value"},
	} {
		if u(i) != c.want {
			t.Errorf("%s: %#x, want %#x", c.what, u(i), c.want)
		}
	}
}

// TestGlobalBatch: a GLOBAL access whose active lanes form one contiguous run over contiguous
// dwords of one page moves as one Memory access; the result equals the per-lane path (a run with a
// hole in EXEC, and a run crossing a page, take that path), and a fault names the run's first
// address with nothing written.
func TestGlobalBatch(t *testing.T) {
	code := asm(t, `
	v_lshlrev_b32 v1, 3, v0
	v_add_u32 v2, 1000, v0
	v_mov_b32 v3, v0
	global_store_dwordx2 v1, v[2:3], s[0:1]
	s_mov_b32 exec_lo, 0xfffeffff
	global_store_dwordx2 v1, v[2:3], s[0:1] offset:1024
	s_mov_b64 exec, -1
	global_load_dwordx2 v[4:5], v1, s[0:1]
	v_lshlrev_b32 v6, 2, v0
	global_store_dword v6, v4, s[0:1] offset:2048
	global_store_dword v6, v5, s[0:1] offset:3840
	s_endpgm
`)
	got := runAsmBytes(t, code, 64, 0, 0x2000)
	u := func(off int) uint32 { return binary.LittleEndian.Uint32(got[off:]) }
	for l := 0; l < 64; l++ {
		if u(8*l) != uint32(1000+l) || u(8*l+4) != uint32(l) {
			t.Fatalf("batched store, lane %d: %d %d", l, u(8*l), u(8*l+4))
		}
		want := uint32(1000 + l)
		if l == 16 { // the EXEC hole: lane 16 did not store
			want = 0
		}
		if u(1024+8*l) != want {
			t.Fatalf("store with an EXEC hole, lane %d: %d, want %d", l, u(1024+8*l), want)
		}
		// the batched load read back what the batched store wrote; the last store crosses into the
		// next page (3840 + 4·64 > 4096) and runs per lane
		if u(2048+4*l) != uint32(1000+l) || u(3840+4*l) != uint32(l) {
			t.Fatalf("batched load, lane %d: %d %d", l, u(2048+4*l), u(3840+4*l))
		}
	}

	bad := asm(t, `
	v_lshlrev_b32 v1, 2, v0
	global_store_dword v1, v0, s[0:1] offset:64
	s_endpgm
`)
	m2, p2 := miniKernel(t, bad)
	p2.KernargAddress = 0x200000 // unmapped
	p2.GridSize, p2.WorkgroupSize = [3]uint32{64, 1, 1}, [3]uint16{64, 1, 1}
	_, err := Dispatch(context.Background(), m2, p2)
	var f *Fault
	if !errors.As(err, &f) || f.Addr != 0x200040 || !f.Write {
		t.Fatalf("store to an unmapped page: %v, want a write fault at 0x200040", err)
	}
}

// TestGlobalBatchRuns: GLOBAL accesses whose lanes form several contiguous runs (the rows of a tile)
// move one run at a time, and a fault in a later run comes after the earlier runs' stores, at the
// address of its first element, as on the per-lane path.
func TestGlobalBatchRuns(t *testing.T) { testGlobalBatchRuns(t) }

// vecMem is flatMem with VecMemory (as mmu.Port): its pieces move one by one, counted.
type vecMem struct {
	*flatMem
	pieces atomic.Int64
}

func (m *vecMem) ReadV(vas []uint64, bufs [][]byte) (int, error) {
	for i, va := range vas {
		if err := m.Read(va, bufs[i]); err != nil {
			return i, err
		}
		m.pieces.Add(1)
	}
	return len(vas), nil
}

func (m *vecMem) WriteV(vas []uint64, bufs [][]byte) (int, error) {
	for i, va := range vas {
		if err := m.Write(va, bufs[i]); err != nil {
			return i, err
		}
		m.pieces.Add(1)
	}
	return len(vas), nil
}

// TestGlobalBatchRunsVec: the same through a VecMemory, where the runs of one access move in one
// vectored call (globalRunsV); results and the fault are the same.
func TestGlobalBatchRunsVec(t *testing.T) {
	var vm *vecMem
	asmMemory = func(m *flatMem) Memory { vm = &vecMem{flatMem: m}; return vm }
	defer func() { asmMemory = nil }()
	testGlobalBatchRuns(t)
	if vm == nil || vm.pieces.Load() == 0 {
		t.Fatal("no vectored access")
	}
}

func testGlobalBatchRuns(t *testing.T) {
	code := asm(t, `
	v_lshrrev_b32 v1, 4, v0
	v_lshlrev_b32 v1, 8, v1
	v_and_b32 v2, 15, v0
	v_lshl_add_u32 v1, v2, 2, v1
	v_add_u32 v3, 500, v0
	global_store_dword v1, v3, s[0:1]
	global_load_dword v4, v1, s[0:1]
	v_lshlrev_b32 v5, 2, v0
	global_store_dword v5, v4, s[0:1] offset:2048
	s_endpgm
`)
	got := runAsmBytes(t, code, 64, 0, 0x2000)
	u := func(off int) uint32 { return binary.LittleEndian.Uint32(got[off:]) }
	for l := 0; l < 64; l++ {
		if a := l/16*256 + l%16*4; u(a) != uint32(500+l) || u(2048+4*l) != uint32(500+l) {
			t.Fatalf("lane %d: stored %d at %#x, loaded back %d", l, u(a), a, u(2048+4*l))
		}
	}
	if u(64) != 0 || u(256+64) != 0 {
		t.Fatalf("gaps between the runs written: %d %d", u(64), u(256+64))
	}

	// lanes 0-31 end the second page of asmOut, lanes 32-63 begin the unmapped third
	bad := asm(t, `
	v_lshlrev_b32 v1, 2, v0
	v_add_u32 v1, 0x1f80, v1
	v_add_u32 v2, 700, v0
	global_store_dword v1, v2, s[0:1]
	s_endpgm
`)
	m, _, err := runAsm(t, bad, 64, 0, nil)
	var f *Fault
	if !errors.As(err, &f) || f.Addr != asmOut+0x2000 || !f.Write {
		t.Fatalf("store into an unmapped page: %v, want a write fault at %#x", err, asmOut+0x2000)
	}
	b := make([]byte, 128)
	m.Read(asmOut+0x1f80, b)
	for l := 0; l < 32; l++ {
		if v := binary.LittleEndian.Uint32(b[4*l:]); v != uint32(700+l) {
			t.Fatalf("lane %d before the faulting run: %d, want %d", l, v, 700+l)
		}
	}
}

// sizeMem is flatMem that records the sizes of the Reads and Writes at [lo, lo+size) (at asmOut's
// pages when size is 0).
type sizeMem struct {
	*flatMem
	lo, size uint64
	mu       sync.Mutex
	sizes    []int
}

func (m *sizeMem) note(va uint64, n int) {
	lo, size := m.lo, m.size
	if size == 0 {
		lo, size = asmOut, 0x2000
	}
	if va >= lo && va < lo+size {
		m.mu.Lock()
		m.sizes = append(m.sizes, n)
		m.mu.Unlock()
	}
}

func (m *sizeMem) Read(va uint64, p []byte) error  { m.note(va, len(p)); return m.flatMem.Read(va, p) }
func (m *sizeMem) Write(va uint64, p []byte) error { m.note(va, len(p)); return m.flatMem.Write(va, p) }

// TestFlatBatch: a FLAT load or store in global memory whose lanes are contiguous moves as one
// Memory access, as GLOBAL does (ROCclr's blit kernels copy with FLAT instructions; lane by lane
// each lane was a system call where the memory is the client's), and FLAT addresses in the LDS
// aperture still reach the LDS lane by lane.
func TestFlatBatch(t *testing.T) {
	code := asm(t, `
	v_lshlrev_b32 v10, 2, v0
	v_mov_b32 v11, s1
	v_add_co_u32 v10, vcc, s0, v10
	v_addc_co_u32 v11, vcc, 0, v11, vcc
	v_add_u32 v3, 300, v0
	flat_store_dword v[10:11], v3
	flat_load_dword v4, v[10:11]
	s_waitcnt vmcnt(0) lgkmcnt(0)
	v_add_u32 v4, 1, v4
	flat_store_dword v[10:11], v4 offset:256
	v_lshlrev_b32 v6, 2, v0
	v_mov_b32 v7, 0x10000
	v_add_u32 v8, 900, v0
	flat_store_dword v[6:7], v8
	flat_load_dword v9, v[6:7]
	s_waitcnt vmcnt(0) lgkmcnt(0)
	flat_store_dword v[10:11], v9 offset:512
	s_endpgm
`)
	var cm *sizeMem
	asmMemory = func(m *flatMem) Memory { cm = &sizeMem{flatMem: m}; return cm }
	defer func() { asmMemory = nil }()
	got := runAsmBytes(t, code, 64, 256, 1024)
	u := func(off int) uint32 { return binary.LittleEndian.Uint32(got[off:]) }
	for l := 0; l < 64; l++ {
		if u(4*l) != uint32(300+l) || u(256+4*l) != uint32(301+l) || u(512+4*l) != uint32(900+l) {
			t.Fatalf("lane %d: %d %d %d, want %d %d %d", l, u(4*l), u(256+4*l), u(512+4*l), 300+l, 301+l, 900+l)
		}
	}
	if want := []int{256, 256, 256, 256}; !slices.Equal(cm.sizes, want) {
		t.Errorf("accesses of asmOut's bytes: %v, want %v (each FLAT access in global memory one run)", cm.sizes, want)
	}
}

// TestSwizzleBatch: swizzled private-segment accesses (MUBUF with ADD_TID_ENABLE: -O0 code and
// spills; SCRATCH; FLAT in the private aperture, -O0 code's locals through generic pointers) whose
// lanes share their offset move as one Memory access per dword and run of
// consecutive active lanes, and leave memory and registers as the per-lane path does: dword k of
// lane l at base + (off/4+k)*256 + 4l. Lanes at different offsets (offen) take the per-lane path.
func TestSwizzleBatch(t *testing.T) {
	code := asm(t, `
	s_mov_b32 s4, 0x200000
	s_mov_b32 s5, 0
	s_mov_b32 s6, -1
	s_mov_b32 s7, 0xe24000
	v_add_u32 v1, 100, v0
	buffer_store_dword v1, off, s[4:7], 0 offset:8
	v_add_u32 v2, 200, v0
	v_add_u32 v3, 300, v0
	buffer_store_dwordx2 v[2:3], off, s[4:7], 0 offset:16
	buffer_load_dwordx2 v[4:5], off, s[4:7], 0 offset:16
	s_mov_b32 exec_lo, 0xfffeffff
	v_add_u32 v6, 400, v0
	buffer_store_dword v6, off, s[4:7], 0 offset:24
	s_mov_b64 exec, -1
	v_mov_b32 v7, 32
	v_add_u32 v8, 500, v0
	buffer_store_dword v8, v7, s[4:7], 0 offen
	v_and_b32 v9, 1, v0
	v_lshlrev_b32 v9, 2, v9
	v_add_u32 v9, 36, v9
	v_add_u32 v10, 600, v0
	buffer_store_dword v10, v9, s[4:7], 0 offen
	buffer_load_dword v11, v7, s[4:7], 0 offen
	s_mov_b64 flat_scratch, s[4:5]
	s_mov_b32 s8, 44
	v_add_u32 v13, 700, v0
	scratch_store_dword off, v13, s8 offset:4
	v_mov_b32 v14, 52
	v_add_u32 v15, 800, v0
	scratch_store_dword v14, v15, off
	v_mov_b32 v16, 60
	v_mov_b32 v17, 0x20000
	v_add_u32 v18, 900, v0
	flat_store_dword v[16:17], v18
	v_lshlrev_b32 v12, 2, v0
	global_store_dword v12, v4, s[0:1]
	global_store_dword v12, v5, s[0:1] offset:256
	global_store_dword v12, v11, s[0:1] offset:512
	s_endpgm
`)
	buf, out, sizes := runAsmBuf(t, code, nil)
	for l := 0; l < 64; l++ {
		sw := func(dw int) uint32 { return dwordAt(buf, dw*256+4*l) } // the private dword dw of lane l
		want6 := uint32(400 + l)
		if l == 16 {
			want6 = 0 // the EXEC hole
		}
		// offen 36 + 4*(l&1): lanes at two offsets, per lane (dword 9 or 10)
		odd := l&1 != 0
		if sw(2) != uint32(100+l) || sw(4) != uint32(200+l) || sw(5) != uint32(300+l) || sw(6) != want6 ||
			sw(8) != uint32(500+l) || (odd && sw(10) != uint32(600+l)) || (!odd && sw(9) != uint32(600+l)) ||
			sw(12) != uint32(700+l) || sw(13) != uint32(800+l) || sw(15) != uint32(900+l) {
			t.Fatalf("lane %d: private dwords 2, 4, 5, 6, 8, 9/10, 12, 13 = %d %d %d %d %d %d/%d %d %d", l, sw(2), sw(4), sw(5), sw(6), sw(8), sw(9), sw(10), sw(12), sw(13))
		}
		if dwordAt(out, 4*l) != uint32(200+l) || dwordAt(out, 256+4*l) != uint32(300+l) || dwordAt(out, 512+4*l) != uint32(500+l) {
			t.Fatalf("lane %d: loaded back %d %d %d", l, dwordAt(out, 4*l), dwordAt(out, 256+4*l), dwordAt(out, 512+4*l))
		}
	}
	// One access per dword and run: 256, 256+256 (store x2), 256+256 (load x2), 64+188 (the hole),
	// 256 (offen at one offset), 64 single dwords (offen at two), 256 (the load at one offset).
	want := []int{256, 256, 256, 256, 256, 64, 188, 256}
	for range 64 {
		want = append(want, 4)
	}
	// and the SCRATCH stores at s8+4 (saddr) and v14 (one offset), and FLAT in the private aperture
	want = append(want, 256, 256, 256, 256)
	if !slices.Equal(sizes, want) {
		t.Errorf("accesses of the private segment: %v\nwant %v", sizes, want)
	}
}

// TestBufferBatch: raw-buffer MUBUF accesses (OFFEN, stride 0) whose lanes are all in range move
// per run of contiguous lanes as GLOBAL ones do; a lane out of range (past NUM_RECORDS) keeps the
// whole access on the per-lane path, where it reads 0 and is not written.
func TestBufferBatch(t *testing.T) {
	code := asm(t, `
	s_mov_b32 s4, 0x200000
	s_mov_b32 s5, 0
	s_movk_i32 s6, 0x800
	s_mov_b32 s7, 0x24000
	v_lshlrev_b32 v1, 2, v0
	v_add_u32 v2, 100, v0
	buffer_store_dword v2, v1, s[4:7], 0 offen
	v_lshlrev_b32 v3, 3, v0
	v_add_u32 v4, 200, v0
	v_add_u32 v5, 300, v0
	buffer_store_dwordx2 v[4:5], v3, s[4:7], 0 offen offset:256
	buffer_load_dwordx2 v[6:7], v3, s[4:7], 0 offen offset:256
	buffer_load_dword v8, v1, s[4:7], 0 offen offset:1900
	v_add_u32 v9, 400, v0
	buffer_store_dword v9, v1, s[4:7], 0 offen offset:1900
	v_lshlrev_b32 v10, 2, v0
	global_store_dword v10, v6, s[0:1]
	global_store_dword v10, v7, s[0:1] offset:256
	global_store_dword v10, v8, s[0:1] offset:512
	s_endpgm
`)
	fill := func(m *flatMem, p *DispatchParams) { // 0xeeeeeeee where the in-range lanes of the last load read
		m.Write(asmBuf+1900, bytes.Repeat([]byte{0xee}, 0x800-1900))
	}
	buf, out, sizes := runAsmBuf(t, code, fill)
	for l := 0; l < 64; l++ {
		if dwordAt(buf, 4*l) != uint32(100+l) || dwordAt(buf, 256+8*l) != uint32(200+l) || dwordAt(buf, 260+8*l) != uint32(300+l) {
			t.Fatalf("lane %d: stored %d %d %d", l, dwordAt(buf, 4*l), dwordAt(buf, 256+8*l), dwordAt(buf, 260+8*l))
		}
		if dwordAt(out, 4*l) != uint32(200+l) || dwordAt(out, 256+4*l) != uint32(300+l) {
			t.Fatalf("lane %d: loaded back %d %d", l, dwordAt(out, 4*l), dwordAt(out, 256+4*l))
		}
		// offset 1900 + 4l: lanes 0-36 end within NUM_RECORDS 0x800, lanes 37-63 are out of range
		in := 1900+4*l+4 <= 0x800
		wantLoad, wantStore := uint32(0), uint32(0)
		if in {
			wantLoad, wantStore = 0xeeeeeeee, uint32(400+l)
		}
		if dwordAt(out, 512+4*l) != wantLoad {
			t.Fatalf("lane %d (in range %v): loaded %#x, want %#x", l, in, dwordAt(out, 512+4*l), wantLoad)
		}
		if 1900+4*l+4 <= len(buf) && dwordAt(buf, 1900+4*l) != wantStore {
			t.Fatalf("lane %d (in range %v): stored %#x, want %#x", l, in, dwordAt(buf, 1900+4*l), wantStore)
		}
	}
	// 256 (the dword store), 512 and 512 (the dwordx2 store and load); the accesses with lanes out of
	// range go lane by lane: 37 in-range lanes each for the load and the store.
	want := []int{256, 512, 512}
	for range 2 * 37 {
		want = append(want, 4)
	}
	if !slices.Equal(sizes, want) {
		t.Errorf("accesses of the buffer: %v\nwant %v", sizes, want)
	}
}

// runAsmBuf runs code as one wave (runAsm, setup as there) and returns the buffer page at asmBuf,
// the first 768 bytes at asmOut and the sizes of the Memory accesses to asmBuf's page, in order.
func runAsmBuf(t *testing.T, code []uint32, setup func(m *flatMem, p *DispatchParams)) (buf, out []byte, sizes []int) {
	t.Helper()
	var sm *sizeMem
	asmMemory = func(m *flatMem) Memory { sm = &sizeMem{flatMem: m, lo: asmBuf, size: 0x1000}; return sm }
	defer func() { asmMemory = nil }()
	m, _, err := runAsm(t, code, 64, 0, setup)
	if err != nil {
		t.Fatal(err)
	}
	buf, out = make([]byte, 0x1000), make([]byte, 768)
	m.Read(asmBuf, buf)
	m.Read(asmOut, out)
	return buf, out, sm.sizes
}

// dwordAt is the little-endian dword of b at byte off.
func dwordAt(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
