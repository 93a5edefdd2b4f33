package kfd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/cp"
	"github.com/kfdemu/kfdemu/gpu/shader"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/mmu"
	"golang.org/x/sys/unix"
)

// dbgCaller is a caller whose fds are the test's own (GetFD dups them), which can be interrupted
// and can return a positive result.
type dbgCaller struct {
	*fakeCaller
	intr chan struct{}
	ret  int32
}

func (c *dbgCaller) GetFD(fd int) (*os.File, error) {
	n, err := unix.Dup(fd)
	if err != nil {
		return nil, ErrBadFD
	}
	return os.NewFile(uintptr(n), "dup"), nil
}
func (c *dbgCaller) Interrupted() <-chan struct{} { return c.intr }
func (c *dbgCaller) SetReturn(n int32)            { c.ret = n }

// dbgEnv is a process of the test's own pid (the debugger interface looks pids up in /proc) with a
// FIFO-like pipe for the debugger's events.
type dbgEnv struct {
	*env
	dc   *dbgCaller
	r, w *os.File
	wfd  int // w's descriptor (os.File.Fd would make the pipe blocking)
}

func newDbgEnv(t *testing.T) *dbgEnv { return newDbgEnvOn(t, "mi210") }

func newDbgEnvOn(t *testing.T, profile string) *dbgEnv {
	e := newEnv(t, profile).peer(os.Getpid())
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	de := &dbgEnv{env: e, dc: &dbgCaller{fakeCaller: e.c}, r: r, w: w}
	if raw, err := w.SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) { de.wfd = int(fd) })
	}
	return de
}

func (e *dbgEnv) dbg(op uint32, v any) (syscall.Errno, *abi.DbgTrapArgs) {
	a := abi.DbgTrapArgs{Pid: uint32(os.Getpid()), Op: op}
	if v != nil {
		encode(a.Union[:], v)
	}
	buf := make([]byte, abi.IOCSize(abi.AMDKFD_IOC_DBG_TRAP))
	encode(buf, &a)
	e.dc.ret = 0
	errno := e.f.Ioctl(e.dc, abi.AMDKFD_IOC_DBG_TRAP, buf)
	decode(buf, &a)
	if v != nil {
		decode(a.Union[:], v)
	}
	return errno, &a
}

func (e *dbgEnv) runtime(mode uint32) syscall.Errno {
	buf := make([]byte, abi.IOCSize(abi.AMDKFD_IOC_RUNTIME_ENABLE))
	encode(buf, &abi.RuntimeEnableArgs{RDebug: 0x1234, ModeMask: mode})
	return e.f.Ioctl(e.dc, abi.AMDKFD_IOC_RUNTIME_ENABLE, buf)
}

// events reads what the debugger's file holds (nonblocking: os.File.Fd would make it blocking).
func (e *dbgEnv) events() int {
	b := make([]byte, 64)
	n := 0
	if raw, err := e.r.SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) { n, _ = unix.Read(int(fd), b) })
	}
	return max(n, 0)
}

func (e *dbgEnv) enable(mask uint64) abi.RuntimeInfo {
	e.t.Helper()
	rinfo := e.c.base + 0x800
	en := abi.DbgTrapEnableArgs{ExceptionMask: mask, RInfoPtr: rinfo, RInfoSize: 16, DbgFD: uint32(e.wfd)}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_ENABLE, &en); errno != 0 || en.RInfoSize != 16 {
		e.t.Fatalf("ENABLE: %v, rinfo_size %d", errno, en.RInfoSize)
	}
	var ri abi.RuntimeInfo
	b := make([]byte, 16)
	e.c.ReadMemory(rinfo, b)
	decode(b, &ri)
	return ri
}

