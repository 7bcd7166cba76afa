/*
 * Lesson 17: row reduction -- one sum per row of a matrix, in one launch.
 *
 * What changed: one float per row of a rows x cols row-major matrix, the
 * shape softmax, layernorm and losses need. Who shares a row depends on its
 * length, so that every warp keeps whole, coalesced loads in flight: narrow
 * rows (at most 32 loads) get G lanes each, one warp load covering 32/G rows;
 * medium rows (up to WARP_MAX_COLS floats) a warp; long rows a block, or
 * several when too few rows fill the GPU (lesson 12's last block done, a
 * counter per row). Timed against cub::DeviceSegmentedReduce::Sum.
 * The flaw that remains: one GPU. Lesson 18 spreads the work over several.
 *
 *     make lesson17 && ./lesson17   # widths 1 .. 2^20 (about 2^26 floats each), then 1000x1001
 *     ./lesson17 -m 1000 -k 1001    # one shape;  ./lesson17 -n 2^20+3 --check: N floats six ways
 */
#include "harness.h"
#include "rows.h" // Shape, the shape list, the exact per-row check, run_rows (host only)
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

// The one configuration, each value from the measurement named (earlier builds: lab/17_row_splits.md).
#define GROUP_BYTES 128    // narrow rows: bytes a lane loads before adding (results/tune-lesson17-nvidia-h200.txt)
#define GROUP_MAX_SLOTS 32 // narrow rows: at most this many loads, one a lane (results/tune-lesson17-nvidia-h200.txt)
#define UNROLL 8           // medium, long rows: float4s in flight a thread (results/tune-lesson17-nvidia-h200.txt)
#define WARP_MAX_COLS 2048 // medium rows: up to this many floats, a warp each (results/tune-lesson17-nvidia-h200.txt: 4096 slower; no timed row has 1025-2048 floats)
#define STREAM_BELOW_L2 2  // up to this x L2: evict-first __ldcs, else __ldg (measured on lesson 12's loop, which keeps __ldg: results/tune-lesson12-nvidia-h200.txt)
#define FULL_MASK 0xffffffffu // all 32 lanes take part in every shuffle below
static_assert(GROUP_BYTES % 16 == 0 && GROUP_BYTES >= 16 && GROUP_MAX_SLOTS <= 32, "GROUP_BYTES / 16, slots <= 32");
static __device__ float warp_sum(float v);                                        // lesson 12's, at the bottom
static __device__ unsigned int count_done(unsigned int *retired, unsigned int m); // lesson 12's, at the bottom

// ---- kernels --------------------------------------------------------------

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
__device__ __forceinline__ float vec_total(float4 v, int V)
{
    return V == 4 ? (v.x + v.y) + (v.z + v.w) : V == 2 ? v.x + v.y : v.x;
}

