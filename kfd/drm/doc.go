// Package drm models the DRM render node of one amdgpu GPU (MNT/dev/dri/renderD<minor>) as far as
// libdrm_amdgpu 2.4.114 and libhsakmt use it: the DRM core dispatch of drm_ioctl.c (command tables,
// the kernel's argument size rules, render-node permissions), drm_version/drm_getclient/drm_getcap,
// the GEM/PRIME/SYNCOBJ ioctls a process without GEM objects can reach, and amdgpu_info_ioctl
// (amdgpu_kms.c) with every AMDGPU_INFO_* query answered from the device profile. The driver
// identity is that of amdgpu KMS 3.57 (Linux 6.10). Buffer objects are never created through GEM on
// this node: kfd allocates them (ALLOC_MEMORY_OF_GPU) and maps them through its own path, so the
// amdgpu command-submission ioctls return a documented errno (see STATUS.md and Device.Ioctl).
//
// The command tables (core.go: drm_ioctls[] and amdgpu_ioctls_kms[] with their permission flags) are
// keyed by kfd/abi's DRM_IOCTL_* constants. Handlers that read their argument take the abi struct
// (func(*Device, Memory, *abi.DRMGetCap) syscall.Errno); def checks each against abi.DRMIoctls,
// the DRM table that names every command's argument type, when the package loads.
//
// Concurrency: a Device is immutable after NewDevice and holds no locks; Ioctl may be called from any
// number of goroutines. The usage callback given to NewDevice is called without locks held here and
// must be safe for concurrent use.
package drm
