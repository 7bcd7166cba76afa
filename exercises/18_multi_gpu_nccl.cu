// link: -lnccl
/*
 * Exercise 18: the same sharded sum, combined without ncclAllReduce.
 *
 * Lesson 18 adds the per-GPU partials with one ncclAllReduce. Here you build
 * the same result from two other collectives: ncclReduce sums the partials
 * onto one root GPU, then ncclBroadcast copies the root's total to every GPU.
 * Fill in combine_partials(); until then every GPU's total stays NaN and the
 * check fails, on one GPU as on several.
 *
 *     make exercise18 && ./exercise18                 # every visible GPU
 *     CUDA_VISIBLE_DEVICES=0 ./exercise18 --check     # one GPU must pass too
 *     make check E=18                                 # every size, input and block size
 */
#include "harness.h"
#include <nccl.h>

#define MAX_GPUS 16

#define NCCL_CHECK(call)                                                                            \
    do {                                                                                            \
        ncclResult_t r_ = (call);                                                                   \
        if (r_ != ncclSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(r_)); \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

// ---- kernel (lesson 12's last-block-done reduction, compact) ----------------

__device__ __forceinline__ float warp_sum(float v)
{
    // Full mask: all 32 lanes are here (block sizes are multiples of 32).
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// The sum of v over the block, valid in thread 0.
__device__ float block_sum(float v, float *warp_sums)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads(); // every warp's sum is in shared memory before warp 0 reads them
    if (warp == 0) v = warp_sum(lane < (int)(blockDim.x >> 5) ? warp_sums[lane] : 0.0f);
    return v;
}

__global__ void reduce_kernel(const float *in, size_t n, float *partials, unsigned int *counter, float *out)
{
    __shared__ float warp_sums[32];
    __shared__ bool is_last;
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
    // 0..3 scalars up to the first 16-byte boundary, then float4s, then a 0..3 tail.
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / sizeof(float);
    if (head > n) head = n;
    const float4 *in4 = (const float4 *)(in + head);
    size_t n4 = (n - head) / 4, tail = head + 4 * n4;
    float sum = 0.0f;
    size_t i = tid;
    for (; i + 3 * stride < n4; i += 4 * stride) { // four independent 16-byte loads in flight
        float4 a = __ldg(in4 + i), b = __ldg(in4 + i + stride);
        float4 c = __ldg(in4 + i + 2 * stride), d = __ldg(in4 + i + 3 * stride);
        sum += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w)) + ((c.x + c.y) + (c.z + c.w)) +
               ((d.x + d.y) + (d.z + d.w));
    }
    for (; i < n4; i += stride) {
        float4 a = __ldg(in4 + i);
        sum += (a.x + a.y) + (a.z + a.w);
    }
    if (tid < head) sum += in[tid];            // the grid has >= 32 threads: 3 are enough for the head
    if (tid < n - tail) sum += in[tail + tid]; // ... and for the tail
    sum = block_sum(sum, warp_sums);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = sum;
        __threadfence(); // the partial is visible to every SM before this block is counted
        is_last = atomicAdd(counter, 1u) == gridDim.x - 1;
    }
    __syncthreads(); // is_last is set for all; warp 0 has read warp_sums before block_sum reuses them
    if (!is_last) return;
    __threadfence(); // the other blocks' partials are read only after their counts were seen
    float s = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x) // fixed order: same result every run
        s += __ldcg(partials + b);                                     // from L2: this SM's L1 may be stale
    s = block_sum(s, warp_sums);
    if (threadIdx.x == 0) {
        *out = s;
        *counter = 0; // ready for the next launch (kernel boundaries order this store)
    }
}

// ---- launch ---------------------------------------------------------------

typedef struct {
    cudaStream_t stream; // all of this GPU's work goes here, in order
    cudaEvent_t done;    // the timer's join point
    ncclComm_t comm;     // this GPU's rank in the NCCL communicator
    int max_grid;        // SMs x resident blocks per SM
    float *partials, *part, *total; // per-block partials, this shard's sum, the combined total
    unsigned int *counter;
    float *shard_alloc;   // shard with NaN guards on both sides
    const float *shard;   // count floats, --offset floats past an aligned start
    size_t count;
    void *flush;          // 2 x L2, written between timed repetitions
    size_t flush_bytes;
} Gpu;

