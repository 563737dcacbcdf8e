/*
 * Lab 03: warp divergence - the harness.
 * The student's file: labs/03-divergence/divergence.cu; the handout:
 * handouts/03-divergence.md.
 *
 * Part 1, the course's experiment: C[tid] = A[tid] op B[tid], `iterations`
 * times per thread, op one of four chosen by a chain of four branches
 *   - by thread (the student's warp_divergence): every warp runs all four
 *     bodies, 8 lanes each;
 *   - by warp (the student's warp_no_divergence): every warp runs one body
 *     with all 32 lanes, each operation on about a quarter of the elements.
 * Which threads take which path is the student's choice: the kit finds,
 * for every element, the operation that gave it (paths.h) and checks the
 * pattern, not one mapping.
 * Then the book's mathKernel1-4 (simpleDivergence), the student's
 * mathKernel4 with its bit test corrected, and the book's mathKernel4 as
 * printed, whose condition `itid & 0x01 == 0` is always false.
 *
 * Part 2, making a divergent kernel warp-uniform: elements of four classes
 * mixed at random, each class with its own `work`-step map
 * (process_by_class, given in the student's file). Run as it is, every warp
 * runs all four branches; reorganised, the kit counts the classes, the
 * student's partition_by_class groups the elements by class, the same
 * process_by_class runs on the grouped arrays, and the kit scatters the
 * results back. Both are timed, the reorganisation's cost included, for
 * work 1, 2, 4, ..., 64: the table shows from which work it pays.
 *
 * Lanes per branch body come from the counting build: every body stores
 * once, and a store counts the lanes that make it (kit_counted.h).
 * Every kernel is counted where that tells something, checked element by
 * element against the host, and timed until the median is steady, each
 * timed run checked again (kit_row.h).
 */
#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_host.h"
#include "kit_report.h"
#include "kit_rng.h"
#include "kit_row.h"
#include "kit_timing.h"
#include "kit_vecadd.h"

#include "contract.h"
#include "kit_student.h"
#include "paths.h"

#define ITERATIONS 100 /* the course's loop count */
#define MAX_WORK 64    /* part 2 sweeps work = 1, 2, 4, ..., MAX_WORK */
#define NCLASSES 4
/* Device bytes per element: part 2's x, y, kept y, xs, ys, cls, cs, from
 * and marks (part 1's four arrays and record take less, and go first). */
#define BYTES_PER_ELEMENT 36
/* The default size: enough threads to fill every SM this many times... */
#define DEFAULT_WAVES 16
/* ...and part 2's inputs and output (x, cls, y) larger than the L2. */
#define PART2_STREAM_BYTES 12

static const kit_student_api *timed = &kit_student_timed;
static const kit_student_api *counted = &kit_student_counted;

/* ---- the kit's kernels ------------------------------------------------------ */

/* The book's mathKernel4 as printed: == binds tighter than &, so the
 * condition is itid & (0x01 == 0), that is itid & 0: never true. */
static __global__ void mathKernel4_as_printed(float *c, unsigned int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float ia, ib;
    ia = ib = 0.0f;

    if ((unsigned int)tid >= n)
        return;
    int itid = tid >> 5;
    if (itid & 0x01 == 0) { /* as printed: itid & (0x01 == 0) */
        ia = 100.0f;
    } else {
        ib = 200.0f;
    }
    c[tid] = ia + ib;
}

/* Classes 0 to 3, uniform, one Philox stream per thread. */
static __global__ void fill_classes(unsigned int *cls, unsigned long long n, unsigned long long seed)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    kit_rng s;

    kit_rng_thread(&s, seed, i);
    for (; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        cls[i] = curand(&s) % NCLASSES;
}

/* counts[c] += the elements of class c. Each warp counts its classes with
 * ballots, each block adds its counts once: few atomics, none contended.
 * Every thread of a block runs the same number of rounds. */
static __global__ void count_classes(const unsigned int *cls, unsigned int n, unsigned int *counts)
{
    __shared__ unsigned int block_counts[NCLASSES];
    unsigned int mine[NCLASSES] = {0, 0, 0, 0};
    unsigned int stride = gridDim.x * blockDim.x;

    if (threadIdx.x < NCLASSES)
        block_counts[threadIdx.x] = 0;
    __syncthreads();
    for (unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x; first < n; first += stride) {
        unsigned long long i = first + threadIdx.x;
        unsigned int c = i < n ? cls[i] : NCLASSES;
        for (int k = 0; k < NCLASSES; k++)
            mine[k] += __popc(__ballot_sync(0xffffffffu, c == (unsigned int)k));
    }
    if (threadIdx.x % 32 == 0)
        for (int k = 0; k < NCLASSES; k++)
            atomicAdd(&block_counts[k], mine[k]);
    __syncthreads();
    if (threadIdx.x < NCLASSES)
        atomicAdd(&counts[threadIdx.x], block_counts[threadIdx.x]);
}

/* next[c]: the first slot of class c's region, classes in order. */
static __global__ void class_starts(const unsigned int *counts, unsigned int *next)
{
    unsigned int start = 0;
    for (int c = 0; c < NCLASSES; c++) {
        next[c] = start;
        start += counts[c];
    }
}

/* y[from[j]] = ys[j]: every result back where its element came from. */
static __global__ void scatter_back(const float *ys, const unsigned int *from, float *y, unsigned int n)
{
    unsigned int j = blockIdx.x * blockDim.x + threadIdx.x;

    if (j >= n)
        return;
    unsigned int f = from[j];
    if (f < n) /* a broken partition must not write outside y */
        y[f] = ys[j];
}

/* Counts the slots of a partition that are wrong (no element, the wrong
 * class for the region, a value unlike its element's) and marks, per
 * element, how many slots name it. */
static __global__ void partition_faults_kernel(const float *x, const unsigned int *cls, const float *xs,
                                               const unsigned int *cs, const unsigned int *from,
                                               const unsigned int *starts, unsigned int n, unsigned int *marks,
                                               unsigned long long *faults)
{
    unsigned long long local = 0;
    for (unsigned int j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x) {
        unsigned int f = from[j];
        unsigned int region = (j >= starts[1]) + (j >= starts[2]) + (j >= starts[3]);
        int ok = f < n && cs[j] == region && cls[f] == region && __float_as_uint(xs[j]) == __float_as_uint(x[f]);
        if (f < n)
            atomicAdd(&marks[f], 1u);
        local += !ok;
    }
    if (local)
        atomicAdd(faults, local);
}

