package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/internal/testenv"
	"github.com/kfdemu/kfdemu/topology"
)

// TestTraceLibhsakmt traces Debian's libhsakmt under kfdemu exec and checks the decoded sequence.
func TestTraceLibhsakmt(t *testing.T) {
	bin := buildC(t, "testdata/rocm/hsakmt_test.c", "hsakmt", "/usr/include/hsakmt.h")
	mnt := daemon(t, "mi210")
	kfdemu := testenv.Kfdemu(t)
	out, err := exec.Command(kfdemu, "trace", "--json", "--", kfdemu, "exec", "--mount", mnt, "--", bin, "queues").Output()
	if ee, ok := err.(*exec.ExitError); ok && strings.Contains(string(ee.Stderr), "eBPF tracing unavailable") {
		t.Skipf("skipping: %s", ee.Stderr)
	}
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("trace: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
	sys, _ := topology.Profile("mi210")
	gpu := uint64(sys.GPUs()[0].GPUID)
	var seq []string
	pids := map[int]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var d struct {
			Pid    int
			Ioctl  string
			Fields map[string]uint64
			Result int64
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		pids[d.Pid] = true
		seq = append(seq, d.Ioctl)
		switch d.Ioctl {
		case "AMDKFD_IOC_GET_VERSION":
			if v := fmt.Sprintf("%d.%d", d.Fields["MajorVersion"], d.Fields["MinorVersion"]); v != interfaceVersion() {
				t.Errorf("GET_VERSION decoded as %v", d.Fields)
			}
		case "AMDKFD_IOC_ACQUIRE_VM", "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", "AMDKFD_IOC_CREATE_QUEUE":
			if d.Fields["GPUID"] != gpu || d.Result != 0 {
				t.Errorf("%s: gpu_id %d result %d, want %d", d.Ioctl, d.Fields["GPUID"], d.Result, gpu)
			}
		}
	}
	want := []string{"AMDKFD_IOC_GET_VERSION", "AMDKFD_IOC_GET_PROCESS_APERTURES_NEW", "AMDKFD_IOC_ACQUIRE_VM",
		"AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", "AMDKFD_IOC_MAP_MEMORY_TO_GPU", "AMDKFD_IOC_CREATE_QUEUE",
		"AMDKFD_IOC_CREATE_EVENT", "AMDKFD_IOC_WAIT_EVENTS", "AMDKFD_IOC_DESTROY_QUEUE", "DRM_IOCTL_AMDGPU_INFO"}
	joined := strings.Join(seq, " ")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("trace lacks %s", w)
		}
	}
	if strings.Index(joined, "AMDKFD_IOC_GET_VERSION") > strings.Index(joined, "AMDKFD_IOC_ACQUIRE_VM") {
		t.Error("GET_VERSION should come before ACQUIRE_VM")
	}
	if len(pids) != 1 {
		t.Errorf("calls from %d processes, want only the test program's", len(pids))
	}
}

type tracedCall struct {
	Pid     int
	Ioctl   string
	Fields  map[string]uint64
	Array   []uint64
	ArrayOf string `json:"array_of"`
	Result  int64
}

