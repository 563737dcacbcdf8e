/*
 * contract.h (Lab 07) - what labs/07-latency/latency.cu defines for its harness
 * (harness.cu), and the two structs its littles_law works with.
 */
#ifndef KIT_LAB_07_H
#define KIT_LAB_07_H

/* What the harness measured on this GPU (or what the course's notes give
 * for Fermi and Kepler), handed to littles_law. */
typedef struct {
    double l1_cycles;      /* latency of one load that hits L1, in clock cycles */
    double l2_cycles;      /* ... that hits L2 */
    double dram_cycles;    /* ... that goes to DRAM */
    double clock_ghz;      /* the clock those cycles count: cycles per ns */
    double bandwidth_gbs;  /* the memory bandwidth to sustain, GB/s */
    int sms;               /* SMs that share it */
    int warp_size;         /* threads per warp */
    int bytes_per_load;    /* bytes one thread loads at a time: 4, a float */
    int resident_warps;    /* warps per SM the ILP kernel runs with */
} gpu_facts;

/* What littles_law works out from them. */
typedef struct {
    double bytes_per_cycle;  /* the bandwidth in bytes per clock cycle */
    double bytes_in_flight;  /* Little's law: bytes on their way at every moment */
    double threads;          /* threads that keep them in flight, at one load each */
    double warps;            /* the same in warps, on the whole GPU */
    double warps_per_sm;     /* ... and per SM */
    int loads_per_thread;    /* independent loads per thread needed at resident_warps */
} in_flight;

#define KIT_STUDENT_FUNCTIONS(X) X(void, littles_law, (const gpu_facts *g, in_flight *r))

/* The kernels the harness launches itself, at the occupancies it chooses. */
#define KIT_STUDENT_KERNELS(X)                                                                     \
    X(sum_tlp, (in_floats in, out_floats partial, unsigned int n))                                \
    X(sum_ilp, (in_floats in, out_floats partial, unsigned int n, int loads))

/* sum_ilp's loads per thread: 1 to this many. */
#define LAT_MAX_LOADS 16

#endif /* KIT_LAB_07_H */
