package aql

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// cStruct pairs a Go type with its C name and the C field names in Go field order.
type cStruct struct {
	goType any
	c      string
	fields []string
}

// runC compiles prog (a list of "key" -> C expression) with compiler against the headers in
// includes, runs it and returns key -> value.
func runC(t *testing.T, compiler, ext string, flags []string, includes []string, exprs map[string]string) map[string]int64 {
	t.Helper()
	var c strings.Builder
	c.WriteString("#include <stdio.h>\n#include <stddef.h>\n")
	for _, inc := range includes {
		fmt.Fprintf(&c, "#include <%s>\n", inc)
	}
	c.WriteString("int main(void){\n")
	keys := make([]string, 0, len(exprs))
	for k := range exprs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&c, "printf(\"%s %%lld\\n\", (long long)(%s));\n", k, exprs[k])
	}
	c.WriteString("return 0;}\n")
	dir := t.TempDir()
	src := filepath.Join(dir, "probe."+ext)
	if err := os.WriteFile(src, []byte(c.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, flags...), "-o", filepath.Join(dir, "probe"), src)
	if out, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(dir, "probe")).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			t.Fatalf("bad probe line %q", l)
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Fatalf("bad probe line %q", l)
		}
		got[f[0]] = v
	}
	return got
}

// structExprs adds sizeof/offsetof probes for s, and returns the Go values for the same keys.
func structExprs(t *testing.T, s cStruct, exprs map[string]string, want map[string]int64) {
	t.Helper()
	typ := reflect.TypeOf(s.goType)
	if typ.NumField() != len(s.fields) {
		t.Fatalf("%s: %d Go fields, %d C fields listed", s.c, typ.NumField(), len(s.fields))
	}
	exprs["size."+s.c] = "sizeof(" + s.c + ")"
	want["size."+s.c] = int64(typ.Size())
	for i, f := range s.fields {
		k := "off." + s.c + "." + f
		exprs[k] = fmt.Sprintf("offsetof(%s, %s)", s.c, f)
		want[k] = int64(typ.Field(i).Offset)
	}
	// encoding/binary must see the same layout (no implicit Go padding), so Decode/Encode are exact.
	if n := binary.Size(s.goType); n != int(typ.Size()) {
		t.Errorf("%s: binary.Size %d != Go size %d (implicit padding)", s.c, n, typ.Size())
	}
}

func fieldExprs(prefix string, fields map[string]Field, exprs map[string]string, want map[string]int64) {
	for name, f := range fields {
		exprs["shift."+name] = prefix + name + "_SHIFT"
		want["shift."+name] = int64(f.Shift())
		exprs["width."+name] = prefix + name + "_WIDTH"
		want["width."+name] = int64(f.Width())
		exprs["mask."+name] = "(unsigned)" + prefix + name
		want["mask."+name] = int64(f.Mask())
	}
}

func compare(t *testing.T, got, want map[string]int64) {
	t.Helper()
	for k, v := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: not printed by the probe", k)
			continue
		}
		if g != v {
			t.Errorf("%s: Go %d, C %d", k, v, g)
		}
	}
	t.Logf("%d sizes, offsets and constants agree with the C headers", len(want))
}

