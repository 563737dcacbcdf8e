/*
 * Lab 04: occupancy and SM efficiency - the harness.
 * The student's file: labs/04-occupancy/occupancy.cu; the handout:
 * handouts/04-occupancy.md.
 *
 * Part 1, the calculator: the student's blocks_by_warps, blocks_by_registers
 *   and blocks_by_shared_memory (TODO(1) to (3)), and shared_memory_for_blocks
 *   (TODO(5)), against the rules of NVIDIA's occupancy calculator
 *   (cuda_occupancy.h) on a table of GPUs, compute capability 3.5 (the
 *   course's K40) to 9.0, on the CPU; then, on this GPU, against
 *   cudaOccupancyMaxActiveBlocksPerMultiprocessor for the lab's kernels and
 *   the kit's own. The configurations: a grid of block sizes and shared
 *   memory sizes, configurations drawn from --seed, and configurations where
 *   a calculator with a known mistake (registers per thread, registers not
 *   rounded per warp, one register pool instead of one per sub-partition,
 *   no reserved shared memory, blocks not in whole warps) gives another
 *   answer: those are drawn from the seed too, so that a calculator fitted
 *   to a fixed list does not pass. --calculator-only runs the CPU part
 *   alone (no GPU); --model checks one of the kit's calculators instead of
 *   the student's (the tests' negative controls).
 * Part 2, the course's two scenarios (notes 000) on its kernel: min(n, 1024)
 *   threads per block against the work spread over all SMs first, in blocks
 *   of the student's scenario2_threads_per_block (TODO(6)), itself checked
 *   on the CPU in Part 1 for GPUs of many sizes; then, at 1,024 elements,
 *   the same kernel in blocks of every power of two from a warp to 1,024
 *   threads, and the student's choice against the fastest of them.
 * Part 3, a partial last wave: every block slot of the GPU filled once, then
 *   one block more.
 * Part 4, the book's 2D block shapes for sumMatrixOnGPU2D (notes 001).
 * Part 5, occupancy by design: the student's heavy_bounded (TODO(4)) raises
 *   a register-hungry kernel to 32 warps per SM with __launch_bounds__; the
 *   student's shared_memory_for_blocks (TODO(5)) lowers the book's kernel to
 *   1, 2, 4, ... blocks per SM with dynamic shared memory.
 *
 * Achieved occupancy and SM efficiency come from the per-warp trace of a
 * counting launch (kit_counted.h, kit_trace.h): each warp's SM and the
 * times of its first and last global access. The trace runs on the
 * counting build of each kernel, counting nothing else where no counts are
 * needed (all but Part 4). Every kernel is checked element by element
 * against the CPU and timed until the median is steady, each timed run
 * checked again (common/lib/kit_row.h).
 */
#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_host.h"
#include "kit_report.h"
#include "kit_rng.h"
#include "kit_row.h"
#include "kit_timing.h"
#include "kit_trace.h"

typedef struct lab lab; /* the lab's state, below */
#define KIT_LAB_STATE lab
#include "kit_lab.h"

#include "contract.h"
#include "kit_student.h"

#define DEFAULT_ITERATIONS 20000 /* the scenario kernel's loop (the course: 1,000,000 on a K40) */
#define TRACE_DIVISOR 10         /* the traced copy runs a tenth of the iterations: the same shares */
#define WAVE_STEPS 50            /* the wave kernel's steps per --iterations */
#define DEFAULT_ROUNDS 256       /* heavy's rounds */
#define HEAVY_WAVES 4            /* heavy's threads: 4 full GPUs' worth */
#define HEAVY_INPUTS 4096        /* distinct inputs of heavy, each result computed once on the CPU */
#define THROTTLE_X 128           /* the book's best shape, (128,1), throttled */
#define CPU_DRAWN 48             /* drawn configurations per GPU of the table */
#define GPU_DRAWN 24             /* drawn configurations per kernel on this GPU */
#define PER_MISTAKE 2            /* configurations that expose each known mistake, per GPU or kernel */
#define THROTTLE_DRAWN 6         /* drawn throttles per GPU of the table */
#define SHOWN 5                  /* disagreements shown on stderr */
#define MAX_SIZES 24
#define SWEEP_N 1024             /* Part 2's block sizes: at this n (the course's headline) */
#define SWEEP_ROWS 7             /* a warp to 1,024 threads in powers of two, and the student's choice */
#define SWEEP_SLACK 1.15         /* the choice within 15% of the fastest, plus both rows' spread */
#define SWEEP_SHOWN 1.25         /* compared only where one block of 1,024 is this much slower than the fastest */
#define SWEEP_WHOLE 5            /* the row of one block of 1,024: 32 << 5 */

static const kit_student_api *timed = &kit_student_timed;
static const kit_student_api *counted = &kit_student_counted;

/* ---- host random numbers: the drawn configurations ------------------------- */

