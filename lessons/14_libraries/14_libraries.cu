// link: -lcublas
// uses: cccl
/*
 * Lesson 14: the libraries -- CUB, Thrust and cuBLAS beside our best kernel.
 *
 * Since lesson 13: no new kernel. One process times every way to sum the
 * same input at the -n given (make bench sweeps n = 2^10..2^30), each paired
 * with the kernel of ours that gives the same guarantee:
 *   cub          cub::DeviceReduce::Sum, the classic call: temp storage sized
 *                and allocated once, outside the timer. Run to run the same
 *                bits (two kernels above a few thousand items).
 *   ours_fixed   lesson 12's last-block-done kernel: the same guarantee, one kernel.
 *   ours_atomic  lesson 12's atomic finish: a memset, one kernel, last bits vary.
 *   thrust       thrust::reduce: allocates, launches, copies the sum to the
 *                host (a sync) and frees, every call.
 *   cublas_asum  cublasSasum: sum of |x|, another function (BLAS has no plain
 *                sum); checked against sum |x|.
 * With CUB 3.1 or newer (CCCL_HOME, or a toolkit that ships it), the
 * determinism a caller asks for through an execution environment:
 *   cccl_not_guaranteed  one kernel with atomics, like ours_atomic;
 *   cccl_run_to_run      CUB's default, like ours_fixed;
 *   cccl_gpu_to_gpu      the same bits on every GPU (lesson 15 has ours);
 *   cccl_not_guaranteed_alloc  the first, called the one-line way: CUB then
 *                allocates and frees its scratch inside every call.
 * The first three get their scratch from a memory resource that hands out a
 * buffer sized before the timing: no allocation is timed.
 *
 *     make lesson14 && ./lesson14 -n 2^24
 *     make lesson14 CCCL_HOME=/path/to/cccl && ./lesson14 -n 2^20,2^24,2^28
 */
#include "harness.h"
#include <cub/device/device_reduce.cuh>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>
#include <cublas_v2.h>
#include "cccl_env.h" // CUB 3.1+: HAVE_DETERMINISM, CCCL_ENV(level) with our scratch, CCCL_G2G_TRUSTED

#define BLOCK_SIZE 512    // ours: threads per block (compile time: -b must equal it)
#define UNROLL 2          // ours: float4 loads in flight per thread
#define STREAM_BELOW_L2 2 // ours: evict-first loads for inputs up to 2 x L2
#ifndef OVERSUBSCRIBE
#define OVERSUBSCRIBE 8   // ours: above 2 x L2, up to this many blocks for every one that fits at once
#endif
#define FIXED_MIN_TILES 32 // ours_fixed: ... but only while each block still gets this many tiles
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL)

// cuBLAS returns its own status type: same idea as CUDA_CHECK.
#define CUBLAS_CHECK(call)                                                                    \
    do {                                                                                      \
        cublasStatus_t st_ = (call);                                                          \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cublasGetStatusString(st_)); \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

// ---- kernels: lesson 12's two finishes, copied in -------------------------

// stream: uniform for the whole grid; __ldcs is evict-first, __ldg the read-only path.
#define LOAD4(p) (stream ? __ldcs(p) : __ldg(p))

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

__device__ float thread_sum(const float *in, size_t n, int stream) // scalar head, float4 body, scalar tail
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
        for (int u = 0; u < UNROLL; u++) v[u] = LOAD4(body + i + u * BLOCK_SIZE);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        if (i + u * BLOCK_SIZE < nvec) {
            float4 v = LOAD4(body + i + u * BLOCK_SIZE);
            sum += (v.x + v.y) + (v.z + v.w);
        }
    }
    return sum;
}

__global__ void reduce_atomic_kernel(const float *in, size_t n, float *out, int stream) // *out zeroed first
{
    float sum = block_sum(thread_sum(in, n, stream));
    if (threadIdx.x == 0) atomicAdd(out, sum); // one per block, in any order
}

