package mmu

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSegIndex inserts and removes segments at random (runs split past segRun, empty runs go) and
// checks every published index against a sorted slice: find at each segment's first and last
// byte, in the gaps and past the ends; at; all; n. Earlier indexes stay as they were.
func TestSegIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := &segIndex{}
	var ref []*segment // sorted by pa
	check := func(x *segIndex, ref []*segment) {
		t.Helper()
		if x.n != len(ref) {
			t.Fatalf("n = %d, want %d", x.n, len(ref))
		}
		if got := slices.Collect(x.all()); !slices.Equal(got, ref) {
			t.Fatalf("all: %d segments, want %d (or out of order)", len(got), len(ref))
		}
		for i, s := range ref {
			if x.find(s.pa) != s || x.find(s.pa+s.size-1) != s || x.at(s.pa) != s {
				t.Fatalf("segment %#x+%#x not found", s.pa, s.size)
			}
			if s.size > 4096 && x.at(s.pa+4096) != nil {
				t.Fatalf("at(%#x) inside a segment", s.pa+4096)
			}
			if x.find(s.pa+s.size) != nil && (i+1 == len(ref) || ref[i+1].pa != s.pa+s.size) {
				t.Fatalf("find(%#x) in a gap", s.pa+s.size)
			}
		}
		if x.find(0) != nil || x.find(1<<62) != nil {
			t.Fatal("find outside every segment")
		}
	}
	type snap struct {
		x   *segIndex
		ref []*segment
	}
	var snaps []snap
	for step := range 8000 {
		if step > 4000 && len(ref) == 0 {
			break
		}
		if len(ref) > 0 && (rng.IntN(3) == 0 || step > 4000) {
			s := ref[rng.IntN(len(ref))]
			x = x.without(s.pa)
			ref = slices.DeleteFunc(slices.Clone(ref), func(e *segment) bool { return e == s })
		} else {
			// Segments on a 64 KiB grid, 4 KiB to 60 KiB long: never overlapping, gaps between.
			pa := uint64(rng.IntN(1<<20)) << 16
			if slices.ContainsFunc(ref, func(e *segment) bool { return e.pa == pa }) {
				continue
			}
			s := &segment{pa: pa, size: uint64(1+rng.IntN(15)) << 12}
			x = x.with(s)
			i, _ := slices.BinarySearchFunc(ref, pa, func(e *segment, pa uint64) int { return cmp.Compare(e.pa, pa) })
			ref = slices.Insert(slices.Clone(ref), i, s)
		}
		if step%97 == 0 {
			check(x, ref)
			snaps = append(snaps, snap{x, ref})
		}
	}
	check(x, ref)
	if x.n != 0 || len(x.runs) != 0 {
		t.Fatalf("after removing everything: %d segments in %d runs", x.n, len(x.runs))
	}
	maxRuns := 0
	for _, s := range snaps {
		check(s.x, s.ref) // published indexes are never changed by later ones
		maxRuns = max(maxRuns, len(s.x.runs))
		for _, run := range s.x.runs {
			if len(run) == 0 || len(run) > segRun {
				t.Fatalf("run of %d segments", len(run))
			}
		}
	}
	if maxRuns < 4 {
		t.Fatalf("at most %d runs: the test did not split runs", maxRuns)
	}
}

// BenchmarkPhysChunks allocates 100 k 2 MiB system segments (kfdtest's SVM eviction test on mi300x:
// 200 GB of SVM chunks in 4 processes) and frees them; ns/op is per allocation and free.
func BenchmarkPhysChunks(b *testing.B) {
	const chunks = 100_000
	back := Backing{Remote: nopRemote{}, RemoteAddr: 1 << 40}
	for range b.N {
		ph := NewPhys()
		pas := make([]uint64, chunks)
		for i := range pas {
			pa, err := ph.AllocSystem(2<<20, back)
			if err != nil {
				b.Fatal(err)
			}
			pas[i] = pa
		}
		for _, pa := range pas {
			if err := ph.Free(pa); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
}

type nopRemote struct{}

func (nopRemote) ReadAt(p []byte, addr uint64) error  { return nil }
func (nopRemote) WriteAt(p []byte, addr uint64) error { return nil }
