/*
 * 08-multi-gpu/remote.h - the kit's side of Lab 08 in the process that
 * runs the student's code (kit_student.h, KIT_REMOTE_FUNCTIONS): the lab's
 * own program includes it beside its harness; in grading, only the worker
 * does, and the judge reaches it through stubs (common/harness/judge.cu).
 *
 * The student's code here is host code that drives several GPUs: it
 * allocates each GPU's arrays, makes its streams, queues the copies and
 * kernels, waits, and turns peer access on and off. What it made and what
 * it queued is known only in this process, so the checks of it run here:
 * the shares, arrays and streams gpus_setup made (setup_ok), whether
 * gpus_add returned before its streams were done or left an error behind,
 * the order the traced build queued its copies and waits in (trace_ok),
 * and the access set_peer_access left (judge_peer). Each says what it
 * found in words (lab08_say) that the harness prints. The harness decides:
 * it fills the inputs and checks every element of C itself, and times
 * every run with its own clock; what is said here can fail the lab or
 * explain it, never pass it.
 *
 * The kit's own versions of the student's functions, right or with one
 * flaw each, are here too: --selftest runs them through the same checks.
 */
#ifndef KIT_LAB_08_REMOTE_H
#define KIT_LAB_08_REMOTE_H

#include <stdarg.h>

#include "kit_host.h"
#include "kit_pipeline.h"

#include "contract.h"
#include "kit_student.h"

#define MAX_TRACE 8192

#ifdef KIT_MSG_MAX
static_assert(sizeof(struct lab08_out) + 1024 <= KIT_MSG_MAX, "a report must fit one message");
static_assert(sizeof(struct lab08_timeline_out) + 1024 <= KIT_MSG_MAX, "a timeline must fit one message");
#endif

/* ---- what the checks say --------------------------------------------------------- */

/* Lines said since the harness last took them (lab08_take). */
static char lab08_text[LAB08_TEXT];
static size_t lab08_len;

static int lab08_say(const char *fmt, ...)
{
    va_list ap;
    int n;
    if (lab08_len + 1 >= sizeof lab08_text)
        return 0;
    va_start(ap, fmt);
    n = vsnprintf(lab08_text + lab08_len, sizeof lab08_text - lab08_len, fmt, ap);
    va_end(ap);
    if (n > 0)
        lab08_len += (size_t)n < sizeof lab08_text - lab08_len ? (size_t)n : sizeof lab08_text - lab08_len - 1;
    return 0;
}

/* What was said, into out (whole lines), and nothing more to say. */
static void lab08_take(char *out, size_t cap)
{
    snprintf(out, cap, "%s", lab08_text);
    lab08_len = 0;
    lab08_text[0] = '\0';
}

#include "tools.h"

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

/* The job's index of GPU device; -1: none of the job's GPUs. */
static int job_index(int device)
{
    for (int g = 0; g < trace.job->ngpus; g++)
        if (trace.job->gpu[g].device == device)
            return g;
    return -1;
}

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
    return at.type == cudaMemoryTypeDevice && job_index(at.device) >= 0 ? job_index(at.device) : -2;
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

/* ---- the traced build, with --timeline: when each copy ran ------------------------ */

/* Copies recorded per GPU: a chunk's three, for every stream, and room to spare. */
#define TL_COPIES (3 * KIT_MAX_STREAMS + 32)

/* The GPU a copy's events must be of (kit_copy_trace_next_on): its stream's
 * where that is one of the job's, else (the default stream, or one not of
 * the job) the current GPU where that is one of the job's; -1 where none
 * is (not recorded), or no timeline is recorded now. */
static int copy_device(cudaStream_t stream)
{
    int gpu, slot, dev = -1;
    if (!kit_copy_trace_now.on)
        return -1;
    stream_owner(stream, &gpu, &slot);
    if (gpu >= 0)
        return trace.job->gpu[gpu].device;
    if (cudaGetDevice(&dev) != cudaSuccess)
        cudaGetLastError();
    return job_index(dev) >= 0 ? dev : -1;
}

cudaError_t kit_mgpu_traced_memcpy_async(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                                         cudaStream_t stream)
{
    if (trace.on)
        note_copy(dst, src, bytes, stream, 0);
    return kit_traced_memcpy_async_on(copy_device(stream), dst, src, bytes, kind, stream);
}

cudaError_t kit_mgpu_traced_memcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    if (trace.on)
        note_copy(dst, src, bytes, 0, 1);
    return kit_traced_memcpy_on(copy_device(0), dst, src, bytes, kind);
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
        op->gpu = job_index(dev);
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
#define TRACE_SAY(...) (trace_said++ ? 0 : lab08_say(__VA_ARGS__))

