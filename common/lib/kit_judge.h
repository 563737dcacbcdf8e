/*
 * kit_judge.h - the judge's side of grading: a lab's harness built with
 * KIT_JUDGE=1 (kit_check.h includes this file then) is the judge. Protocol
 * and trust: kit_proto.h.
 *
 * Nothing in the harness changes for it: the tables it calls the student's
 * functions through (kit_student_timed, kit_student_counted) hold stubs
 * (common/harness/judge.cu) that send each call to the worker and wait
 * for it to finish; the kernels it launches itself (a contract's
 * KIT_STUDENT_KERNELS) are handles that the CUDA calls below recognise.
 * Every device allocation of the harness is a buffer the worker can be
 * given (cudaMalloc stands for kit_judge_malloc here); a buffer is shared
 * only once the harness hands it to the student's code, so the expected
 * results and the kit's own scratch never leave the judge.
 *
 * The worker is started when the harness opens its GPU (kit_device_open),
 * and greets the judge at the first call, from the command the grader
 * wrote NUL-separated into the file KIT_JUDGE_WORKER (the sandbox's
 * command line), with the socket on its descriptor 3 and its output in
 * KIT_JUDGE_WORKER_LOG; it never sees the judge's environment. The judge
 * marks itself undumpable, so that a worker of the same user can neither
 * trace it nor read its memory through /proc. When the judge ends, so does
 * the worker, and everything it started (its process group, and the
 * sandbox's PID namespace).
 *
 * What the judge learns about the student's kernels (registers, shared
 * memory, occupancy) comes from loading the compiled module itself
 * (KIT_JUDGE_MODULE_TIMED and _COUNTED: the fatbins the grader's build
 * kept, and their PTX beside them for the kernels' names), which runs none
 * of its code; never from the worker.
 */
#ifndef KIT_JUDGE_H
#define KIT_JUDGE_H

#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kit_proto.h"

#ifndef KIT_LAB_NAME
#define KIT_LAB_NAME "?"
#endif

#define KIT_JUDGE_MAX_BUFFERS 256
#define KIT_JUDGE_MAX_ARGS 256

typedef struct {
    char *base;
    size_t size;
    uint32_t id;
    int shared; /* the worker has it */
    int host_fd; /* a host buffer: its memfd; -1: a GPU buffer */
} kit_judge_buffer;

typedef struct {
    int fd;                  /* the judge's end of the socket; -1: no worker */
    pid_t pid;               /* the worker (its process group) */
    int started, ended;
    kit_judge_buffer buf[KIT_JUDGE_MAX_BUFFERS];
    int nbuf;
    uint32_t next_id;
    const char *waiting_for; /* for messages: the call under way */
    int gpu;                 /* the judge uses a GPU, and so does its worker */
} kit_judge_state;

__attribute__((weak)) kit_judge_state kit_judge = {-1, 0, 0, 0, {{0, 0, 0, 0, -1}}, 0, 1, NULL, 0};

/* ---- the worker's end --------------------------------------------------------- */

static inline void kit_judge_kill_worker(void)
{
    if (kit_judge.pid > 0) {
        kill(-kit_judge.pid, SIGKILL);
        kill(kit_judge.pid, SIGKILL);
        waitpid(kit_judge.pid, NULL, 0);
        kit_judge.pid = 0;
    }
}

/* At exit: bye, a moment to go, then the whole group. */
static inline void kit_judge_atexit(void)
{
    if (kit_judge.fd >= 0 && !kit_judge.ended) {
        kit_msg_send(kit_judge.fd, KIT_MSG_BYE, 0, 0, NULL, 0);
        for (int i = 0; i < 20 && kit_judge.pid > 0; i++) {
            if (waitpid(kit_judge.pid, NULL, WNOHANG) == kit_judge.pid) {
                kit_judge.pid = 0;
                break;
            }
            usleep(10000);
        }
    }
    kit_judge_kill_worker();
}

/* The student's part of a run is over (a harness says so where what it
 * times next is the bar the student is judged against): the worker ends
 * as at exit, and with it everything it started and the GPU work of its
 * context. Nothing may call it after this. */
static inline void kit_judge_end_worker(void)
{
    kit_judge_atexit();
    kit_judge.ended = 1;
}

static inline void kit_judge_on_signal(int sig)
{
    if (kit_judge.pid > 0) {
        kill(-kit_judge.pid, SIGKILL);
        kill(kit_judge.pid, SIGKILL);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The first line of the worker's log that says something went wrong (or
 * its first line), for the judge's message: the student's own words, an
 * explanation only. */
static inline void kit_judge_worker_said(char *out, size_t cap)
{
    const char *log = getenv("KIT_JUDGE_WORKER_LOG");
    char line[512], first[512] = "";
    FILE *f = log ? fopen(log, "r") : NULL;

    out[0] = '\0';
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!first[0] && line[0])
            snprintf(first, sizeof first, "%s", line);
        if (strstr(line, "error") || strstr(line, "Error") || strstr(line, "cannot")) {
            snprintf(out, cap, "%.*s", (int)cap - 1, line);
            break;
        }
    }
    if (!out[0])
        snprintf(out, cap, "%.*s", (int)cap - 1, first);
    fclose(f);
}

