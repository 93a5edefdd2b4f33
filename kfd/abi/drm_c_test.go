package abi

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// drmStructs maps the Go DRM types to their C types in <libdrm/drm.h> / <libdrm/amdgpu_drm.h>, with the
// C member path of every Go field in order ("" for padding the C side leaves implicit). For unions the
// members are those of the "in" variant. size is the Sizeof constant the command words use.
var drmStructs = []struct {
	goType any
	c      string
	size   int
	fields []string
}{
	{DRMVersion{}, "struct drm_version", SizeofDRMVersion, []string{"version_major", "version_minor", "version_patchlevel", "", "name_len", "name", "date_len", "date", "desc_len", "desc"}},
	{DRMClient{}, "struct drm_client", SizeofDRMClient, []string{"idx", "auth", "pid", "uid", "magic", "iocs"}},
	{DRMGetCap{}, "struct drm_get_cap", SizeofDRMGetCap, []string{"capability", "value"}},
	{DRMSetClientCap{}, "struct drm_set_client_cap", SizeofDRMSetClientCap, []string{"capability", "value"}},
	{DRMGemClose{}, "struct drm_gem_close", SizeofDRMGemClose, []string{"handle", "pad"}},
	{DRMPrimeHandle{}, "struct drm_prime_handle", SizeofDRMPrimeHandle, []string{"handle", "flags", "fd"}},
	{DRMSyncobjCreate{}, "struct drm_syncobj_create", SizeofDRMSyncobjCreate, []string{"handle", "flags"}},
	{DRMSyncobjDestroy{}, "struct drm_syncobj_destroy", SizeofDRMSyncobjDestroy, []string{"handle", "pad"}},
	{DRMAmdgpuInfo{}, "struct drm_amdgpu_info", SizeofDRMAmdgpuInfo, []string{"return_pointer", "return_size", "query", "query_hw_ip.type"}},
	{DRMAmdgpuQueryFW{}, "struct drm_amdgpu_query_fw", SizeofDRMAmdgpuQueryFW, []string{"fw_type", "ip_instance", "index", "_pad"}},
	{DRMAmdgpuInfoDevice{}, "struct drm_amdgpu_info_device", SizeofDRMAmdgpuInfoDevice, []string{"device_id", "chip_rev",
		"external_rev", "pci_rev", "family", "num_shader_engines", "num_shader_arrays_per_engine", "gpu_counter_freq",
		"max_engine_clock", "max_memory_clock", "cu_active_number", "cu_ao_mask", "cu_bitmap", "enabled_rb_pipes_mask",
		"num_rb_pipes", "num_hw_gfx_contexts", "_pad", "ids_flags", "virtual_address_offset", "virtual_address_max",
		"virtual_address_alignment", "pte_fragment_size", "gart_page_size", "ce_ram_size", "vram_type", "vram_bit_width",
		"vce_harvest_config", "gc_double_offchip_lds_buf", "prim_buf_gpu_addr", "pos_buf_gpu_addr", "cntl_sb_buf_gpu_addr",
		"param_buf_gpu_addr", "prim_buf_size", "pos_buf_size", "cntl_sb_buf_size", "param_buf_size", "wave_front_size",
		"num_shader_visible_vgprs", "num_cu_per_sh", "num_tcc_blocks", "gs_vgt_table_depth", "gs_prim_buffer_depth",
		"max_gs_waves_per_vgt", "_pad1", "cu_ao_bitmap", "high_va_offset", "high_va_max", "pa_sc_tile_steering_override",
		"", "tcc_disabled_mask"}},
	{DRMAmdgpuInfoVRAMGTT{}, "struct drm_amdgpu_info_vram_gtt", SizeofDRMAmdgpuInfoVRAMGTT, []string{"vram_size", "vram_cpu_accessible_size", "gtt_size"}},
	{DRMAmdgpuHeapInfo{}, "struct drm_amdgpu_heap_info", SizeofDRMAmdgpuHeapInfo, []string{"total_heap_size", "usable_heap_size", "heap_usage", "max_allocation"}},
	{DRMAmdgpuMemoryInfo{}, "struct drm_amdgpu_memory_info", SizeofDRMAmdgpuMemoryInfo, []string{"vram", "cpu_accessible_vram", "gtt"}},
	{DRMAmdgpuInfoFirmware{}, "struct drm_amdgpu_info_firmware", SizeofDRMAmdgpuInfoFirmware, []string{"ver", "feature"}},
	{DRMAmdgpuInfoHWIP{}, "struct drm_amdgpu_info_hw_ip", SizeofDRMAmdgpuInfoHWIP, []string{"hw_ip_version_major", "hw_ip_version_minor", "capabilities_flags", "ib_start_alignment", "ib_size_alignment", "available_rings", "_pad"}},
	{DRMAmdgpuInfoNumHandles{}, "struct drm_amdgpu_info_num_handles", SizeofDRMAmdgpuInfoNumHandles, []string{"uvd_max_handles", "uvd_used_handles"}},
	{DRMAmdgpuInfoGDS{}, "struct drm_amdgpu_info_gds", SizeofDRMAmdgpuInfoGDS, []string{"gds_gfx_partition_size", "compute_partition_size", "gds_total_size", "gws_per_gfx_partition", "gws_per_compute_partition", "oa_per_gfx_partition", "oa_per_compute_partition", "_pad"}},
	{DRMAmdgpuInfoVCEClockTable{}, "struct drm_amdgpu_info_vce_clock_table", SizeofDRMAmdgpuInfoVCEClockTable, []string{"entries", "num_valid_entries", "pad"}},
	{DRMAmdgpuInfoVBIOS{}, "struct drm_amdgpu_info_vbios", SizeofDRMAmdgpuInfoVBIOS, []string{"name", "vbios_pn", "version", "pad", "vbios_ver_str", "date"}},
	{DRMAmdgpuInfoVideoCaps{}, "struct drm_amdgpu_info_video_caps", SizeofDRMAmdgpuInfoVideoCaps, []string{"codec_info"}},
	{DRMAmdgpuInfoVideoCodecInfo{}, "struct drm_amdgpu_info_video_codec_info", 24, []string{"valid", "max_width", "max_height", "max_pixels_per_frame", "max_level", "pad"}},
	{DRMAmdgpuGemCreate{}, "union drm_amdgpu_gem_create", SizeofDRMAmdgpuGemCreate, []string{"in.bo_size", "in.alignment", "in.domains", "in.domain_flags"}},
	{DRMAmdgpuGemMmap{}, "union drm_amdgpu_gem_mmap", SizeofDRMAmdgpuGemMmap, []string{"in.handle", "in._pad"}},
	{DRMAmdgpuCtx{}, "union drm_amdgpu_ctx", SizeofDRMAmdgpuCtx, []string{"in.op", "in.flags", "in.ctx_id", "in.priority"}},
	{DRMAmdgpuBOList{}, "union drm_amdgpu_bo_list", SizeofDRMAmdgpuBOList, []string{"in.operation", "in.list_handle", "in.bo_number", "in.bo_info_size", "in.bo_info_ptr"}},
	{DRMAmdgpuCS{}, "union drm_amdgpu_cs", SizeofDRMAmdgpuCS, []string{"in.ctx_id", "in.bo_list_handle", "in.num_chunks", "in.flags", "in.chunks"}},
	{DRMAmdgpuGemMetadata{}, "struct drm_amdgpu_gem_metadata", SizeofDRMAmdgpuGemMetadata, []string{"handle", "op", "data.flags", "data.tiling_info", "data.data_size_bytes", "data.data", ""}},
	{DRMAmdgpuGemWaitIdle{}, "union drm_amdgpu_gem_wait_idle", SizeofDRMAmdgpuGemWaitIdle, []string{"in.handle", "in.flags", "in.timeout"}},
	{DRMAmdgpuGemVA{}, "struct drm_amdgpu_gem_va", SizeofDRMAmdgpuGemVA, []string{"handle", "_pad", "operation", "flags", "va_address", "offset_in_bo", "map_size"}},
	{DRMAmdgpuWaitCS{}, "union drm_amdgpu_wait_cs", SizeofDRMAmdgpuWaitCS, []string{"in.handle", "in.timeout", "in.ip_type", "in.ip_instance", "in.ring", "in.ctx_id"}},
	{DRMAmdgpuGemOp{}, "struct drm_amdgpu_gem_op", SizeofDRMAmdgpuGemOp, []string{"handle", "op", "value"}},
	{DRMAmdgpuGemUserptr{}, "struct drm_amdgpu_gem_userptr", SizeofDRMAmdgpuGemUserptr, []string{"addr", "size", "flags", "handle"}},
	{DRMAmdgpuWaitFences{}, "union drm_amdgpu_wait_fences", SizeofDRMAmdgpuWaitFences, []string{"in.fences", "in.fence_count", "in.wait_all", "in.timeout_ns"}},
	{DRMAmdgpuVM{}, "union drm_amdgpu_vm", SizeofDRMAmdgpuVM, []string{"in.op", "in.flags"}},
	{DRMAmdgpuFence{}, "struct drm_amdgpu_fence", 24, []string{"ctx_id", "ip_type", "ip_instance", "ring", "seq_no"}},
	{DRMAmdgpuFenceToHandle{}, "union drm_amdgpu_fence_to_handle", SizeofDRMAmdgpuFenceToHandle, []string{"in.fence", "in.what", "in.pad"}},
	{DRMAmdgpuSched{}, "union drm_amdgpu_sched", SizeofDRMAmdgpuSched, []string{"in.op", "in.fd", "in.priority", "in.ctx_id"}},
}

