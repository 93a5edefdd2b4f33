package shader

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// sccKeepers are scalar instructions whose SCC column in the Vega ISA's SOP1/SOP2/SOPK/SMEM tables
// is empty: they leave SCC as it was. Each is run twice, after SCC was set to 1 and after it was
// cleared. s_movk_i32 cleared SCC until 2026-12-03: rocPRIM's radix sort (the sort_and_scatter
// kernel of radix_sort_pairs, HIP corpus `rocprim`) has clang schedule one between s_cmp_gt_u32
// and the s_cselect_b64 that reads it, so the block sort ran over no bits and the scatter wrote
// 16 GiB past its output.
var sccKeepers = []string{
	"s_movk_i32 s20, 0x8123",
	"s_cmovk_i32 s20, 5",
	"s_mulk_i32 s20, 3",
	"s_getreg_b32 s20, hwreg(HW_REG_MODE)",
	"s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s21", // s21 holds MODE's rounding bits (unchanged)
	"s_mov_b32 s20, 0",
	"s_mov_b64 s[20:21], 0",
	"s_cmov_b32 s20, 7",
	"s_cmov_b64 s[20:21], 7",
	"s_brev_b32 s20, s22",
	"s_brev_b64 s[20:21], s[22:23]",
	"s_ff0_i32_b32 s20, s22",
	"s_ff0_i32_b64 s20, s[22:23]",
	"s_ff1_i32_b32 s20, s22",
	"s_ff1_i32_b64 s20, s[22:23]",
	"s_flbit_i32_b32 s20, s22",
	"s_flbit_i32_b64 s20, s[22:23]",
	"s_flbit_i32 s20, s22",
	"s_flbit_i32_i64 s20, s[22:23]",
	"s_sext_i32_i8 s20, s22",
	"s_sext_i32_i16 s20, s22",
	"s_bitset0_b32 s20, 3",
	"s_bitset1_b32 s20, 3",
	"s_bitset0_b64 s[20:21], 3",
	"s_bitset1_b64 s[20:21], 3",
	"s_getpc_b64 s[20:21]",
	"s_movrels_b32 s20, s22",
	"s_movreld_b32 s20, s22",
	"s_bitreplicate_b64_b32 s[20:21], s22",
	"s_cselect_b32 s20, 1, 2",
	"s_cselect_b64 s[20:21], -1, 0",
	"s_bfm_b32 s20, 5, 3",
	"s_bfm_b64 s[20:21], 5, 3",
	"s_mul_i32 s20, s22, s22",
	"s_mul_hi_u32 s20, s22, s22",
	"s_mul_hi_i32 s20, s22, s22",
	"s_pack_ll_b32_b16 s20, s22, s22",
	"s_pack_lh_b32_b16 s20, s22, s22",
	"s_pack_hh_b32_b16 s20, s22, s22",
	"s_load_dword s20, s[0:1], 0x0",
	"v_readfirstlane_b32 s20, v0",
	"v_readlane_b32 s20, v0, 1",
	"v_cmp_eq_u32_e64 s[20:21], 0, v0",
	"s_nop 0",
	"s_waitcnt lgkmcnt(0)",
	"s_sleep 0",
	"s_setprio 0",
}

// TestScalarSCCKept: every instruction of sccKeepers leaves SCC as it found it, both ways.
func TestScalarSCCKept(t *testing.T) {
	var src strings.Builder
	src.WriteString("s_mov_b32 m0, 0\ns_mov_b32 s22, 0x80f00f01\ns_mov_b32 s23, 0x12345678\n")
	src.WriteString("s_getreg_b32 s21, hwreg(HW_REG_MODE, 0, 4)\n")
	for i, op := range sccKeepers {
		for k, set := range []string{"s_cmp_eq_u32 s22, s22", "s_cmp_lg_u32 s22, s22"} {
			fmt.Fprintf(&src, "%s\n%s\ns_cselect_b32 s24, 1, 2\ns_store_dword s24, s[0:1], %#x\n", set, op, 8*i+4*k)
		}
	}
	src.WriteString("s_waitcnt lgkmcnt(0)\ns_endpgm\n")
	got := runAsmBytes(t, asm(t, src.String()), 64, 0, 8*len(sccKeepers))
	for i, op := range sccKeepers {
		after1, after0 := binary.LittleEndian.Uint32(got[8*i:]), binary.LittleEndian.Uint32(got[8*i+4:])
		if after1 != 1 || after0 != 2 {
			t.Errorf("%s: SCC 1 -> %d, SCC 0 -> %d (1 is set, 2 clear; want 1 and 2)", op, 2-after1, 2-after0)
		}
	}
}

// TestScalarSCCDefined: instructions that define SCC set it from their result as the Vega ISA
// says, whatever SCC was before (each run after SCC = 1 and after SCC = 0).
func TestScalarSCCDefined(t *testing.T) {
	for _, tc := range []struct {
		op   string
		want bool
	}{
		{"s_cmpk_eq_u32 s22, 0xf01", false},
		{"s_cmpk_lg_u32 s22, 0xf01", true},
		{"s_cmpk_lt_i32 s22, 0", true}, // s22 is negative
		{"s_addk_i32 s20, 1", false},   // s20 = 5 + 1: no overflow
		{"s_addk_i32 s25, 1", true},    // 0x7fffffff + 1 overflows
		{"s_not_b32 s20, -1", false},
		{"s_not_b32 s20, 0", true},
		{"s_bcnt1_i32_b32 s20, 0", false},
		{"s_bcnt1_i32_b32 s20, s22", true},
		{"s_bcnt0_i32_b32 s20, -1", false},
		{"s_abs_i32 s20, 0", false},
		{"s_abs_i32 s20, s22", true},
		{"s_and_b32 s20, s22, 0", false},
		{"s_or_b32 s20, s22, 0", true},
		{"s_lshl_b32 s20, s22, 31", true},
		{"s_lshr_b32 s20, 1, 1", false},
		{"s_bfe_u32 s20, s22, 0x80000", true}, // 8 bits from bit 0: 0x01
		{"s_add_u32 s20, -1, 1", true},
		{"s_add_u32 s20, 1, 1", false},
		{"s_sub_u32 s20, 0, 1", true},
		{"s_min_u32 s20, 1, 2", true},
		{"s_max_u32 s20, 1, 2", false},
		{"s_absdiff_i32 s20, 3, 3", false},
		{"s_lshl1_add_u32 s20, -1, 0", true}, // carry out of the shift-add
	} {
		t.Run(tc.op, func(t *testing.T) {
			var src strings.Builder
			src.WriteString("s_mov_b32 s22, 0x80f00f01\n")
			for k, set := range []string{"s_cmp_eq_u32 s22, s22", "s_cmp_lg_u32 s22, s22"} {
				// s20 = 5, s25 = 0x7fffffff before each run
				fmt.Fprintf(&src, "s_mov_b32 s20, 5\ns_brev_b32 s25, -2\n%s\n%s\ns_cselect_b32 s24, 1, 2\ns_store_dword s24, s[0:1], %#x\n", set, tc.op, 4*k)
			}
			src.WriteString("s_waitcnt lgkmcnt(0)\ns_endpgm\n")
			got := runAsmBytes(t, asm(t, src.String()), 64, 0, 8)
			want := uint32(2)
			if tc.want {
				want = 1
			}
			for k := range 2 {
				if v := binary.LittleEndian.Uint32(got[4*k:]); v != want {
					t.Errorf("after SCC = %d: SCC %v, want %v", 1-k, v == 1, tc.want)
				}
			}
		})
	}
}
