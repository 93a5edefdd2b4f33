package shader

// The 32- and 64-bit VOP1/VOP2/VOP3 operations (the lane loops they run on: valu.go).

import (
	"math"
	"math/bits"
)

// vopF32Ops registers the f32 VOP1/VOP2/VOP3 operations (the 16-bit ones: valu16.go; packed
// and dot: vop3p.go; compares: vopc.go).
func vopF32Ops() {
	f2 := func(f func(a, b float32) float32) execFn {
		return v32(tF32, 2, func(a, b, _ uint32) uint32 { return u32(f(f32(a), f32(b))) })
	}
	def(OpVAddF32, v32tag(v32k(tF32, 2, func(a, b, _ uint32) uint32 { return u32(f32(a) + f32(b)) }, func(d, a, b, _ *[lanes]uint32) {
		if simd && addF32AVX2(d, a, b) {
			return
		}
		ds, as, bs := f32Row(d)[:], f32Row(a)[:], f32Row(b)[:] // f32 views: no moves through integer registers
		for l := range ds {
			ds[l] = as[l] + bs[l]
		}
	}), v32Add))
	def(OpVSubF32, v32k(tF32, 2, func(a, b, _ uint32) uint32 { return u32(f32(a) - f32(b)) }, func(d, a, b, _ *[lanes]uint32) {
		if simd && subF32AVX2(d, a, b) {
			return
		}
		ds, as, bs := f32Row(d)[:], f32Row(a)[:], f32Row(b)[:] // f32 views: no moves through integer registers
		for l := range ds {
			ds[l] = as[l] - bs[l]
		}
	}))
	def(OpVSubrevF32, f2(func(a, b float32) float32 { return b - a }))
	def(OpVMulF32, v32tag(v32k(tF32, 2, func(a, b, _ uint32) uint32 { return u32(f32(a) * f32(b)) }, func(d, a, b, _ *[lanes]uint32) {
		if simd && mulF32AVX2(d, a, b) {
			return
		}
		ds, as, bs := f32Row(d)[:], f32Row(a)[:], f32Row(b)[:] // f32 views: no moves through integer registers
		for l := range ds {
			ds[l] = as[l] * bs[l]
		}
	}), v32Mul))
	def(OpVMinF32, f2(fmin32))
	def(OpVMaxF32, f2(fmax32))
	def(OpVFmaF32, v32k(tF32, 3, fma32, fmaKern))
	def(OpVMadF32, v32(tF32, 3, func(a, b, c uint32) uint32 { return u32(float32(f32(a)*f32(b)) + f32(c)) }))
	def(OpVMadakF32, func(w *wave, in *Inst) error {
		k := in.Lit
		return v32(tF32, 2, func(a, b, _ uint32) uint32 { return u32(float32(f32(a)*f32(b)) + f32(k)) })(w, in)
	})
	def(OpVMadmkF32, func(w *wave, in *Inst) error {
		k := in.Lit
		return v32(tF32, 2, func(a, b, _ uint32) uint32 { return u32(float32(f32(a)*f32(k)) + f32(b)) })(w, in)
	})
	// v_fmac/v_mac: the destination is the addend (Decode puts it in src2).
	def(OpVFmacF32, v32k(tF32, 3, fma32, fmaKern))
	def(OpVMacF32, v32(tF32, 3, func(a, b, c uint32) uint32 { return u32(float32(f32(a)*f32(b)) + f32(c)) }))
	def(OpVFmacF64, v64(tF64, tF64, 3, func(a, b, c uint64) uint64 { return u64(math.FMA(f64(a), f64(b), f64(c))) }))
	def(OpVCvtF32U32, v32(tU32, 1, func(a, _, _ uint32) uint32 { return u32(float32(a)) }))
	def(OpVCvtF32I32, v32(tU32, 1, func(a, _, _ uint32) uint32 { return u32(float32(int32(a))) }))
	def(OpVCvtU32F32, v32(tF32, 1, func(a, _, _ uint32) uint32 { return cvtF32ToU32(f32(a)) }))
	def(OpVCvtI32F32, v32(tF32, 1, func(a, _, _ uint32) uint32 { return cvtF32ToI32(f32(a)) }))
	// v_rcp_f32 / v_rcp_iflag_f32 are approximations on hardware (1 ULP); the exact quotient is within it.
	defs([]Op{OpVRcpF32, OpVRcpIflagF32}, v32(tF32, 1, func(a, _, _ uint32) uint32 { return u32(1 / f32(a)) }))
	def(OpVSqrtF32, v32(tF32, 1, func(a, _, _ uint32) uint32 { return u32(float32(math.Sqrt(float64(f32(a))))) }))
	def(OpVRsqF32, v32(tF32, 1, func(a, _, _ uint32) uint32 { return u32(float32(1 / math.Sqrt(float64(f32(a))))) }))
	def(OpVTruncF32, v32(tF32, 1, func(a, _, _ uint32) uint32 { return u32(float32(math.Trunc(float64(f32(a))))) }))
	def(OpVFloorF32, v32(tF32, 1, func(a, _, _ uint32) uint32 { return u32(float32(math.Floor(float64(f32(a))))) }))
	def(OpVCeilF32, v32(tF32, 1, func(a, _, _ uint32) uint32 { return u32(float32(math.Ceil(float64(f32(a))))) }))
	def(OpVRndneF32, v32(tF32, 1, func(a, _, _ uint32) uint32 { return u32(float32(math.RoundToEven(float64(f32(a))))) }))
}

