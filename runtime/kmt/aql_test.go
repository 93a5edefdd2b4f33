package kmt

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/runtime/internal/rttest"
	"golang.org/x/sys/unix"
)

// aqlRing is a client's view of one AQL queue for the tests: the ring, the amd_queue_t page and
// the doorbell, written the way ROCr's AqlQueue does.
type aqlRing struct {
	q          *Queue
	ring, amdq *Memory
}

// submit writes one packet (header last, with release semantics) and rings the doorbell.
func (r *aqlRing) submit(typ uint8, p aql.BarrierPacket) {
	b, rb := r.amdq.Bytes(), r.ring.Bytes()
	idx := Word64(b, aql.AMDQueueWriteDispatchIDOffset).Load()
	slot := int(idx%64) * 64
	var pkt [64]byte
	p.Encode(pkt[:])
	copy(rb[slot+4:slot+64], pkt[4:])
	Word64(b, aql.AMDQueueWriteDispatchIDOffset).Store(idx + 1)
	Word32(rb, slot).Store(uint32(aql.MakeHeader(typ, true, aql.FenceScopeSystem, aql.FenceScopeSystem)))
	r.q.RingDoorbell(idx)
}

func (r *aqlRing) readIndex() uint64 {
	return Word64(r.amdq.Bytes(), aql.AMDQueueReadDispatchIDOffset).Load()
}

// signals is a page of amd_signal_t (64 bytes each) mapped on the GPU.
type signals struct{ m *Memory }

func newSignals(t *testing.T, d *Device, g *GPU) signals {
	t.Helper()
	m, err := d.AllocGTT(g, 4096, Coherent)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Map(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Free() })
	return signals{m}
}

func (s signals) va(i int) uint64 { return s.m.VA + uint64(64*i) }
func (s signals) value(i int) int64 {
	return int64(Word64(s.m.Bytes(), 64*i+aql.SignalValueOffset).Load())
}
func (s signals) set(i int, v int64) {
	Word64(s.m.Bytes(), 64*i+aql.SignalValueOffset).Store(uint64(v))
}
func (s signals) event(i int, e *Event) {
	Word64(s.m.Bytes(), 64*i+aql.SignalMailboxOffset).Store(e.MailboxVA)
	Word32(s.m.Bytes(), 64*i+aql.SignalEventIDOffset).Store(e.TriggerData)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s%s", what, debugQueues())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// debugQueues returns the daemon's debugfs queue view (kfdemu mounts only) for failure messages.
func debugQueues() string {
	if debugRoot == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(debugRoot, "sys/kernel/debug/kfd/queues"))
	if err != nil {
		return ""
	}
	return "\nqueues:\n" + string(b)
}

// debugRoot is the device root of the running suite (set by open).
var debugRoot string

