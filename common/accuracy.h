// accuracy.h -- lesson 15's host plumbing: CUB beside it, the "cancel" input, the exact sum, bit patterns, the table.
//
// Include it after harness.h and cccl_env.h (it uses CUDA_CHECK, g_out,
// read_result, Report, HAVE_DETERMINISM, CCCL_ENV). Nothing here runs on the
// GPU but the sums it is handed and CUB's.
#ifndef ACCURACY_H
#define ACCURACY_H

#include <cub/device/device_reduce.cuh>

#define CANCEL_BITS 20 // the "cancel" input is integers times 2^-20

// "cancel": the first half holds big positive integers B_j (1 to 2^23, of
// varied magnitude), the second half holds -B_j + s_j with s_j in {0, 1}; an
// odd last element is s. Every value is an integer below 2^24 in magnitude
// times 2^-20, so it is an exact float, and the true sum (the s_j) is tiny
// next to sum |x|: condition number ~4e6. Partial sums grow huge, then cancel.
static inline void make_cancel(float *h, size_t n, uint64_t seed)
{
    size_t half = n / 2;
    uint64_t base = mix64(seed ^ 0xCA9CE1ULL);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = mix64(base + (i < half ? i : i - half));
        int64_t big = (int64_t)(1 + (r & 0xFFFF)) << ((r >> 16) & 7);
        int64_t small = (int64_t)((r >> 20) & 1);
        int64_t v = i < half ? big : i < 2 * half ? small - big : small;
        h[i] = ldexpf((float)v, -CANCEL_BITS);
    }
}

// The exact sum of floats that are all integers times 2^-bits (checked), by
// int64 fixed point; also sum |x| (for the condition number).
static inline double exact_sum(const float *h, size_t n, int bits, double *sum_abs)
{
    int64_t s = 0;
    double a = 0.0;
    for (size_t i = 0; i < n; i++) {
        double t = ldexp((double)h[i], bits);
        int64_t k = (int64_t)t;
        if ((double)k != t) { fprintf(stderr, "%s: exact_sum: element %zu is not on the 2^-%d grid\n", g_prog, i, bits); exit(1); }
        s += k;
        a += fabs(t);
    }
    *sum_abs = ldexp(a, -bits);
    return ldexp((double)s, -bits); // exact while |s| < 2^53
}

// Runs fn reps times on the same input; returns how many distinct bit
// patterns the results had, and the last result in *last.
static inline int distinct_results(reduce_fn fn, const float *d_x, size_t n, int reps, float *last)
{
    uint32_t *seen = (uint32_t *)malloc((size_t)reps * sizeof(uint32_t) + 1);
    if (!seen) { fprintf(stderr, "%s: out of host memory\n", g_prog); exit(1); }
    int k = 0;
    for (int r = 0; r < reps; r++) {
        CUDA_CHECK(cudaMemsetAsync(g_out, 0xFF, sizeof(float), 0)); // NaN: a run that writes nothing shows
        fn(d_x, n, g_out);
        *last = read_result();
        uint32_t bits;
        memcpy(&bits, last, sizeof bits);
        int j = 0;
        while (j < k && seen[j] != bits) j++;
        if (j == k) seen[k++] = bits;
    }
    free(seen);
    return k;
}

// The most distinct bit patterns that any of fns[0..count) gives in reps runs.
static inline int most_patterns(reduce_fn const *fns, int count, const float *d_x, size_t n, int reps)
{
    int worst = 0;
    for (int v = 0; v < count; v++) {
        float last;
        int k = distinct_results(fns[v], d_x, n, reps, &last);
        if (k > worst) worst = k;
    }
    return worst;
}

// A launcher that takes its grid and block: blocks <= 0 picks its own grid.
typedef void (*shaped_fn)(const float *d_in, size_t n, float *d_out, int blocks, int block);

