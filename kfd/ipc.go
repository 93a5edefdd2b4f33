package kfd

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// AMD's out-of-tree IPC and cross-memory copy (ROCK-Kernel-Driver, the DKMS amdkfd that ROCm's
// packages install: kfd_ipc.c, kfd_chardev.c kfd_ioctl_ipc_export_handle,
// kfd_ioctl_ipc_import_handle and kfd_ioctl_cross_memory_copy). Upstream amdkfd has none of them;
// libhsakmt's hsaKmtShareMemory / hsaKmtRegisterSharedHandle (ROCr's hsa_amd_ipc_memory_*, HIP's
// hipIpc*MemHandle, 5.2.3 and 6.2.4 alike: ROCr 6.2.4 forces its "legacy" IPC mode) and libhsakmt
// 5.2.3's hsaKmtProcessVMRead/Write have no other way.
//
// An ipcObj is kfd_ipc_obj: a 128-bit random key (get_random_bytes) naming the dma-buf of an
// exported BO. The exporting BO and every BO imported from the key hold a reference; the key is
// forgotten when the last of them is freed (ipc_obj_release), so it stays importable after the
// exporter freed its own BO while an importer lives. A BO exported again, or a BO imported from a
// key and exported, gives the same key (amdgpu_amdkfd_gpuvm_export_ipc_obj returns mem->ipc_obj).
//
// The importer's CPU mapping (README, deviations): DKMS returns the BO's mmap offset on the
// importer's render node, which libhsakmt maps over the imported VA. Here a render node's pages
// are its process's own memfd (FUSE passthrough: one backing file per open), which cannot hold
// another process's pages, so an import into another process gets an offset past the end of that
// memfd: the mapping exists (libhsakmt's import succeeds, as QueryPointerInfo's node needs) and a
// CPU access to it raises SIGBUS, never another buffer's bytes (HIP's small hipMemcpy to or from
// device memory is a CPU copy on a large-BAR GPU, so it is one; the first such import of a process
// is logged). GPU access (kernels, SDMA, blit copies) reaches the shared memory itself. An import
// into the exporting process maps its own pages.

// ipcObj is one exported buffer's IPC object.
type ipcObj struct {
	key        [4]uint32
	db         *DmaBuf // holds one dma-buf reference, dropped when the key is forgotten
	flags      uint32  // the first export's flags (libhsakmt's HsaMemFlags), echoed by imports
	allocFlags uint32  // the exporting BO's KFD allocation flags: the imported BOs' attributes
	refs       int     // BOs holding it; under Driver.ipcMu
}

// newIPC registers an IPC object of db (whose reference it takes over) held by one BO.
func (d *Driver) newIPC(db *DmaBuf, flags, allocFlags uint32) *ipcObj {
	o := &ipcObj{db: db, flags: flags, allocFlags: allocFlags, refs: 1}
	d.ipcMu.Lock()
	defer d.ipcMu.Unlock()
	if d.ipc == nil {
		d.ipc = map[[4]uint32]*ipcObj{}
	}
	for {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic("kfd: crypto/rand: " + err.Error()) // never fails on Linux 3.17+ (getrandom)
		}
		for i := range o.key {
			o.key[i] = binary.LittleEndian.Uint32(b[4*i:])
		}
		if _, taken := d.ipc[o.key]; !taken {
			break
		}
	}
	d.ipc[o.key] = o
	return o
}

// ipcGet takes a reference on the object of key; nil when no BO holds it any more.
func (d *Driver) ipcGet(key [4]uint32) *ipcObj {
	d.ipcMu.Lock()
	defer d.ipcMu.Unlock()
	o := d.ipc[key]
	if o != nil {
		o.refs++
	}
	return o
}

// ipcPut drops a reference; the last forgets the key and releases the dma-buf reference.
func (d *Driver) ipcPut(o *ipcObj) {
	d.ipcMu.Lock()
	o.refs--
	last := o.refs == 0
	if last {
		delete(d.ipc, o.key)
	}
	d.ipcMu.Unlock()
	if last {
		o.db.Put()
	}
}

// IPCHandles counts the live IPC keys (stats, leak tests).
func (d *Driver) IPCHandles() int {
	d.ipcMu.Lock()
	defer d.ipcMu.Unlock()
	return len(d.ipc)
}

// ipcExportHandle is kfd_ioctl_ipc_export_handle with kfd_ipc_export_as_handle: the BO of
// handle's IDR on gpu_id (kfd_process_device_find_bo(pdd, GET_IDR_HANDLE(handle))) gets, once,
// an IPC key.
func ipcExportHandle(p *Process, c Caller, a *abi.IPCExportHandleArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pdds[a.GPUID] == nil {
		return syscall.EINVAL // kfd_process_device_data_by_id
	}
	if _, errno := p.bind(a.GPUID); errno != 0 {
		return errno
	}
	b := p.bos[makeHandle(a.GPUID, uint32(a.Handle))]
	if b == nil {
		return syscall.EINVAL // "Failed to get bo"
	}
	if b.ipc == nil {
		if errno := exportable(b); errno != 0 {
			return errno
		}
		b.ipc = p.d.newIPC(p.exportBO(b).Get(), a.Flags, b.flags)
		p.d.log.Debug("IPC export", "tgid", p.tgid, "handle", hexVA(b.handle), "size", b.size)
	}
	a.ShareHandle = b.ipc.key
	return 0
}

