package shader

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"
)

const (
	rareOut = asmOut // kernarg pointer s[0:1]: the output dwords
	rareBuf = asmBuf // buffer memory for the MUBUF tests
)

// runRare assembles src and runs it as one work-group of n work-items with lds bytes of LDS; s[0:1]
// points at rareOut (4 KiB, zero). setup may fill memory and change the dispatch. It returns the first
// 256 output dwords.
func runRare(t *testing.T, src string, n int, lds uint32, setup func(m *flatMem, p *DispatchParams)) ([]uint32, Stats, error) {
	t.Helper()
	m, st, err := runAsm(t, asm(t, src), n, lds, setup)
	b := make([]byte, 1024)
	m.Read(rareOut, b)
	out := make([]uint32, 256)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out, st, err
}

func checkWords(t *testing.T, got []uint32, want []struct {
	i    int
	v    uint32
	what string
}) {
	t.Helper()
	for _, c := range want {
		if got[c.i] != c.v {
			t.Errorf("out[%d] %s: %#x, want %#x", c.i, c.what, got[c.i], c.v)
		}
	}
}

type wantWord = struct {
	i    int
	v    uint32
	what string
}

// TestRareVALU: the cube-map ops, v_cvt_off_f32_i4, the legacy exp/log, v_cvt_pkaccum_u8_f32 and the
// quad SADs on one lane, with values worked by hand from the ISA pseudo-code.
func TestRareVALU(t *testing.T) {
	out, _, err := runRare(t, `
	v_mov_b32 v20, 0
	; (x, y, z) = (1, -3, 2): y-major (|y| = 3 largest)
	v_mov_b32 v1, 1.0
	v_mov_b32 v2, 0xc0400000
	v_mov_b32 v3, 2.0
	v_cubeid_f32 v4, v1, v2, v3
	v_cubesc_f32 v5, v1, v2, v3
	v_cubetc_f32 v6, v1, v2, v3
	v_cubema_f32 v7, v1, v2, v3
	global_store_dwordx4 v20, v[4:7], s[0:1]
	; (-4, 1, 4): |z| = |x|, z-major wins the tie
	v_mov_b32 v1, -4.0
	v_mov_b32 v2, 1.0
	v_mov_b32 v3, 4.0
	v_cubeid_f32 v4, v1, v2, v3
	v_cubesc_f32 v5, v1, v2, v3
	v_cubetc_f32 v6, v1, v2, v3
	v_cubema_f32 v7, v1, v2, v3
	global_store_dwordx4 v20, v[4:7], s[0:1] offset:16
	; (-5, 2, 1): x-major; the neg modifier makes src1 -2 -> read as (-5, -2, 1)
	v_mov_b32 v1, 0xc0a00000
	v_mov_b32 v2, 2.0
	v_mov_b32 v3, 1.0
	v_cubeid_f32 v4, v1, -v2, v3
	v_cubesc_f32 v5, v1, -v2, v3
	v_cubetc_f32 v6, v1, -v2, v3
	v_cubema_f32 v7, v1, -v2, v3
	global_store_dwordx4 v20, v[4:7], s[0:1] offset:32
	; v_cvt_off_f32_i4
	v_cvt_off_f32_i4 v4, 7
	v_cvt_off_f32_i4 v5, 8
	v_cvt_off_f32_i4 v6, 0xfffffff1
	v_cvt_off_f32_i4_e64 v7, 8 clamp
	global_store_dwordx4 v20, v[4:7], s[0:1] offset:48
	; legacy exp/log, pkaccum
	v_exp_legacy_f32 v4, 0x40400000
	v_log_legacy_f32 v5, 0x3e800000
	v_mov_b32 v6, 0x11223344
	v_mov_b32 v8, 0x40200000
	v_cvt_pkaccum_u8_f32 v6, v8, 1
	v_cvt_pkaccum_u8_f32 v6, -4.0, 6
	v_mov_b32 v8, 0x43960000
	v_cvt_pkaccum_u8_f32 v6, v8, 3
	v_mov_b32 v8, 0xc0f00000
	v_cvt_pkaccum_u8_f32 v6, -v8, 0
	global_store_dwordx3 v20, v[4:6], s[0:1] offset:64
	; a denormal third source of an f32 operation under the flushing FP_DENORM: 0*0 + (-denormal -> -0) = +0
	v_mov_b32 v9, 0x80000001
	v_fma_f32 v10, 0, 0, v9
	global_store_dword v20, v10, s[0:1] offset:128
	; v_cvt_pk_u8_f32 with integer operands that look like f32 denormals (the descriptor's FP_DENORM flushes)
	v_mov_b32 v8, 0x44
	v_cvt_pk_u8_f32 v7, 2.0, 1, v8
	global_store_dword v20, v7, s[0:1] offset:76
	; quad SADs: S0 = 0x0807060504030201
	v_mov_b32 v2, 0x04030201
	v_mov_b32 v3, 0x08070605
	v_mov_b32 v4, 0x01010101
	v_mov_b32 v6, 0x00020001
	v_mov_b32 v7, 0x00040003
	v_qsad_pk_u16_u8 v[8:9], v[2:3], v4, v[6:7]
	v_mov_b32 v6, 0x0002ffff
	v_qsad_pk_u16_u8 v[10:11], v[2:3], v4, v[6:7]
	v_mov_b32 v4, 0x00010001
	v_mov_b32 v6, 0x00020001
	v_mqsad_pk_u16_u8 v[12:13], v[2:3], v4, v[6:7]
	global_store_dwordx4 v20, v[8:11], s[0:1] offset:80
	global_store_dwordx2 v20, v[12:13], s[0:1] offset:96
	v_mov_b32 v14, 100
	v_mov_b32 v15, 200
	v_mov_b32 v16, -1
	v_mov_b32 v17, 0
	v_mqsad_u32_u8 v[8:11], v[2:3], v4, v[14:17]
	global_store_dwordx4 v20, v[8:11], s[0:1] offset:112
	s_endpgm
`, 1, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkWords(t, out, []wantWord{
		// y-major, y < 0: face 3; sc = x = 1; tc = -z = -2; ma = 2y = -6
		{0, 0x40400000, "cubeid y-major"}, {1, 0x3f800000, "cubesc y-major"}, {2, 0xc0000000, "cubetc y-major"}, {3, 0xc0c00000, "cubema y-major"},
		// z-major, z >= 0: face 4; sc = x = -4; tc = -y = -1; ma = 2z = 8
		{4, 0x40800000, "cubeid z-major"}, {5, 0xc0800000, "cubesc z-major"}, {6, 0xbf800000, "cubetc z-major"}, {7, 0x41000000, "cubema z-major"},
		// x-major, x < 0: face 1; sc = z = 1 (x < 0); tc = -y = 2; ma = 2x = -10
		{8, 0x3f800000, "cubeid x-major"}, {9, 0x3f800000, "cubesc x-major"}, {10, 0x40000000, "cubetc x-major"}, {11, 0xc1200000, "cubema x-major"},
		// 7/16 = 0.4375, 8 -> -8/16 = -0.5, nibble 1 -> 0.0625, clamp(-0.5) = 0
		{12, 0x3ee00000, "cvt_off 7"}, {13, 0xbf000000, "cvt_off 8"}, {14, 0x3d800000, "cvt_off 0x...1"}, {15, 0, "cvt_off clamp"},
		// 2^3 = 8, log2(0.25) = -2
		{16, 0x41000000, "exp_legacy"}, {17, 0xc0000000, "log_legacy"},
		// 0x11223344: byte1 = rne(2.5) = 2 -> 0x11220244; byte 6&3 = 2: -4 -> 0 -> 0x11000244; byte 3: 300 -> 255
		// -> 0xff000244; byte 0: -(-7.5) = 7.5 -> rne 8 -> 0xff000208
		{18, 0xff000208, "pkaccum"},
		// byte 1 of 0x00000044 = 2, with S1 = 1 and S2 not flushed as denormals
		{19, 0x00000244, "cvt_pk_u8 integer operands"},
		// windows [1,2,3,4] [2,3,4,5] [3,4,5,6] [4,5,6,7] against 1,1,1,1: sad 6, 10, 14, 18 + 1, 2, 3, 4
		{20, 0x000c0007, "qsad lo"}, {21, 0x00160011, "qsad hi"},
		// accumulator 0xffff: (6 + 0xffff) & 0xffff = 5
		{22, 0x000c0005, "qsad truncated lo"}, {23, 0x00160011, "qsad truncated hi"},
		// reference bytes [1,0,1,0]: |w0-1| + |w2-1| = 2, 4, 6, 8 + 1, 2, 3, 4
		{24, 0x00060003, "mqsad_pk lo"}, {25, 0x000c0009, "mqsad_pk hi"},
		// 2+100, 4+200, 6+0xffffffff (wraps to 5), 8+0
		{32, 0, "fma with a flushed denormal src2 (used to index past w.tmp)"},
		{28, 102, "mqsad_u32 0"}, {29, 204, "mqsad_u32 1"}, {30, 5, "mqsad_u32 2"}, {31, 8, "mqsad_u32 3"},
	})
}

// TestRareDS: ds_append/ds_consume (M0 base + offset, popcount(EXEC), old value to every lane),
// ds_write/read_addtid_b32, ds_condxchg32_rtn_b64 and ds_wrap_rtn_b32, on one wave of 64 lanes.
func TestRareDS(t *testing.T) {
	out, _, err := runRare(t, `
	v_lshlrev_b32 v20, 2, v0      ; per-lane output dword offset
	v_mov_b32 v21, 0
	s_mov_b64 s[30:31], exec
	; append/consume on LDS[0x308] = 10
	s_mov_b32 m0, 0x300
	v_mov_b32 v1, 10
	v_mov_b32 v2, 0x308
	ds_write_b32 v2, v1
	ds_append v3 offset:8         ; all 64 lanes: v3 = 10, LDS = 74
	s_mov_b64 exec, 7
	ds_consume v4 offset:8        ; lanes 0-2: v4 = 74, LDS = 71
	s_mov_b64 exec, s[30:31]
	ds_read_b32 v5, v2
	global_store_dword v20, v3, s[0:1]
	global_store_dword v20, v4, s[0:1] offset:256
	; addtid: LDS[4 + 0x10 + 4*lane] = lane; lane reads LDS[8 + 0x10 + 4*lane] = lane + 1 (lane 63: 0)
	s_mov_b32 m0, 0x10
	ds_write_addtid_b32 v0 offset:4
	ds_read_addtid_b32 v6 offset:8
	global_store_dword v20, v6, s[0:1] offset:512
	; lane 0 only: condxchg and wrap
	s_mov_b64 exec, 1
	v_mov_b32 v8, 0xaaaa0001
	v_mov_b32 v9, 0xbbbb0002
	v_mov_b32 v10, 0x400
	ds_write_b64 v10, v[8:9]
	v_mov_b32 v18, 0x80000055     ; bit 31 set: store 0x55
	v_mov_b32 v19, 0x00000066     ; clear: keep
	v_mov_b32 v13, 0x403          ; (0x403 + 0) & 0xfff8 = 0x400
	ds_condxchg32_rtn_b64 v[14:15], v13, v[18:19]
	ds_read_b64 v[16:17], v10
	v_mov_b32 v8, 10
	v_mov_b32 v9, 0x500
	ds_write_b32 v9, v8 offset:4
	v_mov_b32 v10, 4
	v_mov_b32 v11, 100
	ds_wrap_rtn_b32 v22, v9, v10, v11 offset:4   ; 10 >= 4: 6
	ds_wrap_rtn_b32 v23, v9, v10, v11 offset:4   ; 6 >= 4: 2
	ds_wrap_rtn_b32 v24, v9, v10, v11 offset:4   ; 2 < 4: 102
	ds_read_b32 v25, v9 offset:4
	global_store_dwordx4 v21, v[14:17], s[0:1] offset:768
	global_store_dwordx4 v21, v[22:25], s[0:1] offset:784
	global_store_dword v21, v5, s[0:1] offset:800
	s_endpgm
`, 64, 2048, nil)
	if err != nil {
		t.Fatal(err)
	}
	for l := 0; l < 64; l++ {
		var cons uint32
		if l < 3 {
			cons = 74
		}
		addtid := uint32(l + 1)
		if l == 63 {
			addtid = 0
		}
		if out[l] != 10 || out[64+l] != cons || out[128+l] != addtid {
			t.Errorf("lane %d: append %d consume %d addtid %d, want 10 %d %d", l, out[l], out[64+l], out[128+l], cons, addtid)
		}
	}
	checkWords(t, out, []wantWord{
		{192, 0xaaaa0001, "condxchg old 0"}, {193, 0xbbbb0002, "condxchg old 1"},
		{194, 0x55, "condxchg stored DATA[30:0]"}, {195, 0xbbbb0002, "condxchg kept (DATA[63] clear)"},
		{196, 10, "wrap 1"}, {197, 6, "wrap 2"}, {198, 2, "wrap 3"}, {199, 102, "wrap LDS"},
		{200, 71, "LDS after append (+64) and consume (-3)"},
	})
	// GDS stays unimplemented.
	_, _, err = runRare(t, "ds_append v1 gds\ns_endpgm\n", 1, 0, nil)
	if !errors.Is(err, ErrUnimplemented) || !strings.Contains(err.Error(), "GDS") {
		t.Errorf("ds_append gds: %v", err)
	}
}

// TestRareBufferFormats: buffer_load/store_format_* through V#s of several DATA_FORMAT/NUM_FORMAT/
// DST_SEL combinations, expected values worked by hand (conversions in the comments).
func TestRareBufferFormats(t *testing.T) {
	const ident = 4 | 5<<3 | 6<<6 | 7<<9 // DST_SEL X, Y, Z, W
	w3 := func(df, nf, sel uint32) uint32 { return sel | nf<<12 | df<<15 }
	for _, c := range []struct {
		name          string
		word3, stride uint32
		nrec          uint32
		mem           []byte
		pre           [5]uint32 // v0-v3, v4 (index/offset)
		inst          string
		want          []uint32 // v0-v3 after a load (nil: not checked)
		wantMem       []byte   // the 16 buffer bytes after a store (nil: not checked; memory starts 0xaa)
		wantErr       string
	}{
		// bytes 0, 255, 128, 51 -> 0, 1, 128/255 (0.5 + 1/510: 0x3f000000 + rne(2^24/510 = 32896.5) = 0x3f008081), 51/255 = 0.2
		{name: "8_8_8_8 unorm", word3: w3(10, 0, ident), nrec: 16, mem: []byte{0, 0xff, 0x80, 0x33},
			inst: "buffer_load_format_xyzw v[0:3], off, s[8:11], 0", want: []uint32{0, 0x3f800000, 0x3f008081, 0x3e4ccccd}},
		// x = -32768 -> max(-32768/32767, -1) = -1, y = 32767 -> 1; DST_SEL (Y, X, 1, 0)
		{name: "16_16 snorm dst_sel", word3: w3(5, 1, 5|4<<3|1<<6), nrec: 16, mem: []byte{0, 0x80, 0xff, 0x7f},
			inst: "buffer_load_format_xyzw v[0:3], off, s[8:11], 0", want: []uint32{0x3f800000, 0xbf800000, 0x3f800000, 0}},
		// two floats as they are, z = 0 and w = 1.0 filled in
		{name: "32_32 float", word3: w3(11, 7, ident), nrec: 16, mem: []byte{0xdb, 0x0f, 0x49, 0x40, 0, 0, 0x28, 0xc2},
			inst: "buffer_load_format_xyzw v[0:3], off, s[8:11], 0", want: []uint32{0x40490fdb, 0xc2280000, 0, 0x3f800000}},
		// an integer format fills w with the integer 1
		{name: "16 uint", word3: w3(2, 4, ident), nrec: 16, mem: []byte{0xfe, 0xff},
			inst: "buffer_load_format_xyzw v[0:3], off, s[8:11], 0", want: []uint32{0xfffe, 0, 0, 1}},
		{name: "8 sint x", word3: w3(1, 5, ident), nrec: 16, mem: []byte{0x80}, pre: [5]uint32{0, 0x11, 0x22, 0x33},
			inst: "buffer_load_format_x v0, off, s[8:11], 0", want: []uint32{0xffffff80, 0x11, 0x22, 0x33}},
		// 0xa00007ff = w 2 [31:30], z 512 [29:20], y 1 [19:10], x 1023 [9:0]
		{name: "2_10_10_10 uint", word3: w3(9, 4, ident), nrec: 16, mem: []byte{0xff, 0x07, 0x00, 0xa0},
			inst: "buffer_load_format_xyzw v[0:3], off, s[8:11], 0", want: []uint32{1023, 1, 512, 2}},
		// 0x843e03e0: x 11 bits 992 = e15 m32 -> 1.5; y 1984 = e31 m0 -> +inf; z 10 bits 528 = e16 m16 -> 3.0
		{name: "10_11_11 float", word3: w3(6, 7, ident), nrec: 16, mem: []byte{0xe0, 0x03, 0x3e, 0x84},
			inst: "buffer_load_format_xyzw v[0:3], off, s[8:11], 0", want: []uint32{0x3fc00000, 0x7f800000, 0x40400000, 0x3f800000}},
		// packed d16: two binary16 per VGPR, low first
		{name: "16_16_16_16 float d16", word3: w3(12, 7, ident), nrec: 16, mem: []byte{0, 0x3c, 0, 0xc0, 0, 0x7c, 1, 0},
			pre: [5]uint32{0, 0, 0x22, 0x33}, inst: "buffer_load_format_d16_xyzw v[0:1], off, s[8:11], 0",
			want: []uint32{0xc0003c00, 0x00017c00, 0x22, 0x33}},
		// 128/255 as binary16: 0x3800 + rne(2^11/510 = 4.02) = 0x3804 into the high half, low half kept
		{name: "8_8 unorm d16_hi_x", word3: w3(3, 0, ident), nrec: 16, mem: []byte{0x80, 0xff}, pre: [5]uint32{0x1234abcd},
			inst: "buffer_load_format_d16_hi_x v0, off, s[8:11], 0", want: []uint32{0x3804abcd}},
		// DST_SEL_X = Y: 255 -> 1.0 = 0x3c00 into the low half, high half kept
		{name: "8_8 unorm d16_x sel Y", word3: w3(3, 0, 5), nrec: 16, mem: []byte{0x80, 0xff}, pre: [5]uint32{0x1234abcd},
			inst: "buffer_load_format_d16_x v0, off, s[8:11], 0", want: []uint32{0x12343c00}},
		// stride 8, index 1: the dword at byte 8; index 2 >= NUM_RECORDS 2: out of range, 0
		{name: "idxen", word3: w3(4, 4, ident), stride: 8, nrec: 2, mem: []byte{0x11, 0, 0, 0, 0x22, 0, 0, 0, 0x33, 0, 0, 0},
			pre: [5]uint32{0x99, 0, 0, 0, 1}, inst: "buffer_load_format_x v0, v4, s[8:11], 0 idxen", want: []uint32{0x33}},
		{name: "idxen oob", word3: w3(4, 4, ident), stride: 8, nrec: 2, mem: []byte{0x11},
			pre: [5]uint32{0x99, 0, 0, 0, 2}, inst: "buffer_load_format_x v0, v4, s[8:11], 0 idxen", want: []uint32{0}},
		// stride 0: offset 4 + 4 > NUM_RECORDS 4 bytes: out of range
		{name: "offen oob", word3: w3(4, 4, ident), nrec: 4, mem: []byte{0x11, 0, 0, 0, 0x22},
			pre: [5]uint32{0x99, 0, 0, 0, 4}, inst: "buffer_load_format_x v0, v4, s[8:11], 0 offen", want: []uint32{0}},
		{name: "invalid format", word3: w3(0, 4, ident), nrec: 16, inst: "buffer_load_format_x v0, off, s[8:11], 0",
			wantErr: "DATA_FORMAT=0"},
		{name: "32 unorm", word3: w3(4, 0, ident), nrec: 16, inst: "buffer_load_format_x v0, off, s[8:11], 0",
			wantErr: "32-bit normalized"},
		{name: "10_10_10_2 float", word3: w3(8, 7, ident), nrec: 16, inst: "buffer_load_format_x v0, off, s[8:11], 0",
			wantErr: "no float"},
		{name: "swizzled V#", word3: w3(4, 4, ident) | 1<<23, nrec: 16, inst: "buffer_load_format_x v0, off, s[8:11], 0",
			wantErr: "ADD_TID_ENABLE"},

		// stores (the 16 buffer bytes start as 0xaa)
		// 0.5*255 = 127.5 -> rne 128; 1.5 clamps to 255; -0.1 -> 0; NaN -> 0
		{name: "8_8_8_8 unorm store", word3: w3(10, 0, ident), nrec: 16, pre: [5]uint32{0x3f000000, 0x3fc00000, 0xbdcccccd, 0x7fc00000},
			inst: "buffer_store_format_xyzw v[0:3], off, s[8:11], 0", wantMem: []byte{0x80, 0xff, 0, 0, 0xaa}},
		// -0.5*32767 = -16383.5 -> rne -16384 = 0xc000; only x is written
		{name: "16_16 snorm store x", word3: w3(5, 1, ident), nrec: 16, pre: [5]uint32{0xbf000000},
			inst: "buffer_store_format_x v0, off, s[8:11], 0", wantMem: []byte{0, 0xc0, 0xaa, 0xaa}},
		{name: "32x4 float store xyz", word3: w3(14, 7, ident), nrec: 16, pre: [5]uint32{0x3f800000, 0x40000000, 0x40400000, 0x40800000},
			inst:    "buffer_store_format_xyz v[0:2], off, s[8:11], 0",
			wantMem: []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0xaa, 0xaa, 0xaa, 0xaa}},
		// 1/3 (0x3eaaaaab) to binary16: 0x3555
		{name: "16 float store", word3: w3(2, 7, ident), nrec: 16, pre: [5]uint32{0x3eaaaaab},
			inst: "buffer_store_format_x v0, off, s[8:11], 0", wantMem: []byte{0x55, 0x35, 0xaa}},
		{name: "16_16 uint store d16_xy", word3: w3(5, 4, ident), nrec: 16, pre: [5]uint32{0x0002fffe},
			inst: "buffer_store_format_d16_xy v0, off, s[8:11], 0", wantMem: []byte{0xfe, 0xff, 2, 0, 0xaa}},
		{name: "16x4 float store d16_xyzw", word3: w3(12, 7, ident), nrec: 16, pre: [5]uint32{0xc0003c00, 0x00017c00},
			inst: "buffer_store_format_d16_xyzw v[0:1], off, s[8:11], 0", wantMem: []byte{0, 0x3c, 0, 0xc0, 0, 0x7c, 1, 0, 0xaa}},
		// x -1 -> 0x3ff, y 511 -> 0x1ff, z -512 -> 0x200, w 1: 0x6007ffff
		{name: "2_10_10_10 sint store", word3: w3(9, 5, ident), nrec: 16, pre: [5]uint32{0xffffffff, 511, 0xfffffe00, 1},
			inst: "buffer_store_format_xyzw v[0:3], off, s[8:11], 0", wantMem: []byte{0xff, 0xff, 0x07, 0x60, 0xaa}},
		// out of range: dropped
		{name: "store oob", word3: w3(4, 4, ident), nrec: 4, pre: [5]uint32{7, 0, 0, 0, 4},
			inst: "buffer_store_format_x v0, v4, s[8:11], 0 offen", wantMem: []byte{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa}},
		{name: "uint store out of range", word3: w3(1, 4, ident), nrec: 16, pre: [5]uint32{256},
			inst: "buffer_store_format_x v0, off, s[8:11], 0", wantErr: "not representable"},
		{name: "uscaled store fraction", word3: w3(1, 2, ident), nrec: 16, pre: [5]uint32{0x3fc00000},
			inst: "buffer_store_format_x v0, off, s[8:11], 0", wantErr: "not representable"},
		{name: "10_11_11 float store", word3: w3(6, 7, ident), nrec: 16, inst: "buffer_store_format_xyz v[0:2], off, s[8:11], 0",
			wantErr: "11/10-bit float"},
		{name: "partial packed store", word3: w3(9, 4, ident), nrec: 16, inst: "buffer_store_format_x v0, off, s[8:11], 0",
			wantErr: "partial store"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.NewReplacer("W1", hex(c.stride<<16), "W2", hex(c.nrec), "W3", hex(c.word3),
				"P0", hex(c.pre[0]), "P1", hex(c.pre[1]), "P2", hex(c.pre[2]), "P3", hex(c.pre[3]), "P4", hex(c.pre[4]),
				"INST", c.inst).Replace(`
	s_mov_b32 s8, 0x200000
	s_mov_b32 s9, W1
	s_mov_b32 s10, W2
	s_mov_b32 s11, W3
	v_mov_b32 v0, P0
	v_mov_b32 v1, P1
	v_mov_b32 v2, P2
	v_mov_b32 v3, P3
	v_mov_b32 v4, P4
	v_mov_b32 v5, 0
	INST
	s_waitcnt vmcnt(0)
	global_store_dwordx4 v5, v[0:3], s[0:1]
	s_endpgm
`)
			var m *flatMem
			out, _, err := runRare(t, src, 1, 0, func(mm *flatMem, _ *DispatchParams) {
				m = mm
				fill := make([]byte, 16)
				for i := range fill {
					fill[i] = 0xaa
				}
				mm.Write(rareBuf, fill)
				mm.Write(rareBuf, c.mem)
			})
			if c.wantErr != "" {
				if !errors.Is(err, ErrUnimplemented) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want ErrUnimplemented with %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range c.want {
				if out[i] != v {
					t.Errorf("v%d = %#x, want %#x", i, out[i], v)
				}
			}
			if c.wantMem != nil {
				got := make([]byte, len(c.wantMem))
				m.Read(rareBuf, got)
				for i := range got {
					if got[i] != c.wantMem[i] {
						t.Errorf("buffer byte %d = %#x, want %#x (all % x)", i, got[i], c.wantMem[i], got)
						break
					}
				}
			}
		})
	}
}

