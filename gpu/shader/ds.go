package shader

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"unsafe"
)

// DS (LDS) instructions.
func dsExec(name string) execFn {
	switch name {
	case "ds_swizzle_b32", "ds_permute_b32", "ds_bpermute_b32":
		return dsCrossLane(name)
	case "ds_nop":
		return func(*wave, *Inst) error { return nil }
	case "ds_gws_init", "ds_gws_sema_v", "ds_gws_sema_br", "ds_gws_sema_p", "ds_gws_sema_release_all", "ds_gws_barrier":
		return gwsExec(name)
	case "ds_append", "ds_consume", "ds_read_addtid_b32", "ds_write_addtid_b32", "ds_condxchg32_rtn_b64", "ds_wrap_rtn_b32":
		return dsRare(name)
	case "ds_mskor_b32", "ds_mskor_rtn_b32", "ds_mskor_b64", "ds_mskor_rtn_b64":
		return dsMskor(strings.HasSuffix(name, "b64"), strings.Contains(name, "_rtn"))
	case "ds_wrxchg2_rtn_b32", "ds_wrxchg2_rtn_b64", "ds_wrxchg2st64_rtn_b32", "ds_wrxchg2st64_rtn_b64":
		return dsWrxchg2(strings.HasSuffix(name, "b64"), strings.Contains(name, "st64"))
	}
	n := strings.TrimPrefix(name, "ds_")
	n = strings.TrimSuffix(n, "_rtn")
	var m memOp
	var two, st64 bool
	switch {
	case strings.HasPrefix(n, "read2st64_"), strings.HasPrefix(n, "write2st64_"):
		two, st64 = true, true
	case strings.HasPrefix(n, "read2_"), strings.HasPrefix(n, "write2_"):
		two = true
	}
	switch {
	case strings.HasPrefix(n, "read"), strings.HasPrefix(n, "write"):
		m.store = strings.HasPrefix(n, "write")
		t := n[strings.IndexByte(n, '_')+1:]
		t, m.d16 = trimD16(t)
		switch t {
		case "b32":
			m.dwords = 1
		case "b64":
			m.dwords = 2
		case "b96":
			m.dwords = 3
		case "b128":
			m.dwords = 4
		case "u8", "b8":
			m.dwords, m.size = 1, 1
		case "i8":
			m.dwords, m.size, m.signed = 1, 1, true
		case "u16", "b16":
			m.dwords, m.size = 1, 2
		case "i16":
			m.dwords, m.size, m.signed = 1, 2, true
		default:
			return nil
		}
		if m.size == 0 {
			m.size = 4 * m.dwords
		}
	default:
		// atomics: ds_<op>_{u32,i32,b32,u64,i64,b64}[_rtn]; ds_<op>_rtn_<t>
		name2 := strings.Replace(strings.TrimPrefix(name, "ds_"), "_rtn", "", 1)
		i := strings.LastIndexByte(name2, '_')
		if i < 0 {
			return nil
		}
		op, t := name2[:i], name2[i+1:]
		m.wide = t[1] == '6'
		if t[0] == 'f' && (op == "add" || op == "min" || op == "max") {
			// ds_add_f32/_f64, ds_min/max_f32/_f64: floating-point (atomicOp's add_f32 ...), not
			// the integer forms (ds_add_f64 added the bit patterns as integers)
			op += "_" + t
		}
		switch op {
		case "add_f32", "add_f64", "min_f32", "max_f32", "min_f64", "max_f64":
		case "add", "sub", "rsub", "inc", "dec", "and", "or", "xor":
		case "min", "max":
			if t[0] == 'i' {
				op = "s" + op
			} else {
				op = "u" + op
			}
		case "wrxchg":
			op = "swap"
		case "cmpst":
			op = "cmpst"
		default:
			return nil
		}
		m.atomic = op
		m.dwords, m.size = 1, 4
		if m.wide {
			m.dwords, m.size = 2, 8
		}
	}
	rtn := strings.Contains(name, "_rtn")
	plain := m.atomic == "" && m.d16 == d16None && m.size == 4*m.dwords
	poll := !m.store && m.atomic == "" // a read: a polling wave reads one address again (poll.go)
	return func(w *wave, in *Inst) error {
		if in.Gds {
			return fmt.Errorf("%w: GDS", ErrUnimplemented)
		}
		if e := w.exec(); poll && e != 0 {
			w.pollNote(in, uint64(w.v[in.Opnd[fAddr]-opVGPR0][bits.TrailingZeros64(e)]))
		}
		if plain {
			w.dsDwords(in, m, two, st64)
			return nil
		}
		av := in.Opnd[fAddr] - opVGPR0
		var err error
		for mm := w.exec(); mm != 0 && err == nil; mm &= mm - 1 {
			l := bits.TrailingZeros64(mm)
			// The LDS address is ADDR + offset in 32 bits: LLVM (GFX7+) folds a constant into the
			// offset field even when ADDR is negative (reverse indexing: ADDR = -4*tid, offset 1020).
			vaddr := w.v[av][l]
			if m.atomic != "" {
				in2 := *in
				in2.Glc = rtn
				mm2 := m
				// cmpst: data0 is the compare value, data1 the new value (ISA: DS_CMPST_B32)
				if m.atomic == "cmpst" {
					d0, d1 := in.Opnd[fData0]-opVGPR0, in.Opnd[fData1]-opVGPR0
					c, v := uint64(w.v[d0][l]), uint64(w.v[d1][l])
					if m.wide {
						c |= uint64(w.v[d0+1][l]) << 32
						v |= uint64(w.v[d1+1][l]) << 32
					}
					a := uint64(vaddr + uint32(in.Imm))
					old, _ := w.atomicAt(spLDS, a, m.size, func(o uint64) uint64 {
						if o == c {
							return v
						}
						return o
					})
					if rtn {
						w.v[in.Opnd[fDst]-opVGPR0][l] = uint32(old)
						if m.wide {
							w.v[in.Opnd[fDst]-opVGPR0+1][l] = uint32(old >> 32)
						}
					}
					continue
				}
				a := uint64(vaddr + uint32(in.Imm))
				err = w.laneAccess(&in2, mm2, l, func(int) (int, uint64) { return spLDS, a })
				continue
			}
			if two {
				scale := uint64(4 * m.dwords)
				if st64 {
					scale *= 64
				}
				o0, o1 := uint64(in.Imm&0xff)*scale, uint64(in.Imm>>8&0xff)*scale
				for half, o := range []uint64{o0, o1} {
					in2 := *in
					if m.store {
						if half == 1 {
							in2.Opnd[fData0] = in.Opnd[fData1]
						}
					} else {
						in2.Opnd[fDst] = in.Opnd[fDst] + uint16(half*m.dwords)
					}
					a := uint64(vaddr + uint32(o))
					if err = w.laneAccess(&in2, m, l, func(k int) (int, uint64) { return spLDS, a + 4*uint64(k) }); err != nil {
						break
					}
				}
				continue
			}
			a := uint64(vaddr + uint32(in.Imm))
			err = w.laneAccess(in, m, l, func(k int) (int, uint64) { return spLDS, a + 4*uint64(k) })
		}
		return err
	}
}

