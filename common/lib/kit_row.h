/*
 * kit_row.h - one row of a lab's table: a kernel (the student's or the
 * kit's) counted, checked and timed, in that order:
 *
 *   1. counted  the counting build runs once (kit_counted.h): requests,
 *               segments, sectors, lanes, bank conflicts;
 *   2. checked  the outputs are poisoned, the timed build runs once, timed,
 *               and every element is checked on the host;
 *   3. timed    only if the check passed: the outputs are kept on the
 *               device, then run after run is poisoned, timed and compared
 *               with them (kit_measure), until the median of these runs
 *               and the checked one is steady.
 *
 * A lab describes its kernel with a kit_row_work of callbacks; what a
 * callback does not need may be NULL. Where the row also has refresh and
 * check, every timed run gets inputs of its own instead: drawn afresh
 * before it (untimed), its outputs checked on the device against what
 * those inputs must give; so a kernel that kept results from an earlier
 * run (keyed on its inputs) fails, as one that skipped work does. The
 * first inputs are put back (restore) once the row is timed.
 */
#ifndef KIT_ROW_H
#define KIT_ROW_H

#include <stdarg.h>
#include <time.h>

#include "kit_counted.h"
#include "kit_report.h"
#include "kit_timing.h"

typedef struct {
    char name[48]; /* for people: "strided_access s=8" */
    char key[32];  /* for key: value lines: "stride-8" */
    const char *todo; /* the TODOs it rests on, for messages; NULL for the kit's own */
    int counted;
    kit_counts counts;
    long long wrong; /* elements wrong after the checked run; -1 not checked */
    int timed;
    int fresh; /* its timed runs had inputs of their own */
    kit_measurement t;
} kit_row;

typedef struct {
    void *ctx;
    kit_counts (*counted)(void *ctx);                  /* run the counting build, read its counts */
    void (*timed)(void *ctx);                          /* launch the timed build */
    void (*poison)(void *ctx);                         /* outputs to NaN */
    long long (*verify)(void *ctx, const kit_row *row); /* every element; the first wrong one on stderr */
    void (*keep)(void *ctx);                           /* keep the checked outputs on the device */
    long long (*compare)(void *ctx);                   /* outputs unlike the kept ones */
    void (*refresh)(void *ctx, unsigned long long draw); /* new inputs, and what the outputs must be */
    long long (*check)(void *ctx);                     /* outputs unlike what they must be */
    void (*restore)(void *ctx);                        /* the first inputs back */
} kit_row_work;

/* A timed run with inputs of its own: refresh, then poison (untimed). */
typedef struct {
    const kit_row_work *w;
    unsigned long long draw;
} kit_row_fresh;

static inline void kit_row_fresh_prepare(void *p)
{
    kit_row_fresh *f = (kit_row_fresh *)p;
    f->w->refresh(f->w->ctx, ++f->draw);
    if (f->w->poison)
        f->w->poison(f->w->ctx);
}
static inline void kit_row_fresh_run(void *p) { ((kit_row_fresh *)p)->w->timed(((kit_row_fresh *)p)->w->ctx); }
static inline long long kit_row_fresh_check(void *p) { return ((kit_row_fresh *)p)->w->check(((kit_row_fresh *)p)->w->ctx); }

/* The seed of a timed run's inputs: the row's seed, moved by the draw. */
static inline unsigned long long kit_row_draw_seed(unsigned long long seed, unsigned long long draw)
{
    return draw ? seed ^ ((draw + 1) * 0x9e3779b97f4a7c15ull) : seed;
}

/* Names a row: key, the TODOs it rests on, then a printf-style name. */
static inline void kit_row_name(kit_row *row, const char *key, const char *todo, const char *fmt, ...)
{
    va_list ap;
    memset(row, 0, sizeof *row);
    va_start(ap, fmt);
    vsnprintf(row->name, sizeof row->name, fmt, ap);
    va_end(ap);
    snprintf(row->key, sizeof row->key, "%s", key);
    row->todo = todo;
    row->wrong = -1;
}

