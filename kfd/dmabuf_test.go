package kfd

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/topology"
	"golang.org/x/sys/unix"
)

// fdCaller is a client that can receive fds (as under kfdemu exec's seccomp supervisor): an fd
// table of dma-bufs whose entries hold a reference, as the open of the dma-buf's file does.
type fdCaller struct {
	*fakeCaller
	d     *Driver
	mu    sync.Mutex
	next  int
	bufs  map[int]*DmaBuf
	last  bool // cloexec of the last install
	files []*os.File
}

func newFDCaller(c *fakeCaller, d *Driver) *fdCaller {
	return &fdCaller{fakeCaller: c, d: d, next: 100, bufs: map[int]*DmaBuf{}}
}

func (c *fdCaller) InstallDmaBuf(b *DmaBuf, cloexec bool) (int, error) {
	o := c.d.OpenDmaBuf(b.ID())
	if o == nil {
		return 0, syscall.ENOENT
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	c.bufs[c.next], c.last = o, cloexec
	return c.next, nil
}

func (c *fdCaller) InstallFile(f *os.File, cloexec bool) (int, error) {
	nf, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.files = append(c.files, os.NewFile(uintptr(nf), "installed"))
	return nf, nil
}

func (c *fdCaller) DmaBufID(fd int) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.bufs[fd]; ok {
		return b.ID(), nil
	}
	if fd >= 0 && fd <= 2 {
		return 0, ErrNotDmaBuf // open, not a dma-buf
	}
	return 0, ErrBadFD
}

func (c *fdCaller) close(fd int) {
	c.mu.Lock()
	b := c.bufs[fd]
	delete(c.bufs, fd)
	c.mu.Unlock()
	b.Put()
}