// vopIntOps registers the 32-bit integer VALU operations and the accumulation-register moves.
func vopIntOps() {
	// 32-bit integer
	i2 := func(f func(a, b uint32) uint32) execFn {
		return v32(tU32, 2, func(a, b, _ uint32) uint32 { return f(a, b) })
	}
	i3 := func(f func(a, b, c uint32) uint32) execFn { return v32(tU32, 3, f) }
	def(OpVMovB32, v32k(tU32, 1, func(a, _, _ uint32) uint32 { return a }, func(d, a, _, _ *[lanes]uint32) { *d = *a }))
	// gfx90a accumulation registers (the unified file: a[n] is register 256+n)
	def(OpVAccvgprReadB32, v32(tU32, 1, func(a, _, _ uint32) uint32 { return a }))
	def(OpVAccvgprWriteB32, v32(tU32, 1, func(a, _, _ uint32) uint32 { return a }))
	def(OpVAccvgprMovB32, v32(tU32, 1, func(a, _, _ uint32) uint32 { return a }))
	def(OpVNotB32, v32(tU32, 1, func(a, _, _ uint32) uint32 { return ^a }))
	def(OpVBfrevB32, v32(tU32, 1, func(a, _, _ uint32) uint32 { return bits.Reverse32(a) }))
	def(OpVFfbhU32, v32(tU32, 1, func(a, _, _ uint32) uint32 {
		if a == 0 {
			return 0xffffffff
		}
		return uint32(bits.LeadingZeros32(a))
	}))
	def(OpVFfblB32, v32(tU32, 1, func(a, _, _ uint32) uint32 {
		if a == 0 {
			return 0xffffffff
		}
		return uint32(bits.TrailingZeros32(a))
	}))
	def(OpVAddU32, satU32(v32k(tU32, 2, func(a, b, _ uint32) uint32 { return a + b }, func(d, a, b, _ *[lanes]uint32) {
		if simd {
			addU32AVX2(d, a, b)
			return
		}
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = as[l] + bs[l]
		}
	}), func(a, b uint32) uint32 {
		if a+b < a {
			return 0xffffffff
		}
		return a + b
	}))
	def(OpVSubU32, satU32(v32k(tU32, 2, func(a, b, _ uint32) uint32 { return a - b }, func(d, a, b, _ *[lanes]uint32) {
		if simd {
			subU32AVX2(d, a, b)
			return
		}
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = as[l] - bs[l]
		}
	}), func(a, b uint32) uint32 { return a - min(a, b) }))
	def(OpVSubrevU32, satU32(v32k(tU32, 2, func(a, b, _ uint32) uint32 { return b - a }, func(d, a, b, _ *[lanes]uint32) {
		if simd {
			subrevU32AVX2(d, a, b)
			return
		}
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = bs[l] - as[l]
		}
	}), func(a, b uint32) uint32 { return b - min(a, b) }))
	def(OpVMulLoU32, v32k(tU32, 2, func(a, b, _ uint32) uint32 { return a * b }, func(d, a, b, _ *[lanes]uint32) {
		if simd {
			mulLoU32AVX2(d, a, b)
			return
		}
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = as[l] * bs[l]
		}
	}))
	def(OpVMulHiU32, i2(func(a, b uint32) uint32 { h, _ := bits.Mul32(a, b); return h }))
	def(OpVMulHiI32, i2(func(a, b uint32) uint32 { return uint32(uint64(int64(int32(a))*int64(int32(b))) >> 32) }))
	def(OpVMulU32U24, v32k(tU32, 2, func(a, b, _ uint32) uint32 { return (a & 0xffffff) * (b & 0xffffff) }, func(d, a, b, _ *[lanes]uint32) {
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = (as[l] & 0xffffff) * (bs[l] & 0xffffff)
		}
	}))
	def(OpVMulHiU32U24, i2(func(a, b uint32) uint32 { return uint32(uint64(a&0xffffff) * uint64(b&0xffffff) >> 32) }))
	s24 := func(a uint32) int64 { return int64(int32(a<<8) >> 8) }
	def(OpVMulI32I24, i2(func(a, b uint32) uint32 { return uint32(s24(a) * s24(b)) }))
	def(OpVMulHiI32I24, i2(func(a, b uint32) uint32 { return uint32(uint64(s24(a)*s24(b)) >> 32) }))
	def(OpVMadU32U24, v32k(tU32, 3, func(a, b, c uint32) uint32 { return (a&0xffffff)*(b&0xffffff) + c }, func(d, a, b, c *[lanes]uint32) {
		ds, as, bs, cs := d[:], a[:], b[:], c[:]
		for l := range ds {
			ds[l] = (as[l]&0xffffff)*(bs[l]&0xffffff) + cs[l]
		}
	}))
	def(OpVMadI32I24, i3(func(a, b, c uint32) uint32 { return uint32(s24(a)*s24(b)) + c }))
	def(OpVLshlrevB32, v32k(tU32, 2, func(a, b, _ uint32) uint32 { return b << (a & 31) }, func(d, a, b, _ *[lanes]uint32) {
		if simd {
			lshlrevB32AVX2(d, a, b)
			return
		}
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = bs[l] << (as[l] & 31)
		}
	}))
	def(OpVLshrrevB32, v32k(tU32, 2, func(a, b, _ uint32) uint32 { return b >> (a & 31) }, func(d, a, b, _ *[lanes]uint32) {
		if simd {
			lshrrevB32AVX2(d, a, b)
			return
		}
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = bs[l] >> (as[l] & 31)
		}
	}))
	def(OpVAshrrevI32, v32k(tU32, 2, func(a, b, _ uint32) uint32 { return uint32(int32(b) >> (a & 31)) }, func(d, a, b, _ *[lanes]uint32) {
		if simd {
			ashrrevI32AVX2(d, a, b)
			return
		}
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = uint32(int32(bs[l]) >> (as[l] & 31))
		}
	}))
	def(OpVAndB32, v32k(tU32, 2, func(a, b, _ uint32) uint32 { return a & b }, func(d, a, b, _ *[lanes]uint32) {
		if simd {
			andB32AVX2(d, a, b)
			return
		}
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = as[l] & bs[l]
		}
	}))
	def(OpVOrB32, v32k(tU32, 2, func(a, b, _ uint32) uint32 { return a | b }, func(d, a, b, _ *[lanes]uint32) {
		if simd {
			orB32AVX2(d, a, b)
			return
		}
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = as[l] | bs[l]
		}
	}))
	def(OpVXorB32, v32k(tU32, 2, func(a, b, _ uint32) uint32 { return a ^ b }, func(d, a, b, _ *[lanes]uint32) {
		if simd {
			xorB32AVX2(d, a, b)
			return
		}
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = as[l] ^ bs[l]
		}
	}))
	def(OpVMinU32, i2(func(a, b uint32) uint32 { return min(a, b) }))
	def(OpVMaxU32, i2(func(a, b uint32) uint32 { return max(a, b) }))
	def(OpVMinI32, i2(func(a, b uint32) uint32 { return uint32(min(int32(a), int32(b))) }))
	def(OpVMaxI32, i2(func(a, b uint32) uint32 { return uint32(max(int32(a), int32(b))) }))
	def(OpVBcntU32B32, i2(func(a, b uint32) uint32 { return uint32(bits.OnesCount32(a)) + b }))
	def(OpVBfmB32, i2(func(a, b uint32) uint32 { return (uint32(1)<<(a&31) - 1) << (b & 31) }))
	def(OpVLshlAddU32, v32k(tU32, 3, func(a, b, c uint32) uint32 { return a<<(b&31) + c }, func(d, a, b, c *[lanes]uint32) {
		ds, as, bs, cs := d[:], a[:], b[:], c[:]
		for l := range ds {
			ds[l] = as[l]<<(bs[l]&31) + cs[l]
		}
	}))
	def(OpVAddLshlU32, v32k(tU32, 3, func(a, b, c uint32) uint32 { return (a + b) << (c & 31) }, func(d, a, b, c *[lanes]uint32) {
		ds, as, bs, cs := d[:], a[:], b[:], c[:]
		for l := range ds {
			ds[l] = (as[l] + bs[l]) << (cs[l] & 31)
		}
	}))
	def(OpVLshlOrB32, v32k(tU32, 3, func(a, b, c uint32) uint32 { return a<<(b&31) | c }, func(d, a, b, c *[lanes]uint32) {
		ds, as, bs, cs := d[:], a[:], b[:], c[:]
		for l := range ds {
			ds[l] = as[l]<<(bs[l]&31) | cs[l]
		}
	}))
	def(OpVAndOrB32, v32k(tU32, 3, func(a, b, c uint32) uint32 { return a&b | c }, func(d, a, b, c *[lanes]uint32) {
		ds, as, bs, cs := d[:], a[:], b[:], c[:]
		for l := range ds {
			ds[l] = as[l]&bs[l] | cs[l]
		}
	}))
	def(OpVOr3B32, v32k(tU32, 3, func(a, b, c uint32) uint32 { return a | b | c }, func(d, a, b, c *[lanes]uint32) {
		ds, as, bs, cs := d[:], a[:], b[:], c[:]
		for l := range ds {
			ds[l] = as[l] | bs[l] | cs[l]
		}
	}))
	def(OpVXadU32, i3(func(a, b, c uint32) uint32 { return (a ^ b) + c }))
	def(OpVAdd3U32, v32k(tU32, 3, func(a, b, c uint32) uint32 { return a + b + c }, func(d, a, b, c *[lanes]uint32) {
		ds, as, bs, cs := d[:], a[:], b[:], c[:]
		for l := range ds {
			ds[l] = as[l] + bs[l] + cs[l]
		}
	}))
	def(OpVAlignbitB32, i3(func(a, b, c uint32) uint32 { return uint32((uint64(a)<<32 | uint64(b)) >> (c & 31)) }))
	def(OpVAlignbyteB32, i3(func(a, b, c uint32) uint32 { return uint32((uint64(a)<<32 | uint64(b)) >> (8 * (c & 3))) }))
	def(OpVBfeU32, i3(func(a, b, c uint32) uint32 { return bfe32(a, b&31|(c&31)<<16, false) }))
	def(OpVBfeI32, i3(func(a, b, c uint32) uint32 { return bfe32(a, b&31|(c&31)<<16, true) }))
	def(OpVPermB32, i3(permB32))
	def(OpVBfiB32, i3(func(a, b, c uint32) uint32 { return a&b | ^a&c }))
	def(OpVMin3U32, i3(func(a, b, c uint32) uint32 { return min(a, b, c) }))
	def(OpVMax3U32, i3(func(a, b, c uint32) uint32 { return max(a, b, c) }))
	def(OpVMin3I32, i3(func(a, b, c uint32) uint32 { return uint32(min(int32(a), int32(b), int32(c))) }))
	def(OpVMax3I32, i3(func(a, b, c uint32) uint32 { return uint32(max(int32(a), int32(b), int32(c))) }))
}

