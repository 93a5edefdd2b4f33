package fs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/kfdemu/kfdemu/amdgpu"
	"github.com/kfdemu/kfdemu/kfd"
	"github.com/kfdemu/kfdemu/topology"
	"golang.org/x/sys/unix"
)

// Options configure a mount.
type Options struct {
	// System is the modelled topology; it is rendered, hot-plugged and given to the driver.
	System *topology.System
	// Capture, when set, is served instead of System's rendering (--topology-from); hot-plug is then
	// refused.
	Capture *topology.Tree
	// Device is the driver behind dev/; nil mounts the topology only.
	Device kfd.Device
	Log    *slog.Logger
	// Debug enables go-fuse's request log.
	Debug bool
	// ExecOwner is the pid of the `kfdemu exec` that started this daemon for its command's
	// lifetime (0: none); the stats file reports it as exec_owner, so that another exec does not
	// run its command on a daemon that goes away when the owner's command ends.
	ExecOwner int
}

// Server is a mounted kfdemu filesystem.
type Server struct {
	opts        Options
	dir         string
	srvs        []*fuse.Server // MNT, MNT/sys, MNT/sys/kernel/debug, MNT/sys/devices/pci* (drm.go); under mu once mounted
	mountPoints []string
	first       *fuse.Server // srvs[0], set before Mount returns and never changed: Wait's
	unmounted   bool         // under mu: Unmount took srvs; a root bus mounted since is detached at once
	root        *rootNode
	dynMu       sync.Mutex
	dynamic     []*fs.Inode    // sysfs files whose content changes (used_memory)
	kfdDir      *fs.Inode      // sys/devices/virtual/kfd/kfd
	drm         *amdgpu.Layout // the amdgpu DRM sysfs (drm.go); nil without a System
	sysDevices  *fs.Inode      // sys/devices and sys/class on the sys connection (drm.go)
	sysClass    *fs.Inode
	pciRoots    map[string]*fs.Inode // root of each PCI root bus connection, by directory name
	dev         *devDir
	watch       *procWatch
	mu          sync.Mutex
	// ready is set when Mount has returned: every request the daemon makes to its own mounts
	// (go-fuse's poll hack opens and closes a file in each) is done. A daemon killed while one is
	// in flight cannot exit (its thread waits in FLUSH for a server that is gone), so readiness
	// probes (the "ready" line of kfdemu/stats) wait for this.
	ready atomic.Bool
	// sup answers the fd-returning ioctls of processes under kfdemu exec (supervise.go).
	sup *supervisor
}

// Errors of Mount that serve reports with exit code 2.
var (
	ErrBusy     = errors.New("mount point is already mounted")
	ErrNotEmpty = errors.New("mount point is not empty")
)

type rootNode struct {
	roDir
	s *Server
}

// mkPath creates (or finds) the directory chain p below in.
func mkPath(ctx context.Context, in *fs.Inode, p string) *fs.Inode {
	for _, part := range strings.Split(p, "/") {
		c := in.GetChild(part)
		if c == nil {
			c = in.NewPersistentInode(ctx, &roDir{mode: 0755}, fs.StableAttr{Mode: syscall.S_IFDIR})
			in.AddChild(part, c, true)
		}
		in = c
	}
	return in
}

// OnAdd builds MNT: dev/ and the sys/ mount point.
func (r *rootNode) OnAdd(ctx context.Context) {
	s := r.s
	devIn := r.NewPersistentInode(ctx, &devNode{roDir: roDir{mode: 0755}, d: s.dev}, fs.StableAttr{Mode: syscall.S_IFDIR})
	r.AddChild("dev", devIn, true)
	s.dev.dri = devIn.NewPersistentInode(ctx, &devNode{roDir: roDir{mode: 0755}, d: s.dev, dri: true},
		fs.StableAttr{Mode: syscall.S_IFDIR})
	s.dev.parent = devIn
	s.dev.dmabufs = devIn.NewPersistentInode(ctx, &dmabufDir{roDir: roDir{mode: 0700}, d: s.dev},
		fs.StableAttr{Mode: syscall.S_IFDIR})
	mkPath(ctx, &r.Inode, "sys")
}

// sysRoot is MNT/sys, its own read-only FUSE connection whose files answer OPEN with ENOSYS: the
// kernel then never sends OPEN/FLUSH/RELEASE again and serves repeated reads from its page cache;
// its directories answer OPENDIR with ENOSYS too (noopendir.go), so listings come from the kernel's
// readdir cache. That is what makes topology enumeration as cheap as sysfs (BenchmarkTopologyRead,
// `kfdemu bench`).
type sysRoot struct {
	roDir
	s *Server
}

