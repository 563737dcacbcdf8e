/*
 * kit_proto.h - how the kit's judge talks to its worker.
 *
 * When a lab is graded, two processes run it. The judge is the lab's
 * harness, built with KIT_JUDGE=1: it owns the inputs, the expected
 * results, the clock, the checks, the verdict and the grader's result
 * channel, and it never loads the student's code. The worker is a small
 * program of the kit (common/harness/worker.cu) linked with the student's
 * file; it runs in the grader's sandbox, and does what the judge asks:
 * call this function of the student's file with these arguments, launch
 * this kernel of it. Nothing it says can raise a grade: the judge checks
 * every result in its own memory and times every call with its own clock.
 *
 * They share the GPU's memory: every device buffer the judge hands to the
 * student's code is the judge's own allocation, opened by the worker with
 * CUDA's interprocess handles (cudaIpcGetMemHandle / cudaIpcOpenMemHandle);
 * each is a whole allocation of 2 MiB multiples, so a handle reaches that
 * buffer and nothing beside it. Host memory the student's code must read
 * or fill (Lab 05's host arrays) is the judge's too: a memfd of whole
 * pages, sealed against shrinking and growing, passed over the socket and
 * mapped by both; the judge reads it only after the worker says it is
 * done, and checks it against copies the worker never sees. Messages go over a socket the judge made
 * (a SOCK_SEQPACKET pair, one message per packet), the worker's end on its
 * descriptor 3. A message is a head of five numbers and a payload of at
 * most KIT_MSG_MAX bytes; the payload of a call holds its arguments, each
 * encoded by type:
 *
 *   numbers, enums, structs of numbers   their bytes;
 *   a pointer to numbers (an array)      a buffer number and an offset into
 *                                        it (0 and 0: NULL): the judge's
 *                                        buffer (GPU or host), the worker's
 *                                        mapping of it;
 *   a pointer to a struct                the struct's bytes; where it is not
 *                                        const, the worker sends them back.
 *
 * Anything else cannot cross, and the build says so.
 */
#ifndef KIT_PROTO_H
#define KIT_PROTO_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/types.h>
#include <type_traits>
#include <unistd.h>

#define KIT_PROTO_MAGIC 0x6b69744aU /* "kitJ" */
#define KIT_PROTO_VERSION 1
#define KIT_MSG_MAX (64 * 1024)
/* The worker's end of the socket. */
#define KIT_WORKER_FD 3
/* Device buffers are shared whole, in multiples of this. */
#define KIT_SHARE_GRANULE (2ull << 20)

enum kit_msg_type {
    KIT_MSG_HELLO = 1, /* worker -> judge: a = version, b = functions; payload: the lab's name */
    KIT_MSG_DEVICE,    /* judge -> worker: a = the GPU's number */
    KIT_MSG_MAP,       /* judge -> worker: a = buffer; b = 0: a GPU buffer, payload: IPC handle, size;
                          b = 1: let go of buffer a; b = 2: a host buffer, payload: size, and its
                          descriptor (a sealed memfd) passed with the message */
    KIT_MSG_CALL,      /* judge -> worker: a = table (0 timed, 1 counted), b = function; payload: arguments */
    KIT_MSG_LAUNCH,    /* judge -> worker: a = table, b = kernel; payload: grid, block, shared, arguments */
    KIT_MSG_SETATTR,   /* judge -> worker: a = table, b = kernel; payload: attribute, value */
    KIT_MSG_RETURN,    /* worker -> judge: a = CUDA status, b = bytes of the value; payload: value, structs
                          sent back, and where a = error, its name and text */
    KIT_MSG_BYE,       /* judge -> worker: exit */
    KIT_MSG_TYPES
};

typedef struct {
    uint32_t magic, type, a, b, len;
} kit_msg_head;

typedef struct {
    kit_msg_head h;
    unsigned char payload[KIT_MSG_MAX];
} kit_msg;

/* Host buffers are shared whole pages, as sealed memfds (KIT_MSG_MAP, b = 2). */
#define KIT_MAP_GPU 0
#define KIT_MAP_RELEASE 1
#define KIT_MAP_HOST 2

/* The bytes a host buffer of `bytes` takes: whole pages, one at least. */
static inline size_t kit_host_pages(uint64_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return bytes ? (size_t)((bytes + page - 1) / page * page) : page;
}

/* Sends one message, and where pass_fd >= 0 that descriptor with it; 0 on
 * success, -1 (errno set) otherwise. */
