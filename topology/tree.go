package topology

import "syscall"

// Tree is a rendered sysfs directory tree, the contract between topology (which
// renders the kernel's text) and fs (which serves it over FUSE). Entries keep
// the order in which the kernel creates them; fs lists them in that order.
type Tree struct {
	Name     string
	Kind     EntryKind
	Mode     uint32  // permission bits: 0444 files, 0555 dirs, 0777 symlinks
	Children []*Tree // Dir only, in kernel creation order
	Target   string  // Symlink only
	// Content renders a File. Static files return the same bytes every call;
	// Dynamic is set on files whose content changes at run time (used_memory,
	// generation_id) so fs does not let the kernel cache them.
	Content func() []byte
	Dynamic bool
	// Store, when set, makes a File writable (a sysfs store method): it gets the written bytes and
	// returns 0 or the errno the kernel's store returns.
	Store func(data []byte) syscall.Errno
}

// EntryKind says what a Tree entry is.
type EntryKind uint8

const (
	Dir EntryKind = iota
	File
	Symlink
)

// Child returns the named child of a directory, or nil.
func (t *Tree) Child(name string) *Tree {
	for _, c := range t.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}