func (r *sysRoot) OnAdd(ctx context.Context) {
	s := r.s
	kd := &kfdDevDir{roDir: roDir{mode: 0755}}
	if pt, ok := s.opts.Device.(interface{ ProcTree() *topology.Tree }); ok && s.opts.Device != nil {
		kd.proc = pt.ProcTree // proc/: KFD's per-process sysfs (procfs.go)
	}
	virt := mkPath(ctx, &r.Inode, "devices/virtual/kfd")
	s.kfdDir = virt.NewPersistentInode(ctx, kd, fs.StableAttr{Mode: syscall.S_IFDIR})
	virt.AddChild("kfd", s.kfdDir, true)
	s.kfdDir.AddChild("topology", s.newSysInode(ctx, s.kfdDir, s.topologyTree()), true)
	// kfd's device attributes (/sys/devices/virtual/kfd/kfd/dev and uevent): major 511 is what
	// amdkfd usually gets from register_chrdev(0, ...) on current kernels; informational only.
	for _, c := range staticDir("", map[string]string{"dev": "511:0\n", "uevent": "MAJOR=511\nMINOR=0\nDEVNAME=kfd\n"}).Children {
		s.kfdDir.AddChild(c.Name, s.newSysInode(ctx, s.kfdDir, c), true)
	}
	class := mkPath(ctx, &r.Inode, "class/kfd")
	class.AddChild("kfd", class.NewPersistentInode(ctx, &fs.MemSymlink{Data: []byte("../../devices/virtual/kfd/kfd")},
		fs.StableAttr{Mode: syscall.S_IFLNK}), true)
	// The module's sysfs directory as libkmod reads it (initstate, refcnt, holders/).
	amdgpu := mkPath(ctx, &r.Inode, "module/amdgpu")
	for _, c := range staticDir("", map[string]string{"initstate": "live\n", "version": "6.10.5\n", "refcnt": "0\n"}).Children {
		amdgpu.AddChild(c.Name, s.newSysInode(ctx, amdgpu, c), true)
	}
	mkPath(ctx, amdgpu, "holders")
	params := mkPath(ctx, amdgpu, "parameters")
	for _, c := range staticDir("", amdgpuParams).Children {
		params.AddChild(c.Name, s.newSysInode(ctx, params, c), true)
	}
	mkPath(ctx, &r.Inode, "kernel/debug")
	s.addDRMClass(ctx, &r.Inode)
}

// newSysInode adds a rendered tree to the sys connection: files without OPEN; Dynamic ones are
// remembered so that their cached pages can be dropped when the content changes.
func (s *Server) newSysInode(ctx context.Context, parent *fs.Inode, t *topology.Tree) *fs.Inode {
	switch t.Kind {
	case topology.File:
		in := parent.NewPersistentInode(ctx, &treeFile{t: t, noOpen: true}, fs.StableAttr{Mode: syscall.S_IFREG})
		if t.Dynamic {
			s.dynMu.Lock()
			s.dynamic = append(s.dynamic, in)
			s.dynMu.Unlock()
		}
		return in
	case topology.Symlink:
		return parent.NewPersistentInode(ctx, &fs.MemSymlink{Data: []byte(t.Target)}, fs.StableAttr{Mode: syscall.S_IFLNK})
	}
	in := parent.NewPersistentInode(ctx, &cachedDir{roDir{mode: t.Mode}}, fs.StableAttr{Mode: syscall.S_IFDIR})
	for _, c := range t.Children {
		in.AddChild(c.Name, s.newSysInode(ctx, in, c), true)
	}
	return in
}

// invalidateDynamic drops the kernel's cached pages of dynamic sysfs files (used_memory).
func (s *Server) invalidateDynamic() {
	s.dynMu.Lock()
	ins := append([]*fs.Inode(nil), s.dynamic...)
	s.dynMu.Unlock()
	for _, in := range ins {
		in.NotifyContent(0, 0)
	}
}

// dbgRoot is MNT/sys/kernel/debug, a third connection with ordinary opens: the driver's view
// (kfd/) and the emulator's control and counters (kfdemu/), rendered at every open.
type dbgRoot struct {
	roDir
	s *Server
}

