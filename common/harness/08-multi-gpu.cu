/*
 * Lab 08: several GPUs - the harness.
 * The student's file: labs/08-multi-gpu/multi-gpu.cu; the handout:
 * handouts/08-multi-gpu.md.
 *
 * Part 1, the course's "Multi GPU" slides: the vector addition of Lab 05,
 * C = A + B on 32-bit integers in pinned host memory, large enough that
 * the copies over each GPU's host link dominate, run by the student's
 * gpus_add on one GPU and on all of them (--gpus N), with one stream per
 * GPU (the course's first version) and with several (its second). The kit
 * first measures the host links: each GPU's copies in alone, then all at
 * once, which is what N GPUs can at best gain.
 *
 * Part 2, with two GPUs or more: which GPUs can reach which
 * (cudaDeviceCanAccessPeer, cudaDeviceGetP2PAttribute, PCI bus ids), the
 * student's set_peer_access between GPUs 0 and 1, then copies between them
 * with peer access on (cudaMemcpyPeerAsync) and off (the same call, which
 * the driver then stages through host memory; and the kit's own staging
 * through pinned host memory, chunk by chunk), and a kernel on GPU 0 that
 * reads GPU 1's memory directly, beside the same kernel on its own memory.
 *
 * Every run of the student's code is checked: before it the device arrays
 * and C are filled with garbage; right after it every stream must be done
 * and no error left behind; then every element of C is compared with A + B
 * on the host. One run goes through the traced build of the student's file
 * (08-multi-gpu.h), which shows the kit the order of the copies and waits:
 * no copy may be queued after a wait (else the GPUs, or the chunks, ran one
 * after the other), none in the default stream or another GPU's stream,
 * each chunk in its own stream, and each GPU's share copied exactly once.
 * The copies and kernels of part 2 are compared with known data after
 * every run. Times are the host's clock around work that returns only
 * when it is done: with several GPUs no one GPU's events span it all.
 *
 * --selftest runs the kit's own wrong versions of the student's functions
 * through the same checks: each must be caught, and the kit's right
 * version must pass (the tests' negative and positive controls).
 */
#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_host.h"
#include "kit_pipeline.h"
#include "kit_report.h"
#include "kit_rng.h"
#include "kit_row.h"
#include "kit_timing.h"

#include "08-multi-gpu.h"
#include "kit_student.h"

/* 3 x 256 MiB in pinned host memory: tens of ms of copies on PCIe 3, about
 * 10 ms on PCIe 5, against which the microseconds it takes the host to
 * queue the work on each GPU do not count. */
#define DEFAULT_SIZE (1u << 26)
#define DEFAULT_STREAMS 4
#define SELFTEST_SIZE (1u << 22)
/* The kit's staging of a peer copy through host memory: this many chunks. */
#define STAGE_CHUNKS 8
/* PCIe 5.0 x16, one direction, in GB/s: no GPU's PCIe link is faster, so a
 * peer copy faster than this went over a direct link (NVLink). */
#define PCIE_X16_GBS 64.0
#define MAX_TRACE 8192
#define MAX_ROWS 12

static const kit_student_api *timed = &kit_student_timed;
static const kit_student_api *traced = &kit_student_counted;

static const char *const ADD_TODOS = "TODO(1) and TODO(2)";

/* ---- small tools ----------------------------------------------------------------- */

static __global__ void noop_kernel(void) {}

static __global__ void add_kernel(const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        C[i] = A[i] + B[i];
}

static void launch_add(const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int n,
                       cudaStream_t s)
{
    add_kernel<<<(n + 255) / 256, 256, 0, s>>>(A, B, C, n);
    KIT_CHECK_LAUNCH();
}

static int is_default_stream(cudaStream_t s)
{
    return s == 0 || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

/* Waits for every GPU of the first n. */
static void sync_gpus(int n)
{
    for (int g = 0; g < n; g++) {
        KIT_CHECK(cudaSetDevice(g));
        KIT_CHECK(cudaDeviceSynchronize());
    }
}

/* How many 4-byte words of a and b, both on GPU dev, differ. */
static long long device_differ(int dev, const void *a, const void *b, size_t bytes)
{
    static unsigned long long *count[KIT_MAX_GPUS];
    unsigned long long h = 0;

    KIT_CHECK(cudaSetDevice(dev));
    if (!count[dev])
        KIT_CHECK(cudaMalloc((void **)&count[dev], sizeof *count[dev]));
    KIT_CHECK(cudaMemset(count[dev], 0, sizeof *count[dev]));
    kit_differ_kernel<<<1024, 256>>>((const unsigned int *)a, (const unsigned int *)b, bytes / 4, count[dev]);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaMemcpy(&h, count[dev], sizeof h, cudaMemcpyDeviceToHost));
    return (long long)h;
}

/* C[i] == A[i] + B[i] for every i, on the host's cores. */
typedef struct {
    const unsigned int *A, *B, *C;
} sum_ctx;

static long long sum_range(unsigned long long begin, unsigned long long end, void *p, unsigned long long *first)
{
    const sum_ctx *k = (const sum_ctx *)p;
    long long bad = 0;
    for (unsigned long long i = begin; i < end; i++)
        if (k->C[i] != k->A[i] + k->B[i] && bad++ == 0)
            *first = i;
    return bad;
}

static long long check_sum(const unsigned int *A, const unsigned int *B, const unsigned int *C, unsigned int n,
                           unsigned long long *first)
{
    sum_ctx k = {A, B, C};
    return kit_parallel_check(n, sum_range, &k, first);
}

/* How long w->run takes by the host's clock (it returns when its work is done). */
static float wall_run(const kit_work *w)
{
    double t0 = kit_wall_ms();
    w->run(w->ctx);
    return (float)(kit_wall_ms() - t0);
}

/* kit_measure by the host's clock: w->run returns only when its work is
 * done, on however many GPUs, and no one GPU's events span it all. */
static kit_measurement measure_wall(const kit_work *w, const kit_policy *p)
{
    kit_work by_wall = *w;
    by_wall.wall_clock = 1;
    return kit_measure(&by_wall, p);
}

static double gbs(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }

/* ---- the traced build: what gpus_add queued, in order ----------------------------- */

enum op_kind { OP_COPY_IN, OP_COPY_OUT, OP_COPY_OTHER, OP_SYNC_COPY, OP_WAIT };

typedef struct {
    enum op_kind kind;
    int gpu;          /* the job's GPU whose memory a copy touches; for a wait, the GPU waited for (-1: unknown) */
    int slot;         /* the copy's stream: stream[slot] of that GPU, or -1 */
    int stream_gpu;   /* the GPU whose stream it is (-1: none of the job's) */
    int stream_slot;
    int default_stream;
    size_t bytes;
    const char *call;
} trace_op;

static struct {
    int on;
    const struct multi_gpu *job;
    int n, overflow;
    trace_op op[MAX_TRACE];
} trace;

/* The job's GPU whose memory p is: its index; -1 host memory; -2 anything else. */
static int job_gpu_of(const void *p)
{
    struct cudaPointerAttributes at;

    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        cudaGetLastError();
        return -2;
    }
    if (at.type == cudaMemoryTypeHost || at.type == cudaMemoryTypeUnregistered)
        return -1;
    if (at.type != cudaMemoryTypeDevice)
        return -2;
    for (int g = 0; g < trace.job->ngpus; g++)
        if (trace.job->gpu[g].device == at.device)
            return g;
    return -2;
}

static void stream_owner(cudaStream_t s, int *gpu, int *slot)
{
    *gpu = *slot = -1;
    if (is_default_stream(s))
        return;
    for (int g = 0; g < trace.job->ngpus; g++)
        for (int c = 0; c < trace.job->nstreams; c++)
            if (trace.job->gpu[g].stream[c] == s) {
                *gpu = g;
                *slot = c;
                return;
            }
}

static trace_op *trace_next(enum op_kind kind, const char *call)
{
    trace_op *op;
    if (trace.n >= MAX_TRACE) {
        trace.overflow = 1;
        return NULL;
    }
    op = &trace.op[trace.n++];
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->call = call;
    op->gpu = op->slot = op->stream_gpu = op->stream_slot = -1;
    return op;
}

static void note_copy(void *dst, const void *src, size_t bytes, cudaStream_t stream, int synchronous)
{
    int dg = job_gpu_of(dst), sg = job_gpu_of(src);
    trace_op *op = trace_next(synchronous ? OP_SYNC_COPY : OP_COPY_OTHER,
                              synchronous ? "cudaMemcpy" : "cudaMemcpyAsync");

    if (!op)
        return;
    if (dg >= 0 && sg == -1) {
        op->gpu = dg;
        if (!synchronous)
            op->kind = OP_COPY_IN;
    } else if (sg >= 0 && dg == -1) {
        op->gpu = sg;
        if (!synchronous)
            op->kind = OP_COPY_OUT;
    }
    op->bytes = bytes;
    op->default_stream = is_default_stream(stream);
    stream_owner(stream, &op->stream_gpu, &op->stream_slot);
    if (op->gpu >= 0 && op->stream_gpu == op->gpu)
        op->slot = op->stream_slot;
}

cudaError_t kit_mgpu_traced_memcpy_async(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                                         cudaStream_t stream)
{
    if (trace.on)
        note_copy(dst, src, bytes, stream, 0);
    return cudaMemcpyAsync(dst, src, bytes, kind, stream);
}

cudaError_t kit_mgpu_traced_memcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    if (trace.on)
        note_copy(dst, src, bytes, 0, 1);
    return cudaMemcpy(dst, src, bytes, kind);
}

