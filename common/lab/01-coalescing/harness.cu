/*
 * Lab 01: coalesced access to global memory - the harness.
 * The student's file: labs/01-coalescing/coalescing.cu; the handout:
 * handouts/01-coalescing.md.
 *
 * Part 1, the course's experiment: C[tid] = A[x] + B[x], `iterations`
 * times per thread, where x is
 *   - the thread's own index (the student's full_coalesced_access): one
 *     128-byte segment per warp request;
 *   - a random index in [0, n) (the student's non_coalesced_access): about
 *     32 segments per request;
 *   - tid * stride, wrapped into the array (the kit's strided_access): s
 *     segments per request for s = 1, 2, 4, ..., 32.
 * Then a streaming pass (one iteration) against the GPU's own copy
 * bandwidth.
 *
 * Part 2, making a kernel coalesced: the sums of the rows and of the
 * columns of an n x n matrix; one thread per row reads 32 segments per
 * request, the student's row_sums_coalesced must read 1 or 2.
 *
 * Every kernel is counted (its counting build), checked element by element,
 * and timed until the median is steady, each timed run checked again
 * (common/lib/kit_row.h).
 */
#include "kit_check.h"
#include "kit_rng.h"
#include "kit_row.h"
#include "kit_table.h"
#include "kit_vecadd.h"

typedef struct lab lab; /* the lab's state, below */
#define KIT_LAB_STATE lab
#include "kit_lab.h"

#include "contract.h"
#include "kit_student.h"

#define ITERATIONS 100 /* the course's loop count */
#define MAX_STRIDE 32
/* Below this many elements (1,024 segments) random and clustered access
 * look alike to the counters, so the random pattern is not judged. */
#define RANDOM_CHECK_MIN_SIZE 32768
/* Part 2: row sums coalesced means at least this share of each sector used. */
#define MIN_ROW_SUMS_EFFICIENCY 0.5

static const kit_student_api *timed = &kit_student_timed;
static const kit_student_api *counted = &kit_student_counted;

/* ---- the kit's kernels: the stride sweep, the matrix's values ------------- */

/* Built twice like the student's: plain pointers, and counting ones. */
template <typename In, typename Out>
__global__ void strided_access(In A, In B, Out C, unsigned int n, int iterations, unsigned int stride)
{
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int x = (unsigned int)(((unsigned long long)tid * stride) % n);

    if (tid >= n)
        return;
    for (int i = 0; i < iterations; i++)
        C[tid] = A[x] + B[x];
}

/* Sixteenths from 1/16 to 1: every row and column sum is exact in a float,
 * whatever the order of the additions, so sums are checked bit for bit. */
static __global__ void fill_sixteenths(float *M, unsigned long long count, unsigned long long seed)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    kit_rng s;

    kit_rng_thread(&s, seed, i);
    for (; i < count; i += (unsigned long long)gridDim.x * blockDim.x)
        M[i] = (float)(1 + (curand(&s) & 15)) * 0.0625f;
}

/* ---- Part 1: the vector additions ---------------------------------------- */

enum kind { FULL, NON, STRIDED };

typedef struct {
    enum kind kind;
    kit_vecadd *v;
    int iterations;
    unsigned int np, stride;
    unsigned long long seed;
} vec_run;

static void launch(const kit_student_api *api, const vec_run *r, int counting)
{
    const kit_vecadd *v = r->v;
    unsigned int blocks = (v->n + 1023) / 1024;

    switch (r->kind) {
    case FULL:
        api->launch_full_coalesced_access(v->dA, v->dB, v->dC, v->n, r->iterations);
        break;
    case NON:
        api->launch_non_coalesced_access(v->dA, v->dB, v->dC, v->n, r->iterations, r->np, r->seed);
        break;
    case STRIDED:
        if (counting)
            strided_access<kit_counted_ptr<const float>, kit_counted_ptr<float> >
                <<<blocks, 1024>>>(v->dA, v->dB, v->dC, v->n, r->iterations, r->stride);
        else
            strided_access<const float *, float *><<<blocks, 1024>>>(v->dA, v->dB, v->dC, v->n,
                                                                     r->iterations, r->stride);
        break;
    }
}

static kit_counts vec_counted(void *p)
{
    vec_run *r = (vec_run *)p, once = *r;
    kit_counts k;

    /* The kit's strided kernel repeats the same accesses every iteration:
     * one iteration counted, times the iterations, is the whole count. */
    if (r->kind == STRIDED)
        once.iterations = 1;
    kit_vecadd_count_begin(r->v, r->kind == STRIDED ? kit_count_configure_here : counted->configure_counting,
                           r->kind == NON);
    launch(counted, &once, 1);
    KIT_CHECK_LAUNCH();
    k = kit_counter_read(&r->v->counter);
    for (int i = 0; i < KIT_NCOUNTS && once.iterations != r->iterations; i++)
        k.c[i] *= (unsigned long long)r->iterations;
    return k;
}

static void vec_timed(void *p) { launch(timed, (vec_run *)p, 0); }
static void vec_poison(void *p) { kit_vecadd_poison(((vec_run *)p)->v); }
static void vec_keep(void *p) { kit_vecadd_keep(((vec_run *)p)->v); }
static long long vec_compare(void *p) { return kit_vecadd_compare(((vec_run *)p)->v); }

