package fs

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCachedDirListing: a static sysfs directory lists the same entries every time, in creation
// order, and after the first listing the kernel serves it from its cache (no entry is asked of
// the daemon again), through new opens and through a rewind of one open; the connection's first
// OPENDIR is answered ENOSYS and the kernel sends no other (noopendir.go).
func TestCachedDirListing(t *testing.T) {
	mnt, _ := mountDriver(t, "mi210")
	dir := filepath.Join(mnt, "sys/devices/virtual/kfd/kfd/topology/nodes/1")
	names := func() []string {
		f, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		a, err := f.Readdirnames(-1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Seek(0, 0); err != nil {
			t.Fatal(err)
		}
		b, err := f.Readdirnames(-1)
		if err != nil || !slices.Equal(a, b) {
			t.Fatalf("after a rewind: %v (%v), first %v", b, err, a)
		}
		return a
	}
	refused := opendirsRefused.Load()
	first := names()
	if n := opendirsRefused.Load() - refused; n != 1 {
		t.Errorf("first listing on the sys connection: %d OPENDIRs refused, want 1", n)
	}
	want := []string{"caches", "gpu_id", "io_links", "mem_banks", "name", "p2p_links", "perf", "properties"}
	got := slices.Clone(first)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("nodes/1: %v, want %v", got, want)
	}
	served := dirEntriesServed.Load()
	for range 3 {
		if again := names(); !slices.Equal(again, first) {
			t.Fatalf("listing changed: %v then %v", first, again)
		}
	}
	if n := dirEntriesServed.Load() - served; n != 0 {
		t.Errorf("%d entries served again for a cached listing", n)
	}
	if n := opendirsRefused.Load() - refused; n != 1 {
		t.Errorf("%d OPENDIRs reached the daemon, want only the first", n)
	}
}

// TestCachedSymlinks: a path through the /sys/class/kfd/kfd symlink costs one READLINK on the
// first walk and none after it (the mount caches symlink targets: mount.go).
func TestCachedSymlinks(t *testing.T) {
	mnt, _ := mountDriver(t, "mi210")
	p := filepath.Join(mnt, "sys/class/kfd/kfd/topology/generation_id")
	before := readlinks.Load()
	for range 5 {
		if _, err := os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	if n := readlinks.Load() - before; n != 1 {
		t.Errorf("5 reads through the class/kfd/kfd symlink: %d READLINKs, want 1", n)
	}
}