static Gpu g_gpu[MAX_GPUS];
static TimedDevice g_timed[MAX_GPUS]; // each GPU's stream, join event and flush buffer, for the timer
static int g_ngpu, g_block;

// Lesson 12's launcher, on one GPU's stream (the current device must be that GPU).
static void reduce_on(const float *d_in, size_t n, float *d_out, const Gpu *gp, cudaStream_t stream)
{
    if (n == 0) { // an empty shard adds 0
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), stream));
        return;
    }
    size_t want = (n + 4 * (size_t)g_block - 1) / (4 * (size_t)g_block); // one float4 per thread is enough
    int grid = want < (size_t)gp->max_grid ? (int)want : gp->max_grid;
    reduce_kernel<<<grid, g_block, 0, stream>>>(d_in, n, gp->partials, gp->counter, d_out);
    CUDA_CHECK_LAST();
}

// Every GPU's total must end up holding the sum of all GPUs' part values.
static void combine_partials(void)
{
    // TODO(exercise): no ncclAllReduce: first ncclReduce (ncclSum, root rank 0) every GPU's part into GPU 0's total, then ncclBroadcast GPU 0's total into every GPU's total. Each collective: one call per communicator on that GPU's stream, all g calls between ncclGroupStart and ncclGroupEnd.
    // END(exercise)
}

// Every GPU reduces its shard, then the partials are combined.
static void sharded_work(void *arg)
{
    (void)arg;
    for (int d = 0; d < g_ngpu; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        reduce_on(g_gpu[d].shard, g_gpu[d].count, g_gpu[d].part, &g_gpu[d], g_gpu[d].stream);
    }
    combine_partials();
    CUDA_CHECK(cudaSetDevice(0));
}

static void sharded_poison(void *arg)
{
    (void)arg;
    for (int d = 0; d < g_ngpu; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMemsetAsync(g_gpu[d].total, 0xFF, sizeof(float), g_gpu[d].stream)); // NaN
    }
    CUDA_CHECK(cudaSetDevice(0));
}

// Reads every GPU's total: returns GPU 0's, or the first one that fails the check.
static float check_totals(double expected, double tol, int *pass)
{
    float got = 0.0f;
    *pass = 1;
    for (int d = g_ngpu - 1; d >= 0; d--) {
        float v;
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMemcpy(&v, g_gpu[d].total, sizeof v, cudaMemcpyDeviceToHost));
        if (!check_result(v, expected, tol)) {
            *pass = 0;
            got = v; // downwards: ends at the lowest failing GPU
        } else if (*pass) {
            got = v; // ends at GPU 0 if all pass
        }
    }
    CUDA_CHECK(cudaSetDevice(0));
    return got;
}

// ---- main -----------------------------------------------------------------

static void setup_gpu(int d)
{
    Gpu *gp = &g_gpu[d];
    int sms = 0, per_sm = 0, l2 = 0;
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, d));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_kernel, g_block, 0));
    gp->max_grid = sms * (per_sm > 0 ? per_sm : 1);
    gp->flush_bytes = 2 * (size_t)l2;
    CUDA_CHECK(cudaStreamCreate(&gp->stream));
    CUDA_CHECK(cudaEventCreateWithFlags(&gp->done, cudaEventDisableTiming));
    CUDA_CHECK(cudaMalloc((void **)&gp->partials, (size_t)gp->max_grid * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&gp->counter, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(gp->counter, 0, sizeof(unsigned int))); // the kernel leaves it 0 again
    CUDA_CHECK(cudaMalloc((void **)&gp->part, sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&gp->total, sizeof(float)));
    CUDA_CHECK(cudaMalloc(&gp->flush, gp->flush_bytes));
    TimedDevice t = {gp->stream, gp->done, gp->flush, gp->flush_bytes};
    g_timed[d] = t;
}

