// hipGraph by stream capture: a memcpy host to device, a memset, two kernels and a memcpy device to
// host captured on a stream, instantiated once and launched several times with new input between
// launches (the graph's memcpy reads the host buffer at each launch); results exact. Then a graph
// built by hand (hipGraphAddKernelNode with a dependency) launched twice.
#include "common.h"
#include <vector>

__global__ void scale(int* a, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * k + 1;
}

__global__ void addTo(int* dst, const int* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] += src[i];
}

int main() {
  const int n = 8192;
  int *in, *out, *a, *b;
  CHECK(hipHostMalloc(&in, n * 4));
  CHECK(hipHostMalloc(&out, n * 4));
  CHECK(hipMalloc(&a, n * 4));
  CHECK(hipMalloc(&b, n * 4));
  hipStream_t s;
  CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));

  hipGraph_t g;
  CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  hipStreamCaptureStatus cs;
  CHECK(hipStreamIsCapturing(s, &cs));
  EXPECT(cs == hipStreamCaptureStatusActive, "capture status %d", (int)cs);
  CHECK(hipMemcpyAsync(a, in, n * 4, hipMemcpyHostToDevice, s));
  CHECK(hipMemsetAsync(b, 0, n * 4, s));
  CHECK(hipMemsetAsync(b, 2, n * 4 / 2, s));  // first half: bytes 0x02 -> 0x02020202
  scale<<<n / 256, 256, 0, s>>>(a, n, 3);
  addTo<<<n / 256, 256, 0, s>>>(a, b, n);
  CHECK(hipMemcpyAsync(out, a, n * 4, hipMemcpyDeviceToHost, s));
  CHECK(hipStreamEndCapture(s, &g));
  size_t nodes = 0;
  CHECK(hipGraphGetNodes(g, nullptr, &nodes));
  EXPECT(nodes == 6, "graph has %zu nodes, want 6", nodes);
  hipGraphExec_t ge;
  CHECK(hipGraphInstantiate(&ge, g, nullptr, nullptr, 0));
  for (int launch = 0; launch < 4; launch++) {
    for (int i = 0; i < n; i++) in[i] = i * (launch + 1) - 100;
    for (int i = 0; i < n; i++) out[i] = -1;
    CHECK(hipGraphLaunch(ge, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < n; i++) {
      int want = (i * (launch + 1) - 100) * 3 + 1 + (i < n / 2 ? 0x02020202 : 0);
      EXPECT(out[i] == want, "launch %d out[%d] = %d, want %d", launch, i, out[i], want);
    }
  }
  CHECK(hipGraphExecDestroy(ge));
  CHECK(hipGraphDestroy(g));

  // by hand: scale(b) -> addTo(b, a), a holding the last launch's result
  hipGraph_t h;
  CHECK(hipGraphCreate(&h, 0));
  int nn = n, k = 2;
  void* args1[] = {&b, &nn, &k};
  void* args2[] = {&b, &a, &nn};
  hipKernelNodeParams p1 = {};
  p1.func = (void*)scale;
  p1.gridDim = dim3(n / 256);
  p1.blockDim = dim3(256);
  p1.kernelParams = args1;
  hipKernelNodeParams p2 = p1;
  p2.func = (void*)addTo;
  p2.kernelParams = args2;
  hipGraphNode_t k1, k2;
  CHECK(hipGraphAddKernelNode(&k1, h, nullptr, 0, &p1));
  CHECK(hipGraphAddKernelNode(&k2, h, &k1, 1, &p2));
  CHECK(hipGraphInstantiate(&ge, h, nullptr, nullptr, 0));
  std::vector<int> bh(n), ah(n);
  CHECK(hipMemcpy(bh.data(), b, n * 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(ah.data(), a, n * 4, hipMemcpyDeviceToHost));
  for (int launch = 0; launch < 2; launch++) {
    CHECK(hipGraphLaunch(ge, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < n; i++) bh[i] = bh[i] * 2 + 1 + ah[i];
  }
  std::vector<int> got(n);
  CHECK(hipMemcpy(got.data(), b, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(got[i] == bh[i], "hand-built graph b[%d] = %d, want %d", i, got[i], bh[i]);
  CHECK(hipGraphExecDestroy(ge));
  CHECK(hipGraphDestroy(h));
  CHECK(hipStreamDestroy(s));
  printf("graph: ok\n");
  return 0;
}
