/*
 * Exercise 11: sum half-precision values with 16-byte loads, adding in float.
 *
 * Lesson 11 read floats four at a time. Half (__half, 2 bytes) is how much
 * deep-learning data is stored: a 16-byte load now brings 8 values, and the
 * sum must still be kept in float (half has 11 significant bits). main()
 * converts the input to halves once, outside the timer, keeping --offset:
 * the halves may start at any 2-byte boundary. Write thread_sum_half(): a
 * scalar head up to the first 16-byte boundary (0..7 halves), a body of
 * 16-byte loads, a scalar tail (0..7 halves); never read outside in[0..n).
 * The check: ints -15..15 are exact in half, so their sum must be exact;
 * uniform values round to half, so the reference is the exact sum of the
 * rounded values (made on the host), tolerance 1e-5 * sum|x|.
 *
 *     make exercise11 && ./exercise11     # FAILs until the TODO is done
 *     ./exercise11 -n 2^20+3 --offset 3 -d uniform --check
 *     make check E=11                     # every size, input and offset, the PTX
 */
#include "harness.h"
#include <cuda_fp16.h>

#define BLOCK_SIZE 256
#define WARPS (BLOCK_SIZE / 32)
#define GUARD_HALVES 64 // NaN halves on each side of the half copy (0xFFFF is a half NaN)

// ---- kernel ---------------------------------------------------------------

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

// The input converted to half once (round to nearest, like the host reference).
__global__ void to_half_kernel(const float *in, size_t n, __half *out)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = __float2half(in[i]);
}

// This thread's share of in[0..n), added in float. Grid-stride: global thread tid of
// nthreads takes 16-byte vectors tid, tid + nthreads, ...
// in is only 2-byte aligned: up to 7 halves come before the first 16-byte
// boundary and up to 7 after the last whole vector. Never read outside in[0..n).
__device__ float thread_sum_half(const __half *in, size_t n)
{
    // TODO(exercise): sum this thread's halves: scalar head, 16-byte body, scalar tail (size_t indices)
    size_t tid = (size_t)blockIdx.x * BLOCK_SIZE + threadIdx.x;
    size_t nthreads = (size_t)gridDim.x * BLOCK_SIZE;
    // in's address mod 16 is even, so 0..7 halves come before a 16-byte boundary.
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / sizeof(__half);
    if (head > n) head = n;
    size_t nvec = (n - head) / 8, tail = n - head - 8 * nvec;
    const uint4 *body = (const uint4 *)(in + head); // 16-byte aligned; read only when nvec > 0
    float sum = 0.0f;
    if (tid < head) sum += __half2float(in[tid]);
    if (tid < tail) sum += __half2float(in[head + 8 * nvec + tid]);
    for (size_t i = tid; i < nvec; i += nthreads) {
        uint4 raw = __ldg(body + i); // one 16-byte load: 8 halves
        __half2 h[4];
        memcpy(h, &raw, sizeof raw); // reinterpret the bytes without breaking aliasing rules (compiles to nothing)
#pragma unroll
        for (int k = 0; k < 4; k++) {
            float2 f = __half22float2(h[k]); // widen first: the adding is done in float
            sum += f.x + f.y;
        }
    }
    return sum;
    // END(exercise)
}

__global__ void reduce_half_kernel(const __half *in, size_t n, float *partials)
{
    float sum = block_sum(thread_sum_half(in, n));
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

__global__ void reduce_partials_kernel(const float *partials, int count, float *out) // one block
{
    float sum = 0.0f;
    for (int i = threadIdx.x; i < count; i += BLOCK_SIZE) sum += partials[i];
    sum = block_sum(sum);
    if (threadIdx.x == 0) *out = sum;
}

// ---- launch ---------------------------------------------------------------

static __half *g_half_alloc; // guards + offset + n halves + guards
static __half *g_half;       // the n halves, opt.offset halves past an aligned address
static float *g_partials;
static int g_max_blocks;

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    (void)d_in; // this exercise sums the half copy made in main
    if (n == 0) {
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    size_t vecs = n / 8 + 1;
    size_t want = (vecs + BLOCK_SIZE - 1) / BLOCK_SIZE;
    int blocks = want < (size_t)g_max_blocks ? (int)want : g_max_blocks;
    reduce_half_kernel<<<blocks, BLOCK_SIZE>>>(g_half, n, g_partials);
    CUDA_CHECK_LAST();
    reduce_partials_kernel<<<1, BLOCK_SIZE>>>(g_partials, blocks, d_out);
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"ex11_vectorized_loads", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    size_t total = opt.n + opt.offset + 2 * GUARD_HALVES;
    Input in = make_input_extra(&opt, total * sizeof(__half));

    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_half_kernel, BLOCK_SIZE, 0));
    if (per_sm < 1) per_sm = 1;
    g_max_blocks = g_dev.sm_count * per_sm;
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)g_max_blocks * sizeof(float)));

    // The half copy, between NaN guards, at the same offset as the float input.
    CUDA_CHECK(cudaMalloc((void **)&g_half_alloc, total * sizeof(__half)));
    CUDA_CHECK(cudaMemset(g_half_alloc, 0xFF, total * sizeof(__half)));
    g_half = g_half_alloc + GUARD_HALVES + opt.offset;
    if (in.n > 0) {
        to_half_kernel<<<g_max_blocks, BLOCK_SIZE>>>(in.d_in, in.n, g_half);
        CUDA_CHECK_LAST();
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    // Reference. ints: exact in half, the harness's exact sum stands. uniform:
    // the exact (compensated fp64) sum of the half-rounded values.
    if (in.dist == DIST_UNIFORM && in.n > 0) {
        float *h = copy_input_to_host(&in);
        for (size_t i = 0; i < in.n; i++) h[i] = __half2float(__float2half(h[i]));
        in.expected = neumaier_sum(h, in.n);
        in.tol = 1e-5 * in.sum_abs;
        free(h);
    }

    run_variant_bytes(&opt, &in, "half8", reduce_gpu, (double)in.n * sizeof(__half)); // 2 bytes per element

    CUDA_CHECK(cudaFree(g_half_alloc));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
