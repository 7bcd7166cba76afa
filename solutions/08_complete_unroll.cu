/*
 * Exercise 08: the completely unrolled tree for a block of 384 threads.
 *
 * Lesson 08 wrote the tree out for power-of-two block sizes. A block size
 * should be a multiple of 32 (whole warps), and 384 threads (12 warps) is a common
 * choice; but halving from the top no longer works: 384 / 2 = 192, and
 * halving 192 never reaches 64. Derive the block-level steps for 384 threads
 * yourself: which threads add which slots at each step, and where the
 * barriers go, until the 64 sums that lesson 07's warp part expects are
 * left. Everything else, the first add during load included, is lesson 08.
 * Then count the bar.sync in the PTX: could your steps use fewer barriers?
 *
 *     make exercise08 && ./exercise08     # FAILs until the TODO is done
 *     make check E=08                     # every size and input
 *     nvcc -ptx -arch=sm_90 -std=c++17 -Icommon -o ex08.ptx exercises/08_complete_unroll.cu
 */
#include "harness.h"

#include <limits.h>

#define BLOCK_SIZE 384 // threads per block: 12 warps, not a power of two

#if BLOCK_SIZE != 384
#error "the steps of this exercise are derived for BLOCK_SIZE 384"
#endif

// ---- kernel ---------------------------------------------------------------

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

// Sums in[blockIdx.x * 2*BLOCK_SIZE ...] (2*BLOCK_SIZE elements, fewer in the
// last block) into out[blockIdx.x]. Launched with BLOCK_SIZE threads.
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * (2 * BLOCK_SIZE) + tid; // size_t: passes 2^32 when n does
    // Lesson 06's first addition during the load.
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + BLOCK_SIZE < n) v += in[i + BLOCK_SIZE];
    sdata[tid] = v;
    __syncthreads(); // every slot is written before any thread reads a neighbour's

    // TODO(exercise): the block-level steps for 384 threads, down to 64 sums in sdata[0..63], each step followed by a __syncthreads() that every thread reaches
    // 384 = 3 x 128: threads 0..127 each add three slots, tid, tid + 128 and
    // tid + 256, in one step; nothing they read is written in it, so one
    // barrier covers the step. 128 sums are left; lesson 08's last block step
    // follows.
    if (tid < 128) sdata[tid] += sdata[tid + 128] + sdata[tid + 256];
    __syncthreads(); // the 128 sums written before the next step reads 64..127
    if (tid < 64) sdata[tid] += sdata[tid + 64];
    __syncthreads(); // the 64 sums the warp part reads are complete
    // END(exercise)

    // Lesson 07's last six steps: warp 0 finishes alone.
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
        // One block per 2 * BLOCK_SIZE values. Only the first pass sees n
        // itself; run() made sure its block count fits in gridDim.x.
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

static const LessonInfo info = {"ex08_complete_unroll", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

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
    run_variant(&opt, &in, "unroll384", reduce_gpu);
    CUDA_CHECK(cudaFree(g_partials[0]));
    CUDA_CHECK(cudaFree(g_partials[1]));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
