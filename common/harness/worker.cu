/*
 * worker.cu - the worker of a lab's grading: this file, built for the
 * lab's contract (KIT_LAB_H), linked with the student's two builds
 * (timed.o and counted.o, common/harness/student.cu). The judge starts it
 * in the grader's sandbox, its socket on descriptor 3 (kit_proto.h), and
 * it does only what the judge asks: open the judge's buffers, call the
 * student's functions and launch the student's kernels on them, wait for
 * the GPU, and say how it went. It decides nothing: the judge checks every
 * result and keeps every time.
 *
 * The Makefile compiles it as
 *   nvcc -DKIT_LAB_H='"common/lab/01-coalescing/contract.h"' -DKIT_LAB_NAME='"01-coalescing"' ...
 */
#include <curand_kernel.h>
#include <sys/stat.h>
#include <tuple>
#include <utility>

#include "kit_check.h"
#include "kit_counted.h"
#include KIT_LAB_H
#include "kit_student.h"
#include "kit_proto.h"
#ifdef KIT_REMOTE_H
#include KIT_REMOTE_H
#endif
#include <sys/mman.h>

#ifndef KIT_LAB_NAME
#error "worker.cu is built with KIT_LAB_NAME, the lab's name"
#endif

/* The judge's buffers, as this process maps them. */
static struct {
    uint32_t id;
    char *base;
    uint64_t size;
    int host; /* a host buffer (mapped from the judge's memfd), not a GPU one */
} maps[256];
static int nmaps;

/* Anything the judge did not ask for as it must be asked: stop. */
static void broken(const char *what)
{
    fprintf(stderr, "%s: the kit's worker stopped: %s\n", kit_program, what);
    exit(KIT_EXIT_FAIL);
}

/* Notes the judge's buffer id, as this process maps it. */
static void add_map(uint32_t id, void *base, uint64_t size, int host)
{
    maps[nmaps].id = id;
    maps[nmaps].base = (char *)base;
    maps[nmaps].size = size;
    maps[nmaps].host = host;
    nmaps++;
}

static void *mapped(kit_wire_ptr p, kit_reader *r)
{
    if (p.buffer == 0)
        return NULL;
    for (int i = 0; i < nmaps; i++)
        if (maps[i].id == p.buffer) {
            if (p.offset > maps[i].size)
                break;
            return maps[i].base + p.offset;
        }
    r->ok = 0;
    return NULL;
}

/* ---- arguments, by type (kit_proto.h) --------------------------------------- */

/* A struct by its address: its bytes (overloads for structs that hold
 * device pointers); kit_worker_fix, where a contract defines one, for what
 * cannot cross (a host pointer of the judge's). */
template <typename S> static void kit_worker_get_struct(kit_reader *r, S *s) { kit_get_bytes(r, s, sizeof *s); }
template <typename S> static void kit_worker_fix(S *) {}

__attribute__((unused)) static void kit_worker_get_struct(kit_reader *r, kit_count_config *c)
{
    kit_wire_ptr p[4];
    kit_get_bytes(r, p, sizeof p);
    c->counts = (unsigned long long *)mapped(p[0], r);
    c->record_base = mapped(p[1], r);
    c->record = (unsigned int *)mapped(p[2], r);
    c->trace = (kit_warp_record *)mapped(p[3], r);
    kit_get_bytes(r, &c->record_elems, sizeof c->record_elems);
    kit_get_bytes(r, &c->record_cap, sizeof c->record_cap);
    kit_get_bytes(r, &c->trace_cap, sizeof c->trace_cap);
}

/* Reads an argument of type T: a device pointer, a struct (held here; the
 * callee gets its address), or a value. */
template <typename T> static auto kit_worker_get(kit_reader *r)
{
    typedef kit_wire_kind<T> k;
    if constexpr (k::device) {
        kit_wire_ptr p;
        kit_get_bytes(r, &p, sizeof p);
        return (T)mapped(p, r);
    } else if constexpr (k::host_struct) {
        typename k::pointee s;
        kit_worker_get_struct(r, &s);
        kit_worker_fix(&s);
        return s;
    } else {
        T v;
        kit_get_bytes(r, &v, sizeof v);
        return v;
    }
}

