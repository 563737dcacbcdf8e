/*
 * Lab 05: CUDA streams - overlapping transfers and kernels.
 * Handout: handouts/05-streams.md
 *
 * The course's hands-on lab, "vector addition with streams": C = A + B on
 * integers, large enough that the copies between host and device dominate.
 * Operations in one stream run in order; operations in different streams
 * may overlap. Cut the data into chunks, give each chunk its own stream,
 * and the copy in of one chunk, the kernel of another and the copy out of
 * a third can run at the same time - if host memory is pinned and every
 * call is asynchronous.
 *
 * Versions, each checked element by element on the host:
 *   1. pageable host memory, cudaMemcpy, the default stream;
 *   2. pinned host memory, still serial;
 *   3. the pipeline: N chunks in N streams, issued depth-first, for
 *      N = 2, 3, 4, 8, 16, 32 (the course used 3);
 *   4. the pipeline issued breadth-first (all copies in, all kernels, all
 *      copies out); run with --connections 1 to see one hardware queue;
 * and a timeline of one pipeline: when each copy and kernel ran, as a text
 * Gantt chart and, with --timeline FILE, as CSV.
 */
#include "kit.h"

#define THREADS_PER_BLOCK 256
#define DEFAULT_SIZE (1u << 26) /* 3 x 256 MB of 32-bit integers */
#define MAX_STREAMS 64

/* c = a + b. With work > 0 each thread also runs `work` steps of a hash
 * that `zero` (always 0, but unknown to the compiler) keeps out of c, so a
 * heavier kernel computes the same result. */
__global__ void vector_add(const unsigned int *a, const unsigned int *b, unsigned int *c,
                           unsigned int n, int work, unsigned int zero)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int h = i;

    if (i >= n)
        return;
    for (int k = 0; k < work; k++)
        h = h * 1664525u + 1013904223u;
    c[i] = a[i] + b[i] + (h & zero);
}

/* The arrays, on the host (pinned or pageable) and on the device. */
typedef struct {
    unsigned int *hA, *hB, *hC;
    unsigned int *dA, *dB, *dC;
    int work;
    unsigned int zero;
} buffers_t;

/* A chunk: elements [first, first + count). */
typedef struct {
    unsigned int first, count;
} chunk_t;

/* ===================================================================== */
/* Student code                                                          */
/* ===================================================================== */

/* ---- KIT STUDENT REGION BEGIN: TODO(1) ---- */
/*
 * TODO(1) Pinned host memory. A copy from pageable memory goes through a
 * pinned staging buffer of the driver and cannot overlap anything; allocate
 * page-locked memory instead, and free it with the matching call.
 */
static void *alloc_pinned(size_t bytes)
{
    void *p = NULL;
    KIT_CHECK(cudaMallocHost(&p, bytes));
    return p;
}

static void free_pinned(void *p)
{
    KIT_CHECK(cudaFreeHost(p));
}
/* ---- KIT STUDENT REGION END: TODO(1) ---- */

/* ---- KIT STUDENT REGION BEGIN: TODO(2) ---- */
/*
 * TODO(2) One chunk's three steps, each queued in the chunk's stream s and
 * returning at once: copy the chunk of A and of B to the device, run
 * vector_add on the chunk (THREADS_PER_BLOCK threads per block; its
 * arguments start at the chunk's first element), copy the chunk of C back.
 */
static void copy_in(const buffers_t *b, chunk_t ch, cudaStream_t s)
{
    size_t bytes = (size_t)ch.count * sizeof(unsigned int);
    KIT_CHECK(cudaMemcpyAsync(b->dA + ch.first, b->hA + ch.first, bytes, cudaMemcpyHostToDevice, s));
    KIT_CHECK(cudaMemcpyAsync(b->dB + ch.first, b->hB + ch.first, bytes, cudaMemcpyHostToDevice, s));
}