// dsDwords is the LDS read/write(2)(st64) of whole dwords, lane by lane in the order of the general
// path (laneAccess): each dword out of range reads 0 and is not written. The address register is
// read once per lane, before the lane's results are written.
func (w *wave) dsDwords(in *Inst, m memOp, two, st64 bool) {
	lds := w.g.lds
	addr := &w.v[in.Opnd[fAddr]-opVGPR0]
	offs, halves := [2]uint32{uint32(in.Imm)}, 1
	if two {
		scale := uint32(4 * m.dwords)
		if st64 {
			scale *= 64
		}
		offs, halves = [2]uint32{uint32(in.Imm&0xff) * scale, uint32(in.Imm>>8&0xff) * scale}, 2
	}
	// The register rows of each (half, dword), resolved once: the data rows of a store, the
	// destination rows of a load (checkVRegs checked them all).
	nd := m.dwords
	var rows [8]*[lanes]uint32
	data := [2]uint16{in.Opnd[fData0] - opVGPR0, in.Opnd[fData1] - opVGPR0}
	dst := in.Opnd[fDst] - opVGPR0
	for h := 0; h < halves; h++ {
		for k := 0; k < nd; k++ {
			if m.store {
				rows[h*nd+k] = &w.v[data[h]+uint16(k)]
			} else {
				rows[h*nd+k] = &w.v[dst+uint16(h*nd+k)]
			}
		}
	}
	exec := w.exec()
	if exec == ^uint64(0) && nd <= 2 && (nd == 1 || !m.store) && dsWordsFull(lds, addr, &rows, offs, nd, m.store, two) {
		return
	}
	if nd == 1 { // b32, read2/write2(st64)_b32: one row per half
		r0, r1, o0, o1 := rows[0], rows[1], offs[0], offs[1]
		switch {
		case m.store && two:
			for mm := exec; mm != 0; mm &= mm - 1 {
				l := bits.TrailingZeros64(mm)
				ldsPut(lds, uint64(addr[l]+o0), r0[l])
				ldsPut(lds, uint64(addr[l]+o1), r1[l])
			}
		case m.store:
			for mm := exec; mm != 0; mm &= mm - 1 {
				l := bits.TrailingZeros64(mm)
				ldsPut(lds, uint64(addr[l]+o0), r0[l])
			}
		case two && exec == ^uint64(0): // every lane in order, without walking the mask
			for l := range addr {
				vaddr := addr[l]
				r0[l], r1[l] = ldsGet(lds, uint64(vaddr+o0)), ldsGet(lds, uint64(vaddr+o1))
			}
		case two:
			for mm := exec; mm != 0; mm &= mm - 1 {
				l := bits.TrailingZeros64(mm)
				vaddr := addr[l]
				r0[l], r1[l] = ldsGet(lds, uint64(vaddr+o0)), ldsGet(lds, uint64(vaddr+o1))
			}
		default:
			for mm := exec; mm != 0; mm &= mm - 1 {
				l := bits.TrailingZeros64(mm)
				r0[l] = ldsGet(lds, uint64(addr[l]+o0))
			}
		}
		return
	}
	if nd == 2 && !m.store { // read_b64, read2(st64)_b64: two rows per half
		if exec == ^uint64(0) && halves == 2 { // read2_b64 on every lane, in order
			r0, r1, r2, r3, o0, o1 := rows[0], rows[1], rows[2], rows[3], offs[0], offs[1]
			for l := range addr {
				a0, a1 := uint64(addr[l]+o0), uint64(addr[l]+o1)
				r0[l], r1[l] = ldsGet(lds, a0), ldsGet(lds, a0+4)
				r2[l], r3[l] = ldsGet(lds, a1), ldsGet(lds, a1+4)
			}
			return
		}
		for mm := exec; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros64(mm)
			vaddr := addr[l]
			for h := 0; h < halves; h++ {
				a := uint64(vaddr + offs[h])
				rows[2*h][l], rows[2*h+1][l] = ldsGet(lds, a), ldsGet(lds, a+4)
			}
		}
		return
	}
	for mm := exec; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros64(mm)
		vaddr := addr[l]
		for h := 0; h < halves; h++ {
			a := uint64(vaddr + offs[h])
			for k, r := range rows[h*nd : h*nd+nd] {
				if m.store {
					ldsPut(lds, a+4*uint64(k), r[l])
				} else {
					r[l] = ldsGet(lds, a+4*uint64(k))
				}
			}
		}
	}
}

