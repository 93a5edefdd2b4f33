package shader

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/internal/testenv"
)

// loadCO is load for another OpenCL file of testdata.
func loadCO(t testing.TB, src string) *loaded {
	t.Helper()
	return loadPath(t, testenv.CodeObject(t, src))
}

// runCtx is run with a context that bounds a kernel that would otherwise spin forever.
func (l *loaded) runCtx(t testing.TB, name string, grid [3]uint32, wg [3]uint16, kernarg []byte, e Engine, timeout time.Duration) (Stats, error) {
	t.Helper()
	return l.runAt(t, l.alloc(uint64(len(kernarg))+256), name, grid, wg, kernarg, e, timeout)
}

// runAt is runCtx with the kernarg (and packet) at ka, allocated before: it maps nothing.
func (l *loaded) runAt(t testing.TB, ka uint64, name string, grid [3]uint32, wg [3]uint16, kernarg []byte, e Engine, timeout time.Duration) (Stats, error) {
	kd := l.syms[name+".kd"]
	l.mem.Write(ka, kernarg)
	pkt := ka + 128
	l.writePacket(pkt, grid, wg, kd, ka)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return Dispatch(ctx, l.mem, DispatchParams{GridSize: grid, WorkgroupSize: wg, KernelObject: kd,
		KernargAddress: ka, DispatchPacket: pkt, Apertures: DefaultApertures, Engine: e})
}

// word is the host view of a dword of l's memory (flatMem pages are never moved).
func (l *loaded) word(va uint64) *atomic.Int32 {
	pg := l.mem.pages[va&^4095]
	return (*atomic.Int32)(ptr32(pg[:], va&4095))
}

// TestWaitForLastGroup: work-group 0 spins until the last work-group sets a flag; with work-groups
// run one after another it never ends.
func TestWaitForLastGroup(t *testing.T) {
	l := loadCO(t, "testdata/concurrency.cl")
	flag, out := l.alloc(4), l.alloc(4)
	st, err := l.runCtx(t, "wait_last", [3]uint32{64 * 64, 1, 1}, [3]uint16{64, 1, 1}, args(flag, out), Engine{}, 20*time.Second)
	if err != nil {
		t.Fatalf("wait_last: %v (%+v)", err, st)
	}
	if v := l.word(out).Load(); v != 1 || st.Groups != 64 {
		t.Fatalf("out = %d, groups %d", v, st.Groups)
	}
}

// TestWaitForNextGroup: each work-group waits for the one after it (wait_next), on 1 and 2
// workers. Work-group 0 ends at once and its goroutine claims the next ones (handOver): the
// first of them spins on a flag that a group claimed behind it sets, so the claim must let its
// groups go (unclaim) rather than keep them behind a spinning one.
func TestWaitForNextGroup(t *testing.T) {
	l := loadCO(t, "testdata/concurrency.cl")
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%dworkers", workers), func(t *testing.T) {
			SetWorkers(workers)
			defer SetWorkers(0)
			const n = 100
			flags := l.alloc(4 * n)
			st, err := l.runCtx(t, "wait_next", [3]uint32{64 * n, 1, 1}, [3]uint16{64, 1, 1}, args(flags), Engine{}, 20*time.Second)
			if err != nil {
				t.Fatalf("wait_next: %v (%+v)", err, st)
			}
			for g := 0; g < n; g++ {
				if v := l.word(flags + 4*uint64(g)).Load(); v != 1 {
					t.Fatalf("flag %d = %d", g, v)
				}
			}
		})
	}
}

