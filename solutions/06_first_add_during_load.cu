/*
 * Exercise 06: the first add during load, taken to four elements per thread.
 *
 * Lesson 06 let each thread load two elements and add them before the tree,
 * with half the blocks. Here a block of B threads covers 4*B elements, so the
 * grid needs a quarter of lesson 05's blocks: thread tid of block b owns
 * elements b*4B + tid, + B, + 2B and + 3B. The launcher and the tree are
 * written for you (ELEMS_PER_THREAD); the load is yours. It must be right
 * for ANY n: the last block may hold only part of its span, even less than B
 * elements, and every block size 32..1024 must work.
 *
 *     make exercise06 && ./exercise06     # FAILs until the TODO is done
 *     ./exercise06 -n 4097 -b 32 --check  # one size, one block size
 *     make check E=06                     # every size, input and block size
 */
#include "harness.h"

#include <limits.h>

#define ELEMS_PER_THREAD 4 // elements each thread adds while loading

// ---- kernel ---------------------------------------------------------------

// Sums in[blockIdx.x * 4*blockDim.x ...] (4*blockDim.x elements, fewer in the
// last block) into out[blockIdx.x]. blockDim.x must be a power of two; the
// launch gives blockDim.x floats of dynamic shared memory.
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * (ELEMS_PER_THREAD * blockDim.x) + tid; // this thread's first element
    float v = 0.0f;
    // TODO(exercise): add into v the elements in[i], in[i + B], in[i + 2B], in[i + 3B] (B = blockDim.x) that lie below n, for any n and any block size
    // Four independent loads: all can be in flight at once. Each has its own
    // guard, because the last block's span may end anywhere inside it.
#pragma unroll
    for (unsigned int k = 0; k < ELEMS_PER_THREAD; k++) {
        size_t j = i + (size_t)k * blockDim.x; // size_t: j can pass 2^32
        if (j < n) v += in[j];
    }
    // END(exercise)
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
        // One block per ELEMS_PER_THREAD * g_block values. Only the first
        // pass sees n itself; run() made sure its block count fits in gridDim.x.
        size_t blocks = (n + ELEMS_PER_THREAD * (size_t)g_block - 1) / (ELEMS_PER_THREAD * (size_t)g_block);
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

static const LessonInfo info = {"ex06_first_add_during_load", BLOCK_RUNTIME, 256, NULL};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    g_block = opt.block;
    // First pass: one block per ELEMS_PER_THREAD * g_block elements; gridDim.x can be at most 2^31 - 1.
    size_t p0 = (opt.n + ELEMS_PER_THREAD * (size_t)g_block - 1) / (ELEMS_PER_THREAD * (size_t)g_block); // partials written by pass 1
    if (p0 > (size_t)INT_MAX) {
        fprintf(stderr, "%s: -n %zu needs more than 2^31-1 blocks of %d threads\n", g_prog, opt.n, g_block);
        return 2;
    }
    size_t p1 = (p0 + ELEMS_PER_THREAD * (size_t)g_block - 1) / (ELEMS_PER_THREAD * (size_t)g_block); // written by pass 2; later passes write fewer
    Input in = make_input_extra(&opt, (p0 + p1 + 2) * sizeof(float));
    // Pass 1 writes buffer 0, pass 2 buffer 1, pass 3 buffer 0 again, ...
    CUDA_CHECK(cudaMalloc((void **)&g_partials[0], (p0 + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_partials[1], (p1 + 1) * sizeof(float)));
    run_variant(&opt, &in, "load4", reduce_gpu);
    CUDA_CHECK(cudaFree(g_partials[0]));
    CUDA_CHECK(cudaFree(g_partials[1]));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
