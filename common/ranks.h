// ranks.h -- lesson 18's host plumbing: each GPU's buffers, checks and tables, and --procs's one process per GPU.
//
// Host code only (CUDA runtime and NCCL calls; the kernels stay in the lesson).
// Include it after harness.h and <nccl.h>. Three parts:
//   every GPU     the per-GPU buffers (Gpu), shards, the header lines, checking
//                 and timing the sharded sum, and part 2's table of all-reduces;
//   --procs rank  a process that drives one GPU: who it is (from the
//                 environment), every NCCL wait under a deadline, and on an
//                 error or at the deadline ncclCommAbort, one line, exit 1;
//   --procs parent  counts the GPUs in a child (it never creates a CUDA
//                 context itself), starts one rank per GPU with the NCCL id in
//                 the environment, names a rank that fails and stops the others
//                 (procs.h).
#ifndef RANKS_H
#define RANKS_H

#include "procs.h"
#include <sched.h>

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 14, 0)
#error "lesson 18 needs NCCL 2.14 or newer (ncclCommInitRankConfig, non-blocking communicators)"
#endif

#define MAX_GPUS 16

#define NCCL_CHECK(call)                                                                            \
    do {                                                                                            \
        ncclResult_t r_ = (call);                                                                   \
        if (r_ != ncclSuccess) {                                                                    \
            fprintf(stderr, "%s: %s:%d: %s: %s\n", g_prog, __FILE__, __LINE__, #call,                 \
                    ncclGetErrorString(r_));                                                        \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

// ---- every GPU ------------------------------------------------------------------

typedef struct {
    cudaStream_t stream; // all of this GPU's work goes here, in order
    cudaEvent_t done;    // the timer's join point
    int max_blocks;      // SMs x resident blocks per SM
    float *partials, *part, *total; // per-block partials, this shard's sum, the all-reduced total
    unsigned int *retired;          // the blocks-done counter, zeroed once, left 0 by every launch
    float *shard_alloc;   // shard with NaN guards on both sides
    const float *shard;   // count floats, --offset floats past an aligned start
    size_t count;
    void *flush;          // 2 x L2, written (--flush dirty) or read (clean) between timed repetitions
    size_t flush_bytes;
    float *send, *recv;   // part 2: the vectors
    unsigned long long *wrong;
} Gpu;

static Gpu g_gpu[MAX_GPUS];
static TimedDevice g_timed[MAX_GPUS]; // each GPU's stream, join event and flush buffer, for the timer
static int g_ngpu;                    // GPUs this process drives (one process: all visible ones)
static ncclComm_t g_comms[MAX_GPUS];  // one process: GPU d's rank in the communicator
static int g_nvls_ours;               // NCCL_NVLS_ENABLE was set by the lesson's main(), not by the caller

// The report's gpu column, "g x <this GPU's name>". 256 bytes, as the CSV's
// column: a name too long is cut.
static inline const char *gpus_label(int g)
{
    static char label[256];
    if (snprintf(label, sizeof label, "%d x %s", g, g_dev.name) >= (int)sizeof label) label[sizeof label - 1] = '\0';
    return label;
}

static inline double device_peak_gbs(int d) // as the harness computes it for GPU 0
{
    int khz = 0, bits = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, d));
    CUDA_CHECK(cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, d));
    return 2.0 * khz * 1e3 * (bits / 8.0) / 1e9;
}

// GPU d's stream, buffers and grid limit for `kernel` launched with `block` threads.
static inline void setup_gpu(int d, const void *kernel, int block)
{
    Gpu *gp = &g_gpu[d];
    int sms = 0, per_sm = 0, l2 = 0;
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, d));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0));
    gp->max_blocks = sms * (per_sm > 0 ? per_sm : 1);
    gp->flush_bytes = 2 * (size_t)l2;
    CUDA_CHECK(cudaStreamCreate(&gp->stream));
    CUDA_CHECK(cudaEventCreateWithFlags(&gp->done, cudaEventDisableTiming));
    CUDA_CHECK(cudaMalloc((void **)&gp->partials, (size_t)gp->max_blocks * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&gp->retired, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(gp->retired, 0, sizeof(unsigned int))); // the kernel leaves it 0 again
    CUDA_CHECK(cudaMalloc((void **)&gp->part, sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&gp->total, sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&gp->wrong, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMalloc(&gp->flush, gp->flush_bytes));
    TimedDevice t = {gp->stream, gp->done, gp->flush, gp->flush_bytes};
    g_timed[d] = t;
}

static inline void free_shard(int d)
{
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaFree(g_gpu[d].shard_alloc));
    g_gpu[d].shard_alloc = NULL;
}