// drmCommands and drmConsts are compared by value with the C macros of the same name.
var drmCommands = map[string]uint32{
	"DRM_IOCTL_VERSION": DRM_IOCTL_VERSION, "DRM_IOCTL_GET_CLIENT": DRM_IOCTL_GET_CLIENT,
	"DRM_IOCTL_GEM_CLOSE": DRM_IOCTL_GEM_CLOSE, "DRM_IOCTL_GET_CAP": DRM_IOCTL_GET_CAP,
	"DRM_IOCTL_SET_CLIENT_CAP": DRM_IOCTL_SET_CLIENT_CAP, "DRM_IOCTL_SET_MASTER": DRM_IOCTL_SET_MASTER,
	"DRM_IOCTL_DROP_MASTER": DRM_IOCTL_DROP_MASTER, "DRM_IOCTL_PRIME_HANDLE_TO_FD": DRM_IOCTL_PRIME_HANDLE_TO_FD,
	"DRM_IOCTL_PRIME_FD_TO_HANDLE": DRM_IOCTL_PRIME_FD_TO_HANDLE, "DRM_IOCTL_SYNCOBJ_CREATE": DRM_IOCTL_SYNCOBJ_CREATE,
	"DRM_IOCTL_SYNCOBJ_DESTROY": DRM_IOCTL_SYNCOBJ_DESTROY, "DRM_IOCTL_AMDGPU_GEM_CREATE": DRM_IOCTL_AMDGPU_GEM_CREATE,
	"DRM_IOCTL_AMDGPU_GEM_MMAP": DRM_IOCTL_AMDGPU_GEM_MMAP, "DRM_IOCTL_AMDGPU_CTX": DRM_IOCTL_AMDGPU_CTX,
	"DRM_IOCTL_AMDGPU_BO_LIST": DRM_IOCTL_AMDGPU_BO_LIST, "DRM_IOCTL_AMDGPU_CS": DRM_IOCTL_AMDGPU_CS,
	"DRM_IOCTL_AMDGPU_INFO": DRM_IOCTL_AMDGPU_INFO, "DRM_IOCTL_AMDGPU_GEM_METADATA": DRM_IOCTL_AMDGPU_GEM_METADATA,
	"DRM_IOCTL_AMDGPU_GEM_WAIT_IDLE": DRM_IOCTL_AMDGPU_GEM_WAIT_IDLE, "DRM_IOCTL_AMDGPU_GEM_VA": DRM_IOCTL_AMDGPU_GEM_VA,
	"DRM_IOCTL_AMDGPU_WAIT_CS": DRM_IOCTL_AMDGPU_WAIT_CS, "DRM_IOCTL_AMDGPU_GEM_OP": DRM_IOCTL_AMDGPU_GEM_OP,
	"DRM_IOCTL_AMDGPU_GEM_USERPTR": DRM_IOCTL_AMDGPU_GEM_USERPTR, "DRM_IOCTL_AMDGPU_WAIT_FENCES": DRM_IOCTL_AMDGPU_WAIT_FENCES,
	"DRM_IOCTL_AMDGPU_VM": DRM_IOCTL_AMDGPU_VM, "DRM_IOCTL_AMDGPU_FENCE_TO_HANDLE": DRM_IOCTL_AMDGPU_FENCE_TO_HANDLE,
	"DRM_IOCTL_AMDGPU_SCHED": DRM_IOCTL_AMDGPU_SCHED,
}

