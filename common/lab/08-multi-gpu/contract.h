/*
 * contract.h (Lab 08) - what labs/08-multi-gpu/multi-gpu.cu defines for its
 * harness (harness.cu), the job it is handed, and what its builds add.
 */
#ifndef KIT_LAB_08_H
#define KIT_LAB_08_H

#include <cuda_runtime.h>

#include "kit_check.h"

/* At most this many GPUs, and this many streams on each. */
#define KIT_MAX_GPUS 16
#define KIT_MAX_STREAMS 32

/* One GPU's part of the job. */
struct gpu_share {
    int device;                 /* the GPU's number: cudaSetDevice(device) */
    unsigned int first, count;  /* its elements: [first, first + count) of A, B and C */
    unsigned int *dA, *dB, *dC; /* on this GPU, count elements each (gpus_setup) */
    cudaStream_t stream[KIT_MAX_STREAMS]; /* stream[0..nstreams), on this GPU (gpus_setup) */
};

/* The whole job: C = A + B over n elements, spread over ngpus GPUs, each
 * GPU's share cut into nstreams chunks, chunk c in the GPU's stream[c]. */
struct multi_gpu {
    const unsigned int *A, *B; /* host, pinned: n elements each */
    unsigned int *C;           /* host, pinned */
    unsigned int n;
    int ngpus;                 /* gpu[0..ngpus) */
    int nstreams;              /* streams (chunks) per GPU */
    struct gpu_share gpu[KIT_MAX_GPUS];
};

#define KIT_STUDENT_FUNCTIONS(X)                                                                   \
    X(void, gpus_setup, (struct multi_gpu * m))                                                    \
    X(void, gpus_add, (const struct multi_gpu *m))                                                 \
    X(int, set_peer_access, (int a, int b, int on))

/*
 * The student's code is host code that drives the GPUs itself, so the
 * harness reaches it through the kit's side in the student's process
 * (08-multi-gpu/remote.h; kit_student.h): in grading that is the worker,
 * and the judge keeps the inputs, the check of C, the clock and the
 * verdict. What that side finds it says in words (text), which the
 * harness prints.
 */
#define KIT_REMOTE_H "common/lab/08-multi-gpu/remote.h"
#define LAB08_TEXT 2048

struct lab08_out {
    int ok;                 /* the check passed (setup, trace, peer access) */
    int early, left_error;  /* a run returned before its streams were done; left an error behind */
    unsigned int first[KIT_MAX_GPUS], count[KIT_MAX_GPUS]; /* the shares gpus_setup chose */
    char text[LAB08_TEXT];  /* what the checks said, whole lines */
};

/*
 * --timeline: one traced run of a job, with the time each copy ran in its
 * stream (events around it, kit_timeline.h) and each stream's kernel,
 * every GPU's events put on the host's clock (kit_event_clock). Times are
 * in ms from the moment the kit called gpus_add; it returned at run_ms.
 * The kit sees the copies, not the launches: a stream's kernel is its
 * time between a chunk's last copy in and its copy out.
 */
#define LAB08_MAX_SPANS (4 * KIT_MAX_GPUS * KIT_MAX_STREAMS)
struct lab08_span {
    short gpu, stream; /* the job's GPU, and its stream[stream] (-1: a stream not of the job) */
    int op;            /* KIT_OP_H2D, KIT_OP_KERNEL, KIT_OP_D2H or KIT_OP_OTHER */
    double start_ms, end_ms;
};
struct lab08_timeline_out {
    struct lab08_out run; /* as lab08_run says of a traced run */
    int nspans;
    long long missed;     /* copies not recorded: past the kit's room, or in a stream it could not record in */
    double run_ms;
    double uncertainty_ms[KIT_MAX_GPUS]; /* how far each GPU's times may be off the host's */
    struct lab08_span spans[LAB08_MAX_SPANS];
};

#define KIT_REMOTE_FUNCTIONS(X)                                                                    \
    X(void, lab08_host, (unsigned int *A, unsigned int *B, unsigned int *C, unsigned long long bytes)) \
    X(void, lab08_host_release, (unsigned int *A, unsigned int *B, unsigned int *C))               \
    X(void, lab08_open,                                                                            \
      (const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int n, int ngpus, int nstreams, \
       int kit, struct lab08_out *out))                                                            \
    X(void, lab08_poison, (void))                                                                  \
    X(void, lab08_run, (int traced, struct lab08_out *out))                                        \
    X(void, lab08_timeline, (struct lab08_timeline_out *out))                                      \
    X(void, lab08_close, (void))                                                                   \
    X(void, lab08_peer, (int a, int b, int on, int supported, int kit, struct lab08_out *out))     \
    X(void, lab08_reset, (int a, int b, int supported, int flaw))

/*
 * The traced build (the second build of the student's file, KIT_COUNTED=1)
 * sends these calls through the kit, which notes each one (which GPU's
 * memory a copy touches, in which stream, and every wait) before making
 * it: that is how the harness sees in what order gpus_add queued its work.
 * The timed build is the student's code as written.
 */
cudaError_t kit_mgpu_traced_memcpy_async(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                                         cudaStream_t stream = 0);
cudaError_t kit_mgpu_traced_memcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind);
cudaError_t kit_mgpu_traced_stream_synchronize(cudaStream_t stream);
cudaError_t kit_mgpu_traced_device_synchronize(void);
cudaError_t kit_mgpu_traced_event_synchronize(cudaEvent_t event);

#if defined(KIT_COUNTED) && KIT_COUNTED
#define cudaMemcpyAsync kit_mgpu_traced_memcpy_async
#define cudaMemcpy kit_mgpu_traced_memcpy
#define cudaStreamSynchronize kit_mgpu_traced_stream_synchronize
#define cudaDeviceSynchronize kit_mgpu_traced_device_synchronize
#define cudaEventSynchronize kit_mgpu_traced_event_synchronize
#endif

#endif /* KIT_LAB_08_H */
