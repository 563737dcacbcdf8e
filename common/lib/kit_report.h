/*
 * kit_report.h - what a program prints.
 *
 * First a table for people; then one `key: value` line per fact
 * (lowercase, hyphenated keys), which is all that tests read; last
 * `result: PASS` or `result: FAIL`. Diagnostics go to stderr.
 *
 * The grader (common/grade/grade.sh) reads the same lines from a channel
 * of its own, never from stdout, which the student's code can also print
 * to: a file descriptor it opens before the program starts, named by
 * KIT_RESULT_FD, and a token, KIT_RESULT_TOKEN. Before main (and so before
 * any of the student's code, which may have no initialisers of its own),
 * the harness takes both and wipes them from the environment; every
 * kit_kv line then also goes to the channel, and kit_finish ends it with
 * `result-token: TOKEN`. A program that ends otherwise leaves no token.
 */
#ifndef KIT_REPORT_H
#define KIT_REPORT_H

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "kit_args.h"
#include "kit_device.h"

/* The grader's result channel; fd -1: none. Weak: one for the program. */
typedef struct {
    int fd;
    char token[72];
} kit_result_channel;
__attribute__((weak)) kit_result_channel kit_result = {-1, ""};

#ifndef KIT_STUDENT_BUILD
/* Runs before main in every harness (never in a student's build). */
__attribute__((constructor)) static void kit_result_open(void)
{
    char *fd_text = getenv("KIT_RESULT_FD"), *token = getenv("KIT_RESULT_TOKEN");
    char *end = NULL;
    long fd;
    size_t len;

    if (kit_result.fd >= 0 || !fd_text || !token)
        return;
    fd = strtol(fd_text, &end, 10);
    len = strlen(token);
    if (end != fd_text && *end == '\0' && fd > 2 && fd < 65536 && len > 0 && len < sizeof kit_result.token &&
        fcntl((int)fd, F_SETFD, FD_CLOEXEC) == 0) {
        kit_result.fd = (int)fd;
        memcpy(kit_result.token, token, len + 1);
    }
    /* Gone from the environment, and from /proc/self/environ. */
    memset(token, 'x', len);
    memset(fd_text, 'x', strlen(fd_text));
    unsetenv("KIT_RESULT_TOKEN");
    unsetenv("KIT_RESULT_FD");
}
#endif

/* Writes all of buf[0..len) to the channel (if any). */
static inline void kit_result_write(const char *buf, size_t len)
{
    while (kit_result.fd >= 0 && len > 0) {
        ssize_t n = write(kit_result.fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            kit_result.fd = -1;
            break;
        }
        buf += n;
        len -= (size_t)n;
    }
}

