package shader

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync/atomic"
	"unsafe"
)

// memOp describes a vector memory instruction: data dwords, sub-dword size/sign, store, atomic.
type memOp struct {
	dwords int
	size   int // 1, 2 for byte/short accesses, else 4*dwords
	signed bool
	store  bool
	atomic string // atomic operation name ("add", "cmpswap", ...) or ""
	wide   bool   // 64-bit atomic
	d16    int    // d16Lo/d16Hi: a 16-bit half of the register, the other half kept
}

// D16 forms (GFX9 *_d16 and *_d16_hi): loads write one 16-bit half of the VGPR and keep the other,
// stores take the named half.
const (
	d16None = iota
	d16Lo
	d16Hi
)

// trimD16 strips a _d16/_d16_hi suffix from a memory mnemonic's type.
func trimD16(t string) (string, int) {
	switch {
	case strings.HasSuffix(t, "_d16_hi"):
		return strings.TrimSuffix(t, "_d16_hi"), d16Hi
	case strings.HasSuffix(t, "_d16"):
		return strings.TrimSuffix(t, "_d16"), d16Lo
	}
	return t, d16None
}

func parseMemOp(name string) (memOp, bool) {
	var m memOp
	i := strings.IndexByte(name, '_')
	if i < 0 {
		return m, false
	}
	n := name[i+1:]
	switch {
	case strings.HasPrefix(n, "atomic_"):
		a := strings.TrimPrefix(n, "atomic_")
		m.wide = strings.HasSuffix(a, "_x2")
		a = strings.TrimSuffix(a, "_x2")
		m.atomic = a
		m.dwords, m.size = 1, 4
		if m.wide {
			m.dwords, m.size = 2, 8
		}
		switch a {
		case "add_f64", "min_f64", "max_f64":
			m.wide, m.dwords, m.size = true, 2, 8
		}
		return m, true
	case strings.HasPrefix(n, "load_"), strings.HasPrefix(n, "store_"):
		m.store = strings.HasPrefix(n, "store_")
		t := n[strings.IndexByte(n, '_')+1:]
		t, m.d16 = trimD16(t)
		switch t {
		case "ubyte", "byte":
			m.dwords, m.size = 1, 1
		case "sbyte":
			m.dwords, m.size, m.signed = 1, 1, true
		case "ushort", "short":
			m.dwords, m.size = 1, 2
		case "sshort":
			m.dwords, m.size, m.signed = 1, 2, true
		case "dword":
			m.dwords = 1
		case "dwordx2":
			m.dwords = 2
		case "dwordx3":
			m.dwords = 3
		case "dwordx4":
			m.dwords = 4
		default:
			return m, false
		}
		if m.size == 0 {
			m.size = 4 * m.dwords
		}
		return m, true
	}
	return m, false
}

// atomicOp returns the read-modify-write function of an atomic; c is the compare value for cmpswap.
func atomicOp(a string, wide bool) func(old, v, c uint64) uint64 {
	sx := func(x uint64) int64 {
		if wide {
			return int64(x)
		}
		return int64(int32(x))
	}
	mask := uint64(math.MaxUint32)
	if wide {
		mask = math.MaxUint64
	}
	switch a {
	case "swap":
		return func(_, v, _ uint64) uint64 { return v }
	case "cmpswap":
		return func(o, v, c uint64) uint64 {
			if o == c {
				return v
			}
			return o
		}
	case "add":
		return func(o, v, _ uint64) uint64 { return (o + v) & mask }
	case "sub":
		return func(o, v, _ uint64) uint64 { return (o - v) & mask }
	case "rsub":
		return func(o, v, _ uint64) uint64 { return (v - o) & mask }
	case "smin":
		return func(o, v, _ uint64) uint64 { return map[bool]uint64{true: o, false: v}[sx(o) < sx(v)] }
	case "smax":
		return func(o, v, _ uint64) uint64 { return map[bool]uint64{true: o, false: v}[sx(o) > sx(v)] }
	case "umin":
		return func(o, v, _ uint64) uint64 { return min(o, v) }
	case "umax":
		return func(o, v, _ uint64) uint64 { return max(o, v) }
	case "and":
		return func(o, v, _ uint64) uint64 { return o & v }
	case "or":
		return func(o, v, _ uint64) uint64 { return o | v }
	case "xor":
		return func(o, v, _ uint64) uint64 { return o ^ v }
	case "inc":
		return func(o, v, _ uint64) uint64 {
			if o >= v {
				return 0
			}
			return o + 1
		}
	case "dec":
		return func(o, v, _ uint64) uint64 {
			if o == 0 || o > v {
				return v
			}
			return o - 1
		}
	case "add_f32":
		return func(o, v, _ uint64) uint64 { return uint64(u32(f32(uint32(o)) + f32(uint32(v)))) }
	case "add_f64":
		return func(o, v, _ uint64) uint64 { return u64(f64(o) + f64(v)) }
	case "min_f32":
		return func(o, v, _ uint64) uint64 {
			return uint64(u32(float32(math.Min(float64(f32(uint32(o))), float64(f32(uint32(v)))))))
		}
	case "max_f32":
		return func(o, v, _ uint64) uint64 {
			return uint64(u32(float32(math.Max(float64(f32(uint32(o))), float64(f32(uint32(v)))))))
		}
	case "pk_add_f16":
		// Two binary16 sums, each rounded once to nearest even (the float64 sum of two halves is
		// exact): HIP's __half2 atomicAdd with -munsafe-fp-atomics.
		return func(o, v, _ uint64) uint64 {
			lo := h16r(h16f(uint32(o&0xffff)) + h16f(uint32(v&0xffff)))
			hi := h16r(h16f(uint32(o>>16&0xffff)) + h16f(uint32(v>>16&0xffff)))
			return uint64(hi<<16 | lo)
		}
	case "min_f64":
		return func(o, v, _ uint64) uint64 { return u64(math.Min(f64(o), f64(v))) }
	case "max_f64":
		return func(o, v, _ uint64) uint64 { return u64(math.Max(f64(o), f64(v))) }
	}
	return nil
}

