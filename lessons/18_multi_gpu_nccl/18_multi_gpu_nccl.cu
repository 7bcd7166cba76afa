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
 * --procs runs Part 1 the way real jobs run: one process per GPU. The parent
 * makes NCCL's unique id, starts this program once per GPU with its rank and
 * the id in the environment, and each process joins the communicator with
 * ncclCommInitRank: the pattern that carries over to many nodes.
 *
 * What remains: this is where the tutorial stops. Past one node the calls stay
 * the same; only the processes are started by a job launcher (see notes.md).
 *
 *     make lesson18 && ./lesson18                       # every visible GPU
 *     CUDA_VISIBLE_DEVICES=0 ./lesson18 -n 1e6 --check  # one GPU: still correct
 *     ./lesson18 --procs                                # one process per GPU
 */
#include "harness.h"
#include <nccl.h>

#include "procs.h" // start, wait for and stop one process per GPU (host code)
#include <fcntl.h>
#include <poll.h>
#include <sched.h>

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 14, 0)
#error "lesson 18 needs NCCL 2.14 or newer (ncclCommInitRankConfig, non-blocking communicators)"
#endif

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

static void free_gpu(int d) // what setup_gpu made
{
    Gpu *gp = &g_gpu[d];
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

// ---- one process per GPU (--procs) ------------------------------------------
//
// parent: counts the GPUs in a child process (it never touches CUDA itself),
//         ncclGetUniqueId, then starts this program once per GPU with the same
//         command line and environment plus LESSON18_RANK, LESSON18_NRANKS and
//         LESSON18_NCCL_ID (the id in hex), and waits for them all.
// rank r: GPU r, ncclCommInitRank(nranks, id, r), shard r, one ncclAllReduce;
//         rank 0 prints the report lines.
// Every NCCL wait has a deadline: a rank whose peer died or hangs aborts its
// communicator and exits 1 with one line, and the parent stops the others.

#define ENV_RANK "LESSON18_RANK"
#define ENV_NRANKS "LESSON18_NRANKS"
#define ENV_ID "LESSON18_NCCL_ID"
#define ENV_COUNT_FD "LESSON18_COUNT_FD" // set for the child that only counts the GPUs
#define WAIT_S 60.0      // an NCCL step not done after this long is a hang

static int g_rank = -1, g_nranks = 0; // this process's rank and the number of ranks; -1 outside --procs's ranks
static ncclUniqueId g_id;
static ncclComm_t g_comm = NULL;
static float *g_scratch_d = NULL, *g_scratch_h = NULL; // [0]: barrier and time; [1..g]: every rank's total

// A rank stops: abort the communicator (NCCL's threads and kernels stop
// waiting for peers), one line on stderr, exit 1. The parent stops the others.
static void rank_fail(const char *what, const char *why)
{
    if (g_comm) ncclCommAbort(g_comm);
    fprintf(stderr, "%s rank %d of %d: %s: %s\n", info.lesson, g_rank, g_nranks, what, why);
    exit(1);
}

static void rank_fail_late(const char *what)
{
    char why[160];
    snprintf(why, sizeof why, "not done after %.0f s: another rank is missing or stuck (communicator aborted)", WAIT_S);
    rank_fail(what, why);
}

static void nccl_fail(const char *what, ncclResult_t r)
{
    char why[400];
    const char *last = g_comm ? ncclGetLastError(g_comm) : NULL;
    snprintf(why, sizeof why, "%s%s%s", ncclGetErrorString(r), last && *last ? ": " : "", last && *last ? last : "");
    rank_fail(what, why);
}

// A non-blocking communicator's call may return ncclInProgress: the work goes
// on in NCCL's threads, and no other NCCL call may be made until the
// communicator's state (ncclCommGetAsyncError) is ncclSuccess. Polled here,
// with a deadline.
static void comm_ready(const char *what)
{
    double end = now_s() + WAIT_S;
    for (;;) {
        ncclResult_t st = ncclInProgress, r = ncclCommGetAsyncError(g_comm, &st);
        if (r != ncclSuccess) nccl_fail(what, r);
        if (st == ncclSuccess) return;
        if (st != ncclInProgress) nccl_fail(what, st);
        if (now_s() > end) rank_fail_late(what);
        sched_yield();
    }
}

static void nccl_ok(ncclResult_t r, const char *what)
{
    if (r == ncclInProgress) comm_ready(what);
    else if (r != ncclSuccess) nccl_fail(what, r);
}

// Waits for everything queued on this rank's stream. cudaStreamSynchronize
// could wait forever for a collective whose peer is gone; this polls the
// stream and the communicator's error state, with a deadline. It spins (with
// a yield) rather than sleeps: the barrier before each timed run ends here.
static void wait_stream(cudaStream_t s, const char *what)
{
    double end = now_s() + WAIT_S;
    for (;;) {
        cudaError_t e = cudaStreamQuery(s);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady) rank_fail(what, cudaGetErrorString(e));
        ncclResult_t st = ncclSuccess;
        if (ncclCommGetAsyncError(g_comm, &st) == ncclSuccess && st != ncclSuccess && st != ncclInProgress)
            nccl_fail(what, st);
        if (now_s() > end) rank_fail_late(what);
        sched_yield();
    }
}