static unsigned long long splitmix64(unsigned long long *s)
{
    unsigned long long z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A whole number in [lo, hi]. */
static int draw(unsigned long long *s, int lo, int hi)
{
    return lo + (int)(splitmix64(s) % (unsigned long long)(hi - lo + 1));
}

static int round_up(int x, int unit) { return (x + unit - 1) / unit * unit; }
static int imin(int a, int b) { return a < b ? a : b; }

/* ======== Part 1: the calculator ============================================ */

/* The GPUs the calculator is checked on without one: the Programming
 * Guide's limits per compute capability, and the units cuda_occupancy.h
 * allocates in. */
static const gpu_limits table[] = {
    /* name, cc, warp, threads/block, warps/SM, blocks/SM, regs/SM, regs/block, reg unit, parts,
       smem/SM, smem/block, smem unit, reserved */
    {"Tesla K40 (the course's)", 3, 5, 32, 1024, 64, 16, 65536, 65536, 256, 4, 49152, 49152, 256, 0},
    {"Tesla V100", 7, 0, 32, 1024, 64, 32, 65536, 65536, 256, 4, 98304, 49152, 256, 0},
    {"Tesla T4 (Turing)", 7, 5, 32, 1024, 32, 16, 65536, 65536, 256, 4, 65536, 49152, 256, 0},
    {"A100", 8, 0, 32, 1024, 64, 32, 65536, 65536, 256, 4, 167936, 49152, 128, 1024},
    {"A40, RTX 3090 (8.6)", 8, 6, 32, 1024, 48, 16, 65536, 65536, 256, 4, 102400, 49152, 128, 1024},
    {"L4, RTX 4090 (Ada)", 8, 9, 32, 1024, 48, 24, 65536, 65536, 256, 4, 102400, 49152, 128, 1024},
    {"H100 (Hopper)", 9, 0, 32, 1024, 64, 32, 65536, 65536, 256, 4, 233472, 49152, 128, 1024},
};
/* The most a block may declare when the kernel opts in, per row of the table. */
static const int table_optin[] = {49152, 98304, 65536, 166912, 101376, 101376, 232448};

/* Whose calculator is checked: the student's, the kit's, or the kit's with
 * one known mistake (the tests' negative controls). */
enum model { YOURS, KIT, PER_THREAD, UNROUNDED, ONE_POOL, NO_RESERVED, THREADS_NOT_WARPS, MODELS };
static const char *const model_names[MODELS] = {"yours", "kit", "per-thread-registers", "unrounded-registers",
                                                "one-register-pool", "no-reserved-shared", "threads-not-warps"};
static const char *const model_help[MODELS] = {
    "the lab file's", "the kit's own", "registers per thread, not per warp", "registers per warp not rounded up",
    "the SM's registers as one pool", "no shared memory reserved per block", "blocks of threads, not whole warps"};

/* The rules, as cuda_occupancy.h applies them, or with mistake m. */
static int rule_warps(const gpu_limits *g, int threads, enum model m)
{
    int blocks;
    if (threads > g->max_threads_per_block)
        return 0;
    if (m == THREADS_NOT_WARPS)
        blocks = g->max_warps_per_sm * g->warp_size / threads;
    else
        blocks = g->max_warps_per_sm / ((threads + g->warp_size - 1) / g->warp_size);
    return imin(blocks, g->max_blocks_per_sm);
}

static int rule_registers(const gpu_limits *g, int threads, int regs, enum model m)
{
    int warps = (threads + g->warp_size - 1) / g->warp_size;
    int per_warp = m == UNROUNDED ? regs * g->warp_size : round_up(regs * g->warp_size, g->reg_alloc_unit);

    if (regs == 0)
        return g->max_blocks_per_sm;
    if (m == PER_THREAD)
        return g->regs_per_sm / (regs * threads);
    if (per_warp * round_up(warps, g->sub_partitions) > g->max_regs_per_block)
        return 0;
    if (m == ONE_POOL)
        return g->regs_per_sm / per_warp / warps;
    return g->regs_per_sm / g->sub_partitions / per_warp * g->sub_partitions / warps;
}

static int rule_shared(const gpu_limits *g, int smem, enum model m)
{
    int taken = round_up(smem + (m == NO_RESERVED ? 0 : g->smem_reserved_per_block), g->smem_alloc_unit);
    if (smem > g->max_smem_per_block)
        return 0;
    return taken ? g->smem_per_sm / taken : g->max_blocks_per_sm;
}

/* The three answers of calculator m, each at most the block limit (any
 * larger number means "no limit here"). */
typedef struct {
    int by[3]; /* warps, registers, shared memory */
    int blocks;
} answer;

static const char *const limit_names[3] = {"warps", "registers", "shared memory"};
static const char *const limit_funcs[3] = {"blocks_by_warps", "blocks_by_registers", "blocks_by_shared_memory"};
static const char *const limit_todos[3] = {"TODO(1)", "TODO(2)", "TODO(3)"};

static answer calculate(enum model m, const gpu_limits *g, int threads, int regs, int smem)
{
    answer a;
    if (m == YOURS) {
        a.by[0] = timed->blocks_by_warps(g, threads);
        a.by[1] = timed->blocks_by_registers(g, threads, regs);
        a.by[2] = timed->blocks_by_shared_memory(g, smem);
    } else {
        a.by[0] = rule_warps(g, threads, m);
        a.by[1] = rule_registers(g, threads, regs, m);
        a.by[2] = rule_shared(g, smem, m);
    }
    a.blocks = g->max_blocks_per_sm;
    for (int i = 0; i < 3; i++) {
        a.by[i] = a.by[i] > g->max_blocks_per_sm ? g->max_blocks_per_sm : a.by[i];
        a.blocks = imin(a.blocks, a.by[i]);
    }
    return a;
}

/* The least dynamic shared memory for `blocks` per SM, by calculator m (the
 * kit's own unless m is the student's). */
static int throttle_bytes(enum model m, const gpu_limits *g, int threads, int regs, int static_smem, int blocks)
{
    int taken;
    if (m == YOURS)
        return timed->shared_memory_for_blocks(g, threads, regs, static_smem, blocks);
    taken = round_up(g->smem_per_sm / (blocks + 1) + 1, g->smem_alloc_unit);
    return taken - g->smem_reserved_per_block - static_smem > 0 ? taken - g->smem_reserved_per_block - static_smem
                                                                 : 0;
}

/*
 * Scenario 2's threads per block (TODO(6)) for n elements on `sms` SMs: the
 * student's, or the kit's rule: the fewest threads per block, in whole
 * warps, from one warp to 1,024, that put no more than one block on each
 * SM (where the work allows it).
 */
static int scenario2_rule(unsigned int n, int sms)
{
    int t = (int)((n + (unsigned int)sms - 1) / (unsigned int)sms);
    t = round_up(t, 32);
    return t < 32 ? 32 : t > 1024 ? 1024 : t;
}

static int scenario2_of(enum model m, unsigned int n, int sms)
{
    return m == YOURS ? timed->scenario2_threads_per_block(n, sms) : scenario2_rule(n, sms);
}

/* What is wrong with t threads per block as scenario 2's launch, or NULL:
 * the properties that together make the rule. Where even blocks of 1,024
 * threads need more blocks than there are SMs, every SM gets work from
 * any block size: then any whole number of warps will do. */
static const char *scenario2_wrong(int t, unsigned int n, int sms)
{
    if (t < 32 || t > 1024)
        return "not from one warp to 1,024 threads";
    if (t % 32)
        return "not a whole number of warps: every block's last warp would run with idle lanes";
    if ((unsigned long long)n > 1024ull * (unsigned int)sms)
        return NULL;
    if ((n + (unsigned long long)t - 1) / (unsigned int)t > (unsigned int)sms)
        return "more blocks than SMs, though blocks of up to 1,024 threads would put at most one on each SM";
    if (t > 32 && (n + (unsigned long long)t - 33) / (unsigned int)(t - 32) <= (unsigned int)sms)
        return "more threads per block than one block per SM needs: smaller blocks would spread the work over "
               "more SMs";
    return NULL;
}

/* Whether `bytes` holds a kernel to at most `blocks` per SM by shared
 * memory, and is the least that does, to within one allocation unit. */
static int throttle_right(const gpu_limits *g, int static_smem, int bytes, int blocks)
{
    if (bytes < 0 || static_smem + bytes > g->max_smem_per_block)
        return 0;
    if (rule_shared(g, static_smem + bytes, KIT) > blocks)
        return 0;
    return bytes < g->smem_alloc_unit || rule_shared(g, static_smem + bytes - g->smem_alloc_unit, KIT) > blocks;
}

/* One configuration checked: its limits, the kernel's use, the answers. */
typedef struct {
    const gpu_limits *g;
    const char *kernel; /* NULL on the table's GPUs */
    int threads, regs, smem;
} config;

typedef struct {
    int checked, wrong;
    int wrong_func[3]; /* disagreements of each of the three functions with the rules */
    int shown;
    int exposing;      /* configurations where a known mistake changes the answer */
} tally;

static void describe(char *out, size_t len, const config *c)
{
    if (c->kernel)
        snprintf(out, len, "%s, %d threads per block, %d registers, %d bytes of shared memory", c->kernel,
                 c->threads, c->regs, c->smem);
    else
        snprintf(out, len, "%s (%d.%d), %d threads per block, %d registers, %d bytes of shared memory", c->g->name,
                 c->g->cc_major, c->g->cc_minor, c->threads, c->regs, c->smem);
}

/* Calculator m against the rules (api < 0) or against the runtime's answer. */
static void check_one(enum model m, const config *c, int api, tally *t)
{
    answer mine = calculate(m, c->g, c->threads, c->regs, c->smem);
    answer rules = calculate(KIT, c->g, c->threads, c->regs, c->smem);
    int want = api >= 0 ? api : rules.blocks, bad = mine.blocks != want;
    char what[256];

    t->checked++;
    for (int i = 0; i < 3; i++)
        if (mine.by[i] != rules.by[i]) {
            t->wrong_func[i]++;
            bad = 1;
        }
    for (int w = PER_THREAD; w < MODELS; w++)
        if (calculate((enum model)w, c->g, c->threads, c->regs, c->smem).blocks != rules.blocks) {
            t->exposing++;
            break;
        }
    if (!bad)
        return;
    t->wrong++;
    if (t->shown++ >= SHOWN)
        return;
    describe(what, sizeof what, c);
    fprintf(stderr, "%s: %s: your calculator gives %d blocks per SM, %s %d", kit_program, what, mine.blocks,
            api >= 0 ? "cudaOccupancyMaxActiveBlocksPerMultiprocessor" : "the rules", want);
    for (int i = 0; i < 3; i++)
        if (mine.by[i] != rules.by[i])
            fprintf(stderr, "; %s says %d, the rules %d (%s)", limit_funcs[i], mine.by[i], rules.by[i],
                    limit_todos[i]);
    fprintf(stderr, "\n");
}

/* Adds to list[] (room for `most`) up to PER_MISTAKE configurations,
 * drawn from the seed's stream by `pick`, for which each known mistake
 * gives another answer, then `drawn` configurations as they come. */
typedef config (*picker)(unsigned long long *s, const void *ctx);

static int draw_configs(config *list, int most, int drawn, picker pick, const void *ctx, unsigned long long *s)
{
    int n = 0;
    for (int w = PER_THREAD; w < MODELS; w++) {
        int found = 0;
        for (int tries = 0; tries < 20000 && found < PER_MISTAKE && n < most - drawn; tries++) {
            config c = pick(s, ctx);
            if (calculate((enum model)w, c.g, c.threads, c.regs, c.smem).blocks !=
                calculate(KIT, c.g, c.threads, c.regs, c.smem).blocks) {
                list[n++] = c;
                found++;
            }
        }
    }
    while (drawn-- > 0)
        list[n++] = pick(s, ctx);
    return n;
}

/* A configuration on a GPU of the table: any block size (now and then one
 * too large), any register count, any shared memory a block may declare
 * (now and then more). */
static config pick_table(unsigned long long *s, const void *ctx)
{
    config c;
    c.g = (const gpu_limits *)ctx;
    c.kernel = NULL;
    c.threads = draw(s, 0, 15) ? draw(s, 1, c.g->max_threads_per_block) : draw(s, 1, 2 * c.g->max_threads_per_block);
    c.regs = draw(s, 0, 31) ? draw(s, 1, 255) : 0;
    c.smem = draw(s, 0, 3) ? draw(s, 0, c.g->max_smem_per_block)
                           : draw(s, 0, 1) ? 0 : draw(s, 0, 2 * c.g->max_smem_per_block);
    return c;
}

typedef struct {
    enum model model;
    tally t; /* against the rules, every GPU of the table */
    int throttles, throttles_wrong;
    int scenario2_checks, scenario2_wrong;
    int k40_ok;
    double k40[6];
    char first_drawn[128];
} cpu_check;

/* The course's K40 table: 16 registers a thread, no shared memory. */
static void k40_table(cpu_check *r, FILE *out)
{
    const gpu_limits *g = &table[0];
    static const double want[6] = {0.25, 0.5, 1, 1, 1, 1};

    r->k40_ok = 1;
    fprintf(out, "The course's Tesla K40 (15 SMX, 64 warps and 16 blocks each), 16 registers a thread:\n"
            "%19s %12s %11s  %s\n", "threads per block", "blocks/SMX", "occupancy", "limit");
    for (int i = 0, t = 32; i < 6; i++, t *= 2) {
        answer a = calculate(r->model, g, t, 16, 0);
        int lim = 2;
        r->k40[i] = (double)a.blocks * (t / 32) / g->max_warps_per_sm;
        r->k40_ok &= fabs(r->k40[i] - want[i]) < 1e-9;
        for (int k = 2; k >= 0; k--)
            lim = a.by[k] == a.blocks ? k : lim;
        fprintf(out, "%19d %12d %10.0f%%  %s\n", t, a.blocks, 100 * r->k40[i],
                lim == 0 && g->max_warps_per_sm / (t / 32) > a.blocks ? "blocks" : limit_names[lim]);
    }
    fprintf(out, "(the course: 25%%, 50%%, then 100%%)\n\n");
}

/* Calculator m on the CPU, its tables for people to out: the K40 table,
 * then against the rules on every GPU of the table. */
static void check_cpu(cpu_check *r, enum model m, unsigned long long seed, FILE *out)
{
    unsigned long long s = seed ^ 0x5eed0004ull;

    r->model = m;
    k40_table(r, out);
    memset(&r->t, 0, sizeof r->t);
    fprintf(out, "The calculator against the rules, on the CPU, on the kit's table of GPUs (seed %llu):\n"
            "%-26s %5s %15s %7s %18s %14s\n",
            seed, "GPU", "cc", "configurations", "agree", "expose a mistake", "throttles");
    for (int i = 0; i < KIT_COUNT(table); i++) {
        config list[64];
        int n = draw_configs(list, 64, CPU_DRAWN, pick_table, &table[i], &s), throttles = 0, throttles_right = 0;
        tally was = r->t; /* this GPU's row: what the tally gains */
        gpu_limits optin = table[i];

        for (int k = 0; k < n; k++)
            check_one(r->model, &list[k], -1, &r->t);
        if (i == KIT_COUNT(table) - 1) /* the last GPU's first drawn one */
            snprintf(r->first_drawn, sizeof r->first_drawn, "%d threads, %d registers, %d bytes",
                     list[n - CPU_DRAWN].threads, list[n - CPU_DRAWN].regs, list[n - CPU_DRAWN].smem);
        /* shared_memory_for_blocks, with the most shared memory a block may opt in to. */
        optin.max_smem_per_block = table_optin[i];
        for (int k = 0; k < THROTTLE_DRAWN * 4 && throttles < THROTTLE_DRAWN; k++) {
            int threads = 32 * draw(&s, 1, 8), regs = draw(&s, 16, 64), stat = draw(&s, 0, 3) ? 0 : draw(&s, 1, 4096);
            int others = imin(rule_warps(&optin, threads, KIT), rule_registers(&optin, threads, regs, KIT));
            int blocks, bytes;
            if (others < 2)
                continue;
            blocks = draw(&s, 1, others - 1);
            if (rule_shared(&optin, optin.max_smem_per_block, KIT) > blocks ||
                rule_shared(&optin, stat, KIT) <= blocks)
                continue; /* out of reach, or no throttle needed */
            bytes = throttle_bytes(r->model, &optin, threads, regs, stat, blocks);
            throttles++;
            if (throttle_right(&optin, stat, bytes, blocks)) {
                throttles_right++;
                continue;
            }
            if (r->throttles_wrong == 0)
                fprintf(stderr, "%s: %s: shared_memory_for_blocks(%d threads, %d registers, %d bytes static, %d "
                                "blocks) = %d bytes, which leaves room for %d blocks by shared memory; the least "
                                "that leaves room for no more than %d is %d bytes, to within %d (TODO(5))\n",
                        kit_program, table[i].name, threads, regs, stat, blocks, bytes,
                        bytes >= 0 && stat + bytes <= optin.max_smem_per_block ? rule_shared(&optin, stat + bytes, KIT)
                                                                                : -1,
                        blocks, throttle_bytes(KIT, &optin, threads, regs, stat, blocks), optin.smem_alloc_unit);
            r->throttles_wrong++;
        }
        r->throttles += throttles;
        fprintf(out, "%-26s %2d.%d %15d %7d %18d %7d of %3d\n", table[i].name, table[i].cc_major,
                table[i].cc_minor, r->t.checked - was.checked, r->t.checked - was.checked - (r->t.wrong - was.wrong),
                r->t.exposing - was.exposing, throttles_right, throttles);
    }
    /* Scenario 2's threads per block (TODO(6)), for GPUs of many sizes
     * (the course's 15 SMX, a laptop's few SMs, a T4's 40, an H100's 132,
     * and drawn ones) and element counts from a warp to beyond one block
     * per SM of 1,024 threads. */
    static const int sm_counts[] = {1, 2, 5, 15, 16, 20, 28, 40, 46, 58, 80, 82, 108, 128, 132, 142, 170};
    const int gpu_sizes = KIT_COUNT(sm_counts) + 8;
    for (int k = 0; k < gpu_sizes; k++) {
        int sms = k < KIT_COUNT(sm_counts) ? sm_counts[k] : draw(&s, 1, 200);
        for (int e = 0; e < 22; e++) {
            unsigned int n = e < 16 ? 32u << e : (unsigned int)draw(&s, 1, 1 << 22);
            int t = scenario2_of(r->model, n, sms);
            const char *why = scenario2_wrong(t, n, sms);
            r->scenario2_checks++;
            if (why && r->scenario2_wrong++ == 0)
                fprintf(stderr, "%s: scenario2_threads_per_block(n = %u, %d SMs) = %d: %s (TODO(6))\n", kit_program,
                        n, sms, t, why);
        }
    }
    fprintf(out, "scenario 2's threads per block (TODO(6)): %d of %d right, on %d GPU sizes\n\n",
            r->scenario2_checks - r->scenario2_wrong, r->scenario2_checks, gpu_sizes);
    fprintf(out, "(expose a mistake: configurations where registers counted per thread, not rounded per warp\n"
            "or taken from one pool, no reserved shared memory, or blocks not in whole warps give\n"
            "another answer; throttles: shared_memory_for_blocks, right of drawn)\n\n");
}

static void cpu_facts(const cpu_check *r)
{
    char key[48];
    kit_kv("calculator", "%s", model_names[r->model]);
    for (int i = 0, t = 32; i < 6; i++, t *= 2) {
        snprintf(key, sizeof key, "k40-occupancy-%d", t);
        kit_kv(key, "%.4f", r->k40[i]);
    }
    kit_kv("calculator-cpu-configurations", "%d", r->t.checked);
    kit_kv("calculator-cpu-mismatches", "%d", r->t.wrong);
    kit_kv("calculator-cpu-exposing", "%d", r->t.exposing);
    kit_kv("calculator-first-drawn", "%s", r->first_drawn);
    kit_kv("throttle-cpu-checks", "%d", r->throttles);
    kit_kv("throttle-cpu-mismatches", "%d", r->throttles_wrong);
    kit_kv("scenario2-cpu-checks", "%d", r->scenario2_checks);
    kit_kv("scenario2-cpu-mismatches", "%d", r->scenario2_wrong);
}

/* The calculator's verdict, the same on the CPU and on a GPU. */
static int cpu_verdict(const cpu_check *r)
{
    int ok = 1;
    if (!r->k40_ok) {
        fprintf(stderr, "%s: the calculator does not give the course's K40 table (25%%, 50%%, then 100%%): see "
                        "TODO(1) and TODO(2)\n", kit_program);
        ok = 0;
    }
    if (r->t.wrong) {
        fprintf(stderr, "%s: the calculator disagrees with the rules in %d of %d configurations on the kit's table of "
                        "GPUs:",
                kit_program, r->t.wrong, r->t.checked);
        for (int i = 0; i < 3; i++)
            if (r->t.wrong_func[i])
                fprintf(stderr, " %s in %d (%s);", limit_funcs[i], r->t.wrong_func[i], limit_todos[i]);
        fprintf(stderr, " the first ones are above\n");
        ok = 0;
    }
    if (r->throttles_wrong) {
        fprintf(stderr, "%s: shared_memory_for_blocks is wrong in %d of %d throttles on the kit's table of GPUs "
                        "(TODO(5))\n", kit_program, r->throttles_wrong, r->throttles);
        ok = 0;
    }
    if (r->scenario2_wrong) {
        fprintf(stderr, "%s: scenario2_threads_per_block is wrong in %d of %d launches on GPUs of many sizes "
                        "(TODO(6))\n", kit_program, r->scenario2_wrong, r->scenario2_checks);
        ok = 0;
    }
    if (r->throttles == 0) {
        fprintf(stderr, "%s: internal: no throttle was drawn\n", kit_program);
        ok = 0;
    }
    return ok;
}

/* ---- on this GPU: the runtime's own answers ----------------------------------- */

/* A kernel the calculator is checked on: the lab file's, both builds, and
 * the kit's own, whose register counts are chosen to expose mistakes. */
typedef struct {
    const char *name;
    const void *fn;
} kernel_ref;

/* This GPU's limits: counts from the device, units by compute capability
 * (as cuda_occupancy.h has them), the shared memory a block of this kernel
 * may declare from its attributes. */
static gpu_limits limits_of(const kit_device *d, const struct cudaFuncAttributes *fa)
{
    gpu_limits g;
    g.name = d->name;
    g.cc_major = d->cc_major;
    g.cc_minor = d->cc_minor;
    g.warp_size = d->warp_size;
    g.max_threads_per_block = d->max_threads_per_block;
    g.max_warps_per_sm = d->max_warps_per_sm;
    g.max_blocks_per_sm = d->max_blocks_per_sm;
    g.regs_per_sm = d->regs_per_sm;
    g.max_regs_per_block = d->regs_per_block;
    g.reg_alloc_unit = 256;
    g.sub_partitions = 4;
    g.smem_per_sm = (int)d->smem_per_sm;
    g.max_smem_per_block = fa ? (int)(fa->sharedSizeBytes + fa->maxDynamicSharedSizeBytes) : (int)d->smem_per_block;
    g.smem_alloc_unit = d->cc_major >= 8 ? 128 : 256;
    g.smem_reserved_per_block = (int)d->smem_reserved_per_block;
    return g;
}

static int runtime_blocks(const void *fn, int threads, int dynamic)
{
    int n = 0;
    KIT_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fn, threads, (size_t)dynamic));
    return n;
}

