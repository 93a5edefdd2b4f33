package fs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/kfdemu/kfdemu/internal/testenv"
	"github.com/kfdemu/kfdemu/kfd"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/topology"
	"golang.org/x/sys/unix"
)

// TestMain doubles as a client process for the fork and kill tests.
func TestMain(m *testing.M) {
	switch os.Getenv("FS_TEST_CHILD") {
	case "ebadf":
		// fd 3 is a dev/kfd opened by the parent: the driver must refuse this process, and
		// leave the argument as it was (kfd_ioctl returns EBADF before copying anything).
		var v [8]byte
		_, _, e := unix.Syscall(unix.SYS_IOCTL, 3, uintptr(abi.AMDKFD_IOC_GET_VERSION), uintptr(unsafe.Pointer(&v)))
		m := abi.MapMemoryToGPUArgs{Handle: 0x1234, DeviceIDsArrayPtr: 0xdead000, NDevices: 3, NSuccess: 1}
		want := m
		_, _, e2 := unix.Syscall(unix.SYS_IOCTL, 3, uintptr(abi.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU), uintptr(unsafe.Pointer(&m)))
		if e2 != e || m != want {
			os.Exit(100) // the argument was written or the errno differs
		}
		os.Exit(int(e))
	case "hold":
		// Open the device, allocate, report, then wait to be killed.
		mnt := os.Getenv("FS_TEST_MNT")
		c, err := openClient(mnt)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		c.alloc(0x100000000, 1<<20, abi.KFD_IOC_ALLOC_MEM_FLAGS_VRAM)
		fmt.Println("ready")
		time.Sleep(time.Hour)
	}
	os.Exit(m.Run())
}

