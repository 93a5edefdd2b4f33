package fs

import (
	"errors"
	"os"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd"
	"golang.org/x/sys/unix"
)

// caller implements kfd.Caller for the process behind one request.
type caller struct {
	tgid int
	d    *devDir
	intr <-chan struct{} // the request's FUSE_INTERRUPT (go-fuse closes fuse.Context.Cancel)
	sup  *supCall        // set when the request is the supervisor's on the client's behalf (supervise.go)
	ret  int32           // a positive syscall result (kfd.Returner)
}

// SetReturn implements kfd.Returner: the ioctl returns n instead of 0 when it succeeds.
func (c *caller) SetReturn(n int32) { c.ret = n }

func (c *caller) Interrupted() <-chan struct{} { return c.intr }

func (c *caller) Tgid() int { return c.tgid }

func (c *caller) ReadMemory(addr uint64, p []byte) error {
	return c.vm(addr, p, false)
}

func (c *caller) WriteMemory(addr uint64, p []byte) error {
	return c.vm(addr, p, true)
}

// vm copies with process_vm_readv/writev; anything short of the whole range is a fault.
func (c *caller) vm(addr uint64, p []byte, write bool) error {
	if len(p) == 0 {
		return nil
	}
	if addr == 0 || addr+uint64(len(p)) < addr {
		return kfd.ErrFault
	}
	local := []unix.Iovec{{Base: &p[0]}}
	local[0].SetLen(len(p))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(p)}}
	var n int
	var err error
	if write {
		n, err = unix.ProcessVMWritev(c.tgid, local, remote, 0)
	} else {
		n, err = unix.ProcessVMReadv(c.tgid, local, remote, 0)
	}
	if err != nil || n != len(p) {
		return kfd.ErrFault
	}
	return nil
}

// GetFD duplicates the caller's fd into the daemon (pidfd_getfd needs PTRACE_MODE_ATTACH, which
// root has).
func (c *caller) GetFD(fd int) (*os.File, error) {
	if fd < 0 {
		return nil, kfd.ErrBadFD
	}
	pfd, err := unix.PidfdOpen(c.tgid, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(pfd)
	nfd, err := unix.PidfdGetfd(pfd, fd, 0)
	if err != nil {
		return nil, kfd.ErrBadFD
	}
	return os.NewFile(uintptr(nfd), "client-fd"), nil
}

// RenderNode identifies a client fd as one of this mount's per-process render-node inodes.
func (c *caller) RenderNode(fd int) (uint32, int, error) {
	f, err := c.GetFD(fd)
	if err != nil {
		return 0, 0, kfd.ErrBadFD
	}
	defer f.Close()
	ino, ok := c.mountIno(f)
	if !ok {
		return 0, 0, kfd.ErrBadFD
	}
	k, ok := c.d.lookupIno(ino)
	if !ok || k.kind != kindRender {
		return 0, 0, kfd.ErrBadFD
	}
	return k.minor, k.tgid, nil
}

func asErrno(err error, e *syscall.Errno) bool { return errors.As(err, e) }

// OnMount implements kfd.MountChecker: f is a file of this mount (a device file the daemon itself
// serves).
func (c *caller) OnMount(f *os.File) bool {
	_, ok := c.mountIno(f)
	return ok
}

// mountIno is the inode number of f (a client's file the daemon holds a copy of, GetFD) when f is
// on this mount.
func (c *caller) mountIno(f *os.File) (uint64, bool) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Dev != c.d.s.devNum() {
		return 0, false
	}
	return st.Ino, true
}
