package kfd

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/mmu"
	"golang.org/x/sys/unix"
)

const (
	allocVRAM     = abi.KFD_IOC_ALLOC_MEM_FLAGS_VRAM
	allocGTT      = abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT
	allocUserptr  = abi.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR
	allocDoorbell = abi.KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL
	allocMMIO     = abi.KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP
	allocDomains  = allocVRAM | allocGTT | allocUserptr | allocDoorbell | allocMMIO

	// kfd_doorbell_process_slice: 1024 doorbells of 8 bytes on GFX9+.
	doorbellSlice = 1024 * 8
)

// bo is a buffer object (kgd_mem) of one process on one GPU.
type bo struct {
	handle  uint64
	gpu     uint32
	va      uint64 // GPU virtual address
	size    uint64
	flags   uint32
	sp      *space // backing memfd (render node space for VRAM/GTT, kfd space for doorbell/MMIO)
	off     int64  // offset in sp = mmap offset
	mem     []byte // the daemon's mapping of the BO; nil for userptr
	userptr uint64 // client CPU address of a USERPTR BO
	mapped  map[uint32]bool
	pa      uint64 // physical address of its mmu segment (0: none yet)
	shared  bool   // mem belongs to the pdd (doorbell slice), not released with the BO
	// dmabuf owns the memory once the BO was exported or when it was imported (dmabuf.go); home
	// is then the GPU whose memory it is (0: gpu).
	dmabuf   *DmaBuf
	imported bool
	home     uint32
	// ipc is the BO's IPC object once it was exported through IPC_EXPORT_HANDLE or when it was
	// imported through IPC_IMPORT_HANDLE (ipc.go); the BO holds one reference on it.
	ipc *ipcObj
	// queueRefs counts queues that acquired this BO (kfd_queue_acquire_buffers: bo_va
	// queue_refcount); UNMAP and FREE get EBUSY while it is non-zero.
	queueRefs int
}

// handle encoding of kfd_priv.h: MAKE_HANDLE(gpu_id, idr_handle) = gpu_id << 32 | idr_handle.
func makeHandle(gpuID, idr uint32) uint64 { return uint64(gpuID)<<32 | uint64(idr) }

