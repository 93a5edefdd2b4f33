package shader

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// encodingSamples are instructions of every encoding the interpreter runs, with the modifiers
// that change the encoding (DPP, SDWA, VOP3 abs/neg/clamp/omod, op_sel, offsets, glc/slc).
var encodingSamples = []string{
	"s_mov_b32 s1, s2", "s_mov_b64 s[2:3], -1", "s_add_u32 s0, s1, 0x12345", "s_lshl_b32 s3, s2, 2",
	"s_movk_i32 s4, 0x1234", "s_cmp_lg_u32 s10, 0", "s_cbranch_scc1 3", "s_waitcnt vmcnt(0) lgkmcnt(0)",
	"s_load_dwordx2 s[4:5], s[0:1], 0x10", "s_load_dwordx4 s[8:11], s[4:5], 0x0",
	"s_getreg_b32 s6, hwreg(HW_REG_MODE, 4, 4)", "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 3",
	"v_mov_b32_e32 v0, s2", "v_add_f32_e32 v0, v1, v2", "v_fmac_f32_e32 v1, s2, v3", "v_cvt_f32_u32_e32 v4, v5",
	"v_cmp_gt_u32_e32 vcc, s4, v1", "v_cmp_eq_f64_e64 s[2:3], v[4:5], 0", "v_cndmask_b32_e64 v0, 0, 1, s[2:3]",
	"v_fma_f32 v0, -v1, |v2|, v3 clamp", "v_add_f32_e64 v0, v1, v2 mul:2", "v_div_scale_f32 v0, vcc, v1, v2, v1",
	"v_div_fmas_f64 v[0:1], v[2:3], v[4:5], v[6:7]", "v_mad_u64_u32 v[0:1], s[2:3], v4, v5, v[6:7]",
	"v_add_co_u32_e32 v0, vcc, s2, v1", "v_addc_co_u32_e32 v1, vcc, 0, v3, vcc", "v_lshlrev_b64 v[0:1], 2, v[2:3]",
	"v_pk_fma_f16 v0, v1, v2, v3", "v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7]", "v_pk_add_u16 v0, v1, v2 op_sel:[1,0]",
	"v_mov_b32_dpp v2, v1 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf",
	"v_add_u32_dpp v0, v1, v2 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1",
	"v_mov_b32_dpp v3, v1 row_bcast:15 row_mask:0xa bank_mask:0xf",
	"v_add_u16_sdwa v5, v3, v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_3 src1_sel:DWORD",
	"v_or_b32_sdwa v8, v2, v3 dst_sel:BYTE_1 dst_unused:UNUSED_PAD src0_sel:BYTE_3 src1_sel:DWORD",
	"ds_read_b32 v0, v1 offset:16", "ds_write2_b32 v1, v2, v3 offset0:1 offset1:4", "ds_add_u32 v1, v2",
	"global_load_dword v1, v[2:3], off", "global_store_dword v1, v0, s[4:5] offset:4", "global_atomic_add v0, v1, s[2:3]",
	"flat_load_dwordx2 v[0:1], v[2:3] glc", "scratch_store_dword off, v1, s2 offset:8",
	"buffer_load_dword v1, off, s[0:3], 0 offset:4", "buffer_store_dword v1, v2, s[0:3], s4 offen",
	"v_accvgpr_read_b32 v1, a2", "v_accvgpr_write_b32 a3, v4", "v_accvgpr_write_b32 a3, 5", "v_accvgpr_mov_b32 a1, a2",
	"v_mfma_f32_32x32x8f16 a[0:15], v[2:3], v[4:5], a[0:15]", "v_mfma_f32_32x32x8f16 v[0:15], v[2:3], v[4:5], v[0:15]",
	"v_mfma_f32_32x32x8f16 a[0:15], a[2:3], v[4:5], a[0:15] cbsz:1 abid:1 blgp:2",
	"v_mfma_f32_4x4x1f32 a[0:3], v0, a1, 1.0", "v_mfma_f64_16x16x4f64 v[0:7], v[2:3], v[4:5], 0",
	"v_mfma_i32_16x16x16i8 a[4:7], v1, v2, a[4:7] cbsz:2 abid:3",
	"ds_swizzle_b32 v1, v2 offset:swizzle(QUAD_PERM,1,0,3,2)", "ds_bpermute_b32 v1, v2, v3 offset:4",
	"ds_swizzle_b32 v1, v2 offset:swizzle(BITMASK_PERM,\"01pip\")", "v_readfirstlane_b32 s5, v3",
	"v_readlane_b32 s4, v1, s2", "v_writelane_b32 v1, s4, 7", "v_mbcnt_hi_u32_b32 v1, -1, v2",
	"v_cmp_class_f32_e64 s[2:3], v1, 3", "v_cmpx_class_f64_e32 vcc, v[2:3], v4", "s_bitset1_b32 s3, s4",
	// VOP3 op_sel (GFX9 16-bit opcodes: one bit per source, then the destination half) and the VOP3P
	// mixed-precision/dot forms.
	"v_fma_f16 v0, -v1, |v2|, v3 op_sel:[0,0,0,1] clamp", "v_add_i16 v0, v1, v2 op_sel:[0,0,1]",
	"v_sub_i16 v0, v1, v2 op_sel:[1,1,1] clamp", "v_mad_u32_u16 v0, v1, v2, v3 op_sel:[0,1,0,0]",
	"v_pack_b32_f16 v0, v1, v2 op_sel:[0,1,0]", "v_med3_f16 v0, v1, v2, v3 op_sel:[1,1,1,1]",
	"v_min3_u16 v0, v1, s2, 5 op_sel:[0,1,0,1]", "v_cvt_pknorm_i16_f16 v0, -v1, |v2| op_sel:[1,0,0]",
	"v_fma_mixlo_f16 v0, -v1, |v2|, -|v3| op_sel_hi:[1,1,1] clamp",
	"v_fma_mix_f32 v0, v1, v2, v3 op_sel:[1,0,1] op_sel_hi:[1,0,1]",
	"v_dot2_f32_f16 v0, v1, v2, v3 op_sel:[1,1,0] op_sel_hi:[0,0,1]", "v_dot4_i32_i8 v0, v1, v2, v3 clamp",
	"v_pk_max_f16 v0, v1, v2 neg_lo:[1,0] neg_hi:[0,1] clamp", "v_madak_f16 v0, v1, v2, 0x4000",
	"v_madmk_f16 v0, v1, 0x3c00, v2", "v_dot2c_f32_f16_e32 v0, v1, v2", "v_pk_fmac_f16_e32 v0, v1, v2",
	"s_store_dword s1, s[2:3], 0x0", "s_atomic_add s5, s[2:3], 0x10 glc", "s_atomic_cmpswap_x2 s[4:7], s[2:3], s8",
	"s_buffer_store_dwordx2 s[4:5], s[8:11], 0x4", "s_dcache_discard s[2:3], 0x0",
	"v_mov_b32_dpp v0, v1 row_newbcast:15 row_mask:0xf bank_mask:0xf",
	"v_fmac_f64_dpp v[0:1], v[2:3], v[4:5] row_newbcast:1 row_mask:0xf bank_mask:0xf",
	"v_cvt_f32_f64_dpp v0, v[2:3] row_newbcast:2 row_mask:0xf bank_mask:0xf",
	"ds_mskor_rtn_b32 v4, v9, v2, v3", "ds_wrxchg2_rtn_b32 v[10:11], v9, v7, v8 offset0:2 offset1:3", "ds_nop",
	"s_call_b64 s[30:31], 4", "s_cbranch_cdbgsys 3",
	// legacy.go, ds.go, mubuf_format.go
	"ds_write_addtid_b32 v5 offset:16", "ds_read_addtid_b32 v5 offset:16", "ds_append v3 offset:8", "ds_consume v3",
	"ds_condxchg32_rtn_b64 v[2:3], v1, v[4:5] offset:8", "ds_wrap_rtn_b32 v1, v2, v3, v4 offset:4",
	"s_set_gpr_idx_on s2, gpr_idx(SRC0,DST)", "s_set_gpr_idx_on 5, gpr_idx(SRC1,SRC2)", "s_set_gpr_idx_mode gpr_idx(SRC0,DST)",
	"s_set_gpr_idx_mode gpr_idx()", "s_set_gpr_idx_off", "s_set_gpr_idx_idx s3",
	"s_sendmsg sendmsg(MSG_INTERRUPT)", "s_sendmsg sendmsg(MSG_GS, GS_OP_EMIT, 1)", "s_sendmsg sendmsg(MSG_GS_DONE, GS_OP_NOP)",
	"s_sendmsg sendmsg(MSG_SYSMSG, SYSMSG_OP_REG_RD)", "s_sendmsg sendmsg(11, 0, 0)", "s_sendmsg 0x1234",
	"s_sendmsghalt sendmsg(MSG_INTERRUPT)", "s_sethalt 1", "s_setvskip s1, 3", "s_cbranch_join s4",
	"s_cbranch_g_fork s[2:3], s[4:5]", "s_cbranch_i_fork s[2:3], -3", "s_rfe_b64 s[2:3]", "s_rfe_restore_b64 s[2:3], s4",
	"s_endpgm_saved", "s_endpgm_ordered_ps_done", "v_cubeid_f32 v0, v1, -v2, |v3|", "v_cubema_f32 v0, s1, v2, 1.0 mul:2",
	"v_qsad_pk_u16_u8 v[0:1], v[2:3], v4, v[6:7]", "v_mqsad_u32_u8 v[0:3], v[4:5], v6, v[8:11]",
	"v_cvt_pkaccum_u8_f32 v0, v1, 2", "v_cvt_off_f32_i4_e32 v0, v1", "v_exp_legacy_f32_e64 v0, -v1 clamp",
	"v_log_legacy_f32_e32 v0, s3", "buffer_load_format_xyzw v[0:3], v4, s[8:11], 0 idxen",
	"buffer_store_format_d16_xy v1, off, s[8:11], s2 offset:16", "buffer_load_format_d16_hi_x v1, v2, s[8:11], 0 offen",
	"buffer_store_format_x v1, v[2:3], s[8:11], 0 idxen offen offset:8",
	"s_endpgm",
}

