// uses: cccl
/*
 * Lesson 15: the same sum every run, on every GPU, and how close it is to the truth.
 *
 * Since lesson 12: nothing gets faster. Its finish and count_done come back,
 * with a lesson 11-style loop, in versions that differ only in how they add:
 * "atomic" (fp32, after a memset) and "fixed" (fp32, lesson 12's), "kahan" (fixed; each thread
 * carries a Neumaier compensation), "fp64" (fixed, in doubles), "gpu_to_gpu"
 * (fp32 in an order fixed by n and alignment alone, whatever the grid and
 * block size: the same bits on an H100 and an H200), beside CUB (and its gpu_to_gpu level from CUB 3.4). A table gives
 * each one's bit patterns in 100 runs and its error against an EXACT sum, on
 * three inputs. What remains: kahan's compensation stops at each chain (a
 * thread's, the last block's); the tree between them adds plain floats.
 *
 *     make lesson15 && ./lesson15               # lines, then the table
 *     ./lesson15 -n 2^20+3 -d uniform --check   # checks only, 20 repeats
 */
#include "harness.h"
#include "cccl_env.h" // CUB 3.4+: HAVE_DETERMINISM, CCCL_ENV(level) with our scratch (lesson 14)
#include "accuracy.h" // CUB's two sums, the "cancel" input, the exact sum, bit patterns, the table

#define UNROLL 4          // float4 loads in flight per thread and trip: on an H100 within 1% of 1 and 2 (lab/15_unroll.md)
#define REPEATS 100       // runs per variant for the bit-pattern count
#define REPEATS_CHECK 20  // the same under --check
#define CHUNKS_MAX 8192   // gpu_to_gpu: at most this many chunk sums
#define FINISH_LANES 256  // gpu_to_gpu: the chunk sums are added by this many logical lanes
#define FULL_MASK 0xffffffffu // all 32 lanes take part in every shuffle below
// gpu_to_gpu's __launch_bounds__(1024, FULL_SM): 2 on the architectures the #if
// lists (an sm_80 or sm_90 SM holds 2048 threads), else 1. On an H100 or H200 a
// cap of 32 registers (it needs no more): 8 blocks of 256 fit an SM (at 36: 6).
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || \
                               __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030)
#define FULL_SM 2
#else
#define FULL_SM 1
#endif

enum { ACC_FP32, ACC_KAHAN, ACC_FP64 }; enum { FINISH_ATOMIC, FINISH_FIXED }; // each kernel fixes one of each
static __device__ float warp_sum(float v); // lesson 12's warp sum and counter, at the end of the file
static __device__ unsigned int count_done(unsigned int *retired, unsigned int m);

// ---- kernel ---------------------------------------------------------------

// A thread's running total: fp32 uses s, kahan s and its compensation c, fp64
// d. Each kernel fixes the mode at compile time: the rest compiles away.
typedef struct { float s, c; double d; } Acc;
// kahan in Neumaier's form: t = s + x rounds, and what it rounded away is
// recovered exactly from the larger operand, collected in c, added back once.
__device__ __forceinline__ void acc_add(Acc *a, float x, int mode)
{
    if (mode == ACC_FP64) a->d += (double)x; // the conversion is exact; the add rounds at 2^-53, not 2^-24
    if (mode == ACC_FP32) a->s += x;
    if (mode != ACC_KAHAN) return;
    float t = a->s + x;
    a->c += fabsf(a->s) >= fabsf(x) ? (a->s - t) + x : (x - t) + a->s;
    a->s = t;
}
__device__ __forceinline__ void acc_add4(Acc *a, float4 v, int mode) // x, y, z, w in index order
{
    acc_add(a, v.x, mode); acc_add(a, v.y, mode); acc_add(a, v.z, mode); acc_add(a, v.w, mode);
}

// This thread's share of in[0..n): lesson 12's head, body and tail, but the
// grid strides through the body (any block size), adding in index order.
__device__ __forceinline__ Acc thread_sum(const float *in, size_t n, int mode)
{
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x, threads = (size_t)gridDim.x * blockDim.x;
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / sizeof(float);
    if (head > n) head = n;
    size_t nvec = (n - head) / 4, tail = head + 4 * nvec; // tail: where the 0..3 floats after the body start
    const float4 *body = (const float4 *)(in + head);
    Acc sum = {0.0f, 0.0f, 0.0};
    if (tid < head) acc_add(&sum, in[tid], mode);
    size_t i = tid;
    for (; i + (UNROLL - 1) * threads < nvec; i += UNROLL * threads) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = __ldg(&body[i + u * threads]); // independent: all in flight
#pragma unroll
        for (int u = 0; u < UNROLL; u++) acc_add4(&sum, v[u], mode);
    }
    for (; i < nvec; i += threads) acc_add4(&sum, __ldg(&body[i]), mode);
    if (tid < n - tail) acc_add(&sum, in[tail + tid], mode);
    return sum;
}

