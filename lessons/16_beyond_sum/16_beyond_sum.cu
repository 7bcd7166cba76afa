/*
 * Lesson 16: beyond sum -- any associative combine with an identity.
 *
 * What changed since lesson 12: "+" becomes a parameter. A reduction is a
 * state type, an identity and an associative combine; lesson 12's skeleton
 * (float4 loads, shuffles, the last block combining the partials in a fixed
 * order) is written once, and each op is an instance: max and min (NaN anywhere
 * gives NaN), argmax (ties: smallest index; NaN ranks below every number), mean
 * and variance by the Welford/Chan merge, online softmax. A hook, absorb(),
 * folds a thread's loaded values (16, 4 in the last trips) at once. Each op is checked and timed
 * beside CUB. The flaw that remains: one answer for the whole array; softmax,
 * layernorm and losses want one per row (lesson 17).
 *
 *     make lesson16 && ./lesson16 && ./lesson16 -n 1000 -d uniform --check
 */
#include "harness.h"

#define UNROLL 4             // float4 loads in flight per thread and trip: on an H100 no faster than 1 or 2 (lab/15_unroll.md)
#define SHIFT 1000.0f        // the large mean added for the variance test
#define NO_INDEX LLONG_MAX   // argmax of nothing: larger than any real index, so real ones win ties
#define LOG2E 1.44269504f    // log2(e) rounded to float: exp(x) = 2^(x log2 e)
__device__ unsigned int count_done(unsigned int *retired, unsigned int m); // lesson 12's, at the end

// ---- the pattern: a state type, identity, element, combine, absorb ----------
// combine must be associative and symmetric: the tree meets elements in no
// fixed order. One State holds every op's fields; each op computes only its
// own, though its stores copy the whole State (CUB gets each op's own type).
enum { OP_MAX, OP_MIN, OP_ARGMAX, OP_MEANVAR, OP_SOFTMAX, OP_NAIVE, NUM_OPS };
typedef struct { float n, mean, m2; } MeanVar; // Welford: count, mean, M2 = sum of (x - mean)^2
typedef struct { float m, s; } MaxSum;         // online softmax: max m, s = sum of exp(x - m)
// i: argmax's index of v; v: max, min, argmax's value; w: Welford; p: softmax; sx, sxx: naive sums of x, x*x
typedef struct { long long i; float v; MeanVar w; MaxSum p; float sx, sxx; } State;

// fmaxf/fminf return the other operand when one is NaN (IEEE maxNum), which
// silently drops it. Our policy: a NaN anywhere gives NaN, so a NaN wins here.
__device__ __forceinline__ float max_nan(float a, float b) { return (a > b || a != a) ? a : b; }
__device__ __forceinline__ float min_nan(float a, float b) { return (a < b || a != a) ? a : b; }

// Chan, Golub & LeVeque's merge of two (count, mean, M2) summaries (with b one
// element: Welford's update). Deviations from the mean: it never gets squared.
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

// 2^x in one MUFU.EX2: without .ftz, three more instructions keep results below
// 2^-126 from flushing to 0; such a term is nothing next to the sum (at least 1).
__device__ __forceinline__ float ex2(float x) { float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }

// exp(mi - m) moves a sum relative to a max mi over to a max m >= mi. Equal
// maxima need no factor, so -inf - -inf (two empty sides) never reaches ex2.
__device__ __forceinline__ float rescale(float mi, float m) { return mi == m ? 1.0f : ex2((mi - m) * LOG2E); }

// Both sides moved to the larger max: never overflows. A NaN x makes s NaN (the
// policy): fmaxf skips it in m, and its own side's factor is ex2(NaN).
__device__ __forceinline__ MaxSum softmax_merge(MaxSum a, MaxSum b)
{
    float m = fmaxf(a.m, b.m);
    MaxSum t = {m, a.s * rescale(a.m, m) + b.s * rescale(b.m, m)};
    return t;
}

// Combined with any state, the identity gives that state back.
__host__ __device__ static inline State identity(int op)
{
    State t = {NO_INDEX, op == OP_MIN ? INFINITY : op == OP_ARGMAX ? NAN : -INFINITY, // argmax: NaN ranks lowest
               {0.0f, 0.0f, 0.0f}, {-INFINITY, 0.0f}, 0.0f, 0.0f}; // softmax: no terms, any real x is larger
    return t;
}

