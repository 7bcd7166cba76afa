// uses: cccl
/*
 * Lab 12: lesson 11's loop against one block per tile, and a finish with no memset.
 *
 * Lesson 11 sizes its grid to one wave of resident blocks, and each thread loops over the input two float4s at a
 * time (a grid-stride loop). The other
 * common shape has no loop: a block of TILE_THREADS threads reads one tile of
 * TILE_THREADS x TILE_LOADS float4s, every thread issuing all TILE_LOADS loads
 * before its first add, and the grid has one block per tile. In between, the
 * grid is capped at W waves of resident blocks and each block reads a run of
 * consecutive tiles (variants *_wW). Three finishes:
 *   atomic  a memset zeroes *out, then one atomicAdd per block (lesson 12's (a)
 *           zeroes it behind a flag instead), on lesson 11's loop, in one wave
 *   acc     no memset: each block atomicAdds into an accumulator that is 0
 *           between launches, then counts itself done (count_done); the last
 *           block takes the accumulator's value into *out and puts 0 back
 *   fixed   lesson 12's (b): partials, count_done, the last block adds them
 *           in index order (the same bits every run)
 * Variants, timed in turns in one process: cub, cccl_not_guaranteed (CUB
 * 3.4+), atomic, acc, fixed (one wave, lesson 11's loop), tile_atomic,
 * tile_acc, tile_fixed (one tile per block), tile_atomic_w1/_w4/_w16,
 * tile_acc_w4, tile_fixed_w1/_w4/_w16. The tile shape is a build option.
 * lab/12_tiles.md has what they gave.
 *
 *     make lab_12_tiles && ./lab_12_tiles -n 2^20,2^24,2^28,2^30 --flush clean
 *     make BUILDDIR=build/t EXTRA="-DTILE_THREADS=256 -DTILE_LOADS=16" build/t/lab_12_tiles
 */
#include "harness.h"
#include <cub/device/device_reduce.cuh>
#include "cccl_env.h" // CUB 3.4+: HAVE_DETERMINISM, CCCL_ENV(level) with our scratch

#define BLOCK_SIZE 512 // lesson 11's block and loads per thread (lesson 12 reads 8)
#define UNROLL 2
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL) // float4s one block reads per round
#define FULL_MASK 0xffffffffu

#ifndef TILE_THREADS // the tile shape, a build option: make lab_12_tiles EXTRA="-DTILE_THREADS=256 -DTILE_LOADS=16"
#define TILE_THREADS 512                       // threads per block
#endif
#ifndef TILE_LOADS
#define TILE_LOADS 16                          // float4 loads per thread, all issued before any add
#endif
#define TILE4 (TILE_THREADS * TILE_LOADS)      // float4s per tile

// At the end of this file: lesson 11's reading (UNROLL 2, no __launch_bounds__)
// with the memset atomic finish and lesson 12's count_done.
__device__ float warp_sum(float v);
__device__ float block_sum(float v);
__device__ float thread_sum(const float *in, size_t n);
__device__ unsigned int count_done(unsigned int *retired, unsigned int m);
__global__ void reduce_atomic_kernel(const float *in, size_t n, float *out);
__global__ void reduce_fixed_kernel(const float *in, size_t n, float *partials, unsigned int *retired, float *out);

// ---- kernels ---------------------------------------------------------------

// Lesson 11's loop and one-wave grid, the accumulator finish. *acc and *retired are 0
// before the launch, and the launch leaves them 0.
__global__ void reduce_acc_kernel(const float *in, size_t n, float *acc, unsigned int *retired, float *out)
{
    float v = block_sum(thread_sum(in, n));
    if (threadIdx.x == 0) {
        atomicAdd(acc, v); // ordered before the count by count_done's release
        if (count_done(retired, gridDim.x - 1) == gridDim.x - 1) // acquire: every block's add is in *acc
            *out = atomicExch(acc, 0.0f); // read it and leave 0 for the next launch
    }
}

