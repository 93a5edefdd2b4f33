package kfd

import (
	"encoding/binary"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/cp/pm4"
	"github.com/kfdemu/kfdemu/gpu/sdma"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"golang.org/x/sys/unix"
)

// renderEnv is env with one open of the GPU's render node and a bump allocator in client memory.
type renderEnv struct {
	*env
	rf  File
	pos uint64
}

func newRenderEnv(t *testing.T) *renderEnv {
	e := &renderEnv{env: newEnv(t, "mi210")}
	n := e.sys.NodeByGPUID(e.gpu)
	rf, err := e.d.OpenRender(n.RenderMinor(), e.c.tgid)
	if err != nil {
		t.Fatal(err)
	}
	e.rf = rf
	e.c.fds[10] = [2]int{int(n.RenderMinor()), e.c.tgid}
	t.Cleanup(rf.Release)
	return e
}

func (e *renderEnv) put(b []byte) uint64 {
	a := e.c.base + 0x80000 + e.pos
	e.c.WriteMemory(a, b)
	e.pos = (e.pos + uint64(len(b)) + 63) &^ 63
	return a
}

// drm issues a render-node ioctl with v's bytes; the result is decoded back into v.
func (e *renderEnv) drm(cmd uint32, v any) syscall.Errno {
	buf := make([]byte, abi.IOCSize(cmd))
	encode(buf, v)
	errno := e.rf.Ioctl(e.c, cmd, buf)
	decode(buf, v)
	return errno
}

func (e *renderEnv) gemCreate(size uint64, dom uint64) uint32 {
	a := abi.DRMAmdgpuGemCreate{BOSize: size, Domains: dom, DomainFlags: abi.AMDGPU_GEM_CREATE_VRAM_CLEARED}
	if errno := e.drm(abi.DRM_IOCTL_AMDGPU_GEM_CREATE, &a); errno != 0 {
		e.t.Fatalf("GEM_CREATE %d: %v", size, errno)
	}
	return uint32(a.BOSize)
}

func (e *renderEnv) mmapOffset(h uint32) int64 {
	a := abi.DRMAmdgpuGemMmap{Handle: h}
	if errno := e.drm(abi.DRM_IOCTL_AMDGPU_GEM_MMAP, &a); errno != 0 {
		e.t.Fatalf("GEM_MMAP: %v", errno)
	}
	return int64(uint64(a.Handle) | uint64(a.Pad)<<32)
}

