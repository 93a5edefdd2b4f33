// Built with hipcc --genco into module_kernel.co for module.hip (hipModuleLoad).
#include <hip/hip_runtime.h>

extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void iota(int* out, int base) { out[threadIdx.x] = base + threadIdx.x; }
