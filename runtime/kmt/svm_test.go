package kmt

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"golang.org/x/sys/unix"
)

// anon maps size bytes of private anonymous memory: client memory no BO covers.
func anon(t *testing.T, size int) (mem []byte, va uint64) {
	t.Helper()
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	return mem, uint64(uintptr(unsafe.Pointer(&mem[0])))
}

// testSVM drives shared virtual memory: SET/GET_ATTR on plain client memory, a BO refused over
// an SVM range, GPU accesses to SVM memory that retry faults resolve (XNACK on), SVM memory the
// driver maps at SET_ATTR (XNACK off) and the fatal fault on memory that is no SVM range.
func testSVM(t *testing.T, root string) {
	d := open(t, root)
	g := d.GPUs()[0]
	if err := d.SetXNACKMode(true); errors.Is(err, syscall.EPERM) {
		t.Skipf("skipping: GPU %d has no recoverable page faults (SET_XNACK_MODE: EPERM)", g.ID())
	} else if err != nil {
		t.Fatalf("SetXNACKMode(true): %v", err)
	}
	defer d.SetXNACKMode(false)
	mem, base := anon(t, 4<<20)
	const rangeSize = 2 << 20
	err := d.SVMSetAttr(base, rangeSize, SVMAttr{abi.KFD_IOCTL_SVM_ATTR_ACCESS, g.ID()},
		SVMAttr{abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 0}, SVMAttr{abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, abi.KFD_IOCTL_SVM_LOCATION_SYSMEM})
	if err != nil {
		t.Fatalf("SVMSetAttr: %v", err)
	}
	got, err := d.SVMGetAttr(base, rangeSize, SVMAttr{abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 0},
		SVMAttr{abi.KFD_IOCTL_SVM_ATTR_ACCESS, g.ID()}, SVMAttr{abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, 0},
		SVMAttr{abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, 0})
	if err != nil {
		t.Fatalf("SVMGetAttr: %v", err)
	}
	want := []SVMAttr{{abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 0}, {abi.KFD_IOCTL_SVM_ATTR_ACCESS, g.ID()},
		{abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, abi.KFD_IOCTL_SVM_LOCATION_SYSMEM},
		{abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("GET_ATTR %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if err := d.SVMSetAttr(base, rangeSize, SVMAttr{99, 0}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("unknown attribute: %v, want EINVAL", err)
	}
	a := abi.AllocMemoryOfGPUArgs{VAAddr: base + 0x10000, Size: 4096, GPUID: g.ID(), Flags: abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT}
	if err := ioctl(d.kfd, "ALLOC_MEMORY_OF_GPU", abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("ALLOC inside an SVM range: %v, want EADDRINUSE", err)
		if err == nil {
			f := abi.FreeMemoryOfGPUArgs{Handle: a.Handle}
			ioctl(d.kfd, "FREE_MEMORY_OF_GPU", abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &f)
		}
	}
	testSVMMunmap(t, d, g)

	// XNACK on: the range is not GPU-mapped until the GPU touches it. A barrier's completion
	// signal in it faults, the fault maps the page, the access is retried and completes; so does
	// one in the same anonymous mapping outside every range (an "unregistered" range is made).
	q, ring, amdq := aqlQueue(t, d, g)
	r := aqlRing{q, ring, amdq}
	for i, off := range []uint64{0x1000, 3 << 20} {
		Word64(mem, int(off)+aql.SignalValueOffset).Store(1)
		r.submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{CompletionSignal: base + off})
		deadline := time.Now().Add(5 * time.Second)
		for Word64(mem, int(off)+aql.SignalValueOffset).Load() != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("signal %d in SVM memory never completed (retry fault not serviced)%s", i, debugQueues())
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	// Memory the client maps after those faults (an mmap between two faults) is found by the
	// next one: the daemon's copy of the client's maps is not stale.
	mem3, base3 := anon(t, 1<<20)
	Word64(mem3, 0x2000+aql.SignalValueOffset).Store(1)
	r.submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{CompletionSignal: base3 + 0x2000})
	for deadline := time.Now().Add(5 * time.Second); Word64(mem3, 0x2000+aql.SignalValueOffset).Load() != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("signal in memory mapped after the last fault never completed (stale maps?)%s", debugQueues())
		}
		time.Sleep(100 * time.Microsecond)
	}
	if b, err := os.ReadFile(filepath.Join(root, "sys/kernel/debug/kfd/faults")); err == nil {
		if n := strings.Count(string(b), " retry "); n < 2 {
			t.Errorf("fault log has %d serviced retry faults, want 2:\n%s", n, b)
		}
	}
	q.Destroy()
	ring.Free()
	amdq.Free()

	// XNACK off: SET_ATTR with ACCESS maps the range at once; memory outside any range faults
	// fatally (memory exception, queue stopped).
	if err := d.SetXNACKMode(false); err != nil {
		t.Fatalf("SetXNACKMode(false): %v", err)
	}
	mem2, base2 := anon(t, 2<<20)
	if err := d.SVMSetAttr(base2, 1<<20, SVMAttr{abi.KFD_IOCTL_SVM_ATTR_ACCESS, g.ID()}); err != nil {
		t.Fatalf("SVMSetAttr (XNACK off): %v", err)
	}
	memEv, err := d.CreateEvent(EventMemory, true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer memEv.Destroy()
	q, ring, amdq = aqlQueue(t, d, g)
	defer func() { q.Destroy(); ring.Free(); amdq.Free() }()
	r = aqlRing{q, ring, amdq}
	Word64(mem2, 0x40+aql.SignalValueOffset).Store(1)
	r.submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{CompletionSignal: base2 + 0x40})
	deadline := time.Now().Add(5 * time.Second)
	for Word64(mem2, 0x40+aql.SignalValueOffset).Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("signal in a mapped SVM range (XNACK off) never completed")
		}
		time.Sleep(100 * time.Microsecond)
	}
	r.submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{CompletionSignal: base2 + (1 << 20)}) // outside the range
	ok, data, err := d.WaitEvents([]*Event{memEv}, false, 5*time.Second)
	if !ok || err != nil {
		t.Fatalf("memory exception (XNACK off): %v %v", ok, err)
	}
	if m := data[0].Memory; m == nil || m.VA != base2+(1<<20) || m.Failure.NotPresent != 1 {
		t.Errorf("exception data %+v", m)
	}
}

