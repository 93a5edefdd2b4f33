package kmt

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"golang.org/x/sys/unix"
)

// MemKind is the domain of a buffer object.
type MemKind int

const (
	KindVRAM     MemKind = iota // device memory (KFD_IOC_ALLOC_MEM_FLAGS_VRAM)
	KindGTT                     // system memory through the GART (..._GTT)
	KindUserptr                 // anonymous process memory registered with the GPU (..._USERPTR)
	KindDoorbell                // the process's doorbell page (..._DOORBELL)
)

func (k MemKind) String() string {
	return [...]string{"vram", "gtt", "userptr", "doorbell"}[k]
}

// MemFlags are allocation properties, translated to KFD_IOC_ALLOC_MEM_FLAGS_* the way fmm.c's
// fmm_translate_hsa_to_ioc_flags does.
type MemFlags uint32

const (
	// HostAccess makes VRAM CPU-mappable (PUBLIC) and maps it at its GPU address; GTT and
	// userptr memory are always CPU-accessible.
	HostAccess  MemFlags = 1 << iota
	Executable           // EXECUTABLE
	ReadOnly             // not WRITABLE
	Coherent             // COHERENT (fine-grained)
	Uncached             // UNCACHED
	AQLQueueMem          // AQL_QUEUE_MEM (ring buffers of AQL queues)
)

func (f MemFlags) ioc() uint32 {
	var v uint32
	if f&ReadOnly == 0 {
		v |= abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
	}
	if f&Executable != 0 {
		v |= abi.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE
	}
	if f&Coherent != 0 {
		v |= abi.KFD_IOC_ALLOC_MEM_FLAGS_COHERENT
	}
	if f&Uncached != 0 {
		v |= abi.KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED
	}
	if f&AQLQueueMem != 0 {
		v |= abi.KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM
	}
	return v
}

// Memory is one buffer object at a GPU virtual address. On a dGPU its GPU address is also the
// address of its CPU mapping (fmm.c maps VRAM/GTT BOs over the reserved SVM aperture), so GPU
// pointers and CPU pointers are the same numbers.
type Memory struct {
	d      *Device
	Kind   MemKind
	GPU    *GPU   // the GPU the BO was allocated on
	Handle uint64 // kfd handle (gpu_id << 32 | idr)
	VA     uint64 // GPU virtual address (= CPU address when CPU-mapped)
	Size   uint64 // page-rounded size
	Flags  uint32 // KFD_IOC_ALLOC_MEM_FLAGS_*
	// MmapOffset is the offset ALLOC returned for mapping the BO through its device file (the
	// user address for userptr memory).
	MmapOffset uint64

	area  region
	vaOff uint64
	cpu   bool

	mu     sync.Mutex
	mapped map[uint32]bool
	freed  bool
}

// Bytes is the CPU view of the memory, nil if it is not CPU-accessible.
func (m *Memory) Bytes() []byte {
	if !m.cpu {
		return nil
	}
	return m.area.bytes()
}

// HostAccessible reports whether Bytes is non-nil.
func (m *Memory) HostAccessible() bool { return m.cpu }

// MappedTo lists the gpu_ids the memory is mapped to.
func (m *Memory) MappedTo() []uint32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mappedIDsLocked()
}

func alignFor(size uint64) uint64 {
	// fmm.c aligns large allocations to huge pages so the GPU can use 2 MiB PTEs.
	if size >= hugePage {
		return hugePage
	}
	return pageSize
}

func roundPage(n uint64) uint64 { return (n + pageSize - 1) &^ (pageSize - 1) }

// AllocVRAM allocates device memory on g (__fmm_allocate_device with the VRAM domain; always
// NO_SUBSTITUTE, PUBLIC when HostAccess is asked for). The memory is not GPU-mapped yet.
func (d *Device) AllocVRAM(g *GPU, size uint64, flags MemFlags) (*Memory, error) {
	ioc := abi.KFD_IOC_ALLOC_MEM_FLAGS_VRAM | abi.KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE | flags.ioc()
	if flags&HostAccess != 0 {
		ioc |= abi.KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC
	}
	return d.alloc(g, KindVRAM, size, ioc, flags&HostAccess != 0)
}

