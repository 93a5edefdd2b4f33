// A GPU memory access fault: a kernel storing to an address no buffer maps. As on a GPU, ROCr's
// fault handler prints "Memory access fault by GPU node-N ... on address ..." and the process
// aborts; the faulting launch runs in a child (this program run again with "child"), the parent
// checks that the child died of SIGABRT, that its stderr names the fault and the address, and that
// the device still works for the parent afterwards (a kernel before and after the child).
#include "common.h"
#include <cstring>
#include <csignal>
#include <string>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

__global__ void store(unsigned long long addr, int v) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *(volatile int*)addr = v;
}

__global__ void fill(int* a, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = v + i;
}

static const unsigned long long kBad = 0x7e5500000000ull;  // far from every heap and aperture

static void checkFill(int v) {
  const int n = 4096;
  int* d;
  CHECK(hipMalloc(&d, n * 4));
  fill<<<n / 256, 256>>>(d, n, v);
  CHECK(hipGetLastError());
  static int h[n];
  CHECK(hipMemcpy(h, d, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(h[i] == v + i, "a[%d] = %d, want %d", i, h[i], v + i);
  CHECK(hipFree(d));
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "child") == 0) {
    checkFill(7);  // the device works in the child too before the fault
    store<<<1, 64>>>(kBad, 42);
    hipError_t e = hipDeviceSynchronize();
    // not reached on a GPU: the runtime aborts the process on the fault
    fprintf(stderr, "child: hipDeviceSynchronize returned %s after the faulting store\n", hipGetErrorString(e));
    return 3;
  }
  checkFill(1);

  int pipefd[2];
  EXPECT(pipe(pipefd) == 0, "pipe: %s", strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
  posix_spawn_file_actions_addclose(&fa, pipefd[0]);
  char self[] = "/proc/self/exe", childArg[] = "child";
  char* args[] = {argv[0], childArg, nullptr};
  pid_t pid;
  int rc = posix_spawn(&pid, self, &fa, nullptr, args, environ);
  EXPECT(rc == 0, "posix_spawn: %s", strerror(rc));
  close(pipefd[1]);
  std::string err;
  char buf[4096];
  ssize_t k;
  while ((k = read(pipefd[0], buf, sizeof buf)) > 0) err.append(buf, k);
  close(pipefd[0]);
  int st = 0;
  EXPECT(waitpid(pid, &st, 0) == pid, "waitpid: %s", strerror(errno));
  fprintf(stderr, "child's stderr:\n%s", err.c_str());
  EXPECT(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "child status %#x: want death by SIGABRT", st);
  EXPECT(err.find("Memory access fault by GPU") != std::string::npos, "child's stderr does not name the fault");
  char addr[32];
  snprintf(addr, sizeof addr, "%#llx", kBad);
  EXPECT(err.find(addr) != std::string::npos, "child's stderr does not name the address %s", addr);

  checkFill(2);  // the parent's queue and the driver still work
  printf("mem_fault: ok\n");
  return 0;
}
