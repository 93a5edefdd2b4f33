package main

import (
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kfdemu/kfdemu/fs/nsexec"
	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/gpu/shader"
	"github.com/kfdemu/kfdemu/internal/relstore"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/runtime/hsa"
	"github.com/kfdemu/kfdemu/runtime/kmt"
	"golang.org/x/sys/unix"
)

// figure is one line of `kfdemu bench`: a measurement and the floor it is compared to, both taken
// in the same run (ARCHITECTURE section 7).
type figure struct {
	Name       string  `json:"name"`
	Unit       string  `json:"unit"`
	Value      float64 `json:"value"` // median for latencies, total for rates and costs
	P99        float64 `json:"p99,omitempty"`
	Floor      string  `json:"floor,omitempty"`
	FloorValue float64 `json:"floor_value,omitempty"`
	Ratio      float64 `json:"ratio,omitempty"` // value / floor
	Max        float64 `json:"max,omitempty"`   // figures of few samples: the largest
	Note       string  `json:"note,omitempty"`
}

// runBench mounts profiles in temporary directories and measures what a client pays, each figure
// against a floor measured in the same run.
func runBench(args []string) int {
	fl := flag.NewFlagSet("bench", flag.ContinueOnError)
	var f serveFlags
	f.register(fl)
	n := fl.Int("n", 5000, "iterations of each latency figure")
	asJSON := fl.Bool("json", false, "print the figures as JSON")
	topoProfile := fl.String("topology-profile", "mi300x-cpx", "profile whose tree the topology figure enumerates")
	o := benchOpts{}
	fl.IntVar(&o.vaddN, "vadd", 1<<24, "elements of the vadd kernel the interpreter figure runs")
	fl.IntVar(&o.matmulM, "matmul", 512, "rows (= columns) of the square matrices the matmul interpreter figure multiplies")
	fl.DurationVar(&o.idleWait, "idle-wait", 10*time.Second, "idle time before each first-doorbell sample")
	fl.IntVar(&o.idleSamples, "idle-samples", 3, "first-doorbell-after-idle samples (each adds twice --idle-wait to the run, once for its floor; 0: skip)")
	fl.IntVar(&o.stormPages, "storm-pages", defaultStormPages, "distinct SVM pages of the fault storm (0: skip)")
	scale := fl.Int("scale", 0, "instead of the other figures: N client processes, each with an AQL queue and "+
		"64 MiB of mapped VRAM, on --profile (default mi210x8)")
	scaleRounds := fl.Int("scale-rounds", 20, "barrier round trips of each --scale client")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: kfdemu bench [--profile NAME|FILE] [-n N] [--json] [--scale N]\n\nMounts the emulator in a temporary "+
			"directory and prints every tracked figure with the floor it is compared to, measured in the same run.\n"+
			"About 105 s on 2 cores with the defaults: the first-doorbell figure idles --idle-wait before each of its\n"+
			"--idle-samples samples and before each sample of its floor (60 s), the fault storm takes 5 to 10 s. --scale N runs only the scale figures\n"+
			"(about 20 s for N=256 on 2 cores).")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *n < 100 {
		fmt.Fprintln(os.Stderr, "kfdemu bench: -n must be at least 100")
		return 2
	}
	if o.idleSamples < 0 || o.stormPages < 0 || *scale < 0 || *scaleRounds < 1 {
		fmt.Fprintln(os.Stderr, "kfdemu bench: --idle-samples, --storm-pages and --scale must be >= 0, --scale-rounds >= 1")
		return 2
	}
	o.n, o.topoProfile = *n, *topoProfile
	var figs []figure
	var err error
	if *scale > 0 {
		profileSet := false
		fl.Visit(func(x *flag.Flag) { profileSet = profileSet || x.Name == "profile" })
		if !profileSet {
			f.profile = "mi210x8"
		}
		var r *scaleResult
		o.n = *scaleRounds // the latency figure's iterations per client
		if r, err = runScale(&f, *scale, *scaleRounds); err == nil {
			figs = r.figures()
		}
	} else {
		figs, err = benchAll(&f, o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu bench:", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			Profile string   `json:"profile"`
			N       int      `json:"n"`
			CPUs    int      `json:"cpus"`
			Figures []figure `json:"figures"`
		}{f.profile, o.n, runtime.NumCPU(), figs})
		return 0
	}
	printFigures(os.Stdout, f.profile, o.n, figs)
	return 0
}

func printFigures(w io.Writer, profile string, n int, figs []figure) {
	fmt.Fprintf(w, "profile %s, %d iterations per latency figure, %d CPUs\n\n", profile, n, runtime.NumCPU())
	nw := 46 // the name column fits the longest name
	for _, g := range figs {
		nw = max(nw, len(g.Name))
	}
	fmt.Fprintf(w, "%-*s %14s %12s   %-44s %14s %8s\n", nw, "figure", "value", "p99", "floor (same run)", "floor value", "ratio")
	for _, g := range figs {
		p99 := ""
		if g.P99 != 0 {
			p99 = fmtValue(g.P99, g.Unit)
		}
		fv, ratio := "", ""
		if g.Floor != "" {
			fv, ratio = fmtValue(g.FloorValue, g.Unit), fmt.Sprintf("%.3g", g.Ratio)
		}
		fmt.Fprintf(w, "%-*s %14s %12s   %-44s %14s %8s\n", nw, g.Name, fmtValue(g.Value, g.Unit), p99, g.Floor, fv, ratio)
		if g.Note != "" {
			fmt.Fprintf(w, "  %s\n", g.Note)
		}
	}
}

func fmtValue(v float64, unit string) string {
	switch unit {
	case "x":
		return fmt.Sprintf("%.2fx", v)
	case "ns":
		return time.Duration(v).Round(10 * time.Nanosecond).String()
	case "packets/s", "calls/s", "faults/s", "elements/s", "multiply-adds/s":
		return fmt.Sprintf("%.3gM/s", v/1e6)
	default:
		return fmt.Sprintf("%.4g %s", v, unit)
	}
}

