package kfd

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// TestIPCExportImport follows a VRAM BO through IPC_EXPORT_HANDLE, imports into two other
// processes, the exporter's free and the importers' frees: one key per BO (also when an imported
// BO is exported), the export's flags echoed, memory shared, the key alive while any BO holds it,
// everything released after the last; errnos as DKMS amdkfd's.
func TestIPCExportImport(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	const va, size = 0x20000000, 3 * 4096
	a := abi.AllocMemoryOfGPUArgs{VAAddr: va, Size: size, GPUID: e.gpu,
		Flags: allocVRAM | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | abi.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
		t.Fatal(errno)
	}
	p := e.d.procs[e.c.tgid]
	copy(p.bos[a.Handle].mem, bytes.Repeat([]byte{0xaa}, size))
	vram := func() uint64 { e.d.mu.Lock(); defer e.d.mu.Unlock(); return e.d.vramUsed[e.gpu] }

	for _, tc := range []struct {
		name  string
		x     abi.IPCExportHandleArgs
		errno syscall.Errno
	}{
		{"no such gpu", abi.IPCExportHandleArgs{Handle: a.Handle, GPUID: e.gpu + 1}, syscall.EINVAL},
		{"no such BO", abi.IPCExportHandleArgs{Handle: a.Handle + 7, GPUID: e.gpu}, syscall.EINVAL},
	} {
		if errno := e.do(abi.AMDKFD_IOC_IPC_EXPORT_HANDLE, &tc.x); errno != tc.errno {
			t.Errorf("%s: %v, want %v", tc.name, errno, tc.errno)
		}
	}
	x := abi.IPCExportHandleArgs{Handle: a.Handle, GPUID: e.gpu, Flags: 0x2001}
	if errno := e.do(abi.AMDKFD_IOC_IPC_EXPORT_HANDLE, &x); errno != 0 || x.ShareHandle == [4]uint32{} {
		t.Fatalf("export: %v %x", errno, x.ShareHandle)
	}
	// Only the IDR half of the handle counts (GET_IDR_HANDLE), and a second export (other flags)
	// returns the same key.
	x2 := abi.IPCExportHandleArgs{Handle: a.Handle & 0xffffffff, GPUID: e.gpu, Flags: 0x4}
	if errno := e.do(abi.AMDKFD_IOC_IPC_EXPORT_HANDLE, &x2); errno != 0 || x2.ShareHandle != x.ShareHandle {
		t.Fatalf("second export: %v %x, want %x", errno, x2.ShareHandle, x.ShareHandle)
	}
	if n := e.d.IPCHandles(); n != 1 {
		t.Fatalf("%d IPC handles", n)
	}

	// A second process imports it.
	b := e.peer(fakeTgid + 1)
	const bva = 0x40000000
	im := abi.IPCImportHandleArgs{VAAddr: bva, ShareHandle: x.ShareHandle, GPUID: e.gpu}
	for _, tc := range []struct {
		name  string
		im    abi.IPCImportHandleArgs
		errno syscall.Errno
	}{
		{"unknown key", abi.IPCImportHandleArgs{VAAddr: bva, ShareHandle: [4]uint32{1, 2, 3, 4}, GPUID: e.gpu}, syscall.EINVAL},
		{"no such gpu", abi.IPCImportHandleArgs{VAAddr: bva, ShareHandle: x.ShareHandle, GPUID: 7}, syscall.EINVAL},
		{"unaligned va", abi.IPCImportHandleArgs{VAAddr: bva + 1, ShareHandle: x.ShareHandle, GPUID: e.gpu}, syscall.EINVAL},
	} {
		if errno := b.do(abi.AMDKFD_IOC_IPC_IMPORT_HANDLE, &tc.im); errno != tc.errno {
			t.Errorf("import, %s: %v, want %v", tc.name, errno, tc.errno)
		}
	}
	if errno := b.do(abi.AMDKFD_IOC_IPC_IMPORT_HANDLE, &im); errno != 0 {
		t.Fatalf("import: %v", errno)
	}
	if im.Flags != 0x2001 || im.GPUID != e.gpu || im.Handle>>32 != uint64(e.gpu) || im.MmapOffset < spaceLimit {
		t.Fatalf("import: %+v", im)
	}
	q := e.d.procs[b.c.tgid]
	ib := q.bos[im.Handle]
	if ib == nil || ib.va != bva || ib.size != size || ib.flags != a.Flags || ib.pa != p.bos[a.Handle].pa {
		t.Fatalf("imported BO %+v", ib)
	}
	ib.mem[5] = 0x11 // the importer's write is the exporter's memory
	if p.bos[a.Handle].mem[5] != 0x11 {
		t.Fatal("the imported BO does not share the exporter's memory")
	}
	// Its VA now conflicts with a second import at the same place.
	if errno := b.do(abi.AMDKFD_IOC_IPC_IMPORT_HANDLE, &abi.IPCImportHandleArgs{VAAddr: bva + 4096, ShareHandle: x.ShareHandle, GPUID: e.gpu}); errno != syscall.EINVAL {
		t.Errorf("overlapping import: %v", errno)
	}
	// Exporting the imported BO gives the original key.
	bx := abi.IPCExportHandleArgs{Handle: im.Handle, GPUID: e.gpu}
	if errno := b.do(abi.AMDKFD_IOC_IPC_EXPORT_HANDLE, &bx); errno != 0 || bx.ShareHandle != x.ShareHandle {
		t.Fatalf("export of the import: %v %x", errno, bx.ShareHandle)
	}

	// The exporter frees its BO: the key lives on with the importer, a third process imports it.
	if errno := e.do(abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: a.Handle}); errno != 0 {
		t.Fatal(errno)
	}
	if vram() != size {
		t.Fatalf("VRAM used %d after the exporter's free", vram())
	}
	c := e.peer(fakeTgid + 2)
	im3 := abi.IPCImportHandleArgs{VAAddr: bva, ShareHandle: x.ShareHandle, GPUID: e.gpu}
	if errno := c.do(abi.AMDKFD_IOC_IPC_IMPORT_HANDLE, &im3); errno != 0 || e.d.procs[c.c.tgid].bos[im3.Handle].mem[5] != 0x11 {
		t.Fatalf("import after the exporter's free: %v", errno)
	}
	if errno := b.do(abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: im.Handle}); errno != 0 {
		t.Fatal(errno)
	}
	if n := e.d.IPCHandles(); n != 1 || vram() != size {
		t.Fatalf("%d IPC handles, VRAM %d while the third process holds it", n, vram())
	}
	if errno := c.do(abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: im3.Handle}); errno != 0 {
		t.Fatal(errno)
	}
	if st := e.d.Stats(); st["ipc_handles"] != 0 || st["dmabufs"] != 0 || vram() != 0 {
		t.Fatalf("after the last free: %v, VRAM %d", st, vram())
	}
	// The key is forgotten.
	if errno := c.do(abi.AMDKFD_IOC_IPC_IMPORT_HANDLE, &abi.IPCImportHandleArgs{VAAddr: bva, ShareHandle: x.ShareHandle, GPUID: e.gpu}); errno != syscall.EINVAL {
		t.Errorf("import of a forgotten key: %v", errno)
	}
}