// TestDebugTrapSelf: a process debugging itself (kfd_ioctl_set_debug_trap allows target == p):
// attach reports the runtime state, a new queue raises EC_QUEUE_NEW, a trap handler's interrupt
// EC_QUEUE_WAVE_TRAP on the queue with that doorbell, each subscribed raise writes a byte to the
// debugger's file, and the snapshots, suspend/resume, watch points, launch override and mode,
// flags, exception info and a held memory violation behave as amdkfd's; DISABLE ends it all.
func TestDebugTrapSelf(t *testing.T) {
	e := newDbgEnv(t)
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT, nil); errno != syscall.EINVAL {
		t.Fatalf("op before ENABLE: %v", errno)
	}
	a := abi.DbgTrapArgs{Pid: 1 << 30, Op: abi.KFD_IOC_DBG_TRAP_ENABLE}
	buf := make([]byte, 32)
	encode(buf, &a)
	if errno := e.f.Ioctl(e.dc, abi.AMDKFD_IOC_DBG_TRAP, buf); errno != syscall.ESRCH {
		t.Fatalf("no such pid: %v", errno)
	}
	if errno := e.runtime(abi.KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK | abi.KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK); errno != 0 {
		t.Fatalf("RUNTIME_ENABLE: %v", errno)
	}
	if errno := e.runtime(abi.KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK); errno != syscall.EBUSY {
		t.Fatalf("second RUNTIME_ENABLE: %v", errno)
	}
	all := abi.KFD_EC_MASK(abi.EC_QUEUE_NEW) | abi.KFD_EC_MASK(abi.EC_QUEUE_WAVE_TRAP) | abi.KFD_EC_MASK(abi.EC_DEVICE_MEMORY_VIOLATION)
	if ri := e.enable(all); ri.RuntimeState != abi.DEBUG_RUNTIME_STATE_ENABLED || ri.TTMPSetup != 1 || ri.RDebug != 0x1234 {
		t.Fatalf("runtime info %+v", ri)
	}
	en := abi.DbgTrapEnableArgs{DbgFD: uint32(e.wfd)}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_ENABLE, &en); errno != syscall.EALREADY {
		t.Fatalf("second ENABLE: %v", errno)
	}
	if errno, _ := e.dbg(99, nil); errno != syscall.EINVAL {
		t.Fatalf("op 99: %v", errno)
	}
	// A new queue: EC_QUEUE_NEW on it, one byte.
	qa := e.queueArgs(0x600000000)
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &qa); errno != 0 {
		t.Fatal(errno)
	}
	if n := e.events(); n != 1 {
		t.Fatalf("%d event bytes after CREATE_QUEUE", n)
	}
	q := abi.DbgTrapQueryDebugEventArgs{ExceptionMask: abi.KFD_EC_MASK(abi.EC_QUEUE_NEW)}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT, &q); errno != 0 || q.ExceptionMask != abi.KFD_EC_MASK(abi.EC_QUEUE_NEW) ||
		q.QueueID != qa.QueueID || q.GPUID != e.gpu {
		t.Fatalf("QUERY_DEBUG_EVENT: %v %+v", errno, q)
	}
	q = abi.DbgTrapQueryDebugEventArgs{}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT, &q); errno != syscall.EAGAIN {
		t.Fatalf("nothing pending: %v %+v", errno, q)
	}
	// The trap handler's interrupt (doorbell id | EC mask << 10, sent privileged).
	p := e.d.procs[os.Getpid()]
	pq := p.queues[qa.QueueID]
	if !p.dbgInterrupt(pq.pd, pq.doorbellID|0x800) || e.events() != 1 {
		t.Fatal("the trap interrupt did not reach the debugger")
	}
	info := abi.DbgTrapQueryExceptionInfoArgs{InfoPtr: e.c.base + 0x900, InfoSize: 64, SourceID: qa.QueueID, ExceptionCode: abi.EC_QUEUE_WAVE_TRAP}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO, &info); errno != 0 || info.InfoSize != 0 {
		t.Fatalf("QUERY_EXCEPTION_INFO wave trap: %v %+v", errno, info)
	}
	info = abi.DbgTrapQueryExceptionInfoArgs{InfoPtr: e.c.base + 0x900, SourceID: qa.QueueID, ExceptionCode: abi.EC_QUEUE_WAVE_ABORT}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO, &info); errno != syscall.ENODATA {
		t.Fatalf("QUERY_EXCEPTION_INFO of nothing: %v", errno)
	}
	// Queue snapshot: the count first, then the entry (the trap is cleared by its mask).
	snap := abi.DbgTrapSnapshotArgs{EntrySize: 64}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT, &snap); errno != 0 || snap.NumEntries != 1 || snap.EntrySize != 64 {
		t.Fatalf("queue snapshot count: %v %+v", errno, snap)
	}
	snap = abi.DbgTrapSnapshotArgs{ExceptionMask: all, SnapshotBufPtr: e.c.base + 0x1000, NumEntries: 4, EntrySize: 80}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT, &snap); errno != 0 || snap.NumEntries != 1 {
		t.Fatalf("queue snapshot: %v %+v", errno, snap)
	}
	var qe abi.QueueSnapshotEntry
	b := make([]byte, 64)
	e.c.ReadMemory(e.c.base+0x1000, b)
	decode(b, &qe)
	if qe.ExceptionStatus != abi.KFD_EC_MASK(abi.EC_QUEUE_WAVE_TRAP) || qe.QueueID != qa.QueueID || qe.GPUID != e.gpu ||
		qe.RingBaseAddress != qa.RingBaseAddress || qe.QueueType != abi.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL || qe.RingSize != 4096 {
		t.Fatalf("queue entry %+v", qe)
	}
	// Device snapshot.
	dev := abi.DbgTrapSnapshotArgs{SnapshotBufPtr: e.c.base + 0x2000, NumEntries: 1, EntrySize: 120}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT, &dev); errno != 0 || dev.NumEntries != 1 || dev.EntrySize != 120 {
		t.Fatalf("device snapshot: %v %+v", errno, dev)
	}
	var de abi.DbgDeviceInfoEntry
	b = make([]byte, 120)
	e.c.ReadMemory(e.c.base+0x2000, b)
	decode(b, &de)
	if de.GPUID != e.gpu || de.GfxTargetVersion != 90010 || de.Capability&0x20000000 == 0 || de.DebugProp != 0x1d6 || de.GPUVMLimit == 0 {
		t.Fatalf("device entry %+v", de)
	}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT, &abi.DbgTrapSnapshotArgs{NumEntries: 1, EntrySize: 120}); errno != syscall.EINVAL {
		t.Fatalf("device snapshot without a buffer: %v", errno)
	}
	// Suspend and resume: the count is the syscall's result; a missing queue comes back INVALID.
	ids := e.c.base + 0x3000
	putIDs := func(v ...uint32) {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], x)
		}
		e.c.WriteMemory(ids, b)
	}
	getID := func(i int) uint32 {
		b := make([]byte, 4)
		e.c.ReadMemory(ids+uint64(4*i), b)
		return binary.LittleEndian.Uint32(b)
	}
	// A new queue (EC_QUEUE_NEW pending) cannot be suspended: INVALID, a count of 0.
	qb := e.queueArgs(0x700000000)
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &qb); errno != 0 {
		t.Fatal(errno)
	}
	e.events()
	putIDs(qb.QueueID)
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SUSPEND_QUEUES, &abi.DbgTrapSuspendQueuesArgs{QueueArrayPtr: ids, NumQueues: 1}); errno != 0 ||
		e.dc.ret != 0 || getID(0) != qb.QueueID|abi.KFD_DBG_QUEUE_INVALID_MASK {
		t.Fatalf("SUSPEND of a new queue: %v ret %d id %#x", errno, e.dc.ret, getID(0))
	}
	if errno := e.do(abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: qb.QueueID}); errno != 0 {
		t.Fatal(errno)
	}
	e.events()
	putIDs(qa.QueueID, 77)
	sus := abi.DbgTrapSuspendQueuesArgs{QueueArrayPtr: ids, NumQueues: 2}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SUSPEND_QUEUES, &sus); errno != 0 || e.dc.ret != 1 ||
		getID(0) != qa.QueueID || getID(1) != 77|abi.KFD_DBG_QUEUE_INVALID_MASK {
		t.Fatalf("SUSPEND: %v ret %d ids %#x %#x", errno, e.dc.ret, getID(0), getID(1))
	}
	p.mu.Lock()
	par := pq.params()
	p.mu.Unlock()
	if !par.Evicted {
		t.Fatal("a suspended queue stays on the hardware")
	}
	putIDs(qa.QueueID)
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_RESUME_QUEUES, &abi.DbgTrapResumeQueuesArgs{QueueArrayPtr: ids, NumQueues: 1}); errno != 0 || e.dc.ret != 1 {
		t.Fatalf("RESUME: %v ret %d", errno, e.dc.ret)
	}
	// Four watch points per device, then ENOMEM; a foreign id is EINVAL; an unknown GPU ENODEV.
	for i := 0; i < 4; i++ {
		w := abi.DbgTrapSetNodeAddressWatchArgs{Address: 0x1000, Mask: 0xffffffff, GPUID: e.gpu}
		if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH, &w); errno != 0 || w.ID != uint32(i) {
			t.Fatalf("watch %d: %v id %d", i, errno, w.ID)
		}
	}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH, &abi.DbgTrapSetNodeAddressWatchArgs{GPUID: e.gpu}); errno != syscall.ENOMEM {
		t.Fatalf("fifth watch: %v", errno)
	}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH, &abi.DbgTrapClearNodeAddressWatchArgs{GPUID: e.gpu, ID: 4}); errno != syscall.EINVAL {
		t.Fatalf("clear id 4: %v", errno)
	}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH, &abi.DbgTrapClearNodeAddressWatchArgs{GPUID: 7, ID: 0}); errno != syscall.ENODEV {
		t.Fatalf("clear on no GPU: %v", errno)
	}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH, &abi.DbgTrapClearNodeAddressWatchArgs{GPUID: e.gpu, ID: 2}); errno != 0 {
		t.Fatalf("clear 2: %v", errno)
	}
	// Launch override (aldebaran: nine exception bits, no trap on wave start/end), mode, flags.
	ov := abi.DbgTrapSetWaveLaunchOverrideArgs{EnableMask: abi.KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START, SupportRequestMask: abi.KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE, &ov); errno != syscall.EACCES || ov.SupportRequestMask != 0x1ff {
		t.Fatalf("override wave start: %v %+v", errno, ov)
	}
	for _, prev := range []uint32{0, 0x80} {
		ov = abi.DbgTrapSetWaveLaunchOverrideArgs{EnableMask: 0x80, SupportRequestMask: 0x80}
		if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE, &ov); errno != 0 || ov.EnableMask != prev {
			t.Fatalf("override address watch: %v %+v, want previous %#x", errno, ov, prev)
		}
	}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE, &abi.DbgTrapSetWaveLaunchOverrideArgs{OverrideMode: 2}); errno != syscall.EPERM {
		t.Fatalf("override mode 2: %v", errno)
	}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE, &abi.DbgTrapSetWaveLaunchModeArgs{LaunchMode: 2}); errno != syscall.EINVAL {
		t.Fatalf("launch mode 2: %v", errno)
	}
	fl := abi.DbgTrapSetFlagsArgs{Flags: abi.KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SET_FLAGS, &fl); errno != 0 || fl.Flags != 0 {
		t.Fatalf("SET_FLAGS: %v %+v", errno, fl)
	}
	// A memory violation is held for the debugger: the runtime's MEMORY events are not set.
	ev := abi.CreateEventArgs{EventType: abi.KFD_IOC_EVENT_MEMORY, NodeID: 1}
	if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &ev); errno != 0 {
		t.Fatal(errno)
	}
	p.raiseMemoryException(e.gpu, nil, 0x123456789000, true)
	if e.events() != 1 {
		t.Fatal("memory violation not announced")
	}
	p.mu.Lock()
	signalled := p.events[ev.EventID].signaled
	p.mu.Unlock()
	if signalled {
		t.Fatal("a held memory violation reached the runtime")
	}
	q = abi.DbgTrapQueryDebugEventArgs{}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT, &q); errno != 0 || q.GPUID != e.gpu || q.QueueID != 0 ||
		q.ExceptionMask != abi.KFD_EC_MASK(abi.EC_DEVICE_MEMORY_VIOLATION)|abi.KFD_EC_MASK(abi.EC_DEVICE_QUEUE_DELETE) {
		t.Fatalf("memory violation event (the device's whole status: the deleted queue too): %v %+v", errno, q)
	}
	info = abi.DbgTrapQueryExceptionInfoArgs{InfoPtr: e.c.base + 0x900, InfoSize: 64, SourceID: e.gpu, ExceptionCode: abi.EC_DEVICE_MEMORY_VIOLATION, ClearException: 1}
	var md abi.HSAMemoryExceptionData
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO, &info); errno != 0 || info.InfoSize != 32 {
		t.Fatalf("memory violation info: %v %+v", errno, info)
	}
	b = make([]byte, 32)
	e.c.ReadMemory(e.c.base+0x900, b)
	decode(b, &md)
	if md.VA != 0x123456789000 || md.GPUID != e.gpu || md.Failure.NotPresent != 1 {
		t.Fatalf("memory violation data %+v", md)
	}
	// The debugger forwards it: the runtime's event is set.
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT, &abi.DbgTrapSendRuntimeEventArgs{ExceptionMask: abi.KFD_EC_MASK(abi.EC_DEVICE_MEMORY_VIOLATION), GPUID: 7}); errno != syscall.ENODEV {
		t.Fatalf("forward to no GPU: %v", errno)
	}
	// DISABLE: everything ends, the watch points are free again.
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_DISABLE, nil); errno != 0 {
		t.Fatal(errno)
	}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT, nil); errno != syscall.EINVAL {
		t.Fatalf("op after DISABLE: %v", errno)
	}
	e.d.mu.Lock()
	wids := e.d.watchIDs[e.gpu]
	e.d.mu.Unlock()
	if wids != 0 {
		t.Fatalf("watch points left after DISABLE: %#x", wids)
	}
	if errno := e.do(abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: qa.QueueID}); errno != 0 {
		t.Fatal(errno)
	}
	if errno := e.runtime(0); errno != 0 {
		t.Fatalf("RUNTIME disable: %v", errno)
	}
}

