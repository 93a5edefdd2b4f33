package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/fs/nsexec"
	"github.com/kfdemu/kfdemu/internal/testenv"
)

// runExecEnv makes the test binary act as `kfdemu exec ARGS...` (TestExecSignals needs a process
// of its own to send signals to).
const runExecEnv = "KFDEMU_TEST_RUNEXEC"

func init() {
	if os.Getenv(runExecEnv) == "1" {
		os.Unsetenv(runExecEnv)
		os.Exit(runExec(os.Args[1:]))
	}
}

// mi210Fixture is the captured mi210 tree (testenv.Shared: skipped in a lone clone).
func mi210Fixture(t testing.TB) string {
	return testenv.Shared(t, "fixtures/topology/topo-mi210-xgmi-pcie")
}

// needNamespaces skips unless this process may create a mount namespace (root or CAP_SYS_ADMIN).
func needNamespaces(t *testing.T) {
	t.Helper()
	probe := exec.Command("/bin/true")
	probe.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	if err := probe.Run(); err != nil {
		t.Skipf("skipping: unshare(CLONE_NEWNS) is not permitted here: %v", err)
	}
}

// fakeMount is a plain directory shaped like a kfdemu mount: device files as regular files with
// known content, the mi210 (XGMI + PCIe) topology capture and the module directory.
func fakeMount(t *testing.T) string {
	t.Helper()
	mnt := t.TempDir()
	topo := filepath.Join(mnt, nsexec.TopologyPath)
	fixture := mi210Fixture(t)
	err := filepath.WalkDir(fixture, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(fixture, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(topo, rel), 0755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(topo, rel), b, 0444)
	})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		nsexec.KFDPath:                             "fake kfd\n",
		nsexec.DRIPath + "/renderD128":             "fake renderD128\n",
		nsexec.GenerationPath:                      "1\n",
		nsexec.StatsPath:                           "ready 1\ngeneration 1\n",
		nsexec.ModulePath + "/initstate":           "live\n",
		nsexec.ModulePath + "/version":             "6.10.5\n",
		nsexec.ModulePath + "/refcnt":              "0\n",
		nsexec.TopologyPath + "/system_properties": "platform_oem 0\nplatform_id 0\nplatform_rev 0\n",
	}
	for p, c := range files {
		p = filepath.Join(mnt, p)
		if err := os.MkdirAll(filepath.Dir(p), 0755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(mnt, nsexec.ModulePath, "holders"), 0755)
	os.MkdirAll(filepath.Join(mnt, nsexec.ClassPath), 0755)
	if err := os.Symlink("../../devices/virtual/kfd/kfd", filepath.Join(mnt, nsexec.ClassPath, "kfd")); err != nil {
		t.Fatal(err)
	}
	return mnt
}

// inNamespace runs argv under execIn with output captured; the returned status is execIn's.
func inNamespace(t *testing.T, mnt string, argv ...string) (string, int) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	devnull, _ := os.Open(os.DevNull)
	defer devnull.Close()
	status := execIn(mnt, argv, devnull, out, out)
	b, _ := os.ReadFile(out.Name())
	return string(b), status
}

// hostState is what must be the same on the host before and after exec.
func hostState(t *testing.T) string {
	t.Helper()
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var s strings.Builder
	// Other tests (other packages run in parallel) mount and unmount emulators: ignore kfdemu mounts.
	for _, line := range strings.Split(string(info), "\n") {
		if !strings.Contains(line, " - fuse.kfdemu") {
			s.WriteString(line + "\n")
		}
	}
	for _, p := range []string{"/dev/kfd", "/dev/dri", "/sys/devices/virtual/kfd", "/sys/class/kfd", "/sys/module/amdgpu", "/proc/modules"} {
		_, err := os.Lstat(p)
		s.WriteString(p + ": " + errString(err) + "\n")
	}
	return s.String()
}

func errString(err error) string {
	if err == nil {
		return "exists"
	}
	return err.Error()
}