// swizzle maps a private-segment byte offset of a lane to its byte offset from the wave's scratch base:
// dword interleave across the 64 lanes (AMDGPUUsage "Address Spaces", private mapping).
func swizzle(priv uint32, lane int) uint64 {
	return uint64(priv/4)*lanes*4 + uint64(lane)*4 + uint64(priv%4)
}

// laneAccess performs one lane's load/store/atomic of a vector memory instruction. addr(k) gives the
// address of dword k (so scratch swizzling can split multi-dword accesses).
func (w *wave) laneAccess(in *Inst, m memOp, l int, addr func(k int) (space int, a uint64)) error {
	buf := w.mbuf[:16]
	for k := 0; k < m.dwords; k++ {
		if m.atomic != "" && k > 0 {
			break
		}
		sz := 4
		if m.size < 4 {
			sz = m.size
		}
		if m.atomic != "" {
			sz = m.size
		}
		sp, a := addr(k)
		p := buf[:sz]
		switch {
		case m.atomic != "":
			f := atomicOp(m.atomic, m.wide)
			if f == nil {
				return fmt.Errorf("%w: atomic %s", ErrUnimplemented, m.atomic)
			}
			nd := uint16(m.dwords) // data registers: the value, and for cmpswap the compare value too
			if m.atomic == "cmpswap" {
				nd *= 2
			}
			dv := w.v[in.Opnd[fData0]-opVGPR0 : in.Opnd[fData0]-opVGPR0+nd]
			var v, c uint64
			if m.atomic == "cmpswap" {
				if m.wide {
					v, c = uint64(dv[0][l])|uint64(dv[1][l])<<32, uint64(dv[2][l])|uint64(dv[3][l])<<32
				} else {
					v, c = uint64(dv[0][l]), uint64(dv[1][l])
				}
			} else {
				v = uint64(dv[0][l])
				if m.wide {
					v |= uint64(dv[1][l]) << 32
				}
			}
			var old uint64
			var err error
			if ad, ok := w.g.mem.(AtomicAdder); ok && sp == spGlobal && (m.atomic == "add" || m.atomic == "sub") {
				d := v
				if m.atomic == "sub" {
					d = -v
				}
				old, err = ad.AtomicAdd(a, sz, d)
			} else {
				old, err = w.atomicAt(sp, a, sz, func(o uint64) uint64 { return f(o, v, c) })
			}
			if err != nil {
				return w.fault(in, a, true, err)
			}
			if in.Glc {
				d := in.Opnd[fDst] - opVGPR0
				w.v[d][l] = uint32(old)
				if m.wide {
					w.v[d+1][l] = uint32(old >> 32)
				}
			}
		case m.store:
			v := w.v[in.Opnd[fData0]-opVGPR0+uint16(k)][l]
			if m.d16 == d16Hi {
				v >>= 16
			}
			binary.LittleEndian.PutUint32(buf[:4], v)
			if err := w.access(sp, a, p, true); err != nil {
				return w.fault(in, a, true, err)
			}
		default:
			if err := w.access(sp, a, p, false); err != nil {
				return w.fault(in, a, false, err)
			}
			var v uint32
			switch sz {
			case 1:
				v = uint32(p[0])
				if m.signed {
					v = uint32(int32(int8(p[0])))
				}
			case 2:
				v = uint32(binary.LittleEndian.Uint16(p))
				if m.signed {
					v = uint32(int32(int16(v)))
				}
			default:
				v = binary.LittleEndian.Uint32(p)
			}
			d := &w.v[in.Opnd[fDst]-opVGPR0+uint16(k)][l]
			switch m.d16 {
			case d16Lo:
				v = *d&0xffff0000 | v&0xffff
			case d16Hi:
				v = *d&0xffff | v<<16
			}
			*d = v
		}
	}
	return nil
}

