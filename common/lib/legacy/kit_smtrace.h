/*
 * kit_smtrace.h - achieved occupancy and SM efficiency without a profiler.
 *
 * In an instrumented launch, lane 0 of every warp records the SM it ran on
 * (%smid) and the time the warp started and finished (%globaltimer, in
 * ns). Per warp, not per block: warps of one block that finish early no
 * longer count as active, which is one reason achieved occupancy trails
 * the theoretical one.
 * From these records the host computes what nvprof called sm_efficiency
 * and achieved_occupancy:
 *
 *   SM efficiency       the time each SM had a block resident, summed over
 *                       SMs, over (SMs x the kernel's span);
 *   achieved occupancy  warps resident, weighted by time, over (the time
 *                       each SM was busy x the warps an SM can hold): the
 *                       average over active cycles, as ncu's
 *                       sm__warps_active.avg.pct_of_peak_sustained_active.
 *
 *   kit_trace_begin(trace);   // first statement of the kernel (every thread)
 *   ...
 *   kit_trace_end(trace);     // last statement (every thread of the warp)
 *
 * Blocks must be whole warps; records holds one entry per warp of the grid.
 */
#ifndef KIT_SMTRACE_H
#define KIT_SMTRACE_H

#include "kit_check.h"
#include "kit_memcount.h"

typedef struct {
    unsigned long long start, end; /* %globaltimer, ns */
    unsigned int smid;
    unsigned int warps; /* 1: the record of one warp */
} kit_block_record;

typedef struct {
    kit_block_record *records; /* device: one per warp, NULL when not tracing */
} kit_trace;

static __device__ __forceinline__ unsigned long long kit_globaltimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

static __device__ __forceinline__ unsigned int kit_smid(void)
{
    unsigned int id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

/* The warp's index in the grid, blocks in order, warps in order in a block. */
static __device__ __forceinline__ unsigned int kit_warp_index(void)
{
    unsigned int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned int threads = blockDim.x * blockDim.y * blockDim.z;
    unsigned int thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    return block * ((threads + 31) / 32) + thread / 32;
}

static __device__ __forceinline__ void kit_trace_begin(const kit_trace *t)
{
    if (t && kit_lane_id() == 0) {
        kit_block_record *r = &t->records[kit_warp_index()];
        r->start = kit_globaltimer();
        r->smid = kit_smid();
        r->warps = 1;
    }
}

static __device__ __forceinline__ void kit_trace_end(const kit_trace *t)
{
    if (!t)
        return;
    __syncwarp();
    if (kit_lane_id() == 0)
        t->records[kit_warp_index()].end = kit_globaltimer();
}

/* Host side. */
typedef struct {
    double span_ms;            /* first block's start to last block's end */
    double sm_efficiency;      /* 0..1 */
    double achieved_occupancy; /* 0..1 */
    int sms_used;
} kit_trace_stats;

static inline int kit_cmp_record(const void *x, const void *y)
{
    const kit_block_record *a = (const kit_block_record *)x, *b = (const kit_block_record *)y;
    if (a->smid != b->smid)
        return a->smid < b->smid ? -1 : 1;
    return (a->start > b->start) - (a->start < b->start);
}

/* Sorts the records (by SM, then start) and reduces them. */
static inline kit_trace_stats kit_trace_analyze(kit_block_record *r, size_t n, int sms,
                                                int max_warps_per_sm)
{
    kit_trace_stats s;
    unsigned long long first = ~0ull, last = 0;
    double busy = 0.0, warp_ns = 0.0;

    memset(&s, 0, sizeof s);
    if (n == 0)
        return s;
    qsort(r, n, sizeof *r, kit_cmp_record);
    for (size_t i = 0; i < n; i++) {
        first = r[i].start < first ? r[i].start : first;
        last = r[i].end > last ? r[i].end : last;
        warp_ns += (double)r[i].warps * (double)(r[i].end - r[i].start);
    }
    /* Busy time of each SM: the union of its blocks' intervals. */
    for (size_t i = 0; i < n;) {
        unsigned int sm = r[i].smid;
        unsigned long long lo = r[i].start, hi = r[i].end;
        s.sms_used++;
        for (i++; i < n && r[i].smid == sm; i++) {
            if (r[i].start > hi) {
                busy += (double)(hi - lo);
                lo = r[i].start;
            }
            if (r[i].end > hi)
                hi = r[i].end;
        }
        busy += (double)(hi - lo);
    }
    s.span_ms = (double)(last - first) / 1e6;
    s.sm_efficiency = last > first ? busy / ((double)sms * (double)(last - first)) : 0.0;
    s.achieved_occupancy = busy > 0 ? warp_ns / (busy * max_warps_per_sm) : 0.0;
    return s;
}

#endif /* KIT_SMTRACE_H */
