/*
 * contract.h (Lab 05) - what labs/05-streams/streams.cu defines for its harness
 * (harness.cu), the job it is handed, and what its scope holds.
 */
#ifndef KIT_LAB_05_H
#define KIT_LAB_05_H

#include "kit_pipeline.h"

/* One vector addition C = A + B of n elements, cut into nchunks chunks. */
struct vector_pipeline {
    const unsigned int *A, *B;  /* host: the inputs, in memory from alloc_host */
    unsigned int *C;            /* host: the result, in memory from alloc_host */
    unsigned int *dA, *dB, *dC; /* device: room for all n elements of each */
    unsigned int n;
    int nchunks;
    cudaStream_t *streams;      /* nchunks streams, made by create_streams */
    cudaEvent_t *events;        /* nchunks events, made by the kit (cudaEventDisableTiming) */
};

#define KIT_STUDENT_FUNCTIONS(X)                                                                   \
    X(void *, alloc_host, (size_t bytes))                                                          \
    X(void, free_host, (void *p))                                                                  \
    X(void, create_streams, (cudaStream_t * streams, int n))                                       \
    X(void, destroy_streams, (cudaStream_t * streams, int n))                                      \
    X(void, pipeline_depth_first, (const struct vector_pipeline *p))                               \
    X(void, pipeline_breadth_first, (const struct vector_pipeline *p))

/*
 * The student's code is host code that drives the GPU itself, so the
 * harness reaches it through the kit's side in the student's process
 * (05-streams/remote.h; kit_student.h): in grading that is the worker, and
 * the judge keeps the inputs, the checks, the clock and the verdict.
 */
#define KIT_REMOTE_H "common/lab/05-streams/remote.h"
#define LAB05_MAX_CHUNKS 64
#define LAB05_MAX_CALLS (8 * LAB05_MAX_CHUNKS + 64)
#define LAB05_MAX_SPANS (LAB05_MAX_CALLS + 4 * LAB05_MAX_CHUNKS)

/* How a run goes: its issue order, and which build. */
enum { LAB05_DEPTH_FIRST = 0, LAB05_BREADTH_FIRST = 1, LAB05_TRACED = 2 };

/* What alloc_host gave, per array (A, B, C). */
enum { LAB05_PINNED, LAB05_NULL, LAB05_PAGEABLE };
struct lab05_host_out {
    int status[3];
    unsigned int flags[3]; /* cudaHostGetFlags of a pinned one */
    int registered[3];     /* the kit's array registered as the student's was */
};

/* What create_streams made. */
enum { LAB05_STREAMS_OK, LAB05_DEFAULT_STREAM, LAB05_SAME_STREAM };
struct lab05_open_out {
    int ok, kind;
    int i, j; /* streams[i] is the default stream; or streams[i] and [j] are one */
};

/* A copy the traced build queued: what it moved (KIT_OP_...), where its
 * chunk starts, and `after`: the most calls m such that every copy in
 * among calls[0] to calls[m - 1] is done before this copy starts, by the
 * order of its stream and the events its stream waited for. */
struct lab05_call {
    int op;
    int after;
    long long row;
};

/* The traced build's event records and waits, each with the number of
 * copies queued before it (kit_copy_trace_now.count), in the order issued. */
#define LAB05_MAX_SYNCS (4 * LAB05_MAX_CHUNKS + 64)
enum { LAB05_RECORD, LAB05_WAIT };
typedef struct {
    int what, copies_before;
    cudaStream_t stream;
    cudaEvent_t event;
} lab05_sync;
typedef struct {
    int on, count;
    long long missed;
    lab05_sync rec[LAB05_MAX_SYNCS];
} lab05_sync_log;
/* One for the whole program (weak: every translation unit shares it). */
__attribute__((weak)) lab05_sync_log kit_lab05_sync_now;

