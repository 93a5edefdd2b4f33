package shader

import (
	"math/bits"
	"strings"
)

// cmpMask is the set of outcomes a VOPC predicate is true for, as bits by outcome: bit 0 less,
// bit 1 equal, bit 2 greater, bit 3 unordered (a NaN operand). The float predicates' opcodes are
// this mask (f=0 .. tru=15, the Vega ISA's VOPC order); the integer ones never see unordered.
func cmpMask(op string, isF bool) (uint8, bool) {
	if isF {
		for i, n := range [...]string{"f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt", "tru"} {
			if n == op {
				return uint8(i), true
			}
		}
		return 0, false
	}
	m, ok := map[string]uint8{"f": 0, "lt": 1, "eq": 2, "le": 3, "gt": 4, "ne": 5, "ge": 6, "t": 7}[op]
	return m, ok
}

// intOutcome is 0 (less), 1 (equal) or 2 (greater) of two keys compared unsigned.
func intOutcome(a, b uint64) uint {
	switch {
	case a < b:
		return 0
	case a == b:
		return 1
	}
	return 2
}

// floatOutcome is the outcome (0 less, 1 equal, 2 greater, 3 unordered) of two floats.
func floatOutcome(a, b float64) uint {
	switch {
	case a < b:
		return 0
	case a == b:
		return 1
	case a > b:
		return 2
	}
	return 3
}

// cmpKey maps an integer operand of the compared width (low its bits, sign its sign bit) to a
// 64-bit key whose unsigned order is the type's order.
func cmpKey(v, low, sign uint64, signed bool) uint64 {
	v &= low
	if signed {
		if v&sign != 0 {
			v |= ^low // sign extension
		}
		v ^= 1 << 63
	}
	return v
}

// cmpFloat converts a float operand of width wbits, abs and neg applied to its sign, to float64
// (exactly); flush makes a denormal a zero of the same sign first.
func cmpFloat(v uint64, abs, neg bool, sign uint64, wbits uint, flush bool) float64 {
	if abs {
		v &^= sign
	}
	if neg {
		v ^= sign
	}
	switch wbits {
	case 16:
		if flush {
			v = uint64(h16Flush(uint32(v)))
		}
		return float64(f16to32(uint16(v)))
	case 32:
		if flush {
			v = uint64(flush32(uint32(v)))
		}
		return float64(f32(uint32(v)))
	}
	if flush {
		v = flush64(v)
	}
	return f64(v)
}

// cmpFlush reports whether a float compare of width wbits flushes denormal inputs under the
// wave's MODE.FP_DENORM (bit 4: f32, bit 6: f64 and f16; clear flushes). LLVM relies on it: under
// "denormal-fp-math-f32"="preserve-sign" (hipcc -fgpu-flush-denormals-to-zero) it compares raw
// inputs, and the LangRef has an operation in that mode treat a denormal input as zero.
func cmpFlush(mode uint32, wbits uint) bool {
	if wbits == 32 {
		return mode&0x10 == 0
	}
	return mode&0x40 == 0
}