const (
	spGlobal = iota
	spLDS
)

func (w *wave) access(sp int, a uint64, p []byte, write bool) error {
	if sp == spLDS {
		lds := w.g.lds
		if a+uint64(len(p)) > uint64(len(lds)) { // out-of-range LDS: reads return 0, writes dropped
			if !write {
				clear(p)
			}
			return nil
		}
		if write {
			copy(lds[a:], p)
		} else {
			copy(p, lds[a:])
		}
		return nil
	}
	if write {
		return w.g.mem.Write(a, p)
	}
	return w.g.mem.Read(a, p)
}

// AtomicAdder is implemented by a Memory that adds with one instruction (the mmu Port: LOCK XADD on
// the backing word, never retried however contended). Vector atomic add and sub on global memory use
// it when the Memory has it; every other atomic goes through Memory.Atomic (a compare-and-swap loop
// there). AtomicAdd wraps (a 4-byte add uses the low 32 bits of delta) and returns the old value.
type AtomicAdder interface {
	AtomicAdd(va uint64, size int, delta uint64) (old uint64, err error)
}

func (w *wave) atomicAt(sp int, a uint64, sz int, f func(uint64) uint64) (uint64, error) {
	if sp == spLDS {
		lds := w.g.lds
		if a+uint64(sz) > uint64(len(lds)) {
			return 0, nil
		}
		var o uint64
		if sz == 8 {
			o = binary.LittleEndian.Uint64(lds[a:])
			binary.LittleEndian.PutUint64(lds[a:], f(o))
		} else {
			o = uint64(binary.LittleEndian.Uint32(lds[a:]))
			binary.LittleEndian.PutUint32(lds[a:], uint32(f(o)))
		}
		return o, nil
	}
	return w.g.mem.Atomic(a, sz, f)
}

// flatAddr resolves a 64-bit flat address of lane l (dword k) through the apertures.
func (w *wave) flatAddr(a uint64, l, k int) (int, uint64) {
	ap := w.d.l.ap
	switch a >> 32 {
	case ap.SharedBase >> 32:
		return spLDS, uint64(uint32(a)) + 4*uint64(k)
	case ap.PrivateBase >> 32:
		return spGlobal, w.sget64(opFlatScrLo) + swizzle(uint32(a)+4*uint32(k), l)
	}
	return spGlobal, a + 4*uint64(k)
}

// Cache controls of gfx90a (AMDGPUUsage, "Memory Model GFX90A"): buffer_wbl2 writes the L2 back
// before a system-scope release, buffer_invl2 invalidates it after a system-scope acquire, and
// buffer_wbinvl1(_vol) invalidates the L1 after an agent- or system-scope acquire. This model has no
// caches: every access of a wave reaches the backing memory (the memory the CPU and the other engines
// use) before the wave's next instruction, so there is nothing to write back or invalidate and
// s_waitcnt has nothing to wait for. What remains of these instructions is their ordering role in
// the release, acquire and seq_cst sequences: each is a full host memory barrier, so that the
// wave's earlier stores are visible to every host thread (other waves, the client's CPU) before
// its later loads, which x86's store buffer would otherwise let pass them (store->load order, the
// one a seq_cst fence needs; program order is otherwise kept by the host: loads and stores are
// each ordered on x86, and Go's sync/atomic, which the atomics use, is sequentially consistent).
var cacheControls = map[string]bool{"buffer_wbl2": true, "buffer_invl2": true, "buffer_wbinvl1": true, "buffer_wbinvl1_vol": true}

func hostFence(*wave, *Inst) error {
	var x atomic.Uint32
	x.Add(1) // a locked read-modify-write: a full barrier
	return nil
}

