/*
 * Lab 01: coalesced access to global memory.
 * Handout: handouts/01-coalescing.md
 *
 * The course's experiment: C[tid] = A[x] + B[x], 100 times per thread,
 * 1024 threads per block, where x is
 *   - the thread's own index (full_coalesced_access): the 32 threads of a
 *     warp read 32 neighbouring floats, one 128-byte segment per request;
 *   - a random index in [0, n) (non_coalesced_access): up to 32 segments
 *     per request;
 *   - tid * stride, wrapped into the array (strided_access): stride
 *     segments per request, from 1 to 32.
 * A streaming run (each element read once) compares the coalesced kernel's
 * bandwidth with the GPU's own copy bandwidth.
 *
 * For every kernel the program reports its median time, its time relative
 * to the coalesced kernel, and the segments and sectors each warp request
 * touched, counted inside an instrumented launch of the same kernel (no
 * profiler needed), and checks every element of C on the host.
 */
#include "kit.h"

#define ITERATIONS 100 /* the course's loop count */
#define THREADS_PER_BLOCK 1024
#define MAX_STRIDE 32
/* Below this many elements (1,024 segments) random and clustered access
 * look alike to the counters, so the random pattern is not judged. */
#define RANDOM_CHECK_MIN_SIZE 32768

/* ===================================================================== */
/* Student code                                                          */
/* ===================================================================== */

/* ---- KIT STUDENT REGION BEGIN: TODO(1) ---- */
/*
 * TODO(1) Coalesced access. Which element should thread `tid` read so that
 * the 32 threads of a warp read 32 consecutive floats, and each warp-wide
 * request touches exactly one 128-byte segment?
 */
static __device__ unsigned int coalesced_index(unsigned int tid)
{
    (void)tid;
    return 0; /* TODO(1) */
}
/* ---- KIT STUDENT REGION END: TODO(1) ---- */

/* ---- KIT STUDENT REGION BEGIN: TODO(2) ---- */
/*
 * TODO(2) Random access. Draw a 32-bit random number from this thread's
 * own stream with curand(state) and map it into [0, n) the course's way:
 * not with a modulo, but by dividing by np, the width of one of the n equal
 * parts of [0, 2^32) (the harness computes np for you: kit_np(n)).
 */
static __device__ unsigned int random_index(kit_rng *state, unsigned int np)
{
    (void)state;
    (void)np;
    return 0; /* TODO(2) */
}
/* ---- KIT STUDENT REGION END: TODO(2) ---- */

/* ===================================================================== */
/* Kernels                                                               */
/* ===================================================================== */

/*
 * Each kernel body takes a probe. The timed kernels pass NULL, which the
 * compiler folds away; the instrumented ones count segments and sectors per
 * request and record each thread's last index, so that the host can check
 * C even where the indices are random (common/kit_vecadd.h).
 */
static __device__ __forceinline__ void full_coalesced_body(const float *A, const float *B, float *C,
                                                           unsigned int n, int iters,
                                                           const kit_vecadd_probe *probe)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    unsigned int x = 0;
    kit_tally tally;

    kit_vecadd_begin(&tally, probe, tid < n);
    if (tid >= n)
        return;
    for (int i = 0; i < iters; i++) {
        x = coalesced_index(tid);
        kit_vecadd_count(&tally, probe, A, B, x);
        C[tid] = A[x] + B[x];
    }
    kit_vecadd_done(&tally, probe, tid, x);
}

static __device__ __forceinline__ void non_coalesced_body(const float *A, const float *B, float *C,
                                                          unsigned int n, int iters,
                                                          unsigned int np,
                                                          unsigned long long seed,
                                                          const kit_vecadd_probe *probe)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    unsigned int x = 0;
    kit_tally tally;
    kit_rng state;

    kit_vecadd_begin(&tally, probe, tid < n);
    if (tid >= n)
        return;
    kit_rng_thread(&state, seed, tid);
    for (int i = 0; i < iters; i++) {
        x = random_index(&state, np);
        kit_vecadd_count(&tally, probe, A, B, x);
        C[tid] = A[x] + B[x];
    }
    kit_vecadd_done(&tally, probe, tid, x);
}

