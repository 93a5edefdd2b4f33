package mmu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// TestAtomicAgainstCPU: Port.Atomic and Port.AtomicAdd on a Mem backing are one hardware read-modify-write
// of the backing word (a compare-and-swap loop; LOCK XADD), so increments from several engines' Ports and from a host thread
// using LOCK-prefixed atomics on the same memory all land (issue 17's KFDQMTest.Atomics: a CPU thread
// and a kernel incrementing one word). 4- and 8-byte words; race-detector clean (scripts/test.sh runs
// package mmu with -race).
func TestAtomicAgainstCPU(t *testing.T) {
	ph := NewPhys()
	pa, mem := vram(t, ph, 4096)
	vm := NewVM(ph, Config{PASID: 1})
	const va = 0x200000
	if err := vm.Map(va, 4096, pa, rw); err != nil {
		t.Fatal(err)
	}
	w32 := (*uint32)(unsafe.Pointer(&mem[0x40]))
	w64 := (*uint64)(unsafe.Pointer(&mem[0x80]))
	atomic.StoreUint32(w32, 0)
	atomic.StoreUint64(w64, 0)
	const engines, per, cpuAdds = 4, 20000, 50000
	var wg sync.WaitGroup
	for e := 0; e < engines; e++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := vm.NewPort()
			defer p.Close()
			for i := 0; i < per; i++ {
				if _, err := p.Atomic(va+0x40, 4, func(o uint64) uint64 { return o + 1 }); err != nil {
					t.Error(err)
					return
				}
				if _, err := p.Atomic(va+0x80, 8, func(o uint64) uint64 { return o + 3 }); err != nil {
					t.Error(err)
					return
				}
				// AtomicAdd: LOCK XADD, 4 and 8 bytes, the 4-byte one with a delta wider than 32 bits
				// (only the low half counts) and the 8-byte one subtracting through wrap-around.
				if _, err := p.AtomicAdd(va+0x40, 4, 1<<32|2); err != nil {
					t.Error(err)
					return
				}
				if _, err := p.AtomicAdd(va+0x80, 8, 4); err != nil {
					t.Error(err)
					return
				}
				if _, err := p.AtomicAdd(va+0x80, 8, ^uint64(0)); err != nil { // -1
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // the host CPU
		defer wg.Done()
		for i := 0; i < cpuAdds; i++ {
			atomic.AddUint32(w32, 1)
			atomic.AddUint64(w64, 5)
		}
	}()
	wg.Wait()
	if got, want := atomic.LoadUint32(w32), uint32(3*engines*per+cpuAdds); got != want {
		t.Errorf("32-bit word = %d, want %d", got, want)
	}
	if got, want := atomic.LoadUint64(w64), uint64(6*engines*per+5*cpuAdds); got != want {
		t.Errorf("64-bit word = %d, want %d", got, want)
	}
}

// TestRemoteAtomicsAcrossVMs: GPU atomics on a client's userptr word mapped by two VMs (two GPUs of one
// process, each with its own segment of the same client pages) exclude each other: the remote
// read-modify-write is serialized per Phys, not per VM. (Against the client's own CPU they are not
// atomic: see Port.Atomic.)
func TestRemoteAtomicsAcrossVMs(t *testing.T) {
	ph := NewPhys()
	r := yieldRemote{&fakeRemote{base: 0x7f0000000000, mem: make([]byte, 4096)}}
	const va = 0x300000
	var vms []*VM
	for g := 0; g < 2; g++ {
		pa, err := ph.AllocSystem(4096, Backing{Remote: r, RemoteAddr: 0x7f0000000000})
		if err != nil {
			t.Fatal(err)
		}
		vm := NewVM(ph, Config{PASID: 1, GPU: uint32(g)})
		if err := vm.Map(va, 4096, pa, rw|PTESystem); err != nil {
			t.Fatal(err)
		}
		vms = append(vms, vm)
	}
	const per = 3000
	var wg sync.WaitGroup
	for _, vm := range vms {
		for e := 0; e < 2; e++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := vm.NewPort()
				defer p.Close()
				for i := 0; i < per; i++ {
					if _, err := p.AtomicAdd(va+0x10, 4, 1); err != nil {
						t.Error(err)
						return
					}
					if _, err := p.Atomic(va+0x10, 4, func(o uint64) uint64 { return o + 1 }); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	p := vms[0].NewPort()
	defer p.Close()
	if v, err := p.Load32(va + 0x10); err != nil || v != 8*per {
		t.Errorf("word = %d (%v), want %d", v, err, 8*per)
	}
}

// yieldRemote lets other goroutines run between the read and the write of a remote read-modify-write,
// as a process_vm_readv system call does.
type yieldRemote struct{ *fakeRemote }

func (r yieldRemote) ReadAt(p []byte, addr uint64) error {
	err := r.fakeRemote.ReadAt(p, addr)
	runtime.Gosched()
	return err
}