static inline void free_gpu(int d) // what setup_gpu made, and the shard if still there
{
    Gpu *gp = &g_gpu[d];
    free_shard(d);
    CUDA_CHECK(cudaFree(gp->partials));
    CUDA_CHECK(cudaFree(gp->retired));
    CUDA_CHECK(cudaFree(gp->part));
    CUDA_CHECK(cudaFree(gp->total));
    CUDA_CHECK(cudaFree(gp->wrong));
    CUDA_CHECK(cudaFree(gp->flush));
    CUDA_CHECK(cudaEventDestroy(gp->done));
    CUDA_CHECK(cudaStreamDestroy(gp->stream));
}

// GPU d's shard: input elements [first, first + count), between NaN guards
// (the harness's generator makes any slice on its own).
static inline void make_shard(const Options *opt, int d, size_t first, size_t count)
{
    Gpu *gp = &g_gpu[d];
    int64_t sum = 0, sum_abs = 0; // unused: the reference covers the whole array
    CUDA_CHECK(cudaSetDevice(d));
    need_device_bytes(opt, (count + opt->offset + 2 * GUARD_FLOATS) * sizeof(float));
    gp->shard = upload_slice(opt, first, count, &gp->shard_alloc, &sum, &sum_abs);
    gp->count = count;
}

// ---- one process, every GPU ---------------------------------------------------

// g_ngpu = the visible GPUs (at most MAX_GPUS), each set up by setup_gpu.
// After make_input: GPU 0 is known to work. Leaves GPU 0 current.
static inline void setup_gpus(const void *kernel, int block)
{
    CUDA_CHECK(cudaGetDeviceCount(&g_ngpu));
    if (g_ngpu > MAX_GPUS) g_ngpu = MAX_GPUS;
    for (int d = 0; d < g_ngpu; d++) setup_gpu(d, kernel, block);
    CUDA_CHECK(cudaSetDevice(0));
}

// Waits for every GPU, destroys its communicator, frees what setup_gpus made.
static inline void free_gpus(void)
{
    sync_devices(g_ngpu);
    for (int d = 0; d < g_ngpu; d++) {
        NCCL_CHECK(ncclCommDestroy(g_comms[d]));
        free_gpu(d);
    }
    CUDA_CHECK(cudaSetDevice(0));
}

// The lines above part 1: NCCL, each GPU, what part 1's lines mean.
static inline void print_gpus(const char *variant)
{
    int version = 0;
    NCCL_CHECK(ncclGetVersion(&version));
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

static inline void sharded_poison(void *arg)
{
    (void)arg;
    for (int d = 0; d < g_ngpu; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMemsetAsync(g_gpu[d].total, 0xFF, sizeof(float), g_gpu[d].stream)); // NaN
    }
    CUDA_CHECK(cudaSetDevice(0));
}

// Reads every GPU's total: returns GPU 0's, or the first one that fails the check.
static inline float check_totals(double expected, double tol, int *pass)
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

// run_variant for work spread over every GPU: a checked run into poisoned
// totals, then (unless --check) time_work_devices, the last repetition's
// totals checked too, and the report line. GB/s and % of peak: all GPUs
// together. in: only its exact sum and tolerance are read.
static inline void run_sharded(const Options *opt, const Input *in, const char *variant, const char *label,
                               work_fn work)
{
    double expected = in->expected, tol = in->tol;
    Report r = new_report(opt, variant, opt->n, (double)opt->n * sizeof(float));
    r.gpu = label;
    r.peak_gbs = 0.0;
    for (int d = 0; d < g_ngpu; d++) r.peak_gbs += device_peak_gbs(d); // the GPUs' memories together
    r.expected = expected;
    r.tol = tol;
    sharded_poison(NULL);
    work(NULL);
    sync_devices(g_ngpu);
    r.result = check_totals(expected, tol, &r.pass);
    if (!opt->check_only && r.pass) {
        time_work_devices(opt, g_timed, g_ngpu, sharded_poison, work, NULL, &r);
        r.result = check_totals(expected, tol, &r.pass); // the last repetition's result
    }
    report_result(opt, &r);
}

// ---- part 2: the table of all-reduces of whole vectors --------------------------

// The lesson's kernels for part 2, on GPU d (current) and its stream: check 0
// fills its send vector; check 1 adds the wrong elements of recv to *wrong.
typedef void (*vector_fn)(int d, size_t count, unsigned int salt, int check);

static inline void vector_poison(void *arg)
{
    size_t count = *(const size_t *)arg;
    for (int d = 0; d < g_ngpu; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMemsetAsync(g_gpu[d].recv, 0xFF, count * sizeof(float), g_gpu[d].stream));
    }
    CUDA_CHECK(cudaSetDevice(0));
}