func (e *renderEnv) vramUsage() uint64 {
	ptr := e.put(make([]byte, 8))
	if errno := e.drm(abi.DRM_IOCTL_AMDGPU_INFO, &abi.DRMAmdgpuInfo{ReturnPointer: ptr, ReturnSize: 8, Query: abi.AMDGPU_INFO_VRAM_USAGE}); errno != 0 {
		e.t.Fatal(errno)
	}
	var b [8]byte
	e.c.ReadMemory(ptr, b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// TestGEMThroughKFD: GEM objects live in the render node's memfd at their GEM_MMAP offsets and are
// counted in the GPU's usage; GEM_VA works before ACQUIRE_VM and shares the VM kfd then uses, so kfd
// and GEM ranges conflict; an SDMA IB writes through the VM; closing the file frees everything.
func TestGEMThroughKFD(t *testing.T) {
	e := newRenderEnv(t)
	vram := e.gemCreate(4<<20, abi.AMDGPU_GEM_DOMAIN_VRAM)
	if u := e.vramUsage(); u != 4<<20 {
		t.Errorf("VRAM usage %d after a 4 MiB GEM object", u)
	}
	gtt := e.gemCreate(64<<10, abi.AMDGPU_GEM_DOMAIN_GTT)
	off := e.mmapOffset(gtt)
	const va = 0x100000000
	gemVA := func(op, h uint32, va, size uint64) syscall.Errno {
		return e.drm(abi.DRM_IOCTL_AMDGPU_GEM_VA, &abi.DRMAmdgpuGemVA{Handle: h, Operation: op, VAAddress: va, MapSize: size,
			Flags: abi.AMDGPU_VM_PAGE_READABLE | abi.AMDGPU_VM_PAGE_WRITEABLE | abi.AMDGPU_VM_PAGE_EXECUTABLE})
	}
	if errno := gemVA(abi.AMDGPU_VA_OP_MAP, gtt, va, 64<<10); errno != 0 {
		t.Fatalf("GEM_VA before ACQUIRE_VM: %v", errno)
	}
	if errno := gemVA(abi.AMDGPU_VA_OP_MAP, vram, 0x200000000, 4<<20); errno != 0 {
		t.Fatalf("GEM_VA of VRAM: %v", errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_ACQUIRE_VM, &abi.AcquireVMArgs{DRMFD: 10, GPUID: e.gpu}); errno != 0 {
		t.Fatal(errno)
	}
	// kfd cannot allocate over a GEM mapping, nor GEM map over a kfd BO.
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &abi.AllocMemoryOfGPUArgs{VAAddr: va + 0x1000, Size: 4096, GPUID: e.gpu, Flags: allocGTT}); errno != syscall.EINVAL {
		t.Errorf("kfd ALLOC over a GEM mapping: %v", errno)
	}
	a := abi.AllocMemoryOfGPUArgs{VAAddr: 0x300000000, Size: 4096, GPUID: e.gpu, Flags: allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
		t.Fatal(errno)
	}
	if errno := gemVA(abi.AMDGPU_VA_OP_MAP, gtt, 0x300000000, 4096); errno != syscall.EINVAL {
		t.Errorf("GEM_VA over a kfd BO: %v", errno)
	}
	// An IB in the GTT object (written through the memfd, as the client's CPU mapping would) that
	// writes two dwords into the VRAM object.
	sp := e.rf.Backing()
	ib := sdma.AppendWrite(nil, 0x200000000+0x10, []uint32{0x1234, 0x5678})
	if _, err := sp.WriteAt(ib, off); err != nil {
		t.Fatal(err)
	}
	var ctx abi.DRMAmdgpuCtx
	ctx.Op = abi.AMDGPU_CTX_OP_ALLOC_CTX
	if errno := e.drm(abi.DRM_IOCTL_AMDGPU_CTX, &ctx); errno != 0 {
		t.Fatal(errno)
	}
	id := ctx.Op
	data := make([]byte, 32)
	encode(data, abi.DRMAmdgpuCSChunkIB{VAStart: va, IBBytes: uint32(len(ib)), IPType: abi.AMDGPU_HW_IP_DMA})
	chunk := make([]byte, 16)
	encode(chunk, abi.DRMAmdgpuCSChunk{ChunkID: abi.AMDGPU_CHUNK_ID_IB, LengthDW: 8, ChunkData: e.put(data)})
	ptrs := binary.LittleEndian.AppendUint64(nil, e.put(chunk))
	cs := abi.DRMAmdgpuCS{CtxID: id, NumChunks: 1, Chunks: e.put(ptrs)}
	if errno := e.drm(abi.DRM_IOCTL_AMDGPU_CS, &cs); errno != 0 {
		t.Fatal(errno)
	}
	seq := uint64(cs.CtxID) | uint64(cs.BOListHandle)<<32
	w := abi.DRMAmdgpuWaitCS{Handle: seq, Timeout: ^uint64(0), IPType: abi.AMDGPU_HW_IP_DMA, CtxID: id}
	if errno := e.drm(abi.DRM_IOCTL_AMDGPU_WAIT_CS, &w); errno != 0 || w.Handle != 0 {
		t.Fatalf("WAIT_CS: %v %+v", errno, w)
	}
	got := make([]byte, 8)
	if _, err := sp.ReadAt(got, e.mmapOffset(vram)+0x10); err != nil || binary.LittleEndian.Uint32(got[4:]) != 0x5678 {
		t.Errorf("VRAM after the IB: % x %v", got, err)
	}
	if st := e.d.Stats(); st["gem_objects"] != 2 || st["gem_contexts"] != 1 || st["bos"] != 1 {
		t.Errorf("stats: %v", st)
	}
	e.rf.Release()
	if st := e.d.Stats(); st["gem_objects"] != 0 || st["gem_contexts"] != 0 {
		t.Errorf("stats after the render node's release: %v", st)
	}
	e.d.mu.Lock()
	used := e.d.vramUsed[e.gpu]
	e.d.mu.Unlock()
	if used != 0 {
		t.Errorf("VRAM still used: %d", used)
	}
	// The kfd BO is still there and mapped: kfd keeps the VM.
	if errno := e.do(abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: a.Handle}); errno != 0 {
		t.Errorf("kfd FREE: %v", errno)
	}
}

// TestGEMVRAMFallback: a VRAM object that does not fit in what is left of VRAM goes to GTT (domains
// VRAM|GTT, as amdgpu's retry leaves them); beyond GTT too, ENOMEM.
func TestGEMVRAMFallback(t *testing.T) {
	e := newRenderEnv(t)
	size := e.sys.NodeByGPUID(e.gpu).VRAMSize()
	e.d.mu.Lock()
	e.d.vramUsed[e.gpu] = size - 1<<20
	e.d.mu.Unlock()
	defer func() {
		e.d.mu.Lock()
		e.d.vramUsed[e.gpu] = 0
		e.d.mu.Unlock()
	}()
	h := e.gemCreate(2<<20, abi.AMDGPU_GEM_DOMAIN_VRAM)
	info := make([]byte, 32)
	ptr := e.put(info)
	if errno := e.drm(abi.DRM_IOCTL_AMDGPU_GEM_OP, &abi.DRMAmdgpuGemOp{Handle: h, Op: abi.AMDGPU_GEM_OP_GET_GEM_CREATE_INFO, Value: ptr}); errno != 0 {
		t.Fatal(errno)
	}
	e.c.ReadMemory(ptr, info)
	if binary.LittleEndian.Uint64(info[16:]) != abi.AMDGPU_GEM_DOMAIN_VRAM|abi.AMDGPU_GEM_DOMAIN_GTT {
		t.Errorf("domains %#x", binary.LittleEndian.Uint64(info[16:]))
	}
	if u := e.vramUsage(); u != size-1<<20 {
		t.Errorf("VRAM usage %d", u)
	}
	a := abi.DRMAmdgpuGemCreate{BOSize: 1 << 40, Domains: abi.AMDGPU_GEM_DOMAIN_GTT}
	if errno := e.drm(abi.DRM_IOCTL_AMDGPU_GEM_CREATE, &a); errno != syscall.ENOMEM {
		t.Errorf("1 TiB GTT object: %v", errno)
	}
}

// TestGEMProcessExit: a process that dies with GEM objects, a BO list and a job that never ends
// (POLL_REGMEM on a word nobody writes) leaves nothing behind.
func TestGEMProcessExit(t *testing.T) {
	e := newRenderEnv(t)
	h := e.gemCreate(64<<10, abi.AMDGPU_GEM_DOMAIN_GTT)
	e.gemCreate(16<<20, abi.AMDGPU_GEM_DOMAIN_VRAM)
	const va = 0x100000000
	if errno := e.drm(abi.DRM_IOCTL_AMDGPU_GEM_VA, &abi.DRMAmdgpuGemVA{Handle: h, Operation: abi.AMDGPU_VA_OP_MAP, VAAddress: va,
		MapSize: 64 << 10, Flags: abi.AMDGPU_VM_PAGE_READABLE | abi.AMDGPU_VM_PAGE_WRITEABLE}); errno != 0 {
		t.Fatal(errno)
	}
	poll := sdma.AppendPoll(nil, sdma.Poll{MemPoll: true, Addr: va + 0x1000, Value: 1, Mask: ^uint32(0), Func: sdma.PollEqual, Retry: 0xfff})
	e.rf.Backing().WriteAt(poll, e.mmapOffset(h))
	ctx := abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_ALLOC_CTX}
	e.drm(abi.DRM_IOCTL_AMDGPU_CTX, &ctx)
	ents := make([]byte, 8)
	binary.LittleEndian.PutUint32(ents, h)
	list := abi.DRMAmdgpuBOList{BONumber: 1, BOInfoSize: 8, BOInfoPtr: e.put(ents)}
	if errno := e.drm(abi.DRM_IOCTL_AMDGPU_BO_LIST, &list); errno != 0 {
		t.Fatal(errno)
	}
	data := make([]byte, 32)
	encode(data, abi.DRMAmdgpuCSChunkIB{VAStart: va, IBBytes: uint32(len(poll)), IPType: abi.AMDGPU_HW_IP_DMA})
	chunk := make([]byte, 16)
	encode(chunk, abi.DRMAmdgpuCSChunk{ChunkID: abi.AMDGPU_CHUNK_ID_IB, LengthDW: 8, ChunkData: e.put(data)})
	cs := abi.DRMAmdgpuCS{CtxID: ctx.Op, BOListHandle: list.Operation, NumChunks: 1,
		Chunks: e.put(binary.LittleEndian.AppendUint64(nil, e.put(chunk)))}
	if errno := e.drm(abi.DRM_IOCTL_AMDGPU_CS, &cs); errno != 0 {
		t.Fatal(errno)
	}
	time.Sleep(10 * time.Millisecond)
	if st := e.d.Stats(); st["gem_objects"] != 2 || st["gem_bo_lists"] != 1 {
		t.Fatalf("stats: %v", st)
	}
	e.d.ProcessExited(e.c.tgid)
	if st := e.d.Stats(); st["processes"] != 0 || st["gem_objects"] != 0 || st["gpu_memory_segments"] != 0 {
		t.Errorf("after exit: %v", st)
	}
	e.d.mu.Lock()
	used, gttUsed := e.d.vramUsed[e.gpu], e.d.gttUsed[e.gpu]
	e.d.mu.Unlock()
	if used != 0 || gttUsed != 0 {
		t.Errorf("usage after exit: VRAM %d GTT %d", used, gttUsed)
	}
	// The late close of the file changes nothing.
	var v abi.DRMAmdgpuGemCreate
	v.BOSize, v.Domains = 4096, abi.AMDGPU_GEM_DOMAIN_GTT
	if errno := e.drm(abi.DRM_IOCTL_AMDGPU_GEM_CREATE, &v); errno != syscall.ENODEV {
		t.Errorf("GEM_CREATE after exit: %v", errno)
	}
}

