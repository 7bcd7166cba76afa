/*
 * Lesson 07: the last six steps of the tree run inside one warp, without
 * block-wide barriers.
 *
 * What changed since lesson 06: the tree loop stops once 64 sums are left
 * (s > 32). From there on only warp 0 works, and a warp can synchronise
 * itself: the steps s = 32, 16, 8, 4, 2, 1 are written out one by one with
 * __syncwarp() between them instead of __syncthreads().
 *
 * Build with -DCLASSIC_VOLATILE for the form found in older tutorials: a
 * volatile pointer and no synchronisation at all. Since Volta (sm_70) that
 * form is a data race; compute-sanitizer racecheck reports it (notes.md).
 *
 * The flaw that remains: the loop over s still computes, compares and
 * branches at run time. Lesson 08 fixes the block size at compile time.
 *
 *     make lesson07 && ./lesson07            # default n = 2^26, 256 threads per block
 *     ./lesson07 -n 4097 -b 32 --check       # any n, any power-of-two block 32..1024
 */
#include "harness.h"

// ---- kernel ---------------------------------------------------------------

// max(blockDim.x, 64) floats, sized at launch: the warp part reads up to
// sdata[63], so a block of 32 threads gets 32 more slots, set to zero.
extern __shared__ float sdata[];

// The last six steps, run by all 32 lanes of warp 0 (threads 0..31). On
// entry sdata[0..63] holds 64 partial sums; returns the block's total in
// lane 0. Lanes 16..31 compute sums nobody uses: letting them work is
// cheaper than masking them off, and keeps all 32 lanes at every __syncwarp.
__device__ float warp_reduce(float *sdata, unsigned int tid)
{
#ifdef CLASSIC_VOLATILE
    // The 2007 form: volatile makes each += read and write shared memory
    // instead of a register, and it assumes that the 32 lanes move in
    // lockstep, so lane 0 cannot read sdata[16] before lane 16 has written
    // it. Since Volta each lane has its own program counter and the warp
    // may split; nothing orders lane 16's write before lane 0's read. A race.
    volatile float *vs = sdata;
    vs[tid] += vs[tid + 32];
    vs[tid] += vs[tid + 16];
    vs[tid] += vs[tid + 8];
    vs[tid] += vs[tid + 4];
    vs[tid] += vs[tid + 2];
    vs[tid] += vs[tid + 1];
    return vs[tid];
#else
    // Race-free: each step reads into a register, waits, writes, waits.
    // __syncwarp() is a barrier and a memory fence for the warp's lanes, so
    // the compiler cannot keep sdata in registers across it either.
    float v = sdata[tid] + sdata[tid + 32]; // both written before the last __syncthreads()
    sdata[tid] = v;
    __syncwarp(); // every lane's step-32 sum is in sdata before anyone reads it
    v += sdata[tid + 16];
    __syncwarp(); // every lane has read its neighbour before any lane overwrites its slot
    sdata[tid] = v;
    __syncwarp(); // step-16 sums written before step 8 reads them
    v += sdata[tid + 8];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 4];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 2];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 1]; // last read: nothing writes after it, no barrier needed
    return v;
#endif
}

// out[blockIdx.x] = the sum of this block's span in[b*2B, b*2B + 2B) below n.
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    const unsigned int tid = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * (2 * blockDim.x) + tid;

    float v = 0.0f; // lesson 06's first add during load
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    sdata[tid] = v;
    if (blockDim.x < 64) sdata[tid + 32] = 0.0f; // a 32-thread block: zeros for the warp part's upper half
    __syncthreads(); // every slot written before any thread reads another's

    // The tree as before, but it stops when 64 sums are left. For blocks of
    // 32 or 64 threads it does not run at all.
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads(); // step s complete before step s/2 reads its sums
    }

    // The new part: one warp finishes alone; warps 1.. are done and leave.
    if (tid < 32) {
        const float total = warp_reduce(sdata, tid);
        if (tid == 0) out[blockIdx.x] = total;
    }
}

// ---- launch ---------------------------------------------------------------

static int g_block;            // threads per block, from -b
static float *g_partials[2];   // the passes write their partial sums here, in turn

// Blocks needed for count elements: each block takes 2 * g_block of them.
static size_t blocks_for(size_t count)
{
    const size_t per_block = 2 * (size_t)g_block;
    return (count + per_block - 1) / per_block;
}

// Pass after pass (ping-pong between two buffers) until one block is enough;
// that last pass writes *d_out.
static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // nothing to add: the sum is 0 and no kernel is launched
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    // The warp part reads sdata[0..63] even when the block has 32 threads.
    const size_t smem = (g_block < 64 ? 64 : g_block) * sizeof(float);
    const float *src = d_in;
    size_t count = n;
    int which = 0;
    for (;;) {
        const size_t blocks = blocks_for(count);
        float *dst = blocks == 1 ? d_out : g_partials[which];
        reduce_kernel<<<(unsigned int)blocks, g_block, smem>>>(src, count, dst);
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
    const LessonInfo info = {"07_unroll_last_warp", BLOCK_RUNTIME, 256, NULL};
    Options opt;
    parse_options(argc, argv, &opt, &info);
    g_block = opt.block;

    const size_t first = blocks_for(opt.n), second = blocks_for(first);
    Input in = make_input_extra(&opt, (first + second + 2) * sizeof(float));
    CUDA_CHECK(cudaMalloc((void **)&g_partials[0], (first + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_partials[1], (second + 1) * sizeof(float)));

#ifdef CLASSIC_VOLATILE
    run_variant(&opt, &in, "volatile", reduce_gpu);
#else
    run_variant(&opt, &in, "syncwarp", reduce_gpu);
#endif

    CUDA_CHECK(cudaFree(g_partials[0]));
    CUDA_CHECK(cudaFree(g_partials[1]));
    free_input(&in);
    return harness_exit_code();
}
