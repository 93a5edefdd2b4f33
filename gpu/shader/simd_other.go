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

func addF32AVX2(d, a, b *[lanes]uint32) bool { panic("shader: no SIMD kernels") }
func subF32AVX2(d, a, b *[lanes]uint32) bool { panic("shader: no SIMD kernels") }
func mulF32AVX2(d, a, b *[lanes]uint32) bool { panic("shader: no SIMD kernels") }

func cmpPairGtAVX2(lo, hi *[lanes]uint32, bias, y uint64) uint64 { panic("shader: no SIMD kernels") }
func cmpPairLtAVX2(lo, hi *[lanes]uint32, bias, y uint64) uint64 { panic("shader: no SIMD kernels") }
func shl64AVX2(dlo, dhi, lo, hi *[lanes]uint32, s uint32)        { panic("shader: no SIMD kernels") }
func shr64AVX2(dlo, dhi, lo, hi *[lanes]uint32, s uint32)        { panic("shader: no SIMD kernels") }
func sar64AVX2(dlo, dhi, lo, hi *[lanes]uint32, s uint32)        { panic("shader: no SIMD kernels") }

func mad64uAVX2(tl, th, a, b, clo, chi *[lanes]uint32) uint64 { panic("shader: no SIMD kernels") }
func mad64iAVX2(tl, th, a, b, clo, chi *[lanes]uint32) uint64 { panic("shader: no SIMD kernels") }

func seqLoAVX2(lo *[lanes]uint32, x0, sz uint32) bool          { panic("shader: no SIMD kernels") }
func seqLoHiAVX2(lo, hi *[lanes]uint32, x0, sz, h uint32) bool { panic("shader: no SIMD kernels") }
func fillAVX2(d *[lanes]uint32, v uint32)                      { panic("shader: no SIMD kernels") }

func cmp32RowsAVX2(a, b *[lanes]uint32, bias uint32) (lt, gt uint64) {
	panic("shader: no SIMD kernels")
}
func cmp32ConstAVX2(a *[lanes]uint32, y, bias uint32) (lt, gt uint64) {
	panic("shader: no SIMD kernels")
}

func addU32AVX2(d, a, b *[lanes]uint32)     { panic("shader: no SIMD kernels") }
func subU32AVX2(d, a, b *[lanes]uint32)     { panic("shader: no SIMD kernels") }
func subrevU32AVX2(d, a, b *[lanes]uint32)  { panic("shader: no SIMD kernels") }
func mulLoU32AVX2(d, a, b *[lanes]uint32)   { panic("shader: no SIMD kernels") }
func lshlrevB32AVX2(d, a, b *[lanes]uint32) { panic("shader: no SIMD kernels") }
func lshrrevB32AVX2(d, a, b *[lanes]uint32) { panic("shader: no SIMD kernels") }
func ashrrevI32AVX2(d, a, b *[lanes]uint32) { panic("shader: no SIMD kernels") }
func andB32AVX2(d, a, b *[lanes]uint32)     { panic("shader: no SIMD kernels") }
func orB32AVX2(d, a, b *[lanes]uint32)      { panic("shader: no SIMD kernels") }
func xorB32AVX2(d, a, b *[lanes]uint32)     { panic("shader: no SIMD kernels") }