// AllocGTT allocates system memory reachable by g through the GART (fmm.c's non-paged host path),
// CPU-mapped through the render node at its GPU address.
func (d *Device) AllocGTT(g *GPU, size uint64, flags MemFlags) (*Memory, error) {
	return d.alloc(g, KindGTT, size, abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT|flags.ioc(), true)
}

// RegisterUserptr maps size bytes of anonymous memory at a fresh GPU VA and registers it with g as
// a userptr BO (fmm.c's paged host path: mmap anonymous at the aperture address, then
// ALLOC_MEMORY_OF_GPU USERPTR with mmap_offset = the CPU address).
func (d *Device) RegisterUserptr(g *GPU, size uint64, flags MemFlags) (*Memory, error) {
	return d.allocAt(g, KindUserptr, size, abi.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR|flags.ioc(), true, -1, 0)
}

// RegisterShared maps size bytes of the file fd at offset off (MAP_SHARED) at a fresh GPU VA and
// registers them with g as a userptr BO: host memory another process maps too (a memfd or shm
// file), so GPU work of both processes meets in it, as with hsaKmtRegisterMemory of a shared
// mapping.
func (d *Device) RegisterShared(g *GPU, fd int, off int64, size uint64, flags MemFlags) (*Memory, error) {
	if fd < 0 {
		return nil, fmt.Errorf("%w: fd %d", ErrInvalidArgument, fd)
	}
	return d.allocAt(g, KindUserptr, size, abi.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR|flags.ioc(), true, fd, off)
}

func (d *Device) alloc(g *GPU, kind MemKind, size uint64, ioc uint32, cpu bool) (*Memory, error) {
	return d.allocAt(g, kind, size, ioc, cpu, -1, 0)
}

// allocAt is alloc; a userptr BO's pages are the file fd at fileOff when fd >= 0, else anonymous.
func (d *Device) allocAt(g *GPU, kind MemKind, size uint64, ioc uint32, cpu bool, fd int, fileOff int64) (*Memory, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	if g == nil || d.byID[g.ID()] != g {
		return nil, fmt.Errorf("%w: GPU not opened by this device", ErrInvalidArgument)
	}
	if size == 0 {
		return nil, fmt.Errorf("%w: size 0", ErrInvalidArgument)
	}
	size = roundPage(size)
	off, err := d.va.alloc(size, alignFor(size))
	if err != nil {
		return nil, err
	}
	m := &Memory{d: d, Kind: kind, GPU: g, Size: size, Flags: ioc, area: d.aperture.sub(off, size), vaOff: off,
		mapped: map[uint32]bool{}}
	m.VA = m.area.va()
	a := abi.AllocMemoryOfGPUArgs{VAAddr: m.VA, Size: size, GPUID: g.ID(), Flags: ioc}
	if kind == KindUserptr {
		if err := m.area.mapFixed(fd, fileOff, unix.PROT_READ|unix.PROT_WRITE, fd >= 0); err != nil {
			d.va.release(off)
			return nil, fmt.Errorf("kmt: mmap anonymous memory for userptr: %w", err)
		}
		a.MmapOffset = m.VA
	}
	if err := ioctl(d.kfd, "ALLOC_MEMORY_OF_GPU", abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); err != nil {
		m.area.unmapToReserved()
		d.va.release(off)
		return nil, err
	}
	m.Handle, m.MmapOffset = a.Handle, a.MmapOffset
	if cpu && kind != KindUserptr {
		// fmm.c: the CPU mapping of VRAM/GTT is mmap(render_fd, mmap_offset) at the BO's address.
		prot := unix.PROT_READ | unix.PROT_WRITE
		if err := m.area.mapFixed(g.RenderFD, int64(a.MmapOffset), prot, true); err != nil {
			f := abi.FreeMemoryOfGPUArgs{Handle: a.Handle}
			ioctl(d.kfd, "FREE_MEMORY_OF_GPU", abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &f)
			m.area.unmapToReserved()
			d.va.release(off)
			return nil, fmt.Errorf("kmt: mmap of BO through %s: %w", fmt.Sprintf("renderD%d", g.Node.RenderMinor()), err)
		}
	}
	m.cpu = cpu
	d.mu.Lock()
	d.mems[m] = struct{}{}
	d.mu.Unlock()
	return m, nil
}