// differs from lesson 12's: the block size is chosen at run time (-b), so 32 slots and blockDim's warps
__device__ float block_sum(float v)
{
    __shared__ float warp_sums[32]; // one slot per warp of any block, up to 1024 threads
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads(); // the one barrier: every warp's slot written before warp 0 reads them
    if (warp == 0) // the whole of warp 0: its 32 lanes shuffle together
        v = warp_sum(lane < warps ? warp_sums[lane] : 0.0f); // lanes past the last warp add 0
    // No barrier at the end: a second call must come after one (reduce_body).
    return v;
}
__device__ double warp_sum_d(double v) // warp_sum in doubles, for fp64's tree
{
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}
// The block's total, in thread 0: fp32 and kahan (c folded in: plain fp32
// from here up) take block_sum, fp64 the same tree in doubles.
__device__ __forceinline__ double block_total(Acc a, int mode)
{
    if (mode != ACC_FP64) return block_sum(a.s + a.c);
    __shared__ double warp_sums[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    double v = warp_sum_d(a.d);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads(); // every warp's slot written before warp 0 reads them
    if (warp == 0) v = warp_sum_d(lane < warps ? warp_sums[lane] : 0.0);
    return v;
}

// Lesson 12's fixed finish and a memset atomic one in one body: any grid reads in[0..n)
// once. atomic: *out must be 0 before. fixed: partials[blockIdx.x] gets the block's total,
// and the last block adds them into *out; *retired is 0 before and after.
__device__ __forceinline__ void reduce_body(const float *in, size_t n, int mode, int finish, double *partials,
                                            unsigned int *retired, float *out)
{
    double total = block_total(thread_sum(in, n, mode), mode);
    if (finish == FINISH_ATOMIC) { // blocks come in any order, floats do not associate: bits vary
        if (threadIdx.x == 0) atomicAdd(out, (float)total);
        return;
    }
    __shared__ bool last; // is this block the last one to count itself?
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = total;
        last = (count_done(retired, gridDim.x - 1) == gridDim.x - 1);
    }
    __syncthreads(); // hands `last`, and what thread 0 acquired, to the whole block
    if (!last) return; // the same for every thread of the block: no barrier below is split
    // Partials t, t + blockDim, ... in index order, then the same tree: which
    // block is last varies, the order of the additions does not.
    Acc b = {0.0f, 0.0f, 0.0};
    for (unsigned int i = threadIdx.x; i < gridDim.x; i += blockDim.x) {
        double p = __ldcg(&partials[i]); // at L2, not L1; count_done's acquire made it visible
        if (mode == ACC_FP64) b.d += p;
        else acc_add(&b, (float)p, mode); // fp32 and kahan partials are floats: exact
    }
    total = block_total(b, mode); // the slots are free again: warp 0 read them before the barrier above
    if (threadIdx.x == 0) *out = (float)total;
}
#define KERNEL_ARGS const float *in, size_t n, double *partials, unsigned int *retired, float *out
__global__ void sum_atomic_kernel(KERNEL_ARGS) { reduce_body(in, n, ACC_FP32, FINISH_ATOMIC, partials, retired, out); }
__global__ void sum_fixed_kernel(KERNEL_ARGS) { reduce_body(in, n, ACC_FP32, FINISH_FIXED, partials, retired, out); }
__global__ void sum_kahan_kernel(KERNEL_ARGS) { reduce_body(in, n, ACC_KAHAN, FINISH_FIXED, partials, retired, out); }
__global__ void sum_fp64_kernel(KERNEL_ARGS) { reduce_body(in, n, ACC_FP64, FINISH_FIXED, partials, retired, out); }

