package shader

import (
	"sync"
	"sync/atomic"
)

// kcache is the scalar data cache (K$) that SMEM loads read through. On gfx90a a group of CUs shares
// one; it is not coherent with vector memory or the CPU: the CP invalidates it when a dispatch
// starts (the AQL packet's acquire), s_dcache_inv(_vol) invalidates it, and an SMEM load with GLC
// bypasses it (CDNA2 ISA "Scalar Memory Operations"). LLVM emits SMEM loads only for memory that
// does not change while the kernel runs (kernel arguments, the dispatch packet, uniform loads of
// memory no store of the kernel can clobber; AMDGPUUsage "Memory Model"): volatile and atomic
// loads are vector loads. The model keeps one cache per dispatch (every CU of the dispatch shares
// it), emptied when the dispatch starts or resumes, by s_dcache_inv(_vol), and by an SMEM store or
// atomic (the model writes those through to memory). It holds 64-byte lines, filled by one read of
// the line: a kernel argument in the client's own memory (userptr: each read a process_vm_readv)
// is read once per dispatch instead of once per wave.
type kcache struct {
	m atomic.Pointer[sync.Map] // line address -> *kline
}

// kline is one cache line. Waves that miss on it together wait for one fill (a hardware K$ merges
// the misses of one line); its bytes are immutable once ok is set. A failed fill leaves the line
// out of the cache, so the next load reads again.
type kline struct {
	mu sync.Mutex
	ok atomic.Bool
	b  [kLine]byte
}

// kLine is the scalar cache's line size (GFX9 K$: 64 bytes). A line never crosses a 4 KiB page.
const kLine = 64

// reset empties the cache.
func (k *kcache) reset() { k.m.Store(new(sync.Map)) }

// kcLast is a wave's two last scalar cache lines (a kernel's SMEM loads mostly read the dispatch
// packet's and the kernel arguments' lines): a hit needs no lookup in the shared map. An entry is
// valid while its map is the cache's (reset stores a new one; lines are immutable once stored).
type kcLast struct {
	m    [2]*sync.Map
	la   [2]uint64
	line [2]*[kLine]byte
	next int // the entry a miss replaces
}

// read fills p (at most kLine bytes) from addr, a dword-aligned address, through the cache; misses
// read whole lines from mem. It returns the Memory's error of a failed fill. last, the reading
// wave's own, is looked at before the shared map.
func (k *kcache) read(mem Memory, addr uint64, p []byte, last *kcLast) error {
	m := k.m.Load()
	for len(p) > 0 {
		la := addr &^ (kLine - 1)
		var line *[kLine]byte
		if last.m[0] == m && last.la[0] == la {
			line = last.line[0]
		} else if last.m[1] == m && last.la[1] == la {
			line = last.line[1]
		} else {
			v, ok := m.Load(la)
			if !ok {
				v, _ = m.LoadOrStore(la, new(kline))
			}
			kl := v.(*kline)
			if !kl.ok.Load() {
				kl.mu.Lock()
				if !kl.ok.Load() {
					if err := mem.Read(la, kl.b[:]); err != nil {
						kl.mu.Unlock()
						m.CompareAndDelete(la, kl)
						return err
					}
					kl.ok.Store(true)
				}
				kl.mu.Unlock()
			}
			line = &kl.b
			i := last.next
			last.m[i], last.la[i], last.line[i], last.next = m, la, line, i^1
		}
		n := copy(p, line[addr-la:])
		p = p[n:]
		addr += uint64(n)
	}
	return nil
}
