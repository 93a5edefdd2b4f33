package kfd

import (
	"os"
	"sync"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/drm"
	"github.com/kfdemu/kfdemu/topology"
)

// renderFile is one open of dev/dri/renderD<minor>. Its DRM ioctls are answered by package kfd/drm
// (a drm.File: GEM handles, contexts, BO lists, command submission) over gemBackend; the memory of
// kfd's and GEM's VRAM and GTT objects is the process's render-node memfd, which this file's mmap
// maps.
type renderFile struct {
	p    *Process
	node *topology.Node
	sp   *space
	gem  *drm.File
	once sync.Once
}

func (f *renderFile) Backing() *os.File { return f.sp.f }

// Release closes the file's GEM state, then drops its reference on the process.
func (f *renderFile) Release() {
	f.once.Do(func() {
		f.gem.Close()
		f.p.mu.Lock()
		delete(f.p.renderFiles, f)
		f.p.mu.Unlock()
		f.p.d.put(f.p)
	})
}

func (f *renderFile) Ioctl(c Caller, cmd uint32, arg []byte) syscall.Errno {
	return f.gem.Ioctl(c, cmd, arg)
}

// newDRM builds the render node of n; VRAM and GTT usage come from the driver's accounting.
func newDRM(d *Driver, n *topology.Node) *drm.Device {
	gpu := n.GPUID
	return drm.NewDevice(drm.InfoFromNode(d.sys, n), func() drm.Usage {
		d.mu.Lock()
		defer d.mu.Unlock()
		return drm.Usage{VRAM: d.vramUsed[gpu], VisibleVRAM: d.vramUsed[gpu], GTT: d.gttUsed[gpu]}
	})
}