static inline void kit_row_measure(kit_row *row, const kit_row_work *w, const kit_policy *policy)
{
    const kit_policy focus = kit_policy_for(policy, row->key), *p = &focus;
    kit_work timed = {NULL, NULL, NULL, NULL, 0.0f, 0};
    kit_timer t;
    float first;
    double w0 = kit_wall_ms(), w1, w2;
    const char *times = getenv("KIT_TIMES");

    if (w->counted) {
        row->counts = w->counted(w->ctx);
        KIT_CHECK_LAUNCH();
        KIT_CHECK(cudaDeviceSynchronize());
        row->counted = 1;
    }
    /* The checked run, timed too: unless --reps fixes the count, it is the
     * first sample (a median does not mind its first-launch costs). */
    if (w->poison)
        w->poison(w->ctx);
    if (KIT_TIME_BY_CLOCK) {
        double t0;
        KIT_CHECK(cudaDeviceSynchronize());
        t0 = kit_wall_ms();
        w->timed(w->ctx);
        KIT_CHECK_LAUNCH();
        KIT_CHECK(cudaDeviceSynchronize());
        first = (float)(kit_wall_ms() - t0);
    } else {
        kit_timer_create(&t);
        kit_timer_start(&t, 0);
        w->timed(w->ctx);
        KIT_CHECK_LAUNCH();
        kit_timer_stop(&t, 0);
        first = kit_timer_ms(&t);
        kit_timer_destroy(&t);
    }
    KIT_CHECK(cudaDeviceSynchronize());
    w1 = kit_wall_ms();
    row->wrong = w->verify ? w->verify(w->ctx, row) : 0;
    w2 = kit_wall_ms();
    if (row->wrong != 0)
        return; /* wrong results have no time worth reporting */
    if (w->refresh && w->check) {
        kit_row_fresh f = {w, 0};
        timed.prepare = kit_row_fresh_prepare;
        timed.run = kit_row_fresh_run;
        timed.check = kit_row_fresh_check;
        timed.ctx = &f;
        timed.first_ms = first;
        row->t = kit_measure(&timed, p);
        row->fresh = 1;
        if (w->restore)
            w->restore(w->ctx);
    } else {
        if (w->keep)
            w->keep(w->ctx);
        timed.prepare = w->poison;
        timed.run = w->timed;
        timed.check = w->compare;
        timed.ctx = w->ctx;
        timed.first_ms = first;
        row->t = kit_measure(&timed, p);
    }
    row->timed = 1;
    if (times && *times == '1')
        fprintf(stderr, "%s: %s: counted and checked run %.0f ms, host check %.0f ms, %d timed runs %.0f ms\n",
                kit_program, row->name, w1 - w0, w2 - w1, row->t.reps, kit_wall_ms() - w2);
}

/* ---- checks on the device ------------------------------------------------ */

static __global__ void kit_differ_kernel(const unsigned int *a, const unsigned int *b, size_t words,
                                         unsigned long long *count)
{
    unsigned long long local = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words;
         i += (size_t)gridDim.x * blockDim.x)
        local += a[i] != b[i];
    if (local)
        atomicAdd(count, local);
}

/* How many 4-byte words of a and b (device) differ, bit for bit. */
static inline long long kit_device_differ(const void *a, const void *b, size_t bytes)
{
    static unsigned long long *count;
    unsigned long long h = 0;
    if (!count)
        KIT_CHECK(cudaMalloc((void **)&count, sizeof *count));
    KIT_CHECK(cudaMemset(count, 0, sizeof *count));
    kit_differ_kernel<<<1024, 256>>>((const unsigned int *)a, (const unsigned int *)b, bytes / 4, count);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaMemcpy(&h, count, sizeof h, cudaMemcpyDeviceToHost));
    return (long long)h;
}

/* ---- what a row reports ---------------------------------------------------- */

