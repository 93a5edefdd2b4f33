package mmu

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// Physical address layout of the model. A PTE's address field is 48 bits wide (PTEAddrMask); kfdemu
// gives every memory its own window in that space so a PTE alone says what it points to:
//
//	[SystemBase, SystemEnd)            system pages (GTT BOs, userptr): PTEs carry PTESystem
//	[VRAMBase(g), VRAMBase(g)+VRAMSpan) VRAM of GPU g (0 <= g <= MaxGPU), as local or peer memory
//	[PageTableBase, 2^48)               page tables: the addresses PDEs hold (no backing; tables
//	                                   are Go structures, the addresses are for debugfs)
//
// On the real device VRAM PTEs hold MC addresses relative to vm_manager.vram_base_offset and
// system PTEs hold DMA addresses (amdgpu_vm_map_gart); the windows stand in for both.
const (
	SystemBase = 2 << 20 // page 0.. is left unused so a zero PA is never valid memory
	SystemEnd  = 1 << 40 // 1 TiB of system address space
	VRAMSpan   = 1 << 40 // per GPU
	MaxGPU     = 253     // the last window, VRAMBase(MaxGPU+1), holds page tables
	hugeAlign  = 2 << 20 // VRAM allocations of at least 2 MiB are 2 MiB aligned
	physLimit  = 1 << 48 // end of the PTE address field
	pageSize   = 4096    // AMDGPU_GPU_PAGE_SIZE
	pageShift  = 12      // AMDGPU_GPU_PAGE_SHIFT
	pageMask   = pageSize - 1
	hugeSize   = 2 << 20 // one PDB0 entry
	hugePages  = 512     // 4 KiB pages per PDB0 entry
)

// PageTableBase is the window page-table addresses are taken from.
const PageTableBase = (MaxGPU + 2) * VRAMSpan

// VRAMBase returns the first physical address of GPU gpu's VRAM window.
func VRAMBase(gpu int) uint64 { return uint64(gpu+1) * VRAMSpan }

// Remote is memory the daemon cannot map: a client's userptr pages, reached with
// process_vm_readv/writev by the kfd layer. Offsets are absolute addresses in the remote space.
type Remote interface {
	ReadAt(p []byte, addr uint64) error
	WriteAt(p []byte, addr uint64) error
}

// RemoteV is a Remote that moves several pieces in one call (process_vm_readv/writev with one
// iovec per piece): bufs[i] from or to addrs[i], in order. n is the number of whole pieces moved
// before an error.
type RemoteV interface {
	Remote
	ReadV(bufs [][]byte, addrs []uint64) (n int, err error)
	WriteV(bufs [][]byte, addrs []uint64) (n int, err error)
}

// Backing says where the bytes of a physical segment live. Exactly one of Mem and Remote is set.
type Backing struct {
	Mem        []byte // the daemon's mapping (memfd-backed BO), len == segment size, 8-byte aligned
	Remote     Remote // else reached through Remote at RemoteAddr + offset
	RemoteAddr uint64
}

type segment struct {
	pa, size uint64
	gpu      int // -1: system
	b        Backing
}

// span is a free range of an arena.
type span struct{ start, end uint64 }

// arena is a first-fit allocator over one window, free spans sorted and coalesced.
type arena struct{ free []span }

func newArena(start, end uint64) *arena { return &arena{free: []span{{start, end}}} }

func (a *arena) alloc(size, align uint64) (uint64, bool) {
	for i, s := range a.free {
		p := (s.start + align - 1) &^ (align - 1)
		if p < s.start || p+size < p || p+size > s.end {
			continue
		}
		// Split s into [s.start, p) and [p+size, s.end).
		var repl []span
		if p > s.start {
			repl = append(repl, span{s.start, p})
		}
		if p+size < s.end {
			repl = append(repl, span{p + size, s.end})
		}
		a.free = slices.Replace(a.free, i, i+1, repl...)
		return p, true
	}
	return 0, false
}

func (a *arena) release(start, size uint64) {
	end := start + size
	i := sort.Search(len(a.free), func(i int) bool { return a.free[i].start >= end })
	// i: first span after the released one.
	if i > 0 && a.free[i-1].end == start {
		a.free[i-1].end = end
		if i < len(a.free) && a.free[i].start == end {
			a.free[i-1].end = a.free[i].end
			a.free = slices.Delete(a.free, i, i+1)
		}
		return
	}
	if i < len(a.free) && a.free[i].start == end {
		a.free[i].start = start
		return
	}
	a.free = slices.Insert(a.free, i, span{start, end})
}

// Phys is the physical address space PTEs point into. Allocation and Free take Phys.mu; the lookup
// done on a TLB miss reads an immutable, sorted snapshot of the segments through an atomic pointer
// and takes no lock.
type Phys struct {
	mu     sync.Mutex
	system *arena
	vram   map[int]*arena
	segs   atomic.Pointer[segIndex] // replaced, never mutated

	systemBytes uint64
	vramBytes   map[int]uint64

	ptBytes  atomic.Int64  // page-table bytes of every VM on this Phys
	ptNextPA atomic.Uint64 // pseudo addresses of page tables (see VM)

	// remoteMu serializes Store and Atomic on Remote backings for every VM on this Phys, so that the
	// read-modify-writes of several GPUs (and processes) on one client word exclude each other.
	remoteMu sync.Mutex
}

