/*
 * Lesson 17: row reduction -- one sum per row of a matrix, in one launch.
 *
 * What changed since lesson 16: the answer is one float per row of a
 * rows x cols row-major matrix, the shape softmax, layernorm and losses need.
 * Which threads share a row depends on its length, so that every warp keeps
 * several whole, coalesced loads in flight whatever the shape:
 *   narrow rows (at most 32 loads, e.g. up to 128 floats): G lanes per row, so
 *     one load of a warp covers 32/G whole rows, and several such loads fly;
 *   medium rows (up to WARP_MAX_COLS floats): a warp per row, no barrier;
 *   long rows: a block per row, or several when there are too few rows to fill
 *     the GPU (lesson 12's last-block-done, one counter per row).
 * As in lesson 14's copies of lesson 12, a matrix of up to 2 x L2 is read
 * evict-first. Every row sum is checked (ints: exactly) and timed against
 * cub::DeviceSegmentedReduce::Sum.
 *
 * The flaw that remains: one GPU. Lesson 18 spreads the work over several.
 *
 *     make lesson17 && ./lesson17   # widths 1 2 3 8 32 100 1000 4096 2^16 2^20
 *                                   # (at least 2^26 floats each), and 1000x1001
 *     ./lesson17 -m 1000 -k 1001    # one shape (-m ROWS -k COLS)
 *     ./lesson17 -n 2^20+3 --check  # N floats as rows of 1, 3, 32, 1000 and 4096 (last row short), and 1xN
 */
#include "harness.h"
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

// Every knob can be changed when building: make -B lesson17 EXTRA="-DGROUP_BYTES=64".
#ifndef GROUP_BYTES
#define GROUP_BYTES 128    // narrow rows: bytes a lane loads before it adds any (8 float4s or 32 floats)
#endif
#ifndef GROUP_MAX_SLOTS
#define GROUP_MAX_SLOTS 32 // narrow rows: rows of at most this many loads (one per lane, so <= 32)
#endif
#ifndef UNROLL
#define UNROLL 8           // medium and long rows: float4 loads in flight per thread (above 8: more
#endif                     // than 64 registers, and -b 1024 may no longer launch)
#ifndef WARP_MAX_COLS
#define WARP_MAX_COLS 2048 // medium rows: up to this many floats a warp each; longer, a block
#endif
#ifndef ROW_WAVES
#define ROW_WAVES 1        // long rows: split them until the blocks fill this many waves of resident blocks
#endif
// Matrices up to this many times the L2 size are read with __ldcs (evict-first,
// the rule of lesson 14's copies of lesson 12: the lines they bring in are the
// first to go, instead of the flush buffer's dirty ones); larger ones with
// __ldg. 0: __ldg always.
#ifndef STREAM_BELOW_L2
#define STREAM_BELOW_L2 2
#endif
#if GROUP_BYTES % 16 || GROUP_BYTES < 16 || GROUP_MAX_SLOTS > 32
#error "GROUP_BYTES: a multiple of 16; GROUP_MAX_SLOTS: at most 32"
#endif
#define FULL_MASK 0xffffffffu // all 32 lanes take part in every shuffle below
#define MAX_SHAPES 11
#define CHECK_ROWS ((size_t)1 << 20) // rows the host checks at a time

// ---- kernel ---------------------------------------------------------------

// Full mask: every lane of the warp calls this together.
__device__ __forceinline__ float warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(FULL_MASK, v, off);
    return v;
}

// Row r is in[r*cols, min((r+1)*cols, n)): the last row may be short.
__device__ __forceinline__ size_t row_length(size_t r, size_t cols, size_t n)
{
    size_t start = r * cols;
    return n - start < cols ? n - start : cols;
}

// V floats from p (V = 4, 2 or 1; p aligned to 4V bytes), unused fields 0.
// stream: evict-first loads (__ldcs) instead of __ldg.
__device__ __forceinline__ float4 load_vec(const float *p, int V, int stream)
{
    if (V == 4) return stream ? __ldcs((const float4 *)p) : __ldg((const float4 *)p);
    if (V == 2) {
        float2 a = stream ? __ldcs((const float2 *)p) : __ldg((const float2 *)p);
        return make_float4(a.x, a.y, 0.0f, 0.0f);
    }
    return make_float4(stream ? __ldcs(p) : __ldg(p), 0.0f, 0.0f, 0.0f);
}
__device__ __forceinline__ float vec_total(float4 v, int V)
{
    return V == 4 ? (v.x + v.y) + (v.z + v.w) : V == 2 ? v.x + v.y : v.x;
}

