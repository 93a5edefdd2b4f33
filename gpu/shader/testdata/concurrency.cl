// Kernels that need work-groups to run at the same time (workgroup_test.go). Built with clang-14
// -cl-std=CL2.0 -nogpulib for gfx90a: the work-item functions come from AMDGPU builtins and the
// dispatch packet (as in corpus.cl), the atomics are clang's __opencl_atomic_* builtins.

static inline uint wg_size(int d) {
	const __constant ushort *p = (const __constant ushort *)__builtin_amdgcn_dispatch_ptr();
	return p[2 + d];
}
static inline uint grid_size(int d) {
	const __constant uint *p = (const __constant uint *)__builtin_amdgcn_dispatch_ptr();
	return p[3 + d];
}
#define get_local_id(d) __builtin_amdgcn_workitem_id_x()
#define get_group_id(d) __builtin_amdgcn_workgroup_id_x()
#define get_num_groups(d) ((grid_size(0) + wg_size(0) - 1) / wg_size(0))
#define get_global_id(d) (get_group_id(0) * wg_size(0) + get_local_id(0))
#define barrier(f) (__builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"), __builtin_amdgcn_s_barrier(), __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"))
#define atomic_load_explicit(p, o, s) __opencl_atomic_load(p, o, s)
#define atomic_store_explicit(p, v, o, s) __opencl_atomic_store(p, v, o, s)
#define atomic_fetch_add_explicit(p, v, o, s) __opencl_atomic_fetch_add(p, v, o, s)
#define memory_order_relaxed __ATOMIC_RELAXED
#define memory_order_acquire __ATOMIC_ACQUIRE
#define memory_order_release __ATOMIC_RELEASE
#define memory_order_acq_rel __ATOMIC_ACQ_REL
#define memory_scope_device __OPENCL_MEMORY_SCOPE_DEVICE

// Work-group g (0 < g < n-1) waits for work-group g+1's flag, then sets its own: the chain ends
// only if later work-groups run while earlier ones wait. Work-group 0 and the last end at once.
kernel void wait_next(global atomic_int *flags) {
	int g = get_group_id(0), n = get_num_groups(0);
	if (get_local_id(0) != 0)
		return;
	if (g > 0 && g < n - 1)
		while (atomic_load_explicit(&flags[g + 1], memory_order_acquire, memory_scope_device) == 0)
			;
	atomic_store_explicit(&flags[g], 1, memory_order_release, memory_scope_device);
}

// Work-group 0 waits for a flag that only the last work-group sets.
kernel void wait_last(global atomic_int *flag, global int *out) {
	int g = get_group_id(0), n = get_num_groups(0);
	if (get_local_id(0) != 0)
		return;
	if (g == 0) {
		while (atomic_load_explicit(flag, memory_order_acquire, memory_scope_device) == 0)
			;
		out[0] = 1;
	} else if (g == n - 1) {
		atomic_store_explicit(flag, 1, memory_order_release, memory_scope_device);
	}
}

// A grid-wide barrier built on an atomic counter: every group publishes a value, arrives, waits
// for all, then sums every group's value.
kernel void grid_barrier(global atomic_int *count, global int *vals, global int *out) {
	int g = get_group_id(0), n = get_num_groups(0);
	if (get_local_id(0) == 0) {
		vals[g] = g + 1;
		atomic_fetch_add_explicit(count, 1, memory_order_acq_rel, memory_scope_device);
		while (atomic_load_explicit(count, memory_order_acquire, memory_scope_device) < n)
			;
		int s = 0;
		for (int i = 0; i < n; i++)
			s += vals[i];
		out[g] = s;
	}
	barrier(CLK_GLOBAL_MEM_FENCE);
}

// Every work-item adds 1 to *c iters times.
kernel void count(global atomic_int *c, int iters) {
	for (int i = 0; i < iters; i++)
		atomic_fetch_add_explicit(c, 1, memory_order_relaxed, memory_scope_device);
}

// Spins until *go is set by the host, then counts: the CPU and the GPU take turns.
kernel void ping(global atomic_int *turn, int rounds) {
	if (get_global_id(0) != 0)
		return;
	for (int r = 0; r < rounds; r++) {
		while (atomic_load_explicit(turn, memory_order_acquire, memory_scope_device) != 2 * r + 1)
			;
		atomic_store_explicit(turn, 2 * r + 2, memory_order_release, memory_scope_device);
	}
}