// TestDebugRuntimeHandshake: with a debugger attached before the runtime, RUNTIME_ENABLE raises
// EC_PROCESS_RUNTIME and waits for the debugger's SEND_RUNTIME_EVENT of it; an interrupted wait
// returns EINTR and the next call resumes it; disabling does the same. Hardware operations need
// the runtime enabled (EPERM).
func TestDebugRuntimeHandshake(t *testing.T) {
	e := newDbgEnv(t)
	if ri := e.enable(abi.KFD_EC_MASK(abi.EC_PROCESS_RUNTIME)); ri.RuntimeState != abi.DEBUG_RUNTIME_STATE_DISABLED || ri.TTMPSetup != 0 {
		t.Fatalf("runtime info before the runtime %+v", ri)
	}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SET_FLAGS, &abi.DbgTrapSetFlagsArgs{}); errno != syscall.EPERM {
		t.Fatalf("hardware op without the runtime: %v", errno)
	}
	done := make(chan syscall.Errno, 1)
	go func() { done <- e.runtime(abi.KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK) }()
	ack := func() {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); e.events() == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no EC_PROCESS_RUNTIME byte")
			}
		}
		q := abi.DbgTrapQueryDebugEventArgs{ExceptionMask: abi.KFD_EC_MASK(abi.EC_PROCESS_RUNTIME)}
		if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT, &q); errno != 0 || q.ExceptionMask != abi.KFD_EC_MASK(abi.EC_PROCESS_RUNTIME) {
			t.Fatalf("runtime event: %v %+v", errno, q)
		}
		select {
		case errno := <-done:
			t.Fatalf("the runtime did not wait for the debugger (%v)", errno)
		case <-time.After(20 * time.Millisecond):
		}
		if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT, &abi.DbgTrapSendRuntimeEventArgs{ExceptionMask: abi.KFD_EC_MASK(abi.EC_PROCESS_RUNTIME)}); errno != 0 {
			t.Fatal(errno)
		}
	}
	ack()
	if errno := <-done; errno != 0 {
		t.Fatalf("RUNTIME_ENABLE: %v", errno)
	}
	if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SET_FLAGS, &abi.DbgTrapSetFlagsArgs{}); errno != 0 {
		t.Fatalf("hardware op with the runtime: %v", errno)
	}
	// Disable, interrupted once.
	e.dc.intr = make(chan struct{})
	close(e.dc.intr)
	if errno := e.runtime(0); errno != syscall.EINTR {
		t.Fatalf("interrupted disable: %v", errno)
	}
	e.dc.intr = nil
	go func() { done <- e.runtime(0) }()
	ack()
	if errno := <-done; errno != 0 {
		t.Fatalf("resumed disable: %v", errno)
	}
	// The session holds the process (kref_get) until DISABLE or the process's exit.
	e.d.ProcessExited(os.Getpid())
}

