// Package kfd is the emulated amdkfd driver: processes, the ioctl table, per-device process data,
// the memory manager (buffer objects backed by memfds shared with the client), events and queues.
// It mirrors drivers/gpu/drm/amd/amdkfd (kfd_chardev.c, kfd_process.c, kfd_events.c,
// kfd_flat_memory.c) and the parts of amdgpu_amdkfd_gpuvm.c that decide errno values.
//
// Sentinel errors stay inside; ioctl handlers return the errno amdkfd returns. The fs package is the
// only caller (see contract.go).
//
// Lock order: Process.mu before Driver.mu (Driver.mu guards device-wide accounting and the
// process table and is never held while taking a Process.mu) before space.mu; Process.mu before
// Process.vmMu (engines take vmMu alone, for reading, around each GPU access) before
// Process.userMu, a leaf. Event waits drop Process.mu before blocking. No lock is held while reading or writing
// client memory through a Caller. Queue engines run on their own goroutines and take
// Process.mu to deliver events and to reach memory, so an engine is always stopped without
// Process.mu held (DESTROY_QUEUE, teardown).
package kfd