// Narrow rows. A row of cols floats is `slots` loads of V floats; it gets
// G = 2^lg lanes (the smallest power of two >= slots), one load each, so one
// load of the warp covers 32/G whole neighbouring rows, a row-group: at 32
// floats, 8 lanes x float4, 4 rows. A trip loads U = GROUP_BYTES / (4V)
// neighbouring row-groups before it adds anything (lesson 11's rule, with the
// same bytes in flight whatever V), adds each row within its G lanes, and
// the group's first lane writes the sum. Every lane loads and reaches every
// shuffle (they need all 32); a lane with nothing of its own to load (a
// spare lane of a row of fewer than G loads, or a row past the last one)
// reads an address inside the matrix and adds 0 instead. No branch around
// the loads: they stay a straight run of independent instructions.
__device__ __forceinline__ void group_rows(const float *in, size_t n, size_t rows, size_t cols, int lg, float *out,
                                           const int V, const int stream)
{
    const int U = GROUP_BYTES / (4 * V); // a constant: V is one
    unsigned int lane = threadIdx.x & 31, g = lane >> lg, k = lane & ((1u << lg) - 1); // row g of the group, load k
    size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    size_t warps = ((size_t)gridDim.x * blockDim.x) >> 5;
    unsigned int per_group = 32u >> lg, per_trip = per_group * U, slots = (unsigned int)cols / V;
    size_t full = n / cols < rows ? n / cols : rows; // rows of full length (cols > 0: the launcher)
    // Offsets inside one trip stay below U x 32 x V floats (a row has at most
    // G x V of them): 32-bit arithmetic, a couple of instructions per load.
    unsigned int spare = k >= slots, kv = (spare ? slots - 1 : k) * V; // a spare lane reloads the row's last slot
    unsigned int mine = g * (unsigned int)cols + kv, step = per_group * (unsigned int)cols;
    // p: row `first` (it exists, so every lane may load from it); o: where its sum goes.
    const float *p = in + warp * per_trip * cols;
    float *o = out + warp * per_trip + g;
    for (size_t first = warp * per_trip; first < full;
         first += warps * per_trip, p += warps * per_trip * cols, o += warps * per_trip) { // same bound for all lanes
        unsigned int left = full - first < per_trip ? (unsigned int)(full - first) : per_trip; // rows in this trip
        float4 v[GROUP_BYTES / 4];
#pragma unroll
        for (int u = 0; u < U; u++) // all loads issued first
            v[u] = load_vec(p + (u * per_group + g < left ? mine + u * step : kv), V, stream);
        float s[GROUP_BYTES / 4];
#pragma unroll
        for (int u = 0; u < U; u++) s[u] = !spare && u * per_group + g < left ? vec_total(v[u], V) : 0.0f;
        // A group is an aligned run of G lanes, so lane ^ off (off < G) stays
        // inside it; afterwards every lane of the group holds its row's sum.
        for (int off = (1 << lg) >> 1; off > 0; off >>= 1)
#pragma unroll
            for (int u = 0; u < U; u++) s[u] += __shfl_xor_sync(FULL_MASK, s[u], off);
        if (k == 0) {
#pragma unroll
            for (int u = 0; u < U; u++) // 32/G neighbouring floats per store
                if (u * per_group + g < left) o[u * per_group] = s[u];
        }
    }
    if (full < rows && warp == 0) { // a short last row (rows = ceil(n / cols)): one warp, element by element
        float s = 0.0f;
        for (size_t i = (rows - 1) * cols + lane; i < n; i += 32) s += in[i];
        s = warp_sum(s);
        if (lane == 0) out[rows - 1] = s;
    }
}

// vec: 4 when every row starts on a 16-byte boundary, else 2 or 1 (the
// launcher checks). Six copies of the loop, with V and the kind of load
// constants in each: no run-time choice is left between the loads.
// __launch_bounds__(1024): -b goes up to 1024 threads a block, so the loop
// must fit in 64 registers a thread.
__global__ void __launch_bounds__(1024) rows_group_kernel(const float *in, size_t n, size_t rows, size_t cols, int vec,
                                                          int lg, int stream, float *out)
{
    switch (2 * vec + (stream != 0)) {
    case 8: group_rows(in, n, rows, cols, lg, out, 4, 0); break;
    case 9: group_rows(in, n, rows, cols, lg, out, 4, 1); break;
    case 4: group_rows(in, n, rows, cols, lg, out, 2, 0); break;
    case 5: group_rows(in, n, rows, cols, lg, out, 2, 1); break;
    case 2: group_rows(in, n, rows, cols, lg, out, 1, 0); break;
    default: group_rows(in, n, rows, cols, lg, out, 1, 1); break;
    }
}

