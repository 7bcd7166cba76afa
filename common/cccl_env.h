// cccl_env.h -- CUB's determinism levels (CCCL 3.4+) with no allocation in the timing.
//
// For lessons 14 and 15 (nvcc, C++17). Include it after harness.h. With CUB
// 3.4 or newer HAVE_DETERMINISM is 1 and CCCL_ENV(level) is an execution
// environment that asks for a determinism level (not_guaranteed, run_to_run,
// gpu_to_gpu) and hands CUB our scratch buffer; with an older CUB,
// HAVE_DETERMINISM is 0 and the lessons leave those rows out. The levels
// came in CUB 3.1, but before 3.4 CUB asks a memory resource for bytes with
// no alignment, which this resource does not take (and 3.1's gpu_to_gpu
// takes no 64-bit size): those builds leave the rows out too.
#ifndef CCCL_ENV_H
#define CCCL_ENV_H

#include <cub/version.cuh>
#if CUB_VERSION >= 300400 // determinism levels through an execution environment, our scratch
#define HAVE_DETERMINISM 1
#include <cuda/std/execution>
#include <cuda/stream_ref>
#else
#define HAVE_DETERMINISM 0
#if CUB_VERSION >= 300100
#pragma message("CUB 3.1 to 3.3: the cccl_* rows need CUB 3.4 or newer and are left out")
#endif
#endif
// CCCL 3.5.0's gpu_to_gpu sum is wrong from about 2^30 elements on: right at
// 2^29 + 1, wrong at 2^30 - 1 and above, also with CUB's own allocator and no
// error returned (lab/14_cccl_gpu_to_gpu.md). Above the largest
// size seen right, that row is left out with a note, not reported as passing.
#define CCCL_G2G_TRUSTED(n) (CUB_VERSION > 300500 || (n) <= ((size_t)1 << 29) + 1)

#if HAVE_DETERMINISM
// The environment API takes no temp-storage pointer: on every call it asks a
// memory resource for its scratch, and by default that is cudaMallocAsync and
// cudaFreeAsync. Our resource hands out one buffer instead, sized by untimed
// first calls (between scratch_sizing() and scratch_sized()); a timed call
// that needed more would be an error, never a hidden allocation.
static void *g_scratch;
static size_t g_scratch_bytes;
static int g_scratch_fixed; // 1: the buffer may no longer grow (timed calls)

static inline void *scratch_for(size_t bytes)
{
    if (bytes > g_scratch_bytes) {
        if (g_scratch_fixed) { fprintf(stderr, "%s: CUB asked for more scratch after it was sized\n", g_prog); exit(1); }
        CUDA_CHECK(cudaFree(g_scratch)); // waits for the GPU: only ever outside the timing
        CUDA_CHECK(cudaMalloc(&g_scratch, bytes));
        g_scratch_bytes = bytes;
    }
    return g_scratch;
}
static inline void scratch_sizing(void) { g_scratch_fixed = 0; } // untimed calls follow: it may grow
static inline void scratch_sized(void) { g_scratch_fixed = 1; }  // timed calls follow: it may not
static inline void scratch_free(void)
{
    CUDA_CHECK(cudaFree(g_scratch));
    g_scratch = NULL;
    g_scratch_bytes = 0;
    g_scratch_fixed = 0;
}

// The member functions a cuda::mr resource must have, with and without a stream.
struct Scratch {
    void *allocate(cuda::stream_ref, size_t bytes, size_t) { return scratch_for(bytes); }
    void deallocate(cuda::stream_ref, void *, size_t, size_t) noexcept {}
    void *allocate_sync(size_t bytes, size_t) { return scratch_for(bytes); }
    void deallocate_sync(void *, size_t, size_t) noexcept {}
    bool operator==(const Scratch &) const { return true; }
    bool operator!=(const Scratch &) const { return false; }
};

// A determinism level and our resource, as one environment; the stream is the
// default one.
#define CCCL_ENV(level)                                                                     \
    cuda::std::execution::env{cuda::execution::require(cuda::execution::determinism::level), \
                              cuda::std::execution::prop{cuda::mr::get_memory_resource, Scratch{}}}
#endif // HAVE_DETERMINISM

#endif // CCCL_ENV_H
