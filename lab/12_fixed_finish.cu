// uses: cccl
/*
 * Lab 12: the fixed finish's tail. On one wave every block waits for
 * count_done's answer before it exits and the last block adds one partial
 * per block; lesson 12 gives its atomic finish a block per tile of 512 x 8
 * and its fixed finish a block per 4 such tiles (at least 256 blocks).
 * This lab times fixed finishes on one wave and with more blocks,
 * beside the atomic one and CUB, in one process, in turns, all on lesson 11's
 * reading (512 threads x 2 float4s a round; lesson 12 reads 8):
 *
 *   cub          cub::DeviceReduce::Sum
 *   atomic       the memset atomic finish (lesson 12's with a memset, not its flag), a block per tile
 *   fixed        lesson 12's fixed finish, on one wave (lesson 11's grid)
 *   fixed_pP     lesson 12's fixed kernel, one block per P tiles (at least
 *                one wave of blocks), its partials loop issuing 8 loads
 *                before its adds (the same additions in the same order)
 *   fixed2_pP    two levels of last-block-done, one block per P tiles: blocks
 *                form groups of BLOCK_SIZE consecutive blocks, each group with
 *                its own counter; the last block of a group adds the group's
 *                partials (one per thread) into a group sum, and the last
 *                group adds the group sums in index order. One group: its sum
 *                is the result. Every sum has a fixed order.
 *   tile_atomic, tile_fixed2   the same finishes over tiles of TILE_THREADS x
 *                TILE_LOADS float4s (256 x 16 unless built otherwise: the shape
 *                of lab 12 tiles' tables), all loads issued before any add,
 *                one block per tile
 *   fixed_dynC   one wave (4 blocks an SM, as fixed); the float4 body is
 *                cut into chunks of C tiles; at the start of each
 *                chunk a block asks a ticket counter for its next one.
 *                Each chunk's sum has a fixed order
 *                (thread t: float4s t, t + BLOCK_SIZE, ..., then block_sum)
 *                and goes to partials[chunk]; the last block adds the chunk
 *                sums in index order, and the head and tail. Which block
 *                takes a chunk changes no add: the same bits every run.
 *
 *     make lab_12_fixed_finish && ./lab_12_fixed_finish -n 2^20,2^24,2^26,2^28,2^30 --flush clean
 *
 * Built with EXTRA=-DFINISH_CLOCK, the finishes of fixed_pP, fixed2_pP and
 * tile_fixed2 also time themselves: the block that writes *out measures, with
 * its SM's clock64() and with %globaltimer, from just before it stores its own
 * partial to just after it writes *out (its counts, loads and adds, one after
 * another); after the timed lines, one '#' line per variant gives the median
 * of 21 launches. Those builds are not timed against the others.
 */
#include "harness.h"
#include <cub/device/device_reduce.cuh>

#define BLOCK_SIZE 512 // lesson 11's block and loads per thread (lesson 12 reads 8)
#define UNROLL 2
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL) // float4s one block reads per round
#define FULL_MASK 0xffffffffu

#ifndef TILE_THREADS
#define TILE_THREADS 256
#endif
#ifndef TILE_LOADS
#define TILE_LOADS 16
#endif
#define TILE4 (TILE_THREADS * TILE_LOADS) // float4s per tile

// At the end of this file: lesson 11's reading (UNROLL 2, no __launch_bounds__)
// with the memset atomic finish and lesson 12's count_done.
__device__ float warp_sum(float v);
__device__ float block_sum(float v);
__device__ float thread_sum(const float *in, size_t n);
__device__ unsigned int count_done(unsigned int *retired, unsigned int m);
__global__ void reduce_atomic_kernel(const float *in, size_t n, float *out);
__global__ void reduce_fixed_kernel(const float *in, size_t n, float *partials, unsigned int *retired, float *out);

// ---- kernels ---------------------------------------------------------------

