package shader

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestOneLaneRunMatches: turn's run of consecutive one-lane VALU instructions (v32own, v32run)
// gives the registers and instruction count of the general routines (oneLanePath off), for f32
// and integer operations on VGPR, SGPR, inline and literal sources under each FP_DENORM f32
// setting, in a loop whose runs are cut by scalar instructions, a branch and the turn length.
func TestOneLaneRunMatches(t *testing.T) {
	var src string
	for i, mode := range []int{3, 2, 1, 0} { // FP_DENORM f32 bits: kept, inputs, outputs, both flushed
		src += "\ts_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), " + string(rune('0'+mode)) + "\n"
		src += `
	v_mov_b32 v1, 0x00400001
	v_mov_b32 v2, 0x80000003
	v_cvt_f32_u32 v3, v0
	s_mov_b32 s4, 0x3f800001
	s_mov_b32 s5, 3
L` + string(rune('0'+i)) + `:
	v_add_f32 v4, v1, v2
	v_mul_f32 v5, s4, v3
	v_fma_f32 v6, v1, s4, v2
	v_mul_f32 v7, 0x00000005, v1
	v_sub_f32 v8, v2, v1
	v_exp_f32 v9, v5
	v_log_f32 v10, v5
	v_add_u32 v11, s5, v11
	v_xor_b32 v12, v11, v3
	v_mad_u32_u24 v13, v12, 7, v13
	v_max_f32 v14, v2, v1
	v_mul_f32 v1, 0.5, v1
	v_add_f32 v3, 1.0, v3
	v_rcp_f32 v15, v3
	v_sqrt_f32 v16, v5
	v_fma_f32 v17, v16, v15, v17
	s_sub_u32 s5, s5, 1
	v_add_f32 v18, v18, v4
	s_cmp_lg_u32 s5, 0
	s_cbranch_scc1 L` + string(rune('0'+i)) + `
	v_mov_b32 v20, ` + itoa(80*i) + `
`
		for r := 1; r <= 18; r++ {
			src += "\tglobal_store_dword v20, v" + itoa(r) + ", s[0:1] offset:" + itoa(4*r) + "\n"
		}
	}
	src += "\ts_endpgm\n"
	code := asm(t, src)
	run := func(one bool) ([]byte, uint64) {
		oneLanePath = one
		defer func() { oneLanePath = true }()
		m, st, err := runAsm(t, code, 1, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 0x1000)
		m.Read(asmOut, b)
		return b, st.WaveInstructions
	}
	got, n := run(true)
	want, wn := run(false)
	if n != wn || !bytes.Equal(got, want) {
		t.Fatalf("one-lane run: %d instructions, %x...; general routines: %d, %x...", n, got[:64], wn, want[:64])
	}
	nonzero := 0
	for i := 0; i < 320; i += 4 {
		if !bytes.Equal(want[i:i+4], []byte{0, 0, 0, 0}) {
			nonzero++
		}
	}
	if nonzero < 40 {
		t.Fatalf("%d words stored", nonzero)
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// TestV32Tagged: the operations v32tag marked (v_add_f32, v_mul_f32) compute inline what their
// lane functions do, for random operands and special values (NaNs, infinities, denormals, zeros).
func TestV32Tagged(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	special := []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffc00001, 1, 0x807fffff, 0x3f800000, 0x7f7fffff, 0x00800000}
	tagged := map[uint8]int{}
	for i := range opTab {
		s := opTab[i].v32
		if s == nil || s.op == v32Call {
			continue
		}
		tagged[s.op]++
		for i := 0; i < 1<<16; i++ {
			a, b, c := rnd.Uint32(), rnd.Uint32(), rnd.Uint32()
			if i < len(special)*len(special) {
				a, b = special[i/len(special)], special[i%len(special)]
			}
			if got, want := v32opResult(s.op, a, b), s.f(a, b, c); got != want {
				t.Fatalf("op %d (%#x, %#x): %#x, f gives %#x", s.op, a, b, got, want)
			}
		}
	}
	if tagged[v32Add] != 1 || tagged[v32Mul] != 1 {
		t.Fatalf("tagged operations %v", tagged)
	}
}