// This thread's share of p[0..len), summed by `count` threads of which this is
// number t: scalar head up to the first 16-byte boundary (rows start anywhere:
// cols may be odd, --offset may be set), float4 body, scalar tail. Each trip
// issues all UNROLL loads before adding; loads past the end give zeros, so a
// short row still has its loads in flight together.
__device__ __forceinline__ float range_sum(const float *p, size_t len, unsigned int t, unsigned int count, int stream)
{
    size_t head = ((16 - ((uintptr_t)p & 15)) & 15) / 4;
    if (head > len) head = len;
    const float4 *body = (const float4 *)(p + head);
    size_t n4 = (len - head) / 4, tail = head + 4 * n4;
    float s = 0.0f;
    if (t < head) s += p[t];
    for (size_t i = t; i < n4; i += (size_t)UNROLL * count) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            size_t j = i + (size_t)u * count;
            v[u] = j < n4 ? load_vec((const float *)&body[j], 4, stream) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) s += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    if (t < len - tail) s += p[tail + t];
    return s;
}

// The block's sum, valid in thread 0; one shared slot per warp.
__device__ __forceinline__ float block_sum(float v)
{
    __shared__ float slot[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) slot[warp] = v;
    __syncthreads(); // all slots written before warp 0 reads them
    if (warp == 0) v = warp_sum(lane < (int)(blockDim.x >> 5) ? slot[lane] : 0.0f);
    return v;
}

// Medium rows: warp w sums rows w, w + warps, ... The loop bound is the same
// for all 32 lanes, so every lane reaches the full-mask shuffles.
__global__ void rows_warp_kernel(const float *in, size_t n, size_t rows, size_t cols,
                                                         int stream, float *out)
{
    unsigned int lane = threadIdx.x & 31;
    size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    size_t warps = ((size_t)gridDim.x * blockDim.x) >> 5;
    for (size_t r = warp; r < rows; r += warps) {
        float s = warp_sum(range_sum(in + r * cols, row_length(r, cols, n), lane, 32, stream));
        if (lane == 0) out[r] = s;
    }
}

// Lesson 12's counter: an atomicInc that releases (the partial this thread
// stored is visible before its count) and acquires (the block that sees m
// sees every partial), and wraps back to 0 for the next launch. Returns the old count.
__device__ unsigned int count_done(unsigned int *counter, unsigned int m)
{
#if __CUDA_ARCH__ < 700
    __threadfence();
    unsigned int old = atomicInc(counter, m);
    if (old == m) __threadfence();
    return old;
#else
    unsigned int old;
    asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(m) : "memory");
    return old;
#endif
}

// Long rows: block b sums chunk b % chunks of row b / chunks. One chunk per
// row: it writes the row's sum. Several: the row's last block to finish adds
// the row's partials in chunk order, so the result does not depend on which
// block finished last (bitwise the same every run).
__global__ void rows_block_kernel(const float *in, size_t n, size_t cols, unsigned int chunks,
                                                          size_t chunk_len, int stream, float *partials,
                                                          unsigned int *counters, float *out)
{
    size_t row = blockIdx.x / chunks, first = (size_t)(blockIdx.x % chunks) * chunk_len;
    size_t len = row_length(row, cols, n);
    len = first >= len ? 0 : (len - first < chunk_len ? len - first : chunk_len);
    float s = block_sum(range_sum(in + row * cols + first, len, threadIdx.x, blockDim.x, stream));
    if (chunks == 1) {
        if (threadIdx.x == 0) out[row] = s;
        return;
    }
    __shared__ bool am_last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = s;
        am_last = count_done(&counters[row], chunks - 1) == chunks - 1; // one counter per row
    }
    __syncthreads(); // publishes am_last; block_sum's slots are free again
    if (!am_last) return;
    float t = 0.0f;
    for (unsigned int c = threadIdx.x; c < chunks; c += blockDim.x)
        t += __ldcg(&partials[row * chunks + c]); // through L2: never a stale L1 line
    t = block_sum(t);
    if (threadIdx.x == 0) out[row] = t; // count_done left the row's counter at 0 for the next launch
}

