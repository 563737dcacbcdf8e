/*
 * Lab 02: grouping - semi-coalesced access and its trade-off.
 * Handout: handouts/02-grouping.md
 *
 * Between the two extremes of Lab 01 (Dülger, Oğuztüzün and Demirekler,
 * "Memory Coalescing Implementation of Metropolis Resampling on GPU",
 * J Sign Process Syst 90, 2018): global memory is cut into groups of G
 * consecutive 128-byte segments; each warp picks one group at random, then
 * every thread of the warp reads random elements inside that group. G = 1
 * is the coalesced extreme (one segment per request), G = n/32 the random
 * one; in between, speed is traded against how far a warp's reads can go.
 *
 * For every G the program reports the median time, its ratio to the
 * course's coalesced and random kernels, the segments and sectors per
 * request counted in an instrumented launch, and the reach of a warp; it
 * checks every element of C on the host and that every warp read inside
 * one group of the right size.
 */
#include "kit.h"

#define ITERATIONS 100 /* the course's loop count */
#define THREADS_PER_BLOCK 1024
#define FLOATS_PER_SEGMENT (KIT_SEGMENT_BYTES / sizeof(float))

/* ===================================================================== */
/* Student code                                                          */
/* ===================================================================== */

/* ---- KIT STUDENT REGION BEGIN: TODO(1) ---- */
/*
 * TODO(1) The warp's group. Every lane of a warp holds the same per-warp
 * stream, so the same curand(warp_state) gives all 32 lanes the same
 * number. Turn it into a group number in [0, group_count) with the
 * division trick (np_groups = 2^32 / group_count, rounded up; a 64-bit
 * number, because with one group it is 2^32), and return the index of the
 * group's first element: group number times group_elems.
 */
static __device__ unsigned int group_base(kit_rng *warp_state, unsigned long long np_groups,
                                          unsigned int group_elems)
{
    unsigned int group = (unsigned int)(curand(warp_state) / np_groups);
    return group * group_elems;
}
/* ---- KIT STUDENT REGION END: TODO(1) ---- */

/* ---- KIT STUDENT REGION BEGIN: TODO(2) ---- */
/*
 * TODO(2) The index inside the group. Draw from the thread's own stream
 * (every lane gets a different number), map it into [0, group_elems) with
 * the division trick (np_group = 2^32 / group_elems), and shift it into the
 * warp's group, which starts at base.
 */
static __device__ unsigned int index_in_group(kit_rng *thread_state, unsigned int np_group,
                                              unsigned int base)
{
    return base + curand(thread_state) / np_group;
}
/* ---- KIT STUDENT REGION END: TODO(2) ---- */

/* ===================================================================== */
/* Kernel                                                                */
/* ===================================================================== */

/* The division constants of one G, computed on the host. */
typedef struct {
    unsigned int group_elems;     /* G segments of 32 floats */
    unsigned int group_count;     /* whole groups in the array */
    unsigned int np_group;        /* 2^32 / group_elems */
    unsigned long long np_groups; /* 2^32 / group_count (2^32 for one group) */
} grouping_t;

/*
 * The course's semi_coalesced_access. The timed kernel passes probe NULL;
 * the instrumented one counts segments per request and records each
 * thread's last index (common/kit_vecadd.h).
 */
static __device__ __forceinline__ void semi_coalesced_body(const float *A, const float *B, float *C,
                                                           unsigned int n, int iters, grouping_t g,
                                                           unsigned long long seed,
                                                           const kit_vecadd_probe *probe)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    unsigned int base, x = 0;
    kit_rng thread_state, warp_state;
    kit_tally tally;

    kit_vecadd_begin(&tally, probe, tid < n);
    if (tid >= n)
        return;
    kit_rng_thread(&thread_state, seed, tid);
    kit_rng_warp(&warp_state, seed, tid / 32);
    base = group_base(&warp_state, g.np_groups, g.group_elems);
    for (int i = 0; i < iters; i++) {
        x = index_in_group(&thread_state, g.np_group, base);
        kit_vecadd_count(&tally, probe, A, B, x);
        C[tid] = A[x] + B[x];
    }
    kit_vecadd_done(&tally, probe, tid, x);
}

__global__ void semi_coalesced_access(const float *A, const float *B, float *C, unsigned int n,
                                      int iters, grouping_t g, unsigned long long seed)
{
    semi_coalesced_body(A, B, C, n, iters, g, seed, NULL);
}

