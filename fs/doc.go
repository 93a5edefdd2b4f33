// Package fs is the FUSE edge of kfdemu: it maps files, ioctls and mmap of the mount onto the
// driver (package kfd) and the rendered topology (package topology). It holds no policy.
//
// Connections: MNT (dev/), MNT/sys (read-only; file contents and directory listings kernel-cached:
// OPEN and OPENDIR answered ENOSYS, noopendir.go), MNT/sys/kernel/debug, and one per PCI root bus of
// the GPUs:
//
//	MNT/dev/kfd, MNT/dev/dri/renderD<minor>     device files (per-process inodes, see dev.go)
//	MNT/dev/dma_buf/ID                          dma-buf files, looked up and opened by the daemon only
//	                                           (dmabuf.go), installed in clients by supervise.go
//	MNT/sys/devices/virtual/kfd/kfd/topology    the topology tree, static files kernel-cached
//	MNT/sys/class/kfd/kfd -> ../../devices/virtual/kfd/kfd
//	MNT/sys/devices/virtual/kfd/kfd/proc       KFD's per-process sysfs, new inodes per lookup (procfs.go)
//	MNT/sys/class/drm, MNT/sys/class/hwmon     links into the amdgpu device directories (drm.go)
//	MNT/sys/module/amdgpu/{initstate,version,parameters/}
//	MNT/sys/kernel/debug/kfd/...                the driver's debugfs view, rendered per read
//	MNT/sys/kernel/debug/kfdemu/{hotplug,stats} control and counters of the emulator
//	MNT/sys/kernel/debug/kfdemu/supervise      takes kfdemu exec's seccomp listener (supervise.go)
//	MNT/sys/devices/pciDDDD:RR/...             one connection per PCI root bus: the GPUs' amdgpu
//	                                           device directories (package amdgpu), ordinary opens
//
// Device memory is shared with FUSE passthrough: each process's open of a device file is backed
// by the driver's memfd for that process (kfd.File.Backing), so mmap of the device file maps the
// memfd and client and emulated GPU see the same bytes. The kernel allows one backing file per
// inode, so every process gets its own inode for each device file (Lookup answers per caller with
// zero entry timeout).
//
// Lock order: Server.mu (topology reload) before devDir.mu (per-process inodes); neither is held
// while calling into the driver. supervisor.mu (supervise.go) is a leaf.
package fs