func vmemExec(name string) execFn {
	if cacheControls[name] {
		return hostFence
	}
	if strings.HasPrefix(name, "buffer_") && strings.Contains(name, "_format_") {
		return bufFormatExec(name) // typed MUBUF loads and stores, rare_mem.go
	}
	m, ok := parseMemOp(name)
	if !ok {
		return nil
	}
	inner := vmemAccess(m)
	// Address watch (trap.go): with watch points set for a debugged process, the lanes' addresses
	// are compared before the access, and a hit traps once it has completed.
	return func(w *wave, in *Inst) error {
		t := w.d.l.trap
		if t == nil || len(t.Watch) == 0 {
			return inner(w, in)
		}
		hit := w.watchHits(in, m)
		err := inner(w, in)
		if err == nil && hit != 0 {
			w.watchTrap(in, hit)
		}
		return err
	}
}

// vmemAccess is the routine of one FLAT, GLOBAL, SCRATCH or MUBUF memory operation.
func vmemAccess(m memOp) execFn {
	return func(w *wave, in *Inst) error {
		if in.Lds {
			return fmt.Errorf("%w: lds modifier", ErrUnimplemented)
		}
		exec := w.exec()
		if in.Glc && !m.store && m.atomic == "" && exec != 0 && in.Fmt != FmtSCRATCH { // a coherent load
			w.pollNote(in, w.pollOperands(in, exec))
		}
		var err error
		switch in.Fmt {
		case FmtGLOBAL, FmtFLAT:
			off := uint64(int64(in.Imm))
			var sbase uint64
			if in.Opnd[fSAddr] != opOff {
				sbase = w.sget64(in.Opnd[fSAddr])
			}
			av := in.Opnd[fAddr] - opVGPR0
			if done, err := w.globalBatch(in, m, exec, sbase, off, av, in.Fmt == FmtFLAT, in.Opnd[fSAddr] != opOff); done {
				return err
			}
			if f := bits.TrailingZeros64(exec); in.Fmt == FmtFLAT && in.Opnd[fSAddr] == opOff && exec != 0 {
				// The private aperture at one address in every lane (-O0 code's locals through
				// generic pointers): the swizzled scratch access of that offset. The first active
				// lane's address decides before the lanes are compared.
				a := (uint64(w.v[av][f]) | uint64(w.v[av+1][f])<<32) + off
				if a>>32 == w.d.l.ap.PrivateBase>>32 {
					_, ok1 := w.uniformLanes(exec, av)
					_, ok2 := w.uniformLanes(exec, av+1)
					if ok1 && ok2 {
						if done, err := w.swizzleBatch(in, m, exec, w.sget64(opFlatScrLo), uint32(a)); done {
							return err
						}
					}
				}
			}
			for mm := exec; mm != 0 && err == nil; mm &= mm - 1 {
				l := bits.TrailingZeros64(mm)
				var a uint64
				if in.Opnd[fSAddr] != opOff {
					a = sbase + uint64(w.v[av][l]) + off
				} else {
					a = uint64(w.v[av][l]) | uint64(w.v[av+1][l])<<32
					a += off
				}
				if in.Fmt == FmtFLAT {
					err = w.laneAccess(in, m, l, func(k int) (int, uint64) { return w.flatAddr(a, l, k) })
				} else {
					err = w.laneAccess(in, m, l, func(k int) (int, uint64) { return spGlobal, a + 4*uint64(k) })
				}
			}
		case FmtSCRATCH:
			base := w.sget64(opFlatScrLo)
			if in.Opnd[fSAddr] != opOff {
				if done, err := w.swizzleBatch(in, m, exec, base, w.s[in.Opnd[fSAddr]]+uint32(in.Imm)); done {
					return err
				}
			} else if p, ok := w.uniformLanes(exec, in.Opnd[fAddr]-opVGPR0); ok {
				if done, err := w.swizzleBatch(in, m, exec, base, p+uint32(in.Imm)); done {
					return err
				}
			}
			for mm := exec; mm != 0 && err == nil; mm &= mm - 1 {
				l := bits.TrailingZeros64(mm)
				var p uint32
				if in.Opnd[fSAddr] != opOff {
					p = w.s[in.Opnd[fSAddr]]
				} else {
					p = w.v[in.Opnd[fAddr]-opVGPR0][l]
				}
				p += uint32(in.Imm)
				err = w.laneAccess(in, m, l, func(k int) (int, uint64) { return spGlobal, base + swizzle(p+4*uint32(k), l) })
			}
		case FmtMUBUF:
			r := in.Opnd[fSAddr]
			if r > 96 {
				return fmt.Errorf("%w: buffer resource %s", ErrIllegal, regName(r, 4))
			}
			d0, d1, d2, d3 := w.s[r], w.s[r+1], w.s[r+2], w.s[r+3]
			base := uint64(d0) | uint64(d1&0xffff)<<32
			stride := uint64(d1 >> 16 & 0x3fff)
			swz := d3>>23&1 != 0 // ADD_TID_ENABLE: per-lane dword interleave (scratch V#)
			soff, e := w.scalar(in, in.Opnd[fSrc0], k32)
			if e != nil {
				return e
			}
			av := in.Opnd[fAddr] - opVGPR0 // (loads and returning atomics write VDATA: Decode set fDst)
			// The private segment (compilers' spills and stack): lanes at one offset batch.
			if swz {
				off, ok := uint32(in.Imm), true
				if in.Offen {
					vi := av
					if in.Idxen {
						vi++
					}
					var p uint32
					if p, ok = w.uniformLanes(exec, vi); ok {
						off += p
					}
				}
				if ok {
					if done, err := w.swizzleBatch(in, m, exec, base+uint64(uint32(soff)), off); done {
						return err
					}
				}
			}
			if !swz && in.Offen && !in.Idxen && stride == 0 && w.bufferInRange(exec, av, uint32(in.Imm), m.size, d2) {
				// A raw buffer's lanes at their own offsets, every one in range: the address is
				// base + soffset + offset + VGPR, GLOBAL's saddr form (a bounds-checked array,
				// Tensile's and rocPRIM's buffer loads).
				if done, err := w.globalBatch(in, m, exec, base+uint64(uint32(soff)), uint64(uint32(in.Imm)), av, false, true); done {
					return err
				}
			}
			for mm := exec; mm != 0 && err == nil; mm &= mm - 1 {
				l := bits.TrailingZeros64(mm)
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
				if swz {
					err = w.laneAccess(in, m, l, func(k int) (int, uint64) {
						return spGlobal, base + uint64(uint32(soff)) + swizzle(off+4*uint32(k), l)
					})
					continue
				}
				if !in.Idxen && uint64(off)+uint64(m.size) > uint64(d2) && stride == 0 { // out of range
					if !m.store && m.atomic == "" {
						for k := 0; k < m.dwords; k++ {
							w.v[in.Opnd[fDst]-opVGPR0+uint16(k)][l] = 0
						}
					}
					continue
				}
				a := base + uint64(uint32(soff)) + uint64(off) + idx*stride
				err = w.laneAccess(in, m, l, func(k int) (int, uint64) { return spGlobal, a + 4*uint64(k) })
			}
		}
		return err
	}
}

