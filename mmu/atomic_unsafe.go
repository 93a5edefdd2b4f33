package mmu

import (
	"sync/atomic"
	"unsafe"

	"github.com/kfdemu/kfdemu/internal/relstore"
)

// Word-sized atomics on backing memory. The caller has checked that off is naturally aligned and
// that off+size <= len(b); Backing.Mem is 8-byte aligned (checkBacking), so the word is too.

func aligned8(b []byte) bool { return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 == 0 }

func p32(b []byte, off uint64) *uint32 { return (*uint32)(unsafe.Pointer(&b[off])) }
func p64(b []byte, off uint64) *uint64 { return (*uint64)(unsafe.Pointer(&b[off])) }

func load32(b []byte, off uint64) uint32 { return atomic.LoadUint32(p32(b, off)) }
func load64(b []byte, off uint64) uint64 { return atomic.LoadUint64(p64(b, off)) }

// store32/store64 are release stores (internal/relstore): a GPU engine's store is ordered after
// its earlier accesses but is no fence, so the CP's release of a packet slot and its read index
// store do not each wait for their cache line before the completion signal's atomic add.
func store32(b []byte, off uint64, v uint32) {
	relstore.Store32((*atomic.Uint32)(unsafe.Pointer(p32(b, off))), v)
}
func store64(b []byte, off uint64, v uint64) {
	relstore.Store64((*atomic.Uint64)(unsafe.Pointer(p64(b, off))), v)
}

// add32/add64 add with one locked instruction and return the old value.
func add32(b []byte, off uint64, d uint32) uint32 { return atomic.AddUint32(p32(b, off), d) - d }
func add64(b []byte, off uint64, d uint64) uint64 { return atomic.AddUint64(p64(b, off), d) - d }

// rmw32/rmw64 apply f atomically with a compare-and-swap loop and return the old value.
func rmw32(b []byte, off uint64, f func(uint64) uint64) uint64 {
	p := p32(b, off)
	for {
		old := atomic.LoadUint32(p)
		if atomic.CompareAndSwapUint32(p, old, uint32(f(uint64(old)))) {
			return uint64(old)
		}
	}
}

func rmw64(b []byte, off uint64, f func(uint64) uint64) uint64 {
	p := p64(b, off)
	for {
		old := atomic.LoadUint64(p)
		if atomic.CompareAndSwapUint64(p, old, f(old)) {
			return old
		}
	}
}
