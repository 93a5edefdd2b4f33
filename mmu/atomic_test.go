package mmu

import (
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// TestAtomicAgainstCPU: Port.Atomic on a Mem backing is one hardware read-modify-write of the backing
// word (a compare-and-swap loop), so increments from several engines' Ports and from a host thread
// using LOCK-prefixed atomics on the same memory all land (issue 17's KFDQMTest.Atomics: a CPU thread
// and a kernel incrementing one word). 4- and 8-byte words; race-detector clean (scripts/test.sh runs
// package mmu with -race).
func TestAtomicAgainstCPU(t *testing.T) {
	ph := NewPhys()
	pa, mem := vram(t, ph, 4096)
	vm := NewVM(ph, Config{PASID: 1})
	const va = 0x200000
	if err := vm.Map(va, 4096, pa, rw); err != nil {
		t.Fatal(err)
	}
	w32 := (*uint32)(unsafe.Pointer(&mem[0x40]))
	w64 := (*uint64)(unsafe.Pointer(&mem[0x80]))
	atomic.StoreUint32(w32, 0)
	atomic.StoreUint64(w64, 0)
	const engines, per, cpuAdds = 4, 20000, 50000
	var wg sync.WaitGroup
	for e := 0; e < engines; e++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := vm.NewPort()
			defer p.Close()
			for i := 0; i < per; i++ {
				if _, err := p.Atomic(va+0x40, 4, func(o uint64) uint64 { return o + 1 }); err != nil {
					t.Error(err)
					return
				}
				if _, err := p.Atomic(va+0x80, 8, func(o uint64) uint64 { return o + 3 }); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // the host CPU
		defer wg.Done()
		for i := 0; i < cpuAdds; i++ {
			atomic.AddUint32(w32, 1)
			atomic.AddUint64(w64, 5)
		}
	}()
	wg.Wait()
	if got, want := atomic.LoadUint32(w32), uint32(engines*per+cpuAdds); got != want {
		t.Errorf("32-bit word = %d, want %d", got, want)
	}
	if got, want := atomic.LoadUint64(w64), uint64(3*engines*per+5*cpuAdds); got != want {
		t.Errorf("64-bit word = %d, want %d", got, want)
	}
}