/* ...and the elements that no slot, or more than one, names. */
static __global__ void marks_faults_kernel(const unsigned int *marks, unsigned int n, unsigned long long *faults)
{
    unsigned long long local = 0;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        local += marks[i] != 1;
    if (local)
        atomicAdd(faults, local);
}

/* ---- the host's reference ---------------------------------------------------- */

static inline unsigned int bits_of(float f)
{
    unsigned int u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* One step of class c's map for an element of value x, as the student's
 * file computes it. Every operation is correctly rounded on both sides, and
 * every product that meets a sum is exact (by 2 or 8) or an explicit fmaf,
 * so no contraction changes a bit; a - (float)(int)a is a - truncf(a) for
 * 0 <= a < 2^31. */
static inline __host__ __device__ float class_step(unsigned int c, float v, float x)
{
    float a;
    switch (c) {
    case 0: a = 2.0f * fmaf(v, v, 0.3f) + x; break;
    case 1: a = 8.0f * sqrtf(v + 0.5f) + x; break;
    case 2: a = 1.0f / (v + 0.1f) + x; break;
    default: a = fmaf(v, 9.87f, 0.123f) + x; break;
    }
    return a - (float)(int)a;
}

/* ---- Part 1: the course's pair and the book's kernels ------------------------ */

enum p1_kind { DIV, NODIV, MATH1, MATH2, MATH3, MATH4, MATH4_PRINTED, P1_KINDS };

typedef struct {
    enum p1_kind kind;
    kit_vecadd *v;
    int iterations;
    unsigned char *ops;          /* the course's pair: per element, the operations that give C[i] */
    lab03_paths paths[NODIV + 1]; /* ...and the paths they make, of the checked run */
} p1_run;

static void p1_launch(const kit_student_api *api, const p1_run *r)
{
    const kit_vecadd *v = r->v;
    switch (r->kind) {
    case DIV: api->launch_warp_divergence(v->dA, v->dB, v->dC, v->n, r->iterations); break;
    case NODIV: api->launch_warp_no_divergence(v->dA, v->dB, v->dC, v->n, r->iterations); break;
    case MATH1: api->launch_math_kernel(1, v->dC, v->n); break;
    case MATH2: api->launch_math_kernel(2, v->dC, v->n); break;
    case MATH3: api->launch_math_kernel(3, v->dC, v->n); break;
    case MATH4: api->launch_math_kernel(4, v->dC, v->n); break;
    case MATH4_PRINTED: mathKernel4_as_printed<<<(v->n + 255) / 256, 256>>>(v->dC, v->n); break;
    default: break;
    }
}

static kit_counts p1_counted(void *p)
{
    p1_run *r = (p1_run *)p;
    kit_vecadd_count_begin(r->v, counted->configure_counting, 0);
    p1_launch(counted, r);
    KIT_CHECK_LAUNCH();
    return kit_counter_read(&r->v->counter);
}

static void p1_timed(void *p) { p1_launch(timed, (const p1_run *)p); }
static void p1_poison(void *p) { kit_vecadd_poison(((p1_run *)p)->v); }
static void p1_keep(void *p) { kit_vecadd_keep(((p1_run *)p)->v); }
static long long p1_compare(void *p) { return kit_vecadd_compare(((p1_run *)p)->v); }

/* What C[i] must hold after the book's kernel k. */
static float p1_expected(const p1_run *r, unsigned long long i)
{
    switch (r->kind) {
    case MATH1:
    case MATH3: return i % 2 == 0 ? 100.0f : 200.0f;
    case MATH2:
    case MATH4: return (i / 32) % 2 == 0 ? 100.0f : 200.0f;
    default: return 200.0f; /* as printed: always the else side */
    }
}

/* The course's pair: C[i] must be one of the four operations on A[i] and
 * B[i] (the GPU's default float division is correctly rounded, like the
 * host's, so all four are exact); which one, ops[i] keeps for the paths.
 * The book's kernels: C[i] must be what p1_expected says. */
static long long p1_check_range(unsigned long long begin, unsigned long long end, void *p,
                                unsigned long long *first)
{
    const p1_run *r = (const p1_run *)p;
    const kit_vecadd *v = r->v;
    long long bad = 0;
    for (unsigned long long i = begin; i < end; i++) {
        int ok;
        if (r->kind <= NODIV) {
            r->ops[i] = (unsigned char)lab03_ops_giving(v->A[i], v->B[i], v->C[i]);
            ok = r->ops[i] != 0;
        } else {
            ok = bits_of(v->C[i]) == bits_of(p1_expected(r, i));
        }
        if (!ok && bad++ == 0)
            *first = i;
    }
    return bad;
}

static long long p1_verify(void *p, const kit_row *row)
{
    p1_run *r = (p1_run *)p;
    unsigned long long i;
    long long bad;

    KIT_CHECK(cudaMemcpy(r->v->C, r->v->dC, r->v->bytes, cudaMemcpyDeviceToHost));
    bad = kit_parallel_check(r->v->n, p1_check_range, r, &i);
    if (bad && r->kind <= NODIV) {
        const float a = r->v->A[i], b = r->v->B[i];
        fprintf(stderr, "%s: %s: C[%llu] = %.9g, but A[%llu] and B[%llu] give %.9g (A + B), %.9g (A - B), "
                        "%.9g (A * B) or %.9g (A / B)\n",
                kit_program, row->name, i, r->v->C[i], i, i, a + b, a - b, a * b, a / b);
    } else if (bad) {
        fprintf(stderr, "%s: %s: C[%llu] = %.9g, should be %.9g\n", kit_program, row->name, i,
                r->v->C[i], p1_expected(r, i));
    } else if (r->kind <= NODIV) {
        lab03_paths_of(r->ops, r->v->n, &r->paths[r->kind]);
    }
    return bad;
}

static void measure_p1(p1_run *r, enum p1_kind kind, kit_row *row, const kit_policy *policy)
{
    int count = kind == DIV || kind == NODIV;
    kit_row_work w = {r,       count ? p1_counted : NULL, p1_timed, p1_poison, p1_verify, p1_keep, p1_compare,
                      NULL, NULL,                    NULL};
    r->kind = kind;
    kit_row_measure(row, &w, policy);
}

/* The share of C's elements that took the if side (100): after a check. */
static double took_if_share(const kit_vecadd *v)
{
    unsigned long long hits = 0;
    for (unsigned int i = 0; i < v->n; i++)
        hits += v->C[i] == 100.0f;
    return v->n ? (double)hits / v->n : 0.0;
}

/* Stores inside the branch bodies count the lanes that run each body. */
static double lanes_per_body(const kit_row *r)
{
    return kit_per(&r->counts, KIT_ST_LANES, KIT_ST_REQUESTS) / 32.0;
}

/* The store requests the course's pair makes when each path's body holds
 * its own store: per iteration, one per warp and path its threads took
 * (paths.h counts them from the results). The verdict allows 1% more (by
 * warp) or fewer (by thread), so that it never rests on how exactly the
 * hardware regroups lanes; the tests require the exact count. */
static unsigned long long expected_store_requests(const lab03_paths *p, int iterations)
{
    return p->paths * (unsigned long long)iterations;
}

/* ---- Part 2: four classes, mixed and grouped ---------------------------------- */

enum p2_step { COUNT, PARTITION, SCATTER, MIXED, SORTED, REORGANISED };

typedef struct {
    unsigned int n;
    size_t fbytes, ubytes; /* of one float array, one uint array */
    float *dx, *dy, *dkeep, *dxs, *dys;
    unsigned int *dcls, *dcs, *dfrom, *dmarks;
    unsigned int *dcounts, *dnext, *dstarts, *dkeep_next; /* NCLASSES (+1 for starts) */
    unsigned long long *dfaults;
    float *x, *y, *ref;          /* host: inputs, a result, the reference after ref_work steps */
    unsigned int *cls, *from;    /* host */
    float *xs;                   /* host copy of a partition's values */
    unsigned int *cs;            /* ...and classes */
    unsigned char *seen;         /* host: elements placed so far */
    unsigned int counts[NCLASSES], starts[NCLASSES + 1];
    int ref_work;
    kit_counter counter;
    enum p2_step step;
    int work;
    float *dwant;                /* a timed run's answer (fresh inputs) */
    unsigned long long seed;     /* of x */
} p2_run;

/* What y must hold: each element's class step, work times, in the kit's
 * own kernel (the same arithmetic as class_step on the host, bit for bit). */
static __global__ void expect_processed(const float *x, const unsigned int *cls, unsigned int n, int work,
                                        float *want)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        float v = x[i];
        for (int k = 0; k < work; k++)
            v = class_step(cls[i], v, x[i]);
        want[i] = v;
    }
}