// A row of cols floats is `slots` loads of V floats; it gets G = 2^lg lanes (the smallest power
// of two >= slots), one load each, so one warp load covers 32/G whole rows, a row-group (at 32
// floats: 8 lanes x float4, 4 rows). A trip loads U = GROUP_BYTES / (4V) row-groups before it adds
// any, then adds each row within its G lanes. A lane with nothing of its own to load still loads
// (inside the matrix) and adds 0: no branch splits the run of loads, and every lane shuffles.
__device__ __forceinline__ void group_rows(const float *in, size_t n, size_t rows, size_t cols, int lg, float *out,
                                           const int V, const int stream)
{
    const int U = GROUP_BYTES / (4 * V); // a constant: V is one
    unsigned int lane = threadIdx.x & 31, g = lane >> lg, k = lane & ((1u << lg) - 1); // row g of the group, load k
    size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    size_t warps = ((size_t)gridDim.x * blockDim.x) >> 5;
    unsigned int per_group = 32u >> lg, per_trip = per_group * U, slots = (unsigned int)cols / V;
    size_t full = n / cols < rows ? n / cols : rows; // rows of full length (cols > 0: the launcher)
    // Offsets inside a trip stay below U x 32 x V floats: 32-bit arithmetic, a few instructions a load.
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
        // A group is an aligned run of G lanes: lane ^ off (off < G) stays inside it.
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

// Narrow rows (at most GROUP_MAX_SLOTS loads of vec floats, vec = 4 only if
// every row starts 16-byte aligned): any grid of whole warps, striding over
// trips of row-groups; each lane reads its loads, each group's first lane
// writes out[r]. Any n. __launch_bounds__: -b 1024 needs <= 64 registers.
__global__ void __launch_bounds__(1024) rows_group_kernel(const float *in, size_t n, size_t rows, size_t cols, int vec,
                                                          int lg, int stream, float *out)
{
    switch (2 * vec + (stream != 0)) { // six copies of the loop, V and the load kind constant in each
    case 8: group_rows(in, n, rows, cols, lg, out, 4, 0); break;
    case 9: group_rows(in, n, rows, cols, lg, out, 4, 1); break;
    case 4: group_rows(in, n, rows, cols, lg, out, 2, 0); break;
    case 5: group_rows(in, n, rows, cols, lg, out, 2, 1); break;
    case 2: group_rows(in, n, rows, cols, lg, out, 1, 0); break;
    default: group_rows(in, n, rows, cols, lg, out, 1, 1); break;
    }
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

// Medium rows: any grid of whole warps; warp w sums rows w, w + warps, ...
// with range_sum's loads, and its lane 0 writes out[r]. The loop bound is the
// same for all 32 lanes, so every lane reaches the full-mask shuffles.
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

// ---- launch ---------------------------------------------------------------

static int g_block, g_group_blocks, g_warp_blocks, g_row_blocks; // block size; one wave of each kernel's blocks
static float *g_partials;         // the split rows' partials, one per block
static unsigned int *g_counters;  // one blocks-done counter per split row, zeroed once in run()

// Which kernel sums the rows of s; for narrow rows also the load width (4 only if every
// row start is 16-byte aligned: cols % 4 == 0, --offset a multiple of 4) and log2 of the lanes per row.
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

// Blocks for `warps` warps of work, at most one wave: the group and warp kernels loop over the rest.
static unsigned int blocks_for(size_t warps, int wave)
{
    size_t per_block = (size_t)g_block / 32, want = (warps + per_block - 1) / per_block;
    return want < (size_t)wave ? (unsigned int)want : (unsigned int)wave;
}

// How many blocks share a long row: with fewer rows than a wave of resident blocks, k = wave / rows
// rounded down (rows x k <= one wave), at least one UNROLL trip per thread. More waves helped only the
// fewest rows and slowed 1024 and 2048 rows (results/tune-lesson17-rowwaves-nvidia-h200.txt, lab/17_*).
static unsigned int chunks_for(Shape s, size_t *chunk_len)
{
    *chunk_len = s.cols;
    if (s.rows == 0 || s.cols == 0) return 1;
    size_t want = s.rows < (size_t)g_row_blocks ? (size_t)g_row_blocks / s.rows : 1;
    size_t min_chunk = (size_t)g_block * 4 * UNROLL, most = (s.cols + min_chunk - 1) / min_chunk;
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
        // rows x chunks < 2^31: one wave if split, else a block per row of > 2048 floats (2^31 rows: 16 TiB)
        rows_block_kernel<<<(unsigned int)(s.rows * chunks), g_block>>>(d_in, s.n, s.cols, chunks, chunk_len, stream,
                                                                        g_partials, g_counters, d_out);
    }
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

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"17_row_reduction", BLOCK_RUNTIME, 256, NULL};

// One run per combination of the -n, -s, -d, --offset and -b values: every shape (rows.h), ours and CUB's.
static int run(Options opt)
{
    Shape shapes[MAX_SHAPES];
    size_t most_rows;
    int count = row_shapes(&opt, shapes, &most_rows); // opt.n: the largest shape; each reads a prefix of one input
    Input in = make_input_extra(&opt, most_rows * sizeof(float));
    g_block = opt.block;
    g_group_blocks = resident_blocks((const void *)rows_group_kernel, g_block);
    g_warp_blocks = resident_blocks((const void *)rows_warp_kernel, g_block);
    g_row_blocks = resident_blocks((const void *)rows_block_kernel, g_block);
    // A split has fewer rows than g_row_blocks, and rows x chunks <= g_row_blocks (chunks_for).
    CUDA_CHECK(cudaMalloc((void **)&g_partials, g_row_blocks * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_counters, g_row_blocks * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_counters, 0, g_row_blocks * sizeof(unsigned int))); // once; count_done leaves them 0
    float *d_out = NULL;
    CUDA_CHECK(cudaMalloc((void **)&d_out, most_rows * sizeof(float)));
    for (int i = 0; i < count; i++) rows_cub(in.d_in, shapes[i], d_out); // g_cub_temp NULL: sizes only, untimed
    CUDA_CHECK(cudaMalloc(&g_cub_temp, g_cub_bytes > 0 ? g_cub_bytes : 1));
    compare_rows(&opt, &in, shapes, count, d_out, "ours", rows_gpu, "cub", rows_cub); // ours_RxC, cub_RxC
    CUDA_CHECK(cudaFree(g_cub_temp));
    g_cub_temp = NULL; // the next run sizes it again
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(g_counters));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson_shape(argc, argv, &info, run); }

// ---- unchanged from lesson 12 ---------------------------------------------

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
