// A multi-block reduction with __shfl_down (wave partial sums, then LDS, then one atomic per block
// and a second pass over the block sums) and an exclusive prefix scan on unsigned (mod 2^32) (per-block scan with
// __shfl_up, a scan of the block totals, then a uniform add) over 1 Mi integers; exact results.
#include "common.h"
#include <vector>

constexpr int kBlock = 256;
constexpr int kWaves = kBlock / 64;

__device__ long long waveSum(long long v) {
  for (int o = 32; o > 0; o >>= 1) v += __shfl_down(v, o, 64);
  return v;
}

__global__ void reduce(const int* in, int n, long long* blockSums) {
  __shared__ long long part[kWaves];
  long long v = 0;
  for (int i = blockIdx.x * kBlock + threadIdx.x; i < n; i += gridDim.x * kBlock) v += in[i];
  v = waveSum(v);
  if (threadIdx.x % 64 == 0) part[threadIdx.x / 64] = v;
  __syncthreads();
  if (threadIdx.x < 64) {
    v = threadIdx.x < kWaves ? part[threadIdx.x] : 0;
    v = waveSum(v);
    if (threadIdx.x == 0) blockSums[blockIdx.x] = v;
  }
}

__global__ void reduceAtomic(const long long* blockSums, int m, unsigned long long* total) {
  long long v = 0;
  for (int i = blockIdx.x * kBlock + threadIdx.x; i < m; i += gridDim.x * kBlock) v += blockSums[i];
  v = waveSum(v);
  if (threadIdx.x % 64 == 0) atomicAdd(total, (unsigned long long)v);
}

// inclusive scan of one block of kBlock elements; returns the block's total in *sum
__device__ unsigned blockScan(unsigned x, unsigned* sum) {
  __shared__ unsigned waveTot[kWaves];
  int lane = threadIdx.x % 64, w = threadIdx.x / 64;
  for (int o = 1; o < 64; o <<= 1) {
    unsigned y = __shfl_up(x, o, 64);
    if (lane >= o) x += y;
  }
  if (lane == 63) waveTot[w] = x;
  __syncthreads();
  unsigned before = 0, all = 0;
  for (int k = 0; k < kWaves; k++) {
    if (k < w) before += waveTot[k];
    all += waveTot[k];
  }
  *sum = all;
  __syncthreads();
  return x + before;
}

__global__ void scanBlocks(const unsigned* in, unsigned* out, int n, unsigned* totals) {
  int i = blockIdx.x * kBlock + threadIdx.x;
  unsigned x = i < n ? in[i] : 0;
  unsigned sum;
  unsigned inc = blockScan(x, &sum);
  if (i < n) out[i] = inc - x;  // exclusive
  if (threadIdx.x == 0) totals[blockIdx.x] = sum;
}

__global__ void scanTotals(unsigned* totals, int m) {  // one block: exclusive scan of m totals, in chunks
  __shared__ unsigned carry;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  for (int base = 0; base < m; base += kBlock) {
    int i = base + threadIdx.x;
    unsigned x = i < m ? totals[i] : 0;
    unsigned sum;
    unsigned inc = blockScan(x, &sum);
    unsigned c = carry;
    if (i < m) totals[i] = c + inc - x;
    __syncthreads();
    if (threadIdx.x == 0) carry = c + sum;
    __syncthreads();
  }
}

__global__ void addOffsets(unsigned* out, int n, const unsigned* offs) {
  int i = blockIdx.x * kBlock + threadIdx.x;
  if (i < n) out[i] += offs[blockIdx.x];
}

int main() {
  const int n = 1 << 20;
  std::vector<int> h(n);
  unsigned s = 12345;
  for (int i = 0; i < n; i++) {
    s = s * 1103515245u + 12345u;
    h[i] = (int)((s >> 8) % 2001) - 1000 + (i % 3 == 0 ? 1000000 : 0);
  }
  long long want = 0;
  for (int x : h) want += x;

  int *din, *dout, *totals;
  long long* bsums;
  unsigned long long* dtotal;
  const int rblocks = 120, sblocks = n / kBlock;
  CHECK(hipMalloc(&din, n * 4));
  CHECK(hipMalloc(&dout, n * 4));
  CHECK(hipMalloc(&totals, sblocks * 4));
  CHECK(hipMalloc(&bsums, rblocks * 8));
  CHECK(hipMalloc(&dtotal, 8));
  CHECK(hipMemcpy(din, h.data(), n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemset(dtotal, 0, 8));
  reduce<<<rblocks, kBlock>>>(din, n, bsums);
  reduceAtomic<<<1, kBlock>>>(bsums, rblocks, dtotal);
  long long got = 0;
  CHECK(hipMemcpy(&got, dtotal, 8, hipMemcpyDeviceToHost));
  EXPECT(got == want, "sum %lld, want %lld", got, want);

  scanBlocks<<<sblocks, kBlock>>>((unsigned*)din, (unsigned*)dout, n, (unsigned*)totals);
  scanTotals<<<1, kBlock>>>((unsigned*)totals, sblocks);
  addOffsets<<<sblocks, kBlock>>>((unsigned*)dout, n, (unsigned*)totals);
  std::vector<int> o(n);
  CHECK(hipMemcpy(o.data(), dout, n * 4, hipMemcpyDeviceToHost));
  long long run = 0;  // the sums pass 2^31 (n/3 * 1e6): the scan is on unsigned, compared mod 2^32
  for (int i = 0; i < n; i++) {
    EXPECT(o[i] == (int)(unsigned)(unsigned long long)run, "scan[%d] = %d, want %d", i, o[i],
           (int)(unsigned)(unsigned long long)run);
    run += h[i];
  }
  printf("reduce_scan: ok (sum %lld)\n", got);
  return 0;
}
