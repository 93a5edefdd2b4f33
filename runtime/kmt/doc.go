// Package kmt is the thunk: a Go client of the amdkfd interface that talks to the device only
// through files, ioctls and mmaps, the way ROCm's libhsakmt (ROCT-Thunk-Interface src/openclose.c,
// topology.c, fmm.c, queues.c, events.c, memory.c) does, so the same code runs against a kfdemu
// mount and a real /dev/kfd.
//
// Model:
//   - Open opens ROOT/dev/kfd, checks GET_VERSION (major 1), takes a topology snapshot of
//     ROOT/sys/devices/virtual/kfd/kfd/topology with the generation_id retry of topology.c, opens
//     each GPU's ROOT/dev/dri/renderD<minor>, reads GET_PROCESS_APERTURES_NEW and acquires each
//     GPU's VM with ACQUIRE_VM(render fd).
//   - GPU virtual addresses come from one range of process address space reserved with
//     mmap(PROT_NONE, MAP_NORESERVE) (fmm.c's SVM aperture on dGPUs): a BO's GPU address is the
//     address of its CPU mapping. VRAM (with HostAccess) and GTT BOs are mmapped MAP_FIXED over
//     their range from the render node at the mmap_offset ALLOC_MEMORY_OF_GPU returned; userptr
//     BOs are anonymous memory mapped there and registered with USERPTR; the doorbell page is a
//     DOORBELL BO mapped from /dev/kfd. Freed ranges go back to PROT_NONE.
//   - Queues get their EOP buffer (VRAM) and context save area (system memory, with its
//     HsaUserContextSaveAreaHeader) sized from the node properties as queues.c computes them.
//   - The first signal event allocates the 4096-slot event page in GTT, maps it to every GPU and
//     hands its handle to CREATE_EVENT (events.c, dGPU path); an event's mailbox is its slot.
//
// Errors from the driver are *IoctlError, which names the ioctl and unwraps to the errno
// (errors.Is(err, syscall.EINVAL)); other failures are the package's sentinel errors. ioctls are
// retried on EINTR/EAGAIN as kmtIoctl does; MAP/UNMAP restart from n_success.
//
// Lock order: Device.evMu before Device.mu before Memory.mu. Device.mu is never held across an
// ioctl that can block (WAIT_EVENTS). The doorbell, ring and index words are plain shared memory
// accessed with sync/atomic; nothing on a submission path takes a lock.
package kmt