// dsWordsFull is dsDwords' b32, read2/write2(st64)_b32, read_b64 and read2(st64)_b64 under a full
// EXEC when every address of the wave is a dword-aligned address inside LDS (one pass over the
// address row finds their OR, a second their maximum if the OR does not bound them): the LDS as
// dwords (ldsWords), indexed without a range test per dword, lanes in order, each lane's address
// read before its results are written (the general path's order). It returns false, having done
// nothing, when that does not hold.
func dsWordsFull(lds []byte, addr *[lanes]uint32, rows *[8]*[lanes]uint32, offs [2]uint32, nd int, store, two bool) bool {
	words := ldsWords(lds)
	if words == nil {
		return false
	}
	as := addr[:] // slices of the rows: one nil check each, not one per lane
	var or uint32
	for l := 0; l < lanes; l += 4 {
		or |= as[l] | as[l+1] | as[l+2] | as[l+3]
	}
	o0, o1 := offs[0], offs[1]
	if (or|o0|o1)&3 != 0 {
		return false
	}
	// The OR is at least the largest address (and often equals it: a base ORed with lane
	// multiples), so it bounds them all; only when that bound is too loose is the maximum found.
	end := uint64(max(o0, o1)) + 4*uint64(nd)
	if uint64(or)+end > 4*uint64(len(words)) {
		var mx uint32
		for l := 0; l < lanes; l += 4 {
			mx = max(mx, as[l], as[l+1], as[l+2], as[l+3])
		}
		if uint64(mx)+end > 4*uint64(len(words)) {
			return false
		}
	}
	// No address wraps in 32 bits (the sums stay below the LDS size), so (addr+o)/4 = addr/4 + o/4.
	q0, q1 := o0>>2, o1>>2
	// The hot forms (read2_b32, read2_b64, write_b32) address the LDS by byte offset from its
	// start (ldsAt) without a bounds check per dword: every address is at most the bound just
	// tested, so addr+offset+4*nd stays inside the LDS.
	wb, b0, b1 := unsafe.Pointer(unsafe.SliceData(words)), uintptr(o0), uintptr(o1)
	r0 := rows[0][:]
	switch {
	case nd == 2 && two: // read2_b64: rows 0,1 from the first address, 2,3 from the second
		r1, r2, r3 := rows[1][:], rows[2][:], rows[3][:]
		for l := 0; l < lanes; l++ {
			a := uintptr(as[l])
			r0[l], r1[l], r2[l], r3[l] = *ldsAt(wb, a+b0), *ldsAt(wb, a+b0+4), *ldsAt(wb, a+b1), *ldsAt(wb, a+b1+4)
		}
	case nd == 2: // read_b64
		r1 := rows[1][:]
		for l := 0; l < lanes; l++ {
			i := as[l]>>2 + q0
			r0[l], r1[l] = words[i], words[i+1]
		}
	case store && two:
		r1 := rows[1][:]
		for l := 0; l < lanes; l++ {
			words[as[l]>>2+q0] = r0[l]
			words[as[l]>>2+q1] = r1[l]
		}
	case store:
		for l := 0; l < lanes; l++ {
			*ldsAt(wb, uintptr(as[l])+b0) = r0[l]
		}
	case two:
		r1 := rows[1][:]
		for l := 0; l < lanes; l++ {
			a := uintptr(as[l])
			r0[l], r1[l] = *ldsAt(wb, a+b0), *ldsAt(wb, a+b1)
		}
	default:
		for l := 0; l < lanes; l++ {
			r0[l] = words[as[l]>>2+q0]
		}
	}
	return true
}

