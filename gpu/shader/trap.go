package shader

import "math/bits"

// TrapHandler is the trap handling of a debugged process (its first-level TMA's debug flag, word
// 2, is set): the second-level trap handler (AMDKFD_IOC_SET_TRAP_HANDLER: the first-level TMA's
// words 0 and 1; TBA 0 when there is none) to which the first-level handler, amdkfd's
// cwsr_trap_gfx9.asm, hands a trap. The model runs the first level natively (enterTrap; without a
// second level an s_trap is stepped over, as L_TRAP_CASE does) and the second level as code. A
// dispatch without a TrapHandler keeps the trap handler ABI's outcome for each s_trap code
// (TrapError): the runtime's own handler is modelled, not run.
type TrapHandler struct {
	TBA, TMA uint64 // the second-level handler's code and memory
	// Watch are the device's address watch points of the process (TCP_WATCH0..3, indexed by id;
	// unused ones have Mode WatchOff). They trap only while the launch override enables the
	// address-watch exception (SPI_GDBG_PER_VMID_CNTL.EXCP_EN, MODE.EXCP_EN.ADDR_WATCH): Watch is
	// nil otherwise.
	Watch []Watch
}

// Watch is one address watch point (kgd_gfx_v9_set_address_watch: TCP_WATCH{id}_ADDR_H/L and
// CNTL with MODE and MASK).
type Watch struct {
	Addr uint64
	Mask uint32 // kfd_ioctl's mask: address bits 6..29 it selects are compared (debug_prop's 6 and 29)
	Mode uint32 // KFD_DBG_TRAP_ADDRESS_WATCH_MODE_*: 0 read, 1 non-read, 2 atomic, 3 all; WatchOff
}

// WatchOff marks an unused watch point.
const WatchOff = ^uint32(0)

// watchMatch is TCP's comparison: bits 6..29 where the mask has them, every bit from 30 to 47
// (debug_prop WATCH_ADDR_MASK_LO_BIT 6, HI_BIT 29 on gfx9); bits below 6 never.
func (wp *Watch) match(a uint64) bool {
	cmp := (uint64(wp.Mask)&(1<<30-1))&^63 | (1<<48-1)&^(1<<30-1)
	return (a^wp.Addr)&cmp == 0
}

// watchHits returns the watch points (bit per id) an access of in by the active lanes matches:
// FLAT, GLOBAL and MUBUF (TCP) accesses; a load matches read and all, a store non-read and all,
// an atomic non-read, atomic and all.
func (w *wave) watchHits(in *Inst, m memOp) uint32 {
	var hit uint32
	for id := range w.d.l.trap.Watch {
		wp := &w.d.l.trap.Watch[id]
		switch {
		case wp.Mode == WatchOff:
			continue
		case m.atomic != "":
		case m.store && (wp.Mode == 1 || wp.Mode == 3):
		case !m.store && (wp.Mode == 0 || wp.Mode == 3):
		default:
			continue
		}
		if m.atomic != "" && wp.Mode == 0 {
			continue
		}
		for mm := w.exec(); mm != 0; mm &= mm - 1 {
			if a, ok := w.laneAddr(in, bits.TrailingZeros64(mm)); ok && wp.match(a) {
				hit |= 1 << id
				break
			}
		}
	}
	return hit
}

// laneAddr is lane l's address for a FLAT, GLOBAL or (unswizzled) MUBUF access of in.
func (w *wave) laneAddr(in *Inst, l int) (uint64, bool) {
	switch in.Fmt {
	case FmtGLOBAL, FmtFLAT:
		av := in.Opnd[fAddr] - opVGPR0
		if in.Opnd[fSAddr] != opOff {
			return w.sget64(in.Opnd[fSAddr]) + uint64(w.v[av][l]) + uint64(int64(in.Imm)), true
		}
		return (uint64(w.v[av][l]) | uint64(w.v[av+1][l])<<32) + uint64(int64(in.Imm)), true
	case FmtMUBUF:
		r := in.Opnd[fSAddr]
		if r > 96 || w.s[r+3]>>23&1 != 0 {
			return 0, false
		}
		base := uint64(w.s[r]) | uint64(w.s[r+1]&0xffff)<<32
		stride := uint64(w.s[r+1] >> 16 & 0x3fff)
		soff, err := w.scalar(in, in.Opnd[fSrc0], k32)
		if err != nil {
			return 0, false
		}
		off, idx, vi := uint32(in.Imm), uint64(0), in.Opnd[fAddr]-opVGPR0
		if in.Idxen {
			idx = uint64(w.v[vi][l])
			vi++
		}
		if in.Offen {
			off += w.v[vi][l]
		}
		return base + uint64(uint32(soff)) + uint64(off) + idx*stride, true
	}
	return 0, false
}

// watchTrap is the address-watch exception after in completed: TRAPSTS.EXCP[7] for watch point 0,
// EXCP_HI[14:12] for 1 to 3 (the second-level handler tests 0x7080), trap id 0, and the handler
// returns to the next instruction (the access is not replayed).
func (w *wave) watchTrap(in *Inst, hit uint32) {
	if w.d.l.trap.TBA == 0 {
		return // no second level: the first-level handler would halt the wave (not modelled)
	}
	w.trapsts = 0
	if hit&1 != 0 {
		w.trapsts |= 1 << 7
	}
	w.trapsts |= hit >> 1 & 7 << 12
	w.enterTrap(0, w.pc+uint64(in.Size), in.Size)
}

// ttmp registers (operand codes 108..123 on gfx9).
const opTTMP0 = 108

// enterTrap is the trap entry and cwsr_trap_gfx9.asm's path to the second level (L_FETCH_2ND_TRAP)
// for s_trap code (0: an exception): TTMP0/1 hold pc (the s_trap's, or the next instruction after
// an exception) with the trap id in TTMP1[23:16]
// (SQ_WAVE_PC_HI_TRAP_ID), TTMP12 the saved STATUS, TTMP11 bit 23 the debug flag
// (TTMP_DEBUG_TRAP_ENABLED) and no saved IB_STS bits, TTMP14/15 the second-level TMA; the wave
// runs privileged from the second-level TBA until s_rfe.
func (w *wave) enterTrap(code uint8, pc uint64, size int) {
	t := w.d.l.trap
	w.s[opTTMP0] = uint32(pc)
	w.s[opTTMP0+1] = uint32(pc>>32)&0xffff | uint32(code)<<16
	w.s[opTTMP0+12] = w.status()
	w.s[opTTMP0+11] = w.s[opTTMP0+11]&^(0xff<<24|1<<23) | 1<<23
	w.s[opTTMP0+14], w.s[opTTMP0+15] = uint32(t.TMA), uint32(t.TMA>>32)
	w.priv = true
	w.pc = t.TBA - uint64(size) // step adds the trapping instruction's size
}

// status is SQ_WAVE_STATUS as far as the model keeps it: PRIV[5], EXECZ[9], VCCZ[10].
func (w *wave) status() uint32 {
	var v uint32
	if w.priv {
		v |= 1 << 5
	}
	if w.exec() == 0 {
		v |= 1 << 9
	}
	if w.vcc() == 0 {
		v |= 1 << 10
	}
	return v
}
