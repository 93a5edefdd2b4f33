package fs

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/kfdemu/kfdemu/kfd"
)

type devKind uint8

const (
	kindKFD devKind = iota
	kindRender
)

type devKey struct {
	tgid  int
	kind  devKind
	minor uint32
	gen   uint32 // generation of the (tgid, kind, minor) inode; 0 in base keys
}

func (k devKey) base() devKey { k.gen = 0; return k }

// devDir owns the per-process device inodes. Every (process, device file) pair gets its own inode
// number, so that FUSE passthrough can give each process its own backing memfd.
//
// An inode also has a generation: when the last open file of an inode is released, the next
// lookup of that name by the same process gets a new inode. go-fuse registers an inode's
// passthrough backing file at its first open and reuses it while any open of the inode lives, and
// it drops it only after our Release has run; a process that closes the device and opens it again
// at once would otherwise get the previous kfd process's memfd (whose pages nobody sees any more)
// for its new mappings.
type devDir struct {
	s       *Server
	mu      sync.Mutex
	ino     map[devKey]uint64
	byIno   map[uint64]devKey
	gen     map[devKey]uint32 // base key -> current generation
	opens   map[devKey]int    // base key -> open files of the current generation
	nextIno uint64
	minors  []uint32
	parent  *fs.Inode
	dri     *fs.Inode
	dmabufs *fs.Inode // MNT/dev/dma_buf (dmabuf.go)
	// mountDev is st_dev of the mount, to recognise our files in client fds.
	mountDev atomic.Uint64
	// pinned holds the device inodes reported as pinned (explainPinned logs once per inode).
	pinned sync.Map
}

func newDevDir(s *Server) *devDir {
	d := &devDir{s: s, ino: map[devKey]uint64{}, byIno: map[uint64]devKey{}, gen: map[devKey]uint32{},
		opens: map[devKey]int{}, nextIno: 1 << 40}
	if s.opts.Device != nil {
		d.minors = s.opts.Device.RenderMinors()
	}
	return d
}

func (d *devDir) syncRenderNodes(m []uint32) {
	d.mu.Lock()
	d.minors = m
	d.mu.Unlock()
}

func (d *devDir) clientCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	seen := map[int]bool{}
	for k := range d.ino {
		seen[k.tgid] = true
	}
	return len(seen)
}

// forget drops a dead process's inodes and thread cache entries.
func (d *devDir) forget(tgid int) {
	d.mu.Lock()
	for k, ino := range d.ino {
		if k.tgid == tgid {
			delete(d.ino, k)
			delete(d.byIno, ino)
		}
	}
	for k := range d.gen {
		if k.tgid == tgid {
			delete(d.gen, k)
			delete(d.opens, k)
		}
	}
	d.mu.Unlock()
}

// current returns k with the current generation of its inode.
func (d *devDir) current(k devKey) devKey {
	d.mu.Lock()
	defer d.mu.Unlock()
	k.gen = d.gen[k.base()]
	return k
}

// opened counts an open of k's inode; false if k is of an older generation.
func (d *devDir) opened(k devKey) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gen[k.base()] != k.gen {
		return false
	}
	d.opens[k.base()]++
	return true
}

// closed uncounts an open of k's inode; the last one retires the inode's generation.
func (d *devDir) closed(k devKey) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b := k.base()
	if d.gen[b] != k.gen {
		return
	}
	if d.opens[b]--; d.opens[b] > 0 {
		return
	}
	delete(d.opens, b)
	d.gen[b]++
	if ino, ok := d.ino[k]; ok {
		delete(d.ino, k)
		delete(d.byIno, ino)
	}
}

func (d *devDir) inoFor(k devKey) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ino, ok := d.ino[k]; ok {
		return ino
	}
	d.nextIno++
	d.ino[k] = d.nextIno
	d.byIno[d.nextIno] = k
	return d.nextIno
}

func (d *devDir) lookupIno(ino uint64) (devKey, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	k, ok := d.byIno[ino]
	return k, ok
}

// tgidOf maps a caller thread to its process (thread group) via /proc/<tid>/status. It is not
// cached: thread ids are reused by new processes while the old thread group lives on.
func (d *devDir) tgidOf(tid uint32) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(int(tid)) + "/status")
	if err != nil {
		return int(tid)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			if t, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				return t
			}
		}
	}
	return int(tid)
}

func (d *devDir) callerTgid(ctx context.Context) int {
	if c, ok := fuse.FromContext(ctx); ok {
		return d.tgidOf(c.Pid)
	}
	return 0
}

// devNode is MNT/dev or MNT/dev/dri: lookups of device names resolve per calling process.
type devNode struct {
	roDir
	d   *devDir
	dri bool
}