func (r *dbgRoot) OnAdd(ctx context.Context) {
	s := r.s
	if s.opts.Device != nil {
		kd := s.opts.Device.Debug()
		kd.Name = "kfd"
		r.AddChild("kfd", newTreeInode(ctx, &r.Inode, kd), true)
	}
	emu := mkPath(ctx, &r.Inode, "kfdemu")
	emu.AddChild("hotplug", emu.NewPersistentInode(ctx, &treeFile{
		t:     &topology.Tree{Name: "hotplug", Kind: topology.File, Mode: 0444, Dynamic: true, Content: s.hotplugHelp},
		write: func(_ context.Context, data []byte) syscall.Errno { return s.hotplugWrite(data) }},
		fs.StableAttr{Mode: syscall.S_IFREG}), true)
	emu.AddChild("supervise", emu.NewPersistentInode(ctx, &treeFile{
		t:     &topology.Tree{Name: "supervise", Kind: topology.File, Mode: 0200, Dynamic: true, Content: func() []byte { return nil }},
		write: s.superviseWrite}, fs.StableAttr{Mode: syscall.S_IFREG}), true)
	emu.AddChild("stats", emu.NewPersistentInode(ctx, &treeFile{
		t: &topology.Tree{Name: "stats", Kind: topology.File, Mode: 0444, Dynamic: true, Content: s.stats}},
		fs.StableAttr{Mode: syscall.S_IFREG}), true)
}

func staticDir(name string, files map[string]string) *topology.Tree {
	d := &topology.Tree{Name: name, Kind: topology.Dir, Mode: 0755}
	for _, k := range sortedKeys(files) {
		data := []byte(files[k])
		d.Children = append(d.Children, &topology.Tree{Name: k, Kind: topology.File, Mode: 0444,
			Content: func() []byte { return data }})
	}
	return d
}

func (s *Server) topologyTree() *topology.Tree {
	if s.opts.Capture != nil {
		return s.opts.Capture
	}
	return s.opts.System.Tree()
}

// Mount mounts the emulator at dir (created if missing). It refuses a live mount (ErrBusy) and a
// non-empty directory (ErrNotEmpty), and recovers a dead mount left by a killed daemon.
func Mount(dir string, opts Options) (*Server, error) {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.System == nil && opts.Capture == nil {
		return nil, fmt.Errorf("fs: no topology to serve")
	}
	if err := prepareMountpoint(dir, opts.Log); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, dir: dir}
	var err error
	// The watcher exists before the first request can arrive.
	if s.watch, err = newProcWatch(s.processExited); err != nil {
		return nil, err
	}
	s.dev = newDevDir(s)
	s.sup = newSupervisor(s)
	s.root = &rootNode{roDir: roDir{mode: 0755}, s: s}
	mounts := []struct {
		dir  string
		root fs.InodeEmbedder
		opts []string
		name string
	}{
		{dir, s.root, nil, "kfdemu"},
		{filepath.Join(dir, "sys"), &sysRoot{roDir: roDir{mode: 0755}, s: s}, []string{"ro"}, "kfdemu-sysfs"},
		{filepath.Join(dir, "sys/kernel/debug"), &dbgRoot{roDir: roDir{mode: 0700}, s: s}, nil, "kfdemu-debugfs"},
	}
	if s.drm = s.buildDRM(); s.drm != nil {
		for _, r := range s.drm.Roots {
			mounts = append(mounts, struct {
				dir  string
				root fs.InodeEmbedder
				opts []string
				name string
			}{filepath.Join(dir, "sys/devices", r.Name), &pciRoot{roDir: roDir{mode: 0755}, s: s, t: r}, nil, "kfdemu-pci"})
		}
	}
	for i, m := range mounts {
		if i == 1 {
			// st_dev of the mount, taken before the nested mounts: every request the daemon makes
			// to its own mount is done before a readiness probe can succeed (a daemon killed while
			// one is in flight cannot exit: its thread waits on a server that is gone).
			var st unix.Stat_t
			if err := unix.Stat(dir, &st); err == nil {
				s.dev.mountDev.Store(st.Dev)
			}
		}
		srv, err := s.mountOne(m.dir, m.root, m.opts, m.name)
		if err != nil {
			s.unmountAll()
			s.watch.close()
			return nil, fmt.Errorf("fs: mount %s: %w", m.dir, err)
		}
		s.srvs = append(s.srvs, srv)
		s.mountPoints = append(s.mountPoints, m.dir)
	}
	s.first = s.srvs[0]
	if opts.System != nil && opts.Capture == nil {
		opts.System.OnUsedMemoryChange(s.invalidateDynamic)
	}
	s.ready.Store(true)
	opts.Log.Info("mounted", "dir", dir)
	return s, nil
}

