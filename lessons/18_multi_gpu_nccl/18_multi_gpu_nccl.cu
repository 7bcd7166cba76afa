// link: -lnccl
/*
 * Lesson 18: the sum over every visible GPU, combined by NCCL.
 *
 * What changed since lesson 12: the array is cut into one shard per GPU
 * (CUDA_VISIBLE_DEVICES picks which). Each GPU reduces its own shard with a
 * fixed-order kernel, and ncclAllReduce adds the per-GPU partials so that
 * every GPU holds the total. The kernel reads as lesson 11's does (UNROLL 2,
 * no __launch_bounds__, lesson 11's one-wave grid) and finishes as lesson 12's
 * fixed variant does (the last block adds the partials in index order). Part 2 all-reduces whole
 * float vectors, 1 MiB to 1 GiB, the way data-parallel training sums its
 * gradients, and prints the bus bandwidth. NCCL_NVLS_ENABLE=0 is set (unless
 * already set): no NVLink multicast.
 *
 * --procs runs Part 1 the way real jobs run: one process per GPU, each joining
 * the communicator with ncclCommInitRankConfig (common/ranks.h starts the processes,
 * puts every NCCL wait under a deadline and stops them all if one fails).
 *
 * What remains: this is where the tutorial stops. Past one node the calls stay
 * the same; only the processes are started by a job launcher (see notes.md).
 *
 *     make lesson18 && ./lesson18                       # every visible GPU
 *     CUDA_VISIBLE_DEVICES=0 ./lesson18 -n 1e6 --check  # one GPU: still correct
 *     ./lesson18 --procs                                # one process per GPU
 */
#include "harness.h"
#include <nccl.h>

#include "ranks.h" // each GPU's buffers, part 2's table, --procs's processes (host code)

#define BLOCK_SIZE 512 // threads per block (-b must equal it), as in lessons 11 and 12
#define UNROLL 2       // float4 loads each thread issues before adding any: lesson 11's (lesson 12: 8)
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL) // float4s one block reads per round
#define FULL_MASK 0xffffffffu // all 32 lanes take part in every shuffle below

#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || BLOCK_SIZE % 32 != 0 || UNROLL < 1
#error "BLOCK_SIZE must be a multiple of 32 in 32..1024, UNROLL at least 1"
#endif
// The fixed-order sum (lesson 11's reading, lesson 12's finish), at the end of this file with its helpers.
__global__ void reduce_fixed_kernel(const float *in, size_t n, float *partials, unsigned int *retired, float *out);

// ---- kernels ----------------------------------------------------------------

// Part 2's vectors, grid-stride (any grid): rank r's element i is
// (r + 1) * (1 + (i + salt) % 7), small integers, so every element of the
// all-reduced vector is exact and known: g(g + 1)/2 * (1 + (i + salt) % 7).
__global__ void fill_vector_kernel(float *v, size_t count, int rank, unsigned int salt)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        v[i] = (float)((rank + 1) * (1 + (int)((i + salt) % 7)));
}

// Any grid, grid-stride: adds to *wrong the number of elements of v[0..count)
// that are not that sum over g ranks (one atomic per thread that saw one).
__global__ void count_wrong_kernel(const float *v, size_t count, int g, unsigned int salt, unsigned long long *wrong)
{
    unsigned long long bad = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        if (!(v[i] == (float)(g * (g + 1) / 2 * (1 + (int)((i + salt) % 7))))) bad++; // a NaN (the poison) counts
    if (bad) atomicAdd(wrong, bad); // only threads that saw a wrong element: normally none
}

// ---- launch -----------------------------------------------------------------

// Lesson 12's fixed-finish launcher, for one GPU, with lesson 11's one-wave grid
// limit (setup_gpu: SMs x resident blocks of this kernel) and buffers, on `stream`
// (the current device must be that GPU).
static void reduce_gpu(const float *d_in, size_t n, float *d_out, const Gpu *gp, cudaStream_t stream)
{
    if (n == 0) { // the sum of nothing is 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), stream));
        return;
    }
    // A full GPU's worth of blocks, at most one per 4 * TILE floats of n (a round
    // of TILE float4s): n = 1000 gets 1 block; at n = 4097 the second reads nothing.
    size_t wanted = (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE);
    int blocks = wanted < (size_t)gp->max_blocks ? (int)wanted : gp->max_blocks;
    reduce_fixed_kernel<<<blocks, BLOCK_SIZE, 0, stream>>>(d_in, n, gp->partials, gp->retired, d_out);
    CUDA_CHECK_LAST();
}