/*
 * The verdict on one traced run of the job m: 1 when the copies were
 * queued as a pipeline on every GPU at once, else 0 with the first
 * problem said (lab08_say, the first time).
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
            TRACE_SAY("%s calls cudaMemcpy, which returns only when its copy is done: nothing is "
                      "queued meanwhile, so no copy runs beside a kernel and no GPU beside another. "
                      "Queue cudaMemcpyAsync in the chunk's stream (TODO(2))\n", who);
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
            TRACE_SAY("%s waited (%s) and then queued more copies (for GPU %d): the host queues "
                      "nothing while it waits, so the %s ran one after the other. Queue every GPU's "
                      "chunks first, then wait for them all (TODO(2))\n", who, w, op->gpu,
                      before_wait & (1u << op->gpu) ? "chunks" : "GPUs");
            return 0;
        }
        before_wait |= 1u << op->gpu;
        if (op->slot < 0) {
            if (op->default_stream)
                TRACE_SAY("%s queued a copy for GPU %d in the default stream, which waits for the "
                          "GPU's other streams and they for it: nothing overlaps. Use the GPU's "
                          "stream[c] for chunk c (TODO(2))\n", who, op->gpu);
            else if (op->stream_gpu >= 0)
                TRACE_SAY("%s queued a copy for GPU %d in stream[%d] of GPU %d: each GPU's chunks go "
                          "in that GPU's own streams (TODO(2))\n", who, op->gpu,
                          op->stream_slot, op->stream_gpu);
            else
                TRACE_SAY("%s queued a copy for GPU %d in a stream gpus_setup did not make: use "
                          "the GPU's stream[c] for chunk c (TODO(2))\n", who, op->gpu);
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
            TRACE_SAY("%s's copies to GPU %d moved %llu bytes, but its share of A and B is %llu bytes: "
                      "copy each chunk's part of A and of B once (TODO(2))\n", who, g, in[g],
                      want_in);
            return 0;
        }
        if (out[g] != want_out) {
            TRACE_SAY("%s's copies from GPU %d moved %llu bytes, but its share of C is %llu bytes: "
                      "copy each chunk's part of C back once (TODO(2))\n", who, g, out[g],
                      want_out);
            return 0;
        }
        if (streams < need) {
            TRACE_SAY("%s's copies for GPU %d went to %d of its %d streams: give each chunk its own "
                      "stream, so that one chunk's copies run beside another's kernel (TODO(2))\n",
                      who, g, streams, m->nstreams);
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


/* ---- the job under way in this process --------------------------------------------- */

static struct {
    const impl_t *impl;
    impl_t student;
    struct multi_gpu job;
    long long early, left_errors; /* in this job's runs: said once */
} lab08;

static const impl_t *lab08_impl_of(int kit)
{
    if (kit)
        return &kit_impl;
    lab08.student = student_impl_template;
    lab08.student.setup = kit_student_timed.gpus_setup;
    lab08.student.add = kit_student_timed.gpus_add;
    lab08.student.add_traced = kit_student_counted.gpus_add;
    lab08.student.peer = kit_student_timed.set_peer_access;
    return &lab08.student;
}

