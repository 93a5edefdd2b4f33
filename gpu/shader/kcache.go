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
	t     atomic.Pointer[kcTable]
	first kcTable // the table of the dispatch's first run (start): no allocation for it
}

// kcTable is the cache's content between two invalidations. Its first kcInline lines are held in
// place, filled in order under mu and published by n (lines[:n] are immutable); further lines go
// to more. An invalidation replaces the whole table: waves that still read the old one read
// immutable lines.
type kcTable struct {
	mu    sync.Mutex
	n     atomic.Int32
	lines [kcInline]kcLine
	more  sync.Map // line address -> *kline
}

// kcInline is how many lines a table holds in place: a kernel's SMEM loads mostly read the
// dispatch packet's line and the kernel arguments' (up to 4 lines with the hidden arguments).
const kcInline = 8

type kcLine struct {
	la uint64
	b  [kLine]byte
}

// kline is one cache line beyond the table's first kcInline. Waves that miss on it together wait
// for one fill (a hardware K$ merges the misses of one line); its bytes are immutable once ok is
// set. A failed fill leaves the line out of the cache, so the next load reads again.
type kline struct {
	mu sync.Mutex
	ok atomic.Bool
	b  [kLine]byte
}

// kLine is the scalar cache's line size (GFX9 K$: 64 bytes). A line never crosses a 4 KiB page.
const kLine = 64

// start empties the cache when a run of the dispatch starts (drive), no wave running: the first
// run uses the table kept in place.
func (k *kcache) start() {
	if k.t.Load() == nil {
		k.t.Store(&k.first)
		return
	}
	k.reset()
}

// reset empties the cache (s_dcache_inv, an SMEM store or atomic), maybe while waves read it.
func (k *kcache) reset() { k.t.Store(new(kcTable)) }

// kcLast is a wave's two last scalar cache lines (a kernel's SMEM loads mostly read the dispatch
// packet's and the kernel arguments' lines): a hit needs no look at the table. An entry is valid
// while its table is the cache's (reset stores a new one; lines are immutable once stored).
type kcLast struct {
	t    [2]*kcTable
	la   [2]uint64
	line [2]*[kLine]byte
	next int // the entry a miss replaces
}

// line returns the table's line at la, filling it from mem on a miss.
func (t *kcTable) line(mem Memory, la uint64) (*[kLine]byte, error) {
	n := int(t.n.Load())
	for i := range n {
		if t.lines[i].la == la {
			return &t.lines[i].b, nil
		}
	}
	if n == kcInline {
		return t.moreLine(mem, la)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	n2 := int(t.n.Load())
	for i := n; i < n2; i++ { // filled while this load waited
		if t.lines[i].la == la {
			return &t.lines[i].b, nil
		}
	}
	if n2 == kcInline {
		return t.moreLine(mem, la)
	}
	l := &t.lines[n2]
	if err := mem.Read(la, l.b[:]); err != nil {
		return nil, err // not published: the next load reads again
	}
	l.la = la
	t.n.Store(int32(n2 + 1))
	return &l.b, nil
}

// moreLine is line beyond the table's first kcInline lines.
func (t *kcTable) moreLine(mem Memory, la uint64) (*[kLine]byte, error) {
	v, ok := t.more.Load(la)
	if !ok {
		v, _ = t.more.LoadOrStore(la, new(kline))
	}
	kl := v.(*kline)
	if !kl.ok.Load() {
		kl.mu.Lock()
		if !kl.ok.Load() {
			if err := mem.Read(la, kl.b[:]); err != nil {
				kl.mu.Unlock()
				t.more.CompareAndDelete(la, kl)
				return nil, err
			}
			kl.ok.Store(true)
		}
		kl.mu.Unlock()
	}
	return &kl.b, nil
}

// read fills p (at most kLine bytes) from addr, a dword-aligned address, through the cache; misses
// read whole lines from mem. It returns the Memory's error of a failed fill. last, the reading
// wave's own, is looked at before the shared map.
func (k *kcache) read(mem Memory, addr uint64, p []byte, last *kcLast) error {
	t := k.t.Load()
	for len(p) > 0 {
		la := addr &^ (kLine - 1)
		var line *[kLine]byte
		if last.t[0] == t && last.la[0] == la {
			line = last.line[0]
		} else if last.t[1] == t && last.la[1] == la {
			line = last.line[1]
		} else {
			var err error
			if line, err = t.line(mem, la); err != nil {
				return err
			}
			i := last.next
			last.t[i], last.la[i], last.line[i], last.next = t, la, line, i^1
		}
		n := copy(p, line[addr-la:])
		p = p[n:]
		addr += uint64(n)
	}
	return nil
}