var drmConsts = map[string]int64{
	"DRM_IOCTL_BASE": DRMIOCTLBase, "DRM_COMMAND_BASE": DRMCommandBase, "DRM_COMMAND_END": DRMCommandEnd,
	"DRM_AMDGPU_GEM_CREATE": DRM_AMDGPU_GEM_CREATE, "DRM_AMDGPU_GEM_MMAP": DRM_AMDGPU_GEM_MMAP, "DRM_AMDGPU_CTX": DRM_AMDGPU_CTX,
	"DRM_AMDGPU_BO_LIST": DRM_AMDGPU_BO_LIST, "DRM_AMDGPU_CS": DRM_AMDGPU_CS, "DRM_AMDGPU_INFO": DRM_AMDGPU_INFO,
	"DRM_AMDGPU_GEM_METADATA": DRM_AMDGPU_GEM_METADATA, "DRM_AMDGPU_GEM_WAIT_IDLE": DRM_AMDGPU_GEM_WAIT_IDLE,
	"DRM_AMDGPU_GEM_VA": DRM_AMDGPU_GEM_VA, "DRM_AMDGPU_WAIT_CS": DRM_AMDGPU_WAIT_CS, "DRM_AMDGPU_GEM_OP": DRM_AMDGPU_GEM_OP,
	"DRM_AMDGPU_GEM_USERPTR": DRM_AMDGPU_GEM_USERPTR, "DRM_AMDGPU_WAIT_FENCES": DRM_AMDGPU_WAIT_FENCES,
	"DRM_AMDGPU_VM": DRM_AMDGPU_VM, "DRM_AMDGPU_FENCE_TO_HANDLE": DRM_AMDGPU_FENCE_TO_HANDLE, "DRM_AMDGPU_SCHED": DRM_AMDGPU_SCHED,
	"DRM_CAP_DUMB_BUFFER": DRM_CAP_DUMB_BUFFER, "DRM_CAP_VBLANK_HIGH_CRTC": DRM_CAP_VBLANK_HIGH_CRTC,
	"DRM_CAP_DUMB_PREFERRED_DEPTH": DRM_CAP_DUMB_PREFERRED_DEPTH, "DRM_CAP_DUMB_PREFER_SHADOW": DRM_CAP_DUMB_PREFER_SHADOW,
	"DRM_CAP_PRIME": DRM_CAP_PRIME, "DRM_CAP_TIMESTAMP_MONOTONIC": DRM_CAP_TIMESTAMP_MONOTONIC,
	"DRM_CAP_ASYNC_PAGE_FLIP": DRM_CAP_ASYNC_PAGE_FLIP, "DRM_CAP_CURSOR_WIDTH": DRM_CAP_CURSOR_WIDTH,
	"DRM_CAP_CURSOR_HEIGHT": DRM_CAP_CURSOR_HEIGHT, "DRM_CAP_ADDFB2_MODIFIERS": DRM_CAP_ADDFB2_MODIFIERS,
	"DRM_CAP_PAGE_FLIP_TARGET": DRM_CAP_PAGE_FLIP_TARGET, "DRM_CAP_CRTC_IN_VBLANK_EVENT": DRM_CAP_CRTC_IN_VBLANK_EVENT,
	"DRM_CAP_SYNCOBJ": DRM_CAP_SYNCOBJ, "DRM_CAP_SYNCOBJ_TIMELINE": DRM_CAP_SYNCOBJ_TIMELINE,
	"DRM_PRIME_CAP_IMPORT": DRM_PRIME_CAP_IMPORT, "DRM_PRIME_CAP_EXPORT": DRM_PRIME_CAP_EXPORT,
	"DRM_CLIENT_CAP_STEREO_3D": DRM_CLIENT_CAP_STEREO_3D, "DRM_CLIENT_CAP_UNIVERSAL_PLANES": DRM_CLIENT_CAP_UNIVERSAL_PLANES,
	"DRM_CLIENT_CAP_ATOMIC": DRM_CLIENT_CAP_ATOMIC, "DRM_CLIENT_CAP_ASPECT_RATIO": DRM_CLIENT_CAP_ASPECT_RATIO,
	"DRM_CLIENT_CAP_WRITEBACK_CONNECTORS": DRM_CLIENT_CAP_WRITEBACK_CONNECTORS, "DRM_RDWR": DRM_RDWR, "DRM_CLOEXEC": DRM_CLOEXEC,
	"AMDGPU_INFO_ACCEL_WORKING": AMDGPU_INFO_ACCEL_WORKING, "AMDGPU_INFO_CRTC_FROM_ID": AMDGPU_INFO_CRTC_FROM_ID,
	"AMDGPU_INFO_HW_IP_INFO": AMDGPU_INFO_HW_IP_INFO, "AMDGPU_INFO_HW_IP_COUNT": AMDGPU_INFO_HW_IP_COUNT,
	"AMDGPU_INFO_TIMESTAMP": AMDGPU_INFO_TIMESTAMP, "AMDGPU_INFO_FW_VERSION": AMDGPU_INFO_FW_VERSION,
	"AMDGPU_INFO_NUM_BYTES_MOVED": AMDGPU_INFO_NUM_BYTES_MOVED, "AMDGPU_INFO_VRAM_USAGE": AMDGPU_INFO_VRAM_USAGE,
	"AMDGPU_INFO_GTT_USAGE": AMDGPU_INFO_GTT_USAGE, "AMDGPU_INFO_GDS_CONFIG": AMDGPU_INFO_GDS_CONFIG,
	"AMDGPU_INFO_VRAM_GTT": AMDGPU_INFO_VRAM_GTT, "AMDGPU_INFO_READ_MMR_REG": AMDGPU_INFO_READ_MMR_REG,
	"AMDGPU_INFO_DEV_INFO": AMDGPU_INFO_DEV_INFO, "AMDGPU_INFO_VIS_VRAM_USAGE": AMDGPU_INFO_VIS_VRAM_USAGE,
	"AMDGPU_INFO_NUM_EVICTIONS": AMDGPU_INFO_NUM_EVICTIONS, "AMDGPU_INFO_MEMORY": AMDGPU_INFO_MEMORY,
	"AMDGPU_INFO_VCE_CLOCK_TABLE": AMDGPU_INFO_VCE_CLOCK_TABLE, "AMDGPU_INFO_VBIOS": AMDGPU_INFO_VBIOS,
	"AMDGPU_INFO_NUM_HANDLES": AMDGPU_INFO_NUM_HANDLES, "AMDGPU_INFO_SENSOR": AMDGPU_INFO_SENSOR,
	"AMDGPU_INFO_NUM_VRAM_CPU_PAGE_FAULTS": AMDGPU_INFO_NUM_VRAM_CPU_PAGE_FAULTS,
	"AMDGPU_INFO_VRAM_LOST_COUNTER":        AMDGPU_INFO_VRAM_LOST_COUNTER, "AMDGPU_INFO_RAS_ENABLED_FEATURES": AMDGPU_INFO_RAS_ENABLED_FEATURES,
	"AMDGPU_INFO_VIDEO_CAPS": AMDGPU_INFO_VIDEO_CAPS,
	"AMDGPU_INFO_FW_VCE":     AMDGPU_INFO_FW_VCE, "AMDGPU_INFO_FW_UVD": AMDGPU_INFO_FW_UVD, "AMDGPU_INFO_FW_GMC": AMDGPU_INFO_FW_GMC,
	"AMDGPU_INFO_FW_GFX_ME": AMDGPU_INFO_FW_GFX_ME, "AMDGPU_INFO_FW_GFX_PFP": AMDGPU_INFO_FW_GFX_PFP,
	"AMDGPU_INFO_FW_GFX_CE": AMDGPU_INFO_FW_GFX_CE, "AMDGPU_INFO_FW_GFX_RLC": AMDGPU_INFO_FW_GFX_RLC,
	"AMDGPU_INFO_FW_GFX_MEC": AMDGPU_INFO_FW_GFX_MEC, "AMDGPU_INFO_FW_SMC": AMDGPU_INFO_FW_SMC,
	"AMDGPU_INFO_FW_SDMA": AMDGPU_INFO_FW_SDMA, "AMDGPU_INFO_FW_SOS": AMDGPU_INFO_FW_SOS, "AMDGPU_INFO_FW_ASD": AMDGPU_INFO_FW_ASD,
	"AMDGPU_INFO_FW_VCN": AMDGPU_INFO_FW_VCN, "AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_CNTL": AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_CNTL,
	"AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_GPM_MEM": AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_GPM_MEM,
	"AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_SRM_MEM": AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_SRM_MEM,
	"AMDGPU_INFO_FW_DMCU":                         AMDGPU_INFO_FW_DMCU, "AMDGPU_INFO_FW_TA": AMDGPU_INFO_FW_TA,
	"AMDGPU_INFO_FW_DMCUB": AMDGPU_INFO_FW_DMCUB, "AMDGPU_INFO_FW_TOC": AMDGPU_INFO_FW_TOC,
	"AMDGPU_INFO_VBIOS_SIZE": AMDGPU_INFO_VBIOS_SIZE, "AMDGPU_INFO_VBIOS_IMAGE": AMDGPU_INFO_VBIOS_IMAGE,
	"AMDGPU_INFO_VBIOS_INFO": AMDGPU_INFO_VBIOS_INFO, "AMDGPU_INFO_SENSOR_GFX_SCLK": AMDGPU_INFO_SENSOR_GFX_SCLK,
	"AMDGPU_INFO_SENSOR_STABLE_PSTATE_GFX_MCLK": AMDGPU_INFO_SENSOR_STABLE_PSTATE_GFX_MCLK,
	"AMDGPU_INFO_VIDEO_CAPS_DECODE":             AMDGPU_INFO_VIDEO_CAPS_DECODE, "AMDGPU_INFO_VIDEO_CAPS_ENCODE": AMDGPU_INFO_VIDEO_CAPS_ENCODE,
	"AMDGPU_INFO_VIDEO_CAPS_CODEC_IDX_COUNT": AMDGPU_INFO_VIDEO_CAPS_CODEC_IDX_COUNT,
	"AMDGPU_VCE_CLOCK_TABLE_ENTRIES":         AMDGPU_VCE_CLOCK_TABLE_ENTRIES,
	"AMDGPU_INFO_MMR_SE_INDEX_SHIFT":         AMDGPU_INFO_MMR_SE_INDEX_SHIFT, "AMDGPU_INFO_MMR_SE_INDEX_MASK": AMDGPU_INFO_MMR_SE_INDEX_MASK,
	"AMDGPU_INFO_MMR_SH_INDEX_SHIFT": AMDGPU_INFO_MMR_SH_INDEX_SHIFT, "AMDGPU_INFO_MMR_SH_INDEX_MASK": AMDGPU_INFO_MMR_SH_INDEX_MASK,
	"AMDGPU_IDS_FLAGS_FUSION": AMDGPU_IDS_FLAGS_FUSION, "AMDGPU_IDS_FLAGS_PREEMPTION": AMDGPU_IDS_FLAGS_PREEMPTION,
	"AMDGPU_IDS_FLAGS_TMZ": AMDGPU_IDS_FLAGS_TMZ, "AMDGPU_HW_IP_INSTANCE_MAX_COUNT": AMDGPU_HW_IP_INSTANCE_MAX_COUNT,
	"AMDGPU_VA_OP_MAP": AMDGPU_VA_OP_MAP, "AMDGPU_VA_OP_UNMAP": AMDGPU_VA_OP_UNMAP, "AMDGPU_VA_OP_CLEAR": AMDGPU_VA_OP_CLEAR,
	"AMDGPU_VA_OP_REPLACE": AMDGPU_VA_OP_REPLACE, "AMDGPU_GEM_DOMAIN_CPU": AMDGPU_GEM_DOMAIN_CPU,
	"AMDGPU_GEM_DOMAIN_GTT": AMDGPU_GEM_DOMAIN_GTT, "AMDGPU_GEM_DOMAIN_VRAM": AMDGPU_GEM_DOMAIN_VRAM,
	"AMDGPU_VRAM_TYPE_UNKNOWN": AMDGPU_VRAM_TYPE_UNKNOWN, "AMDGPU_VRAM_TYPE_HBM": AMDGPU_VRAM_TYPE_HBM,
	"AMDGPU_VRAM_TYPE_GDDR6": AMDGPU_VRAM_TYPE_GDDR6, "AMDGPU_FAMILY_UNKNOWN": AMDGPU_FAMILY_UNKNOWN,
	"AMDGPU_FAMILY_SI": AMDGPU_FAMILY_SI, "AMDGPU_FAMILY_CI": AMDGPU_FAMILY_CI, "AMDGPU_FAMILY_KV": AMDGPU_FAMILY_KV,
	"AMDGPU_FAMILY_VI": AMDGPU_FAMILY_VI, "AMDGPU_FAMILY_CZ": AMDGPU_FAMILY_CZ, "AMDGPU_FAMILY_AI": AMDGPU_FAMILY_AI,
	"AMDGPU_FAMILY_RV": AMDGPU_FAMILY_RV, "AMDGPU_FAMILY_NV": AMDGPU_FAMILY_NV, "AMDGPU_FAMILY_VGH": AMDGPU_FAMILY_VGH,
	"AMDGPU_FAMILY_YC": AMDGPU_FAMILY_YC,
	"AMDGPU_HW_IP_GFX": AMDGPU_HW_IP_GFX, "AMDGPU_HW_IP_COMPUTE": AMDGPU_HW_IP_COMPUTE, "AMDGPU_HW_IP_DMA": AMDGPU_HW_IP_DMA,
	"AMDGPU_HW_IP_UVD": AMDGPU_HW_IP_UVD, "AMDGPU_HW_IP_VCE": AMDGPU_HW_IP_VCE, "AMDGPU_HW_IP_UVD_ENC": AMDGPU_HW_IP_UVD_ENC,
	"AMDGPU_HW_IP_VCN_DEC": AMDGPU_HW_IP_VCN_DEC, "AMDGPU_HW_IP_VCN_ENC": AMDGPU_HW_IP_VCN_ENC,
	"AMDGPU_HW_IP_VCN_JPEG": AMDGPU_HW_IP_VCN_JPEG, "AMDGPU_HW_IP_NUM": AMDGPU_HW_IP_NUM,
}

