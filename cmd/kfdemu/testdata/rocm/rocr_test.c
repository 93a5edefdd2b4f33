/* Drives Debian's ROCr 5.2.3 (libhsa-runtime64) against the namespace's /dev/kfd (kfdemu exec).
 * Modes: "barrier" (init, agents, pools, allocation, signals, queue, barrier-AND completions) and
 * "copy" (adds hsa_amd_memory_async_copy host<->device with the data checked). Prints "key value"
 * lines; every failing call prints the call and its status string and exits 1. */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                      \
	do {                                                                             \
		hsa_status_t s_ = (call);                                                \
		if (s_ != HSA_STATUS_SUCCESS) {                                          \
			const char *m_ = "?";                                            \
			hsa_status_string(s_, &m_);                                      \
			fprintf(stderr, "FAIL %s: %#x %s (line %d)\n", #call, s_, m_, __LINE__); \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

static hsa_agent_t gpu, cpu;
static int ngpu;
static hsa_amd_memory_pool_t gpu_pool, sys_pool;

static hsa_status_t pool_cb(hsa_amd_memory_pool_t p, void *data)
{
	hsa_agent_t *a = data;
	hsa_amd_segment_t seg;
	uint32_t flags = 0;
	size_t size = 0;
	bool alloc = false;
	CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg));
	CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SIZE, &size));
	CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &alloc));
	if (seg == HSA_AMD_SEGMENT_GLOBAL)
		CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
	printf("pool agent %lu segment %d flags %u size %zu alloc %d\n", (unsigned long)a->handle, seg,
	       flags, size, alloc);
	if (seg == HSA_AMD_SEGMENT_GLOBAL && alloc) {
		if (a->handle == gpu.handle && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED))
			gpu_pool = p;
		if (a->handle == cpu.handle && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED))
			sys_pool = p;
	}
	return HSA_STATUS_SUCCESS;
}

static hsa_status_t agent_cb(hsa_agent_t a, void *data)
{
	hsa_device_type_t t;
	char name[64] = {0};
	uint32_t cus = 0, wave = 0;
	(void)data;
	CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t));
	CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_NAME, name));
	CHECK(hsa_agent_get_info(a, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, &cus));
	if (t == HSA_DEVICE_TYPE_GPU) {
		CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_WAVEFRONT_SIZE, &wave));
		if (!ngpu++)
			gpu = a;
	} else if (t == HSA_DEVICE_TYPE_CPU && !cpu.handle) {
		cpu = a;
	}
	printf("agent %lu type %d name %s cus %u wave %u\n", (unsigned long)a.handle, t, name, cus, wave);
	return HSA_STATUS_SUCCESS;
}

int main(int argc, char **argv)
{
	int copy = argc > 1 && strcmp(argv[1], "copy") == 0;
	CHECK(hsa_init());
	CHECK(hsa_iterate_agents(agent_cb, NULL));
	if (!ngpu || !cpu.handle) {
		fprintf(stderr, "FAIL no GPU or CPU agent\n");
		return 1;
	}
	CHECK(hsa_amd_agent_iterate_memory_pools(cpu, pool_cb, &cpu));
	CHECK(hsa_amd_agent_iterate_memory_pools(gpu, pool_cb, &gpu));
	if (!gpu_pool.handle || !sys_pool.handle) {
		fprintf(stderr, "FAIL missing coarse-grained GPU pool or fine-grained system pool\n");
		return 1;
	}
	void *dev, *host;
	size_t n = 1 << 20;
	CHECK(hsa_amd_memory_pool_allocate(gpu_pool, n, 0, &dev));
	CHECK(hsa_amd_memory_pool_allocate(sys_pool, n, 0, &host));
	CHECK(hsa_amd_agents_allow_access(1, &gpu, NULL, host));

	hsa_queue_t *q;
	CHECK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
	for (int i = 0; i < 3; i++) {
		hsa_signal_t done;
		CHECK(hsa_signal_create(1, 0, NULL, &done));
		uint64_t idx = hsa_queue_add_write_index_relaxed(q, 1);
		hsa_barrier_and_packet_t *p = (hsa_barrier_and_packet_t *)q->base_address + (idx % q->size);
		memset((char *)p + 4, 0, sizeof(*p) - 4);
		p->completion_signal = done;
		uint16_t header = HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE |
				  HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE |
				  HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE |
				  1 << HSA_PACKET_HEADER_BARRIER;
		__atomic_store_n((uint32_t *)p, header, __ATOMIC_RELEASE);
		hsa_signal_store_screlease(q->doorbell_signal, idx);
		hsa_signal_value_t v =
		    hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, 5000000000ull, HSA_WAIT_STATE_BLOCKED);
		if (v != 0) {
			fprintf(stderr, "FAIL barrier %d: completion signal %ld\n", i, (long)v);
			return 1;
		}
		CHECK(hsa_signal_destroy(done));
		printf("barrier %d ok\n", i);
	}
	if (copy) {
		uint32_t *h = host;
		void *back;
		hsa_signal_t s;
		CHECK(hsa_amd_memory_pool_allocate(sys_pool, n, 0, &back));
		CHECK(hsa_amd_agents_allow_access(1, &gpu, NULL, back));
		for (size_t i = 0; i < n / 4; i++)
			h[i] = 0x5eed0000u ^ (uint32_t)i;
		CHECK(hsa_signal_create(1, 0, NULL, &s));
		CHECK(hsa_amd_memory_async_copy(dev, gpu, host, cpu, n, 0, NULL, s));
		if (hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_LT, 1, 5000000000ull, HSA_WAIT_STATE_BLOCKED)) {
			fprintf(stderr, "FAIL host->device copy did not complete\n");
			return 1;
		}
		hsa_signal_store_relaxed(s, 1);
		CHECK(hsa_amd_memory_async_copy(back, cpu, dev, gpu, n, 0, NULL, s));
		if (hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_LT, 1, 5000000000ull, HSA_WAIT_STATE_BLOCKED)) {
			fprintf(stderr, "FAIL device->host copy did not complete\n");
			return 1;
		}
		if (memcmp(back, host, n)) {
			fprintf(stderr, "FAIL copied data differs\n");
			return 1;
		}
		printf("copy ok\n");
		CHECK(hsa_signal_destroy(s));
		CHECK(hsa_amd_memory_pool_free(back));
	}
	CHECK(hsa_queue_destroy(q));
	CHECK(hsa_amd_memory_pool_free(dev));
	CHECK(hsa_amd_memory_pool_free(host));
	CHECK(hsa_shut_down());
	printf("done\n");
	return 0;
}