/* The index thread i must have read where it is not random. */
static unsigned long long expected_index(unsigned long long i, const void *p)
{
    const vec_run *r = (const vec_run *)p;
    return r->kind == STRIDED ? (i * r->stride) % r->v->n : i;
}

static long long vec_verify(void *p, const kit_row *row)
{
    vec_run *r = (vec_run *)p;
    return kit_vecadd_check(r->v, r->kind == NON ? NULL : expected_index, r, row->name);
}

/* Timed runs with inputs of their own, checked on the device. */
static void vec_refresh(void *p, unsigned long long draw) { kit_vecadd_refresh(((vec_run *)p)->v, draw); }
static void vec_restore(void *p) { kit_vecadd_restore(((vec_run *)p)->v); }

static long long vec_check(void *p)
{
    const vec_run *r = (const vec_run *)p;
    return kit_vecadd_check_device(r->v, r->kind == NON ? KIT_INDEX_RECORDED : r->kind == STRIDED ? KIT_INDEX_STRIDED
                                                                                                  : KIT_INDEX_OWN,
                                   r->stride);
}

static void measure_vec(vec_run *r, kit_row *row, const kit_policy *policy, int count)
{
    kit_row_work w = {r,         count ? vec_counted : NULL, vec_timed, vec_poison, vec_verify, vec_keep, vec_compare,
                      vec_refresh, vec_check,                  vec_restore};
    kit_row_measure(row, &w, policy);
}

static void copy_d2d(void *p)
{
    const kit_vecadd *v = ((vec_run *)p)->v;
    KIT_CHECK(cudaMemcpyAsync(v->dC, v->dA, v->bytes, cudaMemcpyDeviceToDevice, 0));
}

/*
 * The kit's own copy kernel, shaped as the vector add with one array fewer
 * (a thread per element, one load and one store): what a kernel of that
 * shape moves on these SMs. cudaMemcpy may use the copy engines instead,
 * which a share of a GPU (CUDA MPS) leaves whole; the vector add's
 * bandwidth is also measured against this one.
 */
static __global__ void copy_kernel(const float *in, float *out, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i];
}

static void copy_by_kernel(void *p)
{
    const kit_vecadd *v = ((const vec_run *)p)->v;
    copy_kernel<<<(v->n + 255) / 256, 256>>>(v->dA, v->dC, v->n);
}

/* A row of the kit's own work, which has nothing to check: a warm-up, then
 * timed as the policy (and --focus) says. */
static void measure_kit(kit_row *row, void (*run)(void *), vec_run *r, const kit_policy *policy)
{
    kit_work w = {NULL, run, NULL, r, 0.0f, 0};
    const kit_policy p = kit_policy_for(policy, row->key);
    run(r);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaDeviceSynchronize());
    row->t = kit_measure(&w, &p);
    row->timed = 1;
    row->wrong = 0;
}

/* ---- TODO(5): the student's own timing of full_coalesced_access --------------- */

#define OWN_TIMING_REPS 7
/* The kernel the student times lasts about this long, whatever the size: long
 * against the clocks' resolution and against what the kit's figure holds
 * beside the kernel where it is the judge's (its clock around the worker's
 * call: a round trip and the launch, 0.5 ms measured on a busy H100). */
#define OWN_TIMING_TARGET_MS 10.0
/* Agreement with the kit's median: the kit's figure holds those extras, so
 * the student's may be a little lower; and a little higher where a short
 * burst of other work on the GPU fell in the student's runs alone (the
 * mistakes this looks for are 2x and more, or nearly nothing). */
#define OWN_TIMING_LOW 0.75
#define OWN_TIMING_HIGH 1.5
/* The kit times the launch before and after the student's call; where the
 * two differ by more than this, the GPU was not steady meanwhile (other
 * work: a class graded side by side, a test beside this one; or its clocks,
 * once on an H100 held alone) and no comparison is fair. */
#define OWN_TIMING_STEADY 0.10

typedef struct {
    int judged;         /* 0: --focus, a short kernel, a sanitizer, a busy GPU */
    char why[160];      /* why not judged */
    int iterations;     /* of the kernel timed */
    double kit_ms;      /* the kit's median of the same launch, before and after */
    double kit_before_ms, kit_after_ms;
    double own_ms;      /* the student's figure */
} own_timing;

/* The student's figure agrees with the kit's. */
static int own_agrees(const own_timing *o)
{
    return o->own_ms >= OWN_TIMING_LOW * o->kit_ms && o->own_ms <= OWN_TIMING_HIGH * o->kit_ms;
}

/* What came of it, as the own-timing line says it. */
static const char *own_state(const own_timing *o)
{
    return !o->iterations ? "not-run" : !(o->own_ms > 0) ? "no-time" : !o->judged ? "not-judged"
           : own_agrees(o) ? "agrees" : "disagrees";
}