// vop64Ops registers the 64-bit VALU operations.
func vop64Ops() {
	// 64-bit
	// 64-bit shifts; by a constant amount under a full EXEC, one pass over the register rows
	// (shiftRows) instead of v64k's operand rows of uint64.
	def(OpVLshlrevB64, shiftRows(v64k(tU32, tU64, 2, func(a, b, _ uint64) uint64 { return b << (a & 63) }, func(d, a, b, _ *[lanes]uint64) {
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = bs[l] << (as[l] & 63)
		}
	}), func(s uint32, dlo, dhi, lo, hi *[lanes]uint32) {
		if simd {
			shl64AVX2(dlo, dhi, lo, hi, s&63)
			return
		}
		dlos, dhis, los, his := dlo[:], dhi[:], lo[:], hi[:]
		s &= 63 // s < 64 (shiftRows): no test for a larger shift
		for g := 0; g < lanes; g += 4 {
			// [4]uint32 views: one bounds check per row and round, none per lane
			dl, dh, l, h := (*[4]uint32)(dlos[g:]), (*[4]uint32)(dhis[g:]), (*[4]uint32)(los[g:]), (*[4]uint32)(his[g:])
			r0 := (uint64(l[0]) | uint64(h[0])<<32) << s
			r1 := (uint64(l[1]) | uint64(h[1])<<32) << s
			r2 := (uint64(l[2]) | uint64(h[2])<<32) << s
			r3 := (uint64(l[3]) | uint64(h[3])<<32) << s
			dl[0], dh[0], dl[1], dh[1] = uint32(r0), uint32(r0>>32), uint32(r1), uint32(r1>>32)
			dl[2], dh[2], dl[3], dh[3] = uint32(r2), uint32(r2>>32), uint32(r3), uint32(r3>>32)
		}
	}))
	def(OpVLshrrevB64, shiftRows(v64k(tU32, tU64, 2, func(a, b, _ uint64) uint64 { return b >> (a & 63) }, func(d, a, b, _ *[lanes]uint64) {
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = bs[l] >> (as[l] & 63)
		}
	}), func(s uint32, dlo, dhi, lo, hi *[lanes]uint32) {
		if simd {
			shr64AVX2(dlo, dhi, lo, hi, s&63)
			return
		}
		dlos, dhis, los, his := dlo[:], dhi[:], lo[:], hi[:]
		for l := range dlos {
			r := (uint64(los[l]) | uint64(his[l])<<32) >> (s & 63)
			dlos[l], dhis[l] = uint32(r), uint32(r>>32)
		}
	}))
	def(OpVAshrrevI64, shiftRows(v64k(tU32, tU64, 2, func(a, b, _ uint64) uint64 { return uint64(int64(b) >> (a & 63)) }, func(d, a, b, _ *[lanes]uint64) {
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = uint64(int64(bs[l]) >> (as[l] & 63))
		}
	}), func(s uint32, dlo, dhi, lo, hi *[lanes]uint32) {
		if simd {
			sar64AVX2(dlo, dhi, lo, hi, s&63)
			return
		}
		dlos, dhis, los, his := dlo[:], dhi[:], lo[:], hi[:]
		for l := range dlos {
			r := uint64(int64(uint64(los[l])|uint64(his[l])<<32) >> (s & 63))
			dlos[l], dhis[l] = uint32(r), uint32(r>>32)
		}
	}))
	def(OpVAddF64, v64k(tF64, tF64, 2, func(a, b, _ uint64) uint64 { return u64(f64(a) + f64(b)) }, func(d, a, b, _ *[lanes]uint64) {
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = u64(f64(as[l]) + f64(bs[l]))
		}
	}))
	def(OpVMulF64, v64k(tF64, tF64, 2, func(a, b, _ uint64) uint64 { return u64(f64(a) * f64(b)) }, func(d, a, b, _ *[lanes]uint64) {
		ds, as, bs := d[:], a[:], b[:]
		for l := range ds {
			ds[l] = u64(f64(as[l]) * f64(bs[l]))
		}
	}))
	def(OpVFmaF64, v64(tF64, tF64, 3, func(a, b, c uint64) uint64 { return u64(math.FMA(f64(a), f64(b), f64(c))) }))
	// IEEE mode, as v_min/max_f32: a NaN operand yields the other operand; -0 < +0.
	def(OpVMinF64, v64(tF64, tF64, 2, func(a, b, _ uint64) uint64 { return minMax64(a, b, true) }))
	def(OpVMaxF64, v64(tF64, tF64, 2, func(a, b, _ uint64) uint64 { return minMax64(a, b, false) }))
	def(OpVCvtF64F32, v64(tF32, tU32, 1, func(a, _, _ uint64) uint64 { return u64(float64(f32(uint32(a)))) }))
	def(OpVCvtF64U32, v64(tU32, tU32, 1, func(a, _, _ uint64) uint64 { return u64(float64(uint32(a))) }))
	def(OpVCvtF64I32, v64(tU32, tU32, 1, func(a, _, _ uint64) uint64 { return u64(float64(int32(uint32(a)))) }))
	def(OpVCvtF32F64, cvtFrom64(func(a uint64) uint32 { return u32(float32(f64(a))) }))
	def(OpVCvtU32F64, cvtFrom64(func(a uint64) uint32 { return cvtF64ToU32(f64(a)) }))
	def(OpVCvtI32F64, cvtFrom64(func(a uint64) uint32 { return cvtF64ToI32(f64(a)) }))
	def(OpVPkMovB32, pkMov)
}

