/*
 * Lab 06: shared memory - transpose, bank conflicts, pitched arrays - the
 * harness. The student's file: labs/06-shared-memory/shared-memory.cu; the
 * handout: handouts/06-shared-memory.md.
 *
 * Part 1, the transpose of an n x n float matrix (sized from the L2):
 *   copy              the kit's: reads rows, writes rows (the ceiling);
 *   transpose_naive   given (its launch the student's): reads rows, writes
 *                     columns;
 *   transpose_shared  the student's: through a 32 x 32 tile in shared memory;
 *   transpose_padded  the student's: a tile whose columns are conflict-free.
 * Each is counted (segments per global request, wavefronts per shared
 * request: the passes the 32 banks need), checked element by element, and
 * timed until the median is steady, each timed run checked again.
 *
 * Part 2, the bank rules of today's GPUs measured: one warp reads a shared
 * array of floats or doubles with several strides, and a broadcast.
 *
 * Part 3, pitched arrays: a matrix whose row (1,000 floats) is no multiple
 * of 128 bytes, read row by row from a plain allocation and from one made
 * by cudaMallocPitch and filled by cudaMemcpy2D: the pitch the runtime
 * chose, and what it does to segments per request.
 */
#include "kit_host.h"
#include "kit_rng.h"
#include "kit_table.h"

typedef struct lab lab; /* the lab's state, below */
#define KIT_LAB_STATE lab
#include "kit_lab.h"

#include "contract.h"
#include "kit_student.h"

#define TILE 32
#define ROWS 8
#define PITCH_COLS 1000 /* 4,000 bytes a row: no multiple of 128 */

static const kit_student_api *timed = &kit_student_timed;
static const kit_student_api *counted = &kit_student_counted;

/* ---- the kit's kernels ---------------------------------------------------- */

/* NVIDIA's copy for the transpose study: the same tiles and threads, rows
 * read and rows written. Built plain and counting, like the student's. */
template <typename In, typename Out>
__global__ void tile_copy(In in, Out out, unsigned int n)
{
    unsigned int x = blockIdx.x * TILE + threadIdx.x;
    unsigned int y = blockIdx.y * TILE + threadIdx.y;
    for (unsigned int j = 0; j < TILE; j += ROWS)
        if (x < n && y + j < n)
            out[(size_t)(y + j) * n + x] = in[(size_t)(y + j) * n + x];
}

/* One warp reads a shared array with a stride (in elements of T), or all
 * lanes one element (stride 0): the wavefronts of that one request. */
template <typename S, typename T>
__global__ void bank_pattern(float *sink, unsigned int stride)
{
    __shared__ S buf[4096 / sizeof(T)];
    unsigned int lane = threadIdx.x;
    for (unsigned int i = lane; i < 4096 / sizeof(T); i += 32)
        buf[i] = (T)i;
    __syncwarp();
    T v = buf[(lane * stride) % (4096 / sizeof(T))];
    sink[lane] = (float)v;
}

/* ---- Part 1: the transposes ---------------------------------------------------- */

enum kind { COPY, NAIVE, SHARED, PADDED };

typedef struct {
    enum kind kind;
    unsigned int n;
    size_t bytes;
    float *d_in, *d_out, *d_keep;
    float *in, *out; /* host */
    kit_counter counter;
    unsigned long long seed; /* of in */
} tr_run;

/* Elements of out that are not in transposed (or copied), on the device. */
static __global__ void transposed_differ(const float *in, const float *out, unsigned int n, int copy,
                                         unsigned long long *bad)
{
    unsigned long long local = 0, all = (unsigned long long)n * n;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < all;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned long long row = i / n, col = i % n;
        local += !(out[i] == (copy ? in[i] : in[col * n + row]));
    }
    if (local)
        atomicAdd(bad, local);
}

