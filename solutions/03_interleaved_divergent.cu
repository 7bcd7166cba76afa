/*
 * Exercise 03: the minimum of the array with lesson 03's tree.
 *
 * Lesson 03's kernel adds; any operation that is associative and has an
 * identity can run on the same tree, the same multi-pass launcher, the same
 * barriers. Here the tree keeps the smaller of two values instead of their sum.
 * Two things change: the operation, and the value that threads past n load
 * (0 is right for a sum, wrong for a min).
 *
 * The min of no elements is +infinity, min's identity: for n = 0 the launcher
 * runs one block in which every thread is past n, so the identity falls out of
 * the kernel itself. The check is exact: a min never rounds.
 *
 *     make exercise03 && ./exercise03 --check     # fails until you fill in the TODOs
 *     make solution03 && ./solution03             # the answer
 */
#include "harness.h"

#include <limits.h>

// ---- kernel ---------------------------------------------------------------

// The minimum of in[blockIdx.x * blockDim.x ...] (blockDim.x elements, fewer
// in the last block, none at all when n = 0) into out[blockIdx.x]. blockDim.x
// must be a power of two; the launch gives blockDim.x floats of shared memory.
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + tid; // size_t: passes 2^32 when n does
    // TODO(exercise): load in[i], or for threads past n a value that cannot change a min
    //   Hint: which float is >= every float? math.h names it.
    sdata[tid] = i < n ? in[i] : INFINITY; // past n: +inf, which leaves the min alone
    // END(exercise)
    __syncthreads(); // every slot is written before any thread reads a neighbour's

    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) {
            // TODO(exercise): combine the two slots: keep the smaller one in sdata[tid]
            //   Hint: math.h has a float minimum function (or write the comparison).
            sdata[tid] = fminf(sdata[tid], sdata[tid + s]); // tid + s < blockDim.x, as in lesson 03
            // END(exercise)
        }
        // This step's minima are finished before the next step reads them. Every
        // thread reaches this barrier: the loop bounds are the same for all.
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// ---- launch ---------------------------------------------------------------

static int g_block;              // threads per block, from -b
static float *g_partials[2];     // scratch for the partial minima of each pass

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    size_t shared = g_block * sizeof(float);
    const float *src = d_in;
    int next = 0;
    for (;;) {
        // One block per g_block values; n = 0 still gets one block, whose
        // threads all load the identity, so the empty min is the identity.
        size_t blocks = n == 0 ? 1 : (n + g_block - 1) / g_block;
        // The last pass (one block) writes the answer. Earlier passes write
        // into the scratch buffer that this pass is not reading: in place,
        // block b would overwrite slot b while another block still reads it.
        float *dst = blocks == 1 ? d_out : g_partials[next];
        reduce_kernel<<<(unsigned int)blocks, g_block, shared>>>(src, n, dst);
        CUDA_CHECK_LAST();
        if (blocks == 1) return;
        src = dst; // the next pass reduces these partials (same stream: in order)
        n = blocks;
        next ^= 1;
    }
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"ex03_interleaved_divergent", BLOCK_RUNTIME, 256, NULL};

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
    size_t p1 = (p0 + g_block - 1) / g_block; // partials written by pass 2; later passes write fewer
    Input in = make_input_extra(&opt, (p0 + p1 + 2) * sizeof(float));
    // Pass 1 writes buffer 0, pass 2 buffer 1, pass 3 buffer 0 again, ...
    CUDA_CHECK(cudaMalloc((void **)&g_partials[0], (p0 + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_partials[1], (p1 + 1) * sizeof(float)));

    // The reference: the min on the host, from a copy of the very input the
    // GPU reads; +inf for n = 0 (and inf == inf, so the exact check works).
    float *h = copy_input_to_host(&in);
    float min = INFINITY;
    for (size_t i = 0; i < in.n; i++)
        if (h[i] < min) min = h[i];
    free(h);
    in.expected = min;
    in.tol = -1.0; // exact, for both inputs: a min picks an element, it never rounds

    run_variant(&opt, &in, "tree_min", reduce_gpu);
    CUDA_CHECK(cudaFree(g_partials[0]));
    CUDA_CHECK(cudaFree(g_partials[1]));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
