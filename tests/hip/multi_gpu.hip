// kfdemu-profile: mi210x8
// Four GPUs at once: a stream and a buffer on each, kernels running on all of them together, a ring
// of hipMemcpyPeerAsync copies (GPU d to d+1) ordered by events across devices, then every GPU
// reading its neighbour's memory directly in a kernel after hipDeviceEnablePeerAccess; hipGetDevice
// and per-device hipDeviceSynchronize; all results exact.
#include "common.h"
#include <vector>

__global__ void fill(int* a, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = v * 1000000 + i;
}

__global__ void addFrom(int* dst, const int* src, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] += src[i] * k;
}

int main() {
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  EXPECT(count >= 4, "%d devices: the mi210x8 profile has 8", count);
  const int G = 4, n = 100000;
  std::vector<int*> buf(G), in(G);
  std::vector<hipStream_t> st(G);
  std::vector<hipEvent_t> ev(G);
  for (int d = 0; d < G; d++) {
    CHECK(hipSetDevice(d));
    int cur = -1;
    CHECK(hipGetDevice(&cur));
    EXPECT(cur == d, "hipGetDevice %d after hipSetDevice(%d)", cur, d);
    CHECK(hipMalloc(&buf[d], n * 4));
    CHECK(hipMalloc(&in[d], n * 4));
    CHECK(hipStreamCreate(&st[d]));
    CHECK(hipEventCreateWithFlags(&ev[d], hipEventDisableTiming));
  }
  // every GPU fills its buffer at once
  for (int d = 0; d < G; d++) {
    CHECK(hipSetDevice(d));
    fill<<<(n + 255) / 256, 256, 0, st[d]>>>(buf[d], n, d + 1);
    CHECK(hipEventRecord(ev[d], st[d]));
  }
  // ring: GPU d+1's stream waits for GPU d's fill, copies it into in[d+1], adds it twice
  for (int d = 0; d < G; d++) {
    int e = (d + 1) % G;
    CHECK(hipSetDevice(e));
    CHECK(hipStreamWaitEvent(st[e], ev[d], 0));
    CHECK(hipMemcpyPeerAsync(in[e], e, buf[d], d, n * 4, st[e]));
  }
  // buf[d] may change only after GPU d+1's stream has copied it: wait for that copy
  std::vector<hipEvent_t> copied(G);
  for (int e = 0; e < G; e++) {
    CHECK(hipSetDevice(e));
    CHECK(hipEventCreateWithFlags(&copied[e], hipEventDisableTiming));
    CHECK(hipEventRecord(copied[e], st[e]));
  }
  for (int d = 0; d < G; d++) {
    CHECK(hipSetDevice(d));
    CHECK(hipStreamWaitEvent(st[d], copied[(d + 1) % G], 0));
    addFrom<<<(n + 255) / 256, 256, 0, st[d]>>>(buf[d], in[d], n, 2);
  }
  for (int d = 0; d < G; d++) {
    CHECK(hipSetDevice(d));
    CHECK(hipDeviceSynchronize());
  }
  std::vector<int> h(n);
  for (int d = 0; d < G; d++) {
    CHECK(hipSetDevice(d));
    CHECK(hipMemcpy(h.data(), buf[d], n * 4, hipMemcpyDeviceToHost));
    int p = (d + G - 1) % G;
    for (int i = 0; i < n; i++) {
      int want = (d + 1) * 1000000 + i + 2 * ((p + 1) * 1000000 + i);
      EXPECT(h[i] == want, "GPU %d: a[%d] = %d, want %d", d, i, h[i], want);
    }
  }
  // direct peer access: GPU d adds GPU d+1's buffer (as it is now) in a kernel
  std::vector<std::vector<int>> before(G, std::vector<int>(n));
  for (int d = 0; d < G; d++) {
    CHECK(hipSetDevice(d));
    CHECK(hipMemcpy(before[d].data(), buf[d], n * 4, hipMemcpyDeviceToHost));
  }
  for (int d = 0; d < G; d++) {
    int e = (d + 1) % G;
    int can = 0;
    CHECK(hipDeviceCanAccessPeer(&can, d, e));
    EXPECT(can == 1, "GPU %d cannot access GPU %d", d, e);
    CHECK(hipSetDevice(d));
    CHECK(hipDeviceEnablePeerAccess(e, 0));
    addFrom<<<(n + 255) / 256, 256, 0, st[d]>>>(in[d], buf[e], n, 1);  // in[d] += buf[e]
  }
  for (int d = 0; d < G; d++) {
    CHECK(hipSetDevice(d));
    CHECK(hipStreamSynchronize(st[d]));
    CHECK(hipMemcpy(h.data(), in[d], n * 4, hipMemcpyDeviceToHost));
    int p = (d + G - 1) % G, e = (d + 1) % G;
    for (int i = 0; i < n; i++) {
      int want = ((p + 1) * 1000000 + i) + before[e][i];
      EXPECT(h[i] == want, "GPU %d peer sum a[%d] = %d, want %d", d, i, h[i], want);
    }
  }
  for (int d = 0; d < G; d++) {
    CHECK(hipSetDevice(d));
    CHECK(hipStreamDestroy(st[d]));
    CHECK(hipFree(buf[d]));
    CHECK(hipFree(in[d]));
  }
  printf("multi_gpu: ok\n");
  return 0;
}
