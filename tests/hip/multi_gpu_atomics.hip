// kfdemu-profile: mi210x8
// hip-env: HSA_USERPTR_FOR_PAGED_MEM=0
// Atomics from several GPUs and the CPU on one location at the same time: kernels on four GPUs
// of the hive and a host thread add to one counter in pinned host memory (atomicAdd_system against
// __atomic_fetch_add), and the four kernels add to a counter in GPU 0's fine-grained memory
// (hipExtMallocWithFlags(hipDeviceMallocFinegrained)) through peer access; each kernel also
// keeps a per-GPU maximum with atomicMax on GPU 0's memory. Totals exact. As system_atomics, it
// runs with HSA_USERPTR_FOR_PAGED_MEM=0: libhsakmt then backs hipHostMalloc with a GTT BO whose
// pages the daemon shares, where by default they are the client's own (userptr) pages, which the
// daemon reaches only by copying, so a GPU atomic there is not atomic against the CPU's (README,
// deviations; without the setting this program loses about 2 % of the CPU's additions).
#include "common.h"
#include <thread>
#include <vector>

__global__ void add(unsigned long long* host, unsigned long long* peer, unsigned* maxes, int gpu, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = 0; r < rounds; r++) {
    atomicAdd_system(host, 1ull);
    atomicAdd(peer, (unsigned long long)(gpu + 1));
  }
  atomicMax(&maxes[gpu], (unsigned)i);
}

int main() {
  const int gpus = 4, blocks = 8, threads = 64, rounds = 20;
  int n = 0;
  CHECK(hipGetDeviceCount(&n));
  EXPECT(n >= gpus, "%d devices, want %d", n, gpus);
  unsigned long long* host;
  CHECK(hipHostMalloc(&host, 8, hipHostMallocCoherent));
  *host = 0;
  CHECK(hipSetDevice(0));
  unsigned long long* peer;
  unsigned* maxes;
  CHECK(hipExtMallocWithFlags((void**)&peer, 8, hipDeviceMallocFinegrained));
  CHECK(hipExtMallocWithFlags((void**)&maxes, gpus * 4, hipDeviceMallocFinegrained));
  CHECK(hipMemset(peer, 0, 8));
  CHECK(hipMemset(maxes, 0, gpus * 4));
  CHECK(hipDeviceSynchronize());
  for (int g = 1; g < gpus; g++) {
    CHECK(hipSetDevice(g));
    hipError_t e = hipDeviceEnablePeerAccess(0, 0);
    EXPECT(e == hipSuccess || e == hipErrorPeerAccessAlreadyEnabled, "GPU %d: peer access to 0: %s", g, hipGetErrorName(e));
  }
  // The host thread adds from before the launches until the kernels have ended (and counts).
  long hostAdds = 0;
  bool stop = false;
  std::thread cpu([&] {
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE) || hostAdds < 1000) {
      __atomic_fetch_add(host, 1ull, __ATOMIC_RELAXED);
      hostAdds++;
    }
  });
  for (int g = 0; g < gpus; g++) {
    CHECK(hipSetDevice(g));
    add<<<blocks, threads>>>(host, peer, maxes, g, rounds);
    CHECK(hipGetLastError());
  }
  for (int g = 0; g < gpus; g++) {
    CHECK(hipSetDevice(g));
    CHECK(hipDeviceSynchronize());
  }
  __atomic_store_n(&stop, true, __ATOMIC_RELEASE);
  cpu.join();
  CHECK(hipSetDevice(0));
  unsigned long long p = 0;
  unsigned mx[gpus];
  CHECK(hipMemcpy(&p, peer, 8, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(mx, maxes, sizeof(mx), hipMemcpyDeviceToHost));
  const unsigned long long items = (unsigned long long)blocks * threads * rounds;
  EXPECT(*host == items * gpus + hostAdds, "host counter %llu, want %llu (%ld from the CPU)", *host,
         items * gpus + hostAdds, hostAdds);
  EXPECT(p == items * (1 + 2 + 3 + 4), "GPU 0 counter %llu, want %llu", p, items * 10);
  for (int g = 0; g < gpus; g++) EXPECT(mx[g] == blocks * threads - 1, "GPU %d max %u", g, mx[g]);
  CHECK(hipHostFree(host));
  CHECK(hipFree(peer));
  CHECK(hipFree(maxes));
  printf("multi_gpu_atomics: %d GPUs and a CPU thread (%ld adds) on one counter: ok\n", gpus, hostAdds);
  return 0;
}
