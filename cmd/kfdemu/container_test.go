package main

import (
	"github.com/kfdemu/kfdemu/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestContainer gives a container the emulated GPU the way README "Containers" describes: the
// container is built here from local files by scripts/container.sh (a root filesystem of read-only
// binds of /usr and /etc, its own mount, PID, UTS and IPC namespaces, chroot), with the mount's dev
// directory bound in and /dev/kfd, /dev/dri linked into it. Inside, `kfdemu info` lists the agents,
// an AQL queue answers barrier packets and an SDMA queue copies to VRAM and back; afterwards the
// daemon holds nothing of the container's processes.
func TestContainer(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: containers need root (mount namespaces, chroot)")
	}
	for _, tool := range []string{"unshare", "chroot"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s not found", tool)
		}
	}
	mnt := daemon(t, "mi210")
	dir := t.TempDir()
	for _, ex := range []string{"barrier", "copy"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, ex), "./examples/"+ex)
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", ex, err, out)
		}
	}
	kfdemu, _ := filepath.Abs(testenv.Kfdemu(t))
	cmd := exec.Command("sh", "../../scripts/container.sh",
		"--bind", kfdemu+":/opt/kfdemu/kfdemu",
		"--bind", filepath.Join(dir, "barrier")+":/opt/kfdemu/barrier",
		"--bind", filepath.Join(dir, "copy")+":/opt/kfdemu/copy",
		mnt, "sh", "-c", `hostname; readlink /dev/kfd; echo "pid $$"; export KFDEMU_ROOT=/
/opt/kfdemu/kfdemu info --root / && /opt/kfdemu/barrier -n 200 && /opt/kfdemu/copy`)
	out, err := cmd.CombinedOutput()
	s := string(out)
	if err != nil {
		t.Fatalf("container: %v\n%s", err, s)
	}
	for _, want := range []string{"kfdemu-container\n", "/run/kfdemu/dev/kfd\n", "pid 1\n",
		"Name:                        gfx90a", "200 barrier packets", "with SDMA", ": ok"} {
		if !strings.Contains(s, want) {
			t.Errorf("container output lacks %q:\n%s", want, s)
		}
	}
	noLeaks(t, mnt)
}