/* A configuration of one kernel on this GPU: block sizes up to the
 * kernel's limit, dynamic shared memory up to its own. */
typedef struct {
    const gpu_limits *g;
    const char *name;
    int regs, static_smem, max_threads, max_dynamic;
} kernel_ctx;

static config pick_kernel(unsigned long long *s, const void *ctx)
{
    const kernel_ctx *k = (const kernel_ctx *)ctx;
    config c;
    c.g = k->g;
    c.kernel = k->name;
    c.threads = draw(s, 1, k->max_threads);
    c.regs = k->regs;
    c.smem = k->static_smem + (draw(s, 0, 2) ? 0 : draw(s, 0, k->max_dynamic));
    return c;
}

typedef struct {
    tally t;       /* against the runtime */
    int kit_wrong; /* the kit's own rules against the runtime */
} gpu_check;

static void check_gpu(gpu_check *r, enum model m, const kit_device *d, const kernel_ref *kernels, int nk,
                      unsigned long long seed, FILE *out)
{
    static const int grid_threads[] = {32, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 896, 1024};
    static const int grid_smem[] = {0, 1000, 8192, 30000};
    unsigned long long s = seed ^ 0x6b6e6c73ull;

    memset(r, 0, sizeof *r);
    fprintf(out, "Your calculator against cudaOccupancyMaxActiveBlocksPerMultiprocessor on this GPU:\n"
            "%-34s %10s %8s %15s %7s %18s\n", "kernel", "registers", "static", "configurations", "agree",
            "expose a mistake");
    for (int k = 0; k < nk; k++) {
        struct cudaFuncAttributes fa;
        gpu_limits g;
        kernel_ctx kc;
        config list[160];
        int n = 0;
        tally was = r->t; /* this kernel's row: what the tally gains */

        KIT_CHECK(cudaFuncGetAttributes(&fa, kernels[k].fn));
        g = limits_of(d, &fa);
        kc.g = &g;
        kc.name = kernels[k].name;
        kc.regs = fa.numRegs;
        kc.static_smem = (int)fa.sharedSizeBytes;
        kc.max_threads = imin(fa.maxThreadsPerBlock, d->max_threads_per_block);
        kc.max_dynamic = fa.maxDynamicSharedSizeBytes;
        for (int i = 0; i < KIT_COUNT(grid_threads); i++)
            for (int j = 0; j < KIT_COUNT(grid_smem); j++) {
                config c = {&g, kernels[k].name, grid_threads[i], fa.numRegs, kc.static_smem + grid_smem[j]};
                if (grid_threads[i] <= kc.max_threads && grid_smem[j] <= kc.max_dynamic)
                    list[n++] = c;
            }
        n += draw_configs(list + n, 160 - n, GPU_DRAWN, pick_kernel, &kc, &s);
        for (int i = 0; i < n; i++) {
            int api = runtime_blocks(kernels[k].fn, list[i].threads, list[i].smem - kc.static_smem);
            int kit = calculate(KIT, &g, list[i].threads, list[i].regs, list[i].smem).blocks;
            if (kit != api && r->kit_wrong++ < SHOWN) {
                char what[256];
                describe(what, sizeof what, &list[i]);
                fprintf(stderr, "%s: note: %s: the kit's own rules give %d blocks per SM, the runtime %d\n",
                        kit_program, what, kit, api);
            }
            check_one(m, &list[i], api, &r->t);
        }
        fprintf(out, "%-34s %10d %8d %15d %7d %18d\n", kernels[k].name, fa.numRegs, kc.static_smem,
                r->t.checked - was.checked, r->t.checked - was.checked - (r->t.wrong - was.wrong),
                r->t.exposing - was.exposing);
    }
    fprintf(out, "\n");
    if (r->kit_wrong)
        fprintf(stderr, "%s: note: the kit's own rules disagree with the runtime in %d configurations on %s "
                        "(compute capability %d.%d): the kit may not know this GPU's rules\n",
                kit_program, r->kit_wrong, d->name, d->cc_major, d->cc_minor);
}

/* ---- the kit's own kernels ------------------------------------------------------ */

/*
 * For the partial wave: work bound by each SM's own arithmetic, not by a
 * resource the whole GPU shares, and the same for every warp. `zero` is
 * always 0 but unknown to the compiler, so the loop stays and C = A. The
 * load comes first and the loop depends on it, so that the trace's first
 * access is the warp's start. Built twice: plain and counting pointers.
 */
template <typename In, typename Out>
__global__ void wave_kernel(In A, Out C, unsigned int n, int steps, unsigned int zero)
{
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float a;
    unsigned int h;

    if (tid >= n)
        return;
    a = A[tid];
    h = tid + (__float_as_uint(a) & zero);
    for (int i = 0; i < steps; i++)
        h = h * 1664525u + 1013904223u;
    C[tid] = a + (float)(h & zero);
}

/* Kernels with chosen register counts (and one with static shared memory),
 * never launched, for the calculator's check: 37, 45 and 100 registers
 * expose the mistakes on GPUs of 64, 48 and 32 warps per SM. */
#if defined(__CUDACC_VER_MAJOR__) &&                                                                         \
    (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 4))
#define PROBE_REGISTERS(r) __maxnreg__(r)
#else
#define PROBE_REGISTERS(r) __launch_bounds__(1024 / ((r) / 32 + 1))
#endif
#define PROBE_VALUES 128

static __device__ __forceinline__ void probe_body(float *out, int n, float *pad)
{
    float v[PROBE_VALUES], s = 0.0f;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int k = 0; k < PROBE_VALUES; k++)
        v[k] = out[(i + k * 97) % n];
    for (int r = 0; r < 8; r++)
#pragma unroll
        for (int k = 0; k < PROBE_VALUES; k++)
            v[k] = v[k] * v[(k + 1) % PROBE_VALUES] + 1.0f;
#pragma unroll
    for (int k = 0; k < PROBE_VALUES; k++)
        s += v[k];
    if (pad) {
        pad[threadIdx.x % 777] = s;
        __syncthreads();
        s += pad[(threadIdx.x + 1) % 777];
    }
    if (i < n)
        out[i] = s;
}

static __global__ void PROBE_REGISTERS(37) probe_37(float *out, int n) { probe_body(out, n, NULL); }
static __global__ void PROBE_REGISTERS(100) probe_100(float *out, int n) { probe_body(out, n, NULL); }
static __global__ void PROBE_REGISTERS(45) probe_45_shared(float *out, int n)
{
    __shared__ float pad[777]; /* 3,108 bytes: not a whole allocation unit */
    probe_body(out, n, pad);
}

