// A failing device-side assert(): the kernel prints the assertion through the hostcall buffer and
// traps (s_trap 2); ROCr reports the queue error to HIP, which aborts. The failing launch runs in a
// child (this program run again with "child"); the parent checks that the child died of SIGABRT,
// that its stderr has the assertion's text (file, function, expression) and HIP's abort naming
// HSA_STATUS_ERROR_EXCEPTION, and that the device still works for the parent before and after.
#include "common.h"
#include <cstring>
#include <csignal>
#include <string>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

#include <cassert>

__global__ void checked(const int* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) assert(a[i] != 12345);
}

__global__ void fill(int* a, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = v + i;
}

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
    checkFill(7);  // the device works in the child too before the assertion
    const int n = 256;
    int* a;
    CHECK(hipMalloc(&a, n * 4));
    CHECK(hipMemset(a, 0, n * 4));
    checked<<<n / 64, 64>>>(a, n);  // holds: no output
    CHECK(hipDeviceSynchronize());
    int bad = 12345;
    CHECK(hipMemcpy(a + 77, &bad, 4, hipMemcpyHostToDevice));
    checked<<<n / 64, 64>>>(a, n);
    hipError_t e = hipDeviceSynchronize();
    // not reached on a GPU: the runtime aborts the process on the trap
    fprintf(stderr, "child: hipDeviceSynchronize returned %s after the failed assertion\n", hipGetErrorString(e));
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
  EXPECT(err.find("device_assert.hip") != std::string::npos && err.find("a[i] != 12345") != std::string::npos &&
             err.find("checked") != std::string::npos,
         "child's stderr does not have the assertion's file, function and expression");
  EXPECT(err.find("HSA_STATUS_ERROR_EXCEPTION") != std::string::npos, "child's stderr does not name the queue error");

  checkFill(2);  // the parent's queue and the driver still work
  printf("device_assert: ok\n");
  return 0;
}
