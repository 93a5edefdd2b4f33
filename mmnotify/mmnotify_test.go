package mmnotify

import (
	"errors"
	"os"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

func open(t *testing.T) *Notifier {
	t.Helper()
	n, err := Open(t.Logf)
	if errors.Is(err, ErrUnavailable) && os.Geteuid() != 0 {
		t.Skipf("skipped (not root): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
}

type seen struct {
	mu sync.Mutex
	iv [][2]uint64
}

func (s *seen) add(a, b uint64) { s.mu.Lock(); s.iv = append(s.iv, [2]uint64{a, b}); s.mu.Unlock() }
func (s *seen) take() [][2]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.iv
	s.iv = nil
	return r
}

// The test process watches itself: every unmap it makes is seen after Sync.
func TestUnmapsSeenAfterSync(t *testing.T) {
	n := open(t)
	var s seen
	pid := os.Getpid()
	w, err := n.Watch(pid, s.add)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const ps = 4096
	mem, err := unix.Mmap(-1, 0, 16*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	base := uint64(uintptrOf(mem))
	w.Sync()
	s.take() // the Go runtime may unmap on its own; start clean

	if err := munmap(base+2*ps, 4*ps); err != nil {
		t.Fatal(err)
	}
	w.Sync()
	if want := [2]uint64{base + 2*ps, 4 * ps}; !contains(s.take(), want) {
		t.Fatalf("munmap %#x+%#x not seen", want[0], want[1])
	}
	// mmap MAP_FIXED over pages 6..7 replaces them
	if _, _, e := unix.Syscall6(unix.SYS_MMAP, uintptr(base+6*ps), 2*ps, unix.PROT_READ,
		unix.MAP_ANON|unix.MAP_PRIVATE|unix.MAP_FIXED, ^uintptr(0), 0); e != 0 {
		t.Fatal(e)
	}
	w.Sync()
	if want := [2]uint64{base + 6*ps, 2 * ps}; !contains(s.take(), want) {
		t.Fatalf("mmap MAP_FIXED %#x+%#x not seen", want[0], want[1])
	}
	// mremap shrinking pages 8..15 to 8..11 in place unmaps 12..15
	if r, _, e := unix.Syscall6(unix.SYS_MREMAP, uintptr(base+8*ps), 8*ps, 4*ps, 0, 0, 0); e != 0 || uint64(r) != base+8*ps {
		t.Fatalf("mremap: %v", e)
	}
	w.Sync()
	if want := [2]uint64{base + 12*ps, 4 * ps}; !contains(s.take(), want) {
		t.Fatalf("mremap shrink tail %#x+%#x not seen", want[0], want[1])
	}
	// a failing munmap (unaligned) reports nothing
	munmap(base+1, ps)
	w.Sync()
	for _, iv := range s.take() {
		if iv[0] == base+1 {
			t.Fatalf("failed munmap reported: %#x", iv)
		}
	}
	munmap(base, 16*ps)
}

// Another thread's unmaps count too (the counter is per process, records per thread).
func TestUnmapFromOtherThread(t *testing.T) {
	n := open(t)
	var s seen
	pid := os.Getpid()
	w, err := n.Watch(pid, s.add)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	base := uint64(uintptrOf(mem))
	done := make(chan error)
	go func() { done <- munmap(base, 4096) }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	w.Sync()
	if !contains(s.take(), [2]uint64{base, 4096}) {
		t.Fatal("munmap on another thread not seen")
	}
}

// After Stop nothing is reported and Sync returns at once.
func TestUnwatch(t *testing.T) {
	n := open(t)
	var s seen
	pid := os.Getpid()
	w, err := n.Watch(pid, s.add)
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	base := uint64(uintptrOf(mem))
	munmap(base, 4096)
	w.Sync()
	if contains(s.take(), [2]uint64{base, 4096}) {
		t.Fatal("unmap reported after Stop")
	}
}

func TestDecode(t *testing.T) {
	p := &proc{pending: map[uint32][]uint64{}}
	const ps = 4096
	cases := []struct {
		name string
		recs [][6]uint64 // kind, args
		want [][2]uint64
	}{
		{"munmap rounds len up", [][6]uint64{{kindMunmap, ps, 1}}, [][2]uint64{{ps, ps}}},
		{"munmap unaligned fails", [][6]uint64{{kindMunmap, ps + 8, ps}}, nil},
		{"munmap len 0 fails", [][6]uint64{{kindMunmap, ps, 0}}, nil},
		{"mremap move", [][6]uint64{{kindMremapIn, ps, 2 * ps, 2 * ps, 1, 0}, {kindMremapOut, 9 * ps}}, [][2]uint64{{ps, 2 * ps}}},
		{"mremap fixed", [][6]uint64{{kindMremapIn, ps, 2 * ps, 3 * ps, 3, 9 * ps}, {kindMremapOut, 9 * ps}}, [][2]uint64{{9 * ps, 3 * ps}, {ps, 2 * ps}}},
		{"mremap grow in place", [][6]uint64{{kindMremapIn, ps, 2 * ps, 3 * ps, 1, 0}, {kindMremapOut, ps}}, nil},
		{"mremap shrink", [][6]uint64{{kindMremapIn, ps, 3 * ps, ps, 0, 0}, {kindMremapOut, ps}}, [][2]uint64{{2 * ps, 2 * ps}}},
		{"mremap failed", [][6]uint64{{kindMremapIn, ps, 2 * ps, 3 * ps, 1, 0}, {kindMremapOut, ^uint64(11)}}, nil},
		{"mremap dontunmap", [][6]uint64{{kindMremapIn, ps, 2 * ps, 2 * ps, 5, 0}, {kindMremapOut, 9 * ps}}, nil},
		{"mmap new", [][6]uint64{{kindMmapIn, 0, ps, 3, 0x22, 0}, {kindMmapOut, 5 * ps}}, nil},
		{"mmap fixed", [][6]uint64{{kindMmapIn, 5 * ps, ps, 3, 0x32, 0}, {kindMmapOut, 5 * ps}}, [][2]uint64{{5 * ps, ps}}},
		{"mmap fixed noreplace", [][6]uint64{{kindMmapIn, 5 * ps, ps, 3, 0x100032, 0}, {kindMmapOut, 5 * ps}}, nil},
		{"mmap failed", [][6]uint64{{kindMmapIn, 5 * ps, ps, 3, 0x32, 0}, {kindMmapOut, ^uint64(11)}}, nil},
		{"exit without entry", [][6]uint64{{kindMmapOut, 5 * ps}}, nil},
	}
	for _, c := range cases {
		var got [][2]uint64
		for _, r := range c.recs {
			var a [maxArgs]uint64
			copy(a[:], r[1:])
			got = append(got, p.decode(7, uint32(r[0]), a)...)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			}
		}
	}
}

func contains(iv [][2]uint64, want [2]uint64) bool {
	for _, x := range iv {
		if x == want {
			return true
		}
	}
	return false
}

// FuzzDecode: records carry a client's raw syscall arguments; decoding never panics and reports
// only page-aligned intervals that do not wrap.
func FuzzDecode(f *testing.F) {
	f.Add(uint32(kindMunmap), uint64(4096), uint64(1), uint64(0), uint64(0), uint64(0))
	f.Add(uint32(kindMremapIn), uint64(4096), uint64(8192), uint64(4096), uint64(3), uint64(1<<20))
	f.Add(uint32(kindMmapIn), uint64(1<<20), ^uint64(0), uint64(3), uint64(0x32), uint64(0))
	f.Fuzz(func(t *testing.T, kind uint32, a0, a1, a2, a3, a4 uint64) {
		p := &proc{pending: map[uint32][]uint64{}}
		for _, k := range []uint32{kind, kind + 1} { // an entry record, then its exit
			for _, iv := range p.decode(1, k, [maxArgs]uint64{a0, a1, a2, a3, a4}) {
				if iv[0]&pageMask != 0 || iv[1]&pageMask != 0 {
					t.Fatalf("unaligned interval %#x", iv)
				}
			}
		}
	})
}

// TestSynced: the generation moves with every call that changes a VMA (mmap, mprotect, munmap,
// brk), as of the last Sync; it is unknown before the first Sync and after Stop.
func TestSynced(t *testing.T) {
	n := open(t)
	w, err := n.Watch(os.Getpid(), func(uint64, uint64) {})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.Synced(); ok {
		t.Fatal("a generation before the first Sync")
	}
	w.Sync()
	g, ok := w.Synced()
	if !ok {
		t.Fatal("no generation after Sync")
	}
	const ps = 4096
	mem, err := unix.Mmap(-1, 0, 4*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	base := uint64(uintptrOf(mem))
	for _, c := range []struct {
		what string
		do   func() error
	}{
		{"mmap", func() error { return nil }}, // done above
		{"mprotect", func() error { return unix.Mprotect(mem[:ps], unix.PROT_READ) }},
		{"brk", func() error { _, _, e := unix.Syscall(unix.SYS_BRK, 0, 0, 0); return errnoErr(e) }},
		{"munmap", func() error { return munmap(base, 4*ps) }},
	} {
		if err := c.do(); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if g2, _ := w.Synced(); g2 != g {
			t.Fatalf("%s: the generation moved before Sync", c.what)
		}
		w.Sync()
		g2, ok := w.Synced()
		if !ok || g2 <= g {
			t.Errorf("%s: generation %d -> %d (ok %v), want it to grow", c.what, g, g2, ok)
		}
		g = g2
	}
	w.Stop()
	if _, ok := w.Synced(); ok {
		t.Error("a generation after Stop")
	}
}

// A slot counts only for the tgid it was given to: a stale hash entry (a program that looked up the
// slot just before Stop gave it away) counts nothing in the slot's new owner, and Sync, which
// reads the counter from the mapped slot, does not wait for records that never come.
func TestSlotTgidCheck(t *testing.T) {
	n := open(t)
	pid := os.Getpid()
	w, err := n.Watch(pid, func(uint64, uint64) {})
	if err != nil {
		t.Fatal(err)
	}
	slot := w.p.slot
	w.Stop()
	n.mu.Lock()
	if n.free[len(n.free)-1] != slot {
		n.mu.Unlock()
		t.Fatalf("slot %d not returned to the end of the free list", slot)
	}
	// Give the slot to another tgid and leave this one's hash entry pointing at it.
	n.word32(slot, slotTgid).Store(uint32(pid) + 1)
	n.mu.Unlock()
	if err := n.watched.Put(uint32(pid), slot); err != nil {
		t.Fatal(err)
	}
	mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	munmap(uint64(uintptrOf(mem)), 4096)
	n.mu.Lock()
	got := n.word64(slot, slotRecords).Load()
	n.word32(slot, slotTgid).Store(0)
	n.mu.Unlock()
	n.watched.Delete(uint32(pid))
	if got != 0 {
		t.Fatalf("a stale entry counted %d records in a slot of another tgid", got)
	}

	// Watching again takes a fresh slot whose counts start at zero and move with the process.
	w, err = n.Watch(pid, func(uint64, uint64) {})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if w.p.slot == slot {
		t.Fatalf("slot %d reused at once", slot)
	}
	w.Sync()
	g, _ := w.Synced()
	mem, err = unix.Mmap(-1, 0, 4096, unix.PROT_READ, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	munmap(uint64(uintptrOf(mem)), 4096)
	w.Sync()
	if g2, ok := w.Synced(); !ok || g2 < g+2 {
		t.Fatalf("generation %d -> %d (ok %v) over an mmap and a munmap", g, g2, ok)
	}
}

// A watch of a tgid that replaces an earlier one (a kfd process closed and opened again) neither
// handles nor counts the records emitted for the earlier one and read after it began: its Sync
// returns only once its own records are handled. (The earlier watch's 4096 munmaps are still
// queued when the new watch starts; counted as the new watch's, they let its Sync return before
// the new munmap was handled: runtime/kmt's SVM munmap test failed about once in 300 that way.)
//
// The earlier watch's munmaps are of kernel-half addresses, which fail EINVAL but are recorded at
// the syscall's entry: no thread of the process can map there, so an interval there handled by
// the new watch can only be one of the earlier watch's records. (Real munmaps left a 16 MiB hole
// that the Go runtime or another thread may map and unmap while the new watch runs: a CI run
// saw the new watch handle such an unmap at 0x7f0f5ff00000, inside the hole.)
func TestRewatchIgnoresEarlierRecords(t *testing.T) {
	n := open(t)
	pid := os.Getpid()
	const ps, pages = 4096, 4096
	const kernelHalf = uint64(0xffff_8000_0000_0000)
	for round := range 5 {
		var old, cur seen
		w1, err := n.Watch(pid, old.add)
		if err != nil {
			t.Fatal(err)
		}
		for i := range uint64(pages) {
			if err := munmap(kernelHalf+i*ps, ps); err != unix.EINVAL {
				t.Fatalf("munmap of the kernel half: %v, want EINVAL", err)
			}
		}
		w1.Stop()
		w2, err := n.Watch(pid, cur.add)
		if err != nil {
			t.Fatal(err)
		}
		mem, err := unix.Mmap(-1, 0, ps, unix.PROT_READ, unix.MAP_ANON|unix.MAP_PRIVATE)
		if err != nil {
			t.Fatal(err)
		}
		last := uint64(uintptrOf(mem))
		if err := munmap(last, ps); err != nil {
			t.Fatal(err)
		}
		w2.Sync()
		got := cur.take()
		if !contains(got, [2]uint64{last, ps}) {
			t.Fatalf("round %d: the new watch's munmap %#x not handled when its Sync returned (%d intervals handled)", round, last, len(got))
		}
		for _, iv := range got {
			if iv[0] >= kernelHalf {
				t.Fatalf("round %d: the new watch handled %#x, unmapped under the earlier watch", round, iv[0])
			}
		}
		w2.Stop()
	}
}
