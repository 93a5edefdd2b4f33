package shader

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
)

// A queue's CodeCache reuses a kernel's decoded code for the next dispatch of it, and a dispatch
// after the code was rewritten in place runs the new code (the CP's instruction cache
// invalidation at each dispatch): here the second instruction changes from 7 to 9, then the
// kernel gets one instruction longer.
func TestCodeCacheReusesAndRechecks(t *testing.T) {
	kernel := func(v int) []uint32 {
		return asm(t, `
	v_lshlrev_b32 v1, 2, v0
	v_mov_b32 v2, `+map[int]string{7: "7", 9: "9"}[v]+`
	global_store_dword v1, v2, s[0:1]
	s_endpgm`)
	}
	m, p := miniKernel(t, kernel(7))
	m.mapRange(asmOut, 0x1000)
	p.KernargAddress = asmOut
	p.GridSize, p.WorkgroupSize = [3]uint32{64, 1, 1}, [3]uint16{64, 1, 1}
	p.Code = &CodeCache{}
	put := func(code []uint32) {
		b := make([]byte, 4*len(code))
		for i, w := range code {
			binary.LittleEndian.PutUint32(b[4*i:], w)
		}
		m.Write(0x1100, b)
	}
	run := func(want uint32) *codeGraph {
		t.Helper()
		if _, err := Dispatch(context.Background(), m, p); err != nil {
			t.Fatal(err)
		}
		var b [256]byte
		m.Read(asmOut, b[:])
		for l := 0; l < 64; l++ {
			if got := binary.LittleEndian.Uint32(b[4*l:]); got != want {
				t.Fatalf("lane %d stored %d, want %d", l, got, want)
			}
		}
		if len(p.Code.progs) != 1 {
			t.Fatalf("%d kernels kept, want 1", len(p.Code.progs))
		}
		return p.Code.progs[0]
	}
	g1 := run(7)
	n1 := g1.n
	if g2 := run(7); g2 != g1 || g2.n != n1 {
		t.Errorf("unchanged code decoded again: graph %p -> %p, %d -> %d instructions", g1, g2, n1, g2.n)
	}
	put(kernel(9))
	g3 := run(9)
	if g3 == g1 {
		t.Error("the graph of the old code was reused after the code changed")
	}
	// One more instruction: the old store's place now holds a v_mov_b32.
	code := asm(t, `
	v_lshlrev_b32 v1, 2, v0
	v_mov_b32 v2, 5
	v_mov_b32 v2, 11
	global_store_dword v1, v2, s[0:1]
	s_endpgm`)
	put(code)
	if g4 := run(11); g4 == g3 {
		t.Error("the graph was reused after the kernel grew by an instruction")
	}
}

// The cache keeps at most codeCacheKernels kernels and codeCacheInsts instructions, the most
// recently dispatched first.
func TestCodeCacheBounds(t *testing.T) {
	var c CodeCache
	big := func(entry uint64, n int) *codeGraph {
		g := newCodeGraph(entry)
		g.n = n
		return g
	}
	c.put(big(0x1000, 100))
	c.put(big(0x2000, codeCacheInsts-100))
	if len(c.progs) != 2 {
		t.Fatalf("%d kernels kept, want 2 (exactly the instruction budget)", len(c.progs))
	}
	c.put(big(0x3000, 1))
	if len(c.progs) != 2 || c.progs[0].entry != 0x3000 || c.progs[1].entry != 0x2000 {
		t.Errorf("over the budget: kept %d kernels, want the two most recent", len(c.progs))
	}
	c.put(big(0x4000, codeCacheInsts+1))
	if len(c.progs) != 2 || c.progs[0].entry != 0x3000 {
		t.Errorf("a kernel larger than the budget: %d kernels kept, want it left out and the others kept", len(c.progs))
	}
}

// The cache keeps at most codeCacheKernels kernels, the most recently dispatched first.
func TestCodeCacheKeepsRecentKernels(t *testing.T) {
	var c CodeCache
	for i := range codeCacheKernels + 3 {
		c.put(newCodeGraph(uint64(0x1000 * (i + 1))))
	}
	if len(c.progs) != codeCacheKernels {
		t.Fatalf("%d kernels kept, want %d", len(c.progs), codeCacheKernels)
	}
	if e := c.progs[0].entry; e != 0x1000*(codeCacheKernels+3) {
		t.Errorf("most recent %#x first, want %#x", e, 0x1000*(codeCacheKernels+3))
	}
	g := c.progs[3]
	c.put(g)
	if c.progs[0] != g || len(c.progs) != codeCacheKernels {
		t.Error("a kernel dispatched again is not moved to the front once")
	}
}

