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
 * C even where the indices are random.
 */
typedef struct {
    kit_probe counters;
    unsigned int *last_index;
} probe_t;

static __device__ __forceinline__ void full_coalesced_body(const float *A, const float *B, float *C,
                                                           unsigned int n, int iters,
                                                           const probe_t *probe)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    const kit_probe *counters = probe ? &probe->counters : NULL;
    unsigned int x = 0;
    kit_tally tally;

    kit_tally_begin(&tally, counters, tid < n);
    if (tid >= n)
        return;
    for (int i = 0; i < iters; i++) {
        x = coalesced_index(tid);
        kit_tally_access(&tally, counters, &A[x]);
        kit_tally_access(&tally, counters, &B[x]);
        C[tid] = A[x] + B[x];
    }
    kit_tally_end(&tally, counters);
    if (probe)
        probe->last_index[tid] = x;
}

static __device__ __forceinline__ void non_coalesced_body(const float *A, const float *B, float *C,
                                                          unsigned int n, int iters,
                                                          unsigned int np,
                                                          unsigned long long seed,
                                                          const probe_t *probe)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    const kit_probe *counters = probe ? &probe->counters : NULL;
    unsigned int x = 0;
    kit_tally tally;
    kit_rng state;

    kit_tally_begin(&tally, counters, tid < n);
    if (tid >= n)
        return;
    kit_rng_thread(&state, seed, tid);
    for (int i = 0; i < iters; i++) {
        x = random_index(&state, np);
        kit_tally_access(&tally, counters, &A[x]);
        kit_tally_access(&tally, counters, &B[x]);
        C[tid] = A[x] + B[x];
    }
    kit_tally_end(&tally, counters);
    if (probe)
        probe->last_index[tid] = x;
}

static __device__ __forceinline__ void strided_body(const float *A, const float *B, float *C,
                                                    unsigned int n, int iters,
                                                    unsigned int stride, const probe_t *probe)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    const kit_probe *counters = probe ? &probe->counters : NULL;
    unsigned int x = 0;
    kit_tally tally;

    kit_tally_begin(&tally, counters, tid < n);
    if (tid >= n)
        return;
    for (int i = 0; i < iters; i++) {
        x = (unsigned int)(((unsigned long long)tid * stride) % n);
        kit_tally_access(&tally, counters, &A[x]);
        kit_tally_access(&tally, counters, &B[x]);
        C[tid] = A[x] + B[x];
    }
    kit_tally_end(&tally, counters);
    if (probe)
        probe->last_index[tid] = x;
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
                                             unsigned int n, int iters, probe_t probe)
{
    full_coalesced_body(A, B, C, n, iters, &probe);
}

__global__ void non_coalesced_access_probed(const float *A, const float *B, float *C,
                                            unsigned int n, int iters, unsigned int np,
                                            unsigned long long seed, probe_t probe)
{
    non_coalesced_body(A, B, C, n, iters, np, seed, &probe);
}

__global__ void strided_access_probed(const float *A, const float *B, float *C, unsigned int n,
                                      int iters, unsigned int stride, probe_t probe)
{
    strided_body(A, B, C, n, iters, stride, &probe);
}

/* ===================================================================== */
/* Harness                                                               */
/* ===================================================================== */

enum pattern { FULL, NON, STRIDED };

typedef struct {
    enum pattern pattern;
    const float *A, *B;
    float *C;
    unsigned int n, np, stride;
    int iters;
    unsigned long long seed;
    probe_t probe; /* used by launch_probed only */
} run_t;

