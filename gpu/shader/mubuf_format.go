package shader

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// Typed MUBUF loads and stores (buffer_load/store_format_*).

// Buffer formats (GFX9 V# word 3: DST_SEL_X/Y/Z/W[11:0], NUM_FORMAT[14:12], DATA_FORMAT[18:15]).
type bufField struct{ off, width uint }

// bufDataFormats lists each DATA_FORMAT's components from x, and its element size in bytes. Component
// layouts as in the GCN BUF_DATA_FORMAT names, read from the high bits down (2_10_10_10: x in [9:0], w in
// [31:30]; 10_11_11: x 11 bits in [10:0], z 10 bits in [31:22]), as Mesa maps R10G10B10A2 and R11G11B10.
var bufDataFormats = [16]struct {
	name  string
	comps []bufField
	size  int
}{
	1:  {"8", []bufField{{0, 8}}, 1},
	2:  {"16", []bufField{{0, 16}}, 2},
	3:  {"8_8", []bufField{{0, 8}, {8, 8}}, 2},
	4:  {"32", []bufField{{0, 32}}, 4},
	5:  {"16_16", []bufField{{0, 16}, {16, 16}}, 4},
	6:  {"10_11_11", []bufField{{0, 11}, {11, 11}, {22, 10}}, 4},
	7:  {"11_11_10", []bufField{{0, 10}, {10, 11}, {21, 11}}, 4},
	8:  {"10_10_10_2", []bufField{{0, 2}, {2, 10}, {12, 10}, {22, 10}}, 4},
	9:  {"2_10_10_10", []bufField{{0, 10}, {10, 10}, {20, 10}, {30, 2}}, 4},
	10: {"8_8_8_8", []bufField{{0, 8}, {8, 8}, {16, 8}, {24, 8}}, 4},
	11: {"32_32", []bufField{{0, 32}, {32, 32}}, 8},
	12: {"16_16_16_16", []bufField{{0, 16}, {16, 16}, {32, 16}, {48, 16}}, 8},
	13: {"32_32_32", []bufField{{0, 32}, {32, 32}, {64, 32}}, 12},
	14: {"32_32_32_32", []bufField{{0, 32}, {32, 32}, {64, 32}, {96, 32}}, 16},
}

const (
	nfUnorm = iota
	nfSnorm
	nfUscaled
	nfSscaled
	nfUint
	nfSint
	nfReserved
	nfFloat
)

var bufNumFormats = [8]string{"UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT", "6", "FLOAT"}

// smallFloat decodes the unsigned 11-bit (6-bit mantissa) and 10-bit (5-bit mantissa) floats of
// 10_11_11/11_11_10 with FLOAT: 5-bit exponent, bias 15, denormals, inf and NaN as binary16 (exact).
func smallFloat(v uint32, width uint) float64 {
	mb := width - 5
	e, m := int(v>>mb&31), float64(v&(1<<mb-1))
	switch {
	case e == 31 && m == 0:
		return math.Inf(1)
	case e == 31:
		return math.NaN()
	case e == 0:
		return math.Ldexp(m, -14-int(mb))
	}
	return math.Ldexp(1+m/float64(uint(1)<<mb), e-15)
}

// bufCvt checks that a DATA_FORMAT/NUM_FORMAT pair is one the model converts exactly (nil error).
func bufCvt(df, nf uint32, store, d16 bool) error {
	f := bufDataFormats[df]
	bad := func(why string) error {
		return fmt.Errorf("%w: buffer format DATA_FORMAT=%d (%s) NUM_FORMAT=%d (%s)%s", ErrUnimplemented, df,
			f.name, nf, bufNumFormats[nf], why)
	}
	if f.comps == nil {
		return bad(": invalid or reserved data format")
	}
	w := f.comps[0].width
	packed := df >= 6 && df <= 9
	switch nf {
	case nfReserved:
		return bad(": reserved number format")
	case nfUnorm, nfSnorm:
		if w == 32 {
			return bad(": 32-bit normalized components")
		}
	case nfUint, nfSint:
		if d16 && w == 32 && !store {
			return bad(": d16 of a 32-bit integer component")
		}
	case nfFloat:
		switch {
		case df == 6 || df == 7:
			if store {
				return bad(": rounding of the unsigned 11/10-bit float stores is undocumented")
			}
		case packed, w == 8:
			return bad(": no float of this width")
		}
	}
	return nil
}