/* ======== the measured kernels ================================================= */

enum kind { SCENARIO, WAVE, SHAPE, HEAVY, THROTTLE };

/* The arrays every part shares: inputs A and B, output C, the kept output. */
typedef struct {
    size_t cap; /* floats each */
    float *dA, *dB, *dC, *dKeep;
    float *hA, *hB, *hC;
    /* heavy: each element's input is one of HEAVY_INPUTS values */
    unsigned short *heavy_index;
    float heavy_want[HEAVY_INPUTS];
} arrays;

typedef struct {
    enum kind kind;
    int bounded;             /* HEAVY: heavy_bounded */
    dim3 grid, block;
    int smem;                /* dynamic shared memory per block */
    unsigned int n;          /* elements written */
    int nx, ny;              /* SHAPE, THROTTLE */
    int work;                /* SCENARIO: iterations; WAVE: steps; HEAVY: rounds */
    int trace_work;          /* SCENARIO: the traced copy's iterations */
    int trace_only;          /* the counting launch counts nothing but the trace */
    arrays *a;
    kit_counter *counter;
    const kit_device *dev;
    kit_trace_stats trace;   /* of the counting launch */
} run_t;

static unsigned long long warps_of(const run_t *r)
{
    unsigned int threads = r->block.x * r->block.y * r->block.z;
    return (unsigned long long)r->grid.x * r->grid.y * r->grid.z * ((threads + 31) / 32);
}

static const void *kernel_of(const run_t *r, int counting)
{
    const void *const *k = counting ? kit_kernels_counted : kit_kernels_timed;
    switch (r->kind) {
    case SCENARIO: return k[KIT_KERNEL_scenario_kernel];
    case SHAPE:
    case THROTTLE: return k[KIT_KERNEL_sumMatrixOnGPU2D];
    case HEAVY: return k[r->bounded ? KIT_KERNEL_heavy_bounded : KIT_KERNEL_heavy];
    case WAVE:
        return counting ? (const void *)wave_kernel<kit_counted_ptr<const float>, kit_counted_ptr<float> >
                        : (const void *)wave_kernel<const float *, float *>;
    }
    return NULL;
}

static cudaError_t launch_status(const run_t *r, int counting)
{
    const float *A = r->a->dA, *B = r->a->dB;
    float *C = r->a->dC;
    unsigned int n = r->n;
    int work = counting && r->kind == SCENARIO ? r->trace_work : r->work, nx = r->nx, ny = r->ny;
    unsigned int zero = 0;
    void *args_scenario[] = {(void *)&A, (void *)&B, (void *)&C, (void *)&n, (void *)&work};
    void *args_matrix[] = {(void *)&A, (void *)&B, (void *)&C, (void *)&nx, (void *)&ny};
    void *args_heavy[] = {(void *)&A, (void *)&C, (void *)&n, (void *)&work};
    void *args_wave[] = {(void *)&A, (void *)&C, (void *)&n, (void *)&work, (void *)&zero};
    void **args = r->kind == SCENARIO ? args_scenario
                  : r->kind == HEAVY  ? args_heavy
                  : r->kind == WAVE   ? args_wave
                                      : args_matrix;

    return cudaLaunchKernel(kernel_of(r, counting), r->grid, r->block, args, (size_t)r->smem, 0);
}

static void launch(const run_t *r, int counting) { KIT_CHECK(launch_status(r, counting)); }

static kit_counts run_counted(void *p)
{
    run_t *r = (run_t *)p;
    kit_count_config cfg;
    kit_counts c;
    unsigned long long warps = warps_of(r);

    if (warps > r->counter->cfg.trace_cap)
        kit_die(KIT_EXIT_FAIL, "internal: %llu warps, but the trace has room for %llu", warps,
                r->counter->cfg.trace_cap);
    kit_counter_reset(r->counter, NULL, 0);
    cfg = r->trace_only ? kit_counter_trace_only(r->counter) : r->counter->cfg;
    if (r->kind == WAVE)
        kit_count_configure_here(&cfg);
    else
        counted->configure_counting(&cfg);
    launch(r, 1);
    KIT_CHECK_LAUNCH();
    c = kit_counter_read(r->counter);
    r->trace = kit_trace_analyze(r->counter->trace_host, (size_t)warps, r->dev->sms, r->dev->max_warps_per_sm);
    return c;
}

static void run_timed(void *p) { launch((const run_t *)p, 0); }

static void run_poison(void *p)
{
    run_t *r = (run_t *)p;
    KIT_CHECK(cudaMemset(r->a->dC, 0xff, (size_t)r->n * sizeof(float)));
}

static void run_keep(void *p)
{
    run_t *r = (run_t *)p;
    KIT_CHECK(cudaMemcpy(r->a->dKeep, r->a->dC, (size_t)r->n * sizeof(float), cudaMemcpyDeviceToDevice));
}

static long long run_compare(void *p)
{
    run_t *r = (run_t *)p;
    return kit_device_differ(r->a->dC, r->a->dKeep, (size_t)r->n * sizeof(float));
}

/* What element i must hold, computed on the CPU. */
static float expected(const run_t *r, unsigned long long i)
{
    const arrays *a = r->a;
    float x = a->hA[i], y = a->hB[i];
    switch (r->kind) {
    case SCENARIO: {
        unsigned int path = (unsigned int)(i / 32) % 4;
        return path == 0 ? x + y : path == 1 ? x - y : path == 2 ? x * y : x / y;
    }
    case WAVE: return x;
    case HEAVY: return a->heavy_want[a->heavy_index[i]];
    default: return x + y;
    }
}

static long long check_range(unsigned long long begin, unsigned long long end, void *ctx, unsigned long long *first)
{
    const run_t *r = (const run_t *)ctx;
    long long bad = 0;
    for (unsigned long long i = begin; i < end; i++)
        if (r->a->hC[i] != expected(r, i) && bad++ == 0)
            *first = i;
    return bad;
}

static long long run_verify(void *p, const kit_row *row)
{
    run_t *r = (run_t *)p;
    unsigned long long first;
    long long bad;

    KIT_CHECK(cudaMemcpy(r->a->hC, r->a->dC, (size_t)r->n * sizeof(float), cudaMemcpyDeviceToHost));
    bad = kit_parallel_check(r->n, check_range, r, &first);
    if (bad)
        fprintf(stderr, "%s: %s: element %llu is %.9g, should be %.9g (%lld wrong)\n", kit_program, row->name, first,
                r->a->hC[first], expected(r, first), bad);
    return bad;
}

static void measure(run_t *r, kit_row *row, const kit_policy *policy)
{
    kit_row_work w = {r, run_counted, run_timed, run_poison, run_verify, run_keep, run_compare, NULL, NULL, NULL};
    kit_row_measure(row, &w, policy);
}

/* The theoretical occupancy of a launch, by the runtime: resident warps over the most. */
static double theoretical(const kit_device *d, const void *fn, dim3 block, int smem, int *blocks_per_sm)
{
    int threads = (int)(block.x * block.y * block.z), b = runtime_blocks(fn, threads, smem);
    if (blocks_per_sm)
        *blocks_per_sm = b;
    return (double)b * ((threads + 31) / 32) / d->max_warps_per_sm;
}

/* ======== the lab, step by step ================================================= */

/* The book's shapes (notes 001), with its figures on a Tesla M2070 and a
 * 16,384 x 16,384 matrix: elapsed ms, achieved occupancy, load efficiency
 * (0 where the book gives none). */
typedef struct {
    int x, y;
    double book_ms, book_achieved, book_gld;
} shape_def;

static const shape_def shapes[] = {
    {32, 32, 60, 0.501071, 100},  {32, 16, 38, 0.736900, 100},  {16, 32, 51, 0.766037, 49.96},
    {16, 16, 46, 0.810691, 49.80}, {64, 2, 33.567, 0.554556, 0},  {64, 4, 34.908, 0.798622, 0},
    {64, 8, 36.651, 0.753532, 0},  {128, 1, 32.602, 0, 0},        {128, 2, 32.688, 0.802598, 0},
    {128, 4, 34.786, 0.746367, 0}, {128, 8, 46.157, 0.573449, 0}, {256, 1, 30.959, 0.808622, 100},
    {256, 2, 32.793, 0.760901, 0}, {256, 4, 38.092, 0.595197, 0}, {256, 8, 0, 0, 0},
};
#define SHAPES ((int)(sizeof shapes / sizeof shapes[0]))

/* The course's K40 times (notes 000), S1 and S2, for n = 32 ... 65,536. */
static const double course_s1[] = {0.35, 0.41, 0.69, 0.70, 0.71, 0.74, 0.75, 0.75, 0.75, 0.91, 1.6, 2.49};
static const double course_s2[] = {0.35, 0.41, 0.69, 0.69, 0.69, 0.70, 0.70, 0.72, 0.74, 0.91, 1.6, 2.49};

typedef struct {
    run_t run;
    kit_row row;
    double theoretical, counted_theoretical;
    int blocks_per_sm, regs, counted_regs, launched;
    size_t local_bytes; /* per thread: registers spilled to local memory, and local arrays */
    char error[96];
} measured;

struct lab {
    kit_run run; /* options, the GPU, the timing, the verdict */
    enum model model;
    int iterations, max_n, rounds, launch_illegal, calculator_only;
    const char *model_name;
    int side; /* the matrix of Parts 4 and 5 */
    arrays a;
    /* Part 1 */
    cpu_check cpu;
    gpu_check gpu;
    char *part1_text; /* its tables for people */
    size_t part1_length;
    /* Part 2 */
    int nsizes;
    measured sc[MAX_SIZES][2]; /* scenarios 1 and 2 of each n */
    measured sweep[SWEEP_ROWS];
    int nsweep, sweep_n, sweep_choice, sweep_best, sweep_mine; /* choice: threads; best, mine: rows */
    double sweep_vs[SWEEP_ROWS]; /* each row's time over the fastest's: the choice's is sweep_vs[sweep_mine] */
    double sweep_limit;
    const char *sweep_unjudged; /* why the choice was not judged on its time, or NULL */
    /* Part 3 */
    measured wave[2];
    int wave_per_sm;
    /* Part 4 */
    measured shape[SHAPES];
    /* Part 5 */
    measured heavy[2];
    int heavy_max_threads, heavy_predicted[2], heavy_target_blocks;
    measured throttle[8];
    int nthrottle, throttle_target[8], throttle_predicted[8], throttle_ok[8]; /* bytes asked: the row's run.smem */
    int throttle_kit_bytes[8], throttle_unit, unthrottled;
};

/* A row made new for a launch of `kind`, traced with no other counts. */
static void row_init(measured *m, lab *L, enum kind kind, kit_counter *counter)
{
    *m = measured();
    m->run.kind = kind;
    m->run.a = &L->a;
    m->run.counter = counter;
    m->run.dev = &L->run.dev;
    m->run.trace_only = 1;
}

/* Counted, checked, timed; the theoretical occupancy of both builds. The
 * row's own verdict (every element right in every run) as it is measured;
 * the parts' verdicts say what the rows alone cannot. */
static void measure_row(lab *L, measured *m)
{
    const void *fn = kernel_of(&m->run, 0), *fc = kernel_of(&m->run, 1);
    struct cudaFuncAttributes fa;
    m->theoretical = theoretical(&L->run.dev, fn, m->run.block, m->run.smem, &m->blocks_per_sm);
    m->counted_theoretical = theoretical(&L->run.dev, fc, m->run.block, m->run.smem, NULL);
    KIT_CHECK(cudaFuncGetAttributes(&fa, fn));
    m->regs = fa.numRegs;
    m->local_bytes = fa.localSizeBytes;
    KIT_CHECK(cudaFuncGetAttributes(&fa, fc));
    m->counted_regs = fa.numRegs;
    measure(&m->run, &m->row, &L->run.policy);
    m->launched = 1;
    if (!kit_row_ok(&m->row, m->run.n))
        L->run.pass = 0;
}

