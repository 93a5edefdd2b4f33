package shader

import (
	"encoding/binary"
	"errors"
	"testing"
)

// TestTrapHandler: with a second-level trap handler (a debugged process), s_trap enters it
// privileged with cwsr_trap_gfx9.asm's TTMPs (TTMP0/1 the s_trap's PC and the trap id in
// TTMP1[23:16]), MSG_GET_DOORBELL gives the queue's doorbell in EXEC_LO, the handler's
// MSG_INTERRUPT is marked privileged, and s_rfe returns to user mode past the s_trap. Without one,
// s_trap 1 stops the wave (TrapError) and a user-mode interrupt is not privileged.
func TestTrapHandler(t *testing.T) {
	main := asm(t, `
	v_mov_b32 v0, 0
	v_mov_b32 v4, 0
	s_trap 1
	v_mov_b32 v5, 7
	s_mov_b32 m0, 0x55
	s_sendmsg sendmsg(MSG_INTERRUPT)
	global_store_dword v0, v4, s[0:1]
	global_store_dword v0, v5, s[0:1] offset:4
	s_endpgm
`)
	handler := asm(t, `
	s_getreg_b32 ttmp14, hwreg(HW_REG_TRAPSTS)
	s_mov_b32 ttmp2, exec_lo
	s_mov_b32 exec_lo, 0x80000000
	s_sendmsg 10
	s_and_b32 ttmp3, exec_lo, 0x3ff
	s_mov_b32 exec_lo, ttmp2
	s_or_b32 ttmp3, ttmp3, 0x800
	s_mov_b32 ttmp4, m0
	s_mov_b32 m0, ttmp3
	s_sendmsg sendmsg(MSG_INTERRUPT)
	s_mov_b32 m0, ttmp4
	v_mov_b32 v4, ttmp1
	s_add_u32 ttmp0, ttmp0, 4
	s_addc_u32 ttmp1, ttmp1, 0
	s_and_b32 ttmp1, ttmp1, 0xffff
	s_setreg_b32 hwreg(HW_REG_STATUS), ttmp12
	s_rfe_b64 ttmp[0:1]
`)
	code := append(append([]uint32{}, main...), handler...)
	var got []Interrupt
	m, _, err := runAsm(t, code, 1, 0, func(_ *flatMem, p *DispatchParams) {
		p.Interrupt = func(i Interrupt) { got = append(got, i) }
		p.Doorbell = 0x23
		p.Trap = &TrapHandler{TBA: 0x1100 + 4*uint64(len(main)), TMA: 0x9000}
	})
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	m.Read(asmOut, b)
	if v4, v5 := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]); v4 != 1<<16 || v5 != 7 {
		t.Errorf("ttmp1 in the handler %#x (want trap id 1 << 16), after the trap %d (want 7)", v4, v5)
	}
	if len(got) != 2 || !got[0].Priv || got[0].Data != 0x823 || got[1].Priv || got[1].Data != 0x55 {
		t.Errorf("interrupts %+v", got)
	}
	_, _, err = runAsm(t, main, 1, 0, nil)
	var te *TrapError
	if !errors.As(err, &te) || te.Code != 1 {
		t.Errorf("s_trap 1 without a handler: %v", err)
	}
}

// TestAddressWatch: an access a watch point matches (mode and masked address) traps after it has
// completed, with TRAPSTS.EXCP_HI for watch point 2 (EXCP[7] would be point 0) and TTMP0/1 at the
// next instruction; accesses of another kind do not; without a second-level handler nothing traps
// and an s_trap is stepped over.
func TestAddressWatch(t *testing.T) {
	main := asm(t, `
	v_mov_b32 v0, 0
	v_mov_b32 v6, 0
	v_mov_b32 v10, 0
	global_load_dword v7, v0, s[0:1] offset:64
	s_waitcnt vmcnt(0)
	global_store_dword v0, v0, s[0:1] offset:64
	v_mov_b32 v8, 5
	global_store_dword v0, v6, s[0:1]
	global_store_dword v0, v8, s[0:1] offset:4
	global_store_dword v0, v10, s[0:1] offset:8
	s_trap 4
	s_endpgm
`)
	handler := asm(t, `
	s_getreg_b32 ttmp14, hwreg(HW_REG_TRAPSTS)
	v_or_b32 v6, ttmp14, v6
	v_add_u32 v10, v10, 1
	s_bfe_u32 ttmp2, ttmp1, 0x80010
	s_cmp_eq_u32 ttmp2, 0
	s_cbranch_scc1 exit
	s_add_u32 ttmp0, ttmp0, 4
	s_addc_u32 ttmp1, ttmp1, 0
exit:
	s_and_b32 ttmp1, ttmp1, 0xffff
	s_rfe_b64 ttmp[0:1]
`)
	code := append(append([]uint32{}, main...), handler...)
	watch := func(mode uint32) []Watch {
		return []Watch{{Mode: WatchOff}, {Mode: WatchOff}, {Addr: asmOut + 64, Mask: 0xffffffff, Mode: mode}, {Mode: WatchOff}}
	}
	tba := 0x1100 + 4*uint64(len(main))
	for _, c := range []struct {
		name       string
		tba        uint64
		mode       uint32
		sts, traps uint32
	}{
		{"read watch: the load traps", tba, 0, 1 << 13, 1},
		{"write watch: the store traps", tba, 1, 1 << 13, 1},
		{"all: both", tba, 3, 1 << 13, 2},
		{"atomic watch: neither", tba, 2, 0, 0},
		{"no second level", 0, 3, 0, 0},
	} {
		m, _, err := runAsm(t, code, 1, 0, func(_ *flatMem, p *DispatchParams) {
			p.Trap = &TrapHandler{TBA: c.tba, Watch: watch(c.mode)}
		})
		b := make([]byte, 12)
		m.Read(asmOut, b)
		if sts, after, traps := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:]); err != nil || sts != c.sts || after != 5 || traps != c.traps {
			t.Errorf("%s: TRAPSTS %#x (want %#x), after %d, traps %d (want %d), %v", c.name, sts, c.sts, after, traps, c.traps, err)
		}
	}
}
