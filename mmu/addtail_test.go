package mmu

import (
	"encoding/binary"
	"testing"
)

// countRemote counts a fakeRemote's reads and writes.
type countRemote struct {
	*fakeRemote
	reads, writes int
}

func (r *countRemote) ReadAt(p []byte, addr uint64) error {
	r.reads++
	return r.fakeRemote.ReadAt(p, addr)
}

func (r *countRemote) WriteAt(p []byte, addr uint64) error {
	r.writes++
	return r.fakeRemote.WriteAt(p, addr)
}

// TestAtomicAddTail: the 64-bit add returns the old value and leaves the new one, the tail holds
// the bytes after the word, and on Remote backing a word whose tail lies in its page costs one read
// and one write (a completion signal's decrement with its mailbox and event id); a tail past the
// page or longer than MaxTail is read by a second access, as Read would.
func TestAtomicAddTail(t *testing.T) {
	ph := NewPhys()
	const base = 0x7f0000000000
	r := &countRemote{fakeRemote: &fakeRemote{base: base, mem: make([]byte, 2*4096)}}
	pa, err := ph.AllocSystem(2*4096, Backing{Remote: r, RemoteAddr: base})
	if err != nil {
		t.Fatal(err)
	}
	mem := make([]byte, 4096)
	vpa, err := ph.AllocVRAM(0, 4096, Backing{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	vm := NewVM(ph, Config{PASID: 1})
	const va, vva = 0x600000, 0x800000
	if err := vm.Map(va, 2*4096, pa, rw|PTESystem); err != nil {
		t.Fatal(err)
	}
	if err := vm.Map(vva, 4096, vpa, rw); err != nil {
		t.Fatal(err)
	}
	p := vm.NewPort()
	defer p.Close()

	fill := func(b []byte, off int) { // value 3, mailbox 0x1122334455667788, event id 42
		binary.LittleEndian.PutUint64(b[off+8:], 3)
		binary.LittleEndian.PutUint64(b[off+16:], 0x1122334455667788)
		binary.LittleEndian.PutUint32(b[off+24:], 42)
	}
	check := func(name string, b []byte, off int, addr uint64, tailLen int, reads, writes int) {
		t.Helper()
		fill(b, off)
		r.reads, r.writes = 0, 0
		tail := make([]byte, tailLen)
		old, err := p.AtomicAddTail(addr+8, ^uint64(0), tail)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if old != 3 || binary.LittleEndian.Uint64(b[off+8:]) != 2 {
			t.Fatalf("%s: old %d, word %d; want 3, 2", name, old, binary.LittleEndian.Uint64(b[off+8:]))
		}
		if got := binary.LittleEndian.Uint64(tail); got != 0x1122334455667788 {
			t.Fatalf("%s: mailbox %#x", name, got)
		}
		if tailLen >= 12 {
			if got := binary.LittleEndian.Uint32(tail[8:]); got != 42 {
				t.Fatalf("%s: event id %d", name, got)
			}
		}
		if r.reads != reads || r.writes != writes {
			t.Fatalf("%s: %d reads and %d writes of client memory, want %d and %d", name, r.reads, r.writes, reads, writes)
		}
	}
	check("remote", r.mem, 0x40, va+0x40, 12, 1, 1)
	check("remote, MaxTail", r.mem, 0x80, va+0x80, MaxTail, 1, 1)
	check("mem", mem, 0x40, vva+0x40, 12, 0, 0)
	// The word in the last 8 bytes of a page and its tail on the next: a second access.
	check("remote, tail on the next page", r.mem, 4096-16, va+4096-16, 12, 2, 1)
	check("remote, longer than MaxTail", r.mem, 0x100, va+0x100, MaxTail+8, 2, 1)
	// A misaligned word is refused as AtomicAdd refuses it.
	if _, err := p.AtomicAddTail(va+0x44, 1, make([]byte, 8)); err == nil {
		t.Fatal("misaligned AtomicAddTail succeeded")
	}
}