// A dispatch's waves may be an ended dispatch's (spare register files and LDS): what the earlier
// kernel left in its VGPRs and LDS never shows in the next one, which reads both before writing.
func TestSpareGroupsCleared(t *testing.T) {
	secret := asm(t, `
	v_mov_b32 v4, 0x5ec2e7
	v_mov_b32 v5, 0x5ec2e7
	v_lshlrev_b32 v1, 2, v0
	ds_write_b32 v1, v5
	s_waitcnt lgkmcnt(0)
	s_endpgm`)
	peek := asm(t, `
	v_lshlrev_b32 v1, 3, v0
	v_lshlrev_b32 v2, 2, v0
	ds_read_b32 v3, v2
	s_waitcnt lgkmcnt(0)
	global_store_dwordx2 v1, v[4:5], s[0:1]
	global_store_dword v2, v3, s[0:1] offset:512
	s_endpgm`)
	for round := range 20 {
		for i, code := range [][]uint32{secret, peek} {
			b := runAsmBytes(t, code, 64, 256, 768)
			if i == 0 {
				continue
			}
			for k := 0; k < 768; k += 4 {
				if v := binary.LittleEndian.Uint32(b[k:]); v != 0 {
					t.Fatalf("round %d: byte %d of the second kernel's output is %#x: the first kernel's value", round, k, v)
				}
			}
		}
	}
}

// BenchmarkTinyDispatch: one dispatch of the corpus's vadd over one work-item (one wave of 64
// lanes, one active), the whole of Dispatch: descriptor, admission, the wave, completion. With a
// CodeCache (as kfd gives each queue) the kernel's code is checked against memory instead of
// decoded again; spare groups are used either way.
func BenchmarkTinyDispatch(b *testing.B) {
	for _, cached := range []bool{false, true} {
		b.Run(map[bool]string{false: "decode", true: "cached"}[cached], func(b *testing.B) {
			l := load(b)
			pa, pb, pc := l.put(make([]float32, 64)), l.put(make([]float32, 64)), l.put(make([]float32, 64))
			p := l.prepare(b, "vadd", [3]uint32{1, 1, 1}, [3]uint16{64, 1, 1}, args(pa, pb, pc, uint32(1)))
			if cached {
				p.Code = &CodeCache{}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Dispatch(context.Background(), l.mem, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Dispatches on several goroutines share one CodeCache (kfd's per process and GPU, over the
// process's queues): the same kernel at once, every result right (scripts/test.sh runs this under
// the race detector).
func TestCodeCacheConcurrentDispatches(t *testing.T) {
	code := asm(t, `
	v_lshlrev_b32 v1, 2, v0
	v_add_u32 v2, 7, v0
	global_store_dword v1, v2, s[0:1]
	s_endpgm`)
	m, p := miniKernel(t, code)
	p.GridSize, p.WorkgroupSize = [3]uint32{64, 1, 1}, [3]uint16{64, 1, 1}
	p.Code = &CodeCache{}
	const goroutines, rounds = 4, 30
	errs := make(chan error, goroutines)
	m.mapRange(asmOut, 0x1000*goroutines) // before any dispatch: the test memory's map is not safe to grow concurrently
	for k := range goroutines {
		out := uint64(asmOut + 0x1000*uint64(k))
		go func() {
			q := p
			q.KernargAddress = out
			for range rounds {
				if _, err := Dispatch(context.Background(), m, q); err != nil {
					errs <- err
					return
				}
				var b [256]byte
				m.Read(out, b[:])
				for l := 0; l < 64; l++ {
					if got := binary.LittleEndian.Uint32(b[4*l:]); got != uint32(7+l) {
						errs <- fmt.Errorf("lane %d stored %d", l, got)
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range goroutines {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if len(p.Code.progs) != 1 {
		t.Errorf("%d kernels kept, want 1", len(p.Code.progs))
	}
}
