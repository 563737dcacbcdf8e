/*
 * kit_timeline.h - when each copy and each kernel of a pipeline ran,
 * measured without a profiler (the streams labs: 05, and 08 after it).
 *
 *   copies   a lab's traced build (common/harness/student.cu with
 *            KIT_COUNTED=1) routes the student's cudaMemcpyAsync and
 *            cudaMemcpy through kit_traced_memcpy_async / kit_traced_memcpy,
 *            which record a CUDA event just before and just after the copy,
 *            in the copy's own stream; the timed build calls the runtime
 *            directly. With several GPUs (Lab 08) the same trace takes each
 *            copy's events from the GPU of its stream (kit_traced_memcpy_on);
 *   kernels  the kit's traced kernels read %globaltimer when each block
 *            starts and ends (kit_block_span): no event is placed in any
 *            stream for them, so the student's launch is not touched;
 *   clocks   kit_clock puts both on one axis: a one-thread kernel reads
 *            %globaltimer between two events, before and after the run;
 *            kit_clock.uncertainty_ms says how far the two axes may be off.
 *            With several GPUs (Lab 08) each GPU's events have an axis of
 *            their own (cudaEventElapsedTime takes two events of one
 *            GPU): kit_event_clock puts each GPU's on the host's clock,
 *            one GPU at a time, with its own uncertainty.
 *
 * From the spans a lab computes how long copies ran beside kernels
 * (kit_overlap_of), how long they could have (kit_overlap_possible), and
 * draws the text timeline (kit_gantt_print).
 *
 * An event in a stream is a queue entry like a copy: with one hardware
 * queue (CUDA_DEVICE_MAX_CONNECTIONS=1) the copy events wait in that queue
 * and serialise the streams, so a traced run there is not the timed run.
 */
#ifndef KIT_TIMELINE_H
#define KIT_TIMELINE_H

#include <math.h>
#include <time.h>

#include "kit_check.h"
#include "kit_host.h"

/* What a span is: a copy in, a kernel, a copy out, or another copy. */
enum { KIT_OP_H2D, KIT_OP_KERNEL, KIT_OP_D2H, KIT_OP_OTHER, KIT_NOPS };
static const char kit_op_glyph[KIT_NOPS] = {'>', '#', '<', '='};
static const char *const kit_op_name[KIT_NOPS] = {"h2d", "kernel", "d2h", "other"};

/* ---- kernels: each block's start and end ------------------------------------ */

/* One block of a traced launch; launch 0 marks an empty slot. */
typedef struct {
    unsigned long long start, end; /* %globaltimer, ns */
    unsigned long long launch;     /* what the launch is known by, e.g. its output pointer */
} kit_block_span;

/* Thread 0 of a block, at its end: the block began at `start`. */
static __device__ __forceinline__ void kit_block_span_record(kit_block_span *spans, unsigned long long cap,
                                                             unsigned long long slot,
                                                             unsigned long long launch,
                                                             unsigned long long start)
{
    if (spans && slot < cap) {
        kit_block_span s;
        s.start = start;
        s.end = kit_globaltimer();
        s.launch = launch;
        spans[slot] = s;
    }
}

/* A launch: the first start and the last end of its blocks. */
typedef struct {
    unsigned long long launch, start, end;
    unsigned long long blocks;
} kit_launch_span;

/*
 * Groups the block spans (host copy, cap slots) by launch into out[0..max);
 * returns how many launches. Slots are in the order of the elements the
 * blocks start at, so a launch's blocks sit together.
 */
static inline int kit_launch_spans(const kit_block_span *b, unsigned long long cap, kit_launch_span *out, int max)
{
    int n = 0, last = -1;
    for (unsigned long long i = 0; i < cap; i++) {
        int k = -1;
        if (b[i].launch == 0)
            continue;
        if (last >= 0 && out[last].launch == b[i].launch)
            k = last;
        for (int j = 0; k < 0 && j < n; j++)
            if (out[j].launch == b[i].launch)
                k = j;
        if (k < 0) {
            if (n == max)
                continue;
            k = n++;
            out[k].launch = b[i].launch;
            out[k].start = b[i].start;
            out[k].end = b[i].end;
            out[k].blocks = 0;
        }
        if (b[i].start < out[k].start)
            out[k].start = b[i].start;
        if (b[i].end > out[k].end)
            out[k].end = b[i].end;
        out[k].blocks++;
        last = k;
    }
    return n;
}

