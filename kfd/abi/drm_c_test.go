package abi

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// drmNested are the DRM structs that are not ioctl arguments themselves (what AMDGPU_INFO queries
// return, members of arguments), with the size constant each has. The argument structs come from
// DRMIoctls, their size from the command word.
var drmNested = []struct {
	typ  reflect.Type
	c    string
	size int
}{
	{reflect.TypeFor[DRMAmdgpuQueryFW](), "struct drm_amdgpu_query_fw", SizeofDRMAmdgpuQueryFW},
	{reflect.TypeFor[DRMAmdgpuInfoDevice](), "struct drm_amdgpu_info_device", SizeofDRMAmdgpuInfoDevice},
	{reflect.TypeFor[DRMAmdgpuInfoVRAMGTT](), "struct drm_amdgpu_info_vram_gtt", SizeofDRMAmdgpuInfoVRAMGTT},
	{reflect.TypeFor[DRMAmdgpuHeapInfo](), "struct drm_amdgpu_heap_info", SizeofDRMAmdgpuHeapInfo},
	{reflect.TypeFor[DRMAmdgpuMemoryInfo](), "struct drm_amdgpu_memory_info", SizeofDRMAmdgpuMemoryInfo},
	{reflect.TypeFor[DRMAmdgpuInfoFirmware](), "struct drm_amdgpu_info_firmware", SizeofDRMAmdgpuInfoFirmware},
	{reflect.TypeFor[DRMAmdgpuInfoHWIP](), "struct drm_amdgpu_info_hw_ip", SizeofDRMAmdgpuInfoHWIP},
	{reflect.TypeFor[DRMAmdgpuInfoNumHandles](), "struct drm_amdgpu_info_num_handles", SizeofDRMAmdgpuInfoNumHandles},
	{reflect.TypeFor[DRMAmdgpuInfoGDS](), "struct drm_amdgpu_info_gds", SizeofDRMAmdgpuInfoGDS},
	{reflect.TypeFor[DRMAmdgpuInfoVCEClockTableEntry](), "struct drm_amdgpu_info_vce_clock_table_entry", 16},
	{reflect.TypeFor[DRMAmdgpuInfoVCEClockTable](), "struct drm_amdgpu_info_vce_clock_table", SizeofDRMAmdgpuInfoVCEClockTable},
	{reflect.TypeFor[DRMAmdgpuInfoVBIOS](), "struct drm_amdgpu_info_vbios", SizeofDRMAmdgpuInfoVBIOS},
	{reflect.TypeFor[DRMAmdgpuInfoVideoCaps](), "struct drm_amdgpu_info_video_caps", SizeofDRMAmdgpuInfoVideoCaps},
	{reflect.TypeFor[DRMAmdgpuInfoVideoCodecInfo](), "struct drm_amdgpu_info_video_codec_info", 24},
	{reflect.TypeFor[DRMAmdgpuFence](), "struct drm_amdgpu_fence", SizeofDRMAmdgpuFence},
	{reflect.TypeFor[DRMAmdgpuGemCreateOut](), "struct drm_amdgpu_gem_create_out", SizeofDRMAmdgpuGemCreateOut},
	{reflect.TypeFor[DRMAmdgpuGemCreateIn](), "struct drm_amdgpu_gem_create_in", SizeofDRMAmdgpuGemCreateIn},
	{reflect.TypeFor[DRMAmdgpuGemMmapOut](), "struct drm_amdgpu_gem_mmap_out", SizeofDRMAmdgpuGemMmapOut},
	{reflect.TypeFor[DRMAmdgpuCtxOutAlloc](), "__typeof__(((union drm_amdgpu_ctx_out *)0)->alloc)", SizeofDRMAmdgpuCtxOutAlloc},
	{reflect.TypeFor[DRMAmdgpuCtxOutState](), "__typeof__(((union drm_amdgpu_ctx_out *)0)->state)", SizeofDRMAmdgpuCtxOutState},
	{reflect.TypeFor[DRMAmdgpuBOListEntry](), "struct drm_amdgpu_bo_list_entry", SizeofDRMAmdgpuBOListEntry},
	{reflect.TypeFor[DRMAmdgpuBOListOut](), "struct drm_amdgpu_bo_list_out", SizeofDRMAmdgpuBOListOut},
	{reflect.TypeFor[DRMAmdgpuBOListIn](), "struct drm_amdgpu_bo_list_in", SizeofDRMAmdgpuBOListIn},
	{reflect.TypeFor[DRMAmdgpuCSChunk](), "struct drm_amdgpu_cs_chunk", SizeofDRMAmdgpuCSChunk},
	{reflect.TypeFor[DRMAmdgpuCSChunkIB](), "struct drm_amdgpu_cs_chunk_ib", SizeofDRMAmdgpuCSChunkIB},
	{reflect.TypeFor[DRMAmdgpuCSChunkDep](), "struct drm_amdgpu_cs_chunk_dep", SizeofDRMAmdgpuCSChunkDep},
	{reflect.TypeFor[DRMAmdgpuCSChunkFence](), "struct drm_amdgpu_cs_chunk_fence", SizeofDRMAmdgpuCSChunkFence},
	{reflect.TypeFor[DRMAmdgpuCSChunkSem](), "struct drm_amdgpu_cs_chunk_sem", SizeofDRMAmdgpuCSChunkSem},
	{reflect.TypeFor[DRMAmdgpuCSChunkSyncobj](), "struct drm_amdgpu_cs_chunk_syncobj", SizeofDRMAmdgpuCSChunkSyncobj},
	{reflect.TypeFor[DRMAmdgpuCSOut](), "struct drm_amdgpu_cs_out", SizeofDRMAmdgpuCSOut},
	{reflect.TypeFor[DRMAmdgpuWaitCSOut](), "struct drm_amdgpu_wait_cs_out", SizeofDRMAmdgpuWaitCSOut},
	{reflect.TypeFor[DRMAmdgpuWaitFencesOut](), "struct drm_amdgpu_wait_fences_out", SizeofDRMAmdgpuWaitFencesOut},
	{reflect.TypeFor[DRMAmdgpuGemWaitIdleOut](), "struct drm_amdgpu_gem_wait_idle_out", SizeofDRMAmdgpuGemWaitIdleOut},
}

