/*
 * contract.h (Lab 01) - what labs/01-coalescing/coalescing.cu defines for its
 * harness (harness.cu): X(return type, name, (parameters)).
 */
#ifndef KIT_LAB_01_H
#define KIT_LAB_01_H

#define KIT_STUDENT_FUNCTIONS(X)                                                                   \
    X(void, launch_full_coalesced_access,                                                          \
      (const float *A, const float *B, float *C, unsigned int n, int iterations))                   \
    X(void, launch_non_coalesced_access,                                                           \
      (const float *A, const float *B, float *C, unsigned int n, int iterations, unsigned int np,   \
       unsigned long long seed))                                                                   \
    X(void, launch_row_sums, (const float *M, float *sums, unsigned int n))                       \
    X(void, launch_column_sums, (const float *M, float *sums, unsigned int n))                    \
    X(void, launch_row_sums_coalesced, (const float *M, float *sums, unsigned int n))                  \
    X(float, time_full_coalesced_ms,                                                               \
      (const float *A, const float *B, float *C, unsigned int n, int iterations, int reps))

#endif /* KIT_LAB_01_H */