// block_sum for TILE_THREADS threads (TILE_THREADS / 32 warps). Every thread calls it.
__device__ float tile_block_sum(float v)
{
    __shared__ float warp_sums[TILE_THREADS / 32];
    unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) v = warp_sum(lane < TILE_THREADS / 32 ? warp_sums[lane] : 0.0f);
    return v;
}

// Tiles blockIdx.x * per .. + per - 1 of the float4 body (lesson 11's head,
// body and tail): in each, thread t reads float4s t, t + TILE_THREADS, ...,
// all TILE_LOADS loads first. Only the last tile can be partial: its loads are
// guarded one by one. Block 0 also adds the scalar head and tail.
__device__ float tile_thread_sum(const float *in, size_t n, size_t per)
{
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / sizeof(float);
    if (head > n) head = n;
    size_t nvec = (n - head) / 4, tail = n - head - 4 * nvec;
    const float4 *body = (const float4 *)(in + head);
    float sum = 0.0f;
    if (blockIdx.x == 0 && threadIdx.x < head) sum += in[threadIdx.x];
    if (blockIdx.x == 0 && threadIdx.x < tail) sum += in[head + 4 * nvec + threadIdx.x];
    for (size_t t = (size_t)blockIdx.x * per, end = t + per; t < end; t++) {
        size_t first = t * TILE4, i = first + threadIdx.x;
        if (first >= nvec) break;
        float4 v[TILE_LOADS];
        if (first + TILE4 <= nvec) { // a whole tile: no guards
#pragma unroll
            for (int u = 0; u < TILE_LOADS; u++) v[u] = __ldg(&body[i + u * TILE_THREADS]);
        } else {
#pragma unroll
            for (int u = 0; u < TILE_LOADS; u++)
                v[u] = i + u * TILE_THREADS < nvec ? __ldg(&body[i + u * TILE_THREADS]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int u = 0; u < TILE_LOADS; u++) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    return sum;
}

// per tiles per block; *out is 0 before the launch.
__global__ void __launch_bounds__(TILE_THREADS) tile_atomic_kernel(const float *in, size_t n, size_t per, float *out)
{
    float v = tile_block_sum(tile_thread_sum(in, n, per));
    if (threadIdx.x == 0) atomicAdd(out, v);
}

// per tiles per block, the accumulator finish (as reduce_acc_kernel).
__global__ void __launch_bounds__(TILE_THREADS) tile_acc_kernel(const float *in, size_t n, size_t per, float *acc,
                                                                unsigned int *retired, float *out)
{
    float v = tile_block_sum(tile_thread_sum(in, n, per));
    if (threadIdx.x == 0) {
        atomicAdd(acc, v);
        if (count_done(retired, gridDim.x - 1) == gridDim.x - 1) *out = atomicExch(acc, 0.0f);
    }
}

// per tiles per block, lesson 12's fixed finish: partials[blockIdx.x], the
// last block adds them in index order.
__global__ void __launch_bounds__(TILE_THREADS) tile_fixed_kernel(const float *in, size_t n, size_t per, float *partials,
                                                                  unsigned int *retired, float *out)
{
    __shared__ bool last;
    float v = tile_block_sum(tile_thread_sum(in, n, per));
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        last = (count_done(retired, gridDim.x - 1) == gridDim.x - 1);
    }
    __syncthreads();
    if (!last) return;
    v = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += TILE_THREADS) v += __ldcg(&partials[b]);
    v = tile_block_sum(v); // the barrier above freed the slots
    if (threadIdx.x == 0) *out = v;
}

// ---- launch ---------------------------------------------------------------

static int g_max_blocks;        // one wave of reduce_fixed_kernel: SMs x resident blocks
static float *g_partials;       // room for the larger of the two grids
static unsigned int *g_retired; // 0 between launches
static float *g_acc;            // 0 between launches
static void *g_cub_temp;
static size_t g_cub_temp_bytes;

