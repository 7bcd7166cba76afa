/*
 * Lab 17: how many blocks should share a long row? Lesson 17's block path, timed at several splits.
 *
 * Lesson 17 sums a row of more than WARP_MAX_COLS floats with a block, and,
 * when there are fewer rows than one wave of resident blocks, splits each row
 * into k chunks, a block each, the row's last block adding their partials
 * (lesson 12's count_done, one counter per row). How large k? The lesson takes
 * W = 1 wave, k = W x wave / rows rounded down. This program runs the lesson's
 * block kernel, unchanged, with k from each rule below, checked on every row
 * as the lesson checks, and CUB's segmented reduce beside it:
 *   ours_RxC  W = 1, k rounded down: the lesson's rule
 *   wWup_RxC  W = 1, 2, 4 or 8 waves, k = ceil(W x wave / rows): the builds of
 *             results/tune-lesson17-rowwaves-nvidia-h200.txt
 *   cub_RxC   cub::DeviceSegmentedReduce::Sum, as lesson 17 calls it
 * Shapes: N floats (-n, default 2^26) as 64, 256, 1024, 2048, 4096 and 16384
 * rows, or one -m ROWS -k COLS. Findings: lab/17_row_splits.md.
 *
 *     make lab_17_row_splits && ./lab_17_row_splits -r 50 --flush clean
 */
#include "harness.h"
#include "rows.h" // Shape, the exact per-row check, run_rows (host only)
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#define UNROLL 8          // lesson 17's: float4 loads in flight a thread (results/tune-lesson17-nvidia-h200.txt)
#define STREAM_BELOW_L2 2 // lesson 17's: up to this x L2, evict-first __ldcs (results/tune-lesson12-nvidia-h200.txt)
#define FULL_MASK 0xffffffffu // all 32 lanes take part in every shuffle below
static __device__ float warp_sum(float v);                                        // lesson 12's, at the bottom
static __device__ unsigned int count_done(unsigned int *retired, unsigned int m); // lesson 12's, at the bottom

// ---- lesson 17's block path, unchanged --------------------------------------

// Row r is in[r*cols, min((r+1)*cols, n)): the last row may be short.
__device__ __forceinline__ size_t row_length(size_t r, size_t cols, size_t n)
{
    size_t start = r * cols;
    return n - start < cols ? n - start : cols;
}

// V floats from p (V = 4, 2 or 1; p aligned to 4V bytes), the rest 0; stream: __ldcs, else __ldg.
__device__ __forceinline__ float4 load_vec(const float *p, int V, int stream)
{
    if (V == 4) return stream ? __ldcs((const float4 *)p) : __ldg((const float4 *)p);
    if (V == 2) {
        float2 a = stream ? __ldcs((const float2 *)p) : __ldg((const float2 *)p);
        return make_float4(a.x, a.y, 0.0f, 0.0f);
    }
    return make_float4(stream ? __ldcs(p) : __ldg(p), 0.0f, 0.0f, 0.0f);
}

// Thread t of `count`'s share of p[0..len): scalar head to a 16-byte boundary (rows start anywhere),
// float4 body, scalar tail. A trip issues all UNROLL loads before adding; past the end they give 0.
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

// differs from lesson 12's: the block size is chosen at run time (-b), so the slots are sized for the most warps, 32
__device__ float block_sum(float v)
{
    __shared__ float warp_sums[32]; // one slot per warp, not one per thread
    unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads(); // the one barrier: every warp's slot written before warp 0 reads them
    if (warp == 0) // the whole of warp 0: its 32 lanes shuffle together
        v = warp_sum(lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f); // lanes past the last warp add 0
    // No barrier at the end: a second call must come after one (rows_block_kernel).
    return v;
}

// Long rows: grid rows x chunks blocks; block b sums chunk b % chunks of row
// b / chunks. One chunk: thread 0 writes out[row]. Several: each block stores
// its partial, and the row's last block adds them in a fixed order (the same
// bits whichever block is last) and writes out[row].
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
        t += __ldcg(&partials[row * chunks + c]); // at L2; count_done's acquire made them visible
    t = block_sum(t);
    if (threadIdx.x == 0) out[row] = t; // count_done left the row's counter at 0 for the next launch
}

