package shader

import "testing"

// TestCndmaskModsAndUnsignedClamp: v_cndmask_b32_e64 applies its sources' abs/neg (ocml's cosf
// selects -sin with it: cosf(1) came out -0.5403 when they were dropped), and VOP3 clamp saturates
// v_add_u32/v_sub_u32/v_subrev_u32 (LLVM's 64-bit ctlz adds 32 to ffbh's -1 with clamp: __clzll(0)
// came out 31).
func TestCndmaskModsAndUnsignedClamp(t *testing.T) {
	out, _, err := runRare(t, `
	v_mov_b32 v20, 0
	v_mov_b32 v1, 0xbf0a5140          ; -0.5403
	v_mov_b32 v2, 0x3f000000          ; 0.5
	s_mov_b64 vcc, 0
	v_cndmask_b32_e64 v4, -v1, v2, vcc         ; src0 selected, negated
	v_cndmask_b32_e64 v5, |v1|, v2, vcc        ; src0, abs
	s_mov_b64 vcc, -1
	v_cndmask_b32_e64 v6, v1, -v2, vcc         ; src1 selected, negated
	v_cndmask_b32_e64 v7, -v1, v2, vcc         ; src1, src0's modifier unused
	global_store_dwordx4 v20, v[4:7], s[0:1]
	v_mov_b32 v1, -1
	v_mov_b32 v2, 5
	v_add_u32_e64 v4, v1, 32 clamp             ; saturates
	v_add_u32_e64 v5, v1, 32                   ; wraps
	v_sub_u32_e64 v6, v2, 7 clamp              ; 5 - 7 -> 0
	v_subrev_u32_e64 v7, 3, v2 clamp           ; 5 - 3 = 2
	global_store_dwordx4 v20, v[4:7], s[0:1] offset:16
	v_subrev_u32_e64 v8, 7, v2 clamp           ; 5 - 7 -> 0
	v_add_u32_e64 v9, v2, 7 clamp              ; no overflow: 12
	v_sub_u32_e64 v10, v2, 7                   ; wraps
	global_store_dwordx3 v20, v[8:10], s[0:1] offset:32
	s_endpgm
`, 64, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkWords(t, out, []wantWord{
		{0, 0x3f0a5140, "cndmask -src0"}, {1, 0x3f0a5140, "cndmask |src0|"}, {2, 0xbf000000, "cndmask -src1"}, {3, 0x3f000000, "cndmask src1 plain"},
		{4, 0xffffffff, "add_u32 clamp"}, {5, 31, "add_u32 wraps"}, {6, 0, "sub_u32 clamp"}, {7, 2, "subrev_u32 clamp"},
		{8, 0, "subrev_u32 clamp underflow"}, {9, 12, "add_u32 clamp in range"}, {10, 0xfffffffe, "sub_u32 wraps"},
	})
}
