/*
 * Lesson 13: thread block clusters -- blocks that add through each other's
 * shared memory (Hopper, sm_90 and newer; elsewhere it prints SKIP).
 *
 * What changed since lesson 12: the atomic finish, and with it the grid: one
 * wave in clusters of 2 to 16 blocks, which the hardware places together on one
 * GPC; a block can read a peer's shared memory (distributed shared memory), so
 * each cluster adds its blocks' sums on chip and sends one atomicAdd to *out,
 * not one per block. Variants: cluster2 ... cluster16, block (clusters of 1)
 * and fixed (lesson 12's kernel, a block per tile). The flaw: measured, every cluster size is slower than lesson
 * 12's atomic finish (a block per tile, no memset): a cluster launch and its memset
 * cost even in clusters of 1, and from 4 up whole clusters leave block slots idle.
 *
 *     make lesson13 && ./lesson13
 */
#include "harness.h"
#include <cooperative_groups.h> // cluster_group: this_cluster(), sync(), map_shared_rank()
namespace cg = cooperative_groups;

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
// Lesson 12's pieces, at the bottom of the file.
static __device__ float thread_sum(const float *in, size_t n);
static __device__ float warp_sum(float v);
static __device__ float block_sum(float v);
static __global__ void reduce_fixed_kernel(const float *in, size_t n, float *partials, unsigned int *retired, float *out);

// ---- kernel ---------------------------------------------------------------

// (a) cluster: any grid of BLOCK_SIZE-thread blocks in clusters, reading in[0..n)
// once; rank 0 of each cluster adds its blocks' sums into *out (0 before the
// launch). sm_90 only: older targets get an empty body (notes.md, Pitfalls).
__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_cluster_kernel(const float *in, size_t n, float *out)
{
#if __CUDA_ARCH__ >= 900
    __shared__ float block_total; // this block's sum, read by rank 0 of its cluster
    cg::cluster_group cluster = cg::this_cluster();
    float v = block_sum(thread_sum(in, n)); // every thread calls block_sum
    if (threadIdx.x == 0) block_total = v;
    // All the cluster's threads arrive before any goes on (arrive + wait,
    // release/acquire): no total is read before its block has written it.
    cluster.sync();
    if (cluster.block_rank() == 0 && threadIdx.x < 32) { // warp 0 of rank 0: lane r reads rank r's total
        float t = threadIdx.x < cluster.num_blocks() ? *cluster.map_shared_rank(&block_total, threadIdx.x) : 0.0f;
        t = warp_sum(t); // the same order in every run, within the cluster
        if (threadIdx.x == 0) atomicAdd(out, t); // one atomic per cluster
    }
    // A block's shared memory lives only while the block does: none may exit
    // while rank 0 may still read its block_total, so all wait for rank 0 here.
    cluster.sync();
#endif
}

// ---- launch ---------------------------------------------------------------

static int g_max_blocks;         // SMs x resident blocks per SM (set by run, for each option combination)
static float *g_partials;        // one partial per block
static unsigned int *g_retired;  // the blocks-done counter, zeroed by run before its first launch
static int g_cluster, g_cluster_blocks; // blocks per cluster, and blocks of such clusters that fit at once

// The fixed finish: lesson 12's kernel on a block per tile (lesson 12 takes one per 4); the last block adds the partials.
static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the sum of nothing is 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    size_t wanted = (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE); // 2^30 floats: 65,536 blocks
    reduce_fixed_kernel<<<(unsigned int)wanted, BLOCK_SIZE>>>(d_in, n, g_partials, g_retired, d_out); // the only launch
    CUDA_CHECK_LAST();
}

// A launch of `blocks` blocks in clusters of g_cluster; attr must outlive it.
static cudaLaunchConfig_t cluster_config(int blocks, cudaLaunchAttribute *attr)
{
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim = {(unsigned int)g_cluster, 1, 1};
    return {dim3(blocks), dim3(BLOCK_SIZE), 0, 0, attr, 1}; // grid, block, no dynamic shared memory, stream 0
}

