//go:build !amd64 || purego

package shader

// simd is false without simd_amd64.s: the Go lane loops run.
var simd = false

func fmaAVX2(d, a, b, c *[lanes]uint32) bool { panic("shader: no SIMD kernels") }
func carryRowsAVX2(d, r, q *[lanes]uint32, x uint32, ci uint64) uint64 {
	panic("shader: no SIMD kernels")
}
func carryConstAVX2(d, r *[lanes]uint32, x, k uint32, ci uint64) uint64 {
	panic("shader: no SIMD kernels")
}
