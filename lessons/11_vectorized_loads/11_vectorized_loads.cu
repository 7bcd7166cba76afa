/*
 * Lesson 11: 16-byte loads, several of them in flight per thread.
 *
 * What changed since lesson 10: how a thread reads its share (thread_sum),
 * and with it the block size and the grid. Each load is a float4, 16 bytes, and a thread issues UNROLL
 * of them, through the read-only path (__ldg), before it adds any: one
 * thread keeps UNROLL x 16 = 32 bytes on their way from memory instead of
 * lesson 10's 2 x 4 = 8. By Little's law (notes.md) the bytes in flight per
 * SM decide how close a streaming kernel gets to the memory bandwidth.
 * A float4 load needs a 16-byte aligned address, but the input may start at
 * any float (--offset 1..3) and n need not be a multiple of 4: the array is
 * split into a scalar head (0..3 floats), an aligned float4 body and a scalar
 * tail (0..3 floats), and no load ever leaves [in, in + n). BLOCK_SIZE is
 * 512: an H100 or H200 SM holds 2048 threads either way, 4 blocks not 8,
 * so pass 2 has half as many partials to add.
 *
 * The flaw that remains: two launches per reduction. At small n the second
 * launch costs as much as the work; lesson 12 finishes in the same launch.
 *
 *     make lesson11 && ./lesson11              # default n = 2^26, BLOCK_SIZE 512
 *     ./lesson11 -n 2^20+3 --offset 1 -d uniform --check
 *     make lab_12_unroll_fences EXTRA=-DUNROLL=1   # this loop under lesson 12's fixed finish and a memset one, UNROLL 1
 */
#include "harness.h"

#define BLOCK_SIZE 512 // threads per block, a multiple of 32: it beat 256 and 1024 at 2^30 on an H200,
                       // with an older lesson 12 kernel (results/tune-lesson12-nvidia-h200.txt), not re-measured
#define UNROLL 2       // float4 loads each thread issues before adding any: 1 is slower from
                       // 2^24 up, 4 within 2% of 2 on an H100 (lab/12_unroll_fences.md)
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL) // float4s one block reads per round
#define FULL_MASK 0xffffffffu // all 32 lanes take part in every shuffle below

#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || BLOCK_SIZE % 32 != 0 || UNROLL < 1
#error "BLOCK_SIZE must be a multiple of 32 in 32..1024, UNROLL at least 1"
#endif
// Lesson 10's warp and block sums, at the bottom of the file.
static __device__ float warp_sum(float v);
static __device__ float block_sum(float v);

// ---- kernel ---------------------------------------------------------------

// The new part: this thread's share of in[0..n), read 16 bytes at a time.
//
//   in:  |head|  body: float4, float4, ...            |tail|
//        0..3    starts on a 16-byte boundary          0..3 floats
//
// The body is read in rounds of TILE float4s per block, as lesson 09 read
// pairs: thread t of block b reads float4s b*TILE + t, + BLOCK_SIZE, ...
// (UNROLL of them), then the same one grid further on. Each warp load
// covers 512 contiguous bytes. Block 0's first threads add the head and tail.
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

// Any grid of BLOCK_SIZE-thread blocks: together they read in[0..n) exactly
// once, whatever gridDim.x is (thread_sum), and block b writes its sum to
// out[b]. Pass 2 is this kernel as one block over the partials.
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    float v = block_sum(thread_sum(in, n)); // every thread calls block_sum
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// ---- launch ---------------------------------------------------------------

static int g_max_blocks;         // SMs x resident blocks per SM (set by run, for each option combination)
static float *g_partials;        // one partial per block of pass 1

// Exactly two passes for any n > 0.
static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the sum of nothing is 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    // A full GPU's worth of blocks, at most one per 4 * TILE floats of n (a round
    // of TILE float4s): n = 1000 gets 1 block; at n = 4097 the second reads nothing.
    size_t wanted = (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE);
    int blocks = wanted < (size_t)g_max_blocks ? (int)wanted : g_max_blocks;

    // Pass 1: one partial per block.
    reduce_kernel<<<blocks, BLOCK_SIZE>>>(d_in, n, g_partials);
    CUDA_CHECK_LAST();
    // Pass 2: the same kernel as ONE block over the partials (16-byte
    // aligned: no head); its block_sum writes the result. Same stream: it
    // starts only after pass 1 has written every partial.
    reduce_kernel<<<1, BLOCK_SIZE>>>(g_partials, (size_t)blocks, d_out);
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"11_vectorized_loads", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    Input in = make_input(&opt); // also reads the SM count into g_dev
    // How many blocks of this kernel fit on one SM at once, given its
    // registers, shared memory and threads. More than SMs x that would only
    // queue behind the first wave; fewer would leave warp slots empty.
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_kernel, BLOCK_SIZE, 0));
    if (per_sm < 1) per_sm = 1;
    g_max_blocks = g_dev.sm_count * per_sm;
    if (!opt.csv)
        printf("grid: %d SMs x %d resident blocks = at most %d blocks of %d threads\n", g_dev.sm_count, per_sm,
               g_max_blocks, BLOCK_SIZE);
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)g_max_blocks * sizeof(float)));
    run_variant(&opt, &in, "float4", reduce_gpu);
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }

// ---- unchanged from lesson 10 ---------------------------------------------

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
    // No second barrier: warp_sums is written once and read once per launch.
    return v;
}