// vregChecked runs checkVRegs before the routine of memory operation name (optab.go wraps every DS
// and vector-memory routine with it).
func vregChecked(name string, fn execFn) execFn {
	if fn == nil {
		return nil
	}
	atomic, cmpswap := strings.Contains(name, "atomic"), strings.Contains(name, "cmpswap")
	return func(w *wave, in *Inst) error {
		if err := w.checkVRegs(in, atomic, cmpswap); err != nil {
			return err
		}
		return fn(w, in)
	}
}

// vregNeed is Inst.vneed: 1 + the largest register count checkVRegs' loop over the template's
// operands asks fit for (so a file of vneed-1 rows or more passes it), or 0 if the loop finds an
// operand below the VGPRs (an error) or asks for nothing.
func vregNeed(in *Inst) uint16 {
	if in.Info == nil {
		return 0
	}
	need := 0
	for _, t := range in.Info.Ops {
		if t.Lit != "" || t.C == 's' {
			continue
		}
		switch t.F {
		case fAddr, fData0, fData1, fDst:
			c := in.Opnd[t.F]
			if c == opOff {
				continue
			}
			if c < opVGPR0 {
				return 0
			}
			need = max(need, int(c-opVGPR0)+int(t.W))
		}
	}
	if need == 0 || need >= 1<<16-1 {
		return 0
	}
	return uint16(need + 1)
}

// checkVRegs checks, once per instruction, that every vector-register operand of a memory
// instruction lies inside the register file for the width LLVM's template gives it (a client's
// code can name a[255] as the first of four data registers).
func (w *wave) checkVRegs(in *Inst, atomic, cmpswap bool) error {
	if int(in.vneed)-1 <= len(w.v) && in.vneed != 0 && !(in.Glc && in.Fmt != FmtDS && atomic) {
		return nil // every operand the loop below looks at fits (vregNeed), and no returned value
	}
	for _, t := range in.Info.Ops {
		if t.Lit != "" || t.C == 's' {
			continue
		}
		switch t.F {
		case fAddr, fData0, fData1, fDst:
			c := in.Opnd[t.F]
			if c == opOff {
				continue
			}
			if c < opVGPR0 || !w.fit(int(c-opVGPR0)+int(t.W)) {
				return fmt.Errorf("%w: register %s beyond the register file", ErrIllegal, regName(c, int(t.W)))
			}
		}
	}
	if in.Glc && in.Fmt != FmtDS && atomic { // the returned value (not in the template)
		n := in.dataWidth()
		if cmpswap {
			n /= 2
		}
		if c := in.Opnd[fDst]; c < opVGPR0 || !w.fit(int(c-opVGPR0)+n) {
			return fmt.Errorf("%w: register %s beyond the register file", ErrIllegal, regName(c, n))
		}
	}
	return nil
}

