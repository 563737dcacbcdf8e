/*
 * kit_trace.h - achieved occupancy and SM efficiency without a profiler,
 * from the per-warp trace of a counting launch (kit_counted.h).
 *
 * In a counting launch with a trace, every warp records the SM it ran on
 * (%smid) and the times (%globaltimer, ns) of its first and last global
 * memory access: per warp, not per block, so that warps of a block that
 * finish early no longer count as active, which is one reason achieved
 * occupancy trails the theoretical one. A warp that never accessed memory
 * leaves no record and is not counted. From the records the host computes
 * what nvprof called sm_efficiency and achieved_occupancy:
 *
 *   SM efficiency       the time each SM had a warp active, summed over the
 *                       SMs, over (SMs x the kernel's span);
 *   achieved occupancy  warps active, weighted by time, over (the time each
 *                       SM was busy x the warps an SM can hold): the average
 *                       over active cycles, as ncu's
 *                       sm__warps_active.avg.pct_of_peak_sustained_active;
 *   peak warps per SM   the most warps active at once on one SM, which
 *                       cannot exceed what the SM can hold.
 *
 * A warp's span here runs from its first to its last access: the time
 * before its first load (index arithmetic) and after its last store is
 * left out. Where %globaltimer ticks coarsely (1 us on some GPUs and
 * drivers), warps shorter than a tick are measured poorly.
 */
#ifndef KIT_TRACE_H
#define KIT_TRACE_H

#include <algorithm>
#include <thread>

#include "kit_counted.h"
#include "kit_host.h"

typedef struct {
    double span_ms;            /* the first warp's first access to the last warp's last */
    double sm_efficiency;      /* 0..1 */
    double achieved_occupancy; /* 0..1 */
    int sms_used;              /* SMs that ran at least one traced warp */
    int peak_warps_per_sm;     /* the most warps active at once on one SM */
    unsigned long long warps;  /* warps traced */
} kit_trace_stats;

typedef struct {
    unsigned long long start, end;
} kit_trace_span;

/* One SM's warps, sorted by start: its busy time (the union of their spans)
 * and the most of them active at once. */
static inline void kit_trace_sm(kit_trace_span *s, unsigned long long *ends, size_t n, double *busy, int *peak)
{
    unsigned long long lo, hi;
    size_t e = 0;

    *busy = 0.0;
    *peak = 0;
    if (n == 0)
        return;
    std::sort(s, s + n, [](const kit_trace_span &a, const kit_trace_span &b) { return a.start < b.start; });
    for (size_t i = 0; i < n; i++)
        ends[i] = s[i].end;
    std::sort(ends, ends + n);
    lo = s[0].start;
    hi = s[0].end;
    for (size_t i = 0; i < n; i++) {
        if (s[i].start > hi) {
            *busy += (double)(hi - lo);
            lo = s[i].start;
        }
        hi = s[i].end > hi ? s[i].end : hi;
        /* Active when warp i starts: the warps started so far, less those
         * ended by then (spans are half-open, so that a warp that ends in
         * the tick another starts is not counted with it). */
        while (e < n && ends[e] <= s[i].start)
            e++;
        if ((long long)(i + 1) - (long long)e > *peak)
            *peak = (int)(i + 1 - e);
    }
    *busy += (double)(hi - lo);
}

/*
 * Reduces the records of one launch (r[0..n), the grid's warps in order) on
 * a GPU of `sms` SMs that hold max_warps_per_sm warps each. The SMs' work is
 * spread over the host's cores.
 */
static inline kit_trace_stats kit_trace_analyze(const kit_warp_record *r, size_t n, int sms, int max_warps_per_sm)
{
    kit_trace_stats st;
    unsigned long long first = ~0ull, last = 0;
    unsigned int top = 0;
    size_t used = 0, *offset;
    kit_trace_span *spans;
    unsigned long long *ends;
    double warp_ns = 0.0, busy = 0.0, *sm_busy;
    int *sm_peak;
    unsigned int threads = std::thread::hardware_concurrency();
    std::thread pool[16];

    memset(&st, 0, sizeof st);
    for (size_t i = 0; i < n; i++)
        if (r[i].used && r[i].end >= r[i].start) {
            used++;
            top = r[i].smid > top ? r[i].smid : top;
            first = r[i].start < first ? r[i].start : first;
            last = r[i].end > last ? r[i].end : last;
            warp_ns += (double)(r[i].end - r[i].start);
        }
    if (used == 0)
        return st;

    /* The spans, grouped by SM (a counting sort on %smid, which may have gaps). */
    offset = (size_t *)calloc((size_t)top + 2, sizeof *offset);
    spans = (kit_trace_span *)kit_host_alloc(used * sizeof *spans);
    ends = (unsigned long long *)kit_host_alloc(used * sizeof *ends);
    sm_busy = (double *)calloc((size_t)top + 1, sizeof *sm_busy);
    sm_peak = (int *)calloc((size_t)top + 1, sizeof *sm_peak);
    if (!offset || !sm_busy || !sm_peak)
        kit_die(KIT_EXIT_FAIL, "out of host memory");
    for (size_t i = 0; i < n; i++)
        if (r[i].used && r[i].end >= r[i].start)
            offset[r[i].smid + 1]++;
    for (unsigned int s = 0; s <= top; s++)
        offset[s + 1] += offset[s];
    {
        size_t *fill = (size_t *)kit_host_alloc(((size_t)top + 1) * sizeof *fill);
        memcpy(fill, offset, ((size_t)top + 1) * sizeof *fill);
        for (size_t i = 0; i < n; i++)
            if (r[i].used && r[i].end >= r[i].start) {
                kit_trace_span *p = &spans[fill[r[i].smid]++];
                p->start = r[i].start;
                p->end = r[i].end;
            }
        free(fill);
    }

    threads = threads < 1 ? 1 : threads > 16 ? 16 : threads;
    if (used < (1u << 16))
        threads = 1;
    for (unsigned int t = 0; t < threads; t++)
        pool[t] = std::thread([=] {
            for (unsigned int s = t; s <= top; s += threads)
                kit_trace_sm(spans + offset[s], ends + offset[s], offset[s + 1] - offset[s], &sm_busy[s], &sm_peak[s]);
        });
    for (unsigned int t = 0; t < threads; t++)
        pool[t].join();

    for (unsigned int s = 0; s <= top; s++) {
        busy += sm_busy[s];
        st.sms_used += offset[s + 1] > offset[s];
        st.peak_warps_per_sm = sm_peak[s] > st.peak_warps_per_sm ? sm_peak[s] : st.peak_warps_per_sm;
    }
    st.warps = used;
    st.span_ms = (double)(last - first) / 1e6;
    st.sm_efficiency = last > first ? busy / ((double)sms * (double)(last - first)) : 0.0;
    st.achieved_occupancy = busy > 0 ? warp_ns / (busy * max_warps_per_sm) : 0.0;
    free(offset);
    free(spans);
    free(ends);
    free(sm_busy);
    free(sm_peak);
    return st;
}

#endif /* KIT_TRACE_H */
