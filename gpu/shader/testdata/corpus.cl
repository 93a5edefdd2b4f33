// Test corpus for package shader. Compiled in the test with clang-14 for gfx90a
// (-nogpulib: no OpenCL builtin library, so the work-item functions are defined here from AMDGPU builtins
// and the HSA dispatch packet, the way the device library does it).

static inline uint wg_size(int d) {
	const __constant ushort *p = (const __constant ushort *)__builtin_amdgcn_dispatch_ptr();
	return p[2 + d]; // hsa_kernel_dispatch_packet_t.workgroup_size_{x,y,z} at byte 4/6/8
}
static inline uint grid_size(int d) {
	const __constant uint *p = (const __constant uint *)__builtin_amdgcn_dispatch_ptr();
	return p[3 + d]; // grid_size_{x,y,z} at byte 12/16/20
}
static inline uint lid_(int d) {
	return d == 0 ? __builtin_amdgcn_workitem_id_x() : d == 1 ? __builtin_amdgcn_workitem_id_y() : __builtin_amdgcn_workitem_id_z();
}
static inline uint gid_(int d) {
	return d == 0 ? __builtin_amdgcn_workgroup_id_x() : d == 1 ? __builtin_amdgcn_workgroup_id_y() : __builtin_amdgcn_workgroup_id_z();
}
#define get_local_id(d) lid_(d)
#define get_group_id(d) gid_(d)
#define get_local_size(d) wg_size(d)
#define get_global_size(d) grid_size(d)
#define get_global_id(d) ((size_t)gid_(d) * wg_size(d) + lid_(d))
#define barrier(f) (__builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"), __builtin_amdgcn_s_barrier(), __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"))
#define fma(a, b, c) __builtin_fmaf(a, b, c)
#define popcount(x) __builtin_popcount(x)
#define clz(x) ((x) == 0 ? 32u : (uint)__builtin_clz(x))
#define rotate(x, s) (((x) << (s)) | ((x) >> ((32 - (s)) & 31)))
#define mul_hi(x, y) ((uint)(((ulong)(x) * (ulong)(y)) >> 32))
#define mad24(x, y, z) ((x) * (y) + (z))
#define atomic_max(p, v) __atomic_fetch_max(p, v, __ATOMIC_RELAXED)
#define atomic_min(p, v) __atomic_fetch_min(p, v, __ATOMIC_RELAXED)
#define atomic_inc(p) __atomic_fetch_add(p, 1u, __ATOMIC_RELAXED)
#define atomic_add(p, v) __atomic_fetch_add(p, v, __ATOMIC_RELAXED)
#define atom_add(p, v) __atomic_fetch_add(p, v, __ATOMIC_RELAXED)
#define atomic_xchg(p, v) __atomic_exchange_n(p, v, __ATOMIC_RELAXED)
static inline uint cmpxchg_(global uint *p, uint e, uint d) { __atomic_compare_exchange_n(p, &e, d, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED); return e; }
#define atomic_cmpxchg(p, e, d) cmpxchg_(p, e, d)
kernel void vadd(global const float *a, global const float *b, global float *c, uint n) {
	size_t i = get_global_id(0);
	if (i < n) c[i] = a[i] + b[i];
}

// A runtime's buffer-copy blit: one dword per work-item from an origin in each buffer, the last
// work-item copying the remaining bytes one by one (the shape of HIP's device-to-device copy).
kernel void copybuf(global const uchar *srcI, global uchar *dstI, ulong srcOrigin, ulong dstOrigin, ulong size, uint remain) {
	ulong id = get_global_id(0);
	if (id >= size) return;
	global const uchar *src = srcI + srcOrigin;
	global uchar *dst = dstI + dstOrigin;
	if (remain == 8) {
		dst[id] = src[id];
	} else if (id < size - 1) {
		((global uint *)dst)[id] = ((global const uint *)src)[id];
	} else {
		for (uint i = 0; i < remain; ++i) dst[id * 4 + i] = src[id * 4 + i];
	}
}

kernel void saxpy(float alpha, global const float *x, global float *y, uint n) {
	size_t i = get_global_id(0);
	if (i < n) y[i] = fma(alpha, x[i], y[i]);
}

