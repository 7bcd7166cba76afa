/*
 * Lab 12: what the fixed finish waits for. Lesson 12's fixed finish makes
 * every block store its partial, fence (the release half of count_done) and
 * wait for count_done's answer before it can exit; its other 511 threads wait
 * at a barrier meanwhile. This lab times what that costs: lesson 12's kernel
 * (512 threads x 8 float4s, a block per tile of 16 Ki floats) with eight
 * finishes, in one process, in turns:
 *
 *   atomic    the memset atomic finish (a memset, one atomicAdd per block)
 *   fixed     lesson 12's fixed finish: the last block to count itself done
 *             (atom.acq_rel) adds the partials in index order
 *   ticketed  the reader is chosen at the start: thread 0 takes a ticket
 *             (a relaxed atom.inc, answered while the block's loads are in
 *             flight), and the block with the last ticket reads. The other
 *             blocks store their partial and announce it with red.release
 *             (a fence, then an add nobody waits for) and exit with no
 *             barrier (thread 0 once its fence is done); the reader waits
 *             (ld.acquire) until all have announced, then adds the partials
 *             as fixed does
 *   stamped   the same ticket, and no fence at all: each block stores its sum
 *             and the launch's number as one 64-bit word (a 64-bit relaxed
 *             load of it sees all of it or none) and exits; the reader
 *             reads the words in index order, 16 a thread in flight, and
 *             reads again any that still holds an older launch's number
 *   stamped_fence, stamped_wait, stamped_both
 *             stamped, each block ending with part of fixed's exit: thread
 *             0's fence alone; the whole block waiting for a count with no
 *             fence; or both, count_done and the whole block waiting, as in
 *             fixed (the reader is still the last ticket)
 *   cleared   stamped with 32-bit words and no launch number: the reader puts
 *             a mark back in each word it has read, and reads a word again
 *             while it holds the mark; 32 a thread in flight, as fixed
 *
 * The deterministic finishes add the same partials in the same order: the same
 * bits every run, whichever block reads. The block with the last ticket can
 * wait for the others safely: each took its ticket earlier, so it is already
 * running, and nothing it does waits for the reader.
 *
 *     make lab_12_stamped_finish && ./lab_12_stamped_finish -n 2^20,2^24,2^26,2^30 --flush clean
 */
#include "harness.h"

#define BLOCK_SIZE 512 // lesson 12's block, loads per thread and launch bound
#define UNROLL 8
#define MIN_BLOCKS 2
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL) // float4s one block reads per round
#define FULL_MASK 0xffffffffu

static __device__ float thread_sum(const float *in, size_t n);
static __device__ float warp_sum(float v);
static __device__ float block_sum(float v);

// ---- the memset atomic finish, and lesson 12's fixed one ------------------

__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_atomic_kernel(const float *in, size_t n, float *out)
{
    float v = block_sum(thread_sum(in, n));
    if (threadIdx.x == 0) atomicAdd(out, v);
}

// Counts the calling block done; returns the count before it. atomicInc(p, m)
// stores (old >= m ? 0 : old + 1): the blocks see 0..m in some order, and the
// one that sees m also puts the counter back to 0 for the next launch.
//   release  the partial stored before the count is visible to all who see it;
//   acquire  the block that sees m sees every partial stored before the counts.
// One atom.acq_rel does both (sm_70+). Older GPUs, which CUDA 12 still builds
// for but this tutorial does not run on, need a full fence on each side of a
// plain atomicInc.
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
    // Partials t, t + BLOCK_SIZE, ... in index order, then the same tree: which
    // block is last varies, the order of the additions does not. 4 * UNROLL
    // loads in flight (thread_sum's floats a round): 2^30 floats leave 65,536
    // partials, four round trips to L2. __ldcg (read at L2, not L1) orders
    // nothing: the acquire in count_done makes the partials visible.
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


// ---- the reader chosen by a ticket -----------------------------------------