static double ms_of(const measured *m) { return m->launched && m->row.timed ? m->row.t.median_ms : 0.0; }

static double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

static const char *check_word(const measured *m) { return m->launched ? kit_row_check_word(&m->row) : "-"; }

/* A part's rows in the CSV, one table for every part: the part, the row's
 * key, its launch and occupancy, its time. A row not launched has no line. */
static void csv_rows(const lab *L, FILE *csv, int part, const measured *m, int n)
{
    for (; n > 0; n--, m++) {
        if (!m->launched)
            continue;
        kit_csv_prefix(csv, &L->run.dev, (unsigned long long)L->side * L->side, L->run.c.seed);
        fprintf(csv, "%d,%s,%u,%llu,%d,%.4f,%.4f,%.4f,%.6f,%d\n", part, m->row.key, m->run.block.x * m->run.block.y,
                (unsigned long long)m->run.grid.x * m->run.grid.y, m->blocks_per_sm, m->theoretical,
                m->run.trace.achieved_occupancy, m->run.trace.sm_efficiency, ms_of(m), m->row.wrong == 0);
    }
}

/* A key: value line under row m's key: "KEY-suffix: value". */
static void row_kv(const measured *m, const char *suffix, const char *fmt, ...)
{
    char key[80], value[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    snprintf(key, sizeof key, "%s-%s", m->row.key, suffix);
    kit_kv(key, "%s", value);
}

/* Rows' key: value lines, each under its key (not launched: none). */
static void measured_kv(const measured *m, int n)
{
    for (; n > 0; n--, m++) {
        if (!m->launched)
            continue;
        kit_row_kv(&m->row);
        row_kv(m, "threads", "%u", m->run.block.x * m->run.block.y);
        row_kv(m, "blocks", "%llu", (unsigned long long)m->run.grid.x * m->run.grid.y);
        row_kv(m, "registers", "%d", m->regs);
        row_kv(m, "blocks-per-sm", "%d", m->blocks_per_sm);
        row_kv(m, "theoretical", "%.4f", m->theoretical);
        row_kv(m, "counted-theoretical", "%.4f", m->counted_theoretical);
        row_kv(m, "achieved", "%.4f", m->run.trace.achieved_occupancy);
        row_kv(m, "sm-efficiency", "%.4f", m->run.trace.sm_efficiency);
        row_kv(m, "peak-warps-per-sm", "%d", m->run.trace.peak_warps_per_sm);
        row_kv(m, "traced-warps", "%llu", m->run.trace.warps);
    }
}

/* ---- Part 1: the calculator --------------------------------------------------- */

static void part1_measure(lab *L)
{
    kernel_ref kernels[] = {
        {"scenario_kernel", kit_kernels_timed[KIT_KERNEL_scenario_kernel]},
        {"sumMatrixOnGPU2D", kit_kernels_timed[KIT_KERNEL_sumMatrixOnGPU2D]},
        {"heavy", kit_kernels_timed[KIT_KERNEL_heavy]},
        {"heavy_bounded", kit_kernels_timed[KIT_KERNEL_heavy_bounded]},
        {"scenario_kernel (counting copy)", kit_kernels_counted[KIT_KERNEL_scenario_kernel]},
        {"sumMatrixOnGPU2D (counting copy)", kit_kernels_counted[KIT_KERNEL_sumMatrixOnGPU2D]},
        {"heavy (counting copy)", kit_kernels_counted[KIT_KERNEL_heavy]},
        {"the kit's wave_kernel", (const void *)wave_kernel<const float *, float *>},
        {"the kit's probe_37", (const void *)probe_37},
        {"the kit's probe_45_shared", (const void *)probe_45_shared},
        {"the kit's probe_100", (const void *)probe_100},
    };
    /* Its tables are written as it checks, as without a GPU: here into
     * memory, printed in their turn after the banner. */
    FILE *out = open_memstream(&L->part1_text, &L->part1_length);
    if (!out)
        kit_die(KIT_EXIT_FAIL, "internal: no memory for Part 1's tables");
    fprintf(out, "Part 1: the occupancy calculator (TODO(1) to TODO(3), TODO(5) and TODO(6)); calculator: %s\n\n",
            model_help[L->model]);
    check_cpu(&L->cpu, L->model, L->run.c.seed, out);
    check_gpu(&L->gpu, L->model, &L->run.dev, kernels, KIT_COUNT(kernels), L->run.c.seed, out);
    fclose(out);
}

static void part1_print(lab *L) { fputs(L->part1_text, stdout); }

static void part1_kv(lab *L)
{
    cpu_facts(&L->cpu);
    kit_kv("calculator-gpu-configurations", "%d", L->gpu.t.checked);
    kit_kv("calculator-gpu-mismatches", "%d", L->gpu.t.wrong);
    kit_kv("calculator-gpu-exposing", "%d", L->gpu.t.exposing);
    kit_kv("kit-model-gpu-mismatches", "%d", L->gpu.kit_wrong);
}

/* The calculator agrees with the rules everywhere and with the runtime on
 * this GPU. */
static void part1_verdict(lab *L)
{
    if (!cpu_verdict(&L->cpu))
        L->run.pass = 0;
    if (L->gpu.t.wrong) {
        fprintf(stderr, "%s: the calculator disagrees with cudaOccupancyMaxActiveBlocksPerMultiprocessor in %d of %d "
                        "configurations on this GPU (the first ones are above)\n",
                kit_program, L->gpu.t.wrong, L->gpu.t.checked);
        L->run.pass = 0;
    }
}

/* ---- Part 2: the course's two scenarios, and the block sizes ------------------- */

/* The scenario kernel at n elements in blocks of `threads`, the row made
 * and named: counted, checked, timed. */
static void measure_scenario(lab *L, measured *m, unsigned int n, int threads)
{
    m->run.n = n;
    m->run.block = dim3(threads);
    m->run.grid = dim3((n + threads - 1) / threads);
    m->run.work = L->iterations;
    m->run.trace_work = L->iterations / TRACE_DIVISOR > 0 ? L->iterations / TRACE_DIVISOR : 1;
    measure_row(L, m);
}

static void part2_scenarios(lab *L)
{
    kit_counter counter;

    kit_counter_create(&counter, 0,
                       (unsigned long long)L->max_n / 32 + 64 + (unsigned long long)L->run.dev.sms * 32);
    L->nsizes = 0;
    for (unsigned int n = 32; n <= (unsigned int)L->max_n && L->nsizes < MAX_SIZES; n *= 2, L->nsizes++)
        for (int s = 0; s < 2; s++) {
            measured *m = &L->sc[L->nsizes][s];
            int threads = s == 0 ? (n < 1024 ? (int)n : 1024) : scenario2_of(L->model, n, L->run.dev.sms);
            /* A size no block can have: the rule's, so that the rest runs
             * (the check on the CPU has failed the lab already). */
            if (threads < 1 || threads > 1024)
                threads = scenario2_rule(n, L->run.dev.sms);
            char key[24];
            row_init(m, L, SCENARIO, &counter);
            snprintf(key, sizeof key, "s%d-%u", s + 1, n);
            kit_row_name(&m->row, key, NULL, "scenario %d, n = %u", s + 1, n);
            measure_scenario(L, m, n, threads);
        }
    kit_counter_destroy(&counter);
}

/*
 * The choice against the measurement: scenario 2's kernel at SWEEP_N
 * elements (or the largest n, if smaller) in blocks of 32, 64, ... 1,024
 * threads, and in the student's choice where it is none of these. The
 * fastest of them is this GPU's answer; the choice ties with it within
 * SWEEP_SLACK, widened by how far the two rows' own timed runs spread. It
 * is said, not judged (see part2_verdict). Compared only where the
 * measurement shows what it is about: one block of 1,024 threads at least
 * SWEEP_SHOWN times the fastest (not so with a few iterations, where the
 * launch is the time), and not under compute-sanitizer, whose
 * instrumentation changes what each size costs.
 */
static void part2_block_sizes(lab *L)
{
    kit_counter counter;
    unsigned int n = (unsigned int)L->max_n < SWEEP_N ? (unsigned int)L->max_n : SWEEP_N;
    int choice = scenario2_of(L->model, n, L->run.dev.sms), sizes[SWEEP_ROWS], k = 0;

    L->sweep_n = (int)n;
    L->sweep_choice = choice;
    for (int t = 32; t <= 1024; t *= 2)
        sizes[k++] = t;
    if (choice >= 1 && choice <= 1024 && (choice < 32 || (choice & (choice - 1))))
        sizes[k++] = choice;
    L->nsweep = k;
    L->sweep_best = L->sweep_mine = -1;
    kit_counter_create(&counter, 0, n / 32 + 64 + (unsigned long long)L->run.dev.sms * 32);
    for (int i = 0; i < L->nsweep; i++) {
        measured *m = &L->sweep[i];
        char key[24];
        row_init(m, L, SCENARIO, &counter);
        snprintf(key, sizeof key, "b%u-%d", n, sizes[i]);
        kit_row_name(&m->row, key, NULL, "n = %u, blocks of %d", n, sizes[i]);
        measure_scenario(L, m, n, sizes[i]);
        if (ms_of(m) > 0 && (L->sweep_best < 0 || ms_of(m) < ms_of(&L->sweep[L->sweep_best])))
            L->sweep_best = i;
        if (sizes[i] == choice)
            L->sweep_mine = i;
    }
    kit_counter_destroy(&counter);
    for (int i = 0; i < L->nsweep; i++)
        L->sweep_vs[i] = L->sweep_best >= 0 ? ratio(ms_of(&L->sweep[i]), ms_of(&L->sweep[L->sweep_best])) : 0.0;
    L->sweep_limit = SWEEP_SLACK;
    if (L->sweep_best >= 0 && L->sweep_mine >= 0) {
        const kit_measurement *b = &L->sweep[L->sweep_best].row.t, *c = &L->sweep[L->sweep_mine].row.t;
        L->sweep_limit += (b->max_ms - b->min_ms) / b->median_ms + (c->max_ms - c->min_ms) / c->median_ms;
    }
    L->sweep_unjudged = NULL;
    if (kit_under_sanitizer())
        L->sweep_unjudged = "under compute-sanitizer, times mean nothing";
    else if (L->sweep_best < 0 || L->sweep_vs[SWEEP_WHOLE] < SWEEP_SHOWN)
        L->sweep_unjudged = "one block of 1,024 threads is not 1.25x the fastest here: at this size and iteration "
                            "count the block sizes do not show apart from the launch";
}

static void part2_measure(lab *L) { part2_scenarios(L); part2_block_sizes(L); }

static void part2_print(lab *L)
{
    printf("Part 2: the course's two scenarios, %d iterations, %d SMs (the course's code assumed 16)\n"
           "scenario 1: min(n, 1024) threads per block; scenario 2: the work spread over the SMs first\n\n",
           L->iterations, L->run.dev.sms);
    printf("%7s |%8s %6s %6s %8s %8s %9s |%8s %6s %6s %8s %8s %9s | %6s %6s\n", "", "S1", "", "theor.", "achieved",
           "SM eff.", "", "S2", "", "theor.", "achieved", "SM eff.", "", "S1/S2", "K40");
    printf("%7s |%8s %6s %6s %8s %8s %9s |%8s %6s %6s %8s %8s %9s | %6s %6s\n", "n", "threads", "blocks", "occ.",
           "occ.", "", "time (ms)", "threads", "blocks", "occ.", "occ.", "", "time (ms)", "time", "S1/S2");
    for (int i = 0; i < L->nsizes; i++) {
        printf("%7u |", L->sc[i][0].run.n);
        for (int s = 0; s < 2; s++) {
            const measured *m = &L->sc[i][s];
            printf("%8u %6u %5.0f%% %7.1f%% %7.2f%% %9.3f |", m->run.block.x, m->run.grid.x, 100 * m->theoretical,
                   100 * m->run.trace.achieved_occupancy, 100 * m->run.trace.sm_efficiency, ms_of(m));
        }
        printf(" %5.2fx", ratio(ms_of(&L->sc[i][0]), ms_of(&L->sc[i][1])));
        if (i < KIT_COUNT(course_s1))
            printf(" %5.2fx", course_s1[i] / course_s2[i]);
        printf("\n");
    }
    printf("(achieved occupancy and SM efficiency: traced on each kernel's counting copy at %d iterations)\n\n",
           L->sc[0][0].run.trace_work);
    printf("scenario 2's kernel at n = %d in blocks of every size: which is fastest on this GPU?\n", L->sweep_n);
    printf("%8s %7s %9s %8s %8s  %s\n", "threads", "blocks", "time (ms)", "vs best", "SM eff.", "check");
    for (int i = 0; i < L->nsweep; i++) {
        const measured *m = &L->sweep[i];
        printf("%8u %7u %9.3f %7.2fx %7.1f%%  %s%s\n", m->run.block.x, m->run.grid.x, ms_of(m), L->sweep_vs[i],
               100 * m->run.trace.sm_efficiency, check_word(m), i == L->sweep_mine ? "  <- your choice (TODO(6))" : "");
    }
    if (L->sweep_unjudged)
        printf("(your choice is not compared with the fastest: %s)\n\n", L->sweep_unjudged);
    else
        printf("(within %.2fx of the fastest counts as a tie: 1.15, plus the two rows' spread of timed runs; the\n"
               "verdict on TODO(6) is the rule's, checked on GPUs of many sizes: times shared with other work move)\n\n",
               L->sweep_limit);
}

/* The CSV's head line (one table for every part), then Part 2's rows. */
static void part2_csv(lab *L, FILE *csv)
{
    fprintf(csv, "gpu,size,seed,part,row,threads,blocks,blocks_per_sm,theoretical,achieved,sm_efficiency,time_ms,"
                 "correct\n");
    for (int i = 0; i < L->nsizes; i++)
        csv_rows(L, csv, 2, L->sc[i], 2);
    csv_rows(L, csv, 2, L->sweep, L->nsweep);
}

static void part2_kv(lab *L)
{
    for (int i = 0; i < L->nsizes; i++)
        measured_kv(L->sc[i], 2);
    measured_kv(L->sweep, L->nsweep);
    kit_kv("block-sizes-n", "%d", L->sweep_n);
    kit_kv("scenario2-choice-threads", "%d", L->sweep_choice);
    if (L->sweep_best >= 0)
        kit_kv("block-sizes-fastest-threads", "%u", L->sweep[L->sweep_best].run.block.x);
    if (L->sweep_best >= 0 && L->sweep_mine >= 0)
        kit_kv("scenario2-choice-over-fastest", "%.3f", L->sweep_vs[L->sweep_mine]);
    kit_kv("scenario2-choice-limit", "%.3f", L->sweep_limit);
    kit_kv("scenario2-choice-compared", "%s", L->sweep_unjudged ? L->sweep_unjudged : "yes");
    if (!L->sweep_unjudged && L->sweep_mine >= 0)
        kit_kv("scenario2-choice-within-limit", "%s", L->sweep_vs[L->sweep_mine] <= L->sweep_limit ? "yes" : "no");
}

/* A choice no block can have fails; its time against the fastest is said,
 * not judged: the rule checked in Part 1 is the verdict on TODO(6). */
static void part2_verdict(lab *L)
{
    if (L->sweep_mine < 0) {
        fprintf(stderr, "%s: scenario2_threads_per_block(n = %d, %d SMs) = %d: no block can have that size, so it "
                        "was not measured (TODO(6))\n",
                kit_program, L->sweep_n, L->run.dev.sms, L->sweep_choice);
        L->run.pass = 0;
    } else if (!L->sweep_unjudged) {
        const measured *c = &L->sweep[L->sweep_mine], *b = &L->sweep[L->sweep_best];
        /* Said, not judged: the rule above is the verdict. A grading run
         * shares the GPU with other labs' checked runs and times each size
         * once, so a right choice can read 1.2x there (H100, 2026-11-28). */
        if (L->sweep_vs[L->sweep_mine] > L->sweep_limit)
            fprintf(stderr, "%s: note: scenario 2 at n = %d: your blocks of %u threads took %.3f ms, %.2fx the "
                            "fastest size on this GPU (%u threads, %.3f ms); more than %.2fx: see the block sizes "
                            "under Part 2 (TODO(6))\n",
                    kit_program, L->sweep_n, c->run.block.x, ms_of(c), L->sweep_vs[L->sweep_mine], b->run.block.x,
                    ms_of(b), L->sweep_limit);
    }
}

/* ---- Part 3: a partial last wave ---------------------------------------------- */

static void part3_measure(lab *L)
{
    kit_counter counter;
    int full;

    L->wave_per_sm = runtime_blocks((const void *)wave_kernel<const float *, float *>, 1024, 0);
    full = L->run.dev.sms * L->wave_per_sm;
    kit_counter_create(&counter, 0, (unsigned long long)(full + 1) * 32);
    for (int w = 0; w < 2; w++) {
        measured *m = &L->wave[w];
        row_init(m, L, WAVE, &counter);
        m->run.grid = dim3(full + w);
        m->run.block = dim3(1024);
        m->run.n = (unsigned int)(full + w) * 1024;
        m->run.work = L->iterations * WAVE_STEPS;
        kit_row_name(&m->row, w ? "wave-plus-one" : "wave-full", NULL, "%d blocks of 1024", full + w);
        measure_row(L, m);
    }
    kit_counter_destroy(&counter);
}

static void part3_print(lab *L)
{
    const measured *w = L->wave;
    printf("Part 3: a partial last wave: %d SMs x %d blocks of 1024 threads fill the GPU once\n"
           "(the kit's wave_kernel: %d steps of arithmetic in registers, the same for every warp)\n",
           L->run.dev.sms, L->wave_per_sm, L->iterations * WAVE_STEPS);
    for (int i = 0; i < 2; i++)
        printf("  %5u blocks: %9.3f ms, SM efficiency %5.1f%%, achieved occupancy %5.1f%%  %s\n", w[i].run.grid.x,
               ms_of(&w[i]), 100 * w[i].run.trace.sm_efficiency, 100 * w[i].run.trace.achieved_occupancy,
               check_word(&w[i]));
    printf("one block more (%.2f%% more work) takes %.2fx the time\n\n", 100.0 / w[0].run.grid.x,
           ratio(ms_of(&w[1]), ms_of(&w[0])));
}

static void part3_csv(lab *L, FILE *csv) { csv_rows(L, csv, 3, L->wave, 2); }

static void part3_kv(lab *L)
{
    measured_kv(L->wave, 2);
    kit_kv("wave-blocks-per-sm", "%d", L->wave_per_sm);
    kit_kv("wave-slowdown", "%.3f", ratio(ms_of(&L->wave[1]), ms_of(&L->wave[0])));
}

/* ---- Part 4: the book's 2D block shapes ----------------------------------------- */

static void part4_measure(lab *L)
{
    kit_counter counter;
    unsigned long long most = 0;
    int side = L->side;

    for (int k = 0; k < SHAPES; k++) {
        unsigned long long w = (unsigned long long)((side + shapes[k].x - 1) / shapes[k].x) *
                               ((side + shapes[k].y - 1) / shapes[k].y) * ((shapes[k].x * shapes[k].y + 31) / 32);
        if (shapes[k].x * shapes[k].y <= L->run.dev.max_threads_per_block)
            most = w > most ? w : most;
    }
    kit_counter_create(&counter, 0, most);
    for (int k = 0; k < SHAPES; k++) {
        measured *m = &L->shape[k];
        int bx = shapes[k].x, by = shapes[k].y;
        char key[24];

        row_init(m, L, SHAPE, &counter);
        m->run.trace_only = 0; /* segments and sectors per request too */
        m->run.block = dim3(bx, by);
        m->run.grid = dim3((side + bx - 1) / bx, (side + by - 1) / by);
        m->run.nx = m->run.ny = side;
        m->run.n = (unsigned int)((size_t)side * side);
        snprintf(key, sizeof key, "shape-%dx%d", bx, by);
        kit_row_name(&m->row, key, NULL, "sumMatrixOnGPU2D (%d,%d)", bx, by);
        if (bx * by > L->run.dev.max_threads_per_block) {
            /* The book launched it and got an error; --launch-illegal does too. */
            if (L->launch_illegal) {
                cudaError_t e = launch_status(&m->run, 0);
                (void)cudaGetLastError(); /* the error is the launch's, not a sticky one */
                snprintf(m->error, sizeof m->error, "%s: %d threads per block, at most %d", cudaGetErrorName(e),
                         bx * by, L->run.dev.max_threads_per_block);
            } else
                snprintf(m->error, sizeof m->error, "not launched: %d threads per block, at most %d", bx * by,
                         L->run.dev.max_threads_per_block);
            continue;
        }
        measure_row(L, m);
    }
    kit_counter_destroy(&counter);
}

static void part4_print(lab *L)
{
    printf("Part 4: the book's sumMatrixOnGPU2D on a %d x %d matrix of floats (%.0f MiB each), beside the\n"
           "book's Tesla M2070 on 16,384 x 16,384\n\n", L->side, L->side, (double)L->side * L->side * 4 / 1048576);
    printf("%-9s %-12s %10s %7s %9s %8s %8s %9s | %9s %9s %7s\n", "block", "grid", "time (ms)", "theor.", "achieved",
           "segments", "sectors", "load eff.", "book ms", "achieved", "ld eff.");
    for (int k = 0; k < SHAPES; k++) {
        const measured *m = &L->shape[k];
        char blk[16], grd[32];
        snprintf(blk, sizeof blk, "(%d,%d)", shapes[k].x, shapes[k].y);
        if (!m->launched) {
            printf("%-9s %s", blk, m->error);
            if (shapes[k].x * shapes[k].y > 1024)
                printf("   (book: invalid configuration argument)");
            printf("\n");
            continue;
        }
        snprintf(grd, sizeof grd, "(%u,%u)", m->run.grid.x, m->run.grid.y);
        printf("%-9s %-12s %10.3f %6.0f%% %8.1f%% %8.2f %8.2f %8.0f%% |", blk, grd, ms_of(m), 100 * m->theoretical,
               100 * m->run.trace.achieved_occupancy, kit_row_segments(&m->row), kit_row_sectors(&m->row),
               100 * kit_row_load_efficiency(&m->row));
        printf(" %9.3f", shapes[k].book_ms);
        if (shapes[k].book_achieved > 0)
            printf(" %8.1f%%", 100 * shapes[k].book_achieved);
        else
            printf(" %9s", "-");
        if (shapes[k].book_gld > 0)
            printf(" %6.1f%%", shapes[k].book_gld);
        else
            printf(" %7s", "-");
        printf("  %s\n", check_word(m));
    }
    printf("(segments and sectors per load request, and load efficiency, counted on the counting copy;\n"
           "the book's load efficiency is nvprof's gld_efficiency on Fermi, whose L1 fetched 128-byte lines)\n\n");
}

static void part4_csv(lab *L, FILE *csv) { csv_rows(L, csv, 4, L->shape, SHAPES); }

static void part4_kv(lab *L)
{
    for (const measured *m = L->shape; m < L->shape + SHAPES; m++) {
        row_kv(m, "valid", "%s", m->launched ? "yes" : "no");
        measured_kv(m, 1);
        if (m->launched) {
            row_kv(m, "segments-per-request", "%.4f", kit_row_segments(&m->row));
            row_kv(m, "sectors-per-request", "%.4f", kit_row_sectors(&m->row));
        }
    }
}

/* ---- Part 5: occupancy by design ------------------------------------------------ */

/* heavy's inputs: each element one of HEAVY_INPUTS values drawn from the
 * seed, whose results the CPU computes once each, exactly as the kernel. */
static void heavy_inputs(lab *L, unsigned int n)
{
    arrays *a = &L->a;
    unsigned long long s = L->run.c.seed ^ 0x68656176ull;
    float values[HEAVY_INPUTS];

    a->heavy_index = (unsigned short *)kit_host_alloc((size_t)n * sizeof(unsigned short));
    for (int j = 0; j < HEAVY_INPUTS; j++) {
        float v[HEAVY_VALUES], x = (float)((splitmix64(&s) >> 40) + 1) / 16777216.0f, sum = 0.0f;
        values[j] = x;
        for (int k = 0; k < HEAVY_VALUES; k++)
            v[k] = x * (float)(k + 1);
        for (int r = 0; r < L->rounds; r++)
            for (int k = 0; k < HEAVY_VALUES; k++)
                v[k] = v[k] * 0.5f + v[(k + 1) % HEAVY_VALUES] * 0.25f + x;
        for (int k = 0; k < HEAVY_VALUES; k++)
            sum += v[k];
        a->heavy_want[j] = sum;
    }
    for (unsigned int i = 0; i < n; i++) {
        a->heavy_index[i] = (unsigned short)(splitmix64(&s) % HEAVY_INPUTS);
        a->hA[i] = values[a->heavy_index[i]];
    }
    KIT_CHECK(cudaMemcpy(a->dA, a->hA, (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
}

static void part5_heavy(lab *L)
{
    kit_counter counter;
    unsigned int n = (unsigned int)HEAVY_WAVES * L->run.dev.sms * L->run.dev.max_threads_per_sm;
    struct cudaFuncAttributes fa;

    heavy_inputs(L, n);
    kit_counter_create(&counter, 0, n / 32 + 32);
    L->heavy_target_blocks = HEAVY_TARGET_WARPS / (HEAVY_THREADS / 32);
    KIT_CHECK(cudaFuncGetAttributes(&fa, kit_kernels_timed[KIT_KERNEL_heavy_bounded]));
    L->heavy_max_threads = fa.maxThreadsPerBlock;
    for (int b = 0; b < 2; b++) {
        measured *m = &L->heavy[b];
        struct cudaFuncAttributes f;
        gpu_limits g;
        row_init(m, L, HEAVY, &counter);
        m->run.bounded = b;
        m->run.block = dim3(HEAVY_THREADS);
        m->run.grid = dim3((n + HEAVY_THREADS - 1) / HEAVY_THREADS);
        m->run.n = n;
        m->run.work = L->rounds;
        kit_row_name(&m->row, b ? "heavy-bounded" : "heavy", b ? "TODO(4)" : NULL, b ? "heavy_bounded" : "heavy");
        /* Your calculator's prediction, from the registers the compiler chose. */
        KIT_CHECK(cudaFuncGetAttributes(&f, kernel_of(&m->run, 0)));
        g = limits_of(&L->run.dev, &f);
        L->heavy_predicted[b] = calculate(L->model, &g, HEAVY_THREADS, f.numRegs, (int)f.sharedSizeBytes).blocks;
        if (b && L->heavy_max_threads < HEAVY_THREADS) {
            snprintf(m->error, sizeof m->error, "its __launch_bounds__ allow %d threads per block, not %d",
                     L->heavy_max_threads, HEAVY_THREADS);
            m->regs = f.numRegs;
            continue;
        }
        measure_row(L, m);
    }
    kit_counter_destroy(&counter);
}

static void part5_throttle(lab *L)
{
    kit_counter counter;
    const void *fn = kit_kernels_timed[KIT_KERNEL_sumMatrixOnGPU2D];
    const void *fc = kit_kernels_counted[KIT_KERNEL_sumMatrixOnGPU2D];
    int side = L->side, opt = (int)L->run.dev.smem_per_block_optin;
    unsigned long long warps = (unsigned long long)((side + THROTTLE_X - 1) / THROTTLE_X) * side * (THROTTLE_X / 32);
    struct cudaFuncAttributes fa;
    gpu_limits g;

    /* Any block may take all the shared memory a block can opt in to. */
    for (int k = 0; k < 2; k++) {
        const void *f = k ? fc : fn;
        KIT_CHECK(cudaFuncGetAttributes(&fa, f));
        KIT_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, opt - (int)fa.sharedSizeBytes));
        KIT_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       cudaSharedmemCarveoutMaxShared));
    }
    KIT_CHECK(cudaFuncGetAttributes(&fa, fn));
    g = limits_of(&L->run.dev, &fa);
    L->unthrottled = runtime_blocks(fn, THROTTLE_X, 0);
    L->throttle_unit = g.smem_alloc_unit;
    kit_counter_create(&counter, 0, warps);
    L->nthrottle = 0;
    for (int blocks = L->unthrottled; blocks >= 1 && L->nthrottle < 8; blocks /= 2) {
        int i = L->nthrottle++;
        measured *m = &L->throttle[i];
        int bytes = 0, fits;
        char key[24];

        row_init(m, L, THROTTLE, &counter);
        L->throttle_target[i] = blocks;
        if (blocks < L->unthrottled) {
            bytes = throttle_bytes(L->model == YOURS ? YOURS : KIT, &g, THROTTLE_X, fa.numRegs,
                                   (int)fa.sharedSizeBytes, blocks);
            L->throttle_kit_bytes[i] = throttle_bytes(KIT, &g, THROTTLE_X, fa.numRegs, (int)fa.sharedSizeBytes, blocks);
            L->throttle_ok[i] = throttle_right(&g, (int)fa.sharedSizeBytes, bytes, blocks) &&
                                runtime_blocks(fn, THROTTLE_X, bytes) <= blocks;
        } else
            L->throttle_ok[i] = 1;
        fits = bytes >= 0 && (int)fa.sharedSizeBytes + bytes <= g.max_smem_per_block; /* a block may have it */
        L->throttle_predicted[i] =
            fits ? calculate(L->model, &g, THROTTLE_X, fa.numRegs, (int)fa.sharedSizeBytes + bytes).blocks : -1;
        m->run.block = dim3(THROTTLE_X, 1);
        m->run.grid = dim3((side + THROTTLE_X - 1) / THROTTLE_X, side);
        m->run.nx = m->run.ny = side;
        m->run.n = (unsigned int)((size_t)side * side);
        m->run.smem = bytes;
        snprintf(key, sizeof key, "throttle-%d", blocks);
        kit_row_name(&m->row, key, blocks < L->unthrottled ? "TODO(5)" : NULL, "(128,1), %d block%s/SM", blocks,
                     blocks > 1 ? "s" : "");
        if (!fits) {
            snprintf(m->error, sizeof m->error, "not launched: %d bytes of dynamic shared memory", bytes);
            continue;
        }
        measure_row(L, m);
    }
    kit_counter_destroy(&counter);
}