// Runs launch under 5 {blocks, threads} shapes, as other GPUs would pick them:
// its own grid with blocks of `block` threads (first), 1 x 256, 3 x 32, one
// block of 128 per SM, its own grid of 1024-thread blocks. Returns how many
// gave other bits than the first; the first's bits go to *first_bits.
static inline int shapes_differ(shaped_fn launch, const float *d_x, size_t n, int block, uint32_t *first_bits)
{
    static const int shape[][2] = {{0, 0}, {1, 256}, {3, 32}, {-1, 128}, {0, 1024}}; // 0: its own, -1: one per SM
    int differ = 0;
    *first_bits = 0;
    for (int k = 0; k < (int)(sizeof shape / sizeof shape[0]); k++) {
        if (n == 0) break;
        CUDA_CHECK(cudaMemsetAsync(g_out, 0xFF, sizeof(float), 0));
        launch(d_x, n, g_out, shape[k][0] < 0 ? g_dev.sm_count : shape[k][0], shape[k][1] ? shape[k][1] : block);
        float got = read_result();
        uint32_t bits;
        memcpy(&bits, &got, sizeof bits);
        if (k == 0) *first_bits = bits;
        else differ += bits != *first_bits;
    }
    return differ;
}

// A "check only" line whose result is a count that must be exactly want.
static inline void report_count(const Options *opt, const char *variant, size_t n, int got, int want)
{
    Report r = new_report(opt, variant, n, (double)n * sizeof(float));
    r.result = (float)got;
    r.expected = (double)want;
    r.tol = -1.0;
    r.pass = got == want;
    report_result(opt, &r);
}

// "repeat": the fixed-order variants fns[0..count) (fixed, kahan, fp64,
// gpu_to_gpu) must each give ONE bit pattern in reps runs.
static inline void check_repeat(const Options *opt, reduce_fn const *fns, int count, const float *d_x, size_t n, int reps)
{
    int worst = most_patterns(fns, count, d_x, n, reps);
    if (!opt->csv) printf("# repeat: fixed, kahan, fp64 and gpu_to_gpu each run %d times; result = most distinct bit patterns (must be 1)\n", reps);
    report_count(opt, "repeat", n, worst, 1);
}

// "shapes": gpu_to_gpu under other grids and block sizes, as another GPU
// would launch it, must give one bit pattern for all of them. Its row's
// result is the count of shapes that differ (0 passes); GPUs are compared on
// the gpu_to_gpu row's result.
static inline void check_shapes(const Options *opt, shaped_fn launch, const float *d_x, size_t n, int block)
{
    uint32_t bits;
    int differ = shapes_differ(launch, d_x, n, block, &bits);
    if (!opt->csv) printf("# shapes: gpu_to_gpu under 5 grid and block shapes; result = shapes whose bits differ (must be 0); bits 0x%08x\n", bits);
    report_count(opt, "shapes", n, differ, 0);
}

// The table of human mode. For three inputs (positive: condition number 1;
// the uniform input; cancel), each variant v with fns[v] != NULL: distinct
// bit patterns in reps runs, the last result, its error against the exact
// sum, and the GB/s of its timed line (timed[v], on the -d input).
static inline void print_table(const Options *opt, size_t n, int count, const char *const *names,
                               reduce_fn const *fns, const Report *timed, int reps)
{
    float *h = (float *)malloc(n * sizeof(float) + 1), *d_x = NULL;
    if (!h) { fprintf(stderr, "%s: out of host memory\n", g_prog); exit(1); }
    CUDA_CHECK(cudaMalloc((void **)&d_x, n * sizeof(float) + 16));
    printf("\n%d runs of each variant on n=%zu; error against the exact sum (int64 fixed point on the host).\n"
           "atomic, fixed: fp32 adds (atomic / fixed-order finish); kahan: fp32 + per-thread Neumaier;\n"
           "fp64: double adds; gpu_to_gpu: fp32 in an order fixed by n; cub: DeviceReduce::Sum;\n"
           "cccl_gpu_to_gpu: CUB's reproducible level. GB/s: the timed lines above (-d input).\n",
           reps, n);
    printf("%-9s %-12s %-15s %-9s %-16s %-9s %-9s %s\n", "data", "sum|x|/|sum|", "variant", "patterns", "result",
           "|error|", "err/|sum|", "GB/s");
    for (int d = 0; d < 3; d++) {
        int64_t s = 0, a = 0;
        int bits = 23; // uniform input is k * 2^-23
        if (d < 2) fill_input(h, 0, n, opt->seed, DIST_UNIFORM, &s, &a);
        if (d == 0) for (size_t i = 0; i < n; i++) h[i] = fabsf(h[i]); // all positive: condition number 1
        if (d == 2) { make_cancel(h, n, opt->seed); bits = CANCEL_BITS; }
        double sum_abs, exact = exact_sum(h, n, bits, &sum_abs);
        if (n) CUDA_CHECK(cudaMemcpy(d_x, h, n * sizeof(float), cudaMemcpyHostToDevice));
        for (int v = 0; v < count; v++) {
            if (!fns[v]) continue; // not in this build, or not trusted at this n
            float last = 0.0f;
            int k = distinct_results(fns[v], d_x, n, reps, &last);
            double err = fabs((double)last - exact), us = timed[v].median_us;
            printf("%-9s %-12.3g %-15s %3d/%-5d %-16.9g %-9.2g %-9.2g %.1f\n", d == 0 ? "positive" : d == 1 ? "uniform" : "cancel",
                   exact != 0.0 ? sum_abs / fabs(exact) : INFINITY, names[v], k, reps, (double)last, err,
                   exact != 0.0 ? err / fabs(exact) : 0.0, us > 0 ? n * 4.0 / (us * 1e3) : 0.0);
        }
    }
    CUDA_CHECK(cudaFree(d_x));
    free(h);
}

