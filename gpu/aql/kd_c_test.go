package aql

import (
	"os"
	"os/exec"
	"reflect"
	"testing"
)

const llvmKDHeader = "/usr/include/llvm-14/llvm/Support/AMDHSAKernelDescriptor.h"

// TestKernelDescriptorAgainstLLVM compiles C++ against LLVM 14's AMDHSAKernelDescriptor.h
// (llvm-14-dev) and compares the descriptor layout and the RSRC1/2/3 and kernel_code_properties bit
// fields. LLVM 14 predates kernarg_preload and USES_DYNAMIC_STACK; those are checked against the
// reference table in TestKernelDescriptorReferenceTable.
func TestKernelDescriptorAgainstLLVM(t *testing.T) {
	if _, err := os.Stat(llvmKDHeader); err != nil {
		t.Skip("skipping: llvm-14-dev is not installed (it provides AMDHSAKernelDescriptor.h)")
	}
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("skipping: g++ not installed")
	}
	exprs, want := map[string]string{}, map[string]int64{}
	kd := reflect.TypeOf(KernelDescriptor{})
	exprs["size"] = "sizeof(llvm::amdhsa::kernel_descriptor_t)"
	want["size"] = int64(kd.Size())
	// Go field -> (C member, LLVM *_OFFSET enumerator, Go offset constant).
	for _, f := range []struct {
		goName, c, enum string
		off             int
	}{
		{"GroupSegmentFixedSize", "group_segment_fixed_size", "GROUP_SEGMENT_FIXED_SIZE_OFFSET", KDGroupSegmentFixedSizeOffset},
		{"PrivateSegmentFixedSize", "private_segment_fixed_size", "PRIVATE_SEGMENT_FIXED_SIZE_OFFSET", KDPrivateSegmentFixedSizeOffset},
		{"KernargSize", "kernarg_size", "KERNARG_SIZE_OFFSET", KDKernargSizeOffset},
		{"Reserved0", "reserved0", "RESERVED0_OFFSET", KDReserved0Offset},
		{"KernelCodeEntryByteOffset", "kernel_code_entry_byte_offset", "KERNEL_CODE_ENTRY_BYTE_OFFSET_OFFSET", KDKernelCodeEntryByteOffsetOffset},
		{"Reserved1", "reserved1", "RESERVED1_OFFSET", KDReserved1Offset},
		{"ComputePgmRsrc3", "compute_pgm_rsrc3", "COMPUTE_PGM_RSRC3_OFFSET", KDComputePgmRsrc3Offset},
		{"ComputePgmRsrc1", "compute_pgm_rsrc1", "COMPUTE_PGM_RSRC1_OFFSET", KDComputePgmRsrc1Offset},
		{"ComputePgmRsrc2", "compute_pgm_rsrc2", "COMPUTE_PGM_RSRC2_OFFSET", KDComputePgmRsrc2Offset},
		{"KernelCodeProperties", "kernel_code_properties", "KERNEL_CODE_PROPERTIES_OFFSET", KDKernelCodePropertiesOffset},
		// LLVM 14's reserved2[6] starts where kernarg_preload now lives.
		{"KernargPreload", "reserved2", "RESERVED2_OFFSET", KDKernargPreloadOffset},
	} {
		sf, ok := kd.FieldByName(f.goName)
		if !ok {
			t.Fatalf("no Go field %s", f.goName)
		}
		exprs["off."+f.c] = "offsetof(llvm::amdhsa::kernel_descriptor_t, " + f.c + ")"
		want["off."+f.c] = int64(sf.Offset)
		exprs["enum."+f.enum] = "llvm::amdhsa::" + f.enum
		want["enum."+f.enum] = int64(f.off)
	}
	fields := map[string]Field{
		"COMPUTE_PGM_RSRC1_GRANULATED_WORKITEM_VGPR_COUNT":  RSRC1GranulatedWorkitemVGPRCount,
		"COMPUTE_PGM_RSRC1_GRANULATED_WAVEFRONT_SGPR_COUNT": RSRC1GranulatedWavefrontSGPRCount,
		"COMPUTE_PGM_RSRC1_PRIORITY":                        RSRC1Priority, "COMPUTE_PGM_RSRC1_FLOAT_ROUND_MODE_32": RSRC1FloatRoundMode32,
		"COMPUTE_PGM_RSRC1_FLOAT_ROUND_MODE_16_64":  RSRC1FloatRoundMode16_64,
		"COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_32":    RSRC1FloatDenormMode32,
		"COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_16_64": RSRC1FloatDenormMode16_64,
		"COMPUTE_PGM_RSRC1_PRIV":                    RSRC1Priv, "COMPUTE_PGM_RSRC1_ENABLE_DX10_CLAMP": RSRC1EnableDX10Clamp,
		"COMPUTE_PGM_RSRC1_DEBUG_MODE": RSRC1DebugMode, "COMPUTE_PGM_RSRC1_ENABLE_IEEE_MODE": RSRC1EnableIEEEMode,
		"COMPUTE_PGM_RSRC1_BULKY": RSRC1Bulky, "COMPUTE_PGM_RSRC1_CDBG_USER": RSRC1CdbgUser,
		"COMPUTE_PGM_RSRC1_FP16_OVFL": RSRC1FP16Ovfl, "COMPUTE_PGM_RSRC1_RESERVED0": RSRC1Reserved0,
		"COMPUTE_PGM_RSRC1_WGP_MODE": RSRC1WGPMode, "COMPUTE_PGM_RSRC1_MEM_ORDERED": RSRC1MemOrdered,
		"COMPUTE_PGM_RSRC1_FWD_PROGRESS":           RSRC1FwdProgress,
		"COMPUTE_PGM_RSRC2_ENABLE_PRIVATE_SEGMENT": RSRC2EnablePrivateSegment, "COMPUTE_PGM_RSRC2_USER_SGPR_COUNT": RSRC2UserSGPRCount,
		"COMPUTE_PGM_RSRC2_ENABLE_TRAP_HANDLER":                            RSRC2EnableTrapHandler,
		"COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_X":                     RSRC2EnableSGPRWorkgroupIDX,
		"COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Y":                     RSRC2EnableSGPRWorkgroupIDY,
		"COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Z":                     RSRC2EnableSGPRWorkgroupIDZ,
		"COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_INFO":                     RSRC2EnableSGPRWorkgroupInfo,
		"COMPUTE_PGM_RSRC2_ENABLE_VGPR_WORKITEM_ID":                        RSRC2EnableVGPRWorkitemID,
		"COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_ADDRESS_WATCH":                 RSRC2EnableExceptionAddressWatch,
		"COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_MEMORY":                        RSRC2EnableExceptionMemory,
		"COMPUTE_PGM_RSRC2_GRANULATED_LDS_SIZE":                            RSRC2GranulatedLDSSize,
		"COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_INVALID_OPERATION": RSRC2EnableExceptionFPInvalidOp,
		"COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_FP_DENORMAL_SOURCE":            RSRC2EnableExceptionFPDenormalSrc,
		"COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_DIVISION_BY_ZERO":  RSRC2EnableExceptionFPDivByZero,
		"COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_OVERFLOW":          RSRC2EnableExceptionFPOverflow,
		"COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_UNDERFLOW":         RSRC2EnableExceptionFPUnderflow,
		"COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_INEXACT":           RSRC2EnableExceptionFPInexact,
		"COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_INT_DIVIDE_BY_ZERO":            RSRC2EnableExceptionIntDivideByZero,
		"COMPUTE_PGM_RSRC2_RESERVED0":                                      RSRC2Reserved0,
		"COMPUTE_PGM_RSRC3_GFX90A_ACCUM_OFFSET":                            RSRC3GFX90AAccumOffset, "COMPUTE_PGM_RSRC3_GFX90A_RESERVED0": RSRC3GFX90AReserved0,
		"COMPUTE_PGM_RSRC3_GFX90A_TG_SPLIT": RSRC3GFX90ATGSplit, "COMPUTE_PGM_RSRC3_GFX90A_RESERVED1": RSRC3GFX90AReserved1,
		"COMPUTE_PGM_RSRC3_GFX10_SHARED_VGPR_COUNT":               RSRC3GFX10SharedVGPRCount,
		"COMPUTE_PGM_RSRC3_GFX10_RESERVED0":                       RSRC3GFX10Reserved0LLVM14,
		"KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER": KDPropEnableSGPRPrivateSegmentBuffer,
		"KERNEL_CODE_PROPERTY_ENABLE_SGPR_DISPATCH_PTR":           KDPropEnableSGPRDispatchPtr,
		"KERNEL_CODE_PROPERTY_ENABLE_SGPR_QUEUE_PTR":              KDPropEnableSGPRQueuePtr,
		"KERNEL_CODE_PROPERTY_ENABLE_SGPR_KERNARG_SEGMENT_PTR":    KDPropEnableSGPRKernargSegmentPtr,
		"KERNEL_CODE_PROPERTY_ENABLE_SGPR_DISPATCH_ID":            KDPropEnableSGPRDispatchID,
		"KERNEL_CODE_PROPERTY_ENABLE_SGPR_FLAT_SCRATCH_INIT":      KDPropEnableSGPRFlatScratchInit,
		"KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_SIZE":   KDPropEnableSGPRPrivateSegmentSize,
		"KERNEL_CODE_PROPERTY_RESERVED0":                          KDPropReserved0,
		"KERNEL_CODE_PROPERTY_ENABLE_WAVEFRONT_SIZE32":            KDPropEnableWavefrontSize32,
	}
	for name, f := range fields {
		exprs["shift."+name] = "llvm::amdhsa::" + name + "_SHIFT"
		want["shift."+name] = int64(f.Shift())
		exprs["width."+name] = "llvm::amdhsa::" + name + "_WIDTH"
		want["width."+name] = int64(f.Width())
		exprs["mask."+name] = "(unsigned)llvm::amdhsa::" + name
		want["mask."+name] = int64(f.Mask())
	}
	for name, v := range map[string]int64{
		"FLOAT_ROUND_MODE_NEAR_EVEN": 0, "FLOAT_ROUND_MODE_ZERO": 3, "FLOAT_DENORM_MODE_FLUSH_NONE": 3,
		"SYSTEM_VGPR_WORKITEM_ID_X_Y_Z": SystemVGPRWorkitemIDXYZ, "SYSTEM_VGPR_WORKITEM_ID_UNDEFINED": SystemVGPRWorkitemUndefined,
	} {
		exprs["const."+name] = "llvm::amdhsa::" + name
		want["const."+name] = v
	}
	got := runC(t, "g++", "cc", []string{"-I/usr/include/llvm-14"}, []string{"llvm/Support/AMDHSAKernelDescriptor.h"}, exprs)
	compare(t, got, want)
}

