/*
 * 07-latency/harness-fastmath.cu - Lab 07's compute-bound kernels (07-latency/throughput.h)
 * built a second time, with --use_fast_math, for the harness (harness.cu)
 * to time and check beside the build without it. Its one line below tells
 * the Makefile the flag:
 *
 * kit-nvcc-flags: --use_fast_math
 */
#define LAT_MATH_TABLE lat_math_fast
#include "throughput.h"

