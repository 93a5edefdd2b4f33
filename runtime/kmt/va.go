package kmt

import (
	"fmt"
	"sort"
	"sync"
)

// vaAllocator hands out aligned ranges of [0, size) (offsets into the reserved aperture), first fit
// over a sorted free list, like fmm.c's aperture_allocate_area / aperture_release_area on the
// SVM aperture. Each area is followed by guard bytes (fmm's svm guard pages) so that adjacent BOs
// never touch.
type vaAllocator struct {
	mu    sync.Mutex
	size  uint64
	guard uint64
	free  []span // sorted by start, coalesced
	used  map[uint64]uint64
}

type span struct{ start, end uint64 }

func newVAAllocator(size, guard uint64) *vaAllocator {
	return &vaAllocator{size: size, guard: guard, free: []span{{0, size}}, used: map[uint64]uint64{}}
}

// alloc returns the offset of size bytes aligned to align (a power of two).
func (a *vaAllocator) alloc(size, align uint64) (uint64, error) {
	if size == 0 || align == 0 || align&(align-1) != 0 {
		return 0, fmt.Errorf("%w: size %d align %d", ErrInvalidArgument, size, align)
	}
	need := size + a.guard
	if need < size {
		return 0, ErrNoVA
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, s := range a.free {
		start := (s.start + align - 1) &^ (align - 1)
		if start < s.start || start > s.end || s.end-start < need {
			continue
		}
		// Split: [s.start, start) stays free, [start, start+need) is used, the rest stays free.
		var repl []span
		if start > s.start {
			repl = append(repl, span{s.start, start})
		}
		if start+need < s.end {
			repl = append(repl, span{start + need, s.end})
		}
		a.free = append(a.free[:i], append(repl, a.free[i+1:]...)...)
		a.used[start] = need
		return start, nil
	}
	return 0, ErrNoVA
}

// release returns an area to the free list.
func (a *vaAllocator) release(off uint64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, ok := a.used[off]
	if !ok {
		return fmt.Errorf("%w: no area at offset %#x", ErrInvalidArgument, off)
	}
	delete(a.used, off)
	s := span{off, off + n}
	i := sort.Search(len(a.free), func(i int) bool { return a.free[i].start >= s.start })
	a.free = append(a.free, span{})
	copy(a.free[i+1:], a.free[i:])
	a.free[i] = s
	// Coalesce with the neighbours.
	if i+1 < len(a.free) && a.free[i].end == a.free[i+1].start {
		a.free[i].end = a.free[i+1].end
		a.free = append(a.free[:i+1], a.free[i+2:]...)
	}
	if i > 0 && a.free[i-1].end == a.free[i].start {
		a.free[i-1].end = a.free[i].end
		a.free = append(a.free[:i], a.free[i+1:]...)
	}
	return nil
}

// inUse is the number of live areas.
func (a *vaAllocator) inUse() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.used)
}
