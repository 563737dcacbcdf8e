/*
 * kit_platform.h - where the kit runs: a Linux host, or Windows through
 * WSL 2 (or WSL 1, which has no CUDA), told from what the machine itself
 * says, never from a guess.
 *
 * Two facts decide it:
 *   - the kernel's own release, /proc/sys/kernel/osrelease (or the third
 *     word of /proc/version): WSL 2's kernels are "microsoft-standard"
 *     ("4.19.128-microsoft-standard", "5.15.133.1-microsoft-standard-WSL2"),
 *     WSL 1's "...-Microsoft" ("4.4.0-19041-Microsoft");
 *   - the WSL driver's library: on WSL 2 the Windows NVIDIA driver serves
 *     the GPU to Linux as /usr/lib/wsl/lib/libcuda.so*, beside /dev/dxg
 *     (NVIDIA, CUDA on WSL User Guide, "CUDA Support for WSL 2"; Microsoft,
 *     "DirectX is coming to the Windows Subsystem for Linux").
 * A kernel that says WSL 2, or a Linux kernel beside the WSL driver's
 * library (a self-built WSL 2 kernel may drop the word), is WSL 2.
 *
 * On WSL 2 NVIDIA documents what differs from a Linux host (README,
 * "Windows"): pinned host memory is limited, GPU work reaches the GPU
 * through the Windows driver (WDDM), nvidia-smi reports less, profilers
 * need a recent Windows and driver, and no Linux NVIDIA driver may be
 * installed inside the guest. The labs say so in their heading, and
 * `kit-query --platform` says it without touching the GPU (the tests and
 * the grader ask it).
 *
 * For the kit's own tests only: KIT_TEST_ROOT=DIR reads every one of
 * these files under DIR instead of /, so that recorded kernels and library
 * layouts can stand in for real machines; whatever it changes says so
 * (platform-test-root, and the heading).
 */
#ifndef KIT_PLATFORM_H
#define KIT_PLATFORM_H

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { KIT_PLATFORM_LINUX = 0, KIT_PLATFORM_WSL1 = 1, KIT_PLATFORM_WSL2 = 2 };

typedef struct {
    int kind;                /* KIT_PLATFORM_... */
    int kernel_says_wsl;     /* 0, 1 or 2: what the release alone says */
    char root[512];          /* "" (the machine) or KIT_TEST_ROOT */
    char release[160];       /* the kernel's release; "" when neither file could be read */
    const char *release_from; /* the file it came from */
    char wsl_libcuda[64];    /* the WSL driver's libcuda (path on the machine), "" if none */
    int dxg;                 /* /dev/dxg: the GPU paravirtualisation device */
    char guest_libcuda[64];  /* a Linux driver's libcuda inside the guest, "" if none */
} kit_platform;

/* Where the CUDA on WSL User Guide is; the README's section quotes it. */
#define KIT_WSL_GUIDE "NVIDIA, CUDA on WSL User Guide"

/* root + path, in buf. */
static inline const char *kit_platform_path(const kit_platform *p, const char *path, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", p->root, path);
    return buf;
}

/* The first line of a file under the root, without its newline; 0 if unreadable. */
static inline int kit_platform_read_line(const kit_platform *p, const char *path, char *out, size_t len)
{
    char full[1024];
    FILE *f = fopen(kit_platform_path(p, path, full, sizeof full), "r");
    size_t n;

    if (!f)
        return 0;
    if (!fgets(out, (int)len, f)) {
        fclose(f);
        return 0;
    }
    fclose(f);
    n = strlen(out);
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' '))
        out[--n] = '\0';
    return n > 0;
}

static inline int kit_platform_exists(const kit_platform *p, const char *path)
{
    char full[1024];
    struct stat st;
    return stat(kit_platform_path(p, path, full, sizeof full), &st) == 0;
}

/* What a kernel release alone says: 2 (WSL 2), 1 (WSL 1) or 0 (another Linux). */
static inline int kit_platform_release_kind(const char *release)
{
    char low[160];
    size_t i;

    for (i = 0; release[i] && i + 1 < sizeof low; i++)
        low[i] = (char)tolower((unsigned char)release[i]);
    low[i] = '\0';
    if (strstr(low, "-microsoft-standard") || strstr(low, "-wsl2"))
        return 2;
    if (strstr(low, "-microsoft"))
        return 1;
    return 0;
}

/*
 * Reads the facts under root ("" for the machine itself) into p. Pure file
 * reading: no CUDA call, so it works where no GPU or driver is.
 */