/* ---- the two clocks ------------------------------------------------------------ */

static __global__ void kit_clock_stamp_kernel(unsigned long long *t) { *t = kit_globaltimer(); }

typedef struct {
    cudaEvent_t t0;      /* the timeline's zero */
    cudaEvent_t e[4];    /* around the two stamps */
    unsigned long long *d_stamp;
    unsigned long long g[2];
    double mid_ms[2], half_ms[2];
    unsigned long long ref_g; /* this %globaltimer reading... */
    double ref_ms;            /* ...was this many ms after t0 */
    double uncertainty_ms;    /* how far a kernel's time may be off against the events */
} kit_clock;

/* Tries at a reading, and the bracket that ends them early (ms). */
#define KIT_CLOCK_TRIES 8
#define KIT_CLOCK_GOOD_HALF_MS 0.005

/* Reading k: a %globaltimer stamp between two events, the narrowest bracket
 * of a few tries. A host thread that loses its core between the first
 * event and the launch (a busy machine) widens a bracket; another try
 * mends it. */
static inline void kit_clock_measure(kit_clock *c, int k)
{
    for (int i = 0; i < KIT_CLOCK_TRIES; i++) {
        unsigned long long g;
        float a, b;
        KIT_CHECK(cudaEventRecord(c->e[2 * k], 0));
        kit_clock_stamp_kernel<<<1, 1>>>(c->d_stamp);
        KIT_CHECK_LAUNCH();
        KIT_CHECK(cudaEventRecord(c->e[2 * k + 1], 0));
        KIT_CHECK(cudaEventSynchronize(c->e[2 * k + 1]));
        KIT_CHECK(cudaMemcpy(&g, c->d_stamp, sizeof g, cudaMemcpyDeviceToHost));
        KIT_CHECK(cudaEventElapsedTime(&a, c->t0, c->e[2 * k]));
        KIT_CHECK(cudaEventElapsedTime(&b, c->t0, c->e[2 * k + 1]));
        if (i == 0 || 0.5 * ((double)b - a) < c->half_ms[k]) {
            c->g[k] = g;
            c->mid_ms[k] = 0.5 * ((double)a + b);
            c->half_ms[k] = 0.5 * ((double)b - a);
        }
        if (c->half_ms[k] <= KIT_CLOCK_GOOD_HALF_MS)
            break;
    }
}

/* Sets the zero of the timeline and reads the clocks once: call it with
 * the GPU idle, just before the traced work is issued. */
static inline void kit_clock_begin(kit_clock *c)
{
    memset(c, 0, sizeof *c);
    KIT_CHECK(cudaEventCreate(&c->t0));
    for (int i = 0; i < 4; i++)
        KIT_CHECK(cudaEventCreate(&c->e[i]));
    KIT_CHECK(cudaMalloc((void **)&c->d_stamp, sizeof *c->d_stamp));
    kit_clock_stamp_kernel<<<1, 1>>>(c->d_stamp); /* loaded and warm */
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaDeviceSynchronize());
    KIT_CHECK(cudaEventRecord(c->t0, 0));
    kit_clock_measure(c, 0);
}

/* After the traced work: waits for it, reads the clocks again, and keeps
 * the reading with the narrower bracket. */
