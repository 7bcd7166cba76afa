// ops_host.h -- lesson 16's host side: grids, buffers, the CUB calls, references of the ops, checks, planted tests.
//
// Host code only, for lesson 16 alone. Include it after the lesson's State, op
// ids (OP_*, NUM_OPS), identity, NO_INDEX, UNROLL, SHIFT, g_kernel and the CUB
// functors (MeanVarMerge, MeanVarOf, MaxSumMerge, MaxSumOf); the lesson
// defines reduce_gpu, its launch, after it.
#ifndef OPS_HOST_H
#define OPS_HOST_H

#include <cub/device/device_reduce.cuh>
#include <cub/version.cuh>

#include "welford_bound.h" // the error bounds of the Welford/Chan merges in float

// CUB calls an older CUB lacks: their cub_* lines are left out, with a note.
#define CUB_ARGMAX_PAIR (CUB_VERSION >= 200800)      // ArgMax to separate value and index outputs (CUB 2.8)
#define CUB_TRANSFORM_REDUCE (CUB_VERSION >= 200400) // TransformReduce: cub_welford, cub_softmax (CUB 2.4)

static int g_block, g_max_blocks[NUM_OPS]; // SMs x resident blocks, per kernel
static State *g_partials, *g_state;        // block partials; the one result
static unsigned int *g_counter;            // the blocks-done counter
static void *g_cub_temp;                   // CUB's scratch, sized once per run
static size_t g_cub_bytes;
static float *g_work;                      // planted and shifted copies of the input

static void reduce_gpu(int op, const float *d_in, size_t n, State *d_out); // the lesson's launch

// Lesson 12's grid: enough blocks for one trip each, at most a full GPU's worth.
static int grid_for(int op, size_t n)
{
    size_t per_block = (size_t)g_block * 4 * UNROLL; // floats a block takes in one trip
    size_t want = (n + per_block - 1) / per_block;
    return want < (size_t)g_max_blocks[op] ? (int)(want > 0 ? want : 1) : g_max_blocks[op];
}

static int cub_has(int op) // does this CUB have the call for op?
{
    return op == OP_MAX || op == OP_MIN ? 1 : op == OP_ARGMAX ? CUB_ARGMAX_PAIR : CUB_TRANSFORM_REDUCE;
}

// CUB's two-phase call: with temp == NULL it only sets *bytes.
static void reduce_cub(int op, void *temp, size_t *bytes, const float *d_in, size_t n, State *d_out)
{
    switch (op) {
    case OP_MAX: CUDA_CHECK(cub::DeviceReduce::Max(temp, *bytes, d_in, &d_out->v, n)); break;
    case OP_MIN: CUDA_CHECK(cub::DeviceReduce::Min(temp, *bytes, d_in, &d_out->v, n)); break;
#if CUB_ARGMAX_PAIR // the overload with separate value and int64 index outputs
    case OP_ARGMAX: CUDA_CHECK(cub::DeviceReduce::ArgMax(temp, *bytes, d_in, &d_out->v, &d_out->i, (int64_t)n)); break;
#endif
#if CUB_TRANSFORM_REDUCE
    case OP_MEANVAR:
        CUDA_CHECK(cub::DeviceReduce::TransformReduce(temp, *bytes, d_in, &d_out->w, n, MeanVarMerge(), MeanVarOf(),
                                                      identity(OP_MEANVAR).w));
        break;
    case OP_SOFTMAX:
        CUDA_CHECK(cub::DeviceReduce::TransformReduce(temp, *bytes, d_in, &d_out->p, n, MaxSumMerge(), MaxSumOf(),
                                                      identity(OP_SOFTMAX).p));
        break;
#endif
    }
}

