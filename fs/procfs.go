package fs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/kfdemu/kfdemu/topology"
)

// procDir is MNT/sys/devices/virtual/kfd/kfd/proc, KFD's per-process sysfs. Its entries come and
// go with processes, so it is served from a fresh snapshot (kfd.Driver.ProcTree) at every lookup
// and listing, with zero entry and attribute timeouts; every lookup of a process or queue makes a
// new inode whose files (constant for that process or queue) the sys connection may cache.
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
	out.SetEntryTimeout(0)
	out.SetAttrTimeout(0)
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
