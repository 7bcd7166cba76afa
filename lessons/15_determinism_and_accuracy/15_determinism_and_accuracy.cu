// uses: cccl
/*
 * Lesson 15: the same sum every run, on every GPU, and how close it is to the truth.
 *
 * What changed since lesson 14: nothing gets faster. Lesson 12's single-pass
 * kernel comes back in versions that differ only in how they add:
 * "atomic" (fp32, one atomicAdd per block), "fixed" (fp32, the last block adds
 * the block partials in a fixed order), "kahan" (fixed order; each thread
 * carries a Neumaier compensation term), "fp64" (fixed order, doubles from
 * the first add to the last) and "gpu_to_gpu" (fp32 in an order fixed by n
 * alone: 512-byte tiles dealt round-robin to at most 8192 chunks, each
 * summed by one warp in a fixed tree, then the chunk sums in a fixed tree;
 * no grid, block size, SM count or occupancy changes it, so every GPU gives
 * the same bits). CUB's DeviceReduce::Sum runs beside them, and with CUB 3.1
 * or newer its gpu_to_gpu level too. Human mode then prints a table: distinct bit patterns
 * over 100 runs, and each one's error against an EXACT reference on three
 * inputs, from well- to badly-conditioned, next to its GB/s.
 *
 * The flaw that remains: the compensation stops at the thread; the tree above
 * it adds plain floats (the exercise carries it up). And every lesson so far
 * reduced with "+": lesson 16 changes the combine.
 *
 *     make lesson15 && ./lesson15               # lines, then the table
 *     ./lesson15 -n 2^20+3 -d uniform --check   # checks only, 20 repeats
 */
#include "harness.h"
#include <cub/device/device_reduce.cuh>
#include "cccl_env.h" // CUB 3.1+: HAVE_DETERMINISM, CCCL_ENV(level) with our scratch (lesson 14)

#define UNROLL 4          // float4 loads in flight per thread and trip (lesson 11)
#define REPEATS 100       // runs per variant for the bit-pattern count
#define REPEATS_CHECK 20  // the same under --check
#define CANCEL_BITS 20    // the "cancel" input is integers times 2^-20
#define CHUNKS_MAX 8192   // gpu_to_gpu: at most this many chunk sums
#define FINISH_LANES 256  // gpu_to_gpu: the chunk sums are added by this many logical lanes

enum { ACC_FP32 = 0, ACC_KAHAN = 1, ACC_FP64 = 2 };
enum { FINISH_ATOMIC = 0, FINISH_FIXED = 1 };

// ---- kernel ---------------------------------------------------------------

// A thread's running total: fp32 uses s, kahan uses s and its compensation c,
// fp64 uses d. Each kernel fixes the mode at compile time, so the compiler
// drops the fields and branches that mode does not use.
typedef struct { float s, c; double d; } Acc;

__device__ __forceinline__ void acc_add(Acc *a, float x, int mode)
{
    if (mode == ACC_FP64) {
        a->d += (double)x; // the conversion is exact; the add rounds at 2^-53, not 2^-24
    } else if (mode == ACC_KAHAN) {
        // Neumaier: t = s + x rounds, but the part that was rounded away can
        // be recovered exactly from the larger operand. c collects those
        // parts and is added back once, at the end of the thread's loop.
        float t = a->s + x;
        a->c += fabsf(a->s) >= fabsf(x) ? (a->s - t) + x : (x - t) + a->s;
        a->s = t;
    } else {
        a->s += x;
    }
}

__device__ __forceinline__ void acc_add4(Acc *a, float4 v, int mode)
{
    acc_add(a, v.x, mode); acc_add(a, v.y, mode); acc_add(a, v.z, mode); acc_add(a, v.w, mode);
}