// Elements of recv that are not the exact sum, over every GPU.
static inline unsigned long long vectors_wrong(vector_fn kernel, size_t count, unsigned int salt)
{
    unsigned long long all = 0, w = 0;
    for (int d = 0; d < g_ngpu; d++) {
        Gpu *gp = &g_gpu[d];
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMemsetAsync(gp->wrong, 0, sizeof w, gp->stream));
        kernel(d, count, salt, 1);
        CUDA_CHECK(cudaMemcpyAsync(&w, gp->wrong, sizeof w, cudaMemcpyDeviceToHost, gp->stream));
        CUDA_CHECK(cudaStreamSynchronize(gp->stream));
        all += w;
    }
    CUDA_CHECK(cudaSetDevice(0));
    return all;
}

// Vectors of 1 MiB to 1 GiB (under --check: two small ones, one of an odd
// count), as many as fit in every GPU's free memory: filled once, then
// `work` (arg: the count) checked and timed like a sum. factor: bus bandwidth
// over algorithm bandwidth. CSV: lines allreduce_algbw and allreduce_busbw.
static inline void allreduce_table(const Options *opt, const char *label, double factor, vector_fn kernel,
                                   work_fn work)
{
    static const size_t timed[] = {1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28}; // 1 MiB .. 1 GiB
    static const size_t checked[] = {1 << 18, (1 << 20) + 3};
    const size_t *counts = opt->check_only ? checked : timed;
    int ncounts = opt->check_only ? 2 : 6;
    unsigned int salt = (unsigned int)(opt->seed % 7);
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
        kernel(d, max_count, salt, 0);
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
        work(&count);
        sync_devices(g_ngpu);
        unsigned long long nwrong = vectors_wrong(kernel, count, salt);
        if (!opt->check_only && nwrong == 0) {
            time_work_devices(opt, g_timed, g_ngpu, vector_poison, work, &count, &r);
            nwrong = vectors_wrong(kernel, count, salt); // the last repetition's result
        }
        r.result = (float)nwrong;
        r.pass = nwrong == 0;
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
            printf("FAIL  %llu elements wrong (expected 0)\n", nwrong);
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

// ---- --procs: one process per GPU, a rank ----------------------------------------
//
// parent: counts the GPUs in a child process (it never touches CUDA itself),
//         ncclGetUniqueId, then starts this program once per GPU with the same
//         command line and environment plus LESSON18_RANK, LESSON18_NRANKS and
//         LESSON18_NCCL_ID (the id in hex), and waits for them all.
// rank r: GPU r, ncclCommInitRankConfig(nranks, id, r, config), shard r, one ncclAllReduce;
//         rank 0 prints the report lines.
// Every NCCL wait has a deadline: a rank whose peer died or hangs aborts its
// communicator and exits 1 with one line, and the parent stops the others.

#define ENV_PREFIX "LESSON18_"
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
static inline void rank_fail(const char *what, const char *why)
{
    if (g_comm) ncclCommAbort(g_comm);
    fprintf(stderr, "%s rank %d of %d: %s: %s\n", g_prog, g_rank, g_nranks, what, why);
    exit(1);
}

static inline void rank_fail_late(const char *what)
{
    char why[160];
    snprintf(why, sizeof why, "not done after %.0f s: another rank is missing or stuck (communicator aborted)", WAIT_S);
    rank_fail(what, why);
}

static inline void nccl_fail(const char *what, ncclResult_t r)
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
static inline void comm_ready(const char *what)
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

// Every NCCL call of a rank goes through this: done, in progress (wait for
// it, with the deadline), or failed (abort, one line, exit 1).
static inline void nccl_ok(ncclResult_t r, const char *what)
{
    if (r == ncclInProgress) comm_ready(what);
    else if (r != ncclSuccess) nccl_fail(what, r);
}

// Waits for everything queued on this rank's stream. cudaStreamSynchronize
// could wait forever for a collective whose peer is gone; this polls the
// stream and the communicator's error state, with a deadline. It spins (with
// a yield) rather than sleeps: the barrier before each timed run ends here.
static inline void wait_stream(cudaStream_t s, const char *what)
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

// Rank r drives visible GPU r; g_dev describes it (the harness's init_device
// reads GPU 0). No usable GPU: no_usable_gpu's message, exit 1.
static inline void rank_open_gpu(void)
{
    cudaError_t e = cudaSetDevice(g_rank);
    if (e == cudaSuccess) e = cudaFree(0);
    if (e != cudaSuccess) no_usable_gpu(e, "cudaSetDevice(rank)");
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, g_rank));
    g_dev.id = g_rank;
    snprintf(g_dev.name, sizeof g_dev.name, "%s", prop.name);
    g_dev.sm_count = prop.multiProcessorCount;
    g_dev.cc_major = prop.major;
    g_dev.cc_minor = prop.minor;
    g_dev.l2_bytes = (size_t)prop.l2CacheSize;
    g_dev.peak_gbs = device_peak_gbs(g_rank);
}

