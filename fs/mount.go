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
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
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
}

// Server is a mounted kfdemu filesystem.
type Server struct {
	opts   Options
	dir    string
	srv    *fuse.Server
	root   *rootNode
	kfdDir *fs.Inode // sys/devices/virtual/kfd/kfd
	dev    *devDir
	watch  *procWatch
	mu     sync.Mutex
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

func (r *rootNode) OnAdd(ctx context.Context) {
	s := r.s
	mk := func(parent *fs.Inode, name string) *fs.Inode {
		if c := parent.GetChild(name); c != nil {
			return c
		}
		c := parent.NewPersistentInode(ctx, &roDir{mode: 0755}, fs.StableAttr{Mode: syscall.S_IFDIR})
		parent.AddChild(name, c, true)
		return c
	}
	path := func(p string) *fs.Inode {
		in := &r.Inode
		for _, part := range strings.Split(p, "/") {
			in = mk(in, part)
		}
		return in
	}
	s.kfdDir = path("sys/devices/virtual/kfd/kfd")
	s.kfdDir.AddChild("topology", newTreeInode(ctx, s.kfdDir, s.topologyTree()), true)
	// kfd's device attributes (/sys/devices/virtual/kfd/kfd/dev and uevent): major 511 is what
	// amdkfd usually gets from register_chrdev(0, ...) on current kernels; informational only.
	addTree(ctx, s.kfdDir, staticDir("", map[string]string{
		"dev": "511:0\n", "uevent": "MAJOR=511\nMINOR=0\nDEVNAME=kfd\n"}))
	class := path("sys/class/kfd")
	class.AddChild("kfd", class.NewPersistentInode(ctx, &fs.MemSymlink{Data: []byte("../../devices/virtual/kfd/kfd")},
		fs.StableAttr{Mode: syscall.S_IFLNK}), true)
	// The module's sysfs directory as libkmod reads it (initstate, refcnt, holders/).
	amdgpu := path("sys/module/amdgpu")
	addTree(ctx, amdgpu, staticDir("", map[string]string{
		"initstate": "live\n", "version": "6.10.5\n", "refcnt": "0\n"}))
	mk(amdgpu, "holders")
	dbg := path("sys/kernel/debug")
	if s.opts.Device != nil {
		kd := s.opts.Device.Debug()
		kd.Name = "kfd"
		dbg.AddChild("kfd", newTreeInode(ctx, dbg, kd), true)
	}
	emu := mk(dbg, "kfdemu")
	emu.AddChild("hotplug", emu.NewPersistentInode(ctx, &treeFile{
		t:     &topology.Tree{Name: "hotplug", Kind: topology.File, Mode: 0444, Dynamic: true, Content: s.hotplugHelp},
		write: s.hotplugWrite}, fs.StableAttr{Mode: syscall.S_IFREG}), true)
	emu.AddChild("stats", emu.NewPersistentInode(ctx, &treeFile{
		t: &topology.Tree{Name: "stats", Kind: topology.File, Mode: 0444, Dynamic: true, Content: s.stats}},
		fs.StableAttr{Mode: syscall.S_IFREG}), true)
	devIn := r.NewPersistentInode(ctx, &devNode{roDir: roDir{mode: 0755}, d: s.dev}, fs.StableAttr{Mode: syscall.S_IFDIR})
	r.AddChild("dev", devIn, true)
	s.dev.dri = devIn.NewPersistentInode(ctx, &devNode{roDir: roDir{mode: 0755}, d: s.dev, dri: true},
		fs.StableAttr{Mode: syscall.S_IFDIR})
	s.dev.parent = devIn
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
	s.root = &rootNode{roDir: roDir{mode: 0755}, s: s}
	long := time.Hour
	zero := time.Duration(0)
	srv, err := fs.Mount(dir, s.root, &fs.Options{
		EntryTimeout: &long, AttrTimeout: &long, NegativeTimeout: &zero,
		MountOptions: fuse.MountOptions{
			FsName: "kfdemu", Name: "kfdemu", DirectMount: true, AllowOther: os.Geteuid() == 0,
			MaxBackground: 256, Debug: opts.Debug, DisableXAttrs: true,
			// Device ioctls and WAIT_EVENTS run concurrently; the kernel's FUSE request
			// queue is served by as many goroutines as needed (go-fuse spawns readers).
			MaxReadAhead: 128 << 10,
		},
		UID: 0, GID: 0,
	})
	if err != nil {
		s.watch.close()
		return nil, fmt.Errorf("fs: mount %s: %w", dir, err)
	}
	s.srv = srv
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err == nil {
		s.dev.mountDev.Store(st.Dev)
	}
	opts.Log.Info("mounted", "dir", dir, "passthrough", s.dev.passthroughOK())
	return s, nil
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

// Wait blocks until the filesystem is unmounted.
func (s *Server) Wait() { s.srv.Wait() }

// Unmount unmounts and stops the process watcher.
func (s *Server) Unmount() error {
	err := s.srv.Unmount()
	if err != nil {
		// A client still holding files open: detach lazily, as umount -l would.
		err = unix.Unmount(s.dir, unix.MNT_DETACH)
	}
	s.watch.close()
	return err
}

// ReloadTopology re-renders the topology (after hot-plug) and replaces the served tree, dropping the
// kernel's cached entries.
func (s *Server) ReloadTopology() {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx := context.Background()
	s.kfdDir.RmChild("topology")
	s.kfdDir.AddChild("topology", newTreeInode(ctx, s.kfdDir, s.topologyTree()), true)
	s.kfdDir.NotifyEntry("topology")
	if s.opts.Device != nil {
		s.dev.syncRenderNodes(s.opts.Device.RenderMinors())
	}
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
	fmt.Fprintf(&b, "generation %d\n", s.generation())
	fmt.Fprintf(&b, "client_processes %d\n", s.dev.clientCount())
	fmt.Fprintf(&b, "watched_pids %d\n", s.watch.count())
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