// mountOne mounts one FUSE connection of the emulator at dir.
func (s *Server) mountOne(dir string, root fs.InodeEmbedder, opts []string, name string) (*fuse.Server, error) {
	long := time.Hour
	zero := time.Duration(0)
	fo := &fs.Options{
		EntryTimeout: &long, AttrTimeout: &long, NegativeTimeout: &zero,
		MountOptions: fuse.MountOptions{
			FsName: name, Name: "kfdemu", DirectMount: true, AllowOther: os.Geteuid() == 0,
			MaxBackground: 256, Debug: s.opts.Debug, DisableXAttrs: true, Options: opts,
			// Device ioctls and WAIT_EVENTS run concurrently: go-fuse serves each
			// request on its own goroutine, so a blocked wait holds no other request.
			MaxReadAhead: 128 << 10,
			// Every symlink of the tree is an inode whose target never changes (hot-plug adds
			// and removes inodes), so the kernel may keep targets: a path through
			// /sys/class/kfd/kfd then costs no READLINK per walk (9528 in a warm pass over the
			// 65-node mi300x-cpx topology before, none after).
			EnableSymlinkCaching: true,
		},
	}
	var raw fuse.RawFileSystem = fs.NewNodeFS(root, fo)
	if _, ok := root.(*sysRoot); ok {
		raw = &noOpendirFS{raw} // listings cached by the kernel (noopendir.go)
	}
	// fs.Mount, with the raw file system in between.
	srv, err := fuse.NewServer(raw, dir, &fo.MountOptions)
	if err != nil {
		return nil, err
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		return nil, err
	}
	return srv, nil
}

// prepareMountpoint creates dir, refuses live mounts and non-empty dirs, and detaches a dead FUSE
// mount (ENOTCONN) left by a killed daemon.
func prepareMountpoint(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0755); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) && errors.Is(pe.Err, syscall.ENOTCONN) {
			return recoverStale(dir, log)
		}
		if !errors.Is(err, syscall.EEXIST) {
			return err
		}
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		if errors.Is(err, syscall.ENOTCONN) {
			return recoverStale(dir, log)
		}
		return err
	}
	if mounted(dir) {
		// A stat may be answered from the kernel's cache; reading the directory reaches the server.
		if _, err := os.ReadDir(dir); errors.Is(err, syscall.ENOTCONN) {
			return recoverStale(dir, log)
		}
		return fmt.Errorf("%s: %w (another kfdemu serves it; stop it or use --mount)", dir, ErrBusy)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s: %w (%d entries)", dir, ErrNotEmpty, len(ents))
	}
	return nil
}

func recoverStale(dir string, log *slog.Logger) error {
	log.Warn("recovering stale mount left by a dead daemon", "dir", dir)
	abortConnection(dir)
	if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("%s: stale FUSE mount and unmount failed: %w", dir, err)
	}
	return nil
}

// abortConnection aborts the FUSE connection of a dead mount via fusectl so that processes blocked
// on it are released (/sys/fs/fuse/connections/<dev minor>/abort).
func abortConnection(dir string) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	abs, _ := filepath.Abs(dir)
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == abs && strings.Contains(line, "fuse") {
			if _, minor, ok := strings.Cut(f[2], ":"); ok {
				os.WriteFile("/sys/fs/fuse/connections/"+minor+"/abort", []byte("1"), 0)
			}
		}
	}
}

// mounted reports whether dir is a mount point (in this mount namespace).
func mounted(dir string) bool {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	abs, _ := filepath.Abs(dir)
	abs, _ = filepath.EvalSymlinks(abs)
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == abs {
			return true
		}
	}
	return false
}

// Dir is the mount point.
func (s *Server) Dir() string { return s.dir }

// Wait blocks until the filesystem is unmounted. (It reads no field Unmount changes: it runs at
// once beside it, e.g. when a signal arrives during start-up.)
func (s *Server) Wait() { s.first.Wait() }

// Unmount unmounts the three connections (innermost first) and stops the process watcher.
func (s *Server) Unmount() error {
	s.sup.stop()
	err := s.unmountAll()
	s.watch.close()
	if s.opts.Device != nil {
		s.opts.Device.Close() // stop the hardware model; clients get ENOTCONN from the dead mount
	}
	return err
}

