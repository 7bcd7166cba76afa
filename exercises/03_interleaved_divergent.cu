/*
 * Exercise 03: the minimum and the maximum side by side, on lesson 03's tree.
 *
 * Lesson 03's tree adds. Any operation that is associative and has an
 * identity runs on the same tree, with the same barriers and the same
 * multi-pass launcher, and two of them can run side by side: here every
 * block carries a minimum AND a maximum up its tree, in the two halves of
 * one shared array, and writes both. The launcher and the checks are
 * written; the kernel body is yours to write (as shipped it only writes the
 * identities).
 *
 * The identities: +infinity for min, -infinity for max (min(x, +inf) = x).
 * They are also the answers for no elements: n = 0 gives (+inf, -inf). The
 * checks are exact: a min or a max picks an element, it never rounds. Each
 * run prints these lines (a line: one check's name, n, time or "check only",
 * PASS or FAIL):
 *   min, max       the input; one launch sequence computes both (each line times it);
 *   min_positives  the same launcher on 1 + |x| (every element at least 1),
 *   max_negatives  and on -1 - |x| (every element at most -1): a slot past n
 *                  that holds a value on the wrong side of every element (0,
 *                  say) shows here whenever a block has slots past n (n = 1,
 *                  2, 33, 1000, 2^20+3).
 *                  A value beyond every element (FLT_MAX for min) shows only
 *                  at n = 0, where every slot is past n and the identities
 *                  are the answers; ./exercise03 runs n = 0 too.
 *
 *     make exercise03 && ./exercise03     # FAILs until you write the kernel
 *     make check E=03                     # every size, input, block size
 */
#include "harness.h"

#include <limits.h>

// ---- kernel ---------------------------------------------------------------

// The minimum of in_min[first .. last) and the maximum of in_max[first ..
// last), first = blockIdx.x * blockDim.x, last = min(first + blockDim.x, n),
// into out_min[blockIdx.x] and out_max[blockIdx.x]. When n = 0 there is one
// block and no element: it writes the identities. The first pass passes the
// input as both in_min and in_max; later passes pass the two arrays of
// partial results. blockDim.x is a power of two, and the launch gives
// 2 * blockDim.x floats of dynamic shared memory.
__global__ void minmax_kernel(const float *in_min, const float *in_max, size_t n, float *out_min, float *out_max)
{
    // TODO(exercise): the whole kernel: load (identities past n), lesson 03's tree for both, write both results
    // (placeholder: writes the identities, as if the block had no elements)
    (void)in_min;
    (void)in_max;
    (void)n;
    if (threadIdx.x == 0) {
        out_min[blockIdx.x] = INFINITY;
        out_max[blockIdx.x] = -INFINITY;
    }
    // END(exercise)
}

// For the extra checks: out[i] = sign * (1 + |in[i]|).
__global__ void away_from_zero_kernel(const float *in, size_t n, float sign, float *out)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = sign * (1.0f + fabsf(in[i]));
}

// ---- launch ---------------------------------------------------------------

static int g_block;              // threads per block, from -b
static float *g_min[2], *g_max[2]; // scratch for the partial minima and maxima of each pass
static float *g_unused;          // where the result a line does not check goes

// min(in[0..n)) into *min_out and max(in[0..n)) into *max_out, in one
// multi-pass reduction: lesson 03's launcher, carrying two results.
static void minmax_gpu(const float *d_in, size_t n, float *min_out, float *max_out)
{
    size_t shared = 2 * (size_t)g_block * sizeof(float);
    const float *src_min = d_in, *src_max = d_in; // pass 1 reads the input twice over
    int next = 0;
    for (;;) {
        // One block per g_block values; n = 0 still gets one block, which
        // writes the identities.
        size_t blocks = n == 0 ? 1 : (n + g_block - 1) / g_block;
        // The last pass (one block) writes the answers. Earlier passes write
        // into the scratch buffers that this pass is not reading.
        float *dst_min = blocks == 1 ? min_out : g_min[next];
        float *dst_max = blocks == 1 ? max_out : g_max[next];
        minmax_kernel<<<(unsigned int)blocks, g_block, shared>>>(src_min, src_max, n, dst_min, dst_max);
        CUDA_CHECK_LAST();
        if (blocks == 1) return;
        src_min = dst_min; // the next pass reduces these partials (same stream: in order)
        src_max = dst_max;
        n = blocks;
        next ^= 1;
    }
}
// The harness checks one float per line: each line runs the same launch and
// takes one of its two results.
static void min_gpu(const float *d_in, size_t n, float *d_out) { minmax_gpu(d_in, n, d_out, g_unused); }
static void max_gpu(const float *d_in, size_t n, float *d_out) { minmax_gpu(d_in, n, g_unused, d_out); }

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"ex03_interleaved_divergent", BLOCK_RUNTIME, 256, NULL};

// One check-only line on a copy of the input made by away_from_zero_kernel.
static void check_away(const Options *opt, const Input *in, const float *h, float sign, float *d_tmp)
{
    if (in->n) {
        away_from_zero_kernel<<<1024, 256>>>(in->d_in, in->n, sign, d_tmp);
        CUDA_CHECK_LAST();
    }
    float ref = sign > 0 ? INFINITY : -INFINITY; // the identity: the answer for n = 0
    for (size_t i = 0; i < in->n; i++) {
        float v = sign * (1.0f + fabsf(h[i])); // the same float operations as the kernel: the same bits
        if (sign > 0 ? v < ref : v > ref) ref = v;
    }
    Input t = *in;
    t.d_in = d_tmp;
    t.expected = ref;
    Options once = *opt;
    once.check_only = 1; // the timing is the lines above
    run_variant(&once, &t, sign > 0 ? "min_positives" : "max_negatives", sign > 0 ? min_gpu : max_gpu);
}

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
    Input in = make_input_extra(&opt, (opt.n + 2 * (p0 + p1) + 8) * sizeof(float));
    // Pass 1 writes buffers 0, pass 2 buffers 1, pass 3 buffers 0 again, ...
    for (int k = 0; k < 2; k++) {
        CUDA_CHECK(cudaMalloc((void **)&g_min[k], ((k ? p1 : p0) + 1) * sizeof(float)));
        CUDA_CHECK(cudaMalloc((void **)&g_max[k], ((k ? p1 : p0) + 1) * sizeof(float)));
    }
    float *d_tmp = NULL;
    CUDA_CHECK(cudaMalloc((void **)&g_unused, sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&d_tmp, (in.n + 1) * sizeof(float)));

    // The references: from a copy of the very input the GPU reads; the
    // identities for n = 0 (and inf == inf, so the exact check works).
    float *h = copy_input_to_host(&in);
    float min = INFINITY, max = -INFINITY;
    for (size_t i = 0; i < in.n; i++) {
        if (h[i] < min) min = h[i];
        if (h[i] > max) max = h[i];
    }
    in.tol = -1.0; // exact, for both inputs
    in.expected = min;
    run_variant(&opt, &in, "min", min_gpu);
    in.expected = max;
    run_variant(&opt, &in, "max", max_gpu);
    check_away(&opt, &in, h, 1.0f, d_tmp);
    check_away(&opt, &in, h, -1.0f, d_tmp);
    free(h);

    for (int k = 0; k < 2; k++) {
        CUDA_CHECK(cudaFree(g_min[k]));
        CUDA_CHECK(cudaFree(g_max[k]));
    }
    CUDA_CHECK(cudaFree(g_unused));
    CUDA_CHECK(cudaFree(d_tmp));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
