package shader

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestInline64Constants: a float inline constant read as a 64-bit operand is the f64 value, for
// integer operations too (LLVM's isInlinableLiteral64 serves both, and clang relies on it: at -O0
// it materializes the 1.0 of the f64 division sequence as s_mov_b64 s[8:9], 1.0). Until
// 2026-12-03 an integer 64-bit operand read the f32 bits zero-extended, so every f64 division of
// a HIP program built with -O0 came out wrong (1.0 / 3.0 = 7.4e-17; found by scripts/hip-exprs.py
// at -O0).
func TestInline64Constants(t *testing.T) {
	consts := []struct {
		text string
		v    float64
	}{{"0.5", 0.5}, {"-0.5", -0.5}, {"1.0", 1}, {"-1.0", -1}, {"2.0", 2}, {"-2.0", -2}, {"4.0", 4}, {"-4.0", -4},
		{"0.15915494309189532", 0.15915494309189532}} // 1/(2 pi): the f64 bits 0x3fc45f306dc9c882
	ops := []string{
		"s_mov_b64 s[20:21], %s",
		"s_and_b64 s[20:21], %s, -1",
		"s_cselect_b64 s[20:21], %s, 0", // SCC is 1 (s_cmp_eq_u32 s0, s0 before each)
		"v_lshlrev_b64 v[2:3], 0, %s\nv_readfirstlane_b32 s20, v2\nv_readfirstlane_b32 s21, v3",
		"v_add_f64 v[2:3], 0, %s\nv_readfirstlane_b32 s20, v2\nv_readfirstlane_b32 s21, v3",
	}
	var src strings.Builder
	n := 0
	for _, op := range ops {
		for _, c := range consts {
			fmt.Fprintf(&src, "s_cmp_eq_u32 s0, s0\n"+op+"\ns_store_dwordx2 s[20:21], s[0:1], %#x\n", c.text, 8*n)
			n++
		}
	}
	src.WriteString("s_waitcnt lgkmcnt(0)\ns_endpgm\n")
	got := runAsmBytes(t, asm(t, src.String()), 64, 0, 8*n)
	n = 0
	for _, op := range ops {
		for _, c := range consts {
			v := binary.LittleEndian.Uint64(got[8*n:])
			if want := math.Float64bits(c.v); v != want {
				t.Errorf("%s: %#016x, want %#016x (%v)", strings.ReplaceAll(fmt.Sprintf(op, c.text), "\n", "; "), v, want, c.v)
			}
			n++
		}
	}
}