func TestExecSeesEmulator(t *testing.T) {
	needNamespaces(t)
	mnt := fakeMount(t)
	scratch := t.TempDir()
	t.Setenv("TMPDIR", scratch)
	before := hostState(t)
	if _, err := os.Lstat("/dev/kfd"); err == nil {
		t.Logf("the host has a /dev/kfd; checking it is unchanged rather than absent")
	}

	gpuProps, err := os.ReadFile(filepath.Join(mi210Fixture(t), "nodes/2/properties"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, script, want string
	}{
		{"kfd", "cat /dev/kfd", "fake kfd\n"},
		{"render node", "cat /dev/dri/renderD128", "fake renderD128\n"},
		{"topology via /sys/class", "cat /sys/class/kfd/kfd/topology/nodes/2/properties", string(gpuProps)},
		{"topology via /sys/devices", "cat /sys/devices/virtual/kfd/kfd/topology/generation_id", "1\n"},
		{"sys/devices/virtual/kfd is a directory", "test -d /sys/devices/virtual/kfd -a ! -L /sys/devices/virtual/kfd && echo dir", "dir\n"},
		{"module state", "cat /sys/module/amdgpu/initstate", "live\n"},
		{"proc/modules", "grep '^amdgpu ' /proc/modules | cut -d' ' -f1,5", "amdgpu Live\n"},
		{"lsmod", "lsmod | grep -c '^amdgpu '", "1\n"},
		// The fixture has two CPU nodes; libhsakmt reads the cache files of both.
		{"second NUMA node", "test -d /sys/devices/system/node/node1/ && ls /sys/devices/system/node/node1/ | grep -c '^cpu[0-9]'", ""},
		// The host's /dev is still there around the emulator's files, with its submounts.
		{"host /dev", "test -c /dev/null && test -d /dev/pts && echo ok", "ok\n"},
		{"host sysfs", "test -e /sys/devices/virtual/mem || test -e /sys/class/mem && echo ok", "ok\n"},
		{"/proc/self", "readlink /proc/self/exe", "/usr/bin/readlink\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, status := inNamespace(t, mnt, "sh", "-c", tc.script)
			if status != 0 {
				t.Fatalf("%q exited %d: %s", tc.script, status, out)
			}
			if tc.want == "" {
				if strings.TrimSpace(out) == "0" || out == "" {
					t.Fatalf("%q printed %q", tc.script, out)
				}
				return
			}
			if out != tc.want {
				t.Fatalf("%q printed %q, want %q", tc.script, out, tc.want)
			}
		})
	}

	if after := hostState(t); after != before {
		t.Errorf("the host's mounts or files changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if left, _ := filepath.Glob(filepath.Join(scratch, "kfdemu-ns-*")); len(left) != 0 {
		t.Errorf("scratch directories left on the host: %q", left)
	}
}

func TestExecExitStatus(t *testing.T) {
	needNamespaces(t)
	mnt := fakeMount(t)
	for _, tc := range []struct {
		argv []string
		want int
	}{
		{[]string{"true"}, 0},
		{[]string{"sh", "-c", "exit 7"}, 7},
		{[]string{"sh", "-c", "exit 255"}, 255},
		{[]string{"sh", "-c", "kill -TERM $$"}, 128 + int(syscall.SIGTERM)},
		{[]string{"kfdemu-no-such-command"}, nsexec.ExitNotFound},
		{[]string{"/dev/null"}, nsexec.ExitNotExecuted},
	} {
		if _, got := inNamespace(t, mnt, tc.argv...); got != tc.want {
			t.Errorf("%q: exit status %d, want %d", tc.argv, got, tc.want)
		}
	}
	// Not a mount: the namespace child reports a setup failure.
	if out, got := inNamespace(t, t.TempDir(), "true"); got != nsexec.ExitSetup || !strings.Contains(out, "not a kfdemu mount") {
		t.Errorf("exec on an empty directory: status %d, output %q", got, out)
	}
}

// TestExecSignals runs `kfdemu exec` (the test binary in that role) and signals it: the command
// receives the signal and exec exits with the command's status.
func TestExecSignals(t *testing.T) {
	needNamespaces(t)
	mnt := fakeMount(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		trap string // shell trap for the signal, or "" to die of it
		want int
		out  string
	}{
		{syscall.SIGTERM, `echo got-TERM; exit 42`, 42, "got-TERM"},
		{syscall.SIGINT, `echo got-INT; exit 43`, 43, "got-INT"},
		{syscall.SIGHUP, "", 128 + int(syscall.SIGHUP), ""},
		{syscall.SIGUSR1, `echo got-USR1; exit 44`, 44, "got-USR1"},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			sigName := map[syscall.Signal]string{syscall.SIGTERM: "TERM", syscall.SIGINT: "INT", syscall.SIGHUP: "HUP", syscall.SIGUSR1: "USR1"}[tc.sig]
			script := "echo ready; while :; do sleep 0.05; done"
			if tc.trap != "" {
				script = "trap '" + tc.trap + "' " + sigName + "; " + script
			}
			cmd := exec.Command(self, "--mount", mnt, "--", "sh", "-c", script)
			cmd.Env = append(os.Environ(), runExecEnv+"=1")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Hang guard only: kill the whole group if the command never reacts.
			guard := time.AfterFunc(60*time.Second, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
			defer guard.Stop()
			r := bufio.NewReader(stdout)
			line, err := r.ReadString('\n')
			if err != nil || line != "ready\n" {
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				cmd.Wait()
				t.Fatalf("command did not start: %q %v", line, err)
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(r)
			err = cmd.Wait()
			got := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				got = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("exit status %d, want %d (output %q)", got, tc.want, rest)
			}
			if !strings.Contains(string(rest), tc.out) {
				t.Errorf("output %q, want %q", rest, tc.out)
			}
		})
	}
}

