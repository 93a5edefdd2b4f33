package shader

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// String disassembles the instruction in the syntax of llvm-objdump-14 --mcpu=gfx90a (without the
// trailing encoding comment and branch-target annotation).
func (in *Inst) String() string {
	if in.Info == nil {
		return fmt.Sprintf(".long %#010x", in.Words[0])
	}
	if in.Fmt == FmtMIMG {
		return in.mimgString()
	}
	var b strings.Builder
	name := in.Info.Name
	switch in.Ext {
	case extDPP:
		name = strings.TrimSuffix(name, "_e32") + "_dpp"
	case extSDWA:
		name = strings.TrimSuffix(name, "_e32") + "_sdwa"
	}
	b.WriteString(name)
	switch in.Fmt {
	case FmtSOPP:
		in.sopp(&b)
		return b.String()
	}
	switch name {
	case "s_getreg_b32", "s_setreg_b32", "s_setreg_imm32_b32":
		in.hwregInst(&b)
		return b.String()
	}
	first := true
	sep := func() {
		if first {
			b.WriteByte(' ')
			first = false
		} else {
			b.WriteString(", ")
		}
	}
	if (in.Fmt == FmtFLAT || in.Fmt == FmtGLOBAL || in.Fmt == FmtSCRATCH || in.Fmt == FmtMUBUF) && in.Glc && strings.Contains(name, "atomic") {
		w := in.dataWidth()
		if strings.Contains(name, "cmpswap") {
			w /= 2
		}
		sep()
		b.WriteString(regName(in.Opnd[fDst], w))
	}
	srcIdx := 0
	for _, t := range in.Info.Ops {
		if strings.HasPrefix(t.Lit, "|") {
			continue
		}
		if t.Lit != "" {
			sep()
			switch {
			case in.Fmt == FmtSOPK && t.Lit == "0x1234":
				b.WriteString(fmt.Sprintf("0x%x", uint16(in.Imm)))
			case in.Fmt == FmtSOPK && t.Lit == "4660": // a branch offset (s_call_b64): signed decimal
				b.WriteString(strconv.Itoa(int(int16(in.Imm))))
			case in.Fmt == FmtSOPC && in.Info.Name == "s_set_gpr_idx_on":
				b.WriteString(gprIdxText(uint32(in.Opnd[fSrc1])))
			case in.Fmt == FmtSMEM && t.Lit == "0x44":
				b.WriteString(in.smemOffset())
			case hasK(in.Info.Op) && t.Lit == "0x4000":
				b.WriteString(fmt.Sprintf("0x%x", in.Lit))
			case in.Fmt == FmtVOP2 && in.Ext == extSDWA && t.Lit == "vcc" && in.Info.Name != "v_cndmask_b32_e32":
				b.WriteString(t.Lit)
			case in.Fmt == FmtVOPC && in.Ext == extSDWA && t.Lit == "vcc" && in.Opnd[fDst] != opVCCLo:
				b.WriteString(regName(in.Opnd[fDst], 2)) // SDWA SD: an explicit SGPR-pair destination
			default:
				b.WriteString(t.Lit)
			}
			continue
		}
		sep()
		code := in.Opnd[t.F]
		if in.Fmt == FmtMUBUF && t.F == fAddr {
			switch {
			case in.Offen && in.Idxen:
				b.WriteString(regName(code, 2))
			case in.Offen || in.Idxen:
				b.WriteString(regName(code, 1))
			default:
				b.WriteString("off")
			}
			continue
		}
		if in.Fmt == FmtSMEM && t.F == fSrc0 && t.W == 1 {
			// s_buffer/atomics with an SGPR offset print the register
		}
		s := in.srcName(code, int(t.W), t.F)
		switch t.F {
		case fSrc0, fSrc1, fSrc2:
			if in.Fmt == FmtVOP3 || in.Fmt == FmtVOP3P || in.Ext != extNone {
				s = in.applyNegAbs(s, srcIdx)
			}
			if in.Ext == extSDWA {
				if srcIdx == 0 && in.SDWASext0 || srcIdx == 1 && in.SDWASext1 {
					s = "sext(" + s + ")"
				}
			}
			srcIdx++
		}
		b.WriteString(s)
	}
	in.modifiers(&b)
	return b.String()
}

// dataWidth is the dword count of the data operand of a memory instruction.
func (in *Inst) dataWidth() int {
	for _, t := range in.Info.Ops {
		if t.Lit == "" && t.F == fData0 {
			return int(t.W)
		}
	}
	return 1
}

