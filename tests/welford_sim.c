// Host check of common/welford_bound.h, compiled as C11 (no CUDA, no GPU).
//
// Replays lesson 16's meanvar_kernel in float on the host, merge for merge in
// the kernel's order (thread_reduce's head, float4 trips and tail, the warp
// shuffles, the block's slots, the last block's loop over the partials), on
// the lesson's own inputs (ints and uniform, each also shifted by 1000), and
// checks against an exact reference that:
//   - the count is exact, and no path has more merges than welford_depth();
//   - the mean and the variance stay within welford_tol()'s bounds.
// The kernel's arithmetic is copied from lessons/16_beyond_sum/16_beyond_sum.cu
// (chan_merge, welford_absorb); each configuration runs twice, with the
// products left apart and with them fused into FMAs as nvcc may. Prints
// "ok NAME" / "not ok NAME" lines and the worst ratio error / bound seen;
// exit 1 if any check failed. Usage: welford_sim [seeds] (default 8).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "welford_bound.h"

#define SHIFT 1000.0f
#define UNROLL 4

typedef struct { float n, mean, m2; int depth; } MeanVar; // depth: rounding merges on the longest path so far

static int g_fused; // 1: nvcc's contractions (a*b+c as one FMA) where the kernel allows them

static int deeper(int a, int b) { return (a > b ? a : b) + 1; }

// chan_merge, as in the lesson.
static MeanVar chan_merge(MeanVar a, MeanVar b)
{
    if (b.n == 0.0f) return a;
    if (a.n == 0.0f) return b;
    float n = a.n + b.n;
    float d = b.mean - a.mean, w = b.n / n;
    if (g_fused) {
        a.mean = fmaf(d, w, a.mean);
        a.m2 = a.m2 + fmaf(d * d * a.n, w, b.m2);
    } else {
        a.mean += d * w;
        a.m2 += b.m2 + d * d * a.n * w;
    }
    a.n = n;
    a.depth = deeper(a.depth, b.depth);
    return a;
}

// welford_absorb, as in the lesson: v holds k float4s, v[4u..4u+3] the u-th.
static void welford_absorb(MeanVar *a, const float *v, int k)
{
    float K = a->n > 0.0f ? a->mean : v[0], d = 0.0f;
    for (int u = 0; u < k; u++) d += ((v[4 * u] - K) + (v[4 * u + 1] - K)) + ((v[4 * u + 2] - K) + (v[4 * u + 3] - K));
    float dm = d * (0.25f / k), q = 0.0f;
    for (int u = 0; u < k; u++) {
        float e0 = (v[4 * u] - K) - dm, e1 = (v[4 * u + 1] - K) - dm, e2 = (v[4 * u + 2] - K) - dm,
              e3 = (v[4 * u + 3] - K) - dm;
        q = fmaf(e0, e0, fmaf(e1, e1, fmaf(e2, e2, fmaf(e3, e3, q))));
    }
    float n = a->n + 4.0f * k, w = 4.0f * k / n;
    if (g_fused) {
        a->m2 = a->m2 + fmaf(dm * dm * a->n, w, q);
        a->mean = fmaf(dm, w, K);
    } else {
        a->m2 += q + dm * dm * a->n * w;
        a->mean = K + dm * w;
    }
    a->n = n;
    a->depth += 1;
}

// warp_combine: lane l takes lane l + off's state; lane 0 ends with the warp's.
static MeanVar warp_combine(MeanVar *t)
{
    MeanVar next[32];
    for (int off = 16; off > 0; off >>= 1) {
        for (int l = 0; l < 32; l++) next[l] = l + off < 32 ? chan_merge(t[l], t[l + off]) : t[l];
        memcpy(t, next, sizeof next);
    }
    return t[0];
}

// block_combine: each warp's result to a slot, then warp 0 over the slots.
static MeanVar block_combine(MeanVar *t, int block)
{
    MeanVar slot[32], empty = {0.0f, 0.0f, 0.0f, 0};
    for (int w = 0; w < 32; w++) slot[w] = w < block / 32 ? warp_combine(t + 32 * w) : empty;
    return warp_combine(slot);
}

// reduce_body on grid x block threads; x[0..n) starts `head` floats before a 16-byte boundary.
static MeanVar kernel(const float *x, size_t n, int grid, int block, size_t head)
{
    size_t threads = (size_t)grid * block;
    if (head > n) head = n;
    size_t n4 = (n - head) / 4, tail = head + 4 * n4;
    MeanVar *acc = calloc(threads, sizeof *acc), *part = calloc((size_t)grid, sizeof *part), empty = {0.0f, 0.0f, 0.0f, 0};
    if (!acc || !part) { fprintf(stderr, "welford_sim: out of memory\n"); exit(1); }
    for (size_t tid = 0; tid < threads; tid++) {
        MeanVar a = empty;
        if (tid < head) { MeanVar e = {1.0f, x[tid], 0.0f, 0}; a = chan_merge(a, e); }
        size_t i = tid;
        for (; i + (UNROLL - 1) * threads < n4; i += UNROLL * threads) {
            float v[4 * UNROLL];
            for (int u = 0; u < UNROLL; u++) memcpy(v + 4 * u, x + head + 4 * (i + u * threads), 4 * sizeof(float));
            welford_absorb(&a, v, UNROLL);
        }
        for (; i < n4; i += threads) welford_absorb(&a, x + head + 4 * i, 1);
        if (tid < n - tail) { MeanVar e = {1.0f, x[tail + tid], 0.0f, 0}; a = chan_merge(a, e); }
        acc[tid] = a;
    }
    for (int b = 0; b < grid; b++) part[b] = block_combine(acc + (size_t)b * block, block);
    for (int t = 0; t < block; t++) { // the last block: thread t takes partials t, t + block, ...
        MeanVar a = empty;
        for (int b = t; b < grid; b += block) a = chan_merge(a, part[b]);
        acc[t] = a;
    }
    MeanVar r = block_combine(acc, block);
    free(acc);
    free(part);
    return r;
}