// bufLoadComp converts component c of raw element e to the 32-bit VGPR value (f32 bits or an integer), or
// with d16 to 16 bits (binary16 or a 16-bit integer). Normalized: n/(2^b-1), signed max(n/(2^(b-1)-1), -1),
// computed in float64 and rounded once (the quotient of a b<=16-bit integer cannot sit at a rounding
// midpoint, so the float64 step does not double-round).
func bufLoadComp(e []byte, c bufField, nf uint32, d16 bool) uint32 {
	var raw uint64
	for i := uint(0); i < 16 && int(i) < len(e); i++ {
		if i*8 >= c.off+c.width || i*8+8 <= c.off {
			continue
		}
		if i*8 >= c.off {
			raw |= uint64(e[i]) << (i*8 - c.off)
		} else {
			raw |= uint64(e[i]) >> (c.off - i*8)
		}
	}
	raw &= 1<<c.width - 1
	sx := int64(raw<<(64-c.width)) >> (64 - c.width)
	var x float64
	switch nf {
	case nfUint:
		if d16 {
			return uint32(raw) & 0xffff
		}
		return uint32(raw)
	case nfSint:
		if d16 {
			return uint32(sx) & 0xffff
		}
		return uint32(sx)
	case nfUnorm:
		x = float64(raw) / float64(uint64(1)<<c.width-1)
	case nfSnorm:
		x = math.Max(float64(sx)/float64(uint64(1)<<(c.width-1)-1), -1)
	case nfUscaled:
		x = float64(raw)
	case nfSscaled:
		x = float64(sx)
	case nfFloat:
		switch c.width {
		case 32:
			if !d16 {
				return uint32(raw)
			}
			x = float64(f32(uint32(raw)))
		case 16:
			if d16 {
				return uint32(raw)
			}
			return u32(f16to32(uint16(raw)))
		default:
			x = smallFloat(uint32(raw), c.width)
		}
	}
	if d16 {
		return uint32(f64to16(x))
	}
	return u32(float32(x))
}

// bufStoreComp converts a 32-bit VGPR value (f32 bits or an integer) to the raw bits of component c. UNORM
// and SNORM clamp (NaN -> 0) and round to nearest even (the D3D/Vulkan conversion rule); SCALED, UINT and
// SINT values that are not exactly representable in the component (fractions, out of range) stop the wave:
// whether the hardware rounds, truncates, clamps or wraps them is not documented.
func bufStoreComp(v uint32, c bufField, nf uint32) (uint64, error) {
	mask := uint64(1)<<c.width - 1
	x := float64(f32(v))
	bad := func() (uint64, error) {
		return 0, fmt.Errorf("%w: value %#x not representable in a %d-bit %s component", ErrUnimplemented, v,
			c.width, bufNumFormats[nf])
	}
	switch nf {
	case nfUnorm:
		if x != x {
			x = 0
		}
		return uint64(math.RoundToEven(math.Min(math.Max(x, 0), 1) * float64(mask))), nil
	case nfSnorm:
		if x != x {
			x = 0
		}
		n := math.RoundToEven(math.Min(math.Max(x, -1), 1) * float64(mask>>1))
		return uint64(int64(n)) & mask, nil
	case nfUscaled:
		if x != math.Trunc(x) || x < 0 || x > float64(mask) {
			return bad()
		}
		return uint64(x), nil
	case nfSscaled:
		if x != math.Trunc(x) || x < -float64(mask>>1)-1 || x > float64(mask>>1) {
			return bad()
		}
		return uint64(int64(x)) & mask, nil
	case nfUint:
		if uint64(v) > mask {
			return bad()
		}
		return uint64(v), nil
	case nfSint:
		s := int64(int32(v))
		if s < -int64(mask>>1)-1 || s > int64(mask>>1) {
			return bad()
		}
		return uint64(s) & mask, nil
	}
	// nfFloat
	if c.width == 16 {
		return uint64(f32to16(f32(v))), nil
	}
	return uint64(v), nil
}

