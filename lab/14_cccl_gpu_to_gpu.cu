// uses: cccl
/*
 * Lab 14: is CUB's gpu_to_gpu sum right above 2^29 elements?
 *
 * cub::DeviceReduce::Sum at each of its three determinism levels, asked for
 * through cuda::execution::require, with CUB's own memory resource (none of
 * the lessons' scratch handling), at sizes around 2^29..2^31. The input is
 * odd integers in [-15, 15] from a hash: its running sums and the sums of its
 * strided slices stay far below 2^24, so a tree of partial sums over
 * contiguous or strided shares adds it exactly (not every order would: its
 * positive elements alone pass 2^24), and the right answer is the int64 sum,
 * computed on the GPU beside it. Every line says what CUB returned, what the
 * synchronisation after it returned, the result and the verdict; the last
 * line counts the wrong sums CUB returned with no error. Exit 0 when every
 * call is right or reported an error, 1 when one returned success with a
 * wrong sum or the GPU stopped working.
 *
 *     make lab_14_cccl_gpu_to_gpu CCCL_HOME=/path/to/cccl && ./lab_14_cccl_gpu_to_gpu
 *
 * It needs CUB 3.4 or newer, and about 8.6 GB of GPU memory (2^31 - 1 floats).
 */
#include "harness.h"
#include "cccl_env.h" // HAVE_DETERMINISM: CUB 3.4 or newer
#include <cub/device/device_reduce.cuh>

// x[i]: an odd integer in [-15, 15] from a hash of i.
__global__ void fill_kernel(float *x, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long h = i * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
        x[i] = (float)((int)(h % 16) * 2 - 15);
    }
}

// *s += the exact sum of x[0..n), in int64.
__global__ void exact_kernel(const float *x, size_t n, long long *s)
{
    long long t = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        t += (long long)x[i];
    atomicAdd((unsigned long long *)s, (unsigned long long)t); // two's complement: signed sums add right
}

#if HAVE_DETERMINISM
static cudaError_t cub_sum(int level, const float *x, float *out, size_t n)
{
    namespace ex = cuda::execution;
    if (level == 0) return cub::DeviceReduce::Sum(x, out, (long long)n, ex::require(ex::determinism::gpu_to_gpu));
    if (level == 1) return cub::DeviceReduce::Sum(x, out, (long long)n, ex::require(ex::determinism::run_to_run));
    return cub::DeviceReduce::Sum(x, out, (long long)n, ex::require(ex::determinism::not_guaranteed));
}
#endif

int main(int argc, char **argv)
{
    set_prog_name(argv[0]);
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: %s   (no options: CUB's three determinism levels at seven sizes around 2^30; needs CUB 3.1+)\n",
               g_prog);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "%s: takes no options, got '%s' (%s -h says what it does)\n", g_prog, argv[1], g_prog);
        return 2;
    }
#if !HAVE_DETERMINISM
    fprintf(stderr, "%s: needs CUB 3.1 or newer, and was built with CUB %d.%d.%d: make -B lab_14_cccl_gpu_to_gpu CCCL_HOME=DIR\n",
            g_prog, CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION);
    return 1;
#else
    init_device();
    const size_t ns[] = {((size_t)1 << 29) + 1, (size_t)1 << 29, ((size_t)1 << 30) - 1, (size_t)1 << 30,
                         ((size_t)1 << 30) + 1, (size_t)3 << 29, ((size_t)1 << 31) - 1};
    const char *names[3] = {"gpu_to_gpu", "run_to_run", "not_guaranteed"};
    const size_t most = ns[sizeof ns / sizeof ns[0] - 1];
    float *x, *out;
    long long *s;
    CUDA_CHECK(cudaMalloc((void **)&x, most * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&out, sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&s, sizeof(long long)));
    fill_kernel<<<1024, 256>>>(x, most);
    CUDA_CHECK_LAST();
    int runtime = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    printf("# %s: CUB %d.%d.%d, CUDA runtime %d.%d, on %s; odd integers in [-15, 15], exact in tree orders\n", g_prog,
           CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION, runtime / 1000, runtime % 1000 / 10, g_dev.name);
    printf("# n level cub_returned sync_returned got want verdict\n");
    int wrong = 0;
    for (size_t n : ns) {
        long long want;
        CUDA_CHECK(cudaMemset(s, 0, sizeof(long long)));
        exact_kernel<<<1024, 256>>>(x, n, s);
        CUDA_CHECK_LAST();
        CUDA_CHECK(cudaMemcpy(&want, s, sizeof want, cudaMemcpyDeviceToHost));
        for (int level = 0; level < 3; level++) {
            const float poison = 1e30f; // a result CUB never wrote shows as this
            CUDA_CHECK(cudaMemcpy(out, &poison, sizeof poison, cudaMemcpyHostToDevice));
            cudaError_t e = cub_sum(level, x, out, n);
            cudaError_t e2 = cudaDeviceSynchronize();
            (void)cudaGetLastError(); // a launch error CUB reported: cleared, so that no later call reports it as its own
            float got = poison;
            if (e2 == cudaSuccess) CUDA_CHECK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
            const char *verdict = e != cudaSuccess || e2 != cudaSuccess ? "error" : (double)got == (double)want ? "right" : "WRONG";
            if (verdict[0] == 'W') wrong++;
            printf("%zu %s %s %s %.9g %lld %s\n", n, names[level], cudaGetErrorName(e), cudaGetErrorName(e2), got, want,
                   verdict);
            if (e2 != cudaSuccess) { // the context may be lost: nothing after this can be trusted
                printf("# stopped: the GPU failed after this call; %d wrong with no error before it\n", wrong);
                return 1;
            }
        }
    }
    CUDA_CHECK(cudaFree(s));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(x));
    printf("# %d wrong with no error\n", wrong);
    return wrong ? 1 : 0;
#endif
}
