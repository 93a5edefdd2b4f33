/* Drives Debian's libhsakmt 5.2.3 against whatever /dev/kfd the namespace shows (kfdemu exec).
 * Prints "key value" lines the Go test compares with the profile; every failing call prints the
 * call and its status and exits 1. Built by cmd/kfdemu's tests with gcc -lhsakmt. */
#include <hsakmt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(call)                                                                   \
	do {                                                                          \
		HSAKMT_STATUS s_ = (call);                                            \
		if (s_ != HSAKMT_STATUS_SUCCESS) {                                    \
			fprintf(stderr, "FAIL %s: status %d (line %d)\n", #call, s_, __LINE__); \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

static void *alloc(HSAuint32 node, HSAuint64 size, int vram)
{
	HsaMemFlags f = {0};
	void *p = NULL;
	f.ui32.PageSize = HSA_PAGE_SIZE_4KB;
	f.ui32.HostAccess = 1;
	if (vram) {
		f.ui32.NonPaged = 1;
		f.ui32.CoarseGrain = 1;
	} else {
		f.ui32.CachePolicy = HSA_CACHING_CACHED;
		f.ui32.ExecuteAccess = 1;
	}
	CHECK(hsaKmtAllocMemory(node, size, f, &p));
	CHECK(hsaKmtMapMemoryToGPU(p, size, NULL));
	return p;
}

static sigjmp_buf bus_jmp;
static void on_bus(int sig) { siglongjmp(bus_jmp, sig); }

/* "ipc": a VRAM buffer of the first GPU shared with a forked child (as KFDIPCTest.BasicTest
 * does), which registers it: the import succeeds on the GPU's node, and the child's CPU access to
 * it raises SIGBUS (the emulator cannot map another process's pages: README, deviations), never
 * reading other bytes. */
static int ipc(void)
{
	HsaSystemProperties sp;
	HSAuint32 gpu = 0;
	CHECK(hsaKmtOpenKFD());
	CHECK(hsaKmtAcquireSystemProperties(&sp));
	for (HSAuint32 n = 0; n < sp.NumNodes && !gpu; n++) {
		HsaNodeProperties np;
		CHECK(hsaKmtGetNodeProperties(n, &np));
		if (np.NumFComputeCores)
			gpu = n;
	}
	uint32_t *vram = alloc(gpu, 1 << 16, 1);
	vram[0] = 0x5eed;
	HsaSharedMemoryHandle sh;
	CHECK(hsaKmtShareMemory(vram, 1 << 16, &sh));
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		CHECK(hsaKmtOpenKFD()); /* the child's own KFD process (libhsakmt sees the fork) */
		void *imp = NULL;
		HSAuint64 isz = 0;
		CHECK(hsaKmtRegisterSharedHandle(&sh, &imp, &isz));
		CHECK(hsaKmtMapMemoryToGPU(imp, isz, NULL));
		HsaPointerInfo pi = {0};
		CHECK(hsaKmtQueryPointerInfo(imp, &pi));
		printf("child import size %llu type %d node %u\n", (unsigned long long)isz, pi.Type, pi.Node);
		signal(SIGBUS, on_bus);
		int sig = sigsetjmp(bus_jmp, 1);
		if (sig == 0) {
			uint32_t v = *(volatile uint32_t *)imp;
			printf("child read %#x without a fault\n", v);
		} else {
			printf("child cpu access signal %d\n", sig);
		}
		fflush(stdout);
		_exit(0);
	}
	int st = 0;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "FAIL child status %#x\n", st);
		return 1;
	}
	printf("gpu %u\ndone\n", gpu);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "ipc") == 0)
		return ipc();
	int queues = argc > 1 && strcmp(argv[1], "queues") == 0;
	HsaVersionInfo v;
	HsaSystemProperties sp;

	CHECK(hsaKmtOpenKFD());
	CHECK(hsaKmtGetVersion(&v));
	printf("version %u.%u\n", v.KernelInterfaceMajorVersion, v.KernelInterfaceMinorVersion);
	CHECK(hsaKmtAcquireSystemProperties(&sp));
	printf("nodes %u\n", sp.NumNodes);
	for (HSAuint32 n = 0; n < sp.NumNodes; n++) {
		HsaNodeProperties np;
		CHECK(hsaKmtGetNodeProperties(n, &np));
		printf("node %u cpu_cores %u simds %u banks %u caches %u iolinks %u gfx %u.%u.%u "
		       "wave %u lds_kb %u minor %u device %#x sdma %u xgmi_sdma %u\n",
		       n, np.NumCPUCores, np.NumFComputeCores, np.NumMemoryBanks, np.NumCaches,
		       np.NumIOLinks, np.EngineId.ui32.Major, np.EngineId.ui32.Minor,
		       np.EngineId.ui32.Stepping, np.WaveFrontSize, np.LDSSizeInKB,
		       np.DrmRenderMinor, np.DeviceId, np.NumSdmaEngines, np.NumSdmaXgmiEngines);
		if (np.NumMemoryBanks) {
			HsaMemoryProperties *mp = calloc(np.NumMemoryBanks, sizeof(*mp));
			CHECK(hsaKmtGetNodeMemoryProperties(n, np.NumMemoryBanks, mp));
			for (HSAuint32 i = 0; i < np.NumMemoryBanks; i++)
				printf("mem %u %u heap %u size %llu\n", n, i, mp[i].HeapType,
				       (unsigned long long)mp[i].SizeInBytes);
			free(mp);
		}
		if (np.NumCaches) {
			HsaCacheProperties *cp = calloc(np.NumCaches, sizeof(*cp));
			HSAuint32 proc = np.NumCPUCores ? np.CComputeIdLo : np.FComputeIdLo;
			CHECK(hsaKmtGetNodeCacheProperties(n, proc, np.NumCaches, cp));
			for (HSAuint32 i = 0; i < np.NumCaches; i++)
				printf("cache %u %u level %u size %u\n", n, i, cp[i].CacheLevel, cp[i].CacheSize);
			free(cp);
		}
		if (np.NumIOLinks) {
			HsaIoLinkProperties *lp = calloc(np.NumIOLinks, sizeof(*lp));
			CHECK(hsaKmtGetNodeIoLinkProperties(n, np.NumIOLinks, lp));
			for (HSAuint32 i = 0; i < np.NumIOLinks; i++)
				printf("link %u %u type %u to %u weight %u\n", n, i, lp[i].IoLinkType,
				       lp[i].NodeTo, lp[i].Weight);
			free(lp);
		}
		if (queues && np.NumFComputeCores) {
			/* Memory the CPU writes and reads back through its mapping. */
			uint32_t *vram = alloc(n, 1 << 20, 1), *sys = alloc(0, 1 << 20, 0);
			for (int i = 0; i < 1024; i++)
				vram[i] = sys[i] = 0xc0de0000u + i;
			for (int i = 0; i < 1024; i++)
				if (vram[i] != 0xc0de0000u + i || sys[i] != 0xc0de0000u + i) {
					fprintf(stderr, "FAIL readback at %d\n", i);
					return 1;
				}
			/* Queues. */
			HsaQueueResource qr;
			void *ring = alloc(0, 64 * 1024, 0);
			uint64_t *ptrs = alloc(0, 4096, 0); /* AQL read/write indices, as amd_queue_t holds them */
			memset(&qr, 0, sizeof(qr));
			qr.Queue_read_ptr_aql = &ptrs[0];
			qr.Queue_write_ptr_aql = &ptrs[1];
			CHECK(hsaKmtCreateQueue(n, HSA_QUEUE_COMPUTE_AQL, 100, HSA_QUEUE_PRIORITY_NORMAL, ring,
						64 * 1024, NULL, &qr));
			printf("queue %u aql id %llu\n", n, (unsigned long long)qr.QueueId);
			CHECK(hsaKmtDestroyQueue(qr.QueueId));
			/* An SDMA queue copies what the CPU wrote in system memory into VRAM, then fences:
			 * the GPU side sees the CPU's bytes and the CPU sees the GPU's. SDMA v4 packets
			 * (vega10_sdma_pkt_open.h): COPY_LINEAR and FENCE; pointers are byte indices. */
			uint32_t *sring = alloc(0, 4096, 0);
			memset(&qr, 0, sizeof(qr));
			/* libhsakmt keeps the read and write pointers of SDMA queues itself and returns
			 * them in the resource. */
			CHECK(hsaKmtCreateQueue(n, HSA_QUEUE_SDMA, 100, HSA_QUEUE_PRIORITY_NORMAL, sring, 4096, NULL, &qr));
			uint64_t *srptr = (uint64_t *)qr.Queue_read_ptr, *swptr = (uint64_t *)qr.Queue_write_ptr;
			uint64_t src = (uintptr_t)sys, dst = (uintptr_t)(vram + 1024), fence = (uintptr_t)(sys + 2048);
			uint32_t pk[] = {1, 4096 - 1, 0, (uint32_t)src, (uint32_t)(src >> 32), (uint32_t)dst, (uint32_t)(dst >> 32),
					 5, (uint32_t)fence, (uint32_t)(fence >> 32), 0x5d3a};
			memcpy(sring, pk, sizeof(pk));
			__atomic_store_n(swptr, sizeof(pk), __ATOMIC_RELEASE);
			__atomic_store_n((uint64_t *)qr.Queue_DoorBell, sizeof(pk), __ATOMIC_RELEASE);
			/* The engine writes its read pointer back after the packets it has run, so the
			 * fence can be seen before the pointer moves past it: wait for both. */
			for (int i = 0; __atomic_load_n(&sys[2048], __ATOMIC_ACQUIRE) != 0x5d3a ||
					__atomic_load_n(srptr, __ATOMIC_ACQUIRE) != sizeof(pk); i++) {
				if (i > 5000) {
					fprintf(stderr, "FAIL SDMA fence %#x, read pointer %llu\n", sys[2048],
						(unsigned long long)*srptr);
					return 1;
				}
				struct timespec ts = {0, 1000000};
				nanosleep(&ts, NULL);
			}
			if (memcmp(vram + 1024, sys, 4096) || *srptr != sizeof(pk)) {
				fprintf(stderr, "FAIL SDMA copy differs or read pointer %llu\n", (unsigned long long)*srptr);
				return 1;
			}
			printf("queue %u sdma copy ok\n", n);
			/* IPC (AMD's out-of-tree IPC ioctls): the VRAM buffer shared and registered again
			 * in this process, a second VA whose CPU mapping shows the same pages; left
			 * registered, so the daemon releases it (and the key) when the process exits. */
			HsaSharedMemoryHandle sh;
			void *imp = NULL;
			HSAuint64 isz = 0;
			CHECK(hsaKmtShareMemory(vram, 1 << 20, &sh));
			CHECK(hsaKmtRegisterSharedHandle(&sh, &imp, &isz));
			CHECK(hsaKmtMapMemoryToGPU(imp, isz, NULL));
			HsaPointerInfo pi = {0};
			CHECK(hsaKmtQueryPointerInfo(imp, &pi));
			__atomic_store_n((uint32_t *)imp + 7, 0xabcd1234u, __ATOMIC_RELEASE);
			if (isz != 1 << 20 || imp == (void *)vram || pi.Type != HSA_POINTER_REGISTERED_SHARED ||
			    pi.Node != n || __atomic_load_n(vram + 7, __ATOMIC_ACQUIRE) != 0xabcd1234u ||
			    memcmp((char *)imp + 4096, sys, 4096)) {
				fprintf(stderr, "FAIL IPC self import: size %llu, type %d node %u, word %#x\n",
					(unsigned long long)isz, pi.Type, pi.Node, vram[7]);
				return 1;
			}
			printf("ipc %u self import ok\n", n);
			CHECK(hsaKmtDestroyQueue(qr.QueueId));
			CHECK(hsaKmtUnmapMemoryToGPU(sring));
			CHECK(hsaKmtFreeMemory(sring, 4096));

			/* Events. */
			HsaEventDescriptor ed = {.EventType = HSA_EVENTTYPE_SIGNAL, .NodeId = n};
			HsaEvent *ev;
			CHECK(hsaKmtCreateEvent(&ed, false, false, &ev));
			CHECK(hsaKmtSetEvent(ev));
			CHECK(hsaKmtWaitOnEvent(ev, 1000));
			if (hsaKmtWaitOnEvent(ev, 10) != HSAKMT_STATUS_WAIT_TIMEOUT) {
				fprintf(stderr, "FAIL auto-reset event still signalled\n");
				return 1;
			}
			printf("event %u id %u ok\n", n, ev->EventId);
			CHECK(hsaKmtDestroyEvent(ev));
			CHECK(hsaKmtUnmapMemoryToGPU(vram));
			CHECK(hsaKmtFreeMemory(vram, 1 << 20));
			CHECK(hsaKmtUnmapMemoryToGPU(sys));
			CHECK(hsaKmtFreeMemory(sys, 1 << 20));
			CHECK(hsaKmtUnmapMemoryToGPU(ptrs));
			CHECK(hsaKmtFreeMemory(ptrs, 4096));
			CHECK(hsaKmtUnmapMemoryToGPU(ring));
			CHECK(hsaKmtFreeMemory(ring, 64 * 1024));
		}
	}
	CHECK(hsaKmtReleaseSystemProperties());
	CHECK(hsaKmtCloseKFD());
	printf("done\n");
	return 0;
}
