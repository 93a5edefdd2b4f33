// Every work-item adds 1 to *p n times with a system-scope atomic (clang's __atomic builtins default to
// the system scope): global_atomic_add on gfx90a. atomics_test.go runs it while a CPU thread adds too.
kernel void atomic_count(global uint *p, uint n) {
	for (uint k = 0; k < n; k++)
		__atomic_fetch_add(p, 1u, __ATOMIC_RELAXED);
}
