package kfd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/gpu/cp/pm4"
	"github.com/kfdemu/kfdemu/gpu/sdma"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/mmu"
	"github.com/kfdemu/kfdemu/topology"
)

// fakeCaller is a client with a flat memory window at base and a table of render-node fds.
type fakeCaller struct {
	tgid int
	base uint64
	mu   sync.Mutex
	mem  []byte
	fds  map[int][2]int // fd -> {minor, owner}
}

// fakeTgid is above PID_MAX_LIMIT (2^22): no real process has it, so the driver's
// process_vm accesses and /proc lookups for a fake client can never reach a real process.
const fakeTgid = 1 << 22

func newCaller(tgid int) *fakeCaller {
	return &fakeCaller{tgid: tgid, base: 0x7f0000000000, mem: make([]byte, 1<<20), fds: map[int][2]int{}}
}

func (c *fakeCaller) Tgid() int { return c.tgid }
func (c *fakeCaller) span(addr uint64, n int) ([]byte, error) {
	if addr < c.base || addr+uint64(n) > c.base+uint64(len(c.mem)) || addr+uint64(n) < addr {
		return nil, ErrFault
	}
	return c.mem[addr-c.base : addr-c.base+uint64(n)], nil
}
func (c *fakeCaller) ReadMemory(addr uint64, p []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.span(addr, len(p))
	if err == nil {
		copy(p, s)
	}
	return err
}
func (c *fakeCaller) WriteMemory(addr uint64, p []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.span(addr, len(p))
	if err == nil {
		copy(s, p)
	}
	return err
}
func (c *fakeCaller) GetFD(fd int) (*os.File, error) { return nil, ErrBadFD }
func (c *fakeCaller) Interrupted() <-chan struct{}   { return nil }

func (c *fakeCaller) RenderNode(fd int) (uint32, int, error) {
	if v, ok := c.fds[fd]; ok {
		return uint32(v[0]), v[1], nil
	}
	return 0, 0, ErrBadFD
}

type env struct {
	t   testing.TB
	d   *Driver
	sys *topology.System
	f   File
	c   *fakeCaller
	gpu uint32
}

func newEnv(t testing.TB, profile string) *env {
	sys, err := topology.Profile(profile)
	if err != nil {
		t.Fatal(err)
	}
	d := New(sys, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	c := newCaller(fakeTgid)
	f, err := d.OpenKFD(c.tgid)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, d: d, sys: sys, f: f, c: c, gpu: sys.GPUs()[0].GPUID}
	t.Cleanup(func() {
		f.Release()
		if st := d.Stats(); st["processes"] != 0 || st["pasids"] != 0 {
			t.Errorf("leak after release: %v", st)
		}
		// The daemon's shutdown: the doorbell scanner's goroutine and timerfd go with it (a
		// fuzz run of FuzzDebugTrap, one driver per input, ran out of descriptors without it).
		d.Close()
	})
	return e
}

// do issues an ioctl with the argument struct v (encoded in its own size) and decodes the result.
func (e *env) do(cmd uint32, v any) syscall.Errno {
	buf := make([]byte, abi.IOCSize(cmd))
	encode(buf, v)
	errno := e.f.Ioctl(e.c, cmd, buf)
	decode(buf, v)
	return errno
}

// acquire opens the GPU's render node and acquires its VM.
func (e *env) acquire(gpu uint32) {
	n := e.sys.NodeByGPUID(gpu)
	rf, err := e.d.OpenRender(n.RenderMinor(), e.c.tgid)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(rf.Release)
	fd := 10 + int(n.RenderMinor())
	e.c.fds[fd] = [2]int{int(n.RenderMinor()), e.c.tgid}
	if errno := e.do(abi.AMDKFD_IOC_ACQUIRE_VM, &abi.AcquireVMArgs{DRMFD: uint32(fd), GPUID: gpu}); errno != 0 {
		e.t.Fatalf("ACQUIRE_VM: %v", errno)
	}
}

func TestVersionAndUnknown(t *testing.T) {
	e := newEnv(t, "mi210")
	var v abi.GetVersionArgs
	if errno := e.do(abi.AMDKFD_IOC_GET_VERSION, &v); errno != 0 || v.MajorVersion != 1 || v.MinorVersion != MinorGPUVM {
		t.Fatalf("GET_VERSION %v %+v", errno, v)
	}
	for _, tc := range []struct {
		cmd  uint32
		want syscall.Errno
	}{
		{abi.IOC(abi.IOCRead, 'K', 0x00, 8), syscall.ENOTTY},    // below COMMAND_START
		{abi.IOC(abi.IOCRead, 'K', 0x27, 8), syscall.ENOTTY},    // at COMMAND_END
		{abi.IOC(abi.IOCRead, 'K', 0x7f, 8), syscall.ENOTTY},    // below the out-of-tree range
		{abi.IOC(abi.IOCRead, 'K', 0x82, 8), syscall.ENOTTY},    // out of tree, not served (old DBG_TRAP)
		{abi.IOC(abi.IOCRead, 'K', 0x85, 8), syscall.ENOTTY},    // out of tree, not served (PC_SAMPLE)
		{abi.IOC(abi.IOCRead, 'K', 0x86, 8), syscall.ENOTTY},    // at COMMAND_END_2
		{abi.IOC(abi.IOCRead, 'K', 0xff, 8), syscall.ENOTTY},    // far beyond
		{abi.AMDKFD_IOC_IPC_EXPORT_HANDLE, syscall.EINVAL},      // gpu_id 0
		{abi.IOC(abi.IOCRead, 'd', 0x01, 8), syscall.ENOTTY},    // not a kfd ioctl
		{abi.AMDKFD_IOC_DBG_REGISTER_DEPRECATED, syscall.EPERM}, // removed debugger ioctls
		{abi.AMDKFD_IOC_SMI_EVENTS, syscall.EINVAL},             // gpu_id 0
	} {
		buf := make([]byte, abi.IOCSize(tc.cmd))
		if got := e.f.Ioctl(e.c, tc.cmd, buf); got != tc.want {
			t.Errorf("cmd %#x: %v, want %v", tc.cmd, got, tc.want)
		}
	}
	// Size rules: a shorter struct is zero-filled, a longer one's tail left alone.
	short := abi.IOC(abi.IOCRead|abi.IOCWrite, 'K', 0x23, 12) // AVAILABLE_MEMORY with 12 bytes
	buf := make([]byte, 12)
	if errno := e.f.Ioctl(e.c, short, buf); errno != syscall.EINVAL {
		t.Errorf("short AVAILABLE_MEMORY without gpu_id: %v", errno)
	}
	long := abi.IOC(abi.IOCRead, 'K', 0x01, 16)
	buf = []byte{0, 0, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9}
	if errno := e.f.Ioctl(e.c, long, buf); errno != 0 || buf[0] != 1 || buf[8] != 0 {
		t.Errorf("long GET_VERSION: %v %v", errno, buf)
	}
}

func TestApertures(t *testing.T) {
	e := newEnv(t, "mi210x8")
	var a abi.GetProcessAperturesNewArgs
	if errno := e.do(abi.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &a); errno != 0 || a.NumOfNodes != 8 {
		t.Fatalf("count: %v %d", errno, a.NumOfNodes)
	}
	a = abi.GetProcessAperturesNewArgs{KFDProcessDeviceAperturesPtr: e.c.base, NumOfNodes: 3}
	if errno := e.do(abi.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &a); errno != 0 || a.NumOfNodes != 3 {
		t.Fatalf("fill: %v %d", errno, a.NumOfNodes)
	}
	var ap abi.ProcessDeviceApertures
	decode(e.c.mem[56:], &ap)
	if ap.GPUID != e.sys.GPUs()[1].GPUID || ap.LDSBase != 1<<48 || ap.ScratchBase != 2<<48 ||
		ap.GPUVMBase != 0x1000000 || ap.GPUVMLimit != 1<<47-1 || ap.LDSLimit != 1<<48|0xffffffff {
		t.Errorf("aperture %+v", ap)
	}
	a = abi.GetProcessAperturesNewArgs{KFDProcessDeviceAperturesPtr: 0x10, NumOfNodes: 1}
	if errno := e.do(abi.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &a); errno != syscall.EFAULT {
		t.Errorf("bad pointer: %v", errno)
	}
	var old abi.GetProcessAperturesArgs
	if errno := e.do(abi.AMDKFD_IOC_GET_PROCESS_APERTURES, &old); errno != 0 || old.NumOfNodes != 7 {
		t.Errorf("old apertures: %v %d (at most 7)", errno, old.NumOfNodes)
	}
}