cudaError_t kit_mgpu_traced_stream_synchronize(cudaStream_t stream)
{
    trace_op *op = trace.on ? trace_next(OP_WAIT, "cudaStreamSynchronize") : NULL;
    if (op) {
        stream_owner(stream, &op->stream_gpu, &op->stream_slot);
        op->gpu = op->stream_gpu;
        op->default_stream = is_default_stream(stream);
    }
    return cudaStreamSynchronize(stream);
}

cudaError_t kit_mgpu_traced_device_synchronize(void)
{
    trace_op *op = trace.on ? trace_next(OP_WAIT, "cudaDeviceSynchronize") : NULL;
    int dev = -1;
    if (op && cudaGetDevice(&dev) == cudaSuccess)
        for (int g = 0; g < trace.job->ngpus; g++)
            if (trace.job->gpu[g].device == dev)
                op->gpu = g;
    return cudaDeviceSynchronize();
}

cudaError_t kit_mgpu_traced_event_synchronize(cudaEvent_t event)
{
    if (trace.on)
        trace_next(OP_WAIT, "cudaEventSynchronize");
    return cudaEventSynchronize(event);
}

static void describe_wait(const trace_op *w, char *buf, size_t len)
{
    if (w->kind == OP_WAIT && w->gpu >= 0 && !strcmp(w->call, "cudaStreamSynchronize"))
        snprintf(buf, len, "%s on GPU %d's stream[%d]", w->call, w->gpu, w->stream_slot);
    else if (w->kind == OP_WAIT && w->gpu >= 0)
        snprintf(buf, len, "%s with GPU %d current", w->call, w->gpu);
    else
        snprintf(buf, len, "%s", w->call);
}

/* Said once: the same code fails the same way in every row. */
static int trace_said;
#define TRACE_SAY(...) (trace_said++ ? 0 : fprintf(stderr, __VA_ARGS__))

/*
 * The verdict on one traced run of the job m: 1 when the copies were
 * queued as a pipeline on every GPU at once, else 0 with the first
 * problem said on stderr (the first time).
 */
static int trace_ok(const struct multi_gpu *m, const char *who)
{
    unsigned long long in[KIT_MAX_GPUS] = {0}, out[KIT_MAX_GPUS] = {0};
    unsigned int used[KIT_MAX_GPUS] = {0}, before_wait = 0;
    int first_wait = -1;
    char w[96];

    for (int i = 0; i < trace.n; i++) {
        const trace_op *op = &trace.op[i];
        if (op->kind == OP_SYNC_COPY) {
            TRACE_SAY("%s: %s calls cudaMemcpy, which returns only when its copy is done: nothing is "
                      "queued meanwhile, so no copy runs beside a kernel and no GPU beside another. "
                      "Queue cudaMemcpyAsync in the chunk's stream (TODO(2))\n", kit_program, who);
            return 0;
        }
        if (op->kind == OP_WAIT) {
            if (first_wait < 0)
                first_wait = i;
            continue;
        }
        if (op->kind == OP_COPY_OTHER)
            continue;
        if (first_wait >= 0) {
            describe_wait(&trace.op[first_wait], w, sizeof w);
            TRACE_SAY("%s: %s waited (%s) and then queued more copies (for GPU %d): the host queues "
                      "nothing while it waits, so the %s ran one after the other. Queue every GPU's "
                      "chunks first, then wait for them all (TODO(2))\n", kit_program, who, w, op->gpu,
                      before_wait & (1u << op->gpu) ? "chunks" : "GPUs");
            return 0;
        }
        before_wait |= 1u << op->gpu;
        if (op->slot < 0) {
            if (op->default_stream)
                TRACE_SAY("%s: %s queued a copy for GPU %d in the default stream, which waits for the "
                          "GPU's other streams and they for it: nothing overlaps. Use the GPU's "
                          "stream[c] for chunk c (TODO(2))\n", kit_program, who, op->gpu);
            else if (op->stream_gpu >= 0)
                TRACE_SAY("%s: %s queued a copy for GPU %d in stream[%d] of GPU %d: each GPU's chunks go "
                          "in that GPU's own streams (TODO(2))\n", kit_program, who, op->gpu,
                          op->stream_slot, op->stream_gpu);
            else
                TRACE_SAY("%s: %s queued a copy for GPU %d in a stream gpus_setup did not make: use "
                          "the GPU's stream[c] for chunk c (TODO(2))\n", kit_program, who, op->gpu);
            return 0;
        }
        used[op->gpu] |= 1u << op->slot;
        (op->kind == OP_COPY_IN ? in : out)[op->gpu] += op->bytes;
    }
    if (trace.overflow)
        return 1; /* too many calls to follow: the results alone judge */
    for (int g = 0; g < m->ngpus; g++) {
        const struct gpu_share *s = &m->gpu[g];
        unsigned long long want_in = 2ull * s->count * sizeof(unsigned int), want_out = s->count * sizeof(unsigned int);
        int streams = __builtin_popcount(used[g]), need = m->nstreams < (int)s->count ? m->nstreams : (int)s->count;
        if (in[g] != want_in) {
            TRACE_SAY("%s: %s's copies to GPU %d moved %llu bytes, but its share of A and B is %llu bytes: "
                      "copy each chunk's part of A and of B once (TODO(2))\n", kit_program, who, g, in[g],
                      want_in);
            return 0;
        }
        if (out[g] != want_out) {
            TRACE_SAY("%s: %s's copies from GPU %d moved %llu bytes, but its share of C is %llu bytes: "
                      "copy each chunk's part of C back once (TODO(2))\n", kit_program, who, g, out[g],
                      want_out);
            return 0;
        }
        if (streams < need) {
            TRACE_SAY("%s: %s's copies for GPU %d went to %d of its %d streams: give each chunk its own "
                      "stream, so that one chunk's copies run beside another's kernel (TODO(2))\n",
                      kit_program, who, g, streams, m->nstreams);
            return 0;
        }
    }
    return 1;
}

/* ---- the implementations the kit judges: the student's, or its own -------------- */

typedef struct {
    const char *name;
    void (*setup)(struct multi_gpu *m);
    void (*add)(const struct multi_gpu *m);        /* as timed */
    void (*add_traced)(const struct multi_gpu *m); /* its calls noted */
    int (*peer)(int a, int b, int on);
} impl_t;

/* The kit's own versions, right or with one flaw each (--selftest). */
enum flaw {
    RIGHT,
    WAIT_EACH_CHUNK,  /* waits for each chunk before queuing the next */
    WAIT_EACH_GPU,    /* waits for each GPU before queuing the next */
    DEFAULT_STREAM,   /* every chunk in the default stream */
    SYNC_COPY,        /* cudaMemcpy */
    NO_WAIT,          /* returns without waiting */
    ONE_STREAM,       /* every chunk of a GPU in its stream[0] */
    SETUP_ONE_GPU,    /* allocates everything on the first GPU */
    SETUP_NO_STREAMS, /* makes no streams */
    PEER_LINGER,      /* leaves "already enabled" behind */
    PEER_ONE_WAY      /* enables a's access to b only */
};
static enum flaw flaw_now = RIGHT;

static void kit_setup(struct multi_gpu *m)
{
    for (int g = 0; g < m->ngpus; g++) {
        struct gpu_share *s = &m->gpu[g];
        kit_chunk(m->n, m->ngpus, g, &s->first, &s->count);
        KIT_CHECK(cudaSetDevice(flaw_now == SETUP_ONE_GPU ? m->gpu[0].device : s->device));
        KIT_CHECK(cudaMalloc((void **)&s->dA, s->count * sizeof(unsigned int)));
        KIT_CHECK(cudaMalloc((void **)&s->dB, s->count * sizeof(unsigned int)));
        KIT_CHECK(cudaMalloc((void **)&s->dC, s->count * sizeof(unsigned int)));
        for (int c = 0; c < m->nstreams && flaw_now != SETUP_NO_STREAMS; c++)
            KIT_CHECK(cudaStreamCreate(&s->stream[c]));
    }
}

/* Written with the traced calls, as the student's traced build is. */
static void kit_add(const struct multi_gpu *m)
{
    for (int g = 0; g < m->ngpus; g++) {
        const struct gpu_share *s = &m->gpu[g];
        KIT_CHECK(cudaSetDevice(s->device));
        for (int c = 0; c < m->nstreams; c++) {
            unsigned int first, count;
            cudaStream_t st = flaw_now == DEFAULT_STREAM ? 0 : s->stream[flaw_now == ONE_STREAM ? 0 : c];
            kit_chunk(s->count, m->nstreams, c, &first, &count);
            size_t at = s->first + first, bytes = count * sizeof(unsigned int);
            if (flaw_now == SYNC_COPY) {
                KIT_CHECK(kit_mgpu_traced_memcpy(s->dA + first, m->A + at, bytes, cudaMemcpyHostToDevice));
                KIT_CHECK(kit_mgpu_traced_memcpy(s->dB + first, m->B + at, bytes, cudaMemcpyHostToDevice));
            } else {
                KIT_CHECK(kit_mgpu_traced_memcpy_async(s->dA + first, m->A + at, bytes, cudaMemcpyHostToDevice, st));
                KIT_CHECK(kit_mgpu_traced_memcpy_async(s->dB + first, m->B + at, bytes, cudaMemcpyHostToDevice, st));
            }
            launch_add(s->dA + first, s->dB + first, s->dC + first, count, st);
            KIT_CHECK(kit_mgpu_traced_memcpy_async(m->C + at, s->dC + first, bytes, cudaMemcpyDeviceToHost, st));
            if (flaw_now == WAIT_EACH_CHUNK)
                KIT_CHECK(kit_mgpu_traced_stream_synchronize(st));
        }
        if (flaw_now == WAIT_EACH_GPU)
            KIT_CHECK(kit_mgpu_traced_device_synchronize());
    }
    for (int g = 0; g < m->ngpus && flaw_now != NO_WAIT; g++) {
        KIT_CHECK(cudaSetDevice(m->gpu[g].device));
        KIT_CHECK(kit_mgpu_traced_device_synchronize());
    }
}

