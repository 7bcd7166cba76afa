/*
 * Lab 04: what lesson 04's bank conflicts cost, measured by padding shared memory.
 *
 * Lesson 04's tree (index = 2*s*tid) has a warp's threads touch slots 2*s
 * floats apart, so several of them hit the same bank. Padding stores word w
 * at slot w + PAD*(w/32): PAD spare words after every 32. PAD 33 moves each
 * row of 32 words one bank over and the tree's conflicts go; PAD 32 moves it by
 * whole rows, so every word keeps its bank and its conflicts, with as many
 * instructions as PAD 33 (the same control flow; the slot is computed with
 * other instructions). One program, three variants:
 *   tree                    lesson 04's kernel, unpadded
 *   tree_padded             PAD 33: the tree's conflicts gone
 *   tree_padded_same_banks  PAD 32: the conflicts kept (the control)
 * tree_padded_same_banks against tree_padded is what the conflicts cost.
 *
 *     make lab_04_padding && ./lab_04_padding      # lab/04_padding.md: the findings
 */
#include "harness.h"

#include <limits.h>

// ---- kernels --------------------------------------------------------------

// Where word w of the tree lives with `pad` spare words after every 32.
static __device__ __forceinline__ unsigned int slot(unsigned int w, unsigned int pad)
{
    return w + pad * (w >> 5); // pad 0: w itself
}

// Lesson 04's kernel, its shared-memory indices passed through slot(). Each
// kernel below inlines it with a constant pad, so each compiles as if pad
// were a #define; with pad 0 it is lesson 04's kernel exactly.
static __device__ __forceinline__ void padded_tree(const float *in, size_t n, float *out, unsigned int pad)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + tid; // size_t: passes 2^32 when n does
    sdata[slot(tid, pad)] = i < n ? in[i] : 0.0f; // past n: 0, which leaves the sum alone
    __syncthreads(); // every slot is written before any thread reads a neighbour's

    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        unsigned int index = 2 * s * tid; // at most 2 * 512 * 1023: no overflow
        if (index < blockDim.x)
            sdata[slot(index, pad)] += sdata[slot(index + s, pad)]; // index + s < blockDim.x
        // This step's sums are finished before the next step reads them. Every
        // thread reaches this barrier: the loop bounds are the same for all.
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0]; // slot(0) is 0 for any pad
}

// Lesson 04's: one block per blockDim.x elements (a power of two), one element
// per thread; block b sums in[b*blockDim.x ...] (fewer in the last block) into
// out[b]. Dynamic shared memory: blockDim.x floats.
__global__ void reduce_kernel(const float *in, size_t n, float *out) { padded_tree(in, n, out, 0); }

// The same grid and sums, padded by 33 words per 32: no bank conflicts.
// Dynamic shared memory: blockDim.x + 33 * blockDim.x / 32 floats.
__global__ void reduce_padded_kernel(const float *in, size_t n, float *out) { padded_tree(in, n, out, 33); }

// The same, padded by 32 words per 32: the conflicts of lesson 04, as many
// instructions as PAD 33. Dynamic shared memory: blockDim.x * 2 floats.
__global__ void reduce_same_banks_kernel(const float *in, size_t n, float *out) { padded_tree(in, n, out, 32); }

// ---- launch ---------------------------------------------------------------

typedef void (*kernel_fn)(const float *in, size_t n, float *out);

static int g_block;              // threads per block, from -b
static float *g_partials[2];     // scratch for the partial sums of each pass
static kernel_fn g_kernel;       // the variant being run: its kernel ...
static unsigned int g_pad;       // ... and the padding that kernel was built with

// Lesson 04's multi-pass launcher, with the variant's kernel and shared size.
static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the sum of nothing is 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    size_t shared = (g_block + g_pad * g_block / 32) * sizeof(float); // the spare words too
    const float *src = d_in;
    int next = 0;
    for (;;) {
        // One block per g_block values. Only the first pass sees n itself;
        // run() made sure its block count fits in gridDim.x (2^31 - 1).
        size_t blocks = (n + g_block - 1) / g_block;
        // The last pass (one block) writes the answer. Earlier passes write
        // into the scratch buffer that this pass is not reading.
        float *dst = blocks == 1 ? d_out : g_partials[next];
        g_kernel<<<(unsigned int)blocks, g_block, shared>>>(src, n, dst);
        CUDA_CHECK_LAST();
        if (blocks == 1) return;
        src = dst; // the next pass sums these partials (same stream: in order)
        n = blocks;
        next ^= 1;
    }
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"lab_04_padding", BLOCK_RUNTIME, 256, NULL};

static int run(Options opt)
{
    static const struct { const char *name; kernel_fn kernel; unsigned int pad; } variants[] = {
        {"tree", reduce_kernel, 0},
        {"tree_padded", reduce_padded_kernel, 33},
        {"tree_padded_same_banks", reduce_same_banks_kernel, 32},
    };
    g_block = opt.block;
    // First pass: one block per g_block elements; gridDim.x can be at most 2^31 - 1.
    size_t p0 = (opt.n + g_block - 1) / g_block; // partials written by pass 1
    if (p0 > (size_t)INT_MAX) {
        fprintf(stderr, "%s: -n %zu needs more than 2^31-1 blocks of %d threads\n", g_prog, opt.n, g_block);
        return 2;
    }
    size_t p1 = (p0 + g_block - 1) / g_block; // partials written by pass 2; later passes write fewer
    Input in = make_input_extra(&opt, (p0 + p1 + 2) * sizeof(float));
    CUDA_CHECK(cudaMalloc((void **)&g_partials[0], (p0 + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_partials[1], (p1 + 1) * sizeof(float)));
    for (int v = 0; v < 3; v++) {
        g_kernel = variants[v].kernel;
        g_pad = variants[v].pad;
        run_variant(&opt, &in, variants[v].name, reduce_gpu);
    }
    CUDA_CHECK(cudaFree(g_partials[0]));
    CUDA_CHECK(cudaFree(g_partials[1]));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
