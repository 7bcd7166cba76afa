/*
 * Exercise 17: softmax denominators -- two numbers per row, one read of it.
 *
 * Softmax turns row r of a matrix into e^(x_rj - m_r) / d_r, where m_r is the
 * row's largest element and d_r = sum over j of e^(x_rj - m_r), the row's
 * DENOMINATOR. (Subtracting the max keeps every e^ at most 1, so no row
 * overflows, whatever its values.) Both are row reductions; compute both in
 * ONE read of each row: every lane keeps a running STATE (m, d) for the
 * elements it has seen, m their max (-infinity: none yet) and d the sum of
 * e^(x - m) over them, and states are merged, lane with lane. (Lesson 16
 * merged such states over a whole array; here every row has its own.)
 *
 * The rows go to lanes as in lesson 17's narrow and medium rows, simplified
 * (scalar loads): a row of cols floats gets G lanes, G the smallest power of
 * two >= cols and at most 32, so one warp covers 32/G rows at once, each in
 * a LANE GROUP (an aligned run of G lanes: lanes 0..G-1, G..2G-1, ...);
 * rows of more than 32 floats get a whole warp (G = 32). The kernel and the
 * launch are written. Yours: merge(), and the combining of the G states of a
 * group into its first lane. Mind the lanes that get no element at all.
 *
 *     make exercise17 && ./exercise17     # FAILs until the regions are done
 *     ./exercise17 -m 1000 -k 33 -d uniform --check
 *     make check E=17                     # every size, input and block size
 *
 * Shapes: -n N makes N floats five ways, rows of 1, 3, 32, 1000 and 4096
 * floats (a short last row holds the rest); -m ROWS -k COLS picks one matrix,
 * rows of 1 to 4096 floats. One line per shape (a line of output: its name,
 * n, time or "check only", PASS or FAIL), named softmax_ROWSxCOLS: every
 * row's max must be exact and its denominator within 1e-5 times the exact one
 * (computed in double); the line shows the worst row.
 */
#include "harness.h"
#include "rows.h" // Shape, shape() and CHECK_ROWS (host only)

#define MAX_COLS 4096         // the widest row here: 128 elements a lane (wider rows want a block: lesson 17)
#define FULL_MASK 0xffffffffu // all 32 lanes take part in every shuffle below

// ---- kernel ---------------------------------------------------------------

// A row's state after some of its elements: m, the largest of them
// (-infinity: none yet), and d, the sum of e^(x - m) over them.
typedef struct { float m, d; } SoftmaxState;

// The state of a's elements and b's together (either may have none), in
// either order: the tree meets the states in no particular order.
__device__ __forceinline__ SoftmaxState merge(SoftmaxState a, SoftmaxState b)
{
    // TODO(exercise): the state of both halves: the larger max, and each d rescaled from its own max to that one before adding
    (void)b; // placeholder: keeps a and drops b, so every state stays empty
    return a;
    // END(exercise)
}

// Row r is in[r*cols, min((r+1)*cols, n)): the last row may be short.
__device__ __forceinline__ size_t row_length(size_t r, size_t cols, size_t n)
{
    size_t start = r * cols;
    return n - start < cols ? n - start : cols;
}

// One warp per 32/G rows, G = 2^lg lanes a row, lane k of group g reading
// elements k, k + G, k + 2G, ... of row warp * (32/G) + g; the group's first
// lane writes row_max[r] and row_den[r]. The grid has a warp for every 32/G
// rows (the launcher); lanes of a row past the last hold the empty state.
__global__ void softmax_rows_kernel(const float *in, size_t n, size_t rows, size_t cols, int lg, float *row_max,
                                    float *row_den)
{
    unsigned int lane = threadIdx.x & 31, G = 1u << lg, k = lane & (G - 1);
    size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    size_t r = warp * (32u >> lg) + (lane >> lg); // this lane's row
    SoftmaxState s = {-INFINITY, 0.0f};          // no element yet
    if (r < rows) {
        const float *p = in + r * cols;
        size_t len = row_length(r, cols, n);
        for (size_t j = k; j < len; j += G) {
            SoftmaxState one = {__ldg(&p[j]), 1.0f}; // one element: its own max, and e^0 = 1
            s = merge(s, one);
        }
    }
    // Every lane of the warp is here, each with its state (maybe empty).
    // TODO(exercise): merge the G states of this lane's group into its first lane (k == 0); every lane of the warp takes part in each shuffle
    // (placeholder: no shuffles; the first lane keeps only the state of its own elements)
    // END(exercise)
    if (k == 0 && r < rows) {
        row_max[r] = s.m;
        row_den[r] = s.d;
    }
}

// ---- launch ---------------------------------------------------------------

static int g_block; // threads per block, from -b

// log2 of the lanes a row of cols floats gets: the smallest power of two >= cols, at most 32.
static int lanes_log2(size_t cols)
{
    int lg = 0;
    while (lg < 5 && ((size_t)1 << lg) < cols) lg++;
    return lg;
}

// Blocks for s: a warp for every 32/G rows.
static size_t blocks_for(Shape s)
{
    size_t per_warp = (size_t)32 >> lanes_log2(s.cols), warps = (s.rows + per_warp - 1) / per_warp;
    size_t per_block = (size_t)g_block / 32;
    return (warps + per_block - 1) / per_block;
}

