/*
 * Exercise 10: the shuffle reduction, accumulated in double.
 *
 * Lesson 10 adds floats: every partial sum rounds to 24 bits. Here every
 * thread converts its floats to double as it loads them, and the warps,
 * the block and pass 2 all add doubles; only the final result is rounded to
 * float, once. The partials between the passes are doubles too. Your part
 * is the warp sum for a double: __shfl_down_sync has an overload for
 * double (it moves the two 32-bit halves for you). Lesson 15 studies
 * accuracy at length; here, measure what double costs against lesson 10.
 *
 *     make exercise10 && ./exercise10                  # FAILs until the TODO is done
 *     ./exercise10 -n 1000 --check && ./exercise10 -n 2^20+3 -d uniform --check
 *     ./lesson10 -d uniform && ./exercise10 -d uniform # compare err and GB/s
 *     diff exercises/10_warp_shuffle.cu solutions/10_warp_shuffle.cu
 */
#include "harness.h"

#define BLOCK_SIZE 256 // threads per block: a multiple of 32, 32..1024
#define WARPS (BLOCK_SIZE / 32)
#define FULL_MASK 0xffffffffu // all 32 lanes take part in every shuffle below

#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || BLOCK_SIZE % 32 != 0
#error "BLOCK_SIZE must be a multiple of 32 in 32..1024"
#endif

// ---- kernel ---------------------------------------------------------------

// The sum of v over the 32 lanes of this warp, in lane 0. Called by all 32
// lanes of a warp together.
__device__ double warp_sum_double(double v)
{
    // TODO(exercise): the warp's sum of v in lane 0, with __shfl_down_sync on the double itself. Hint: lesson 10's warp_sum, with the type changed; all 32 lanes call it.
    for (int offset = 16; offset > 0; offset >>= 1) // constant trip count: fully unrolled
        v += __shfl_down_sync(FULL_MASK, v, offset); // the double overload: two 32-bit shuffles
    return v;
    // END(exercise)
}

// The block's total in thread 0 (the other threads get partial sums).
// Called by every thread of the block, once per launch.
__device__ double block_sum_double(double v)
{
    __shared__ double warp_sums[WARPS]; // one slot per warp
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum_double(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads(); // every warp's slot written before warp 0 reads them
    v = 0.0;
    if (warp == 0) {
        v = lane < WARPS ? warp_sums[lane] : 0.0; // lanes past WARPS add 0
        v = warp_sum_double(v); // all 32 lanes of warp 0 take part
    }
    return v;
}

// Pass 1: grid-stride over the floats, adding in double; one double partial
// per block.
__global__ void reduce_kernel(const float *in, size_t n, double *partials)
{
    const size_t stride = (size_t)gridDim.x * BLOCK_SIZE;
    double sum = 0.0;
    for (size_t i = (size_t)blockIdx.x * BLOCK_SIZE + threadIdx.x; i < n; i += stride)
        sum += (double)in[i];
    sum = block_sum_double(sum); // every thread gets here: the loop only ran fewer times for some
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// Pass 2, one block: the double partials; the total is rounded to float once.
__global__ void reduce_partials_kernel(const double *partials, int count, float *out)
{
    double sum = 0.0;
    for (int i = (int)threadIdx.x; i < count; i += BLOCK_SIZE)
        sum += partials[i];
    sum = block_sum_double(sum);
    if (threadIdx.x == 0) *out = (float)sum;
}

// ---- launch ---------------------------------------------------------------

static int g_max_blocks;      // SMs x resident blocks per SM (set in main)
static double *g_partials;    // one double partial per block of pass 1

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // nothing to add: the sum is 0 and no kernel is launched
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    const size_t wanted = (n + BLOCK_SIZE - 1) / BLOCK_SIZE; // no block without an element
    const int blocks = wanted < (size_t)g_max_blocks ? (int)wanted : g_max_blocks;

    reduce_kernel<<<blocks, BLOCK_SIZE>>>(d_in, n, g_partials);
    CUDA_CHECK_LAST();
    reduce_partials_kernel<<<1, BLOCK_SIZE>>>(g_partials, blocks, d_out); // after pass 1: same stream
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"ex10_warp_shuffle", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    Input in = make_input(&opt);

    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_kernel, BLOCK_SIZE, 0));
    if (per_sm < 1) per_sm = 1;
    g_max_blocks = g_dev.sm_count * per_sm;
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)g_max_blocks * sizeof(double)));

    run_variant(&opt, &in, "double", reduce_gpu);

    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
