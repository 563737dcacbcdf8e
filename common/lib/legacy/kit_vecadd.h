/*
 * kit_vecadd.h - the course's memory experiment, shared by the labs that
 * run it: C[tid] = A[x] + B[x], repeated, where only the choice of x
 * changes from kernel to kernel.
 *
 * A lab writes its kernels (the index is the lesson); this header holds
 * the rest: the inputs, the probe that an instrumented launch fills, and
 * the measurement of one kernel:
 *
 *   1. an instrumented launch counts segments and sectors per request and
 *      records each thread's last index;
 *   2. C is poisoned (NaN), then the timed launches run (warm-up, median);
 *   3. every element of C is checked on the host against A[x] + B[x], with
 *      x given by the lab's formula or, where it is random, the recorded
 *      one (the same seed draws the same numbers in every launch).
 */
#ifndef KIT_VECADD_H
#define KIT_VECADD_H

#include "kit_args.h"
#include "kit_device.h"
#include "kit_memcount.h"
#include "kit_report.h"
#include "kit_rng.h"
#include "kit_timing.h"

/* Passed by value to an instrumented kernel; NULL in the timed ones. */
typedef struct {
    kit_probe counters;
    unsigned int *last_index; /* per thread: the index it read last */
} kit_vecadd_probe;

/*
 * The probe's side of a kernel of the experiment, around its own loop:
 *
 *   kit_vecadd_begin(&tally, probe, tid < n);   // before any early return
 *   for (...) { x = ...; kit_vecadd_count(&tally, probe, A, B, x); C[tid] = A[x] + B[x]; }
 *   kit_vecadd_done(&tally, probe, tid, x);
 */
static __device__ __forceinline__ void kit_vecadd_begin(kit_tally *t, const kit_vecadd_probe *probe,
                                                        int active)
{
    kit_tally_begin(t, probe ? &probe->counters : NULL, active);
}

/* One iteration's two requests: A[x] and B[x]. */
static __device__ __forceinline__ void kit_vecadd_count(kit_tally *t, const kit_vecadd_probe *probe,
                                                        const float *A, const float *B,
                                                        unsigned int x)
{
    kit_tally_access(t, probe ? &probe->counters : NULL, &A[x]);
    kit_tally_access(t, probe ? &probe->counters : NULL, &B[x]);
}

/* The warp's totals, and the index the thread read last. */
static __device__ __forceinline__ void kit_vecadd_done(const kit_tally *t,
                                                       const kit_vecadd_probe *probe,
                                                       unsigned int tid, unsigned int x)
{
    kit_tally_end(t, probe ? &probe->counters : NULL);
    if (probe)
        probe->last_index[tid] = x;
}

/* The arrays of one experiment, on the device and on the host. */
typedef struct {
    unsigned int n;
    size_t bytes; /* of one float array */
    float *dA, *dB, *dC;
    float *A, *B, *C;
    unsigned int *last; /* host copy of the recorded indices */
    kit_vecadd_probe probe;
} kit_vecadd;

/* One measured kernel: a row of the lab's table. */
typedef struct {
    char name[48]; /* for people: "strided_access s=8" */
    char key[24];  /* for key: value lines: "stride-8" */
    kit_timing t;
    kit_access_stats s;
    long long wrong; /* elements of C that were wrong */
} kit_vecadd_row;

/* Which index thread i had to read; NULL means "the recorded one". */
typedef unsigned long long (*kit_index_fn)(unsigned long long i, const void *ctx);

static inline void *kit_host_alloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (!p)
        kit_die(KIT_EXIT_FAIL, "cannot allocate %zu bytes of host memory", bytes);
    return p;
}

/*
 * The problem size: --size if given, else the default
 * from the device. Exits with KIT_EXIT_USAGE when it does not fit: the
 * three arrays and the recorded indices take 16 bytes an element.
 */
static inline unsigned int kit_vecadd_size(const kit_common *c, const kit_device *d)
{
    unsigned long long n, need;

    n = c->size ? c->size
                : kit_default_size(d->l2_bytes, d->free_bytes, 3 * sizeof(float), 4 * sizeof(float));
    need = 4 * n * sizeof(float) + (64ull << 20);
    if ((long long)need > d->free_bytes)
        kit_die(KIT_EXIT_USAGE,
                "--size %llu needs %.0f MiB of GPU memory but %s has %.0f MiB free; choose a "
                "smaller --size",
                n, need / 1048576.0, d->name, d->free_bytes / 1048576.0);
    return (unsigned int)n;
}