func ratio(v, floor float64) float64 {
	if floor == 0 {
		return 0
	}
	return v / floor
}

// ioctlTailGoal is issue 20's bound on the ioctl round trip's p99 over its p50.
const ioctlTailGoal = 3.0

// benchOpts are the flags of the figures benchAll takes.
type benchOpts struct {
	n           int // iterations of each latency figure
	topoProfile string
	vaddN       int
	matmulM     int
	idleWait    time.Duration
	idleSamples int
	stormPages  int
}

// benchAll mounts f's profile (and the topology profile) and takes every figure.
func benchAll(f *serveFlags, o benchOpts) ([]figure, error) {
	n := o.n
	dir, err := os.MkdirTemp("", "kfdemu-bench-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(dir)
	f.mount = dir
	srv, _, err := mountEmulator(f, newLogger("warn"))
	if err != nil {
		return nil, err
	}
	defer srv.Unmount()
	var figs []figure

	// Idle CPU first, before any client: the daemon alone, then with queues that sit idle, in
	// this process and in 16 client processes.
	idle, base, err := benchIdle(dir)
	if err != nil {
		return nil, err
	}
	figs = append(figs, idle)
	idle, err = benchIdleProcs(dir, base, idleProcs, idleQueuesPerProc)
	if err != nil {
		return nil, err
	}
	figs = append(figs, idle)
	if err := waitNoProcess(dir); err != nil {
		return nil, err
	}

	c, err := newAQLClient(dir)
	if err != nil {
		return nil, err
	}

	// ioctl round trip against a request the daemon answers without the driver, and the same
	// no-op on the machine's minimal FUSE server (rawFUSE), interleaved.
	floor := make([]time.Duration, n)
	ver := make([]time.Duration, n)
	raw := make([]time.Duration, n)
	rawFD, rawNote := -1, ""
	if rf, err := startRawFUSE(""); err != nil {
		rawNote = fmt.Sprintf("; no minimal FUSE server floor: %v", err)
	} else {
		defer rf.stop()
		if rawFD, err = unix.Open(rf.file(), unix.O_RDWR|unix.O_CLOEXEC, 0); err != nil {
			return nil, fmt.Errorf("minimal FUSE server: %w", err)
		}
		defer unix.Close(rawFD)
	}
	var v [8]byte
	for i := range n {
		start := time.Now()
		unix.Syscall(unix.SYS_IOCTL, uintptr(c.d.FD()), 0x5800, 0) // _IO('X', 0): ENOTTY, no driver work
		floor[i] = time.Since(start)
		start = time.Now()
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(c.d.FD()), 0x80084B01, uintptr(unsafe.Pointer(&v))); e != 0 {
			return nil, fmt.Errorf("GET_VERSION: %v", e)
		}
		ver[i] = time.Since(start)
		if rawFD >= 0 {
			start = time.Now()
			if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(rawFD), 0x5800, 0); e != unix.ENOTTY {
				return nil, fmt.Errorf("minimal FUSE server: ioctl answered %v, want ENOTTY", e)
			}
			raw[i] = time.Since(start)
		}
	}
	f50, f99 := percentiles(floor)
	v50, v99 := percentiles(ver)
	const noop = "no-op FUSE ioctl (_IO('X',0) -> ENOTTY)"
	figs = append(figs, figure{Name: "ioctl round trip (GET_VERSION)", Unit: "ns", Value: float64(v50), P99: float64(v99),
		Floor: noop, FloorValue: float64(f50), Ratio: ratio(float64(v50), float64(f50)),
		Note: fmt.Sprintf("floor p99 %v", f99.Round(10*time.Nanosecond))})
	// The tail as issue 20 states it (p99 over p50), against the machine's own FUSE round trip's.
	tail := figure{Name: "ioctl tail (GET_VERSION p99/p50)", Unit: "x", Value: ratio(float64(v99), float64(v50))}
	goal := fmt.Sprintf("goal <= %gx: %s", ioctlTailGoal, goalText(tail.Value <= ioctlTailGoal))
	if rawFD >= 0 {
		r50, r99 := percentiles(raw)
		tail.Floor, tail.FloorValue = "minimal FUSE server's no-op, p99/p50", ratio(float64(r99), float64(r50))
		tail.Ratio = ratio(tail.Value, tail.FloorValue)
		tail.Note = fmt.Sprintf("%s; the minimal server (one thread reading /dev/fuse, no go-fuse, no emulator): p50 %v, p99 %v; the daemon's no-op %.2fx",
			goal, r50.Round(10*time.Nanosecond), r99.Round(10*time.Nanosecond), ratio(float64(f99), float64(f50)))
	} else {
		tail.Note = goal + rawNote
	}
	figs = append(figs, tail)

	// AQL round trip against a shared-memory ping-pong between two threads (taken first, while
	// the daemon's doorbell watcher is idle and leaves the CPUs to it).
	pp50 := pingPong(n)
	rt := make([]time.Duration, n)
	for i := range rt {
		if rt[i], err = c.barrier(5 * time.Second); err != nil {
			return nil, err
		}
	}
	a50, a99 := percentiles(rt)
	figs = append(figs, figure{Name: "AQL barrier round trip (doorbell -> signal)", Unit: "ns", Value: float64(a50), P99: float64(a99),
		Floor: "shared-memory ping-pong, two threads", FloorValue: float64(pp50), Ratio: ratio(float64(a50), float64(pp50)),
		Note: fmt.Sprintf("vs the no-op ioctl: %.3gx", ratio(float64(a50), float64(f50)))})

	// Packets per second on one and on 8 queues, against no-op ioctls per second (what one
	// syscall per packet would allow).
	ioctlRate := 1e9 / float64(f50)
	for _, nq := range []int{1, 8} {
		rate, err := packetRate(c, nq, n)
		if err != nil {
			return nil, err
		}
		figs = append(figs, figure{Name: fmt.Sprintf("AQL packets per second, %d queue(s)", nq), Unit: "packets/s", Value: rate,
			Floor: "no-op ioctls per second (1/p50)", FloorValue: ioctlRate, Ratio: ratio(rate, ioctlRate)})
	}

	// The first doorbell after a long idle, when the doorbell watcher has backed off to its
	// deep-idle poll, against the wake-up of a thread as long idle.
	if o.idleSamples > 0 {
		fig, err := firstDoorbell(c, o.idleWait, o.idleSamples)
		if err != nil {
			return nil, err
		}
		figs = append(figs, fig)
	}

	// GPUVM: MAP of 1 GiB in 4 KiB PTEs (GTT) and in 2 MiB leaves (VRAM).
	for _, m := range []struct {
		name string
		vram bool
	}{{"MAP 1 GiB GTT (4 KiB PTEs)", false}, {"MAP 1 GiB VRAM (2 MiB PDEs)", true}} {
		d, err := mapCost(c, m.vram)
		if err != nil {
			return nil, err
		}
		figs = append(figs, figure{Name: m.name, Unit: "ns", Value: float64(d), Floor: noop, FloorValue: float64(f50),
			Ratio: ratio(float64(d), float64(f50))})
	}

	// Retry faults through the whole driver: barrier completion signals in SVM memory, each on a
	// page the GPU has not mapped yet (XNACK on), against the same packets on mapped memory.
	c.Close() // one process per kmt.Device: the fault figure opens its own
	if err := waitNoProcess(dir); err != nil {
		return nil, err
	}
	if fig, err := faultRate(dir); err != nil {
		figs = append(figs, figure{Name: "GPU retry faults serviced (SVM, XNACK on)", Note: "not measured: " + err.Error()})
	} else {
		figs = append(figs, fig)
	}

	// A fault storm: one retry fault on each of many distinct SVM pages.
	if o.stormPages > 0 {
		if err := waitNoProcess(dir); err != nil {
			return nil, err
		}
		if fig, err := faultStorm(dir, o.stormPages); err != nil {
			figs = append(figs, figure{Name: "fault storm", Note: "not measured: " + err.Error()})
		} else {
			figs = append(figs, fig)
		}
		// The same through shader waves: every lane's store faults on a page of its own.
		if err := waitNoProcess(dir); err != nil {
			return nil, err
		}
		if fig, err := waveStorm(dir, o.stormPages); err != nil {
			figs = append(figs, figure{Name: "wave fault storm", Note: "not measured: " + err.Error()})
		} else {
			figs = append(figs, fig)
		}
	}

	// A one-wave kernel's dispatch round trip against the barrier's: what a kernel launch costs
	// the emulated GPU beyond the queue's own protocol (descriptor, admission, the wave, completion).
	if err := waitNoProcess(dir); err != nil {
		return nil, err
	}
	if fig, err := dispatchRoundTrip(dir, n, a50); err != nil {
		figs = append(figs, figure{Name: "kernel dispatch round trip", Note: "not measured: " + err.Error()})
	} else {
		figs = append(figs, fig)
	}

	// The ISA interpreter on real compiled kernels: on one worker thread (the rate per core) and on
	// the daemon's pool (--gpu-threads; one per CPU by default) when it has more, with the speed-up:
	// the two pool sizes alternate over the same buffers, three rounds (interpPlan).
	if err := waitNoProcess(dir); err != nil {
		return nil, err
	}
	pool := shader.Workers()
	defer shader.SetWorkers(pool)
	defer clientProc()()
	plan := interpPlan{Workers: []int{1}, Rounds: 3}
	if pool > 1 {
		plan.Workers = append(plan.Workers, pool)
	}
	kernels := []struct {
		name string
		run  func() (kernelFigs, error)
	}{
		{"vadd", func() (kernelFigs, error) { return interpRate(dir, o.vaddN, plan) }},
		{"matmul", func() (kernelFigs, error) { return matmulRate(dir, o.matmulM, plan) }},
	}
	res := make([]kernelFigs, len(kernels))
	errs := make([]error, len(kernels))
	for i, k := range kernels {
		res[i], errs[i] = k.run()
	}
	for wi, w := range plan.Workers { // rows by pool size, then kernel
		threads := fmt.Sprintf("%d worker threads", w)
		if w == 1 {
			threads = "1 worker thread"
		}
		for i, k := range kernels {
			if errs[i] != nil {
				figs = append(figs, figure{Name: "ISA interpreter, " + k.name + " (clang-14, gfx90a), " + threads, Note: "not measured: " + errs[i].Error()})
				continue
			}
			fig := res[i].Figs[wi]
			fig.Name += ", " + threads
			if wi > 0 {
				fig.Note += fmt.Sprintf("; %.2fx the 1-thread rate, %.2fx its rate per CPU-second (medians of %d rounds alternating 1 and %d threads)",
					res[i].Speedup[wi], res[i].CPUSpeed[wi], plan.Rounds, w)
				if i == 0 { // the host's own speed-up on as many threads, same run (hostScaling)
					pace := res[0].Runs[0].PerElement
					if h, err := hostScaling(o.vaddN, w, pace); err != nil {
						fig.Note += "; host floor not measured: " + err.Error()
					} else {
						fig.Note += fmt.Sprintf(" (the host's own on %d threads: a register loop %.2fx, c = a + b in 1 KiB slices over fresh shared memory %.2fx, over the same again %.2fx, and with %d rounds of register work per element, %v per element on one thread as the interpreter's %v, %.2fx)",
							w, h.ALU, h.Fresh, h.Warm, h.Rounds, h.PacedElement, pace, h.Paced)
					}
				}
			}
			figs = append(figs, fig)
		}
	}

	// Topology enumeration on a large tree, mounted vs a tmpfs copy.
	if fig, err := topoCost(f, o.topoProfile); err != nil {
		figs = append(figs, figure{Name: "topology enumeration", Note: "not measured: " + err.Error()})
	} else {
		figs = append(figs, fig)
	}
	return figs, nil
}