func vopcExec(name string) execFn {
	n := strings.TrimPrefix(baseName(name), "v_")
	x := strings.HasPrefix(n, "cmpx_")
	n = strings.TrimPrefix(strings.TrimPrefix(n, "cmpx_"), "cmp_")
	i := strings.LastIndexByte(n, '_')
	if i < 0 {
		return nil
	}
	if n[:i] == "class" {
		return classExec(n[i+1:], x)
	}
	t := n[i+1:]
	isF, signed := t[0] == 'f', t[0] == 'i'
	mask, ok := cmpMask(n[:i], isF)
	if !ok {
		return nil
	}
	wbits := map[byte]uint{'6': 64, '3': 32, '1': 16}[t[1]]
	wide := wbits == 64
	kind := k32
	switch t {
	case "f64":
		kind = k64f
	case "i64", "u64":
		kind = k64i
	case "f16":
		kind = k16f
	}
	sign := uint64(1) << (wbits - 1)
	low := uint64(1)<<wbits - 1 // the compared bits
	if wide {
		low = ^uint64(0)
	}
	return func(w *wave, in *Inst) error {
		sdwa := in.Ext == extSDWA && !wide // SDWA VOPC (GFX9): sub-dword selects of both sources
		if !sdwa {
			if err := w.checkExt(in); err != nil {
				return err
			}
		}
		var a, b lane64
		if wide {
			var err error
			if a, err = w.src64(in, in.Opnd[fSrc0], kind); err != nil {
				return err
			}
			if b, err = w.src64(in, in.Opnd[fSrc1], kind); err != nil {
				return err
			}
		} else {
			var a32, b32 lane32
			var err error
			if a32.r = w.vreg(in.Opnd[fSrc0]); a32.r == nil {
				if a32, err = w.src32(in, in.Opnd[fSrc0], kind); err != nil {
					return err
				}
			}
			if b32.r = w.vreg(in.Opnd[fSrc1]); b32.r == nil {
				if b32, err = w.src32(in, in.Opnd[fSrc1], kind); err != nil {
					return err
				}
			}
			a.lo, a.c, b.lo, b.c = a32.r, uint64(a32.c), b32.r, uint64(b32.c)
		}
		var r uint64
		if m := w.exec(); m&(m-1) != 0 && !isF && !sdwa && bits.OnesCount64(m) >= denseLanes {
			r = cmpDense(w, a, b, m, mask, wide, low, sign, signed)
			w.sset64(in.Opnd[fDst], r)
			if x {
				w.setExec(r)
			}
			return nil
		}
		fl := isF && cmpFlush(w.mode, wbits)
		for m := w.exec(); m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			var av, bv uint64
			if wide {
				av, bv = a.at(l), b.at(l)
			} else {
				av, bv = a.c, b.c
				if a.lo != nil {
					av = uint64(a.lo[l])
				}
				if b.lo != nil {
					bv = uint64(b.lo[l])
				}
				if sdwa {
					av = uint64(sdwaExtract(uint32(av), in.SDWASrc0Sel, in.SDWASext0))
					bv = uint64(sdwaExtract(uint32(bv), in.SDWASrc1Sel, in.SDWASext1))
				}
			}
			var o uint
			if isF {
				o = floatOutcome(cmpFloat(av, in.Abs&1 != 0, in.Neg&1 != 0, sign, wbits, fl), cmpFloat(bv, in.Abs&2 != 0, in.Neg&2 != 0, sign, wbits, fl))
			} else {
				o = intOutcome(cmpKey(av, low, sign, signed), cmpKey(bv, low, sign, signed))
			}
			r |= uint64(mask>>o&1) << l
		}
		w.sset64(in.Opnd[fDst], r)
		if x {
			w.setExec(r)
		}
		return nil
	}
}

// cmpDense is an integer compare of many active lanes: the keys of both sources as rows, then
// one branch-free pass over all 64 lanes that finds the lanes whose first key is below and those
// whose first key is above the second (cmpSelect combines them by the outcome mask); inactive
// lanes' bits are cleared. (Its own function: the sparse path's frame stays small.)
func cmpDense(w *wave, a, b lane64, m uint64, mask uint8, wide bool, low, sign uint64, signed bool) (r uint64) {
	// A constant operand is one key, not a row of them: the predicate against a constant y is
	// "x < y", "x == y", "x > y" combined by mask, against a constant x the same with the
	// outcome mirrored. A 64-bit register pair against a constant is compared without a key row.
	ka, kb := &w.tmp64[0], &w.tmp64[1]
	mirror := mask&2 | mask&1<<2 | mask>>2&1 // x ? y is y ?' x with less and greater swapped
	if simd && !wide && low == 1<<32-1 && (a.lo != nil || b.lo != nil) {
		// 32-bit integers (simd_amd64.s): the keys' order is that of the dwords as signed
		// values after an XOR with bias.
		bias := uint32(1 << 31)
		if signed {
			bias = 0
		}
		var lt, gt uint64
		switch {
		case a.lo != nil && b.lo != nil:
			lt, gt = cmp32RowsAVX2(a.lo, b.lo, bias)
		case a.lo != nil:
			lt, gt = cmp32ConstAVX2(a.lo, uint32(b.c), bias)
		default:
			lt, gt = cmp32ConstAVX2(b.lo, uint32(a.c), bias)
			mask = mirror
		}
		return cmpSelect(lt, gt, mask) & m
	}
	switch {
	case a.lo != nil && b.lo == nil && wide:
		return cmpPairSelect(a.lo, a.hi, cmpKey(b.c, low, sign, signed), signed, mask) & m
	case a.lo == nil && b.lo != nil && wide:
		return cmpPairSelect(b.lo, b.hi, cmpKey(a.c, low, sign, signed), signed, mirror) & m
	case a.lo != nil && b.lo == nil:
		cmpKeys(ka, a, wide, low, sign, signed)
		lt, gt := cmpRowConst(ka, cmpKey(b.c, low, sign, signed))
		return cmpSelect(lt, gt, mask) & m
	case a.lo == nil && b.lo != nil:
		cmpKeys(kb, b, wide, low, sign, signed)
		lt, gt := cmpRowConst(kb, cmpKey(a.c, low, sign, signed))
		return cmpSelect(lt, gt, mirror) & m
	}
	cmpKeys(ka, a, wide, low, sign, signed)
	cmpKeys(kb, b, wide, low, sign, signed)
	kas, kbs := ka[:], kb[:]
	var lt, gt uint64
	for l := lanes - 1; l >= 0; l-- { // lane l ends at bit l
		x, y := kas[l], kbs[l]
		lt, gt = lt<<1|b2u(x < y), gt<<1|b2u(x > y)
	}
	return cmpSelect(lt, gt, mask) & m
}

