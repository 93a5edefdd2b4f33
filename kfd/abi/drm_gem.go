package abi

// The GEM, context, BO-list and command-submission part of <drm/amdgpu_drm.h>: the structs a render
// node reads from client memory behind the ioctl arguments (CS chunks, BO-list entries), the "out"
// variants of the argument unions, and their constants. Constants newer than libdrm 2.4.114's header
// are marked (Linux 6.10); drm_c_test.go checks the others.

// struct drm_amdgpu_gem_create_out (the out member of union drm_amdgpu_gem_create).
type DRMAmdgpuGemCreateOut struct {
	Handle uint32 `c:"handle"`
	Pad    uint32 `c:"_pad"`
}

// struct drm_amdgpu_gem_create_in: what AMDGPU_GEM_OP_GET_GEM_CREATE_INFO writes to its value
// pointer (the same layout as DRMAmdgpuGemCreate, the union's in member).
type DRMAmdgpuGemCreateIn struct {
	BOSize      uint64 `c:"bo_size"`
	Alignment   uint64 `c:"alignment"`
	Domains     uint64 `c:"domains"`
	DomainFlags uint64 `c:"domain_flags"`
}

// struct drm_amdgpu_gem_mmap_out.
type DRMAmdgpuGemMmapOut struct {
	AddrPtr uint64 `c:"addr_ptr"`
}

// The alloc and state members of union drm_amdgpu_ctx_out (pstate has alloc's layout).
type DRMAmdgpuCtxOutAlloc struct {
	CtxID uint32 `c:"ctx_id"`
	Pad   uint32 `c:"_pad"`
}

type DRMAmdgpuCtxOutState struct {
	Flags       uint64 `c:"flags"`
	Hangs       uint32 `c:"hangs"`
	ResetStatus uint32 `c:"reset_status"`
}

// struct drm_amdgpu_bo_list_entry.
type DRMAmdgpuBOListEntry struct {
	BOHandle   uint32 `c:"bo_handle"`
	BOPriority uint32 `c:"bo_priority"`
}

// struct drm_amdgpu_bo_list_out.
type DRMAmdgpuBOListOut struct {
	ListHandle uint32 `c:"list_handle"`
	Pad        uint32 `c:"_pad"`
}

// struct drm_amdgpu_bo_list_in: the data of an AMDGPU_CHUNK_ID_BO_HANDLES chunk.
type DRMAmdgpuBOListIn struct {
	Operation  uint32 `c:"operation"`
	ListHandle uint32 `c:"list_handle"`
	BONumber   uint32 `c:"bo_number"`
	BOInfoSize uint32 `c:"bo_info_size"`
	BOInfoPtr  uint64 `c:"bo_info_ptr"`
}

// struct drm_amdgpu_cs_chunk: what each pointer of drm_amdgpu_cs_in.chunks points to.
type DRMAmdgpuCSChunk struct {
	ChunkID   uint32 `c:"chunk_id"`
	LengthDW  uint32 `c:"length_dw"`
	ChunkData uint64 `c:"chunk_data"`
}

// struct drm_amdgpu_cs_chunk_ib.
type DRMAmdgpuCSChunkIB struct {
	Pad        uint32 `c:"_pad"`
	Flags      uint32 `c:"flags"`
	VAStart    uint64 `c:"va_start"`
	IBBytes    uint32 `c:"ib_bytes"`
	IPType     uint32 `c:"ip_type"`
	IPInstance uint32 `c:"ip_instance"`
	Ring       uint32 `c:"ring"`
}

// struct drm_amdgpu_cs_chunk_dep.
type DRMAmdgpuCSChunkDep struct {
	IPType     uint32 `c:"ip_type"`
	IPInstance uint32 `c:"ip_instance"`
	Ring       uint32 `c:"ring"`
	CtxID      uint32 `c:"ctx_id"`
	Handle     uint64 `c:"handle"`
}

// struct drm_amdgpu_cs_chunk_fence.
type DRMAmdgpuCSChunkFence struct {
	Handle uint32 `c:"handle"`
	Offset uint32 `c:"offset"`
}

// struct drm_amdgpu_cs_chunk_sem.
type DRMAmdgpuCSChunkSem struct {
	Handle uint32 `c:"handle"`
}

// struct drm_amdgpu_cs_chunk_syncobj.
type DRMAmdgpuCSChunkSyncobj struct {
	Handle uint32 `c:"handle"`
	Flags  uint32 `c:"flags"`
	Point  uint64 `c:"point"`
}