// Takes a ticket, 0..m: count_done's increment, wrapping to 0 after m, without
// its acquire-release ordering (it orders nothing; it only picks the reader).
static __device__ unsigned int take_ticket(unsigned int *tickets, unsigned int m)
{
    unsigned int t;
    size_t g = __cvta_generic_to_global(tickets);
    asm volatile("atom.relaxed.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(t) : "l"(g), "r"(m) : "memory");
    return t;
}

// ticketed: partials[] as in fixed; *done counts the blocks that announced
// theirs (0 before the launch, put back to 0 by the reader).
__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_ticketed_kernel(const float *in, size_t n, float *partials,
                                                                                  unsigned int *tickets, unsigned int *done, float *out)
{
    __shared__ bool last;
    unsigned int ticket = 0;
    if (threadIdx.x == 0) ticket = take_ticket(tickets, gridDim.x - 1); // its answer is used after the loads
    float v = thread_sum(in, n);
    if (threadIdx.x == 0) last = (ticket == gridDim.x - 1);
    v = block_sum(v); // its barrier hands `last` to the block
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        size_t g = __cvta_generic_to_global(done);
        if (!last) {
            asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(g) : "memory"); // fence, then the add
        } else {
            unsigned int c;
            do asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(c) : "l"(g) : "memory");
            while (c != gridDim.x - 1);
            *done = 0; // every other block has added its 1
        }
    }
    if (!last) return;
    __syncthreads(); // the acquire and partials[blockIdx.x] to the block; block_sum's slots free again
    v = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += 4 * UNROLL * BLOCK_SIZE) {
        float w[4 * UNROLL];
#pragma unroll
        for (int u = 0; u < 4 * UNROLL; u++) w[u] = b + u * BLOCK_SIZE < gridDim.x ? __ldcg(&partials[b + u * BLOCK_SIZE]) : 0.0f;
#pragma unroll
        for (int u = 0; u < 4 * UNROLL; u++) v += w[u];
    }
    v = block_sum(v);
    if (threadIdx.x == 0) *out = v;
}

// stamped: words[b] holds block b's sum (low 32 bits) and the number of the
// launch that stored it (high 32 bits). A relaxed 64-bit access is seen whole.
static __device__ void store_word(unsigned long long *p, unsigned long long x)
{
    size_t g = __cvta_generic_to_global(p);
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(g), "l"(x) : "memory");
}
static __device__ unsigned long long load_word(const unsigned long long *p)
{
    unsigned long long x;
    size_t g = __cvta_generic_to_global(p);
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(x) : "l"(g) : "memory");
    return x;
}
// How a stamped block ends, after its store: the three ways between stamped's
// (exit at once) and fixed's (fence, count, and the whole block waits):
//   FENCE  thread 0 fences (fence.acq_rel.gpu) and exits; the others exit at once
//   WAIT   thread 0 counts the block with a relaxed atomicInc (no fence) and
//          the whole block waits at a barrier for the answer
//   BOTH   thread 0 counts with count_done (its fence and atomic, as fixed
//          does) and the whole block waits at a barrier for the answer
// The count orders nothing and picks nothing: the reader is still the last ticket.
enum { EXIT_NOW, EXIT_FENCE, EXIT_WAIT, EXIT_BOTH };
template <int EXIT>
__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_stamped_kernel(const float *in, size_t n, unsigned long long *words,
                                                                                 unsigned int *tickets, unsigned int *counted,
                                                                                 unsigned int launch, float *out)
{
    __shared__ bool last;
    __shared__ volatile unsigned int answer; // the count's answer, so that the barrier waits for it
    unsigned int ticket = 0;
    if (threadIdx.x == 0) ticket = take_ticket(tickets, gridDim.x - 1);
    float v = thread_sum(in, n);
    if (threadIdx.x == 0) last = (ticket == gridDim.x - 1);
    v = block_sum(v);
    if (threadIdx.x == 0) {
        store_word(&words[blockIdx.x], (unsigned long long)launch << 32 | __float_as_uint(v));
        if (EXIT == EXIT_FENCE) asm volatile("fence.acq_rel.gpu;" ::: "memory");
        if (EXIT == EXIT_WAIT) answer = take_ticket(counted, gridDim.x - 1);
        if (EXIT == EXIT_BOTH) answer = count_done(counted, gridDim.x - 1);
    }
    if (EXIT == EXIT_WAIT || EXIT == EXIT_BOTH) __syncthreads();
    if (!last) return;
    __syncthreads(); // block_sum's slots free again
    v = 0.0f;
    // 16 words (128 bytes) a thread in flight: 32 would need every one of the 64 registers.
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += 2 * UNROLL * BLOCK_SIZE) {
        unsigned long long w[2 * UNROLL];
        bool old = false;
#pragma unroll
        for (int u = 0; u < 2 * UNROLL; u++) {
            w[u] = b + u * BLOCK_SIZE < gridDim.x ? load_word(&words[b + u * BLOCK_SIZE]) : (unsigned long long)launch << 32;
        }
#pragma unroll
        for (int u = 0; u < 2 * UNROLL; u++) old |= (unsigned int)(w[u] >> 32) != launch;
        if (old) { // a block that has not stored yet: read its word until it has
#pragma unroll
            for (int u = 0; u < 2 * UNROLL; u++)
                while ((unsigned int)(w[u] >> 32) != launch) w[u] = load_word(&words[b + u * BLOCK_SIZE]);
        }
#pragma unroll
        for (int u = 0; u < 2 * UNROLL; u++) v += __uint_as_float((unsigned int)w[u]);
    }
    v = block_sum(v);
    if (threadIdx.x == 0) *out = v;
}

