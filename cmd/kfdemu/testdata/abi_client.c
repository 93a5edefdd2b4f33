/* A client built against the real <linux/kfd_ioctl.h> that drives the ABI of a kfdemu mount directly
 * (no libhsakmt): argv[1] is the mount. Every step checks the result or the errno amdkfd returns. */
#include <errno.h>
#include <fcntl.h>
#include <linux/kfd_ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

static int failures;
#define EXPECT(cond, ...)                                                          \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "FAIL line %d: ", __LINE__);               \
			fprintf(stderr, __VA_ARGS__);                              \
			fprintf(stderr, "\n");                                     \
			failures++;                                                \
		}                                                                  \
	} while (0)
#define IOCTL_OK(fd, cmd, arg) EXPECT(ioctl(fd, cmd, arg) == 0, #cmd ": %s", strerror(errno))
#define IOCTL_ERR(fd, cmd, arg, e)                                                          \
	EXPECT(ioctl(fd, cmd, arg) == -1 && errno == (e), #cmd ": want %s, got %s", strerror(e), \
	       strerror(errno))

int main(int argc, char **argv)
{
	char path[4096];
	if (argc < 2)
		return 2;
	snprintf(path, sizeof(path), "%s/dev/kfd", argv[1]);
	int kfd = open(path, O_RDWR | O_CLOEXEC);
	EXPECT(kfd >= 0, "open %s: %s", path, strerror(errno));
	if (kfd < 0)
		return 1;

	struct kfd_ioctl_get_version_args ver = {0};
	IOCTL_OK(kfd, AMDKFD_IOC_GET_VERSION, &ver);
	/* argv[2]: the minor the daemon reports (9 with munmap notices, else 2; kfd/handlers.go) */
	unsigned want_minor = argc > 2 ? (unsigned)atoi(argv[2]) : 2;
	EXPECT(ver.major_version == 1 && ver.minor_version == want_minor, "version %u.%u, want 1.%u",
	       ver.major_version, ver.minor_version, want_minor);

	struct kfd_ioctl_get_process_apertures_new_args ap = {0};
	IOCTL_OK(kfd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &ap);
	EXPECT(ap.num_of_nodes >= 1, "apertures count %u", ap.num_of_nodes);
	struct kfd_process_device_apertures apv[8];
	ap.kfd_process_device_apertures_ptr = (uintptr_t)apv;
	ap.num_of_nodes = 1;
	IOCTL_OK(kfd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &ap);
	uint32_t gpu = apv[0].gpu_id;
	EXPECT(gpu != 0 && apv[0].gpuvm_base == 0x1000000 && apv[0].lds_base == 1ULL << 48, "aperture gpu %u base %#llx",
	       gpu, (unsigned long long)apv[0].gpuvm_base);
	ap.kfd_process_device_apertures_ptr = 16;
	IOCTL_ERR(kfd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &ap, EFAULT);

	struct kfd_ioctl_alloc_memory_of_gpu_args al = {.va_addr = 0x100000000ULL, .size = 65536, .gpu_id = gpu,
							 .flags = KFD_IOC_ALLOC_MEM_FLAGS_GTT};
	IOCTL_ERR(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &al, ENODEV); /* before ACQUIRE_VM */

	snprintf(path, sizeof(path), "%s/dev/dri/renderD128", argv[1]);
	int drm = open(path, O_RDWR | O_CLOEXEC);
	EXPECT(drm >= 0, "open %s: %s", path, strerror(errno));
	struct kfd_ioctl_acquire_vm_args acq = {.drm_fd = (uint32_t)-1, .gpu_id = gpu};
	IOCTL_ERR(kfd, AMDKFD_IOC_ACQUIRE_VM, &acq, EINVAL);
	acq.drm_fd = kfd; /* not a render node */
	IOCTL_ERR(kfd, AMDKFD_IOC_ACQUIRE_VM, &acq, EINVAL);
	acq.drm_fd = drm;
	IOCTL_OK(kfd, AMDKFD_IOC_ACQUIRE_VM, &acq);
	IOCTL_OK(kfd, AMDKFD_IOC_ACQUIRE_VM, &acq); /* same file again: no-op */

	IOCTL_OK(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &al);
	EXPECT((al.handle >> 32) == gpu, "handle %#llx", (unsigned long long)al.handle);
	uint32_t *cpu = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, drm, al.mmap_offset);
	EXPECT(cpu != MAP_FAILED, "mmap BO: %s", strerror(errno));
	if (cpu != MAP_FAILED) {
		for (int i = 0; i < 16384; i++)
			cpu[i] = 0xabc00000u + i;
		EXPECT(cpu[16383] == 0xabc00000u + 16383, "BO readback");
	}
	struct kfd_ioctl_alloc_memory_of_gpu_args bad = al;
	bad.flags = 0;
	IOCTL_ERR(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &bad, EINVAL);
	bad = al; /* overlapping VA */
	IOCTL_ERR(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &bad, EINVAL);

	uint32_t ids[1] = {gpu};
	struct kfd_ioctl_map_memory_to_gpu_args map = {.handle = al.handle, .device_ids_array_ptr = (uintptr_t)ids,
						       .n_devices = 1};
	IOCTL_OK(kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &map);
	EXPECT(map.n_success == 1, "n_success %u", map.n_success);
	struct kfd_ioctl_map_memory_to_gpu_args badmap = {.handle = al.handle, .device_ids_array_ptr = 8, .n_devices = 1};
	IOCTL_ERR(kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &badmap, EFAULT);

	struct kfd_ioctl_get_available_memory_args avail = {.gpu_id = gpu};
	IOCTL_OK(kfd, AMDKFD_IOC_AVAILABLE_MEMORY, &avail);
	EXPECT(avail.available > 0, "available %llu", (unsigned long long)avail.available);
	struct kfd_ioctl_get_clock_counters_args clk = {.gpu_id = gpu};
	IOCTL_OK(kfd, AMDKFD_IOC_GET_CLOCK_COUNTERS, &clk);
	EXPECT(clk.system_clock_freq == 1000000000ULL, "clock freq %llu", (unsigned long long)clk.system_clock_freq);
	struct kfd_ioctl_dbg_register_args dbg = {.gpu_id = gpu};
	IOCTL_ERR(kfd, AMDKFD_IOC_DBG_REGISTER_DEPRECATED, &dbg, EPERM);
	struct kfd_ioctl_get_version_args junk;
	IOCTL_ERR(kfd, _IOR('K', 0x30, struct kfd_ioctl_get_version_args), &junk, ENOTTY);

	struct kfd_ioctl_unmap_memory_from_gpu_args um = {.handle = al.handle, .device_ids_array_ptr = (uintptr_t)ids,
							  .n_devices = 1};
	IOCTL_OK(kfd, AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &um);
	if (cpu != MAP_FAILED)
		munmap(cpu, 65536);
	struct kfd_ioctl_free_memory_of_gpu_args fr = {.handle = al.handle};
	IOCTL_OK(kfd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &fr);
	IOCTL_ERR(kfd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &fr, EINVAL);
	close(drm);
	close(kfd);
	if (failures)
		return 1;
	printf("done\n");
	return 0;
}