// TestDRMSizesMatchConstants checks the Sizeof constants (used in the command words) against the Go
// layout, without any C compiler.
func TestDRMSizesMatchConstants(t *testing.T) {
	for _, s := range drmStructs {
		if got := binary.Size(s.goType); got != s.size {
			t.Errorf("%T: binary.Size %d, constant %d", s.goType, got, s.size)
		}
		if got := int(reflect.TypeOf(s.goType).Size()); got != s.size {
			t.Errorf("%T: Go size %d, constant %d", s.goType, got, s.size)
		}
		if n := reflect.TypeOf(s.goType).NumField(); n != len(s.fields) {
			t.Errorf("%T: %d Go fields, %d C names listed", s.goType, n, len(s.fields))
		}
	}
}

// TestDRMABIAgainstLibdrm compiles a C program against libdrm-dev's <libdrm/drm.h> and
// <libdrm/amdgpu_drm.h> and compares every size, field offset, command word and constant.
func TestDRMABIAgainstLibdrm(t *testing.T) {
	if _, err := os.Stat("/usr/include/libdrm/amdgpu_drm.h"); err != nil {
		t.Skip("libdrm-dev is not installed (/usr/include/libdrm/amdgpu_drm.h missing)")
	}
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed")
	}
	var c strings.Builder
	c.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include <fcntl.h>\n#include <libdrm/drm.h>\n#include <libdrm/amdgpu_drm.h>\nint main(void) {\n")
	want := map[string]int64{}
	for _, s := range drmStructs {
		rt := reflect.TypeOf(s.goType)
		fmt.Fprintf(&c, "printf(\"S %%s %%zu\\n\", %q, sizeof(%s));\n", s.c, s.c)
		want["S "+s.c] = int64(s.size)
		for i, f := range s.fields {
			if f == "" {
				continue
			}
			fmt.Fprintf(&c, "printf(\"O %%s %%zu\\n\", %q, offsetof(%s, %s));\n", s.c+"."+f, s.c, f)
			want["O "+s.c+"."+f] = int64(rt.Field(i).Offset)
		}
	}
	for name, v := range drmCommands {
		fmt.Fprintf(&c, "printf(\"C %%s %%lu\\n\", %q, (unsigned long)%s);\n", name, name)
		want["C "+name] = int64(v)
	}
	for name, v := range drmConsts {
		fmt.Fprintf(&c, "printf(\"K %%s %%lld\\n\", %q, (long long)(%s));\n", name, name)
		want["K "+name] = v
	}
	c.WriteString("return 0;\n}\n")
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "drm.c"), filepath.Join(dir, "drm")
	if err := os.WriteFile(src, []byte(c.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-Wall", "-Werror", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		i := strings.LastIndexByte(line, ' ')
		key, val := line[:i], line[i+1:]
		got, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			t.Fatalf("bad line %q", line)
		}
		w, ok := want[key]
		if !ok {
			t.Fatalf("unexpected line %q", line)
		}
		seen++
		if got != w {
			t.Errorf("%s: C %d (%#x), Go %d (%#x)", key, got, got, w, w)
		}
	}
	if seen != len(want) {
		t.Errorf("C printed %d values, want %d", seen, len(want))
	}
}