// cleared: the ticket and no fence, as stamped, with 32-bit words. A word
// that holds EMPTY has no sum yet: the reader reads each word until it holds
// something else, then puts EMPTY back for the next launch. EMPTY is one NaN
// (all bits set); a block whose sum has exactly those bits stores another NaN.
#define EMPTY 0xffffffffu
static __device__ void store_u32(unsigned int *p, unsigned int x)
{
    size_t g = __cvta_generic_to_global(p);
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(g), "r"(x) : "memory");
}
static __device__ unsigned int load_u32(const unsigned int *p)
{
    unsigned int x;
    size_t g = __cvta_generic_to_global(p);
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(x) : "l"(g) : "memory");
    return x;
}
__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_cleared_kernel(const float *in, size_t n, unsigned int *words,
                                                                                 unsigned int *tickets, float *out)
{
    __shared__ bool last;
    unsigned int ticket = 0;
    if (threadIdx.x == 0) ticket = take_ticket(tickets, gridDim.x - 1);
    float v = thread_sum(in, n);
    if (threadIdx.x == 0) last = (ticket == gridDim.x - 1);
    v = block_sum(v);
    if (threadIdx.x == 0) {
        unsigned int x = __float_as_uint(v);
        store_u32(&words[blockIdx.x], x == EMPTY ? 0x7fffffffu : x);
    }
    if (!last) return;
    __syncthreads(); // block_sum's slots free again
    v = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += 4 * UNROLL * BLOCK_SIZE) {
        unsigned int w[4 * UNROLL];
        bool empty = false;
#pragma unroll
        for (int u = 0; u < 4 * UNROLL; u++) w[u] = b + u * BLOCK_SIZE < gridDim.x ? load_u32(&words[b + u * BLOCK_SIZE]) : 0u;
#pragma unroll
        for (int u = 0; u < 4 * UNROLL; u++) empty |= w[u] == EMPTY;
        if (empty) { // a block that has not stored yet: read its word until it has
#pragma unroll
            for (int u = 0; u < 4 * UNROLL; u++)
                while (w[u] == EMPTY) w[u] = load_u32(&words[b + u * BLOCK_SIZE]);
        }
#pragma unroll
        for (int u = 0; u < 4 * UNROLL; u++)
            if (b + u * BLOCK_SIZE < gridDim.x) words[b + u * BLOCK_SIZE] = EMPTY; // seen by the next launch
#pragma unroll
        for (int u = 0; u < 4 * UNROLL; u++) v += __uint_as_float(w[u]);
    }
    v = block_sum(v);
    if (threadIdx.x == 0) *out = v;
}