static inline int kit_msg_send_fd(int fd, uint32_t type, uint32_t a, uint32_t b, const void *payload, size_t len,
                                  int pass_fd)
{
    static kit_msg m;
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(sizeof(int))];
    } control;
    struct iovec iov;
    struct msghdr msg;
    ssize_t n;
    if (len > KIT_MSG_MAX) {
        errno = EMSGSIZE;
        return -1;
    }
    m.h.magic = KIT_PROTO_MAGIC;
    m.h.type = type;
    m.h.a = a;
    m.h.b = b;
    m.h.len = (uint32_t)len;
    if (len)
        memcpy(m.payload, payload, len);
    iov.iov_base = &m;
    iov.iov_len = sizeof m.h + len;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (pass_fd >= 0) {
        memset(&control, 0, sizeof control);
        msg.msg_control = control.space;
        msg.msg_controllen = sizeof control.space;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    do
        n = sendmsg(fd, &msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)(sizeof m.h + len) ? 0 : -1;
}

/* Sends one message; 0 on success, -1 (errno set) otherwise. */
static inline int kit_msg_send(int fd, uint32_t type, uint32_t a, uint32_t b, const void *payload, size_t len)
{
    return kit_msg_send_fd(fd, type, a, b, payload, len, -1);
}

/*
 * Receives one message into m. Returns 1 on a well-formed message, 0 at the
 * end of the stream, -1 on an error or a message that is not one (too
 * short, a wrong magic, type or length): the peer broke the protocol. A
 * descriptor that came with it goes to *passed where passed is not NULL
 * (-1: none); otherwise, and beyond the first, it is closed at once.
 */
static inline int kit_msg_recv_fd(int fd, kit_msg *m, int *passed)
{
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(4 * sizeof(int))];
    } control;
    struct iovec iov = {m, sizeof *m};
    struct msghdr msg;
    ssize_t n;

    if (passed)
        *passed = -1;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.space;
    msg.msg_controllen = sizeof control.space;
    do
        n = recvmsg(fd, &msg, MSG_TRUNC | MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&msg) : NULL; c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
            int got;
            memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
            if (passed && *passed < 0)
                *passed = got;
            else
                close(got);
        }
    }
    if (n == 0)
        return 0;
    if (n < (ssize_t)sizeof m->h || n > (ssize_t)sizeof *m || m->h.magic != KIT_PROTO_MAGIC ||
        m->h.type == 0 || m->h.type >= KIT_MSG_TYPES || m->h.len != (size_t)n - sizeof m->h ||
        (msg.msg_flags & MSG_CTRUNC))
        return -1;
    return 1;
}

static inline int kit_msg_recv(int fd, kit_msg *m) { return kit_msg_recv_fd(fd, m, NULL); }

/* ---- encoding arguments -------------------------------------------------------- */

/* A payload being written; ok turns 0 if it would overflow. */
typedef struct {
    unsigned char *p;
    size_t len, cap;
    int ok;
} kit_writer;

static inline void kit_put_bytes(kit_writer *w, const void *src, size_t n)
{
    if (!w->ok || n > w->cap - w->len) {
        w->ok = 0;
        return;
    }
    memcpy(w->p + w->len, src, n);
    w->len += n;
}

/* A payload being read; ok turns 0 if it runs short. */
typedef struct {
    const unsigned char *p;
    size_t len, at;
    int ok;
} kit_reader;

static inline void kit_get_bytes(kit_reader *r, void *dst, size_t n)
{
    if (!r->ok || n > r->len - r->at) {
        r->ok = 0;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, r->p + r->at, n);
    r->at += n;
}

/* A device pointer on the wire: a buffer number (0: NULL) and an offset. */
typedef struct {
    uint32_t buffer;
    uint32_t pad;
    uint64_t offset;
} kit_wire_ptr;

/* What an argument's type is, for the wire. */
template <typename T> struct kit_wire_kind {
    typedef typename std::remove_cv<typename std::remove_pointer<T>::type>::type pointee;
    static const bool is_ptr = std::is_pointer<T>::value;
    /* an array on the GPU: a pointer to numbers, or void */
    static const bool device = is_ptr && (std::is_arithmetic<pointee>::value || std::is_void<pointee>::value);
    /* a struct on the host, passed by its address */
    static const bool host_struct = is_ptr && std::is_class<pointee>::value;
    /* a struct the callee may change: sent back */
    static const bool out_struct =
        host_struct && !std::is_const<typename std::remove_pointer<T>::type>::value;
    static const bool value = !is_ptr && std::is_trivially_copyable<T>::value;
    static_assert(device || host_struct || value, "an argument of this type cannot cross to the kit's worker");
};

#endif /* KIT_PROTO_H */