// drmStruct is a Go DRM type with its C type, its C size, and the C member path of every Go field
// in order, from the c tags ("" for padding the C side leaves implicit; for unions, the members of
// the "in" variant).
type drmStruct struct {
	typ    reflect.Type
	c      string
	size   int
	fields []string
}

// drmStructs lists the argument types of DRMIoctls (each once) and then the nested ones.
func drmStructs(t *testing.T) []drmStruct {
	var out []drmStruct
	seen := map[reflect.Type]bool{}
	add := func(typ reflect.Type, c string, size int) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		s := drmStruct{typ: typ, c: c, size: size}
		for i := 0; i < typ.NumField(); i++ {
			name, ok := typ.Field(i).Tag.Lookup("c")
			if !ok {
				t.Errorf("%s.%s has no c tag", typ.Name(), typ.Field(i).Name)
			}
			s.fields = append(s.fields, name)
		}
		out = append(out, s)
	}
	for _, io := range DRMIoctls {
		if io.Arg != nil {
			add(io.Arg, io.C, int(IOCSize(io.Cmd)))
		}
	}
	for _, n := range drmNested {
		add(n.typ, n.c, n.size)
	}
	return out
}

// newerThanLibdrm are the commands of DRMIoctls that libdrm 2.4.114's drm.h does not define yet,
// with their words as Linux 6.10's include/uapi/drm/drm.h builds them.
var newerThanLibdrm = map[string]uint32{"DRM_IOCTL_SYNCOBJ_EVENTFD": 0xc01864cf, "DRM_IOCTL_MODE_CLOSEFB": 0xc00864d0}

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
	// drm_gem.go
	"AMDGPU_GEM_DOMAIN_GDS": AMDGPU_GEM_DOMAIN_GDS, "AMDGPU_GEM_DOMAIN_GWS": AMDGPU_GEM_DOMAIN_GWS,
	"AMDGPU_GEM_DOMAIN_OA": AMDGPU_GEM_DOMAIN_OA, "AMDGPU_GEM_DOMAIN_MASK": AMDGPU_GEM_DOMAIN_MASK,
	"AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED":  AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED,
	"AMDGPU_GEM_CREATE_NO_CPU_ACCESS":        AMDGPU_GEM_CREATE_NO_CPU_ACCESS,
	"AMDGPU_GEM_CREATE_CPU_GTT_USWC":         AMDGPU_GEM_CREATE_CPU_GTT_USWC,
	"AMDGPU_GEM_CREATE_VRAM_CLEARED":         AMDGPU_GEM_CREATE_VRAM_CLEARED,
	"AMDGPU_GEM_CREATE_VRAM_CONTIGUOUS":      AMDGPU_GEM_CREATE_VRAM_CONTIGUOUS,
	"AMDGPU_GEM_CREATE_VM_ALWAYS_VALID":      AMDGPU_GEM_CREATE_VM_ALWAYS_VALID,
	"AMDGPU_GEM_CREATE_EXPLICIT_SYNC":        AMDGPU_GEM_CREATE_EXPLICIT_SYNC,
	"AMDGPU_GEM_CREATE_CP_MQD_GFX9":          AMDGPU_GEM_CREATE_CP_MQD_GFX9,
	"AMDGPU_GEM_CREATE_VRAM_WIPE_ON_RELEASE": AMDGPU_GEM_CREATE_VRAM_WIPE_ON_RELEASE,
	"AMDGPU_GEM_CREATE_ENCRYPTED":            AMDGPU_GEM_CREATE_ENCRYPTED,
	"AMDGPU_GEM_CREATE_PREEMPTIBLE":          AMDGPU_GEM_CREATE_PREEMPTIBLE,
	"AMDGPU_BO_LIST_OP_CREATE":               AMDGPU_BO_LIST_OP_CREATE, "AMDGPU_BO_LIST_OP_DESTROY": AMDGPU_BO_LIST_OP_DESTROY,
	"AMDGPU_BO_LIST_OP_UPDATE": AMDGPU_BO_LIST_OP_UPDATE, "AMDGPU_CTX_OP_ALLOC_CTX": AMDGPU_CTX_OP_ALLOC_CTX,
	"AMDGPU_CTX_OP_FREE_CTX": AMDGPU_CTX_OP_FREE_CTX, "AMDGPU_CTX_OP_QUERY_STATE": AMDGPU_CTX_OP_QUERY_STATE,
	"AMDGPU_CTX_OP_QUERY_STATE2": AMDGPU_CTX_OP_QUERY_STATE2, "AMDGPU_CTX_OP_GET_STABLE_PSTATE": AMDGPU_CTX_OP_GET_STABLE_PSTATE,
	"AMDGPU_CTX_OP_SET_STABLE_PSTATE": AMDGPU_CTX_OP_SET_STABLE_PSTATE, "AMDGPU_CTX_NO_RESET": AMDGPU_CTX_NO_RESET,
	"AMDGPU_CTX_GUILTY_RESET": AMDGPU_CTX_GUILTY_RESET, "AMDGPU_CTX_INNOCENT_RESET": AMDGPU_CTX_INNOCENT_RESET,
	"AMDGPU_CTX_UNKNOWN_RESET": AMDGPU_CTX_UNKNOWN_RESET, "AMDGPU_CTX_QUERY2_FLAGS_RESET": AMDGPU_CTX_QUERY2_FLAGS_RESET,
	"AMDGPU_CTX_QUERY2_FLAGS_VRAMLOST": AMDGPU_CTX_QUERY2_FLAGS_VRAMLOST, "AMDGPU_CTX_QUERY2_FLAGS_GUILTY": AMDGPU_CTX_QUERY2_FLAGS_GUILTY,
	"AMDGPU_CTX_QUERY2_FLAGS_RAS_CE": AMDGPU_CTX_QUERY2_FLAGS_RAS_CE, "AMDGPU_CTX_QUERY2_FLAGS_RAS_UE": AMDGPU_CTX_QUERY2_FLAGS_RAS_UE,
	"AMDGPU_CTX_PRIORITY_UNSET": AMDGPU_CTX_PRIORITY_UNSET, "AMDGPU_CTX_PRIORITY_VERY_LOW": AMDGPU_CTX_PRIORITY_VERY_LOW,
	"AMDGPU_CTX_PRIORITY_LOW": AMDGPU_CTX_PRIORITY_LOW, "AMDGPU_CTX_PRIORITY_NORMAL": AMDGPU_CTX_PRIORITY_NORMAL,
	"AMDGPU_CTX_PRIORITY_HIGH": AMDGPU_CTX_PRIORITY_HIGH, "AMDGPU_CTX_PRIORITY_VERY_HIGH": AMDGPU_CTX_PRIORITY_VERY_HIGH,
	"AMDGPU_CTX_STABLE_PSTATE_FLAGS_MASK": AMDGPU_CTX_STABLE_PSTATE_FLAGS_MASK,
	"AMDGPU_CTX_STABLE_PSTATE_NONE":       AMDGPU_CTX_STABLE_PSTATE_NONE, "AMDGPU_CTX_STABLE_PSTATE_PEAK": AMDGPU_CTX_STABLE_PSTATE_PEAK,
	"AMDGPU_VM_OP_RESERVE_VMID": AMDGPU_VM_OP_RESERVE_VMID, "AMDGPU_VM_OP_UNRESERVE_VMID": AMDGPU_VM_OP_UNRESERVE_VMID,
	"AMDGPU_GEM_METADATA_OP_SET_METADATA": AMDGPU_GEM_METADATA_OP_SET_METADATA,
	"AMDGPU_GEM_METADATA_OP_GET_METADATA": AMDGPU_GEM_METADATA_OP_GET_METADATA,
	"AMDGPU_GEM_OP_GET_GEM_CREATE_INFO":   AMDGPU_GEM_OP_GET_GEM_CREATE_INFO, "AMDGPU_GEM_OP_SET_PLACEMENT": AMDGPU_GEM_OP_SET_PLACEMENT,
	"AMDGPU_VM_DELAY_UPDATE": AMDGPU_VM_DELAY_UPDATE, "AMDGPU_VM_PAGE_READABLE": AMDGPU_VM_PAGE_READABLE,
	"AMDGPU_VM_PAGE_WRITEABLE": AMDGPU_VM_PAGE_WRITEABLE, "AMDGPU_VM_PAGE_EXECUTABLE": AMDGPU_VM_PAGE_EXECUTABLE,
	"AMDGPU_VM_PAGE_PRT": AMDGPU_VM_PAGE_PRT, "AMDGPU_VM_MTYPE_MASK": AMDGPU_VM_MTYPE_MASK,
	"AMDGPU_CHUNK_ID_IB": AMDGPU_CHUNK_ID_IB, "AMDGPU_CHUNK_ID_FENCE": AMDGPU_CHUNK_ID_FENCE,
	"AMDGPU_CHUNK_ID_DEPENDENCIES": AMDGPU_CHUNK_ID_DEPENDENCIES, "AMDGPU_CHUNK_ID_SYNCOBJ_IN": AMDGPU_CHUNK_ID_SYNCOBJ_IN,
	"AMDGPU_CHUNK_ID_SYNCOBJ_OUT": AMDGPU_CHUNK_ID_SYNCOBJ_OUT, "AMDGPU_CHUNK_ID_BO_HANDLES": AMDGPU_CHUNK_ID_BO_HANDLES,
	"AMDGPU_CHUNK_ID_SCHEDULED_DEPENDENCIES":  AMDGPU_CHUNK_ID_SCHEDULED_DEPENDENCIES,
	"AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_WAIT":   AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_WAIT,
	"AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_SIGNAL": AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_SIGNAL,
	"AMDGPU_IB_FLAG_CE":                       AMDGPU_IB_FLAG_CE, "AMDGPU_IB_FLAG_PREAMBLE": AMDGPU_IB_FLAG_PREAMBLE,
	"AMDGPU_IB_FLAG_PREEMPT":                  AMDGPU_IB_FLAG_PREEMPT,
	"AMDGPU_FENCE_TO_HANDLE_GET_SYNCOBJ":      AMDGPU_FENCE_TO_HANDLE_GET_SYNCOBJ,
	"AMDGPU_FENCE_TO_HANDLE_GET_SYNCOBJ_FD":   AMDGPU_FENCE_TO_HANDLE_GET_SYNCOBJ_FD,
	"AMDGPU_FENCE_TO_HANDLE_GET_SYNC_FILE_FD": AMDGPU_FENCE_TO_HANDLE_GET_SYNC_FILE_FD,
}