static void p2_setup(p2_run *q, unsigned int n, unsigned long long seed)
{
    memset(q, 0, sizeof *q);
    q->n = n;
    q->fbytes = (size_t)n * sizeof(float);
    q->ubytes = (size_t)n * sizeof(unsigned int);
    KIT_CHECK(cudaMalloc((void **)&q->dx, q->fbytes));
    KIT_CHECK(cudaMalloc((void **)&q->dy, q->fbytes));
    KIT_CHECK(cudaMalloc((void **)&q->dkeep, q->fbytes));
    KIT_CHECK(cudaMalloc((void **)&q->dxs, q->fbytes));
    KIT_CHECK(cudaMalloc((void **)&q->dys, q->fbytes));
    KIT_CHECK(cudaMalloc((void **)&q->dcls, q->ubytes));
    KIT_CHECK(cudaMalloc((void **)&q->dcs, q->ubytes));
    KIT_CHECK(cudaMalloc((void **)&q->dfrom, q->ubytes));
    KIT_CHECK(cudaMalloc((void **)&q->dmarks, q->ubytes));
    KIT_CHECK(cudaMalloc((void **)&q->dcounts, NCLASSES * sizeof(unsigned int)));
    KIT_CHECK(cudaMalloc((void **)&q->dnext, NCLASSES * sizeof(unsigned int)));
    KIT_CHECK(cudaMalloc((void **)&q->dkeep_next, NCLASSES * sizeof(unsigned int)));
    KIT_CHECK(cudaMalloc((void **)&q->dstarts, (NCLASSES + 1) * sizeof(unsigned int)));
    KIT_CHECK(cudaMalloc((void **)&q->dfaults, sizeof(unsigned long long)));
    KIT_CHECK(cudaMalloc((void **)&q->dwant, q->fbytes));
    kit_counter_create(&q->counter, 0, 0);
    q->x = (float *)kit_host_alloc(q->fbytes);
    q->y = (float *)kit_host_alloc(q->fbytes);
    q->ref = (float *)kit_host_alloc(q->fbytes);
    q->xs = (float *)kit_host_alloc(q->fbytes);
    q->cls = (unsigned int *)kit_host_alloc(q->ubytes);
    q->cs = (unsigned int *)kit_host_alloc(q->ubytes);
    q->from = (unsigned int *)kit_host_alloc(q->ubytes);
    q->seen = (unsigned char *)kit_host_alloc(n);

    q->seed = seed + 2;
    kit_fill_uniform(q->dx, n, q->seed);
    fill_classes<<<1024, 256>>>(q->dcls, n, seed + 3);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaMemcpy(q->x, q->dx, q->fbytes, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(q->cls, q->dcls, q->ubytes, cudaMemcpyDeviceToHost));
    memcpy(q->ref, q->x, q->fbytes);
    q->ref_work = 0;
    for (unsigned int i = 0; i < n; i++)
        q->counts[q->cls[i]]++;
    q->starts[0] = 0;
    for (int c = 0; c < NCLASSES; c++)
        q->starts[c + 1] = q->starts[c] + q->counts[c];
    KIT_CHECK(cudaMemcpy(q->dstarts, q->starts, sizeof q->starts, cudaMemcpyHostToDevice));
}

static void p2_teardown(p2_run *q)
{
    float *f[] = {q->dx, q->dy, q->dkeep, q->dxs, q->dys};
    unsigned int *u[] = {q->dcls, q->dcs, q->dfrom, q->dmarks, q->dcounts, q->dnext, q->dkeep_next, q->dstarts};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        KIT_CHECK(cudaFree(f[i]));
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        KIT_CHECK(cudaFree(u[i]));
    KIT_CHECK(cudaFree(q->dfaults));
    KIT_CHECK(cudaFree(q->dwant));
    kit_counter_destroy(&q->counter);
    free(q->x);
    free(q->y);
    free(q->ref);
    free(q->xs);
    free(q->cls);
    free(q->cs);
    free(q->from);
    free(q->seen);
}

/* The kit's counting sort, first half: next[c] = the start of class c. */
static void count_step(const p2_run *q)
{
    KIT_CHECK(cudaMemsetAsync(q->dcounts, 0, NCLASSES * sizeof(unsigned int), 0));
    count_classes<<<1024, 256>>>(q->dcls, q->n, q->dcounts);
    class_starts<<<1, 1>>>(q->dcounts, q->dnext);
}

