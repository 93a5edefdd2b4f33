package kfd

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"golang.org/x/sys/unix"
)

// spaceMappings counts this process's mappings of memfds named kfdemu-NAME.
func spaceMappings(t *testing.T, name string) int {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "/memfd:kfdemu-"+name+" ")
}

// The daemon's views of small allocations share arenas: thousands of them are a few mappings, each
// view shows its own file offsets (across an arena boundary too), an arena goes once nothing in it
// is live and the allocator has left it, one live at close stays readable until its release, and
// an allocation above arenaMax is a mapping of its own.
func TestSpaceArenas(t *testing.T) {
	s, err := newSpace("arenatest")
	if err != nil {
		t.Fatal(err)
	}
	type alloc struct {
		off int64
		mem []byte
	}
	var small []alloc
	for i := range 4000 {
		off, mem, err := s.alloc(uint64(4096 * (1 + i%3)))
		if err != nil {
			t.Fatal(err)
		}
		mem[0], mem[len(mem)-1] = byte(i), byte(i>>8)
		small = append(small, alloc{off, mem})
	}
	if n := spaceMappings(t, "arenatest"); n != 1 {
		t.Fatalf("4000 small allocations: %d daemon mappings, want 1", n)
	}
	check := func(a alloc) { // the first and the last page
		t.Helper()
		for _, o := range []int{0, len(a.mem) - 4096} {
			got := make([]byte, 4096)
			if _, err := unix.Pread(int(s.f.Fd()), got, a.off+int64(o)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, a.mem[o:o+4096]) {
				t.Fatalf("the view of offset %#x is not the file's bytes there", a.off+int64(o))
			}
		}
	}
	for _, a := range small[:50] {
		check(a)
	}
	// Allocations of arenaMax until the allocator is in the third arena.
	var mid []alloc
	for s.next < 2*arenaSize {
		off, mem, err := s.alloc(arenaMax)
		if err != nil {
			t.Fatal(err)
		}
		if off/arenaSize != (off+int64(len(mem))-1)/arenaSize {
			t.Fatalf("allocation at %#x of %#x bytes crosses an arena boundary", off, len(mem))
		}
		mem[0], mem[len(mem)-1] = 0xa5, 0x5a
		mid = append(mid, alloc{off, mem})
	}
	for _, a := range mid {
		check(a)
	}
	if n := spaceMappings(t, "arenatest"); n != 3 {
		t.Fatalf("allocations over three arenas: %d daemon mappings, want 3", n)
	}
	// Releasing everything of the first arena unmaps it.
	for _, a := range small {
		s.release(a.off, a.mem)
	}
	for _, a := range mid {
		if a.off < arenaSize {
			s.release(a.off, a.mem)
		}
	}
	if n := spaceMappings(t, "arenatest"); n != 2 {
		t.Fatalf("the first arena released: %d daemon mappings, want 2", n)
	}
	off, big, err := s.alloc(arenaMax + 4096)
	if err != nil {
		t.Fatal(err)
	}
	big[len(big)-1] = 7
	check(alloc{off, big})
	if n := spaceMappings(t, "arenatest"); n != 3 {
		t.Fatalf("with an allocation above arenaMax: %d daemon mappings, want 3", n)
	}
	s.release(off, big)
	// At close, an arena with a live allocation stays (a dma-buf may hold it); the others go.
	last := mid[len(mid)-1]
	for _, a := range mid[:len(mid)-1] {
		if a.off >= arenaSize {
			s.release(a.off, a.mem)
		}
	}
	s.retired.Store(true)
	s.close()
	if n := spaceMappings(t, "arenatest"); n != 1 {
		t.Fatalf("closed with one live allocation: %d daemon mappings, want 1", n)
	}
	if last.mem[0] != 0xa5 || last.mem[len(last.mem)-1] != 0x5a {
		t.Fatal("a live allocation lost its bytes at close")
	}
	s.release(last.off, last.mem)
	if n := spaceMappings(t, "arenatest"); n != 0 {
		t.Fatalf("everything released after close: %d daemon mappings, want 0", n)
	}
}

// Large allocations between small ones do not move the small ones to new arenas: 20 context-save
// areas of 60 MiB, each after a small BO (a queue's ring), are 20 mappings and one arena, not 40.
func TestSpaceBigBesideSmall(t *testing.T) {
	s, err := newSpace("bigsmall")
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	var mems [][]byte
	for range 20 {
		for _, size := range []uint64{4096, 60 << 20} {
			off, mem, err := s.alloc(size)
			if err != nil {
				t.Fatal(err)
			}
			offs, mems = append(offs, off), append(mems, mem)
		}
	}
	if n := spaceMappings(t, "bigsmall"); n != 21 {
		t.Fatalf("20 small and 20 large allocations in turn: %d daemon mappings, want 21", n)
	}
	for i := range offs {
		s.release(offs[i], mems[i])
	}
	s.close()
	if n := spaceMappings(t, "bigsmall"); n != 0 {
		t.Fatalf("everything released and closed: %d daemon mappings, want 0", n)
	}
}

// One process holds more BOs than the kernel allows the daemon mappings (vm.max_map_count,
// 65530 by default): with a mapping per BO the daemon answered ENOMEM to every client from there on.
func TestManyBOs(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	const n = 70000
	handles := make([]uint64, 0, n)
	for i := range n {
		a := abi.AllocMemoryOfGPUArgs{VAAddr: 0x100000000 + uint64(i)*8192, Size: 4096, GPUID: e.gpu,
			Flags: allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}
		if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
			t.Fatalf("ALLOC %d: %v", i, errno)
		}
		handles = append(handles, a.Handle)
	}
	for _, h := range handles {
		if errno := e.do(abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: h}); errno != 0 {
			t.Fatalf("FREE %#x: %v", h, errno)
		}
	}
	if st := e.d.Stats(); st["bos"] != 0 {
		t.Fatalf("after freeing them: %v", st)
	}
}