// shiftRows runs a 64-bit shift whose amount (src0) is not a VGPR, under a full EXEC, on register
// pairs, with sh: the amount (& 63) applied to every lane of lo/hi written to dlo/dhi (each lane
// read before it is written). Anything else takes v64k's routine slow.
func shiftRows(slow execFn, sh func(s uint32, dlo, dhi, lo, hi *[lanes]uint32)) execFn {
	return func(w *wave, in *Inst) error {
		if w.exec() != ^uint64(0) || in.Ext != extNone || in.OpSel != 0 && in.Fmt == FmtVOP3 || in.Opnd[fSrc0] >= opVGPR0 {
			return slow(w, in)
		}
		lo, hi := w.vreg(in.Opnd[fSrc1]), w.vreg(in.Opnd[fSrc1]+1)
		dlo, dhi := w.vreg(in.Opnd[fDst]), w.vreg(in.Opnd[fDst]+1)
		if lo == nil || hi == nil || dlo == nil || dhi == nil || in.Opnd[fSrc1] < opVGPR0 {
			return slow(w, in)
		}
		a, err := w.src32(in, in.Opnd[fSrc0], k32)
		if err != nil {
			return err
		}
		sh(a.c&63, dlo, dhi, lo, hi)
		return nil
	}
}

// vopCarryOps registers the carry arithmetic and the 64-bit multiply-adds (VOP2/VOP3b).
func vopCarryOps() {
	// carry arithmetic: e32 uses VCC for carry-in/out, VOP3b the sdst field and src2.
	// The lane loop is inline (no call per lane): sub selects subtraction, rev swaps the sources.
	carry := func(cin, sub, rev bool) execFn {
		return func(w *wave, in *Inst) error {
			if in.Fmt != FmtVOP3 && in.Ext == extNone && w.exec() == ^uint64(0) {
				// e32 under a full EXEC (carryE32Full): what the path below does then, with
				// fewer calls and tests.
				if b, d := w.vreg(in.Opnd[fSrc1]), w.vreg(in.Opnd[fDst]); b != nil && d != nil {
					return carryE32Full(w, in, b, d, cin, sub, rev)
				}
			}
			if err := w.checkExt(in); err != nil {
				return err
			}
			if m := w.exec(); m&(m-1) == 0 && m != 0 && oneLanePath {
				return carryOne(w, in, cin, sub, rev, bits.TrailingZeros64(m))
			}
			var a, b lane32
			var err error
			if a.r = w.vreg(in.Opnd[fSrc0]); a.r == nil {
				if a, err = w.src32(in, in.Opnd[fSrc0], k32); err != nil {
					return err
				}
			}
			if b.r = w.vreg(in.Opnd[fSrc1]); b.r == nil {
				if b, err = w.src32(in, in.Opnd[fSrc1], k32); err != nil {
					return err
				}
			}
			if rev {
				a, b = b, a
			}
			dst, sd, ci, err := carryOperands(w, in, cin)
			if err != nil {
				return err
			}
			var co uint64
			m := w.exec()
			if bits.OnesCount64(m) < denseLanes {
				for ; m != 0; m &= m - 1 {
					l := bits.TrailingZeros64(m)
					var r, c uint32
					if sub {
						r, c = bits.Sub32(a.at(l), b.at(l), uint32(ci>>l&1))
					} else {
						r, c = bits.Add32(a.at(l), b.at(l), uint32(ci>>l&1))
					}
					dst[l] = r
					co |= uint64(c) << l
				}
				w.sset64(sd, co)
				return nil
			}
			w.sset64(sd, carryDense(w, a, b, dst, ci, m, sub))
			return nil
		}
	}
	def(OpVAddCoU32, carry(false, false, false))
	def(OpVSubCoU32, carry(false, true, false))
	def(OpVSubrevCoU32, carry(false, true, true))
	def(OpVAddcCoU32, carry(true, false, false))
	def(OpVSubbCoU32, carry(true, true, false))
	def(OpVSubbrevCoU32, carry(true, true, true))

	// v_mad_u64_u32 / v_mad_i64_i32 (VOP3b): D.u64 = S0.u32*S1.u32 + S2.u64, carry-out to sdst.
	mad64 := func(signed bool) execFn {
		return func(w *wave, in *Inst) error {
			a, err := w.vsrc(in, in.Opnd[fSrc0], k32, 0)
			if err != nil {
				return err
			}
			b, err := w.vsrc(in, in.Opnd[fSrc1], k32, 1)
			if err != nil {
				return err
			}
			c, err := w.src64(in, in.Opnd[fSrc2], k64i)
			if err != nil {
				return err
			}
			if c.lo == nil { // a constant addend: one row pair of it
				c.lo, c.hi = &w.tmp[2], &w.tmp[3]
				fillRow(c.lo, uint32(c.c))
				fillRow(c.hi, uint32(c.c>>32))
			}
			lo, err := w.vdst(in.Opnd[fDst], 2)
			if err != nil {
				return err
			}
			hi := &w.v[in.Opnd[fDst]-opVGPR0+1]
			mad := func(l int) (r, cy uint64) {
				cv := uint64(c.lo[l]) | uint64(c.hi[l])<<32
				if signed {
					p := int64(int32(a[l])) * int64(int32(b[l]))
					r = uint64(p) + cv
					if (p < 0) == (int64(cv) < 0) && (int64(r) < 0) != (p < 0) {
						cy = 1
					}
					return r, cy
				}
				return bits.Add64(uint64(a[l])*uint64(b[l]), cv, 0)
			}
			var co uint64
			m := w.exec()
			if bits.OnesCount64(m) < denseLanes {
				for ; m != 0; m &= m - 1 {
					l := bits.TrailingZeros64(m)
					r, cy := mad(l)
					lo[l], hi[l] = uint32(r), uint32(r>>32)
					co |= cy << l
				}
				w.sset64(in.Opnd[fSDst], co)
				return nil
			}
			// Dense: every lane, each one's sources read before its results are written (the
			// destination may be a source), in place for a full EXEC, else merged.
			tl, th := lo, hi
			if m != ^uint64(0) {
				tl, th = &w.tmp[6], &w.tmp[7]
			}
			co = mad64Rows(tl, th, a, b, c.lo, c.hi, signed)
			if tl != lo {
				w.merge(lo, tl, m)
				w.merge(hi, th, m)
			}
			w.sset64(in.Opnd[fSDst], co&m)
			return nil
		}
	}
	def(OpVMadU64U32, mad64(false))
	def(OpVMadI64I32, mad64(true))

	def(OpVCndmaskB32, func(w *wave, in *Inst) error {
		if err := w.checkExt(in); err != nil {
			return err
		}
		a, err := w.vsrc(in, in.Opnd[fSrc0], k32, 0)
		if err != nil {
			return err
		}
		b, err := w.vsrc(in, in.Opnd[fSrc1], k32, 1)
		if err != nil {
			return err
		}
		mask := w.vcc()
		if in.Fmt == FmtVOP3 {
			if mask, err = w.scalar(in, in.Opnd[fSrc2], k64i); err != nil {
				return err
			}
		}
		dst, err := w.vdst(in.Opnd[fDst], 1)
		if err != nil {
			return err
		}
		// VOP3 abs/neg apply to the selected source as to an f32 (sign bit), as LLVM uses them:
		// ocml's cosf selects -sin with v_cndmask_b32_e64 v, -v, v, vcc.
		for m := w.exec(); m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			v := modBits(a[l], in, 0, 0x80000000)
			if mask>>l&1 != 0 {
				v = modBits(b[l], in, 1, 0x80000000)
			}
			dst[l] = v
		}
		return nil
	})
}