func (in *Inst) srcName(code uint16, w int, f opField) string {
	if code == opLiteral {
		if w == 2 && strings.Contains(in.Info.Name, "f64") {
			return fmt.Sprintf("0x%x", in.Lit)
		}
		return fmt.Sprintf("0x%x", in.Lit)
	}
	if code == opOff {
		return "off"
	}
	return regName(code, w)
}

func (in *Inst) applyNegAbs(s string, i int) string {
	if in.Fmt == FmtVOP3P {
		if !in.isMix() {
			return s
		}
		// v_fma_mix*: neg_hi is the absolute value, neg_lo the negation (-|x|).
		if in.NegHi>>i&1 != 0 {
			s = "|" + s + "|"
		}
		if in.Neg>>i&1 != 0 {
			s = "-" + s
		}
		return s
	}
	if in.Abs>>i&1 != 0 {
		s = "|" + s + "|"
	}
	if in.Neg>>i&1 != 0 {
		s = "-" + s
	}
	return s
}

// isMix reports the VOP3P mixed-precision FMAs, whose op_sel_hi and neg_hi mean f16 source and abs.
func (in *Inst) isMix() bool { return strings.HasPrefix(in.Info.Name, "v_fma_mix") }

func (in *Inst) smemOffset() string {
	if in.Opnd[fSrc1] != opOff {
		r := regName(in.Opnd[fSrc1], 1)
		if in.SOE {
			return fmt.Sprintf("%s offset:0x%x", r, in.Imm)
		}
		return r
	}
	return fmt.Sprintf("0x%x", uint32(in.Imm)&0x1fffff)
}

func bitList(v uint8, n int) string {
	p := make([]string, n)
	for i := range p {
		p[i] = strconv.Itoa(int(v >> i & 1))
	}
	return "[" + strings.Join(p, ",") + "]"
}

func (in *Inst) nSrc() int {
	n := 0
	for _, t := range in.Info.Ops {
		if t.Lit == "" && (t.F == fSrc0 || t.F == fSrc1 || t.F == fSrc2) {
			n++
		}
	}
	return n
}

var dstSelNames = [...]string{"BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"}

func (in *Inst) modifiers(b *strings.Builder) {
	switch in.Fmt {
	case FmtVOP3:
		if in.OpSel != 0 {
			// op_sel:[src0, ..., dst]: one bit per source, then bit 3 (the destination half).
			n := in.nSrc()
			b.WriteString(" op_sel:" + bitList(in.OpSel&(1<<n-1)|in.OpSel>>3&1<<n, n+1))
		}
		if in.Clamp {
			b.WriteString(" clamp")
		}
		switch in.Omod {
		case 1:
			b.WriteString(" mul:2")
		case 2:
			b.WriteString(" mul:4")
		case 3:
			b.WriteString(" div:2")
		}
	case FmtVOP3P:
		if in.MAI {
			if in.CBSZ != 0 {
				fmt.Fprintf(b, " cbsz:%d", in.CBSZ)
			}
			if in.ABID != 0 {
				fmt.Fprintf(b, " abid:%d", in.ABID)
			}
			if in.BLGP != 0 {
				fmt.Fprintf(b, " blgp:%d", in.BLGP)
			}
			return
		}
		n := in.nSrc()
		all := uint8(1)<<n - 1
		if in.OpSel&all != 0 {
			b.WriteString(" op_sel:" + bitList(in.OpSel, n))
		}
		if in.isMix() { // op_sel_hi selects f16 sources (default none); neg/abs print on the operands
			if in.OpSelHi&all != 0 {
				b.WriteString(" op_sel_hi:" + bitList(in.OpSelHi, n))
			}
			if in.Clamp {
				b.WriteString(" clamp")
			}
			return
		}
		if in.OpSelHi&all != all {
			b.WriteString(" op_sel_hi:" + bitList(in.OpSelHi, n))
		}
		if in.Neg&all != 0 {
			b.WriteString(" neg_lo:" + bitList(in.Neg, n))
		}
		if in.NegHi&all != 0 {
			b.WriteString(" neg_hi:" + bitList(in.NegHi, n))
		}
		if in.Clamp {
			b.WriteString(" clamp")
		}
	case FmtVOP1, FmtVOP2, FmtVOPC:
		switch in.Ext {
		case extDPP:
			b.WriteString(" " + dppCtrlName(in.DPPCtrl))
			fmt.Fprintf(b, " row_mask:0x%x bank_mask:0x%x", in.RowMask, in.BankMask)
			if in.BoundCtrl {
				b.WriteString(" bound_ctrl:1")
			}
		case extSDWA:
			if in.Clamp {
				b.WriteString(" clamp")
			}
			if in.Fmt != FmtVOPC {
				fmt.Fprintf(b, " dst_sel:%s dst_unused:%s", dstSelNames[in.SDWADstSel],
					[...]string{"UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE"}[in.SDWADstUnused])
			}
			fmt.Fprintf(b, " src0_sel:%s", dstSelNames[in.SDWASrc0Sel])
			if in.Fmt != FmtVOP1 {
				fmt.Fprintf(b, " src1_sel:%s", dstSelNames[in.SDWASrc1Sel])
			}
		}
	case FmtSMEM:
		if in.Glc {
			b.WriteString(" glc")
		}
	case FmtDS:
		off0, off1 := in.Imm&0xff, in.Imm>>8&0xff
		if isDS2(in.Info.Name) {
			if off0 != 0 {
				fmt.Fprintf(b, " offset0:%d", off0)
			}
			if off1 != 0 {
				fmt.Fprintf(b, " offset1:%d", off1)
			}
		} else if in.Info.Name == "ds_swizzle_b32" && in.Imm != 0 {
			b.WriteString(" offset:" + swizzleName(uint16(in.Imm)))
		} else if in.Imm != 0 {
			fmt.Fprintf(b, " offset:%d", in.Imm)
		}
		if in.Gds {
			b.WriteString(" gds")
		}
	case FmtFLAT, FmtGLOBAL, FmtSCRATCH:
		if in.Imm != 0 {
			fmt.Fprintf(b, " offset:%d", in.Imm)
		}
		in.cachePol(b)
		if in.Lds {
			b.WriteString(" lds")
		}
	case FmtMUBUF:
		if in.Idxen {
			b.WriteString(" idxen")
		}
		if in.Offen {
			b.WriteString(" offen")
		}
		if in.Imm != 0 {
			fmt.Fprintf(b, " offset:%d", in.Imm)
		}
		in.cachePol(b)
		if in.Lds {
			b.WriteString(" lds")
		}
	}
}

