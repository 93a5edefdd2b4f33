/* dma-buf fds under kfdemu exec, through Debian's libdrm_amdgpu and libhsakmt 5.2.3: a GEM object
 * exported with amdgpu_bo_export (PRIME_HANDLE_TO_FD, answered by the daemon's seccomp supervisor),
 * its size through lseek, KFD's import of it in this process and in a forked child holding the
 * inherited fd, and an fd of another file passing through the filter untouched. Prints "ok" lines
 * and "done"; every failure prints the step and exits 1. Built by cmd/kfdemu's tests. */
#include <hsakmt.h>
#include <linux/kfd_ioctl.h>
#include <libdrm/amdgpu.h>
#include <libdrm/amdgpu_drm.h>
#include <xf86drm.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAIL(...) do { fprintf(stderr, "FAIL " __VA_ARGS__); fprintf(stderr, "\n"); exit(1); } while (0)

static HSAuint32 gpu_node(void)
{
	HsaSystemProperties sp;
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS || hsaKmtAcquireSystemProperties(&sp) != HSAKMT_STATUS_SUCCESS)
		FAIL("open KFD");
	for (HSAuint32 n = 0; n < sp.NumNodes; n++) {
		HsaNodeProperties np;
		if (hsaKmtGetNodeProperties(n, &np) == HSAKMT_STATUS_SUCCESS && np.NumFComputeCores)
			return n;
	}
	FAIL("no GPU node");
}

/* import registers fd with KFD on node and checks the size; returns the GPU address. */
static void *import(int fd, HSAuint32 node, const char *who)
{
	HsaGraphicsResourceInfo info;
	HSAKMT_STATUS st = hsaKmtRegisterGraphicsHandleToNodes(fd, &info, 1, &node);
	if (st != HSAKMT_STATUS_SUCCESS)
		FAIL("%s: hsaKmtRegisterGraphicsHandleToNodes: %d", who, st);
	if (info.SizeInBytes != 4096 || info.MetadataSizeInBytes != 6 || strcmp(info.Metadata, "kfdem"))
		FAIL("%s: size %llu, metadata %u bytes", who, (unsigned long long)info.SizeInBytes, info.MetadataSizeInBytes);
	if (hsaKmtMapMemoryToGPU(info.MemoryAddress, info.SizeInBytes, NULL) != HSAKMT_STATUS_SUCCESS)
		FAIL("%s: map", who);
	return info.MemoryAddress;
}

int main(int argc, char **argv)
{
	int hold = argc > 1 && !strcmp(argv[1], "hold");
	HSAuint32 node = gpu_node();
	HsaNodeProperties np;
	hsaKmtGetNodeProperties(node, &np);
	char path[64];
	snprintf(path, sizeof(path), "/dev/dri/renderD%u", np.DrmRenderMinor);
	int rfd = open(path, O_RDWR | O_CLOEXEC);
	amdgpu_device_handle dev;
	uint32_t major, minor;
	if (rfd < 0 || amdgpu_device_initialize(rfd, &major, &minor, &dev))
		FAIL("amdgpu_device_initialize %s", path);
	struct amdgpu_bo_alloc_request req = {.alloc_size = 4096, .phys_alignment = 4096,
		.preferred_heap = AMDGPU_GEM_DOMAIN_VRAM, .flags = AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED};
	amdgpu_bo_handle bo;
	if (amdgpu_bo_alloc(dev, &req, &bo))
		FAIL("amdgpu_bo_alloc");
	struct amdgpu_bo_metadata meta = {.size_metadata = 6};
	memcpy(meta.umd_metadata, "kfdem", 6);
	if (amdgpu_bo_set_metadata(bo, &meta))
		FAIL("amdgpu_bo_set_metadata");
	uint32_t shared;
	if (amdgpu_bo_export(bo, amdgpu_bo_handle_type_dma_buf_fd, &shared))
		FAIL("amdgpu_bo_export: %s", strerror(errno));
	int fd = (int)shared;
	if (lseek(fd, 0, SEEK_END) != 4096)
		FAIL("lseek of the dma-buf: %ld", (long)lseek(fd, 0, SEEK_END));
	if (!(fcntl(fd, F_GETFD) & FD_CLOEXEC))
		FAIL("libdrm exports with DRM_CLOEXEC: the fd has no FD_CLOEXEC");
	printf("export ok\n");
	if (hold) {
		/* Hold a dma-buf fd and an SMI fd until killed (the test checks that nothing is left). */
		char gp[96];
		unsigned gpu_id = 0;
		snprintf(gp, sizeof(gp), "/sys/class/kfd/kfd/topology/nodes/%u/gpu_id", node);
		FILE *g = fopen(gp, "r");
		if (!g || fscanf(g, "%u", &gpu_id) != 1)
			FAIL("%s", gp);
		fclose(g);
		int kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
		struct kfd_ioctl_smi_events_args sa = {.gpuid = gpu_id};
		if (kfd < 0 || ioctl(kfd, AMDKFD_IOC_SMI_EVENTS, &sa))
			FAIL("SMI_EVENTS: %s", strerror(errno));
		uint64_t mask = ~0ull;
		if (write((int)sa.anon_fd, &mask, sizeof(mask)) != sizeof(mask))
			FAIL("SMI mask: %s", strerror(errno));
		printf("holding\n");
		fflush(stdout);
		pause();
	}

	/* The filter stops this command on any fd; the daemon lets the kernel run it on a file that
	 * is not the mount's: /dev/null answers ENOTTY. */
	int null = open("/dev/null", O_RDWR);
	struct drm_prime_handle ph = {.handle = 1, .flags = DRM_CLOEXEC};
	if (ioctl(null, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph) != -1 || errno != ENOTTY)
		FAIL("PRIME_HANDLE_TO_FD on /dev/null: errno %d", errno);
	close(null);
	printf("other files ok\n");

	import(fd, node, "parent");
	printf("import ok\n");

	int keep = fcntl(fd, F_DUPFD, 100); /* a plain dup: not close-on-exec, as a handed-on fd would be */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		/* libhsakmt reopens KFD in a forked child. */
		HSAuint32 n = gpu_node();
		import(keep, n, "child");
		printf("child import ok\n");
		fflush(stdout);
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("child status %#x", st);
	close(keep);
	close(fd);
	amdgpu_bo_free(bo);
	amdgpu_device_deinitialize(dev);
	hsaKmtReleaseSystemProperties();
	hsaKmtCloseKFD();
	printf("done\n");
	return 0;
}
