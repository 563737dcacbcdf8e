/*
 * kit_count_runtime.cu - the counting side of a student's PTX instrumented
 * by common/tools/ptx-count.py: the function every instrumented access
 * calls, with kit_counted.h's warp-level counting, as relocatable device
 * code (nvcc -rdc) to link with the instrumented kernels.
 *
 * The counts are those of the counting build (kit_counted.h): per request,
 * the lanes, the distinct 128-byte segments and 32-byte sectors of a global
 * access, the wavefronts of a shared one; loads of the recorded array also
 * record each thread's index. Atomics are listed by the tool but not
 * counted, as the counting build does not count them.
 *
 * Its counters' settings are this module's own (kit_count_cfg is static in
 * kit_counted.h): kit_count_runtime_configure sets them.
 *
 * Build it with -maxrregcount=32: a kernel may not call a function that
 * needs more registers than its own bound allows (nvlink refuses it), and
 * 32 is the fewest a __launch_bounds__ can leave a thread (2,048 threads
 * on an SM of 65,536 registers). Lab 04's heavy_bounded, bound to 64 (256
 * threads, 4 blocks an SM), met a runtime of 78 built for sm_90.
 * (__maxnreg__ can ask for fewer: ptx-count.py refuses a .maxnreg under
 * 32.)
 */
#include "kit_counted.h"

enum { KIT_ACCESS_LD_GLOBAL, KIT_ACCESS_ST_GLOBAL, KIT_ACCESS_LD_SHARED, KIT_ACCESS_ST_SHARED, KIT_ACCESS_ATOM_GLOBAL,
       KIT_ACCESS_ATOM_SHARED };

/* The lanes that make the access call it (a plain call, not call.uni):
 * __activemask() inside is the request's lanes. */
extern "C" __device__ __noinline__ void kit_count_access(unsigned long long address, unsigned int bytes,
                                                         unsigned int kind)
{
    const void *a = (const void *)(size_t)address;
    switch (kind) {
    case KIT_ACCESS_LD_GLOBAL:
        kit_count_global(a, bytes, 0);
        kit_record_read(a, bytes);
        break;
    case KIT_ACCESS_ST_GLOBAL:
        kit_count_global(a, bytes, 1);
        break;
    case KIT_ACCESS_LD_SHARED:
        kit_count_shared(a, bytes, 0);
        break;
    case KIT_ACCESS_ST_SHARED:
        kit_count_shared(a, bytes, 1);
        break;
    default: /* atomics: not counted (as in the counting build) */
        break;
    }
}

/* Sets this module's counters (the host side of the runtime's object). */
extern "C" void kit_count_runtime_configure(const kit_count_config *c) { kit_count_configure_here(c); }
