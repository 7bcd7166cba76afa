/*
 * Lesson 16: beyond sum -- one kernel skeleton, several combines.
 *
 * What changed since lesson 15: "+" becomes a parameter. A reduction needs an
 * identity and an associative combine; lesson 12's skeleton (float4 loads,
 * warp shuffles, one shared slot per warp, block partials combined in a fixed
 * order by the last block) stays as it is. Five combines: max and min (a NaN
 * anywhere gives NaN), argmax (ties go to the smallest index), mean and
 * variance by the Welford/Chan merge, and the online-softmax pair (running
 * max m, sum of exp(x - m)). A per-op hook, absorb(), takes a thread's 16
 * loaded values at once: softmax then needs one exp an element, Welford one
 * division per 16. Each op is checked against a host reference, exactly or
 * within a stated bound, and timed beside CUB in the same process; planted
 * NaNs, -infs and ties check the policies; a shifted input shows why Welford.
 *
 * The flaw that remains: one answer for the whole array. Softmax, layernorm
 * and losses want one per row: lesson 17.
 *
 *     make lesson16 && ./lesson16             # lines, then the variance table
 *     ./lesson16 -n 1000 -d uniform --check
 */
#include "harness.h"
#include <cub/device/device_reduce.cuh>

#define UNROLL 4             // float4 loads in flight per thread and trip (lesson 11)
#define SHIFT 1000.0f        // the large mean added for the variance test
#define NO_INDEX LLONG_MAX   // argmax of nothing: larger than any real index, so real ones win ties
#define LOG2E 1.44269504f    // log2(e) rounded to float: exp(x) = 2^(x log2 e)

enum { OP_MAX, OP_MIN, OP_ARGMAX, OP_MEANVAR, OP_SOFTMAX, OP_NAIVE, NUM_OPS };

// Welford's summary of some values: count, mean, and M2, the sum of squared
// deviations from that mean (variance = M2 / count). Empty: (0, 0, 0).
typedef struct { float n, mean, m2; } MeanVar;
// The online-softmax pair: running max m and s = sum of exp(x - m), so that
// s * exp(m) = sum of exp(x). Empty: (-inf, 0).
typedef struct { float m, s; } MaxSum;

// Our kernels carry one struct for every combine; each op reads and writes
// only its own fields (the compiler drops the rest from registers). CUB gets
// each op's own small type instead (MeanVar, MaxSum, its value/index pair).
typedef struct {
    long long i;   // argmax: index of v
    float v;       // max, min, argmax: the value so far
    MeanVar w;     // Welford
    MaxSum p;      // online softmax
    float sx, sxx; // naive variance: sum of x, sum of x*x
} State;

// ---- kernel ---------------------------------------------------------------

// 2^x in one instruction of the special-function unit (MUFU.EX2). exp2f(x)
// compiles to PTX's ex2.approx.f32 as well, but without .ftz the machine code
// wraps it in three more instructions (a compare, two predicated multiplies)
// that keep results below 2^-126 exact. Here such a term is nothing next to
// the final sum (at least 1, the largest element's own term): flush it to 0.
__device__ __forceinline__ float ex2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// The identity: combined with any state it gives that state back.
__host__ __device__ static inline State identity(int op)
{
    State t;
    t.i = NO_INDEX;
    t.v = op == OP_MIN ? INFINITY : -INFINITY;
    t.w.n = t.w.mean = t.w.m2 = 0.0f;
    t.p.m = -INFINITY; // no terms yet: exp sum 0, and any real x is larger
    t.p.s = 0.0f;
    t.sx = t.sxx = 0.0f;
    return t;
}

// One element as a state of its own (other ops' fields stay the identity's
// constants, which the compiler drops).
__device__ __forceinline__ State element(int op, float x, long long idx)
{
    State t = identity(op);
    if (op == OP_MAX || op == OP_MIN || op == OP_ARGMAX) { t.i = idx; t.v = x; }
    if (op == OP_MEANVAR) { t.w.n = 1.0f; t.w.mean = x; } // one value has no spread: m2 stays 0
    if (op == OP_SOFTMAX) { t.p.m = x; t.p.s = x == -INFINITY ? 0.0f : 1.0f; } // exp(x - x) = 1; -inf: empty
    if (op == OP_NAIVE) { t.sx = x; t.sxx = x * x; }
    return t;
}