// ---- launch ------------------------------------------------------------------

static float *g_partials;
static unsigned long long *g_words;
static unsigned int *g_cwords;
static unsigned int *g_retired, *g_tickets, *g_done, *g_counted;
static unsigned int g_launch; // the stamped launches' number, from 1

static size_t tiles12(size_t n) { return (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE); } // lesson 12's grid

static void sum_atomic(const float *d_in, size_t n, float *d_out)
{
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
    if (n == 0) return;
    reduce_atomic_kernel<<<(unsigned int)tiles12(n), BLOCK_SIZE>>>(d_in, n, d_out);
    CUDA_CHECK_LAST();
}
static void sum_fixed(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    reduce_fixed_kernel<<<(unsigned int)tiles12(n), BLOCK_SIZE>>>(d_in, n, g_partials, g_retired, d_out);
    CUDA_CHECK_LAST();
}
static void sum_ticketed(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    reduce_ticketed_kernel<<<(unsigned int)tiles12(n), BLOCK_SIZE>>>(d_in, n, g_partials, g_tickets, g_done, d_out);
    CUDA_CHECK_LAST();
}
template <int EXIT>
static void sum_stamped(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    // run() allocates and zeroes the words for each n, and every launch of
    // that n stores every word of its grid, so a word left by an earlier
    // launch holds launch - 1 (or 0): never this launch's number, even after
    // the count wraps at 2^32.
    reduce_stamped_kernel<EXIT><<<(unsigned int)tiles12(n), BLOCK_SIZE>>>(d_in, n, g_words, g_tickets, g_counted, ++g_launch, d_out);
    CUDA_CHECK_LAST();
}
static void sum_cleared(const float *d_in, size_t n, float *d_out)
{
    if (n == 0) { CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0)); return; }
    reduce_cleared_kernel<<<(unsigned int)tiles12(n), BLOCK_SIZE>>>(d_in, n, g_cwords, g_tickets, d_out);
    CUDA_CHECK_LAST();
}

static const LessonInfo info = {"lab_12_stamped_finish", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

static int run(Options opt)
{
    Input in = make_input(&opt);
    size_t tiles = tiles12(opt.n) + 1;
    if (!opt.csv) printf("grid: %zu blocks of %d threads, one per tile of %d floats\n", tiles - 1, BLOCK_SIZE, 4 * TILE);
    CUDA_CHECK(cudaMalloc((void **)&g_partials, tiles * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g_words, tiles * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemset(g_words, 0, tiles * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMalloc((void **)&g_cwords, tiles * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_cwords, 0xff, tiles * sizeof(unsigned int))); // every word EMPTY
    CUDA_CHECK(cudaMalloc((void **)&g_retired, 4 * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_retired, 0, 4 * sizeof(unsigned int)));
    g_tickets = g_retired + 1;
    g_done = g_retired + 2;
    g_counted = g_retired + 3;
    g_launch = 0;
    SumVariant v[] = {
        {"atomic", sum_atomic, &in},
        {"fixed", sum_fixed, &in},
        {"ticketed", sum_ticketed, &in},
        {"stamped", sum_stamped<EXIT_NOW>, &in},
        {"stamped_fence", sum_stamped<EXIT_FENCE>, &in},
        {"stamped_wait", sum_stamped<EXIT_WAIT>, &in},
        {"stamped_both", sum_stamped<EXIT_BOTH>, &in},
        {"cleared", sum_cleared, &in},
    };
    run_variants(&opt, v, (int)(sizeof v / sizeof v[0]));
    CUDA_CHECK(cudaFree(g_retired));
    CUDA_CHECK(cudaFree(g_cwords));
    CUDA_CHECK(cudaFree(g_words));
    CUDA_CHECK(cudaFree(g_partials));
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }

// ---- lesson 12's reading and block sum, unchanged ---------------------------

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