// carryE32Full is a carry op's VOP2 (e32) form under a full EXEC with register rows b (src1) and d
// (dst): src0 read as on the general path (after src1, before the destination: only src0 can fail),
// every lane computed in place (carryKern), VCC the carry-in and the carry-out.
func carryE32Full(w *wave, in *Inst, b, d *[lanes]uint32, cin, sub, rev bool) error {
	var a lane32
	if a.r = w.vreg(in.Opnd[fSrc0]); a.r == nil {
		var err error
		if a, err = w.src32(in, in.Opnd[fSrc0], k32); err != nil {
			return err
		}
	}
	x := lane32{r: b}
	if rev {
		a, x = x, a
	}
	var ci uint64
	if cin {
		ci = w.vcc()
	}
	var co uint64
	if sub {
		co = ^carryKern(d, a, x, ^ci, ^uint32(0)) // as carryDense
	} else {
		co = carryKern(d, a, x, ci, 0)
	}
	w.s[opVCCLo], w.s[opVCCHi] = uint32(co), uint32(co>>32)
	return nil
}

// mad64Rows is v_mad_u64_u32/v_mad_i64_i32's dense loop: every lane of a*b + c (c as a row pair)
// into (tl, th), each lane's sources read before its results are written, the carry-outs (unsigned:
// of the 64-bit sum; signed: its overflow) returned by lane. The rows are sliced once (no nil checks
// per lane).
func mad64Rows(tl, th, a, b, clo, chi *[lanes]uint32, signed bool) (co uint64) {
	if simd {
		if signed {
			return mad64iAVX2(tl, th, a, b, clo, chi)
		}
		return mad64uAVX2(tl, th, a, b, clo, chi)
	}
	tls, ths, as, bs, cls, chs := tl[:], th[:], a[:], b[:], clo[:], chi[:]
	if signed {
		for l := range tls {
			cv := uint64(cls[l]) | uint64(chs[l])<<32
			p := int64(int32(as[l])) * int64(int32(bs[l]))
			r := uint64(p) + cv
			tls[l], ths[l] = uint32(r), uint32(r>>32)
			if (p < 0) == (int64(cv) < 0) && (int64(r) < 0) != (p < 0) { // signed overflow
				co |= 1 << l
			}
		}
		return co
	}
	for l := range tls {
		cv := uint64(cls[l]) | uint64(chs[l])<<32
		r := uint64(as[l])*uint64(bs[l]) + cv
		tls[l], ths[l] = uint32(r), uint32(r>>32)
		if r < cv { // carry-out of the 64-bit sum
			co |= 1 << l
		}
	}
	return co
}

