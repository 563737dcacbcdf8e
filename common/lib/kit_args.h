/*
 * kit_args.h - one command-line parser for every program of the kit.
 *
 * A program lists its options in a table of kit_option (the common ones
 * come from KIT_LAB_OPTIONS) and calls kit_parse_args. Options take
 * their value as `--size 4M` or `--size=4M`. Anything the table does not
 * accept ends the program with a message naming the option and the reason,
 * and exit code KIT_EXIT_USAGE; --help prints the table and exits 0.
 *
 * Sizes are element counts written as 4194304, 4M (K, M, G are powers of
 * 1024; Ki, Mi, Gi too) or 2^22.
 */
#ifndef KIT_ARGS_H
#define KIT_ARGS_H

#include <errno.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#include "kit_check.h"

typedef enum {
    KIT_OPT_FLAG,   /* int, set to 1 when present            */
    KIT_OPT_INT,    /* int within [min, max]                  */
    KIT_OPT_SIZE,   /* unsigned long long within [min, max]   */
    KIT_OPT_U64,    /* unsigned long long, any value          */
    KIT_OPT_STRING  /* const char *, pointing into argv        */
} kit_opt_type;

typedef struct {
    const char *name;    /* "--size" */
    kit_opt_type type;
    void *value;         /* where the parsed value goes */
    const char *metavar; /* "N" in "--size N"; NULL for flags */
    const char *help;
    unsigned long long min, max; /* KIT_OPT_INT and KIT_OPT_SIZE */
    int *given;          /* optional: set to 1 when the option is present */
} kit_option;

/* What every program accepts. size 0 and seed_given 0 mean "choose". */
typedef struct {
    unsigned long long size;
    int reps;
    int warmup;
    unsigned long long seed;
    int seed_given;
    const char *csv;
    int device;
} kit_common;

/* --size: at least one warp, and indices that fit in 32 bits. */
#define KIT_MIN_SIZE 32ull
#define KIT_MAX_SIZE (1ull << 31)
#define KIT_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/*
 * --focus KEY: the row KEY is timed until its median is steady (or --reps
 * times), every other row once. The grader's timed runs use it: they
 * compare one row, and the other rows were checked in the drawn runs.
 * kit_focus_seen says whether a row of that key was measured. A lab whose
 * verdict on the focused row rests on another row's time too names that
 * row in kit_focus_also, which is then timed in full as well.
 */
static const char *kit_focus;
static const char *kit_focus_also;
static int kit_focus_seen;

#define KIT_FOCUS_OPTION                                                                         \
    {"--focus", KIT_OPT_STRING, &kit_focus, "KEY",                                              \
     "time only row KEY (time-KEY-ms) until steady, every other row once", 0, 0, NULL}

/* What every lab accepts: timing runs until the median is steady unless
 * --reps fixes the count. */
#define KIT_LAB_OPTIONS(c)                                                                       \
    {"--size", KIT_OPT_SIZE, &(c)->size, "N",                                                   \
     "elements per array: 4194304, 4M or 2^22 (default: from the GPU's L2 and memory)",         \
     KIT_MIN_SIZE, KIT_MAX_SIZE, NULL},                                                          \
    {"--reps", KIT_OPT_INT, &(c)->reps, "R",                                                     \
     "timed runs of each kernel (default: until the median is steady); the median is reported", \
     1, 1000, NULL},                                                                             \
    {"--seed", KIT_OPT_U64, &(c)->seed, "S", "random seed (default: a fresh one, printed)", 0,  \
     0, &(c)->seed_given},                                                                       \
    {"--csv", KIT_OPT_STRING, &(c)->csv, "FILE", "also write the table as CSV ('-': stdout)",   \
     0, 0, NULL},                                                                                \
    {"--device", KIT_OPT_INT, &(c)->device, "D", "which GPU to use", 0, 63, NULL},              \
    KIT_FOCUS_OPTION

