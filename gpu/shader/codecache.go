package shader

import (
	"slices"
	"sync"
	"sync/atomic"
)

// CodeCache keeps the decoded code of an address space's recent kernels from one dispatch to the
// next, so that a kernel dispatched again is not decoded again. The CP invalidates the instruction cache
// at every dispatch's start (the AQL acquire fence), so what a dispatch runs is the code in memory
// when it starts: a kept kernel is reused only after every instruction of it has been read again
// and compared with the bytes it was decoded from (one read per run of neighbouring
// instructions); any difference, or a read that fails, and the dispatch decodes afresh. Decoding
// is a function of the bytes alone, so a reused instruction is the one a fresh decode would give.
//
// A CodeCache serves one address space (kfd: one per process and GPU, shared by the process's
// queues there) and is safe for concurrent dispatches, which may share a kept kernel; the zero
// value is ready. Engine.Code nil: each dispatch decodes for itself. What it keeps is bounded
// (codeCacheKernels kernels, codeCacheInsts instructions in all: about 330 bytes each), so a client
// walking huge code regions cannot make the daemon hold more than a dispatch of it already does.
type CodeCache struct {
	mu    sync.Mutex
	progs []*codeGraph // most recently used first
}

const (
	codeCacheKernels = 32       // kernels kept
	codeCacheInsts   = 64 << 10 // instructions kept in all
	codeCheckGap     = 64       // instructions this close are checked with one read
	codeCheckRun     = 16 << 10 // bytes read at most at once
)

// codeGraph is one kernel's decoded code: the instructions reached so far (by pc) with their
// successor links. Instructions are immutable once published; new ones are added by any
// dispatch using the graph.
type codeGraph struct {
	entry uint64
	m     sync.Map // pc -> *cinst
	// first is the instruction at entry once decoded: every wave starts there, so it skips the
	// map's lookup (a kernel of short waves, as a blit's, starts a wave every 40 instructions).
	first atomic.Pointer[cinst]

	mu     sync.Mutex
	added  []*cinst // decoded since sorted was built
	sorted []*cinst // by pc; replaced, never changed in place
	n      int      // instructions in sorted and added
}

func newCodeGraph(entry uint64) *codeGraph { return &codeGraph{entry: entry} }

// add records a newly published instruction for the next check.
func (g *codeGraph) add(c *cinst) {
	g.mu.Lock()
	g.added = append(g.added, c)
	g.n++
	g.mu.Unlock()
}

// settle merges the instructions added since the last check into the sorted list.
func (g *codeGraph) settle() []*cinst {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.added) > 0 {
		s := make([]*cinst, 0, len(g.sorted)+len(g.added))
		s = append(append(s, g.sorted...), g.added...)
		slices.SortFunc(s, func(a, b *cinst) int { return cmpU64(a.pc, b.pc) })
		g.sorted, g.added = s, nil
	}
	return g.sorted
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkBufs are same's buffers for the common case, code within 1 KiB runs.
var checkBufs = sync.Pool{New: func() any { return new([1024]byte) }}

// same reports whether every instruction of the graph still has the bytes it was decoded from,
// reading them with read.
func (g *codeGraph) same(read func(uint64, []byte) error) bool {
	s := g.settle()
	small := checkBufs.Get().(*[1024]byte) // read through an interface: on the stack it would escape
	defer checkBufs.Put(small)
	var buf []byte
	for i := 0; i < len(s); {
		lo, hi := s[i].pc, s[i].pc+uint64(s[i].Size)
		j := i + 1
		for j < len(s) && s[j].pc <= hi+codeCheckGap && s[j].pc+uint64(s[j].Size)-lo <= codeCheckRun {
			hi = max(hi, s[j].pc+uint64(s[j].Size))
			j++
		}
		if hi-lo > uint64(len(buf)) {
			if hi-lo <= uint64(len(small)) {
				buf = small[:]
			} else {
				buf = make([]byte, codeCheckRun)
			}
		}
		b := buf[:hi-lo]
		if read(lo, b) != nil {
			return false
		}
		for _, c := range s[i:j] {
			if !c.sameBytes(b[c.pc-lo:]) {
				return false
			}
		}
		i = j
	}
	return true
}

// sameBytes reports whether b starts with the instruction's own bytes.
func (c *cinst) sameBytes(b []byte) bool {
	for k := 0; k < int(c.Size)/4; k++ {
		if uint32(b[4*k])|uint32(b[4*k+1])<<8|uint32(b[4*k+2])<<16|uint32(b[4*k+3])<<24 != c.raw[k] {
			return false
		}
	}
	return true
}

// get returns the kept graph of the kernel at entry if its code is unchanged, else a new one.
func (c *CodeCache) get(entry uint64, read func(uint64, []byte) error) *codeGraph {
	if c == nil {
		return newCodeGraph(entry)
	}
	c.mu.Lock()
	var g *codeGraph
	for _, p := range c.progs {
		if p.entry == entry {
			g = p
			break
		}
	}
	c.mu.Unlock()
	if g != nil && g.same(read) {
		return g
	}
	return newCodeGraph(entry)
}

// put keeps g (a dispatch of it ended) as the most recently used graph of its kernel, dropping the
// least recently used ones beyond the bounds.
func (c *CodeCache) put(g *codeGraph) {
	if c == nil {
		return
	}
	g.mu.Lock()
	n := g.n
	g.mu.Unlock()
	c.mu.Lock() // before any codeGraph.mu
	defer c.mu.Unlock()
	c.progs = slices.DeleteFunc(c.progs, func(p *codeGraph) bool { return p.entry == g.entry })
	if n > codeCacheInsts {
		return // larger than the whole budget: not kept
	}
	c.progs = slices.Insert(c.progs, 0, g)
	total := 0
	for i, p := range c.progs {
		p.mu.Lock()
		total += p.n
		p.mu.Unlock()
		if i == codeCacheKernels || total > codeCacheInsts {
			clear(c.progs[i:])
			c.progs = c.progs[:i]
			break
		}
	}
}