static inline void kit_clock_end(kit_clock *c)
{
    double drift;
    int k;

    KIT_CHECK(cudaDeviceSynchronize());
    kit_clock_measure(c, 1);
    k = c->half_ms[1] < c->half_ms[0] ? 1 : 0;
    c->ref_g = c->g[k];
    c->ref_ms = c->mid_ms[k];
    /* The two readings must agree on how much time passed between them. */
    drift = (c->mid_ms[1] - c->mid_ms[0]) - (double)(long long)(c->g[1] - c->g[0]) / 1e6;
    c->uncertainty_ms = c->half_ms[k] + 0.002 + (drift < 0 ? -drift : drift);
}

/* A %globaltimer reading, in ms after t0. */
static inline double kit_clock_ms(const kit_clock *c, unsigned long long g)
{
    return c->ref_ms + (double)(long long)(g - c->ref_g) / 1e6;
}

/* An event (completed), in ms after t0. */
static inline double kit_clock_event_ms(const kit_clock *c, cudaEvent_t e)
{
    float ms = 0.0f;
    KIT_CHECK(cudaEventElapsedTime(&ms, c->t0, e));
    return ms;
}

static inline void kit_clock_destroy(kit_clock *c)
{
    KIT_CHECK(cudaEventDestroy(c->t0));
    for (int i = 0; i < 4; i++)
        KIT_CHECK(cudaEventDestroy(c->e[i]));
    KIT_CHECK(cudaFree(c->d_stamp));
}

/* ---- several GPUs: each GPU's events on the host's clock ------------------------ */

/*
 * One GPU's events on the host's clock (CLOCK_MONOTONIC, kit_wall_ms's):
 * the host reads its clock, records an event in the idle GPU's default
 * stream and waits for it, and reads its clock again; the event's time is
 * between the two readings. The narrowest bracket of a few tries, before
 * and after the traced work, as kit_clock does for %globaltimer.
 */
typedef struct {
    int device;
    cudaEvent_t t0;     /* the GPU's zero: its events are measured from it */
    cudaEvent_t e;      /* a reading */
    double mid_ms[2], half_ms[2]; /* host ms at a reading, and half its bracket */
    double ev_ms[2];    /* the reading's event, in ms after t0 */
    double offset_ms;   /* host ms at t0 */
    double uncertainty_ms; /* how far an event's host time may be off */
} kit_event_clock;

static inline double kit_event_clock_host_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Reading k of c's GPU, current and idle. */
static inline void kit_event_clock_measure(kit_event_clock *c, int k)
{
    for (int i = 0; i < KIT_CLOCK_TRIES; i++) {
        double a, b;
        float x;
        a = kit_event_clock_host_ms();
        KIT_CHECK(cudaEventRecord(c->e, 0));
        KIT_CHECK(cudaEventSynchronize(c->e));
        b = kit_event_clock_host_ms();
        KIT_CHECK(cudaEventElapsedTime(&x, c->t0, c->e));
        if (i == 0 || 0.5 * (b - a) < c->half_ms[k]) {
            c->mid_ms[k] = 0.5 * (a + b);
            c->half_ms[k] = 0.5 * (b - a);
            c->ev_ms[k] = x;
        }
        if (c->half_ms[k] <= KIT_CLOCK_GOOD_HALF_MS)
            break;
    }
}

/* Sets GPU device's zero and reads the clocks once: call it with that GPU
 * idle, before the traced work is issued. The current GPU stays as it was. */
static inline void kit_event_clock_begin(kit_event_clock *c, int device)
{
    int was = 0;
    memset(c, 0, sizeof *c);
    c->device = device;
    KIT_CHECK(cudaGetDevice(&was));
    KIT_CHECK(cudaSetDevice(device));
    KIT_CHECK(cudaEventCreate(&c->t0));
    KIT_CHECK(cudaEventCreate(&c->e));
    KIT_CHECK(cudaEventRecord(c->t0, 0));
    KIT_CHECK(cudaEventSynchronize(c->t0));
    kit_event_clock_measure(c, 0);
    KIT_CHECK(cudaSetDevice(was));
}

/* After the traced work: waits for the GPU, reads the clocks again and
 * keeps the reading with the narrower bracket. */
