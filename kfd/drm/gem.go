package drm

import (
	"errors"
	"strconv"
	"sync/atomic"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// GEM objects of a render-node file (amdgpu_gem.c, amdgpu_object.c, amdgpu_vm.c of Linux 6.10).

const (
	gpuPage = 4096 // AMDGPU_GPU_PAGE_SIZE (= PAGE_SIZE on x86)

	// The flags amdgpu_gem_create_ioctl accepts (Linux 6.10; COHERENT, UNCACHED and EXT_COHERENT are
	// kfd's, GFX12_DCC came in 6.11).
	gemSettable = abi.AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED | abi.AMDGPU_GEM_CREATE_NO_CPU_ACCESS |
		abi.AMDGPU_GEM_CREATE_CPU_GTT_USWC | abi.AMDGPU_GEM_CREATE_VRAM_CLEARED |
		abi.AMDGPU_GEM_CREATE_VM_ALWAYS_VALID | abi.AMDGPU_GEM_CREATE_EXPLICIT_SYNC |
		abi.AMDGPU_GEM_CREATE_ENCRYPTED | abi.AMDGPU_GEM_CREATE_DISCARDABLE

	// Domains whose memory the model does not have: on-chip GDS/GWS/OA partitions and the doorbell BAR.
	unmodelledDomains = abi.AMDGPU_GEM_DOMAIN_GDS | abi.AMDGPU_GEM_DOMAIN_GWS | abi.AMDGPU_GEM_DOMAIN_OA |
		abi.AMDGPU_GEM_DOMAIN_DOORBELL

	memDomains = abi.AMDGPU_GEM_DOMAIN_CPU | abi.AMDGPU_GEM_DOMAIN_GTT | abi.AMDGPU_GEM_DOMAIN_VRAM

	metadataMax = 64 * 4 // sizeof(drm_amdgpu_gem_metadata.data.data)
)

// gemBO is an amdgpu_bo created through GEM_CREATE. A handle, every BO list naming it and every job
// using it hold a reference; the last one frees its buffer.
type gemBO struct {
	buf                *Buffer
	size               uint64
	alignment          uint64 // what GET_GEM_CREATE_INFO reports
	flags              uint64 // amdgpu_bo.flags
	preferred, allowed uint32 // preferred_domains, allowed_domains
	refs               atomic.Int32

	// under File.vaMu
	maps []*mapping // its bo_va's mappings in the file's VM

	// under File.mu
	tiling, metaFlags uint64
	meta              []byte
	busy              []*fence // fences of the submissions that used it (its reservation object)
}

func (bo *gemBO) get() *gemBO { bo.refs.Add(1); return bo }

// put drops a reference; the last one frees the buffer (no mapping refers to it by then: its handle
// is gone, which removed its mappings).
func (bo *gemBO) put(f *File) {
	if bo.refs.Add(-1) == 0 && bo.buf != nil {
		f.be.Free(bo.buf)
		bo.buf = nil
	}
}

// mapping is an amdgpu_bo_va_mapping: pages [start, last] of the VM at offset of bo (nil: PRT).
type mapping struct {
	start, last uint64 // GPU page numbers, inclusive
	offset      uint64
	flags       uint32
	bo          *gemBO
}

func (m *mapping) va() uint64   { return m.start * gpuPage }
func (m *mapping) size() uint64 { return (m.last - m.start + 1) * gpuPage }

// lookup is drm_gem_object_lookup: the object of handle with a reference, or nil.
func (f *File) lookup(handle uint32) *gemBO {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.usable() {
		return nil
	}
	bo, ok := f.bos.get(handle)
	if !ok {
		return nil
	}
	return bo.get()
}

// gemCreate is amdgpu_gem_create_ioctl. A VRAM object that does not fit is retried with GTT added,
// as amdgpu does after its placement fails; memory comes from the process's render-node memfd, so it
// is zero (VRAM_CLEARED holds for every object).
func (f *File) gemCreate(m Memory, a *abi.DRMAmdgpuGemCreate) syscall.Errno {
	flags, size := a.DomainFlags, a.BOSize
	switch {
	case flags&^gemSettable != 0:
		return f.reject(m, syscall.EINVAL, "GEM_CREATE: invalid flags", "flags", hex(flags))
	case a.Domains&^abi.AMDGPUGemDomainMask610 != 0:
		return f.reject(m, syscall.EINVAL, "GEM_CREATE: invalid domains", "domains", hex(a.Domains))
	case flags&abi.AMDGPU_GEM_CREATE_ENCRYPTED != 0:
		return f.reject(m, syscall.EINVAL, "GEM_CREATE: cannot allocate secure buffer since TMZ is disabled")
	}
	flags |= abi.AMDGPU_GEM_CREATE_VRAM_CLEARED // "always clear VRAM"
	if a.Domains&(abi.AMDGPU_GEM_DOMAIN_GDS|abi.AMDGPU_GEM_DOMAIN_GWS|abi.AMDGPU_GEM_DOMAIN_OA) != 0 {
		if flags&abi.AMDGPU_GEM_CREATE_VM_ALWAYS_VALID != 0 {
			return f.reject(m, syscall.EINVAL, "GEM_CREATE: GDS bo cannot be per-vm-bo")
		}
		flags |= abi.AMDGPU_GEM_CREATE_NO_CPU_ACCESS
	}
	initial := uint32(a.Domains)
	var bo *gemBO
	var errno syscall.Errno
	for {
		bo, errno = f.createBO(size, a.Alignment, initial, flags)
		if errno == 0 {
			break
		}
		if flags&abi.AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED != 0 {
			flags &^= abi.AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED
			continue
		}
		if initial == abi.AMDGPU_GEM_DOMAIN_VRAM {
			initial |= abi.AMDGPU_GEM_DOMAIN_GTT
			continue
		}
		return f.reject(m, errno, "GEM_CREATE: failed to allocate GEM object", "size", size, "domains", hex(uint64(initial)),
			"alignment", a.Alignment)
	}
	h, ok := f.newHandle(bo)
	if !ok {
		return f.reject(m, syscall.ENOSPC, "GEM_CREATE: no handle")
	}
	*a = abi.DRMAmdgpuGemCreate{}
	asOut(a, abi.DRMAmdgpuGemCreateOut{Handle: h})
	f.log.Debug("render node: GEM object created", "handle", h, "size", bo.size, "domain", hex(uint64(bo.buf.Domain)),
		"mmap_offset", hex(bo.buf.Offset))
	return 0
}

// newHandle is drm_gem_handle_create: bo under the lowest free handle of the file. On failure (no
// handle left, or the file closing) bo's reference is dropped.
func (f *File) newHandle(bo *gemBO) (uint32, bool) {
	f.mu.Lock()
	var h uint32
	ok := f.usable()
	if ok {
		h, ok = f.bos.alloc(bo)
	}
	f.mu.Unlock()
	if !ok {
		bo.put(f)
	}
	return h, ok
}

// createBO is amdgpu_gem_object_create -> amdgpu_bo_create for one placement attempt.
func (f *File) createBO(size, align uint64, domain uint32, flags uint64) (*gemBO, syscall.Errno) {
	if f.be == nil {
		return nil, syscall.ENODEV
	}
	if domain&unmodelledDomains != 0 {
		return nil, syscall.ENOMEM // no such partition in the model: as a full one
	}
	if size == 0 {
		return nil, syscall.EINVAL
	}
	if size > 1<<63 {
		return nil, syscall.ENOMEM
	}
	size = (size + gpuPage - 1) &^ (gpuPage - 1)
	// amdgpu_bo_validate_size: a VRAM or GTT object must be smaller than one of its domains.
	g := &f.dev.info
	if domain&(abi.AMDGPU_GEM_DOMAIN_VRAM|abi.AMDGPU_GEM_DOMAIN_GTT) != 0 &&
		!(domain&abi.AMDGPU_GEM_DOMAIN_VRAM != 0 && size < g.VRAMSize || domain&abi.AMDGPU_GEM_DOMAIN_GTT != 0 && size < g.GTTSize) {
		return nil, syscall.ENOMEM
	}
	buf, err := f.be.Alloc(domain&memDomains, size)
	switch {
	case errors.Is(err, ErrGone):
		return nil, syscall.ENODEV
	case err != nil:
		return nil, syscall.ENOMEM
	}
	bo := &gemBO{buf: buf, size: size, flags: flags, preferred: domain, allowed: domain}
	// amdgpu_bo_create: page_alignment is a u32 count of pages, reported << PAGE_SHIFT in 32 bits.
	bo.alignment = uint64(uint32((align+gpuPage-1)&^(gpuPage-1)>>12) << 12)
	if flags&abi.AMDGPU_GEM_CREATE_DISCARDABLE == 0 && bo.allowed == abi.AMDGPU_GEM_DOMAIN_VRAM {
		bo.allowed |= abi.AMDGPU_GEM_DOMAIN_GTT
	}
	bo.refs.Store(1)
	return bo, 0
}

// gemClose is drm_gem_close_ioctl: drm_gem_handle_delete (-EINVAL for no such handle), then
// amdgpu_gem_object_close removes the object's mappings from the VM.
func (f *File) gemClose(m Memory, a *abi.DRMGemClose) syscall.Errno {
	f.vaMu.Lock()
	defer f.vaMu.Unlock()
	f.mu.Lock()
	bo, ok := f.bos.get(a.Handle)
	if ok && f.usable() {
		f.bos.remove(a.Handle)
	}
	ok = ok && f.usable()
	f.mu.Unlock()
	if !ok {
		return f.reject(m, syscall.EINVAL, "GEM_CLOSE: no such handle", "handle", a.Handle)
	}
	f.unmapAll(bo)
	bo.put(f)
	return 0
}

// unmapAll is amdgpu_vm_bo_del: every mapping of bo goes. With f.vaMu held.
func (f *File) unmapAll(bo *gemBO) {
	for _, mp := range bo.maps {
		f.be.Unmap(mp.va(), mp.size())
	}
	bo.maps = nil
}

// gemMmap is amdgpu_gem_mmap_ioctl (amdgpu_mode_dumb_mmap): the object's mmap offset on the node.
func (f *File) gemMmap(m Memory, a *abi.DRMAmdgpuGemMmap) syscall.Errno {
	h := a.Handle
	*a = abi.DRMAmdgpuGemMmap{}
	bo := f.lookup(h)
	if bo == nil {
		return f.reject(m, syscall.ENOENT, "GEM_MMAP: no such handle", "handle", h)
	}
	defer bo.put(f)
	if bo.flags&abi.AMDGPU_GEM_CREATE_NO_CPU_ACCESS != 0 {
		return f.reject(m, syscall.EPERM, "GEM_MMAP: object created with NO_CPU_ACCESS", "handle", h)
	}
	if bo.buf.NoMmap {
		return f.reject(m, syscall.EPERM, "GEM_MMAP: an import of another process's dma-buf cannot be mapped through this node (kfdemu deviation)", "handle", h)
	}
	asOut(a, abi.DRMAmdgpuGemMmapOut{AddrPtr: bo.buf.Offset})
	return 0
}

// gemMetadata is amdgpu_gem_metadata_ioctl (amdgpu_bo_get/set_metadata, set_tiling_flags). An op
// that is neither GET nor SET does nothing and succeeds, as there.
func (f *File) gemMetadata(m Memory, a *abi.DRMAmdgpuGemMetadata) syscall.Errno {
	bo := f.lookup(a.Handle)
	if bo == nil {
		return f.reject(m, syscall.ENOENT, "GEM_METADATA: no such handle", "handle", a.Handle)
	}
	defer bo.put(f)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch a.Op {
	case abi.AMDGPU_GEM_METADATA_OP_GET_METADATA:
		a.TilingInfo = bo.tiling
		for i := 0; i < len(bo.meta)/4; i++ {
			a.Data[i] = le32(bo.meta, 4*i)
		}
		a.DataSizeBytes = uint32(len(bo.meta))
		a.Flags = bo.metaFlags
	case abi.AMDGPU_GEM_METADATA_OP_SET_METADATA:
		if a.DataSizeBytes > metadataMax {
			return f.reject(m, syscall.EINVAL, "GEM_METADATA: data_size_bytes too large", "size", a.DataSizeBytes)
		}
		bo.tiling = a.TilingInfo // AI family: no TILE_SPLIT check
		if a.DataSizeBytes == 0 {
			bo.meta = nil // the flags stay
			break
		}
		b := bytesOf(a.Data)
		bo.meta = append([]byte(nil), b[:a.DataSizeBytes]...)
		bo.metaFlags = a.Flags
	}
	return 0
}

// gemWaitIdle is amdgpu_gem_wait_idle_ioctl: waits, up to the absolute timeout, for the submissions
// that used the object; status 1 if some is still running.
func (f *File) gemWaitIdle(m Memory, a *abi.DRMAmdgpuGemWaitIdle) syscall.Errno {
	bo := f.lookup(a.Handle)
	if bo == nil {
		return f.reject(m, syscall.ENOENT, "GEM_WAIT_IDLE: no such handle", "handle", a.Handle)
	}
	defer bo.put(f)
	f.mu.Lock()
	busy := append([]*fence(nil), bo.busy...)
	f.mu.Unlock()
	done, intr := true, interrupted(m)
	for _, fc := range busy {
		ok, in := waitFence(fc, a.Timeout, intr)
		if in {
			return syscall.EINTR
		}
		if !ok {
			done = false
			break
		}
	}
	*a = abi.DRMAmdgpuGemWaitIdle{}
	asOut(a, abi.DRMAmdgpuGemWaitIdleOut{Status: b2u32(!done)})
	return 0
}

// gemOp is amdgpu_gem_op_ioctl (Linux 6.10: GET_GEM_CREATE_INFO and SET_PLACEMENT).
func (f *File) gemOp(m Memory, a *abi.DRMAmdgpuGemOp) syscall.Errno {
	bo := f.lookup(a.Handle)
	if bo == nil {
		return f.reject(m, syscall.ENOENT, "GEM_OP: no such handle", "handle", a.Handle)
	}
	defer bo.put(f)
	switch a.Op {
	case abi.AMDGPU_GEM_OP_GET_GEM_CREATE_INFO:
		f.mu.Lock()
		info := abi.DRMAmdgpuGemCreateIn{BOSize: bo.size, Alignment: bo.alignment, Domains: uint64(bo.preferred),
			DomainFlags: bo.flags}
		f.mu.Unlock()
		if m.WriteMemory(a.Value, bytesOf(info)) != nil {
			return f.reject(m, syscall.EFAULT, "GEM_OP: GET_GEM_CREATE_INFO value unwritable", "value", hex(a.Value))
		}
	case abi.AMDGPU_GEM_OP_SET_PLACEMENT:
		// No imports or userptr objects exist, and one device is never in its own XGMI hive, so the
		// EINVAL/EPERM cases of amdgpu cannot arise. The object stays where it is (there is no
		// eviction to move it); the domains take effect for what GET_GEM_CREATE_INFO reports.
		f.mu.Lock()
		bo.preferred = uint32(a.Value) & memDomains
		bo.allowed = bo.preferred
		if bo.allowed == abi.AMDGPU_GEM_DOMAIN_VRAM {
			bo.allowed |= abi.AMDGPU_GEM_DOMAIN_GTT
		}
		f.mu.Unlock()
	default:
		return f.reject(m, syscall.EINVAL, "GEM_OP: unknown op", "op", a.Op)
	}
	return 0
}

// primeHandleToFD is drm_prime_handle_to_fd_ioctl: flags other than DRM_CLOEXEC|DRM_RDWR are
// EINVAL, an unknown handle ENOENT, a VM_ALWAYS_VALID object EPERM (amdgpu_gem_prime_export);
// otherwise the backend installs the object's dma-buf as a new fd, which only a caller under
// kfdemu exec's seccomp supervisor can receive (else EOPNOTSUPP: README, deviations).
func (f *File) primeHandleToFD(m Memory, h *abi.DRMPrimeHandle) syscall.Errno {
	if h.Flags&^uint32(abi.DRM_CLOEXEC|abi.DRM_RDWR) != 0 {
		return f.reject(m, syscall.EINVAL, "PRIME_HANDLE_TO_FD: invalid flags", "flags", hex(uint64(h.Flags)))
	}
	bo := f.lookup(h.Handle)
	if bo == nil {
		return f.reject(m, syscall.ENOENT, "PRIME_HANDLE_TO_FD: no such handle", "handle", h.Handle)
	}
	defer bo.put(f)
	if bo.flags&abi.AMDGPU_GEM_CREATE_VM_ALWAYS_VALID != 0 {
		return f.reject(m, syscall.EPERM, "PRIME_HANDLE_TO_FD: VM_ALWAYS_VALID object", "handle", h.Handle)
	}
	ex := Export{Preferred: bo.preferred, Flags: bo.flags, CloExec: h.Flags&abi.DRM_CLOEXEC != 0,
		Meta: func() []byte {
			f.mu.Lock()
			defer f.mu.Unlock()
			return append([]byte(nil), bo.meta...)
		}}
	fd, errno := f.be.ExportFD(m, bo.buf, ex)
	if errno != 0 {
		return f.reject(m, errno, "PRIME_HANDLE_TO_FD: export failed", "handle", h.Handle)
	}
	h.FD = fd
	return 0
}

// primeFDToHandle is drm_gem_prime_fd_to_handle with amdgpu_gem_prime_import: the dma-buf of the
// client's fd becomes a GEM object of the file, the one the file already has for it when it
// exported or imported it before (drm_prime_lookup_buf_handle), else a new handle to an object
// that shares the dma-buf's memory. A dma-buf this device exported is its own BO (KFD's
// EXPORT_DMABUF included: 1.15's GEM_VA of KFD memory in the compute VM maps it).
func (f *File) primeFDToHandle(m Memory, h *abi.DRMPrimeHandle) syscall.Errno {
	if f.be == nil {
		return f.reject(m, syscall.EINVAL, "PRIME_FD_TO_HANDLE: no memory behind this node")
	}
	buf, key, errno := f.be.ImportFD(m, h.FD)
	if errno != 0 {
		return f.reject(m, errno, "PRIME_FD_TO_HANDLE: not a dma-buf of this device", "fd", h.FD)
	}
	// The file's objects, their keys computed without File.mu (the backend takes Process.mu).
	f.mu.Lock()
	type cand struct {
		h  uint32
		bo *gemBO
	}
	var cands []cand
	if f.usable() {
		for id, bo := range f.bos.m {
			cands = append(cands, cand{id, bo.get()})
		}
	}
	f.mu.Unlock()
	found, have := uint32(0), false
	for _, c := range cands {
		if !have && c.bo.buf != nil && f.be.BufferKey(c.bo.buf) == key {
			found, have = c.h, true
		}
		c.bo.put(f)
	}
	if have {
		f.be.Free(buf)
		h.Handle = found
		return 0
	}
	bo := &gemBO{buf: buf, size: buf.Size, preferred: buf.Domain, allowed: buf.Domain}
	bo.refs.Store(1)
	id, ok := f.newHandle(bo)
	if !ok {
		return f.reject(m, syscall.ENOSPC, "PRIME_FD_TO_HANDLE: no handle")
	}
	h.Handle = id
	f.log.Debug("render node: dma-buf imported", "handle", id, "size", buf.Size, "domain", hex(uint64(buf.Domain)))
	return 0
}

// GEM_VA (amdgpu_gem_va_ioctl, amdgpu_vm_bo_map/unmap/clear_mappings/replace_map).

const (
	gmcHoleMask  = 0x0000ffffffffffff // AMDGPU_GMC_HOLE_MASK
	vaValidFlags = abi.AMDGPU_VM_DELAY_UPDATE | abi.AMDGPU_VM_PAGE_READABLE | abi.AMDGPU_VM_PAGE_WRITEABLE |
		abi.AMDGPU_VM_PAGE_EXECUTABLE | abi.AMDGPU_VM_MTYPE_MASK | abi.AMDGPU_VM_PAGE_NOALLOC
	vaPRTFlags = abi.AMDGPU_VM_DELAY_UPDATE | abi.AMDGPU_VM_PAGE_PRT
	maxPFN     = vmSize48 / gpuPage // vm_manager.max_pfn
)

// gemVA is amdgpu_gem_va_ioctl. The page tables are updated at once, DELAY_UPDATE or not.
func (f *File) gemVA(m Memory, a *abi.DRMAmdgpuGemVA) syscall.Errno {
	va := a.VAAddress
	switch {
	case va < vaReservedBottom:
		return f.reject(m, syscall.EINVAL, "GEM_VA: va_address is in the reserved area", "va", hex(va))
	case va >= gmcHoleStart && va < gmcHoleEnd:
		return f.reject(m, syscall.EINVAL, "GEM_VA: va_address is in the VA hole", "va", hex(va))
	}
	va &= gmcHoleMask
	if va+a.MapSize > vmSize48-vaReservedTop || va+a.MapSize < va {
		return f.reject(m, syscall.EINVAL, "GEM_VA: va_address is in the top reserved area", "end", hex(va+a.MapSize))
	}
	if a.Flags&^vaValidFlags != 0 && a.Flags&^vaPRTFlags != 0 {
		return f.reject(m, syscall.EINVAL, "GEM_VA: invalid flags combination", "flags", hex(uint64(a.Flags)))
	}
	switch a.Operation {
	case abi.AMDGPU_VA_OP_MAP, abi.AMDGPU_VA_OP_UNMAP, abi.AMDGPU_VA_OP_CLEAR, abi.AMDGPU_VA_OP_REPLACE:
	default:
		return f.reject(m, syscall.EINVAL, "GEM_VA: unsupported operation", "op", a.Operation)
	}
	var bo *gemBO
	if a.Operation != abi.AMDGPU_VA_OP_CLEAR && a.Flags&abi.AMDGPU_VM_PAGE_PRT == 0 {
		if bo = f.lookup(a.Handle); bo == nil {
			return f.reject(m, syscall.ENOENT, "GEM_VA: no such handle", "handle", a.Handle)
		}
		defer bo.put(f)
	}
	f.vaMu.Lock()
	defer f.vaMu.Unlock()
	f.mu.Lock()
	ok := f.usable()
	if bo != nil {
		cur, found := f.bos.get(a.Handle) // closed meanwhile: its bo_va is gone
		ok = ok && found && cur == bo
	}
	f.mu.Unlock()
	if !ok {
		return f.reject(m, syscall.ENOENT, "GEM_VA: no bo_va", "handle", a.Handle)
	}
	var errno syscall.Errno
	switch a.Operation {
	case abi.AMDGPU_VA_OP_MAP:
		errno = f.vaMap(m, bo, va, a.OffsetInBO, a.MapSize, a.Flags, false)
	case abi.AMDGPU_VA_OP_REPLACE:
		errno = f.vaMap(m, bo, va, a.OffsetInBO, a.MapSize, a.Flags, true)
	case abi.AMDGPU_VA_OP_UNMAP:
		errno = f.vaUnmap(m, bo, va)
	case abi.AMDGPU_VA_OP_CLEAR:
		if errno = f.verifyVA(m, nil, va, 0, a.MapSize); errno == 0 {
			f.clearMappings(va, a.MapSize)
		}
	}
	return errno
}

// verifyVA is amdgpu_vm_verify_parameters.
func (f *File) verifyVA(m Memory, bo *gemBO, va, offset, size uint64) syscall.Errno {
	switch {
	case (va|offset|size)&(gpuPage-1) != 0:
		return f.reject(m, syscall.EINVAL, "GEM_VA: unaligned", "va", hex(va), "offset", hex(offset), "size", hex(size))
	case va+size < va || offset+size < offset || size == 0:
		return f.reject(m, syscall.EINVAL, "GEM_VA: empty or overflowing range", "va", hex(va), "offset", hex(offset), "size", hex(size))
	case bo != nil && offset+size > bo.size:
		return f.reject(m, syscall.EINVAL, "GEM_VA: range beyond the object", "offset", hex(offset), "size", hex(size), "bo_size", bo.size)
	case (va+size-1)/gpuPage >= maxPFN:
		return f.reject(m, syscall.EINVAL, "GEM_VA: beyond max_pfn", "va", hex(va), "size", hex(size))
	}
	return 0
}

// vaMap is amdgpu_vm_bo_map (replace: amdgpu_vm_bo_replace_map, which clears the range first). bo
// nil is a PRT mapping. With f.vaMu held.
func (f *File) vaMap(m Memory, bo *gemBO, va, offset, size uint64, flags uint32, replace bool) syscall.Errno {
	if errno := f.verifyVA(m, bo, va, offset, size); errno != 0 {
		return errno
	}
	if replace {
		f.clearMappings(va, size)
	}
	var buf *Buffer
	if bo != nil {
		buf = bo.buf
	}
	if err := f.be.Map(va, buf, offset, size, flags); err != nil {
		if errors.Is(err, ErrGone) {
			return f.reject(m, syscall.ENODEV, "GEM_VA: process gone")
		}
		return f.reject(m, syscall.EINVAL, "GEM_VA: va conflicts with a mapping", "va", hex(va), "size", hex(size), "err", err.Error())
	}
	mp := &mapping{start: va / gpuPage, last: (va+size)/gpuPage - 1, offset: offset, flags: flags, bo: bo}
	if bo != nil {
		bo.maps = append(bo.maps, mp)
	} else {
		f.prt = append(f.prt, mp)
	}
	return 0
}

// vaUnmap is amdgpu_vm_bo_unmap: the mapping of bo (nil: the PRT bo_va) that starts at va.
func (f *File) vaUnmap(m Memory, bo *gemBO, va uint64) syscall.Errno {
	list := &f.prt
	if bo != nil {
		list = &bo.maps
	}
	for i, mp := range *list {
		if mp.start == va/gpuPage {
			f.be.Unmap(mp.va(), mp.size())
			*list = append((*list)[:i], (*list)[i+1:]...)
			return 0
		}
	}
	return f.reject(m, syscall.ENOENT, "GEM_VA: no mapping starts there", "va", hex(va))
}

// clearMappings is amdgpu_vm_bo_clear_mappings: every mapping of the file in [va, va+size) goes;
// one that straddles an end keeps the part outside. With f.vaMu held.
func (f *File) clearMappings(va, size uint64) {
	s, e := va/gpuPage, (va+size)/gpuPage-1
	clip := func(list []*mapping) []*mapping {
		out := list[:0:0]
		for _, mp := range list {
			if mp.last < s || mp.start > e {
				out = append(out, mp)
				continue
			}
			lo, hi := max(mp.start, s), min(mp.last, e)
			f.be.Unmap(lo*gpuPage, (hi-lo+1)*gpuPage)
			if mp.start < s {
				out = append(out, &mapping{start: mp.start, last: s - 1, offset: mp.offset, flags: mp.flags, bo: mp.bo})
			}
			if mp.last > e {
				out = append(out, &mapping{start: e + 1, last: mp.last, offset: mp.offset + (e+1-mp.start)*gpuPage,
					flags: mp.flags, bo: mp.bo})
			}
		}
		return out
	}
	f.mu.Lock()
	bos := f.bos.all()
	f.mu.Unlock()
	for _, bo := range bos {
		bo.maps = clip(bo.maps)
	}
	f.prt = clip(f.prt)
}

// vmIoctl is amdgpu_vm_ioctl: RESERVE_VMID and UNRESERVE_VMID of the GFX hub. No VMID is dedicated in
// the model (every process's VM is reached through its own page tables); the reservation is kept as
// state only.
func (f *File) vmIoctl(m Memory, a *abi.DRMAmdgpuVM) syscall.Errno {
	if a.Flags != 0 {
		return f.reject(m, syscall.EINVAL, "VM: flags", "flags", a.Flags)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch a.Op {
	case abi.AMDGPU_VM_OP_RESERVE_VMID:
		f.vmidReserved = true
	case abi.AMDGPU_VM_OP_UNRESERVE_VMID:
		f.vmidReserved = false
	default:
		return f.reject(m, syscall.EINVAL, "VM: unknown op", "op", a.Op)
	}
	return 0
}

// asOut overwrites the argument union *in with its out member (zero-extended to the union).
func asOut[A any](in *A, out any) {
	b := bytesOf(in)
	clear(b)
	encode(b, out)
	decode(b, in)
}

func hex(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

func b2u32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