// ipcImportHandle is kfd_ioctl_ipc_import_handle with kfd_ipc_import_handle and
// amdgpu_amdkfd_gpuvm_import_dmabuf: a BO of the whole exported buffer on gpu_id at va_addr, with
// the exporter's allocation flags, holding the key; flags returns the export's flags and
// mmap_offset the BO's offset on the render node (see the file comment). gpu_id is not written.
func ipcImportHandle(p *Process, c Caller, a *abi.IPCImportHandleArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pdds[a.GPUID] == nil {
		return syscall.EINVAL
	}
	o := p.d.ipcGet(a.ShareHandle)
	if o == nil {
		p.d.log.Info("IPC import of an unknown share handle (never exported, or every BO holding it was freed)",
			"tgid", p.tgid, "gpu", a.GPUID)
		return syscall.EINVAL
	}
	if _, errno := p.bind(a.GPUID); errno != 0 {
		p.d.ipcPut(o)
		return errno
	}
	db := o.db
	// DKMS records the VA and leaves a conflict to MAP_MEMORY_TO_GPU's amdgpu_vm_bo_map; the
	// model keeps a process's BOs of one GPU apart (boindex.go) and refuses it here, with the
	// errno the mapping would get.
	b, errno := p.importBO(a.GPUID, a.VAAddr, db.Get(), o.allocFlags&^allocUserptr)
	if errno != 0 {
		p.d.ipcPut(o)
		return errno
	}
	b.ipc = o
	a.Handle = b.handle
	a.Flags = o.flags
	if db.sp != nil && db.sp == p.render {
		a.MmapOffset = uint64(db.off) // the exporter itself: its own pages
	} else {
		// Past the end the memfd can ever reach (spaceLimit): SIGBUS on a CPU access.
		if p.ipcNext == 0 {
			// Once per process: the crash a user may meet next cannot be logged when it happens.
			p.d.log.Warn("IPC import from another process: this process's CPU cannot reach the memory "+
				"(a CPU access raises SIGBUS; HIP's small hipMemcpy to or from it on a large-BAR GPU is one); "+
				"kernels and GPU copies can (README, deviations)", "tgid", p.tgid, "size", db.size)
		}
		a.MmapOffset = spaceLimit + p.ipcNext
		p.ipcNext += db.size
	}
	p.d.log.Debug("IPC import", "tgid", p.tgid, "handle", hexVA(b.handle), "va", hexVA(b.va), "size", b.size,
		"mmap_offset", hexVA(a.MmapOffset))
	return 0
}

// crossMemoryCopy is kfd_ioctl_cross_memory_copy: bytes between BOs of the caller and of process
// pid, given as arrays of GPU VA ranges, copied as one stream (the source ranges end to end into
// the destination ranges end to end) until either side ends. Each range must lie in one BO of its
// process (kfd_cma_iter_update_bo: -EFAULT, "Range out of bounds"); a range is checked when the
// copy reaches it, the first of each side before anything is copied. bytes_copied counts what
// was copied, on failure too.
func crossMemoryCopy(p *Process, c Caller, a *abi.CrossMemoryCopyArgs) syscall.Errno {
	if a.SrcMemRangeArray == 0 || a.SrcMemArraySize == 0 || a.DstMemRangeArray == 0 || a.DstMemArraySize == 0 {
		return syscall.EINVAL
	}
	a.BytesCopied = 0
	const rangeSize = 16
	if a.SrcMemArraySize > kmallocMax/rangeSize || a.DstMemArraySize > kmallocMax/rangeSize {
		return syscall.ENOMEM // kmalloc_array
	}
	src, errno := readRanges(c, a.SrcMemRangeArray, a.SrcMemArraySize)
	if errno != 0 {
		return errno
	}
	dst, errno := readRanges(c, a.DstMemRangeArray, a.DstMemArraySize)
	if errno != 0 {
		return errno
	}
	pid := int(int32(a.PID))
	if pid <= 0 || !processAlive(pid) {
		return syscall.ESRCH // find_get_pid, get_pid_task
	}
	if pid != p.tgid && !mayAttach(p.tgid, pid) {
		p.d.log.Info("CROSS_MEMORY_COPY refused: the caller may not ptrace-attach the target", "tgid", p.tgid, "pid", pid)
		return syscall.EPERM // mm_access(PTRACE_MODE_ATTACH_REALCREDS): -EACCES becomes -EPERM
	}
	d := p.d
	d.mu.Lock()
	r := d.procs[pid]
	if r != nil {
		r.refs++
	}
	d.mu.Unlock()
	if r == nil {
		return syscall.EINVAL // kfd_get_process: not a KFD process
	}
	defer d.put(r)
	// Both processes' locks, the lower tgid first (doc.go).
	first, second := p, r
	if r.tgid < p.tgid {
		first, second = r, p
	}
	first.mu.Lock()
	defer first.mu.Unlock()
	if second != first {
		second.mu.Lock()
		defer second.mu.Unlock()
	}
	if r.dead || p.dead {
		return syscall.EINVAL
	}
	from, to := r, p // read: remote to local
	if a.Flags&abi.KFD_CROSS_MEMORY_RW_BIT != 0 {
		from, to = p, r
	}
	return cmaCopy(cmaIter{p: from, rs: src}, cmaIter{p: to, rs: dst}, &a.BytesCopied)
}

