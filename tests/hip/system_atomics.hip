// hip-env: HSA_USERPTR_FOR_PAGED_MEM=0
// System-scope atomics against a CPU thread: a kernel and a host thread add to one counter in
// hipHostMalloc memory at the same time (atomicAdd_system / __atomic_fetch_add); the total is
// exact. Then a flag handshake: the kernel waits for a value the CPU stores while it runs, and
// the CPU waits for the kernel's reply (__threadfence_system + system-scope store). It needs
// HSA_USERPTR_FOR_PAGED_MEM=0 (the hip-env line): hipHostMalloc memory is then a GTT BO the daemon
// shares; as userptr memory (libhsakmt's default) the daemon can only copy it and the CPU's
// increments are lost (README, deviations).
#include "common.h"
#include <atomic>
#include <thread>

__global__ void add(unsigned long long* c, int per) {
  for (int i = 0; i < per; i++) atomicAdd_system(c, 1ull);
}

__global__ void pingpong(int* flag, int* data, int rounds) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  for (int r = 0; r < rounds; r++) {
    // wait for the CPU's odd value, answer with the next even one
    while (__hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM) != 2 * r + 1) {
    }
    data[r] = r * 7;
    __threadfence_system();
    __hip_atomic_store(flag, 2 * r + 2, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
  }
}

int main() {
  const int blocks = 16, threads = 64, per = 64, cpuAdds = 200000;
  unsigned long long* c;
  CHECK(hipHostMalloc(&c, 8, hipHostMallocCoherent));
  *c = 0;
  std::atomic<bool> go{false};
  std::thread cpu([&] {
    while (!go.load()) {
    }
    for (int i = 0; i < cpuAdds; i++) __atomic_fetch_add(c, 1ull, __ATOMIC_SEQ_CST);
  });
  add<<<blocks, threads>>>(c, per);
  CHECK(hipGetLastError());
  go.store(true);
  cpu.join();
  CHECK(hipDeviceSynchronize());
  unsigned long long want = (unsigned long long)blocks * threads * per + cpuAdds;
  EXPECT(*c == want, "counter %llu, want %llu (GPU %d + CPU %d)", *c, want, blocks * threads * per, cpuAdds);

  const int rounds = 50;
  int *flag, *data;
  CHECK(hipHostMalloc(&flag, 4, hipHostMallocCoherent));
  CHECK(hipHostMalloc(&data, rounds * 4, hipHostMallocCoherent));
  *flag = 0;
  for (int r = 0; r < rounds; r++) data[r] = -1;
  pingpong<<<1, 64>>>(flag, data, rounds);
  CHECK(hipGetLastError());
  for (int r = 0; r < rounds; r++) {
    __atomic_store_n(flag, 2 * r + 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != 2 * r + 2) {
    }
    EXPECT(data[r] == r * 7, "round %d: data %d, want %d", r, data[r], r * 7);
  }
  CHECK(hipDeviceSynchronize());
  printf("system atomics: counter %llu exact, %d handshakes\n", want, rounds);
  CHECK(hipHostFree(c));
  CHECK(hipHostFree(flag));
  CHECK(hipHostFree(data));
  return 0;
}
