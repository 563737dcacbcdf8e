/*
 * 05-streams/remote.h - the kit's side of Lab 05 in the process that runs
 * the student's code (kit_student.h, KIT_REMOTE_FUNCTIONS): the lab's own
 * program includes it beside its harness; in grading, only the worker
 * does, and the judge reaches it through stubs (common/harness/judge.cu).
 *
 * The student's code here is host code that drives the GPU itself: it
 * makes the streams, queues the copies and the kernels, and waits. So
 * what happens to the streams, what the pipeline queued and when it ran
 * is known only in this process. The functions below do that part, on the
 * arrays the harness hands them (in grading: the judge's host memory and
 * GPU buffers, kit_proto.h), and say what they saw. The harness decides:
 * it checks every element of every run and times every run itself, and
 * what these functions report (a pageable allocation, the default stream,
 * a return before the streams were done, the order of the copies and
 * which copy in waits for which, the timeline) can fail the lab or
 * explain it, never pass it.
 */
#ifndef KIT_LAB_05_REMOTE_H
#define KIT_LAB_05_REMOTE_H

#include <nvtx3/nvToolsExtCudaRt.h>

#include "contract.h"
#include "kit_student.h"

#ifdef KIT_MSG_MAX
static_assert(sizeof(struct lab05_trace_out) + 1024 <= KIT_MSG_MAX, "a traced run's record must fit one message");
#endif

/* The streams of the pipeline under way, made by the student's create_streams,
 * and its events, made by the kit (lab05_nevents of them). */
static cudaStream_t lab05_streams[LAB05_MAX_CHUNKS];
static cudaEvent_t lab05_events[LAB05_MAX_CHUNKS];
static int lab05_nevents;
/* The kit's host arrays that lab05_host registered (so that lab05_host_release unregisters them). */
static void *lab05_registered[3];

/*
 * What the student's alloc_host gives: it is asked for an array of `bytes`
 * three times, each looked at (pinned or pageable, and how) and handed back
 * to free_host, and the kit's own arrays A, B and C are registered with the
 * driver the same way (cudaHostRegister, with Portable and Mapped where
 * the student's memory had them). The pipeline then runs on the kit's
 * arrays, with the memory the student chose for them.
 */
static void lab05_host(unsigned int *A, unsigned int *B, unsigned int *C, unsigned long long bytes,
                       struct lab05_host_out *out)
{
    unsigned int *mine[3] = {A, B, C};

    memset(out, 0, sizeof *out);
    /* One at a time: at most one of them beside the kit's pinned arrays. */
    for (int i = 0; i < 3; i++) {
        unsigned int flags = 0;
        void *p = kit_student_timed.alloc_host((size_t)bytes);
        if (!p) {
            out->status[i] = LAB05_NULL;
            continue;
        }
        if (!kit_is_pinned(p)) {
            out->status[i] = LAB05_PAGEABLE;
        } else {
            out->status[i] = LAB05_PINNED;
            if (cudaHostGetFlags(&flags, p) != cudaSuccess)
                (void)cudaGetLastError();
            out->flags[i] = flags;
        }
        kit_student_timed.free_host(p);
    }
    for (int i = 0; i < 3; i++) {
        unsigned int reg = cudaHostRegisterDefault;
        if (out->status[i] != LAB05_PINNED || lab05_registered[i])
            continue;
        if (out->flags[i] & cudaHostAllocPortable)
            reg |= cudaHostRegisterPortable;
        if (out->flags[i] & cudaHostAllocMapped)
            reg |= cudaHostRegisterMapped;
        KIT_CHECK(cudaHostRegister(mine[i], (size_t)bytes, reg));
        lab05_registered[i] = mine[i];
        out->registered[i] = 1;
    }
}

static void lab05_host_release(unsigned int *, unsigned int *, unsigned int *)
{
    for (int i = 0; i < 3; i++)
        if (lab05_registered[i]) {
            KIT_CHECK(cudaHostUnregister(lab05_registered[i]));
            lab05_registered[i] = NULL;
        }
}

/* The kit's events of the pipeline under way, destroyed. */
static void lab05_events_free(void)
{
    for (int i = 0; i < lab05_nevents; i++)
        KIT_CHECK(cudaEventDestroy(lab05_events[i]));
    lab05_nevents = 0;
    memset(lab05_events, 0, sizeof lab05_events);
}

