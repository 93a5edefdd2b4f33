package kmt

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ioctl issues cmd on fd with arg, a pointer to one of the kfd/abi argument structs (their Go
// layout equals the C layout; abi_c_test.go checks it). It retries on EINTR and EAGAIN as
// libhsakmt's kmtIoctl does (libhsakmt.c).
func ioctl[T any](fd int, name string, cmd uint32, arg *T) error {
	for {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(cmd), uintptr(unsafe.Pointer(arg)))
		switch e {
		case 0:
			return nil
		case syscall.EINTR, syscall.EAGAIN:
			continue
		}
		return &IoctlError{Name: name, Errno: e}
	}
}

// ioctlBuf is ioctl on a raw argument buffer (variable-size commands: SVM).
func ioctlBuf(fd int, name string, cmd uint32, buf []byte) error {
	for {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(cmd), uintptr(unsafe.Pointer(&buf[0])))
		switch e {
		case 0:
			return nil
		case syscall.EINTR, syscall.EAGAIN:
			continue
		}
		return &IoctlError{Name: name, Errno: e}
	}
}

// addrOf returns the address of a Go slice's first element for a pointer field inside ioctl
// arguments, pinning it until the returned pinner is unpinned (the driver reads or writes it during
// the ioctl).
func addrOf[T any](s []T, p *runtime.Pinner) uint64 {
	if len(s) == 0 {
		return 0
	}
	p.Pin(&s[0])
	return uint64(uintptr(unsafe.Pointer(&s[0])))
}

// reserve maps size bytes of inaccessible, unbacked address space (fmm.c reserves its SVM
// aperture the same way: mmap PROT_NONE, MAP_NORESERVE).
func reserve(size uint64) (unsafe.Pointer, error) {
	return unix.MmapPtr(-1, 0, nil, uintptr(size), unix.PROT_NONE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
}

// region is a view of [base+off, base+off+size) of the reserved range.
type region struct {
	base unsafe.Pointer
	off  uint64
	size uint64
}

func (r region) ptr() unsafe.Pointer { return unsafe.Add(r.base, r.off) }
func (r region) va() uint64          { return uint64(uintptr(r.ptr())) }
func (r region) bytes() []byte       { return unsafe.Slice((*byte)(r.ptr()), r.size) }

// mapFixed replaces the region's pages with a mapping of fd at off (fd -1: anonymous memory).
func (r region) mapFixed(fd int, off int64, prot int, shared bool) error {
	flags := unix.MAP_FIXED
	if shared {
		flags |= unix.MAP_SHARED
	} else {
		flags |= unix.MAP_PRIVATE
	}
	if fd < 0 {
		flags |= unix.MAP_ANONYMOUS
	}
	_, err := unix.MmapPtr(fd, off, r.ptr(), uintptr(r.size), prot, flags)
	return err
}

// unmapToReserved puts the region back to reserved, inaccessible address space.
func (r region) unmapToReserved() error {
	_, err := unix.MmapPtr(-1, 0, r.ptr(), uintptr(r.size), unix.PROT_NONE,
		unix.MAP_FIXED|unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	return err
}

func unmapAll(base unsafe.Pointer, size uint64) error { return unix.MunmapPtr(base, uintptr(size)) }

// Word64 returns the naturally aligned 8-byte word at b[off:] of shared memory as an atomic.
// It panics if the word is out of range or misaligned.
func Word64(b []byte, off int) *atomic.Uint64 {
	p := unsafe.Pointer(&b[off+7])
	p = unsafe.Add(p, -7)
	if uintptr(p)&7 != 0 {
		panic("kmt: misaligned 64-bit word")
	}
	return (*atomic.Uint64)(p)
}

// Word32 is Word64 for a naturally aligned 4-byte word.
func Word32(b []byte, off int) *atomic.Uint32 {
	p := unsafe.Add(unsafe.Pointer(&b[off+3]), -3)
	if uintptr(p)&3 != 0 {
		panic("kmt: misaligned 32-bit word")
	}
	return (*atomic.Uint32)(p)
}

// sliceAddr is the virtual address of b[0].
func sliceAddr(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

// sub is the part [off, off+size) of r.
func (r region) sub(off, size uint64) region { return region{r.base, r.off + off, size} }

// valid reports a non-empty region.
func (r region) valid() bool { return r.base != nil && r.size != 0 }

// mmapShared maps size bytes of fd at off anywhere (libhsakmt's APU paths: map_doorbell_apu, the
// KFD_MMAP_TYPE_EVENTS page).
func mmapShared(fd int, off int64, size uint64) (region, error) {
	p, err := unix.MmapPtr(fd, off, nil, uintptr(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return region{}, err
	}
	return region{base: p, size: size}, nil
}