// struct drm_amdgpu_cs_out, drm_amdgpu_wait_cs_out, drm_amdgpu_wait_fences_out and
// drm_amdgpu_gem_wait_idle_out.
type DRMAmdgpuCSOut struct {
	Handle uint64 `c:"handle"`
}

type DRMAmdgpuWaitCSOut struct {
	Status uint64 `c:"status"`
}

type DRMAmdgpuWaitFencesOut struct {
	Status        uint32 `c:"status"`
	FirstSignaled uint32 `c:"first_signaled"`
}

type DRMAmdgpuGemWaitIdleOut struct {
	Status uint32 `c:"status"`
	Domain uint32 `c:"domain"`
}

// Sizes of the structs above (C sizeof).
const (
	SizeofDRMAmdgpuGemCreateOut   = 8
	SizeofDRMAmdgpuGemCreateIn    = 32
	SizeofDRMAmdgpuGemMmapOut     = 8
	SizeofDRMAmdgpuCtxOutAlloc    = 8
	SizeofDRMAmdgpuCtxOutState    = 16
	SizeofDRMAmdgpuBOListEntry    = 8
	SizeofDRMAmdgpuBOListOut      = 8
	SizeofDRMAmdgpuBOListIn       = 24
	SizeofDRMAmdgpuCSChunk        = 16
	SizeofDRMAmdgpuCSChunkIB      = 32
	SizeofDRMAmdgpuCSChunkDep     = 24
	SizeofDRMAmdgpuCSChunkFence   = 8
	SizeofDRMAmdgpuCSChunkSem     = 4
	SizeofDRMAmdgpuCSChunkSyncobj = 16
	SizeofDRMAmdgpuCSOut          = 8
	SizeofDRMAmdgpuWaitCSOut      = 8
	SizeofDRMAmdgpuWaitFencesOut  = 8
	SizeofDRMAmdgpuGemWaitIdleOut = 8
	SizeofDRMAmdgpuCSChunkShadow  = 32 // struct drm_amdgpu_cs_chunk_cp_gfx_shadow (Linux 6.5)
)