// TestIPCExportKinds: user-pointer BOs cannot be exported (EPERM), GTT ones can; an import into
// the exporting process maps its own pages (the export's mmap offset), a process exit drops its
// BOs' references.
func TestIPCExportKinds(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	u := abi.AllocMemoryOfGPUArgs{VAAddr: 0x10000000, Size: 4096, GPUID: e.gpu, MmapOffset: 0x7f0000000000,
		Flags: allocUserptr | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &u); errno != 0 {
		t.Fatal(errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_IPC_EXPORT_HANDLE, &abi.IPCExportHandleArgs{Handle: u.Handle, GPUID: e.gpu}); errno != syscall.EPERM {
		t.Errorf("export of a user-pointer BO: %v", errno)
	}
	g := abi.AllocMemoryOfGPUArgs{VAAddr: 0x20000000, Size: 8192, GPUID: e.gpu, Flags: allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &g); errno != 0 {
		t.Fatal(errno)
	}
	x := abi.IPCExportHandleArgs{Handle: g.Handle, GPUID: e.gpu, Flags: 9}
	if errno := e.do(abi.AMDKFD_IOC_IPC_EXPORT_HANDLE, &x); errno != 0 {
		t.Fatal(errno)
	}
	self := abi.IPCImportHandleArgs{VAAddr: 0x30000000, ShareHandle: x.ShareHandle, GPUID: e.gpu}
	if errno := e.do(abi.AMDKFD_IOC_IPC_IMPORT_HANDLE, &self); errno != 0 || self.MmapOffset != g.MmapOffset || self.Flags != 9 {
		t.Fatalf("self import: %v %+v (export's offset %#x)", errno, self, g.MmapOffset)
	}
	// Another process imports; then both exit: nothing stays.
	b := e.peer(fakeTgid + 1)
	im := abi.IPCImportHandleArgs{VAAddr: 0x30000000, ShareHandle: x.ShareHandle, GPUID: e.gpu}
	if errno := b.do(abi.AMDKFD_IOC_IPC_IMPORT_HANDLE, &im); errno != 0 {
		t.Fatal(errno)
	}
	e.d.ProcessExited(e.c.tgid)
	if n := e.d.IPCHandles(); n != 1 {
		t.Fatalf("%d IPC handles after the exporter's exit", n)
	}
	e.d.ProcessExited(b.c.tgid)
	if st := e.d.Stats(); st["ipc_handles"] != 0 || st["dmabufs"] != 0 {
		t.Fatalf("after both exits: %v", st)
	}
}

// TestCrossMemoryCopy is KFDIPCTest.CMABasicTest's and CrossMemoryAttachTest's use of
// CROSS_MEMORY_COPY, on this test process (a real pid: the driver checks the target with
// /proc) and a child of it: a stream of ranges into ranges, the count on success and failure,
// errnos as DKMS amdkfd's.
func TestCrossMemoryCopy(t *testing.T) {
	e := newEnv(t, "mi210")
	self := os.Getpid()
	// The env's process is fake; this test's own pid serves as the local process.
	l := e.peer(self)
	c := l.c
	const va = 0x20000000
	a := abi.AllocMemoryOfGPUArgs{VAAddr: va, Size: 4096, GPUID: e.gpu, Flags: allocVRAM | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}
	if errno := l.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
		t.Fatal(errno)
	}
	mem := e.d.procs[self].bos[a.Handle].mem
	for i := 0; i < 512; i++ {
		binary.LittleEndian.PutUint32(mem[4*i:], 0xa5a5a5a5)
		binary.LittleEndian.PutUint32(mem[2048+4*i:], 0xffffffff)
	}
	ranges := func(off uint64, rs ...abi.MemoryRange) uint64 {
		buf := make([]byte, 16*len(rs))
		encode(buf, rs)
		if err := c.WriteMemory(c.base+off, buf); err != nil {
			t.Fatal(err)
		}
		return c.base + off
	}
	cma := func(pid int, flags uint32, src, dst []abi.MemoryRange) (uint64, syscall.Errno) {
		x := abi.CrossMemoryCopyArgs{PID: uint32(pid), Flags: flags, SrcMemRangeArray: ranges(0, src...), SrcMemArraySize: uint64(len(src)),
			DstMemRangeArray: ranges(4096, dst...), DstMemArraySize: uint64(len(dst)), BytesCopied: 77}
		errno := l.do(abi.AMDKFD_IOC_CROSS_MEMORY_COPY, &x)
		return x.BytesCopied, errno
	}
	whole := abi.MemoryRange{VAAddr: va, Size: 4096}
	// CMABasicTest: the buffer onto itself, 3 bytes into the middle, then past its end.
	if n, errno := cma(self, 0, []abi.MemoryRange{whole}, []abi.MemoryRange{whole}); errno != 0 || n != 4096 || mem[0] != 0xa5 || mem[2048] != 0xff {
		t.Fatalf("copy onto itself: %v, %d bytes", errno, n)
	}
	if n, errno := cma(self, 0, []abi.MemoryRange{whole}, []abi.MemoryRange{{VAAddr: va + 2049, Size: 3}}); errno != 0 || n != 3 ||
		binary.LittleEndian.Uint32(mem[2048:]) != 0xa5a5a5ff {
		t.Fatalf("3 bytes: %v, %d bytes, dword %#x", errno, n, binary.LittleEndian.Uint32(mem[2048:]))
	}
	if n, errno := cma(self, 0, []abi.MemoryRange{whole}, []abi.MemoryRange{{VAAddr: va + 4, Size: 4096}}); errno != syscall.EFAULT || n != 0 {
		t.Fatalf("past the end: %v, %d bytes", errno, n)
	}
	// A later range out of bounds fails after the copy reached it, with the count so far.
	if n, errno := cma(self, 0, []abi.MemoryRange{whole}, []abi.MemoryRange{{VAAddr: va, Size: 100}, {VAAddr: va + 8192, Size: 8}}); errno != syscall.EFAULT || n != 100 {
		t.Fatalf("bad second range: %v, %d bytes", errno, n)
	}
	// Argument errors.
	x := abi.CrossMemoryCopyArgs{PID: uint32(self), BytesCopied: 77}
	if errno := l.do(abi.AMDKFD_IOC_CROSS_MEMORY_COPY, &x); errno != syscall.EINVAL || x.BytesCopied != 77 {
		t.Errorf("no arrays: %v, bytes_copied %d", errno, x.BytesCopied)
	}
	if _, errno := cma(fakeTgid+5, 0, []abi.MemoryRange{whole}, []abi.MemoryRange{whole}); errno != syscall.ESRCH {
		t.Errorf("no such pid: %v", errno)
	}

	// A second real process: a child, first not a KFD process, then one with a GTT BO.
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Skipf("no child process: %v", err)
	}
	defer child.Wait()
	defer child.Process.Kill()
	pid := child.Process.Pid
	if _, errno := cma(pid, 0, []abi.MemoryRange{whole}, []abi.MemoryRange{whole}); errno != syscall.EINVAL {
		t.Errorf("a process without KFD: %v", errno)
	}
	r := e.peer(pid)
	const rva = 0x50000000
	ra := abi.AllocMemoryOfGPUArgs{VAAddr: rva, Size: 3 * 4096, GPUID: e.gpu, Flags: allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}
	if errno := r.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &ra); errno != 0 {
		t.Fatal(errno)
	}
	rmem := e.d.procs[pid].bos[ra.Handle].mem
	for i := range rmem {
		rmem[i] = byte(i / 4096)
	}
	// Read: the remote's three pages as one stream into two local ranges of 2 KiB (the stream
	// ends with the destination).
	if n, errno := cma(pid, 0, []abi.MemoryRange{{VAAddr: rva + 4096, Size: 8192}}, []abi.MemoryRange{{VAAddr: va, Size: 2048}, {VAAddr: va + 2048, Size: 2048}}); errno != 0 || n != 4096 ||
		mem[0] != 1 || mem[4095] != 1 {
		t.Fatalf("read: %v, %d bytes, %d %d", errno, n, mem[0], mem[4095])
	}
	// A caller that may not ptrace the target (another uid, not root): EPERM.
	if os.Geteuid() != 0 {
		t.Log("not root: the refusal of a caller of another uid is not checked")
	} else {
		nobody := exec.Command("sleep", "30")
		nobody.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		if err := nobody.Start(); err != nil {
			t.Fatal(err)
		}
		defer nobody.Wait()
		defer nobody.Process.Kill()
		nf, err := e.d.OpenKFD(nobody.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		defer nf.Release()
		nc := newCaller(nobody.Process.Pid)
		x := abi.CrossMemoryCopyArgs{PID: uint32(pid), SrcMemRangeArray: nc.base, SrcMemArraySize: 1, DstMemRangeArray: nc.base, DstMemArraySize: 1}
		buf := make([]byte, abi.IOCSize(abi.AMDKFD_IOC_CROSS_MEMORY_COPY))
		encode(buf, &x)
		if errno := nf.Ioctl(nc, abi.AMDKFD_IOC_CROSS_MEMORY_COPY, buf); errno != syscall.EPERM {
			t.Errorf("a caller of uid 65534 copying from a root process: %v", errno)
		}
	}
	// Write: local to remote, two source ranges into one destination range.
	for i := range mem {
		mem[i] = 0xee
	}
	if n, errno := cma(pid, abi.KFD_CROSS_MEMORY_RW_BIT, []abi.MemoryRange{{VAAddr: va, Size: 16}, {VAAddr: va + 100, Size: 16}}, []abi.MemoryRange{{VAAddr: rva + 10, Size: 64}}); errno != 0 || n != 32 ||
		rmem[9] != 0 || rmem[10] != 0xee || rmem[41] != 0xee || rmem[42] != 0 {
		t.Fatalf("write: %v, %d bytes, %v", errno, n, rmem[8:44])
	}
}
