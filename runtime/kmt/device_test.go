package kmt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/runtime/internal/rttest"
)

func TestMain(m *testing.M) {
	if root := os.Getenv(helperEnv); root != "" {
		os.Exit(crossProcessHelper(root)) // a second client process of testAQLAcrossProcesses
	}
	if arg := os.Getenv(isolationEnv); arg != "" {
		os.Exit(isolationHelper(arg)) // the other process of testIsolationAcrossProcesses
	}
	if arg := os.Getenv(stressEnv); arg != "" {
		os.Exit(stressHelper(arg)) // a client process of TestStressAndCrash
	}
	rttest.Main(m)
}

// suites run against the kfdemu mount (TestMount) and, where one exists, the real driver
// (TestRealKFD).
var suites = []struct {
	name string
	fn   func(t *testing.T, root string)
}{
	{"Open", testOpen},
	{"Memory", testMemory},
	{"Errors", testErrors},
	{"Events", testEvents},
	{"AQLQueue", testAQLQueue},
	{"AQLChains", testAQLChains},
	{"AQLAcrossProcesses", testAQLAcrossProcesses},
	{"SVM", testSVM},
	{"IsolationAcrossProcesses", testIsolationAcrossProcesses},
	{"Misc", testMisc},
	{"AQLErrors", testAQLErrors}, // last: its GPU faults leave a real amdkfd process evicted
}

// waitReleased waits until the daemon serving root holds no process: FUSE reports the release of
// a file to the daemon after close(2) has returned, so a Device opened right after Close could
// otherwise still meet the previous one's driver process (its signal page and addresses).
func waitReleased(t *testing.T, root string) {
	stats := filepath.Join(root, "sys/kernel/debug/kfdemu/stats")
	if _, err := os.Stat(stats); err != nil {
		return // a real /dev/kfd: close releases synchronously
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(stats)
		if err != nil || strings.Contains(string(b), "\nprocesses 0\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("the daemon still holds a process 5 s after Close:\n%s", b)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestMount(t *testing.T) {
	root := rttest.Root(t)
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) { s.fn(t, root) })
	}
}

func TestRealKFD(t *testing.T) {
	if ok, why := rttest.RealKFD(); !ok {
		t.Skipf("skipping: no real amdkfd here: %s", why)
	}
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) { s.fn(t, "/") })
	}
}

func open(t *testing.T, root string) *Device {
	debugRoot = root
	t.Helper()
	d, err := Open(Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.Close()
		waitReleased(t, root)
	})
	if len(d.GPUs()) == 0 {
		t.Fatal("no GPU opened")
	}
	return d
}

func testOpen(t *testing.T, root string) {
	d := open(t, root)
	if ma, _ := d.Version(); ma != 1 {
		t.Errorf("major version %d", ma)
	}
	topo := d.Topology()
	dir := filepath.Join(root, TopologyDir)
	ents, _ := os.ReadDir(filepath.Join(dir, "nodes"))
	if len(topo.Nodes) != len(ents) || topo.GenerationID == 0 {
		t.Errorf("%d nodes (generation %d), sysfs has %d", len(topo.Nodes), topo.GenerationID, len(ents))
	}
	for _, n := range topo.Nodes {
		b, _ := os.ReadFile(filepath.Join(dir, "nodes", itoa(n.ID), "properties"))
		if got := strings.Count(string(b), "\n"); got != len(n.Props.Order) {
			t.Errorf("node %d: %d properties parsed, file has %d lines", n.ID, len(n.Props.Order), got)
		}
		if n.Props.Get("mem_banks_count") != uint64(len(n.MemBanks)) || n.Props.Get("caches_count") != uint64(len(n.Caches)) ||
			n.Props.Get("io_links_count") != uint64(len(n.IOLinks)) || n.Props.Get("p2p_links_count") != uint64(len(n.P2PLinks)) {
			t.Errorf("node %d: sub-object counts differ from its properties", n.ID)
		}
	}
	for _, g := range d.GPUs() {
		ap := g.Apertures
		if ap.GPUID != g.ID() || ap.GPUVMLimit <= ap.GPUVMBase || ap.LDSBase == 0 || ap.ScratchBase == 0 {
			t.Errorf("GPU %d apertures %+v", g.ID(), ap)
		}
		if g.Node.GfxName() == "" || g.Node.ComputeUnits() == 0 {
			t.Errorf("GPU %d: gfx %q, %d CUs", g.ID(), g.Node.GfxName(), g.Node.ComputeUnits())
		}
	}
}