func (s *Server) unmountAll() error {
	// Taken under mu: a hot-plug (ReloadTopology) changes the lists under it.
	s.mu.Lock()
	srvs, mountPoints := s.srvs, s.mountPoints
	s.srvs, s.mountPoints, s.unmounted = nil, nil, true
	s.mu.Unlock()
	var first error
	for i := len(srvs) - 1; i >= 0; i-- {
		if err := unix.Unmount(mountPoints[i], 0); err != nil {
			// A client still holding files: detach lazily, as umount -l would.
			if err2 := unix.Unmount(mountPoints[i], unix.MNT_DETACH); err2 != nil && first == nil {
				first = fmt.Errorf("fs: unmount %s: %w", mountPoints[i], err)
			}
		}
	}
	// The serve loops end when the kernel drops a connection, which it does only once no mount
	// namespace holds a copy of the mount: every `unshare -m` made while the daemon ran (a
	// `kfdemu exec` of any mount on this host) copied it. Wait a bounded time; loops that outlive
	// it end with that namespace or with the daemon's exit, which closes /dev/fuse.
	done := make(chan struct{})
	go func() {
		for _, srv := range srvs {
			srv.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(unmountWait):
		s.opts.Log.Debug("unmounted; another mount namespace still holds a connection", "dir", s.dir)
	}
	return first
}

// unmountWait bounds how long Unmount waits for the connections' serve loops.
const unmountWait = 2 * time.Second

// ReloadTopology re-renders the topology (after hot-plug) and replaces the served tree, dropping the
// kernel's cached entries.
func (s *Server) ReloadTopology() {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx := context.Background()
	s.kfdDir.RmChild("topology")
	s.dynMu.Lock()
	s.dynamic = nil
	s.dynMu.Unlock()
	s.kfdDir.AddChild("topology", s.newSysInode(ctx, s.kfdDir, s.topologyTree()), true)
	s.kfdDir.NotifyEntry("topology")
	s.kfdDir.NotifyContent(0, 0) // its cached listing names the old inode (noopendir.go)
	if s.opts.Device != nil {
		s.dev.syncRenderNodes(s.opts.Device.RenderMinors())
	}
	s.refreshDRM()
}

func (s *Server) hotplugHelp() []byte {
	return []byte("write \"add <template>\" or \"remove <node>\"; templates: mi210 mi100 mi300x mi300x-cpx vega10 rx6800\n")
}

func (s *Server) hotplugWrite(data []byte) syscall.Errno {
	if s.opts.Capture != nil || s.opts.System == nil {
		s.opts.Log.Warn("hotplug refused: serving a captured tree")
		return syscall.EOPNOTSUPP
	}
	f := strings.Fields(string(data))
	var err error
	switch {
	case len(f) == 2 && f[0] == "add":
		var id int
		id, err = s.opts.System.AddGPU(f[1])
		if err == nil {
			s.opts.Log.Info("hotplug: GPU added", "node", id, "template", f[1])
		}
	case len(f) == 2 && f[0] == "remove":
		var id int
		if id, err = strconv.Atoi(f[1]); err == nil {
			err = s.opts.System.RemoveGPU(id)
		}
		if err == nil {
			s.opts.Log.Info("hotplug: GPU removed", "node", id)
		}
	default:
		err = fmt.Errorf("bad command %q", strings.TrimSpace(string(data)))
	}
	if err != nil {
		s.opts.Log.Warn("hotplug", "err", err)
		return syscall.EINVAL
	}
	s.ReloadTopology()
	return 0
}

func (s *Server) stats() []byte {
	var b strings.Builder
	r := 0
	if s.ready.Load() {
		r = 1
	}
	fmt.Fprintf(&b, "ready %d\n", r)
	fmt.Fprintf(&b, "generation %d\n", s.generation())
	fmt.Fprintf(&b, "client_processes %d\n", s.dev.clientCount())
	fmt.Fprintf(&b, "watched_pids %d\n", s.watch.count())
	fmt.Fprintf(&b, "supervised_trees %d\n", s.sup.count())
	fmt.Fprintf(&b, "exec_owner %d\n", s.opts.ExecOwner)
	if st, ok := s.opts.Device.(interface{ Stats() map[string]int }); ok && s.opts.Device != nil {
		m := st.Stats()
		for _, k := range sortedKeys(m) {
			fmt.Fprintf(&b, "%s %d\n", k, m[k])
		}
	}
	return []byte(b.String())
}

func (s *Server) generation() uint64 {
	if s.opts.System != nil && s.opts.Capture == nil {
		return s.opts.System.Generation()
	}
	return 0
}

func (s *Server) processExited(tgid int) {
	if s.opts.Device != nil {
		s.opts.Device.ProcessExited(tgid)
	}
	s.dev.forget(tgid)
}

func (s *Server) devNum() uint64 { return s.dev.mountDev.Load() }
