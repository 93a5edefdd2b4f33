/* Loads a gfx90a code object with ROCr 5.2.3's loader and dispatches its vadd kernel on an AQL
 * queue: the emulator's packet processor and shader model run LLVM's code. Prints "dispatch ok"
 * when every element is right, and "mfma ok" after the corpus's mfma_f64 kernel when the code
 * object has one. Usage: rocr_dispatch CODE_OBJECT. Built by cmd/kfdemu's tests. */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                        \
	do {                                                                               \
		hsa_status_t s_ = (call);                                                  \
		if (s_ != HSA_STATUS_SUCCESS) {                                            \
			const char *m_ = "";                                               \
			hsa_status_string(s_, &m_);                                        \
			fprintf(stderr, "FAIL %s: %#x %s (line %d)\n", #call, s_, m_, __LINE__); \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

static hsa_agent_t gpu, cpu;
static hsa_amd_memory_pool_t kernarg_pool, fine_pool;

static hsa_status_t agent_cb(hsa_agent_t a, void *d)
{
	hsa_device_type_t t;
	CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t));
	if (t == HSA_DEVICE_TYPE_GPU && !gpu.handle)
		gpu = a;
	if (t == HSA_DEVICE_TYPE_CPU && !cpu.handle)
		cpu = a;
	return HSA_STATUS_SUCCESS;
}

static hsa_status_t pool_cb(hsa_amd_memory_pool_t p, void *d)
{
	hsa_amd_segment_t seg;
	uint32_t flags;
	CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg));
	if (seg != HSA_AMD_SEGMENT_GLOBAL)
		return HSA_STATUS_SUCCESS;
	CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
	if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT)
		kernarg_pool = p;
	else if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED)
		fine_pool = p;
	return HSA_STATUS_SUCCESS;
}

/* dispatch submits one kernel dispatch packet on q and waits for its completion signal. */
static int dispatch(hsa_queue_t *q, uint64_t kobj, void *ka, uint32_t grid, uint16_t wg, uint32_t priv, uint32_t group)
{
	hsa_signal_t done;
	if (hsa_signal_create(1, 0, NULL, &done) != HSA_STATUS_SUCCESS)
		return 1;
	uint64_t idx = hsa_queue_add_write_index_relaxed(q, 1);
	hsa_kernel_dispatch_packet_t *p = (hsa_kernel_dispatch_packet_t *)q->base_address + (idx % q->size);
	memset((char *)p + 4, 0, sizeof(*p) - 4);
	p->workgroup_size_x = wg;
	p->workgroup_size_y = p->workgroup_size_z = 1;
	p->grid_size_x = grid;
	p->grid_size_y = p->grid_size_z = 1;
	p->kernel_object = kobj;
	p->kernarg_address = ka;
	p->private_segment_size = priv;
	p->group_segment_size = group;
	p->completion_signal = done;
	uint16_t header = HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE | 1 << HSA_PACKET_HEADER_BARRIER |
			  HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE |
			  HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE;
	uint16_t setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
	__atomic_store_n((uint32_t *)p, header | (uint32_t)setup << 16, __ATOMIC_RELEASE);
	hsa_signal_store_screlease(q->doorbell_signal, idx);
	int rc = hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, 20000000000ull, HSA_WAIT_STATE_BLOCKED) != 0;
	hsa_signal_destroy(done);
	return rc;
}

