/*
 * Exercise 16: argmin that does not lose a NaN.
 *
 * Lesson 16's argmax has a policy for NaN: it ranks below every number,
 * -inf included, so a NaN is the answer only when every element is NaN, and
 * then it is (NaN, index of the first); ties go to the smaller index. A
 * combine needs a policy because NaN compares false with everything: without
 * one, where a NaN ends up depends on the combine order. Write the argmin
 * combine with the opposite policy, a NaN that is never lost:
 *   - a NaN anywhere wins: the answer is (NaN, index of the FIRST NaN);
 *   - otherwise the smaller value wins, and equal values go to the smaller
 *     index.
 * The rule must be symmetric in its two arguments: the tree meets the
 * elements in an order that has nothing to do with their indices.
 *
 *     make exercise16 && ./exercise16     # FAILs until the marked region is done
 *     make check E=16                     # every size, input and block size
 *
 * Lines (one per check, for each size and input: its name, n, time or "check
 * only", PASS or FAIL): "argmin" on the default input (ints have many
 * ties), "argmin_nan" (NaNs planted so that, where n is large enough,
 * the first by index is met after a later one, and a -inf first) and
 * "argmin_ties" (the same with copies of a new minimum).
 * The reference is an exact host scan.
 */
#include "harness.h"

#define NO_INDEX LLONG_MAX // argmin of nothing: larger than any index, so real ones win ties

// ---- kernel ---------------------------------------------------------------

typedef struct { long long i; float v; } ArgState;

__host__ __device__ static inline ArgState arg_state(float v, long long i)
{
    ArgState t = {i, v};
    return t;
}

__device__ __forceinline__ ArgState argmin_combine(ArgState a, ArgState b)
{
    // TODO(exercise): NaN on exactly one side: that side wins. Both NaN, or equal values: the smaller index wins. Otherwise the smaller value.
    (void)b;
    return a; // stub: keeps the first argument, whatever b holds
    // END(exercise)
}

// Lesson 16's loads, one float4 a trip, with this one combine.
__device__ __forceinline__ ArgState thread_argmin(const float *in, size_t n)
{
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t threads = (size_t)gridDim.x * blockDim.x;
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / 4;
    if (head > n) head = n;
    const float4 *body = (const float4 *)(in + head);
    size_t n4 = (n - head) / 4, tail = head + 4 * n4;
    ArgState acc = arg_state(INFINITY, NO_INDEX);
    if (tid < head) acc = argmin_combine(acc, arg_state(in[tid], (long long)tid));
    for (size_t i = tid; i < n4; i += threads) {
        float4 v = __ldg(&body[i]);
        long long e = (long long)(head + 4 * i);
        acc = argmin_combine(acc, arg_state(v.x, e));
        acc = argmin_combine(acc, arg_state(v.y, e + 1));
        acc = argmin_combine(acc, arg_state(v.z, e + 2));
        acc = argmin_combine(acc, arg_state(v.w, e + 3));
    }
    if (tid < n - tail) acc = argmin_combine(acc, arg_state(in[tail + tid], (long long)(tail + tid)));
    return acc;
}

// Full mask: every lane calls this.
__device__ __forceinline__ ArgState warp_argmin(ArgState t)
{
    for (int off = 16; off > 0; off >>= 1)
        t = argmin_combine(t, arg_state(__shfl_down_sync(0xffffffffu, t.v, off), __shfl_down_sync(0xffffffffu, t.i, off)));
    return t;
}

__device__ __forceinline__ ArgState block_argmin(ArgState t)
{
    __shared__ ArgState slot[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    t = warp_argmin(t);
    if (lane == 0) slot[warp] = t;
    __syncthreads(); // every warp's slot is written before warp 0 reads them
    if (warp == 0) t = warp_argmin(lane < (int)(blockDim.x >> 5) ? slot[lane] : arg_state(INFINITY, NO_INDEX));
    return t;
}

__global__ void argmin_kernel(const float *in, size_t n, ArgState *partials, unsigned int *counter, ArgState *out)
{
    ArgState acc = block_argmin(thread_argmin(in, n));
    __shared__ int am_last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc;
        __threadfence(); // release
        am_last = atomicAdd(counter, 1u) == gridDim.x - 1;
        if (am_last) __threadfence(); // acquire
    }
    __syncthreads();
    if (!am_last) return;
    acc = arg_state(INFINITY, NO_INDEX);
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x)
        acc = argmin_combine(acc, arg_state(__ldcg(&partials[b].v), __ldcg(&partials[b].i)));
    acc = block_argmin(acc);
    if (threadIdx.x == 0) {
        *out = acc;
        *counter = 0;
    }
}

// ---- launch ---------------------------------------------------------------

static int g_block, g_max_blocks;
static ArgState *g_partials, *g_result;
static unsigned int *g_counter;

static int grid_for(size_t n)
{
    size_t per_block = (size_t)g_block * 4, want = (n + per_block - 1) / per_block;
    return want < (size_t)g_max_blocks ? (int)(want > 0 ? want : 1) : g_max_blocks;
}

