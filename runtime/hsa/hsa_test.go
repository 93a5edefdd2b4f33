package hsa

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/internal/testenv"
	"github.com/kfdemu/kfdemu/runtime/internal/rttest"
)

func TestMain(m *testing.M) { rttest.Main(m) }

// realRoot is "/" while TestRealKFD runs the suite against a real /dev/kfd.
var realRoot string

func initRT(t testing.TB) *Runtime {
	t.Helper()
	root := realRoot
	if root == "" {
		root = rttest.Root(t)
	}
	r, err := Init(Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Shutdown()
		if realRoot == "" {
			waitIdle(t, root)
		}
	})
	return r
}

// TestRealKFD runs the device-independent tests against a real amdkfd where one exists.
func TestRealKFD(t *testing.T) {
	if ok, why := rttest.RealKFD(); !ok {
		t.Skipf("skipping: no real /dev/kfd (%s)", why)
	}
	realRoot = "/"
	defer func() { realRoot = "" }()
	for name, fn := range map[string]func(*testing.T){"SignalOps": TestSignalOps, "InterruptSignalWaits": TestInterruptSignalWaits,
		"QueueManyProducers": TestQueueManyProducers, "QueueFullAndErrors": TestQueueFullAndErrors, "DispatchVadd": TestDispatchVadd} {
		t.Run(name, fn)
	}
}

// waitIdle waits until the daemon holds no process (FUSE releases after close returns).
func waitIdle(t testing.TB, root string) {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if st, err := rttest.Stats(root); err != nil || st["processes"] == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Errorf("the daemon still holds a process after Shutdown")
}