// The same bits on every GPU. "fixed" repeats on one GPU only: the grid (SMs x
// occupancy) decides which elements each thread adds. Here n (and alignment)
// alone fixes the order: the float4 body is cut into tiles of 32 float4s (512
// bytes), dealt round-robin to C = min(tiles, CHUNKS_MAX) chunks (chunk c:
// tiles c, c + C, ...); one warp sums a chunk, lane l adding float4 l of each
// tile in order, then the shuffle tree; the last block adds the chunk sums
// through FINISH_LANES logical lanes (lane f: sums f, f + FINISH_LANES, ...),
// a fixed tree, then the scalar head and tail. Which warp takes which chunk
// changes no add. Round-robin keeps the warps on neighbouring tiles, as
// "fixed" reads; contiguous chunks were slower (lab/15_gpu_to_gpu.md).
// Any grid, any block size that is a multiple of 32; *retired is 0 before
// and after. chunk_sums gets the chunks' sums; the last block writes *out.
__global__ void __launch_bounds__(1024, FULL_SM) sum_gpu_to_gpu_kernel(const float *in, size_t n, float *chunk_sums,
                                                                       unsigned int *retired, float *out)
{
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / 4;
    if (head > n) head = n;
    const float4 *body = (const float4 *)(in + head);
    size_t n4 = (n - head) / 4, tail = head + 4 * n4;
    size_t tiles = (n4 + 31) / 32, chunks = tiles < CHUNKS_MAX ? tiles : CHUNKS_MAX;
    unsigned int lane = threadIdx.x & 31;
    size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5, warps = ((size_t)gridDim.x * blockDim.x) >> 5;
    for (size_t c = warp; c < chunks; c += warps) { // the same bound for all 32 lanes: full-mask shuffles below
        size_t m = (tiles - c + chunks - 1) / chunks; // tiles in this chunk: c, c + chunks, ...
        float s = 0.0f;
        size_t j = 0;
        for (; j + UNROLL <= m; j += UNROLL) { // UNROLL loads in flight, added in tile order
            float4 v[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                size_t i = (c + (j + u) * chunks) * 32 + lane; // only the body's last tile can be short
                v[u] = i < n4 ? __ldg(body + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; u++) s += (v[u].x + v[u].y) + (v[u].z + v[u].w);
        }
        for (; j < m; j++) { // the chunk's last 0..UNROLL-1 tiles, the same order
            size_t i = (c + j * chunks) * 32 + lane;
            float4 v = i < n4 ? __ldg(body + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            s += (v.x + v.y) + (v.z + v.w);
        }
        s = warp_sum(s);
        if (lane == 0) chunk_sums[c] = s;
    }
    // Every warp's chunk sums must be visible before thread 0 counts the block:
    // from sm_70 the barrier orders them before count_done's release. Before, a
    // fence orders only its own thread's stores, so each lane 0 fences its own.
#if __CUDA_ARCH__ < 700
    if (lane == 0) __threadfence();
#endif
    __syncthreads();
    __shared__ bool last;
    if (threadIdx.x == 0) last = count_done(retired, gridDim.x - 1) == gridDim.x - 1;
    __syncthreads(); // hands `last`, and what thread 0 acquired, to the whole block
    if (!last) return;
    __shared__ float lanes[FINISH_LANES];
    for (unsigned int f = threadIdx.x; f < FINISH_LANES; f += blockDim.x) { // any blockDim: the same lanes
        float s = 0.0f;
#pragma unroll 8
        for (size_t c = f; c < chunks; c += FINISH_LANES) s += __ldcg(&chunk_sums[c]); // via L2, in c order
        lanes[f] = s;
    }
    __syncthreads(); // every logical lane's sum is in shared memory
    if (threadIdx.x < 32) {
        float s = 0.0f;
        for (int i = 0; i < FINISH_LANES / 32; i++) s += lanes[lane * (FINISH_LANES / 32) + i];
        s = warp_sum(s);
        if (lane == 0) {
            for (size_t i = 0; i < head; i++) s += in[i];
            for (size_t i = tail; i < n; i++) s += in[i];
            *out = s;
        }
    }
}

// ---- launch ---------------------------------------------------------------

enum { V_ATOMIC, V_FIXED, V_KAHAN, V_FP64, V_G2G, V_CUB, V_CCCL_G2G, NUM_VARIANTS };
static const char *const g_name[NUM_VARIANTS] = {"atomic", "fixed", "kahan", "fp64", "gpu_to_gpu", "cub", "cccl_gpu_to_gpu"};
typedef void (*sum_kernel)(KERNEL_ARGS);
static sum_kernel const g_kernel[V_G2G] = {sum_atomic_kernel, sum_fixed_kernel, sum_kahan_kernel, sum_fp64_kernel};

static int g_max_blocks[V_G2G + 1]; // SMs x resident blocks per SM, per kernel (set in run)
static double *g_partials;       // one partial per block
static unsigned int *g_retired;  // the blocks-done counter, zeroed once in run
static float *g_chunk_sums;      // gpu_to_gpu: CHUNKS_MAX floats
static int g_block;              // threads per block (-b)

// Kernel v on lesson 11's grid, one wave: a full GPU's worth of blocks, none left with nothing to read.
static void reduce_gpu(int v, const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the sum of nothing is 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    size_t per_block = (size_t)g_block * 4 * UNROLL; // floats a block takes in one trip
    size_t wanted = (n + per_block - 1) / per_block;
    int blocks = wanted < (size_t)g_max_blocks[v] ? (int)wanted : g_max_blocks[v];
    g_kernel[v]<<<blocks, g_block>>>(d_in, n, g_partials, g_retired, d_out);
    CUDA_CHECK_LAST();
}

static void reduce_atomic(const float *d_in, size_t n, float *d_out)
{
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); // the blocks add into it
    if (n == 0) return;
    reduce_gpu(V_ATOMIC, d_in, n, d_out);
}
static void reduce_fixed(const float *d_in, size_t n, float *d_out) { reduce_gpu(V_FIXED, d_in, n, d_out); }
static void reduce_kahan(const float *d_in, size_t n, float *d_out) { reduce_gpu(V_KAHAN, d_in, n, d_out); }
static void reduce_fp64(const float *d_in, size_t n, float *d_out) { reduce_gpu(V_FP64, d_in, n, d_out); }

// gpu_to_gpu on any grid; blocks <= 0: a warp per chunk, at most all that fit.
static void launch_gpu_to_gpu(const float *d_in, size_t n, float *d_out, int blocks, int block)
{
    if (blocks <= 0) {
        size_t head = ((16 - ((uintptr_t)d_in & 15)) & 15) / 4, n4 = n > head ? (n - head) / 4 : 0;
        size_t tiles = (n4 + 31) / 32, chunks = tiles < CHUNKS_MAX ? tiles : CHUNKS_MAX;
        size_t wanted = (chunks + block / 32 - 1) / (block / 32);
        blocks = wanted < (size_t)g_max_blocks[V_G2G] ? (int)(wanted > 0 ? wanted : 1) : g_max_blocks[V_G2G];
    }
    sum_gpu_to_gpu_kernel<<<blocks, block>>>(d_in, n, g_chunk_sums, g_retired, d_out);
    CUDA_CHECK_LAST();
}
static void reduce_gpu_to_gpu(const float *d_in, size_t n, float *d_out) { launch_gpu_to_gpu(d_in, n, d_out, 0, g_block); }
static reduce_fn const g_fn[NUM_VARIANTS] = {reduce_atomic, reduce_fixed, reduce_kahan, reduce_fp64, reduce_gpu_to_gpu,
                                             reduce_cub, reduce_cccl_gpu_to_gpu}; // CUB's: common/accuracy.h

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"15_determinism_and_accuracy", BLOCK_RUNTIME, 256, NULL};