func itoa(v uint32) string { return strings.TrimSpace(strings.Repeat(" ", 0) + formatUint(v)) }

func formatUint(v uint32) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}

func testMemory(t *testing.T, root string) {
	d := open(t, root)
	g := d.GPUs()[0]
	cases := []struct {
		name  string
		alloc func() (*Memory, error)
		kind  MemKind
	}{
		{"vram", func() (*Memory, error) { return d.AllocVRAM(g, 3<<20, HostAccess) }, KindVRAM},
		{"gtt", func() (*Memory, error) { return d.AllocGTT(g, 5000, Coherent) }, KindGTT},
		{"userptr", func() (*Memory, error) { return d.RegisterUserptr(g, 1<<16, 0) }, KindUserptr},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := c.alloc()
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind != c.kind || m.Size%pageSize != 0 || m.Handle == 0 {
				t.Errorf("memory %+v", m)
			}
			b := m.Bytes()
			// dGPU: the GPU address is the CPU address of the mapping (fmm.c).
			if len(b) != int(m.Size) || sliceAddr(b) != m.VA {
				t.Fatalf("CPU view at %#x (%d bytes), GPU VA %#x", sliceAddr(b), len(b), m.VA)
			}
			copy(b, "hello")
			if !bytes.Equal(b[:5], []byte("hello")) {
				t.Error("CPU write lost")
			}
			if m2, ok := d.Lookup(m.VA + 100); !ok || m2 != m {
				t.Error("Lookup failed")
			}
			if err := m.Map(d.GPUs()...); err != nil {
				t.Fatal(err)
			}
			if got := m.MappedTo(); len(got) != len(d.GPUs()) {
				t.Errorf("mapped to %v", got)
			}
			if err := m.Unmap(g); err != nil {
				t.Fatal(err)
			}
			if err := m.Free(); err != nil {
				t.Fatal(err)
			}
			if err := m.Free(); !errors.Is(err, ErrFreed) {
				t.Errorf("second Free: %v", err)
			}
			if err := m.Map(); !errors.Is(err, ErrFreed) {
				t.Errorf("Map after Free: %v", err)
			}
		})
	}
	// VRAM without host access has no CPU view.
	m, err := d.AllocVRAM(g, 4096, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.Bytes() != nil || m.HostAccessible() {
		t.Error("VRAM without HostAccess is CPU-mapped")
	}
	m.Free()
	if d.va.inUse() != 0 {
		t.Errorf("%d VA areas still in use", d.va.inUse())
	}
}

func testErrors(t *testing.T, root string) {
	d := open(t, root)
	g := d.GPUs()[0]
	if _, err := d.AllocGTT(g, 0, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("size 0: %v", err)
	}
	// Out of memory: more VRAM than the GPU has is ENOMEM from the driver.
	vram := g.Node.HeapSize(abi.HSA_MEM_HEAP_TYPE_FB_PUBLIC, abi.HSA_MEM_HEAP_TYPE_FB_PRIVATE)
	avail, err := d.AvailableMemory(g)
	if err != nil && !errors.Is(err, syscall.EINVAL) {
		t.Errorf("AvailableMemory: %v", err)
	}
	if err == nil && (avail == 0 || avail > vram) {
		t.Errorf("available %d of %d", avail, vram)
	}
	half := roundPage(vram/2 + vram/4)
	a, err := d.AllocVRAM(g, half, 0)
	if err != nil {
		t.Fatalf("allocating 3/4 of VRAM: %v", err)
	}
	_, err = d.AllocVRAM(g, half, 0)
	var ie *IoctlError
	if !errors.Is(err, syscall.ENOMEM) || !errors.As(err, &ie) || ie.Name != "ALLOC_MEMORY_OF_GPU" {
		t.Errorf("second 3/4 of VRAM: %v, want ALLOC_MEMORY_OF_GPU ENOMEM", err)
	}
	a.Free()
	// A queue whose ring is not GPU-mapped is refused by the driver.
	ring, err := d.AllocGTT(g, 4096, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Free()
	_, err = d.CreateQueue(QueueSpec{GPU: g, Type: QueueComputeAQL, RingVA: ring.VA, RingSize: 4096,
		ReadPtrVA: ring.VA + 0x800, WritePtrVA: ring.VA + 0x808})
	if !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), "CREATE_QUEUE") {
		t.Errorf("unmapped ring: %v", err)
	}
	if _, err := d.CreateQueue(QueueSpec{GPU: g, Type: QueueComputeAQL, Priority: 4}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("priority 4: %v", err)
	}
	if _, err := d.GPU(12345); !errors.Is(err, ErrNoNode) {
		t.Errorf("unknown gpu: %v", err)
	}
	if _, err := d.GPUByNode(0); !errors.Is(err, ErrNotGPU) {
		t.Errorf("node 0: %v", err)
	}
}

