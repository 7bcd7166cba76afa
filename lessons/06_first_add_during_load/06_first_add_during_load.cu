/*
 * Lesson 06: each thread adds two elements while it loads them.
 *
 * What changed since lesson 05: a block of B threads now covers 2*B elements.
 * Thread tid of block b loads elements b*2B + tid and b*2B + tid + B, adds
 * them in a register and stores only that sum in shared memory. The tree is
 * lesson 05's, untouched; the grid has half as many blocks.
 *
 * Why it pays: in lesson 05 half of every block's threads loaded one element,
 * stored it, and had no addition to do, yet their warps still issued every
 * step of the tree (the `if` is predicated, not branched around). Now every
 * thread does one useful addition on its way in, and the same input needs
 * half the blocks: half the tree steps and half the barriers per element.
 *
 * The flaw that remains: the tree's last six steps (s = 32 down to 1) run
 * inside one warp, yet each still waits at a barrier for the whole block.
 * Lesson 07 drops those barriers.
 *
 *     make lesson06 && ./lesson06              # default n = 2^26, -b 256
 *     ./lesson06 -n 2^20+3 -b 64 --check       # any size, any power-of-two block
 */
#include "harness.h"

#include <limits.h>

// ---- kernel ---------------------------------------------------------------

// Sums in[blockIdx.x * 2*blockDim.x ...] (2*blockDim.x elements, fewer in the
// last block) into out[blockIdx.x]. blockDim.x must be a power of two; the
// launch gives blockDim.x floats of dynamic shared memory.
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * (2 * blockDim.x) + tid; // size_t: passes 2^32 when n does
    // The new part: the tree's first addition, done in a register on the way
    // in. Each load has its own guard: the last block may hold only part of
    // its span, even less than its first half (past n: 0, as before). Both
    // loads are coalesced: neighbouring threads read neighbouring addresses.
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    sdata[tid] = v;
    __syncthreads(); // every slot is written before any thread reads a neighbour's

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s]; // reads [s, 2s), writes [0, s): no overlap
        // This step's sums are finished before the next step reads them. Every
        // thread reaches this barrier: the loop bounds are the same for all.
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// ---- launch ---------------------------------------------------------------

static int g_block;              // threads per block, from -b
static float *g_partials[2];     // scratch for the partial sums of each pass

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the sum of nothing is 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    size_t shared = g_block * sizeof(float);
    const float *src = d_in;
    int next = 0;
    for (;;) {
        // One block per 2 * g_block values: half of lesson 05's blocks. Only
        // the first pass sees n itself; run() made sure its block count fits
        // in gridDim.x (2^31 - 1).
        size_t blocks = (n + 2 * (size_t)g_block - 1) / (2 * (size_t)g_block);
        // The last pass (one block) writes the answer. Earlier passes write
        // into the scratch buffer that this pass is not reading: in place,
        // block b would overwrite slot b while another block still reads it.
        float *dst = blocks == 1 ? d_out : g_partials[next];
        reduce_kernel<<<(unsigned int)blocks, g_block, shared>>>(src, n, dst);
        CUDA_CHECK_LAST();
        if (blocks == 1) return;
        src = dst; // the next pass sums these partials (same stream: in order)
        n = blocks;
        next ^= 1;
    }
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"06_first_add_during_load", BLOCK_RUNTIME, 256, NULL};

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
    run_variant(&opt, &in, "add_load", reduce_gpu);
    CUDA_CHECK(cudaFree(g_partials[0]));
    CUDA_CHECK(cudaFree(g_partials[1]));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
