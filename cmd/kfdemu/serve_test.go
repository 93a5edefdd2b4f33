package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/shader"
	"github.com/kfdemu/kfdemu/internal/testenv"
	"github.com/kfdemu/kfdemu/topology"
	"golang.org/x/sys/unix"
)

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestServeRefusesBusyAndNonEmpty(t *testing.T) {
	mnt := daemon(t, "mi210")
	out, err := exec.Command(testenv.Kfdemu(t), "serve", "--mount", mnt).CombinedOutput()
	if exitCode(err) != 2 || !strings.Contains(string(out), "already mounted") {
		t.Errorf("busy mount: exit %d, %s", exitCode(err), out)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0644)
	out, err = exec.Command(testenv.Kfdemu(t), "serve", "--mount", dir).CombinedOutput()
	if exitCode(err) != 2 || !strings.Contains(string(out), "not empty") {
		t.Errorf("non-empty dir: exit %d, %s", exitCode(err), out)
	}
	out, err = exec.Command(testenv.Kfdemu(t), "serve", "--profile", "nope", "--mount", t.TempDir()).CombinedOutput()
	if exitCode(err) != 2 || !strings.Contains(string(out), "unknown profile") {
		t.Errorf("bad profile: exit %d, %s", exitCode(err), out)
	}
}