static int grid12(size_t n)
{
    size_t wanted = (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE);
    return wanted < (size_t)g_max_blocks ? (int)wanted : g_max_blocks;
}
static int g_tile_resident;      // tile blocks the GPU holds at once
static size_t tiles(size_t n) { size_t t = (n / 4 + TILE4 - 1) / TILE4; return t > 0 ? t : 1; } // at least one block
// waves = 0: one tile per block; else at most waves x g_tile_resident blocks,
// each with a run of per consecutive tiles.
static int tile_grid(size_t n, int waves, size_t *per)
{
    size_t t = tiles(n), most = waves ? (size_t)waves * g_tile_resident : t;
    *per = (t + most - 1) / most;
    return (int)((t + *per - 1) / *per);
}

static void sum_atomic(const float *d_in, size_t n, float *d_out)
{
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
    if (n == 0) return;
    reduce_atomic_kernel<<<grid12(n), BLOCK_SIZE>>>(d_in, n, d_out);
    CUDA_CHECK_LAST();
}
static void sum_acc(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    reduce_acc_kernel<<<grid12(n), BLOCK_SIZE>>>(d_in, n, g_acc, g_retired, d_out);
    CUDA_CHECK_LAST();
}
static void sum_fixed(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    reduce_fixed_kernel<<<grid12(n), BLOCK_SIZE>>>(d_in, n, g_partials, g_retired, d_out);
    CUDA_CHECK_LAST();
}
static void tile_atomic(const float *d_in, size_t n, float *d_out, int waves)
{
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
    if (n == 0) return;
    size_t per;
    int grid = tile_grid(n, waves, &per);
    tile_atomic_kernel<<<grid, TILE_THREADS>>>(d_in, n, per, d_out);
    CUDA_CHECK_LAST();
}
static void tile_acc(const float *d_in, size_t n, float *d_out, int waves)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    size_t per;
    int grid = tile_grid(n, waves, &per);
    tile_acc_kernel<<<grid, TILE_THREADS>>>(d_in, n, per, g_acc, g_retired, d_out);
    CUDA_CHECK_LAST();
}
static void tile_fixed(const float *d_in, size_t n, float *d_out, int waves)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    size_t per;
    int grid = tile_grid(n, waves, &per);
    tile_fixed_kernel<<<grid, TILE_THREADS>>>(d_in, n, per, g_partials, g_retired, d_out);
    CUDA_CHECK_LAST();
}
static void sum_tile_atomic(const float *d_in, size_t n, float *d_out) { tile_atomic(d_in, n, d_out, 0); }
static void sum_tile_atomic_w1(const float *d_in, size_t n, float *d_out) { tile_atomic(d_in, n, d_out, 1); }
static void sum_tile_atomic_w4(const float *d_in, size_t n, float *d_out) { tile_atomic(d_in, n, d_out, 4); }
static void sum_tile_atomic_w16(const float *d_in, size_t n, float *d_out) { tile_atomic(d_in, n, d_out, 16); }
static void sum_tile_acc(const float *d_in, size_t n, float *d_out) { tile_acc(d_in, n, d_out, 0); }
static void sum_tile_acc_w4(const float *d_in, size_t n, float *d_out) { tile_acc(d_in, n, d_out, 4); }
static void sum_tile_fixed(const float *d_in, size_t n, float *d_out) { tile_fixed(d_in, n, d_out, 0); }
static void sum_tile_fixed_w1(const float *d_in, size_t n, float *d_out) { tile_fixed(d_in, n, d_out, 1); }
static void sum_tile_fixed_w4(const float *d_in, size_t n, float *d_out) { tile_fixed(d_in, n, d_out, 4); }
static void sum_tile_fixed_w16(const float *d_in, size_t n, float *d_out) { tile_fixed(d_in, n, d_out, 16); }

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
#if HAVE_DETERMINISM
static void sum_cccl_not_guaranteed(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    if (n <= 0x7FFFFFFF) CUDA_CHECK(cub::DeviceReduce::Sum(d_in, d_out, (int)n, CCCL_ENV(not_guaranteed)));
    else CUDA_CHECK(cub::DeviceReduce::Sum(d_in, d_out, (unsigned long long)n, CCCL_ENV(not_guaranteed)));
}
#endif

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"lab_12_tiles", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