// TestDRMSizesMatchConstants checks the sizes in the command words (and the nested structs' Sizeof
// constants) against the Go layout, without any C compiler, and the table's order and names.
func TestDRMSizesMatchConstants(t *testing.T) {
	for _, s := range drmStructs(t) {
		if got := binary.Size(reflect.New(s.typ).Interface()); got != s.size {
			t.Errorf("%v: binary.Size %d, C size %d", s.typ, got, s.size)
		}
		if got := int(s.typ.Size()); got != s.size {
			t.Errorf("%v: Go size %d, C size %d", s.typ, got, s.size)
		}
	}
	for i, io := range DRMIoctls {
		if IOCType(io.Cmd) != DRMIOCTLBase || (i > 0 && IOCNr(io.Cmd) <= IOCNr(DRMIoctls[i-1].Cmd)) {
			t.Errorf("%s: not a DRM command in order of number", io.Name)
		}
		if got, ok := DRMIoctlOf(IOCNr(io.Cmd)); !ok || got.Name != io.Name {
			t.Errorf("DRMIoctlOf(%#x) = %q, %v", IOCNr(io.Cmd), got.Name, ok)
		}
	}
	if _, ok := DRMIoctlOf(0x3e); ok {
		t.Errorf("DRMIoctlOf(0x3e) found an entry")
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
	for _, s := range drmStructs(t) {
		rt := s.typ
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
	for _, io := range DRMIoctls {
		if w, ok := newerThanLibdrm[io.Name]; ok {
			if io.Cmd != w {
				t.Errorf("%s: %#x, Linux 6.10 %#x", io.Name, io.Cmd, w)
			}
			continue
		}
		fmt.Fprintf(&c, "printf(\"C %%s %%lu\\n\", %q, (unsigned long)%s);\n", io.Name, io.Name)
		want["C "+io.Name] = int64(io.Cmd)
	}
	for name, v := range drmConsts {
		fmt.Fprintf(&c, "printf(\"K %%s %%lld\\n\", %q, (long long)(%s));\n", name, name)
		want["K "+name] = v
	}
	c.WriteString("return 0;\n}\n")
	seen := 0
	for key, v := range runCValues(t, cc, c.String(), "-Wall", "-Werror") {
		got := int64(v)
		w, ok := want[key]
		if !ok {
			t.Fatalf("unexpected value %q", key)
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
