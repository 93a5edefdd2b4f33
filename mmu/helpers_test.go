package mmu

import (
	"encoding/binary"
	"errors"
	"sync"
	"testing"
)

const rw = PTEReadable | PTEWriteable

// vram allocates size bytes of GPU 0 VRAM backed by a fresh slice whose 8-byte words hold their
// own physical address (so a read proves which page a VA reached).
func vram(t testing.TB, ph *Phys, size uint64) (uint64, []byte) {
	t.Helper()
	mem := make([]byte, size)
	pa, err := ph.AllocVRAM(0, size, Backing{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	for off := uint64(0); off < size; off += 8 {
		binary.LittleEndian.PutUint64(mem[off:], pa+off)
	}
	return pa, mem
}

func faultKindOf(t testing.TB, err error) FaultKind {
	t.Helper()
	var fe *FaultError
	if !errors.As(err, &fe) || !errors.Is(err, ErrFault) {
		t.Fatalf("want *FaultError, got %v", err)
	}
	return fe.Fault.Kind
}

// fakeRemote is a Remote over a byte slice at base, optionally blocking inside ReadAt.
type fakeRemote struct {
	mu      sync.Mutex
	base    uint64
	mem     []byte
	entered chan struct{} // if set, ReadAt signals here and waits for release
	release chan struct{}
	fail    error
}

func (r *fakeRemote) rng(p []byte, addr uint64) ([]byte, error) {
	if r.fail != nil {
		return nil, r.fail
	}
	if addr < r.base || addr-r.base+uint64(len(p)) > uint64(len(r.mem)) {
		return nil, errors.New("fake remote: out of range")
	}
	return r.mem[addr-r.base:], nil
}

func (r *fakeRemote) ReadAt(p []byte, addr uint64) error {
	if r.entered != nil {
		r.entered <- struct{}{}
		<-r.release
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m, err := r.rng(p, addr)
	if err == nil {
		copy(p, m)
	}
	return err
}

func (r *fakeRemote) WriteAt(p []byte, addr uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, err := r.rng(p, addr)
	if err == nil {
		copy(m, p)
	}
	return err
}
