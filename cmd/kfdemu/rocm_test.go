package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/internal/testenv"
	"github.com/kfdemu/kfdemu/kfd"
	"github.com/kfdemu/kfdemu/topology"
)

// lockedBuffer collects the daemon's log from its stderr pipe.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// daemon runs `kfdemu serve` on a temporary mount for one test and stops it at cleanup. The
// daemon logs at debug level into a buffer; when the test fails, the log's warnings and failed
// ioctls are printed, so a failing library call is shown with the ioctl and errno behind it.
func daemon(t *testing.T, profile string, serveArgs ...string) string {
	t.Helper()
	testenv.NeedMount(t)
	bin := testenv.Kfdemu(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	cmd := exec.Command(bin, append([]string{"serve", "--mount", mnt, "--profile", profile, "--log-level", "debug"}, serveArgs...)...)
	var log lockedBuffer
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, l := range strings.Split(log.String(), "\n") {
			if strings.Contains(l, "ioctl failed") || strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
				t.Log("daemon:", l)
			}
		}
	})
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve exited with %v", err)
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Error("serve did not stop on SIGTERM")
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for !served(mnt) {
		if time.Now().After(deadline) {
			t.Fatal("daemon did not come up")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return mnt
}

// stats reads the daemon's counters (MNT/sys/kernel/debug/kfdemu/stats).
func stats(t *testing.T, mnt string) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(mnt, "sys/kernel/debug/kfdemu/stats"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var k string
		var v int
		if _, err := fmt.Sscan(sc.Text(), &k, &v); err == nil {
			m[k] = v
		}
	}
	return m
}

// noLeaks waits until the daemon holds nothing of exited clients.
func noLeaks(t *testing.T, mnt string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := stats(t, mnt)
		if s["processes"] == 0 && s["pasids"] == 0 && s["bos"] == 0 && s["queues"] == 0 && s["events"] == 0 &&
			s["gem_objects"] == 0 && s["gem_contexts"] == 0 && s["gem_bo_lists"] == 0 && s["gpu_memory_segments"] == 0 &&
			s["dmabufs"] == 0 && s["ipc_handles"] == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon still holds state of exited clients: %v", s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// buildC compiles a C test program against an installed ROCm library, skipping when the Debian
// package is absent (scripts/install-deps.sh installs it; CI always has it).
// buildC compiles src with gcc against lib (space-separated libraries), skipping when header is absent.
func buildC(t *testing.T, src, lib, header string) string {
	t.Helper()
	if _, err := os.Stat(header); err != nil {
		t.Skipf("skipping: %s not installed (Debian package from scripts/install-deps.sh)", header)
	}
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".c"))
	// <linux/kfd_ioctl.h> includes <drm/drm.h>, which libdrm-dev installs as /usr/include/libdrm.
	inc := filepath.Join(t.TempDir(), "inc")
	os.MkdirAll(inc, 0o755)
	os.Symlink("/usr/include/libdrm", filepath.Join(inc, "drm"))
	args := []string{"-Wall", "-I/usr/include/libdrm", "-I" + inc, "-o", out, src}
	for _, l := range strings.Fields(lib) {
		args = append(args, "-l"+l)
	}
	if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", src, err, b)
	}
	return out
}

func runExecCmd(t *testing.T, mnt string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(testenv.Kfdemu(t), append([]string{"exec", "--mount", mnt, "--"}, args...)...)
	// Own process group, so that a hang guard can kill the command and everything it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	timer := time.AfterFunc(120*time.Second, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	out, err := cmd.CombinedOutput()
	if !timer.Stop() {
		t.Fatalf("%v did not finish in 120 s (killed):\n%s", args, out)
	}
	return string(out), err
}