/* Checks what gpus_setup made; says the first problem. */
static int setup_ok(const struct multi_gpu *m)
{
    unsigned int next = 0;
    static const char *const names[3] = {"dA", "dB", "dC"};

    for (int g = 0; g < m->ngpus; g++) {
        const struct gpu_share *s = &m->gpu[g];
        if (s->first != next || s->count > m->n - next) {
            if (s->first != next)
                lab08_say("gpus_setup's share of GPU %d starts at element %u, but %s %u: every element "
                                "must be in exactly one GPU's share, in order (TODO(1))\n", g, s->first,
                        g ? "the share before it ends at" : "the first share must start at", next);
            else
                lab08_say("gpus_setup's share of GPU %d, [%u, %u), runs past the %u elements (TODO(1))\n",
                        g, s->first, s->first + s->count, m->n);
            return 0;
        }
        next += s->count;
    }
    if (next != m->n) {
        lab08_say("gpus_setup's shares cover %u of the %u elements: every element must be in exactly "
                        "one GPU's share (TODO(1))\n", next, m->n);
        return 0;
    }
    for (int g = 0; g < m->ngpus; g++) {
        const struct gpu_share *s = &m->gpu[g];
        const unsigned int *arrays[3] = {s->dA, s->dB, s->dC};
        for (int k = 0; k < 3; k++) {
            struct cudaPointerAttributes at;
            if (!arrays[k] && s->count) {
                lab08_say("gpus_setup left GPU %d's %s NULL: allocate its %u elements on that GPU "
                                "(TODO(1))\n", g, names[k], s->count);
                return 0;
            }
            if (!s->count)
                continue;
            if (cudaPointerGetAttributes(&at, arrays[k]) != cudaSuccess || at.type != cudaMemoryTypeDevice) {
                cudaGetLastError();
                lab08_say("GPU %d's %s is not GPU memory: allocate it with cudaMalloc (TODO(1))\n",
                        g, names[k]);
                return 0;
            }
            if (at.device != s->device) {
                lab08_say("GPU %d's %s is memory of GPU %d: cudaMalloc allocates on the current GPU, "
                                "so make GPU %d current first (TODO(1))\n", g, names[k], at.device,
                        s->device);
                return 0;
            }
        }
        for (int c = 0; c < m->nstreams; c++) {
            cudaStream_t st = s->stream[c];
            cudaError_t e;
            if (is_default_stream(st)) {
                lab08_say("GPU %d's stream[%d] is the default stream (was it created?): it waits for "
                                "every other stream of the GPU, and they for it (TODO(1))\n", g, c);
                return 0;
            }
            for (int h = 0; h <= g; h++)
                for (int d = 0; d < (h == g ? c : m->nstreams); d++)
                    if (m->gpu[h].stream[d] == st) {
                        lab08_say("GPU %d's stream[%d] is also GPU %d's stream[%d]: each chunk needs "
                                        "a stream of its own (TODO(1))\n", g, c, h, d);
                        return 0;
                    }
            /* A launch into a stream of another GPU fails: that is how the kit asks. */
            KIT_CHECK(cudaSetDevice(s->device));
            noop_kernel<<<1, 1, 0, st>>>();
            e = cudaGetLastError();
            if (e != cudaSuccess) {
                lab08_say("GPU %d's stream[%d] does not belong to GPU %d (%s): a stream belongs to "
                                "the GPU that was current when it was created (TODO(1))\n", g, c,
                        s->device, cudaGetErrorName(e));
                return 0;
            }
            KIT_CHECK(cudaStreamSynchronize(st));
        }
    }
    return 1;
}

/* Frees what gpus_setup made, each stream and array once, on its own GPU. */
static void lab08_close(void)
{
    struct multi_gpu *m = &lab08.job;

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
    memset(m, 0, sizeof *m);
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
            lab08_say("set_peer_access(%d, %d, %d), called %s, left the error %s behind%s (TODO(3))\n",
                    a, b, on, call == 1 ? "once" : "a second time", cudaGetErrorName(e),
                    e == cudaErrorPeerAccessAlreadyEnabled || e == cudaErrorPeerAccessNotEnabled
                        ? ": asking for what is already so is no error here, but the error stays as the last "
                          "error until someone reads it, and the next check blames whatever comes after"
                        : "");
            ok = 0;
        }
        if (got != want && ok) {
            lab08_say("set_peer_access(%d, %d, %d) returned %d, but %s (TODO(3))\n", a, b,
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
            lab08_say("after set_peer_access(%d, %d, %d), GPU %d's access to GPU %d's memory is still "
                            "%s: cudaDevice%sPeerAccess acts for the current GPU only, in one direction "
                            "(TODO(3))\n", a, b, on, x, y, on ? "off" : "on",
                    on ? "Enable" : "Disable");
            ok = 0;
        }
    }
    return ok;
}


/* ---- what the harness calls ------------------------------------------------------- */

/* The host arrays, pinned for every GPU (the judge's memory in grading). */
static void lab08_host(unsigned int *A, unsigned int *B, unsigned int *C, unsigned long long bytes)
{
    KIT_CHECK(cudaHostRegister(A, (size_t)bytes, cudaHostRegisterPortable));
    KIT_CHECK(cudaHostRegister(B, (size_t)bytes, cudaHostRegisterPortable));
    KIT_CHECK(cudaHostRegister(C, (size_t)bytes, cudaHostRegisterPortable));
}

static void lab08_host_release(unsigned int *A, unsigned int *B, unsigned int *C)
{
    KIT_CHECK(cudaHostUnregister(A));
    KIT_CHECK(cudaHostUnregister(B));
    KIT_CHECK(cudaHostUnregister(C));
}

/* The job on the first ngpus GPUs, nstreams chunks each, made by gpus_setup
 * (the kit's own where kit is 1); out->ok says whether it passed the checks,
 * out->first and out->count hold the shares. */