static void tr_launch(tr_run *r, int counting)
{
    const kit_student_api *api = counting ? counted : timed;
    dim3 block(TILE, ROWS), grid((r->n + TILE - 1) / TILE, (r->n + TILE - 1) / TILE);
    switch (r->kind) {
    case COPY:
        if (counting)
            tile_copy<kit_counted_ptr<const float>, kit_counted_ptr<float> ><<<grid, block>>>(r->d_in, r->d_out, r->n);
        else
            tile_copy<const float *, float *><<<grid, block>>>(r->d_in, r->d_out, r->n);
        break;
    case NAIVE: api->launch_transpose_naive(r->d_in, r->d_out, r->n); break;
    case SHARED: api->launch_transpose_shared(r->d_in, r->d_out, r->n); break;
    case PADDED: api->launch_transpose_padded(r->d_in, r->d_out, r->n); break;
    }
}

static kit_counts tr_counted(void *p)
{
    tr_run *r = (tr_run *)p;
    kit_counter_reset(&r->counter, NULL, 0);
    if (r->kind == COPY)
        kit_count_configure_here(&r->counter.cfg);
    else
        counted->configure_counting(&r->counter.cfg);
    tr_launch(r, 1);
    KIT_CHECK_LAUNCH();
    return kit_counter_read(&r->counter);
}

static void tr_timed(void *p) { tr_launch((tr_run *)p, 0); }

static void tr_poison(void *p)
{
    tr_run *r = (tr_run *)p;
    KIT_CHECK(cudaMemset(r->d_out, 0xff, r->bytes));
}

static void tr_keep(void *p)
{
    tr_run *r = (tr_run *)p;
    KIT_CHECK(cudaMemcpy(r->d_keep, r->d_out, r->bytes, cudaMemcpyDeviceToDevice));
}

static long long tr_compare(void *p)
{
    tr_run *r = (tr_run *)p;
    return kit_device_differ(r->d_out, r->d_keep, r->bytes);
}

static long long tr_check_range(unsigned long long b, unsigned long long e, void *p, unsigned long long *first)
{
    const tr_run *r = (const tr_run *)p;
    long long bad = 0;
    for (unsigned long long i = b; i < e; i++) {
        unsigned long long row = i / r->n, col = i % r->n;
        float want = r->kind == COPY ? r->in[i] : r->in[col * r->n + row];
        if (r->out[i] != want && bad++ == 0)
            *first = i;
    }
    return bad;
}

static long long tr_verify(void *p, const kit_row *row)
{
    tr_run *r = (tr_run *)p;
    unsigned long long first, i, j;
    long long bad;

    KIT_CHECK(cudaMemcpy(r->out, r->d_out, r->bytes, cudaMemcpyDeviceToHost));
    bad = kit_parallel_check((unsigned long long)r->n * r->n, tr_check_range, r, &first);
    if (bad) {
        i = first / r->n;
        j = first % r->n;
        fprintf(stderr, "%s: %s: out[%llu][%llu] = %.9g but in[%llu][%llu] = %.9g\n", kit_program, row->name, i,
                j, r->out[first], r->kind == COPY ? i : j, r->kind == COPY ? j : i,
                r->kind == COPY ? r->in[first] : r->in[j * r->n + i]);
    }
    return bad;
}

/* Timed runs with a matrix of their own, checked on the device. */
static void tr_refresh(void *p, unsigned long long draw)
{
    tr_run *r = (tr_run *)p;
    kit_fill_uniform(r->d_in, (unsigned long long)r->n * r->n, kit_row_draw_seed(r->seed, draw));
}

static long long tr_check(void *p)
{
    tr_run *r = (tr_run *)p;
    static unsigned long long *bad;
    unsigned long long h = 0;
    if (!bad)
        KIT_CHECK(cudaMalloc((void **)&bad, sizeof *bad));
    KIT_CHECK(cudaMemset(bad, 0, sizeof *bad));
    transposed_differ<<<1024, 256>>>(r->d_in, r->d_out, r->n, r->kind == COPY, bad);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaMemcpy(&h, bad, sizeof h, cudaMemcpyDeviceToHost));
    return (long long)h;
}

static void tr_restore(void *p)
{
    tr_run *r = (tr_run *)p;
    kit_fill_uniform(r->d_in, (unsigned long long)r->n * r->n, r->seed);
}

