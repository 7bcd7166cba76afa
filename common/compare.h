// compare.h -- several sum variants checked, then timed in turns (library comparisons).
// Included by harness.h (nvcc only); uses its report, flush and timing pieces.
#ifndef COMPARE_H
#define COMPARE_H

typedef struct {
    const char *name;  // the variant column of the report
    reduce_fn fn;      // writes the sum of in->d_in[0..n) to d_out
    const Input *in;   // its input (and the expected result and tolerance)
} SumVariant;

// Like run_variant for each of v[0..count), except that the timed repetitions
// alternate: round k runs every variant once, starting with variant k % count,
// so no variant always goes first or always follows the same neighbour, and a
// drifting clock or L2 state is shared alike. Each variant is checked after a
// warm-up and again on its own last repetition; a variant that fails its
// warm-up is not timed. Lines are printed in the order given. Returns 1 if
// every variant passed.
static inline int run_variants(const Options *opt, const SumVariant *v, int count)
{
    int cap = opt->reps ? opt->reps : MAX_REPS;
    Report *r = (Report *)calloc((size_t)count, sizeof(Report));
    double *t = (double *)malloc(sizeof(double) * (size_t)cap * (size_t)count);
    if (!r || !t) { fprintf(stderr, "%s: out of host memory\n", g_prog); exit(1); }
    for (int i = 0; i < count; i++) {
        r[i] = new_report(opt, v[i].name, v[i].in->n, (double)v[i].in->n * sizeof(float));
        r[i].expected = v[i].in->expected;
        r[i].tol = v[i].in->tol;
        SumWork w = {v[i].fn, v[i].in};
        sum_poison(&w);
        sum_work(&w); // warm-up: first-call costs (module load, handles) stay out of the timings
        CUDA_CHECK(cudaDeviceSynchronize());
        r[i].result = read_result();
        r[i].pass = check_result(r[i].result, v[i].in->expected, v[i].in->tol);
    }
    if (!opt->check_only) {
        cudaEvent_t start, stop;
        CUDA_CHECK(cudaEventCreate(&start));
        CUDA_CHECK(cudaEventCreate(&stop));
        double total_ms = 0.0;
        int k = 0;
        while (k < cap) {
            for (int j = 0; j < count; j++) {
                int i = (k + j) % count;
                if (!r[i].pass) continue;
                SumWork w = {v[i].fn, v[i].in};
                flush_l2(opt, k);
                sum_poison(&w);
                CUDA_CHECK(cudaEventRecord(start, 0));
                sum_work(&w);
                CUDA_CHECK(cudaEventRecord(stop, 0));
                CUDA_CHECK(cudaEventSynchronize(stop));
                float ms = 0.0f;
                CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
                t[(size_t)i * cap + k] = ms * 1e3;
                total_ms += ms;
                r[i].result = read_result(); // this variant's latest result, outside the timed interval
            }
            k++;
            if (!opt->reps && k >= MIN_REPS && total_ms >= ADAPTIVE_SECONDS * 1e3 * count) break;
        }
        CUDA_CHECK(cudaEventDestroy(start));
        CUDA_CHECK(cudaEventDestroy(stop));
        for (int i = 0; i < count; i++) {
            if (!r[i].pass) continue;
            r[i].reps = k;
            median_min_max(t + (size_t)i * cap, k, &r[i].median_us, &r[i].min_us, &r[i].max_us);
            r[i].pass = check_result(r[i].result, v[i].in->expected, v[i].in->tol); // the last repetition's
        }
    }
    int all = 1;
    for (int i = 0; i < count; i++) all &= report_result(opt, &r[i]);
    free(t);
    free(r);
    return all;
}

#endif // COMPARE_H
