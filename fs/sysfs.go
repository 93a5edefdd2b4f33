package fs

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/kfdemu/kfdemu/topology"
)

// treeFile serves one rendered file. Static content is cached by the kernel (FOPEN_KEEP_CACHE with
// the exact size in attributes); Dynamic files are direct I/O and rendered at open.
type treeFile struct {
	fs.Inode
	t *topology.Tree
	// write, when set, makes the file writable (control files of the emulator).
	write func(ctx context.Context, data []byte) syscall.Errno
	// noOpen answers OPEN with ENOSYS (sys connection): the kernel then stops sending OPEN,
	// FLUSH and RELEASE for the whole connection and keeps the page cache across opens.
	noOpen bool
}

var (
	_ fs.NodeOpener    = (*treeFile)(nil)
	_ fs.NodeGetattrer = (*treeFile)(nil)
	_ fs.NodeReader    = (*treeFile)(nil)
	_ fs.NodeWriter    = (*treeFile)(nil)
	_ fs.NodeSetattrer = (*treeFile)(nil)
)

type snapshot struct{ data []byte }

func (f *treeFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = syscall.S_IFREG | f.t.Mode
	if f.write != nil {
		out.Mode |= 0200
	}
	if f.t.Dynamic && !f.noOpen {
		out.Size = 4096 // sysfs reports PAGE_SIZE for attributes
	} else {
		// On the page-cached sys connection a dynamic attribute reports its exact size: with
		// 4096 the kernel zero-fills the page after the short read, and a reader racing the
		// i_size update gets the text followed by NULs (seen with six processes reading
		// generation_id at once). Changes invalidate the inode (NotifyContent), size included.
		out.Size = uint64(len(f.t.Content()))
	}
	return 0
}

func (f *treeFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if f.noOpen {
		return nil, 0, syscall.ENOSYS
	}
	if flags&(syscall.O_WRONLY|syscall.O_RDWR) != 0 && f.write == nil {
		return nil, 0, syscall.EACCES // kernfs: no store method for a 0444 attribute
	}
	if f.t.Dynamic || f.write != nil {
		return &snapshot{f.t.Content()}, fuse.FOPEN_DIRECT_IO, 0
	}
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (f *treeFile) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	data := f.t.Content()
	if s, ok := fh.(*snapshot); ok {
		data = s.data
	}
	if off >= int64(len(data)) {
		return fuse.ReadResultData(nil), 0
	}
	end := min(int64(len(data)), off+int64(len(dest)))
	return fuse.ReadResultData(data[off:end]), 0
}

func (f *treeFile) Write(ctx context.Context, fh fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if f.write == nil {
		return 0, syscall.EACCES
	}
	if errno := f.write(ctx, data); errno != 0 {
		return 0, errno
	}
	return uint32(len(data)), 0
}

// Setattr accepts the truncation that O_TRUNC opens of control files send.
func (f *treeFile) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if f.write == nil {
		return syscall.EACCES
	}
	return f.Getattr(ctx, fh, out)
}

// roDir is a directory of persistent children; creating entries in it fails as in sysfs.
type roDir struct {
	fs.Inode
	mode uint32
}

func (d *roDir) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = syscall.S_IFDIR | d.mode
	return 0
}

func (d *roDir) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EPERM
}

func (d *roDir) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EACCES
}

func (d *roDir) Unlink(ctx context.Context, name string) syscall.Errno { return syscall.EPERM }
func (d *roDir) Rmdir(ctx context.Context, name string) syscall.Errno  { return syscall.EPERM }

// cachedDir is a directory of a rendered tree on the sys connection whose children never change
// (a changed tree is replaced by new inodes). Its listing is cached by the kernel (FOPEN_CACHE_DIR),
// so repeated enumerations (libhsakmt's topology snapshot) cost no request after the first, as
// sysfs's cost no syscall beyond getdents. The connection sends no OPENDIR or RELEASEDIR either
// (noopendir.go): the handle is opened for the one READDIR that fills the cache.
type cachedDir struct{ roDir }

var _ fs.NodeOpendirHandler = (*cachedDir)(nil)

func (d *cachedDir) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return &listDir{es: childEntries(&d.Inode, "")}, fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE, 0
}

// childEntries lists in's children but skip in creation order (inode numbers grow), which is the
// rendered tree's order, as go-fuse's own listing.
func childEntries(in *fs.Inode, skip string) []fuse.DirEntry {
	kids := in.Children()
	es := make([]fuse.DirEntry, 0, len(kids)+1)
	for name, c := range kids {
		if name != skip {
			es = append(es, fuse.DirEntry{Name: name, Mode: c.Mode(), Ino: c.StableAttr().Ino})
		}
	}
	slices.SortFunc(es, func(a, b fuse.DirEntry) int { return cmp.Compare(a.Ino, b.Ino) })
	return es
}

// dirEntriesServed counts the entries listDir handles returned (tests: a cached listing costs none).
var dirEntriesServed atomic.Uint64

// listDir is a directory handle over a fixed listing.
type listDir struct {
	mu sync.Mutex
	es []fuse.DirEntry
	i  int
}

var (
	_ fs.FileReaddirenter = (*listDir)(nil)
	_ fs.FileSeekdirer    = (*listDir)(nil)
)

func (l *listDir) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.i >= len(l.es) {
		return nil, 0
	}
	e := l.es[l.i]
	l.i++
	dirEntriesServed.Add(1)
	return &e, 0
}

func (l *listDir) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.i = int(min(off, uint64(len(l.es))))
	return 0
}

// addTree adds t's children under parent as persistent inodes.
func addTree(ctx context.Context, parent *fs.Inode, t *topology.Tree) {
	for _, c := range t.Children {
		parent.AddChild(c.Name, newTreeInode(ctx, parent, c), true)
	}
}

func newTreeInode(ctx context.Context, parent *fs.Inode, t *topology.Tree) *fs.Inode {
	switch t.Kind {
	case topology.File:
		f := &treeFile{t: t}
		if t.Store != nil {
			f.write = func(_ context.Context, data []byte) syscall.Errno { return t.Store(data) }
		}
		return parent.NewPersistentInode(ctx, f, fs.StableAttr{Mode: syscall.S_IFREG})
	case topology.Symlink:
		return parent.NewPersistentInode(ctx, &fs.MemSymlink{Data: []byte(t.Target)}, fs.StableAttr{Mode: syscall.S_IFLNK})
	}
	d := &roDir{mode: t.Mode}
	in := parent.NewPersistentInode(ctx, d, fs.StableAttr{Mode: syscall.S_IFDIR})
	addTree(ctx, in, t)
	return in
}

// Flush answers ENOSYS on the sys connection, so that the kernel stops sending FLUSH on close
// (fc->no_flush) as it stopped sending OPEN.
func (f *treeFile) Flush(ctx context.Context, fh fs.FileHandle) syscall.Errno {
	if f.noOpen {
		return syscall.ENOSYS
	}
	return 0
}