/* A signal's name, as the grader's reports give it (SIGSEGV). */
static inline const char *kit_judge_signal_name(int sig)
{
    static char other[24];
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGFPE: return "SIGFPE";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGPIPE: return "SIGPIPE";
    case SIGTRAP: return "SIGTRAP";
    default: snprintf(other, sizeof other, "%d", sig); return other;
    }
}

/* The worker is gone or broke the protocol: the lab fails, saying so. */
static inline void kit_judge_worker_lost(int broken)
{
    int st = 0;
    char how[64] = "it ended", said[400];
    pid_t pid = kit_judge.pid;

    kit_judge.ended = 1;
    if (broken) {
        kit_judge_kill_worker();
        kit_die(KIT_EXIT_FAIL, "the student's program broke the kit's protocol while the kit waited for %s: "
                               "graded as failed", kit_judge.waiting_for ? kit_judge.waiting_for : "it");
    }
    /* It ended, or it closed its end and lingers: two seconds, then the
     * whole group goes. */
    for (int i = 0; pid > 0 && i < 200; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            pid = 0;
            break;
        }
        usleep(10000);
    }
    if (pid > 0) {
        snprintf(how, sizeof how, "it closed its end of the kit's socket and went on");
        kit_judge_kill_worker();
    } else if (kit_judge.pid > 0) {
        kit_judge.pid = 0;
        /* Through the sandbox (bubblewrap, a shell), a signal arrives as
         * exit status 128 + its number. */
        if (WIFEXITED(st) && WEXITSTATUS(st) > 128 && WEXITSTATUS(st) < 128 + 65)
            snprintf(how, sizeof how, "signal %s", kit_judge_signal_name(WEXITSTATUS(st) - 128));
        else if (WIFEXITED(st))
            snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(st));
        else if (WIFSIGNALED(st))
            snprintf(how, sizeof how, "signal %s", kit_judge_signal_name(WTERMSIG(st)));
    }
    kit_judge_kill_worker();
    kit_judge_worker_said(said, sizeof said);
    kit_die(KIT_EXIT_FAIL, "the student's code stopped (%s) during %s%s%s", how,
            kit_judge.waiting_for ? kit_judge.waiting_for : "the run", said[0] ? ": " : "", said);
}

/* Waits for the worker's answer to what was just sent; dies with the
 * worker's CUDA error if it reports one. */
static inline void kit_judge_expect_return(kit_msg *m)
{
    int r = kit_msg_recv(kit_judge.fd, m);
    if (r <= 0 || m->h.type != KIT_MSG_RETURN)
        kit_judge_worker_lost(r < 0 || (r > 0 && m->h.type != KIT_MSG_RETURN));
    if (m->h.a != 0) {
        char name[128] = "?", text[256] = "?";
        size_t n = strnlen((const char *)m->payload, m->h.len);
        if (n < m->h.len) {
            snprintf(name, sizeof name, "%s", (const char *)m->payload);
            snprintf(text, sizeof text, "%.*s", (int)(m->h.len - n - 1), (const char *)m->payload + n + 1);
        }
        kit_judge.ended = 1;
        kit_judge_kill_worker();
        kit_die(KIT_EXIT_FAIL, "CUDA error %s: %s, in the student's code during %s", name, text,
                kit_judge.waiting_for ? kit_judge.waiting_for : "a call");
    }
}

/* Starts the worker process (once), from the grader's command; the
 * handshake waits for the first call (kit_judge_start). */
