/*
 * Lab 03: warp divergence.
 * Handout: handouts/03-divergence.md
 *
 * The 32 threads of a warp execute one instruction at a time. When they
 * disagree on a branch, the warp runs each path in turn with the other
 * lanes idle. The course's pair of kernels does the same four vector
 * operations (A+B, A-B, A*B, A/B, 100 times per thread, 1024 threads per
 * block), choosing the operation
 *   - by warp, (tid / 32) % 4, in warp_no_divergence: each warp one path;
 *   - by thread, tid % 4, in warp_divergence: every warp all four paths.
 * Then the book's four small kernels (mathKernel1-4 of simpleDivergence),
 * whose branches are short enough for the compiler to predicate.
 *
 * For every kernel: the median time, and in an instrumented launch the
 * branch-body efficiency (active lanes per executed branch body, out of
 * 32) and the share of divergent branches; every element of the output is
 * checked on the host.
 */
#include "kit.h"

#define ITERATIONS 100 /* the course's loop count */
#define THREADS_PER_BLOCK 1024

/* ===================================================================== */
/* Student code                                                          */
/* ===================================================================== */

/* ---- KIT STUDENT REGION BEGIN: TODO(1) ---- */
/*
 * TODO(1) Branch by warp. Which of the four operations (0: A+B, 1: A-B,
 * 2: A*B, 3: A/B) should thread `tid` do so that all 32 threads of a warp
 * do the same one, and consecutive warps take turns through the four?
 * (warp_divergence uses tid % 4: consecutive threads take turns.)
 */
static __device__ unsigned int warp_path(unsigned int tid)
{
    return (tid / 32) % 4;
}
/* ---- KIT STUDENT REGION END: TODO(1) ---- */

/* ---- KIT STUDENT REGION BEGIN: TODO(2) ---- */
/*
 * TODO(2) The book's mathKernel4 meant to branch on the warp number's
 * lowest bit, like mathKernel2, with a bit test instead of % and /:
 *
 *     int itid = tid >> 5;
 *     if (itid & 0x01 == 0) ...
 *
 * In C, == binds tighter than &, so that reads itid & (0x01 == 0), which
 * is always 0. Return the condition the book meant: 1 for threads of an
 * even-numbered warp, 0 for the others.
 */
static __device__ int even_warp_bit_test(int tid)
{
    int itid = tid >> 5;
    return (itid & 0x01) == 0;
}
/* ---- KIT STUDENT REGION END: TODO(2) ---- */

/* ===================================================================== */
/* Kernels                                                               */
/* ===================================================================== */

/*
 * Every kernel body takes a branch probe: NULL in the timed kernels (the
 * compiler folds the counting away), a real one in the instrumented twins
 * (common/kit_branchcount.h). Out-of-range threads stay idle rather than
 * return, because the counts are summed over whole warps.
 */

/* The course's four-way if-else chain on one element. */
static __device__ __forceinline__ void four_way(const float *A, const float *B, float *C,
                                                unsigned int tid, unsigned int path,
                                                kit_branch_tally *t, const kit_branch_probe *p)
{
    if (kit_branch(t, p, path == 0)) {
        kit_branch_body(t, p);
        C[tid] = A[tid] + B[tid];
    } else if (kit_branch(t, p, path == 1)) {
        kit_branch_body(t, p);
        C[tid] = A[tid] - B[tid];
    } else if (kit_branch(t, p, path == 2)) {
        kit_branch_body(t, p);
        C[tid] = A[tid] * B[tid];
    } else if (kit_branch(t, p, path == 3)) {
        kit_branch_body(t, p);
        C[tid] = A[tid] / B[tid];
    }
}

static __device__ __forceinline__ void four_way_body(const float *A, const float *B, float *C,
                                                     unsigned int n, int iters, int by_warp,
                                                     const kit_branch_probe *p)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    kit_branch_tally t;

    kit_branch_begin(&t, p);
    if (tid < n) {
        unsigned int path = by_warp ? warp_path(tid) : tid % 4;
        for (int i = 0; i < iters; i++)
            four_way(A, B, C, tid, path, &t, p);
    }
    kit_branch_end(&t, p);
}

__global__ void warp_no_divergence(const float *A, const float *B, float *C, unsigned int n,
                                   int iters)
{
    four_way_body(A, B, C, n, iters, 1, NULL);
}

__global__ void warp_divergence(const float *A, const float *B, float *C, unsigned int n,
                                int iters)
{
    four_way_body(A, B, C, n, iters, 0, NULL);
}

__global__ void warp_no_divergence_probed(const float *A, const float *B, float *C, unsigned int n,
                                          int iters, kit_branch_probe probe)
{
    four_way_body(A, B, C, n, iters, 1, &probe);
}