// testSVMMunmap: the driver learns of the client's munmap as amdkfd's MMU notifier makes it
// (svm_range_unmap_from_cpu): memory mapped again at an address an SVM range had can take a BO,
// while the part of the range still mapped keeps refusing one. Only where the daemon reports the
// SVM interface (1.5+); at 1.2 it does not watch munmaps.
func testSVMMunmap(t *testing.T, d *Device, g *GPU) {
	if _, minor := d.Version(); minor < 5 {
		t.Logf("KFD interface 1.%d: munmap notices not checked (the daemon cannot watch munmaps here)", minor)
		return
	}
	const ps = 4096
	_, base := anon(t, 8*ps)
	if err := d.SVMSetAttr(base, 8*ps, SVMAttr{abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, abi.KFD_IOCTL_SVM_LOCATION_SYSMEM}); err != nil {
		t.Fatalf("SVMSetAttr: %v", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_MUNMAP, uintptr(base+2*ps), 4*ps, 0); e != 0 {
		t.Fatal(e)
	}
	if r, _, e := unix.Syscall6(unix.SYS_MMAP, uintptr(base+2*ps), 4*ps, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED_NOREPLACE, ^uintptr(0), 0); e != 0 || uint64(r) != base+2*ps {
		t.Fatalf("mmap again at the hole: %#x %v", r, e)
	}
	a := abi.AllocMemoryOfGPUArgs{VAAddr: base + 2*ps, Size: 4 * ps, GPUID: g.ID(), Flags: abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT}
	if err := ioctl(d.kfd, "ALLOC_MEMORY_OF_GPU", abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); err != nil {
		t.Fatalf("ALLOC where the client unmapped part of an SVM range: %v (the range outlived the munmap)", err)
	}
	f := abi.FreeMemoryOfGPUArgs{Handle: a.Handle}
	if err := ioctl(d.kfd, "FREE_MEMORY_OF_GPU", abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &f); err != nil {
		t.Errorf("FREE: %v", err)
	}
	a = abi.AllocMemoryOfGPUArgs{VAAddr: base + 6*ps, Size: ps, GPUID: g.ID(), Flags: abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT}
	if err := ioctl(d.kfd, "ALLOC_MEMORY_OF_GPU", abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("ALLOC in the part of the range still mapped: %v, want EADDRINUSE", err)
	}
}