static void lab08_open(const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int n, int ngpus,
                       int nstreams, int kit, struct lab08_out *out)
{
    struct multi_gpu *m = &lab08.job;
    cudaError_t e;

    memset(out, 0, sizeof *out);
    memset(m, 0, sizeof *m);
    lab08.impl = lab08_impl_of(kit);
    lab08.early = lab08.left_errors = 0;
    if (ngpus < 1 || ngpus > KIT_MAX_GPUS || nstreams < 1 || nstreams > KIT_MAX_STREAMS)
        kit_die(KIT_EXIT_FAIL, "a job of %d GPUs and %d streams (a bug of the kit)", ngpus, nstreams);
    m->A = A;
    m->B = B;
    m->C = C;
    m->n = n;
    m->ngpus = ngpus;
    m->nstreams = nstreams;
    for (int g = 0; g < ngpus; g++)
        m->gpu[g].device = g;
    lab08.impl->setup(m);
    e = cudaGetLastError();
    if (e != cudaSuccess)
        lab08_say("gpus_setup left the error %s behind: a call that failed was not checked (TODO(1))\n",
                  cudaGetErrorName(e));
    else
        out->ok = setup_ok(m);
    for (int g = 0; g < ngpus; g++) {
        out->first[g] = m->gpu[g].first;
        out->count[g] = m->gpu[g].count;
    }
    lab08_take(out->text, sizeof out->text);
}

/* Every GPU's arrays of the job full of garbage (all bits set), and every GPU idle. */
static void lab08_poison(void)
{
    const struct multi_gpu *m = &lab08.job;
    for (int g = 0; g < m->ngpus; g++) {
        const struct gpu_share *s = &m->gpu[g];
        if (!s->count)
            continue;
        KIT_CHECK(cudaSetDevice(s->device));
        KIT_CHECK(cudaMemset(s->dA, 0xff, s->count * sizeof(unsigned int)));
        KIT_CHECK(cudaMemset(s->dB, 0xff, s->count * sizeof(unsigned int)));
        KIT_CHECK(cudaMemset(s->dC, 0xff, s->count * sizeof(unsigned int)));
    }
    sync_gpus(m->ngpus);
}

/*
 * One run of gpus_add (the traced build where traced is 1). Right after
 * it: is every stream done, and is no error left behind (out->early,
 * out->left_error, said once per job); then every GPU idle; and for the
 * traced run, the verdict on the order it queued its work (out->ok).
 */
static void job_run(int traced, struct lab08_out *out, double *called, double *returned)
{
    const struct multi_gpu *m = &lab08.job;
    cudaError_t e;

    memset(out, 0, sizeof *out);
    if (traced) {
        trace.n = trace.overflow = 0;
        trace.job = m;
        trace.on = 1;
        if (called)
            *called = kit_event_clock_host_ms();
        lab08.impl->add_traced(m);
        if (returned)
            *returned = kit_event_clock_host_ms();
        kit_copy_trace_stop(); /* lab08_timeline's: its copies are those of gpus_add */
        trace.on = 0;
    } else {
        lab08.impl->add(m);
    }
    e = cudaGetLastError();
    for (int g = 0; g < m->ngpus && !out->early; g++)
        for (int c = 0; c < m->nstreams && !out->early; c++)
            if (cudaStreamQuery(m->gpu[g].stream[c]) == cudaErrorNotReady) {
                if (lab08.early++ == 0)
                    lab08_say("%s returned while GPU %d's stream[%d] was still working: the kit would have read "
                              "C before it was complete. Wait for every GPU's streams before returning "
                              "(TODO(2))\n", lab08.impl->name, g, c);
                out->early = 1;
            }
    cudaGetLastError(); /* "not ready" is an answer, not an error */
    if (e != cudaSuccess) {
        if (lab08.left_errors++ == 0)
            lab08_say("%s left the error %s behind: a call that failed was not checked (TODO(2))\n",
                      lab08.impl->name, cudaGetErrorName(e));
        out->left_error = 1;
    }
    sync_gpus(m->ngpus);
    out->ok = traced ? trace_ok(m, lab08.impl->name) : 1;
    lab08_take(out->text, sizeof out->text);
}

static void lab08_run(int traced, struct lab08_out *out) { job_run(traced, out, NULL, NULL); }

/* What a recorded copy moved for the job: KIT_OP_H2D, KIT_OP_D2H or KIT_OP_OTHER. */
static int copy_op(const kit_copy_record *c)
{
    int dg = job_gpu_of(c->dst), sg = job_gpu_of(c->src);
    return dg >= 0 && sg == -1 ? KIT_OP_H2D : sg >= 0 && dg == -1 ? KIT_OP_D2H : KIT_OP_OTHER;
}

