/*
 * Lesson 02: one thread per element, every thread atomicAdds into one float.
 *
 * What changed since lesson 01: instead of one thread walking the array, the
 * grid has one thread for every element (ceil(n / block) blocks), and each
 * thread adds its element straight into the result with atomicAdd. The result
 * is zeroed first, inside the launcher, so the timing includes it.
 *
 * The flaw: every one of the n atomics goes to the same address in the L2,
 * and the notes' model has the L2 apply them one after another (each needs the
 * previous total), so that the whole chip waits on that one address; and since
 * the order of the float additions changes from run to run, so do the last
 * bits of a float result.
 * Lesson 03 adds up each block's elements inside the block first, in shared
 * memory.
 *
 *     make lesson02 && ./lesson02              # default n = 2^26, -b 256
 *     ./lesson02 -d uniform --check --csv      # run it a few times: watch the result
 */
#include "harness.h"

#include <limits.h>

// ---- kernel ---------------------------------------------------------------

// Grid: ceil(n / blockDim.x) blocks of any size (-b), one thread per element.
// Thread i reads in[i] and adds it into *out, which must hold 0 first; the
// threads of the last block that fall past n do nothing.
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    // size_t: blockIdx.x * blockDim.x passes 2^32 once n does; in 32 bits it would wrap.
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        // A plain `*out += in[i]` is a read, an add and a write: thousands of
        // threads would read the same old total and overwrite each other's
        // sums. atomicAdd makes the read-add-write one indivisible step in
        // the L2 cache, so no addition is lost. The order of the additions
        // is still whatever order the atomics arrive in.
        atomicAdd(out, in[i]);
    }
}

// ---- launch ---------------------------------------------------------------

static int g_block; // threads per block, from -b

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    // The atomics add into *d_out, so it must start at 0 (it arrives poisoned
    // with NaN). Same stream as the kernel: the memset finishes before the
    // first atomic. For n = 0 this zero is the answer and nothing is launched.
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
    if (n == 0) return;
    size_t blocks = (n + g_block - 1) / g_block; // run() made sure this fits in gridDim.x
    reduce_kernel<<<(unsigned int)blocks, g_block>>>(d_in, n, d_out);
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"02_atomic", BLOCK_RUNTIME, 256, NULL};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    g_block = opt.block;
    // One thread per element: gridDim.x can be at most 2^31 - 1 blocks.
    if ((opt.n + g_block - 1) / g_block > (size_t)INT_MAX) {
        fprintf(stderr, "%s: -n %zu needs more than 2^31-1 blocks of %d threads\n", g_prog, opt.n, g_block);
        return 2;
    }
    Input in = make_input(&opt);
    run_variant(&opt, &in, "atomic", reduce_gpu);
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
