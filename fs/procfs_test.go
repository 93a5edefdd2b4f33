package fs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kfdemu/kfdemu/internal/testenv"
)

// TestProcDir: kfd/proc lists the processes that have the device open, as they come and go, although
// the sys connection's listings are cached by the kernel (a cached proc/ listing would keep the
// first one); a process's directory disappears with it, also for a path looked up before.
func TestProcDir(t *testing.T) {
	mnt, d := mountDriver(t, "mi210")
	proc := filepath.Join(mnt, "sys/devices/virtual/kfd/kfd/proc")
	list := func(dir string) []string { return testenv.DirNames(t, dir) }
	if got := list(proc); len(got) != 0 {
		t.Fatalf("proc/ without clients: %v", got)
	}
	kfdNames := list(filepath.Join(mnt, "sys/devices/virtual/kfd/kfd"))
	if !slices.Equal(kfdNames, []string{"dev", "proc", "topology", "uevent"}) {
		t.Errorf("kfd/: %v", kfdNames)
	}
	child := startHold(t, mnt)
	pid := strconv.Itoa(child.Process.Pid)
	if got := list(proc); !slices.Equal(got, []string{pid}) {
		t.Fatalf("proc/ with client %s: %v", pid, got)
	}
	dir := filepath.Join(proc, pid)
	var vram string
	for _, n := range list(dir) {
		if strings.HasPrefix(n, "vram_") {
			vram = n
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, vram)); err != nil || string(b) != "1048576\n" {
		t.Errorf("%s with 1 MiB of VRAM: %q, %v", vram, b, err)
	}
	child.Process.Kill()
	child.Wait()
	waitStats(t, d, 0)
	if got := list(proc); len(got) != 0 {
		t.Errorf("proc/ after the client exited: %v", got)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat %s after the client exited: %v", dir, err)
	}
	if _, err := os.ReadFile(filepath.Join(dir, vram)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read of %s after the client exited: %v", vram, err)
	}
}
