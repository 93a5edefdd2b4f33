// Package drm models the DRM render node of one amdgpu GPU (MNT/dev/dri/renderD<minor>) as far as
// libdrm_amdgpu 2.4.114, libhsakmt and kfdtest use it: the DRM core dispatch of drm_ioctl.c (command
// tables, the kernel's argument size rules, render-node permissions), drm_version/drm_getclient/
// drm_getcap, amdgpu_info_ioctl (amdgpu_kms.c) with every AMDGPU_INFO_* query answered from the
// device profile, and the GEM and command-submission ioctls of amdgpu_gem.c, amdgpu_ctx.c,
// amdgpu_bo_list.c and amdgpu_cs.c. The driver identity is that of amdgpu KMS 3.57 (Linux 6.10).
//
// The command tables (core.go: drm_ioctls[] and amdgpu_ioctls_kms[] with their permission flags) are
// keyed by kfd/abi's DRM_IOCTL_* constants. Handlers that read their argument take the abi struct
// (func(*File, Memory, *abi.DRMGetCap) syscall.Errno, or the Device's through dev); def checks each
// against abi.DRMIoctls, the DRM table that names every command's argument type, when the package
// loads.
//
// A Device is the node (immutable after NewDevice); a File is one open of it (drm_file with
// amdgpu_fpriv): GEM handles, contexts, BO lists (each an idr: the lowest free id first), and the
// jobs of its submissions. Memory and the GPUVM are the Backend's (package kfd: the process's
// render-node memfd and its GPUVM of the GPU). GEM objects (gem.go) are placed by the Backend in
// VRAM, GTT or system memory in amdgpu's order, VRAM retried with GTT as amdgpu_gem_create_ioctl
// does; GEM_VA maps them with amdgpu's checks (reserved and hole ranges, alignment, overlap EINVAL).
// CS (cs.go) reads the chunk array in amdgpu's order and queues one job per entity (context, IP,
// ring); a goroutine per entity runs its jobs in order while it has any, so CS returns at once with
// the entity's sequence number and WAIT_CS/WAIT_FENCES/GEM_WAIT_IDLE wait for fences with amdgpu's
// absolute CLOCK_MONOTONIC timeouts. SDMA IBs run on gpu/sdma (RunIB) through a Port of the VM,
// COMPUTE IBs on the Backend's PM4 engine (package kfd: a gpu/cp/pm4 queue per job behind a kernel
// ring, dispatches on gpu/shader); GFX has no rings on the compute parts. An IB that faults or holds
// a packet the engine cannot run ends its job with ETIME and makes its context guilty, as amdgpu's
// job timeout and GPU reset would. No syncobjs exist (GET_CAP(SYNCOBJ)
// is 0), and nothing that would install an fd in the client (PRIME export, sync files) can be done.
//
// Concurrency and lock order: File.vaMu (GEM_VA and the unmapping of GEM_CLOSE and Close; amdgpu's
// VM root reservation) before File.mu (handles, contexts, lists, metadata, fences of objects) before
// an entity's mu (its sequence, fences and job queue). Backend calls are made without File.mu or an
// entity's mu held; the Backend takes its own locks (package kfd: Process.mu). No lock is held while
// waiting for a fence or reading client memory. Close stops the jobs (ESRCH), waits for their
// goroutines, then releases lists and objects. A Device holds no locks; the usage callback given to
// NewDevice is called without locks held here and must be safe for concurrent use.
package drm