func testEvents(t *testing.T, root string) {
	d := open(t, root)
	e, err := d.CreateEvent(EventSignal, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if e.MailboxVA == 0 || e.Slot == 0 {
		t.Errorf("event %+v has no mailbox", e)
	}
	if ok, err := e.Wait(0); ok || err != nil {
		t.Errorf("unsignalled event polled: %v %v", ok, err)
	}
	if err := e.Set(); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.Wait(time.Second); !ok || err != nil {
		t.Errorf("set event: %v %v", ok, err)
	}
	// Auto-reset: the wait consumed it.
	if ok, _ := e.Wait(0); ok {
		t.Error("auto-reset event still signalled")
	}
	start := time.Now()
	if ok, err := e.Wait(30 * time.Millisecond); ok || err != nil || time.Since(start) < 25*time.Millisecond {
		t.Errorf("timeout wait: %v %v after %v", ok, err, time.Since(start))
	}
	// Manual reset, created signalled.
	m, err := d.CreateEvent(EventSignal, true, true)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if ok, _ := m.Wait(0); !ok {
			t.Errorf("manual-reset event not signalled on wait %d", i)
		}
	}
	if err := m.Reset(); err != nil {
		t.Fatal(err)
	}
	// Any vs all.
	if ok, _, err := d.WaitEvents([]*Event{e, m}, false, 0); ok || err != nil {
		t.Errorf("any of two unsignalled: %v %v", ok, err)
	}
	m.Set()
	if ok, _, err := d.WaitEvents([]*Event{e, m}, false, time.Second); !ok || err != nil {
		t.Errorf("any with one set: %v %v", ok, err)
	}
	if ok, _, _ := d.WaitEvents([]*Event{e, m}, true, 0); ok {
		t.Error("all with one set completed")
	}
	// A set from another goroutine wakes a blocked waiter.
	go func() { time.Sleep(20 * time.Millisecond); e.Set() }()
	if ok, err := e.Wait(5 * time.Second); !ok || err != nil {
		t.Errorf("cross-goroutine set: %v %v", ok, err)
	}
	hw, err := d.CreateEvent(EventHWException, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := hw.Set(); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("SET_EVENT on a HW exception event: %v, want EINVAL", err)
	}
	for _, ev := range []*Event{e, m, hw} {
		if err := ev.Destroy(); err != nil {
			t.Error(err)
		}
	}
	if err := e.Set(); !errors.Is(err, ErrEventDestroyed) {
		t.Errorf("Set after Destroy: %v", err)
	}
	if _, err := e.Wait(0); !errors.Is(err, ErrEventDestroyed) {
		t.Errorf("Wait after Destroy: %v", err)
	}
}

// aqlQueue creates an AQL queue the way ROCr lays it out: a 4 KiB ring BO and an amd_queue_t page
// whose read/write dispatch ids are the queue's indices.
func aqlQueue(t *testing.T, d *Device, g *GPU) (q *Queue, ring, amdq *Memory) {
	t.Helper()
	var err error
	if ring, err = d.AllocGTT(g, 4096, Coherent); err != nil {
		t.Fatal(err)
	}
	if amdq, err = d.AllocGTT(g, 4096, Coherent); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*Memory{ring, amdq} {
		if err := m.Map(); err != nil {
			t.Fatal(err)
		}
	}
	InvalidateRing(ring.Bytes())
	q, err = d.CreateQueue(QueueSpec{GPU: g, Type: QueueComputeAQL, RingVA: ring.VA, RingSize: 4096,
		ReadPtrVA: amdq.VA + aql.AMDQueueReadDispatchIDOffset, WritePtrVA: amdq.VA + aql.AMDQueueWriteDispatchIDOffset})
	if err != nil {
		t.Fatal(err)
	}
	return q, ring, amdq
}