static inline void kit_common_defaults(kit_common *c)
{
    memset(c, 0, sizeof *c);
    c->reps = 10;
    c->warmup = 2;
}

/*
 * Parses a size. Returns 0 and sets *out, or returns -1 and writes the
 * reason to why. Accepts: digits; digits followed by K, M, G (or Ki, Mi,
 * Gi, any case) meaning powers of 1024; 2^E.
 */
static inline int kit_parse_size(const char *s, unsigned long long *out, char *why, size_t whylen)
{
    unsigned long long v = 0, mult = 1;
    const char *p = s;

    if (*p == '\0') {
        snprintf(why, whylen, "is empty");
        return -1;
    }
    if (p[0] == '2' && p[1] == '^') {
        unsigned long long e = 0;
        p += 2;
        if (*p < '0' || *p > '9') {
            snprintf(why, whylen, "needs an exponent after 2^");
            return -1;
        }
        while (*p >= '0' && *p <= '9' && e < 100)
            e = e * 10 + (unsigned long long)(*p++ - '0');
        if (*p != '\0') {
            snprintf(why, whylen, "is not a size");
            return -1;
        }
        if (e > 62) {
            snprintf(why, whylen, "is too large");
            return -1;
        }
        *out = 1ull << e;
        return 0;
    }
    if (*p < '0' || *p > '9') {
        snprintf(why, whylen, "is not a size");
        return -1;
    }
    while (*p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p++ - '0');
        if (v > (ULLONG_MAX - d) / 10) {
            snprintf(why, whylen, "is too large");
            return -1;
        }
        v = v * 10 + d;
    }
    switch (*p) {
    case 'k': case 'K': mult = 1ull << 10; p++; break;
    case 'm': case 'M': mult = 1ull << 20; p++; break;
    case 'g': case 'G': mult = 1ull << 30; p++; break;
    default: break;
    }
    if (mult != 1 && (*p == 'i' || *p == 'I'))
        p++;
    if (*p != '\0') {
        snprintf(why, whylen, "is not a size");
        return -1;
    }
    if (v > ULLONG_MAX / mult) {
        snprintf(why, whylen, "is too large");
        return -1;
    }
    *out = v * mult;
    return 0;
}