// globalBatch performs a GLOBAL load or store of whole dwords, or a FLAT one in global memory
// (outside the LDS and private apertures), as one Memory access per run of
// consecutive active lanes whose elements are contiguous in memory within one page (a[i] is one run;
// a 16x16 tile's rows are four): the same bytes move as with one access per lane and dword, in lane
// order, and a fault is the same fault (a page faults as a whole, so the first faulting access is a
// run's first dword; the runs before it are done, nothing of it or after it). If a lane's element
// crosses a page it returns done = false before accessing anything, and the per-lane path runs.
func (w *wave) globalBatch(in *Inst, m memOp, exec, sbase, off uint64, av uint16, flat, saddr bool) (done bool, err error) {
	if m.atomic != "" || m.d16 != d16None || m.size != 4*m.dwords || exec == 0 {
		return false, nil
	}
	// A FLAT access is batched where each run's address is global memory (flatAddr): outside the
	// LDS and private apertures, whose 4 GiB windows a run within one page never straddles.
	ap := &w.d.l.ap
	aperture := func(a uint64) bool {
		return flat && (a>>32 == ap.SharedBase>>32 || a>>32 == ap.PrivateBase>>32)
	}
	addr := func(l int) uint64 {
		if saddr {
			return sbase + uint64(w.v[av][l]) + off
		}
		return (uint64(w.v[av][l]) | uint64(w.v[av+1][l])<<32) + off
	}
	sz := uint64(m.size)
	if exec == ^uint64(0) {
		// Full EXEC: one pass checks whether all 64 elements are contiguous within one page
		// (a[i] over a whole wave), in which case that is the only run.
		a0 := addr(0)
		if a0&pageMask4K+lanes*sz <= 4096 {
			// Lane l's (low) address dword must be x0 + l*sz without a carry out of 32 bits, and
			// the high dword (no saddr) that of lane 0.
			// Read as 64-bit words (u64Row: lanes 2i and 2i+1 in word i on a little-endian
			// host), lane pair i's expected word is x0+2i*sz | (x0+(2i+1)*sz)<<32: the pair at
			// i+1 is the one at i plus 2*sz in both halves (no carry between them when the low
			// dwords do not wrap, which the first test rules out; if they do, diff is already
			// set). Eight lanes per round.
			x0 := w.v[av][0]
			diff := uint64(0)
			if uint64(x0)+(lanes-1)*sz >= 1<<32 || !hostLittleEndian {
				diff = 1 // the low dwords would wrap (or no 64-bit view): the planner decides
			}
			if simd && diff == 0 { // simd_amd64.s: the same test, eight lanes per instruction
				var seq bool
				if saddr {
					seq = seqLoAVX2(&w.v[av], x0, uint32(sz))
				} else {
					seq = seqLoHiAVX2(&w.v[av], &w.v[av+1], x0, uint32(sz), w.v[av+1][0])
				}
				if !seq {
					diff = 1
				}
			}
			if diff == 0 && !simd {
				lo := u64Row(&w.v[av])[:]
				e := uint64(x0) | uint64(x0+uint32(sz))<<32
				st := 2 * sz * (1 | 1<<32) // 2*sz in each half
				if saddr {
					for l := 0; l < lanes/2; l, e = l+4, e+4*st {
						diff |= (lo[l] ^ e) | (lo[l+1] ^ (e + st)) | (lo[l+2] ^ (e + 2*st)) | (lo[l+3] ^ (e + 3*st))
					}
				} else {
					hi := u64Row(&w.v[av+1])[:]
					h0 := uint64(w.v[av+1][0]) * (1 | 1<<32) // the high dword of lane 0 in both halves
					for l := 0; l < lanes/2; l, e = l+4, e+4*st {
						diff |= (lo[l] ^ e) | (lo[l+1] ^ (e + st)) | (lo[l+2] ^ (e + 2*st)) | (lo[l+3] ^ (e + 3*st)) |
							(hi[l] ^ h0) | (hi[l+1] ^ h0) | (hi[l+2] ^ h0) | (hi[l+3] ^ h0)
					}
				}
			}
			if diff == 0 && !aperture(a0) {
				return true, w.globalRun(in, m, 0, lanes, a0)
			}
		}
	}
	// Plan the runs before any access (in the wave: a 1.5 KiB frame would grow every work-group
	// goroutine's stack).
	// A run grows while the next lane is active, its element follows the run's last one and ends
	// in the run's page (next+sz <= end).
	runs := &w.runs
	nr := 0
	lo, hi := w.v[av][:], w.v[av][:]
	if !saddr {
		hi = w.v[av+1][:]
	}
	for mm := exec; mm != 0; {
		l := bits.TrailingZeros64(mm)
		a0 := addr(l)
		end := a0&^pageMask4K + 4096
		if a0+sz > end || aperture(a0) {
			return false, nil
		}
		k, next := l+1, a0+sz
		for ; k < lanes && mm>>k&1 != 0 && next+sz <= end; k, next = k+1, next+sz {
			a := sbase + uint64(lo[k]) + off
			if !saddr {
				a = (uint64(lo[k]) | uint64(hi[k])<<32) + off
			}
			if a != next {
				break
			}
		}
		n := k - l
		runs[nr].l, runs[nr].n, runs[nr].a = l, n, a0
		nr++
		mm &^= (1<<n - 1) << l
	}
	if nr > 1 && m.dwords == 1 && hostLittleEndian {
		if vm, ok := w.g.mem.(VecMemory); ok {
			return true, w.globalRunsV(in, m, vm, runs[:nr])
		}
	}
	for _, r := range runs[:nr] {
		if err := w.globalRun(in, m, r.l, r.n, r.a); err != nil {
			return true, err
		}
	}
	return true, nil
}

