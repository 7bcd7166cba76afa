/*
 * Exercise 17: column sums -- reduce over rows instead of along them.
 *
 * Lesson 17 summed each row of a rows x cols row-major matrix. Now sum each
 * COLUMN. A row's floats are neighbours in memory, a column's are cols apart,
 * so give thread c column c and let it walk down the rows: at every step the
 * threads of a warp read 32 neighbouring floats of one row, one 128-byte
 * line (coalesced), and no thread ever needs another thread's data.
 *
 * Fill in the marked region in cols_kernel.
 *
 *     make exercise17 && ./exercise17     # FAILs until the region is done
 *     ./exercise17 -m 1000 -k 1001 -d uniform --check
 *     make check E=17                     # every size, input and block size
 *
 * Shapes: by default 4096x4096, 128x2^20, 65536x128, 1000x1001; -m ROWS -k
 * COLS picks one; -n N alone makes ceil(N/C) rows of C = min(N, 4096) columns
 * (a short last row). Every column sum is checked: ints exactly, uniform
 * within 1e-5 of the column's sum |x|. Watch the GB/s of 65536x128: 128
 * threads cannot keep the memory busy (lesson 17's row splitting, turned 90
 * degrees, is the fix).
 */
#include "harness.h"

#define MAX_SHAPES 4

// ---- kernel ---------------------------------------------------------------

// Thread c sums column c: in[c], in[c + cols], in[c + 2*cols], ... up to n
// (the last row may be short, so some columns are one element shorter).
__global__ void cols_kernel(const float *in, size_t n, size_t cols, float *out)
{
    size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float s = 0.0f;
    // TODO(exercise): walk down column c while the index stays below n, adding into s. Keep several loads in flight: four rows per trip, then the rest one by one.
    size_t i = c;
    for (; i + 3 * cols < n; i += 4 * cols) { // four independent loads before the adds
        float a = __ldg(&in[i]), b = __ldg(&in[i + cols]), d = __ldg(&in[i + 2 * cols]), e = __ldg(&in[i + 3 * cols]);
        s += (a + b) + (d + e);
    }
    for (; i < n; i += cols) s += __ldg(&in[i]);
    // END(exercise)
    out[c] = s;
}

// ---- launch ---------------------------------------------------------------

typedef struct { size_t rows, cols, n; } Shape;
static int g_block;