static void reduce_cluster(const float *d_in, size_t n, float *d_out)
{
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); // the blocks add into it
    if (n == 0) return;
    size_t wanted = (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE); // a block per tile,
    int blocks = wanted < (size_t)g_cluster_blocks ? (int)wanted : g_cluster_blocks; // capped at what fits: one wave
    blocks = (blocks + g_cluster - 1) / g_cluster * g_cluster; // in whole clusters (g_cluster_blocks is whole)
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = cluster_config(blocks, &attr);
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, reduce_cluster_kernel, d_in, n, d_out));
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"13_thread_block_clusters", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run per combination of the listed -n, -s, -d, --offset and -b values.
static int run(Options opt)
{
    Input in = make_input(&opt); // also reads the SM count into g_dev
    require_sm90();              // older GPU: prints SKIP and exits 0
    // One wave for the clusters (lesson 11's); the fixed finish takes a block per tile.
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_fixed_kernel, BLOCK_SIZE, 0));
    if (per_sm < 1) per_sm = 1;
    g_max_blocks = g_dev.sm_count * per_sm;
    size_t tiles = (opt.n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE); // reduce_gpu's grid at this n
    if (!opt.csv)
        printf("grid: %d SMs x %d resident blocks = at most %d blocks of %d threads\n", g_dev.sm_count, per_sm,
               g_max_blocks, BLOCK_SIZE);
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (tiles + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_retired, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_retired, 0, sizeof(unsigned int)));
    run_variant(&opt, &in, "fixed", reduce_gpu);
    // The cluster finish in clusters of 1, 2, 4, 8 and 16 blocks. 16 is beyond
    // the portable 8 and must be allowed first. A cluster's blocks must all be
    // resident at once in one GPC, so fewer blocks may fit than SMs x per_sm.
    CUDA_CHECK(cudaFuncSetAttribute(reduce_cluster_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    const char *names[] = {"block", "cluster2", "cluster4", "cluster8", "cluster16"};
    int slots = 0; // blocks that fit at once in clusters of 1: every block slot
    for (int k = 0; k < 5; k++) {
        g_cluster = 1 << k;
        cudaLaunchAttribute attr;
        cudaLaunchConfig_t cfg = cluster_config(g_cluster, &attr);
        int clusters = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, reduce_cluster_kernel, &cfg));
        g_cluster_blocks = clusters * g_cluster;
        if (k == 0) slots = g_cluster_blocks;
        if (!opt.csv)
            printf("clusters of %2d: %4d fit at once = %4d blocks, %3d of %d block slots idle\n", g_cluster, clusters,
                   g_cluster_blocks, slots - g_cluster_blocks, slots);
        if (clusters > 0) run_variant(&opt, &in, names[k], reduce_cluster);
    }
    CUDA_CHECK(cudaFree(g_retired));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }

// ---- unchanged from lesson 12 ---------------------------------------------

// The sum of v over this warp's 32 lanes, in lane 0 (lesson 10); all 32 must call it.
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

// This thread's share of in[0..n): lesson 11's head, float4 body and tail.
__device__ float thread_sum(const float *in, size_t n)
{
    // Floats before the first 16-byte boundary: 0, 3, 2 or 1 (never more than n).
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
        // __ldg: the read-only path (ld.global.nc): nothing writes the input meanwhile.
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

// Counts the calling block done (release-acquire); returns the count before it.
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

// (b) fixed: any grid of BLOCK_SIZE-thread blocks; each stores its sum in
// partials[blockIdx.x], and the last to count itself adds them in index order
// into *out. *retired must be 0 before the first launch; each launch leaves it 0.
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
    v = 0.0f; // partials in index order, 4 * UNROLL in flight (__ldcg: L2; count_done's acquire orders them)
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