/* One comparison: the kit's figure, the student's, the kit's again. */
static void own_once(own_timing *o, vec_run *x)
{
    kit_policy p = kit_policy_default(3);
    kit_work w = {NULL, vec_timed, NULL, x, 0.0f, 0};
    double lo, hi;

    o->kit_before_ms = kit_measure(&w, &p).median_ms;
    o->own_ms = timed->time_full_coalesced_ms(x->v->dA, x->v->dB, x->v->dC, x->v->n, x->iterations, OWN_TIMING_REPS);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaDeviceSynchronize());
    o->kit_after_ms = kit_measure(&w, &p).median_ms;
    lo = o->kit_before_ms < o->kit_after_ms ? o->kit_before_ms : o->kit_after_ms;
    hi = o->kit_before_ms < o->kit_after_ms ? o->kit_after_ms : o->kit_before_ms;
    o->kit_ms = (lo + hi) / 2;
    o->judged = 0;
    if (kit_under_sanitizer())
        snprintf(o->why, sizeof o->why, "under compute-sanitizer the kernel is instrumented, not as fast as it runs");
    else if (lo < OWN_TIMING_TARGET_MS / 2)
        snprintf(o->why, sizeof o->why, "the kernel is too short here");
    else if (hi > (1 + OWN_TIMING_STEADY) * lo)
        snprintf(o->why, sizeof o->why, "the kit's own figure moved by more than %.0f%% from before your call to "
                 "after it (other work on the GPU, or its clocks changing)", OWN_TIMING_STEADY * 100);
    else
        o->judged = 1;
}

/*
 * The kit times full_coalesced_access with as many iterations as make it
 * last about OWN_TIMING_TARGET_MS, asks the student's time_full_coalesced_ms
 * for the same launch, and times it again. The iterations come from the
 * full row's median, then once more from the kit's own figure at that
 * count (where the kit's figure is the judge's, it also holds the judge's
 * round trip, and the first estimate falls short). Where the full row
 * failed its checks, the run's own iterations, once. A disagreement is
 * measured again before it counts: a burst of other work on a shared GPU
 * during the student's runs alone does not fail a right answer.
 */
static own_timing time_it_yourself(const vec_run *r, const kit_row *full, int iterations)
{
    own_timing o;
    vec_run x = *r;
    kit_policy p = kit_policy_default(3);
    kit_work w = {NULL, vec_timed, NULL, &x, 0.0f, 0};
    double per = full->timed && iterations > 0 ? full->t.median_ms / iterations : 0.0;
    double it = per > 0 ? ceil(OWN_TIMING_TARGET_MS / per) : (double)iterations;

    memset(&o, 0, sizeof o);
    x.kind = FULL;
    x.iterations = it < 1 ? 1 : it > 100000 ? 100000 : (int)it;
    vec_timed(&x);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaDeviceSynchronize());
    if (per > 0 && x.iterations < 100000) {
        double ms = kit_measure(&w, &p).median_ms;
        if (ms > 0 && ms < 0.8 * OWN_TIMING_TARGET_MS) {
            it = ceil(x.iterations * OWN_TIMING_TARGET_MS / ms);
            x.iterations = it > 100000 ? 100000 : (int)it;
        }
    }
    o.iterations = x.iterations;
    own_once(&o, &x);
    if (o.judged && !own_agrees(&o))
        own_once(&o, &x);
    return o;
}

/* ---- Part 2: the matrix --------------------------------------------------- */

enum sums { ROWS, COLUMNS, ROWS_COALESCED };

typedef struct {
    unsigned int n;
    float *dM, *dSums, *dKeep;
    float *dWant;             /* a timed run's exact answers (fresh inputs) */
    float *sums;              /* host copy of a result */
    float *row_sum, *col_sum; /* the exact answers */
    kit_counter counter;
    enum sums which;
    unsigned long long seed;  /* of M */
} matrix_run;

/* The exact sums, for the kit: a warp per row (its loads coalesced), a
 * thread per column. Sixteenths add up exactly in any order. */
static __global__ void exact_row_sums(const float *M, float *sums, unsigned int n)
{
    unsigned long long r = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) / 32;
    unsigned int lane = threadIdx.x % 32;
    float s = 0.0f;
    if (r >= n)
        return;
    for (unsigned int c = lane; c < n; c += 32)
        s += M[r * n + c];
    for (int o = 16; o > 0; o /= 2)
        s += __shfl_down_sync(0xffffffff, s, o);
    if (lane == 0)
        sums[r] = s;
}

static __global__ void exact_column_sums(const float *M, float *sums, unsigned int n)
{
    unsigned int c = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    if (c >= n)
        return;
    for (unsigned long long r = 0; r < n; r++)
        s += M[r * n + c];
    sums[c] = s;
}

static void matrix_setup(matrix_run *m, unsigned int n, unsigned long long seed)
{
    size_t count = (size_t)n * n;
    float *M = (float *)kit_host_alloc(count * sizeof(float));

    memset(m, 0, sizeof *m);
    m->n = n;
    kit_counter_create(&m->counter, 0, 0);
    KIT_CHECK(cudaMalloc((void **)&m->dM, count * sizeof(float)));
    KIT_CHECK(cudaMalloc((void **)&m->dSums, n * sizeof(float)));
    KIT_CHECK(cudaMalloc((void **)&m->dKeep, n * sizeof(float)));
    KIT_CHECK(cudaMalloc((void **)&m->dWant, n * sizeof(float)));
    m->seed = seed + 2;
    fill_sixteenths<<<1024, 256>>>(m->dM, count, m->seed);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaMemcpy(M, m->dM, count * sizeof(float), cudaMemcpyDeviceToHost));
    m->sums = (float *)kit_host_alloc(n * sizeof(float));
    m->row_sum = (float *)kit_host_alloc(n * sizeof(float));
    m->col_sum = (float *)kit_host_alloc(n * sizeof(float));
    memset(m->col_sum, 0, n * sizeof(float));
    for (unsigned int r = 0; r < n; r++) {
        float s = 0.0f;
        for (unsigned int c = 0; c < n; c++) {
            s += M[(size_t)r * n + c];
            m->col_sum[c] += M[(size_t)r * n + c];
        }
        m->row_sum[r] = s;
    }
    free(M);
}

