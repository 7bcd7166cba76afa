// uses: cccl
/*
 * Lab 14: two rules (loads, grid) for lesson 12's fixed finish and a memset atomic finish, timed against both in one wave.
 *
 * Lesson 14 sets lesson 12's two finishes, unchanged, beside the libraries; here the atomic
 * finish zeroes *out with a memset (lesson 12's zeroes it behind a flag: lab/12_no_memset.md).
 * Here both finishes read as lesson 11 does (512 threads x 2 float4s; lesson
 * 12 reads 8), and two rules tried on them in lesson 14 are timed in one
 * process, in turns (as lesson 14 times the libraries), with CUB beside:
 *   stream  an input of at most STREAM_BELOW_L2 x L2 is read with evict-first
 *           loads (__ldcs, ld.global.cs) in place of __ldg: the *_cs kernels
 *   grid    a larger input gets up to OVERSUBSCRIBE blocks for every one that
 *           fits on the GPU at once; the fixed finish only while each block
 *           still reads FIXED_MIN_TILES tiles (each of its blocks waits for
 *           the counter's answer before it exits)
 * Variants: atomic and fixed (the two finishes in one wave, lesson 11's grid;
 * lesson 12 launches both a block per tile), *_stream, *_grid and *_rules
 * (both rules) of each, and cub (cub::DeviceReduce::Sum, temp sized untimed).
 * lab/14_grid_rules.md has what the rules gave on an H100.
 *
 *     make lab_14_grid_rules && ./lab_14_grid_rules -n 2^24,2^26,2^28,2^30 --flush clean
 */
#include "harness.h"
#include <cub/device/device_reduce.cuh>

#define BLOCK_SIZE 512 // lesson 11's block and loads per thread (results/tune-lesson12-nvidia-h200.txt)
#define UNROLL 2
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL) // float4s one block reads per round
#define FULL_MASK 0xffffffffu // all 32 lanes take part in every shuffle below

#define STREAM_BELOW_L2 2  // evict-first up to 2 x L2: it paid at 2^24 only (results/tune-lesson12-nvidia-h200.txt)
#define OVERSUBSCRIBE 8    // results/tune-lesson14-nvidia-h200.txt section 2, results/grid-lesson14-<gpu>.txt
#define FIXED_MIN_TILES 32 // results/tune-lesson14-nvidia-h200.txt section 3

// Lesson 12's pieces, at the end of this file: its two finishes on lesson 11's
// reading (UNROLL 2, no __launch_bounds__).
__device__ float warp_sum(float v);
__device__ float block_sum(float v);
__device__ float thread_sum(const float *in, size_t n);
__device__ unsigned int count_done(unsigned int *retired, unsigned int m);
__global__ void reduce_atomic_kernel(const float *in, size_t n, float *out);
__global__ void reduce_fixed_kernel(const float *in, size_t n, float *partials, unsigned int *retired, float *out);

// ---- kernels: the two finishes, reading evict-first ---------------------

// thread_sum (below) with __ldcs for __ldg: the same share of in[0..n),
// read "evict first" (ld.global.cs), so that the lines it brings into L2 are
// the first to go and displace little else.
__device__ float thread_sum_cs(const float *in, size_t n)
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
        for (int u = 0; u < UNROLL; u++) v[u] = __ldcs(&body[i + u * BLOCK_SIZE]); // independent: all in flight
#pragma unroll
        for (int u = 0; u < UNROLL; u++) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        if (i + u * BLOCK_SIZE < nvec) {
            float4 v = __ldcs(&body[i + u * BLOCK_SIZE]);
            sum += (v.x + v.y) + (v.z + v.w);
        }
    }
    return sum;
}

// reduce_atomic_kernel reading evict-first. Any grid; *out must be 0 before the launch.
__global__ void reduce_atomic_cs_kernel(const float *in, size_t n, float *out)
{
    float v = block_sum(thread_sum_cs(in, n)); // every thread calls block_sum
    if (threadIdx.x == 0) atomicAdd(out, v); // one atomic per block, in whatever order blocks finish
}

