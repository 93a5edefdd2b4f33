package kfd

import (
	"encoding/binary"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// A driver's teardown (Close, the daemon's shutdown) leaves no descriptor behind: the test
// environment closes it, so that a fuzz target making one per input (FuzzDebugTrap) does not run
// out of descriptors. 40 environments with a debugger session each (as its inputs run), then the
// count of open files.
func TestDriverCloseLeavesNoDescriptors(t *testing.T) {
	count := func() int { d, _ := os.ReadDir("/proc/self/fd"); return len(d) }
	before := count()
	for range 40 {
		t.Run("env", func(t *testing.T) {
			e := newDbgEnv(t)
			e.runtime(abi.KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK)
			e.enable(^uint64(0))
			e.dbg(abi.KFD_IOC_DBG_TRAP_DISABLE, nil)
			e.d.ProcessExited(os.Getpid())
		})
	}
	// (internal/hrtimer keeps up to 8 stopped timers for reuse, a descriptor each)
	if after := count(); after > before+8 {
		t.Fatalf("%d open descriptors after 40 drivers, %d before", after, before)
	}
}

// A BO the client still maps keeps its bytes when the process is torn down (the daemon stopping,
// or the process's last kfd file closed), as on amdgpu, where the CPU mapping holds a reference
// to the BO: a signal the client waits on must not read 0 because the driver went away (seen as
// runtime/hsa TestDeviceGone's wait returning success). FREE of a BO while the process lives
// still gives its pages back (the client's stale view then reads zeros).
func TestTeardownKeepsClientMappings(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	e.d.mu.Lock()
	p := e.d.procs[e.c.tgid]
	e.d.mu.Unlock()
	alloc := func(va uint64) (abi.AllocMemoryOfGPUArgs, []byte) {
		a := abi.AllocMemoryOfGPUArgs{VAAddr: va, Size: 4096, GPUID: e.gpu, Flags: allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}
		if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
			t.Fatalf("ALLOC: %v", errno)
		}
		client, err := unix.Mmap(int(p.render.f.Fd()), int64(a.MmapOffset), 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Munmap(client) })
		binary.LittleEndian.PutUint64(client, 0x1234567887654321)
		return a, client
	}
	freed, fc := alloc(0x10000000)
	if errno := e.do(abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: freed.Handle}); errno != 0 {
		t.Fatalf("FREE: %v", errno)
	}
	if v := binary.LittleEndian.Uint64(fc); v != 0 {
		t.Errorf("a freed BO's pages read %#x through a stale client mapping: not given back", v)
	}
	_, kept := alloc(0x20000000)
	e.d.ProcessExited(e.c.tgid)
	if st := e.d.Stats(); st["processes"] != 0 {
		t.Fatalf("process not torn down: %v", st)
	}
	if v := binary.LittleEndian.Uint64(kept); v != 0x1234567887654321 {
		t.Errorf("a BO the client maps reads %#x after the teardown, want its value", v)
	}
}

// A WAIT_EVENTS blocked when its process is torn down (the daemon stopping under it) fails with
// ENODEV, "the driver went away", not with a FAIL result as if its event had been destroyed.
func TestTeardownEndsWaitsWithENODEV(t *testing.T) {
	e := newEnv(t, "mi210")
	id := e.signalEvent(false)
	eventData(e.c.mem, id)
	done := make(chan syscall.Errno, 1)
	var w abi.WaitEventsArgs
	go func() {
		w = abi.WaitEventsArgs{EventsPtr: e.c.base, NumEvents: 1, Timeout: 10000}
		done <- e.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w)
	}()
	for !sleeping(e) {
		time.Sleep(time.Millisecond)
	}
	e.d.ProcessExited(e.c.tgid)
	select {
	case errno := <-done:
		if errno != syscall.ENODEV {
			t.Errorf("WAIT_EVENTS under the teardown: %v (result %d), want ENODEV", errno, w.WaitResult)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WAIT_EVENTS still blocked 5 s after the teardown")
	}
}

// sleeping reports whether a WAIT_EVENTS of e's process is asleep.
func sleeping(e *env) bool {
	e.d.mu.Lock()
	p := e.d.procs[e.c.tgid]
	e.d.mu.Unlock()
	return p != nil && p.evt.sleeping.Load() > 0
}
