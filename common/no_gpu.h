// no_gpu.h -- why no GPU can be used, in words: the cause first, then CUDA's own message and a hint (host, C11).
//
// device.h turns a failed cudaGetDeviceCount or first cudaSetDevice into
// these two lines (and exit 1); tests/test_harness.c checks them with gcc.
// CUDA answers "CUDA driver version is insufficient for CUDA runtime
// version" both when the driver is too old and when there is none at all;
// the driver's version (0: no driver) tells the two apart, so the first line
// can say which it is.
#ifndef HARNESS_NO_GPU_H
#define HARNESS_NO_GPU_H

#include <stdio.h>
#include <string.h>

enum {
    NO_GPU_NO_DEVICE,      // the call worked but found 0 devices, or said "no CUDA-capable device"
    NO_GPU_OLD_DRIVER,     // "insufficient driver": a driver older than the toolkit, or none (driver 0)
    NO_GPU_DRIVER_MISMATCH,// the driver's kernel module and library differ (typically after an update)
    NO_GPU_OTHER           // anything else: CUDA's words say it
};

// Writes the two lines for `prog` (the program's name) into line and hint (no
// newlines). kind: NO_GPU_*; driver, runtime: CUDA versions as 1000 x major +
// 10 x minor (driver 0: no driver found); visible: CUDA_VISIBLE_DEVICES or
// NULL; call and says: the CUDA call that failed and its error string.
static inline void no_gpu_text(char *line, size_t line_len, char *hint, size_t hint_len, const char *prog, int kind,
                               int driver, int runtime, const char *visible, const char *call, const char *says)
{
    char cause[160], cuda[224];
    snprintf(cuda, sizeof cuda, "%s says \"%.120s\"", call, says);
    if (kind == NO_GPU_OLD_DRIVER && driver == 0) {
        snprintf(cause, sizeof cause, "no NVIDIA driver was found");
        snprintf(hint, hint_len, "  hint: install the NVIDIA driver (nvidia-smi should then list the GPU);"
                                 " CUDA says \"insufficient\" for a missing driver too");
    } else if (kind == NO_GPU_OLD_DRIVER) {
        snprintf(cause, sizeof cause, "the NVIDIA driver (CUDA %d.%d) is older than the CUDA %d.%d this program was built with",
                 driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
        snprintf(hint, hint_len, "  hint: update the driver, or build with a toolkit no newer than CUDA %d.%d"
                                 " (make clean && make NVCC=/path/to/its/bin/nvcc)", driver / 1000, driver % 1000 / 10);
    } else if (kind == NO_GPU_DRIVER_MISMATCH) {
        snprintf(cause, sizeof cause, "the NVIDIA driver's kernel module and its library are of different versions");
        snprintf(hint, hint_len, "  hint: this follows a driver update: reboot (or reload the nvidia kernel module)");
    } else if (kind == NO_GPU_NO_DEVICE && visible) {
        snprintf(cause, sizeof cause, "no GPU is visible with CUDA_VISIBLE_DEVICES=\"%.40s\"", visible);
        snprintf(hint, hint_len, "  hint: CUDA sees only the GPUs it lists: unset it, or list one that nvidia-smi shows");
    } else if (kind == NO_GPU_NO_DEVICE) {
        snprintf(cause, sizeof cause, "the NVIDIA driver sees no GPU");
        snprintf(hint, hint_len, "  hint: nvidia-smi lists the GPUs the driver sees; in a container the GPU must be"
                                 " handed in (docker run --gpus all)");
    } else {
        snprintf(cause, sizeof cause, "CUDA cannot use the GPU");
        if (visible)
            snprintf(hint, hint_len, "  hint: CUDA_VISIBLE_DEVICES is set to \"%.40s\": only the GPUs it lists are seen"
                                     " (unset it, or list one that nvidia-smi shows)", visible);
        else
            snprintf(hint, hint_len, "  hint: nvidia-smi shows whether the driver sees the GPU and what holds it");
    }
    snprintf(line, line_len, "%s: no usable GPU: %s (%s)", prog, cause, cuda);
}

#endif // HARNESS_NO_GPU_H
