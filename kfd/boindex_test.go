package kfd

import (
	"math/rand/v2"
	"testing"
)

// TestBOIndexMatchesWalk checks the index's queries against the walks over every BO they
// replaced, on random non-overlapping BOs of three GPUs (some without a VA), mapped on random
// GPUs, inserted and removed in random order.
func TestBOIndexMatchesWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gpus := []uint32{1000, 2000, 3000}
	var ix boIndex
	live := map[*bo]bool{}
	handle := uint64(0)
	overlapsWalk := func(gpu uint32, va, size uint64) bool {
		for b := range live {
			if b.gpu == gpu && b.va != 0 && va < b.va+b.size && b.va < va+size {
				return true
			}
		}
		return false
	}
	mappedWalk := func(start, size uint64) bool {
		for b := range live {
			if len(b.mapped) > 0 && start < b.va+b.size && b.va < start+size {
				return true
			}
		}
		return false
	}
	mappedOnWalk := func(gpu uint32, va, size uint64) bool {
		for b := range live {
			if b.mapped[gpu] && va < b.va+b.size && b.va < va+size {
				return true
			}
		}
		return false
	}
	atWalk := func(gpu uint32, va uint64) *bo {
		for b := range live {
			if b.mapped[gpu] && va >= b.va && va-b.va < b.size {
				return b
			}
		}
		return nil
	}
	addr := func() uint64 { return uint64(r.IntN(4096)) << 12 }
	for step := 0; step < 20000; step++ {
		switch op := r.IntN(10); {
		case op < 4: // allocate, refused on overlap as allocMemory does
			gpu := gpus[r.IntN(len(gpus))]
			va, size := addr(), uint64(1+r.IntN(16))<<12
			if r.IntN(20) == 0 {
				va = 0
			}
			if va != 0 && overlapsWalk(gpu, va, size) {
				if !ix.overlapsOn(gpu, va, size) {
					t.Fatalf("step %d: overlapsOn(%d, %#x, %#x) = false, the walk finds an overlap", step, gpu, va, size)
				}
				continue
			}
			handle++
			b := &bo{gpu: gpu, va: va, size: size, handle: handle, mapped: map[uint32]bool{}}
			for _, g := range gpus { // a GPU's VM refuses a mapping over another (amdgpu_vm_bo_map)
				if r.IntN(2) == 0 && !mappedOnWalk(g, va, size) {
					b.mapped[g] = true
				}
			}
			live[b] = true
			ix.insert(b)
		case op < 6 && len(live) > 0: // free one
			for b := range live {
				delete(live, b)
				ix.remove(b)
				break
			}
		default:
			gpu := gpus[r.IntN(len(gpus))]
			va, size := addr()+uint64(r.IntN(4096)), uint64(r.IntN(64<<10))
			if r.IntN(2) == 0 { // page-aligned: ranges that touch a BO's first or last page exactly
				va, size = addr(), uint64(r.IntN(16))<<12
			}
			if got, want := ix.overlapsOn(gpu, va, size), overlapsWalk(gpu, va, size); got != want {
				t.Fatalf("step %d: overlapsOn(%d, %#x, %#x) = %v, want %v", step, gpu, va, size, got, want)
			}
			if got, want := ix.mappedOverlapping(va, size), mappedWalk(va, size); got != want {
				t.Fatalf("step %d: mappedOverlapping(%#x, %#x) = %v, want %v", step, va, size, got, want)
			}
			if got, want := ix.mappedAt(gpu, va), atWalk(gpu, va); got != want {
				t.Fatalf("step %d: mappedAt(%d, %#x) = %p, want %p", step, gpu, va, got, want)
			}
		}
	}
	for b := range live {
		ix.remove(b)
	}
	if len(ix.byGPU) != 0 || len(ix.noVA) != 0 {
		t.Fatalf("index not empty after every BO was removed: %d trees, %d without VA", len(ix.byGPU), len(ix.noVA))
	}
}
