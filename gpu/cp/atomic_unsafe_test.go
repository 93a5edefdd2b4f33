package cp

import "unsafe"

// word64 views the first 8 bytes of b as a uint64 for sync/atomic; nil if b is short or the view is
// not 8-byte aligned in host memory (a misaligned atomic is a fault).
func word64(b []byte) *uint64 {
	if len(b) < 8 || uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		return nil
	}
	return (*uint64)(unsafe.Pointer(&b[0]))
}

// word32 views the first 4 bytes of b as a uint32 for sync/atomic; nil if short or misaligned.
func word32(b []byte) *uint32 {
	if len(b) < 4 || uintptr(unsafe.Pointer(&b[0]))%4 != 0 {
		return nil
	}
	return (*uint32)(unsafe.Pointer(&b[0]))
}