static void measure_tr(tr_run *r, enum kind kind, kit_row *row, const kit_policy *policy)
{
    kit_row_work w = {r, tr_counted, tr_timed, tr_poison, tr_verify, tr_keep, tr_compare, tr_refresh, tr_check, tr_restore};
    r->kind = kind;
    kit_row_measure(row, &w, policy);
}

static double sh_wavefronts(const kit_row *r, int store)
{
    return store ? kit_per(&r->counts, KIT_SH_ST_WAVEFRONTS, KIT_SH_ST_REQUESTS)
                 : kit_per(&r->counts, KIT_SH_LD_WAVEFRONTS, KIT_SH_LD_REQUESTS);
}

static double st_segments(const kit_row *r) { return kit_per(&r->counts, KIT_ST_SEGMENTS, KIT_ST_REQUESTS); }

/* ---- Part 2: the bank rules ------------------------------------------------------ */

typedef struct {
    const char *name, *key;
    int is_double;
    unsigned int stride;
    double expect;
    double wavefronts;
} bank_case;

static void measure_banks(bank_case *cases, int ncases, kit_counter *k, float *sink)
{
    for (int i = 0; i < ncases; i++) {
        kit_counts c;
        kit_counter_reset(k, NULL, 0);
        kit_count_configure_here(&k->cfg);
        if (cases[i].is_double)
            bank_pattern<kit_shared<double>, double><<<1, 32>>>(sink, cases[i].stride);
        else
            bank_pattern<kit_shared<float>, float><<<1, 32>>>(sink, cases[i].stride);
        KIT_CHECK_LAUNCH();
        c = kit_counter_read(k);
        cases[i].wavefronts = kit_per(&c, KIT_SH_LD_WAVEFRONTS, KIT_SH_LD_REQUESTS);
    }
}

/* ---- Part 3: pitched arrays ---------------------------------------------------------- */

/* Its two rows, plain and pitched: a kit_row each (name, key, counts,
 * wrong elements), counted, checked and timed here, not by
 * kit_row_measure; beside each, its pitch and median time. A row's
 * counted and timed stay 0: its own key: value line is wrong-elements-KEY,
 * and Part 3's columns give the rest. */
typedef struct {
    unsigned int nrows; /* of the matrix */
    kit_row rows[2];
    size_t bytes[2];
    double ms[2];
} pitch_part;

/* The student's scale_rows (TODO(4)): out = 2 * in, rows pitch floats apart. */
typedef struct {
    const float *in;
    float *out;
    unsigned int rows, cols, pitch;
    size_t pitch_bytes;
} scale_job;

static void scale_timed(void *p)
{
    const scale_job *j = (const scale_job *)p;
    timed->launch_scale_rows(j->in, j->out, j->rows, j->cols, j->pitch);
}

static void scale_poison(void *p)
{
    const scale_job *j = (const scale_job *)p;
    KIT_CHECK(cudaMemset2D(j->out, j->pitch_bytes, 0xff, j->cols * sizeof(float), j->rows));
}

