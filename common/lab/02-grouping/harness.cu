/*
 * Lab 02: grouping - semi-coalesced access and its trade-off - the harness.
 * The student's file: labs/02-grouping/grouping.cu; the handout:
 * handouts/02-grouping.md.
 *
 * Between the two extremes of Lab 01 (Dülger, Oğuztüzün and Demirekler,
 * "Memory Coalescing Implementation of Metropolis Resampling on GPU",
 * J Sign Process Syst 90, 2018): global memory is cut into groups of G
 * consecutive 128-byte segments; each warp picks one group at random, then
 * every thread of the warp reads random elements inside it. G = 1 is the
 * coalesced extreme, G = n/32 the random one.
 *
 * The sweep runs G = 1, 2, 4, ... and stops timing once two G in a row are
 * within 30% of the random kernel (--all times every G). For each G: the
 * median time against the kit's coalesced and random kernels, segments and
 * sectors per request from the counting build against G(1 - (1 - 1/G)^32),
 * the reach of a warp; every element of C is checked, every warp must read
 * inside one group, and the warps' groups must be spread at random. Last,
 * the student's prediction of the largest G that stays within 2x of
 * coalesced (TODO(2)) beside the sweep's answer.
 */
#include <limits.h>

#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_report.h"
#include "kit_rng.h"
#include "kit_row.h"
#include "kit_table.h"
#include "kit_timing.h"
#include "kit_vecadd.h"

typedef struct lab lab; /* the lab's state, below */
#define KIT_LAB_STATE lab
#include "kit_lab.h"

#include "contract.h"
#include "kit_student.h"

#define ITERATIONS 100 /* the course's loop count */
#define THREADS_PER_BLOCK 1024
#define FLOATS_PER_SEGMENT (KIT_SEGMENT_BYTES / sizeof(float))
/* A G whose time is within this share of random's is "like random". */
#define LIKE_RANDOM 1.30
/* "Close to coalesced": the prediction of TODO(2) is about this factor. */
#define FAST_FACTOR 2.0
#define MAX_ROWS 32

static const kit_student_api *timed = &kit_student_timed;
static const kit_student_api *counted = &kit_student_counted;

/* ---- the kit's yardsticks: the course's two extremes ------------------------ */

template <typename In, typename Out>
__global__ void kit_coalesced_access(In A, In B, Out C, unsigned int n, int iterations)
{
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n)
        return;
    for (int i = 0; i < iterations; i++)
        C[tid] = A[tid] + B[tid];
}

template <typename In, typename Out>
__global__ void kit_random_access(In A, In B, Out C, unsigned int n, int iterations, unsigned int np,
                                  unsigned long long seed)
{
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    kit_rng s;
    if (tid >= n)
        return;
    kit_rng_thread(&s, seed, tid);
    for (int i = 0; i < iterations; i++) {
        unsigned int x = kit_map_to_range(curand(&s), np);
        C[tid] = A[x] + B[x];
    }
}

/* ---- one run of the sweep --------------------------------------------------- */

enum kind { COALESCED, RANDOM, SEMI };

typedef struct {
    enum kind kind;
    kit_vecadd *v;
    struct grouping g;
    int iterations;
    unsigned long long seed;
} run_t;

