/*
 * Lesson 10: warps add in registers with shuffles; one barrier per block.
 *
 * What changed since lesson 09: the shared-memory tree is gone. After the
 * grid-stride loop each warp adds its 32 sums with __shfl_down_sync: a lane
 * reads another lane's register directly, with no shared memory and no
 * barrier. Lane 0 of each warp parks the warp's sum in one shared slot, the
 * block waits once at __syncthreads(), and warp 0 adds those slots with the
 * same shuffles (block_sum). The loop, the grid, the two passes and
 * BLOCK_SIZE are lesson 09's: any n, above 2^31 too (size_t indices).
 *
 * The flaw that remains: each thread has two 4-byte loads in flight at a
 * time. To keep HBM busy an SM needs more bytes on their way than that
 * gives on an H200, and about as many on an H100 (Little's law, lesson 09's
 * notes); lesson 11 loads 16 bytes at once.
 *
 *     make lesson10 && ./lesson10              # default n = 2^26, BLOCK_SIZE 256
 *     ./lesson10 -n 2^31+5 --check             # above 2^31 (about 8.6 GB of device memory)
 */
#include "harness.h"

#define BLOCK_SIZE 256 // threads per block: a multiple of 32, 32..1024
#define WARPS (BLOCK_SIZE / 32)
#define FULL_MASK 0xffffffffu // all 32 lanes take part in every shuffle below

#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || BLOCK_SIZE % 32 != 0
#error "BLOCK_SIZE must be a multiple of 32 in 32..1024"
#endif

// ---- kernel ---------------------------------------------------------------

// The sum of v over the 32 lanes of this warp, in lane 0 (the other lanes
// end with partial sums). At each step lane k adds the value of lane
// k + offset: offsets 16, 8, 4, 2, 1 halve the live values, as the tree did,
// but register to register. __shfl_down_sync waits for the lanes FULL_MASK
// names, so all 32 must call it; a lane whose k + offset is past 31 gets its
// own value back, and that only lands in lanes whose sums nobody reads.
__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1) // constant trip count: fully unrolled
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

// The sum of v over the block, in thread 0. Every thread of the block must
// call it: all lanes of every warp shuffle, and all reach the barrier.
__device__ float block_sum(float v)
{
    __shared__ float warp_sums[WARPS]; // one slot per warp, not one per thread
    unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads(); // the one barrier: every warp's slot written before warp 0 reads them
    if (warp == 0) // the whole of warp 0: its 32 lanes shuffle together
        v = warp_sum(lane < WARPS ? warp_sums[lane] : 0.0f); // lanes past the last warp add 0
    // No second barrier: warp_sums is written once and read once per launch.
    return v;
}

// Sums into out[blockIdx.x] the elements this block's threads visit: thread
// t of block b adds in[b*2*BLOCK_SIZE + t] and the element BLOCK_SIZE after
// it, then the same pair one grid further on (2*BLOCK_SIZE*gridDim.x), and
// so on while below n. The grid covers [0, n) exactly once, whatever
// gridDim.x is; with gridDim.x = 1 one block adds it all.
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * (2 * BLOCK_SIZE) + tid; // size_t: passes 2^32 when n does
    // Lesson 09's grid-stride loop, two independent loads per round.
    size_t stride = (size_t)gridDim.x * (2 * BLOCK_SIZE);
    float v = 0.0f;
    for (; i < n; i += stride) {
        v += in[i];
        if (i + BLOCK_SIZE < n) v += in[i + BLOCK_SIZE]; // needs nothing from in[i]: both loads in flight
    }

    // The new part. Every thread reaches this line, however many rounds its
    // loop ran, so all 32 lanes of every warp take part in the shuffles.
    v = block_sum(v);
    if (tid == 0) out[blockIdx.x] = v;
}

// ---- launch ---------------------------------------------------------------

static int g_max_blocks;         // SMs x resident blocks per SM (set by run, for each option combination)
static float *g_partials;        // one partial per block of pass 1

// Exactly two passes for any n > 0.
static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the sum of nothing is 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    // A full GPU's worth of blocks, but none that would find no element at
    // all (small n: n = 1000 gets 2 blocks).
    size_t wanted = (n + 2 * (size_t)BLOCK_SIZE - 1) / (2 * (size_t)BLOCK_SIZE);
    int blocks = wanted < (size_t)g_max_blocks ? (int)wanted : g_max_blocks;

    // Pass 1: one partial per block.
    reduce_kernel<<<blocks, BLOCK_SIZE>>>(d_in, n, g_partials);
    CUDA_CHECK_LAST();
    // Pass 2: the same kernel as ONE block; its loop walks the partials (a
    // few per thread), its block_sum writes the result. Same stream: it
    // starts only after pass 1 has written every partial.
    reduce_kernel<<<1, BLOCK_SIZE>>>(g_partials, (size_t)blocks, d_out);
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"10_warp_shuffle", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    Input in = make_input(&opt); // also reads the SM count into g_dev
    // How many blocks of this kernel fit on one SM at once, given its
    // registers, shared memory and threads. More than SMs x that would only
    // queue behind the first wave; fewer would leave warp slots empty.
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_kernel, BLOCK_SIZE, 0));
    if (per_sm < 1) per_sm = 1;
    g_max_blocks = g_dev.sm_count * per_sm;
    if (!opt.csv)
        printf("grid: %d SMs x %d resident blocks = at most %d blocks of %d threads\n", g_dev.sm_count, per_sm,
               g_max_blocks, BLOCK_SIZE);
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)g_max_blocks * sizeof(float)));
    run_variant(&opt, &in, "shuffle", reduce_gpu);
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
