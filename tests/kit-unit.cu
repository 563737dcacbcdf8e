/*
 * kit-unit - exposes the kit's host-side functions to the CPU tests
 * (tests/00-kit.bats), one call per command line. Needs no GPU.
 *
 *   kit-unit parse-size TEXT              the size, or exit 64 with the reason
 *   kit-unit np N                         NP and the largest index r / NP gives
 *   kit-unit default-size L2 FREE BPE ABPE  the default problem size
 *   kit-unit expected-distinct UNITS      expected distinct units among 32 lanes
 *   kit-unit grouped V                    V with thousands separators
 *   kit-unit median V...                  the median of the values
 *   kit-unit trace SMS MAXWARPS SM:START:END...
 *                                         achieved occupancy and SM efficiency of
 *                                         per-warp records (kit_trace.h); SM - is
 *                                         a warp that never accessed memory
 *   kit-unit trace-waves SMS MAXWARPS WARPS WAVES
 *                                         the same for SMS SMs that each run WAVES
 *                                         waves of WARPS warps of 100 ns, in turn
 *   kit-unit banner TITLE                 a lab's heading for a stand-in GPU
 *                                         (with the platform's line on WSL)
 *   kit-unit check-error ERROR CALL       kit_check's message and exit status for
 *                                         ERROR (memory-allocation, no-device,
 *                                         insufficient-driver) returned by CALL
 *   kit-unit overlap-possible CHUNKS IN KERNEL OUT MARGIN
 *                                         the share of the kernels' time copies could
 *                                         run beside (kit_timeline.h) in a pipeline of
 *                                         CHUNKS chunks of these times (ms)
 *   kit-unit focus FOCUS ALSO KEY...      the runs each row KEY gets under --focus FOCUS
 *                                         with kit_focus_also ALSO (- for none): 0 until
 *                                         steady, 1 once (kit_policy_for)
 *   kit-unit table [own]                  a table of four rows (one wrong, one
 *                                         never checked) declared once (kit_table.h):
 *                                         the table, the CSV, the key: value lines;
 *                                         own: with the lab's label, check word,
 *                                         correct, CSV rows, blank cells and part
 *   kit-unit host-share                   the judge's shared host memory
 *                                         (kit_judge_host_alloc) handed to a child
 *                                         over the kit's socket (kit_proto.h), as the
 *                                         judge hands it to its worker: what the
 *                                         child sees and what it may do with it
 */
#include "kit_args.h"
#include "kit_counted.h"
#include "kit_device.h"
#include "kit_report.h"
#include "kit_rng.h"
#include "kit_table.h"
#include "kit_timeline.h"
#include "kit_timing.h"
#include "kit_trace.h"
/* The judge's side of grading, for host-share (it needs no GPU for that). */
#include "kit_judge.h"
#include <dirent.h>
#include <sys/wait.h>

/* The table of `kit-unit table`: a time, a ratio to the first row shown as
 * "x", a count shown only where the row has shared requests. */
static double unit_time(const kit_row *r, const void *) { return r->timed ? r->t.median_ms : NAN; }
static double unit_ratio(const kit_row *r, const void *x)
{
    const kit_row *first = (const kit_row *)x;
    return r->timed && first->timed ? r->t.median_ms / first->t.median_ms : NAN;
}
static double unit_wavefronts(const kit_row *r, const void *) { return kit_per(&r->counts, KIT_SH_LD_WAVEFRONTS, KIT_SH_LD_REQUESTS); }
static int unit_has_shared(const kit_row *r, const void *) { return r->counts.c[KIT_SH_LD_REQUESTS] != 0; }
/* `kit-unit table own`: the same rows under the lab's own label (a
 * number), check word (FLAWED for the third), correct (the first only),
 * CSV lines (not the never-checked fourth), blank where not shown, as
 * part 2 of a CSV. */
static void unit_label(const kit_row *r, const void *x, char *text, size_t size)
{
    snprintf(text, size, "row %d, %s", (int)(r - (const kit_row *)x) + 1, r->key);
}
static const char *unit_check(const kit_row *r, const void *x)
{
    return r - (const kit_row *)x == 2 ? "FLAWED" : kit_row_check_word(r);
}
static int unit_correct(const kit_row *r, const void *x) { return r == (const kit_row *)x; }
static int unit_in_csv(const kit_row *r, const void *) { return r->wrong >= 0; }
static const kit_column unit_columns[] = {
    {"time (ms)", 10, 3, "", "time_ms", 6, NULL, 0, unit_time, NULL},
    {"vs first", 9, 1, "x", "time_vs_first", 4, "ratio-%s", 2, unit_ratio, NULL},
    {NULL, 0, 0, NULL, "hidden", 1, NULL, 0, unit_time, NULL},
    {"sh wf", 6, 1, "", NULL, 0, "wavefronts-%s", 4, unit_wavefronts, unit_has_shared},
};