// TestDmaBufExportImport follows a VRAM BO through export, a second process's import, the
// exporter's free and the closing of every fd: the memory lives while any of them holds it and is
// released (with its accounting) after the last; errnos as amdkfd's.
func TestDmaBufExportImport(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	const va, size = 0x20000000, 8192
	a := abi.AllocMemoryOfGPUArgs{VAAddr: va, Size: size, GPUID: e.gpu,
		Flags: allocVRAM | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | abi.KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
		t.Fatal(errno)
	}
	p := e.d.procs[e.c.tgid]
	pattern := bytes.Repeat([]byte{0xaa, 0x55}, size/2)
	copy(p.bos[a.Handle].mem, pattern)
	vram := func() uint64 { e.d.mu.Lock(); defer e.d.mu.Unlock(); return e.d.vramUsed[e.gpu] }
	if vram() != size {
		t.Fatalf("VRAM used %d", vram())
	}

	// Without a way to install the fd (a plain FUSE caller): EOPNOTSUPP, nothing exported.
	if errno := e.do(abi.AMDKFD_IOC_EXPORT_DMABUF, &abi.ExportDmabufArgs{Handle: a.Handle}); errno != syscall.EOPNOTSUPP {
		t.Fatalf("EXPORT without an installer: %v", errno)
	}
	c := newFDCaller(e.c, e.d)
	do := func(c Caller, f File, cmd uint32, v any) syscall.Errno {
		buf := make([]byte, abi.IOCSize(cmd))
		encode(buf, v)
		errno := f.Ioctl(c, cmd, buf)
		decode(buf, v)
		return errno
	}
	if errno := do(c, e.f, abi.AMDKFD_IOC_EXPORT_DMABUF, &abi.ExportDmabufArgs{Handle: a.Handle + 1}); errno != syscall.EINVAL {
		t.Errorf("EXPORT of no BO: %v", errno)
	}
	x := abi.ExportDmabufArgs{Handle: a.Handle, Flags: syscall.O_CLOEXEC}
	if errno := do(c, e.f, abi.AMDKFD_IOC_EXPORT_DMABUF, &x); errno != 0 || x.DmabufFD != 101 || !c.last {
		t.Fatalf("EXPORT: %v fd %d cloexec %v", errno, x.DmabufFD, c.last)
	}
	x2 := abi.ExportDmabufArgs{Handle: a.Handle}
	if errno := do(c, e.f, abi.AMDKFD_IOC_EXPORT_DMABUF, &x2); errno != 0 || c.last || c.bufs[int(x2.DmabufFD)] != c.bufs[int(x.DmabufFD)] {
		t.Fatalf("second EXPORT: %v, not the same dma-buf", errno)
	}
	if n := e.d.DmaBufs(); n != 1 {
		t.Fatalf("%d dma-bufs", n)
	}

	// GET_DMABUF_INFO.
	info := abi.GetDmabufInfoArgs{DmabufFD: x.DmabufFD, MetadataPtr: e.c.base + 512, MetadataSize: 16}
	if errno := do(c, e.f, abi.AMDKFD_IOC_GET_DMABUF_INFO, &info); errno != 0 || info.Size != size || info.GPUID != e.gpu ||
		info.Flags != allocVRAM|abi.KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC || info.MetadataSize != 0 {
		t.Fatalf("GET_DMABUF_INFO: %v %+v", errno, info)
	}
	for _, tc := range []struct {
		fd    uint32
		errno syscall.Errno
	}{{1, syscall.EINVAL}, {77, syscall.EBADF}} {
		if errno := do(c, e.f, abi.AMDKFD_IOC_GET_DMABUF_INFO, &abi.GetDmabufInfoArgs{DmabufFD: tc.fd}); errno != tc.errno {
			t.Errorf("GET_DMABUF_INFO fd %d: %v, want %v", tc.fd, errno, tc.errno)
		}
	}

	// The exporter frees its BO: the memory and its accounting stay with the dma-buf.
	if errno := e.do(abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: a.Handle}); errno != 0 {
		t.Fatal(errno)
	}
	if vram() != size || e.d.DmaBufs() != 1 {
		t.Fatalf("after the exporter's free: VRAM %d, %d dma-bufs", vram(), e.d.DmaBufs())
	}

	// Another process imports it (the fd passed on: the same dma-buf) and maps it.
	q := e.peer(fakeTgid + 1)
	qc := newFDCaller(q.c, q.d)
	qc.bufs[5] = c.bufs[int(x.DmabufFD)].Get()
	im := abi.ImportDmabufArgs{VAAddr: 0x30000000, GPUID: q.gpu, DmabufFD: 5}
	if errno := do(qc, q.f, abi.AMDKFD_IOC_IMPORT_DMABUF, &abi.ImportDmabufArgs{VAAddr: 0x30000000, GPUID: 1, DmabufFD: 5}); errno != syscall.EINVAL {
		t.Errorf("IMPORT on no GPU: %v", errno)
	}
	if errno := do(qc, q.f, abi.AMDKFD_IOC_IMPORT_DMABUF, &abi.ImportDmabufArgs{VAAddr: 0x30000000, GPUID: q.gpu, DmabufFD: 66}); errno != syscall.EBADF {
		t.Errorf("IMPORT of a closed fd: %v", errno)
	}
	if errno := do(qc, q.f, abi.AMDKFD_IOC_IMPORT_DMABUF, &im); errno != 0 || im.Handle>>32 != uint64(q.gpu) {
		t.Fatalf("IMPORT: %v handle %#x", errno, im.Handle)
	}
	if errno := do(qc, q.f, abi.AMDKFD_IOC_IMPORT_DMABUF, &abi.ImportDmabufArgs{VAAddr: 0x30001000, GPUID: q.gpu, DmabufFD: 5}); errno != syscall.EINVAL {
		t.Errorf("IMPORT over the first import: %v", errno)
	}
	qp := q.d.procs[q.c.tgid]
	ib := qp.bos[im.Handle]
	if !bytes.Equal(ib.mem, pattern) || ib.flags != allocVRAM|abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE|abi.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE {
		t.Fatalf("imported BO: flags %#x, memory differs", ib.flags)
	}
	binary.LittleEndian.PutUint32(q.c.mem, q.gpu)
	if errno := q.do(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &abi.MapMemoryToGPUArgs{Handle: im.Handle, DeviceIDsArrayPtr: q.c.base, NDevices: 1}); errno != 0 {
		t.Fatalf("MAP of the import: %v", errno)
	}

	// Every fd closed: the import still holds the memory; its free releases it.
	c.close(int(x.DmabufFD))
	c.close(int(x2.DmabufFD))
	qc.close(5)
	if vram() != size || e.d.DmaBufs() != 1 {
		t.Fatalf("after closing the fds: VRAM %d, %d dma-bufs", vram(), e.d.DmaBufs())
	}
	if errno := q.do(abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: im.Handle}); errno != syscall.EBUSY {
		t.Errorf("FREE of a mapped import: %v", errno)
	}
	if errno := q.do(abi.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &abi.UnmapMemoryFromGPUArgs{Handle: im.Handle, DeviceIDsArrayPtr: q.c.base, NDevices: 1}); errno != 0 {
		t.Fatal(errno)
	}
	if errno := q.do(abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: im.Handle}); errno != 0 {
		t.Fatal(errno)
	}
	if vram() != 0 || e.d.DmaBufs() != 0 {
		t.Fatalf("after the last reference: VRAM %d, %d dma-bufs", vram(), e.d.DmaBufs())
	}

	// A user-pointer BO cannot be exported (amdgpu_gem_prime_export: EPERM).
	u := abi.AllocMemoryOfGPUArgs{VAAddr: 0x40000000, Size: 4096, GPUID: e.gpu, MmapOffset: e.c.base, Flags: allocUserptr}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &u); errno != 0 {
		t.Fatal(errno)
	}
	if errno := do(c, e.f, abi.AMDKFD_IOC_EXPORT_DMABUF, &abi.ExportDmabufArgs{Handle: u.Handle}); errno != syscall.EPERM {
		t.Errorf("EXPORT of a userptr BO: %v", errno)
	}
}