func allocMemory(p *Process, c Caller, a *abi.AllocMemoryOfGPUArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	pd := p.pdds[a.GPUID]
	if pd == nil {
		return syscall.EINVAL
	}
	if _, errno := p.bind(a.GPUID); errno != 0 {
		return errno
	}
	dom := allocDomain(a.Flags)
	if dom == 0 || a.Size == 0 {
		return syscall.EINVAL // amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu: no domain
	}
	// kfd_ioctl_alloc_memory_of_gpu checks the DOORBELL and MMIO_REMAP sizes before amdgpu picks
	// the domain, whatever other flags are set.
	if a.Flags&allocDoorbell != 0 && a.Size != doorbellSlice || a.Flags&allocDoorbell == 0 && a.Flags&allocMMIO != 0 && a.Size != pageSize {
		return syscall.EINVAL
	}
	if a.VAAddr&(pageSize-1) != 0 || a.VAAddr+a.Size < a.VAAddr || a.VAAddr+a.Size > gpuvmSize {
		return syscall.EINVAL
	}
	size := (a.Size + pageSize - 1) &^ (pageSize - 1)
	if p.overlaps(a.GPUID, a.VAAddr, size) {
		return syscall.EINVAL // amdgpu_vm_bo_map: "va ... conflict with ..."
	}
	// kfd_ioctl_alloc_memory_of_gpu: "Address ... already allocated by SVM", and for userptr
	// "User Buffer Address ... already allocated by SVM".
	if a.VAAddr != 0 && p.svmOverlaps(a.VAAddr, size) || dom == allocUserptr && p.svmOverlaps(a.MmapOffset, size) {
		p.d.log.Warn("ALLOC over an SVM range", "tgid", p.tgid, "va", hexVA(a.VAAddr), "user", hexVA(a.MmapOffset), "size", size)
		return syscall.EADDRINUSE
	}
	b := &bo{gpu: a.GPUID, va: a.VAAddr, size: size, flags: a.Flags, mapped: map[uint32]bool{}}
	var err error
	switch dom {
	case allocDoorbell:
		if a.Size != doorbellSlice {
			return syscall.EINVAL
		}
		// One doorbell slice per process and GPU (kfd_get_process_doorbells), owned by the pdd
		// and released at teardown; doorbell BOs reference it.
		if errno := p.doorbells(pd); errno != 0 {
			return errno
		}
		b.sp, b.off, b.mem, b.shared = p.kfdSpace, pd.doorbellOff, pd.doorbellMem, true
	case allocMMIO:
		if a.Size != pageSize {
			return syscall.EINVAL
		}
		if b.off, b.mem, err = p.kfdSpace.alloc(size); err != nil {
			return syscall.ENOMEM
		}
		b.sp = p.kfdSpace
	case allocUserptr:
		if a.MmapOffset == 0 || a.MmapOffset&(pageSize-1) != 0 {
			return syscall.EINVAL
		}
		b.userptr = a.MmapOffset
	case allocVRAM, allocGTT:
		if dom == allocVRAM {
			p.d.mu.Lock()
			if p.d.vramUsed[a.GPUID]+size > pd.node.VRAMSize() {
				p.d.mu.Unlock()
				return syscall.ENOMEM // amdgpu_amdkfd_reserve_mem_limit
			}
			p.d.vramUsed[a.GPUID] += size
			p.d.mu.Unlock()
			defer p.d.sys.UsedMemoryChanged()
		} else {
			p.d.mu.Lock()
			p.d.gttUsed[a.GPUID] += size
			p.d.mu.Unlock()
		}
		sp, err := p.renderSpace()
		if err != nil {
			p.unaccount(b)
			return syscall.ENOMEM
		}
		if b.off, b.mem, err = sp.alloc(size); err != nil {
			p.unaccount(b)
			return syscall.ENOMEM
		}
		b.sp = sp
	}
	if err := p.placeBO(b); err != nil {
		p.d.log.Warn("no physical memory for BO", "tgid", p.tgid, "gpu", a.GPUID, "size", size, "err", err)
		if b.mem != nil && !b.shared {
			b.sp.release(b.off, b.mem)
		}
		p.unaccount(b)
		return syscall.ENOMEM
	}
	p.addBO(b)
	a.Handle = b.handle
	switch dom {
	case allocUserptr:
		// mmap_offset stays the user address (the BO is not mmapped)
	default:
		a.MmapOffset = uint64(b.off)
	}
	p.d.log.Debug("memory allocated", "tgid", p.tgid, "handle", hexVA(b.handle), "gpu", b.gpu, "va", hexVA(b.va),
		"size", b.size, "flags", hexVA(uint64(b.flags)), "mmap_offset", hexVA(a.MmapOffset))
	return 0
}

// addBO gives b its handle, MAKE_HANDLE(gpu_id, the next IDR id of its GPU), and enters it in the
// process's tables (kfd_process_device_create_obj_handle). Under p.mu.
func (p *Process) addBO(b *bo) {
	p.nextIDR[b.gpu]++
	b.handle = makeHandle(b.gpu, p.nextIDR[b.gpu])
	p.bos[b.handle] = b
	p.boIdx.insert(b)
}

// allocDomain is the domain an allocation gets when several domain flags are set: VRAM, then
// GTT, then USERPTR (amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu's if/else chain), then DOORBELL,
// then MMIO_REMAP (kfd_ioctl_alloc_memory_of_gpu). 0: no domain flag.
func allocDomain(flags uint32) uint32 {
	for _, d := range []uint32{allocVRAM, allocGTT, allocUserptr, allocDoorbell, allocMMIO} {
		if flags&d != 0 {
			return d
		}
	}
	return 0
}