// TestLibhsakmt runs Debian's libhsakmt 5.2.3 through a C program: every property the thunk reports
// must match the profile, and alloc/map/CPU access/queue/event calls must succeed; on every GPU an
// SDMA queue copies CPU-written system memory into VRAM and fences back (GPU and CPU see each
// other's bytes). With --no-svm the daemon reports interface 1.2 (as without eBPF, which CI has) and
// the same calls work with SVM off.
func TestLibhsakmt(t *testing.T) {
	bin := buildC(t, "testdata/rocm/hsakmt_test.c", "hsakmt", "/usr/include/hsakmt.h")
	for _, tc := range []struct {
		name, profile, version string
		serveArgs              []string
	}{
		{"mi210", "mi210", interfaceVersion(), nil},
		{"mi210x8", "mi210x8", interfaceVersion(), nil},
		{"mi210-no-svm", "mi210", fmt.Sprintf("1.%d", kfd.MinorGPUVM), []string{"--no-svm"}},
	} {
		profile := tc.profile
		t.Run(tc.name, func(t *testing.T) {
			mnt := daemon(t, profile, tc.serveArgs...)
			sys, _ := topology.Profile(profile)
			out, err := runExecCmd(t, mnt, bin, "queues")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			lines := map[string]string{}
			for _, l := range strings.Split(out, "\n") {
				f := strings.Fields(l)
				if len(f) > 1 {
					lines[f[0]+" "+f[1]] = l
				}
			}
			if lines["version "+tc.version] == "" || !strings.Contains(out, "\ndone\n") {
				t.Fatalf("unexpected output:\n%s", out)
			}
			if !strings.Contains(out, fmt.Sprintf("nodes %d\n", len(sys.Nodes))) {
				t.Errorf("node count differs from the profile's %d:\n%s", len(sys.Nodes), out)
			}
			for _, n := range sys.Nodes {
				l := lines[fmt.Sprintf("node %d", n.ID)]
				want := fmt.Sprintf("node %d cpu_cores %d simds %d", n.ID, n.Prop(topology.CPUCoresCount), n.Prop(topology.SIMDCount))
				if !strings.HasPrefix(l, want) {
					t.Errorf("got %q, want prefix %q", l, want)
				}
				if n.IsGPU() {
					// libhsakmt's NumIOLinks counts io_links and p2p_links.
					if !strings.Contains(l, fmt.Sprintf("minor %d device %#x", n.RenderMinor(), n.Prop(topology.DeviceID))) ||
						!strings.Contains(l, fmt.Sprintf("caches %d iolinks %d", len(n.Caches), len(n.IOLinks)+len(n.P2PLinks))) {
						t.Errorf("node %d: %q does not match the profile", n.ID, l)
					}
					if want := fmt.Sprintf("mem %d 0 heap 1 size %d\n", n.ID, n.VRAMSize()); !strings.Contains(out, want) {
						t.Errorf("node %d: VRAM bank %q missing", n.ID, want)
					}
					if !strings.Contains(out, fmt.Sprintf("queue %d aql", n.ID)) || !strings.Contains(out, fmt.Sprintf("event %d id", n.ID)) ||
						!strings.Contains(out, fmt.Sprintf("queue %d sdma copy ok", n.ID)) || !strings.Contains(out, fmt.Sprintf("ipc %d self import ok", n.ID)) {
						t.Errorf("node %d: queue, SDMA copy, IPC or event step missing", n.ID)
					}
				}
			}
			noLeaks(t, mnt)
		})
	}
}

// TestLibhsakmtIPC shares a VRAM buffer with a forked child through Debian's libhsakmt 5.2.3
// (hsaKmtShareMemory, hsaKmtRegisterSharedHandle: AMD's out-of-tree IPC ioctls, kfd/ipc.go): the
// child's import is registered-shared (HSA_POINTER_REGISTERED_SHARED, 4) on the GPU's node, and
// its CPU access raises SIGBUS, the documented deviation (README), never another buffer's bytes;
// nothing is left after both exit.
func TestLibhsakmtIPC(t *testing.T) {
	bin := buildC(t, "testdata/rocm/hsakmt_test.c", "hsakmt", "/usr/include/hsakmt.h")
	mnt := daemon(t, "mi210")
	out, err := runExecCmd(t, mnt, bin, "ipc")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"child import size 65536 type 4 node 1\n", fmt.Sprintf("child cpu access signal %d\n", syscall.SIGBUS), "gpu 1\ndone\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the output:\n%s", want, out)
		}
	}
	noLeaks(t, mnt)
}