func TestAcquireVMAndBind(t *testing.T) {
	e := newEnv(t, "mi210")
	alloc := abi.AllocMemoryOfGPUArgs{VAAddr: 0x100000000, Size: 4096, GPUID: e.gpu, Flags: allocGTT}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &alloc); errno != syscall.ENODEV {
		t.Errorf("alloc before ACQUIRE_VM: %v, want ENODEV", errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_SET_MEMORY_POLICY, &abi.SetMemoryPolicyArgs{GPUID: e.gpu}); errno != syscall.ESRCH {
		t.Errorf("policy before ACQUIRE_VM: %v, want ESRCH", errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_ACQUIRE_VM, &abi.AcquireVMArgs{DRMFD: 99, GPUID: e.gpu}); errno != syscall.EINVAL {
		t.Errorf("bad fd: %v", errno)
	}
	e.acquire(e.gpu)
	e.c.fds[77] = [2]int{129, e.c.tgid}
	if errno := e.do(abi.AMDKFD_IOC_ACQUIRE_VM, &abi.AcquireVMArgs{DRMFD: 77, GPUID: e.gpu}); errno != syscall.EBUSY {
		t.Errorf("second acquire with another file: %v, want EBUSY", errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_ACQUIRE_VM, &abi.AcquireVMArgs{DRMFD: 138, GPUID: 12345}); errno != syscall.EINVAL {
		t.Errorf("unknown gpu: %v", errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_SET_MEMORY_POLICY, &abi.SetMemoryPolicyArgs{GPUID: e.gpu, DefaultPolicy: 2}); errno != syscall.EINVAL {
		t.Errorf("bad policy: %v", errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_SET_MEMORY_POLICY, &abi.SetMemoryPolicyArgs{GPUID: e.gpu, DefaultPolicy: 1}); errno != 0 {
		t.Errorf("policy: %v", errno)
	}
	var clk abi.GetClockCountersArgs
	clk.GPUID = e.gpu
	if errno := e.do(abi.AMDKFD_IOC_GET_CLOCK_COUNTERS, &clk); errno != 0 || clk.SystemClockFreq != 1e9 || clk.GPUClockCounter == 0 {
		t.Errorf("clocks %v %+v", errno, clk)
	}
	x := abi.SetXnackModeArgs{XnackEnabled: 1}
	if errno := e.do(abi.AMDKFD_IOC_SET_XNACK_MODE, &x); errno != 0 {
		t.Errorf("xnack on gfx90a: %v", errno)
	}
	x.XnackEnabled = -1
	if errno := e.do(abi.AMDKFD_IOC_SET_XNACK_MODE, &x); errno != 0 || x.XnackEnabled != 1 {
		t.Errorf("xnack query: %v %d", errno, x.XnackEnabled)
	}
}

func TestMemory(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	var avail abi.GetAvailableMemoryArgs
	avail.GPUID = e.gpu
	e.do(abi.AMDKFD_IOC_AVAILABLE_MEMORY, &avail)
	vram := e.sys.GPUs()[0].VRAMSize()
	if avail.Available != vram {
		t.Fatalf("available %d, want %d", avail.Available, vram)
	}
	cases := []struct {
		name string
		a    abi.AllocMemoryOfGPUArgs
		want syscall.Errno
	}{
		{"no domain", abi.AllocMemoryOfGPUArgs{VAAddr: 0x200000000, Size: 4096, Flags: 0}, syscall.EINVAL},
		{"no domain", abi.AllocMemoryOfGPUArgs{VAAddr: 0x200000000, Size: 4096, Flags: abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}, syscall.EINVAL},
		{"doorbell size with VRAM", abi.AllocMemoryOfGPUArgs{VAAddr: 0x200000000, Size: 4096, Flags: allocVRAM | allocDoorbell}, syscall.EINVAL},
		{"size 0", abi.AllocMemoryOfGPUArgs{VAAddr: 0x200000000, Size: 0, Flags: allocVRAM}, syscall.EINVAL},
		{"unaligned va", abi.AllocMemoryOfGPUArgs{VAAddr: 0x200000010, Size: 4096, Flags: allocVRAM}, syscall.EINVAL},
		{"too much vram", abi.AllocMemoryOfGPUArgs{VAAddr: 0x200000000, Size: vram + 4096, Flags: allocVRAM}, syscall.ENOMEM},
		{"doorbell size", abi.AllocMemoryOfGPUArgs{VAAddr: 0x200000000, Size: 4096, Flags: allocDoorbell}, syscall.EINVAL},
		{"mmio size", abi.AllocMemoryOfGPUArgs{VAAddr: 0x200000000, Size: 8192, Flags: allocMMIO}, syscall.EINVAL},
		{"userptr no address", abi.AllocMemoryOfGPUArgs{VAAddr: 0x200000000, Size: 4096, Flags: allocUserptr}, syscall.EINVAL},
	}
	for _, tc := range cases {
		a := tc.a
		a.GPUID = e.gpu
		if got := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	a := abi.AllocMemoryOfGPUArgs{VAAddr: 0x200000000, Size: 1 << 20, GPUID: e.gpu, Flags: allocVRAM | abi.KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
		t.Fatal(errno)
	}
	if a.Handle>>32 != uint64(e.gpu) || a.MmapOffset == 0 || a.MmapOffset >= 1<<63 {
		t.Errorf("handle %#x offset %#x", a.Handle, a.MmapOffset)
	}
	over := abi.AllocMemoryOfGPUArgs{VAAddr: 0x200080000, Size: 4096, GPUID: e.gpu, Flags: allocGTT}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &over); errno != syscall.EINVAL {
		t.Errorf("overlapping VA: %v", errno)
	}
	avail = abi.GetAvailableMemoryArgs{GPUID: e.gpu}
	e.do(abi.AMDKFD_IOC_AVAILABLE_MEMORY, &avail)
	if avail.Available != vram-(1<<20) {
		t.Errorf("available after alloc %d", avail.Available)
	}
	if used := e.sys.Tree().Child("nodes").Child("1").Child("mem_banks").Child("0").Child("used_memory").Content(); string(used) != "1048576\n" {
		t.Errorf("used_memory %q", used)
	}
	// MAP with the restartable protocol: device list with a bad id stops at it.
	binary.LittleEndian.PutUint32(e.c.mem[0:], e.gpu)
	binary.LittleEndian.PutUint32(e.c.mem[4:], 4242)
	m := abi.MapMemoryToGPUArgs{Handle: a.Handle, DeviceIDsArrayPtr: e.c.base, NDevices: 2}
	if errno := e.do(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &m); errno != syscall.EINVAL || m.NSuccess != 1 {
		t.Errorf("map with a bad device: %v n_success %d", errno, m.NSuccess)
	}
	m = abi.MapMemoryToGPUArgs{Handle: a.Handle, DeviceIDsArrayPtr: e.c.base, NDevices: 1}
	if errno := e.do(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &m); errno != 0 || m.NSuccess != 1 {
		t.Errorf("map: %v %d", errno, m.NSuccess)
	}
	for _, bad := range []abi.MapMemoryToGPUArgs{
		{Handle: a.Handle, DeviceIDsArrayPtr: e.c.base, NDevices: 0},
		{Handle: a.Handle, DeviceIDsArrayPtr: e.c.base, NDevices: 1, NSuccess: 2},
		{Handle: 0xdead, DeviceIDsArrayPtr: e.c.base, NDevices: 1},
	} {
		if errno := e.do(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &bad); errno != syscall.EINVAL {
			t.Errorf("map %+v: %v", bad, errno)
		}
	}
	bad := abi.MapMemoryToGPUArgs{Handle: a.Handle, DeviceIDsArrayPtr: 0x10, NDevices: 1}
	if errno := e.do(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &bad); errno != syscall.EFAULT {
		t.Errorf("map bad pointer: %v", errno)
	}
	// The GPU side sees what is in the BO's memory, through the page tables MAP wrote: a 1 MiB
	// VRAM BO is one 256-page fragment of readable, not writeable (no WRITABLE flag) PTEs.
	p := e.d.procs[e.c.tgid]
	pd := p.pdds[e.gpu]
	pte, size, ok := pd.vm.Walk(0x200000000)
	if !ok || size != 4096 || pte.Frag() != 8 || pte&mmu.PTEReadable == 0 || pte&(mmu.PTEWriteable|mmu.PTEExecutable|mmu.PTESystem) != 0 || pte.MType() != mmu.MTypeRW {
		t.Errorf("PTE %v size %d ok %v", pte, size, ok)
	}
	port := pd.vm.NewPort()
	defer port.Close()
	bo := p.bos[a.Handle]
	copy(bo.mem, "kfdemu!!")
	var buf [8]byte
	if err := port.Read(0x200000000, buf[:]); err != nil || string(buf[:]) != "kfdemu!!" {
		t.Fatalf("mapped BO not reachable by the GPU: %q %v", buf, err)
	}
	if err := port.Write(0x200000000, buf[:]); !errors.Is(err, mmu.ErrFault) {
		t.Errorf("GPU write to a read-only BO: %v", err)
	}
	if errno := e.do(abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: a.Handle}); errno != syscall.EBUSY {
		t.Errorf("free of a mapped BO: %v, want EBUSY", errno)
	}
	u := abi.MapMemoryToGPUArgs{Handle: a.Handle, DeviceIDsArrayPtr: e.c.base, NDevices: 1}
	if errno := e.do(abi.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &u); errno != 0 {
		t.Errorf("unmap: %v", errno)
	}
	if err := port.Read(0x200000000, buf[:]); !errors.Is(err, mmu.ErrFault) {
		t.Errorf("unmapped BO still reachable: %v", err)
	}
	if st := pd.vm.Stats(); st.PTEs4K != 0 || st.Tables != 0 {
		t.Errorf("page tables left after unmap: %+v", st)
	}
	if errno := e.do(abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: a.Handle}); errno != 0 {
		t.Errorf("free: %v", errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: a.Handle}); errno != syscall.EINVAL {
		t.Errorf("double free: %v", errno)
	}
	if st := e.d.Stats(); st["bos"] != 0 {
		t.Errorf("stats after free: %v", st)
	}
}

func TestIsolation(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	a := abi.AllocMemoryOfGPUArgs{VAAddr: 0x300000000, Size: 4096, GPUID: e.gpu, Flags: allocGTT}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
		t.Fatal(errno)
	}
	other := newCaller(fakeTgid + 1)
	f2, _ := e.d.OpenKFD(other.tgid)
	defer f2.Release()
	buf := make([]byte, 8)
	binary.LittleEndian.PutUint64(buf, a.Handle)
	if errno := f2.Ioctl(other, abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, buf); errno != syscall.EINVAL {
		t.Errorf("another process freed the BO: %v", errno)
	}
	// Another process's render node cannot be used to acquire a VM.
	other.fds[5] = [2]int{128, e.c.tgid}
	buf = make([]byte, 8)
	encode(buf, abi.AcquireVMArgs{DRMFD: 5, GPUID: e.gpu})
	if errno := f2.Ioctl(other, abi.AMDKFD_IOC_ACQUIRE_VM, buf); errno != syscall.EINVAL {
		t.Errorf("acquire with another process's render fd: %v", errno)
	}
}

func TestEvents(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	page := abi.AllocMemoryOfGPUArgs{VAAddr: 0x400000000, Size: signalSlots * 8, GPUID: e.gpu, Flags: allocGTT}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &page); errno != 0 {
		t.Fatal(errno)
	}
	small := abi.AllocMemoryOfGPUArgs{VAAddr: 0x500000000, Size: 4096, GPUID: e.gpu, Flags: allocGTT}
	e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &small)
	if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &abi.CreateEventArgs{EventPageOffset: small.Handle}); errno != syscall.EINVAL {
		t.Errorf("event page too small: %v", errno)
	}
	ev := abi.CreateEventArgs{EventPageOffset: page.Handle, EventType: abi.KFD_IOC_EVENT_SIGNAL, AutoReset: 1}
	if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &ev); errno != 0 || ev.EventID == 0 || ev.EventSlotIndex != ev.EventID {
		t.Fatalf("create: %v %+v", errno, ev)
	}
	if errno := e.do(abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: page.Handle}); errno != syscall.EPERM {
		t.Errorf("freeing the event page: %v, want EPERM", errno)
	}
	if ev.EventPageOffset != mmapTypeEvents {
		t.Errorf("first signal event: event_page_offset %#x, want KFD_MMAP_TYPE_EVENTS", ev.EventPageOffset)
	}
	// Every later signal or debug event gets the events page's offset too (kfd_event_create), or
	// libhsakmt leaves HWData2 0 (KFDEventTest.SignalEvent); other events get 0.
	for _, typ := range []uint32{abi.KFD_IOC_EVENT_SIGNAL, abi.KFD_IOC_EVENT_DEBUG_EVENT} {
		sig := abi.CreateEventArgs{EventType: typ}
		if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &sig); errno != 0 || sig.EventPageOffset != mmapTypeEvents || sig.EventSlotIndex != sig.EventID {
			t.Errorf("later event of type %d: %v %+v, want event_page_offset KFD_MMAP_TYPE_EVENTS", typ, errno, sig)
		}
		e.do(abi.AMDKFD_IOC_DESTROY_EVENT, &abi.DestroyEventArgs{EventID: sig.EventID})
	}
	mem := abi.CreateEventArgs{EventType: abi.KFD_IOC_EVENT_MEMORY}
	if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &mem); errno != 0 || mem.EventID < firstOtherID || mem.EventPageOffset != 0 {
		t.Errorf("memory event: %v %d offset %#x", errno, mem.EventID, mem.EventPageOffset)
	}
	if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &abi.CreateEventArgs{EventType: 99}); errno != syscall.EINVAL {
		t.Errorf("bad type: %v", errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_SET_EVENT, &abi.SetEventArgs{EventID: mem.EventID}); errno != syscall.EINVAL {
		t.Errorf("CPU-set of a memory event: %v", errno)
	}
	wait := func(ids []uint32, all bool, timeout uint32) (uint32, syscall.Errno) {
		for i, id := range ids {
			eventData(e.c.mem[48*i:], id)
		}
		w := abi.WaitEventsArgs{EventsPtr: e.c.base, NumEvents: uint32(len(ids)), Timeout: timeout}
		if all {
			w.WaitForAll = 1
		}
		errno := e.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w)
		return w.WaitResult, errno
	}
	if r, errno := wait([]uint32{ev.EventID}, false, 0); errno != 0 || r != abi.KFD_IOC_WAIT_RESULT_TIMEOUT {
		t.Errorf("poll unsignalled: %d %v", r, errno)
	}
	start := time.Now()
	if r, _ := wait([]uint32{ev.EventID}, false, 50); r != abi.KFD_IOC_WAIT_RESULT_TIMEOUT || time.Since(start) < 40*time.Millisecond {
		t.Errorf("50 ms wait returned %d after %v", r, time.Since(start))
	}
	e.do(abi.AMDKFD_IOC_SET_EVENT, &abi.SetEventArgs{EventID: ev.EventID})
	if r, _ := wait([]uint32{ev.EventID}, false, 0xffffffff); r != abi.KFD_IOC_WAIT_RESULT_COMPLETE {
		t.Errorf("signalled wait: %d", r)
	}
	if r, _ := wait([]uint32{ev.EventID}, false, 0); r != abi.KFD_IOC_WAIT_RESULT_TIMEOUT {
		t.Errorf("auto-reset event still signalled: %d", r)
	}
	// A waiter blocked forever is woken by a SET from another goroutine.
	done := make(chan uint32)
	go func() {
		r, _ := wait([]uint32{ev.EventID}, false, 0xffffffff)
		done <- r
	}()
	time.Sleep(20 * time.Millisecond)
	e.do(abi.AMDKFD_IOC_SET_EVENT, &abi.SetEventArgs{EventID: ev.EventID})
	select {
	case r := <-done:
		if r != abi.KFD_IOC_WAIT_RESULT_COMPLETE {
			t.Errorf("woken wait result %d", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("infinite wait not woken by SET_EVENT")
	}
	if _, errno := wait([]uint32{12345}, false, 0); errno != syscall.EINVAL {
		t.Errorf("wait on unknown event: %v", errno)
	}
	w := abi.WaitEventsArgs{EventsPtr: 0x10, NumEvents: 1}
	if errno := e.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w); errno != syscall.EFAULT {
		t.Errorf("wait with bad pointer: %v", errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_DESTROY_EVENT, &abi.DestroyEventArgs{EventID: ev.EventID}); errno != 0 {
		t.Errorf("destroy: %v", errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_DESTROY_EVENT, &abi.DestroyEventArgs{EventID: ev.EventID}); errno != syscall.EINVAL {
		t.Errorf("double destroy: %v", errno)
	}
}

// alloc allocates and maps a GTT BO at va on the env's GPU.
func (e *env) alloc(va, size uint64) uint64 {
	a := abi.AllocMemoryOfGPUArgs{VAAddr: va, Size: size, GPUID: e.gpu, Flags: allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
		e.t.Fatalf("ALLOC %#x: %v", va, errno)
	}
	binary.LittleEndian.PutUint32(e.c.mem, e.gpu)
	if errno := e.do(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &abi.MapMemoryToGPUArgs{Handle: a.Handle, DeviceIDsArrayPtr: e.c.base, NDevices: 1}); errno != 0 {
		e.t.Fatalf("MAP %#x: %v", va, errno)
	}
	return a.Handle
}

// queueArgs allocates what kfd_queue_acquire_buffers requires of a compute queue at base: a 4 KiB
// ring, a page holding the amd_queue_t read/write indices, the EOP buffer and the CWSR area with
// the node's sizes.
func (e *env) queueArgs(base uint64) abi.CreateQueueArgs {
	sz := queueSizes(e.sys.NodeByGPUID(e.gpu))
	total := alignUp(uint64(sz.cwsr+sz.debugMem)*uint64(sz.xcc), pageSize)
	e.alloc(base, 4096)
	e.alloc(base+0x10000, 4096)
	e.alloc(base+0x20000, uint64(sz.eop))
	e.alloc(base+0x100000, total)
	return abi.CreateQueueArgs{RingBaseAddress: base, RingSize: 4096, GPUID: e.gpu,
		QueueType: abi.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, QueuePercentage: 100,
		WritePointerAddress: base + 0x10038, ReadPointerAddress: base + 0x10080,
		EOPBufferAddress: base + 0x20000, EOPBufferSize: uint64(sz.eop),
		CtxSaveRestoreAddress: base + 0x100000, CtxSaveRestoreSize: sz.cwsr, CtlStackSize: sz.ctlStack}
}

// submitBarrier writes bp as packet 0 of the AQL queue a made on queueArgs(base)'s buffers, its
// header last (barrier-AND, system-scope fences), sets the write index to 1 and rings the doorbell.
// signalEvent creates a signal event (CREATE_EVENT) and returns its id.
func (e *env) signalEvent(autoReset bool) uint32 {
	e.t.Helper()
	ev := abi.CreateEventArgs{EventType: abi.KFD_IOC_EVENT_SIGNAL}
	if autoReset {
		ev.AutoReset = 1
	}
	if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &ev); errno != 0 {
		e.t.Fatal(errno)
	}
	return ev.EventID
}

func (e *env) submitBarrier(a abi.CreateQueueArgs, base uint64, bp aql.BarrierPacket) {
	p := e.d.procs[e.c.tgid]
	ring, aq := p.boAt(e.gpu, base).mem, p.boAt(e.gpu, base+0x10000).mem
	var pkt [aql.PacketSize]byte
	bp.Encode(pkt[:])
	copy(ring[4:64], pkt[4:])
	word32(ring).Store(uint32(aql.MakeHeader(aql.PacketTypeBarrierAnd, true, aql.FenceScopeSystem, aql.FenceScopeSystem)))
	word64(aq[0x38:]).Store(1)
	word64(p.pdds[e.gpu].doorbellMem[a.DoorbellOffset&(doorbellSlice-1):]).Store(0)
}

// The sizes kfd_queue_ctx_save_restore_size gives an MI210 are the ones ROCr 5.2.3 passes
// (traced: ctl_stack_size 0x9000, ctx_save_restore_size 0x3c91000, a 0x3cb1000 BO, EOP 0x1000).
func TestQueueSizesMI210(t *testing.T) {
	sys, _ := topology.Profile("mi210")
	sz := queueSizes(sys.GPUs()[0])
	if sz.ctlStack != 0x9000 || sz.cwsr != 0x3c91000 || sz.cwsr+sz.debugMem != 0x3cb1000 || sz.eop != 0x1000 {
		t.Errorf("sizes %+v", sz)
	}
}

func TestQueueArguments(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	good := e.queueArgs(0x600000000)
	for name, c := range map[string]struct {
		mut  func(*abi.CreateQueueArgs)
		want syscall.Errno
	}{
		"percentage":      {func(a *abi.CreateQueueArgs) { a.QueuePercentage = 101 }, syscall.EINVAL},
		"priority":        {func(a *abi.CreateQueueArgs) { a.QueuePriority = 16 }, syscall.EINVAL},
		"not pow2":        {func(a *abi.CreateQueueArgs) { a.RingSize = 3000 }, syscall.EINVAL},
		"ring BO smaller": {func(a *abi.CreateQueueArgs) { a.RingSize = 8192 }, syscall.EINVAL},
		"kernel address":  {func(a *abi.CreateQueueArgs) { a.WritePointerAddress = 1 << 63 }, syscall.EFAULT},
		"bad gpu":         {func(a *abi.CreateQueueArgs) { a.GPUID = 1 }, syscall.EINVAL},
		"unmapped ring":   {func(a *abi.CreateQueueArgs) { a.RingBaseAddress = 0x700000000 }, syscall.EINVAL},
		"ring mid-BO":     {func(a *abi.CreateQueueArgs) { a.RingBaseAddress += 0x100000 + 0x1000 }, syscall.EINVAL},
		"unmapped wptr":   {func(a *abi.CreateQueueArgs) { a.WritePointerAddress = 0x700000000 }, syscall.EINVAL},
		"eop size":        {func(a *abi.CreateQueueArgs) { a.EOPBufferSize = 0x2000 }, syscall.EINVAL},
		"ctl stack size":  {func(a *abi.CreateQueueArgs) { a.CtlStackSize = 0x1000 }, syscall.EINVAL},
		"cwsr size":       {func(a *abi.CreateQueueArgs) { a.CtxSaveRestoreSize = 0x1000 }, syscall.EINVAL},
		"cwsr not mapped": {func(a *abi.CreateQueueArgs) { a.CtxSaveRestoreAddress = 0x700000000 }, syscall.EINVAL},
		"bad type":        {func(a *abi.CreateQueueArgs) { a.QueueType = 9 }, syscall.ENOTSUP},
		"SDMA bad engine": {func(a *abi.CreateQueueArgs) { a.QueueType, a.SDMAEngineID = abi.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID, 99 }, syscall.EINVAL},
	} {
		a := good
		c.mut(&a)
		if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &a); errno != c.want {
			t.Errorf("%s: %v, want %v", name, errno, c.want)
		}
	}
	// A ring below the minimum is clamped to 1024 bytes; a one-page ring BO still matches.
	small := good
	small.RingSize = 512
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &small); errno != 0 {
		t.Fatalf("small ring: %v", errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: small.QueueID}); errno != 0 {
		t.Fatal(errno)
	}
	a := good
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &a); errno != 0 {
		t.Fatalf("create: %v", errno)
	}
	if a.DoorbellOffset%doorbellSlice != 0 || a.DoorbellOffset >= 1<<63 {
		t.Errorf("doorbell offset %#x", a.DoorbellOffset)
	}
	// The queue's buffers cannot be unmapped while it exists (bo_va queue_refcount).
	ring := e.d.procs[e.c.tgid].boAt(e.gpu, good.RingBaseAddress)
	binary.LittleEndian.PutUint32(e.c.mem, e.gpu)
	if errno := e.do(abi.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &abi.MapMemoryToGPUArgs{Handle: ring.handle, DeviceIDsArrayPtr: e.c.base, NDevices: 1}); errno != syscall.EBUSY {
		t.Errorf("unmap of a queue's ring: %v", errno)
	}
	x := abi.SetXnackModeArgs{XnackEnabled: 0}
	if errno := e.do(abi.AMDKFD_IOC_SET_XNACK_MODE, &x); errno != syscall.EBUSY {
		t.Errorf("xnack change with queues: %v", errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: a.QueueID}); errno != 0 {
		t.Errorf("destroy: %v", errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: a.QueueID}); errno != syscall.EINVAL {
		t.Errorf("double destroy: %v", errno)
	}
}

