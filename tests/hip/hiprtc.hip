// hipRTC: kernels compiled at run time (hiprtcCompileProgram through comgr, for the architecture the
// device reports in gcnArchName), loaded with hipModuleLoadData and launched; a template instantiated
// through a name expression; a source that does not compile fails with its log.
#include "common.h"
#include <hip/hiprtc.h>
#include <cstring>
#include <string>
#include <vector>

#define RTC(x)                                                                                \
  do {                                                                                        \
    hiprtcResult r_ = (x);                                                                    \
    if (r_ != HIPRTC_SUCCESS) {                                                               \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, hiprtcGetErrorString(r_));   \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

static const char *source = R"(
extern "C" __global__ void axpby(int n, float a, const float *x, float b, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b * y[i];
}
template <typename T, int K>
__global__ void power(T *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T p = 1;
  for (int k = 0; k < K; k++) p *= v[i];
  v[i] = p;
}
)";

// compile returns the code object of src for arch, with the lowered names of exprs.
static std::vector<char> compile(const char *src, const std::string &arch, const std::vector<std::string> &exprs,
                                 std::vector<std::string> *lowered) {
  hiprtcProgram p;
  RTC(hiprtcCreateProgram(&p, src, "rtc_kernels.cpp", 0, nullptr, nullptr));
  for (auto &e : exprs) RTC(hiprtcAddNameExpression(p, e.c_str()));
  std::string opt = "--gpu-architecture=" + arch;
  const char *opts[] = {opt.c_str(), "-O2"};
  hiprtcResult r = hiprtcCompileProgram(p, 2, opts);
  size_t logSize = 0;
  RTC(hiprtcGetProgramLogSize(p, &logSize));
  if (r != HIPRTC_SUCCESS) {
    std::string log(logSize, '\0');
    RTC(hiprtcGetProgramLog(p, &log[0]));
    fprintf(stderr, "hiprtcCompileProgram: %s\n%s\n", hiprtcGetErrorString(r), log.c_str());
    exit(1);
  }
  for (auto &e : exprs) {
    const char *name;
    RTC(hiprtcGetLoweredName(p, e.c_str(), &name));
    lowered->push_back(name);
  }
  size_t size;
  RTC(hiprtcGetCodeSize(p, &size));
  std::vector<char> code(size);
  RTC(hiprtcGetCode(p, code.data()));
  RTC(hiprtcDestroyProgram(&p));
  return code;
}

