// kfdemu bench's second interpreter figure (matmulRate): C = A x B with 16x16 tiles in local memory,
// the tiled kernel of gpu/shader's corpus (testdata/corpus.cl), built with clang-14 -nogpulib for
// gfx90a: the work-item functions come from the AMDGPU builtins.
#define TILE 16
#define barrier() (__builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"), __builtin_amdgcn_s_barrier(), __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"))

kernel void matmul(global const float *A, global const float *B, global float *C, uint M, uint N, uint K) {
	local float As[TILE][TILE];
	local float Bs[TILE][TILE];
	uint tx = __builtin_amdgcn_workitem_id_x(), ty = __builtin_amdgcn_workitem_id_y();
	uint row = __builtin_amdgcn_workgroup_id_y() * TILE + ty, col = __builtin_amdgcn_workgroup_id_x() * TILE + tx;
	float acc = 0.0f;
	for (uint t = 0; t < (K + TILE - 1) / TILE; t++) {
		uint ak = t * TILE + tx, bk = t * TILE + ty;
		As[ty][tx] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
		Bs[ty][tx] = (col < N && bk < K) ? B[bk * N + col] : 0.0f;
		barrier();
		for (uint k = 0; k < TILE; k++)
			acc += As[ty][k] * Bs[k][tx];
		barrier();
	}
	if (row < M && col < N)
		C[row * N + col] = acc;
}