// dot product of doubles: each work-item sums a strided slice, then LDS tree reduction.
kernel void ddot(global const double *x, global const double *y, global double *partial, uint n) {
	local double tmp[256];
	size_t lid = get_local_id(0);
	double s = 0.0;
	for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) s += x[i] * y[i];
	tmp[lid] = s;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (size_t w = get_local_size(0) / 2; w > 0; w >>= 1) {
		if (lid < w) tmp[lid] += tmp[lid + w];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (lid == 0) partial[get_group_id(0)] = tmp[0];
}

// integer LDS reduction with barriers plus an LDS atomic.
kernel void lds_reduce(global const uint *in, global uint *out, global uint *maxout) {
	local uint tmp[256];
	local uint mx;
	size_t lid = get_local_id(0);
	if (lid == 0) mx = 0;
	tmp[lid] = in[get_global_id(0)];
	barrier(CLK_LOCAL_MEM_FENCE);
	atomic_max(&mx, tmp[lid]);
	for (size_t w = get_local_size(0) / 2; w > 0; w >>= 1) {
		if (lid < w) tmp[lid] += tmp[lid + w];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (lid == 0) { out[get_group_id(0)] = tmp[0]; maxout[get_group_id(0)] = mx; }
}

kernel void gatomics(global const uint *in, global uint *hist, global uint *sum, global ulong *sum64, global int *mn, uint n) {
	size_t i = get_global_id(0);
	if (i >= n) return;
	uint v = in[i];
	atomic_inc(&hist[v & 15]);
	atomic_add(sum, v);
	atom_add(sum64, (ulong)v * 3u);
	atomic_min(mn, (int)v - 1000);
	atomic_xchg(&hist[16], 7u);
	atomic_cmpxchg(&hist[17], 0u, (uint)i + 1);
}

#define TILE 16
kernel void matmul(global const float *A, global const float *B, global float *C, uint M, uint N, uint K) {
	local float As[TILE][TILE];
	local float Bs[TILE][TILE];
	uint tx = get_local_id(0), ty = get_local_id(1);
	uint row = get_group_id(1) * TILE + ty, col = get_group_id(0) * TILE + tx;
	float acc = 0.0f;
	for (uint t = 0; t < (K + TILE - 1) / TILE; t++) {
		uint ak = t * TILE + tx, bk = t * TILE + ty;
		As[ty][tx] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
		Bs[ty][tx] = (col < N && bk < K) ? B[bk * N + col] : 0.0f;
		barrier(CLK_LOCAL_MEM_FENCE);
		for (uint k = 0; k < TILE; k++) acc += As[ty][k] * Bs[k][tx];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (row < M && col < N) C[row * N + col] = acc;
}

kernel void divergent(global const int *in, global int *out) {
	size_t i = get_global_id(0);
	int v = in[i];
	int r = 0;
	if (v & 1) {
		for (int k = 0; k < (v & 31); k++) r += k * v;
	} else if (v % 3 == 0) {
		int x = v;
		while (x > 1) { x = (x & 1) ? 3 * x + 1 : x >> 1; r++; if (r > 200) break; }
	} else {
		r = -v;
	}
	out[i] = r;
}

kernel void private_array(global const uint *in, global uint *out, uint n) {
	uint arr[200];
	size_t i = get_global_id(0);
	uint seed = in[i];
	for (int k = 0; k < 200; k++) { seed = seed * 1664525u + 1013904223u; arr[k] = seed; }
	uint acc = 0;
	for (int k = 0; k < 200; k++) acc += arr[(k * 37 + in[i]) % 200] ^ (uint)k;
	out[i] = acc;
}

kernel void intops(global const int *a, global const int *b, global int *q, global uint *bits, global long *q64) {
	size_t i = get_global_id(0);
	int x = a[i], y = b[i];
	q[4*i+0] = (y != 0) ? x / y : 0;
	q[4*i+1] = (y != 0) ? x % y : 0;
	uint ux = (uint)x, uy = (uint)y;
	q[4*i+2] = (uy != 0) ? (int)(ux / uy) : 0;
	q[4*i+3] = (uy != 0) ? (int)(ux % uy) : 0;
	bits[4*i+0] = popcount(ux);
	bits[4*i+1] = clz(ux);
	bits[4*i+2] = rotate(ux, (uint)(uy & 31)) ^ (ux >> 7) ^ (ux << 3);
	bits[4*i+3] = mul_hi(ux, uy) + (uint)mad24(x & 0xffff, y & 0xffff, 5) + (uint)(ux & ~uy);
	long lx = (long)x * 100003L, ly = (long)(y | 1);
	q64[i] = lx / ly + lx % 7;
}

#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void half_math(global const half2 *a, global const half2 *b, global half2 *c, global const float2 *fa, global float2 *fc) {
	size_t i = get_global_id(0);
	half2 x = a[i], y = b[i];
	c[i] = x * y + x;
	float2 f = fa[i];
	fc[i] = f * (float2)(2.0f, 0.5f) + f.yx;
}

// Division (v_div_scale/fmas/fixup f32 and f64, v_rcp), transcendentals (v_exp/log/sin/cos) and
// scaling (v_ldexp, v_frexp), square roots.
kernel void fmath(global const float *a, global const float *b, global float *out, global const double *da,
                  global const double *db, global double *dout) {
	uint i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
	float x = a[i], y = b[i];
	out[8 * i + 0] = x / y;
	out[8 * i + 1] = __builtin_exp2f(x * 0.125f);
	out[8 * i + 2] = __builtin_log2f(y);
	out[8 * i + 3] = __builtin_amdgcn_sinf(x * 0.01f);
	out[8 * i + 4] = __builtin_amdgcn_cosf(x * 0.01f);
	out[8 * i + 5] = __builtin_sqrtf(y);
	out[8 * i + 6] = __builtin_amdgcn_ldexpf(x, (int)y);
	out[8 * i + 7] = __builtin_amdgcn_frexp_mantf(y);
	double p = da[i], q = db[i];
	dout[4 * i + 0] = p / q;
	dout[4 * i + 1] = __builtin_sqrt(q);
	dout[4 * i + 2] = __builtin_amdgcn_rcp(q);
	dout[4 * i + 3] = __builtin_amdgcn_ldexp(p, __builtin_amdgcn_frexp_exp(q));
}

// DPP lane permutations (v_mov_b32_dpp with update_dpp's old value) and SDWA sub-dword operands.
kernel void dpp(global const int *in, global int *out) {
	uint l = __builtin_amdgcn_workitem_id_x();
	int v = in[l];
	out[10 * l + 0] = __builtin_amdgcn_update_dpp(-1, v, 0x1b, 0xf, 0xf, false);
	out[10 * l + 1] = __builtin_amdgcn_update_dpp(-1, v, 0x111, 0xf, 0xf, false);
	out[10 * l + 2] = __builtin_amdgcn_update_dpp(-1, v, 0x101, 0xf, 0xf, true);
	out[10 * l + 3] = __builtin_amdgcn_update_dpp(-1, v, 0x123, 0xf, 0xf, false);
	out[10 * l + 4] = __builtin_amdgcn_update_dpp(-1, v, 0x140, 0xf, 0xf, false);
	out[10 * l + 5] = __builtin_amdgcn_update_dpp(-1, v, 0x141, 0xf, 0xf, false);
	out[10 * l + 6] = __builtin_amdgcn_update_dpp(-1, v, 0x142, 0xa, 0xf, false);
	out[10 * l + 7] = __builtin_amdgcn_update_dpp(-1, v, 0x143, 0xc, 0xf, false);
	out[10 * l + 8] = __builtin_amdgcn_update_dpp(-1, v, 0x138, 0xf, 0xf, false);
	out[10 * l + 9] = __builtin_amdgcn_update_dpp(-1, v, 0x134, 0xf, 0x5, false);
}
kernel void subdword(global const uint *a, global const uint *b, global uint *out) {
	uint l = __builtin_amdgcn_workitem_id_x();
	ushort2 x = as_ushort2(a[l]), y = as_ushort2(b[l]);
	uchar4 p = as_uchar4(a[l]), q = as_uchar4(b[l]);
	out[3 * l + 0] = as_uint((ushort2)(x.y + y.x, x.x * y.y));
	out[3 * l + 1] = as_uint((uchar4)(p.w + q.x, p.z ^ q.y, p.y - q.z, p.x | q.w));
	out[3 * l + 2] = (uint)(short)x.y * (uint)(char)q.z;
}

// Matrix cores (one wave each). Every lane gathers its A and B elements and scatters D with the inverse
// layouts of AMD's matrix instruction calculator (register, lane -> element), the opposite direction of
// the interpreter's element -> register mapping. Matrices are row-major per block in memory.
kernel void mfma_f16(global const half *a, global const half *b, global const float *c, global float *d) {
	uint l = __builtin_amdgcn_workitem_id_x(); // 32x32x8, 1 block: 4 k per lane
	half4 x, y;
	for (int s = 0; s < 4; s++) {
		uint k = 4 * (l / 32) + s;
		x[s] = a[(l % 32) * 8 + k];
		y[s] = b[k * 32 + l % 32];
	}
	float16 acc;
	for (int v = 0; v < 16; v++)
		acc[v] = c[(8 * (v / 4) + 4 * (l / 32) + v % 4) * 32 + l % 32];
	acc = __builtin_amdgcn_mfma_f32_32x32x8f16(x, y, acc, 0, 0, 0);
	for (int v = 0; v < 16; v++)
		d[(8 * (v / 4) + 4 * (l / 32) + v % 4) * 32 + l % 32] = acc[v];
}
kernel void mfma_i8(global const char *a, global const char *b, global const int *c, global int *d) {
	uint l = __builtin_amdgcn_workitem_id_x(); // 16x16x16, 1 block: 4 bytes of k per lane
	uint x = 0, y = 0;
	for (int s = 0; s < 4; s++) {
		uint k = 4 * (l / 16) + s;
		x |= (uint)(uchar)a[(l % 16) * 16 + k] << (8 * s);
		y |= (uint)(uchar)b[k * 16 + l % 16] << (8 * s);
	}
	int4 acc;
	for (int v = 0; v < 4; v++)
		acc[v] = c[(4 * (l / 16) + v) * 16 + l % 16];
	acc = __builtin_amdgcn_mfma_i32_16x16x16i8((int)x, (int)y, acc, 0, 0, 0);
	for (int v = 0; v < 4; v++)
		d[(4 * (l / 16) + v) * 16 + l % 16] = acc[v];
}
kernel void mfma_f64(global const double *a, global const double *b, global const double *c, global double *d) {
	uint l = __builtin_amdgcn_workitem_id_x(); // 16x16x4 f64: one k per lane, register pairs for D
	double x = a[(l % 16) * 4 + l / 16], y = b[(l / 16) * 16 + l % 16];
	double4 acc;
	for (int v = 0; v < 4; v++)
		acc[v] = c[(4 * v + l / 16) * 16 + l % 16];
	acc = __builtin_amdgcn_mfma_f64_16x16x4f64(x, y, acc, 0, 0, 0);
	for (int v = 0; v < 4; v++)
		d[(4 * v + l / 16) * 16 + l % 16] = acc[v];
}
kernel void mfma_bf16(global const ushort *a, global const ushort *b, global const float *c, global float *d) {
	uint l = __builtin_amdgcn_workitem_id_x(); // 16x16x4 bf16_1k, 4 blocks: lane = row + 16 * block
	uint blk = l / 16;
	short4 x, y;
	for (int s = 0; s < 4; s++) {
		x[s] = a[(blk * 16 + l % 16) * 4 + s];
		y[s] = b[(blk * 4 + s) * 16 + l % 16];
	}
	float16 acc;
	for (int v = 0; v < 16; v++)
		acc[v] = c[((v / 4) * 16 + 4 * (l / 16) + v % 4) * 16 + l % 16];
	acc = __builtin_amdgcn_mfma_f32_16x16x4bf16_1k(x, y, acc, 0, 0, 0);
	for (int v = 0; v < 16; v++)
		d[((v / 4) * 16 + 4 * (l / 16) + v % 4) * 16 + l % 16] = acc[v];
}
kernel void mfma_4x4(global const float *a, global const float *b, global const float *c, global float *d) {
	uint l = __builtin_amdgcn_workitem_id_x(); // 4x4x1 f32, 16 blocks: lane = row + 4 * block
	float x = a[l], y = b[(l / 4) * 4 + l % 4];
	float4 acc, acc2;
	for (int v = 0; v < 4; v++)
		acc[v] = c[((l / 4) * 4 + v) * 4 + l % 4];
	acc2 = __builtin_amdgcn_mfma_f32_4x4x1f32(x, y, acc, 2, 1, 3); // cbsz:2 abid:1 blgp:3
	acc = __builtin_amdgcn_mfma_f32_4x4x1f32(x, y, acc, 0, 0, 0);
	for (int v = 0; v < 4; v++) {
		d[((l / 4) * 4 + v) * 4 + l % 4] = acc[v];
		d[256 + ((l / 4) * 4 + v) * 4 + l % 4] = acc2[v];
	}
}

// Cross-lane operations (readfirstlane/readlane, mbcnt, ds_swizzle/permute/bpermute), sums of absolute
// differences, class tests, three-operand min/max/median, byte conversions and f64 rounding.
kernel void xlane(global const uint *in, global uint *out, global const float *f, global const double *d, global float *fo, global double *dout) {
	uint l = __builtin_amdgcn_workitem_id_x();
	uint v = in[l];
	global uint *o = out + 16 * l;
	o[0] = __builtin_amdgcn_readfirstlane(v);
	o[1] = __builtin_amdgcn_readlane(v, 37);
	o[2] = __builtin_amdgcn_mbcnt_hi(0xaaaaaaaau, __builtin_amdgcn_mbcnt_lo(0x55555555u, 100u));
	o[3] = __builtin_amdgcn_ds_swizzle(v, 0x801b);
	o[4] = __builtin_amdgcn_ds_swizzle(v, 0x041f);
	o[5] = __builtin_amdgcn_ds_bpermute((int)((l ^ 5) * 4), v);
	o[6] = __builtin_amdgcn_ds_permute((int)(((l + 3) & 63) * 4), v);
	o[7] = l >= 10 ? __builtin_amdgcn_readfirstlane(v) : 7;
	o[8] = __builtin_amdgcn_sad_u8(v, v * 7, 3u);
	o[9] = __builtin_amdgcn_msad_u8(v, v & 0xff00ff00u, 1u);
	o[10] = __builtin_amdgcn_sad_hi_u8(v, ~v, 5u);
	o[11] = __builtin_amdgcn_sad_u16(v, v >> 3, 2u);
	o[12] = __builtin_amdgcn_lerp(v, v * 3, l);
	float x = f[l];
	double y = d[l];
	o[13] = __builtin_amdgcn_classf(x, 0x3ff & (l * 37)) | __builtin_amdgcn_class(y, 0x3ff & (l * 53)) << 1 |
		__builtin_isnan(x) << 2 | __builtin_isinf(y) << 3 | __builtin_isfinite(x) << 4 | __builtin_isnormal(y) << 5;
	o[14] = (uint)(int)__builtin_floorf(x * 3.5f);
	fo[4 * l] = __builtin_amdgcn_fmed3f(x, f[(l + 1) & 63], f[(l + 2) & 63]);
	fo[4 * l + 1] = (float)(uchar)(v >> 8) + (float)(uchar)(v >> 24);
	fo[4 * l + 2] = __builtin_fminf(__builtin_fminf(x, f[(l + 5) & 63]), f[(l + 9) & 63]);
	fo[4 * l + 3] = __builtin_fmaxf(__builtin_fmaxf(x, f[(l + 5) & 63]), f[(l + 9) & 63]);
	dout[4 * l] = __builtin_floor(y);
	dout[4 * l + 1] = __builtin_ceil(y);
	dout[4 * l + 2] = __builtin_trunc(y);
	dout[4 * l + 3] = __builtin_rint(y);
}

// Byte and short comparisons: clang-14 emits VOPC with SDWA selects and sign extension.
kernel void cmpsdwa(global const uint *a, global const uint *b, global uint *out) {
	uint l = __builtin_amdgcn_workitem_id_x();
	uchar4 p = as_uchar4(a[l]), q = as_uchar4(b[l]);
	char4 sp = as_char4(a[l]), sq = as_char4(b[l]);
	short2 x = as_short2(a[l]), y = as_short2(b[l]);
	uint r = 0;
	r |= (p.y < q.z) << 0;
	r |= (p.w == q.x) << 1;
	r |= (sp.z > sq.y) << 2;
	r |= (x.y < y.x) << 3;
	r |= (p.x >= q.w) << 4;
	r |= (sp.w <= sq.w) << 5;
	r |= ((ushort)x.y > (ushort)y.y) << 6;
	out[l] = r;
}

// binary16 and 16-bit integer scalar arithmetic (TestCorpusHalfScalar checks every result against Go).
kernel void half_scalar(global const half *a, global const half *b, global const half *c, global const short *s,
                        global const float *f, global half *out, global short *iout, global float *fout) {
	uint i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
	half x = a[i], y = b[i], z = c[i];
	short k = s[i];
	float g = f[i];
	global half *o = out + 32 * i;
	o[0] = x + y;
	o[1] = x - y;
	o[2] = x * y;
	o[3] = x / y;
	o[4] = __builtin_fmaf16(x, y, z);
	o[5] = __builtin_fminf16(x, y);
	o[6] = __builtin_fmaxf16(x, z);
	o[7] = __builtin_sqrtf16(__builtin_fabsf16(x));
	o[8] = __builtin_floorf16(x);
	o[9] = __builtin_ceilf16(x);
	o[10] = __builtin_truncf16(x);
	o[11] = __builtin_rintf16(x);
	o[12] = __builtin_copysignf16(x, y);
	o[13] = __builtin_amdgcn_ldexph(x, (int)(k % 20));
	o[14] = __builtin_amdgcn_rcph(y);
	o[15] = __builtin_amdgcn_rsqh(__builtin_fabsf16(y));
	o[16] = __builtin_amdgcn_fracth(x);
	o[17] = __builtin_amdgcn_frexp_manth(x);
	o[18] = __builtin_amdgcn_fmed3h(x, y, z);
	o[19] = __builtin_amdgcn_sinh(x * (half)0.0625);
	o[20] = (half)k;
	o[21] = (half)(ushort)k;
	o[22] = (half)g;
	o[23] = __builtin_amdgcn_cosh(z);
	o[24] = -x * __builtin_fabsf16(z) - y;
	o[25] = __builtin_exp2f16(x * (half)0.25);
	o[26] = __builtin_log2f16(__builtin_fabsf16(z));
	o[27] = __builtin_amdgcn_div_fixuph(x, y, z);
	global short *io = iout + 8 * i;
	io[0] = (short)x;
	io[1] = (short)(ushort)x;
	io[2] = __builtin_amdgcn_frexp_exph(x);
	io[3] = (x < y) | (x == z) << 1 | (x >= y) << 2 | (x != x) << 3 | (y > z) << 4;
	io[4] = (short)(k * k + (short)i);
	io[5] = k > (short)i ? k : (short)i;
	io[6] = (short)((ushort)k >> 3) - (short)(k >> 2);
	io[7] = (short)((ushort)k < (ushort)i ? (ushort)k : (ushort)i);
	fout[2 * i] = (float)x;
	fout[2 * i + 1] = (float)x * (float)y + g;
}

// Work-item ids in every group of a 3D grid, partial groups at its edges included: per work-item
// its local ids, its group ids and its lane + 1 in the wave (0: never ran), indexed by global id.
kernel void ids3d(global uint *out, uint gx, uint gy) {
	uint x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
	global uint *o = out + 3 * ((z * gy + y) * gx + x);
	o[0] = lid_(0) | lid_(1) << 10 | lid_(2) << 20;
	o[1] = gid_(0) | gid_(1) << 10 | gid_(2) << 20;
	o[2] = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)) + 1;
}