// TestGEMIsolation: another process's open of the same render node has handles, contexts and BO
// lists of its own: it cannot name the first process's objects, and its memfd is another file.
func TestGEMIsolation(t *testing.T) {
	e := newRenderEnv(t)
	h := e.gemCreate(4096, abi.AMDGPU_GEM_DOMAIN_GTT)
	ctx := abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_ALLOC_CTX}
	if errno := e.drm(abi.DRM_IOCTL_AMDGPU_CTX, &ctx); errno != 0 {
		t.Fatal(errno)
	}
	other := newCaller(fakeTgid + 1)
	n := e.sys.NodeByGPUID(e.gpu)
	rf2, err := e.d.OpenRender(n.RenderMinor(), other.tgid)
	if err != nil {
		t.Fatal(err)
	}
	defer rf2.Release()
	if rf2.Backing() == e.rf.Backing() {
		t.Error("two processes share a render-node memfd")
	}
	do := func(cmd uint32, v any) syscall.Errno {
		buf := make([]byte, abi.IOCSize(cmd))
		encode(buf, v)
		errno := rf2.Ioctl(other, cmd, buf)
		decode(buf, v)
		return errno
	}
	if errno := do(abi.DRM_IOCTL_AMDGPU_GEM_MMAP, &abi.DRMAmdgpuGemMmap{Handle: h}); errno != syscall.ENOENT {
		t.Errorf("GEM_MMAP of the other process's handle: %v", errno)
	}
	if errno := do(abi.DRM_IOCTL_GEM_CLOSE, &abi.DRMGemClose{Handle: h}); errno != syscall.EINVAL {
		t.Errorf("GEM_CLOSE of the other process's handle: %v", errno)
	}
	if errno := do(abi.DRM_IOCTL_AMDGPU_CTX, &abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_QUERY_STATE, CtxID: ctx.Op}); errno != syscall.EINVAL {
		t.Errorf("query of the other process's context: %v", errno)
	}
	if errno := do(abi.DRM_IOCTL_AMDGPU_GEM_VA, &abi.DRMAmdgpuGemVA{Handle: h, Operation: abi.AMDGPU_VA_OP_MAP, VAAddress: 1 << 32,
		MapSize: 4096, Flags: abi.AMDGPU_VM_PAGE_READABLE}); errno != syscall.ENOENT {
		t.Errorf("GEM_VA of the other process's handle: %v", errno)
	}
	// Its own handle 1 is its own object.
	a := abi.DRMAmdgpuGemCreate{BOSize: 4096, Domains: abi.AMDGPU_GEM_DOMAIN_GTT}
	if errno := do(abi.DRM_IOCTL_AMDGPU_GEM_CREATE, &a); errno != 0 || uint32(a.BOSize) != 1 {
		t.Errorf("GEM_CREATE in the other process: %v %d", errno, a.BOSize)
	}
	if st := e.d.Stats(); st["gem_objects"] != 2 || st["processes"] != 2 {
		t.Errorf("stats: %v", st)
	}
}

