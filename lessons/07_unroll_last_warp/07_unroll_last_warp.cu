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
 * form is a data race; compute-sanitizer racecheck reports it as warnings
 * (notes.md).
 *
 * The flaw that remains: the loop over s still computes, compares and
 * branches at run time. Lesson 08 fixes the block size at compile time.
 *
 *     make lesson07 && ./lesson07              # default n = 2^26, -b 256
 *     ./lesson07 -n 4097 -b 32 --check         # any size, any power-of-two block
 */
#include "harness.h"

#include <limits.h>

// ---- kernel ---------------------------------------------------------------

// The last six steps, run by all 32 lanes of warp 0 (threads 0..31). On
// entry sdata[0..63] holds 64 partial sums; returns the block's total in
// lane 0. Each step needs the results of only the lower lanes (16, then 8,
// 4, ...); the other lanes add too: cheaper than masking them off, and it
// keeps all 32 lanes at every __syncwarp.
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
    // the compiler cannot keep sdata in registers across it either. For
    // sm_90 the SASS shows each one as a NOP here (what that means: notes.md), but only
    // the barrier in the source makes the order a promise.
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

// Sums in[blockIdx.x * 2*blockDim.x ...] (2*blockDim.x elements, fewer in the
// last block) into out[blockIdx.x]. blockDim.x must be a power of two; the
// launch gives max(blockDim.x, 64) floats of dynamic shared memory: the warp
// part reads up to sdata[63], so a block of 32 threads gets 32 more slots.
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * (2 * blockDim.x) + tid; // size_t: passes 2^32 when n does
    // Lesson 06's first addition during the load.
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    sdata[tid] = v;
    if (blockDim.x < 64) sdata[tid + 32] = 0.0f; // a 32-thread block: zeros for the warp part
    __syncthreads(); // every slot is written before any thread reads a neighbour's

    // The tree as before, but it stops when 64 sums are left. For blocks of
    // 32 or 64 threads it does not run at all.
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s]; // reads [s, 2s), writes [0, s): no overlap
        // This step's sums are finished before the next step reads them. Every
        // thread reaches this barrier: the loop bounds are the same for all.
        __syncthreads();
    }

    // The new part: warp 0 finishes alone; warps 1.. are done and leave.
    if (tid < 32) {
        float total = warp_reduce(sdata, tid);
        if (tid == 0) out[blockIdx.x] = total;
    }
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
    size_t shared = (g_block < 64 ? 64 : g_block) * sizeof(float); // the warp part reads sdata[0..63]
    const float *src = d_in;
    int next = 0;
    for (;;) {
        // One block per 2 * g_block values. Only the first pass sees n itself;
        // run() made sure its block count fits in gridDim.x (2^31 - 1).
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

static const LessonInfo info = {"07_unroll_last_warp", BLOCK_RUNTIME, 256, NULL};

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
#ifdef CLASSIC_VOLATILE
    run_variant(&opt, &in, "volatile", reduce_gpu);
#else
    run_variant(&opt, &in, "syncwarp", reduce_gpu);
#endif
    CUDA_CHECK(cudaFree(g_partials[0]));
    CUDA_CHECK(cudaFree(g_partials[1]));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
