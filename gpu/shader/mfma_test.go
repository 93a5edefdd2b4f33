package shader

import (
	"math"
	"testing"
)

// mmaRef is D_b = A_b·B_b + C_b for every block, A (M×K), B (K×N), C (M×N) row-major per block.
func mmaRef(blocks, m, n, k int, a, b, c func(blk, r, s int) float64) []float64 {
	d := make([]float64, blocks*m*n)
	for blk := 0; blk < blocks; blk++ {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				acc := c(blk, i, j)
				for x := 0; x < k; x++ {
					acc += a(blk, i, x) * b(blk, x, j)
				}
				d[(blk*m+i)*n+j] = acc
			}
		}
	}
	return d
}

// small returns exactly representable values (multiples of 1/4 in [-4, 4)) so that every sum below is
// exact in f16, bf16, f32 and f64, and the results do not depend on the accumulation order.
func small(i, salt int) float64 { return float64((i*salt+salt/3)%32-16) / 4 }

// TestCorpusMFMA: clang-14 kernels around __builtin_amdgcn_mfma_* (f16 32x32x8, i8 16x16x16, f64
// 16x16x4, bf16_1k 16x16x4 with 4 blocks, f32 4x4x1 with 16 blocks, the last also with cbsz:2 abid:1
// blgp:3), operands in AGPRs loaded and stored directly by global loads/stores, checked bit-exactly
// against a plain matrix product.
func TestCorpusMFMA(t *testing.T) {
	l := load(t)
	one := [3]uint32{64, 1, 1}
	wave := [3]uint16{64, 1, 1}

	t.Run("f32_32x32x8f16", func(t *testing.T) {
		a, b := make([]uint16, 32*8), make([]uint16, 8*32)
		c := make([]float32, 32*32)
		for i := range a {
			a[i], b[i] = f64to16(small(i, 7)), f64to16(small(i, 11))
		}
		for i := range c {
			c[i] = float32(small(i, 5))
		}
		pa, pb, pc, pd := l.put(a), l.put(b), l.put(c), l.put(make([]float32, 32*32))
		l.run(t, "mfma_f16", one, wave, args(pa, pb, pc, pd))
		d := make([]float32, 32*32)
		l.get(pd, d)
		want := mmaRef(1, 32, 32, 8,
			func(_, i, k int) float64 { return float64(f16to32(a[i*8+k])) },
			func(_, k, j int) float64 { return float64(f16to32(b[k*32+j])) },
			func(_, i, j int) float64 { return float64(c[i*32+j]) })
		for i := range d {
			if float64(d[i]) != want[i] {
				t.Fatalf("D[%d][%d] = %v, want %v", i/32, i%32, d[i], want[i])
			}
		}
	})

	t.Run("i32_16x16x16i8", func(t *testing.T) {
		a, b := make([]int8, 16*16), make([]int8, 16*16)
		c := make([]int32, 16*16)
		for i := range a {
			a[i], b[i] = int8(i*37+11), int8(i*91-5)
			c[i] = int32(i*1000 - 70000)
		}
		pa, pb, pc, pd := l.put(a), l.put(b), l.put(c), l.put(make([]int32, 256))
		l.run(t, "mfma_i8", one, wave, args(pa, pb, pc, pd))
		d := make([]int32, 256)
		l.get(pd, d)
		want := mmaRef(1, 16, 16, 16,
			func(_, i, k int) float64 { return float64(a[i*16+k]) },
			func(_, k, j int) float64 { return float64(b[k*16+j]) },
			func(_, i, j int) float64 { return float64(c[i*16+j]) })
		for i := range d {
			if float64(d[i]) != want[i] {
				t.Fatalf("D[%d][%d] = %d, want %v", i/16, i%16, d[i], want[i])
			}
		}
	})

	t.Run("f64_16x16x4f64", func(t *testing.T) {
		a, b, c := make([]float64, 16*4), make([]float64, 4*16), make([]float64, 16*16)
		for i := range a {
			a[i], b[i] = small(i, 13)+1.0/1024, small(i, 3)
		}
		for i := range c {
			c[i] = small(i, 17) * 1e6
		}
		pa, pb, pc, pd := l.put(a), l.put(b), l.put(c), l.put(make([]float64, 256))
		l.run(t, "mfma_f64", one, wave, args(pa, pb, pc, pd))
		d := make([]float64, 256)
		l.get(pd, d)
		want := mmaRef(1, 16, 16, 4,
			func(_, i, k int) float64 { return a[i*4+k] },
			func(_, k, j int) float64 { return b[k*16+j] },
			func(_, i, j int) float64 { return c[i*16+j] })
		for i := range d {
			if d[i] != want[i] {
				t.Fatalf("D[%d][%d] = %v, want %v", i/16, i%16, d[i], want[i])
			}
		}
	})

	t.Run("f32_16x16x4bf16_1k", func(t *testing.T) {
		const blocks = 4
		bf := func(x float64) uint16 { return uint16(math.Float32bits(float32(x)) >> 16) }
		unbf := func(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }
		a, b := make([]uint16, blocks*16*4), make([]uint16, blocks*4*16)
		c := make([]float32, blocks*16*16)
		for i := range a {
			a[i], b[i] = bf(small(i, 19)), bf(small(i, 23))
		}
		for i := range c {
			c[i] = float32(small(i, 29))
		}
		pa, pb, pc, pd := l.put(a), l.put(b), l.put(c), l.put(make([]float32, len(c)))
		l.run(t, "mfma_bf16", one, wave, args(pa, pb, pc, pd))
		d := make([]float32, len(c))
		l.get(pd, d)
		want := mmaRef(blocks, 16, 16, 4,
			func(blk, i, k int) float64 { return unbf(a[(blk*16+i)*4+k]) },
			func(blk, k, j int) float64 { return unbf(b[(blk*4+k)*16+j]) },
			func(blk, i, j int) float64 { return float64(c[(blk*16+i)*16+j]) })
		for i := range d {
			if float64(d[i]) != want[i] {
				t.Fatalf("block %d D[%d][%d] = %v, want %v", i/256, i/16%16, i%16, d[i], want[i])
			}
		}
	})

	t.Run("f32_4x4x1f32_cbsz_abid_blgp", func(t *testing.T) {
		const blocks = 16
		a, b, c := make([]float32, blocks*4), make([]float32, blocks*4), make([]float32, blocks*16)
		for i := range a {
			a[i], b[i] = float32(small(i, 7)), float32(small(i, 9))
		}
		for i := range c {
			c[i] = float32(small(i, 31))
		}
		pa, pb, pc, pd := l.put(a), l.put(b), l.put(c), l.put(make([]float32, 2*len(c)))
		l.run(t, "mfma_4x4", one, wave, args(pa, pb, pc, pd))
		d := make([]float32, 2*len(c))
		l.get(pd, d)
		cf := func(blk, i, j int) float64 { return float64(c[(blk*4+i)*4+j]) }
		plain := mmaRef(blocks, 4, 4, 1,
			func(blk, i, _ int) float64 { return float64(a[blk*4+i]) },
			func(blk, _, j int) float64 { return float64(b[blk*4+j]) }, cf)
		// cbsz:2 abid:1: each group of 4 blocks takes A from its second block. blgp:3: B comes from the
		// lanes 16 above (rotated), which for 4x4x1 (lane = j + 4·block) is block+4 mod 16.
		mod := mmaRef(blocks, 4, 4, 1,
			func(blk, i, _ int) float64 { return float64(a[(blk/4*4+1)*4+i]) },
			func(blk, _, j int) float64 { return float64(b[(blk+4)%16*4+j]) }, cf)
		for i := range plain {
			if float64(d[i]) != plain[i] {
				t.Fatalf("block %d D[%d][%d] = %v, want %v", i/16, i/4%4, i%4, d[i], plain[i])
			}
			if float64(d[256+i]) != mod[i] {
				t.Fatalf("modifiers: block %d D[%d][%d] = %v, want %v", i/16, i/4%4, i%4, d[256+i], mod[i])
			}
		}
	})
}

