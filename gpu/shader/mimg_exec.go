package shader

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// mimgOps binds the MIMG opcodes (optab.go). The routines check their own register ranges, which
// depend on DMASK, D16, A16 and the T#. The _pck forms (raw texel bits without conversion) have none.
func mimgOps() {
	def(OpImageLoad, imageLoadStore(false, false))
	def(OpImageLoadMip, imageLoadStore(false, true))
	def(OpImageStore, imageLoadStore(true, false))
	def(OpImageStoreMip, imageLoadStore(true, true))
	def(OpImageGetResinfo, imageResinfo)
	def(OpImageSample, imageSample)
	for op, name := range map[Op]string{
		OpImageAtomicSwap: "swap", OpImageAtomicCmpswap: "cmpswap", OpImageAtomicAdd: "add",
		OpImageAtomicSub: "sub", OpImageAtomicSmin: "smin", OpImageAtomicUmin: "umin",
		OpImageAtomicSmax: "smax", OpImageAtomicUmax: "umax", OpImageAtomicAnd: "and",
		OpImageAtomicOr: "or", OpImageAtomicXor: "xor", OpImageAtomicInc: "inc", OpImageAtomicDec: "dec",
	} {
		def(op, imageAtomic(name, imageAtomicOps[name]))
	}
}

// imageRsrcOf reads and decodes the instruction's T# (SRSRC, eight SGPRs).
func imageRsrcOf(w *wave, in *Inst) imageRsrc {
	s := in.Opnd[fSAddr]
	var d [8]uint32
	copy(d[:], w.s[s:s+8])
	return decodeImageRsrc(d)
}

// mimgOperands checks the VDATA and VADDR register ranges for the instruction's T# r and returns
// it. naddr is the number of address components; with A16 two share a VGPR.
func mimgOperands(w *wave, in *Inst, r imageRsrc, naddr int) (_ imageRsrc, ndata int, err error) {
	m := &in.MIMG
	ndata = bits.OnesCount8(m.DMask)
	if m.D16 {
		ndata = (ndata + 1) / 2
	}
	if strings.Contains(in.Info.Name, "cmpswap") {
		ndata = 2
	}
	nregs := naddr
	if m.A16 {
		nregs = (naddr + 1) / 2
	}
	if !w.fit(int(in.Opnd[fAddr]-opVGPR0) + nregs) {
		return r, 0, fmt.Errorf("%w: address %s", ErrIllegal, regName(in.Opnd[fAddr], nregs))
	}
	if !w.fit(int(in.Opnd[fData0]-opVGPR0) + max(ndata, 1)) {
		return r, 0, fmt.Errorf("%w: data %s", ErrIllegal, regName(in.Opnd[fData0], ndata))
	}
	return r, ndata, nil
}

// addrComp is address component k of lane l: a VGPR, or with A16 the k&1 half of VGPR k/2
// (zero-extended for integer coordinates, binary16 widened to f32 bits for sample coordinates).
func addrComp(w *wave, in *Inst, l, k int, float bool) uint32 {
	a := int(in.Opnd[fAddr] - opVGPR0)
	if !in.MIMG.A16 {
		return w.v[a+k][l]
	}
	h := w.v[a+k/2][l] >> (16 * uint(k&1)) & 0xffff
	if float {
		return u32(f16to32(uint16(h)))
	}
	return h
}

// putData writes channel value v (32-bit, or 16-bit with D16) as the i-th enabled channel of lane l.
func putData(w *wave, in *Inst, l, i int, v uint32) {
	d := int(in.Opnd[fData0] - opVGPR0)
	if !in.MIMG.D16 {
		w.v[d+i][l] = v
		return
	}
	p := &w.v[d+i/2][l]
	sh := 16 * uint(i&1)
	*p = *p&^(0xffff<<sh) | v&0xffff<<sh
}

func getData(w *wave, in *Inst, l, i int) uint32 {
	d := int(in.Opnd[fData0] - opVGPR0)
	if !in.MIMG.D16 {
		return w.v[d+i][l]
	}
	return w.v[d+i/2][l] >> (16 * uint(i&1)) & 0xffff
}