static int g_bad = 0, g_checks = 0;
static double g_worst_var = 0.0, g_worst_mean = 0.0;
static char g_worst_var_at[160], g_worst_mean_at[160];

// One input on one configuration: the replay against the bounds.
static void check_one(const float *x, size_t n, int grid, int block, size_t head, const char *what)
{
    double s = neumaier_sum(x, n), mean = n ? s / (double)n : 0.0, q = 0.0, c = 0.0, hi = x[0], lo = x[0];
    for (size_t i = 0; i < n; i++) { // two passes in double, Neumaier-summed, as lesson 16's host_ref
        double d = (double)x[i] - mean, sq = d * d, t = q + sq;
        c += q >= sq ? (q - t) + sq : (sq - t) + q;
        q = t;
        hi = x[i] > hi ? x[i] : hi;
        lo = x[i] < lo ? x[i] : lo;
    }
    double count_depth, depth = welford_depth(n, (size_t)grid, (size_t)block, UNROLL, &count_depth), mean_tol;
    double var = (q + c) / (double)n;
    double var_tol = welford_tol((double)n, depth, count_depth, mean, fmax(fabs(hi), fabs(lo)), hi - lo, var, &mean_tol);
    MeanVar r = kernel(x, n, grid, block, head);
    double got_var = (double)r.m2 / (double)r.n, rv = fabs(got_var - var) / var_tol, rm = fabs(r.mean - mean) / mean_tol;
    char at[160];
    snprintf(at, sizeof at, "%s, n=%zu, %d x %d threads, head %zu%s", what, n, grid, block, head, g_fused ? ", fused" : "");
    g_checks++;
    if ((double)r.n != (double)n || r.depth > depth || rv > 1.0 || rm > 1.0) {
        g_bad++;
        if (g_bad <= 20)
            printf("not ok welford bound: %s: count %.0f, depth %d of %.0f, mean err %.3g (bound %.3g), "
                   "var err %.3g (bound %.3g)\n", at, (double)r.n, r.depth, depth, fabs(r.mean - mean), mean_tol,
                   fabs(got_var - var), var_tol);
    }
    if (rv > g_worst_var) { g_worst_var = rv; snprintf(g_worst_var_at, sizeof g_worst_var_at, "%s", at); }
    if (rm > g_worst_mean) { g_worst_mean = rm; snprintf(g_worst_mean_at, sizeof g_worst_mean_at, "%s", at); }
}

// Every (dist, shifted) input of n elements and seed, on one configuration, every head.
static void check_inputs(size_t n, uint64_t seed, int grid, int block, int heads)
{
    float *x = malloc(n * sizeof(float));
    if (!x) { fprintf(stderr, "welford_sim: out of memory\n"); exit(1); }
    for (int dist = 0; dist < 2; dist++)
        for (int shifted = 0; shifted < 2; shifted++) {
            int64_t sum = 0, sum_abs = 0;
            fill_input(x, 0, n, seed, dist, &sum, &sum_abs);
            if (shifted)
                for (size_t i = 0; i < n; i++) x[i] += SHIFT; // as lesson 16's edge_tests: rounded to float
            char what[64];
            snprintf(what, sizeof what, "%s%s, seed %llu", dist == DIST_INTS ? "ints" : "uniform", shifted ? "+1000" : "",
                     (unsigned long long)seed);
            for (size_t head = 0; head < (size_t)heads; head++)
                for (g_fused = 0; g_fused < 2; g_fused++) check_one(x, n, grid, block, head, what);
        }
    free(x);
}

// The lesson's grid: enough blocks of block x 16 floats, at most most_blocks.
static int grid_for(size_t n, int block, int most_blocks)
{
    size_t want = (n + (size_t)block * 16 - 1) / ((size_t)block * 16);
    return want < (size_t)most_blocks ? (int)(want ? want : 1) : most_blocks;
}

int main(int argc, char **argv)
{
    int seeds = argc > 1 ? atoi(argv[1]) : 8;
    if (seeds < 1) seeds = 1;
    // Every n from 1 to 64 (the sweep's sizes), each block size, every alignment.
    static const int blocks[] = {32, 256, 1024};
    for (size_t n = 1; n <= 64; n++)
        for (uint64_t s = 1; s <= (uint64_t)seeds; s++)
            for (int b = 0; b < 3; b++) check_inputs(n, s, 1, blocks[b], 4);
    // Larger n on grids as a GPU launches them: 132 SMs x 8 blocks of 256
    // (an H100 or H200), 40 x 4 of 256 (a T4), and small grids that give
    // the last block several partials per thread.
    static const size_t sizes[] = {65, 1000, 4097, 65537, ((size_t)1 << 20) + 3};
    for (int k = 0; k < 5; k++)
        for (uint64_t s = 1; s <= 2; s++) {
            check_inputs(sizes[k], s, grid_for(sizes[k], 256, 1056), 256, 2);
            check_inputs(sizes[k], s, grid_for(sizes[k], 256, 160), 256, 1);
            check_inputs(sizes[k], s, grid_for(sizes[k], 32, 100), 32, 1);
        }
    if (g_bad == 0) printf("ok welford bound holds in %d replays of lesson 16's merges (n = 1..64, %d seeds; larger n)\n",
                           g_checks, seeds);
    printf("# worst variance error / bound: %.4f (%s)\n", g_worst_var, g_worst_var_at);
    printf("# worst mean error / bound: %.4f (%s)\n", g_worst_mean, g_worst_mean_at);
    return g_bad ? 1 : 0;
}
