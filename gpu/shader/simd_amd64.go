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
