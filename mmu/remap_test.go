package mmu

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRemapHasNoHole: Remap rewrites valid PTEs in place, so an engine reading the range while it is
// remapped (the SVM restore of a range queues are using, kfd/sharedvm.go) reads the old or the new
// page and never faults, and after Remap returns every read reaches the new page.
func TestRemapHasNoHole(t *testing.T) {
	ph := NewPhys()
	paA, _ := vram(t, ph, 2*pageSize)
	paB, _ := vram(t, ph, 2*pageSize)
	vm := NewVM(ph, Config{PASID: 1})
	const va = 0x400000
	if err := vm.Map(va, 2*pageSize, paA, rw); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p := vm.NewPort()
		defer p.Close()
		b := make([]byte, 8)
		for !stop.Load() {
			if err := p.Read(va+pageSize, b); err != nil {
				t.Errorf("read during remap: %v", err)
				return
			}
			if got := binary.LittleEndian.Uint64(b); got != paA+pageSize && got != paB+pageSize {
				t.Errorf("read %#x: neither page", got)
				return
			}
		}
	}()
	for i := 0; i < 2000; i++ {
		pa := paA
		if i%2 == 0 {
			pa = paB
		}
		if err := vm.Remap(va, 2*pageSize, pa, rw); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	// the last Remap (i = 1999) mapped A; a fresh read sees it
	p := vm.NewPort()
	defer p.Close()
	b := make([]byte, 8)
	if err := p.Read(va, b); err != nil || binary.LittleEndian.Uint64(b) != paA {
		t.Fatalf("after remap: %#x, %v", binary.LittleEndian.Uint64(b), err)
	}
	// Remap over a hole maps, and invalidates nothing: no TLB flush, no wait for a port that is
	// inside an access (a GPU retry fault maps that way while other work-groups run).
	flushes := vm.Stats().TLBFlushes
	if err := p.enter(); err != nil {
		t.Fatal(err)
	}
	err := vm.Remap(va+4*pageSize, pageSize, paB, rw) // would wait for p forever if it quiesced
	p.leave()
	if err != nil {
		t.Fatal(err)
	}
	if n := vm.Stats().TLBFlushes; n != flushes {
		t.Fatalf("Remap over a hole flushed the TLBs (%d -> %d)", flushes, n)
	}
	if err := p.Read(va+4*pageSize, b); err != nil || binary.LittleEndian.Uint64(b) != paB {
		t.Fatalf("after remap over a hole: %#x, %v", binary.LittleEndian.Uint64(b), err)
	}
	if err := vm.Remap(va+1, pageSize, paB, rw); err == nil {
		t.Fatal("unaligned va accepted")
	}
	if err := vm.Remap(va, pageSize, paB, PTEAddrMask); err == nil {
		t.Fatal("bad flags accepted")
	}
}

// TestRemoteRMWNoWriteBack: on Remote backing an Atomic whose f leaves the value unchanged (a
// failed compare-and-swap, a load written as f(old) = old) writes nothing, so a store the client
// makes between the engine's read and its would-be write survives. The PM4 engine once loaded its
// write pointer that way from userptr memory and erased the client's next write pointer (kfdtest
// 5.2.3 KFDEventTest.SignalInvalidEvent lost a submission about once in 300).
func TestRemoteRMWNoWriteBack(t *testing.T) {
	ph := NewPhys()
	inner := &fakeRemote{base: 0x7f0000000000, mem: make([]byte, 4096)}
	r := &storeAfterRead{fakeRemote: inner, after: func() {
		// the client's store lands after the engine's read
		inner.mu.Lock()
		binary.LittleEndian.PutUint64(inner.mem[8:], 5184)
		inner.mu.Unlock()
	}}
	pa, err := ph.AllocSystem(4096, Backing{Remote: r, RemoteAddr: inner.base})
	if err != nil {
		t.Fatal(err)
	}
	vm := NewVM(ph, Config{PASID: 1})
	const va = 0x600000
	if err := vm.Map(va, 4096, pa, rw|PTESystem); err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint64(inner.mem[8:], 5168)
	p := vm.NewPort()
	defer p.Close()
	old, err := p.Atomic(va+8, 8, func(o uint64) uint64 { return o })
	if err != nil || old != 5168 {
		t.Fatalf("Atomic: old %d, %v", old, err)
	}
	if got := binary.LittleEndian.Uint64(inner.mem[8:]); got != 5184 {
		t.Fatalf("client's store overwritten: word is %d, want 5184", got)
	}
	// a changing f still writes
	r.after = nil
	if _, err := p.Atomic(va+8, 8, func(o uint64) uint64 { return o + 1 }); err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint64(inner.mem[8:]); got != 5185 {
		t.Fatalf("increment: word is %d, want 5185", got)
	}
}

// storeAfterRead runs after once each ReadAt has copied the memory out.
type storeAfterRead struct {
	*fakeRemote
	after func()
}

func (r *storeAfterRead) ReadAt(p []byte, addr uint64) error {
	err := r.fakeRemote.ReadAt(p, addr)
	if r.after != nil {
		r.after()
	}
	return err
}
