package shader

import (
	"fmt"
	"testing"
)

// TestPollingWaveYields: wave 1 of a group spins on a flag that wave 0 sets after a loop of about
// 24000 instructions, once on an LDS flag and once on a global flag read with GLC. A spinning wave
// gives up its turn at each s_waitcnt after its second read of the flag (poll.go), so the group
// executes little more than wave 0's loop; a spinner that kept its 256-instruction turns executed
// about as many instructions as wave 0 (checked: about 48000 in all before poll.go).
func TestPollingWaveYields(t *testing.T) {
	for _, tc := range []struct{ name, read, wait string }{
		{"lds", "ds_read_b32 v2, v1", "s_waitcnt lgkmcnt(0)"},
		{"global glc", "global_load_dword v2, v1, s[0:1] glc", "s_waitcnt vmcnt(0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := fmt.Sprintf(`
	v_readfirstlane_b32 s2, v0
	s_lshr_b32 s2, s2, 6
	v_mov_b32 v1, 0
	s_cmp_eq_u32 s2, 0
	s_cbranch_scc0 waiter
	s_mov_b32 s3, 8000
loop:
	s_sub_u32 s3, s3, 1
	s_cmp_lg_u32 s3, 0
	s_cbranch_scc1 loop
	v_mov_b32 v2, 1
	ds_write_b32 v1, v2
	global_store_dword v1, v2, s[0:1]
	s_waitcnt vmcnt(0) lgkmcnt(0)
	s_endpgm
waiter:
	%s
	%s
	v_cmp_eq_u32 vcc, 0, v2
	s_cbranch_vccnz waiter
	s_endpgm
`, tc.read, tc.wait)
			_, st, err := runAsm(t, asm(t, src), 128, 64, func(_ *flatMem, p *DispatchParams) { p.MaxWaveInstructions = 1 << 20 })
			if err != nil {
				t.Fatal(err)
			}
			if st.WaveInstructions > 30000 {
				t.Errorf("%d wave instructions: the spinning wave kept its turns (wave 0 alone runs about 24000)", st.WaveInstructions)
			}
			t.Logf("%d wave instructions", st.WaveInstructions)
		})
	}
}
