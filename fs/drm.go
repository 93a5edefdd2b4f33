package fs

import (
	"context"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/kfdemu/kfdemu/amdgpu"
	"github.com/kfdemu/kfdemu/kfd/drm"
	"github.com/kfdemu/kfdemu/topology"
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
}

// pciRoot is the root of one root bus connection.
type pciRoot struct {
	roDir
	t *topology.Tree
}

func (r *pciRoot) OnAdd(ctx context.Context) { addTree(ctx, &r.Inode, r.t) }
