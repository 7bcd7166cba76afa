/*
 * Exercise 09: the grid-stride loop with four independent accumulators.
 *
 * In lesson 09 each thread's loop adds into one register, so every add waits
 * for the one before it. Here a thread visits its elements the plain
 * grid-stride way, one per stride (stride = gridDim.x * BLOCK_SIZE, not lesson
 * 09's pair). Write the loop so that each round takes four elements, i,
 * i + stride, i + 2*stride and i + 3*stride (i = first in the first round),
 * into four separate sums, then takes the rest one at a time; add the four
 * sums at the end. One bound check covers a round's four elements, so the
 * compiler may issue four loads before the first add, and the four sums
 * make the adds independent (lesson 11 issues its loads first too). It must stay
 * correct for any n (the tail!) and any grid, with size_t indices. Then
 * measure it against lesson 09, whose loop issues two loads a round
 * (results/sass-lesson09-sm_90.txt): whether four gain anything is for the
 * measurement to say.
 *
 *     make exercise09 && ./exercise09     # FAILs until the TODO is done
 *     make check E=09                     # every size and input; then the GB/s beside lesson 09's
 */
#include "harness.h"

#define BLOCK_SIZE 256 // threads per block: a power of two, 32..1024

#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || (BLOCK_SIZE & (BLOCK_SIZE - 1)) != 0
#error "BLOCK_SIZE must be a power of two in 32..1024"
#endif
// The warp part reads sdata[0..63]: a block of 32 gets 32 more slots.
#define SMEM_FLOATS (BLOCK_SIZE < 64 ? 64 : BLOCK_SIZE)

// ---- kernel ---------------------------------------------------------------

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

// Sums into out[blockIdx.x] the elements this block's threads visit: thread
// t of block b adds in[b*BLOCK_SIZE + t], then every (gridDim.x*BLOCK_SIZE)th
// element after it, while below n. The grid covers [0, n) exactly once,
// whatever gridDim.x is; with gridDim.x = 1 one block adds it all.
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    __shared__ float sdata[SMEM_FLOATS]; // static: BLOCK_SIZE is a constant
    unsigned int tid = threadIdx.x;
    // size_t, not int: indices and the stride must count past 2^31.
    const size_t stride = (size_t)gridDim.x * BLOCK_SIZE;
    const size_t first = (size_t)blockIdx.x * BLOCK_SIZE + tid; // this thread's first element
    float v = 0.0f;
    // TODO(exercise): add into v every element this thread visits (first, first + stride, ... below n): four per round into four separate accumulators, then the rest one at a time.
    size_t i = first;
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    for (; i + 3 * stride < n; i += 4 * stride) { // all four elements exist
        a0 += in[i];              // four independent loads and adds: no add
        a1 += in[i + stride];     // waits for another, and the four loads
        a2 += in[i + 2 * stride]; // can be in flight together
        a3 += in[i + 3 * stride];
    }
    for (; i < n; i += stride) // the tail: at most three more elements
        a0 += in[i];
    v = (a0 + a1) + (a2 + a3);
    // END(exercise)
    sdata[tid] = v;
    if (BLOCK_SIZE < 64) sdata[tid + 32] = 0.0f; // a 32-thread block: zeros for the warp part
    __syncthreads(); // every slot is written before any thread reads a neighbour's

    // Lesson 08's tree, in its 2007 spelling (lesson 08's notes). Each barrier
    // is reached by every thread of the block or by none.
    if (BLOCK_SIZE >= 1024) {
        if (tid < 512) sdata[tid] += sdata[tid + 512];
        __syncthreads(); // this step's sums finished before the next step reads them
    }
    if (BLOCK_SIZE >= 512) {
        if (tid < 256) sdata[tid] += sdata[tid + 256];
        __syncthreads();
    }
    if (BLOCK_SIZE >= 256) {
        if (tid < 128) sdata[tid] += sdata[tid + 128];
        __syncthreads();
    }
    if (BLOCK_SIZE >= 128) {
        if (tid < 64) sdata[tid] += sdata[tid + 64];
        __syncthreads(); // the 64 sums the warp part reads are complete
    }

    // Lesson 07's last six steps: warp 0 finishes alone.
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
    // all (small n: n = 1000 gets 4 blocks).
    size_t wanted = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
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

static const LessonInfo info = {"ex09_many_per_thread", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    Input in = make_input(&opt);            // also reads the SM count into g_dev
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
    run_variant(&opt, &in, "acc4", reduce_gpu);
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
