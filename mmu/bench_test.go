package mmu

import (
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkMap1GiB maps and unmaps 1 GiB: system memory in 4 KiB PTEs (262144 entries, as for
// GTT and userptr BOs) and VRAM in 2 MiB PDB0 leaves (512 entries). The floor, in the same run, is
// storing as many 8-byte entries into a flat array: the cost of the PTE writes alone.
func BenchmarkMap1GiB(b *testing.B) {
	const size = 1 << 30
	for _, tc := range []struct {
		name    string
		entries int
		alloc   func(ph *Phys) (uint64, error)
	}{
		{"4KiB", size >> 12, func(ph *Phys) (uint64, error) {
			return ph.AllocSystem(size, Backing{Remote: &fakeRemote{}})
		}},
		{"2MiB", size >> 21, func(ph *Phys) (uint64, error) {
			return ph.AllocVRAM(0, size, Backing{Mem: make([]byte, size)}) // never touched: no RSS
		}},
	} {
		b.Run(tc.name+"/floor_entry_stores", func(b *testing.B) {
			t := make([]uint64, tc.entries)
			for i := 0; i < b.N; i++ {
				for k := range t {
					t[k] = uint64(k)<<12 | 0x61
				}
			}
		})
		b.Run(tc.name+"/map_unmap", func(b *testing.B) {
			ph := NewPhys()
			pa, err := tc.alloc(ph)
			if err != nil {
				b.Fatal(err)
			}
			vm := NewVM(ph, Config{PASID: 1})
			flags := rw
			if tc.name == "4KiB" {
				flags |= PTESystem
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := vm.Map(1<<32, size, pa, flags); err != nil {
					b.Fatal(err)
				}
				if err := vm.Unmap(1<<32, size); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if st := vm.Stats(); st.Tables != 0 {
				b.Fatalf("tables left: %+v", st)
			}
		})
	}
}

// BenchmarkTranslate measures Port accesses: a TLB hit (one page, 8-byte load) and a TLB miss on
// every access (stride of 65 pages over 64 MiB, so the direct-mapped TLB never hits), against a
// plain atomic load from a Go slice as the floor.
func BenchmarkTranslate(b *testing.B) {
	const size = 64 << 20
	ph := NewPhys()
	mem := make([]byte, size)
	pa, err := ph.AllocVRAM(0, size, Backing{Mem: mem})
	if err != nil {
		b.Fatal(err)
	}
	vm := NewVM(ph, Config{PASID: 1})
	if err := vm.Map(1<<32, size, pa, rw); err != nil {
		b.Fatal(err)
	}
	p := vm.NewPort()
	defer p.Close()
	b.Run("floor_atomic_load", func(b *testing.B) {
		w := p64(mem, 0)
		var s uint64
		for i := 0; i < b.N; i++ {
			s += atomic.LoadUint64(w)
		}
		_ = s
	})
	b.Run("tlb_hit", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := p.Load64(1 << 32); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tlb_miss", func(b *testing.B) {
		const pages = size >> 12
		for i := 0; i < b.N; i++ {
			va := uint64(1<<32) + uint64(i*65%pages)<<12
			if _, err := p.Load64(va); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRetryFault services one retry fault per access: every access touches a new page, the
// handler maps it (what svm_range_restore_pages does for a 4 KiB granule) and the access walks
// again. The floor is mapping the same page directly.
func BenchmarkRetryFault(b *testing.B) {
	const size = 256 << 20
	ph := NewPhys()
	mem := make([]byte, size)
	pa, err := ph.AllocVRAM(0, size, Backing{Mem: mem})
	if err != nil {
		b.Fatal(err)
	}
	const base = 1 << 32
	b.Run("floor_map_page", func(b *testing.B) {
		vm := NewVM(ph, Config{PASID: 2})
		for i := 0; i < b.N; i++ {
			off := uint64(i%(size>>12)) << 12
			if off == 0 && i > 0 {
				vm.Unmap(base, size)
			}
			if err := vm.Map(base+off, 4096, pa+off, rw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fault_map_retry", func(b *testing.B) {
		var vm *VM
		handler := func(f *Fault) bool {
			off := f.VA&^pageMask - base
			return vm.Map(base+off, 4096, pa+off, rw) == nil
		}
		vm = NewVM(ph, Config{PASID: 3, Fault: handler, Filter: NewFilter(time.Nanosecond)})
		p := vm.NewPort()
		defer p.Close()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			off := uint64(i%(size>>12)) << 12
			if off == 0 && i > 0 {
				vm.Unmap(base, size)
			}
			if _, err := p.Load64(base + off); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "faults/s")
	})
}
