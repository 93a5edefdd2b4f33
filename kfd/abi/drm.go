package abi

import "reflect"

// The subset of <drm/drm.h> and <drm/amdgpu_drm.h> (libdrm-dev 2.4.114, /usr/include/libdrm) that
// libdrm_amdgpu uses on a render node: the DRM core ioctls amdgpu_device_initialize and drmGetVersion
// issue, the GEM/PRIME/SYNCOBJ basics, and every amdgpu driver ioctl with its argument struct (unions
// are given as their "in" member padded to the union's size). Sizes are spelled as constants so that
// no unsafe is needed; drm_c_test.go checks every size, field offset, command word and constant
// against the real headers.

// DRM_IOCTL_BASE, DRM_COMMAND_BASE and DRM_COMMAND_END (drm.h).
const (
	DRMIOCTLBase   = 'd'
	DRMCommandBase = 0x40
	DRMCommandEnd  = 0xA0
)

// struct drm_version.
type DRMVersion struct {
	VersionMajor      int32  `c:"version_major"`
	VersionMinor      int32  `c:"version_minor"`
	VersionPatchlevel int32  `c:"version_patchlevel"`
	Pad               int32  `c:""` // implicit C padding before name_len
	NameLen           uint64 `c:"name_len"`
	Name              uint64 `c:"name"`
	DateLen           uint64 `c:"date_len"`
	Date              uint64 `c:"date"`
	DescLen           uint64 `c:"desc_len"`
	Desc              uint64 `c:"desc"`
}

// struct drm_client.
type DRMClient struct {
	Idx   int32  `c:"idx"`
	Auth  int32  `c:"auth"`
	Pid   uint64 `c:"pid"`
	UID   uint64 `c:"uid"`
	Magic uint64 `c:"magic"`
	Iocs  uint64 `c:"iocs"`
}

// struct drm_get_cap.
type DRMGetCap struct {
	Capability uint64 `c:"capability"`
	Value      uint64 `c:"value"`
}

// struct drm_set_client_cap.
type DRMSetClientCap struct {
	Capability uint64 `c:"capability"`
	Value      uint64 `c:"value"`
}

// struct drm_gem_close.
type DRMGemClose struct {
	Handle uint32 `c:"handle"`
	Pad    uint32 `c:"pad"`
}

// struct drm_prime_handle.
type DRMPrimeHandle struct {
	Handle uint32 `c:"handle"`
	Flags  uint32 `c:"flags"`
	FD     int32  `c:"fd"`
}

// struct drm_syncobj_create.
type DRMSyncobjCreate struct {
	Handle uint32 `c:"handle"`
	Flags  uint32 `c:"flags"`
}

// struct drm_syncobj_destroy.
type DRMSyncobjDestroy struct {
	Handle uint32 `c:"handle"`
	Pad    uint32 `c:"pad"`
}

// DRMAmdgpuInfo is struct drm_amdgpu_info: the return buffer, the query id and a 16-byte union of
// per-query inputs (mode_crtc, query_hw_ip, read_mmr_reg, query_fw, vbios_info, sensor_info,
// video_cap). The union members all start at offset 16; DRMAmdgpuInfoUnion* name their words.
type DRMAmdgpuInfo struct {
	ReturnPointer uint64   `c:"return_pointer"`
	ReturnSize    uint32   `c:"return_size"`
	Query         uint32   `c:"query"`
	Union         [16]byte `c:"query_hw_ip.type"`
}

// Word offsets inside DRMAmdgpuInfo.Union for each union member.
const (
	InfoUnionHWIPType       = 0  // query_hw_ip.type
	InfoUnionHWIPInstance   = 4  // query_hw_ip.ip_instance
	InfoUnionMMRDwordOffset = 0  // read_mmr_reg.dword_offset
	InfoUnionMMRCount       = 4  // read_mmr_reg.count
	InfoUnionMMRInstance    = 8  // read_mmr_reg.instance
	InfoUnionMMRFlags       = 12 // read_mmr_reg.flags
	InfoUnionFWType         = 0  // query_fw.fw_type
	InfoUnionFWIPInstance   = 4  // query_fw.ip_instance
	InfoUnionFWIndex        = 8  // query_fw.index
	InfoUnionVBIOSType      = 0  // vbios_info.type
	InfoUnionVBIOSOffset    = 4  // vbios_info.offset
	InfoUnionSensorType     = 0  // sensor_info.type
	InfoUnionVideoCapType   = 0  // video_cap.type
	InfoUnionCRTCID         = 0  // mode_crtc.id
)

// struct drm_amdgpu_query_fw.
type DRMAmdgpuQueryFW struct {
	FWType     uint32 `c:"fw_type"`
	IPInstance uint32 `c:"ip_instance"`
	Index      uint32 `c:"index"`
	Pad        uint32 `c:"_pad"`
}

// DRMAmdgpuInfoDevice is struct drm_amdgpu_info_device as libdrm 2.4.114 knows it (368 bytes).
// Newer kernels append fields (min clocks, cache sizes, ...); the kernel copies min(return_size,
// sizeof) so a 2.4.114 client sees exactly this.
type DRMAmdgpuInfoDevice struct {
	DeviceID                 uint32       `c:"device_id"`
	ChipRev                  uint32       `c:"chip_rev"`
	ExternalRev              uint32       `c:"external_rev"`
	PCIRev                   uint32       `c:"pci_rev"`
	Family                   uint32       `c:"family"`
	NumShaderEngines         uint32       `c:"num_shader_engines"`
	NumShaderArraysPerEngine uint32       `c:"num_shader_arrays_per_engine"`
	GPUCounterFreq           uint32       `c:"gpu_counter_freq"`
	MaxEngineClock           uint64       `c:"max_engine_clock"`
	MaxMemoryClock           uint64       `c:"max_memory_clock"`
	CUActiveNumber           uint32       `c:"cu_active_number"`
	CUAOMask                 uint32       `c:"cu_ao_mask"`
	CUBitmap                 [4][4]uint32 `c:"cu_bitmap"`
	EnabledRBPipesMask       uint32       `c:"enabled_rb_pipes_mask"`
	NumRBPipes               uint32       `c:"num_rb_pipes"`
	NumHWGfxContexts         uint32       `c:"num_hw_gfx_contexts"`
	Pad                      uint32       `c:"_pad"`
	IDsFlags                 uint64       `c:"ids_flags"`
	VirtualAddressOffset     uint64       `c:"virtual_address_offset"`
	VirtualAddressMax        uint64       `c:"virtual_address_max"`
	VirtualAddressAlignment  uint32       `c:"virtual_address_alignment"`
	PTEFragmentSize          uint32       `c:"pte_fragment_size"`
	GartPageSize             uint32       `c:"gart_page_size"`
	CERAMSize                uint32       `c:"ce_ram_size"`
	VRAMType                 uint32       `c:"vram_type"`
	VRAMBitWidth             uint32       `c:"vram_bit_width"`
	VCEHarvestConfig         uint32       `c:"vce_harvest_config"`
	GCDoubleOffchipLDSBuf    uint32       `c:"gc_double_offchip_lds_buf"`
	PrimBufGPUAddr           uint64       `c:"prim_buf_gpu_addr"`
	PosBufGPUAddr            uint64       `c:"pos_buf_gpu_addr"`
	CntlSbBufGPUAddr         uint64       `c:"cntl_sb_buf_gpu_addr"`
	ParamBufGPUAddr          uint64       `c:"param_buf_gpu_addr"`
	PrimBufSize              uint32       `c:"prim_buf_size"`
	PosBufSize               uint32       `c:"pos_buf_size"`
	CntlSbBufSize            uint32       `c:"cntl_sb_buf_size"`
	ParamBufSize             uint32       `c:"param_buf_size"`
	WaveFrontSize            uint32       `c:"wave_front_size"`
	NumShaderVisibleVGPRs    uint32       `c:"num_shader_visible_vgprs"`
	NumCUPerSH               uint32       `c:"num_cu_per_sh"`
	NumTCCBlocks             uint32       `c:"num_tcc_blocks"`
	GSVGTTableDepth          uint32       `c:"gs_vgt_table_depth"`
	GSPrimBufferDepth        uint32       `c:"gs_prim_buffer_depth"`
	MaxGSWavesPerVGT         uint32       `c:"max_gs_waves_per_vgt"`
	Pad1                     uint32       `c:"_pad1"`
	CUAOBitmap               [4][4]uint32 `c:"cu_ao_bitmap"`
	HighVAOffset             uint64       `c:"high_va_offset"`
	HighVAMax                uint64       `c:"high_va_max"`
	PASCTileSteeringOverride uint32       `c:"pa_sc_tile_steering_override"`
	Pad2                     uint32       `c:""` // implicit C padding before tcc_disabled_mask
	TCCDisabledMask          uint64       `c:"tcc_disabled_mask"`
}