// TestMFMAShapes: every gfx90a MFMA opcode of the generated table gets a shape whose register counts
// agree with LLVM's operand widths (newMFMA fails otherwise), and the element -> (register, lane)
// mapping is a bijection over the result registers.
func TestMFMAShapes(t *testing.T) {
	n := 0
	for _, info := range tabVOP3P {
		if !mfmaName.MatchString(info.Name) {
			continue
		}
		info := info
		op, err := newMFMA(&info)
		if err != nil {
			t.Fatal(err)
		}
		n++
		slots := op.cRegs
		if op.out == 'd' {
			slots /= 2
		}
		seen := map[[2]int]bool{}
		for b := 0; b < op.blocks; b++ {
			for i := 0; i < op.m; i++ {
				for j := 0; j < op.n; j++ {
					s, l := op.outPos(i, j, b)
					if s < 0 || s >= slots || l < 0 || l >= 64 || seen[[2]int{s, l}] {
						t.Fatalf("%s: D[%d][%d] block %d -> slot %d lane %d (taken or out of range)", info.Name, i, j, b, s, l)
					}
					seen[[2]int{s, l}] = true
				}
			}
		}
		if len(seen) != slots*64 {
			t.Errorf("%s: %d of %d result slots used", info.Name, len(seen), slots*64)
		}
		if opTab[info.Op].exec == nil {
			t.Errorf("%s: not registered", info.Name)
		}
	}
	if n != 27 {
		t.Errorf("%d MFMA opcodes, want gfx90a's 27", n)
	}
}
