/*
 * harness.h -- everything a lesson needs that is not the lesson itself.
 *
 * Error checks, the command-line options every binary takes, the seeded input
 * and its exact reference, NaN-poisoned output, timing (events, warm-up, L2
 * flushed, median/min/max) and the report line. No kernels live here: kernels
 * are what the lessons teach.
 *
 * The host half is plain C11 (tests/test_harness.c compiles it with gcc); the
 * GPU half is compiled only under nvcc (__CUDACC__).
 *
 * A lesson is, in short:
 *
 *     static int run(Options opt)                      // one set of options
 *     {
 *         Input in = make_input(&opt);                 // device input + exact reference
 *         run_variant(&opt, &in, "tree", reduce_gpu);  // check, time, report
 *         free_input(&in);
 *         return 0;
 *     }
 *     int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
 *
 * run_lesson() parses the options (exit 2 on bad input), calls run once for
 * each combination of the listed values (-n 31,33 -d ints,uniform: four runs)
 * and returns 1 if any check failed, else 0.
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif

// ---- constants -------------------------------------------------------------

#define DEFAULT_N ((size_t)1 << 26)
#define DEFAULT_SEED 20070101ULL
#define MAX_REPS 100
#define MIN_REPS 3
#define ADAPTIVE_SECONDS 1.0
#define MAX_OFFSET 4096
// NaN guard floats on each side of the input: a kernel that reads outside
// [d_in, d_in + n) picks one up and its sum turns into NaN, which fails.
#define GUARD_FLOATS 64
// Most items in one option's comma-separated list.
#define MAX_LIST 64

enum { DIST_INTS = 0, DIST_UNIFORM = 1 };

// How a lesson takes the -b option.
enum {
    BLOCK_NONE = 0,    // one thread, no block size to choose (lesson 01)
    BLOCK_RUNTIME = 1, // any power of two in [32, 1024], chosen at run time
    BLOCK_FIXED = 2    // a compile-time constant: -b must equal it
};

typedef struct {
    const char *lesson;      // e.g. "03_interleaved_divergent"
    int block_kind;          // BLOCK_NONE, BLOCK_RUNTIME or BLOCK_FIXED
    int default_block;       // threads per block when -b is not given
    const char *block_name;  // for BLOCK_FIXED: the #define's name, e.g. "BLOCK_SIZE"
} LessonInfo;

typedef struct {
    size_t n;           // -n: elements
    int block;          // -b: threads per block (the lesson's default if not given)
    int reps;           // -r: timed repetitions, 0 = adaptive
    uint64_t seed;      // -s
    int dist;           // -d: DIST_INTS or DIST_UNIFORM
    size_t offset;      // --offset: floats past an aligned start
    int csv;            // --csv: CSV lines only
    int csv_header;     // --csv-header: also print the CSV header first
    int check_only;     // --check: one checked run, no timing
    int have_n;         // -n was given (lessons with several shapes use it)
    int have_shape;     // -m ROWS -k COLS were given (row lessons only)
    size_t rows, cols;  // that shape
    const char *lesson; // copied from LessonInfo
    // -n, -s, -d, --offset and -b take comma-separated lists (-n 31,33 -d
    // ints,uniform). run_lesson() runs the lesson once for every combination,
    // with the scalars above set to it; parsing sets them to the first items.
    int n_count, seed_count, dist_count, offset_count, block_count;
    size_t n_list[MAX_LIST];
    uint64_t seed_list[MAX_LIST];
    int dist_list[MAX_LIST];
    size_t offset_list[MAX_LIST];
    int block_list[MAX_LIST];
} Options;

// -m/-k are taken only by lessons that reduce the rows of a matrix; they call
// run_lesson_shape(), which sets this. Everywhere else -m/-k are bad input.
static int g_takes_shape = 0;
#define MAX_SHAPE_COUNT ((uint64_t)1 << 40)

// ---- small helpers (host, C11) ---------------------------------------------

static inline void harness_usage(FILE *f, const LessonInfo *info)
{
    fprintf(f,
            "usage: %s [options]\n"
            "  -n N             elements (e.g. 1048576, 1e6, 2^20, 2^20+3); default 2^26; 0 allowed\n"
            "  -b B             threads per block (%s)\n"
            "  -r R             timed repetitions (default: adaptive, %d..%d, about %.0f s of timing)\n"
            "  -s SEED          input seed (default %llu)\n"
            "  -d ints|uniform  input: odd integers in [-15,15] (exact sum) or uniform in [-1,1)\n"
            "  --offset K       start the input K floats past an aligned address (0..%d)\n"
            "  --csv            print CSV lines only; --csv-header adds the header line\n"
            "  --check          one checked run, no timing\n"
            "%s"
            "  -n, -s, -d, --offset and -b take comma-separated lists (-n 31,2^20+3 -d ints,uniform):\n"
            "                   the lesson runs once for every combination\n"
            "  -h               this help\n",
            info->lesson,
            info->block_kind == BLOCK_NONE    ? "not taken: this lesson runs one thread"
            : info->block_kind == BLOCK_FIXED ? "fixed at compile time"
                                              : "power of two, 32..1024",
            MIN_REPS, MAX_REPS, ADAPTIVE_SECONDS, (unsigned long long)DEFAULT_SEED, MAX_OFFSET,
            g_takes_shape ? "  -m ROWS -k COLS  one rows x cols matrix (default: the lesson's listed shapes;\n"
                            "                   -n N alone: N elements in rows of a few widths)\n"
                          : "");
}

// Parses an unsigned decimal integer that fills the whole of [s, end).
// Returns 0 on success.
static inline int parse_uint_span(const char *s, const char *end, uint64_t *out)
{
    uint64_t v = 0;
    if (s == end) return -1;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9') return -1;
        if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *out = v;
    return 0;
}

// A count: 1048576, 1e6, 1.5e6 (must be whole), 2^20, each optionally
// followed by +K or -K (2^20+3, 2^31-1). No sign, no spaces, no junk.
// Returns 0 on success, -1 if the text is not such a count, -2 if too large.
static inline int parse_count(const char *s, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9') return -1;
    const char *end = s + strlen(s);
    // split off a trailing +K / -K (the first '+' or '-' not right after an 'e')
    const char *adj = NULL;
    for (const char *p = s + 1; p < end; p++)
        if ((*p == '+' || *p == '-') && p[-1] != 'e' && p[-1] != 'E') { adj = p; break; }
    const char *term_end = adj ? adj : end;
    uint64_t term = 0;
    const char *caret = (const char *)memchr(s, '^', (size_t)(term_end - s));
    const char *e = NULL;
    for (const char *p = s; p < term_end; p++)
        if (*p == 'e' || *p == 'E' || *p == '.') { e = p; break; }
    if (caret) {
        uint64_t base, exp;
        if (parse_uint_span(s, caret, &base) || parse_uint_span(caret + 1, term_end, &exp)) return -1;
        term = 1;
        for (uint64_t i = 0; i < exp; i++) {
            if (base != 0 && term > UINT64_MAX / base) return -2;
            term *= base;
        }
    } else if (e) {
        char buf[64];
        size_t len = (size_t)(term_end - s);
        if (len >= sizeof buf) return -1;
        memcpy(buf, s, len);
        buf[len] = '\0';
        for (size_t i = 0; i < len; i++) // digits, one '.', one exponent: nothing else
            if (!((buf[i] >= '0' && buf[i] <= '9') || buf[i] == '.' || buf[i] == 'e' || buf[i] == 'E' ||
                  ((buf[i] == '+' || buf[i] == '-') && i > 0 && (buf[i - 1] == 'e' || buf[i - 1] == 'E'))))
                return -1;
        char *stop = NULL;
        errno = 0;
        double d = strtod(buf, &stop);
        if (stop != buf + len || errno == ERANGE) return errno == ERANGE ? -2 : -1;
        if (d >= 1.8e19) return -2;
        if (d != floor(d)) return -1; // 1.5e0 is not a count
        term = (uint64_t)d;
    } else {
        for (const char *p = s; p < term_end; p++)
            if (*p < '0' || *p > '9') return -1;
        if (parse_uint_span(s, term_end, &term)) return -2; // all digits: it overflowed
    }
    if (adj) {
        uint64_t k;
        if (parse_uint_span(adj + 1, end, &k)) return -1;
        if (*adj == '+') {
            if (term > UINT64_MAX - k) return -2;
            term += k;
        } else {
            if (k > term) return -1; // would be negative
            term -= k;
        }
    }
    *out = term;
    return 0;
}

// One item of -n, -b, -s, -d or --offset (c names the option), appended to
// its list in *opt. Returns 0, or 2 with the reason in err.
static inline int parse_option_item(int c, const char *item, Options *opt, const LessonInfo *info, char *err,
                                    size_t errlen)
{
    uint64_t v = 0;
    int rc;
    switch (c) {
    case 'n':
        rc = parse_count(item, &v);
        if (rc == -2 || (rc == 0 && v > (uint64_t)(SIZE_MAX / sizeof(float) - 2 * GUARD_FLOATS - MAX_OFFSET))) {
            snprintf(err, errlen, "-n %s: too large", item);
            return 2;
        }
        if (rc) {
            snprintf(err, errlen, "-n %s: not a non-negative count of elements (e.g. 1048576, 1e6, 2^20, 2^20+3)",
                     item);
            return 2;
        }
        opt->n_list[opt->n_count++] = (size_t)v;
        opt->have_n = 1;
        return 0;
    case 'b':
        if (parse_count(item, &v) || v == 0 || v > 1024) {
            snprintf(err, errlen, "-b %s: threads per block must be a number in 1..1024", item);
            return 2;
        }
        if (info->block_kind == BLOCK_NONE) {
            snprintf(err, errlen, "-b %s: this lesson runs one thread; it takes no block size", item);
            return 2;
        }
        if (info->block_kind == BLOCK_FIXED && (int)v != info->default_block) {
            snprintf(err, errlen, "-b %s: the block size is the compile-time constant %s = %d (edit it and rebuild)",
                     item, info->block_name ? info->block_name : "BLOCK_SIZE", info->default_block);
            return 2;
        }
        if (info->block_kind == BLOCK_RUNTIME && (v < 32 || (v & (v - 1)) != 0)) {
            snprintf(err, errlen, "-b %s: threads per block must be a power of two in 32..1024", item);
            return 2;
        }
        opt->block_list[opt->block_count++] = (int)v;
        return 0;
    case 's': {
        char *stop = NULL;
        errno = 0;
        unsigned long long seed = (item[0] >= '0' && item[0] <= '9') ? strtoull(item, &stop, 0) : 0;
        if (stop == NULL || *stop != '\0' || errno == ERANGE) {
            snprintf(err, errlen, "-s %s: the seed must be a non-negative integer", item);
            return 2;
        }
        opt->seed_list[opt->seed_count++] = (uint64_t)seed;
        return 0;
    }
    case 'd':
        if (strcmp(item, "ints") != 0 && strcmp(item, "uniform") != 0) {
            snprintf(err, errlen, "-d %s: the distribution must be ints or uniform", item);
            return 2;
        }
        opt->dist_list[opt->dist_count++] = strcmp(item, "ints") == 0 ? DIST_INTS : DIST_UNIFORM;
        return 0;
    default: // 'o'
        if (parse_count(item, &v) || v > MAX_OFFSET) {
            snprintf(err, errlen, "--offset %s: must be a number of floats in 0..%d", item, MAX_OFFSET);
            return 2;
        }
        opt->offset_list[opt->offset_count++] = (size_t)v;
        return 0;
    }
}

// A comma-separated value of -n, -b, -s, -d or --offset: replaces that list.
static inline int parse_option_list(int c, const char *name, const char *value, Options *opt, const LessonInfo *info,
                                    char *err, size_t errlen)
{
    int *count = c == 'n' ? &opt->n_count : c == 'b' ? &opt->block_count : c == 's' ? &opt->seed_count
                 : c == 'd' ? &opt->dist_count : &opt->offset_count;
    *count = 0;
    for (const char *p = value;; p++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[64];
        if (len == 0 || len >= sizeof item) {
            snprintf(err, errlen, "%s %s: %s", name, value, len ? "an item is too long" : "an empty item in the list");
            return 2;
        }
        if (*count == MAX_LIST) {
            snprintf(err, errlen, "%s %s: more than %d items", name, value, MAX_LIST);
            return 2;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (parse_option_item(c, item, opt, info, err, errlen)) return 2;
        if (!comma) return 0;
        p = comma;
    }
}

// Parses argv into *opt. Returns 0 when the run should go on, 1 when -h was
// given (usage printed), 2 on bad input with the reason in err.
static inline int parse_options_r(int argc, char **argv, Options *opt, const LessonInfo *info, char *err,
                           size_t errlen)
{
    static const struct option longopts[] = {
        {"offset", required_argument, 0, 'o'}, {"csv", no_argument, 0, 'c'},
        {"csv-header", no_argument, 0, 'H'},   {"check", no_argument, 0, 'K'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    memset(opt, 0, sizeof *opt);
    opt->n_list[0] = DEFAULT_N;
    opt->block_list[0] = info->default_block;
    opt->seed_list[0] = DEFAULT_SEED;
    opt->dist_list[0] = DIST_INTS;
    opt->offset_list[0] = 0;
    opt->n_count = opt->seed_count = opt->dist_count = opt->offset_count = opt->block_count = 1;
    opt->lesson = info->lesson;
    err[0] = '\0';
    optind = 0; // glibc: 0 starts a fresh scan (the unit tests parse many times)
    opterr = 0; // we print our own one-line messages
    int c, got_m = 0, got_k = 0;
    while ((c = getopt_long(argc, argv, ":n:b:r:s:d:m:k:h", longopts, NULL)) != -1) {
        uint64_t v = 0;
        switch (c) {
        case 'n':
        case 'b':
        case 's':
        case 'd':
        case 'o': {
            char name[3] = {'-', (char)c, '\0'};
            if (parse_option_list(c, c == 'o' ? "--offset" : name, optarg, opt, info, err, errlen)) return 2;
            break;
        }
        case 'm':
        case 'k':
            if (!g_takes_shape) {
                snprintf(err, errlen, "-%c %s: this lesson takes no matrix shape (-h lists the options)", c, optarg);
                return 2;
            }
            if (parse_count(optarg, &v) || v > MAX_SHAPE_COUNT) {
                snprintf(err, errlen, "-%c %s: not a count of %s (e.g. 4096, 2^20)", c, optarg, c == 'm' ? "rows" : "columns");
                return 2;
            }
            if (c == 'm') { opt->rows = (size_t)v; got_m = 1; }
            else { opt->cols = (size_t)v; got_k = 1; }
            break;
        case 'r':
            if (parse_count(optarg, &v) || v < 1 || v > 100000) {
                snprintf(err, errlen, "-r %s: repetitions must be a number in 1..100000", optarg);
                return 2;
            }
            opt->reps = (int)v;
            break;
        case 'c': opt->csv = 1; break;
        case 'H': opt->csv = 1; opt->csv_header = 1; break;
        case 'K': opt->check_only = 1; break;
        case 'h': return 1;
        case ':':
            snprintf(err, errlen, "option %s needs a value", argv[optind - 1]);
            return 2;
        default:
            snprintf(err, errlen, "unknown option %s (-h lists the options)", argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s' (-h lists the options)", argv[optind]);
        return 2;
    }
    if (got_m != got_k) {
        snprintf(err, errlen, "-m ROWS and -k COLS go together");
        return 2;
    }
    if (got_m && opt->rows && opt->cols > (SIZE_MAX / sizeof(float) - ((size_t)1 << 20)) / opt->rows) {
        snprintf(err, errlen, "-m %zu -k %zu: too large", opt->rows, opt->cols);
        return 2;
    }
    opt->have_shape = got_m;
    opt->n = opt->n_list[0];
    opt->block = opt->block_list[0];
    opt->seed = opt->seed_list[0];
    opt->dist = opt->dist_list[0];
    opt->offset = opt->offset_list[0];
    return 0;
}

// The same, for run_lesson(): prints usage or the one-line error and
// exits. takes_shape: whether -m ROWS -k COLS are this lesson's options.
static inline void parse_options_or_exit(int argc, char **argv, Options *opt, const LessonInfo *info, int takes_shape)
{
    char err[512];
    g_takes_shape = takes_shape;
    int rc = parse_options_r(argc, argv, opt, info, err, sizeof err);
    if (rc == 1) {
        harness_usage(stdout, info);
        exit(0);
    }
    if (rc == 2) {
        fprintf(stderr, "%s: %s\n", info->lesson, err);
        exit(2);
    }
}

// ---- input and its exact reference (host, C11) ------------------------------
//
// Element i comes from a counter-based hash of (seed, i), so any slice of the
// input can be made on its own, in any order, with no state to carry.
//   ints:    odd integers -15, -13, ..., 15 (4 bits of hash each). Every
//            partial sum of such data stays an integer far below 2^24, so
//            every summation order gives the same, exact float.
//   uniform: k / 2^23 with k a 24-bit integer in [-2^23, 2^23): uniform
//            floats in [-1, 1) on a grid of 2^-23. Float sums of these round.
// Both are integers times a fixed scale, so the exact sum is an int64 sum
// of the integers: the reference is exact, not merely accurate.

static inline uint64_t mix64(uint64_t x) // splitmix64's finaliser: a good 64-bit hash
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

// Integer value of element i (before scaling): ints -15..15 odd, uniform -2^23..2^23-1.
static inline int32_t input_int(uint64_t seed, int dist, size_t i)
{
    uint64_t key = mix64(seed ^ 0x5EEDULL) + (dist == DIST_INTS ? i / 16 : i / 2);
    uint64_t h = mix64(key);
    if (dist == DIST_INTS) return 2 * (int32_t)((h >> (4 * (i % 16))) & 15) - 15;
    return (int32_t)((h >> (32 * (i % 2))) & 0xFFFFFF) - (1 << 23);
}

static inline double input_scale(int dist) { return dist == DIST_INTS ? 1.0 : 1.0 / 8388608.0; }

// Fills h[0..count) with elements first..first+count-1 and adds their integer
// values and absolute values to *sum and *sum_abs (exact, int64).
static inline void fill_input(float *h, size_t first, size_t count, uint64_t seed, int dist, int64_t *sum,
                       int64_t *sum_abs)
{
    const float scale = (float)input_scale(dist);
    int64_t s = 0, a = 0;
    uint64_t base = mix64(seed ^ 0x5EEDULL);
    size_t i = first, end = first + count;
    if (dist == DIST_INTS) {
        while (i < end && i % 16) { int32_t v = input_int(seed, dist, i); h[i - first] = (float)v; s += v; a += v < 0 ? -v : v; i++; }
        for (; i + 16 <= end; i += 16) { // fast path: 16 elements per hash
            uint64_t hv = mix64(base + i / 16);
            for (int j = 0; j < 16; j++) {
                int32_t v = 2 * (int32_t)((hv >> (4 * j)) & 15) - 15;
                h[i + j - first] = (float)v;
                s += v;
                a += v < 0 ? -v : v;
            }
        }
    } else {
        for (; i + 2 <= end && i % 2 == 0; i += 2) { // fast path: 2 elements per hash
            uint64_t hv = mix64(base + i / 2);
            int32_t v0 = (int32_t)(hv & 0xFFFFFF) - (1 << 23), v1 = (int32_t)((hv >> 32) & 0xFFFFFF) - (1 << 23);
            h[i - first] = (float)v0 * scale;
            h[i + 1 - first] = (float)v1 * scale;
            s += (int64_t)v0 + v1;
            a += (v0 < 0 ? -(int64_t)v0 : v0) + (v1 < 0 ? -(int64_t)v1 : v1);
        }
    }
    for (; i < end; i++) { // head or tail that the fast paths did not take
        int32_t v = input_int(seed, dist, i);
        h[i - first] = (float)v * scale;
        s += v;
        a += v < 0 ? -(int64_t)v : v;
    }
    *sum += s;
    *sum_abs += a;
}

// Compensated (Neumaier) fp64 sum: the reference for data that is not ours.
static inline double neumaier_sum(const float *x, size_t n)
{
    double s = 0.0, c = 0.0;
    for (size_t i = 0; i < n; i++) {
        double v = x[i], t = s + v;
        c += fabs(s) >= fabs(v) ? (s - t) + v : (v - t) + s;
        s = t;
    }
    return s + c;
}

// The correctness rule of CONTRACT.md. tol < 0: the float must EQUAL the
// exact value (ints). Otherwise |got - expected| <= tol, where the harness
// sets tol = 1e-5 * sum|x| for uniform input. NaN never passes.
static inline int check_result(float got, double expected, double tol)
{
    if (isnan(got)) return 0;
    if (tol < 0) return (double)got == expected;
    return fabs((double)got - expected) <= tol;
}

// Median, min and max of t[0..k) (t is sorted in place).
static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static inline void median_min_max(double *t, int k, double *med, double *mn, double *mx)
{
    if (k <= 0) { *med = *mn = *mx = 0.0; return; }
    qsort(t, (size_t)k, sizeof *t, cmp_double);
    *med = k % 2 ? t[k / 2] : 0.5 * (t[k / 2 - 1] + t[k / 2]);
    *mn = t[0];
    *mx = t[k - 1];
}

// ---- report (host, C11) ----------------------------------------------------

#define CSV_HEADER "lesson,variant,gpu,n,bytes,reps,median_us,min_us,max_us,gbps,pct_peak,result,expected,abs_err,status"

typedef struct {
    const char *lesson, *variant, *gpu;
    size_t n;
    double bytes;   // bytes the reduction must read (n * 4 for a sum)
    int reps;       // 0 for a check-only run
    double median_us, min_us, max_us, peak_gbs;
    float result;
    double expected, tol; // tol < 0: exact check
    int pass;
} Report;

// One CSV line (no newline) into buf. Commas in names are replaced.
static inline void format_csv(char *buf, size_t len, const Report *r)
{
    char gpu[256];
    snprintf(gpu, sizeof gpu, "%s", r->gpu);
    for (char *p = gpu; *p; p++)
        if (*p == ',') *p = ' ';
    double gbps = r->reps && r->median_us > 0 ? r->bytes / (r->median_us * 1e3) : 0.0;
    double pct = r->peak_gbs > 0 ? 100.0 * gbps / r->peak_gbs : 0.0;
    snprintf(buf, len, "%s,%s,%s,%zu,%.0f,%d,%.3f,%.3f,%.3f,%.1f,%.1f,%.9g,%.17g,%.3g,%s", r->lesson,
             r->variant, gpu, r->n, r->bytes, r->reps, r->median_us, r->min_us, r->max_us, gbps, pct,
             (double)r->result, r->expected, fabs((double)r->result - r->expected), r->pass ? "PASS" : "FAIL");
}

// The human line: lesson, variant, n, time, bandwidth, % of peak, verdict.
static inline void format_human(char *buf, size_t len, const Report *r)
{
    char timing[160], verdict[200];
    if (r->reps) {
        double gbps = r->median_us > 0 ? r->bytes / (r->median_us * 1e3) : 0.0;
        snprintf(timing, sizeof timing, "median %9.1f us (min %.1f, max %.1f, %d reps)  %7.1f GB/s  %3.0f%% of %.0f",
                 r->median_us, r->min_us, r->max_us, r->reps, gbps,
                 r->peak_gbs > 0 ? 100.0 * gbps / r->peak_gbs : 0.0, r->peak_gbs);
    } else {
        snprintf(timing, sizeof timing, "check only");
    }
    if (r->pass && r->tol < 0)
        snprintf(verdict, sizeof verdict, "PASS  (exact)");
    else if (r->pass)
        snprintf(verdict, sizeof verdict, "PASS  (err %.2g, tol %.2g)", fabs((double)r->result - r->expected), r->tol);
    else
        snprintf(verdict, sizeof verdict, "FAIL  got %.9g expected %.17g (diff %.3g%s)", (double)r->result,
                 r->expected, fabs((double)r->result - r->expected), r->tol < 0 ? ", must be exact" : "");
    snprintf(buf, len, "%-26s %-9s n=%-11zu %s  %s", r->lesson, r->variant, r->n, timing, verdict);
}

// ---- GPU half (nvcc only) --------------------------------------------------
#ifdef __CUDACC__

// Every CUDA call is checked: file:line, the call's text, the error string.
#define CUDA_CHECK(call)                                                                          \
    do {                                                                                          \
        cudaError_t err_ = (call);                                                                \
        if (err_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)
// Right after each launch: catches a bad launch configuration at once.
#define CUDA_CHECK_LAST() CUDA_CHECK(cudaGetLastError())

typedef struct {
    int id;
    char name[256];
    int sm_count, cc_major, cc_minor;
    size_t l2_bytes;
    double peak_gbs; // nominal: 2 x memory clock x bus width / 8
} Device;

static Device g_dev;
static int g_failures = 0;   // checks that failed so far (exit code 1 if any)
static float *g_out = NULL;  // the one-float result the lessons write
static void *g_flush = NULL; // 2 x L2 bytes, written between repetitions

// Picks device 0, reads what the report needs. No GPU: "no CUDA device", exit 1.
static inline void init_device(void)
{
    static int done = 0;
    if (done) {
        CUDA_CHECK(cudaSetDevice(0));
        return;
    }
    done = 1;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        fprintf(stderr, "no CUDA device\n");
        exit(1);
    }
    CUDA_CHECK(cudaSetDevice(0));
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    snprintf(g_dev.name, sizeof g_dev.name, "%s", prop.name);
    int mem_khz = 0, bus_bits = 0, l2 = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&g_dev.sm_count, cudaDevAttrMultiProcessorCount, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&g_dev.cc_major, cudaDevAttrComputeCapabilityMajor, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&g_dev.cc_minor, cudaDevAttrComputeCapabilityMinor, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    g_dev.l2_bytes = (size_t)l2;
    g_dev.peak_gbs = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;
}

// Lessons for Hopper only call this first: on an older GPU, say why and exit 0.
static inline void require_sm90(void)
{
    if (g_dev.cc_major < 9) {
        printf("SKIP: needs sm_90 (this GPU, %s, is sm_%d%d)\n", g_dev.name, g_dev.cc_major, g_dev.cc_minor);
        exit(0);
    }
}

// Bad input that only the device can judge (n too large): one line, exit 2.
static inline void need_device_bytes(const Options *opt, size_t bytes)
{
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    size_t reserve = 2 * g_dev.l2_bytes + ((size_t)64 << 20); // L2 flush buffer + slack
    if (bytes > free_b || free_b - bytes < reserve) {
        fprintf(stderr, "%s: -n %zu needs %.2f GiB of device memory; %s has %.2f GiB free\n", opt->lesson,
                opt->n, (double)(bytes + reserve) / (1 << 30), g_dev.name, (double)free_b / (1 << 30));
        exit(2);
    }
}

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
    in.tol = opt->dist == DIST_INTS ? -1.0 : 1e-5 * in.sum_abs;

    if (!g_out) CUDA_CHECK(cudaMalloc((void **)&g_out, sizeof(float)));
    if (!g_flush) CUDA_CHECK(cudaMalloc(&g_flush, 2 * g_dev.l2_bytes));
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

// Writes 2 x L2 bytes so that no repetition finds the input in L2.
static inline void flush_l2(int rep) { CUDA_CHECK(cudaMemsetAsync(g_flush, rep & 0xFF, 2 * g_dev.l2_bytes, 0)); }

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

// Times any piece of GPU work: warm-up excluded (the caller runs and checks
// it first), then repetitions of  flush L2, prepare (poison), event, work,
// event. Adaptive count (MIN_REPS..MAX_REPS, about ADAPTIVE_SECONDS of timed
// work) unless -r. prepare may be NULL. Fills r->reps, median_us, min_us, max_us.
typedef void (*work_fn)(void *arg);
static inline void time_work(const Options *opt, work_fn prepare, work_fn work, void *arg, Report *r)
{
    int cap = opt->reps ? opt->reps : MAX_REPS;
    double *t = (double *)malloc(sizeof(double) * (size_t)cap);
    if (!t) { fprintf(stderr, "out of host memory\n"); exit(1); }
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    double total_ms = 0.0;
    int k = 0;
    while (k < cap) {
        flush_l2(k);
        if (prepare) prepare(arg);
        CUDA_CHECK(cudaEventRecord(start, 0));
        work(arg);
        CUDA_CHECK(cudaEventRecord(stop, 0));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        t[k++] = ms * 1e3;
        total_ms += ms;
        if (!opt->reps && k >= MIN_REPS && total_ms >= ADAPTIVE_SECONDS * 1e3) break;
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    r->reps = k;
    median_min_max(t, k, &r->median_us, &r->min_us, &r->max_us);
    free(t);
}

// time_work for work spread over several GPUs: devs[d] belongs to device d.
// Both events live on device 0 (an elapsed time needs them on one device); the
// other devices' streams wait for `start` (fork) and device 0's stream waits
// for each one's `done` (join), so the interval runs from the start on device
// 0 until the LAST device has finished. Flush and prepare stay outside it.
typedef struct {
    cudaStream_t stream; // the device's work goes here
    cudaEvent_t done;    // the join point (may be created with cudaEventDisableTiming)
    void *flush;         // 2 x that device's L2, written between repetitions
    size_t flush_bytes;
} TimedDevice;

static inline void sync_devices(int ndev) // waits for every device; leaves device 0 current
{
    for (int d = 0; d < ndev; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    CUDA_CHECK(cudaSetDevice(0));
}

static inline void time_work_devices(const Options *opt, const TimedDevice *devs, int ndev, work_fn prepare, work_fn work,
                                     void *arg, Report *r)
{
    int cap = opt->reps ? opt->reps : MAX_REPS, k = 0;
    double total_ms = 0.0, *t = (double *)malloc(sizeof(double) * (size_t)cap);
    if (!t) { fprintf(stderr, "out of host memory\n"); exit(1); }
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    while (k < cap) {
        for (int d = 0; d < ndev; d++) {
            CUDA_CHECK(cudaSetDevice(d));
            CUDA_CHECK(cudaMemsetAsync(devs[d].flush, k & 0xFF, devs[d].flush_bytes, devs[d].stream));
        }
        if (prepare) prepare(arg);
        sync_devices(ndev); // every device idle: flush and poison stay outside the interval
        CUDA_CHECK(cudaEventRecord(start, devs[0].stream));
        for (int d = 1; d < ndev; d++) { // fork: no device starts before `start`
            CUDA_CHECK(cudaSetDevice(d));
            CUDA_CHECK(cudaStreamWaitEvent(devs[d].stream, start, 0));
        }
        CUDA_CHECK(cudaSetDevice(0));
        work(arg); // must return with device 0 current
        for (int d = 1; d < ndev; d++) { // join: `stop` comes after every device's work
            CUDA_CHECK(cudaSetDevice(d));
            CUDA_CHECK(cudaEventRecord(devs[d].done, devs[d].stream));
            CUDA_CHECK(cudaSetDevice(0));
            CUDA_CHECK(cudaStreamWaitEvent(devs[0].stream, devs[d].done, 0));
        }
        CUDA_CHECK(cudaEventRecord(stop, devs[0].stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        t[k++] = ms * 1e3;
        total_ms += ms;
        if (!opt->reps && k >= MIN_REPS && total_ms >= ADAPTIVE_SECONDS * 1e3) break;
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    r->reps = k;
    median_min_max(t, k, &r->median_us, &r->min_us, &r->max_us);
    free(t);
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
    if (!h) { fprintf(stderr, "out of host memory for a copy of the input\n"); exit(1); }
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

#endif // __CUDACC__
#endif // HARNESS_H