static int kit_peer(int a, int b, int on)
{
    int ab = 0, ba = 0, dev[2] = {a, b};

    KIT_CHECK(cudaDeviceCanAccessPeer(&ab, a, b));
    KIT_CHECK(cudaDeviceCanAccessPeer(&ba, b, a));
    if (!ab || !ba)
        return 0;
    for (int i = 0; i < (flaw_now == PEER_ONE_WAY ? 1 : 2); i++) {
        cudaError_t err;
        KIT_CHECK(cudaSetDevice(dev[i]));
        err = on ? cudaDeviceEnablePeerAccess(dev[1 - i], 0) : cudaDeviceDisablePeerAccess(dev[1 - i]);
        if (err != cudaErrorPeerAccessAlreadyEnabled && err != cudaErrorPeerAccessNotEnabled)
            KIT_CHECK(err);
        if (flaw_now != PEER_LINGER)
            cudaGetLastError();
    }
    return on;
}

static const impl_t student_impl_template = {"gpus_add", NULL, NULL, NULL, NULL};
static const impl_t kit_impl = {"the kit's gpus_add", kit_setup, kit_add, kit_add, kit_peer};

/* ---- part 1: the vector addition ------------------------------------------------ */

typedef struct {
    unsigned int n;
    size_t bytes;
    unsigned int *A, *B, *C; /* pinned */
} host_data;

static unsigned int *pinned(size_t bytes)
{
    void *p = NULL;
    cudaError_t e = cudaMallocHost(&p, bytes);
    if (e == cudaErrorMemoryAllocation && kit_platform_pinned_advice())
        kit_die(KIT_EXIT_WAIVED, "cannot run here: cannot pin %.0f MiB of host memory for the arrays: %s",
                bytes / 1048576.0, kit_platform_pinned_advice());
    if (e == cudaErrorMemoryAllocation)
        kit_die(KIT_EXIT_FAIL, "cannot pin %.0f MiB of host memory for the arrays: choose a smaller --size",
                bytes / 1048576.0);
    KIT_CHECK(e);
    return (unsigned int *)p;
}

static void host_setup(host_data *h, unsigned int n, unsigned long long seed)
{
    unsigned int *d = NULL;

    h->n = n;
    h->bytes = (size_t)n * sizeof(unsigned int);
    h->A = pinned(h->bytes);
    h->B = pinned(h->bytes);
    h->C = pinned(h->bytes);
    KIT_CHECK(cudaSetDevice(0));
    KIT_CHECK(cudaMalloc((void **)&d, h->bytes));
    kit_fill_bits(d, n, seed);
    KIT_CHECK(cudaMemcpy(h->A, d, h->bytes, cudaMemcpyDeviceToHost));
    kit_fill_bits(d, n, seed + 1);
    KIT_CHECK(cudaMemcpy(h->B, d, h->bytes, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaFree(d));
}

static void host_teardown(host_data *h)
{
    KIT_CHECK(cudaFreeHost(h->A));
    KIT_CHECK(cudaFreeHost(h->B));
    KIT_CHECK(cudaFreeHost(h->C));
}

typedef struct {
    const host_data *h;
    const impl_t *impl;
    struct multi_gpu job;
    int use_traced;          /* the next run is the traced one */
    const char *name;        /* of the row */
    int setup_ok, trace_ok;
    long long traced_wrong;  /* elements wrong after the traced run */
    long long last_wrong;    /* elements wrong after the last run */
    long long early;         /* runs that returned while a stream still worked */
    long long left_errors;   /* runs that left a CUDA error behind */
    int told;                /* the first wrong element is said */
} vec_run;

/* Checks what gpus_setup made; says the first problem. */
static int setup_ok(const struct multi_gpu *m)
{
    unsigned int next = 0;
    static const char *const names[3] = {"dA", "dB", "dC"};

    for (int g = 0; g < m->ngpus; g++) {
        const struct gpu_share *s = &m->gpu[g];
        if (s->first != next || s->count > m->n - next) {
            if (s->first != next)
                fprintf(stderr, "%s: gpus_setup's share of GPU %d starts at element %u, but %s %u: every element "
                                "must be in exactly one GPU's share, in order (TODO(1))\n", kit_program, g, s->first,
                        g ? "the share before it ends at" : "the first share must start at", next);
            else
                fprintf(stderr, "%s: gpus_setup's share of GPU %d, [%u, %u), runs past the %u elements (TODO(1))\n",
                        kit_program, g, s->first, s->first + s->count, m->n);
            return 0;
        }
        next += s->count;
    }
    if (next != m->n) {
        fprintf(stderr, "%s: gpus_setup's shares cover %u of the %u elements: every element must be in exactly "
                        "one GPU's share (TODO(1))\n", kit_program, next, m->n);
        return 0;
    }
    for (int g = 0; g < m->ngpus; g++) {
        const struct gpu_share *s = &m->gpu[g];
        const unsigned int *arrays[3] = {s->dA, s->dB, s->dC};
        for (int k = 0; k < 3; k++) {
            struct cudaPointerAttributes at;
            if (!arrays[k] && s->count) {
                fprintf(stderr, "%s: gpus_setup left GPU %d's %s NULL: allocate its %u elements on that GPU "
                                "(TODO(1))\n", kit_program, g, names[k], s->count);
                return 0;
            }
            if (!s->count)
                continue;
            if (cudaPointerGetAttributes(&at, arrays[k]) != cudaSuccess || at.type != cudaMemoryTypeDevice) {
                cudaGetLastError();
                fprintf(stderr, "%s: GPU %d's %s is not GPU memory: allocate it with cudaMalloc (TODO(1))\n",
                        kit_program, g, names[k]);
                return 0;
            }
            if (at.device != s->device) {
                fprintf(stderr, "%s: GPU %d's %s is memory of GPU %d: cudaMalloc allocates on the current GPU, "
                                "so make GPU %d current first (TODO(1))\n", kit_program, g, names[k], at.device,
                        s->device);
                return 0;
            }
        }
        for (int c = 0; c < m->nstreams; c++) {
            cudaStream_t st = s->stream[c];
            cudaError_t e;
            if (is_default_stream(st)) {
                fprintf(stderr, "%s: GPU %d's stream[%d] is the default stream (was it created?): it waits for "
                                "every other stream of the GPU, and they for it (TODO(1))\n", kit_program, g, c);
                return 0;
            }
            for (int h = 0; h <= g; h++)
                for (int d = 0; d < (h == g ? c : m->nstreams); d++)
                    if (m->gpu[h].stream[d] == st) {
                        fprintf(stderr, "%s: GPU %d's stream[%d] is also GPU %d's stream[%d]: each chunk needs "
                                        "a stream of its own (TODO(1))\n", kit_program, g, c, h, d);
                        return 0;
                    }
            /* A launch into a stream of another GPU fails: that is how the kit asks. */
            KIT_CHECK(cudaSetDevice(s->device));
            noop_kernel<<<1, 1, 0, st>>>();
            e = cudaGetLastError();
            if (e != cudaSuccess) {
                fprintf(stderr, "%s: GPU %d's stream[%d] does not belong to GPU %d (%s): a stream belongs to "
                                "the GPU that was current when it was created (TODO(1))\n", kit_program, g, c,
                        s->device, cudaGetErrorName(e));
                return 0;
            }
            KIT_CHECK(cudaStreamSynchronize(st));
        }
    }
    return 1;
}

/* Frees what gpus_setup made, each stream and array once, on its own GPU. */
static void close_job(vec_run *r)
{
    struct multi_gpu *m = &r->job;

    cudaGetLastError(); /* whatever was left has been reported */
    sync_gpus(m->ngpus);
    for (int g = 0; g < m->ngpus; g++) {
        struct gpu_share *s = &m->gpu[g];
        unsigned int *arrays[3] = {s->dA, s->dB, s->dC};
        KIT_CHECK(cudaSetDevice(s->device));
        for (int c = 0; c < m->nstreams; c++) {
            int seen = is_default_stream(s->stream[c]);
            for (int h = 0; h <= g && !seen; h++)
                for (int d = 0; d < (h == g ? c : m->nstreams) && !seen; d++)
                    seen = m->gpu[h].stream[d] == s->stream[c];
            if (!seen)
                KIT_CHECK(cudaStreamDestroy(s->stream[c]));
        }
        for (int k = 0; k < 3; k++) {
            struct cudaPointerAttributes at;
            int seen = 0;
            for (int h = 0; h <= g && !seen; h++)
                for (int j = 0; j < (h == g ? k : 3) && !seen; j++)
                    seen = (h == g ? arrays[j] : j == 0 ? m->gpu[h].dA : j == 1 ? m->gpu[h].dB : m->gpu[h].dC) ==
                           arrays[k];
            if (seen || !arrays[k] || cudaPointerGetAttributes(&at, arrays[k]) != cudaSuccess ||
                at.type != cudaMemoryTypeDevice) {
                cudaGetLastError();
                continue;
            }
            KIT_CHECK(cudaSetDevice(at.device));
            KIT_CHECK(cudaFree(arrays[k]));
        }
    }
}

/* The job on the first ngpus GPUs, in nstreams chunks each, made by the
 * implementation's setup. Returns whether it passed the checks. */
static int open_job(vec_run *r, int ngpus, int nstreams)
{
    struct multi_gpu *m = &r->job;
    cudaError_t e;

    memset(m, 0, sizeof *m);
    m->A = r->h->A;
    m->B = r->h->B;
    m->C = r->h->C;
    m->n = r->h->n;
    m->ngpus = ngpus;
    m->nstreams = nstreams;
    for (int g = 0; g < ngpus; g++)
        m->gpu[g].device = g;
    r->impl->setup(m);
    e = cudaGetLastError();
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: gpus_setup left the error %s behind: a call that failed was not checked "
                        "(TODO(1))\n", kit_program, cudaGetErrorName(e));
        return 0;
    }
    return setup_ok(m);
}