// TestDmaBufOutlivesExporter: a process exits with a dma-buf fd open elsewhere; the memory stays
// until that fd closes, and nothing is left after.
func TestDmaBufOutlivesExporter(t *testing.T) {
	e := newEnv(t, "mi210")
	q := e.peer(fakeTgid + 7)
	segs := e.d.Stats()["gpu_memory_segments"]
	a := abi.AllocMemoryOfGPUArgs{VAAddr: 0x20000000, Size: 1 << 16, GPUID: q.gpu, Flags: allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}
	if errno := q.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
		t.Fatal(errno)
	}
	qc := newFDCaller(q.c, q.d)
	x := abi.ExportDmabufArgs{Handle: a.Handle}
	buf := make([]byte, abi.IOCSize(abi.AMDKFD_IOC_EXPORT_DMABUF))
	encode(buf, &x)
	if errno := q.f.Ioctl(qc, abi.AMDKFD_IOC_EXPORT_DMABUF, buf); errno != 0 {
		t.Fatal(errno)
	}
	decode(buf, &x)
	db := qc.bufs[int(x.DmabufFD)]
	e.d.ProcessExited(q.c.tgid)
	if e.d.DmaBufs() != 1 || e.d.Stats()["gpu_memory_segments"] != segs+1 {
		t.Fatalf("after the exporter's exit: %v", e.d.Stats())
	}
	info := abi.GetDmabufInfoArgs{DmabufFD: x.DmabufFD}
	buf = make([]byte, abi.IOCSize(abi.AMDKFD_IOC_GET_DMABUF_INFO))
	encode(buf, &info)
	if errno := e.f.Ioctl(&fdCaller{fakeCaller: e.c, d: e.d, bufs: map[int]*DmaBuf{int(x.DmabufFD): db}}, abi.AMDKFD_IOC_GET_DMABUF_INFO, buf); errno != 0 {
		t.Fatalf("GET_DMABUF_INFO after the exporter's exit: %v", errno)
	}
	decode(buf, &info)
	if info.Size != 1<<16 || info.Flags != allocGTT {
		t.Errorf("info %+v", info)
	}
	qc.close(int(x.DmabufFD))
	if st := e.d.Stats(); st["dmabufs"] != 0 || st["gpu_memory_segments"] != segs {
		t.Fatalf("after the last fd: %v", st)
	}
}

