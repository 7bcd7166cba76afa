/*
 * Exercise 04: lesson 04's tree with double-precision sums in shared memory.
 *
 * Lesson 04 adds floats, so every addition of the tree rounds to 24 bits. Here
 * the block's slots are doubles (53 bits), the partial sums between passes
 * stay doubles, and the total is rounded to float once, at the very end.
 *
 * What that buys: the uniform input is k / 2^23 with |k| <= 2^23, so every
 * partial sum is a whole multiple of 2^-23, at most n * 2^23 of them: exact in
 * double (53 bits) while n <= 2^30. The result is then the float nearest the
 * exact sum, and this program checks it exactly for both inputs. Each run
 * prints these lines (a line: one check's name, n, time or "check only",
 * PASS or FAIL):
 *   tree_f64     the input (timed, unless --check);
 *   tree_absorb  the input with element 0 set to 2^24 and element n-1 to
 *                -2^24 (n >= 3). The floats next to 2^24 are 2^24 - 1 and
 *                2^24 + 2, so in a float slot 2^24 + x is rounded to an
 *                integer: with -d uniform the fractions of the elements
 *                added to it are lost, and a float tree misses the exact
 *                sum. With -d ints every sum is an integer: only odd sums
 *                above 2^24 round (to an even neighbour, up or down), those
 *                errors may cancel, and a float tree passes at many n.
 *                -d uniform is the input that catches float slots
 *                (./exercise04 runs both).
 *
 * What it costs: 8-byte slots in the same 4-byte banks. Predict what happens
 * to the bank conflicts before you measure (notes.md of lesson 04).
 *
 *     make exercise04 && ./exercise04     # FAILs until you fill in the TODOs
 *     make check E=04                     # every size, input, block size, the PTX
 */
#include "harness.h"

#include <limits.h>

// ---- kernel ---------------------------------------------------------------

// One kernel for every pass. The first pass reads the float input (in_f), the
// later ones read the double partial sums of the pass before (in_d): exactly
// one of the two is non-NULL. Each block sums its blockDim.x values (fewer in
// the last block) in double; the total goes to out[blockIdx.x] as a double,
// or, on the final pass (final_out non-NULL, one block), to *final_out as a
// float. blockDim.x must be a power of two.
__global__ void reduce_kernel(const float *in_f, const double *in_d, size_t n, double *out, float *final_out)
{
    unsigned int tid = threadIdx.x;
    // TODO(exercise): a dynamic shared array of doubles, and this thread's value in it (0 past n)
    extern __shared__ float sdata[]; // placeholder: lesson 04's float slots, all 0
    sdata[tid] = 0.0f;
    (void)in_f;
    (void)in_d;
    // END(exercise)
    __syncthreads(); // every slot is written before any thread reads a neighbour's

    // TODO(exercise): lesson 04's tree over sdata (index = 2*s*tid), with its barriers
    // END(exercise)
    if (tid == 0) {
        if (final_out)
            *final_out = (float)sdata[0]; // the one rounding to float (to nearest)
        else
            out[blockIdx.x] = sdata[0];
    }
}

// ---- launch ---------------------------------------------------------------

static int g_block;              // threads per block, from -b
static double *g_partials[2];    // scratch for the partial sums of each pass, in double

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the sum of nothing is 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    // TODO(exercise): the bytes of dynamic shared memory each block needs
    size_t shared = g_block * sizeof(float); // placeholder: lesson 04's float slots
    // END(exercise)
    const float *src_f = d_in;   // the first pass reads the floats...
    const double *src_d = NULL;  // ...later passes the double partials
    int next = 0;
    for (;;) {
        // One block per g_block values. Only the first pass sees n itself;
        // run() made sure its block count fits in gridDim.x (2^31 - 1).
        size_t blocks = (n + g_block - 1) / g_block;
        // The last pass (one block) writes the float answer. Earlier passes
        // write into the scratch buffer that this pass is not reading.
        float *final_out = blocks == 1 ? d_out : NULL;
        reduce_kernel<<<(unsigned int)blocks, g_block, shared>>>(src_f, src_d, n, g_partials[next], final_out);
        CUDA_CHECK_LAST();
        if (blocks == 1) return;
        src_f = NULL; // the next pass sums these partials (same stream: in order)
        src_d = g_partials[next];
        n = blocks;
        next ^= 1;
    }
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"ex04_interleaved_strided", BLOCK_RUNTIME, 256, NULL};

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
    Input in = make_input_extra(&opt, (p0 + p1 + 2) * sizeof(double) + (opt.n + 1) * sizeof(float));
    // Pass 1 writes buffer 0, pass 2 buffer 1, pass 3 buffer 0 again, ...
    CUDA_CHECK(cudaMalloc((void **)&g_partials[0], (p0 + 1) * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&g_partials[1], (p1 + 1) * sizeof(double)));

    // The check: the float nearest the exact sum, for both inputs. Exact in
    // double up to n = 2^30 (see the top); ints were exact in float already.
    in.expected = (double)(float)in.expected;
    in.tol = -1.0;
    run_variant(&opt, &in, "tree_f64", reduce_gpu);

    // The second check: a copy with a big pair that cancels, far apart.
    if (in.n >= 3) {
        const float big = 16777216.0f; // 2^24: the float spacing there is 2
        float *h = copy_input_to_host(&in), *d_copy = NULL;
        h[0] = big;
        h[in.n - 1] = -big;
        double exact = 0.0; // exact: multiples of 2^-23 below 2^25 + n, 53 bits suffice
        for (size_t i = 0; i < in.n; i++) exact += h[i];
        CUDA_CHECK(cudaMalloc((void **)&d_copy, in.n * sizeof(float)));
        CUDA_CHECK(cudaMemcpy(d_copy, h, in.n * sizeof(float), cudaMemcpyHostToDevice));
        free(h);
        Input absorb = in;
        absorb.d_in = d_copy;
        absorb.expected = (double)(float)exact;
        Options once = opt;
        once.check_only = 1; // the timing is the line above's
        run_variant(&once, &absorb, "tree_absorb", reduce_gpu);
        CUDA_CHECK(cudaFree(d_copy));
    }
    CUDA_CHECK(cudaFree(g_partials[0]));
    CUDA_CHECK(cudaFree(g_partials[1]));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