static unsigned int blocks_for(unsigned int n)
{
    return (n + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK;
}

static void launch_timed(void *p)
{
    const run_t *r = (const run_t *)p;
    unsigned int blocks = blocks_for(r->n);
    switch (r->pattern) {
    case FULL:
        full_coalesced_access<<<blocks, THREADS_PER_BLOCK>>>(r->A, r->B, r->C, r->n, r->iters);
        break;
    case NON:
        non_coalesced_access<<<blocks, THREADS_PER_BLOCK>>>(r->A, r->B, r->C, r->n, r->iters,
                                                             r->np, r->seed);
        break;
    case STRIDED:
        strided_access<<<blocks, THREADS_PER_BLOCK>>>(r->A, r->B, r->C, r->n, r->iters,
                                                      r->stride);
        break;
    }
    KIT_CHECK_LAUNCH();
}

static void launch_probed(const run_t *r)
{
    unsigned int blocks = blocks_for(r->n);
    kit_probe_reset(r->probe.counters);
    switch (r->pattern) {
    case FULL:
        full_coalesced_access_probed<<<blocks, THREADS_PER_BLOCK>>>(r->A, r->B, r->C, r->n,
                                                                    r->iters, r->probe);
        break;
    case NON:
        non_coalesced_access_probed<<<blocks, THREADS_PER_BLOCK>>>(
            r->A, r->B, r->C, r->n, r->iters, r->np, r->seed, r->probe);
        break;
    case STRIDED:
        strided_access_probed<<<blocks, THREADS_PER_BLOCK>>>(r->A, r->B, r->C, r->n, r->iters,
                                                             r->stride, r->probe);
        break;
    }
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaDeviceSynchronize());
}

static void launch_copy(void *p)
{
    const run_t *r = (const run_t *)p;
    KIT_CHECK(cudaMemcpy(r->C, r->A, (size_t)r->n * sizeof(float), cudaMemcpyDeviceToDevice));
}

/* One row of the results. */
typedef struct {
    char name[40];
    char key[24];
    kit_timing t;
    kit_access_stats s;
    long long mismatches;
} result_t;

/* Host data: inputs, the kernel's output, the recorded indices. */
typedef struct {
    float *A, *B, *C;
    unsigned int *last;
} host_t;

/*
 * Checks every element of C. The index thread i should have used is known
 * for the coalesced and strided kernels; for the random kernel it is the
 * one the instrumented launch recorded (the same seed draws the same
 * numbers). Returns the number of wrong elements and describes the first.
 */
static long long verify(const run_t *r, const host_t *h, const char *name)
{
    long long bad = 0;
    for (unsigned int i = 0; i < r->n; i++) {
        unsigned long long x;
        if (r->pattern == FULL)
            x = i;
        else if (r->pattern == STRIDED)
            x = ((unsigned long long)i * r->stride) % r->n;
        else
            x = h->last[i];
        if (x >= r->n || h->C[i] != h->A[x] + h->B[x]) {
            if (bad == 0) {
                if (x >= r->n)
                    fprintf(stderr, "%s: %s: thread %u read index %llu, outside [0, %u)\n",
                            kit_program, name, i, x, r->n);
                else
                    fprintf(stderr, "%s: %s: C[%u] = %.9g but A[%llu] + B[%llu] = %.9g\n",
                            kit_program, name, i, h->C[i], x, x, h->A[x] + h->B[x]);
            }
            bad++;
        }
    }
    return bad;
}

/* Poisons C, probes, times, then checks what the timed launches left in C. */
static void run_kernel(run_t *r, host_t *h, const kit_common *c, result_t *out)
{
    size_t bytes = (size_t)r->n * sizeof(float);

    launch_probed(r);
    out->s = kit_probe_read(r->probe.counters);
    KIT_CHECK(cudaMemcpy(h->last, r->probe.last_index, (size_t)r->n * sizeof(unsigned int),
                         cudaMemcpyDeviceToHost));

    KIT_CHECK(cudaMemset(r->C, 0xff, bytes)); /* NaN everywhere: unwritten shows */
    out->t = kit_time_launches(launch_timed, r, c->warmup, c->reps);
    KIT_CHECK(cudaMemcpy(h->C, r->C, bytes, cudaMemcpyDeviceToHost));
    out->mismatches = verify(r, h, out->name);
}