// g_dev describes this rank's GPU (the harness's init_device reads GPU 0).
static void read_device(int d)
{
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
    g_dev.id = d;
    snprintf(g_dev.name, sizeof g_dev.name, "%s", prop.name);
    g_dev.sm_count = prop.multiProcessorCount;
    g_dev.cc_major = prop.major;
    g_dev.cc_minor = prop.minor;
    g_dev.l2_bytes = (size_t)prop.l2CacheSize;
    g_dev.peak_gbs = device_peak_gbs(d);
}

// Once per rank, at its first run: its GPU, then the communicator. Each rank
// of the list of runs (-n a,b -s ...) reuses it.
static void rank_init(void)
{
    cudaError_t e = cudaSetDevice(g_rank); // rank r drives visible GPU r
    if (e == cudaSuccess) e = cudaFree(0);
    if (e != cudaSuccess) no_usable_gpu(e, "cudaSetDevice(rank)");
    read_device(g_rank);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0; // every call returns at once; comm_ready and wait_stream wait, with a deadline
    // Collective over the ranks: each one connects to the bootstrap root that
    // ncclGetUniqueId started in the parent, learns the others' addresses from
    // it, and from then on talks to them directly.
    nccl_ok(ncclCommInitRankConfig(&g_comm, g_nranks, g_id, g_rank, &config), "ncclCommInitRankConfig");
    CUDA_CHECK(cudaMalloc((void **)&g_scratch_d, (MAX_GPUS + 1) * sizeof(float)));
    // pinned, so that copies to and from it stay asynchronous and wait_stream can bound them
    CUDA_CHECK(cudaMallocHost((void **)&g_scratch_h, (MAX_GPUS + 1) * sizeof(float)));
}

static void rank_finish(void)
{
    if (!g_comm) return;
    nccl_ok(ncclCommFinalize(g_comm), "ncclCommFinalize"); // in progress until this rank's NCCL work is done
    ncclComm_t c = g_comm;
    g_comm = NULL;
    ncclResult_t r = ncclCommDestroy(c);
    if (r != ncclSuccess) nccl_fail("ncclCommDestroy", r);
    CUDA_CHECK(cudaFree(g_scratch_d));
    CUDA_CHECK(cudaFreeHost(g_scratch_h));
}

// The exact reference over the whole array, on the host, as make_input
// computes it. Every rank computes it (one core each, at the same time), so
// that every rank reaches the same verdict and takes the same path.
static void exact_reference(const Options *opt, double *expected, double *tol)
{
    const size_t chunk = (size_t)1 << 22;
    float *h = (float *)malloc(chunk * sizeof(float));
    if (!h) { fprintf(stderr, "out of host memory\n"); exit(1); }
    int64_t sum = 0, sum_abs = 0;
    for (size_t done = 0; done < opt->n; done += chunk)
        fill_input(h, done, opt->n - done < chunk ? opt->n - done : chunk, opt->seed, opt->dist, &sum, &sum_abs);
    free(h);
    *expected = (double)sum * input_scale(opt->dist);
    *tol = opt->dist == DIST_INTS ? -1.0 : tolerance_for(*expected, (double)sum_abs * input_scale(opt->dist));
}