// ---- the splits -------------------------------------------------------------

static int g_block, g_row_blocks;  // block size; one wave of rows_block_kernel's blocks
static int g_waves, g_round_up;    // the rule being timed: W waves, k rounded up or down
static float *g_partials;
static unsigned int *g_counters;

// Lesson 17's chunks_for with W waves and a choice of rounding: k blocks share
// each row when the rows are fewer than W waves, at least one UNROLL trip per
// thread each, chunks a multiple of 4 floats (they keep the row's alignment).
static unsigned int chunks_for(Shape s, int waves, int round_up, size_t *chunk_len)
{
    *chunk_len = s.cols;
    if (s.rows == 0 || s.cols == 0) return 1;
    size_t blocks = (size_t)waves * g_row_blocks;
    size_t want = s.rows < blocks ? (round_up ? (blocks + s.rows - 1) / s.rows : blocks / s.rows) : 1;
    size_t min_chunk = (size_t)g_block * 4 * UNROLL, most = (s.cols + min_chunk - 1) / min_chunk;
    if (want > most) want = most;
    if (want < 1) want = 1;
    *chunk_len = ((s.cols + want - 1) / want + 3) / 4 * 4;
    return (unsigned int)((s.cols + *chunk_len - 1) / *chunk_len);
}

static void rows_split(const float *d_in, Shape s, float *d_out)
{
    if (s.rows == 0) return;
    if (s.cols == 0) { // rows of no floats: every sum is 0
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, s.rows * sizeof(float), 0));
        return;
    }
    int stream = (double)s.n * sizeof(float) <= STREAM_BELOW_L2 * (double)g_dev.l2_bytes;
    size_t chunk_len;
    unsigned int chunks = chunks_for(s, g_waves, g_round_up, &chunk_len);
    rows_block_kernel<<<(unsigned int)(s.rows * chunks), g_block>>>(d_in, s.n, s.cols, chunks, chunk_len, stream,
                                                                    g_partials, g_counters, d_out);
    CUDA_CHECK_LAST();
}

// CUB wants each row's begin and end offsets: computed on the fly, no array to read beside the matrix.
struct RowBegin { long long cols; __host__ __device__ long long operator()(long long r) const { return r * cols; } };
struct RowEnd {
    long long cols, n;
    __host__ __device__ long long operator()(long long r) const { return (r + 1) * cols < n ? (r + 1) * cols : n; }
};
static void *g_cub_temp;   // CUB's scratch; while NULL, rows_cub only asks CUB how much it needs
static size_t g_cub_bytes; // the most any shape has asked for

static void rows_cub(const float *d_in, Shape s, float *d_out)
{
    if (s.rows == 0) return; // no rows, nothing to ask CUB
    thrust::counting_iterator<long long> r0(0);
    RowBegin b = {(long long)s.cols};
    RowEnd e = {(long long)s.cols, (long long)s.n};
    size_t bytes = g_cub_bytes;
    CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(g_cub_temp, bytes, d_in, d_out, (int64_t)s.rows,
                                               thrust::make_transform_iterator(r0, b),
                                               thrust::make_transform_iterator(r0, e)));
    if (!g_cub_temp && bytes > g_cub_bytes) g_cub_bytes = bytes;
}

// ---- main -------------------------------------------------------------------

static const LessonInfo info = {"lab_17_row_splits", BLOCK_RUNTIME, 256, NULL};

static const int RULES[][2] = {{1, 0}, {1, 1}, {2, 1}, {4, 1}, {8, 1}}; // {W, rounded up}: ours, w1up .. w8up
#define N_RULES ((int)(sizeof RULES / sizeof RULES[0]))

