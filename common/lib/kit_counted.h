/*
 * kit_counted.h - the arrays of a counting build: how the kit measures, on
 * the student's own kernels, what the course reads from a profiler.
 *
 * A student's kernels are counted from their compiled PTX: ptx-count.py
 * puts a call before each load and store, and its runtime
 * (kit_count_runtime.cu) counts with the functions below
 * (kit_count_global_of, kit_count_shared_of, kit_record_read). The counting
 * types below do the same for the kit's own kernels (Lab 01's strided rows,
 * Lab 06's bank probes). Either way every access is a warp-wide request
 * that the lanes making it together count on the way:
 *
 *   global loads and stores  requests, distinct 128-byte segments, distinct
 *                            32-byte sectors, active lanes: nvprof's
 *                            gld_transactions_per_request (segments), ncu's
 *                            sectors per request, and the lanes per request
 *                            that warp execution efficiency is made of;
 *   shared loads and stores  requests and wavefronts (the passes the banks
 *                            need: 1 without a bank conflict, up to 32).
 *
 * Optionally, for one array, the index each thread read last (so the host
 * can check a gather whose indices were random) and the lowest and highest
 * it read (so that it can check where a thread's reads stayed), and per
 * warp the SM it ran
 * on and the times of its first and last access (achieved occupancy and SM
 * efficiency: kit_trace.h), with the counts or, in a trace-only launch
 * (kit_counter_trace_only), without them.
 *
 * The timed kernels carry none of this: they are the student's code as
 * compiled, and the counted copy is the same compilation with the calls
 * added, so nothing in C++ can tell the two apart.
 */
#ifndef KIT_COUNTED_H
#define KIT_COUNTED_H

#include <math.h>

#include "kit_check.h"

#define KIT_SEGMENT_BYTES 128
#define KIT_SECTOR_BYTES 32
#define KIT_SHARED_BANKS 32

/* What a counting launch adds up. */
enum {
    /* global loads, then the same five for global stores */
    KIT_LD_REQUESTS, KIT_LD_SEGMENTS, KIT_LD_SECTORS, KIT_LD_LANES, KIT_LD_BYTES,
    KIT_ST_REQUESTS, KIT_ST_SEGMENTS, KIT_ST_SECTORS, KIT_ST_LANES, KIT_ST_BYTES,
    /* shared loads, then the same three for shared stores */
    KIT_SH_LD_REQUESTS, KIT_SH_LD_WAVEFRONTS, KIT_SH_LD_LANES,
    KIT_SH_ST_REQUESTS, KIT_SH_ST_WAVEFRONTS, KIT_SH_ST_LANES,
    KIT_NCOUNTS
};

/* Warps add into one of these slots (by warp index), so that atomics from
 * the whole grid do not queue on a few addresses; the host sums the slots.
 * A slot packs two 32-bit counts into each 64-bit word, so that a request
 * costs three atomics: (requests, lanes), (segments, sectors), bytes for a
 * global request; (requests, lanes), wavefronts for a shared one. */
#define KIT_COUNT_SLOTS 16384
enum {
    KIT_RAW_LD_RL, KIT_RAW_LD_SS, KIT_RAW_LD_BYTES,
    KIT_RAW_ST_RL, KIT_RAW_ST_SS, KIT_RAW_ST_BYTES,
    KIT_RAW_SH_LD_RL, KIT_RAW_SH_LD_WAVEFRONTS,
    KIT_RAW_SH_ST_RL, KIT_RAW_SH_ST_WAVEFRONTS,
    KIT_RAW_WORDS
};

/* One warp's trace: where it ran and when it first and last accessed memory. */
typedef struct {
    unsigned long long start, end; /* %globaltimer, ns; start ~0 until set */
    unsigned int smid;
    unsigned int used; /* 1 once the warp has accessed memory */
} kit_warp_record;

typedef struct {
    unsigned long long *counts;    /* device: [KIT_COUNT_SLOTS][KIT_RAW_WORDS] */
    const void *record_base;       /* reads of this array are recorded...  */
    unsigned long long record_elems;
    unsigned int *record;          /* ...as each thread's last index read, */
                                   /* then its lowest, then its highest    */
                                   /* complemented (kit_record_*)          */
    unsigned long long record_cap; /* threads the record has room for      */
    kit_warp_record *trace;        /* per warp, or NULL                    */
    unsigned long long trace_cap;
} kit_count_config;

/* Each translation unit that counts has its own copy, set by the host. */
static __constant__ kit_count_config kit_count_cfg;