// Everything the reductions need besides the input, outside any timing: each
// kernel's grid cap (SMs x resident blocks, lesson 12's rule), the partials,
// the result, the counter (zeroed once: count_done leaves it 0 after each
// launch), CUB's scratch, and d_x: room for planted copies of the input, at
// its alignment mod 16 bytes (returned; ops_free frees all of it).
static float *ops_setup(const Options *opt, const Input *in)
{
    static int said; // the note about this CUB, once per process
    if (!(CUB_ARGMAX_PAIR && CUB_TRANSFORM_REDUCE) && !said++)
        fprintf(opt->csv ? stderr : stdout, "# CUB %d.%d.%d: %s left out (ArgMax with an index output needs CUB 2.8, "
                "TransformReduce 2.4)\n", CUB_VERSION / 100000, CUB_VERSION / 100 % 1000, CUB_VERSION % 100,
                CUB_TRANSFORM_REDUCE ? "cub_argmax" : "cub_argmax, cub_welford and cub_softmax");
    g_block = opt->block;
    size_t n = in->n;
    int most = 1;
    for (int op = 0; op < NUM_OPS; op++) {
        int occ = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, g_kernel[op], g_block, 0));
        g_max_blocks[op] = occ * g_dev.sm_count > 0 ? occ * g_dev.sm_count : 1;
        if (g_max_blocks[op] > most) most = g_max_blocks[op];
    }
    CUDA_CHECK(cudaMalloc((void **)&g_partials, most * sizeof(State)));
    CUDA_CHECK(cudaMalloc((void **)&g_state, sizeof(State)));
    CUDA_CHECK(cudaMalloc((void **)&g_counter, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_counter, 0, sizeof(unsigned int)));
    for (int op = 0; op < OP_NAIVE && n > 0; op++) { // CUB's temp storage: the largest any op asks for
        size_t bytes = 0;
        if (cub_has(op)) reduce_cub(op, NULL, &bytes, in->d_in, n, g_state);
        if (bytes > g_cub_bytes) g_cub_bytes = bytes;
    }
    CUDA_CHECK(cudaMalloc(&g_cub_temp, g_cub_bytes > 0 ? g_cub_bytes : 1));
    CUDA_CHECK(cudaMalloc((void **)&g_work, (n + 4) * sizeof(float)));
    return g_work + opt->offset % 4;
}

static void ops_free(void)
{
    CUDA_CHECK(cudaFree(g_work));
    CUDA_CHECK(cudaFree(g_cub_temp));
    CUDA_CHECK(cudaFree(g_counter));
    CUDA_CHECK(cudaFree(g_state));
    CUDA_CHECK(cudaFree(g_partials));
}

typedef struct {
    double max, min, argmax_v, mean, var, m, s;
    double amax; // the largest |x| among finite x (softmax's bound)
    long long argmax_i;
} Ref;

// Host references, all in double: max/min/argmax exact (argmax: NaN ranks
// below every number, equal values go to the first index); mean by a
// compensated sum; variance by two passes (deviations from that mean);
// softmax: m = max, s = sum of exp(x - m) (positive terms: accurate to ~1e-16;
// a NaN x gives NaN, a -inf x adds 0, and all -inf gives the empty (-inf, 0)).
static Ref host_ref(const float *h, size_t n)
{
    Ref r = {-INFINITY, INFINITY, NAN, 0.0, 0.0, -INFINITY, 0.0, 0.0, NO_INDEX};
    for (size_t i = 0; i < n; i++) {
        double x = h[i];
        if (x > r.max) r.max = x;
        if (x < r.min) r.min = x;
        if (isfinite(x) && fabs(x) > r.amax) r.amax = fabs(x);
        // strict >: the first of equal maxima stays; a NaN so far gives way to any number, and to nothing else
        if (x > r.argmax_v || (isnan(r.argmax_v) && (!isnan(x) || r.argmax_i == NO_INDEX))) {
            r.argmax_v = x;
            r.argmax_i = (long long)i;
        }
    }
    if (n == 0) return r;
    r.mean = neumaier_sum(h, n) / (double)n;
    double q = 0.0, c = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)h[i] - r.mean, sq = d * d, t = q + sq;
        c += q >= sq ? (q - t) + sq : (sq - t) + q; // Neumaier, as neumaier_sum
        q = t;
    }
    r.var = (q + c) / (double)n;
    r.m = r.max;
    double shift = r.m > -INFINITY ? r.m : 0.0; // all -inf: exp(-inf - 0) = 0 for each
    for (size_t i = 0; i < n; i++) r.s += exp((double)h[i] - shift);
    return r;
}

