package shader

import "math/bits"

// Polling. A wave that waits for another wave, work-group or the host spins on an LDS read or a
// coherent load (GLC / SC0: past its caches) of one address, then s_waitcnt for it, then a branch
// back: rocSPARSE's level-scheduled csrsv and its analysis (LDS flags set by
// the group's other waves, global flags set by other groups), rocPRIM's decoupled look-back, spin
// locks. On hardware the access's latency leaves the SIMD to the other waves; here memory answers
// at once, so a spinning wave would keep its turn (waveTurn instructions) and a group whose waves
// all spin its token (groupSlice) while the wave or group it waits for cannot run. So the second
// such access in a row of one instruction to the same address marks the wave as polling, and its
// next s_waitcnt on a memory counter ends its turn as s_sleep does (a group whose live waves all
// did gives its token up: workgroup.go). A first read of an address (an acquire in straight code)
// or a loop over distinct addresses never yields; plain (non-coherent) global loads never do, nor
// do atomics: a loop of returning atomics on one address is mostly counting, not waiting (HIP
// corpus atomics64 and atomics_dpp ran 10x slower when every such atomic ended the turn), and a
// spin lock's compare-and-swap keeps the quantum as before.

// pollNote records an LDS read or coherent load of in whose first active lane's address is
// a (the scalar address of SMEM), and marks the wave as polling when the last one was the same
// instruction at the same address.
func (w *wave) pollNote(in *Inst, a uint64) {
	key := a*0x9e3779b97f4a7c15 ^ w.pc
	if key == w.pollKey {
		w.polled = true
	}
	w.pollKey = key
}

// waitsForMemory reports whether s_waitcnt's SIMM16 waits on vector memory (VM_CNT below 63) or
// scalar memory (LGKM_CNT below 15) (gfx9: VM_CNT = [3:0] | [15:14] << 4, LGKM_CNT = [11:8]).
func waitsForMemory(imm uint16) bool {
	vm := imm&0xf | imm>>14<<4
	return vm < 63 || imm>>8&0xf < 15
}

// pollOperands is the address operands of in's first active lane (exec non-zero) folded into
// one word: equal for two executions that access the same address (FLAT, GLOBAL and MUBUF; the
// immediate offset is the instruction's).
func (w *wave) pollOperands(in *Inst, exec uint64) uint64 {
	l := bits.TrailingZeros64(exec)
	av := in.Opnd[fAddr] - opVGPR0
	switch in.Fmt {
	case FmtGLOBAL, FmtFLAT:
		if in.Opnd[fSAddr] != opOff {
			return w.sget64(in.Opnd[fSAddr]) + uint64(w.v[av][l])
		}
		return uint64(w.v[av][l]) | uint64(w.v[av+1][l])<<32
	case FmtMUBUF:
		r := in.Opnd[fSAddr]
		if r > 96 {
			return 0
		}
		a := uint64(w.s[r]) | uint64(w.s[r+1]&0xffff)<<32
		if in.Idxen || in.Offen {
			a += uint64(w.v[av][l])<<20 ^ uint64(w.v[av+1][l]) // both VGPRs: idx and offset
		}
		if o := in.Opnd[fSrc0]; o < 128 {
			a += uint64(w.s[o])
		}
		return a
	}
	return 0
}
