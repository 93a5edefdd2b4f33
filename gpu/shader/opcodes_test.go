package shader

import (
	"sort"
	"strings"
	"testing"
)

// TestRoutinesHaveOpcodes is the other direction of TestUnimplementedOpcodes: every routine registered
// by name has an opcode in a decoder table, so a routine cannot sit unreachable behind a missing table
// entry (s_memtime, s_memrealtime and s_dcache_inv/wb had routines while gen_optab.py left their
// opcodes out). The exceptions are routines of opcodes gfx90a does not have.
func TestRoutinesHaveOpcodes(t *testing.T) {
	names := map[string]bool{}
	for _, tab := range []map[uint16]opInfo{tabSOP2, tabSOPK, tabSOP1, tabSOPC, tabSOPP, tabSMEM, tabVOP2, tabVOP1,
		tabVOPC, tabVOP3, tabVOP3P, tabDS, tabFLAT, tabSCRATCH, tabSCRATCHS, tabGLOBAL, tabGLOBALS, tabMUBUF} {
		for _, in := range tab {
			names[baseName(in.Name)] = true
		}
	}
	var got []string
	for n := range execTab {
		if !names[n] {
			got = append(got, n)
		}
	}
	sort.Strings(got)
	// v_fmaak/fmamk_f32 are gfx10+ VOP2 opcodes, v_mov_b64 a gfx940 one: registered with their
	// families' routines, absent from gfx90a's tables.
	want := []string{"v_fmaak_f32", "v_fmamk_f32", "v_mov_b64"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("routines without an opcode: %v, want %v", got, want)
	}
}
