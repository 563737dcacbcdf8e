/*
 * judge.cu - the judge's side of a lab's contract (KIT_LAB_H): built with
 * the lab's harness (compiled with KIT_JUDGE=1) into the program that
 * grades the lab, common/lib/kit_judge.h. It stands where the student's
 * two builds stand in the lab's own program:
 *
 *   kit_student_timed, kit_student_counted   tables of stubs: each sends
 *       its call to the worker (table 0 or 1, the function's number, the
 *       arguments) and returns when the worker and the GPU are done;
 *   kit_kernels_timed, kit_kernels_counted   handles of the student's
 *       kernels that the harness launches itself (KIT_STUDENT_KERNELS):
 *       kit_judge.h's CUDA calls send their launches to the worker, and
 *       read their attributes from the judge's own copy of the module.
 *
 * The Makefile compiles it as
 *   nvcc -DKIT_JUDGE=1 -DKIT_LAB_H='"common/lab/01-coalescing/contract.h"' -DKIT_LAB_NAME='"01-coalescing"' ...
 */
#include <curand_kernel.h>

#include "kit_check.h"
#include "kit_counted.h"
#include KIT_LAB_H
#include "kit_student.h"

#if !defined(KIT_JUDGE) || !KIT_JUDGE
#error "judge.cu is built with KIT_JUDGE=1"
#endif

#ifndef KIT_REMOTE_FUNCTIONS
/* (Where the kit has a side in the student's process, KIT_REMOTE_FUNCTIONS
 * below, the harness calls only that: no stubs of the student's functions.) */

/* The counters' settings: their device pointers as buffers. */
static inline void kit_judge_put_struct(kit_writer *w, const kit_count_config *c)
{
    kit_wire_ptr p[4] = {kit_judge_wire(c->counts), kit_judge_wire(c->record_base), kit_judge_wire(c->record),
                         kit_judge_wire(c->trace)};
    kit_put_bytes(w, p, sizeof p);
    kit_put_bytes(w, &c->record_elems, sizeof c->record_elems);
    kit_put_bytes(w, &c->record_cap, sizeof c->record_cap);
    kit_put_bytes(w, &c->trace_cap, sizeof c->trace_cap);
}

/* The functions' names, for messages. */
#define KIT_FN_NAME(ret, name, params) #name,
static const char *const kit_fn_names[] = {"configure_counting", KIT_STUDENT_FUNCTIONS(KIT_FN_NAME)};

/* One stub per table and function, of the function's own type. */
template <int Table, int Fn, typename Sig> struct kit_stub;
template <int Table, int Fn, typename R, typename... A> struct kit_stub<Table, Fn, R (*)(A...)> {
    static R call(A... a) { return kit_judge_call<R, A...>(Table, Fn, kit_fn_names[Fn], a...); }
};

#define KIT_STUB_TIMED(ret, name, params) &kit_stub<0, KIT_FN_##name, ret(*) params>::call,
#define KIT_STUB_COUNTED(ret, name, params) &kit_stub<1, KIT_FN_##name, ret(*) params>::call,
extern "C" const kit_student_api kit_student_timed = {
    &kit_stub<0, KIT_FN_configure_counting, void (*)(const kit_count_config *)>::call,
    KIT_STUDENT_FUNCTIONS(KIT_STUB_TIMED)};
extern "C" const kit_student_api kit_student_counted = {
    &kit_stub<1, KIT_FN_configure_counting, void (*)(const kit_count_config *)>::call,
    KIT_STUDENT_FUNCTIONS(KIT_STUB_COUNTED)};
#endif

#ifdef KIT_REMOTE_FUNCTIONS
/* The kit's side in the worker (kit_student.h): one stub per function. */
#define KIT_RFN_NAME(ret, name, params) #name,
static const char *const kit_remote_names[] = {KIT_REMOTE_FUNCTIONS(KIT_RFN_NAME)};
template <int Fn, typename Sig> struct kit_remote_stub;
template <int Fn, typename R, typename... A> struct kit_remote_stub<Fn, R (*)(A...)> {
    static R call(A... a) { return kit_judge_call<R, A...>(KIT_REMOTE_TABLE, Fn, kit_remote_names[Fn], a...); }
};
#define KIT_RSTUB(ret, name, params) &kit_remote_stub<KIT_RFN_##name, ret(*) params>::call,
extern "C" const kit_remote_api kit_remote = {KIT_REMOTE_FUNCTIONS(KIT_RSTUB)};
#endif

#ifdef KIT_STUDENT_KERNELS

/* args[i] points at the i-th argument, as cudaLaunchKernel takes them. */
template <typename... A> static void kit_put_kernel_args(void (*)(A...), kit_writer *w, void **args)
{
    int i = 0;
    (kit_judge_put_arg(w, *(A *)args[i++]), ...);
    (void)i;
}

#define KIT_PUT(name, params)                                                                      \
    static void kit_put_##name(kit_writer *w, void **args) { kit_put_kernel_args((kit_kernel_sigs::name)0, w, args); }
KIT_STUDENT_KERNELS(KIT_PUT)

#define KIT_REMOTE_TIMED(name, params) {0, KIT_KERNEL_##name, #name, kit_put_##name, NULL},
#define KIT_REMOTE_COUNTED(name, params) {1, KIT_KERNEL_##name, #name, kit_put_##name, NULL},
kit_remote_kernel kit_remote_kernels[] = {KIT_STUDENT_KERNELS(KIT_REMOTE_TIMED) KIT_STUDENT_KERNELS(KIT_REMOTE_COUNTED)};
const int kit_remote_kernel_count = 2 * KIT_KERNEL_COUNT;

#define KIT_HANDLE_TIMED(name, params) (const void *)&kit_remote_kernels[KIT_KERNEL_##name],
#define KIT_HANDLE_COUNTED(name, params) (const void *)&kit_remote_kernels[KIT_KERNEL_COUNT + KIT_KERNEL_##name],
extern "C" const void *const kit_kernels_timed[] = {KIT_STUDENT_KERNELS(KIT_HANDLE_TIMED)};
extern "C" const void *const kit_kernels_counted[] = {KIT_STUDENT_KERNELS(KIT_HANDLE_COUNTED)};
#else
kit_remote_kernel kit_remote_kernels[1];
const int kit_remote_kernel_count = 0;
#endif