#ifdef FINISH_CLOCK // see the header; clock64() counts the SM's cycles, %globaltimer ns
__device__ long long g_finish_cycles, g_finish_ns;
__device__ __forceinline__ long long global_ns()
{
    long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
#define FINISH_START long long c0 = clock64(), t0 = global_ns()
#define FINISH_STOP (g_finish_cycles = clock64() - c0, g_finish_ns = global_ns() - t0)
#else
#define FINISH_START
#define FINISH_STOP
#endif

// Lesson 12's fixed kernel, its partials loop issuing 8 loads before its adds.
__global__ void reduce_fixed_u8_kernel(const float *in, size_t n, float *partials, unsigned int *retired, float *out)
{
    __shared__ bool last;
    float v = block_sum(thread_sum(in, n));
    FINISH_START;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        last = (count_done(retired, gridDim.x - 1) == gridDim.x - 1);
    }
    __syncthreads();
    if (!last) return;
    v = 0.0f;
    unsigned int b = threadIdx.x;
    for (; b + 7 * BLOCK_SIZE < gridDim.x; b += 8 * BLOCK_SIZE) {
        float p[8];
#pragma unroll
        for (int u = 0; u < 8; u++) p[u] = __ldcg(&partials[b + u * BLOCK_SIZE]);
#pragma unroll
        for (int u = 0; u < 8; u++) v += p[u];
    }
    for (; b < gridDim.x; b += BLOCK_SIZE) v += __ldcg(&partials[b]);
    v = block_sum(v);
    if (threadIdx.x == 0) {
        *out = v;
        FINISH_STOP;
    }
}

// The two-level finish for a block of T threads whose sum v is in thread 0.
// counters[0..groups] are 0 before the launch; count_done leaves them 0.
template <int T, float (*BSUM)(float)>
__device__ void finish2(float v, float *partials, float *gpartials, unsigned int *counters, float *out)
{
    __shared__ bool last;
    unsigned int group = blockIdx.x / T, first = group * T;
    unsigned int members = min((unsigned int)T, gridDim.x - first);
    unsigned int groups = (gridDim.x + T - 1) / T;
    FINISH_START;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        last = (count_done(&counters[group], members - 1) == members - 1);
    }
    __syncthreads();
    if (!last) return;
    v = BSUM(threadIdx.x < members ? __ldcg(&partials[first + threadIdx.x]) : 0.0f);
    if (groups == 1) {
        if (threadIdx.x == 0) {
            *out = v;
            FINISH_STOP;
        }
        return;
    }
    if (threadIdx.x == 0) {
        gpartials[group] = v;
        last = (count_done(&counters[groups], groups - 1) == groups - 1);
    }
    __syncthreads();
    if (!last) return;
    v = 0.0f;
    for (unsigned int g = threadIdx.x; g < groups; g += T) v += __ldcg(&gpartials[g]);
    v = BSUM(v);
    if (threadIdx.x == 0) {
        *out = v;
        FINISH_STOP;
    }
}

__global__ void reduce_fixed2_kernel(const float *in, size_t n, float *partials, float *gpartials,
                                     unsigned int *counters, float *out)
{
    finish2<BLOCK_SIZE, block_sum>(block_sum(thread_sum(in, n)), partials, gpartials, counters, out);
}

// block_sum for TILE_THREADS threads. Every thread calls it.
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

