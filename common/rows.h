// rows.h -- the host side of a row reduction: shapes, the exact per-row reference, the row check, timing (nvcc only).
//
// For lesson 17 and its lab programs. Include it after harness.h. A row
// program hands over a launcher (rows_fn) that writes one float per row;
// run_rows() checks it on every row, times it and prints its line.
#ifndef ROWS_H
#define ROWS_H

#include "harness.h"

#define MAX_SHAPES 11
#define CHECK_ROWS ((size_t)1 << 20) // rows the host checks at a time

// A rows x cols row-major matrix of n floats; the last row holds n - (rows-1)*cols.
typedef struct { size_t rows, cols, n; } Shape;
static inline Shape shape(size_t rows, size_t cols, size_t n)
{
    Shape s = {rows, cols, n};
    return s;
}

// The shapes one run covers, into shapes[0..returned count):
//   -m R -k C   one R x C matrix;
//   -n N        N elements six ways, rows of 1, 3, 32, 1000 and 4096 floats
//               (a short last row holds the remainder), then one row of N;
//   neither     widths 1 2 3 8 32 100 1000 4096 2^16 2^20, each with
//               ceil(2^26 / width) rows, then 1000 x 1001 (rows misaligned).
// One input serves them all (each reads a prefix of it): opt->n becomes the
// largest n, *most_rows the most rows (at least 1).
static inline int row_shapes(Options *opt, Shape *shapes, size_t *most_rows)
{
    static const size_t widths[] = {1, 2, 3, 8, 32, 100, 1000, 4096, 1 << 16, 1 << 20};
    static const size_t n_widths[] = {1, 3, 32, 1000, 4096}; // -n: every path, short last rows
    const size_t big = (size_t)1 << 26;
    int count = 0;
    if (opt->have_shape) {
        shapes[count++] = shape(opt->rows, opt->cols, opt->rows * opt->cols);
    } else if (opt->have_n) {
        for (size_t i = 0; i < sizeof n_widths / sizeof n_widths[0]; i++)
            shapes[count++] = shape((opt->n + n_widths[i] - 1) / n_widths[i], n_widths[i], opt->n);
        shapes[count++] = shape(1, opt->n, opt->n);
    } else {
        for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
            size_t rows = (big + widths[i] - 1) / widths[i];
            shapes[count++] = shape(rows, widths[i], rows * widths[i]);
        }
        shapes[count++] = shape(1000, 1001, 1001000);
    }
    size_t most_n = 0;
    *most_rows = 1;
    for (int i = 0; i < count; i++) {
        if (shapes[i].n > most_n) most_n = shapes[i].n;
        if (shapes[i].rows > *most_rows) *most_rows = shapes[i].rows;
    }
    opt->n = most_n;
    return count;
}

// SMs x the blocks of `kernel` (a __global__ function, cast to const void *)
// that fit on one SM at once at `block` threads: one full wave. At least 1.
static inline int resident_blocks(const void *kernel, int block)
{
    int occ = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kernel, block, 0));
    return occ * g_dev.sm_count > 0 ? occ * g_dev.sm_count : 1;
}

// Exact sums of rows first .. first+count-1: every input is an integer times a
// power-of-two scale (check.h), so int64 sums of those integers are exact.
static inline void host_rows(const float *h, Shape s, size_t first, size_t count, double scale, int64_t *sum,
                             int64_t *sum_abs)
{
    double inv = 1.0 / scale; // a power of two: multiplying by it is exact
    for (size_t r = first; r < first + count; r++) {
        size_t start = r * s.cols, len = s.n - start < s.cols ? s.n - start : s.cols;
        int64_t a = 0, b = 0;
        for (size_t c = 0; c < len; c++) {
            int64_t k = (int64_t)((double)h[start + c] * inv);
            a += k;
            b += k < 0 ? -k : k;
        }
        sum[r - first] = a;
        sum_abs[r - first] = b;
    }
}

// Host side of the check: a copy of the input, and room for CHECK_ROWS rows'
// references and results. The references are recomputed for each check, a
// chunk at a time, so 2^26 one-float rows need no 2^26 int64 pairs on the host.
typedef struct { const float *h; int64_t *sum, *sum_abs; float *out; double scale; int exact; } HostCheck;
static inline HostCheck host_check_new(const Options *opt, const Input *in)
{
    HostCheck c = {copy_input_to_host(in), (int64_t *)malloc(CHECK_ROWS * sizeof(int64_t)),
                   (int64_t *)malloc(CHECK_ROWS * sizeof(int64_t)), (float *)malloc(CHECK_ROWS * sizeof(float)),
                   input_scale(opt->dist), opt->dist == DIST_INTS};
    if (!c.sum || !c.sum_abs || !c.out) { fprintf(stderr, "%s: out of host memory\n", g_prog); exit(1); }
    return c;
}
static inline void host_check_free(HostCheck *c)
{
    free(c->sum);
    free(c->sum_abs);
    free(c->out);
    free((void *)c->h);
}

