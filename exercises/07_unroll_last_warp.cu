/*
 * Exercise 07: find the race in the classic last-warp code, then remove it
 * with as few __syncwarp() as you can.
 *
 * Older tutorials end the tree with six lines on a volatile pointer and no
 * synchronisation at all: warp_reduce() below, as shipped. They assume that
 * the 32 lanes of a warp move in lockstep. Since Volta (sm_70) every lane has
 * its own program counter, the warp may split at any time, and nothing
 * orders lane 16's write before lane 0's read: a race.
 *
 *   1. See it:  compute-sanitizer --tool racecheck ./exercise07 -n 4097 --check
 *   2. Fix it:  rewrite warp_reduce() so that racecheck reports no hazard.
 *               Lesson 07 needs nine __syncwarp(); with six steps through
 *               shared memory, five will do (one between each two):
 *               sdata[64..127] is free for you to use.
 *
 * Lines (one per check, for each size and input: its name, n, time or "check
 * only", PASS or FAIL): "sum" is the input (timed, unless --check);
 * "split_warp" runs the same kernel with warp 0's odd lanes entering
 * warp_reduce() first and its even lanes a moment later, from another
 * branch: the split that the hardware may make at any time, made every
 * time. Code that relies on lockstep gets a wrong sum there; code that
 * synchronises does not.
 *
 *     make exercise07 && ./exercise07     # FAILs until warp_reduce is race-free
 *     make check E=07                     # every size, input, block size; racecheck
 */
#include "harness.h"

#include <limits.h>

// ---- kernel ---------------------------------------------------------------

// The last six steps (32, 16, 8, 4, 2, 1), run by all 32 lanes of warp 0
// (threads 0..31), the only threads still running. On entry sdata[0..63]
// holds 64 partial sums, all written before a __syncthreads(); sdata[64..127]
// is free scratch. Returns the block's total in lane 0.
__device__ float warp_reduce(float *sdata, unsigned int tid)
{
    // TODO(exercise): the same six steps without a data race: __syncwarp() where one lane's write must come before another lane's read or write
    // As shipped: the form found in older tutorials. volatile makes every
    // access go to shared memory; nothing orders one lane's write before
    // another lane's read.
    volatile float *vs = sdata;
    vs[tid] += vs[tid + 32];
    vs[tid] += vs[tid + 16];
    vs[tid] += vs[tid + 8];
    vs[tid] += vs[tid + 4];
    vs[tid] += vs[tid + 2];
    vs[tid] += vs[tid + 1];
    return vs[tid];
    // END(exercise)
}

// The split of the second line: odd lanes and even lanes call warp_reduce()
// through two different functions, so that they cannot share one call.
__device__ __noinline__ float warp_reduce_odd(float *sdata, unsigned int tid) { return warp_reduce(sdata, tid); }
__device__ __noinline__ float warp_reduce_even(float *sdata, unsigned int tid)
{
#if __CUDA_ARCH__ >= 700
    __nanosleep(2000); // the even lanes arrive late
#endif
    return warp_reduce(sdata, tid);
}

// Sums in[blockIdx.x * 2*blockDim.x ...] (2*blockDim.x elements, fewer in the
// last block) into out[blockIdx.x]: lesson 07's kernel. blockDim.x must be a
// power of two; the launch gives max(blockDim.x, 128) floats of dynamic
// shared memory. split: warp 0 enters warp_reduce() in two groups.
__global__ void reduce_kernel(const float *in, size_t n, float *out, int split)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * (2 * blockDim.x) + tid; // size_t: passes 2^32 when n does
    float v = 0.0f; // lesson 06's first addition during the load
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    sdata[tid] = v;
    if (blockDim.x < 64) sdata[tid + 32] = 0.0f; // a 32-thread block: zeros for the warp part
    __syncthreads(); // every slot is written before any thread reads a neighbour's

    // The tree stops when 64 sums are left (at once for blocks of 32 or 64).
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s]; // reads [s, 2s), writes [0, s): no overlap
        __syncthreads(); // this step's sums finished before the next step reads them
    }

    // Warp 0 finishes alone; warps 1.. are done and leave.
    if (tid < 32) {
        float total;
        if (!split)
            total = warp_reduce(sdata, tid);
        else if (tid & 1)
            total = warp_reduce_odd(sdata, tid);
        else
            total = warp_reduce_even(sdata, tid);
        if (tid == 0) out[blockIdx.x] = total;
    }
}

// ---- launch ---------------------------------------------------------------

static int g_block;              // threads per block, from -b
static float *g_partials[2];     // scratch for the partial sums of each pass
static int g_split;              // the second line: warp 0 split in two

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the sum of nothing is 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    size_t shared = (g_block < 128 ? 128 : g_block) * sizeof(float); // the warp part may use sdata[0..127]
    const float *src = d_in;
    int next = 0;
    for (;;) {
        // One block per 2 * g_block values. Only the first pass sees n itself;
        // run() made sure its block count fits in gridDim.x (2^31 - 1).
        size_t blocks = (n + 2 * (size_t)g_block - 1) / (2 * (size_t)g_block);
        // The last pass (one block) writes the answer. Earlier passes write
        // into the scratch buffer that this pass is not reading.
        float *dst = blocks == 1 ? d_out : g_partials[next];
        reduce_kernel<<<(unsigned int)blocks, g_block, shared>>>(src, n, dst, g_split);
        CUDA_CHECK_LAST();
        if (blocks == 1) return;
        src = dst; // the next pass sums these partials (same stream: in order)
        n = blocks;
        next ^= 1;
    }
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"ex07_unroll_last_warp", BLOCK_RUNTIME, 256, NULL};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    g_block = opt.block;
    // First pass: one block per 2 * g_block elements; gridDim.x can be at most 2^31 - 1.
    size_t p0 = (opt.n + 2 * (size_t)g_block - 1) / (2 * (size_t)g_block); // partials written by pass 1
    if (p0 > (size_t)INT_MAX) {
        fprintf(stderr, "%s: -n %zu needs more than 2^31-1 blocks of %d threads\n", g_prog, opt.n, g_block);
        return 2;
    }
    size_t p1 = (p0 + 2 * (size_t)g_block - 1) / (2 * (size_t)g_block); // written by pass 2; later passes write fewer
    Input in = make_input_extra(&opt, (p0 + p1 + 2) * sizeof(float));
    // Pass 1 writes buffer 0, pass 2 buffer 1, pass 3 buffer 0 again, ...
    CUDA_CHECK(cudaMalloc((void **)&g_partials[0], (p0 + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_partials[1], (p1 + 1) * sizeof(float)));

    g_split = 0;
    run_variant(&opt, &in, "sum", reduce_gpu);
    g_split = 1;
    Options once = opt;
    once.check_only = 1; // a check, not a speed: the timing is the line above's
    run_variant(&once, &in, "split_warp", reduce_gpu);

    CUDA_CHECK(cudaFree(g_partials[0]));
    CUDA_CHECK(cudaFree(g_partials[1]));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