var (
	_ fs.NodeLookuper  = (*devNode)(nil)
	_ fs.NodeReaddirer = (*devNode)(nil)
)

func (n *devNode) names() []string {
	if !n.dri {
		if n.d.s.opts.Device == nil {
			return []string{"dri"}
		}
		return []string{"dri", "kfd"}
	}
	n.d.mu.Lock()
	defer n.d.mu.Unlock()
	var out []string
	for _, m := range n.d.minors {
		out = append(out, "renderD"+strconv.Itoa(int(m)))
	}
	sort.Strings(out)
	return out
}

func (n *devNode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	var ents []fuse.DirEntry
	for _, name := range n.names() {
		mode := uint32(syscall.S_IFREG)
		if name == "dri" {
			mode = syscall.S_IFDIR
		}
		ents = append(ents, fuse.DirEntry{Name: name, Mode: mode})
	}
	return fs.NewListDirStream(ents), 0
}

func (n *devNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if !n.dri && name == "dri" {
		return n.d.dri, 0
	}
	if !n.dri && name == dmabufDirName && n.d.dmabufs != nil {
		return n.d.dmabufs, 0 // not listed; its entries answer the daemon only (dmabuf.go)
	}
	dev := n.d.s.opts.Device
	if dev == nil {
		return nil, syscall.ENOENT
	}
	k := devKey{tgid: n.d.callerTgid(ctx)}
	switch {
	case !n.dri && name == "kfd":
		k.kind = kindKFD
	case n.dri && strings.HasPrefix(name, "renderD"):
		m, err := strconv.ParseUint(strings.TrimPrefix(name, "renderD"), 10, 32)
		if err != nil || !n.hasMinor(uint32(m)) {
			return nil, syscall.ENOENT
		}
		k.kind, k.minor = kindRender, uint32(m)
	default:
		return nil, syscall.ENOENT
	}
	k = n.d.current(k)
	// Per-process inode: never cached by the kernel across processes. go-fuse replaces a zero
	// timeout with the mount default, so 1 ns (expires at once) stands for "do not cache".
	out.SetEntryTimeout(time.Nanosecond)
	out.SetAttrTimeout(time.Nanosecond)
	ino := n.d.inoFor(k)
	df := &devFile{d: n.d, key: k}
	df.fill(&out.Attr)
	return n.NewInode(ctx, df, fs.StableAttr{Mode: syscall.S_IFREG, Ino: ino}), 0
}

func (n *devNode) hasMinor(m uint32) bool {
	n.d.mu.Lock()
	defer n.d.mu.Unlock()
	for _, x := range n.d.minors {
		if x == m {
			return true
		}
	}
	return false
}

// devFile is one process's inode of a device file.
type devFile struct {
	fs.Inode
	d   *devDir
	key devKey
}

var (
	_ fs.NodeOpener    = (*devFile)(nil)
	_ fs.NodeGetattrer = (*devFile)(nil)
)

func (f *devFile) fill(a *fuse.Attr) {
	a.Mode = syscall.S_IFREG | 0666
	a.Size = 0
}

func (f *devFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	f.fill(&out.Attr)
	out.SetTimeout(time.Nanosecond)
	return 0
}

func (f *devFile) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EPERM
}

func (f *devFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	tgid := f.d.callerTgid(ctx)
	if tgid != f.key.tgid {
		// Another process's inode: the kernel still held a dentry another process looked up
		// (an entry timeout rounds up to one jiffy) or the path went through /proc/PID/root.
		// Opening it would pass its memfd through to this caller, so refuse with ESTALE: the
		// VFS retries the open once with LOOKUP_REVAL (do_filp_open), which makes FUSE look the
		// name up again, on behalf of this caller, and so reach the caller's own inode.
		f.d.s.opts.Log.Debug("open of another process's device inode, asking for a fresh lookup", "tgid", tgid, "owner", f.key.tgid)
		f.d.explainPinned(f.key, tgid)
		return nil, 0, syscall.ESTALE
	}
	if !f.d.opened(f.key) {
		// An inode of a previous generation (its last open was released): its passthrough
		// backing may be the previous kfd process's memfd. A fresh lookup gives the new one.
		return nil, 0, syscall.ESTALE
	}
	dev := f.d.s.opts.Device
	var file kfd.File
	var err error
	if f.key.kind == kindKFD {
		file, err = dev.OpenKFD(tgid)
	} else {
		file, err = dev.OpenRender(f.key.minor, tgid)
	}
	if err != nil {
		f.d.closed(f.key)
		f.d.s.opts.Log.Warn("open failed", "tgid", tgid, "err", err)
		return nil, 0, errnoOf(err)
	}
	f.d.s.watch.add(tgid)
	// Device files are not page-cache backed: direct I/O unless passthrough takes over.
	return &devHandle{d: f.d, f: file, owner: tgid, pidfd: ownerPidfd(tgid), key: f.key}, fuse.FOPEN_DIRECT_IO, 0
}

