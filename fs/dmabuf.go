package fs

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/kfdemu/kfdemu/kfd"
)

// MNT/dev/dma_buf/ID: the files behind dma-buf fds (the driver's kfd.DmaBuf). Only the daemon
// looks them up and opens them, to install the open in a client (supervise.go); the client's fd is
// then the only way to the buffer, as with a real dma-buf, and it can pass it on (SCM_RIGHTS,
// pidfd_getfd) like one. The directory is not listed in MNT/dev. An open holds a reference to the
// buffer until its release. Deviations (README): the fd's link in /proc/PID/fd names this path,
// not "/dmabuf:", and it cannot be mmapped (direct I/O; the memory is a range of the exporter's
// memfd, which FUSE passthrough cannot map from offset 0); read and write fail with EINVAL and
// ioctls (DMA_BUF_IOCTL_SYNC and the others) with ENOTTY.

// dmabufInoBase puts the files' inode numbers apart from the device inodes (devDir.nextIno).
const dmabufInoBase = 1 << 50

// dmabufDirName is the directory's name in MNT/dev.
const dmabufDirName = "dma_buf"

// dmabufPath is the daemon's path of dma-buf id's file.
func (s *Server) dmabufPath(id uint64) string {
	return filepath.Join(s.dir, "dev", dmabufDirName, strconv.FormatUint(id, 10))
}

// dmabufDir is MNT/dev/dma_buf.
type dmabufDir struct {
	roDir
	d *devDir
}

var _ fs.NodeLookuper = (*dmabufDir)(nil)

func (n *dmabufDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	dev := n.d.s.opts.Device
	if dev == nil || n.d.callerTgid(ctx) != os.Getpid() {
		return nil, syscall.ENOENT
	}
	id, err := strconv.ParseUint(name, 10, 64)
	if err != nil || id == 0 || id >= 1<<40 {
		return nil, syscall.ENOENT
	}
	b := dev.OpenDmaBuf(id)
	if b == nil {
		return nil, syscall.ENOENT
	}
	size := b.Size()
	b.Put()
	out.SetEntryTimeout(time.Nanosecond)
	out.SetAttrTimeout(time.Nanosecond)
	f := &dmabufFile{d: n.d, id: id, size: size}
	f.fill(&out.Attr)
	return n.NewInode(ctx, f, fs.StableAttr{Mode: syscall.S_IFREG, Ino: dmabufInoBase + id}), 0
}

// dmabufFile is the inode of one dma-buf.
type dmabufFile struct {
	fs.Inode
	d    *devDir
	id   uint64
	size uint64
}

var (
	_ fs.NodeOpener    = (*dmabufFile)(nil)
	_ fs.NodeGetattrer = (*dmabufFile)(nil)
)

func (f *dmabufFile) fill(a *fuse.Attr) {
	a.Mode = syscall.S_IFREG | 0600
	a.Size = f.size
}

func (f *dmabufFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	f.fill(&out.Attr)
	return 0
}

func (f *dmabufFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if f.d.callerTgid(ctx) != os.Getpid() {
		return nil, 0, syscall.EACCES
	}
	b := f.d.s.opts.Device.OpenDmaBuf(f.id)
	if b == nil {
		return nil, 0, syscall.ENOENT
	}
	return &dmabufHandle{b: b}, fuse.FOPEN_DIRECT_IO, 0
}

// dmabufHandle is one open file description of a dma-buf: the fd(s) a client holds.
type dmabufHandle struct{ b *kfd.DmaBuf }

var (
	_ fs.FileReleaser = (*dmabufHandle)(nil)
	_ fs.FileIoctler  = (*dmabufHandle)(nil)
	_ fs.FileReader   = (*dmabufHandle)(nil)
	_ fs.FileWriter   = (*dmabufHandle)(nil)
)

func (h *dmabufHandle) Release(ctx context.Context) syscall.Errno {
	h.b.Put()
	return 0
}

func (h *dmabufHandle) Ioctl(ctx context.Context, cmd uint32, arg uint64, input []byte, output []byte) (int32, syscall.Errno) {
	return 0, syscall.ENOTTY
}

func (h *dmabufHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return nil, syscall.EINVAL
}

func (h *dmabufHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	return 0, syscall.EINVAL
}

// DmaBufID implements kfd.DmaBufResolver: the dma-buf a client fd is an open of.
func (c *caller) DmaBufID(fd int) (uint64, error) {
	f, err := c.GetFD(fd)
	if err != nil {
		return 0, kfd.ErrBadFD
	}
	defer f.Close()
	ino, ok := c.mountIno(f)
	if !ok || ino <= dmabufInoBase {
		return 0, kfd.ErrNotDmaBuf
	}
	return ino - dmabufInoBase, nil
}

// InstallFile implements kfd.Installer: a duplicate of f in the client.
func (c *caller) InstallFile(f *os.File, cloexec bool) (int, error) {
	if c.sup == nil {
		return 0, kfd.ErrNoInstall
	}
	return c.sup.addFD(int(f.Fd()), cloexec)
}

// InstallDmaBuf implements kfd.Installer: open b's file in the daemon and install that open in the
// client through the seccomp supervisor; ErrNoInstall outside a supervised call.
func (c *caller) InstallDmaBuf(b *kfd.DmaBuf, cloexec bool) (int, error) {
	if c.sup == nil {
		return 0, kfd.ErrNoInstall
	}
	f, err := os.OpenFile(c.d.s.dmabufPath(b.ID()), os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return c.sup.addFD(int(f.Fd()), cloexec)
}