static void vec_poison(void *p)
{
    vec_run *r = (vec_run *)p;
    const struct multi_gpu *m = &r->job;

    for (int g = 0; g < m->ngpus; g++) {
        const struct gpu_share *s = &m->gpu[g];
        if (!s->count)
            continue;
        KIT_CHECK(cudaSetDevice(s->device));
        KIT_CHECK(cudaMemset(s->dA, 0xff, s->count * sizeof(unsigned int)));
        KIT_CHECK(cudaMemset(s->dB, 0xff, s->count * sizeof(unsigned int)));
        KIT_CHECK(cudaMemset(s->dC, 0xff, s->count * sizeof(unsigned int)));
    }
    kit_parallel_fill(m->C, 0xff, r->h->bytes);
    sync_gpus(m->ngpus);
}

static void vec_run_once(void *p)
{
    vec_run *r = (vec_run *)p;
    if (r->use_traced) {
        trace.n = trace.overflow = 0;
        trace.job = &r->job;
        trace.on = 1;
        r->impl->add_traced(&r->job);
        trace.on = 0;
    } else {
        r->impl->add(&r->job);
    }
}

/* Right after a run: every stream done, no error behind, every element
 * right. Returns the wrong elements (one more if the run returned early or
 * left an error). */
static long long vec_check(void *p)
{
    vec_run *r = (vec_run *)p;
    const struct multi_gpu *m = &r->job;
    unsigned long long first;
    long long bad, flawed = 0, early = 0;
    cudaError_t e = cudaGetLastError();

    for (int g = 0; g < m->ngpus && !early; g++)
        for (int c = 0; c < m->nstreams && !early; c++)
            if (cudaStreamQuery(m->gpu[g].stream[c]) == cudaErrorNotReady) {
                if (r->early++ == 0)
                    fprintf(stderr, "%s: %s: %s returned while GPU %d's stream[%d] was still working: the kit "
                                    "would have read C before it was complete. Wait for every GPU's streams "
                                    "before returning (TODO(2))\n", kit_program, r->name, r->impl->name, g, c);
                early = flawed = 1;
            }
    cudaGetLastError(); /* "not ready" is an answer, not an error */
    if (e != cudaSuccess) {
        if (r->left_errors++ == 0)
            fprintf(stderr, "%s: %s: %s left the error %s behind: a call that failed was not checked "
                            "(TODO(2))\n", kit_program, r->name, r->impl->name, cudaGetErrorName(e));
        flawed = 1;
    }
    sync_gpus(m->ngpus);
    bad = check_sum(m->A, m->B, m->C, m->n, &first);
    if (bad && !r->told++) {
        int g = 0;
        while (g + 1 < m->ngpus && first >= m->gpu[g].first + m->gpu[g].count)
            g++;
        fprintf(stderr, "%s: %s: C[%llu] = %u but A + B = %u there (GPU %d's share)\n", kit_program, r->name,
                first, m->C[first], m->A[first] + m->B[first], g);
    }
    r->last_wrong = bad;
    return bad + flawed;
}

/* The traced run and the checked run of a job; leaves it open for timing. */
static int judge_job(vec_run *r, int ngpus, int nstreams)
{
    r->setup_ok = open_job(r, ngpus, nstreams);
    r->trace_ok = 0;
    if (!r->setup_ok)
        return 0;
    vec_poison(r);
    r->use_traced = 1;
    vec_run_once(r);
    r->use_traced = 0;
    r->traced_wrong = vec_check(r);
    r->trace_ok = trace_ok(&r->job, r->impl->name);
    return 1;
}

/* One row: the job judged, then checked and timed in the timed build. */
static void measure_vec(vec_run *r, kit_row *row, int ngpus, int nstreams, const kit_policy *policy)
{
    r->name = row->name;
    r->early = r->left_errors = 0;
    r->told = 0;
    if (judge_job(r, ngpus, nstreams)) {
        kit_work w = {vec_poison, vec_run_once, vec_check, r, 0.0f, 0};
        vec_poison(r);
        w.first_ms = wall_run(&w); /* the checked run, the first sample */
        vec_check(r);
        row->wrong = r->last_wrong;
        if (row->wrong == 0 && r->early == 0 && r->left_errors == 0) {
            const kit_policy focus = kit_policy_for(policy, row->key);
            row->t = measure_wall(&w, &focus);
            row->timed = 1;
        }
    }
    close_job(r);
}

/* ---- the host links: copies in alone, and from every GPU at once ------------------- */

typedef struct {
    int ngpus;
    int which; /* a GPU, or -1: all at once, each its share */
    const unsigned int *A;
    unsigned int n;
    unsigned int *d[KIT_MAX_GPUS];
    cudaStream_t s[KIT_MAX_GPUS];
} link_run;

static void link_once(void *p)
{
    link_run *l = (link_run *)p;
    for (int g = 0; g < l->ngpus; g++) {
        unsigned int first = 0, count = l->n;
        if (l->which >= 0 && g != l->which)
            continue;
        if (l->which < 0)
            kit_chunk(l->n, l->ngpus, g, &first, &count);
        KIT_CHECK(cudaSetDevice(g));
        KIT_CHECK(cudaMemcpyAsync(l->d[g], l->A + first, count * sizeof(unsigned int), cudaMemcpyHostToDevice,
                                  l->s[g]));
    }
    for (int g = 0; g < l->ngpus; g++)
        if (l->which < 0 || g == l->which)
            KIT_CHECK(cudaStreamSynchronize(l->s[g]));
}

/* Host-to-device GB/s of each GPU alone (per[g]) and of all at once. */
static double measure_links(const host_data *h, int ngpus, double *per, const kit_policy *policy)
{
    link_run l;
    kit_work w = {NULL, link_once, NULL, &l, 0.0f, 0};
    double all = 0.0;

    memset(&l, 0, sizeof l);
    l.ngpus = ngpus;
    l.A = h->A;
    l.n = h->n;
    for (int g = 0; g < ngpus; g++) {
        KIT_CHECK(cudaSetDevice(g));
        KIT_CHECK(cudaMalloc((void **)&l.d[g], h->bytes));
        KIT_CHECK(cudaStreamCreate(&l.s[g]));
    }
    for (int which = 0; which < ngpus; which++) {
        l.which = which;
        link_once(&l); /* warm-up */
        per[which] = gbs((double)h->bytes, measure_wall(&w, policy).median_ms);
    }
    if (ngpus > 1) {
        l.which = -1;
        link_once(&l);
        all = gbs((double)h->bytes, measure_wall(&w, policy).median_ms);
    }
    for (int g = 0; g < ngpus; g++) {
        KIT_CHECK(cudaSetDevice(g));
        KIT_CHECK(cudaStreamDestroy(l.s[g]));
        KIT_CHECK(cudaFree(l.d[g]));
    }
    return all;
}

/* ---- part 2: peer-to-peer ----------------------------------------------------------- */

enum peer_what { COPY_AB, COPY_BA, COPY_BOTH, REMOTE_ADD, LOCAL_ADD, STAGED_DRIVER, STAGED_KIT };

typedef struct {
    int a, b;
    unsigned int n;
    size_t bytes;
    const unsigned int *A, *B;       /* host: what every array holds */
    unsigned int *stage;             /* pinned host: the kit's staging, and C's way back */
    unsigned int *A0, *B0, *C0, *X0; /* on GPU a */
    unsigned int *A1, *B1, *X1;      /* on GPU b */
    cudaStream_t sa, sb;
    cudaEvent_t staged[STAGE_CHUNKS];
    enum peer_what what;
    const char *name;
    int told;
} peer_t;

static void peer_setup(peer_t *p, const host_data *h, int a, int b)
{
    memset(p, 0, sizeof *p);
    p->a = a;
    p->b = b;
    p->n = h->n;
    p->bytes = h->bytes;
    p->A = h->A;
    p->B = h->B;
    p->stage = h->C;
    KIT_CHECK(cudaSetDevice(a));
    KIT_CHECK(cudaMalloc((void **)&p->A0, p->bytes));
    KIT_CHECK(cudaMalloc((void **)&p->B0, p->bytes));
    KIT_CHECK(cudaMalloc((void **)&p->C0, p->bytes));
    KIT_CHECK(cudaMalloc((void **)&p->X0, p->bytes));
    KIT_CHECK(cudaStreamCreate(&p->sa));
    for (int k = 0; k < STAGE_CHUNKS; k++)
        KIT_CHECK(cudaEventCreateWithFlags(&p->staged[k], cudaEventDisableTiming));
    KIT_CHECK(cudaMemcpy(p->A0, h->A, p->bytes, cudaMemcpyHostToDevice));
    KIT_CHECK(cudaMemcpy(p->B0, h->B, p->bytes, cudaMemcpyHostToDevice));
    KIT_CHECK(cudaSetDevice(b));
    KIT_CHECK(cudaMalloc((void **)&p->A1, p->bytes));
    KIT_CHECK(cudaMalloc((void **)&p->B1, p->bytes));
    KIT_CHECK(cudaMalloc((void **)&p->X1, p->bytes));
    KIT_CHECK(cudaStreamCreate(&p->sb));
    KIT_CHECK(cudaMemcpy(p->A1, h->A, p->bytes, cudaMemcpyHostToDevice));
    KIT_CHECK(cudaMemcpy(p->B1, h->B, p->bytes, cudaMemcpyHostToDevice));
}

