/*
 * kit_memcount.h - counting, inside a kernel, what each warp-wide memory
 * request touches: distinct 128-byte segments and distinct 32-byte sectors.
 *
 * This is what the course reads from the profiler as
 * gld_transactions_per_request (nvprof); ncu reports the sector form as
 * l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum over
 * l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum. Counting in the kernel
 * works where profiler counters are forbidden (ERR_NVGPUCTRPERM).
 *
 * Use it in a separate, instrumented launch of a kernel: a kit_probe whose
 * counts pointer is NULL compiles to nothing, so the timed launch of the
 * same kernel body stays clean.
 *
 *   kit_tally t;
 *   kit_tally_begin(&t, probe, tid < n);     // before any early return
 *   if (tid >= n) return;
 *   ... kit_tally_access(&t, probe, &A[x]);   // once per load, same control flow in the warp
 *   kit_tally_end(&t, probe);
 */
#ifndef KIT_MEMCOUNT_H
#define KIT_MEMCOUNT_H

#include <math.h>

#include "kit_check.h"

#define KIT_SEGMENT_BYTES 128
#define KIT_SECTOR_BYTES 32

enum { KIT_COUNT_REQUESTS, KIT_COUNT_SEGMENTS, KIT_COUNT_SECTORS, KIT_NCOUNTS };

/* Passed by value to an instrumented kernel. */
typedef struct {
    unsigned long long *counts; /* device: KIT_NCOUNTS totals over the grid */
} kit_probe;

/* One warp's running totals, in registers. */
typedef struct {
    unsigned int mask; /* lanes that take part */
    unsigned long long requests, segments, sectors;
} kit_tally;

static __device__ __forceinline__ unsigned int kit_lane_id(void)
{
    unsigned int lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

/* How many distinct values of key the lanes in mask hold. */
static __device__ __forceinline__ unsigned int kit_distinct(unsigned int mask,
                                                            unsigned long long key)
{
    unsigned int peers = __match_any_sync(mask, key);
    int leader = (__ffs(peers) - 1) == (int)kit_lane_id();
    return __popc(__ballot_sync(mask, leader));
}

static __device__ __forceinline__ void kit_tally_begin(kit_tally *t, const kit_probe *probe,
                                                       int active)
{
    if (!probe)
        return;
    t->mask = __ballot_sync(__activemask(), active);
    t->requests = t->segments = t->sectors = 0;
}

/* One request: every lane in the mask calls it with the address it loads. */
static __device__ __forceinline__ void kit_tally_access(kit_tally *t, const kit_probe *probe,
                                                        const void *address)
{
    unsigned long long a = (unsigned long long)(size_t)address;
    if (!probe)
        return;
    t->requests += 1;
    t->segments += kit_distinct(t->mask, a / KIT_SEGMENT_BYTES);
    t->sectors += kit_distinct(t->mask, a / KIT_SECTOR_BYTES);
}

/* The warp's lowest lane adds the warp's totals to the grid's. */
static __device__ __forceinline__ void kit_tally_end(const kit_tally *t, const kit_probe *probe)
{
    if (!probe || (int)kit_lane_id() != __ffs(t->mask) - 1)
        return;
    atomicAdd(&probe->counts[KIT_COUNT_REQUESTS], t->requests);
    atomicAdd(&probe->counts[KIT_COUNT_SEGMENTS], t->segments);
    atomicAdd(&probe->counts[KIT_COUNT_SECTORS], t->sectors);
}

/* Host side: the totals of one instrumented launch. */
typedef struct {
    unsigned long long requests, segments, sectors;
    double segments_per_request, sectors_per_request;
} kit_access_stats;

static inline kit_probe kit_probe_create(void)
{
    kit_probe p;
    KIT_CHECK(cudaMalloc((void **)&p.counts, KIT_NCOUNTS * sizeof(unsigned long long)));
    KIT_CHECK(cudaMemset(p.counts, 0, KIT_NCOUNTS * sizeof(unsigned long long)));
    return p;
}

static inline void kit_probe_reset(kit_probe p)
{
    KIT_CHECK(cudaMemset(p.counts, 0, KIT_NCOUNTS * sizeof(unsigned long long)));
}

/* Waits for the instrumented launch and reads its totals. */
static inline kit_access_stats kit_probe_read(kit_probe p)
{
    unsigned long long c[KIT_NCOUNTS];
    kit_access_stats s;
    KIT_CHECK(cudaMemcpy(c, p.counts, sizeof c, cudaMemcpyDeviceToHost));
    s.requests = c[KIT_COUNT_REQUESTS];
    s.segments = c[KIT_COUNT_SEGMENTS];
    s.sectors = c[KIT_COUNT_SECTORS];
    s.segments_per_request = s.requests ? (double)s.segments / (double)s.requests : 0.0;
    s.sectors_per_request = s.requests ? (double)s.sectors / (double)s.requests : 0.0;
    return s;
}

static inline void kit_probe_destroy(kit_probe p) { KIT_CHECK(cudaFree(p.counts)); }

/*
 * Expected distinct units among 32 lanes that each pick one of `units`
 * units uniformly at random: units * (1 - (1 - 1/units)^32). For the whole
 * array as one group this is what fully random access should count.
 */
static inline double kit_expected_distinct(double units)
{
    return units <= 1.0 ? 1.0 : units * (1.0 - pow(1.0 - 1.0 / units, 32.0));
}

#endif /* KIT_MEMCOUNT_H */
