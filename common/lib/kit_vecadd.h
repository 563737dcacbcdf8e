/*
 * kit_vecadd.h - the course's memory experiment, for the labs that run it
 * (01, 02): C[tid] = A[x] + B[x], repeated, where only the choice of x
 * changes from kernel to kernel.
 *
 * It holds the arrays (fresh uniform inputs in (0, 1] from the seed), the
 * counter whose record keeps each thread's last, lowest and highest index
 * into A, and the row
 * callbacks of kit_row.h: poison C, check every element of C against
 * A[x] + B[x] (x from the lab's formula, or the recorded one where it was
 * random: the timed build draws the same numbers from the same seed), keep
 * C, compare with what was kept.
 */
#ifndef KIT_VECADD_H
#define KIT_VECADD_H

#include "kit_args.h"
#include "kit_device.h"
#include "kit_host.h"
#include "kit_rng.h"
#include "kit_row.h"

/* Which index thread i had to read; NULL in a kit_vecadd_check: the recorded one. */
typedef unsigned long long (*kit_index_fn)(unsigned long long i, const void *ctx);

typedef struct {
    unsigned int n;
    size_t bytes; /* of one array */
    float *dA, *dB, *dC, *dKeep;
    float *A, *B, *C;
    kit_counter counter; /* record: per thread, its last, lowest and highest index into A */
    unsigned long long seed; /* of the inputs A (seed) and B (seed + 1) */
} kit_vecadd;

/*
 * The problem size: --size if given, else the default from the device.
 * Exits with KIT_EXIT_USAGE when it does not fit: four arrays and the
 * record (three words a thread) take 28 bytes an element.
 */
static inline unsigned int kit_vecadd_size(unsigned long long size, const kit_device *d)
{
    unsigned long long n, need;

    n = size ? size : kit_default_size(d->l2_bytes, d->free_bytes, 3 * sizeof(float), 7 * sizeof(float));
    need = 7 * n * sizeof(float) + (64ull << 20);
    if ((long long)need > d->free_bytes)
        kit_die(KIT_EXIT_USAGE,
                "--size %llu needs %.0f MiB of GPU memory but %s has %.0f MiB free; choose a "
                "smaller --size",
                n, need / 1048576.0, d->name, d->free_bytes / 1048576.0);
    return (unsigned int)n;
}