static inline void kit_judge_spawn(void)
{
    static char text[65536];
    char *argv[KIT_JUDGE_MAX_ARGS + 1], *envp[16], env_text[8][1024];
    const char *argv_file = getenv("KIT_JUDGE_WORKER"), *log = getenv("KIT_JUDGE_WORKER_LOG");
    const char *keep[] = {"PATH", "CUDA_VISIBLE_DEVICES", "CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY",
                          "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"};
    int sv[2], logfd, argc = 0, envc = 0, fd;
    size_t len;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;

    if (kit_judge.pid > 0 || kit_judge.fd >= 0)
        return;
    if (!argv_file)
        kit_die(KIT_EXIT_USAGE, "this is the kit's judge, which grading runs beside a worker holding the student's "
                                "code (KIT_JUDGE_WORKER names its command): grade with make check");
    fd = open(argv_file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        kit_die(KIT_EXIT_FAIL, "the judge cannot read its worker's command (%s): %s", argv_file, strerror(errno));
    len = (size_t)read(fd, text, sizeof text - 1);
    close(fd);
    if (len == (size_t)-1 || len == 0)
        kit_die(KIT_EXIT_FAIL, "the judge's worker command (%s) is empty", argv_file);
    text[len] = '\0';
    for (size_t i = 0; i < len && argc < KIT_JUDGE_MAX_ARGS; i += strlen(text + i) + 1)
        argv[argc++] = text + i;
    argv[argc] = NULL;

    /* The worker's environment: only what a CUDA program needs. */
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        const char *v = getenv(keep[i]);
        size_t kl = strlen(keep[i]);
        if (v && kl + strlen(v) + 2 <= sizeof env_text[0]) {
            memcpy(env_text[envc], keep[i], kl);
            env_text[envc][kl] = '=';
            memcpy(env_text[envc] + kl + 1, v, strlen(v) + 1);
            envp[envc] = env_text[envc];
            envc++;
        }
    }
    envp[envc++] = (char *)"HOME=/tmp";
    envp[envc++] = (char *)"TMPDIR=/tmp";
    envp[envc++] = (char *)"LC_ALL=C";
    envp[envc] = NULL;

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        kit_die(KIT_EXIT_FAIL, "the judge cannot make its socket: %s", strerror(errno));
    logfd = open(log ? log : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (logfd < 0)
        kit_die(KIT_EXIT_FAIL, "the judge cannot open the worker's log %s: %s", log, strerror(errno));
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, logfd, 1);
    posix_spawn_file_actions_adddup2(&fa, logfd, 2);
    posix_spawn_file_actions_adddup2(&fa, sv[1], KIT_WORKER_FD);
    posix_spawnattr_init(&attr);
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    if (posix_spawnp(&kit_judge.pid, argv[0], &fa, &attr, argv, envp) != 0)
        kit_die(KIT_EXIT_FAIL, "the judge cannot start its worker (%s): %s", argv[0], strerror(errno));
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(sv[1]);
    close(logfd);
    kit_judge.fd = sv[0];
    atexit(kit_judge_atexit);
    signal(SIGTERM, kit_judge_on_signal);
    signal(SIGINT, kit_judge_on_signal);
    signal(SIGHUP, kit_judge_on_signal);
}

/* The worker started (kit_judge_spawn) and greeted: its lab, its GPU. */
static inline void kit_judge_start(void)
{
    int dev = 0;
    kit_msg m;

    if (kit_judge.started)
        return;
    kit_judge.started = 1;
    kit_judge_spawn();
    kit_judge.waiting_for = "the worker's start";
    {
        int r = kit_msg_recv(kit_judge.fd, &m);
        if (r <= 0)
            kit_judge_worker_lost(r < 0);
    }
    if (m.h.type != KIT_MSG_HELLO || m.h.a != KIT_PROTO_VERSION || m.h.len != strlen(KIT_LAB_NAME) ||
        memcmp(m.payload, KIT_LAB_NAME, m.h.len) != 0)
        kit_judge_worker_lost(1);
    /* The worker's GPU is the judge's; a judge that uses none (a part that
     * runs on the CPU alone) has its worker use none either. */
    if (cudaGetDevice(&dev) == cudaSuccess) {
        kit_judge.gpu = 1;
        kit_judge.waiting_for = "the worker's choice of GPU";
        if (kit_msg_send(kit_judge.fd, KIT_MSG_DEVICE, (uint32_t)dev, 0, NULL, 0) != 0)
            kit_judge_worker_lost(0);
        kit_judge_expect_return(&m);
    }
    cudaGetLastError();
}

/* ---- device buffers ------------------------------------------------------------- */

/* cudaMalloc in a judge: a buffer of whole 2 MiB granules, registered. */
static inline cudaError_t kit_judge_malloc(void **p, size_t bytes)
{
    size_t size = (bytes + KIT_SHARE_GRANULE - 1) / KIT_SHARE_GRANULE * KIT_SHARE_GRANULE;
    cudaError_t e;

    if (size == 0)
        size = KIT_SHARE_GRANULE;
    e = (cudaMalloc)(p, size);
    if (e != cudaSuccess)
        return e;
    if (kit_judge.nbuf == KIT_JUDGE_MAX_BUFFERS)
        kit_die(KIT_EXIT_FAIL, "the kit's judge holds too many buffers (a bug of the kit)");
    kit_judge.buf[kit_judge.nbuf].base = (char *)*p;
    kit_judge.buf[kit_judge.nbuf].size = bytes;
    kit_judge.buf[kit_judge.nbuf].id = kit_judge.next_id++;
    kit_judge.buf[kit_judge.nbuf].shared = 0;
    kit_judge.buf[kit_judge.nbuf].host_fd = -1;
    kit_judge.nbuf++;
    return cudaSuccess;
}