func testAQLQueue(t *testing.T, root string) {
	d := open(t, root)
	g := d.GPUs()[0]
	q, ring, amdq := aqlQueue(t, d, g)
	if q.EOP == nil || q.CWSR == nil || q.EOP.Kind != KindVRAM {
		t.Errorf("compute queue without EOP/CWSR buffers: %+v", q)
	}
	if c, _ := CWSRSizes(g.Node); q.CWSR.Size != c.AllocSize {
		t.Errorf("CWSR %d bytes, want %d", q.CWSR.Size, c.AllocSize)
	}
	if q.DoorbellVA == 0 || g.doorbell == nil || q.DoorbellVA < g.doorbell.VA || q.DoorbellVA >= g.doorbell.VA+g.doorbell.Size {
		t.Errorf("doorbell %#x outside the doorbell page", q.DoorbellVA)
	}
	ev, err := d.CreateEvent(EventSignal, false, false)
	if err != nil {
		t.Fatal(err)
	}
	// The completion signal lives in the amd_queue_t page, past the structure.
	const sig, wptr, rptr = 0x400, aql.AMDQueueWriteDispatchIDOffset, aql.AMDQueueReadDispatchIDOffset
	b, rb := amdq.Bytes(), ring.Bytes()
	Word64(b, sig+aql.SignalValueOffset).Store(1)
	Word64(b, sig+aql.SignalMailboxOffset).Store(ev.MailboxVA)
	Word32(b, sig+aql.SignalEventIDOffset).Store(ev.TriggerData)
	var pkt [64]byte
	bp := aql.BarrierPacket{CompletionSignal: amdq.VA + sig}
	bp.Encode(pkt[:])
	copy(rb[4:64], pkt[4:])
	Word64(b, wptr).Store(1)
	Word32(rb, 0).Store(uint32(aql.MakeHeader(aql.PacketTypeBarrierAnd, true, aql.FenceScopeSystem, aql.FenceScopeSystem)))
	q.RingDoorbell(0)
	if ok, err := ev.Wait(5 * time.Second); !ok || err != nil {
		t.Fatalf("completion event: %v %v", ok, err)
	}
	if v := int64(Word64(b, sig+aql.SignalValueOffset).Load()); v != 0 || Word64(b, rptr).Load() != 1 {
		t.Errorf("signal %d, read index %d", v, Word64(b, rptr).Load())
	}
	if got := binary.LittleEndian.Uint64(rb[0:]) & 0xff; got != aql.PacketTypeInvalid {
		t.Errorf("slot not released: header type %d", got)
	}
	if err := q.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := q.Destroy(); !errors.Is(err, ErrQueueDestroyed) {
		t.Errorf("second Destroy: %v", err)
	}
	ev.Destroy()
	ring.Free()
	amdq.Free()
}

func testMisc(t *testing.T, root string) {
	d := open(t, root)
	g := d.GPUs()[0]
	c1, err := d.ClockCounters(g)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	c2, _ := d.ClockCounters(g)
	if c1.SystemClockFreq == 0 || c2.GPUClockCounter <= c1.GPUClockCounter || c2.SystemClockCounter <= c1.SystemClockCounter {
		t.Errorf("clock counters %+v then %+v", c1, c2)
	}
	// SVM: the interface is 1.4+; an older driver refuses with the errno it returns for it.
	m, err := d.RegisterUserptr(g, 1<<16, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	// SVM over a userptr BO that is not GPU-mapped is allowed (svm_range_check_vm looks at GPU
	// mappings); a driver older than interface 1.4 may refuse the ioctl.
	_, minor := d.Version()
	err = d.SVMSetAttr(m.VA, m.Size, SVMAttr{abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS, abi.KFD_IOCTL_SVM_FLAG_COHERENT})
	var ie *IoctlError
	if err != nil && !(minor < 4 && errors.As(err, &ie) && ie.Name == "SVM") {
		t.Errorf("SVMSetAttr: %v", err)
	}
	if err := d.SVMSetAttr(1, 4096); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("unaligned SVM range: %v", err)
	}
	// XNACK: query, then setting it while a queue exists is EBUSY.
	on, err := d.XNACKMode()
	if err != nil && !errors.Is(err, syscall.EPERM) {
		t.Fatalf("XNACKMode: %v", err)
	}
	if err == nil {
		q, ring, amdq := aqlQueue(t, d, g)
		if err := d.SetXNACKMode(!on); !errors.Is(err, syscall.EBUSY) {
			t.Errorf("SetXNACKMode with a queue: %v, want EBUSY", err)
		}
		q.Destroy()
		ring.Free()
		amdq.Free()
		if err := d.SetXNACKMode(on); err != nil {
			t.Errorf("SetXNACKMode without queues: %v", err)
		}
	}
	if err := d.SetMemoryPolicy(g, true, false, 0, 0); err != nil {
		t.Errorf("SetMemoryPolicy: %v", err)
	}
}