// One reduction of d_x[0..n) by op, ours or CUB's, into g_state.
typedef struct { int op, cub; const float *d_x; size_t n; } Job;
static void job_poison(void *arg)
{
    (void)arg;
    CUDA_CHECK(cudaMemsetAsync(g_state, 0xFF, sizeof(State), 0)); // NaN values, index -1: unwritten shows
}
static void job_work(void *arg)
{
    Job *j = (Job *)arg;
    size_t bytes = g_cub_bytes;
    if (j->cub) reduce_cub(j->op, g_cub_temp, &bytes, j->d_x, j->n, g_state);
    else reduce_gpu(j->op, j->d_x, j->n, g_state);
}
static State run_once(Job *j)
{
    State t;
    job_poison(j);
    job_work(j);
    CUDA_CHECK(cudaMemcpy(&t, g_state, sizeof t, cudaMemcpyDeviceToHost));
    return t;
}
// Population variance M2 / count (0 for no elements).
static double finish_var(State t) { return t.w.n > 0.0f ? (double)t.w.m2 / (double)t.w.n : 0.0; }

// The most merges on any path of a Welford job's tree, and how many of them
// can see a count above 2^24 (welford_bound.h). Ours: counted from the launch.
// CUB's tree is CUB's; its DeviceReduce (cub/device/dispatch/dispatch_reduce.cuh)
// spreads the input evenly over at least 5 blocks per SM (its subscription
// factor) of at least 128 threads, each thread folding its share one element
// at a time, and its tiles, warps and second pass add fewer than 256 merges
// to a path; the counts above 2^24 come in the second pass's block, where at
// most 36 merges (warp shuffles, then its warps in turn) lie on a path.
static double job_depth(const Job *j, double *count_depth)
{
    if (!j->cub) return welford_depth(j->n, (size_t)grid_for(OP_MEANVAR, j->n), (size_t)g_block, UNROLL, count_depth);
    size_t spread = (size_t)640 * (size_t)g_dev.sm_count;
    double d = fmin((double)((j->n + spread - 1) / spread) + 256.0, (double)j->n);
    *count_depth = fmin(36.0, d);
    return d;
}

// Welford's bounds for n elements merged at most `depth` deep: the variance's,
// returned, and the mean's in *mean_tol (welford_bound.h derives both).
static double welford_tols(const Ref *ref, size_t n, double depth, double count_depth, double *mean_tol)
{
    if (n == 0) { *mean_tol = float_ulp(0.0); return float_ulp(0.0); } // the identity: (0, 0, 0)
    return welford_tol((double)n, depth, count_depth, ref->mean, fmax(fabs(ref->max), fabs(ref->min)),
                       ref->max - ref->min, ref->var, mean_tol);
}