// texelCoords reads the integer coordinates of lane l and reports whether they address a texel of
// the resource: x < WIDTH, y < HEIGHT, z < depth (3D) or slice <= DEPTH - BASE_ARRAY (arrays).
func texelCoords(w *wave, in *Inst, r *imageRsrc, l int, mip bool) (x, y, z uint32, ok bool) {
	n, _ := r.dims()
	c := [3]uint32{}
	for k := 0; k < n; k++ {
		c[k] = addrComp(w, in, l, k, false)
	}
	if mip && addrComp(w, in, l, n, false) != 0 {
		return 0, 0, 0, false // one level (imageRsrc.check): other levels are out of range
	}
	x, y, z = c[0], c[1], c[2]
	if n == 2 && r.typ == imgType1DArray {
		y, z = 0, c[1]
	}
	return x, y, z, x < r.width && y < r.height && z < r.slices()
}

// imageLoadStore implements IMAGE_LOAD(_MIP) and IMAGE_STORE(_MIP) with formatted conversion (the
// typed buffer conversions of rare_mem.go: UNORM/SNORM/USCALED/SSCALED/UINT/SINT/FLOAT, D16 packing).
// Loads apply DST_SEL to (x, y, z, w; missing components 0, 0, 0, 1) and write the channels DMASK
// enables to consecutive VGPRs; a texel outside the resource loads 0 in every channel. Stores take
// the DMASK-enabled channels from consecutive VGPRs as the format's components x, y, z, w (DST_SEL is not
// applied, as for typed buffer stores; every component of the format must be enabled) and drop texels
// outside the resource.
func imageLoadStore(store, mip bool) execFn {
	return func(w *wave, in *Inst) error {
		m := &in.MIMG
		rr := imageRsrcOf(w, in)
		if err := rr.check(store, m.D16); err != nil {
			return err
		}
		n, _ := rr.dims()
		if mip {
			n++
		}
		r, _, err := mimgOperands(w, in, rr, n)
		if err != nil {
			return err
		}
		f := bufDataFormats[r.dfmt]
		if store {
			for c := range f.comps {
				if m.DMask>>c&1 == 0 {
					return fmt.Errorf("%w: image_store with dmask %#x on a %d-component format", ErrUnimplemented, m.DMask, len(f.comps))
				}
			}
		}
		one := uint32(0x3f800000)
		if m.D16 {
			one = 0x3c00
		}
		if r.nfmt == nfUint || r.nfmt == nfSint {
			one = 1
		}
		var buf [16]byte
		e := buf[:f.size]
		for em := w.exec(); em != 0; em &= em - 1 {
			l := bits.TrailingZeros64(em)
			x, y, z, ok := texelCoords(w, in, &r, l, mip)
			a := r.texelAddr(x, y, z)
			if store {
				if !ok {
					continue
				}
				clear(e)
				i := 0
				for c := 0; c < 4; c++ {
					if m.DMask>>c&1 == 0 {
						continue
					}
					v := getData(w, in, l, i)
					i++
					if c >= len(f.comps) {
						continue
					}
					fb, err := storeComp(v, f.comps[c], r.nfmt, m.D16)
					if err != nil {
						return err
					}
					cf := f.comps[c]
					for b := uint(0); b < cf.width; b++ {
						p := cf.off + b
						e[p/8] |= byte(fb>>b&1) << (p % 8)
					}
				}
				if err := w.g.mem.Write(a, e); err != nil {
					return w.fault(in, a, true, err)
				}
				continue
			}
			var vec [4]uint32
			if ok {
				if err := w.g.mem.Read(a, e); err != nil {
					return w.fault(in, a, false, err)
				}
				vec = [4]uint32{0, 0, 0, one}
				for k, c := range f.comps {
					vec[k] = bufLoadComp(e, c, r.nfmt, m.D16)
				}
			}
			i := 0
			for c := 0; c < 4; c++ {
				if m.DMask>>c&1 == 0 {
					continue
				}
				var v uint32
				switch sel := r.sel[c]; {
				case !ok:
				case sel == 1:
					v = one
				case sel >= 4:
					v = vec[sel-4]
				}
				putData(w, in, l, i, v)
				i++
			}
		}
		return nil
	}
}

// storeComp converts a VGPR channel (32-bit, or a 16-bit half with D16) to the raw bits of c.
func storeComp(v uint32, c bufField, nf uint32, d16 bool) (uint64, error) {
	switch {
	case !d16:
		return bufStoreComp(v, c, nf)
	case nf == nfFloat && c.width == 16:
		return uint64(v), nil
	case nf == nfUint:
		return bufStoreComp(v, c, nf)
	case nf == nfSint:
		return bufStoreComp(uint32(int32(int16(v))), c, nf)
	}
	return bufStoreComp(u32(f16to32(uint16(v))), c, nf)
}