static void matrix_teardown(matrix_run *m)
{
    kit_counter_destroy(&m->counter);
    KIT_CHECK(cudaFree(m->dM));
    KIT_CHECK(cudaFree(m->dSums));
    KIT_CHECK(cudaFree(m->dKeep));
    KIT_CHECK(cudaFree(m->dWant));
    free(m->sums);
    free(m->row_sum);
    free(m->col_sum);
}

static void matrix_launch(const kit_student_api *api, const matrix_run *m)
{
    switch (m->which) {
    case ROWS: api->launch_row_sums(m->dM, m->dSums, m->n); break;
    case COLUMNS: api->launch_column_sums(m->dM, m->dSums, m->n); break;
    case ROWS_COALESCED: api->launch_row_sums_coalesced(m->dM, m->dSums, m->n); break;
    }
}

static kit_counts matrix_counted(void *p)
{
    matrix_run *m = (matrix_run *)p;
    kit_counter_reset(&m->counter, NULL, 0);
    counted->configure_counting(&m->counter.cfg);
    matrix_launch(counted, m);
    KIT_CHECK_LAUNCH();
    return kit_counter_read(&m->counter);
}

static void matrix_timed(void *p) { matrix_launch(timed, (matrix_run *)p); }

static void matrix_poison(void *p)
{
    matrix_run *m = (matrix_run *)p;
    KIT_CHECK(cudaMemset(m->dSums, 0xff, m->n * sizeof(float)));
}

static long long matrix_verify(void *p, const kit_row *row)
{
    matrix_run *m = (matrix_run *)p;
    const float *want = m->which == COLUMNS ? m->col_sum : m->row_sum;
    long long bad = 0;

    KIT_CHECK(cudaMemcpy(m->sums, m->dSums, m->n * sizeof(float), cudaMemcpyDeviceToHost));
    for (unsigned int i = 0; i < m->n; i++)
        if (m->sums[i] != want[i] && bad++ == 0)
            fprintf(stderr, "%s: %s: sums[%u] = %.9g but the %s's sum is %.9g\n", kit_program,
                    row->name, i, m->sums[i], m->which == COLUMNS ? "column" : "row", want[i]);
    return bad;
}

static void matrix_keep(void *p)
{
    matrix_run *m = (matrix_run *)p;
    KIT_CHECK(cudaMemcpy(m->dKeep, m->dSums, m->n * sizeof(float), cudaMemcpyDeviceToDevice));
}

static long long matrix_compare(void *p)
{
    matrix_run *m = (matrix_run *)p;
    return kit_device_differ(m->dSums, m->dKeep, m->n * sizeof(float));
}

/* Timed runs with a matrix of their own; its sums by the kit's kernels.
 * Draw 0 is the first matrix, of the row's seed. */
static void matrix_refresh(void *p, unsigned long long draw)
{
    matrix_run *m = (matrix_run *)p;
    fill_sixteenths<<<1024, 256>>>(m->dM, (unsigned long long)m->n * m->n, kit_row_draw_seed(m->seed, draw));
    KIT_CHECK_LAUNCH();
    if (m->which == COLUMNS)
        exact_column_sums<<<(m->n + 255) / 256, 256>>>(m->dM, m->dWant, m->n);
    else
        exact_row_sums<<<(m->n + 7) / 8, 256>>>(m->dM, m->dWant, m->n);
    KIT_CHECK_LAUNCH();
}

static long long matrix_check(void *p)
{
    matrix_run *m = (matrix_run *)p;
    return kit_device_differ(m->dSums, m->dWant, m->n * sizeof(float));
}

static void matrix_restore(void *p) { matrix_refresh(p, 0); }

static void measure_matrix(matrix_run *m, enum sums which, kit_row *row, const kit_policy *policy)
{
    kit_row_work w = {m,           matrix_counted, matrix_timed,  matrix_poison, matrix_verify, matrix_keep,
                      matrix_compare, matrix_refresh, matrix_check, matrix_restore};
    m->which = which;
    kit_row_measure(row, &w, policy);
}

/* ---- the lab, declared once (kit_lab.h) ------------------------------------ */

/* The tables, declared once: what each column shows, in the table, the
 * CSV and the key: value lines (kit_table.h). One CSV holds Part 1's and
 * Part 2's. The streaming rows' table gives their key: value lines; their
 * lines for people are part1_print's. */
typedef struct {
    const kit_row *full;   /* the coalesced kernel: the yardstick */
    const kit_row *stream; /* the one-pass vector add, against the copies */
    double bytes;          /* one array */
    int iterations;
} vec_table;