// The timed work of one rank: its shard, then the all-reduce. One GPU per
// process: no group, every rank makes this one call.
static void rank_work(Gpu *gp)
{
    reduce_on(gp->shard, gp->count, gp->part, gp, gp->stream);
    nccl_ok(ncclAllReduce(gp->part, gp->total, 1, ncclFloat, ncclSum, g_comm, gp->stream),
            "ncclAllReduce of the partials");
}

static void rank_poison(Gpu *gp) { CUDA_CHECK(cudaMemsetAsync(gp->total, 0xFF, sizeof(float), gp->stream)); } // NaN

// op over one float of every rank (ncclMax of times; any op as a barrier); the same result on every rank.
static float rank_allreduce(Gpu *gp, float v, ncclRedOp_t op, const char *what)
{
    g_scratch_h[0] = v;
    CUDA_CHECK(cudaMemcpyAsync(g_scratch_d, g_scratch_h, sizeof(float), cudaMemcpyHostToDevice, gp->stream));
    nccl_ok(ncclAllReduce(g_scratch_d, g_scratch_d, 1, ncclFloat, op, g_comm, gp->stream), what);
    CUDA_CHECK(cudaMemcpyAsync(g_scratch_h, g_scratch_d, sizeof(float), cudaMemcpyDeviceToHost, gp->stream));
    wait_stream(gp->stream, what);
    return g_scratch_h[0];
}

// Every rank's total, gathered onto every rank and checked by the rule of
// check_totals: rank 0's total if all pass, else the lowest failing rank's.
static float rank_totals(Gpu *gp, double expected, double tol, int *pass)
{
    float *gathered = g_scratch_d + 1, *h = g_scratch_h + 1, got = 0.0f;
    // NaN first: a rank the gather missed fails the check
    CUDA_CHECK(cudaMemsetAsync(gathered, 0xFF, (size_t)g_nranks * sizeof(float), gp->stream));
    nccl_ok(ncclAllGather(gp->total, gathered, 1, ncclFloat, g_comm, gp->stream), "ncclAllGather of the totals");
    CUDA_CHECK(cudaMemcpyAsync(h, gathered, (size_t)g_nranks * sizeof(float), cudaMemcpyDeviceToHost, gp->stream));
    wait_stream(gp->stream, "ncclAllGather of the totals");
    *pass = 1;
    for (int d = g_nranks - 1; d >= 0; d--) {
        if (!check_result(h[d], expected, tol)) {
            *pass = 0;
            got = h[d];
        } else if (*pass) {
            got = h[d];
        }
    }
    return got;
}

// The harness's timing, one process per GPU. Each rank times its own work with
// its own events; the ranks line up first, so that they start together.
//   flush L2, poison          (outside the interval)
//   barrier: a one-float all-reduce, waited for on the host
//   start; shard + all-reduce; stop; wait
//   the slowest rank's time: all-reduce of the times with ncclMax
// Why the slowest: the all-reduce ends at about the same moment on every rank,
// and each rank's interval runs from its own start, so the longest interval is
// the one that began first: from the first rank's start to the end of the
// job, what the job as a whole took. The ranks leave the barrier at slightly
// different moments (each process polls its own stream), and that skew is in
// the time too. Every rank sees the same times, so all take the same adaptive
// stopping decision.
static void time_rank(const Options *opt, Gpu *gp, Report *r)
{
    Timings s = timings_new(opt);
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    if (opt->flush == FLUSH_CLEAN) // once: a clean flush reads set bytes
        CUDA_CHECK(cudaMemset(gp->flush, 0, gp->flush_bytes));
    float ms;
    do {
        flush_buffer(opt, gp->flush, gp->flush_bytes, s.k, gp->stream);
        rank_poison(gp);
        rank_allreduce(gp, 0.0f, ncclMax, "the barrier before a timed run");
        CUDA_CHECK(cudaEventRecord(start, gp->stream));
        rank_work(gp);
        CUDA_CHECK(cudaEventRecord(stop, gp->stream));
        wait_stream(gp->stream, "a timed run");
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        ms = rank_allreduce(gp, ms, ncclMax, "ncclAllReduce (max) of the times");
    } while (!timings_add(opt, &s, ms)); // the same times on every rank: the same decision
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    timings_report(&s, r);
}