static inline void kit_event_clock_end(kit_event_clock *c)
{
    int was = 0, k;
    double drift;
    KIT_CHECK(cudaGetDevice(&was));
    KIT_CHECK(cudaSetDevice(c->device));
    KIT_CHECK(cudaDeviceSynchronize());
    kit_event_clock_measure(c, 1);
    KIT_CHECK(cudaSetDevice(was));
    k = c->half_ms[1] < c->half_ms[0] ? 1 : 0;
    c->offset_ms = c->mid_ms[k] - c->ev_ms[k];
    /* The two readings must agree on how much time passed between them;
     * events are timed to about half a microsecond. */
    drift = (c->mid_ms[1] - c->mid_ms[0]) - (c->ev_ms[1] - c->ev_ms[0]);
    c->uncertainty_ms = c->half_ms[k] + 0.002 + (drift < 0 ? -drift : drift);
}

/* An event of c's GPU (completed), in host ms (kit_event_clock_host_ms's clock). */
static inline double kit_event_clock_ms(const kit_event_clock *c, cudaEvent_t e)
{
    float ms = 0.0f;
    KIT_CHECK(cudaEventElapsedTime(&ms, c->t0, e));
    return c->offset_ms + ms;
}

static inline void kit_event_clock_destroy(kit_event_clock *c)
{
    KIT_CHECK(cudaEventDestroy(c->t0));
    KIT_CHECK(cudaEventDestroy(c->e));
}

/* ---- copies: the traced build's cudaMemcpyAsync and cudaMemcpy -------------- */

/*
 * cudaEventElapsedTime takes two events of one GPU, and an event goes only
 * into a stream of its own GPU: each copy takes its two events from its
 * GPU's own, recorded with that GPU current. The caller says which GPU a
 * copy's stream is of (for the default stream, the current one's): with
 * several GPUs (Lab 08) kit_traced_memcpy_async_on; on one GPU (Lab 05)
 * kit_traced_memcpy_async, the trace's one GPU. The records stay in the
 * order the copies were queued, across the GPUs; kit_copy_trace_free
 * frees them and the events.
 */
typedef struct {
    cudaMemcpyKind kind;
    void *dst;
    const void *src;
    size_t bytes;
    cudaStream_t stream;
    int sync;     /* 1: cudaMemcpy, which returns when the copy is done */
    int recorded; /* both events are in the stream */
    cudaEvent_t start, end;
    int device;   /* the GPU its events are of, current while they are recorded */
} kit_copy_record;

/* At most this many GPUs in one trace (kit_copy_trace_start_gpus). */
#define KIT_COPY_TRACE_GPUS 16

typedef struct {
    int on;        /* record the copies now */
    int count, room; /* records taken, of room */
    long long missed; /* copies not recorded: no room, or not of the trace's GPUs */
    kit_copy_record *rec;
    /* Each record takes two of its GPU's 2 * per_gpu events in pool. */
    int ngpus, per_gpu;
    int device[KIT_COPY_TRACE_GPUS], used[KIT_COPY_TRACE_GPUS];
    cudaEvent_t *pool; /* GPU device[g]'s events: 2 * per_gpu from pool[2 * per_gpu * g] */
} kit_copy_trace;

/* One for the whole program (weak: every translation unit shares it). */
__attribute__((weak)) kit_copy_trace kit_copy_trace_now;

static inline void kit_copy_trace_stop(void) { kit_copy_trace_now.on = 0; }

static inline void kit_copy_trace_free(void)
{
    kit_copy_trace *t = &kit_copy_trace_now;
    for (int i = 0; i < 2 * t->per_gpu * t->ngpus; i++)
        KIT_CHECK(cudaEventDestroy(t->pool[i]));
    free(t->pool);
    free(t->rec);
    memset(t, 0, sizeof *t);
}

/* Starts recording up to per_gpu copies on each of the GPUs devices[0..ngpus)
 * (the current GPU stays as it was); the events of a trace of the same GPUs
 * not freed since are used again. */