// ---- launch ---------------------------------------------------------------

typedef struct { size_t rows, cols, n; } Shape; // n = elements; the last row holds n - (rows-1)*cols
static Shape shape(size_t rows, size_t cols, size_t n)
{
    Shape s = {rows, cols, n};
    return s;
}
static int g_block, g_group_blocks, g_warp_blocks, g_row_blocks; // SMs x resident blocks of each kernel
static float *g_partials;
static unsigned int *g_counters;

// Which kernel sums the rows of s. For narrow rows also the load width (4
// only if every row start r * cols is 16-byte aligned: cols % 4 == 0 and an
// aligned matrix; --offset breaks the latter) and log2 of the lanes per row.
enum { PATH_GROUP, PATH_WARP, PATH_BLOCK };
static int path_for(Shape s, const float *d_in, int *vec, int *lg)
{
    uintptr_t a = (uintptr_t)d_in;
    *vec = s.cols % 4 == 0 && a % 16 == 0 ? 4 : s.cols % 2 == 0 && a % 8 == 0 ? 2 : 1;
    size_t slots = s.cols / *vec;
    if (slots > GROUP_MAX_SLOTS) return s.cols <= WARP_MAX_COLS ? PATH_WARP : PATH_BLOCK;
    for (*lg = 0; ((size_t)1 << *lg) < slots; (*lg)++) {}
    return PATH_GROUP;
}

// Enough blocks for `warps` warps of work, but at most one wave of resident
// blocks: the group and warp kernels loop over whatever is left.
static unsigned int blocks_for(size_t warps, int wave)
{
    size_t per_block = (size_t)g_block / 32, want = (warps + per_block - 1) / per_block;
    return want < (size_t)wave ? (unsigned int)want : (unsigned int)wave;
}

// How many blocks share a long row: enough for ROW_WAVES full waves of
// resident blocks when rows are few, but never less than one UNROLL trip per
// thread.
static unsigned int chunks_for(Shape s, size_t *chunk_len)
{
    *chunk_len = s.cols;
    if (s.rows == 0 || s.cols == 0) return 1;
    size_t blocks = (size_t)ROW_WAVES * g_row_blocks;
    size_t want = s.rows < blocks ? blocks / s.rows : 1;
    size_t min_chunk = (size_t)g_block * 4 * UNROLL;
    size_t most = (s.cols + min_chunk - 1) / min_chunk;
    if (want > most) want = most;
    if (want < 1) want = 1;
    *chunk_len = ((s.cols + want - 1) / want + 3) / 4 * 4; // multiple of 4: chunks keep the row's alignment
    return (unsigned int)((s.cols + *chunk_len - 1) / *chunk_len);
}

static void rows_gpu(const float *d_in, Shape s, float *d_out)
{
    if (s.rows == 0) return; // no rows, no sums to write
    if (s.cols == 0) { // rows of no floats: every sum is 0
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, s.rows * sizeof(float), 0));
        return;
    }
    int stream = (double)s.n * sizeof(float) <= STREAM_BELOW_L2 * (double)g_dev.l2_bytes;
    int vec = 1, lg = 0, path = path_for(s, d_in, &vec, &lg);
    if (path == PATH_GROUP) {
        size_t per_trip = ((size_t)32 >> lg) * (GROUP_BYTES / (4 * vec)); // rows one warp takes per trip
        rows_group_kernel<<<blocks_for((s.rows + per_trip - 1) / per_trip, g_group_blocks), g_block>>>(
            d_in, s.n, s.rows, s.cols, vec, lg, stream, d_out);
    } else if (path == PATH_WARP) {
        rows_warp_kernel<<<blocks_for(s.rows, g_warp_blocks), g_block>>>(d_in, s.n, s.rows, s.cols, stream, d_out);
    } else {
        size_t chunk_len;
        unsigned int chunks = chunks_for(s, &chunk_len);
        rows_block_kernel<<<(unsigned int)(s.rows * chunks), g_block>>>(d_in, s.n, s.cols, chunks, chunk_len, stream,
                                                                        g_partials, g_counters, d_out);
    }
    CUDA_CHECK_LAST();
}

