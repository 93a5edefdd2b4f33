package fs

import (
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// noOpendirFS is the sys connection's raw file system. It answers OPENDIR with ENOSYS, so that the
// kernel stops sending OPENDIR and RELEASEDIR for the whole connection (fc->no_opendir, set in
// fuse_file_open) and opens every directory with FOPEN_KEEP_CACHE|FOPEN_CACHE_DIR, its default
// for a connection without opendir: a listing is asked of the daemon once and then served from the
// kernel's readdir cache, as sysfs serves one from kernfs without a round trip. The topology
// snapshot of a 65-node tree lists 9657 directories, which cost two round trips each before.
//
// READDIR then carries handle 0; it is served through a handle of go-fuse's bridge opened for that
// request (at the request's offset) and released after it.
//
// A cached listing stays until the directory's inode is invalidated, so a directory on this
// connection either never changes (the rendered trees; a changed tree is replaced by new inodes
// and its parent invalidated with NotifyContent: ReloadTopology, refreshDRM), or is a new inode at
// every lookup (kfd/proc and everything below it, procfs.go).
type noOpendirFS struct {
	fuse.RawFileSystem
}

// Lookup passes the timeouts of the proc/ tree's entries on as zero: go-fuse replaces a zero by the
// mount's default, so procfs.go marks them volatileTimeout (1 ns), which the kernel would round up
// to a jiffy or two. A zero makes it look proc/ up again at every path walk.
func (n *noOpendirFS) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	st := n.RawFileSystem.Lookup(cancel, h, name, out)
	if st.Ok() && out.EntryTimeout() == volatileTimeout {
		out.SetEntryTimeout(0)
	}
	if st.Ok() && out.AttrTimeout() == volatileTimeout {
		out.SetAttrTimeout(0)
	}
	return st
}

// opendirsRefused counts the OPENDIRs answered ENOSYS (tests: the kernel sends one per connection).
var opendirsRefused atomic.Uint64

// readlinks counts READLINKs (tests: with symlink caching, one per symlink inode).
var readlinks atomic.Uint64

func (n *noOpendirFS) Readlink(cancel <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	readlinks.Add(1)
	return n.RawFileSystem.Readlink(cancel, h)
}

func (n *noOpendirFS) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	opendirsRefused.Add(1)
	return fuse.ENOSYS
}

func (n *noOpendirFS) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return n.readDir(cancel, in, out, n.RawFileSystem.ReadDir)
}

func (n *noOpendirFS) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return n.readDir(cancel, in, out, n.RawFileSystem.ReadDirPlus)
}

func (n *noOpendirFS) readDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList,
	read func(<-chan struct{}, *fuse.ReadIn, *fuse.DirEntryList) fuse.Status) fuse.Status {
	var oo fuse.OpenOut
	if st := n.RawFileSystem.OpenDir(cancel, &fuse.OpenIn{InHeader: in.InHeader, Flags: syscall.O_RDONLY | syscall.O_DIRECTORY}, &oo); !st.Ok() {
		return st
	}
	defer n.RawFileSystem.ReleaseDir(&fuse.ReleaseIn{InHeader: in.InHeader, Fh: oo.Fh})
	r := *in
	r.Fh = oo.Fh
	return read(cancel, &r, out)
}