// Lesson 12's loads: the whole grid visits in[0..n) once. Scalar head up to
// the first 16-byte boundary, float4 body with UNROLL loads in flight, scalar
// tail. Each thread adds its elements in increasing index order.
__device__ __forceinline__ void thread_accumulate(const float *in, size_t n, int mode, Acc *a)
{
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t threads = (size_t)gridDim.x * blockDim.x;
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / 4; // floats before the boundary: 0..3
    if (head > n) head = n;
    const float4 *body = (const float4 *)(in + head);
    size_t n4 = (n - head) / 4, tail = head + 4 * n4;
    if (tid < head) acc_add(a, in[tid], mode);
    size_t i = tid;
    for (; i + (UNROLL - 1) * threads < n4; i += UNROLL * threads) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = __ldg(&body[i + u * threads]); // all loads issued first
#pragma unroll
        for (int u = 0; u < UNROLL; u++) acc_add4(a, v[u], mode);
    }
    for (; i < n4; i += threads) acc_add4(a, __ldg(&body[i]), mode);
    if (tid < n - tail) acc_add(a, in[tail + tid], mode);
}

// Every lane calls these (no thread has left the kernel yet): full mask.
__device__ __forceinline__ float warp_sum_f(float v)
{
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}
__device__ __forceinline__ double warp_sum_d(double v)
{
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

// The block's total, valid in thread 0: warp shuffles, one shared slot per
// warp, warp 0 adds the slots. kahan folds c into s here: from this point on
// its tree is plain fp32, like "fixed".
__device__ __forceinline__ double block_total(Acc a, int mode)
{
    __shared__ float slot_f[32];
    __shared__ double slot_d[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    if (mode == ACC_FP64) {
        double v = warp_sum_d(a.d);
        if (lane == 0) slot_d[warp] = v;
        __syncthreads(); // every warp's slot is written before warp 0 reads them
        if (warp == 0) v = warp_sum_d(lane < warps ? slot_d[lane] : 0.0);
        return v;
    }
    float v = warp_sum_f(a.s + a.c);
    if (lane == 0) slot_f[warp] = v;
    __syncthreads(); // the same: slots written before they are read
    if (warp == 0) v = warp_sum_f(lane < warps ? slot_f[lane] : 0.0f);
    return (double)v; // a float in a double: exact
}

// Lesson 12's counter: an atomicInc that releases (the partials this block
// stored are visible before its count) and acquires (the block that sees m
// sees every partial), and wraps back to 0 for the next launch. Returns the old count.
__device__ unsigned int count_done(unsigned int *counter, unsigned int m)
{
#if __CUDA_ARCH__ < 700
    __threadfence();
    unsigned int old = atomicInc(counter, m);
    if (old == m) __threadfence();
    return old;
#else
    unsigned int old;
    asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(m) : "memory");
    return old;
#endif
}

__device__ __forceinline__ void reduce_body(const float *in, size_t n, int mode, int finish, double *partials,
                                            unsigned int *counter, float *out)
{
    Acc a = {0.0f, 0.0f, 0.0};
    thread_accumulate(in, n, mode, &a);
    double total = block_total(a, mode);
    if (finish == FINISH_ATOMIC) {
        // Blocks arrive here in a different order every run, and float
        // addition is not associative: the last bits of *out can change.
        if (threadIdx.x == 0) atomicAdd(out, (float)total);
        return;
    }
    __shared__ bool am_last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = total;
        am_last = count_done(counter, gridDim.x - 1) == gridDim.x - 1; // lesson 12's counter
    }
    __syncthreads(); // publishes am_last; the slots of block_total are free again
    if (!am_last) return;
    // The last block adds the partials in an order fixed by the launch shape
    // alone (thread t takes t, t + blockDim, ..., then the same tree): the
    // same bits every run, whichever block happened to finish last.
    Acc b = {0.0f, 0.0f, 0.0};
    for (unsigned int i = threadIdx.x; i < gridDim.x; i += blockDim.x) {
        double p = __ldcg(&partials[i]); // through L2: never a stale L1 line
        if (mode == ACC_FP64) b.d += p;
        else acc_add(&b, (float)p, mode); // fp32 and kahan partials are floats: exact
    }
    total = block_total(b, mode);
    if (threadIdx.x == 0) *out = (float)total; // count_done left the counter at 0 for the next launch
}

