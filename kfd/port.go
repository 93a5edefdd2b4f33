package kfd

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// gpuPort is an engine's window on a process's GPU address space on one device: every access of
// the queue engines and the shader goes through it. It resolves a GPU VA to the BO mapped there
// (VRAM/GTT/doorbell memory shared with the client, or a userptr range reached with process_vm).
//
// TODO(mmu): replace the BO search by a translation through the pdd's GPUVM page tables.
type gpuPort struct {
	p   *Process
	gpu uint32
}

// errGPUFault is a GPU access to an address with no mapping or a misaligned atomic.
var errGPUFault = errors.New("kfd: GPU page fault")

func (p *Process) port(pd *pdd) *gpuPort { return &gpuPort{p: p, gpu: pd.gpuID} }

func (g *gpuPort) Close() {}

// span resolves [va, va+n) to host memory or a client address. It must be called with
// Process.vmMu read-locked, held until the access is done: UNMAP and FREE take vmMu for writing
// before they change a mapping or release memory, which is the TLB flush that makes an unmapped
// BO unreachable (and its daemon mapping safe to drop) once they return.
func (g *gpuPort) span(va uint64, n int) ([]byte, uint64, error) {
	mem, user, ok := g.p.gpuAccess(g.gpu, va, uint64(n))
	if !ok {
		return nil, 0, fmt.Errorf("%w at %#x", errGPUFault, va)
	}
	return mem, user, nil
}

func (g *gpuPort) Read(va uint64, b []byte) error  { return g.access(va, b, false) }
func (g *gpuPort) Write(va uint64, b []byte) error { return g.access(va, b, true) }
func (g *gpuPort) Fetch(va uint64, b []byte) error { return g.Read(va, b) }

// access copies b to (write) or from GPU address va.
func (g *gpuPort) access(va uint64, b []byte, write bool) error {
	if len(b) == 0 {
		return nil
	}
	g.p.vmMu.RLock()
	defer g.p.vmMu.RUnlock()
	mem, user, err := g.span(va, len(b))
	switch {
	case err != nil:
		return err
	case mem != nil && write:
		copy(mem, b)
	case mem != nil:
		copy(b, mem)
	case write && !g.p.writeUser(user, b):
		return fmt.Errorf("%w: userptr %#x unwritable", errGPUFault, user)
	case !write && !g.p.readUser(user, b):
		return fmt.Errorf("%w: userptr %#x unreadable", errGPUFault, user)
	}
	return nil
}

func (g *gpuPort) Load32(va uint64) (uint32, error) {
	v, err := g.Atomic(va, 4, nil)
	return uint32(v), err
}

func (g *gpuPort) Load64(va uint64) (uint64, error) { return g.Atomic(va, 8, nil) }

func (g *gpuPort) Store32(va uint64, v uint32) error {
	_, err := g.Atomic(va, 4, func(uint64) uint64 { return uint64(v) })
	return err
}

func (g *gpuPort) Store64(va uint64, v uint64) error {
	_, err := g.Atomic(va, 8, func(uint64) uint64 { return v })
	return err
}

// Atomic is a read-modify-write of a naturally aligned word (f == nil: a plain load). On shared
// BO memory it is a real atomic; on userptr memory a read and a write through process_vm,
// serialized by the process lock (atomic against other GPU accesses, not against the client's
// CPU; docs/memory.md).
func (g *gpuPort) Atomic(va uint64, size int, f func(uint64) uint64) (uint64, error) {
	if (size != 4 && size != 8) || va%uint64(size) != 0 {
		return 0, fmt.Errorf("%w: misaligned %d-byte atomic at %#x", errGPUFault, size, va)
	}
	g.p.vmMu.RLock()
	defer g.p.vmMu.RUnlock()
	mem, user, err := g.span(va, size)
	if err != nil {
		return 0, err
	}
	if mem != nil {
		if size == 4 {
			w := word32(mem)
			for {
				o := w.Load()
				if f == nil {
					return uint64(o), nil
				}
				if w.CompareAndSwap(o, uint32(f(uint64(o)))) {
					return uint64(o), nil
				}
			}
		}
		w := word64(mem)
		for {
			o := w.Load()
			if f == nil {
				return o, nil
			}
			if w.CompareAndSwap(o, f(o)) {
				return o, nil
			}
		}
	}
	g.p.userMu.Lock()
	defer g.p.userMu.Unlock()
	var b [8]byte
	if !g.p.readUser(user, b[:size]) {
		return 0, fmt.Errorf("%w: userptr %#x unreadable", errGPUFault, user)
	}
	o := binary.LittleEndian.Uint64(b[:])
	if f == nil {
		return o, nil
	}
	binary.LittleEndian.PutUint64(b[:], f(o))
	if !g.p.writeUser(user, b[:size]) {
		return 0, fmt.Errorf("%w: userptr %#x unwritable", errGPUFault, user)
	}
	return o, nil
}
