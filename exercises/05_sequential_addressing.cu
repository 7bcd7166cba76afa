/*
 * Exercise 05: one sum per channel of interleaved data, on lesson 05's tree.
 *
 * Data often arrives interleaved: complex numbers as re, im, re, im, ...;
 * pixels as r, g, b, a, r, g, b, a, ...; m values per sample, one after the
 * other. Element i then belongs to CHANNEL i % m (m channels), and what is
 * wanted is one sum per channel: m sums from one read of the array. Change
 * lesson 05's kernel so that each block writes the m sums of its slice's
 * channels, and its launcher so that the later passes sum those partials.
 * m is a power of two below the block size; -b takes any power of two from
 * 32 to 1024, as in the lesson. The kernel keeps lesson 05's shared array of
 * blockDim.x floats (the launch, outside your regions, gives no more).
 *
 * Lines (a line of output: its name, n, time or "check only", PASS or FAIL),
 * one per channel count m, each checking all m sums and showing the worst
 * channel (ints exactly, uniform within 1e-5 * the channel's sum of |x|):
 *   channels_1   m = 1: a plain sum, as in lesson 05
 *   channels_2   m = 2: complex numbers (re, im)
 *   channels_4   m = 4: pixels (r, g, b, a)
 *   channels_16  m = 16: sixteen values per sample
 *
 *     make exercise05 && ./exercise05     # FAILs until you fill in the TODOs
 *     make check E=05                     # every size, input and block size
 */
#include "harness.h"

#include <limits.h>

#define MAX_CHANNELS 16 // the largest m of the lines above

// ---- kernel ---------------------------------------------------------------

// Block b reads in[b * blockDim.x ...] (blockDim.x elements, fewer in the
// last block; a slice that starts at a multiple of m, so slot tid holds an
// element of channel tid % m) and writes the sum of its channel c into
// out[b * m + c], for c = 0 .. m-1. blockDim.x is a power of two, m a power
// of two below it; the launch gives blockDim.x floats of dynamic shared memory.
__global__ void channels_kernel(const float *in, size_t n, unsigned int m, float *out)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + tid; // size_t: passes 2^32 when n does
    sdata[tid] = i < n ? in[i] : 0.0f; // past n: 0, which leaves every channel's sum alone
    __syncthreads(); // every slot is written before any thread reads a neighbour's

    // TODO(exercise): fold so that slots 0 .. m-1 end up holding this block's m channel sums, and write them to out[blockIdx.x * m + c]
    // Placeholder: lesson 05's tree, folded down to ONE slot, which then holds
    // every channel of the block mixed together; only out[blockIdx.x * m] is written.
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s]; // reads [s, 2s), writes [0, s): no overlap
        // This step's sums are finished before the next step reads them. Every
        // thread reaches this barrier: the loop bounds are the same for all.
        __syncthreads();
    }
    if (tid == 0) out[(size_t)blockIdx.x * m] = sdata[0];
    // END(exercise)
}

// ---- launch ---------------------------------------------------------------

static int g_block;              // threads per block, from -b
static float *g_partials[2];     // scratch for the partial sums of each pass

// The m channel sums of d_in[0 .. n) into d_out[0 .. m), pass after pass.
static void channels_gpu(const float *d_in, size_t n, unsigned int m, float *d_out)
{
    if (n == 0) { // every channel of nothing sums to 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, m * sizeof(float), 0));
        return;
    }
    size_t shared = g_block * sizeof(float);
    const float *src = d_in;
    int next = 0;
    for (;;) {
        // One block per g_block values. Only the first pass sees n itself;
        // run() made sure its block count fits in gridDim.x (2^31 - 1).
        size_t blocks = (n + g_block - 1) / g_block;
        // The last pass (one block) writes the answers. Earlier passes write
        // into the scratch buffer that this pass is not reading.
        float *dst = blocks == 1 ? d_out : g_partials[next];
        channels_kernel<<<(unsigned int)blocks, g_block, shared>>>(src, n, m, dst);
        CUDA_CHECK_LAST();
        if (blocks == 1) return;
        src = dst; // the next pass sums these partials (same stream: in order)
        // TODO(exercise): how many partials the next pass sums
        n = blocks; // placeholder: lesson 05's count, one partial per block
        // END(exercise)
        next ^= 1;
    }
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"ex05_sequential_addressing", BLOCK_RUNTIME, 256, NULL};

