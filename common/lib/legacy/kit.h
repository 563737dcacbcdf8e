/*
 * kit.h - everything a lab includes. The shared code of the kit, in C-style
 * CUDA (nvcc compiles it as C++; nothing here needs more than C and CUDA).
 *
 *   kit_check.h     exit codes, fatal messages, KIT_CHECK / KIT_CHECK_LAUNCH
 *   kit_args.h      the command-line parser (--help, --size, --reps, ...)
 *   kit_device.h    opening the GPU, its limits, default problem sizes
 *   kit_timing.h    CUDA-event timers, warm-up, median of repetitions
 *   kit_rng.h       cuRAND per-thread and per-warp streams, the NP trick
 *   kit_memcount.h  segments and sectors per request, counted in-kernel
 *   kit_report.h    tables, key: value lines, the result line
 *   kit_vecadd.h    the course's C = A[x] + B[x] experiment: inputs, probe, measure
 *   kit_branchcount.h  divergent branches and active lanes, counted in-kernel
 */
#ifndef KIT_H
#define KIT_H

#include "kit_check.h"
#include "kit_args.h"
#include "kit_device.h"
#include "kit_timing.h"
#include "kit_rng.h"
#include "kit_memcount.h"
#include "kit_report.h"
#include "kit_vecadd.h"
#include "kit_branchcount.h"

#endif /* KIT_H */
