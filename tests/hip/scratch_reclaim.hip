// Single-use scratch: with HSA_SCRATCH_SINGLE_LIMIT below every request (set before the runtime
// starts), ROCr marks each scratch allocation large (AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE); the CP
// returns it after the dispatch (queue-inactive code 512) and the next dispatch asks again. Ten
// alternating dispatches of two private sizes must all compute right.
#include "common.h"
#include <cstdlib>
#include <vector>

template <int N>
__global__ void local_array(int* out, int salt) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  volatile int a[N];
  for (int i = 0; i < N; i++) a[i] = t + i * salt;
  out[t] = a[(t * 7) % N] + a[(t * 3 + 1) % N];
}

int main() {
  setenv("HSA_SCRATCH_SINGLE_LIMIT", "1", 1);
  const int n = 512;
  int* d;
  CHECK(hipMalloc(&d, n * 4));
  std::vector<int> h(n);
  for (int round = 0; round < 10; round++) {
    int salt = round + 1;
    if (round % 2) local_array<300><<<n / 128, 128>>>(d, salt);
    else local_array<40><<<n / 128, 128>>>(d, salt);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(h.data(), d, n * 4, hipMemcpyDeviceToHost));
    int N = round % 2 ? 300 : 40;
    for (int t = 0; t < n; t++) {
      int want = t + (t * 7) % N * salt + t + (t * 3 + 1) % N * salt;
      EXPECT(h[t] == want, "round %d out[%d] = %d, want %d", round, t, h[t], want);
    }
  }
  printf("scratch_reclaim: ok\n");
  return 0;
}
