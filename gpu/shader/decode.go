package shader

import (
	"errors"
	"fmt"
	"strings"
)

// Format is an instruction encoding of the GFX9 (gfx90a) ISA.
type Format uint8

// Encodings, as named in the "AMD Instinct MI200 ISA" reference and LLVM's SIInstrFormats.td.
const (
	FmtInvalid Format = iota
	FmtSOP2
	FmtSOPK
	FmtSOP1
	FmtSOPC
	FmtSOPP
	FmtSMEM
	FmtVOP2
	FmtVOP1
	FmtVOPC
	FmtVOP3
	FmtVOP3P
	FmtDS
	FmtFLAT
	FmtSCRATCH
	FmtGLOBAL
	FmtMUBUF
	FmtMIMG // mimg.go
)

var fmtNames = [...]string{"invalid", "SOP2", "SOPK", "SOP1", "SOPC", "SOPP", "SMEM", "VOP2", "VOP1", "VOPC",
	"VOP3", "VOP3P", "DS", "FLAT", "SCRATCH", "GLOBAL", "MUBUF", "MIMG"}

func (f Format) String() string {
	if int(f) < len(fmtNames) {
		return fmtNames[f]
	}
	return "?"
}

// opField names an operand field of an encoding; opTmpl entries refer to them.
type opField uint8

const (
	fDst opField = iota
	fSrc0
	fSrc1
	fSrc2
	fSDst
	fAddr
	fData0
	fData1
	fSAddr
	nFields
)

// opTmpl is one printed operand: a field of W dwords of register class C ('s', 'v' or 'a'), or literal text.
type opTmpl struct {
	F   opField
	W   uint8
	C   byte
	Lit string
}

type opInfo struct {
	Name string
	Op   Op // the operation (the mnemonic without _e32/_e64), index of its record in opTab
	Ops  []opTmpl
}

// Operand codes. Inst.Opnd holds, per field, the 9-bit source-operand code of the ISA (0-255 scalar/inline,
// 256-511 VGPR) extended with 512+n for AGPR n.
const (
	opVCCLo       = 106
	opVCCHi       = 107
	opFlatScrLo   = 102
	opM0          = 124
	opExecLo      = 126
	opExecHi      = 127
	opSharedBase  = 235
	opSharedLimit = 236
	opPrivBase    = 237
	opPrivLimit   = 238
	opVCCZ        = 251
	opEXECZ       = 252
	opSCC         = 253
	opLiteral     = 255
	opVGPR0       = 256
	opAGPR0       = 512
	opOff         = 0xffff // FLAT saddr "off", MUBUF vaddr unused
)

// Extension of a VOP1/VOP2/VOPC instruction whose src0 selects DPP (0xFA) or SDWA (0xF9).
const (
	extNone = iota
	extDPP
	extSDWA
)

// Inst is one decoded instruction.
type Inst struct {
	Fmt    Format
	Op     uint16
	Size   int // bytes including a literal
	Words  [3]uint32
	Info   *opInfo
	Opnd   [nFields]uint16
	Lit    uint32
	HasLit bool
	Imm    int32 // SOPK/SOPP simm16, SMEM/FLAT/MUBUF offset, DS offset0|offset1<<8

	// VOP3/VOP3P modifiers
	Abs, Neg, NegHi, OpSel, OpSelHi uint8
	Clamp                           bool
	Omod                            uint8
	// VOP3P-MAI (MFMA) modifiers: CBSZ, ABID, BLGP; AccCD selects AGPRs for vdst and src2
	CBSZ, ABID, BLGP uint8
	MAI, AccCD       bool
	// memory modifiers
	Glc, Slc, Scc, Gds, Offen, Idxen, Lds, Acc, SOE bool
	// DPP / SDWA (VOP1/VOP2/VOPC only)
	Ext                          uint8
	DPPCtrl                      uint16
	RowMask, BankMask            uint8
	BoundCtrl                    bool
	SDWADstSel, SDWADstUnused    uint8
	SDWASrc0Sel, SDWASrc1Sel     uint8
	SDWASext0, SDWASext1, SDWAS1 bool       // src sign-extend; src1 is scalar (VOPC SDWA s1)
	MIMG                         mimgFields // MIMG only (mimg.go)

	exec execFn // resolved interpreter routine (nil: unimplemented)
	// near is exec without its rounding wrapper, valid while MODE&rmask is 0 (optab.go bind; step)
	near  execFn
	rmask uint32
	// notF32 is set with exec: a 32-bit VALU operation with f32 sources whose result is not an f32
	// (floatResult), so the denormal mode leaves it alone.
	notF32 bool
	// pre: the operands resolved once (bind) for the one-lane path of a 32-bit VALU operation
	// (v32fast), which reads a lane without decoding the operand codes again.
	pre preOps
	// v32: the operation of near if it is a v32k routine (bind), which turn runs itself on one lane.
	v32 *v32spec
	// vneed: 1 + the register count checkVRegs' template loop needs (bind, vregNeed; 0: unknown,
	// or an operand it would reject): a file of at least vneed-1 rows passes it.
	vneed uint16
}

