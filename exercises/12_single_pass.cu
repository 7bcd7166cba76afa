/*
 * Exercise 12: finish a reduction inside its only launch (last block done).
 *
 * The kernel below is lesson 11's pass 1 (512 threads a block, 2 float4
 * loads in flight a thread, as in lesson 11): every block writes its
 * partial sum to partials[blockIdx.x]. There is no pass 2 -- the launcher
 * starts this one kernel and nothing else -- so *out stays unwritten (NaN)
 * and the check fails. Make the last block to finish add up the partials, in
 * a fixed order, and write *out. Three things to think through:
 *   - the counter is a __device__ variable (zero when the program loads);
 *   - you count with atomicAdd(&blocks_done, 1), not atomicInc: so the last
 *     block must put the counter back to 0 itself for the next launch. Why
 *     is a plain store safe there?
 *   - an atomic orders nothing but itself: a block's partial must be visible
 *     GPU-wide before its count, and the last block must see the others'
 *     partials after it sees their counts. Use __threadfence(), a fence for
 *     the whole GPU (lesson 12 instead gives its atomic those two orders).
 *     make check E=12 asks the PTX for a GPU-wide release between the
 *     partial's store and the count (a fence, or a release atomic), and a
 *     GPU-wide acquire after the count, before the partials are read (a
 *     fence, an acquire load, or an acquire atomic); an acquire-release
 *     atomic at GPU scope is both.
 *
 * Lines (one per check, for each size and input: its name, n, time or "check
 * only", PASS or FAIL): "last_block" is the input (timed, unless --check);
 * "repeat10" launches the same reduction 10 times more in the same process:
 * every result must have the bits of the first. A counter that is not back at
 * 0 after a launch, or an order that changes from run to run, fails there.
 * "many_blocks" (check only) launches up to MANY_BLOCKS blocks, whatever the
 * GPU: from n = 2^24 up (4,096 tiles), more partials than the last block has
 * threads, so a finish that reads one partial per thread, with no stride,
 * fails there. (Just above 2^21 + 3 the partials it skips hold a few
 * elements, whose sum can be 0 or within the tolerance.)
 *
 *     make exercise12 && ./exercise12     # FAILs until the TODO is done
 *     ./exercise12 -n 2^20+3 --offset 1 -d uniform --check
 *     make check E=12                     # every size, input, offset; same bits every run
 */
#include "harness.h"

#define BLOCK_SIZE 512 // as in lessons 11 and 12
#define UNROLL 2       // float4 loads each thread issues before adding any, as in lesson 11
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL)
#define MANY_BLOCKS (2 * BLOCK_SIZE + 1) // the "many_blocks" grid: more partials than the last block has threads

// ---- kernel ---------------------------------------------------------------

__device__ unsigned int blocks_done = 0; // blocks of the current launch that have written their partial

__device__ float warp_sum(float v) // in lane 0; all 32 lanes take part
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__device__ float block_sum(float v) // in thread 0; every thread of the block must call it
{
    __shared__ float warp_sums[WARPS];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads(); // every warp's slot is written before warp 0 reads them all
    if (warp == 0) v = warp_sum(lane < WARPS ? warp_sums[lane] : 0.0f);
    // No barrier at the end: warp 0 may still be reading warp_sums, so a
    // second call must come after a __syncthreads().
    return v;
}

__device__ float thread_sum(const float *in, size_t n) // lesson 11: scalar head, float4 body, scalar tail
{
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / sizeof(float);
    if (head > n) head = n;
    size_t nvec = (n - head) / 4, tail = n - head - 4 * nvec;
    const float4 *body = (const float4 *)(in + head);
    float sum = 0.0f;
    if (blockIdx.x == 0 && threadIdx.x < head) sum += in[threadIdx.x];
    if (blockIdx.x == 0 && threadIdx.x < tail) sum += in[head + 4 * nvec + threadIdx.x];
    size_t i = (size_t)blockIdx.x * TILE + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * TILE;
    for (; i + (UNROLL - 1) * BLOCK_SIZE < nvec; i += stride) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = __ldg(body + i + u * BLOCK_SIZE);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        if (i + u * BLOCK_SIZE < nvec) {
            float4 v = __ldg(body + i + u * BLOCK_SIZE);
            sum += (v.x + v.y) + (v.z + v.w);
        }
    }
    return sum;
}