// Chan, Golub & LeVeque's merge of two (count, mean, M2) summaries; with b one
// element it is Welford's update. Deviations are taken from the running mean,
// so a large mean never gets squared.
__device__ __forceinline__ MeanVar chan_merge(MeanVar a, MeanVar b)
{
    if (b.n == 0.0f) return a; // an empty side: 0/0 below would be NaN
    if (a.n == 0.0f) return b;
    float n = a.n + b.n;       // a float count: exact below 2^24, then off by 2^-24 relative
    float d = b.mean - a.mean, w = b.n / n;
    a.mean += d * w;
    a.m2 += b.m2 + d * d * a.n * w;
    a.n = n;
    return a;
}

// exp(mi - m): moves a sum taken relative to a max mi over to a max m >= mi.
// Equal maxima need no factor, which also keeps -inf - -inf (two empty
// sides) from ever reaching ex2 as NaN.
__device__ __forceinline__ float rescale(float mi, float m) { return mi == m ? 1.0f : ex2((mi - m) * LOG2E); }

// Both sides moved to the larger max: (m, s_a e^(m_a - m) + s_b e^(m_b - m)).
// Never overflows, and a NaN x (policy: s is NaN) is carried: fmaxf skips it
// in m, and its own side's factor is ex2(NaN).
__device__ __forceinline__ MaxSum softmax_merge(MaxSum a, MaxSum b)
{
    float m = fmaxf(a.m, b.m);
    MaxSum t = {m, a.s * rescale(a.m, m) + b.s * rescale(b.m, m)};
    return t;
}

// fmaxf/fminf return the other operand when one is NaN (IEEE maxNum), which
// silently drops it. Our policy: a NaN anywhere gives NaN, so a NaN wins here.
__device__ __forceinline__ float max_nan(float a, float b) { return (a > b || a != a) ? a : b; }
__device__ __forceinline__ float min_nan(float a, float b) { return (a < b || a != a) ? a : b; }

__device__ __forceinline__ State combine(int op, State a, State b)
{
    switch (op) {
    case OP_MAX: a.v = max_nan(a.v, b.v); return a;
    case OP_MIN: a.v = min_nan(a.v, b.v); return a;
    case OP_ARGMAX:
        // The larger value wins; equal values: the smaller index. The rule is
        // symmetric in a and b, so no combine order can change the answer.
        // (NaN is not handled here, as in CUB: exercise 16 does it for argmin.)
        return (b.v > a.v || (b.v == a.v && b.i < a.i)) ? b : a;
    case OP_MEANVAR: a.w = chan_merge(a.w, b.w); return a;
    case OP_SOFTMAX: a.p = softmax_merge(a.p, b.p); return a;
    default: // OP_NAIVE
        a.sx += b.sx;
        a.sxx += b.sxx;
        return a;
    }
}

// Moves the op's own fields down the warp. Every lane calls it: full mask.
__device__ __forceinline__ State shfl_down(int op, State t, int off)
{
    const unsigned int all = 0xffffffffu;
    if (op == OP_MAX || op == OP_MIN || op == OP_ARGMAX) t.v = __shfl_down_sync(all, t.v, off);
    if (op == OP_ARGMAX) t.i = __shfl_down_sync(all, t.i, off);
    if (op == OP_MEANVAR) {
        t.w.n = __shfl_down_sync(all, t.w.n, off);
        t.w.mean = __shfl_down_sync(all, t.w.mean, off);
        t.w.m2 = __shfl_down_sync(all, t.w.m2, off);
    }
    if (op == OP_SOFTMAX) {
        t.p.m = __shfl_down_sync(all, t.p.m, off);
        t.p.s = __shfl_down_sync(all, t.p.s, off);
    }
    if (op == OP_NAIVE) {
        t.sx = __shfl_down_sync(all, t.sx, off);
        t.sxx = __shfl_down_sync(all, t.sxx, off);
    }
    return t;
}

// A partial written by another block: each field read through L2
// (ld.global.cg), never from a stale L1 line.
__device__ __forceinline__ State load_partial(int op, const State *p)
{
    State t = identity(op);
    if (op == OP_MAX || op == OP_MIN || op == OP_ARGMAX) t.v = __ldcg(&p->v);
    if (op == OP_ARGMAX) t.i = __ldcg(&p->i);
    if (op == OP_MEANVAR) { t.w.n = __ldcg(&p->w.n); t.w.mean = __ldcg(&p->w.mean); t.w.m2 = __ldcg(&p->w.m2); }
    if (op == OP_SOFTMAX) { t.p.m = __ldcg(&p->p.m); t.p.s = __ldcg(&p->p.s); }
    if (op == OP_NAIVE) { t.sx = __ldcg(&p->sx); t.sxx = __ldcg(&p->sxx); }
    return t;
}

__device__ __forceinline__ State warp_combine(int op, State t)
{
    for (int off = 16; off > 0; off >>= 1) t = combine(op, t, shfl_down(op, t, off));
    return t; // lane 0 holds the warp's result
}