// One element as a state of its own.
__device__ __forceinline__ State element(int op, float x, long long idx)
{
    State t = identity(op);
    if (op == OP_MAX || op == OP_MIN || op == OP_ARGMAX) { t.i = idx; t.v = x; }
    if (op == OP_MEANVAR) { t.w.n = 1.0f; t.w.mean = x; } // one value has no spread: m2 stays 0
    if (op == OP_SOFTMAX) { t.p.m = x; t.p.s = x == -INFINITY ? 0.0f : 1.0f; } // exp(x - x) = 1; -inf: empty
    if (op == OP_NAIVE) { t.sx = x; t.sxx = x * x; }
    return t;
}

__device__ __forceinline__ State combine(int op, State a, State b)
{
    switch (op) {
    case OP_MAX: a.v = max_nan(a.v, b.v); return a;
    case OP_MIN: a.v = min_nan(a.v, b.v); return a;
    case OP_ARGMAX: // the larger v; equal v, or both NaN: the smaller index; NaN loses to any number
        return (b.v > a.v || (b.v == a.v && b.i < a.i) || (a.v != a.v && (b.v == b.v || b.i < a.i))) ? b : a;
    case OP_MEANVAR: a.w = chan_merge(a.w, b.w); return a;
    case OP_SOFTMAX: a.p = softmax_merge(a.p, b.p); return a;
    default: a.sx += b.sx; a.sxx += b.sxx; return a; // OP_NAIVE
    }
}

// Online softmax, one trip of k float4s: the trip's max first (one rescale at
// most), then 2^(x log2e - m log2e) each: one FMNMX, FFMA, MUFU.EX2, FADD.
__device__ __forceinline__ void softmax_absorb(MaxSum *a, const float4 *v, int k)
{
    float m = a->m;
#pragma unroll
    for (int u = 0; u < k; u++) m = fmaxf(m, fmaxf(fmaxf(v[u].x, v[u].y), fmaxf(v[u].z, v[u].w))); // skips NaNs
    a->s *= rescale(a->m, m);
    a->m = m;
    float ml = m > -INFINITY ? m * LOG2E : 0.0f, t = 0.0f; // m = -inf: all -inf so far; shift by 0: 2^-inf = 0
#pragma unroll
    for (int u = 0; u < k; u++)
        t += (ex2(fmaf(v[u].x, LOG2E, -ml)) + ex2(fmaf(v[u].y, LOG2E, -ml))) +
             (ex2(fmaf(v[u].z, LOG2E, -ml)) + ex2(fmaf(v[u].w, LOG2E, -ml))); // a NaN x makes t NaN: the policy
    a->s += t;
}