// Every block adds its share and writes partials[blockIdx.x]; the block that
// finishes last adds partials[0 .. gridDim.x) in a fixed order into *out and
// leaves blocks_done at 0 for the next launch.
__global__ void reduce_kernel(const float *in, size_t n, float *partials, float *out)
{
    float sum = block_sum(thread_sum(in, n));
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
    // TODO(exercise): make the last block to finish sum the partials in a fixed order into *out, then reset blocks_done; __threadfence() orders each partial before its count, and the count before the last block's reads
    (void)out; // not yet: nobody writes the result
    // END(exercise)
}

// ---- launch ---------------------------------------------------------------

static int g_max_blocks;  // SMs x resident blocks per SM, set by run for each option combination
static int g_cap;         // the grid's cap: g_max_blocks (one wave), or MANY_BLOCKS
static float *g_partials; // one float per block

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) {
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    size_t tiles = (n / 4 + TILE - 1) / TILE;
    int blocks = tiles < (size_t)g_cap ? (int)tiles : g_cap;
    if (blocks < 1) blocks = 1;
    reduce_kernel<<<blocks, BLOCK_SIZE>>>(d_in, n, g_partials, d_out); // the only launch
    CUDA_CHECK_LAST();
}

// The same reduction on a grid of up to MANY_BLOCKS blocks: blocks that do not
// fit at once wait for a free slot, and above 2^21 + 3 (512 tiles) the last
// one has more partials to add than threads, on any GPU.
static void reduce_many(const float *d_in, size_t n, float *d_out)
{
    g_cap = MANY_BLOCKS;
    reduce_gpu(d_in, n, d_out);
    g_cap = g_max_blocks;
}

// ---- main -----------------------------------------------------------------

#define REPEATS 10

// The same reduction REPEATS more times on the same input, in this process:
// each result, poisoned before every launch, must have the bits of the first
// and pass the check.
static void check_repeats(const Options *opt, const Input *in, reduce_fn fn, const char *variant)
{
    Report r = new_report(opt, variant, in->n, (double)in->n * sizeof(float));
    r.pass = 1;
    float first = 0.0f;
    for (int k = 0; k < REPEATS && r.pass; k++) {
        CUDA_CHECK(cudaMemsetAsync(g_out, 0xFF, sizeof(float), 0)); // NaN: a launch that writes nothing fails
        fn(in->d_in, in->n, g_out);
        CUDA_CHECK(cudaDeviceSynchronize());
        r.result = read_result();
        if (k == 0) first = r.result;
        r.expected = k == 0 ? in->expected : first; // the first against the reference, then against the first
        r.tol = k == 0 ? in->tol : -1.0;             // ... bit for bit
        r.pass = k == 0 ? check_result(r.result, in->expected, in->tol)
                        : memcmp(&r.result, &first, sizeof first) == 0;
    }
    report_result(opt, &r);
}

static const LessonInfo info = {"ex12_single_pass", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    Input in = make_input(&opt);
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_kernel, BLOCK_SIZE, 0));
    if (per_sm < 1) per_sm = 1;
    g_max_blocks = g_dev.sm_count * per_sm;
    g_cap = g_max_blocks;
    size_t most = g_max_blocks > MANY_BLOCKS ? (size_t)g_max_blocks : (size_t)MANY_BLOCKS;
    CUDA_CHECK(cudaMalloc((void **)&g_partials, most * sizeof(float)));

    run_variant(&opt, &in, "last_block", reduce_gpu);
    check_repeats(&opt, &in, reduce_gpu, "repeat10");
    Options once = opt;
    once.check_only = 1; // a check, not a timing: the grid is not the one a reduction would pick
    run_variant(&once, &in, "many_blocks", reduce_many);

    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