// imageResinfo implements IMAGE_GET_RESINFO: VADDR holds the mip level; the channels are WIDTH, HEIGHT,
// the depth (3D) or array slice count (arrays; for a 1D array in the second channel), and the level
// count (LAST_LEVEL - BASE_LEVEL + 1), each minified to the level (at least 1), as integers. DMASK selects
// the channels written.
func imageResinfo(w *wave, in *Inst) error {
	r, _, err := mimgOperands(w, in, imageRsrcOf(w, in), 1)
	if err != nil {
		return err
	}
	if n, _ := r.dims(); n == 0 {
		return fmt.Errorf("%w: image resource TYPE %d", ErrUnimplemented, r.typ)
	}
	if in.MIMG.D16 {
		return fmt.Errorf("%w: image_get_resinfo d16", ErrUnimplemented)
	}
	_, array := r.dims()
	for em := w.exec(); em != 0; em &= em - 1 {
		l := bits.TrailingZeros64(em)
		lvl := addrComp(w, in, l, 0, false)
		minify := func(v uint32) uint32 {
			if lvl >= 32 {
				return 1
			}
			return max(v>>lvl, 1)
		}
		ch := [4]uint32{minify(r.width), minify(r.height), 1, r.lastLevel - r.baseLevel + 1}
		switch {
		case r.typ == imgType1DArray:
			ch[1] = r.slices()
		case array:
			ch[2] = r.slices()
		case r.typ == imgType3D:
			ch[2] = minify(r.depth + 1)
		}
		if r.typ == imgType1D {
			ch[1] = 1
		}
		i := 0
		for c := 0; c < 4; c++ {
			if in.MIMG.DMask>>c&1 != 0 {
				putData(w, in, l, i, ch[c])
				i++
			}
		}
	}
	return nil
}

// imageAtomicOps are the 32-bit read-modify-writes of the image atomics (src, cmp for cmpswap).
var imageAtomicOps = map[string]func(old, src, cmp uint32) uint32{
	"swap": func(_, s, _ uint32) uint32 { return s },
	"cmpswap": func(o, s, c uint32) uint32 {
		if o == c {
			return s
		}
		return o
	},
	"add":  func(o, s, _ uint32) uint32 { return o + s },
	"sub":  func(o, s, _ uint32) uint32 { return o - s },
	"smin": func(o, s, _ uint32) uint32 { return uint32(min(int32(o), int32(s))) },
	"umin": func(o, s, _ uint32) uint32 { return min(o, s) },
	"smax": func(o, s, _ uint32) uint32 { return uint32(max(int32(o), int32(s))) },
	"umax": func(o, s, _ uint32) uint32 { return max(o, s) },
	"and":  func(o, s, _ uint32) uint32 { return o & s },
	"or":   func(o, s, _ uint32) uint32 { return o | s },
	"xor":  func(o, s, _ uint32) uint32 { return o ^ s },
	"inc": func(o, s, _ uint32) uint32 { // as BUFFER_ATOMIC_INC
		if o >= s {
			return 0
		}
		return o + 1
	},
	"dec": func(o, s, _ uint32) uint32 {
		if o == 0 || o > s {
			return s
		}
		return o - 1
	},
}

