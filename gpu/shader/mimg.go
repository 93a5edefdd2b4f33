package shader

import (
	"fmt"
	"strings"
)

// MIMG: the image instructions of gfx90a. LLVM 14 (and so the opcode table, optab_gen.go) knows
// image_load(_mip)(_pck(_sgn)), image_store(_mip)(_pck), image_get_resinfo, the 32-bit image_atomic_*
// and image_sample; gfx90a has no other sample, gather4 or get_lod opcode (llvm-mc-14 -mcpu=gfx90a:
// "instruction not supported on this GPU").
//
// Encoding (LLVM MIMGe_gfx90a): word0 SLC[25] OP[24:18] LWE[17] ACC[16] A16[15] DA[14] GLC[13] UNORM[12]
// DMASK[11:8], bit 0 is OP[7] (must be 0); word1 D16[31] SSAMP[25:21] SRSRC[20:16] VDATA[15:8] VADDR[7:0].
// gfx90a has no TFE (bit 16 selects AGPRs for VDATA) and no R128 (bit 15 is A16).

// mimgFields are the MIMG modifiers of an Inst.
type mimgFields struct {
	DMask                    uint8
	Unorm, DA, A16, LWE, D16 bool
	vdataW                   uint8 // VDATA registers as LLVM prints them (mimgVData)
}

func (in *Inst) decodeMIMG(w []uint32) error {
	w0 := w[0]
	in.Fmt = FmtMIMG
	if len(w) < 2 {
		return ErrTruncated
	}
	in.Words[1], in.Size = w[1], 8
	w1 := w[1]
	if w0&1 != 0 {
		return fmt.Errorf("%w: MIMG opcode bit 7 (%#08x)", ErrInvalid, w0)
	}
	if err := in.lookup(tabMIMG, uint16(w0>>18&0x7f)); err != nil {
		return err
	}
	m := &in.MIMG
	m.DMask = uint8(w0 >> 8 & 0xf)
	m.Unorm = w0>>12&1 != 0
	in.Glc = w0>>13&1 != 0
	m.DA = w0>>14&1 != 0
	m.A16 = w0>>15&1 != 0
	in.Acc = w0>>16&1 != 0
	m.LWE = w0>>17&1 != 0
	in.Slc = w0>>25&1 != 0
	m.D16 = w1>>31 != 0
	d16 := 0
	if m.D16 {
		d16 = 1
	}
	m.vdataW = mimgVData[in.Op][d16][m.DMask]
	if m.vdataW == 0 {
		return fmt.Errorf("%w: %s with dmask %#x d16 %v", ErrInvalid, in.Info.Name, m.DMask, m.D16)
	}
	srsrc, ssamp := uint16(w1>>16&0x1f)*4, uint16(w1>>21&0x1f)*4
	if !sgprTuple(srsrc, 8) {
		return fmt.Errorf("%w: MIMG resource %s", ErrInvalid, regName(srsrc, 8))
	}
	sampler := in.tmplHas(fSrc1)
	if sampler && !sgprTuple(ssamp, 4) || !sampler && ssamp != 0 {
		return fmt.Errorf("%w: MIMG sampler field %d", ErrInvalid, ssamp/4)
	}
	in.Opnd[fAddr] = vreg(w1&0xff, false)
	in.Opnd[fData0] = vreg(w1>>8&0xff, in.Acc)
	in.Opnd[fSAddr] = srsrc
	in.Opnd[fSrc1] = ssamp
	in.Opnd[fDst] = in.Opnd[fData0]
	return nil
}

// sgprTuple reports whether n registers from SGPR code r form an operand LLVM accepts: s[0..101] or
// ttmp[0..15] (a tuple does not cross the end of either).
func sgprTuple(r uint16, n uint16) bool {
	return r+n-1 <= 101 || r >= 108 && r+n-1 <= 123
}

// mimgString prints a MIMG instruction as llvm-objdump-14: VDATA with the registers DMASK/D16 select
// (mimgVData), VADDR always as one register (LLVM's gfx9 disassembler does not know the address count),
// then the modifiers in LLVM's order.
func (in *Inst) mimgString() string {
	var b strings.Builder
	m := &in.MIMG
	b.WriteString(in.Info.Name)
	w := int(m.vdataW)
	if v := int(in.Opnd[fData0]-opVGPR0) % 256; v+w > 256 {
		w = 1 // LLVM has no register tuple past v255/a255 and prints the first register
	}
	fmt.Fprintf(&b, " %s, %s, %s", regName(in.Opnd[fData0], w), regName(in.Opnd[fAddr], 1), regName(in.Opnd[fSAddr], 8))
	if in.tmplHas(fSrc1) {
		b.WriteString(", " + regName(in.Opnd[fSrc1], 4))
	}
	if m.DMask != 0 {
		fmt.Fprintf(&b, " dmask:0x%x", m.DMask)
	}
	for _, f := range []struct {
		on   bool
		name string
	}{{m.Unorm, "unorm"}, {in.Glc, "glc"}, {in.Slc, "slc"}, {m.A16, "a16"}, {m.LWE, "lwe"}, {m.DA, "da"}, {m.D16, "d16"}} {
		if f.on {
			b.WriteString(" " + f.name)
		}
	}
	return b.String()
}
