/*
 * Lesson 12: one launch per reduction, two ways to finish it.
 *
 * Since lesson 11: no pass 2. Each block sums its share as before, then:
 *   atomic  each block atomicAdds its partial into *out (zeroed by a memset).
 *           Blocks arrive in a different order each run, and float addition
 *           is not associative: a uniform sum's last bits change run to run.
 *   fixed   last block done: each block stores its partial and counts itself
 *           on a counter, with release-acquire order; the last to arrive adds
 *           all the partials in a fixed order. One kernel, no memset, the
 *           same bits every run.
 * Both beat CUB side by side (lesson 14): the atomic finish by 1.2x or more
 * from 2^13 to 2^24 elements on an H200, the fixed one by a little less; from
 * 2^28 up all three read at the memory's speed.
 * Tunables (edit, or -D on the nvcc line): BLOCK_SIZE, UNROLL, LOAD_PATH,
 * STREAM_BELOW_L2, BLOCKS_PER_SM, CLASSIC_FENCES; the defaults won on an H200
 * (notes.md).
 * What remains: the partials still go through global memory; on Hopper the
 * blocks can combine through each other's shared memory first (lesson 13).
 *
 *     make lesson12 && ./lesson12
 *     ./lesson12 -n 2^20+3 --offset 3 -d uniform --check
 */
#include "harness.h"

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 512 // threads per block (compile time: -b must equal it)
#endif
#ifndef UNROLL
#define UNROLL 2       // float4 loads each thread issues before adding any
#endif
// How the body's float4s are loaded (each shows in the PTX):
//   0 plain: ld.global.v4.f32          1 __ldg, read-only path: ld.global.nc.v4.f32
//   2 __ldcs, streaming: ld.global.cs  3 inline PTX: ld.global.nc.L1::no_allocate.v4.f32
//   4 as 3, plus a 256-byte L2 prefetch hint (.L2::256B; sm_80+, 3 on older GPUs)
#ifndef LOAD_PATH
#define LOAD_PATH 1
#endif
// Inputs up to this many times the L2 size are read with __ldcs (evict-first):
// their lines then replace each other, and the dirty lines that earlier work
// left in L2 (the timing loop's flush leaves it full of them) are not forced
// out, and written back, in the middle of the read. 0 turns it off.
#ifndef STREAM_BELOW_L2
#define STREAM_BELOW_L2 2
#endif
#ifndef BLOCKS_PER_SM
#define BLOCKS_PER_SM 0 // cap on blocks per SM in the grid; 0: as many as fit (occupancy API)
#endif
// The fixed finish orders its counter with one atomic that both releases and
// acquires (sm_70+). 1: the classic form instead, __threadfence() before and
// after a plain atomicInc (also what GPUs before sm_70 get).
#ifndef CLASSIC_FENCES
#define CLASSIC_FENCES 0
#endif
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL) // float4s one block reads per loop step
#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || BLOCK_SIZE % 32 != 0 || UNROLL < 1
#error "BLOCK_SIZE must be a multiple of 32 in 32..1024, UNROLL at least 1"
#endif

// ---- kernel ---------------------------------------------------------------

#if LOAD_PATH == 0
#define LOADX(p) (*(p))
#elif LOAD_PATH == 1
#define LOADX(p) __ldg(p)
#elif LOAD_PATH == 2
#define LOADX(p) __ldcs(p)
#else
#if LOAD_PATH == 4 && __CUDA_ARCH__ >= 800
#define LOAD4_PTX "ld.global.nc.L1::no_allocate.L2::256B.v4.f32"
#else
#define LOAD4_PTX "ld.global.nc.L1::no_allocate.v4.f32"
#endif
#define LOADX(p) load4_ptx(p)
__device__ __forceinline__ float4 load4_ptx(const float4 *p)
{
    float4 v;
    // volatile: never hoisted above the bounds check that guards it
    asm volatile(LOAD4_PTX " {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}
#endif

// stream: a uniform flag, the same for every thread (no divergence).
#define LOAD4(p) (stream ? __ldcs(p) : LOADX(p))

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
    return v;
}

// This thread's share of in[0..n): lesson 11's scalar head, float4 body
// (UNROLL loads in flight) and scalar tail. Never reads outside in[0..n).
__device__ float thread_sum(const float *in, size_t n, int stream)
{
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / sizeof(float); // 0..3 floats before a 16-byte boundary
    if (head > n) head = n;
    size_t nvec = (n - head) / 4, tail = n - head - 4 * nvec;
    const float4 *body = (const float4 *)(in + head);
    float sum = 0.0f;
    if (blockIdx.x == 0 && threadIdx.x < head) sum += in[threadIdx.x];
    if (blockIdx.x == 0 && threadIdx.x < tail) sum += in[head + 4 * nvec + threadIdx.x];
    size_t i = (size_t)blockIdx.x * TILE + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * TILE;
    for (; i + (UNROLL - 1) * BLOCK_SIZE < nvec; i += stride) { // all UNROLL loads exist
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = LOAD4(body + i + u * BLOCK_SIZE); // all in flight
#pragma unroll
        for (int u = 0; u < UNROLL; u++) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) { // the last, partial tile: each load guarded
        if (i + u * BLOCK_SIZE < nvec) {
            float4 v = LOAD4(body + i + u * BLOCK_SIZE);
            sum += (v.x + v.y) + (v.z + v.w);
        }
    }
    return sum;
}

// (a) atomic: *out must be 0 before the launch.
__global__ void reduce_atomic_kernel(const float *in, size_t n, float *out, int stream)
{
    float sum = block_sum(thread_sum(in, n, stream));
    if (threadIdx.x == 0) atomicAdd(out, sum); // one atomic per block; blocks arrive in any order
}

// Counts the calling block done; returns the count before it.
// atomicInc(p, m) stores (old >= m ? 0 : old + 1) and returns old: the blocks
// see 0, 1, ..., m in some order, and the one that sees m also wraps the
// counter back to 0 for the next launch. The memory order is the point:
//   release  this thread's earlier store (the block's partial) is visible
//            GPU-wide before the new count is, or the last block could add a
//            stale partial;
//   acquire  the block that sees m then sees every partial stored before the
//            other blocks counted themselves.
__device__ unsigned int count_done(unsigned int *retired, unsigned int m)
{
#if CLASSIC_FENCES || __CUDA_ARCH__ < 700
    __threadfence();                      // release: a full fence before the count
    unsigned int old = atomicInc(retired, m);
    if (old == m) __threadfence();        // acquire: a full fence after it, last block only
    return old;
#else
    // The same order in one instruction: the atomic itself releases and acquires.
    unsigned int old;
    asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(retired), "r"(m) : "memory");
    return old;
#endif
}