// TestAgainstROCrHeaders compiles C against Debian's ROCr 5.2.3 headers and compares sizes, field
// offsets, constants and bit fields with the Go definitions.
func TestAgainstROCrHeaders(t *testing.T) {
	if _, err := os.Stat("/usr/include/hsa/amd_hsa_queue.h"); err != nil {
		t.Skip("skipping: libhsa-runtime-dev is not installed (scripts/install-deps.sh installs it)")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("skipping: gcc not installed")
	}
	structs := []cStruct{
		{KernelDispatchPacket{}, "hsa_kernel_dispatch_packet_t", []string{"header", "setup", "workgroup_size_x", "workgroup_size_y",
			"workgroup_size_z", "reserved0", "grid_size_x", "grid_size_y", "grid_size_z", "private_segment_size",
			"group_segment_size", "kernel_object", "kernarg_address", "reserved2", "completion_signal"}},
		{AgentDispatchPacket{}, "hsa_agent_dispatch_packet_t", []string{"header", "type", "reserved0", "return_address", "arg", "reserved2", "completion_signal"}},
		{BarrierPacket{}, "hsa_barrier_and_packet_t", []string{"header", "reserved0", "reserved1", "dep_signal", "reserved2", "completion_signal"}},
		{BarrierPacket{}, "hsa_barrier_or_packet_t", []string{"header", "reserved0", "reserved1", "dep_signal", "reserved2", "completion_signal"}},
		{AMDVendorPacketHeader{}, "hsa_amd_vendor_packet_header_t", []string{"header", "AmdFormat", "reserved"}},
		{BarrierValuePacket{}, "hsa_amd_barrier_value_packet_t", []string{"header", "reserved0", "signal", "value", "mask", "cond",
			"reserved1", "reserved2", "reserved3", "completion_signal"}},
		{Signal{}, "amd_signal_t", []string{"kind", "value", "event_mailbox_ptr", "event_id", "reserved1", "start_ts", "end_ts", "queue_ptr", "reserved3"}},
		{Queue{}, "hsa_queue_t", []string{"type", "features", "base_address", "doorbell_signal", "size", "reserved1", "id"}},
		{AMDQueue{}, "amd_queue_t", []string{"hsa_queue", "reserved1", "write_dispatch_id", "group_segment_aperture_base_hi",
			"private_segment_aperture_base_hi", "max_cu_id", "max_wave_id", "max_legacy_doorbell_dispatch_id_plus_1",
			"legacy_doorbell_lock", "reserved2", "read_dispatch_id", "read_dispatch_id_field_base_byte_offset",
			"compute_tmpring_size", "scratch_resource_descriptor", "scratch_backing_memory_location",
			"scratch_backing_memory_byte_size", "scratch_wave64_lane_byte_size", "queue_properties", "reserved3",
			"queue_inactive_signal", "reserved4"}},
		{ControlDirectives{}, "amd_control_directives_t", []string{"enabled_control_directives", "enable_break_exceptions",
			"enable_detect_exceptions", "max_dynamic_group_size", "max_flat_grid_size", "max_flat_workgroup_size", "required_dim",
			"reserved1", "required_grid_size", "required_workgroup_size", "reserved2"}},
		{KernelCode{}, "amd_kernel_code_t", []string{"amd_kernel_code_version_major", "amd_kernel_code_version_minor",
			"amd_machine_kind", "amd_machine_version_major", "amd_machine_version_minor", "amd_machine_version_stepping",
			"kernel_code_entry_byte_offset", "kernel_code_prefetch_byte_offset", "kernel_code_prefetch_byte_size",
			"max_scratch_backing_memory_byte_size", "compute_pgm_rsrc1", "compute_pgm_rsrc2", "kernel_code_properties",
			"workitem_private_segment_byte_size", "workgroup_group_segment_byte_size", "gds_segment_byte_size",
			"kernarg_segment_byte_size", "workgroup_fbarrier_count", "wavefront_sgpr_count", "workitem_vgpr_count",
			"reserved_vgpr_first", "reserved_vgpr_count", "reserved_sgpr_first", "reserved_sgpr_count",
			"debug_wavefront_private_segment_offset_sgpr", "debug_private_segment_buffer_sgpr", "kernarg_segment_alignment",
			"group_segment_alignment", "private_segment_alignment", "wavefront_size", "call_convention", "reserved1",
			"runtime_loader_kernel_symbol", "control_directives"}},
	}
	exprs, want := map[string]string{}, map[string]int64{}
	for _, s := range structs {
		structExprs(t, s, exprs, want)
	}
	consts := map[string]int64{
		"HSA_PACKET_TYPE_VENDOR_SPECIFIC": PacketTypeVendorSpecific, "HSA_PACKET_TYPE_INVALID": PacketTypeInvalid,
		"HSA_PACKET_TYPE_KERNEL_DISPATCH": PacketTypeKernelDispatch, "HSA_PACKET_TYPE_BARRIER_AND": PacketTypeBarrierAnd,
		"HSA_PACKET_TYPE_AGENT_DISPATCH": PacketTypeAgentDispatch, "HSA_PACKET_TYPE_BARRIER_OR": PacketTypeBarrierOr,
		"HSA_PACKET_HEADER_TYPE": HeaderType, "HSA_PACKET_HEADER_BARRIER": HeaderBarrier,
		"HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE": HeaderAcquireFenceScope, "HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE": HeaderReleaseFenceScope,
		"HSA_PACKET_HEADER_WIDTH_TYPE": HeaderWidthType, "HSA_PACKET_HEADER_WIDTH_BARRIER": HeaderWidthBarrier,
		"HSA_PACKET_HEADER_WIDTH_SCACQUIRE_FENCE_SCOPE": HeaderWidthFenceScope,
		"HSA_PACKET_HEADER_WIDTH_SCRELEASE_FENCE_SCOPE": HeaderWidthFenceScope,
		"HSA_FENCE_SCOPE_NONE":                          FenceScopeNone, "HSA_FENCE_SCOPE_SYSTEM": FenceScopeSystem, "HSA_FENCE_SCOPE_AGENT": FenceScopeAgent,
		"HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS":       KernelDispatchSetupDimensions,
		"HSA_KERNEL_DISPATCH_PACKET_SETUP_WIDTH_DIMENSIONS": KernelDispatchSetupWidthDims,
		"HSA_QUEUE_TYPE_MULTI":                              QueueTypeMulti, "HSA_QUEUE_TYPE_SINGLE": QueueTypeSingle, "HSA_QUEUE_TYPE_COOPERATIVE": QueueTypeCooperative,
		"HSA_QUEUE_FEATURE_KERNEL_DISPATCH": QueueFeatureKernelDispatch, "HSA_QUEUE_FEATURE_AGENT_DISPATCH": QueueFeatureAgentDispatch,
		"HSA_AMD_PACKET_TYPE_BARRIER_VALUE": AMDPacketTypeBarrierValue,
		"HSA_SIGNAL_CONDITION_EQ":           SignalConditionEQ, "HSA_SIGNAL_CONDITION_NE": SignalConditionNE,
		"HSA_SIGNAL_CONDITION_LT": SignalConditionLT, "HSA_SIGNAL_CONDITION_GTE": SignalConditionGTE,
		"AMD_SIGNAL_KIND_INVALID": SignalKindInvalid, "AMD_SIGNAL_KIND_USER": SignalKindUser,
		"AMD_SIGNAL_KIND_DOORBELL": SignalKindDoorbell, "AMD_SIGNAL_KIND_LEGACY_DOORBELL": SignalKindLegacyDoorbell,
		"AMD_QUEUE_ALIGN_BYTES": AMDQueueAlignBytes, "AMD_SIGNAL_ALIGN_BYTES": AMDSignalAlignBytes,
		"AMD_KERNEL_CODE_ALIGN_BYTES": AMDKernelCodeAlignBytes, "AMD_ISA_ALIGN_BYTES": AMDISAAlignBytes,
		"AMD_KERNEL_CODE_VERSION_MAJOR": KernelCodeVersionMajor, "AMD_KERNEL_CODE_VERSION_MINOR": KernelCodeVersionMinor,
		"AMD_MACHINE_KIND_UNDEFINED": MachineKindUndefined, "AMD_MACHINE_KIND_AMDGPU": MachineKindAMDGPU,
		"AMD_SYSTEM_VGPR_WORKITEM_ID_X": SystemVGPRWorkitemIDX, "AMD_SYSTEM_VGPR_WORKITEM_ID_X_Y": SystemVGPRWorkitemIDXY,
		"AMD_SYSTEM_VGPR_WORKITEM_ID_X_Y_Z": SystemVGPRWorkitemIDXYZ, "AMD_SYSTEM_VGPR_WORKITEM_ID_UNDEFINED": SystemVGPRWorkitemUndefined,
		"alignof_amd_queue_t": AMDQueueAlignBytes, "alignof_amd_signal_t": AMDSignalAlignBytes,
		"sizeof_amd_queue_t": AMDQueueSize, "sizeof_amd_signal_t": AMDSignalSize, "sizeof_amd_kernel_code_t": AMDKernelCodeSize,
		"offsetof(amd_signal_t, kind)": SignalKindOffset, "offsetof(amd_signal_t, value)": SignalValueOffset,
		"offsetof(amd_signal_t, event_mailbox_ptr)": SignalMailboxOffset, "offsetof(amd_signal_t, event_id)": SignalEventIDOffset,
		"offsetof(amd_signal_t, start_ts)": SignalStartTSOffset, "offsetof(amd_signal_t, end_ts)": SignalEndTSOffset,
		"offsetof(amd_signal_t, queue_ptr)":                SignalQueuePtrOff,
		"offsetof(amd_queue_t, hsa_queue.base_address)":    AMDQueueBaseAddressOffset,
		"offsetof(amd_queue_t, hsa_queue.doorbell_signal)": AMDQueueDoorbellSignalOffset,
		"offsetof(amd_queue_t, hsa_queue.size)":            AMDQueueSizeOffset, "offsetof(amd_queue_t, hsa_queue.id)": AMDQueueIDOffset,
		"offsetof(amd_queue_t, hsa_queue)": AMDQueueHSAQueueOffset, "offsetof(amd_queue_t, reserved1)": AMDQueueCapsOffset,
		"offsetof(amd_queue_t, write_dispatch_id)":                AMDQueueWriteDispatchIDOffset,
		"offsetof(amd_queue_t, max_cu_id)":                        AMDQueueMaxCUIDOffset,
		"offsetof(amd_queue_t, read_dispatch_id)":                 AMDQueueReadDispatchIDOffset,
		"offsetof(amd_queue_t, compute_tmpring_size)":             AMDQueueComputeTmpringSizeOffset,
		"offsetof(amd_queue_t, scratch_resource_descriptor)":      AMDQueueScratchResourceDescOffset,
		"offsetof(amd_queue_t, queue_properties)":                 AMDQueuePropertiesOffset,
		"offsetof(amd_queue_t, scratch_backing_memory_location)":  AMDQueueScratchLocationOffset,
		"offsetof(amd_queue_t, scratch_backing_memory_byte_size)": AMDQueueScratchByteSizeOffset,
		"offsetof(amd_queue_t, scratch_wave64_lane_byte_size)":    AMDQueueScratchLaneByteSizeOffset,
		"offsetof(amd_queue_t, queue_inactive_signal)":            AMDQueueInactiveSignalOffset,
	}
	special := map[string]string{
		"alignof_amd_queue_t": "_Alignof(amd_queue_t)", "alignof_amd_signal_t": "_Alignof(amd_signal_t)",
		"sizeof_amd_queue_t": "sizeof(amd_queue_t)", "sizeof_amd_signal_t": "sizeof(amd_signal_t)",
		"sizeof_amd_kernel_code_t": "sizeof(amd_kernel_code_t)",
	}
	for name, v := range consts {
		k := "const." + strings.NewReplacer(" ", "", "(", "_", ")", "", ",", "_", ".", "_").Replace(name)
		if e, ok := special[name]; ok {
			exprs[k] = e
		} else {
			exprs[k] = name
		}
		want[k] = v
	}
	fieldExprs("AMD_QUEUE_PROPERTIES_", map[string]Field{"ENABLE_TRAP_HANDLER": QueuePropEnableTrapHandler, "IS_PTR64": QueuePropIsPtr64,
		"ENABLE_TRAP_HANDLER_DEBUG_SGPRS": QueuePropEnableTrapHandlerDebugSGPR, "ENABLE_PROFILING": QueuePropEnableProfiling,
		"USE_SCRATCH_ONCE": QueuePropUseScratchOnce, "RESERVED1": QueuePropReserved1}, exprs, want)
	fieldExprs("AMD_COMPUTE_PGM_RSRC_ONE_", map[string]Field{"GRANULATED_WORKITEM_VGPR_COUNT": RSRC1GranulatedWorkitemVGPRCount,
		"GRANULATED_WAVEFRONT_SGPR_COUNT": RSRC1GranulatedWavefrontSGPRCount, "PRIORITY": RSRC1Priority,
		"FLOAT_ROUND_MODE_32": RSRC1FloatRoundMode32, "FLOAT_ROUND_MODE_16_64": RSRC1FloatRoundMode16_64,
		"FLOAT_DENORM_MODE_32": RSRC1FloatDenormMode32, "FLOAT_DENORM_MODE_16_64": RSRC1FloatDenormMode16_64,
		"PRIV": RSRC1Priv, "ENABLE_DX10_CLAMP": RSRC1EnableDX10Clamp, "DEBUG_MODE": RSRC1DebugMode,
		"ENABLE_IEEE_MODE": RSRC1EnableIEEEMode, "BULKY": RSRC1Bulky, "CDBG_USER": RSRC1CdbgUser}, exprs, want)
	fieldExprs("AMD_COMPUTE_PGM_RSRC_TWO_", map[string]Field{"ENABLE_SGPR_PRIVATE_SEGMENT_WAVE_BYTE_OFFSET": RSRC2EnablePrivateSegment,
		"USER_SGPR_COUNT": RSRC2UserSGPRCount, "ENABLE_TRAP_HANDLER": RSRC2EnableTrapHandler,
		"ENABLE_SGPR_WORKGROUP_ID_X": RSRC2EnableSGPRWorkgroupIDX, "ENABLE_SGPR_WORKGROUP_ID_Y": RSRC2EnableSGPRWorkgroupIDY,
		"ENABLE_SGPR_WORKGROUP_ID_Z": RSRC2EnableSGPRWorkgroupIDZ, "ENABLE_SGPR_WORKGROUP_INFO": RSRC2EnableSGPRWorkgroupInfo,
		"ENABLE_VGPR_WORKITEM_ID": RSRC2EnableVGPRWorkitemID, "ENABLE_EXCEPTION_ADDRESS_WATCH": RSRC2EnableExceptionAddressWatch,
		"ENABLE_EXCEPTION_MEMORY_VIOLATION": RSRC2EnableExceptionMemory, "GRANULATED_LDS_SIZE": RSRC2GranulatedLDSSize,
		"ENABLE_EXCEPTION_IEEE_754_FP_INVALID_OPERATION": RSRC2EnableExceptionFPInvalidOp,
		"ENABLE_EXCEPTION_FP_DENORMAL_SOURCE":            RSRC2EnableExceptionFPDenormalSrc,
		"ENABLE_EXCEPTION_IEEE_754_FP_DIVISION_BY_ZERO":  RSRC2EnableExceptionFPDivByZero,
		"ENABLE_EXCEPTION_IEEE_754_FP_OVERFLOW":          RSRC2EnableExceptionFPOverflow,
		"ENABLE_EXCEPTION_IEEE_754_FP_UNDERFLOW":         RSRC2EnableExceptionFPUnderflow,
		"ENABLE_EXCEPTION_IEEE_754_FP_INEXACT":           RSRC2EnableExceptionFPInexact,
		"ENABLE_EXCEPTION_INT_DIVISION_BY_ZERO":          RSRC2EnableExceptionIntDivideByZero,
		"RESERVED1":                                      RSRC2Reserved0}, exprs, want)
	fieldExprs("AMD_KERNEL_CODE_PROPERTIES_", map[string]Field{"ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER": KCPropEnableSGPRPrivateSegmentBuffer,
		"ENABLE_SGPR_DISPATCH_PTR": KCPropEnableSGPRDispatchPtr, "ENABLE_SGPR_QUEUE_PTR": KCPropEnableSGPRQueuePtr,
		"ENABLE_SGPR_KERNARG_SEGMENT_PTR": KCPropEnableSGPRKernargSegmentPtr, "ENABLE_SGPR_DISPATCH_ID": KCPropEnableSGPRDispatchID,
		"ENABLE_SGPR_FLAT_SCRATCH_INIT": KCPropEnableSGPRFlatScratchInit, "ENABLE_SGPR_PRIVATE_SEGMENT_SIZE": KCPropEnableSGPRPrivateSegmentSize,
		"ENABLE_SGPR_GRID_WORKGROUP_COUNT_X": KCPropEnableSGPRGridWorkgroupCountX,
		"ENABLE_SGPR_GRID_WORKGROUP_COUNT_Y": KCPropEnableSGPRGridWorkgroupCountY,
		"ENABLE_SGPR_GRID_WORKGROUP_COUNT_Z": KCPropEnableSGPRGridWorkgroupCountZ, "RESERVED1": KCPropReserved1,
		"ENABLE_ORDERED_APPEND_GDS": KCPropEnableOrderedAppendGDS, "PRIVATE_ELEMENT_SIZE": KCPropPrivateElementSize,
		"IS_PTR64": KCPropIsPtr64, "IS_DYNAMIC_CALLSTACK": KCPropIsDynamicCallstack, "IS_DEBUG_ENABLED": KCPropIsDebugEnabled,
		"IS_XNACK_ENABLED": KCPropIsXNACKEnabled, "RESERVED2": KCPropReserved2}, exprs, want)
	got := runC(t, "gcc", "c", []string{"-DAMD_INTERNAL_BUILD"},
		[]string{"hsa/hsa.h", "hsa/hsa_ext_amd.h", "hsa/amd_hsa_queue.h", "hsa/amd_hsa_signal.h", "hsa/amd_hsa_kernel_code.h"}, exprs)
	compare(t, got, want)
}
