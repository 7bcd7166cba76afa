/*
 * Lab 12: fewer blocks for the fixed finish. Lesson 12's fixed finish makes
 * each block store its sum, fence, count itself and wait for the count's
 * answer before it exits (lab/12_stamped_finish.md); the atomic finish's
 * blocks send one atomicAdd and exit. A block that reads more tiles pays
 * that exit once for more bytes. This lab times lesson 12's kernel (512
 * threads x 8 float4s; a tile is one round of the block, 16 Ki floats) with
 * the fixed finish on four grids, beside lesson 12's atomic finish, in one
 * process, in turns:
 *
 *   atomic     lesson 12's atomic finish (no memset, a flag; here a ticket in
 *              every block, where lesson 12 swaps in blocks 0..255), a block per tile
 *   fixed      lesson 12's fixed finish, a block per tile
 *   fixed_p2   the same kernel, a block per 2 tiles
 *   fixed_p4   a block per 4 tiles
 *   fixed_p8   a block per 8 tiles
 *
 * fixed_pP launches at least 256 blocks (one per tile when there are
 * fewer than 256 tiles): about what an H100 or H200 runs at once (264),
 * so that no SM waits idle. Its blocks take the tiles of
 * lesson 11's grid-stride loop: block b reads tiles b, b + grid, ... Every
 * fixed finish adds the same partials' tree in index order for its grid,
 * so each is the same bits every run; two grids may differ in the last bits.
 *
 *     make lab_12_fixed_grid && ./lab_12_fixed_grid -n 2^24,2^26,2^28,2^30 --flush clean
 */
#include "harness.h"
#include <cuda/atomic>

#define BLOCK_SIZE 512 // lesson 12's block, loads per thread and launch bound
#define UNROLL 8
#define MIN_BLOCKS 2
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL) // float4s one block reads per round
#define FULL_MASK 0xffffffffu

static __device__ float thread_sum(const float *in, size_t n);
static __device__ float warp_sum(float v);
static __device__ float block_sum(float v);

// ---- lesson 12's two finishes, unchanged ------------------------------------------

__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_atomic_kernel(const float *in, size_t n, unsigned int *state, unsigned int launch, float *out)
{
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> flag(state[32]);
    unsigned int ticket = threadIdx.x == 0 ? atomicInc(&state[0], gridDim.x - 1) : 1;
    float v = thread_sum(in, n);
    if (ticket == 0) {
        *out = 0.0f;
        flag.store(launch, cuda::memory_order_release);
    }
    unsigned int seen = threadIdx.x == 0 && ticket ? flag.load(cuda::memory_order_acquire) : launch;
    v = block_sum(v);
    if (threadIdx.x != 0) return;
    while (seen != launch) seen = flag.load(cuda::memory_order_acquire);
    atomicAdd(out, v);
}

__device__ unsigned int count_done(unsigned int *retired, unsigned int m)
{
    unsigned int old;
    size_t g = __cvta_generic_to_global(retired);
    asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(g), "r"(m) : "memory");
    return old;
}

__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_fixed_kernel(const float *in, size_t n, float *partials, unsigned int *retired, float *out)
{
    __shared__ bool last;
    float v = block_sum(thread_sum(in, n));
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        last = (count_done(retired, gridDim.x - 1) == gridDim.x - 1);
    }
    __syncthreads();
    if (!last) return;
    v = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += 4 * UNROLL * BLOCK_SIZE) {
        float w[4 * UNROLL];
#pragma unroll
        for (int u = 0; u < 4 * UNROLL; u++) w[u] = b + u * BLOCK_SIZE < gridDim.x ? __ldcg(&partials[b + u * BLOCK_SIZE]) : 0.0f;
#pragma unroll
        for (int u = 0; u < 4 * UNROLL; u++) v += w[u];
    }
    v = block_sum(v);
    if (threadIdx.x == 0) *out = v;
}

// ---- launch ------------------------------------------------------------------

static float *g_partials;       // one partial per block
static unsigned int *g_retired; // [0] the blocks-done counter; after it the atomic finish's tickets ([1]) and flag ([33])
static unsigned int g_launch;   // the atomic launches' number, from 1
static size_t g_resident;       // SMs x blocks of this kernel an SM holds at once

static size_t tiles12(size_t n) { return (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE); } // lesson 12's grid

static void sum_atomic(const float *d_in, size_t n, float *d_out)
{
    size_t blocks = n ? tiles12(n) : 1;
    reduce_atomic_kernel<<<(unsigned int)blocks, BLOCK_SIZE>>>(d_in, n, g_retired + 1, ++g_launch, d_out);
    CUDA_CHECK_LAST();
}
// A block per P tiles, but at least 256 blocks (or one per tile where there are fewer).
static size_t fixed_grid(size_t n, size_t P)
{
    size_t tiles = tiles12(n), blocks = (tiles + P - 1) / P, least = tiles < 256 ? tiles : 256;
    return blocks > least ? blocks : least;
}
template <int P>
static void sum_fixed(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) {
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    reduce_fixed_kernel<<<(unsigned int)fixed_grid(n, P), BLOCK_SIZE>>>(d_in, n, g_partials, g_retired, d_out);
    CUDA_CHECK_LAST();
}

static const LessonInfo info = {"lab_12_fixed_grid", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

static int run(Options opt)
{
    Input in = make_input(&opt); // also reads the SM count into g_dev
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_fixed_kernel, BLOCK_SIZE, 0));
    g_resident = (size_t)g_dev.sm_count * (per_sm > 0 ? per_sm : 1);
    if (!opt.csv)
        printf("blocks: %zu (a block per tile), %zu, %zu, %zu (per 2, 4, 8 tiles); %zu fit at once\n", tiles12(opt.n),
               fixed_grid(opt.n, 2), fixed_grid(opt.n, 4), fixed_grid(opt.n, 8), g_resident);
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (tiles12(opt.n) + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_retired, 64 * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_retired, 0, 64 * sizeof(unsigned int))); // no block counted, no ticket taken, no launch seen
    g_launch = 0;
    SumVariant v[] = {
        {"atomic", sum_atomic, &in},
        {"fixed", sum_fixed<1>, &in},
        {"fixed_p2", sum_fixed<2>, &in},
        {"fixed_p4", sum_fixed<4>, &in},
        {"fixed_p8", sum_fixed<8>, &in},
    };
    run_variants(&opt, v, (int)(sizeof v / sizeof v[0]));
    CUDA_CHECK(cudaFree(g_retired));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }

// ---- lesson 12's reading and block sum, unchanged ---------------------------

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
    // No barrier at the end: a second call must come after one (lesson 12's fixed finish).
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