static void part5_measure(lab *L) { part5_heavy(L); part5_throttle(L); }

static void part5_print(lab *L)
{
    printf("Part 5: occupancy by design\n\n"
           "heavy (given) and heavy_bounded (TODO(4)): %d threads per block, target %d warps per SM, %d rounds\n",
           HEAVY_THREADS, HEAVY_TARGET_WARPS, L->rounds);
    printf("%-14s %9s %8s %12s %12s %10s %10s %10s  %s\n", "kernel", "registers", "local B", "your blocks",
           "runtime's", "theor.", "achieved", "time (ms)", "check");
    for (int b = 0; b < 2; b++) {
        const measured *m = &L->heavy[b];
        if (!m->launched) {
            printf("%-14s %9d   not launched: %s\n", m->row.name, m->regs, m->error);
            continue;
        }
        printf("%-14s %9d %8zu %12d %12d %9.1f%% %9.1f%% %10.3f  %s\n", m->row.name, m->regs, m->local_bytes,
               L->heavy_predicted[b], m->blocks_per_sm, 100 * m->theoretical, 100 * m->run.trace.achieved_occupancy,
               ms_of(m), check_word(m));
    }
    printf("(blocks: per SM; local B: bytes of local memory per thread, registers spilled; the counting\n"
           "copies, which the trace runs, use %d and %d registers: %.1f%% and %.1f%% theoretical)\n\n",
           L->heavy[0].counted_regs, L->heavy[1].counted_regs, 100 * L->heavy[0].counted_theoretical,
           100 * L->heavy[1].counted_theoretical);

    printf("the book's kernel at (%d,1), throttled with your shared_memory_for_blocks (TODO(5))\n", THROTTLE_X);
    printf("%9s %14s %12s %10s %10s %10s %10s %10s %9s  %s\n", "target", "dynamic smem", "your blocks", "runtime's",
           "theor.", "achieved", "peak warps", "time (ms)", "GB/s", "check");
    for (int i = 0; i < L->nthrottle; i++) {
        const measured *m = &L->throttle[i];
        if (!m->launched) {
            printf("%9d %14d   %s\n", L->throttle_target[i], m->run.smem, m->error);
            continue;
        }
        printf("%9d %14d %12d %10d %9.1f%% %9.1f%% %10d %10.3f %9.0f  %s%s\n", L->throttle_target[i], m->run.smem,
               L->throttle_predicted[i], m->blocks_per_sm, 100 * m->theoretical, 100 * m->run.trace.achieved_occupancy,
               m->run.trace.peak_warps_per_sm, ms_of(m), ms_of(m) > 0 ? 12.0 * m->run.n / (ms_of(m) * 1e6) : 0.0,
               check_word(m), L->throttle_ok[i] ? "" : "  <- not this target");
    }
    printf("(target: blocks per SM; peak warps: the most the trace saw active at once on one SM)\n\n");
}