// ---- CUB's sums ---------------------------------------------------------------
// n goes in as a size_t, so CUB builds its 64-bit-offset kernels; lesson 14
// passes an int where n fits (32-bit offsets), so its cub rows time other kernels.

// Why this run has no cccl_gpu_to_gpu line (a comment line: on stderr under --csv).
static inline void say_cccl_left_out(const Options *opt, size_t n)
{
#if HAVE_DETERMINISM
    fprintf(opt->csv ? stderr : stdout, "# cccl_gpu_to_gpu left out at n = %zu: CUB 3.5.0 sums it wrong there (older CUBs are not trusted either)\n", n);
#else
    static int said; // once per process: it holds for every run
    (void)n;
    if (!said++) fprintf(opt->csv ? stderr : stdout, "# cccl_gpu_to_gpu skipped: it needs CUB 3.4 or newer (this build has %d.%d)\n",
                         CUB_VERSION / 100000, CUB_VERSION / 100 % 1000);
#endif
}

static void *g_cub_temp; // DeviceReduce::Sum's temp storage, sized once per run
static size_t g_cub_bytes;

static inline void reduce_cub(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    size_t bytes = g_cub_bytes; // temp storage allocated once, outside the timing
    CUDA_CHECK(cub::DeviceReduce::Sum(g_cub_temp, bytes, d_in, d_out, n));
}

#if HAVE_DETERMINISM
// CUB's gpu_to_gpu level, through lesson 14's environment: its scratch comes
// from one buffer, sized by an untimed first call (cccl_env.h).
static inline void reduce_cccl_gpu_to_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    CUDA_CHECK(cub::DeviceReduce::Sum(d_in, d_out, n, CCCL_ENV(gpu_to_gpu)));
}
#else
#define reduce_cccl_gpu_to_gpu NULL // needs CUB 3.4 or newer: the variant is skipped
static inline void scratch_sizing(void) {} // no environment, so no scratch to size or free
static inline void scratch_sized(void) {}
static inline void scratch_free(void) {}
#endif

// Before the timed lines: CUB's temp storage for n, and the untimed first
// call that sizes the scratch of cccl (NULL: this run has no cccl line; says why).
static inline void cub_prepare(const Options *opt, const float *d_in, size_t n, reduce_fn cccl)
{
    CUDA_CHECK(cub::DeviceReduce::Sum(NULL, g_cub_bytes, d_in, g_out, n > 0 ? n : 1));
    CUDA_CHECK(cudaMalloc(&g_cub_temp, g_cub_bytes > 0 ? g_cub_bytes : 1));
    if (cccl) cccl(d_in, n, g_out);
    else say_cccl_left_out(opt, n);
    CUDA_CHECK(cudaDeviceSynchronize());
    scratch_sized(); // the timed calls may not grow it
}
static inline void cub_free(void)
{
    scratch_free();
    CUDA_CHECK(cudaFree(g_cub_temp));
}

#endif // ACCURACY_H
