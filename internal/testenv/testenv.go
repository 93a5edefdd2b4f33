// Package testenv holds helpers shared by kfdemu's tests that mount the emulator: capability checks
// that skip with a printed reason only where a capability is truly absent, and building the kfdemu
// binary once per test process.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// NeedMount skips unless this process can mount FUSE filesystems itself (root or CAP_SYS_ADMIN,
// and /dev/fuse).
func NeedMount(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("skipping: /dev/fuse is absent (%v)", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("skipping: mounting needs root or CAP_SYS_ADMIN")
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Kfdemu builds ./cmd/kfdemu once and returns the binary's path.
func Kfdemu(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		dir, err := os.MkdirTemp("", "kfdemu-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "kfdemu")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/kfdemu")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = &buildError{err, string(out)}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build ./cmd/kfdemu: " + e.err.Error() + "\n" + e.out }

// Cleanup removes the binary built by Kfdemu; call it from TestMain after m.Run.
func Cleanup() {
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
}
