/*
 * Exercise 14: a library inside your own kernel -- cub::BlockReduce for a max.
 *
 * Lesson 14 called whole-array reductions from the host. CUB also has pieces
 * for the inside of a kernel: cub::BlockReduce<T, BLOCK_THREADS> reduces one
 * value per thread across the block, with its scratch in shared memory that
 * your kernel declares (its TempStorage type, sized by CUB for this block
 * size and GPU). Write the maximum of the array in lesson 09's two passes:
 * each thread takes the max of its grid-stride share, the block combines them
 * with BlockReduce, thread 0 writes the block's max; pass 2 runs the same
 * kernel as one block over the partials.
 *
 * The max of no elements is -infinity, max's identity (as in exercise 02 and
 * lesson 16): n = 0 gives -inf. The checks are exact. Lines (one per check,
 * for each size and input: its name, n, time or "check only", PASS or FAIL):
 *   block_max      the input (timed, unless --check);
 *   max_negatives  the same on -1 - |x|, every element at most -1: a thread
 *                  with no element that offers a value above -1 (0, say)
 *                  shows here at the sizes that leave a thread without an
 *                  element, in either pass: pass 1's last block when it
 *                  gets fewer than 256 elements, and pass 2 whenever pass 1
 *                  launches fewer than 256 blocks (n up to 65,280 on a GPU
 *                  where 256 blocks fit at once); in the
 *                  short list, n = 1, 2, 33 and 1000. An offer below every element (-FLT_MAX, say)
 *                  gives the right max whenever there is an element; n = 0
 *                  never reaches the kernel.
 *                  The float just past its end holds 0: a read past n
 *                  shows here too (past block_max's input is a NaN, which
 *                  fmaxf ignores).
 *
 *     make exercise14 && ./exercise14     # FAILs until the TODO is done
 *     make check E=14                     # every size and input; the speed beside lesson 14's
 */
#include "harness.h"
#include <cub/block/block_reduce.cuh>

#define BLOCK_SIZE 256 // threads per block: BlockReduce is built for this many

// ---- kernel ---------------------------------------------------------------

// max as CUB's reductions take it: an object called like a function.
struct MaxOp {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// The maximum of the elements this block's threads visit (thread t of block b:
// in[b*BLOCK_SIZE + t], then every gridDim.x*BLOCK_SIZE-th after it, below n)
// into out[blockIdx.x]. A block whose threads visit nothing writes -inf.
__global__ void max_kernel(const float *in, size_t n, float *out)
{
    // TODO(exercise): each thread's max of its elements (start at the identity), then the block's with cub::BlockReduce, written by thread 0
    typedef cub::BlockReduce<float, BLOCK_SIZE> BlockReduce;
    __shared__ BlockReduce::TempStorage temp; // CUB's scratch, in this block's shared memory
    float m = -INFINITY; // max's identity: a thread with no element changes nothing
    const size_t stride = (size_t)gridDim.x * BLOCK_SIZE;
    for (size_t i = (size_t)blockIdx.x * BLOCK_SIZE + threadIdx.x; i < n; i += stride) m = fmaxf(m, in[i]);
    // Every thread of the block must call it (it has barriers inside); the
    // result is valid in thread 0 only.
    float block_max = BlockReduce(temp).Reduce(m, MaxOp());
    if (threadIdx.x == 0) out[blockIdx.x] = block_max;
    // END(exercise)
}

// *out = v, from one thread: -inf is not four equal bytes for a memset.
__global__ void fill_kernel(float *out, float v) { *out = v; }

// For the second check: out[i] = -1 - |in[i]|, every element below -1.
__global__ void negatives_kernel(const float *in, size_t n, float *out)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = -1.0f - fabsf(in[i]);
}

// ---- launch ---------------------------------------------------------------

static int g_max_blocks;  // SMs x resident blocks per SM (set in run)
static float *g_partials; // one partial per block of pass 1

static void reduce_max(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the max of nothing: the identity, no reduction
        fill_kernel<<<1, 1>>>(d_out, -INFINITY);
        CUDA_CHECK_LAST();
        return;
    }
    size_t wanted = (n + BLOCK_SIZE - 1) / BLOCK_SIZE; // no block without an element
    int blocks = wanted < (size_t)g_max_blocks ? (int)wanted : g_max_blocks;
    max_kernel<<<blocks, BLOCK_SIZE>>>(d_in, n, g_partials);
    CUDA_CHECK_LAST();
    max_kernel<<<1, BLOCK_SIZE>>>(g_partials, (size_t)blocks, d_out); // pass 2: same stream, after pass 1
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"ex14_libraries", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    Input in = make_input_extra(&opt, (opt.n + 1) * sizeof(float)); // + the negated copy
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, max_kernel, BLOCK_SIZE, 0));
    if (per_sm < 1) per_sm = 1;
    g_max_blocks = g_dev.sm_count * per_sm;
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)g_max_blocks * sizeof(float)));
    float *d_neg = NULL;
    CUDA_CHECK(cudaMalloc((void **)&d_neg, (in.n + 1) * sizeof(float)));
    CUDA_CHECK(cudaMemset(d_neg + in.n, 0, sizeof(float))); // 0 past the end: above every element
    if (in.n) {
        negatives_kernel<<<1024, 256>>>(in.d_in, in.n, d_neg);
        CUDA_CHECK_LAST();
    }

    // The references, from a copy of the very input the GPU reads.
    float *h = copy_input_to_host(&in);
    float mx = -INFINITY, mx_neg = -INFINITY;
    for (size_t i = 0; i < in.n; i++) {
        if (h[i] > mx) mx = h[i];
        float v = -1.0f - fabsf(h[i]); // the same float operations as the kernel: the same bits
        if (v > mx_neg) mx_neg = v;
    }
    free(h);
    in.expected = mx;
    in.tol = -1.0; // exact: a max picks an element
    run_variant(&opt, &in, "block_max", reduce_max);

    Input neg = in;
    neg.d_in = d_neg;
    neg.expected = mx_neg;
    Options once = opt;
    once.check_only = 1; // the timing is the line above's
    run_variant(&once, &neg, "max_negatives", reduce_max);

    CUDA_CHECK(cudaFree(d_neg));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