static inline void kit_count_configure_here(const kit_count_config *c)
{
    KIT_CHECK(cudaMemcpyToSymbol(kit_count_cfg, c, sizeof *c));
}

/* ---- device side ------------------------------------------------------- */

static __device__ __forceinline__ unsigned int kit_lane(void)
{
    unsigned int lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

/* The thread's index in the grid: blocks in order, threads in order in a block. */
static __device__ __forceinline__ unsigned long long kit_grid_thread(void)
{
    unsigned long long block = blockIdx.x + (unsigned long long)gridDim.x *
                                                (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    unsigned int threads = blockDim.x * blockDim.y * blockDim.z;
    unsigned int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    return block * threads + t;
}

static __device__ __forceinline__ unsigned long long kit_grid_warp(void)
{
    unsigned long long block = blockIdx.x + (unsigned long long)gridDim.x *
                                                (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    unsigned int threads = blockDim.x * blockDim.y * blockDim.z;
    unsigned int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    return block * ((threads + 31) / 32) + t / 32;
}

/* How many distinct values of key the lanes in mask hold. */
static __device__ __forceinline__ unsigned int kit_distinct(unsigned int mask, unsigned long long key)
{
    unsigned int peers = __match_any_sync(mask, key);
    int leader = (__ffs(peers) - 1) == (int)kit_lane();
    return __popc(__ballot_sync(mask, leader));
}

/* The warp's slot of raw counters. */
static __device__ __forceinline__ unsigned long long *kit_count_slot(unsigned long long warp)
{
    return kit_count_cfg.counts + (warp % KIT_COUNT_SLOTS) * KIT_RAW_WORDS;
}

static __device__ __forceinline__ unsigned long long kit_pack(unsigned int lo, unsigned int hi)
{
    return (unsigned long long)lo | ((unsigned long long)hi << 32);
}

static __device__ __forceinline__ void kit_trace_touch(unsigned long long warp)
{
    unsigned long long now;
    unsigned int sm;
    kit_warp_record *r;

    if (!kit_count_cfg.trace || warp >= kit_count_cfg.trace_cap)
        return;
    now = kit_globaltimer();
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    r = &kit_count_cfg.trace[warp];
    atomicMin(&r->start, now);
    atomicMax(&r->end, now);
    r->smid = sm;
    r->used = 1;
}

/* One global request of `bytes` per lane, made by the lanes in `active`:
 * every one of them calls it (kit_count_global: the lanes active now).
 * Inlined, not called: a call is compiled as made by the whole warp
 * (call.uni), and the lanes of a divergent branch would be miscounted. */
static __device__ __forceinline__ void kit_count_global_of(unsigned int active, const void *address,
                                                           unsigned int bytes, int store)
{
    unsigned long long a = (unsigned long long)(size_t)address;
    unsigned int segments, sectors;

    /* A trace-only launch (no counters): the trace, and nothing else. */
    if (!kit_count_cfg.counts) {
        if ((int)kit_lane() == __ffs(active) - 1)
            kit_trace_touch(kit_grid_warp());
        return;
    }
    segments = kit_distinct(active, a / KIT_SEGMENT_BYTES);
    sectors = kit_distinct(active, a / KIT_SECTOR_BYTES);
    if ((int)kit_lane() == __ffs(active) - 1) {
        unsigned long long warp = kit_grid_warp();
        unsigned long long *slot = kit_count_slot(warp) + (store ? KIT_RAW_ST_RL : KIT_RAW_LD_RL);
        unsigned int lanes = __popc(active);
        atomicAdd(&slot[0], kit_pack(1, lanes));
        atomicAdd(&slot[1], kit_pack(segments, sectors));
        atomicAdd(&slot[2], (unsigned long long)lanes * bytes);
        kit_trace_touch(warp);
    }
}

static __device__ __forceinline__ void kit_count_global(const void *address, unsigned int bytes, int store)
{
    kit_count_global_of(__activemask(), address, bytes, store);
}

/*
 * One shared-memory request of `bytes` per lane (4, 8 or 16), made by the
 * lanes in `active` (kit_count_shared: the lanes active now). The banks
 * serve 32 words of 4 bytes per pass; lanes that read one word share it
 * (broadcast). Accesses wider than 4 bytes are served in phases of 32
 * words: half-warps for 8 bytes, quarter-warps for 16. The wavefronts of a
 * phase are the most distinct words any one bank must deliver.
 */
static __device__ __forceinline__ void kit_count_shared_of(unsigned int active, const void *address,
                                                           unsigned int bytes, int store)
{
    unsigned int leader = __ffs(active) - 1;
    unsigned int offset = (unsigned int)__cvta_generic_to_shared(address);
    unsigned int words_per_lane = bytes >= 4 ? bytes / 4 : 1;
    unsigned int lanes_per_phase = 32 / words_per_lane;
    unsigned int wavefronts = 0;

    if (!kit_count_cfg.counts) /* a trace-only launch */
        return;
    /* Every lane gathers the phase's words and counts them (all get the same). */
    for (unsigned int phase = 0; phase < words_per_lane; phase++) {
        unsigned int words[32], nwords = 0, worst = 0;
        for (unsigned int l = phase * lanes_per_phase; l < (phase + 1) * lanes_per_phase; l++) {
            unsigned int o;
            if (!(active >> l & 1))
                continue;
            o = __shfl_sync(active, offset, l);
            for (unsigned int w = 0; w < words_per_lane; w++) {
                unsigned int word = o / 4 + w, seen = 0;
                for (unsigned int k = 0; k < nwords; k++)
                    seen |= words[k] == word;
                if (!seen)
                    words[nwords++] = word;
            }
        }
        for (unsigned int b = 0; b < KIT_SHARED_BANKS; b++) {
            unsigned int in_bank = 0;
            for (unsigned int k = 0; k < nwords; k++)
                in_bank += words[k] % KIT_SHARED_BANKS == b;
            worst = in_bank > worst ? in_bank : worst;
        }
        wavefronts += worst;
    }
    if (kit_lane() == leader) {
        unsigned long long *slot = kit_count_slot(kit_grid_warp()) + (store ? KIT_RAW_SH_ST_RL : KIT_RAW_SH_LD_RL);
        atomicAdd(&slot[0], kit_pack(1, __popc(active)));
        atomicAdd(&slot[1], (unsigned long long)wavefronts);
    }
}

static __device__ __forceinline__ void kit_count_shared(const void *address, unsigned int bytes, int store)
{
    kit_count_shared_of(__activemask(), address, bytes, store);
}

/* Records the index of a read of the recorded array, per thread: the last,
 * the lowest and (complemented, so that both start from all ones) the
 * highest. Each thread has its own three words: no atomics. */
static __device__ __forceinline__ void kit_record_read(const void *address, unsigned int bytes)
{
    const char *base = (const char *)kit_count_cfg.record_base;
    unsigned long long t;

    if (!base || (const char *)address < base)
        return;
    t = ((const char *)address - base) / bytes;
    if (t >= kit_count_cfg.record_elems)
        return;
    unsigned long long g = kit_grid_thread(), cap = kit_count_cfg.record_cap;
    if (g < cap) {
        unsigned int *r = kit_count_cfg.record, x = (unsigned int)t;
        r[g] = x;
        if (x < r[cap + g])
            r[cap + g] = x;
        if (~x < r[2 * cap + g])
            r[2 * cap + g] = ~x;
    }
}

/* ---- the counting types (C++: the student's file never sees them by name) - */

template <typename T> struct kit_plain { typedef T type; };
template <typename T> struct kit_plain<const T> { typedef T type; };

/* One element of global memory, reached through a counting pointer. */
template <typename T> struct kit_counted_ref {
    typedef typename kit_plain<T>::type V;
    T *a;

    __device__ V load() const
    {
        kit_count_global(a, sizeof(T), 0);
        kit_record_read(a, sizeof(T));
        return *a;
    }
    __device__ operator V() const { return load(); }
    __device__ const kit_counted_ref &operator=(V v) const
    {
        kit_count_global(a, sizeof(T), 1);
        *a = v;
        return *this;
    }
    __device__ const kit_counted_ref &operator=(const kit_counted_ref &o) const { return *this = o.load(); }
    __device__ const kit_counted_ref &operator+=(V v) const { return *this = load() + v; }
    __device__ const kit_counted_ref &operator-=(V v) const { return *this = load() - v; }
    __device__ const kit_counted_ref &operator*=(V v) const { return *this = load() * v; }
    __device__ const kit_counted_ref &operator/=(V v) const { return *this = load() / v; }
};

/* A pointer into global memory whose every access is counted. */
template <typename T> struct kit_counted_ptr {
    T *p;

    kit_counted_ptr() = default;
    __host__ __device__ kit_counted_ptr(T *q) : p(q) {}
    __device__ kit_counted_ref<T> operator[](long long i) const { return kit_counted_ref<T>{p + i}; }
    __device__ kit_counted_ref<T> operator*() const { return kit_counted_ref<T>{p}; }
    __device__ kit_counted_ptr operator+(long long i) const { return kit_counted_ptr(p + i); }
    __device__ kit_counted_ptr operator-(long long i) const { return kit_counted_ptr(p - i); }
};

/* An element of a __shared__ array whose every access is counted. It has
 * no constructor, so it may be declared __shared__ like a float. */
template <typename T> struct kit_shared {
    T v;

    __device__ T load() const
    {
        kit_count_shared(&v, sizeof(T), 0);
        return v;
    }
    __device__ operator T() const { return load(); }
    __device__ kit_shared &operator=(T x)
    {
        kit_count_shared(&v, sizeof(T), 1);
        v = x;
        return *this;
    }
    __device__ kit_shared &operator=(const kit_shared &o) { return *this = o.load(); }
    __device__ kit_shared &operator+=(T x) { return *this = load() + x; }
    __device__ kit_shared &operator-=(T x) { return *this = load() - x; }
    __device__ kit_shared &operator*=(T x) { return *this = load() * x; }
};

/* ---- host side --------------------------------------------------------- */

/* start = ~0, so that the first access's atomicMin sets it; the rest 0. */
static __global__ void kit_trace_init_kernel(kit_warp_record *r, unsigned long long n)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        r[i].start = ~0ull;
        r[i].end = 0;
        r[i].smid = 0;
        r[i].used = 0;
    }
}

typedef struct {
    unsigned long long c[KIT_NCOUNTS];
} kit_counts;

/* Per request, or 0 when there were none. */
static inline double kit_per(const kit_counts *k, int what, int per)
{
    return k->c[per] ? (double)k->c[what] / (double)k->c[per] : 0.0;
}

/* The device buffers of a counting launch: counters, and optionally the
 * per-thread record of one array's reads and the per-warp trace. */
typedef struct {
    kit_count_config cfg; /* what the counting builds are given */
    unsigned int *record_host; /* KIT_RECORD_WORDS * record_cap: kit_record_* */
    kit_warp_record *trace_host;
} kit_counter;

/* A thread's record, read on the host: its last index read, its lowest and
 * its highest (UINT_MAX, UINT_MAX and 0 where it read nothing). */
#define KIT_RECORD_WORDS 3
static inline unsigned int kit_record_last(const kit_counter *k, unsigned long long i) { return k->record_host[i]; }
static inline unsigned int kit_record_lowest(const kit_counter *k, unsigned long long i)
{
    return k->record_host[k->cfg.record_cap + i];
}
static inline unsigned int kit_record_highest(const kit_counter *k, unsigned long long i)
{
    return ~k->record_host[2 * k->cfg.record_cap + i];
}

static inline void kit_counter_create(kit_counter *k, unsigned long long record_cap,
                                      unsigned long long trace_cap)
{
    memset(k, 0, sizeof *k);
    KIT_CHECK(cudaMalloc((void **)&k->cfg.counts,
                         KIT_COUNT_SLOTS * KIT_RAW_WORDS * sizeof(unsigned long long)));
    if (record_cap) {
        KIT_CHECK(cudaMalloc((void **)&k->cfg.record, KIT_RECORD_WORDS * record_cap * sizeof(unsigned int)));
        k->record_host = (unsigned int *)malloc(KIT_RECORD_WORDS * record_cap * sizeof(unsigned int));
        if (!k->record_host)
            kit_die(KIT_EXIT_FAIL, "out of host memory");
        k->cfg.record_cap = record_cap;
    }
    if (trace_cap) {
        KIT_CHECK(cudaMalloc((void **)&k->cfg.trace, trace_cap * sizeof(kit_warp_record)));
        k->trace_host = (kit_warp_record *)malloc(trace_cap * sizeof(kit_warp_record));
        if (!k->trace_host)
            kit_die(KIT_EXIT_FAIL, "out of host memory");
        k->cfg.trace_cap = trace_cap;
    }
}

static inline void kit_counter_destroy(kit_counter *k)
{
    KIT_CHECK(cudaFree(k->cfg.counts));
    if (k->cfg.record)
        KIT_CHECK(cudaFree(k->cfg.record));
    if (k->cfg.trace)
        KIT_CHECK(cudaFree(k->cfg.trace));
    free(k->record_host);
    free(k->trace_host);
}

/*
 * Zeroes the counters (and the record and trace) before a counting launch;
 * reads of `record_base` (n elements) will be recorded, NULL for none.
 */
static inline void kit_counter_reset(kit_counter *k, const void *record_base, unsigned long long n)
{
    k->cfg.record_base = record_base;
    k->cfg.record_elems = record_base ? n : 0;
    KIT_CHECK(cudaMemset(k->cfg.counts, 0, KIT_COUNT_SLOTS * KIT_RAW_WORDS * sizeof(unsigned long long)));
    if (k->cfg.record && record_base)
        KIT_CHECK(cudaMemset(k->cfg.record, 0xff, KIT_RECORD_WORDS * k->cfg.record_cap * sizeof(unsigned int)));
    if (k->cfg.trace) {
        kit_trace_init_kernel<<<256, 256>>>(k->cfg.trace, k->cfg.trace_cap);
        KIT_CHECK_LAUNCH();
    }
}

/*
 * The configuration of a trace-only launch: the counting build records
 * each warp's SM and times, and counts nothing, so that the counting work
 * stretches the warps' time as little as it can. Hand it to
 * configure_counting after kit_counter_reset; kit_counter_read then reads
 * the trace (and counts of zero).
 */
static inline kit_count_config kit_counter_trace_only(const kit_counter *k)
{
    kit_count_config c = k->cfg;
    c.counts = NULL;
    c.record_base = NULL;
    return c;
}

/* Waits for the counting launch and sums the slots. */
static inline kit_counts kit_counter_read(kit_counter *k)
{
    static unsigned long long slots[KIT_COUNT_SLOTS * KIT_RAW_WORDS];
    kit_counts r;

    KIT_CHECK(cudaDeviceSynchronize());
    KIT_CHECK(cudaMemcpy(slots, k->cfg.counts, sizeof slots, cudaMemcpyDeviceToHost));
    memset(&r, 0, sizeof r);
    for (int s = 0; s < KIT_COUNT_SLOTS; s++) {
        const unsigned long long *w = slots + (size_t)s * KIT_RAW_WORDS;
#define KIT_LO(x) ((x) & 0xffffffffull)
#define KIT_HI(x) ((x) >> 32)
        r.c[KIT_LD_REQUESTS] += KIT_LO(w[KIT_RAW_LD_RL]);
        r.c[KIT_LD_LANES] += KIT_HI(w[KIT_RAW_LD_RL]);
        r.c[KIT_LD_SEGMENTS] += KIT_LO(w[KIT_RAW_LD_SS]);
        r.c[KIT_LD_SECTORS] += KIT_HI(w[KIT_RAW_LD_SS]);
        r.c[KIT_LD_BYTES] += w[KIT_RAW_LD_BYTES];
        r.c[KIT_ST_REQUESTS] += KIT_LO(w[KIT_RAW_ST_RL]);
        r.c[KIT_ST_LANES] += KIT_HI(w[KIT_RAW_ST_RL]);
        r.c[KIT_ST_SEGMENTS] += KIT_LO(w[KIT_RAW_ST_SS]);
        r.c[KIT_ST_SECTORS] += KIT_HI(w[KIT_RAW_ST_SS]);
        r.c[KIT_ST_BYTES] += w[KIT_RAW_ST_BYTES];
        r.c[KIT_SH_LD_REQUESTS] += KIT_LO(w[KIT_RAW_SH_LD_RL]);
        r.c[KIT_SH_LD_LANES] += KIT_HI(w[KIT_RAW_SH_LD_RL]);
        r.c[KIT_SH_LD_WAVEFRONTS] += w[KIT_RAW_SH_LD_WAVEFRONTS];
        r.c[KIT_SH_ST_REQUESTS] += KIT_LO(w[KIT_RAW_SH_ST_RL]);
        r.c[KIT_SH_ST_LANES] += KIT_HI(w[KIT_RAW_SH_ST_RL]);
        r.c[KIT_SH_ST_WAVEFRONTS] += w[KIT_RAW_SH_ST_WAVEFRONTS];
#undef KIT_LO
#undef KIT_HI
    }
    if (k->cfg.record && k->cfg.record_base)
        KIT_CHECK(cudaMemcpy(k->record_host, k->cfg.record,
                             KIT_RECORD_WORDS * k->cfg.record_cap * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    if (k->cfg.trace)
        KIT_CHECK(cudaMemcpy(k->trace_host, k->cfg.trace, k->cfg.trace_cap * sizeof(kit_warp_record),
                             cudaMemcpyDeviceToHost));
    return r;
}

/*
 * Expected distinct units among 32 lanes that each pick one of `units`
 * units uniformly at random: units * (1 - (1 - 1/units)^32).
 */
static inline double kit_expected_distinct(double units)
{
    return units <= 1.0 ? 1.0 : units * (1.0 - pow(1.0 - 1.0 / units, 32.0));
}

#endif /* KIT_COUNTED_H */
