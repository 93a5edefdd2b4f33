// Package mmu models the GPUVM of a GFX9 GPU as amdgpu programs it for amdkfd: the physical address
// space PTEs point into, one multi-level page table per (process, GPU), the per-engine TLBs that
// translate through it, TLB invalidation, GPU page faults and the retry-fault filter.
//
// It mirrors drivers/gpu/drm/amd/amdgpu: amdgpu_vm.h (PTE/PDE bits, levels), amdgpu_vm.c and
// amdgpu_vm_pt.c (amdgpu_vm_ptes_update, amdgpu_vm_pte_fragment, table allocation and freeing),
// gmc_v9_0.c (MTYPEs, 48-bit VM with 4 levels of 512 entries, fault decoding) and amdgpu_gmc.c
// (amdgpu_gmc_filter_faults). Package kfd creates one VM at ACQUIRE_VM, maps at
// MAP_MEMORY_TO_GPU, unmaps at UNMAP_MEMORY_FROM_GPU and gives every engine a Port.
//
// # Physical memory
//
// Phys is a 48-bit physical address space with a window per GPU's VRAM, one for system pages and
// one for page-table addresses (see the constants in phys.go). Each allocated segment has a host
// Backing: the daemon's mapping of the BO (Mem) or, for memory the daemon cannot map (a client's
// userptr pages), a Remote reached by copying. Segments are looked up only on TLB misses.
//
// # Page tables
//
// A VM has PDB2 -> PDB1 -> PDB0 -> PTB, each 512 entries of 8 bytes, 4 KiB pages. Map follows the
// fragment walk of amdgpu_vm_ptes_update: the fragment of a page is the largest aligned
// power-of-two block of pages starting there that the range covers (amdgpu_vm_pte_fragment; here
// also bounded by the physical page's alignment, and 0 for system pages, which the kernel maps
// through pages_addr). A fragment of at least 2 MiB is written as PDB0 leaves with AMDGPU_PDE_PTE
// and AMDGPU_PTE_FRAG; smaller fragments as PTEs with AMDGPU_PTE_FRAG. 1 GiB PDB1 leaves are not
// used (fragments stop at 2^17 pages). Tables are allocated on demand and freed when they become
// empty, the root included, so the accounted table bytes return to 0 when nothing is mapped.
// Unmap or Update covering part of a 2 MiB leaf splits it into a PTB; the PTBs at the edges of such
// a range get their fragment fields recomputed over runs of contiguous, alike pages, so that no
// fragment spans pages that differ (the kernel gets the same by re-mapping split ranges).
// Deviations: no ATS/PRT defaults in cleared entries, no GFX9 "executable in invalid PTE"
// workaround, no translate-further mode, VA restricted to [0, 2^48) without the sign-extended hole.
//
// # Ports, TLBs and quiescence
//
// A Port is one engine's UTCL1: a fully associative TLB of 16 lines, each the 4 KiB translations
// of one aligned line of 8 PTEs (a walk loads the valid entries of the walked PTE's 64-byte line,
// as the UTCL2 walker reads PTEs a cache line at a time; 2 MiB leaves per 4 KiB page), each
// holding the page's host slice (or remote address) and the leaf's flags. (It was direct-mapped by
// the low VPN bits: arrays a multiple of 256 KiB apart evicted each other on every access.) Every
// access runs in an access
// section: the Port stores the VM generation it entered at in its own cache line, re-checks the
// generation, and stores 0 when it leaves. TLB entries carry the generation they were filled at
// and are used only in a section of the same generation. Unmap, Update (when they change anything)
// and Close modify the tables, increment the generation and then wait until each Port is outside
// any section or in one of the new generation (amdgpu_vm_flush_compute_tlb plus the fence wait). So
// once Unmap returns no engine touches the unmapped memory and the daemon may munmap it. Map, and
// Remap over pages nothing mapped, invalidate nothing: a TLB never holds a translation a walk did
// not find (a GPU retry fault maps this way without stalling the VM's other Ports).
//
// # Vectored access
//
// ReadV and WriteV move several pieces, each within a page, as Read and Write would one after the
// other: every page is translated first (retry faults serviced in order; a fatal one ends the
// batch), then one access section moves the pieces, and consecutive pieces on one RemoteV backing
// go in one call (process_vm_readv/writev with an iovec per piece, package kfd). A wave whose lanes
// store to 64 pages of client memory costs one syscall instead of 64. With Config.FaultBatch set,
// the retry faults those translations find go to it in one call before any is retried (what it
// refuses ends the access at that piece): a wave whose lanes fault on 64 pages costs one handler
// call (one lock of the SVM manager) instead of 64; a page another Port is servicing, or that the
// Filter drops, is left to the per-page path.
//
// # Faults
//
// A miss or a missing permission is a fault (read needs READABLE, write WRITEABLE, atomic both,
// exec EXECUTABLE). With Config.Fault set (XNACK on) translation faults are retry faults: the
// Port leaves its access section and, with no mmu lock held, the VM runs the handler, which may
// Map, Unmap or Update; retry=true walks again, at most MaxRetries times per page, then the fault
// is fatal. Concurrent faults on one page of a VM call the handler once: the others wait for that
// resolution and walk again. The Filter (amdgpu_gmc_filter_faults) drops a fault on a (PASID,
// page) already seen within its window; the dropped access is replayed after the window, as the
// UTCL2 replays a retry fault. A fatal fault returns *FaultError (errors.Is(err, ErrFault)).
// Every fault and its outcome goes to a 256-entry log (Faults) for debugfs.
//
// # Concurrency and lock order
//
// VM.mu (RWMutex) guards the tables and their counters: Map/Unmap/Update/Close write-lock it, a
// TLB miss read-locks it for the walk. It is never held while waiting for Ports, calling the fault
// handler or touching memory. Lock order: VM.mu, then Phys.mu is never needed (page-table bytes
// are atomics; Phys lookups read an atomic snapshot). VM.faultMu, then Filter.mu. VM.portsMu,
// VM.logMu and Phys.remoteMu are leaves. A TLB hit takes no lock and does not allocate. Atomics on
// Mem backings use sync/atomic (atomic_unsafe.go); Store and Atomic on Remote backings are
// serialized by Phys.remoteMu, which makes them atomic against each other across all VMs but not
// against the client's CPU.
package mmu