static int run(Options opt)
{
    Input in = make_input(&opt);
    int per_sm = 0, per_sm_tile = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_fixed_kernel, BLOCK_SIZE, 0));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_tile, tile_fixed_kernel, TILE_THREADS, 0));
    if (per_sm < 1) per_sm = 1;
    if (per_sm_tile < 1) per_sm_tile = 1;
    g_tile_resident = g_dev.sm_count * per_sm_tile;
    g_max_blocks = g_dev.sm_count * per_sm;
    if (!opt.csv)
        printf("lesson 12's grid: %d SMs x %d = %d blocks of %d; %zu tiles of %d x %d float4s (%d blocks resident per SM)\n",
               g_dev.sm_count, per_sm, g_max_blocks, BLOCK_SIZE, tiles(in.n), TILE_THREADS, TILE_LOADS, per_sm_tile);
    size_t most = tiles(in.n) > (size_t)g_max_blocks ? tiles(in.n) : (size_t)g_max_blocks;
    CUDA_CHECK(cudaMalloc((void **)&g_partials, most * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_retired, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_retired, 0, sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc((void **)&g_acc, sizeof(float)));
    CUDA_CHECK(cudaMemset(g_acc, 0, sizeof(float)));
    CUDA_CHECK(cub_sum(NULL, &g_cub_temp_bytes, in.d_in, NULL, in.n));
    CUDA_CHECK(cudaMalloc(&g_cub_temp, g_cub_temp_bytes > 0 ? g_cub_temp_bytes : 1));
#if HAVE_DETERMINISM
    scratch_sizing();
    sum_cccl_not_guaranteed(in.d_in, in.n, g_out);
    CUDA_CHECK(cudaDeviceSynchronize());
    scratch_sized();
#endif
    SumVariant v[] = {
        {"cub", sum_cub, &in},
#if HAVE_DETERMINISM
        {"cccl_not_guaranteed", sum_cccl_not_guaranteed, &in},
#endif
        {"atomic", sum_atomic, &in},
        {"acc", sum_acc, &in},
        {"fixed", sum_fixed, &in},
        {"tile_atomic", sum_tile_atomic, &in},
        {"tile_atomic_w1", sum_tile_atomic_w1, &in},
        {"tile_atomic_w4", sum_tile_atomic_w4, &in},
        {"tile_atomic_w16", sum_tile_atomic_w16, &in},
        {"tile_acc", sum_tile_acc, &in},
        {"tile_acc_w4", sum_tile_acc_w4, &in},
        {"tile_fixed", sum_tile_fixed, &in},
        {"tile_fixed_w1", sum_tile_fixed_w1, &in},
        {"tile_fixed_w4", sum_tile_fixed_w4, &in},
        {"tile_fixed_w16", sum_tile_fixed_w16, &in},
    };
    run_variants(&opt, v, (int)(sizeof v / sizeof v[0]));
#if HAVE_DETERMINISM
    scratch_free();
#endif
    CUDA_CHECK(cudaFree(g_cub_temp));
    CUDA_CHECK(cudaFree(g_acc));
    CUDA_CHECK(cudaFree(g_retired));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }

// ---- lesson 12's pieces, on lesson 11's reading -----------------------------

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

// (a) the memset atomic finish. Any grid of BLOCK_SIZE-thread blocks; together
// they read in[0..n) once (thread_sum). Each block adds its sum into *out,
// which must hold 0 before the launch: one atomicAdd per block.
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
