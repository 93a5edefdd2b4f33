//go:build !race

package shader

import (
	"context"
	"testing"
)

// A one-wave dispatch of a kernel the queue's CodeCache holds allocates only its dispatch state:
// the dispatch object, its abort and wake channels, and drive's stop channel and watcher
// goroutine (workgroup.go). Work-groups, waves and register files come from spares, the kernel
// descriptor's and the code check's buffers from pools, the scalar cache's lines from the
// dispatch object (kcache.go). Not under the race detector, whose instrumentation allocates.
func TestTinyDispatchAllocs(t *testing.T) {
	l := load(t)
	pa, pb, pc := l.put(make([]float32, 64)), l.put(make([]float32, 64)), l.put(make([]float32, 64))
	p := l.prepare(t, "vadd", [3]uint32{1, 1, 1}, [3]uint16{64, 1, 1}, args(pa, pb, pc, uint32(1)))
	p.Code = &CodeCache{}
	var err error
	// testing.Benchmark, not AllocsPerRun: that runs on one P, where a goroutine's start
	// allocates more often.
	r := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, e := Dispatch(context.Background(), l.mem, p); e != nil {
				err = e
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := r.AllocsPerOp(); n > 5 {
		t.Errorf("a cached one-wave dispatch allocates %d times, want at most 5 (%v)", n, r.MemString())
	}
}