func hex(v uint32) string { return "0x" + strconv.FormatUint(uint64(v), 16) }

// TestGPRIndexMode: s_set_gpr_idx_on/_mode/_idx/_off (M0[7:0] added to the VGPR operands M0[15:12]
// selects; scalar operands untouched; MODE.GPR_IDX_EN readable with s_getreg) and s_setvskip.
func TestGPRIndexMode(t *testing.T) {
	out, _, err := runRare(t, `
	v_mov_b32 v30, 0
	v_mov_b32 v2, 2
	v_mov_b32 v3, 3
	v_mov_b32 v5, 5
	v_mov_b32 v6, 6
	v_mov_b32 v1, 0
	v_mov_b32 v4, 0
	v_mov_b32 v11, 0
	v_mov_b32 v12, 0
	s_mov_b32 s2, 0x103                    ; index 3 (bits 7:0)
	s_set_gpr_idx_on s2, gpr_idx(SRC0)     ; M0 = 0xffffffff & ~0xf0ff | 3 | 1<<12 = 0xffff1f03
	v_mov_b32 v1, v2                       ; v1 = v5 = 5
	v_mov_b32 v20, m0                      ; scalar source: not indexed
	s_getreg_b32 s3, hwreg(HW_REG_MODE, 27, 1)
	s_set_gpr_idx_mode gpr_idx(DST)
	v_mov_b32 v1, v2                       ; v4 = v2 = 2
	s_set_gpr_idx_idx 1
	s_set_gpr_idx_mode gpr_idx(SRC1,DST)
	v_add_u32 v10, v2, v2                  ; v11 = v2 + v3 = 5
	s_set_gpr_idx_mode gpr_idx(SRC0,SRC1,SRC2,DST)
	v_mad_u32_u24 v11, v2, v3, v4          ; v12 = v3*v4 + v5 = 3*2 + 5 = 11
	s_set_gpr_idx_off
	s_getreg_b32 s4, hwreg(HW_REG_MODE, 27, 1)
	v_mov_b32 v21, v2                      ; plain again: 2
	v_mov_b32 v22, s3
	v_mov_b32 v23, s4
	; VSKIP: S0[S1[4:0]] = 8 bit 3 = 1: vector instructions are skipped
	v_mov_b32 v24, 7
	s_mov_b32 s5, 8
	s_setvskip s5, 3
	v_mov_b32 v24, 9
	global_store_dword v30, v24, s[0:1] offset:100
	s_mov_b32 s6, 0x55
	s_setvskip s5, 2
	v_mov_b32 v25, s6
	global_store_dwordx2 v30, v[2:3], s[0:1] offset:4
	global_store_dword v30, v1, s[0:1]
	global_store_dword v30, v4, s[0:1] offset:12
	global_store_dwordx4 v30, v[10:13], s[0:1] offset:16
	global_store_dwordx4 v30, v[20:23], s[0:1] offset:32
	global_store_dwordx2 v30, v[24:25], s[0:1] offset:48
	s_endpgm
`, 1, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkWords(t, out, []wantWord{
		{0, 5, "SRC0 indexed: v1 = v5"}, {3, 2, "DST indexed: v4 = v2"}, {1, 2, "v2 untouched"},
		{5, 5, "SRC1+DST index 1: v11 = v2 + v3"}, {6, 11, "all indexed: v12 = v3*v4 + v5"},
		{8, 0xffff1f03, "M0 after s_set_gpr_idx_on"}, {9, 2, "index off"},
		{10, 1, "MODE.GPR_IDX_EN on"}, {11, 0, "MODE.GPR_IDX_EN off"},
		{12, 7, "VSKIP skipped v_mov"}, {13, 0x55, "vector instructions after VSKIP cleared"},
		{25, 0, "VSKIP skipped the global store"},
	})
	// An index that leaves the VGPRs stops the wave.
	_, _, err = runRare(t, "s_set_gpr_idx_on 10, gpr_idx(SRC0)\nv_mov_b32 v1, v250\ns_endpgm\n", 1, 0, nil)
	if !errors.Is(err, ErrIllegal) || !strings.Contains(err.Error(), "indexed") {
		t.Errorf("v250 + 10: %v", err)
	}
}

// TestForkJoin: the legacy branch stack. The fork runs the half with fewer lanes first and pushes the
// other half; the join pops it; the second join continues. Masks and order worked from the pseudo-code.
func TestForkJoin(t *testing.T) {
	out, _, err := runRare(t, `
	s_mov_b64 s[70:71], s[0:1]                     ; the branch stack lives in s[4*CSP : 4*CSP+3]
	v_lshlrev_b32 v20, 2, v0
	v_mov_b32 v21, 0
	s_mov_b64 s[50:51], exec
	s_getreg_b32 s40, hwreg(HW_REG_MODE, 29, 3)    ; saved CSP (0)
	s_mov_b32 s60, 0
	v_mov_b32 v1, 0
	v_cmp_gt_u32 vcc, 10, v0                       ; pass: lanes 0-9 (10 < 54 failing): pass runs first
	s_cbranch_i_fork vcc, taken1
	v_mov_b32 v1, 1
	s_lshl_b32 s60, s60, 4
	s_or_b32 s60, s60, 1
	s_branch join1
taken1:
	s_getreg_b32 s41, hwreg(HW_REG_MODE, 29, 3)    ; CSP 1 inside
	s_mov_b64 s[52:53], exec
	s_mov_b64 s[54:55], s[0:1]                     ; the pushed entry: the other lanes' mask
	s_mov_b64 s[56:57], s[2:3]                     ; and the fall-through PC
	v_mov_b32 v1, 2
	s_lshl_b32 s60, s60, 4
	s_or_b32 s60, s60, 2
join1:
	s_cbranch_join s40
	s_mov_b64 exec, s[50:51]
	; g_fork with pass lanes 0-59 (60 > 4 failing): the failing half runs first at PC+4
	s_mov_b32 s61, 0
	v_cmp_gt_u32 s[44:45], 60, v0
	s_getpc_b64 s[46:47]
pc2:
	s_add_u32 s46, s46, taken2-pc2
	s_addc_u32 s47, s47, 0
	s_cbranch_g_fork s[44:45], s[46:47]
	v_add_u32 v1, 10, v1
	s_lshl_b32 s61, s61, 4
	s_or_b32 s61, s61, 1
	s_branch join2
taken2:
	v_add_u32 v1, 20, v1
	s_lshl_b32 s61, s61, 4
	s_or_b32 s61, s61, 2
join2:
	s_cbranch_join s40
	s_mov_b64 exec, s[50:51]
	; uniform: every lane passes, a plain jump without a push
	s_mov_b64 s[44:45], -1
	s_getpc_b64 s[46:47]
pc3:
	s_add_u32 s46, s46, done-pc3
	s_addc_u32 s47, s47, 0
	s_cbranch_g_fork s[44:45], s[46:47]
	s_mov_b32 s62, 1                               ; skipped
	s_branch done
done:
	s_getreg_b32 s42, hwreg(HW_REG_MODE, 29, 3)
	global_store_dword v20, v1, s[70:71]
	v_mov_b32 v2, s60
	v_mov_b32 v3, s61
	v_mov_b32 v4, s41
	v_mov_b32 v5, s42
	v_mov_b32 v6, s52
	v_mov_b32 v7, s53
	global_store_dwordx4 v21, v[2:5], s[70:71] offset:256
	global_store_dwordx2 v21, v[6:7], s[70:71] offset:272
	v_mov_b32 v8, s54
	v_mov_b32 v9, s55
	v_mov_b32 v10, s56
	v_mov_b32 v11, s57
	global_store_dwordx4 v21, v[8:11], s[70:71] offset:288
	s_endpgm
`, 64, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for l := 0; l < 64; l++ {
		want := uint32(1) // fork 1: lanes 0-9 took the branch (2), the rest fell through (1)
		if l < 10 {
			want = 2
		}
		if l < 60 { // fork 2: lanes 0-59 branch (+20), 60-63 fall through (+10)
			want += 20
		} else {
			want += 10
		}
		if out[l] != want {
			t.Errorf("lane %d: v1 = %d, want %d", l, out[l], want)
		}
	}
	checkWords(t, out, []wantWord{
		{64, 0x21, "fork 1: taken (2) then not taken (1)"}, {65, 0x12, "fork 2: not taken (1) then taken (2)"},
		{66, 1, "CSP inside the first path"}, {67, 0, "CSP after the joins and the uniform fork"},
		{68, 0x3ff, "EXEC of the first path (lanes 0-9)"}, {69, 0, "EXEC high"},
		{72, 0xfffffc00, "pushed mask low (lanes 10-31)"}, {73, 0xffffffff, "pushed mask high"},
		// s_mov_b64, v_lshlrev, v_mov, s_mov_b64, s_getreg, s_mov, v_mov, v_cmp (8 x 4 bytes), the fork
		{74, 0x1100 + 9*4, "pushed PC: the instruction after s_cbranch_i_fork"}, {75, 0, "pushed PC high"},
	})
}

// TestRareControl: s_rfe_b64 (a jump to S0), s_sethalt, s_sendmsg(MSG_INTERRUPT) (counted, passed to the
// callback with M0[23:0], the wave goes on), other messages and s_sendmsghalt (stop), s_endpgm_saved and
// s_endpgm_ordered_ps_done (end the wave).
func TestRareControl(t *testing.T) {
	var got []Interrupt
	out, st, err := runRare(t, `
	v_mov_b32 v0, 0
	v_mov_b32 v1, 1
	s_getpc_b64 s[2:3]
pc:
	s_add_u32 s2, s2, there-pc
	s_addc_u32 s3, s3, 0
	s_rfe_b64 s[2:3]
	v_mov_b32 v1, 2                                ; skipped
there:
	s_sethalt 0
	s_mov_b32 m0, 0x12345678
	s_sendmsg sendmsg(MSG_INTERRUPT)
	global_store_dword v0, v1, s[0:1]
	s_getpc_b64 s[2:3]
pc2:
	s_add_u32 s2, s2, there2-pc2
	s_addc_u32 s3, s3, 0
	s_rfe_restore_b64 s[2:3], s4
	v_mov_b32 v1, 3
there2:
	global_store_dword v0, v1, s[0:1] offset:4
	s_endpgm_saved
	global_store_dword v0, v1, s[0:1] offset:8      ; not reached
	s_endpgm
`, 1, 0, func(_ *flatMem, p *DispatchParams) { p.Interrupt = func(i Interrupt) { got = append(got, i) } })
	if err != nil {
		t.Fatal(err)
	}
	if out[0] != 1 || out[1] != 1 || out[2] != 0 {
		t.Errorf("rfe/endpgm_saved: %#x %#x %#x, want 1 1 0", out[0], out[1], out[2])
	}
	// the s_sendmsg follows seven 4-byte instructions and two 8-byte ones (the literals): 0x1100 + 0x2c
	if st.Interrupts != 1 || len(got) != 1 || got[0].Data != 0x345678 || got[0].Wave != 0 || got[0].PC != 0x112c {
		t.Errorf("interrupts: %d %+v", st.Interrupts, got)
	}
	out, _, err = runRare(t, "v_mov_b32 v0, 0\nv_mov_b32 v1, 9\ns_endpgm_ordered_ps_done\nglobal_store_dword v0, v1, s[0:1]\ns_endpgm\n", 1, 0, nil)
	if err != nil || out[0] != 0 {
		t.Errorf("s_endpgm_ordered_ps_done: %v %#x", err, out[0])
	}
	for _, c := range []struct {
		src, want string
		is        error
	}{
		{"s_sethalt 1", "halted", ErrHalted},
		{"s_sendmsghalt sendmsg(MSG_INTERRUPT)", "halted", ErrHalted},
		{"s_sendmsg sendmsg(MSG_GS, GS_OP_EMIT, 0)", "MSG_GS", ErrUnimplemented},
		{"s_sendmsg sendmsg(MSG_SAVEWAVE)", "MSG_SAVEWAVE", ErrUnimplemented},
	} {
		_, st, err := runRare(t, c.src+"\ns_endpgm\n", 1, 0, nil)
		var we *WaveError
		if !errors.Is(err, c.is) || !errors.As(err, &we) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.src, err)
		}
		if strings.HasPrefix(c.src, "s_sendmsghalt") && st.Interrupts != 1 {
			t.Errorf("%s: %d interrupts", c.src, st.Interrupts)
		}
	}
}
