// Package testenv holds helpers shared by kfdemu's tests that mount the emulator: capability checks
// that skip with a printed reason only where a capability is truly absent, building the kfdemu
// binary once per test process, and compiling OpenCL test kernels into gfx90a code objects.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
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

// NeedTools skips, saying which, unless every named executable is on PATH (Debian packages that
// scripts/install-deps.sh installs).
func NeedTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s not installed (Debian package from scripts/install-deps.sh)", tool)
		}
	}
}

// CompileOpenCL compiles the OpenCL C file src for gfx90a with clang-14 and links it with
// ld.lld-14 into dir/<base>.co, returning that path.
func CompileOpenCL(src, dir string) (string, error) {
	base := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
	obj, co := filepath.Join(dir, base+".o"), filepath.Join(dir, base+".co")
	if out, err := exec.Command("clang-14", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-nogpulib", "-O2",
		"-cl-std=CL2.0", "-c", src, "-o", obj).CombinedOutput(); err != nil {
		return "", &toolError{"clang-14", err, string(out)}
	}
	if out, err := exec.Command("ld.lld-14", "-shared", obj, "-o", co).CombinedOutput(); err != nil {
		return "", &toolError{"ld.lld-14", err, string(out)}
	}
	return co, nil
}

// CodeObject is CompileOpenCL into a test temporary directory; it skips when the tools are absent
// and fails the test when they fail.
func CodeObject(t testing.TB, src string) string {
	t.Helper()
	NeedTools(t, "clang-14", "ld.lld-14")
	co, err := CompileOpenCL(src, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return co
}

type toolError struct {
	tool string
	err  error
	out  string
}

func (e *toolError) Error() string { return e.tool + ": " + e.err.Error() + "\n" + e.out }

// RequireSharedEnv names the environment variable that turns a missing ../shared into a failure
// (scripts/test.sh sets it, so CI cannot pass by skipping the tests that read it).
const RequireSharedEnv = "KFDEMU_REQUIRE_SHARED"

// Shared returns the path of rel inside ../shared, the project's reference data beside the
// repository (captured topology trees, kfdtest sources). A lone clone has none: the test is
// skipped with the reason, or fails if RequireSharedEnv is set.
func Shared(t testing.TB, rel string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", rel)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv(RequireSharedEnv) != "" {
			t.Fatalf("%s is required (%s is set): %v", p, RequireSharedEnv, err)
		}
		t.Skipf("skipping: ../shared is absent beside the repository (%v)", err)
	}
	return p
}

// DirNames lists dir's entry names in sorted order (os.ReadDir), failing the test if it cannot.
func DirNames(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(es))
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