// TestDebugTrapNeedsPtrace: another process's debugging needs ptrace (EPERM), and a process with
// no KFD process is ESRCH.
func TestDebugTrapNeedsPtrace(t *testing.T) {
	e := newDbgEnv(t)
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	a := abi.DbgTrapArgs{Pid: uint32(cmd.Process.Pid), Op: abi.KFD_IOC_DBG_TRAP_ENABLE}
	buf := make([]byte, 32)
	encode(buf, &a)
	if errno := e.f.Ioctl(e.dc, abi.AMDKFD_IOC_DBG_TRAP, buf); errno != syscall.ESRCH {
		t.Fatalf("a process without KFD: %v", errno)
	}
	e.peer(cmd.Process.Pid)
	encode(buf, &a)
	if errno := e.f.Ioctl(e.dc, abi.AMDKFD_IOC_DBG_TRAP, buf); errno != syscall.EPERM {
		t.Fatalf("a process not traced: %v", errno)
	}
}

// FuzzDebugTrap: any DBG_TRAP operation and union from a debugger attached to itself is answered
// without a panic, a hang or a leak (the debugger's fd is always the test's pipe: a fuzzed fd
// number would be a dup of one of the fuzzing engine's own files).
func FuzzDebugTrap(f *testing.F) {
	f.Add(uint32(abi.KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT), make([]byte, 24))
	f.Add(uint32(abi.KFD_IOC_DBG_TRAP_SUSPEND_QUEUES), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0, 0, 2, 0, 0, 0})
	f.Add(uint32(abi.KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0, 0, 9, 0, 0, 0, 120})
	f.Fuzz(func(t *testing.T, op uint32, union []byte) {
		e := newDbgEnv(t)
		if errno := e.runtime(abi.KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK); errno != 0 {
			t.Fatal(errno)
		}
		e.enable(^uint64(0))
		a := abi.DbgTrapArgs{Pid: uint32(os.Getpid()), Op: op % 20}
		copy(a.Union[:], union)
		if a.Op == abi.KFD_IOC_DBG_TRAP_ENABLE {
			binary.LittleEndian.PutUint32(a.Union[20:], uint32(e.wfd))
		}
		buf := make([]byte, 32)
		encode(buf, &a)
		e.f.Ioctl(e.dc, abi.AMDKFD_IOC_DBG_TRAP, buf)
		e.dbg(abi.KFD_IOC_DBG_TRAP_DISABLE, nil)
		e.d.ProcessExited(os.Getpid())
	})
}