// TestTeardownReleasesEverything: closing the last file frees PASID, BOs, events and queues.
func TestTeardownReleasesEverything(t *testing.T) {
	sys, _ := topology.Profile("mi210")
	d := New(sys, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	for i := 0; i < 3; i++ {
		f, _ := d.OpenKFD(3000 + i)
		f2, _ := d.OpenKFD(3000 + i) // a second open shares the process
		if d.Stats()["processes"] != 1 {
			t.Fatalf("processes %v", d.Stats())
		}
		f.Release()
		f2.Release()
		f2.Release() // idempotent
	}
	if st := d.Stats(); st["processes"] != 0 || st["pasids"] != 0 {
		t.Fatalf("after release: %v", st)
	}
	f, _ := d.OpenKFD(4000)
	d.ProcessExited(4000)
	if st := d.Stats(); st["processes"] != 0 || st["pasids"] != 0 {
		t.Fatalf("after exit: %v", st)
	}
	f.Release()
}

func FuzzIoctl(f *testing.F) {
	f.Add(uint8(0x16), []byte{0, 0, 0, 0, 2, 0, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(0x0c), make([]byte, 24))
	f.Add(uint8(0x02), make([]byte, 96))
	sys, _ := topology.Profile("mi210")
	d := New(sys, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 4})))
	f.Fuzz(func(t *testing.T, nr uint8, arg []byte) {
		c := newCaller(fakeTgid + 2)
		file, err := d.OpenKFD(c.tgid)
		if err != nil {
			t.Fatal(err)
		}
		if len(arg) > abi.IOCSizeMask {
			arg = arg[:abi.IOCSizeMask]
		}
		cmd := abi.IOC(abi.IOCRead|abi.IOCWrite, 'K', uint32(nr), uint32(len(arg)))
		buf := append([]byte(nil), arg...)
		// WAIT_EVENTS with an infinite timeout on a real event would block: bound the fuzz case.
		if nr == 0x0c && len(buf) >= 20 {
			binary.LittleEndian.PutUint32(buf[16:], 0)
		}
		file.Ioctl(c, cmd, buf)
		file.Release()
		if st := d.Stats(); st["processes"] != 0 || st["pasids"] != 0 {
			t.Fatalf("leak: %v", st)
		}
	})
}

