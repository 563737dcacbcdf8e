/*
 * kit_check.h - exit codes, fatal messages and CUDA error checking.
 *
 * Every CUDA call in the kit goes through KIT_CHECK, every launch is
 * followed by KIT_CHECK_LAUNCH. An error that means "this machine cannot
 * run the kit" (no driver, no GPU, no code for this GPU's architecture)
 * exits with KIT_EXIT_WAIVED and says what to do (on WSL, where the driver
 * is Windows', the advice says so; host memory that WSL 2 will not pin is
 * such an error too); any other error is a bug or a broken kernel and exits
 * with KIT_EXIT_FAIL, naming the call, the file and the line.
 */
#ifndef KIT_CHECK_H
#define KIT_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

/* Where the machine is (WSL 2's driver advice); not in a student's build,
 * whose object may call nothing the lab does not allow. */
#ifndef KIT_STUDENT_BUILD
#include "kit_platform.h"
#endif

/* The in-kernel counters need __match_any_sync: Volta (7.0) or newer. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#error "the kit needs compute capability 7.0 or newer (__match_any_sync): build for sm_70 or newer, e.g. make ARCH=-arch=sm_75"
#endif

/* Exit codes shared by every program of the kit (sysexits for usage). */
enum {
    KIT_EXIT_PASS = 0,   /* ran, and every check passed                   */
    KIT_EXIT_FAIL = 1,   /* ran, and a result was wrong (or a CUDA error)  */
    KIT_EXIT_WAIVED = 2, /* cannot run here: no driver, no GPU, wrong arch */
    KIT_EXIT_USAGE = 64  /* bad command line (EX_USAGE)                    */
};

/* The program's name for messages; kit_parse_args sets it from argv[0].
 * Weak, so that every translation unit of a program shares the one name. */
__attribute__((weak)) const char *kit_program = "kit";

static inline void kit_die(int code, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", kit_program);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(code);
}

/* The list of architectures this program was compiled for, for messages. */
static inline const char *kit_built_archs(void)
{
#if defined(__CUDA_ARCH_LIST__)
/* Variadic: for several architectures the list is 750,800,900. */
#define KIT_STR2(...) #__VA_ARGS__
#define KIT_STR(...) KIT_STR2(__VA_ARGS__)
    return "compute capabilities (x10) " KIT_STR(__CUDA_ARCH_LIST__);
#else
    return "the architectures named by ARCH when it was built";
#endif
}

/*
 * For errors that say the machine cannot run CUDA programs, or not this
 * one, the advice to give; NULL for every other error.
 */
static inline const char *kit_environment_advice(cudaError_t err)
{
    switch (err) {
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
        return "no usable NVIDIA driver: none is installed, or it is older than "
               "this program's CUDA runtime needs. On a machine with an NVIDIA GPU, "
               "install or update the driver until `nvidia-smi` lists the GPU, or build "
               "the kit with a CUDA toolkit no newer than the \"CUDA Version\" that "
               "`nvidia-smi` reports (CUDA 13 needs driver R580 or newer); on a machine "
               "without a GPU, run the labs on a lab PC or cluster node that has one.";
    case cudaErrorNoDevice:
        return "the driver sees no CUDA GPU. Check that `nvidia-smi` lists one and that "
               "CUDA_VISIBLE_DEVICES (if set) names it.";
    case cudaErrorDevicesUnavailable:
        return "the GPU is busy or reserved (exclusive-process compute mode?). Try again "
               "when it is free, or pick another with --device.";
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidDeviceFunction:
        return "this program holds no code for this GPU's architecture. Rebuild it on "
               "this machine: `make clean all` (ARCH defaults to the GPU present), or name "
               "the GPU, e.g. `make ARCH=-arch=sm_86`.";
    case cudaErrorUnsupportedPtxVersion:
        return "the driver is older than the CUDA toolkit that built this program. "
               "Update the driver, or build with an older toolkit.";
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
        return "the driver's kernel module and user-space library do not match. Reboot, "
               "or reinstall the driver.";
    default:
        return NULL;
    }
}

static inline void kit_check(cudaError_t err, const char *call, const char *file, int line)
{
    const char *advice;

    if (err == cudaSuccess)
        return;
    advice = kit_environment_advice(err);
    if (advice) {
        fprintf(stderr, "%s: cannot run here: %s (%s)\n", kit_program, advice,
                cudaGetErrorName(err));
        if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDeviceFunction)
            fprintf(stderr, "%s: it was built for %s\n", kit_program, kit_built_archs());
#ifndef KIT_STUDENT_BUILD
        else if ((err == cudaErrorInsufficientDriver || err == cudaErrorStubLibrary || err == cudaErrorNoDevice) &&
                 (advice = kit_platform_driver_advice()) != NULL)
            fprintf(stderr, "%s: %s\n", kit_program, advice);
#endif
        exit(KIT_EXIT_WAIVED);
    }
#ifndef KIT_STUDENT_BUILD
    /* Host memory that cannot be pinned, where the platform limits it (WSL 2). */
    if (err == cudaErrorMemoryAllocation &&
        (strstr(call, "MallocHost") || strstr(call, "HostAlloc") || strstr(call, "HostRegister")) &&
        (advice = kit_platform_pinned_advice()) != NULL) {
        fprintf(stderr, "%s: cannot run here: %s (%s in %s at %s:%d)\n", kit_program, advice,
                cudaGetErrorName(err), call, file, line);
        exit(KIT_EXIT_WAIVED);
    }
#endif
    fprintf(stderr, "%s: CUDA error %s: %s\n    in %s\n    at %s:%d\n", kit_program,
            cudaGetErrorName(err), cudaGetErrorString(err), call, file, line);
    exit(KIT_EXIT_FAIL);
}

#define KIT_CHECK(call) kit_check((call), #call, __FILE__, __LINE__)

/* After a launch: configuration errors now; faults surface at the next sync. */
#define KIT_CHECK_LAUNCH() kit_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

/* The GPU's global nanosecond clock (%globaltimer), as a kernel reads it:
 * the timelines' stamps, the counting build's per-warp trace, the judge's
 * test fault. */
static __device__ __forceinline__ unsigned long long kit_globaltimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* A lab's harness built as the grader's judge: the student's code runs in
 * a worker process of its own (kit_judge.h). */
#if defined(KIT_JUDGE) && KIT_JUDGE && !defined(KIT_STUDENT_BUILD)
#include "kit_judge.h"
#endif

#endif /* KIT_CHECK_H */