// One run (one set of options) on one rank: Part 1's sharded sum.
static int run_rank(Options opt)
{
    g_block = opt.block;
    if (!g_comm) rank_init();
    int d = g_rank;
    Gpu *gp = &g_gpu[d];
    setup_gpu(d);
    size_t q = opt.n / (size_t)g_nranks, rem = opt.n % (size_t)g_nranks;
    size_t first = (size_t)d * q + ((size_t)d < rem ? (size_t)d : rem), count = q + ((size_t)d < rem ? 1 : 0);
    make_shard(&opt, d, first, count); // the same shards as the single-process mode
    double expected = 0.0, tol = -1.0, peak = 0.0;
    exact_reference(&opt, &expected, &tol);
    for (int k = 0; k < g_nranks; k++) peak += device_peak_gbs(k); // attributes only: no context on the others' GPUs
    char variant[32], label[300];
    snprintf(variant, sizeof variant, "%dgpu_procs", g_nranks);
    snprintf(label, sizeof label, "%d x %s", g_nranks, g_dev.name);
    if (g_rank == 0 && !opt.csv) {
        int version = 0;
        NCCL_CHECK(ncclGetVersion(&version));
        printf("# %d process%s, one GPU each, joined by ncclCommInitRank; NCCL %d.%d.%d, NCCL_NVLS_ENABLE=%s "
               "(inherited from the parent process)\n", g_nranks, g_nranks > 1 ? "es" : "", version / 10000,
               version / 100 % 100, version % 100, getenv("NCCL_NVLS_ENABLE") ? getenv("NCCL_NVLS_ENABLE") : "unset");
        for (int k = 0; k < g_nranks; k++) {
            struct cudaDeviceProp prop;
            CUDA_CHECK(cudaGetDeviceProperties(&prop, k));
            printf("#   rank %d: GPU %d, %s, %.0f GB/s peak\n", k, k, prop.name, device_peak_gbs(k));
        }
        printf("# part 1 only: %s: one shard per process, then ncclAllReduce of the %d partials; the time is the\n"
               "#         slowest rank's (GB/s and %% of peak: all GPUs together). Part 2: without --procs\n",
               variant, g_nranks);
    }
    Report r = new_report(&opt, variant, opt.n, (double)opt.n * sizeof(float));
    r.gpu = label;
    r.peak_gbs = peak;
    r.expected = expected;
    r.tol = tol;
    rank_poison(gp);
    rank_work(gp);
    wait_stream(gp->stream, "the checked run");
    r.result = rank_totals(gp, expected, tol, &r.pass);
    if (!opt.check_only && r.pass) { // every rank has the same verdict: all time, or none
        time_rank(&opt, gp, &r);
        r.result = rank_totals(gp, expected, tol, &r.pass); // the last repetition's result
    }
    if (g_rank == 0) report_result(&opt, &r);
    CUDA_CHECK(cudaFree(gp->shard_alloc));
    free_gpu(d);
    return 0;
}

// ---- the parent of --procs ----------------------------------------------------

// The probe: a child that counts the visible GPUs and writes the number to
// the pipe the parent gave it. No GPU: no_usable_gpu's message, exit 1.
static int count_gpus_here(const char *fd_text)
{
    int n = 0, fd = atoi(fd_text);
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) no_usable_gpu(e, "cudaGetDeviceCount");
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%d\n", n);
    if (write(fd, buf, (size_t)len) == len) return 0;
    fprintf(stderr, "%s --procs: could not report the GPU count: %s\n", info.lesson, strerror(errno));
    return 3; // not 1: the parent reads exit 1 as "no usable GPU, already said"
}