__global__ void warp_divergence_probed(const float *A, const float *B, float *C, unsigned int n,
                                       int iters, kit_branch_probe probe)
{
    four_way_body(A, B, C, n, iters, 0, &probe);
}

/*
 * The book's kernels: a = 100 on one side of the branch, b = 200 on the
 * other, c = a + b. which: 1 even/odd thread, 2 even/odd warp, 3 the
 * even/odd test as two separate predicates, 4 the warp's bit test.
 */
static __device__ __forceinline__ void math_kernel_body(float *c, unsigned int n, int which,
                                                        const kit_branch_probe *p)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float a = 0.0f, b = 0.0f;
    kit_branch_tally t;

    kit_branch_begin(&t, p);
    if ((unsigned int)tid < n) {
        if (which == 3) {
            bool ipred = (tid % 2 == 0);
            if (kit_branch(&t, p, ipred)) {
                kit_branch_body(&t, p);
                a = 100.0f;
            }
            if (kit_branch(&t, p, !ipred)) {
                kit_branch_body(&t, p);
                b = 200.0f;
            }
        } else {
            int cond = which == 1 ? tid % 2 == 0
                     : which == 2 ? (tid / warpSize) % 2 == 0
                                  : even_warp_bit_test(tid);
            if (kit_branch(&t, p, cond)) {
                kit_branch_body(&t, p);
                a = 100.0f;
            } else {
                kit_branch_body(&t, p);
                b = 200.0f;
            }
        }
        c[tid] = a + b;
    }
    kit_branch_end(&t, p);
}

__global__ void mathKernel1(float *c, unsigned int n) { math_kernel_body(c, n, 1, NULL); }
__global__ void mathKernel2(float *c, unsigned int n) { math_kernel_body(c, n, 2, NULL); }
__global__ void mathKernel3(float *c, unsigned int n) { math_kernel_body(c, n, 3, NULL); }
__global__ void mathKernel4(float *c, unsigned int n) { math_kernel_body(c, n, 4, NULL); }

__global__ void mathKernel1_probed(float *c, unsigned int n, kit_branch_probe probe)
{
    math_kernel_body(c, n, 1, &probe);
}
__global__ void mathKernel2_probed(float *c, unsigned int n, kit_branch_probe probe)
{
    math_kernel_body(c, n, 2, &probe);
}
__global__ void mathKernel3_probed(float *c, unsigned int n, kit_branch_probe probe)
{
    math_kernel_body(c, n, 3, &probe);
}
__global__ void mathKernel4_probed(float *c, unsigned int n, kit_branch_probe probe)
{
    math_kernel_body(c, n, 4, &probe);
}

/* ===================================================================== */
/* Harness                                                               */
/* ===================================================================== */

enum kernel { NO_DIVERGENCE, DIVERGENCE, MATH1, MATH2, MATH3, MATH4, NKERNELS };

static const char *const kernel_names[NKERNELS] = {
    "warp_no_divergence", "warp_divergence", "mathKernel1", "mathKernel2", "mathKernel3",
    "mathKernel4"};
static const char *const kernel_keys[NKERNELS] = {"nodiv", "div",    "math-1",
                                                  "math-2", "math-3", "math-4"};

typedef struct {
    enum kernel kernel;
    kit_vecadd *v;
    kit_branch_probe probe;
    int iters;
} run_t;

typedef struct {
    kit_timing t;
    kit_branch_stats b;
    long long wrong;
} row_t;