// Tile blockIdx.x of the float4 body (lesson 11's head, body and tail): thread
// t reads float4s t, t + TILE_THREADS, ..., all TILE_LOADS loads first. Only
// the last tile can be partial. Block 0 also adds the scalar head and tail.
__device__ float tile_thread_sum(const float *in, size_t n)
{
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / sizeof(float);
    if (head > n) head = n;
    size_t nvec = (n - head) / 4, tail = n - head - 4 * nvec;
    const float4 *body = (const float4 *)(in + head);
    float sum = 0.0f;
    if (blockIdx.x == 0 && threadIdx.x < head) sum += in[threadIdx.x];
    if (blockIdx.x == 0 && threadIdx.x < tail) sum += in[head + 4 * nvec + threadIdx.x];
    size_t first = (size_t)blockIdx.x * TILE4, i = first + threadIdx.x;
    if (first >= nvec) return sum;
    float4 v[TILE_LOADS];
    if (first + TILE4 <= nvec) {
#pragma unroll
        for (int u = 0; u < TILE_LOADS; u++) v[u] = __ldg(&body[i + u * TILE_THREADS]);
    } else {
#pragma unroll
        for (int u = 0; u < TILE_LOADS; u++)
            v[u] = i + u * TILE_THREADS < nvec ? __ldg(&body[i + u * TILE_THREADS]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int u = 0; u < TILE_LOADS; u++) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    return sum;
}

__global__ void __launch_bounds__(TILE_THREADS) tile_atomic_kernel(const float *in, size_t n, float *out)
{
    float v = tile_block_sum(tile_thread_sum(in, n));
    if (threadIdx.x == 0) atomicAdd(out, v);
}

__global__ void __launch_bounds__(TILE_THREADS) tile_fixed2_kernel(const float *in, size_t n, float *partials,
                                                                   float *gpartials, unsigned int *counters, float *out)
{
    finish2<TILE_THREADS, tile_block_sum>(tile_block_sum(tile_thread_sum(in, n)), partials, gpartials, counters, out);
}

// fixed_dynC: see the header. *ticket and *retired are 0 before the launch;
// the last block puts *ticket back to 0 (every other block has taken its last
// ticket before it counted itself done).
// The blocks of 512 that __launch_bounds__ asks to fit an SM: fixed's 4
// where an SM holds 2048 threads (sm_80, 90, 100, 103), else what fits (sm_75:
// 1024 threads, 2; the others 1536, 3). Asking more makes ptxas warn and
// ignore it, which warnings as errors turn into a failed build.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030
#define DYN_MIN_BLOCKS 4
#elif __CUDA_ARCH__ == 750
#define DYN_MIN_BLOCKS 2
#else
#define DYN_MIN_BLOCKS 3
#endif
template <int C>
__global__ void __launch_bounds__(BLOCK_SIZE, DYN_MIN_BLOCKS) reduce_fixed_dyn_kernel(const float *in, size_t n, float *partials, unsigned int *ticket,
                                        unsigned int *retired, float *out)
{
    __shared__ unsigned int next;
    __shared__ bool last;
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / sizeof(float);
    if (head > n) head = n;
    size_t nvec = (n - head) / 4, tail = n - head - 4 * nvec;
    const float4 *body = (const float4 *)(in + head);
    const size_t C4 = (size_t)C * TILE; // float4s per chunk
    unsigned int chunks = (unsigned int)((nvec + C4 - 1) / C4);
    unsigned int c = blockIdx.x, t = 0;
    while (c < chunks) {
        // The ticket for the chunk after this one: its answer is needed only
        // after this chunk's loads and adds, so its latency hides behind them.
        if (threadIdx.x == 0) t = atomicAdd(ticket, 1) + gridDim.x;
        size_t first = (size_t)c * C4;
        float s = 0.0f;
        if (first + C4 <= nvec) {
            for (size_t k = threadIdx.x; k < C4; k += UNROLL * BLOCK_SIZE) {
                float4 v[UNROLL];
#pragma unroll
                for (int u = 0; u < UNROLL; u++) v[u] = __ldg(&body[first + k + u * BLOCK_SIZE]);
#pragma unroll
                for (int u = 0; u < UNROLL; u++) s += (v[u].x + v[u].y) + (v[u].z + v[u].w);
            }
        } else {
            for (size_t k = threadIdx.x; first + k < nvec; k += BLOCK_SIZE) {
                float4 v = __ldg(&body[first + k]);
                s += (v.x + v.y) + (v.z + v.w);
            }
        }
        s = block_sum(s);
        if (threadIdx.x == 0) {
            partials[c] = s;
            next = t;
        }
        __syncthreads(); // next is written; block_sum's slots are read
        c = next;        // thread 0 writes next again only after the next block_sum's barrier
    }
    if (threadIdx.x == 0) last = (count_done(retired, gridDim.x - 1) == gridDim.x - 1);
    __syncthreads();
    if (!last) return;
    float v = 0.0f;
    for (unsigned int j = threadIdx.x; j < chunks; j += BLOCK_SIZE) v += __ldcg(&partials[j]);
    if (threadIdx.x < head) v += in[threadIdx.x];
    if (threadIdx.x < tail) v += in[head + 4 * nvec + threadIdx.x];
    v = block_sum(v);
    if (threadIdx.x == 0) {
        *out = v;
        *ticket = 0;
    }
}

// ---- launch ---------------------------------------------------------------

static int g_wave;               // one wave of reduce_fixed_kernel: SMs x resident blocks
static float *g_partials;        // one per block of the largest grid
static float *g_gpartials;       // one per group
static unsigned int *g_retired;  // 0 between launches
static unsigned int *g_counters; // one per group and the top one, 0 between launches
static unsigned int *g_ticket;   // fixed_dynC's next chunk, 0 between launches
static void *g_cub_temp;
static size_t g_cub_temp_bytes;

static size_t tiles12(size_t n) { return (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE); } // tiles of TILE float4s
// One block per `per` tiles, at least one wave (never more blocks than tiles).
static int grid_per(size_t n, size_t per)
{
    size_t t = tiles12(n), g = (t + per - 1) / per, wave = t < (size_t)g_wave ? t : (size_t)g_wave;
    if (g < wave) g = wave;
    return g > 0 ? (int)g : 1;
}
static int tile_grid(size_t n) { size_t t = (n / 4 + TILE4 - 1) / TILE4; return t > 0 ? (int)t : 1; }

static void sum_atomic(const float *d_in, size_t n, float *d_out)
{
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
    if (n == 0) return;
    reduce_atomic_kernel<<<(unsigned int)tiles12(n), BLOCK_SIZE>>>(d_in, n, d_out);
    CUDA_CHECK_LAST();
}
static void sum_fixed(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    size_t t = tiles12(n);
    reduce_fixed_kernel<<<t < (size_t)g_wave ? (int)t : g_wave, BLOCK_SIZE>>>(d_in, n, g_partials, g_retired, d_out);
    CUDA_CHECK_LAST();
}
static void fixed_u8(const float *d_in, size_t n, float *d_out, size_t per)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    reduce_fixed_u8_kernel<<<grid_per(n, per), BLOCK_SIZE>>>(d_in, n, g_partials, g_retired, d_out);
    CUDA_CHECK_LAST();
}
static void fixed2(const float *d_in, size_t n, float *d_out, size_t per)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    reduce_fixed2_kernel<<<grid_per(n, per), BLOCK_SIZE>>>(d_in, n, g_partials, g_gpartials, g_counters, d_out);
    CUDA_CHECK_LAST();
}
static void sum_fixed_p4(const float *d_in, size_t n, float *d_out) { fixed_u8(d_in, n, d_out, 4); }
static void sum_fixed_p8(const float *d_in, size_t n, float *d_out) { fixed_u8(d_in, n, d_out, 8); }
static void sum_fixed2_p1(const float *d_in, size_t n, float *d_out) { fixed2(d_in, n, d_out, 1); }
static void sum_fixed2_p2(const float *d_in, size_t n, float *d_out) { fixed2(d_in, n, d_out, 2); }
static void sum_fixed2_p4(const float *d_in, size_t n, float *d_out) { fixed2(d_in, n, d_out, 4); }
static void sum_fixed2_p8(const float *d_in, size_t n, float *d_out) { fixed2(d_in, n, d_out, 8); }
static void sum_tile_atomic(const float *d_in, size_t n, float *d_out)
{
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
    if (n == 0) return;
    tile_atomic_kernel<<<tile_grid(n), TILE_THREADS>>>(d_in, n, d_out);
    CUDA_CHECK_LAST();
}
static void sum_tile_fixed2(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    tile_fixed2_kernel<<<tile_grid(n), TILE_THREADS>>>(d_in, n, g_partials, g_gpartials, g_counters, d_out);
    CUDA_CHECK_LAST();
}

