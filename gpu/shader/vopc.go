package shader

import (
	"math"
	"math/bits"
	"strings"
)

// cmpFn evaluates a VOPC predicate; ints are compared after sign/zero extension to 64 bits, floats as f64.
func cmpPred(op string, t string) func(a, b uint64) bool {
	isF := t[0] == 'f'
	signed := t[0] == 'i'
	wbits := map[byte]uint{'6': 64, '3': 32, '1': 16}[t[1]]
	ext := func(v uint64) (int64, uint64, float64) {
		if wbits < 64 {
			v &= 1<<wbits - 1
		}
		var s int64
		switch wbits {
		case 16:
			s = int64(int16(v))
		case 32:
			s = int64(int32(v))
		default:
			s = int64(v)
		}
		var f float64
		switch wbits {
		case 16:
			f = float64(f16to32(uint16(v)))
		case 32:
			f = float64(f32(uint32(v)))
		default:
			f = f64(v)
		}
		return s, v, f
	}
	return func(a, b uint64) bool {
		sa, ua, fa := ext(a)
		sb, ub, fb := ext(b)
		if isF {
			un := math.IsNaN(fa) || math.IsNaN(fb)
			switch op {
			case "f":
				return false
			case "lt":
				return fa < fb
			case "eq":
				return fa == fb
			case "le":
				return fa <= fb
			case "gt":
				return fa > fb
			case "lg":
				return fa < fb || fa > fb
			case "ge":
				return fa >= fb
			case "o":
				return !un
			case "u":
				return un
			case "nge":
				return !(fa >= fb)
			case "nlg":
				return !(fa < fb || fa > fb)
			case "ngt":
				return !(fa > fb)
			case "nle":
				return !(fa <= fb)
			case "neq":
				return !(fa == fb)
			case "nlt":
				return !(fa < fb)
			case "tru":
				return true
			}
			return false
		}
		lt := ua < ub
		if signed {
			lt = sa < sb
		}
		switch op {
		case "f":
			return false
		case "lt":
			return lt
		case "eq":
			return ua == ub
		case "le":
			return lt || ua == ub
		case "gt":
			return !lt && ua != ub
		case "ne":
			return ua != ub
		case "ge":
			return !lt
		case "t":
			return true
		}
		return false
	}
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
	pred := cmpPred(n[:i], t)
	wide := t[1] == '6'
	kind := k32
	switch t {
	case "f64":
		kind = k64f
	case "i64", "u64":
		kind = k64i
	case "f16":
		kind = k16f
	}
	return func(w *wave, in *Inst) error {
		sdwa := in.Ext == extSDWA && !wide // SDWA VOPC (GFX9): sub-dword selects of both sources
		if !sdwa {
			if err := w.checkExt(in); err != nil {
				return err
			}
		}
		var a, b *[lanes]uint64
		var err error
		if wide {
			if a, err = w.vsrc64(in, in.Opnd[fSrc0], kind, 0); err != nil {
				return err
			}
			if b, err = w.vsrc64(in, in.Opnd[fSrc1], kind, 1); err != nil {
				return err
			}
		} else {
			a32, err := w.vsrc(in, in.Opnd[fSrc0], kind, 0)
			if err != nil {
				return err
			}
			b32, err := w.vsrc(in, in.Opnd[fSrc1], kind, 1)
			if err != nil {
				return err
			}
			a, b = &w.tmp64[0], &w.tmp64[1]
			for l := range a {
				a[l], b[l] = uint64(a32[l]), uint64(b32[l])
			}
			if sdwa {
				for l := range a {
					a[l] = uint64(sdwaExtract(uint32(a[l]), in.SDWASrc0Sel, in.SDWASext0))
					b[l] = uint64(sdwaExtract(uint32(b[l]), in.SDWASrc1Sel, in.SDWASext1))
				}
			}
		}
		sign := uint64(1) << map[byte]uint{'6': 63, '3': 31, '1': 15}[t[1]]
		var r uint64
		for m := w.exec(); m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			av, bv := a[l], b[l]
			if t[0] == 'f' {
				for k, p := range []*uint64{&av, &bv} {
					if in.Abs>>k&1 != 0 {
						*p &^= sign
					}
					if in.Neg>>k&1 != 0 {
						*p ^= sign
					}
				}
			}
			if pred(av, bv) {
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
