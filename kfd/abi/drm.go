package abi

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
	VersionMajor      int32
	VersionMinor      int32
	VersionPatchlevel int32
	Pad               int32 // implicit C padding before name_len
	NameLen           uint64
	Name              uint64
	DateLen           uint64
	Date              uint64
	DescLen           uint64
	Desc              uint64
}

// struct drm_client.
type DRMClient struct {
	Idx   int32
	Auth  int32
	Pid   uint64
	UID   uint64
	Magic uint64
	Iocs  uint64
}

// struct drm_get_cap.
type DRMGetCap struct {
	Capability uint64
	Value      uint64
}

// struct drm_set_client_cap.
type DRMSetClientCap struct {
	Capability uint64
	Value      uint64
}

// struct drm_gem_close.
type DRMGemClose struct {
	Handle uint32
	Pad    uint32
}

// struct drm_prime_handle.
type DRMPrimeHandle struct {
	Handle uint32
	Flags  uint32
	FD     int32
}

// struct drm_syncobj_create.
type DRMSyncobjCreate struct {
	Handle uint32
	Flags  uint32
}

// struct drm_syncobj_destroy.
type DRMSyncobjDestroy struct {
	Handle uint32
	Pad    uint32
}

// DRMAmdgpuInfo is struct drm_amdgpu_info: the return buffer, the query id and a 16-byte union of
// per-query inputs (mode_crtc, query_hw_ip, read_mmr_reg, query_fw, vbios_info, sensor_info,
// video_cap). The union members all start at offset 16; DRMAmdgpuInfoUnion* name their words.
type DRMAmdgpuInfo struct {
	ReturnPointer uint64
	ReturnSize    uint32
	Query         uint32
	Union         [16]byte
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
	FWType     uint32
	IPInstance uint32
	Index      uint32
	Pad        uint32
}

// DRMAmdgpuInfoDevice is struct drm_amdgpu_info_device as libdrm 2.4.114 knows it (368 bytes).
// Newer kernels append fields (min clocks, cache sizes, ...); the kernel copies min(return_size,
// sizeof) so a 2.4.114 client sees exactly this.
type DRMAmdgpuInfoDevice struct {
	DeviceID                 uint32
	ChipRev                  uint32
	ExternalRev              uint32
	PCIRev                   uint32
	Family                   uint32
	NumShaderEngines         uint32
	NumShaderArraysPerEngine uint32
	GPUCounterFreq           uint32
	MaxEngineClock           uint64
	MaxMemoryClock           uint64
	CUActiveNumber           uint32
	CUAOMask                 uint32
	CUBitmap                 [4][4]uint32
	EnabledRBPipesMask       uint32
	NumRBPipes               uint32
	NumHWGfxContexts         uint32
	Pad                      uint32
	IDsFlags                 uint64
	VirtualAddressOffset     uint64
	VirtualAddressMax        uint64
	VirtualAddressAlignment  uint32
	PTEFragmentSize          uint32
	GartPageSize             uint32
	CERAMSize                uint32
	VRAMType                 uint32
	VRAMBitWidth             uint32
	VCEHarvestConfig         uint32
	GCDoubleOffchipLDSBuf    uint32
	PrimBufGPUAddr           uint64
	PosBufGPUAddr            uint64
	CntlSbBufGPUAddr         uint64
	ParamBufGPUAddr          uint64
	PrimBufSize              uint32
	PosBufSize               uint32
	CntlSbBufSize            uint32
	ParamBufSize             uint32
	WaveFrontSize            uint32
	NumShaderVisibleVGPRs    uint32
	NumCUPerSH               uint32
	NumTCCBlocks             uint32
	GSVGTTableDepth          uint32
	GSPrimBufferDepth        uint32
	MaxGSWavesPerVGT         uint32
	Pad1                     uint32
	CUAOBitmap               [4][4]uint32
	HighVAOffset             uint64
	HighVAMax                uint64
	PASCTileSteeringOverride uint32
	Pad2                     uint32 // implicit C padding before tcc_disabled_mask
	TCCDisabledMask          uint64
}

// struct drm_amdgpu_info_vram_gtt.
type DRMAmdgpuInfoVRAMGTT struct {
	VRAMSize              uint64
	VRAMCPUAccessibleSize uint64
	GTTSize               uint64
}

// struct drm_amdgpu_heap_info.
type DRMAmdgpuHeapInfo struct {
	TotalHeapSize  uint64
	UsableHeapSize uint64
	HeapUsage      uint64
	MaxAllocation  uint64
}

// struct drm_amdgpu_memory_info.
type DRMAmdgpuMemoryInfo struct {
	VRAM              DRMAmdgpuHeapInfo
	CPUAccessibleVRAM DRMAmdgpuHeapInfo
	GTT               DRMAmdgpuHeapInfo
}

// struct drm_amdgpu_info_firmware.
type DRMAmdgpuInfoFirmware struct {
	Ver     uint32
	Feature uint32
}

// struct drm_amdgpu_info_hw_ip. The last word is _pad in libdrm 2.4.114's header; kernels since
// KMS 3.48 fill it as ip_discovery_version.
type DRMAmdgpuInfoHWIP struct {
	HWIPVersionMajor   uint32
	HWIPVersionMinor   uint32
	CapabilitiesFlags  uint64
	IBStartAlignment   uint32
	IBSizeAlignment    uint32
	AvailableRings     uint32
	IPDiscoveryVersion uint32
}

// struct drm_amdgpu_info_num_handles.
type DRMAmdgpuInfoNumHandles struct {
	UVDMaxHandles  uint32
	UVDUsedHandles uint32
}

