/*
 * Lesson 09: every thread adds many elements before the tree; two passes.
 *
 * What changed since lesson 08: lesson 06's two loads per thread become a
 * grid-stride loop. Each round, a thread adds in[i] and in[i + BLOCK_SIZE]
 * (two independent loads, both on their way before either is added, as in
 * Harris's kernel 7), then moves on by the size of the whole grid. The grid
 * is only as large as the GPU holds at once: SMs x the blocks per SM that
 * the occupancy API reports. Each thread adds many elements in a register
 * (about 250 at 2^26 on an H100), and the tree runs once per block instead of
 * once per 512 elements. Pass 1 leaves one partial per block; pass 2 is the
 * same kernel as ONE block over those partials. Correct for any n, above
 * 2^31 elements too: every index and stride is a size_t.
 *
 * The flaw that remains: the tree still passes every sum through shared
 * memory and barriers. Lesson 10 adds inside each warp with register shuffles.
 *
 *     make lesson09 && ./lesson09              # default n = 2^26, BLOCK_SIZE 256
 *     ./lesson09 -n 2^31+5 --check             # above 2^31 (about 8.6 GB of device memory)
 */
#include "harness.h"

#define BLOCK_SIZE 256 // threads per block: a power of two, 32..1024

#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || (BLOCK_SIZE & (BLOCK_SIZE - 1)) != 0
#error "BLOCK_SIZE must be a power of two in 32..1024"
#endif
// Lesson 07's last six steps, at the bottom of the file.
static __device__ float warp_reduce(float *sdata, unsigned int tid);

// ---- kernel ---------------------------------------------------------------

// Sums into out[blockIdx.x] the elements this block's threads visit: thread
// t of block b adds in[b*2*BLOCK_SIZE + t] and the element BLOCK_SIZE after
// it, then the same pair one grid further on (2*BLOCK_SIZE*gridDim.x), and
// so on while below n. The grid covers [0, n) exactly once, whatever
// gridDim.x is; with gridDim.x = 1 one block adds it all.
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    // Static: BLOCK_SIZE is a constant. The warp part reads up to sdata[63],
    // so a block of 32 threads gets 32 more slots.
    __shared__ float sdata[BLOCK_SIZE < 64 ? 64 : BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * (2 * BLOCK_SIZE) + tid; // size_t: passes 2^32 when n does
    // The new part: lesson 06's pair of loads, repeated over the array. In
    // each round the grid reads one contiguous stretch, every warp two
    // coalesced 128-byte lines. The stride is a size_t product: past 2^31.
    size_t stride = (size_t)gridDim.x * (2 * BLOCK_SIZE);
    float v = 0.0f;
    for (; i < n; i += stride) {
        v += in[i];
        if (i + BLOCK_SIZE < n) v += in[i + BLOCK_SIZE]; // needs nothing from in[i]: both loads in flight
    }
    sdata[tid] = v;
    if (BLOCK_SIZE < 64) sdata[tid + 32] = 0.0f; // a 32-thread block: zeros for the warp part
    __syncthreads(); // every slot is written before any thread reads a neighbour's

    // Lesson 08's tree (the compiler writes its steps out): it now runs once
    // per block, after many additions per thread (about 250 at n = 2^26).
    for (unsigned int s = BLOCK_SIZE / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s]; // reads [s, 2s), writes [0, s): no overlap
        // This step's sums are finished before the next step reads them. Every
        // thread reaches this barrier: the loop bounds are the same for all.
        __syncthreads();
    }

    // Lesson 07's last six steps: warp 0 finishes alone; warps 1.. leave.
    if (tid < 32) {
        float total = warp_reduce(sdata, tid);
        if (tid == 0) out[blockIdx.x] = total;
    }
}

// ---- launch ---------------------------------------------------------------

static int g_max_blocks;         // SMs x resident blocks per SM (set in run)
static float *g_partials;        // one partial per block of pass 1

// Exactly two passes for any n > 0.
static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the sum of nothing is 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    // A full GPU's worth of blocks, but none that would find no element at
    // all (small n: n = 1000 gets 2 blocks).
    size_t wanted = (n + 2 * (size_t)BLOCK_SIZE - 1) / (2 * (size_t)BLOCK_SIZE);
    int blocks = wanted < (size_t)g_max_blocks ? (int)wanted : g_max_blocks;

    // Pass 1: one partial per block.
    reduce_kernel<<<blocks, BLOCK_SIZE>>>(d_in, n, g_partials);
    CUDA_CHECK_LAST();
    // Pass 2: the same kernel as ONE block; its loop walks the partials (a
    // few per thread), its tree writes the result. Same stream: it starts
    // only after pass 1 has written every partial.
    reduce_kernel<<<1, BLOCK_SIZE>>>(g_partials, (size_t)blocks, d_out);
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"09_many_per_thread", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

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
    run_variant(&opt, &in, "cascade", reduce_gpu);
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }

// ---- unchanged from lesson 07 ---------------------------------------------

// The last six steps, run by all 32 lanes of warp 0 (threads 0..31). On
// entry sdata[0..63] holds 64 partial sums; returns the block's total in
// lane 0. Each step needs the results of only the lower lanes (16, then 8,
// 4, ...); the other lanes add too: cheaper than masking them off, and it
// keeps all 32 lanes at every __syncwarp.
__device__ float warp_reduce(float *sdata, unsigned int tid)
{
    // Race-free: each step reads into a register, waits, writes, waits.
    // __syncwarp() is a barrier and a memory fence for the warp's lanes, so
    // the compiler cannot keep sdata in registers across it either.
    float v = sdata[tid] + sdata[tid + 32]; // both written before the last __syncthreads()
    sdata[tid] = v;
    __syncwarp(); // every lane's step-32 sum is in sdata before anyone reads it
    v += sdata[tid + 16];
    __syncwarp(); // every lane has read its neighbour before any lane overwrites its slot
    sdata[tid] = v;
    __syncwarp(); // step-16 sums written before step 8 reads them
    v += sdata[tid + 8];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 4];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 2];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 1]; // last read: nothing writes after it, no barrier needed
    return v;
}