// testAQLChains: barrier-AND and barrier-OR packets on three queues form a chain that only the
// last submitted packet can start; nothing completes early and everything completes after it.
func testAQLChains(t *testing.T, root string) {
	d := open(t, root)
	g := d.GPUs()[0]
	var qs [3]aqlRing
	for i := range qs {
		q, ring, amdq := aqlQueue(t, d, g)
		qs[i] = aqlRing{q, ring, amdq}
		t.Cleanup(func() { q.Destroy(); ring.Free(); amdq.Free() })
	}
	s := newSignals(t, d, g)
	const start, done1, done2, never, chainEnd = 0, 1, 2, 3, 4
	for i := range 5 {
		s.set(i, 1)
	}
	ev, err := d.CreateEvent(EventSignal, false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Destroy()
	s.event(chainEnd, ev)
	// queue 0: AND(start) -> done1; queue 1: OR(never, done1) -> done2; queue 0 again: AND(done1,
	// done2) -> chainEnd (behind the first packet on the same queue).
	qs[0].submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{DepSignal: [5]uint64{s.va(start)}, CompletionSignal: s.va(done1)})
	qs[1].submit(aql.PacketTypeBarrierOr, aql.BarrierPacket{DepSignal: [5]uint64{s.va(never), s.va(done1)}, CompletionSignal: s.va(done2)})
	qs[0].submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{DepSignal: [5]uint64{s.va(done1), s.va(done2)}, CompletionSignal: s.va(chainEnd)})
	time.Sleep(50 * time.Millisecond)
	if s.value(done1) != 1 || s.value(done2) != 1 || s.value(chainEnd) != 1 || qs[0].readIndex() != 0 || qs[1].readIndex() != 0 {
		t.Fatalf("chain moved before its start: done1 %d done2 %d end %d", s.value(done1), s.value(done2), s.value(chainEnd))
	}
	// queue 2 starts it: a barrier with no dependencies that completes "start".
	qs[2].submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{CompletionSignal: s.va(start)})
	if ok, err := ev.Wait(5 * time.Second); !ok || err != nil {
		t.Fatalf("chain end event: %v %v (done1 %d done2 %d)%s", ok, err, s.value(done1), s.value(done2), debugQueues())
	}
	if s.value(start) != 0 || s.value(done1) != 0 || s.value(done2) != 0 || s.value(chainEnd) != 0 || s.value(never) != 1 {
		t.Errorf("signals after the chain: %d %d %d %d never %d", s.value(start), s.value(done1), s.value(done2), s.value(chainEnd), s.value(never))
	}
	if qs[0].readIndex() != 2 || qs[1].readIndex() != 1 || qs[2].readIndex() != 1 {
		t.Errorf("read indices %d %d %d", qs[0].readIndex(), qs[1].readIndex(), qs[2].readIndex())
	}
}

