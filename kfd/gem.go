package kfd

import (
	"errors"
	"sort"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/kfd/drm"
	"github.com/kfdemu/kfdemu/mmu"
)

// GEM objects of the render node (package kfd/drm keeps the handles, contexts and jobs; this file is
// its drm.Backend): their memory is the process's render-node memfd, like kfd's VRAM and GTT BOs,
// accounted in the same per-GPU usage (vramUsed, gttUsed: AMDGPU_INFO's usage queries and sysfs
// used_memory), and their mappings go into the process's GPUVM of the GPU, the VM kfd uses too:
// amdgpu_amdkfd_gpuvm_acquire_process_vm turns the render node's VM into the compute VM, and the
// render node's VM exists from its open (amdgpu_driver_open_kms), so OpenRender creates it and
// ACQUIRE_VM adopts it. The model has one VM per process and GPU: every open of the node by a process
// shares it (amdgpu gives each open its own; see README, deviations).

// gemBackend is drm.Backend for one process on one GPU.
type gemBackend struct {
	p   *Process
	pd  *pdd
	sp  *space
	gtt uint64 // the GTT manager's size
}

// gemBuf is the backend's part of a drm.Buffer.
type gemBuf struct {
	pa  uint64 // physical segment (0: CPU domain, not GPU-accessible)
	off int64
	mem []byte
	dom uint32
	// dmabuf owns pa, mem and the accounting once the object was exported (dmabuf.go).
	dmabuf *DmaBuf
}

// gemInterval is a GEM mapping of a VM, [start, end).
type gemInterval struct{ start, end uint64 }

// Alloc implements drm.Backend: VRAM while the GPU's usage leaves room (there is no eviction), then
// GTT up to the GTT manager's size, then CPU (system pages no PTE can point to).
func (b *gemBackend) Alloc(domains uint32, size uint64) (*drm.Buffer, error) {
	p, d, gpu := b.p, b.p.d, b.pd.gpuID
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return nil, drm.ErrGone
	}
	var dom uint32
	d.mu.Lock()
	switch {
	case domains&abi.AMDGPU_GEM_DOMAIN_VRAM != 0 && d.vramUsed[gpu]+size <= b.pd.node.VRAMSize():
		dom = abi.AMDGPU_GEM_DOMAIN_VRAM
		d.vramUsed[gpu] += size
	case domains&abi.AMDGPU_GEM_DOMAIN_GTT != 0 && d.gttUsed[gpu]+size <= b.gtt:
		dom = abi.AMDGPU_GEM_DOMAIN_GTT
		d.gttUsed[gpu] += size
	case domains&abi.AMDGPU_GEM_DOMAIN_CPU != 0 || domains == 0:
		dom = abi.AMDGPU_GEM_DOMAIN_CPU
	}
	d.mu.Unlock()
	if dom == 0 {
		return nil, drm.ErrNoMemory
	}
	buf := &gemBuf{dom: dom}
	var err error
	if buf.off, buf.mem, err = b.sp.alloc(size); err == nil {
		switch dom {
		case abi.AMDGPU_GEM_DOMAIN_VRAM:
			buf.pa, err = d.phys.AllocVRAM(d.gpuIndex(gpu), size, mmu.Backing{Mem: buf.mem})
		case abi.AMDGPU_GEM_DOMAIN_GTT:
			buf.pa, err = d.phys.AllocSystem(size, mmu.Backing{Mem: buf.mem[:size:size]})
		}
		if err != nil {
			b.sp.release(buf.off, buf.mem)
		}
	}
	if err != nil {
		b.unaccount(dom, size)
		p.d.log.Warn("no memory for a GEM object", "tgid", p.tgid, "gpu", gpu, "size", size, "err", err)
		return nil, drm.ErrNoMemory
	}
	if dom == abi.AMDGPU_GEM_DOMAIN_VRAM {
		d.sys.UsedMemoryChanged()
	}
	return &drm.Buffer{Domain: dom, Size: size, Offset: uint64(buf.off), Mem: buf.mem, Priv: buf}, nil
}

func (b *gemBackend) unaccount(dom uint32, size uint64) {
	d, gpu := b.p.d, b.pd.gpuID
	d.mu.Lock()
	switch dom {
	case abi.AMDGPU_GEM_DOMAIN_VRAM:
		d.vramUsed[gpu] -= size
	case abi.AMDGPU_GEM_DOMAIN_GTT:
		d.gttUsed[gpu] -= size
	}
	d.mu.Unlock()
	if dom == abi.AMDGPU_GEM_DOMAIN_VRAM {
		d.sys.UsedMemoryChanged()
	}
}