static double col_vs_full(const kit_row *r, const void *x)
{
    const kit_row *full = ((const vec_table *)x)->full;
    return r->timed && full->timed && full->t.median_ms > 0 ? r->t.median_ms / full->t.median_ms : NAN;
}
static double col_none(const kit_row *, const void *) { return NAN; }
static double col_gbs(const kit_row *r, const void *x)
{
    const vec_table *v = (const vec_table *)x;
    return r->timed ? 3.0 * v->bytes * v->iterations / (r->t.median_ms * 1e6) : NAN;
}
static double col_efficiency(const kit_row *r, const void *) { return kit_row_load_efficiency(r); }
static double col_bytes_used(const kit_row *r, const void *) { return 100.0 * kit_row_load_efficiency(r); }
/* Streaming: the vector add reads two arrays and writes one, a copy reads
 * one and writes one, each once; the vector add's is 0 where it failed. */
static double col_stream_gbs(const kit_row *r, const void *x)
{
    const vec_table *v = (const vec_table *)x;
    return r->timed ? (r == v->stream ? 3.0 : 2.0) * v->bytes / (r->t.median_ms * 1e6) : 0.0;
}
static double col_of_copy(const kit_row *r, const void *x)
{
    const kit_row *stream = ((const vec_table *)x)->stream;
    return r == stream ? NAN : col_stream_gbs(stream, x) / col_stream_gbs(r, x);
}

static const kit_column vec_columns[] = {
    {"time (ms)", 11, 3, "", "time_ms", 6, NULL, 0, kit_col_time, NULL},
    {"time/coal", 10, 1, "x", "time_vs_coalesced", 4, NULL, 0, col_vs_full, NULL},
    {"segments/req", 14, 2, "", "segments_per_request", 4, NULL, 0, kit_col_segments, NULL},
    {"sectors/req", 12, 2, "", "sectors_per_request", 4, NULL, 0, kit_col_sectors, NULL},
    {"req. GB/s", 12, 0, "", NULL, 0, NULL, 0, col_gbs, NULL},
    {NULL, 0, 0, NULL, "load_efficiency", 4, NULL, 0, col_efficiency, NULL},
};
static const kit_column stream_columns[] = {
    {NULL, 0, 0, NULL, NULL, 0, "bandwidth-%s-gbs", 1, col_stream_gbs, NULL},
    {NULL, 0, 0, NULL, NULL, 0, "stream-fraction-of-%s", 3, col_of_copy, NULL},
};
static const kit_column sum_columns[] = {
    {"time (ms)", 11, 3, "", "time_ms", 6, NULL, 0, kit_col_time, NULL},
    {NULL, 0, 0, NULL, "time_vs_coalesced", 4, NULL, 0, col_none, NULL},
    {"segments/req", 14, 2, "", "segments_per_request", 4, NULL, 0, kit_col_segments, NULL},
    {"sectors/req", 12, 2, "", "sectors_per_request", 4, NULL, 0, kit_col_sectors, NULL},
    {"bytes used", 12, 0, "%", NULL, 0, NULL, 0, col_bytes_used, NULL},
    {NULL, 0, 0, NULL, "load_efficiency", 4, NULL, 0, col_efficiency, NULL},
};

/* The default matrix: the smallest power of two n whose n x n floats are at
 * least four L2s, from 1,024 up, and no more than a quarter of free memory. */
static unsigned int default_matrix(const kit_device *d)
{
    unsigned long long n = 1024;
    while ((n * n * 4) < 4ull * (unsigned long long)d->l2_bytes && (2 * n) * (2 * n) * 4 * 4 < (unsigned long long)d->free_bytes)
        n *= 2;
    return (unsigned int)n;
}

struct lab {
    kit_run run;
    int iterations, only_stride, matrix_n; /* the options; matrix_n from the GPU where not given */
    unsigned int n;                        /* elements per array */
    double over_l2;                        /* A, B and C together over the L2 */
    kit_vecadd v;
    kit_row rows[2 + 16]; /* Part 1's table: full, non, the strides */
    int nrows;
    kit_row streaming[3]; /* the one-pass vector add, cudaMemcpy, the copy kernel */
    own_timing own;       /* TODO(5) */
    double speedup;       /* non over full */
    double expect_non;    /* segments per request of reads at random */
    vec_table vx;
    kit_table part1, stream_table;
    kit_row sums[3]; /* Part 2's table: row_sums, column_sums, row_sums_coalesced */
    kit_table part2;
};

/* A check that failed: why, on stderr after the program's name; the run fails. */
static void fail(lab *L, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", kit_program);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    L->run.pass = 0;
}

static void setup(lab *L)
{
    L->n = kit_vecadd_size(L->run.c.size, &L->run.dev);
    if (!L->matrix_n)
        L->matrix_n = (int)default_matrix(&L->run.dev);
}

static void facts(lab *L)
{
    kit_kv("size", "%u", L->n);
    kit_kv("working-set-bytes", "%zu", 3 * L->v.bytes);
    kit_kv("working-set-over-l2", "%.2f", L->over_l2);
    kit_kv("matrix", "%d", L->matrix_n);
    kit_kv("iterations", "%d", L->iterations);
}

