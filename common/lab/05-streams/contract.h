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

/* A copy the traced build queued: what it moved (KIT_OP_...) and where its chunk starts. */
struct lab05_call {
    int op;
    long long row;
};

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
 *   record events around each copy (kit_timeline.h). The timed build is
 *   the student's code as written.
 */
#if defined(KIT_STUDENT_SCOPE) && !defined(KIT_LAB_05_SCOPE)
#define KIT_LAB_05_SCOPE

__global__ void vector_add(const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int n,
                           kit_vector_knobs knobs = kit_vector_knobs_now)
{
    kit_vector_add_body<KIT_COUNTED>(A, B, C, n, knobs);
}

#if KIT_COUNTED
#define cudaMemcpyAsync kit_traced_memcpy_async
#define cudaMemcpy kit_traced_memcpy
#endif

#endif /* KIT_STUDENT_SCOPE */
