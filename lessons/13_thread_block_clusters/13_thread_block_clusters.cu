/*
 * Lesson 13: thread block clusters -- blocks that add through each other's
 * shared memory (Hopper, sm_90 and newer).
 *
 * Since lesson 12: the grid runs in clusters of CLUSTER_SIZE blocks that the
 * hardware schedules together on the SMs of one GPC. A block can read a
 * peer's shared memory (distributed shared memory), so each cluster adds its
 * blocks' sums on chip and sends one atomicAdd to *out (zeroed by a memset):
 * CLUSTER_SIZE times fewer atomics than lesson 12's atomic variant. Variant
 * "block" runs the same kernel in clusters of 1, to measure what that buys.
 *
 * The flaw: clusters can only speed up the finish, a small part of the time
 * at large n (notes.md measures how small), and the atomic finish is again
 * not repeatable. Lesson 14 sets the libraries beside the best kernel so far.
 * Builds for every arch; runs on sm_90+ only (elsewhere: SKIP, exit 0).
 *
 *     make lesson13 && ./lesson13
 */
#include "harness.h"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define BLOCK_SIZE 256   // threads per block (compile time: -b must equal it)
#define UNROLL 4         // float4 loads each thread issues before adding any
#define CLUSTER_SIZE 8   // blocks per cluster: 8 is the portable maximum
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

// Lesson 12's per-thread share: scalar head, float4 body, scalar tail.
__device__ float thread_sum(const float *in, size_t n)
{
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / sizeof(float); // 0..3 floats before a 16-byte boundary
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

// Launched in clusters (cudaLaunchKernelEx); *out must be 0 before the launch.
// Device code for sm_90+ only: on older targets the body is empty (never run,
// main() skips first), so the file still builds for every architecture.
__global__ void reduce_cluster_kernel(const float *in, size_t n, float *out)
{
#if __CUDA_ARCH__ >= 900
    __shared__ float block_total; // this block's sum, read by its cluster's rank 0
    cg::cluster_group cluster = cg::this_cluster();
    float sum = block_sum(thread_sum(in, n));
    if (threadIdx.x == 0) block_total = sum;
    // Every thread of every block in the cluster arrives here (barrier.cluster):
    // no peer's block_total is read before its owner has written it, and the
    // barrier's release/acquire makes those writes visible across the SMs.
    cluster.sync();
    if (cluster.block_rank() == 0 && threadIdx.x < 32) {
        int lane = threadIdx.x;
        float v = 0.0f;
        if (lane < (int)cluster.num_blocks()) // lane r reads block r's total on r's SM (mapa, then a load)
            v = *cluster.map_shared_rank(&block_total, lane);
        v = warp_sum(v); // fixed order within the cluster
        if (lane == 0) atomicAdd(out, v); // one atomic per cluster
    }
    // Shared memory lives as long as its block: no block may exit while rank 0
    // may still be reading its block_total, so all wait for rank 0 here.
    cluster.sync();
#else
    (void)in; (void)n; (void)out;
#endif
}

// ---- launch ---------------------------------------------------------------

static int g_max_clusters[CLUSTER_SIZE + 1]; // clusters that fit on the GPU at once, by cluster size

// The launch configuration: grid of `blocks` blocks in clusters of cluster_size.
// attr must outlive cfg (cfg points at it).
static cudaLaunchConfig_t cluster_config(int blocks, int cluster_size, cudaLaunchAttribute *attr)
{
    cudaLaunchConfig_t cfg = {}; // every field not set below is 0
    cfg.gridDim = dim3(blocks, 1, 1);
    cfg.blockDim = dim3(BLOCK_SIZE, 1, 1);
    cfg.dynamicSmemBytes = 0;
    cfg.stream = 0;
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = cluster_size;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

static void reduce_clusters_of(const float *d_in, size_t n, float *d_out, int cluster_size)
{
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); // the atomics add into it; n == 0 ends here
    if (n == 0) return;
    // At most one tile per block, whole clusters, no more clusters than fit at once.
    size_t tiles = (n / 4 + TILE - 1) / TILE;
    size_t clusters = (tiles + cluster_size - 1) / cluster_size;
    if (clusters > (size_t)g_max_clusters[cluster_size]) clusters = (size_t)g_max_clusters[cluster_size];
    if (clusters < 1) clusters = 1;
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = cluster_config((int)clusters * cluster_size, cluster_size, &attr);
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, reduce_cluster_kernel, d_in, n, d_out));
    CUDA_CHECK_LAST();
}

static void reduce_cluster(const float *d_in, size_t n, float *d_out) { reduce_clusters_of(d_in, n, d_out, CLUSTER_SIZE); }
static void reduce_block(const float *d_in, size_t n, float *d_out) { reduce_clusters_of(d_in, n, d_out, 1); }

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"13_thread_block_clusters", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    Input in = make_input(&opt); // also finds the GPU (g_dev), which require_sm90 reads
    require_sm90();              // older GPU: prints SKIP and exits 0

    int sizes[2] = {CLUSTER_SIZE, 1};
    for (int k = 0; k < 2; k++) {
        cudaLaunchAttribute attr;
        cudaLaunchConfig_t cfg = cluster_config(sizes[k], sizes[k], &attr);
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&g_max_clusters[sizes[k]], reduce_cluster_kernel, &cfg));
        if (g_max_clusters[sizes[k]] < 1) {
            fprintf(stderr, "%s: a cluster of %d blocks of %d threads does not fit on %s\n", opt.lesson, sizes[k],
                    BLOCK_SIZE, g_dev.name);
            return 1;
        }
    }

    if (!opt.csv)
        printf("fit at once: %d clusters of %d blocks (%d blocks), %d clusters of 1\n", g_max_clusters[CLUSTER_SIZE],
               CLUSTER_SIZE, g_max_clusters[CLUSTER_SIZE] * CLUSTER_SIZE, g_max_clusters[1]);

    run_variant(&opt, &in, "cluster", reduce_cluster);
    run_variant(&opt, &in, "block", reduce_block);

    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