/* The student's create_streams for a pipeline of nchunks chunks, and what it made. */
static void lab05_open(int nchunks, struct lab05_open_out *out)
{
    memset(out, 0, sizeof *out);
    memset(lab05_streams, 0, sizeof lab05_streams);
    out->ok = nchunks >= 1 && nchunks <= LAB05_MAX_CHUNKS;
    if (!out->ok)
        return;
    lab05_events_free();
    for (; lab05_nevents < nchunks; lab05_nevents++)
        KIT_CHECK(cudaEventCreateWithFlags(&lab05_events[lab05_nevents], cudaEventDisableTiming));
    kit_student_timed.create_streams(lab05_streams, nchunks);
    /* Up to the first that is wrong; every stream of the student's own named. */
    for (int i = 0; i < nchunks; i++) {
        cudaStream_t s = lab05_streams[i];
        char name[32];
        if (s == 0 || s == cudaStreamLegacy || s == cudaStreamPerThread) {
            if (out->ok) {
                out->ok = 0;
                out->kind = LAB05_DEFAULT_STREAM;
                out->i = i;
            }
            continue;
        }
        for (int j = 0; j < i && out->ok; j++)
            if (lab05_streams[j] == s) {
                out->ok = 0;
                out->kind = LAB05_SAME_STREAM;
                out->i = j;
                out->j = i;
            }
        snprintf(name, sizeof name, "chunk %d", i);
        nvtxNameCudaStreamA(s, name);
    }
}

static void lab05_close(int nchunks)
{
    kit_student_timed.destroy_streams(lab05_streams, nchunks);
    KIT_CHECK(cudaDeviceSynchronize());
    lab05_events_free();
    memset(lab05_streams, 0, sizeof lab05_streams);
}

/* The student's pipeline (how: LAB05_DEPTH_FIRST or LAB05_BREADTH_FIRST,
 * plus LAB05_TRACED for the traced build) on the streams of lab05_open;
 * returns the first chunk whose stream was still working when it
 * returned, or -1: asked at once, before anything of the kit's waits. */
static int lab05_pipeline(const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int *dA,
                          unsigned int *dB, unsigned int *dC, unsigned int n, int nchunks, int how, int work)
{
    const kit_student_api *api = how & LAB05_TRACED ? &kit_student_counted : &kit_student_timed;
    struct vector_pipeline p = {A, B, C, dA, dB, dC, n, nchunks, lab05_streams, lab05_events}; /* the job */

    kit_vector_knobs_now.work = work;
    if (how & LAB05_BREADTH_FIRST)
        api->pipeline_breadth_first(&p);
    else
        api->pipeline_depth_first(&p);
    for (int i = 0; i < nchunks; i++) {
        cudaError_t e;
        if (!lab05_streams[i])
            continue;
        e = cudaStreamQuery(lab05_streams[i]);
        if (e == cudaErrorNotReady)
            return i;
        KIT_CHECK(e);
    }
    return -1;
}

/* One run, nothing recorded: what the harness times. */
static int lab05_run(const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int *dA,
                     unsigned int *dB, unsigned int *dC, unsigned int n, int nchunks, int how, int work)
{
    kit_vector_knobs_now.trace = NULL;
    return lab05_pipeline(A, B, C, dA, dB, dC, n, nchunks, how, work);
}

/* The row of an operation: the element its chunk starts at. */
static long long lab05_offset_in(const void *p, const unsigned int *base, unsigned int n)
{
    const unsigned int *q = (const unsigned int *)p;
    return q >= base && q < base + n ? (long long)(q - base) : -1;
}

/* What a recorded copy moved: a chunk of A or B in (KIT_OP_H2D), of C out
 * (KIT_OP_D2H), or another copy; *row is where its chunk starts (-1). */
static int lab05_copy_op(const unsigned int *dA, const unsigned int *dB, const unsigned int *dC, unsigned int n,
                         const kit_copy_record *c, long long *row)
{
    long long a = lab05_offset_in(c->dst, dA, n), b = lab05_offset_in(c->dst, dB, n);
    long long o = lab05_offset_in(c->src, dC, n);
    *row = a >= 0 ? a : b >= 0 ? b : o;
    return a >= 0 || b >= 0 ? KIT_OP_H2D : o >= 0 ? KIT_OP_D2H : KIT_OP_OTHER;
}

