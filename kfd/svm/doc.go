// Package svm models the shared-virtual-memory range list of one kfd process (struct
// svm_range_list) as far as a client can observe it through AMDKFD_IOC_SVM, SET_XNACK_MODE, GPU
// retry faults and munmap. It mirrors drivers/gpu/drm/amd/amdkfd/kfd_svm.c (Linux 6.x):
//
//   - kfd_ioctl_svm / kfd_ioctl_svm_validate (kfd_chardev.c): page alignment, zero start or size
//     -> EINVAL; the argument must hold nattr attributes (ValidateArgs).
//   - svm_range_set_attr: svm_range_check_attr (unknown type, a location that is neither SYSMEM,
//     UNDEFINED (preferred only) nor a gpu_id of the process, a GPU without SVM -> EINVAL), then
//     svm_range_is_valid (every page inside a VMA that is not VM_IO/VM_PFNMAP/VM_MIXEDMAP ->
//     else EFAULT; svm_range_check_vm: overlap with a GPUVM mapping of a kfd BO -> EADDRINUSE),
//     then svm_range_add: existing ranges that overlap and whose attributes change are cloned
//     and split at the boundaries (an unaligned split piece is remapped), gaps get new ranges
//     cut at max_svm_range_pages boundaries, ranges that already have the attributes and are
//     mapped are left alone; svm_range_apply_attrs; svm_range_trigger_migration for
//     PREFETCH_LOC (svm_range_best_prefetch_location); svm_range_validate_and_map.
//   - svm_range_get_attr: defaults on unregistered memory (UNDEFINED locations, granularity 9,
//     HOST_ACCESS|COHERENT, ACCESS for every GPU if XNACK is on); over several ranges a location
//     is reported only if every range agrees and none is UNDEFINED, SET_FLAGS reports the
//     intersection, CLR_FLAGS the complement of the union, GRANULARITY the minimum, ACCESS per
//     gpu_id only if every range grants it (ACCESS before ACCESS_IN_PLACE before NO_ACCESS);
//     parts of the interval without a range are not looked at.
//   - svm_range_validate_and_map: which GPUs are mapped (XNACK off: ACCESS|ACCESS_IN_PLACE;
//     XNACK on: ACCESS_IN_PLACE, the GPU holding the data if it has ACCESS, else ACCESS if the
//     range was mapped before or is GPU_ALWAYS_MAPPED), per-VMA read-only mappings, GPU_RO and
//     GPU_EXEC; a VMA without read permission or a device VMA fails with EFAULT (hmm_range_fault),
//     after the attributes were applied (SET_ATTR does not roll back).
//   - svm_range_restore_pages (Fault): XNACK off -> unresolved; a fault outside every range
//     creates an "unregistered" range (svm_range_create_unregistered_range: 2 MiB aligned,
//     clipped to the VMA and its neighbours, one page if it would overlap a BO, preferred
//     location SYSMEM on heap and stack); VMA permission (svm_fault_allowed);
//     svm_range_best_restore_location; migration and mapping of the granularity-aligned chunk
//     on the faulting GPU only.
//   - svm_range_unmap_from_cpu (Munmap): unmap the GPUs, split, drop the unmapped part.
//   - svm_range_switch_xnack_reserve_mem (SetXNACK) and the USERPTR accounting of
//     svm_range_new/svm_range_free (amdgpu_amdkfd_reserve_mem_limit) when XNACK is off.
//   - svm_range_evict: a migration invalidates the CPU pages; with XNACK on (and not
//     GPU_ALWAYS_MAPPED) the GPUs are unmapped over the migrated pages, otherwise the queues are
//     evicted and svm_range_restore_work maps the whole range again. Here the restore runs
//     synchronously before the call returns and the queue eviction is only logged (EventEvict):
//     the queues never observe the range unmapped.
//
// Deviations from amdkfd:
//
//   - Migration does not move data. A FUSE server cannot take a client's anonymous pages, so a
//     range whose PREFETCH_LOC (or a retry fault, through PREFERRED_LOC/ACCESS) sends it to a
//     GPU keeps its data in client memory and the GPU mapping keeps pointing at the client's
//     pages. The location is recorded (ActualLoc, VRAM pages per range), reported in GET_ATTR
//     exactly as amdkfd reports it (GET_ATTR never reports the actual location), logged as a
//     migration with its size, and drives the same decisions as in amdkfd (which GPUs are
//     mapped, which are unmapped by the migration). A migration is logged only when pages
//     change location; amdkfd also emits SMI migrate events for attempts that move nothing.
//   - NO_ACCESS (and ACCESS_IN_PLACE->NO_ACCESS) unmaps the GPUs that lost access at once.
//     svm_range_set_attr has "TODO: unmap ranges from GPU that lost access" and leaves the
//     stale PTEs until the next eviction.
//   - The 2 ms duplicate-fault filter (AMDGPU_SVM_RANGE_RETRY_FAULT_PENDING), the deferred work
//     list and fault draining are not modelled: faults and munmap are handled synchronously.
//   - An unknown op: svm_ioctl returns the positive value EINVAL, so the real ioctl(2) returns
//     22 with errno unchanged. Ioctl returns EINVAL; ValidOp lets the caller reproduce the
//     quirk (FUSE carries a positive ioctl result).
//   - APU special cases (gmc.is_app_apu) are not modelled; every device is a dGPU.
//   - Munmap unmaps GPUs this package mapped; amdkfd unmaps the GPUs in ACCESS|ACCESS_IN_PLACE
//     (the same PTEs except for a GPU mapped through PREFERRED_LOC=SYSMEM without access).
//   - A VMA lookup and a BO-overlap predicate stand in for vma_lookup and the GPUVM interval
//     tree (the caller implements them from /proc/pid/maps and its BO table); the BO bounds
//     that svm_range_create_unregistered_range uses are approximated by asking whether the
//     faulting page itself is inside a BO.
//
// Concurrency and lock order: a Manager has one mutex (svms->lock). Every method takes it; the
// Config callbacks (FindVMA, OverlapsBO, Mapper, Mem) are called with it held and must not call
// back into the Manager. Lock order: the caller's process lock -> Manager.mu -> whatever locks the
// callbacks take (kfd page tables, BO table).
package svm