// TestDmaBufOfGEMObject: PRIME_HANDLE_TO_FD of a GEM object with metadata, then KFD's
// GET_DMABUF_INFO (metadata copied, EINVAL into a buffer too small) and the GEM handle's close.
func TestDmaBufOfGEMObject(t *testing.T) {
	e := newEnv(t, "mi210")
	n := e.sys.NodeByGPUID(e.gpu)
	rf, err := e.d.OpenRender(n.RenderMinor(), e.c.tgid)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Release()
	c := newFDCaller(e.c, e.d)
	io := func(f File, cmd uint32, v any) syscall.Errno {
		buf := make([]byte, abi.IOCSize(cmd))
		encode(buf, v)
		errno := f.Ioctl(c, cmd, buf)
		decode(buf, v)
		return errno
	}
	cr := abi.DRMAmdgpuGemCreate{BOSize: 4096, Domains: abi.AMDGPU_GEM_DOMAIN_VRAM, DomainFlags: abi.AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED}
	if errno := io(rf, abi.DRM_IOCTL_AMDGPU_GEM_CREATE, &cr); errno != 0 {
		t.Fatal(errno)
	}
	h := uint32(cr.BOSize) // out.handle overlays in.bo_size
	md := abi.DRMAmdgpuGemMetadata{Handle: h, Op: abi.AMDGPU_GEM_METADATA_OP_SET_METADATA, DataSizeBytes: 8}
	md.Data[0], md.Data[1] = 0x64636261, 0x68676665
	if errno := io(rf, abi.DRM_IOCTL_AMDGPU_GEM_METADATA, &md); errno != 0 {
		t.Fatal(errno)
	}
	ph := abi.DRMPrimeHandle{Handle: h, Flags: abi.DRM_CLOEXEC | abi.DRM_RDWR}
	if errno := io(rf, abi.DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph); errno != 0 || ph.FD != 101 || !c.last {
		t.Fatalf("PRIME_HANDLE_TO_FD: %v %+v", errno, ph)
	}
	small := abi.GetDmabufInfoArgs{DmabufFD: uint32(ph.FD), MetadataPtr: e.c.base + 1024, MetadataSize: 4}
	if errno := io(e.f, abi.AMDKFD_IOC_GET_DMABUF_INFO, &small); errno != syscall.EINVAL {
		t.Errorf("GET_DMABUF_INFO into 4 bytes: %v", errno)
	}
	info := abi.GetDmabufInfoArgs{DmabufFD: uint32(ph.FD), MetadataPtr: e.c.base + 1024, MetadataSize: 64}
	if errno := io(e.f, abi.AMDKFD_IOC_GET_DMABUF_INFO, &info); errno != 0 || info.MetadataSize != 8 ||
		info.Flags != allocVRAM|abi.KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC || info.Size != 4096 {
		t.Fatalf("GET_DMABUF_INFO: %v %+v", errno, info)
	}
	if got := string(e.c.mem[1024:1032]); got != "abcdefgh" {
		t.Errorf("metadata %q", got)
	}
	if errno := io(rf, abi.DRM_IOCTL_GEM_CLOSE, &abi.DRMGemClose{Handle: h}); errno != 0 {
		t.Fatal(errno)
	}
	if e.d.DmaBufs() != 1 {
		t.Fatal("the dma-buf went with the GEM handle")
	}
	c.close(int(ph.FD))
	if e.d.DmaBufs() != 0 {
		t.Fatal("the dma-buf outlived its last fd")
	}
}

// FuzzDmaBufIoctls runs one fuzzed dma-buf, SMI or memory ioctl in a process that has an exported
// BO (fd 101) and an SMI client, as a caller that can receive fds, then tears everything down:
// nothing may be left (dma-bufs, SMI clients, processes, PASIDs).
func FuzzDmaBufIoctls(f *testing.F) {
	f.Add(uint8(0x1c), make([]byte, 32))
	f.Add(uint8(0x1d), []byte{0, 0, 0, 0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 101, 0, 0, 0})
	f.Add(uint8(0x24), make([]byte, 16))
	f.Add(uint8(0x1f), make([]byte, 8))
	f.Add(uint8(0x17), make([]byte, 8))
	sys, _ := topology.Profile("mi210")
	d := New(sys, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 4})))
	gpu := sys.GPUs()[0].GPUID
	minor := sys.GPUs()[0].RenderMinor()
	nrs := []uint8{0x1c, 0x1d, 0x24, 0x1f, 0x16, 0x17, 0x18, 0x19}
	f.Fuzz(func(t *testing.T, nr uint8, arg []byte) {
		base := newCaller(fakeTgid + 3)
		c := newFDCaller(base, d)
		file, err := d.OpenKFD(base.tgid)
		if err != nil {
			t.Fatal(err)
		}
		rf, err := d.OpenRender(minor, base.tgid)
		if err != nil {
			t.Fatal(err)
		}
		e := &env{t: t, d: d, sys: sys, f: file, c: base, gpu: gpu}
		base.fds[10] = [2]int{int(minor), base.tgid}
		if errno := e.do(abi.AMDKFD_IOC_ACQUIRE_VM, &abi.AcquireVMArgs{DRMFD: 10, GPUID: gpu}); errno != 0 {
			t.Fatal(errno)
		}
		a := abi.AllocMemoryOfGPUArgs{VAAddr: 0x20000000, Size: 8192, GPUID: gpu, Flags: allocVRAM | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}
		if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
			t.Fatal(errno)
		}
		x := abi.ExportDmabufArgs{Handle: a.Handle}
		buf := make([]byte, 16)
		encode(buf, &x)
		if errno := file.Ioctl(c, abi.AMDKFD_IOC_EXPORT_DMABUF, buf); errno != 0 {
			t.Fatal(errno)
		}
		sm := make([]byte, 8)
		encode(sm, &abi.SMIEventsArgs{GPUID: gpu})
		if errno := file.Ioctl(c, abi.AMDKFD_IOC_SMI_EVENTS, sm); errno != 0 {
			t.Fatal(errno)
		}
		n := nrs[int(nr)%len(nrs)]
		if len(arg) > 64 {
			arg = arg[:64]
		}
		cmd := abi.IOC(abi.IOCRead|abi.IOCWrite, 'K', uint32(n), uint32(len(arg)))
		file.Ioctl(c, cmd, append([]byte(nil), arg...))
		for fd := range c.bufs {
			c.close(fd)
		}
		for _, f := range c.files {
			f.Close()
		}
		rf.Release()
		file.Release()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			st := d.Stats()
			if st["processes"] == 0 && st["pasids"] == 0 && st["dmabufs"] == 0 && st["smi_clients"] == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("leak: %v", st)
			}
		}
	})
}

