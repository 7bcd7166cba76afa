/*
 * Exercise 14: the largest element, with CUB.
 *
 * Lesson 14 called cub::DeviceReduce::Sum. Other reductions are a different
 * call with the same two-phase pattern: call once with a NULL temp pointer to
 * learn how many bytes of temp storage it needs, allocate them ONCE (outside
 * the timed region), then call again with the storage to do the work. Use
 * cub::DeviceReduce::Max to write max(x) to *d_out. A max is exact in any
 * order, so the check is exact for both inputs. By this tutorial's rule an
 * empty input gives 0 (CUB itself would write the lowest float).
 *
 *     make exercise14 && ./exercise14     # FAILs until both TODOs are done
 *     ./exercise14 -n 2^20+3 -d uniform --check
 */
#include "harness.h"
#include <cub/device/device_reduce.cuh>

#define BLOCK_SIZE 256 // not used by CUB; -b is accepted only at this value

// ---- launch ---------------------------------------------------------------

static void *g_temp;        // CUB's temp storage, allocated once in main
static size_t g_temp_bytes; // its size

static void reduce_max(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // nothing to compare: 0 by convention, no kernel
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    // TODO(exercise): call cub::DeviceReduce::Max with g_temp / g_temp_bytes (same n type as the query), check its cudaError_t
    CUDA_CHECK(cub::DeviceReduce::Max(g_temp, g_temp_bytes, d_in, d_out, n, 0)); // n: size_t, 64-bit offsets
    // END(exercise)
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"ex14_libraries", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    Input in = make_input(&opt);

    // The reference: the largest element (exact), 0 for an empty input.
    float *h = copy_input_to_host(&in);
    float mx = in.n ? h[0] : 0.0f;
    for (size_t i = 1; i < in.n; i++)
        if (h[i] > mx) mx = h[i];
    free(h);
    in.expected = mx;
    in.tol = -1.0; // exact

    // TODO(exercise): ask CUB how much temp storage Max needs for in.n (temp pointer NULL), then cudaMalloc g_temp once
    CUDA_CHECK(cub::DeviceReduce::Max(NULL, g_temp_bytes, in.d_in, (float *)NULL, in.n, 0)); // query: no work done
    CUDA_CHECK(cudaMalloc(&g_temp, g_temp_bytes > 0 ? g_temp_bytes : 1));
    // END(exercise)

    run_variant(&opt, &in, "cub_max", reduce_max);

    if (g_temp) CUDA_CHECK(cudaFree(g_temp));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