#define KERNEL_ARGS const float *in, size_t n, double *partials, unsigned int *counter, float *out
__global__ void sum_atomic_kernel(KERNEL_ARGS) { reduce_body(in, n, ACC_FP32, FINISH_ATOMIC, partials, counter, out); }
__global__ void sum_fixed_kernel(KERNEL_ARGS) { reduce_body(in, n, ACC_FP32, FINISH_FIXED, partials, counter, out); }
__global__ void sum_kahan_kernel(KERNEL_ARGS) { reduce_body(in, n, ACC_KAHAN, FINISH_FIXED, partials, counter, out); }
__global__ void sum_fp64_kernel(KERNEL_ARGS) { reduce_body(in, n, ACC_FP64, FINISH_FIXED, partials, counter, out); }

// ---- the same bits on every GPU -------------------------------------------
// "fixed" repeats on one GPU only: its grid comes from the SM count and the
// occupancy, and the grid decides which elements each thread adds. Here the
// order is a function of n (and the input's alignment) alone:
//   the float4 body is cut into tiles of 32 float4s (512 bytes), and the
//   tiles are dealt round-robin to C = min(tiles, CHUNKS_MAX) chunks: chunk c
//   holds tiles c, c + C, c + 2C, ...;
//   chunk c is summed by one warp: lane l adds float4 l of each of the
//   chunk's tiles, in tile order, then the fixed shuffle tree adds the 32
//   lane sums;
//   the last block adds the chunk sums: logical lane f (of FINISH_LANES)
//   takes chunk sums f, f + FINISH_LANES, ..., then a fixed tree, then the
//   scalar head and tail.
// Which warp takes which chunk, and how many warps there are, changes no add.
// Dealing tiles round-robin, rather than giving each chunk one contiguous
// range, keeps the warps reading neighbouring tiles at any moment, as the
// grid-stride loop of "fixed" does; 8192 warps each streaming its own far-off
// range were slower (the notes show by how much and give the likely cause).

// Any grid, any block size that is a multiple of 32; *counter 0 before the first launch.
// Blocks of 1024 threads an SM holds at once: 2 where an SM has 2048 thread
// slots (sm_80, sm_87, sm_90, sm_100, sm_103), 1 elsewhere (sm_75: 1024;
// sm_86, sm_89, sm_120: 1536). __launch_bounds__(1024, FULL_SM) then caps the
// registers at 65536 / 2048 = 32 a thread where that fills the SM.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 900 || \
                               __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030)