// kmallocMax is KMALLOC_MAX_SIZE on x86-64 (4 MiB).
const kmallocMax = 4 << 20

func readRanges(c Caller, addr, n uint64) ([]abi.MemoryRange, syscall.Errno) {
	raw := make([]byte, 16*n)
	if err := c.ReadMemory(addr, raw); err != nil {
		return nil, syscall.EFAULT
	}
	rs := make([]abi.MemoryRange, n)
	decode(raw, rs)
	return rs, 0
}

// cmaIter walks one side's ranges (kfd_cma_iter): range i, offset off in it, and the BO holding it.
type cmaIter struct {
	p   *Process
	rs  []abi.MemoryRange
	i   int
	off uint64
	b   *bo
}

// settle moves past exhausted ranges and resolves the current one's BO; done when none is left.
func (it *cmaIter) settle() (done bool, errno syscall.Errno) {
	for it.i < len(it.rs) && it.off >= it.rs[it.i].Size {
		it.i, it.off, it.b = it.i+1, 0, nil
	}
	if it.i == len(it.rs) {
		return true, 0
	}
	if it.b == nil {
		r := it.rs[it.i]
		b := it.p.boIdx.containing(r.VAAddr)
		if b == nil || r.VAAddr+r.Size < r.VAAddr || r.VAAddr+r.Size > b.va+b.size {
			return false, syscall.EFAULT
		}
		it.b = b
	}
	return false, 0
}

// at is the current position: the BO and the byte offset in it, and what is left of the range.
func (it *cmaIter) at() (*bo, uint64, uint64) {
	r := it.rs[it.i]
	return it.b, r.VAAddr + it.off - it.b.va, r.Size - it.off
}

// cmaCopy streams src into dst (kfd_copy_userptr_bos / the SDMA copies of amdgpu's
// copy_mem_to_mem), adding each chunk to *copied.
func cmaCopy(src, dst cmaIter, copied *uint64) syscall.Errno {
	total := func(rs []abi.MemoryRange) (t uint64) {
		for _, r := range rs {
			t += r.Size
		}
		return t
	}
	if total(src.rs) == 0 || total(dst.rs) == 0 {
		return 0
	}
	var buf []byte
	for {
		sdone, errno := src.settle()
		if errno != 0 {
			return errno
		}
		ddone, errno := dst.settle()
		if errno != 0 {
			return errno
		}
		if sdone || ddone {
			return 0
		}
		sb, soff, sleft := src.at()
		db, doff, dleft := dst.at()
		n := min(sleft, dleft, 1<<20)
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		chunk := buf[:n]
		if err := sb.read(src.p, chunk, soff); err != nil {
			return syscall.EFAULT
		}
		if err := db.write(dst.p, chunk, doff); err != nil {
			return syscall.EFAULT
		}
		src.off += n
		dst.off += n
		*copied += n
	}
}

// read copies the BO's bytes at off into buf: from the daemon's mapping, or for a user-pointer BO
// from the client's pages.
func (b *bo) read(p *Process, buf []byte, off uint64) error {
	if b.mem != nil {
		copy(buf, b.mem[off:])
		return nil
	}
	if b.userptr == 0 {
		return syscall.EFAULT
	}
	return clientMemory(p.tgid).ReadAt(buf, b.userptr+off)
}

func (b *bo) write(p *Process, buf []byte, off uint64) error {
	if b.mem != nil {
		copy(b.mem[off:], buf)
		return nil
	}
	if b.userptr == 0 {
		return syscall.EFAULT
	}
	return clientMemory(p.tgid).WriteAt(buf, b.userptr+off)
}

// mayAttach is the credential half of ptrace_may_access(PTRACE_MODE_ATTACH_REALCREDS) as mm_access
// asks it: the caller's real uid and gid equal the target's real, effective and saved ones, or the
// caller's effective uid is 0 (CAP_SYS_PTRACE). Yama's ptrace_scope is not modelled.
func mayAttach(caller, target int) bool {
	cu, cg := strings.Fields(procStatus(caller, "Uid")), strings.Fields(procStatus(caller, "Gid"))
	tu, tg := strings.Fields(procStatus(target, "Uid")), strings.Fields(procStatus(target, "Gid"))
	if len(cu) < 4 || len(cg) < 4 || len(tu) < 4 || len(tg) < 4 {
		return false
	}
	if cu[1] == "0" {
		return true
	}
	for i := 0; i < 3; i++ {
		if tu[i] != cu[0] || tg[i] != cg[0] {
			return false
		}
	}
	return true
}
