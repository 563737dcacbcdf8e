/*
 * contract.h (Lab 06) - what labs/06-shared-memory/shared-memory.cu defines
 * for its harness (harness.cu): X(return type, name, (parameters)).
 * Each launch transposes the n x n matrix in (row by row) into out.
 */
#ifndef KIT_LAB_06_H
#define KIT_LAB_06_H

#define KIT_STUDENT_FUNCTIONS(X)                                                                   \
    X(void, launch_transpose_naive, (const float *in, float *out, unsigned int n))                 \
    X(void, launch_transpose_shared, (const float *in, float *out, unsigned int n))                \
    X(void, launch_transpose_padded, (const float *in, float *out, unsigned int n))                \
    X(void, launch_scale_rows,                                                                     \
      (const float *in, float *out, unsigned int rows, unsigned int cols, unsigned int pitch))

#endif /* KIT_LAB_06_H */
