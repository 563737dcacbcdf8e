/*
 * kit_lab.h - the one driver of every lab. A lab declares itself once (a
 * kit_lab): its name and title, what --help says, its options, and its
 * parts in order (kit_part). Each part measures; then says what it found
 * in the table for people, in the CSV and in key: value lines; then
 * judges. Where a part's rows are a kit_table (kit_table.h), those three
 * come from the table's one declaration.
 *
 * kit_lab_main runs it, the same for every lab:
 *
 *   options     the kit's defaults, then the lab's own, then the command
 *               line (exit 64 on anything wrong), a seed (fresh unless
 *               --seed), the --csv file checked; prepare() checks what the
 *               options must agree on and the lab's other outputs, and may
 *               end a mode that needs no GPU (Lab 04's --calculator-only);
 *   the GPU     opened (exit 2 without one), the timing policy; then
 *               setup(): sizes from the device, inputs;
 *   measure     every part's measure(), in order;
 *   report      with the table for people (not with --csv -): the banner
 *               (the lab's banner() where it has one), heading(), every
 *               part's print(); every part's csv() where --csv asks; then
 *               the key: value lines: lab, the device, seed, facts(),
 *               every part's kv(), summary();
 *   verdict     every part's verdict(), which clears run.pass saying why
 *               on stderr; teardown(); kit_finish: the result line, and
 *               the grader's channel closed with its token.
 *
 * A row's own check (kit_row_ok: its elements, its timed runs) may fail the
 * lab as the part measures it, so that its message on stderr comes where
 * the row was run; verdict() holds the checks that look across rows.
 *
 * Under the grader the same harness, built as the judge, runs the
 * student's functions in the worker (kit_judge.h): nothing here changes.
 *
 * The lab's state is its own struct, named before this file is included:
 *
 *     typedef struct lab lab;
 *     #define KIT_LAB_STATE lab
 *     #include "kit_lab.h"
 *
 * and its member run (a kit_run) holds what every lab has. Every callback
 * gets the state and may be NULL.
 */
#ifndef KIT_LAB_H
#define KIT_LAB_H

#include "kit_args.h"
#include "kit_device.h"
#include "kit_report.h"
#include "kit_timing.h"

#ifndef KIT_LAB_STATE
#error "name the lab's state first: typedef struct lab lab; #define KIT_LAB_STATE lab"
#endif

/* What every lab has: its options, its GPU, its timing, its verdict. */
typedef struct {
    kit_common c;
    kit_device dev;
    kit_policy policy;
    int human; /* the table for people is printed: not --csv - */
    int pass;  /* 1 until a check fails */
} kit_run;

typedef struct {
    void (*measure)(KIT_LAB_STATE *L);
    void (*print)(KIT_LAB_STATE *L);        /* the table for people */
    void (*csv)(KIT_LAB_STATE *L, FILE *f); /* its lines of the CSV */
    void (*kv)(KIT_LAB_STATE *L);           /* its key: value lines */
    void (*verdict)(KIT_LAB_STATE *L);      /* clears run.pass, saying why on stderr */
} kit_part;

typedef struct {
    const char *key;    /* the lab: line, "06-shared-memory" */
    const char *title;  /* the banner's first line */
    const char *about;  /* what --help says the program does */
    kit_option *opts;   /* every option the program takes */
    int nopts;
    int (*prepare)(KIT_LAB_STATE *L);  /* options checked; >= 0: exit with it now (a mode without the GPU) */
    void (*setup)(KIT_LAB_STATE *L);   /* the GPU open: sizes, inputs */
    void (*heading)(KIT_LAB_STATE *L); /* the lines under the banner */
    void (*facts)(KIT_LAB_STATE *L);   /* key: value lines of the run, after lab, device and seed */
    void (*summary)(KIT_LAB_STATE *L); /* the last key: value lines: summary, the course's figures */
    void (*teardown)(KIT_LAB_STATE *L);
    const kit_part *parts;
    int nparts;
    void (*banner)(KIT_LAB_STATE *L); /* the banner of a lab on several GPUs; NULL: the kit's, of its one GPU */
} kit_lab;

/* Runs the lab; run is the state's member run (the state's type is not
 * complete here). Returns the exit code. */
static inline int kit_lab_main(const kit_lab *k, KIT_LAB_STATE *lab, kit_run *run, int argc, char **argv)
{
    FILE *csv;
    int i;

    run->pass = 1;
    kit_parse_args(argc, argv, k->about, k->opts, k->nopts);
    kit_choose_seed(&run->c);
    kit_csv_check(run->c.csv);
    if (k->prepare) {
        int code = k->prepare(lab);
        if (code >= 0)
            return code;
    }
    run->human = !(run->c.csv && strcmp(run->c.csv, "-") == 0);
    kit_device_open(run->c.device, &run->dev);
    run->policy = kit_policy_default(run->c.reps);
    if (k->setup)
        k->setup(lab);

    for (i = 0; i < k->nparts; i++)
        if (k->parts[i].measure)
            k->parts[i].measure(lab);

    csv = kit_csv_open(run->c.csv);
    if (run->human) {
        if (k->banner)
            k->banner(lab);
        else
            kit_banner(k->title, &run->dev);
        if (k->heading)
            k->heading(lab);
        for (i = 0; i < k->nparts; i++)
            if (k->parts[i].print)
                k->parts[i].print(lab);
    }
    if (csv) {
        for (i = 0; i < k->nparts; i++)
            if (k->parts[i].csv)
                k->parts[i].csv(lab, csv);
        kit_csv_close(csv);
    }
    kit_kv("lab", "%s", k->key);
    kit_kv_device(&run->dev);
    kit_kv("seed", "%llu", run->c.seed);
    if (k->facts)
        k->facts(lab);
    for (i = 0; i < k->nparts; i++)
        if (k->parts[i].kv)
            k->parts[i].kv(lab);
    if (k->summary)
        k->summary(lab);

    for (i = 0; i < k->nparts; i++)
        if (k->parts[i].verdict)
            k->parts[i].verdict(lab);
    if (k->teardown)
        k->teardown(lab);
    return kit_finish(run->pass);
}

/* The kit's defaults of every lab, before the lab sets its own and the
 * command line is read: timed until the median is steady. */
static inline void kit_run_defaults(kit_run *run)
{
    memset(run, 0, sizeof *run);
    kit_common_defaults(&run->c);
    run->c.reps = 0;
}

#endif /* KIT_LAB_H */