// testAQLErrors: the error paths a client meets, each ending as amdkfd and the CP end them. Each
// case has a device (a kfd process) of its own: a GPUVM fault evicts the process's queues on the
// GPU for good (kfd_dqm_evict_pasid), so the two faulting cases come last, and the suite is the
// last of suites (on a real amdkfd the process outlives its files).
func testAQLErrors(t *testing.T, root string) {
	t.Run("malformed packet", func(t *testing.T) {
		d := open(t, root)
		g := d.GPUs()[0]
		q, ring, amdq := aqlQueue(t, d, g)
		defer func() { q.Destroy(); ring.Free(); amdq.Free() }()
		r := aqlRing{q, ring, amdq}
		s := newSignals(t, d, g)
		ev, err := d.CreateEvent(EventSignal, false, false)
		if err != nil {
			t.Fatal(err)
		}
		defer ev.Destroy()
		s.set(0, 0)
		s.event(0, ev)
		Word64(amdq.Bytes(), aql.AMDQueueInactiveSignalOffset).Store(s.va(0))
		r.submit(7, aql.BarrierPacket{}) // packet type 7 is reserved
		if ok, err := ev.Wait(5 * time.Second); !ok || err != nil {
			t.Fatalf("queue_inactive_signal event: %v %v%s", ok, err, debugQueues())
		}
		if v := s.value(0); v != 32 { // SQ_WAVE... invalid packet format, as ROCr decodes it
			t.Errorf("queue_inactive_signal value %#x, want 0x20 (invalid packet format)", v)
		}
	})

	t.Run("ring unmapped under a live queue", func(t *testing.T) {
		d := open(t, root)
		g := d.GPUs()[0]
		q, ring, amdq := aqlQueue(t, d, g)
		defer func() { q.Destroy(); ring.Free(); amdq.Free() }()
		// kfd_queue_acquire_buffers holds the ring: UNMAP and FREE are EBUSY until DESTROY_QUEUE.
		if err := ring.Unmap(); !errors.Is(err, syscall.EBUSY) {
			t.Fatalf("UNMAP of a live queue's ring: %v, want EBUSY", err)
		}
		r := aqlRing{q, ring, amdq}
		s := newSignals(t, d, g)
		s.set(0, 1)
		r.submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{CompletionSignal: s.va(0)})
		waitUntil(t, "the queue to go on after the refused UNMAP", func() bool { return s.value(0) == 0 })
	})

	t.Run("kernel that never ends", func(t *testing.T) {
		d := open(t, root)
		g := d.GPUs()[0]
		q, ring, amdq := aqlQueue(t, d, g)
		code := dispatchCode(t, d, g, &aqlRing{q, ring, amdq}, []uint32{0xBF82FFFF}) // s_branch -1
		defer code.Free()
		time.Sleep(20 * time.Millisecond)
		begin := time.Now()
		if err := q.Destroy(); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(begin); el > 2*time.Second {
			t.Errorf("DESTROY_QUEUE of a queue running a never-ending kernel took %v", el)
		}
		ring.Free()
		amdq.Free()
	})

	t.Run("destroy with packets in flight", func(t *testing.T) {
		d := open(t, root)
		g := d.GPUs()[0]
		q, ring, amdq := aqlQueue(t, d, g)
		r := aqlRing{q, ring, amdq}
		s := newSignals(t, d, g)
		s.set(0, 1)
		for range 3 {
			r.submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{DepSignal: [5]uint64{s.va(0)}})
		}
		time.Sleep(10 * time.Millisecond)
		begin := time.Now()
		if err := q.Destroy(); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(begin); el > time.Second {
			t.Errorf("Destroy took %v with a blocked barrier", el)
		}
		if r.readIndex() != 0 {
			t.Errorf("blocked barrier retired: read index %d", r.readIndex())
		}
		if err := ring.Free(); err != nil {
			t.Errorf("Free of the ring after Destroy: %v", err)
		}
		amdq.Free()
	})

	// faultDevice is a fault case's device, with a memory event (destroyed at the case's end).
	faultDevice := func(t *testing.T) (*Device, *GPU, *Event) {
		d := open(t, root)
		mem, err := d.CreateEvent(EventMemory, true, false)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mem.Destroy() })
		return d, d.GPUs()[0], mem
	}

	t.Run("unmapped completion signal", func(t *testing.T) {
		d, g, mem := faultDevice(t)
		q, ring, amdq := aqlQueue(t, d, g)
		defer func() { q.Destroy(); ring.Free(); amdq.Free() }()
		r := aqlRing{q, ring, amdq}
		const bad = 0x7ff000000000 // never mapped: the GPUVM faults, the queue stops
		r.submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{CompletionSignal: bad + 0x40})
		ok, data, err := d.WaitEvents([]*Event{mem}, false, 5*time.Second)
		if !ok || err != nil {
			t.Fatalf("memory exception: %v %v", ok, err)
		}
		m := data[0].Memory
		if m == nil || m.VA != bad || m.GPUID != g.ID() || m.Failure.NotPresent != 1 || m.Failure.ReadOnly != 0 {
			t.Errorf("exception data %+v", m)
		}
		// The queue is off: a later packet is not processed.
		s := newSignals(t, d, g)
		s.set(0, 1)
		r.submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{CompletionSignal: s.va(0)})
		time.Sleep(20 * time.Millisecond)
		if s.value(0) != 1 {
			t.Error("a queue stopped by a GPU fault processed another packet")
		}
		if err := mem.Reset(); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("RESET_EVENT of a memory event: %v, want EINVAL (only signal events)", err)
		}
	})

	t.Run("kernel storing to an unmapped address", func(t *testing.T) {
		if root == "/" {
			t.Skip("skipping on a real amdkfd: the fault of the case before left this process's queues evicted for the life of the process (kfd_dqm_evict_pasid); kfdemu ends a process with its last file")
		}
		d, g, mem := faultDevice(t)
		q, ring, amdq := aqlQueue(t, d, g)
		defer func() { q.Destroy(); ring.Free(); amdq.Free() }()
		const bad = 0x7fe000000000
		// v[2:3] = bad + 0x10; global_store_dword v[2:3], v1, off; s_endpgm
		code := dispatchCode(t, d, g, &aqlRing{q, ring, amdq}, []uint32{0x7E0402FF, (bad + 0x10) & 0xffffffff, 0x7E0602FF, (bad + 0x10) >> 32,
			0xDC708000, 0x007F0102, 0xBF810000})
		defer code.Free()
		ok, data, err := d.WaitEvents([]*Event{mem}, false, 5*time.Second)
		if !ok || err != nil {
			t.Fatalf("memory exception: %v %v%s", ok, err, debugQueues())
		}
		if m := data[0].Memory; m == nil || m.VA != bad || m.Failure.NotPresent != 1 {
			t.Errorf("exception data %+v", m)
		}
	})
}

