package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kfdemu/kfdemu/gpu/shader"
	"github.com/kfdemu/kfdemu/internal/testenv"
)

// BenchmarkIdleQueues is kfdemu bench's row "daemon CPU over 2 s, 64 idle AQL queues in 16
// processes" in go test: the daemon's (this process's) CPU time over 2 s while 16 client
// processes (re-executions of this test binary, benchclient.go) hold 4 idle AQL queues each,
// against 2 s with no client, in the same run; metrics in % of one CPU and their ratio. On mi210
// the 64 queues oversubscribe the GPU's 24 hardware queue slots, but the hardware scheduler
// time-slices only queues with work (gpu/hws), so idle ones cost nothing there; on mi210x8 (client i on GPU i mod 8) each GPU holds 8. Each iteration takes
// about 7 s:
//
//	go test -run '^$' -bench BenchmarkIdleQueues -benchtime 1x ./cmd/kfdemu
func BenchmarkIdleQueues(b *testing.B) {
	testenv.NeedMount(b)
	for _, profile := range []string{"mi210", "mi210x8"} {
		b.Run(profile, func(b *testing.B) {
			mnt, unmount := benchMount(b, profile)
			defer unmount()
			var base, busy float64
			for range b.N {
				base += float64(idleCPU(200 * time.Millisecond))
				ps, err := startClients(mnt, idleProcs, clientSpec{queues: idleQueuesPerProc}, time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				busy += float64(idleCPU(idleSettle))
				if err := stopClients(ps, 10*time.Second); err != nil {
					b.Fatal(err)
				}
				if err := waitNoProcess(mnt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(100*busy/float64(b.N)/float64(idleSpan), "%cpu-64queues")
			b.ReportMetric(100*base/float64(b.N)/float64(idleSpan), "%cpu-noclient")
			b.ReportMetric(ratio(busy, base), "ratio")
		})
	}
}

// BenchmarkBarrierRoundTrip is kfdemu bench's row "AQL barrier round trip (doorbell -> signal)" in
// go test: b.N round trips of one barrier-AND packet (doorbell store, completion signal with an
// event mailbox, the client spinning on it) on a mounted mi210, against the two-thread
// shared-memory ping-pong of the same run; metrics are both p50s and their ratio. With -cpuprofile
// it profiles the daemon's packet path (doorbell spin -> CP -> signal -> interrupt):
//
//	go test -run '^$' -bench BenchmarkBarrierRoundTrip -benchtime 20000x ./cmd/kfdemu
func BenchmarkBarrierRoundTrip(b *testing.B) {
	testenv.NeedMount(b)
	mnt, unmount := benchMount(b, "mi210")
	defer unmount()
	c, err := newAQLClient(mnt)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	floor := pingPong(max(b.N, 1000))
	rt := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range rt {
		if rt[i], err = c.barrier(5 * time.Second); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	p50, _ := percentiles(rt)
	b.ReportMetric(float64(p50), "ns-p50")
	b.ReportMetric(float64(floor), "ns-pingpong")
	b.ReportMetric(ratio(float64(p50), float64(floor)), "ratio")
}

// BenchmarkKernelRoundTrip is kfdemu bench's kernel dispatch row in go test (needs clang-14 and
// ld.lld-14): vadd over one wave, each dispatch after the last completed; p50 and p99 of the round
// trip from the doorbell to the completion signal, against the barrier packet's p50 in the same
// run. With -cpuprofile it profiles the daemon's dispatch path.
func BenchmarkKernelRoundTrip(b *testing.B) {
	testenv.NeedMount(b)
	mnt, unmount := benchMount(b, "mi210")
	defer unmount()
	defer clientProc()()
	c, err := newAQLClient(mnt)
	if err != nil {
		b.Fatal(err)
	}
	barrier := make([]time.Duration, 2000)
	for i := range barrier {
		if barrier[i], err = c.barrier(5 * time.Second); err != nil {
			b.Fatal(err)
		}
	}
	c.Close()
	a50, _ := percentiles(barrier)
	for _, tool := range []string{"clang-14", "ld.lld-14"} { // the kernel is compiled (compileCL)
		if _, err := exec.LookPath(tool); err != nil {
			b.Skip(tool, "not installed")
		}
	}
	b.ResetTimer()
	fig, err := dispatchRoundTrip(mnt, max(b.N, 100), a50)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(fig.Value, "ns-p50")
	b.ReportMetric(fig.P99, "ns-p99")
	b.ReportMetric(fig.Ratio, "ratio-barrier")
}

// BenchmarkFaultStorm is kfdemu bench's fault-storm row in go test: the GPU touches pages
// distinct pages of plain client memory (SVM, XNACK on, granularity 0: one retry fault each) in
// bursts of 62 barrier packets; metrics are retry faults per second, µs per fault and the same
// bursts over the pages once mapped (the floor), in the same run. With -cpuprofile it profiles the
// daemon's fault path (wave access -> GPUVM walk -> svm_range_restore_pages -> replay):
//
//	go test -run '^$' -bench BenchmarkFaultStorm -benchtime 1x ./cmd/kfdemu
func BenchmarkFaultStorm(b *testing.B) { benchStorm(b, faultStorm) }

// BenchmarkWaveStorm is kfdemu bench's wave fault storm in go test (needs clang-14 and ld.lld-14):
// every lane of the touch kernel's waves stores to a page of its own.
//
//	go test -run '^$' -bench BenchmarkWaveStorm -benchtime 2x ./cmd/kfdemu
func BenchmarkWaveStorm(b *testing.B) { benchStorm(b, waveStorm) }

// benchStorm runs a fault storm of 32768 pages b.N times on a mounted mi210 and reports its mean
// rate, µs per fault and the floor (the same pages again, mapped).
func benchStorm(b *testing.B, storm func(mnt string, pages int) (figure, error)) {
	testenv.NeedMount(b)
	mnt, unmount := benchMount(b, "mi210")
	defer unmount()
	const pages = 1 << 15
	var rate, floor float64
	for range b.N {
		fig, err := storm(mnt, pages)
		if err != nil {
			b.Fatal(err)
		}
		b.Log(fig.Note)
		rate += fig.Value
		floor += fig.FloorValue
	}
	rate, floor = rate/float64(b.N), floor/float64(b.N)
	b.ReportMetric(rate, "faults/s")
	b.ReportMetric(1e6/rate, "µs/fault")
	b.ReportMetric(floor, "mapped-pages/s")
	b.ReportMetric(rate/floor, "ratio")
}

// benchMount mounts the emulator with profile in a temporary directory for one run of a benchmark
// function (warn-level log); the caller defers unmount.
func benchMount(b *testing.B, profile string) (mnt string, unmount func()) {
	f := serveFlags{mount: b.TempDir(), profile: profile, logLevel: "warn"}
	srv, _, err := mountEmulator(&f, newLogger("warn"))
	if err != nil {
		b.Fatal(err)
	}
	return f.mount, func() { srv.Unmount() }
}

// BenchmarkInterpreter is kfdemu bench's interpreter figures in go test (needs clang-14 and
// ld.lld-14): vadd over 2^24 elements and matmul 512x512 through the mount (runtime/hsa, the
// daemon's GPUVM ports), on 1 worker thread and on 2 alternately for interpBusy (interpPlan);
// metrics wave-instructions per second of the dispatches after the first (runKernel: the steady
// state, without the first dispatch's page faults on the daemon's mapping of the fresh buffers)
// and the speed-up, the median of the rounds' ratios. host/threads=2 is the floor of the speed-ups
// (hostScaling), its paced loop at vadd's pace on 1 worker. With -cpuprofile it profiles the
// daemon's dispatch path:
//
//	go test -run '^$' -bench BenchmarkInterpreter -benchtime 1x ./cmd/kfdemu
func BenchmarkInterpreter(b *testing.B) {
	const interpBusy = 2 * time.Second
	testenv.NeedMount(b)
	mnt, unmount := benchMount(b, "mi210")
	defer unmount()
	pool := shader.Workers()
	defer shader.SetWorkers(pool)
	defer clientProc()()
	// 1 and 2 workers alternate over the same buffers, for interpBusy (interpPlan).
	plan := interpPlan{Workers: []int{1, 2}, Rounds: 3, Busy: interpBusy}
	kernels := []struct {
		name string
		run  func() (kernelFigs, error)
	}{
		{"vadd", func() (kernelFigs, error) { return interpRate(mnt, 1<<24, plan) }},
		{"matmul", func() (kernelFigs, error) { return matmulRate(mnt, 512, plan) }},
	}
	var pace time.Duration // vadd's time per element on 1 worker: the host floor's pace
	for _, k := range kernels {
		b.Run(k.name, func(b *testing.B) {
			var r1, r2, c1, c2, sp, csp, busy, steal float64
			for range b.N {
				if err := waitNoProcess(mnt); err != nil {
					b.Fatal(err)
				}
				kf, err := k.run()
				if err != nil {
					b.Fatal(err)
				}
				one, two := kf.Runs[0], kf.Runs[1]
				r1, r2, c1, c2 = r1+one.Rate, r2+two.Rate, c1+one.CPURate, c2+two.CPURate
				sp, csp, busy, steal = sp+kf.Speedup[1], csp+kf.CPUSpeed[1], busy+two.Use.Busy(), steal+two.Use.Steal
				if k.name == "vadd" {
					pace = one.PerElement // the last run's
				}
			}
			n := float64(b.N)
			b.ReportMetric(r1/n/1e6, "Mwave-inst/s-1w")
			b.ReportMetric(r2/n/1e6, "Mwave-inst/s-2w")
			// the median of the rounds' 2-worker over 1-worker ratios, of the wall clock and per
			// CPU-second of the process (the in-process daemon); the CPUs 2 workers kept busy and
			// the share of the machine's time the hypervisor stole meanwhile (benchcpu.go)
			b.ReportMetric(sp/n, "speedup")
			b.ReportMetric(csp/n, "cpu-s-speedup")
			b.ReportMetric(c1/n/1e6, "Mwave-inst/cpu-s-1w")
			b.ReportMetric(busy/n, "busy-cpus-2w")
			b.ReportMetric(100*steal/n, "steal-%")
		})
	}
	// The floor of the workers=2 speed-ups, same run: the host's own on 2 threads (hostScaling),
	// its paced loop at vadd's time per element on 1 worker.
	b.Run("host/threads=2", func(b *testing.B) {
		var alu, fresh, warm, paced float64
		for range b.N {
			h, err := hostScaling(1<<24, 2, pace)
			if err != nil {
				b.Fatal(err)
			}
			alu, fresh, warm, paced = alu+h.ALU, fresh+h.Fresh, warm+h.Warm, paced+h.Paced
		}
		b.ReportMetric(alu/float64(b.N), "alu-speedup")
		b.ReportMetric(fresh/float64(b.N), "fresh-stream-speedup")
		b.ReportMetric(warm/float64(b.N), "warm-stream-speedup")
		b.ReportMetric(paced/float64(b.N), "paced-stream-speedup")
	})
}

// The minimal FUSE server of the ioctl figure's floor (a child process) serves its one file
// (lookup, open, an ioctl answered ENOTTY, close) and stops cleanly: the child exited 0, nothing
// left mounted.
func TestRawFUSE(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: mounting a FUSE file system with mount(2) needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("skipping: %v", err)
	}
	r, err := startRawFUSE("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.stop() })
	fi, err := os.Stat(r.file())
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("stat %s: %v %v", r.file(), fi, err)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "g")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat of a missing name: %v, want ENOENT", err)
	}
	f, err := os.OpenFile(r.file(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() }) // before stop (cleanups run last-in first)
	for range 100 {
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), 0x5800, 0); e != unix.ENOTTY {
			t.Fatalf("ioctl: %v, want ENOTTY", e)
		}
	}
	f.Close()
	dir := r.dir
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if st := r.cmd.ProcessState; st == nil || !st.Success() {
		t.Errorf("the server process after stop: %v", st)
	}
	if mounted, _ := os.ReadFile("/proc/self/mounts"); strings.Contains(string(mounted), dir) {
		t.Errorf("%s still mounted", dir)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left behind: %v", dir, err)
	}
}

