/*
 * Exercise 02: the maximum of the array, one atomic per thread.
 *
 * Lesson 02 added every element into one float with atomicAdd. Here every
 * thread offers its element to a running maximum instead. CUDA has atomicMax
 * for integers but not for float, so you build one from atomicCAS
 * (compare-and-swap), the primitive every other atomic can be made of.
 *
 * The max of no elements: this program defines it as -infinity, the identity
 * of max (max(-inf, x) = x for every x), so n = 0 gives -inf. The checks are
 * exact: a max picks an element, it never rounds. Each run prints two lines
 * (a line: one check's name, n, time or "check only", PASS or FAIL):
 *   atomic_max     the input (timed, unless --check);
 *   max_negatives  the same launcher on -1 - |x|, every element at most -1:
 *                  a start above -1 (0, say) shows here at every n >= 1. A
 *                  start below every element but above -inf (-FLT_MAX, say)
 *                  shows only at n = 0, where the start is the answer; the
 *                  sizes ./exercise02 runs include n = 0.
 *
 *     make exercise02 && ./exercise02     # FAILs until you fill in the TODOs
 *     make check E=02                     # every size, input, block size, the PTX
 */
#include "harness.h"

#include <cuda/atomic> // cuda::atomic_ref, if you want an atomic load (lesson 12 uses it)
#include <limits.h>

// ---- kernel ---------------------------------------------------------------

// A float atomicMax: makes *addr = max(*addr, val) in one indivisible step and
// returns the value *addr held before. NaN in val is ignored (a comparison
// with NaN is false); the inputs here never hold one.
__device__ float atomic_max_float(float *addr, float val)
{
    // TODO(exercise): make *addr = max(*addr, val) with a loop around atomicCAS on the float's bits
    (void)addr; // placeholder: changes nothing, so *addr keeps its starting value
    return val;
    // END(exercise)
}

// One thread per element, as in lesson 02.
__global__ void max_kernel(const float *in, size_t n, float *out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomic_max_float(out, in[i]);
}

// *out = v, from one thread: cudaMemset sets bytes, and -inf (0xFF800000) is
// not four equal bytes.
__global__ void fill_kernel(float *out, float v) { *out = v; }

// For the second check: out[i] = -1 - |in[i]|, every element at most -1.
__global__ void negatives_kernel(const float *in, size_t n, float *out)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = -1.0f - fabsf(in[i]);
}

// ---- launch ---------------------------------------------------------------

static int g_block; // threads per block, from -b

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    // TODO(exercise): start *d_out at the identity of max (it arrives poisoned with NaN)
    // (placeholder: nothing written, so *d_out keeps the NaN it arrives with)
    // END(exercise)
    if (n == 0) return;
    size_t blocks = (n + g_block - 1) / g_block; // run() made sure this fits in gridDim.x
    max_kernel<<<(unsigned int)blocks, g_block>>>(d_in, n, d_out);
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"ex02_atomic", BLOCK_RUNTIME, 256, NULL};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    g_block = opt.block;
    if ((opt.n + g_block - 1) / g_block > (size_t)INT_MAX) {
        fprintf(stderr, "%s: -n %zu needs more than 2^31-1 blocks of %d threads\n", g_prog, opt.n, g_block);
        return 2;
    }
    Input in = make_input_extra(&opt, (opt.n + 1) * sizeof(float)); // + the negated copy

    // The second input, made on the GPU outside any timing.
    float *d_neg = NULL;
    CUDA_CHECK(cudaMalloc((void **)&d_neg, (in.n + 1) * sizeof(float)));
    if (in.n) {
        negatives_kernel<<<1024, 256>>>(in.d_in, in.n, d_neg);
        CUDA_CHECK_LAST();
    }

    // The references: maxima on the host, from a copy of the very input the
    // GPU reads. -inf for n = 0 (and -inf == -inf, so the check still works).
    float *h = copy_input_to_host(&in);
    float max = -INFINITY, max_neg = -INFINITY;
    for (size_t i = 0; i < in.n; i++) {
        if (h[i] > max) max = h[i];
        float v = -1.0f - fabsf(h[i]); // the same float operations as the kernel: the same bits
        if (v > max_neg) max_neg = v;
    }
    free(h);
    in.expected = max;
    in.tol = -1.0; // exact, for both inputs: a max picks an element, it never rounds
    run_variant(&opt, &in, "atomic_max", reduce_gpu);

    Input neg = in;
    neg.d_in = d_neg;
    neg.expected = max_neg;
    Options once = opt;
    once.check_only = 1; // the timing is the line above's
    run_variant(&once, &neg, "max_negatives", reduce_gpu);

    CUDA_CHECK(cudaFree(d_neg));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