static inline void kit_kv(const char *key, const char *fmt, ...)
{
    va_list ap;
    printf("%s: ", key);
    va_start(ap, fmt);
    if (kit_result.fd >= 0) {
        char line[4096];
        va_list copy;
        int head = snprintf(line, sizeof line, "%s: ", key), body;
        va_copy(copy, ap);
        body = vsnprintf(line + head, sizeof line - (size_t)head - 1, fmt, copy);
        va_end(copy);
        if (head > 0 && body >= 0) {
            size_t len = strlen(line);
            line[len] = '\n';
            kit_result_write(line, len + 1);
        }
    }
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

/* 67108864 -> "67,108,864", in one of four rotating buffers. */
static inline const char *kit_grouped(unsigned long long v)
{
    static char bufs[4][32];
    static int next;
    char tmp[32], *out = bufs[next++ % 4];
    int len, i, j = 0;

    len = snprintf(tmp, sizeof tmp, "%llu", v);
    for (i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            out[j++] = ',';
        out[j++] = tmp[i];
    }
    out[j] = '\0';
    return out;
}

/* The heading of a lab's human output. */
static inline void kit_banner(const char *title, const kit_device *d)
{
    printf("%s\n", title);
    printf("GPU %d: %s, compute capability %d.%d, %d SMs, %.1f MiB L2, %.1f GiB memory\n",
           d->ordinal, d->name, d->cc_major, d->cc_minor, d->sms, d->l2_bytes / 1048576.0,
           d->global_bytes / 1073741824.0);
    kit_platform_banner(); /* WSL 2 says so; a Linux host prints nothing */
    printf("\n");
}

/* The device facts every program reports as key: value lines. */
static inline void kit_kv_device(const kit_device *d)
{
    kit_kv("device", "%s", d->name);
    kit_kv("device-ordinal", "%d", d->ordinal);
    kit_kv("compute-capability", "%d.%d", d->cc_major, d->cc_minor);
    kit_kv("sms", "%d", d->sms);
    kit_kv("l2-bytes", "%lld", d->l2_bytes);
    kit_kv("max-threads-per-sm", "%d", d->max_threads_per_sm);
    kit_kv("max-blocks-per-sm", "%d", d->max_blocks_per_sm);
    kit_kv("max-warps-per-sm", "%d", d->max_warps_per_sm);
    kit_kv("registers-per-sm", "%d", d->regs_per_sm);
    kit_kv("shared-memory-per-sm", "%lld", d->smem_per_sm);
    kit_kv("global-memory-bytes", "%lld", d->global_bytes);
    kit_kv("copy-engines", "%d", d->copy_engines);
    kit_kv("driver-version", "%d.%d", d->driver_version / 1000, (d->driver_version % 1000) / 10);
    kit_kv("runtime-version", "%d.%d", d->runtime_version / 1000,
           (d->runtime_version % 1000) / 10);
    kit_kv("platform", "%s", kit_platform_name(kit_platform_get()));
}

/*
 * Checks early that the file of an output option can be written (exit 64
 * if not), without creating it: a program that cannot run must not leave
 * an empty one. '-' is stdout.
 */
static inline void kit_output_check(const char *option, const char *path)
{
    char dir[4096];
    const char *slash;

    if (!path || strcmp(path, "-") == 0)
        return;
    slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) + (slash == path), path);
    if (access(dir, W_OK) != 0)
        kit_die(KIT_EXIT_USAGE, "%s %s: cannot write in %s: %s", option, path, dir, strerror(errno));
    if (access(path, F_OK) == 0 && access(path, W_OK) != 0)
        kit_die(KIT_EXIT_USAGE, "%s %s: cannot write: %s", option, path, strerror(errno));
}

/* The same for --csv. */
static inline void kit_csv_check(const char *path) { kit_output_check("--csv", path); }

/* The columns every lab's CSV starts with: which GPU, size and seed. */
static inline void kit_csv_prefix(FILE *f, const kit_device *d, unsigned long long size,
                                  unsigned long long seed)
{
    fprintf(f, "\"%s\",%llu,%llu,", d->name, size, seed);
}

/* Opens the --csv destination: NULL when none was asked for. */
static inline FILE *kit_csv_open(const char *path)
{
    FILE *f;
    if (!path)
        return NULL;
    if (strcmp(path, "-") == 0)
        return stdout;
    f = fopen(path, "w");
    if (!f)
        kit_die(KIT_EXIT_USAGE, "--csv %s: cannot write: %s", path, strerror(errno));
    return f;
}

static inline void kit_csv_close(FILE *f)
{
    if (f && f != stdout)
        fclose(f);
}

/* Prints the verdict line and returns the exit code for it; ends the
 * grader's channel, if there is one, with its token. */
static inline int kit_finish(int pass)
{
    if (kit_focus && !kit_focus_seen)
        kit_die(KIT_EXIT_USAGE, "--focus %s: no row of that key was timed (the keys are those of the "
                                "time-KEY-ms lines)", kit_focus);
    fflush(stderr);
    kit_kv("result", pass ? "PASS" : "FAIL");
    fflush(stdout);
    if (kit_result.fd >= 0) {
        char line[96];
        int len = snprintf(line, sizeof line, "result-token: %s\n", kit_result.token);
        kit_result_write(line, (size_t)len);
        close(kit_result.fd);
        kit_result.fd = -1;
    }
    return pass ? KIT_EXIT_PASS : KIT_EXIT_FAIL;
}

#endif /* KIT_REPORT_H */