// The block's result, valid in thread 0: one shared slot per warp.
__device__ __forceinline__ State block_combine(int op, State t)
{
    __shared__ State slot[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    t = warp_combine(op, t);
    if (lane == 0) slot[warp] = t;
    __syncthreads(); // every warp's slot is written before warp 0 reads them
    if (warp == 0) t = warp_combine(op, lane < (int)(blockDim.x >> 5) ? slot[lane] : identity(op));
    return t;
}

__device__ __forceinline__ void add4(int op, State *acc, float4 v, long long e)
{
    *acc = combine(op, *acc, element(op, v.x, e));
    *acc = combine(op, *acc, element(op, v.y, e + 1));
    *acc = combine(op, *acc, element(op, v.z, e + 2));
    *acc = combine(op, *acc, element(op, v.w, e + 3));
}

// Online softmax, one trip of k float4s: the trip's max first, so the running
// sum is rescaled at most once a trip (if the max grew); then each value adds
// 2^(x log2e - m log2e): one FMNMX, FFMA, MUFU.EX2 and FADD per element.
__device__ __forceinline__ void softmax_absorb(MaxSum *a, const float4 *v, int k)
{
    float m = a->m;
#pragma unroll
    for (int u = 0; u < k; u++) m = fmaxf(m, fmaxf(fmaxf(v[u].x, v[u].y), fmaxf(v[u].z, v[u].w))); // skips NaNs
    a->s *= rescale(a->m, m);
    a->m = m;
    // m = -inf: all so far are -inf (or NaN); shift by 0, so -inf gives 2^-inf = 0
    float ml = m > -INFINITY ? m * LOG2E : 0.0f;
    float t = 0.0f;
#pragma unroll
    for (int u = 0; u < k; u++)
        t += (ex2(fmaf(v[u].x, LOG2E, -ml)) + ex2(fmaf(v[u].y, LOG2E, -ml))) +
             (ex2(fmaf(v[u].z, LOG2E, -ml)) + ex2(fmaf(v[u].w, LOG2E, -ml))); // a NaN x makes t NaN: the policy
    a->s += t;
}

// Welford, one trip of k float4s: the values' own M2 about their own mean (two
// passes over registers: 3 FADD + 1 FFMA an element), then one Chan merge, so
// one division a trip. Every difference is taken from K, a value near the data
// (the running mean; the trip's first value before there is one): x - K is
// exact for floats within a factor 2, so the sums hold numbers the size of the
// spread, never the mean. The large mean is rounded once a trip, when stored;
// that error reaches M2 in proportion to |mean| / spread (Chan et al.).
__device__ __forceinline__ void welford_absorb(MeanVar *a, const float4 *v, int k)
{
    float K = a->n > 0.0f ? a->mean : v[0].x;
    float d = 0.0f; // sum of (x - K)
#pragma unroll
    for (int u = 0; u < k; u++) d += ((v[u].x - K) + (v[u].y - K)) + ((v[u].z - K) + (v[u].w - K));
    float dm = d * (0.25f / k); // the trip's mean minus K (a power of 2 for k = 1, 2, 4: exact)
    float q = 0.0f;             // sum of (x - the trip's mean)^2
#pragma unroll
    for (int u = 0; u < k; u++) {
        float e0 = (v[u].x - K) - dm, e1 = (v[u].y - K) - dm, e2 = (v[u].z - K) - dm, e3 = (v[u].w - K) - dm;
        q = fmaf(e0, e0, fmaf(e1, e1, fmaf(e2, e2, fmaf(e3, e3, q))));
    }
    // chan_merge with b = (4k, K + dm, q) and d = dm (K is a->mean unless a is empty, when w = 1)
    float n = a->n + 4.0f * k, w = 4.0f * k / n;
    a->m2 += q + dm * dm * a->n * w;
    a->mean = K + dm * w;
    a->n = n;
}

// Argmax, one trip: a thread meets its elements in increasing index order, so
// within it only a strictly larger value wins. The trip's max first (one FMNMX
// an element, NaNs skipped as in combine); only when it beats acc (rarely, once
// acc is large), the first element holding it. Between threads, combine decides.
__device__ __forceinline__ void argmax_absorb(State *a, const float4 *v, int k, long long e, long long step)
{
    float m = a->v;
#pragma unroll
    for (int u = 0; u < k; u++) m = fmaxf(m, fmaxf(fmaxf(v[u].x, v[u].y), fmaxf(v[u].z, v[u].w)));
    if (m > a->v) {
        long long at = 0;
#pragma unroll
        for (int u = k - 1; u >= 0; u--) { // backwards: the first match in index order is written last
            long long b = e + u * step;
            at = v[u].w == m ? b + 3 : at;
            at = v[u].z == m ? b + 2 : at;
            at = v[u].y == m ? b + 1 : at;
            at = v[u].x == m ? b : at;
        }
        a->v = m;
        a->i = at;
    }
}

// One trip's k float4s, v[u] starting at element e + u * step, folded into acc:
// the per-op hook of the thread loop. Argmax, Welford and softmax summarise
// the trip first; the others take it one element at a time.
__device__ __forceinline__ void absorb(int op, State *acc, const float4 *v, int k, long long e, long long step)
{
    if (op == OP_ARGMAX) argmax_absorb(acc, v, k, e, step);
    else if (op == OP_MEANVAR) welford_absorb(&acc->w, v, k);
    else if (op == OP_SOFTMAX) softmax_absorb(&acc->p, v, k);
    else
        for (int u = 0; u < k; u++) add4(op, acc, v[u], e + u * step);
}

// Lesson 12's loads, with the combine as a parameter: the grid visits
// in[0..n) once; scalar head up to the first 16-byte boundary, float4 body
// with UNROLL loads in flight, scalar tail. Returns this thread's state.
__device__ __forceinline__ State thread_reduce(int op, const float *in, size_t n)
{
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t threads = (size_t)gridDim.x * blockDim.x;
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / 4; // floats before the boundary: 0..3
    if (head > n) head = n;
    const float4 *body = (const float4 *)(in + head);
    size_t n4 = (n - head) / 4, tail = head + 4 * n4;
    State acc = identity(op);
    if (tid < head) acc = combine(op, acc, element(op, in[tid], (long long)tid));
    size_t i = tid;
    for (; i + (UNROLL - 1) * threads < n4; i += UNROLL * threads) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = __ldg(&body[i + u * threads]); // all loads issued first
        absorb(op, &acc, v, UNROLL, (long long)(head + 4 * i), (long long)(4 * threads));
    }
    for (; i < n4; i += threads) {
        float4 v = __ldg(&body[i]);
        absorb(op, &acc, &v, 1, (long long)(head + 4 * i), 0);
    }
    if (tid < n - tail) acc = combine(op, acc, element(op, in[tail + tid], (long long)(tail + tid)));
    return acc;
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

// The skeleton: thread states, block combine, then lesson 12's last-block-done
// finish with the partials combined in a fixed order.
__device__ __forceinline__ void reduce_body(int op, const float *in, size_t n, State *partials,
                                            unsigned int *counter, State *out)
{
    State acc = block_combine(op, thread_reduce(op, in, n));

    __shared__ bool am_last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc;
        am_last = count_done(counter, gridDim.x - 1) == gridDim.x - 1;
    }
    __syncthreads(); // publishes am_last; block_combine's slots are free again
    if (!am_last) return;
    acc = identity(op); // fixed order: thread t takes partials t, t + blockDim, ...
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x) acc = combine(op, acc, load_partial(op, &partials[b]));
    acc = block_combine(op, acc);
    if (threadIdx.x == 0) *out = acc; // count_done left the counter at 0 for the next launch
}