static inline void kit_vecadd_setup(kit_vecadd *v, unsigned int n, unsigned long long seed)
{
    memset(v, 0, sizeof *v);
    v->n = n;
    v->bytes = (size_t)n * sizeof(float);
    KIT_CHECK(cudaMalloc((void **)&v->dA, v->bytes));
    KIT_CHECK(cudaMalloc((void **)&v->dB, v->bytes));
    KIT_CHECK(cudaMalloc((void **)&v->dC, v->bytes));
    KIT_CHECK(cudaMalloc((void **)&v->dKeep, v->bytes));
    kit_counter_create(&v->counter, n, 0);
    v->A = (float *)kit_host_alloc(v->bytes);
    v->B = (float *)kit_host_alloc(v->bytes);
    v->C = (float *)kit_host_alloc(v->bytes);
    v->seed = seed;
    kit_fill_uniform(v->dA, n, seed);
    kit_fill_uniform(v->dB, n, seed + 1);
    KIT_CHECK(cudaMemcpy(v->A, v->dA, v->bytes, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(v->B, v->dB, v->bytes, cudaMemcpyDeviceToHost));
}

static inline void kit_vecadd_teardown(kit_vecadd *v)
{
    kit_counter_destroy(&v->counter);
    KIT_CHECK(cudaFree(v->dA));
    KIT_CHECK(cudaFree(v->dB));
    KIT_CHECK(cudaFree(v->dC));
    KIT_CHECK(cudaFree(v->dKeep));
    free(v->A);
    free(v->B);
    free(v->C);
}

/* Before a counting launch: zero the counters and, where the indices are
 * random (record), record each thread's reads of A (its last, lowest and
 * highest index). */
static inline void kit_vecadd_count_begin(kit_vecadd *v, void (*configure)(const kit_count_config *), int record)
{
    kit_counter_reset(&v->counter, record ? v->dA : NULL, v->n);
    configure(&v->counter.cfg);
}

static inline void kit_vecadd_poison(const kit_vecadd *v)
{
    KIT_CHECK(cudaMemset(v->dC, 0xff, v->bytes)); /* NaN everywhere: what is not written shows */
}

static inline void kit_vecadd_keep(const kit_vecadd *v)
{
    KIT_CHECK(cudaMemcpy(v->dKeep, v->dC, v->bytes, cudaMemcpyDeviceToDevice));
}

static inline long long kit_vecadd_compare(const kit_vecadd *v) { return kit_device_differ(v->dC, v->dKeep, v->bytes); }

typedef struct {
    const kit_vecadd *v;
    kit_index_fn expect;
    const void *ctx;
} kit_vecadd_check_ctx;

/* The index element i had to be computed from. */
static inline unsigned long long kit_vecadd_index(const kit_vecadd_check_ctx *k, unsigned long long i)
{
    return k->expect ? k->expect(i, k->ctx) : kit_record_last(&k->v->counter, i);
}

static inline long long kit_vecadd_check_range(unsigned long long begin, unsigned long long end, void *p,
                                               unsigned long long *first)
{
    const kit_vecadd_check_ctx *k = (const kit_vecadd_check_ctx *)p;
    const kit_vecadd *v = k->v;
    long long bad = 0;

    for (unsigned long long i = begin; i < end; i++) {
        unsigned long long x = kit_vecadd_index(k, i);
        if (x < v->n && v->C[i] == v->A[x] + v->B[x])
            continue;
        if (bad++ == 0)
            *first = i;
    }
    return bad;
}

/*
 * Checks every element of C against A[x] + B[x], x from expect or, where
 * expect is NULL, from the counting run's record. Returns the number of
 * wrong elements and describes the first on stderr.
 */
static inline long long kit_vecadd_check(kit_vecadd *v, kit_index_fn expect, const void *ctx,
                                         const char *name)
{
    kit_vecadd_check_ctx k = {v, expect, ctx};
    unsigned long long i, x;
    long long bad;

    KIT_CHECK(cudaMemcpy(v->C, v->dC, v->bytes, cudaMemcpyDeviceToHost));
    bad = kit_parallel_check(v->n, kit_vecadd_check_range, &k, &i);
    if (bad == 0)
        return 0;
    x = kit_vecadd_index(&k, i);
    if (x == 0xffffffffull)
        fprintf(stderr, "%s: %s: thread %llu read no element of A in the counting run (it must "
                        "compute C[%llu])\n", kit_program, name, i, i);
    else if (x >= v->n)
        fprintf(stderr, "%s: %s: thread %llu read index %llu, outside [0, %u)\n", kit_program, name, i,
                x, v->n);
    else
        fprintf(stderr, "%s: %s: C[%llu] = %.9g but A[%llu] + B[%llu] = %.9g\n", kit_program, name, i,
                v->C[i], x, x, v->A[x] + v->B[x]);
    return bad;
}

/* ---- timed runs with inputs of their own (kit_row.h) -------------------------- */

/* Which x element i must have been computed from. */
enum { KIT_INDEX_OWN, KIT_INDEX_STRIDED, KIT_INDEX_RECORDED };

static __global__ void kit_vecadd_check_kernel(const float *A, const float *B, const float *C, unsigned int n,
                                               int how, unsigned int stride, const unsigned int *record,
                                               unsigned long long *bad)
{
    unsigned long long local = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned long long x = how == KIT_INDEX_OWN       ? i
                               : how == KIT_INDEX_STRIDED ? (i * stride) % n
                                                          : record[i];
        local += !(x < n && C[i] == A[x] + B[x]);
    }
    if (local)
        atomicAdd(bad, local);
}

/* New inputs, drawn for timed run `draw` (the host's copies stay the first). */
static inline void kit_vecadd_refresh(const kit_vecadd *v, unsigned long long draw)
{
    unsigned long long s = kit_row_draw_seed(v->seed, draw);
    kit_fill_uniform(v->dA, v->n, s);
    kit_fill_uniform(v->dB, v->n, s + 1);
}

/* Elements of C that are not A[x] + B[x] of the inputs now on the device;
 * x as `how` says (for KIT_INDEX_RECORDED, the counting run's record: the
 * timed build draws the same indices from the same seed). */
static inline long long kit_vecadd_check_device(const kit_vecadd *v, int how, unsigned int stride)
{
    static unsigned long long *bad;
    unsigned long long h = 0;
    if (!bad)
        KIT_CHECK(cudaMalloc((void **)&bad, sizeof *bad));
    KIT_CHECK(cudaMemset(bad, 0, sizeof *bad));
    kit_vecadd_check_kernel<<<1024, 256>>>(v->dA, v->dB, v->dC, v->n, how, stride, v->counter.cfg.record, bad);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaMemcpy(&h, bad, sizeof h, cudaMemcpyDeviceToHost));
    return (long long)h;
}

/* The first inputs back. */
static inline void kit_vecadd_restore(const kit_vecadd *v)
{
    kit_fill_uniform(v->dA, v->n, v->seed);
    kit_fill_uniform(v->dB, v->n, v->seed + 1);
}

#endif /* KIT_VECADD_H */
