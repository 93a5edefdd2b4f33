// Work-groups that talk through global memory, as CUDA's threadFenceReduction sample does: every
// block stores its partial sum, __threadfence(), then takes a ticket with atomicInc; the block that
// draws the last ticket reads every partial (they must all be visible) and stores the total. Then a
// chain: block b waits (spinning on an atomic load) for block b-1's flag before it adds its value
// and raises its own, so the blocks run to completion in reverse of any order the dispatcher might
// prefer only if they are resident together (64 blocks of 64: the whole grid fits the GPU).
#include "common.h"
#include <vector>

__device__ unsigned ticket;

__global__ void reduce(const int* in, int* partial, int* total, int n) {
  __shared__ int s[256];
  __shared__ bool last;
  int t = threadIdx.x, i = blockIdx.x * 256 + t;
  s[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int k = 128; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) {
    partial[blockIdx.x] = s[0];
    __threadfence();
    unsigned v = atomicInc(&ticket, gridDim.x - 1);  // the last block's ticket wraps it to 0
    last = v == gridDim.x - 1;
  }
  __syncthreads();
  if (last) {
    int sum = 0;
    for (int b = t; b < gridDim.x; b += 256) sum += ((volatile int*)partial)[b];
    s[t] = sum;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
      if (t < k) s[t] += s[t + k];
      __syncthreads();
    }
    if (t == 0) *total = s[0];
  }
}

// Block b (in reverse: the last block starts the chain) waits for flag[b+1], adds, raises flag[b].
__global__ void chain(int* flag, long long* acc) {
  int b = blockIdx.x, nb = gridDim.x;
  if (threadIdx.x == 0) {
    if (b != nb - 1)
      while (__atomic_load_n(&flag[b + 1], __ATOMIC_ACQUIRE) == 0) __builtin_amdgcn_s_sleep(1);
    long long v = *(volatile long long*)acc;
    *(volatile long long*)acc = v * 3 + b;  // order-dependent: only the chain's order gives the total
    __atomic_store_n(&flag[b], 1, __ATOMIC_RELEASE);
  }
}

int main() {
  const int n = 1 << 20, blocks = n / 256;
  std::vector<int> h(n);
  long long want = 0;
  for (int i = 0; i < n; i++) h[i] = (i * 7919) % 1000 - 500, want += h[i];
  int *in, *partial, *total;
  CHECK(hipMalloc(&in, n * 4));
  CHECK(hipMalloc(&partial, blocks * 4));
  CHECK(hipMalloc(&total, 4));
  CHECK(hipMemcpy(in, h.data(), n * 4, hipMemcpyHostToDevice));
  for (int round = 0; round < 3; round++) {
    CHECK(hipMemset(total, 0x7f, 4));
    reduce<<<blocks, 256>>>(in, partial, total, n);
    CHECK(hipGetLastError());
    int got = 0;
    CHECK(hipMemcpy(&got, total, 4, hipMemcpyDeviceToHost));
    EXPECT(got == want, "round %d: total %d, want %lld", round, got, want);
  }
  printf("last-block reduction over %d blocks, 3 rounds: ok\n", blocks);

  const int nb = 64;
  int* flag;
  long long* acc;
  CHECK(hipMalloc(&flag, nb * 4));
  CHECK(hipMalloc(&acc, 8));
  CHECK(hipMemset(flag, 0, nb * 4));
  CHECK(hipMemset(acc, 0, 8));
  chain<<<nb, 64>>>(flag, acc);
  CHECK(hipGetLastError());
  long long got = 0, w = 0;
  CHECK(hipMemcpy(&got, acc, 8, hipMemcpyDeviceToHost));
  for (int b = nb - 1; b >= 0; b--) w = w * 3 + b;
  EXPECT(got == w, "chain of %d blocks: %lld, want %lld", nb, got, w);
  printf("a chain of %d blocks in reverse order through acquire/release flags: ok\n", nb);
  CHECK(hipFree(in));
  CHECK(hipFree(partial));
  CHECK(hipFree(total));
  CHECK(hipFree(flag));
  CHECK(hipFree(acc));
  printf("fence_reduce: ok\n");
  return 0;
}