static void measure_pitch(pitch_part *P, int pitched, const float *host, float *back, kit_counter *k,
                          const kit_policy *policy)
{
    kit_row *pr = &P->rows[pitched];
    unsigned int rows = P->nrows, cols = PITCH_COLS;
    float *d_in, *d_out;
    size_t pitch;

    if (pitched) {
        KIT_CHECK(cudaMallocPitch((void **)&d_in, &pitch, cols * sizeof(float), rows));
        KIT_CHECK(cudaMallocPitch((void **)&d_out, &pitch, cols * sizeof(float), rows));
    } else {
        pitch = cols * sizeof(float);
        KIT_CHECK(cudaMalloc((void **)&d_in, pitch * rows));
        KIT_CHECK(cudaMalloc((void **)&d_out, pitch * rows));
    }
    P->bytes[pitched] = pitch;
    KIT_CHECK(cudaMemcpy2D(d_in, pitch, host, cols * sizeof(float), cols * sizeof(float), rows,
                           cudaMemcpyHostToDevice));
    unsigned int p = (unsigned int)(pitch / sizeof(float));
    scale_job job = {d_in, d_out, rows, cols, p, pitch};

    kit_counter_reset(k, NULL, 0);
    counted->configure_counting(&k->cfg);
    counted->launch_scale_rows(d_in, d_out, rows, cols, p);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaDeviceSynchronize());
    pr->counts = kit_counter_read(k);

    /* Checked, then timed: every timed run checked too. */
    scale_poison(&job);
    scale_timed(&job);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaDeviceSynchronize());
    KIT_CHECK(cudaMemcpy2D(back, cols * sizeof(float), d_out, pitch, cols * sizeof(float), rows,
                           cudaMemcpyDeviceToHost));
    pr->wrong = 0;
    for (size_t i = 0; i < (size_t)rows * cols; i++)
        if (back[i] != 2.0f * host[i] && pr->wrong++ == 0)
            fprintf(stderr, "%s: %s: scale_rows: element %zu (row %zu, column %zu) is %.9g, not %.9g: row r "
                            "starts pitch = %u floats after row r - 1 (TODO(4))\n",
                    kit_program, pr->name, i, i / cols, i % cols, back[i], 2.0f * host[i], p);
    {
        /* Each timed run is poisoned first (not timed) and left for the
         * check below; the median is of steady runs, as everywhere. */
        kit_work w = {scale_poison, scale_timed, NULL, &job, 0.0f, 0};
        const kit_policy q = kit_policy_for(policy, pr->key);
        P->ms[pitched] = kit_measure(&w, &q).median_ms;
    }
    KIT_CHECK(cudaMemcpy2D(back, cols * sizeof(float), d_out, pitch, cols * sizeof(float), rows,
                           cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < (size_t)rows * cols; i++)
        if (back[i] != 2.0f * host[i] && pr->wrong++ == 0)
            fprintf(stderr, "%s: %s: a timed run left element %zu at %.9g\n", kit_program, pr->name, i, back[i]);
    KIT_CHECK(cudaFree(d_in));
    KIT_CHECK(cudaFree(d_out));
}

/* ---- the lab, declared once (kit_lab.h) ------------------------------------------------ */

/* The default matrix: the smallest power of two n whose input and output
 * together are at least 8 L2s (from 1,024 up), within a quarter of the
 * free memory. */
static unsigned int default_n(const kit_device *d)
{
    unsigned long long n = 1024;
    while (2 * n * n * 4 < 8ull * (unsigned long long)d->l2_bytes && 2 * (2 * n) * (2 * n) * 4 * 4 < (unsigned long long)d->free_bytes)
        n *= 2;
    return (unsigned int)n;
}

/* Part 1's table, declared once: what each column shows, in the table, the
 * CSV and the key: value lines (kit_table.h). */
typedef struct {
    double bytes;    /* moved by one transpose: read and written */
    double copy_gbs; /* the copy's bandwidth, the ceiling */
} tr_table;

static double tr_gbs(const kit_row *r, const tr_table *x)
{
    return r->timed ? x->bytes / (r->t.median_ms * 1e6) : NAN;
}
static double col_gbs(const kit_row *r, const void *x) { return tr_gbs(r, (const tr_table *)x); }
static double col_of_copy(const kit_row *r, const void *x)
{
    const tr_table *t = (const tr_table *)x;
    return !r->timed ? NAN : t->copy_gbs > 0 ? tr_gbs(r, t) / t->copy_gbs : 0.0;
}
static double col_percent_of_copy(const kit_row *r, const void *x) { return 100.0 * col_of_copy(r, x); }
static double col_st_segments(const kit_row *r, const void *) { return st_segments(r); }
static double col_sh_store(const kit_row *r, const void *) { return sh_wavefronts(r, 1); }
static double col_sh_load(const kit_row *r, const void *) { return sh_wavefronts(r, 0); }
static int has_shared(const kit_row *r, const void *) { return r->counts.c[KIT_SH_LD_REQUESTS] != 0; }

