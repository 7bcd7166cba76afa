/*
 * Lesson 01: one GPU thread sums the whole array.
 *
 * The starting point: the plainest correct reduction, a C loop that happens to
 * run on the GPU. One thread of one block walks all n elements and adds them
 * into a register, then writes the total.
 *
 * The flaw: a GPU is fast only when tens of thousands of threads keep its
 * memory system busy. A lone thread issues a few loads at a time (four: the
 * compiler unrolls the loop by four), waits hundreds of cycles for them to
 * come back from memory, and leaves every other SM of the chip idle. Lesson 02 puts
 * one thread on every element.
 *
 *     make lesson01 && ./lesson01            # default n = 2^20 (the other lessons: 2^26)
 *     ./lesson01 -n 1e6 -d uniform --check   # any size, either input
 */
// One thread is slow: 2^20 elements by default keep one reduction well under a second.
#define LESSON_DEFAULT_N ((size_t)1 << 20)
#include "harness.h"

// ---- kernel ---------------------------------------------------------------

// Launched as <<<1, 1>>>: this thread is the whole computation.
__global__ void reduce_kernel(const float *in, size_t n, float *out)
{
    float sum = 0.0f;
    for (size_t i = 0; i < n; i++) // size_t: n may exceed 2^31
        sum += in[i];
    *out = sum;
}

// ---- launch ---------------------------------------------------------------

static void reduce_gpu(const float *d_in, size_t n, float *d_out)
{
    reduce_kernel<<<1, 1>>>(d_in, n, d_out); // n = 0 is fine: the loop does not run, *out = 0
    CUDA_CHECK_LAST();
}

// ---- main -----------------------------------------------------------------

static const LessonInfo info = {"01_serial", BLOCK_NONE, 1, NULL};

// One run for one set of options. main() calls it once for every combination
// of the listed -n, -s, -d, --offset and -b values (run_lesson, common/harness.h).
static int run(Options opt)
{
    Input in = make_input(&opt);
    run_variant(&opt, &in, "serial", reduce_gpu);
    free_input(&in);
    return 0;
}

int main(int argc, char **argv) { return run_lesson(argc, argv, &info, run); }