// TestDebugAttachToTracee: a ptrace parent attaches to a tracee that never opened the device: the
// driver creates its KFD process (kfd_create_process on the debugger's behalf), the session holds
// it, and the tracee's exit tears it down.
func TestDebugAttachToTracee(t *testing.T) {
	runtime.LockOSThread() // the tracer is this thread
	defer runtime.UnlockOSThread()
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	pid := cmd.Process.Pid
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	e := newDbgEnv(t)
	before := e.d.Stats()["processes"]
	en := abi.DbgTrapEnableArgs{RInfoPtr: e.c.base + 0x800, RInfoSize: 16, DbgFD: uint32(e.wfd)}
	a := abi.DbgTrapArgs{Pid: uint32(pid), Op: abi.KFD_IOC_DBG_TRAP_ENABLE}
	encode(a.Union[:], &en)
	buf := make([]byte, 32)
	encode(buf, &a)
	if errno := e.f.Ioctl(e.dc, abi.AMDKFD_IOC_DBG_TRAP, buf); errno != 0 {
		t.Fatalf("ENABLE of the tracee: %v", errno)
	}
	if n := e.d.Stats()["processes"]; n != before+1 {
		t.Fatalf("%d KFD processes after attaching to a tracee without one, want %d", n, before+1)
	}
	cmd.Process.Kill()
	cmd.Wait()
	for deadline := time.Now().Add(5 * time.Second); e.d.Stats()["processes"] != before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the tracee's KFD process outlived it")
		}
	}
}

