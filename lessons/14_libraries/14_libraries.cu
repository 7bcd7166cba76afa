// link: -lcublas
// uses: cccl
/*
 * Lesson 14: the libraries -- CUB, Thrust and cuBLAS beside lesson 12's kernels.
 *
 * No new kernel: lesson 12's two finishes, unchanged (at the end of this file),
 * timed in turns in one process beside the library calls with their guarantee:
 * ours_atomic beside cccl_not_guaranteed (the last bits vary), ours_fixed beside
 * cub and cccl_run_to_run (the same bits every run); cccl_gpu_to_gpu gives the
 * same bits on every GPU (lesson 15 has ours). Then thrust::reduce and
 * cccl_not_guaranteed_alloc (both allocate in every call) and cublasSasum (sum
 * |x|). The cccl_* rows need CUB 3.4+ (CCCL_HOME=DIR); with CUB 3.1 to 3.3 the build says why not.
 *
 *     make lesson14 && ./lesson14 -n 2^24
 *     make lesson14 CCCL_HOME=/path/to/cccl && ./lesson14 -n 2^20,2^24,2^28
 */
#include "harness.h"
#include <cuda/atomic> // cuda::atomic_ref: release and acquire on the atomic finish's flag (lesson 12)
#include <cub/device/device_reduce.cuh>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>
#include <cublas_v2.h>
#include "cccl_env.h" // CUB 3.4+: HAVE_DETERMINISM, CCCL_ENV(level) with our scratch, CCCL_G2G_TRUSTED

#define BLOCK_SIZE 512 // threads per block, a multiple of 32: at 2^30 it beat 256 and 1024, by under 1%
                       // (lesson 12's kernel at UNROLL 4, on an H200: results/tune-lesson12-nvidia-h200.txt)
#define UNROLL 8       // float4 loads in flight per thread, lesson 12's (lesson 11: 2; lesson 12's notes)
#define MIN_BLOCKS 2   // __launch_bounds__: ptxas may use 64 registers a thread, so all UNROLL loads fit
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL) // float4s one block reads per round
#define FULL_MASK 0xffffffffu // all 32 lanes take part in every shuffle below

#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || BLOCK_SIZE % 32 != 0 || UNROLL < 1
#error "BLOCK_SIZE must be a multiple of 32 in 32..1024, UNROLL at least 1"
#endif
// Lesson 11's reading and lesson 10's warp and block sums, at the bottom of the file.
static __device__ float thread_sum(const float *in, size_t n);
static __device__ float warp_sum(float v);
static __device__ float block_sum(float v);

// cuBLAS returns its own status type: same idea as CUDA_CHECK.
#define CUBLAS_CHECK(call)                                                                    \
    do {                                                                                      \
        cublasStatus_t st_ = (call);                                                          \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                   \
            fprintf(stderr, "%s: %s:%d: %s: %s\n", g_prog, __FILE__, __LINE__, #call, cublasGetStatusString(st_)); \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

// Lesson 12's state, its fixed kernel and its two launchers: the code is at the end of this file.
static int g_max_blocks;         // SMs x resident blocks per SM: lesson 11's one wave (set in run; only printed)
static float *g_partials;        // one partial per block
static unsigned int *g_retired;  // the blocks-done counter, zeroed once in run
static unsigned int *g_state;    // after it, also zeroed: the last number swapped in ([0]), the flag ([32]: the next 128-byte line)
__global__ void reduce_fixed_kernel(const float *in, size_t n, float *partials, unsigned int *retired, float *out);
static void reduce_atomic(const float *d_in, size_t n, float *d_out);
static void reduce_gpu(const float *d_in, size_t n, float *d_out);

// ---- launch: the libraries ------------------------------------------------

static void *g_cub_temp;        // CUB's temp storage, allocated once per n
static size_t g_cub_temp_bytes;
static cublasHandle_t g_cublas; // created once: creating one costs far more than a sum

static void write_zero(float *d_out) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); }

// CUB picks 32- or 64-bit offsets from num_items' type: an int when n fits, as most
// callers give, a 64-bit count above 2^31 - 1. With temp == NULL it only sizes temp.
static cudaError_t cub_sum(void *temp, size_t *bytes, const float *d_in, float *d_out, size_t n)
{
    if (n <= 0x7FFFFFFF) return cub::DeviceReduce::Sum(temp, *bytes, d_in, d_out, (int)n, 0);
    return cub::DeviceReduce::Sum(temp, *bytes, d_in, d_out, (unsigned long long)n, 0);
}

