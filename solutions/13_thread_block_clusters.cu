/*
 * Exercise 13: clusters with a deterministic finish, in one launch.
 *
 * Lesson 13 adds each cluster's total into *out with one atomicAdd, so a
 * uniform sum's last bits change from run to run, and it needs a memset
 * before every launch. Here the memset is gone: the kernel below already
 * combines each cluster's blocks through distributed shared memory, and rank
 * 0 of each cluster holds the cluster's total. Finish the job like lesson
 * 12's "fixed" variant, one level up: each cluster's rank-0 block publishes
 * its total in partials[cluster index], counts itself done on *retired, and
 * the last cluster to finish adds all cluster totals in index order and
 * writes *out -- the same bits every run. Leave *retired at 0.
 * Runs on sm_90+ only (SKIP elsewhere).
 *
 *     make exercise13 && ./exercise13     # FAILs until the TODO is done
 *     ./exercise13 -n 2^20+3 --offset 2 -d uniform --check
 */
#include "harness.h"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define BLOCK_SIZE 256
#define UNROLL 4
#define CLUSTER_SIZE 8
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL)

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

__device__ float thread_sum(const float *in, size_t n) // lesson 11: scalar head, float4 body, scalar tail
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
        for (int u = 0; u < UNROLL; u++) v[u] = __ldg(body + i + u * BLOCK_SIZE);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        if (i + u * BLOCK_SIZE < nvec) {
            float4 v = __ldg(body + i + u * BLOCK_SIZE);
            sum += (v.x + v.y) + (v.z + v.w);
        }
    }
    return sum;
}

// Launched in clusters of CLUSTER_SIZE blocks along x: cluster c is blocks
// c * CLUSTER_SIZE .. c * CLUSTER_SIZE + CLUSTER_SIZE - 1. *retired must be 0
// before the first launch.
__global__ void reduce_cluster_kernel(const float *in, size_t n, float *partials, unsigned int *retired,
                                      float *out)
{
#if __CUDA_ARCH__ >= 900
    __shared__ float block_total;
    cg::cluster_group cluster = cg::this_cluster();
    float sum = block_sum(thread_sum(in, n));
    if (threadIdx.x == 0) block_total = sum;
    cluster.sync(); // every block_total of the cluster written before any is read
    float cluster_total = 0.0f; // valid in thread 0 of rank 0
    if (cluster.block_rank() == 0 && threadIdx.x < 32) {
        float v = threadIdx.x < cluster.num_blocks() ? *cluster.map_shared_rank(&block_total, threadIdx.x) : 0.0f;
        cluster_total = warp_sum(v);
    }
    cluster.sync(); // rank 0 has read every peer: now they may exit
    if (cluster.block_rank() != 0) return; // from here on, one block per cluster

    // Hints: the cluster index is blockIdx.x / CLUSTER_SIZE and there are
    // gridDim.x / CLUSTER_SIZE clusters; lesson 12's reduce_fixed_kernel does the
    // rest for blocks (a __shared__ flag, fences, atomicInc, __ldcg, block_sum).
    // TODO(exercise): publish cluster_total, count this cluster done, and let the last cluster write *out in a fixed order
    const unsigned int clusters = gridDim.x / CLUSTER_SIZE;
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x / CLUSTER_SIZE] = cluster_total;
        __threadfence(); // release: the cluster total is visible before the count
        unsigned int done = atomicInc(retired, clusters - 1); // the last one wraps it back to 0
        last = (done == clusters - 1);
        if (last) __threadfence(); // acquire: every cluster's total is visible here
    }
    __syncthreads(); // shares `last`; warp 0 is done with warp_sums before block_sum reuses them
    if (!last) return;
    float v = 0.0f;
    for (unsigned int c = threadIdx.x; c < clusters; c += BLOCK_SIZE) v += __ldcg(&partials[c]);
    v = block_sum(v); // index order, then the fixed tree: the same bits every run
    if (threadIdx.x == 0) *out = v;
    // END(exercise)
#else
    (void)in; (void)n; (void)partials; (void)retired; (void)out;
#endif
}

// ---- launch ---------------------------------------------------------------

static int g_max_clusters;      // clusters that fit on the GPU at once
static float *g_partials;       // one float per cluster
static unsigned int *g_retired; // clusters done, zeroed once in main

static cudaLaunchConfig_t cluster_config(int blocks, cudaLaunchAttribute *attr) // attr must outlive the config
{
    cudaLaunchConfig_t cfg = {}; // every field not set below is 0
    cfg.gridDim = dim3(blocks, 1, 1);
    cfg.blockDim = dim3(BLOCK_SIZE, 1, 1);
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = CLUSTER_SIZE;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) {
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    size_t tiles = (n / 4 + TILE - 1) / TILE;
    size_t clusters = (tiles + CLUSTER_SIZE - 1) / CLUSTER_SIZE;
    if (clusters > (size_t)g_max_clusters) clusters = (size_t)g_max_clusters;
    if (clusters < 1) clusters = 1;
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = cluster_config((int)clusters * CLUSTER_SIZE, &attr);
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, reduce_cluster_kernel, d_in, n, g_partials, g_retired, d_out)); // the only launch
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"ex13_thread_block_clusters", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    Input in = make_input(&opt);
    require_sm90();

    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = cluster_config(CLUSTER_SIZE, &attr);
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&g_max_clusters, reduce_cluster_kernel, &cfg));
    if (g_max_clusters < 1) {
        fprintf(stderr, "%s: a cluster of %d blocks does not fit on %s\n", opt.lesson, CLUSTER_SIZE, g_dev.name);
        return 1;
    }
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)g_max_clusters * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_retired, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_retired, 0, sizeof(unsigned int)));

    run_variant(&opt, &in, "cluster_fixed", reduce_gpu);

    CUDA_CHECK(cudaFree(g_retired));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