/* How many descriptors this process has open (/proc/self/fd, less its own). */
static int open_descriptors(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static void print_trace(const kit_trace_stats *st)
{
    printf("warps: %llu\nsms-used: %d\nspan-ns: %.0f\nsm-efficiency: %.4f\nachieved-occupancy: %.4f\n"
           "peak-warps-per-sm: %d\n",
           st->warps, st->sms_used, st->span_ms * 1e6, st->sm_efficiency, st->achieved_occupancy,
           st->peak_warps_per_sm);
}

static unsigned long long arg_u64(const char *s)
{
    unsigned long long v;
    if (kit_parse_u64(s, &v) != 0)
        kit_die(KIT_EXIT_USAGE, "'%s' is not an unsigned integer", s);
    return v;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    kit_program = "kit-unit";

    if (strcmp(cmd, "parse-size") == 0 && argc == 3) {
        unsigned long long v;
        char why[64];
        if (kit_parse_size(argv[2], &v, why, sizeof why) != 0)
            kit_die(KIT_EXIT_USAGE, "'%s' %s", argv[2], why);
        printf("%llu\n", v);
    } else if (strcmp(cmd, "np") == 0 && argc == 3) {
        unsigned long long n = arg_u64(argv[2]);
        unsigned int np;
        if (n < 2 || n > 0xffffffffull)
            kit_die(KIT_EXIT_USAGE, "n must be from 2 to 2^32 - 1");
        np = kit_np(n);
        printf("np: %u\nmax-index: %u\nmin-index: %u\n", np, kit_map_to_range(0xffffffffu, np),
               kit_map_to_range(0u, np));
    } else if (strcmp(cmd, "default-size") == 0 && argc == 6) {
        printf("%llu\n", kit_default_size((long long)arg_u64(argv[2]), (long long)arg_u64(argv[3]),
                                          (unsigned)arg_u64(argv[4]), (unsigned)arg_u64(argv[5])));
    } else if (strcmp(cmd, "expected-distinct") == 0 && argc == 3) {
        printf("%.4f\n", kit_expected_distinct(atof(argv[2])));
    } else if (strcmp(cmd, "grouped") == 0 && argc == 3) {
        printf("%s\n", kit_grouped(arg_u64(argv[2])));
    } else if (strcmp(cmd, "median") == 0 && argc >= 3) {
        float v[64];
        int n = argc - 2 < 64 ? argc - 2 : 64;
        for (int i = 0; i < n; i++)
            v[i] = (float)atof(argv[i + 2]);
        printf("%g\n", kit_median(v, n));
    } else if (strcmp(cmd, "trace") == 0 && argc >= 5) {
        int n = argc - 4;
        kit_warp_record *r = (kit_warp_record *)kit_host_alloc((size_t)n * sizeof *r);
        kit_trace_stats st;
        for (int i = 0; i < n; i++) {
            unsigned int sm;
            unsigned long long start, end;
            memset(&r[i], 0, sizeof r[i]);
            r[i].start = ~0ull;
            if (strncmp(argv[i + 4], "-:", 2) == 0)
                continue;
            if (sscanf(argv[i + 4], "%u:%llu:%llu", &sm, &start, &end) != 3)
                kit_die(KIT_EXIT_USAGE, "'%s' is not SM:START:END", argv[i + 4]);
            r[i].smid = sm;
            r[i].start = start;
            r[i].end = end;
            r[i].used = 1;
        }
        st = kit_trace_analyze(r, (size_t)n, (int)arg_u64(argv[2]), (int)arg_u64(argv[3]));
        print_trace(&st);
        free(r);
    } else if (strcmp(cmd, "trace-waves") == 0 && argc == 6) {
        unsigned long long sms = arg_u64(argv[2]), warps = arg_u64(argv[4]), waves = arg_u64(argv[5]);
        unsigned long long n = sms * warps * waves;
        kit_warp_record *r = (kit_warp_record *)kit_host_alloc((size_t)n * sizeof *r);
        kit_trace_stats st;
        /* In grid order: wave by wave, SM by SM, as blocks are handed out. */
        for (unsigned long long i = 0; i < n; i++) {
            unsigned long long wave = i / (sms * warps);
            r[i].smid = (unsigned int)(i / warps % sms);
            r[i].start = 1000 + 100 * wave;
            r[i].end = r[i].start + 100;
            r[i].used = 1;
        }
        st = kit_trace_analyze(r, (size_t)n, (int)sms, (int)arg_u64(argv[3]));
        print_trace(&st);
        free(r);
    } else if (strcmp(cmd, "banner") == 0 && argc == 3) {
        /* A lab's heading, for a GPU that is not there: what the platform adds. */
        kit_device d;
        memset(&d, 0, sizeof d);
        snprintf(d.name, sizeof d.name, "Some GPU");
        d.cc_major = 8;
        d.cc_minor = 6;
        d.sms = 30;
        kit_banner(argv[2], &d);
    } else if (strcmp(cmd, "check-error") == 0 && argc == 4) {
        /* kit_check's verdict on an error of a call, as a program would meet it. */
        cudaError_t e = strcmp(argv[2], "memory-allocation") == 0     ? cudaErrorMemoryAllocation
                        : strcmp(argv[2], "no-device") == 0           ? cudaErrorNoDevice
                        : strcmp(argv[2], "insufficient-driver") == 0 ? cudaErrorInsufficientDriver
                                                                      : cudaSuccess;
        if (e == cudaSuccess)
            kit_die(KIT_EXIT_USAGE, "check-error: memory-allocation, no-device or insufficient-driver");
        kit_check(e, argv[3], "tests/kit-unit.cu", __LINE__);
    } else if (strcmp(cmd, "overlap-possible") == 0 && argc == 7) {
        /* A pipeline's spans, chunk by chunk in turn: where they lie does not matter. */
        int n = atoi(argv[2]);
        double t[3] = {atof(argv[3]), atof(argv[4]), atof(argv[5])}, at = 0;
        const int op[3] = {KIT_OP_H2D, KIT_OP_KERNEL, KIT_OP_D2H};
        kit_span *sp;
        if (n < 1 || n > 1024)
            kit_die(KIT_EXIT_USAGE, "overlap-possible: CHUNKS from 1 to 1024");
        sp = (kit_span *)kit_host_alloc((size_t)n * 3 * sizeof *sp);
        for (int i = 0; i < 3 * n; i++) {
            sp[i].op = op[i % 3];
            sp[i].row = i / 3;
            sp[i].stream = i / 3;
            sp[i].start = at;
            sp[i].end = at += t[i % 3];
        }
        printf("%.4f\n", kit_overlap_possible(sp, 3 * n, n, atof(argv[6])));
        free(sp);
    } else if (strcmp(cmd, "focus") == 0 && argc >= 5) {
        kit_policy p = kit_policy_default(0);
        kit_focus = argv[2];
        kit_focus_also = strcmp(argv[3], "-") == 0 ? NULL : argv[3];
        for (int i = 4; i < argc; i++)
            printf("%s: %d\n", argv[i], kit_policy_for(&p, argv[i]).reps);
        printf("focus-seen: %s\n", kit_focus_seen ? "yes" : "no");
    } else if (strcmp(cmd, "host-share") == 0 && argc == 2) {
        /* The judge's memory, a pattern in it, handed over with its descriptor. */
        size_t bytes = (1u << 20) + 12;
        unsigned int *p = (unsigned int *)kit_judge_host_alloc(bytes);
        int sv[2], st = 0;
        kit_msg m;
        pid_t child;
        for (size_t i = 0; i < bytes / 4; i++)
            p[i] = (unsigned int)i * 2654435761u;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
            kit_die(KIT_EXIT_FAIL, "socketpair: %s", strerror(errno));
        child = fork();
        if (child == 0) {
            /* The worker's side: map it, read it, write one word, try to resize it. */
            int fd = -1, ok = 1, shrink, grow, before, after;
            uint64_t size = 0;
            unsigned int *q;
            char answer[160];
            kit_reader r;
            if (kit_msg_recv_fd(sv[1], &m, &fd) != 1 || fd < 0 || m.h.type != KIT_MSG_MAP || m.h.b != KIT_MAP_HOST)
                _exit(3);
            r.p = m.payload;
            r.len = m.h.len;
            r.at = 0;
            r.ok = 1;
            kit_get_bytes(&r, &size, sizeof size);
            q = (unsigned int *)mmap(NULL, kit_host_pages(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (q == MAP_FAILED)
                _exit(4);
            for (size_t i = 0; i < size / 4; i++)
                ok &= q[i] == (unsigned int)i * 2654435761u;
            q[7] = 0xfeedbeefu;
            shrink = ftruncate(fd, 0) == 0;
            grow = ftruncate(fd, (off_t)(4 * size)) == 0;
            /* A descriptor that comes with a message that takes none is closed on arrival. */
            before = open_descriptors();
            if (kit_msg_recv(sv[1], &m) != 1)
                _exit(5);
            after = open_descriptors();
            snprintf(answer, sizeof answer, "%llu %d %d %d %d", (unsigned long long)size, ok, shrink, grow,
                     after == before);
            kit_msg_send(sv[1], KIT_MSG_RETURN, 0, 0, answer, strlen(answer) + 1);
            _exit(0);
        }
        close(sv[1]);
        {
            uint64_t size = bytes;
            int spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
            unsigned long long got_size = 0;
            int ok = 0, shrink = 1, grow = 1, word_seen, stray_closed = 0;
            if (kit_msg_send_fd(sv[0], KIT_MSG_MAP, 1, KIT_MAP_HOST, &size, sizeof size,
                                kit_judge.buf[kit_judge.nbuf - 1].host_fd) != 0)
                kit_die(KIT_EXIT_FAIL, "send: %s", strerror(errno));
            /* A message with a descriptor the worker was not told of. */
            if (kit_msg_send_fd(sv[0], KIT_MSG_BYE, 0, 0, NULL, 0, spare) != 0)
                kit_die(KIT_EXIT_FAIL, "send: %s", strerror(errno));
            close(spare);
            if (kit_msg_recv(sv[0], &m) != 1 || m.h.type != KIT_MSG_RETURN ||
                sscanf((const char *)m.payload, "%llu %d %d %d %d", &got_size, &ok, &shrink, &grow, &stray_closed) != 5)
                kit_die(KIT_EXIT_FAIL, "host-share: the child did not answer");
            waitpid(child, &st, 0);
            word_seen = p[7] == 0xfeedbeefu;
            printf("size: %llu\nchild-sees-pattern: %s\nparent-sees-child-write: %s\n"
                   "child-shrink: %s\nchild-grow: %s\nstray-descriptor: %s\n",
                   got_size, ok ? "yes" : "no", word_seen ? "yes" : "no", shrink ? "done" : "refused",
                   grow ? "done" : "refused", stray_closed ? "closed" : "kept");
            kit_judge_host_free(p);
        }
    } else if (strcmp(cmd, "table") == 0 && (argc == 2 || (argc == 3 && strcmp(argv[2], "own") == 0))) {
        kit_row rows[4];
        kit_device d;
        memset(&d, 0, sizeof d);
        snprintf(d.name, sizeof d.name, "Some GPU");
        kit_row_name(&rows[0], "first", NULL, "first kernel");
        rows[0].wrong = 0, rows[0].timed = 1, rows[0].t.median_ms = 2.0f;
        rows[0].counts.c[KIT_SH_LD_REQUESTS] = 4, rows[0].counts.c[KIT_SH_LD_WAVEFRONTS] = 128;
        kit_row_name(&rows[1], "second", "TODO(1)", "second kernel");
        rows[1].wrong = 5;
        kit_row_name(&rows[2], "third", NULL, "third kernel");
        rows[2].wrong = 0, rows[2].timed = 1, rows[2].t.median_ms = 5.0f;
        kit_row_name(&rows[3], "fourth", NULL, "fourth kernel"); /* never checked */
        kit_table t = {"kernel", 14, rows, 4, unit_columns, KIT_COUNT(unit_columns), &rows[0]};
        if (argc == 3) {
            kit_table own = {"row", 14, rows, 4, unit_columns, KIT_COUNT(unit_columns), &rows[0],
                             unit_label, unit_check, unit_correct, unit_in_csv, "which", "", 2};
            t = own;
        }
        kit_table_print(&t);
        kit_table_csv(stdout, &t, &d, 1000, 7, 1);
        kit_table_kv(&t);
    } else {
        kit_die(KIT_EXIT_USAGE, "usage: kit-unit parse-size|np|default-size|expected-distinct|"
                                "grouped|median|trace|trace-waves|banner|check-error|overlap-possible|focus|table|host-share "
                                "ARGS (see the source)");
    }
    return 0;
}