// clientProc gives the bench's in-process client a P of its own while it waits for long
// dispatches, and returns the restore. hsa.Signal.Wait sleeps in WAIT_EVENTS after 200 µs of
// spinning: a goroutine of the daemon's process in a blocking system call, which keeps its P until
// sysmon retakes it, up to 10 ms later (serve.go, syscallProcs). A client in a process of its own
// never holds one of the daemon's Ps: without this the interpreter figures on 2 worker threads
// kept 1.75-1.81 CPUs busy, the workers waiting for the P of the client's WAIT_EVENTS (perf sched
// timehist against the runtime trace: one worker running, the other runnable without a P, for
// 10 ms at a time).
func clientProc() (restore func()) {
	n := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(n + 1)
	return func() { runtime.GOMAXPROCS(n) }
}

// waitNoProcess waits until the daemon holds no kfd process: FUSE delivers the release of a
// closed device file after close(2) returns, and a device opened before that meets the previous
// one's process (README).
func waitNoProcess(mnt string) error { return waitNoProcessFor(mnt, 5*time.Second) }

func waitNoProcessFor(mnt string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		b, err := os.ReadFile(filepath.Join(mnt, nsexec.StatsPath))
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "\nprocesses 0\n") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the daemon still holds a process %v after the clients closed", timeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2], s[len(s)*99/100]
}

