/*
 * 02-grouping.h - what labs/02-grouping/grouping.cu defines for its harness
 * (02-grouping.cu), and the two structs they share.
 */
#ifndef KIT_LAB_02_H
#define KIT_LAB_02_H

/* The division constants of one G, computed by the harness. */
struct grouping {
    unsigned int group_elems;     /* G segments of 32 floats */
    unsigned int group_count;     /* whole groups in the array */
    unsigned int np_group;        /* ceil(2^32 / group_elems) */
    unsigned long long np_groups; /* ceil(2^32 / group_count), 64-bit */
};

/* What the prediction of TODO(3) may use. */
struct l1_facts {
    unsigned int l1_bytes;          /* an SM's L1 data cache (with its shared memory) */
    unsigned int max_threads_per_sm;
    unsigned int max_blocks_per_sm;
    unsigned int threads_per_block; /* of the launch: the course's 1024 */
    unsigned int segment_bytes;     /* 128 */
    unsigned int arrays;            /* arrays each warp reads in its group: A and B */
};

#define KIT_STUDENT_FUNCTIONS(X)                                                                   \
    X(void, launch_semi_coalesced_access,                                                          \
      (const float *A, const float *B, float *C, unsigned int n, int iterations, struct grouping g, \
       unsigned long long seed))                                                                   \
    X(unsigned int, largest_cached_group, (struct l1_facts f))

#endif /* KIT_LAB_02_H */
