/*
 * contract.h (Lab 02) - what labs/02-grouping/grouping.cu defines for its
 * harness (harness.cu), and the two structs they share.
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

/* What the prediction of TODO(2) may use. */
struct l1_facts {
    unsigned int l1_bytes;          /* an SM's L1 data cache (with its shared memory) */
    unsigned int max_threads_per_sm;
    unsigned int max_blocks_per_sm;
    unsigned int threads_per_block; /* of the kit's launch: the course's 1024 */
    unsigned int segment_bytes;     /* 128 */
    unsigned int arrays;            /* arrays each warp reads in its group: A and B */
};

#define KIT_STUDENT_FUNCTIONS(X) X(unsigned int, largest_cached_group, (struct l1_facts f))

/* The kernel the harness launches itself, with the course's 1024 threads per
 * block (Lab 01's TODO(3) was the launch). */
#define KIT_STUDENT_KERNELS(X)                                                                     \
    X(semi_coalesced_access, (in_floats A, in_floats B, out_floats C, unsigned int n, int iterations, \
                              struct grouping g, unsigned long long seed))

#endif /* KIT_LAB_02_H */