static void softmax_gpu(const float *d_in, Shape s, float *d_max, float *d_den)
{
    if (s.rows == 0) return; // no rows, nothing to write
    softmax_rows_kernel<<<(unsigned int)blocks_for(s), g_block>>>(d_in, s.n, s.rows, s.cols, lanes_log2(s.cols), d_max,
                                                                 d_den);
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

typedef struct { const float *d_in; Shape s; float *d_max, *d_den; } SoftmaxJob;
static void softmax_poison(void *arg)
{
    SoftmaxJob *j = (SoftmaxJob *)arg;
    if (j->s.rows == 0) return;
    CUDA_CHECK(cudaMemsetAsync(j->d_max, 0xFF, j->s.rows * sizeof(float), 0)); // NaN
    CUDA_CHECK(cudaMemsetAsync(j->d_den, 0xFF, j->s.rows * sizeof(float), 0));
}
static void softmax_work(void *arg)
{
    SoftmaxJob *j = (SoftmaxJob *)arg;
    softmax_gpu(j->d_in, j->s, j->d_max, j->d_den);
}

// Every row: the max exact, the denominator within 1e-5 times the exact one
// (every term is positive, so that is 1e-5 of the sum of |terms|, the
// harness's rule). The reference: the max, then the sum in double. The line
// shows the worst row (a wrong max counts as worst).
static void check_softmax(const SoftmaxJob *j, const float *h, float *got_max, float *got_den, Report *r)
{
    Shape s = j->s;
    double worst = -1.0;
    size_t bad = 0;
    r->result = 0.0f;
    r->expected = 0.0;
    r->tol = 0.0;
    for (size_t first = 0; first < s.rows; first += CHECK_ROWS) { // a chunk of rows at a time
        size_t count = s.rows - first < CHECK_ROWS ? s.rows - first : CHECK_ROWS;
        CUDA_CHECK(cudaMemcpy(got_max, j->d_max + first, count * sizeof(float), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(got_den, j->d_den + first, count * sizeof(float), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < count; i++) {
            size_t start = (first + i) * s.cols, len = s.n - start < s.cols ? s.n - start : s.cols;
            float m = -INFINITY;
            for (size_t c = 0; c < len; c++) m = h[start + c] > m ? h[start + c] : m;
            double d = 0.0;
            for (size_t c = 0; c < len; c++) d += exp((double)h[start + c] - (double)m);
            int max_ok = check_result(got_max[i], (double)m, -1.0);
            int ok = max_ok && check_result(got_den[i], d, 1e-5 * d);
            double score = ok ? fabs(got_den[i] - d) / (1e-5 * d) : INFINITY;
            if (!ok) bad++;
            if (score > worst) { // the line shows the max if that is what is wrong, else the denominator
                worst = score;
                r->result = max_ok ? got_den[i] : got_max[i];
                r->expected = max_ok ? d : (double)m;
                r->tol = max_ok ? 1e-5 * d : -1.0;
            }
        }
    }
    r->pass = bad == 0;
    if (bad) printf("    %zu of %zu rows wrong (max or denominator)\n", bad, s.rows);
}

static const LessonInfo info = {"ex17_row_reduction", BLOCK_RUNTIME, 256, NULL};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    static const size_t widths[] = {1, 3, 32, 1000, MAX_COLS};
    Shape shapes[5];
    int count = 0;
    g_block = opt.block;
    if (opt.have_shape) {
        if (opt.cols == 0 || opt.cols > MAX_COLS) {
            fprintf(stderr, "%s: -k %zu: rows of 1 to %d floats here (a wider row wants a block: lesson 17)\n",
                    g_prog, opt.cols, MAX_COLS);
            return 2;
        }
        shapes[count++] = shape(opt.rows, opt.cols, opt.rows * opt.cols);
    } else {
        for (int i = 0; i < 5; i++) shapes[count++] = shape((opt.n + widths[i] - 1) / widths[i], widths[i], opt.n);
    }
    size_t most_n = 0, most_rows = 1;
    for (int i = 0; i < count; i++) {
        if (shapes[i].n > most_n) most_n = shapes[i].n;
        if (shapes[i].rows > most_rows) most_rows = shapes[i].rows;
        if (blocks_for(shapes[i]) > (size_t)INT_MAX) {
            fprintf(stderr, "%s: %zu rows need more than 2^31-1 blocks of %d threads\n", g_prog,
                    shapes[i].rows, g_block);
            return 2;
        }
    }
    opt.n = most_n; // one input; every shape reads a prefix of it
    Input in = make_input_extra(&opt, 2 * most_rows * sizeof(float));
    float *d_max = NULL, *d_den = NULL;
    CUDA_CHECK(cudaMalloc((void **)&d_max, most_rows * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&d_den, most_rows * sizeof(float)));
    float *h = copy_input_to_host(&in);
    float *got_max = (float *)malloc(CHECK_ROWS * sizeof(float)), *got_den = (float *)malloc(CHECK_ROWS * sizeof(float));
    if (!got_max || !got_den) { fprintf(stderr, "out of host memory\n"); exit(1); }
    for (int i = 0; i < count; i++) {
        Shape s = shapes[i];
        char variant[64];
        snprintf(variant, sizeof variant, "softmax_%zux%zu", s.rows, s.cols);
        SoftmaxJob j = {in.d_in, s, d_max, d_den};
        Report r = new_report(&opt, variant, s.n, (double)(s.n + 2 * s.rows) * sizeof(float)); // read + written
        softmax_poison(&j);
        softmax_work(&j);
        CUDA_CHECK(cudaDeviceSynchronize());
        check_softmax(&j, h, got_max, got_den, &r);
        if (!opt.check_only && r.pass) {
            time_work(&opt, softmax_poison, softmax_work, &j, &r);
            check_softmax(&j, h, got_max, got_den, &r); // the last timed run
        }
        report_result(&opt, &r);
    }
    free(got_max);
    free(got_den);
    free(h);
    CUDA_CHECK(cudaFree(d_max));
    CUDA_CHECK(cudaFree(d_den));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson_shape(argc, argv, &info, run); }