#define FULL_SM 2
#else
#define FULL_SM 1
#endif
// With 32 registers an H100 or H200 SM holds its full 2048 threads (8 blocks
// of 256), as lesson 12's kernel does with 4 blocks of 512. The bound makes 32
// a promise rather than whatever ptxas picks: the same kernel with contiguous
// chunks took 36, which leaves room for 6 blocks (the notes' tuning table).
__global__ void __launch_bounds__(1024, FULL_SM) sum_gpu_to_gpu_kernel(const float *in, size_t n, float *chunk_sums,
                                                                       unsigned int *counter, float *out)
{
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / 4;
    if (head > n) head = n;
    const float4 *body = (const float4 *)(in + head);
    size_t n4 = (n - head) / 4, tail = head + 4 * n4;
    size_t tiles = (n4 + 31) / 32, chunks = tiles < CHUNKS_MAX ? tiles : CHUNKS_MAX;
    unsigned int lane = threadIdx.x & 31;
    size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5, warps = ((size_t)gridDim.x * blockDim.x) >> 5;
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (size_t c = warp; c < chunks; c += warps) { // the same bound for all 32 lanes: full-mask shuffles below
        size_t m = (tiles - c + chunks - 1) / chunks; // tiles in this chunk: c, c + chunks, ...
        float s = 0.0f;
        size_t j = 0;
        for (; j + UNROLL <= m; j += UNROLL) { // UNROLL loads in flight, added in tile order
            float4 v[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                size_t i = (c + (j + u) * chunks) * 32 + lane; // only the body's last tile can be short
                v[u] = i < n4 ? __ldg(body + i) : zero;
            }
#pragma unroll
            for (int u = 0; u < UNROLL; u++) s += (v[u].x + v[u].y) + (v[u].z + v[u].w);
        }
        for (; j < m; j++) { // the chunk's last 0..UNROLL-1 tiles, the same order
            size_t i = (c + j * chunks) * 32 + lane;
            float4 v = i < n4 ? __ldg(body + i) : zero;
            s += (v.x + v.y) + (v.z + v.w);
        }
        s = warp_sum_f(s);
        if (lane == 0) chunk_sums[c] = s;
    }
    // Every warp of the block has stored its chunk sums before thread 0
    // counts the block: the barrier orders them before its release.
    __syncthreads();
    __shared__ bool am_last;
    if (threadIdx.x == 0) am_last = count_done(counter, gridDim.x - 1) == gridDim.x - 1;
    __syncthreads(); // publishes am_last
    if (!am_last) return;
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
        s = warp_sum_f(s);
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
static int g_block, g_max_blocks[V_G2G + 1]; // SMs x resident blocks, per kernel (occupancy API)
static double *g_partials;
static float *g_chunk_sums; // gpu_to_gpu: CHUNKS_MAX floats
static unsigned int *g_counter;
static void *g_cub_temp;
static size_t g_cub_bytes;

static void launch(int v, const float *d_in, size_t n, float *d_out)
{
    size_t per_block = (size_t)g_block * 4 * UNROLL; // floats a block takes in one trip
    size_t want = (n + per_block - 1) / per_block;    // no more blocks than the data can feed
    int blocks = want < (size_t)g_max_blocks[v] ? (int)want : g_max_blocks[v];
    g_kernel[v]<<<blocks, g_block>>>(d_in, n, g_partials, g_counter, d_out);
    CUDA_CHECK_LAST();
}
static void sum_atomic(const float *d_in, size_t n, float *d_out)
{
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); // blocks add into it: zeroed in the timed region
    if (n) launch(V_ATOMIC, d_in, n, d_out);
}
static void sum_fixed_order(int v, const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    launch(v, d_in, n, d_out); // the last block writes *d_out
}
static void sum_fixed(const float *d_in, size_t n, float *d_out) { sum_fixed_order(V_FIXED, d_in, n, d_out); }
static void sum_kahan(const float *d_in, size_t n, float *d_out) { sum_fixed_order(V_KAHAN, d_in, n, d_out); }
static void sum_fp64(const float *d_in, size_t n, float *d_out) { sum_fixed_order(V_FP64, d_in, n, d_out); }

// gpu_to_gpu with a given grid and block (the shape check below varies both);
// blocks <= 0: one warp per chunk, at most as many blocks as fit at once.
static void launch_gpu_to_gpu(const float *d_in, size_t n, float *d_out, int blocks, int block)
{
    if (blocks <= 0) {
        size_t head = ((16 - ((uintptr_t)d_in & 15)) & 15) / 4, n4 = n > head ? (n - head) / 4 : 0;
        size_t tiles = (n4 + 31) / 32, chunks = tiles < CHUNKS_MAX ? tiles : CHUNKS_MAX;
        size_t want = (chunks + block / 32 - 1) / (block / 32);
        blocks = want < (size_t)g_max_blocks[V_G2G] ? (int)(want > 0 ? want : 1) : g_max_blocks[V_G2G];
    }
    sum_gpu_to_gpu_kernel<<<blocks, block>>>(d_in, n, g_chunk_sums, g_counter, d_out);
    CUDA_CHECK_LAST();
}
static void sum_gpu_to_gpu(const float *d_in, size_t n, float *d_out) { launch_gpu_to_gpu(d_in, n, d_out, 0, g_block); }

