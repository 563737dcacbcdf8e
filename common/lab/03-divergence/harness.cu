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
#include "kit_check.h"
#include "kit_host.h"
#include "kit_rng.h"
#include "kit_row.h"
#include "kit_table.h"
#include "kit_vecadd.h"

typedef struct lab lab; /* the lab's state, below */
#define KIT_LAB_STATE lab
#include "kit_lab.h" /* and with it kit_args.h, kit_device.h, kit_report.h, kit_timing.h */

#include "contract.h"
#include "kit_student.h"
#include "paths.h"

#define ITERATIONS 100 /* the course's loop count */
#define MAX_WORK 64    /* part 2 sweeps work = 1, 2, 4, ..., MAX_WORK */
#define MAX_WORKS 16   /* the works of one run, at most */
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
    kit_vecadd v;
    int iterations;
    unsigned char *ops;          /* the course's pair: per element, the operations that give C[i] */
    lab03_paths paths[NODIV + 1]; /* ...and the paths they make, of the checked run */
} p1_run;

static void p1_launch(const kit_student_api *api, const p1_run *r)
{
    const kit_vecadd *v = &r->v;
    switch (r->kind) {
    case DIV: api->launch_warp_divergence(v->dA, v->dB, v->dC, v->n, r->iterations); break;
    case NODIV: api->launch_warp_no_divergence(v->dA, v->dB, v->dC, v->n, r->iterations); break;
    case MATH4_PRINTED: mathKernel4_as_printed<<<(v->n + 255) / 256, 256>>>(v->dC, v->n); break;
    default: api->launch_math_kernel(r->kind - MATH1 + 1, v->dC, v->n); break; /* mathKernel1-4 */
    }
}

static kit_counts p1_counted(void *p)
{
    p1_run *r = (p1_run *)p;
    kit_vecadd_count_begin(&r->v, counted->configure_counting, 0);
    p1_launch(counted, r);
    KIT_CHECK_LAUNCH();
    return kit_counter_read(&r->v.counter);
}

static void p1_timed(void *p) { p1_launch(timed, (const p1_run *)p); }
static void p1_poison(void *p) { kit_vecadd_poison(&((p1_run *)p)->v); }
static void p1_keep(void *p) { kit_vecadd_keep(&((p1_run *)p)->v); }
static long long p1_compare(void *p) { return kit_vecadd_compare(&((p1_run *)p)->v); }

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
    const kit_vecadd *v = &r->v;
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

    KIT_CHECK(cudaMemcpy(r->v.C, r->v.dC, r->v.bytes, cudaMemcpyDeviceToHost));
    bad = kit_parallel_check(r->v.n, p1_check_range, r, &i);
    if (bad && r->kind <= NODIV) {
        const float a = r->v.A[i], b = r->v.B[i];
        fprintf(stderr, "%s: %s: C[%llu] = %.9g, but A[%llu] and B[%llu] give %.9g (A + B), %.9g (A - B), "
                        "%.9g (A * B) or %.9g (A / B)\n",
                kit_program, row->name, i, r->v.C[i], i, i, a + b, a - b, a * b, a / b);
    } else if (bad) {
        fprintf(stderr, "%s: %s: C[%llu] = %.9g, should be %.9g\n", kit_program, row->name, i,
                r->v.C[i], p1_expected(r, i));
    } else if (r->kind <= NODIV) {
        lab03_paths_of(r->ops, r->v.n, &r->paths[r->kind]);
    }
    return bad;
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
    float **floats[] = {&q->dx, &q->dy, &q->dkeep, &q->dxs, &q->dys, &q->dwant};
    unsigned int **words[] = {&q->dcls, &q->dcs, &q->dfrom, &q->dmarks};
    memset(q, 0, sizeof *q);
    q->n = n;
    q->fbytes = (size_t)n * sizeof(float);
    q->ubytes = (size_t)n * sizeof(unsigned int);
    for (int i = 0; i < KIT_COUNT(floats); i++)
        KIT_CHECK(cudaMalloc((void **)floats[i], q->fbytes));
    for (int i = 0; i < KIT_COUNT(words); i++)
        KIT_CHECK(cudaMalloc((void **)words[i], q->ubytes));
    KIT_CHECK(cudaMalloc((void **)&q->dcounts, NCLASSES * sizeof(unsigned int)));
    KIT_CHECK(cudaMalloc((void **)&q->dnext, NCLASSES * sizeof(unsigned int)));
    KIT_CHECK(cudaMalloc((void **)&q->dkeep_next, NCLASSES * sizeof(unsigned int)));
    KIT_CHECK(cudaMalloc((void **)&q->dstarts, (NCLASSES + 1) * sizeof(unsigned int)));
    KIT_CHECK(cudaMalloc((void **)&q->dfaults, sizeof(unsigned long long)));
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
    memcpy(q->ref, q->x, q->fbytes); /* the reference after ref_work = 0 steps */
    for (unsigned int i = 0; i < n; i++)
        q->counts[q->cls[i]]++;
    for (int c = 0; c < NCLASSES; c++)
        q->starts[c + 1] = q->starts[c] + q->counts[c];
    KIT_CHECK(cudaMemcpy(q->dstarts, q->starts, sizeof q->starts, cudaMemcpyHostToDevice));
}