// imageAtomic implements the 32-bit IMAGE_ATOMIC_* on a one-component 32-bit UINT or SINT image
// (the formats LLVM's image atomics are defined for): one Memory.Atomic per lane on the texel, VDATA
// the source (cmpswap: source then compare value), GLC returning the old value to the first VDATA
// register. A texel outside the resource is not changed and returns 0.
func imageAtomic(op string, f func(old, src, cmp uint32) uint32) execFn {
	return func(w *wave, in *Inst) error {
		rr := imageRsrcOf(w, in)
		if err := rr.check(true, false); err != nil {
			return err
		}
		if rr.dfmt != 4 || rr.nfmt != nfUint && rr.nfmt != nfSint {
			return fmt.Errorf("%w: image atomic on format DATA_FORMAT=%d NUM_FORMAT=%d", ErrUnimplemented, rr.dfmt, rr.nfmt)
		}
		if in.MIMG.D16 || in.MIMG.A16 {
			return fmt.Errorf("%w: image atomic with d16/a16", ErrUnimplemented)
		}
		n, _ := rr.dims()
		r, _, err := mimgOperands(w, in, rr, n)
		if err != nil {
			return err
		}
		dv := int(in.Opnd[fData0] - opVGPR0)
		for em := w.exec(); em != 0; em &= em - 1 {
			l := bits.TrailingZeros64(em)
			x, y, z, ok := texelCoords(w, in, &r, l, false)
			var old uint64
			if ok {
				src := w.v[dv][l]
				var cmp uint32
				if op == "cmpswap" {
					cmp = w.v[dv+1][l]
				}
				a := r.texelAddr(x, y, z)
				old, err = w.g.mem.Atomic(a, 4, func(o uint64) uint64 { return uint64(f(uint32(o), src, cmp)) })
				if err != nil {
					return w.fault(in, a, true, err)
				}
			}
			if in.Glc {
				w.v[dv][l] = uint32(old)
			}
		}
		return nil
	}
}

