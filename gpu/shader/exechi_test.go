package shader

import "testing"

// TestExecHiOperand: operand code 127 is exec_hi (a 32-bit read of the mask's high half), not an
// inline constant; src32 once took it for one (127-128: 0xffff). Read by VOP1, VOP2 and VOP3 forms
// under a full EXEC and under one lane (the one-lane path resolves operands at decode).
func TestExecHiOperand(t *testing.T) {
	out, _, err := runRare(t, `
	v_mov_b32 v20, 0
	v_mov_b32 v4, exec_hi
	v_mov_b32 v5, exec_lo
	v_add_u32 v6, exec_hi, v20
	v_add_u32_e64 v7, exec_hi, 1
	global_store_dwordx4 v20, v[4:7], s[0:1]
	s_mov_b64 exec, 1
	v_mov_b32 v4, exec_hi
	v_mov_b32 v5, exec_lo
	v_add_u32 v6, exec_hi, v20
	v_add_u32_e64 v7, exec_hi, 1
	global_store_dwordx4 v20, v[4:7], s[0:1] offset:16
	s_endpgm
`, 64, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkWords(t, out, []wantWord{
		{0, 0xffffffff, "full: v_mov exec_hi"}, {1, 0xffffffff, "full: v_mov exec_lo"},
		{2, 0xffffffff, "full: v_add exec_hi"}, {3, 0, "full: v_add_e64 exec_hi+1"},
		{4, 0, "one lane: v_mov exec_hi"}, {5, 1, "one lane: v_mov exec_lo"},
		{6, 0, "one lane: v_add exec_hi"}, {7, 1, "one lane: v_add_e64 exec_hi+1"},
	})
}