static int run(Options opt)
{
    static const size_t row_counts[] = {64, 256, 1024, 2048, 4096, 16384};
    Shape shapes[MAX_SHAPES];
    int count = 0;
    if (opt.have_shape) {
        shapes[count++] = shape(opt.rows, opt.cols, opt.rows * opt.cols);
    } else { // N floats in rows of ceil(N / r), the last one short (2^26: the shapes of the results file)
        for (size_t i = 0; i < sizeof row_counts / sizeof row_counts[0]; i++) {
            size_t cols = (opt.n + row_counts[i] - 1) / row_counts[i];
            shapes[count++] = shape(cols ? (opt.n + cols - 1) / cols : row_counts[i], cols, opt.n);
        }
    }
    size_t most_rows = 1, most_n = 0, most_blocks = 1;
    for (int i = 0; i < count; i++) {
        if (shapes[i].rows > most_rows) most_rows = shapes[i].rows;
        if (shapes[i].n > most_n) most_n = shapes[i].n;
    }
    opt.n = most_n; // one input; every shape reads a prefix of it
    Input in = make_input_extra(&opt, most_rows * sizeof(float));
    g_block = opt.block;
    g_row_blocks = resident_blocks((const void *)rows_block_kernel, g_block);
    for (int i = 0; i < count; i++)
        for (int k = 0; k < N_RULES; k++) {
            size_t chunk_len, blocks = shapes[i].rows * chunks_for(shapes[i], RULES[k][0], RULES[k][1], &chunk_len);
            if (blocks > 0x7fffffffu) {
                fprintf(stderr, "%s: %zu rows is more than one launch can take\n", g_prog, shapes[i].rows);
                exit(2);
            }
            if (blocks > most_blocks) most_blocks = blocks;
        }
    CUDA_CHECK(cudaMalloc((void **)&g_partials, most_blocks * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_counters, most_rows * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_counters, 0, most_rows * sizeof(unsigned int))); // once; count_done leaves them 0
    float *d_out = NULL;
    CUDA_CHECK(cudaMalloc((void **)&d_out, most_rows * sizeof(float)));
    for (int i = 0; i < count; i++) rows_cub(in.d_in, shapes[i], d_out); // g_cub_temp NULL: sizes only, untimed
    CUDA_CHECK(cudaMalloc(&g_cub_temp, g_cub_bytes > 0 ? g_cub_bytes : 1));
    if (!opt.csv)
        printf("one wave of rows_block_kernel: %d SMs x %d blocks of %d threads\n", g_dev.sm_count,
               g_row_blocks / (g_dev.sm_count > 0 ? g_dev.sm_count : 1), g_block);
    HostCheck hc = host_check_new(&opt, &in);
    for (int i = 0; i < count; i++) {
        for (int k = 0; k < N_RULES; k++) {
            char name[16];
            if (k == 0) snprintf(name, sizeof name, "ours");
            else snprintf(name, sizeof name, "w%dup", RULES[k][0]);
            g_waves = RULES[k][0];
            g_round_up = RULES[k][1];
            run_rows(&opt, &hc, name, rows_split, in.d_in, shapes[i], d_out);
        }
        run_rows(&opt, &hc, "cub", rows_cub, in.d_in, shapes[i], d_out);
    }
    host_check_free(&hc);
    CUDA_CHECK(cudaFree(g_cub_temp));
    g_cub_temp = NULL; // the next run sizes it again
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(g_counters));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson_shape(argc, argv, &info, run); }

// ---- unchanged from lesson 12 -----------------------------------------------

// The sum of v over this warp's 32 lanes, in lane 0 (lesson 10); all 32 must call it.
__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1) // constant trip count: fully unrolled
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

// Counts a block done (releasing its partial, acquiring the others'); the one that sees m resets it to 0.
__device__ unsigned int count_done(unsigned int *retired, unsigned int m)
{
    unsigned int old;
#if __CUDA_ARCH__ < 700
    __threadfence();                   // release: the partial before the count
    old = atomicInc(retired, m);
    if (old == m) __threadfence();     // acquire: the partials after the count
#else
    // atom.global takes a global-space address: convert the generic pointer.
    size_t g = __cvta_generic_to_global(retired);
    asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(g), "r"(m) : "memory");
#endif
    return old;
}