// PhysStats is a snapshot of the allocations.
type PhysStats struct {
	Segments       int
	SystemBytes    uint64
	VRAMBytes      map[int]uint64 // by GPU
	PageTableBytes int64          // bytes of page tables of all live VMs
}

// NewPhys returns an empty physical address space.
func NewPhys() *Phys {
	ph := &Phys{
		system:    newArena(SystemBase, SystemEnd),
		vram:      map[int]*arena{},
		vramBytes: map[int]uint64{},
	}
	ph.segs.Store(&segIndex{})
	return ph
}

func checkBacking(size uint64, b Backing) error {
	switch {
	case b.Mem != nil && b.Remote != nil:
		return fmt.Errorf("%w: both Mem and Remote set", ErrBacking)
	case b.Mem == nil && b.Remote == nil:
		return fmt.Errorf("%w: neither Mem nor Remote set", ErrBacking)
	case b.Mem != nil && uint64(len(b.Mem)) != size:
		return fmt.Errorf("%w: len(Mem) %d != size %d", ErrBacking, len(b.Mem), size)
	case b.Mem != nil && !aligned8(b.Mem):
		return fmt.Errorf("%w: Mem not 8-byte aligned", ErrBacking)
	case b.Remote != nil && b.RemoteAddr+size < b.RemoteAddr:
		return fmt.Errorf("%w: remote range wraps", ErrBacking)
	}
	return nil
}

// AllocVRAM reserves size bytes (a multiple of 4 KiB) of GPU gpu's VRAM window, backed by b, and
// returns its physical address: 2 MiB aligned when size >= 2 MiB (amdgpu_vram_mgr allocates BOs
// of that size in 2 MiB pages so the VM can use huge PTEs), else 4 KiB aligned.
func (ph *Phys) AllocVRAM(gpu int, size uint64, b Backing) (uint64, error) {
	if gpu < 0 || gpu > MaxGPU {
		return 0, fmt.Errorf("%w: gpu %d", ErrRange, gpu)
	}
	align := uint64(pageSize)
	if size >= hugeAlign {
		align = hugeAlign
	}
	ph.mu.Lock()
	defer ph.mu.Unlock()
	a := ph.vram[gpu]
	if a == nil {
		a = newArena(VRAMBase(gpu), VRAMBase(gpu)+VRAMSpan)
		ph.vram[gpu] = a
	}
	pa, err := ph.allocLocked(a, gpu, size, align, b)
	if err == nil {
		ph.vramBytes[gpu] += size
	}
	return pa, err
}

// AllocSystem reserves size bytes (a multiple of 4 KiB) of system address space backed by b (GTT
// BOs, userptr ranges).
func (ph *Phys) AllocSystem(size uint64, b Backing) (uint64, error) {
	ph.mu.Lock()
	defer ph.mu.Unlock()
	pa, err := ph.allocLocked(ph.system, -1, size, pageSize, b)
	if err == nil {
		ph.systemBytes += size
	}
	return pa, err
}

func (ph *Phys) allocLocked(a *arena, gpu int, size, align uint64, b Backing) (uint64, error) {
	if size == 0 || size&pageMask != 0 {
		return 0, fmt.Errorf("%w: size %#x", ErrAlign, size)
	}
	if err := checkBacking(size, b); err != nil {
		return 0, err
	}
	pa, ok := a.alloc(size, align)
	if !ok {
		return 0, fmt.Errorf("%w: %#x bytes", ErrNoSpace, size)
	}
	ph.segs.Store(ph.segs.Load().with(&segment{pa: pa, size: size, gpu: gpu, b: b}))
	return pa, nil
}

// Free releases the segment that starts at pa. The caller guarantees that no VM maps it any more
// (Unmap returned, so no Port can still be using it).
func (ph *Phys) Free(pa uint64) error {
	ph.mu.Lock()
	defer ph.mu.Unlock()
	segs := ph.segs.Load()
	s := segs.at(pa)
	if s == nil {
		return fmt.Errorf("%w: no segment at pa %#x", ErrNotFound, pa)
	}
	if s.gpu < 0 {
		ph.system.release(s.pa, s.size)
		ph.systemBytes -= s.size
	} else {
		ph.vram[s.gpu].release(s.pa, s.size)
		ph.vramBytes[s.gpu] -= s.size
		if ph.vramBytes[s.gpu] == 0 {
			delete(ph.vramBytes, s.gpu)
		}
	}
	ph.segs.Store(segs.without(pa))
	return nil
}

// lookup returns the segment containing pa (TLB-miss path; lock free).
func (ph *Phys) lookup(pa uint64) *segment {
	return ph.segs.Load().find(pa)
}

// Stats returns a snapshot of the allocations.
func (ph *Phys) Stats() PhysStats {
	ph.mu.Lock()
	defer ph.mu.Unlock()
	st := PhysStats{
		Segments:       ph.segs.Load().n,
		SystemBytes:    ph.systemBytes,
		VRAMBytes:      make(map[int]uint64, len(ph.vramBytes)),
		PageTableBytes: ph.ptBytes.Load(),
	}
	for g, n := range ph.vramBytes {
		st.VRAMBytes[g] = n
	}
	return st
}
