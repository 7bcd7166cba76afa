/*
 * Lesson 17: row reduction -- one sum per row of a matrix, in one launch.
 *
 * What changed since lesson 16: the answer is one float per row of a
 * rows x cols row-major matrix, the shape softmax, layernorm and losses need.
 * Rows of at most 512 floats (one pass of a warp: 32 lanes x UNROLL float4)
 * get a warp each: shuffles only, no barrier. Longer rows get a block each;
 * when there are too few rows to fill the GPU (128 x 2^20), a row is split
 * over several blocks and the row's last block adds its partials in a fixed
 * order (lesson 12's last-block-done, one counter per row). As in lesson 12,
 * a matrix of up to 2 x L2 is read evict-first. Every row sum is checked
 * (ints: exactly) and timed against cub::DeviceSegmentedReduce::Sum.
 *
 * The flaw that remains: one GPU. Lesson 18 spreads the work over several.
 *
 *     make lesson17 && ./lesson17     # 65536x32 65536x128 4096x4096 128x2^20 1000x1001
 *     ./lesson17 -m 1000 -k 1001      # one shape (-m ROWS -k COLS)
 *     ./lesson17 -n 2^20+3 --check    # N floats as ceil(N/32)x32, ceil(N/4096)x4096, 1xN
 */
#include "harness.h"
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#define UNROLL 4                        // float4 loads in flight per thread and trip (lesson 11)
#define WARP_MAX_COLS (32 * 4 * UNROLL) // 512: a warp covers such a row in one trip
#define MAX_SHAPES 5
// Matrices up to this many times the L2 size are read with __ldcs (evict-first,
// lesson 12's rule: the lines they bring in are the first to go, instead of
// the flush buffer's dirty ones); larger ones with __ldg. 0: __ldg always.
#ifndef STREAM_BELOW_L2
#define STREAM_BELOW_L2 2
#endif

// ---- kernel ---------------------------------------------------------------

// This thread's share of p[0..len), summed by `count` threads of which this is
// number t: scalar head up to the first 16-byte boundary (rows start anywhere:
// cols may be odd, --offset may be set), float4 body with UNROLL loads in
// flight, scalar tail. stream: evict-first loads (__ldcs) instead of __ldg.
__device__ __forceinline__ float range_sum(const float *p, size_t len, unsigned int t, unsigned int count, int stream)
{
    size_t head = ((16 - ((uintptr_t)p & 15)) & 15) / 4;
    if (head > len) head = len;
    const float4 *body = (const float4 *)(p + head);
    size_t n4 = (len - head) / 4, tail = head + 4 * n4;
    float s = 0.0f;
    if (t < head) s += p[t];
    size_t i = t;
    for (; i + (size_t)(UNROLL - 1) * count < n4; i += (size_t)UNROLL * count) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) // all loads issued first
            v[u] = stream ? __ldcs(&body[i + u * count]) : __ldg(&body[i + u * count]);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) s += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    for (; i < n4; i += count) {
        float4 v = stream ? __ldcs(&body[i]) : __ldg(&body[i]);
        s += (v.x + v.y) + (v.z + v.w);
    }
    if (t < len - tail) s += p[tail + t];
    return s;
}

// Full mask: every lane of the warp calls this together.
__device__ __forceinline__ float warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
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

// Row r is in[r*cols, min((r+1)*cols, n)): the last row may be short.
__device__ __forceinline__ size_t row_length(size_t r, size_t cols, size_t n)
{
    size_t start = r * cols;
    return n - start < cols ? n - start : cols;
}

// Short rows: warp w sums rows w, w + warps, ... The loop bound is the same
// for all 32 lanes, so every lane reaches the full-mask shuffles.
__global__ void rows_warp_kernel(const float *in, size_t n, size_t rows, size_t cols, int stream, float *out)
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
__global__ void rows_block_kernel(const float *in, size_t n, size_t cols, unsigned int chunks, size_t chunk_len,
                                  int stream, float *partials, unsigned int *counters, float *out)
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
static int g_block, g_warp_blocks, g_row_blocks; // SMs x resident blocks of each kernel
static float *g_partials;
static unsigned int *g_counters;