// carryOne is a carry op (vopCarryOps' carry) on the one active lane l: its operands read for that
// lane only, in the order of the general path (sources, destination, carry-in).
func carryOne(w *wave, in *Inst, cin, sub, rev bool, l int) error {
	var err error
	a, ok := w.lane1Reg(in.Opnd[fSrc0], l)
	if !ok {
		if a, err = w.lane1(in, in.Opnd[fSrc0], tU32, l); err != nil {
			return err
		}
	}
	b, ok := w.lane1Reg(in.Opnd[fSrc1], l)
	if !ok {
		if b, err = w.lane1(in, in.Opnd[fSrc1], tU32, l); err != nil {
			return err
		}
	}
	if rev {
		a, b = b, a
	}
	dst, sd, ci, err := carryOperands(w, in, cin)
	if err != nil {
		return err
	}
	var r, c uint32
	if sub {
		r, c = bits.Sub32(a, b, uint32(ci>>l&1))
	} else {
		r, c = bits.Add32(a, b, uint32(ci>>l&1))
	}
	dst[l&(lanes-1)] = r
	w.sset64(sd, uint64(c)<<l)
	return nil
}

// carryOperands is what a carry op uses besides its sources, read after them: the destination
// row, the carry-out SGPR pair (VCC for e32, sdst for VOP3b) and the carry-in mask (VCC, or src2
// of VOP3b) when cin.
func carryOperands(w *wave, in *Inst, cin bool) (dst *[lanes]uint32, sd uint16, ci uint64, err error) {
	if dst = w.vreg(in.Opnd[fDst]); dst == nil {
		if dst, err = w.vdst(in.Opnd[fDst], 1); err != nil {
			return nil, 0, 0, err
		}
	}
	sd = uint16(opVCCLo)
	if in.Fmt == FmtVOP3 {
		sd = in.Opnd[fSDst]
		if cin {
			ci, err = w.scalar(in, in.Opnd[fSrc2], k64i)
		}
	} else if cin {
		ci = w.vcc()
	}
	return dst, sd, ci, err
}