/* Part 1: the course's two kernels, the stride sweep, streaming against
 * the copies, and between them the student's own timing (TODO(5)). */
static void part1_measure(lab *L)
{
    kit_row *rows = L->rows, *sm = L->streaming;
    const kit_policy *policy = &L->run.policy;
    vec_run r = {FULL, &L->v, L->iterations, kit_np(L->n), 0, L->run.c.seed};
    unsigned int only = (unsigned)L->only_stride; /* --stride: that stride alone */

    kit_vecadd_setup(&L->v, L->n, L->run.c.seed);
    L->over_l2 = 3.0 * L->v.bytes / L->run.dev.l2_bytes;
    kit_row_name(&rows[L->nrows], "full", "TODO(1) and TODO(3)", "full_coalesced_access");
    measure_vec(&r, &rows[L->nrows++], policy, 1);
    r.kind = NON;
    kit_row_name(&rows[L->nrows], "non", "TODO(2) and TODO(3)", "non_coalesced_access");
    measure_vec(&r, &rows[L->nrows++], policy, 1);
    r.kind = STRIDED;
    for (unsigned int s = only ? only : 1; s <= (only ? only : MAX_STRIDE); s *= 2) {
        char key[24];
        snprintf(key, sizeof key, "stride-%u", s);
        r.stride = s;
        kit_row_name(&rows[L->nrows], key, NULL, "strided_access s=%u", s);
        measure_vec(&r, &rows[L->nrows++], policy, 1);
    }
    r.kind = FULL;
    r.iterations = 1;
    kit_row_name(&sm[0], "stream", "TODO(1) and TODO(3)", "full_coalesced_access, 1 iteration");
    measure_vec(&r, &sm[0], policy, 0);
    /* TODO(5), left out under --focus (the grader's timed runs). */
    if (!kit_focus)
        L->own = time_it_yourself(&r, &rows[0], L->iterations);
    kit_row_name(&sm[1], "copy", NULL, "cudaMemcpy device to device");
    measure_kit(&sm[1], copy_d2d, &r, policy);
    kit_row_name(&sm[2], "copy-kernel", NULL, "copy kernel (kit)");
    measure_kit(&sm[2], copy_by_kernel, &r, policy);
    kit_vecadd_teardown(&L->v);

    L->speedup = rows[0].timed && rows[1].timed ? rows[1].t.median_ms / rows[0].t.median_ms : 0.0;
    L->expect_non = kit_expected_distinct(((double)L->n + 31) / 32);
    vec_table vx = {&rows[0], &sm[0], (double)L->v.bytes, L->iterations};
    kit_table t1 = {"kernel", 26, rows, L->nrows, vec_columns, KIT_COUNT(vec_columns), &L->vx};
    kit_table ts = {"kernel", 26, sm, 3, stream_columns, KIT_COUNT(stream_columns), &L->vx};
    L->vx = vx;
    L->part1 = t1;
    L->stream_table = ts;
}

static void part1_print(lab *L)
{
    const kit_row *rows = L->rows, *sm = L->streaming;
    const own_timing *own = &L->own;
    const char *st = own_state(own);

    printf("Part 1: %s floats per array, %.1f MiB each: A, B and C together are %.1fx the L2\n",
           kit_grouped(L->n), L->v.bytes / 1048576.0, L->over_l2);
    printf("%d iterations per thread, seed %llu; times are medians of steady runs\n\n", L->iterations,
           L->run.c.seed);
    kit_table_print(&L->part1);
    printf("\nstreaming, each element read once:\n");
    if (sm[0].timed)
        printf("  %-36s %8.3f ms %8.0f GB/s  %s\n", "vector add (A, B read, C written)", sm[0].t.median_ms,
               col_stream_gbs(&sm[0], &L->vx), kit_row_check_word(&sm[0]));
    else
        printf("  %-36s %8s    %8s       %s\n", "vector add (A, B read, C written)", "-", "-",
               kit_row_check_word(&sm[0]));
    for (int i = 1; i < 3; i++)
        printf("  %-36s %8.3f ms %8.0f GB/s\n", sm[i].name, sm[i].t.median_ms, col_stream_gbs(&sm[i], &L->vx));
    if (sm[0].timed)
        printf("  the vector add reaches %.0f%% of cudaMemcpy's bandwidth, %.0f%% of the copy kernel's\n",
               100.0 * col_of_copy(&sm[1], &L->vx), 100.0 * col_of_copy(&sm[2], &L->vx));
    if (own->iterations)
        printf("\nyour own timing (TODO(5)): full_coalesced_access, %d iterations, median of %d:\n"
               "  you measured %.3f ms, the kit %.3f ms (%.2fx)%s%s\n", own->iterations, OWN_TIMING_REPS,
               own->own_ms, own->kit_ms, own->kit_ms > 0 ? own->own_ms / own->kit_ms : 0.0,
               !strcmp(st, "no-time")      ? ": no time (see below)"
               : !strcmp(st, "not-judged") ? ": not compared: "
               : !strcmp(st, "agrees")     ? ": they agree"
                                           : ": they do not agree (see below)",
               !strcmp(st, "not-judged") ? own->why : "");
    printf("\ncourse, Tesla K40: 14.9x at 32,768 floats and 52.2x at 4,194,304 floats;\n"
           "1.00 against 30.6 and 31.1 transactions per request.\n");
    if (L->speedup > 0)
        printf("this GPU: %.1fx at %s floats; %.2f against %.2f segments per request.\n", L->speedup,
               kit_grouped(L->n), kit_row_segments(&rows[0]), kit_row_segments(&rows[1]));
}