// TestDebugFamilies: the launch override and SINGLE_MEM_OP follow the device family: MI100 (GC
// 9.4.1) has the global trap mask (address watch only, OR only: EINVAL for REPLACE; no precise
// memory operations: EACCES), MI300X (GC 9.4.3) per-VMID registers as MI210.
func TestDebugFamilies(t *testing.T) {
	for _, c := range []struct {
		profile string
		sup     uint32
		replace syscall.Errno
		flags   syscall.Errno
	}{
		{"mi100", abi.KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH, syscall.EINVAL, syscall.EACCES},
		{"mi300x", 0x1ff, 0, 0},
		{"mi210", 0x1ff, 0, 0},
	} {
		e := newDbgEnvOn(t, c.profile)
		if errno := e.runtime(abi.KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK); errno != 0 {
			t.Fatal(errno)
		}
		e.enable(0)
		ov := abi.DbgTrapSetWaveLaunchOverrideArgs{OverrideMode: abi.KFD_DBG_TRAP_OVERRIDE_REPLACE}
		if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE, &ov); errno != c.replace || ov.SupportRequestMask != c.sup {
			t.Errorf("%s: REPLACE: %v %+v", c.profile, errno, ov)
		}
		ov = abi.DbgTrapSetWaveLaunchOverrideArgs{EnableMask: 0x80, SupportRequestMask: 0x80}
		if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE, &ov); errno != 0 || ov.SupportRequestMask != c.sup {
			t.Errorf("%s: OR address watch: %v %+v", c.profile, errno, ov)
		}
		fl := abi.DbgTrapSetFlagsArgs{Flags: abi.KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP}
		if errno, _ := e.dbg(abi.KFD_IOC_DBG_TRAP_SET_FLAGS, &fl); errno != c.flags || fl.Flags != 0 {
			t.Errorf("%s: SINGLE_MEM_OP: %v %+v", c.profile, errno, fl)
		}
		e.dbg(abi.KFD_IOC_DBG_TRAP_DISABLE, nil)
	}
}