static void reduce_cub(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { write_zero(d_out); return; }
    CUDA_CHECK(cub_sum(g_cub_temp, &g_cub_temp_bytes, d_in, d_out, n)); // asynchronous, like our kernels
}

static void reduce_thrust(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { write_zero(d_out); return; }
    thrust::device_ptr<const float> p = thrust::device_pointer_cast(d_in);
    // A host float back: cudaMalloc, CUB's kernels, a stream sync, a copy back, cudaFree (a device sync).
    float sum = thrust::reduce(thrust::device, p, p + n);
    // For the harness, which reads *d_out; the copy from pageable memory is staged before it returns.
    CUDA_CHECK(cudaMemcpyAsync(d_out, &sum, sizeof(float), cudaMemcpyHostToDevice, 0));
}

static void reduce_cublas_asum(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { write_zero(d_out); return; }
    // sum |x[i]|, 64-bit n. Pointer mode device (set in run): straight to d_out, no wait.
    CUBLAS_CHECK(cublasSasum_64(g_cublas, (int64_t)n, d_in, 1, d_out));
}

#if HAVE_DETERMINISM
// One call at the level env asks for, an int count when n fits (as cub_sum); n == 0 zeroes *d_out.
#define CCCL_SUM(d_in, d_out, n, env)                                                          \
    ((n) == 0 ? cudaMemsetAsync((d_out), 0, sizeof(float), 0)                                   \
     : (n) <= 0x7FFFFFFF ? cub::DeviceReduce::Sum((d_in), (d_out), (int)(n), (env))             \
                         : cub::DeviceReduce::Sum((d_in), (d_out), (unsigned long long)(n), (env)))
static void reduce_cccl_not_guaranteed(const float *d_in, size_t n, float *d_out)
{
    CUDA_CHECK(CCCL_SUM(d_in, d_out, n, CCCL_ENV(not_guaranteed))); // a memset, one kernel with atomics
}
static void reduce_cccl_run_to_run(const float *d_in, size_t n, float *d_out)
{
    CUDA_CHECK(CCCL_SUM(d_in, d_out, n, CCCL_ENV(run_to_run))); // the default's kernels (two; one up to a tile)
}
static void reduce_cccl_gpu_to_gpu(const float *d_in, size_t n, float *d_out)
{
    CUDA_CHECK(CCCL_SUM(d_in, d_out, n, CCCL_ENV(gpu_to_gpu))); // a reproducible accumulator
}
// The one-line form: no resource given, so CUB allocates and frees per call.
static void reduce_cccl_not_guaranteed_alloc(const float *d_in, size_t n, float *d_out)
{
    CUDA_CHECK(CCCL_SUM(d_in, d_out, n, cuda::execution::require(cuda::execution::determinism::not_guaranteed)));
}
#endif

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"14_libraries", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run per combination of the listed -n, -s, -d, --offset and -b values.
static int run(Options opt)
{
    Input in = make_input(&opt); // also reads the SM count into g_dev
    static int said; // the one-line note about CUB, once per process
    if (!said++)
        fprintf(opt.csv ? stderr : stdout, "# CUB %d.%d.%d: %s\n", CUB_VERSION / 100000, CUB_VERSION / 100 % 1000, CUB_VERSION % 100,
                HAVE_DETERMINISM ? "cccl_* rows: determinism levels through an execution environment"
                                 : "cccl_* rows skipped (they need CUB 3.4 or newer: make lesson14 CCCL_HOME=DIR)");

    // ours_atomic launches a block per tile, ours_fixed one per 4 (at least 256, or one per tile); SMs x resident blocks run at once.
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_fixed_kernel, BLOCK_SIZE, 0));
    if (per_sm < 1) per_sm = 1;
    g_max_blocks = g_dev.sm_count * per_sm;
    size_t tiles = (opt.n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE); // the atomic finish's grid at this n
    if (!opt.csv) // and the fixed finish's, reduce_gpu's rule:
        printf("grid: %zu blocks of %d threads (ours_atomic), %zu (ours_fixed); %d SMs x %d resident blocks = %d at once\n", tiles, BLOCK_SIZE,
               tiles < 1024 ? (tiles < 256 ? tiles : 256) : (tiles + 3) / 4, g_dev.sm_count, per_sm, g_max_blocks);
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (tiles + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_retired, 64 * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_retired, 0, 64 * sizeof(unsigned int))); // no block counted, no launch seen
    g_state = g_retired + 1;
    // Everything a library needs besides the call itself, outside the timer.
    CUDA_CHECK(cub_sum(NULL, &g_cub_temp_bytes, in.d_in, NULL, in.n)); // query only
    CUDA_CHECK(cudaMalloc(&g_cub_temp, g_cub_temp_bytes > 0 ? g_cub_temp_bytes : 1));
    CUBLAS_CHECK(cublasCreate(&g_cublas));
    CUBLAS_CHECK(cublasSetPointerMode(g_cublas, CUBLAS_POINTER_MODE_DEVICE));