template <typename T, typename H> static T kit_worker_arg(H &h)
{
    if constexpr (kit_wire_kind<T>::host_struct)
        return &h;
    else
        return h;
}

template <typename T, typename H> static void kit_worker_put_back(kit_writer *w, H &h)
{
    if constexpr (kit_wire_kind<T>::out_struct)
        kit_put_bytes(w, &h, sizeof h);
    else
        (void)w, (void)h;
}

/* Calls f with the arguments in r; writes its value and the structs it may
 * have changed to w. Returns the bytes of the value. */
template <typename R, typename... A, size_t... I>
static uint32_t kit_worker_invoke(R (*f)(A...), kit_reader *r, kit_writer *w, std::index_sequence<I...>)
{
    /* A braced list reads the arguments in order. */
    std::tuple<decltype(kit_worker_get<A>(r))...> h{kit_worker_get<A>(r)...};
    uint32_t bytes = 0;

    if (!r->ok || r->at != r->len)
        broken("a call whose arguments are not the function's");
    if constexpr (std::is_void<R>::value) {
        f(kit_worker_arg<A>(std::get<I>(h))...);
    } else {
        R v = f(kit_worker_arg<A>(std::get<I>(h))...);
        kit_put_bytes(w, &v, sizeof v);
        bytes = sizeof v;
    }
    (kit_worker_put_back<A>(w, std::get<I>(h)), ...);
    return bytes;
}

template <typename R, typename... A> static uint32_t kit_worker_call(R (*f)(A...), kit_reader *r, kit_writer *w)
{
    return kit_worker_invoke(f, r, w, std::index_sequence_for<A...>{});
}

#ifndef KIT_REMOTE_FUNCTIONS
static uint32_t call(const kit_student_api *api, uint32_t fn, kit_reader *r, kit_writer *w)
{
    switch (fn) {
    case KIT_FN_configure_counting: return kit_worker_call(api->configure_counting, r, w);
#define KIT_DISPATCH(ret, name, params)                                                            \
    case KIT_FN_##name: return kit_worker_call(api->name, r, w);
        KIT_STUDENT_FUNCTIONS(KIT_DISPATCH)
#undef KIT_DISPATCH
    default: broken("a call of a function the lab does not have");
    }
    return 0;
}
#endif

#ifdef KIT_REMOTE_FUNCTIONS
/* The kit's side in this process (kit_student.h, KIT_REMOTE_H). */
static uint32_t call_remote(uint32_t fn, kit_reader *r, kit_writer *w)
{
    switch (fn) {
#define KIT_DISPATCH(ret, name, params)                                                            \
    case KIT_RFN_##name: return kit_worker_call(kit_remote.name, r, w);
        KIT_REMOTE_FUNCTIONS(KIT_DISPATCH)
#undef KIT_DISPATCH
    default: broken("a call of a function the lab does not have");
    }
    return 0;
}
#endif

/* ---- kernels the harness launches itself -------------------------------------- */

#ifdef KIT_STUDENT_KERNELS

template <typename... A, size_t... I>
static cudaError_t kit_worker_launch(void (*)(A...), const void *fn, dim3 g, dim3 b, unsigned int smem,
                                     kit_reader *r, std::index_sequence<I...>)
{
    std::tuple<decltype(kit_worker_get<A>(r))...> h{kit_worker_get<A>(r)...};
    void *argv[] = {(void *)&std::get<I>(h)..., NULL};

    if (!r->ok || r->at != r->len)
        broken("a launch whose arguments are not the kernel's");
    return cudaLaunchKernel(fn, g, b, argv, smem, 0);
}

template <typename... A>
static cudaError_t kit_worker_launch_as(void (*sig)(A...), const void *fn, dim3 g, dim3 b, unsigned int smem,
                                       kit_reader *r)
{
    return kit_worker_launch(sig, fn, g, b, smem, r, std::index_sequence_for<A...>{});
}