static void peer_teardown(peer_t *p)
{
    KIT_CHECK(cudaSetDevice(p->a));
    for (int k = 0; k < STAGE_CHUNKS; k++)
        KIT_CHECK(cudaEventDestroy(p->staged[k]));
    KIT_CHECK(cudaStreamDestroy(p->sa));
    KIT_CHECK(cudaFree(p->A0));
    KIT_CHECK(cudaFree(p->B0));
    KIT_CHECK(cudaFree(p->C0));
    KIT_CHECK(cudaFree(p->X0));
    KIT_CHECK(cudaSetDevice(p->b));
    KIT_CHECK(cudaStreamDestroy(p->sb));
    KIT_CHECK(cudaFree(p->A1));
    KIT_CHECK(cudaFree(p->B1));
    KIT_CHECK(cudaFree(p->X1));
}

/* GPU a's A0 to GPU b's X1 through pinned host memory, chunk by chunk:
 * chunk k goes down to the host in a's stream, and up to b in b's stream
 * once it is there, while chunk k + 1 goes down. */
static void staged_by_kit(peer_t *p)
{
    for (int k = 0; k < STAGE_CHUNKS; k++) {
        unsigned int first, count;
        kit_chunk(p->n, STAGE_CHUNKS, k, &first, &count);
        KIT_CHECK(cudaSetDevice(p->a));
        KIT_CHECK(cudaMemcpyAsync(p->stage + first, p->A0 + first, count * sizeof(unsigned int),
                                  cudaMemcpyDeviceToHost, p->sa));
        KIT_CHECK(cudaEventRecord(p->staged[k], p->sa));
        KIT_CHECK(cudaSetDevice(p->b));
        KIT_CHECK(cudaStreamWaitEvent(p->sb, p->staged[k], 0));
        KIT_CHECK(cudaMemcpyAsync(p->X1 + first, p->stage + first, count * sizeof(unsigned int),
                                  cudaMemcpyHostToDevice, p->sb));
    }
    KIT_CHECK(cudaStreamSynchronize(p->sb));
}

static void peer_once(void *q)
{
    peer_t *p = (peer_t *)q;
    switch (p->what) {
    case COPY_AB:
    case STAGED_DRIVER:
        KIT_CHECK(cudaMemcpyPeerAsync(p->X1, p->b, p->A0, p->a, p->bytes, p->sa));
        KIT_CHECK(cudaStreamSynchronize(p->sa));
        break;
    case COPY_BA:
        KIT_CHECK(cudaMemcpyPeerAsync(p->X0, p->a, p->A1, p->b, p->bytes, p->sb));
        KIT_CHECK(cudaStreamSynchronize(p->sb));
        break;
    case COPY_BOTH:
        KIT_CHECK(cudaMemcpyPeerAsync(p->X1, p->b, p->A0, p->a, p->bytes, p->sa));
        KIT_CHECK(cudaMemcpyPeerAsync(p->X0, p->a, p->A1, p->b, p->bytes, p->sb));
        KIT_CHECK(cudaStreamSynchronize(p->sa));
        KIT_CHECK(cudaStreamSynchronize(p->sb));
        break;
    case REMOTE_ADD:
    case LOCAL_ADD:
        KIT_CHECK(cudaSetDevice(p->a));
        if (p->what == REMOTE_ADD)
            launch_add(p->A1, p->B1, p->C0, p->n, p->sa); /* reads GPU b's memory */
        else
            launch_add(p->A0, p->B0, p->C0, p->n, p->sa);
        KIT_CHECK(cudaStreamSynchronize(p->sa));
        break;
    case STAGED_KIT:
        staged_by_kit(p);
        break;
    }
}

static void peer_poison(void *q)
{
    peer_t *p = (peer_t *)q;
    int into_a = p->what == COPY_BA || p->what == COPY_BOTH, into_b = p->what != COPY_BA;
    int add = p->what == REMOTE_ADD || p->what == LOCAL_ADD;

    KIT_CHECK(cudaSetDevice(p->a));
    if (add)
        KIT_CHECK(cudaMemset(p->C0, 0xff, p->bytes));
    else if (into_a)
        KIT_CHECK(cudaMemset(p->X0, 0xff, p->bytes));
    KIT_CHECK(cudaDeviceSynchronize());
    KIT_CHECK(cudaSetDevice(p->b));
    if (!add && into_b)
        KIT_CHECK(cudaMemset(p->X1, 0xff, p->bytes));
    KIT_CHECK(cudaDeviceSynchronize());
}

/* Every word of what was written, against what it must hold: a copy
 * against the destination GPU's own copy of A (from the host), a sum
 * against A + B on the host. */
static long long peer_check(void *q)
{
    peer_t *p = (peer_t *)q;
    long long bad = 0;
    unsigned long long first;

    switch (p->what) {
    case REMOTE_ADD:
    case LOCAL_ADD:
        KIT_CHECK(cudaSetDevice(p->a));
        KIT_CHECK(cudaMemcpy(p->stage, p->C0, p->bytes, cudaMemcpyDeviceToHost));
        bad = check_sum(p->A, p->B, p->stage, p->n, &first);
        if (bad && !p->told++)
            fprintf(stderr, "%s: %s: C[%llu] = %u but A + B = %u there\n", kit_program, p->name, first,
                    p->stage[first], p->A[first] + p->B[first]);
        return bad;
    case COPY_BA:
        bad = device_differ(p->a, p->X0, p->A0, p->bytes);
        break;
    case COPY_BOTH:
        bad = device_differ(p->a, p->X0, p->A0, p->bytes) + device_differ(p->b, p->X1, p->A1, p->bytes);
        break;
    default:
        bad = device_differ(p->b, p->X1, p->A1, p->bytes);
        break;
    }
    if (bad && !p->told++)
        fprintf(stderr, "%s: %s: %lld words differ from the source\n", kit_program, p->name, bad);
    return bad;
}

static void measure_peer(peer_t *p, enum peer_what what, kit_row *row, const kit_policy *policy)
{
    kit_work w = {peer_poison, peer_once, peer_check, p, 0.0f, 0};
    p->what = what;
    p->name = row->name;
    p->told = 0;
    peer_poison(p);
    peer_once(p); /* warms up: a first peer copy maps the other GPU's memory */
    row->wrong = peer_check(p);
    if (row->wrong == 0) {
        const kit_policy focus = kit_policy_for(policy, row->key);
        row->t = measure_wall(&w, &focus);
        row->timed = 1;
    }
}

/* Whether GPU x can now reach GPU y's memory: the kit asks the driver to
 * turn it on (off) and hears "already so", or else has just done it. */
static int access_is(int x, int y, int on)
{
    cudaError_t e;
    KIT_CHECK(cudaSetDevice(x));
    e = on ? cudaDeviceEnablePeerAccess(y, 0) : cudaDeviceDisablePeerAccess(y);
    cudaGetLastError();
    if (e == (on ? cudaErrorPeerAccessAlreadyEnabled : cudaErrorPeerAccessNotEnabled))
        return 1;
    KIT_CHECK(e);
    return 0;
}

/*
 * Judges impl->peer(a, b, on), called twice as the lab says it may be:
 * its answer, the errors it leaves, and the access it leaves (which the
 * kit then sets right, so that what follows measures what it says).
 */
static int judge_peer(const impl_t *impl, int a, int b, int on, int supported)
{
    int ok = 1, want = on && supported;

    for (int call = 1; call <= 2; call++) {
        int got = impl->peer(a, b, on);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess && ok) {
            fprintf(stderr, "%s: set_peer_access(%d, %d, %d), called %s, left the error %s behind%s (TODO(3))\n",
                    kit_program, a, b, on, call == 1 ? "once" : "a second time", cudaGetErrorName(e),
                    e == cudaErrorPeerAccessAlreadyEnabled || e == cudaErrorPeerAccessNotEnabled
                        ? ": asking for what is already so is no error here, but the error stays as the last "
                          "error until someone reads it, and the next check blames whatever comes after"
                        : "");
            ok = 0;
        }
        if (got != want && ok) {
            fprintf(stderr, "%s: set_peer_access(%d, %d, %d) returned %d, but %s (TODO(3))\n", kit_program, a, b,
                    on, got,
                    !supported ? "cudaDeviceCanAccessPeer says these GPUs cannot reach each other, so access "
                                 "is off whatever you ask"
                    : on       ? "cudaDeviceCanAccessPeer says each of these GPUs can reach the other: turn "
                                 "access on both ways and return 1"
                               : "access is now off: return 0");
            ok = 0;
        }
    }
    if (!supported)
        return ok;
    for (int i = 0; i < 2; i++) {
        int x = i ? b : a, y = i ? a : b;
        if (!access_is(x, y, on) && ok) {
            fprintf(stderr, "%s: after set_peer_access(%d, %d, %d), GPU %d's access to GPU %d's memory is still "
                            "%s: cudaDevice%sPeerAccess acts for the current GPU only, in one direction "
                            "(TODO(3))\n", kit_program, a, b, on, x, y, on ? "off" : "on",
                    on ? "Enable" : "Disable");
            ok = 0;
        }
    }
    return ok;
}