func mountDriver(t testing.TB, profile string) (string, *kfd.Driver) {
	t.Helper()
	testenv.NeedMount(t)
	sys, err := topology.Profile(profile)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	d := kfd.New(sys, log)
	dir := filepath.Join(t.TempDir(), "mnt")
	srv, err := Mount(dir, Options{System: sys, Device: d, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	return dir, d
}

type client struct {
	kfd, render int
	gpu         uint32
}

// ioctl issues cmd and, like libhsakmt's kmtIoctl, re-issues it on EINTR: a signal to a thread
// blocked in a FUSE request (Go's runtime sends some) interrupts it with EINTR, where amdkfd's
// -ERESTARTSYS would restart it (README, deviations).
func ioctl(fd int, cmd uint32, arg any) syscall.Errno {
	buf := make([]byte, abi.IOCSize(cmd))
	for {
		put(buf, arg)
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(cmd), uintptr(unsafe.Pointer(&buf[0])))
		if e == syscall.EINTR {
			continue
		}
		get(buf, arg)
		return e
	}
}

func put(b []byte, v any) {
	n, _ := binary.Encode(b, binary.LittleEndian, v)
	_ = n
}

func get(b []byte, v any) { binary.Decode(b, binary.LittleEndian, v) }

func openClient(mnt string) (*client, error) {
	kfdFD, err := unix.Open(filepath.Join(mnt, "dev/kfd"), unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	r, err := unix.Open(filepath.Join(mnt, "dev/dri/renderD128"), unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	sys, err := topology.ReadSystem(filepath.Join(mnt, "sys/devices/virtual/kfd/kfd/topology"))
	if err != nil {
		return nil, err
	}
	c := &client{kfd: kfdFD, render: r, gpu: sys.GPUs()[0].GPUID}
	if e := ioctl(c.kfd, abi.AMDKFD_IOC_ACQUIRE_VM, &abi.AcquireVMArgs{DRMFD: uint32(r), GPUID: c.gpu}); e != 0 {
		return nil, fmt.Errorf("ACQUIRE_VM: %v", e)
	}
	return c, nil
}

// close closes the client's files (once; later calls do nothing).
func (c *client) close() {
	if c.kfd >= 0 {
		unix.Close(c.kfd)
		unix.Close(c.render)
		c.kfd, c.render = -1, -1
	}
}

// alloc allocates and maps a BO and returns its CPU mapping (through the render node). The BO is
// GPU-writable, as libhsakmt makes every allocation that is not ReadOnly.
func (c *client) alloc(va, size uint64, flags uint32) (handle uint64, cpu []byte, err error) {
	a := abi.AllocMemoryOfGPUArgs{VAAddr: va, Size: size, GPUID: c.gpu, Flags: flags | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}
	if e := ioctl(c.kfd, abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); e != 0 {
		return 0, nil, fmt.Errorf("ALLOC: %v", e)
	}
	ids := []uint32{c.gpu}
	m := abi.MapMemoryToGPUArgs{Handle: a.Handle, DeviceIDsArrayPtr: uint64(uintptr(unsafe.Pointer(&ids[0]))), NDevices: 1}
	if e := ioctl(c.kfd, abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &m); e != 0 {
		return 0, nil, fmt.Errorf("MAP: %v", e)
	}
	cpu, err = unix.Mmap(c.render, int64(a.MmapOffset), int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	return a.Handle, cpu, err
}

// free unmaps a BO from the client's GPU and frees it, as hsaKmtFreeMemory does (FREE of a
// mapped BO is EBUSY).
func (c *client) free(h uint64) error {
	ids := []uint32{c.gpu}
	m := abi.MapMemoryToGPUArgs{Handle: h, DeviceIDsArrayPtr: uint64(uintptr(unsafe.Pointer(&ids[0]))), NDevices: 1}
	if e := ioctl(c.kfd, abi.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &m); e != 0 {
		return fmt.Errorf("UNMAP: %v", e)
	}
	if e := ioctl(c.kfd, abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: h}); e != 0 {
		return fmt.Errorf("FREE: %v", e)
	}
	return nil
}

func TestDeviceFiles(t *testing.T) {
	mnt, d := mountDriver(t, "mi210")
	fd, err := unix.Open(filepath.Join(mnt, "dev/kfd"), unix.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	var v abi.GetVersionArgs
	if e := ioctl(fd, abi.AMDKFD_IOC_GET_VERSION, &v); e != 0 || v.MajorVersion != 1 {
		t.Fatalf("GET_VERSION through the mount: %v %+v", e, v)
	}
	// Refused before any copy (kfd_ioctl): ENOTTY for a number out of range, EINVAL for a number
	// without a function; an _IOR argument stays as the caller left it, not zeroed.
	for _, tc := range []struct {
		cmd  uint32
		want syscall.Errno
	}{{abi.IOC(abi.IOCRead, 'K', 0x7f, 8), syscall.ENOTTY}, {abi.IOC(abi.IOCRead, 'K', 0x00, 8), syscall.ENOTTY}} {
		b := []byte{1, 2, 3, 4, 5, 6, 7, 8}
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(tc.cmd), uintptr(unsafe.Pointer(&b[0])))
		if e != tc.want || !bytes.Equal(b, []byte{1, 2, 3, 4, 5, 6, 7, 8}) {
			t.Errorf("ioctl %#x: %v, argument % x; want %v and the argument untouched", tc.cmd, e, b, tc.want)
		}
	}
	if e := ioctl(fd, abi.IOC(abi.IOCRead, 'K', 0x30, 8), &v); e != syscall.ENOTTY {
		t.Errorf("unknown ioctl: %v", e)
	}
	// Fork: an inherited fd is refused with EBADF.
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "FS_TEST_CHILD=ebadf")
	// The *os.File owns fd from here: closing fd directly instead would leave its finalizer to
	// close the number again later, by then another test's file (this was the TestKillTeardown
	// flake: its stdout pipe closed under it, the child killed by SIGPIPE or the read hung).
	kf := os.NewFile(uintptr(fd), "kfd")
	child.ExtraFiles = []*os.File{kf}
	err = child.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != int(syscall.EBADF) {
		t.Errorf("ioctl on an inherited fd: %v, want exit code EBADF (%d)", err, syscall.EBADF)
	}
	kf.Close()
	waitStats(t, d, 0)
}

func waitStats(t *testing.T, d *kfd.Driver, procs int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := d.Stats()
		if st["processes"] == procs && (procs > 0 || st["pasids"] == 0 && st["bos"] == 0) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("driver state: %v, want %d processes", st, procs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startHold starts a client process that opens mnt's devices, allocates 1 MiB of VRAM and waits to
// be killed (TestMain's "hold"); it returns once the allocation is done.
func startHold(t *testing.T, mnt string) *exec.Cmd {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "FS_TEST_CHILD=hold", "FS_TEST_MNT="+mnt)
	out, _ := child.StdoutPipe()
	var stderr bytes.Buffer
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	if string(buf[:n]) != "ready\n" {
		child.Process.Kill()
		err := child.Wait()
		t.Fatalf("child: %q (%v), stderr:\n%s", buf[:n], err, stderr.Bytes())
	}
	return child
}

// TestKillTeardown: a client killed with SIGKILL while holding memory leaves nothing behind.
func TestKillTeardown(t *testing.T) {
	mnt, d := mountDriver(t, "mi210")
	child := startHold(t, mnt)
	if st := d.Stats(); st["processes"] != 1 || st["bos"] != 1 {
		t.Errorf("while the child runs: %v", st)
	}
	used := filepath.Join(mnt, "sys/devices/virtual/kfd/kfd/topology/nodes/1/mem_banks/0/used_memory")
	if b, _ := os.ReadFile(used); string(b) != "1048576\n" {
		t.Errorf("used_memory with 1 MiB of VRAM allocated: %q", b)
	}
	child.Process.Kill()
	child.Wait()
	waitStats(t, d, 0)
	if b, _ := os.ReadFile(used); string(b) != "0\n" {
		t.Errorf("used_memory after the client died: %q (stale kernel cache?)", b)
	}
}

// TestAQLBarrierThroughMount drives a queue the way ROCr does: ring and signals in a GTT BO mapped
// through the render node (FUSE passthrough), the doorbell page mapped through dev/kfd, packets
// published with a release store, completion observed in memory and through an event.
func TestAQLBarrierThroughMount(t *testing.T) {
	mnt, d := mountDriver(t, "mi210")
	c, err := openClient(mnt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close) // before the mount goes: a client fd left open at exit would wait on a dead server
	// kfd_queue_buffer_get: the ring, and the page of each ring pointer, are whole BOs. Here: the
	// ring at va, the read and write pointers in the page at va+0x8000, signals at va+0x9000.
	const va = 0x100000000
	var handles []uint64
	var views [3][]byte
	for i, size := range []uint64{4096, 4096, 4096} {
		h, m, err := c.alloc(va+[]uint64{0, 0x8000, 0x9000}[i], size, abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT)
		if err != nil {
			t.Fatal(err)
		}
		handles, views[i] = append(handles, h), m
	}
	// view returns the CPU bytes at va+off.
	view := func(off int) []byte {
		switch {
		case off < 0x8000:
			return views[0][off:]
		case off < 0x9000:
			return views[1][off-0x8000:]
		}
		return views[2][off-0x9000:]
	}
	ph, _, err := c.alloc(0x200000000, 4096*8, abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT)
	if err != nil {
		t.Fatal(err)
	}
	ev := abi.CreateEventArgs{EventPageOffset: ph, EventType: abi.KFD_IOC_EVENT_SIGNAL, AutoReset: 1}
	if e := ioctl(c.kfd, abi.AMDKFD_IOC_CREATE_EVENT, &ev); e != 0 {
		t.Fatalf("CREATE_EVENT: %v", e)
	}
	const ring, rptr, wptr, sig, dep = 0, 0x8000, 0x8008, 0x9000, 0x9040
	u64 := func(off int) *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&view(off)[0])) }
	u64(sig + 8).Store(2)                                   // completion signal value
	u64(sig + 16).Store(0x200000000 + 8*uint64(ev.EventID)) // event mailbox
	u64(sig + 24).Store(uint64(ev.EventID))
	u64(dep + 8).Store(1) // dependency, released later by the CPU
	// kfd_queue_acquire_buffers: the EOP buffer and the context save area are mapped BOs of the
	// sizes the node requires.
	eop, ctl, cwsr, total, _ := d.QueueBufferSizes(c.gpu)
	const eopVA, cwsrVA = 0x300000000, 0x400000000
	if _, _, err := c.alloc(eopVA, uint64(eop), abi.KFD_IOC_ALLOC_MEM_FLAGS_VRAM); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.alloc(cwsrVA, total, abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT); err != nil {
		t.Fatal(err)
	}
	q := abi.CreateQueueArgs{RingBaseAddress: va + ring, RingSize: 4096, GPUID: c.gpu, QueueType: abi.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
		QueuePercentage: 100, ReadPointerAddress: va + rptr, WritePointerAddress: va + wptr,
		EOPBufferAddress: eopVA, EOPBufferSize: uint64(eop), CtxSaveRestoreAddress: cwsrVA, CtxSaveRestoreSize: cwsr, CtlStackSize: ctl}
	if e := ioctl(c.kfd, abi.AMDKFD_IOC_CREATE_QUEUE, &q); e != 0 {
		t.Fatalf("CREATE_QUEUE: %v", e)
	}
	const slice = 8192
	bell, err := unix.Mmap(c.kfd, int64(q.DoorbellOffset&^(slice-1)), slice, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatalf("mmap doorbell: %v", err)
	}
	doorbell := (*atomic.Uint64)(unsafe.Pointer(&bell[q.DoorbellOffset&(slice-1)]))
	submit := func(idx int, deps ...uint64) {
		p := view(ring + 64*idx)[:64]
		for i := 4; i < 64; i++ {
			p[i] = 0
		}
		for i, s := range deps {
			binary.LittleEndian.PutUint64(p[8+8*i:], s)
		}
		binary.LittleEndian.PutUint64(p[56:], va+sig)
		// header: BARRIER_AND, barrier bit, system-scope acquire and release fences.
		hdr := uint32(3 | 1<<8 | 2<<9 | 2<<11)
		(*atomic.Uint32)(unsafe.Pointer(&p[0])).Store(hdr)
		u64(wptr).Store(uint64(idx + 1))
		doorbell.Store(uint64(idx))
	}
	waitFor := func(what string, cond func() bool) {
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	submit(0)
	waitFor("first completion", func() bool { return u64(sig+8).Load() == 1 })
	if u64(rptr).Load() != 1 || binary.LittleEndian.Uint16(view(ring)) != 1 {
		t.Errorf("read index %d, slot header %d", u64(rptr).Load(), binary.LittleEndian.Uint16(view(ring)))
	}
	// The completion raised the event through its mailbox: the wait completes without SET_EVENT.
	evd := make([]byte, 48)
	binary.LittleEndian.PutUint32(evd[40:], ev.EventID)
	w := abi.WaitEventsArgs{EventsPtr: uint64(uintptr(unsafe.Pointer(&evd[0]))), NumEvents: 1, Timeout: 1000}
	if e := ioctl(c.kfd, abi.AMDKFD_IOC_WAIT_EVENTS, &w); e != 0 || w.WaitResult != abi.KFD_IOC_WAIT_RESULT_COMPLETE {
		t.Errorf("event after completion: %v result %d", e, w.WaitResult)
	}
	// A barrier-AND on an unsignalled dependency waits until the CPU releases it.
	submit(1, va+dep)
	time.Sleep(100 * time.Millisecond)
	if u64(sig+8).Load() != 1 {
		t.Fatal("barrier completed before its dependency")
	}
	u64(dep + 8).Store(0)
	waitFor("dependent completion", func() bool { return u64(sig+8).Load() == 0 })
	if e := ioctl(c.kfd, abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: q.QueueID}); e != 0 {
		t.Errorf("DESTROY_QUEUE: %v", e)
	}
	unix.Munmap(bell)
	for i, h := range handles {
		unix.Munmap(views[i])
		if err := c.free(h); err != nil {
			t.Error(err)
		}
	}
	c.close()
	waitStats(t, d, 0)
}

