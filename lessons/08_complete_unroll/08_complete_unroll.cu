/*
 * Lesson 08: the block size is a compile-time constant.
 *
 * What changed since lesson 07: BLOCK_SIZE, a #define, replaces blockDim.x
 * and the -b option. Nothing else does: the tree is lesson 07's loop, word
 * for word. But its start, BLOCK_SIZE / 2, is now known to the compiler, so
 * the loop has a constant trip count (two steps for 256 threads), and the
 * compiler writes it out step by step: no counter, no shift, no compare of s
 * and no branch back are left (notes.md shows the SASS). Shared memory
 * becomes a static array of known size. The warp part is lesson 07's race-free one
 * (the volatile form stays in lesson 07). For another block size, edit
 * BLOCK_SIZE and rebuild; -b must equal it.
 *
 * The flaw that remains: each thread still loads just two elements, and the
 * sum takes several passes. Lesson 09 lets every thread add many elements
 * first, so that two passes are enough.
 *
 *     make lesson08 && ./lesson08              # default n = 2^26, BLOCK_SIZE 256
 *     ./lesson08 -n 65537 -d uniform --check   # any size
 */
#include "harness.h"

#include <limits.h>

#define BLOCK_SIZE 256 // threads per block: a power of two, 32..1024

#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || (BLOCK_SIZE & (BLOCK_SIZE - 1)) != 0
#error "BLOCK_SIZE must be a power of two in 32..1024"
#endif
// Lesson 07's last six steps, at the bottom of the file.
static __device__ float warp_reduce(float *sdata, unsigned int tid);

// ---- kernel ---------------------------------------------------------------

// Sums in[blockIdx.x * 2*BLOCK_SIZE ...] (2*BLOCK_SIZE elements, fewer in the
// last block) into out[blockIdx.x]. Launched with BLOCK_SIZE threads.
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    // The size is known now: a static array. The warp part reads up to
    // sdata[63], so a block of 32 threads gets 32 more slots.
    __shared__ float sdata[BLOCK_SIZE < 64 ? 64 : BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * (2 * BLOCK_SIZE) + tid; // size_t: passes 2^32 when n does
    // Lesson 06's first addition during the load.
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + BLOCK_SIZE < n) v += in[i + BLOCK_SIZE];
    sdata[tid] = v;
    if (BLOCK_SIZE < 64) sdata[tid + 32] = 0.0f; // a 32-thread block: zeros for the warp part
    __syncthreads(); // every slot is written before any thread reads a neighbour's

    // Lesson 07's tree, word for word, but s now starts at a constant: the
    // compiler knows every value s takes (128, 64 for 256 threads), so it
    // writes the steps out one after the other, each with its own constant
    // offset, and no loop is left. For blocks of 32 or 64 threads, no step.
    for (unsigned int s = BLOCK_SIZE / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s]; // reads [s, 2s), writes [0, s): no overlap
        // This step's sums are finished before the next step reads them. Every
        // thread reaches this barrier: the loop bounds are the same for all.
        __syncthreads();
    }

    // Lesson 07's last six steps: warp 0 finishes alone; warps 1.. leave.
    if (tid < 32) {
        float total = warp_reduce(sdata, tid);
        if (tid == 0) out[blockIdx.x] = total;
    }
}

// ---- launch ---------------------------------------------------------------

static float *g_partials[2];     // scratch for the partial sums of each pass

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the sum of nothing is 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    const float *src = d_in;
    int next = 0;
    for (;;) {
        // One block per 2 * BLOCK_SIZE values. Only the first pass sees n itself;
        // run() made sure its block count fits in gridDim.x (2^31 - 1).
        size_t blocks = (n + 2 * (size_t)BLOCK_SIZE - 1) / (2 * (size_t)BLOCK_SIZE);
        // The last pass (one block) writes the answer. Earlier passes write
        // into the scratch buffer that this pass is not reading: in place,
        // block b would overwrite slot b while another block still reads it.
        float *dst = blocks == 1 ? d_out : g_partials[next];
        reduce_kernel<<<(unsigned int)blocks, BLOCK_SIZE>>>(src, n, dst);
        CUDA_CHECK_LAST();
        if (blocks == 1) return;
        src = dst; // the next pass sums these partials (same stream: in order)
        n = blocks;
        next ^= 1;
    }
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"08_complete_unroll", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    // First pass: one block per 2 * BLOCK_SIZE elements; gridDim.x can be at most 2^31 - 1.
    size_t p0 = (opt.n + 2 * (size_t)BLOCK_SIZE - 1) / (2 * (size_t)BLOCK_SIZE); // partials written by pass 1
    if (p0 > (size_t)INT_MAX) {
        fprintf(stderr, "%s: -n %zu needs more than 2^31-1 blocks of %d threads\n", g_prog, opt.n, BLOCK_SIZE);
        return 2;
    }
    size_t p1 = (p0 + 2 * (size_t)BLOCK_SIZE - 1) / (2 * (size_t)BLOCK_SIZE); // written by pass 2; later passes write fewer
    Input in = make_input_extra(&opt, (p0 + p1 + 2) * sizeof(float));
    // Pass 1 writes buffer 0, pass 2 buffer 1, pass 3 buffer 0 again, ...
    CUDA_CHECK(cudaMalloc((void **)&g_partials[0], (p0 + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_partials[1], (p1 + 1) * sizeof(float)));
    run_variant(&opt, &in, "unrolled", reduce_gpu);
    CUDA_CHECK(cudaFree(g_partials[0]));
    CUDA_CHECK(cudaFree(g_partials[1]));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }

// ---- unchanged from lesson 07 ---------------------------------------------

// Lesson 07's __syncwarp() form, without its CLASSIC_VOLATILE alternative
// (that demonstration stays in lesson 07).
// The last six steps, run by all 32 lanes of warp 0 (threads 0..31). On
// entry sdata[0..63] holds 64 partial sums; returns the block's total in
// lane 0. Each step needs the results of only the lower lanes (16, then 8,
// 4, ...); the other lanes add too: cheaper than masking them off, and it
// keeps all 32 lanes at every __syncwarp.
__device__ float warp_reduce(float *sdata, unsigned int tid)
{
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
}
