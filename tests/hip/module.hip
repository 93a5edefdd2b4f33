// hipModuleLoad / hipModuleGetFunction / hipModuleLaunchKernel of a code object file
// (module_kernel.co in the working directory, built with hipcc --genco).
#include "common.h"
#include <vector>

int main() {
  hipModule_t m;
  CHECK(hipModuleLoad(&m, "module_kernel.co"));
  hipFunction_t saxpy, iota;
  CHECK(hipModuleGetFunction(&saxpy, m, "saxpy"));
  CHECK(hipModuleGetFunction(&iota, m, "iota"));
  EXPECT(hipModuleGetFunction(&iota, m, "no_such_kernel") != hipSuccess, "a missing kernel was found");
  CHECK(hipModuleGetFunction(&iota, m, "iota"));
  const int n = 10000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; i++) { x[i] = i; y[i] = 1; }
  float *dx, *dy;
  CHECK(hipMalloc(&dx, n * 4));
  CHECK(hipMalloc(&dy, n * 4));
  CHECK(hipMemcpy(dx, x.data(), n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dy, y.data(), n * 4, hipMemcpyHostToDevice));
  struct { float a; float* x; float* y; int n; } args{2.0f, dx, dy, n};
  size_t size = sizeof args;
  void* config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END};
  CHECK(hipModuleLaunchKernel(saxpy, (n + 255) / 256, 1, 1, 256, 1, 1, 0, 0, nullptr, config));
  CHECK(hipMemcpy(y.data(), dy, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(y[i] == 2.0f * i + 1, "y[%d] = %f", i, y[i]);
  int* dout;
  CHECK(hipMalloc(&dout, 64 * 4));
  int base = 1000;
  void* params[] = {&dout, &base};
  CHECK(hipModuleLaunchKernel(iota, 1, 1, 1, 64, 1, 1, 0, 0, params, nullptr));
  std::vector<int> out(64);
  CHECK(hipMemcpy(out.data(), dout, 64 * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < 64; i++) EXPECT(out[i] == 1000 + i, "out[%d] = %d", i, out[i]);
  CHECK(hipModuleUnload(m));
  printf("module: ok\n");
  return 0;
}