// Blocks of 1024 threads an SM holds at once: 2 where an SM has 2048 thread
// slots (sm_80, sm_87, sm_90, sm_100, sm_103), 1 elsewhere (sm_75: 1024;
// sm_86, sm_89, sm_120: 1536). __launch_bounds__(1024, FULL_SM) then caps the
// registers at 65536 / 2048 = 32 a thread where that fills the SM.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 900 || \
                               __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030)
#define FULL_SM 2
#else
#define FULL_SM 1
#endif
// With 32 registers an H100 or H200 SM holds its full 2048 threads, and their
// loads in flight, for every op. Welford and softmax would take 40 left
// alone; at 32 they reorder, not spill (results/ptxas-lesson16-sm_90.txt).
#define KERNEL_ARGS const float *in, size_t n, State *partials, unsigned int *counter, State *out
#define REDUCE_KERNEL __global__ void __launch_bounds__(1024, FULL_SM)
REDUCE_KERNEL max_kernel(KERNEL_ARGS) { reduce_body(OP_MAX, in, n, partials, counter, out); }
REDUCE_KERNEL min_kernel(KERNEL_ARGS) { reduce_body(OP_MIN, in, n, partials, counter, out); }
REDUCE_KERNEL argmax_kernel(KERNEL_ARGS) { reduce_body(OP_ARGMAX, in, n, partials, counter, out); }
REDUCE_KERNEL meanvar_kernel(KERNEL_ARGS) { reduce_body(OP_MEANVAR, in, n, partials, counter, out); }
REDUCE_KERNEL softmax_kernel(KERNEL_ARGS) { reduce_body(OP_SOFTMAX, in, n, partials, counter, out); }
REDUCE_KERNEL naive_kernel(KERNEL_ARGS) { reduce_body(OP_NAIVE, in, n, partials, counter, out); }