// cmpSelect is the compare result of each lane from the lanes whose first operand is below (lt)
// and above (gt) the second: bit 0 of mask selects "less", bit 1 "equal", bit 2 "greater".
func cmpSelect(lt, gt uint64, mask uint8) (r uint64) {
	if mask&1 != 0 {
		r |= lt
	}
	if mask&2 != 0 {
		r |= ^(lt | gt)
	}
	if mask&4 != 0 {
		r |= gt
	}
	return r
}

// cmpRowConst compares each key of k with the constant key y: the lanes below and above it.
func cmpRowConst(k *[lanes]uint64, y uint64) (lt, gt uint64) {
	ks := k[:]
	for l := lanes - 1; l >= 0; l-- {
		x := ks[l]
		lt, gt = lt<<1|b2u(x < y), gt<<1|b2u(x > y)
	}
	return lt, gt
}

// cmpPairSelect is cmpSelect(cmpPairConst(lo, hi, y, signed), mask). The predicates other than
// equal and not-equal need one of the two masks (less: lt; greater or equal: ^lt; greater: gt;
// less or equal: ^gt), which cmpPairOne finds with one comparison per lane.
func cmpPairSelect(lo, hi *[lanes]uint32, y uint64, signed bool, mask uint8) uint64 {
	switch mask {
	case 1:
		return cmpPairOne(lo, hi, y, signed, false)
	case 6:
		return ^cmpPairOne(lo, hi, y, signed, false)
	case 4:
		return cmpPairOne(lo, hi, y, signed, true)
	case 3:
		return ^cmpPairOne(lo, hi, y, signed, true)
	}
	lt, gt := cmpPairConst(lo, hi, y, signed)
	return cmpSelect(lt, gt, mask)
}

// cmpPairOne is cmpPairConst's lt (above: its gt) alone, eight lanes per round through [8]uint32
// views (one bounds check per row and round), the higher lanes shifted in first.
func cmpPairOne(lo, hi *[lanes]uint32, y uint64, signed, above bool) (r uint64) {
	flip := uint64(0)
	if signed {
		flip = 1 << 63
	}
	if simd { // simd_amd64.s: VPCMPGTQ compares signed, so both sides are biased by 1<<63
		if above {
			return cmpPairGtAVX2(lo, hi, flip^1<<63, y^1<<63)
		}
		return cmpPairLtAVX2(lo, hi, flip^1<<63, y^1<<63)
	}
	los, his := lo[:], hi[:]
	for g := lanes - 8; g >= 0; g -= 8 {
		p, q := (*[8]uint32)(los[g:]), (*[8]uint32)(his[g:])
		x0, x1 := (uint64(p[0])|uint64(q[0])<<32)^flip, (uint64(p[1])|uint64(q[1])<<32)^flip
		x2, x3 := (uint64(p[2])|uint64(q[2])<<32)^flip, (uint64(p[3])|uint64(q[3])<<32)^flip
		x4, x5 := (uint64(p[4])|uint64(q[4])<<32)^flip, (uint64(p[5])|uint64(q[5])<<32)^flip
		x6, x7 := (uint64(p[6])|uint64(q[6])<<32)^flip, (uint64(p[7])|uint64(q[7])<<32)^flip
		if above { // x > y
			r = r<<8 | b2u(x7 > y)<<7 | b2u(x6 > y)<<6 | b2u(x5 > y)<<5 | b2u(x4 > y)<<4 |
				b2u(x3 > y)<<3 | b2u(x2 > y)<<2 | b2u(x1 > y)<<1 | b2u(x0 > y)
		} else {
			r = r<<8 | b2u(x7 < y)<<7 | b2u(x6 < y)<<6 | b2u(x5 < y)<<5 | b2u(x4 < y)<<4 |
				b2u(x3 < y)<<3 | b2u(x2 < y)<<2 | b2u(x1 < y)<<1 | b2u(x0 < y)
		}
	}
	return r
}