// dispatchCode places a kernel descriptor and code in an executable BO of d and dispatches it (one
// work-item) on r.
func dispatchCode(t *testing.T, d *Device, g *GPU, r *aqlRing, code []uint32) *Memory {
	t.Helper()
	m, err := d.AllocGTT(g, 4096, Coherent|Executable)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Map(); err != nil {
		t.Fatal(err)
	}
	b := m.Bytes()
	binary.LittleEndian.PutUint64(b[16:], 0x100) // kernel_code_entry_byte_offset
	binary.LittleEndian.PutUint32(b[52:], 2<<1)  // COMPUTE_PGM_RSRC2: USER_SGPR_COUNT 2
	binary.LittleEndian.PutUint16(b[56:], 1<<3)  // kernarg segment pointer
	for i, w := range code {
		binary.LittleEndian.PutUint32(b[0x100+4*i:], w)
	}
	var pkt [64]byte
	(&aql.KernelDispatchPacket{Setup: 1, WorkgroupSizeX: 1, WorkgroupSizeY: 1, WorkgroupSizeZ: 1,
		GridSizeX: 1, GridSizeY: 1, GridSizeZ: 1, KernelObject: m.VA}).Encode(pkt[:])
	ab, rb := r.amdq.Bytes(), r.ring.Bytes()
	idx := Word64(ab, aql.AMDQueueWriteDispatchIDOffset).Load()
	slot := int(idx%64) * 64
	copy(rb[slot+4:slot+64], pkt[4:])
	Word64(ab, aql.AMDQueueWriteDispatchIDOffset).Store(idx + 1)
	Word32(rb, slot).Store(uint32(aql.MakeHeader(aql.PacketTypeKernelDispatch, true, aql.FenceScopeSystem, aql.FenceScopeSystem)) | 1<<16)
	r.q.RingDoorbell(idx)
	return m
}

// helperEnv names the device root in the environment of the helper process of
// testAQLAcrossProcesses; the shared memfd is its fd 3.
const helperEnv = "KMT_TEST_CROSS_PROCESS_ROOT"

// crossProcessHelper is the second process: it registers the shared page, queues a barrier-AND on
// signal 0 whose completion is signal 1, says "ready" and waits for signal 1 to reach 0.
func crossProcessHelper(root string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "helper:", err); return 1 }
	d, err := Open(Config{Root: root})
	if err != nil {
		return fail(err)
	}
	defer d.Close()
	g := d.GPUs()[0]
	shared, err := d.RegisterShared(g, 3, 0, 4096, Coherent)
	if err != nil {
		return fail(err)
	}
	if err := shared.Map(); err != nil {
		return fail(err)
	}
	r, err := newRing(d, g)
	if err != nil {
		return fail(err)
	}
	s := signals{shared}
	r.submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{DepSignal: [5]uint64{s.va(0)}, CompletionSignal: s.va(1)})
	fmt.Println("ready")
	deadline := time.Now().Add(10 * time.Second)
	for s.value(1) != 0 {
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("signal 1 still %d", s.value(1)))
		}
		time.Sleep(100 * time.Microsecond)
	}
	return 0
}