// Welford, one trip: its own M2 about its own mean (two passes over registers),
// then one Chan merge: one division a trip. x - K, K near the data (the running
// mean, or the trip's first value), is the spread's size and rounds relative to it.
__device__ __forceinline__ void welford_absorb(MeanVar *a, const float4 *v, int k)
{
    float K = a->n > 0.0f ? a->mean : v[0].x, d = 0.0f; // d: sum of (x - K)
#pragma unroll
    for (int u = 0; u < k; u++) d += ((v[u].x - K) + (v[u].y - K)) + ((v[u].z - K) + (v[u].w - K));
    float dm = d * (0.25f / k), q = 0.0f; // dm: the trip's mean - K (the scaling by 0.25 / k is exact for k = 1, 2, 4); q: its M2
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

// Argmax, one trip: a thread meets its elements in index order, so only a larger
// value wins. The trip's max first (NaNs skipped); if it wins, its first index.
__device__ __forceinline__ void argmax_absorb(State *a, const float4 *v, int k, long long e, long long step)
{
    float m = a->v;
#pragma unroll
    for (int u = 0; u < k; u++) m = fmaxf(m, fmaxf(fmaxf(v[u].x, v[u].y), fmaxf(v[u].z, v[u].w)));
    if (!(m <= a->v)) { // m > a->v, or a->v is NaN (no number yet: then even m = -inf wins)
        long long at = e; // stays e only if all 4k are NaN: the first of them
#pragma unroll
        for (int u = k - 1; u >= 0; u--) { // backwards: the first match in index order is written last
            long long b = e + u * step;
            at = v[u].w == m ? b + 3 : at;
            at = v[u].z == m ? b + 2 : at;
            at = v[u].y == m ? b + 1 : at;
            at = v[u].x == m ? b : at;
        }
        a->i = (m == m || at < a->i) ? at : a->i; // all NaN: an earlier NaN keeps its index
        a->v = m;
    }
}

// One trip's k float4s, v[u] starting at element e + u * step, folded into acc.
__device__ __forceinline__ void absorb(int op, State *acc, const float4 *v, int k, long long e, long long step)
{
    if (op == OP_ARGMAX) argmax_absorb(acc, v, k, e, step);
    else if (op == OP_MEANVAR) welford_absorb(&acc->w, v, k);
    else if (op == OP_SOFTMAX) softmax_absorb(&acc->p, v, k);
    else
        for (int u = 0; u < k; u++) { // one element at a time
            float4 x = v[u];
            long long b = e + u * step;
            *acc = combine(op, *acc, element(op, x.x, b));
            *acc = combine(op, *acc, element(op, x.y, b + 1));
            *acc = combine(op, *acc, element(op, x.z, b + 2));
            *acc = combine(op, *acc, element(op, x.w, b + 3));
        }
}

// ---- the skeleton, once for every op ----------------------------------------
// Moves the op's own fields down the warp. Every lane calls it: full mask.
__device__ __forceinline__ State shfl_down(int op, State t, int off)
{
    const unsigned int all = 0xffffffffu;
    if (op == OP_MAX || op == OP_MIN || op == OP_ARGMAX) t.v = __shfl_down_sync(all, t.v, off);
    if (op == OP_ARGMAX) t.i = __shfl_down_sync(all, t.i, off);
    if (op == OP_MEANVAR) { t.w.n = __shfl_down_sync(all, t.w.n, off); t.w.mean = __shfl_down_sync(all, t.w.mean, off);
                            t.w.m2 = __shfl_down_sync(all, t.w.m2, off); }
    if (op == OP_SOFTMAX) { t.p.m = __shfl_down_sync(all, t.p.m, off); t.p.s = __shfl_down_sync(all, t.p.s, off); }
    if (op == OP_NAIVE) { t.sx = __shfl_down_sync(all, t.sx, off); t.sxx = __shfl_down_sync(all, t.sxx, off); }
    return t;
}

// A partial written by another block: each field read through L2 (ld.global.cg).
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

// Lesson 15's loads with the combine as a parameter: scalar head up to the first
// 16-byte boundary, float4 body grid-strided with UNROLL loads in flight, scalar tail.
__device__ __forceinline__ State thread_reduce(int op, const float *in, size_t n)
{
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x, threads = (size_t)gridDim.x * blockDim.x;
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

// Any grid; blocks of 32..1024 threads, a multiple of 32. Every thread folds
// its share of in[0..n) (n >= 1); thread 0 of each block writes partials[block];
// the last block to count itself combines them in index order into *out.
// *counter is 0 before the first launch, and each launch leaves it 0.
__device__ __forceinline__ void reduce_body(int op, const float *in, size_t n, State *partials,
                                            unsigned int *counter, State *out)
{
    State acc = block_combine(op, thread_reduce(op, in, n));
    __shared__ bool am_last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc; // count_done releases it before the count
        am_last = count_done(counter, gridDim.x - 1) == gridDim.x - 1;
    }
    __syncthreads(); // publishes am_last; block_combine's slots are free again
    if (!am_last) return;
    acc = identity(op); // fixed order: thread t takes partials t, t + blockDim, ...
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x) acc = combine(op, acc, load_partial(op, &partials[b]));
    acc = block_combine(op, acc);
    if (threadIdx.x == 0) *out = acc; // count_done left the counter at 0 for the next launch
}

