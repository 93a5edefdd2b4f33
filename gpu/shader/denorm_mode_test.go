package shader

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// TestDenormModeCompareConvertPacked: MODE.FP_DENORM applies to f32 compares (inputs), to
// v_cvt_f64_f32 (its f32 input) and to the packed f32 operations (inputs and results), as LLVM
// assumes when it compiles for -fgpu-flush-denormals-to-zero (HIP program denorm_ftz): with the
// f32 bits clear a denormal operand is a zero of its sign; with them set it is kept.
func TestDenormModeCompareConvertPacked(t *testing.T) {
	// The same operations under FP_DENORM 0 (flush everything), stored at 0, then under 0xf
	// (keep everything), stored at 32.
	src := `
	v_lshlrev_b32 v3, 6, v0
	v_mov_b32 v12, 0x80000001
	v_mov_b32 v13, 0x00400000`
	for _, m := range []struct{ mode, off int }{{0, 0}, {0xf, 32}} {
		src += fmt.Sprintf(`
	s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), %#x
	v_cvt_f64_f32 v[4:5], v13
	v_cvt_f64_f32 v[6:7], -v13
	v_cmp_lt_f32 s[2:3], v12, 0
	v_pk_add_f32 v[8:9], v[12:13], v[12:13]
	v_mov_b32 v10, s2
	global_store_dwordx2 v3, v[4:5], s[0:1] offset:%d
	global_store_dwordx2 v3, v[6:7], s[0:1] offset:%d
	global_store_dwordx2 v3, v[8:9], s[0:1] offset:%d
	global_store_dword v3, v10, s[0:1] offset:%d`, m.mode, m.off, m.off+8, m.off+16, m.off+24)
	}
	code := asm(t, src+"\n\ts_endpgm")
	b := runAsmBytes(t, code, 64, 0, 64*64)
	le := binary.LittleEndian
	for l := 0; l < 64; l++ {
		o := b[64*l:]
		check := func(what string, got, want uint64) {
			if got != want {
				t.Errorf("lane %d %s: %#x, want %#x", l, what, got, want)
			}
		}
		check("flush: v_cvt_f64_f32 of a denormal", le.Uint64(o[0:]), 0)
		check("flush: v_cvt_f64_f32 of its negation", le.Uint64(o[8:]), 1<<63)
		check("flush: v_pk_add_f32 lo", uint64(le.Uint32(o[16:])), 0x80000000)
		check("flush: v_pk_add_f32 hi", uint64(le.Uint32(o[20:])), 0)
		check("flush: v_cmp_lt_f32 -denormal < 0", uint64(le.Uint32(o[24:])), 0)
		check("keep: v_cvt_f64_f32 of a denormal", le.Uint64(o[32:]), 0x3800000000000000) // 2^-127
		check("keep: v_cvt_f64_f32 of its negation", le.Uint64(o[40:]), 0xb800000000000000)
		check("keep: v_pk_add_f32 lo", uint64(le.Uint32(o[48:])), 0x80000002)
		check("keep: v_pk_add_f32 hi", uint64(le.Uint32(o[52:])), 0x00800000)
		check("keep: v_cmp_lt_f32 -denormal < 0", uint64(le.Uint32(o[56:])), 0xffffffff)
	}
}
