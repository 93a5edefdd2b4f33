// Package rttest starts kfdemu daemons for the runtime's tests: one shared mount per test binary
// (Main) and private ones for tests that stop their daemon (Start).
package rttest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/internal/testenv"
)

var (
	shared    string // root of the package's shared mount
	sharedWhy string // why there is none
)

// canMount mirrors testenv.NeedMount for code that has no testing.TB.
func canMount() error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("/dev/fuse is absent (%v)", err)
	}
	if os.Geteuid() != 0 {
		return errors.New("mounting needs root or CAP_SYS_ADMIN")
	}
	return nil
}

// Main runs a test binary's tests with a shared mi210 daemon whose root is exported as
// $KFDEMU_ROOT (so Example functions can call Init with default options). Without the
// capability to mount, examples are skipped with the reason printed and tests skip themselves
// through Root.
func Main(m *testing.M) {
	flag.Parse()
	code := func() int {
		if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
			// A fuzzing worker process runs fuzz targets only, none of which use the mount; the
			// coordinator kills its workers at the end, which left a daemon and its build behind
			// for each.
			sharedWhy = "fuzzing worker"
			return m.Run()
		}
		if err := canMount(); err != nil {
			sharedWhy = err.Error()
			fmt.Fprintf(os.Stderr, "rttest: no kfdemu mount, skipping examples and device tests: %v\n", err)
			flag.Set("test.skip", "^Example")
			return m.Run()
		}
		bin, dir, err := build()
		if err != nil {
			fmt.Fprintln(os.Stderr, "rttest:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		d, err := start(bin, filepath.Join(dir, "mnt"), "mi210")
		if err != nil {
			fmt.Fprintln(os.Stderr, "rttest:", err)
			return 1
		}
		shared = d.Root
		os.Setenv("KFDEMU_ROOT", shared)
		code := m.Run()
		if err := d.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "rttest: stopping the shared daemon:", err)
			if code == 0 {
				code = 1
			}
		}
		return code
	}()
	os.Exit(code)
}

// Root returns the shared mount's root, skipping the test when there is none.
func Root(t testing.TB) string {
	t.Helper()
	if shared == "" {
		t.Skipf("skipping: no kfdemu mount (%s)", sharedWhy)
	}
	return shared
}

var binary string

func build() (bin, dir string, err error) {
	_, file, _, _ := runtime.Caller(0)
	mod := filepath.Join(filepath.Dir(file), "..", "..", "..")
	dir, err = os.MkdirTemp("", "kfdemu-rt-")
	if err != nil {
		return "", "", err
	}
	bin = filepath.Join(dir, "kfdemu")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/kfdemu")
	cmd.Dir = mod
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("go build ./cmd/kfdemu: %v\n%s", err, out)
	}
	binary = bin
	return bin, dir, nil
}

// Daemon is a running `kfdemu serve`.
type Daemon struct {
	Root string
	cmd  *exec.Cmd
	done chan error
}

func start(bin, mnt, profile string) (*Daemon, error) {
	// --exec-owner: a test binary that dies without its cleanup (killed, or go test's time-out)
	// stops its daemon too, which unmounts.
	cmd := exec.Command(bin, "serve", "--mount", mnt, "--profile", profile, "--log-level", "error",
		"--exec-owner", fmt.Sprint(os.Getpid()))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &Daemon{Root: mnt, cmd: cmd, done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(mnt, "sys/devices/virtual/kfd/kfd/topology/generation_id")); err == nil {
			if _, err := os.Stat(filepath.Join(mnt, "dev/kfd")); err == nil {
				return d, nil
			}
		}
		select {
		case err := <-d.done:
			return nil, fmt.Errorf("kfdemu serve exited: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			return nil, errors.New("kfdemu serve did not come up in 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop stops the daemon with SIGTERM (SIGKILL after 20 s) and waits for it.
func (d *Daemon) Stop() error {
	if d.cmd.ProcessState != nil {
		return nil
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		d.done <- err
		return err
	case <-time.After(20 * time.Second):
		d.cmd.Process.Kill()
		err := <-d.done
		d.done <- err
		return fmt.Errorf("kfdemu serve ignored SIGTERM for 20 s: %v", err)
	}
}

// Start runs a private daemon for one test (needed by tests that stop it or want another
// profile); it is stopped at cleanup.
func Start(t testing.TB, profile string) *Daemon {
	t.Helper()
	testenv.NeedMount(t)
	bin := binary
	if bin == "" {
		bin = testenv.Kfdemu(t)
	}
	d, err := start(bin, filepath.Join(t.TempDir(), "mnt"), profile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Stop(); err != nil && !strings.Contains(err.Error(), "signal") {
			t.Errorf("stopping kfdemu serve: %v", err)
		}
	})
	return d
}

// Stats reads the daemon's counters (MNT/sys/kernel/debug/kfdemu/stats).
func Stats(root string) (map[string]int, error) {
	b, err := os.ReadFile(filepath.Join(root, "sys/kernel/debug/kfdemu/stats"))
	if err != nil {
		return nil, err
	}
	m := map[string]int{}
	for _, l := range strings.Split(string(b), "\n") {
		var k string
		var v int
		if _, err := fmt.Sscan(l, &k, &v); err == nil {
			m[k] = v
		}
	}
	return m, nil
}

// RealKFD reports whether a real amdkfd is present ("/dev/kfd" a character device and amdgpu
// live); why says what is missing.
func RealKFD() (ok bool, why string) {
	st, err := os.Stat("/dev/kfd")
	if err != nil {
		return false, fmt.Sprintf("no /dev/kfd (%v)", err)
	}
	if st.Mode()&os.ModeCharDevice == 0 {
		return false, "/dev/kfd is not a character device"
	}
	b, err := os.ReadFile("/sys/module/amdgpu/initstate")
	if err != nil || strings.TrimSpace(string(b)) != "live" {
		return false, "amdgpu module is not live"
	}
	return true, ""
}