/* Peer access off both ways, whatever it was. */
static void peer_reset(int a, int b, int supported)
{
    if (supported) {
        access_is(a, b, 0);
        access_is(b, a, 0);
    }
}

/* ---- --selftest: the kit's wrong versions must be caught ---------------------------- */

typedef struct {
    const char *key;
    enum flaw flaw;
    int min_gpus, min_streams, peer;
} selftest_case;

static const selftest_case selftests[] = {
    {"right", RIGHT, 1, 1, 0},
    {"wait-each-chunk", WAIT_EACH_CHUNK, 1, 2, 0},
    {"wait-each-gpu", WAIT_EACH_GPU, 2, 1, 0},
    {"default-stream", DEFAULT_STREAM, 1, 1, 0},
    {"sync-copy", SYNC_COPY, 1, 1, 0},
    {"no-wait", NO_WAIT, 1, 1, 0},
    {"one-stream", ONE_STREAM, 1, 2, 0},
    {"setup-one-gpu", SETUP_ONE_GPU, 2, 1, 0},
    {"setup-no-streams", SETUP_NO_STREAMS, 1, 1, 0},
    {"peer-right", RIGHT, 2, 1, 1},
    {"peer-linger", PEER_LINGER, 2, 1, 1},
    {"peer-one-way", PEER_ONE_WAY, 2, 1, 1},
};

static int run_selftest(const host_data *h, int ngpus, int nstreams, int supported)
{
    int pass = 1;

    for (int i = 0; i < KIT_COUNT(selftests); i++) {
        const selftest_case *t = &selftests[i];
        char key[64];
        int clean;

        snprintf(key, sizeof key, "selftest-%s", t->key);
        if (ngpus < t->min_gpus || nstreams < t->min_streams || (t->peer && !supported)) {
            kit_kv(key, "skipped (needs %s)", ngpus < t->min_gpus ? "two GPUs" : nstreams < t->min_streams ?
                   "two streams" : "two GPUs with peer access");
            continue;
        }
        fprintf(stderr, "%s: selftest %s:\n", kit_program, t->key);
        flaw_now = t->flaw;
        trace_said = 0;
        if (t->peer) {
            clean = judge_peer(&kit_impl, 0, 1, 1, supported);
            peer_reset(0, 1, supported);
        } else {
            vec_run r;
            memset(&r, 0, sizeof r);
            r.h = h;
            r.impl = &kit_impl;
            r.name = t->key;
            clean = judge_job(&r, ngpus, nstreams) && r.trace_ok && r.traced_wrong == 0 && r.early == 0 &&
                    r.left_errors == 0;
            close_job(&r);
        }
        flaw_now = RIGHT;
        if (t->flaw == RIGHT) {
            kit_kv(key, clean ? "passed" : "FAILED");
            pass &= clean;
        } else {
            kit_kv(key, clean ? "MISSED" : "caught");
            pass &= !clean;
        }
    }
    return pass;
}

/* ---- the report --------------------------------------------------------------------- */

static const char *check_word(const kit_row *r, int judged_ok)
{
    if (r->wrong < 0)
        return "not run";
    return r->wrong ? "WRONG" : r->t.bad_runs ? "UNSTEADY" : judged_ok ? "ok" : "FLAWED";
}

typedef struct {
    kit_row row;
    int gpus, streams;
    int judged_ok; /* setup, trace, early returns, errors */
    double floor_ms; /* the copies in alone at the links' speed; 0: unknown */
} vec_row;

static void print_time(const kit_row *r)
{
    if (r->timed)
        printf(" %10.3f", r->t.median_ms);
    else
        printf(" %10s", "-");
}

