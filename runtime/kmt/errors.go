package kmt

import (
	"errors"
	"fmt"
	"syscall"
)

// Sentinel errors. Errors from the driver are *IoctlError values that wrap the errno, so
// errors.Is(err, syscall.EINVAL) works on them.
var (
	ErrNoDevice          = errors.New("kmt: no kfd device (neither ROOT/dev/kfd nor /run/kfdemu/dev/kfd)")
	ErrClosed            = errors.New("kmt: device closed")
	ErrVersion           = errors.New("kmt: unsupported kfd interface version")
	ErrTopologyUnstable  = errors.New("kmt: topology kept changing while it was read (generation_id)")
	ErrNoNode            = errors.New("kmt: no such node")
	ErrNotGPU            = errors.New("kmt: node is not a GPU")
	ErrNoVA              = errors.New("kmt: GPU virtual address space exhausted")
	ErrFreed             = errors.New("kmt: memory already freed")
	ErrInvalidArgument   = errors.New("kmt: invalid argument")
	ErrQueueDestroyed    = errors.New("kmt: queue already destroyed")
	ErrEventDestroyed    = errors.New("kmt: event already destroyed")
	ErrNotHostAccessible = errors.New("kmt: memory is not CPU-accessible")
)

// IoctlError is a failed ioctl: the command's name (AMDKFD_IOC_<Name>) and the errno.
type IoctlError struct {
	Name  string
	Errno syscall.Errno
}

func (e *IoctlError) Error() string {
	return fmt.Sprintf("kmt: AMDKFD_IOC_%s: %v", e.Name, e.Errno)
}

// Unwrap returns the errno, for errors.Is(err, syscall.EXXX).
func (e *IoctlError) Unwrap() error { return e.Errno }

// DeviceGone reports whether err says the device went away (the emulator's daemon stopped, the
// FUSE connection was aborted, or the GPU was removed): ENOTCONN, ECONNABORTED, EIO or ENODEV
// from the device file.
func DeviceGone(err error) bool {
	return errors.Is(err, syscall.ENOTCONN) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.EIO) || errors.Is(err, syscall.ENODEV) || errors.Is(err, ErrClosed)
}
