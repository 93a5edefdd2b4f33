//go:build amd64 && !race

package relstore

import (
	"sync/atomic"
	"unsafe"
)

// Store32 stores v to *p with release order.
func Store32(p *atomic.Uint32, v uint32) { mov32((*uint32)(unsafe.Pointer(p)), v) }

// Store64 stores v to *p with release order.
func Store64(p *atomic.Uint64, v uint64) { mov64((*uint64)(unsafe.Pointer(p)), v) }

// mov32 and mov64 are one MOV each (relstore_amd64.s): a call to assembly is opaque to the
// compiler, which keeps every memory access of the caller on its side of it.
func mov32(p *uint32, v uint32)
func mov64(p *uint64, v uint64)