static void sum_cub(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    size_t bytes = g_cub_bytes; // temp storage allocated once, outside the timing
    CUDA_CHECK(cub::DeviceReduce::Sum(g_cub_temp, bytes, d_in, d_out, n));
}

#if HAVE_DETERMINISM
// CUB's gpu_to_gpu level, through lesson 14's environment: its scratch comes
// from one buffer, sized by an untimed first call (common/cccl_env.h).
static void sum_cccl_gpu_to_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    CUDA_CHECK(cub::DeviceReduce::Sum(d_in, d_out, n, CCCL_ENV(gpu_to_gpu)));
}
#else
#define sum_cccl_gpu_to_gpu NULL // needs CUB 3.1 or newer: the variant is skipped
#endif
static reduce_fn const g_fn[NUM_VARIANTS] = {sum_atomic, sum_fixed, sum_kahan, sum_fp64, sum_gpu_to_gpu, sum_cub,
                                             sum_cccl_gpu_to_gpu};

// ---- main -----------------------------------------------------------------

// The timed lines' reports, kept for the table's GB/s column (run_variant_keep).
static Report g_report[NUM_VARIANTS];

// Runs fn reps times on the same input; returns how many distinct bit
// patterns the results had, and the last result in *last.
static int distinct_results(reduce_fn fn, const float *d_x, size_t n, int reps, float *last)
{
    uint32_t seen[REPEATS];
    int k = 0;
    for (int r = 0; r < reps; r++) {
        CUDA_CHECK(cudaMemsetAsync(g_out, 0xFF, sizeof(float), 0)); // NaN: a run that writes nothing shows
        fn(d_x, n, g_out);
        *last = read_result();
        uint32_t bits;
        memcpy(&bits, last, sizeof bits);
        int j = 0;
        while (j < k && seen[j] != bits) j++;
        if (j == k) seen[k++] = bits;
    }
    return k;
}

// "cancel": the first half holds big positive integers B_j (1 to 2^23, of
// varied magnitude), the second half holds -B_j + s_j with s_j in {0, 1}; an
// odd last element is s. Every value is an integer below 2^24 in magnitude
// times 2^-20, so it is an exact float, and the true sum (the s_j) is tiny
// next to sum |x|: condition number ~4e6. Partial sums grow huge, then cancel.
static void make_cancel(float *h, size_t n, uint64_t seed)
{
    size_t half = n / 2;
    uint64_t base = mix64(seed ^ 0xCA9CE1ULL);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = mix64(base + (i < half ? i : i - half));
        int64_t big = (int64_t)(1 + (r & 0xFFFF)) << ((r >> 16) & 7);
        int64_t small = (int64_t)((r >> 20) & 1);
        int64_t v = i < half ? big : i < 2 * half ? small - big : small;
        h[i] = ldexpf((float)v, -CANCEL_BITS);
    }
}

// The exact sum of floats that are all integers times 2^-bits (checked), by
// int64 fixed point; also sum |x| (for the condition number).
static double exact_sum(const float *h, size_t n, int bits, double *sum_abs)
{
    int64_t s = 0;
    double a = 0.0;
    for (size_t i = 0; i < n; i++) {
        double t = ldexp((double)h[i], bits);
        int64_t k = (int64_t)t;
        if ((double)k != t) { fprintf(stderr, "exact_sum: element %zu is not on the 2^-%d grid\n", i, bits); exit(1); }
        s += k;
        a += fabs(t);
    }
    *sum_abs = ldexp(a, -bits);
    return ldexp((double)s, -bits); // exact while |s| < 2^53
}