// traceJSON runs `kfdemu trace --json -- args...` with env added and decodes its records.
func traceJSON(t *testing.T, env []string, args ...string) []tracedCall {
	t.Helper()
	cmd := exec.Command(testenv.Kfdemu(t), append([]string{"trace", "--json", "--"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && strings.Contains(string(ee.Stderr), "eBPF tracing unavailable") {
		t.Skipf("skipping: %s", ee.Stderr)
	}
	if err != nil {
		t.Fatalf("trace %v: %v", args, err)
	}
	var calls []tracedCall
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var c tracedCall
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		calls = append(calls, c)
	}
	return calls
}

// TestTraceRocminfoAndRuntime traces Debian's rocminfo under kfdemu exec and the Go runtime's barrier
// example while unrelated processes use the same mount: the expected calls come in order, the
// arrays (MAP device ids) are decoded, every traced allocation matches what the daemon logged it
// received, and no call of another process appears.
func TestTraceRocminfoAndRuntime(t *testing.T) {
	testenv.NeedMount(t)
	if _, err := exec.LookPath("rocminfo"); err != nil {
		t.Skip("skipping: rocminfo not installed (Debian package from scripts/install-deps.sh)")
	}
	bin := testenv.Kfdemu(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	serve := exec.Command(bin, "serve", "--mount", mnt, "--log-level", "debug")
	var log lockedBuffer
	serve.Stderr = &log
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Signal(syscall.SIGTERM); serve.Wait() })
	for deadline := time.Now().Add(20 * time.Second); !served(mnt); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("daemon did not come up")
		}
	}
	// Unrelated clients of the same mount, outside the traced tree.
	stop := make(chan struct{})
	var others sync.Map
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			c := exec.Command(bin, "info", "--root", mnt)
			if c.Start() == nil {
				others.Store(c.Process.Pid, true)
				c.Wait()
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	sys, _ := topology.Profile("mi210")
	gpu := uint64(sys.GPUs()[0].GPUID)
	check := func(name string, calls []tracedCall, want []string) {
		t.Helper()
		var seq []string
		for _, c := range calls {
			if _, ok := others.Load(c.Pid); ok {
				t.Errorf("%s: a call of unrelated process %d in the trace: %s", name, c.Pid, c.Ioctl)
			}
			seq = append(seq, c.Ioctl)
			if c.Ioctl == "AMDKFD_IOC_MAP_MEMORY_TO_GPU" && c.Result == 0 && (c.ArrayOf != "device_ids" || len(c.Array) != 1 || c.Array[0] != gpu) {
				t.Errorf("%s: MAP device ids %s %v, want [%d]", name, c.ArrayOf, c.Array, gpu)
			}
			if c.Ioctl == "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU" && c.Result == 0 {
				f := c.Fields
				line := fmt.Sprintf("handle=%#x gpu=%d va=%#x", f["Handle"], f["GPUID"], f["VAAddr"])
				flags := fmt.Sprintf("flags=%#x", f["Flags"])
				if !strings.Contains(log.String(), line) || !strings.Contains(log.String(), flags) {
					t.Errorf("%s: traced ALLOC %s %s not in what the daemon received", name, line, flags)
				}
			}
		}
		at := 0
		for _, w := range want { // in this order, not necessarily adjacent
			i := slices.Index(seq[at:], w)
			if i < 0 {
				t.Errorf("%s: %s missing after position %d:\n%v", name, w, at, seq)
				return
			}
			at += i + 1
		}
	}
	check("rocminfo", traceJSON(t, nil, bin, "exec", "--mount", mnt, "--", "rocminfo"),
		[]string{"AMDKFD_IOC_GET_VERSION", "AMDKFD_IOC_GET_PROCESS_APERTURES_NEW", "AMDKFD_IOC_ACQUIRE_VM",
			"AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", "AMDKFD_IOC_MAP_MEMORY_TO_GPU", "AMDKFD_IOC_CREATE_EVENT",
			"AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU", "AMDKFD_IOC_FREE_MEMORY_OF_GPU"})

	ex := filepath.Join(t.TempDir(), "barrier")
	if out, err := exec.Command("go", "build", "-o", ex, "../../examples/barrier").CombinedOutput(); err != nil {
		t.Fatalf("go build examples/barrier: %v\n%s", err, out)
	}
	check("examples/barrier", traceJSON(t, []string{"KFDEMU_ROOT=" + mnt}, ex, "-n", "10"),
		[]string{"AMDKFD_IOC_GET_VERSION", "AMDKFD_IOC_ACQUIRE_VM", "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU",
			"AMDKFD_IOC_MAP_MEMORY_TO_GPU", "AMDKFD_IOC_CREATE_QUEUE", "AMDKFD_IOC_DESTROY_QUEUE"})
}

// TestTraceUnprivileged: without the capabilities the tracer says what is missing and how to get
// it, and exits 1.
func TestTraceUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root to drop to an unprivileged user")
	}
	// A copy the unprivileged user can execute (the test binaries live in 0700 directories).
	dir, err := os.MkdirTemp("", "kfdemu-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	b, err := os.ReadFile(testenv.Kfdemu(t))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "kfdemu")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "trace", "--", "true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("unprivileged trace: %v\n%s", err, out)
	}
	for _, want := range []string{"eBPF tracing unavailable", "needs root (CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("message lacks %q:\n%s", want, out)
		}
	}
}