// TestROCrBarrier runs Debian's ROCr 5.2.3: hsa_init, agents and pools, allocation, a queue and
// three barrier-AND packets whose completion signals hsa_signal_wait_scacquire observes.
func TestROCrBarrier(t *testing.T) {
	bin := buildC(t, "testdata/rocm/rocr_test.c", "hsa-runtime64", "/usr/include/hsa/hsa.h")
	mnt := daemon(t, "mi210")
	out, err := runExecCmd(t, mnt, bin, "barrier")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"name gfx90a cus 104 wave 64", "barrier 0 ok", "barrier 2 ok", "\ndone\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	noLeaks(t, mnt)
}

// TestROCrCopy has ROCr 5.2.3 copy 1 MiB host -> VRAM -> host with hsa_amd_memory_async_copy,
// which ROCr runs on SDMA queues (BlitSdma: poll, copy, signal atomics, fence, trap) that the
// daemon executes on gpu/sdma. The data must come back intact, the daemon's SDMA queues must have
// moved at least both megabytes, and nothing of the process may be left.
func TestROCrCopy(t *testing.T) {
	bin := buildC(t, "testdata/rocm/rocr_test.c", "hsa-runtime64", "/usr/include/hsa/hsa.h")
	for _, profile := range []string{"mi210", "mi210x8"} {
		t.Run(profile, func(t *testing.T) {
			mnt := daemon(t, profile)
			before := stats(t, mnt)["sdma_bytes"]
			out, err := runExecCmd(t, mnt, bin, "copy")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, want := range []string{"name gfx90a cus 104 wave 64", "barrier 2 ok", "copy ok", "\ndone\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("missing %q in:\n%s", want, out)
				}
			}
			noLeaks(t, mnt)
			if n := stats(t, mnt)["sdma_bytes"] - before; n < 2<<20 {
				t.Errorf("SDMA queues moved %d bytes, want at least 2 MiB", n)
			} else {
				t.Logf("SDMA: %d bytes", n)
			}
		})
	}
}

// TestROCrDispatch compiles an OpenCL kernel for gfx90a with clang-14 and ld.lld-14, and has
// ROCr 5.2.3 load the code object (its loader, including the PM4-IB cache invalidation packet it
// sends on its internal queue), dispatch the kernel over 10000 elements (a partial last
// work-group) and check every result: LLVM's code runs on the emulated GPU through /dev/kfd.
func TestROCrDispatch(t *testing.T) {
	testenv.NeedTools(t, "clang-14", "ld.lld-14")
	bin := buildC(t, "testdata/rocm/rocr_dispatch.c", "hsa-runtime64", "/usr/include/hsa/hsa.h")
	mnt := daemon(t, "mi210")
	// The test's own vadd and the shader corpus (21 kernels in one code object, the one
	// gpu/shader and runtime/hsa run too): ROCr's loader takes both, and runs their vadd; from the
	// corpus it also runs mfma_f64 (matrix cores, operands in AGPRs).
	for _, src := range []string{"testdata/rocm/vadd.cl", "../../gpu/shader/testdata/corpus.cl"} {
		t.Run(filepath.Base(src), func(t *testing.T) {
			co := testenv.CodeObject(t, src)
			before := stats(t, mnt)["wave_instructions"]
			out, err := runExecCmd(t, mnt, bin, co)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !strings.Contains(out, "dispatch ok 10000 elements") || !strings.Contains(out, "\ndone\n") {
				t.Errorf("dispatch did not complete:\n%s", out)
			}
			if strings.HasSuffix(src, "corpus.cl") && !strings.Contains(out, "mfma ok 16x16x4 f64") {
				t.Errorf("the corpus's mfma_f64 kernel did not run through ROCr:\n%s", out)
			}
			if n := stats(t, mnt)["wave_instructions"] - before; n <= 0 {
				t.Errorf("no wave instructions executed (%d)", n)
			} else {
				what := "vadd over 10000 elements"
				if strings.HasSuffix(src, "corpus.cl") {
					what += " and mfma_f64"
				}
				t.Logf("%s: %d wave instructions", what, n)
			}
		})
	}
	noLeaks(t, mnt)
}

