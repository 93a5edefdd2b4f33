// Package examples holds small programs that use the Go runtime (runtime/hsa); this test builds
// and runs each against a kfdemu mount.
package examples

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/internal/testenv"
)

// TestMain removes the kfdemu binary testenv.Kfdemu built (a directory under the system's
// temporary directory per run otherwise: 41 of them had piled up on the CI VM).
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}

// mount starts `kfdemu serve` on a temporary directory and returns its root.
func mount(t *testing.T) string {
	testenv.NeedMount(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	cmd := exec.Command(testenv.Kfdemu(t), "serve", "--mount", mnt, "--log-level", "error")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(mnt, "sys/kernel/debug/kfdemu/stats"))
		if err == nil && strings.HasPrefix(string(b), "ready 1\n") {
			return mnt
		}
		if time.Now().After(deadline) {
			t.Fatal("kfdemu serve did not come up")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func run(t *testing.T, root, example string, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), example)
	if out, err := exec.Command("go", "build", "-o", bin, "./"+example).CombinedOutput(); err != nil {
		t.Fatalf("go build ./%s: %v\n%s", example, err, out)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KFDEMU_ROOT="+root)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", example, err, out)
	}
	return string(out)
}

func TestExamples(t *testing.T) {
	root := mount(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"agents", nil, `GPU agent "gfx90a" (node 1): amdgcn-amd-amdhsa--gfx90a, 104 CUs`},
		{"barrier", []string{"-n", "200"}, "200 barrier packets: p50 "},
		{"copy", nil, "copied 16 MiB to VRAM and back with SDMA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if out := run(t, root, tc.name, tc.args...); !strings.Contains(out, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
		})
	}
	t.Run("dispatch", func(t *testing.T) {
		co := testenv.CodeObject(t, "../cmd/kfdemu/testdata/rocm/vadd.cl")
		if out := run(t, root, "dispatch", co); !strings.Contains(out, "vadd over 4096 elements on amdgcn-amd-amdhsa--gfx90a: ok") {
			t.Errorf("dispatch output:\n%s", out)
		}
	})
}
