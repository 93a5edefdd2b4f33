// More of the runtime API over the emulated GPU: hipMemset2D / hipMemset2DAsync on a pitched
// buffer (a sub-rectangle at an odd width), hipMemcpy2DAsync device to device between pitched
// buffers and hipMemcpyParam2D to the host; hipMemGetAddressRange of interior pointers; in-kernel
// malloc/free of up to 1 MiB per thread (HIP 5.2 has no hipDeviceSetLimit); the stream-ordered
// allocator (hipMallocAsync / hipFreeAsync / hipMemPoolTrimTo) with kernels between; and a graph
// built by hand from a memset node, a kernel node, a host node and a memcpy node, with a child
// graph, launched three times.
#include "common.h"
#include <cstring>
#include <vector>

__global__ void addOne(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

__global__ void heap(int** slots, int n, size_t bytes) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int* p = (int*)malloc(bytes);
  if (p) {
    for (size_t k = 0; k < bytes / 4; k += 1024) p[k] = i;
  }
  slots[i] = p;
}

__global__ void heapCheck(int** slots, int n, size_t bytes, int* bad) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int* p = slots[i];
  if (!p) {
    atomicAdd(bad, 1);
    return;
  }
  for (size_t k = 0; k < bytes / 4; k += 1024)
    if (p[k] != i) atomicAdd(bad, 1);
  free(p);
}

static int hostCalls;
static void hostNode(void* arg) { hostCalls += *(int*)arg; }

