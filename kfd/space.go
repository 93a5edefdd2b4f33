package kfd

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// space is a memfd whose file offsets are mmap offsets handed to the client: the client maps it
// through the device file (FUSE passthrough) and the daemon maps the same pages, so both see the same
// bytes at once. Offsets are allocated upwards and never reused; freed ranges are punched out so the
// memory goes back to the kernel.
//
// The daemon's view of small allocations is shared: they are carved from arenas, mappings of
// arenaSize bytes of file offsets, so the daemon's mappings do not grow with its clients' BOs. The
// kernel allows a process vm.max_map_count (65530) mappings; with one per BO, 6 clients holding
// 16 k BOs each (TestStressAndCrash's soak) made every allocation of every client fail ENOMEM,
// where amdgpu maps a BO into the kernel only while the kernel touches it. An allocation larger
// than arenaMax has a mapping of its own. An arena is unmapped once nothing in it is live and the
// allocator has moved past it (or the space is closed): a dma-buf may keep memory of a closed space.
type space struct {
	mu      sync.Mutex
	f       *os.File
	next    int64            // the next offset for allocations up to arenaMax, below bigBase
	nextBig int64            // the next offset for larger ones, from bigBase to fixedBase
	size    int64            // file size: only grows (a shrink would cut off mappings above)
	arenas  map[int64]*arena // by base offset; under mu
	closed  bool             // under mu
	// retired is set when the process is torn down: release then gives back the daemon's view only
	// (no punch).
	// What the client still maps keeps its bytes, as on amdgpu, where a BO is freed at its last
	// reference and a CPU mapping holds one (a signal the client waits on must not read 0 because
	// the daemon went away); the pages go with the client's last mapping, the daemon having closed
	// the memfd.
	retired atomic.Bool
}

// arena is the daemon's mapping of file offsets [base, base+arenaSize) of a space.
type arena struct {
	mem  []byte
	live int // allocations carved from it and not yet released
}

// An arena's span bounds what a long-lived allocation keeps mapped in the daemon's address space
// (its whole arena, while offsets move on past it); arenaMax keeps a BO that would fill much of
// an arena on a mapping of its own.
const (
	arenaSize = 64 << 20
	arenaMax  = arenaSize / 8
)

// Offsets must stay below 2^63 (a FUSE regular file cannot be mapped above); the limit is far below.
// Allocations stay below fixedBase, the small ones (arenas) below bigBase and the larger ones above
// it, so that a large BO's offsets never move the arenas' allocator past an arena with room left
// (a queue's 60 MiB context-save area after each of its small BOs made an arena per queue); the
// range above fixedBase holds fixed-offset mappings (doorbell slices, see Process.doorbells).
const (
	spaceLimit = 1 << 46
	fixedBase  = 1 << 45
	bigBase    = fixedBase / 2
)

// grow extends the file to end bytes. Called with s.mu held.
func (s *space) grow(end int64) error {
	if end <= s.size {
		return nil
	}
	if err := s.f.Truncate(end); err != nil {
		return err
	}
	s.size = end
	return nil
}

// mapAt maps size bytes at a fixed offset at or above fixedBase (not allocated from next).
func (s *space) mapAt(off int64, size uint64) ([]byte, error) {
	if off < fixedBase || uint64(off)+size > spaceLimit || off%pageSize != 0 {
		return nil, errNoSpace
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.grow(off + int64(size)); err != nil {
		return nil, err
	}
	return unix.Mmap(int(s.f.Fd()), off, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
}

func newSpace(name string) (*space, error) {
	fd, err := unix.MemfdCreate("kfdemu-"+name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	return &space{f: os.NewFile(uintptr(fd), "kfdemu-"+name), next: pageSize, nextBig: bigBase, arenas: map[int64]*arena{}}, nil
}

const pageSize = 4096

// alloc reserves size bytes (page-rounded) and returns their offset and the daemon's view of them:
// a slice of an arena, or a mapping of its own above arenaMax. A guard page's offset lies between
// two allocations (the client maps each on its own).
func (s *space) alloc(size uint64) (off int64, mem []byte, err error) {
	size = (size + pageSize - 1) &^ (pageSize - 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || size == 0 {
		return 0, nil, errNoSpace
	}
	if size > arenaMax {
		off = s.nextBig
		if uint64(off)+size > fixedBase {
			return 0, nil, errNoSpace
		}
		if err := s.grow(off + int64(size)); err != nil {
			return 0, nil, err
		}
		if mem, err = unix.Mmap(int(s.f.Fd()), off, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
			return 0, nil, err
		}
		s.nextBig = off + int64(size) + pageSize
		return off, mem, nil
	}
	off = s.next
	base := off &^ (arenaSize - 1)
	if off+int64(size) > base+arenaSize { // the rest of this arena is too small: the next one
		base += arenaSize
		off = base
	}
	if uint64(off)+size > bigBase {
		return 0, nil, errNoSpace
	}
	a := s.arenas[base]
	if a == nil {
		m, err := unix.Mmap(int(s.f.Fd()), base, arenaSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			return 0, nil, err
		}
		a = &arena{mem: m}
		s.arenas[base] = a
	}
	if err := s.grow(off + int64(size)); err != nil {
		s.drop(base, a)
		return 0, nil, err
	}
	a.live++
	s.advance(off + int64(size) + pageSize)
	o := off - base
	return off, a.mem[o : o+int64(size) : o+int64(size)], nil
}

// advance moves the allocator to next, unmapping the arena it leaves if nothing in it is live.
// Called with s.mu held.
func (s *space) advance(next int64) {
	old := s.next &^ (arenaSize - 1)
	s.next = next
	if a := s.arenas[old]; a != nil {
		s.drop(old, a)
	}
}

// drop unmaps arena a at base if nothing in it is live and no allocation can come from it any
// more. Called with s.mu held.
func (s *space) drop(base int64, a *arena) {
	if a.live > 0 || (!s.closed && base == s.next&^(arenaSize-1)) {
		return
	}
	delete(s.arenas, base)
	unix.Munmap(a.mem)
}

// release gives back an allocation: its pages go back to the kernel (not once retired: see
// space.retired) and the daemon's view goes with its mapping or with the last live allocation of
// its arena.
func (s *space) release(off int64, mem []byte) {
	n := len(mem)
	if !s.retired.Load() {
		unix.Fallocate(int(s.f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, int64(n))
	}
	if n > arenaMax {
		unix.Munmap(mem)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	base := off &^ (arenaSize - 1)
	if a := s.arenas[base]; a != nil {
		a.live--
		s.drop(base, a)
	}
}

// close closes the memfd and unmaps the arenas nothing live is in; the others go with their last
// release (a dma-buf's memory may outlive its process).
func (s *space) close() {
	s.mu.Lock()
	s.closed = true
	for base, a := range s.arenas {
		s.drop(base, a)
	}
	s.mu.Unlock()
	s.f.Close()
}