template <int C>
static void fixed_dyn(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    size_t chunks = (n / 4 + (size_t)C * TILE - 1) / ((size_t)C * TILE);
    int per_sm = 0; // its own wave (on sm_90, 4 blocks of 512: __launch_bounds__ keeps the registers low enough)
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_fixed_dyn_kernel<C>, BLOCK_SIZE, 0));
    size_t wave = (size_t)g_dev.sm_count * (per_sm > 0 ? per_sm : 1);
    int grid = chunks < wave ? (int)(chunks > 0 ? chunks : 1) : (int)wave;
    reduce_fixed_dyn_kernel<C><<<grid, BLOCK_SIZE>>>(d_in, n, g_partials, g_ticket, g_retired, d_out);
    CUDA_CHECK_LAST();
}
static void sum_fixed_dyn4(const float *d_in, size_t n, float *d_out) { fixed_dyn<4>(d_in, n, d_out); }
static void sum_fixed_dyn16(const float *d_in, size_t n, float *d_out) { fixed_dyn<16>(d_in, n, d_out); }

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

static const LessonInfo info = {"lab_12_fixed_finish", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

static int run(Options opt)
{
    Input in = make_input(&opt);
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_fixed_kernel, BLOCK_SIZE, 0));
    if (per_sm < 1) per_sm = 1;
    g_wave = g_dev.sm_count * per_sm;
    size_t most = tiles12(in.n) > (size_t)tile_grid(in.n) ? tiles12(in.n) : (size_t)tile_grid(in.n);
    if (most < (size_t)g_wave) most = g_wave;
    size_t group = TILE_THREADS < BLOCK_SIZE ? TILE_THREADS : BLOCK_SIZE; // the smaller block makes more groups
    size_t groups = (most + group - 1) / group;
    if (!opt.csv)
        printf("one wave: %d SMs x %d = %d blocks of %d; tiles of %d x %d float4s for tile_*\n", g_dev.sm_count, per_sm,
               g_wave, BLOCK_SIZE, TILE_THREADS, TILE_LOADS);
    CUDA_CHECK(cudaMalloc((void **)&g_partials, most * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_gpartials, groups * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_retired, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_retired, 0, sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc((void **)&g_counters, (groups + 1) * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_counters, 0, (groups + 1) * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc((void **)&g_ticket, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_ticket, 0, sizeof(unsigned int)));
    CUDA_CHECK(cub_sum(NULL, &g_cub_temp_bytes, in.d_in, NULL, in.n));
    CUDA_CHECK(cudaMalloc(&g_cub_temp, g_cub_temp_bytes > 0 ? g_cub_temp_bytes : 1));
    SumVariant v[] = {
        {"cub", sum_cub, &in},
        {"atomic", sum_atomic, &in},
        {"fixed", sum_fixed, &in},
        {"fixed_p4", sum_fixed_p4, &in},
        {"fixed_p8", sum_fixed_p8, &in},
        {"fixed2_p1", sum_fixed2_p1, &in},
        {"fixed2_p2", sum_fixed2_p2, &in},
        {"fixed2_p4", sum_fixed2_p4, &in},
        {"fixed2_p8", sum_fixed2_p8, &in},
        {"tile_atomic", sum_tile_atomic, &in},
        {"tile_fixed2", sum_tile_fixed2, &in},
        {"fixed_dyn4", sum_fixed_dyn4, &in},
        {"fixed_dyn16", sum_fixed_dyn16, &in},
    };
    run_variants(&opt, v, (int)(sizeof v / sizeof v[0]));
#ifdef FINISH_CLOCK // the finish's own time, median of 21 launches (see the header)
    for (int k = 0; k < (int)(sizeof v / sizeof v[0]) && in.n > 0; k++) {
        if (strncmp(v[k].name, "fixed_p", 7) != 0 && strncmp(v[k].name, "fixed2", 6) != 0 &&
            strcmp(v[k].name, "tile_fixed2") != 0)
            continue;
        long long c[21], t[21];
        for (int r = 0; r < 21; r++) {
            v[k].fn(in.d_in, in.n, g_out);
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(cudaMemcpyFromSymbol(&c[r], g_finish_cycles, sizeof c[r]));
            CUDA_CHECK(cudaMemcpyFromSymbol(&t[r], g_finish_ns, sizeof t[r]));
        }
        for (int i = 1; i < 21; i++) // insertion sort: 21 values each
            for (int j = i; j > 0 && c[j] < c[j - 1]; j--) { long long x = c[j]; c[j] = c[j - 1]; c[j - 1] = x; }
        for (int i = 1; i < 21; i++)
            for (int j = i; j > 0 && t[j] < t[j - 1]; j--) { long long x = t[j]; t[j] = t[j - 1]; t[j - 1] = x; }
        printf("# finish_clock %s n=%zu: %lld cycles, %lld ns (median of 21; min %lld ns, max %lld ns)\n", v[k].name,
               in.n, c[10], t[10], t[0], t[20]);
    }
#endif
    CUDA_CHECK(cudaFree(g_cub_temp));
    CUDA_CHECK(cudaFree(g_ticket));
    CUDA_CHECK(cudaFree(g_counters));
    CUDA_CHECK(cudaFree(g_retired));
    CUDA_CHECK(cudaFree(g_gpartials));
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