// How many blocks share a long row: enough for one full wave of resident
// blocks when rows are few, but never less than one UNROLL trip per thread.
static unsigned int chunks_for(Shape s, size_t *chunk_len)
{
    *chunk_len = s.cols;
    if (s.rows == 0 || s.cols == 0) return 1;
    size_t want = s.rows < (size_t)g_row_blocks ? (size_t)g_row_blocks / s.rows : 1;
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
    int stream = (double)s.n * sizeof(float) <= STREAM_BELOW_L2 * (double)g_dev.l2_bytes;
    if (s.cols <= WARP_MAX_COLS) {
        size_t warps_per_block = (size_t)g_block / 32, want = (s.rows + warps_per_block - 1) / warps_per_block;
        int blocks = want < (size_t)g_warp_blocks ? (int)want : g_warp_blocks;
        rows_warp_kernel<<<blocks, g_block>>>(d_in, s.n, s.rows, s.cols, stream, d_out);
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

// Exact row sums: every input is an integer times a power-of-two scale
// (harness.h), so int64 sums of those integers are exact.
static void host_rows(const float *h, Shape s, double scale, int64_t *sum, int64_t *sum_abs)
{
    for (size_t r = 0; r < s.rows; r++) {
        size_t start = r * s.cols, len = s.n - start < s.cols ? s.n - start : s.cols;
        int64_t a = 0, b = 0;
        for (size_t c = 0; c < len; c++) {
            int64_t k = (int64_t)((double)h[start + c] / scale);
            a += k;
            b += k < 0 ? -k : k;
        }
        sum[r] = a;
        sum_abs[r] = b;
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

// Every row must pass the harness rule (ints: equal; uniform: within 1e-5 of
// its sum |x|). The line shows the worst row (relative to its tolerance).
static void check_rows(RowJob *j, const int64_t *sum, const int64_t *sum_abs, double scale, int exact, float *h_out,
                       Report *r)
{
    if (j->s.rows) CUDA_CHECK(cudaMemcpy(h_out, j->d_out, j->s.rows * sizeof(float), cudaMemcpyDeviceToHost));
    double worst = -1.0;
    size_t bad = 0;
    r->pass = 1;
    r->result = 0.0f;
    r->expected = 0.0;
    r->tol = exact ? -1.0 : 0.0;
    for (size_t i = 0; i < j->s.rows; i++) {
        double want = (double)sum[i] * scale, tol = exact ? -1.0 : 1e-5 * (double)sum_abs[i] * scale;
        int ok = check_result(h_out[i], want, tol);
        double score = ok ? (tol > 0 ? fabs(h_out[i] - want) / tol : 0.0) : INFINITY;
        if (!ok) bad++;
        if (score > worst) {
            worst = score;
            r->result = h_out[i];
            r->expected = want;
            r->tol = tol;
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
    static const size_t listed[MAX_SHAPES][2] = {{65536, 32}, {65536, 128}, {4096, 4096}, {128, 1 << 20}, {1000, 1001}};
    Shape shapes[MAX_SHAPES];
    int count = 0;
    g_block = opt.block;
    if (opt.have_shape) {
        shapes[count++] = shape(opt.rows, opt.cols, opt.rows * opt.cols);
    } else if (opt.have_n) { // N elements, three ways; a short last row holds the remainder
        size_t n = opt.n, c32 = 32, c4k = 4096;
        shapes[count++] = shape((n + c32 - 1) / c32, c32, n);
        shapes[count++] = shape((n + c4k - 1) / c4k, c4k, n);
        shapes[count++] = shape(1, n, n);
    } else {
        for (int i = 0; i < MAX_SHAPES; i++) shapes[count++] = shape(listed[i][0], listed[i][1], listed[i][0] * listed[i][1]);
    }
    size_t most_n = 0, most_rows = 1;
    for (int i = 0; i < count; i++) {
        if (shapes[i].n > most_n) most_n = shapes[i].n;
        if (shapes[i].rows > most_rows) most_rows = shapes[i].rows;
    }
    opt.n = most_n; // one input; every shape reads a prefix of it
    Input in = make_input_extra(&opt, most_rows * sizeof(float));

    int occ = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, rows_warp_kernel, g_block, 0));
    g_warp_blocks = occ * g_dev.sm_count > 0 ? occ * g_dev.sm_count : 1;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, rows_block_kernel, g_block, 0));
    g_row_blocks = occ * g_dev.sm_count > 0 ? occ * g_dev.sm_count : 1;
    // Split rows only happen below g_row_blocks rows, with rows x chunks <= g_row_blocks.
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)g_row_blocks * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_counters, (size_t)g_row_blocks * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_counters, 0, (size_t)g_row_blocks * sizeof(unsigned int))); // once; count_done leaves them 0
    float *d_out = NULL;
    CUDA_CHECK(cudaMalloc((void **)&d_out, most_rows * sizeof(float)));
    for (int i = 0; i < count; i++) {
        size_t chunk_len, bytes = 0;
        if (shapes[i].cols > WARP_MAX_COLS && shapes[i].rows * chunks_for(shapes[i], &chunk_len) > 0x7fffffffu) {
            fprintf(stderr, "%s: %zu rows is more than one launch can take\n", info.lesson, shapes[i].rows);
            exit(2);
        }
        if (shapes[i].rows) rows_cub(NULL, &bytes, in.d_in, shapes[i], d_out); // temp storage, outside any timing
        if (bytes > g_cub_bytes) g_cub_bytes = bytes;
    }
    CUDA_CHECK(cudaMalloc(&g_cub_temp, g_cub_bytes > 0 ? g_cub_bytes : 1));

    float *h = copy_input_to_host(&in), *h_out = (float *)malloc(most_rows * sizeof(float));
    int64_t *sum = (int64_t *)malloc(most_rows * sizeof(int64_t)), *sum_abs = (int64_t *)malloc(most_rows * sizeof(int64_t));
    if (!h_out || !sum || !sum_abs) { fprintf(stderr, "out of host memory\n"); exit(1); }
    double scale = input_scale(opt.dist);
    for (int i = 0; i < count; i++) {
        Shape s = shapes[i];
        host_rows(h, s, scale, sum, sum_abs);
        for (int lib = 0; lib < 2; lib++) {
            char variant[64];
            snprintf(variant, sizeof variant, "%s_%zux%zu", lib ? "cub" : "ours", s.rows, s.cols);
            RowJob j = {lib, in.d_in, s, d_out};
            Report r = new_report(&opt, variant, s.n, (double)(s.n + s.rows) * sizeof(float)); // read + written
            rows_poison(&j);
            rows_work(&j);
            CUDA_CHECK(cudaDeviceSynchronize());
            check_rows(&j, sum, sum_abs, scale, opt.dist == DIST_INTS, h_out, &r);
            if (!opt.check_only && r.pass) {
                time_work(&opt, rows_poison, rows_work, &j, &r);
                check_rows(&j, sum, sum_abs, scale, opt.dist == DIST_INTS, h_out, &r); // the last timed run
            }
            report_result(&opt, &r);
        }
    }
    free(sum);
    free(sum_abs);
    free(h_out);
    free(h);
    CUDA_CHECK(cudaFree(g_cub_temp));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(g_counters));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson_shape(argc, argv, &info, run); }