func TestAgentsAndPools(t *testing.T) {
	r := initRT(t)
	gpus := r.GPUs()
	if len(gpus) != 1 || len(r.Agents()) != 2 || r.Agents()[0].Kind != CPU {
		t.Fatalf("agents %v", r.Agents())
	}
	g := gpus[0]
	if g.Name != "gfx90a" || g.ISA != "amdgcn-amd-amdhsa--gfx90a" || g.ComputeUnits() != 104 || g.WavefrontSize() != 64 {
		t.Errorf("GPU agent %s isa %s CUs %d wave %d", g.Name, g.ISA, g.ComputeUnits(), g.WavefrontSize())
	}
	if len(g.Pools) != 1 || g.Pools[0].Kind != CoarseGrained || g.Pools[0].Size < 60<<30 || g.Pools[0].Size > 64<<30 {
		t.Errorf("GPU pools %+v", g.Pools[0])
	}
	b, err := g.Pools[0].Allocate(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	b.Bytes()[12345] = 7
	if err := b.Free(); err != nil {
		t.Error(err)
	}
	if _, err := g.Pools[0].Allocate(g.Pools[0].Size + 1<<20); !errors.Is(err, ErrOutOfResources) || !errors.Is(err, syscall.ENOMEM) {
		t.Errorf("allocation beyond VRAM: %v, want ErrOutOfResources wrapping ENOMEM", err)
	}
	if _, err := g.Pools[0].Allocate(0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("allocation of 0 bytes: %v", err)
	}
	if _, err := r.Agents()[0].CreateQueue(64, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("queue on a CPU agent: %v", err)
	}
	if _, err := g.CreateQueue(100, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("queue of 100 packets: %v", err)
	}
}

func TestSignalOps(t *testing.T) {
	r := initRT(t)
	s, err := r.NewSignal(10, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	steps := []struct {
		op   func() int64
		old  int64
		want int64
	}{
		{func() int64 { return s.Add(5, Relaxed) }, 10, 15},
		{func() int64 { return s.Sub(3, Release) }, 15, 12},
		{func() int64 { return s.And(6, AcquireRelease) }, 12, 4},
		{func() int64 { return s.Or(3, Acquire) }, 4, 7},
		{func() int64 { return s.Xor(5, Relaxed) }, 7, 2},
		{func() int64 { return s.Exchange(-9, Relaxed) }, 2, -9},
		{func() int64 { return s.CAS(-9, 100, Relaxed) }, -9, 100},
		{func() int64 { return s.CAS(1, 5, Relaxed) }, 100, 100},
	}
	for i, st := range steps {
		if old := st.op(); old != st.old || s.Load(Acquire) != st.want {
			t.Errorf("step %d: old %d value %d, want %d %d", i, old, s.Load(Acquire), st.old, st.want)
		}
	}
	for _, c := range []struct {
		cond Condition
		x    int64
		want bool
	}{{Eq, 100, true}, {Ne, 100, false}, {Lt, 101, true}, {Gte, 101, false}} {
		start := time.Now()
		_, ok, err := s.Wait(c.cond, c.x, 20*time.Millisecond)
		if err != nil || ok != c.want || !ok && time.Since(start) < 20*time.Millisecond {
			t.Errorf("wait %v %d: %v %v after %v", c.cond, c.x, ok, err, time.Since(start))
		}
	}
	s.Destroy()
	if _, _, err := s.Wait(Eq, 0, 0); !errors.Is(err, ErrInvalidSignal) {
		t.Errorf("wait on a destroyed signal: %v", err)
	}
}

// TestInterruptSignalWaits: waiters sleep in WAIT_EVENTS and are woken by a CPU store from
// another goroutine, and by the packet processor completing a barrier; the waits race with the
// completions.
func TestInterruptSignalWaits(t *testing.T) {
	r := initRT(t)
	q, err := r.GPUs()[0].CreateQueue(64, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Destroy()
	for round := range 50 {
		s, err := r.NewSignal(1, true)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan bool)
		go func() {
			_, ok, err := s.Wait(Eq, 0, 5*time.Second)
			done <- ok && err == nil
		}()
		if round%2 == 0 {
			s.Store(0, Release)
		} else if _, err := q.SubmitBarrierAnd(nil, s); err != nil {
			t.Fatal(err)
		}
		if !<-done {
			t.Fatalf("round %d: waiter not woken", round)
		}
		s.Destroy()
	}
}

// TestQueueManyProducers: eight goroutines submit barrier packets to one queue at once (write
// index reservation by atomic add); every packet completes exactly once.
func TestQueueManyProducers(t *testing.T) {
	r := initRT(t)
	q, err := r.GPUs()[0].CreateQueue(256, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Destroy()
	const producers, each = 8, 200
	s, err := r.NewSignal(producers*each, true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	var wg sync.WaitGroup
	for range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := q.SubmitBarrierAnd(nil, s); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if v, ok, err := s.Wait(Eq, 0, 10*time.Second); !ok || err != nil {
		t.Fatalf("signal %d after %d packets: %v", v, producers*each, err)
	}
	if q.ReadIndex() != producers*each || q.WriteIndex() != producers*each {
		t.Errorf("read index %d write index %d", q.ReadIndex(), q.WriteIndex())
	}
}

// TestQueueFullAndErrors: a barrier on a signal that never drops blocks a 64-packet ring; the
// 65th reservation is ErrQueueFull. A malformed packet takes another queue offline: its error
// callback runs with the packet processor's code, and submissions fail.
func TestQueueFullAndErrors(t *testing.T) {
	r := initRT(t)
	g := r.GPUs()[0]
	q, err := g.CreateQueue(64, nil)
	if err != nil {
		t.Fatal(err)
	}
	q.submitWait = 100 * time.Millisecond
	never, _ := r.NewSignal(1, false)
	defer never.Destroy()
	for i := range 64 {
		if _, err := q.SubmitBarrierAnd([]*Signal{never}, nil); err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
	}
	if _, err := q.SubmitBarrierAnd(nil, nil); !errors.Is(err, ErrQueueFull) {
		t.Errorf("65th packet on a blocked 64-packet queue: %v, want ErrQueueFull", err)
	}
	q.Destroy()

	bad, _ := r.NewSignal(0, false)
	bad.Destroy()
	errs := make(chan error, 1)
	q2, err := g.CreateQueue(64, func(_ *Queue, err error) { errs <- err })
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Destroy()
	if _, err := q2.SubmitBarrierAnd([]*Signal{bad}, nil); !errors.Is(err, ErrInvalidSignal) {
		t.Errorf("barrier on a destroyed signal: %v", err)
	}
	var pkt [aql.PacketSize]byte
	pkt[0] = 7 // reserved packet type
	if _, err := q2.SubmitRaw(pkt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		var qe *QueueError
		if !errors.As(err, &qe) || qe.Code != 32 || !errors.Is(err, ErrQueueInactive) {
			t.Errorf("error callback: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no error callback for a malformed packet")
	}
	if _, err := q2.SubmitBarrierAnd(nil, nil); !errors.Is(err, ErrQueueInactive) {
		t.Errorf("submit to an inactive queue: %v", err)
	}
}

// vaddCodeObject compiles cmd/kfdemu's vadd kernel for gfx90a.
func vaddCodeObject(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(testenv.CodeObject(t, "../../cmd/kfdemu/testdata/rocm/vadd.cl"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDispatchVadd loads a clang-14 code object, dispatches its kernel over 10000 elements and
// checks the result; the data moves in and out with SDMA copies between VRAM and system memory.
func TestDispatchVadd(t *testing.T) {
	co := vaddCodeObject(t)
	r := initRT(t)
	g := r.GPUs()[0]
	if g.Name != "gfx90a" {
		t.Skipf("skipping: the test kernel is built for gfx90a, the GPU is %s", g.Name)
	}
	exe, err := g.LoadCodeObject(co)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Destroy()
	k, err := exe.Kernel("vadd")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exe.Kernel("nope"); !errors.Is(err, ErrKernelNotFound) {
		t.Errorf("missing kernel: %v", err)
	}
	const n = 10000
	host, err := g.SystemPool().Allocate(3 * 4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Free()
	vram, err := g.Pools[0].Allocate(3 * 4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer vram.Free()
	hb := host.Bytes()
	for i := range n {
		binary.LittleEndian.PutUint32(hb[4*i:], math.Float32bits(float32(i)))
		binary.LittleEndian.PutUint32(hb[4*n+4*i:], math.Float32bits(float32(2*i)+0.5))
	}
	if err := r.Copy(vram.VA, host.VA, 2*4*n); err != nil { // a and b to VRAM
		t.Fatal(err)
	}
	args, err := r.KernargPool().Allocate(uint64(k.KernargSize))
	if err != nil {
		t.Fatal(err)
	}
	defer args.Free()
	ab := args.Bytes()
	binary.LittleEndian.PutUint64(ab[0:], vram.VA)
	binary.LittleEndian.PutUint64(ab[8:], vram.VA+4*n)
	binary.LittleEndian.PutUint64(ab[16:], vram.VA+8*n)
	binary.LittleEndian.PutUint32(ab[24:], n)
	done, _ := r.NewSignal(1, true)
	defer done.Destroy()
	q, err := g.CreateQueue(64, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Destroy()
	if _, err := q.SubmitDispatch(Dispatch{Kernel: k, Grid: [3]uint32{n}, Workgroup: [3]uint16{256}, Kernarg: args.VA, Completion: done}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := done.Wait(Eq, 0, 30*time.Second); !ok || err != nil {
		t.Fatalf("dispatch did not complete: %v %v", err, q.Err())
	}
	if err := r.Copy(host.VA+8*n, vram.VA+8*n, 4*n); err != nil { // c back
		t.Fatal(err)
	}
	for i := range n {
		if c := math.Float32frombits(binary.LittleEndian.Uint32(hb[8*n+4*i:])); c != float32(3*i)+0.5 {
			t.Fatalf("c[%d] = %v, want %v", i, c, float32(3*i)+0.5)
		}
	}
	// An object built for another processor is refused.
	other := append([]byte(nil), co...)
	other[48] = 0x30 // EF_AMDGPU_MACH gfx908
	if _, err := g.LoadCodeObject(other); !errors.Is(err, ErrIncompatibleISA) {
		t.Errorf("gfx908 object on gfx90a: %v", err)
	}
}

// TestDeviceGone: a runtime whose daemon stops gets ErrDeviceGone, not a hang.
func TestDeviceGone(t *testing.T) {
	d := rttest.Start(t, "mi210")
	r, err := Init(Config{Root: d.Root})
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.NewSignal(1, true)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, _, err := s.Wait(Eq, 0, -1)
		waited <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		if !errors.Is(err, ErrDeviceGone) {
			t.Errorf("wait when the device went away: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("wait still blocked after the daemon stopped")
	}
	if _, err := r.GPUs()[0].Pools[0].Allocate(4096); !errors.Is(err, ErrDeviceGone) {
		t.Errorf("allocation after the daemon stopped: %v", err)
	}
	r.Shutdown()
}

// TestKernelRetryFaults runs vadd on plain client memory that no BO covers, with XNACK on: every
// first touch of a page by a wave is a GPU retry fault that the driver's SVM code resolves, and the
// wave's access is replayed; the result is exact.
func TestKernelRetryFaults(t *testing.T) {
	co := vaddCodeObject(t)
	r := initRT(t)
	if realRoot != "" {
		t.Skip("skipping: changes the XNACK mode of the real device's process")
	}
	if err := r.d.SetXNACKMode(true); err != nil {
		t.Skipf("skipping: XNACK not available: %v", err)
	}
	g := r.GPUs()[0]
	exe, err := g.LoadCodeObject(co)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Destroy()
	k, _ := exe.Kernel("vadd")
	const n = 64 << 10 // 3 x 256 KiB: 192 pages, each faulted in by the GPU
	mem, err := syscall.Mmap(-1, 0, 12*n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	for i := range n {
		binary.LittleEndian.PutUint32(mem[4*i:], math.Float32bits(float32(i)))
		binary.LittleEndian.PutUint32(mem[4*n+4*i:], math.Float32bits(0.25))
	}
	args, _ := r.KernargPool().Allocate(uint64(k.KernargSize))
	defer args.Free()
	ab := args.Bytes()
	binary.LittleEndian.PutUint64(ab[0:], base)
	binary.LittleEndian.PutUint64(ab[8:], base+4*n)
	binary.LittleEndian.PutUint64(ab[16:], base+8*n)
	binary.LittleEndian.PutUint32(ab[24:], n)
	done, _ := r.NewSignal(1, true)
	defer done.Destroy()
	q, err := g.CreateQueue(64, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Destroy()
	if _, err := q.SubmitDispatch(Dispatch{Kernel: k, Grid: [3]uint32{n}, Workgroup: [3]uint16{256}, Kernarg: args.VA, Completion: done}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := done.Wait(Eq, 0, 60*time.Second); !ok || err != nil {
		t.Fatalf("dispatch on SVM memory did not complete: %v %v", err, q.Err())
	}
	for i := range n {
		if c := math.Float32frombits(binary.LittleEndian.Uint32(mem[8*n+4*i:])); c != float32(i)+0.25 {
			t.Fatalf("c[%d] = %v, want %v", i, c, float32(i)+0.25)
		}
	}
	if b, err := os.ReadFile(filepath.Join(rttest.Root(t), "sys/kernel/debug/kfd/faults")); err == nil {
		if c := strings.Count(string(b), " retry "); c == 0 {
			t.Errorf("no serviced retry fault in the fault log:\n%s", b)
		}
	}
}

// TestCorpusThroughRuntime loads gpu/shader's corpus (21 kernels in one code object) with the
// runtime's loader and runs four of its kernels through an AQL queue, with kernel arguments
// placed by the metadata's offsets: saxpy, f64 division (fmath), a DPP row mirror (dpp) and an f64
// matrix-core product (mfma_f64).
func TestCorpusThroughRuntime(t *testing.T) {
	co, err := os.ReadFile(testenv.CodeObject(t, "../../gpu/shader/testdata/corpus.cl"))
	if err != nil {
		t.Fatal(err)
	}
	r := initRT(t)
	g := r.GPUs()[0]
	if g.Name != "gfx90a" {
		t.Skipf("skipping: the corpus is built for gfx90a, the GPU is %s", g.Name)
	}
	exe, err := g.LoadCodeObject(co)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Destroy()
	if len(exe.Object.Kernels) < 21 {
		t.Errorf("%d kernels loaded, want the corpus's 21", len(exe.Object.Kernels))
	}
	q, err := g.CreateQueue(64, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Destroy()
	// run dispatches kernel name with arguments vals (uint64 bits; the metadata gives each
	// argument's offset and size) over grid work-items in groups of wg.
	run := func(name string, grid uint32, wg uint16, vals ...uint64) {
		t.Helper()
		k, err := exe.Kernel(name)
		if err != nil {
			t.Fatal(err)
		}
		args, err := r.KernargPool().Allocate(uint64(max(k.KernargSize, 64)))
		if err != nil {
			t.Fatal(err)
		}
		defer args.Free()
		ab := args.Bytes()
		for i, a := range k.Args {
			if i >= len(vals) {
				break
			}
			switch a.Size {
			case 4:
				binary.LittleEndian.PutUint32(ab[a.Offset:], uint32(vals[i]))
			case 8:
				binary.LittleEndian.PutUint64(ab[a.Offset:], vals[i])
			}
		}
		done, _ := r.NewSignal(1, true)
		defer done.Destroy()
		if _, err := q.SubmitDispatch(Dispatch{Kernel: k, Grid: [3]uint32{grid}, Workgroup: [3]uint16{wg}, Kernarg: args.VA, Completion: done}); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := done.Wait(Eq, 0, 30*time.Second); !ok || err != nil {
			t.Fatalf("%s did not complete: %v %v", name, err, q.Err())
		}
	}
	buf, err := g.SystemPool().Allocate(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	b := buf.Bytes()
	f32s := func(off int) []float32 { return unsafe.Slice((*float32)(unsafe.Pointer(&b[off])), 4096) }
	f64s := func(off int) []float64 { return unsafe.Slice((*float64)(unsafe.Pointer(&b[off])), 4096) }

	// saxpy: y = fma(alpha, x, y) over 1000 elements (a partial work-group).
	x, y := f32s(0), f32s(0x10000)
	for i := range 1000 {
		x[i], y[i] = float32(i)*0.5, float32(3-i)
	}
	run("saxpy", 1000, 256, uint64(math.Float32bits(2.5)), buf.VA, buf.VA+0x10000, 1000)
	for i := range 1000 {
		if want := float32(math.FMA(2.5, float64(float32(i)*0.5), float64(float32(3-i)))); y[i] != want {
			t.Fatalf("saxpy y[%d] = %v, want %v", i, y[i], want)
		}
	}
	// fmath: the f64 quotient of element i is da[i]/db[i], correctly rounded.
	a, bb := f32s(0x20000), f32s(0x30000)
	da, db, fo, do := f64s(0x40000), f64s(0x50000), f32s(0x60000), f64s(0x80000)
	for i := range 64 {
		a[i], bb[i], da[i], db[i] = float32(i+1), 3, float64(i)+0.1, 7
	}
	run("fmath", 64, 64, buf.VA+0x20000, buf.VA+0x30000, buf.VA+0x60000, buf.VA+0x40000, buf.VA+0x50000, buf.VA+0x80000)
	for i := range 64 {
		if do[4*i] != da[i]/db[i] || fo[8*i] != float32(i+1)/3 {
			t.Fatalf("fmath element %d: %v and %v, want %v and %v", i, do[4*i], fo[8*i], da[i]/db[i], float32(i+1)/3)
		}
	}
	// dpp: control 4 is row_mirror.
	in, out := unsafe.Slice((*int32)(unsafe.Pointer(&b[0x90000])), 64), unsafe.Slice((*int32)(unsafe.Pointer(&b[0xa0000])), 640)
	for i := range in {
		in[i] = int32(i * 3)
	}
	run("dpp", 64, 64, buf.VA+0x90000, buf.VA+0xa0000)
	for i := range 64 {
		if want := in[i&^15+15-i&15]; out[10*i+4] != want {
			t.Fatalf("dpp row_mirror lane %d: %d, want %d", i, out[10*i+4], want)
		}
	}
	// mfma_f64: v_mfma_f64_16x16x4f64 with its operands in AGPRs, D = A·B + C (16x16x4, exact values).
	ma, mb, mc, md := f64s(0xb0000), f64s(0xb1000), f64s(0xb2000), f64s(0xb4000)
	for i := range 64 {
		ma[i], mb[i] = float64(i%7)-3, float64(i%5)/2
	}
	for i := range 256 {
		mc[i] = float64(i)
	}
	run("mfma_f64", 64, 64, buf.VA+0xb0000, buf.VA+0xb1000, buf.VA+0xb2000, buf.VA+0xb4000)
	for i := range 16 {
		for j := range 16 {
			want := mc[i*16+j]
			for k := range 4 {
				want += ma[i*4+k] * mb[k*16+j]
			}
			if md[i*16+j] != want {
				t.Fatalf("mfma_f64 D[%d][%d] = %v, want %v", i, j, md[i*16+j], want)
			}
		}
	}
}