// ---- launch ---------------------------------------------------------------

typedef void (*state_kernel)(KERNEL_ARGS);
static state_kernel const g_kernel[NUM_OPS] = {max_kernel, min_kernel, argmax_kernel,
                                               meanvar_kernel, softmax_kernel, naive_kernel};
static int g_block, g_max_blocks[NUM_OPS]; // SMs x resident blocks, per kernel
static State *g_partials, *g_state;        // block partials; the one result
static unsigned int *g_counter;
static void *g_cub_temp;
static size_t g_cub_bytes;

static int grid_for(int op, size_t n)
{
    size_t per_block = (size_t)g_block * 4 * UNROLL; // floats a block takes in one trip
    size_t want = (n + per_block - 1) / per_block;
    return want < (size_t)g_max_blocks[op] ? (int)(want > 0 ? want : 1) : g_max_blocks[op];
}

static void reduce_gpu(int op, const float *d_in, size_t n, State *d_out)
{
    if (n == 0) { // nothing to read: the answer is the identity, and no kernel runs
        static State id;
        id = identity(op);
        CUDA_CHECK(cudaMemcpy(d_out, &id, sizeof id, cudaMemcpyHostToDevice));
        return;
    }
    g_kernel[op]<<<grid_for(op, n), g_block>>>(d_in, n, g_partials, g_counter, d_out);
    CUDA_CHECK_LAST();
}

// CUB takes functors: the same merges and one-element summaries as ours, on
// each op's own small type, so CUB's loads, shuffles and shared memory carry
// 12 bytes (Welford) or 8 (softmax) per state. CUB merges one element at a
// time: it has no hook for a trip of 16 values.
struct MeanVarMerge { __device__ MeanVar operator()(const MeanVar &a, const MeanVar &b) const { return chan_merge(a, b); } };
struct MeanVarOf { __device__ MeanVar operator()(float x) const { return element(OP_MEANVAR, x, 0).w; } };
struct MaxSumMerge { __device__ MaxSum operator()(const MaxSum &a, const MaxSum &b) const { return softmax_merge(a, b); } };
struct MaxSumOf { __device__ MaxSum operator()(float x) const { return element(OP_SOFTMAX, x, 0).p; } };

// CUB's two-phase call: with temp == NULL it only sets *bytes.
static void reduce_cub(int op, void *temp, size_t *bytes, const float *d_in, size_t n, State *d_out)
{
    switch (op) {
    case OP_MAX: CUDA_CHECK(cub::DeviceReduce::Max(temp, *bytes, d_in, &d_out->v, n)); break;
    case OP_MIN: CUDA_CHECK(cub::DeviceReduce::Min(temp, *bytes, d_in, &d_out->v, n)); break;
    case OP_ARGMAX: // the overload with separate value and int64 index outputs
        CUDA_CHECK(cub::DeviceReduce::ArgMax(temp, *bytes, d_in, &d_out->v, &d_out->i, (int64_t)n));
        break;
    case OP_MEANVAR:
        CUDA_CHECK(cub::DeviceReduce::TransformReduce(temp, *bytes, d_in, &d_out->w, n, MeanVarMerge(), MeanVarOf(),
                                                      identity(OP_MEANVAR).w));
        break;
    case OP_SOFTMAX:
        CUDA_CHECK(cub::DeviceReduce::TransformReduce(temp, *bytes, d_in, &d_out->p, n, MaxSumMerge(), MaxSumOf(),
                                                      identity(OP_SOFTMAX).p));
        break;
    }
}

// ---- main -----------------------------------------------------------------

typedef struct {
    double max, min, argmax_v, mean, var, m, s;
    double amax; // the largest |x| among finite x (softmax's bound)
    long long argmax_i;
} Ref;

