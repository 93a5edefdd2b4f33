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
type space struct {
	mu   sync.Mutex
	f    *os.File
	next int64
	size int64 // file size: only grows (a shrink would cut off mappings above)
	// retired is set when the process is torn down: release then unmaps the daemon's view only.
	// What the client still maps keeps its bytes, as on amdgpu, where a BO is freed at its last
	// reference and a CPU mapping holds one (a signal the client waits on must not read 0 because
	// the daemon went away); the pages go with the client's last mapping, the daemon having closed
	// the memfd.
	retired atomic.Bool
}

// Offsets must stay below 2^63 (a FUSE regular file cannot be mapped above); the limit is far below.
// Allocations from next stay below fixedBase; the range above holds fixed-offset mappings
// (doorbell slices, see Process.doorbells).
const (
	spaceLimit = 1 << 46
	fixedBase  = 1 << 45
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
	return &space{f: os.NewFile(uintptr(fd), "kfdemu-"+name), next: pageSize}, nil
}

const pageSize = 4096

// alloc reserves size bytes (page-rounded) and maps them into the daemon.
func (s *space) alloc(size uint64) (off int64, mem []byte, err error) {
	return s.allocAligned(size, pageSize)
}

// allocAligned is alloc with the offset aligned to align (a power of two >= pageSize).
func (s *space) allocAligned(size, align uint64) (off int64, mem []byte, err error) {
	size = (size + pageSize - 1) &^ (pageSize - 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	next := (uint64(s.next) + align - 1) &^ (align - 1)
	if size == 0 || next+size > fixedBase {
		return 0, nil, errNoSpace
	}
	off = int64(next)
	if err := s.grow(off + int64(size)); err != nil {
		return 0, nil, err
	}
	mem, err = unix.Mmap(int(s.f.Fd()), off, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return 0, nil, err
	}
	s.next += int64(size) + pageSize // a guard page between BOs
	return off, mem, nil
}

// release unmaps mem and returns its pages to the kernel (not once retired: see space.retired).
func (s *space) release(off int64, mem []byte) {
	n := len(mem)
	unix.Munmap(mem)
	if !s.retired.Load() {
		unix.Fallocate(int(s.f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, int64(n))
	}
}

func (s *space) close() { s.f.Close() }
