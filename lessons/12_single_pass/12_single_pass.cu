/*
 * Lesson 12: one launch per reduction, two ways to finish it.
 *
 * What changed since lesson 11: the finish, and with it the grid and the
 * loads in flight. Each block sums its share with lesson 11's loop, at 8
 * float4 loads a thread (UNROLL; lesson 11: 2) under __launch_bounds__, so
 * that a short-lived block still keeps enough bytes on their way; then, in
 * the same launch, the blocks' sums meet:
 *   atomic  each block atomicAdds its sum into *out, which the first block to
 *           swap in the launch's number zeroes (no memset; a flag orders it first).
 *           Blocks add in a different order each run (float + is not associative).
 *   fixed   last block done: each block stores its sum and counts itself on
 *           a counter (release-acquire); the last to count adds all the sums
 *           in index order. The same bits every run.
 * A block per tile (atomic) or per 4 (fixed), not lesson 11's one wave. Clusters: lesson 13.
 *
 *     make lesson12 && ./lesson12
 *     ./lesson12 -n 2^20+3 --offset 3 -d uniform --check
 */
#include "harness.h"
#include <cuda/atomic> // cuda::atomic_ref: release and acquire on the atomic finish's flag

#define BLOCK_SIZE 512 // threads per block, a multiple of 32: at 2^30 it beat 256 and 1024, by under 1%
                       // (lesson 12's kernel at UNROLL 4, on an H200: results/tune-lesson12-nvidia-h200.txt)
#define UNROLL 8       // float4 loads each thread issues before adding any (lesson 11: 2): short blocks
                       // need the bytes in flight (lesson 11's notes, Little's law; lab/12_tiles.md)
#define MIN_BLOCKS 2   // __launch_bounds__: 2 blocks an SM leave ptxas 64 registers a thread, room for all
                       // UNROLL loads at once (unbounded, it keeps 32 and starts adding after 4)
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL) // float4s one block reads per round
#define FULL_MASK 0xffffffffu // all 32 lanes take part in every shuffle below

#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || BLOCK_SIZE % 32 != 0 || UNROLL < 1
#error "BLOCK_SIZE must be a multiple of 32 in 32..1024, UNROLL at least 1"
#endif
// Lesson 11's reading and lesson 10's warp and block sums, at the bottom of the file.
static __device__ float thread_sum(const float *in, size_t n);
static __device__ float warp_sum(float v);
static __device__ float block_sum(float v);

// ---- kernel ---------------------------------------------------------------

// (a) atomic. Any grid of BLOCK_SIZE-thread blocks reading in[0..n) once; each block adds its sum
// into *out with one atomicAdd. No memset: thread 0 of the first block to swap this launch's number
// into state[0] zeroes *out once it has read its share, then stores the number in state[32] (release).
// Every other block adds only after it has read it there (acquire): after the zero. Blocks 0..255 swap
// at their start; a later one only if the number is not in state[32] yet (a swap in every block costs
// time: lab/12_racy_zero.md). A block waits only after losing a swap: for the first, which waits for nobody.
__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_atomic_kernel(const float *in, size_t n, unsigned int *state, unsigned int launch, float *out)
{
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> flag(state[32]); // its own 128-byte line, apart from the swaps
    unsigned int got = threadIdx.x != 0 ? launch : blockIdx.x < 256 ? atomicExch(&state[0], launch) : flag.load(cuda::memory_order_relaxed); // relaxed; back during the loads
    float v = thread_sum(in, n);
    if (got != launch && blockIdx.x >= 256) got = atomicExch(&state[0], launch); // a later block, and no number yet: it swaps
    if (got != launch) *out = 0.0f; // the first swap (it got another launch's number, or 0) zeroes,
    if (got != launch) flag.store(launch, cuda::memory_order_release); // then stores the number
    unsigned int seen = threadIdx.x == 0 && got == launch ? flag.load(cuda::memory_order_acquire) : launch; // the acquire holds warp 0 before block_sum's barrier
    v = block_sum(v); // every thread calls block_sum
    if (threadIdx.x != 0) return;
    while (seen != launch) seen = flag.load(cuda::memory_order_acquire); // until the zero is visible
    atomicAdd(out, v); // one atomic per block, in whatever order blocks finish
}

// Counts the calling block done; returns the count before it. atomicInc(p, m) stores
// (old >= m ? 0 : old + 1): the blocks see 0..m in some order, and the one that sees m
// also puts the counter back to 0 for the next launch.
//   release  the partial stored before the count is visible to all who see it;
//   acquire  the block that sees m sees every partial stored before the counts.
// One atom.acq_rel does both (sm_70+). Older GPUs, which CUDA 12 still builds for but this
// tutorial does not run on, need a full fence on each side of a plain atomicInc.
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