static void scatter_step(const p2_run *q, const float *ys)
{
    scatter_back<<<(q->n + 255) / 256, 256>>>(ys, q->dfrom, q->dy, q->n);
}

static void p2_launch(const kit_student_api *api, const p2_run *q)
{
    switch (q->step) {
    case COUNT: count_step(q); break;
    case PARTITION:
        api->launch_partition_by_class(q->dx, q->dcls, q->n, q->dnext, q->dxs, q->dcs, q->dfrom);
        break;
    case SCATTER: scatter_step(q, q->dxs); break;
    case MIXED: api->launch_process_by_class(q->dx, q->dcls, q->dy, q->n, q->work); break;
    case SORTED: api->launch_process_by_class(q->dxs, q->dcs, q->dys, q->n, q->work); break;
    case REORGANISED:
        count_step(q);
        api->launch_partition_by_class(q->dx, q->dcls, q->n, q->dnext, q->dxs, q->dcs, q->dfrom);
        api->launch_process_by_class(q->dxs, q->dcs, q->dys, q->n, q->work);
        scatter_step(q, q->dys);
        break;
    }
}

/* Before each partition: next[c] back to the start of class c's region. */
static void reset_next(const p2_run *q)
{
    KIT_CHECK(cudaMemcpy(q->dnext, q->dstarts, NCLASSES * sizeof(unsigned int), cudaMemcpyDeviceToDevice));
}

static kit_counts p2_counted(void *p)
{
    p2_run *q = (p2_run *)p;
    if (q->step == PARTITION)
        reset_next(q);
    kit_counter_reset(&q->counter, NULL, 0);
    counted->configure_counting(&q->counter.cfg);
    p2_launch(counted, q);
    KIT_CHECK_LAUNCH();
    return kit_counter_read(&q->counter);
}

static void p2_timed(void *p) { p2_launch(timed, (const p2_run *)p); }

static void p2_poison(void *p)
{
    p2_run *q = (p2_run *)p;
    switch (q->step) {
    case COUNT: KIT_CHECK(cudaMemset(q->dnext, 0xff, NCLASSES * sizeof(unsigned int))); break;
    case PARTITION:
        KIT_CHECK(cudaMemset(q->dxs, 0xff, q->fbytes));
        KIT_CHECK(cudaMemset(q->dcs, 0xff, q->ubytes));
        KIT_CHECK(cudaMemset(q->dfrom, 0xff, q->ubytes));
        reset_next(q);
        break;
    case SCATTER:
    case MIXED: KIT_CHECK(cudaMemset(q->dy, 0xff, q->fbytes)); break;
    case SORTED: KIT_CHECK(cudaMemset(q->dys, 0xff, q->fbytes)); break;
    case REORGANISED:
        KIT_CHECK(cudaMemset(q->dnext, 0xff, NCLASSES * sizeof(unsigned int)));
        KIT_CHECK(cudaMemset(q->dxs, 0xff, q->fbytes));
        KIT_CHECK(cudaMemset(q->dcs, 0xff, q->ubytes));
        KIT_CHECK(cudaMemset(q->dfrom, 0xff, q->ubytes));
        KIT_CHECK(cudaMemset(q->dys, 0xff, q->fbytes));
        KIT_CHECK(cudaMemset(q->dy, 0xff, q->fbytes));
        break;
    }
}

/* How many slots of the partition on the device are wrong, plus the
 * elements it does not hold exactly once: 0 for a valid partition. */
static long long partition_faults(const p2_run *q)
{
    unsigned long long h = 0;
    KIT_CHECK(cudaMemset(q->dmarks, 0, q->ubytes));
    KIT_CHECK(cudaMemset(q->dfaults, 0, sizeof h));
    partition_faults_kernel<<<1024, 256>>>(q->dx, q->dcls, q->dxs, q->dcs, q->dfrom, q->dstarts, q->n,
                                           q->dmarks, q->dfaults);
    KIT_CHECK_LAUNCH();
    marks_faults_kernel<<<1024, 256>>>(q->dmarks, q->n, q->dfaults);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaMemcpy(&h, q->dfaults, sizeof h, cudaMemcpyDeviceToHost));
    return (long long)h;
}

static void p2_keep(void *p)
{
    p2_run *q = (p2_run *)p;
    switch (q->step) {
    case COUNT:
        KIT_CHECK(cudaMemcpy(q->dkeep_next, q->dnext, NCLASSES * sizeof(unsigned int), cudaMemcpyDeviceToDevice));
        break;
    case PARTITION: break; /* its order may change from run to run: each run is checked for validity */
    case SORTED: KIT_CHECK(cudaMemcpy(q->dkeep, q->dys, q->fbytes, cudaMemcpyDeviceToDevice)); break;
    default: KIT_CHECK(cudaMemcpy(q->dkeep, q->dy, q->fbytes, cudaMemcpyDeviceToDevice)); break;
    }
}

static long long p2_compare(void *p)
{
    p2_run *q = (p2_run *)p;
    switch (q->step) {
    case COUNT: return kit_device_differ(q->dnext, q->dkeep_next, NCLASSES * sizeof(unsigned int));
    case PARTITION: return partition_faults(q);
    case SORTED: return kit_device_differ(q->dys, q->dkeep, q->fbytes);
    default: return kit_device_differ(q->dy, q->dkeep, q->fbytes);
    }
}

/* ---- Part 2's checks on the host ---- */

static long long reference_range(unsigned long long begin, unsigned long long end, void *p, unsigned long long *first)
{
    p2_run *q = (p2_run *)p;
    int steps = q->work - q->ref_work;
    (void)first;
    for (unsigned long long i = begin; i < end; i++) {
        float v = q->ref[i];
        for (int k = 0; k < steps; k++)
            v = class_step(q->cls[i], v, q->x[i]);
        q->ref[i] = v;
    }
    return 0;
}

/* Brings the reference to q->work steps (the sweep's works only grow). */
static void advance_reference(p2_run *q)
{
    unsigned long long unused;
    if (q->work < q->ref_work) {
        memcpy(q->ref, q->x, q->fbytes);
        q->ref_work = 0;
    }
    kit_parallel_check(q->n, reference_range, q, &unused);
    q->ref_work = q->work;
}

/* y[i] (or ys[j], element from[j]) against the reference, bit for bit. */
static long long result_range(unsigned long long begin, unsigned long long end, void *p, unsigned long long *first)
{
    const p2_run *q = (const p2_run *)p;
    long long bad = 0;
    for (unsigned long long i = begin; i < end; i++) {
        int ok;
        if (q->step == SORTED)
            ok = q->from[i] < q->n && bits_of(q->y[i]) == bits_of(q->ref[q->from[i]]);
        else if (q->step == SCATTER)
            ok = bits_of(q->y[i]) == bits_of(q->x[i]);
        else
            ok = bits_of(q->y[i]) == bits_of(q->ref[i]);
        if (!ok && bad++ == 0)
            *first = i;
    }
    return bad;
}