static __device__ __forceinline__ void strided_body(const float *A, const float *B, float *C,
                                                    unsigned int n, int iters,
                                                    unsigned int stride, const kit_vecadd_probe *probe)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    unsigned int x = 0;
    kit_tally tally;

    kit_vecadd_begin(&tally, probe, tid < n);
    if (tid >= n)
        return;
    for (int i = 0; i < iters; i++) {
        x = (unsigned int)(((unsigned long long)tid * stride) % n);
        kit_vecadd_count(&tally, probe, A, B, x);
        C[tid] = A[x] + B[x];
    }
    kit_vecadd_done(&tally, probe, tid, x);
}

__global__ void full_coalesced_access(const float *A, const float *B, float *C, unsigned int n,
                                      int iters)
{
    full_coalesced_body(A, B, C, n, iters, NULL);
}

__global__ void non_coalesced_access(const float *A, const float *B, float *C, unsigned int n,
                                     int iters, unsigned int np, unsigned long long seed)
{
    non_coalesced_body(A, B, C, n, iters, np, seed, NULL);
}

__global__ void strided_access(const float *A, const float *B, float *C, unsigned int n, int iters,
                               unsigned int stride)
{
    strided_body(A, B, C, n, iters, stride, NULL);
}

__global__ void full_coalesced_access_probed(const float *A, const float *B, float *C,
                                             unsigned int n, int iters, kit_vecadd_probe probe)
{
    full_coalesced_body(A, B, C, n, iters, &probe);
}

__global__ void non_coalesced_access_probed(const float *A, const float *B, float *C,
                                            unsigned int n, int iters, unsigned int np,
                                            unsigned long long seed, kit_vecadd_probe probe)
{
    non_coalesced_body(A, B, C, n, iters, np, seed, &probe);
}

__global__ void strided_access_probed(const float *A, const float *B, float *C, unsigned int n,
                                      int iters, unsigned int stride, kit_vecadd_probe probe)
{
    strided_body(A, B, C, n, iters, stride, &probe);
}

/* ===================================================================== */
/* Harness                                                               */
/* ===================================================================== */

enum pattern { FULL, NON, STRIDED };

typedef struct {
    enum pattern pattern;
    kit_vecadd *v;
    unsigned int np, stride;
    int iters;
    unsigned long long seed;
} run_t;