/*
 * Host memory the student's code reads or fills (Lab 05's host arrays): a
 * memfd of whole pages, mapped here and, once handed over, by the worker.
 * Its size is sealed, so that the worker can neither shrink it (the
 * judge's reads would fault) nor grow it; the judge checks what is in it
 * against copies of its own, after the worker's work is done.
 */
static inline void *kit_judge_host_alloc(size_t bytes)
{
    size_t size = kit_host_pages(bytes);
    int fd;
    void *p;

    fd = memfd_create("kit-host", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        kit_die(KIT_EXIT_FAIL, "the kit's judge cannot make shared host memory (memfd_create): %s", strerror(errno));
    /* The grader caps the size of the files the judge writes (its output):
     * a memfd is a file too, so the soft cap is lifted for it alone. */
    {
        struct rlimit cap, lifted;
        int lift = getrlimit(RLIMIT_FSIZE, &cap) == 0 && cap.rlim_cur != RLIM_INFINITY && cap.rlim_cur < size;
        if (lift) {
            lifted = cap;
            lifted.rlim_cur = cap.rlim_max;
            if (setrlimit(RLIMIT_FSIZE, &lifted) != 0)
                lift = 0;
        }
        /* Where the cap stays (a hard cap below the size), the error, not the signal. */
        void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
        int sized = ftruncate(fd, (off_t)size) == 0 &&
                    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0;
        int err = errno;
        signal(SIGXFSZ, was);
        if (lift)
            setrlimit(RLIMIT_FSIZE, &cap);
        if (!sized)
            kit_die(KIT_EXIT_FAIL, "the kit's judge cannot size its shared host memory (%zu bytes): %s", size,
                    strerror(err));
    }
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        kit_die(KIT_EXIT_FAIL, "the kit's judge cannot map %zu bytes of shared host memory: %s", size,
                strerror(errno));
    if (kit_judge.nbuf == KIT_JUDGE_MAX_BUFFERS)
        kit_die(KIT_EXIT_FAIL, "the kit's judge holds too many buffers (a bug of the kit)");
    kit_judge.buf[kit_judge.nbuf].base = (char *)p;
    kit_judge.buf[kit_judge.nbuf].size = bytes;
    kit_judge.buf[kit_judge.nbuf].id = kit_judge.next_id++;
    kit_judge.buf[kit_judge.nbuf].shared = 0;
    kit_judge.buf[kit_judge.nbuf].host_fd = fd;
    kit_judge.nbuf++;
    return p;
}

/* cudaMallocPitch in a judge: the same, rows of the runtime's pitch. */
static inline cudaError_t kit_judge_malloc_pitch(void **p, size_t *pitch, size_t width, size_t height)
{
    void *probe = NULL;
    cudaError_t e = (cudaMallocPitch)(&probe, pitch, width, height);
    if (e != cudaSuccess)
        return e;
    (cudaFree)(probe);
    return kit_judge_malloc(p, *pitch * height);
}

static inline cudaError_t kit_judge_free(void *p)
{
    for (int i = 0; i < kit_judge.nbuf; i++)
        if (kit_judge.buf[i].base == (char *)p) {
            if (kit_judge.buf[i].shared && kit_judge.fd >= 0 && !kit_judge.ended) {
                /* The worker lets go of it first. */
                kit_msg m;
                kit_judge.waiting_for = "the worker's release of a buffer";
                if (kit_msg_send(kit_judge.fd, KIT_MSG_MAP, kit_judge.buf[i].id, KIT_MAP_RELEASE, NULL, 0) != 0)
                    kit_judge_worker_lost(0);
                kit_judge_expect_return(&m);
            }
            if (kit_judge.buf[i].host_fd >= 0) {
                munmap(kit_judge.buf[i].base, kit_host_pages(kit_judge.buf[i].size));
                close(kit_judge.buf[i].host_fd);
                kit_judge.buf[i] = kit_judge.buf[--kit_judge.nbuf];
                return cudaSuccess;
            }
            kit_judge.buf[i] = kit_judge.buf[--kit_judge.nbuf];
            return (cudaFree)(p);
        }
    return (cudaFree)(p);
}

/* The judge's shared host memory given back: the worker lets go first. */
static inline void kit_judge_host_free(void *p) { KIT_CHECK(kit_judge_free(p)); }

/* The wire form of a device pointer of the judge's: its buffer and offset;
 * the buffer is shared with the worker the first time. */
static inline kit_wire_ptr kit_judge_wire(const void *p)
{
    kit_wire_ptr w = {0, 0, 0};
    const char *c = (const char *)p;

    if (!p)
        return w;
    /* The buffer that holds p; one that p is just past the end of only where
     * none holds it (two buffers can be neighbours: a pointer to the start
     * of one is not the end of the other). */
    for (int i = 0; i < 2 * kit_judge.nbuf; i++) {
        kit_judge_buffer *b = &kit_judge.buf[i % kit_judge.nbuf];
        int holds = c >= b->base && (c < b->base + b->size || (b->size == 0 && c == b->base));
        int just_past = c == b->base + b->size;
        if (i < kit_judge.nbuf ? !holds : !just_past)
            continue;
        if (!b->shared && b->host_fd >= 0) {
            uint64_t size = b->size;
            kit_msg m;
            kit_judge_start();
            kit_judge.waiting_for = "the worker's mapping of shared host memory";
            if (kit_msg_send_fd(kit_judge.fd, KIT_MSG_MAP, b->id, KIT_MAP_HOST, &size, sizeof size, b->host_fd) != 0)
                kit_judge_worker_lost(0);
            kit_judge_expect_return(&m);
            b->shared = 1;
        } else if (!b->shared) {
            struct {
                cudaIpcMemHandle_t handle;
                uint64_t size;
            } map;
            kit_msg m;
            KIT_CHECK(cudaIpcGetMemHandle(&map.handle, b->base));
            map.size = b->size;
            kit_judge_start();
            kit_judge.waiting_for = "the worker's opening of a shared buffer";
            if (kit_msg_send(kit_judge.fd, KIT_MSG_MAP, b->id, KIT_MAP_GPU, &map, sizeof map) != 0)
                kit_judge_worker_lost(0);
            kit_judge_expect_return(&m);
            b->shared = 1;
        }
        w.buffer = b->id;
        w.offset = (uint64_t)(c - b->base);
        return w;
    }
    kit_die(KIT_EXIT_FAIL, "the kit's judge cannot hand the worker a pointer it did not allocate (%p): a bug "
                           "of the kit", p);
    return w;
}

/* A fault for the kit's tests (tests/96-judge.bats): KIT_JUDGE_TEST_DELAY_US
 * = N puts N microseconds of GPU work after each of the harness's waits for
 * the GPU (cudaDeviceSynchronize), before whatever it queues next, as a GPU
 * busy with other processes delays the judge's work: its copies and kernels
 * then end long after it could hand the worker a call. Grading never sets
 * it (it only makes the judge slower). */
static __global__ void kit_judge_spin_kernel(unsigned long long ns)
{
    unsigned long long t0 = kit_globaltimer();
    while (kit_globaltimer() - t0 < ns)
        ;
}

static inline void kit_judge_test_delay(cudaStream_t stream)
{
    static long us = -1;
    if (us < 0) {
        const char *e = getenv("KIT_JUDGE_TEST_DELAY_US");
        us = e ? atol(e) : 0;
    }
    if (us > 0) {
        unsigned long long ns = (unsigned long long)us * 1000ull;
        void *args[] = {&ns};
        KIT_CHECK((cudaLaunchKernel)((const void *)kit_judge_spin_kernel, dim3(1), dim3(1), args, 0, stream));
    }
}

/* Before the worker runs anything: the judge's own GPU work done. Two
 * processes' streams are not ordered with each other, so without this the
 * worker's kernel could start before the judge's copy or kernel that
 * prepares its input had ended (a cudaMemcpy from pageable memory may
 * return before its copy lands), and read or index with stale data. The
 * worker, for its part, ends its work before it answers. */
static inline void kit_judge_drain(void)
{
    kit_judge_start();
    if (kit_judge.gpu)
        KIT_CHECK(cudaDeviceSynchronize());
}

/* ---- arguments ----------------------------------------------------------------- */

/* A struct handed by its address: its bytes (overloads for structs that
 * hold device pointers). */
template <typename S> static inline void kit_judge_put_struct(kit_writer *w, const S *s)
{
    kit_put_bytes(w, s, sizeof *s);
}

template <typename T> static inline void kit_judge_put_arg(kit_writer *w, T v)
{
    typedef kit_wire_kind<T> k;
    if constexpr (k::device) {
        kit_wire_ptr p = kit_judge_wire((const void *)v);
        kit_put_bytes(w, &p, sizeof p);
    } else if constexpr (k::host_struct) {
        kit_judge_put_struct(w, v);
    } else {
        kit_put_bytes(w, &v, sizeof v);
    }
}

/* What the worker sends back: structs it may have changed. */
template <typename T> static inline void kit_judge_get_back(kit_reader *r, T v)
{
    if constexpr (kit_wire_kind<T>::out_struct)
        kit_get_bytes(r, v, sizeof *v);
    else
        (void)r, (void)v;
}

/* Calls function fn of table (0 timed, 1 counted) in the worker and waits
 * until it and everything it queued on the GPU are done. */
template <typename R, typename... A> static inline R kit_judge_call(int table, int fn, const char *name, A... args)
{
    static unsigned char out[KIT_MSG_MAX];
    static kit_msg in;
    static char what[160];
    kit_writer w = {out, 0, sizeof out, 1};
    kit_reader r;

    (kit_judge_put_arg(&w, args), ...);
    if (!w.ok)
        kit_die(KIT_EXIT_FAIL, "the kit's judge: the arguments of %s do not fit a message", name);
    kit_judge_drain();
    snprintf(what, sizeof what, "%s%s", name, table == 1 ? " (its counting build)" : "");
    kit_judge.waiting_for = what;
    if (kit_msg_send(kit_judge.fd, KIT_MSG_CALL, (uint32_t)table, (uint32_t)fn, out, w.len) != 0)
        kit_judge_worker_lost(0);
    kit_judge_expect_return(&in);
    r.p = in.payload;
    r.len = in.h.len;
    r.at = 0;
    r.ok = 1;
    if constexpr (std::is_void<R>::value) {
        if (in.h.b != 0)
            kit_judge_worker_lost(1);
        (kit_judge_get_back(&r, args), ...);
        if (!r.ok || r.at != r.len)
            kit_judge_worker_lost(1);
    } else {
        R value;
        if (in.h.b != sizeof(R))
            kit_judge_worker_lost(1);
        kit_get_bytes(&r, &value, sizeof value);
        (kit_judge_get_back(&r, args), ...);
        if (!r.ok || r.at != r.len)
            kit_judge_worker_lost(1);
        return value;
    }
}

/* ---- kernels the harness launches itself --------------------------------------- */

/* A student's kernel, for the harness: which table and which kernel; how
 * its arguments cross (common/harness/judge.cu); its function in the
 * judge's own copy of the module, for its attributes. */
typedef struct kit_remote_kernel {
    int table, index;
    const char *name;
    void (*put_args)(kit_writer *w, void **args);
    CUfunction fn;
} kit_remote_kernel;

/* The remote kernels of this program (judge.cu), to tell them from the kit's. */
extern kit_remote_kernel kit_remote_kernels[];
extern const int kit_remote_kernel_count;

static inline kit_remote_kernel *kit_judge_remote(const void *f)
{
    for (int i = 0; i < kit_remote_kernel_count; i++)
        if (f == (const void *)&kit_remote_kernels[i])
            return &kit_remote_kernels[i];
    return NULL;
}

/* The driver's API, reached at run time (no link against libcuda). */
typedef struct {
    int loaded;
    CUresult (*module_load_data)(CUmodule *, const void *);
    CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*func_get_attribute)(int *, CUfunction_attribute, CUfunction);
    CUresult (*func_set_attribute)(CUfunction, CUfunction_attribute, int);
    CUresult (*occupancy)(int *, CUfunction, int, size_t);
    CUmodule module[2];
} kit_judge_driver;
__attribute__((weak)) kit_judge_driver kit_judge_cu = {0, NULL, NULL, NULL, NULL, NULL, {NULL, NULL}};