// reduce_fixed_kernel reading evict-first. Any grid of at most as many blocks
// as partials has room for; *retired must be 0 before the first launch.
__global__ void reduce_fixed_cs_kernel(const float *in, size_t n, float *partials, unsigned int *retired, float *out)
{
    __shared__ bool last;
    float v = block_sum(thread_sum_cs(in, n));
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        last = (count_done(retired, gridDim.x - 1) == gridDim.x - 1); // release our partial, acquire all
    }
    __syncthreads(); // hands `last`, and what thread 0 acquired, to the whole block
    if (!last) return;
    v = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += BLOCK_SIZE) v += __ldcg(&partials[b]); // index order
    v = block_sum(v); // the barrier above freed block_sum's slots
    if (threadIdx.x == 0) *out = v;
}

// ---- launch ---------------------------------------------------------------

static int g_max_blocks;        // SMs x resident blocks per SM: one wave
static float *g_partials;       // one partial per block, room for OVERSUBSCRIBE waves
static unsigned int *g_retired; // the blocks-done counter, zeroed once
static void *g_cub_temp;        // CUB's temp storage, sized once per n
static size_t g_cub_temp_bytes;

// The stream rule: evict-first for inputs of at most STREAM_BELOW_L2 x L2 bytes.
static int small_input(size_t n) { return (double)n * sizeof(float) <= STREAM_BELOW_L2 * (double)g_dev.l2_bytes; }

// One wave (lesson 11's grid), at most a block per tile of n (4 * TILE
// floats). With the grid rule and an input above STREAM_BELOW_L2 x L2, up to
// OVERSUBSCRIBE waves; for a finish whose blocks wait (fixed), only as many
// waves as leave each block FIXED_MIN_TILES tiles or more.
static int grid_for(size_t n, int grid_rule, int waits)
{
    size_t wanted = (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE), waves = 1;
    if (grid_rule && !small_input(n)) {
        waves = OVERSUBSCRIBE;
        size_t keep = wanted / ((size_t)g_max_blocks * FIXED_MIN_TILES);
        if (waits && keep < waves) waves = keep > 1 ? keep : 1;
    }
    size_t most = (size_t)g_max_blocks * waves;
    return wanted < most ? (int)wanted : (int)most;
}

static void atomic_with(const float *d_in, size_t n, float *d_out, int stream_rule, int grid_rule)
{
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); // the blocks add into it
    if (n == 0) return;
    int blocks = grid_for(n, grid_rule, 0);
    if (stream_rule && small_input(n)) reduce_atomic_cs_kernel<<<blocks, BLOCK_SIZE>>>(d_in, n, d_out);
    else reduce_atomic_kernel<<<blocks, BLOCK_SIZE>>>(d_in, n, d_out);
    CUDA_CHECK_LAST();
}

static void fixed_with(const float *d_in, size_t n, float *d_out, int stream_rule, int grid_rule)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    int blocks = grid_for(n, grid_rule, 1);
    if (stream_rule && small_input(n))
        reduce_fixed_cs_kernel<<<blocks, BLOCK_SIZE>>>(d_in, n, g_partials, g_retired, d_out);
    else
        reduce_fixed_kernel<<<blocks, BLOCK_SIZE>>>(d_in, n, g_partials, g_retired, d_out);
    CUDA_CHECK_LAST();
}

static void sum_atomic(const float *d_in, size_t n, float *d_out) { atomic_with(d_in, n, d_out, 0, 0); }
static void sum_atomic_stream(const float *d_in, size_t n, float *d_out) { atomic_with(d_in, n, d_out, 1, 0); }
static void sum_atomic_grid(const float *d_in, size_t n, float *d_out) { atomic_with(d_in, n, d_out, 0, 1); }
static void sum_atomic_rules(const float *d_in, size_t n, float *d_out) { atomic_with(d_in, n, d_out, 1, 1); }
static void sum_fixed(const float *d_in, size_t n, float *d_out) { fixed_with(d_in, n, d_out, 0, 0); }
static void sum_fixed_stream(const float *d_in, size_t n, float *d_out) { fixed_with(d_in, n, d_out, 1, 0); }
static void sum_fixed_grid(const float *d_in, size_t n, float *d_out) { fixed_with(d_in, n, d_out, 0, 1); }
static void sum_fixed_rules(const float *d_in, size_t n, float *d_out) { fixed_with(d_in, n, d_out, 1, 1); }