// Lesson 12's counter: an atomicInc that releases (this thread's partial is
// visible before the count) and acquires (the block that sees m sees every
// partial), and wraps back to 0 for the next launch. Returns the old count.
__device__ unsigned int count_done(unsigned int *retired, unsigned int m)
{
#if __CUDA_ARCH__ < 700
    __threadfence();
    unsigned int old = atomicInc(retired, m);
    if (old == m) __threadfence();
    return old;
#else
    unsigned int old;
    asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(retired), "r"(m) : "memory");
    return old;
#endif
}

__global__ void reduce_fixed_kernel(const float *in, size_t n, float *partials, unsigned int *retired,
                                    float *out, int stream)
{
    __shared__ bool last;
    float sum = block_sum(thread_sum(in, n, stream));
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = sum;
        last = (count_done(retired, gridDim.x - 1) == gridDim.x - 1);
    }
    __syncthreads(); // shares `last`; warp 0 is done with warp_sums before block_sum reuses them
    if (!last) return;
    float v = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += BLOCK_SIZE) v += __ldcg(&partials[b]); // fixed order
    v = block_sum(v);
    if (threadIdx.x == 0) *out = v;
}

// ---- launch ---------------------------------------------------------------

static void *g_cub_temp;        // CUB's temp storage, allocated once per n
static size_t g_cub_temp_bytes;
static cublasHandle_t g_cublas; // created once: creating one costs far more than a sum
static int g_max_blocks;        // ours: SMs x resident blocks per SM
static float *g_partials;
static unsigned int *g_retired;

static void write_zero(float *d_out) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); }

// CUB picks 32- or 64-bit offsets from the type of num_items: give it an int
// when n fits, as most callers do, and a 64-bit count above 2^31 - 1.
// With temp == NULL it only writes the bytes it needs.
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
    // Returns a host float: inside, cudaMalloc of temp storage, CUB's kernels,
    // a copy to the host, a stream sync, and cudaFree (which syncs the device).
    float sum = thrust::reduce(thrust::device, p, p + n);
    // Only for the harness, which reads *d_out. From pageable memory the copy is
    // staged before the call returns, so the local variable may then go.
    CUDA_CHECK(cudaMemcpyAsync(d_out, &sum, sizeof(float), cudaMemcpyHostToDevice, 0));
}

static void reduce_cublas_asum(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { write_zero(d_out); return; }
    // sum |x[i]|, 64-bit n. Pointer mode device (set in run): the result goes
    // straight to d_out and the call does not wait for it.
    CUBLAS_CHECK(cublasSasum_64(g_cublas, (int64_t)n, d_in, 1, d_out));
}

#if HAVE_DETERMINISM
// One call, 32-bit count when n fits (as cub_sum does).
#define CCCL_SUM(d_in, d_out, n, env)                                                     \
    ((n) <= 0x7FFFFFFF ? cub::DeviceReduce::Sum((d_in), (d_out), (int)(n), (env))          \
                       : cub::DeviceReduce::Sum((d_in), (d_out), (unsigned long long)(n), (env)))

static void reduce_cccl_not_guaranteed(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { write_zero(d_out); return; }
    CUDA_CHECK(CCCL_SUM(d_in, d_out, n, CCCL_ENV(not_guaranteed))); // a memset of *d_out, then one kernel
}
static void reduce_cccl_run_to_run(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { write_zero(d_out); return; }
    CUDA_CHECK(CCCL_SUM(d_in, d_out, n, CCCL_ENV(run_to_run))); // the default's two kernels
}
static void reduce_cccl_gpu_to_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { write_zero(d_out); return; }
    CUDA_CHECK(CCCL_SUM(d_in, d_out, n, CCCL_ENV(gpu_to_gpu))); // a reproducible accumulator
}
// The one-line form: no resource given, so CUB allocates and frees per call.
static void reduce_cccl_not_guaranteed_alloc(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { write_zero(d_out); return; }
    CUDA_CHECK(CCCL_SUM(d_in, d_out, n, cuda::execution::require(cuda::execution::determinism::not_guaranteed)));
}
#endif