// GPU d's shard: input elements [first, first + count), between NaN guards
// (the harness's generator makes any slice on its own).
static void make_shard(const Options *opt, int d, size_t first, size_t count)
{
    Gpu *gp = &g_gpu[d];
    int64_t sum = 0, sum_abs = 0; // unused: in.expected already covers the whole array
    CUDA_CHECK(cudaSetDevice(d));
    need_device_bytes(opt, (count + opt->offset + 2 * GUARD_FLOATS) * sizeof(float));
    gp->shard = upload_slice(opt, first, count, &gp->shard_alloc, &sum, &sum_abs);
    gp->count = count;
}

static const LessonInfo info = {"ex18_multi_gpu_nccl", BLOCK_RUNTIME, 256, NULL};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    g_block = opt.block;
    Input in = make_input(&opt); // only for the exact sum: the shards are made below
    double expected = in.expected, tol = in.tol;
    free_input(&in);
    CUDA_CHECK(cudaGetDeviceCount(&g_ngpu));
    if (g_ngpu > MAX_GPUS) g_ngpu = MAX_GPUS;
    int devs[MAX_GPUS];
    ncclComm_t comms[MAX_GPUS];
    for (int d = 0; d < g_ngpu; d++) {
        devs[d] = d;
        setup_gpu(d);
    }
    NCCL_CHECK(ncclCommInitAll(comms, g_ngpu, devs));
    for (int d = 0; d < g_ngpu; d++) g_gpu[d].comm = comms[d];

    size_t q = opt.n / (size_t)g_ngpu, rem = opt.n % (size_t)g_ngpu, first = 0;
    for (int d = 0; d < g_ngpu; d++) {
        size_t count = q + ((size_t)d < rem ? 1 : 0);
        make_shard(&opt, d, first, count);
        first += count;
    }
    CUDA_CHECK(cudaSetDevice(0));

    char variant[32], label[300];
    snprintf(variant, sizeof variant, "%dgpu_reduce_bcast", g_ngpu);
    snprintf(label, sizeof label, "%d x %s", g_ngpu, g_dev.name);
    Report r = new_report(&opt, variant, opt.n, (double)opt.n * sizeof(float));
    r.gpu = label;
    r.peak_gbs = g_ngpu * g_dev.peak_gbs; // assumes identical GPUs
    r.expected = expected;
    r.tol = tol;
    sharded_poison(NULL);
    sharded_work(NULL);
    sync_devices(g_ngpu);
    r.result = check_totals(expected, tol, &r.pass);
    if (!opt.check_only && r.pass) {
        time_work_devices(&opt, g_timed, g_ngpu, sharded_poison, sharded_work, NULL, &r);
        r.result = check_totals(expected, tol, &r.pass);
    }
    report_result(&opt, &r);

    sync_devices(g_ngpu);
    for (int d = 0; d < g_ngpu; d++) {
        Gpu *gp = &g_gpu[d];
        NCCL_CHECK(ncclCommDestroy(gp->comm));
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaFree(gp->shard_alloc));
        CUDA_CHECK(cudaFree(gp->partials));
        CUDA_CHECK(cudaFree(gp->counter));
        CUDA_CHECK(cudaFree(gp->part));
        CUDA_CHECK(cudaFree(gp->total));
        CUDA_CHECK(cudaFree(gp->flush));
        CUDA_CHECK(cudaEventDestroy(gp->done));
        CUDA_CHECK(cudaStreamDestroy(gp->stream));
    }
    CUDA_CHECK(cudaSetDevice(0));
    return 0;
}

int main(int argc, char **argv)
{
    // NVLink multicast (NVLS) off unless the caller chose: NCCL reads this once,
    // so it is set before the first NCCL call.
    if (getenv("NCCL_NVLS_ENABLE") == NULL) setenv("NCCL_NVLS_ENABLE", "0", 1);
    return run_lesson(argc, argv, &info, run);
}