// Free implements drm.Backend (also while the process is torn down, before its memfds close).
func (b *gemBackend) Free(buf *drm.Buffer) {
	g := buf.Priv.(*gemBuf)
	b.p.mu.Lock()
	defer b.p.mu.Unlock()
	if g.dmabuf != nil {
		g.pa, g.mem = 0, nil
		g.dmabuf.Put()
		g.dmabuf = nil
		return
	}
	if g.pa != 0 {
		if err := b.p.d.phys.Free(g.pa); err != nil {
			b.p.d.log.Error("GEM segment lost", "tgid", b.p.tgid, "err", err)
		}
		g.pa = 0
	}
	if g.mem != nil {
		b.sp.release(g.off, g.mem)
		g.mem = nil
		b.unaccount(buf.Domain, buf.Size)
	}
}

// gemPTE is the PTE of a GEM mapping: the mapping's READABLE/WRITEABLE/EXECUTABLE, and the placement
// as amdgpu_vm_bo_update and gmc_v9_0_get_coherence_flags make it for a non-coherent object: local
// VRAM MTYPE_RW, system pages snooped MTYPE_NC. The client's MTYPE override is not kept
// (gmc_v9_0_get_coherence_flags replaces it on GFX 9.4.2 too).
func gemPTE(dom, flags uint32) mmu.PTE {
	f := mmu.PTEValid
	if flags&abi.AMDGPU_VM_PAGE_READABLE != 0 {
		f |= mmu.PTEReadable
	}
	if flags&abi.AMDGPU_VM_PAGE_WRITEABLE != 0 {
		f |= mmu.PTEWriteable
	}
	if flags&abi.AMDGPU_VM_PAGE_EXECUTABLE != 0 {
		f |= mmu.PTEExecutable
	}
	if dom == abi.AMDGPU_GEM_DOMAIN_VRAM {
		return f | mmu.PTEMType(mmu.MTypeRW)
	}
	return f | mmu.PTESystem | mmu.PTESnooped | mmu.PTEMType(mmu.MTypeNC)
}

// Map implements drm.Backend. The range must not overlap another GEM mapping, a kfd BO's range
// (amdgpu_vm_bo_map sees both in the VM's interval tree) or anything else mapped in the VM. CPU-domain
// objects and PRT ranges (buf nil) take the range without PTEs: a GPU access there faults (amdgpu
// writes invalid PTEs for system-domain objects; PRT pages reading as zero are not modelled).
func (b *gemBackend) Map(va uint64, buf *drm.Buffer, offset, size uint64, flags uint32) error {
	p, pd := b.p, b.pd
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead || pd.vm == nil {
		return drm.ErrGone
	}
	if pd.gemOverlaps(va, size) || p.overlaps(pd.gpuID, va, size) {
		return drm.ErrConflict
	}
	if buf != nil && buf.Domain != abi.AMDGPU_GEM_DOMAIN_CPU {
		g := buf.Priv.(*gemBuf)
		if err := pd.vm.Map(va, size, g.pa+offset, gemPTE(buf.Domain, flags)); err != nil {
			if errors.Is(err, mmu.ErrOverlap) {
				return drm.ErrConflict
			}
			return err
		}
	}
	i := sort.Search(len(pd.gemVA), func(i int) bool { return pd.gemVA[i].start >= va })
	pd.gemVA = append(pd.gemVA, gemInterval{})
	copy(pd.gemVA[i+1:], pd.gemVA[i:])
	pd.gemVA[i] = gemInterval{va, va + size}
	return nil
}

// Unmap implements drm.Backend: the PTEs of [va, va+size) go (mmu waits until no engine uses them).
func (b *gemBackend) Unmap(va, size uint64) error {
	p, pd := b.p, b.pd
	p.mu.Lock()
	defer p.mu.Unlock()
	end := va + size
	out := pd.gemVA[:0]
	for _, r := range pd.gemVA {
		switch {
		case r.end <= va || r.start >= end:
			out = append(out, r)
		default:
			if r.start < va {
				out = append(out, gemInterval{r.start, va})
			}
			if r.end > end {
				out = append(out, gemInterval{end, r.end})
			}
		}
	}
	pd.gemVA = out
	if pd.vm != nil {
		if err := pd.vm.Unmap(va, size); err != nil && !errors.Is(err, mmu.ErrClosed) {
			return err
		}
	}
	return nil
}

// Engine implements drm.Backend: a Port of the VM for one job.
func (b *gemBackend) Engine() (drm.GPUMemory, func(), error) {
	b.p.mu.Lock()
	defer b.p.mu.Unlock()
	if b.p.dead || b.pd.vm == nil {
		return nil, nil, drm.ErrGone
	}
	port := b.pd.vm.NewPort()
	return port, port.Close, nil
}

// Clock implements drm.Backend.
func (b *gemBackend) Clock() uint64 { return gpuClock() }

