/*
 * kit_device.h - choosing the GPU, reading its limits, and sizing problems
 * from them.
 *
 * kit_device_open either returns a usable device or exits: with
 * KIT_EXIT_WAIVED when the machine cannot run the kit (no driver, no GPU,
 * a GPU older than the kit needs, a binary without code for this GPU), and
 * with KIT_EXIT_USAGE when --device names a GPU that does not exist.
 */
#ifndef KIT_DEVICE_H
#define KIT_DEVICE_H

#include "kit_check.h"

/* __match_any_sync, which the in-kernel counters use, needs Volta or newer. */
#define KIT_MIN_CC_MAJOR 7

/* Memory-bound labs default to a working set at least this many L2s... */
#define KIT_L2_MULTIPLE 8
/* ...and never below the course's own large size, 2^22 elements. */
#define KIT_MIN_DEFAULT_SIZE (1ull << 22)

typedef struct {
    int ordinal;
    char name[256];
    int cc_major, cc_minor;
    int sms;
    int warp_size;
    long long l2_bytes;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int max_warps_per_sm;
    int max_threads_per_block;
    int regs_per_sm;
    int regs_per_block;
    long long smem_per_sm;
    long long smem_per_block;       /* without opting in */
    long long smem_per_block_optin; /* with cudaFuncSetAttribute */
    long long smem_reserved_per_block; /* the driver's own, per block */
    long long global_bytes;
    long long free_bytes; /* when the device was opened */
    int copy_engines;     /* asyncEngineCount */
    int driver_version;   /* e.g. 13000 */
    int runtime_version;
} kit_device;

/* Never launched: asking for its attributes tells whether this binary holds
 * code the GPU can run. */
static __global__ void kit_arch_probe_kernel(void) {}

static inline int kit_attr(cudaDeviceAttr attr, int ordinal)
{
    int v = 0;
    KIT_CHECK(cudaDeviceGetAttribute(&v, attr, ordinal));
    return v;
}

static inline void kit_device_open(int ordinal, kit_device *d)
{
    struct cudaDeviceProp prop;
    struct cudaFuncAttributes fa;
    size_t free_b = 0, total_b = 0;
    int count = 0;

    memset(d, 0, sizeof *d);
#if defined(KIT_JUDGE) && KIT_JUDGE && !defined(KIT_STUDENT_BUILD)
    /* The grader's judge: its worker starts now, so that the two CUDA
     * contexts are made side by side, not one after the other. */
    kit_judge_spawn();
#endif
    KIT_CHECK(cudaGetDeviceCount(&count));
    if (count == 0)
        kit_check(cudaErrorNoDevice, "cudaGetDeviceCount", __FILE__, __LINE__);
    if (ordinal < 0 || ordinal >= count)
        kit_die(KIT_EXIT_USAGE, "--device %d: this machine has %d GPU%s (0 to %d)", ordinal,
                count, count == 1 ? "" : "s", count - 1);
    KIT_CHECK(cudaSetDevice(ordinal));
    KIT_CHECK(cudaGetDeviceProperties(&prop, ordinal));

    d->ordinal = ordinal;
    snprintf(d->name, sizeof d->name, "%s", prop.name);
    d->cc_major = prop.major;
    d->cc_minor = prop.minor;
    if (d->cc_major < KIT_MIN_CC_MAJOR)
        kit_die(KIT_EXIT_WAIVED,
                "cannot run here: %s has compute capability %d.%d; the kit needs %d.0 or "
                "newer (Volta, Turing, Ampere, Ada, Hopper and later).",
                d->name, d->cc_major, d->cc_minor, KIT_MIN_CC_MAJOR);

    d->sms = kit_attr(cudaDevAttrMultiProcessorCount, ordinal);
    d->warp_size = kit_attr(cudaDevAttrWarpSize, ordinal);
    d->l2_bytes = kit_attr(cudaDevAttrL2CacheSize, ordinal);
    d->max_threads_per_sm = kit_attr(cudaDevAttrMaxThreadsPerMultiProcessor, ordinal);
    d->max_blocks_per_sm = kit_attr(cudaDevAttrMaxBlocksPerMultiprocessor, ordinal);
    d->max_warps_per_sm = d->max_threads_per_sm / d->warp_size;
    d->max_threads_per_block = kit_attr(cudaDevAttrMaxThreadsPerBlock, ordinal);
    d->regs_per_sm = kit_attr(cudaDevAttrMaxRegistersPerMultiprocessor, ordinal);
    d->regs_per_block = kit_attr(cudaDevAttrMaxRegistersPerBlock, ordinal);
    d->smem_per_sm = kit_attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor, ordinal);
    d->smem_per_block = kit_attr(cudaDevAttrMaxSharedMemoryPerBlock, ordinal);
    d->smem_per_block_optin = kit_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal);
    d->smem_reserved_per_block = kit_attr(cudaDevAttrReservedSharedMemoryPerBlock, ordinal);
    d->copy_engines = kit_attr(cudaDevAttrAsyncEngineCount, ordinal);
    KIT_CHECK(cudaDriverGetVersion(&d->driver_version));
    KIT_CHECK(cudaRuntimeGetVersion(&d->runtime_version));

    /* Exits with advice if the binary has no code for this architecture. */
    KIT_CHECK(cudaFuncGetAttributes(&fa, kit_arch_probe_kernel));

    KIT_CHECK(cudaMemGetInfo(&free_b, &total_b));
    d->global_bytes = (long long)total_b;
    d->free_bytes = (long long)free_b;
}

