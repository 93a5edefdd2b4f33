package kfd

import (
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestZapKeepsStores: a "client" mapping stores increasing values into doorbell words while the
// daemon zaps the pages again and again; no store is lost (the last value of each word is what
// the daemon reads afterwards) and the other words keep their contents.
func TestZapKeepsStores(t *testing.T) {
	s, err := newSpace("kfd")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	off := int64(fixedBase)
	mem, err := s.mapAt(off, doorbellSlice)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	client, err := unix.Mmap(int(s.f.Fd()), off, doorbellSlice, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(client)
	for i := 0; i < doorbellSlice; i += 8 {
		word64(mem[i:]).Store(uint64(0xdb00000000 + i))
	}
	const writers, stores = 3, 3_000_000
	var wg sync.WaitGroup
	var stop atomic.Bool
	zaps := 0
	wg.Add(writers)
	for w := range writers {
		go func() {
			defer wg.Done()
			word := word64(client[8*(1+w*511):]) // one word in each page, and one more
			for v := uint64(1); v <= stores; v++ {
				word.Store(v)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); stop.Store(true); close(done) }()
	for !stop.Load() {
		if err := s.zap(off, mem); err != nil {
			t.Fatal(err)
		}
		zaps++
	}
	<-done
	for w := range writers {
		i := 8 * (1 + w*511)
		if got := word64(mem[i:]).Load(); got != stores {
			t.Errorf("word %d: %d after %d zaps, want the last store %d", i/8, got, zaps, stores)
		}
	}
	for i := 0; i < doorbellSlice; i += 8 {
		if i == 8 || i == 8*512 || i == 8*1023 {
			continue
		}
		if got := word64(mem[i:]).Load(); got != uint64(0xdb00000000+i) {
			t.Fatalf("word %d: %#x after %d zaps, want %#x", i/8, got, zaps, 0xdb00000000+i)
		}
	}
	t.Logf("%d zaps during %d stores of %d writers", zaps, stores, writers)
}

// TestMappingsOf: the ranges armed for a client are its mappings of the device file at doorbell
// offsets (at or above fixedBase), clipped to the slices asked for; a memfd's mapping (the
// daemon's own view) and mappings below fixedBase are not. An empty answer would arm nothing.
func TestMappingsOf(t *testing.T) {
	// A file system whose files reach 2^45 bytes (tmpfs; ext4 stops at 2^44), sparse.
	f, err := os.CreateTemp("/dev/shm", "kfdemu-test-kfd")
	if err != nil {
		t.Skipf("skipping: no /dev/shm for a sparse 2^45-byte file: %v", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	const page = 4096
	if err := f.Truncate(fixedBase + 4*page); err != nil {
		t.Skipf("skipping: a sparse file of 2^45 bytes: %v", err)
	}
	// Pages fixedBase+page .. fixedBase+3*page of the file, and its first page.
	bells, err := unix.Mmap(int(f.Fd()), fixedBase+page, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(bells)
	low, err := unix.Mmap(int(f.Fd()), 0, page, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(low)
	mfd, err := unix.MemfdCreate("kfdemu-kfd", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(mfd)
	if err := unix.Ftruncate(mfd, fixedBase+4*page); err != nil {
		t.Fatal(err)
	}
	own, err := unix.Mmap(mfd, fixedBase+2*page, page, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(own)

	start := uint64(uintptr(unsafe.Pointer(&bells[0])))
	got, err := mappingsOf(os.Getpid(), [][2]int64{{fixedBase + 2*page, fixedBase + 8*page}, {0, page}})
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]uint64{{start + page, start + 2*page}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mappingsOf: %#x, want %#x (the second page of the doorbell mapping only)", got, want)
	}
}