// ErrTruncated is returned by Decode when the words end inside an instruction.
var ErrTruncated = errors.New("shader: truncated instruction")

// ErrInvalid is returned by Decode for an encoding LLVM's gfx90a decoder does not accept.
var ErrInvalid = errors.New("shader: invalid instruction encoding")

// Name is the LLVM mnemonic, or "<invalid>".
func (in *Inst) Name() string {
	if in.Info == nil {
		return "<invalid>"
	}
	return in.Info.Name
}

func (in *Inst) lookup(tab map[uint16]opInfo, op uint16) error {
	in.Op = op
	inf, ok := tab[op]
	if !ok {
		return fmt.Errorf("%w: %s opcode %#x (%#08x)", ErrInvalid, in.Fmt, op, in.Words[0])
	}
	in.Info = &inf
	return nil
}

// tmplClass reports the register class the template gives field f ('v' when absent).
func (in *Inst) tmplClass(f opField) byte {
	for _, t := range in.Info.Ops {
		if t.Lit == "" && t.F == f {
			return t.C
		}
	}
	return 'v'
}

// accSrc turns a 9-bit source code naming VGPR n into AGPR n when acc is set (constants are unchanged).
func accSrc(code uint16, acc bool) uint16 {
	if acc && code >= opVGPR0 && code < opAGPR0 {
		return code - opVGPR0 + opAGPR0
	}
	return code
}

func vreg(n uint32, acc bool) uint16 {
	if acc {
		return opAGPR0 + uint16(n)
	}
	return opVGPR0 + uint16(n)
}