// struct drm_amdgpu_info_vram_gtt.
type DRMAmdgpuInfoVRAMGTT struct {
	VRAMSize              uint64 `c:"vram_size"`
	VRAMCPUAccessibleSize uint64 `c:"vram_cpu_accessible_size"`
	GTTSize               uint64 `c:"gtt_size"`
}

// struct drm_amdgpu_heap_info.
type DRMAmdgpuHeapInfo struct {
	TotalHeapSize  uint64 `c:"total_heap_size"`
	UsableHeapSize uint64 `c:"usable_heap_size"`
	HeapUsage      uint64 `c:"heap_usage"`
	MaxAllocation  uint64 `c:"max_allocation"`
}

// struct drm_amdgpu_memory_info.
type DRMAmdgpuMemoryInfo struct {
	VRAM              DRMAmdgpuHeapInfo `c:"vram"`
	CPUAccessibleVRAM DRMAmdgpuHeapInfo `c:"cpu_accessible_vram"`
	GTT               DRMAmdgpuHeapInfo `c:"gtt"`
}

// struct drm_amdgpu_info_firmware.
type DRMAmdgpuInfoFirmware struct {
	Ver     uint32 `c:"ver"`
	Feature uint32 `c:"feature"`
}

// struct drm_amdgpu_info_hw_ip. The last word is _pad in libdrm 2.4.114's header; kernels since
// KMS 3.48 fill it as ip_discovery_version.
type DRMAmdgpuInfoHWIP struct {
	HWIPVersionMajor   uint32 `c:"hw_ip_version_major"`
	HWIPVersionMinor   uint32 `c:"hw_ip_version_minor"`
	CapabilitiesFlags  uint64 `c:"capabilities_flags"`
	IBStartAlignment   uint32 `c:"ib_start_alignment"`
	IBSizeAlignment    uint32 `c:"ib_size_alignment"`
	AvailableRings     uint32 `c:"available_rings"`
	IPDiscoveryVersion uint32 `c:"_pad"`
}

// struct drm_amdgpu_info_num_handles.
type DRMAmdgpuInfoNumHandles struct {
	UVDMaxHandles  uint32 `c:"uvd_max_handles"`
	UVDUsedHandles uint32 `c:"uvd_used_handles"`
}

// struct drm_amdgpu_info_gds.
type DRMAmdgpuInfoGDS struct {
	GDSGfxPartitionSize    uint32 `c:"gds_gfx_partition_size"`
	ComputePartitionSize   uint32 `c:"compute_partition_size"`
	GDSTotalSize           uint32 `c:"gds_total_size"`
	GWSPerGfxPartition     uint32 `c:"gws_per_gfx_partition"`
	GWSPerComputePartition uint32 `c:"gws_per_compute_partition"`
	OAPerGfxPartition      uint32 `c:"oa_per_gfx_partition"`
	OAPerComputePartition  uint32 `c:"oa_per_compute_partition"`
	Pad                    uint32 `c:"_pad"`
}

// struct drm_amdgpu_info_vce_clock_table_entry and drm_amdgpu_info_vce_clock_table.
type DRMAmdgpuInfoVCEClockTableEntry struct {
	Sclk uint32 `c:"sclk"`
	Mclk uint32 `c:"mclk"`
	Eclk uint32 `c:"eclk"`
	Pad  uint32 `c:"pad"`
}

type DRMAmdgpuInfoVCEClockTable struct {
	Entries         [AMDGPU_VCE_CLOCK_TABLE_ENTRIES]DRMAmdgpuInfoVCEClockTableEntry `c:"entries"`
	NumValidEntries uint32                                                          `c:"num_valid_entries"`
	Pad             uint32                                                          `c:"pad"`
}

// struct drm_amdgpu_info_vbios.
type DRMAmdgpuInfoVBIOS struct {
	Name        [64]byte `c:"name"`
	VBIOSPN     [64]byte `c:"vbios_pn"`
	Version     uint32   `c:"version"`
	Pad         uint32   `c:"pad"`
	VBIOSVerStr [32]byte `c:"vbios_ver_str"`
	Date        [32]byte `c:"date"`
}

// struct drm_amdgpu_info_video_codec_info and drm_amdgpu_info_video_caps.
type DRMAmdgpuInfoVideoCodecInfo struct {
	Valid             uint32 `c:"valid"`
	MaxWidth          uint32 `c:"max_width"`
	MaxHeight         uint32 `c:"max_height"`
	MaxPixelsPerFrame uint32 `c:"max_pixels_per_frame"`
	MaxLevel          uint32 `c:"max_level"`
	Pad               uint32 `c:"pad"`
}

type DRMAmdgpuInfoVideoCaps struct {
	CodecInfo [AMDGPU_INFO_VIDEO_CAPS_CODEC_IDX_COUNT]DRMAmdgpuInfoVideoCodecInfo `c:"codec_info"`
}

// union drm_amdgpu_gem_create (in: struct drm_amdgpu_gem_create_in; out: handle).
type DRMAmdgpuGemCreate struct {
	BOSize      uint64 `c:"in.bo_size"`
	Alignment   uint64 `c:"in.alignment"`
	Domains     uint64 `c:"in.domains"`
	DomainFlags uint64 `c:"in.domain_flags"`
}

// union drm_amdgpu_gem_mmap (in: handle, _pad; out: addr_ptr).
type DRMAmdgpuGemMmap struct {
	Handle uint32 `c:"in.handle"`
	Pad    uint32 `c:"in._pad"`
}

// union drm_amdgpu_ctx (in: struct drm_amdgpu_ctx_in).
type DRMAmdgpuCtx struct {
	Op       uint32 `c:"in.op"`
	Flags    uint32 `c:"in.flags"`
	CtxID    uint32 `c:"in.ctx_id"`
	Priority int32  `c:"in.priority"`
}

// union drm_amdgpu_bo_list (in: struct drm_amdgpu_bo_list_in).
type DRMAmdgpuBOList struct {
	Operation  uint32 `c:"in.operation"`
	ListHandle uint32 `c:"in.list_handle"`
	BONumber   uint32 `c:"in.bo_number"`
	BOInfoSize uint32 `c:"in.bo_info_size"`
	BOInfoPtr  uint64 `c:"in.bo_info_ptr"`
}