int main(int argc, char **argv)
{
    kit_common c;
    kit_device dev[KIT_MAX_GPUS];
    int ngpus_opt = 0, nstreams = DEFAULT_STREAMS, selftest = 0, visible = 0, ngpus, pass = 1;
    kit_option opts[] = {
        {"--size", KIT_OPT_SIZE, &c.size, "N",
         "elements per array (default: 67,108,864, less where a GPU has less memory)", KIT_MIN_SIZE,
         KIT_MAX_SIZE, NULL},
        {"--gpus", KIT_OPT_INT, &ngpus_opt, "G", "use GPUs 0 to G-1 (default: every GPU this program sees)", 1,
         KIT_MAX_GPUS, NULL},
        {"--streams", KIT_OPT_INT, &nstreams, "S", "streams (chunks) per GPU (default: 4)", 1, KIT_MAX_STREAMS,
         NULL},
        {"--reps", KIT_OPT_INT, &c.reps, "R",
         "timed runs of each version (default: until the median is steady); the median is reported", 1, 1000,
         NULL},
        {"--seed", KIT_OPT_U64, &c.seed, "S", "random seed (default: a fresh one, printed)", 0, 0, &c.seed_given},
        KIT_FOCUS_OPTION,
        {"--csv", KIT_OPT_STRING, &c.csv, "FILE", "also write the tables as CSV ('-': stdout)", 0, 0, NULL},
        {"--selftest", KIT_OPT_FLAG, &selftest, NULL,
         "run the kit's own wrong versions through the checks instead (for the kit's tests)", 0, 0, NULL},
    };
    host_data h;
    vec_row rows[MAX_ROWS];
    kit_row prow[7];
    int nrows = 0, nprow = 0, supported = 0, peer_ok = 1;
    int can[KIT_MAX_GPUS][KIT_MAX_GPUS];
    char bus[KIT_MAX_GPUS][32];
    double link_gbs[KIT_MAX_GPUS], link_all = 0.0;
    kit_policy policy, peer_policy;
    unsigned long long n;
    const char *multi = NULL;
    char multi_why[64];
    impl_t student = student_impl_template;

    kit_common_defaults(&c);
    c.reps = 0;
    kit_parse_args(argc, argv,
                   "Lab 08: several GPUs. Spreads the course's vector addition over every GPU\n"
                   "(cudaSetDevice, streams on each GPU, pinned host memory) and times it against\n"
                   "one GPU; then, with two GPUs or more, peer-to-peer access between GPUs 0 and 1:\n"
                   "which GPUs can reach which, copies with peer access on and off, and a kernel\n"
                   "reading the other GPU's memory. Checks every result.",
                   opts, KIT_COUNT(opts));
    kit_choose_seed(&c);
    kit_csv_check(c.csv);
    kit_device_open(0, &dev[0]);
    KIT_CHECK(cudaGetDeviceCount(&visible));
    if (ngpus_opt > visible)
        kit_die(KIT_EXIT_USAGE, "--gpus %d: this machine has %d GPU%s", ngpus_opt, visible, visible == 1 ? "" : "s");
    ngpus = ngpus_opt ? ngpus_opt : visible < KIT_MAX_GPUS ? visible : KIT_MAX_GPUS;
    for (int g = 1; g < ngpus; g++)
        kit_device_open(g, &dev[g]);
    /* --focus all-gpus, the grader's metric: the row on every GPU. */
    if (kit_focus && strcmp(kit_focus, "all-gpus") == 0) {
        static char focus_all[32];
        snprintf(focus_all, sizeof focus_all, "gpus-%d", ngpus);
        kit_focus = focus_all;
    }

    /* The size: every GPU holds at most four arrays of it (part 2), and
     * each chunk must have an element. */
    n = c.size ? c.size : selftest ? SELFTEST_SIZE : DEFAULT_SIZE;
    for (int g = 0; g < ngpus; g++) {
        long long spare = dev[g].free_bytes - (64ll << 20);
        unsigned long long fit = spare > 0 ? (unsigned long long)spare / (4 * sizeof(unsigned int)) : 0;
        if (n > fit) {
            if (c.size)
                kit_die(KIT_EXIT_USAGE, "--size %llu needs %.0f MiB on each GPU, but GPU %d (%s) has %.0f MiB "
                                        "free; choose a smaller --size", n, (4.0 * n * 4 + (64 << 20)) / 1048576.0,
                        g, dev[g].name, dev[g].free_bytes / 1048576.0);
            n = kit_pow2_floor(fit);
        }
    }
    if (!c.size && !selftest) {
        /* Three pinned host arrays: WSL 2 limits how much can be pinned. */
        int capped;
        n = kit_pinned_default_size(n, 1u << 20, 3 * sizeof(unsigned int), 0, &capped);
        if (capped)
            kit_pinned_capped_note(n, 3.0 * sizeof(unsigned int) * n);
    }
    if (n < (unsigned long long)ngpus * nstreams)
        kit_die(KIT_EXIT_USAGE, "--size %llu is too small for %d GPU%s of %d streams: every chunk needs an "
                                "element (at least %d)", n, ngpus, ngpus == 1 ? "" : "s", nstreams, ngpus * nstreams);
    host_setup(&h, (unsigned int)n, c.seed);

    /* Who can reach whom. */
    for (int i = 0; i < ngpus; i++) {
        KIT_CHECK(cudaDeviceGetPCIBusId(bus[i], sizeof bus[i], i));
        for (int j = 0; j < ngpus; j++) {
            can[i][j] = 0;
            if (i != j)
                KIT_CHECK(cudaDeviceCanAccessPeer(&can[i][j], i, j));
        }
    }
    if (ngpus >= 2)
        supported = can[0][1] && can[1][0];

    if (selftest) {
        kit_kv("lab", "08-multi-gpu");
        kit_kv("gpus", "%d", ngpus);
        kit_kv("size", "%llu", n);
        kit_kv("seed", "%llu", c.seed);
        if (ngpus >= 2)
            kit_kv("peer-access", supported ? "supported" : "not supported");
        pass = run_selftest(&h, ngpus, nstreams, supported);
        host_teardown(&h);
        return kit_finish(pass);
    }

    student.setup = timed->gpus_setup;
    student.add = timed->gpus_add;
    student.add_traced = traced->gpus_add;
    student.peer = timed->set_peer_access;
    /* Every run is checked on the host, which takes longer than the run:
     * few runs, and a looser target than the kit's 2%. */
    policy = kit_policy_default(c.reps);
    policy.max_reps = 15;
    policy.max_ms = 300.0;
    policy.noise = 0.03;
    peer_policy = policy;
    peer_policy.max_reps = 20;

    if (ngpus < 2) {
        multi = "skipped";
        snprintf(multi_why, sizeof multi_why, visible < 2 ? "%d GPU" : "--gpus %d", visible < 2 ? visible : ngpus);
    } else {
        multi = "ran";
        snprintf(multi_why, sizeof multi_why, "%d GPUs", ngpus);
    }

    /* ---- part 1 ---- */
    link_all = measure_links(&h, ngpus, link_gbs, &policy);
    {
        int counts[8], nk = 0;
        vec_run r;

        counts[nk++] = 1;
        for (int k = 2; k < ngpus; k *= 2)
            counts[nk++] = k;
        if (ngpus > 1)
            counts[nk++] = ngpus;
        memset(&r, 0, sizeof r);
        r.h = &h;
        r.impl = &student;
        for (int i = 0; i < nk; i++) {
            int k = counts[i];
            for (int serial = nstreams > 1 && (k == 1 || k == ngpus) ? 1 : 0; serial >= 0; serial--) {
                vec_row *v = &rows[nrows++];
                int s = serial ? 1 : nstreams;
                char key[32];
                memset(v, 0, sizeof *v);
                snprintf(key, sizeof key, serial ? "gpus-%d-streams-1" : "gpus-%d", k);
                kit_row_name(&v->row, key, ADD_TODOS, "%d GPU%s, %d stream%s%s", k, k == 1 ? "" : "s", s,
                             s == 1 ? "" : "s", k == 1 ? "" : " each");
                v->gpus = k;
                v->streams = s;
                measure_vec(&r, &v->row, k, s, &policy);
                if (!r.setup_ok)
                    v->row.wrong = -1;
                v->judged_ok = r.setup_ok && r.trace_ok && r.traced_wrong == 0 && r.early == 0 &&
                               r.left_errors == 0;
                if (k == 1 && link_gbs[0] > 0)
                    v->floor_ms = 2.0 * h.bytes / (link_gbs[0] * 1e6);
                else if (k == ngpus && link_all > 0)
                    v->floor_ms = 2.0 * h.bytes / (link_all * 1e6);
                pass &= v->judged_ok;
                if (v->row.wrong >= 0)
                    pass &= kit_row_ok(&v->row, n);
                if (!r.setup_ok)
                    break; /* the same setup fails again */
            }
            if (!r.setup_ok)
                break;
        }
    }

    /* ---- part 2 ---- */
    if (ngpus >= 2) {
        peer_t p;
        peer_setup(&p, &h, 0, 1);
        peer_ok = judge_peer(&student, 0, 1, 1, supported);
        if (supported) {
            kit_row_name(&prow[nprow], "peer-copy", NULL, "cudaMemcpyPeer GPU 0 -> 1, peer access on");
            measure_peer(&p, COPY_AB, &prow[nprow++], &peer_policy);
            kit_row_name(&prow[nprow], "peer-copy-back", NULL, "cudaMemcpyPeer GPU 1 -> 0, peer access on");
            measure_peer(&p, COPY_BA, &prow[nprow++], &peer_policy);
            kit_row_name(&prow[nprow], "peer-copy-both", NULL, "both at once, peer access on");
            measure_peer(&p, COPY_BOTH, &prow[nprow++], &peer_policy);
            kit_row_name(&prow[nprow], "remote-add", NULL, "GPU 0 adds A, B of GPU 1's memory");
            measure_peer(&p, REMOTE_ADD, &prow[nprow++], &peer_policy);
        }
        kit_row_name(&prow[nprow], "local-add", NULL, "GPU 0 adds A, B of its own memory");
        measure_peer(&p, LOCAL_ADD, &prow[nprow++], &peer_policy);
        peer_ok &= judge_peer(&student, 0, 1, 0, supported);
        kit_row_name(&prow[nprow], "staged-copy", NULL, "cudaMemcpyPeer GPU 0 -> 1, peer access off");
        measure_peer(&p, STAGED_DRIVER, &prow[nprow++], &peer_policy);
        kit_row_name(&prow[nprow], "host-staged-copy", NULL, "GPU 0 -> host -> GPU 1, by the kit");
        measure_peer(&p, STAGED_KIT, &prow[nprow++], &peer_policy);
        peer_teardown(&p);
        pass &= peer_ok;
        for (int i = 0; i < nprow; i++)
            pass &= kit_row_ok(&prow[i], n);
    }
    for (int g = 0; g < ngpus; g++) {
        KIT_CHECK(cudaSetDevice(g));
        KIT_CHECK(cudaDeviceSynchronize());
    }

    /* ---- what it comes to ---- */
    const kit_row *one = NULL, *all = NULL, *one_serial = NULL, *all_serial = NULL;
    for (int i = 0; i < nrows; i++) {
        const vec_row *v = &rows[i];
        if (v->gpus == 1)
            *(v->streams == nstreams ? &one : &one_serial) = &v->row;
        if (v->gpus == ngpus)
            *(v->streams == nstreams ? &all : &all_serial) = &v->row;
    }
    if (nstreams == 1)
        one_serial = one, all_serial = all;
    double speedup_all = one && all && one->timed && all->timed ? one->t.median_ms / all->t.median_ms : 0.0;
    double speedup_serial = one_serial && all_serial && one_serial->timed && all_serial->timed
                                ? one_serial->t.median_ms / all_serial->t.median_ms : 0.0;
    double speedup_streams = one && one_serial && one->timed && one_serial->timed
                                 ? one_serial->t.median_ms / one->t.median_ms : 0.0;
    double link_scaling = ngpus > 1 && link_gbs[0] > 0 ? link_all / link_gbs[0] : 1.0;
    double bw[7] = {0};
    for (int i = 0; i < nprow; i++)
        if (prow[i].timed) {
            int two = !strcmp(prow[i].key, "peer-copy-both");
            int add = strstr(prow[i].key, "add") != NULL;
            bw[i] = gbs((add ? 3.0 : two ? 2.0 : 1.0) * h.bytes, prow[i].t.median_ms);
        }
    double on_gbs = 0, staged_gbs = 0, kit_staged_gbs = 0, remote_ms = 0, local_ms = 0;
    for (int i = 0; i < nprow; i++) {
        const kit_row *x = &prow[i];
        if (!x->timed)
            continue;
        if (!strcmp(x->key, "peer-copy"))
            on_gbs = bw[i];
        else if (!strcmp(x->key, "staged-copy"))
            staged_gbs = bw[i];
        else if (!strcmp(x->key, "host-staged-copy"))
            kit_staged_gbs = bw[i];
        else if (!strcmp(x->key, "remote-add"))
            remote_ms = x->t.median_ms;
        else if (!strcmp(x->key, "local-add"))
            local_ms = x->t.median_ms;
    }
    const char *link_words = ngpus < 2 ? "none (one GPU)"
                             : !supported ? "no peer access: every copy between the GPUs goes through the host"
                             : on_gbs > PCIE_X16_GBS ? "faster than any PCIe x16 link: a direct link (NVLink)"
                             : "at PCIe speed: through PCIe (a switch, or the CPU)";

    FILE *csv = kit_csv_open(c.csv);
    if (csv != stdout) {
        printf("Lab 08: several GPUs\n");
        for (int g = 0; g < ngpus; g++)
            printf("GPU %d: %s, compute capability %d.%d, %d SMs, %.1f GiB, PCI %s\n", g, dev[g].name,
                   dev[g].cc_major, dev[g].cc_minor, dev[g].sms, dev[g].global_bytes / 1073741824.0, bus[g]);
        kit_platform_banner(); /* WSL 2 says so; a Linux host prints nothing */
        if (visible > ngpus)
            printf("(this program sees %d GPUs and uses %d: --gpus)\n", visible, ngpus);
        for (int g = 1; g < ngpus; g++)
            if (strcmp(dev[g].name, dev[0].name)) {
                printf("(the GPUs differ: with equal shares, all wait for the slowest)\n");
                break;
            }
        printf("\nPart 1: C = A + B, %s unsigned ints (%.0f MiB per array) in pinned host memory, seed %llu\n",
               kit_grouped(n), h.bytes / 1048576.0, c.seed);
        printf("host links, copies in alone: ");
        for (int g = 0; g < ngpus; g++)
            printf("%sGPU %d %.1f GB/s", g ? ", " : "", g, link_gbs[g]);
        if (ngpus > 1)
            printf("; all at once %.1f GB/s (%.2fx one GPU)", link_all, link_scaling);
        printf("\n\n%-28s %10s %9s %14s  %s\n", "version", "time (ms)", "vs 1 GPU", "copies in (ms)", "check");
        for (int i = 0; i < nrows; i++) {
            const vec_row *v = &rows[i];
            const kit_row *base = v->streams == nstreams ? one : one_serial;
            printf("%-28s", v->row.name);
            print_time(&v->row);
            if (v->row.timed && base && base->timed)
                printf(" %8.2fx", base->t.median_ms / v->row.t.median_ms);
            else
                printf(" %9s", "-");
            if (v->floor_ms > 0)
                printf(" %14.3f", v->floor_ms);
            else
                printf(" %14s", "-");
            printf("  %s\n", check_word(&v->row, v->judged_ok));
        }
        printf("(copies in: A's and B's bytes at the links' speed measured above, the least the version can take)\n");
        if (ngpus < 2) {
            if (visible < 2)
                printf("\nThe multi-GPU part needs two GPUs; this program sees %d. This run timed one GPU only:\n"
                       "run it on a machine with two or more for the scaling and the peer-to-peer part.\n", visible);
            else
                printf("\nThe multi-GPU part needs two GPUs; --gpus 1 asked for one.\n");
        } else {
            printf("\nPart 2: GPUs 0 and 1, %.0f MiB per copy\n", h.bytes / 1048576.0);
            printf("peer access (cudaDeviceCanAccessPeer: can the row's GPU reach the column's memory?)\n%8s", "");
            for (int j = 0; j < ngpus; j++)
                printf(" GPU %-3d", j);
            printf("\n");
            for (int i = 0; i < ngpus; i++) {
                printf("GPU %-4d", i);
                for (int j = 0; j < ngpus; j++)
                    printf(" %-7s", i == j ? "-" : can[i][j] ? "yes" : "no");
                printf("\n");
            }
            printf("\nthe topology as the CUDA runtime sees it (nvidia-smi topo -m says it in its own terms):\n");
            for (int i = 0; i < ngpus; i++)
                for (int j = 0; j < ngpus; j++) {
                    int rank = 0, acc = 0, atom = 0;
                    if (i == j)
                        continue;
                    KIT_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, i, j));
                    KIT_CHECK(cudaDeviceGetP2PAttribute(&acc, cudaDevP2PAttrAccessSupported, i, j));
                    KIT_CHECK(cudaDeviceGetP2PAttribute(&atom, cudaDevP2PAttrNativeAtomicSupported, i, j));
                    printf("  GPU %d -> GPU %d: peer access %s, native atomics %s, performance rank %d\n", i, j,
                           acc ? "supported" : "not supported", atom ? "yes" : "no", rank);
                }
            printf("  the link between GPUs 0 and 1: %s\n\n", link_words);
            printf("%-44s %10s %9s  %s\n", "copy or kernel", "time (ms)", "GB/s", "check");
            for (int i = 0; i < nprow; i++) {
                printf("%-44s", prow[i].name);
                print_time(&prow[i]);
                if (prow[i].timed)
                    printf(" %9.1f", bw[i]);
                else
                    printf(" %9s", "-");
                printf("  %s\n", check_word(&prow[i], 1));
            }
            if (!supported)
                printf("(GPUs 0 and 1 cannot reach each other: no row with peer access on)\n");
            printf("(GB/s: bytes copied, both ways for \"both\"; for the adds, A and B read and C written)\n");
        }
        printf("\n");
    }
    if (csv) {
        fprintf(csv, "gpu,size,seed,part,version,gpus,streams,time_ms,gbs,correct\n");
        for (int i = 0; i < nrows; i++) {
            kit_csv_prefix(csv, &dev[0], n, c.seed);
            fprintf(csv, "1,\"%s\",%d,%d,%.6f,%.3f,%d\n", rows[i].row.name, rows[i].gpus, rows[i].streams,
                    rows[i].row.timed ? rows[i].row.t.median_ms : 0.0,
                    rows[i].row.timed ? gbs(3.0 * h.bytes, rows[i].row.t.median_ms) : 0.0,
                    rows[i].row.wrong == 0 && rows[i].judged_ok);
        }
        for (int i = 0; i < nprow; i++) {
            kit_csv_prefix(csv, &dev[0], n, c.seed);
            fprintf(csv, "2,\"%s\",2,1,%.6f,%.3f,%d\n", prow[i].name, prow[i].timed ? prow[i].t.median_ms : 0.0,
                    bw[i], prow[i].wrong == 0);
        }
        kit_csv_close(csv);
    }

    /* The facts, one per line, for tests and graders. */
    kit_kv("lab", "08-multi-gpu");
    kit_kv_device(&dev[0]);
    kit_kv("gpus-visible", "%d", visible);
    kit_kv("gpus", "%d", ngpus);
    for (int g = 0; g < ngpus; g++) {
        char key[32];
        snprintf(key, sizeof key, "device-%d", g);
        kit_kv(key, "%s", dev[g].name);
        snprintf(key, sizeof key, "pci-bus-id-%d", g);
        kit_kv(key, "%s", bus[g]);
    }
    kit_kv("size", "%llu", n);
    kit_kv("streams", "%d", nstreams);
    kit_kv("seed", "%llu", c.seed);
    kit_kv("pinned-host-bytes", "%zu", 3 * h.bytes);
    for (int g = 0; g < ngpus; g++) {
        char key[32];
        snprintf(key, sizeof key, "h2d-gbs-gpu-%d", g);
        kit_kv(key, "%.1f", link_gbs[g]);
    }
    if (ngpus > 1) {
        kit_kv("h2d-gbs-all-gpus", "%.1f", link_all);
        kit_kv("host-link-scaling", "%.2f", link_scaling);
    }
    for (int i = 0; i < nrows; i++)
        kit_row_kv(&rows[i].row);
    for (int i = 0; i < nrows; i++) {
        const kit_row *base = rows[i].streams == nstreams ? one : one_serial;
        char key[48];
        if (rows[i].gpus == 1 || !rows[i].row.timed || !base || !base->timed)
            continue;
        snprintf(key, sizeof key, "speedup-%s", rows[i].row.key);
        kit_kv(key, "%.2f", base->t.median_ms / rows[i].row.t.median_ms);
    }
    if (all && all->timed) { /* the graded time, with its row's checks */
        kit_kv("time-all-gpus-ms", "%.4f", all->t.median_ms);
        kit_kv("wrong-elements-all-gpus", "%lld", all->wrong);
        kit_kv("bad-timed-runs-all-gpus", "%d", all->t.bad_runs);
    }
    kit_kv("speedup-all-gpus", "%.2f", speedup_all);
    if (speedup_serial > 0)
        kit_kv("speedup-all-gpus-streams-1", "%.2f", speedup_serial);
    if (speedup_streams > 0)
        kit_kv("speedup-streams-1-gpu", "%.2f", speedup_streams);
    kit_kv("multi-gpu", "%s (%s)", multi, multi_why);
    if (ngpus >= 2) {
        for (int i = 0; i < ngpus; i++)
            for (int j = 0; j < ngpus; j++) {
                char key[48];
                int rank = 0, atom = 0;
                if (i == j)
                    continue;
                KIT_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, i, j));
                KIT_CHECK(cudaDeviceGetP2PAttribute(&atom, cudaDevP2PAttrNativeAtomicSupported, i, j));
                snprintf(key, sizeof key, "peer-access-%d-%d", i, j);
                kit_kv(key, "%d", can[i][j]);
                snprintf(key, sizeof key, "p2p-performance-rank-%d-%d", i, j);
                kit_kv(key, "%d", rank);
                snprintf(key, sizeof key, "p2p-native-atomics-%d-%d", i, j);
                kit_kv(key, "%d", atom);
            }
        kit_kv("peer-access", supported ? "supported" : "not supported");
        for (int i = 0; i < nprow; i++) {
            char key[48];
            kit_row_kv(&prow[i]);
            snprintf(key, sizeof key, "bandwidth-%s-gbs", prow[i].key);
            kit_kv(key, "%.1f", bw[i]);
        }
        if (on_gbs > 0 && staged_gbs > 0)
            kit_kv("peer-over-staged", "%.2f", on_gbs / staged_gbs);
        if (kit_staged_gbs > 0 && staged_gbs > 0)
            kit_kv("staged-driver-over-kit", "%.2f", staged_gbs / kit_staged_gbs);
        if (remote_ms > 0 && local_ms > 0)
            kit_kv("remote-add-over-local", "%.2f", remote_ms / local_ms);
        kit_kv("peer-link", "%s", !supported ? "none" : on_gbs > PCIE_X16_GBS ? "nvlink-class" : "pcie-class");
        kit_kv("peer-access-checked", "%s", peer_ok ? "yes" : "no");
    }
    if (ngpus >= 2)
        kit_kv("summary", "%d GPUs %.2fx one GPU with %d streams each (%.2fx with one), copies included, at %s "
                          "elements; host links %.2fx; GPU 0 -> 1: %.0f GB/s with peer access, %.0f GB/s staged "
                          "through the host", ngpus, speedup_all, nstreams, speedup_serial, kit_grouped(n),
               link_scaling, on_gbs, staged_gbs);
    else
        kit_kv("summary", "1 GPU: %d streams %.2fx one stream at %s elements; the multi-GPU part needs two GPUs",
               nstreams, speedup_streams, kit_grouped(n));
    kit_kv("course-k40", "no figure: the slides show the code for two GPUs (cudaSetDevice, then streams on each) "
                         "and for peer copies, without timings");

    host_teardown(&h);
    return kit_finish(pass);
}
