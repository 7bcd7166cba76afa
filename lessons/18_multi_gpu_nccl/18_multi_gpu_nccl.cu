// link: -lnccl
/*
 * Lesson 18: the sum over every visible GPU, combined by NCCL.
 *
 * What changed: the array is cut into one shard per GPU (CUDA_VISIBLE_DEVICES
 * picks which). Each GPU reduces its own shard with lesson 12's single-pass,
 * fixed-order kernel, and ncclAllReduce adds the per-GPU partials so that every
 * GPU holds the total. Part 2 all-reduces whole float vectors, 1 MiB to 1 GiB,
 * the way data-parallel training sums its gradients, and prints the bus
 * bandwidth. NCCL_NVLS_ENABLE=0 is set (unless already set): no NVLink multicast.
 *
 * What remains: this is where the tutorial stops. Past one node the calls stay
 * the same; only the communicator is built differently (see notes.md).
 *
 *     make lesson18 && ./lesson18                       # every visible GPU
 *     CUDA_VISIBLE_DEVICES=0 ./lesson18 -n 1e6 --check  # one GPU: still correct
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

// Lesson 12's counter: an atomicInc that releases (the partial this thread
// stored is visible before its count) and acquires (the block that sees m
// sees every partial), and wraps back to 0 for the next launch. Returns the old count.
__device__ unsigned int count_done(unsigned int *counter, unsigned int m)
{
#if __CUDA_ARCH__ < 700
    __threadfence();
    unsigned int old = atomicInc(counter, m);
    if (old == m) __threadfence();
    return old;
#else
    unsigned int old;
    asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(m) : "memory");
    return old;
#endif
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
        is_last = count_done(counter, gridDim.x - 1) == gridDim.x - 1;
    }
    __syncthreads(); // is_last is set for all; warp 0 has read warp_sums before block_sum reuses them
    if (!is_last) return;
    float s = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x) // fixed order: same result every run
        s += __ldcg(partials + b);                                     // from L2: this SM's L1 may be stale
    s = block_sum(s, warp_sums);
    if (threadIdx.x == 0) *out = s; // count_done left the counter at 0 for the next launch
}

// Part 2. Rank r's vector holds (r + 1) * (1 + (i + salt) % 7) at element i: small
// integers, so every element of the all-reduced vector is exact and known.
__global__ void fill_vector_kernel(float *v, size_t count, int rank, unsigned int salt)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        v[i] = (float)((rank + 1) * (1 + (int)((i + salt) % 7)));
}

__global__ void count_wrong_kernel(const float *v, size_t count, int g, unsigned int salt, unsigned long long *wrong)
{
    unsigned long long bad = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        float want = (float)(g * (g + 1) / 2 * (1 + (int)((i + salt) % 7)));
        if (!(v[i] == want)) bad++; // written so that a NaN (the poison, never overwritten) counts
    }
    if (bad) atomicAdd(wrong, bad); // only threads that saw a wrong element: normally none
}

// ---- launch ---------------------------------------------------------------

typedef struct {
    cudaStream_t stream; // all of this GPU's work goes here, in order
    cudaEvent_t done;    // the timer's join point
    ncclComm_t comm;     // this GPU's rank in the NCCL communicator
    int max_grid;        // SMs x resident blocks per SM
    float *partials, *part, *total; // per-block partials, this shard's sum, the all-reduced total
    unsigned int *counter;
    float *shard_alloc;   // shard with NaN guards on both sides
    const float *shard;   // count floats, --offset floats past an aligned start
    size_t count;
    void *flush;          // 2 x L2, written between timed repetitions
    size_t flush_bytes;
    float *send, *recv;   // part 2: the vectors
    unsigned long long *wrong;
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

// "1gpu": the whole array on GPU 0, default stream (the harness times it).
static void reduce_gpu(const float *d_in, size_t n, float *d_out) { reduce_on(d_in, n, d_out, &g_gpu[0], 0); }

// "Ngpu_nccl": every GPU reduces its shard, then one all-reduce of g floats.
static void sharded_work(void *arg)
{
    (void)arg;
    for (int d = 0; d < g_ngpu; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        reduce_on(g_gpu[d].shard, g_gpu[d].count, g_gpu[d].part, &g_gpu[d], g_gpu[d].stream);
    }
    // One thread drives all GPUs. Alone, one rank's ncclAllReduce could wait for
    // its peers' calls, which this thread has not made yet; the group issues all g
    // together. Same stream as the kernel: the all-reduce reads part after it is written.
    NCCL_CHECK(ncclGroupStart());
    for (int d = 0; d < g_ngpu; d++)
        NCCL_CHECK(ncclAllReduce(g_gpu[d].part, g_gpu[d].total, 1, ncclFloat, ncclSum, g_gpu[d].comm, g_gpu[d].stream));
    NCCL_CHECK(ncclGroupEnd());
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

// ---- part 2: all-reduce of whole vectors ------------------------------------

static void vector_poison(void *arg)
{
    size_t count = *(const size_t *)arg;
    for (int d = 0; d < g_ngpu; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMemsetAsync(g_gpu[d].recv, 0xFF, count * sizeof(float), g_gpu[d].stream));
    }
    CUDA_CHECK(cudaSetDevice(0));
}

static void vector_work(void *arg)
{
    size_t count = *(const size_t *)arg;
    NCCL_CHECK(ncclGroupStart()); // one thread, g ranks: see sharded_work
    for (int d = 0; d < g_ngpu; d++)
        NCCL_CHECK(ncclAllReduce(g_gpu[d].send, g_gpu[d].recv, count, ncclFloat, ncclSum, g_gpu[d].comm, g_gpu[d].stream));
    NCCL_CHECK(ncclGroupEnd());
    CUDA_CHECK(cudaSetDevice(0));
}

// Elements of recv that are not the exact sum, over every GPU.
static unsigned long long vector_wrong(size_t count, unsigned int salt)
{
    unsigned long long all = 0, w = 0;
    for (int d = 0; d < g_ngpu; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMemsetAsync(g_gpu[d].wrong, 0, sizeof w, g_gpu[d].stream));
        count_wrong_kernel<<<1024, 256, 0, g_gpu[d].stream>>>(g_gpu[d].recv, count, g_ngpu, salt, g_gpu[d].wrong);
        CUDA_CHECK_LAST();
        CUDA_CHECK(cudaMemcpyAsync(&w, g_gpu[d].wrong, sizeof w, cudaMemcpyDeviceToHost, g_gpu[d].stream));
        CUDA_CHECK(cudaStreamSynchronize(g_gpu[d].stream));
        all += w;
    }
    CUDA_CHECK(cudaSetDevice(0));
    return all;
}

static void allreduce_vectors(const Options *opt, const char *label)
{
    static const size_t timed[] = {1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28}; // 1 MiB .. 1 GiB
    static const size_t checked[] = {1 << 18, (1 << 20) + 3};
    const size_t *counts = opt->check_only ? checked : timed;
    int ncounts = opt->check_only ? 2 : 6;
    unsigned int salt = (unsigned int)(opt->seed % 7);
    double factor = 2.0 * (g_ngpu - 1) / g_ngpu; // nccl-tests' bus factor for all-reduce; 0 on one GPU
    size_t max_count = 0; // the largest count whose send + recv fit on every GPU, with room to spare
    for (int i = 0; i < ncounts; i++) {
        int fits = 1;
        for (int d = 0; d < g_ngpu; d++) {
            size_t free_b = 0, total_b = 0;
            CUDA_CHECK(cudaSetDevice(d));
            CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
            if (2 * counts[i] * sizeof(float) + ((size_t)512 << 20) > free_b) fits = 0;
        }
        if (fits) max_count = counts[i];
    }
    for (int d = 0; d < g_ngpu && max_count; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMalloc((void **)&g_gpu[d].send, max_count * sizeof(float)));
        CUDA_CHECK(cudaMalloc((void **)&g_gpu[d].recv, max_count * sizeof(float)));
        fill_vector_kernel<<<1024, 256, 0, g_gpu[d].stream>>>(g_gpu[d].send, max_count, d, salt);
        CUDA_CHECK_LAST();
    }
    if (!opt->csv)
        printf("# part 2: ncclAllReduce of float vectors, out of place; busbw = algbw x 2(g-1)/g = algbw x %.3f\n"
               "#%13s %12s %12s %11s %11s  %s\n", factor, "bytes", "floats", "median us", "algbw GB/s", "busbw GB/s",
               "check");
    for (int i = 0; i < ncounts; i++) {
        size_t count = counts[i];
        if (count > max_count) {
            if (!opt->csv) printf("# %zu bytes: skipped, not enough free memory on every GPU\n", count * sizeof(float));
            continue;
        }
        Report r = new_report(opt, "allreduce_algbw", count, (double)count * sizeof(float));
        r.gpu = label;
        r.peak_gbs = 0.0; // no memory peak applies to a transfer between GPUs
        r.expected = 0.0; // result: elements wrong on any GPU, which must be exactly 0
        r.tol = -1.0;
        vector_poison(&count);
        vector_work(&count);
        sync_devices(g_ngpu);
        unsigned long long wrong = vector_wrong(count, salt);
        if (!opt->check_only && wrong == 0) {
            time_work_devices(opt, g_timed, g_ngpu, vector_poison, vector_work, &count, &r);
            wrong = vector_wrong(count, salt); // the last repetition's result
        }
        r.result = (float)wrong;
        r.pass = wrong == 0;
        if (opt->csv) {
            Report bus = r;
            bus.variant = "allreduce_busbw";
            bus.bytes = r.bytes * factor;
            report_result(opt, &r);
            report_result(opt, &bus);
            continue;
        }
        double alg = r.reps && r.median_us > 0 ? r.bytes / (r.median_us * 1e3) : 0.0;
        if (r.reps)
            printf(" %13.0f %12zu %12.1f %11.1f %11.1f  ", r.bytes, count, r.median_us, alg, alg * factor);
        else
            printf(" %13.0f %12zu %12s %11s %11s  ", r.bytes, count, "check only", "-", "-");
        if (r.pass) {
            printf("PASS  (exact: every element on every GPU)\n");
        } else {
            printf("FAIL  %llu elements wrong (expected 0)\n", wrong);
            g_failures++;
        }
    }
    for (int d = 0; d < g_ngpu && max_count; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaFree(g_gpu[d].send));
        CUDA_CHECK(cudaFree(g_gpu[d].recv));
    }
    CUDA_CHECK(cudaSetDevice(0));
}

// ---- main -----------------------------------------------------------------

static double device_peak_gbs(int d) // as the harness computes it for GPU 0
{
    int khz = 0, bits = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, d));
    CUDA_CHECK(cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, d));
    return 2.0 * khz * 1e3 * (bits / 8.0) / 1e9;
}

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
    CUDA_CHECK(cudaMalloc((void **)&gp->wrong, sizeof(unsigned long long)));
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

static int g_nvls_ours; // NCCL_NVLS_ENABLE was set by main(), not by the caller

static const LessonInfo info = {"18_multi_gpu_nccl", BLOCK_RUNTIME, 256, NULL};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    g_block = opt.block;
    Input in = make_input(&opt); // the whole array on GPU 0, and its exact sum
    CUDA_CHECK(cudaGetDeviceCount(&g_ngpu));
    if (g_ngpu > MAX_GPUS) g_ngpu = MAX_GPUS;
    int devs[MAX_GPUS], version = 0;
    ncclComm_t comms[MAX_GPUS];
    double peak = 0.0;
    for (int d = 0; d < g_ngpu; d++) {
        devs[d] = d; // ranks 0..g-1 = the visible GPUs, in order
        setup_gpu(d);
        peak += device_peak_gbs(d);
    }
    NCCL_CHECK(ncclCommInitAll(comms, g_ngpu, devs)); // one communicator per GPU, in this one process
    for (int d = 0; d < g_ngpu; d++) g_gpu[d].comm = comms[d];
    NCCL_CHECK(ncclGetVersion(&version));
    CUDA_CHECK(cudaSetDevice(0));
    char variant[32], label[300];
    snprintf(variant, sizeof variant, "%dgpu_nccl", g_ngpu);
    snprintf(label, sizeof label, "%d x %s", g_ngpu, g_dev.name);
    if (!opt.csv) {
        printf("# %d GPU%s, NCCL %d.%d.%d, NCCL_NVLS_ENABLE=%s (%s)\n", g_ngpu, g_ngpu > 1 ? "s" : "",
               version / 10000, version / 100 % 100, version % 100, getenv("NCCL_NVLS_ENABLE"),
               g_nvls_ours ? "set by this program: NVLink multicast off" : "from the environment");
        for (int d = 0; d < g_ngpu; d++) {
            struct cudaDeviceProp prop;
            int peer = 0;
            CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
            if (d > 0) CUDA_CHECK(cudaDeviceCanAccessPeer(&peer, 0, d));
            printf("#   GPU %d: %s, %.0f GB/s peak%s\n", d, prop.name, device_peak_gbs(d),
                   d == 0 ? "" : peer ? ", peer access with GPU 0: yes" : ", peer access with GPU 0: no");
        }
        printf("# part 1: the sum of n floats; 1gpu: lesson 12's kernel on GPU 0 alone; %s: one shard per GPU,\n"
               "#         then ncclAllReduce of the %d partials (GB/s and %% of peak: all GPUs together)\n",
               variant, g_ngpu);
    }

    // Part 1a: the whole array on GPU 0 alone (the harness checks and times it).
    run_variant(&opt, &in, "1gpu", reduce_gpu);
    double expected = in.expected, tol = in.tol;
    free_input(&in); // from here on the shards hold the data

    // Part 1b: one shard per GPU, sizes differ by at most one (n < g leaves some empty).
    size_t q = opt.n / (size_t)g_ngpu, rem = opt.n % (size_t)g_ngpu, first = 0;
    for (int d = 0; d < g_ngpu; d++) {
        size_t count = q + ((size_t)d < rem ? 1 : 0);
        make_shard(&opt, d, first, count);
        first += count;
    }
    CUDA_CHECK(cudaSetDevice(0));
    Report r = new_report(&opt, variant, opt.n, (double)opt.n * sizeof(float));
    r.gpu = label;
    r.peak_gbs = peak; // the GPUs' memories together
    r.expected = expected;
    r.tol = tol;
    sharded_poison(NULL);
    sharded_work(NULL);
    sync_devices(g_ngpu);
    r.result = check_totals(expected, tol, &r.pass);
    if (!opt.check_only && r.pass) {
        time_work_devices(&opt, g_timed, g_ngpu, sharded_poison, sharded_work, NULL, &r);
        r.result = check_totals(expected, tol, &r.pass); // the last repetition's result
    }
    report_result(&opt, &r);
    for (int d = 0; d < g_ngpu; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaFree(g_gpu[d].shard_alloc));
    }

    // Part 2: whole vectors.
    allreduce_vectors(&opt, label);

    sync_devices(g_ngpu);
    for (int d = 0; d < g_ngpu; d++) {
        Gpu *gp = &g_gpu[d];
        NCCL_CHECK(ncclCommDestroy(gp->comm));
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaFree(gp->partials));
        CUDA_CHECK(cudaFree(gp->counter));
        CUDA_CHECK(cudaFree(gp->part));
        CUDA_CHECK(cudaFree(gp->total));
        CUDA_CHECK(cudaFree(gp->wrong));
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
    g_nvls_ours = getenv("NCCL_NVLS_ENABLE") == NULL;
    if (g_nvls_ours) setenv("NCCL_NVLS_ENABLE", "0", 1);
    return run_lesson(argc, argv, &info, run);
}