// Decode decodes the instruction at the start of w (little-endian dwords). It never panics.
func Decode(w []uint32) (Inst, error) {
	var in Inst
	if len(w) == 0 {
		return in, ErrTruncated
	}
	w0 := w[0]
	in.Words[0] = w0
	in.Size = 4
	need2 := func() error {
		if len(w) < 2 {
			return ErrTruncated
		}
		in.Words[1] = w[1]
		in.Size = 8
		return nil
	}
	lit := func(codes ...uint16) error {
		for _, c := range codes {
			if c == opLiteral {
				idx := in.Size / 4
				if len(w) <= idx {
					return ErrTruncated
				}
				in.Lit = w[idx]
				in.Words[idx] = w[idx]
				in.HasLit = true
				in.Size += 4
				return nil
			}
		}
		return nil
	}
	var err error
	switch {
	case w0>>23 == 0x17d: // SOP1
		in.Fmt = FmtSOP1
		if err = in.lookup(tabSOP1, uint16(w0>>8&0xff)); err != nil {
			return in, err
		}
		in.Opnd[fDst] = uint16(w0 >> 16 & 0x7f)
		in.Opnd[fSrc0] = uint16(w0 & 0xff)
		err = lit(in.Opnd[fSrc0])
	case w0>>23 == 0x17e: // SOPC
		in.Fmt = FmtSOPC
		if err = in.lookup(tabSOPC, uint16(w0>>16&0x7f)); err != nil {
			return in, err
		}
		in.Opnd[fSrc0] = uint16(w0 & 0xff)
		in.Opnd[fSrc1] = uint16(w0 >> 8 & 0xff)
		err = lit(in.Opnd[fSrc0], in.Opnd[fSrc1])
	case w0>>23 == 0x17f: // SOPP
		in.Fmt = FmtSOPP
		if err = in.lookup(tabSOPP, uint16(w0>>16&0x7f)); err != nil {
			return in, err
		}
		in.Imm = int32(int16(w0))
	case w0>>28 == 0xb: // SOPK
		in.Fmt = FmtSOPK
		if err = in.lookup(tabSOPK, uint16(w0>>23&0x1f)); err != nil {
			return in, err
		}
		in.Opnd[fDst] = uint16(w0 >> 16 & 0x7f)
		in.Imm = int32(uint16(w0))
		if in.Info.Op == OpSSetregImm32B32 {
			if len(w) < 2 {
				return in, ErrTruncated
			}
			in.Lit, in.HasLit, in.Words[1], in.Size = w[1], true, w[1], 8
		}
	case w0>>30 == 2: // SOP2
		in.Fmt = FmtSOP2
		if err = in.lookup(tabSOP2, uint16(w0>>23&0x7f)); err != nil {
			return in, err
		}
		in.Opnd[fDst] = uint16(w0 >> 16 & 0x7f)
		in.Opnd[fSrc0] = uint16(w0 & 0xff)
		in.Opnd[fSrc1] = uint16(w0 >> 8 & 0xff)
		err = lit(in.Opnd[fSrc0], in.Opnd[fSrc1])
	case w0>>26 == 0x30: // SMEM
		in.Fmt = FmtSMEM
		if err = need2(); err != nil {
			return in, err
		}
		if err = in.lookup(tabSMEM, uint16(w0>>18&0xff)); err != nil {
			return in, err
		}
		in.Opnd[fDst] = uint16(w0 >> 6 & 0x7f)
		in.Opnd[fSrc0] = uint16(w0&0x3f) * 2
		in.Glc = w0>>16&1 != 0
		in.SOE = w0>>14&1 != 0
		if w0>>17&1 != 0 { // IMM: 21-bit signed byte offset
			in.Imm = int32(w[1]<<11) >> 11
			if in.SOE {
				in.Opnd[fSrc1] = uint16(w[1] >> 25)
			} else {
				in.Opnd[fSrc1] = opOff
			}
		} else { // SOFFSET register in the low bits
			in.Opnd[fSrc1] = uint16(w[1] & 0xff)
			in.Imm = 0
		}
		if in.SOE && w0>>17&1 == 0 {
			return in, fmt.Errorf("%w: SMEM soe without imm", ErrInvalid)
		}
	case w0>>25 == 0x3f: // VOP1
		in.Fmt = FmtVOP1
		if err = in.lookup(tabVOP1, uint16(w0>>9&0xff)); err != nil {
			return in, err
		}
		switch in.tmplClass(fDst) {
		case 's': // v_readfirstlane_b32
			in.Opnd[fDst] = uint16(w0 >> 17 & 0xff)
		default:
			in.Opnd[fDst] = vreg(w0>>17&0xff, in.tmplClass(fDst) == 'a')
		}
		in.Opnd[fSrc0] = accSrc(uint16(w0&0x1ff), in.tmplClass(fSrc0) == 'a')
		err = in.vopExt(w, lit)
	case w0>>25 == 0x3e: // VOPC
		in.Fmt = FmtVOPC
		if err = in.lookup(tabVOPC, uint16(w0>>17&0xff)); err != nil {
			return in, err
		}
		in.Opnd[fDst] = opVCCLo
		in.Opnd[fSrc1] = vreg(w0>>9&0xff, false)
		in.Opnd[fSrc0] = uint16(w0 & 0x1ff)
		err = in.vopExt(w, lit)
	case w0>>31 == 0: // VOP2
		in.Fmt = FmtVOP2
		if err = in.lookup(tabVOP2, uint16(w0>>25&0x3f)); err != nil {
			return in, err
		}
		in.Opnd[fDst] = vreg(w0>>17&0xff, false)
		in.Opnd[fSrc1] = vreg(w0>>9&0xff, false)
		in.Opnd[fSrc0] = uint16(w0 & 0x1ff)
		err = in.vopExt(w, lit)
		if err == nil && hasK(in.Info.Op) {
			err = in.takeK(w)
		}
	case w0>>23 == 0x1a7: // VOP3P
		in.Fmt = FmtVOP3P
		if err = need2(); err != nil {
			return in, err
		}
		if err = in.lookup(tabVOP3P, uint16(w0>>16&0x7f)); err != nil {
			return in, err
		}
		w1 := w[1]
		in.Clamp = w0>>15&1 != 0
		in.OpSelHi = uint8(w1>>27&3) | uint8(w0>>14&1)<<2
		in.OpSel = uint8(w0 >> 11 & 7)
		in.NegHi = uint8(w0 >> 8 & 7)
		in.Neg = uint8(w1 >> 29)
		in.Opnd[fDst] = vreg(w0&0xff, in.tmplClass(fDst) == 'a')
		in.Opnd[fSrc0] = accSrc(uint16(w1&0x1ff), in.tmplClass(fSrc0) == 'a')
		in.Opnd[fSrc1] = uint16(w1 >> 9 & 0x1ff)
		in.Opnd[fSrc2] = uint16(w1 >> 18 & 0x1ff)
		if strings.HasPrefix(in.Info.Name, "v_mfma_") {
			// VOP3P-MAI (LLVM VOP3Pe_MAI): cbsz[10:8] abid[14:11] acc_cd[15]; acc(src0)[59] acc(src1)[60]
			// blgp[63:61]. The clamp/op_sel/neg fields of VOP3P do not exist here.
			in.MAI = true
			in.AccCD = w0>>15&1 != 0
			in.CBSZ, in.ABID, in.BLGP = uint8(w0>>8&7), uint8(w0>>11&0xf), uint8(w1>>29)
			in.Clamp, in.OpSel, in.OpSelHi, in.Neg, in.NegHi = false, 0, 0, 0, 0
			in.Opnd[fDst] = vreg(w0&0xff, in.AccCD)
			in.Opnd[fSrc0] = accSrc(uint16(w1&0x1ff), w1>>27&1 != 0)
			in.Opnd[fSrc1] = accSrc(uint16(w1>>9&0x1ff), w1>>28&1 != 0)
			in.Opnd[fSrc2] = accSrc(uint16(w1>>18&0x1ff), in.AccCD)
		}
	case w0>>26 == 0x34: // VOP3 (VOP3A/VOP3B)
		in.Fmt = FmtVOP3
		if err = need2(); err != nil {
			return in, err
		}
		if err = in.lookup(tabVOP3, uint16(w0>>16&0x3ff)); err != nil {
			return in, err
		}
		w1 := w[1]
		in.Clamp = w0>>15&1 != 0
		if in.tmplHas(fSDst) {
			in.Opnd[fSDst] = uint16(w0 >> 8 & 0x7f)
		} else {
			in.Abs = uint8(w0 >> 8 & 7)
			in.OpSel = uint8(w0 >> 11 & 0xf)
		}
		in.Neg = uint8(w1 >> 29)
		in.Omod = uint8(w1 >> 27 & 3)
		if in.tmplClass(fDst) == 's' {
			in.Opnd[fDst] = uint16(w0 & 0xff)
		} else {
			in.Opnd[fDst] = vreg(w0&0xff, false)
		}
		in.Opnd[fSrc0] = uint16(w1 & 0x1ff)
		in.Opnd[fSrc1] = uint16(w1 >> 9 & 0x1ff)
		in.Opnd[fSrc2] = uint16(w1 >> 18 & 0x1ff)
	case w0>>26 == 0x36: // DS
		in.Fmt = FmtDS
		if err = need2(); err != nil {
			return in, err
		}
		if err = in.lookup(tabDS, uint16(w0>>17&0xff)); err != nil {
			return in, err
		}
		w1 := w[1]
		in.Acc = w0>>25&1 != 0
		in.Gds = w0>>16&1 != 0
		in.Imm = int32(w0 & 0xffff)
		in.Opnd[fAddr] = vreg(w1&0xff, false)
		in.Opnd[fData0] = vreg(w1>>8&0xff, in.Acc)
		in.Opnd[fData1] = vreg(w1>>16&0xff, in.Acc)
		in.Opnd[fDst] = vreg(w1>>24&0xff, in.Acc)
	case w0>>26 == 0x37: // FLAT / SCRATCH / GLOBAL
		if err = need2(); err != nil {
			return in, err
		}
		w1 := w[1]
		saddr := uint16(w1 >> 16 & 0x7f)
		var tab map[uint16]opInfo
		switch w0 >> 14 & 3 {
		case 0:
			in.Fmt, tab = FmtFLAT, tabFLAT
			in.Imm = int32(w0 & 0xfff)
		case 1:
			in.Fmt, tab = FmtSCRATCH, tabSCRATCH
			if saddr != 0x7f {
				tab = tabSCRATCHS
			}
			in.Imm = int32(w0<<19) >> 19
		case 2:
			in.Fmt, tab = FmtGLOBAL, tabGLOBAL
			if saddr != 0x7f {
				tab = tabGLOBALS
			}
			in.Imm = int32(w0<<19) >> 19
		default:
			return in, fmt.Errorf("%w: FLAT segment 3", ErrInvalid)
		}
		if err = in.lookup(tab, uint16(w0>>18&0x7f)); err != nil {
			return in, err
		}
		in.Slc = w0>>17&1 != 0
		in.Glc = w0>>16&1 != 0
		in.Lds = w0>>13&1 != 0
		in.Scc = w0>>25&1 != 0
		in.Acc = w1>>23&1 != 0
		in.Opnd[fAddr] = vreg(w1&0xff, false)
		in.Opnd[fData0] = vreg(w1>>8&0xff, in.Acc)
		in.Opnd[fDst] = vreg(w1>>24&0xff, in.Acc)
		in.Opnd[fSAddr] = opOff
		if saddr != 0x7f && in.Fmt != FmtFLAT {
			in.Opnd[fSAddr] = saddr
		}
	case w0>>26 == 0x38: // MUBUF
		in.Fmt = FmtMUBUF
		if err = need2(); err != nil {
			return in, err
		}
		if err = in.lookup(tabMUBUF, uint16(w0>>18&0x7f)); err != nil {
			return in, err
		}
		w1 := w[1]
		in.Imm = int32(w0 & 0xfff)
		in.Offen = w0>>12&1 != 0
		in.Idxen = w0>>13&1 != 0
		in.Glc = w0>>14&1 != 0
		in.Scc = w0>>15&1 != 0
		in.Lds = w0>>16&1 != 0
		in.Slc = w0>>17&1 != 0
		in.Acc = w1>>23&1 != 0
		in.Opnd[fAddr] = vreg(w1&0xff, false)
		in.Opnd[fData0] = vreg(w1>>8&0xff, in.Acc)
		in.Opnd[fSAddr] = uint16(w1>>16&0x1f) * 4
		in.Opnd[fSrc0] = uint16(w1 >> 24)
	case w0>>26 == 0x3c: // MIMG (mimg.go)
		err = in.decodeMIMG(w)
	default:
		return in, fmt.Errorf("%w: unknown encoding %#08x", ErrInvalid, w0)
	}
	if err != nil {
		return in, err
	}
	// Implicit operands made explicit once here, so that execution needs no per-call copy of the
	// instruction: MUBUF loads and returning atomics write VDATA; v_fmac/v_mac add the destination.
	switch {
	case in.Fmt == FmtMUBUF:
		in.Opnd[fDst] = in.Opnd[fData0]
	case in.Info != nil && accumulates(in.Info.Op):
		in.Opnd[fSrc2] = in.Opnd[fDst]
	}
	return in, nil
}