// union drm_amdgpu_cs (in: struct drm_amdgpu_cs_in).
type DRMAmdgpuCS struct {
	CtxID        uint32 `c:"in.ctx_id"`
	BOListHandle uint32 `c:"in.bo_list_handle"`
	NumChunks    uint32 `c:"in.num_chunks"`
	Flags        uint32 `c:"in.flags"`
	Chunks       uint64 `c:"in.chunks"`
}

// struct drm_amdgpu_gem_metadata (284 bytes of fields, 288 with the trailing alignment padding).
type DRMAmdgpuGemMetadata struct {
	Handle        uint32     `c:"handle"`
	Op            uint32     `c:"op"`
	Flags         uint64     `c:"data.flags"`
	TilingInfo    uint64     `c:"data.tiling_info"`
	DataSizeBytes uint32     `c:"data.data_size_bytes"`
	Data          [64]uint32 `c:"data.data"`
	Pad           uint32     `c:""` // trailing padding to 8-byte alignment
}

// union drm_amdgpu_gem_wait_idle (in: struct drm_amdgpu_gem_wait_idle_in).
type DRMAmdgpuGemWaitIdle struct {
	Handle  uint32 `c:"in.handle"`
	Flags   uint32 `c:"in.flags"`
	Timeout uint64 `c:"in.timeout"`
}

// struct drm_amdgpu_gem_va.
type DRMAmdgpuGemVA struct {
	Handle     uint32 `c:"handle"`
	Pad        uint32 `c:"_pad"`
	Operation  uint32 `c:"operation"`
	Flags      uint32 `c:"flags"`
	VAAddress  uint64 `c:"va_address"`
	OffsetInBO uint64 `c:"offset_in_bo"`
	MapSize    uint64 `c:"map_size"`
}

// union drm_amdgpu_wait_cs (in: struct drm_amdgpu_wait_cs_in).
type DRMAmdgpuWaitCS struct {
	Handle     uint64 `c:"in.handle"`
	Timeout    uint64 `c:"in.timeout"`
	IPType     uint32 `c:"in.ip_type"`
	IPInstance uint32 `c:"in.ip_instance"`
	Ring       uint32 `c:"in.ring"`
	CtxID      uint32 `c:"in.ctx_id"`
}

// struct drm_amdgpu_gem_op.
type DRMAmdgpuGemOp struct {
	Handle uint32 `c:"handle"`
	Op     uint32 `c:"op"`
	Value  uint64 `c:"value"`
}

// struct drm_amdgpu_gem_userptr.
type DRMAmdgpuGemUserptr struct {
	Addr   uint64 `c:"addr"`
	Size   uint64 `c:"size"`
	Flags  uint32 `c:"flags"`
	Handle uint32 `c:"handle"`
}

// union drm_amdgpu_wait_fences (in: struct drm_amdgpu_wait_fences_in).
type DRMAmdgpuWaitFences struct {
	Fences     uint64 `c:"in.fences"`
	FenceCount uint32 `c:"in.fence_count"`
	WaitAll    uint32 `c:"in.wait_all"`
	TimeoutNs  uint64 `c:"in.timeout_ns"`
}

// union drm_amdgpu_vm (in: struct drm_amdgpu_vm_in).
type DRMAmdgpuVM struct {
	Op    uint32 `c:"in.op"`
	Flags uint32 `c:"in.flags"`
}

// struct drm_amdgpu_fence.
type DRMAmdgpuFence struct {
	CtxID      uint32 `c:"ctx_id"`
	IPType     uint32 `c:"ip_type"`
	IPInstance uint32 `c:"ip_instance"`
	Ring       uint32 `c:"ring"`
	SeqNo      uint64 `c:"seq_no"`
}

// union drm_amdgpu_fence_to_handle (in: fence, what, pad).
type DRMAmdgpuFenceToHandle struct {
	Fence DRMAmdgpuFence `c:"in.fence"`
	What  uint32         `c:"in.what"`
	Pad   uint32         `c:"in.pad"`
}

// union drm_amdgpu_sched (in: struct drm_amdgpu_sched_in).
type DRMAmdgpuSched struct {
	Op       uint32 `c:"in.op"`
	FD       uint32 `c:"in.fd"`
	Priority int32  `c:"in.priority"`
	CtxID    uint32 `c:"in.ctx_id"`
}

// Sizes of the structs above (C sizeof).
const (
	SizeofDRMVersion                 = 64
	SizeofDRMClient                  = 40
	SizeofDRMGetCap                  = 16
	SizeofDRMSetClientCap            = 16
	SizeofDRMGemClose                = 8
	SizeofDRMPrimeHandle             = 12
	SizeofDRMSyncobjCreate           = 8
	SizeofDRMSyncobjDestroy          = 8
	SizeofDRMAmdgpuInfo              = 32
	SizeofDRMAmdgpuQueryFW           = 16
	SizeofDRMAmdgpuInfoDevice        = 368
	SizeofDRMAmdgpuInfoVRAMGTT       = 24
	SizeofDRMAmdgpuHeapInfo          = 32
	SizeofDRMAmdgpuMemoryInfo        = 96
	SizeofDRMAmdgpuInfoFirmware      = 8
	SizeofDRMAmdgpuInfoHWIP          = 32
	SizeofDRMAmdgpuInfoNumHandles    = 8
	SizeofDRMAmdgpuInfoGDS           = 32
	SizeofDRMAmdgpuInfoVCEClockTable = 104
	SizeofDRMAmdgpuInfoVBIOS         = 200
	SizeofDRMAmdgpuInfoVideoCaps     = 192
	SizeofDRMAmdgpuGemCreate         = 32
	SizeofDRMAmdgpuGemMmap           = 8
	SizeofDRMAmdgpuCtx               = 16
	SizeofDRMAmdgpuBOList            = 24
	SizeofDRMAmdgpuCS                = 24
	SizeofDRMAmdgpuGemMetadata       = 288
	SizeofDRMAmdgpuGemWaitIdle       = 16
	SizeofDRMAmdgpuGemVA             = 40
	SizeofDRMAmdgpuWaitCS            = 32
	SizeofDRMAmdgpuGemOp             = 16
	SizeofDRMAmdgpuGemUserptr        = 24
	SizeofDRMAmdgpuWaitFences        = 24
	SizeofDRMAmdgpuVM                = 8
	SizeofDRMAmdgpuFenceToHandle     = 32
	SizeofDRMAmdgpuSched             = 16
)

// DRM_IO / DRM_IOR / DRM_IOW / DRM_IOWR as constant expressions (asm-generic/ioctl.h).
const (
	drmIO   = uint32(IOCNone)<<30 | DRMIOCTLBase<<8
	drmIOR  = uint32(IOCRead)<<30 | DRMIOCTLBase<<8
	drmIOW  = uint32(IOCWrite)<<30 | DRMIOCTLBase<<8
	drmIOWR = uint32(IOCRead|IOCWrite)<<30 | DRMIOCTLBase<<8
)