/* Smallest power of two >= v (v >= 1). */
static inline unsigned long long kit_pow2_ceil(unsigned long long v)
{
    unsigned long long p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

/* Largest power of two <= v, or 0 if v is 0. */
static inline unsigned long long kit_pow2_floor(unsigned long long v)
{
    unsigned long long p = 1;
    if (v == 0)
        return 0;
    while (p <= v / 2)
        p <<= 1;
    return p;
}

/*
 * The default problem size of a memory-bound lab, in elements: the smallest
 * power of two whose working set (bytes_per_element counts every array the
 * lab streams through) is at least KIT_L2_MULTIPLE times the L2, and at
 * least KIT_MIN_DEFAULT_SIZE; then capped to the largest power of two whose
 * allocation (alloc_bytes_per_element) takes at most half the free memory.
 * A cache of tens of MB hides what a 1.5 MB one showed at 16 MB: sizing from
 * the L2 makes the effect show on every GPU.
 */
static inline unsigned long long kit_default_size(long long l2_bytes, long long free_bytes,
                                           unsigned bytes_per_element,
                                           unsigned alloc_bytes_per_element)
{
    unsigned long long want, cap;

    want = kit_pow2_ceil(((unsigned long long)l2_bytes * KIT_L2_MULTIPLE + bytes_per_element - 1) /
                         bytes_per_element);
    if (want < KIT_MIN_DEFAULT_SIZE)
        want = KIT_MIN_DEFAULT_SIZE;
    cap = kit_pow2_floor((unsigned long long)(free_bytes / 2) / alloc_bytes_per_element);
    return want < cap ? want : cap;
}

/*
 * The default size of a lab that pins its host arrays (Labs 05 and 08). On
 * WSL 2, where "pinned system memory ... availability for applications is
 * limited" (NVIDIA, CUDA on WSL User Guide, "Known Limitations for Linux CUDA
 * Applications") and no figure is given, the largest n, halving from want
 * but not below floor, whose n * pinned_per_element + pinned_extra bytes
 * could be pinned here at once (pinned, then freed at once); *capped says
 * whether it is below want. Elsewhere want, untouched. Needs the device open.
 */
static inline unsigned long long kit_pinned_default_size(unsigned long long want, unsigned long long floor,
                                                         size_t pinned_per_element, size_t pinned_extra,
                                                         int *capped)
{
    unsigned long long n = want;

    *capped = 0;
    if (!kit_on_wsl2())
        return want;
    for (;;) {
        void *p = NULL;
        cudaError_t e = cudaMallocHost(&p, (size_t)n * pinned_per_element + pinned_extra);
        if (e == cudaSuccess) {
            KIT_CHECK(cudaFreeHost(p));
            break;
        }
        if (e != cudaErrorMemoryAllocation)
            KIT_CHECK(e);
        (void)cudaGetLastError();
        if (n / 2 < floor)
            break; /* the run itself then says why it cannot pin its arrays */
        n /= 2;
        *capped = 1;
    }
    return n;
}

/* Said where kit_pinned_default_size capped the default. */
static inline void kit_pinned_capped_note(unsigned long long n, double pinned_bytes)
{
    fprintf(stderr, "%s: note: WSL 2 limits pinned host memory (" KIT_WSL_GUIDE "): the default size is %llu, "
                    "the largest whose %.0f MiB of pinned arrays could be pinned here\n",
            kit_program, n, pinned_bytes / 1048576.0);
}

#endif /* KIT_DEVICE_H */
