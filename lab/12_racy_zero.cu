// uses: cccl
/*
 * Lab 12: what the atomic finish's order costs. Lesson 12's atomic finish
 * zeroes *out inside the kernel, with no memset, and orders that zero before
 * every add with a swap and a flag (here: a ticket in every block). A kernel could
 * zero *out in block 0 with no order at all. This lab times lesson 12's
 * kernel (512 threads x 8 float4s, a block per tile of 16 Ki floats) with
 * six ways to zero *out, and a wider kernel with two, beside CUB, in one
 * process, in turns:
 *
 *   cub        CUB's DeviceReduce::Sum, as lesson 14's cub row calls it
 *   memset     a memset, then one atomicAdd per block
 *   flag       the ordered zero with a ticket in every block (lesson 12 swaps
 *              in blocks 0..255 only): the block with ticket 0 zeroes, then
 *              raises a flag; the others add once they see it
 *   flag_relaxed  flag with its loads of the flag relaxed, not acquire: the
 *              same waits without the acquire's part (in the listing, the
 *              CCTL.IVALL that empties the SM's L1). A measuring copy only:
 *              without the acquire the memory model no longer puts the zero
 *              before the add
 *   racy       thread 0 of block 0 zeroes *out as the kernel starts, and
 *              every block adds its sum when it is done; nothing orders the
 *              zero before another block's add
 *   racy_late  the same, but block 0 zeroes just before its own add, once
 *              it has read and summed its share
 *   racy_ticket  racy, plus flag's ticket: each block's thread 0 takes
 *              one at its start and waits for its answer before it adds (the
 *              ticket decides nothing here): flag's work without the flag
 *   wide_racy  the shape of many fast sums found online: 1024 threads, 16
 *              float4s a thread read before any add, a block per 64 Ki floats,
 *              thread 0 of block 0 zeroing *out first in the source
 *   wide_memset  the same shape after a memset, with no zero in the kernel
 *
 * The racy finishes are wrong (and flag_relaxed, by the memory model): an
 * add that reaches *out before the zero is lost. In racy and racy_ticket
 * that needs a block to finish its reading before block 0's zero lands,
 * which CUDA does not rule out (it does not even say that block 0 starts
 * first) but which the timing makes rare. In
 * racy_late the blocks that finish before block 0 lose their adds, and in
 * wide_racy too: nothing ties the zero to the read-only loads after it, and
 * the compiler stores it after them (lab/12_racy_zero.md). The
 * harness checks every variant after its warm-up and on its last timed
 * repetition; a variant that fails its warm-up is not timed.
 *
 *     make lab_12_racy_zero && ./lab_12_racy_zero -n 2^20,2^22,2^24 --flush clean
 */
#include "harness.h"
#include <cuda/atomic>
#include <cub/device/device_reduce.cuh>

#define BLOCK_SIZE 512 // lesson 12's block, loads per thread and launch bound
#define UNROLL 8
#define MIN_BLOCKS 2
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL) // float4s one block reads per round
#define FULL_MASK 0xffffffffu

static __device__ float thread_sum(const float *in, size_t n);
static __device__ float warp_sum(float v);
static __device__ float block_sum(float v);

// ---- the finishes ------------------------------------------------------------

__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_memset_kernel(const float *in, size_t n, float *out)
{
    float v = block_sum(thread_sum(in, n));
    if (threadIdx.x == 0) atomicAdd(out, v);
}

// lesson 12's reduce_atomic_kernel
__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_flag_kernel(const float *in, size_t n, unsigned int *state, unsigned int launch, float *out)
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

// flag, with relaxed loads of the flag: a measuring copy, wrong by the memory model (no acquire).
__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_flag_relaxed_kernel(const float *in, size_t n, unsigned int *state, unsigned int launch, float *out)
{
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> flag(state[32]);
    unsigned int ticket = threadIdx.x == 0 ? atomicInc(&state[0], gridDim.x - 1) : 1;
    float v = thread_sum(in, n);
    if (ticket == 0) {
        *out = 0.0f;
        flag.store(launch, cuda::memory_order_release);
    }
    unsigned int seen = threadIdx.x == 0 && ticket ? flag.load(cuda::memory_order_relaxed) : launch;
    v = block_sum(v);
    if (threadIdx.x != 0) return;
    while (seen != launch) seen = flag.load(cuda::memory_order_relaxed);
    atomicAdd(out, v);
}

// WRONG on purpose: nothing orders block 0's zero before the other blocks' adds.
enum { AT_START, LATE, TICKET };
template <int HOW>
__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_racy_kernel(const float *in, size_t n, unsigned int *state, float *out)
{
    if (HOW != LATE && blockIdx.x == 0 && threadIdx.x == 0) *out = 0.0f;
    unsigned int ticket = HOW == TICKET && threadIdx.x == 0 ? atomicInc(&state[0], gridDim.x - 1) : 0; // back during the loads
    float v = block_sum(thread_sum(in, n));
    if (threadIdx.x != 0) return;
    if (HOW == LATE && blockIdx.x == 0) *out = 0.0f;
    if (ticket == 0xffffffffu) v = 0.0f; // never: atomicInc's answer is below gridDim.x; the add waits for it
    atomicAdd(out, v);
}