// Every row must pass the harness rule (ints: equal; uniform: within 1e-5 of
// its sum |x|). The line shows the worst row (relative to its tolerance).
static inline void check_rows(const float *d_out, Shape s, HostCheck *c, Report *r, int csv)
{
    double worst = -1.0;
    size_t bad = 0;
    r->pass = 1;
    r->result = 0.0f;
    r->expected = 0.0;
    r->tol = c->exact ? -1.0 : 0.0;
    for (size_t first = 0; first < s.rows; first += CHECK_ROWS) {
        size_t count = s.rows - first < CHECK_ROWS ? s.rows - first : CHECK_ROWS;
        CUDA_CHECK(cudaMemcpy(c->out, d_out + first, count * sizeof(float), cudaMemcpyDeviceToHost));
        host_rows(c->h, s, first, count, c->scale, c->sum, c->sum_abs);
        for (size_t i = 0; i < count; i++) {
            double want = (double)c->sum[i] * c->scale, tol = c->exact ? -1.0 : 1e-5 * (double)c->sum_abs[i] * c->scale;
            int ok = check_result(c->out[i], want, tol);
            double score = ok ? (tol > 0 ? fabs(c->out[i] - want) / tol : 0.0) : INFINITY;
            if (!ok) bad++;
            if (score > worst) {
                worst = score;
                r->result = c->out[i];
                r->expected = want;
                r->tol = tol;
            }
        }
    }
    if (bad) {
        r->pass = 0;
        fprintf(csv ? stderr : stdout, "    %zu of %zu rows wrong\n", bad, s.rows); // --csv: CSV lines only
    }
}

// A launcher: one float per row of s into d_out[0..s.rows), on the default stream.
typedef void (*rows_fn)(const float *d_in, Shape s, float *d_out);
typedef struct { rows_fn fn; const float *d_in; Shape s; float *d_out; } RowJob;
static inline void rows_poison(void *arg)
{
    RowJob *j = (RowJob *)arg;
    if (j->s.rows) CUDA_CHECK(cudaMemsetAsync(j->d_out, 0xFF, j->s.rows * sizeof(float), 0)); // NaN
}
static inline void rows_work(void *arg)
{
    RowJob *j = (RowJob *)arg;
    j->fn(j->d_in, j->s, j->d_out);
}

// One line, named prefix_ROWSxCOLS: a run into NaN-poisoned sums, every row
// checked; then (unless --check) timed repetitions, each into fresh poison,
// and the last one's rows checked again. GB/s counts the floats read plus the
// row sums written. Returns 1 if it passed.
static inline int run_rows(const Options *opt, HostCheck *c, const char *prefix, rows_fn fn, const float *d_in,
                           Shape s, float *d_out)
{
    char variant[64];
    snprintf(variant, sizeof variant, "%s_%zux%zu", prefix, s.rows, s.cols);
    RowJob j = {fn, d_in, s, d_out};
    Report r = new_report(opt, variant, s.n, (double)(s.n + s.rows) * sizeof(float)); // read + written
    rows_poison(&j);
    rows_work(&j);
    CUDA_CHECK(cudaDeviceSynchronize());
    check_rows(d_out, s, c, &r, opt->csv);
    if (!opt->check_only && r.pass) {
        time_work(opt, rows_poison, rows_work, &j, &r);
        check_rows(d_out, s, c, &r, opt->csv); // the last timed run
    }
    return report_result(opt, &r);
}

// Every shape, two lines each: name_a's launcher, then name_b's, into the same
// d_out (room for the most rows), checked against one host copy of the input.
static inline void compare_rows(const Options *opt, const Input *in, const Shape *shapes, int count, float *d_out,
                                const char *name_a, rows_fn a, const char *name_b, rows_fn b)
{
    HostCheck c = host_check_new(opt, in);
    for (int i = 0; i < count; i++) {
        run_rows(opt, &c, name_a, a, in->d_in, shapes[i], d_out);
        run_rows(opt, &c, name_b, b, in->d_in, shapes[i], d_out);
    }
    host_check_free(&c);
}

#endif // ROWS_H