// globalRunsV moves the runs of one-dword lanes in one vectored access (VecMemory): each run's
// lanes are its bytes in the register row, as in globalRun. A fault is the fault of the first run
// not moved, the runs before it done, as one access per run would leave them.
func (w *wave) globalRunsV(in *Inst, m memOp, vm VecMemory, runs []laneRun) error {
	row := &w.v[dataReg(in, m)]
	g := w.g
	vas, bufs := g.vas[:0], g.vbufs[:0]
	for _, r := range runs {
		vas = append(vas, r.a)
		bufs = append(bufs, unsafe.Slice((*byte)(unsafe.Pointer(&row[r.l])), 4*r.n))
	}
	var n int
	var err error
	if m.store {
		n, err = vm.WriteV(vas, bufs)
	} else {
		n, err = vm.ReadV(vas, bufs)
	}
	clear(bufs) // no reference to the registers outlives the access
	if err != nil {
		return w.fault(in, vas[n], m.store, err)
	}
	return nil
}

// dataReg is the register-file row of a GLOBAL access's data: VDATA for a store, VDST for a load
// (both checked by checkVRegs). A store's VDST field is not an operand and may name any register
// (fuzzing found "global_store_dword v0, a0, s[1:2]" with the field at a191, beyond a 260-row file):
// it is never indexed.
func dataReg(in *Inst, m memOp) uint16 {
	if m.store {
		return in.Opnd[fData0] - opVGPR0
	}
	return in.Opnd[fDst] - opVGPR0
}

// globalRun moves the elements of lanes [first, first+n), contiguous at a0 within one page.
func (w *wave) globalRun(in *Inst, m memOp, first, n int, a0 uint64) error {
	sz := uint64(m.size)
	total := sz * uint64(n)
	if m.dwords == 1 && hostLittleEndian {
		// One dword per lane: the register row's lanes are the bytes in memory order, so the access
		// moves them directly (a fault stops the dispatch; what a failed read left in the row is
		// never read again).
		row := &w.v[dataReg(in, m)]
		p := unsafe.Slice((*byte)(unsafe.Pointer(&row[first])), total)
		if m.store {
			if err := w.g.mem.Write(a0, p); err != nil {
				return w.fault(in, a0, true, err)
			}
			return nil
		}
		if err := w.g.mem.Read(a0, p); err != nil {
			return w.fault(in, a0, false, err)
		}
		return nil
	}
	buf := w.bbuf[:total]
	if m.store {
		d := in.Opnd[fData0] - opVGPR0
		for i := 0; i < n; i++ {
			for k := 0; k < m.dwords; k++ {
				binary.LittleEndian.PutUint32(buf[uint64(i)*sz+4*uint64(k):], w.v[d+uint16(k)][first+i])
			}
		}
		if err := w.g.mem.Write(a0, buf); err != nil {
			return w.fault(in, a0, true, err)
		}
		return nil
	}
	if err := w.g.mem.Read(a0, buf); err != nil {
		return w.fault(in, a0, false, err)
	}
	d := in.Opnd[fDst] - opVGPR0
	for i := 0; i < n; i++ {
		for k := 0; k < m.dwords; k++ {
			w.v[d+uint16(k)][first+i] = binary.LittleEndian.Uint32(buf[uint64(i)*sz+4*uint64(k):])
		}
	}
	return nil
}