static void *host_alloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (!p)
        kit_die(KIT_EXIT_FAIL, "cannot allocate %zu bytes of host memory", bytes);
    return p;
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
    result_t rows[3 + 16];
    int nrows = 0, pass = 1;
    host_t h;
    run_t r;
    float *dA, *dB, *dC;
    unsigned long long n;
    size_t bytes, need;
    FILE *csv;

    kit_common_defaults(&c);
    kit_parse_args(argc, argv,
                   "Lab 01: coalesced access to global memory. Times the course's coalesced,\n"
                   "random and strided vector additions, counts the 128-byte segments and\n"
                   "32-byte sectors each warp request touches, and checks every result.",
                   opts, KIT_COUNT(opts));
    if (c.size != 0 && c.size < 32)
        kit_die(KIT_EXIT_USAGE, "--size %llu: at least 32 elements (one warp) are needed", c.size);
    kit_choose_seed(&c);
    csv = kit_csv_open(c.csv);

    kit_device_open(c.device, &dev);
    /* Three float arrays stream through the L2; a fourth (indices) is allocated. */
    n = c.size ? c.size : kit_default_size(dev.l2_bytes, dev.free_bytes, 3 * sizeof(float),
                                           4 * sizeof(float));
    bytes = (size_t)n * sizeof(float);
    need = 4 * bytes + (64u << 20);
    if ((long long)need > dev.free_bytes)
        kit_die(KIT_EXIT_USAGE,
                "--size %llu needs %.0f MiB of GPU memory but %s has %.0f MiB free; choose a "
                "smaller --size",
                n, need / 1048576.0, dev.name, dev.free_bytes / 1048576.0);

    KIT_CHECK(cudaMalloc((void **)&dA, bytes));
    KIT_CHECK(cudaMalloc((void **)&dB, bytes));
    KIT_CHECK(cudaMalloc((void **)&dC, bytes));
    memset(&r, 0, sizeof r);
    r.A = dA;
    r.B = dB;
    r.C = dC;
    r.n = (unsigned int)n;
    r.np = kit_np(n);
    r.seed = c.seed;
    r.probe.counters = kit_probe_create();
    KIT_CHECK(cudaMalloc((void **)&r.probe.last_index, (size_t)n * sizeof(unsigned int)));

    h.A = (float *)host_alloc(bytes);
    h.B = (float *)host_alloc(bytes);
    h.C = (float *)host_alloc(bytes);
    h.last = (unsigned int *)host_alloc((size_t)n * sizeof(unsigned int));

    /* Fresh random inputs every run, drawn on the GPU with cuRAND. */
    kit_fill_uniform(dA, n, c.seed);
    kit_fill_uniform(dB, n, c.seed + 1);
    KIT_CHECK(cudaMemcpy(h.A, dA, bytes, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(h.B, dB, bytes, cudaMemcpyDeviceToHost));

    /* The course's two kernels, then the stride sweep. */
    r.iters = iters;
    r.pattern = FULL;
    snprintf(rows[nrows].name, sizeof rows[0].name, "full_coalesced_access");
    snprintf(rows[nrows].key, sizeof rows[0].key, "full");
    run_kernel(&r, &h, &c, &rows[nrows++]);

    r.pattern = NON;
    snprintf(rows[nrows].name, sizeof rows[0].name, "non_coalesced_access");
    snprintf(rows[nrows].key, sizeof rows[0].key, "non");
    run_kernel(&r, &h, &c, &rows[nrows++]);

    r.pattern = STRIDED;
    unsigned int first = only_stride ? (unsigned int)only_stride : 1;
    unsigned int last = only_stride ? (unsigned int)only_stride : MAX_STRIDE;
    for (unsigned int s = first; s <= last; s *= 2) {
        r.stride = s;
        snprintf(rows[nrows].name, sizeof rows[0].name, "strided_access s=%u", s);
        snprintf(rows[nrows].key, sizeof rows[0].key, "stride-%u", s);
        run_kernel(&r, &h, &c, &rows[nrows++]);
    }

    /* Streaming: each element read once, against the GPU's own copy rate. */
    result_t stream, copy;
    snprintf(stream.name, sizeof stream.name, "full_coalesced_access, 1 iteration");
    r.pattern = FULL;
    r.iters = 1;
    run_kernel(&r, &h, &c, &stream);
    copy.t = kit_time_launches(launch_copy, &r, c.warmup, c.reps);
    double stream_gbs = 3.0 * bytes / (stream.t.median_ms * 1e6);
    double copy_gbs = 2.0 * bytes / (copy.t.median_ms * 1e6);

    /* The table for people. */
    double t_full = rows[0].t.median_ms;
    double expect_non = kit_expected_distinct(((double)n + 31) / 32);
    if (!csv || csv != stdout) {
        kit_banner("Lab 01: coalesced access to global memory", &dev);
        printf("%s floats per array, %.1f MiB each: A, B and C together are %.1fx the L2\n",
               kit_grouped(n), bytes / 1048576.0, 3.0 * bytes / dev.l2_bytes);
        printf("%d iterations per thread, %d threads per block, median of %d runs, seed %llu\n\n",
               iters, THREADS_PER_BLOCK, c.reps, c.seed);
        printf("%-26s %11s %10s %14s %12s %12s  %s\n", "kernel", "time (ms)", "time/coal",
               "segments/req", "sectors/req", "req. GB/s", "check");
        for (int i = 0; i < nrows; i++)
            printf("%-26s %11.3f %9.1fx %14.2f %12.2f %12.0f  %s\n", rows[i].name,
                   rows[i].t.median_ms, rows[i].t.median_ms / t_full,
                   rows[i].s.segments_per_request, rows[i].s.sectors_per_request,
                   3.0 * bytes * iters / (rows[i].t.median_ms * 1e6),
                   rows[i].mismatches ? "WRONG" : "ok");
        printf("\nstreaming, each element read once:\n");
        printf("  %-36s %8.3f ms %8.0f GB/s  %s\n", "vector add (A, B read, C written)",
               stream.t.median_ms, stream_gbs, stream.mismatches ? "WRONG" : "ok");
        printf("  %-36s %8.3f ms %8.0f GB/s\n", "cudaMemcpy device to device", copy.t.median_ms,
               copy_gbs);
        printf("  the vector add reaches %.0f%% of the copy bandwidth\n\n",
               100.0 * stream_gbs / copy_gbs);
        printf("course, Tesla K40: 14.9x at 32,768 floats and 52.2x at 4,194,304 floats;\n"
               "1.00 against 30.6 and 31.1 transactions per request.\n"
               "this GPU: %.1fx at %s floats; %.2f against %.2f segments per request.\n\n",
               rows[1].t.median_ms / t_full, kit_grouped(n), rows[0].s.segments_per_request,
               rows[1].s.segments_per_request);
    }
    if (csv) {
        fprintf(csv, "kernel,time_ms,time_vs_coalesced,segments_per_request,sectors_per_request,"
                     "requested_gbs,correct\n");
        for (int i = 0; i < nrows; i++)
            fprintf(csv, "%s,%.6f,%.4f,%.4f,%.4f,%.2f,%d\n", rows[i].name, rows[i].t.median_ms,
                    rows[i].t.median_ms / t_full, rows[i].s.segments_per_request,
                    rows[i].s.sectors_per_request,
                    3.0 * bytes * iters / (rows[i].t.median_ms * 1e6), rows[i].mismatches == 0);
        kit_csv_close(csv);
    }

    /* The facts, one per line, for tests and graders. */
    kit_kv("lab", "01-coalescing");
    kit_kv_device(&dev);
    kit_kv("size", "%llu", n);
    kit_kv("working-set-bytes", "%zu", 3 * bytes);
    kit_kv("working-set-over-l2", "%.2f", 3.0 * bytes / dev.l2_bytes);
    kit_kv("seed", "%llu", c.seed);
    kit_kv("reps", "%d", c.reps);
    kit_kv("iterations", "%d", iters);
    kit_kv("threads-per-block", "%d", THREADS_PER_BLOCK);
    for (int i = 0; i < nrows; i++) {
        char key[64];
        snprintf(key, sizeof key, "time-%s-ms", rows[i].key);
        kit_kv(key, "%.4f", rows[i].t.median_ms);
        snprintf(key, sizeof key, "time-%s-min-ms", rows[i].key);
        kit_kv(key, "%.4f", rows[i].t.min_ms);
        snprintf(key, sizeof key, "time-%s-max-ms", rows[i].key);
        kit_kv(key, "%.4f", rows[i].t.max_ms);
        snprintf(key, sizeof key, "segments-per-request-%s", rows[i].key);
        kit_kv(key, "%.4f", rows[i].s.segments_per_request);
        snprintf(key, sizeof key, "sectors-per-request-%s", rows[i].key);
        kit_kv(key, "%.4f", rows[i].s.sectors_per_request);
        snprintf(key, sizeof key, "requests-%s", rows[i].key);
        kit_kv(key, "%llu", rows[i].s.requests);
        snprintf(key, sizeof key, "wrong-elements-%s", rows[i].key);
        kit_kv(key, "%lld", rows[i].mismatches);
    }
    kit_kv("speedup-non-vs-full", "%.2f", rows[1].t.median_ms / t_full);
    kit_kv("summary", "coalesced %.1fx faster than random at %s floats; %.2f against %.2f "
                      "segments per request",
           rows[1].t.median_ms / t_full, kit_grouped(n), rows[0].s.segments_per_request,
           rows[1].s.segments_per_request);
    kit_kv("course-k40", "coalesced 52.2x faster than random at 4,194,304 floats (14.9x at "
                         "32,768); 1.00 against 31.09 transactions per request");
    kit_kv("expected-segments-per-request-non", "%.4f", expect_non);
    kit_kv("time-stream-ms", "%.4f", stream.t.median_ms);
    kit_kv("wrong-elements-stream", "%lld", stream.mismatches);
    kit_kv("time-copy-ms", "%.4f", copy.t.median_ms);
    kit_kv("bandwidth-stream-gbs", "%.1f", stream_gbs);
    kit_kv("bandwidth-copy-gbs", "%.1f", copy_gbs);
    kit_kv("stream-fraction-of-copy", "%.3f", stream_gbs / copy_gbs);

    /*
     * The verdict: every element right, and the two access patterns the
     * student wrote look as they must from the memory system's side.
     */
    for (int i = 0; i < nrows; i++)
        if (rows[i].mismatches) {
            fprintf(stderr, "%s: %s: %lld of %llu elements of C are wrong\n", kit_program,
                    rows[i].name, rows[i].mismatches, n);
            pass = 0;
        }
    if (stream.mismatches)
        pass = 0;
    if (rows[0].s.segments != rows[0].s.requests) {
        fprintf(stderr, "%s: full_coalesced_access: %.2f segments per request, not 1: the warp's "
                        "threads do not read one 128-byte segment\n",
                kit_program, rows[0].s.segments_per_request);
        pass = 0;
    }
    if (n < RANDOM_CHECK_MIN_SIZE)
        fprintf(stderr, "%s: note: at %llu elements the random pattern is not judged (from %d on "
                        "it is)\n", kit_program, n, RANDOM_CHECK_MIN_SIZE);
    else if (fabs(rows[1].s.segments_per_request - expect_non) > 0.05 * expect_non) {
        fprintf(stderr, "%s: non_coalesced_access: %.2f segments per request, but %.2f are "
                        "expected when each thread picks a random element of the whole array\n",
                kit_program, rows[1].s.segments_per_request, expect_non);
        pass = 0;
    }

    kit_probe_destroy(r.probe.counters);
    KIT_CHECK(cudaFree(r.probe.last_index));
    KIT_CHECK(cudaFree(dA));
    KIT_CHECK(cudaFree(dB));
    KIT_CHECK(cudaFree(dC));
    free(h.A);
    free(h.B);
    free(h.C);
    free(h.last);
    return kit_finish(pass);
}