int main() {
  int major, minor;
  RTC(hiprtcVersion(&major, &minor));
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  std::string arch = props.gcnArchName;
  EXPECT(arch.rfind("gfx90a", 0) == 0, "gcnArchName %s", arch.c_str());

  std::vector<std::string> lowered;
  std::vector<char> code = compile(source, arch, {"power<float, 3>", "power<int, 5>"}, &lowered);
  EXPECT(code.size() > 4 && memcmp(code.data(), "\x7f" "ELF", 4) == 0, "the code is not an ELF (%zu bytes)", code.size());

  hipModule_t m;
  CHECK(hipModuleLoadData(&m, code.data()));
  hipFunction_t axpby, cube, fifth;
  CHECK(hipModuleGetFunction(&axpby, m, "axpby"));
  CHECK(hipModuleGetFunction(&cube, m, lowered[0].c_str()));
  CHECK(hipModuleGetFunction(&fifth, m, lowered[1].c_str()));

  const int n = 100003;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; i++) { x[i] = i % 1000; y[i] = 2 * (i % 7); }
  float *dx, *dy;
  CHECK(hipMalloc(&dx, n * 4));
  CHECK(hipMalloc(&dy, n * 4));
  CHECK(hipMemcpy(dx, x.data(), n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dy, y.data(), n * 4, hipMemcpyHostToDevice));
  struct {
    int n;
    float a;
    const float *x;
    float b;
    float *y;
  } args{n, 3.0f, dx, 0.5f, dy};
  size_t argSize = sizeof(args);
  void *config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &argSize, HIP_LAUNCH_PARAM_END};
  CHECK(hipModuleLaunchKernel(axpby, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, nullptr, config));
  std::vector<float> out(n);
  CHECK(hipMemcpy(out.data(), dy, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    float want = 3.0f * x[i] + 0.5f * y[i];
    EXPECT(out[i] == want, "axpby[%d] = %g, want %g", i, out[i], want);
  }

  // The template instances, launched with kernel parameters.
  std::vector<float> fv(n);
  std::vector<int> iv(n);
  for (int i = 0; i < n; i++) { fv[i] = (i % 9) - 4.0f; iv[i] = (i % 11) - 5; }
  int *di;
  CHECK(hipMalloc(&di, n * 4));
  CHECK(hipMemcpy(dx, fv.data(), n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(di, iv.data(), n * 4, hipMemcpyHostToDevice));
  int nn = n;
  void *fargs[] = {&dx, &nn};
  void *iargs[] = {&di, &nn};
  CHECK(hipModuleLaunchKernel(cube, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, fargs, nullptr));
  CHECK(hipModuleLaunchKernel(fifth, (n + 63) / 64, 1, 1, 64, 1, 1, 0, nullptr, iargs, nullptr));
  std::vector<float> fo(n);
  std::vector<int> io(n);
  CHECK(hipMemcpy(fo.data(), dx, n * 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(io.data(), di, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    float f = fv[i];
    int v = iv[i];
    EXPECT(fo[i] == f * f * f, "power<float,3>[%d] = %g, want %g", i, fo[i], f * f * f);
    EXPECT(io[i] == v * v * v * v * v, "power<int,5>[%d] = %d, want %d", i, io[i], v * v * v * v * v);
  }
  CHECK(hipModuleUnload(m));

  // A second program compiled and loaded after the first module was unloaded.
  std::vector<std::string> none;
  std::vector<char> code2 = compile("extern \"C\" __global__ void fill(int *p, int v) { p[threadIdx.x] = v + threadIdx.x; }",
                                    arch, {}, &none);
  hipModule_t m2;
  CHECK(hipModuleLoadData(&m2, code2.data()));
  hipFunction_t fill;
  CHECK(hipModuleGetFunction(&fill, m2, "fill"));
  int base = 1000;
  void *gargs[] = {&di, &base};
  CHECK(hipModuleLaunchKernel(fill, 1, 1, 1, 256, 1, 1, 0, nullptr, gargs, nullptr));
  CHECK(hipMemcpy(io.data(), di, 256 * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < 256; i++) EXPECT(io[i] == 1000 + i, "fill[%d] = %d", i, io[i]);
  CHECK(hipModuleUnload(m2));

  // A source with an error: the compile fails and the log names the problem.
  hiprtcProgram bad;
  RTC(hiprtcCreateProgram(&bad, "__global__ void k(int *p) { p[0] = undeclared; }", "bad.cpp", 0, nullptr, nullptr));
  std::string opt = "--gpu-architecture=" + arch;
  const char *opts[] = {opt.c_str()};
  hiprtcResult r = hiprtcCompileProgram(bad, 1, opts);
  EXPECT(r == HIPRTC_ERROR_COMPILATION, "a bad source compiled: %s", hiprtcGetErrorString(r));
  size_t logSize = 0;
  RTC(hiprtcGetProgramLogSize(bad, &logSize));
  std::string log(logSize, '\0');
  RTC(hiprtcGetProgramLog(bad, &log[0]));
  EXPECT(log.find("undeclared") != std::string::npos, "the log does not name the error: %s", log.c_str());
  RTC(hiprtcDestroyProgram(&bad));

  CHECK(hipFree(dx));
  CHECK(hipFree(dy));
  CHECK(hipFree(di));
  printf("hiprtc ok (hipRTC %d.%d, %s, code objects of %zu and %zu bytes)\n", major, minor, arch.c_str(), code.size(), code2.size());
  return 0;
}