// TestAutoResetWakesAllWaiters: SET_EVENT activates every current waiter of an auto-reset event
// (kfd_events.c set_event), and leaves it unsignalled.
func TestAutoResetWakesAllWaiters(t *testing.T) {
	e := newEnv(t, "mi210")
	ev := abi.CreateEventArgs{EventType: abi.KFD_IOC_EVENT_SIGNAL, AutoReset: 1}
	if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &ev); errno != 0 {
		t.Fatal(errno)
	}
	results := make(chan uint32, 2)
	for i := 0; i < 2; i++ {
		go func(i int) {
			c := newCaller(e.c.tgid)
			eventData(c.mem, ev.EventID)
			buf := make([]byte, 24)
			encode(buf, abi.WaitEventsArgs{EventsPtr: c.base, NumEvents: 1, Timeout: 5000})
			e.f.Ioctl(c, abi.AMDKFD_IOC_WAIT_EVENTS, buf)
			var w abi.WaitEventsArgs
			decode(buf, &w)
			results <- w.WaitResult
		}(i)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.d.procs[e.c.tgid].mu.Lock()
		n := e.d.procs[e.c.tgid].events[ev.EventID].waiters
		e.d.procs[e.c.tgid].mu.Unlock()
		if n == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	e.do(abi.AMDKFD_IOC_SET_EVENT, &abi.SetEventArgs{EventID: ev.EventID})
	for i := 0; i < 2; i++ {
		if r := <-results; r != abi.KFD_IOC_WAIT_RESULT_COMPLETE {
			t.Errorf("waiter %d: result %d", i, r)
		}
	}
	eventData(e.c.mem, ev.EventID)
	w := abi.WaitEventsArgs{EventsPtr: e.c.base, NumEvents: 1, Timeout: 0}
	if e.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w); w.WaitResult != abi.KFD_IOC_WAIT_RESULT_TIMEOUT {
		t.Errorf("auto-reset event left signalled after waking its waiters")
	}
}

// TestWaitEventsAsAmdkfd checks kfd_wait_on_events' edges: event age tracking (KFD 1.14's
// kfd_event_data: a non-zero last_event_age that differs from the event's age completes the wait at
// once, and the age is copied back only to age-tracked waiters of a completed wait), the auto-reset
// state consumed when a waiter is set up even if the wait fails, no events at all, too many (ENOMEM), an
// event destroyed under the wait (EIO), and SET/RESET of a debug event (EINVAL).
func TestWaitEventsAsAmdkfd(t *testing.T) {
	e := newEnv(t, "mi210")
	create := func(typ uint32, autoReset uint32) uint32 {
		a := abi.CreateEventArgs{EventType: typ, AutoReset: autoReset}
		if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &a); errno != 0 {
			t.Fatal(errno)
		}
		return a.EventID
	}
	// wait runs WAIT_EVENTS on ids with the given input ages; it returns the result, the errno and
	// the ages found in the records afterwards.
	wait := func(ids []uint32, ages []uint64, all bool, timeout uint32) (uint32, syscall.Errno, []uint64) {
		for i, id := range ids {
			eventData(e.c.mem[48*i:], id)
			if ages != nil {
				binary.LittleEndian.PutUint64(e.c.mem[48*i:], ages[i])
			}
		}
		w := abi.WaitEventsArgs{EventsPtr: e.c.base, NumEvents: uint32(len(ids)), Timeout: timeout, WaitResult: 99}
		if all {
			w.WaitForAll = 1
		}
		errno := e.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w)
		out := make([]uint64, len(ids))
		for i := range ids {
			out[i] = binary.LittleEndian.Uint64(e.c.mem[48*i:])
		}
		return w.WaitResult, errno, out
	}
	set := func(id uint32) syscall.Errno { return e.do(abi.AMDKFD_IOC_SET_EVENT, &abi.SetEventArgs{EventID: id}) }
	const complete, timeout = abi.KFD_IOC_WAIT_RESULT_COMPLETE, abi.KFD_IOC_WAIT_RESULT_TIMEOUT

	a := create(abi.KFD_IOC_EVENT_SIGNAL, 1)
	// A new event's age is 1: a waiter that saw age 1 waits, one that saw another age does not.
	if r, errno, ages := wait([]uint32{a}, []uint64{1}, false, 0); r != timeout || errno != 0 || ages[0] != 1 {
		t.Errorf("age 1 on a new event: result %d %v, age back %d", r, errno, ages[0])
	}
	if r, _, ages := wait([]uint32{a}, []uint64{7}, false, 0); r != complete || ages[0] != 1 {
		t.Errorf("stale age 7: result %d, age back %d (want complete, 1)", r, ages[0])
	}
	// A set with no waiter: the first age-tracked wait consumes the signalled state and learns age
	// 2; a second waiter that still holds age 1 completes too, although nothing is signalled now.
	set(a)
	if r, _, ages := wait([]uint32{a}, []uint64{1}, false, 0); r != complete || ages[0] != 2 {
		t.Errorf("after a set: result %d, age %d (want complete, 2)", r, ages[0])
	}
	if r, _, _ := wait([]uint32{a}, []uint64{2}, false, 0); r != timeout {
		t.Errorf("age 2 after the set was seen: result %d", r)
	}
	if r, _, ages := wait([]uint32{a}, []uint64{1}, false, 0); r != complete || ages[0] != 2 {
		t.Errorf("a second waiter's missed set: result %d, age %d", r, ages[0])
	}
	// Age 0 is "not tracked" (every caller below KFD 1.14): the age is not written back.
	set(a)
	if r, _, ages := wait([]uint32{a}, []uint64{0}, false, 0); r != complete || ages[0] != 0 {
		t.Errorf("untracked wait: result %d, data %d (want complete, 0)", r, ages[0])
	}
	// A wait-for-all that does not complete copies nothing back (a's age is 3 after two sets, so
	// a waits; b, set once, is activated), and setting up its waiters consumed b's signalled state.
	b := create(abi.KFD_IOC_EVENT_SIGNAL, 1)
	set(b)
	if r, _, ages := wait([]uint32{a, b}, []uint64{3, 3}, true, 0); r != timeout || ages[0] != 3 || ages[1] != 3 {
		t.Errorf("incomplete wait-for-all: result %d, ages back %v (want timeout, [3 3])", r, ages)
	}
	if r, _, _ := wait([]uint32{b}, []uint64{2}, false, 0); r != timeout {
		t.Errorf("b still signalled after the wait-for-all consumed it: %d", r)
	}
	// init_event_waiter consumes an auto-reset event's signalled state in order, and an unknown id
	// later in the list does not give it back.
	set(b)
	if _, errno, _ := wait([]uint32{b, 12345}, nil, false, 0); errno != syscall.EINVAL {
		t.Errorf("unknown second id: %v, want EINVAL", errno)
	}
	if r, _, _ := wait([]uint32{b}, nil, false, 0); r != timeout {
		t.Errorf("b still signalled after the failed wait consumed it: %d", r)
	}
	// No events: complete at once, whether all or any (test_event_condition: 0 activated of 0).
	for _, all := range []bool{true, false} {
		if r, errno, _ := wait(nil, nil, all, 0xffffffff); r != complete || errno != 0 {
			t.Errorf("no events, all=%v: %d %v", all, r, errno)
		}
	}
	w := abi.WaitEventsArgs{EventsPtr: e.c.base, NumEvents: maxWaitEvents + 1}
	if errno := e.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w); errno != syscall.ENOMEM {
		t.Errorf("%d events: %v, want ENOMEM (kcalloc of the waiters)", w.NumEvents, errno)
	}
	// An event destroyed under the wait fails it: wait_result FAIL, EIO.
	c := create(abi.KFD_IOC_EVENT_SIGNAL, 1)
	done := make(chan syscall.Errno, 1)
	go func() {
		cl := newCaller(e.c.tgid)
		eventData(cl.mem, c)
		buf := make([]byte, 24)
		encode(buf, abi.WaitEventsArgs{EventsPtr: cl.base, NumEvents: 1, Timeout: 5000})
		done <- e.f.Ioctl(cl, abi.AMDKFD_IOC_WAIT_EVENTS, buf)
	}()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		p := e.d.procs[e.c.tgid]
		p.mu.Lock()
		n := p.events[c].waiters
		p.mu.Unlock()
		if n == 1 {
			break
		}
	}
	e.do(abi.AMDKFD_IOC_DESTROY_EVENT, &abi.DestroyEventArgs{EventID: c})
	select {
	case errno := <-done:
		if errno != syscall.EIO {
			t.Errorf("wait on a destroyed event: %v, want EIO", errno)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("wait on a destroyed event not ended")
	}
	// Debug events are the GPU's to set (event_can_be_cpu_signaled).
	d := create(abi.KFD_IOC_EVENT_DEBUG_EVENT, 1)
	if errno := set(d); errno != syscall.EINVAL {
		t.Errorf("SET_EVENT of a debug event: %v, want EINVAL", errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_RESET_EVENT, &abi.ResetEventArgs{EventID: d}); errno != syscall.EINVAL {
		t.Errorf("RESET_EVENT of a debug event: %v, want EINVAL", errno)
	}
}

// TestPM4Queue drives a KFD_IOC_QUEUE_TYPE_COMPUTE queue through the driver: WRITE_DATA and
// RELEASE_MEM packets in the ring, the 64-bit write pointer and the doorbell as kfdtest's
// PM4Queue uses them; the data lands in the BO and the 32-bit read pointer follows.
func TestPM4Queue(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	const base = 0x600000000
	a := e.queueArgs(base)
	a.QueueType = abi.KFD_IOC_QUEUE_TYPE_COMPUTE
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &a); errno != 0 {
		t.Fatalf("create: %v", errno)
	}
	p := e.d.procs[e.c.tgid]
	ring, ptrs := p.boAt(e.gpu, base).mem, p.boAt(e.gpu, base+0x10000).mem
	const dst, fence = base + 0x10100, base + 0x10200
	pkts := []uint32{
		pm4.Header(pm4.OpWriteData, 3), 5 << 8, dst & 0xffffffff, dst >> 32, 0xc0ffee, // WRITE_DATA, dst_sel memory
		pm4.Header(pm4.OpReleaseMem, 6), pm4.EventCacheFlushAndInvTS | 5<<8, 1 << 29, // DATA_SEL 1: 32-bit value
		fence & 0xffffffff, fence >> 32, 7, 0, 0,
	}
	for i, w := range pkts {
		binary.LittleEndian.PutUint32(ring[4*i:], w)
	}
	word64(ptrs[0x38:]).Store(uint64(len(pkts))) // write pointer, in dwords
	pd := p.pdds[e.gpu]
	word64(pd.doorbellMem[a.DoorbellOffset&(doorbellSlice-1):]).Store(uint64(len(pkts)))
	deadline := time.Now().Add(5 * time.Second)
	for word32(ptrs[0x200:]).Load() != 7 {
		if time.Now().After(deadline) {
			t.Fatalf("RELEASE_MEM not executed; queue: %s", p.queues[a.QueueID].eng.status())
		}
		time.Sleep(time.Millisecond)
	}
	if v := binary.LittleEndian.Uint32(ptrs[0x100:]); v != 0xc0ffee {
		t.Errorf("WRITE_DATA wrote %#x", v)
	}
	if r := word32(ptrs[0x80:]).Load(); r != uint32(len(pkts)) {
		t.Errorf("read pointer %d, want %d", r, len(pkts))
	}
	if errno := e.do(abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: a.QueueID}); errno != 0 {
		t.Errorf("destroy: %v", errno)
	}
}

// TestPM4TimestampIsGPUClock: RELEASE_MEM with DATA_SEL 3 writes the GPU clock counter that
// GET_CLOCK_COUNTERS reports (kfdtest QueueLatency subtracts one from the other).
func TestPM4TimestampIsGPUClock(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	const base = 0x600000000
	a := e.queueArgs(base)
	a.QueueType = abi.KFD_IOC_QUEUE_TYPE_COMPUTE
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &a); errno != 0 {
		t.Fatalf("create: %v", errno)
	}
	p := e.d.procs[e.c.tgid]
	ring, ptrs := p.boAt(e.gpu, base).mem, p.boAt(e.gpu, base+0x10000).mem
	const fence = base + 0x10200
	pkts := []uint32{pm4.Header(pm4.OpReleaseMem, 6), pm4.EventCacheFlushAndInvTS | 5<<8, pm4.DataSelTimestamp << 29,
		fence & 0xffffffff, fence >> 32, 0, 0, 0}
	for i, w := range pkts {
		binary.LittleEndian.PutUint32(ring[4*i:], w)
	}
	clock := func() uint64 {
		c := abi.GetClockCountersArgs{GPUID: e.gpu}
		if errno := e.do(abi.AMDKFD_IOC_GET_CLOCK_COUNTERS, &c); errno != 0 {
			t.Fatal(errno)
		}
		return c.GPUClockCounter
	}
	before := clock()
	word64(ptrs[0x38:]).Store(uint64(len(pkts)))
	word64(p.pdds[e.gpu].doorbellMem[a.DoorbellOffset&(doorbellSlice-1):]).Store(uint64(len(pkts)))
	deadline := time.Now().Add(5 * time.Second)
	for word64(ptrs[0x200:]).Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("RELEASE_MEM not executed; queue: %s", p.queues[a.QueueID].eng.status())
		}
		time.Sleep(time.Millisecond)
	}
	after := clock()
	if ts := word64(ptrs[0x200:]).Load(); ts < before || ts > after {
		t.Errorf("RELEASE_MEM timestamp %d outside the GET_CLOCK_COUNTERS readings %d..%d", ts, before, after)
	}
}