// "1gpu": the whole array on GPU 0, default stream (the harness times it).
static void reduce_gpu0(const float *d_in, size_t n, float *d_out) { reduce_gpu(d_in, n, d_out, &g_gpu[0], 0); }

// GPU d's shard of g: sizes differ by at most one (n < g leaves some empty).
// Rank d of --procs makes the same shard as GPU d of the one-process mode.
static void shard(const Options *opt, int d, int g)
{
    size_t q = opt->n / (size_t)g, rem = opt->n % (size_t)g;
    make_shard(opt, d, (size_t)d * q + ((size_t)d < rem ? (size_t)d : rem), q + ((size_t)d < rem ? 1 : 0));
}

// "Ngpu_nccl": every GPU reduces its shard, then one all-reduce of its float.
static void sharded_work(void *)
{
    for (int d = 0; d < g_ngpu; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        reduce_gpu(g_gpu[d].shard, g_gpu[d].count, g_gpu[d].part, &g_gpu[d], g_gpu[d].stream);
    }
    // One thread drives all GPUs. Alone, one rank's ncclAllReduce could wait for
    // its peers' calls, which this thread has not made yet; the group issues all g
    // together. Same stream as the kernel: the all-reduce reads part after it is written.
    NCCL_CHECK(ncclGroupStart());
    for (int d = 0; d < g_ngpu; d++)
        NCCL_CHECK(ncclAllReduce(g_gpu[d].part, g_gpu[d].total, 1, ncclFloat, ncclSum, g_comms[d], g_gpu[d].stream));
    NCCL_CHECK(ncclGroupEnd());
    CUDA_CHECK(cudaSetDevice(0));
}

// "Ngpu_procs": this rank's shard, then the same all-reduce. One GPU per
// process: no group, every rank makes this one call.
static void rank_work(void *)
{
    Gpu *gp = &g_gpu[g_rank];
    reduce_gpu(gp->shard, gp->count, gp->part, gp, gp->stream);
    nccl_ok(ncclAllReduce(gp->part, gp->total, 1, ncclFloat, ncclSum, g_comm, gp->stream),
            "ncclAllReduce of the partials");
}

// Part 2: the all-reduce of whole vectors of *arg floats, every GPU at once.
static void vector_work(void *arg)
{
    size_t count = *(const size_t *)arg;
    NCCL_CHECK(ncclGroupStart()); // one thread, g ranks: see sharded_work
    for (int d = 0; d < g_ngpu; d++)
        NCCL_CHECK(ncclAllReduce(g_gpu[d].send, g_gpu[d].recv, count, ncclFloat, ncclSum, g_comms[d], g_gpu[d].stream));
    NCCL_CHECK(ncclGroupEnd());
    CUDA_CHECK(cudaSetDevice(0));
}

// Part 2 on GPU d (the current device): fill its send vector, or count the
// wrong elements of its recv vector into its `wrong` (allreduce_table reads it).
static void vector_kernel(int d, size_t count, unsigned int salt, int check)
{
    Gpu *gp = &g_gpu[d];
    if (check) count_wrong_kernel<<<1024, 256, 0, gp->stream>>>(gp->recv, count, g_ngpu, salt, gp->wrong);
    else fill_vector_kernel<<<1024, 256, 0, gp->stream>>>(gp->send, count, d, salt);
    CUDA_CHECK_LAST();
}

// ---- main -------------------------------------------------------------------