// The parent asks a child how many GPUs there are: CUDA is then initialised
// in the children only (the parent stays free of it; see notes.md).
static int count_gpus_in_a_child(char **argv)
{
    int fd[2];
    if (pipe(fd) != 0) { fprintf(stderr, "%s --procs: pipe: %s\n", info.lesson, strerror(errno)); exit(1); }
    fcntl(fd[0], F_SETFD, FD_CLOEXEC);
    char var[64];
    snprintf(var, sizeof var, ENV_COUNT_FD "=%d", fd[1]);
    const char *extra[] = {var};
    pid_t pid = spawn_self(info.lesson, argv, "LESSON18_", extra, 1);
    close(fd[1]);
    char buf[32];
    size_t got = 0;
    double end = now_s() + WAIT_S;
    for (;;) { // until the child closes the pipe (it exited), or the deadline
        struct pollfd p = {fd[0], POLLIN, 0};
        int left_ms = (int)((end - now_s()) * 1e3);
        if (left_ms <= 0) {
            int alive = 1;
            fprintf(stderr, "%s --procs: counting the GPUs took over %.0f s; stopped\n", info.lesson, WAIT_S);
            stop_children(&pid, &alive, 1);
            exit(1);
        }
        if (poll(&p, 1, left_ms) <= 0) continue;
        ssize_t k = read(fd[0], buf + got, sizeof buf - 1 - got);
        if (k > 0) got += (size_t)k;
        else if (k == 0 || errno != EINTR) break;
    }
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(st) && WEXITSTATUS(st) == 1) exit(1); // no usable GPU: it said so, and why
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char what[160];
        describe_status(st, what, sizeof what);
        fprintf(stderr, "%s --procs: the process that counts the GPUs %s\n", info.lesson, what);
        exit(1);
    }
    buf[got] = '\0';
    int n = atoi(buf);
    if (n <= 0) { fprintf(stderr, "%s --procs: could not count the GPUs\n", info.lesson); exit(1); }
    return n < MAX_GPUS ? n : MAX_GPUS;
}

// --procs, the parent: never creates a CUDA context, and outlives every rank.
static int run_parent(char **argv)
{
    // A parent started with SIGCHLD ignored would have its children reaped for
    // it, and waitpid would never report them: take the default back.
    signal(SIGCHLD, SIG_DFL);
    int n = count_gpus_in_a_child(argv);
    // The id holds the address of a socket this process now listens on, and
    // ncclGetUniqueId started a thread here (the bootstrap root) that answers
    // it: every rank connects to it during ncclCommInitRank. So the parent
    // must live until the ranks have joined; it waits for them anyway.
    ncclUniqueId id;
    ncclResult_t res = ncclGetUniqueId(&id);
    if (res != ncclSuccess) {
        fprintf(stderr, "%s --procs: ncclGetUniqueId: %s\n", info.lesson, ncclGetErrorString(res));
        return 1;
    }
    static char id_var[sizeof(ENV_ID) + 2 * NCCL_UNIQUE_ID_BYTES + 1], n_var[48], rank_var[MAX_GPUS][48];
    int len = snprintf(id_var, sizeof id_var, ENV_ID "=");
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++) // the id as text: it travels in the environment
        len += snprintf(id_var + len, sizeof id_var - (size_t)len, "%02x", (unsigned char)id.internal[i]);
    snprintf(n_var, sizeof n_var, ENV_NRANKS "=%d", n);
    pid_t pid[MAX_GPUS];
    for (int r = 0; r < n; r++) {
        snprintf(rank_var[r], sizeof rank_var[r], ENV_RANK "=%d", r);
        const char *extra[] = {rank_var[r], n_var, id_var};
        pid[r] = spawn_self(info.lesson, argv, "LESSON18_", extra, 3);
    }
    return wait_children("18_multi_gpu_nccl --procs", pid, n);
}

