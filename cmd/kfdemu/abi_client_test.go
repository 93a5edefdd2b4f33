package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestABIClientC builds a C client against Debian's <linux/kfd_ioctl.h> and drives the mount's ABI
// directly: results, mmap of a BO through the render node, and the errno of each invalid case.
func TestABIClientC(t *testing.T) {
	if _, err := os.Stat("/usr/include/linux/kfd_ioctl.h"); err != nil {
		t.Skip("skipping: linux-libc-dev's kfd_ioctl.h is not installed")
	}
	mnt := daemon(t, "mi210")
	dir := t.TempDir()
	inc := filepath.Join(dir, "inc")
	os.MkdirAll(inc, 0755)
	// kfd_ioctl.h includes <drm/drm.h>: Debian ships it in libdrm-dev under /usr/include/libdrm.
	os.Symlink("/usr/include/libdrm", filepath.Join(inc, "drm"))
	bin := filepath.Join(dir, "abi_client")
	if out, err := exec.Command("gcc", "-Wall", "-I", inc, "-o", bin, "testdata/abi_client.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	minor := strings.TrimPrefix(interfaceVersion(), "1.")
	out, err := exec.Command(bin, mnt, minor).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "done") {
		t.Fatalf("%v\n%s", err, out)
	}
	noLeaks(t, mnt)
}
