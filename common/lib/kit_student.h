/*
 * kit_student.h - how a lab's harness reaches the functions of the
 * student's file.
 *
 * A lab's contract (common/lab/NN-name/contract.h) lists, as
 * KIT_STUDENT_FUNCTIONS(X), every function the student's file must define
 * and the harness calls: X(return type, name, (parameters)). From that list
 * this header makes the table type the harness calls through. The student's
 * file is compiled once (common/harness/student.cu), and its two objects
 * each hand the harness a table:
 *
 *   kit_student_timed     the file as written: what the harness times;
 *   kit_student_counted   the same compilation with its device code
 *                         instrumented (common/tools/count-object.sh): what
 *                         the harness counts requests, segments, sectors,
 *                         lanes and bank conflicts with (for Labs 05 and
 *                         08, the traced build of their host calls).
 *
 * Include the lab's contract first.
 */
#ifndef KIT_STUDENT_H
#define KIT_STUDENT_H

#include "kit_counted.h"

#ifndef KIT_STUDENT_FUNCTIONS
#error "include the lab's contract (common/lab/NN-name/contract.h) before kit_student.h"
#endif

#define KIT_STUDENT_FIELD(ret, name, params) ret(*name) params;

typedef struct {
    /* Hands the counting build the counters of its next launches. */
    void (*configure_counting)(const kit_count_config *c);
    KIT_STUDENT_FUNCTIONS(KIT_STUDENT_FIELD)
} kit_student_api;

extern "C" const kit_student_api kit_student_timed;
extern "C" const kit_student_api kit_student_counted;

/* The functions by number, in the table's order (the judge and its worker
 * name them so: kit_proto.h). */
#define KIT_FN_INDEX(ret, name, params) KIT_FN_##name,
enum { KIT_FN_configure_counting, KIT_STUDENT_FUNCTIONS(KIT_FN_INDEX) KIT_FN_COUNT };
#undef KIT_FN_INDEX

/*
 * The kit's side in the student's process. Where the student's code is
 * host code that drives the GPU itself (Lab 05's streams), what the harness
 * must ask of it (make the streams, run the pipeline, trace it) is kit code
 * that runs beside the student's functions and calls them through the
 * tables above. A contract lists it as KIT_REMOTE_FUNCTIONS(X), the same
 * way, and names the header that defines it (KIT_REMOTE_H), which defines
 * the table kit_remote of those functions. The lab's program includes that
 * header and calls it directly; in grading, the worker includes it and the
 * judge's kit_remote holds stubs (common/harness/judge.cu), so that the
 * harness calls the same table either way, and the student's code runs
 * only in the worker.
 */
#ifdef KIT_REMOTE_FUNCTIONS
#define KIT_REMOTE_FIELD(ret, name, params) ret(*name) params;
typedef struct {
    KIT_REMOTE_FUNCTIONS(KIT_REMOTE_FIELD)
} kit_remote_api;
#undef KIT_REMOTE_FIELD

#define KIT_RFN_INDEX(ret, name, params) KIT_RFN_##name,
enum { KIT_REMOTE_FUNCTIONS(KIT_RFN_INDEX) KIT_RFN_COUNT };
#undef KIT_RFN_INDEX

/* The table the worker's calls of kind KIT_REMOTE_TABLE go to. */
#define KIT_REMOTE_TABLE 2
extern "C" const kit_remote_api kit_remote;
#endif

/*
 * Kernels the harness launches itself. A contract may also list, as
 * KIT_STUDENT_KERNELS(X), kernels of the student's file that the harness
 * launches with a grid, block and dynamic shared memory of its own choice
 * (and asks the occupancy API about): X(name, (parameters)), the parameters
 * written with the file's array types (in_floats, ...). Each build hands
 * the harness the kernels' addresses, in the order listed, for
 * cudaLaunchKernel, cudaFuncSetAttribute and the occupancy API:
 * kit_kernels_timed[KIT_KERNEL_name], kit_kernels_counted[KIT_KERNEL_name].
 * The arrays' pointers are passed as plain pointers: a counting array holds
 * nothing else.
 */
#ifdef KIT_STUDENT_KERNELS
#define KIT_KERNEL_INDEX(name, params) KIT_KERNEL_##name,
enum { KIT_STUDENT_KERNELS(KIT_KERNEL_INDEX) KIT_KERNEL_COUNT };
#undef KIT_KERNEL_INDEX

extern "C" const void *const kit_kernels_timed[];
extern "C" const void *const kit_kernels_counted[];

/* The kernels' types with plain pointers, as the harness passes their
 * arguments: the grader's judge and worker send them by these
 * (common/harness/judge.cu, worker.cu): kit_kernel_sigs::heavy, ... */
namespace kit_kernel_sigs {
typedef const float *in_floats;
typedef float *out_floats;
typedef const unsigned int *in_uints;
typedef unsigned int *out_uints;
#define KIT_KERNEL_SIG(name, params) typedef void(*name) params;
KIT_STUDENT_KERNELS(KIT_KERNEL_SIG)
#undef KIT_KERNEL_SIG
} /* namespace kit_kernel_sigs */
#endif

#endif /* KIT_STUDENT_H */