static void print_table(const Input *in, const Options *opt, float *d_x)
{
    size_t n = in->n;
    float *h = (float *)malloc(n * sizeof(float) + 1);
    if (!h) { fprintf(stderr, "out of host memory\n"); exit(1); }
    printf("\n%d runs of each variant on n=%zu; error against the exact sum (int64 fixed point on the host).\n"
           "atomic, fixed: fp32 adds (atomic / fixed-order finish); kahan: fp32 + per-thread Neumaier;\n"
           "fp64: double adds; gpu_to_gpu: fp32 in an order fixed by n; cub: DeviceReduce::Sum;\n"
           "cccl_gpu_to_gpu: CUB's reproducible level. GB/s: the timed lines above (-d input).\n",
           REPEATS, n);
    printf("%-9s %-12s %-15s %-9s %-16s %-9s %-9s %s\n", "data", "sum|x|/|sum|", "variant", "patterns", "result",
           "|error|", "err/|sum|", "GB/s");
    for (int d = 0; d < 3; d++) {
        int64_t s = 0, a = 0;
        int bits = 23; // uniform input is k * 2^-23
        if (d < 2) fill_input(h, 0, n, opt->seed, DIST_UNIFORM, &s, &a);
        if (d == 0) for (size_t i = 0; i < n; i++) h[i] = fabsf(h[i]); // all positive: condition number 1
        if (d == 2) { make_cancel(h, n, opt->seed); bits = CANCEL_BITS; }
        double sum_abs, exact = exact_sum(h, n, bits, &sum_abs);
        if (n) CUDA_CHECK(cudaMemcpy(d_x, h, n * sizeof(float), cudaMemcpyHostToDevice));
        for (int v = 0; v < NUM_VARIANTS; v++) {
            if (!g_fn[v] || (v == V_CCCL_G2G && !CCCL_G2G_TRUSTED(n))) continue; // not in this build, or not trusted at n
            float last = 0.0f;
            int k = distinct_results(g_fn[v], d_x, n, REPEATS, &last);
            double err = fabs((double)last - exact), us = g_report[v].median_us;
            printf("%-9s %-12.3g %-15s %3d/%-5d %-16.9g %-9.2g %-9.2g %.1f\n", d == 0 ? "positive" : d == 1 ? "uniform" : "cancel",
                   exact != 0.0 ? sum_abs / fabs(exact) : INFINITY, g_name[v], k, REPEATS, (double)last, err,
                   exact != 0.0 ? err / fabs(exact) : 0.0, us > 0 ? n * 4.0 / (us * 1e3) : 0.0);
        }
    }
    free(h);
}

static const LessonInfo info = {"15_determinism_and_accuracy", BLOCK_RUNTIME, 256, NULL};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    g_block = opt.block;
    int table = !opt.check_only && !opt.csv; // the extra table: human mode only
    Input in = make_input_extra(&opt, table ? opt.n * sizeof(float) : 0);

    int most = 1;
    for (int v = 0; v <= V_G2G; v++) {
        int occ = 0;
        if (v == V_G2G) CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, sum_gpu_to_gpu_kernel, g_block, 0));
        else CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, g_kernel[v], g_block, 0));
        g_max_blocks[v] = occ * g_dev.sm_count > 0 ? occ * g_dev.sm_count : 1;
        if (g_max_blocks[v] > most) most = g_max_blocks[v];
    }
    CUDA_CHECK(cudaMalloc((void **)&g_partials, most * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&g_counter, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_counter, 0, sizeof(unsigned int))); // once: count_done leaves it 0 after each launch
    CUDA_CHECK(cudaMalloc((void **)&g_chunk_sums, CHUNKS_MAX * sizeof(float)));
    CUDA_CHECK(cub::DeviceReduce::Sum(NULL, g_cub_bytes, in.d_in, g_out, in.n > 0 ? in.n : 1));
    CUDA_CHECK(cudaMalloc(&g_cub_temp, g_cub_bytes > 0 ? g_cub_bytes : 1));
#if HAVE_DETERMINISM
    if (CCCL_G2G_TRUSTED(in.n)) sum_cccl_gpu_to_gpu(in.d_in, in.n, g_out); // untimed: sizes the scratch for this n
    else fprintf(opt.csv ? stderr : stdout, "# cccl_gpu_to_gpu left out at n = %zu: CUB 3.5.0 sums it wrong there (older CUBs are not trusted either)\n", in.n);
    CUDA_CHECK(cudaDeviceSynchronize());
    scratch_sized();