// ldsAt is the LDS dword at byte offset b (dword-aligned, inside the LDS: dsWordsFull's bound)
// from the LDS start p.
func ldsAt(p unsafe.Pointer, b uintptr) *uint32 { return (*uint32)(unsafe.Add(p, b)) }

// ldsWords is the LDS as dwords (LDS byte order is little-endian), or nil if the host's is not or
// the slice is not 4-byte aligned (a tiny allocation may not be).
func ldsWords(lds []byte) []uint32 {
	p := unsafe.SliceData(lds)
	if len(lds) < 4 || !hostLittleEndian || uintptr(unsafe.Pointer(p))&3 != 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(p)), len(lds)/4)
}

// ldsGet reads the LDS dword at a (0 out of range); ldsPut writes it (nothing out of range).
func ldsGet(lds []byte, a uint64) uint32 {
	if a+4 <= uint64(len(lds)) {
		return binary.LittleEndian.Uint32(lds[a : a+4])
	}
	return 0
}

func ldsPut(lds []byte, a uint64, v uint32) {
	if a+4 <= uint64(len(lds)) {
		binary.LittleEndian.PutUint32(lds[a:a+4], v)
	}
}

// dsCrossLane runs the LDS unit's lane permutes, which move data between the lanes of a wave without
// touching LDS (Vega ISA DS_SWIZZLE_B32, DS_PERMUTE_B32, DS_BPERMUTE_B32). A lane reading an inactive
// lane gets 0.
func dsCrossLane(name string) execFn {
	return func(w *wave, in *Inst) error {
		if in.Gds {
			return fmt.Errorf("%w: GDS", ErrUnimplemented)
		}
		dst, err := w.vdst(in.Opnd[fDst], 1)
		if err != nil {
			return err
		}
		src := in.Opnd[fData0]
		if name == "ds_swizzle_b32" {
			src = in.Opnd[fAddr] // swizzle's data is in the address field
		}
		data, err := w.vdst(src, 1)
		if err == nil {
			_, err = w.vdst(in.Opnd[fAddr], 1)
		}
		if err != nil {
			return err
		}
		exec := w.exec()
		var out [lanes]uint32
		switch name {
		case "ds_swizzle_b32":
			off := uint32(in.Imm) & 0xffff
			if off >= 0xe000 {
				return fmt.Errorf("%w: ds_swizzle FFT/rotate offset %#x", ErrUnimplemented, off)
			}
			for l := 0; l < lanes; l++ {
				var j int
				if off&0x8000 != 0 { // quad-permute mode: lane i of each quad takes lane offset[2i+1:2i]
					j = l&^3 | int(off>>(2*(l&3))&3)
				} else { // bit-mask mode within 32 lanes: ((i & and) | or) ^ xor
					and, or, xor := int(off&0x1f), int(off>>5&0x1f), int(off>>10&0x1f)
					j = l&0x20 | ((l&0x1f)&and | or) ^ xor
				}
				if exec>>j&1 != 0 {
					out[l] = data[j]
				}
			}
		case "ds_bpermute_b32": // backward: lane i reads lane addr[i]/4
			addr := &w.v[in.Opnd[fAddr]-opVGPR0]
			for l := 0; l < lanes; l++ {
				j := int((addr[l]+uint32(in.Imm))>>2) & 63
				if exec>>j&1 != 0 {
					out[l] = data[j]
				}
			}
		default: // ds_permute_b32, forward: lane i writes lane addr[i]/4 (the highest writer wins)
			addr := &w.v[in.Opnd[fAddr]-opVGPR0]
			for m := exec; m != 0; m &= m - 1 {
				l := bits.TrailingZeros64(m)
				out[int((addr[l]+uint32(in.Imm))>>2)&63] = data[l]
			}
		}
		for m := exec; m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			dst[l] = out[l]
		}
		return nil
	}
}