static void launch(const run_t *r, int counting)
{
    const kit_vecadd *v = r->v;
    unsigned int blocks = (v->n + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK;
    typedef kit_counted_ptr<const float> cin;
    typedef kit_counted_ptr<float> cout_;

    switch (r->kind) {
    case COALESCED:
        if (counting)
            kit_coalesced_access<cin, cout_><<<blocks, THREADS_PER_BLOCK>>>(v->dA, v->dB, v->dC, v->n, r->iterations);
        else
            kit_coalesced_access<const float *, float *>
                <<<blocks, THREADS_PER_BLOCK>>>(v->dA, v->dB, v->dC, v->n, r->iterations);
        break;
    case RANDOM:
        if (counting)
            kit_random_access<cin, cout_><<<blocks, THREADS_PER_BLOCK>>>(v->dA, v->dB, v->dC, v->n,
                                                                       r->iterations, kit_np(v->n), r->seed);
        else
            kit_random_access<const float *, float *><<<blocks, THREADS_PER_BLOCK>>>(
                v->dA, v->dB, v->dC, v->n, r->iterations, kit_np(v->n), r->seed);
        break;
    case SEMI: {
        /* The student's kernel, launched as the course does. */
        const float *a = v->dA, *b = v->dB;
        float *c = v->dC;
        unsigned int n = v->n;
        int iterations = r->iterations;
        struct grouping g = r->g;
        unsigned long long seed = r->seed;
        void *args[] = {(void *)&a, (void *)&b, (void *)&c, (void *)&n, (void *)&iterations, (void *)&g,
                        (void *)&seed};
        KIT_CHECK(cudaLaunchKernel((counting ? kit_kernels_counted : kit_kernels_timed)[KIT_KERNEL_semi_coalesced_access],
                                   dim3(blocks), dim3(THREADS_PER_BLOCK), args, 0, 0));
        break;
    }
    }
}

static kit_counts run_counted(void *p)
{
    run_t *r = (run_t *)p;
    kit_vecadd_count_begin(r->v, r->kind == SEMI ? counted->configure_counting : kit_count_configure_here,
                           r->kind != COALESCED);
    launch(r, 1);
    KIT_CHECK_LAUNCH();
    return kit_counter_read(&r->v->counter);
}

static void run_timed(void *p) { launch((run_t *)p, 0); }
static void run_poison(void *p) { kit_vecadd_poison(((run_t *)p)->v); }
static void run_keep(void *p) { kit_vecadd_keep(((run_t *)p)->v); }
static long long run_compare(void *p) { return kit_vecadd_compare(((run_t *)p)->v); }

static unsigned long long own_index(unsigned long long i, const void *) { return i; }

static long long run_verify(void *p, const kit_row *row)
{
    run_t *r = (run_t *)p;
    return kit_vecadd_check(r->v, r->kind == COALESCED ? own_index : NULL, r, row->name);
}

/* Timed runs with inputs of their own, checked on the device (the random
 * and grouped kernels' indices: the counting run's record). */
static void run_refresh(void *p, unsigned long long draw) { kit_vecadd_refresh(((run_t *)p)->v, draw); }
static void run_restore(void *p) { kit_vecadd_restore(((run_t *)p)->v); }
static long long run_check(void *p)
{
    run_t *r = (run_t *)p;
    return kit_vecadd_check_device(r->v, r->kind == COALESCED ? KIT_INDEX_OWN : KIT_INDEX_RECORDED, 0);
}

static struct grouping grouping_for(unsigned int n, unsigned int segments_per_group)
{
    struct grouping g;
    g.group_elems = segments_per_group * FLOATS_PER_SEGMENT;
    g.group_count = n / g.group_elems;
    g.np_group = kit_np(g.group_elems);
    g.np_groups = kit_np64(g.group_count);
    return g;
}

/*
 * The grouping itself, from the indices the counting run recorded: every
 * index a warp's threads read, from each thread's lowest to its highest,
 * lies in one group, and the warps' groups are spread over the array as
 * random picks would be. Returns the share of groups some warp picked (0
 * when a warp broke the rule, with the reason on stderr).
 */
static double check_groups(const kit_vecadd *v, struct grouping g, unsigned int G)
{
    const kit_counter *k = &v->counter;
    unsigned char *picked = (unsigned char *)kit_host_alloc(g.group_count);
    unsigned long long warps = 0, distinct = 0;
    double expected;

    memset(picked, 0, g.group_count);
    for (unsigned int w = 0; w * 32ull < v->n; w++) {
        unsigned int first = w * 32, group = kit_record_lowest(k, first) / g.group_elems;
        for (unsigned int i = first; i < first + 32 && i < v->n; i++) {
            unsigned int lo = kit_record_lowest(k, i), hi = kit_record_highest(k, i);
            unsigned int x = lo / g.group_elems != group ? lo : hi, y = kit_record_lowest(k, first);
            if (lo == UINT_MAX)
                fprintf(stderr, "%s: G=%u: thread %u read no element of A (TODO(1))\n", kit_program, G, i);
            else if (x / g.group_elems == group && group < g.group_count)
                continue;
            else if (group >= g.group_count || x / g.group_elems >= g.group_count)
                fprintf(stderr,
                        "%s: G=%u: warp %u read element %u, in group %u, but there are %u groups of %u elements: "
                        "draw the group in [0, %u) (TODO(1))\n",
                        kit_program, G, w, group >= g.group_count ? y : x,
                        (group >= g.group_count ? y : x) / g.group_elems, g.group_count, g.group_elems,
                        g.group_count);
            else
                fprintf(stderr,
                        "%s: G=%u: warp %u read element %u (group %u) and, in thread %u, element %u (group %u), "
                        "of %u groups of %u elements: a warp must stay in one group, every iteration (TODO(1))\n",
                        kit_program, G, w, y, group, i, x, x / g.group_elems, g.group_count, g.group_elems);
            free(picked);
            return 0.0;
        }
        distinct += !picked[group];
        picked[group] = 1;
        warps++;
    }
    free(picked);
    /* K groups, W warps picking at random: K (1 - (1 - 1/K)^W) distinct. */
    expected = g.group_count * (1.0 - pow(1.0 - 1.0 / g.group_count, (double)warps));
    if (g.group_count > 1 && distinct < 0.9 * expected) {
        fprintf(stderr,
                "%s: G=%u: the warps picked only %llu distinct groups of %u, but random picks give "
                "about %.0f: is each warp's group drawn at random, from a stream of its own? (TODO(1))\n",
                kit_program, G, distinct, g.group_count, expected);
        return 0.0;
    }
    return (double)distinct / g.group_count;
}

/* ---- the prediction (TODO(2)) ------------------------------------------------ */

/* An SM's L1 data cache with its shared memory, by compute capability
 * (CUDA C++ Programming Guide, "Compute Capabilities"); for others, the
 * largest shared memory per SM plus the 28 KiB the newer parts keep. */
static unsigned int l1_bytes_for(const kit_device *d)
{
    static const struct { int major, minor; unsigned int kib; } known[] = {
        {7, 0, 128}, {7, 2, 128}, {7, 5, 96}, {8, 0, 192}, {8, 6, 128},
        {8, 7, 192}, {8, 9, 128}, {9, 0, 256}, {10, 0, 256}, {12, 0, 128},
    };
    for (int i = 0; i < KIT_COUNT(known); i++)
        if (known[i].major == d->cc_major && known[i].minor == d->cc_minor)
            return known[i].kib * 1024;
    return (unsigned int)d->smem_per_sm + 28 * 1024;
}

/*
 * The kit's own answer to TODO(2), for the check. "Fit together" has two
 * honest readings where the groups fill the L1 exactly (an H100: 64 warps
 * x 2 arrays x 16 segments x 128 B = 256 KiB; an RTX 3090 the same way):
 * `<=` (filling it still fits) and `<` (a cache that is exactly full has
 * no room for anything else). strict picks `<`.
 */
static unsigned int model_largest_group(struct l1_facts f, int strict)
{
    unsigned int blocks = f.max_threads_per_sm / f.threads_per_block, g = 0;
    unsigned long long per_g, next;
    if (blocks > f.max_blocks_per_sm)
        blocks = f.max_blocks_per_sm;
    per_g = (unsigned long long)blocks * (f.threads_per_block / 32) * f.arrays * f.segment_bytes;
    for (;;) {
        next = per_g * (g ? 2 * g : 1);
        if (strict ? next >= f.l1_bytes : next > f.l1_bytes)
            return g;
        g = g ? 2 * g : 1;
    }
}

/*
 * Checks the student's prediction against the model on this GPU and on
 * others' figures (so that a constant does not pass), under either reading
 * of a tie, the same reading throughout. Returns 1 if all agree.
 */
static int check_prediction(struct l1_facts here, unsigned int predicted)
{
    static const struct other_gpu { const char *gpu; struct l1_facts f; } others[] = {
        {"a Turing T4", {96 * 1024, 1024, 16, THREADS_PER_BLOCK, 128, 2}},
        {"an Ampere A100", {192 * 1024, 2048, 32, THREADS_PER_BLOCK, 128, 2}},
        {"an Ampere RTX 3090", {128 * 1024, 1536, 16, THREADS_PER_BLOCK, 128, 2}},
        {"an Ada RTX 4090 with 512-thread blocks", {128 * 1024, 1536, 24, 512, 128, 2}},
        /* The block limit binds: 16 blocks of one warp, not 32. */
        {"a Turing T4 with 32-thread blocks", {96 * 1024, 1024, 16, 32, 128, 2}},
        {"a GPU whose L1 holds only 24 KiB", {24 * 1024, 2048, 32, THREADS_PER_BLOCK, 128, 2}},
        {"an H100 reading three arrays", {256 * 1024, 2048, 32, THREADS_PER_BLOCK, 128, 3}},
        {"an H100", {256 * 1024, 2048, 32, THREADS_PER_BLOCK, 128, 2}},
    };
    unsigned int got[sizeof others / sizeof(struct other_gpu)];
    int strict;

    for (int i = 0; i < KIT_COUNT(others); i++)
        got[i] = timed->largest_cached_group(others[i].f);
    for (strict = 0; strict <= 1; strict++) {
        int agree = predicted == model_largest_group(here, strict);
        for (int i = 0; agree && i < KIT_COUNT(others); i++)
            agree = got[i] == model_largest_group(others[i].f, strict);
        if (agree)
            return 1;
    }
    /* Name the first disagreement with the reading this GPU's answer suggests. */
    strict = predicted != model_largest_group(here, 0) && predicted == model_largest_group(here, 1);
    if (predicted != model_largest_group(here, strict)) {
        fprintf(stderr, "%s: largest_cached_group: %u for this GPU, but the model gives %u (TODO(2))\n",
                kit_program, predicted, model_largest_group(here, 0));
        return 0;
    }
    for (int i = 0; i < KIT_COUNT(others); i++) {
        unsigned int want = model_largest_group(others[i].f, strict);
        if (got[i] != want) {
            fprintf(stderr, "%s: largest_cached_group: %u for %s (L1 %u KiB, %u threads and %u blocks per "
                            "SM, %u threads per block, %u arrays), but the model gives %u%s (TODO(2))\n",
                    kit_program, got[i], others[i].gpu, others[i].f.l1_bytes / 1024,
                    others[i].f.max_threads_per_sm, others[i].f.max_blocks_per_sm,
                    others[i].f.threads_per_block, others[i].f.arrays, want,
                    strict ? " (reading \"fit\" as less than the L1, as your answer for this GPU does)" : "");
            return 0;
        }
    }
    return 0;
}

/* ---- the lab, declared once (kit_lab.h) ------------------------------------------- */

/* The sweep's rows, in one array: the kit's two kernels, then G = 1, 2, 4,
 * ... (or the one G asked for). */
enum { FULL, NON, FIRST_G };

struct lab {
    kit_run run;
    int iterations, only_g, all;
    unsigned int n, max_g, predicted, largest_fast, skipped_from;
    struct l1_facts l1; /* what the prediction of TODO(2) may use */
    kit_vecadd v;
    kit_row rows[FIRST_G + MAX_ROWS];
    int ng; /* rows of G; from skipped_from on, none */
    /* Beside each row: its G; the segments per request 32 random lanes
     * touch, G(1 - (1 - 1/G)^32); the share of the array one warp can read;
     * the share of groups some warp picked (0: the grouping is wrong). */
    unsigned int gs[FIRST_G + MAX_ROWS];
    double expect[FIRST_G + MAX_ROWS], reach[FIRST_G + MAX_ROWS], coverage[FIRST_G + MAX_ROWS];
    double t_full, t_non, g1_vs_full;
    int arithmetic_bound;
    kit_table sweep; /* the rows of G */
};

/* The sweep's table, declared once: what each column shows in the table,
 * the CSV and the key: value lines (kit_table.h). The table for people
 * also has a line for each of the kit's kernels, around the rows of G,
 * blank in a column the kernel has no use for (coalesced against itself). */
static const lab *lab_of(const void *x) { return (const lab *)x; }
static int index_of(const kit_row *r, const void *x) { return (int)(r - lab_of(x)->rows); }
static int is_g(const kit_row *r, const void *x) { return index_of(r, x) >= FIRST_G; }
static int not_full(const kit_row *r, const void *x) { return index_of(r, x) != FULL; }

/* A G not timed (its results were wrong) has no time; the kit's kernels
 * show theirs as they ran, and nothing against themselves (blank). */
static double col_time(const kit_row *r, const void *x) { return r->timed || !is_g(r, x) ? r->t.median_ms : NAN; }
static double col_vs_full(const kit_row *r, const void *x) { return not_full(r, x) ? col_time(r, x) / lab_of(x)->t_full : 0; }
static double col_non_vs(const kit_row *r, const void *x) { return is_g(r, x) ? lab_of(x)->t_non / col_time(r, x) : 0; }
static double col_expect(const kit_row *r, const void *x) { return lab_of(x)->expect[index_of(r, x)]; }
static double col_reach(const kit_row *r, const void *x) { return lab_of(x)->reach[index_of(r, x)]; }
static double col_reach_percent(const kit_row *r, const void *x) { return 100.0 * col_reach(r, x); }
static double col_picked(const kit_row *r, const void *x) { return lab_of(x)->coverage[index_of(r, x)]; }

static const kit_column sweep_columns[] = {
    {"time (ms)", 11, 3, "", "time_ms", 6, NULL, 0, col_time, NULL},
    {"semi/coal", 10, 2, "x", "semi_vs_coalesced", 4, "semi-vs-full-%s", 3, col_vs_full, not_full},
    {"rand/semi", 10, 2, "x", "random_vs_semi", 4, "non-vs-semi-%s", 3, col_non_vs, is_g},
    {"segments/req", 13, 2, "", "segments_per_request", 4, NULL, 0, kit_col_segments, NULL},
    {"expected", 10, 2, "", "expected_segments", 4, "expected-segments-per-request-%s", 4, col_expect, NULL},
    {"sectors/req", 11, 2, "", "sectors_per_request", 4, NULL, 0, kit_col_sectors, NULL},
    {"warp reach", 12, 5, "%", NULL, 0, NULL, 0, col_reach_percent, not_full},
    {NULL, 0, 0, NULL, "warp_reach", 8, "warp-reach-%s", 8, col_reach, NULL},
    {NULL, 0, 0, NULL, NULL, 0, "groups-picked-%s", 4, col_picked, NULL},
};

/* A row of G is labelled with its G (its name is for messages); it is
 * WRONG also where C was right but the warps broke the grouping, and only
 * a timed G has a line in the CSV, correct where the grouping is right. */
static void g_label(const kit_row *r, const void *x, char *text, size_t size)
{
    snprintf(text, size, "%u", lab_of(x)->gs[index_of(r, x)]);
}
static const char *g_check(const kit_row *r, const void *x)
{
    return r->wrong == 0 && col_picked(r, x) == 0.0 ? "WRONG" : kit_row_check_word(r);
}
static int g_grouped(const kit_row *r, const void *x) { return col_picked(r, x) > 0.0; }
static int g_timed(const kit_row *r, const void *) { return r->timed; }

/* G must be a power of two: said before the GPU is opened. */
static int prepare(lab *L)
{
    if (L->only_g & (L->only_g - 1))
        kit_die(KIT_EXIT_USAGE, "--segments-per-group %d: G must be a power of two (1, 2, 4, ...)", L->only_g);
    return -1;
}

/* The size from the GPU, the largest G it holds, the arrays; then the
 * prediction first: the student makes it before seeing the sweep. */
static void setup(lab *L)
{
    const kit_device *d = &L->run.dev;
    unsigned int n = L->n = kit_vecadd_size(L->run.c.size, d);
    struct l1_facts l1 = {l1_bytes_for(d), (unsigned int)d->max_threads_per_sm, (unsigned int)d->max_blocks_per_sm,
                          THREADS_PER_BLOCK, KIT_SEGMENT_BYTES, 2 /* arrays: A and B */};

    L->max_g = (unsigned int)kit_pow2_floor(n / FLOATS_PER_SEGMENT);
    if (L->max_g == 0 || (L->only_g && (unsigned int)L->only_g > n / FLOATS_PER_SEGMENT))
        kit_die(KIT_EXIT_USAGE,
                "--segments-per-group %d: a group cannot be larger than the array, %u segments of 32 "
                "floats at --size %u",
                L->only_g ? L->only_g : 1, n / (unsigned int)FLOATS_PER_SEGMENT, n);
    kit_vecadd_setup(&L->v, n, L->run.c.seed);
    L->l1 = l1;
    L->predicted = timed->largest_cached_group(l1);
}

/* ---- Part 1: the sweep, between the two extremes ---------------------------------- */

/* The two extremes, then G = 1, 2, 4, ...: counted, checked, timed, and
 * the grouping checked from the counting run's record. Once two G in a
 * row are within LIKE_RANDOM of random, the rest holds no news: not run
 * (--all runs it). */
static void part1_measure(lab *L)
{
    unsigned int G = L->only_g ? (unsigned int)L->only_g : 1, last = L->only_g ? G : L->max_g;
    int like_random = 0;
    run_t r;
    kit_row_work w = {&r, run_counted, run_timed, run_poison, run_verify, run_keep, run_compare,
                      run_refresh, run_check, run_restore};

    memset(&r, 0, sizeof r);
    r.v = &L->v;
    r.iterations = L->iterations;
    r.seed = L->run.c.seed;
    r.kind = COALESCED;
    kit_row_name(&L->rows[FULL], "full", NULL, "coalesced (kit)");
    kit_row_measure(&L->rows[FULL], &w, &L->run.policy);
    r.kind = RANDOM;
    kit_row_name(&L->rows[NON], "non", NULL, "random (kit)");
    kit_row_measure(&L->rows[NON], &w, &L->run.policy);
    L->t_full = L->rows[FULL].t.median_ms;
    L->t_non = L->rows[NON].t.median_ms;
    L->expect[FULL] = 1.0;
    L->expect[NON] = kit_expected_distinct((L->n + 31.0) / 32);
    L->reach[NON] = L->coverage[FULL] = L->coverage[NON] = 1.0;

    r.kind = SEMI;
    for (int i = FIRST_G; G <= last; i++, G *= 2) {
        char key[24];
        if (like_random >= 2 && !L->all) {
            L->skipped_from = G;
            break;
        }
        snprintf(key, sizeof key, "g-%u", G);
        kit_row_name(&L->rows[i], key, "TODO(1)", "semi_coalesced_access G=%u", G);
        r.g = grouping_for(L->n, G);
        L->gs[i] = G;
        L->reach[i] = (double)r.g.group_elems / L->n;
        L->expect[i] = kit_expected_distinct(G);
        kit_row_measure(&L->rows[i], &w, &L->run.policy);
        L->coverage[i] = L->rows[i].wrong == 0 ? check_groups(&L->v, r.g, G) : 1.0;
        if (L->rows[i].timed) {
            like_random = L->rows[i].t.median_ms * LIKE_RANDOM >= L->t_non ? like_random + 1 : 0;
            if (L->rows[i].t.median_ms <= FAST_FACTOR * L->t_full)
                L->largest_fast = G;
        }
        L->ng++;
    }
    kit_vecadd_teardown(&L->v);
    kit_table t = {"G (segments)", 12, &L->rows[FIRST_G], L->ng, sweep_columns, KIT_COUNT(sweep_columns), L,
                   g_label, g_check, g_grouped, g_timed, "segments_per_group", ""};
    L->sweep = t;

    /* Where G = 1 (one segment per request, like coalesced) already takes
     * more than FAST_FACTOR times the coalesced kernel, the grouped kernel
     * is bound by its random-number arithmetic, not by memory (few SMs
     * against the memory's bandwidth: a small share of a GPU under MPS):
     * no G can be "close to coalesced", and the sweep cannot show where the
     * groups stop fitting in L1. Said, not judged (Part 2). */
    if (L->gs[FIRST_G] == 1 && L->rows[FIRST_G].timed)
        L->g1_vs_full = L->rows[FIRST_G].t.median_ms / L->t_full;
    L->arithmetic_bound = !L->only_g && L->g1_vs_full > FAST_FACTOR;
}

/* A bar for the chart: where t sits between lo and hi, on a log scale. */
static void print_bar(double t, double lo, double hi, int width)
{
    double f = (t <= lo || hi <= lo) ? 0.0 : log(t / lo) / log(hi / lo);
    int len = (int)(f * width + 0.5);
    if (len > width)
        len = width;
    for (int i = 0; i < width; i++)
        putchar(i < len ? '#' : (i == width - 1 ? '|' : ' '));
}

/* The table: coalesced, the G run, the G not run, random; then a chart. */
static void part1_print(lab *L)
{
    printf("%s floats per array (%.1f MiB each), %d iterations per thread, seed %llu\n\n", kit_grouped(L->n),
           L->v.bytes / 1048576.0, L->iterations, L->run.c.seed);
    kit_table_head(&L->sweep);
    kit_table_line(&L->sweep, &L->rows[FULL], "coalesced");
    for (int i = FIRST_G; i < FIRST_G + L->ng; i++)
        kit_table_line(&L->sweep, &L->rows[i], NULL);
    if (L->skipped_from)
        printf("%-12s %11s  G = %u to %u not timed: two G in a row were within %.0f%% of random (--all "
               "times them)\n", "...", "", L->skipped_from, L->max_g, 100.0 * (LIKE_RANDOM - 1.0));
    kit_table_line(&L->sweep, &L->rows[NON], "random");
    printf("\nwarp reach: the share of the array one warp can read (G segments out of %u).\n\n",
           L->n / (unsigned int)FLOATS_PER_SEGMENT);
    printf("time against G, log scale: empty = coalesced (%.3f ms), full = random (%.3f ms)\n", L->t_full, L->t_non);
    for (int i = FIRST_G; i < FIRST_G + L->ng; i++)
        if (L->rows[i].timed) {
            printf("  G=%-9u ", L->gs[i]);
            print_bar(L->rows[i].t.median_ms, L->t_full, L->t_non, 50);
            printf(" %.3f ms\n", L->rows[i].t.median_ms);
        }
}

/* A line per timed G (kit_table.h). */
static void part1_csv(lab *L, FILE *f) { kit_table_csv(f, &L->sweep, &L->run.dev, L->n, L->run.c.seed, 1); }

static void part1_kv(lab *L)
{
    kit_kv("size", "%u", L->n);
    kit_kv("working-set-over-l2", "%.2f", 3.0 * L->v.bytes / L->run.dev.l2_bytes);
    kit_kv("iterations", "%d", L->iterations);
    kit_kv("max-segments-per-group", "%u", L->max_g);
    kit_kv("l1-bytes", "%u", L->l1.l1_bytes);
    kit_row_kv(&L->rows[FULL]);
    kit_row_kv(&L->rows[NON]);
    kit_kv("speedup-non-vs-full", "%.2f", L->t_non / L->t_full);
    kit_table_kv(&L->sweep);
    if (L->skipped_from)
        kit_kv("not-timed-from-segments-per-group", "%u", L->skipped_from);
}

/* Right results in every run, every warp in one group, groups spread at
 * random, G's share of distinct segments per request, the loop as long as
 * asked. */
static void part1_verdict(lab *L)
{
    unsigned int n = L->n;
    unsigned long long want = 2ull * L->iterations * n;
    if (!(kit_row_ok(&L->rows[FULL], n) && kit_row_ok(&L->rows[NON], n)))
        L->run.pass = 0;
    for (int i = FIRST_G; i < FIRST_G + L->ng; i++) {
        const kit_row *row = &L->rows[i];
        if (!kit_row_ok(row, n) || L->coverage[i] == 0.0) {
            L->run.pass = 0;
            continue;
        }
        if (row->counts.c[KIT_LD_LANES] != want) {
            fprintf(stderr, "%s: %s: its threads made %llu loads, but %d iterations of A[x] + B[x] for %u "
                            "elements make %llu: one thread per element, A and B read once per iteration "
                            "(TODO(1))\n",
                    kit_program, row->name, row->counts.c[KIT_LD_LANES], L->iterations, n, want);
            L->run.pass = 0;
        }
        if (fabs(kit_row_segments(row) - L->expect[i]) > 0.05 * L->expect[i]) {
            fprintf(stderr, "%s: G=%u: %.2f segments per request, but 32 random lanes in a group of %u segments "
                            "touch %.2f on average (TODO(1))\n",
                    kit_program, L->gs[i], kit_row_segments(row), L->gs[i], L->expect[i]);
            L->run.pass = 0;
        }
    }
}

/* ---- Part 2: the prediction (TODO(2)) against the sweep -------------------------- */

static void part2_print(lab *L)
{
    printf("\nyour prediction (TODO(2)): G up to %u stays within %.0fx of coalesced (L1 %u KiB per SM)\n",
           L->predicted, FAST_FACTOR, L->l1.l1_bytes / 1024);
    if (L->arithmetic_bound)
        printf("the sweep: none; G=1 already takes %.1fx the coalesced time: on this GPU (%d SMs) the\n"
               "grouped kernel is bound by its random-number arithmetic, not by memory, so the sweep\n"
               "cannot show where the groups stop fitting in L1 (compare G with G=1 instead)\n",
               L->g1_vs_full, L->run.dev.sms);
    else if (!L->only_g)
        printf("the sweep: the largest G within %.0fx of coalesced is %u\n", FAST_FACTOR, L->largest_fast);
    printf("\ncourse, Tesla K40, G=16: 4,194,304 floats: coalesced 9.96 ms, semi 221.4 ms, random 516.6 ms\n"
           "(semi/coalesced 22.2x, random/semi 2.3x); 13.41 transactions per request.\n\n");
}

static void part2_kv(lab *L)
{
    kit_kv("predicted-largest-fast-group", "%u", L->predicted);
    if (!L->only_g)
        kit_kv("measured-largest-fast-group", "%u", L->largest_fast);
    if (L->arithmetic_bound)
        kit_kv("sweep-hidden", "G=1 already takes %.1fx the coalesced time: with %d SMs the grouped kernel is "
                               "bound by its random-number arithmetic, not by memory",
               L->g1_vs_full, L->run.dev.sms);
}

static void part2_verdict(lab *L)
{
    if (!check_prediction(L->l1, L->predicted))
        L->run.pass = 0;
}

/* G = 16 beside the K40's figures at the course's size. */
static void summary(lab *L)
{
    for (int i = FIRST_G; i < FIRST_G + L->ng; i++)
        if (L->gs[i] == 16 && L->rows[i].timed)
            kit_kv("summary", "G=16 at %s floats: semi %.1fx the coalesced time, random %.1fx the semi time; "
                              "%.2f segments per request; largest G within 2x of coalesced: %u (predicted %u)",
                   kit_grouped(L->n), col_vs_full(&L->rows[i], L), col_non_vs(&L->rows[i], L),
                   kit_row_segments(&L->rows[i]), L->largest_fast, L->predicted);
    kit_kv("course-k40", "G=16 at 4,194,304 floats: semi 22.2x the coalesced time, random 2.3x the semi "
                         "time; 13.41 transactions per request");
}

static const kit_part parts[] = {
    {part1_measure, part1_print, part1_csv, part1_kv, part1_verdict},
    {NULL, part2_print, NULL, part2_kv, part2_verdict},
};

int main(int argc, char **argv)
{
    static lab L;
    kit_option opts[] = {
        KIT_LAB_OPTIONS(&L.run.c),
        {"--iterations", KIT_OPT_INT, &L.iterations, "I", "loop count inside each kernel (course: 100)",
         1, 100000, NULL},
        {"--segments-per-group", KIT_OPT_INT, &L.only_g, "G",
         "run only this G (a power of two up to size/32) instead of the sweep", 1, 1 << 30, NULL},
        {"--all", KIT_OPT_FLAG, &L.all, NULL,
         "time every G, also those already within 30% of the random kernel", 0, 0, NULL},
    };
    const kit_lab lab02 = {
        "02-grouping",
        "Lab 02: grouping - semi-coalesced access",
        "Lab 02: grouping. Each warp reads at random inside one group of G\n"
        "consecutive 128-byte segments; the sweep over G shows what grouping buys\n"
        "in time and costs in reach, between the coalesced and the random kernel.",
        opts, KIT_COUNT(opts), prepare, setup, NULL, NULL, summary, NULL, parts, KIT_COUNT(parts),
    };
    kit_run_defaults(&L.run);
    L.iterations = ITERATIONS;
    return kit_lab_main(&lab02, &L, &L.run, argc, argv);
}
