package shader

import (
	"encoding/binary"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// sbufferOp marks the S_BUFFER_* operations (a V# base, NUM_RECORDS range checks), set by smemOps:
// an array index per access instead of a name comparison.
var sbufferOp [NumOps]bool

func isSBuffer(in *Inst) bool { return sbufferOp[in.Info.Op] }

// smemOps registers the scalar memory operations (SMEM).
func smemOps() {
	for op := Op(1); op < NumOps; op++ {
		sbufferOp[op] = strings.HasPrefix(opNames[op], "s_buffer_")
	}
	// SMEM: loads through the scalar cache (kcache.go; GLC bypasses it).
	defs([]Op{OpSLoadDword, OpSLoadDwordx2, OpSLoadDwordx4, OpSLoadDwordx8, OpSLoadDwordx16, OpSBufferLoadDword,
		OpSBufferLoadDwordx2, OpSBufferLoadDwordx4, OpSBufferLoadDwordx8, OpSBufferLoadDwordx16}, smemLoad)
	defs([]Op{OpSStoreDword, OpSStoreDwordx2, OpSStoreDwordx4, OpSBufferStoreDword, OpSBufferStoreDwordx2,
		OpSBufferStoreDwordx4}, smemStore)
	// SMEM atomics (GFX9 S_ATOMIC_* / S_BUFFER_ATOMIC_*): the vector atomics' operations on one dword
	// or qword; with glc the old value returns to the data SGPRs.
	for _, a := range []struct {
		op             string // atomicOp's operation
		wide           bool
		global, buffer Op
	}{
		{"swap", false, OpSAtomicSwap, OpSBufferAtomicSwap}, {"swap", true, OpSAtomicSwapX2, OpSBufferAtomicSwapX2},
		{"cmpswap", false, OpSAtomicCmpswap, OpSBufferAtomicCmpswap}, {"cmpswap", true, OpSAtomicCmpswapX2, OpSBufferAtomicCmpswapX2},
		{"add", false, OpSAtomicAdd, OpSBufferAtomicAdd}, {"add", true, OpSAtomicAddX2, OpSBufferAtomicAddX2},
		{"sub", false, OpSAtomicSub, OpSBufferAtomicSub}, {"sub", true, OpSAtomicSubX2, OpSBufferAtomicSubX2},
		{"smin", false, OpSAtomicSmin, OpSBufferAtomicSmin}, {"smin", true, OpSAtomicSminX2, OpSBufferAtomicSminX2},
		{"umin", false, OpSAtomicUmin, OpSBufferAtomicUmin}, {"umin", true, OpSAtomicUminX2, OpSBufferAtomicUminX2},
		{"smax", false, OpSAtomicSmax, OpSBufferAtomicSmax}, {"smax", true, OpSAtomicSmaxX2, OpSBufferAtomicSmaxX2},
		{"umax", false, OpSAtomicUmax, OpSBufferAtomicUmax}, {"umax", true, OpSAtomicUmaxX2, OpSBufferAtomicUmaxX2},
		{"and", false, OpSAtomicAnd, OpSBufferAtomicAnd}, {"and", true, OpSAtomicAndX2, OpSBufferAtomicAndX2},
		{"or", false, OpSAtomicOr, OpSBufferAtomicOr}, {"or", true, OpSAtomicOrX2, OpSBufferAtomicOrX2},
		{"xor", false, OpSAtomicXor, OpSBufferAtomicXor}, {"xor", true, OpSAtomicXorX2, OpSBufferAtomicXorX2},
		{"inc", false, OpSAtomicInc, OpSBufferAtomicInc}, {"inc", true, OpSAtomicIncX2, OpSBufferAtomicIncX2},
		{"dec", false, OpSAtomicDec, OpSBufferAtomicDec}, {"dec", true, OpSAtomicDecX2, OpSBufferAtomicDecX2},
	} {
		op, wide := a.op, a.wide
		f := func(w *wave, in *Inst) error { return smemAtomic(w, in, op, wide) }
		def(a.global, f)
		def(a.buffer, f)
	}
	// Scalar cache controls (kcache.go): invalidate empties the dispatch's scalar cache; write-back
	// and discard have nothing to do (SMEM stores write through), nor have the ATC probes.
	defs([]Op{OpSDcacheInv, OpSDcacheInvVol}, func(w *wave, _ *Inst) error { w.d.kc.reset(); return nil })
	defs([]Op{OpSDcacheWb, OpSDcacheWbVol, OpSDcacheDiscard, OpSDcacheDiscardX2, OpSAtcProbe, OpSAtcProbeBuffer},
		func(*wave, *Inst) error { return nil })
	// S_MEMTIME and S_MEMREALTIME: the 64-bit GPU timestamp (see RefClock).
	defs([]Op{OpSMemtime, OpSMemrealtime}, func(w *wave, in *Inst) error { w.sset64(in.Opnd[fDst], RefClock()); return nil })
}

// RefClockHz is the frequency of RefClock: gfx90a's 100 MHz reference clock (REFCLK).
const RefClockHz = 100_000_000

// RefClock is the GPU timestamp: the 100 MHz counter that amdgpu reads as the GPU clock counter
// (gfx_v9_0_get_gpu_clock_counter, reported by AMDKFD_IOC_GET_CLOCK_COUNTERS; package kfd computes it
// the same way from the CLOCK_MONOTONIC_RAW reading it reports as the CPU counter) and that S_MEMTIME and S_MEMREALTIME return to a wave (HIP's clock64() and
// wall_clock64(); both counters tick at REFCLK on gfx90a in this model). It is CLOCK_MONOTONIC_RAW in
// 10 ns units, so it never decreases, across waves, dispatches, queues and processes alike.
func RefClock() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC_RAW, &ts) != nil {
		return 0
	}
	return uint64(ts.Nano()) / (1e9 / RefClockHz)
}