static int ours_stream(size_t n) { return (double)n * sizeof(float) <= STREAM_BELOW_L2 * (double)g_dev.l2_bytes; }

// Lesson 12's grid rule: a full GPU's worth of blocks, but none that would
// find no tile (4 * TILE floats) to read. Where the input is larger than
// 2 x L2, up to OVERSUBSCRIBE times as many, which wait their turn: measured
// faster there (notes: "More blocks than fit"). A block of the fixed finish
// waits for its counter's answer before it exits, so that kernel takes extra
// blocks only while each still reads FIXED_MIN_TILES tiles or more.
static int ours_grid(size_t n, int waits)
{
    size_t wanted = (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE), factor = 1;
    if (!ours_stream(n)) {
        factor = OVERSUBSCRIBE;
        size_t keep = wanted / ((size_t)g_max_blocks * FIXED_MIN_TILES);
        if (waits && keep < factor) factor = keep > 1 ? keep : 1;
    }
    size_t most = (size_t)g_max_blocks * factor;
    return wanted < most ? (int)wanted : (int)most;
}

static void reduce_ours_atomic(const float *d_in, size_t n, float *d_out)
{
    write_zero(d_out); // the atomics add into it; n == 0 ends here
    if (n == 0) return;
    reduce_atomic_kernel<<<ours_grid(n, 0), BLOCK_SIZE>>>(d_in, n, d_out, ours_stream(n));
    CUDA_CHECK_LAST();
}

static void reduce_ours_fixed(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { write_zero(d_out); return; }
    reduce_fixed_kernel<<<ours_grid(n, 1), BLOCK_SIZE>>>(d_in, n, g_partials, g_retired, d_out, ours_stream(n));
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"14_libraries", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    Input in = make_input(&opt);
    static int said; // the one-line note about CUB, once per process
    if (!said++)
        fprintf(opt.csv ? stderr : stdout, "# CUB %d.%d.%d: %s\n", CUB_VERSION / 100000, CUB_VERSION / 100 % 1000,
                CUB_VERSION % 100,
                HAVE_DETERMINISM ? "cccl_* rows: determinism levels through an execution environment"
                                 : "cccl_* rows skipped (they need CUB 3.1 or newer: make lesson14 CCCL_HOME=DIR)");

    // Everything a library needs besides the call itself, outside the timer.
    CUDA_CHECK(cub_sum(NULL, &g_cub_temp_bytes, in.d_in, NULL, in.n)); // query only
    CUDA_CHECK(cudaMalloc(&g_cub_temp, g_cub_temp_bytes > 0 ? g_cub_temp_bytes : 1));
    CUBLAS_CHECK(cublasCreate(&g_cublas));
    CUBLAS_CHECK(cublasSetPointerMode(g_cublas, CUBLAS_POINTER_MODE_DEVICE));
    int per_sm = 0, per_sm_atomic = 0; // one grid rule for both, as in lesson 12
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_fixed_kernel, BLOCK_SIZE, 0));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_atomic, reduce_atomic_kernel, BLOCK_SIZE, 0));
    if (per_sm_atomic < per_sm) per_sm = per_sm_atomic;
    if (per_sm < 1) per_sm = 1;
    g_max_blocks = g_dev.sm_count * per_sm;
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)g_max_blocks * OVERSUBSCRIBE * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_retired, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_retired, 0, sizeof(unsigned int)));
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

    // Like beside like: each library call next to the kernel with its guarantee,
    // all timed in turns (round k starts with variant k % count), so that no
    // variant always runs first and every one sees the same clock and L2 state.
    SumVariant v[] = {
        {"cub", reduce_cub, &in},
        {"ours_fixed", reduce_ours_fixed, &in},
        {"ours_atomic", reduce_ours_atomic, &in},
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