// dsLaneData reads data operand f of lane l (one dword, or a pair when wide).
func dsLaneData(w *wave, in *Inst, f opField, l int, wide bool) uint64 {
	r := in.Opnd[f] - opVGPR0
	v := uint64(w.v[r][l])
	if wide {
		v |= uint64(w.v[r+1][l]) << 32
	}
	return v
}

func dsSetDst(w *wave, in *Inst, reg uint16, l int, v uint64, wide bool) {
	w.v[reg][l] = uint32(v)
	if wide {
		w.v[reg+1][l] = uint32(v >> 32)
	}
}

// dsMskor is DS_MSKOR_B32/B64: MEM = (MEM & ~DATA) | DATA2, the old value returned with _rtn.
func dsMskor(wide, rtn bool) execFn {
	sz := 4
	if wide {
		sz = 8
	}
	return func(w *wave, in *Inst) error {
		if in.Gds {
			return fmt.Errorf("%w: GDS", ErrUnimplemented)
		}
		for m := w.exec(); m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			mask, or := dsLaneData(w, in, fData0, l, wide), dsLaneData(w, in, fData1, l, wide)
			a := uint64(w.v[in.Opnd[fAddr]-opVGPR0][l]) + uint64(in.Imm)
			old, _ := w.atomicAt(spLDS, a, sz, func(o uint64) uint64 { return o&^mask | or })
			if rtn {
				dsSetDst(w, in, in.Opnd[fDst]-opVGPR0, l, old, wide)
			}
		}
		return nil
	}
}

