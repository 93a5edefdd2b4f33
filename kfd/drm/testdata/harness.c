// Drives libdrm_amdgpu against a render node given as argv[1] (a kfdemu mount's
// dev/dri/renderD<minor>): amdgpu_device_initialize, amdgpu_query_gpu_info, the heap and
// firmware queries libhsakmt/ROCr make, and the marketing name. Prints key=value lines.
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <libdrm/amdgpu.h>
#include <libdrm/amdgpu_drm.h>

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
	int r = amdgpu_device_initialize(fd, &major, &minor, &dev);
	if (r) {
		printf("initialize=%d\n", r);
		return 1;
	}
	printf("drm_version=%u.%u\n", major, minor);
	struct amdgpu_gpu_info gi;
	memset(&gi, 0, sizeof(gi));
	r = amdgpu_query_gpu_info(dev, &gi);
	printf("query_gpu_info=%d\n", r);
	printf("asic_id=0x%x\nchip_rev=%u\nchip_external_rev=0x%x\nfamily_id=%u\npci_rev_id=0x%x\n", gi.asic_id, gi.chip_rev,
	       gi.chip_external_rev, gi.family_id, gi.pci_rev_id);
	printf("num_shader_engines=%u\nnum_shader_arrays_per_engine=%u\ncu_active_number=%u\n", gi.num_shader_engines,
	       gi.num_shader_arrays_per_engine, gi.cu_active_number);
	printf("max_engine_clk=%llu\nmax_memory_clk=%llu\ngpu_counter_freq=%u\n", (unsigned long long)gi.max_engine_clk,
	       (unsigned long long)gi.max_memory_clk, gi.gpu_counter_freq);
	printf("gb_addr_cfg=0x%x\nvram_type=%u\nvram_bit_width=%u\n", gi.gb_addr_cfg, gi.vram_type, gi.vram_bit_width);
	printf("marketing_name=%s\n", amdgpu_get_marketing_name(dev));
	struct amdgpu_heap_info heap;
	r = amdgpu_query_heap_info(dev, AMDGPU_GEM_DOMAIN_VRAM, 0, &heap);
	printf("heap_vram=%d %llu %llu\n", r, (unsigned long long)heap.heap_size, (unsigned long long)heap.heap_usage);
	r = amdgpu_query_heap_info(dev, AMDGPU_GEM_DOMAIN_GTT, 0, &heap);
	printf("heap_gtt=%d %llu\n", r, (unsigned long long)heap.heap_size);
	uint32_t ver = 0, feat = 0;
	r = amdgpu_query_firmware_version(dev, AMDGPU_INFO_FW_GFX_MEC, 0, 0, &ver, &feat);
	printf("fw_mec=%d %u\n", r, ver);
	struct drm_amdgpu_info_hw_ip ip;
	r = amdgpu_query_hw_ip_info(dev, AMDGPU_HW_IP_COMPUTE, 0, &ip);
	printf("hw_ip_compute=%d %u.%u rings=0x%x\n", r, ip.hw_ip_version_major, ip.hw_ip_version_minor, ip.available_rings);
	amdgpu_device_deinitialize(dev);
	close(fd);
	return 0;
}
