package shader

// MUBUF cache-control instructions of gfx90a (LLVM AMDGPU BUFFER_WBL2 / BUFFER_INVL2 /
// BUFFER_WBINVL1 / BUFFER_WBINVL1_VOL; encodings checked with llvm-mc-14 -mcpu=gfx90a). They take no
// operands, so the operand-probing table generator (testdata/gen_optab.py) does not find them.
// Device code emits them around system-scope atomics and fences (the device libraries' hostcall
// behind HIP's printf). Memory is coherent here: they complete at once.
var mubufCacheOps = map[uint16]opInfo{
	0x28: {Name: "buffer_wbl2"},
	0x29: {Name: "buffer_invl2"},
	0x3e: {Name: "buffer_wbinvl1"},
	0x3f: {Name: "buffer_wbinvl1_vol"},
}

// cacheOpExec executes a MUBUF cache-control instruction: nothing to write back or invalidate.
func cacheOpExec(*wave, *Inst) error { return nil }

func isCacheOp(name string) bool {
	for _, op := range mubufCacheOps {
		if op.Name == name {
			return true
		}
	}
	return false
}