static void part5_csv(lab *L, FILE *csv)
{
    csv_rows(L, csv, 5, L->heavy, 2);
    csv_rows(L, csv, 5, L->throttle, L->nthrottle);
}

static void part5_kv(lab *L)
{
    for (int b = 0; b < 2; b++) {
        const measured *m = &L->heavy[b];
        measured_kv(m, 1);
        row_kv(m, "predicted-blocks", "%d", L->heavy_predicted[b]);
        if (!m->launched)
            row_kv(m, "registers", "%d", m->regs);
    }
    kit_kv("heavy-target-blocks-per-sm", "%d", L->heavy_target_blocks);
    if (L->heavy[0].launched && L->heavy[1].launched)
        kit_kv("heavy-bounded-over-heavy-time", "%.3f", ratio(ms_of(&L->heavy[1]), ms_of(&L->heavy[0])));
    kit_kv("throttle-unthrottled-blocks-per-sm", "%d", L->unthrottled);
    for (int i = 0; i < L->nthrottle; i++) { /* a throttle's key: throttle-TARGET */
        measured_kv(&L->throttle[i], 1);
        row_kv(&L->throttle[i], "shared-bytes", "%d", L->throttle[i].run.smem);
        row_kv(&L->throttle[i], "predicted-blocks", "%d", L->throttle_predicted[i]);
    }
    if (L->nthrottle > 1 && L->throttle[0].launched && L->throttle[L->nthrottle - 1].launched)
        kit_kv("throttle-slowdown", "%.3f", ratio(ms_of(&L->throttle[L->nthrottle - 1]), ms_of(&L->throttle[0])));
}