// explainPinned logs, once per inode, why an open of another process's device inode whose owner
// has exited keeps failing: the VFS's fresh lookup cannot reach a path that pins the inode itself,
// which is what a bind mount of the device file (`mount --bind MNT/dev/kfd /dev/kfd`, a container
// runtime's `-v MNT/dev/kfd:/dev/kfd`) does: the mount command's lookup chose its own inode.
func (d *devDir) explainPinned(key devKey, tgid int) {
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", key.tgid)); err == nil {
		return // the owner lives: a cached dentry, which the fresh lookup replaces
	}
	if _, dup := d.pinned.LoadOrStore(key, true); dup {
		return
	}
	d.s.opts.Log.Warn("open of a device file through a path pinned to an exited process's inode (a bind mount "+
		"of the device file itself?): device files are per process and cannot be bind-mounted one by one; "+
		"bind the mount's dev directory instead (mount --bind MNT/dev DIR, then symlinks /dev/kfd -> DIR/kfd "+
		"and /dev/dri -> DIR/dri) or run the program under `kfdemu exec`; the open fails with ESTALE",
		"tgid", tgid, "inode owner", key.tgid)
}

// devHandle is one open file description of a device file.
type devHandle struct {
	d     *devDir
	f     kfd.File
	owner int
	pidfd int // the owner's, for ownerThread; -1: none
	key   devKey
	once  sync.Once
}

var (
	_ fs.FileIoctler         = (*devHandle)(nil)
	_ fs.FileReleaser        = (*devHandle)(nil)
	_ fs.FilePassthroughFder = (*devHandle)(nil)
)

func (h *devHandle) PassthroughFd() (int, bool) {
	b := h.f.Backing()
	if b == nil {
		return 0, false
	}
	return int(b.Fd()), true
}

// Ioctl serves a restricted FUSE ioctl: exactly _IOC_SIZE(cmd) bytes come in and go out. Errors are
// returned in-band (result = -errno with status OK) so that the kernel copies the argument back, as
// amdkfd does for ioctls that report partial progress (MAP_MEMORY_TO_GPU n_success).
func (h *devHandle) Ioctl(ctx context.Context, cmd uint32, arg uint64, input []byte, output []byte) (int32, syscall.Errno) {
	tgid := h.owner
	var sup *supCall
	if c, ok := fuse.FromContext(ctx); !ok || !ownerThread(h.pidfd, h.owner, c.Pid) {
		if ok {
			sup = h.d.s.sup.call(c.Pid)
		}
		if sup != nil {
			tgid = sup.tgid // the seccomp supervisor, making a client's call (supervise.go)
		} else {
			tgid = h.d.callerTgid(ctx) // not a thread of the owner, or not known cheaply
		}
	}
	if tgid != h.owner {
		// kfd_ioctl: "if (process->lead_thread != current->group_leader) return -EBADF" (fork),
		// before any copy: the argument stays as the caller left it. An in-band result would
		// make the kernel copy `output` (not filled here) over it; libhsakmt in a forked child
		// then read garbage pointers back from UNMAP's argument and crashed.
		return 0, syscall.EBADF
	}
	buf := make([]byte, max(len(input), len(output)))
	copy(buf, input)
	c := &caller{tgid: tgid, d: h.d, intr: ctx.Done(), sup: sup}
	errno := h.f.Ioctl(c, cmd, buf)
	if co, ok := h.f.(kfd.CopyOuter); ok && errno != 0 && !co.CopiesOut(cmd) {
		return 0, errno // refused before any copy: the argument stays as the caller left it
	}
	copy(output, buf)
	if errno == 0 {
		return c.ret, 0
	}
	return -int32(errno), 0
}

func (h *devHandle) Release(ctx context.Context) syscall.Errno {
	h.once.Do(func() {
		// Retire the inode generation first: releasing the file may end the kfd process, and
		// a reopen that follows must meet a new inode, not this one (whose passthrough backing
		// go-fuse keeps until after this returns).
		h.d.closed(h.key)
		h.f.Release()
		if h.pidfd >= 0 {
			syscall.Close(h.pidfd)
		}
	})
	return 0
}

func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if ok := asErrno(err, &e); ok {
		return e
	}
	return syscall.EIO
}