static const LessonInfo info = {"18_multi_gpu_nccl", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run per combination of the listed -n, -s, -d and --offset values: this
// one process drives every visible GPU.
static int run(Options opt)
{
    Input in = make_input(&opt); // the whole array on GPU 0, and its exact sum
    setup_gpus((const void *)reduce_fixed_kernel, BLOCK_SIZE); // g_ngpu: every visible GPU, its stream and buffers
    // One communicator per GPU, all in this process: rank d is GPU d (NULL: GPUs 0..g-1).
    NCCL_CHECK(ncclCommInitAll(g_comms, g_ngpu, NULL));
    CUDA_CHECK(cudaSetDevice(0));
    const char *label = gpus_label(g_ngpu);
    char variant[32];
    snprintf(variant, sizeof variant, "%dgpu_nccl", g_ngpu);
    if (!opt.csv) print_gpus(variant);

    // Part 1a: the whole array on GPU 0 alone (the harness checks and times it).
    run_variant(&opt, &in, "1gpu", reduce_gpu0);
    free_input(&in); // from here on the shards hold the data (in keeps the exact sum)

    // Part 1b: one shard per GPU, each reduced there, the partials all-reduced.
    for (int d = 0; d < g_ngpu; d++) shard(&opt, d, g_ngpu);
    run_sharded(&opt, &in, variant, label, sharded_work);
    for (int d = 0; d < g_ngpu; d++) free_shard(d); // part 2 needs the memory

    // Part 2: whole vectors. Bus bandwidth = algorithm bandwidth x 2(g-1)/g,
    // nccl-tests' factor for all-reduce (0 on one GPU): the bytes each link carries.
    allreduce_table(&opt, label, 2.0 * (g_ngpu - 1) / g_ngpu, vector_kernel, vector_work);
    free_gpus(); // ncclCommDestroy on each GPU, then its buffers
    return 0;
}

// One run on rank g_rank of --procs: its GPU, its shard, part 1 only.
static int run_rank(Options opt)
{
    if (!g_comm) { // the first run joins the communicator, kept for the whole list of runs
        rank_open_gpu(); // rank r drives visible GPU r
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 0; // every call returns at once; nccl_ok and wait_stream wait, with a deadline
        // Collective over the ranks: each one connects to the bootstrap root that
        // ncclGetUniqueId started in the parent, learns the others' addresses from
        // it, and from then on talks to them directly.
        nccl_ok(ncclCommInitRankConfig(&g_comm, g_nranks, g_id, g_rank, &config), "ncclCommInitRankConfig");
    }
    setup_gpu(g_rank, (const void *)reduce_fixed_kernel, BLOCK_SIZE);
    shard(&opt, g_rank, g_nranks);
    char variant[32];
    snprintf(variant, sizeof variant, "%dgpu_procs", g_nranks);
    run_rank_variant(&opt, variant, rank_work);
    free_gpu(g_rank);
    return 0;
}

int main(int argc, char **argv)
{
    // NVLink multicast (NVLS) off unless the caller chose: NCCL reads this once,
    // so it is set before the first NCCL call, and before --procs starts its
    // processes, so that every one of them inherits it.
    g_nvls_ours = getenv("NCCL_NVLS_ENABLE") == NULL;
    if (g_nvls_ours) setenv("NCCL_NVLS_ENABLE", "0", 1);

    char **all = copy_argv(argc, argv); // argv as given, for the processes --procs starts
    if (!procs_options(&argc, argv, &info)) // takes --procs out of argv; -h and bad input exit here
        return run_lesson(argc, argv, &info, run); // one process drives every GPU
    if (rank_from_env()) // one of the processes --procs started: its runs, then it leaves the communicator
        return run_lesson_rank(argc, argv, &info, run_rank);
    // The parent of --procs: never creates a CUDA context, and outlives every rank.
    int n = count_gpus_in_a_child(all);
    // The id holds the address of a socket this process now listens on, and
    // ncclGetUniqueId started a thread here (the bootstrap root) that answers
    // it: every rank connects to it during ncclCommInitRankConfig. So the parent
    // must live until the ranks have joined; it waits for them anyway.
    ncclUniqueId id;
    ncclResult_t res = ncclGetUniqueId(&id);
    if (res != ncclSuccess) return parent_fail("ncclGetUniqueId", ncclGetErrorString(res));
    return start_ranks(all, n, &id); // rank r: this program again, with r and the id in its environment
}

// ---- lesson 12's code, less reduce_fixed_kernel's __launch_bounds__ ---------
// With UNROLL 2 and no bound, thread_sum reads as lesson 11's does; one wave
// leaves few partials (528 on an H100), so the last block reads them one
// load at a time, not lesson 12's 32.

// The sum of v over this warp's 32 lanes, in lane 0; all 32 must call it.
__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1) // constant trip count: fully unrolled
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

