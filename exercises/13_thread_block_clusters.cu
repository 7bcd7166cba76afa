/*
 * Exercise 13: the cluster's combine through distributed shared memory.
 *
 * The grid runs in clusters of CLUSTER_SIZE blocks that the hardware places
 * on the SMs of one GPC at the same time; a block can read the shared memory
 * of the other blocks of its cluster (distributed shared memory, DSMEM).
 * Everything else is written: each block's sum (lesson 12's reading and
 * block sum, here with 256 threads and 4 float4 loads per thread), and a
 * deterministic finish (the last cluster to finish adds the cluster totals
 * in index order, as lesson 12's fixed variant does for blocks). Yours is
 * the middle: every block of a cluster hands its sum to the cluster's
 * rank-0 block (a block's rank is its place in its cluster, 0 to
 * CLUSTER_SIZE - 1: cluster.block_rank()) through DSMEM, and rank 0 adds
 * them in an order that never changes (rank order, say). Mind the
 * lifetime: a block's shared memory goes when the block exits, and a peer
 * may still be about to read it.
 *
 * Lines (one per check, for each size and input: its name, n, time or "check
 * only", PASS or FAIL): "cluster_fixed" is the input (timed, unless
 * --check); "repeat10" launches it 10 times more in the same process: every
 * result must have the bits of the first (a combine whose order changes from
 * run to run fails there). Runs on sm_90 and newer; elsewhere it prints SKIP
 * and exits 0.
 *
 *     make exercise13 && ./exercise13     # FAILs until the TODO is done
 *     make check E=13                     # every size, input, offset; same bits; the PTX
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
// before the first launch; the kernel leaves it 0. Device code for sm_90+
// only: on older targets the body is empty (never run: main() prints SKIP
// first), so the file still builds for every architecture.
__global__ void reduce_cluster_kernel(const float *in, size_t n, float *partials, unsigned int *retired,
                                      float *out)
{
#if __CUDA_ARCH__ >= 900
    cg::cluster_group cluster = cg::this_cluster();
    float sum = block_sum(thread_sum(in, n)); // this block's sum, in thread 0
    float cluster_total = 0.0f;               // the cluster's sum: needed in thread 0 of rank 0 only
    // TODO(exercise): cluster_total = the sum of every block's `sum` in the cluster, read by rank 0 through DSMEM in an order that never changes (rank order, or a fixed tree); no block may exit while rank 0 may still read its shared memory
    cluster_total = sum; // placeholder: rank 0's own block only; the other blocks' sums are lost
    // END(exercise)
    if (cluster.block_rank() != 0) return; // from here on, one block per cluster

    // The finish: lesson 12's fixed order, one level up (clusters, not blocks).
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
#else
    (void)in; (void)n; (void)partials; (void)retired; (void)out;
#endif
}

// ---- launch ---------------------------------------------------------------

static int g_max_clusters;      // clusters that fit on the GPU at once
static float *g_partials;       // one float per cluster
static unsigned int *g_retired; // clusters done, zeroed once in run

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

#define REPEATS 10

// The same reduction REPEATS more times on the same input, in this process:
// each result, poisoned before every launch, must have the bits of the first
// and pass the check.
static void check_repeats(const Options *opt, const Input *in, reduce_fn fn, const char *variant)
{
    Report r = new_report(opt, variant, in->n, (double)in->n * sizeof(float));
    r.pass = 1;
    float first = 0.0f;
    for (int k = 0; k < REPEATS && r.pass; k++) {
        CUDA_CHECK(cudaMemsetAsync(g_out, 0xFF, sizeof(float), 0)); // NaN: a launch that writes nothing fails
        fn(in->d_in, in->n, g_out);
        CUDA_CHECK(cudaDeviceSynchronize());
        r.result = read_result();
        if (k == 0) first = r.result;
        r.expected = k == 0 ? in->expected : first; // the first against the reference, then against the first
        r.tol = k == 0 ? in->tol : -1.0;             // ... bit for bit
        r.pass = k == 0 ? check_result(r.result, in->expected, in->tol)
                        : memcmp(&r.result, &first, sizeof first) == 0;
    }
    report_result(opt, &r);
}

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
        fprintf(stderr, "%s: a cluster of %d blocks does not fit on %s\n", g_prog, CLUSTER_SIZE, g_dev.name);
        return 1;
    }
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)g_max_clusters * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_retired, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_retired, 0, sizeof(unsigned int)));

    run_variant(&opt, &in, "cluster_fixed", reduce_gpu);
    check_repeats(&opt, &in, reduce_gpu, "repeat10");

    CUDA_CHECK(cudaFree(g_retired));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