/* Parses an unsigned decimal integer; the whole string must be digits. */
static inline int kit_parse_u64(const char *s, unsigned long long *out)
{
    unsigned long long v = 0;
    if (*s == '\0')
        return -1;
    for (; *s; s++) {
        unsigned d;
        if (*s < '0' || *s > '9')
            return -1;
        d = (unsigned)(*s - '0');
        if (v > (ULLONG_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static inline void kit_usage(FILE *f, const char *synopsis, const kit_option *opts, int nopts)
{
    int i;
    fprintf(f, "usage: %s [options]\n\n%s\n\noptions:\n", kit_program, synopsis);
    for (i = 0; i < nopts; i++) {
        char left[64];
        snprintf(left, sizeof left, "%s%s%s", opts[i].name, opts[i].metavar ? " " : "",
                 opts[i].metavar ? opts[i].metavar : "");
        fprintf(f, "  %-22s %s\n", left, opts[i].help);
    }
    fprintf(f, "  %-22s %s\n", "--help", "print this help and exit");
    fprintf(f,
            "\nexit status: 0 all checks passed, 1 a check failed, 2 cannot run here\n"
            "(no driver, no GPU, unsupported GPU), 64 bad command line.\n");
}

/* Stores one option's value, or exits with KIT_EXIT_USAGE. */
static inline void kit_set_option(const kit_option *o, const char *val)
{
    char why[64];
    unsigned long long v = 0;

    switch (o->type) {
    case KIT_OPT_FLAG:
        *(int *)o->value = 1;
        break;
    case KIT_OPT_STRING:
        if (*val == '\0')
            kit_die(KIT_EXIT_USAGE, "%s: needs a non-empty value", o->name);
        *(const char **)o->value = val;
        break;
    case KIT_OPT_U64:
        if (kit_parse_u64(val, &v) != 0)
            kit_die(KIT_EXIT_USAGE, "%s '%s': not an unsigned integer", o->name, val);
        *(unsigned long long *)o->value = v;
        break;
    case KIT_OPT_INT:
        if (kit_parse_u64(val, &v) != 0 || v < o->min || v > o->max)
            kit_die(KIT_EXIT_USAGE, "%s '%s': expected a whole number from %llu to %llu",
                    o->name, val, o->min, o->max);
        *(int *)o->value = (int)v;
        break;
    case KIT_OPT_SIZE:
        if (kit_parse_size(val, &v, why, sizeof why) != 0)
            kit_die(KIT_EXIT_USAGE, "%s '%s' %s (write e.g. 4194304, 4M or 2^22)",
                    o->name, val, why);
        if (v < o->min || v > o->max)
            kit_die(KIT_EXIT_USAGE, "%s '%s' = %llu is out of range: it must be from %llu to %llu",
                    o->name, val, v, o->min, o->max);
        *(unsigned long long *)o->value = v;
        break;
    }
    if (o->given)
        *o->given = 1;
}

/*
 * Parses argv against opts, or exits: 0 after --help, KIT_EXIT_USAGE on
 * anything it cannot accept. Sets kit_program from argv[0].
 */
static inline void kit_parse_args(int argc, char **argv, const char *synopsis, const kit_option *opts,
                           int nopts)
{
    int i, j;
    const char *slash = strrchr(argv[0], '/');

    kit_program = slash ? slash + 1 : argv[0];
    /* Whole lines on stdout, also into a file or a pipe: a line of the
     * table never breaks where a message on stderr lands beside it. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i], *eq, *val = NULL;
        size_t len;
        const kit_option *o = NULL;

        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            kit_usage(stdout, synopsis, opts, nopts);
            exit(KIT_EXIT_PASS);
        }
        if (strncmp(arg, "--", 2) != 0)
            kit_die(KIT_EXIT_USAGE, "unexpected argument '%s' (options start with --; see --help)",
                    arg);
        eq = strchr(arg, '=');
        len = eq ? (size_t)(eq - arg) : strlen(arg);
        for (j = 0; j < nopts; j++)
            if (strlen(opts[j].name) == len && strncmp(opts[j].name, arg, len) == 0)
                o = &opts[j];
        if (!o && len == 6 && strncmp(arg, "--help", 6) == 0)
            kit_die(KIT_EXIT_USAGE, "--help takes no value");
        if (!o)
            kit_die(KIT_EXIT_USAGE, "unknown option '%.*s' (see --help)", (int)len, arg);
        if (o->type == KIT_OPT_FLAG) {
            if (eq)
                kit_die(KIT_EXIT_USAGE, "%s takes no value", o->name);
        } else if (eq) {
            val = eq + 1;
        } else if (i + 1 < argc) {
            val = argv[++i];
        } else {
            kit_die(KIT_EXIT_USAGE, "%s needs a value (%s)", o->name, o->metavar);
        }
        kit_set_option(o, val);
    }
#if defined(KIT_JUDGE) && KIT_JUDGE
    /* The grader's judge: its worker starts now, beside the judge's own
     * start on the GPU (kit_judge.h). */
    kit_judge_spawn();
#endif
}

/* A fresh seed when none was given: every run draws new inputs. */
static inline void kit_choose_seed(kit_common *c)
{
    if (!c->seed_given) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        c->seed = ((unsigned long long)ts.tv_sec * 1000003ull) ^ (unsigned long long)ts.tv_nsec ^
                  ((unsigned long long)getpid() << 32);
        c->seed %= 1000000000000ull; /* short enough to retype */
    }
}

#endif /* KIT_ARGS_H */