static inline void lab05_sync_note(int what, cudaStream_t stream, cudaEvent_t event)
{
    lab05_sync_log *t = &kit_lab05_sync_now;
    if (!t->on)
        return;
    if (t->count == LAB05_MAX_SYNCS) {
        t->missed++;
        return;
    }
    t->rec[t->count].what = what;
    t->rec[t->count].copies_before = kit_copy_trace_now.count;
    t->rec[t->count].stream = stream;
    t->rec[t->count].event = event;
    t->count++;
}

/* A traced run: the copies in the order queued; and where asked, its timeline. */
struct lab05_trace_out {
    int early; /* a chunk still working when the pipeline returned, or -1 */
    int ncalls;
    struct lab05_call calls[LAB05_MAX_CALLS];
    long long missed; /* copies not recorded */
    int nspans, launches;
    kit_span spans[LAB05_MAX_SPANS];
    double uncertainty_ms, mean_kernel_ms;
};

#define KIT_REMOTE_FUNCTIONS(X)                                                                    \
    X(void, lab05_host,                                                                            \
      (unsigned int *A, unsigned int *B, unsigned int *C, unsigned long long bytes, struct lab05_host_out *out)) \
    X(void, lab05_host_release, (unsigned int *A, unsigned int *B, unsigned int *C))               \
    X(void, lab05_open, (int nchunks, struct lab05_open_out *out))                                 \
    X(void, lab05_close, (int nchunks))                                                            \
    X(int, lab05_run,                                                                              \
      (const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int *dA, unsigned int *dB, \
       unsigned int *dC, unsigned int n, int nchunks, int how, int work))                          \
    X(void, lab05_trace,                                                                           \
      (const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int *dA, unsigned int *dB, \
       unsigned int *dC, unsigned int n, int nchunks, int how, int work, unsigned long long *spans, \
       unsigned long long cap, struct lab05_trace_out *out))                                       \
    X(void, lab05_nothing, (void))

#endif /* KIT_LAB_05_H */

/*
 * The student's scope (common/harness/student.cu includes this file a
 * second time inside the build's namespace, with KIT_STUDENT_SCOPE set):
 *
 *   vector_add  the course's kernel, launched by the student as
 *               vector_add<<<blocks, threads, 0, stream>>>(A, B, C, n);
 *               the settings the kit gives it (--kernel-work; in the
 *               traced build, where to record its blocks) travel as a
 *               default argument;
 *   in the traced build (KIT_COUNTED=1), cudaMemcpyAsync and cudaMemcpy
 *   record events around each copy (kit_timeline.h), and cudaEventRecord
 *   and cudaStreamWaitEvent are noted where they fall among the copies
 *   (kit_lab05_sync_now), so that the kit can tell which copy waits for
 *   which. The timed build is the student's code as written.
 */
#if defined(KIT_STUDENT_SCOPE) && !defined(KIT_LAB_05_SCOPE)
#define KIT_LAB_05_SCOPE

__global__ void vector_add(const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int n,
                           kit_vector_knobs knobs = kit_vector_knobs_now)
{
    kit_vector_add_body<KIT_COUNTED>(A, B, C, n, knobs);
}

#if KIT_COUNTED
static inline cudaError_t kit_traced_event_record(cudaEvent_t event, cudaStream_t stream = 0)
{
    cudaError_t e = cudaEventRecord(event, stream);
    if (e == cudaSuccess)
        lab05_sync_note(LAB05_RECORD, stream, event);
    return e;
}

static inline cudaError_t kit_traced_stream_wait_event(cudaStream_t stream, cudaEvent_t event,
                                                       unsigned int flags = 0)
{
    cudaError_t e = cudaStreamWaitEvent(stream, event, flags);
    if (e == cudaSuccess)
        lab05_sync_note(LAB05_WAIT, stream, event);
    return e;
}

#define cudaMemcpyAsync kit_traced_memcpy_async
#define cudaMemcpy kit_traced_memcpy
#define cudaEventRecord kit_traced_event_record
#define cudaStreamWaitEvent kit_traced_stream_wait_event
#endif

#endif /* KIT_STUDENT_SCOPE */
