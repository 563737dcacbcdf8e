/*
 * kit_pipeline.h - the course's "vector addition with streams", the parts
 * every lab that pipelines it shares (05, and 08 after it): the kernel,
 * the chunks, poisoning, the check of C = A + B, the ideal time.
 *
 * The kernel is the course's vector_addition on 32-bit unsigned integers
 * (wrap-around sums, so every input is valid), one thread per element. A
 * lab may make it heavier without changing its result: `work` extra steps
 * of a hash per element, masked out of C by a zero the compiler cannot
 * see. Its traced form (TRACED = 1) also records, per block, when the
 * block ran (kit_timeline.h); the timed form carries nothing of that.
 *
 * Before every verified run the device inputs, the device output and the
 * host output are poisoned (all bits set): a pipeline that skips a copy in
 * leaves C[i] = 0xffffffff + 0xffffffff, one that skips a copy out leaves
 * 0xffffffff, and kit_vector_check says which.
 */
#ifndef KIT_PIPELINE_H
#define KIT_PIPELINE_H

#include "kit_check.h"
#include "kit_host.h"
#include "kit_timeline.h"

#define KIT_POISON_WORD 0xffffffffu

/* The kernel's settings, handed to every launch. */
typedef struct {
    int work;           /* extra hash steps per element */
    unsigned int zero;  /* always 0; the compiler cannot know it */
    kit_block_span *trace;           /* traced form: per 32 elements of C, the block starting there */
    unsigned long long trace_cap;
    const unsigned int *trace_base;  /* the array of C the slots count from */
} kit_vector_knobs;

/* The settings of the next launches (weak: one for the whole program). A
 * lab's student-facing kernel takes them as a default argument. */
__attribute__((weak)) kit_vector_knobs kit_vector_knobs_now;

template <int TRACED>
static __device__ __forceinline__ void kit_vector_add_body(const unsigned int *A, const unsigned int *B,
                                                           unsigned int *C, unsigned int n,
                                                           const kit_vector_knobs &k)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long start = 0;

    if (TRACED && threadIdx.x == 0)
        start = kit_globaltimer();
    if (i < n) {
        unsigned int h = i;
        for (int s = 0; s < k.work; s++)
            h = h * 1664525u + 1013904223u;
        C[i] = A[i] + B[i] + (h & k.zero);
    }
    if (TRACED && k.trace) {
        __syncthreads(); /* the block's end: every thread has stored */
        if (threadIdx.x == 0 && C >= k.trace_base) {
            unsigned long long first = (unsigned long long)(C - k.trace_base) + blockIdx.x * blockDim.x;
            kit_block_span_record(k.trace, k.trace_cap, first / 32, (unsigned long long)(size_t)C, start);
        }
    }
}

template <int TRACED>
static __global__ void kit_vector_add_kernel(const unsigned int *A, const unsigned int *B, unsigned int *C,
                                             unsigned int n, kit_vector_knobs k)
{
    kit_vector_add_body<TRACED>(A, B, C, n, k);
}

#define KIT_VECTOR_THREADS 256

/* The kit's own launch of the plain kernel over n elements, in stream s. */
static inline void kit_vector_add(const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int n,
                                  cudaStream_t s, const kit_vector_knobs *k)
{
    if (n == 0)
        return;
    kit_vector_add_kernel<0><<<(n + KIT_VECTOR_THREADS - 1) / KIT_VECTOR_THREADS, KIT_VECTOR_THREADS, 0, s>>>(
        A, B, C, n, *k);
    KIT_CHECK_LAUNCH();
}

/* Chunk i of n elements cut into nchunks: the first n % nchunks chunks
 * take one element more. */
static inline void kit_chunk(unsigned int n, int nchunks, int i, unsigned int *first, unsigned int *count)
{
    unsigned int base = n / (unsigned int)nchunks, extra = n % (unsigned int)nchunks;
    *first = (unsigned int)i * base + ((unsigned int)i < extra ? (unsigned int)i : extra);
    *count = base + ((unsigned int)i < extra ? 1 : 0);
}

/*
 * The kit's own pipeline step: chunk [first, first + count) copied in,
 * added and copied out, all queued in stream s. Host arrays must be pinned
 * for the copies to overlap anything.
 */
static inline void kit_issue_chunk(const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int *dA,
                                   unsigned int *dB, unsigned int *dC, unsigned int first, unsigned int count,
                                   cudaStream_t s, const kit_vector_knobs *k)
{
    size_t bytes = (size_t)count * sizeof(unsigned int);
    KIT_CHECK(cudaMemcpyAsync(dA + first, A + first, bytes, cudaMemcpyHostToDevice, s));
    KIT_CHECK(cudaMemcpyAsync(dB + first, B + first, bytes, cudaMemcpyHostToDevice, s));
    kit_vector_add(dA + first, dB + first, dC + first, count, s, k);
    KIT_CHECK(cudaMemcpyAsync(C + first, dC + first, bytes, cudaMemcpyDeviceToHost, s));
}