// A minimal FUSE server stopped while a file of it is open still ends: after 5 s its connection is
// aborted through fusectl (mounted here if the host has not).
func TestRawFUSEStopWithFileOpen(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: mounting a FUSE file system with mount(2) needs root")
	}
	if _, err := os.Stat("/sys/fs/fuse/connections"); err != nil {
		t.Skipf("skipping: no fusectl directory: %v", err)
	}
	if ents, _ := os.ReadDir("/sys/fs/fuse/connections"); len(ents) == 0 {
		if err := unix.Mount("fusectl", "/sys/fs/fuse/connections", "fusectl", 0, ""); err != nil && !errors.Is(err, unix.EBUSY) {
			t.Skipf("skipping: cannot mount fusectl: %v", err)
		}
	}
	r, err := startRawFUSE("")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(r.file(), os.O_RDWR, 0)
	if err != nil {
		r.stop()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- r.stop() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stop: %v", err)
		}
		if d := time.Since(start); d < 4*time.Second {
			t.Errorf("stop returned after %v with a file open: the reader should have served until the abort", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("stop with a file open did not return in 20 s")
	}
	f.Close() // the connection is gone: FLUSH fails at once instead of waiting
}

// The minimal FUSE server's mirror (the topology figure's FUSE floor) shows a directory as it is:
// the same names, types, file contents and symlink targets, read twice (the second pass from the
// kernel's caches), and a missing name is ENOENT.
func TestRawFUSEMirror(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: mounting a FUSE file system with mount(2) needs root")
	}
	src := t.TempDir()
	for _, d := range []string{"a/b", "c"} {
		if err := os.MkdirAll(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var sb strings.Builder // 400 KB without a period: several READs, each at its offset
	for i := range 60000 {
		fmt.Fprintf(&sb, "%d ", i)
	}
	big := sb.String()
	for name, text := range map[string]string{"a/b/f": "1 2 3\n", "c/g": "gfx90a\n", "top": "x", "c/big": big, "a/empty": ""} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../a/b", filepath.Join(src, "c/link")); err != nil {
		t.Fatal(err)
	}
	walk := func(root string) map[string]string {
		got := map[string]string{}
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			switch {
			case e.IsDir():
				got[rel] = "dir"
			case e.Type()&fs.ModeSymlink != 0:
				target, err := os.Readlink(p)
				got[rel] = "link " + target
				return err
			default:
				b, err := os.ReadFile(p)
				got[rel] = "file " + string(b)
				return err
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := walk(src)
	r, err := startRawFUSE(src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.stop() })
	for pass := range 2 {
		if got := walk(r.dir); !reflect.DeepEqual(got, want) {
			t.Fatalf("pass %d: the mirror shows %d entries, the directory %d:\n%v\nwant %v", pass, len(got), len(want), got, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(r.dir, "c/link/f")); err != nil || string(b) != "1 2 3\n" {
		t.Errorf("through the symlink: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "a/none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat of a missing name: %v, want ENOENT", err)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
}