// DRM core command words (drm.h).
const (
	DRM_IOCTL_VERSION                = drmIOWR | 0x00 | SizeofDRMVersion<<16
	DRM_IOCTL_GET_CLIENT             = drmIOWR | 0x05 | SizeofDRMClient<<16
	DRM_IOCTL_GEM_CLOSE              = drmIOW | 0x09 | SizeofDRMGemClose<<16
	DRM_IOCTL_GET_CAP                = drmIOWR | 0x0c | SizeofDRMGetCap<<16
	DRM_IOCTL_SET_CLIENT_CAP         = drmIOW | 0x0d | SizeofDRMSetClientCap<<16
	DRM_IOCTL_SET_MASTER             = drmIO | 0x1e
	DRM_IOCTL_DROP_MASTER            = drmIO | 0x1f
	DRM_IOCTL_PRIME_HANDLE_TO_FD     = drmIOWR | 0x2d | SizeofDRMPrimeHandle<<16
	DRM_IOCTL_PRIME_FD_TO_HANDLE     = drmIOWR | 0x2e | SizeofDRMPrimeHandle<<16
	DRM_IOCTL_SYNCOBJ_CREATE         = drmIOWR | 0xBF | SizeofDRMSyncobjCreate<<16
	DRM_IOCTL_SYNCOBJ_DESTROY        = drmIOWR | 0xC0 | SizeofDRMSyncobjDestroy<<16
	DRM_IOCTL_AMDGPU_GEM_CREATE      = drmIOWR | (DRMCommandBase + DRM_AMDGPU_GEM_CREATE) | SizeofDRMAmdgpuGemCreate<<16
	DRM_IOCTL_AMDGPU_GEM_MMAP        = drmIOWR | (DRMCommandBase + DRM_AMDGPU_GEM_MMAP) | SizeofDRMAmdgpuGemMmap<<16
	DRM_IOCTL_AMDGPU_CTX             = drmIOWR | (DRMCommandBase + DRM_AMDGPU_CTX) | SizeofDRMAmdgpuCtx<<16
	DRM_IOCTL_AMDGPU_BO_LIST         = drmIOWR | (DRMCommandBase + DRM_AMDGPU_BO_LIST) | SizeofDRMAmdgpuBOList<<16
	DRM_IOCTL_AMDGPU_CS              = drmIOWR | (DRMCommandBase + DRM_AMDGPU_CS) | SizeofDRMAmdgpuCS<<16
	DRM_IOCTL_AMDGPU_INFO            = drmIOW | (DRMCommandBase + DRM_AMDGPU_INFO) | SizeofDRMAmdgpuInfo<<16
	DRM_IOCTL_AMDGPU_GEM_METADATA    = drmIOWR | (DRMCommandBase + DRM_AMDGPU_GEM_METADATA) | SizeofDRMAmdgpuGemMetadata<<16
	DRM_IOCTL_AMDGPU_GEM_WAIT_IDLE   = drmIOWR | (DRMCommandBase + DRM_AMDGPU_GEM_WAIT_IDLE) | SizeofDRMAmdgpuGemWaitIdle<<16
	DRM_IOCTL_AMDGPU_GEM_VA          = drmIOW | (DRMCommandBase + DRM_AMDGPU_GEM_VA) | SizeofDRMAmdgpuGemVA<<16
	DRM_IOCTL_AMDGPU_WAIT_CS         = drmIOWR | (DRMCommandBase + DRM_AMDGPU_WAIT_CS) | SizeofDRMAmdgpuWaitCS<<16
	DRM_IOCTL_AMDGPU_GEM_OP          = drmIOWR | (DRMCommandBase + DRM_AMDGPU_GEM_OP) | SizeofDRMAmdgpuGemOp<<16
	DRM_IOCTL_AMDGPU_GEM_USERPTR     = drmIOWR | (DRMCommandBase + DRM_AMDGPU_GEM_USERPTR) | SizeofDRMAmdgpuGemUserptr<<16
	DRM_IOCTL_AMDGPU_WAIT_FENCES     = drmIOWR | (DRMCommandBase + DRM_AMDGPU_WAIT_FENCES) | SizeofDRMAmdgpuWaitFences<<16
	DRM_IOCTL_AMDGPU_VM              = drmIOWR | (DRMCommandBase + DRM_AMDGPU_VM) | SizeofDRMAmdgpuVM<<16
	DRM_IOCTL_AMDGPU_FENCE_TO_HANDLE = drmIOWR | (DRMCommandBase + DRM_AMDGPU_FENCE_TO_HANDLE) | SizeofDRMAmdgpuFenceToHandle<<16
	DRM_IOCTL_AMDGPU_SCHED           = drmIOW | (DRMCommandBase + DRM_AMDGPU_SCHED) | SizeofDRMAmdgpuSched<<16
)

