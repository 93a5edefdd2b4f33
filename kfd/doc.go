// Package kfd is the emulated amdkfd driver: processes, the ioctl table, per-device process data,
// the memory manager (buffer objects backed by memfds shared with the client), events and queues.
// It mirrors drivers/gpu/drm/amd/amdkfd (kfd_chardev.c, kfd_process.c, kfd_events.c,
// kfd_flat_memory.c) and the parts of amdgpu_amdkfd_gpuvm.c that decide errno values.
//
// Queues: every queue, whatever its engine (gpu/cp for AQL, gpu/cp/pm4, gpu/sdma; each a gpu/hqd
// Runner), is in its GPU's runlist (gpu/hws, sched.go): compute queues share the HQD slots and are
// time-sliced, an SDMA queue holds the RLC queue it was given at creation. Mapping starts the
// engine; unmapping preempts it, saving an AQL or PM4 dispatch at a work-group boundary (the
// queue's preemptState) for the next mapping. UPDATE_QUEUE, eviction and DESTROY_QUEUE all go
// through the runlist. The engines' packet processors turn their own errors into what the CP
// reports (gpu/cp writes the queue-inactive signal); the driver only raises the process's
// exception events.
//
// Sentinel errors stay inside; ioctl handlers return the errno amdkfd returns. The fs package is the
// only caller (see contract.go).
//
// Ioctls (ioctl.go): which struct goes with which command is said once, in kfd/abi's Ioctls table
// (number, name, command word, argument type, C struct), and OutOfTreeIoctls for the AMD DKMS
// driver's IPC and cross-memory-copy commands the emulator also serves (ipc.go). Handlers are typed,
// func(*Process, Caller, *abi.XxxArgs) syscall.Errno, and ioctlTable registers each with def, which
// checks it against the table (the command word is the table's, the argument type is the table's,
// its encoded size is the command's size) and panics when the package loads on a mismatch. The
// wrapper def builds decodes the struct for _IOW commands, calls the handler, and encodes the struct
// for _IOR ones, also on errors; Process.ioctl keeps kfd_ioctl's buffer rules around it (ENOTTY
// outside the range, EINVAL without a function, a short struct zero-filled to the driver's size,
// only the caller's size copied back). SVM's trailing attribute array reaches its handler as the
// bytes after the struct (defFlex).
//
// Memory: every BO gets a segment of the driver's physical address space (mmu.Phys) at ALLOC;
// MAP and UNMAP write the pdd's GPUVM page tables (mmu.VM, created at ACQUIRE_VM); engines reach
// memory only through an mmu.Port of that VM, whose TLB hits take no lock. UNMAP waits for every
// Port of the VM to leave accesses that may use the old translation, so FREE (which requires the
// BO to be unmapped, as amdgpu does) can release the memory at once.
//
// Render node: each open is a kfd/drm File (GEM handles, contexts, BO lists, command submission)
// over gemBackend (gem.go): GEM objects are memory of the render-node memfd, accounted with kfd's in
// vramUsed/gttUsed, mapped into the process's GPUVM of the GPU, which exists from the node's open
// and which ACQUIRE_VM adopts. Teardown closes the files' GEM state (jobs stopped, objects unmapped
// and freed) before the VMs and memfds go.
//
// Debugger (debug.go): DBG_TRAP works on the target's Process.mu alone, never holding the
// debugger's and the target's together; a debugger's teardown takes its targets' one at a time.
//
// Lock order: the dma-buf table's, the IPC keys' and the SMI clients' mutexes (Driver.dmabuf.mu,
// Driver.ipcMu, Driver.smi.mu) are leaves, taken under Process.mu or the SVM manager's lock and
// holding nothing else (a dma-buf's last Put frees its memory after dropping its mutex). A render
// file's drm locks (File.vaMu, never File.mu) before Process.mu; two processes' Process.mu
// (CROSS_MEMORY_COPY, ipc.go, which copies user-pointer BOs with process_vm_readv/writev under
// them, as DKMS's get_user_pages_remote runs under both mms) the lower tgid first;
// Process.mu before Driver.mu (Driver.mu guards device-wide accounting, the process
// table and the fault filters, and is never held while taking a Process.mu) before space.mu;
// Process.mu before the mmu locks (package mmu documents its own order; engines hold no kfd lock
// while they access memory). An event's own mutex (event.mu, amdkfd's ev->lock) is a leaf, taken
// under Process.mu or alone (the completion-signal and s_sendmsg interrupts, events.go). Event waits drop
// Process.mu before blocking. No lock is held while reading or writing client memory through a
// Caller. Queue engines run on their own goroutines and take Process.mu to deliver most events (an
// event interrupt only to wake a sleeping waiter), so an engine is always stopped without
// Process.mu held (DESTROY_QUEUE, teardown).
package kfd