// TestGEMVAOfKFDExport is 1.15's use (ROCr's virtual memory API): a KFD BO exported as a dma-buf,
// imported on the render node (PRIME_FD_TO_HANDLE: the BO itself, GEM_MMAP at its mmap offset)
// and mapped a second time in the compute VM with GEM_VA; the dma-buf lives until the handle, the
// fd and the BO are all gone.
func TestGEMVAOfKFDExport(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	const va, alias, size = 0x20000000, 0x30000000, 8192
	a := abi.AllocMemoryOfGPUArgs{VAAddr: va, Size: size, GPUID: e.gpu, Flags: allocVRAM | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
		t.Fatal(errno)
	}
	p := e.d.procs[e.c.tgid]
	pattern := bytes.Repeat([]byte{0x12, 0x34, 0x56, 0x78}, size/4)
	copy(p.bos[a.Handle].mem, pattern)
	c := newFDCaller(e.c, e.d)
	do := func(f File, cmd uint32, v any) syscall.Errno {
		buf := make([]byte, abi.IOCSize(cmd))
		encode(buf, v)
		errno := f.Ioctl(c, cmd, buf)
		decode(buf, v)
		return errno
	}
	ex := abi.ExportDmabufArgs{Handle: a.Handle, Flags: unix.O_CLOEXEC}
	if errno := do(e.f, abi.AMDKFD_IOC_EXPORT_DMABUF, &ex); errno != 0 {
		t.Fatal(errno)
	}
	n := e.sys.NodeByGPUID(e.gpu)
	rf, err := e.d.OpenRender(n.RenderMinor(), e.c.tgid)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Release()
	ph := abi.DRMPrimeHandle{FD: int32(ex.DmabufFD)}
	if errno := do(rf, abi.DRM_IOCTL_PRIME_FD_TO_HANDLE, &ph); errno != 0 || ph.Handle == 0 {
		t.Fatalf("PRIME_FD_TO_HANDLE: %v %+v", errno, ph)
	}
	mm := abi.DRMAmdgpuGemMmap{Handle: ph.Handle}
	if errno := do(rf, abi.DRM_IOCTL_AMDGPU_GEM_MMAP, &mm); errno != 0 || uint64(mm.Handle)|uint64(mm.Pad)<<32 != uint64(p.bos[a.Handle].off) {
		t.Fatalf("GEM_MMAP of the import: %v %+v, BO offset %#x", errno, mm, p.bos[a.Handle].off)
	}
	gva := abi.DRMAmdgpuGemVA{Handle: ph.Handle, Operation: abi.AMDGPU_VA_OP_MAP, Flags: abi.AMDGPU_VM_PAGE_READABLE | abi.AMDGPU_VM_PAGE_WRITEABLE,
		VAAddress: alias, MapSize: size}
	if errno := do(rf, abi.DRM_IOCTL_AMDGPU_GEM_VA, &gva); errno != 0 {
		t.Fatalf("GEM_VA: %v", errno)
	}
	got := make([]byte, size)
	if err := p.port(p.pdds[e.gpu]).Read(alias, got); err != nil || !bytes.Equal(got, pattern) {
		t.Fatalf("the alias in the compute VM: %v, %x...", err, got[:8])
	}
	if errno := do(rf, abi.DRM_IOCTL_GEM_CLOSE, &abi.DRMGemClose{Handle: ph.Handle}); errno != 0 {
		t.Fatal(errno)
	}
	c.close(int(ex.DmabufFD))
	if errno := e.do(abi.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &abi.UnmapMemoryFromGPUArgs{Handle: a.Handle}); errno != 0 && errno != syscall.EINVAL {
		t.Fatal(errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: a.Handle}); errno != 0 {
		t.Fatal(errno)
	}
	if e.d.DmaBufs() != 0 {
		t.Fatal("the dma-buf outlived the BO, its fd and its import")
	}
}