// pingPong is the median round trip of a word bounced between two OS threads through shared
// memory: the least a doorbell-to-signal round trip through another thread can cost.
func pingPong(n int) time.Duration {
	var ball atomic.Uint64
	done := make(chan struct{})
	// Spin without yielding (but yield now and then, so one CPU cannot deadlock). The two sides
	// yield as the barrier figure's do: the measuring side as a client thread (clientYield, it
	// keeps its P), the answering side as a queue goroutine (runtime.Gosched); two Gosched
	// spinners can end up sharing one P (clientYield).
	wait := func(v uint64) {
		for k := 1; ball.Load() != v; k++ {
			if k%4096 == 0 {
				clientYield()
			}
		}
	}
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := uint64(1); ; i += 2 {
			for k := 1; ball.Load() != i; k++ {
				if k%4096 == 0 {
					select {
					case <-done:
						return
					default:
					}
					runtime.Gosched()
				}
			}
			ball.Store(i + 1)
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	lat := make([]time.Duration, n)
	for i := range n {
		want := uint64(2*i + 2)
		start := time.Now()
		ball.Store(want - 1)
		wait(want)
		lat[i] = time.Since(start)
	}
	close(done)
	p50, _ := percentiles(lat)
	return p50
}

// packetRate submits batches of 63 barrier packets (one doorbell each, the last with a completion
// signal) on nq queues at once, one client thread per queue, and returns packets per second.
func packetRate(first *aqlClient, nq, n int) (float64, error) {
	cs := []*aqlClient{first}
	defer func() {
		for _, c := range cs[1:] {
			c.Close()
		}
	}()
	for range nq - 1 {
		c, err := newQueueClient(first.d)
		if err != nil {
			return 0, err
		}
		cs = append(cs, c)
	}
	batches := max(n/5, 100)
	var wg sync.WaitGroup
	errs := make(chan error, nq)
	start := time.Now()
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range batches {
				if err := c.batch63(5 * time.Second); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(63*batches*nq) / el.Seconds(), nil
}

// batch63 submits 63 barrier packets with one doorbell store (the ring holds 64), only the last
// with the completion signal, and spins until it drops.
func (c *aqlClient) batch63(timeout time.Duration) error {
	var none [aql.PacketSize]byte
	(&aql.BarrierPacket{}).Encode(none[:])
	idx := kmt.Word64(c.aq, aql.AMDQueueWriteDispatchIDOffset).Load()
	sig := kmt.Word64(c.aq, aqlSignalOff+aql.SignalValueOffset)
	sig.Store(1)
	for k := uint64(0); k < 63; k++ {
		slot := c.ring[64*((idx+k)%64) : 64*((idx+k)%64)+64]
		if k == 62 {
			copy(slot[4:], c.pkt[4:])
		} else {
			copy(slot[4:], none[4:])
		}
		relstore.Store32(kmt.Word32(slot, 0), c.hdr)
	}
	relstore.Store64(kmt.Word64(c.aq, aql.AMDQueueWriteDispatchIDOffset), idx+63)
	c.q.RingDoorbell(idx + 62)
	start := time.Now()
	for sig.Load() != 0 {
		if time.Since(start) > timeout {
			return fmt.Errorf("batch at %d did not complete in %v", idx, timeout)
		}
		// runtime.Gosched, not clientYield: packetRate runs up to 8 of these clients as
		// goroutines of the bench, which must leave the Ps to the queues' goroutines (with
		// sched_yield 8 queues fell from about 10 M to 0.06 M packets/s, the queues running only
		// when the clients were preempted).
		runtime.Gosched()
	}
	return nil
}

// mapCost is the median of 5 MAP_MEMORY_TO_GPU calls of a 1 GiB BO (each followed by UNMAP).
func mapCost(c *aqlClient, vram bool) (time.Duration, error) {
	const size = 1 << 30
	alloc := c.d.AllocGTT
	if vram {
		alloc = c.d.AllocVRAM
	}
	m, err := alloc(c.g, size, 0)
	if err != nil {
		return 0, err
	}
	defer m.Free()
	var ds []time.Duration
	for range 5 {
		start := time.Now()
		if err := m.Map(); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(start))
		if err := m.Unmap(); err != nil {
			return 0, err
		}
	}
	p50, _ := percentiles(ds)
	return p50, nil
}

// faultRate measures GPU retry faults serviced per second through the driver: with XNACK on,
// 256 barrier packets whose completion signals lie on 256 distinct pages of plain client memory
// the GPU has not mapped; each completion faults, the SVM range list maps the page and the
// access is replayed. The pages are an SVM range of granularity 0: with the default granularity
// (2^9 pages) the first fault maps the whole 2 MiB and the other 255 packets do not fault (the
// figure counted one fault until it set the granularity). The floor is the same packets with
// signals on memory already mapped.
func faultRate(mnt string) (figure, error) {
	d, err := kmt.Open(kmt.Config{Root: mnt})
	if err != nil {
		return figure{}, err
	}
	defer d.Close()
	if err := d.SetXNACKMode(true); err != nil {
		return figure{}, fmt.Errorf("SET_XNACK_MODE: %w", err)
	}
	c := &aqlClient{d: d, g: d.GPUs()[0], own: true}
	if err := c.setupQueue(); err != nil {
		return figure{}, err
	}
	const pages = 256
	mem, err := unix.Mmap(-1, 0, pages*4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return figure{}, err
	}
	defer unix.Munmap(mem)
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	if err := d.SVMSetAttr(base, pages*4096, kmt.SVMAttr{Type: abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, Value: 0}); err != nil {
		return figure{}, fmt.Errorf("SVM SET_ATTR granularity 0: %w", err)
	}
	// One packet at a time: each waits for the previous one's completion.
	var each [2][]time.Duration
	run := func(k int, sigVA func(i int) uint64, word func(i int) *atomic.Uint64) (time.Duration, error) {
		start := time.Now()
		for i := range pages {
			word(i).Store(1)
			t := time.Now()
			if err := c.barrierTo(sigVA(i), word(i), 5*time.Second); err != nil {
				return 0, err
			}
			each[k] = append(each[k], time.Since(t))
		}
		return time.Since(start), nil
	}
	faulted, err := run(0, func(i int) uint64 { return base + uint64(i)*4096 }, func(i int) *atomic.Uint64 { return kmt.Word64(mem, i*4096+8) })
	if err != nil {
		return figure{}, err
	}
	bo, err := d.AllocGTT(c.g, pages*4096, kmt.Coherent)
	if err != nil {
		return figure{}, err
	}
	if err := bo.Map(); err != nil {
		return figure{}, err
	}
	mapped, err := run(1, func(i int) uint64 { return bo.VA + uint64(i)*4096 }, func(i int) *atomic.Uint64 { return kmt.Word64(bo.Bytes(), i*4096+8) })
	if err != nil {
		return figure{}, err
	}
	rate, floorRate := pages/faulted.Seconds(), pages/mapped.Seconds()
	f50, f99 := percentiles(each[0])
	m50, _ := percentiles(each[1])
	return figure{Name: "GPU retry faults serviced (SVM, XNACK on)", Unit: "faults/s", Value: rate,
		Floor: "the same packets, signals in a mapped BO (/s)", FloorValue: floorRate, Ratio: ratio(rate, floorRate),
		Note: fmt.Sprintf("one packet at a time: %v per packet whose signal faults (p50 %v, p99 %v) vs %v (p50 %v)",
			(faulted / pages).Round(time.Microsecond/10), f50.Round(time.Microsecond/10), f99.Round(time.Microsecond),
			(mapped / pages).Round(time.Microsecond/10), m50.Round(time.Microsecond/10))}, nil
}

// topoCost mounts profile and times kmt.ReadTopology (libhsakmt's topology snapshot) of its tree
// against the same tree copied to a tmpfs, median of 9 each, the runs alternating; the note adds the
// same tree on a minimal FUSE server that mirrors the copy (FUSE's own cost, same run).
//
// The floor's tree sits at the same path as on the mount, under a directory as deep as the mount
// point (MNT/sys/devices/virtual/kfd/kfd/topology against TMP/sys/devices/virtual/kfd/kfd/topology):
// libhsakmt opens every file by its full path, and each path component costs a lookup on either
// file system, so a floor with a shorter path would charge the mount for components the floor
// never walks. The note gives the ratio against the tree at the copy's root too (five components
// shorter than the mount's path), the floor this figure used before 2026-12-05.
func topoCost(base *serveFlags, profile string) (figure, error) {
	dir, err := os.MkdirTemp("", "kfdemu-bench-topo-")
	if err != nil {
		return figure{}, err
	}
	defer os.Remove(dir)
	f := *base
	f.mount, f.profile = dir, profile
	srv, _, err := mountEmulator(&f, newLogger("warn"))
	if err != nil {
		return figure{}, err
	}
	defer srv.Unmount()
	tmpRoot := "/dev/shm"
	if st, err := os.Stat(tmpRoot); err != nil || !st.IsDir() {
		tmpRoot = ""
	}
	copyDir, err := os.MkdirTemp(tmpRoot, "kfdemu-bench-tree-")
	if err != nil {
		return figure{}, err
	}
	defer os.RemoveAll(copyDir)
	const treePath = "sys/devices/virtual/kfd/kfd/topology"
	src := filepath.Join(dir, treePath)
	// Pad the copy's root to the mount point's depth (they differ only with TMPDIR set elsewhere).
	depth := func(p string) int { return strings.Count(filepath.Clean(p), "/") }
	deepRoot := copyDir
	for depth(deepRoot) < depth(dir) {
		deepRoot = filepath.Join(deepRoot, "d")
	}
	deep := filepath.Join(deepRoot, treePath)
	short := filepath.Join(copyDir, "topology")
	files := 0
	err = filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if e.IsDir() {
			for _, root := range []string{deep, short} {
				if err := os.MkdirAll(filepath.Join(root, rel), 0o755); err != nil {
					return err
				}
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		for _, root := range []string{deep, short} {
			if err := os.WriteFile(filepath.Join(root, rel), b, 0o444); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return figure{}, err
	}
	trees := []string{src, deep, short}
	// The FUSE floor: the same tree, at the same depth, on a minimal FUSE server mirroring the
	// tmpfs copy with the mount's caching (rawFUSE, mirrorFloor).
	fuseNote := ""
	if mf, err := startRawFUSE(deepRoot); err != nil {
		fuseNote = fmt.Sprintf("; no minimal FUSE server floor: %v", err)
	} else {
		defer mf.stop()
		trees = append(trees, filepath.Join(mf.dir, treePath))
	}
	runs := make([][]time.Duration, len(trees))
	nodes := 0
	for range 9 {
		for i, d := range trees {
			start := time.Now()
			t, err := kmt.ReadTopology(d)
			if err != nil {
				return figure{}, err
			}
			runs[i] = append(runs[i], time.Since(start))
			if i == 0 {
				nodes = len(t.Nodes)
			}
		}
	}
	p50 := make([]time.Duration, len(runs))
	for i := range runs {
		p50[i], _ = percentiles(runs[i])
	}
	onMount, onTmp, onShort := float64(p50[0]), float64(p50[1]), float64(p50[2])
	if len(p50) > 3 {
		onFUSE := float64(p50[3])
		fuseNote = fmt.Sprintf("; on a minimal FUSE server mirroring the tmpfs copy (one thread, no go-fuse, the mount's caching), same path: %v, %.2fx tmpfs, the mount %.2fx that",
			time.Duration(onFUSE).Round(time.Microsecond), ratio(onFUSE, onTmp), ratio(onMount, onFUSE))
	}
	return figure{Name: fmt.Sprintf("topology snapshot, %s (%d nodes)", profile, nodes), Unit: "ns", Value: onMount,
		Floor: "the same tree (" + fmt.Sprint(files) + " files) on tmpfs, same path", FloorValue: onTmp, Ratio: ratio(onMount, onTmp),
		Note: fmt.Sprintf("the tree at the tmpfs copy's root (a path %d components shorter): %v, %.2fx",
			depth(deep)-depth(short), time.Duration(onShort).Round(time.Microsecond), ratio(onMount, onShort)) + fuseNote}, nil
}

//go:embed testdata/rocm/vadd.cl
var vaddSource string

// interpRate compiles the vadd kernel of cmd/kfdemu/testdata/rocm/vadd.cl with clang-14 (needed on
// PATH), loads it with runtime/hsa and runs it over n elements as plan says (runKernel): elements
// per second through the whole stack (dispatch, interpreter, memory through the GPUVM), against the
// same loop in Go on the CPU as the floor, and wave-instructions per second from the daemon's
// counter, for each pool size of the plan.
func interpRate(mnt string, n int, plan interpPlan) (kernelFigs, error) {
	if n < 256 {
		return kernelFigs{}, fmt.Errorf("-vadd %d: at least 256 elements", n)
	}
	var cpu time.Duration
	kr, err := runKernel(mnt, "vadd", vaddSource, n, []uint32{uint32(n)}, [3]uint32{uint32(n)}, [3]uint16{256}, plan,
		func(a, b []float32) {
			for i := range n {
				a[i], b[i] = float32(i), 0.5
			}
		},
		func(a, b, c []float32) error {
			for i := range n {
				if c[i] != float32(i)+0.5 {
					return fmt.Errorf("vadd: c[%d] = %v, want %v", i, c[i], float32(i)+0.5)
				}
			}
			// Floor: the same additions by the CPU in Go.
			cstart := time.Now()
			for i := range n {
				c[i] = a[i] + b[i]
			}
			cpu = time.Since(cstart)
			return nil
		})
	if err != nil {
		return kernelFigs{}, err
	}
	return kr.figures(fmt.Sprintf("ISA interpreter, vadd over %d elements", n), "elements/s", float64(n), n,
		"the same loop in Go on the CPU", float64(n)/cpu.Seconds()), nil
}

// interpRun is an interpreter figure's rates, those of its dispatches after the first over one
// pool size (runKernel: the interpreter's own speed): wave-instructions per wall-clock second and
// per CPU-second of the process (benchcpu.go) and the CPU use behind them; PerElement, the time per
// output element (the pace of the host floor of the speed-ups, hostScaling).
type interpRun struct {
	Rate, CPURate float64
	Use           cpuUse
	PerElement    time.Duration
}

// kernelFigs is a kernel's figures, one per pool size of its plan, with their rates and the
// speed-ups over the first pool size (1 for it): medians over the rounds of the ratio of the two
// dispatches of a round, in wall-clock and per CPU-second.
type kernelFigs struct {
	Figs              []figure
	Runs              []interpRun
	Speedup, CPUSpeed []float64
}

// figures makes kr's figures: name, unit and work per dispatch (elements or multiply-adds), elems
// output elements, the Go floor.
func (kr kernelRun) figures(name, unit string, work float64, elems int, floor string, floorValue float64) kernelFigs {
	var kf kernelFigs
	n := max(len(kr.Workers), 1)
	for i := range n {
		var el time.Duration
		var insts uint64
		var use cpuUse
		var ratios, cpuRatios []float64
		for _, round := range kr.Warm {
			d := round[i]
			el, insts, use = el+d.El, insts+d.Insts, use.add(d.Use)
			if b := round[0]; d.El > 0 && d.Insts > 0 {
				ratios = append(ratios, float64(b.El)/float64(d.El))
				if b.Use.CPU > 0 && d.Use.CPU > 0 {
					// rate per CPU-second: insts / CPU; its ratio
					cpuRatios = append(cpuRatios, float64(b.Use.CPU)/float64(d.Use.CPU))
				}
			}
		}
		runs := max(len(kr.Warm), 1)
		per := el / time.Duration(runs)
		r := interpRun{Use: use}
		if per > 0 {
			r.Rate = float64(insts) / float64(runs) / per.Seconds()
			r.PerElement = per / time.Duration(max(elems, 1))
		}
		if use.CPU > 0 && use.Wall > 0 {
			r.CPURate = r.Rate * use.Wall.Seconds() / use.CPU.Seconds()
		}
		rate := 0.0
		if per > 0 {
			rate = work / per.Seconds()
		}
		note := fmt.Sprintf("%.3gM wave-instructions/s (%d per dispatch, %v each over %d dispatches after the first); %.3gM per CPU-second of the daemon's process (%.2f CPUs busy; %s)",
			r.Rate/1e6, insts/uint64(runs), per.Round(time.Millisecond), len(kr.Warm), r.CPURate/1e6, use.Busy(), use.stealNote())
		if i == n-1 && kr.Fresh.El > 0 {
			note += fmt.Sprintf("; the first dispatch, over fresh buffers on this pool: %.3gM (%v)",
				float64(kr.Fresh.Insts)/kr.Fresh.El.Seconds()/1e6, kr.Fresh.El.Round(time.Millisecond))
		}
		kf.Figs = append(kf.Figs, figure{Name: name, Unit: unit, Value: rate, Floor: floor, FloorValue: floorValue, Ratio: ratio(rate, floorValue), Note: note})
		kf.Runs = append(kf.Runs, r)
		kf.Speedup, kf.CPUSpeed = append(kf.Speedup, median(ratios)), append(kf.CPUSpeed, median(cpuRatios))
	}
	return kf
}

// dispatchRoundTrip dispatches vadd over 64 elements (one work-group of one wave) n times, each
// after the last completed: the round trip from the doorbell to the completion signal, against
// the barrier packet's round trip of the same run (barrier).
func dispatchRoundTrip(mnt string, n int, barrier time.Duration) (figure, error) {
	r, g, k, err := openKernel(hsa.Config{Root: mnt}, "vadd", vaddSource)
	if err != nil {
		return figure{}, err
	}
	defer r.Shutdown()
	const items = 64
	buf, err := g.SystemPool().Allocate(12 * items)
	if err != nil {
		return figure{}, err
	}
	defer buf.Free()
	args, err := r.KernargPool().Allocate(uint64(k.KernargSize))
	if err != nil {
		return figure{}, err
	}
	defer args.Free()
	ab := args.Bytes()
	for i := range 3 {
		binary.LittleEndian.PutUint64(ab[8*i:], buf.VA+uint64(4*items*i))
	}
	binary.LittleEndian.PutUint32(ab[24:], items)
	q, err := g.CreateQueue(64, nil)
	if err != nil {
		return figure{}, err
	}
	defer q.Destroy()
	done, err := r.NewSignal(1, true)
	if err != nil {
		return figure{}, err
	}
	defer done.Destroy()
	rt := make([]time.Duration, n)
	d := hsa.Dispatch{Kernel: k, Grid: [3]uint32{items}, Workgroup: [3]uint16{items}, Kernarg: args.VA, Completion: done}
	for i := -10; i < n; i++ { // the first ones decode the kernel: not counted
		el, err := dispatchWait(q, d, "vadd", time.Minute)
		if err != nil {
			return figure{}, err
		}
		if i >= 0 {
			rt[i] = el
		}
	}
	d50, d99 := percentiles(rt)
	return figure{Name: "kernel dispatch round trip (one wave, doorbell -> signal)", Unit: "ns", Value: float64(d50), P99: float64(d99),
		Floor: "AQL barrier round trip (above)", FloorValue: float64(barrier), Ratio: ratio(float64(d50), float64(barrier))}, nil
}

//go:embed testdata/rocm/matmul.cl
var matmulSource string

// matmulRate runs the tiled matmul kernel of cmd/kfdemu/testdata/rocm/matmul.cl (16x16 work-groups,
// tiles in LDS: ds_read2 row reads and broadcasts, barriers) on m x m matrices of small integers
// through runtime/hsa, as plan says (runKernel): multiply-adds per second against the same product
// computed by a Go loop on the CPU (the floor, whose result the kernel's must equal exactly: the
// sums of small integers are exact in float32 in any order), and wave-instructions per second from
// the daemon's counter.
func matmulRate(mnt string, m int, plan interpPlan) (kernelFigs, error) {
	if m < 16 || m%16 != 0 || m > 4096 {
		return kernelFigs{}, fmt.Errorf("-matmul %d: a multiple of 16 from 16 to 4096", m)
	}
	var cpu time.Duration
	kr, err := runKernel(mnt, "matmul", matmulSource, m*m, []uint32{uint32(m), uint32(m), uint32(m)},
		[3]uint32{uint32(m), uint32(m)}, [3]uint16{16, 16}, plan,
		func(a, b []float32) {
			for i := range a {
				a[i], b[i] = float32(i%7), float32((i/m+2*i)%5)
			}
		},
		func(a, b, c []float32) error {
			// Floor: the product by the CPU in Go (i-k-j order, the fast one for row-major arrays).
			want := make([]float32, m*m)
			cstart := time.Now()
			for i := range m {
				row := want[i*m : i*m+m]
				for kk := range m {
					x, brow := a[i*m+kk], b[kk*m:kk*m+m]
					for j := range row {
						row[j] += x * brow[j]
					}
				}
			}
			cpu = time.Since(cstart)
			for i, v := range want {
				if c[i] != v {
					return fmt.Errorf("matmul: C[%d][%d] = %v, want %v", i/m, i%m, c[i], v)
				}
			}
			return nil
		})
	if err != nil {
		return kernelFigs{}, err
	}
	ops := float64(m) * float64(m) * float64(m)
	return kr.figures(fmt.Sprintf("ISA interpreter, matmul %dx%d", m, m), "multiply-adds/s", ops, m*m,
		"the same product in Go on the CPU", ops/cpu.Seconds()), nil
}

// runKernel loads the OpenCL C kernel name of source (openKernel) on the first GPU of the mount,
// gives it one system-memory buffer of three float32 arrays of n elements, passed as its first
// three arguments (A, B, C) followed by scalars, lets fill set A and B, and dispatches it over grid
// in work-groups wg: once over the fresh buffers, then over the same ones as plan says. check sees
// the arrays after the last dispatch.
func runKernel(mnt, name, source string, n int, scalars []uint32, grid [3]uint32, wg [3]uint16, plan interpPlan,
	fill func(a, b []float32), check func(a, b, c []float32) error) (kernelRun, error) {
	r, g, k, err := openKernel(hsa.Config{Root: mnt}, name, source)
	if err != nil {
		return kernelRun{}, err
	}
	defer r.Shutdown()
	buf, err := g.SystemPool().Allocate(uint64(12 * n))
	if err != nil {
		return kernelRun{}, err
	}
	defer buf.Free()
	mem := buf.Bytes()
	f := unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), 3*n)
	a, b, c := f[:n], f[n:2*n], f[2*n:]
	fill(a, b)
	args, err := r.KernargPool().Allocate(uint64(k.KernargSize))
	if err != nil {
		return kernelRun{}, err
	}
	defer args.Free()
	ab := args.Bytes()
	le := binary.LittleEndian
	for i := range 3 {
		le.PutUint64(ab[8*i:], buf.VA+uint64(4*n*i))
	}
	for i, v := range scalars {
		le.PutUint32(ab[24+4*i:], v)
	}
	q, err := g.CreateQueue(64, nil)
	if err != nil {
		return kernelRun{}, err
	}
	defer q.Destroy()
	done, err := r.NewSignal(1, true)
	if err != nil {
		return kernelRun{}, err
	}
	defer done.Destroy()
	d := hsa.Dispatch{Kernel: k, Grid: grid, Workgroup: wg, Kernarg: args.VA, Completion: done}
	// measure dispatches d once: time, wave instructions, CPU use.
	measure := func() (dispatchRun, error) {
		before := statValue(mnt, "wave_instructions")
		cpu := sampleCPU()
		start := time.Now()
		if _, err := dispatchWait(q, d, name, 10*time.Minute); err != nil {
			return dispatchRun{}, err
		}
		el, use := time.Since(start), cpu.since()
		return dispatchRun{El: el, Insts: statValue(mnt, "wave_instructions") - before, Use: use}, nil
	}
	kr := kernelRun{Workers: plan.Workers}
	if w := plan.Workers; len(w) > 0 {
		shader.SetWorkers(w[len(w)-1]) // the first dispatch on the plan's last pool (figures' note)
	}
	if kr.Fresh, err = measure(); err != nil {
		return kernelRun{}, err
	}
	start := time.Now()
	for r := 0; r < max(plan.Rounds, 1) || time.Since(start) < plan.Busy; r++ {
		var round []dispatchRun
		for i := range max(len(plan.Workers), 1) {
			if len(plan.Workers) > 0 {
				shader.SetWorkers(plan.Workers[i]) // read when a dispatch starts; none runs now
			}
			dr, err := measure()
			if err != nil {
				return kernelRun{}, err
			}
			round = append(round, dr)
		}
		kr.Warm = append(kr.Warm, round)
	}
	return kr, check(a, b, c)
}

// interpPlan is how runKernel dispatches a kernel after its first dispatch: once with the pool set
// to each entry of Workers in turn (shader.SetWorkers; empty: the pool as it is), that list at
// least Rounds times and again until Busy has passed. Alternating the pool sizes over the same
// buffers makes a speed-up the median of ratios of dispatches a moment apart: this VM's speed per
// core moves by 1.5x between passes a minute apart.
type interpPlan struct {
	Workers []int
	Rounds  int
	Busy    time.Duration
}

// kernelRun is runKernel's measure of a kernel: its first dispatch, over fresh buffers, and the
// dispatches after it over the same buffers, Warm[round][i] on Workers[i]. The first one's memory
// accesses are the daemon's first touches of the buffers' pages: page faults in the host kernel
// (c's pages allocated and zeroed, a's and b's mapped), about 60 k for kfdemu bench's vadd, with
// the workers waiting on each other's page locks (shmem_fault). The others measure the
// interpreter.
type kernelRun struct {
	Fresh   dispatchRun
	Warm    [][]dispatchRun
	Workers []int
}

// dispatchRun is one dispatch's time, the daemon's wave-instructions and the CPU it used
// (benchcpu.go).
type dispatchRun struct {
	El    time.Duration
	Insts uint64
	Use   cpuUse
}

// dispatchWait submits d with its completion signal set to 1 and waits up to timeout for the
// signal to reach 0: the round trip from the doorbell to the completion signal.
func dispatchWait(q *hsa.Queue, d hsa.Dispatch, name string, timeout time.Duration) (time.Duration, error) {
	d.Completion.Store(1, hsa.Relaxed)
	start := time.Now()
	if _, err := q.SubmitDispatch(d); err != nil {
		return 0, err
	}
	if _, ok, err := d.Completion.Wait(hsa.Eq, 0, timeout); !ok || err != nil {
		return 0, fmt.Errorf("%s did not complete: %v %v", name, err, q.Err())
	}
	return time.Since(start), nil
}

// compileCL builds an OpenCL C kernel source for gfx90a with clang-14 and ld.lld-14 (needed on PATH)
// and returns the code object.
func compileCL(name, source string) ([]byte, error) {
	for _, tool := range []string{"clang-14", "ld.lld-14"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s not installed", tool)
		}
	}
	dir, err := os.MkdirTemp("", "kfdemu-bench-"+name+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src, obj, co := filepath.Join(dir, name+".cl"), filepath.Join(dir, name+".o"), filepath.Join(dir, name+".co")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		return nil, err
	}
	if out, err := exec.Command("clang-14", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-nogpulib", "-O2",
		"-cl-std=CL2.0", "-c", src, "-o", obj).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("clang-14: %v: %s", err, out)
	}
	if out, err := exec.Command("ld.lld-14", "-shared", obj, "-o", co).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ld.lld-14: %v: %s", err, out)
	}
	return os.ReadFile(co)
}

// openKernel builds the OpenCL C kernel name from source (compileCL), starts runtime/hsa with cfg
// and loads it on the first GPU. The caller shuts the runtime down.
func openKernel(cfg hsa.Config, name, source string) (*hsa.Runtime, *hsa.Agent, *hsa.Kernel, error) {
	co, err := compileCL(name, source)
	if err != nil {
		return nil, nil, nil, err
	}
	r, err := hsa.Init(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	g := r.GPUs()[0]
	exe, err := g.LoadCodeObject(co)
	if err == nil {
		var k *hsa.Kernel
		if k, err = exe.Kernel(name); err == nil {
			return r, g, k, nil
		}
	}
	r.Shutdown()
	return nil, nil, nil, err
}

// statValue reads one counter of MNT/sys/kernel/debug/kfdemu/stats (0 if absent).
func statValue(mnt, key string) uint64 {
	b, _ := os.ReadFile(filepath.Join(mnt, nsexec.StatsPath))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+" "); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}
