/*
 * Lab 12: the atomic finish without a memset, and without a race. The
 * plain atomic finish zeroes *out with a memset, a second operation on the
 * stream, before the kernel's blocks add into it. A kernel could skip it
 * and let block 0 zero *out itself. That is a race: nothing orders block
 * 0's store before the other blocks' adds, and an add that lands first is
 * lost. Here a ticket and a flag order it (lesson 12: a swap and a flag). This lab
 * times lesson 12's kernel (512 threads x 8 float4s, a block per tile of
 * 16 Ki floats) with four atomic finishes, in one process, in turns:
 *
 *   memset      a memset, then one atomicAdd per block
 *   flag        lesson 12's order, no memset, a ticket in every block. Thread 0 takes a
 *               ticket (a relaxed atomicInc on state[0], answered while the
 *               block's loads are in flight). Once it has read its own share,
 *               the thread with ticket 0 zeroes *out, then stores the
 *               launch's number into a flag, state[32], on a 128-byte line
 *               of its own (a release store). Every other block's thread 0
 *               loads the flag at the same point (an acquire load, which
 *               holds warp 0 before the block sum's barrier) and adds only
 *               once the flag holds this launch's number, loading it again
 *               until it does
 *   flag_shared_line
 *               the same, with the flag in state[1]: the tickets' 128-byte
 *               line, which every block's atomicInc updates
 *   flag_start  flag, but the block with ticket 0 zeroes before its
 *               loads, and the others load the flag only after the block
 *               sum: every block's warp 0 waits for the ticket's answer
 *               before it loads anything
 *
 * Why no add is lost: in the first block's thread 0 the zero comes before
 * the release store; a block whose acquire load sees this launch's number
 * sees the zero too, so its add comes after it. The first block adds after
 * its own zero. Why nothing hangs: a block waits only for the block with
 * ticket 0, which took its ticket before any other, so it is already
 * running, and it waits for nobody before its release store. The flag holds
 * the previous launch's number (or 0), never this one's: launches on the
 * state are numbered anew on the host and run one at a time (a CUDA graph
 * replaying a captured launch would repeat its number, and two streams
 * sharing the state would mix their tickets).
 *
 *     make lab_12_no_memset && ./lab_12_no_memset -n 2^20,2^22,2^24,2^26 --flush clean
 */
#include "harness.h"
#include <cuda/atomic>

#define BLOCK_SIZE 512 // lesson 12's block, loads per thread and launch bound
#define UNROLL 8
#define MIN_BLOCKS 2
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * UNROLL) // float4s one block reads per round
#define FULL_MASK 0xffffffffu

static __device__ float thread_sum(const float *in, size_t n);
static __device__ float warp_sum(float v);
static __device__ float block_sum(float v);

// ---- the memset finish ---------------------------------------------------------

__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_memset_kernel(const float *in, size_t n, float *out)
{
    float v = block_sum(thread_sum(in, n));
    if (threadIdx.x == 0) atomicAdd(out, v);
}

// ---- the flag ------------------------------------------------------------------

// flag: the zero and the flag's loads after thread 0's own reading, as in lesson 12;
// flag_start: the block with ticket 0 zeroes before its loads and the others read
// the flag only after the block sum. SLOT: the flag's word of state (32: its own
// 128-byte line; 1: the tickets' line).
enum { AFTER_READING, AT_START };
template <int WHERE, int SLOT>
__global__ void __launch_bounds__(BLOCK_SIZE, MIN_BLOCKS) reduce_flag_kernel(const float *in, size_t n, unsigned int *state, unsigned int launch, float *out)
{
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> flag(state[SLOT]);
    unsigned int ticket = threadIdx.x == 0 ? atomicInc(&state[0], gridDim.x - 1) : 1; // relaxed; back during the loads
    if (WHERE == AT_START && ticket == 0) { // warp 0 of every block waits here for the ticket's answer
        *out = 0.0f;
        flag.store(launch, cuda::memory_order_release);
    }
    float v = thread_sum(in, n);
    if (WHERE == AFTER_READING && ticket == 0) {
        *out = 0.0f;
        flag.store(launch, cuda::memory_order_release); // the zero, then the number
    }
    // AFTER_READING: as lesson 12's line. AT_START: thread 0 with a ticket other than 0 loads
    // the flag only below, so it starts from a number that is not this launch's.
    unsigned int seen = WHERE == AFTER_READING && threadIdx.x == 0 && ticket ? flag.load(cuda::memory_order_acquire)
                                                                             : (WHERE == AT_START && ticket ? ~launch : launch);
    v = block_sum(v);
    if (threadIdx.x != 0) return;
    while (seen != launch) seen = flag.load(cuda::memory_order_acquire); // until the zero is visible
    atomicAdd(out, v);
}

// ---- launch ------------------------------------------------------------------

static unsigned int *g_state; // [0] the tickets, [32] the flag ([1] in flag_shared_line)
static unsigned int g_launch; // the launches' number, from 1

static size_t tiles12(size_t n) { return (n + 4 * (size_t)TILE - 1) / (4 * (size_t)TILE); } // lesson 12's grid

static void sum_memset(const float *d_in, size_t n, float *d_out)
{
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), 0));
    if (n == 0) return;
    reduce_memset_kernel<<<(unsigned int)tiles12(n), BLOCK_SIZE>>>(d_in, n, d_out);
    CUDA_CHECK_LAST();
}
// n = 0 launches one block: it zeroes *out and adds its 0.
template <int WHERE, int SLOT>
static void sum_flag(const float *d_in, size_t n, float *d_out)
{
    size_t blocks = n ? tiles12(n) : 1;
    reduce_flag_kernel<WHERE, SLOT><<<(unsigned int)blocks, BLOCK_SIZE>>>(d_in, n, g_state, ++g_launch, d_out);
    CUDA_CHECK_LAST();
}

static const LessonInfo info = {"lab_12_no_memset", BLOCK_FIXED, BLOCK_SIZE, "BLOCK_SIZE"};

static int run(Options opt)
{
    Input in = make_input(&opt);
    if (!opt.csv) printf("grid: %zu blocks of %d threads, one per tile of %d floats\n", tiles12(opt.n), BLOCK_SIZE, 4 * TILE);
    CUDA_CHECK(cudaMalloc((void **)&g_state, 64 * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(g_state, 0, 64 * sizeof(unsigned int))); // no ticket taken, no launch seen
    g_launch = 0;
    SumVariant v[] = {
        {"memset", sum_memset, &in},
        {"flag", sum_flag<AFTER_READING, 32>, &in},
        {"flag_shared_line", sum_flag<AFTER_READING, 1>, &in},
        {"flag_start", sum_flag<AT_START, 32>, &in},
    };
    run_variants(&opt, v, (int)(sizeof v / sizeof v[0]));
    CUDA_CHECK(cudaFree(g_state));
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
    // No barrier at the end: a second call must come after one (lesson 12's fixed finish).
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
