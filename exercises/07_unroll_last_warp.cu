/*
 * Exercise 07: the unrolled last warp, for a maximum instead of a sum.
 *
 * Everything around it is lesson 07 with + turned into fmaxf and 0 turned
 * into -INFINITY, the identity of max (max(x, -inf) = x). The last six
 * steps, run by warp 0 alone, are yours: race-free, with __syncwarp() where
 * lanes hand values to each other through shared memory, as in lesson 07.
 *
 * The reference is the exact host maximum; a max never rounds, so the check
 * is exact for both kinds of input. n = 0 gives -INFINITY. Careful:
 * fmaxf(NaN, x) = x, so the NaN guards around the input cannot catch an
 * out-of-bounds read here as they do for a sum. Check your indices.
 *
 *     make exercise07 && ./exercise07                  # FAILs until the TODO is done
 *     ./exercise07 -n 1000 -b 32 --check               # try every -b from 32 to 1024
 *     compute-sanitizer --tool racecheck ./exercise07 -n 4097 --check   # 0 hazards
 *     diff exercises/07_unroll_last_warp.cu solutions/07_unroll_last_warp.cu
 */
#include "harness.h"

#include <limits.h>

// ---- kernel ---------------------------------------------------------------

// The maximum of in[blockIdx.x * 2*blockDim.x ...] (2*blockDim.x elements,
// fewer in the last block) into out[blockIdx.x]. blockDim.x must be a power
// of two; the launch gives max(blockDim.x, 64) floats of dynamic shared
// memory: the warp part reads up to sdata[63].
__global__ void max_kernel(const float *in, size_t n, float *out)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * (2 * blockDim.x) + tid; // size_t: passes 2^32 when n does
    // The first max during the load; past n: -INFINITY, which never wins.
    float v = -INFINITY;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v = fmaxf(v, in[i + blockDim.x]);
    sdata[tid] = v;
    if (blockDim.x < 64) sdata[tid + 32] = -INFINITY; // a 32-thread block: padding for the warp part
    __syncthreads(); // every slot is written before any thread reads a neighbour's

    // The tree stops when 64 maxima are left. For blocks of 32 or 64 threads
    // it does not run at all.
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] = fmaxf(sdata[tid], sdata[tid + s]); // reads [s, 2s), writes [0, s)
        // This step's maxima are finished before the next step reads them. Every
        // thread reaches this barrier: the loop bounds are the same for all.
        __syncthreads();
    }

    // Warp 0 finishes alone; warps 1.. are done and leave.
    if (tid < 32) {
        float m = -INFINITY;
        // TODO(exercise): the last six steps (32, 16, 8, 4, 2, 1) of the max, by the 32 lanes of warp 0 over sdata[0..63]; leave the block's maximum in m of lane 0. Hint: lesson 07's warp_reduce: read into a register, __syncwarp(), write, __syncwarp().
        // (stub: m stays -INFINITY, the maximum of nothing)
        // END(exercise)
        if (tid == 0) out[blockIdx.x] = m;
    }
}

// ---- launch ---------------------------------------------------------------

static int g_block;              // threads per block, from -b
static float *g_partials[2];     // scratch for the partial maxima of each pass

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the maximum of nothing is the identity, -INFINITY; nothing to launch
        static const float empty_max = -INFINITY;
        CUDA_CHECK(cudaMemcpyAsync(d_out, &empty_max, sizeof(float), cudaMemcpyHostToDevice, 0));
        return;
    }
    size_t shared = (g_block < 64 ? 64 : g_block) * sizeof(float); // the warp part reads sdata[0..63]
    const float *src = d_in;
    int next = 0;
    for (;;) {
        // One block per 2 * g_block values. Only the first pass sees n itself;
        // main() made sure its block count fits in gridDim.x (2^31 - 1).
        size_t blocks = (n + 2 * (size_t)g_block - 1) / (2 * (size_t)g_block);
        // The last pass (one block) writes the answer. Earlier passes write
        // into the scratch buffer that this pass is not reading: in place,
        // block b would overwrite slot b while another block still reads it.
        float *dst = blocks == 1 ? d_out : g_partials[next];
        max_kernel<<<(unsigned int)blocks, g_block, shared>>>(src, n, dst);
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
        fprintf(stderr, "%s: -n %zu needs more than 2^31-1 blocks of %d threads\n", info.lesson, opt.n, g_block);
        return 2;
    }
    size_t p1 = (p0 + 2 * (size_t)g_block - 1) / (2 * (size_t)g_block); // written by pass 2; later passes write fewer
    Input in = make_input_extra(&opt, (p0 + p1 + 2) * sizeof(float));
    // Pass 1 writes buffer 0, pass 2 buffer 1, pass 3 buffer 0 again, ...
    CUDA_CHECK(cudaMalloc((void **)&g_partials[0], (p0 + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_partials[1], (p1 + 1) * sizeof(float)));
    // The reference: the exact maximum of a host copy of the input.
    float *h = copy_input_to_host(&in);
    float ref = -INFINITY;
    for (size_t k = 0; k < in.n; k++)
        if (h[k] > ref) ref = h[k];
    free(h);
    in.expected = ref;
    in.tol = -1.0; // exact: in any order, a max returns one of the inputs
    run_variant(&opt, &in, "max", reduce_gpu);
    CUDA_CHECK(cudaFree(g_partials[0]));
    CUDA_CHECK(cudaFree(g_partials[1]));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