// The other DRM core command words of drm_ioctls[] that a render node answers (drm.h; the emulator
// has no argument type for them, the size in each word is the C sizeof of its struct). The last two
// are newer than libdrm 2.4.114's header (Linux 6.6 and 6.8).
const (
	DRM_IOCTL_GET_UNIQUE              = drmIOWR | 0x01 | 16<<16  // struct drm_unique
	DRM_IOCTL_GET_MAGIC               = drmIOR | 0x02 | 4<<16    // struct drm_auth
	DRM_IOCTL_GET_STATS               = drmIOR | 0x06 | 0xf8<<16 // struct drm_stats
	DRM_IOCTL_SET_VERSION             = drmIOWR | 0x07 | 16<<16  // struct drm_set_version
	DRM_IOCTL_GEM_FLINK               = drmIOWR | 0x0a | 8<<16   // struct drm_gem_flink
	DRM_IOCTL_GEM_OPEN                = drmIOWR | 0x0b | 16<<16  // struct drm_gem_open
	DRM_IOCTL_SET_UNIQUE              = drmIOW | 0x10 | 16<<16   // struct drm_unique
	DRM_IOCTL_AUTH_MAGIC              = drmIOW | 0x11 | 4<<16    // struct drm_auth
	DRM_IOCTL_BLOCK                   = drmIOWR | 0x12 | 4<<16   // struct drm_block
	DRM_IOCTL_UNBLOCK                 = drmIOWR | 0x13 | 4<<16   // struct drm_block
	DRM_IOCTL_ADD_DRAW                = drmIOWR | 0x27 | 4<<16   // struct drm_draw
	DRM_IOCTL_RM_DRAW                 = drmIOWR | 0x28 | 4<<16   // struct drm_draw
	DRM_IOCTL_FINISH                  = drmIOW | 0x2c | 8<<16    // struct drm_lock
	DRM_IOCTL_WAIT_VBLANK             = drmIOWR | 0x3a | 24<<16  // union drm_wait_vblank
	DRM_IOCTL_CRTC_GET_SEQUENCE       = drmIOWR | 0x3b | 24<<16  // struct drm_crtc_get_sequence
	DRM_IOCTL_CRTC_QUEUE_SEQUENCE     = drmIOWR | 0x3c | 24<<16  // struct drm_crtc_queue_sequence
	DRM_IOCTL_UPDATE_DRAW             = drmIOW | 0x3f | 24<<16   // struct drm_update_draw
	DRM_IOCTL_MODE_GETRESOURCES       = drmIOWR | 0xA0 | 64<<16  // struct drm_mode_card_res
	DRM_IOCTL_MODE_GETCRTC            = drmIOWR | 0xA1 | 104<<16 // struct drm_mode_crtc
	DRM_IOCTL_MODE_SETCRTC            = drmIOWR | 0xA2 | 104<<16 // struct drm_mode_crtc
	DRM_IOCTL_MODE_CURSOR             = drmIOWR | 0xA3 | 28<<16  // struct drm_mode_cursor
	DRM_IOCTL_MODE_GETGAMMA           = drmIOWR | 0xA4 | 32<<16  // struct drm_mode_crtc_lut
	DRM_IOCTL_MODE_SETGAMMA           = drmIOWR | 0xA5 | 32<<16  // struct drm_mode_crtc_lut
	DRM_IOCTL_MODE_GETENCODER         = drmIOWR | 0xA6 | 20<<16  // struct drm_mode_get_encoder
	DRM_IOCTL_MODE_GETCONNECTOR       = drmIOWR | 0xA7 | 80<<16  // struct drm_mode_get_connector
	DRM_IOCTL_MODE_ATTACHMODE         = drmIOWR | 0xA8 | 72<<16  // struct drm_mode_mode_cmd
	DRM_IOCTL_MODE_DETACHMODE         = drmIOWR | 0xA9 | 72<<16  // struct drm_mode_mode_cmd
	DRM_IOCTL_MODE_GETPROPERTY        = drmIOWR | 0xAA | 64<<16  // struct drm_mode_get_property
	DRM_IOCTL_MODE_SETPROPERTY        = drmIOWR | 0xAB | 16<<16  // struct drm_mode_connector_set_property
	DRM_IOCTL_MODE_GETPROPBLOB        = drmIOWR | 0xAC | 16<<16  // struct drm_mode_get_blob
	DRM_IOCTL_MODE_GETFB              = drmIOWR | 0xAD | 28<<16  // struct drm_mode_fb_cmd
	DRM_IOCTL_MODE_ADDFB              = drmIOWR | 0xAE | 28<<16  // struct drm_mode_fb_cmd
	DRM_IOCTL_MODE_RMFB               = drmIOWR | 0xAF | 4<<16   // unsigned int
	DRM_IOCTL_MODE_PAGE_FLIP          = drmIOWR | 0xB0 | 24<<16  // struct drm_mode_crtc_page_flip
	DRM_IOCTL_MODE_DIRTYFB            = drmIOWR | 0xB1 | 24<<16  // struct drm_mode_fb_dirty_cmd
	DRM_IOCTL_MODE_CREATE_DUMB        = drmIOWR | 0xB2 | 32<<16  // struct drm_mode_create_dumb
	DRM_IOCTL_MODE_MAP_DUMB           = drmIOWR | 0xB3 | 16<<16  // struct drm_mode_map_dumb
	DRM_IOCTL_MODE_DESTROY_DUMB       = drmIOWR | 0xB4 | 4<<16   // struct drm_mode_destroy_dumb
	DRM_IOCTL_MODE_GETPLANERESOURCES  = drmIOWR | 0xB5 | 16<<16  // struct drm_mode_get_plane_res
	DRM_IOCTL_MODE_GETPLANE           = drmIOWR | 0xB6 | 32<<16  // struct drm_mode_get_plane
	DRM_IOCTL_MODE_SETPLANE           = drmIOWR | 0xB7 | 48<<16  // struct drm_mode_set_plane
	DRM_IOCTL_MODE_ADDFB2             = drmIOWR | 0xB8 | 104<<16 // struct drm_mode_fb_cmd2
	DRM_IOCTL_MODE_OBJ_GETPROPERTIES  = drmIOWR | 0xB9 | 32<<16  // struct drm_mode_obj_get_properties
	DRM_IOCTL_MODE_OBJ_SETPROPERTY    = drmIOWR | 0xBA | 24<<16  // struct drm_mode_obj_set_property
	DRM_IOCTL_MODE_CURSOR2            = drmIOWR | 0xBB | 36<<16  // struct drm_mode_cursor2
	DRM_IOCTL_MODE_ATOMIC             = drmIOWR | 0xBC | 56<<16  // struct drm_mode_atomic
	DRM_IOCTL_MODE_CREATEPROPBLOB     = drmIOWR | 0xBD | 16<<16  // struct drm_mode_create_blob
	DRM_IOCTL_MODE_DESTROYPROPBLOB    = drmIOWR | 0xBE | 4<<16   // struct drm_mode_destroy_blob
	DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD    = drmIOWR | 0xC1 | 16<<16  // struct drm_syncobj_handle
	DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE    = drmIOWR | 0xC2 | 16<<16  // struct drm_syncobj_handle
	DRM_IOCTL_SYNCOBJ_WAIT            = drmIOWR | 0xC3 | 32<<16  // struct drm_syncobj_wait
	DRM_IOCTL_SYNCOBJ_RESET           = drmIOWR | 0xC4 | 16<<16  // struct drm_syncobj_array
	DRM_IOCTL_SYNCOBJ_SIGNAL          = drmIOWR | 0xC5 | 16<<16  // struct drm_syncobj_array
	DRM_IOCTL_MODE_CREATE_LEASE       = drmIOWR | 0xC6 | 24<<16  // struct drm_mode_create_lease
	DRM_IOCTL_MODE_LIST_LESSEES       = drmIOWR | 0xC7 | 16<<16  // struct drm_mode_list_lessees
	DRM_IOCTL_MODE_GET_LEASE          = drmIOWR | 0xC8 | 16<<16  // struct drm_mode_get_lease
	DRM_IOCTL_MODE_REVOKE_LEASE       = drmIOWR | 0xC9 | 4<<16   // struct drm_mode_revoke_lease
	DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT   = drmIOWR | 0xCA | 40<<16  // struct drm_syncobj_timeline_wait
	DRM_IOCTL_SYNCOBJ_QUERY           = drmIOWR | 0xCB | 24<<16  // struct drm_syncobj_timeline_array
	DRM_IOCTL_SYNCOBJ_TRANSFER        = drmIOWR | 0xCC | 32<<16  // struct drm_syncobj_transfer
	DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL = drmIOWR | 0xCD | 24<<16  // struct drm_syncobj_timeline_array
	DRM_IOCTL_MODE_GETFB2             = drmIOWR | 0xCE | 104<<16 // struct drm_mode_fb_cmd2
	DRM_IOCTL_SYNCOBJ_EVENTFD         = drmIOWR | 0xCF | 24<<16  // struct drm_syncobj_eventfd (Linux 6.6)
	DRM_IOCTL_MODE_CLOSEFB            = drmIOWR | 0xD0 | 8<<16   // struct drm_mode_closefb (Linux 6.8)
)

// DRMIoctl describes one DRM command a render node answers: its DRM_IOCTL_* name, command word,
// and, where this package has one, the argument type with the C name of its struct or union.
type DRMIoctl struct {
	Name string
	Cmd  uint32
	Arg  reflect.Type // nil: no Go type (the emulator answers without reading the argument)
	C    string
}

func drmIoctl[T any](name string, cmd uint32, c string) DRMIoctl {
	return DRMIoctl{Name: name, Cmd: cmd, Arg: reflect.TypeFor[T](), C: c}
}