static void part1_csv(lab *L, FILE *f) { kit_table_csv(f, &L->part1, &L->run.dev, L->n, L->run.c.seed, 1); }

static void part1_kv(lab *L)
{
    const own_timing *own = &L->own;

    kit_table_kv(&L->part1);
    kit_table_kv(&L->stream_table);
    kit_kv("speedup-non-vs-full", "%.2f", L->speedup);
    kit_kv("expected-segments-per-request-non", "%.4f", L->expect_non);
    if (own->iterations) {
        kit_kv("own-timing-iterations", "%d", own->iterations);
        kit_kv("own-timing-ms", "%.4f", own->own_ms);
        kit_kv("own-timing-kit-ms", "%.4f", own->kit_ms);
        kit_kv("own-timing-kit-before-ms", "%.4f", own->kit_before_ms);
        kit_kv("own-timing-kit-after-ms", "%.4f", own->kit_after_ms);
    }
    kit_kv("own-timing", "%s", own_state(own));
}

/*
 * Every element of every result right in every run, the loops as long as
 * asked, the access patterns the student wrote as they must look from the
 * memory system's side, and the student's own timing as long as the kit's.
 */
static void part1_verdict(lab *L)
{
    const kit_row *rows = L->rows;
    const own_timing *own = &L->own;
    const char *st = own_state(own);
    double ratio = own->own_ms / own->kit_ms; /* the student's time over the kit's */
    unsigned int n = L->n;
    int iterations = L->iterations, whole_warps = 1;

    for (int i = 0; i < L->nrows; i++)
        L->run.pass &= kit_row_ok(&rows[i], n);
    L->run.pass &= kit_row_ok(&L->streaming[0], n);
    for (int i = 0; i < 2; i++) {
        unsigned long long want = 2ull * iterations * n, got = rows[i].counts.c[KIT_LD_LANES];
        if (rows[i].wrong == 0 && got != want)
            fail(L, "%s: its threads made %llu loads, but %d iterations of A[x] + B[x] for %u elements make "
                    "%llu: one thread per element, each reading A and B once per iteration (%s)\n",
                 rows[i].name, got, iterations, n, want, rows[i].todo);
    }
    /* TODO(3): blocks of whole warps. Where every block is a whole number
     * of warps, only the warps that hold elements make requests, each with
     * all its lanes but the last warp's: 2 x iterations x ceil(n / 32)
     * load requests. A block of 48 threads has a warp of 16 in every block. */
    for (int i = 0; i < 2; i++) {
        unsigned long long warps = ((unsigned long long)n + 31) / 32, want = 2ull * iterations * warps,
                           got = rows[i].counts.c[KIT_LD_REQUESTS];
        if (rows[i].wrong == 0 && rows[i].counts.c[KIT_LD_LANES] == 2ull * iterations * n && got != want) {
            fail(L, "%s: %llu load requests, but %llu warps of 32 threads would make %llu (%.1f of 32 lanes "
                    "per request): a block that is not a whole number of warps leaves a part-empty warp in "
                    "every block, each request of it a whole warp's cost (TODO(3))\n",
                 rows[i].name, got, warps, want, kit_per(&rows[i].counts, KIT_LD_LANES, KIT_LD_REQUESTS));
            whole_warps = 0;
        }
    }
    if (whole_warps && rows[0].wrong == 0 && rows[0].counts.c[KIT_LD_SEGMENTS] != rows[0].counts.c[KIT_LD_REQUESTS])
        fail(L, "full_coalesced_access: %.2f segments per request, not 1: the warp's threads do not read "
                "one 128-byte segment (TODO(1))\n", kit_row_segments(&rows[0]));
    if (!strcmp(st, "not-judged"))
        fprintf(stderr, "%s: note: time_full_coalesced_ms is not compared with the kit's figure: %s (TODO(5))\n",
                kit_program, own->why);
    if (n < RANDOM_CHECK_MIN_SIZE)
        fprintf(stderr, "%s: note: at %u elements the random pattern is not judged (from %d on it is)\n",
                kit_program, n, RANDOM_CHECK_MIN_SIZE);
    else if (rows[1].wrong == 0 && fabs(kit_row_segments(&rows[1]) - L->expect_non) > 0.05 * L->expect_non)
        fail(L, "non_coalesced_access: %.2f segments per request, but %.2f are expected when each thread "
                "picks a random element of the whole array (TODO(2))\n", kit_row_segments(&rows[1]), L->expect_non);
    if (!strcmp(st, "no-time"))
        fail(L, "time_full_coalesced_ms returned %g ms: no time at all (the kit measured %.3f ms for the same "
                "launch): is the time read once the stop event is reached (cudaEventSynchronize)? Before that "
                "cudaEventElapsedTime returns cudaErrorNotReady and writes no time (TODO(5))\n",
             own->own_ms, own->kit_ms);
    else if (!strcmp(st, "disagrees"))
        fail(L, "time_full_coalesced_ms: %.3f ms, but the kit measured %.3f ms for the same launch (%.2fx; "
                "from %.2fx to %.2fx agree): %s (TODO(5))\n",
             own->own_ms, own->kit_ms, ratio, OWN_TIMING_LOW, OWN_TIMING_HIGH,
             ratio < OWN_TIMING_LOW
                 ? "less than the kernel takes: does the host read the time before the kernel has ended "
                   "(cudaEventSynchronize), or do both events come before the launch?"
                 : "more than the kernel takes: does each timed span hold something else (the first "
                   "launch, creating the events, a copy), or is it not the median?");
}

