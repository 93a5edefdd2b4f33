package kfd

import (
	"encoding/binary"
	"strconv"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
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
	shared  bool // mem belongs to the pdd (doorbell slice), not released with the BO
	// queueRefs counts queues that acquired this BO (kfd_queue_acquire_buffers: bo_va
	// queue_refcount); UNMAP and FREE get EBUSY while it is non-zero.
	queueRefs int
}

// handle encoding of kfd_priv.h: MAKE_HANDLE(gpu_id, idr_handle) = gpu_id << 32 | idr_handle.
func makeHandle(gpuID, idr uint32) uint64 { return uint64(gpuID)<<32 | uint64(idr) }

func allocMemory(p *Process, c Caller, arg []byte) syscall.Errno {
	var a abi.AllocMemoryOfGPUArgs
	decode(arg, &a)
	p.mu.Lock()
	defer p.mu.Unlock()
	pd := p.pdds[a.GPUID]
	if pd == nil {
		return syscall.EINVAL
	}
	if _, errno := p.bind(a.GPUID); errno != 0 {
		return errno
	}
	dom := a.Flags & allocDomains
	if dom == 0 || dom&(dom-1) != 0 || a.Size == 0 {
		return syscall.EINVAL // amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu: exactly one domain
	}
	if a.VAAddr&(pageSize-1) != 0 || a.VAAddr+a.Size < a.VAAddr || a.VAAddr+a.Size > gpuvmSize {
		return syscall.EINVAL
	}
	size := (a.Size + pageSize - 1) &^ (pageSize - 1)
	if p.overlaps(a.GPUID, a.VAAddr, size) {
		return syscall.EINVAL // amdgpu_vm_bo_map: "va ... conflict with ..."
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
		}
		sp := p.spaces[pd.node.RenderMinor()]
		if sp == nil {
			sp, err = newSpace("render")
			if err != nil {
				p.unaccount(b)
				return syscall.ENOMEM
			}
			p.spaces[pd.node.RenderMinor()] = sp
		}
		if b.off, b.mem, err = sp.alloc(size); err != nil {
			p.unaccount(b)
			return syscall.ENOMEM
		}
		b.sp = sp
	}
	p.nextIDR[a.GPUID]++
	b.handle = makeHandle(a.GPUID, p.nextIDR[a.GPUID])
	p.vmMu.Lock()
	p.bos[b.handle] = b
	p.vmMu.Unlock()
	a.Handle = b.handle
	switch dom {
	case allocUserptr:
		// mmap_offset stays the user address (the BO is not mmapped)
	default:
		a.MmapOffset = uint64(b.off)
	}
	encode(arg, a)
	p.d.log.Debug("memory allocated", "tgid", p.tgid, "handle", hexVA(b.handle), "gpu", b.gpu, "va", hexVA(b.va),
		"size", b.size, "flags", hexVA(uint64(b.flags)), "mmap_offset", hexVA(a.MmapOffset))
	return 0
}

// hexVA formats an address or handle for logs.
func hexVA(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

func (p *Process) unaccount(b *bo) {
	if b.flags&allocVRAM != 0 {
		p.d.mu.Lock()
		p.d.vramUsed[b.gpu] -= b.size
		p.d.mu.Unlock()
		p.d.sys.UsedMemoryChanged()
	}
}

func (p *Process) overlaps(gpu uint32, va, size uint64) bool {
	if va == 0 {
		return false // no GPU VA yet (doorbell/MMIO before placement)
	}
	for _, b := range p.bos {
		if b.gpu == gpu && b.va != 0 && va < b.va+b.size && b.va < va+size {
			return true
		}
	}
	return false
}

func freeMemory(p *Process, c Caller, arg []byte) syscall.Errno {
	var a abi.FreeMemoryOfGPUArgs
	decode(arg, &a)
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
	if b.queueRefs > 0 {
		return syscall.EBUSY
	}
	p.freeBOLocked(a.Handle, b)
	return 0
}

func (p *Process) freeBOLocked(h uint64, b *bo) {
	p.vmMu.Lock() // no engine access is in flight once we hold it
	delete(p.bos, h)
	mem := b.mem
	b.mem = nil
	p.vmMu.Unlock()
	p.unaccount(b)
	if mem != nil && !b.shared {
		b.sp.release(b.off, mem)
	}
}

// mapMemory is kfd_ioctl_map_memory_to_gpu: devices from n_success on, restartable.
func mapMemory(p *Process, c Caller, arg []byte) syscall.Errno { return mapUnmap(p, c, arg, true) }

func unmapMemory(p *Process, c Caller, arg []byte) syscall.Errno { return mapUnmap(p, c, arg, false) }

func mapUnmap(p *Process, c Caller, arg []byte, doMap bool) syscall.Errno {
	var a abi.MapMemoryToGPUArgs
	decode(arg, &a)
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
	p.vmMu.Lock()
	defer p.vmMu.Unlock()
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
			b.mapped[id] = true
		} else {
			if !b.mapped[id] {
				errno = syscall.EINVAL // amdgpu_amdkfd_gpuvm_unmap_memory_from_gpu: not mapped
				break
			}
			if b.queueRefs > 0 {
				errno = syscall.EBUSY // "bo_va->queue_refcount": a queue still uses it
				break
			}
			delete(b.mapped, id)
		}
		a.NSuccess = i + 1
	}
	encode(arg, a)
	return errno
}

// gpuAccess finds the BO mapped on gpu that holds [va, va+n) and returns the daemon's view of it
// (VRAM, GTT, doorbell) or, for userptr memory, the client address to reach with process_vm.
func (p *Process) gpuAccess(gpu uint32, va, n uint64) (mem []byte, userptr uint64, ok bool) {
	for _, b := range p.bos {
		if b.mapped[gpu] && va >= b.va && va+n <= b.va+b.size && va+n >= va {
			if b.userptr != 0 {
				return nil, b.userptr + (va - b.va), true
			}
			if b.mem != nil {
				return b.mem[va-b.va : va-b.va+n], 0, true
			}
		}
	}
	return nil, 0, false
}

// readUser/writeUser reach client memory of userptr BOs (process_vm_readv/writev).
func (p *Process) readUser(addr uint64, buf []byte) bool {
	l := []unix.Iovec{{Base: &buf[0]}}
	l[0].SetLen(len(buf))
	r := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMReadv(p.tgid, l, r, 0)
	return err == nil && n == len(buf)
}

func (p *Process) writeUser(addr uint64, buf []byte) bool {
	l := []unix.Iovec{{Base: &buf[0]}}
	l[0].SetLen(len(buf))
	r := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMWritev(p.tgid, l, r, 0)
	return err == nil && n == len(buf)
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