static void cols_gpu(const float *d_in, Shape s, float *d_out)
{
    if (s.cols == 0) return; // no columns, nothing to write
    size_t blocks = (s.cols + g_block - 1) / g_block;
    cols_kernel<<<(unsigned int)blocks, g_block>>>(d_in, s.n, s.cols, d_out);
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static Shape shape(size_t rows, size_t cols, size_t n)
{
    Shape s = {rows, cols, n};
    return s;
}

// Exact column sums in int64 (every input is an integer times a power of two).
static void host_cols(const float *h, Shape s, double scale, int64_t *sum, int64_t *sum_abs)
{
    for (size_t c = 0; c < s.cols; c++) sum[c] = sum_abs[c] = 0;
    for (size_t i = 0; i < s.n; i++) {
        int64_t k = (int64_t)((double)h[i] / scale);
        sum[i % s.cols] += k;
        sum_abs[i % s.cols] += k < 0 ? -k : k;
    }
}

typedef struct { const float *d_in; Shape s; float *d_out; } ColJob;
static void cols_poison(void *arg)
{
    ColJob *j = (ColJob *)arg;
    if (j->s.cols) CUDA_CHECK(cudaMemsetAsync(j->d_out, 0xFF, j->s.cols * sizeof(float), 0)); // NaN
}
static void cols_work(void *arg)
{
    ColJob *j = (ColJob *)arg;
    cols_gpu(j->d_in, j->s, j->d_out);
}

// Every column must pass; the line shows the worst one.
static void check_cols(ColJob *j, const int64_t *sum, const int64_t *sum_abs, double scale, int exact, float *h_out,
                       Report *r)
{
    if (j->s.cols) CUDA_CHECK(cudaMemcpy(h_out, j->d_out, j->s.cols * sizeof(float), cudaMemcpyDeviceToHost));
    double worst = -1.0;
    size_t bad = 0;
    r->result = 0.0f;
    r->expected = 0.0;
    r->tol = exact ? -1.0 : 0.0;
    for (size_t c = 0; c < j->s.cols; c++) {
        double want = (double)sum[c] * scale, tol = exact ? -1.0 : 1e-5 * (double)sum_abs[c] * scale;
        int ok = check_result(h_out[c], want, tol);
        double score = ok ? (tol > 0 ? fabs(h_out[c] - want) / tol : 0.0) : INFINITY;
        if (!ok) bad++;
        if (score > worst) {
            worst = score;
            r->result = h_out[c];
            r->expected = want;
            r->tol = tol;
        }
    }
    r->pass = bad == 0;
    if (bad) printf("    %zu of %zu columns wrong\n", bad, j->s.cols);
}

static const LessonInfo info = {"ex17_row_reduction", BLOCK_RUNTIME, 256, NULL};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    static const size_t listed[MAX_SHAPES][2] = {{4096, 4096}, {128, 1 << 20}, {65536, 128}, {1000, 1001}};
    Shape shapes[MAX_SHAPES];
    int count = 0;
    g_block = opt.block;
    if (opt.have_shape) {
        shapes[count++] = shape(opt.rows, opt.cols, opt.rows * opt.cols);
    } else if (opt.have_n) {
        size_t n = opt.n, c = n < 4096 ? n : 4096;
        shapes[count++] = shape(c ? (n + c - 1) / c : 0, c, n);
    } else {
        for (int i = 0; i < MAX_SHAPES; i++) shapes[count++] = shape(listed[i][0], listed[i][1], listed[i][0] * listed[i][1]);
    }
    size_t most_n = 0, most_cols = 1;
    for (int i = 0; i < count; i++) {
        if (shapes[i].n > most_n) most_n = shapes[i].n;
        if (shapes[i].cols > most_cols) most_cols = shapes[i].cols;
    }
    opt.n = most_n; // one input; every shape reads a prefix of it
    Input in = make_input_extra(&opt, most_cols * sizeof(float));
    float *d_out = NULL;
    CUDA_CHECK(cudaMalloc((void **)&d_out, most_cols * sizeof(float)));

    float *h = copy_input_to_host(&in), *h_out = (float *)malloc(most_cols * sizeof(float));
    int64_t *sum = (int64_t *)malloc(most_cols * sizeof(int64_t)), *sum_abs = (int64_t *)malloc(most_cols * sizeof(int64_t));
    if (!h_out || !sum || !sum_abs) { fprintf(stderr, "out of host memory\n"); exit(1); }
    double scale = input_scale(opt.dist);
    for (int i = 0; i < count; i++) {
        Shape s = shapes[i];
        char variant[64];
        snprintf(variant, sizeof variant, "cols_%zux%zu", s.rows, s.cols);
        host_cols(h, s, scale, sum, sum_abs);
        ColJob j = {in.d_in, s, d_out};
        Report r = new_report(&opt, variant, s.n, (double)(s.n + s.cols) * sizeof(float)); // read + written
        cols_poison(&j);
        cols_work(&j);
        CUDA_CHECK(cudaDeviceSynchronize());
        check_cols(&j, sum, sum_abs, scale, opt.dist == DIST_INTS, h_out, &r);
        if (!opt.check_only && r.pass) {
            time_work(&opt, cols_poison, cols_work, &j, &r);
            check_cols(&j, sum, sum_abs, scale, opt.dist == DIST_INTS, h_out, &r); // the last timed run
        }
        report_result(&opt, &r);
    }
    free(sum);
    free(sum_abs);
    free(h_out);
    free(h);
    CUDA_CHECK(cudaFree(d_out));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson_shape(argc, argv, &info, run); }
