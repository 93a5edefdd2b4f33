// A kernel with a dynamically indexed local array lives in the private segment (scratch): ROCr
// creates the queue without scratch and the first dispatch goes through the CP's insufficient-
// scratch protocol. Two different private sizes grow the queue's scratch once more.
#include "common.h"
#include <vector>

template <int N>
__global__ void local_array(const int* idx, int* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  volatile int a[N];
  for (int i = 0; i < N; i++) a[i] = t * 3 + i;
  int s = 0;
  for (int k = 0; k < 4; k++) s += a[(idx[t] + k * 7) % N];
  out[t] = s;
}

template <int N>
static void run(int blocks, int threads) {
  int n = blocks * threads;
  std::vector<int> idx(n), out(n);
  int *didx, *dout;
  CHECK(hipMalloc(&didx, n * 4));
  CHECK(hipMalloc(&dout, n * 4));
  for (int i = 0; i < n; i++) idx[i] = (i * 13) % N;
  CHECK(hipMemcpy(didx, idx.data(), n * 4, hipMemcpyHostToDevice));
  local_array<N><<<blocks, threads>>>(didx, dout);
  CHECK(hipGetLastError());
  CHECK(hipMemcpy(out.data(), dout, n * 4, hipMemcpyDeviceToHost));
  for (int t = 0; t < n; t++) {
    int s = 0;
    for (int k = 0; k < 4; k++) s += t * 3 + (idx[t] + k * 7) % N;
    EXPECT(out[t] == s, "N=%d out[%d] = %d, want %d", N, t, out[t], s);
  }
  CHECK(hipFree(didx)); CHECK(hipFree(dout));
}

int main() {
  run<64>(8, 256);
  run<1024>(4, 128);
  run<64>(2, 64);
  printf("scratch: ok\n");
  return 0;
}
