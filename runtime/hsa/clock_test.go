package hsa

import (
	"encoding/binary"
	"os"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/internal/testenv"
)

// TestKernelClockMatchesDriver: the timestamps a kernel reads with s_memtime and s_memrealtime are in
// the domain of the driver's GET_CLOCK_COUNTERS gpu_clock_counter (the one ROCr converts GPU times
// with): every stamp lies between the counters read before the dispatch and after its completion,
// s_memrealtime is not before s_memtime in a work-item, and the counter runs at 100 MHz against the
// driver's CPU counter (nanoseconds of CLOCK_MONOTONIC_RAW).
func TestKernelClockMatchesDriver(t *testing.T) {
	co, err := os.ReadFile(testenv.CodeObject(t, "testdata/stamps.cl"))
	if err != nil {
		t.Fatal(err)
	}
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
	k, err := exe.Kernel("stamps")
	if err != nil {
		t.Fatal(err)
	}
	const n = 256
	out, err := g.SystemPool().Allocate(16 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	args, err := r.KernargPool().Allocate(uint64(k.KernargSize))
	if err != nil {
		t.Fatal(err)
	}
	defer args.Free()
	binary.LittleEndian.PutUint64(args.Bytes(), out.VA)
	done, _ := r.NewSignal(1, true)
	defer done.Destroy()
	q, err := g.CreateQueue(64, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Destroy()
	c0, err := r.d.ClockCounters(g.gpu)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.SubmitDispatch(Dispatch{Kernel: k, Grid: [3]uint32{n}, Workgroup: [3]uint16{64}, Kernarg: args.VA, Completion: done}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := done.Wait(Eq, 0, 30*time.Second); !ok || err != nil {
		t.Fatalf("dispatch did not complete: %v %v", err, q.Err())
	}
	c1, err := r.d.ClockCounters(g.gpu)
	if err != nil {
		t.Fatal(err)
	}
	b := out.Bytes()
	for i := 0; i < n; i++ {
		mt, rt := binary.LittleEndian.Uint64(b[16*i:]), binary.LittleEndian.Uint64(b[16*i+8:])
		if mt < c0.GPUClockCounter || rt > c1.GPUClockCounter || rt < mt {
			t.Fatalf("work-item %d: s_memtime %d, s_memrealtime %d; driver's gpu counter %d before, %d after", i, mt, rt, c0.GPUClockCounter, c1.GPUClockCounter)
		}
	}
	// 100 MHz: the gpu counter advances a tenth of the CPU counter's nanoseconds (the two reads of each
	// ioctl are a few microseconds apart at most).
	dg, dc := int64(c1.GPUClockCounter-c0.GPUClockCounter), int64(c1.CPUClockCounter-c0.CPUClockCounter)
	if d := dg*10 - dc; d < -200_000 || d > 200_000 {
		t.Errorf("gpu counter advanced %d ticks while the CPU counter advanced %d ns: not 100 MHz", dg, dc)
	}
}