static void argmin_gpu(const float *d_in, size_t n, ArgState *d_out)
{
    if (n == 0) {
        static ArgState none;
        none = arg_state(INFINITY, NO_INDEX);
        CUDA_CHECK(cudaMemcpy(d_out, &none, sizeof none, cudaMemcpyHostToDevice));
        return;
    }
    argmin_kernel<<<grid_for(n), g_block>>>(d_in, n, g_partials, g_counter, d_out);
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

// The policy, scanned in index order on the host.
static ArgState host_argmin(const float *h, size_t n)
{
    ArgState best = arg_state(INFINITY, NO_INDEX);
    for (size_t i = 0; i < n; i++) {
        if (isnan(h[i])) return arg_state(h[i], (long long)i); // the first NaN decides
        // strict <: the first of equal minima stays; an element always beats
        // the identity, so an all-+inf input gets index 0, not NO_INDEX
        if (h[i] < best.v || best.i == NO_INDEX) best = arg_state(h[i], (long long)i);
    }
    return best;
}

typedef struct { const float *d_x; size_t n; } Job;
static void job_poison(void *arg)
{
    (void)arg;
    CUDA_CHECK(cudaMemsetAsync(g_result, 0xFF, sizeof(ArgState), 0));
}
static void job_work(void *arg)
{
    Job *j = (Job *)arg;
    argmin_gpu(j->d_x, j->n, g_result);
}

static ArgState read_and_check(ArgState want, Report *r)
{
    ArgState got;
    CUDA_CHECK(cudaMemcpy(&got, g_result, sizeof got, cudaMemcpyDeviceToHost));
    r->result = got.v;
    r->expected = want.v;
    r->tol = -1.0; // exact: the value and the index
    r->pass = got.i == want.i && (isnan(want.v) ? isnan(got.v) : check_result(got.v, want.v, -1.0));
    return got;
}

static void run_job(const Options *opt, const char *variant, Job *j, ArgState want, int timed)
{
    Report r = new_report(opt, variant, j->n, (double)j->n * sizeof(float));
    job_poison(j);
    job_work(j);
    ArgState got = read_and_check(want, &r);
    if (timed && !opt->check_only && r.pass) {
        time_work(opt, job_poison, job_work, j, &r);
        got = read_and_check(want, &r); // the last timed run
    }
    report_result(opt, &r);
    if (!r.pass) printf("    index: got %lld, expected %lld\n", got.i, want.i);
}

static const LessonInfo info = {"ex16_beyond_sum", BLOCK_RUNTIME, 256, NULL};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    g_block = opt.block;
    size_t n = opt.n;
    Input in = make_input_extra(&opt, (n + 4) * sizeof(float));
    int occ = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, argmin_kernel, g_block, 0));
    g_max_blocks = occ * g_dev.sm_count > 0 ? occ * g_dev.sm_count : 1;
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (size_t)g_max_blocks * sizeof(ArgState)));
    CUDA_CHECK(cudaMalloc((void **)&g_result, sizeof(ArgState)));
    CUDA_CHECK(cudaMalloc((void **)&g_counter, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_counter, 0, sizeof(unsigned int)));

    float *h = copy_input_to_host(&in);
    Job plain = {in.d_in, n};
    run_job(&opt, "argmin", &plain, host_argmin(h, n), 1);

    // Planted copies, at the input's alignment. Positions: a later float4 of
    // thread 0, the middle, the end, and the grid's last thread's first
    // float4 -- from n of about 8 times the grid's threads, the smallest
    // index, yet met after thread 0's in the tree (positions past n are not
    // planted).
    float *work = NULL;
    CUDA_CHECK(cudaMalloc((void **)&work, (n + 4) * sizeof(float)));
    float *d_x = work + opt.offset % 4;
    size_t threads = (size_t)grid_for(n) * g_block, head = ((16 - ((uintptr_t)d_x & 15)) & 15) / 4;
    size_t pos[4] = {head + 4 * threads, n / 2, n - 1, head + 4 * (threads - 1)};
    for (int test = 0; test < 2 && n > 0; test++) {
        float value = test == 0 ? NAN : -100.0f; // a NaN, or a value below every input (>= -15)
        for (int k = 0; k < 4; k++)
            if (pos[k] < n) h[pos[k]] = value;
        if (test == 0 && n > 2) h[0] = -INFINITY; // below every value, yet a NaN must still win
        if (n) CUDA_CHECK(cudaMemcpy(d_x, h, n * sizeof(float), cudaMemcpyHostToDevice));
        Job j = {d_x, n};
        run_job(&opt, test == 0 ? "argmin_nan" : "argmin_ties", &j, host_argmin(h, n), 0);
        CUDA_CHECK(cudaMemcpy(h, in.d_in, n * sizeof(float), cudaMemcpyDeviceToHost)); // undo the plants
    }

    free(h);
    CUDA_CHECK(cudaFree(work));
    CUDA_CHECK(cudaFree(g_counter));
    CUDA_CHECK(cudaFree(g_result));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