func TestStaleMountRecovery(t *testing.T) {
	testenv.NeedMount(t)
	bin := testenv.Kfdemu(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	first := exec.Command(bin, "serve", "--mount", mnt, "--log-level", "error")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; !served(mnt); i++ {
		if i > 1000 {
			t.Fatal("first daemon did not come up")
		}
		time.Sleep(10 * time.Millisecond)
	}
	first.Process.Kill() // SIGKILL: no unmount
	first.Wait()
	// A directory read goes to the (dead) server; a stat might be answered from the kernel's cache.
	if _, err := os.ReadDir(filepath.Join(mnt, "sys")); !errors.Is(err, syscall.ENOTCONN) {
		t.Fatalf("expected a dead mount (ENOTCONN), got %v", err)
	}
	second := exec.Command(bin, "serve", "--mount", mnt, "--log-level", "error")
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { second.Process.Signal(syscall.SIGTERM); second.Wait() }()
	for i := 0; !served(mnt); i++ {
		if i > 1000 {
			t.Fatal("second daemon did not recover the stale mount")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// flatten reads a directory tree into path -> content ("<dir>" for directories).
func flatten(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if fi.IsDir() {
			out[rel+"/"] = "<dir>"
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestProfilesThroughMount: every profile's tree read through the mount equals the rendering.
func TestProfilesThroughMount(t *testing.T) {
	for _, name := range topology.Profiles() {
		t.Run(name, func(t *testing.T) {
			mnt := daemon(t, name)
			sys, _ := topology.Profile(name)
			sys.SetHostMemory(hostMemory()) // serve reports this host's RAM on the CPU nodes
			want := filepath.Join(t.TempDir(), "topology")
			if err := topology.WriteTree(want, sys.Tree()); err != nil {
				t.Fatal(err)
			}
			got, exp := flatten(t, filepath.Join(mnt, topologyPath)), flatten(t, want)
			if len(got) != len(exp) {
				t.Errorf("%d entries through the mount, %d rendered", len(got), len(exp))
			}
			for p, w := range exp {
				if got[p] != w {
					t.Errorf("%s differs", p)
				}
			}
			st, err := os.Lstat(filepath.Join(mnt, "sys/class/kfd/kfd"))
			if err != nil || st.Mode()&os.ModeSymlink == 0 {
				t.Errorf("sys/class/kfd/kfd is not a symlink: %v", err)
			}
			if b, _ := os.ReadFile(filepath.Join(mnt, "sys/class/kfd/kfd/topology/generation_id")); string(b) == "" {
				t.Error("generation_id not reachable through sys/class/kfd/kfd")
			}
		})
	}
}

// TestTopologyFrom serves every captured tree byte for byte.
func TestTopologyFrom(t *testing.T) {
	testenv.NeedMount(t)
	fixtures := map[string]string{
		"mi210": testenv.Shared(t, "fixtures/topology/topo-mi210-xgmi-pcie"),
		"mi300": testenv.Shared(t, "fixtures/topology/topo-mi300-cpx/topology"),
		"parse": testenv.Shared(t, "fixtures/topology/topology-parsing/topology"),
	}
	for name, dir := range fixtures {
		t.Run(name, func(t *testing.T) {
			mnt := filepath.Join(t.TempDir(), "mnt")
			cmd := exec.Command(testenv.Kfdemu(t), "serve", "--mount", mnt, "--topology-from", dir, "--log-level", "error")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
			for i := 0; ; i++ {
				if _, err := os.Stat(filepath.Join(mnt, topologyPath, "nodes")); err == nil {
					break
				}
				if i > 2000 {
					t.Fatal("daemon did not come up")
				}
				time.Sleep(10 * time.Millisecond)
			}
			got, want := flatten(t, filepath.Join(mnt, topologyPath)), flatten(t, dir)
			if len(got) != len(want) {
				t.Errorf("%d entries served, %d captured", len(got), len(want))
			}
			for p, w := range want {
				if got[p] != w {
					t.Errorf("%s differs", p)
				}
			}
		})
	}
}

func TestSysfsReadOnly(t *testing.T) {
	mnt := daemon(t, "mi210")
	props := filepath.Join(mnt, topologyPath, "nodes/1/properties")
	// MNT/sys is a read-only mount (as /sys is in containers): writes fail with EROFS.
	if _, err := os.OpenFile(props, os.O_WRONLY, 0); !errors.Is(err, syscall.EROFS) {
		t.Errorf("open for write: %v, want EROFS", err)
	}
	if err := os.Mkdir(filepath.Join(mnt, topologyPath, "nodes/9"), 0755); err == nil {
		t.Error("mkdir in sysfs succeeded")
	}
	if err := os.Remove(props); err == nil {
		t.Error("unlink in sysfs succeeded")
	}
	st, err := os.Stat(props)
	if err != nil || st.Mode().Perm() != 0444 {
		t.Errorf("properties mode %v: %v", st.Mode(), err)
	}
	if b, _ := os.ReadFile(filepath.Join(mnt, "sys/module/amdgpu/initstate")); string(b) != "live\n" {
		t.Errorf("initstate %q", b)
	}
}

func TestHotplugCommand(t *testing.T) {
	mnt := daemon(t, "mi210")
	gen := func() int {
		b, _ := os.ReadFile(filepath.Join(mnt, topologyPath, "generation_id"))
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return n
	}
	g0 := gen()
	bin := testenv.Kfdemu(t)
	if out, err := exec.Command(bin, "gpu", "--mount", mnt, "add", "mi100").CombinedOutput(); err != nil {
		t.Fatalf("gpu add: %v %s", err, out)
	}
	if gen() != g0+1 {
		t.Errorf("generation_id %d after add, want %d", gen(), g0+1)
	}
	if b, _ := os.ReadFile(filepath.Join(mnt, topologyPath, "nodes/2/name")); string(b) != "arcturus\n" {
		t.Errorf("new node name %q", b)
	}
	if _, err := os.Stat(filepath.Join(mnt, "dev/dri/renderD129")); err != nil {
		t.Errorf("render node of the new GPU: %v", err)
	}
	if out, err := exec.Command(bin, "gpu", "--mount", mnt, "remove", "0").CombinedOutput(); err == nil {
		t.Errorf("removing a CPU node succeeded: %s", out)
	}
	if out, err := exec.Command(bin, "gpu", "--mount", mnt, "remove", "2").CombinedOutput(); err != nil {
		t.Fatalf("gpu remove: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(mnt, topologyPath, "nodes/2")); !errors.Is(err, os.ErrNotExist) || gen() != g0+2 {
		t.Errorf("after remove: %v, generation %d", err, gen())
	}
}

func TestTopoAndScript(t *testing.T) {
	mnt := daemon(t, "mi210x8")
	bin := testenv.Kfdemu(t)
	out, err := exec.Command(bin, "topo", "--mount", mnt).CombinedOutput()
	if err != nil || strings.Count(string(out), "gfx90a") != 8 {
		t.Errorf("topo: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "topo", "--mount", mnt, "--dot").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "digraph") || !strings.Contains(string(out), "style=bold") {
		t.Errorf("topo --dot: %v\n%s", err, out)
	}
	if _, err := exec.LookPath("dash"); err != nil {
		t.Skip("dash not installed")
	}
	out, err = exec.Command("dash", "../../scripts/kfd-topology.sh", filepath.Join(mnt, topologyPath)).CombinedOutput()
	if err != nil || strings.Count(string(out), "\n") != 11 || strings.Count(string(out), "aldebaran") != 8 {
		t.Errorf("kfd-topology.sh on the mount: %v\n%s", err, out)
	}
}

// TestDemo runs the README's first command: the demo mounts, shows the topology and the device,
// and completes a barrier packet on an AQL queue through runtime/kmt.
func TestDemo(t *testing.T) {
	testenv.NeedMount(t)
	out, err := exec.Command(testenv.Kfdemu(t), "demo").CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, want := range []string{"gfx90a", "aldebaran", "AMDKFD_IOC_GET_VERSION -> 1.", "barrier-AND packet + doorbell store -> completion signal 0", "signalled"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

// TestBench runs `kfdemu bench` (the first-doorbell and fault-storm figures shortened): every
// figure is printed with the floor from the same run.
func TestBench(t *testing.T) {
	testenv.NeedMount(t)
	out, err := exec.Command(testenv.Kfdemu(t), "bench", "-n", "200", "-vadd", "65536", "-matmul", "64", "--gpu-threads", "2", "--idle-samples", "1",
		"--idle-wait", "3s", "--storm-pages", "620", "--json").Output()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	var res struct {
		Profile string
		Figures []figure
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	want := []string{"daemon CPU over 2 s, 2 idle AQL queues", "daemon CPU over 2 s, 64 idle AQL queues in 16 processes",
		"ioctl round trip (GET_VERSION)", "ioctl tail (GET_VERSION p99/p50)", "AQL barrier round trip (doorbell -> signal)", "AQL packets per second, 1 queue(s)",
		"AQL packets per second, 8 queue(s)", "first doorbell after 3s idle (doorbell -> signal)", "MAP 1 GiB GTT (4 KiB PTEs)",
		"MAP 1 GiB VRAM (2 MiB PDEs)", "GPU retry faults serviced (SVM, XNACK on)", "fault storm, 620 distinct SVM pages",
		"wave fault storm, 620 distinct SVM pages", "kernel dispatch round trip (one wave, doorbell -> signal)",
		"ISA interpreter, vadd over 65536 elements, 1 worker thread", "ISA interpreter, matmul 64x64, 1 worker thread",
		"ISA interpreter, vadd over 65536 elements, 2 worker threads", "ISA interpreter, matmul 64x64, 2 worker threads",
		"topology snapshot, mi300x-cpx (65 nodes)"}
	if len(res.Figures) != len(want) || res.Profile != "mi210" {
		t.Fatalf("profile %q, %d figures, want %d:\n%s", res.Profile, len(res.Figures), len(want), out)
	}
	for i, f := range res.Figures {
		// Every figure is measured here, each with its floor (the daemon's idle CPU without a
		// client may round to 0). The tail's floor, a FUSE server mounted with mount(2), needs root.
		if f.Name == "ioctl tail (GET_VERSION p99/p50)" && os.Geteuid() != 0 && strings.Contains(f.Note, "no minimal FUSE server floor") {
			continue
		}
		if f.Name != want[i] || f.Value <= 0 || f.Floor == "" || f.FloorValue < 0 || strings.HasPrefix(f.Note, "not measured") {
			t.Errorf("figure %d: %+v, want %q measured against a floor", i, f, want[i])
		}
	}
	// The 2-worker vadd's speed-up is reported with the host's own at the interpreter's pace.
	if n := res.Figures[16].Note; !strings.Contains(n, "x the 1-thread rate") || !strings.Contains(n, "rounds of register work per element") {
		t.Errorf("2-worker vadd note without the speed-up and its paced host floor: %q", n)
	}
	var b strings.Builder
	printFigures(&b, res.Profile, 200, res.Figures)
	for _, w := range append(want, "floor (same run)", "ratio") {
		if !strings.Contains(b.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, b.String())
		}
	}
	t.Logf("\n%s", b.String())
}

// TestReserveSyscallProcs: the daemon runs with syscallProcs Ps more than the CPUs it was given, for
// goroutines blocked in read(2) of /dev/fuse, while the work-group pool keeps one thread per CPU;
// a second call does not raise it again and a higher GOMAXPROCS is kept.
func TestReserveSyscallProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer shader.SetWorkers(shader.Workers())
	host := shader.HostThreads()
	runtime.GOMAXPROCS(host)
	shader.SetWorkers(0)
	for range 2 {
		reserveSyscallProcs()
		if got := runtime.GOMAXPROCS(0); got != host+syscallProcs {
			t.Fatalf("GOMAXPROCS %d, want %d CPUs + %d", got, host, syscallProcs)
		}
	}
	shader.SetWorkers(0) // as mountEmulator sets it, after an earlier mount raised GOMAXPROCS
	if w := shader.Workers(); w != host {
		t.Fatalf("worker pool %d, want one per CPU (%d)", w, host)
	}
	runtime.GOMAXPROCS(host + 5)
	reserveSyscallProcs()
	if got := runtime.GOMAXPROCS(0); got != host+5 {
		t.Fatalf("GOMAXPROCS lowered to %d from %d", got, host+5)
	}
}

// serve gives every thread of the daemon the --nice value (-5 by default: the emulated GPU's
// threads weigh more than a spinning client's), threads made after start-up included; --nice 0
// leaves the inherited value, and a value outside [-20, 19] is refused with exit code 2.
func TestServeNice(t *testing.T) {
	testenv.NeedMount(t)
	runtime.LockOSThread() // the probe raises and restores this thread's priority
	err := unix.Setpriority(unix.PRIO_PROCESS, 0, -1)
	unix.Setpriority(unix.PRIO_PROCESS, 0, 0)
	runtime.UnlockOSThread()
	if err != nil {
		t.Skipf("skipping: no privilege to raise a priority (CAP_SYS_NICE): %v", err)
	}
	niceOf := func(pid int) []int { // of every thread
		t.Helper()
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, e := range ents {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, e.Name()))
			if err != nil {
				continue // the thread ended
			}
			f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:])) // after "pid (comm) "
			n, _ := strconv.Atoi(f[16])                                              // field 19: nice
			out = append(out, n)
		}
		return out
	}
	for _, c := range []struct {
		args []string
		want int
	}{{nil, -5}, {[]string{"--nice", "-2"}, -2}, {[]string{"--nice", "0"}, 0}} {
		mnt := filepath.Join(t.TempDir(), "mnt")
		cmd, exited, _ := startServe(t, mnt, c.args...)
		waitServed(t, mnt)
		// A listing of the mount's topology makes the FUSE readers work (threads made later).
		flatten(t, filepath.Join(mnt, topologyPath))
		got := niceOf(cmd.Process.Pid)
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		if len(got) < 2 {
			t.Fatalf("%v: %d threads read", c.args, len(got))
		}
		for _, n := range got {
			if n != c.want {
				t.Fatalf("%v: thread nice values %v, want all %d", c.args, got, c.want)
			}
		}
	}
	out, err := exec.Command(testenv.Kfdemu(t), "serve", "--mount", t.TempDir(), "--nice", "25").CombinedOutput()
	if exitCode(err) != 2 || !strings.Contains(string(out), "--nice 25") {
		t.Fatalf("--nice 25: exit %d, %s", exitCode(err), out)
	}
}