// DRMIoctls is the DRM ioctl table of the render node, by number: the DRM core commands of
// drm_ioctls[] that have an entry (drm_ioctl.c, Linux 6.10), then amdgpu's (amdgpu_ioctls_kms[]).
// kfd/drm registers its typed handlers against it and the tracer decodes arguments with it;
// drm_c_test.go checks every command word, and the structs it names, against libdrm's headers.
var DRMIoctls = []DRMIoctl{
	drmIoctl[DRMVersion]("DRM_IOCTL_VERSION", DRM_IOCTL_VERSION, "struct drm_version"),
	{Name: "DRM_IOCTL_GET_UNIQUE", Cmd: DRM_IOCTL_GET_UNIQUE},
	{Name: "DRM_IOCTL_GET_MAGIC", Cmd: DRM_IOCTL_GET_MAGIC},
	drmIoctl[DRMClient]("DRM_IOCTL_GET_CLIENT", DRM_IOCTL_GET_CLIENT, "struct drm_client"),
	{Name: "DRM_IOCTL_GET_STATS", Cmd: DRM_IOCTL_GET_STATS},
	{Name: "DRM_IOCTL_SET_VERSION", Cmd: DRM_IOCTL_SET_VERSION},
	drmIoctl[DRMGemClose]("DRM_IOCTL_GEM_CLOSE", DRM_IOCTL_GEM_CLOSE, "struct drm_gem_close"),
	{Name: "DRM_IOCTL_GEM_FLINK", Cmd: DRM_IOCTL_GEM_FLINK},
	{Name: "DRM_IOCTL_GEM_OPEN", Cmd: DRM_IOCTL_GEM_OPEN},
	drmIoctl[DRMGetCap]("DRM_IOCTL_GET_CAP", DRM_IOCTL_GET_CAP, "struct drm_get_cap"),
	drmIoctl[DRMSetClientCap]("DRM_IOCTL_SET_CLIENT_CAP", DRM_IOCTL_SET_CLIENT_CAP, "struct drm_set_client_cap"),
	{Name: "DRM_IOCTL_SET_UNIQUE", Cmd: DRM_IOCTL_SET_UNIQUE},
	{Name: "DRM_IOCTL_AUTH_MAGIC", Cmd: DRM_IOCTL_AUTH_MAGIC},
	{Name: "DRM_IOCTL_BLOCK", Cmd: DRM_IOCTL_BLOCK},
	{Name: "DRM_IOCTL_UNBLOCK", Cmd: DRM_IOCTL_UNBLOCK},
	{Name: "DRM_IOCTL_SET_MASTER", Cmd: DRM_IOCTL_SET_MASTER},
	{Name: "DRM_IOCTL_DROP_MASTER", Cmd: DRM_IOCTL_DROP_MASTER},
	{Name: "DRM_IOCTL_ADD_DRAW", Cmd: DRM_IOCTL_ADD_DRAW},
	{Name: "DRM_IOCTL_RM_DRAW", Cmd: DRM_IOCTL_RM_DRAW},
	{Name: "DRM_IOCTL_FINISH", Cmd: DRM_IOCTL_FINISH},
	drmIoctl[DRMPrimeHandle]("DRM_IOCTL_PRIME_HANDLE_TO_FD", DRM_IOCTL_PRIME_HANDLE_TO_FD, "struct drm_prime_handle"),
	drmIoctl[DRMPrimeHandle]("DRM_IOCTL_PRIME_FD_TO_HANDLE", DRM_IOCTL_PRIME_FD_TO_HANDLE, "struct drm_prime_handle"),
	{Name: "DRM_IOCTL_WAIT_VBLANK", Cmd: DRM_IOCTL_WAIT_VBLANK},
	{Name: "DRM_IOCTL_CRTC_GET_SEQUENCE", Cmd: DRM_IOCTL_CRTC_GET_SEQUENCE},
	{Name: "DRM_IOCTL_CRTC_QUEUE_SEQUENCE", Cmd: DRM_IOCTL_CRTC_QUEUE_SEQUENCE},
	{Name: "DRM_IOCTL_UPDATE_DRAW", Cmd: DRM_IOCTL_UPDATE_DRAW},
	drmIoctl[DRMAmdgpuGemCreate]("DRM_IOCTL_AMDGPU_GEM_CREATE", DRM_IOCTL_AMDGPU_GEM_CREATE, "union drm_amdgpu_gem_create"),
	drmIoctl[DRMAmdgpuGemMmap]("DRM_IOCTL_AMDGPU_GEM_MMAP", DRM_IOCTL_AMDGPU_GEM_MMAP, "union drm_amdgpu_gem_mmap"),
	drmIoctl[DRMAmdgpuCtx]("DRM_IOCTL_AMDGPU_CTX", DRM_IOCTL_AMDGPU_CTX, "union drm_amdgpu_ctx"),
	drmIoctl[DRMAmdgpuBOList]("DRM_IOCTL_AMDGPU_BO_LIST", DRM_IOCTL_AMDGPU_BO_LIST, "union drm_amdgpu_bo_list"),
	drmIoctl[DRMAmdgpuCS]("DRM_IOCTL_AMDGPU_CS", DRM_IOCTL_AMDGPU_CS, "union drm_amdgpu_cs"),
	drmIoctl[DRMAmdgpuInfo]("DRM_IOCTL_AMDGPU_INFO", DRM_IOCTL_AMDGPU_INFO, "struct drm_amdgpu_info"),
	drmIoctl[DRMAmdgpuGemMetadata]("DRM_IOCTL_AMDGPU_GEM_METADATA", DRM_IOCTL_AMDGPU_GEM_METADATA, "struct drm_amdgpu_gem_metadata"),
	drmIoctl[DRMAmdgpuGemWaitIdle]("DRM_IOCTL_AMDGPU_GEM_WAIT_IDLE", DRM_IOCTL_AMDGPU_GEM_WAIT_IDLE, "union drm_amdgpu_gem_wait_idle"),
	drmIoctl[DRMAmdgpuGemVA]("DRM_IOCTL_AMDGPU_GEM_VA", DRM_IOCTL_AMDGPU_GEM_VA, "struct drm_amdgpu_gem_va"),
	drmIoctl[DRMAmdgpuWaitCS]("DRM_IOCTL_AMDGPU_WAIT_CS", DRM_IOCTL_AMDGPU_WAIT_CS, "union drm_amdgpu_wait_cs"),
	drmIoctl[DRMAmdgpuGemOp]("DRM_IOCTL_AMDGPU_GEM_OP", DRM_IOCTL_AMDGPU_GEM_OP, "struct drm_amdgpu_gem_op"),
	drmIoctl[DRMAmdgpuGemUserptr]("DRM_IOCTL_AMDGPU_GEM_USERPTR", DRM_IOCTL_AMDGPU_GEM_USERPTR, "struct drm_amdgpu_gem_userptr"),
	drmIoctl[DRMAmdgpuWaitFences]("DRM_IOCTL_AMDGPU_WAIT_FENCES", DRM_IOCTL_AMDGPU_WAIT_FENCES, "union drm_amdgpu_wait_fences"),
	drmIoctl[DRMAmdgpuVM]("DRM_IOCTL_AMDGPU_VM", DRM_IOCTL_AMDGPU_VM, "union drm_amdgpu_vm"),
	drmIoctl[DRMAmdgpuFenceToHandle]("DRM_IOCTL_AMDGPU_FENCE_TO_HANDLE", DRM_IOCTL_AMDGPU_FENCE_TO_HANDLE, "union drm_amdgpu_fence_to_handle"),
	drmIoctl[DRMAmdgpuSched]("DRM_IOCTL_AMDGPU_SCHED", DRM_IOCTL_AMDGPU_SCHED, "union drm_amdgpu_sched"),
	{Name: "DRM_IOCTL_MODE_GETRESOURCES", Cmd: DRM_IOCTL_MODE_GETRESOURCES},
	{Name: "DRM_IOCTL_MODE_GETCRTC", Cmd: DRM_IOCTL_MODE_GETCRTC},
	{Name: "DRM_IOCTL_MODE_SETCRTC", Cmd: DRM_IOCTL_MODE_SETCRTC},
	{Name: "DRM_IOCTL_MODE_CURSOR", Cmd: DRM_IOCTL_MODE_CURSOR},
	{Name: "DRM_IOCTL_MODE_GETGAMMA", Cmd: DRM_IOCTL_MODE_GETGAMMA},
	{Name: "DRM_IOCTL_MODE_SETGAMMA", Cmd: DRM_IOCTL_MODE_SETGAMMA},
	{Name: "DRM_IOCTL_MODE_GETENCODER", Cmd: DRM_IOCTL_MODE_GETENCODER},
	{Name: "DRM_IOCTL_MODE_GETCONNECTOR", Cmd: DRM_IOCTL_MODE_GETCONNECTOR},
	{Name: "DRM_IOCTL_MODE_ATTACHMODE", Cmd: DRM_IOCTL_MODE_ATTACHMODE},
	{Name: "DRM_IOCTL_MODE_DETACHMODE", Cmd: DRM_IOCTL_MODE_DETACHMODE},
	{Name: "DRM_IOCTL_MODE_GETPROPERTY", Cmd: DRM_IOCTL_MODE_GETPROPERTY},
	{Name: "DRM_IOCTL_MODE_SETPROPERTY", Cmd: DRM_IOCTL_MODE_SETPROPERTY},
	{Name: "DRM_IOCTL_MODE_GETPROPBLOB", Cmd: DRM_IOCTL_MODE_GETPROPBLOB},
	{Name: "DRM_IOCTL_MODE_GETFB", Cmd: DRM_IOCTL_MODE_GETFB},
	{Name: "DRM_IOCTL_MODE_ADDFB", Cmd: DRM_IOCTL_MODE_ADDFB},
	{Name: "DRM_IOCTL_MODE_RMFB", Cmd: DRM_IOCTL_MODE_RMFB},
	{Name: "DRM_IOCTL_MODE_PAGE_FLIP", Cmd: DRM_IOCTL_MODE_PAGE_FLIP},
	{Name: "DRM_IOCTL_MODE_DIRTYFB", Cmd: DRM_IOCTL_MODE_DIRTYFB},
	{Name: "DRM_IOCTL_MODE_CREATE_DUMB", Cmd: DRM_IOCTL_MODE_CREATE_DUMB},
	{Name: "DRM_IOCTL_MODE_MAP_DUMB", Cmd: DRM_IOCTL_MODE_MAP_DUMB},
	{Name: "DRM_IOCTL_MODE_DESTROY_DUMB", Cmd: DRM_IOCTL_MODE_DESTROY_DUMB},
	{Name: "DRM_IOCTL_MODE_GETPLANERESOURCES", Cmd: DRM_IOCTL_MODE_GETPLANERESOURCES},
	{Name: "DRM_IOCTL_MODE_GETPLANE", Cmd: DRM_IOCTL_MODE_GETPLANE},
	{Name: "DRM_IOCTL_MODE_SETPLANE", Cmd: DRM_IOCTL_MODE_SETPLANE},
	{Name: "DRM_IOCTL_MODE_ADDFB2", Cmd: DRM_IOCTL_MODE_ADDFB2},
	{Name: "DRM_IOCTL_MODE_OBJ_GETPROPERTIES", Cmd: DRM_IOCTL_MODE_OBJ_GETPROPERTIES},
	{Name: "DRM_IOCTL_MODE_OBJ_SETPROPERTY", Cmd: DRM_IOCTL_MODE_OBJ_SETPROPERTY},
	{Name: "DRM_IOCTL_MODE_CURSOR2", Cmd: DRM_IOCTL_MODE_CURSOR2},
	{Name: "DRM_IOCTL_MODE_ATOMIC", Cmd: DRM_IOCTL_MODE_ATOMIC},
	{Name: "DRM_IOCTL_MODE_CREATEPROPBLOB", Cmd: DRM_IOCTL_MODE_CREATEPROPBLOB},
	{Name: "DRM_IOCTL_MODE_DESTROYPROPBLOB", Cmd: DRM_IOCTL_MODE_DESTROYPROPBLOB},
	drmIoctl[DRMSyncobjCreate]("DRM_IOCTL_SYNCOBJ_CREATE", DRM_IOCTL_SYNCOBJ_CREATE, "struct drm_syncobj_create"),
	drmIoctl[DRMSyncobjDestroy]("DRM_IOCTL_SYNCOBJ_DESTROY", DRM_IOCTL_SYNCOBJ_DESTROY, "struct drm_syncobj_destroy"),
	{Name: "DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD", Cmd: DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD},
	{Name: "DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE", Cmd: DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE},
	{Name: "DRM_IOCTL_SYNCOBJ_WAIT", Cmd: DRM_IOCTL_SYNCOBJ_WAIT},
	{Name: "DRM_IOCTL_SYNCOBJ_RESET", Cmd: DRM_IOCTL_SYNCOBJ_RESET},
	{Name: "DRM_IOCTL_SYNCOBJ_SIGNAL", Cmd: DRM_IOCTL_SYNCOBJ_SIGNAL},
	{Name: "DRM_IOCTL_MODE_CREATE_LEASE", Cmd: DRM_IOCTL_MODE_CREATE_LEASE},
	{Name: "DRM_IOCTL_MODE_LIST_LESSEES", Cmd: DRM_IOCTL_MODE_LIST_LESSEES},
	{Name: "DRM_IOCTL_MODE_GET_LEASE", Cmd: DRM_IOCTL_MODE_GET_LEASE},
	{Name: "DRM_IOCTL_MODE_REVOKE_LEASE", Cmd: DRM_IOCTL_MODE_REVOKE_LEASE},
	{Name: "DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT", Cmd: DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT},
	{Name: "DRM_IOCTL_SYNCOBJ_QUERY", Cmd: DRM_IOCTL_SYNCOBJ_QUERY},
	{Name: "DRM_IOCTL_SYNCOBJ_TRANSFER", Cmd: DRM_IOCTL_SYNCOBJ_TRANSFER},
	{Name: "DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL", Cmd: DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL},
	{Name: "DRM_IOCTL_MODE_GETFB2", Cmd: DRM_IOCTL_MODE_GETFB2},
	{Name: "DRM_IOCTL_SYNCOBJ_EVENTFD", Cmd: DRM_IOCTL_SYNCOBJ_EVENTFD},
	{Name: "DRM_IOCTL_MODE_CLOSEFB", Cmd: DRM_IOCTL_MODE_CLOSEFB},
}

