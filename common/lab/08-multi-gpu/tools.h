/*
 * 08-multi-gpu/tools.h - small tools of Lab 08's harness that its side in
 * the student's process (08-multi-gpu/remote.h) uses too.
 */
#ifndef KIT_LAB_08_TOOLS_H
#define KIT_LAB_08_TOOLS_H

#include "kit_check.h"

static __global__ void noop_kernel(void) {}

static __global__ void add_kernel(const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        C[i] = A[i] + B[i];
}

static inline void launch_add(const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int n,
                       cudaStream_t s)
{
    add_kernel<<<(n + 255) / 256, 256, 0, s>>>(A, B, C, n);
    KIT_CHECK_LAUNCH();
}

static inline int is_default_stream(cudaStream_t s)
{
    return s == 0 || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

/* Waits for every GPU of the first n. */
static inline void sync_gpus(int n)
{
    for (int g = 0; g < n; g++) {
        KIT_CHECK(cudaSetDevice(g));
        KIT_CHECK(cudaDeviceSynchronize());
    }
}

/* Whether GPU x can now reach GPU y's memory: the kit asks the driver to
 * turn it on (off) and hears "already so", or else has just done it. */
static inline int access_is(int x, int y, int on)
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

/* Peer access on (off) both ways between GPUs a and b, whatever it was. */
static inline void access_both(int a, int b, int on)
{
    access_is(a, b, on);
    access_is(b, a, on);
}

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
#endif /* KIT_LAB_08_TOOLS_H */