static const kit_column tr_columns[] = {
    {"time (ms)", 10, 3, "", "time_ms", 6, NULL, 0, kit_col_time, NULL},
    {"GB/s", 9, 0, "", "gbs", 2, "bandwidth-%s-gbs", 1, col_gbs, NULL},
    {"of copy", 8, 0, "%", NULL, 0, NULL, 0, col_percent_of_copy, NULL},
    {NULL, 0, 0, NULL, NULL, 0, "fraction-of-copy-%s", 3, col_of_copy, NULL},
    {"ld seg/req", 10, 2, "", "load_segments_per_request", 4, NULL, 0, kit_col_segments, NULL},
    {"st seg/req", 10, 2, "", "store_segments_per_request", 4, NULL, 0, col_st_segments, NULL},
    {"sh st wf", 10, 2, "", "shared_store_wavefronts", 4, "shared-store-wavefronts-per-request-%s", 4,
     col_sh_store, has_shared},
    {"sh ld wf", 10, 2, "", "shared_load_wavefronts", 4, "shared-load-wavefronts-per-request-%s", 4,
     col_sh_load, has_shared},
};

/* Part 3's table, declared once (kit_table.h). */
static int pitch_index(const kit_row *r, const void *x) { return (int)(r - ((const pitch_part *)x)->rows); }
static double col_pitch_bytes(const kit_row *r, const void *x) { return (double)((const pitch_part *)x)->bytes[pitch_index(r, x)]; }
static double col_pitch_ms(const kit_row *r, const void *x) { return ((const pitch_part *)x)->ms[pitch_index(r, x)]; }

static const kit_column pitch_columns[] = {
    {"pitch (B)", 12, 0, "", NULL, 0, "pitch-bytes-%s", 0, col_pitch_bytes, NULL},
    {"time (ms)", 10, 3, "", NULL, 0, "time-%s-ms", 4, col_pitch_ms, NULL},
    {"ld seg/req", 12, 2, "", NULL, 0, "segments-per-request-%s", 4, kit_col_segments, NULL},
    {"st seg/req", 12, 2, "", NULL, 0, NULL, 0, col_st_segments, NULL},
};

struct lab {
    kit_run run;
    int n_opt;
    unsigned int n;
    tr_run r;
    kit_row rows[4];
    tr_table tx;
    kit_table table;
    bank_case banks[8];
    pitch_part pitch;
    kit_table pitch_table;
};

static void setup(lab *L)
{
    const kit_device *d = &L->run.dev;
    L->n = L->n_opt ? (unsigned int)L->n_opt : default_n(d);
    if ((long long)(3ull * L->n * L->n * 4 + (64ull << 20)) > d->free_bytes)
        kit_die(KIT_EXIT_USAGE, "--matrix %u needs %.0f MiB of GPU memory but %s has %.0f MiB free", L->n,
                3.0 * L->n * L->n * 4 / 1048576.0, d->name, d->free_bytes / 1048576.0);
    kit_counter_create(&L->r.counter, 0, 0);
}

/* Part 1: the copy and the three transposes, counted, checked, timed. */
static void part1_measure(lab *L)
{
    tr_run *r = &L->r;
    unsigned int n = L->n;
    r->n = n;
    r->bytes = (size_t)n * n * sizeof(float);
    KIT_CHECK(cudaMalloc((void **)&r->d_in, r->bytes));
    KIT_CHECK(cudaMalloc((void **)&r->d_out, r->bytes));
    KIT_CHECK(cudaMalloc((void **)&r->d_keep, r->bytes));
    r->in = (float *)kit_host_alloc(r->bytes);
    r->out = (float *)kit_host_alloc(r->bytes);
    r->seed = L->run.c.seed;
    kit_fill_uniform(r->d_in, (unsigned long long)n * n, r->seed);
    KIT_CHECK(cudaMemcpy(r->in, r->d_in, r->bytes, cudaMemcpyDeviceToHost));
    kit_row_name(&L->rows[0], "copy", NULL, "copy (kit)");
    measure_tr(r, COPY, &L->rows[0], &L->run.policy);
    kit_row_name(&L->rows[1], "naive", "TODO(3)", "transpose_naive");
    measure_tr(r, NAIVE, &L->rows[1], &L->run.policy);
    kit_row_name(&L->rows[2], "shared", "TODO(1) and TODO(3)", "transpose_shared");
    measure_tr(r, SHARED, &L->rows[2], &L->run.policy);
    kit_row_name(&L->rows[3], "padded", "TODO(2) and TODO(3)", "transpose_padded");
    measure_tr(r, PADDED, &L->rows[3], &L->run.policy);
    KIT_CHECK(cudaFree(r->d_in));
    KIT_CHECK(cudaFree(r->d_out));
    KIT_CHECK(cudaFree(r->d_keep));
    free(r->in);
    free(r->out);

    L->tx.bytes = 2.0 * n * n * 4;
    L->tx.copy_gbs = L->rows[0].timed ? L->tx.bytes / (L->rows[0].t.median_ms * 1e6) : 0.0;
    kit_table t = {"kernel", 20, L->rows, 4, tr_columns, KIT_COUNT(tr_columns), &L->tx};
    L->table = t;
}

