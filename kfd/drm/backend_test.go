package drm

import (
	"encoding/binary"
	"fmt"
	"sync"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// fakeBackend is a Backend over Go memory: buffers are byte slices, the VM maps 4 KiB pages to
// (buffer, offset). It counts VRAM and GTT against limits so placement fallbacks can be tested.
type fakeBackend struct {
	mu              sync.Mutex
	vramMax, gttMax uint64
	vram, gtt       uint64
	next            uint64
	live            map[*Buffer]bool
	pages           map[uint64]page // VA page -> backing
	conflicts       map[uint64]bool // pages a "kfd BO" holds
	pm4             []IB            // COMPUTE IBs RunPM4 was given
	exports         []Export        // ExportFD's calls
	exportErrno     syscall.Errno   // what ExportFD returns (0: fd 100+n)
	exported        []*Buffer       // the buffer of fd 100+n (n from 1)
	keys            map[*Buffer]uint64
}

type page struct {
	b   *Buffer // nil: PRT (no memory)
	off uint64
	w   bool
}

func newFakeBackend(vramMax, gttMax uint64) *fakeBackend {
	return &fakeBackend{vramMax: vramMax, gttMax: gttMax, next: 1 << 20, live: map[*Buffer]bool{},
		pages: map[uint64]page{}, conflicts: map[uint64]bool{}}
}

func (fb *fakeBackend) Alloc(domains uint32, size uint64) (*Buffer, error) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	var dom uint32
	switch {
	case domains&abi.AMDGPU_GEM_DOMAIN_VRAM != 0 && fb.vram+size <= fb.vramMax:
		dom, fb.vram = abi.AMDGPU_GEM_DOMAIN_VRAM, fb.vram+size
	case domains&abi.AMDGPU_GEM_DOMAIN_GTT != 0 && fb.gtt+size <= fb.gttMax:
		dom, fb.gtt = abi.AMDGPU_GEM_DOMAIN_GTT, fb.gtt+size
	case domains&abi.AMDGPU_GEM_DOMAIN_CPU != 0 || domains == 0:
		dom = abi.AMDGPU_GEM_DOMAIN_CPU
	default:
		return nil, ErrNoMemory
	}
	b := &Buffer{Domain: dom, Size: size, Offset: fb.next}
	if size <= 1<<20 { // big objects get no bytes (tests never touch them)
		b.Mem = make([]byte, size)
	}
	fb.next += size + 4096
	fb.live[b] = true
	return b, nil
}

func (fb *fakeBackend) Free(b *Buffer) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if !fb.live[b] {
		panic("double free")
	}
	for va, p := range fb.pages {
		if p.b == b {
			panic(fmt.Sprintf("freeing a buffer still mapped at %#x", va))
		}
	}
	delete(fb.live, b)
	switch b.Domain {
	case abi.AMDGPU_GEM_DOMAIN_VRAM:
		fb.vram -= b.Size
	case abi.AMDGPU_GEM_DOMAIN_GTT:
		fb.gtt -= b.Size
	}
}

func (fb *fakeBackend) Map(va uint64, b *Buffer, offset, size uint64, flags uint32) error {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	for p := va; p < va+size; p += 4096 {
		if _, ok := fb.pages[p]; ok || fb.conflicts[p] {
			return ErrConflict
		}
	}
	for p := uint64(0); p < size; p += 4096 {
		fb.pages[va+p] = page{b: b, off: offset + p, w: flags&abi.AMDGPU_VM_PAGE_WRITEABLE != 0}
	}
	return nil
}

func (fb *fakeBackend) Unmap(va, size uint64) error {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	for p := va; p < va+size; p += 4096 {
		delete(fb.pages, p)
	}
	return nil
}

func (fb *fakeBackend) Engine() (GPUMemory, func(), error) { return fakeGPU{fb}, func() {}, nil }

// RunPM4 records the IBs; an IB of 0 dwords "faults".
func (fb *fakeBackend) RunPM4(ibs []IB, stop <-chan struct{}) error {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	for _, ib := range ibs {
		if ib.Dwords == 0 {
			return fmt.Errorf("fault in the PM4 IB at %#x", ib.VA)
		}
	}
	fb.pm4 = append(fb.pm4, ibs...)
	return nil
}
func (fb *fakeBackend) Clock() uint64 { return 42 }