int main() {
  // hipMemset2D on a sub-rectangle of a pitched buffer, then hipMemset2DAsync on another.
  const int W = 333, H = 17;
  // Pitches of the program's own (memcpy2d covers hipMallocPitch's).
  size_t pitch = 384;
  unsigned char* p2;
  CHECK(hipMalloc((void**)&p2, pitch * H));
  CHECK(hipMemset2D(p2, pitch, 0x11, W, H));
  CHECK(hipMemset2D(p2 + 3 * pitch + 5, pitch, 0x22, 101, 9));
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  CHECK(hipMemset2DAsync(p2 + 13 * pitch + 200, pitch, 0x33, 133, 4, s));
  CHECK(hipStreamSynchronize(s));
  std::vector<unsigned char> h(W * H);
  CHECK(hipMemcpy2D(h.data(), W, p2, pitch, W, H, hipMemcpyDeviceToHost));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      unsigned char w = 0x11;
      if (y >= 3 && y < 12 && x >= 5 && x < 106) w = 0x22;
      if (y >= 13 && y < 17 && x >= 200 && x < 333) w = 0x33;
      EXPECT(h[y * W + x] == w, "memset2D (%d,%d) = %#x, want %#x", x, y, h[y * W + x], w);
    }
  // hipMemcpy2DAsync device to device into another pitch, hipMemcpyParam2D back to the host.
  size_t pitch2 = 448;
  unsigned char* q2;
  CHECK(hipMalloc((void**)&q2, pitch2 * H));
  CHECK(hipMemset2D(q2, pitch2, 0, W + 100, H));
  CHECK(hipMemcpy2DAsync(q2 + 7, pitch2, p2, pitch, W, H, hipMemcpyDeviceToDevice, s));
  CHECK(hipStreamSynchronize(s));
  std::vector<unsigned char> g((W + 100) * H, 0xee);
  hip_Memcpy2D m = {};
  m.srcMemoryType = hipMemoryTypeDevice;
  m.srcDevice = (hipDeviceptr_t)q2;
  m.srcPitch = pitch2;
  m.dstMemoryType = hipMemoryTypeHost;
  m.dstHost = g.data();
  m.dstPitch = W + 100;
  m.WidthInBytes = W + 100;
  m.Height = H;
  CHECK(hipMemcpyParam2D(&m));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W + 100; x++) {
      unsigned char w = x >= 7 && x < W + 7 ? h[y * W + x - 7] : 0;
      EXPECT(g[y * (W + 100) + x] == w, "memcpy2D D2D (%d,%d) = %#x, want %#x", x, y, g[y * (W + 100) + x], w);
    }
  printf("hipMemset2D(Async), hipMemcpy2DAsync D2D, hipMemcpyParam2D: ok\n");

  // hipMemGetAddressRange of interior pointers.
  char* a;
  CHECK(hipMalloc(&a, 3 << 20));
  hipDeviceptr_t base;
  size_t size;
  CHECK(hipMemGetAddressRange(&base, &size, (hipDeviceptr_t)(a + 12345)));
  EXPECT((char*)base == a && size >= (3u << 20), "address range of a+12345: %p + %zu, want %p", (void*)base, size, a);
  CHECK(hipMemGetAddressRange(&base, &size, (hipDeviceptr_t)(p2 + pitch * 5)));
  EXPECT((unsigned char*)base == p2, "address range inside the pitched buffer: %p, want %p", (void*)base, p2);
  printf("hipMemGetAddressRange: ok\n");

  // In-kernel malloc of a quarter of the device heap, in 64 pieces.
  size_t heapSize = 0;
  CHECK(hipDeviceGetLimit(&heapSize, hipLimitMallocHeapSize));
  const int nt = 64;
  size_t bytes = heapSize / 4 / nt & ~(size_t)4095;
  if (bytes > (1 << 20)) bytes = 1 << 20;
  EXPECT(bytes >= 4096, "device heap of %zu bytes", heapSize);
  int** slots;
  int* bad;
  CHECK(hipMalloc(&slots, nt * sizeof(int*)));
  CHECK(hipMalloc(&bad, 4));
  CHECK(hipMemset(bad, 0, 4));
  heap<<<1, nt>>>(slots, nt, bytes);
  heapCheck<<<1, nt>>>(slots, nt, bytes, bad);
  int nbad = -1;
  CHECK(hipMemcpy(&nbad, bad, 4, hipMemcpyDeviceToHost));
  EXPECT(nbad == 0, "in-kernel malloc of %zu bytes x %d: %d failures", bytes, nt, nbad);
  printf("device heap of %zu bytes, in-kernel malloc/free of %zu bytes x %d: ok\n", heapSize, bytes, nt);

  // Stream-ordered allocation.
  const int n = 1 << 16;
  for (int r = 0; r < 4; r++) {
    int* t;
    CHECK(hipMallocAsync((void**)&t, n * 4, s));
    CHECK(hipMemsetAsync(t, 0, n * 4, s));
    addOne<<<n / 256, 256, 0, s>>>(t, n);
    addOne<<<n / 256, 256, 0, s>>>(t, n);
    std::vector<int> ht(n);
    CHECK(hipMemcpyAsync(ht.data(), t, n * 4, hipMemcpyDeviceToHost, s));
    CHECK(hipFreeAsync(t, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < n; i++) EXPECT(ht[i] == 2, "hipMallocAsync round %d [%d] = %d", r, i, ht[i]);
  }
  hipMemPool_t pool;
  CHECK(hipDeviceGetDefaultMemPool(&pool, 0));
  CHECK(hipMemPoolTrimTo(pool, 0));
  printf("hipMallocAsync / hipFreeAsync, 4 rounds, pool trimmed: ok\n");

  // A graph by hand: memset -> kernel -> (child graph: kernel) -> memcpy to host -> host node.
  int* gd;
  CHECK(hipMalloc(&gd, n * 4));
  std::vector<int> gh(n);
  hipGraph_t graph, child;
  CHECK(hipGraphCreate(&graph, 0));
  CHECK(hipGraphCreate(&child, 0));
  hipMemsetParams ms = {};
  ms.dst = gd;
  ms.value = 5;
  ms.elementSize = 4;
  ms.width = n;
  ms.height = 1;
  hipGraphNode_t nMemset, nKernel, nChildKernel, nChild, nCopy, nHost;
  CHECK(hipGraphAddMemsetNode(&nMemset, graph, nullptr, 0, &ms));
  int nn = n;
  void* kargs[] = {&gd, &nn};
  hipKernelNodeParams kp = {};
  kp.func = (void*)addOne;
  kp.gridDim = dim3(n / 256);
  kp.blockDim = dim3(256);
  kp.kernelParams = kargs;
  CHECK(hipGraphAddKernelNode(&nKernel, graph, &nMemset, 1, &kp));
  CHECK(hipGraphAddKernelNode(&nChildKernel, child, nullptr, 0, &kp));
  CHECK(hipGraphAddChildGraphNode(&nChild, graph, &nKernel, 1, child));
  CHECK(hipGraphAddMemcpyNode1D(&nCopy, graph, &nChild, 1, gh.data(), gd, n * 4, hipMemcpyDeviceToHost));
  int inc = 10;
  hipHostNodeParams hp = {hostNode, &inc};
  CHECK(hipGraphAddHostNode(&nHost, graph, &nCopy, 1, &hp));
  hipGraphExec_t exec;
  CHECK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
  for (int r = 0; r < 3; r++) {
    std::fill(gh.begin(), gh.end(), -1);
    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < n; i++) EXPECT(gh[i] == 7, "graph launch %d [%d] = %d, want 7", r, i, gh[i]);
    EXPECT(hostCalls == 10 * (r + 1), "host node ran %d times", hostCalls / 10);
  }
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(graph));
  CHECK(hipGraphDestroy(child));
  printf("hand-built graph (memset, kernel, child graph, memcpy, host node) x 3: ok\n");

  CHECK(hipFree(gd));
  CHECK(hipFree(a));
  CHECK(hipFree(p2));
  CHECK(hipFree(q2));
  CHECK(hipFree(slots));
  CHECK(hipFree(bad));
  CHECK(hipStreamDestroy(s));
  printf("runtime_misc: ok\n");
  return 0;
}