// TestEncodingsAgainstLLVMMC: llvm-mc-14 -show-encoding assembles each sample; our decoder takes the
// bytes back to an instruction of the same size and our disassembler prints llvm-mc's own text.
func TestEncodingsAgainstLLVMMC(t *testing.T) {
	if _, err := exec.LookPath("llvm-mc-14"); err != nil {
		t.Skip("skipping: llvm-mc-14 not installed (Debian package from scripts/install-deps.sh)")
	}
	cmd := exec.Command("llvm-mc-14", "-arch=amdgcn", "-mcpu=gfx90a", "-show-encoding")
	cmd.Stdin = strings.NewReader(strings.Join(encodingSamples, "\n") + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-mc-14: %v\n%s", err, out)
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		text, enc, ok := strings.Cut(line, "; encoding: [")
		if !ok {
			continue
		}
		n++
		text = strings.Join(strings.Fields(text), " ")
		var bs []byte
		for _, f := range strings.Split(strings.TrimSuffix(strings.TrimSpace(enc), "]"), ",") {
			v, err := strconv.ParseUint(strings.TrimSpace(f), 0, 8)
			if err != nil {
				t.Fatalf("%s: encoding %q", text, enc)
			}
			bs = append(bs, byte(v))
		}
		words := make([]uint32, (len(bs)+3)/4)
		for i := range bs {
			words[i/4] |= uint32(bs[i]) << (8 * (i % 4))
		}
		in, err := Decode(append(words, 0, 0))
		if err != nil {
			t.Errorf("%s: decode %x: %v", text, bs, err)
			continue
		}
		if in.Size != len(bs) {
			t.Errorf("%s: decoded size %d, encoding %d bytes", text, in.Size, len(bs))
		}
		if got := strings.Join(strings.Fields(in.String()), " "); got != text {
			t.Errorf("llvm-mc %q, ours %q", text, got)
		}
	}
	if n != len(encodingSamples) {
		t.Errorf("%d encodings for %d samples:\n%s", n, len(encodingSamples), out)
	}
}