static void part1_print(lab *L)
{
    unsigned int n = L->n;
    printf("Part 1: a %s x %s matrix of floats (%.0f MiB in, the same out: %.1fx the L2), seed %llu\n\n",
           kit_grouped(n), kit_grouped(n), n * (double)n * 4 / 1048576.0, L->tx.bytes / L->run.dev.l2_bytes,
           L->run.c.seed);
    kit_table_print(&L->table);
    printf("(seg/req: 128-byte segments per global request; wf: wavefronts per shared request,\n"
           "the passes the 32 banks need: 1 without a conflict, up to 32)\n\n");
}

static void part1_csv(lab *L, FILE *f)
{
    kit_table_csv(f, &L->table, &L->run.dev, L->n, L->run.c.seed, 1);
}

static void part1_kv(lab *L)
{
    kit_kv("matrix", "%u", L->n);
    kit_table_kv(&L->table);
    if (L->rows[1].timed && L->rows[3].timed)
        kit_kv("speedup-padded-over-naive", "%.2f", L->rows[1].t.median_ms / L->rows[3].t.median_ms);
}

/* Every element right in every run; each element read and written once
 * (TODO(3)); both halves coalesced; the plain tile conflicted and the
 * padded one not. */
static void part1_verdict(lab *L)
{
    const kit_row *rows = L->rows;
    unsigned int n = L->n;
    int once = 1;
    for (int i = 0; i < 4; i++)
        if (!kit_row_ok(&rows[i], (unsigned long long)n * n))
            L->run.pass = 0;
    /* TODO(3): a block per tile, shaped for the kernels' loop over j: every
     * element read once and written once. Blocks of TILE x TILE threads
     * move each element TILE / ROWS times. */
    for (int i = 1; i < 4; i++) {
        const kit_row *x = &rows[i];
        unsigned long long all = (unsigned long long)n * n, rd = x->counts.c[KIT_LD_LANES],
                           wr = x->counts.c[KIT_ST_LANES];
        if (x->wrong == 0 && (rd != all || wr != all)) {
            fprintf(stderr, "%s: %s: its threads read %llu and wrote %llu elements of the %llu (%.2f and %.2f "
                            "times each): a block moves one tile, each element once: does the block have the "
                            "shape the loop over j expects (TODO(3))?\n",
                    kit_program, x->name, rd, wr, all, (double)rd / all, (double)wr / all);
            once = 0;
            L->run.pass = 0;
        }
    }
    for (int i = 2; i < 4 && once; i++) {
        const kit_row *x = &rows[i];
        double limit = n % TILE == 0 ? 1.0 : 2.0;
        if (x->wrong == 0 && (kit_row_segments(x) > limit + 1e-9 || st_segments(x) > limit + 1e-9)) {
            fprintf(stderr, "%s: %s: %.2f segments per load and %.2f per store request, not %s: both halves must be "
                            "coalesced (%s)\n", kit_program, x->name, kit_row_segments(x), st_segments(x),
                    n % TILE == 0 ? "1" : "2 at most", x->todo);
            L->run.pass = 0;
        }
    }
    if (rows[2].wrong == 0 && sh_wavefronts(&rows[2], 0) <= 1.0) {
        fprintf(stderr, "%s: transpose_shared reads its tile without a bank conflict: keep TODO(1) the plain %d x %d "
                        "tile, so that the padding of TODO(2) shows\n", kit_program, TILE, TILE);
        L->run.pass = 0;
    }
    if (rows[3].wrong == 0 && (sh_wavefronts(&rows[3], 0) != 1.0 || sh_wavefronts(&rows[3], 1) != 1.0)) {
        fprintf(stderr, "%s: transpose_padded: %.2f wavefronts per shared load and %.2f per store, not 1: a column "
                        "of the tile must fall in 32 different banks (TODO(2))\n",
                kit_program, sh_wavefronts(&rows[3], 0), sh_wavefronts(&rows[3], 1));
        L->run.pass = 0;
    }
}