// CUB wants each segment's begin and end offsets; these iterators compute
// them on the fly (no offsets array for CUB to read on top of the data).
struct RowBegin { long long cols; __host__ __device__ long long operator()(long long r) const { return r * cols; } };
struct RowEnd {
    long long cols, n;
    __host__ __device__ long long operator()(long long r) const { return (r + 1) * cols < n ? (r + 1) * cols : n; }
};
static void *g_cub_temp;
static size_t g_cub_bytes;

static void rows_cub(void *temp, size_t *bytes, const float *d_in, Shape s, float *d_out)
{
    thrust::counting_iterator<long long> r0(0);
    RowBegin b = {(long long)s.cols};
    RowEnd e = {(long long)s.cols, (long long)s.n};
    CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(temp, *bytes, d_in, d_out, (int64_t)s.rows,
                                               thrust::make_transform_iterator(r0, b),
                                               thrust::make_transform_iterator(r0, e)));
}

// ---- main -----------------------------------------------------------------

// Exact sums of rows first .. first+count-1: every input is an integer times a
// power-of-two scale (harness.h), so int64 sums of those integers are exact.
static void host_rows(const float *h, Shape s, size_t first, size_t count, double scale, int64_t *sum,
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

typedef struct { int cub; const float *d_in; Shape s; float *d_out; } RowJob;
static void rows_poison(void *arg)
{
    RowJob *j = (RowJob *)arg;
    if (j->s.rows) CUDA_CHECK(cudaMemsetAsync(j->d_out, 0xFF, j->s.rows * sizeof(float), 0)); // NaN
}
static void rows_work(void *arg)
{
    RowJob *j = (RowJob *)arg;
    size_t bytes = g_cub_bytes;
    if (j->cub) { if (j->s.rows) rows_cub(g_cub_temp, &bytes, j->d_in, j->s, j->d_out); }
    else rows_gpu(j->d_in, j->s, j->d_out);
}

// Host side of the check: a copy of the input, and room for CHECK_ROWS rows'
// references and results. The references are recomputed for each check, a
// chunk at a time, so 2^26 one-float rows need no 2^26 int64 pairs on the host.
typedef struct { const float *h; int64_t *sum, *sum_abs; float *out; } HostCheck;

// Every row must pass the harness rule (ints: equal; uniform: within 1e-5 of
// its sum |x|). The line shows the worst row (relative to its tolerance).
static void check_rows(RowJob *j, HostCheck *c, double scale, int exact, Report *r)
{
    double worst = -1.0;
    size_t bad = 0;
    r->pass = 1;
    r->result = 0.0f;
    r->expected = 0.0;
    r->tol = exact ? -1.0 : 0.0;
    for (size_t first = 0; first < j->s.rows; first += CHECK_ROWS) {
        size_t count = j->s.rows - first < CHECK_ROWS ? j->s.rows - first : CHECK_ROWS;
        CUDA_CHECK(cudaMemcpy(c->out, j->d_out + first, count * sizeof(float), cudaMemcpyDeviceToHost));
        host_rows(c->h, j->s, first, count, scale, c->sum, c->sum_abs);
        for (size_t i = 0; i < count; i++) {
            double want = (double)c->sum[i] * scale, tol = exact ? -1.0 : 1e-5 * (double)c->sum_abs[i] * scale;
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
        printf("    %zu of %zu rows wrong\n", bad, j->s.rows);
    }
}

static const LessonInfo info = {"17_row_reduction", BLOCK_RUNTIME, 256, NULL};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    // Default: each width with ceil(2^26 / width) rows, then an odd width (rows misaligned).
    static const size_t widths[] = {1, 2, 3, 8, 32, 100, 1000, 4096, 1 << 16, 1 << 20};
    static const size_t n_widths[] = {1, 3, 32, 1000, 4096}; // -n: every path, short last rows
    const size_t big = (size_t)1 << 26;
    Shape shapes[MAX_SHAPES];
    int count = 0;
    g_block = opt.block;
    if (opt.have_shape) {
        shapes[count++] = shape(opt.rows, opt.cols, opt.rows * opt.cols);
    } else if (opt.have_n) { // N elements, six ways; a short last row holds the remainder
        for (size_t i = 0; i < sizeof n_widths / sizeof n_widths[0]; i++)
            shapes[count++] = shape((opt.n + n_widths[i] - 1) / n_widths[i], n_widths[i], opt.n);
        shapes[count++] = shape(1, opt.n, opt.n);
    } else {
        for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
            size_t rows = (big + widths[i] - 1) / widths[i];
            shapes[count++] = shape(rows, widths[i], rows * widths[i]);
        }
        shapes[count++] = shape(1000, 1001, 1001000);
    }
    size_t most_n = 0, most_rows = 1;
    for (int i = 0; i < count; i++) {
        if (shapes[i].n > most_n) most_n = shapes[i].n;
        if (shapes[i].rows > most_rows) most_rows = shapes[i].rows;
    }
    opt.n = most_n; // one input; every shape reads a prefix of it
    Input in = make_input_extra(&opt, most_rows * sizeof(float));

    int occ = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, rows_group_kernel, g_block, 0));
    g_group_blocks = occ * g_dev.sm_count > 0 ? occ * g_dev.sm_count : 1;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, rows_warp_kernel, g_block, 0));
    g_warp_blocks = occ * g_dev.sm_count > 0 ? occ * g_dev.sm_count : 1;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, rows_block_kernel, g_block, 0));
    g_row_blocks = occ * g_dev.sm_count > 0 ? occ * g_dev.sm_count : 1;
    size_t split_blocks = 1, split_rows = 1; // the most partials and counters a split shape needs
    for (int i = 0; i < count; i++) {
        size_t chunk_len;
        int vec, lg;
        unsigned int c = path_for(shapes[i], in.d_in, &vec, &lg) == PATH_BLOCK ? chunks_for(shapes[i], &chunk_len) : 1;
        if (c > 1 && shapes[i].rows * c > split_blocks) split_blocks = shapes[i].rows * c;
        if (c > 1 && shapes[i].rows > split_rows) split_rows = shapes[i].rows;
    }
    CUDA_CHECK(cudaMalloc((void **)&g_partials, split_blocks * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_counters, split_rows * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_counters, 0, split_rows * sizeof(unsigned int))); // once; count_done leaves them 0
    float *d_out = NULL;
    CUDA_CHECK(cudaMalloc((void **)&d_out, most_rows * sizeof(float)));
    for (int i = 0; i < count; i++) {
        size_t chunk_len, bytes = 0;
        int vec, lg; // the group and warp kernels loop over rows: any count fits one launch
        if (path_for(shapes[i], in.d_in, &vec, &lg) == PATH_BLOCK &&
            shapes[i].rows * chunks_for(shapes[i], &chunk_len) > 0x7fffffffu) {
            fprintf(stderr, "%s: %zu rows is more than one launch can take\n", info.lesson, shapes[i].rows);
            exit(2);
        }
        if (shapes[i].rows) rows_cub(NULL, &bytes, in.d_in, shapes[i], d_out); // temp storage, outside any timing
        if (bytes > g_cub_bytes) g_cub_bytes = bytes;
    }
    CUDA_CHECK(cudaMalloc(&g_cub_temp, g_cub_bytes > 0 ? g_cub_bytes : 1));

    HostCheck hc = {copy_input_to_host(&in), (int64_t *)malloc(CHECK_ROWS * sizeof(int64_t)),
                    (int64_t *)malloc(CHECK_ROWS * sizeof(int64_t)), (float *)malloc(CHECK_ROWS * sizeof(float))};
    if (!hc.sum || !hc.sum_abs || !hc.out) { fprintf(stderr, "out of host memory\n"); exit(1); }
    double scale = input_scale(opt.dist);
    int exact = opt.dist == DIST_INTS;
    for (int i = 0; i < count; i++) {
        Shape s = shapes[i];
        for (int lib = 0; lib < 2; lib++) {
            char variant[64];
            snprintf(variant, sizeof variant, "%s_%zux%zu", lib ? "cub" : "ours", s.rows, s.cols);
            RowJob j = {lib, in.d_in, s, d_out};
            Report r = new_report(&opt, variant, s.n, (double)(s.n + s.rows) * sizeof(float)); // read + written
            rows_poison(&j);
            rows_work(&j);
            CUDA_CHECK(cudaDeviceSynchronize());
            check_rows(&j, &hc, scale, exact, &r);
            if (!opt.check_only && r.pass) {
                time_work(&opt, rows_poison, rows_work, &j, &r);
                check_rows(&j, &hc, scale, exact, &r); // the last timed run
            }
            report_result(&opt, &r);
        }
    }
    free(hc.sum);
    free(hc.sum_abs);
    free(hc.out);
    free((void *)hc.h);
    CUDA_CHECK(cudaFree(g_cub_temp));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(g_counters));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson_shape(argc, argv, &info, run); }
