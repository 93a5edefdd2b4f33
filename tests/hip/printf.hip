// Device printf (HIP 5.2.3: the device libraries' hostcall buffer, served by the runtime's listener
// thread): the text printed by the kernel must arrive on the host exactly, in order per wave.
#include "common.h"
#include <string>
#include <unistd.h>
#include <fcntl.h>

__global__ void hello(int base, float f, const char* s) {
  int t = threadIdx.x;
  if (t < 4) printf("thread %d: %d %.2f %s\n", t, base + t, f * t, s);
}

__global__ void scalar() { printf("block %d says %x\n", (int)blockIdx.x, 0xbeef); }

int main() {
  char* ds;
  const char msg[] = "from the GPU";
  CHECK(hipMalloc(&ds, sizeof msg));
  CHECK(hipMemcpy(ds, msg, sizeof msg, hipMemcpyHostToDevice));
  char path[] = "/tmp/hip-printf-XXXXXX";
  int fd = mkstemp(path);
  EXPECT(fd >= 0, "mkstemp");
  fflush(stdout);
  int saved = dup(1);
  dup2(fd, 1);
  hello<<<1, 64>>>(40, 1.5f, ds);
  CHECK(hipDeviceSynchronize());
  scalar<<<1, 1>>>();
  CHECK(hipDeviceSynchronize());
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::string got;
  char buf[4096];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) got.append(buf, n);
  close(fd);
  unlink(path);
  const std::string want =
      "thread 0: 40 0.00 from the GPU\n"
      "thread 1: 41 1.50 from the GPU\n"
      "thread 2: 42 3.00 from the GPU\n"
      "thread 3: 43 4.50 from the GPU\n"
      "block 0 says beef\n";
  EXPECT(got == want, "printed:\n%s---\nwant:\n%s---", got.c_str(), want.c_str());
  printf("printf: ok\n");
  return 0;
}
