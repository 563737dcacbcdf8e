/*
 * kit_timing.h - timing GPU work with CUDA events.
 *
 * A kit_timer is two events. kit_time_launches warms up, then times each
 * repetition on its own and reports the median (and the spread), so one
 * slow repetition (a clock ramp, another process) does not move the result.
 */
#ifndef KIT_TIMING_H
#define KIT_TIMING_H

#include "kit_check.h"

typedef struct {
    cudaEvent_t start, stop;
} kit_timer;

static inline void kit_timer_create(kit_timer *t)
{
    KIT_CHECK(cudaEventCreate(&t->start));
    KIT_CHECK(cudaEventCreate(&t->stop));
}

static inline void kit_timer_destroy(kit_timer *t)
{
    KIT_CHECK(cudaEventDestroy(t->start));
    KIT_CHECK(cudaEventDestroy(t->stop));
}

static inline void kit_timer_start(kit_timer *t, cudaStream_t s) { KIT_CHECK(cudaEventRecord(t->start, s)); }
static inline void kit_timer_stop(kit_timer *t, cudaStream_t s) { KIT_CHECK(cudaEventRecord(t->stop, s)); }

/* Milliseconds between start and stop; waits for stop. */
static inline float kit_timer_ms(kit_timer *t)
{
    float ms = 0.0f;
    KIT_CHECK(cudaEventSynchronize(t->stop));
    KIT_CHECK(cudaEventElapsedTime(&ms, t->start, t->stop));
    return ms;
}

typedef struct {
    double median_ms, min_ms, max_ms;
    int reps;
} kit_timing;

static inline int kit_cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median of n values (sorts them in place). */
static inline double kit_median(float *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, kit_cmp_float);
    return n % 2 ? v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + (double)v[n / 2]);
}

/* What is timed: one launch (or a few) on the default stream, checked. */
typedef void (*kit_launch_fn)(void *ctx);

static inline kit_timing kit_time_launches(kit_launch_fn launch, void *ctx, int warmup, int reps)
{
    kit_timer t;
    kit_timing r;
    float *ms = (float *)malloc(sizeof(float) * (size_t)reps);
    int i;

    if (!ms)
        kit_die(KIT_EXIT_FAIL, "out of host memory");
    kit_timer_create(&t);
    for (i = 0; i < warmup; i++)
        launch(ctx);
    KIT_CHECK(cudaDeviceSynchronize());
    for (i = 0; i < reps; i++) {
        kit_timer_start(&t, 0);
        launch(ctx);
        kit_timer_stop(&t, 0);
        ms[i] = kit_timer_ms(&t);
    }
    KIT_CHECK(cudaDeviceSynchronize());
    r.reps = reps;
    r.median_ms = kit_median(ms, reps);
    r.min_ms = ms[0];
    r.max_ms = ms[reps - 1];
    kit_timer_destroy(&t);
    free(ms);
    return r;
}

#endif /* KIT_TIMING_H */