static void launch(const run_t *r, int probed)
{
    const kit_vecadd *v = r->v;
    unsigned int blocks = (v->n + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK;
    const unsigned int tpb = THREADS_PER_BLOCK;

    switch (r->kernel * 2 + probed) {
    case NO_DIVERGENCE * 2: warp_no_divergence<<<blocks, tpb>>>(v->dA, v->dB, v->dC, v->n, r->iters); break;
    case NO_DIVERGENCE * 2 + 1: warp_no_divergence_probed<<<blocks, tpb>>>(v->dA, v->dB, v->dC, v->n, r->iters, r->probe); break;
    case DIVERGENCE * 2: warp_divergence<<<blocks, tpb>>>(v->dA, v->dB, v->dC, v->n, r->iters); break;
    case DIVERGENCE * 2 + 1: warp_divergence_probed<<<blocks, tpb>>>(v->dA, v->dB, v->dC, v->n, r->iters, r->probe); break;
    case MATH1 * 2: mathKernel1<<<blocks, tpb>>>(v->dC, v->n); break;
    case MATH1 * 2 + 1: mathKernel1_probed<<<blocks, tpb>>>(v->dC, v->n, r->probe); break;
    case MATH2 * 2: mathKernel2<<<blocks, tpb>>>(v->dC, v->n); break;
    case MATH2 * 2 + 1: mathKernel2_probed<<<blocks, tpb>>>(v->dC, v->n, r->probe); break;
    case MATH3 * 2: mathKernel3<<<blocks, tpb>>>(v->dC, v->n); break;
    case MATH3 * 2 + 1: mathKernel3_probed<<<blocks, tpb>>>(v->dC, v->n, r->probe); break;
    case MATH4 * 2: mathKernel4<<<blocks, tpb>>>(v->dC, v->n); break;
    case MATH4 * 2 + 1: mathKernel4_probed<<<blocks, tpb>>>(v->dC, v->n, r->probe); break;
    }
    KIT_CHECK_LAUNCH();
}

static void launch_timed(void *r) { launch((const run_t *)r, 0); }

/* What element i must hold after kernel k. The GPU's default float
 * division is correctly rounded, like the host's, so all four are exact. */
static float expected(enum kernel k, const kit_vecadd *v, unsigned int i)
{
    unsigned int path = k == NO_DIVERGENCE ? (i / 32) % 4 : i % 4;
    switch (k) {
    case NO_DIVERGENCE:
    case DIVERGENCE:
        return path == 0 ? v->A[i] + v->B[i]
             : path == 1 ? v->A[i] - v->B[i]
             : path == 2 ? v->A[i] * v->B[i]
                         : v->A[i] / v->B[i];
    case MATH1:
    case MATH3: return i % 2 == 0 ? 100.0f : 200.0f;
    default: return (i / 32) % 2 == 0 ? 100.0f : 200.0f;
    }
}

static long long verify(enum kernel k, const kit_vecadd *v)
{
    long long bad = 0;
    for (unsigned int i = 0; i < v->n; i++) {
        float want = expected(k, v, i);
        if (v->C[i] == want)
            continue;
        if (bad++ == 0)
            fprintf(stderr, "%s: %s: element %u is %.9g, should be %.9g\n", kit_program,
                    kernel_names[k], i, v->C[i], want);
    }
    return bad;
}

/* Instrumented launch, then poison, time and check the clean one. */
static void measure(run_t *r, const kit_common *c, row_t *row)
{
    kit_branch_probe_reset(r->probe);
    launch(r, 1);
    KIT_CHECK(cudaDeviceSynchronize());
    row->b = kit_branch_probe_read(r->probe);

    KIT_CHECK(cudaMemset(r->v->dC, 0xff, r->v->bytes));
    row->t = kit_time_launches(launch_timed, r, c->warmup, c->reps);
    KIT_CHECK(cudaMemcpy(r->v->C, r->v->dC, r->v->bytes, cudaMemcpyDeviceToHost));
    row->wrong = verify(r->kernel, r->v);
}

int main(int argc, char **argv)
{
    kit_common c;
    kit_device dev;
    int iters = ITERATIONS;
    kit_option opts[] = {
        KIT_COMMON_OPTIONS(&c),
        {"--iterations", KIT_OPT_INT, &iters, "I",
         "loop count inside the course's two kernels (course: 100)", 1, 100000, NULL},
    };
    row_t rows[NKERNELS];
    kit_vecadd v;
    run_t r;
    unsigned int n;
    int pass = 1;
    FILE *csv;

    kit_common_defaults(&c);
    kit_parse_args(argc, argv,
                   "Lab 03: warp divergence. Times the course's four-way branch by warp against\n"
                   "the same branch by thread, and the book's mathKernel1-4; measures in-kernel\n"
                   "how many lanes run each branch body and how many branches diverge.",
                   opts, KIT_COUNT(opts));
    kit_choose_seed(&c);
    csv = kit_csv_open(c.csv);
    kit_device_open(c.device, &dev);
    n = kit_vecadd_size(&c, &dev);
    kit_vecadd_setup(&v, n, c.seed);

    memset(&r, 0, sizeof r);
    r.v = &v;
    r.iters = iters;
    r.probe = kit_branch_probe_create();
    for (int k = 0; k < NKERNELS; k++) {
        r.kernel = (enum kernel)k;
        measure(&r, &c, &rows[k]);
    }

    double t_nodiv = rows[NO_DIVERGENCE].t.median_ms, t_div = rows[DIVERGENCE].t.median_ms;
    if (csv != stdout) {
        kit_banner("Lab 03: warp divergence", &dev);
        printf("%s floats per array, %d iterations in the course's kernels, 1024 threads per "
               "block,\nmedian of %d runs, seed %llu\n\n",
               kit_grouped(n), iters, c.reps, c.seed);
        printf("%-20s %11s %13s %18s %20s  %s\n", "kernel", "time (ms)", "vs no-div",
               "lanes per body", "divergent branches", "check");
        for (int k = 0; k < NKERNELS; k++) {
            if (k == MATH1)
                printf("\n");
            printf("%-20s %11.3f %12.2fx %17.1f%% %19.1f%%  %s\n", kernel_names[k],
                   rows[k].t.median_ms, rows[k].t.median_ms / t_nodiv,
                   100.0 * rows[k].b.efficiency, 100.0 * rows[k].b.divergent_fraction,
                   rows[k].wrong ? "WRONG" : "ok");
        }
        printf("\nlanes per body: active lanes per executed branch body, out of 32 (branch-body\n"
               "efficiency); divergent branches: branches where the warp's lanes disagreed.\n"
               "Both come from an instrumented launch, which keeps every branch a real branch;\n"
               "the timed kernels are free to predicate short ones (see cuobjdump -sass).\n\n");
        printf("course, Tesla K40, 4,194,304 floats: 12.43 ms against 38.55 ms, 3.10x;\n"
               "warp execution efficiency 100%% against 34.8%% (nvprof).\n"
               "this GPU, %s floats: %.3f ms against %.3f ms, %.2fx.\n\n",
               kit_grouped(n), t_nodiv, t_div, t_div / t_nodiv);
    }
    if (csv) {
        fprintf(csv, "kernel,time_ms,time_vs_no_divergence,lanes_per_body,divergent_branches,"
                     "correct\n");
        for (int k = 0; k < NKERNELS; k++)
            fprintf(csv, "%s,%.6f,%.4f,%.4f,%.4f,%d\n", kernel_names[k], rows[k].t.median_ms,
                    rows[k].t.median_ms / t_nodiv, rows[k].b.efficiency,
                    rows[k].b.divergent_fraction, rows[k].wrong == 0);
        kit_csv_close(csv);
    }

    kit_kv("lab", "03-divergence");
    kit_kv_device(&dev);
    kit_kv("size", "%u", n);
    kit_kv("seed", "%llu", c.seed);
    kit_kv("reps", "%d", c.reps);
    kit_kv("iterations", "%d", iters);
    for (int k = 0; k < NKERNELS; k++) {
        char key[64];
#define ROW_KV(fmt_key, fmt, value)                       \
    do {                                                  \
        snprintf(key, sizeof key, fmt_key, kernel_keys[k]); \
        kit_kv(key, fmt, value);                          \
    } while (0)
        ROW_KV("time-%s-ms", "%.4f", rows[k].t.median_ms);
        ROW_KV("time-%s-min-ms", "%.4f", rows[k].t.min_ms);
        ROW_KV("time-%s-max-ms", "%.4f", rows[k].t.max_ms);
        ROW_KV("branch-efficiency-%s", "%.4f", rows[k].b.efficiency);
        ROW_KV("divergent-branches-%s", "%.4f", rows[k].b.divergent_fraction);
        ROW_KV("branch-bodies-%s", "%llu", rows[k].b.bodies);
        ROW_KV("wrong-elements-%s", "%lld", rows[k].wrong);
#undef ROW_KV
    }
    kit_kv("speedup-nodiv-vs-div", "%.2f", t_div / t_nodiv);
    kit_kv("summary", "branching by warp %.2fx faster than by thread at %s floats; %.0f%% "
                      "against %.0f%% of lanes per branch body",
           t_div / t_nodiv, kit_grouped(n), 100.0 * rows[NO_DIVERGENCE].b.efficiency,
           100.0 * rows[DIVERGENCE].b.efficiency);
    kit_kv("course-k40", "branching by warp 3.10x faster than by thread at 4,194,304 floats; "
                         "100%% against 34.8%% warp execution efficiency");

    /* The verdict: right results everywhere; the student's two warp-level
     * branches keep every lane of a warp on one side. */
    for (int k = 0; k < NKERNELS; k++)
        if (rows[k].wrong) {
            fprintf(stderr, "%s: %s: %lld of %u elements are wrong\n", kit_program,
                    kernel_names[k], rows[k].wrong, n);
            pass = 0;
        }
    if (rows[NO_DIVERGENCE].b.divergent != 0 || rows[MATH4].b.divergent != 0) {
        fprintf(stderr, "%s: a branch by warp diverged: warp_no_divergence %llu times, "
                        "mathKernel4 %llu times\n",
                kit_program, rows[NO_DIVERGENCE].b.divergent, rows[MATH4].b.divergent);
        pass = 0;
    }

    kit_branch_probe_destroy(r.probe);
    kit_vecadd_teardown(&v);
    return kit_finish(pass);
}