// TestKernelDescriptorReferenceTable checks the fields LLVM 14 lacks against the AMDGPUUsage table
// reproduced in shared/reference/amd-code-object-and-dispatch.md §3.1 (bits -> byte offsets).
func TestKernelDescriptorReferenceTable(t *testing.T) {
	kd := reflect.TypeOf(KernelDescriptor{})
	for _, c := range []struct {
		field     string
		bitOffset int // first bit in the reference table
		bytes     int
	}{
		{"GroupSegmentFixedSize", 0, 4}, {"PrivateSegmentFixedSize", 32, 4}, {"KernargSize", 64, 4},
		{"Reserved0", 96, 4}, {"KernelCodeEntryByteOffset", 128, 8}, {"Reserved1", 192, 20},
		{"ComputePgmRsrc3", 352, 4}, {"ComputePgmRsrc1", 384, 4}, {"ComputePgmRsrc2", 416, 4},
		{"KernelCodeProperties", 448, 2}, {"KernargPreload", 464, 2}, {"Reserved2", 480, 4},
	} {
		f, ok := kd.FieldByName(c.field)
		if !ok {
			t.Fatalf("no field %s", c.field)
		}
		if int(f.Offset) != c.bitOffset/8 || int(f.Type.Size()) != c.bytes {
			t.Errorf("%s: Go offset %d size %d, reference bit %d (byte %d) size %d", c.field, f.Offset, f.Type.Size(),
				c.bitOffset, c.bitOffset/8, c.bytes)
		}
	}
	// Bits within kernel_code_properties (bit 448 = bit 0 of the u16) and kernarg_preload (bit 464).
	for _, c := range []struct {
		name      string
		f         Field
		base, low int
		high      int
	}{
		{"ENABLE_WAVEFRONT_SIZE32", KDPropEnableWavefrontSize32, 448, 458, 458},
		{"USES_DYNAMIC_STACK", KDPropUsesDynamicStack, 448, 459, 459},
		{"reserved 463:460", KDPropReserved1, 448, 460, 463},
		{"KERNARG_PRELOAD_SPEC_LENGTH", KDKernargPreloadSpecLength, 464, 464, 470},
		{"KERNARG_PRELOAD_SPEC_OFFSET", KDKernargPreloadSpecOffset, 464, 471, 479},
	} {
		if int(c.f.Shift()) != c.low-c.base || int(c.f.Width()) != c.high-c.low+1 {
			t.Errorf("%s: shift %d width %d, reference bits %d:%d", c.name, c.f.Shift(), c.f.Width(), c.high, c.low)
		}
	}
}
