/*
 * kit_timing.h - timing GPU work with CUDA events.
 *
 * A kit_timer is two events. kit_measure times a piece of work run after
 * run until its median is steady (or a fixed --reps), the way NVIDIA's
 * nvbench does: at least a few runs and some milliseconds in all, then stop
 * when the middle half of the runs lies within a small share of the median,
 * or when the time allowed is spent. Every timed run is a checked run: the
 * outputs are poisoned before it and compared after it, outside the timed
 * span, so work skipped while timing shows.
 */
#ifndef KIT_TIMING_H
#define KIT_TIMING_H

#include <time.h>

#include "kit_args.h"
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

/* When to stop timing. */
typedef struct {
    int reps;       /* > 0: exactly this many runs (--reps); 0: until steady */
    int min_reps;   /* fewer runs than this only when max_ms is spent (two at least) */
    int max_reps;   /* never more */
    double min_ms;  /* time at least this much in all... */
    double max_ms;  /* ...and stop once this much is timed */
    double noise;   /* steady: the middle half spans at most this share of the median */
} kit_policy;

static inline kit_policy kit_policy_default(int reps)
{
    kit_policy p;
    p.reps = reps;
    p.min_reps = 3;
    p.max_reps = 200;
    p.min_ms = 20.0;
    p.max_ms = 500.0;
    p.noise = 0.02;
    return p;
}

/* The policy for the row KEY: p, or one timed run where --focus names
 * another row (and kit_focus_also does not name this one). */
static inline kit_policy kit_policy_for(const kit_policy *p, const char *key)
{
    kit_policy q = *p;
    if (kit_focus && key) {
        if (strcmp(kit_focus, key) == 0)
            kit_focus_seen = 1;
        else if (!kit_focus_also || strcmp(kit_focus_also, key) != 0)
            q.reps = 1;
    }
    return q;
}

/* What kit_measure times. */
typedef struct {
    void (*prepare)(void *ctx); /* before each run, untimed: poison the outputs (or NULL) */
    void (*run)(void *ctx);     /* the timed work, on the default stream */
    long long (*check)(void *ctx); /* after each run, untimed: outputs that differ from
                                      the checked run's (or NULL) */
    void *ctx;
    float first_ms; /* > 0: a run already timed (the checked run), the first sample */
    int wall_clock; /* 1: timed by the host's clock, for work on several GPUs that no
                       one GPU's events span: run returns when all of it is done */
} kit_work;

/*
 * In the grader's judge (kit_judge.h) the student's code runs in another
 * process, whose GPU work no event of the judge's can span: every run is
 * timed by the judge's own clock, from a GPU with nothing of the judge's
 * queued to the worker's answer that the work is done.
 */
#if defined(KIT_JUDGE) && KIT_JUDGE
#define KIT_TIME_BY_CLOCK 1
#else
#define KIT_TIME_BY_CLOCK 0
#endif

/* Wall-clock milliseconds (KIT_TIMES=1, and kit_work.wall_clock). */
static inline double kit_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct {
    double median_ms, min_ms, max_ms;
    double spread; /* the middle half's span over the median */
    int reps;
    int bad_runs;  /* timed runs whose outputs were not the checked run's */
} kit_measurement;

/* The span of the middle half of v[0..n) (sorted) over its median. */
static inline double kit_spread(const float *v, int n)
{
    int lo = n / 4, hi = (3 * n) / 4;
    double med = n % 2 ? v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + (double)v[n / 2]);
    if (hi > n - 1)
        hi = n - 1;
    return med > 0 ? (v[hi] - v[lo]) / med : 0.0;
}

/*
 * Times w->run until policy p says stop; returns the median. The caller has
 * warmed up (its checked run). A launch error or a fault in any run exits
 * through KIT_CHECK with the call that failed.
 */
static inline kit_measurement kit_measure(const kit_work *w, const kit_policy *p)
{
    kit_timer t;
    kit_measurement m;
    int cap = p->reps > 0 ? p->reps : p->max_reps, n = 0;
    float *ms = (float *)malloc(sizeof(float) * (size_t)cap);
    float *sorted = (float *)malloc(sizeof(float) * (size_t)cap);
    double total = 0.0;

    if (!ms || !sorted)
        kit_die(KIT_EXIT_FAIL, "out of host memory");
    memset(&m, 0, sizeof m);
    kit_timer_create(&t);
    if (w->first_ms > 0 && p->reps == 0)
        total += ms[n++] = w->first_ms;
    while (n < cap) {
        if (w->prepare)
            w->prepare(w->ctx);
        if (w->wall_clock || KIT_TIME_BY_CLOCK) {
            double t0;
            KIT_CHECK(cudaDeviceSynchronize());
            t0 = kit_wall_ms();
            w->run(w->ctx);
            KIT_CHECK_LAUNCH();
            KIT_CHECK(cudaDeviceSynchronize());
            ms[n] = (float)(kit_wall_ms() - t0);
        } else {
            kit_timer_start(&t, 0);
            w->run(w->ctx);
            KIT_CHECK_LAUNCH();
            kit_timer_stop(&t, 0);
            ms[n] = kit_timer_ms(&t);
            KIT_CHECK(cudaDeviceSynchronize());
        }
        total += ms[n++];
        if (w->check && w->check(w->ctx) != 0)
            m.bad_runs++;
        if (p->reps > 0)
            continue;
        memcpy(sorted, ms, sizeof(float) * (size_t)n);
        qsort(sorted, (size_t)n, sizeof *sorted, kit_cmp_float);
        /* Steady and long enough; or out of time, with two runs at least. */
        if ((n >= p->min_reps && total >= p->min_ms && kit_spread(sorted, n) <= p->noise) ||
            (n >= 2 && total >= p->max_ms))
            break;
    }
    qsort(ms, (size_t)n, sizeof *ms, kit_cmp_float);
    m.reps = n;
    m.median_ms = kit_median(ms, n);
    m.min_ms = ms[0];
    m.max_ms = ms[n - 1];
    m.spread = kit_spread(ms, n);
    kit_timer_destroy(&t);
    free(ms);
    free(sorted);
    return m;
}

#endif /* KIT_TIMING_H */