// ---- the wide shape -----------------------------------------------------------
#define WIDE_THREADS 1024 // threads a block
#define WIDE_LOADS 16     // float4s a thread, all read before the first add
// Any n and start: block 0's first threads add the 0..3 floats before the first 16-byte boundary and
// the 0..3 after the last whole float4, as lesson 11 does; every load is __ldg (read-only). ZERO: thread 0
// of block 0 zeroes *out first (wide_racy, WRONG on purpose); else a memset has (wide_memset).
template <int ZERO>
__global__ void __launch_bounds__(WIDE_THREADS, 1) reduce_wide_kernel(const float *in, size_t n, float *out)
{
    if (ZERO && blockIdx.x == 0 && threadIdx.x == 0) *out = 0.0f; // first here, not in the machine code
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / sizeof(float);
    if (head > n) head = n;
    size_t nvec = (n - head) / 4, tail = n - head - 4 * nvec;
    const float4 *body = (const float4 *)(in + head);
    float s = 0.0f;
    if (blockIdx.x == 0 && threadIdx.x < head) s += __ldg(&in[threadIdx.x]);
    if (blockIdx.x == 0 && threadIdx.x < tail) s += __ldg(&in[head + 4 * nvec + threadIdx.x]);
    size_t i = (size_t)blockIdx.x * (WIDE_THREADS * WIDE_LOADS) + threadIdx.x;
    float4 v[WIDE_LOADS];
#pragma unroll
    for (int k = 0; k < WIDE_LOADS; k++)
        v[k] = i + k * WIDE_THREADS < nvec ? __ldg(&body[i + k * WIDE_THREADS]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int k = 0; k < WIDE_LOADS; k++) s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    __shared__ float warp_sums[WIDE_THREADS / 32];
    s = warp_sum(s);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = warp_sum(warp_sums[threadIdx.x]); // 32 warps: one slot a lane
        if (threadIdx.x == 0) atomicAdd(out, s);
    }
}

// ---- launch ------------------------------------------------------------------

static unsigned int *g_state; // [0] flag's (and flag_relaxed's) tickets, [32] their flag; [1] racy_ticket's tickets
static unsigned int g_launch; // the flag and flag_relaxed launches' number, from 1 (one count: they share the flag)

static size_t tiles12(size_t n) { return (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE); } // lesson 12's grid

static void sum_memset(const float *d_in, size_t n, float *d_out)
{
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
    if (n == 0) return;
    reduce_memset_kernel<<<(unsigned int)tiles12(n), BLOCK_SIZE>>>(d_in, n, d_out);
    CUDA_CHECK_LAST();
}
static void sum_flag(const float *d_in, size_t n, float *d_out)
{
    size_t blocks = n ? tiles12(n) : 1;
    reduce_flag_kernel<<<(unsigned int)blocks, BLOCK_SIZE>>>(d_in, n, g_state, ++g_launch, d_out);
    CUDA_CHECK_LAST();
}
static void sum_flag_relaxed(const float *d_in, size_t n, float *d_out)
{
    size_t blocks = n ? tiles12(n) : 1;
    reduce_flag_relaxed_kernel<<<(unsigned int)blocks, BLOCK_SIZE>>>(d_in, n, g_state, ++g_launch, d_out);
    CUDA_CHECK_LAST();
}
template <int HOW>
static void sum_racy(const float *d_in, size_t n, float *d_out)
{
    size_t blocks = n ? tiles12(n) : 1;
    reduce_racy_kernel<HOW><<<(unsigned int)blocks, BLOCK_SIZE>>>(d_in, n, g_state + 1, d_out); // tickets apart from flag's
    CUDA_CHECK_LAST();
}

template <int ZERO>
static void sum_wide(const float *d_in, size_t n, float *d_out)
{
    if (!ZERO) CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
    size_t blocks = (n + 4 * (size_t)(WIDE_THREADS * WIDE_LOADS) - 1) / (4 * (size_t)(WIDE_THREADS * WIDE_LOADS));
    reduce_wide_kernel<ZERO><<<(unsigned int)(blocks ? blocks : 1), WIDE_THREADS>>>(d_in, n, d_out);
    CUDA_CHECK_LAST();
}

// CUB's default sum, lesson 14's cub row: scratch sized once, before the timing.
static void *g_cub_temp;
static size_t g_cub_temp_bytes;
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

static const LessonInfo info = {"lab_12_racy_zero", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

static int run(Options opt)
{
    Input in = make_input(&opt);
    if (!opt.csv) printf("grid: %zu blocks of %d threads, one per tile of %d floats\n", tiles12(opt.n), BLOCK_SIZE, 4 * TILE);
    CUDA_CHECK(cudaMalloc((void **)&g_state, 64 * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_state, 0, 64 * sizeof(unsigned int))); // no ticket taken, no launch seen
    g_launch = 0;
    CUDA_CHECK(cub_sum(NULL, &g_cub_temp_bytes, in.d_in, NULL, in.n));
    CUDA_CHECK(cudaMalloc(&g_cub_temp, g_cub_temp_bytes > 0 ? g_cub_temp_bytes : 1));
    SumVariant v[] = {
        {"cub", sum_cub, &in},
        {"memset", sum_memset, &in},
        {"flag", sum_flag, &in},
        {"flag_relaxed", sum_flag_relaxed, &in},
        {"racy", sum_racy<AT_START>, &in},
        {"racy_late", sum_racy<LATE>, &in},
        {"racy_ticket", sum_racy<TICKET>, &in},
        {"wide_racy", sum_wide<1>, &in},
        {"wide_memset", sum_wide<0>, &in},
    };
    run_variants(&opt, v, (int)(sizeof v / sizeof v[0]));
    CUDA_CHECK(cudaFree(g_cub_temp));
    CUDA_CHECK(cudaFree(g_state));
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