// TestExecRocminfoDriverCheck runs Debian's rocminfo 5.2.3 on the fake mount: it must get past
// its driver check (`lsmod | grep amdgpu`, then open("/dev/kfd", O_RDWR)) and fail only later,
// in hsa_init, since the fake device file answers no ioctls.
func TestExecRocminfoDriverCheck(t *testing.T) {
	needNamespaces(t)
	if _, err := exec.LookPath("rocminfo"); err != nil {
		t.Skip("skipping: rocminfo is not installed (Debian package rocminfo)")
	}
	// Control: on a host without amdgpu the same check fails outside the namespace.
	if b, _ := os.ReadFile("/proc/modules"); !strings.Contains("\n"+string(b), "\namdgpu ") {
		host, _ := exec.Command("rocminfo").CombinedOutput()
		if !strings.Contains(string(host), "ROCk module is NOT loaded") {
			t.Fatalf("control: rocminfo on the host (no amdgpu) did not report the driver missing:\n%s", host)
		}
	}
	out, status := inNamespace(t, fakeMount(t), "rocminfo")
	t.Logf("rocminfo (status %d):\n%s", status, out)
	if strings.Contains(out, "NOT loaded") || !strings.Contains(out, "ROCk module is loaded") {
		t.Fatalf("rocminfo did not pass its driver check (status %d):\n%s", status, out)
	}
	if strings.Contains(out, "Unable to open /dev/kfd") {
		t.Fatalf("rocminfo could not open /dev/kfd:\n%s", out)
	}
	if status == 0 {
		t.Fatalf("rocminfo succeeded against a fake device file:\n%s", out)
	}
}

// TestExecStartsDaemon: with nothing serving the mount, exec starts `kfdemu serve` for the
// command's lifetime and stops it afterwards.
func TestExecStartsDaemon(t *testing.T) {
	needNamespaces(t)
	testenv.NeedMount(t)
	bin := testenv.Kfdemu(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	cmd := exec.Command(bin, "exec", "--mount", mnt, "--profile", "mi210", "--",
		"sh", "-c", "test -e /dev/kfd && cat /sys/class/kfd/kfd/topology/generation_id && grep -c gfx_target_version /sys/devices/virtual/kfd/kfd/topology/nodes/1/properties")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kfdemu exec: %v\n%s", err, out)
	}
	if lines := strings.Fields(string(out)); len(lines) != 2 || lines[1] != "1" {
		t.Fatalf("unexpected output %q", out)
	}
	if served(mnt) {
		t.Fatal("the daemon still serves after the command exited")
	}
	if b, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(b), mnt) {
		t.Fatal("the mount is still there after the command exited")
	}
}

// TestExecOwnDaemon: a daemon another exec started ends with that exec's command, so an exec
// whose mount is served by one runs its command on a daemon of its own (a private mount), and so
// does one that loses the race for an unserved mount. Before 2026-12-03 the second command joined
// the first's daemon and lost /dev/kfd when the first command ended ("Transport endpoint is not
// connected"; a HIP program hung until its time limit).
func TestExecOwnDaemon(t *testing.T) {
	needNamespaces(t)
	testenv.NeedMount(t)
	bin := testenv.Kfdemu(t)
	tmp := t.TempDir()
	mnt := filepath.Join(tmp, "mnt")
	// The second command reads the topology directory (a FUSE round trip) after the first ended.
	late := "sleep 6; ls /sys/class/kfd/kfd/topology/nodes | tr '\\n' ' '; test -r /dev/kfd && echo kfd"
	run := func(script string) *exec.Cmd {
		c := exec.Command(bin, "exec", "--mount", mnt, "--profile", "mi210", "--", "sh", "-c", script)
		c.Env = append(os.Environ(), "TMPDIR="+tmp)
		return c
	}
	for _, together := range []bool{false, true} {
		first := run("sleep 1")
		var out bytes.Buffer
		first.Stderr = &out
		if err := first.Start(); err != nil {
			t.Fatal(err)
		}
		if !together { // the first exec's daemon serves before the second starts
			for deadline := time.Now().Add(10 * time.Second); !served(mnt); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the first exec's daemon does not serve %s: %s", mnt, out.String())
				}
			}
		}
		got, err := run(late).CombinedOutput()
		if err2 := first.Wait(); err2 != nil {
			t.Fatalf("first exec: %v\n%s", err2, out.String())
		}
		if err != nil || !strings.Contains(string(got), "0 1 kfd") {
			t.Errorf("together=%v: the second exec's command after the first ended: %v\n%s", together, err, got)
		}
	}
	if served(mnt) {
		t.Error("a daemon still serves after both commands exited")
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "kfdemu-exec-*")); len(left) != 0 {
		t.Errorf("private mounts left behind: %q", left)
	}
}