// newRing is aqlQueue without a testing.T (for the helper process).
func newRing(d *Device, g *GPU) (*aqlRing, error) {
	ring, err := d.AllocGTT(g, 4096, Coherent)
	if err != nil {
		return nil, err
	}
	amdq, err := d.AllocGTT(g, 4096, Coherent)
	if err != nil {
		return nil, err
	}
	for _, m := range []*Memory{ring, amdq} {
		if err := m.Map(); err != nil {
			return nil, err
		}
	}
	InvalidateRing(ring.Bytes())
	q, err := d.CreateQueue(QueueSpec{GPU: g, Type: QueueComputeAQL, RingVA: ring.VA, RingSize: 4096,
		ReadPtrVA: amdq.VA + aql.AMDQueueReadDispatchIDOffset, WritePtrVA: amdq.VA + aql.AMDQueueWriteDispatchIDOffset})
	if err != nil {
		return nil, err
	}
	return &aqlRing{q, ring, amdq}, nil
}

// testAQLAcrossProcesses: two processes register the same shared page as userptr memory; the
// other process's queue waits in a barrier-AND on a signal in it that only this process's queue
// completes, and its completion signal, also in the page, is seen here.
func testAQLAcrossProcesses(t *testing.T, root string) {
	d := open(t, root)
	g := d.GPUs()[0]
	fd, err := unix.MemfdCreate("kmt-shared-signals", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "kmt-shared-signals")
	defer f.Close()
	if err := f.Truncate(4096); err != nil {
		t.Fatal(err)
	}
	shared, err := d.RegisterShared(g, fd, 0, 4096, Coherent)
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Free()
	if err := shared.Map(); err != nil {
		t.Fatal(err)
	}
	s := signals{shared}
	s.set(0, 1)
	s.set(1, 1)
	r, err := newRing(d, g)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { r.q.Destroy(); r.ring.Free(); r.amdq.Free() }()

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+root)
	cmd.ExtraFiles = []*os.File{f}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Wait()
		t.Fatalf("helper: %q %v", line, err)
	}
	time.Sleep(20 * time.Millisecond)
	if s.value(1) != 1 {
		t.Fatal("the other process's barrier completed before its dependency")
	}
	r.submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{CompletionSignal: s.va(0)})
	waitUntil(t, "the other process's barrier to complete", func() bool { return s.value(1) == 0 })
	if err := cmd.Wait(); err != nil {
		t.Errorf("helper: %v", err)
	}
}

