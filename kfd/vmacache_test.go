package kfd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/kfdemu/kfdemu/mmnotify"
	"golang.org/x/sys/unix"
)

// TestVMACache: the parsed maps of a process (this one) are read once per generation of its
// address space: lookups between two Syncs with no change read nothing, an munmap, an mmap or
// an mprotect before the next Sync invalidates them; without a notifier every lookup reads. Both
// ways of reading: PROCMAP_QUERY per VMA, and the whole file (a kernel before 6.11).
func TestVMACache(t *testing.T) {
	for _, whole := range []bool{false, true} {
		t.Run(fmt.Sprintf("wholeFile=%v", whole), func(t *testing.T) { testVMACache(t, whole) })
	}
}

func testVMACache(t *testing.T, whole bool) {
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
	c := &vmaCache{tgid: os.Getpid(), watch: func() *mmnotify.Watch { return w }, wholeFile: whole}
	const ps = 4096
	// mmap maps four pages between two PROT_NONE guard pages (left mapped): their VMA is exactly
	// the four pages, and the hole their munmap leaves is 16 KiB. Without the guards a mapping of
	// the Go runtime's own (256 KiB, seen in a CI dry run) went into the hole and ended where the
	// unmapped pages had ended, which looked like the stale copy.
	mmap := func(prot int) uint64 {
		mem, err := unix.Mmap(-1, 0, 6*ps, unix.PROT_NONE, unix.MAP_ANON|unix.MAP_PRIVATE)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Mprotect(mem[ps:5*ps], prot); err != nil {
			t.Fatal(err)
		}
		return uint64(uintptr(unsafe.Pointer(&mem[ps])))
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
	if v, ok := c.find(base); c.reads != r0+1 || (ok && v.Start == base && v.End == base+4*ps && v.Write) {
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

	nc := &vmaCache{tgid: os.Getpid(), watch: func() *mmnotify.Watch { return nil }, wholeFile: whole}
	nc.find(base2)
	nc.find(base2)
	if nc.reads != 2 {
		t.Errorf("without a notifier: %d reads for two lookups, want 2", nc.reads)
	}
}

// TestProcmapQuery: PROCMAP_QUERY's struct and command are the kernel's (104 bytes, 0xc0686611),
// and for every VMA of /proc/self/maps but [vsyscall] the query of its first and last byte returns the same VMA,
// permissions, heap/stack and device classification as the parsed file (a kernel without the
// ioctl, before 6.11, skips the comparison).
func TestProcmapQuery(t *testing.T) {
	if n := unsafe.Sizeof(procmapQuery{}); n != 104 || procmapQueryCmd != 0xc0686611 {
		t.Fatalf("struct procmap_query is %d bytes, PROCMAP_QUERY %#x; want 104, 0xc0686611", n, procmapQueryCmd)
	}
	name := make([]byte, procmapNameMax)
	if _, _, err := queryVMA(os.Getpid(), 0, name); errors.Is(err, errNoProcmapQuery) {
		t.Skipf("skipped: %v (Linux before 6.11)", err)
	}
	// A mapping of a file named .../dev/kfd is a device VMA by its name, as in the maps file.
	devDir := filepath.Join(t.TempDir(), "dev")
	if err := os.Mkdir(devDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(devDir, "kfd"), make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(devDir, "kfd"))
	if err != nil {
		t.Fatal(err)
	}
	dm, err := unix.Mmap(int(f.Fd()), 0, 4096, unix.PROT_READ, unix.MAP_SHARED)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(dm)
	if v, found, err := queryVMA(os.Getpid(), uint64(uintptr(unsafe.Pointer(&dm[0]))), name); !found || err != nil || !v.Device || v.Write {
		t.Fatalf("mapping of dev/kfd: %+v %v %v, want a read-only device VMA", v, found, err)
	}
	// The Go runtime maps memory at any time: compare against a file read just before, and retry
	// a few times if a VMA moved in between.
	var bad []string
	for try := 0; try < 5; try++ {
		vmas, err := readMaps(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		bad = bad[:0]
		heap := false
		for _, want := range vmas {
			if want.Start >= 1<<63 {
				// [vsyscall]: the maps file prints the gate VMA, which is in no mm's VMA tree; the
				// kernel's vma_lookup (and so amdkfd) does not find it either, nor does the query.
				continue
			}
			for _, a := range []uint64{want.Start, want.End - 1} {
				got, found, err := queryVMA(os.Getpid(), a, name)
				if err != nil || !found || got != want {
					bad = append(bad, fmt.Sprintf("%#x: %+v %v %v, maps says %+v", a, got, found, err, want))
				}
			}
			heap = heap || want.HeapStack
		}
		if !heap {
			t.Fatal("no [heap] or [stack] in /proc/self/maps")
		}
		if len(bad) == 0 {
			break
		}
	}
	if len(bad) > 0 {
		t.Fatalf("PROCMAP_QUERY differs from /proc/self/maps:\n%s", strings.Join(bad, "\n"))
	}
	// An address no VMA covers: not found, no error.
	if _, found, err := queryVMA(os.Getpid(), 4096, name); found || err != nil {
		t.Fatalf("page 1: found %v, %v", found, err)
	}
}

// BenchmarkVMALookup: a lookup after the client's address space changed, by PROCMAP_QUERY (one
// ioctl) and by reading the whole maps file (before Linux 6.11), on this process.
//
//	go test -run '^$' -bench BenchmarkVMALookup ./kfd
func BenchmarkVMALookup(b *testing.B) {
	addr := uint64(uintptr(unsafe.Pointer(&b)))
	name := make([]byte, procmapNameMax)
	if _, _, err := queryVMA(os.Getpid(), addr, name); err != nil {
		b.Skip(err)
	}
	run := func() {
		vmas, _ := readMaps(os.Getpid())
		b.Run(fmt.Sprintf("query/vmas=%d", len(vmas)), func(b *testing.B) {
			for range b.N {
				if _, found, err := queryVMA(os.Getpid(), addr, name); !found || err != nil {
					b.Fatal(found, err)
				}
			}
		})
		b.Run(fmt.Sprintf("file/vmas=%d", len(vmas)), func(b *testing.B) {
			for range b.N {
				if _, err := readMaps(os.Getpid()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	run()
	// About as many VMAs as a HIP program has (d2d_copy under kfdemu exec: 198): 200 more, every
	// other page read-only so that they do not merge.
	mem, err := unix.Mmap(-1, 0, 400*4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Munmap(mem)
	for i := 0; i < 400; i += 2 {
		if err := unix.Mprotect(mem[i*4096:(i+1)*4096], unix.PROT_READ); err != nil {
			b.Fatal(err)
		}
	}
	run()
}