/* A run's input, from the drawn one under a key: out = e ^ key (in stream
 * 0): new numbers every run, which the kit can check from e and the key. */
static __global__ void kit_keyed_kernel(const unsigned int *e, unsigned int key, unsigned int *out, unsigned int n)
{
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = e[i] ^ key;
}

static inline void kit_keyed(const unsigned int *e, unsigned int key, unsigned int *out, unsigned int n)
{
    kit_keyed_kernel<<<1024, 256>>>(e, key, out, n);
    KIT_CHECK_LAUNCH();
}

/* All bits set in the device arrays and the host output; waits for it. */
static inline void kit_pipeline_poison(unsigned int *dA, unsigned int *dB, unsigned int *dC, unsigned int *C,
                                       unsigned int n)
{
    size_t bytes = (size_t)n * sizeof(unsigned int);
    KIT_CHECK(cudaMemset(dA, 0xff, bytes));
    KIT_CHECK(cudaMemset(dB, 0xff, bytes));
    KIT_CHECK(cudaMemset(dC, 0xff, bytes));
    kit_parallel_fill(C, 0xff, bytes);
    KIT_CHECK(cudaDeviceSynchronize());
}

typedef struct {
    const unsigned int *A, *B, *C;
} kit_vector_check_ctx;

static inline long long kit_vector_check_range(unsigned long long begin, unsigned long long end, void *p,
                                               unsigned long long *first)
{
    const kit_vector_check_ctx *k = (const kit_vector_check_ctx *)p;
    long long bad = 0;
    for (unsigned long long i = begin; i < end; i++)
        if (k->C[i] != k->A[i] + k->B[i] && bad++ == 0)
            *first = i;
    return bad;
}

/*
 * Checks every element of C against A + B (host arrays); returns how many
 * are wrong and, unless name is NULL, describes the first on stderr,
 * saying what the poison in it means.
 */
static inline long long kit_vector_check(const unsigned int *A, const unsigned int *B, const unsigned int *C,
                                         unsigned int n, const char *name)
{
    kit_vector_check_ctx k = {A, B, C};
    unsigned long long i;
    long long bad = kit_parallel_check(n, kit_vector_check_range, &k, &i);
    unsigned int want, got;

    if (bad == 0 || !name)
        return bad;
    want = A[i] + B[i];
    got = C[i];
    if (got == KIT_POISON_WORD)
        fprintf(stderr, "%s: %s: %lld of %u elements of C are wrong; C[%llu] still holds the kit's poison "
                        "0xffffffff: it was never copied back\n", kit_program, name, bad, n, i);
    else if (got == KIT_POISON_WORD + KIT_POISON_WORD)
        fprintf(stderr, "%s: %s: %lld of %u elements of C are wrong; C[%llu] = 0xfffffffe, the sum of the "
                        "kit's poison: its A and B were not on the device when the kernel ran\n",
                kit_program, name, bad, n, i);
    else
        fprintf(stderr, "%s: %s: %lld of %u elements of C are wrong; C[%llu] = %u but A + B = %u\n", kit_program,
                name, bad, n, i, got, want);
    return bad;
}

/*
 * The best time a pipeline of nchunks equal chunks can reach, from the
 * times of its three stages over all the data: the three stages of the
 * first chunk, then the slowest stage for each further chunk. With one
 * copy engine the copies in and out share it; with none nothing overlaps.
 */
static inline double kit_pipeline_ideal_ms(double t_in, double t_kernel, double t_out, int nchunks, int engines)
{
    double sum = t_in + t_kernel + t_out, slowest;
    if (engines <= 0 || nchunks <= 1)
        return sum;
    if (engines == 1)
        slowest = t_in + t_out > t_kernel ? t_in + t_out : t_kernel;
    else
        slowest = t_in > t_out ? (t_in > t_kernel ? t_in : t_kernel) : (t_out > t_kernel ? t_out : t_kernel);
    return sum / nchunks + (nchunks - 1.0) / nchunks * slowest;
}

/* Is host memory p page-locked (pinned)? */
static inline int kit_is_pinned(const void *p)
{
    struct cudaPointerAttributes a;
    if (!p)
        return 0;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError(); /* older runtimes: unregistered memory is an error */
        return 0;
    }
    return a.type == cudaMemoryTypeHost;
}

#endif /* KIT_PIPELINE_H */