/*
 * heavy_bounded holds exactly the target: blocks of HEAVY_THREADS allowed,
 * and no registers taken away that the target did not need; each throttle
 * holds its target with the least shared memory.
 */
static void part5_verdict(lab *L)
{
    const measured *m = &L->heavy[1];
    if (L->heavy_max_threads < HEAVY_THREADS) {
        fprintf(stderr, "%s: heavy_bounded runs in blocks of %d threads, but its __launch_bounds__ allow only %d "
                        "(TODO(4))\n", kit_program, HEAVY_THREADS, L->heavy_max_threads);
        L->run.pass = 0;
    } else if (m->blocks_per_sm != L->heavy_target_blocks) {
        if (m->blocks_per_sm < L->heavy_target_blocks)
            fprintf(stderr, "%s: heavy_bounded: %d registers a thread leave room for %d blocks of %d threads per SM, "
                            "%d warps; the target is %d warps (TODO(4))\n",
                    kit_program, m->regs, m->blocks_per_sm, HEAVY_THREADS, m->blocks_per_sm * HEAVY_THREADS / 32,
                    HEAVY_TARGET_WARPS);
        else
            fprintf(stderr, "%s: heavy_bounded: %d registers a thread, room for %d blocks of %d threads per SM, more "
                            "than the %d the target needs: the bound took away registers the target did not need "
                            "(TODO(4))\n",
                    kit_program, m->regs, m->blocks_per_sm, HEAVY_THREADS, L->heavy_target_blocks);
        L->run.pass = 0;
    }
    for (int i = 0; i < L->nthrottle; i++)
        if (!L->throttle_ok[i]) {
            fprintf(stderr, "%s: shared_memory_for_blocks(%d blocks of %d threads) = %d bytes: the runtime allows %d "
                            "blocks per SM with it; the least that allows no more than %d is %d bytes, to within %d "
                            "(TODO(5))\n",
                    kit_program, L->throttle_target[i], THROTTLE_X, L->throttle[i].run.smem,
                    L->throttle[i].launched ? L->throttle[i].blocks_per_sm : -1, L->throttle_target[i],
                    L->throttle_kit_bytes[i], L->throttle_unit);
            L->run.pass = 0;
        }
}

/* ---- the lab, declared once (kit_lab.h) ------------------------------------------ */

/* The options that must agree; --calculator-only: Part 1 on the CPU, no
 * GPU needed, its exit code the lab's. */
static int prepare(lab *L)
{
    int m = 0;
    while (m < MODELS && strcmp(L->model_name, model_names[m]) != 0)
        m++;
    if (m == MODELS)
        kit_die(KIT_EXIT_USAGE, "--model %s: not a calculator the kit knows (yours, kit, per-thread-registers, "
                                "unrounded-registers, one-register-pool, no-reserved-shared, threads-not-warps)",
                L->model_name);
    L->model = (enum model)m;
    if (L->max_n & (L->max_n - 1))
        kit_die(KIT_EXIT_USAGE, "--max-elements %d: must be a power of two", L->max_n);
    if (!L->calculator_only)
        return -1;
    if (L->run.c.csv)
        kit_die(KIT_EXIT_USAGE, "--csv: --calculator-only measures nothing to write");
    printf("Lab 04: occupancy and SM efficiency: the calculator on the CPU (no GPU used)\n"
           "The calculator checked: %s\n\n", model_help[L->model]);
    check_cpu(&L->cpu, L->model, L->run.c.seed, stdout);
    kit_kv("lab", "04-occupancy");
    kit_kv("seed", "%llu", L->run.c.seed);
    cpu_facts(&L->cpu);
    return kit_finish(cpu_verdict(&L->cpu));
}

/* The matrix: by default its three arrays are at least 4 L2s, a multiple of
 * 256 on a side (every shape tiles it), at least 2,048; --size N: the side
 * is the root of N, any number. The arrays every part shares hold the
 * largest of the matrix, the scenarios, heavy and the wave. */
static void setup(lab *L)
{
    const kit_device *d = &L->run.dev;
    arrays *a = &L->a;
    unsigned long long need, heavy_n = (unsigned long long)HEAVY_WAVES * d->sms * d->max_threads_per_sm;
    size_t wave, bytes;

    if (L->run.c.size)
        L->side = (int)sqrt((double)L->run.c.size);
    else {
        L->side = round_up((int)ceil(sqrt(4.0 * (double)d->l2_bytes / 12.0)), 256);
        L->side = L->side < 2048 ? 2048 : L->side;
        while (L->side > 2048 && 16.0 * L->side * L->side > d->free_bytes / 2.0)
            L->side -= 256;
    }
    L->side = L->side < 32 ? 32 : L->side;
    a->cap = (size_t)L->side * L->side;
    a->cap = a->cap > (size_t)L->max_n ? a->cap : (size_t)L->max_n;
    a->cap = a->cap > heavy_n ? a->cap : heavy_n;
    /* the wave: a block more than the GPU holds at once */
    wave = (size_t)(d->sms * d->max_blocks_per_sm + 1) * 1024;
    a->cap = a->cap > wave ? a->cap : wave;
    need = 16ull * a->cap + (256ull << 20);
    if ((long long)need > d->free_bytes)
        kit_die(KIT_EXIT_USAGE,
                "--size %llu needs %.0f MiB of GPU memory but %s has %.0f MiB free; choose a smaller --size",
                L->run.c.size, need / 1048576.0, d->name, d->free_bytes / 1048576.0);

    bytes = a->cap * sizeof(float);
    KIT_CHECK(cudaMalloc((void **)&a->dA, bytes));
    KIT_CHECK(cudaMalloc((void **)&a->dB, bytes));
    KIT_CHECK(cudaMalloc((void **)&a->dC, bytes));
    KIT_CHECK(cudaMalloc((void **)&a->dKeep, bytes));
    a->hA = (float *)kit_host_alloc(bytes);
    a->hB = (float *)kit_host_alloc(bytes);
    a->hC = (float *)kit_host_alloc(bytes);
    a->heavy_index = NULL;
    kit_fill_uniform(a->dA, a->cap, L->run.c.seed);
    kit_fill_uniform(a->dB, a->cap, L->run.c.seed + 1);
    KIT_CHECK(cudaMemcpy(a->hA, a->dA, bytes, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(a->hB, a->dB, bytes, cudaMemcpyDeviceToHost));
}

static void heading(lab *L)
{
    const kit_device *d = &L->run.dev;
    printf("per SM: %d threads (%d warps), %d blocks, %d registers, %lld KiB shared memory (%lld B reserved "
           "per block)\n\n",
           d->max_threads_per_sm, d->max_warps_per_sm, d->max_blocks_per_sm, d->regs_per_sm, d->smem_per_sm / 1024,
           d->smem_reserved_per_block);
}

static void facts(lab *L)
{
    kit_kv("iterations", "%d", L->iterations);
    kit_kv("rounds", "%d", L->rounds);
    kit_kv("matrix-side", "%d", L->side);
}

/* Scenario 1 against 2 at 1,024 elements (the sixth n: 32 << 5), beside the course's K40. */
static void summary(lab *L)
{
    const measured *s1 = &L->sc[5][0], *s2 = &L->sc[5][1];
    if (L->nsizes > 5)
        kit_kv("summary", "at 1,024 elements scenario 2 took %.3f ms against %.3f ms (%.2fx) with %.0f%% against "
                          "%.0f%% theoretical occupancy; one block: %.2f%% SM efficiency",
               ms_of(s2), ms_of(s1), ratio(ms_of(s1), ms_of(s2)), 100 * s2->theoretical, 100 * s1->theoretical,
               100 * L->sc[0][0].run.trace.sm_efficiency);
    kit_kv("course-k40", "at 1,024 elements scenario 2 took 0.70 against 0.74 (1.06x) with 50%% against 100%% "
                         "theoretical occupancy; one block: 6.54%% SM efficiency");
    kit_kv("course-book", "Tesla M2070, 16,384 x 16,384: (32,32) 60 ms at 0.50 achieved occupancy, (256,1) 30.96 ms "
                          "at 0.81; (16,16) 49.8%% load efficiency");
}

static void teardown(lab *L)
{
    KIT_CHECK(cudaFree(L->a.dA));
    KIT_CHECK(cudaFree(L->a.dB));
    KIT_CHECK(cudaFree(L->a.dC));
    KIT_CHECK(cudaFree(L->a.dKeep));
    free(L->a.hA);
    free(L->a.hB);
    free(L->a.hC);
    free(L->a.heavy_index);
    free(L->part1_text);
}

/* The lab's parts, in order. */
static const kit_part parts[] = {
    {part1_measure, part1_print, NULL, part1_kv, part1_verdict},
    {part2_measure, part2_print, part2_csv, part2_kv, part2_verdict},
    {part3_measure, part3_print, part3_csv, part3_kv, NULL},
    {part4_measure, part4_print, part4_csv, part4_kv, NULL},
    {part5_measure, part5_print, part5_csv, part5_kv, part5_verdict},
};

int main(int argc, char **argv)
{
    static lab L;
    kit_option opts[] = {
        KIT_LAB_OPTIONS(&L.run.c),
        {"--iterations", KIT_OPT_INT, &L.iterations, "I",
         "loop count of the scenario kernel (default 20000; the course: 1000000)", 1, 10000000, NULL},
        {"--max-elements", KIT_OPT_INT, &L.max_n, "N", "largest n of the scenarios, from 32 doubling (default 65536)",
         32, 1 << 24, NULL},
        {"--rounds", KIT_OPT_INT, &L.rounds, "R", "rounds of heavy's arithmetic (default 256)", 1, 100000, NULL},
        {"--launch-illegal", KIT_OPT_FLAG, &L.launch_illegal, NULL,
         "launch the (256,8) block too, as the book does, and show the runtime's error", 0, 0, NULL},
        {"--calculator-only", KIT_OPT_FLAG, &L.calculator_only, NULL,
         "check the calculator on the CPU against the rules on the kit's table of GPUs, and exit (no GPU needed)", 0,
         0, NULL},
        {"--model", KIT_OPT_STRING, &L.model_name, "M",
         "whose calculator to check: yours (default), kit, or the kit's with one mistake: per-thread-registers, "
         "unrounded-registers, one-register-pool, no-reserved-shared, threads-not-warps",
         0, 0, NULL},
    };
    const kit_lab lab04 = {
        "04-occupancy",
        "Lab 04: occupancy and SM efficiency",
        "Lab 04: occupancy and SM efficiency. Checks your occupancy calculator against the\n"
        "rules on a table of GPUs and against the CUDA runtime on this one; runs the course's\n"
        "two launch scenarios, a partial last wave and the book's 2D block shapes with achieved\n"
        "occupancy and SM efficiency traced per warp; then your heavy_bounded and your\n"
        "shared-memory throttle, predicted by your calculator, measured, and timed.",
        opts, KIT_COUNT(opts), prepare, setup, heading, facts, summary, teardown, parts, KIT_COUNT(parts),
    };
    kit_run_defaults(&L.run);
    L.iterations = DEFAULT_ITERATIONS;
    L.max_n = 65536;
    L.rounds = DEFAULT_ROUNDS;
    L.model_name = model_names[YOURS];
    return kit_lab_main(&lab04, &L, &L.run, argc, argv);
}