static int lab05_stream_index(int nchunks, cudaStream_t s)
{
    for (int i = 0; i < nchunks; i++)
        if (lab05_streams[i] == s && s)
            return i;
    return -1;
}

/* Where x is among list[0..n): its index, or n where it is not there. */
static int lab05_find(const void *const *list, int n, const void *x)
{
    int i = 0;
    while (i < n && list[i] != x)
        i++;
    return i;
}

/*
 * What each copy of the traced run waited for (lab05_call.after), from the
 * copies (kit_copy_trace_now) and the event records and waits among them
 * (kit_lab05_sync_now), by vector clocks: each stream's clock counts, for
 * every stream, how many of that stream's copies are known to be done
 * before the next operation of this one starts. A copy is one more in its
 * stream; a record copies its stream's clock into the event; a wait takes,
 * stream by stream, the larger of its stream's clock and the event's last
 * record (an event never recorded in this run: nothing). Other ordering
 * (the legacy default stream, the host waiting between calls) is not
 * counted: `after` says what the events and the streams' own order
 * ensure. Where the record is incomplete (too many streams or events,
 * calls not recorded) every `after` is -1: not told.
 */
#define LAB05_CLOCK_SLOTS (LAB05_MAX_CHUNKS + 16)
#define LAB05_CLOCK_EVENTS (2 * LAB05_MAX_CHUNKS + 16)
static int lab05_copy_clock[LAB05_MAX_CALLS][LAB05_CLOCK_SLOTS];

static void lab05_waits(struct lab05_trace_out *out)
{
    const kit_copy_trace *ct = &kit_copy_trace_now;
    const lab05_sync_log *sl = &kit_lab05_sync_now;
    static int clock[LAB05_CLOCK_SLOTS][LAB05_CLOCK_SLOTS], eclock[LAB05_CLOCK_EVENTS][LAB05_CLOCK_SLOTS];
    const void *slot[LAB05_CLOCK_SLOTS];  /* the streams, */
    const void *event[LAB05_CLOCK_EVENTS]; /* and the events, in the order first seen */
    int slot_of[LAB05_MAX_CALLS], index_in[LAB05_MAX_CALLS];
    int nslots = 0, nevents = 0, next = 0;

    for (int i = 0; i < out->ncalls; i++)
        out->calls[i].after = -1;
    if (ct->missed || sl->missed || ct->count > LAB05_MAX_CALLS || out->ncalls != ct->count)
        return;
    memset(clock, 0, sizeof clock);
    memset(eclock, 0, sizeof eclock);
    for (int i = 0; i <= ct->count; i++) {
        /* The records and waits queued before copy i, then copy i. */
        for (; next < sl->count && sl->rec[next].copies_before <= i; next++) {
            const lab05_sync *x = &sl->rec[next];
            int s = lab05_find(slot, nslots, x->stream), e = lab05_find(event, nevents, x->event);
            if (s == LAB05_CLOCK_SLOTS || e == LAB05_CLOCK_EVENTS)
                return;
            if (s == nslots)
                slot[nslots++] = x->stream;
            if (e == nevents) {
                if (x->what == LAB05_WAIT)
                    continue; /* never recorded in this run: nothing to wait for */
                event[nevents++] = x->event;
            }
            for (int t = 0; t < nslots; t++)
                if (x->what == LAB05_RECORD)
                    eclock[e][t] = clock[s][t];
                else if (eclock[e][t] > clock[s][t])
                    clock[s][t] = eclock[e][t];
        }
        if (i == ct->count)
            break;
        int s = lab05_find(slot, nslots, ct->rec[i].stream);
        if (s == LAB05_CLOCK_SLOTS)
            return;
        if (s == nslots)
            slot[nslots++] = ct->rec[i].stream;
        slot_of[i] = s;
        index_in[i] = ++clock[s][s];
        memcpy(lab05_copy_clock[i], clock[s], sizeof clock[s]);
    }
    for (int i = 0; i < ct->count; i++) {
        int m = 0;
        while (m < i && (out->calls[m].op != KIT_OP_H2D || lab05_copy_clock[i][slot_of[m]] >= index_in[m]))
            m++;
        out->calls[i].after = m;
    }
}