static void p2_teardown(p2_run *q)
{
    void *dev[] = {q->dx, q->dy, q->dkeep, q->dxs, q->dys, q->dcls, q->dcs, q->dfrom,
                   q->dmarks, q->dcounts, q->dnext, q->dkeep_next, q->dstarts, q->dfaults, q->dwant};
    void *host[] = {q->x, q->y, q->ref, q->xs, q->cls, q->cs, q->from, q->seen};
    for (int i = 0; i < KIT_COUNT(dev); i++)
        KIT_CHECK(cudaFree(dev[i]));
    kit_counter_destroy(&q->counter);
    for (int i = 0; i < KIT_COUNT(host); i++)
        free(host[i]);
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

/* Every output of the step to all ones (a float NaN), so that a run that
 * skips work leaves it wrong; the partition's next is set back to the class
 * starts instead, as the count step leaves it. */
static void p2_poison(void *p)
{
    p2_run *q = (p2_run *)p;
    enum p2_step s = q->step;
    if (s == COUNT || s == REORGANISED)
        KIT_CHECK(cudaMemset(q->dnext, 0xff, NCLASSES * sizeof(unsigned int)));
    if (s == PARTITION || s == REORGANISED) {
        KIT_CHECK(cudaMemset(q->dxs, 0xff, q->fbytes));
        KIT_CHECK(cudaMemset(q->dcs, 0xff, q->ubytes));
        KIT_CHECK(cudaMemset(q->dfrom, 0xff, q->ubytes));
    }
    if (s == PARTITION)
        reset_next(q);
    if (s == SORTED || s == REORGANISED)
        KIT_CHECK(cudaMemset(q->dys, 0xff, q->fbytes));
    if (s == SCATTER || s == MIXED || s == REORGANISED)
        KIT_CHECK(cudaMemset(q->dy, 0xff, q->fbytes));
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

/* Brings the reference to q->work steps: the sweep's works only grow. */
static void advance_reference(p2_run *q)
{
    unsigned long long unused;
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
    kit_row_work w = {q, count ? p2_counted : NULL, p2_timed, p2_poison, p2_verify, p2_keep, p2_compare,
                      fresh ? p2_refresh : NULL, fresh ? p2_check : NULL, fresh ? p2_restore : NULL};
    q->step = step;
    kit_row_measure(row, &w, policy);
}

/* ---- the lab, declared once (kit_lab.h) ------------------------------------------ */

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

struct lab {
    kit_run run;
    unsigned int n;
    int only_work, works[MAX_WORKS], nworks; /* --work (0: the sweep); part 2's works, in order */
    p1_run r;                                /* part 1's arrays; r.iterations: --iterations */
    kit_row p1[P1_KINDS];
    double took_if[P1_KINDS];                /* the book's kernels: the share of C that took the if side */
    double speedup;                          /* by warp over by thread */
    kit_table pair, book;
    p2_run q;
    kit_row steps[3];                        /* the kit's count, the student's partition, the kit's scatter */
    kit_row sweep[MAX_WORKS][3];             /* per work: mixed, grouped, reorganised */
    int partition_ok;                        /* the grouped rows are made only on a valid partition */
    int crossover;                           /* the reorganisation pays from this work on (0: at none) */
};

static double ratio(const kit_row *num, const kit_row *den)
{
    return num->timed && den->timed && den->t.median_ms > 0 ? num->t.median_ms / den->t.median_ms : 0.0;
}

/* Part 1's tables, declared once (kit_table.h); the CSV is the lab's own
 * (csv_line), one for both parts, each line naming its part. */

/* The course's pair: each against by warp (ctx: its row); lanes per body,
 * a percentage in the table and a fraction in the key: value line. */
static double col_vs_by_warp(const kit_row *r, const void *x)
{
    const kit_row *nodiv = (const kit_row *)x;
    return r->timed && nodiv->timed ? r->t.median_ms / nodiv->t.median_ms : NAN;
}
static double col_lanes(const kit_row *r, const void *) { return lanes_per_body(r); }
static double col_lanes_percent(const kit_row *r, const void *) { return 100.0 * lanes_per_body(r); }
static int has_stores(const kit_row *r, const void *) { return r->counted && r->counts.c[KIT_ST_REQUESTS]; }

static const kit_column pair_columns[] = {
    {"time (ms)", 11, 3, "", NULL, 0, NULL, 0, kit_col_time, NULL},
    {"vs by warp", 12, 2, "x", NULL, 0, NULL, 0, col_vs_by_warp, NULL},
    {"lanes per body", 16, 1, "%", NULL, 0, NULL, 0, col_lanes_percent, has_stores},
    {NULL, 0, 0, NULL, NULL, 0, "lanes-per-body-%s", 4, col_lanes, NULL},
};

/* The book's kernels: the share that took the if side, where the results
 * are right (ctx: the lab, where the row's place in p1 finds it). */
static double col_took_if(const kit_row *r, const void *x)
{
    const lab *L = (const lab *)x;
    return L->took_if[r - L->p1];
}
static double col_took_if_percent(const kit_row *r, const void *x) { return 100.0 * col_took_if(r, x); }
static int is_right(const kit_row *r, const void *) { return r->wrong == 0; }

static const kit_column book_columns[] = {
    {"time (ms)", 11, 3, "", NULL, 0, NULL, 0, kit_col_time, NULL},
    {"took the if", 12, 1, "%", NULL, 0, NULL, 0, col_took_if_percent, is_right},
    {NULL, 0, 0, NULL, NULL, 0, "took-if-%s", 4, col_took_if, NULL},
};

/* A cell of part 2's tables: the figure, or "-" where it is NAN (kit_table's way). */
static void print_cell(double v, int width, int decimals, const char *unit)
{
    char text[64] = "-";
    if (!isnan(v))
        snprintf(text, sizeof text, "%.*f%s", decimals, v, unit);
    printf(" %*s", width, text);
}

/* A line of the CSV: the part, the kernel, its work (part 1: the loop
 * count), the row's time and, where it has them (lanes), lanes per body. */
static void csv_line(FILE *f, const lab *L, int part, const char *kernel, int work, const kit_row *r, int lanes)
{
    kit_csv_prefix(f, &L->run.dev, L->n, L->run.c.seed);
    fprintf(f, "%d,%s,%d,%.6f,", part, kernel, work, r->timed ? r->t.median_ms : 0.0);
    if (lanes)
        fprintf(f, "%.4f", r->counted ? lanes_per_body(r) : 0.0);
    else
        fprintf(f, "0");
    fprintf(f, ",%d\n", r->wrong == 0);
}

static void setup(lab *L)
{
    const kit_device *d = &L->run.dev;
    L->n = L->run.c.size ? (unsigned int)L->run.c.size : default_size(d);
    if ((long long)((unsigned long long)L->n * BYTES_PER_ELEMENT + (64ull << 20)) > d->free_bytes)
        kit_die(KIT_EXIT_USAGE,
                "--size %u needs %.0f MiB of GPU memory but %s has %.0f MiB free; choose a smaller --size", L->n,
                ((double)L->n * BYTES_PER_ELEMENT + (64 << 20)) / 1048576.0, d->name, d->free_bytes / 1048576.0);
    if (L->only_work)
        L->works[L->nworks++] = L->only_work;
    else
        for (int w = 1; w <= MAX_WORK; w *= 2)
            L->works[L->nworks++] = w;
}

/* Part 1: the course's pair, then the book's kernels, on one set of arrays. */
static const char *const p1_keys[P1_KINDS] = {"div", "nodiv", "math-1", "math-2", "math-3", "math-4",
                                              "math-4-as-printed"};
static const char *const p1_names[P1_KINDS] = {"warp_divergence", "warp_no_divergence", "mathKernel1",
                                               "mathKernel2", "mathKernel3", "mathKernel4",
                                               "mathKernel4 as printed"};
static const char *const p1_todos[P1_KINDS] = {"TODO(1)", "TODO(2)", NULL, NULL, NULL, "TODO(3)", NULL};

static void part1_measure(lab *L)
{
    p1_run *r = &L->r;
    kit_vecadd_setup(&r->v, L->n, L->run.c.seed);
    r->ops = (unsigned char *)kit_host_alloc(L->n);
    for (int k = 0; k < P1_KINDS; k++) {
        /* The course's pair counted too: lanes per branch body. */
        kit_row_work w = {r, k <= NODIV ? p1_counted : NULL, p1_timed, p1_poison, p1_verify, p1_keep, p1_compare,
                          NULL, NULL, NULL};
        r->kind = (enum p1_kind)k;
        kit_row_name(&L->p1[k], p1_keys[k], p1_todos[k], "%s", p1_names[k]);
        kit_row_measure(&L->p1[k], &w, &L->run.policy);
        L->took_if[k] = k >= MATH1 && L->p1[k].wrong == 0 ? took_if_share(&r->v) : 0.0;
    }
    kit_vecadd_teardown(&r->v);
    free(r->ops);
    L->speedup = ratio(&L->p1[DIV], &L->p1[NODIV]);
    kit_table pair = {"kernel", 24, &L->p1[DIV], 2, pair_columns, KIT_COUNT(pair_columns), &L->p1[NODIV]};
    kit_table book = {"kernel", 24, &L->p1[MATH1], P1_KINDS - MATH1, book_columns, KIT_COUNT(book_columns), L};
    L->pair = pair;
    L->book = book;
}

static void part1_print(lab *L)
{
    printf("Part 1: the course's experiment: %s floats, %d iterations, 1024 threads per block; seed %llu\n",
           kit_grouped(L->n), L->r.iterations, L->run.c.seed);
    printf("times are medians of steady runs\n\n");
    kit_table_print(&L->pair);
    printf("\ncourse, Tesla K40, 4,194,304 floats: 12.43 ms against 38.55 ms, 3.10x;\n"
           "warp execution efficiency 100%% against 34.8%% (nvprof).\n");
    if (L->speedup > 0)
        printf("this GPU, %s floats: %.3f ms against %.3f ms, %.2fx; %.0f%% against %.0f%% of the lanes\n"
               "in each branch body.\n",
               kit_grouped(L->n), L->p1[NODIV].t.median_ms, L->p1[DIV].t.median_ms, L->speedup,
               100.0 * lanes_per_body(&L->p1[NODIV]), 100.0 * lanes_per_body(&L->p1[DIV]));
    printf("\nThe book's kernels (simpleDivergence), %s floats:\n\n", kit_grouped(L->n));
    kit_table_print(&L->book);
}

static void part1_csv(lab *L, FILE *f)
{
    fprintf(f, "gpu,size,seed,part,kernel,work,time_ms,lanes_per_body,correct\n");
    for (int k = 0; k < P1_KINDS; k++)
        csv_line(f, L, 1, L->p1[k].name, k <= NODIV ? L->r.iterations : 0, &L->p1[k], 1);
}

static void part1_kv(lab *L)
{
    kit_kv("size", "%u", L->n);
    kit_kv("iterations", "%d", L->r.iterations);
    kit_table_kv(&L->pair);
    for (int k = DIV; k <= NODIV; k++) {
        /* Where every element is one of the four operations: the warps that took
         * one path, the full warps that split 8 lanes to each, each operation's elements. */
        const lab03_paths *pp = &L->r.paths[k];
        char key[48];
        if (L->p1[k].wrong != 0)
            continue;
        snprintf(key, sizeof key, "one-path-warps-%s", L->p1[k].key);
        kit_kv(key, "%llu", pp->one_path);
        snprintf(key, sizeof key, "even-warps-%s", L->p1[k].key);
        kit_kv(key, "%llu", pp->even);
        snprintf(key, sizeof key, "elements-per-op-%s", L->p1[k].key);
        kit_kv(key, "%llu %llu %llu %llu", pp->elements[0], pp->elements[1], pp->elements[2], pp->elements[3]);
    }
    kit_kv("speedup-nodiv-vs-div", "%.2f", L->speedup);
    kit_table_kv(&L->book);
}

/* Every element of every result right in every run; the course's pair
 * taking the paths the course studies (by thread, every warp split evenly
 * over the four; by warp, one path per warp and each operation on about a
 * quarter of the elements) and branching as it does (each path its own
 * body and store). */
static void part1_verdict(lab *L)
{
    unsigned int n = L->n;
    int iterations = L->r.iterations;
    for (int k = 0; k < P1_KINDS; k++)
        L->run.pass &= kit_row_ok(&L->p1[k], n);
    for (int k = DIV; k <= NODIV; k++) {
        const kit_row *x = &L->p1[k];
        const lab03_paths *paths = &L->r.paths[k];
        /* want: the store requests the course's pair makes when each path's
         * body holds its own store: per iteration, one per warp and path its
         * threads took (paths.h counts them from the results). The verdict
         * allows 1% more (by warp) or fewer (by thread), so that it never
         * rests on how exactly the hardware regroups lanes; the tests
         * require the exact count. */
        unsigned long long stores = (unsigned long long)iterations * n, got = x->counts.c[KIT_ST_LANES],
                           want = paths->paths * (unsigned long long)iterations;
        if (x->wrong != 0)
            continue;
        if (!(k == DIV ? lab03_by_thread_ok(paths, kit_program, x->name, x->todo)
                       : lab03_by_warp_ok(paths, kit_program, x->name, x->todo))) {
            L->run.pass = 0;
        } else if (got != stores) {
            fprintf(stderr, "%s: %s: its threads stored %llu times, but %d iterations for %u elements are %llu "
                            "stores: one thread per element, one store per iteration (%s)\n",
                    kit_program, x->name, got, iterations, n, stores, x->todo);
            L->run.pass = 0;
        } else if (k == NODIV ? x->counts.c[KIT_ST_REQUESTS] > want + want / 100
                              : x->counts.c[KIT_ST_REQUESTS] < want - want / 100) {
            fprintf(stderr,
                    k == DIV ? "%s: %s: its branch bodies ran with %.1f lanes each, though its warps split four "
                               "ways: each path's body must make its own store, with that path's lanes (%s)\n"
                             : "%s: %s: its branch bodies ran with %.1f lanes each, though each warp takes one "
                               "path: a warp's lanes must run its body together (%s)\n",
                    kit_program, x->name, 32.0 * lanes_per_body(x), x->todo);
            L->run.pass = 0;
        }
    }
}

/* Part 2's sweep, per work: the kernel on mixed data (MIXED), on grouped data
 * (SORTED), the whole reorganisation (REORGANISED): keys, names, TODOs, CSV names. */
static const struct { const char *key, *name, *todo, *csv; } sweep_rows[3] = {
    {"mixed", "process_by_class, mixed", NULL, "process_by_class mixed"},
    {"sorted", "process_by_class, grouped", "TODO(4)", "process_by_class grouped"},
    {"reorganised", "reorganised", "TODO(4)", "reorganised"},
};

/* Part 2: the kit's counting step, the student's partition, the kit's
 * scatter; then the sweep, its grouped rows only on a valid partition. */
static void part2_measure(lab *L)
{
    p2_run *q = &L->q;
    p2_setup(q, L->n, L->run.c.seed);
    q->work = L->works[0];
    kit_row_name(&L->steps[0], "count", NULL, "count classes (kit)");
    measure_p2(q, COUNT, &L->steps[0], &L->run.policy, 0);
    kit_row_name(&L->steps[1], "partition", "TODO(4)", "partition_by_class");
    measure_p2(q, PARTITION, &L->steps[1], &L->run.policy, 1);
    L->partition_ok = L->steps[1].wrong == 0 && L->steps[1].t.bad_runs == 0;
    kit_row_name(&L->steps[2], "scatter", NULL, "scatter back (kit)");
    if (L->partition_ok)
        measure_p2(q, SCATTER, &L->steps[2], &L->run.policy, 0);
    for (int k = 0; k < L->nworks; k++) {
        q->work = L->works[k];
        advance_reference(q);
        for (int j = 0; j < 3; j++) {
            char key[32];
            snprintf(key, sizeof key, "%s-w%d", sweep_rows[j].key, q->work);
            kit_row_name(&L->sweep[k][j], key, sweep_rows[j].todo, "%s, work %d", sweep_rows[j].name, q->work);
            if (j == 0 || L->partition_ok) /* counted at the first work, but the reorganisation */
                measure_p2(q, (enum p2_step)(MIXED + j), &L->sweep[k][j], &L->run.policy, k == 0 && j < 2);
        }
    }
    for (int k = L->nworks - 1; k >= 0 && ratio(&L->sweep[k][0], &L->sweep[k][2]) > 1.0; k--)
        L->crossover = L->works[k];
}

static void part2_print(lab *L)
{
    const int *works = L->works, crossover = L->crossover, ok = L->partition_ok;
    printf("\nPart 2: %s elements of four classes mixed at random; `work` steps of its\n"
           "class's map per element\n\n",
           kit_grouped(L->n));
    /* The steps, the student's named as theirs; the partition's stores counted. */
    printf("%-36s %11s %16s  %s\n", "step", "time (ms)", "store seg/req", "check");
    for (int k = 0; k < 3; k++) {
        const kit_row *x = &L->steps[k];
        printf("%-36s", k == 1 ? "partition_by_class (yours)" : x->name);
        print_cell(kit_col_time(x, NULL), 11, 3, "");
        print_cell(x->counted ? kit_per(&x->counts, KIT_ST_SEGMENTS, KIT_ST_REQUESTS) : NAN, 16, 2, "");
        printf("  %s\n", kit_row_check_word(x));
    }
    printf("\n%6s %12s %12s %17s %14s %19s  %s\n", "work", "mixed (ms)", "grouped (ms)", "reorganised (ms)",
           "mixed/grouped", "mixed/reorganised", "check");
    for (int k = 0; k < L->nworks; k++) {
        const kit_row *w = L->sweep[k];
        double grouped = ratio(&w[0], &w[1]), reorganised = ratio(&w[0], &w[2]);
        const char *word = "ok"; /* the first of the three rows' words that is not ok */
        for (int j = 0; j < 3 && strcmp(word, "ok") == 0; j++)
            word = kit_row_check_word(&w[j]);
        printf("%6d", works[k]);
        for (int j = 0; j < 3; j++)
            print_cell(kit_col_time(&w[j], NULL), j < 2 ? 12 : 17, 3, "");
        print_cell(grouped > 0 ? grouped : NAN, 14, 2, "x");
        print_cell(reorganised > 0 ? reorganised : NAN, 19, 2, "x");
        printf("  %s\n", word);
    }
    printf("\nThe reorganised time is the whole detour: count classes, partition_by_class,\n"
           "process_by_class on the grouped arrays, scatter back.\n");
    if (L->sweep[0][0].counted && L->sweep[0][1].counted)
        printf("lanes per branch body of process_by_class: %.1f%% mixed, %.2f%% grouped.\n",
               100.0 * lanes_per_body(&L->sweep[0][0]), 100.0 * lanes_per_body(&L->sweep[0][1]));
    if (ok && L->nworks == 1)
        printf("The reorganisation %s at work %d.\n", crossover ? "pays" : "does not pay", works[0]);
    else if (ok && crossover == works[0])
        printf("The reorganisation pays at every work in the table.\n");
    else if (ok && crossover)
        printf("The reorganisation pays from work %d on.\n", crossover);
    else if (ok)
        printf("The reorganisation pays at no work in the table.\n");
    printf("\n");
}

static void part2_csv(lab *L, FILE *f)
{
    for (int k = 0; k < 3; k++)
        csv_line(f, L, 2, L->steps[k].name, 0, &L->steps[k], 0);
    for (int k = 0; k < L->nworks; k++)
        for (int j = 0; j < 3; j++)
            csv_line(f, L, 2, sweep_rows[j].csv, L->works[k], &L->sweep[k][j], 1);
}

static void part2_kv(lab *L)
{
    kit_kv("class-counts", "%u %u %u %u", L->q.counts[0], L->q.counts[1], L->q.counts[2], L->q.counts[3]);
    for (int k = 0; k < (L->partition_ok ? 3 : 2); k++)
        kit_row_kv(&L->steps[k]);
    for (int k = 0; k < L->nworks; k++) {
        const kit_row *w = L->sweep[k];
        kit_row_kv(&w[0]);
        for (int j = 1; j < 3 && L->partition_ok; j++) {
            char key[48];
            kit_row_kv(&w[j]);
            snprintf(key, sizeof key, "speedup-%s", w[j].key); /* speedup-sorted-w64 */
            kit_kv(key, "%.2f", ratio(&w[0], &w[j]));
        }
    }
    kit_kv("lanes-per-body-mixed", "%.4f", lanes_per_body(&L->sweep[0][0]));
    if (L->partition_ok) {
        kit_kv("lanes-per-body-sorted", "%.4f", lanes_per_body(&L->sweep[0][1]));
        if (L->crossover)
            kit_kv("crossover-work", "%d", L->crossover);
        else
            kit_kv("crossover-work", "none");
    }
}

/* Every step and every run of the sweep right; the partition grouping the
 * classes, or the grouped runs are not made. */
static void part2_verdict(lab *L)
{
    for (int k = 0; k < (L->partition_ok ? 3 : 2); k++) /* the count: its NCLASSES starts */
        L->run.pass &= kit_row_ok(&L->steps[k], k == 0 ? NCLASSES : L->n);
    for (int k = 0; k < L->nworks; k++)
        for (int j = 0; j < (L->partition_ok ? 3 : 1); j++)
            L->run.pass &= kit_row_ok(&L->sweep[k][j], L->n);
    if (!L->partition_ok)
        fprintf(stderr, "%s: the grouped runs were not made: partition_by_class gave no valid partition "
                        "(TODO(4))\n", kit_program);
}

static void summary(lab *L)
{
    kit_kv("summary", "branching by warp %.2fx faster than by thread at %s floats; %.0f%% against %.0f%% of "
                      "lanes per branch body; grouping by class pays from work %s",
           L->speedup, kit_grouped(L->n), 100.0 * lanes_per_body(&L->p1[NODIV]),
           100.0 * lanes_per_body(&L->p1[DIV]),
           !L->partition_ok ? "(not run)" : L->crossover ? kit_grouped((unsigned long long)L->crossover) : "(none)");
    kit_kv("course-k40", "branching by warp 3.10x faster than by thread at 4,194,304 floats; "
                         "100%% against 34.8%% warp execution efficiency");
}

static void teardown(lab *L) { p2_teardown(&L->q); }

static const kit_part parts[] = {
    {part1_measure, part1_print, part1_csv, part1_kv, part1_verdict},
    {part2_measure, part2_print, part2_csv, part2_kv, part2_verdict},
};

int main(int argc, char **argv)
{
    static lab L;
    kit_option opts[] = {
        KIT_LAB_OPTIONS(&L.run.c),
        {"--iterations", KIT_OPT_INT, &L.r.iterations, "I",
         "part 1: loop count inside the course's two kernels (course: 100)", 1, 100000, NULL},
        {"--work", KIT_OPT_INT, &L.only_work, "W",
         "part 2: only this many steps per element instead of the sweep 1, 2, 4, ..., 64", 1, 4096, NULL},
    };
    const kit_lab lab03 = {
        "03-divergence",
        "Lab 03: warp divergence",
        "Lab 03: warp divergence. Times the course's four-way branch by thread against\n"
        "the same branch by warp and the book's mathKernel1-4, then a kernel whose\n"
        "work depends on each element's class, mixed and grouped by class, with the\n"
        "grouping's cost; counts the lanes that run each branch body, and checks\n"
        "every result.",
        opts, KIT_COUNT(opts), NULL, setup, NULL, NULL, summary, teardown, parts, KIT_COUNT(parts),
    };
    kit_run_defaults(&L.run);
    L.r.iterations = ITERATIONS;
    return kit_lab_main(&lab03, &L, &L.run, argc, argv);
}
