package mmu

import (
	"encoding/binary"
	"testing"
)

// readPA reads the 8-byte word at va through p: vram fills every word with its own physical
// address, so the value says which page the translation reached.
func readPA(t *testing.T, p *Port, va uint64) uint64 {
	t.Helper()
	var b [8]byte
	if err := p.Read(va, b[:]); err != nil {
		t.Fatalf("read %#x: %v", va, err)
	}
	return binary.LittleEndian.Uint64(b[:])
}

// TestTLBLineFill: a Port's page walk loads the valid entries of the walked PTE's 64-byte line
// (8 pages) with it, each translated to its own page (in its own backing segment), and nothing
// for a hole; a 2 MiB leaf fills the line's pages of the leaf.
func TestTLBLineFill(t *testing.T) {
	ph := NewPhys()
	paA, _ := vram(t, ph, 8*pageSize)
	paB, _ := vram(t, ph, 8*pageSize)
	vm := NewVM(ph, Config{PASID: 1})
	const va = 0x800000
	// pages 0-2 and 6-7 on A, 3 a hole, 4-5 on B (another segment)
	for _, m := range []struct{ page, n, pa uint64 }{{0, 3, paA}, {4, 2, paB + 4*pageSize}, {6, 2, paA + 6*pageSize}} {
		if err := vm.Map(va+m.page*pageSize, m.n*pageSize, m.pa, rw); err != nil {
			t.Fatal(err)
		}
	}
	p := vm.NewPort()
	defer p.Close()
	want := map[uint64]uint64{0: paA, 1: paA + pageSize, 2: paA + 2*pageSize, 4: paB + 4*pageSize,
		5: paB + 5*pageSize, 6: paA + 6*pageSize, 7: paA + 7*pageSize}
	for _, pg := range []uint64{0, 1, 2, 4, 5, 6, 7} {
		if got := readPA(t, p, va+pg*pageSize+8); got != want[pg]+8 {
			t.Errorf("page %d: reached %#x, want %#x", pg, got, want[pg]+8)
		}
	}
	if n := vm.Stats().TLBMisses; n != 1 {
		t.Errorf("%d page walks for the 7 valid pages of one PTE line, want 1", n)
	}
	var b [8]byte
	if err := p.Read(va+3*pageSize, b[:]); faultKindOf(t, err) != FaultNotPresent {
		t.Errorf("the hole: %v", err)
	}

	// A 2 MiB leaf: one walk for the 8 pages of the line, the ninth page walks again.
	paH, _ := vram(t, ph, hugeSize)
	const vh = 0x40000000
	if err := vm.Map(vh, hugeSize, paH, rw); err != nil {
		t.Fatal(err)
	}
	if vm.Stats().PDEs2M == 0 {
		t.Fatal("no 2 MiB leaf")
	}
	before := vm.Stats().TLBMisses
	for pg := uint64(0); pg < 8; pg++ {
		if got := readPA(t, p, vh+pg*pageSize); got != paH+pg*pageSize {
			t.Errorf("2 MiB leaf page %d: reached %#x, want %#x", pg, got, paH+pg*pageSize)
		}
	}
	if n := vm.Stats().TLBMisses - before; n != 1 {
		t.Errorf("%d page walks for 8 pages of a 2 MiB leaf, want 1", n)
	}
	if got := readPA(t, p, vh+8*pageSize); got != paH+8*pageSize {
		t.Errorf("2 MiB leaf page 8: reached %#x", got)
	}
	if n := vm.Stats().TLBMisses - before; n != 2 {
		t.Errorf("%d page walks after the next line, want 2", n)
	}
}

// TestTLBStrides: pages any distance apart (the arrays a vector add streams through) stay in the
// TLB together, so a loop over them walks each page once, not on every access; and a hole of a
// loaded line mapped later (Remap over a hole invalidates nothing) is walked and then hit.
func TestTLBStrides(t *testing.T) {
	for _, stride := range []uint64{16 << 12, 1040 << 12, 64 << 20, 1 << 30} {
		ph := NewPhys()
		vm := NewVM(ph, Config{PASID: 1})
		const va = 0x10000000
		var pas [3]uint64
		for i := range pas {
			pas[i], _ = vram(t, ph, pageSize)
			if err := vm.Map(va+uint64(i)*stride, pageSize, pas[i], rw); err != nil {
				t.Fatal(err)
			}
		}
		p := vm.NewPort()
		for range 10 {
			for i := range pas {
				if got := readPA(t, p, va+uint64(i)*stride); got != pas[i] {
					t.Fatalf("stride %#x, array %d: reached %#x, want %#x", stride, i, got, pas[i])
				}
			}
		}
		if n := vm.Stats().TLBMisses; n != 3 {
			t.Errorf("stride %#x: %d page walks for 3 pages read 10 times each, want 3", stride, n)
		}
		// The next page of the first line was a hole when the line was loaded.
		pa, _ := vram(t, ph, pageSize)
		if err := vm.Remap(va+pageSize, pageSize, pa, rw); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if got := readPA(t, p, va+pageSize); got != pa {
				t.Fatalf("stride %#x: the hole mapped later: reached %#x, want %#x", stride, got, pa)
			}
		}
		if got := readPA(t, p, va); got != pas[0] {
			t.Fatalf("stride %#x: after the hole: reached %#x", stride, got)
		}
		if n := vm.Stats().TLBMisses; n != 4 {
			t.Errorf("stride %#x: %d page walks after the hole was mapped and read twice, want 4", stride, n)
		}
		p.Close()
	}
}