// TestManyWaitersDoNotStarve: 128 threads block in WAIT_EVENTS through the mount; other ioctls are
// still served at once, and one SET_EVENT releases every waiter.
func TestManyWaitersDoNotStarve(t *testing.T) {
	mnt, _ := mountDriver(t, "mi210")
	c, err := openClient(mnt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	ph, pmem, err := c.alloc(0x200000000, 4096*8, abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(pmem) })
	ev := abi.CreateEventArgs{EventPageOffset: ph, EventType: abi.KFD_IOC_EVENT_SIGNAL, AutoReset: 0}
	if e := ioctl(c.kfd, abi.AMDKFD_IOC_CREATE_EVENT, &ev); e != 0 {
		t.Fatalf("CREATE_EVENT: %v", e)
	}
	const n = 128
	results := make(chan error, n)
	// The event arrays are on the heap (captured by the goroutines): the driver reads them by
	// address, and a goroutine stack may move while a call is being set up.
	evds := make([]byte, 48*n)
	for i := 0; i < n; i++ {
		go func() {
			evd := evds[48*i : 48*i+48]
			binary.LittleEndian.PutUint32(evd[40:], ev.EventID)
			w := abi.WaitEventsArgs{EventsPtr: uint64(uintptr(unsafe.Pointer(&evd[0]))), NumEvents: 1, Timeout: 0xffffffff}
			e := ioctl(c.kfd, abi.AMDKFD_IOC_WAIT_EVENTS, &w)
			runtime.KeepAlive(evds) // the driver reads it through its address only
			switch {
			case e != 0:
				results <- fmt.Errorf("WAIT_EVENTS: %v", e)
			case w.WaitResult != abi.KFD_IOC_WAIT_RESULT_COMPLETE:
				results <- fmt.Errorf("wait result %d", w.WaitResult)
			default:
				results <- nil
			}
		}()
	}
	time.Sleep(200 * time.Millisecond) // let the waiters block
	start := time.Now()
	for i := 0; i < 100; i++ {
		var v abi.GetVersionArgs
		if e := ioctl(c.kfd, abi.AMDKFD_IOC_GET_VERSION, &v); e != 0 {
			t.Fatalf("GET_VERSION with %d waiters: %v", n, e)
		}
	}
	// Starvation would be the serve loops all taken by waiters: ioctls then wait for SET_EVENT
	// below, which never comes. The bound is loose (a loaded 2-core machine took 2.2 s once).
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("100 ioctls took %v with %d waiters blocked", d, n)
	}
	select {
	case err := <-results:
		t.Fatalf("a waiter returned before SET_EVENT: %v", err)
	default:
	}
	if e := ioctl(c.kfd, abi.AMDKFD_IOC_SET_EVENT, &abi.SetEventArgs{EventID: ev.EventID}); e != 0 {
		t.Fatalf("SET_EVENT: %v", e)
	}
	for i := 0; i < n; i++ {
		select {
		case err := <-results:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of %d waiters still blocked after SET_EVENT", n-i, n)
		}
	}
}