// The wave exception a queue error is reported as at KFD 1.13 follows the queue-inactive code's
// class: a failed dispatch (cp.ErrDispatchFailed, illegal instruction by default) that holds a
// GPUVM fault is no wave exception (the fault interrupt reports it), one that holds an
// unimplemented instruction is an illegal instruction.
func TestWaveException(t *testing.T) {
	failed := func(err error) error { return fmt.Errorf("%w: %w", cp.ErrDispatchFailed, err) }
	vm := &mmu.FaultError{Fault: mmu.Fault{VA: 0x1000, Kind: mmu.FaultNotPresent, Access: mmu.AccessWrite}}
	for _, c := range []struct {
		name string
		err  error
		want uint64
	}{
		{"GPUVM fault", failed(&shader.Fault{Addr: 0x1000, Write: true, Err: vm}), 0},
		{"CP fault", &cp.FaultError{VA: 0x1000, Op: "signal", Err: vm}, 0},
		{"unimplemented", failed(&shader.WaveError{Err: shader.ErrUnimplemented}), abi.KFD_EC_MASK(abi.EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION)},
		{"host failure", failed(errors.New("no shader")), abi.KFD_EC_MASK(abi.EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION)},
		{"llvm.trap", failed(&shader.TrapError{Code: 2}), abi.KFD_EC_MASK(abi.EC_QUEUE_WAVE_ABORT)},
		{"trap 3", failed(&shader.TrapError{Code: 3}), abi.KFD_EC_MASK(abi.EC_QUEUE_WAVE_TRAP)},
		{"malformed packet", cp.ErrMalformed, 0},
	} {
		if got := waveException(c.err); got != c.want {
			t.Errorf("%s: mask %#x, want %#x", c.name, got, c.want)
		}
	}
}

// Exceptions reported to the runtime at once (the CP's queue error and debugger threads'
// SEND_RUNTIME_EVENT) all land in the queue's error payload, each through a GPU window of its
// own: before, every report used the queue's own mmu.Port (the CP's, one goroutine's at a time)
// and read, OR-ed and wrote the payload, so the race detector saw the Port shared and
// concurrent reports could lose each other's bits.
func TestRuntimeErrorPayloadConcurrent(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	const base, payloadVA = 0x600000000, 0x700000000
	qa, _ := e.aqlAt(base)
	e.alloc(payloadVA, 4096)
	ev := e.signalEvent(false)
	p := e.d.procs[e.c.tgid]
	hdr := p.boAt(e.gpu, base+0x100000).mem // kfd_context_save_area_header
	binary.LittleEndian.PutUint64(hdr[24:], payloadVA)
	binary.LittleEndian.PutUint32(hdr[32:], ev)
	var wg sync.WaitGroup
	for k := 0; k < 4; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := k; b < 64; b += 4 {
				p.queueErrorToRuntime(qa.QueueID, 1<<b)
			}
		}()
	}
	wg.Wait()
	if got := binary.LittleEndian.Uint64(p.boAt(e.gpu, payloadVA).mem); got != ^uint64(0) {
		t.Errorf("payload %#x, want every bit", got)
	}
}