// GEM domains and creation flags, context, BO-list, VA, metadata and GEM_OP operations, CS chunk ids
// and IB flags (amdgpu_drm.h).
const (
	AMDGPU_GEM_DOMAIN_GDS      = 0x8
	AMDGPU_GEM_DOMAIN_GWS      = 0x10
	AMDGPU_GEM_DOMAIN_OA       = 0x20
	AMDGPU_GEM_DOMAIN_DOORBELL = 0x40 // Linux 6.6, newer than libdrm 2.4.114's header
	AMDGPU_GEM_DOMAIN_MASK     = 0x3f // libdrm 2.4.114's; Linux 6.10 adds DOORBELL (AMDGPUGemDomainMask610)
	AMDGPUGemDomainMask610     = AMDGPU_GEM_DOMAIN_MASK | AMDGPU_GEM_DOMAIN_DOORBELL

	AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED  = 1 << 0
	AMDGPU_GEM_CREATE_NO_CPU_ACCESS        = 1 << 1
	AMDGPU_GEM_CREATE_CPU_GTT_USWC         = 1 << 2
	AMDGPU_GEM_CREATE_VRAM_CLEARED         = 1 << 3
	AMDGPU_GEM_CREATE_VRAM_CONTIGUOUS      = 1 << 5
	AMDGPU_GEM_CREATE_VM_ALWAYS_VALID      = 1 << 6
	AMDGPU_GEM_CREATE_EXPLICIT_SYNC        = 1 << 7
	AMDGPU_GEM_CREATE_CP_MQD_GFX9          = 1 << 8
	AMDGPU_GEM_CREATE_VRAM_WIPE_ON_RELEASE = 1 << 9
	AMDGPU_GEM_CREATE_ENCRYPTED            = 1 << 10
	AMDGPU_GEM_CREATE_PREEMPTIBLE          = 1 << 11
	AMDGPU_GEM_CREATE_DISCARDABLE          = 1 << 12 // Linux 6.1, newer than libdrm 2.4.114's header

	AMDGPU_BO_LIST_OP_CREATE  = 0
	AMDGPU_BO_LIST_OP_DESTROY = 1
	AMDGPU_BO_LIST_OP_UPDATE  = 2

	AMDGPU_CTX_OP_ALLOC_CTX         = 1
	AMDGPU_CTX_OP_FREE_CTX          = 2
	AMDGPU_CTX_OP_QUERY_STATE       = 3
	AMDGPU_CTX_OP_QUERY_STATE2      = 4
	AMDGPU_CTX_OP_GET_STABLE_PSTATE = 5
	AMDGPU_CTX_OP_SET_STABLE_PSTATE = 6

	AMDGPU_CTX_NO_RESET       = 0
	AMDGPU_CTX_GUILTY_RESET   = 1
	AMDGPU_CTX_INNOCENT_RESET = 2
	AMDGPU_CTX_UNKNOWN_RESET  = 3

	AMDGPU_CTX_QUERY2_FLAGS_RESET    = 1 << 0
	AMDGPU_CTX_QUERY2_FLAGS_VRAMLOST = 1 << 1
	AMDGPU_CTX_QUERY2_FLAGS_GUILTY   = 1 << 2
	AMDGPU_CTX_QUERY2_FLAGS_RAS_CE   = 1 << 3
	AMDGPU_CTX_QUERY2_FLAGS_RAS_UE   = 1 << 4

	AMDGPU_CTX_PRIORITY_UNSET     = -2048
	AMDGPU_CTX_PRIORITY_VERY_LOW  = -1023
	AMDGPU_CTX_PRIORITY_LOW       = -512
	AMDGPU_CTX_PRIORITY_NORMAL    = 0
	AMDGPU_CTX_PRIORITY_HIGH      = 512
	AMDGPU_CTX_PRIORITY_VERY_HIGH = 1023

	AMDGPU_CTX_STABLE_PSTATE_FLAGS_MASK = 0xf
	AMDGPU_CTX_STABLE_PSTATE_NONE       = 0
	AMDGPU_CTX_STABLE_PSTATE_PEAK       = 4

	AMDGPU_VM_OP_RESERVE_VMID   = 1
	AMDGPU_VM_OP_UNRESERVE_VMID = 2

	AMDGPU_GEM_METADATA_OP_SET_METADATA = 1
	AMDGPU_GEM_METADATA_OP_GET_METADATA = 2

	AMDGPU_GEM_OP_GET_GEM_CREATE_INFO = 0
	AMDGPU_GEM_OP_SET_PLACEMENT       = 1

	AMDGPU_VM_DELAY_UPDATE    = 1 << 0
	AMDGPU_VM_PAGE_READABLE   = 1 << 1
	AMDGPU_VM_PAGE_WRITEABLE  = 1 << 2
	AMDGPU_VM_PAGE_EXECUTABLE = 1 << 3
	AMDGPU_VM_PAGE_PRT        = 1 << 4
	AMDGPU_VM_MTYPE_MASK      = 0xf << 5
	AMDGPU_VM_PAGE_NOALLOC    = 1 << 9 // Linux 6.3, newer than libdrm 2.4.114's header

	AMDGPU_CHUNK_ID_IB                      = 0x01
	AMDGPU_CHUNK_ID_FENCE                   = 0x02
	AMDGPU_CHUNK_ID_DEPENDENCIES            = 0x03
	AMDGPU_CHUNK_ID_SYNCOBJ_IN              = 0x04
	AMDGPU_CHUNK_ID_SYNCOBJ_OUT             = 0x05
	AMDGPU_CHUNK_ID_BO_HANDLES              = 0x06
	AMDGPU_CHUNK_ID_SCHEDULED_DEPENDENCIES  = 0x07
	AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_WAIT   = 0x08
	AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_SIGNAL = 0x09
	AMDGPU_CHUNK_ID_CP_GFX_SHADOW           = 0x0a // Linux 6.5, newer than libdrm 2.4.114's header

	AMDGPU_IB_FLAG_CE       = 1 << 0
	AMDGPU_IB_FLAG_PREAMBLE = 1 << 1
	AMDGPU_IB_FLAG_PREEMPT  = 1 << 2

	AMDGPU_FENCE_TO_HANDLE_GET_SYNCOBJ      = 0
	AMDGPU_FENCE_TO_HANDLE_GET_SYNCOBJ_FD   = 1
	AMDGPU_FENCE_TO_HANDLE_GET_SYNC_FILE_FD = 2
)

// SizeofDRMAmdgpuFence is sizeof(struct drm_amdgpu_fence).
const SizeofDRMAmdgpuFence = 24
