/*
 * Lab 12: loads per thread and the fixed finish's counter, on lesson 12's two
 * finishes in one wave, timed side by side.
 *
 *   UNROLL    how many float4 loads each thread issues before adding any
 *             (lesson 11's reading): a compile-time constant, 2 by default
 *             as in lesson 11; build with EXTRA=-DUNROLL=1, 4 or 8 to compare
 *             (lesson 12 takes 8, under __launch_bounds__(512, 2); this lab
 *             has no bound).
 *   counter   how the fixed finish counts blocks done: lesson 12's one
 *             atom.acq_rel (count_done), or the classic form, a plain
 *             atomicInc between two __threadfence() (count_done_fences).
 *
 * Variants, named with the UNROLL they were built with (here _u2):
 *   atomic_u2        the memset atomic finish, in one wave (lesson 12: a flag, a block per tile)
 *   fixed_u2         lesson 12's fixed finish, acq_rel counter
 *   fixed_fences_u2  the same finish, fenced counter
 *
 *     make lab_12_unroll_fences && ./lab_12_unroll_fences -n 2^20,2^24,2^30
 *     make -B lab_12_unroll_fences EXTRA=-DUNROLL=4 && ./lab_12_unroll_fences -n 2^20,2^24,2^30
 */
#include "harness.h"

#define BLOCK_SIZE 512 // threads per block, as in lesson 12
#ifndef UNROLL
#define UNROLL 2       // the experiment: -DUNROLL=1, 2 (lesson 11's), 4 or 8
#endif
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL) // float4s one block reads per round
#define FULL_MASK 0xffffffffu // all 32 lanes take part in every shuffle below

#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || BLOCK_SIZE % 32 != 0 || UNROLL < 1
#error "BLOCK_SIZE must be a multiple of 32 in 32..1024, UNROLL at least 1"
#endif
// Lesson 11's reading and block sum, at the bottom of the file.
static __device__ float thread_sum(const float *in, size_t n);
static __device__ float block_sum(float v);

// ---- the two counters -----------------------------------------------------

// Lesson 12's: counts the calling block done and returns the count before it.
// atomicInc(p, m) stores (old >= m ? 0 : old + 1), so the block that sees m is
// the last and the counter is 0 again for the next launch. One atom.acq_rel:
// release (this block's partial is stored before its count) and acquire (the
// last block sees every partial stored before the counts) in one instruction.
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

// The classic form, on every GPU: a relaxed atomicInc between two full fences.
__device__ unsigned int count_done_fences(unsigned int *retired, unsigned int m)
{
    __threadfence();                               // release: the partial before the count
    unsigned int old = atomicInc(retired, m);
    if (old == m) __threadfence();                 // acquire: the partials after the count
    return old;
}

// ---- kernels --------------------------------------------------------------

// Lesson 12's atomic finish. Any grid of BLOCK_SIZE-thread blocks; together they
// read in[0..n) once. Each block adds its sum into *out, which must hold 0 first.
__global__ void reduce_atomic_kernel(const float *in, size_t n, float *out)
{
    float v = block_sum(thread_sum(in, n)); // every thread calls block_sum
    if (threadIdx.x == 0) atomicAdd(out, v); // one atomic per block, in whatever order blocks finish
}

// Lesson 12's fixed finish, with the counter as a parameter: each kernel below
// inlines it with a constant `fences`, so each compiles to one counter only.
static __device__ __forceinline__ void fixed_finish(const float *in, size_t n, float *partials,
                                                    unsigned int *retired, float *out, int fences)
{
    __shared__ bool last; // is this block the last one to count itself?
    float v = block_sum(thread_sum(in, n)); // every thread calls block_sum
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        unsigned int m = gridDim.x - 1;
        last = ((fences ? count_done_fences(retired, m) : count_done(retired, m)) == m);
    }
    __syncthreads(); // hands `last`, and what thread 0 acquired, to the whole block
    if (!last) return; // the same for every thread of the block: no barrier below is split
    // Partials in index order (__ldcg: at L2; the acquire in the counter orders them).
    v = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += BLOCK_SIZE) v += __ldcg(&partials[b]);
    v = block_sum(v); // block_sum's slots are free again: warp 0 read them before the barrier above
    if (threadIdx.x == 0) *out = v;
}