func (in *Inst) cachePol(b *strings.Builder) {
	if in.Glc {
		b.WriteString(" glc")
	}
	if in.Slc {
		b.WriteString(" slc")
	}
	if in.Scc {
		b.WriteString(" scc")
	}
}

func isDS2(name string) bool {
	return strings.Contains(name, "read2") || strings.Contains(name, "write2") || strings.Contains(name, "wrxchg2")
}

func dppCtrlName(c uint16) string {
	switch {
	case c <= 0xff:
		return fmt.Sprintf("quad_perm:[%d,%d,%d,%d]", c&3, c>>2&3, c>>4&3, c>>6&3)
	case c >= 0x101 && c <= 0x10f:
		return fmt.Sprintf("row_shl:%d", c&0xf)
	case c >= 0x111 && c <= 0x11f:
		return fmt.Sprintf("row_shr:%d", c&0xf)
	case c >= 0x121 && c <= 0x12f:
		return fmt.Sprintf("row_ror:%d", c&0xf)
	}
	switch c {
	case 0x130:
		return "wave_shl:1"
	case 0x134:
		return "wave_rol:1"
	case 0x138:
		return "wave_shr:1"
	case 0x13c:
		return "wave_ror:1"
	case 0x140:
		return "row_mirror"
	case 0x141:
		return "row_half_mirror"
	case 0x142:
		return "row_bcast:15"
	case 0x143:
		return "row_bcast:31"
	}
	if c >= 0x150 && c <= 0x15f {
		return fmt.Sprintf("row_newbcast:%d", c&0xf)
	}
	return fmt.Sprintf("dpp_ctrl:%#x", c)
}

var hwregNames = map[int]string{1: "HW_REG_MODE", 2: "HW_REG_STATUS", 3: "HW_REG_TRAPSTS", 4: "HW_REG_HW_ID",
	5: "HW_REG_GPR_ALLOC", 6: "HW_REG_LDS_ALLOC", 7: "HW_REG_IB_STS", 15: "HW_REG_SH_MEM_BASES"}

