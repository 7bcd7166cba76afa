// cccl_gpu_to_gpu_probe.cu -- the check behind results/cccl-gpu-to-gpu-<gpu>.txt: CUB's
// DeviceReduce::Sum at three determinism levels, CUB's own memory resource, on odd integers
// in [-15, 15] (exact in the orders a tree or a random walk gives), at sizes around 2^29..2^31. Build and run (CCCL 3.1+):
//   nvcc -std=c++17 -arch=sm_90 -I$CCCL_HOME/include/cccl -o probe scripts/cccl_gpu_to_gpu_probe.cu && ./probe
#include <cub/cub.cuh>
#include <cuda/execution>
#include <cstdio>
#include <cstdlib>
#include <vector>
__global__ void fill(float *x, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned long long h = i * 0x9E3779B97F4A7C15ull; h ^= h >> 29; x[i] = (float)((int)(h % 16) * 2 - 15);
  }
}
__global__ void ref(const float *x, size_t n, long long *s) {
  long long t = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) t += (long long)x[i];
  atomicAdd((unsigned long long *)s, (unsigned long long)t);
}
int main() {
  size_t ns[] = {(1u << 29) + 1, (size_t)1 << 29, ((size_t)1 << 30) - 1, (size_t)1 << 30, ((size_t)1 << 30) + 1, (size_t)3 << 29, ((size_t)1 << 31) - 1};
  size_t maxn = ns[6];
  float *x, *out; long long *s;
  cudaMalloc(&x, maxn * 4); cudaMalloc(&out, 4); cudaMalloc(&s, 8);
  fill<<<1024, 256>>>(x, maxn);
  for (size_t n : ns) {
    cudaMemset(s, 0, 8); ref<<<1024, 256>>>(x, n, s); long long want; cudaMemcpy(&want, s, 8, cudaMemcpyDeviceToHost);
    const char *names[3] = {"gpu_to_gpu", "run_to_run", "not_guaranteed"};
    for (int lvl = 0; lvl < 3; lvl++) {
      cudaError_t e;
      if (lvl == 0) e = cub::DeviceReduce::Sum(x, out, (long long)n, cuda::execution::require(cuda::execution::determinism::gpu_to_gpu));
      else if (lvl == 1) e = cub::DeviceReduce::Sum(x, out, (long long)n, cuda::execution::require(cuda::execution::determinism::run_to_run));
      else e = cub::DeviceReduce::Sum(x, out, (long long)n, cuda::execution::require(cuda::execution::determinism::not_guaranteed));
      cudaError_t e2 = cudaDeviceSynchronize();
      float got; cudaMemcpy(&got, out, 4, cudaMemcpyDeviceToHost);
      printf("n=%zu %-14s got %.9g want %lld %s (%s %s)\n", n, names[lvl], got, want, (double)got == (double)want ? "ok" : "WRONG", cudaGetErrorString(e), cudaGetErrorString(e2));
    }
  }
  return 0;
}
