package mmu

import (
	"iter"
	"sort"
)

// segIndex is Phys's immutable index of its segments, sorted by physical address: the TLB-miss path
// reads a published index without a lock, and Alloc/Free publish a new one. It is two levels, runs
// of at most segRun segments under a sorted list of the runs, so that a new index copies one run
// and the list of runs, never every segment: with one segment per segment copied, the 2 MiB SVM
// chunks of kfdtest's KFDSVMEvictTest on mi300x (4 processes, 200 GB: 100 k segments) made each
// allocation and free copy 800 KB, and the case ran past its time limit in the copies and the
// collector's work on them (BenchmarkPhysChunks, 100 k chunks allocated and freed: 1.36 ms per
// chunk before, 19 µs with runs of 512).
type segIndex struct {
	runs  [][]*segment // non-empty, sorted, each sorted; shared between indexes, never mutated
	first []uint64     // first[i] = runs[i][0].pa
	n     int
}

// segRun bounds a run: an insert that makes a run longer splits it in two halves.
const segRun = 512

// find returns the segment containing pa, or nil. It does not allocate.
func (x *segIndex) find(pa uint64) *segment {
	r := sort.Search(len(x.first), func(i int) bool { return x.first[i] > pa }) - 1
	if r < 0 {
		return nil
	}
	run := x.runs[r]
	i := sort.Search(len(run), func(i int) bool { return run[i].pa > pa }) - 1
	if i < 0 || pa-run[i].pa >= run[i].size {
		return nil
	}
	return run[i]
}

// all yields the segments in address order.
func (x *segIndex) all() iter.Seq[*segment] {
	return func(yield func(*segment) bool) {
		for _, run := range x.runs {
			for _, s := range run {
				if !yield(s) {
					return
				}
			}
		}
	}
}

// at returns the segment that starts at pa, or nil.
func (x *segIndex) at(pa uint64) *segment {
	if s := x.find(pa); s != nil && s.pa == pa {
		return s
	}
	return nil
}

// with returns a new index that also holds s (whose range overlaps no segment of x).
func (x *segIndex) with(s *segment) *segIndex {
	if len(x.runs) == 0 {
		return &segIndex{runs: [][]*segment{{s}}, first: []uint64{s.pa}, n: 1}
	}
	r := max(sort.Search(len(x.first), func(i int) bool { return x.first[i] > s.pa })-1, 0)
	old := x.runs[r]
	i := sort.Search(len(old), func(i int) bool { return old[i].pa > s.pa })
	run := make([]*segment, 0, len(old)+1)
	run = append(append(append(run, old[:i]...), s), old[i:]...)
	var repl [][]*segment
	if len(run) > segRun {
		repl = [][]*segment{run[: len(run)/2 : len(run)/2], run[len(run)/2:]}
	} else {
		repl = [][]*segment{run}
	}
	return x.replace(r, repl, x.n+1)
}

// without returns a new index without the segment that starts at pa (which x holds).
func (x *segIndex) without(pa uint64) *segIndex {
	r := sort.Search(len(x.first), func(i int) bool { return x.first[i] > pa }) - 1
	old := x.runs[r]
	i := sort.Search(len(old), func(i int) bool { return old[i].pa >= pa })
	var repl [][]*segment
	if len(old) > 1 {
		run := make([]*segment, 0, len(old)-1)
		repl = [][]*segment{append(append(run, old[:i]...), old[i+1:]...)}
	}
	return x.replace(r, repl, x.n-1)
}

// replace returns a new index of n segments: x with run r replaced by repl (0 to 2 runs).
func (x *segIndex) replace(r int, repl [][]*segment, n int) *segIndex {
	y := &segIndex{
		runs:  make([][]*segment, 0, len(x.runs)+1),
		first: make([]uint64, 0, len(x.runs)+1),
		n:     n,
	}
	y.runs = append(append(append(y.runs, x.runs[:r]...), repl...), x.runs[r+1:]...)
	for _, run := range y.runs {
		y.first = append(y.first, run[0].pa)
	}
	return y
}