// satU32 is V_ADD_U32/V_SUB_U32/V_SUBREV_U32: plain wraps; with VOP3 clamp the unsigned result
// saturates to [0, 0xffffffff] (sat), as LLVM's 64-bit ctlz lowering relies on:
// v_add_u32_e64 v, ffbh(lo), 32 clamp keeps ffbh's -1 for a zero low half.
func satU32(plain execFn, sat func(a, b uint32) uint32) execFn {
	return func(w *wave, in *Inst) error {
		if !in.Clamp {
			return plain(w, in)
		}
		in2 := *in
		in2.Clamp = false
		return v32(tU32, 2, func(a, b, _ uint32) uint32 { return sat(a, b) })(w, &in2)
	}
}

// carryDense is a carry op over many active lanes: every lane computed, eight at a time
// (carryKern); a full EXEC writes the destination directly (each lane's sources are read before its
// result is written, so a destination that is also a source is fine), else the active lanes are
// merged. It returns the carry-outs of the active lanes. (Its own function: the sparse path's frame
// stays small.)
func carryDense(w *wave, a, b lane32, dst *[lanes]uint32, ci, m uint64, sub bool) uint64 {
	t := dst
	if m != ^uint64(0) {
		t = &w.tmp[7]
	}
	if a.r == nil && b.r == nil {
		a.r = w.row(a, 0)
	}
	var co uint64
	if sub {
		// a - b - borrow = a + ^b + (1 - borrow): the borrow-out is the missing carry-out.
		co = ^carryKern(t, a, b, ^ci, ^uint32(0))
	} else {
		co = carryKern(t, a, b, ci, 0)
	}
	if t != dst {
		w.merge(dst, t, m)
	}
	return co & m
}

// carryKern computes d = a + (b ^ x) + carry-in bit l of ci for all 64 lanes and returns the
// carry-outs by lane. At least one of a and b is a register row; a constant is not broadcast.
// Eight lanes per round with constant shifts, two lanes at a time: both results stored and their
// carry-outs (bit 32 of each 64-bit sum, nothing above it) folded as lo + 2*hi (one LEA), the pairs
// then as p01 + 4*p23 and q + 16*q': no variable shift per lane, and few sums live at once (eight
// were spilled).
func carryKern(d *[lanes]uint32, a, b lane32, ci uint64, x uint32) (co uint64) {
	if simd { // simd_amd64.s: the same sums and carry-outs, eight lanes per AVX2 instruction
		switch {
		case a.r != nil && b.r != nil:
			return carryRowsAVX2(d, b.r, a.r, x, ci)
		case b.r == nil:
			return carryConstAVX2(d, a.r, 0, b.c^x, ci)
		}
		return carryConstAVX2(d, b.r, x, a.c, ci)
	}
	return carryKernGo(d, a, b, ci, x)
}

