// Each work-item stores the GPU timestamp counters: s_memtime (HIP's clock64()) and s_memrealtime
// (wall_clock64()). clock_test.go compares them with the driver's GET_CLOCK_COUNTERS.
kernel void stamps(global ulong *out) {
	uint i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
	out[2 * i] = __builtin_amdgcn_s_memtime();
	out[2 * i + 1] = __builtin_amdgcn_s_memrealtime();
}