// gemOverlaps reports whether a GEM mapping of the VM overlaps [va, va+size); with Process.mu held.
func (pd *pdd) gemOverlaps(va, size uint64) bool {
	for _, r := range pd.gemVA {
		if va < r.end && r.start < va+size {
			return true
		}
	}
	return false
}

// ensureVM creates the process's GPUVM of pd (amdgpu_vm_init at the render node's open); with
// Process.mu held. Translation faults are retry faults serviced by the SVM range list while XNACK is
// on, else fatal.
func (p *Process) ensureVM(pd *pdd) {
	if pd.vm != nil {
		return
	}
	gi := 0
	for i, x := range p.svmPDDs {
		if x == pd {
			gi = i
		}
	}
	one, batch := p.gpuFaults(gi)
	pd.vm = mmu.NewVM(p.d.phys, mmu.Config{PASID: p.pasid, GPU: pd.gpuID, Filter: p.d.filter(pd.gpuID), Fault: one, FaultBatch: batch})
	pd.vm.SetRetryFaults(p.xnack)
}

// ExportFD implements drm.Backend (PRIME_HANDLE_TO_FD): the dma-buf takes over the buffer's memory,
// its segment and its accounting at the first export.
func (b *gemBackend) ExportFD(m drm.Memory, buf *drm.Buffer, ex drm.Export) (int32, syscall.Errno) {
	p, d := b.p, b.p.d
	g := buf.Priv.(*gemBuf)
	p.mu.Lock()
	if g.mem == nil || p.dead {
		p.mu.Unlock()
		return 0, syscall.ENOENT
	}
	if g.dmabuf == nil {
		pa, mem, off, dom, size, sp := g.pa, g.mem, g.off, g.dom, buf.Size, b.sp
		g.dmabuf = d.newDmaBuf(&DmaBuf{
			gpu: b.pd.gpuID, vram: ex.Preferred&abi.AMDGPU_GEM_DOMAIN_VRAM != 0,
			gpuMem: ex.Preferred&(abi.AMDGPU_GEM_DOMAIN_VRAM|abi.AMDGPU_GEM_DOMAIN_GTT) != 0 && pa != 0,
			public: ex.Flags&abi.AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED != 0,
			size:   size, pa: pa, mem: mem, sp: sp, off: off, meta: ex.Meta,
			free: func() {
				if pa != 0 {
					if err := d.phys.Free(pa); err != nil {
						d.log.Error("dma-buf segment lost", "err", err)
					}
				}
				sp.release(off, mem)
				b.unaccount(dom, size)
			},
		})
	}
	db := g.dmabuf.Get()
	p.mu.Unlock()
	defer db.Put()
	c, ok := m.(Caller)
	if !ok {
		return 0, syscall.EOPNOTSUPP
	}
	fd, errno := installDmaBuf(d, c, db, ex.CloExec)
	return int32(fd), errno
}

// ImportFD implements drm.Backend (PRIME_FD_TO_HANDLE): an object of this device whose memory is
// the dma-buf's. amdgpu_gem_prime_import takes a dma-buf of the same device as its own BO (VRAM
// or GTT as it was placed) and one of another device as a GTT BO over its pages. Its mmap offset
// is the dma-buf's in this process's render-node backing; memory of another process's backing
// cannot be mapped through this node (GEM_MMAP EPERM, README deviations).
func (b *gemBackend) ImportFD(m drm.Memory, fd int32) (*drm.Buffer, uint64, syscall.Errno) {
	c, ok := m.(Caller)
	if !ok {
		return nil, 0, syscall.EINVAL
	}
	db, errno := dmabufOf(b.p.d, c, uint32(fd))
	if errno != 0 {
		return nil, 0, errno
	}
	dom := uint32(abi.AMDGPU_GEM_DOMAIN_GTT)
	switch {
	case db.pa == 0:
		dom = abi.AMDGPU_GEM_DOMAIN_CPU
	case db.vram && db.gpu == b.pd.gpuID:
		dom = abi.AMDGPU_GEM_DOMAIN_VRAM
	}
	g := &gemBuf{pa: db.pa, mem: db.mem, dom: dom, dmabuf: db, off: -1}
	buf := &drm.Buffer{Domain: dom, Size: db.size, Mem: db.mem, Priv: g}
	if db.sp != nil && db.sp == b.sp {
		g.off, buf.Offset = db.off, uint64(db.off)
	} else {
		buf.NoMmap = true
	}
	return buf, db.id, 0
}

// BufferKey implements drm.Backend: the id of the buffer's dma-buf.
func (b *gemBackend) BufferKey(buf *drm.Buffer) uint64 {
	g := buf.Priv.(*gemBuf)
	b.p.mu.Lock()
	defer b.p.mu.Unlock()
	if g.dmabuf == nil {
		return 0
	}
	return g.dmabuf.id
}