// Host references, all in double: max/min/argmax exact; mean by a
// compensated sum; variance by two passes (deviations from that mean);
// softmax: m = max, s = sum of exp(x - m) (positive terms: accurate to ~1e-16;
// a NaN x gives NaN, a -inf x adds 0, and all -inf gives the empty (-inf, 0)).
static Ref host_ref(const float *h, size_t n)
{
    Ref r = {-INFINITY, INFINITY, -INFINITY, 0.0, 0.0, -INFINITY, 0.0, 0.0, NO_INDEX};
    for (size_t i = 0; i < n; i++) {
        double x = h[i];
        if (x > r.max) r.max = x;
        if (x < r.min) r.min = x;
        if (isfinite(x) && fabs(x) > r.amax) r.amax = fabs(x);
        if (x > r.argmax_v) { r.argmax_v = x; r.argmax_i = (long long)i; } // strict >: the first of equal maxima stays
    }
    if (n == 0) return r;
    r.mean = neumaier_sum(h, n) / (double)n;
    double q = 0.0, c = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)h[i] - r.mean, sq = d * d, t = q + sq;
        c += q >= sq ? (q - t) + sq : (sq - t) + q; // Neumaier, as neumaier_sum
        q = t;
    }
    r.var = (q + c) / (double)n;
    r.m = r.max;
    double shift = r.m > -INFINITY ? r.m : 0.0; // all -inf: exp(-inf - 0) = 0 for each
    for (size_t i = 0; i < n; i++) r.s += exp((double)h[i] - shift);
    return r;
}

typedef struct { int op, cub; const float *d_x; size_t n; } Job;
static void job_poison(void *arg)
{
    (void)arg;
    CUDA_CHECK(cudaMemsetAsync(g_state, 0xFF, sizeof(State), 0)); // NaN values, index -1: unwritten shows
}
static void job_work(void *arg)
{
    Job *j = (Job *)arg;
    size_t bytes = g_cub_bytes;
    if (j->cub) reduce_cub(j->op, g_cub_temp, &bytes, j->d_x, j->n, g_state);
    else reduce_gpu(j->op, j->d_x, j->n, g_state);
}
static State run_once(Job *j)
{
    State t;
    job_poison(j);
    job_work(j);
    CUDA_CHECK(cudaMemcpy(&t, g_state, sizeof t, cudaMemcpyDeviceToHost));
    return t;
}
// Population variance M2 / count (0 for no elements).
static double finish_var(State t) { return t.w.n > 0.0f ? (double)t.w.m2 / (double)t.w.n : 0.0; }

// The check of one op's state. Bounds (tol): max, min, argmax exact (value
// and index); softmax m exact and |s - S| <= (1e-5 + 2^-21 M) S, M the
// largest finite |x| (below); Welford |mean - mu| <= 2^-16 (|mu| + sigma) and
// |var - V| <= var_rel * V (1e-5, or 1e-4 for the shifted input whose
// |mean|/sigma is ~1700). A NaN expected must come out NaN.
//
// Softmax: 1e-5 S is the harness's rule for a float sum of positive terms; it
// also covers ex2.approx's own error, a few ulp (2^-24 relative each) per ex2 a
// term meets: its own and one per rescale, a few dozen on random data, where
// the max rarely grows (an input raising it every trip would need more). The
// 2^-21 M is the exponents' rounding: terms are ex2(x log2e - m log2e), the
// rescales ex2((m_i - m) log2e); each rounding in them is 2^-24 relative to a
// number below 2 M log2e, the rescales' differences add up to at most 2 M (the
// max only grows), at most 8 * 2^-24 M log2e in all, and an exponent off by e
// puts 2^exponent off by e ln 2 = e / log2e, relative.
static void check_state(int op, State g, const Ref *ref, double var_rel, Report *r)
{
    double got = g.v, want = 0.0;
    r->tol = -1.0;
    if (op == OP_MAX || op == OP_MIN || op == OP_ARGMAX) {
        want = op == OP_MAX ? ref->max : op == OP_MIN ? ref->min : ref->argmax_v;
        r->pass = isnan(want) ? isnan(got) : check_result(g.v, want, -1.0);
        if (op == OP_ARGMAX && g.i != ref->argmax_i) r->pass = 0;
    } else if (op == OP_SOFTMAX) {
        got = g.p.s;
        want = ref->s;
        r->tol = isnan(want) ? -1.0 : (1e-5 + ldexp(ref->amax, -21)) * ref->s;
        r->pass = isnan(want) ? isnan(got) : check_result(g.p.s, want, r->tol) && (double)g.p.m == ref->m;
    } else { // OP_MEANVAR
        double mean = g.w.n > 0.0f ? g.w.mean : 0.0;
        got = finish_var(g);
        want = ref->var;
        // Neither bound may be tighter than the float answer's own rounding
        // (a tiny input's variance can be a few ulps from exact however it is summed).
        r->tol = effective_tol(want, var_rel * ref->var);
        r->pass = !isnan(got) && fabs(got - want) <= r->tol &&
                  fabs(mean - ref->mean) <= fmax(ldexp(fabs(ref->mean) + sqrt(ref->var), -16), float_ulp(ref->mean));
    }
    r->result = (float)got;
    r->expected = want;
}

