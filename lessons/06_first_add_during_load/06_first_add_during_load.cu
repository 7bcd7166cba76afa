/*
 * Lesson 06: each thread adds two elements while it loads them.
 *
 * What changed since lesson 05: a block of B threads now covers 2*B elements.
 * Thread tid of block b loads elements b*2B + tid and b*2B + tid + B, adds
 * them in a register and stores only that sum in shared memory. The tree is
 * lesson 05's, untouched; the grid has half as many blocks.
 *
 * Why it pays: in lesson 05 half of every block's threads loaded one element,
 * stored it, and dropped out at the tree's first step. Now every thread does
 * one useful addition on its way in, and the same work needs half the blocks,
 * so half the barriers and half the tree steps per element.
 *
 * The flaw that remains: the tree's last six steps (s = 32 down to 1) run
 * inside one warp, yet each still waits at a barrier for the whole block.
 * Lesson 07 drops those barriers.
 *
 *     make lesson06 && ./lesson06            # default n = 2^26, 256 threads per block
 *     ./lesson06 -n 2^20+3 -b 64 --check     # any n, any power-of-two block 32..1024
 */
#include "harness.h"

// ---- kernel ---------------------------------------------------------------

extern __shared__ float sdata[]; // blockDim.x floats, sized at launch

// out[blockIdx.x] = the sum of this block's span in[b*2B, b*2B + 2B), the
// part of it below n. Any n: a missing element counts as 0.
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    const unsigned int tid = threadIdx.x;
    // size_t: blockIdx.x * 2 * blockDim.x overflows 32 bits on large inputs.
    const size_t i = (size_t)blockIdx.x * (2 * blockDim.x) + tid;

    // The new part: the tree's first addition, done in a register on the way
    // in. Each load has its own guard: the last block may hold only part of
    // its span, perhaps less than its first half. Both loads are coalesced:
    // neighbouring threads read neighbouring addresses.
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    sdata[tid] = v;
    __syncthreads(); // every slot written before any thread reads another's

    // Lesson 05's tree, unchanged: sequential addressing, no bank conflicts.
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads(); // step s complete before step s/2 reads its sums
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// ---- launch ---------------------------------------------------------------

static int g_block;            // threads per block, from -b
static float *g_partials[2];   // the passes write their partial sums here, in turn

// Blocks needed for count elements: each block now takes 2 * g_block of them.
static size_t blocks_for(size_t count)
{
    const size_t per_block = 2 * (size_t)g_block;
    return (count + per_block - 1) / per_block;
}

// Pass after pass until one block is enough; that last pass writes *d_out.
// The passes read one buffer and write the other (ping-pong), so no pass
// reads what it is overwriting.
static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // nothing to add: the sum is 0 and no kernel is launched
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    const float *src = d_in;
    size_t count = n;
    int which = 0;
    for (;;) {
        const size_t blocks = blocks_for(count); // well below 2^31 for any n that fits in memory
        float *dst = blocks == 1 ? d_out : g_partials[which];
        reduce_kernel<<<(unsigned int)blocks, g_block, g_block * sizeof(float)>>>(src, count, dst);
        CUDA_CHECK_LAST();
        if (blocks == 1) return;
        src = dst;
        count = blocks;
        which ^= 1;
    }
}

// ---- main -----------------------------------------------------------------

int main(int argc, char **argv)
{
    const LessonInfo info = {"06_first_add_during_load", BLOCK_RUNTIME, 256, NULL};
    Options opt;
    parse_options(argc, argv, &opt, &info);
    g_block = opt.block;

    // Pass 1 writes blocks_for(n) partials, pass 2 blocks_for(that); every
    // later pass writes fewer, into whichever of the two buffers it reuses.
    const size_t first = blocks_for(opt.n), second = blocks_for(first);
    Input in = make_input_extra(&opt, (first + second + 2) * sizeof(float));
    CUDA_CHECK(cudaMalloc((void **)&g_partials[0], (first + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_partials[1], (second + 1) * sizeof(float)));

    run_variant(&opt, &in, "add_load", reduce_gpu);

    CUDA_CHECK(cudaFree(g_partials[0]));
    CUDA_CHECK(cudaFree(g_partials[1]));
    free_input(&in);
    return harness_exit_code();
}