// A rank reads who it is. Returns 0 when LESSON18_RANK is not set.
static int rank_from_env(void)
{
    const char *r = getenv(ENV_RANK), *n = getenv(ENV_NRANKS), *id = getenv(ENV_ID);
    if (!r) return 0;
    char *end1 = NULL, *end2 = NULL;
    long rank = strtol(r, &end1, 10), nranks = n ? strtol(n, &end2, 10) : 0;
    int ok = *r && !*end1 && n && *n && !*end2 && nranks >= 1 && nranks <= MAX_GPUS && rank >= 0 && rank < nranks &&
             id && strlen(id) == 2 * NCCL_UNIQUE_ID_BYTES;
    for (int i = 0; ok && i < NCCL_UNIQUE_ID_BYTES; i++) {
        unsigned int byte = 0;
        ok = sscanf(id + 2 * i, "%2x", &byte) == 1;
        g_id.internal[i] = (char)byte;
    }
    if (!ok) {
        fprintf(stderr, "%s: " ENV_RANK ", " ENV_NRANKS " and " ENV_ID " are set but not valid (they are for the "
                        "processes that --procs starts)\n", info.lesson);
        exit(2);
    }
    g_rank = (int)rank;
    g_nranks = (int)nranks;
    return 1;
}

// Removes --procs (this lesson's own option; the harness does not know it)
// from argv wherever getopt would read it as an option. Returns 1 if found.
static int take_procs_option(int *argc, char **argv)
{
    int found = 0, out = 1, i = 1;
    for (; i < *argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) break;
        if (strcmp(a, "--procs") == 0) { found = 1; continue; }
        if (strncmp(a, "--procs=", 8) == 0) {
            fprintf(stderr, "%s: --procs takes no value: %.40s\n", info.lesson, a);
            exit(2);
        }
        argv[out++] = argv[i];
        int takes_value = (a[0] == '-' && a[1] && strchr("nbrsdmk", a[1]) && a[2] == '\0') ||
                          strcmp(a, "--offset") == 0 || strcmp(a, "--flush") == 0;
        if (takes_value && i + 1 < *argc) argv[out++] = argv[++i]; // its value, whatever it says
    }
    for (; i < *argc; i++) argv[out++] = argv[i];
    argv[out] = NULL;
    *argc = out;
    return found;
}

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    if (g_rank >= 0) return run_rank(opt); // one of --procs's processes
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
        NCCL_CHECK(ncclCommDestroy(g_gpu[d].comm));
        free_gpu(d);
    }
    CUDA_CHECK(cudaSetDevice(0));
    return 0;
}

int main(int argc, char **argv)
{
    // NVLink multicast (NVLS) off unless the caller chose: NCCL reads this once,
    // so it is set before the first NCCL call, and before --procs starts its
    // processes, so that every one of them inherits it.
    g_nvls_ours = getenv("NCCL_NVLS_ENABLE") == NULL;
    if (g_nvls_ours) setenv("NCCL_NVLS_ENABLE", "0", 1);

    char **all = (char **)malloc(((size_t)argc + 1) * sizeof(char *)); // argv as given, for the children
    if (!all) { fprintf(stderr, "out of host memory\n"); return 1; }
    memcpy(all, argv, ((size_t)argc + 1) * sizeof(char *));
    int procs = take_procs_option(&argc, argv);
    Options opt; // parsed here for -h and bad input; run_lesson parses the same argv again
    char err[512];
    int rc = parse_options_r(argc, argv, &opt, &info, err, sizeof err);
    if (rc == 1) {
        harness_usage(stdout, &info);
        printf("  --procs          one process per GPU, joined by ncclCommInitRank, as real jobs run (part 1 only)\n");
        return 0;
    }
    if (rc == 2) {
        fprintf(stderr, "%s: %s\n", info.lesson, err);
        return 2;
    }
    if (!procs) return run_lesson(argc, argv, &info, run); // one process drives every GPU
    if (getenv(ENV_COUNT_FD)) return count_gpus_here(getenv(ENV_COUNT_FD));
    if (!rank_from_env()) return run_parent(all);
    rc = run_lesson(argc, argv, &info, run); // this rank's runs, one for each set of options
    rank_finish();
    return rc;
}