static inline void rank_finish(void)
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
static inline void exact_reference(const Options *opt, double *expected, double *tol)
{
    const size_t chunk = (size_t)1 << 22;
    float *h = (float *)malloc(chunk * sizeof(float));
    if (!h) { fprintf(stderr, "%s: out of host memory\n", g_prog); exit(1); }
    int64_t sum = 0, sum_abs = 0;
    for (size_t done = 0; done < opt->n; done += chunk)
        fill_input(h, done, opt->n - done < chunk ? opt->n - done : chunk, opt->seed, opt->dist, &sum, &sum_abs);
    free(h);
    *expected = (double)sum * input_scale(opt->dist);
    *tol = opt->dist == DIST_INTS ? -1.0 : tolerance_for(*expected, (double)sum_abs * input_scale(opt->dist));
}

static inline void rank_poison(Gpu *gp) // NaN in this rank's total
{
    CUDA_CHECK(cudaMemsetAsync(gp->total, 0xFF, sizeof(float), gp->stream));
}

// op over one float of every rank (ncclMax of times; any op as a barrier); the same result on every rank.
static inline float rank_allreduce(Gpu *gp, float v, ncclRedOp_t op, const char *what)
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
static inline float rank_totals(Gpu *gp, double expected, double tol, int *pass)
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
static inline void time_rank(const Options *opt, Gpu *gp, work_fn work, Report *r)
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
        work(NULL);
        CUDA_CHECK(cudaEventRecord(stop, gp->stream));
        wait_stream(gp->stream, "a timed run");
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        ms = rank_allreduce(gp, ms, ncclMax, "ncclAllReduce (max) of the times");
    } while (!timings_add(opt, &s, ms)); // the same times on every rank: the same decision
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    timings_report(&s, r);
}

