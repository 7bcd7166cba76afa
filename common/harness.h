// harness.h -- what every lesson needs besides itself: error checks, input, reference, timing, report.
//
// A lesson is, in short:
//
//     static int run(Options opt)                      // one set of options
//     {
//         Input in = make_input(&opt);                 // device input + exact reference
//         run_variant(&opt, &in, "tree", reduce_gpu);  // check, time, report
//         free_input(&in);
//         return 0;
//     }
//     int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
//
// run_lesson() parses the options (options.h; exit 2 on bad input), calls run
// once for each combination of the listed values (-n 31,33 -d ints,uniform:
// four runs) and returns 1 if any check failed, else 0. The seeded input, its
// exact reference and the tolerance rule are in check.h; the GPU in device.h
// (no_gpu.h words its absence); timing over several GPUs in multi_gpu.h. The
// host half is plain C11 (tests/test_harness.c compiles it with gcc); the GPU
// half is compiled only under nvcc (__CUDACC__).
#ifndef HARNESS_H
#define HARNESS_H

#include "options.h"
#include "check.h"

#ifdef __CUDACC__
#include <cuda_runtime.h>

// Every CUDA call is checked: the program, file:line, the call's text, the error string, exit 1.
#define CUDA_CHECK(call)                                                                          \
    do {                                                                                          \
        cudaError_t err_ = (call);                                                                \
        if (err_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s: %s:%d: %s: %s\n", g_prog, __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)
// Right after each launch: catches a bad launch configuration at once.
#define CUDA_CHECK_LAST() CUDA_CHECK(cudaGetLastError())

#include "device.h"

static int g_failures = 0;   // checks that failed so far (exit code 1 if any)
static float *g_out = NULL;  // the one-float result the lessons write
static void *g_flush = NULL; // 2 x L2 bytes, written or read between repetitions

typedef struct {
    size_t n;
    const float *d_in;  // the input: n floats starting opt->offset floats past an aligned address
    float *d_alloc;     // the whole allocation, NaN guards included
    int dist;
    double expected;    // the exact sum (a lesson may replace it, e.g. with a max)
    double sum_abs;     // sum of |x|, for the uniform tolerance
    double tol;         // < 0: must be exact (ints)
} Input;

// Elements [first, first + count) of the input, made on the host a chunk at a
// time and copied to the CURRENT device between NaN guards, opt->offset floats
// past an aligned start. *alloc gets the whole allocation (cudaFree it); the
// slice's exact integer sums are added to *sum and *sum_abs. make_input uses
// it for the whole array; a lesson that shards the input makes one per GPU.
static inline const float *upload_slice(const Options *opt, size_t first, size_t count, float **alloc, int64_t *sum,
                                        int64_t *sum_abs)
{
    size_t total = count + opt->offset + 2 * GUARD_FLOATS;
    CUDA_CHECK(cudaMalloc((void **)alloc, total * sizeof(float)));
    CUDA_CHECK(cudaMemset(*alloc, 0xFF, total * sizeof(float))); // 0xFFFFFFFF is a NaN
    float *d = *alloc + GUARD_FLOATS + opt->offset;
    const size_t chunk = (size_t)1 << 22;
    float *h = NULL;
    CUDA_CHECK(cudaMallocHost((void **)&h, chunk * sizeof(float)));
    for (size_t done = 0; done < count; done += chunk) {
        size_t c = count - done < chunk ? count - done : chunk;
        fill_input(h, first + done, c, opt->seed, opt->dist, sum, sum_abs);
        CUDA_CHECK(cudaMemcpy(d + done, h, c * sizeof(float), cudaMemcpyHostToDevice));
    }
    CUDA_CHECK(cudaFreeHost(h));
    return d;
}

// Makes the input on the host slice by slice, copies it to the device between
// NaN guards, and keeps the exact reference. Also sets up the result buffer
// and the L2 flush buffer. extra_bytes: device memory the lesson will need.
static inline Input make_input_extra(const Options *opt, size_t extra_bytes)
{
    Input in;
    memset(&in, 0, sizeof in);
    init_device();
    need_device_bytes(opt, (opt->n + opt->offset + 2 * GUARD_FLOATS) * sizeof(float) + extra_bytes);
    in.n = opt->n;
    in.dist = opt->dist;
    int64_t sum = 0, sum_abs = 0;
    in.d_in = upload_slice(opt, 0, opt->n, &in.d_alloc, &sum, &sum_abs);
    in.expected = (double)sum * input_scale(opt->dist);
    in.sum_abs = (double)sum_abs * input_scale(opt->dist);
    in.tol = opt->dist == DIST_INTS ? -1.0 : tolerance_for(in.expected, in.sum_abs);

    if (!g_out) CUDA_CHECK(cudaMalloc((void **)&g_out, sizeof(float)));
    if (!g_flush) { // written once here; a clean flush only reads it
        CUDA_CHECK(cudaMalloc(&g_flush, 2 * g_dev.l2_bytes));
        CUDA_CHECK(cudaMemset(g_flush, 0, 2 * g_dev.l2_bytes));
    }
    return in;
}
static inline Input make_input(const Options *opt) { return make_input_extra(opt, 0); }

static inline void free_input(Input *in)
{
    CUDA_CHECK(cudaFree(in->d_alloc));
    in->d_alloc = NULL;
    in->d_in = NULL;
}

// The launcher a lesson hands over: reduce d_in[0..n) into *d_out, on the
// default stream, every pass included.
typedef void (*reduce_fn)(const float *d_in, size_t n, float *d_out);

static inline float read_result(void)
{
    float r;
    CUDA_CHECK(cudaMemcpy(&r, g_out, sizeof r, cudaMemcpyDeviceToHost));
    return r;
}

// The clean flush, a kernel of the harness's own plumbing (no lesson idea in
// it): reads `words` words of buf, which nothing writes, so that L2 fills with
// clean lines and later misses evict them with no write-back. The XOR of what
// was read is stored only if it hits one unlikely value: the loads cannot be
// optimised away, and in practice nothing is written (sink may be NULL).
static __global__ void harness_l2_clean_read(const unsigned *buf, size_t words, size_t stride, unsigned *sink)
{
    unsigned acc = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) acc ^= buf[i];
    if (acc == 0x9E3779B9u && sink) *sink = acc;
}

// Empties L2 of the input between repetitions, on `stream`, with a buffer of
// 2 x L2 bytes: dirty writes it (memset, different bytes each rep), leaving
// L2 full of dirty lines; clean reads it. --flush picks; dirty by default.
static inline void flush_buffer(const Options *opt, void *buf, size_t bytes, int rep, cudaStream_t stream)
{
    if (opt->flush == FLUSH_CLEAN) {
        size_t words = bytes / sizeof(unsigned), blocks = (words + 255) / 256;
        blocks = blocks < 1024 ? (blocks ? blocks : 1) : 1024;
        harness_l2_clean_read<<<(unsigned)blocks, 256, 0, stream>>>((const unsigned *)buf, words, blocks * 256, NULL);
        CUDA_CHECK(cudaGetLastError());
    } else {
        CUDA_CHECK(cudaMemsetAsync(buf, rep & 0xFF, bytes, stream));
    }
}
static inline void flush_l2(const Options *opt, int rep) { flush_buffer(opt, g_flush, 2 * g_dev.l2_bytes, rep, 0); }

// Prints a report in the format the options ask for.
static inline void print_report(const Options *opt, const Report *r)
{
    char line[768];
    if (opt->csv) {
        static int header_done = 0;
        if (opt->csv_header && !header_done) printf("%s\n", CSV_HEADER);
        header_done = 1;
        format_csv(line, sizeof line, r);
    } else {
        format_human(line, sizeof line, r);
    }
    printf("%s\n", line);
    fflush(stdout);
}

// The repetitions' times and when to stop: -r reps exactly, else adaptive
// (MIN_REPS..MAX_REPS, about ADAPTIVE_SECONDS of timed work). time_work,
// time_work_devices and lesson 18's ranks keep their times here (lesson 14's
// run_variants keeps its own).
typedef struct { double *us; int cap, k; double total_ms; } Timings;
static inline Timings timings_new(const Options *opt)
{
    Timings s = {NULL, opt->reps ? opt->reps : MAX_REPS, 0, 0.0};
    s.us = (double *)malloc(sizeof(double) * (size_t)s.cap);
    if (!s.us) { fprintf(stderr, "%s: out of host memory\n", g_prog); exit(1); }
    return s;
}
// Keeps one repetition's time; returns 1 once enough have been timed.
static inline int timings_add(const Options *opt, Timings *s, float ms)
{
    s->us[s->k++] = ms * 1e3;
    s->total_ms += ms;
    return s->k >= s->cap || (!opt->reps && s->k >= MIN_REPS && s->total_ms >= ADAPTIVE_SECONDS * 1e3);
}
// Fills r->reps, median_us, min_us, max_us and frees the times.
static inline void timings_report(Timings *s, Report *r)
{
    r->reps = s->k;
    median_min_max(s->us, s->k, &r->median_us, &r->min_us, &r->max_us);
    free(s->us);
    s->us = NULL;
}

// Times any piece of GPU work: warm-up excluded (the caller runs and checks
// it first), then repetitions of  flush L2, prepare (poison), event, work,
// event. prepare may be NULL. Fills r->reps, median_us, min_us, max_us.
typedef void (*work_fn)(void *arg);
static inline void time_work(const Options *opt, work_fn prepare, work_fn work, void *arg, Report *r)
{
    Timings s = timings_new(opt);
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    float ms;
    do {
        flush_l2(opt, s.k);
        if (prepare) prepare(arg);
        CUDA_CHECK(cudaEventRecord(start, 0));
        work(arg);
        CUDA_CHECK(cudaEventRecord(stop, 0));
        CUDA_CHECK(cudaEventSynchronize(stop));
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    } while (!timings_add(opt, &s, ms));
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    timings_report(&s, r);
}

// Prints a finished report and counts a failure. Returns r->pass.
static inline int report_result(const Options *opt, const Report *r)
{
    if (!r->pass) g_failures++;
    print_report(opt, r);
    return r->pass;
}

// A Report filled with what every line of this run shares.
static inline Report new_report(const Options *opt, const char *variant, size_t n, double bytes)
{
    Report r;
    memset(&r, 0, sizeof r);
    r.lesson = opt->lesson;
    r.variant = variant;
    r.gpu = g_dev.name;
    r.n = n;
    r.bytes = bytes;
    r.peak_gbs = g_dev.peak_gbs;
    return r;
}

typedef struct { reduce_fn fn; const Input *in; } SumWork;
static inline void sum_poison(void *arg) { (void)arg; CUDA_CHECK(cudaMemsetAsync(g_out, 0xFF, sizeof(float), 0)); }
static inline void sum_work(void *arg)
{
    SumWork *w = (SumWork *)arg;
    w->fn(w->in->d_in, w->in->n, g_out);
}

// Checks and times one sum variant, then prints its line. bytes: what the
// reduction must read (0 means n * sizeof(float)). Returns 1 if it passed.
//   1. warm-up run into a NaN-poisoned result, checked;
//   2. timed repetitions (time_work), each into a freshly poisoned result;
//   3. the LAST repetition's result is checked too.
// kept: if not NULL, receives the finished report (a lesson that tabulates it).
static inline int run_variant_keep(const Options *opt, const Input *in, const char *variant, reduce_fn fn,
                                   double bytes, Report *kept)
{
    Report r = new_report(opt, variant, in->n, bytes > 0 ? bytes : (double)in->n * sizeof(float));
    r.expected = in->expected;
    r.tol = in->tol;
    SumWork w = {fn, in};
    sum_poison(&w);
    sum_work(&w);
    CUDA_CHECK(cudaDeviceSynchronize());
    r.result = read_result();
    r.pass = check_result(r.result, in->expected, in->tol);
    if (!opt->check_only && r.pass) {
        time_work(opt, sum_poison, sum_work, &w, &r);
        r.result = read_result(); // the last repetition's result
        r.pass = check_result(r.result, in->expected, in->tol);
    }
    int pass = report_result(opt, &r);
    if (kept) *kept = r;
    return pass;
}
static inline int run_variant_bytes(const Options *opt, const Input *in, const char *variant, reduce_fn fn,
                                    double bytes)
{
    return run_variant_keep(opt, in, variant, fn, bytes, NULL);
}
static inline int run_variant(const Options *opt, const Input *in, const char *variant, reduce_fn fn)
{
    return run_variant_keep(opt, in, variant, fn, 0.0, NULL);
}

// A host copy of the input, for lessons that need a reference other than the
// sum (max, argmax, ...). The caller frees it.
static inline float *copy_input_to_host(const Input *in)
{
    float *h = (float *)malloc(in->n * sizeof(float) + 1);
    if (!h) { fprintf(stderr, "%s: out of host memory for a copy of the input\n", g_prog); exit(1); }
    if (in->n) CUDA_CHECK(cudaMemcpy(h, in->d_in, in->n * sizeof(float), cudaMemcpyDeviceToHost));
    return h;
}

// 1 if any check failed, else 0.
static inline int harness_exit_code(void) { return g_failures ? 1 : 0; }

// ---- main() ------------------------------------------------------------------
// A lesson's main() hands its run to run_lesson(), which parses the options
// (usage, or one line and exit 2 on bad input) and then calls run once for
// every combination of the -n, -s, -d, --offset and -b lists, with the
// scalars in opt set to it. Each run frees what it allocated. A run returns 0
// to go on, or an exit code to stop with (2: this n is too much for the lesson).
// The exit code is then 1 if any check failed, else 0.
typedef int (*lesson_run)(Options opt);
static inline int run_lesson_with(int argc, char **argv, const LessonInfo *info, int takes_shape, lesson_run run)
{
    Options all;
    parse_options_or_exit(argc, argv, &all, info, takes_shape);
    for (int i = 0; i < all.n_count; i++)
        for (int j = 0; j < all.seed_count; j++)
            for (int k = 0; k < all.dist_count; k++)
                for (int o = 0; o < all.offset_count; o++)
                    for (int b = 0; b < all.block_count; b++) {
                        Options opt = all;
                        opt.n = all.n_list[i];
                        opt.seed = all.seed_list[j];
                        opt.dist = all.dist_list[k];
                        opt.offset = all.offset_list[o];
                        opt.block = all.block_list[b];
                        int rc = run(opt);
                        if (rc) return rc;
                    }
    // The harness's own buffers go too, so that a leak check sees only the lesson's.
    if (g_out || g_flush) CUDA_CHECK(cudaSetDevice(0));
    if (g_out) CUDA_CHECK(cudaFree(g_out));
    if (g_flush) CUDA_CHECK(cudaFree(g_flush));
    g_out = NULL;
    g_flush = NULL;
    return harness_exit_code();
}
static inline int run_lesson(int argc, char **argv, const LessonInfo *info, lesson_run run)
{
    return run_lesson_with(argc, argv, info, 0, run);
}
// For lessons that reduce the rows of a matrix (lesson 17): -m ROWS -k COLS too.
static inline int run_lesson_shape(int argc, char **argv, const LessonInfo *info, lesson_run run)
{
    return run_lesson_with(argc, argv, info, 1, run);
}

#include "multi_gpu.h"
#include "compare.h"

#endif // __CUDACC__
#endif // HARNESS_H