/* Part 2: the row and column sums of an n x n matrix. */
static void part2_measure(lab *L)
{
    matrix_run m;
    kit_row *sums = L->sums;

    matrix_setup(&m, (unsigned int)L->matrix_n, L->run.c.seed);
    kit_row_name(&sums[0], "row-sums", NULL, "row_sums");
    measure_matrix(&m, ROWS, &sums[0], &L->run.policy);
    kit_row_name(&sums[1], "column-sums", NULL, "column_sums");
    measure_matrix(&m, COLUMNS, &sums[1], &L->run.policy);
    kit_row_name(&sums[2], "row-sums-coalesced", "TODO(4)", "row_sums_coalesced");
    measure_matrix(&m, ROWS_COALESCED, &sums[2], &L->run.policy);
    matrix_teardown(&m);
    kit_table t = {"kernel", 26, sums, 3, sum_columns, KIT_COUNT(sum_columns), NULL};
    L->part2 = t;
}

static void part2_print(lab *L)
{
    int n = L->matrix_n;
    printf("\nPart 2: sums of a %s x %s matrix of floats (%.1f MiB)\n\n", kit_grouped(n), kit_grouped(n),
           (double)n * n * 4 / 1048576.0);
    kit_table_print(&L->part2);
    printf("\n");
}

static void part2_csv(lab *L, FILE *f) { kit_table_csv(f, &L->part2, &L->run.dev, L->matrix_n, L->run.c.seed, 0); }

static void part2_kv(lab *L)
{
    const kit_row *sums = L->sums;
    kit_table_kv(&L->part2);
    if (sums[0].timed && sums[2].timed)
        kit_kv("speedup-row-sums-coalesced", "%.2f", sums[0].t.median_ms / sums[2].t.median_ms);
}

/* Every sum right in every run, and row_sums_coalesced's loads using the
 * sectors they touch. */
static void part2_verdict(lab *L)
{
    const kit_row *sums = L->sums;
    for (int i = 0; i < 3; i++)
        L->run.pass &= kit_row_ok(&sums[i], (unsigned)L->matrix_n);
    if (sums[2].wrong == 0 && kit_row_load_efficiency(&sums[2]) < MIN_ROW_SUMS_EFFICIENCY)
        fail(L, "row_sums_coalesced: its loads use %.0f%% of the bytes of the sectors they touch (row_sums: "
                "%.0f%%); coalesced loads use at least %.0f%% (TODO(4))\n", 100.0 * kit_row_load_efficiency(&sums[2]),
             100.0 * kit_row_load_efficiency(&sums[0]), 100.0 * MIN_ROW_SUMS_EFFICIENCY);
}

static void summary(lab *L)
{
    kit_kv("summary", "coalesced %.1fx faster than random at %s floats; %.2f against %.2f "
                      "segments per request",
           L->speedup, kit_grouped(L->n), kit_row_segments(&L->rows[0]), kit_row_segments(&L->rows[1]));
    kit_kv("course-k40", "coalesced 52.2x faster than random at 4,194,304 floats (14.9x at "
                         "32,768); 1.00 against 31.09 transactions per request");
}

static const kit_part parts[] = {
    {part1_measure, part1_print, part1_csv, part1_kv, part1_verdict},
    {part2_measure, part2_print, part2_csv, part2_kv, part2_verdict},
};

int main(int argc, char **argv)
{
    static lab L;
    kit_option opts[] = {
        KIT_LAB_OPTIONS(&L.run.c),
        {"--iterations", KIT_OPT_INT, &L.iterations, "I", "loop count inside each kernel (course: 100)",
         1, 100000, NULL},
        {"--stride", KIT_OPT_INT, &L.only_stride, "S",
         "run only this stride instead of the sweep 1, 2, 4, ..., 32", 1, 1024, NULL},
        {"--matrix", KIT_OPT_INT, &L.matrix_n, "N",
         "part 2: an N x N matrix (default: from the GPU's L2)", 32, 32768, NULL},
    };
    const kit_lab lab01 = {
        "01-coalescing", "Lab 01: coalesced access to global memory",
        "Lab 01: coalesced access to global memory. Times the course's coalesced,\n"
        "random and strided vector additions and the row and column sums of a matrix,\n"
        "counts the 128-byte segments and 32-byte sectors each warp request touches,\n"
        "and checks every result.",
        opts, KIT_COUNT(opts), NULL, setup, NULL, facts, summary, NULL, parts, KIT_COUNT(parts),
    };
    kit_run_defaults(&L.run);
    L.iterations = ITERATIONS;
    return kit_lab_main(&lab01, &L, &L.run, argc, argv);
}