/* A span in c's stream: the job's GPU whose stream it is, and which of that
 * GPU's streams (-1: not the job's). */
static void tl_span(struct lab08_timeline_out *out, const kit_copy_record *c, int op, double start, double end)
{
    struct lab08_span *x;
    int owner, slot;
    if (out->nspans == LAB08_MAX_SPANS) {
        out->missed++;
        return;
    }
    stream_owner(c->stream, &owner, &slot);
    x = &out->spans[out->nspans++];
    x->gpu = (short)job_index(c->device);
    x->stream = (short)slot;
    x->op = op;
    x->start_ms = start;
    x->end_ms = end;
}

/*
 * --timeline: one run of the traced build (judged as lab08_run judges it,
 * out->run) with every copy recorded (kit_copy_trace_start_gpus: each
 * copy's events of its stream's GPU), and its spans in out, on the host's
 * clock from the call of gpus_add. Each stream's kernel is its time
 * between a copy in and a copy out that follows it there: the launches are
 * the student's own, which the kit does not see. Every GPU idle before
 * (the harness's lab08_poison) and after.
 */
static void lab08_timeline(struct lab08_timeline_out *out)
{
    const struct multi_gpu *m = &lab08.job;
    const kit_copy_trace *ct = &kit_copy_trace_now;
    kit_event_clock clock[KIT_MAX_GPUS];
    int devices[KIT_MAX_GPUS];
    double called = 0.0, returned = 0.0;

    memset(out, 0, sizeof *out);
    for (int g = 0; g < m->ngpus; g++)
        devices[g] = m->gpu[g].device;
    kit_copy_trace_start_gpus(devices, m->ngpus, TL_COPIES);
    for (int g = 0; g < m->ngpus; g++)
        kit_event_clock_begin(&clock[g], m->gpu[g].device);
    job_run(1, &out->run, &called, &returned);
    for (int g = 0; g < m->ngpus; g++) {
        kit_event_clock_end(&clock[g]);
        out->uncertainty_ms[g] = clock[g].uncertainty_ms;
    }
    out->run_ms = returned - called;
    out->missed = ct->missed;
    for (int i = 0; i < ct->count; i++) {
        const kit_copy_record *c = &ct->rec[i];
        const kit_event_clock *k = &clock[job_index(c->device)];
        if (!c->recorded) {
            out->missed++;
            continue;
        }
        tl_span(out, c, copy_op(c), kit_event_clock_ms(k, c->start) - called,
                kit_event_clock_ms(k, c->end) - called);
    }
    for (int i = 0; i < ct->count; i++) {
        const kit_copy_record *c = &ct->rec[i], *before = NULL;
        const kit_event_clock *k = &clock[job_index(c->device)];
        double start, end;
        if (!c->recorded || copy_op(c) != KIT_OP_D2H)
            continue;
        for (int j = i - 1; j >= 0 && !before; j--)
            if (ct->rec[j].stream == c->stream && ct->rec[j].device == c->device)
                before = &ct->rec[j];
        if (!before || !before->recorded || copy_op(before) != KIT_OP_H2D)
            continue;
        start = kit_event_clock_ms(k, before->end) - called;
        end = kit_event_clock_ms(k, c->start) - called;
        if (end > start)
            tl_span(out, c, KIT_OP_KERNEL, start, end);
    }
    for (int g = 0; g < m->ngpus; g++)
        kit_event_clock_destroy(&clock[g]);
    kit_copy_trace_free();
}

/* set_peer_access(a, b, on) judged (judge_peer; the kit's own where kit is 1). */
static void lab08_peer(int a, int b, int on, int supported, int kit, struct lab08_out *out)
{
    memset(out, 0, sizeof *out);
    out->ok = judge_peer(lab08_impl_of(kit), a, b, on, supported);
    lab08_take(out->text, sizeof out->text);
}

/* Peer access off both ways, whatever it was; the flaw of --selftest set. */
static void lab08_reset(int a, int b, int supported, int flaw)
{
    if (supported)
        access_both(a, b, 0);
    flaw_now = (enum flaw)flaw;
    trace_said = 0;
}


#define LAB08_DIRECT(ret, name, params) name,
extern "C" const kit_remote_api kit_remote = {KIT_REMOTE_FUNCTIONS(LAB08_DIRECT)};
#undef LAB08_DIRECT

#endif /* KIT_LAB_08_REMOTE_H */
