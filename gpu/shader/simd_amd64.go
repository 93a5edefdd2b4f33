//go:build amd64 && !purego

package shader

import "golang.org/x/sys/cpu"

// simd is whether the AVX2 lane kernels of simd_amd64.s run (the host has AVX2 and FMA3; Go never
// sets MXCSR's FTZ/DAZ, so their f32 arithmetic is IEEE's with subnormals, as the Go loops').
// Tests turn it off to compare both paths.
var simd = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// fmaAVX2 is fmaKern on AVX2/FMA3 (VFMADD231PS: one rounding, as fma32): all 64 results are
// computed in registers and stored only when none is NaN (fma32 gives NaN payloads in a's, b's, c's
// order, which VFMADD's choice of operand does not follow); it returns whether it stored them.
//
//go:noescape
func fmaAVX2(d, a, b, c *[lanes]uint32) bool

// carryRowsAVX2 is carryKern with two register rows: d = (r ^ x) + q + carry-in bit l of ci for
// every lane, eight at a time; it returns the carry-outs by lane.
//
//go:noescape
func carryRowsAVX2(d, r, q *[lanes]uint32, x uint32, ci uint64) uint64

// carryConstAVX2 is carryRowsAVX2 with q a constant k in every lane.
//
//go:noescape
func carryConstAVX2(d, r *[lanes]uint32, x, k uint32, ci uint64) uint64

// addF32AVX2, subF32AVX2 and mulF32AVX2 are v_add_f32's, v_sub_f32's and v_mul_f32's lane loops
// (VADDPS, VSUBPS, VMULPS: IEEE round to nearest, subnormals kept, as Go's float32 arithmetic),
// storing the 64 results only when none is NaN (the Go loop then runs: NaN payloads as Go's); they
// return whether they stored them.
//
//go:noescape
func addF32AVX2(d, a, b *[lanes]uint32) bool

//go:noescape
func subF32AVX2(d, a, b *[lanes]uint32) bool

//go:noescape
func mulF32AVX2(d, a, b *[lanes]uint32) bool

// cmpPairGtAVX2 and cmpPairLtAVX2 are cmpPairOne: bit l set when the key lo[l] | hi[l]<<32,
// XORed with bias, is greater (less) than y as signed 64-bit values (VPCMPGTQ); callers pass
// bias = flip ^ 1<<63 and y ^ 1<<63 for cmpPairOne's unsigned comparison of flipped keys.
//
//go:noescape
func cmpPairGtAVX2(lo, hi *[lanes]uint32, bias, y uint64) uint64

//go:noescape
func cmpPairLtAVX2(lo, hi *[lanes]uint32, bias, y uint64) uint64

// shl64AVX2, shr64AVX2 and sar64AVX2 are shiftRows' loops for v_lshlrev_b64, v_lshrrev_b64 and
// v_ashrrev_i64 (s < 64): the 64-bit value of each lane as its two dwords, eight lanes a round.
//
//go:noescape
func shl64AVX2(dlo, dhi, lo, hi *[lanes]uint32, s uint32)

//go:noescape
func shr64AVX2(dlo, dhi, lo, hi *[lanes]uint32, s uint32)

//go:noescape
func sar64AVX2(dlo, dhi, lo, hi *[lanes]uint32, s uint32)

// mad64uAVX2 and mad64iAVX2 are mad64Rows (unsigned, signed): VPMULUDQ/VPMULDQ on the even and
// the odd lanes, the 64-bit sums and their carry-outs (overflows), eight lanes a round.
//
//go:noescape
func mad64uAVX2(tl, th, a, b, clo, chi *[lanes]uint32) uint64

//go:noescape
func mad64iAVX2(tl, th, a, b, clo, chi *[lanes]uint32) uint64

// seqLoAVX2 reports whether lo[l] = x0 + l*sz (mod 2^32) for every lane; seqLoHiAVX2 also whether
// hi[l] = h: globalBatch's test that a full wave's addresses are one contiguous run.
//
//go:noescape
func seqLoAVX2(lo *[lanes]uint32, x0, sz uint32) bool

//go:noescape
func seqLoHiAVX2(lo, hi *[lanes]uint32, x0, sz, h uint32) bool

// fillAVX2 is fillRow: v in every lane of d.
//
//go:noescape
func fillAVX2(d *[lanes]uint32, v uint32)

// cmp32RowsAVX2 and cmp32ConstAVX2 are cmpDense's 32-bit integer compares (register rows a and b,
// or a and the constant y): the lanes where a is below and above, as signed dwords after an XOR
// with bias (1<<31 for an unsigned compare, 0 for a signed one).
//
//go:noescape
func cmp32RowsAVX2(a, b *[lanes]uint32, bias uint32) (lt, gt uint64)

//go:noescape
func cmp32ConstAVX2(a *[lanes]uint32, y, bias uint32) (lt, gt uint64)

// The two-source 32-bit integer lane loops (v32k kernels of vopIntOps: d, a = src0, b = src1), eight
// lanes per instruction: v_add_u32, v_sub_u32, v_subrev_u32, v_mul_lo_u32, v_lshlrev_b32,
// v_lshrrev_b32, v_ashrrev_i32 (counts masked to 5 bits as the Go loops do), v_and/or/xor_b32.

//go:noescape
func addU32AVX2(d, a, b *[lanes]uint32)

//go:noescape
func subU32AVX2(d, a, b *[lanes]uint32)

//go:noescape
func subrevU32AVX2(d, a, b *[lanes]uint32)

//go:noescape
func mulLoU32AVX2(d, a, b *[lanes]uint32)

//go:noescape
func lshlrevB32AVX2(d, a, b *[lanes]uint32)

//go:noescape
func lshrrevB32AVX2(d, a, b *[lanes]uint32)

//go:noescape
func ashrrevI32AVX2(d, a, b *[lanes]uint32)

//go:noescape
func andB32AVX2(d, a, b *[lanes]uint32)

//go:noescape
func orB32AVX2(d, a, b *[lanes]uint32)

//go:noescape
func xorB32AVX2(d, a, b *[lanes]uint32)