// dsWrxchg2 is DS_WRXCHG2(ST64)_RTN_B32/B64: two exchanges at ADDR + offset0·size and ADDR +
// offset1·size (size ·64 for st64) with DATA0 and DATA1, the two old values returned in order.
func dsWrxchg2(wide, st64 bool) execFn {
	sz := uint64(4)
	if wide {
		sz = 8
	}
	scale := sz
	if st64 {
		scale *= 64
	}
	return func(w *wave, in *Inst) error {
		if in.Gds {
			return fmt.Errorf("%w: GDS", ErrUnimplemented)
		}
		n := uint16(1)
		if wide {
			n = 2
		}
		for m := w.exec(); m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			base := uint64(w.v[in.Opnd[fAddr]-opVGPR0][l])
			for half, f := range []opField{fData0, fData1} {
				v := dsLaneData(w, in, f, l, wide)
				a := base + uint64(in.Imm>>(8*half)&0xff)*scale
				old, _ := w.atomicAt(spLDS, a, int(sz), func(uint64) uint64 { return v })
				dsSetDst(w, in, in.Opnd[fDst]-opVGPR0+uint16(half)*n, l, old, wide)
			}
		}
		return nil
	}
}

// gwsExec runs the global wave sync operations (CDNA2 ISA DS_GWS_*, GDS only): the resource is
// M0[21:16] + offset0[5:0] of the queue's GWS; the value of init, sema_br and barrier is the data
// VGPR (in the ADDR field) of the first active lane. A wave that must wait stalls after the instruction (workgroup.go).
func gwsExec(name string) execFn {
	kind := map[string]int{"ds_gws_init": gwsInit, "ds_gws_sema_v": gwsSemaV, "ds_gws_sema_br": gwsSemaBR,
		"ds_gws_sema_p": gwsSemaP, "ds_gws_sema_release_all": gwsReleaseAll, "ds_gws_barrier": gwsBarrier}[name]
	return func(w *wave, in *Inst) error {
		g := w.d.gws
		if g == nil || !in.Gds {
			return fmt.Errorf("%w: %s without GWS allocated to the queue", ErrIllegal, name)
		}
		exec := w.exec()
		if exec == 0 {
			return nil
		}
		var val uint32
		if kind == gwsInit || kind == gwsSemaBR || kind == gwsBarrier {
			d, err := w.vdst(in.Opnd[fAddr], 1) // LLVM's data0, encoded in the ADDR field
			if err != nil {
				return err
			}
			val = d[bits.TrailingZeros64(exec)]
		}
		id := int(w.s[opM0]>>16&0x3f) + int(in.Imm&0x3f)
		wt, err := g.op(kind, id, val)
		if err != nil {
			return err
		}
		if wt != nil {
			w.block, w.gw = wt.ch, wt
		}
		return nil
	}
}

