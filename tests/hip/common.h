// Shared helpers of the HIP corpus: every program checks its own results and exits 0 only when all
// checks pass (scripts/hip-tests.sh runs each alone under kfdemu exec).
#pragma once
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    hipError_t e_ = (x);                                                                      \
    if (e_ != hipSuccess) {                                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(e_));      \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

#define EXPECT(c, ...)                                                                        \
  do {                                                                                        \
    if (!(c)) {                                                                               \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #c);                  \
      fprintf(stderr, __VA_ARGS__);                                                           \
      fprintf(stderr, "\n");                                                                  \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)