#else
    static int said;
    if (!said++) fprintf(opt.csv ? stderr : stdout, "# cccl_gpu_to_gpu skipped: it needs CUB 3.1 or newer (this build has %d.%d)\n",
                         CUB_VERSION / 100000, CUB_VERSION / 100 % 1000);
#endif

    for (int v = 0; v < NUM_VARIANTS; v++)
        if (g_fn[v] && (v != V_CCCL_G2G || CCCL_G2G_TRUSTED(in.n)))
            run_variant_keep(&opt, &in, g_name[v], g_fn[v], 0.0, &g_report[v]);
#if HAVE_DETERMINISM
    scratch_sizing(); // the table below sums other inputs: untimed, the scratch may grow
#endif

    // The fixed-order variants must give ONE bit pattern, run after run.
    int reps = opt.check_only ? REPEATS_CHECK : REPEATS, worst = 0;
    for (int v = V_FIXED; v <= V_G2G; v++) {
        float last;
        int k = distinct_results(g_fn[v], in.d_in, in.n, reps, &last);
        if (k > worst) worst = k;
    }
    Report r = new_report(&opt, "repeat", in.n, (double)in.n * sizeof(float));
    r.result = (float)worst; // most distinct bit patterns of fixed, kahan, fp64, gpu_to_gpu over reps runs
    r.expected = 1.0;
    r.tol = -1.0;
    r.pass = worst == 1;
    if (!opt.csv) printf("# repeat: fixed, kahan, fp64 and gpu_to_gpu each run %d times; result = most distinct bit patterns (must be 1)\n", reps);
    report_result(&opt, &r);

    // gpu_to_gpu under other grids and block sizes, as another GPU would
    // launch it: one bit pattern for all of them. The CSV's result column
    // (%.9g, enough to tell floats apart) compares GPUs.
    static const int shape[][2] = {{0, 0}, {1, 256}, {3, 32}, {-1, 128}, {0, 1024}}; // {blocks, threads}; 0: auto, -1: one per SM
    uint32_t first_bits = 0;
    int differ = 0;
    for (int k = 0; k < (int)(sizeof shape / sizeof shape[0]); k++) {
        int blocks = shape[k][0] < 0 ? g_dev.sm_count : shape[k][0], block = shape[k][1] ? shape[k][1] : g_block;
        if (in.n == 0) break;
        CUDA_CHECK(cudaMemsetAsync(g_out, 0xFF, sizeof(float), 0));
        launch_gpu_to_gpu(in.d_in, in.n, g_out, blocks, block);
        float got = read_result();
        uint32_t bits;
        memcpy(&bits, &got, sizeof bits);
        if (k == 0) first_bits = bits;
        else differ += bits != first_bits;
    }
    r = new_report(&opt, "shapes", in.n, (double)in.n * sizeof(float));
    r.result = (float)differ; // launch shapes whose bits differ from the default launch's
    r.expected = 0.0;
    r.tol = -1.0;
    r.pass = differ == 0;
    if (!opt.csv) printf("# shapes: gpu_to_gpu under 5 grid and block shapes; result = shapes whose bits differ (must be 0); bits 0x%08x\n", first_bits);
    report_result(&opt, &r);

    if (table) {
        float *d_x = NULL;
        CUDA_CHECK(cudaMalloc((void **)&d_x, in.n * sizeof(float) + 16));
        print_table(&in, &opt, d_x);
        CUDA_CHECK(cudaFree(d_x));
    }
#if HAVE_DETERMINISM
    scratch_free();
#endif
    CUDA_CHECK(cudaFree(g_chunk_sums));
    CUDA_CHECK(cudaFree(g_cub_temp));
    CUDA_CHECK(cudaFree(g_counter));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
