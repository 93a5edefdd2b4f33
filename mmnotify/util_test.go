package mmnotify

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

func munmap(addr, size uint64) error {
	_, _, e := unix.Syscall(unix.SYS_MUNMAP, uintptr(addr), uintptr(size), 0)
	if e != 0 {
		return e
	}
	return nil
}

func errnoErr(e unix.Errno) error {
	if e != 0 {
		return e
	}
	return nil
}