static inline void kit_platform_detect_at(const char *root, kit_platform *p)
{
    static const char *const wsl_libs[] = {"/usr/lib/wsl/lib/libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so",
                                           "/usr/lib/wsl/lib/libcuda.so.1.1"};
    static const char *const guest_libs[] = {"/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1",
                                             "/usr/lib/aarch64-linux-gnu/libcuda.so.1", "/usr/lib/libcuda.so.1"};
    char line[512];

    memset(p, 0, sizeof *p);
    snprintf(p->root, sizeof p->root, "%s", root ? root : "");
    p->release_from = "";
    if (kit_platform_read_line(p, "/proc/sys/kernel/osrelease", line, sizeof line)) {
        snprintf(p->release, sizeof p->release, "%.159s", line);
        p->release_from = "/proc/sys/kernel/osrelease";
    } else if (kit_platform_read_line(p, "/proc/version", line, sizeof line) &&
               sscanf(line, "Linux version %159s", p->release) == 1) {
        p->release_from = "/proc/version";
    }
    p->kernel_says_wsl = kit_platform_release_kind(p->release);
    for (size_t i = 0; i < sizeof wsl_libs / sizeof wsl_libs[0] && !p->wsl_libcuda[0]; i++)
        if (kit_platform_exists(p, wsl_libs[i]))
            snprintf(p->wsl_libcuda, sizeof p->wsl_libcuda, "%s", wsl_libs[i]);
    p->dxg = kit_platform_exists(p, "/dev/dxg");
    p->kind = p->kernel_says_wsl == 1   ? KIT_PLATFORM_WSL1
              : p->kernel_says_wsl == 2 ? KIT_PLATFORM_WSL2
              : p->wsl_libcuda[0]       ? KIT_PLATFORM_WSL2
                                        : KIT_PLATFORM_LINUX;
    /* A Linux driver's libcuda in the guest, unless it is a link to the WSL one. */
    if (p->kind == KIT_PLATFORM_WSL2) {
        char full[1024], real[PATH_MAX], wsl[PATH_MAX];
        if (!realpath(kit_platform_path(p, "/usr/lib/wsl", full, sizeof full), wsl))
            wsl[0] = '\0';
        for (size_t i = 0; i < sizeof guest_libs / sizeof guest_libs[0] && !p->guest_libcuda[0]; i++) {
            size_t n = strlen(wsl);
            if (!kit_platform_exists(p, guest_libs[i]))
                continue;
            if (n && realpath(kit_platform_path(p, guest_libs[i], full, sizeof full), real) &&
                strncmp(real, wsl, n) == 0 && real[n] == '/')
                continue;
            snprintf(p->guest_libcuda, sizeof p->guest_libcuda, "%s", guest_libs[i]);
        }
    }
}

/* The machine's platform, read once per program (KIT_TEST_ROOT: a test's). */
static inline const kit_platform *kit_platform_get(void)
{
    static kit_platform p;
    static int done;
    if (!done) {
        const char *root = getenv("KIT_TEST_ROOT");
        kit_platform_detect_at(root && *root ? root : "", &p);
        done = 1;
    }
    return &p;
}

static inline int kit_on_wsl2(void) { return kit_platform_get()->kind == KIT_PLATFORM_WSL2; }

/* The compute-sanitizer tool this run is under, or NULL: `make sanitize`
 * and the grader's compute-sanitizer runs say so (KIT_UNDER_SANITIZER).
 * Under its instrumentation kernels and copies do not overlap as they
 * would, and times mean nothing. */
static inline const char *kit_under_sanitizer(void)
{
    const char *t = getenv("KIT_UNDER_SANITIZER");
    return t && *t ? t : NULL;
}

/* The `platform:` value. */
static inline const char *kit_platform_name(const kit_platform *p)
{
    return p->kind == KIT_PLATFORM_WSL2 ? "wsl2" : p->kind == KIT_PLATFORM_WSL1 ? "wsl1" : "linux";
}

/* In words, for people: "WSL 2 (Linux 5.15...-WSL2, the GPU through the Windows driver)". */
static inline const char *kit_platform_words(const kit_platform *p, char *buf, size_t len)
{
    const char *rel = p->release[0] ? p->release : "release unknown";
    if (p->kind == KIT_PLATFORM_WSL2)
        snprintf(buf, len, "WSL 2 (Linux %s%s), %s", rel,
                 p->kernel_says_wsl == 2 ? "" : "; its release does not say WSL, the WSL driver's library does",
                 p->wsl_libcuda[0] ? "the GPU through the Windows driver" : "no GPU: the Windows driver's libcuda is not in /usr/lib/wsl/lib");
    else if (p->kind == KIT_PLATFORM_WSL1)
        snprintf(buf, len, "WSL 1 (Linux %s): no CUDA; WSL 2 has it", rel);
    else
        snprintf(buf, len, "Linux %s", rel);
    return buf;
}