// (b) fixed. Any grid of BLOCK_SIZE-thread blocks, reading in[0..n) once. Each
// block stores its sum in partials[blockIdx.x]; the last block to count itself
// adds partials[0..gridDim.x) in index order into *out. *retired must be 0
// before the first launch; each launch leaves it 0.
__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_fixed_kernel(const float *in, size_t n, float *partials, unsigned int *retired, float *out)
{
    __shared__ bool last; // is this block the last one to count itself?
    float v = block_sum(thread_sum(in, n)); // every thread calls block_sum
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        last = (count_done(retired, gridDim.x - 1) == gridDim.x - 1);
    }
    __syncthreads(); // hands `last`, and what thread 0 acquired, to the whole block
    if (!last) return; // the same for every thread of the block: no barrier below is split
    // Partials t, t + BLOCK_SIZE, ... in index order, then the same tree: which block is last
    // varies, the order of the additions does not. 4 * UNROLL loads in flight: 16,384 partials
    // at 2^30, one trip to L2. __ldcg (at L2) orders nothing: count_done's acquire does.
    v = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += 4 * UNROLL * BLOCK_SIZE) {
        float w[4 * UNROLL];
#pragma unroll
        for (int u = 0; u < 4 * UNROLL; u++) w[u] = b + u * BLOCK_SIZE < gridDim.x ? __ldcg(&partials[b + u * BLOCK_SIZE]) : 0.0f;
#pragma unroll
        for (int u = 0; u < 4 * UNROLL; u++) v += w[u];
    }
    v = block_sum(v); // block_sum's slots are free again: warp 0 read them before the barrier above
    if (threadIdx.x == 0) *out = v;
}

// ---- launch ---------------------------------------------------------------

static int g_max_blocks;         // SMs x resident blocks per SM: lesson 11's one wave (set by run; only printed)
static float *g_partials;        // one partial per block (run sizes it for its n)
static unsigned int *g_retired;  // the blocks-done counter, zeroed by run before its first launch
static unsigned int *g_state;    // after it, also zeroed: the last number swapped in ([0]), the flag ([32]: the next 128-byte line)

// The fixed finish: lesson 11's launcher with its second launch gone (the last block
// adds the partials), and a grid from n alone, not one wave.
static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { // the sum of nothing is 0; nothing to launch
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
        return;
    }
    // Tiles of 4 * TILE floats (a round of TILE float4s), a block per 4 of them, as each block waits before
    // it exits (lab/12_fixed_grid.md); but at least 256 blocks (about what 132 SMs run at once), or a block
    // per tile below that: 2^20 floats get 64, 2^30 16,384 (2^31 - 1 blocks, gridDim.x's limit: 2^47 floats).
    size_t wanted = (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE);
    wanted = wanted < 1024 ? (wanted < 256 ? wanted : 256) : (wanted + 3) / 4;
    reduce_fixed_kernel<<<(unsigned int)wanted, BLOCK_SIZE>>>(d_in, n, g_partials, g_retired, d_out); // the only launch
    CUDA_CHECK_LAST();
}

// The atomic finish: a block per tile, no memset (n = 0: one block zeroes *out). Each launch needs a new
// number, and one launch at a time on g_state (one stream; a graph replay would repeat a number).
static unsigned int g_launch; // the atomic launches so far, from 1: this one's number
static void reduce_atomic(const float *d_in, size_t n, float *d_out)
{
    size_t blocks = n ? (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE) : 1;
    reduce_atomic_kernel<<<(unsigned int)blocks, BLOCK_SIZE>>>(d_in, n, g_state, ++g_launch, d_out);
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"12_single_pass", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

// One run per combination of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    Input in = make_input(&opt); // also reads the SM count into g_dev
    // How many blocks of this kernel fit on one SM at once, given its registers, shared memory and
    // threads: lesson 11's grid, here only what runs at once.
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_fixed_kernel, BLOCK_SIZE, 0));
    if (per_sm < 1) per_sm = 1;
    g_max_blocks = g_dev.sm_count * per_sm;
    size_t tiles = (opt.n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE); // the atomic finish's grid at this n
    if (!opt.csv) // and the fixed finish's, reduce_gpu's rule:
        printf("grid: %zu blocks of %d threads (atomic), %zu (fixed); %d SMs x %d resident blocks = %d at once\n", tiles, BLOCK_SIZE,
               tiles < 1024 ? (tiles < 256 ? tiles : 256) : (tiles + 3) / 4, g_dev.sm_count, per_sm, g_max_blocks);
    CUDA_CHECK(cudaMalloc((void **)&g_partials, (tiles + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_retired, 64 * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_retired, 0, 64 * sizeof(unsigned int))); // no block counted, no launch seen
    g_state = g_retired + 1;
    run_variant(&opt, &in, "atomic", reduce_atomic);
    run_variant(&opt, &in, "fixed", reduce_gpu);
    CUDA_CHECK(cudaFree(g_retired));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }

// ---- unchanged from lesson 11 ---------------------------------------------

// The sum of v over the 32 lanes of this warp, in lane 0 (the other lanes
// end with partial sums). At each step lane k adds the value of lane
// k + offset: offsets 16, 8, 4, 2, 1 halve the live values, as the tree did,
// but register to register. __shfl_down_sync waits for the lanes FULL_MASK
// names, so all 32 must call it; a lane whose k + offset is past 31 gets its
// own value back, and that only lands in lanes whose sums nobody reads.
__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1) // constant trip count: fully unrolled
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

// The sum of v over the block, in thread 0. Every thread of the block must
// call it: all lanes of every warp shuffle, and all reach the barrier.
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

// This thread's share of in[0..n), lesson 11's: a scalar head and tail (0..3
// floats each, block 0's first threads) and a 16-byte aligned float4 body.
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