// One line: m channel sums, each checked against the exact one.
typedef struct { const float *d_in; size_t n; unsigned int m; float *d_out; } ChannelJob;
static void channels_poison(void *arg)
{
    ChannelJob *j = (ChannelJob *)arg;
    CUDA_CHECK(cudaMemsetAsync(j->d_out, 0xFF, j->m * sizeof(float), 0)); // NaN in every channel
}
static void channels_work(void *arg)
{
    ChannelJob *j = (ChannelJob *)arg;
    channels_gpu(j->d_in, j->n, j->m, j->d_out);
}

// The exact channel sums of h[0 .. n), as integers times the input's scale
// (every input is an integer times a power of two: check.h), and of |x|.
static void host_channels(const float *h, size_t n, unsigned int m, double scale, int64_t *sum, int64_t *sum_abs)
{
    for (unsigned int c = 0; c < m; c++) sum[c] = sum_abs[c] = 0;
    double inv = 1.0 / scale; // a power of two: multiplying by it is exact
    for (size_t i = 0; i < n; i++) {
        int64_t k = (int64_t)((double)h[i] * inv);
        sum[i % m] += k;
        sum_abs[i % m] += k < 0 ? -k : k;
    }
}

// Every channel must pass (ints: equal; uniform: within 1e-5 of the channel's
// sum |x|); the line shows the worst one.
static void check_channels(const ChannelJob *j, const int64_t *sum, const int64_t *sum_abs, double scale, int exact,
                           Report *r)
{
    float got[MAX_CHANNELS];
    CUDA_CHECK(cudaMemcpy(got, j->d_out, j->m * sizeof(float), cudaMemcpyDeviceToHost));
    double worst = -1.0;
    unsigned int bad = 0;
    for (unsigned int c = 0; c < j->m; c++) {
        double want = (double)sum[c] * scale, tol = exact ? -1.0 : 1e-5 * (double)sum_abs[c] * scale;
        int ok = check_result(got[c], want, tol);
        double score = ok ? (tol > 0 ? fabs(got[c] - want) / tol : 0.0) : INFINITY;
        if (!ok) bad++;
        if (score > worst) {
            worst = score;
            r->result = got[c];
            r->expected = want;
            r->tol = tol;
        }
    }
    r->pass = bad == 0;
    if (bad) printf("    %u of %u channels wrong\n", bad, j->m);
}

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    static const unsigned int channels[] = {1, 2, 4, MAX_CHANNELS};
    g_block = opt.block;
    // First pass: one block per g_block elements; gridDim.x can be at most 2^31 - 1.
    size_t p0 = (opt.n + g_block - 1) / g_block; // blocks of pass 1
    if (p0 > (size_t)INT_MAX) {
        fprintf(stderr, "%s: -n %zu needs more than 2^31-1 blocks of %d threads\n", g_prog, opt.n, g_block);
        return 2;
    }
    // Pass 1 writes at most p0 x 16 partials into buffer 0, pass 2 at most p1 x 16
    // into buffer 1, and every later pass fewer than the pass two before it.
    size_t p1 = (p0 * MAX_CHANNELS + g_block - 1) / g_block;
    Input in = make_input_extra(&opt, ((p0 + p1) * MAX_CHANNELS + 3 * MAX_CHANNELS) * sizeof(float));
    CUDA_CHECK(cudaMalloc((void **)&g_partials[0], (p0 + 1) * MAX_CHANNELS * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_partials[1], (p1 + 1) * MAX_CHANNELS * sizeof(float)));
    float *d_out = NULL;
    CUDA_CHECK(cudaMalloc((void **)&d_out, MAX_CHANNELS * sizeof(float)));
    float *h = copy_input_to_host(&in);
    double scale = input_scale(opt.dist);
    for (size_t k = 0; k < sizeof channels / sizeof channels[0]; k++) {
        char variant[32];
        snprintf(variant, sizeof variant, "channels_%u", channels[k]);
        ChannelJob j = {in.d_in, in.n, channels[k], d_out};
        int64_t sum[MAX_CHANNELS], sum_abs[MAX_CHANNELS];
        host_channels(h, in.n, channels[k], scale, sum, sum_abs);
        Report r = new_report(&opt, variant, in.n, (double)in.n * sizeof(float));
        channels_poison(&j);
        channels_work(&j);
        CUDA_CHECK(cudaDeviceSynchronize());
        check_channels(&j, sum, sum_abs, scale, opt.dist == DIST_INTS, &r);
        if (!opt.check_only && r.pass) {
            time_work(&opt, channels_poison, channels_work, &j, &r);
            check_channels(&j, sum, sum_abs, scale, opt.dist == DIST_INTS, &r); // the last timed run
        }
        report_result(&opt, &r);
    }
    free(h);
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(g_partials[0]));
    CUDA_CHECK(cudaFree(g_partials[1]));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