/* Part 2: the bank rules, one warp, one request each. */
static const bank_case bank_cases[] = {
    {"float, stride 1", "float-1", 0, 1, 1, 0},
    {"float, stride 2", "float-2", 0, 2, 2, 0},
    {"float, stride 32 (a column)", "float-32", 0, 32, 32, 0},
    {"float, stride 33", "float-33", 0, 33, 1, 0},
    {"float, one word (broadcast)", "float-0", 0, 0, 1, 0},
    {"double, stride 1", "double-1", 1, 1, 2, 0},
    {"double, stride 2", "double-2", 1, 2, 4, 0},
    {"double, stride 16 (a column)", "double-16", 1, 16, 32, 0},
};

static void part2_measure(lab *L)
{
    float *sink;
    memcpy(L->banks, bank_cases, sizeof bank_cases);
    KIT_CHECK(cudaMalloc((void **)&sink, 32 * sizeof(float)));
    measure_banks(L->banks, KIT_COUNT(bank_cases), &L->r.counter, sink);
    KIT_CHECK(cudaFree(sink));
}

static void part2_print(lab *L)
{
    printf("Part 2: the bank rules of compute capability 5.0 and later, one warp, one request\n\n");
    printf("%-32s %12s %10s  %s\n", "access", "wavefronts", "expected", "check");
    for (int i = 0; i < KIT_COUNT(bank_cases); i++)
        printf("%-32s %12.0f %10.0f  %s\n", L->banks[i].name, L->banks[i].wavefronts, L->banks[i].expect,
               L->banks[i].wavefronts == L->banks[i].expect ? "ok" : "DIFFERS");
    printf("(32 banks of 4 bytes for a whole warp; lanes reading one word share it; 8-byte\n"
           "accesses are served a half-warp at a time: at least 2 wavefronts)\n\n");
}

static void part2_kv(lab *L)
{
    char key[64];
    for (int i = 0; i < KIT_COUNT(bank_cases); i++) {
        snprintf(key, sizeof key, "bank-wavefronts-%s", L->banks[i].key);
        kit_kv(key, "%.0f", L->banks[i].wavefronts);
    }
}

/* Part 3: enough rows for four L2s, at least 4,096, and at most 65,535: a
 * launch with a block row per matrix row (a grid's y) reaches no further,
 * and an L2 of 72 MB or more would ask for more. */
static void part3_measure(lab *L)
{
    unsigned int prow = (unsigned int)((4ull * L->run.dev.l2_bytes) / (PITCH_COLS * 4));
    float *phost, *pback;
    if (prow < 4096)
        prow = 4096;
    if (prow > 65535)
        prow = 65535;
    if (L->n_opt && prow > 4096)
        prow = 4096; /* a chosen (small) matrix: a small pitched part too */
    L->pitch.nrows = prow;
    kit_row_name(&L->pitch.rows[0], "plain", NULL, "cudaMalloc, rows packed");
    kit_row_name(&L->pitch.rows[1], "pitched", NULL, "cudaMallocPitch");
    phost = (float *)kit_host_alloc((size_t)prow * PITCH_COLS * 4);
    pback = (float *)kit_host_alloc((size_t)prow * PITCH_COLS * 4);
    for (size_t i = 0; i < (size_t)prow * PITCH_COLS; i++)
        phost[i] = (float)((i * 2654435761u + L->run.c.seed) % 1000) * 0.25f;
    measure_pitch(&L->pitch, 0, phost, pback, &L->r.counter, &L->run.policy);
    measure_pitch(&L->pitch, 1, phost, pback, &L->r.counter, &L->run.policy);
    free(phost);
    free(pback);
    kit_table t = {"allocation", 26, L->pitch.rows, 2, pitch_columns, KIT_COUNT(pitch_columns), &L->pitch};
    L->pitch_table = t;
}

