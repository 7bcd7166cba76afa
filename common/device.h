// device.h -- the GPU: picking it, what the report needs of it, and why there is none (nvcc only).
//
// harness.h includes this file after CUDA_CHECK; a lesson includes only harness.h.
#ifndef HARNESS_DEVICE_H
#define HARNESS_DEVICE_H

#include "no_gpu.h" // the words for each reason there is no usable GPU

typedef struct {
    int id;
    char name[256];
    int sm_count, cc_major, cc_minor;
    size_t l2_bytes;
    double peak_gbs; // nominal: 2 x memory clock x bus width / 8
} Device;

static Device g_dev;

// No usable GPU: two lines, exit 1. The first names the cause (no_gpu.h
// tells a missing driver from an old one) with CUDA's own words; the second
// is a hint. e: what `call` returned (cudaSuccess: it found zero devices).
static inline void no_usable_gpu(cudaError_t e, const char *call)
{
    int driver = 0;
    cudaDriverGetVersion(&driver); // 0 when no driver is installed
    int kind = e == cudaSuccess || e == cudaErrorNoDevice ? NO_GPU_NO_DEVICE
               : e == cudaErrorInsufficientDriver         ? NO_GPU_OLD_DRIVER
               : e == cudaErrorSystemDriverMismatch       ? NO_GPU_DRIVER_MISMATCH
                                                          : NO_GPU_OTHER;
    char line[512], hint[256];
    no_gpu_text(line, sizeof line, hint, sizeof hint, g_prog, kind, driver, CUDART_VERSION,
                getenv("CUDA_VISIBLE_DEVICES"), call, e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
    fprintf(stderr, "%s\n%s\n", line, hint);
    exit(1);
}

// Picks device 0 and reads what the report needs. No GPU: no_usable_gpu().
static inline void init_device(void)
{
    static int done = 0;
    if (done) {
        CUDA_CHECK(cudaSetDevice(0));
        return;
    }
    done = 1;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) no_usable_gpu(e, "cudaGetDeviceCount");
    e = cudaSetDevice(0);
    if (e == cudaSuccess) e = cudaFree(0); // makes the context now: a GPU that cannot be used says so here
    if (e != cudaSuccess) no_usable_gpu(e, "cudaSetDevice(0)");
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    snprintf(g_dev.name, sizeof g_dev.name, "%s", prop.name);
    int mem_khz = 0, bus_bits = 0, l2 = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&g_dev.sm_count, cudaDevAttrMultiProcessorCount, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&g_dev.cc_major, cudaDevAttrComputeCapabilityMajor, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&g_dev.cc_minor, cudaDevAttrComputeCapabilityMinor, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    g_dev.l2_bytes = (size_t)l2;
    g_dev.peak_gbs = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;
}

// Lessons for Hopper only call this once g_dev is filled (init_device, which
// make_input calls), before their first kernel: on an older GPU, say why and exit 0.
static inline void require_sm90(void)
{
    if (g_dev.cc_major < 9) {
        printf("SKIP: needs sm_90 (this GPU, %s, is sm_%d%d)\n", g_dev.name, g_dev.cc_major, g_dev.cc_minor);
        exit(0);
    }
}

// Bad input that only the device can judge (too many floats for the current
// GPU: all of them, or its shard in lesson 18): one line, exit 2.
static inline void need_device_bytes(const Options *opt, size_t bytes)
{
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    size_t reserve = 2 * g_dev.l2_bytes + ((size_t)64 << 20); // L2 flush buffer + slack
    if (bytes > free_b || free_b - bytes < reserve) {
        int dev = 0;
        cudaDeviceProp prop;
        char what[64];
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
        snprintf(what, sizeof what, opt->have_n ? "-n %zu" : "an input of %zu floats", opt->n); // lesson 17's -m, -k: no -n
        fprintf(stderr, "%s: %s needs %.2f GiB of device memory on GPU %d (%s), which has %.2f GiB free\n", g_prog,
                what, (double)(bytes + reserve) / (1 << 30), dev, prop.name, (double)free_b / (1 << 30));
        exit(2);
    }
}

#endif // HARNESS_DEVICE_H