/*
 * One run of the traced build, recording the copies it queued, in the
 * order it queued them (out->calls); where spans is not NULL (a GPU buffer
 * of cap slots, 24 bytes per 32 elements), also when each copy and each
 * kernel ran (out->spans, in ms on one axis: kit_timeline.h).
 */
static void lab05_trace(const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int *dA,
                        unsigned int *dB, unsigned int *dC, unsigned int n, int nchunks, int how, int work,
                        unsigned long long *spans, unsigned long long cap, struct lab05_trace_out *out)
{
    kit_copy_trace *ct = &kit_copy_trace_now;
    kit_block_span *dspans = (kit_block_span *)spans, *hspans = NULL;
    kit_launch_span launches[4 * LAB05_MAX_CHUNKS];
    kit_clock clock;
    int nl = 0;

    memset(out, 0, sizeof *out);
    if (dspans) {
        KIT_CHECK(cudaMemset(dspans, 0, cap * sizeof *dspans));
        kit_vector_knobs_now.trace = dspans;
        kit_vector_knobs_now.trace_cap = cap;
        kit_vector_knobs_now.trace_base = dC;
        kit_clock_begin(&clock);
    }
    kit_copy_trace_start(LAB05_MAX_CALLS);
    kit_lab05_sync_now.count = 0;
    kit_lab05_sync_now.missed = 0;
    kit_lab05_sync_now.on = 1;
    out->early = lab05_pipeline(A, B, C, dA, dB, dC, n, nchunks, how | LAB05_TRACED, work);
    kit_lab05_sync_now.on = 0;
    kit_copy_trace_stop();
    if (dspans)
        kit_clock_end(&clock);
    kit_vector_knobs_now.trace = NULL;
    KIT_CHECK(cudaDeviceSynchronize());

    out->missed = ct->missed;
    for (int i = 0; i < ct->count; i++) {
        const kit_copy_record *c = &ct->rec[i];
        long long row;
        int op = lab05_copy_op(dA, dB, dC, n, c, &row);
        struct lab05_call call = {op, 0, row}; /* the trace holds at most LAB05_MAX_CALLS */
        out->calls[out->ncalls++] = call;
        if (!dspans)
            continue;
        if (!c->recorded) {
            out->missed++;
            continue;
        }
        kit_span s = {op, row, lab05_stream_index(nchunks, c->stream), kit_clock_event_ms(&clock, c->start),
                      kit_clock_event_ms(&clock, c->end)};
        out->spans[out->nspans++] = s;
    }
    lab05_waits(out);
    if (!dspans)
        return;
    hspans = (kit_block_span *)kit_host_alloc(cap * sizeof *hspans);
    KIT_CHECK(cudaMemcpy(hspans, dspans, cap * sizeof *hspans, cudaMemcpyDeviceToHost));
    nl = kit_launch_spans(hspans, cap, launches, (int)(sizeof launches / sizeof launches[0]));
    for (int i = 0; i < nl && out->nspans < LAB05_MAX_SPANS; i++) {
        kit_span s = {KIT_OP_KERNEL, lab05_offset_in((const void *)(size_t)launches[i].launch, dC, n), -1,
                      kit_clock_ms(&clock, launches[i].start), kit_clock_ms(&clock, launches[i].end)};
        out->spans[out->nspans++] = s;
        out->mean_kernel_ms += (s.end - s.start) / nl;
    }
    out->launches = nl;
    out->uncertainty_ms = clock.uncertainty_ms;
    free(hspans);
    kit_clock_destroy(&clock);
}

/* Nothing: the judge times a call that does nothing, for what its own
 * path costs (a round trip to this process and a wait for the GPU). */
static void lab05_nothing(void) {}

#define LAB05_DIRECT(ret, name, params) name,
extern "C" const kit_remote_api kit_remote = {KIT_REMOTE_FUNCTIONS(LAB05_DIRECT)};
#undef LAB05_DIRECT

#endif /* KIT_LAB_05_REMOTE_H */