// TestConcurrentSysfsReads: many readers of the dynamic sysfs attributes at once (what several
// processes starting at the same moment do) always get the text, never page padding.
func TestConcurrentSysfsReads(t *testing.T) {
	testenv.NeedMount(t)
	sys, _ := topology.Profile("mi210")
	mnt := filepath.Join(t.TempDir(), "mnt")
	srv, err := Mount(mnt, Options{System: sys, Device: kfd.New(sys, nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Unmount()
	// VRAM accounting changes invalidate used_memory's cached page again and again, so every
	// round of readers races a fresh page-cache fill.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				sys.UsedMemoryChanged()
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
	gen := filepath.Join(mnt, "sys/devices/virtual/kfd/kfd/topology/generation_id")
	used := filepath.Join(mnt, "sys/devices/virtual/kfd/kfd/topology/nodes/1/mem_banks/0/used_memory")
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				for _, p := range []string{gen, used} {
					b, err := os.ReadFile(p)
					if err != nil || len(b) == 0 || len(b) > 32 || b[len(b)-1] != '\n' || bytes.IndexByte(b, 0) >= 0 {
						select {
						case errs <- fmt.Sprintf("%s: %q %v", p, b[:min(len(b), 40)], err):
						default:
						}
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestBindMountedDeviceFile: a bind mount of the device file itself (mount --bind MNT/dev/kfd
// FILE, the container `-v` habit) pins the inode the mount command looked up; opens through it
// fail with ESTALE and the daemon says once, clearly, what happened and what to do instead.
func TestBindMountedDeviceFile(t *testing.T) {
	testenv.NeedMount(t)
	if _, err := exec.LookPath("mount"); err != nil {
		t.Skip("mount not installed (util-linux)")
	}
	sys, err := topology.Profile("mi210")
	if err != nil {
		t.Fatal(err)
	}
	var logBuf lockedLog
	log := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	dir := filepath.Join(t.TempDir(), "mnt")
	srv, err := Mount(dir, Options{System: sys, Device: kfd.New(sys, log), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Unmount() })
	target := filepath.Join(t.TempDir(), "kfd")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", filepath.Join(dir, "dev/kfd"), target).CombinedOutput(); err != nil {
		t.Fatalf("mount --bind: %v\n%s", err, out)
	}
	t.Cleanup(func() { unix.Unmount(target, unix.MNT_DETACH) })
	for range 2 {
		f, err := os.OpenFile(target, os.O_RDWR, 0)
		if err == nil {
			f.Close()
			t.Fatal("open through the bind-mounted device file succeeded")
		}
		if !errors.Is(err, syscall.ESTALE) {
			t.Fatalf("open: %v, want ESTALE", err)
		}
	}
	if n := strings.Count(logBuf.String(), "cannot be bind-mounted"); n != 1 {
		t.Fatalf("the daemon explained %d times, want once:\n%s", n, logBuf.String())
	}
	// What the message advises: a bind mount of the dev directory (made by a process that exits)
	// and a symlink to the device file in it.
	devDir := t.TempDir()
	if out, err := exec.Command("mount", "--bind", filepath.Join(dir, "dev"), devDir).CombinedOutput(); err != nil {
		t.Fatalf("mount --bind: %v\n%s", err, out)
	}
	t.Cleanup(func() { unix.Unmount(devDir, unix.MNT_DETACH) })
	link := filepath.Join(t.TempDir(), "kfd")
	if err := os.Symlink(filepath.Join(devDir, "kfd"), link); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(link, os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open through a bind of the dev directory: %v", err)
	}
	f.Close()
}

type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