#if HAVE_DETERMINISM
    scratch_sizing(); // one untimed call of each level sizes the scratch for this n
    reduce_cccl_not_guaranteed(in.d_in, in.n, g_out);
    reduce_cccl_run_to_run(in.d_in, in.n, g_out);
    if (CCCL_G2G_TRUSTED(in.n)) reduce_cccl_gpu_to_gpu(in.d_in, in.n, g_out);
    CUDA_CHECK(cudaDeviceSynchronize());
    scratch_sized();
#endif

    Input abs_in = in; // cublasSasum computes sum|x|: check it against that
    abs_in.expected = in.sum_abs;
    abs_in.tol = tolerance_for(in.sum_abs, in.sum_abs); // a sum of positives rounds even for ints above 2^24

    // Timed in turns (round k starts with variant k % count): the same clock and L2 state for all.
    SumVariant v[] = {
        {"cub", reduce_cub, &in},
        {"ours_fixed", reduce_gpu, &in},
        {"ours_atomic", reduce_atomic, &in},
#if HAVE_DETERMINISM
        {"cccl_run_to_run", reduce_cccl_run_to_run, &in},
        {"cccl_not_guaranteed", reduce_cccl_not_guaranteed, &in},
        {"cccl_gpu_to_gpu", reduce_cccl_gpu_to_gpu, &in},
        {"cccl_not_guaranteed_alloc", reduce_cccl_not_guaranteed_alloc, &in},
#endif
        {"thrust", reduce_thrust, &in},
        {"cublas_asum", reduce_cublas_asum, &abs_in},
    };
    int count = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) // drop the one row this CUB gets wrong at this n
        if (strcmp(v[i].name, "cccl_gpu_to_gpu") != 0 || CCCL_G2G_TRUSTED(in.n)) v[count++] = v[i];
    if (HAVE_DETERMINISM && !CCCL_G2G_TRUSTED(in.n))
        fprintf(opt.csv ? stderr : stdout, "# cccl_gpu_to_gpu left out at n = %zu: CUB 3.5.0 sums it wrong there (older CUBs are not trusted either)\n", in.n);
    run_variants(&opt, v, count);

#if HAVE_DETERMINISM
    scratch_free();
#endif
    CUDA_CHECK(cudaFree(g_retired));
    CUDA_CHECK(cudaFree(g_partials));
    CUBLAS_CHECK(cublasDestroy(g_cublas));
    CUDA_CHECK(cudaFree(g_cub_temp));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }

// ---- unchanged from lesson 12 --------------------------------------------