// Checks (and, if timed, times) one job and prints its line.
static void run_job(const Options *opt, const char *variant, Job *job, const Ref *ref, double var_rel, int timed)
{
    Report r = new_report(opt, variant, job->n, (double)job->n * sizeof(float));
    State g = run_once(job);
    check_state(job->op, g, ref, var_rel, &r);
    if (timed && !opt->check_only && r.pass) {
        time_work(opt, job_poison, job_work, job, &r);
        CUDA_CHECK(cudaMemcpy(&g, g_state, sizeof g, cudaMemcpyDeviceToHost)); // the last timed run
        check_state(job->op, g, ref, var_rel, &r);
    }
    report_result(opt, &r);
    if (!r.pass && job->op == OP_ARGMAX) printf("    argmax index: got %lld, expected %lld\n", g.i, ref->argmax_i);
    if (!r.pass && job->op == OP_MEANVAR) printf("    mean: got %.9g, expected %.17g\n", (double)g.w.mean, ref->mean);
    if (!r.pass && job->op == OP_SOFTMAX) printf("    m: got %.9g, expected %.9g\n", (double)g.p.m, ref->m);
}

// Planted tests on a copy of the input in d_x: for max, min and softmax, a NaN
// at the first, middle and last element in turn (each must give NaN, for
// softmax in s: the head, body and tail paths); for argmax,
// copies of a value above the maximum at several places, the smallest of which
// sits in the grid's LAST thread's first float4 while thread 0 holds a larger
// one: the answer must be the smallest planted index.
static void planted_tests(const Options *opt, const Input *in, float *d_x, const Ref *ref)
{
    size_t n = in->n, bytes = n * sizeof(float);
    const float nan = NAN;
    static const int nan_op[3] = {OP_MAX, OP_MIN, OP_SOFTMAX};
    static const char *const nan_name[3] = {"max_nan", "min_nan", "softmax_nan"};
    for (int o = 0; o < 3; o++) {
        int op = nan_op[o];
        Report r = new_report(opt, nan_name[o], n, (double)bytes);
        size_t pos[3] = {0, n / 2, n - 1};
        Ref want = *ref;
        want.max = want.min = want.s = NAN;
        r.pass = 1;
        for (int k = 0; k < 3 && r.pass; k++) {
            CUDA_CHECK(cudaMemcpy(d_x, in->d_in, bytes, cudaMemcpyDeviceToDevice));
            CUDA_CHECK(cudaMemcpy(d_x + pos[k], &nan, sizeof nan, cudaMemcpyHostToDevice));
            Job j = {op, 0, d_x, n};
            check_state(op, run_once(&j), &want, 0.0, &r);
        }
        report_result(opt, &r);
    }
    size_t threads = (size_t)grid_for(OP_ARGMAX, n) * g_block;
    size_t head = ((16 - ((uintptr_t)d_x & 15)) & 15) / 4;
    size_t pos[5] = {head + 4 * threads, n - 1, n / 2, head + 4 * (threads - 1), head + 4 * threads + 1};
    float big = (float)ref->max + 1.0f; // above every element (|max| <= 15)
    Ref want = *ref;
    want.argmax_v = big;
    want.argmax_i = NO_INDEX;
    CUDA_CHECK(cudaMemcpy(d_x, in->d_in, bytes, cudaMemcpyDeviceToDevice));
    for (int k = 0; k < 5; k++) {
        if (pos[k] >= n) continue;
        CUDA_CHECK(cudaMemcpy(d_x + pos[k], &big, sizeof big, cudaMemcpyHostToDevice));
        if ((long long)pos[k] < want.argmax_i) want.argmax_i = (long long)pos[k];
    }
    Job j = {OP_ARGMAX, 0, d_x, n};
    run_job(opt, "argmax_ties", &j, &want, 0.0, 0);
}

// Human mode: Welford against the naive E[x^2] - E[x]^2, on x and on x + SHIFT.
static void variance_table(size_t n, const float *d_in, float *d_shifted, const Ref *ref, const Ref *ref_shifted)
{
    printf("\nvariance: Welford merge vs naive E[x^2]-E[x]^2 (reference: two passes in double)\n");
    printf("%-8s %-12s %-16s %-16s %-10s\n", "data", "method", "mean", "variance", "rel. error");
    for (int d = 0; d < 2; d++) {
        const Ref *rf = d ? ref_shifted : ref;
        for (int k = 0; k < 3; k++) {
            Job j = {k == 1 ? OP_NAIVE : OP_MEANVAR, k == 2, d ? d_shifted : d_in, n};
            State t = run_once(&j);
            double mean = t.w.n > 0 ? t.w.mean : 0.0, var = finish_var(t);
            if (j.op == OP_NAIVE) {
                mean = (double)(t.sx / (float)n);                           // all in float, as a naive
                var = (double)(t.sxx / (float)n - (float)mean * (float)mean); // kernel would do it
            }
            printf("%-8s %-12s %-16.9g %-16.9g %-10.2g\n", d ? "x+1000" : "x", k == 0 ? "welford" : k == 1 ? "naive" : "cub_welford",
                   mean, var, rf->var > 0 ? fabs(var - rf->var) / rf->var : fabs(var));
        }
    }
}

