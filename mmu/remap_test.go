package mmu

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRemapHasNoHole: Remap rewrites valid PTEs in place, so an engine reading the range while it is
// remapped (the SVM restore of a range queues are using, kfd/sharedvm.go) reads the old or the new
// page and never faults, and after Remap returns every read reaches the new page.
func TestRemapHasNoHole(t *testing.T) {
	ph := NewPhys()
	paA, _ := vram(t, ph, 2*pageSize)
	paB, _ := vram(t, ph, 2*pageSize)
	vm := NewVM(ph, Config{PASID: 1})
	const va = 0x400000
	if err := vm.Map(va, 2*pageSize, paA, rw); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p := vm.NewPort()
		defer p.Close()
		b := make([]byte, 8)
		for !stop.Load() {
			if err := p.Read(va+pageSize, b); err != nil {
				t.Errorf("read during remap: %v", err)
				return
			}
			if got := binary.LittleEndian.Uint64(b); got != paA+pageSize && got != paB+pageSize {
				t.Errorf("read %#x: neither page", got)
				return
			}
		}
	}()
	for i := 0; i < 2000; i++ {
		pa := paA
		if i%2 == 0 {
			pa = paB
		}
		if err := vm.Remap(va, 2*pageSize, pa, rw); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	// the last Remap (i = 1999) mapped A; a fresh read sees it
	p := vm.NewPort()
	defer p.Close()
	b := make([]byte, 8)
	if err := p.Read(va, b); err != nil || binary.LittleEndian.Uint64(b) != paA {
		t.Fatalf("after remap: %#x, %v", binary.LittleEndian.Uint64(b), err)
	}
	// Remap over a hole maps; bad arguments are refused as by Map.
	if err := vm.Remap(va+4*pageSize, pageSize, paB, rw); err != nil {
		t.Fatal(err)
	}
	if err := vm.Remap(va+1, pageSize, paB, rw); err == nil {
		t.Fatal("unaligned va accepted")
	}
	if err := vm.Remap(va, pageSize, paB, PTEAddrMask); err == nil {
		t.Fatal("bad flags accepted")
	}
}
