/*
 * Exercise 10: a shuffle block sum for ANY block size.
 *
 * Lesson 10's block sum assumes full warps: a compile-time BLOCK_SIZE that
 * is a multiple of 32, and FULL_MASK in every shuffle. A block of 100
 * threads has three full warps and a fourth of 4 lanes; lanes 4..31 of that
 * warp do not exist. A shuffle's mask (the lanes that take part) must name
 * only lanes that exist and call it, and every lane must read from a lane
 * its mask names: a value read from any other lane is undefined, even one
 * that is then thrown away (NVIDIA's CUDA C++ Guidelines for robust and
 * safety-critical programming, rules 2.1 and 2.3). Write block_sum() for
 * every blockDim.x from 1 to 1024: each warp adds its own lanes with
 * shuffles, one shared slot per warp, warp 0 adds the slots with shuffles.
 * No shared-memory tree. (-b takes a power of two, 32 to 1024, as
 * everywhere; the other block sizes are the fixed lines below.)
 *
 * Lines (one per check, for each size and input: its name, n, time or "check
 * only", PASS or FAIL): "shfl" at the -b block size (default 256; timed
 * unless --check), then check-only lines at block sizes -b cannot take,
 * most leaving a warp partly empty: b=1, b=17, b=33, b=100, b=480 (15 full
 * warps: warp 0 reads 15 slots), b=1000, b=1023.
 *
 *     make exercise10 && ./exercise10     # FAILs until block_sum is written
 *     make check E=10                     # every size, input, block size, sanitizers
 */
#include "harness.h"

#define MAX_WARPS 32 // 1024 threads at most

// ---- kernel ---------------------------------------------------------------

// The sum of v over the blockDim.x threads of the block, valid in thread 0.
// Every thread of the block calls it, once per launch; blockDim.x is any
// number from 1 to 1024.
__device__ float block_sum(float v)
{
    // TODO(exercise): shuffles within each warp (only over lanes that exist), one shared slot per warp, shuffles in warp 0
    __shared__ float warp_sums[MAX_WARPS];
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const unsigned int warps = (blockDim.x + 31) / 32; // the last one may be partial
    // This warp's lanes: 32, or fewer in the last warp. The mask names
    // exactly those, and each lane reads only a lane that exists: where
    // lane + offset is past the last one, the lane reads its own value
    // (__shfl_sync takes any source lane) and leaves it out of the sum.
    unsigned int width = blockDim.x - warp * 32 < 32 ? blockDim.x - warp * 32 : 32;
    unsigned int mask = width == 32 ? 0xffffffffu : (1u << width) - 1u;
    for (unsigned int offset = 16; offset > 0; offset >>= 1) {
        bool has = lane + offset < width; // the lane `offset` above exists
        float other = __shfl_sync(mask, v, has ? lane + offset : lane);
        if (has) v += other;
    }
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads(); // every warp's slot is written before warp 0 reads them
    if (warp == 0) {
        // Warp 0 has min(blockDim.x, 32) lanes: the same mask and width as
        // above. Lanes past the last warp's slot start from 0.
        v = lane < warps ? warp_sums[lane] : 0.0f;
        for (unsigned int offset = 16; offset > 0; offset >>= 1) {
            bool has = lane + offset < width;
            float other = __shfl_sync(mask, v, has ? lane + offset : lane);
            if (has) v += other;
        }
    }
    return v;
    // END(exercise)
}

// Pass 1: grid-stride over the input; one partial per block.
__global__ void reduce_kernel(const float *in, size_t n, float *partials)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) sum += in[i];
    sum = block_sum(sum); // every thread gets here: the loop only ran fewer times for some
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// Pass 2, one block: the partials.
__global__ void reduce_partials_kernel(const float *partials, unsigned int count, float *out)
{
    float sum = 0.0f;
    for (unsigned int i = threadIdx.x; i < count; i += blockDim.x) sum += partials[i];
    sum = block_sum(sum);
    if (threadIdx.x == 0) *out = sum;
}

// ---- launch ---------------------------------------------------------------

static int g_block;        // threads per block of the current line
static int g_max_blocks;   // SMs x resident blocks per SM, for g_block
static float *g_partials;  // one partial per block of pass 1

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // nothing to add: the sum is 0 and no kernel is launched
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    const size_t wanted = (n + g_block - 1) / g_block; // no block without an element
    const int blocks = wanted < (size_t)g_max_blocks ? (int)wanted : g_max_blocks;
    reduce_kernel<<<blocks, g_block>>>(d_in, n, g_partials);
    CUDA_CHECK_LAST();
    reduce_partials_kernel<<<1, g_block>>>(g_partials, (unsigned int)blocks, d_out); // after pass 1: same stream
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"ex10_warp_shuffle", BLOCK_RUNTIME, 256, NULL};

// Block sizes -b cannot take (all but 480 leave a warp partly empty), each checked on every run.
static const int odd_blocks[] = {1, 17, 33, 100, 480, 1000, 1023};
#define ODD_COUNT (int)(sizeof odd_blocks / sizeof odd_blocks[0])

static void set_block(int b)
{
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_kernel, b, 0));
    if (per_sm < 1) per_sm = 1;
    g_block = b;
    g_max_blocks = g_dev.sm_count * per_sm;
}

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    Input in = make_input(&opt);
    // Enough partials for the most blocks any of the block sizes can have.
    int most = 0;
    for (int k = -1; k < ODD_COUNT; k++) {
        set_block(k < 0 ? opt.block : odd_blocks[k]);
        if (g_max_blocks > most) most = g_max_blocks;
    }
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)most * sizeof(float)));

    set_block(opt.block);
    run_variant(&opt, &in, "shfl", reduce_gpu);

    Options once = opt;
    once.check_only = 1; // checks, not speeds: the timing is the line above's
    static char names[ODD_COUNT][16];
    for (int k = 0; k < ODD_COUNT; k++) {
        snprintf(names[k], sizeof names[k], "b=%d", odd_blocks[k]);
        set_block(odd_blocks[k]);
        run_variant(&once, &in, names[k], reduce_gpu);
    }

    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
