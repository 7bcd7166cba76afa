// multi_gpu.h -- time_work for work spread over several GPUs of one host (nvcc only).
//
// harness.h includes this file at its end; a lesson includes only harness.h.
#ifndef HARNESS_MULTI_GPU_H
#define HARNESS_MULTI_GPU_H

// time_work for work spread over several GPUs: devs[d] belongs to device d.
// Both events live on device 0 (an elapsed time needs them on one device); the
// other devices' streams wait for `start` (fork) and device 0's stream waits
// for each one's `done` (join), so the interval runs from the start on device
// 0 until the LAST device has finished. Flush and prepare stay outside it.
typedef struct {
    cudaStream_t stream; // the device's work goes here
    cudaEvent_t done;    // the join point (may be created with cudaEventDisableTiming)
    void *flush;         // 2 x that device's L2: written (dirty) or read (clean) between repetitions
    size_t flush_bytes;
} TimedDevice;

static inline void sync_devices(int ndev) // waits for every device; leaves device 0 current
{
    for (int d = 0; d < ndev; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    CUDA_CHECK(cudaSetDevice(0));
}

static inline void time_work_devices(const Options *opt, const TimedDevice *devs, int ndev, work_fn prepare, work_fn work,
                                     void *arg, Report *r)
{
    Timings s = timings_new(opt);
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (int d = 0; opt->flush == FLUSH_CLEAN && d < ndev; d++) { // once: a clean flush reads set bytes
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMemset(devs[d].flush, 0, devs[d].flush_bytes));
    }
    CUDA_CHECK(cudaSetDevice(0));
    float ms;
    do {
        for (int d = 0; d < ndev; d++) {
            CUDA_CHECK(cudaSetDevice(d));
            flush_buffer(opt, devs[d].flush, devs[d].flush_bytes, s.k, devs[d].stream);
        }
        if (prepare) prepare(arg);
        sync_devices(ndev); // every device idle: flush and poison stay outside the interval
        CUDA_CHECK(cudaEventRecord(start, devs[0].stream));
        for (int d = 1; d < ndev; d++) { // fork: no device starts before `start`
            CUDA_CHECK(cudaSetDevice(d));
            CUDA_CHECK(cudaStreamWaitEvent(devs[d].stream, start, 0));
        }
        CUDA_CHECK(cudaSetDevice(0));
        work(arg); // must return with device 0 current
        for (int d = 1; d < ndev; d++) { // join: `stop` comes after every device's work
            CUDA_CHECK(cudaSetDevice(d));
            CUDA_CHECK(cudaEventRecord(devs[d].done, devs[d].stream));
            CUDA_CHECK(cudaSetDevice(0));
            CUDA_CHECK(cudaStreamWaitEvent(devs[0].stream, devs[d].done, 0));
        }
        CUDA_CHECK(cudaEventRecord(stop, devs[0].stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    } while (!timings_add(opt, &s, ms));
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    timings_report(&s, r);
}

#endif // HARNESS_MULTI_GPU_H