// TestPM4QueueInactiveByUpdate: UPDATE_QUEUE with a NULL ring address and size 0, or with
// percentage 0, makes a PM4 queue inactive (QUEUE_IS_ACTIVE): a packet written and rung after it
// does not run until an update makes the queue active again (kfdtest's
// DisableCpQueueByUpdateWithNullAddress and DisableCpQueueByUpdateWithZeroPercentage).
func TestPM4QueueInactiveByUpdate(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	const base = 0x600000000
	a := e.queueArgs(base)
	a.QueueType = abi.KFD_IOC_QUEUE_TYPE_COMPUTE
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &a); errno != 0 {
		t.Fatalf("create: %v", errno)
	}
	p := e.d.procs[e.c.tgid]
	ring, ptrs := p.boAt(e.gpu, base).mem, p.boAt(e.gpu, base+0x10000).mem
	bell := p.pdds[e.gpu].doorbellMem[a.DoorbellOffset&(doorbellSlice-1):]
	const dst = base + 0x10100
	wptr := 0
	submit := func(v uint32) { // WRITE_DATA of v to dst, write pointer and doorbell
		for _, w := range []uint32{pm4.Header(pm4.OpWriteData, 3), 5 << 8, dst & 0xffffffff, dst >> 32, v} {
			binary.LittleEndian.PutUint32(ring[4*wptr:], w)
			wptr++
		}
		word64(ptrs[0x38:]).Store(uint64(wptr))
		word64(bell).Store(uint64(wptr))
	}
	waitFor := func(v uint32) bool {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if word32(ptrs[0x100:]).Load() == v {
				return true
			}
		}
		return false
	}
	update := func(ring uint64, size uint32, percent uint32) {
		u := abi.UpdateQueueArgs{QueueID: a.QueueID, RingBaseAddress: ring, RingSize: size, QueuePercentage: percent}
		if errno := e.do(abi.AMDKFD_IOC_UPDATE_QUEUE, &u); errno != 0 {
			t.Fatalf("update(%#x, %d, %d): %v", ring, size, percent, errno)
		}
	}
	submit(1)
	if !waitFor(1) {
		t.Fatalf("active queue did not run; %s", p.queues[a.QueueID].eng.status())
	}
	for i, off := range []struct {
		ring    uint64
		size    uint32
		percent uint32
	}{{0, 0, 100}, {base, a.RingSize, 0}} {
		update(off.ring, off.size, off.percent)
		v := uint32(10 + i)
		submit(v)
		time.Sleep(50 * time.Millisecond)
		if got := word32(ptrs[0x100:]).Load(); got == v {
			t.Errorf("update %+v: the inactive queue ran a packet", off)
		}
		update(base, a.RingSize, 100)
		if !waitFor(v) {
			t.Errorf("update %+v then back: the packet did not run; %s", off, p.queues[a.QueueID].eng.status())
		}
	}
	// The PM4 queue is in its GPU's runlist like an AQL queue: it holds an HQD, and eviction
	// (kfd_process_evict_queues) unmaps it until the queues are restored.
	if rl := e.d.debugRunlists(); !strings.Contains(rl, fmt.Sprintf("tgid %d queue %d", e.c.tgid, a.QueueID)) {
		t.Errorf("PM4 queue not in the runlist:\n%s", rl)
	}
	if err := e.d.EvictQueues(e.c.tgid); err != nil {
		t.Fatal(err)
	}
	submit(20)
	time.Sleep(50 * time.Millisecond)
	if word32(ptrs[0x100:]).Load() == 20 {
		t.Error("an evicted PM4 queue ran a packet")
	}
	if err := e.d.RestoreQueues(e.c.tgid); err != nil {
		t.Fatal(err)
	}
	if !waitFor(20) {
		t.Errorf("restored PM4 queue did not run; %s", p.queues[a.QueueID].eng.status())
	}
	if errno := e.do(abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: a.QueueID}); errno != 0 {
		t.Errorf("destroy: %v", errno)
	}
}

// A completion interrupt racing a WAIT_EVENTS on its way to sleep is never lost (SignalInterrupt
// sets the event without Process.mu and wakes only a counted sleeper): rounds of one set from
// another goroutine, at a varying moment, against one wait on an auto-reset signal event; every
// wait is answered long before its 5 s timeout.
func TestSignalInterruptRacesWaiter(t *testing.T) {
	e := newEnv(t, "mi210")
	id := e.signalEvent(true)
	p := e.d.procs[e.c.tgid]
	go_ := make(chan int)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for spin := range go_ {
			for k := 0; k < spin; k++ {
				runtime.Gosched()
			}
			p.SignalInterrupt(id)
		}
	}()
	defer func() { close(go_); <-done }()
	for i := range 3000 {
		go_ <- i % 7
		eventData(e.c.mem, id)
		w := abi.WaitEventsArgs{EventsPtr: e.c.base, NumEvents: 1, Timeout: 5000}
		start := time.Now()
		if errno := e.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w); errno != 0 || w.WaitResult != abi.KFD_IOC_WAIT_RESULT_COMPLETE || time.Since(start) > time.Second {
			t.Fatalf("round %d: %v result %d after %v", i, errno, w.WaitResult, time.Since(start))
		}
	}
}

// The event interrupts take no lock shared with the process's other queues and ioctls (amdkfd's
// kfd_signal_event_interrupt runs under rcu_read_lock, not p->event_mutex): with Process.mu held
// elsewhere and no waiter asleep, a completion-signal interrupt, an s_sendmsg interrupt naming its
// event and one naming another id (the exhaustive search) each set their event and acknowledge its
// slot.
func TestEventInterruptsWithoutProcessLock(t *testing.T) {
	e := newEnv(t, "mi210")
	ids := [3]uint32{e.signalEvent(false), e.signalEvent(false), e.signalEvent(false)}
	p := e.d.procs[e.c.tgid]
	slot := func(id uint32) *atomic.Uint64 { return word64(p.evt.page[8*id:]) }
	for i, raise := range []func(){
		func() { p.SignalInterrupt(ids[0]) },
		func() { p.SignalEventInterrupt(ids[1], 24) },
		func() { p.SignalEventInterrupt(0xfff, 24) }, // no event: the exhaustive search finds ids[2]
	} {
		slot(ids[i]).Store(uint64(ids[i]))
		done := make(chan struct{})
		p.mu.Lock()
		go func() { raise(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			t.Errorf("interrupt %d waits for Process.mu", i)
		}
		p.mu.Unlock()
		<-done
		if v := slot(ids[i]).Load(); v != slotUnsignalled {
			t.Errorf("interrupt %d: slot %#x not acknowledged", i, v)
		}
		eventData(e.c.mem, ids[i])
		w := abi.WaitEventsArgs{EventsPtr: e.c.base, NumEvents: 1, Timeout: 0}
		if errno := e.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w); errno != 0 || w.WaitResult != abi.KFD_IOC_WAIT_RESULT_COMPLETE {
			t.Errorf("interrupt %d: event %d: %v result %d", i, ids[i], errno, w.WaitResult)
		}
	}
}

// With no WAIT_EVENTS asleep, an event interrupt allocates nothing (the bar's hot path: packet,
// signal): the completion-signal interrupt and the s_sendmsg interrupt, found at once or by the
// exhaustive search.
func TestEventInterruptsDoNotAllocate(t *testing.T) {
	e := newEnv(t, "mi210")
	id := e.signalEvent(true)
	p := e.d.procs[e.c.tgid]
	slot := word64(p.evt.page[8*id:])
	for name, f := range map[string]func(){
		"SignalInterrupt":                func() { p.SignalInterrupt(id) },
		"SignalEventInterrupt":           func() { p.SignalEventInterrupt(id, 24) },
		"SignalEventInterrupt, other id": func() { p.SignalEventInterrupt(id+1, 24) },
	} {
		sets := 0
		n := testing.AllocsPerRun(200, func() {
			slot.Store(uint64(id))
			f()
			if slot.Load() == slotUnsignalled {
				sets++
			}
		})
		if n != 0 || sets == 0 {
			t.Errorf("%s: %v allocations per interrupt, %d of the calls acknowledged the slot", name, n, sets)
		}
	}
}

// TestAQLFaultRaisesMemoryException: a packet whose completion signal is not GPU-mapped is a GPU
// page fault: the queue stops and every MEMORY event gets the faulting address
// (kfd_signal_vm_fault_event), as ROCr's memory-exception handler expects.
func TestAQLFaultRaisesMemoryException(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	const base, sig = 0x600000000, 0x7000000000
	a := e.queueArgs(base)
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &a); errno != 0 {
		t.Fatalf("create: %v", errno)
	}
	mev := abi.CreateEventArgs{EventType: abi.KFD_IOC_EVENT_MEMORY}
	if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &mev); errno != 0 {
		t.Fatal(errno)
	}
	p := e.d.procs[e.c.tgid]
	e.submitBarrier(a, base, aql.BarrierPacket{CompletionSignal: sig})

	eventData(e.c.mem, mev.EventID)
	w := abi.WaitEventsArgs{EventsPtr: e.c.base, NumEvents: 1, Timeout: 5000}
	if errno := e.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w); errno != 0 || w.WaitResult != abi.KFD_IOC_WAIT_RESULT_COMPLETE {
		t.Fatalf("memory event: %v result %d; queue: %s", errno, w.WaitResult, p.queues[a.QueueID].eng.status())
	}
	notPresent := binary.LittleEndian.Uint32(e.c.mem[0:])
	va, gpu := binary.LittleEndian.Uint64(e.c.mem[16:]), binary.LittleEndian.Uint32(e.c.mem[24:])
	if notPresent != 1 || va < sig || va >= sig+aql.PacketSize || gpu != e.gpu {
		t.Errorf("exception data: not_present %d va %#x gpu %d", notPresent, va, gpu)
	}
	if err := p.queues[a.QueueID].eng.Err(); err == nil {
		t.Error("queue still running after the fault")
	}
	if errno := e.do(abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: a.QueueID}); errno != 0 {
		t.Errorf("destroy: %v", errno)
	}
}