/* Allocates everything and draws fresh inputs (uniform in (0, 1]) from seed. */
static inline void kit_vecadd_setup(kit_vecadd *v, unsigned int n, unsigned long long seed)
{
    memset(v, 0, sizeof *v);
    v->n = n;
    v->bytes = (size_t)n * sizeof(float);
    KIT_CHECK(cudaMalloc((void **)&v->dA, v->bytes));
    KIT_CHECK(cudaMalloc((void **)&v->dB, v->bytes));
    KIT_CHECK(cudaMalloc((void **)&v->dC, v->bytes));
    KIT_CHECK(cudaMalloc((void **)&v->probe.last_index, (size_t)n * sizeof(unsigned int)));
    v->probe.counters = kit_probe_create();
    v->A = (float *)kit_host_alloc(v->bytes);
    v->B = (float *)kit_host_alloc(v->bytes);
    v->C = (float *)kit_host_alloc(v->bytes);
    v->last = (unsigned int *)kit_host_alloc((size_t)n * sizeof(unsigned int));

    kit_fill_uniform(v->dA, n, seed);
    kit_fill_uniform(v->dB, n, seed + 1);
    KIT_CHECK(cudaMemcpy(v->A, v->dA, v->bytes, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(v->B, v->dB, v->bytes, cudaMemcpyDeviceToHost));
}

static inline void kit_vecadd_teardown(kit_vecadd *v)
{
    kit_probe_destroy(v->probe.counters);
    KIT_CHECK(cudaFree(v->probe.last_index));
    KIT_CHECK(cudaFree(v->dA));
    KIT_CHECK(cudaFree(v->dB));
    KIT_CHECK(cudaFree(v->dC));
    free(v->A);
    free(v->B);
    free(v->C);
    free(v->last);
}

/*
 * Checks every element of C against A[x] + B[x]. Returns the number of
 * wrong elements and describes the first on stderr.
 */
static inline long long kit_vecadd_verify(const kit_vecadd *v, kit_index_fn expect,
                                          const void *ctx, const char *name)
{
    long long bad = 0;
    for (unsigned int i = 0; i < v->n; i++) {
        unsigned long long x = expect ? expect(i, ctx) : v->last[i];
        if (x < v->n && v->C[i] == v->A[x] + v->B[x])
            continue;
        if (bad++ == 0) {
            if (x >= v->n)
                fprintf(stderr, "%s: %s: thread %u read index %llu, outside [0, %u)\n",
                        kit_program, name, i, x, v->n);
            else
                fprintf(stderr, "%s: %s: C[%u] = %.9g but A[%llu] + B[%llu] = %.9g\n",
                        kit_program, name, i, v->C[i], x, x, v->A[x] + v->B[x]);
        }
    }
    return bad;
}

/*
 * Measures one kernel into row: probed(ctx) must launch the instrumented
 * kernel with v->probe, timed(ctx) the clean one.
 */
static inline void kit_vecadd_measure(kit_vecadd *v, kit_launch_fn probed, kit_launch_fn timed,
                                      void *ctx, kit_index_fn expect, const void *ectx,
                                      const kit_common *c, kit_vecadd_row *row)
{
    kit_probe_reset(v->probe.counters);
    probed(ctx);
    KIT_CHECK(cudaDeviceSynchronize());
    row->s = kit_probe_read(v->probe.counters);
    KIT_CHECK(cudaMemcpy(v->last, v->probe.last_index, (size_t)v->n * sizeof(unsigned int),
                         cudaMemcpyDeviceToHost));

    KIT_CHECK(cudaMemset(v->dC, 0xff, v->bytes)); /* NaN everywhere: unwritten shows */
    row->t = kit_time_launches(timed, ctx, c->warmup, c->reps);
    KIT_CHECK(cudaMemcpy(v->C, v->dC, v->bytes, cudaMemcpyDeviceToHost));
    row->wrong = kit_vecadd_verify(v, expect, ectx, row->name);
}

/* Names a row: printf-style name, then key. */
static inline void kit_vecadd_name(kit_vecadd_row *row, const char *key, const char *fmt, ...)
{
    va_list ap;
    memset(row, 0, sizeof *row);
    va_start(ap, fmt);
    vsnprintf(row->name, sizeof row->name, fmt, ap);
    va_end(ap);
    snprintf(row->key, sizeof row->key, "%s", key);
}

/* The key: value lines of one row. */
static inline void kit_vecadd_kv(const kit_vecadd_row *row)
{
    char key[64];
#define KIT_ROW_KV(suffix, fmt, value)                                 \
    do {                                                               \
        snprintf(key, sizeof key, suffix, row->key);                   \
        kit_kv(key, fmt, value);                                       \
    } while (0)
    KIT_ROW_KV("time-%s-ms", "%.4f", row->t.median_ms);
    KIT_ROW_KV("time-%s-min-ms", "%.4f", row->t.min_ms);
    KIT_ROW_KV("time-%s-max-ms", "%.4f", row->t.max_ms);
    KIT_ROW_KV("segments-per-request-%s", "%.4f", row->s.segments_per_request);
    KIT_ROW_KV("sectors-per-request-%s", "%.4f", row->s.sectors_per_request);
    KIT_ROW_KV("requests-%s", "%llu", row->s.requests);
    KIT_ROW_KV("wrong-elements-%s", "%lld", row->wrong);
#undef KIT_ROW_KV
}

/*
 * The course's two extremes, which later labs measure themselves against:
 * every thread reads its own element (one segment per request), or a
 * random one from its own Philox stream (about 32). Lab 01 has students
 * write these; the kit keeps its own so that no lab depends on theirs.
 */
#define KIT_VECADD_BLOCK 1024

static __device__ __forceinline__ void kit_coalesced_body(const float *A, const float *B, float *C,
                                                          unsigned int n, int iters,
                                                          const kit_vecadd_probe *probe)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    kit_tally tally;

    kit_vecadd_begin(&tally, probe, tid < n);
    if (tid >= n)
        return;
    for (int i = 0; i < iters; i++) {
        kit_vecadd_count(&tally, probe, A, B, tid);
        C[tid] = A[tid] + B[tid];
    }
    kit_vecadd_done(&tally, probe, tid, tid);
}

