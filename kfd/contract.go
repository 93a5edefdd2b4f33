package kfd

import (
	"errors"
	"github.com/kfdemu/kfdemu/topology"
	"os"
	"syscall"
)

// This file is the contract between fs (the FUSE edge) and the driver.
// fs depends on these types only; *Driver implements Device.

// Caller is the client behind one request, supplied by fs for every ioctl.
// Pointers inside ioctl arguments are followed with it (process_vm_readv/
// writev on the caller's pid); fds inside arguments are fetched with
// pidfd_getfd. Implementations return ErrFault for memory they cannot reach. A Caller may also be
// an Installer (it can give the client new fds: dmabuf.go) and a DmaBufResolver (it can tell which
// dma-buf a client fd is); handlers test for both.
type Caller interface {
	Tgid() int
	ReadMemory(addr uint64, p []byte) error
	WriteMemory(addr uint64, p []byte) error
	// GetFD duplicates the caller's file descriptor fd into the daemon.
	GetFD(fd int) (*os.File, error)
	// RenderNode says whether the caller's fd is an open of one of this
	// mount's render nodes and, if so, its DRM minor and the tgid that
	// opened it. Errors: ErrBadFD (no such fd, or not a render node here).
	RenderNode(fd int) (minor uint32, owner int, err error)
	// Interrupted is closed when the caller's syscall is interrupted (a signal, FUSE_INTERRUPT):
	// a blocking ioctl returns EINTR, as amdkfd's -ERESTARTSYS reaches a caller whose signal
	// handler does not restart it. A killed client's thread cannot leave the kernel before the
	// daemon answers, so every wait must watch it. nil means never.
	Interrupted() <-chan struct{}
}

// Returner is a Caller that can give the syscall a positive result (DBG_TRAP's SUSPEND_QUEUES and
// RESUME_QUEUES return the number of queues they changed).
type Returner interface {
	SetReturn(n int32)
}

// MountChecker is a Caller that can tell whether a file it handed over (GetFD) is one of the
// mount's own files, which the daemon must not write to while it serves a request.
type MountChecker interface {
	OnMount(f *os.File) bool
}

// Sentinel errors of Caller implementations.
var (
	ErrFault = errors.New("kfd: bad address in client memory") // -> EFAULT
	ErrBadFD = errors.New("kfd: not a render node of this mount")
)

// Device is the driver as the device files see it.
type Device interface {
	// OpenKFD is called for every open(2) of dev/kfd by process tgid. Several
	// opens by one tgid share one KFD process, as on amdkfd.
	OpenKFD(tgid int) (File, error)
	// OpenRender is called for every open of dev/dri/renderD<minor>.
	OpenRender(minor uint32, tgid int) (File, error)
	// ProcessExited is called once the process tgid is gone: everything it
	// held is released even if fds are still being closed.
	ProcessExited(tgid int)
	// RenderMinors lists the render minors of the current topology, for the
	// dev/dri directory.
	RenderMinors() []uint32
	// OpenDmaBuf takes a reference to dma-buf id for an open of its file (MNT/dev/dma_buf/ID);
	// nil when there is none. The open's release calls its Put.
	OpenDmaBuf(id uint64) *DmaBuf
	// Debug is the debugfs view served at MNT/sys/kernel/debug/kfd (files
	// like processes, queues, mqds, faults), rendered on every read.
	Debug() *topology.Tree
	// Close tears down every process and stops the hardware model; called once, after the
	// mount is gone.
	Close()
}

// File is one open(2) of a device file.
type File interface {
	// Ioctl serves one restricted FUSE ioctl. arg holds _IOC_SIZE(cmd) bytes
	// in and is the output buffer: the driver writes results into it in
	// place. The returned errno is 0 on success. Output is copied back to the
	// client even when errno != 0, as amdkfd does for some ioctls.
	Ioctl(c Caller, cmd uint32, arg []byte) syscall.Errno
	// Backing is the memfd whose file offsets are the mmap offsets the driver
	// hands out for this file (FUSE passthrough maps it 1:1). It is the same
	// file for every open of the same device by the same process.
	Backing() *os.File
	// Release is called on the last close of this open file description.
	Release()
}

// CopyOuter is implemented by a File whose driver refuses some commands before it copies anything
// back (kfd_ioctl: a wrong type, a number out of range or without a function fail with the
// caller's argument untouched). CopiesOut reports whether cmd reaches the copy-back; when it does
// not, the FUSE server answers the error without returning the argument.
type CopyOuter interface {
	CopiesOut(cmd uint32) bool
}