// TestRocminfo runs Debian's rocminfo: exit 0 and every agent with the profile's values.
func TestRocminfo(t *testing.T) {
	if _, err := exec.LookPath("rocminfo"); err != nil {
		t.Skip("skipping: rocminfo not installed (Debian package from scripts/install-deps.sh)")
	}
	for _, profile := range []string{"mi210", "mi210x8"} {
		t.Run(profile, func(t *testing.T) {
			mnt := daemon(t, profile)
			out, err := runExecCmd(t, mnt, "rocminfo")
			if err != nil {
				t.Fatalf("rocminfo: %v\n%s", err, out)
			}
			sys, _ := topology.Profile(profile)
			if n := strings.Count(out, "gfx90a-generic") + strings.Count(out, "  Name:                    gfx90a"); n < len(sys.GPUs()) {
				t.Errorf("rocminfo lists %d gfx90a agents, want %d:\n%s", n, len(sys.GPUs()), out)
			}
			for _, want := range []string{"ROCk module is loaded", "Marketing Name:          AMD Instinct MI210",
				"Compute Unit:            104", "Wavefront Size:          64(0x40)", "GLOBAL; FLAGS: COARSE GRAINED"} {
				if !strings.Contains(out, want) {
					t.Errorf("missing %q", want)
				}
			}
			noLeaks(t, mnt)
		})
	}
}

// TestDmaBufUnderExec exports a GEM object as a dma-buf fd through libdrm under kfdemu exec (the
// seccomp supervisor installs it), imports it into KFD in the process and in a forked child that
// inherited it, and checks that an ioctl of the same command on another file reaches the kernel;
// after the program exits no dma-buf, BO or process is left in the daemon.
func TestDmaBufUnderExec(t *testing.T) {
	needNamespaces(t)
	bin := buildC(t, "testdata/rocm/dmabuf_test.c", "hsakmt drm_amdgpu drm", "/usr/include/libdrm/amdgpu.h")
	mnt := daemon(t, "mi210")
	out, err := runExecCmd(t, mnt, bin)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"export ok\n", "other files ok\n", "import ok\n", "child import ok\n", "done\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the output:\n%s", want, out)
		}
	}
	waitClean := func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			st := stats(t, mnt)
			if st["dmabufs"] == 0 && st["smi_clients"] == 0 && st["bos"] == 0 && st["processes"] == 0 && st["supervised_trees"] == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("left behind: %v", st)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitClean()

	// Killed while it holds a dma-buf fd and an SMI fd: nothing is left either.
	cmd := exec.Command(testenv.Kfdemu(t), "exec", "--mount", mnt, "--", bin, "hold")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(60 * time.Second)
	for held := false; !held; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the program ended before holding: %s", stderr.String())
			}
			held = l == "holding"
		case <-timeout:
			t.Fatalf("not holding after 60 s: %s", stderr.String())
		}
	}
	if st := stats(t, mnt); st["dmabufs"] != 1 || st["smi_clients"] != 1 || st["supervised_trees"] != 1 {
		t.Fatalf("while holding: %v", st)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	waitClean()
}