static cudaError_t launch(uint32_t table, uint32_t k, kit_reader *r)
{
    uint32_t c[7];
    const void *fn;

    kit_get_bytes(r, c, sizeof c);
    if (k >= KIT_KERNEL_COUNT || table > 1)
        broken("a launch of a kernel the lab does not have");
    fn = (table ? kit_kernels_counted : kit_kernels_timed)[k];
    switch (k) {
#define KIT_LAUNCH(name, params)                                                                   \
    case KIT_KERNEL_##name:                                                                        \
        return kit_worker_launch_as((kit_kernel_sigs::name)0, fn, dim3(c[0], c[1], c[2]), dim3(c[3], c[4], c[5]), \
                                    c[6], r);
        KIT_STUDENT_KERNELS(KIT_LAUNCH)
#undef KIT_LAUNCH
    }
    broken("a launch of a kernel the lab does not have");
    return cudaErrorInvalidValue;
}
#endif

/* ---- the loop ----------------------------------------------------------------- */

static void answer(cudaError_t e, uint32_t bytes, const kit_writer *w)
{
    int rc;
    if (e != cudaSuccess) {
        char text[512];
        int n = snprintf(text, sizeof text, "%s%c%s", cudaGetErrorName(e), 0, cudaGetErrorString(e));
        rc = kit_msg_send(KIT_WORKER_FD, KIT_MSG_RETURN, (uint32_t)e, 0, text, (size_t)n);
    } else {
        if (w && !w->ok)
            broken("an answer that does not fit one message (a bug of the kit)");
        rc = kit_msg_send(KIT_WORKER_FD, KIT_MSG_RETURN, 0, bytes, w ? w->p : NULL, w ? w->len : 0);
    }
    if (rc != 0)
        exit(KIT_EXIT_FAIL); /* the judge is gone */
}

/* The judge gave this worker a GPU (a judge that uses none gives none). */
static int has_gpu;

/* After a call or a launch: everything it queued done, and how it went. */
static cudaError_t finished(void)
{
    cudaError_t e;
    if (!has_gpu)
        return cudaSuccess;
    e = cudaDeviceSynchronize();
    return e != cudaSuccess ? e : cudaGetLastError();
}