static inline void *kit_judge_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *data;
    long n;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    data = (char *)malloc((size_t)n + 1);
    if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    fclose(f);
    if (data) {
        data[n] = '\0';
        *len = (size_t)n;
    }
    return data;
}

/* The kernel's function in the judge's copy of the student's module: the
 * module as the grader's build kept it (a fatbin), the kernel's mangled
 * name found in its PTX: _ZN9kit_timed5heavyE... for kit_timed::heavy. */
static inline CUfunction kit_judge_function(kit_remote_kernel *k)
{
    static const char *env[2] = {"KIT_JUDGE_MODULE_TIMED", "KIT_JUDGE_MODULE_COUNTED"};
    static const char *ns[2] = {"kit_timed", "kit_count"};
    char prefix[160], ptx_path[4096], name[512];
    const char *path, *at, *text;
    size_t len;

    if (k->fn)
        return k->fn;
    if (!kit_judge_cu.loaded) {
        void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            kit_die(KIT_EXIT_FAIL, "the kit's judge cannot load the CUDA driver library: %s", dlerror());
        *(void **)&kit_judge_cu.module_load_data = dlsym(lib, "cuModuleLoadData");
        *(void **)&kit_judge_cu.module_get_function = dlsym(lib, "cuModuleGetFunction");
        *(void **)&kit_judge_cu.func_get_attribute = dlsym(lib, "cuFuncGetAttribute");
        *(void **)&kit_judge_cu.func_set_attribute = dlsym(lib, "cuFuncSetAttribute");
        *(void **)&kit_judge_cu.occupancy = dlsym(lib, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
        if (!kit_judge_cu.module_load_data || !kit_judge_cu.module_get_function || !kit_judge_cu.func_get_attribute ||
            !kit_judge_cu.func_set_attribute || !kit_judge_cu.occupancy)
            kit_die(KIT_EXIT_FAIL, "the kit's judge: the CUDA driver lacks a function it needs");
        kit_judge_cu.loaded = 1;
        KIT_CHECK(cudaFree(0)); /* the runtime's context is the current one */
    }
    path = getenv(env[k->table]);
    if (!path)
        kit_die(KIT_EXIT_FAIL, "the kit's judge needs %s (the student's compiled module) for %s", env[k->table],
                k->name);
    if (!kit_judge_cu.module[k->table]) {
        void *image = kit_judge_read_file(path, &len);
        CUresult e;
        if (!image)
            kit_die(KIT_EXIT_FAIL, "the kit's judge cannot read %s", path);
        e = kit_judge_cu.module_load_data(&kit_judge_cu.module[k->table], image);
        free(image);
        if (e != CUDA_SUCCESS)
            kit_die(KIT_EXIT_FAIL, "the kit's judge cannot load %s (CUDA driver error %d)", path, (int)e);
    }
    /* The PTX beside it names the kernels. */
    snprintf(ptx_path, sizeof ptx_path, "%s", path);
    if (strlen(ptx_path) > 7 && strcmp(ptx_path + strlen(ptx_path) - 7, ".fatbin") == 0)
        strcpy(ptx_path + strlen(ptx_path) - 7, ".ptx");
    text = (const char *)kit_judge_read_file(ptx_path, &len);
    if (!text)
        kit_die(KIT_EXIT_FAIL, "the kit's judge cannot read %s", ptx_path);
    snprintf(prefix, sizeof prefix, "_ZN%zu%s%zu%sE", strlen(ns[k->table]), ns[k->table], strlen(k->name), k->name);
    at = strstr(text, prefix);
    while (at && (at == text || (at[-1] != ' ' && at[-1] != '\t')))
        at = strstr(at + 1, prefix);
    if (!at)
        kit_die(KIT_EXIT_FAIL, "the kit's judge finds no kernel %s in %s", k->name, ptx_path);
    len = strcspn(at, "( \t\r\n");
    snprintf(name, sizeof name, "%.*s", (int)len, at);
    free((void *)text);
    if (kit_judge_cu.module_get_function(&k->fn, kit_judge_cu.module[k->table], name) != CUDA_SUCCESS)
        kit_die(KIT_EXIT_FAIL, "the kit's judge cannot find %s in the student's module", name);
    return k->fn;
}

static inline int kit_judge_attr(kit_remote_kernel *k, CUfunction_attribute a)
{
    int v = 0;
    CUfunction fn = kit_judge_function(k); /* first: it loads the driver's functions */
    if (kit_judge_cu.func_get_attribute(&v, a, fn) != CUDA_SUCCESS)
        kit_die(KIT_EXIT_FAIL, "the kit's judge cannot read an attribute of %s", k->name);
    return v;
}

static inline cudaError_t kit_judge_func_get_attributes(cudaFuncAttributes *fa, const void *f)
{
    kit_remote_kernel *k = kit_judge_remote(f);
    if (!k)
        return (cudaFuncGetAttributes)(fa, f);
    memset(fa, 0, sizeof *fa);
    fa->maxThreadsPerBlock = kit_judge_attr(k, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    fa->sharedSizeBytes = (size_t)kit_judge_attr(k, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    fa->constSizeBytes = (size_t)kit_judge_attr(k, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
    fa->localSizeBytes = (size_t)kit_judge_attr(k, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    fa->numRegs = kit_judge_attr(k, CU_FUNC_ATTRIBUTE_NUM_REGS);
    fa->ptxVersion = kit_judge_attr(k, CU_FUNC_ATTRIBUTE_PTX_VERSION);
    fa->binaryVersion = kit_judge_attr(k, CU_FUNC_ATTRIBUTE_BINARY_VERSION);
    fa->cacheModeCA = kit_judge_attr(k, CU_FUNC_ATTRIBUTE_CACHE_MODE_CA);
    fa->maxDynamicSharedSizeBytes = kit_judge_attr(k, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    fa->preferredShmemCarveout = kit_judge_attr(k, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT);
    return cudaSuccess;
}

/* Set on both: the worker's kernel (for its launches) and the judge's copy
 * (for the occupancy the judge computes). */
static inline cudaError_t kit_judge_func_set_attribute(const void *f, cudaFuncAttribute attr, int value)
{
    kit_remote_kernel *k = kit_judge_remote(f);
    CUfunction_attribute cu;
    int32_t body[2] = {(int32_t)attr, value};
    kit_msg m;

    if (!k)
        return (cudaFuncSetAttribute)(f, attr, value);
    cu = attr == cudaFuncAttributeMaxDynamicSharedMemorySize ? CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
         : attr == cudaFuncAttributePreferredSharedMemoryCarveout
             ? CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
             : (CUfunction_attribute)-1;
    if ((int)cu < 0)
        kit_die(KIT_EXIT_FAIL, "the kit's judge does not pass attribute %d of %s on (a bug of the kit)", (int)attr,
                k->name);
    CUfunction fn = kit_judge_function(k); /* first: it loads the driver's functions */
    if (kit_judge_cu.func_set_attribute(fn, cu, value) != CUDA_SUCCESS)
        return cudaErrorInvalidValue;
    kit_judge_start();
    kit_judge.waiting_for = "an attribute of the student's kernel";
    if (kit_msg_send(kit_judge.fd, KIT_MSG_SETATTR, (uint32_t)k->table, (uint32_t)k->index, body, sizeof body) != 0)
        kit_judge_worker_lost(0);
    kit_judge_expect_return(&m);
    return cudaSuccess;
}

static inline cudaError_t kit_judge_occupancy(int *n, const void *f, int block, size_t smem)
{
    kit_remote_kernel *k = kit_judge_remote(f);
    if (!k)
        return (cudaOccupancyMaxActiveBlocksPerMultiprocessor)(n, f, block, smem);
    CUfunction fn = kit_judge_function(k); /* first: it loads the driver's functions */
    if (kit_judge_cu.occupancy(n, fn, block, smem) != CUDA_SUCCESS)
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

/* A launch of the student's kernel goes to the worker, on its default
 * stream, and returns when the kernel is done. */
static inline cudaError_t kit_judge_launch_kernel(const void *f, dim3 grid, dim3 block, void **args, size_t smem,
                                                  cudaStream_t stream)
{
    static unsigned char out[KIT_MSG_MAX];
    static char what[160];
    kit_remote_kernel *k = kit_judge_remote(f);
    kit_writer w = {out, 0, sizeof out, 1};
    uint32_t config[7] = {grid.x, grid.y, grid.z, block.x, block.y, block.z, (uint32_t)smem};
    kit_msg m;

    if (!k)
        return (cudaLaunchKernel)(f, grid, block, args, smem, stream);
    if (stream != 0)
        kit_die(KIT_EXIT_FAIL, "the kit's judge launches the student's kernels on the default stream only (a bug "
                               "of the kit)");
    kit_put_bytes(&w, config, sizeof config);
    k->put_args(&w, args);
    if (!w.ok)
        kit_die(KIT_EXIT_FAIL, "the kit's judge: the arguments of %s do not fit a message", k->name);
    kit_judge_drain();
    snprintf(what, sizeof what, "the student's kernel %s%s", k->name, k->table ? " (its counting build)" : "");
    kit_judge.waiting_for = what;
    if (kit_msg_send(kit_judge.fd, KIT_MSG_LAUNCH, (uint32_t)k->table, (uint32_t)k->index, out, w.len) != 0)
        kit_judge_worker_lost(0);
    kit_judge_expect_return(&m);
    return cudaSuccess;
}

/* The harness's waits for the GPU, with the test's fault after them. */
static inline cudaError_t kit_judge_synchronize(void)
{
    cudaError_t e = (cudaDeviceSynchronize)();
    if (e == cudaSuccess)
        kit_judge_test_delay(0);
    return e;
}

/* The harness's calls, from here on, are the judge's. */
#define cudaMalloc(p, n) kit_judge_malloc((void **)(p), (n))
#define cudaMallocPitch(p, pitch, w, h) kit_judge_malloc_pitch((void **)(p), (pitch), (w), (h))
#define cudaFree(p) kit_judge_free((void *)(p))
#define cudaFuncGetAttributes(fa, f) kit_judge_func_get_attributes((fa), (const void *)(f))
#define cudaFuncSetAttribute(f, attr, v) kit_judge_func_set_attribute((const void *)(f), (attr), (v))
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, f, b, s) kit_judge_occupancy((n), (const void *)(f), (b), (s))
#define cudaLaunchKernel(f, g, b, a, s, st) kit_judge_launch_kernel((const void *)(f), (g), (b), (a), (s), (st))
#define cudaDeviceSynchronize() kit_judge_synchronize()

/* Undumpable from the start: no worker of this user traces the judge or
 * reads its memory. */
__attribute__((constructor)) static void kit_judge_undumpable(void) { prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

#endif /* KIT_JUDGE_H */
