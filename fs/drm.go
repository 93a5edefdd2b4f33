package fs

import (
	"context"
	"path/filepath"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/kfdemu/kfdemu/amdgpu"
	"github.com/kfdemu/kfdemu/kfd/drm"
	"github.com/kfdemu/kfdemu/topology"
	"golang.org/x/sys/unix"
)

// The amdgpu DRM sysfs (package amdgpu renders it): MNT/sys/class/drm and MNT/sys/class/hwmon are
// links on the sys connection; each PCI root bus directory MNT/sys/devices/pciDDDD:RR is its own
// connection with ordinary opens, because its attributes change at every read (gpu_busy_percent,
// temperatures, clocks: rendered at open, direct I/O) and some are writable
// (power_dpm_force_performance_level, pp_dpm_*, hwmon power1_cap) where MNT/sys is read-only.

// buildDRM lays out the amdgpu devices of the served system; the driver, when it reports usage and
// activity (kfd.Driver does), supplies the live figures.
func (s *Server) buildDRM() *amdgpu.Layout {
	sys := s.opts.System
	if sys == nil {
		return nil
	}
	cfg := amdgpu.Config{GTTTotal: func(n *topology.Node) uint64 { return drm.InfoFromNode(sys, n).GTTSize }}
	if src, ok := s.opts.Device.(amdgpu.Source); ok && s.opts.Device != nil {
		cfg.Source = src
	}
	return amdgpu.Build(sys, cfg)
}

// addDRMClass adds sys/class/drm and sys/class/hwmon, and the mount points of the root buses.
func (s *Server) addDRMClass(ctx context.Context, sys *fs.Inode) {
	if s.drm == nil || len(s.drm.Devices) == 0 {
		return
	}
	class := mkPath(ctx, sys, "class")
	class.AddChild("drm", s.newSysInode(ctx, class, s.drm.DRM), true)
	class.AddChild("hwmon", s.newSysInode(ctx, class, s.drm.Hwmon), true)
	devices := mkPath(ctx, sys, "devices")
	for _, r := range s.drm.Roots {
		mkPath(ctx, devices, r.Name)
	}
	s.sysDevices, s.sysClass = devices, class
}

// pciRoot is the root of one root bus connection.
type pciRoot struct {
	roDir
	s *Server
	t *topology.Tree
}

func (r *pciRoot) OnAdd(ctx context.Context) {
	addTree(ctx, &r.Inode, r.t)
	r.s.mu.Lock()
	if r.s.pciRoots == nil {
		r.s.pciRoots = map[string]*fs.Inode{}
	}
	r.s.pciRoots[r.t.Name] = &r.Inode
	r.s.mu.Unlock()
}

// refreshDRM follows a hot-plug (called by ReloadTopology with Server.mu held): the devices are
// laid out again, keeping the state of those still present (performance level, clocks, thermal
// state), class links are replaced, root bus connections get their new trees, new root buses get
// a connection and the connections of root buses without GPUs are unmounted. Namespaces of
// `kfdemu exec` made earlier keep their view of the root buses.
func (s *Server) refreshDRM() {
	if s.drm == nil || s.sysDevices == nil {
		return
	}
	ctx := context.Background()
	nl := s.buildDRM()
	old := map[string]*amdgpu.Device{}
	for _, d := range s.drm.Devices {
		old[d.BDF()] = d
	}
	for _, d := range nl.Devices {
		if o := old[d.BDF()]; o != nil {
			d.Adopt(o)
		}
	}
	s.drm = nl
	for _, t := range []*topology.Tree{nl.DRM, nl.Hwmon} {
		s.sysClass.RmChild(t.Name)
		s.sysClass.AddChild(t.Name, s.newSysInode(ctx, s.sysClass, t), true)
		s.sysClass.NotifyEntry(t.Name)
	}
	s.sysClass.NotifyContent(0, 0) // cached listings name the old inodes (noopendir.go)
	want := map[string]*topology.Tree{}
	for _, r := range nl.Roots {
		want[r.Name] = r
	}
	for name, in := range s.pciRoots {
		r := want[name]
		if r == nil {
			s.unmountRoot(name)
			continue
		}
		for c := range in.Children() {
			in.RmChild(c)
			in.NotifyEntry(c)
		}
		addTree(ctx, in, r)
	}
	for name, r := range want {
		if s.pciRoots[name] != nil {
			continue
		}
		mkPath(ctx, s.sysDevices, name)
		s.sysDevices.NotifyEntry(name)
		s.sysDevices.NotifyContent(0, 0)
		dir := filepath.Join(s.dir, "sys/devices", name)
		// pciRoot.OnAdd registers the root under Server.mu, held here by ReloadTopology.
		s.mu.Unlock()
		srv, err := s.mountOne(dir, &pciRoot{roDir: roDir{mode: 0755}, s: s, t: r}, nil, "kfdemu-pci")
		s.mu.Lock()
		if err != nil {
			s.opts.Log.Warn("hotplug: root bus connection not mounted", "dir", dir, "err", err)
			continue
		}
		if s.unmounted { // Unmount ran meanwhile: this connection is not in the lists it took
			unix.Unmount(dir, unix.MNT_DETACH)
			continue
		}
		s.srvs = append(s.srvs, srv)
		s.mountPoints = append(s.mountPoints, dir)
	}
}

// unmountRoot detaches the connection of a root bus that has no GPU left.
func (s *Server) unmountRoot(name string) {
	dir := filepath.Join(s.dir, "sys/devices", name)
	for i, mp := range s.mountPoints {
		if mp != dir {
			continue
		}
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			s.opts.Log.Warn("hotplug: unmount root bus connection", "dir", dir, "err", err)
		}
		s.srvs = append(s.srvs[:i:i], s.srvs[i+1:]...)
		s.mountPoints = append(s.mountPoints[:i:i], s.mountPoints[i+1:]...)
		break
	}
	delete(s.pciRoots, name)
	s.sysDevices.RmChild(name)
	s.sysDevices.NotifyEntry(name)
	s.sysDevices.NotifyContent(0, 0)
}