static __device__ __forceinline__ void kit_random_body(const float *A, const float *B, float *C,
                                                       unsigned int n, int iters, unsigned int np,
                                                       unsigned long long seed,
                                                       const kit_vecadd_probe *probe)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    unsigned int x = 0;
    kit_tally tally;
    kit_rng state;

    kit_vecadd_begin(&tally, probe, tid < n);
    if (tid >= n)
        return;
    kit_rng_thread(&state, seed, tid);
    for (int i = 0; i < iters; i++) {
        x = kit_map_to_range(curand(&state), np);
        kit_vecadd_count(&tally, probe, A, B, x);
        C[tid] = A[x] + B[x];
    }
    kit_vecadd_done(&tally, probe, tid, x);
}

__global__ void kit_coalesced_access(const float *A, const float *B, float *C, unsigned int n,
                                     int iters)
{
    kit_coalesced_body(A, B, C, n, iters, NULL);
}

__global__ void kit_coalesced_access_probed(const float *A, const float *B, float *C,
                                            unsigned int n, int iters, kit_vecadd_probe probe)
{
    kit_coalesced_body(A, B, C, n, iters, &probe);
}

__global__ void kit_random_access(const float *A, const float *B, float *C, unsigned int n,
                                  int iters, unsigned int np, unsigned long long seed)
{
    kit_random_body(A, B, C, n, iters, np, seed, NULL);
}

__global__ void kit_random_access_probed(const float *A, const float *B, float *C, unsigned int n,
                                         int iters, unsigned int np, unsigned long long seed,
                                         kit_vecadd_probe probe)
{
    kit_random_body(A, B, C, n, iters, np, seed, &probe);
}

/* Launches one of the yardsticks, probed or not. */
static inline void kit_vecadd_launch_coalesced(const kit_vecadd *v, int iters, int probed)
{
    unsigned int blocks = (v->n + KIT_VECADD_BLOCK - 1) / KIT_VECADD_BLOCK;
    if (probed)
        kit_coalesced_access_probed<<<blocks, KIT_VECADD_BLOCK>>>(v->dA, v->dB, v->dC, v->n, iters,
                                                                  v->probe);
    else
        kit_coalesced_access<<<blocks, KIT_VECADD_BLOCK>>>(v->dA, v->dB, v->dC, v->n, iters);
    KIT_CHECK_LAUNCH();
}

static inline void kit_vecadd_launch_random(const kit_vecadd *v, int iters, unsigned long long seed,
                                            int probed)
{
    unsigned int blocks = (v->n + KIT_VECADD_BLOCK - 1) / KIT_VECADD_BLOCK;
    if (probed)
        kit_random_access_probed<<<blocks, KIT_VECADD_BLOCK>>>(v->dA, v->dB, v->dC, v->n, iters,
                                                               kit_np(v->n), seed, v->probe);
    else
        kit_random_access<<<blocks, KIT_VECADD_BLOCK>>>(v->dA, v->dB, v->dC, v->n, iters,
                                                        kit_np(v->n), seed);
    KIT_CHECK_LAUNCH();
}

/* Reports each row with wrong elements on stderr; returns 1 if none had any. */
static inline int kit_vecadd_all_correct(const kit_vecadd_row *rows, int nrows, unsigned int n)
{
    int ok = 1;
    for (int i = 0; i < nrows; i++)
        if (rows[i].wrong) {
            fprintf(stderr, "%s: %s: %lld of %u elements of C are wrong\n", kit_program,
                    rows[i].name, rows[i].wrong, n);
            ok = 0;
        }
    return ok;
}

#endif /* KIT_VECADD_H */