// The check of one op's state. Bounds (tol): max, min, argmax exact (value
// and index); softmax m exact and |s - S| <= (1e-5 + 2^-21 M) S, M the
// largest finite |x| (below); Welford: the count exact (up to 2^24; beyond,
// within its own roundings, Dc x 2^-24 relative), the mean and the variance
// within welford_bound.h's bounds for a tree `depth[0]` merges deep (Dc =
// depth[1] of them with counts above 2^24):
//     |mean' - mu| <= E = D (ulp(M + R) / 2 + 3 u R) + 17 u R
//     |var' - V|   <= (2 D + 24) u V + 4 E sqrt(L V) + 4 E^2 L + 2 u R sqrt(V) + (19 u R)^2
// (u = 2^-24, M the largest |x|, R = max - min, L = min(log2 n, D / 4); with
// counts above 2^24, welford_tol adds their rounding terms): the mean's
// roundings are ulps of |mean|, and through d = mb - ma they reach the
// variance, so the shifted input (|mean| / sigma about 108 for -d ints, 1700
// for uniform, far more for a few nearly equal values) needs the larger bound. A NaN expected must come out NaN.
//
// Softmax: 1e-5 S is the harness's rule for a float sum of positive terms; it
// also covers ex2.approx's own error, a few ulp (2^-24 relative each) per ex2 a
// term meets: its own and one per rescale, a few dozen on random data, where
// the max rarely grows (an input raising it every trip would need more). The
// 2^-21 M is the exponents' rounding: terms are ex2(x log2e - m log2e), the
// rescales ex2((m_i - m) log2e); each rounding in them is 2^-24 relative to a
// number below 2 M log2e, the rescales' differences add up to at most 2 M (the
// max only grows), at most 8 * 2^-24 M log2e in all, and an exponent off by e
// puts 2^exponent off by e ln 2 = e / log2e, relative.
static void check_state(int op, State g, const Ref *ref, const double *depth, Report *r)
{
    double got = g.v, want = 0.0;
    r->tol = -1.0;
    if (op == OP_MAX || op == OP_MIN || op == OP_ARGMAX) {
        want = op == OP_MAX ? ref->max : op == OP_MIN ? ref->min : ref->argmax_v;
        r->pass = isnan(want) ? isnan(got) : check_result(g.v, want, -1.0);
        if (op == OP_ARGMAX && g.i != ref->argmax_i) r->pass = 0;
    } else if (op == OP_SOFTMAX) {
        got = g.p.s;
        want = ref->s;
        r->tol = isnan(want) ? -1.0 : (1e-5 + ldexp(ref->amax, -21)) * ref->s;
        r->pass = isnan(want) ? isnan(got) : check_result(g.p.s, want, r->tol) && (double)g.p.m == ref->m;
    } else { // OP_MEANVAR: neither bound is tighter than the float answer's own rounding
        double mean = g.w.n > 0.0f ? g.w.mean : 0.0, n = (double)r->n, mean_tol;
        got = finish_var(g);
        want = ref->var;
        r->tol = welford_tols(ref, r->n, depth[0], depth[1], &mean_tol);
        r->pass = !isnan(got) && fabs(got - want) <= r->tol && fabs(mean - ref->mean) <= mean_tol &&
                  fabs((double)g.w.n - n) <= (n > 16777216.0 ? depth[1] * ldexp(n, -24) : 0.0);
    }
    r->result = (float)got;
    r->expected = want;
}

// Checks (and, if timed, times) one job and prints its line.
static void run_job(const Options *opt, const char *variant, Job *job, const Ref *ref, int timed)
{
    Report r = new_report(opt, variant, job->n, (double)job->n * sizeof(float));
    double depth[2] = {0.0, 0.0}, mean_tol = 0.0;
    if (job->op == OP_MEANVAR) depth[0] = job_depth(job, &depth[1]);
    State g = run_once(job);
    check_state(job->op, g, ref, depth, &r);
    if (timed && !opt->check_only && r.pass) {
        time_work(opt, job_poison, job_work, job, &r);
        CUDA_CHECK(cudaMemcpy(&g, g_state, sizeof g, cudaMemcpyDeviceToHost)); // the last timed run
        check_state(job->op, g, ref, depth, &r);
    }
    report_result(opt, &r);
    FILE *detail = opt->csv ? stderr : stdout; // --csv: CSV lines only on stdout
    if (!r.pass && job->op == OP_ARGMAX) fprintf(detail, "    argmax index: got %lld, expected %lld\n", g.i, ref->argmax_i);
    if (!r.pass && job->op == OP_MEANVAR) {
        welford_tols(ref, job->n, depth[0], depth[1], &mean_tol);
        fprintf(detail, "    mean: got %.9g, expected %.17g (tol %.3g); count: got %.0f, expected %zu\n",
                (double)g.w.mean, ref->mean, mean_tol, (double)g.w.n, job->n);
    }
    if (!r.pass && job->op == OP_SOFTMAX) fprintf(detail, "    m: got %.9g, expected %.9g\n", (double)g.p.m, ref->m);
}