static inline void kit_copy_trace_start_gpus(const int *devices, int ngpus, int per_gpu)
{
    kit_copy_trace *t = &kit_copy_trace_now;
    int was = 0;

    if (ngpus < 1 || ngpus > KIT_COPY_TRACE_GPUS)
        kit_die(KIT_EXIT_FAIL, "a copy trace of %d GPUs (a bug of the kit)", ngpus);
    if (t->ngpus != ngpus || t->per_gpu != per_gpu || memcmp(t->device, devices, sizeof *devices * ngpus)) {
        kit_copy_trace_free();
        t->room = ngpus * per_gpu;
        t->ngpus = ngpus;
        t->per_gpu = per_gpu;
        t->rec = (kit_copy_record *)kit_host_alloc(sizeof(kit_copy_record) * (size_t)t->room);
        t->pool = (cudaEvent_t *)kit_host_alloc(sizeof(cudaEvent_t) * 2 * (size_t)t->room);
        KIT_CHECK(cudaGetDevice(&was));
        for (int g = 0; g < ngpus; g++) {
            t->device[g] = devices[g];
            KIT_CHECK(cudaSetDevice(devices[g]));
            for (int i = 0; i < 2 * per_gpu; i++)
                KIT_CHECK(cudaEventCreate(&t->pool[2 * per_gpu * g + i]));
        }
        KIT_CHECK(cudaSetDevice(was));
    }
    t->count = 0;
    t->missed = 0;
    memset(t->used, 0, sizeof t->used);
    t->on = 1;
}

/* Starts recording up to cap copies on the current GPU: a trace of one. */
static inline void kit_copy_trace_start(int cap)
{
    int device = 0;
    KIT_CHECK(cudaGetDevice(&device));
    kit_copy_trace_start_gpus(&device, 1, cap);
}

/* Records e in r's stream, with r's GPU current (an event goes only into a
 * stream of its own GPU; the current GPU stays as it was); 1 where it is
 * there. A stream the runtime refuses makes the copy fail too; that error,
 * not the event's, is the one the caller must see: a refused record leaves
 * no error behind. */
static inline int kit_copy_record_event(const kit_copy_record *r, cudaEvent_t e)
{
    int was = r->device, ok;
    if (cudaGetDevice(&was) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    if (was != r->device && cudaSetDevice(r->device) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    ok = cudaEventRecord(e, r->stream) == cudaSuccess;
    if (!ok)
        (void)cudaGetLastError();
    if (was != r->device)
        KIT_CHECK(cudaSetDevice(was));
    return ok;
}

/* The record of the next copy, queued in a stream of GPU device, its start
 * event there; NULL when none is wanted, or (counted missed) where device
 * is not one of the trace's or its GPU's events are all taken. */
static inline kit_copy_record *kit_copy_trace_next_on(int device, void *dst, const void *src, size_t bytes,
                                                      cudaMemcpyKind kind, cudaStream_t stream, int sync)
{
    kit_copy_trace *t = &kit_copy_trace_now;
    kit_copy_record *r;
    int g = 0;

    if (!t->on)
        return NULL;
    while (g < t->ngpus && t->device[g] != device)
        g++;
    if (g == t->ngpus || t->used[g] + 2 > 2 * t->per_gpu || t->count == t->room) {
        t->missed++;
        return NULL;
    }
    r = &t->rec[t->count++];
    r->kind = kind;
    r->dst = dst;
    r->src = src;
    r->bytes = bytes;
    r->stream = stream;
    r->sync = sync;
    r->device = device;
    r->start = t->pool[2 * t->per_gpu * g + t->used[g]++];
    r->end = t->pool[2 * t->per_gpu * g + t->used[g]++];
    r->recorded = kit_copy_record_event(r, r->start);
    return r;
}

static inline void kit_copy_trace_done(kit_copy_record *r)
{
    if (r && r->recorded)
        r->recorded = kit_copy_record_event(r, r->end);
}

/* cudaMemcpyAsync and cudaMemcpy of a copy in a stream of GPU device, recorded. */
static inline cudaError_t kit_traced_memcpy_async_on(int device, void *dst, const void *src, size_t bytes,
                                                     cudaMemcpyKind kind, cudaStream_t stream)
{
    kit_copy_record *r = kit_copy_trace_next_on(device, dst, src, bytes, kind, stream, 0);
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, stream);
    kit_copy_trace_done(r);
    return e;
}

static inline cudaError_t kit_traced_memcpy_on(int device, void *dst, const void *src, size_t bytes,
                                               cudaMemcpyKind kind)
{
    kit_copy_record *r = kit_copy_trace_next_on(device, dst, src, bytes, kind, 0, 1);
    cudaError_t e = cudaMemcpy(dst, src, bytes, kind);
    kit_copy_trace_done(r);
    return e;
}

/* The same on the one GPU of a trace of one (kit_copy_trace_start). */
static inline cudaError_t kit_traced_memcpy_async(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                                                  cudaStream_t stream = 0)
{
    return kit_traced_memcpy_async_on(kit_copy_trace_now.device[0], dst, src, bytes, kind, stream);
}

static inline cudaError_t kit_traced_memcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    return kit_traced_memcpy_on(kit_copy_trace_now.device[0], dst, src, bytes, kind);
}