// hexVA formats an address or handle for logs.
func hexVA(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

// placeBO gives b its physical segment: in its GPU's VRAM window for VRAM, else system memory
// (GTT, doorbell and MMIO pages in the daemon's mapping; userptr pages reached in the client).
func (p *Process) placeBO(b *bo) error {
	var err error
	switch {
	case b.userptr != 0:
		b.pa, err = p.d.phys.AllocSystem(b.size, mmu.Backing{Remote: clientMemory(p.tgid), RemoteAddr: b.userptr})
	case b.flags&allocVRAM != 0:
		b.pa, err = p.d.phys.AllocVRAM(p.d.gpuIndex(b.gpu), b.size, mmu.Backing{Mem: b.mem})
	default:
		b.pa, err = p.d.phys.AllocSystem(b.size, mmu.Backing{Mem: b.mem[:b.size:b.size]})
	}
	return err
}

// pteFlags is get_pte_flags (amdgpu_amdkfd_gpuvm.c) with the GFX 9.4.2 coherence rules of
// gmc_v9_0_get_coherence_flags: always readable, writeable and executable as the allocation
// asked; local VRAM RW (CC if coherent), peer VRAM and system memory NC (UC if coherent or
// uncached), system pages snooped.
func pteFlags(b *bo, gpu uint32) mmu.PTE {
	f := mmu.PTEValid | mmu.PTEReadable
	if b.flags&abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE != 0 {
		f |= mmu.PTEWriteable
	}
	if b.flags&abi.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE != 0 {
		f |= mmu.PTEExecutable
	}
	coherent := b.flags&(abi.KFD_IOC_ALLOC_MEM_FLAGS_COHERENT|abi.KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT) != 0
	uncached := b.flags&abi.KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED != 0
	local := b.gpu == gpu && (b.home == 0 || b.home == gpu) // an import of another GPU's VRAM is peer memory
	switch {
	case b.flags&allocVRAM != 0 && local && uncached:
		f |= mmu.PTEMType(mmu.MTypeUC)
	case b.flags&allocVRAM != 0 && local && coherent:
		f |= mmu.PTEMType(mmu.MTypeCC)
	case b.flags&allocVRAM != 0 && local:
		f |= mmu.PTEMType(mmu.MTypeRW)
	case b.flags&allocVRAM != 0 && (coherent || uncached):
		f |= mmu.PTEMType(mmu.MTypeUC)
	case b.flags&allocVRAM != 0:
		f |= mmu.PTEMType(mmu.MTypeNC)
	case coherent || uncached:
		f |= mmu.PTESystem | mmu.PTESnooped | mmu.PTEMType(mmu.MTypeUC)
	default:
		f |= mmu.PTESystem | mmu.PTESnooped | mmu.PTEMType(mmu.MTypeNC)
	}
	return f
}

// clientMemory reaches a client's userptr pages (process_vm_readv/writev): mmu.Remote.
type clientMemory int

func (c clientMemory) ReadAt(buf []byte, addr uint64) error {
	if len(buf) == 0 {
		return nil
	}
	l := []unix.Iovec{{Base: &buf[0]}}
	l[0].SetLen(len(buf))
	r := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMReadv(int(c), l, r, 0)
	if err == nil && n != len(buf) {
		err = fmt.Errorf("process_vm_readv: %d of %d bytes", n, len(buf))
	}
	return err
}

// ReadV and WriteV are mmu.RemoteV: one process_vm_readv/writev with an iovec per piece (at most
// IOV_MAX, 1024, per call).
func (c clientMemory) ReadV(bufs [][]byte, addrs []uint64) (int, error) {
	return c.vec(bufs, addrs, false)
}

func (c clientMemory) WriteV(bufs [][]byte, addrs []uint64) (int, error) {
	return c.vec(bufs, addrs, true)
}

const iovMax = 1024 // UIO_MAXIOV

func (c clientMemory) vec(bufs [][]byte, addrs []uint64, write bool) (int, error) {
	done := 0
	for len(bufs) > 0 {
		k := min(len(bufs), iovMax)
		// The CP's and SDMA's accesses have a few pieces: their iovecs stay on the stack (no
		// allocation per packet), a wave's runs may need the heap.
		var lb [8]unix.Iovec
		var rb [8]unix.RemoteIovec
		l, r := lb[:0], rb[:0]
		if k > len(lb) {
			l, r = make([]unix.Iovec, 0, k), make([]unix.RemoteIovec, 0, k)
		}
		total := 0
		for i, b := range bufs[:k] {
			if len(b) == 0 {
				continue
			}
			v := unix.Iovec{Base: &b[0]}
			v.SetLen(len(b))
			l = append(l, v)
			r = append(r, unix.RemoteIovec{Base: uintptr(addrs[i]), Len: len(b)})
			total += len(b)
		}
		// (Called directly: through a function value the iovecs would escape.)
		name := "process_vm_readv"
		var n int
		var err error
		if write {
			name = "process_vm_writev"
			n, err = unix.ProcessVMWritev(int(c), l, r, 0)
		} else {
			n, err = unix.ProcessVMReadv(int(c), l, r, 0)
		}
		if err == nil && n != total {
			err = fmt.Errorf("%s: %d of %d bytes", name, n, total)
		}
		if err != nil {
			// The pieces moved whole before the error (n counts bytes; a partial piece is not moved).
			i := 0
			for ; i < k && n >= len(bufs[i]); i++ {
				n -= len(bufs[i])
			}
			return done + i, err
		}
		done += k
		bufs, addrs = bufs[k:], addrs[k:]
	}
	return done, nil
}

func (c clientMemory) WriteAt(buf []byte, addr uint64) error {
	if len(buf) == 0 {
		return nil
	}
	l := []unix.Iovec{{Base: &buf[0]}}
	l[0].SetLen(len(buf))
	r := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMWritev(int(c), l, r, 0)
	if err == nil && n != len(buf) {
		err = fmt.Errorf("process_vm_writev: %d of %d bytes", n, len(buf))
	}
	return err
}

func (p *Process) unaccount(b *bo) {
	switch allocDomain(b.flags) {
	case allocVRAM:
		p.d.mu.Lock()
		p.d.vramUsed[b.gpu] -= b.size
		p.d.mu.Unlock()
		p.d.sys.UsedMemoryChanged()
	case allocGTT:
		p.d.mu.Lock()
		p.d.gttUsed[b.gpu] -= b.size
		p.d.mu.Unlock()
	}
}

func (p *Process) overlaps(gpu uint32, va, size uint64) bool {
	if va == 0 {
		return false // no GPU VA yet (doorbell/MMIO before placement)
	}
	if p.boIdx.overlapsOn(gpu, va, size) {
		return true
	}
	pd := p.pdds[gpu]
	return pd != nil && pd.gemOverlaps(va, size) // a GEM mapping of the render node (gem.go)
}

func freeMemory(p *Process, c Caller, a *abi.FreeMemoryOfGPUArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.bos[a.Handle]
	if b == nil {
		return syscall.EINVAL
	}
	if p.evt.pageBO == b {
		// kfd_ioctl_free_memory_of_gpu: "Free signal BO is not allowed"; it is freed at process
		// termination.
		return syscall.EPERM
	}
	if b.queueRefs > 0 || len(b.mapped) > 0 {
		// amdgpu_amdkfd_gpuvm_free_memory_of_gpu: "BO VA ... is still mapped" (libhsakmt
		// unmaps before it frees).
		return syscall.EBUSY
	}
	p.freeBOLocked(a.Handle, b)
	return 0
}

// freeBOLocked releases an unmapped BO: no page table points at its segment, so no engine can
// reach its memory (every Unmap waited for the engines' TLBs).
func (p *Process) freeBOLocked(h uint64, b *bo) {
	delete(p.bos, h)
	p.boIdx.remove(b)
	if b.ipc != nil {
		p.d.ipcPut(b.ipc) // kfd_ipc_obj_put in amdgpu_amdkfd_gpuvm_free_memory_of_gpu
		b.ipc = nil
	}
	if b.dmabuf != nil {
		// The memory is the dma-buf's: its last reference frees it (and its accounting).
		b.pa, b.mem = 0, nil
		b.dmabuf.Put()
		return
	}
	if b.pa != 0 {
		if err := p.d.phys.Free(b.pa); err != nil {
			p.d.log.Error("BO segment lost", "tgid", p.tgid, "handle", hexVA(h), "err", err)
		}
		b.pa = 0
	}
	mem := b.mem
	b.mem = nil
	p.unaccount(b)
	if mem != nil && !b.shared {
		b.sp.release(b.off, mem)
	}
}

// mapMemory is kfd_ioctl_map_memory_to_gpu: devices from n_success on, restartable.
func mapMemory(p *Process, c Caller, a *abi.MapMemoryToGPUArgs) syscall.Errno {
	return mapUnmap(p, c, a, true)
}

// unmapMemory is kfd_ioctl_unmap_memory_from_gpu, whose struct is the map one's.
func unmapMemory(p *Process, c Caller, a *abi.UnmapMemoryFromGPUArgs) syscall.Errno {
	return mapUnmap(p, c, (*abi.MapMemoryToGPUArgs)(a), false)
}

func mapUnmap(p *Process, c Caller, a *abi.MapMemoryToGPUArgs, doMap bool) syscall.Errno {
	if a.NDevices == 0 || a.NSuccess > a.NDevices || a.NDevices > 1024 {
		return syscall.EINVAL
	}
	raw := make([]byte, 4*a.NDevices)
	if err := c.ReadMemory(a.DeviceIDsArrayPtr, raw); err != nil {
		return syscall.EFAULT
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.bos[a.Handle]
	if b == nil || p.pdds[b.gpu] == nil {
		return syscall.EINVAL
	}
	var errno syscall.Errno
	for i := a.NSuccess; i < a.NDevices; i++ {
		id := binary.LittleEndian.Uint32(raw[4*i:])
		pd := p.pdds[id]
		if pd == nil {
			errno = syscall.EINVAL
			break
		}
		if !pd.acquired {
			errno = syscall.ENODEV
			break
		}
		if doMap {
			if !b.mapped[id] { // amdgpu_amdkfd_gpuvm_map_memory_to_gpu skips a mapped attachment
				if err := pd.vm.Map(b.va, b.size, b.pa, pteFlags(b, id)); err != nil {
					// amdgpu_vm_bo_map: "va ... conflict with ..." or out of range
					p.d.log.Warn("GPU mapping refused", "tgid", p.tgid, "gpu", id, "va", hexVA(b.va), "size", b.size, "err", err)
					errno = syscall.EINVAL
					break
				}
				b.mapped[id] = true
			}
		} else {
			if !b.mapped[id] {
				errno = syscall.EINVAL // amdgpu_amdkfd_gpuvm_unmap_memory_from_gpu: not mapped
				break
			}
			if b.queueRefs > 0 {
				errno = syscall.EBUSY // "bo_va->queue_refcount": a queue still uses it
				break
			}
			if err := pd.vm.Unmap(b.va, b.size); err != nil {
				p.d.log.Error("GPU unmapping failed", "tgid", p.tgid, "gpu", id, "va", hexVA(b.va), "err", err)
			}
			delete(b.mapped, id)
		}
		a.NSuccess = i + 1
	}
	return errno
}

// doorbells allocates the process's doorbell slice on a GPU (kfd_alloc_process_doorbells).
//
// Its mmap offset has the low 32 bits clear, one 4 GiB window per GPU, as amdkfd's
// KFD_MMAP_TYPE_DOORBELL | KFD_MMAP_GPU_ID(gpu_id) has: CREATE_QUEUE returns it ORed with the
// doorbell's byte offset in the slice, and libhsakmt (hsaKmtCreateQueue) splits that value with
// a mask of the slice size, which is still 0 for the first queue of a node (map_doorbell sets
// it afterwards), so the mask is then ~0xFFFFFFFF: only a 4 GiB aligned offset works for both.
// (The kernel's own values, with bits 62-63 set, are beyond what a memfd can be mapped at.)
func (p *Process) doorbells(pd *pdd) syscall.Errno {
	if pd.doorbellMem != nil {
		return 0
	}
	idx := 0
	for i, n := range p.d.sys.GPUs() {
		if n.GPUID == pd.gpuID {
			idx = i
		}
	}
	off := int64(fixedBase) + int64(idx)<<32
	mem, err := p.kfdSpace.mapAt(off, doorbellSlice)
	if err != nil {
		return syscall.ENOMEM
	}
	pd.doorbellOff, pd.doorbellMem = off, mem
	return 0
}