/*
 * What is wrong with this set-up, for people (NULL when nothing is): WSL 1,
 * WSL 2 without the Windows driver's library, or a Linux driver installed
 * inside WSL 2, which NVIDIA's guide forbids.
 */
static inline const char *kit_platform_problem(const kit_platform *p, char *buf, size_t len)
{
    if (p->kind == KIT_PLATFORM_WSL1)
        snprintf(buf, len, "this distribution runs under WSL 1, which has no GPU: in PowerShell, `wsl -l -v` lists "
                           "it and `wsl --set-version <name> 2` moves it to WSL 2 (" KIT_WSL_GUIDE
                           ": CUDA is for WSL 2)");
    else if (p->kind == KIT_PLATFORM_WSL2 && !p->wsl_libcuda[0])
        snprintf(buf, len, "WSL 2 without the WSL driver's libcuda in /usr/lib/wsl/lib: install or update the NVIDIA "
                           "driver on Windows (never in Linux), then run `wsl --shutdown` in PowerShell and open "
                           "the distribution again (" KIT_WSL_GUIDE ", step 1)");
    else if (p->kind == KIT_PLATFORM_WSL2 && p->guest_libcuda[0])
        snprintf(buf, len, "a Linux NVIDIA driver's %s is installed inside WSL 2; NVIDIA says no Linux driver may be "
                           "installed there (" KIT_WSL_GUIDE ", \"CUDA Support for WSL 2\"): remove the package "
                           "that owns it (`dpkg -S %s`; install cuda-toolkit-X-Y, never cuda or cuda-drivers)",
                 p->guest_libcuda, p->guest_libcuda);
    else
        return NULL;
    return buf;
}

/*
 * Whether two processes can share GPU memory here (what a judge that never
 * runs student code needs with its worker), with the reason when not.
 */
static inline int kit_platform_ipc(const kit_platform *p, const char **why)
{
    if (p->kind == KIT_PLATFORM_WSL2) {
        *why = "WSL 2: NVIDIA's CUDA on WSL User Guide lists the legacy CUDA IPC calls only, from driver R510, "
               "and no sharing of GPU memory by file descriptor; the kit counts on neither there; not measured";
        return 0;
    }
    if (p->kind == KIT_PLATFORM_WSL1) {
        *why = "WSL 1: no CUDA";
        return 0;
    }
    *why = "";
    return 1;
}

/* One line for a lab's heading where the platform is not a Linux host; nothing on Linux. */
static inline void kit_platform_banner(void)
{
    const kit_platform *p = kit_platform_get();
    char words[512], problem[512];

    if (p->kind == KIT_PLATFORM_LINUX && !p->root[0])
        return;
    printf("Platform: %s", kit_platform_words(p, words, sizeof words));
    if (p->kind == KIT_PLATFORM_WSL2)
        printf(": pinned memory is limited and Windows schedules the GPU's work, so times and overlap can "
               "differ from a Linux host (README.md, \"Windows\")");
    if (p->root[0])
        printf(" [test root %s]", p->root);
    printf("\n");
    if (kit_platform_problem(p, problem, sizeof problem))
        printf("Platform problem: %s\n", problem);
}

/*
 * The advice for an error that means "no usable GPU here", on WSL: the
 * driver is Windows'. NULL on a Linux host.
 */
static inline const char *kit_platform_driver_advice(void)
{
    const kit_platform *p = kit_platform_get();
    static char buf[640];
    const char *problem = kit_platform_problem(p, buf, sizeof buf);

    if (p->kind == KIT_PLATFORM_LINUX)
        return NULL;
    if (problem)
        return problem;
    return "on WSL 2 the GPU's driver is the Windows one: install or update the NVIDIA driver on Windows "
           "(never a Linux driver inside WSL), then run `wsl --shutdown` in PowerShell and open the distribution "
           "again; /usr/lib/wsl/lib/nvidia-smi lists the GPU when it is served (" KIT_WSL_GUIDE ")";
}

/* Pinning host memory failed: on WSL 2, the reason. NULL elsewhere. */
static inline const char *kit_platform_pinned_advice(void)
{
    if (!kit_on_wsl2())
        return NULL;
    return "WSL 2 limits the host memory a program can pin (" KIT_WSL_GUIDE ", \"Known Limitations for Linux "
           "CUDA Applications\": \"Pinned system memory ... availability for applications is limited\"): "
           "run it with a smaller --size";
}

#endif /* KIT_PLATFORM_H */
