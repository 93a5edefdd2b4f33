package fs

import (
	"context"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/kfdemu/kfdemu/topology"
)

// procDir is MNT/sys/devices/virtual/kfd/kfd/proc, KFD's per-process sysfs. Its entries come and
// go with processes, so it is served from a fresh snapshot (kfd.Driver.ProcTree) at every lookup
// and listing, with zero entry and attribute timeouts (volatileTimeout, made zero by noOpendirFS):
// every lookup of proc/, a process or a queue makes a new inode, whose listing and files the sys
// connection's kernel caches (noopendir.go) belong to that lookup only.
type procDir struct {
	roDir
	tree func() *topology.Tree
	path []string // below proc/
}

var (
	_ fs.NodeLookuper  = (*procDir)(nil)
	_ fs.NodeReaddirer = (*procDir)(nil)
)

// snapshot returns the directory this node stands for in a fresh rendering, or nil.
func (d *procDir) snapshot() *topology.Tree {
	t := d.tree()
	for _, p := range d.path {
		if t = t.Child(p); t == nil || t.Kind != topology.Dir {
			return nil
		}
	}
	return t
}

func (d *procDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	t := d.snapshot()
	if t == nil {
		return nil, syscall.ENOENT
	}
	var es []fuse.DirEntry
	for _, c := range t.Children {
		mode := uint32(syscall.S_IFREG)
		if c.Kind == topology.Dir {
			mode = syscall.S_IFDIR
		}
		es = append(es, fuse.DirEntry{Name: c.Name, Mode: mode})
	}
	return fs.NewListDirStream(es), 0
}

func (d *procDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	t := d.snapshot()
	if t == nil {
		return nil, syscall.ENOENT
	}
	c := t.Child(name)
	if c == nil {
		return nil, syscall.ENOENT
	}
	setVolatile(out)
	if c.Kind == topology.Dir {
		out.Mode = syscall.S_IFDIR | c.Mode
		sub := &procDir{roDir: roDir{mode: c.Mode}, tree: d.tree, path: append(append([]string(nil), d.path...), name)}
		return d.NewInode(ctx, sub, fs.StableAttr{Mode: syscall.S_IFDIR}), 0
	}
	f := &treeFile{t: c, noOpen: true}
	out.Mode = syscall.S_IFREG | c.Mode
	out.Size = uint64(len(c.Content()))
	return d.NewInode(ctx, f, fs.StableAttr{Mode: syscall.S_IFREG}), 0
}

// volatileTimeout marks the entries of the proc/ tree, whose timeouts noOpendirFS.Lookup makes zero
// (go-fuse would replace a zero set here by the mount's default), so the kernel looks every path up
// again.
const volatileTimeout = time.Nanosecond

func setVolatile(out *fuse.EntryOut) {
	out.SetEntryTimeout(volatileTimeout)
	out.SetAttrTimeout(volatileTimeout)
}

// kfdDevDir is MNT/sys/devices/virtual/kfd/kfd: its children are persistent but proc/, which is a
// new procDir at every lookup.
type kfdDevDir struct {
	roDir
	proc func() *topology.Tree // nil: the device renders no per-process tree
}

var (
	_ fs.NodeLookuper  = (*kfdDevDir)(nil)
	_ fs.NodeReaddirer = (*kfdDevDir)(nil)
)

func (d *kfdDevDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if name == "proc" && d.proc != nil {
		setVolatile(out)
		out.Mode = syscall.S_IFDIR | 0555
		return d.NewInode(ctx, &procDir{roDir: roDir{mode: 0555}, tree: d.proc}, fs.StableAttr{Mode: syscall.S_IFDIR}), 0
	}
	c := d.GetChild(name)
	if c == nil {
		return nil, syscall.ENOENT
	}
	if ga, ok := c.Operations().(fs.NodeGetattrer); ok {
		var a fuse.AttrOut
		if ga.Getattr(ctx, nil, &a) == 0 {
			out.Attr = a.Attr
		}
	}
	return c, 0
}

func (d *kfdDevDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	es := childEntries(&d.Inode, "proc") // not the last lookup's procDir, which go-fuse keeps as a child
	if d.proc != nil {
		es = append(es, fuse.DirEntry{Name: "proc", Mode: syscall.S_IFDIR})
	}
	return fs.NewListDirStream(es), 0
}