/* The partition in xs, cs, from: every slot holds an element of its
 * region's class, with its value, and no element twice. Serial: it marks
 * the elements it has seen. */
static long long verify_partition(p2_run *q, const char *name)
{
    long long bad = 0;
    KIT_CHECK(cudaMemcpy(q->xs, q->dxs, q->fbytes, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(q->cs, q->dcs, q->ubytes, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(q->from, q->dfrom, q->ubytes, cudaMemcpyDeviceToHost));
    memset(q->seen, 0, q->n);
    for (unsigned int j = 0, region = 0; j < q->n; j++) {
        unsigned int f = q->from[j];
        char why[160] = "";
        while (j >= q->starts[region + 1])
            region++;
        if (f >= q->n)
            snprintf(why, sizeof why, "from[%u] = %u is no element", j, f);
        else if (q->seen[f])
            snprintf(why, sizeof why, "element %u is in two slots (from[%u] = %u again)", f, j, f);
        else if (q->cls[f] != region)
            snprintf(why, sizeof why, "slot %u is in class %u's region [%u, %u), but element %u is of class %u",
                     j, region, q->starts[region], q->starts[region + 1], f, q->cls[f]);
        else if (q->cs[j] != region)
            snprintf(why, sizeof why, "cs[%u] = %u, but element %u is of class %u", j, q->cs[j], f, region);
        else if (bits_of(q->xs[j]) != bits_of(q->x[f]))
            snprintf(why, sizeof why, "xs[%u] = %.9g, but x[%u] = %.9g", j, q->xs[j], f, q->x[f]);
        if (f < q->n)
            q->seen[f] = 1;
        if (why[0] && bad++ == 0)
            fprintf(stderr, "%s: %s: %s\n", kit_program, name, why);
    }
    return bad;
}

static long long p2_verify(void *p, const kit_row *row)
{
    p2_run *q = (p2_run *)p;
    unsigned long long i;
    long long bad;

    switch (q->step) {
    case COUNT: {
        unsigned int next[NCLASSES];
        KIT_CHECK(cudaMemcpy(next, q->dnext, sizeof next, cudaMemcpyDeviceToHost));
        bad = 0;
        for (int c = 0; c < NCLASSES; c++)
            if (next[c] != q->starts[c] && bad++ == 0)
                fprintf(stderr, "%s: %s: class %d starts at %u, not %u\n", kit_program, row->name, c, next[c],
                        q->starts[c]);
        return bad;
    }
    case PARTITION: return verify_partition(q, row->name);
    case SORTED:
        KIT_CHECK(cudaMemcpy(q->y, q->dys, q->fbytes, cudaMemcpyDeviceToHost));
        KIT_CHECK(cudaMemcpy(q->from, q->dfrom, q->ubytes, cudaMemcpyDeviceToHost));
        break;
    default: KIT_CHECK(cudaMemcpy(q->y, q->dy, q->fbytes, cudaMemcpyDeviceToHost)); break;
    }
    bad = kit_parallel_check(q->n, result_range, q, &i);
    if (bad == 0)
        return 0;
    if (q->step == SCATTER)
        fprintf(stderr, "%s: %s: y[%llu] = %.9g, but x[%llu] = %.9g\n", kit_program, row->name, i, q->y[i], i,
                q->x[i]);
    else if (q->step == SORTED)
        fprintf(stderr, "%s: %s: ys[%llu] = %.9g, but element %u (class %u) gives %.9g after %d steps\n",
                kit_program, row->name, i, q->y[i], q->from[i], q->cls[q->from[i] % q->n],
                q->ref[q->from[i] % q->n], q->work);
    else
        fprintf(stderr, "%s: %s: y[%llu] = %.9g, but element %llu (class %u, x = %.9g) gives %.9g after %d steps\n",
                kit_program, row->name, i, q->y[i], i, q->cls[i], q->x[i], q->ref[i], q->work);
    return bad;
}

/* Timed runs of the whole-array steps (y in the elements' own order) with
 * values of their own: new x, the same classes. */
static void p2_refresh(void *p, unsigned long long draw)
{
    p2_run *q = (p2_run *)p;
    kit_fill_uniform(q->dx, q->n, kit_row_draw_seed(q->seed, draw));
    expect_processed<<<1024, 256>>>(q->dx, q->dcls, q->n, q->work, q->dwant);
    KIT_CHECK_LAUNCH();
}

static long long p2_check(void *p)
{
    p2_run *q = (p2_run *)p;
    return kit_device_differ(q->dy, q->dwant, q->fbytes);
}

/* The first x back; after the reorganised pipeline, the partition of it
 * too (the grouped rows that follow process it), by the file's own
 * partition_by_class, untimed. */
static void p2_restore(void *p)
{
    p2_run *q = (p2_run *)p;
    kit_fill_uniform(q->dx, q->n, q->seed);
    if (q->step == REORGANISED) {
        reset_next(q);
        timed->launch_partition_by_class(q->dx, q->dcls, q->n, q->dnext, q->dxs, q->dcs, q->dfrom);
        KIT_CHECK_LAUNCH();
        KIT_CHECK(cudaDeviceSynchronize());
    }
}

static void measure_p2(p2_run *q, enum p2_step step, kit_row *row, const kit_policy *policy, int count)
{
    int fresh = step == MIXED || step == REORGANISED;
    kit_row_work w = {q,
                      count ? p2_counted : NULL,
                      p2_timed,
                      p2_poison,
                      p2_verify,
                      p2_keep,
                      p2_compare,
                      fresh ? p2_refresh : NULL,
                      fresh ? p2_check : NULL,
                      fresh ? p2_restore : NULL};
    q->step = step;
    kit_row_measure(row, &w, policy);
}

/* ---- the report ------------------------------------------------------------------ */

static void print_ms(const kit_row *r, int width)
{
    if (r->timed)
        printf(" %*.3f", width, r->t.median_ms);
    else
        printf(" %*s", width, "-");
}

static double ratio(const kit_row *num, const kit_row *den)
{
    return num->timed && den->timed && den->t.median_ms > 0 ? num->t.median_ms / den->t.median_ms : 0.0;
}

/* The default size: the smallest power of two from 2^22 (the course's size)
 * that fills every SM DEFAULT_WAVES times over and whose part-2 stream
 * (x, cls, y) is larger than the L2; then what memory allows. */
static unsigned int default_size(const kit_device *d)
{
    unsigned long long n = KIT_MIN_DEFAULT_SIZE;
    unsigned long long waves = (unsigned long long)DEFAULT_WAVES * d->sms * d->max_threads_per_sm;
    unsigned long long cap = kit_pow2_floor((unsigned long long)(d->free_bytes / 2) / BYTES_PER_ELEMENT);
    while (n < waves || n * PART2_STREAM_BYTES < (unsigned long long)d->l2_bytes)
        n *= 2;
    return (unsigned int)(n < cap ? n : cap);
}

int main(int argc, char **argv)
{
    kit_common c;
    kit_device dev;
    int iterations = ITERATIONS, only_work = 0;
    kit_option opts[] = {
        KIT_LAB_OPTIONS(&c),
        {"--iterations", KIT_OPT_INT, &iterations, "I",
         "part 1: loop count inside the course's two kernels (course: 100)", 1, 100000, NULL},
        {"--work", KIT_OPT_INT, &only_work, "W",
         "part 2: only this many steps per element instead of the sweep 1, 2, 4, ..., 64", 1, 4096, NULL},
    };
    static const char *const p1_keys[P1_KINDS] = {"div", "nodiv", "math-1", "math-2", "math-3", "math-4",
                                                  "math-4-as-printed"};
    static const char *const p1_names[P1_KINDS] = {"warp_divergence", "warp_no_divergence", "mathKernel1",
                                                   "mathKernel2", "mathKernel3", "mathKernel4",
                                                   "mathKernel4 as printed"};
    static const char *const p1_todos[P1_KINDS] = {"TODO(1)", "TODO(2)", NULL, NULL, NULL, "TODO(3)", NULL};
    enum { MAX_WORKS = 16 };
    kit_row p1[P1_KINDS], count_row, partition_row, scatter_row;
    kit_row mixed[MAX_WORKS], sorted[MAX_WORKS], reorg[MAX_WORKS];
    double took_if[P1_KINDS];
    int works[MAX_WORKS], nworks = 0, partition_ok, pass = 1;
    unsigned int n;
    kit_vecadd v;
    p1_run r;
    p2_run q;
    kit_policy policy;

    kit_common_defaults(&c);
    c.reps = 0;
    kit_parse_args(argc, argv,
                   "Lab 03: warp divergence. Times the course's four-way branch by thread against\n"
                   "the same branch by warp and the book's mathKernel1-4, then a kernel whose\n"
                   "work depends on each element's class, mixed and grouped by class, with the\n"
                   "grouping's cost; counts the lanes that run each branch body, and checks\n"
                   "every result.",
                   opts, KIT_COUNT(opts));
    kit_choose_seed(&c);
    kit_csv_check(c.csv);
    kit_device_open(c.device, &dev);
    n = c.size ? (unsigned int)c.size : default_size(&dev);
    if ((long long)((unsigned long long)n * BYTES_PER_ELEMENT + (64ull << 20)) > dev.free_bytes)
        kit_die(KIT_EXIT_USAGE,
                "--size %u needs %.0f MiB of GPU memory but %s has %.0f MiB free; choose a smaller --size", n,
                ((double)n * BYTES_PER_ELEMENT + (64 << 20)) / 1048576.0, dev.name, dev.free_bytes / 1048576.0);
    policy = kit_policy_default(c.reps);
    if (only_work)
        works[nworks++] = only_work;
    else
        for (int w = 1; w <= MAX_WORK; w *= 2)
            works[nworks++] = w;

    /* Part 1: the course's pair, then the book's kernels. */
    kit_vecadd_setup(&v, n, c.seed);
    memset(&r, 0, sizeof r);
    r.v = &v;
    r.ops = (unsigned char *)kit_host_alloc(n);
    r.iterations = iterations;
    for (int k = 0; k < P1_KINDS; k++) {
        kit_row_name(&p1[k], p1_keys[k], p1_todos[k], "%s", p1_names[k]);
        measure_p1(&r, (enum p1_kind)k, &p1[k], &policy);
        took_if[k] = k >= MATH1 && p1[k].wrong == 0 ? took_if_share(&v) : 0.0;
    }
    kit_vecadd_teardown(&v);
    free(r.ops);

    /* Part 2: the kit's counting step, the student's partition, the kit's
     * scatter; then, for each work, the kernel on mixed data, on grouped
     * data, and the whole reorganisation. */
    p2_setup(&q, n, c.seed);
    q.work = works[0];
    kit_row_name(&count_row, "count", NULL, "count classes (kit)");
    measure_p2(&q, COUNT, &count_row, &policy, 0);
    kit_row_name(&partition_row, "partition", "TODO(4)", "partition_by_class");
    measure_p2(&q, PARTITION, &partition_row, &policy, 1);
    partition_ok = partition_row.wrong == 0 && partition_row.t.bad_runs == 0;
    kit_row_name(&scatter_row, "scatter", NULL, "scatter back (kit)");
    if (partition_ok)
        measure_p2(&q, SCATTER, &scatter_row, &policy, 0);
    for (int k = 0; k < nworks; k++) {
        q.work = works[k];
        advance_reference(&q);
        char key[32];
        snprintf(key, sizeof key, "mixed-w%d", works[k]);
        kit_row_name(&mixed[k], key, NULL, "process_by_class, mixed, work %d", works[k]);
        measure_p2(&q, MIXED, &mixed[k], &policy, k == 0);
        snprintf(key, sizeof key, "sorted-w%d", works[k]);
        kit_row_name(&sorted[k], key, "TODO(4)", "process_by_class, grouped, work %d", works[k]);
        snprintf(key, sizeof key, "reorganised-w%d", works[k]);
        kit_row_name(&reorg[k], key, "TODO(4)", "reorganised, work %d", works[k]);
        if (!partition_ok)
            continue;
        measure_p2(&q, SORTED, &sorted[k], &policy, k == 0);
        measure_p2(&q, REORGANISED, &reorg[k], &policy, 0);
    }

    /* The facts the table and the verdict rest on. */
    double t_nodiv = p1[NODIV].t.median_ms, speedup = ratio(&p1[DIV], &p1[NODIV]);
    double lanes_div = lanes_per_body(&p1[DIV]), lanes_nodiv = lanes_per_body(&p1[NODIV]);
    double lanes_mixed = lanes_per_body(&mixed[0]), lanes_sorted = lanes_per_body(&sorted[0]);
    int crossover = 0; /* the smallest work from which the reorganisation is faster, every work after too */
    for (int k = nworks - 1; k >= 0 && ratio(&mixed[k], &reorg[k]) > 1.0; k--)
        crossover = works[k];

    FILE *csv = kit_csv_open(c.csv);
    if (csv != stdout) {
        kit_banner("Lab 03: warp divergence", &dev);
        printf("Part 1: the course's experiment: %s floats, %d iterations, 1024 threads per block; seed %llu\n",
               kit_grouped(n), iterations, c.seed);
        printf("times are medians of steady runs\n\n");
        printf("%-24s %11s %12s %16s  %s\n", "kernel", "time (ms)", "vs by warp", "lanes per body", "check");
        for (int k = DIV; k <= NODIV; k++) {
            printf("%-24s", p1[k].name);
            print_ms(&p1[k], 11);
            if (p1[k].timed && p1[NODIV].timed)
                printf(" %11.2fx", p1[k].t.median_ms / t_nodiv);
            else
                printf(" %12s", "-");
            if (p1[k].counted && p1[k].counts.c[KIT_ST_REQUESTS])
                printf(" %15.1f%%", 100.0 * lanes_per_body(&p1[k]));
            else
                printf(" %16s", "-");
            printf("  %s\n", kit_row_check_word(&p1[k]));
        }
        printf("\ncourse, Tesla K40, 4,194,304 floats: 12.43 ms against 38.55 ms, 3.10x;\n"
               "warp execution efficiency 100%% against 34.8%% (nvprof).\n");
        if (speedup > 0)
            printf("this GPU, %s floats: %.3f ms against %.3f ms, %.2fx; %.0f%% against %.0f%% of the lanes\n"
                   "in each branch body.\n",
                   kit_grouped(n), t_nodiv, p1[DIV].t.median_ms, speedup, 100.0 * lanes_nodiv, 100.0 * lanes_div);
        printf("\nThe book's kernels (simpleDivergence), %s floats:\n\n", kit_grouped(n));
        printf("%-24s %11s %12s  %s\n", "kernel", "time (ms)", "took the if", "check");
        for (int k = MATH1; k < P1_KINDS; k++) {
            printf("%-24s", p1[k].name);
            print_ms(&p1[k], 11);
            if (p1[k].wrong == 0)
                printf(" %11.1f%%", 100.0 * took_if[k]);
            else
                printf(" %12s", "-");
            printf("  %s\n", kit_row_check_word(&p1[k]));
        }
        printf("\nPart 2: %s elements of four classes mixed at random; `work` steps of its\n"
               "class's map per element\n\n",
               kit_grouped(n));
        printf("%-36s %11s %16s  %s\n", "step", "time (ms)", "store seg/req", "check");
        {
            const kit_row *steps[3] = {&count_row, &partition_row, &scatter_row};
            for (int k = 0; k < 3; k++) {
                printf("%-36s", k == 1 ? "partition_by_class (yours)" : steps[k]->name);
                print_ms(steps[k], 11);
                if (steps[k]->counted)
                    printf(" %16.2f", kit_per(&steps[k]->counts, KIT_ST_SEGMENTS, KIT_ST_REQUESTS));
                else
                    printf(" %16s", "-");
                printf("  %s\n", kit_row_check_word(steps[k]));
            }
        }
        printf("\n%6s %12s %12s %17s %14s %19s  %s\n", "work", "mixed (ms)", "grouped (ms)", "reorganised (ms)",
               "mixed/grouped", "mixed/reorganised", "check");
        for (int k = 0; k < nworks; k++) {
            const char *word = kit_row_check_word(&mixed[k]);
            if (strcmp(word, "ok") == 0)
                word = kit_row_check_word(&sorted[k]);
            if (strcmp(word, "ok") == 0)
                word = kit_row_check_word(&reorg[k]);
            printf("%6d", works[k]);
            print_ms(&mixed[k], 12);
            print_ms(&sorted[k], 12);
            print_ms(&reorg[k], 17);
            if (ratio(&mixed[k], &sorted[k]) > 0)
                printf(" %13.2fx", ratio(&mixed[k], &sorted[k]));
            else
                printf(" %14s", "-");
            if (ratio(&mixed[k], &reorg[k]) > 0)
                printf(" %18.2fx", ratio(&mixed[k], &reorg[k]));
            else
                printf(" %19s", "-");
            printf("  %s\n", word);
        }
        printf("\nThe reorganised time is the whole detour: count classes, partition_by_class,\n"
               "process_by_class on the grouped arrays, scatter back.\n");
        if (mixed[0].counted && sorted[0].counted)
            printf("lanes per branch body of process_by_class: %.1f%% mixed, %.2f%% grouped.\n",
                   100.0 * lanes_mixed, 100.0 * lanes_sorted);
        if (partition_ok && nworks == 1)
            printf("The reorganisation %s at work %d.\n", crossover ? "pays" : "does not pay", works[0]);
        else if (partition_ok && crossover == works[0])
            printf("The reorganisation pays at every work in the table.\n");
        else if (partition_ok && crossover)
            printf("The reorganisation pays from work %d on.\n", crossover);
        else if (partition_ok)
            printf("The reorganisation pays at no work in the table.\n");
        printf("\n");
    }
    if (csv) {
        fprintf(csv, "gpu,size,seed,part,kernel,work,time_ms,lanes_per_body,correct\n");
        for (int k = 0; k < P1_KINDS; k++) {
            kit_csv_prefix(csv, &dev, n, c.seed);
            fprintf(csv, "1,%s,%d,%.6f,%.4f,%d\n", p1[k].name, k <= NODIV ? iterations : 0,
                    p1[k].timed ? p1[k].t.median_ms : 0.0, p1[k].counted ? lanes_per_body(&p1[k]) : 0.0,
                    p1[k].wrong == 0);
        }
        {
            const kit_row *steps[3] = {&count_row, &partition_row, &scatter_row};
            for (int k = 0; k < 3; k++) {
                kit_csv_prefix(csv, &dev, n, c.seed);
                fprintf(csv, "2,%s,0,%.6f,0,%d\n", steps[k]->name, steps[k]->timed ? steps[k]->t.median_ms : 0.0,
                        steps[k]->wrong == 0);
            }
        }
        for (int k = 0; k < nworks; k++) {
            const kit_row *rows3[3] = {&mixed[k], &sorted[k], &reorg[k]};
            static const char *const names[3] = {"process_by_class mixed", "process_by_class grouped",
                                                 "reorganised"};
            for (int j = 0; j < 3; j++) {
                kit_csv_prefix(csv, &dev, n, c.seed);
                fprintf(csv, "2,%s,%d,%.6f,%.4f,%d\n", names[j], works[k],
                        rows3[j]->timed ? rows3[j]->t.median_ms : 0.0,
                        rows3[j]->counted ? lanes_per_body(rows3[j]) : 0.0, rows3[j]->wrong == 0);
            }
        }
        kit_csv_close(csv);
    }

    /* The facts, one per line, for tests and graders. */
    kit_kv("lab", "03-divergence");
    kit_kv_device(&dev);
    kit_kv("size", "%u", n);
    kit_kv("seed", "%llu", c.seed);
    kit_kv("iterations", "%d", iterations);
    for (int k = 0; k < P1_KINDS; k++)
        kit_row_kv(&p1[k]);
    kit_kv("lanes-per-body-div", "%.4f", lanes_div);
    kit_kv("lanes-per-body-nodiv", "%.4f", lanes_nodiv);
    for (int k = DIV; k <= NODIV; k++) {
        /* Where every element is one of the four operations: the warps
         * that took one path, the full warps that split 8 lanes to each,
         * the elements of each operation. */
        const lab03_paths *pp = &r.paths[k];
        char key[48];
        if (p1[k].wrong != 0)
            continue;
        snprintf(key, sizeof key, "one-path-warps-%s", p1_keys[k]);
        kit_kv(key, "%llu", pp->one_path);
        snprintf(key, sizeof key, "even-warps-%s", p1_keys[k]);
        kit_kv(key, "%llu", pp->even);
        snprintf(key, sizeof key, "elements-per-op-%s", p1_keys[k]);
        kit_kv(key, "%llu %llu %llu %llu", pp->elements[0], pp->elements[1], pp->elements[2], pp->elements[3]);
    }
    kit_kv("speedup-nodiv-vs-div", "%.2f", speedup);
    for (int k = MATH1; k < P1_KINDS; k++) {
        char key[48];
        snprintf(key, sizeof key, "took-if-%s", p1_keys[k]);
        kit_kv(key, "%.4f", took_if[k]);
    }
    kit_kv("class-counts", "%u %u %u %u", q.counts[0], q.counts[1], q.counts[2], q.counts[3]);
    kit_row_kv(&count_row);
    kit_row_kv(&partition_row);
    if (partition_ok)
        kit_row_kv(&scatter_row);
    for (int k = 0; k < nworks; k++) {
        char key[48];
        kit_row_kv(&mixed[k]);
        if (!partition_ok)
            continue;
        kit_row_kv(&sorted[k]);
        kit_row_kv(&reorg[k]);
        snprintf(key, sizeof key, "speedup-sorted-w%d", works[k]);
        kit_kv(key, "%.2f", ratio(&mixed[k], &sorted[k]));
        snprintf(key, sizeof key, "speedup-reorganised-w%d", works[k]);
        kit_kv(key, "%.2f", ratio(&mixed[k], &reorg[k]));
    }
    kit_kv("lanes-per-body-mixed", "%.4f", lanes_mixed);
    if (partition_ok) {
        kit_kv("lanes-per-body-sorted", "%.4f", lanes_sorted);
        if (crossover)
            kit_kv("crossover-work", "%d", crossover);
        else
            kit_kv("crossover-work", "none");
    }
    kit_kv("summary", "branching by warp %.2fx faster than by thread at %s floats; %.0f%% against %.0f%% of "
                      "lanes per branch body; grouping by class pays from work %s",
           speedup, kit_grouped(n), 100.0 * lanes_nodiv, 100.0 * lanes_div,
           !partition_ok ? "(not run)" : crossover ? kit_grouped((unsigned long long)crossover) : "(none)");
    kit_kv("course-k40", "branching by warp 3.10x faster than by thread at 4,194,304 floats; "
                         "100%% against 34.8%% warp execution efficiency");

    /*
     * The verdict: every element of every result right in every run; the
     * course's pair taking the paths the course studies (by thread, every
     * warp split evenly over the four; by warp, one path per warp and each
     * operation on about a quarter of the elements) and branching as it
     * does (each path its own body and store); the partition grouping the
     * classes.
     */
    for (int k = 0; k < P1_KINDS; k++)
        pass &= kit_row_ok(&p1[k], n);
    for (int k = DIV; k <= NODIV; k++) {
        unsigned long long stores = (unsigned long long)iterations * n, got = p1[k].counts.c[KIT_ST_LANES];
        unsigned long long want = expected_store_requests(&r.paths[k], iterations);
        if (p1[k].wrong != 0)
            continue;
        if (!(k == DIV ? lab03_by_thread_ok(&r.paths[k], kit_program, p1[k].name, p1[k].todo)
                       : lab03_by_warp_ok(&r.paths[k], kit_program, p1[k].name, p1[k].todo))) {
            pass = 0;
        } else if (got != stores) {
            fprintf(stderr, "%s: %s: its threads stored %llu times, but %d iterations for %u elements are %llu "
                            "stores: one thread per element, one store per iteration (%s)\n",
                    kit_program, p1[k].name, got, iterations, n, stores, p1[k].todo);
            pass = 0;
        } else if (k == NODIV ? p1[k].counts.c[KIT_ST_REQUESTS] > want + want / 100
                              : p1[k].counts.c[KIT_ST_REQUESTS] < want - want / 100) {
            fprintf(stderr,
                    k == DIV ? "%s: %s: its branch bodies ran with %.1f lanes each, though its warps split four "
                               "ways: each path's body must make its own store, with that path's lanes (%s)\n"
                             : "%s: %s: its branch bodies ran with %.1f lanes each, though each warp takes one "
                               "path: a warp's lanes must run its body together (%s)\n",
                    kit_program, p1[k].name, 32.0 * lanes_per_body(&p1[k]), p1[k].todo);
            pass = 0;
        }
    }
    pass &= kit_row_ok(&count_row, NCLASSES);
    pass &= kit_row_ok(&partition_row, n);
    if (partition_ok)
        pass &= kit_row_ok(&scatter_row, n);
    for (int k = 0; k < nworks; k++) {
        pass &= kit_row_ok(&mixed[k], n);
        if (partition_ok) {
            pass &= kit_row_ok(&sorted[k], n);
            pass &= kit_row_ok(&reorg[k], n);
        }
    }
    if (!partition_ok)
        fprintf(stderr, "%s: the grouped runs were not made: partition_by_class gave no valid partition "
                        "(TODO(4))\n", kit_program);
    p2_teardown(&q);
    return kit_finish(pass);
}
