// check.h -- the seeded input, its exact reference, the tolerance rule, median, report lines (host, C11).
//
// Nothing here touches the GPU: tests/test_harness.c checks all of it with
// gcc. harness.h includes this file; a lesson includes only harness.h.
#ifndef HARNESS_CHECK_H
#define HARNESS_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

// ---- input and its exact reference ------------------------------------------
//
// Element i comes from a counter-based hash of (seed, i), so any slice of the
// input can be made on its own, in any order, with no state to carry.
//   ints:    odd integers -15, -13, ..., 15 (4 bits of hash each). Partial
//            sums of such data stay integers, in practice far below 2^24, so
//            summation orders give the same, exact float.
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

// The rounding of a float answer itself: the spacing of floats at |x|
// (one unit in the last place of x as a float; 2^-149 at 0). No check may
// ask for less: the exact value is a double, the answer a float.
static inline double float_ulp(double x)
{
    int e = 0;
    double ax = fabs(x);
    if (ax < 1.1754943508222875e-38) return ldexp(1.0, -149); // below FLT_MIN: subnormal spacing
    frexp(ax, &e);                                             // ax = m * 2^e, m in [0.5, 1)
    return ldexp(1.0, e - 24);
}

// A tolerance for a float result whose exact value is `expected`, with
// `scale` the size of what was added up (sum of |x|): 1e-5 * scale, and never
// less than the answer's own rounding. Lessons use it for any checked value.
static inline double tolerance_for(double expected, double scale)
{
    double t = 1e-5 * fabs(scale), u = float_ulp(expected);
    return t > u ? t : u;
}

// The tolerance a check really applies: tol, raised to the answer's rounding.
static inline double effective_tol(double expected, double tol)
{
    double u = float_ulp(expected);
    return tol > u ? tol : u;
}

// The correctness rule. tol < 0: the float must EQUAL the exact value (ints).
// Otherwise |got - expected| <= tol, never tighter than the float rounding of
// expected (effective_tol). The harness sets tol = tolerance_for(expected,
// sum|x|) for uniform input. NaN never passes.
static inline int check_result(float got, double expected, double tol)
{
    if (isnan(got)) return 0;
    if (tol < 0) return (double)got == expected;
    return fabs((double)got - expected) <= effective_tol(expected, tol);
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

// ---- report lines ------------------------------------------------------------

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
        snprintf(verdict, sizeof verdict, "PASS  (err %.2g, tol %.2g)", fabs((double)r->result - r->expected),
                 effective_tol(r->expected, r->tol));
    else
        snprintf(verdict, sizeof verdict, "FAIL  got %.9g expected %.17g (diff %.3g%s)", (double)r->result,
                 r->expected, fabs((double)r->result - r->expected), r->tol < 0 ? ", must be exact" : "");
    snprintf(buf, len, "%-26s %-9s n=%-11zu %s  %s", r->lesson, r->variant, r->n, timing, verdict);
}

#endif // HARNESS_CHECK_H