func (fb *fakeBackend) ExportFD(m Memory, b *Buffer, ex Export) (int32, syscall.Errno) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if !fb.live[b] {
		panic("ExportFD of a freed buffer")
	}
	fb.exports = append(fb.exports, ex)
	if fb.exportErrno != 0 {
		return 0, fb.exportErrno
	}
	fb.exported = append(fb.exported, b)
	fd := int32(100 + len(fb.exports))
	if fb.keys == nil {
		fb.keys = map[*Buffer]uint64{}
	}
	if fb.keys[b] == 0 {
		fb.keys[b] = uint64(fd)
	}
	return fd, 0
}

// ImportFD: fd 100+n is the nth export; the import is a new buffer over the same bytes.
func (fb *fakeBackend) ImportFD(m Memory, fd int32) (*Buffer, uint64, syscall.Errno) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	n := int(fd) - 100
	if n < 1 || n > len(fb.exported) {
		return nil, 0, syscall.EINVAL
	}
	src := fb.exported[n-1]
	b := &Buffer{Domain: src.Domain, Size: src.Size, Offset: src.Offset, Mem: src.Mem}
	fb.live[b] = true
	key := fb.keys[src]
	fb.keys[b] = key
	return b, key, 0
}

func (fb *fakeBackend) BufferKey(b *Buffer) uint64 {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return fb.keys[b]
}

func (fb *fakeBackend) counts() (live, mapped int) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return len(fb.live), len(fb.pages)
}

// fakeGPU translates through the fake VM; an access to an unmapped, PRT, CPU-domain or read-only
// (for writes) page faults.
type fakeGPU struct{ fb *fakeBackend }

func (g fakeGPU) span(va uint64, n int, write bool) ([]byte, error) {
	g.fb.mu.Lock()
	defer g.fb.mu.Unlock()
	p, ok := g.fb.pages[va&^4095]
	if !ok || p.b == nil || p.b.Mem == nil || p.b.Domain == abi.AMDGPU_GEM_DOMAIN_CPU || write && !p.w ||
		va%4096+uint64(n) > 4096 {
		return nil, fmt.Errorf("fault at %#x", va)
	}
	o := p.off + va%4096
	return p.b.Mem[o : o+uint64(n)], nil
}

func (g fakeGPU) Read(va uint64, b []byte) error {
	for i := 0; i < len(b); {
		n := min(len(b)-i, int(4096-(va+uint64(i))%4096))
		s, err := g.span(va+uint64(i), n, false)
		if err != nil {
			return err
		}
		copy(b[i:], s)
		i += n
	}
	return nil
}

func (g fakeGPU) Write(va uint64, b []byte) error {
	for i := 0; i < len(b); {
		n := min(len(b)-i, int(4096-(va+uint64(i))%4096))
		s, err := g.span(va+uint64(i), n, true)
		if err != nil {
			return err
		}
		copy(s, b[i:])
		i += n
	}
	return nil
}

func (g fakeGPU) Atomic(va uint64, size int, f func(uint64) uint64) (uint64, error) {
	s, err := g.span(va, size, f != nil)
	if err != nil {
		return 0, err
	}
	g.fb.mu.Lock()
	defer g.fb.mu.Unlock()
	var o uint64
	if size == 4 {
		o = uint64(binary.LittleEndian.Uint32(s))
	} else {
		o = binary.LittleEndian.Uint64(s)
	}
	if f != nil {
		if size == 4 {
			binary.LittleEndian.PutUint32(s, uint32(f(o)))
		} else {
			binary.LittleEndian.PutUint64(s, f(o))
		}
	}
	return o, nil
}

// ioctl issues one ioctl on a fresh file of d without a backend (no GEM objects can exist).
func ioctl(d *Device, m Memory, cmd uint32, arg []byte) syscall.Errno {
	return NewFile(d, nil, nil).Ioctl(m, cmd, arg)
}