static inline double kit_row_segments(const kit_row *r) { return kit_per(&r->counts, KIT_LD_SEGMENTS, KIT_LD_REQUESTS); }
static inline double kit_row_sectors(const kit_row *r) { return kit_per(&r->counts, KIT_LD_SECTORS, KIT_LD_REQUESTS); }

/* Bytes the loads asked for over bytes the sectors they touched hold:
 * nvprof's gld_efficiency. */
static inline double kit_row_load_efficiency(const kit_row *r)
{
    double moved = (double)r->counts.c[KIT_LD_SECTORS] * KIT_SECTOR_BYTES;
    return moved > 0 ? (double)r->counts.c[KIT_LD_BYTES] / moved : 0.0;
}

/* The row's key: value lines. */
static inline void kit_row_kv(const kit_row *r)
{
    char key[80];
#define KIT_ROW_KV(pattern, fmt, value)                   \
    do {                                                  \
        snprintf(key, sizeof key, pattern, r->key);       \
        kit_kv(key, fmt, value);                          \
    } while (0)
    KIT_ROW_KV("wrong-elements-%s", "%lld", r->wrong);
    if (r->timed) {
        KIT_ROW_KV("time-%s-ms", "%.4f", r->t.median_ms);
        KIT_ROW_KV("time-%s-min-ms", "%.4f", r->t.min_ms);
        KIT_ROW_KV("time-%s-max-ms", "%.4f", r->t.max_ms);
        KIT_ROW_KV("reps-%s", "%d", r->t.reps);
        KIT_ROW_KV("bad-timed-runs-%s", "%d", r->t.bad_runs);
        KIT_ROW_KV("fresh-inputs-%s", "%s", r->fresh ? "every-run" : "first-run");
    }
    if (r->counted) {
        KIT_ROW_KV("requests-%s", "%llu", r->counts.c[KIT_LD_REQUESTS]);
        KIT_ROW_KV("segments-per-request-%s", "%.4f", kit_row_segments(r));
        KIT_ROW_KV("sectors-per-request-%s", "%.4f", kit_row_sectors(r));
        KIT_ROW_KV("lanes-per-request-%s", "%.4f", kit_per(&r->counts, KIT_LD_LANES, KIT_LD_REQUESTS));
        KIT_ROW_KV("load-efficiency-%s", "%.4f", kit_row_load_efficiency(r));
        KIT_ROW_KV("store-requests-%s", "%llu", r->counts.c[KIT_ST_REQUESTS]);
        KIT_ROW_KV("store-segments-per-request-%s", "%.4f",
                   kit_per(&r->counts, KIT_ST_SEGMENTS, KIT_ST_REQUESTS));
    }
#undef KIT_ROW_KV
}

/* A row's check word for tables: ok, WRONG, UNSTEADY (its timed runs), or
 * "not run" where it was never checked. */
static inline const char *kit_row_check_word(const kit_row *r)
{
    return r->wrong < 0 ? "not run" : r->wrong ? "WRONG" : r->t.bad_runs ? "UNSTEADY" : "ok";
}

/*
 * The verdict on a row's results: its elements right, and every timed run
 * as right as the checked one. Says on stderr what is wrong, pointing at
 * the row's TODOs. Returns 1 when all is well.
 */
static inline int kit_row_ok(const kit_row *r, unsigned long long elements)
{
    const char *todo = r->todo ? r->todo : "";
    if (r->wrong != 0) {
        fprintf(stderr, "%s: %s: %lld of %llu elements are wrong%s%s\n", kit_program, r->name, r->wrong,
                elements, r->todo ? "; see " : "", todo);
        return 0;
    }
    if (r->timed && r->t.bad_runs) {
        fprintf(stderr,
                "%s: %s: %d of %d timed runs left results %s: every run must do the whole work%s%s\n",
                kit_program, r->name, r->t.bad_runs, r->t.reps,
                r->fresh ? "wrong for their own fresh inputs" : "unlike the checked run's",
                r->todo ? "; see " : "", todo);
        return 0;
    }
    return 1;
}

#endif /* KIT_ROW_H */
