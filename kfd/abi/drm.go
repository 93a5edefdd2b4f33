package abi

import "unsafe"

// The subset of <drm/drm.h> and <drm/amdgpu_drm.h> (libdrm-dev) that libdrm_amdgpu's
// amdgpu_device_initialize / amdgpu_query_gpu_info use on a render node.

// DRM_IOCTL_BASE and DRM_COMMAND_BASE.
const (
	DRMIOCTLBase   = 'd'
	DRMCommandBase = 0x40
)

type DRMVersion struct {
	VersionMajor      int32
	VersionMinor      int32
	VersionPatchlevel int32
	Pad               int32
	NameLen           uint64
	Name              uint64
	DateLen           uint64
	Date              uint64
	DescLen           uint64
	Desc              uint64
}

type DRMClient struct {
	Idx   int32
	Auth  int32
	Pid   uint64
	UID   uint64
	Magic uint64
	Iocs  uint64
}

type DRMGetCap struct {
	Capability uint64
	Value      uint64
}

type DRMGemClose struct {
	Handle uint32
	Pad    uint32
}

// DRMAmdgpuInfo is struct drm_amdgpu_info: the return buffer, the query id and a 16-byte union of
// per-query inputs.
type DRMAmdgpuInfo struct {
	ReturnPointer uint64
	ReturnSize    uint32
	Query         uint32
	Union         [16]byte
}

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
	Pad2                     uint32
	TCCDisabledMask          uint64
}

type DRMAmdgpuInfoVRAMGTT struct {
	VRAMSize              uint64
	VRAMCPUAccessibleSize uint64
	GTTSize               uint64
}

type DRMAmdgpuHeapInfo struct {
	TotalHeapSize  uint64
	UsableHeapSize uint64
	HeapUsage      uint64
	MaxAllocation  uint64
}

type DRMAmdgpuMemoryInfo struct {
	VRAM              DRMAmdgpuHeapInfo
	CPUAccessibleVRAM DRMAmdgpuHeapInfo
	GTT               DRMAmdgpuHeapInfo
}

type DRMAmdgpuInfoFirmware struct {
	Ver     uint32
	Feature uint32
}

type DRMAmdgpuInfoHWIP struct {
	HWIPVersionMajor   uint32
	HWIPVersionMinor   uint32
	CapabilitiesFlags  uint64
	IBStartAlignment   uint32
	IBSizeAlignment    uint32
	AvailableRings     uint32
	IPDiscoveryVersion uint32
}

func drmIOWR(nr uint32, size uintptr) uint32 {
	return IOC(IOCRead|IOCWrite, DRMIOCTLBase, nr, uint32(size))
}
func drmIOW(nr uint32, size uintptr) uint32 { return IOC(IOCWrite, DRMIOCTLBase, nr, uint32(size)) }

// DRM command words.
var (
	DRM_IOCTL_VERSION     = drmIOWR(0x00, unsafe.Sizeof(DRMVersion{}))
	DRM_IOCTL_GET_CLIENT  = drmIOWR(0x05, unsafe.Sizeof(DRMClient{}))
	DRM_IOCTL_GET_CAP     = drmIOWR(0x0c, unsafe.Sizeof(DRMGetCap{}))
	DRM_IOCTL_GEM_CLOSE   = drmIOW(0x09, unsafe.Sizeof(DRMGemClose{}))
	DRM_IOCTL_AMDGPU_INFO = drmIOW(DRMCommandBase+0x05, unsafe.Sizeof(DRMAmdgpuInfo{}))
)

// AMDGPU_INFO_* queries and families used here.
const (
	AMDGPU_INFO_ACCEL_WORKING  = 0x00
	AMDGPU_INFO_HW_IP_INFO     = 0x02
	AMDGPU_INFO_HW_IP_COUNT    = 0x03
	AMDGPU_INFO_FW_VERSION     = 0x0e
	AMDGPU_INFO_VRAM_USAGE     = 0x10
	AMDGPU_INFO_GTT_USAGE      = 0x11
	AMDGPU_INFO_VRAM_GTT       = 0x14
	AMDGPU_INFO_READ_MMR_REG   = 0x15
	AMDGPU_INFO_DEV_INFO       = 0x16
	AMDGPU_INFO_VIS_VRAM_USAGE = 0x17
	AMDGPU_INFO_MEMORY         = 0x19

	AMDGPU_FAMILY_AI = 141
	AMDGPU_FAMILY_NV = 143

	AMDGPU_HW_IP_GFX     = 0
	AMDGPU_HW_IP_COMPUTE = 1
	AMDGPU_HW_IP_DMA     = 2
	AMDGPU_HW_IP_NUM     = 9
)
