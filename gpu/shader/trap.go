package shader

// TrapHandler is a process's second-level trap handler (AMDKFD_IOC_SET_TRAP_HANDLER: the first-level
// TMA's words 0 and 1) as the first-level handler, amdkfd's cwsr_trap_gfx9.asm, hands a trap to it
// while the process is debugged (its TMA word 2, the debug flag, is set). The model runs the first
// level natively (enterTrap) and the second level as code. A dispatch without one keeps the trap
// handler ABI's outcome for each s_trap code (TrapError): the runtime's own handler is modelled,
// not run.
type TrapHandler struct {
	TBA, TMA uint64 // the second-level handler's code and memory
}

// ttmp registers (operand codes 108..123 on gfx9).
const opTTMP0 = 108

// enterTrap is the trap entry and cwsr_trap_gfx9.asm's path to the second level (L_FETCH_2ND_TRAP)
// for s_trap code: TTMP0/1 hold the PC of the s_trap with the trap id in TTMP1[23:16]
// (SQ_WAVE_PC_HI_TRAP_ID), TTMP12 the saved STATUS, TTMP11 bit 23 the debug flag
// (TTMP_DEBUG_TRAP_ENABLED) and no saved IB_STS bits, TTMP14/15 the second-level TMA; the wave
// runs privileged from the second-level TBA until s_rfe.
func (w *wave) enterTrap(code uint8) {
	t := w.d.l.trap
	w.s[opTTMP0] = uint32(w.pc)
	w.s[opTTMP0+1] = uint32(w.pc>>32)&0xffff | uint32(code)<<16
	w.s[opTTMP0+12] = w.status()
	w.s[opTTMP0+11] = w.s[opTTMP0+11]&^(0xff<<24|1<<23) | 1<<23
	w.s[opTTMP0+14], w.s[opTTMP0+15] = uint32(t.TMA), uint32(t.TMA>>32)
	w.priv = true
	w.pc = t.TBA - 4 // step adds the s_trap's size
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
