/*
 * 05-streams.h - what labs/05-streams/streams.cu defines for its harness
 * (05-streams.cu), the job it is handed, and what its scope holds.
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

/* The student's code here is host code that drives the GPU itself
 * (streams, copies, GPUs): the grader still runs it in one process with the
 * kit's harness, not beside the kit's judge (common/lib/kit_judge.h). */
#define KIT_STUDENT_HOST_CODE 1

#define KIT_STUDENT_FUNCTIONS(X)                                                                   \
    X(void *, alloc_host, (size_t bytes))                                                          \
    X(void, free_host, (void *p))                                                                  \
    X(void, create_streams, (cudaStream_t * streams, int n))                                       \
    X(void, destroy_streams, (cudaStream_t * streams, int n))                                      \
    X(void, pipeline_depth_first, (const struct vector_pipeline *p))                               \
    X(void, pipeline_breadth_first, (const struct vector_pipeline *p))

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