static void part3_print(lab *L)
{
    printf("Part 3: %s rows of %d floats (%d bytes: no multiple of 128), each doubled into a second array\n\n",
           kit_grouped(L->pitch.nrows), PITCH_COLS, PITCH_COLS * 4);
    kit_table_print(&L->pitch_table);
    printf("\ncourse (notes 003): 16 banks served per half-warp on compute capability 1.x;\n"
           "this GPU: 32 banks for the whole warp, as measured in part 2.\n\n");
}

static void part3_kv(lab *L) { kit_table_kv(&L->pitch_table); }

static void part3_verdict(lab *L)
{
    for (int i = 0; i < 2; i++)
        if (L->pitch.rows[i].wrong)
            L->run.pass = 0;
}

static void summary(lab *L)
{
    const kit_row *rows = L->rows;
    if (rows[0].timed && rows[3].timed)
        kit_kv("summary", "padded tile %.0f%% of the copy's bandwidth, naive %.0f%%; %.0f against %.0f wavefronts per "
                          "shared load request without and with padding",
               100.0 * rows[0].t.median_ms / rows[3].t.median_ms,
               rows[1].timed ? 100.0 * rows[0].t.median_ms / rows[1].t.median_ms : 0.0, sh_wavefronts(&rows[2], 0),
               sh_wavefronts(&rows[3], 0));
    kit_kv("course-notes", "compute capability 1.x: 16 banks, conflicts within a half-warp");
}

static void teardown(lab *L) { kit_counter_destroy(&L->r.counter); }

static const kit_part parts[] = {
    {part1_measure, part1_print, part1_csv, part1_kv, part1_verdict},
    {part2_measure, part2_print, NULL, part2_kv, NULL},
    {part3_measure, part3_print, NULL, part3_kv, part3_verdict},
};

int main(int argc, char **argv)
{
    static lab L;
    kit_common *c = &L.run.c;
    kit_option opts[] = {
        {"--matrix", KIT_OPT_INT, &L.n_opt, "N", "transpose an N x N matrix (default: from the GPU's L2)", 32, 32768, NULL},
        {"--reps", KIT_OPT_INT, &c->reps, "R", "timed runs of each kernel (default: until the median is steady)", 1,
         1000, NULL},
        {"--seed", KIT_OPT_U64, &c->seed, "S", "random seed (default: a fresh one, printed)", 0, 0, &c->seed_given},
        KIT_FOCUS_OPTION,
        {"--csv", KIT_OPT_STRING, &c->csv, "FILE", "also write the table as CSV ('-': stdout)", 0, 0, NULL},
        {"--device", KIT_OPT_INT, &c->device, "D", "which GPU to use", 0, 63, NULL},
    };
    const kit_lab lab06 = {
        "06-shared-memory",
        "Lab 06: shared memory - transpose, bank conflicts, pitched arrays",
        "Lab 06: shared memory. Transposes a matrix naively, through a tile in shared\n"
        "memory, and through a padded tile, against a copy; counts segments per global\n"
        "request and bank conflicts per shared request; measures the bank rules and what\n"
        "a pitched allocation does to rows that are no multiple of 128 bytes.",
        opts, KIT_COUNT(opts), NULL, setup, NULL, NULL, summary, teardown, parts, KIT_COUNT(parts),
    };
    kit_run_defaults(&L.run);
    return kit_lab_main(&lab06, &L, &L.run, argc, argv);
}
