/*
 * kit_count_runtime.cu - the counting side of a student's PTX instrumented
 * by common/tools/ptx-count.py: the function every instrumented access
 * calls, with kit_counted.h's warp-level counting. The labs take it as PTX
 * (nvcc -rdc=true -ptx) and put its definition into the instrumented
 * module itself (common/tools/count-object.sh), where ptxas gives it the
 * registers each caller's bounds leave.
 *
 * The counts are kit_counted.h's: per request, the lanes, the distinct
 * 128-byte segments and 32-byte sectors of a global access, the
 * wavefronts of a shared one; loads of the recorded array also record each
 * thread's index. Atomics are listed by the tool but not counted.
 *
 * Its counters' settings are the module's own kit_count_cfg (static in
 * kit_counted.h), which the student build's configure_counting sets
 * (kit_count_runtime_configure, for a runtime linked on its own).
 *
 * Linked on its own as relocatable code (nvlink, tests/94-counts.bats),
 * build it with -maxrregcount=32: a kernel may not call a function that
 * needs more registers than its own bound allows, and 32 is the fewest a
 * __launch_bounds__ can leave a thread (2,048 threads on an SM of 65,536
 * registers). ptx-count.py refuses a .maxnreg under 32.
 */
#include "kit_counted.h"

enum { KIT_ACCESS_LD_GLOBAL, KIT_ACCESS_ST_GLOBAL, KIT_ACCESS_LD_SHARED, KIT_ACCESS_ST_SHARED, KIT_ACCESS_ATOM_GLOBAL,
       KIT_ACCESS_ATOM_SHARED, KIT_ACCESS_LD_GENERIC, KIT_ACCESS_ST_GENERIC };

/* The lanes that make the access call it (a plain call, not call.uni),
 * and `lanes` says which they are: the instrumented code takes the mask
 * where the access is (activemask, and the ballot of its predicate), since
 * a call made alike in several branches could be merged into one before
 * them, where __activemask() inside would see the whole warp. */
extern "C" __device__ __noinline__ void kit_count_access(unsigned long long address, unsigned int bytes,
                                                         unsigned int kind, unsigned int lanes)
{
    const void *a = (const void *)(size_t)address;
    /* A generic address: global or shared memory as it points now (a
     * thread's local memory, or constant memory, is not counted). Lanes
     * that point into different spaces are counted apart. */
    if (kind == KIT_ACCESS_LD_GENERIC || kind == KIT_ACCESS_ST_GENERIC) {
        unsigned int store = kind == KIT_ACCESS_ST_GENERIC;
        unsigned int global = __ballot_sync(lanes, __isGlobal(a)), shared = __ballot_sync(lanes, __isShared(a));
        if (__isGlobal(a)) {
            kind = store ? KIT_ACCESS_ST_GLOBAL : KIT_ACCESS_LD_GLOBAL;
            lanes = global;
        } else if (__isShared(a)) {
            kind = store ? KIT_ACCESS_ST_SHARED : KIT_ACCESS_LD_SHARED;
            lanes = shared;
        } else {
            return;
        }
    }
    switch (kind) {
    case KIT_ACCESS_LD_GLOBAL:
        kit_count_global_of(lanes, a, bytes, 0);
        kit_record_read(a, bytes);
        break;
    case KIT_ACCESS_ST_GLOBAL:
        kit_count_global_of(lanes, a, bytes, 1);
        break;
    case KIT_ACCESS_LD_SHARED:
        kit_count_shared_of(lanes, a, bytes, 0);
        break;
    case KIT_ACCESS_ST_SHARED:
        kit_count_shared_of(lanes, a, bytes, 1);
        break;
    default: /* atomics: not counted */
        break;
    }
}

/* Sets this module's counters (the host side of the runtime's object). */
extern "C" void kit_count_runtime_configure(const kit_count_config *c) { kit_count_configure_here(c); }