// DRMIoctlOf returns the table entry of DRM command number nr.
func DRMIoctlOf(nr uint32) (DRMIoctl, bool) {
	for _, io := range DRMIoctls {
		if IOCNr(io.Cmd) == nr {
			return io, true
		}
	}
	return DRMIoctl{}, false
}

// amdgpu driver ioctl numbers (DRM_AMDGPU_*, offsets from DRM_COMMAND_BASE).
const (
	DRM_AMDGPU_GEM_CREATE      = 0x00
	DRM_AMDGPU_GEM_MMAP        = 0x01
	DRM_AMDGPU_CTX             = 0x02
	DRM_AMDGPU_BO_LIST         = 0x03
	DRM_AMDGPU_CS              = 0x04
	DRM_AMDGPU_INFO            = 0x05
	DRM_AMDGPU_GEM_METADATA    = 0x06
	DRM_AMDGPU_GEM_WAIT_IDLE   = 0x07
	DRM_AMDGPU_GEM_VA          = 0x08
	DRM_AMDGPU_WAIT_CS         = 0x09
	DRM_AMDGPU_GEM_OP          = 0x10
	DRM_AMDGPU_GEM_USERPTR     = 0x11
	DRM_AMDGPU_WAIT_FENCES     = 0x12
	DRM_AMDGPU_VM              = 0x13
	DRM_AMDGPU_FENCE_TO_HANDLE = 0x14
	DRM_AMDGPU_SCHED           = 0x15
)

