// Stream memory operations: hipStreamWaitValue32/64 on signal memory (hipExtMallocWithFlags with
// hipMallocSignalMemory) hold a stream's later kernel until another stream's hipStreamWriteValue
// satisfies the condition (Gte, Eq, And, Nor, with masks); the held kernel has not run while the
// condition is false. hipStreamWriteValue32/64 to ordinary device memory, in stream order.
#include "common.h"
#include <chrono>
#include <cstdint>
#include <thread>

__global__ void mark(int* out, int idx, int v) {
  if (threadIdx.x == 0 && blockIdx.x == 0) out[idx] = v;
}

static int readMark(const int* out, int idx) {
  int v;
  CHECK(hipMemcpy(&v, out + idx, 4, hipMemcpyDeviceToHost));  // the null stream: not blocked by s1
  return v;
}

struct Case {
  const char* name;
  unsigned flags;
  uint64_t mask, wait, wrong, right;  // a value that must not release the wait, then one that must
};

int main() {
  int* out;
  CHECK(hipMalloc(&out, 64 * 4));
  CHECK(hipMemset(out, 0, 64 * 4));
  hipStream_t s1, s2;
  CHECK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
  CHECK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  const Case cases[] = {
      {"gte", hipStreamWaitValueGte, ~0ull, 5, 4, 9},
      {"eq", hipStreamWaitValueEq, ~0ull, 7, 8, 7},
      {"eq masked", hipStreamWaitValueEq, 0xff, 0x12, 0x1213, 0x3412},
      {"and", hipStreamWaitValueAnd, ~0ull, 0x30, 0x0f, 0x10},
      {"nor", hipStreamWaitValueNor, 0xf, 0x3, 0xc, 0x8},  // within the mask, 0xc | 3 leaves no bit clear, 0x8 | 3 one
  };
  int idx = 0;
  for (int wide = 0; wide < 2; wide++) {
    for (const Case& c : cases) {
      void* sig;
      CHECK(hipExtMallocWithFlags(&sig, 8, hipMallocSignalMemory));
      // start from the "wrong" value
      if (wide)
        CHECK(hipStreamWriteValue64(s2, sig, c.wrong, 0));
      else
        CHECK(hipStreamWriteValue32(s2, sig, (uint32_t)c.wrong, 0));
      CHECK(hipStreamSynchronize(s2));
      if (wide)
        CHECK(hipStreamWaitValue64(s1, sig, c.wait, c.flags, c.mask));
      else
        CHECK(hipStreamWaitValue32(s1, sig, (uint32_t)c.wait, c.flags, (uint32_t)c.mask));
      mark<<<1, 64, 0, s1>>>(out, idx, 100 + idx);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      EXPECT(hipStreamQuery(s1) == hipErrorNotReady, "%s%s: the stream is not held", c.name, wide ? " 64" : "");
      EXPECT(readMark(out, idx) == 0, "%s%s: the kernel behind the wait ran at value %#llx", c.name, wide ? " 64" : "",
             (unsigned long long)c.wrong);
      if (wide)
        CHECK(hipStreamWriteValue64(s2, sig, c.right, 0));
      else
        CHECK(hipStreamWriteValue32(s2, sig, (uint32_t)c.right, 0));
      CHECK(hipStreamSynchronize(s1));
      EXPECT(readMark(out, idx) == 100 + idx, "%s%s: mark %d", c.name, wide ? " 64" : "", readMark(out, idx));
      CHECK(hipFree(sig));
      idx++;
    }
  }
  // writes to device memory in stream order, between kernels
  uint64_t* dv;
  CHECK(hipMalloc(&dv, 64));
  CHECK(hipMemsetAsync(dv, 0xff, 64, s1));
  CHECK(hipStreamWriteValue32(s1, dv, 0x12345678, 0));
  CHECK(hipStreamWriteValue64(s1, dv + 1, 0x1122334455667788ull, 0));
  mark<<<1, 64, 0, s1>>>(out, 40, 7);
  CHECK(hipStreamSynchronize(s1));
  uint64_t hv[8];
  CHECK(hipMemcpy(hv, dv, 64, hipMemcpyDeviceToHost));
  EXPECT(hv[0] == 0xffffffff12345678ull, "32-bit write: %#llx", (unsigned long long)hv[0]);
  EXPECT(hv[1] == 0x1122334455667788ull, "64-bit write: %#llx", (unsigned long long)hv[1]);
  EXPECT(hv[2] == ~0ull, "beyond the writes: %#llx", (unsigned long long)hv[2]);
  EXPECT(readMark(out, 40) == 7, "kernel after the writes");
  CHECK(hipStreamDestroy(s1));
  CHECK(hipStreamDestroy(s2));
  printf("stream_ops: ok\n");
  return 0;
}
