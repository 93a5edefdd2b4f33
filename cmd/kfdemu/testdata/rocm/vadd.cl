// Built by cmd/kfdemu's TestROCrDispatch with clang-14 -target amdgcn-amd-amdhsa -mcpu=gfx90a and
// ld.lld-14, loaded and dispatched by ROCr (rocr_dispatch.c). -nogpulib: no OpenCL builtin
// library, so get_global_id is defined from the AMDGPU builtins and the HSA dispatch packet, as the
// device library does it.
static inline size_t global_id_x(void) {
	const __constant ushort *p = (const __constant ushort *)__builtin_amdgcn_dispatch_ptr();
	return (size_t)__builtin_amdgcn_workgroup_id_x() * p[2] + __builtin_amdgcn_workitem_id_x();
}

kernel void vadd(global const float *a, global const float *b, global float *c, uint n) {
	size_t i = global_id_x();
	if (i < n)
		c[i] = a[i] + b[i];
}
