/*
 * kit_branchcount.h - measuring warp divergence inside a kernel, what the
 * course read from nvprof as branch and warp execution efficiency.
 *
 *   at each branch:   if (kit_branch(&t, probe, cond)) { kit_branch_body(&t, probe); ... }
 *
 * kit_branch records whether the lanes that reach the branch disagree on
 * it (a ballot that is neither empty nor all of them: a divergent branch);
 * kit_branch_body records how many lanes execute the body (the active
 * mask). Efficiency is active lanes over 32 per executed body.
 *
 * As with kit_memcount.h, a NULL probe compiles to nothing: instrument a
 * separate launch and time the clean one. Each lane keeps its own counts;
 * kit_branch_end sums them over the warp, so every lane of the warp must
 * reach it (keep out-of-range threads idle instead of returning early) and
 * blocks must be whole warps.
 */
#ifndef KIT_BRANCHCOUNT_H
#define KIT_BRANCHCOUNT_H

#include "kit_check.h"
#include "kit_memcount.h"

enum { KIT_BR_BODIES, KIT_BR_LANES, KIT_BR_BRANCHES, KIT_BR_DIVERGENT, KIT_BR_NCOUNTS };

typedef struct {
    unsigned long long *counts; /* device: KIT_BR_NCOUNTS totals over the grid */
} kit_branch_probe;

typedef struct {
    unsigned int c[KIT_BR_NCOUNTS]; /* this lane's share */
} kit_branch_tally;

static __device__ __forceinline__ int kit_is_leader(unsigned int active)
{
    return (int)kit_lane_id() == __ffs(active) - 1;
}

static __device__ __forceinline__ void kit_branch_begin(kit_branch_tally *t,
                                                        const kit_branch_probe *probe)
{
    if (probe)
        for (int i = 0; i < KIT_BR_NCOUNTS; i++)
            t->c[i] = 0;
}

/* Use as the condition of an if: returns cond, and counts the branch. */
static __device__ __forceinline__ int kit_branch(kit_branch_tally *t, const kit_branch_probe *probe,
                                                 int cond)
{
    if (probe) {
        unsigned int active = __activemask();
        unsigned int taken = __ballot_sync(active, cond);
        if (kit_is_leader(active)) {
            t->c[KIT_BR_BRANCHES] += 1;
            t->c[KIT_BR_DIVERGENT] += (taken != 0 && taken != active);
        }
    }
    return cond;
}

/* First statement of a branch body: counts the lanes that execute it. */
static __device__ __forceinline__ void kit_branch_body(kit_branch_tally *t,
                                                       const kit_branch_probe *probe)
{
    if (probe) {
        unsigned int active = __activemask();
        if (kit_is_leader(active)) {
            t->c[KIT_BR_BODIES] += 1;
            t->c[KIT_BR_LANES] += __popc(active);
        }
    }
}

/* Every lane of the warp: sums the warp's counts into the grid's. */
static __device__ __forceinline__ void kit_branch_end(const kit_branch_tally *t,
                                                      const kit_branch_probe *probe)
{
    if (!probe)
        return;
    for (int i = 0; i < KIT_BR_NCOUNTS; i++) {
        unsigned int v = t->c[i];
        for (int offset = 16; offset > 0; offset /= 2)
            v += __shfl_xor_sync(0xffffffffu, v, offset);
        if (kit_lane_id() == 0 && v)
            atomicAdd(&probe->counts[i], (unsigned long long)v);
    }
}

/* Host side. */
typedef struct {
    unsigned long long bodies, lanes, branches, divergent;
    double efficiency;         /* active lanes / (32 * bodies) */
    double divergent_fraction; /* divergent / branches */
} kit_branch_stats;

static inline kit_branch_probe kit_branch_probe_create(void)
{
    kit_branch_probe p;
    KIT_CHECK(cudaMalloc((void **)&p.counts, KIT_BR_NCOUNTS * sizeof(unsigned long long)));
    return p;
}

static inline void kit_branch_probe_reset(kit_branch_probe p)
{
    KIT_CHECK(cudaMemset(p.counts, 0, KIT_BR_NCOUNTS * sizeof(unsigned long long)));
}

static inline kit_branch_stats kit_branch_probe_read(kit_branch_probe p)
{
    unsigned long long c[KIT_BR_NCOUNTS];
    kit_branch_stats s;
    KIT_CHECK(cudaMemcpy(c, p.counts, sizeof c, cudaMemcpyDeviceToHost));
    s.bodies = c[KIT_BR_BODIES];
    s.lanes = c[KIT_BR_LANES];
    s.branches = c[KIT_BR_BRANCHES];
    s.divergent = c[KIT_BR_DIVERGENT];
    s.efficiency = s.bodies ? (double)s.lanes / (32.0 * (double)s.bodies) : 0.0;
    s.divergent_fraction = s.branches ? (double)s.divergent / (double)s.branches : 0.0;
    return s;
}

static inline void kit_branch_probe_destroy(kit_branch_probe p) { KIT_CHECK(cudaFree(p.counts)); }

#endif /* KIT_BRANCHCOUNT_H */