// TestReopenCycles opens and closes the device many times in one process and checks that each
// new queue's doorbell is the one the daemon watches (kfdemu's doorbell word reads as the idle
// value ^0 after CREATE_QUEUE) and that a barrier runs. A reopen right after a close must reach
// the new kfd process's memory: the daemon gives a released device file a new inode, since
// go-fuse keeps an inode's passthrough backing (the previous process's memfd) until after the
// release.
func TestReopenCycles(t *testing.T) {
	root := rttest.Root(t)
	for iter := range 200 {
		d, err := Open(Config{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		g := d.GPUs()[0]
		for k := range 3 {
			q, ring, amdq := aqlQueue(t, d, g)
			if v := q.Doorbell().Load(); v != ^uint64(0) {
				t.Fatalf("cycle %d queue %d: the doorbell reads %#x after CREATE_QUEUE, not the daemon's idle value: a stale mapping", iter, k, v)
			}
			if k == 0 {
				r := aqlRing{q, ring, amdq}
				s := Word64(amdq.Bytes(), 0x400+aql.SignalValueOffset)
				s.Store(1)
				r.submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{CompletionSignal: amdq.VA + 0x400})
				deadline := time.Now().Add(5 * time.Second)
				for s.Load() != 0 {
					if time.Now().After(deadline) {
						t.Fatalf("cycle %d: barrier never completed", iter)
					}
					time.Sleep(50 * time.Microsecond)
				}
			}
			q.Destroy()
			ring.Free()
			amdq.Free()
		}
		d.Close()
		waitReleased(t, root)
	}
}

// isolationEnv carries "ROOT HANDLE QUEUE EVENT MMAP_OFFSET SIGNAL_VA" of the parent to the helper
// process of testIsolationAcrossProcesses.
const isolationEnv = "KMT_TEST_ISOLATION"

// isolationHelper is the other process: every attempt to use the parent's BO handle, queue id,
// event id, mmap offset or memory fails with the driver's errno or reaches only its own things.
func isolationHelper(arg string) int {
	var root string
	var handle, va, off uint64
	var qid, evid uint32
	if _, err := fmt.Sscan(arg, &root, &handle, &qid, &evid, &off, &va); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "isolation helper: "+format+"\n", a...)
		return 1
	}
	d, err := Open(Config{Root: root})
	if err != nil {
		return fail("open: %v", err)
	}
	defer d.Close()
	g := d.GPUs()[0]
	if err := ioctl(d.kfd, "FREE", abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: handle}); !errors.Is(err, syscall.EINVAL) {
		return fail("FREE of the other process's BO: %v", err)
	}
	ids := []uint32{g.ID()}
	mp := abi.MapMemoryToGPUArgs{Handle: handle, DeviceIDsArrayPtr: uint64(uintptr(unsafe.Pointer(&ids[0]))), NDevices: 1}
	if err := ioctl(d.kfd, "MAP", abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mp); !errors.Is(err, syscall.EINVAL) {
		return fail("MAP of the other process's BO: %v", err)
	}
	if err := ioctl(d.kfd, "DESTROY_QUEUE", abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: qid}); !errors.Is(err, syscall.EINVAL) {
		return fail("DESTROY_QUEUE of the other process's queue: %v", err)
	}
	if err := ioctl(d.kfd, "SET_EVENT", abi.AMDKFD_IOC_SET_EVENT, &abi.SetEventArgs{EventID: evid}); !errors.Is(err, syscall.EINVAL) {
		return fail("SET_EVENT of the other process's event: %v", err)
	}
	// The other process's mmap offset, through this process's own render node, maps this
	// process's own memory at most.
	own, err := d.AllocGTT(g, 4096, Coherent)
	if err != nil {
		return fail("alloc: %v", err)
	}
	if off <= own.MmapOffset { // inside this process's render memfd (beyond its end would be SIGBUS)
		b, err := unix.Mmap(g.RenderFD, int64(off), 4096, unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return fail("mmap of its own offset: %v", err)
		}
		if b[0] == 0xa5 {
			return fail("mmap of the offset shows the other process's bytes")
		}
		unix.Munmap(b)
	}
	// GPU work naming the other process's signal address reaches nothing of it.
	r, err := newRing(d, g)
	if err != nil {
		return fail("queue: %v", err)
	}
	r.submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{CompletionSignal: va})
	time.Sleep(50 * time.Millisecond)
	fmt.Println("ok")
	return 0
}

// testIsolationAcrossProcesses: another process gets EINVAL for this one's BO handle, queue id and
// event id, sees none of its bytes through its mmap offset, and its GPU work does not touch this
// process's signal.
func testIsolationAcrossProcesses(t *testing.T, root string) {
	if root == "/" {
		t.Skip("skipping: needs the daemon-side view")
	}
	d := open(t, root)
	g := d.GPUs()[0]
	m, err := d.AllocGTT(g, 4096, Coherent)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	if err := m.Map(); err != nil {
		t.Fatal(err)
	}
	for i := range m.Bytes() {
		m.Bytes()[i] = 0xa5
	}
	q, ring, amdq := aqlQueue(t, d, g)
	defer func() { q.Destroy(); ring.Free(); amdq.Free() }()
	ev, err := d.CreateEvent(EventSignal, false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Destroy()
	sig := Word64(m.Bytes(), 0x100+aql.SignalValueOffset)
	sig.Store(5)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d %d %d %d", isolationEnv, root, m.Handle, q.ID, ev.ID, m.MmapOffset, m.VA+0x100))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("isolation helper: %v\n%s", err, out)
	}
	if sig.Load() != 5 || m.Bytes()[0] != 0xa5 {
		t.Errorf("the other process changed this one's memory: signal %d", sig.Load())
	}
	if ok, err := ev.Wait(0); ok || err != nil {
		t.Errorf("the other process set this one's event: %v %v", ok, err)
	}
}
