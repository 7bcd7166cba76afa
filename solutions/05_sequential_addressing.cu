/*
 * Exercise 05: two passes, always -- the last one is a single block that loops.
 *
 * Lesson 05's launcher relaunches its kernel on the partial sums until one
 * block is left: log_block(n) passes, each one more launch and one more round
 * trip through memory. Here the first pass stays as it is, and one launch of
 * ONE block finishes the job, however many partials there are: each of its
 * threads first adds up partials tid, tid + blockDim.x, tid + 2*blockDim.x,
 * ... in a register (a block-stride loop), then the block runs lesson 05's
 * tree over those per-thread sums. This is the step lesson 09 takes for every
 * block: many elements per thread before the tree.
 *
 *     make exercise05 && ./exercise05     # FAILs until you fill in the TODOs
 *     make check E=05                     # every size, input and block size
 */
#include "harness.h"

#include <limits.h>

// ---- kernel ---------------------------------------------------------------

// Sums in[blockIdx.x * blockDim.x ...] (blockDim.x elements, fewer in the last
// block) into out[blockIdx.x]. blockDim.x must be a power of two; the launch
// gives blockDim.x floats of dynamic shared memory.
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + tid; // size_t: passes 2^32 when n does
    sdata[tid] = i < n ? in[i] : 0.0f; // past n: 0, which leaves the sum alone
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

// The last pass, launched as ONE block: the sum of in[0 .. n) into *out, for
// any n. blockDim.x must be a power of two, with blockDim.x floats of shared
// memory.
__global__ void reduce_final_kernel(const float *in, size_t n, float *out)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    float sum = 0.0f; // this thread's share of in[0 .. n)
    // TODO(exercise): add in[tid], in[tid + blockDim.x], in[tid + 2 * blockDim.x], ... (all below n) into sum
    for (size_t i = tid; i < n; i += blockDim.x)
        sum += in[i];
    // END(exercise)
    sdata[tid] = sum;
    __syncthreads(); // every slot is written before any thread reads a neighbour's

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) { // lesson 05's tree
        if (tid < s)
            sdata[tid] += sdata[tid + s]; // reads [s, 2s), writes [0, s): no overlap
        __syncthreads(); // this step's sums finished before the next step reads them
    }
    if (tid == 0) *out = sdata[0];
}

// ---- launch ---------------------------------------------------------------

static int g_block;              // threads per block, from -b
static float *g_partials;        // scratch for the partial sums of the first pass

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the sum of nothing is 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    size_t shared = g_block * sizeof(float);
    // Pass 1: lesson 05's kernel, one block per g_block elements (main() made
    // sure the count fits in gridDim.x). One block's worth or less: the final
    // kernel alone does it all.
    size_t blocks = (n + g_block - 1) / g_block;
    if (blocks == 1) {
        reduce_final_kernel<<<1, g_block, shared>>>(d_in, n, d_out);
        CUDA_CHECK_LAST();
        return;
    }
    reduce_kernel<<<(unsigned int)blocks, g_block, shared>>>(d_in, n, g_partials);
    CUDA_CHECK_LAST();
    // TODO(exercise): pass 2: have ONE block sum all the partials of pass 1 into *d_out
    reduce_final_kernel<<<1, g_block, shared>>>(g_partials, blocks, d_out); // default stream: after pass 1
    CUDA_CHECK_LAST();
    // END(exercise)
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"ex05_sequential_addressing", BLOCK_RUNTIME, 256, NULL};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    g_block = opt.block;
    // First pass: one block per g_block elements; gridDim.x can be at most 2^31 - 1.
    size_t p0 = (opt.n + g_block - 1) / g_block; // partials written by pass 1
    if (p0 > (size_t)INT_MAX) {
        fprintf(stderr, "%s: -n %zu needs more than 2^31-1 blocks of %d threads\n", info.lesson, opt.n, g_block);
        return 2;
    }
    Input in = make_input_extra(&opt, (p0 + 1) * sizeof(float));
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (p0 + 1) * sizeof(float)));
    run_variant(&opt, &in, "two_pass", reduce_gpu);
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