// imageSample implements IMAGE_SAMPLE on 1D, 2D, 3D and array images with one mip level: f32 (A16:
// binary16) coordinates, normalized unless the S# FORCE_UNNORMALIZED or the instruction's UNORM bit
// says otherwise (array slice coordinates are unnormalized, rounded to nearest even and clamped to the
// slices). Texel coordinates and filtering as the Vulkan specification's "Texel Filtering" (the GCN
// sampler implements those APIs): u = s*WIDTH; point: i = floor(u); bilinear: i0 = floor(u-0.5),
// weight frac(u-0.5), each texel index through the addressing mode (wrap, mirror, clamp to edge,
// mirror once, clamp to border); 3D images filter in z as in x and y (Z_FILTER "none" follows the XY
// filter, decision). Weights are exact (float64) and the filtered value is rounded once to f32: the
// hardware's fixed-point weight precision is not documented. Integer formats take point sampling
// only. Border texels are the S# BORDER_COLOR_TYPE constant (before DST_SEL).
func imageSample(w *wave, in *Inst) error {
	m := &in.MIMG
	rr := imageRsrcOf(w, in)
	if err := rr.check(false, m.D16); err != nil {
		return err
	}
	ss := in.Opnd[fSrc1]
	smp := decodeSampler([4]uint32{w.s[ss], w.s[ss+1], w.s[ss+2], w.s[ss+3]})
	if err := smp.check(); err != nil {
		return err
	}
	if rr.typ == imgTypeCube {
		return fmt.Errorf("%w: image_sample on a cube map", ErrUnimplemented)
	}
	n, array := rr.dims()
	if array && rr.slices() == 0 {
		return fmt.Errorf("%w: image_sample with BASE_ARRAY %d beyond the last slice %d", ErrUnimplemented, rr.baseArray, rr.depth)
	}
	r, _, err := mimgOperands(w, in, rr, n)
	if err != nil {
		return err
	}
	f := bufDataFormats[r.dfmt]
	intFmt := r.nfmt == nfUint || r.nfmt == nfSint
	linear := smp.magFilter == 1
	if linear && intFmt {
		return fmt.Errorf("%w: bilinear filtering of an integer format", ErrUnimplemented)
	}
	unnorm := smp.unnormalized || m.Unorm
	size := [3]uint32{r.width, r.height, r.depth + 1}
	if r.typ == imgType1DArray {
		size[1] = 1
	}
	one := uint32(0x3f800000)
	if intFmt {
		one = 1
	}
	var border [4]float64
	switch smp.borderType {
	case 1:
		border[3] = 1
	case 2:
		border = [4]float64{1, 1, 1, 1}
	}
	var buf [16]byte
	e := buf[:f.size]
	// fetch reads texel (x, y, z) (z: depth or slice) converted to float64 channels, or the border.
	fetch := func(x, y, z int64, isBorder bool) ([4]float64, [4]uint32, error) {
		if isBorder {
			var raw [4]uint32
			for k := range raw {
				raw[k] = uint32(border[k]) // integer formats: 0 or 1
			}
			return border, raw, nil
		}
		a := r.texelAddr(uint32(x), uint32(y), uint32(z))
		if err := w.g.mem.Read(a, e); err != nil {
			return [4]float64{}, [4]uint32{}, w.fault(in, a, false, err)
		}
		v := [4]float64{0, 0, 0, 1}
		raw := [4]uint32{0, 0, 0, one}
		for k, c := range f.comps {
			raw[k] = bufLoadComp(e, c, r.nfmt, false)
			v[k] = float64(f32(raw[k]))
		}
		return v, raw, nil
	}
	nf := n // filtered dimensions
	if array {
		nf--
	}
	for em := w.exec(); em != 0; em &= em - 1 {
		l := bits.TrailingZeros64(em)
		var slice int64
		if array {
			sc := float64(f32(addrComp(w, in, l, n-1, true)))
			slice = int64(math.Min(math.Max(math.RoundToEven(sc), 0), float64(r.slices()-1)))
			if sc != sc {
				slice = 0
			}
		}
		// Per dimension: up to two texel indices, their weights and whether each is border.
		var idx [3][2]int64
		var wt [3][2]float64
		var bd [3][2]bool
		taps := [3]int{1, 1, 1}
		for k := 0; k < 3; k++ {
			if k >= nf {
				wt[k][0] = 1
				continue
			}
			c := f32(addrComp(w, in, l, k, true))
			u := float64(c)
			if !unnorm {
				u = float64(c * float32(size[k]))
			}
			if linear {
				u0 := float64(float32(u) - 0.5)
				fl := math.Floor(u0)
				a := u0 - fl
				idx[k] = [2]int64{int64(fl), int64(fl) + 1}
				wt[k] = [2]float64{1 - a, a}
				taps[k] = 2
			} else {
				idx[k][0] = int64(math.Floor(u))
				wt[k][0] = 1
			}
			if u != u || math.IsInf(u, 0) {
				idx[k] = [2]int64{0, 0}
			}
			for t := 0; t < taps[k]; t++ {
				idx[k][t], bd[k][t] = texAddress(idx[k][t], int64(size[k]), smp.clamp[k])
			}
		}
		var acc [4]float64
		var rawOut [4]uint32
		for tz := 0; tz < taps[2]; tz++ {
			for ty := 0; ty < taps[1]; ty++ {
				for tx := 0; tx < taps[0]; tx++ {
					wgt := wt[0][tx] * wt[1][ty] * wt[2][tz]
					if wgt == 0 && linear {
						continue
					}
					z := idx[2][tz]
					if array {
						z = slice
					}
					v, raw, err := fetch(idx[0][tx], idx[1][ty], z, bd[0][tx] || bd[1][ty] || bd[2][tz])
					if err != nil {
						return err
					}
					for c := range acc {
						acc[c] += wgt * v[c]
					}
					rawOut = raw
				}
			}
		}
		i := 0
		for c := 0; c < 4; c++ {
			if m.DMask>>c&1 == 0 {
				continue
			}
			var v uint32
			switch sel := r.sel[c]; {
			case sel == 1 && m.D16 && !intFmt:
				v = 0x3c00
			case sel == 1:
				v = one
			case sel >= 4 && intFmt:
				v = rawOut[sel-4]
			case sel >= 4 && m.D16:
				v = uint32(f64to16(float64(float32(acc[sel-4]))))
			case sel >= 4:
				v = u32(float32(acc[sel-4]))
			}
			putData(w, in, l, i, v)
			i++
		}
	}
	return nil
}

// texAddress applies addressing mode mode to texel index i of a dimension of n texels: the index
// to read, or border (Vulkan "Wrapping Operation"; SQ_TEX_* names).
func texAddress(i, n int64, mode uint32) (int64, bool) {
	mirror := func(v int64) int64 { // mirror(a) = a >= 0 ? a : -(1 + a)
		if v >= 0 {
			return v
		}
		return -1 - v
	}
	switch mode {
	case texWrap:
		return (i%n + n) % n, false
	case texMirror:
		p := (i%(2*n) + 2*n) % (2 * n)
		if p >= n {
			p = 2*n - 1 - p
		}
		return p, false
	case texClampLastTexel:
		return min(max(i, 0), n-1), false
	case texMirrorOnceLast:
		return min(mirror(i), n-1), false
	case texClampBorder:
		if i < 0 || i >= n {
			return 0, true
		}
		return i, false
	case texMirrorOnceBorder:
		i = mirror(i)
		if i >= n {
			return 0, true
		}
		return i, false
	}
	return min(max(i, 0), n-1), false
}