// TestGridBarrier: every work-group must see every other's value after a barrier on an atomic
// counter (a cooperative-groups grid sync), which needs all of them resident at once.
func TestGridBarrier(t *testing.T) {
	l := loadCO(t, "testdata/concurrency.cl")
	const n = 48 // groups of 4 waves: 192 waves on the default device's 8 CUs x 32 slots
	count, vals, out := l.alloc(4), l.alloc(4*n), l.alloc(4*n)
	if _, err := l.runCtx(t, "grid_barrier", [3]uint32{256 * n, 1, 1}, [3]uint16{256, 1, 1}, args(count, vals, out), Engine{}, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	for g := 0; g < n; g++ {
		if v := l.word(out + 4*uint64(g)).Load(); v != n*(n+1)/2 {
			t.Fatalf("group %d summed %d, want %d", g, v, n*(n+1)/2)
		}
	}
}

// TestCounterWithCPU: a CPU goroutine and a kernel add to one counter with atomics: no update is
// lost on either side.
func TestCounterWithCPU(t *testing.T) {
	l := loadCO(t, "testdata/concurrency.cl")
	c := l.alloc(4)
	const items, iters, cpu = 1024, 50, 200000
	var wg sync.WaitGroup
	wg.Add(1)
	w := l.word(c)
	ka := l.alloc(256) // no mapping changes while the CPU goroutine runs
	go func() {
		defer wg.Done()
		for i := 0; i < cpu; i++ {
			w.Add(1)
		}
	}()
	if _, err := l.runAt(t, ka, "count", [3]uint32{items, 1, 1}, [3]uint16{256, 1, 1}, args(c, int32(iters)), Engine{}, time.Minute); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if v := l.word(c).Load(); v != items*iters+cpu {
		t.Fatalf("counter %d, want %d", v, items*iters+cpu)
	}
}

// TestPingPongWithCPU: a kernel and a CPU thread take turns on a flag.
func TestPingPongWithCPU(t *testing.T) {
	l := loadCO(t, "testdata/concurrency.cl")
	turn := l.alloc(4)
	const rounds = 200
	done := make(chan error, 1)
	w := l.word(turn)
	ka := l.alloc(256)
	go func() {
		_, err := l.runAt(t, ka, "ping", [3]uint32{64, 1, 1}, [3]uint16{64, 1, 1}, args(turn, int32(rounds)), Engine{}, time.Minute)
		done <- err
	}()
	for r := int32(0); r < rounds; r++ {
		w.Store(2*r + 1)
		for w.Load() != 2*r+2 {
			select {
			case err := <-done:
				if w.Load() == 2*r+2 && r == rounds-1 && err == nil { // its last store, then it ended
					done <- nil
					break
				}
				t.Fatalf("kernel ended at round %d: %v", r, err)
			default:
			}
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestGWSSemaphore is kfdtest's KFDGWSTest.Semaphore on the ISA: every one-item work-group takes a
// GWS semaphore initialized to 1 around a non-atomic scalar increment; the total is exact only if
// the semaphore excludes.
func TestGWSSemaphore(t *testing.T) {
	initCode := asm(t, `
		s_mov_b32 m0, 0
		s_load_dword s16, s[0:1], 0x0 glc
		s_waitcnt 0
		v_mov_b32 v0, s16
		ds_gws_init v0 offset:0 gds
		s_waitcnt 0
		s_endpgm`)
	incCode := asm(t, `
		s_mov_b32 m0, 0
		ds_gws_sema_p offset:0 gds
		s_waitcnt 0
		s_load_dword s16, s[0:1], 0x0 glc
		s_waitcnt 0
		s_add_u32 s16, s16, 1
		s_store_dword s16, s[0:1], 0x0 glc
		s_waitcnt lgkmcnt(0)
		ds_gws_sema_v offset:0 gds
		s_waitcnt 0
		s_endpgm`)
	gw := NewGWS(64)
	m, p := miniKernel(t, initCode)
	m.mapRange(asmOut, 0x1000)
	p.KernargAddress, p.GridSize, p.WorkgroupSize = asmOut, [3]uint32{1, 1, 1}, [3]uint16{1, 1, 1}
	m.Write(asmOut, []byte{1, 0, 0, 0})
	p.GWS = gw
	if _, err := Dispatch(context.Background(), m, p); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4*len(incCode))
	for i, w := range incCode {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	m.Write(0x1100, b)
	const groups = 4096
	p.GridSize = [3]uint32{groups, 1, 1}
	p.MaxWaveInstructions = 0
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := Dispatch(ctx, m, p); err != nil {
		t.Fatal(err)
	}
	var v [4]byte
	m.Read(asmOut, v[:])
	if got := binary.LittleEndian.Uint32(v[:]); got != groups+1 {
		t.Fatalf("counter %d, want %d", got, groups+1)
	}
	// Without GWS allocated to the queue, the same instruction stops the wave.
	p.GWS = nil
	if _, err := Dispatch(context.Background(), m, p); err == nil {
		t.Fatal("ds_gws_sema_p without GWS ran")
	}
}

// TestGroupsRunConcurrently: two dispatches on different goroutines (two queues) and the groups of
// one dispatch overlap in time: each group records the number of groups running when it starts.
func TestCUMaskAndResidency(t *testing.T) {
	dev := NewDevice(DefaultDeviceConfig(4))
	l := loadCO(t, "testdata/concurrency.cl")
	flag, out := l.alloc(4), l.alloc(4)
	var mu sync.Mutex
	cus := map[int]int{}
	e := Engine{Device: dev, CUs: []int{1, 3}}
	kd := l.syms["wait_last.kd"]
	ka := l.alloc(256)
	l.mem.Write(ka, args(flag, out))
	grid := [3]uint32{64 * 40, 1, 1}
	pkt := l.packet(grid, [3]uint16{64, 1, 1}, kd, ka)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := Dispatch(ctx, l.mem, DispatchParams{GridSize: grid, WorkgroupSize: [3]uint16{64, 1, 1},
		KernelObject: kd, KernargAddress: ka, DispatchPacket: pkt, Apertures: DefaultApertures, Engine: e,
		GroupDone: func(_ uint64, cu int) { mu.Lock(); cus[cu]++; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if len(cus) != 2 || cus[1] == 0 || cus[3] == 0 || cus[1]+cus[3] != 40 {
		t.Fatalf("groups per CU %v, want all 40 on CUs 1 and 3", cus)
	}
	if g, w := dev.Resident(); g != 0 || w != 0 {
		t.Fatalf("resources left after the dispatch: %d groups, %d waves", g, w)
	}
}

// BenchmarkVaddWorkers reports vadd's wave-instructions per second with 1..GOMAXPROCS workers,
// and the speed-up over one worker measured in the same run.
func BenchmarkVaddWorkers(b *testing.B) {
	l := load(b)
	const n = 1 << 20 // 4096 work-groups of 256
	pa, pb, pc := l.alloc(4*n), l.alloc(4*n), l.alloc(4*n)
	defer SetWorkers(0)
	var one float64
	for w := 1; w <= runtime.GOMAXPROCS(0); w++ {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			SetWorkers(w)
			var total uint64
			for i := 0; i < b.N; i++ {
				st := l.run(b, "vadd", [3]uint32{n, 1, 1}, [3]uint16{256, 1, 1}, args(pa, pb, pc, uint32(n)))
				total += st.WaveInstructions
			}
			rate := float64(total) / b.Elapsed().Seconds()
			b.ReportMetric(rate, "wave-inst/s")
			if w == 1 {
				one = rate
			} else if one > 0 {
				b.ReportMetric(rate/one, "x-vs-1-worker")
			}
		})
	}
}

// TestQueuesOverlap: the work-groups of one dispatch, and the long kernels of two queues (two
// Dispatch calls), overlap in time, as the kernels' own s_memtime stamps show.
func TestQueuesOverlap(t *testing.T) {
	code := asm(t, `
		s_memtime s[6:7]
		s_mov_b32 s10, 200000
	L:
		s_sub_u32 s10, s10, 1
		s_cmp_lg_u32 s10, 0
		s_cbranch_scc1 L
		s_memtime s[8:9]
		s_waitcnt lgkmcnt(0)
		s_lshl_b32 s2, s2, 4
		v_mov_b32 v6, s2
		v_mov_b32 v0, s6
		v_mov_b32 v1, s7
		v_mov_b32 v2, s8
		v_mov_b32 v3, s9
		global_store_dwordx4 v6, v[0:3], s[0:1]
		s_endpgm`)
	overlap := func(a, b [2]uint64) bool { return a[1] > a[0] && b[1] > b[0] && a[0] < b[1] && b[0] < a[1] }
	var stamps [2][2][2]uint64 // [queue][group]{start, end}
	var wg sync.WaitGroup
	for q := range 2 {
		m, p := miniKernel(t, code)
		m.mapRange(asmOut, 0x1000)
		p.KernargAddress, p.GridSize, p.WorkgroupSize = asmOut, [3]uint32{128, 1, 1}, [3]uint16{64, 1, 1}
		p.MaxWaveInstructions = 0
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := Dispatch(context.Background(), m, p); err != nil {
				t.Error(err)
				return
			}
			var b [32]byte
			m.Read(asmOut, b[:])
			for g := range 2 {
				stamps[q][g] = [2]uint64{binary.LittleEndian.Uint64(b[16*g:]), binary.LittleEndian.Uint64(b[16*g+8:])}
			}
		}()
	}
	wg.Wait()
	for q := range 2 {
		if !overlap(stamps[q][0], stamps[q][1]) {
			t.Errorf("queue %d: work-groups ran at %v and %v: no overlap", q, stamps[q][0], stamps[q][1])
		}
	}
	if !overlap(stamps[0][0], stamps[1][0]) {
		t.Errorf("queues ran at %v and %v: no overlap", stamps[0][0], stamps[1][0])
	}
}

// TestShortGroupsShareWorker: on one worker, a dispatch of many short work-groups (which a
// goroutine runs one after another in one token turn, handOver) does not keep a second queue's
// dispatch waiting until it ends: the turn counts wave instructions across the groups, so the
// other dispatch's group gets the token within a turn.
func TestShortGroupsShareWorker(t *testing.T) {
	SetWorkers(1)
	defer SetWorkers(0)
	long := asm(t, `
		s_mov_b32 s10, 20
	L:
		s_sub_u32 s10, s10, 1
		s_cmp_lg_u32 s10, 0
		s_cbranch_scc1 L
		s_endpgm`)
	short := asm(t, `
		v_mov_b32 v0, 0
		v_mov_b32 v1, 1
		global_store_dword v0, v1, s[0:1]
		s_endpgm`)
	mA, pA := miniKernel(t, long)
	pA.GridSize, pA.WorkgroupSize, pA.MaxWaveInstructions = [3]uint32{64 * 50000, 1, 1}, [3]uint16{64, 1, 1}, 0
	mB, pB := miniKernel(t, short)
	mB.mapRange(asmOut, 0x1000)
	pB.KernargAddress, pB.GridSize, pB.WorkgroupSize = asmOut, [3]uint32{64, 1, 1}, [3]uint16{64, 1, 1}
	done := make(chan string, 2)
	var stA Stats
	go func() {
		var err error
		if stA, err = Dispatch(context.Background(), mA, pA); err != nil {
			t.Error(err)
		}
		done <- "long"
	}()
	time.Sleep(5 * time.Millisecond) // the long dispatch's groups are running
	go func() {
		if _, err := Dispatch(context.Background(), mB, pB); err != nil {
			t.Error(err)
		}
		done <- "short"
	}()
	if first := <-done; first != "short" {
		t.Errorf("the one-group dispatch ended after the 50000-group one (%d wave instructions): it waited for the whole dispatch", stA.WaveInstructions)
	}
	<-done
	if stA.Groups != 50000 {
		t.Errorf("long dispatch: %d groups", stA.Groups)
	}
	var b [4]byte
	mB.Read(asmOut, b[:])
	if binary.LittleEndian.Uint32(b[:]) != 1 {
		t.Error("the short dispatch did not store")
	}
}