int main(int argc, char **argv)
{
    static kit_msg m;
    static unsigned char out[KIT_MSG_MAX];
    struct stat st;
    const char *name = strchr(KIT_LAB_NAME, '-');

    (void)argc;
    (void)argv;
    kit_program = name ? name + 1 : KIT_LAB_NAME;
    if (fstat(KIT_WORKER_FD, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        fprintf(stderr, "%s: this is the kit's worker for grading; the kit's judge starts it (make check)\n",
                kit_program);
        return KIT_EXIT_USAGE;
    }
    if (kit_msg_send(KIT_WORKER_FD, KIT_MSG_HELLO, KIT_PROTO_VERSION, KIT_FN_COUNT, KIT_LAB_NAME,
                     strlen(KIT_LAB_NAME)) != 0)
        return KIT_EXIT_FAIL;
    /* The CUDA context now, on the first GPU, while the judge makes its own
     * (the judge names the GPU next: another is one cudaSetDevice away). A
     * machine without one answers later, when the judge asks for a GPU. */
    if (cudaFree(0) != cudaSuccess)
        cudaGetLastError();
    for (;;) {
        int passed = -1;
        int rc = kit_msg_recv_fd(KIT_WORKER_FD, &m, &passed);
        kit_reader r = {m.payload, 0, 0, 1};
        kit_writer w = {out, 0, sizeof out, 1};
        uint32_t bytes;
        cudaError_t e;

        if (rc == 0)
            return KIT_EXIT_PASS;
        if (rc < 0)
            broken("a message from the judge that is not one");
        r.len = m.h.len;
        if (passed >= 0 && !(m.h.type == KIT_MSG_MAP && m.h.b == KIT_MAP_HOST))
            broken("a descriptor the judge did not describe");
        switch (m.h.type) {
        case KIT_MSG_DEVICE:
            e = cudaSetDevice((int)m.h.a);
            if (e == cudaSuccess)
                e = cudaFree(0); /* the context, now */
            has_gpu = e == cudaSuccess;
            answer(e, 0, NULL);
            break;
        case KIT_MSG_MAP:
            if (m.h.b == KIT_MAP_RELEASE) { /* let go of buffer a */
                e = cudaErrorInvalidValue;
                for (int i = 0; i < nmaps; i++)
                    if (maps[i].id == m.h.a) {
                        if (maps[i].host) {
                            /* Registered by the kit's side (or the student's code): no longer. */
                            if (has_gpu && cudaHostUnregister(maps[i].base) != cudaSuccess)
                                cudaGetLastError();
                            e = munmap(maps[i].base, kit_host_pages(maps[i].size)) == 0 ? cudaSuccess
                                                                                     : cudaErrorInvalidValue;
                        } else {
                            e = cudaIpcCloseMemHandle(maps[i].base);
                        }
                        maps[i] = maps[--nmaps];
                        break;
                    }
                answer(e, 0, NULL);
            } else if (m.h.b == KIT_MAP_HOST) { /* a host buffer: its memfd came with the message */
                uint64_t size;
                void *p;
                kit_get_bytes(&r, &size, sizeof size);
                if (passed < 0 || !r.ok || r.at != r.len || nmaps == (int)(sizeof maps / sizeof maps[0]))
                    broken("a host buffer the judge did not describe");
                p = mmap(NULL, kit_host_pages(size), PROT_READ | PROT_WRITE, MAP_SHARED, passed, 0);
                close(passed);
                if (p == MAP_FAILED) {
                    answer(cudaErrorMemoryAllocation, 0, NULL);
                    break;
                }
                add_map(m.h.a, p, size, 1);
                answer(cudaSuccess, 0, NULL);
            } else {
                cudaIpcMemHandle_t handle;
                uint64_t size;
                void *p = NULL;
                kit_get_bytes(&r, &handle, sizeof handle);
                kit_get_bytes(&r, &size, sizeof size);
                if (!r.ok || r.at != r.len || nmaps == (int)(sizeof maps / sizeof maps[0]))
                    broken("a buffer the judge did not describe");
                e = cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess);
                if (e == cudaSuccess)
                    add_map(m.h.a, p, size, 0);
                answer(e, 0, NULL);
            }
            break;
        case KIT_MSG_CALL:
#ifdef KIT_REMOTE_FUNCTIONS
            if (m.h.a == KIT_REMOTE_TABLE) {
                if (m.h.b >= KIT_RFN_COUNT)
                    broken("a call of a function the lab does not have");
                bytes = call_remote(m.h.b, &r, &w);
                e = finished();
                answer(e, bytes, &w);
                break;
            }
#endif
#ifndef KIT_REMOTE_FUNCTIONS
            if (m.h.a > 1 || m.h.b >= KIT_FN_COUNT)
                broken("a call of a function the lab does not have");
            bytes = call(m.h.a ? &kit_student_counted : &kit_student_timed, m.h.b, &r, &w);
            e = finished();
            answer(e, bytes, &w);
#else
            broken("a call of a function the lab does not have");
#endif
            break;
#ifdef KIT_STUDENT_KERNELS
        case KIT_MSG_LAUNCH:
            e = launch(m.h.a, m.h.b, &r);
            if (e == cudaSuccess)
                e = finished();
            answer(e, 0, NULL);
            break;
        case KIT_MSG_SETATTR: {
            int32_t body[2];
            kit_get_bytes(&r, body, sizeof body);
            if (!r.ok || r.at != r.len || m.h.b >= KIT_KERNEL_COUNT || m.h.a > 1)
                broken("an attribute of a kernel the lab does not have");
            answer(cudaFuncSetAttribute((m.h.a ? kit_kernels_counted : kit_kernels_timed)[m.h.b],
                                        (cudaFuncAttribute)body[0], body[1]),
                   0, NULL);
            break;
        }
#endif
        case KIT_MSG_BYE:
            return KIT_EXIT_PASS;
        default:
            broken("a message the worker does not take");
        }
    }
}
