/*
 * Lesson 11: 16-byte loads, several of them in flight per thread.
 *
 * Since lesson 10: each thread reads float4s (16 bytes per load instruction
 * instead of 4) and issues UNROLL of them before it adds any, so one thread
 * keeps UNROLL x 16 = 64 bytes on their way from memory instead of 4. By
 * Little's law (notes.md) the bytes in flight per SM, not the arithmetic,
 * decide how close a streaming kernel gets to the memory bandwidth.
 * A float4 load needs a 16-byte aligned address, but the input may start at
 * any float (--offset 1..3) and n need not be a multiple of 4: the array is
 * split into a scalar head (0..3 floats), an aligned float4 body and a scalar
 * tail (0..3 floats), and no load ever leaves [d_in, d_in + n).
 *
 * The flaw that remains: two launches per reduction (pass 2 sums the
 * partials). At small n the second launch costs as much as the work; lesson 12
 * finishes in the same launch.
 *
 *     make lesson11 && ./lesson11
 *     ./lesson11 -n 2^20+3 --offset 1 -d uniform --check
 */
#include "harness.h"

#define BLOCK_SIZE 256               // threads per block (compile time: -b must equal it)
#define UNROLL 4                     // float4 loads each thread issues before adding any
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL)   // float4s one block reads per loop step

// ---- kernel ---------------------------------------------------------------

// Sum of v over the 32 lanes of a warp, in lane 0. All lanes take part (full mask).
__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset); // lane i adds lane i+offset's value
    return v;
}

// Sum of v over the block, in thread 0 (lesson 10: one shared slot per warp).
__device__ float block_sum(float v)
{
    __shared__ float warp_sums[WARPS];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads(); // every warp's slot is written before warp 0 reads them all
    if (warp == 0) v = warp_sum(lane < WARPS ? warp_sums[lane] : 0.0f);
    return v;
}

// Each block sums its share of in[0..n) into out[blockIdx.x].
//
//   in:  |head|  body: float4, float4, ...            |tail|
//        0..3    starts on a 16-byte boundary          0..3 floats
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    // Floats before the first 16-byte boundary: in is 4-byte aligned, so its
    // address mod 16 is 0, 4, 8 or 12 and head is 0, 3, 2 or 1 (never more than n).
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / sizeof(float);
    if (head > n) head = n;
    size_t nvec = (n - head) / 4;            // whole float4s in the body
    size_t tail = n - head - 4 * nvec;       // 0..3 floats left after the body
    const float4 *body = (const float4 *)(in + head); // 16-byte aligned; read only when nvec > 0

    float sum = 0.0f;
    // The head and tail: at most 3 + 3 scalar loads, taken by block 0's first threads.
    if (blockIdx.x == 0 && threadIdx.x < head) sum += in[threadIdx.x];
    if (blockIdx.x == 0 && threadIdx.x < tail) sum += in[head + 4 * nvec + threadIdx.x];

    // The body, grid-stride over tiles of BLOCK_SIZE x UNROLL float4s. Thread
    // t of a tile reads float4s t, t + BLOCK_SIZE, ...: each load instruction
    // of a warp covers 512 contiguous bytes. size_t: nvec may pass 2^31.
    size_t i = (size_t)blockIdx.x * TILE + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * TILE;
    for (; i + (UNROLL - 1) * BLOCK_SIZE < nvec; i += stride) { // all UNROLL of this thread's loads exist
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = body[i + u * BLOCK_SIZE]; // independent: all in flight at once
#pragma unroll
        for (int u = 0; u < UNROLL; u++) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    // The last, partial tile (if any): the same addresses, each load guarded.
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        if (i + u * BLOCK_SIZE < nvec) {
            float4 v = body[i + u * BLOCK_SIZE];
            sum += (v.x + v.y) + (v.z + v.w);
        }
    }

    sum = block_sum(sum);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

// ---- launch ---------------------------------------------------------------

static int g_max_blocks;   // SMs x resident blocks per SM (occupancy API), set in main
static float *g_partials;  // one float per block of pass 1

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // nothing to read: the sum is 0, no kernel
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    // One tile per block at most, and no more blocks than fit on the GPU at once.
    size_t tiles = (n / 4 + TILE - 1) / TILE;
    int blocks = tiles < (size_t)g_max_blocks ? (int)tiles : g_max_blocks;
    if (blocks < 1) blocks = 1; // n < 4: head and tail only
    if (blocks == 1) {          // one block already writes the final sum
        reduce_kernel<<<1, BLOCK_SIZE>>>(d_in, n, d_out);
        CUDA_CHECK_LAST();
        return;
    }
    reduce_kernel<<<blocks, BLOCK_SIZE>>>(d_in, n, g_partials); // pass 1: one partial per block
    CUDA_CHECK_LAST();
    reduce_kernel<<<1, BLOCK_SIZE>>>(g_partials, (size_t)blocks, d_out); // pass 2: same kernel, one block
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"11_vectorized_loads", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    Input in = make_input(&opt);

    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_kernel, BLOCK_SIZE, 0));
    if (per_sm < 1) per_sm = 1;
    g_max_blocks = g_dev.sm_count * per_sm;
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)g_max_blocks * sizeof(float)));

    run_variant(&opt, &in, "float4", reduce_gpu);

    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