// The sum of v over the block, in thread 0; every thread of the block must call it.
__device__ float block_sum(float v)
{
    __shared__ float warp_sums[WARPS]; // one slot per warp, not one per thread
    unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads(); // the one barrier: every warp's slot written before warp 0 reads them
    if (warp == 0) // the whole of warp 0: its 32 lanes shuffle together
        v = warp_sum(lane < WARPS ? warp_sums[lane] : 0.0f); // lanes past the last warp add 0
    // No barrier at the end: a second call must come after one (reduce_fixed_kernel).
    return v;
}

// This thread's share of in[0..n): a scalar head and tail, a 16-byte aligned float4 body.
__device__ float thread_sum(const float *in, size_t n)
{
    // Floats before the first 16-byte boundary: in is 4-byte aligned, so its
    // address mod 16 is 0, 4, 8 or 12 and head is 0, 3, 2 or 1 (never more than n).
    size_t head = ((16 - ((uintptr_t)in & 15)) & 15) / sizeof(float);
    if (head > n) head = n;
    size_t nvec = (n - head) / 4;            // whole float4s in the body
    size_t tail = n - head - 4 * nvec;       // 0..3 floats left after the body
    const float4 *body = (const float4 *)(in + head); // 16-byte aligned; read only when nvec > 0

    float sum = 0.0f;
    if (blockIdx.x == 0 && threadIdx.x < head) sum += in[threadIdx.x];
    if (blockIdx.x == 0 && threadIdx.x < tail) sum += in[head + 4 * nvec + threadIdx.x];

    // size_t: nvec may pass 2^31. The loop runs while all UNROLL of this
    // thread's float4s exist; the last, partial round is guarded load by load.
    size_t i = (size_t)blockIdx.x * TILE + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * TILE;
    for (; i + (UNROLL - 1) * BLOCK_SIZE < nvec; i += stride) {
        float4 v[UNROLL];
        // __ldg: the input is not written while the kernel runs, so its loads
        // may take the read-only (non-coherent) path: ld.global.nc in the PTX.
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = __ldg(&body[i + u * BLOCK_SIZE]); // independent: all in flight
#pragma unroll
        for (int u = 0; u < UNROLL; u++) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        if (i + u * BLOCK_SIZE < nvec) {
            float4 v = __ldg(&body[i + u * BLOCK_SIZE]);
            sum += (v.x + v.y) + (v.z + v.w);
        }
    }
    return sum;
}

// Counts the calling block done (release-acquire); returns the count before
// it. The block that sees m also puts the counter back to 0 for the next launch.
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

// Each block stores its sum in partials[blockIdx.x]; the last block to count
// itself adds them in index order into *out: the same bits every run.
__global__ void reduce_fixed_kernel(const float *in, size_t n, float *partials, unsigned int *retired, float *out)
{
    __shared__ bool last; // is this block the last one to count itself?
    float v = block_sum(thread_sum(in, n)); // every thread calls block_sum
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        last = (count_done(retired, gridDim.x - 1) == gridDim.x - 1);
    }
    __syncthreads(); // hands `last`, and what thread 0 acquired, to the whole block
    if (!last) return; // the same for every thread of the block: no barrier below is split
    // Partials t, t + BLOCK_SIZE, ... in index order, then the same tree: which
    // block is last varies, the order of the additions does not. __ldcg (read at
    // L2, not L1) orders nothing: the acquire in count_done makes them visible.
    v = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += BLOCK_SIZE) v += __ldcg(&partials[b]);
    v = block_sum(v); // block_sum's slots are free again: warp 0 read them before the barrier above
    if (threadIdx.x == 0) *out = v;
}