// bufFormatExec implements BUFFER_LOAD_FORMAT_{X,XY,XYZ,XYZW} and BUFFER_STORE_FORMAT_* with their D16
// forms (GFX9 packed D16: two components per VGPR, low half first; _d16_x and _d16_hi_x write one half and
// keep the other, as the d16 loads in vmem.go; the unused high half of the last VGPR of _d16_xyz is kept).
// Loads convert the element's components, fill the missing ones with (0, 0, 0, 1) (1.0 for the float
// number formats) and apply DST_SEL (0, 1, or X/Y/Z/W); stores write only the components the instruction
// supplies (the bytes of byte-aligned components; the packed 10/11/2-bit formats need all of them) and
// ignore DST_SEL. Addressing is the raw MUBUF path's (vmem.go): a swizzled (ADD_TID_ENABLE) V# is refused;
// out of range (stride 0: offset + element size > NUM_RECORDS; else index >= NUM_RECORDS) loads return 0
// in every component and stores are dropped.
func bufFormatExec(name string) execFn {
	store := strings.HasPrefix(name, "buffer_store")
	t := name[strings.Index(name, "_format_")+len("_format_"):]
	d16 := d16None
	switch {
	case strings.HasPrefix(t, "d16_hi_"):
		d16, t = d16Hi, strings.TrimPrefix(t, "d16_hi_")
	case strings.HasPrefix(t, "d16_"):
		d16, t = d16Lo, strings.TrimPrefix(t, "d16_")
	}
	n := len(t) // components the instruction moves
	return func(w *wave, in *Inst) error {
		if in.Lds {
			return fmt.Errorf("%w: lds modifier", ErrUnimplemented)
		}
		r := in.Opnd[fSAddr]
		if r > 96 {
			return fmt.Errorf("%w: buffer resource %s", ErrIllegal, regName(r, 4))
		}
		d0, d1, d2, d3 := w.s[r], w.s[r+1], w.s[r+2], w.s[r+3]
		if d3>>23&1 != 0 {
			return fmt.Errorf("%w: typed access through a swizzled (ADD_TID_ENABLE) buffer resource", ErrUnimplemented)
		}
		df, nf := d3>>15&0xf, d3>>12&7
		if err := bufCvt(df, nf, store, d16 != d16None); err != nil {
			return err
		}
		f := bufDataFormats[df]
		if store && n < len(f.comps) && df >= 6 && df <= 9 {
			return fmt.Errorf("%w: partial store of the packed format %s", ErrUnimplemented, f.name)
		}
		one := uint32(0x3f800000) // DST_SEL 1 and the default w: 1.0, or 1 for the integer formats
		if d16 != d16None {
			one = 0x3c00
		}
		if nf == nfUint || nf == nfSint {
			one = 1
		}
		var sel [4]uint32
		for k := range sel {
			sel[k] = d3 >> (3 * k) & 7
			if !store && k < n && (sel[k] == 2 || sel[k] == 3) {
				return fmt.Errorf("%w: reserved DST_SEL %d", ErrUnimplemented, sel[k])
			}
		}
		base := uint64(d0) | uint64(d1&0xffff)<<32
		stride := uint64(d1 >> 16 & 0x3fff)
		soff, err := w.scalar(in, in.Opnd[fSrc0], k32)
		if err != nil {
			return err
		}
		nregs := n
		if d16 != d16None {
			nregs = (n + 1) / 2
		}
		data, err := w.vdst(in.Opnd[fData0], nregs)
		if err != nil {
			return err
		}
		dreg := int(in.Opnd[fData0] - opVGPR0)
		// half reads/writes component k of lane l in the VGPR layout of the instruction.
		get := func(l, k int) uint32 {
			switch d16 {
			case d16None:
				return w.v[dreg+k][l]
			case d16Hi:
				return data[l] >> 16
			}
			return w.v[dreg+k/2][l] >> (16 * (k & 1)) & 0xffff
		}
		put := func(l, k int, v uint32) {
			switch d16 {
			case d16None:
				w.v[dreg+k][l] = v
			case d16Hi:
				data[l] = data[l]&0xffff | v<<16
			default:
				p := &w.v[dreg+k/2][l]
				sh := 16 * uint(k&1)
				*p = *p&^(0xffff<<sh) | v&0xffff<<sh
			}
		}
		av := in.Opnd[fAddr] - opVGPR0
		var buf [16]byte
		e := buf[:f.size]
		for m := w.exec(); m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			off := uint32(in.Imm)
			var idx uint64
			vi := av
			if in.Idxen {
				idx = uint64(w.v[vi][l])
				vi++
			}
			if in.Offen {
				off += w.v[vi][l]
			}
			oob := idx >= uint64(d2)
			if stride == 0 {
				oob = uint64(off)+uint64(f.size) > uint64(d2)
			}
			a := base + uint64(uint32(soff)) + uint64(off) + idx*stride
			if store {
				if oob {
					continue
				}
				clear(e)
				end := 0 // bytes the supplied components cover (from the element start)
				for k := 0; k < n && k < len(f.comps); k++ {
					c := f.comps[k]
					v := get(l, k)
					var fb uint64
					switch {
					case d16 == d16None:
						fb, err = bufStoreComp(v, c, nf)
					case nf == nfFloat && c.width == 16: // the binary16 half as it is
						fb = uint64(v)
					case nf == nfUint: // a 16-bit integer half, zero- or sign-extended
						fb, err = bufStoreComp(v, c, nf)
					case nf == nfSint:
						fb, err = bufStoreComp(uint32(int32(int16(v))), c, nf)
					default: // a binary16 value (exact in f32)
						fb, err = bufStoreComp(u32(f16to32(uint16(v))), c, nf)
					}
					if err != nil {
						return err
					}
					for i := uint(0); i < c.width; i++ {
						p := c.off + i
						e[p/8] |= byte(fb>>i&1) << (p % 8)
					}
					end = max(end, int(c.off+c.width+7)/8)
				}
				if err := w.g.mem.Write(a, e[:end]); err != nil {
					return w.fault(in, a, true, err)
				}
				continue
			}
			var vec [4]uint32
			if !oob {
				if err := w.g.mem.Read(a, e); err != nil {
					return w.fault(in, a, false, err)
				}
				vec = [4]uint32{0, 0, 0, one}
				for k, c := range f.comps {
					vec[k] = bufLoadComp(e, c, nf, d16 != d16None)
				}
			}
			for k := 0; k < n; k++ {
				var v uint32
				switch s := sel[k]; {
				case oob:
				case s == 1:
					v = one
				case s >= 4:
					v = vec[s-4]
				}
				put(l, k, v)
			}
		}
		return nil
	}
}
