package kfd

import (
	"sync/atomic"
	"unsafe"
)

// word64 returns the 8-byte-aligned word at b[0:8] of memory shared with a client as an atomic
// value; callers check length and alignment of the GPU address first.
func word64(b []byte) *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&b[0])) }

func word32(b []byte) *atomic.Uint32 { return (*atomic.Uint32)(unsafe.Pointer(&b[0])) }