const pageMask4K = 4096 - 1

// bufferInRange reports whether every active lane's offset imm + v[r] of a raw buffer access
// (OFFEN, stride 0) neither wraps 32 bits nor reaches past numRecords with its size bytes: the
// per-lane path would then read or write every lane, none as out of range.
func (w *wave) bufferInRange(exec uint64, r uint16, imm uint32, size int, numRecords uint32) bool {
	if exec == 0 || int(r) >= len(w.v) {
		return false
	}
	row := &w.v[r]
	for mm := exec; mm != 0; mm &= mm - 1 {
		if off := uint64(imm) + uint64(row[bits.TrailingZeros64(mm)]); off+uint64(size) > uint64(numRecords) {
			return false
		}
	}
	return true
}

// uniformLanes returns the value of VGPR row r in the active lanes when they all hold the same one.
func (w *wave) uniformLanes(exec uint64, r uint16) (uint32, bool) {
	if exec == 0 || int(r) >= len(w.v) {
		return 0, false
	}
	row := &w.v[r]
	v := row[bits.TrailingZeros64(exec)]
	for mm := exec; mm != 0; mm &= mm - 1 {
		if row[bits.TrailingZeros64(mm)] != v {
			return 0, false
		}
	}
	return v, true
}

// swizzleBatch performs a swizzled private-segment access (MUBUF with ADD_TID_ENABLE, SCRATCH) of
// whole dwords whose active lanes share the offset p: dword k of lane l is at base + swizzle(p+4k,
// l), so dword k of consecutive lanes is contiguous and moves as one Memory access per run of
// consecutive active lanes, straight from or into the register row. It applies only where every
// piece lies in one page: a fault is then the per-lane path's fault (its first access, to the same
// page, at the same address, nothing moved before it), and the bytes moved are the same. Else, and
// for atomics, sub-dword and d16 operations or an unaligned p, it returns done = false having moved
// nothing. (-O0 code and register spills are buffer_load/store_dword at an offset common to all
// lanes: one access instead of 64.)
func (w *wave) swizzleBatch(in *Inst, m memOp, exec, base uint64, p uint32) (done bool, err error) {
	if m.atomic != "" || m.d16 != d16None || m.size != 4*m.dwords || exec == 0 || p%4 != 0 || !hostLittleEndian {
		return false, nil
	}
	first := bits.TrailingZeros64(exec)
	last := 63 - bits.LeadingZeros64(exec)
	lo := base + swizzle(p, first)
	hi := base + swizzle(p+4*uint32(m.dwords-1), last) + 4
	if hi < lo || lo>>12 != (hi-1)>>12 {
		return false, nil
	}
	d := dataReg(in, m)
	if int(d)+m.dwords > len(w.v) {
		return false, nil
	}
	for k := 0; k < m.dwords; k++ {
		row := &w.v[d+uint16(k)]
		for mm := exec; mm != 0; {
			l := bits.TrailingZeros64(mm)
			n := bits.TrailingZeros64(^(mm >> l)) // consecutive active lanes from l (at most 64-l)
			a := base + swizzle(p+4*uint32(k), l)
			b := unsafe.Slice((*byte)(unsafe.Pointer(&row[l])), 4*n)
			if m.store {
				err = w.g.mem.Write(a, b)
			} else {
				err = w.g.mem.Read(a, b)
			}
			if err != nil {
				return true, w.fault(in, a, m.store, err)
			}
			mm &^= (1<<n - 1) << l // (n = 64: 1<<64 is 0 in uint64, the mask all ones)
		}
	}
	return true, nil
}

// hostLittleEndian: a register row of uint32 lanes has the byte order of GPU memory.
var hostLittleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// vmemOps binds the FLAT/GLOBAL/SCRATCH and MUBUF operations (mem.go vmemExec), their VGPR operands
// checked.
func vmemOps() {
	for op := Op(1); op < NumOps; op++ {
		n := opNames[op]
		for _, p := range []string{"flat_", "global_", "scratch_", "buffer_"} {
			if strings.HasPrefix(n, p) {
				if f := vmemExec(n); f != nil {
					def(op, vregChecked(n, f))
				}
			}
		}
	}
}