// Map maps the memory into the GPUs' page tables (hsaKmtMapMemoryToGPUNodes); with no GPUs given,
// into the GPU it was allocated on. The ioctl is restarted from n_success when interrupted, as the
// driver allows.
func (m *Memory) Map(gpus ...*GPU) error { return m.mapUnmap(true, gpus) }

// Unmap removes the memory from the GPUs' page tables; with no GPUs given, from every GPU it is
// mapped to.
func (m *Memory) Unmap(gpus ...*GPU) error { return m.mapUnmap(false, gpus) }

func (m *Memory) mapUnmap(do bool, gpus []*GPU) error {
	if err := m.d.check(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed {
		return ErrFreed
	}
	var ids []uint32
	for _, g := range gpus {
		if g == nil {
			return fmt.Errorf("%w: nil GPU", ErrInvalidArgument)
		}
		ids = append(ids, g.ID())
	}
	if len(gpus) == 0 {
		if do {
			ids = []uint32{m.GPU.ID()}
		} else {
			ids = m.mappedIDsLocked()
		}
	}
	return m.mapLocked(do, ids)
}

func (m *Memory) mappedIDsLocked() []uint32 {
	var ids []uint32
	for _, g := range m.d.gpus {
		if m.mapped[g.ID()] {
			ids = append(ids, g.ID())
		}
	}
	return ids
}

func (m *Memory) mapLocked(do bool, ids []uint32) error {
	if len(ids) == 0 {
		return nil
	}
	name, cmd := "MAP_MEMORY_TO_GPU", abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU
	if !do {
		name, cmd = "UNMAP_MEMORY_FROM_GPU", abi.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	a := abi.MapMemoryToGPUArgs{Handle: m.Handle, DeviceIDsArrayPtr: addrOf(ids, &pin), NDevices: uint32(len(ids))}
	// kfd_ioctl_map_memory_to_gpu resumes at n_success: ioctl() re-issues the call on EINTR with
	// the n_success the driver copied back, so devices already done are not redone.
	err := ioctl(m.d.kfd, name, cmd, &a)
	for _, id := range ids[:min(int(a.NSuccess), len(ids))] {
		if do {
			m.mapped[id] = true
		} else {
			delete(m.mapped, id)
		}
	}
	return err
}

// Free unmaps the memory from every GPU, removes the CPU mapping, frees the BO and returns the
// address range (hsaKmtFreeMemory).
func (m *Memory) Free() error {
	if err := m.d.check(); err != nil {
		return err
	}
	return m.release()
}

func (m *Memory) release() error {
	m.mu.Lock()
	if m.freed {
		m.mu.Unlock()
		return ErrFreed
	}
	first := m.mapLocked(false, m.mappedIDsLocked())
	m.freed = true
	m.mu.Unlock()
	if m.Handle != 0 {
		f := abi.FreeMemoryOfGPUArgs{Handle: m.Handle}
		if err := ioctl(m.d.kfd, "FREE_MEMORY_OF_GPU", abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &f); err != nil && first == nil {
			first = err
		}
	}
	m.area.unmapToReserved()
	m.d.va.release(m.vaOff)
	m.d.mu.Lock()
	delete(m.d.mems, m)
	m.d.mu.Unlock()
	return first
}

// AvailableMemory is the VRAM still available to the process on g (AVAILABLE_MEMORY, 1.9+).
func (d *Device) AvailableMemory(g *GPU) (uint64, error) {
	if err := d.check(); err != nil {
		return 0, err
	}
	a := abi.GetAvailableMemoryArgs{GPUID: g.ID()}
	err := ioctl(d.kfd, "AVAILABLE_MEMORY", abi.AMDKFD_IOC_AVAILABLE_MEMORY, &a)
	return a.Available, err
}

// Lookup finds the memory that contains va.
func (d *Device) Lookup(va uint64) (*Memory, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for m := range d.mems {
		if va >= m.VA && va < m.VA+m.Size {
			return m, true
		}
	}
	return nil, false
}
