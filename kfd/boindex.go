package kfd

import "github.com/google/btree"

// boIndex orders a process's BOs by GPU virtual address, one tree per GPU the BO was allocated
// on, for the address queries of ALLOC (amdgpu_vm_bo_map's conflict check), CREATE_QUEUE
// (kfd_queue_buffer_get) and the SVM ioctls (svm_range_check_vm). They walked every BO of the
// process before, which made allocation quadratic: KFDMemoryTest.MMapLarge registers up to 16384
// userptr BOs, and the walk was half of the daemon's time.
//
// The BOs of one GPU that have a VA never overlap (allocMemory refuses an overlap, as
// amdgpu_vm_bo_map does, and a BO's VA never changes), so of one tree only the last BO starting at
// or below an address can contain it, and the BOs overlapping a range are a run ending there. BOs
// without a VA (doorbell or MMIO BOs before placement) are kept apart and checked one by one.
// Guarded by Process.mu.
type boIndex struct {
	byGPU map[uint32]*btree.BTreeG[boKey]
	noVA  map[*bo]struct{}
}

// boKey orders by VA, then by handle (so a broken invariant never drops a BO from the tree).
type boKey struct {
	va, handle uint64
	b          *bo
}

func boKeyLess(x, y boKey) bool { return x.va < y.va || x.va == y.va && x.handle < y.handle }

func (ix *boIndex) insert(b *bo) {
	if b.va == 0 {
		if ix.noVA == nil {
			ix.noVA = map[*bo]struct{}{}
		}
		ix.noVA[b] = struct{}{}
		return
	}
	if ix.byGPU == nil {
		ix.byGPU = map[uint32]*btree.BTreeG[boKey]{}
	}
	t := ix.byGPU[b.gpu]
	if t == nil {
		t = btree.NewG(16, boKeyLess)
		ix.byGPU[b.gpu] = t
	}
	t.ReplaceOrInsert(boKey{b.va, b.handle, b})
}

func (ix *boIndex) remove(b *bo) {
	if b.va == 0 {
		delete(ix.noVA, b)
		return
	}
	if t := ix.byGPU[b.gpu]; t != nil {
		t.Delete(boKey{b.va, b.handle, b})
		if t.Len() == 0 {
			delete(ix.byGPU, b.gpu)
		}
	}
}

// overlapping calls f for the BOs of tree t that overlap [start, start+size), highest VA
// first, until f returns false.
func overlapping(t *btree.BTreeG[boKey], start, size uint64, f func(*bo) bool) {
	end := start + size
	if t == nil || end == 0 {
		return // no BO starts below 0
	}
	t.DescendLessOrEqual(boKey{va: end - 1, handle: ^uint64(0)}, func(k boKey) bool {
		if k.va+k.b.size <= start {
			return false // this BO and every lower one end at or below start
		}
		return f(k.b)
	})
}

// overlapsOn reports whether a BO allocated on gpu with a VA overlaps [va, va+size).
func (ix *boIndex) overlapsOn(gpu uint32, va, size uint64) bool {
	found := false
	overlapping(ix.byGPU[gpu], va, size, func(*bo) bool { found = true; return false })
	return found
}

// mappedOverlapping reports whether a BO mapped on some GPU overlaps [start, start+size).
func (ix *boIndex) mappedOverlapping(start, size uint64) bool {
	found := false
	for _, t := range ix.byGPU {
		overlapping(t, start, size, func(b *bo) bool { found = len(b.mapped) > 0; return !found })
		if found {
			return true
		}
	}
	for b := range ix.noVA {
		if len(b.mapped) > 0 && start < b.size && 0 < start+size {
			return true
		}
	}
	return false
}

// containing returns a BO of any GPU whose range holds va (the process's one interval tree of
// DKMS's kfd_cma_iter_update_bo), nil if none.
func (ix *boIndex) containing(va uint64) *bo {
	var hit *bo
	for _, t := range ix.byGPU {
		overlapping(t, va, 1, func(b *bo) bool { hit = b; return false })
		if hit != nil {
			return hit
		}
	}
	return nil
}

// mappedAt returns the BO mapped on gpu that contains va (of any GPU's allocations: a BO is
// mapped on every GPU of a MAP_MEMORY_TO_GPU at its one VA).
func (ix *boIndex) mappedAt(gpu uint32, va uint64) *bo {
	var hit *bo
	for _, t := range ix.byGPU {
		overlapping(t, va, 1, func(b *bo) bool {
			if b.mapped[gpu] {
				hit = b
			}
			return false
		})
		if hit != nil {
			return hit
		}
	}
	for b := range ix.noVA {
		if b.mapped[gpu] && va < b.size {
			return b
		}
	}
	return nil
}