// hwregInst prints s_getreg/s_setreg as llvm-objdump-14 does: hwreg(NAME[, offset, size]).
func (in *Inst) hwregInst(b *strings.Builder) {
	id, off, size := int(in.Imm&0x3f), int(in.Imm>>6&0x1f), int(in.Imm>>11&0x1f)+1
	reg := strconv.Itoa(id)
	if n, ok := hwregNames[id]; ok {
		reg = n
	}
	hw := "hwreg(" + reg + ")"
	if off != 0 || size != 32 {
		hw = fmt.Sprintf("hwreg(%s, %d, %d)", reg, off, size)
	}
	switch in.Info.Name {
	case "s_getreg_b32":
		fmt.Fprintf(b, " %s, %s", regName(in.Opnd[fDst], 1), hw)
	case "s_setreg_b32":
		fmt.Fprintf(b, " %s, %s", hw, regName(in.Opnd[fDst], 1))
	default:
		v := fmt.Sprint(in.Lit)
		if in.Lit > 64 {
			v = fmt.Sprintf("0x%x", in.Lit)
		}
		fmt.Fprintf(b, " %s, %s", hw, v)
	}
}

func (in *Inst) sopp(b *strings.Builder) {
	name := in.Info.Name
	imm := uint16(in.Imm)
	switch name {
	case "s_endpgm", "s_barrier", "s_wakeup", "s_icache_inv", "s_ttracedata", "s_endpgm_saved",
		"s_endpgm_ordered_ps_done", "s_set_gpr_idx_off":
		if len(in.Info.Ops) == 0 {
			return
		}
	case "s_waitcnt":
		vm := imm&0xf | imm>>14&3<<4
		exp := imm >> 4 & 7
		lgkm := imm >> 8 & 0xf
		var p []string
		if vm != 63 {
			p = append(p, fmt.Sprintf("vmcnt(%d)", vm))
		}
		if exp != 7 {
			p = append(p, fmt.Sprintf("expcnt(%d)", exp))
		}
		if lgkm != 15 {
			p = append(p, fmt.Sprintf("lgkmcnt(%d)", lgkm))
		}
		if len(p) == 0 {
			p = []string{"vmcnt(63) expcnt(7) lgkmcnt(15)"}
		}
		b.WriteString(" " + strings.Join(p, " "))
		return
	}
	if len(in.Info.Ops) == 0 {
		return
	}
	if strings.HasPrefix(name, "s_branch") || strings.HasPrefix(name, "s_cbranch") {
		fmt.Fprintf(b, " %d", imm) // llvm-objdump-14 prints the simm16 unsigned
		return
	}
	switch name {
	case "s_set_gpr_idx_mode":
		b.WriteString(" " + gprIdxText(uint32(imm)))
		return
	case "s_sendmsg", "s_sendmsghalt":
		b.WriteString(" " + sendmsgText(imm))
		return
	case "s_trap", "s_setkill", "s_sethalt", "s_setprio", "s_nop", "s_sleep", "s_endpgm":
		fmt.Fprintf(b, " %d", imm)
		return
	}
	fmt.Fprintf(b, " %d", imm)
}

var floatConst = map[uint16]string{240: "0.5", 241: "-0.5", 242: "1.0", 243: "-1.0", 244: "2.0", 245: "-2.0",
	246: "4.0", 247: "-4.0", 248: "0.15915494"}

// regName prints an operand code spanning w dwords.
func regName(code uint16, w int) string {
	rng := func(p string, n int) string {
		if w <= 1 {
			return p + strconv.Itoa(n)
		}
		return fmt.Sprintf("%s[%d:%d]", p, n, n+w-1)
	}
	switch {
	case code >= opAGPR0:
		return rng("a", int(code-opAGPR0))
	case code >= opVGPR0:
		return rng("v", int(code-opVGPR0))
	case code <= 101:
		return rng("s", int(code))
	case code >= 108 && code <= 123:
		return rng("ttmp", int(code-108))
	case code >= 128 && code <= 192:
		return strconv.Itoa(int(code) - 128)
	case code >= 193 && code <= 208:
		return strconv.Itoa(192 - int(code))
	}
	pair := func(lo, hi, both string) string {
		if w == 2 {
			return both
		}
		if code&1 == 0 {
			return lo
		}
		return hi
	}
	switch code {
	case 102, 103:
		return pair("flat_scratch_lo", "flat_scratch_hi", "flat_scratch")
	case 104, 105:
		return pair("xnack_mask_lo", "xnack_mask_hi", "xnack_mask")
	case 106, 107:
		return pair("vcc_lo", "vcc_hi", "vcc")
	case 126, 127:
		return pair("exec_lo", "exec_hi", "exec")
	case opM0:
		return "m0"
	case opSharedBase:
		return "src_shared_base"
	case opSharedLimit:
		return "src_shared_limit"
	case opPrivBase:
		return "src_private_base"
	case opPrivLimit:
		return "src_private_limit"
	case 239:
		return "src_pops_exiting_wave_id"
	case opVCCZ:
		return "src_vccz"
	case opEXECZ:
		return "src_execz"
	case opSCC:
		return "src_scc"
	case 254:
		return "src_lds_direct"
	}
	if s, ok := floatConst[code]; ok {
		return s
	}
	return fmt.Sprintf("<reg%d>", code)
}

