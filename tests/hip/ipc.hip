// kfdemu-profile: mi210x8
// Device memory shared between processes: the parent fills a hipMalloc buffer on device 0 and
// passes hipIpcGetMemHandle's handle to a child (this program run again with "child HEX ..."),
// which opens it with hipIpcOpenMemHandle, checks the contents, runs a kernel rewriting them,
// memsets part of it, closes the handle and exits 0; the parent then sees the child's values. A
// second child imports the same handle again, a third opens it on the last device (a peer GPU's
// memory).
#include "common.h"
#include <cstring>
#include <string>
#include <vector>
#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

__global__ void rewrite(int* a, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * 2 + k;
}

static std::string hexOf(const hipIpcMemHandle_t& h) {
  std::string s;
  const unsigned char* b = (const unsigned char*)&h;
  char t[3];
  for (size_t i = 0; i < sizeof h; i++) {
    snprintf(t, sizeof t, "%02x", b[i]);
    s += t;
  }
  return s;
}

static int child(const char* hex, int n, int first, int k, int dev) {
  CHECK(hipSetDevice(dev));
  hipIpcMemHandle_t h;
  unsigned char* b = (unsigned char*)&h;
  EXPECT(strlen(hex) == 2 * sizeof h, "handle of %zu hex digits", strlen(hex));
  for (size_t i = 0; i < sizeof h; i++) sscanf(hex + 2 * i, "%2hhx", &b[i]);
  int* d = nullptr;
  CHECK(hipIpcOpenMemHandle((void**)&d, h, hipIpcMemLazyEnablePeerAccess));
  std::vector<int> v(n);
  CHECK(hipMemcpy(v.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(v[i] == first + i, "child: a[%d] = %d, want %d", i, v[i], first + i);
  rewrite<<<(n + 255) / 256, 256>>>(d, n, k);
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  // a memset of the 64 values before the last 64 (HIP's fill kernel on the imported memory). No
  // small hipMemcpy to or from it: HIP copies those with the CPU on a large-BAR GPU, and the
  // importer's CPU mapping of another process's memory is not backed here (SIGBUS; README).
  CHECK(hipMemset(d + n - 128, 0x7f, 64 * sizeof(int)));
  CHECK(hipDeviceSynchronize());
  CHECK(hipIpcCloseMemHandle(d));
  return 0;
}

// want is what the parent expects at a[i] after a child rewrote values v0 + i with k: the
// kernel's 2x + k, then the child's memset (0x7f7f7f7f) near the end.
static int want(int i, int n, int v0, int k) {
  if (i >= n - 128 && i < n - 64) return 0x7f7f7f7f;
  return (v0 + i) * 2 + k;
}

static void runChild(const hipIpcMemHandle_t& h, int n, int first, int k, int dev) {
  std::string hex = hexOf(h), ns = std::to_string(n), fs = std::to_string(first), ks = std::to_string(k),
              ds = std::to_string(dev);
  char self[] = "/proc/self/exe";
  char* args[] = {(char*)"ipc", (char*)"child", (char*)hex.c_str(), (char*)ns.c_str(), (char*)fs.c_str(),
                  (char*)ks.c_str(), (char*)ds.c_str(), nullptr};
  pid_t pid;
  int rc = posix_spawn(&pid, self, nullptr, nullptr, args, environ);
  EXPECT(rc == 0, "posix_spawn: %s", strerror(rc));
  int st = 0;
  EXPECT(waitpid(pid, &st, 0) == pid, "waitpid");
  EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}

int main(int argc, char** argv) {
  if (argc == 7 && strcmp(argv[1], "child") == 0)
    return child(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]));

  const int n = 50000;
  int* d;
  CHECK(hipMalloc(&d, n * sizeof(int)));
  std::vector<int> v(n);
  for (int i = 0; i < n; i++) v[i] = 1000 + i;
  CHECK(hipMemcpy(d, v.data(), n * sizeof(int), hipMemcpyHostToDevice));
  hipIpcMemHandle_t h;
  CHECK(hipIpcGetMemHandle(&h, d));
  runChild(h, n, 1000, 5, 0);
  CHECK(hipMemcpy(v.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(v[i] == want(i, n, 1000, 5), "parent: a[%d] = %d after the child", i, v[i]);
  // a second child imports the same handle after the parent rewrote the buffer
  for (int i = 0; i < n; i++) v[i] = 7 + i;
  CHECK(hipMemcpy(d, v.data(), n * sizeof(int), hipMemcpyHostToDevice));
  runChild(h, n, 7, 1, 0);
  CHECK(hipMemcpy(v.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(v[i] == want(i, n, 7, 1), "parent: a[%d] = %d after the second child", i, v[i]);
  // a third child opens it on another GPU: its kernel runs there on device 0's memory
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  EXPECT(count == 8, "%d devices (the program runs on mi210x8)", count);
  for (int i = 0; i < n; i++) v[i] = 500 + i;
  CHECK(hipMemcpy(d, v.data(), n * sizeof(int), hipMemcpyHostToDevice));
  runChild(h, n, 500, 3, count - 1);
  CHECK(hipMemcpy(v.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(v[i] == want(i, n, 500, 3), "parent: a[%d] = %d after the child on device %d", i, v[i], count - 1);
  CHECK(hipFree(d));
  printf("ipc: ok\n");
  return 0;
}
