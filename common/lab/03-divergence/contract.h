/*
 * contract.h (Lab 03) - what labs/03-divergence/divergence.cu defines for its
 * harness (harness.cu): X(return type, name, (parameters)).
 *
 * Both builds are optimised as usual. The counting build still counts each
 * store in the branch body the source puts it in, because kit_counted.h's
 * counting is inlined at each access: its __activemask() runs with the
 * lanes of that body (compiled without optimisation, the warp no longer
 * reconverges where the source says, and the counts fall apart).
 */
#ifndef KIT_LAB_03_H
#define KIT_LAB_03_H

#define KIT_STUDENT_FUNCTIONS(X)                                                                   \
    X(void, launch_warp_divergence,                                                                \
      (const float *A, const float *B, float *C, unsigned int n, int iterations))                   \
    X(void, launch_warp_no_divergence,                                                             \
      (const float *A, const float *B, float *C, unsigned int n, int iterations))                   \
    X(void, launch_math_kernel, (int which, float *c, unsigned int n))                             \
    X(void, launch_process_by_class,                                                               \
      (const float *x, const unsigned int *cls, float *y, unsigned int n, int work))                \
    X(void, launch_partition_by_class,                                                             \
      (const float *x, const unsigned int *cls, unsigned int n, unsigned int *next, float *xs,      \
       unsigned int *cs, unsigned int *from))

#endif /* KIT_LAB_03_H */
