package shader

import (
	"sort"
	"strings"
	"testing"
)

// encodingTables are the generated decoder tables (optab_gen.go), by encoding.
var encodingTables = map[Format][]map[uint16]opInfo{FmtSOP2: {tabSOP2}, FmtSOPK: {tabSOPK}, FmtSOP1: {tabSOP1},
	FmtSOPC: {tabSOPC}, FmtSOPP: {tabSOPP}, FmtSMEM: {tabSMEM}, FmtVOP2: {tabVOP2}, FmtVOP1: {tabVOP1},
	FmtVOPC: {tabVOPC}, FmtVOP3: {tabVOP3}, FmtVOP3P: {tabVOP3P}, FmtDS: {tabDS}, FmtFLAT: {tabFLAT},
	FmtSCRATCH: {tabSCRATCH, tabSCRATCHS}, FmtGLOBAL: {tabGLOBAL, tabGLOBALS}, FmtMUBUF: {tabMUBUF}, FmtMIMG: {tabMIMG}}

// tableOps is the set of Ops some encoding table gives an opcode.
func tableOps(t *testing.T) map[Op]bool {
	ops := map[Op]bool{}
	for _, ts := range encodingTables {
		for _, tab := range ts {
			for _, info := range tab {
				if info.Op <= OpInvalid || info.Op >= NumOps || opNames[info.Op] != baseName(info.Name) {
					t.Fatalf("%s: Op %d named %q", info.Name, info.Op, opNames[min(info.Op, NumOps-1)])
				}
				ops[info.Op] = true
			}
		}
	}
	return ops
}

// TestOpRecords checks the per-opcode records (optab.go) in both directions. Every Op has an opcode
// in some encoding table (the generator emits an Op only for a mnemonic it found, and the record
// of an Op that a table lost would be unreachable: s_memtime, s_memrealtime and s_dcache_inv/wb had
// routines while gen_optab.py left their opcodes out). Every opcode has a routine, except the
// short list below (STATUS.md Gaps), each group with its reason. Every rounding and 16-bit rule
// belongs to an Op with a routine.
func TestOpRecords(t *testing.T) {
	ops := tableOps(t)
	for op := Op(1); op < NumOps; op++ {
		if !ops[op] {
			t.Errorf("%s: Op without an opcode in the encoding tables", opNames[op])
		}
		r := &opTab[op]
		if r.exec == nil && (r.round != roundNone || r.directed != nil || r.h16dir != nil || r.h16 != nil) {
			t.Errorf("%s: rounding or 16-bit rule without a routine", opNames[op])
		}
		if (r.directed != nil || r.h16dir != nil) && r.round == roundNone {
			t.Errorf("%s: directed routine of an operation that is not mode-dependent", opNames[op])
		}
		if r.h16dir != nil && r.h16 == nil {
			t.Errorf("%s: directed binary16 function without its 16-bit spec", opNames[op])
		}
	}
	if opTab[OpInvalid].exec != nil {
		t.Errorf("OpInvalid has a routine")
	}
	var got []string
	for op := Op(1); op < NumOps; op++ {
		if opTab[op].exec == nil {
			got = append(got, opNames[op])
		}
	}
	sort.Strings(got)
	want := []string{
		// GDS ordered append counters (graphics primitive ordering; kfd exposes no GDS memory)
		"ds_ordered_count",
		// image _pck forms: raw texel bits without format conversion (STATUS.md Images)
		"image_load_mip_pck", "image_load_mip_pck_sgn", "image_load_pck", "image_load_pck_sgn",
		"image_store_mip_pck", "image_store_pck",
		// SMEM scratch forms: their address computation is not implemented (not needed by LLVM's gfx90a code)
		"s_scratch_load_dword", "s_scratch_load_dwordx2", "s_scratch_load_dwordx4",
		"s_scratch_store_dword", "s_scratch_store_dwordx2", "s_scratch_store_dwordx4",
		// the screen-partition table is not in the public ISA documents
		"v_screen_partition_4se_b32",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Ops without a routine:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
