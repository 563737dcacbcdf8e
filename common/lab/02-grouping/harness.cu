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
#include "kit_timing.h"
#include "kit_vecadd.h"

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

static unsigned long long own_index(unsigned long long i, const void *ctx)
{
    (void)ctx;
    return i;
}

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

static void measure(run_t *r, kit_row *row, const kit_policy *policy)
{
    kit_row_work w = {r,       run_counted, run_timed, run_poison, run_verify, run_keep, run_compare,
                      run_refresh, run_check, run_restore};
    kit_row_measure(row, &w, policy);
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

/* ---- the report ----------------------------------------------------------------- */

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

static const char *check_word(const kit_row *r, double coverage)
{
    if (!r->counted)
        return "-";
    return r->wrong == 0 && coverage == 0.0 ? "WRONG" : kit_row_check_word(r);
}

int main(int argc, char **argv)
{
    kit_common c;
    kit_device dev;
    int iterations = ITERATIONS, only_g = 0, all = 0;
    kit_option opts[] = {
        KIT_LAB_OPTIONS(&c),
        {"--iterations", KIT_OPT_INT, &iterations, "I", "loop count inside each kernel (course: 100)",
         1, 100000, NULL},
        {"--segments-per-group", KIT_OPT_INT, &only_g, "G",
         "run only this G (a power of two up to size/32) instead of the sweep", 1, 1 << 30, NULL},
        {"--all", KIT_OPT_FLAG, &all, NULL,
         "time every G, also those already within 30% of the random kernel", 0, 0, NULL},
    };
    kit_row yard[2], rows[MAX_ROWS];
    double coverage[MAX_ROWS], reach[MAX_ROWS], expect[MAX_ROWS];
    unsigned int gs[MAX_ROWS], skipped_from = 0, largest_fast = 0, predicted;
    int nrows = 0, pass = 1, like_random = 0;
    struct l1_facts facts;
    kit_vecadd v;
    kit_policy policy;
    run_t r;
    unsigned int n, max_g;

    kit_common_defaults(&c);
    c.reps = 0;
    kit_parse_args(argc, argv,
                   "Lab 02: grouping. Each warp reads at random inside one group of G\n"
                   "consecutive 128-byte segments; the sweep over G shows what grouping buys\n"
                   "in time and costs in reach, between the coalesced and the random kernel.",
                   opts, KIT_COUNT(opts));
    if (only_g & (only_g - 1))
        kit_die(KIT_EXIT_USAGE, "--segments-per-group %d: G must be a power of two (1, 2, 4, ...)", only_g);
    kit_choose_seed(&c);
    kit_csv_check(c.csv);
    kit_device_open(c.device, &dev);
    n = kit_vecadd_size(c.size, &dev);
    max_g = (unsigned int)kit_pow2_floor(n / FLOATS_PER_SEGMENT);
    if (max_g == 0 || (only_g && (unsigned int)only_g > n / FLOATS_PER_SEGMENT))
        kit_die(KIT_EXIT_USAGE,
                "--segments-per-group %d: a group cannot be larger than the array, %u segments of 32 "
                "floats at --size %u",
                only_g ? only_g : 1, n / (unsigned int)FLOATS_PER_SEGMENT, n);
    policy = kit_policy_default(c.reps);
    kit_vecadd_setup(&v, n, c.seed);

    /* The prediction first: the student makes it before seeing the sweep. */
    facts.l1_bytes = l1_bytes_for(&dev);
    facts.max_threads_per_sm = (unsigned int)dev.max_threads_per_sm;
    facts.max_blocks_per_sm = (unsigned int)dev.max_blocks_per_sm;
    facts.threads_per_block = THREADS_PER_BLOCK;
    facts.segment_bytes = KIT_SEGMENT_BYTES;
    facts.arrays = 2;
    predicted = timed->largest_cached_group(facts);

    memset(&r, 0, sizeof r);
    r.v = &v;
    r.iterations = iterations;
    r.seed = c.seed;

    /* The two extremes, then G. */
    r.kind = COALESCED;
    kit_row_name(&yard[0], "full", NULL, "coalesced (kit)");
    measure(&r, &yard[0], &policy);
    r.kind = RANDOM;
    kit_row_name(&yard[1], "non", NULL, "random (kit)");
    measure(&r, &yard[1], &policy);
    double t_full = yard[0].t.median_ms, t_non = yard[1].t.median_ms;

    r.kind = SEMI;
    for (unsigned int G = only_g ? (unsigned int)only_g : 1; G <= (only_g ? (unsigned int)only_g : max_g); G *= 2) {
        char key[24];
        snprintf(key, sizeof key, "g-%u", G);
        kit_row_name(&rows[nrows], key, "TODO(1)", "semi_coalesced_access G=%u", G);
        gs[nrows] = G;
        r.g = grouping_for(n, G);
        reach[nrows] = (double)r.g.group_elems / n;
        expect[nrows] = kit_expected_distinct(G);
        coverage[nrows] = 1.0;
        if (like_random >= 2 && !all) {
            if (!skipped_from)
                skipped_from = G;
            nrows++;
            continue;
        }
        measure(&r, &rows[nrows], &policy);
        if (rows[nrows].wrong == 0)
            coverage[nrows] = check_groups(&v, r.g, G);
        if (rows[nrows].timed) {
            like_random = rows[nrows].t.median_ms * LIKE_RANDOM >= t_non ? like_random + 1 : 0;
            if (rows[nrows].t.median_ms <= FAST_FACTOR * t_full)
                largest_fast = G;
        }
        nrows++;
    }
    kit_vecadd_teardown(&v);

    /* Where G = 1 (one segment per request, like coalesced) already takes
     * more than FAST_FACTOR times the coalesced kernel, the grouped kernel
     * is bound by its random-number arithmetic, not by memory (few SMs
     * against the memory's bandwidth: a small share of a GPU under MPS):
     * no G can be "close to coalesced", and the sweep cannot show where the
     * groups stop fitting in L1. Said, not judged. */
    double g1_vs_full = (nrows > 0 && gs[0] == 1 && rows[0].timed) ? rows[0].t.median_ms / t_full : 0.0;
    int arithmetic_bound = !only_g && g1_vs_full > FAST_FACTOR;

    FILE *csv = kit_csv_open(c.csv);
    if (csv != stdout) {
        kit_banner("Lab 02: grouping - semi-coalesced access", &dev);
        printf("%s floats per array (%.1f MiB each), %d iterations per thread, seed %llu\n\n",
               kit_grouped(n), v.bytes / 1048576.0, iterations, c.seed);
        printf("%-12s %11s %10s %10s %13s %10s %11s %12s  %s\n", "G (segments)", "time (ms)", "semi/coal",
               "rand/semi", "segments/req", "expected", "sectors/req", "warp reach", "check");
        printf("%-12s %11.3f %10s %10s %13.2f %10s %11.2f %12s  %s\n", "coalesced", t_full, "", "",
               kit_row_segments(&yard[0]), "1.00", kit_row_sectors(&yard[0]), "", check_word(&yard[0], 1));
        for (int i = 0; i < nrows; i++) {
            if (!rows[i].counted && skipped_from && gs[i] >= skipped_from)
                continue;
            printf("%-12u", gs[i]);
            if (rows[i].timed)
                printf(" %11.3f %9.2fx %9.2fx", rows[i].t.median_ms, rows[i].t.median_ms / t_full,
                       t_non / rows[i].t.median_ms);
            else
                printf(" %11s %10s %10s", "-", "-", "-");
            printf(" %13.2f %10.2f %11.2f %11.5f%%  %s\n", kit_row_segments(&rows[i]), expect[i],
                   kit_row_sectors(&rows[i]), 100.0 * reach[i], check_word(&rows[i], coverage[i]));
        }
        if (skipped_from)
            printf("%-12s %11s  G = %u to %u not timed: two G in a row were within %.0f%% of random (--all "
                   "times them)\n", "...", "", skipped_from, gs[nrows - 1], 100.0 * (LIKE_RANDOM - 1.0));
        printf("%-12s %11.3f %9.2fx %10s %13.2f %10.2f %11.2f %11.5f%%  %s\n", "random", t_non, t_non / t_full,
               "", kit_row_segments(&yard[1]), kit_expected_distinct((n + 31.0) / 32),
               kit_row_sectors(&yard[1]), 100.0, check_word(&yard[1], 1));
        printf("\nwarp reach: the share of the array one warp can read (G segments out of %u).\n\n",
               n / (unsigned int)FLOATS_PER_SEGMENT);
        printf("time against G, log scale: empty = coalesced (%.3f ms), full = random (%.3f ms)\n", t_full, t_non);
        for (int i = 0; i < nrows; i++)
            if (rows[i].timed) {
                printf("  G=%-9u ", gs[i]);
                print_bar(rows[i].t.median_ms, t_full, t_non, 50);
                printf(" %.3f ms\n", rows[i].t.median_ms);
            }
        printf("\nyour prediction (TODO(2)): G up to %u stays within %.0fx of coalesced (L1 %u KiB per SM)\n",
               predicted, FAST_FACTOR, facts.l1_bytes / 1024);
        if (arithmetic_bound)
            printf("the sweep: none; G=1 already takes %.1fx the coalesced time: on this GPU (%d SMs) the\n"
                   "grouped kernel is bound by its random-number arithmetic, not by memory, so the sweep\n"
                   "cannot show where the groups stop fitting in L1 (compare G with G=1 instead)\n",
                   g1_vs_full, dev.sms);
        else if (!only_g)
            printf("the sweep: the largest G within %.0fx of coalesced is %u\n", FAST_FACTOR, largest_fast);
        printf("\ncourse, Tesla K40, G=16: 4,194,304 floats: coalesced 9.96 ms, semi 221.4 ms, random 516.6 ms\n"
               "(semi/coalesced 22.2x, random/semi 2.3x); 13.41 transactions per request.\n\n");
    }
    if (csv) {
        fprintf(csv, "gpu,size,seed,segments_per_group,time_ms,semi_vs_coalesced,random_vs_semi,"
                     "segments_per_request,expected_segments,sectors_per_request,warp_reach,correct\n");
        for (int i = 0; i < nrows; i++) {
            if (!rows[i].timed)
                continue;
            kit_csv_prefix(csv, &dev, n, c.seed);
            fprintf(csv, "%u,%.6f,%.4f,%.4f,%.4f,%.4f,%.4f,%.8f,%d\n", gs[i], rows[i].t.median_ms,
                    rows[i].t.median_ms / t_full, t_non / rows[i].t.median_ms, kit_row_segments(&rows[i]),
                    expect[i], kit_row_sectors(&rows[i]), reach[i], rows[i].wrong == 0 && coverage[i] > 0.0);
        }
        kit_csv_close(csv);
    }

    kit_kv("lab", "02-grouping");
    kit_kv_device(&dev);
    kit_kv("size", "%u", n);
    kit_kv("working-set-over-l2", "%.2f", 3.0 * v.bytes / dev.l2_bytes);
    kit_kv("seed", "%llu", c.seed);
    kit_kv("iterations", "%d", iterations);
    kit_kv("max-segments-per-group", "%u", max_g);
    kit_kv("l1-bytes", "%u", facts.l1_bytes);
    kit_row_kv(&yard[0]);
    kit_row_kv(&yard[1]);
    kit_kv("speedup-non-vs-full", "%.2f", t_non / t_full);
    for (int i = 0; i < nrows; i++) {
        char key[64];
        if (!rows[i].counted)
            continue;
        kit_row_kv(&rows[i]);
        snprintf(key, sizeof key, "expected-segments-per-request-%s", rows[i].key);
        kit_kv(key, "%.4f", expect[i]);
        snprintf(key, sizeof key, "warp-reach-%s", rows[i].key);
        kit_kv(key, "%.8f", reach[i]);
        snprintf(key, sizeof key, "groups-picked-%s", rows[i].key);
        kit_kv(key, "%.4f", coverage[i]);
        if (rows[i].timed) {
            snprintf(key, sizeof key, "semi-vs-full-%s", rows[i].key);
            kit_kv(key, "%.3f", rows[i].t.median_ms / t_full);
            snprintf(key, sizeof key, "non-vs-semi-%s", rows[i].key);
            kit_kv(key, "%.3f", t_non / rows[i].t.median_ms);
        }
    }
    if (skipped_from)
        kit_kv("not-timed-from-segments-per-group", "%u", skipped_from);
    kit_kv("predicted-largest-fast-group", "%u", predicted);
    if (!only_g)
        kit_kv("measured-largest-fast-group", "%u", largest_fast);
    if (arithmetic_bound)
        kit_kv("sweep-hidden", "G=1 already takes %.1fx the coalesced time: with %d SMs the grouped kernel is "
                               "bound by its random-number arithmetic, not by memory",
               g1_vs_full, dev.sms);
    for (int i = 0; i < nrows; i++)
        if (gs[i] == 16 && rows[i].timed)
            kit_kv("summary", "G=16 at %s floats: semi %.1fx the coalesced time, random %.1fx the semi time; "
                              "%.2f segments per request; largest G within 2x of coalesced: %u (predicted %u)",
                   kit_grouped(n), rows[i].t.median_ms / t_full, t_non / rows[i].t.median_ms,
                   kit_row_segments(&rows[i]), largest_fast, predicted);
    kit_kv("course-k40", "G=16 at 4,194,304 floats: semi 22.2x the coalesced time, random 2.3x the semi "
                         "time; 13.41 transactions per request");

    /* The verdict: right results in every run, every warp in one group,
     * groups spread at random, G's share of distinct segments per request,
     * the loop as long as asked, and the prediction. */
    pass = kit_row_ok(&yard[0], n) && kit_row_ok(&yard[1], n);
    for (int i = 0; i < nrows; i++) {
        unsigned long long want = 2ull * iterations * n;
        if (!rows[i].counted)
            continue;
        if (!kit_row_ok(&rows[i], n) || coverage[i] == 0.0) {
            pass = 0;
            continue;
        }
        if (rows[i].counts.c[KIT_LD_LANES] != want) {
            fprintf(stderr, "%s: %s: its threads made %llu loads, but %d iterations of A[x] + B[x] for %u "
                            "elements make %llu: one thread per element, A and B read once per iteration "
                            "(TODO(1))\n",
                    kit_program, rows[i].name, rows[i].counts.c[KIT_LD_LANES], iterations, n, want);
            pass = 0;
        }
        if (fabs(kit_row_segments(&rows[i]) - expect[i]) > 0.05 * expect[i]) {
            fprintf(stderr, "%s: G=%u: %.2f segments per request, but 32 random lanes in a group of %u segments "
                            "touch %.2f on average (TODO(1))\n",
                    kit_program, gs[i], kit_row_segments(&rows[i]), gs[i], expect[i]);
            pass = 0;
        }
    }
    if (!check_prediction(facts, predicted))
        pass = 0;
    return kit_finish(pass);
}