// smemAddr is an SMEM instruction's byte address: SBASE (a V#'s 48-bit base for s_buffer_*) plus the
// immediate and the SGPR offset.
func smemAddr(w *wave, in *Inst) uint64 {
	base := w.sget64(in.Opnd[fSrc0])
	if isSBuffer(in) {
		base &= 0xffffffffffff
	}
	addr := base + uint64(int64(in.Imm))
	if in.Opnd[fSrc1] != opOff {
		addr += uint64(w.s32(in, fSrc1))
	}
	return addr
}

func smemStore(w *wave, in *Inst) error {
	n := int(in.Info.Ops[0].W)
	if int(in.Opnd[fDst])+n > 102 {
		return fmt.Errorf("%w: SMEM data %s", ErrIllegal, regName(in.Opnd[fDst], n))
	}
	addr := smemAddr(w, in) &^ 3
	buf := w.mbuf[:16]
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(buf[4*i:], w.s[int(in.Opnd[fDst])+i])
	}
	if isSBuffer(in) {
		if n = smemInRange(w, in, n); n == 0 {
			return nil
		}
	}
	if err := w.g.mem.Write(addr, buf[:4*n]); err != nil {
		return w.fault(in, addr, true, err)
	}
	w.d.kc.reset() // written through: no line keeps the old bytes
	return nil
}

func smemAtomic(w *wave, in *Inst, op string, wide bool) error {
	n := int(in.Info.Ops[0].W) // data SGPRs: 1/2, or 2/4 for cmpswap (new value, then compare value)
	if int(in.Opnd[fDst])+n > 102 {
		return fmt.Errorf("%w: SMEM data %s", ErrIllegal, regName(in.Opnd[fDst], n))
	}
	d := int(in.Opnd[fDst])
	get := func(i int) uint64 {
		if wide {
			return uint64(w.s[d+2*i]) | uint64(w.s[d+2*i+1])<<32
		}
		return uint64(w.s[d+i])
	}
	v, c := get(0), uint64(0)
	if op == "cmpswap" {
		c = get(1)
	}
	f := atomicOp(op, wide)
	sz := 4
	if wide {
		sz = 8
	}
	addr := smemAddr(w, in) &^ uint64(sz-1)
	old, err := w.g.mem.Atomic(addr, sz, func(o uint64) uint64 { return f(o, v, c) })
	if err != nil {
		return w.fault(in, addr, true, err)
	}
	w.d.kc.reset()
	if in.Glc {
		w.s[d] = uint32(old)
		if wide {
			w.s[d+1] = uint32(old >> 32)
		}
	}
	return nil
}

func smemLoad(w *wave, in *Inst) error {
	n := int(in.Info.Ops[0].W)
	addr := smemAddr(w, in)
	if int(in.Opnd[fDst])+n > 102 {
		return fmt.Errorf("%w: SMEM destination", ErrIllegal)
	}
	p := w.mbuf[:4*n]
	clear(p)
	k := n
	if isSBuffer(in) {
		k = smemInRange(w, in, n)
	}
	var err error
	if k == 0 {
		// nothing in range: no memory access
	} else if in.Glc { // globally coherent: past the scalar cache
		w.pollNote(in, addr)
		err = w.g.mem.Read(addr&^3, p[:4*k])
	} else {
		err = w.d.kc.read(w.g.mem, addr&^3, p[:4*k], &w.kc)
	}
	if err != nil {
		return w.fault(in, addr, false, err)
	}
	for i := 0; i < n; i++ {
		w.s[int(in.Opnd[fDst])+i] = binary.LittleEndian.Uint32(p[4*i:])
	}
	return nil
}

// smemInRange is how many of the n dwords of a scalar buffer access lie inside the buffer: the
// scalar unit range-checks S_BUFFER_* against the V#'s NUM_RECORDS (in bytes when STRIDE is 0,
// else STRIDE x NUM_RECORDS, as gem5's Vega SMEM calcAddr), and a dword out of range reads 0
// without a memory access (or is not written). The dwords' offsets grow, so those in range are
// a prefix. kfdtest's loop_isa (KFDQMTest CU masking) builds a V# whose base is unmapped and
// whose NUM_RECORDS is a work-group ID, below its load's offset.
func smemInRange(w *wave, in *Inst, n int) int {
	r := in.Opnd[fSrc0]
	if int(r)+4 > 102 {
		return n // the base read already failed the wave (sget64)
	}
	stride, records := uint64(w.s[r+1]>>16&0x3fff), uint64(w.s[r+2])
	limit := records
	if stride != 0 {
		limit = stride * records
	}
	off := uint64(uint32(int32(in.Imm)))
	if in.Opnd[fSrc1] != opOff {
		off += uint64(w.s32(in, fSrc1))
	}
	off &^= 3
	k := 0
	for k < n && off+4*uint64(k)+4 <= limit {
		k++
	}
	return k
}