// struct drm_amdgpu_info_gds.
type DRMAmdgpuInfoGDS struct {
	GDSGfxPartitionSize    uint32
	ComputePartitionSize   uint32
	GDSTotalSize           uint32
	GWSPerGfxPartition     uint32
	GWSPerComputePartition uint32
	OAPerGfxPartition      uint32
	OAPerComputePartition  uint32
	Pad                    uint32
}

// struct drm_amdgpu_info_vce_clock_table_entry and drm_amdgpu_info_vce_clock_table.
type DRMAmdgpuInfoVCEClockTableEntry struct {
	Sclk uint32
	Mclk uint32
	Eclk uint32
	Pad  uint32
}

type DRMAmdgpuInfoVCEClockTable struct {
	Entries         [AMDGPU_VCE_CLOCK_TABLE_ENTRIES]DRMAmdgpuInfoVCEClockTableEntry
	NumValidEntries uint32
	Pad             uint32
}

// struct drm_amdgpu_info_vbios.
type DRMAmdgpuInfoVBIOS struct {
	Name        [64]byte
	VBIOSPN     [64]byte
	Version     uint32
	Pad         uint32
	VBIOSVerStr [32]byte
	Date        [32]byte
}

// struct drm_amdgpu_info_video_codec_info and drm_amdgpu_info_video_caps.
type DRMAmdgpuInfoVideoCodecInfo struct {
	Valid             uint32
	MaxWidth          uint32
	MaxHeight         uint32
	MaxPixelsPerFrame uint32
	MaxLevel          uint32
	Pad               uint32
}

type DRMAmdgpuInfoVideoCaps struct {
	CodecInfo [AMDGPU_INFO_VIDEO_CAPS_CODEC_IDX_COUNT]DRMAmdgpuInfoVideoCodecInfo
}

// union drm_amdgpu_gem_create (in: struct drm_amdgpu_gem_create_in; out: handle).
type DRMAmdgpuGemCreate struct {
	BOSize      uint64
	Alignment   uint64
	Domains     uint64
	DomainFlags uint64
}

// union drm_amdgpu_gem_mmap (in: handle, _pad; out: addr_ptr).
type DRMAmdgpuGemMmap struct {
	Handle uint32
	Pad    uint32
}

// union drm_amdgpu_ctx (in: struct drm_amdgpu_ctx_in).
type DRMAmdgpuCtx struct {
	Op       uint32
	Flags    uint32
	CtxID    uint32
	Priority int32
}

// union drm_amdgpu_bo_list (in: struct drm_amdgpu_bo_list_in).
type DRMAmdgpuBOList struct {
	Operation  uint32
	ListHandle uint32
	BONumber   uint32
	BOInfoSize uint32
	BOInfoPtr  uint64
}

// union drm_amdgpu_cs (in: struct drm_amdgpu_cs_in).
type DRMAmdgpuCS struct {
	CtxID        uint32
	BOListHandle uint32
	NumChunks    uint32
	Flags        uint32
	Chunks       uint64
}

// struct drm_amdgpu_gem_metadata (284 bytes of fields, 288 with the trailing alignment padding).
type DRMAmdgpuGemMetadata struct {
	Handle        uint32
	Op            uint32
	Flags         uint64
	TilingInfo    uint64
	DataSizeBytes uint32
	Data          [64]uint32
	Pad           uint32 // trailing padding to 8-byte alignment
}

// union drm_amdgpu_gem_wait_idle (in: struct drm_amdgpu_gem_wait_idle_in).
type DRMAmdgpuGemWaitIdle struct {
	Handle  uint32
	Flags   uint32
	Timeout uint64
}

// struct drm_amdgpu_gem_va.
type DRMAmdgpuGemVA struct {
	Handle     uint32
	Pad        uint32
	Operation  uint32
	Flags      uint32
	VAAddress  uint64
	OffsetInBO uint64
	MapSize    uint64
}

// union drm_amdgpu_wait_cs (in: struct drm_amdgpu_wait_cs_in).
type DRMAmdgpuWaitCS struct {
	Handle     uint64
	Timeout    uint64
	IPType     uint32
	IPInstance uint32
	Ring       uint32
	CtxID      uint32
}

// struct drm_amdgpu_gem_op.
type DRMAmdgpuGemOp struct {
	Handle uint32
	Op     uint32
	Value  uint64
}

// struct drm_amdgpu_gem_userptr.
type DRMAmdgpuGemUserptr struct {
	Addr   uint64
	Size   uint64
	Flags  uint32
	Handle uint32
}

// union drm_amdgpu_wait_fences (in: struct drm_amdgpu_wait_fences_in).
type DRMAmdgpuWaitFences struct {
	Fences     uint64
	FenceCount uint32
	WaitAll    uint32
	TimeoutNs  uint64
}

// union drm_amdgpu_vm (in: struct drm_amdgpu_vm_in).
type DRMAmdgpuVM struct {
	Op    uint32
	Flags uint32
}

// struct drm_amdgpu_fence.
type DRMAmdgpuFence struct {
	CtxID      uint32
	IPType     uint32
	IPInstance uint32
	Ring       uint32
	SeqNo      uint64
}

// union drm_amdgpu_fence_to_handle (in: fence, what, pad).
type DRMAmdgpuFenceToHandle struct {
	Fence DRMAmdgpuFence
	What  uint32
	Pad   uint32
}

// union drm_amdgpu_sched (in: struct drm_amdgpu_sched_in).
type DRMAmdgpuSched struct {
	Op       uint32
	FD       uint32
	Priority int32
	CtxID    uint32
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