static const LessonInfo info = {"16_beyond_sum", BLOCK_RUNTIME, 256, NULL};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    static const char *const name[OP_NAIVE] = {"max", "min", "argmax", "welford", "softmax"};
    static const char *const cub_name[OP_NAIVE] = {"cub_max", "cub_min", "cub_argmax", "cub_welford", "cub_softmax"};
    g_block = opt.block;
    size_t n = opt.n;
    Input in = make_input_extra(&opt, (n + 4) * sizeof(float));

    int most = 1;
    for (int op = 0; op < NUM_OPS; op++) {
        int occ = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, g_kernel[op], g_block, 0));
        g_max_blocks[op] = occ * g_dev.sm_count > 0 ? occ * g_dev.sm_count : 1;
        if (g_max_blocks[op] > most) most = g_max_blocks[op];
    }
    CUDA_CHECK(cudaMalloc((void **)&g_partials, most * sizeof(State)));
    CUDA_CHECK(cudaMalloc((void **)&g_state, sizeof(State)));
    CUDA_CHECK(cudaMalloc((void **)&g_counter, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_counter, 0, sizeof(unsigned int))); // once: count_done leaves it 0 after each launch
    for (int op = 0; op < OP_NAIVE && n > 0; op++) {             // CUB's temp storage, outside any timing
        size_t bytes = 0;
        reduce_cub(op, NULL, &bytes, in.d_in, n, g_state);
        if (bytes > g_cub_bytes) g_cub_bytes = bytes;
    }
    CUDA_CHECK(cudaMalloc(&g_cub_temp, g_cub_bytes > 0 ? g_cub_bytes : 1));
    // Scratch for planted and shifted copies, at the input's alignment mod 16 bytes.
    float *work = NULL;
    CUDA_CHECK(cudaMalloc((void **)&work, (n + 4) * sizeof(float)));
    float *d_x = work + opt.offset % 4;

    float *h = copy_input_to_host(&in);
    Ref ref = host_ref(h, n);
    for (int op = 0; op < OP_NAIVE; op++) {
        Job ours = {op, 0, in.d_in, n}, lib = {op, 1, in.d_in, n};
        run_job(&opt, name[op], &ours, &ref, 1e-5, 1);
        if (n > 0) run_job(&opt, cub_name[op], &lib, &ref, 1e-5, 1); // CUB's empty-input results are other sentinels
    }
    if (n > 0) planted_tests(&opt, &in, d_x, &ref);

    // Every element -inf (masked logits): each term is exp(-inf) = 0, so the
    // answer is the empty pair (-inf, 0), and no -inf - -inf = NaN may appear.
    Ref ref_ninf = ref;
    ref_ninf.m = -INFINITY;
    ref_ninf.s = ref_ninf.amax = 0.0;
    for (size_t i = 0; i < n; i++) h[i] = -INFINITY;
    if (n) CUDA_CHECK(cudaMemcpy(d_x, h, n * sizeof(float), cudaMemcpyHostToDevice));
    Job ninf = {OP_SOFTMAX, 0, d_x, n};
    run_job(&opt, "softmax_ninf", &ninf, &ref_ninf, 0.0, 0);

    if (n) CUDA_CHECK(cudaMemcpy(h, in.d_in, n * sizeof(float), cudaMemcpyDeviceToHost)); // the input again
    for (size_t i = 0; i < n; i++) h[i] += SHIFT; // the same data with a large mean (rounded to float)
    Ref ref_shifted = host_ref(h, n);
    if (n) CUDA_CHECK(cudaMemcpy(d_x, h, n * sizeof(float), cudaMemcpyHostToDevice));
    Job shifted = {OP_MEANVAR, 0, d_x, n};
    run_job(&opt, "welford_shift", &shifted, &ref_shifted, 1e-4, 0);
    if (!opt.csv && !opt.check_only && n > 0) variance_table(n, in.d_in, d_x, &ref, &ref_shifted);

    free(h);
    CUDA_CHECK(cudaFree(work));
    CUDA_CHECK(cudaFree(g_cub_temp));
    CUDA_CHECK(cudaFree(g_counter));
    CUDA_CHECK(cudaFree(g_state));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