// CUB's classic call, as lesson 14 makes it: an int count when n fits.
static cudaError_t cub_sum(void *temp, size_t *bytes, const float *d_in, float *d_out, size_t n)
{
    if (n <= 0x7FFFFFFF) return cub::DeviceReduce::Sum(temp, *bytes, d_in, d_out, (int)n, 0);
    return cub::DeviceReduce::Sum(temp, *bytes, d_in, d_out, (unsigned long long)n, 0);
}

static void sum_cub(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    CUDA_CHECK(cub_sum(g_cub_temp, &g_cub_temp_bytes, d_in, d_out, n));
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"lab_14_grid_rules", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run per combination of the listed -n, -s, -d, --offset and -b values.
static int run(Options opt)
{
    Input in = make_input(&opt); // also reads the SM count and the L2 size into g_dev
    // One wave is what every kernel here fits at once: the least of their occupancies.
    const void *kernels[] = {(const void *)reduce_atomic_kernel, (const void *)reduce_fixed_kernel,
                             (const void *)reduce_atomic_cs_kernel, (const void *)reduce_fixed_cs_kernel};
    int per_sm = 1 << 30;
    for (int k = 0; k < 4; k++) {
        int p = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&p, kernels[k], BLOCK_SIZE, 0));
        if (p < per_sm) per_sm = p;
    }
    if (per_sm < 1) per_sm = 1;
    g_max_blocks = g_dev.sm_count * per_sm;
    if (!opt.csv)
        printf("grid: %d SMs x %d resident blocks = one wave of %d blocks; evict-first up to %.0f MiB (%d x L2)\n",
               g_dev.sm_count, per_sm, g_max_blocks, STREAM_BELOW_L2 * (double)g_dev.l2_bytes / (1 << 20),
               STREAM_BELOW_L2);
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)g_max_blocks * OVERSUBSCRIBE * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_retired, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_retired, 0, sizeof(unsigned int)));
    CUDA_CHECK(cub_sum(NULL, &g_cub_temp_bytes, in.d_in, NULL, in.n)); // query only
    CUDA_CHECK(cudaMalloc(&g_cub_temp, g_cub_temp_bytes > 0 ? g_cub_temp_bytes : 1));

    // All timed in turns (round k starts with variant k % count): the same clock and L2 state for each.
    SumVariant v[] = {
        {"cub", sum_cub, &in},
        {"atomic", sum_atomic, &in},
        {"atomic_stream", sum_atomic_stream, &in},
        {"atomic_grid", sum_atomic_grid, &in},
        {"atomic_rules", sum_atomic_rules, &in},
        {"fixed", sum_fixed, &in},
        {"fixed_stream", sum_fixed_stream, &in},
        {"fixed_grid", sum_fixed_grid, &in},
        {"fixed_rules", sum_fixed_rules, &in},
    };
    run_variants(&opt, v, (int)(sizeof v / sizeof v[0]));

    CUDA_CHECK(cudaFree(g_cub_temp));
    CUDA_CHECK(cudaFree(g_retired));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }

// ---- lesson 12's pieces, with UNROLL 2 and no __launch_bounds__ ------------

// The sum of v over the 32 lanes of this warp, in lane 0 (the other lanes
// end with partial sums). At each step lane k adds the value of lane
// k + offset: offsets 16, 8, 4, 2, 1 halve the live values, as the tree did,
// but register to register. __shfl_down_sync waits for the lanes FULL_MASK
// names, so all 32 must call it; a lane whose k + offset is past 31 gets its
// own value back, and that only lands in lanes whose sums nobody reads.
__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1) // constant trip count: fully unrolled
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

// The sum of v over the block, in thread 0. Every thread of the block must
// call it: all lanes of every warp shuffle, and all reach the barrier.
__device__ float block_sum(float v)
{
    __shared__ float warp_sums[WARPS]; // one slot per warp, not one per thread
    unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads(); // the one barrier: every warp's slot written before warp 0 reads them
    if (warp == 0) // the whole of warp 0: its 32 lanes shuffle together
        v = warp_sum(lane < WARPS ? warp_sums[lane] : 0.0f); // lanes past the last warp add 0
    // No barrier at the end: a second call must come after one (reduce_fixed_kernel).
    return v;
}