// run_sharded for one rank of --procs: the reference, rank 0's header lines,
// a checked run, the timed runs (unless --check or it failed: every rank has
// the same verdict, so all time or none), and rank 0's report line. `work`
// is this rank's shard and its all-reduce, on g_gpu[g_rank]'s stream.
static inline void run_rank_variant(const Options *opt, const char *variant, work_fn work)
{
    Gpu *gp = &g_gpu[g_rank];
    if (!g_scratch_d) {
        CUDA_CHECK(cudaMalloc((void **)&g_scratch_d, (MAX_GPUS + 1) * sizeof(float)));
        // pinned, so that copies to and from it stay asynchronous and wait_stream can bound them
        CUDA_CHECK(cudaMallocHost((void **)&g_scratch_h, (MAX_GPUS + 1) * sizeof(float)));
    }
    double expected = 0.0, tol = -1.0, peak = 0.0;
    exact_reference(opt, &expected, &tol);
    for (int k = 0; k < g_nranks; k++) peak += device_peak_gbs(k); // attributes only: no context on the others' GPUs
    const char *label = gpus_label(g_nranks);
    if (g_rank == 0 && !opt->csv) {
        int version = 0;
        NCCL_CHECK(ncclGetVersion(&version));
        printf("# %d process%s, one GPU each, joined by ncclCommInitRankConfig; NCCL %d.%d.%d, NCCL_NVLS_ENABLE=%s "
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
    Report r = new_report(opt, variant, opt->n, (double)opt->n * sizeof(float));
    r.gpu = label;
    r.peak_gbs = peak;
    r.expected = expected;
    r.tol = tol;
    rank_poison(gp);
    work(NULL);
    wait_stream(gp->stream, "the checked run");
    r.result = rank_totals(gp, expected, tol, &r.pass);
    if (!opt->check_only && r.pass) {
        time_rank(opt, gp, work, &r);
        r.result = rank_totals(gp, expected, tol, &r.pass); // the last repetition's result
    }
    if (g_rank == 0) report_result(opt, &r);
}

// A rank's main: run_lesson with its run, then it leaves the communicator
// (rank_finish). Returns run_lesson's exit code.
static inline int run_lesson_rank(int argc, char **argv, const LessonInfo *info, lesson_run run)
{
    int rc = run_lesson(argc, argv, info, run);
    rank_finish();
    return rc;
}

// ---- --procs: the parent, and who a process is ------------------------------------

// The parent failed before any rank started: one line, exit code 1.
static inline int parent_fail(const char *what, const char *why)
{
    fprintf(stderr, "%s --procs: %s: %s\n", g_prog, what, why);
    return 1;
}

// The probe: a child that counts the visible GPUs and writes the number to
// the pipe the parent gave it. No GPU: no_usable_gpu's message, exit 1.
static inline int count_gpus_here(const char *fd_text)
{
    int n = 0, fd = atoi(fd_text);
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) no_usable_gpu(e, "cudaGetDeviceCount");
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%d\n", n);
    if (write(fd, buf, (size_t)len) == len) return 0;
    fprintf(stderr, "%s --procs: could not report the GPU count: %s\n", g_prog, strerror(errno));
    return 3; // not 1: the parent reads exit 1 as "no usable GPU, already said"
}

// The parent asks a child how many GPUs there are: CUDA is then initialised
// in the children only (the parent stays free of it: common/procs.h says why).
static inline int count_gpus_in_a_child(char **argv)
{
    // A parent started with SIGCHLD ignored would have its children reaped for
    // it, and waitpid would never report them: take the default back.
    signal(SIGCHLD, SIG_DFL);
    char who[128];
    snprintf(who, sizeof who, "%s --procs", g_prog);
    int n = count_in_a_child(argv, who, ENV_PREFIX, ENV_COUNT_FD, "the GPUs", WAIT_S);
    return n < MAX_GPUS ? n : MAX_GPUS;
}

// Starts this program once per rank 0..n-1 with argv (the command line as
// given) and the id as hex text in its environment, then waits for them all
// (wait_children: a rank that fails is named, the others are stopped).
// The parent must live until the ranks have joined: the id holds the address
// of a socket it listens on (see ncclGetUniqueId). Returns the exit code.
static inline int start_ranks(char **argv, int n, const ncclUniqueId *id)
{
    static char id_var[sizeof(ENV_ID) + 2 * NCCL_UNIQUE_ID_BYTES + 1], n_var[48], rank_var[MAX_GPUS][48];
    int len = snprintf(id_var, sizeof id_var, ENV_ID "=");
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++) // the id as text: it travels in the environment
        len += snprintf(id_var + len, sizeof id_var - (size_t)len, "%02x", (unsigned char)id->internal[i]);
    snprintf(n_var, sizeof n_var, ENV_NRANKS "=%d", n);
    pid_t pid[MAX_GPUS];
    for (int r = 0; r < n; r++) {
        snprintf(rank_var[r], sizeof rank_var[r], ENV_RANK "=%d", r);
        const char *extra[] = {rank_var[r], n_var, id_var};
        pid[r] = spawn_self(g_prog, argv, ENV_PREFIX, extra, 3);
    }
    char who[128];
    snprintf(who, sizeof who, "%s --procs", g_prog);
    return wait_children(who, pid, n);
}

// Who this process of --procs is. The child that only counts the GPUs does
// that and exits here. A rank (LESSON18_RANK set) reads its rank, the number
// of ranks and the NCCL id, and gets 1; the parent gets 0.
static inline int rank_from_env(void)
{
    if (getenv(ENV_COUNT_FD)) exit(count_gpus_here(getenv(ENV_COUNT_FD)));
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
        fprintf(stderr, "%s: " ENV_RANK " is set, but it, " ENV_NRANKS " or " ENV_ID " is missing or not valid (they are "
                        "for the processes that --procs starts)\n", g_prog);
        exit(2);
    }
    g_rank = (int)rank;
    g_nranks = (int)nranks;
    return 1;
}

// Takes --procs out of argv (the harness does not know it), then parses the
// rest once, before anything starts: -h prints the usage with --procs's line
// (exit 0), bad input is one line (exit 2). run_lesson parses the same argv
// again. Returns 1 if --procs was given.
static inline int procs_options(int *argc, char **argv, const LessonInfo *info)
{
    if (*argc > 0) set_prog_name(argv[0]); // before anything can fail
    int procs = take_flag(argc, argv, "--procs", g_prog);
    Options opt;
    char err[512];
    int rc = parse_options_r(*argc, argv, &opt, info, err, sizeof err);
    if (rc == 1) {
        harness_usage(stdout, info);
        printf("  --procs          one process per GPU, joined by ncclCommInitRankConfig, as real jobs run (part 1 only)\n");
        exit(0);
    }
    if (rc == 2) {
        fprintf(stderr, "%s: %s\n", g_prog, err);
        exit(2);
    }
    return procs;
}

#endif // RANKS_H