// Every op on the input, ours then CUB's, each checked and timed (CUB's
// empty-input results are other sentinels: its lines need n > 0).
static void run_ops(const Options *opt, const Input *in, const Ref *ref)
{
    static const char *const name[OP_NAIVE] = {"max", "min", "argmax", "welford", "softmax"};
    static const char *const cub_name[OP_NAIVE] = {"cub_max", "cub_min", "cub_argmax", "cub_welford", "cub_softmax"};
    for (int op = 0; op < OP_NAIVE; op++) {
        Job ours = {op, 0, in->d_in, in->n}, lib = {op, 1, in->d_in, in->n};
        run_job(opt, name[op], &ours, ref, 1);
        if (in->n > 0 && cub_has(op)) run_job(opt, cub_name[op], &lib, ref, 1);
    }
}

// Planted tests on a copy of the input in d_x: for max, min and softmax, a NaN
// at the first, middle and last element in turn (each must give NaN, for
// softmax in s; the first and last reach the head and tail paths only where
// --offset and n make a head and a tail: at the defaults all three are in the
// body); for argmax, copies of a value above the maximum at several places:
// where n is large enough, the smallest sits in the grid's LAST thread's first
// float4 while thread 0 holds a larger one (else n/2 or n - 1 is the smallest):
// the answer must be the smallest planted index.
static void planted_tests(const Options *opt, const Input *in, float *d_x, const Ref *ref)
{
    size_t n = in->n, bytes = n * sizeof(float);
    const float nan = NAN;
    static const int nan_op[3] = {OP_MAX, OP_MIN, OP_SOFTMAX};
    static const char *const nan_name[3] = {"max_nan", "min_nan", "softmax_nan"};
    for (int o = 0; o < 3; o++) {
        int op = nan_op[o];
        Report r = new_report(opt, nan_name[o], n, (double)bytes);
        size_t pos[3] = {0, n / 2, n - 1};
        Ref want = *ref;
        want.max = want.min = want.s = NAN;
        r.pass = 1;
        for (int k = 0; k < 3 && r.pass; k++) {
            CUDA_CHECK(cudaMemcpy(d_x, in->d_in, bytes, cudaMemcpyDeviceToDevice));
            CUDA_CHECK(cudaMemcpy(d_x + pos[k], &nan, sizeof nan, cudaMemcpyHostToDevice));
            Job j = {op, 0, d_x, n};
            check_state(op, run_once(&j), &want, NULL, &r);
        }
        report_result(opt, &r);
    }
    size_t threads = (size_t)grid_for(OP_ARGMAX, n) * g_block;
    size_t head = ((16 - ((uintptr_t)d_x & 15)) & 15) / 4;
    size_t pos[5] = {head + 4 * threads, n - 1, n / 2, head + 4 * (threads - 1), head + 4 * threads + 1};
    float big = (float)ref->max + 1.0f; // above every element (|max| <= 15)
    Ref want = *ref;
    want.argmax_v = big;
    want.argmax_i = NO_INDEX;
    CUDA_CHECK(cudaMemcpy(d_x, in->d_in, bytes, cudaMemcpyDeviceToDevice));
    for (int k = 0; k < 5; k++) {
        if (pos[k] >= n) continue;
        CUDA_CHECK(cudaMemcpy(d_x + pos[k], &big, sizeof big, cudaMemcpyHostToDevice));
        if ((long long)pos[k] < want.argmax_i) want.argmax_i = (long long)pos[k];
    }
    Job j = {OP_ARGMAX, 0, d_x, n};
    run_job(opt, "argmax_ties", &j, &want, 0);
}