// DRM_CAP_*, DRM_PRIME_CAP_*, DRM_CLIENT_CAP_* (drm.h).
const (
	DRM_CAP_DUMB_BUFFER          = 0x1
	DRM_CAP_VBLANK_HIGH_CRTC     = 0x2
	DRM_CAP_DUMB_PREFERRED_DEPTH = 0x3
	DRM_CAP_DUMB_PREFER_SHADOW   = 0x4
	DRM_CAP_PRIME                = 0x5
	DRM_CAP_TIMESTAMP_MONOTONIC  = 0x6
	DRM_CAP_ASYNC_PAGE_FLIP      = 0x7
	DRM_CAP_CURSOR_WIDTH         = 0x8
	DRM_CAP_CURSOR_HEIGHT        = 0x9
	DRM_CAP_ADDFB2_MODIFIERS     = 0x10
	DRM_CAP_PAGE_FLIP_TARGET     = 0x11
	DRM_CAP_CRTC_IN_VBLANK_EVENT = 0x12
	DRM_CAP_SYNCOBJ              = 0x13
	DRM_CAP_SYNCOBJ_TIMELINE     = 0x14

	DRM_PRIME_CAP_IMPORT = 0x1
	DRM_PRIME_CAP_EXPORT = 0x2

	DRM_CLIENT_CAP_STEREO_3D            = 1
	DRM_CLIENT_CAP_UNIVERSAL_PLANES     = 2
	DRM_CLIENT_CAP_ATOMIC               = 3
	DRM_CLIENT_CAP_ASPECT_RATIO         = 4
	DRM_CLIENT_CAP_WRITEBACK_CONNECTORS = 5

	DRM_RDWR    = 0x2     // O_RDWR
	DRM_CLOEXEC = 0x80000 // O_CLOEXEC (02000000)
)

// AMDGPU_INFO_* query ids and their sub-ids (amdgpu_drm.h).
const (
	AMDGPU_INFO_ACCEL_WORKING            = 0x00
	AMDGPU_INFO_CRTC_FROM_ID             = 0x01
	AMDGPU_INFO_HW_IP_INFO               = 0x02
	AMDGPU_INFO_HW_IP_COUNT              = 0x03
	AMDGPU_INFO_TIMESTAMP                = 0x05
	AMDGPU_INFO_FW_VERSION               = 0x0e
	AMDGPU_INFO_NUM_BYTES_MOVED          = 0x0f
	AMDGPU_INFO_VRAM_USAGE               = 0x10
	AMDGPU_INFO_GTT_USAGE                = 0x11
	AMDGPU_INFO_GDS_CONFIG               = 0x13
	AMDGPU_INFO_VRAM_GTT                 = 0x14
	AMDGPU_INFO_READ_MMR_REG             = 0x15
	AMDGPU_INFO_DEV_INFO                 = 0x16
	AMDGPU_INFO_VIS_VRAM_USAGE           = 0x17
	AMDGPU_INFO_NUM_EVICTIONS            = 0x18
	AMDGPU_INFO_MEMORY                   = 0x19
	AMDGPU_INFO_VCE_CLOCK_TABLE          = 0x1A
	AMDGPU_INFO_VBIOS                    = 0x1B
	AMDGPU_INFO_NUM_HANDLES              = 0x1C
	AMDGPU_INFO_SENSOR                   = 0x1D
	AMDGPU_INFO_NUM_VRAM_CPU_PAGE_FAULTS = 0x1E
	AMDGPU_INFO_VRAM_LOST_COUNTER        = 0x1F
	AMDGPU_INFO_RAS_ENABLED_FEATURES     = 0x20
	AMDGPU_INFO_VIDEO_CAPS               = 0x21

	AMDGPU_INFO_FW_VCE                          = 0x1
	AMDGPU_INFO_FW_UVD                          = 0x2
	AMDGPU_INFO_FW_GMC                          = 0x03
	AMDGPU_INFO_FW_GFX_ME                       = 0x04
	AMDGPU_INFO_FW_GFX_PFP                      = 0x05
	AMDGPU_INFO_FW_GFX_CE                       = 0x06
	AMDGPU_INFO_FW_GFX_RLC                      = 0x07
	AMDGPU_INFO_FW_GFX_MEC                      = 0x08
	AMDGPU_INFO_FW_SMC                          = 0x0a
	AMDGPU_INFO_FW_SDMA                         = 0x0b
	AMDGPU_INFO_FW_SOS                          = 0x0c
	AMDGPU_INFO_FW_ASD                          = 0x0d
	AMDGPU_INFO_FW_VCN                          = 0x0e
	AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_CNTL    = 0x0f
	AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_GPM_MEM = 0x10
	AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_SRM_MEM = 0x11
	AMDGPU_INFO_FW_DMCU                         = 0x12
	AMDGPU_INFO_FW_TA                           = 0x13
	AMDGPU_INFO_FW_DMCUB                        = 0x14
	AMDGPU_INFO_FW_TOC                          = 0x15
	AMDGPU_INFO_VBIOS_SIZE                      = 0x1
	AMDGPU_INFO_VBIOS_IMAGE                     = 0x2
	AMDGPU_INFO_VBIOS_INFO                      = 0x3
	AMDGPU_INFO_SENSOR_GFX_SCLK                 = 0x1
	AMDGPU_INFO_SENSOR_STABLE_PSTATE_GFX_MCLK   = 0x9
	AMDGPU_INFO_VIDEO_CAPS_DECODE               = 0
	AMDGPU_INFO_VIDEO_CAPS_ENCODE               = 1
	AMDGPU_INFO_VIDEO_CAPS_CODEC_IDX_COUNT      = 8
	AMDGPU_VCE_CLOCK_TABLE_ENTRIES              = 6
	AMDGPU_INFO_MMR_SE_INDEX_SHIFT              = 0
	AMDGPU_INFO_MMR_SE_INDEX_MASK               = 0xff
	AMDGPU_INFO_MMR_SH_INDEX_SHIFT              = 8
	AMDGPU_INFO_MMR_SH_INDEX_MASK               = 0xff
	AMDGPU_IDS_FLAGS_FUSION                     = 0x1
	AMDGPU_IDS_FLAGS_PREEMPTION                 = 0x2
	AMDGPU_IDS_FLAGS_TMZ                        = 0x4
	AMDGPU_HW_IP_INSTANCE_MAX_COUNT             = 1
	AMDGPU_VA_OP_MAP                            = 1
	AMDGPU_VA_OP_UNMAP                          = 2
	AMDGPU_VA_OP_CLEAR                          = 3
	AMDGPU_VA_OP_REPLACE                        = 4
	AMDGPU_GEM_DOMAIN_CPU                       = 0x1
	AMDGPU_GEM_DOMAIN_GTT                       = 0x2
	AMDGPU_GEM_DOMAIN_VRAM                      = 0x4
	AMDGPU_VRAM_TYPE_UNKNOWN                    = 0
	AMDGPU_VRAM_TYPE_HBM                        = 6
	AMDGPU_VRAM_TYPE_GDDR6                      = 9
	AMDGPU_FAMILY_UNKNOWN                       = 0
	AMDGPU_FAMILY_SI                            = 110
	AMDGPU_FAMILY_CI                            = 120
	AMDGPU_FAMILY_KV                            = 125
	AMDGPU_FAMILY_VI                            = 130
	AMDGPU_FAMILY_CZ                            = 135
	AMDGPU_FAMILY_AI                            = 141
	AMDGPU_FAMILY_RV                            = 142
	AMDGPU_FAMILY_NV                            = 143
	AMDGPU_FAMILY_VGH                           = 144
	AMDGPU_FAMILY_YC                            = 146
	AMDGPU_FAMILY_GC_11_0_0                     = 145 // newer than libdrm 2.4.114's header
	AMDGPU_HW_IP_GFX                            = 0
	AMDGPU_HW_IP_COMPUTE                        = 1
	AMDGPU_HW_IP_DMA                            = 2
	AMDGPU_HW_IP_UVD                            = 3
	AMDGPU_HW_IP_VCE                            = 4
	AMDGPU_HW_IP_UVD_ENC                        = 5
	AMDGPU_HW_IP_VCN_DEC                        = 6
	AMDGPU_HW_IP_VCN_ENC                        = 7
	AMDGPU_HW_IP_VCN_JPEG                       = 8
	AMDGPU_HW_IP_NUM                            = 9
)
