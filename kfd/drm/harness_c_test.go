package drm

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildHarness compiles testdata/harness.c against Debian's libdrm-dev (libdrm_amdgpu 2.4.114).
func buildHarness(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed")
	}
	if _, err := os.Stat("/usr/include/libdrm/amdgpu.h"); err != nil {
		t.Skip("libdrm-dev is not installed (/usr/include/libdrm/amdgpu.h missing)")
	}
	bin := filepath.Join(t.TempDir(), "harness")
	out, err := exec.Command(cc, "-Wall", "-Werror", "-o", bin, "testdata/harness.c", "-ldrm_amdgpu", "-ldrm").CombinedOutput()
	if err != nil {
		t.Fatalf("compiling the libdrm_amdgpu harness: %v\n%s", err, out)
	}
	// testdata/cs.c (GEM and command submission, run by cmd/kfdemu TestLibdrmCSThroughMount).
	cs := filepath.Join(t.TempDir(), "cs")
	if out, err := exec.Command(cc, "-Wall", "-Werror", "-o", cs, "testdata/cs.c", "-ldrm_amdgpu", "-ldrm").CombinedOutput(); err != nil {
		t.Fatalf("compiling testdata/cs.c: %v\n%s", err, out)
	}
	return bin
}

// TestLibdrmHarnessCompiles always builds the harness, so CI notices when it stops compiling. It runs
// against a live render node in cmd/kfdemu (TestLibdrmThroughMount).
func TestLibdrmHarnessCompiles(t *testing.T) { buildHarness(t) }