// One run per combination of the listed -n, -s, -d, --offset and -b values.
static int run(Options opt)
{
    int table = !opt.check_only && !opt.csv; // the accuracy table: human mode only
    Input in = make_input_extra(&opt, table ? opt.n * sizeof(float) : 0); // also reads the SM count into g_dev
    g_block = opt.block;
    int most = 1; // the most blocks any kernel launches: partials to allocate
    for (int v = 0; v <= V_G2G; v++) {
        int per_sm = 0;
        const void *k = v == V_G2G ? (const void *)sum_gpu_to_gpu_kernel : (const void *)g_kernel[v];
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, g_block, 0));
        g_max_blocks[v] = per_sm * g_dev.sm_count > 0 ? per_sm * g_dev.sm_count : 1;
        if (g_max_blocks[v] > most) most = g_max_blocks[v];
    }
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)most * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&g_retired, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_retired, 0, sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc((void **)&g_chunk_sums, CHUNKS_MAX * sizeof(float)));
    reduce_fn fn[NUM_VARIANTS]; // this run's variants: NULL where left out
    for (int v = 0; v < NUM_VARIANTS; v++) fn[v] = v == V_CCCL_G2G && !CCCL_G2G_TRUSTED(in.n) ? NULL : g_fn[v];
    cub_prepare(&opt, in.d_in, in.n, fn[V_CCCL_G2G]); // CUB's temp storage and scratch, sized untimed
    static Report timed[NUM_VARIANTS]; // the timed lines, for the table's GB/s column
    for (int v = 0; v < NUM_VARIANTS; v++)
        if (fn[v]) run_variant_keep(&opt, &in, g_name[v], fn[v], 0.0, &timed[v]);
    scratch_sizing(); // the checks and the table below are untimed: the scratch may grow
    // One bit pattern run after run; and gpu_to_gpu's under 5 launch shapes.
    check_repeat(&opt, fn + V_FIXED, V_G2G - V_FIXED + 1, in.d_in, in.n, opt.check_only ? REPEATS_CHECK : REPEATS);
    check_shapes(&opt, launch_gpu_to_gpu, in.d_in, in.n, g_block);
    if (table) print_table(&opt, in.n, NUM_VARIANTS, g_name, fn, timed, REPEATS);
    cub_free();
    CUDA_CHECK(cudaFree(g_chunk_sums));
    CUDA_CHECK(cudaFree(g_retired));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }

// ---- unchanged from lesson 12 ---------------------------------------------

// The sum of v over the 32 lanes of this warp, in lane 0 (lesson 10); all 32 must call it.
__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1) // constant trip count: fully unrolled
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

// Counts the calling block done, returns the count before it (m: wraps to 0);
// releases the caller's stores and acquires every block's (lesson 12).
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
