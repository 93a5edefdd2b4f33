// kfdemu bench's wave fault storm: work-item i stores its index into the first dword of page i of
// p, so that every lane of every wave touches a page of its own (with XNACK on and SVM granularity
// 0, each store is one GPU retry fault). Built as vadd.cl is (-nogpulib).
static inline size_t global_id_x(void) {
	const __constant ushort *p = (const __constant ushort *)__builtin_amdgcn_dispatch_ptr();
	return (size_t)__builtin_amdgcn_workgroup_id_x() * p[2] + __builtin_amdgcn_workitem_id_x();
}

kernel void touch(global uint *p) {
	size_t i = global_id_x();
	p[i * 1024] = (uint)i;
}