// carryKernGo is carryKern's Go loop.
func carryKernGo(d *[lanes]uint32, a, b lane32, ci uint64, x uint32) (co uint64) {
	ds := d[:] // slices of the rows: one nil check each, not one per lane
	if a.r != nil && b.r != nil {
		ks, rs := a.r[:], b.r[:] // rs ^ x + ks[l]
		for g := 0; g < lanes; g += 8 {
			r, q, o := (*[8]uint32)(rs[g:]), (*[8]uint32)(ks[g:]), (*[8]uint32)(ds[g:]) // one bounds check each
			c := ci >> g
			s0, s1 := uint64(r[0]^x)+uint64(q[0])+c&1, uint64(r[1]^x)+uint64(q[1])+c>>1&1
			o[0], o[1] = uint32(s0), uint32(s1)
			p0 := s0>>32 + s1>>32*2
			s2, s3 := uint64(r[2]^x)+uint64(q[2])+c>>2&1, uint64(r[3]^x)+uint64(q[3])+c>>3&1
			o[2], o[3] = uint32(s2), uint32(s3)
			p0 += (s2>>32 + s3>>32*2) * 4
			s4, s5 := uint64(r[4]^x)+uint64(q[4])+c>>4&1, uint64(r[5]^x)+uint64(q[5])+c>>5&1
			o[4], o[5] = uint32(s4), uint32(s5)
			p1 := s4>>32 + s5>>32*2
			s6, s7 := uint64(r[6]^x)+uint64(q[6])+c>>6&1, uint64(r[7]^x)+uint64(q[7])+c>>7&1
			o[6], o[7] = uint32(s6), uint32(s7)
			p1 += (s6>>32 + s7>>32*2) * 4
			co |= (p0 + p1*16) << g
		}
		return co
	}
	var rs []uint32 // rs ^ xr + k
	var xr uint32
	var k uint64
	if b.r == nil {
		rs, k = a.r[:], uint64(b.c^x)
	} else {
		rs, xr, k = b.r[:], x, uint64(a.c)
	}
	if ci == 0 { // no carry-in (v_add_co_u32 and the like): the same without its terms
		for g := 0; g < lanes; g += 8 {
			r, o := (*[8]uint32)(rs[g:]), (*[8]uint32)(ds[g:])
			s0, s1 := uint64(r[0]^xr)+k, uint64(r[1]^xr)+k
			o[0], o[1] = uint32(s0), uint32(s1)
			p0 := s0>>32 + s1>>32*2
			s2, s3 := uint64(r[2]^xr)+k, uint64(r[3]^xr)+k
			o[2], o[3] = uint32(s2), uint32(s3)
			p0 += (s2>>32 + s3>>32*2) * 4
			s4, s5 := uint64(r[4]^xr)+k, uint64(r[5]^xr)+k
			o[4], o[5] = uint32(s4), uint32(s5)
			p1 := s4>>32 + s5>>32*2
			s6, s7 := uint64(r[6]^xr)+k, uint64(r[7]^xr)+k
			o[6], o[7] = uint32(s6), uint32(s7)
			p1 += (s6>>32 + s7>>32*2) * 4
			co |= (p0 + p1*16) << g
		}
		return co
	}
	for g := 0; g < lanes; g += 8 {
		r, o := (*[8]uint32)(rs[g:]), (*[8]uint32)(ds[g:])
		c := ci >> g
		s0, s1 := uint64(r[0]^xr)+k+c&1, uint64(r[1]^xr)+k+c>>1&1
		o[0], o[1] = uint32(s0), uint32(s1)
		p0 := s0>>32 + s1>>32*2
		s2, s3 := uint64(r[2]^xr)+k+c>>2&1, uint64(r[3]^xr)+k+c>>3&1
		o[2], o[3] = uint32(s2), uint32(s3)
		p0 += (s2>>32 + s3>>32*2) * 4
		s4, s5 := uint64(r[4]^xr)+k+c>>4&1, uint64(r[5]^xr)+k+c>>5&1
		o[4], o[5] = uint32(s4), uint32(s5)
		p1 := s4>>32 + s5>>32*2
		s6, s7 := uint64(r[6]^xr)+k+c>>6&1, uint64(r[7]^xr)+k+c>>7&1
		o[6], o[7] = uint32(s6), uint32(s7)
		p1 += (s6>>32 + s7>>32*2) * 4
		co |= (p0 + p1*16) << g
	}
	return co
}

// vopPkF32Ops registers the packed f32 and 32-bit VOP3P operations.
func vopPkF32Ops() {
	// packed math (VOP3P)
	def(OpVPkFmaF32, pk32(3, fma32))
	def(OpVPkMulF32, pk32(2, func(a, b, _ uint32) uint32 { return u32(f32(a) * f32(b)) }))
	def(OpVPkAddF32, pk32(2, func(a, b, _ uint32) uint32 { return u32(f32(a) + f32(b)) }))
	// The 16-bit packed (VOP3P) and binary16 operations are in valu16.go.
}
