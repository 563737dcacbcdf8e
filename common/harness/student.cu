/*
 * student.cu - builds a lab's student file (or its reference) for the lab's
 * harness. The file is compiled once, as written (KIT_COUNTED=0): in_floats
 * is const float *, out_floats float *, shared_float float, ... That one
 * compilation gives the harness two objects:
 *
 *   timed.o     the file as written: what the harness times;
 *   counted.o   the same object with its device code, the PTX of this one
 *               compilation, instrumented with the kit's counting calls
 *               (common/tools/count-object.sh, ptx-count.py): what the
 *               harness counts requests, segments, sectors, lanes and bank
 *               conflicts with. Nothing written in C++ can tell the two
 *               apart: they come from the same front end's output.
 *
 * A lab whose contract traces the student's host calls instead (Labs 05
 * and 08: which copy ran in which stream, when) has its second object
 * built from the source with KIT_COUNTED=1, where its contract routes
 * those calls through the kit's trace.
 *
 * Each build puts the file in a namespace of its own (kit_timed; the traced
 * build kit_count) and hands the harness a table of the functions its
 * contract lists (KIT_LAB_H, e.g. common/lab/01-coalescing/contract.h): the
 * counted object's is the timed one's, renamed. The table's initialiser
 * checks each function's type: a function missing from the file, or with
 * other parameters, stops the build with its name. Where the contract also
 * lists kernels the harness launches itself (KIT_STUDENT_KERNELS), each
 * build hands it their addresses too (kit_student.h), checked the same way.
 *
 * The Makefile compiles it as
 *   nvcc -DKIT_COUNTED=0|1 -DKIT_LAB_H='"common/lab/01-coalescing/contract.h"' \
 *        -DKIT_STUDENT_FILE='"./labs/01-coalescing/coalescing.cu"' ...
 * so that the compiler names the student's file and line in its messages.
 */
/* No kit code that runs before main in a student's build: its object may
 * have no initialiser but the CUDA runtime's own (common/grade/lib.sh). */
#define KIT_STUDENT_BUILD 1

#include <curand_kernel.h>
#include <math.h>
#include <stdio.h>

#include "kit_check.h"
#include "kit_counted.h"
#include KIT_LAB_H
#include "kit_student.h"

/*
 * CUDA_CHECK(call): how a student's file checks a CUDA call. On an error
 * it names the call, the student's file and line, and ends the program
 * (through the kit's kit_check: exit 2 where the machine cannot run CUDA
 * at all, 1 otherwise). After a launch: CUDA_CHECK(cudaGetLastError()).
 * The call is named as written, before any macro of the traced build.
 */
#define CUDA_CHECK(call) kit_check((call), #call, __FILE__, __LINE__)

#if KIT_COUNTED
#define KIT_NS kit_count
#define KIT_TABLE kit_student_counted
#define KIT_KERNEL_TABLE kit_kernels_counted
#else
#define KIT_NS kit_timed
#define KIT_TABLE kit_student_timed
#define KIT_KERNEL_TABLE kit_kernels_timed
#endif

template <typename A, typename B> struct kit_same { static const bool value = false; };
template <typename A> struct kit_same<A, A> { static const bool value = true; };

namespace KIT_NS {

/* The array types a student's file uses (see the lab file's header): the
 * plain types, in every build. */
typedef const float *in_floats;
typedef float *out_floats;
typedef const unsigned int *in_uints;
typedef unsigned int *out_uints;
typedef float shared_float;
typedef double shared_double;

/* What the lab's contract adds to the student's scope, if anything (its
 * part under KIT_STUDENT_SCOPE: e.g. a kernel of the kit's that the
 * student launches). */
#define KIT_STUDENT_SCOPE 1
#include KIT_LAB_H
#undef KIT_STUDENT_SCOPE

#include KIT_STUDENT_FILE

/* Each kernel the harness launches itself, with the parameters it passes. */
#ifdef KIT_STUDENT_KERNELS
#define KIT_KERNEL_SIGNATURE(name, params)                                                         \
    static_assert(kit_same<decltype(&name), void(*) params>::value,                                \
                  "the lab file's kernel " #name " must keep the kit's parameters: " #name #params);
KIT_STUDENT_KERNELS(KIT_KERNEL_SIGNATURE)
#endif

} /* namespace KIT_NS */

/* The counters of the next counting launches: this module's kit_count_cfg,
 * which the counting calls of the counted object read (its host code is
 * this object's: common/tools/count-object.sh). */
static void kit_configure_counting(const kit_count_config *c) { kit_count_configure_here(c); }

/* Each function as the harness calls it: a clear message where it is not. */
#define KIT_STUDENT_SIGNATURE(ret, name, params)                                                   \
    static_assert(kit_same<decltype(&KIT_NS::name), ret(*) params>::value,                         \
                  "the lab file's " #name " must keep the kit's parameters: " #ret " " #name #params);
KIT_STUDENT_FUNCTIONS(KIT_STUDENT_SIGNATURE)

#define KIT_STUDENT_ENTRY(ret, name, params) (ret(*) params) KIT_NS::name,
extern "C" const kit_student_api KIT_TABLE = {kit_configure_counting, KIT_STUDENT_FUNCTIONS(KIT_STUDENT_ENTRY)};

#ifdef KIT_STUDENT_KERNELS
#define KIT_KERNEL_ENTRY(name, params) (const void *)KIT_NS::name,
extern "C" const void *const KIT_KERNEL_TABLE[] = {KIT_STUDENT_KERNELS(KIT_KERNEL_ENTRY)};
#endif
