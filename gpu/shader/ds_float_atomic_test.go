package shader

import (
	"strings"
	"testing"
)

// TestDSFloatAtomics: ds_add_f64/_f32 (and their _rtn forms) add as floating point and ds_min/max_f32
// and _f64 compare as floating point; they were decoded as the integer forms (HIP's atomicAdd on a
// __shared__ double is ds_add_f64 on gfx90a: 256 adds of multiples of 0.125 came out -1.5e-146).
// 64 lanes add 1.5 (f64) and 0.25 (f32) to LDS words holding 1.0; lane i offers -i and i as the
// float minimum and maximum.
func TestDSFloatAtomics(t *testing.T) {
	out, _, err := runRare(t, `
	v_mov_b32 v20, 0
	v_mov_b32 v10, 0
	v_mov_b32 v11, 0x3ff00000          ; 1.0 (f64)
	v_mov_b32 v12, 0x3f800000          ; 1.0 (f32)
	v_mov_b32 v13, 0                   ; 0.0 (f32)
	v_mov_b32 v14, 0                   ; 0.0 (f64)
	v_mov_b32 v15, 0
	v_cmp_eq_u32 vcc, 0, v0
	s_and_saveexec_b64 s[2:3], vcc
	ds_write_b64 v20, v[10:11]                 ; [0]: f64 sum
	ds_write_b64 v20, v[10:11] offset:8        ; [8]: f64 sum, _rtn
	ds_write_b32 v20, v12 offset:16            ; [16]: f32 sum
	ds_write_b32 v20, v12 offset:20            ; [20]: f32 sum, _rtn
	ds_write_b32 v20, v13 offset:24            ; [24]: f32 min
	ds_write_b64 v20, v[14:15] offset:32       ; [32]: f64 max
	s_or_b64 exec, exec, s[2:3]
	s_waitcnt lgkmcnt(0)
	s_barrier
	v_mov_b32 v2, 0
	v_mov_b32 v3, 0x3ff80000           ; 1.5
	ds_add_f64 v20, v[2:3]
	ds_add_rtn_f64 v[4:5], v20, v[2:3] offset:8
	v_mov_b32 v6, 0x3e800000           ; 0.25
	ds_add_f32 v20, v6 offset:16
	ds_add_rtn_f32 v7, v20, v6 offset:20
	v_cvt_f32_u32 v8, v0
	v_xor_b32 v8, 0x80000000, v8       ; -i
	ds_min_f32 v20, v8 offset:24
	v_cvt_f64_u32 v[8:9], v0
	ds_max_f64 v20, v[8:9] offset:32
	s_waitcnt lgkmcnt(0)
	s_barrier
	v_cmp_eq_u32 vcc, 0, v0
	s_and_saveexec_b64 s[2:3], vcc
	ds_read_b128 v[10:13], v20
	ds_read_b128 v[14:17], v20 offset:16
	ds_read_b64 v[18:19], v20 offset:32
	s_waitcnt lgkmcnt(0)
	global_store_dwordx4 v20, v[10:13], s[0:1]
	global_store_dwordx4 v20, v[14:17], s[0:1] offset:16
	global_store_dwordx2 v20, v[18:19], s[0:1] offset:32
	s_or_b64 exec, exec, s[2:3]
	; lane 0's returned values: some prefix of the sums, a multiple of 1.5 (0.25) above 1
	v_mov_b32 v21, 0
	global_store_dwordx2 v21, v[4:5], s[0:1] offset:64
	global_store_dword v21, v7, s[0:1] offset:72
	s_endpgm
`, 64, 64, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkWords(t, out, []wantWord{
		{0, 0, "f64 sum lo"}, {1, 0x40584000, "f64 sum 1 + 64*1.5 = 97"},
		{2, 0, "f64 _rtn sum lo"}, {3, 0x40584000, "f64 _rtn sum = 97"},
		{4, 0x41880000, "f32 sum 1 + 64*0.25 = 17"}, {5, 0x41880000, "f32 _rtn sum = 17"},
		{6, 0xc27c0000, "f32 min -63"}, {8, 0, "f64 max lo"}, {9, 0x404f8000, "f64 max 63"},
	})
	rd := uint64(out[16]) | uint64(out[17])<<32
	if x := f64(rd); x < 1 || x > 95.5 || (x-1)/1.5 != float64(int((x-1)/1.5)) {
		t.Errorf("ds_add_rtn_f64 returned %v: not a partial sum 1 + k*1.5", x)
	}
	if x := f32(out[18]); x < 1 || x > 16.75 || (x-1)/0.25 != float32(int((x-1)/0.25)) {
		t.Errorf("ds_add_rtn_f32 returned %v: not a partial sum 1 + k*0.25", x)
	}
}

// TestGlobalAtomicPkAddF16: global_atomic_pk_add_f16 adds both binary16 halves, each rounded once
// to nearest even (HIP's __half2 atomic add with -munsafe-fp-atomics; it stopped the wave as
// unimplemented). 64 lanes add (lo 1.0, hi 0.5) to a zero word; lane 0 adds (2048, 1.0) to
// (1.0, 1.0): 2049 is a tie between 2048 and 2050 and rounds to the even 2048.
func TestGlobalAtomicPkAddF16(t *testing.T) {
	out, _, err := runRare(t, `
	v_mov_b32 v20, 0
	v_mov_b32 v1, 0x38003c00           ; hi 0.5, lo 1.0
	global_atomic_pk_add_f16 v20, v1, s[0:1]
	v_cmp_eq_u32 vcc, 0, v0
	s_and_saveexec_b64 s[2:3], vcc
	v_mov_b32 v2, 0x3c003c00           ; (1.0, 1.0)
	global_store_dword v20, v2, s[0:1] offset:4
	s_waitcnt vmcnt(0)
	v_mov_b32 v3, 0x3c006800           ; hi 1.0, lo 2048
	global_atomic_pk_add_f16 v20, v3, s[0:1] offset:4
	s_or_b64 exec, exec, s[2:3]
	s_endpgm
`, 64, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkWords(t, out, []wantWord{
		{0, 0x50005400, "64 x (1.0, 0.5) = (64, 32)"},
		{1, 0x40006800, "(1, 1) + (2048, 1) = (2048 rounded to even, 2)"},
	})
}

// TestEveryMemoryAtomicHasItsOperation: each buffer_/global_/flat_atomic_* and s_atomic_* /
// s_buffer_atomic_* opcode of the tables has a read-modify-write function (atomicOp). The opcode
// records test (TestOpRecords) counts these as implemented through the generic memory routines,
// so an atomic whose name atomicOp does not know (pk_add_f16 until 2026-12-03) passed it and
// stopped waves at run time.
func TestEveryMemoryAtomicHasItsOperation(t *testing.T) {
	n := 0
	for op, name := range opNames {
		if name == "" || strings.HasPrefix(name, "ds_") {
			continue // LDS atomics: ds.go's own table
		}
		if strings.HasPrefix(name, "s_atomic_") || strings.HasPrefix(name, "s_buffer_atomic_") {
			a := strings.TrimPrefix(strings.TrimPrefix(name, "s_buffer_atomic_"), "s_atomic_")
			wide := strings.HasSuffix(a, "_x2")
			if atomicOp(strings.TrimSuffix(a, "_x2"), wide) == nil {
				t.Errorf("%s (op %d): no atomic operation %q", name, op, a)
			}
			n++
			continue
		}
		m, ok := parseMemOp(name)
		if !ok || m.atomic == "" {
			continue
		}
		if atomicOp(m.atomic, m.wide) == nil {
			t.Errorf("%s (op %d): no atomic operation %q", name, op, m.atomic)
		}
		n++
	}
	if n < 60 {
		t.Errorf("only %d atomic opcodes found", n)
	}
	t.Logf("%d memory atomic opcodes", n)
}