/* ---- spans, their overlap, the text timeline ------------------------------------ */

typedef struct {
    int op;           /* KIT_OP_... */
    long long row;    /* which row of the timeline: e.g. the chunk's first element */
    int stream;       /* index of its stream, -1 if unknown */
    double start, end; /* ms after the timeline's zero */
} kit_span;

typedef struct {
    double first_ms, last_ms; /* the first start and the last end */
    double kernel_ms;         /* time with a kernel running */
    double copy_kernel_ms;    /* time with a kernel and a copy running */
    double h2d_d2h_ms;        /* time with a copy in and a copy out running */
    int max_concurrent;       /* most operations running at one time */
} kit_overlap;

static inline int kit_cmp_edge(const void *x, const void *y)
{
    const double *a = (const double *)x, *b = (const double *)y;
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    /* At equal times ends (-1) before starts (+1): touching spans do not overlap. */
    return (a[1] > b[1]) - (a[1] < b[1]);
}

/*
 * How long operations ran beside each other. Kernels are first narrowed by
 * kernel_margin_ms at each end (the clocks' uncertainty), so that an
 * overlap that may come only from the clocks is not counted.
 */
static inline kit_overlap kit_overlap_of(const kit_span *s, int n, double kernel_margin_ms)
{
    double *edges = (double *)kit_host_alloc(sizeof(double) * 3 * 2 * (size_t)(n > 0 ? n : 1));
    int active[KIT_NOPS] = {0, 0, 0, 0}, now = 0, m = 0;
    kit_overlap o;

    memset(&o, 0, sizeof o);
    for (int i = 0; i < n; i++) {
        double a = s[i].start, z = s[i].end;
        if (i == 0 || a < o.first_ms)
            o.first_ms = a;
        if (i == 0 || z > o.last_ms)
            o.last_ms = z;
        if (s[i].op == KIT_OP_KERNEL)
            a += kernel_margin_ms, z -= kernel_margin_ms;
        if (z <= a)
            continue;
        edges[6 * m + 0] = a, edges[6 * m + 1] = +1, edges[6 * m + 2] = s[i].op;
        edges[6 * m + 3] = z, edges[6 * m + 4] = -1, edges[6 * m + 5] = s[i].op;
        m++;
    }
    qsort(edges, 2 * (size_t)m, 3 * sizeof(double), kit_cmp_edge);
    for (int i = 0; i < 2 * m; i++) {
        const double *e = edges + 3 * i;
        if (i > 0) {
            double dt = e[0] - edges[3 * (i - 1)];
            int copies = active[KIT_OP_H2D] + active[KIT_OP_D2H] + active[KIT_OP_OTHER];
            if (active[KIT_OP_KERNEL])
                o.kernel_ms += dt;
            if (copies && active[KIT_OP_KERNEL])
                o.copy_kernel_ms += dt;
            if (active[KIT_OP_H2D] && active[KIT_OP_D2H])
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

/*
 * The share of the kernels' time that copies could run beside in a
 * depth-first pipeline of nchunks chunks, each chunk's copy in, kernel
 * (narrowed by kernel_margin_ms at each end, as kit_overlap_of does) and
 * copy out taken at their means over the spans: the first kernel beside
 * the second chunk's copy in, the last beside the one before's copy out,
 * every other kernel beside both. 1 where there is one chunk, or nothing
 * was copied in or out, or no kernel outlasts its margins.
 */
static inline double kit_overlap_possible(const kit_span *s, int n, int nchunks, double kernel_margin_ms)
{
    double in = 0, out = 0, k = 0, can;

    for (int i = 0; i < n; i++) {
        double t = s[i].end - s[i].start;
        if (s[i].op == KIT_OP_H2D)
            in += t;
        else if (s[i].op == KIT_OP_D2H)
            out += t;
        else if (s[i].op == KIT_OP_KERNEL && t > 2 * kernel_margin_ms)
            k += t - 2 * kernel_margin_ms;
    }
    if (nchunks < 2 || in <= 0 || out <= 0 || k <= 0)
        return 1.0;
    in /= nchunks, out /= nchunks, k /= nchunks;
    can = fmin(k, in) + fmin(k, out) + (nchunks - 2) * fmin(k, in + out);
    return can / (nchunks * k);
}

static inline int kit_cmp_ll(const void *x, const void *y)
{
    long long a = *(const long long *)x, b = *(const long long *)y;
    return (a > b) - (a < b);
}

/*
 * One line per row (rows in the order of their keys), `width` columns
 * from first_ms to last_ms: '>' copy in, '#' kernel, '<' copy out. Where
 * two kinds share a column, the later drawn one shows (kernels last).
 */
static inline void kit_gantt_print(const kit_span *s, int n, int width, double first_ms, double last_ms)
{
    long long *rows = (long long *)kit_host_alloc(sizeof(long long) * (size_t)(n > 0 ? n : 1));
    char *line = (char *)kit_host_alloc((size_t)width + 1);
    double span = last_ms > first_ms ? last_ms - first_ms : 1e-9;
    int nrows = 0;
    static const int order[KIT_NOPS] = {KIT_OP_OTHER, KIT_OP_H2D, KIT_OP_D2H, KIT_OP_KERNEL};

    for (int i = 0; i < n; i++)
        rows[nrows++] = s[i].row;
    qsort(rows, (size_t)nrows, sizeof *rows, kit_cmp_ll);
    {
        int u = 0;
        for (int i = 0; i < nrows; i++)
            if (u == 0 || rows[i] != rows[u - 1])
                rows[u++] = rows[i];
        nrows = u;
    }
    for (int r = 0; r < nrows; r++) {
        int stream = -1;
        memset(line, ' ', (size_t)width);
        line[width] = '\0';
        for (int k = 0; k < KIT_NOPS; k++)
            for (int i = 0; i < n; i++) {
                int a, z;
                if (s[i].row != rows[r] || s[i].op != order[k])
                    continue;
                if (s[i].stream >= 0 && s[i].op != KIT_OP_KERNEL)
                    stream = s[i].stream;
                a = (int)((s[i].start - first_ms) / span * width);
                z = (int)((s[i].end - first_ms) / span * width);
                a = a < 0 ? 0 : a;
                z = z >= width ? width - 1 : z;
                for (int x = a; x <= z; x++)
                    line[x] = kit_op_glyph[s[i].op];
            }
        if (stream >= 0)
            printf("  chunk %2d, stream %2d |%s|\n", r, stream, line);
        else
            printf("  chunk %2d            |%s|\n", r, line);
    }
    free(rows);
    free(line);
}

#endif /* KIT_TIMELINE_H */