// (a) atomic. Any grid of BLOCK_SIZE-thread blocks reading in[0..n) once; each block adds its sum
// into *out with one atomicAdd. No memset: thread 0 of the first block to swap this launch's number
// into state[0] zeroes *out once it has read its share, then stores the number in state[32] (release).
// Every other block adds only after it has read it there (acquire): after the zero. Blocks 0..255 swap
// at their start; a later one only if the number is not in state[32] yet (a swap in every block costs
// time: lab/12_racy_zero.md). A block waits only after losing a swap: for the first, which waits for nobody.
__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_atomic_kernel(const float *in, size_t n, unsigned int *state, unsigned int launch, float *out)
{
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> flag(state[32]); // its own 128-byte line, apart from the swaps
    unsigned int got = threadIdx.x != 0 ? launch : blockIdx.x < 256 ? atomicExch(&state[0], launch) : flag.load(cuda::memory_order_relaxed); // relaxed; back during the loads
    float v = thread_sum(in, n);
    if (got != launch && blockIdx.x >= 256) got = atomicExch(&state[0], launch); // a later block, and no number yet: it swaps
    if (got != launch) *out = 0.0f; // the first swap (it got another launch's number, or 0) zeroes,
    if (got != launch) flag.store(launch, cuda::memory_order_release); // then stores the number
    unsigned int seen = threadIdx.x == 0 && got == launch ? flag.load(cuda::memory_order_acquire) : launch; // the acquire holds warp 0 before block_sum's barrier
    v = block_sum(v); // every thread calls block_sum
    if (threadIdx.x != 0) return;
    while (seen != launch) seen = flag.load(cuda::memory_order_acquire); // until the zero is visible
    atomicAdd(out, v); // one atomic per block, in whatever order blocks finish
}

// Counts the calling block done; returns the count before it (0..m; m puts it back to 0):
// release and acquire, so the block that sees m sees every partial (lesson 12's notes).
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

// (b) fixed. Each block stores its sum in partials[blockIdx.x]; the last to count itself adds
// partials[0..gridDim.x) in index order into *out. *retired: 0 before the first launch, and after each.
__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_fixed_kernel(const float *in, size_t n, float *partials, unsigned int *retired, float *out)
{
    __shared__ bool last; // is this block the last one to count itself?
    float v = block_sum(thread_sum(in, n)); // every thread calls block_sum
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        last = (count_done(retired, gridDim.x - 1) == gridDim.x - 1);
    }
    __syncthreads(); // hands `last`, and what thread 0 acquired, to the whole block
    if (!last) return; // the same for every thread of the block: no barrier below is split
    // Partials t, t + BLOCK_SIZE, ... in index order, 4 * UNROLL loads in flight,
    // then the same tree (__ldcg: at L2; the acquire in count_done orders them).
    v = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += 4 * UNROLL * BLOCK_SIZE) {
        float w[4 * UNROLL];
#pragma unroll
        for (int u = 0; u < 4 * UNROLL; u++) w[u] = b + u * BLOCK_SIZE < gridDim.x ? __ldcg(&partials[b + u * BLOCK_SIZE]) : 0.0f;
#pragma unroll
        for (int u = 0; u < 4 * UNROLL; u++) v += w[u];
    }
    v = block_sum(v); // block_sum's slots are free again: warp 0 read them before the barrier above
    if (threadIdx.x == 0) *out = v;
}

// The fixed finish: a block per 4 tiles, at least 256 blocks (or one per tile), from n alone.
static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the sum of nothing is 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    size_t wanted = (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE); // tiles, then lesson 12's blocks:
    wanted = wanted < 1024 ? (wanted < 256 ? wanted : 256) : (wanted + 3) / 4; // 2^30 floats: 16,384
    reduce_fixed_kernel<<<(unsigned int)wanted, BLOCK_SIZE>>>(d_in, n, g_partials, g_retired, d_out); // the only launch
    CUDA_CHECK_LAST();
}

// The atomic finish: a block per tile (2^30 floats: 65,536), no memset (n = 0: one block zeroes *out). Each
// launch needs a new number, and one at a time on g_state (one stream; a graph replay would repeat a number).
static unsigned int g_launch; // the atomic launches so far, from 1: this one's number
static void reduce_atomic(const float *d_in, size_t n, float *d_out)
{
    size_t blocks = n ? (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE) : 1;
    reduce_atomic_kernel<<<(unsigned int)blocks, BLOCK_SIZE>>>(d_in, n, g_state, ++g_launch, d_out);
    CUDA_CHECK_LAST();
}

// The sum of v over the 32 lanes of this warp, in lane 0; all 32 must call it (lesson 10).
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

    // size_t: nvec may pass 2^31. Whole rounds of UNROLL float4s, then a guarded last one.
    size_t i = (size_t)blockIdx.x * TILE + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * TILE;
    for (; i + (UNROLL - 1) * BLOCK_SIZE < nvec; i += stride) {
        float4 v[UNROLL];
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