// swizzleName prints a ds_swizzle_b32 offset as LLVM 14's AMDGPUInstPrinter::printSwizzle does.
func swizzleName(imm uint16) string {
	if imm&0xff00 == 0x8000 {
		return fmt.Sprintf("swizzle(QUAD_PERM,%d,%d,%d,%d)", imm&3, imm>>2&3, imm>>4&3, imm>>6&3)
	}
	if imm&0x8000 != 0 {
		return strconv.Itoa(int(imm))
	}
	and, or, xor := imm&0x1f, imm>>5&0x1f, imm>>10&0x1f
	switch {
	case and == 0x1f && or == 0 && bits.OnesCount16(xor) == 1:
		return fmt.Sprintf("swizzle(SWAP,%d)", xor)
	case and == 0x1f && or == 0 && xor > 0 && (xor+1)&xor == 0:
		return fmt.Sprintf("swizzle(REVERSE,%d)", xor+1)
	}
	if g := 0x1f - and + 1; g > 1 && g&(g-1) == 0 && or < g && xor == 0 {
		return fmt.Sprintf("swizzle(BROADCAST,%d,%d)", g, or)
	}
	p0, p1 := (0&and|or)^xor, (0x1f&and|or)^xor
	var m strings.Builder
	for bit := uint16(1 << 4); bit > 0; bit >>= 1 {
		switch a, c := p0&bit, p1&bit; {
		case a == c && a == 0:
			m.WriteByte('0')
		case a == c:
			m.WriteByte('1')
		case a == 0:
			m.WriteByte('p')
		default:
			m.WriteByte('i')
		}
	}
	return `swizzle(BITMASK_PERM,"` + m.String() + `")`
}

// gprIdxText prints a VGPR index mode as LLVM's printVGPRIndexMode: gpr_idx(SRC0,SRC1,SRC2,DST) for
// the enable bits, hex when other bits are set.
func gprIdxText(v uint32) string {
	if v&^0xf != 0 {
		return fmt.Sprintf("0x%x", v)
	}
	var p []string
	for i, n := range []string{"SRC0", "SRC1", "SRC2", "DST"} {
		if v>>i&1 != 0 {
			p = append(p, n)
		}
	}
	return "gpr_idx(" + strings.Join(p, ",") + ")"
}

// sendmsgText prints an s_sendmsg SIMM16 as LLVM 14's printSendMsg for GFX9: id[3:0], op[6:4],
// stream[9:8]; symbolic when the message, operation and stream are valid, else numeric.
func sendmsgText(imm uint16) string {
	id, op, stream := imm&0xf, imm>>4&7, imm>>8&3
	name, ok := msgNames[id]
	valid := ok
	var opName string
	switch id {
	case 2, 3: // MSG_GS, MSG_GS_DONE: GS_OP_NOP (GS_DONE only, no stream), CUT, EMIT, EMIT_CUT
		opName = [...]string{"GS_OP_NOP", "GS_OP_CUT", "GS_OP_EMIT", "GS_OP_EMIT_CUT", "", "", "", ""}[op]
		valid = valid && opName != "" && (op != 0 || id == 3 && stream == 0)
	case msgSysMsg:
		opName = [...]string{"", "SYSMSG_OP_ECC_ERR_INTERRUPT", "SYSMSG_OP_REG_RD", "SYSMSG_OP_HOST_TRAP_ACK",
			"SYSMSG_OP_TTRACE_PC", "", "", ""}[op]
		valid = valid && opName != "" && stream == 0
	default:
		valid = valid && op == 0 && stream == 0
	}
	switch {
	case valid && opName == "":
		return "sendmsg(" + name + ")"
	case valid && (id == 2 || id == 3) && op != 0:
		return fmt.Sprintf("sendmsg(%s, %s, %d)", name, opName, stream)
	case valid:
		return "sendmsg(" + name + ", " + opName + ")"
	case imm>>10 == 0 && imm>>7&1 == 0:
		return fmt.Sprintf("sendmsg(%d, %d, %d)", id, op, stream)
	}
	return fmt.Sprint(imm)
}