// cmpPairConst is cmpRowConst of the 64-bit keys of a register pair (cmpKeys' wide case), read
// from the rows directly.
func cmpPairConst(lo, hi *[lanes]uint32, y uint64, signed bool) (lt, gt uint64) {
	flip := uint64(0)
	if signed {
		flip = 1 << 63
	}
	los, his := lo[:], hi[:]
	for l := lanes - 1; l >= 0; l-- {
		x := (uint64(los[l]) | uint64(his[l])<<32) ^ flip
		lt, gt = lt<<1|b2u(x < y), gt<<1|b2u(x > y)
	}
	return lt, gt
}

// cmpKeys fills k with the compare keys (cmpKey) of the 64 lanes of s: a register row (pair when
// wide) or a constant.
func cmpKeys(k *[lanes]uint64, s lane64, wide bool, low, sign uint64, signed bool) {
	switch {
	case s.lo == nil:
		c := cmpKey(s.c, low, sign, signed)
		ks := k[:]
		for l := range ks {
			ks[l] = c
		}
	case wide:
		flip := uint64(0)
		if signed {
			flip = 1 << 63
		}
		ks, lo, hi := k[:], s.lo[:], s.hi[:]
		for l := range ks {
			ks[l] = (uint64(lo[l]) | uint64(hi[l])<<32) ^ flip
		}
	default:
		ks, lo := k[:], s.lo[:]
		for l := range ks {
			ks[l] = cmpKey(uint64(lo[l]), low, sign, signed)
		}
	}
}

// fpClass is the V_CMP_CLASS bit of a value: 0 signaling NaN, 1 quiet NaN, 2 -inf, 3 -normal,
// 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf. e is the exponent field, m the fraction,
// q the fraction's quiet bit.
func fpClass(neg bool, e, eMax, m, q uint64) uint {
	var c uint
	switch {
	case e == eMax && m != 0:
		if m&q != 0 {
			return 1
		}
		return 0
	case e == eMax:
		c = 9
	case e != 0:
		c = 8
	case m != 0:
		c = 7
	default:
		c = 6
	}
	if neg {
		return 11 - c // +0..+inf (6..9) mirror to -0..-inf (5..2)
	}
	return c
}

// classExec is V_CMP(X)_CLASS_F16/F32/F64: lane bit = S1 mask bit of S0's class (S1 is 32 bits for
// every type); the X forms also write EXEC.
func classExec(t string, x bool) execFn {
	return func(w *wave, in *Inst) error {
		if err := w.checkExt(in); err != nil {
			return err
		}
		var a *[lanes]uint64
		var err error
		if t == "f64" {
			if a, err = w.vsrc64(in, in.Opnd[fSrc0], k64f, 0); err != nil {
				return err
			}
		} else {
			kind := k32
			if t == "f16" {
				kind = k16f
			}
			a32, err := w.vsrc(in, in.Opnd[fSrc0], kind, 0)
			if err != nil {
				return err
			}
			a = &w.tmp64[0]
			for l := range a {
				a[l] = uint64(a32[l])
			}
		}
		mask, err := w.vsrc(in, in.Opnd[fSrc1], k32, 1)
		if err != nil {
			return err
		}
		var r uint64
		for m := w.exec(); m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			v := a[l]
			var c uint
			switch t {
			case "f64":
				v = classMods(v, in, 63)
				c = fpClass(v>>63 != 0, v>>52&0x7ff, 0x7ff, v&(1<<52-1), 1<<51)
			case "f32":
				v = classMods(v, in, 31)
				c = fpClass(v>>31&1 != 0, v>>23&0xff, 0xff, v&(1<<23-1), 1<<22)
			default:
				v = classMods(v, in, 15)
				c = fpClass(v>>15&1 != 0, v>>10&0x1f, 0x1f, v&(1<<10-1), 1<<9)
			}
			if mask[l]>>c&1 != 0 {
				r |= 1 << l
			}
		}
		w.sset64(in.Opnd[fDst], r)
		if x {
			w.setExec(r)
		}
		return nil
	}
}

// classMods applies the VOP3 abs/neg of source 0 to the sign bit.
func classMods(v uint64, in *Inst, sign uint) uint64 {
	if in.Abs&1 != 0 {
		v &^= 1 << sign
	}
	if in.Neg&1 != 0 {
		v ^= 1 << sign
	}
	return v
}

// vopcOps binds the compares (VOPC and their VOP3 forms) from their mnemonics' grammar.
func vopcOps() {
	for op := Op(1); op < NumOps; op++ {
		if n := opNames[op]; strings.HasPrefix(n, "v_cmp") {
			if f := vopcExec(n); f != nil {
				def(op, f)
			}
		}
	}
}