__global__ void semi_coalesced_access_probed(const float *A, const float *B, float *C,
                                             unsigned int n, int iters, grouping_t g,
                                             unsigned long long seed, kit_vecadd_probe probe)
{
    semi_coalesced_body(A, B, C, n, iters, g, seed, &probe);
}

/* ===================================================================== */
/* Harness                                                               */
/* ===================================================================== */

enum kernel { COALESCED, RANDOM, SEMI };

typedef struct {
    enum kernel kernel;
    kit_vecadd *v;
    grouping_t g;
    int iters;
    unsigned long long seed;
} run_t;

static grouping_t grouping_for(unsigned int n, unsigned int segments_per_group)
{
    grouping_t g;
    g.group_elems = segments_per_group * FLOATS_PER_SEGMENT;
    g.group_count = n / g.group_elems;
    g.np_group = kit_np(g.group_elems);
    g.np_groups = kit_np64(g.group_count);
    return g;
}

static void launch(const run_t *r, int probed)
{
    const kit_vecadd *v = r->v;
    unsigned int blocks = (v->n + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK;

    if (r->kernel == COALESCED) {
        kit_vecadd_launch_coalesced(v, r->iters, probed);
        return;
    }
    if (r->kernel == RANDOM) {
        kit_vecadd_launch_random(v, r->iters, r->seed, probed);
        return;
    }
    if (probed)
        semi_coalesced_access_probed<<<blocks, THREADS_PER_BLOCK>>>(v->dA, v->dB, v->dC, v->n,
                                                                    r->iters, r->g, r->seed,
                                                                    v->probe);
    else
        semi_coalesced_access<<<blocks, THREADS_PER_BLOCK>>>(v->dA, v->dB, v->dC, v->n, r->iters,
                                                             r->g, r->seed);
    KIT_CHECK_LAUNCH();
}

static void launch_timed(void *r) { launch((const run_t *)r, 0); }
static void launch_probed(void *r) { launch((const run_t *)r, 1); }

static unsigned long long own_index(unsigned long long i, const void *ctx)
{
    (void)ctx;
    return i;
}

/*
 * The grouping itself, from the indices the instrumented launch recorded:
 * every warp's 32 indices lie in one group, and the warps' groups are
 * spread over the array as random picks would be. Returns the fraction of
 * groups that some warp picked (0 when a warp broke the rule).
 */
static double check_groups(const kit_vecadd *v, grouping_t g, unsigned int segments_per_group)
{
    unsigned char *picked = (unsigned char *)kit_host_alloc(g.group_count);
    unsigned long long warps = 0, distinct = 0;
    double expected;

    memset(picked, 0, g.group_count);
    for (unsigned int w = 0; w * 32ull < v->n; w++) {
        unsigned int first = w * 32, group = v->last[first] / g.group_elems;
        for (unsigned int i = first; i < first + 32 && i < v->n; i++) {
            if (v->last[i] / g.group_elems != group || group >= g.group_count) {
                fprintf(stderr,
                        "%s: G=%u: warp %u: thread %u read element %u, group %u, but thread %u "
                        "read in group %u (of %u groups of %u elements)\n",
                        kit_program, segments_per_group, w, i, v->last[i],
                        v->last[i] / g.group_elems, first, group, g.group_count, g.group_elems);
                free(picked);
                return 0.0;
            }
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
                "%s: G=%u: the warps picked only %llu distinct groups of %u, but random picks "
                "give about %.0f: is the group drawn from the warp's random stream?\n",
                kit_program, segments_per_group, distinct, g.group_count, expected);
        return 0.0;
    }
    return (double)distinct / g.group_count;
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

int main(int argc, char **argv)
{
    kit_common c;
    kit_device dev;
    int iters = ITERATIONS, only_g = 0;
    kit_option opts[] = {
        KIT_COMMON_OPTIONS(&c),
        {"--iterations", KIT_OPT_INT, &iters, "I", "loop count inside each kernel (course: 100)",
         1, 100000, NULL},
        {"--segments-per-group", KIT_OPT_INT, &only_g, "G",
         "run only this G (a power of two up to size/32) instead of the sweep", 1, 1 << 30, NULL},
    };
    kit_vecadd_row yard[2], rows[32];
    double coverage[32], reach[32], expect[32];
    unsigned int gs[32];
    int nrows = 0, pass = 1;
    kit_vecadd v;
    run_t r;
    unsigned int n, max_g;
    FILE *csv;

    kit_common_defaults(&c);
    c.reps = 5; /* the sweep runs many kernels; the median of 5 is steady */
    c.warmup = 1;
    kit_parse_args(argc, argv,
                   "Lab 02: grouping. Each warp reads at random inside one group of G\n"
                   "consecutive 128-byte segments; the sweep over G shows what grouping buys\n"
                   "in time and costs in reach, between the coalesced and the random kernel.",
                   opts, KIT_COUNT(opts));
    if (only_g & (only_g - 1))
        kit_die(KIT_EXIT_USAGE, "--segments-per-group %d: G must be a power of two (1, 2, 4, ...)",
                only_g);
    kit_choose_seed(&c);
    csv = kit_csv_open(c.csv);
    kit_device_open(c.device, &dev);
    n = kit_vecadd_size(&c, &dev);
    max_g = (unsigned int)kit_pow2_floor(n / FLOATS_PER_SEGMENT);
    if (only_g && (unsigned int)only_g > n / FLOATS_PER_SEGMENT)
        kit_die(KIT_EXIT_USAGE,
                "--segments-per-group %d: a group cannot be larger than the array, %u segments "
                "of 32 floats at --size %u",
                only_g, n / (unsigned int)FLOATS_PER_SEGMENT, n);
    kit_vecadd_setup(&v, n, c.seed);

    memset(&r, 0, sizeof r);
    r.v = &v;
    r.iters = iters;
    r.seed = c.seed;

    /* The two extremes, then G. */
    r.kernel = COALESCED;
    kit_vecadd_name(&yard[0], "full", "full_coalesced_access");
    kit_vecadd_measure(&v, launch_probed, launch_timed, &r, own_index, NULL, &c, &yard[0]);
    r.kernel = RANDOM;
    kit_vecadd_name(&yard[1], "non", "non_coalesced_access");
    kit_vecadd_measure(&v, launch_probed, launch_timed, &r, NULL, NULL, &c, &yard[1]);
    r.kernel = SEMI;
    for (unsigned int G = only_g ? (unsigned int)only_g : 1; G <= (only_g ? (unsigned int)only_g : max_g);
         G *= 2) {
        char key[24];
        snprintf(key, sizeof key, "g-%u", G);
        kit_vecadd_name(&rows[nrows], key, "semi_coalesced_access G=%u", G);
        r.g = grouping_for(n, G);
        kit_vecadd_measure(&v, launch_probed, launch_timed, &r, NULL, NULL, &c, &rows[nrows]);
        gs[nrows] = G;
        coverage[nrows] = check_groups(&v, r.g, G);
        reach[nrows] = (double)r.g.group_elems / n;
        expect[nrows] = kit_expected_distinct(G);
        nrows++;
    }

    double t_full = yard[0].t.median_ms, t_non = yard[1].t.median_ms;
    if (csv != stdout) {
        kit_banner("Lab 02: grouping - semi-coalesced access", &dev);
        printf("%s floats per array (%.1f MiB each), %d iterations per thread, median of %d runs, "
               "seed %llu\n\n",
               kit_grouped(n), v.bytes / 1048576.0, iters, c.reps, c.seed);
        printf("%-12s %11s %10s %10s %13s %10s %11s %12s  %s\n", "G (segments)", "time (ms)",
               "semi/coal", "rand/semi", "segments/req", "expected", "sectors/req",
               "warp reach", "check");
        printf("%-12s %11.3f %10s %10s %13.2f %10s %11.2f %12s  %s\n", "coalesced", t_full, "",
               "", yard[0].s.segments_per_request, "1.00", yard[0].s.sectors_per_request, "",
               yard[0].wrong ? "WRONG" : "ok");
        for (int i = 0; i < nrows; i++)
            printf("%-12u %11.3f %9.2fx %9.2fx %13.2f %10.2f %11.2f %11.5f%%  %s\n", gs[i],
                   rows[i].t.median_ms, rows[i].t.median_ms / t_full, t_non / rows[i].t.median_ms,
                   rows[i].s.segments_per_request, expect[i], rows[i].s.sectors_per_request,
                   100.0 * reach[i], rows[i].wrong || coverage[i] == 0.0 ? "WRONG" : "ok");
        printf("%-12s %11.3f %9.2fx %10s %13.2f %10.2f %11.2f %11.5f%%  %s\n", "random", t_non,
               t_non / t_full, "", yard[1].s.segments_per_request,
               kit_expected_distinct((n + 31.0) / 32), yard[1].s.sectors_per_request, 100.0,
               yard[1].wrong ? "WRONG" : "ok");
        printf("\nwarp reach: the share of the array one warp can read (G segments out of %u).\n\n",
               n / (unsigned int)FLOATS_PER_SEGMENT);
        printf("time against G, log scale: empty = coalesced (%.3f ms), full = random (%.3f ms)\n",
               t_full, t_non);
        for (int i = 0; i < nrows; i++) {
            printf("  G=%-9u ", gs[i]);
            print_bar(rows[i].t.median_ms, t_full, t_non, 50);
            printf(" %.3f ms\n", rows[i].t.median_ms);
        }
        printf("\ncourse, Tesla K40, G=16: 4,194,304 floats: coalesced 9.96 ms, semi 221.4 ms, "
               "random 516.6 ms\n(semi/coalesced 22.2x, random/semi 2.3x); 13.41 transactions "
               "per request.\n\n");
    }
    if (csv) {
        fprintf(csv, "segments_per_group,time_ms,semi_vs_coalesced,random_vs_semi,"
                     "segments_per_request,expected_segments,sectors_per_request,warp_reach,"
                     "correct\n");
        for (int i = 0; i < nrows; i++)
            fprintf(csv, "%u,%.6f,%.4f,%.4f,%.4f,%.4f,%.4f,%.8f,%d\n", gs[i], rows[i].t.median_ms,
                    rows[i].t.median_ms / t_full, t_non / rows[i].t.median_ms,
                    rows[i].s.segments_per_request, expect[i], rows[i].s.sectors_per_request,
                    reach[i], rows[i].wrong == 0 && coverage[i] > 0.0);
        kit_csv_close(csv);
    }

    kit_kv("lab", "02-grouping");
    kit_kv_device(&dev);
    kit_kv("size", "%u", n);
    kit_kv("working-set-over-l2", "%.2f", 3.0 * v.bytes / dev.l2_bytes);
    kit_kv("seed", "%llu", c.seed);
    kit_kv("reps", "%d", c.reps);
    kit_kv("iterations", "%d", iters);
    kit_kv("max-segments-per-group", "%u", max_g);
    kit_vecadd_kv(&yard[0]);
    kit_vecadd_kv(&yard[1]);
    kit_kv("speedup-non-vs-full", "%.2f", t_non / t_full);
    for (int i = 0; i < nrows; i++) {
        char key[64];
        kit_vecadd_kv(&rows[i]);
        snprintf(key, sizeof key, "semi-vs-full-%s", rows[i].key);
        kit_kv(key, "%.3f", rows[i].t.median_ms / t_full);
        snprintf(key, sizeof key, "non-vs-semi-%s", rows[i].key);
        kit_kv(key, "%.3f", t_non / rows[i].t.median_ms);
        snprintf(key, sizeof key, "expected-segments-per-request-%s", rows[i].key);
        kit_kv(key, "%.4f", expect[i]);
        snprintf(key, sizeof key, "warp-reach-%s", rows[i].key);
        kit_kv(key, "%.8f", reach[i]);
        snprintf(key, sizeof key, "groups-picked-%s", rows[i].key);
        kit_kv(key, "%.4f", coverage[i]);
    }
    for (int i = 0; i < nrows; i++)
        if (gs[i] == 16)
            kit_kv("summary", "G=16 at %s floats: semi %.1fx the coalesced time, random %.1fx "
                              "the semi time; %.2f segments per request",
                   kit_grouped(n), rows[i].t.median_ms / t_full, t_non / rows[i].t.median_ms,
                   rows[i].s.segments_per_request);
    kit_kv("course-k40", "G=16 at 4,194,304 floats: semi 22.2x the coalesced time, random 2.3x "
                         "the semi time; 13.41 transactions per request");

    /* The verdict: right results, every warp in one group, groups spread at
     * random, and G segments' worth of distinct segments per request. */
    pass = kit_vecadd_all_correct(yard, 2, n) && kit_vecadd_all_correct(rows, nrows, n);
    for (int i = 0; i < nrows; i++) {
        if (coverage[i] == 0.0)
            pass = 0;
        if (fabs(rows[i].s.segments_per_request - expect[i]) > 0.05 * expect[i]) {
            fprintf(stderr,
                    "%s: G=%u: %.2f segments per request, but 32 random lanes in a group of %u "
                    "segments touch %.2f on average\n",
                    kit_program, gs[i], rows[i].s.segments_per_request, gs[i], expect[i]);
            pass = 0;
        }
    }

    kit_vecadd_teardown(&v);
    return kit_finish(pass);
}
