// Blocks of 1024 work-items (__launch_bounds__(1024), 16 waves a block) with __syncthreads_count,
// __syncthreads_and and __syncthreads_or and a shared-memory tree reduction; the runtime's view of
// kernels and pointers: hipFuncGetAttributes, the occupancy API, hipPointerGetAttributes on device,
// pinned host and managed memory (and interior pointers); stream priorities
// (hipDeviceGetStreamPriorityRange, hipStreamCreateWithPriority, hipStreamGetPriority) with work on
// both ends of the range; hipExtLaunchKernelGGL with start and stop events; hipMemcpyWithStream.
#include "common.h"
#include <hip/hip_ext.h>
#include <vector>

constexpr int kBlock = 1024;

struct Out {
  int count, all, any, sum;
};

// Per block: the number of work-items with an odd index plus the block's number, whether all
// work-items are below a bound and whether any is, and the sum of the block's values.
__global__ void __launch_bounds__(kBlock) votes(const int* in, Out* out, int bound) {
  __shared__ int part[kBlock];
  int t = threadIdx.x, g = blockIdx.x * kBlock + t;
  int v = in[g];
  int count = __syncthreads_count((v & 1) != 0);
  int all = __syncthreads_and(v < bound);
  int any = __syncthreads_or(v >= bound);
  part[t] = v;
  __syncthreads();
  for (int s = kBlock / 2; s > 0; s >>= 1) {
    if (t < s) part[t] += part[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = {count, all, any, part[0]};
}

__global__ void scale(int* p, int n, int f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= f;
}

static void checkAttrs(const void* p, hipMemoryType want, bool dev, const char* what) {
  hipPointerAttribute_t a;
  CHECK(hipPointerGetAttributes(&a, p));
  EXPECT(a.memoryType == want, "%s: memoryType %d, want %d", what, (int)a.memoryType, (int)want);
  EXPECT(a.device == 0, "%s: device %d", what, a.device);
  if (dev) EXPECT(a.devicePointer == p, "%s: devicePointer %p, want %p", what, a.devicePointer, p);
  else EXPECT(a.hostPointer == p, "%s: hostPointer %p, want %p", what, a.hostPointer, p);
}

int main() {
  // Votes and reductions over 40 blocks of 1024.
  const int blocks = 40, n = blocks * kBlock, bound = 1 << 20;
  std::vector<int> in(n);
  for (int i = 0; i < n; i++) in[i] = (int)((i * 2654435761u) >> 13) % 1000;
  in[7 * kBlock + 100] = bound;         // block 7: one work-item at the bound
  in[33 * kBlock + 1023] = bound + 5;   // block 33: the last work-item above it
  int* din;
  Out* dout;
  CHECK(hipMalloc(&din, n * 4));
  CHECK(hipMalloc(&dout, blocks * sizeof(Out)));
  CHECK(hipMemcpy(din, in.data(), n * 4, hipMemcpyHostToDevice));
  votes<<<blocks, kBlock>>>(din, dout, bound);
  CHECK(hipGetLastError());
  std::vector<Out> out(blocks);
  CHECK(hipMemcpy(out.data(), dout, blocks * sizeof(Out), hipMemcpyDeviceToHost));
  for (int b = 0; b < blocks; b++) {
    Out w = {0, 1, 0, 0};
    for (int t = 0; t < kBlock; t++) {
      int v = in[b * kBlock + t];
      w.count += v & 1;
      w.all &= v < bound;
      w.any |= v >= bound;
      w.sum += v;
    }
    const Out& o = out[b];
    EXPECT(o.count == w.count, "block %d: __syncthreads_count %d, want %d", b, o.count, w.count);
    EXPECT((o.all != 0) == (w.all != 0), "block %d: __syncthreads_and %d, want %d", b, o.all, w.all);
    EXPECT((o.any != 0) == (w.any != 0), "block %d: __syncthreads_or %d, want %d", b, o.any, w.any);
    EXPECT(o.sum == w.sum, "block %d: sum %d, want %d", b, o.sum, w.sum);
  }
  printf("votes and reductions in blocks of %d: ok\n", kBlock);

  // The kernel's attributes and occupancy.
  hipFuncAttributes fa;
  CHECK(hipFuncGetAttributes(&fa, reinterpret_cast<const void*>(votes)));
  EXPECT(fa.maxThreadsPerBlock == kBlock, "maxThreadsPerBlock %d", fa.maxThreadsPerBlock);
  // the part array and the device library's own LDS for the block-wide votes (the code object's
  // group_segment_fixed_size)
  EXPECT(fa.sharedSizeBytes >= kBlock * 4 && fa.sharedSizeBytes <= kBlock * 4 + 1024, "sharedSizeBytes %zu",
         fa.sharedSizeBytes);
  EXPECT(fa.numRegs > 0 && fa.numRegs <= 512, "numRegs %d", fa.numRegs);
  EXPECT(fa.localSizeBytes == 0, "localSizeBytes %zu", fa.localSizeBytes);
  int perCU = 0;
  CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&perCU, votes, kBlock, 0));
  EXPECT(perCU >= 1 && perCU * kBlock <= 2560, "max active blocks of %d per CU: %d", kBlock, perCU);
  int minGrid = 0, blockSize = 0;
  CHECK(hipOccupancyMaxPotentialBlockSize(&minGrid, &blockSize, scale, 0, 0));
  hipDeviceProp_t prop;
  CHECK(hipGetDeviceProperties(&prop, 0));
  EXPECT(blockSize > 0 && blockSize <= prop.maxThreadsPerBlock && blockSize % prop.warpSize == 0,
         "potential block size %d", blockSize);
  EXPECT(minGrid >= prop.multiProcessorCount, "min grid %d for %d CUs", minGrid, prop.multiProcessorCount);
  printf("attributes: %d registers, %zu bytes LDS, %d blocks per CU; potential block %d, grid %d\n",
         fa.numRegs, fa.sharedSizeBytes, perCU, blockSize, minGrid);

  // Pointer attributes.
  int *host, *managed;
  CHECK(hipHostMalloc(&host, 1 << 16, 0));
  CHECK(hipMallocManaged(&managed, 1 << 16));
  checkAttrs(din, hipMemoryTypeDevice, true, "hipMalloc");
  checkAttrs(din + 1000, hipMemoryTypeDevice, true, "inside hipMalloc");
  checkAttrs(host, hipMemoryTypeHost, false, "hipHostMalloc");
  checkAttrs(host + 1000, hipMemoryTypeHost, false, "inside hipHostMalloc");
  hipPointerAttribute_t ma;
  CHECK(hipPointerGetAttributes(&ma, managed));
  EXPECT(ma.isManaged, "hipMallocManaged: isManaged %d", ma.isManaged);
  int stack = 0;
  hipPointerAttribute_t sa;
  hipError_t e = hipPointerGetAttributes(&sa, &stack);
  EXPECT(e == hipErrorInvalidValue, "plain host memory: %s", hipGetErrorName(e));
  (void)hipGetLastError(); // the expected error is not this program's
  printf("pointer attributes: ok\n");

  // Stream priorities: work on the greatest and least priority streams, in both orders.
  int least = 0, greatest = 0;
  CHECK(hipDeviceGetStreamPriorityRange(&least, &greatest));
  EXPECT(greatest <= least, "priority range least %d greatest %d", least, greatest);
  hipStream_t hi, lo;
  CHECK(hipStreamCreateWithPriority(&hi, hipStreamNonBlocking, greatest));
  CHECK(hipStreamCreateWithPriority(&lo, hipStreamNonBlocking, least));
  int p = 12345;
  CHECK(hipStreamGetPriority(hi, &p));
  EXPECT(p == greatest, "high stream priority %d, want %d", p, greatest);
  CHECK(hipStreamGetPriority(lo, &p));
  EXPECT(p == least, "low stream priority %d, want %d", p, least);
  const int m = 1 << 18;
  int *a, *b;
  CHECK(hipMalloc(&a, m * 4));
  CHECK(hipMalloc(&b, m * 4));
  std::vector<int> ha(m), hb(m);
  for (int i = 0; i < m; i++) ha[i] = i, hb[i] = -i;
  CHECK(hipMemcpyWithStream(a, ha.data(), m * 4, hipMemcpyHostToDevice, lo));
  CHECK(hipMemcpyWithStream(b, hb.data(), m * 4, hipMemcpyHostToDevice, hi));
  for (int r = 0; r < 3; r++) {
    scale<<<m / 256, 256, 0, lo>>>(a, m, 3);
    scale<<<m / 256, 256, 0, hi>>>(b, m, 5);
  }
  CHECK(hipStreamSynchronize(lo));
  CHECK(hipStreamSynchronize(hi));

  // hipExtLaunchKernelGGL with events around the kernel, on the high-priority stream.
  hipEvent_t start, stop;
  CHECK(hipEventCreate(&start));
  CHECK(hipEventCreate(&stop));
  hipExtLaunchKernelGGL(scale, dim3(m / 256), dim3(256), 0, hi, start, stop, 0, b, m, -1);
  CHECK(hipGetLastError());
  CHECK(hipEventSynchronize(stop));
  float ms = -1;
  CHECK(hipEventElapsedTime(&ms, start, stop));
  EXPECT(ms >= 0 && ms < 60000, "hipExtLaunchKernelGGL: elapsed %g ms", ms);
  CHECK(hipMemcpy(ha.data(), a, m * 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hb.data(), b, m * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < m; i++) {
    EXPECT(ha[i] == i * 27, "low stream a[%d] = %d", i, ha[i]);
    EXPECT(hb[i] == i * 125, "high stream b[%d] = %d", i, hb[i]);
  }
  printf("stream priorities %d..%d, hipExtLaunchKernelGGL (%.3f ms): ok\n", greatest, least, ms);
  CHECK(hipEventDestroy(start));
  CHECK(hipEventDestroy(stop));
  CHECK(hipStreamDestroy(hi));
  CHECK(hipStreamDestroy(lo));
  CHECK(hipFree(a));
  CHECK(hipFree(b));
  CHECK(hipFree(din));
  CHECK(hipFree(dout));
  CHECK(hipHostFree(host));
  CHECK(hipFree(managed));
  printf("block_api: ok\n");
  return 0;
}