// 1024-thread blocks an SM holds: 2 on the architectures the #if lists (an
// sm_80 or sm_90 SM has 2048 thread slots), else 1. An H100/H200 thread then
// gets 32 registers and every op keeps the SM full; Welford and softmax would
// take 40, argmax 38 (results/ptxas-lesson16-sm_90.txt).
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || \
                               __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030)
#define FULL_SM 2
#else
#define FULL_SM 1
#endif
// One kernel per op, each reduce_body with its op as a constant (its contract above).
#define KERNEL_ARGS const float *in, size_t n, State *part, unsigned int *count, State *out
__global__ void __launch_bounds__(1024, FULL_SM) max_kernel(KERNEL_ARGS) { reduce_body(OP_MAX, in, n, part, count, out); }
__global__ void __launch_bounds__(1024, FULL_SM) min_kernel(KERNEL_ARGS) { reduce_body(OP_MIN, in, n, part, count, out); }
__global__ void __launch_bounds__(1024, FULL_SM) argmax_kernel(KERNEL_ARGS) { reduce_body(OP_ARGMAX, in, n, part, count, out); }
__global__ void __launch_bounds__(1024, FULL_SM) meanvar_kernel(KERNEL_ARGS) { reduce_body(OP_MEANVAR, in, n, part, count, out); }
__global__ void __launch_bounds__(1024, FULL_SM) softmax_kernel(KERNEL_ARGS) { reduce_body(OP_SOFTMAX, in, n, part, count, out); }
__global__ void __launch_bounds__(1024, FULL_SM) naive_kernel(KERNEL_ARGS) { reduce_body(OP_NAIVE, in, n, part, count, out); }

// ---- launch ---------------------------------------------------------------

typedef void (*state_kernel)(KERNEL_ARGS);
static state_kernel const g_kernel[NUM_OPS] = {max_kernel, min_kernel, argmax_kernel,
                                               meanvar_kernel, softmax_kernel, naive_kernel};
// CUB's Max, Min, ArgMax, and TransformReduce with these functors: our merges on
// each op's own small type, one element at a time (CUB has no hook for a trip).
struct MeanVarMerge { __device__ MeanVar operator()(const MeanVar &a, const MeanVar &b) const { return chan_merge(a, b); } };
struct MeanVarOf { __device__ MeanVar operator()(float x) const { return element(OP_MEANVAR, x, 0).w; } };
struct MaxSumMerge { __device__ MaxSum operator()(const MaxSum &a, const MaxSum &b) const { return softmax_merge(a, b); } };
struct MaxSumOf { __device__ MaxSum operator()(float x) const { return element(OP_SOFTMAX, x, 0).p; } };

#include "ops_host.h" // grids, buffers, the CUB calls, host references, checks, planted tests, variance table

static void reduce_gpu(int op, const float *d_in, size_t n, State *d_out)
{
    static State id; // n = 0: nothing to read, the answer is the identity, and no kernel runs
    if (n == 0) { id = identity(op); CUDA_CHECK(cudaMemcpy(d_out, &id, sizeof id, cudaMemcpyHostToDevice)); return; }
    g_kernel[op]<<<grid_for(op, n), g_block>>>(d_in, n, g_partials, g_counter, d_out);
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"16_beyond_sum", BLOCK_RUNTIME, 256, NULL};

// One run for each combination of the listed -n, -s, -d, --offset and -b values.
static int run(Options opt)
{
    Input in = make_input_extra(&opt, (opt.n + 4) * sizeof(float));
    float *d_x = ops_setup(&opt, &in); // scratch for planted copies, at the input's alignment
    float *h = copy_input_to_host(&in);
    Ref ref = host_ref(h, in.n);
    run_ops(&opt, &in, &ref); // each op, ours then CUB's: checked, timed, one line each
    if (in.n > 0) planted_tests(&opt, &in, d_x, &ref);
    edge_tests(&opt, &in, d_x, h, &ref); // all -inf, all NaN, the shifted input (and the variance table)
    free(h);
    ops_free();
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }

// ---- unchanged from lesson 12 ----------------------------------------------

// Counts the calling block done, returns the count before it (0..m; m puts it
// back to 0): release and acquire, so the block that sees m sees every partial.
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