func accumulates(op Op) bool {
	switch op {
	case OpVFmacF32, OpVMacF32, OpVFmacF64:
		return true
	}
	return false
}

func (in *Inst) tmplHas(f opField) bool {
	for _, t := range in.Info.Ops {
		if t.Lit == "" && t.F == f {
			return true
		}
	}
	return false
}

func hasK(op Op) bool {
	switch op {
	case OpVMadmkF32, OpVMadakF32, OpVMadmkF16, OpVMadakF16:
		return true
	}
	return false
}

func (in *Inst) takeK(w []uint32) error {
	if in.HasLit { // src0 literal and K must be the same literal
		return nil
	}
	idx := in.Size / 4
	if len(w) <= idx {
		return ErrTruncated
	}
	in.Lit, in.HasLit, in.Words[idx] = w[idx], true, w[idx]
	in.Size += 4
	return nil
}

// vopExt decodes the DPP/SDWA second dword or a literal of a VOP1/VOP2/VOPC instruction.
func (in *Inst) vopExt(w []uint32, lit func(...uint16) error) error {
	switch in.Opnd[fSrc0] {
	case 0xfa:
		if len(w) < 2 {
			return ErrTruncated
		}
		w1 := w[1]
		in.Words[1], in.Size, in.Ext = w1, 8, extDPP
		in.Opnd[fSrc0] = vreg(w1&0xff, false)
		in.DPPCtrl = uint16(w1 >> 8 & 0x1ff)
		in.BoundCtrl = w1>>19&1 != 0
		in.Neg = uint8(w1>>20&1) | uint8(w1>>22&1)<<1
		in.Abs = uint8(w1>>21&1) | uint8(w1>>23&1)<<1
		in.BankMask = uint8(w1 >> 24 & 0xf)
		in.RowMask = uint8(w1 >> 28)
		if !validDPP(in.DPPCtrl) {
			return fmt.Errorf("%w: dpp_ctrl %#x", ErrInvalid, in.DPPCtrl)
		}
		return nil
	case 0xf9:
		if len(w) < 2 {
			return ErrTruncated
		}
		w1 := w[1]
		in.Words[1], in.Size, in.Ext = w1, 8, extSDWA
		s0 := w1 & 0xff
		in.Opnd[fSrc0] = vreg(s0, false)
		if w1>>23&1 != 0 { // S0: src0 is an SGPR/constant
			in.Opnd[fSrc0] = uint16(s0)
		}
		in.SDWADstSel = uint8(w1 >> 8 & 7)
		in.SDWADstUnused = uint8(w1 >> 11 & 3)
		in.Clamp = w1>>13&1 != 0
		in.Omod = uint8(w1 >> 14 & 3)
		in.SDWASrc0Sel = uint8(w1 >> 16 & 7)
		in.SDWASext0 = w1>>19&1 != 0
		in.Neg = uint8(w1>>20&1) | uint8(w1>>28&1)<<1
		in.Abs = uint8(w1>>21&1) | uint8(w1>>29&1)<<1
		in.SDWASrc1Sel = uint8(w1 >> 24 & 7)
		in.SDWASext1 = w1>>27&1 != 0
		if w1>>31&1 != 0 {
			in.SDWAS1 = true
			in.Opnd[fSrc1] -= opVGPR0
		}
		if in.Fmt == FmtVOPC && w1>>15&1 != 0 { // SD: explicit scalar destination
			in.Opnd[fDst] = uint16(w1 >> 8 & 0x7f)
			in.SDWADstSel, in.SDWADstUnused, in.Clamp, in.Omod = 0, 0, false, 0
		}
		if in.SDWASrc0Sel > 6 || in.SDWASrc1Sel > 6 || in.SDWADstSel > 6 || in.SDWADstUnused > 2 {
			return fmt.Errorf("%w: sdwa selector", ErrInvalid)
		}
		return nil
	}
	return lit(in.Opnd[fSrc0])
}

func validDPP(c uint16) bool {
	switch {
	case c <= 0xff, c >= 0x101 && c <= 0x10f, c >= 0x111 && c <= 0x11f, c >= 0x121 && c <= 0x12f:
		return true
	case c == 0x130, c == 0x134, c == 0x138, c == 0x13c, c == 0x140, c == 0x141, c == 0x142, c == 0x143:
		return true
	case c >= 0x150 && c <= 0x15f: // gfx90a row_newbcast:n
		return true
	}
	return false
}
