package hsa

import (
	"encoding/binary"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/kfdemu/kfdemu/internal/testenv"
)

// TestAtomicsWithCPU (issue 17, kfdtest's KFDQMTest.Atomics): a CPU goroutine adds 1 to a word with
// LOCK-prefixed atomics through this process's mapping of the buffer while a kernel of many
// work-groups adds to the same word with global_atomic_add through the daemon's mapping of the same
// pages. Every increment must land: the total is exactly the CPU's count plus the GPU's. Both kinds
// of host-visible BO: fine-grained GTT (the system pool) and VRAM (large BAR). The word is in the
// middle of a page and the CPU must have added while the kernel ran (else nothing was contended).
func TestAtomicsWithCPU(t *testing.T) {
	co, err := os.ReadFile(testenv.CodeObject(t, "testdata/atomic_count.cl"))
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
	k, err := exe.Kernel("atomic_count")
	if err != nil {
		t.Fatal(err)
	}
	q, err := g.CreateQueue(64, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Destroy()
	const groups, wg, perItem = 64, 64, 32
	for _, pool := range []*Pool{g.SystemPool(), g.Pools[0]} {
		t.Run(pool.Name, func(t *testing.T) {
			buf, err := pool.Allocate(4096)
			if err != nil {
				t.Fatal(err)
			}
			defer buf.Free()
			const off = 0x7c4
			word := (*uint32)(unsafe.Pointer(&buf.Bytes()[off]))
			atomic.StoreUint32(word, 0)
			args, err := r.KernargPool().Allocate(uint64(k.KernargSize))
			if err != nil {
				t.Fatal(err)
			}
			defer args.Free()
			binary.LittleEndian.PutUint64(args.Bytes()[0:], buf.VA+off)
			binary.LittleEndian.PutUint32(args.Bytes()[8:], perItem)
			done, _ := r.NewSignal(1, true)
			defer done.Destroy()

			var cpu, during atomic.Uint64
			var running atomic.Bool
			stop := make(chan struct{})
			var wgCPU sync.WaitGroup
			wgCPU.Add(1)
			go func() { // the CPU thread: LOCK XADD on the client's mapping
				defer wgCPU.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					atomic.AddUint32(word, 1)
					cpu.Add(1)
					if running.Load() {
						during.Add(1)
					}
				}
			}()
			for cpu.Load() < 1000 { // the CPU is adding before the kernel starts, as in kfdtest
				time.Sleep(time.Millisecond)
			}
			running.Store(true)
			if _, err := q.SubmitDispatch(Dispatch{Kernel: k, Grid: [3]uint32{groups * wg}, Workgroup: [3]uint16{wg}, Kernarg: args.VA, Completion: done}); err != nil {
				t.Fatal(err)
			}
			_, ok, err := done.Wait(Eq, 0, 120*time.Second)
			running.Store(false)
			close(stop)
			wgCPU.Wait()
			if !ok || err != nil {
				t.Fatalf("dispatch did not complete: %v %v", err, q.Err())
			}
			gpu := uint64(groups * wg * perItem)
			if got, want := uint64(atomic.LoadUint32(word)), cpu.Load()+gpu; got != want {
				t.Errorf("word = %d, want %d (CPU %d + GPU %d): %d increments lost", got, want, cpu.Load(), gpu, int64(want)-int64(got))
			}
			if during.Load() == 0 {
				t.Errorf("the CPU made no increment while the kernel ran: nothing was contended")
			}
			t.Logf("CPU %d increments (%d during the kernel), GPU %d", cpu.Load(), during.Load(), gpu)
		})
	}
}