// TestVMFaultEvictsDeviceQueues: a GPUVM fault is the memory controller's interrupt, not the CP's.
// The driver evicts the process's queues on the device for good (kfd_dqm_evict_pasid: the other
// queue stops running, a queue created later never runs) before it sets the memory events, and the
// faulting queue's amd_queue_t gets no queue-inactive code (ROCr learns of the fault from the
// memory event alone, and its VMFaultHandler reports it).
func TestVMFaultEvictsDeviceQueues(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	const base1, base2, base3, unmapped = 0x600000000, 0x680000000, 0x700000000, 0x7000000000
	a1, a2 := e.queueArgs(base1), e.queueArgs(base2)
	for _, a := range []*abi.CreateQueueArgs{&a1, &a2} {
		if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, a); errno != 0 {
			t.Fatalf("create: %v", errno)
		}
	}
	mev := abi.CreateEventArgs{EventType: abi.KFD_IOC_EVENT_MEMORY}
	if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &mev); errno != 0 {
		t.Fatal(errno)
	}
	p := e.d.procs[e.c.tgid]
	// Queue 1's amd_queue_t has a queue-inactive signal (in its own page, at 0x800).
	aq1 := p.boAt(e.gpu, base1+0x10000).mem
	word64(aq1[aql.AMDQueueInactiveSignalOffset:]).Store(base1 + 0x10000 + 0x800)
	e.submitBarrier(a1, base1, aql.BarrierPacket{CompletionSignal: unmapped})
	eventData(e.c.mem, mev.EventID)
	w := abi.WaitEventsArgs{EventsPtr: e.c.base, NumEvents: 1, Timeout: 5000}
	if errno := e.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w); errno != 0 || w.WaitResult != abi.KFD_IOC_WAIT_RESULT_COMPLETE {
		t.Fatalf("memory event: %v result %d", errno, w.WaitResult)
	}
	if v := binary.LittleEndian.Uint64(aq1[0x800+aql.SignalValueOffset:]); v != 0 {
		t.Errorf("queue-inactive code %#x stored for a GPUVM fault", v)
	}
	// The memory event is set after the eviction: queue 2 is off the hardware and runs nothing.
	q2 := p.queues[a2.QueueID]
	if e.d.scheduler(e.gpu).IsMapped(q2) {
		t.Errorf("another queue of the device still mapped after the fault:\n%s", e.d.debugRunlists())
	}
	aq2 := p.boAt(e.gpu, base2+0x10000).mem
	binary.LittleEndian.PutUint64(aq2[0x900+aql.SignalValueOffset:], 1)
	e.submitBarrier(a2, base2, aql.BarrierPacket{CompletionSignal: base2 + 0x10000 + 0x900})
	// A queue created after the fault is created evicted (qpd->evicted).
	a3 := e.queueArgs(base3)
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &a3); errno != 0 {
		t.Fatalf("create after the fault: %v", errno)
	}
	aq3 := p.boAt(e.gpu, base3+0x10000).mem
	binary.LittleEndian.PutUint64(aq3[0x900+aql.SignalValueOffset:], 1)
	e.submitBarrier(a3, base3, aql.BarrierPacket{CompletionSignal: base3 + 0x10000 + 0x900})
	time.Sleep(200 * time.Millisecond)
	if v2, v3 := binary.LittleEndian.Uint64(aq2[0x900+aql.SignalValueOffset:]), binary.LittleEndian.Uint64(aq3[0x900+aql.SignalValueOffset:]); v2 != 1 || v3 != 1 {
		t.Errorf("evicted queues ran their barriers: signals %d %d", v2, v3)
	}
	if e.d.scheduler(e.gpu).IsMapped(p.queues[a3.QueueID]) {
		t.Error("a queue created after the fault is mapped")
	}
	for _, id := range []uint32{a1.QueueID, a2.QueueID, a3.QueueID} {
		if errno := e.do(abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: id}); errno != 0 {
			t.Errorf("destroy %d: %v", id, errno)
		}
	}
}

// TestSDMAQueue drives an SDMA queue through the driver: a copy, an atomic decrement of a signal
// and a trap, as ROCr's BlitSdma submits them; the trap signals the event.
func TestSDMAQueue(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	const base = 0x600000000
	e.alloc(base, 4096)           // ring
	e.alloc(base+0x10000, 4096)   // read pointer page
	e.alloc(base+0x20000, 4096)   // write pointer page
	e.alloc(base+0x30000, 0x4000) // data
	page := abi.AllocMemoryOfGPUArgs{VAAddr: 0x400000000, Size: signalSlots * 8, GPUID: e.gpu, Flags: allocGTT}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &page); errno != 0 {
		t.Fatal(errno)
	}
	ev := abi.CreateEventArgs{EventPageOffset: page.Handle, EventType: abi.KFD_IOC_EVENT_SIGNAL}
	if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &ev); errno != 0 {
		t.Fatal(errno)
	}
	a := abi.CreateQueueArgs{RingBaseAddress: base, RingSize: 4096, GPUID: e.gpu, QueueType: abi.KFD_IOC_QUEUE_TYPE_SDMA,
		QueuePercentage: 100, ReadPointerAddress: base + 0x10000, WritePointerAddress: base + 0x20000}
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &a); errno != 0 {
		t.Fatalf("create: %v", errno)
	}
	p := e.d.procs[e.c.tgid]
	ring, wp, d := p.boAt(e.gpu, base).mem, p.boAt(e.gpu, base+0x20000).mem, p.boAt(e.gpu, base+0x30000).mem
	for i := 0; i < 0x1000; i++ {
		d[i] = byte(i)
	}
	// The SDMA queue is in the runlist with its own slot (no compute HQD): evicted, it does not
	// run what is submitted; restored, it does.
	rl := e.d.debugRunlists()
	if !strings.Contains(rl, fmt.Sprintf("own   tgid %d queue %d", e.c.tgid, a.QueueID)) || strings.Contains(e.d.scheduler(e.gpu).HQDs(), "tgid") {
		t.Errorf("SDMA queue in the runlist with its own slot:\n%s\n%s", rl, e.d.scheduler(e.gpu).HQDs())
	}
	if err := e.d.EvictQueues(e.c.tgid); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.d.RestoreQueues(e.c.tgid); err != nil {
			t.Fatal(err)
		}
	}()
	binary.LittleEndian.PutUint64(d[0x3000:], 1) // signal value
	var pk []byte
	pk = sdma.AppendCopyLinear(pk, base+0x31000, base+0x30000, 0x1000)
	pk = sdma.AppendAtomic(pk, sdma.Atomic{Op: sdma.AtomicAdd64, Addr: base + 0x33000, Src: ^uint64(0)})
	pk = sdma.AppendTrap(pk, ev.EventID)
	copy(ring, pk)
	word64(wp).Store(uint64(len(pk)))
	word64(p.pdds[e.gpu].doorbellMem[a.DoorbellOffset&(doorbellSlice-1):]).Store(uint64(len(pk)))
	time.Sleep(50 * time.Millisecond)
	if d[0x1000+1] == 1 {
		t.Fatal("an evicted SDMA queue copied")
	}
	if err := e.d.RestoreQueues(e.c.tgid); err != nil {
		t.Fatal(err)
	}
	eventData(e.c.mem, ev.EventID)
	w := abi.WaitEventsArgs{EventsPtr: e.c.base, NumEvents: 1, Timeout: 5000}
	if errno := e.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w); errno != 0 || w.WaitResult != abi.KFD_IOC_WAIT_RESULT_COMPLETE {
		t.Fatalf("trap event: %v result %d; queue: %s", errno, w.WaitResult, p.queues[a.QueueID].eng.status())
	}
	if !bytes.Equal(d[0:0x1000], d[0x1000:0x2000]) || binary.LittleEndian.Uint64(d[0x3000:]) != 0 {
		t.Errorf("copy or signal wrong; queue: %s", p.queues[a.QueueID].eng.status())
	}
	if errno := e.do(abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: a.QueueID}); errno != 0 {
		t.Errorf("destroy: %v", errno)
	}
}

// peer opens the driver as another process (tgid) with its GPU VM acquired.
func (e *env) peer(tgid int) *env {
	c := newCaller(tgid)
	f, err := e.d.OpenKFD(tgid)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(f.Release)
	p := &env{t: e.t, d: e.d, sys: e.sys, f: f, c: c, gpu: e.gpu}
	p.acquire(e.gpu)
	return p
}

// TestQueueIsolation: a packet of one process that names an address where only another process
// has memory faults in its own process; the other process's memory is untouched and it gets no
// exception (each process has its own GPU address space, kfd's per-PASID VM).
func TestQueueIsolation(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	other := e.peer(fakeTgid + 4)
	const victim = 0x7000000000
	other.alloc(victim, 4096)
	vmem := other.d.procs[other.c.tgid].boAt(e.gpu, victim).mem
	binary.LittleEndian.PutUint64(vmem[aql.SignalValueOffset:], 1)
	oev := abi.CreateEventArgs{EventType: abi.KFD_IOC_EVENT_MEMORY}
	if errno := other.do(abi.AMDKFD_IOC_CREATE_EVENT, &oev); errno != 0 {
		t.Fatal(errno)
	}
	mev := abi.CreateEventArgs{EventType: abi.KFD_IOC_EVENT_MEMORY}
	if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &mev); errno != 0 {
		t.Fatal(errno)
	}
	const base = 0x600000000
	a := e.queueArgs(base)
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &a); errno != 0 {
		t.Fatalf("create: %v", errno)
	}
	e.submitBarrier(a, base, aql.BarrierPacket{CompletionSignal: victim})
	eventData(e.c.mem, mev.EventID)
	w := abi.WaitEventsArgs{EventsPtr: e.c.base, NumEvents: 1, Timeout: 5000}
	if errno := e.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w); errno != 0 || w.WaitResult != abi.KFD_IOC_WAIT_RESULT_COMPLETE {
		t.Fatalf("no fault in the submitting process: %v result %d", errno, w.WaitResult)
	}
	if v := binary.LittleEndian.Uint64(vmem[aql.SignalValueOffset:]); v != 1 {
		t.Errorf("another process's memory changed: %d", v)
	}
	eventData(other.c.mem, oev.EventID)
	w = abi.WaitEventsArgs{EventsPtr: other.c.base, NumEvents: 1, Timeout: 0}
	if errno := other.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w); errno != 0 || w.WaitResult != abi.KFD_IOC_WAIT_RESULT_TIMEOUT {
		t.Errorf("the other process saw an exception: %v result %d", errno, w.WaitResult)
	}
	e.do(abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: a.QueueID})
}

// TestBarrierChainAcrossQueues: queue A's barrier-AND waits on the completion signal of a packet on
// queue B; A completes only after B has run, without any CPU action in between.
func TestBarrierChainAcrossQueues(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	p := e.d.procs[e.c.tgid]
	const baseA, baseB, sigs = 0x600000000, 0x800000000, 0x900000000
	e.alloc(sigs, 4096)
	smem := p.boAt(e.gpu, sigs).mem
	sigB, doneA := uint64(sigs), uint64(sigs+64) // amd_signal_t handles
	binary.LittleEndian.PutUint64(smem[aql.SignalValueOffset:], 1)
	binary.LittleEndian.PutUint64(smem[64+aql.SignalValueOffset:], 1)
	submit := func(base uint64, a abi.CreateQueueArgs, bp aql.BarrierPacket) { e.submitBarrier(a, base, bp) }
	qa, qb := e.queueArgs(baseA), e.queueArgs(baseB)
	for _, a := range []*abi.CreateQueueArgs{&qa, &qb} {
		if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, a); errno != 0 {
			t.Fatalf("create: %v", errno)
		}
	}
	submit(baseA, qa, aql.BarrierPacket{DepSignal: [5]uint64{sigB}, CompletionSignal: doneA})
	time.Sleep(20 * time.Millisecond)
	if v := word64(smem[64+aql.SignalValueOffset:]).Load(); v != 1 {
		t.Fatalf("queue A completed before its dependency: %d", v)
	}
	submit(baseB, qb, aql.BarrierPacket{CompletionSignal: sigB})
	deadline := time.Now().Add(5 * time.Second)
	for word64(smem[64+aql.SignalValueOffset:]).Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("queue A did not complete after queue B: A %s, B %s", p.queues[qa.QueueID].eng.status(), p.queues[qb.QueueID].eng.status())
		}
		time.Sleep(time.Millisecond)
	}
	for _, a := range []abi.CreateQueueArgs{qa, qb} {
		e.do(abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: a.QueueID})
	}
}