static void compute(const buffers_t *b, chunk_t ch, cudaStream_t s)
{
    unsigned int blocks = (ch.count + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK;
    vector_add<<<blocks, THREADS_PER_BLOCK, 0, s>>>(b->dA + ch.first, b->dB + ch.first,
                                                    b->dC + ch.first, ch.count, b->work, b->zero);
    KIT_CHECK_LAUNCH();
}

static void copy_out(const buffers_t *b, chunk_t ch, cudaStream_t s)
{
    size_t bytes = (size_t)ch.count * sizeof(unsigned int);
    KIT_CHECK(cudaMemcpyAsync(b->hC + ch.first, b->dC + ch.first, bytes, cudaMemcpyDeviceToHost, s));
}
/* ---- KIT STUDENT REGION END: TODO(2) ---- */

/* ---- KIT STUDENT REGION BEGIN: TODO(3) ---- */
/*
 * TODO(3) The host may read C only when every stream has finished. Wait
 * for all n streams.
 */
static void wait_for_all(const cudaStream_t *streams, int n)
{
    for (int i = 0; i < n; i++)
        KIT_CHECK(cudaStreamSynchronize(streams[i]));
}
/* ---- KIT STUDENT REGION END: TODO(3) ---- */

/* ===================================================================== */
/* Harness                                                               */
/* ===================================================================== */

enum order { DEPTH_FIRST, BREADTH_FIRST };
enum op { OP_H2D, OP_KERNEL, OP_D2H, NOPS };
static const char op_glyph[NOPS] = {'>', '#', '<'};
static const char *const op_name[NOPS] = {"h2d", "kernel", "d2h"};

typedef struct {
    buffers_t *b;
    unsigned int n;
    int nchunks;
    enum order order;
    int ordered; /* copies of one direction run in chunk order */
    cudaStream_t streams[MAX_STREAMS];
    cudaEvent_t copied[MAX_STREAMS][NOPS]; /* step done, for the ordering */
    /* timeline run only: events around each step of each chunk */
    cudaEvent_t t0, ev[MAX_STREAMS][NOPS][2];
    int record;
} pipeline_t;

static chunk_t chunk_of(unsigned int n, int nchunks, int i)
{
    chunk_t ch;
    unsigned int base = n / nchunks, extra = n % nchunks;
    ch.first = i * base + (i < (int)extra ? i : extra);
    ch.count = base + (i < (int)extra ? 1 : 0);
    return ch;
}

/*
 * One step of chunk i in its stream. With ordered set, a copy waits for the
 * same copy of chunk i - 1: a GPU with more than one engine per direction
 * would otherwise run the copies of several chunks at once, sharing the
 * bus, and the first chunk would arrive no sooner than the last.
 */
static void step(pipeline_t *p, int i, enum op op)
{
    chunk_t ch = chunk_of(p->n, p->nchunks, i);
    cudaStream_t s = p->streams[i];
    if (p->ordered && op != OP_KERNEL && i > 0)
        KIT_CHECK(cudaStreamWaitEvent(s, p->copied[i - 1][op], 0));
    if (p->record)
        KIT_CHECK(cudaEventRecord(p->ev[i][op][0], s));
    if (op == OP_H2D)
        copy_in(p->b, ch, s);
    else if (op == OP_KERNEL)
        compute(p->b, ch, s);
    else
        copy_out(p->b, ch, s);
    if (p->record)
        KIT_CHECK(cudaEventRecord(p->ev[i][op][1], s));
    if (p->ordered && op != OP_KERNEL)
        KIT_CHECK(cudaEventRecord(p->copied[i][op], s));
}

/* One run of the pipeline, from issue to the host's wait. */
static void run_pipeline(void *ctx)
{
    pipeline_t *p = (pipeline_t *)ctx;
    if (p->order == DEPTH_FIRST) {
        for (int i = 0; i < p->nchunks; i++)
            for (int op = 0; op < NOPS; op++)
                step(p, i, (enum op)op);
    } else {
        for (int op = 0; op < NOPS; op++)
            for (int i = 0; i < p->nchunks; i++)
                step(p, i, (enum op)op);
    }
    wait_for_all(p->streams, p->nchunks);
}

/* The serial versions: cudaMemcpy and the kernel on the default stream. */
static void run_serial(void *ctx)
{
    const pipeline_t *p = (const pipeline_t *)ctx;
    const buffers_t *b = p->b;
    size_t bytes = (size_t)p->n * sizeof(unsigned int);
    KIT_CHECK(cudaMemcpy(b->dA, b->hA, bytes, cudaMemcpyHostToDevice));
    KIT_CHECK(cudaMemcpy(b->dB, b->hB, bytes, cudaMemcpyHostToDevice));
    vector_add<<<(p->n + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK, THREADS_PER_BLOCK>>>(
        b->dA, b->dB, b->dC, p->n, b->work, b->zero);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaMemcpy(b->hC, b->dC, bytes, cudaMemcpyDeviceToHost));
}

/* The parts, for bandwidths and the ideal: each on the default stream. */
static void run_h2d(void *ctx)
{
    const pipeline_t *p = (const pipeline_t *)ctx;
    KIT_CHECK(cudaMemcpy(p->b->dA, p->b->hA, (size_t)p->n * 4, cudaMemcpyHostToDevice));
}

static void run_d2h(void *ctx)
{
    const pipeline_t *p = (const pipeline_t *)ctx;
    KIT_CHECK(cudaMemcpy(p->b->hC, p->b->dC, (size_t)p->n * 4, cudaMemcpyDeviceToHost));
}

static void run_kernel(void *ctx)
{
    const pipeline_t *p = (const pipeline_t *)ctx;
    const buffers_t *b = p->b;
    vector_add<<<(p->n + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK, THREADS_PER_BLOCK>>>(
        b->dA, b->dB, b->dC, p->n, b->work, b->zero);
    KIT_CHECK_LAUNCH();
}

/* Checks every element of C; describes the first wrong one. */
static long long verify(const buffers_t *b, unsigned int n, const char *what)
{
    long long bad = 0;
    for (unsigned int i = 0; i < n; i++) {
        unsigned int want = b->hA[i] + b->hB[i];
        if (b->hC[i] == want)
            continue;
        if (bad++ == 0)
            fprintf(stderr, "%s: %s: C[%u] = %u, should be %u\n", kit_program, what, i, b->hC[i],
                    want);
    }
    if (bad)
        fprintf(stderr, "%s: %s: %lld of %u elements are wrong\n", kit_program, what, bad, n);
    return bad;
}

/*
 * Times `fn` (the median of reps), then runs it once more on a poisoned C
 * and checks the result as soon as it returns: the timer's own waiting
 * must not hide a pipeline that hands C back before its streams are done.
 */
static kit_timing timed_and_checked(kit_launch_fn fn, pipeline_t *p, const kit_common *c,
                                    const char *what, long long *wrong)
{
    kit_timing t = kit_time_launches(fn, p, c->warmup, c->reps);

    memset(p->b->hC, 0xff, (size_t)p->n * sizeof(unsigned int));
    KIT_CHECK(cudaMemset(p->b->dC, 0xff, (size_t)p->n * sizeof(unsigned int)));
    KIT_CHECK(cudaDeviceSynchronize());
    fn(p);
    for (int i = 0; i < MAX_STREAMS; i++) {
        cudaError_t e = cudaStreamQuery(p->streams[i]);
        if (e == cudaErrorNotReady) {
            fprintf(stderr, "%s: %s: the host went on while stream %d was still working: "
                            "wait for every stream before reading C\n", kit_program, what, i);
            *wrong += 1;
            break;
        }
        KIT_CHECK(e);
    }
    *wrong += verify(p->b, p->n, what);
    KIT_CHECK(cudaDeviceSynchronize());
    return t;
}

/* The best a pipeline of n chunks can do, from the measured parts: stage
 * times t[] for the whole data, and the copy engines that run them. */
static double ideal_ms(const double t[NOPS], int nchunks, int engines)
{
    double sum = t[OP_H2D] + t[OP_KERNEL] + t[OP_D2H], slowest;
    if (engines <= 0)
        return sum;
    slowest = engines == 1 ? fmax(t[OP_H2D] + t[OP_D2H], t[OP_KERNEL])
                           : fmax(fmax(t[OP_H2D], t[OP_D2H]), t[OP_KERNEL]);
    return sum / nchunks + (nchunks - 1.0) / nchunks * slowest;
}

typedef struct {
    int chunk;
    enum op op;
    float start, end; /* ms after the first operation was issued */
} span_t;

typedef struct {
    double total_ms, copy_kernel_ms, h2d_d2h_ms;
    int max_concurrent;
} overlap_t;

static int cmp_edge(const void *x, const void *y)
{
    const double *a = (const double *)x, *b = (const double *)y;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

/* How long copies ran beside kernels, and copies in beside copies out. */
static overlap_t overlaps(const span_t *sp, int nspans)
{
    double *edges = (double *)kit_host_alloc(sizeof(double) * 3 * 2 * nspans);
    int active[NOPS] = {0, 0, 0}, now = 0;
    overlap_t o;

    memset(&o, 0, sizeof o);
    for (int i = 0; i < nspans; i++) {
        double *e = edges + 6 * i;
        e[0] = sp[i].start, e[1] = +1, e[2] = sp[i].op;
        e[3] = sp[i].end, e[4] = -1, e[5] = sp[i].op;
        if (sp[i].end > o.total_ms)
            o.total_ms = sp[i].end;
    }
    qsort(edges, 2 * (size_t)nspans, 3 * sizeof(double), cmp_edge);
    for (int i = 0; i < 2 * nspans; i++) {
        double *e = edges + 3 * i;
        if (i > 0) {
            double dt = e[0] - edges[3 * (i - 1)];
            if ((active[OP_H2D] || active[OP_D2H]) && active[OP_KERNEL])
                o.copy_kernel_ms += dt;
            if (active[OP_H2D] && active[OP_D2H])
                o.h2d_d2h_ms += dt;
        }
        active[(int)e[2]] += (int)e[1];
        now += (int)e[1];
        if (now > o.max_concurrent)
            o.max_concurrent = now;
    }
    free(edges);
    return o;
}

/* Runs the pipeline once with events around every step and reads them. */
static int record_timeline(pipeline_t *p, span_t *sp)
{
    int n = 0;
    p->record = 1;
    KIT_CHECK(cudaEventCreate(&p->t0));
    for (int i = 0; i < p->nchunks; i++)
        for (int op = 0; op < NOPS; op++)
            for (int k = 0; k < 2; k++)
                KIT_CHECK(cudaEventCreate(&p->ev[i][op][k]));
    KIT_CHECK(cudaDeviceSynchronize());
    KIT_CHECK(cudaEventRecord(p->t0, 0));
    run_pipeline(p);
    KIT_CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < p->nchunks; i++)
        for (int op = 0; op < NOPS; op++) {
            sp[n].chunk = i;
            sp[n].op = (enum op)op;
            KIT_CHECK(cudaEventElapsedTime(&sp[n].start, p->t0, p->ev[i][op][0]));
            KIT_CHECK(cudaEventElapsedTime(&sp[n].end, p->t0, p->ev[i][op][1]));
            n++;
        }
    for (int i = 0; i < p->nchunks; i++)
        for (int op = 0; op < NOPS; op++)
            for (int k = 0; k < 2; k++)
                KIT_CHECK(cudaEventDestroy(p->ev[i][op][k]));
    KIT_CHECK(cudaEventDestroy(p->t0));
    p->record = 0;
    return n;
}

/* One row per stream: '>' copy in, '#' kernel, '<' copy out. */
static void print_gantt(const span_t *sp, int nspans, int nchunks, double total_ms)
{
    const int width = 64;
    printf("timeline (%.2f ms across; '>' copy in, '#' kernel, '<' copy out):\n", total_ms);
    for (int i = 0; i < nchunks; i++) {
        char row[80];
        memset(row, ' ', width);
        row[width] = '\0';
        for (int j = 0; j < nspans; j++) {
            if (sp[j].chunk != i)
                continue;
            int a = (int)(sp[j].start / total_ms * width), z = (int)(sp[j].end / total_ms * width);
            if (z >= width)
                z = width - 1;
            for (int x = a; x <= z; x++)
                row[x] = op_glyph[sp[j].op];
        }
        printf("  stream %2d |%s|\n", i, row);
    }
}

static int is_pinned(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError(); /* older runtimes: unregistered memory is an error */
        return 0;
    }
    return a.type == cudaMemoryTypeHost;
}

int main(int argc, char **argv)
{
    kit_common c;
    kit_device dev;
    int only_streams = 0, connections = 0, sweep[] = {2, 3, 4, 8, 16, 32}, nsweep;
    const char *work_arg = "0", *timeline_path = NULL;
    kit_option opts[] = {
        KIT_COMMON_OPTIONS(&c),
        {"--streams", KIT_OPT_INT, &only_streams, "N",
         "chunks and streams: only N instead of the sweep 2, 3, 4, 8, 16, 32", 1, MAX_STREAMS,
         NULL},
        {"--kernel-work", KIT_OPT_STRING, &work_arg, "W",
         "extra work per element: a count, or 'auto' to make the kernel take as long as the "
         "copies in", 0, 0, NULL},
        {"--connections", KIT_OPT_INT, &connections, "C",
         "hardware queues: sets CUDA_DEVICE_MAX_CONNECTIONS (1 is Fermi's single queue)", 1, 32,
         NULL},
        {"--timeline", KIT_OPT_STRING, &timeline_path, "FILE",
         "write the timeline as CSV (chunk, operation, start and end in ms)", 0, 0, NULL},
    };
    pipeline_t p;
    buffers_t pinned, pageable;
    kit_timing t_pageable, t_pinned, t_part[NOPS], t_h2d_pageable, t_d2h_pageable;
    kit_timing t_sweep[2][8], t_depth, t_breadth;
    double parts[NOPS], ideal[8], ideal_n;
    long long wrong = 0;
    span_t *spans;
    overlap_t ov;
    int nspans, pass = 1, best = 0, focus, auto_work = 0, ordered;
    unsigned long long work = 0;
    unsigned int n;
    size_t bytes;
    FILE *csv;

    kit_common_defaults(&c);
    kit_parse_args(argc, argv,
                   "Lab 05: CUDA streams. Vector addition of integers, serial from pageable and\n"
                   "from pinned memory, then as a pipeline of chunks in streams: the overlap of\n"
                   "copies and kernels, its ideal, the issue order, and a timeline.",
                   opts, KIT_COUNT(opts));
    if (strcmp(work_arg, "auto") == 0)
        auto_work = 1;
    else if (kit_parse_u64(work_arg, &work) != 0 || work > 1000000)
        kit_die(KIT_EXIT_USAGE, "--kernel-work '%s': expected 'auto' or a count from 0 to 1000000",
                work_arg);
    if (c.size && only_streams && (unsigned long long)only_streams > c.size)
        kit_die(KIT_EXIT_USAGE, "--streams %d: more chunks than the %llu elements", only_streams,
                c.size);
    /* Read once, when the CUDA context is created: set it before any CUDA call. */
    if (connections) {
        char v[16];
        snprintf(v, sizeof v, "%d", connections);
        setenv("CUDA_DEVICE_MAX_CONNECTIONS", v, 1);
    }
    kit_choose_seed(&c);
    csv = kit_csv_open(c.csv);
    kit_device_open(c.device, &dev);

    n = c.size ? (unsigned int)c.size : DEFAULT_SIZE;
    if (!c.size && (long long)3 * n * 4 > dev.free_bytes / 2)
        n = (unsigned int)kit_pow2_floor(dev.free_bytes / 2 / 12);
    bytes = (size_t)n * sizeof(unsigned int);
    if ((long long)(3 * bytes + (64u << 20)) > dev.free_bytes)
        kit_die(KIT_EXIT_USAGE, "--size %u needs %.0f MiB of GPU memory, %s has %.0f MiB free", n,
                3.0 * bytes / 1048576, dev.name, dev.free_bytes / 1048576.0);

    /* Inputs: random words drawn on the GPU, copied to both host copies. */
    memset(&pinned, 0, sizeof pinned);
    KIT_CHECK(cudaMalloc((void **)&pinned.dA, bytes));
    KIT_CHECK(cudaMalloc((void **)&pinned.dB, bytes));
    KIT_CHECK(cudaMalloc((void **)&pinned.dC, bytes));
    pinned.hA = (unsigned int *)alloc_pinned(bytes);
    pinned.hB = (unsigned int *)alloc_pinned(bytes);
    pinned.hC = (unsigned int *)alloc_pinned(bytes);
    kit_fill_bits(pinned.dA, n, c.seed);
    kit_fill_bits(pinned.dB, n, c.seed + 1);
    KIT_CHECK(cudaMemcpy(pinned.hA, pinned.dA, bytes, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(pinned.hB, pinned.dB, bytes, cudaMemcpyDeviceToHost));
    pageable = pinned;
    pageable.hA = (unsigned int *)kit_host_alloc(bytes);
    pageable.hB = (unsigned int *)kit_host_alloc(bytes);
    pageable.hC = (unsigned int *)kit_host_alloc(bytes);
    memcpy(pageable.hA, pinned.hA, bytes);
    memcpy(pageable.hB, pinned.hB, bytes);

    memset(&p, 0, sizeof p);
    p.n = n;
    for (int i = 0; i < MAX_STREAMS; i++) {
        KIT_CHECK(cudaStreamCreate(&p.streams[i]));
        for (int op = 0; op < NOPS; op++)
            KIT_CHECK(cudaEventCreateWithFlags(&p.copied[i][op], cudaEventDisableTiming));
    }

    /* The kernel's work: as asked, or as long as the copies in. */
    p.b = &pinned;
    if (auto_work) {
        /* Secant steps on time(work) towards the time of the copies in;
         * the kernel is memory-bound at small work, so start high. */
        double target = 2 * kit_time_launches(run_h2d, &p, 1, 3).median_ms;
        double w0 = 1024, w1 = 8192, t0, t1;
        pinned.work = (int)w0;
        t0 = kit_time_launches(run_kernel, &p, 1, 3).median_ms;
        for (int it = 0; it < 4; it++) {
            double w2;
            pinned.work = (int)w1;
            t1 = kit_time_launches(run_kernel, &p, 1, 3).median_ms;
            if (fabs(t1 - target) < 0.02 * target || t1 == t0)
                break;
            w2 = w1 + (target - t1) * (w1 - w0) / (t1 - t0);
            w2 = w2 < 0 ? 0 : w2 > 1000000 ? 1000000 : w2;
            w0 = w1, t0 = t1, w1 = w2;
        }
        work = (unsigned long long)w1;
    }
    pinned.work = pageable.work = (int)work;

    /* 1 and 2: serial, pageable then pinned; the parts for bandwidths. */
    p.b = &pageable;
    t_pageable = timed_and_checked(run_serial, &p, &c, "pageable, serial", &wrong);
    t_h2d_pageable = kit_time_launches(run_h2d, &p, c.warmup, c.reps);
    t_d2h_pageable = kit_time_launches(run_d2h, &p, c.warmup, c.reps);
    p.b = &pinned;
    t_pinned = timed_and_checked(run_serial, &p, &c, "pinned, serial", &wrong);
    t_part[OP_H2D] = kit_time_launches(run_h2d, &p, c.warmup, c.reps);
    t_part[OP_KERNEL] = kit_time_launches(run_kernel, &p, c.warmup, c.reps);
    t_part[OP_D2H] = kit_time_launches(run_d2h, &p, c.warmup, c.reps);
    parts[OP_H2D] = 2 * t_part[OP_H2D].median_ms; /* A and B */
    parts[OP_KERNEL] = t_part[OP_KERNEL].median_ms;
    parts[OP_D2H] = t_part[OP_D2H].median_ms;

    /* 3: the pipeline, depth-first, over the sweep: as the course issues it,
     * then with each direction's copies kept in chunk order. */
    nsweep = only_streams ? 1 : KIT_COUNT(sweep);
    if (only_streams)
        sweep[0] = only_streams;
    p.order = DEPTH_FIRST;
    for (int i = 0; i < nsweep; i++) {
        if ((unsigned int)sweep[i] > n)
            kit_die(KIT_EXIT_USAGE, "%d chunks: more chunks than the %u elements", sweep[i], n);
        p.nchunks = sweep[i];
        for (int o = 0; o < 2; o++) {
            char what[64];
            snprintf(what, sizeof what, "pipeline, %d streams%s", sweep[i], o ? ", ordered" : "");
            p.ordered = o;
            t_sweep[o][i] = timed_and_checked(run_pipeline, &p, &c, what, &wrong);
        }
        ideal[i] = ideal_ms(parts, sweep[i], dev.copy_engines);
    }
    /* The fastest pipeline of all. */
    ordered = 0;
    for (int o = 0; o < 2; o++)
        for (int i = 0; i < nsweep; i++)
            if (t_sweep[o][i].median_ms < t_sweep[ordered][best].median_ms)
                ordered = o, best = i;

    /* 4: issue order, on the course's pipeline at the fastest N; then the
     * timeline of the fastest pipeline. */
    focus = sweep[best];
    p.nchunks = focus;
    p.ordered = 0;
    p.order = DEPTH_FIRST;
    t_depth = timed_and_checked(run_pipeline, &p, &c, "depth-first", &wrong);
    p.order = BREADTH_FIRST;
    t_breadth = timed_and_checked(run_pipeline, &p, &c, "breadth-first", &wrong);
    p.order = DEPTH_FIRST;
    p.ordered = ordered;
    spans = (span_t *)kit_host_alloc(sizeof(span_t) * NOPS * focus);
    nspans = record_timeline(&p, spans);
    ov = overlaps(spans, nspans);
    ideal_n = ideal_ms(parts, focus, dev.copy_engines);

    const char *conn = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    double bw_pin_h2d = bytes / (t_part[OP_H2D].median_ms * 1e6);
    double bw_pin_d2h = bytes / (t_part[OP_D2H].median_ms * 1e6);
    double bw_page_h2d = bytes / (t_h2d_pageable.median_ms * 1e6);
    double bw_page_d2h = bytes / (t_d2h_pageable.median_ms * 1e6);
    double t_best = t_sweep[ordered][best].median_ms;

    if (csv != stdout) {
        kit_banner("Lab 05: CUDA streams", &dev);
        printf("3 x %s 32-bit integers (%.0f MiB each), kernel work %llu, %d copy engines,\n"
               "CUDA_DEVICE_MAX_CONNECTIONS %s, median of %d runs, seed %llu\n\n",
               kit_grouped(n), bytes / 1048576.0, work, dev.copy_engines,
               conn ? conn : "unset (8)", c.reps, c.seed);
        printf("copies of %.0f MiB:          pageable      pinned\n", bytes / 1048576.0);
        printf("  host to device        %8.1f GB/s %8.1f GB/s  (%.1fx)\n", bw_page_h2d,
               bw_pin_h2d, bw_pin_h2d / bw_page_h2d);
        printf("  device to host        %8.1f GB/s %8.1f GB/s  (%.1fx)\n", bw_page_d2h,
               bw_pin_d2h, bw_pin_d2h / bw_page_d2h);
        printf("  kernel on all of it   %8.3f ms\n\n", parts[OP_KERNEL]);
        printf("%-34s %11s %14s %12s\n", "version", "time (ms)", "vs pinned", "of ideal");
        printf("%-34s %11.3f %13.2fx\n", "1. pageable, serial", t_pageable.median_ms,
               t_pinned.median_ms / t_pageable.median_ms);
        printf("%-34s %11.3f %13.2fx %11.0f%%\n", "2. pinned, serial", t_pinned.median_ms, 1.0,
               100.0 * ideal_ms(parts, 1, 0) / t_pinned.median_ms);
        for (int o = 0; o < 2; o++)
            for (int i = 0; i < nsweep; i++) {
                char name[48];
                snprintf(name, sizeof name, "3%c. pipeline, %d streams%s", o ? 'b' : 'a',
                         sweep[i], o == ordered && i == best ? " (best)" : "");
                printf("%-34s %11.3f %13.2fx %11.0f%%\n", name, t_sweep[o][i].median_ms,
                       t_pinned.median_ms / t_sweep[o][i].median_ms,
                       100.0 * ideal[i] / t_sweep[o][i].median_ms);
            }
        printf("(3a is issued as the course does; 3b keeps each direction's copies in chunk order;\n"
               "4 is the course's pipeline, 3a, with %d streams, in both issue orders.)\n", focus);
        printf("%-34s %11.3f %13.2fx %11.0f%%\n", "4. depth-first issue", t_depth.median_ms,
               t_pinned.median_ms / t_depth.median_ms, 100.0 * ideal_n / t_depth.median_ms);
        printf("%-34s %11.3f %13.2fx %11.0f%%\n", "4. breadth-first issue", t_breadth.median_ms,
               t_pinned.median_ms / t_breadth.median_ms, 100.0 * ideal_n / t_breadth.median_ms);
        printf("\nThe ideal: the stages of one chunk, then the slowest stage for the rest\n"
               "(copies in %.3f ms, kernel %.3f ms, copies out %.3f ms in all; %s).\n\n",
               parts[OP_H2D], parts[OP_KERNEL], parts[OP_D2H],
               dev.copy_engines >= 2 ? "copies in and out on separate engines"
                                     : "one copy engine for both directions");
        print_gantt(spans, nspans, focus, ov.total_ms);
        if (connections == 1)
            printf("  (with one hardware queue the timeline's own events wait in that queue and\n"
                   "  serialise the streams: the timed runs above are the ones to trust)\n");
        printf("  copies overlapped kernels for %.3f ms; copies in overlapped copies out for "
               "%.3f ms;\n  at most %d operations ran at once.\n\n",
               ov.copy_kernel_ms, ov.h2d_d2h_ms, ov.max_concurrent);
        printf("The course: a pipeline hides the kernel and the shorter copy behind the longest\n"
               "stage; its three streams gave 3-way concurrency on a Kepler with 2 copy engines.\n"
               "this GPU: %.2fx over pinned serial with %d streams, %.0f%% of the ideal.\n\n",
               t_pinned.median_ms / t_best, sweep[best], 100.0 * ideal[best] / t_best);
    }
    if (csv) {
        fprintf(csv, "version,streams,time_ms,ideal_ms\n");
        fprintf(csv, "pageable serial,1,%.6f,\n", t_pageable.median_ms);
        fprintf(csv, "pinned serial,1,%.6f,%.6f\n", t_pinned.median_ms, ideal_ms(parts, 1, 0));
        for (int o = 0; o < 2; o++)
            for (int i = 0; i < nsweep; i++)
                fprintf(csv, "pipeline depth-first%s,%d,%.6f,%.6f\n", o ? " ordered" : "",
                        sweep[i], t_sweep[o][i].median_ms, ideal[i]);
        fprintf(csv, "pipeline breadth-first,%d,%.6f,%.6f\n", focus, t_breadth.median_ms, ideal_n);
        kit_csv_close(csv);
    }
    if (timeline_path) {
        FILE *f = kit_csv_open(timeline_path);
        fprintf(f, "chunk,operation,start_ms,end_ms\n");
        for (int i = 0; i < nspans; i++)
            fprintf(f, "%d,%s,%.6f,%.6f\n", spans[i].chunk, op_name[spans[i].op], spans[i].start,
                    spans[i].end);
        kit_csv_close(f);
    }

    kit_kv("lab", "05-streams");
    kit_kv_device(&dev);
    kit_kv("size", "%u", n);
    kit_kv("seed", "%llu", c.seed);
    kit_kv("reps", "%d", c.reps);
    kit_kv("kernel-work", "%llu", work);
    kit_kv("connections", "%s", conn ? conn : "default");
    kit_kv("bandwidth-h2d-pageable-gbs", "%.2f", bw_page_h2d);
    kit_kv("bandwidth-d2h-pageable-gbs", "%.2f", bw_page_d2h);
    kit_kv("bandwidth-h2d-pinned-gbs", "%.2f", bw_pin_h2d);
    kit_kv("bandwidth-d2h-pinned-gbs", "%.2f", bw_pin_d2h);
    kit_kv("pinned-vs-pageable-h2d", "%.2f", bw_pin_h2d / bw_page_h2d);
    kit_kv("time-h2d-ms", "%.4f", parts[OP_H2D]);
    kit_kv("time-kernel-ms", "%.4f", parts[OP_KERNEL]);
    kit_kv("time-d2h-ms", "%.4f", parts[OP_D2H]);
    kit_kv("time-pageable-serial-ms", "%.4f", t_pageable.median_ms);
    kit_kv("time-pinned-serial-ms", "%.4f", t_pinned.median_ms);
    for (int i = 0; i < nsweep; i++) {
        char key[64];
        snprintf(key, sizeof key, "time-pipeline-%d-ms", sweep[i]);
        kit_kv(key, "%.4f", t_sweep[0][i].median_ms);
        snprintf(key, sizeof key, "time-pipeline-ordered-%d-ms", sweep[i]);
        kit_kv(key, "%.4f", t_sweep[1][i].median_ms);
        snprintf(key, sizeof key, "ideal-pipeline-%d-ms", sweep[i]);
        kit_kv(key, "%.4f", ideal[i]);
    }
    kit_kv("best-streams", "%d", sweep[best]);
    kit_kv("best-ordered", "%s", ordered ? "yes" : "no");
    kit_kv("speedup-pipeline-vs-pinned", "%.3f", t_pinned.median_ms / t_best);
    kit_kv("pipeline-fraction-of-ideal", "%.3f", ideal[best] / t_best);
    kit_kv("time-depth-first-ms", "%.4f", t_depth.median_ms);
    kit_kv("time-breadth-first-ms", "%.4f", t_breadth.median_ms);
    kit_kv("overlap-copy-kernel-ms", "%.4f", ov.copy_kernel_ms);
    kit_kv("overlap-h2d-d2h-ms", "%.4f", ov.h2d_d2h_ms);
    kit_kv("max-concurrent-operations", "%d", ov.max_concurrent);
    kit_kv("timeline-ms", "%.4f", ov.total_ms);
    kit_kv("wrong-elements", "%lld", wrong);
    kit_kv("summary", "pinned %.1fx pageable host to device; %d streams%s %.2fx over pinned "
                      "serial, %.0f%% of the ideal",
           bw_pin_h2d / bw_page_h2d, sweep[best], ordered ? " (copies in order)" : "",
           t_pinned.median_ms / t_best,
           100.0 * ideal[best] / t_best);
    kit_kv("course-k40", "a three-stream pipeline overlaps copies in, kernels and copies out "
                         "(3-way concurrency with 2 copy engines)");

    /* The verdict: right everywhere, pinned buffers, and a pipeline whose
     * copies ran beside its kernels. */
    if (wrong)
        pass = 0;
    if (!is_pinned(pinned.hA) || !is_pinned(pinned.hC)) {
        fprintf(stderr, "%s: alloc_pinned returned pageable memory: copies from it cannot "
                        "overlap anything\n", kit_program);
        pass = 0;
    }
    if (connections == 1)
        fprintf(stderr, "%s: note: with --connections 1 the timeline's events serialise the "
                        "streams, so its overlap is not judged\n", kit_program);
    else if (dev.copy_engines > 0 && ov.max_concurrent < 2) {
        fprintf(stderr, "%s: in the timeline no two operations ran at once: are the copies "
                        "asynchronous and in the chunk's stream?\n", kit_program);
        pass = 0;
    }

    free(spans);
    for (int i = 0; i < MAX_STREAMS; i++) {
        KIT_CHECK(cudaStreamDestroy(p.streams[i]));
        for (int op = 0; op < NOPS; op++)
            KIT_CHECK(cudaEventDestroy(p.copied[i][op]));
    }
    free_pinned(pinned.hA);
    free_pinned(pinned.hB);
    free_pinned(pinned.hC);
    free(pageable.hA);
    free(pageable.hB);
    free(pageable.hC);
    KIT_CHECK(cudaFree(pinned.dA));
    KIT_CHECK(cudaFree(pinned.dB));
    KIT_CHECK(cudaFree(pinned.dC));
    return kit_finish(pass);
}
