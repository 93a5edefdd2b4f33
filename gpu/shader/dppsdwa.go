package shader

// DPP and SDWA operand modifiers of 32-bit VOP1/VOP2 instructions (Vega ISA, "Data Parallel
// Processing" and "Sub-Dword Addressing"; LLVM's AMDGPUUsage DPP controls).

// dppSource returns the lane lane l reads src0 from under dpp_ctrl c, and false when that lane is
// outside its row or the wave (an out-of-bounds read).
func dppSource(c uint16, l int) (int, bool) {
	row, r := l&^15, l&15
	switch {
	case c <= 0xff: // quad_perm
		return l&^3 | int(c>>(2*(l&3))&3), true
	case c >= 0x101 && c <= 0x10f: // row_shl:n
		n := int(c & 15)
		return l + n, r+n <= 15
	case c >= 0x111 && c <= 0x11f: // row_shr:n
		n := int(c & 15)
		return l - n, r >= n
	case c >= 0x121 && c <= 0x12f: // row_ror:n
		n := int(c & 15)
		return row | (r-n)&15, true
	case c == 0x130: // wave_shl:1
		return l + 1, l+1 < lanes
	case c == 0x134: // wave_rol:1
		return (l + 1) % lanes, true
	case c == 0x138: // wave_shr:1
		return l - 1, l >= 1
	case c == 0x13c: // wave_ror:1
		return (l + lanes - 1) % lanes, true
	case c == 0x140: // row_mirror
		return row | 15 - r, true
	case c == 0x141: // row_half_mirror
		return l&^7 | 7 - l&7, true
	case c == 0x142: // row_bcast:15: rows 1..3 read the last lane of the row before
		return row - 1, row > 0
	case c == 0x143: // row_bcast:31: rows 2..3 read lane 31
		return 31, row >= 32
	case c >= 0x150 && c <= 0x15f: // gfx90a row_newbcast:n: every lane of a row reads the row's lane n
		return row | int(c&15), true
	}
	return l, false
}

// dppPermute permutes src0 under in's DPP control and returns the lanes the instruction may write: a
// lane is written when its row and bank are enabled by row_mask/bank_mask and its source lane is
// valid (in bounds and active in EXEC); an invalid source reads 0 instead when bound_ctrl is set.
// For 64-bit operands (gfx90a) both dwords of a lane move together.
func dppPermute[T uint32 | uint64](in *Inst, exec uint64, s *[lanes]T) (src [lanes]T, write uint64) {
	for l := 0; l < lanes; l++ {
		if in.RowMask>>(l>>4)&1 == 0 || in.BankMask>>(l>>2&3)&1 == 0 {
			continue
		}
		sl, ok := dppSource(in.DPPCtrl, l)
		if ok && exec>>sl&1 != 0 {
			src[l] = s[sl]
			write |= 1 << l
		} else if in.BoundCtrl {
			write |= 1 << l
		}
	}
	return src, write
}

// applyDPP permutes a 32-bit src0 into w.tmp[0] (dppPermute).
func (w *wave) applyDPP(in *Inst, s *[lanes]uint32) (*[lanes]uint32, uint64) {
	var write uint64
	w.tmp[0], write = dppPermute(in, w.exec(), s)
	return &w.tmp[0], write
}

// applyDPP64 permutes a 64-bit src0 in place (s is the caller's copy; dppPermute).
func (w *wave) applyDPP64(in *Inst, s *[lanes]uint64) (*[lanes]uint64, uint64) {
	var write uint64
	*s, write = dppPermute(in, w.exec(), s)
	return s, write
}

// SDWA selects (SDWA_SEL): bytes 0..3, words 0..1, the whole dword.
const (
	selByte0 = iota
	selByte1
	selByte2
	selByte3
	selWord0
	selWord1
	selDword
)

// sdwaExtract is the operand an SDWA source select and sign-extension give.
func sdwaExtract(v uint32, sel uint8, sext bool) uint32 {
	var x uint32
	var width uint
	switch {
	case sel <= selByte3:
		x, width = v>>(8*sel)&0xff, 8
	case sel <= selWord1:
		x, width = v>>(16*(sel-selWord0))&0xffff, 16
	default:
		return v
	}
	if sext && x>>(width-1)&1 != 0 {
		x |= ^uint32(0) << width
	}
	return x
}

// sdwaInsert writes result r into old under dst_sel and dst_unused (0 pad with zeros, 1 sign-extend
// the field, 2 preserve the other bits).
func sdwaInsert(old, r uint32, sel, unused uint8) uint32 {
	var shift, width uint
	switch {
	case sel <= selByte3:
		shift, width = 8*uint(sel), 8
	case sel <= selWord1:
		shift, width = 16*uint(sel-selWord0), 16
	default:
		return r
	}
	mask := uint32(1)<<width - 1
	field := (r & mask) << shift
	switch unused {
	case 2: // UNUSED_PRESERVE
		return old&^(mask<<shift) | field
	case 1: // UNUSED_SEXT: the bits above the field repeat its sign bit
		if r>>(width-1)&1 != 0 {
			return field | ^uint32(0)<<(shift+width)
		}
	}
	return field
}