// TestGEMComputeIB: a COMPUTE submission's PM4 IB runs on a kernel ring of its own: SET_SH_REG,
// a DISPATCH_DIRECT whose wave stores to scratch, a WRITE_DATA; WAIT_CS returns when all is done.
// An IB that faults makes the context guilty.
func TestGEMComputeIB(t *testing.T) {
	e := newRenderEnv(t)
	const ibVA, codeVA, scratchVA, dataVA = 0x100000000, 0x200000000, 0x300000000, 0x400000000
	rwx := uint32(abi.AMDGPU_VM_PAGE_READABLE | abi.AMDGPU_VM_PAGE_WRITEABLE | abi.AMDGPU_VM_PAGE_EXECUTABLE)
	obj := map[uint64]uint32{}
	for _, va := range []uint64{ibVA, codeVA, scratchVA, dataVA} {
		h := e.gemCreate(64<<10, abi.AMDGPU_GEM_DOMAIN_GTT)
		if errno := e.drm(abi.DRM_IOCTL_AMDGPU_GEM_VA, &abi.DRMAmdgpuGemVA{Handle: h, Operation: abi.AMDGPU_VA_OP_MAP,
			VAAddress: va, MapSize: 64 << 10, Flags: rwx}); errno != 0 {
			t.Fatal(errno)
		}
		obj[va] = h
	}
	sp := e.rf.Backing()
	write32 := func(va uint64, off int64, w ...uint32) {
		b := make([]byte, 4*len(w))
		for i, v := range w {
			binary.LittleEndian.PutUint32(b[4*i:], v)
		}
		if _, err := sp.WriteAt(b, e.mmapOffset(obj[va])+off); err != nil {
			t.Fatal(err)
		}
	}
	// v_mov_b32 v1, 0x1234abcd; v_mov_b32 v0, 0; scratch_store_dword v0, v1, off; s_waitcnt vmcnt(0); s_endpgm
	write32(codeVA, 0, 0x7E0202FF, 0x1234abcd, 0x7E000280, 0xDC704000, 0x007F0100, 0xBF8C0F70, 0xBF810000)
	setSH := func(reg uint32, v ...uint32) []uint32 {
		return append([]uint32{pm4.Header(pm4.OpSetSHReg, uint32(len(v))), reg - pm4.SHRegStart}, v...)
	}
	var ib []uint32
	ib = append(ib, setSH(pm4.RegComputePgmLo, uint32(codeVA>>8), uint32(codeVA>>40))...)
	ib = append(ib, setSH(pm4.RegComputePgmRsrc1, 0, 1)...) // RSRC2: SCRATCH_EN
	ib = append(ib, setSH(pm4.RegComputeNumThreadX, 64, 1, 1)...)
	ib = append(ib, setSH(pm4.RegComputeScratchBaseLo, uint32(scratchVA>>8), uint32(scratchVA>>40))...)
	ib = append(ib, setSH(pm4.RegComputeTmpringSize, 8|1<<12)...)
	ib = append(ib, pm4.Header(pm4.OpDispatchDirect, 3), 1, 1, 1, 1)
	ib = append(ib, pm4.Header(pm4.OpWriteData, 3), 5<<8, uint32(dataVA&0xffffffff), uint32(dataVA>>32), 0xc0ffee)
	write32(ibVA, 0, ib...)
	ctx := abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_ALLOC_CTX}
	e.drm(abi.DRM_IOCTL_AMDGPU_CTX, &ctx)
	submit := func(va uint64, dwords int) (uint64, syscall.Errno) {
		data := make([]byte, 32)
		encode(data, abi.DRMAmdgpuCSChunkIB{VAStart: va, IBBytes: uint32(4 * dwords), IPType: abi.AMDGPU_HW_IP_COMPUTE, Ring: 1})
		chunk := make([]byte, 16)
		encode(chunk, abi.DRMAmdgpuCSChunk{ChunkID: abi.AMDGPU_CHUNK_ID_IB, LengthDW: 8, ChunkData: e.put(data)})
		cs := abi.DRMAmdgpuCS{CtxID: ctx.Op, NumChunks: 1, Chunks: e.put(binary.LittleEndian.AppendUint64(nil, e.put(chunk)))}
		errno := e.drm(abi.DRM_IOCTL_AMDGPU_CS, &cs)
		if errno != 0 {
			return 0, errno
		}
		w := abi.DRMAmdgpuWaitCS{Handle: uint64(cs.CtxID) | uint64(cs.BOListHandle)<<32, Timeout: monotonicNow() + 10e9,
			IPType: abi.AMDGPU_HW_IP_COMPUTE, Ring: 1, CtxID: ctx.Op}
		errno = e.drm(abi.DRM_IOCTL_AMDGPU_WAIT_CS, &w)
		return w.Handle, errno
	}
	if st, errno := submit(ibVA, len(ib)); errno != 0 || st != 0 {
		t.Fatalf("COMPUTE IB: status %d %v", st, errno)
	}
	got := make([]byte, 4)
	sp.ReadAt(got, e.mmapOffset(obj[scratchVA])+4*63)
	if binary.LittleEndian.Uint32(got) != 0x1234abcd {
		t.Errorf("scratch of lane 63: % x", got)
	}
	sp.ReadAt(got, e.mmapOffset(obj[dataVA]))
	if binary.LittleEndian.Uint32(got) != 0xc0ffee {
		t.Errorf("WRITE_DATA: % x", got)
	}
	// WRITE_DATA to an unmapped address.
	write32(ibVA, 0x1000, pm4.Header(pm4.OpWriteData, 3), 5<<8, 0, 0x9, 1)
	if _, errno := submit(ibVA+0x1000, 5); errno != syscall.ETIME {
		t.Errorf("faulting COMPUTE IB: %v", errno)
	}
	if _, errno := submit(ibVA, len(ib)); errno != syscall.ECANCELED {
		t.Errorf("CS on the guilty context: %v", errno)
	}
}

// monotonicNow is CLOCK_MONOTONIC in ns (amdgpu's absolute timeouts).
func monotonicNow() uint64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano())
}