// TestDestroyQueueWithPacketsInFlight: DESTROY_QUEUE on a queue whose barrier waits on a signal
// nobody will set returns at once (the processor is stopped first), the queue's buffers can then be
// unmapped and freed, and the process tears down with nothing left.
func TestDestroyQueueWithPacketsInFlight(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	const base, sigs = 0x600000000, 0x900000000
	a := e.queueArgs(base)
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &a); errno != 0 {
		t.Fatalf("create: %v", errno)
	}
	e.alloc(sigs, 4096)
	p := e.d.procs[e.c.tgid]
	smem := p.boAt(e.gpu, sigs).mem
	binary.LittleEndian.PutUint64(smem[aql.SignalValueOffset:], 1) // never signalled
	ring, aq := p.boAt(e.gpu, base).mem, p.boAt(e.gpu, base+0x10000).mem
	for i := 0; i < 3; i++ { // one blocked barrier and two packets behind it
		var pkt [aql.PacketSize]byte
		(&aql.BarrierPacket{DepSignal: [5]uint64{sigs}}).Encode(pkt[:])
		copy(ring[64*i+4:64*i+64], pkt[4:])
		word32(ring[64*i:]).Store(uint32(aql.MakeHeader(aql.PacketTypeBarrierAnd, true, aql.FenceScopeSystem, aql.FenceScopeSystem)))
	}
	word64(aq[0x38:]).Store(3)
	word64(p.pdds[e.gpu].doorbellMem[a.DoorbellOffset&(doorbellSlice-1):]).Store(2)
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	if errno := e.do(abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: a.QueueID}); errno != 0 {
		t.Fatalf("destroy: %v", errno)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("DESTROY_QUEUE took %v with a blocked barrier", d)
	}
	if r := word64(aq[0x80:]).Load(); r != 0 {
		t.Errorf("read index %d: the blocked barrier was retired", r)
	}
	ring0 := p.boAt(e.gpu, base)
	binary.LittleEndian.PutUint32(e.c.mem, e.gpu)
	if errno := e.do(abi.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &abi.MapMemoryToGPUArgs{Handle: ring0.handle, DeviceIDsArrayPtr: e.c.base, NDevices: 1}); errno != 0 {
		t.Errorf("unmap of the ring after destroy: %v", errno)
	}
	if st := e.d.Stats(); st["queues"] != 0 || st["doorbells_watched"] != 0 {
		t.Errorf("after destroy: %v", st)
	}
}

// TestGPUVMPermissions: a dispatch reaches memory through the process's page tables with the
// permissions ALLOC asked for. Code in a BO without EXECUTABLE faults on the first fetch
// (NoExecute); a store to a BO without WRITABLE faults (ReadOnly); the exception names the page.
func TestGPUVMPermissions(t *testing.T) {
	const (
		code = 0x800000000 // kernel descriptor at 0, code at 0x100
		ro   = 0x900000000
	)
	store := []uint32{ // v[2:3] = ro + 0x10; global_store_dword v[2:3], v1, off; s_endpgm
		0x7E0402FF, (ro + 0x10) & 0xffffffff, 0x7E0602FF, (ro + 0x10) >> 32, 0xDC708000, 0x007F0102, 0xBF810000,
	}
	for _, tc := range []struct {
		name      string
		codeFlags uint32
		want      abi.MemoryExceptionFailure
		va        uint64
	}{
		{"no execute", allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, abi.MemoryExceptionFailure{NoExecute: 1}, code},
		{"read only", allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE, abi.MemoryExceptionFailure{ReadOnly: 1}, ro},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "mi210")
			e.acquire(e.gpu)
			const base = 0x600000000
			a := e.queueArgs(base)
			if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &a); errno != 0 {
				t.Fatalf("create: %v", errno)
			}
			mev := abi.CreateEventArgs{EventType: abi.KFD_IOC_EVENT_MEMORY}
			if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &mev); errno != 0 {
				t.Fatal(errno)
			}
			for _, bo := range []struct {
				va    uint64
				flags uint32
			}{{code, tc.codeFlags}, {ro, allocGTT}} {
				al := abi.AllocMemoryOfGPUArgs{VAAddr: bo.va, Size: 4096, GPUID: e.gpu, Flags: bo.flags}
				if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &al); errno != 0 {
					t.Fatal(errno)
				}
				binary.LittleEndian.PutUint32(e.c.mem, e.gpu)
				if errno := e.do(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &abi.MapMemoryToGPUArgs{Handle: al.Handle, DeviceIDsArrayPtr: e.c.base, NDevices: 1}); errno != 0 {
					t.Fatal(errno)
				}
			}
			p := e.d.procs[e.c.tgid]
			cmem := p.boAt(e.gpu, code).mem
			binary.LittleEndian.PutUint64(cmem[16:], 0x100) // kernel_code_entry_byte_offset
			binary.LittleEndian.PutUint32(cmem[52:], 2<<1)  // COMPUTE_PGM_RSRC2: USER_SGPR_COUNT 2
			binary.LittleEndian.PutUint16(cmem[56:], 1<<3)  // kernarg segment ptr
			for i, w := range store {
				binary.LittleEndian.PutUint32(cmem[0x100+4*i:], w)
			}
			ring, aq := p.boAt(e.gpu, base).mem, p.boAt(e.gpu, base+0x10000).mem
			var pkt [aql.PacketSize]byte
			(&aql.KernelDispatchPacket{Setup: 1, WorkgroupSizeX: 1, WorkgroupSizeY: 1, WorkgroupSizeZ: 1,
				GridSizeX: 1, GridSizeY: 1, GridSizeZ: 1, KernelObject: code}).Encode(pkt[:])
			copy(ring[4:64], pkt[4:])
			word32(ring).Store(uint32(aql.MakeHeader(aql.PacketTypeKernelDispatch, true, aql.FenceScopeSystem, aql.FenceScopeSystem)) | 1<<16)
			word64(aq[0x38:]).Store(1)
			word64(p.pdds[e.gpu].doorbellMem[a.DoorbellOffset&(doorbellSlice-1):]).Store(0)

			eventData(e.c.mem, mev.EventID)
			w := abi.WaitEventsArgs{EventsPtr: e.c.base, NumEvents: 1, Timeout: 5000}
			if errno := e.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w); errno != 0 || w.WaitResult != abi.KFD_IOC_WAIT_RESULT_COMPLETE {
				t.Fatalf("memory event: %v result %d; queue: %s", errno, w.WaitResult, p.queues[a.QueueID].eng.status())
			}
			var got abi.MemoryExceptionFailure
			got.NotPresent = binary.LittleEndian.Uint32(e.c.mem[0:])
			got.ReadOnly = binary.LittleEndian.Uint32(e.c.mem[4:])
			got.NoExecute = binary.LittleEndian.Uint32(e.c.mem[8:])
			va := binary.LittleEndian.Uint64(e.c.mem[16:])
			if got != tc.want || va != tc.va {
				t.Errorf("exception %+v at %#x, want %+v at %#x", got, va, tc.want, tc.va)
			}
		})
	}
}

// FuzzIoctlSequence runs a sequence of ioctls on one process whose first GPU's VM is acquired, so
// that ALLOC, MAP, UNMAP, FREE, SVM and queue calls meet each other's state. Input: records of
// [nr][len][len bytes of argument]; the client's memory window starts with the GPU id (a device
// array for MAP/UNMAP). After the process is released nothing may be left: no process, PASID,
// physical segment or page table.
func FuzzIoctlSequence(f *testing.F) {
	sys, _ := topology.Profile("mi210")
	gpu := sys.GPUs()[0].GPUID
	le := binary.LittleEndian
	rec := func(nr uint8, v any) []byte {
		var b bytes.Buffer
		binary.Write(&b, le, v)
		return append([]byte{nr, uint8(b.Len())}, b.Bytes()...)
	}
	const base = 0x7f0000000000 // fakeCaller's window
	alloc := rec(0x16, abi.AllocMemoryOfGPUArgs{VAAddr: 0x100000000, Size: 1 << 16, GPUID: gpu,
		Flags: allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE})
	vram := rec(0x16, abi.AllocMemoryOfGPUArgs{VAAddr: 0x200000000, Size: 4 << 20, GPUID: gpu, Flags: allocVRAM})
	mapBO := rec(0x18, abi.MapMemoryToGPUArgs{Handle: uint64(gpu)<<32 | 1, DeviceIDsArrayPtr: base, NDevices: 1})
	mapVRAM := rec(0x18, abi.MapMemoryToGPUArgs{Handle: uint64(gpu)<<32 | 2, DeviceIDsArrayPtr: base, NDevices: 1})
	unmapBO := rec(0x19, abi.MapMemoryToGPUArgs{Handle: uint64(gpu)<<32 | 1, DeviceIDsArrayPtr: base, NDevices: 1})
	free := rec(0x17, abi.FreeMemoryOfGPUArgs{Handle: uint64(gpu)<<32 | 1})
	svmSet := append(rec(0x20, abi.SVMArgs{StartAddr: 0x100000000, Size: 1 << 16, NAttr: 1}), 2, 0, 0, 0, 0, 0, 0, 0)
	svmSet[1] += 8
	xnack := rec(0x21, abi.SetXnackModeArgs{XnackEnabled: 1})
	queue := rec(0x02, abi.CreateQueueArgs{RingBaseAddress: 0x100000000, RingSize: 4096, GPUID: gpu,
		QueueType: abi.KFD_IOC_QUEUE_TYPE_SDMA, QueuePercentage: 100, ReadPointerAddress: 0x100001000, WritePointerAddress: 0x100002000})
	f.Add(bytes.Join([][]byte{alloc, mapBO, unmapBO, free}, nil))
	f.Add(bytes.Join([][]byte{alloc, vram, mapBO, mapVRAM, free, queue}, nil))
	f.Add(bytes.Join([][]byte{xnack, svmSet, alloc, mapBO}, nil))
	f.Add(bytes.Join([][]byte{alloc, mapBO, queue, unmapBO, free}, nil))
	// IPC: export, then an import whose zero share handle the harness replaces by the last key
	// exported (the fuzzer cannot guess a random key), mapped, and the exporter freed first.
	export := rec(0x81, abi.IPCExportHandleArgs{Handle: uint64(gpu)<<32 | 2, GPUID: gpu})
	imp := rec(0x80, abi.IPCImportHandleArgs{VAAddr: 0x300000000, GPUID: gpu})
	mapImp := rec(0x18, abi.MapMemoryToGPUArgs{Handle: uint64(gpu)<<32 | 3, DeviceIDsArrayPtr: base, NDevices: 1})
	f.Add(bytes.Join([][]byte{alloc, vram, export, imp, mapImp, free, export}, nil))
	d := New(sys, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 4})))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := newCaller(fakeTgid + 3)
		le.PutUint32(c.mem, gpu)
		kf, err := d.OpenKFD(c.tgid)
		if err != nil {
			t.Fatal(err)
		}
		n := sys.NodeByGPUID(gpu)
		rf, err := d.OpenRender(n.RenderMinor(), c.tgid)
		if err != nil {
			t.Fatal(err)
		}
		c.fds[10] = [2]int{int(n.RenderMinor()), c.tgid}
		buf := make([]byte, 16)
		encode(buf, abi.AcquireVMArgs{DRMFD: 10, GPUID: gpu})
		if errno := kf.Ioctl(c, abi.AMDKFD_IOC_ACQUIRE_VM, buf); errno != 0 {
			t.Fatal(errno)
		}
		var key [16]byte // the last IPC key exported
		for calls := 0; len(data) >= 2 && calls < 16; calls++ {
			nr, size := data[0], int(data[1])
			data = data[2:]
			arg := make([]byte, size)
			copy(arg, data)
			data = data[min(size, len(data)):]
			if nr == 0x0c && size >= 20 { // WAIT_EVENTS: never block the fuzzer
				le.PutUint32(arg[16:], 0)
			}
			if nr == 0x80 && size >= 40 && bytes.Equal(arg[24:40], make([]byte, 16)) {
				copy(arg[24:40], key[:])
			}
			errno := kf.Ioctl(c, abi.IOC(abi.IOCRead|abi.IOCWrite, 'K', uint32(nr), uint32(size)), arg)
			if nr == 0x81 && size >= 24 && errno == 0 {
				copy(key[:], arg[8:24])
			}
		}
		kf.Release()
		rf.Release()
		if st := d.Stats(); st["processes"] != 0 || st["pasids"] != 0 || st["dmabufs"] != 0 || st["ipc_handles"] != 0 {
			t.Fatalf("leak: %v", st)
		}
		if ps := d.phys.Stats(); ps.Segments != 0 || ps.PageTableBytes != 0 {
			t.Fatalf("physical memory left after release: %+v", ps)
		}
	})
}