// This thread's share of in[0..n), lesson 11's: a scalar head and tail (0..3
// floats each, block 0's first threads) and a 16-byte aligned float4 body.
__device__ float thread_sum(const float *in, size_t n)
{
    // Floats before the first 16-byte boundary: in is 4-byte aligned, so its
    // address mod 16 is 0, 4, 8 or 12 and head is 0, 3, 2 or 1 (never more than n).
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / sizeof(float);
    if (head > n) head = n;
    size_t nvec = (n - head) / 4;            // whole float4s in the body
    size_t tail = n - head - 4 * nvec;       // 0..3 floats left after the body
    const float4 *body = (const float4 *)(in + head); // 16-byte aligned; read only when nvec > 0

    float sum = 0.0f;
    if (blockIdx.x == 0 && threadIdx.x < head) sum += in[threadIdx.x];
    if (blockIdx.x == 0 && threadIdx.x < tail) sum += in[head + 4 * nvec + threadIdx.x];

    // size_t: nvec may pass 2^31. The loop runs while all UNROLL of this
    // thread's float4s exist; the last, partial round is guarded load by load.
    size_t i = (size_t)blockIdx.x * TILE + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * TILE;
    for (; i + (UNROLL - 1) * BLOCK_SIZE < nvec; i += stride) {
        float4 v[UNROLL];
        // __ldg: the input is not written while the kernel runs, so its loads
        // may take the read-only (non-coherent) path: ld.global.nc in the PTX.
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = __ldg(&body[i + u * BLOCK_SIZE]); // independent: all in flight
#pragma unroll
        for (int u = 0; u < UNROLL; u++) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        if (i + u * BLOCK_SIZE < nvec) {
            float4 v = __ldg(&body[i + u * BLOCK_SIZE]);
            sum += (v.x + v.y) + (v.z + v.w);
        }
    }
    return sum;
}

// (a) atomic. Any grid of BLOCK_SIZE-thread blocks; together they read
// in[0..n) once (thread_sum). Each block adds its sum into *out, which must
// hold 0 before the launch: one atomicAdd per block.
__global__ void reduce_atomic_kernel(const float *in, size_t n, float *out)
{
    float v = block_sum(thread_sum(in, n)); // every thread calls block_sum
    if (threadIdx.x == 0) atomicAdd(out, v); // one atomic per block, in whatever order blocks finish
}

// Counts the calling block done; returns the count before it. atomicInc(p, m)
// stores (old >= m ? 0 : old + 1): the blocks see 0..m in some order, and the
// one that sees m also puts the counter back to 0 for the next launch.
//   release  the partial stored before the count is visible to all who see it;
//   acquire  the block that sees m sees every partial stored before the counts.
// One atom.acq_rel does both (sm_70+). Older GPUs, which CUDA 12 still builds
// for but this tutorial does not run on, need a full fence on each side of a
// plain atomicInc.
__device__ unsigned int count_done(unsigned int *retired, unsigned int m)
{
    unsigned int old;
#if __CUDA_ARCH__ < 700
    __threadfence();                   // release: the partial before the count
    old = atomicInc(retired, m);
    if (old == m) __threadfence();     // acquire: the partials after the count
#else
    // atom.global takes a global-space address: convert the generic pointer.
    size_t g = __cvta_generic_to_global(retired);
    asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(g), "r"(m) : "memory");
#endif
    return old;
}

// (b) fixed. Any grid of BLOCK_SIZE-thread blocks, reading in[0..n) once. Each
// block stores its sum in partials[blockIdx.x]; the last block to count itself
// adds partials[0..gridDim.x) in index order into *out. *retired must be 0
// before the first launch; each launch leaves it 0.
__global__ void reduce_fixed_kernel(const float *in, size_t n, float *partials, unsigned int *retired, float *out)
{
    __shared__ bool last; // is this block the last one to count itself?
    float v = block_sum(thread_sum(in, n)); // every thread calls block_sum
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        last = (count_done(retired, gridDim.x - 1) == gridDim.x - 1);
    }
    __syncthreads(); // hands `last`, and what thread 0 acquired, to the whole block
    if (!last) return; // the same for every thread of the block: no barrier below is split
    // Partials t, t + BLOCK_SIZE, ... in index order, then the same tree: which
    // block is last varies, the order of the additions does not. __ldcg (read at
    // L2, not L1) orders nothing: the acquire in count_done makes them visible.
    v = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += BLOCK_SIZE) v += __ldcg(&partials[b]);
    v = block_sum(v); // block_sum's slots are free again: warp 0 read them before the barrier above
    if (threadIdx.x == 0) *out = v;
}