/* mfma runs the corpus's mfma_f64 kernel (v_mfma_f64_16x16x4f64, D = A*B + C) when the code object has it. */
static int mfma(hsa_executable_t exe, hsa_queue_t *q)
{
	hsa_executable_symbol_t sym;
	if (hsa_executable_get_symbol_by_name(exe, "mfma_f64.kd", &gpu, &sym) != HSA_STATUS_SUCCESS)
		return 0;
	uint64_t kobj;
	uint32_t priv, group;
	CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kobj));
	CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &group));
	CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, &priv));
	double *m;
	void *ka;
	CHECK(hsa_amd_memory_pool_allocate(fine_pool, (64 + 64 + 256 + 256) * sizeof(double), 0, (void **)&m));
	CHECK(hsa_amd_memory_pool_allocate(kernarg_pool, 64, 0, &ka));
	double *a = m, *b = m + 64, *c = m + 128, *d = m + 384;
	for (int i = 0; i < 64; i++) {
		a[i] = (double)(i % 7) - 3;
		b[i] = (double)(i % 5) / 2;
	}
	for (int i = 0; i < 256; i++)
		c[i] = i, d[i] = -1;
	double *args[4] = {a, b, c, d};
	memcpy(ka, args, sizeof(args));
	hsa_agent_t both[2] = {gpu, cpu};
	CHECK(hsa_amd_agents_allow_access(2, both, NULL, m));
	CHECK(hsa_amd_agents_allow_access(2, both, NULL, ka));
	if (dispatch(q, kobj, ka, 64, 64, priv, group)) {
		fprintf(stderr, "FAIL mfma_f64 did not complete\n");
		return 1;
	}
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 16; j++) {
			double want = c[i * 16 + j];
			for (int k = 0; k < 4; k++)
				want += a[i * 4 + k] * b[k * 16 + j];
			if (d[i * 16 + j] != want) {
				fprintf(stderr, "FAIL mfma_f64 D[%d][%d] = %f, want %f\n", i, j, d[i * 16 + j], want);
				return 1;
			}
		}
	printf("mfma ok 16x16x4 f64\n");
	CHECK(hsa_amd_memory_pool_free(ka));
	CHECK(hsa_amd_memory_pool_free(m));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	static char co[1 << 20];
	size_t co_size = fread(co, 1, sizeof(co), f);
	fclose(f);

	CHECK(hsa_init());
	CHECK(hsa_iterate_agents(agent_cb, NULL));
	CHECK(hsa_amd_agent_iterate_memory_pools(cpu, pool_cb, NULL));
	if (!gpu.handle || !kernarg_pool.handle || !fine_pool.handle) {
		fprintf(stderr, "FAIL no GPU, kernarg or fine-grained pool\n");
		return 1;
	}
	hsa_code_object_reader_t reader;
	hsa_executable_t exe;
	hsa_executable_symbol_t sym;
	CHECK(hsa_code_object_reader_create_from_memory(co, co_size, &reader));
	CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe));
	CHECK(hsa_executable_load_agent_code_object(exe, gpu, reader, NULL, NULL));
	CHECK(hsa_executable_freeze(exe, NULL));
	CHECK(hsa_executable_get_symbol_by_name(exe, "vadd.kd", &gpu, &sym));
	uint64_t kobj;
	uint32_t kasize, group, priv;
	CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kobj));
	CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &kasize));
	CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &group));
	CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, &priv));
	printf("kernel object %#lx kernarg %u group %u private %u\n", (unsigned long)kobj, kasize, group, priv);

	const uint32_t n = 10000; /* not a multiple of the work-group size: the tail group is partial */
	float *a, *b, *c;
	CHECK(hsa_amd_memory_pool_allocate(fine_pool, n * sizeof(float), 0, (void **)&a));
	CHECK(hsa_amd_memory_pool_allocate(fine_pool, n * sizeof(float), 0, (void **)&b));
	CHECK(hsa_amd_memory_pool_allocate(fine_pool, n * sizeof(float), 0, (void **)&c));
	for (uint32_t i = 0; i < n; i++) {
		a[i] = (float)i * 0.5f;
		b[i] = 1000.0f - (float)i;
		c[i] = -1.0f;
	}
	void *ka;
	CHECK(hsa_amd_memory_pool_allocate(kernarg_pool, kasize < 64 ? 64 : kasize, 0, &ka));
	memset(ka, 0, kasize);
	struct {
		float *a, *b, *c;
		uint32_t n;
	} args = {a, b, c, n};
	memcpy(ka, &args, sizeof(args));
	hsa_agent_t both[2] = {gpu, cpu};
	CHECK(hsa_amd_agents_allow_access(2, both, NULL, a));
	CHECK(hsa_amd_agents_allow_access(2, both, NULL, b));
	CHECK(hsa_amd_agents_allow_access(2, both, NULL, c));
	CHECK(hsa_amd_agents_allow_access(2, both, NULL, ka));

	hsa_queue_t *q;
	CHECK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
	if (dispatch(q, kobj, ka, n, 256, priv, group)) {
		fprintf(stderr, "FAIL dispatch did not complete\n");
		return 1;
	}
	for (uint32_t i = 0; i < n; i++)
		if (c[i] != a[i] + b[i]) {
			fprintf(stderr, "FAIL c[%u] = %f, want %f\n", i, c[i], a[i] + b[i]);
			return 1;
		}
	printf("dispatch ok %u elements\n", n);
	if (mfma(exe, q))
		return 1;
	CHECK(hsa_queue_destroy(q));
	CHECK(hsa_executable_destroy(exe));
	CHECK(hsa_code_object_reader_destroy(reader));
	CHECK(hsa_amd_memory_pool_free(ka));
	CHECK(hsa_amd_memory_pool_free(a));
	CHECK(hsa_amd_memory_pool_free(b));
	CHECK(hsa_amd_memory_pool_free(c));
	CHECK(hsa_shut_down());
	printf("done\n");
	return 0;
}