// TestAllocDomainPrecedence: with several domain flags the allocation takes the first of VRAM,
// GTT, USERPTR, DOORBELL, MMIO_REMAP (amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu's if/else chain).
func TestAllocDomainPrecedence(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	avail := abi.GetAvailableMemoryArgs{GPUID: e.gpu}
	e.do(abi.AMDKFD_IOC_AVAILABLE_MEMORY, &avail)
	a := abi.AllocMemoryOfGPUArgs{VAAddr: 0x200000000, Size: 1 << 20, GPUID: e.gpu, Flags: allocVRAM | allocGTT | allocUserptr}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
		t.Fatal(errno)
	}
	after := abi.GetAvailableMemoryArgs{GPUID: e.gpu}
	e.do(abi.AMDKFD_IOC_AVAILABLE_MEMORY, &after)
	if avail.Available-after.Available != 1<<20 {
		t.Errorf("VRAM|GTT|USERPTR took %d bytes of VRAM, want 1 MiB", avail.Available-after.Available)
	}
	g := abi.AllocMemoryOfGPUArgs{VAAddr: 0x300000000, Size: 4096, GPUID: e.gpu, Flags: allocGTT | allocUserptr}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &g); errno != 0 || g.MmapOffset == 0 {
		t.Errorf("GTT|USERPTR (no user address): %v offset %#x, want a GTT BO", errno, g.MmapOffset)
	}
}

// TestPM4DispatchScratch: a DISPATCH_DIRECT whose COMPUTE_TMPRING_SIZE gives WAVES slots of
// WAVESIZE KiB at COMPUTE_DISPATCH_SCRATCH_BASE runs with that scratch (kfdtest
// FlatScratchAccess): the wave's scratch_store lands in the scratch BO.
func TestPM4DispatchScratch(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	const base, code, scratch = 0x600000000, 0x800000000, 0x900000000
	a := e.queueArgs(base)
	a.QueueType = abi.KFD_IOC_QUEUE_TYPE_COMPUTE
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &a); errno != 0 {
		t.Fatalf("create: %v", errno)
	}
	for _, bo := range []struct {
		va    uint64
		flags uint32
	}{{code, allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE}, {scratch, allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}} {
		al := abi.AllocMemoryOfGPUArgs{VAAddr: bo.va, Size: 1 << 16, GPUID: e.gpu, Flags: bo.flags}
		if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &al); errno != 0 {
			t.Fatal(errno)
		}
		binary.LittleEndian.PutUint32(e.c.mem, e.gpu)
		if errno := e.do(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &abi.MapMemoryToGPUArgs{Handle: al.Handle, DeviceIDsArrayPtr: e.c.base, NDevices: 1}); errno != 0 {
			t.Fatal(errno)
		}
	}
	p := e.d.procs[e.c.tgid]
	// v_mov_b32 v1, 0x1234abcd; v_mov_b32 v0, 0; scratch_store_dword v0, v1, off; s_waitcnt vmcnt(0); s_endpgm
	prog := []uint32{0x7E0202FF, 0x1234abcd, 0x7E000280, 0xDC704000, 0x007F0100, 0xBF8C0F70, 0xBF810000}
	cmem := p.boAt(e.gpu, code).mem
	for i, w := range prog {
		binary.LittleEndian.PutUint32(cmem[4*i:], w)
	}
	setSH := func(reg uint32, v ...uint32) []uint32 {
		return append([]uint32{pm4.Header(pm4.OpSetSHReg, uint32(len(v))), reg - pm4.SHRegStart}, v...)
	}
	var pkts []uint32
	pkts = append(pkts, setSH(pm4.RegComputePgmLo, uint32(code>>8), uint32(code>>40))...)
	pkts = append(pkts, setSH(pm4.RegComputePgmRsrc1, 0, 1)...) // RSRC2: SCRATCH_EN
	pkts = append(pkts, setSH(pm4.RegComputeNumThreadX, 64, 1, 1)...)
	pkts = append(pkts, setSH(pm4.RegComputeScratchBaseLo, uint32(scratch>>8), uint32(scratch>>40))...)
	pkts = append(pkts, setSH(pm4.RegComputeTmpringSize, 8|1<<12)...) // 8 waves of 1 KiB
	pkts = append(pkts, pm4.Header(pm4.OpDispatchDirect, 3), 1, 1, 1, 1)
	const fence = base + 0x10200
	pkts = append(pkts, pm4.Header(pm4.OpReleaseMem, 6), pm4.EventCacheFlushAndInvTS|5<<8, 1<<29,
		fence&0xffffffff, fence>>32, 7, 0, 0)
	ring, ptrs := p.boAt(e.gpu, base).mem, p.boAt(e.gpu, base+0x10000).mem
	for i, w := range pkts {
		binary.LittleEndian.PutUint32(ring[4*i:], w)
	}
	word64(ptrs[0x38:]).Store(uint64(len(pkts)))
	word64(p.pdds[e.gpu].doorbellMem[a.DoorbellOffset&(doorbellSlice-1):]).Store(uint64(len(pkts)))
	deadline := time.Now().Add(10 * time.Second)
	for word32(ptrs[0x200:]).Load() != 7 {
		if time.Now().After(deadline) {
			t.Fatalf("dispatch not completed; queue: %s (%s)", p.queues[a.QueueID].eng.status(), p.queues[a.QueueID].lastErr)
		}
		time.Sleep(time.Millisecond)
	}
	smem := p.boAt(e.gpu, scratch).mem
	if v := binary.LittleEndian.Uint32(smem[0:]); v != 0x1234abcd {
		t.Fatalf("scratch dword of lane 0 = %#x, want 0x1234abcd", v)
	}
	if v := binary.LittleEndian.Uint32(smem[4*63:]); v != 0x1234abcd { // lane 63: dwords interleave per lane
		t.Fatalf("scratch dword of lane 63 = %#x, want 0x1234abcd", v)
	}
}

// TestAcquireThroughOtherRenderNode: libhsakmt 6.2.4 acquires every GPU's VM with the one render
// fd libdrm keeps (the first node it opened; see acquireVM). The GPU's own VM is acquired, and its
// BOs are reachable at their mmap offsets through that file's backing.
func TestAcquireThroughOtherRenderNode(t *testing.T) {
	e := newEnv(t, "mi210x8")
	gpus := e.sys.GPUs()
	n0, n1 := gpus[0], gpus[1]
	rf, err := e.d.OpenRender(n0.RenderMinor(), e.c.tgid)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Release()
	e.c.fds[7] = [2]int{int(n0.RenderMinor()), e.c.tgid}
	for _, g := range []uint32{n0.GPUID, n1.GPUID} {
		if errno := e.do(abi.AMDKFD_IOC_ACQUIRE_VM, &abi.AcquireVMArgs{DRMFD: 7, GPUID: g}); errno != 0 {
			t.Fatalf("ACQUIRE_VM gpu %#x through renderD%d: %v", g, n0.RenderMinor(), errno)
		}
	}
	// The same file again is a no-op; another file is EBUSY (kfd_process_device_init_vm).
	if errno := e.do(abi.AMDKFD_IOC_ACQUIRE_VM, &abi.AcquireVMArgs{DRMFD: 7, GPUID: n1.GPUID}); errno != 0 {
		t.Errorf("second ACQUIRE_VM with the same file: %v", errno)
	}
	rf1, err := e.d.OpenRender(n1.RenderMinor(), e.c.tgid)
	if err != nil {
		t.Fatal(err)
	}
	defer rf1.Release()
	e.c.fds[8] = [2]int{int(n1.RenderMinor()), e.c.tgid}
	if errno := e.do(abi.AMDKFD_IOC_ACQUIRE_VM, &abi.AcquireVMArgs{DRMFD: 8, GPUID: n1.GPUID}); errno != syscall.EBUSY {
		t.Errorf("ACQUIRE_VM with another file after the first: %v, want EBUSY", errno)
	}
	a := abi.AllocMemoryOfGPUArgs{VAAddr: 0x300000000, Size: 8192, GPUID: n1.GPUID, Flags: allocVRAM | abi.KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
		t.Fatalf("ALLOC VRAM on gpu 1: %v", errno)
	}
	m := abi.MapMemoryToGPUArgs{Handle: a.Handle, DeviceIDsArrayPtr: e.c.base, NDevices: 1}
	binary.LittleEndian.PutUint32(e.c.mem, n1.GPUID)
	if errno := e.do(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &m); errno != 0 || m.NSuccess != 1 {
		t.Fatalf("MAP on gpu 1: %v (%d mapped)", errno, m.NSuccess)
	}
	// A store through GPU 1's VM lands at the BO's offset in renderD<first>'s backing.
	port := e.d.procs[e.c.tgid].pdds[n1.GPUID].vm.NewPort()
	defer port.Close()
	if err := port.Write(a.VAAddr+4096, []byte{0xa5, 0x5a}); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 2)
	if _, err := rf.(*renderFile).Backing().ReadAt(got, int64(a.MmapOffset)+4096); err != nil || got[0] != 0xa5 || got[1] != 0x5a {
		t.Errorf("GPU 1's BO through renderD%d at offset %#x: %x %v", n0.RenderMinor(), a.MmapOffset+4096, got, err)
	}
}

// eventData writes one struct kfd_event_data for WAIT_EVENTS at b as libhsakmt does (calloc'd: no
// last_event_age, no extension) for event id.
func eventData(b []byte, id uint32) {
	clear(b[:48])
	binary.LittleEndian.PutUint32(b[40:], id)
}

// An ioctl pokes the doorbell scanner (the client may just have rung a doorbell) only when its
// process has a queue: for the others the poke would wake the scanner for nothing.
func TestIoctlPokesOnlyWithQueues(t *testing.T) {
	e := newEnv(t, "mi210")
	var v abi.GetVersionArgs
	ioctls := func(n int) uint64 {
		before := e.d.bells.Pokes()
		for range n {
			if errno := e.do(abi.AMDKFD_IOC_GET_VERSION, &v); errno != 0 {
				t.Fatalf("GET_VERSION: %v", errno)
			}
		}
		return e.d.bells.Pokes() - before
	}
	if n := ioctls(10); n != 0 {
		t.Errorf("10 ioctls of a process without queues poked the scanner %d times, want 0", n)
	}
	e.acquire(e.gpu)
	qa := e.queueArgs(0x600000000)
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &qa); errno != 0 {
		t.Fatal(errno)
	}
	if n := ioctls(10); n < 10 {
		t.Errorf("10 ioctls of a process with a queue poked the scanner %d times, want at least 10", n)
	}
}

// A queue whose ring is in a userptr BO (where ROCr puts its rings) tells the CP that the ring is
// client memory, reached by system calls (cp.Config.ClientMemory); a ring in a GTT BO does not.
func TestRingInClientMemory(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	gtt := e.queueArgs(0x600000000)
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &gtt); errno != 0 {
		t.Fatal(errno)
	}
	u := abi.AllocMemoryOfGPUArgs{VAAddr: 0x40000000, Size: 4096, GPUID: e.gpu, MmapOffset: e.c.base,
		Flags: allocUserptr | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &u); errno != 0 {
		t.Fatal("ALLOC userptr:", errno)
	}
	binary.LittleEndian.PutUint32(e.c.mem, e.gpu)
	if errno := e.do(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &abi.MapMemoryToGPUArgs{Handle: u.Handle, DeviceIDsArrayPtr: e.c.base, NDevices: 1}); errno != 0 {
		t.Fatal("MAP userptr:", errno)
	}
	user := e.queueArgs(0x700000000)
	user.RingBaseAddress = u.VAAddr
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &user); errno != 0 {
		t.Fatal(errno)
	}
	p := e.d.procs[e.c.tgid]
	for _, c := range []struct {
		id   uint32
		want bool
	}{{gtt.QueueID, false}, {user.QueueID, true}} {
		if got := p.queues[c.id].ringInClientMemory(); got != c.want {
			t.Errorf("queue %d: ring in client memory %v, want %v", c.id, got, c.want)
		}
	}
}