// Any grid of BLOCK_SIZE-thread blocks, reading in[0..n) once; each block
// stores its sum in partials[blockIdx.x] and the last to count itself adds
// them in index order into *out. *retired is 0 before and after each launch.
__global__ void reduce_fixed_kernel(const float *in, size_t n, float *partials, unsigned int *retired, float *out)
{
    fixed_finish(in, n, partials, retired, out, 0); // lesson 12's acq_rel counter
}

// The same grid and sums, counted with the fenced counter.
__global__ void reduce_fixed_fences_kernel(const float *in, size_t n, float *partials, unsigned int *retired,
                                           float *out)
{
    fixed_finish(in, n, partials, retired, out, 1);
}

// ---- launch ---------------------------------------------------------------

typedef void (*fixed_fn)(const float *, size_t, float *, unsigned int *, float *);

static int g_max_blocks;         // SMs x resident blocks per SM (set in run)
static float *g_partials;        // one partial per block
static unsigned int *g_retired;  // the blocks-done counter, zeroed once in run
static fixed_fn g_fixed;         // which fixed kernel reduce_fixed launches

// Lesson 11's grid: a full GPU's worth of blocks, at most one per tile of n (4 * TILE floats).
static int grid_blocks(size_t n)
{
    size_t wanted = (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE);
    return wanted < (size_t)g_max_blocks ? (int)wanted : g_max_blocks;
}

static void reduce_fixed(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the sum of nothing is 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    g_fixed<<<grid_blocks(n), BLOCK_SIZE>>>(d_in, n, g_partials, g_retired, d_out);
    CUDA_CHECK_LAST();
}

static void reduce_atomic(const float *d_in, size_t n, float *d_out)
{
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); // the blocks add into it
    if (n == 0) return;
    reduce_atomic_kernel<<<grid_blocks(n), BLOCK_SIZE>>>(d_in, n, d_out);
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"lab_12_unroll_fences", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

static int run(Options opt)
{
    static char atomic_name[32], fixed_name[32], fences_name[32];
    snprintf(atomic_name, sizeof atomic_name, "atomic_u%d", UNROLL);
    snprintf(fixed_name, sizeof fixed_name, "fixed_u%d", UNROLL);
    snprintf(fences_name, sizeof fences_name, "fixed_fences_u%d", UNROLL);
    Input in = make_input(&opt); // also reads the SM count into g_dev
    // Lesson 11's grid, one wave, for every variant: from the acq_rel fixed kernel.
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_fixed_kernel, BLOCK_SIZE, 0));
    if (per_sm < 1) per_sm = 1;
    g_max_blocks = g_dev.sm_count * per_sm;
    if (!opt.csv)
        printf("grid: %d SMs x %d resident blocks = at most %d blocks of %d threads; UNROLL %d\n", g_dev.sm_count,
               per_sm, g_max_blocks, BLOCK_SIZE, UNROLL);
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)g_max_blocks * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_retired, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_retired, 0, sizeof(unsigned int)));
    run_variant(&opt, &in, atomic_name, reduce_atomic);
    g_fixed = reduce_fixed_kernel;
    run_variant(&opt, &in, fixed_name, reduce_fixed);
    g_fixed = reduce_fixed_fences_kernel;
    run_variant(&opt, &in, fences_name, reduce_fixed);
    CUDA_CHECK(cudaFree(g_retired));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }

// ---- lesson 12's, with UNROLL set above -----------------------------------

// The sum of v over this warp's 32 lanes, in lane 0 (lesson 10); all 32 must call it.
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
    // No barrier at the end: a second call must come after one (fixed_finish).
    return v;
}

// This thread's share of in[0..n) (lesson 11): a scalar head and tail (0..3
// floats each, block 0's first threads) and a 16-byte aligned float4 body.
__device__ float thread_sum(const float *in, size_t n)
{
    // Floats before the first 16-byte boundary: 0, 3, 2 or 1 (never more than n).
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
        // __ldg: the read-only path (ld.global.nc): nothing writes the input meanwhile.
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
