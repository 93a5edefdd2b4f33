package kfd

import (
	"errors"
	"os"
	"testing"
	"unsafe"

	"github.com/kfdemu/kfdemu/mmnotify"
	"golang.org/x/sys/unix"
)

// TestVMACache: the parsed maps of a process (this one) are read once per generation of its
// address space: lookups between two Syncs with no change read nothing, an munmap, an mmap or
// an mprotect before the next Sync invalidates them; without a notifier every lookup reads.
func TestVMACache(t *testing.T) {
	n, err := mmnotify.Open(t.Logf)
	if errors.Is(err, mmnotify.ErrUnavailable) && os.Geteuid() != 0 {
		t.Skipf("skipped (not root): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	w, err := n.Watch(os.Getpid(), func(uint64, uint64) {})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	c := &vmaCache{tgid: os.Getpid(), watch: func() *mmnotify.Watch { return w }}
	const ps = 4096
	mmap := func(prot int) uint64 {
		mem, err := unix.Mmap(-1, 0, 4*ps, prot, unix.MAP_ANON|unix.MAP_PRIVATE)
		if err != nil {
			t.Fatal(err)
		}
		return uint64(uintptr(unsafe.Pointer(&mem[0])))
	}
	base := mmap(unix.PROT_READ | unix.PROT_WRITE)
	w.Sync() // what a fault does first (syncMM)
	if v, ok := c.find(base + ps); !ok || v.Start > base || v.End < base+4*ps || !v.Write {
		t.Fatalf("fresh mapping: %+v %v", v, ok)
	}
	w.Sync()
	// The Go runtime maps memory of its own at any time (heap growth, the race detector's shadow),
	// so the first lookup after a Sync may read again; the ones after it, with no Sync between,
	// must not.
	c.find(base)
	r0 := c.reads
	for i := range 4 { // the next faults, no change: no read
		if _, ok := c.find(base + uint64(i)*ps); !ok {
			t.Fatalf("page %d not found", i)
		}
	}
	if c.reads != r0 || r0 > 2 {
		t.Fatalf("%d maps reads for four lookups without a Sync (%d before them)", c.reads-r0, r0)
	}
	if _, _, e := unix.Syscall(unix.SYS_MUNMAP, uintptr(base), 4*ps, 0); e != 0 {
		t.Fatal(e)
	}
	w.Sync()
	if v, ok := c.find(base); c.reads != r0+1 || (ok && v.End == base+4*ps && v.Write) {
		t.Fatalf("munmap between two faults: %+v %v after %d reads: the stale copy was used", v, ok, c.reads)
	}
	r := c.reads
	base2 := mmap(unix.PROT_READ | unix.PROT_WRITE)
	w.Sync()
	if _, ok := c.find(base2); !ok || c.reads != r+1 {
		t.Fatalf("mmap between two faults: found %v after %d reads", ok, c.reads-r)
	}
	if _, _, e := unix.Syscall(unix.SYS_MPROTECT, uintptr(base2), 4*ps, unix.PROT_READ); e != 0 {
		t.Fatal(e)
	}
	w.Sync()
	if v, ok := c.find(base2); !ok || v.Write {
		t.Fatalf("mprotect read-only between two faults: %+v %v", v, ok)
	}
	unix.Syscall(unix.SYS_MUNMAP, uintptr(base2), 4*ps, 0)

	nc := &vmaCache{tgid: os.Getpid(), watch: func() *mmnotify.Watch { return nil }}
	nc.find(base2)
	nc.find(base2)
	if nc.reads != 2 {
		t.Errorf("without a notifier: %d reads for two lookups, want 2", nc.reads)
	}
}