// dsRare implements DS_APPEND, DS_CONSUME, DS_READ_ADDTID_B32, DS_WRITE_ADDTID_B32, DS_CONDXCHG32_RTN_B64
// and DS_WRAP_RTN_B32 on LDS (GDS is not modelled).
func dsRare(name string) execFn {
	return func(w *wave, in *Inst) error {
		if in.Gds {
			return fmt.Errorf("%w: GDS", ErrUnimplemented)
		}
		off := uint64(uint16(in.Imm)) // {offset1, offset0}
		exec := w.exec()
		m0base := uint64(w.s[opM0] & 0xffff)
		switch name {
		case "ds_append", "ds_consume":
			// MI200/MI300 ISA: add (append) or subtract (consume) the number of active lanes to/from the
			// dword at the DS address, returning the value before the operation to every active lane. The
			// address is M0.base + offset as for GDS: LLVM (AMDGPUDAGToDAGISel::SelectDSAppendConsume)
			// places the LDS pointer in M0 for both; the CDNA3 ISA text says "instr_offset if LDS". With
			// M0 = 0 both agree.
			d, err := w.vdst(in.Opnd[fDst], 1)
			if err != nil {
				return err
			}
			n := uint64(bits.OnesCount64(exec))
			old, _ := w.atomicAt(spLDS, m0base+off, 4, func(o uint64) uint64 {
				if name == "ds_consume" {
					return (o - n) & math.MaxUint32
				}
				return (o + n) & math.MaxUint32
			})
			forLanes(exec, func(l int) { d[l] = uint32(old) })
		case "ds_read_addtid_b32", "ds_write_addtid_b32":
			// RETURN_DATA = MEM[{offset1, offset0} + M0[15:0] + laneID*4] (and the store, DATA0 per lane).
			var buf [4]byte
			store := name == "ds_write_addtid_b32"
			reg := in.Opnd[fDst]
			if store {
				reg = in.Opnd[fData0]
			}
			v, err := w.vdst(reg, 1)
			if err != nil {
				return err
			}
			forLanes(exec, func(l int) {
				a := off + m0base + 4*uint64(l)
				if store {
					binary.LittleEndian.PutUint32(buf[:], v[l])
					w.access(spLDS, a, buf[:], true)
					return
				}
				w.access(spLDS, a, buf[:], false)
				v[l] = binary.LittleEndian.Uint32(buf[:])
			})
		case "ds_condxchg32_rtn_b64":
			// ADDR0 = (ADDR + offset) & 0xfff8, ADDR1 = ADDR0 + 4; each returns the old dword, and is
			// replaced by DATA[30:0] (bit 31 cleared) when the dword's bit 31 (DATA[31], DATA[63]) is set.
			if _, err := w.vdst(in.Opnd[fDst], 2); err != nil {
				return err
			}
			if _, err := w.vdst(in.Opnd[fData0], 2); err != nil {
				return err
			}
			a, d0, d := in.Opnd[fAddr]-opVGPR0, in.Opnd[fData0]-opVGPR0, in.Opnd[fDst]-opVGPR0
			forLanes(exec, func(l int) {
				a0 := (uint64(w.v[a][l]) + off) & 0xfff8
				var ret [2]uint32
				for k := 0; k < 2; k++ {
					data := w.v[d0+uint16(k)][l]
					o, _ := w.atomicAt(spLDS, a0+4*uint64(k), 4, func(o uint64) uint64 {
						if data>>31 != 0 {
							return uint64(data &^ (1 << 31))
						}
						return o
					})
					ret[k] = uint32(o)
				}
				w.v[d][l], w.v[d+1][l] = ret[0], ret[1]
			})
		case "ds_wrap_rtn_b32":
			// tmp = MEM[ADDR]; MEM[ADDR] = (tmp >= DATA) ? tmp - DATA : tmp + DATA2; RETURN_DATA = tmp.
			dst, err := w.vdst(in.Opnd[fDst], 1)
			if err != nil {
				return err
			}
			a, d0, d1 := in.Opnd[fAddr]-opVGPR0, in.Opnd[fData0]-opVGPR0, in.Opnd[fData1]-opVGPR0
			forLanes(exec, func(l int) {
				data, data2 := uint64(w.v[d0][l]), uint64(w.v[d1][l])
				o, _ := w.atomicAt(spLDS, uint64(w.v[a][l])+off, 4, func(o uint64) uint64 {
					if o >= data {
						return o - data
					}
					return (o + data2) & math.MaxUint32
				})
				dst[l] = uint32(o)
			})
		}
		return nil
	}
}

// dsOps binds the DS operations (dsExec), their VGPR operands checked.
func dsOps() {
	for op := Op(1); op < NumOps; op++ {
		if n := opNames[op]; strings.HasPrefix(n, "ds_") {
			if f := dsExec(n); f != nil {
				def(op, vregChecked(n, f))
			}
		}
	}
}