// Human mode: Welford against the naive E[x^2] - E[x]^2, on x and on x + SHIFT.
static void variance_table(size_t n, const float *d_in, float *d_shifted, const Ref *ref, const Ref *ref_shifted)
{
    printf("\nvariance: Welford merge vs naive E[x^2]-E[x]^2 (reference: two passes in double)\n");
    printf("%-8s %-12s %-16s %-16s %-10s\n", "data", "method", "mean", "variance", "rel. error");
    for (int d = 0; d < 2; d++) {
        const Ref *rf = d ? ref_shifted : ref;
        for (int k = 0; k < 3; k++) {
            if (k == 2 && !cub_has(OP_MEANVAR)) continue; // this CUB has no TransformReduce
            Job j = {k == 1 ? OP_NAIVE : OP_MEANVAR, k == 2, d ? d_shifted : d_in, n};
            State t = run_once(&j);
            double mean = t.w.n > 0 ? t.w.mean : 0.0, var = finish_var(t);
            if (j.op == OP_NAIVE) {
                mean = (double)(t.sx / (float)n);                           // all in float, as a naive
                var = (double)(t.sxx / (float)n - (float)mean * (float)mean); // kernel would do it
            }
            printf("%-8s %-12s %-16.9g %-16.9g %-10.2g\n", d ? "x+1000" : "x", k == 0 ? "welford" : k == 1 ? "naive" : "cub_welford",
                   mean, var, rf->var > 0 ? fabs(var - rf->var) / rf->var : fabs(var));
        }
    }
}

// Whole inputs of -inf, of NaN, and the input shifted by SHIFT (h: the input
// on the host, overwritten). All -inf (masked logits): softmax's terms are all
// exp(-inf) = 0, so the empty pair (-inf, 0), and no -inf - -inf = NaN may
// appear; argmax is index 0, a real index (the absorb must set one even where
// no value beats the start). All NaN: argmax (NaN, 0), since NaN ranks below
// every number; then with -inf at n/2 and n - 1, (-inf, n/2). Shifted: Welford
// within its bounds (check_state), and in human mode the variance table.
static void edge_tests(const Options *opt, const Input *in, float *d_x, float *h, const Ref *ref)
{
    size_t n = in->n;
    Ref want = *ref; // n = 0: argmax stays (NaN, no index), the identity
    want.m = -INFINITY;
    want.s = want.amax = 0.0;
    if (n > 0) { want.argmax_v = -INFINITY; want.argmax_i = 0; }
    for (size_t i = 0; i < n; i++) h[i] = -INFINITY;
    if (n) CUDA_CHECK(cudaMemcpy(d_x, h, n * sizeof(float), cudaMemcpyHostToDevice));
    Job softmax = {OP_SOFTMAX, 0, d_x, n}, argmax = {OP_ARGMAX, 0, d_x, n};
    run_job(opt, "softmax_ninf", &softmax, &want, 0);
    run_job(opt, "argmax_ninf", &argmax, &want, 0);

    Report r = new_report(opt, "argmax_nan", n, (double)n * sizeof(float));
    CUDA_CHECK(cudaMemset(d_x, 0xFF, n * sizeof(float))); // 0xFFFFFFFF is a NaN
    if (n > 0) want.argmax_v = NAN;
    State g = run_once(&argmax);
    check_state(OP_ARGMAX, g, &want, NULL, &r);
    if (n > 0 && r.pass) {
        const float ninf = -INFINITY;
        CUDA_CHECK(cudaMemcpy(d_x + n - 1, &ninf, sizeof ninf, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(d_x + n / 2, &ninf, sizeof ninf, cudaMemcpyHostToDevice));
        want.argmax_v = -INFINITY;
        want.argmax_i = (long long)(n / 2);
        g = run_once(&argmax);
        check_state(OP_ARGMAX, g, &want, NULL, &r);
    }
    report_result(opt, &r);
    if (!r.pass) fprintf(opt->csv ? stderr : stdout, "    argmax index: got %lld, expected %lld\n", g.i, want.argmax_i);

    if (n) CUDA_CHECK(cudaMemcpy(h, in->d_in, n * sizeof(float), cudaMemcpyDeviceToHost)); // the input again
    for (size_t i = 0; i < n; i++) h[i] += SHIFT; // the same data with a large mean (rounded to float)
    Ref ref_shifted = host_ref(h, n);
    if (n) CUDA_CHECK(cudaMemcpy(d_x, h, n * sizeof(float), cudaMemcpyHostToDevice));
    Job shifted = {OP_MEANVAR, 0, d_x, n};
    run_job(opt, "welford_shift", &shifted, &ref_shifted, 0);
    if (!opt->csv && !opt->check_only && n > 0) variance_table(n, in->d_in, d_x, ref, &ref_shifted);
}

#endif
