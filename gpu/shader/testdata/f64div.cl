// f64 division as clang-14 compiles it for gfx90a (v_div_scale_f64, v_rcp_f64, v_fma_f64/v_fmac_f64,
// v_mul_f64, v_div_fmas_f64, v_div_fixup_f64): f64_test.go checks every quotient bit for bit against Go.
// -nogpulib: the work-item id comes from the AMDGPU builtins (64-lane groups).
kernel void ddiv(global const double *a, global const double *b, global double *q) {
	uint i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
	q[i] = a[i] / b[i];
}

// An unsigned integer converted to double, divided by a constant (issue 16's (double)2654435761u / 7.0)
// and converted back to unsigned and signed integers (v_cvt_u32_f64, v_cvt_i32_f64).
kernel void udiv7(global const uint *u, global double *q, global uint *qu, global int *qi) {
	uint i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
	double d = (double)u[i] / 7.0;
	q[i] = d;
	qu[i] = (uint)d;
	qi[i] = (int)(d - 300000000.0);
}
