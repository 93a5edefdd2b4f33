// Drives libdrm_amdgpu's GEM and command-submission API against a render node given as argv[1],
// the way kfdtest's KFDEvictTest does (AllocAmdgpuBo, amdgpu_bo_alloc_and_map,
// AmdgpuCommandSubmissionSdmaNop), then checks an SDMA WRITE_LINEAR IB through the CPU mapping.
// Prints key=value lines; exits non-zero at the first failure.
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libdrm/amdgpu.h>
#include <libdrm/amdgpu_drm.h>

#define CHECK(what, r)                                               \
	do {                                                         \
		int r_ = (r);                                        \
		printf("%s=%d\n", what, r_);                         \
		if (r_) {                                            \
			fflush(stdout);                              \
			return 1;                                    \
		}                                                    \
	} while (0)

static uint64_t vram_usage(amdgpu_device_handle dev) {
	uint64_t v = 0;
	amdgpu_query_info(dev, AMDGPU_INFO_VRAM_USAGE, sizeof(v), &v);
	return v;
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: %s /path/to/renderD128\n", argv[0]);
		return 2;
	}
	int fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("open");
		return 1;
	}
	uint32_t major, minor;
	amdgpu_device_handle dev;
	CHECK("initialize", amdgpu_device_initialize(fd, &major, &minor, &dev));
	uint64_t usage0 = vram_usage(dev);

	// AllocAmdgpuBo: a large VRAM buffer, cleared.
	struct amdgpu_bo_alloc_request alloc = {.alloc_size = 256 << 20, .phys_alignment = 4096,
						.preferred_heap = AMDGPU_GEM_DOMAIN_VRAM,
						.flags = AMDGPU_GEM_CREATE_VRAM_CLEARED};
	amdgpu_bo_handle vram;
	CHECK("bo_alloc_vram", amdgpu_bo_alloc(dev, &alloc, &vram));
	printf("vram_usage_delta=%" PRIu64 "\n", vram_usage(dev) - usage0);

	amdgpu_context_handle ctx;
	CHECK("ctx_create", amdgpu_cs_ctx_create(dev, &ctx));

	// amdgpu_bo_alloc_and_map: a GTT page, a VA range, the mapping, the CPU mapping.
	struct amdgpu_bo_alloc_request req = {.alloc_size = 4096, .phys_alignment = 4096,
					      .preferred_heap = AMDGPU_GEM_DOMAIN_GTT};
	amdgpu_bo_handle ib_bo;
	amdgpu_va_handle va_handle;
	uint64_t va;
	void *cpu;
	CHECK("bo_alloc_gtt", amdgpu_bo_alloc(dev, &req, &ib_bo));
	CHECK("va_range_alloc", amdgpu_va_range_alloc(dev, amdgpu_gpu_va_range_general, 4096, 4096, 0, &va, &va_handle, 0));
	CHECK("va_map", amdgpu_bo_va_op(ib_bo, 0, 4096, va, 0, AMDGPU_VA_OP_MAP));
	CHECK("cpu_map", amdgpu_bo_cpu_map(ib_bo, &cpu));
	printf("va=0x%" PRIx64 "\n", va);

	amdgpu_bo_handle resources[] = {ib_bo, vram};
	amdgpu_bo_list_handle list;
	CHECK("bo_list_create", amdgpu_bo_list_create(dev, 2, resources, NULL, &list));

	// AmdgpuCommandSubmissionSdmaNop: 16 SDMA NOPs, 100 submissions, each waited for.
	uint32_t *ptr = cpu;
	for (int i = 0; i < 16; i++)
		ptr[i] = 0; // SDMA_NOP
	struct amdgpu_cs_ib_info ib = {.ib_mc_address = va, .size = 16};
	struct amdgpu_cs_request rq = {.ip_type = AMDGPU_HW_IP_DMA, .ring = 0, .number_of_ibs = 1, .ibs = &ib,
				       .resources = list};
	struct amdgpu_cs_fence fence = {.context = ctx, .ip_type = AMDGPU_HW_IP_DMA};
	int expired_all = 1;
	uint64_t last = 0;
	for (int i = 0; i < 100; i++) {
		CHECK("cs_submit", amdgpu_cs_submit(ctx, 0, &rq, 1) != 0 || rq.seq_no != last + 1);
		last = rq.seq_no;
		fence.fence = rq.seq_no;
		uint32_t expired = 0;
		CHECK("query_fence_status", amdgpu_cs_query_fence_status(&fence, 10000000000ull, 0, &expired));
		expired_all &= expired == 1;
	}
	printf("last_seq=%" PRIu64 "\nall_expired=%d\n", last, expired_all);

	// SDMA WRITE_LINEAR (op 2, sub 0): two dwords into the same page at +2048, seen by the CPU.
	uint32_t *w = ptr + 64; // the IB at +256
	w[0] = 2;
	w[1] = (uint32_t)(va + 2048);
	w[2] = (uint32_t)((va + 2048) >> 32);
	w[3] = 1; // count - 1
	w[4] = 0xdeadbeef;
	w[5] = 0x0badf00d;
	w[6] = w[7] = 0; // NOPs to a multiple of 4 dwords
	struct amdgpu_cs_ib_info ib2 = {.ib_mc_address = va + 256, .size = 8};
	rq.ibs = &ib2;
	CHECK("cs_submit_write", amdgpu_cs_submit(ctx, 0, &rq, 1));
	fence.fence = rq.seq_no;
	uint32_t expired = 0;
	CHECK("query_fence_write", amdgpu_cs_query_fence_status(&fence, AMDGPU_TIMEOUT_INFINITE, 0, &expired));
	printf("write_expired=%u\nwritten=0x%08x 0x%08x\n", expired, ptr[512], ptr[513]);

	// A context that was never used and its state.
	uint32_t hangs = 0, reset = 0;
	CHECK("query_reset_state", amdgpu_cs_query_reset_state(ctx, &reset, &hangs));
	printf("reset_state=%u\n", reset);

	// Teardown, in KFDEvictTest's order.
	CHECK("bo_list_destroy", amdgpu_bo_list_destroy(list));
	CHECK("cpu_unmap", amdgpu_bo_cpu_unmap(ib_bo));
	CHECK("va_unmap", amdgpu_bo_va_op(ib_bo, 0, 4096, va, 0, AMDGPU_VA_OP_UNMAP));
	CHECK("va_range_free", amdgpu_va_range_free(va_handle));
	CHECK("bo_free_gtt", amdgpu_bo_free(ib_bo));
	CHECK("ctx_free", amdgpu_cs_ctx_free(ctx));
	CHECK("bo_free_vram", amdgpu_bo_free(vram));
	printf("vram_usage_after=%" PRIu64 "\n", vram_usage(dev) - usage0);
	amdgpu_device_deinitialize(dev);
	close(fd);
	return 0;
}