// (b) fixed: *retired must be 0 before the first launch; each launch leaves it 0.
__global__ void reduce_fixed_kernel(const float *in, size_t n, float *partials, unsigned int *retired,
                                    float *out, int stream)
{
    __shared__ bool last; // is this block the last one to finish?
    float sum = block_sum(thread_sum(in, n, stream));
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = sum;
        last = (count_done(retired, gridDim.x - 1) == gridDim.x - 1);
    }
    __syncthreads(); // shares `last` (and thread 0's view of memory) with the whole block
    if (!last) return; // the same for every thread of the block: no barrier below is split

    // The last block: thread t adds partials t, t + BLOCK_SIZE, ... in index
    // order, then the fixed shuffle tree. Which block is last varies; the order does not.
    // __ldcg reads through L2, where the other blocks' partials are, never an old L1 line.
    // (block_sum's shared slots are reused safely: warp 0 read them before the barrier above.)
    float v = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += BLOCK_SIZE) v += __ldcg(&partials[b]);
    v = block_sum(v);
    if (threadIdx.x == 0) *out = v;
}

// ---- launch ---------------------------------------------------------------

static int g_max_blocks;        // SMs x resident blocks per SM, set in main
static float *g_partials;       // one float per block
static unsigned int *g_retired; // the blocks-done counter, zeroed once in main

// One tile per block at most and no more blocks than fit at once: depends
// only on n and the GPU, never on timing, so the fixed result is repeatable.
// Evict-first loads pay for inputs about the size of L2 and cost 2-4% on
// large ones (results/tune-lesson12-nvidia-h200.txt), so the choice depends on n.
static int stream_for(size_t n) { return (double)n * sizeof(float) <= STREAM_BELOW_L2 * (double)g_dev.l2_bytes; }

static int grid_for(size_t n)
{
    size_t tiles = (n / 4 + TILE - 1) / TILE;
    int blocks = tiles < (size_t)g_max_blocks ? (int)tiles : g_max_blocks;
    return blocks < 1 ? 1 : blocks;
}

static void reduce_atomic(const float *d_in, size_t n, float *d_out)
{
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); // the atomics add into it; n == 0 ends here
    if (n == 0) return;
    reduce_atomic_kernel<<<grid_for(n), BLOCK_SIZE>>>(d_in, n, d_out, stream_for(n));
    CUDA_CHECK_LAST();
}

static void reduce_fixed(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // nothing to read: the sum is 0, no kernel
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    reduce_fixed_kernel<<<grid_for(n), BLOCK_SIZE>>>(d_in, n, g_partials, g_retired, d_out, stream_for(n)); // the only launch
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"12_single_pass", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    Input in = make_input(&opt);

    int per_sm_atomic = 0, per_sm_fixed = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_atomic, reduce_atomic_kernel, BLOCK_SIZE, 0));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_fixed, reduce_fixed_kernel, BLOCK_SIZE, 0));
    // one grid rule for both variants, so they read exactly the same way
    int per_sm = per_sm_atomic < per_sm_fixed ? per_sm_atomic : per_sm_fixed;
    if (BLOCKS_PER_SM > 0 && BLOCKS_PER_SM < per_sm) per_sm = BLOCKS_PER_SM;
    if (per_sm < 1) per_sm = 1;
    g_max_blocks = g_dev.sm_count * per_sm;
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)g_max_blocks * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_retired, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_retired, 0, sizeof(unsigned int)));

    run_variant(&opt, &in, "atomic", reduce_atomic);
    run_variant(&opt, &in, "fixed", reduce_fixed);

    CUDA_CHECK(cudaFree(g_retired));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