static void launch(const run_t *r, int probed)
{
    const kit_vecadd *v = r->v;
    unsigned int blocks = (v->n + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK;

    switch (r->pattern * 2 + probed) {
    case FULL * 2:
        full_coalesced_access<<<blocks, THREADS_PER_BLOCK>>>(v->dA, v->dB, v->dC, v->n, r->iters);
        break;
    case FULL * 2 + 1:
        full_coalesced_access_probed<<<blocks, THREADS_PER_BLOCK>>>(v->dA, v->dB, v->dC, v->n,
                                                                    r->iters, v->probe);
        break;
    case NON * 2:
        non_coalesced_access<<<blocks, THREADS_PER_BLOCK>>>(v->dA, v->dB, v->dC, v->n, r->iters,
                                                             r->np, r->seed);
        break;
    case NON * 2 + 1:
        non_coalesced_access_probed<<<blocks, THREADS_PER_BLOCK>>>(
            v->dA, v->dB, v->dC, v->n, r->iters, r->np, r->seed, v->probe);
        break;
    case STRIDED * 2:
        strided_access<<<blocks, THREADS_PER_BLOCK>>>(v->dA, v->dB, v->dC, v->n, r->iters,
                                                      r->stride);
        break;
    case STRIDED * 2 + 1:
        strided_access_probed<<<blocks, THREADS_PER_BLOCK>>>(v->dA, v->dB, v->dC, v->n, r->iters,
                                                             r->stride, v->probe);
        break;
    }
    KIT_CHECK_LAUNCH();
}

static void launch_timed(void *r) { launch((const run_t *)r, 0); }
static void launch_probed(void *r) { launch((const run_t *)r, 1); }

static void launch_copy(void *p)
{
    const kit_vecadd *v = ((const run_t *)p)->v;
    KIT_CHECK(cudaMemcpy(v->dC, v->dA, v->bytes, cudaMemcpyDeviceToDevice));
}

/* The index thread i must have read, where it is not random. */
static unsigned long long expected_index(unsigned long long i, const void *p)
{
    const run_t *r = (const run_t *)p;
    return r->pattern == FULL ? i : (i * r->stride) % r->v->n;
}

static void measure(run_t *r, const kit_common *c, kit_vecadd_row *row)
{
    kit_vecadd_measure(r->v, launch_probed, launch_timed, r, r->pattern == NON ? NULL : expected_index,
                       r, c, row);
}

int main(int argc, char **argv)
{
    kit_common c;
    kit_device dev;
    int iters = ITERATIONS, only_stride = 0;
    kit_option opts[] = {
        KIT_COMMON_OPTIONS(&c),
        {"--iterations", KIT_OPT_INT, &iters, "I", "loop count inside each kernel (course: 100)",
         1, 100000, NULL},
        {"--stride", KIT_OPT_INT, &only_stride, "S",
         "run only this stride instead of the sweep 1, 2, 4, ..., 32", 1, 1024, NULL},
    };
    kit_vecadd_row rows[2 + 16], stream, copy;
    int nrows = 0, pass;
    kit_vecadd v;
    run_t r;
    unsigned int n;
    FILE *csv;

    kit_common_defaults(&c);
    kit_parse_args(argc, argv,
                   "Lab 01: coalesced access to global memory. Times the course's coalesced,\n"
                   "random and strided vector additions, counts the 128-byte segments and\n"
                   "32-byte sectors each warp request touches, and checks every result.",
                   opts, KIT_COUNT(opts));
    kit_choose_seed(&c);
    csv = kit_csv_open(c.csv);
    kit_device_open(c.device, &dev);
    n = kit_vecadd_size(&c, &dev);
    kit_vecadd_setup(&v, n, c.seed);

    memset(&r, 0, sizeof r);
    r.v = &v;
    r.np = kit_np(n);
    r.seed = c.seed;
    r.iters = iters;

    /* The course's two kernels, then the stride sweep. */
    r.pattern = FULL;
    kit_vecadd_name(&rows[nrows], "full", "full_coalesced_access");
    measure(&r, &c, &rows[nrows++]);
    r.pattern = NON;
    kit_vecadd_name(&rows[nrows], "non", "non_coalesced_access");
    measure(&r, &c, &rows[nrows++]);
    r.pattern = STRIDED;
    unsigned int first = only_stride ? (unsigned int)only_stride : 1;
    unsigned int last = only_stride ? (unsigned int)only_stride : MAX_STRIDE;
    for (unsigned int s = first; s <= last; s *= 2) {
        char key[24];
        snprintf(key, sizeof key, "stride-%u", s);
        r.stride = s;
        kit_vecadd_name(&rows[nrows], key, "strided_access s=%u", s);
        measure(&r, &c, &rows[nrows++]);
    }

    /* Streaming: each element read once, against the GPU's own copy rate. */
    r.pattern = FULL;
    r.iters = 1;
    kit_vecadd_name(&stream, "stream", "full_coalesced_access, 1 iteration");
    measure(&r, &c, &stream);
    kit_vecadd_name(&copy, "copy", "cudaMemcpy device to device");
    copy.t = kit_time_launches(launch_copy, &r, c.warmup, c.reps);
    double stream_gbs = 3.0 * v.bytes / (stream.t.median_ms * 1e6);
    double copy_gbs = 2.0 * v.bytes / (copy.t.median_ms * 1e6);

    /* The table for people. */
    double t_full = rows[0].t.median_ms;
    double speedup = rows[1].t.median_ms / t_full;
    double expect_non = kit_expected_distinct(((double)n + 31) / 32);
    if (csv != stdout) {
        kit_banner("Lab 01: coalesced access to global memory", &dev);
        printf("%s floats per array, %.1f MiB each: A, B and C together are %.1fx the L2\n",
               kit_grouped(n), v.bytes / 1048576.0, 3.0 * v.bytes / dev.l2_bytes);
        printf("%d iterations per thread, %d threads per block, median of %d runs, seed %llu\n\n",
               iters, THREADS_PER_BLOCK, c.reps, c.seed);
        printf("%-26s %11s %10s %14s %12s %12s  %s\n", "kernel", "time (ms)", "time/coal",
               "segments/req", "sectors/req", "req. GB/s", "check");
        for (int i = 0; i < nrows; i++)
            printf("%-26s %11.3f %9.1fx %14.2f %12.2f %12.0f  %s\n", rows[i].name,
                   rows[i].t.median_ms, rows[i].t.median_ms / t_full,
                   rows[i].s.segments_per_request, rows[i].s.sectors_per_request,
                   3.0 * v.bytes * iters / (rows[i].t.median_ms * 1e6),
                   rows[i].wrong ? "WRONG" : "ok");
        printf("\nstreaming, each element read once:\n");
        printf("  %-36s %8.3f ms %8.0f GB/s  %s\n", "vector add (A, B read, C written)",
               stream.t.median_ms, stream_gbs, stream.wrong ? "WRONG" : "ok");
        printf("  %-36s %8.3f ms %8.0f GB/s\n", copy.name, copy.t.median_ms, copy_gbs);
        printf("  the vector add reaches %.0f%% of the copy bandwidth\n\n",
               100.0 * stream_gbs / copy_gbs);
        printf("course, Tesla K40: 14.9x at 32,768 floats and 52.2x at 4,194,304 floats;\n"
               "1.00 against 30.6 and 31.1 transactions per request.\n"
               "this GPU: %.1fx at %s floats; %.2f against %.2f segments per request.\n\n",
               speedup, kit_grouped(n), rows[0].s.segments_per_request,
               rows[1].s.segments_per_request);
    }
    if (csv) {
        fprintf(csv, "kernel,time_ms,time_vs_coalesced,segments_per_request,sectors_per_request,"
                     "requested_gbs,correct\n");
        for (int i = 0; i < nrows; i++)
            fprintf(csv, "%s,%.6f,%.4f,%.4f,%.4f,%.2f,%d\n", rows[i].name, rows[i].t.median_ms,
                    rows[i].t.median_ms / t_full, rows[i].s.segments_per_request,
                    rows[i].s.sectors_per_request,
                    3.0 * v.bytes * iters / (rows[i].t.median_ms * 1e6), rows[i].wrong == 0);
        kit_csv_close(csv);
    }

    /* The facts, one per line, for tests and graders. */
    kit_kv("lab", "01-coalescing");
    kit_kv_device(&dev);
    kit_kv("size", "%u", n);
    kit_kv("working-set-bytes", "%zu", 3 * v.bytes);
    kit_kv("working-set-over-l2", "%.2f", 3.0 * v.bytes / dev.l2_bytes);
    kit_kv("seed", "%llu", c.seed);
    kit_kv("reps", "%d", c.reps);
    kit_kv("iterations", "%d", iters);
    kit_kv("threads-per-block", "%d", THREADS_PER_BLOCK);
    for (int i = 0; i < nrows; i++)
        kit_vecadd_kv(&rows[i]);
    kit_kv("speedup-non-vs-full", "%.2f", speedup);
    kit_kv("expected-segments-per-request-non", "%.4f", expect_non);
    kit_kv("time-stream-ms", "%.4f", stream.t.median_ms);
    kit_kv("wrong-elements-stream", "%lld", stream.wrong);
    kit_kv("time-copy-ms", "%.4f", copy.t.median_ms);
    kit_kv("bandwidth-stream-gbs", "%.1f", stream_gbs);
    kit_kv("bandwidth-copy-gbs", "%.1f", copy_gbs);
    kit_kv("stream-fraction-of-copy", "%.3f", stream_gbs / copy_gbs);
    kit_kv("summary", "coalesced %.1fx faster than random at %s floats; %.2f against %.2f "
                      "segments per request",
           speedup, kit_grouped(n), rows[0].s.segments_per_request,
           rows[1].s.segments_per_request);
    kit_kv("course-k40", "coalesced 52.2x faster than random at 4,194,304 floats (14.9x at "
                         "32,768); 1.00 against 31.09 transactions per request");

    /*
     * The verdict: every element right, and the two access patterns the
     * student wrote look as they must from the memory system's side.
     */
    rows[nrows++] = stream;
    pass = kit_vecadd_all_correct(rows, nrows, n);
    if (rows[0].s.segments != rows[0].s.requests) {
        fprintf(stderr, "%s: full_coalesced_access: %.2f segments per request, not 1: the warp's "
                        "threads do not read one 128-byte segment\n",
                kit_program, rows[0].s.segments_per_request);
        pass = 0;
    }
    if (n < RANDOM_CHECK_MIN_SIZE)
        fprintf(stderr, "%s: note: at %u elements the random pattern is not judged (from %d on "
                        "it is)\n", kit_program, n, RANDOM_CHECK_MIN_SIZE);
    else if (fabs(rows[1].s.segments_per_request - expect_non) > 0.05 * expect_non) {
        fprintf(stderr, "%s: non_coalesced_access: %.2f segments per request, but %.2f are "
                        "expected when each thread picks a random element of the whole array\n",
                kit_program, rows[1].s.segments_per_request, expect_non);
        pass = 0;
    }

    kit_vecadd_teardown(&v);
    return kit_finish(pass);
}
