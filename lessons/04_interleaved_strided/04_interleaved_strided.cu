/*
 * Lesson 04: the same tree, with the working threads packed together.
 *
 * What changed since lesson 03: the body of the loop. At step s, thread tid
 * now works on slot index = 2*s*tid, so the working threads are 0, 1, 2, ...
 * (the first blockDim.x / (2*s) of them) instead of every (2*s)-th thread,
 * and the `%` is gone. The compiler still predicates the `if` body, so every
 * warp issues every step as before: the `%` is what this saves.
 * Everything else, the multi-pass launcher included, is lesson 03's.
 *
 * The flaw: the slots those packed threads touch are 2*s floats apart, and
 * shared memory serves a warp in one go only when its threads hit different
 * banks. Stride 2 puts two threads on each bank it uses, stride 4 four, and
 * so on: bank conflicts, extra passes over the banks (lab/04_padding.cu pads
 * them away to measure their cost). Lesson 05 walks the tree the other way.
 *
 *     make lesson04 && ./lesson04              # default n = 2^26, -b 256
 *     ./lesson04 -n 1e6 -b 1024 --check        # any size, any power-of-two block
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

    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        unsigned int index = 2 * s * tid; // at most 2 * 512 * 1023: no overflow
        if (index < blockDim.x)
            sdata[index] += sdata[index + s]; // index + s < blockDim.x: index is a multiple of 2*s
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
        // One block per g_block values. Only the first pass sees n itself;
        // run() made sure its block count fits in gridDim.x (2^31 - 1).
        size_t blocks = (n + g_block - 1) / g_block;
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

static const LessonInfo info = {"04_interleaved_strided", BLOCK_RUNTIME, 256, NULL};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    g_block = opt.block;
    // First pass: one block per g_block elements; gridDim.x can be at most 2^31 - 1.
    size_t p0 = (opt.n + g_block - 1) / g_block; // partials written by pass 1
    if (p0 > (size_t)INT_MAX) {
        fprintf(stderr, "%s: -n %zu needs more than 2^31-1 blocks of %d threads\n", g_prog, opt.n, g_block);
        return 2;
    }
    size_t p1 = (p0 + g_block - 1) / g_block; // partials written by pass 2; later passes write fewer
    Input in = make_input_extra(&opt, (p0 + p1 + 2) * sizeof(float));
    // Pass 1 writes buffer 0, pass 2 buffer 1, pass 3 buffer 0 again, ...
    CUDA_CHECK(cudaMalloc((void **)&g_partials[0], (p0 + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_partials[1], (p1 + 1) * sizeof(float)));
    run_variant(&opt, &in, "tree", reduce_gpu);
    CUDA_CHECK(cudaFree(g_partials[0]));
    CUDA_CHECK(cudaFree(g_partials[1]));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
