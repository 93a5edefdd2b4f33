package kfd

import (
	"errors"
	"os"
	"sync"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// DMA-buf export and import (kfd_chardev.c: kfd_ioctl_export_dmabuf, kfd_ioctl_get_dmabuf_info,
// kfd_ioctl_import_dmabuf; amdgpu_amdkfd_gpuvm.c; drm_prime.c for the render node's PRIME export).
//
// A DmaBuf is the dma_buf of an exported amdgpu_bo together with the BO's memory: from the first
// export on, the memory of the KFD BO or GEM object belongs to the DmaBuf, and it is released when
// the last reference goes. References: the exporting BO or GEM object (until it is freed), every
// open of the dma-buf's file (the fd the client holds: package fs serves it as
// MNT/dev/dma_buf/ID), and every BO imported from it, in any process. So memory outlives a freed
// exporter while an fd or an importer holds it, as amdgpu's dma_buf holds its GEM object.
//
// The fd itself is installed by the caller (Installer): only a call that reached the driver
// through kfdemu exec's seccomp supervisor can install one (a FUSE reply cannot); elsewhere the
// exporting ioctls get EOPNOTSUPP, as before any of this existed (README, deviations).

// Installer is implemented by a Caller that can give the client a new file descriptor: an ioctl
// that reached the driver through the seccomp supervisor of `kfdemu exec` (fs/supervise.go).
type Installer interface {
	// InstallDmaBuf opens b's file and installs it in the caller's fd table (O_CLOEXEC when
	// cloexec) and returns the new fd number.
	InstallDmaBuf(b *DmaBuf, cloexec bool) (int, error)
	// InstallFile installs a duplicate of f (SMI_EVENTS' socket).
	InstallFile(f *os.File, cloexec bool) (int, error)
}

// ErrNoInstall is what a Caller that cannot install fds reports.
var ErrNoInstall = errors.New("kfd: this caller cannot receive file descriptors (not under kfdemu exec)")

// DmaBuf is an exported buffer. Its fields are fixed at export, except refs.
type DmaBuf struct {
	d      *Driver
	id     uint64
	gpu    uint32 // gpu_id of the device whose memory it is (GET_DMABUF_INFO's gpu_id)
	vram   bool   // preferred domain VRAM, else GTT
	public bool   // AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED (KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC)
	// gpuMem: preferred domains include VRAM or GTT and the buffer has a GPU segment; KFD takes
	// only such buffers (amdgpu_amdkfd_get_dmabuf_info, import_obj_create: "Only VRAM and GTT BOs
	// are supported").
	gpuMem bool
	size   uint64
	pa     uint64 // physical segment
	mem    []byte // the daemon's mapping
	sp     *space // the memfd holding mem (a process's render-node backing) and its offset there:
	off    int64  // an import into the same backing can be mmapped at off
	meta   func() []byte
	free   func() // releases the memory, its segment and its accounting

	refs int // under Driver.dmabufMu
}

// ID names the dma-buf's file (MNT/dev/dma_buf/ID).
func (b *DmaBuf) ID() uint64 { return b.id }

// Size is the buffer's size in bytes (the file's size: lseek(SEEK_END) of a dma-buf fd).
func (b *DmaBuf) Size() uint64 { return b.size }

// dmabufs is the driver's table of live dma-bufs.
type dmabufs struct {
	mu   sync.Mutex
	byID map[uint64]*DmaBuf
	next uint64
}

// newDmaBuf registers a dma-buf holding one reference (the exporter's).
func (d *Driver) newDmaBuf(b *DmaBuf) *DmaBuf {
	d.dmabuf.mu.Lock()
	defer d.dmabuf.mu.Unlock()
	if d.dmabuf.byID == nil {
		d.dmabuf.byID = map[uint64]*DmaBuf{}
	}
	d.dmabuf.next++
	b.d, b.id, b.refs = d, d.dmabuf.next, 1
	d.dmabuf.byID[b.id] = b
	d.log.Debug("dma-buf exported", "id", b.id, "gpu", b.gpu, "size", b.size, "vram", b.vram)
	return b
}

// OpenDmaBuf takes a reference for an open of dma-buf id's file; nil if it is gone.
func (d *Driver) OpenDmaBuf(id uint64) *DmaBuf {
	d.dmabuf.mu.Lock()
	defer d.dmabuf.mu.Unlock()
	b := d.dmabuf.byID[id]
	if b != nil {
		b.refs++
	}
	return b
}

// Get takes a reference.
func (b *DmaBuf) Get() *DmaBuf {
	b.d.dmabuf.mu.Lock()
	b.refs++
	b.d.dmabuf.mu.Unlock()
	return b
}

// Put drops a reference; the last one frees the memory.
func (b *DmaBuf) Put() {
	d := b.d
	d.dmabuf.mu.Lock()
	b.refs--
	last := b.refs == 0
	if last {
		delete(d.dmabuf.byID, b.id)
	}
	d.dmabuf.mu.Unlock()
	if last {
		d.log.Debug("dma-buf released", "id", b.id)
		b.free()
	}
}

// DmaBufs counts the live dma-bufs (stats, leak tests).
func (d *Driver) DmaBufs() int {
	d.dmabuf.mu.Lock()
	defer d.dmabuf.mu.Unlock()
	return len(d.dmabuf.byID)
}

// installDmaBuf gives the client an fd of b; errno EOPNOTSUPP when the caller cannot receive one.
func installDmaBuf(d *Driver, c Caller, b *DmaBuf, cloexec bool) (int, syscall.Errno) {
	in, ok := c.(Installer)
	if !ok {
		d.log.Info("dma-buf export refused: a FUSE reply cannot install an fd; run the client under kfdemu exec",
			"tgid", c.Tgid())
		return 0, syscall.EOPNOTSUPP
	}
	fd, err := in.InstallDmaBuf(b, cloexec)
	if errors.Is(err, ErrNoInstall) {
		d.log.Info("dma-buf export refused: a FUSE reply cannot install an fd; run the client under kfdemu exec",
			"tgid", c.Tgid())
		return 0, syscall.EOPNOTSUPP
	}
	if err != nil {
		d.log.Warn("dma-buf fd not installed", "tgid", c.Tgid(), "id", b.id, "err", err)
		var e syscall.Errno
		if errors.As(err, &e) {
			return 0, e
		}
		return 0, syscall.EMFILE
	}
	return fd, 0
}

// exportBO makes (once) the dma-buf of a VRAM or GTT BO; called with p.mu held.
func (p *Process) exportBO(b *bo) *DmaBuf {
	if b.dmabuf != nil {
		return b.dmabuf
	}
	pa, mem, sp, off, flags, gpu, size := b.pa, b.mem, b.sp, b.off, b.flags, b.gpu, b.size
	d := p.d
	b.dmabuf = d.newDmaBuf(&DmaBuf{
		gpu: b.gpu, vram: flags&allocVRAM != 0, gpuMem: true, public: flags&abi.KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC != 0,
		size: size, pa: pa, mem: mem, sp: sp, off: off, meta: func() []byte { return nil },
		free: func() {
			if err := d.phys.Free(pa); err != nil {
				d.log.Error("dma-buf segment lost", "err", err)
			}
			p.unaccount(&bo{flags: flags, gpu: gpu, size: size})
			sp.release(off, mem)
		},
	})
	return b.dmabuf
}

// exportDmabuf is kfd_ioctl_export_dmabuf (1.12): the BO of handle as a dma-buf fd. The flags
// only matter for O_CLOEXEC (dma_buf_fd -> get_unused_fd_flags).
func exportDmabuf(p *Process, c Caller, a *abi.ExportDmabufArgs) syscall.Errno {
	p.mu.Lock()
	b := p.bos[a.Handle]
	if b == nil || p.pdds[b.gpu] == nil {
		p.mu.Unlock()
		return syscall.EINVAL // kfd_device_by_id, kfd_get_process_device_data, translate_handle
	}
	if errno := exportable(b); errno != 0 {
		p.mu.Unlock()
		return errno
	}
	db := p.exportBO(b).Get()
	p.mu.Unlock()
	defer db.Put()
	fd, errno := installDmaBuf(p.d, c, db, a.Flags&syscall.O_CLOEXEC != 0)
	if errno != 0 {
		return errno
	}
	a.DmabufFD = uint32(fd)
	return 0
}

// dmabufOf resolves a client fd to one of this mount's dma-bufs, with a reference: EBADF for an fd
// that is not open, EINVAL for one that is not a dma-buf of this device (dma_buf_get, then
// "dma_buf->ops != &amdgpu_dmabuf_ops").
func dmabufOf(d *Driver, c Caller, fd uint32) (*DmaBuf, syscall.Errno) {
	r, ok := c.(DmaBufResolver)
	if !ok {
		return nil, syscall.EINVAL
	}
	id, err := r.DmaBufID(int(int32(fd)))
	if errors.Is(err, ErrBadFD) {
		return nil, syscall.EBADF
	}
	if err != nil {
		return nil, syscall.EINVAL
	}
	b := d.OpenDmaBuf(id)
	if b == nil {
		return nil, syscall.EINVAL
	}
	return b, 0
}

// DmaBufResolver is implemented by a Caller that can tell which dma-buf of this mount an fd of the
// client's is (package fs: pidfd_getfd, then the file's inode).
type DmaBufResolver interface {
	// DmaBufID returns the id of the dma-buf fd refers to: ErrBadFD when fd is not open,
	// ErrNotDmaBuf when it is open but not one of this mount's dma-bufs.
	DmaBufID(fd int) (uint64, error)
}

// ErrNotDmaBuf: the fd is open but is not a dma-buf of this mount.
var ErrNotDmaBuf = errors.New("kfd: not a dma-buf of this mount")

// getDmabufInfo is kfd_ioctl_get_dmabuf_info with amdgpu_amdkfd_get_dmabuf_info and
// amdgpu_bo_get_metadata: size, metadata (when metadata_ptr is set: EINVAL if the buffer is
// smaller than the BO's metadata), the exporting GPU and the allocation flags the BO would have
// (VRAM or GTT, PUBLIC if CPU access is required).
func getDmabufInfo(p *Process, c Caller, a *abi.GetDmabufInfoArgs) syscall.Errno {
	if len(p.d.sys.GPUs()) == 0 {
		return syscall.EINVAL // no KFD device
	}
	if a.MetadataPtr != 0 && a.MetadataSize > 4<<20 {
		return syscall.ENOMEM // kzalloc(args->metadata_size) above KMALLOC_MAX_SIZE (4 MiB on x86-64)
	}
	b, errno := dmabufOf(p.d, c, a.DmabufFD)
	if errno != 0 {
		return errno
	}
	defer b.Put()
	if !b.gpuMem {
		return syscall.EINVAL
	}
	a.Size = b.size
	if a.MetadataPtr != 0 {
		meta := b.meta()
		if uint64(a.MetadataSize) < uint64(len(meta)) {
			return syscall.EINVAL
		}
		a.MetadataSize = uint32(len(meta))
		if len(meta) > 0 {
			if err := c.WriteMemory(a.MetadataPtr, meta); err != nil {
				return syscall.EFAULT
			}
		}
	}
	a.GPUID = b.gpu
	a.Flags = allocGTT
	if b.vram {
		a.Flags = allocVRAM
	}
	if b.public {
		a.Flags |= abi.KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC
	}
	return 0
}

// importBO enters a BO of gpu at va over db's memory with flags (an import of a dma-buf or an IPC
// key), taking over the caller's reference on db: EINVAL for a va that is unaligned, outside GPUVM
// or over another BO of gpu (amdgpu_vm_bo_map refuses the range when it is mapped), the reference
// then dropped. Under p.mu.
func (p *Process) importBO(gpu uint32, va uint64, db *DmaBuf, flags uint32) (*bo, syscall.Errno) {
	if va&(pageSize-1) != 0 || va+db.size < va || va+db.size > gpuvmSize || p.overlaps(gpu, va, db.size) {
		db.Put()
		return nil, syscall.EINVAL
	}
	b := &bo{gpu: gpu, home: db.gpu, va: va, size: db.size, flags: flags, mapped: map[uint32]bool{},
		mem: db.mem, pa: db.pa, dmabuf: db, imported: true}
	p.addBO(b)
	return b, 0
}

// exportable is amdgpu_gem_prime_export's refusal of user-pointer BOs (EPERM) and the model's of
// doorbell and MMIO BOs, SG BOs amdgpu could export but whose pages the model keeps shared with
// the queues (EINVAL; README, deviations).
func exportable(b *bo) syscall.Errno {
	switch {
	case b.userptr != 0:
		return syscall.EPERM
	case b.flags&(allocVRAM|allocGTT) == 0 || b.mem == nil:
		return syscall.EINVAL
	}
	return 0
}

// importDmabuf is kfd_ioctl_import_dmabuf with amdgpu_amdkfd_gpuvm_import_dmabuf_fd: a BO of the
// process on gpu_id at va_addr whose memory is the dma-buf's, writable and executable, in the
// dma-buf's domain; it is not charged against the memory limit (the exporter's allocation was).
func importDmabuf(p *Process, c Caller, a *abi.ImportDmabufArgs) syscall.Errno {
	p.mu.Lock()
	pd := p.pdds[a.GPUID]
	p.mu.Unlock()
	if pd == nil {
		return syscall.EINVAL
	}
	db, errno := dmabufOf(p.d, c, a.DmabufFD)
	if errno != 0 {
		return errno
	}
	if !db.gpuMem {
		db.Put()
		return syscall.EINVAL
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, errno := p.bind(a.GPUID); errno != 0 {
		db.Put()
		return errno
	}
	flags := uint32(allocGTT)
	if db.vram {
		flags = allocVRAM
	}
	flags |= abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | abi.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE
	b, errno := p.importBO(a.GPUID, a.VAAddr, db, flags)
	if errno != 0 {
		return errno
	}
	a.Handle = b.handle
	p.d.log.Debug("dma-buf imported", "tgid", p.tgid, "id", db.id, "handle", hexVA(b.handle), "va", hexVA(b.va))
	return 0
}
