/*
 * Lab 08: several GPUs - the harness.
 * The student's file: labs/08-multi-gpu/multi-gpu.cu; the handout:
 * handouts/08-multi-gpu.md.
 *
 * Part 1, the course's "Multi GPU" slides: the vector addition of Lab 05,
 * C = A + B on 32-bit integers in pinned host memory, large enough that
 * the copies over each GPU's host link dominate, run by the student's
 * gpus_add on one GPU and on all of them (--gpus N), with one stream per
 * GPU (the course's first version) and with several (its second). The kit
 * first measures the host links: each GPU's copies in alone, then all at
 * once, which is what N GPUs can at best gain.
 *
 * Part 2, with two GPUs or more: which GPUs can reach which
 * (cudaDeviceCanAccessPeer, cudaDeviceGetP2PAttribute, PCI bus ids), the
 * student's set_peer_access between GPUs 0 and 1, then copies between them
 * with peer access on (cudaMemcpyPeerAsync) and off (the same call, which
 * the driver then stages through host memory; and the kit's own staging
 * through pinned host memory, chunk by chunk), and a kernel on GPU 0 that
 * reads GPU 1's memory directly, beside the same kernel on its own memory.
 *
 * Every run of the student's code is checked: before it the device arrays
 * and C are filled with garbage; right after it every stream must be done
 * and no error left behind; then every element of C is compared with A + B
 * on the host. One run goes through the traced build of the student's file
 * (contract.h), which shows the kit the order of the copies and waits:
 * no copy may be queued after a wait (else the GPUs, or the chunks, ran one
 * after the other), none in the default stream or another GPU's stream,
 * each chunk in its own stream, and each GPU's share copied exactly once.
 * The copies and kernels of part 2 are compared with known data after
 * every run. Times are the host's clock around work that returns only
 * when it is done: with several GPUs no one GPU's events span it all.
 *
 * --timeline FILE traces one run more of the version on every GPU (one
 * GPU: its version with streams), after its timed runs: the traced build
 * with events around each copy in its stream, each GPU's events put on
 * the host's clock (kit_event_clock, kit_timeline.h), and writes when
 * each copy and each stream's kernel ran, a row per span (the page of
 * make report draws it, a row per GPU and stream). That run is checked
 * like every other; the timed runs are never traced.
 *
 * --selftest runs the kit's own wrong versions of the student's functions
 * through the same checks: each must be caught, and the kit's right
 * version must pass (the tests' negative and positive controls).
 */
#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_host.h"
#include "kit_pipeline.h"
#include "kit_report.h"
#include "kit_rng.h"
#include "kit_row.h"
#include "kit_table.h"
#include "kit_timeline.h"
#include "kit_timing.h"

typedef struct lab lab; /* the lab's state, below */
#define KIT_LAB_STATE lab
#include "kit_lab.h"

#include "contract.h"
#include "tools.h"
#include "kit_student.h"
#if !KIT_TIME_BY_CLOCK
#include "remote.h"
#endif

#define TITLE "Lab 08: several GPUs"

/* 3 x 256 MiB in pinned host memory: tens of ms of copies on PCIe 3, about
 * 10 ms on PCIe 5, against which the microseconds it takes the host to
 * queue the work on each GPU do not count. */
#define DEFAULT_SIZE (1u << 26)
#define DEFAULT_STREAMS 4
#define SELFTEST_SIZE (1u << 22)
/* The kit's staging of a peer copy through host memory: this many chunks. */
#define STAGE_CHUNKS 8
/* PCIe 5.0 x16, one direction, in GB/s: no GPU's PCIe link is faster, so a
 * peer copy faster than this went over a direct link (NVLink). */
#define PCIE_X16_GBS 64.0
/* Part 1's versions (at most 7: GPUs 1, 2, 4, 8 and all, one and all with
 * one stream too), then part 2's copies and kernels (7). */
#define MAX_ROWS 19
/* The verdict by the clock: every GPU at once gains at least this share of
 * what the host links gain at once (2 H200s: links 1.86-1.96x, the
 * reference 1.45-1.70x with 4 streams, 1.75-1.94x with 1; everything on
 * GPU 0 about 1.0x), judged where the links gain at least MIN_LINK_SCALING
 * and one GPU's copies in take at least MIN_SCALING_FLOOR_MS (at 7.7M
 * elements the reference gained 1.32x of 1.81x: each operation's own cost
 * weighs); no row under FLOOR_SHARE of its copies' time at the links' speed,
 * judged at the same sizes. */
#define MIN_SHARE_OF_LINK_GAIN 0.25
#define MIN_LINK_SCALING 1.2
#define MIN_SCALING_FLOOR_MS 2.0
/* ...and A and B together at least this many bytes: in small copies the
 * links' speed measured is each operation's own cost (a PTX-only build on
 * an H100, 33 elements: 3 ms for the copies in alone, then 0.74 ms with
 * 2 streams). */
#define MIN_JUDGED_BYTES (64.0 * 1048576.0)
#define FLOOR_SHARE 0.8
/* GPU 0 holds the drawn inputs and a run's, and its share: at most this
 * many arrays of --size on any GPU (one GPU: its share is all three). */
#define GPU_ARRAYS 6

/* The kit's side in the student's process (08-multi-gpu/remote.h): here in
 * this program; in grading, in the worker, which the judge's stubs reach. */
static const kit_remote_api *remote = &kit_remote;

static const char *const ADD_TODOS = "TODO(1) and TODO(2)";

/* ---- small tools ----------------------------------------------------------------- */

/* How many 4-byte words of a and b, both on GPU dev, differ. */
static long long device_differ(int dev, const void *a, const void *b, size_t bytes)
{
    static unsigned long long *count[KIT_MAX_GPUS];
    unsigned long long h = 0;

    KIT_CHECK(cudaSetDevice(dev));
    if (!count[dev])
        KIT_CHECK(cudaMalloc((void **)&count[dev], sizeof *count[dev]));
    KIT_CHECK(cudaMemset(count[dev], 0, sizeof *count[dev]));
    kit_differ_kernel<<<1024, 256>>>((const unsigned int *)a, (const unsigned int *)b, bytes / 4, count[dev]);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaMemcpy(&h, count[dev], sizeof h, cudaMemcpyDeviceToHost));
    return (long long)h;
}

/* C[i] == (A[i] ^ ka) + (B[i] ^ kb) for every i, on the host's cores: A and
 * B as drawn, under the keys of the run that wrote C (0: as drawn). */
typedef struct {
    const unsigned int *A, *B, *C;
    unsigned int ka, kb;
} sum_ctx;

static long long sum_range(unsigned long long begin, unsigned long long end, void *p, unsigned long long *first)
{
    const sum_ctx *k = (const sum_ctx *)p;
    long long bad = 0;
    for (unsigned long long i = begin; i < end; i++)
        if (k->C[i] != (k->A[i] ^ k->ka) + (k->B[i] ^ k->kb) && bad++ == 0)
            *first = i;
    return bad;
}

static long long check_sum(const unsigned int *A, const unsigned int *B, const unsigned int *C, unsigned int ka,
                           unsigned int kb, unsigned int n, unsigned long long *first)
{
    sum_ctx k = {A, B, C, ka, kb};
    return kit_parallel_check(n, sum_range, &k, first);
}

/* Every kit_work here is timed by the host's clock (its wall_clock 1): its
 * run returns only when its work is done, on however many GPUs, and no one
 * GPU's events span it all. */

static double gbs(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }

/* ---- part 1: the vector addition ------------------------------------------------ */

typedef struct {
    unsigned int n;
    size_t bytes;
    unsigned int *A, *B, *C;  /* pinned, the job's: in grading the judge's memory, which the worker maps */
    unsigned int *hA, *hB;    /* the kit's alone: the inputs as drawn */
    unsigned int *eA, *eB, *tmp; /* on GPU 0, the kit's alone: the same, and room for a run's input */
    unsigned int ka, kb;      /* the last run's inputs: A = hA ^ ka, B = hB ^ kb */
    unsigned long long seed, runs;
    int student_gone;         /* student_done: the student's process has ended */
} host_data;

/* Host memory for the job's arrays, pinned for every GPU: the judge's
 * shared memory in grading (kit_judge.h), the kit's own here. */
static unsigned int *job_array(size_t bytes)
{
#if KIT_TIME_BY_CLOCK
    unsigned int *p = (unsigned int *)kit_judge_host_alloc(bytes);
    cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterPortable);
#else
    unsigned int *p = NULL;
    cudaError_t e = cudaMallocHost((void **)&p, bytes);
#endif
    if (e == cudaErrorMemoryAllocation && kit_platform_pinned_advice())
        kit_die(KIT_EXIT_WAIVED, "cannot run here: cannot pin %.0f MiB of host memory for the arrays: %s",
                bytes / 1048576.0, kit_platform_pinned_advice());
    if (e == cudaErrorMemoryAllocation)
        kit_die(KIT_EXIT_FAIL, "cannot pin %.0f MiB of host memory for the arrays: choose a smaller --size",
                bytes / 1048576.0);
    KIT_CHECK(e);
    return p;
}

static void job_array_free(unsigned int *p)
{
#if KIT_TIME_BY_CLOCK
    KIT_CHECK(cudaHostUnregister(p));
    kit_judge_host_free(p);
#else
    KIT_CHECK(cudaFreeHost(p));
#endif
}

static void host_setup(host_data *h, unsigned int n, unsigned long long seed)
{
    memset(h, 0, sizeof *h);
    h->n = n;
    h->bytes = (size_t)n * sizeof(unsigned int);
    h->seed = seed;
    h->A = job_array(h->bytes);
    h->B = job_array(h->bytes);
    h->C = job_array(h->bytes);
    h->hA = (unsigned int *)kit_host_alloc(h->bytes);
    h->hB = (unsigned int *)kit_host_alloc(h->bytes);
    KIT_CHECK(cudaSetDevice(0));
    KIT_CHECK(cudaMalloc((void **)&h->eA, h->bytes));
    KIT_CHECK(cudaMalloc((void **)&h->eB, h->bytes));
    KIT_CHECK(cudaMalloc((void **)&h->tmp, h->bytes));
    kit_fill_bits(h->eA, n, seed);
    KIT_CHECK(cudaMemcpy(h->hA, h->eA, h->bytes, cudaMemcpyDeviceToHost));
    kit_fill_bits(h->eB, n, seed + 1);
    KIT_CHECK(cudaMemcpy(h->hB, h->eB, h->bytes, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(h->A, h->eA, h->bytes, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(h->B, h->eB, h->bytes, cudaMemcpyDeviceToHost));
    /* The student's side pins them too, in its own process (grading). */
#if KIT_TIME_BY_CLOCK
    remote->lab08_host(h->A, h->B, h->C, h->bytes);
#endif
}

/* Part 1 is over: no more new inputs, and GPU 0's room back for part 2. */
static void host_inputs_free(host_data *h)
{
    if (!h->eA)
        return;
    KIT_CHECK(cudaSetDevice(0));
    KIT_CHECK(cudaFree(h->eA));
    KIT_CHECK(cudaFree(h->eB));
    KIT_CHECK(cudaFree(h->tmp));
    h->eA = h->eB = h->tmp = NULL;
}

/*
 * The student's code has done its part of the run. In grading its process
 * ends here (kit_judge_end_worker), and with it anything it left on the
 * GPUs or in a thread of its own, so that the host links the verdict
 * rests on are timed again with nothing of the student's beside them.
 * Returns 1 where it ended; in the lab's own program the student's code
 * is this process, and nothing ends (0).
 */
static int student_done(host_data *h)
{
#if KIT_JUDGE
    remote->lab08_host_release(h->A, h->B, h->C);
    h->student_gone = 1;
    kit_judge_end_worker();
    return 1;
#else
    (void)h;
    return 0;
#endif
}

static void host_teardown(host_data *h)
{
    host_inputs_free(h);
#if KIT_TIME_BY_CLOCK
    if (!h->student_gone)
        remote->lab08_host_release(h->A, h->B, h->C);
#endif
    job_array_free(h->A);
    job_array_free(h->B);
    job_array_free(h->C);
    free(h->hA);
    free(h->hB);
}

/* ---- every run's inputs, and the check of C ---------------------------------------- */

/* New inputs in A and B (the drawn ones under new keys), written by GPU 0's
 * copy engine as the runs read them (the host's cores would leave them in
 * its caches), and C all bits set. */
static void fresh_inputs(host_data *h)
{
    unsigned long long k = kit_row_draw_seed(h->seed, ++h->runs);
    h->ka = (unsigned int)k;
    h->kb = (unsigned int)(k >> 32);
    KIT_CHECK(cudaSetDevice(0));
    kit_keyed(h->eA, h->ka, h->tmp, h->n);
    KIT_CHECK(cudaMemcpy(h->A, h->tmp, h->bytes, cudaMemcpyDeviceToHost));
    kit_keyed(h->eB, h->kb, h->tmp, h->n);
    KIT_CHECK(cudaMemcpy(h->B, h->tmp, h->bytes, cudaMemcpyDeviceToHost));
    kit_parallel_fill(h->C, 0xff, h->bytes);
}

/* What the student's side said, each line with the program's name, and the row's where given. */
static void print_said(char *text, const char *row)
{
    const char *at = text;
    text[LAB08_TEXT - 1] = '\0'; /* the student's process filled it: it ends here whatever it sent */
    while (*at) {
        size_t len = strcspn(at, "\n");
        fprintf(stderr, "%s: %s%s%.*s\n", kit_program, row ? row : "", row ? ": " : "", (int)len, at);
        at += len + (at[len] == '\n');
    }
}

typedef struct {
    host_data *h;
    int kit;                 /* run the kit's own versions (--selftest) */
    int ngpus, nstreams;
    int use_traced;          /* the next run is the traced one */
    const char *name;        /* of the row */
    int setup_ok, trace_ok;
    unsigned int first[KIT_MAX_GPUS], count[KIT_MAX_GPUS]; /* the shares */
    struct lab08_out said;   /* of the last run */
    long long traced_wrong;  /* elements wrong after the traced run */
    long long last_wrong;    /* elements wrong after the last run */
    long long early;         /* runs that returned while a stream still worked */
    long long left_errors;   /* runs that left a CUDA error behind */
    int told;                /* the first wrong element is said */
    int traced_gpus, traced_streams; /* --timeline: the job to trace after its timed runs (0: none) */
    struct timeline *timeline;       /* ...and where its trace goes */
} vec_run;

/* The job on the first ngpus GPUs, in nstreams chunks each, made by
 * gpus_setup. Returns whether it passed the checks. */
static int open_job(vec_run *r, int ngpus, int nstreams)
{
    struct lab08_out o;
    memset(&o, 0, sizeof o); /* it crosses to the student's process: nothing of this one's in it */
    r->ngpus = ngpus;
    r->nstreams = nstreams;
    remote->lab08_open(r->h->A, r->h->B, r->h->C, r->h->n, ngpus, nstreams, r->kit, &o);
    print_said(o.text, NULL);
    memcpy(r->first, o.first, sizeof r->first);
    memcpy(r->count, o.count, sizeof r->count);
    return o.ok;
}

static void vec_poison(void *p)
{
    vec_run *r = (vec_run *)p;
    fresh_inputs(r->h);
    remote->lab08_poison();
}

static void vec_run_once(void *p)
{
    vec_run *r = (vec_run *)p;
    remote->lab08_run(r->use_traced, &r->said);
}

/* After a run: every stream done, no error behind (the student's side
 * says), every element of C right (the kit's own check). Returns the
 * wrong elements (one more if the run returned early or left an error). */
static long long vec_check(void *p)
{
    vec_run *r = (vec_run *)p;
    const host_data *h = r->h;
    unsigned long long first;
    long long bad, flawed = 0;

    print_said(r->said.text, r->name);
    r->said.text[0] = '\0';
    if (r->said.early)
        r->early++, flawed = 1;
    if (r->said.left_error)
        r->left_errors++, flawed = 1;
    /* C against the last run's A + B, from the kit's own copies of them (the
     * job's A and B are the student's to read, and change). */
    bad = check_sum(h->hA, h->hB, h->C, h->ka, h->kb, h->n, &first);
    if (bad && !r->told++) {
        int g = 0;
        while (g + 1 < r->ngpus && first >= (unsigned long long)r->first[g] + r->count[g])
            g++;
        fprintf(stderr, "%s: %s: C[%llu] = %u but A + B = %u there (GPU %d's share)\n", kit_program, r->name,
                first, h->C[first], (h->hA[first] ^ h->ka) + (h->hB[first] ^ h->kb), g);
    }
    r->last_wrong = bad;
    return bad + flawed;
}

/* The traced run and the checked run of a job; leaves it open for timing. */
static int judge_job(vec_run *r, int ngpus, int nstreams)
{
    r->setup_ok = open_job(r, ngpus, nstreams);
    r->trace_ok = 0;
    if (!r->setup_ok)
        return 0;
    vec_poison(r);
    r->use_traced = 1;
    vec_run_once(r);
    r->trace_ok = r->said.ok;
    r->traced_wrong = vec_check(r);
    r->use_traced = 0;
    return 1;
}

/* ---- --timeline: one traced run of a job, when each copy and kernel ran ------------- */

/* The traced out of the student's process: large, so one, kept. */
static struct lab08_timeline_out timeline_out;

typedef struct timeline {
    int done;          /* a traced run happened */
    const char *version;
    int ngpus, nstreams;
    long long wrong;   /* elements wrong after it, one more if it returned early or left an error */
    int launches_seen;
    double worst_uncertainty_ms;
    const struct lab08_timeline_out *o; /* its spans and clocks: timeline_out */
} timeline_t;

/* Whether a timeline from the student's process is one the kit's side
 * can have made (in grading that process could send anything). */
static int timeline_sane(const struct lab08_timeline_out *o, int ngpus, int nstreams)
{
    if (o->nspans < 0 || o->nspans > LAB08_MAX_SPANS || o->missed < 0 || !isfinite(o->run_ms))
        return 0;
    for (int g = 0; g < ngpus; g++)
        if (!isfinite(o->uncertainty_ms[g]) || o->uncertainty_ms[g] < 0)
            return 0;
    for (int i = 0; i < o->nspans; i++) {
        const struct lab08_span *x = &o->spans[i];
        if (x->gpu < 0 || x->gpu >= ngpus || x->stream < -1 || x->stream >= nstreams || x->op < 0 ||
            x->op >= KIT_NOPS || !isfinite(x->start_ms) || !isfinite(x->end_ms) || x->end_ms < x->start_ms)
            return 0;
    }
    return 1;
}

/* The job open in r, once more in the traced build, its copies recorded
 * (remote.h, lab08_timeline); checked as every run is. */
static void traced_timeline(vec_run *r, const char *version, timeline_t *tl)
{
    struct lab08_timeline_out *o = &timeline_out;

    memset(tl, 0, sizeof *tl);
    memset(o, 0, sizeof *o); /* it crosses to the student's process: nothing of this one's in it */
    vec_poison(r);
    remote->lab08_timeline(o);
    /* Its order was judged in the row's own traced run: this one is
     * judged by its results, as a timed run is. */
    r->said = o->run;
    tl->wrong = vec_check(r);
    if (!timeline_sane(o, r->ngpus, r->nstreams)) {
        fprintf(stderr, "%s: the timeline's record from the student's process is not one the kit makes "
                        "(counts out of range, a time that is not a number): graded as failed\n", kit_program);
        tl->wrong++;
        memset(o, 0, sizeof *o);
    }
    tl->version = version;
    tl->ngpus = r->ngpus;
    tl->nstreams = r->nstreams;
    tl->o = o;
    for (int g = 0; g < r->ngpus; g++)
        if (o->uncertainty_ms[g] > tl->worst_uncertainty_ms)
            tl->worst_uncertainty_ms = o->uncertainty_ms[g];
    for (int i = 0; i < o->nspans; i++)
        tl->launches_seen += o->spans[i].op == KIT_OP_KERNEL;
    tl->done = 1;
}

/* --timeline's CSV: a row per span, the columns of Lab 05's with the GPU
 * first (chunk c of a GPU is its stream[c], so there is no chunk column). */
static void write_timeline(const char *path, const timeline_t *tl)
{
    FILE *f = kit_csv_open(path);
    fprintf(f, "gpu,operation,stream,start_ms,end_ms,version\n");
    for (int i = 0; i < tl->o->nspans; i++) {
        const struct lab08_span *x = &tl->o->spans[i];
        fprintf(f, "%d,%s,%d,%.6f,%.6f,\"%s\"\n", x->gpu, kit_op_name[x->op], x->stream, x->start_ms, x->end_ms,
                tl->version);
    }
    kit_csv_close(f);
}

/* One row: the job judged, then checked and timed in the timed build. */
static void measure_vec(vec_run *r, kit_row *row, int ngpus, int nstreams, const kit_policy *policy)
{
    r->name = row->name;
    r->early = r->left_errors = 0;
    r->told = 0;
    if (judge_job(r, ngpus, nstreams)) {
        kit_work w = {vec_poison, vec_run_once, vec_check, r, 0.0f, 1};
        double t0;
        vec_poison(r);
        t0 = kit_wall_ms();
        vec_run_once(r);
        w.first_ms = (float)(kit_wall_ms() - t0); /* the checked run, the first sample */
        vec_check(r);
        row->wrong = r->last_wrong;
        if (row->wrong == 0 && r->early == 0 && r->left_errors == 0) {
            const kit_policy focus = kit_policy_for(policy, row->key);
            row->t = kit_measure(&w, &focus);
            row->timed = 1;
        }
        /* After its timed runs, never among them. */
        if (ngpus == r->traced_gpus && nstreams == r->traced_streams)
            traced_timeline(r, row->name, r->timeline);
    }
    remote->lab08_close();
}

/* ---- the host links: copies in alone, and from every GPU at once ------------------- */

typedef struct {
    int ngpus;
    int which; /* a GPU, or -1: all at once, each its share */
    const unsigned int *A;
    unsigned int n;
    unsigned int *d[KIT_MAX_GPUS];
    cudaStream_t s[KIT_MAX_GPUS];
} link_run;

static void link_once(void *p)
{
    link_run *l = (link_run *)p;
    for (int g = 0; g < l->ngpus; g++) {
        unsigned int first = 0, count = l->n;
        if (l->which >= 0 && g != l->which)
            continue;
        if (l->which < 0)
            kit_chunk(l->n, l->ngpus, g, &first, &count);
        KIT_CHECK(cudaSetDevice(g));
        KIT_CHECK(cudaMemcpyAsync(l->d[g], l->A + first, count * sizeof(unsigned int), cudaMemcpyHostToDevice,
                                  l->s[g]));
    }
    for (int g = 0; g < l->ngpus; g++)
        if (l->which < 0 || g == l->which)
            KIT_CHECK(cudaStreamSynchronize(l->s[g]));
}

/* Host-to-device GB/s of each GPU alone (per[g]) and of all at once. */
static double measure_links(const host_data *h, int ngpus, double *per, const kit_policy *policy)
{
    link_run l;
    kit_work w = {NULL, link_once, NULL, &l, 0.0f, 1};
    double all = 0.0;

    memset(&l, 0, sizeof l);
    l.ngpus = ngpus;
    l.A = h->A;
    l.n = h->n;
    for (int g = 0; g < ngpus; g++) {
        KIT_CHECK(cudaSetDevice(g));
        KIT_CHECK(cudaMalloc((void **)&l.d[g], h->bytes));
        KIT_CHECK(cudaStreamCreate(&l.s[g]));
    }
    for (int which = 0; which < ngpus; which++) {
        l.which = which;
        link_once(&l); /* warm-up */
        per[which] = gbs((double)h->bytes, kit_measure(&w, policy).median_ms);
    }
    if (ngpus > 1) {
        l.which = -1;
        link_once(&l);
        all = gbs((double)h->bytes, kit_measure(&w, policy).median_ms);
    }
    for (int g = 0; g < ngpus; g++) {
        KIT_CHECK(cudaSetDevice(g));
        KIT_CHECK(cudaStreamDestroy(l.s[g]));
        KIT_CHECK(cudaFree(l.d[g]));
    }
    return all;
}

/* ---- part 2: peer-to-peer ----------------------------------------------------------- */

enum peer_what { COPY_AB, COPY_BA, COPY_BOTH, REMOTE_ADD, LOCAL_ADD, STAGED_DRIVER, STAGED_KIT };

typedef struct {
    int a, b;
    unsigned int n;
    size_t bytes;
    const unsigned int *A, *B;       /* host: what every array holds */
    unsigned int *stage;             /* pinned host: the kit's staging, and C's way back */
    unsigned int *A0, *B0, *C0, *X0; /* on GPU a */
    unsigned int *A1, *B1, *X1;      /* on GPU b */
    cudaStream_t sa, sb;
    cudaEvent_t staged[STAGE_CHUNKS];
    enum peer_what what;
    const char *name;
    int told;
} peer_t;

static void peer_setup(peer_t *p, const host_data *h, int a, int b)
{
    memset(p, 0, sizeof *p);
    p->a = a;
    p->b = b;
    p->n = h->n;
    p->bytes = h->bytes;
    p->A = h->hA;
    p->B = h->hB;
    p->stage = h->C;
    KIT_CHECK(cudaSetDevice(a));
    KIT_CHECK(cudaMalloc((void **)&p->A0, p->bytes));
    KIT_CHECK(cudaMalloc((void **)&p->B0, p->bytes));
    KIT_CHECK(cudaMalloc((void **)&p->C0, p->bytes));
    KIT_CHECK(cudaMalloc((void **)&p->X0, p->bytes));
    KIT_CHECK(cudaStreamCreate(&p->sa));
    for (int k = 0; k < STAGE_CHUNKS; k++)
        KIT_CHECK(cudaEventCreateWithFlags(&p->staged[k], cudaEventDisableTiming));
    KIT_CHECK(cudaMemcpy(p->A0, p->A, p->bytes, cudaMemcpyHostToDevice));
    KIT_CHECK(cudaMemcpy(p->B0, p->B, p->bytes, cudaMemcpyHostToDevice));
    KIT_CHECK(cudaSetDevice(b));
    KIT_CHECK(cudaMalloc((void **)&p->A1, p->bytes));
    KIT_CHECK(cudaMalloc((void **)&p->B1, p->bytes));
    KIT_CHECK(cudaMalloc((void **)&p->X1, p->bytes));
    KIT_CHECK(cudaStreamCreate(&p->sb));
    KIT_CHECK(cudaMemcpy(p->A1, p->A, p->bytes, cudaMemcpyHostToDevice));
    KIT_CHECK(cudaMemcpy(p->B1, p->B, p->bytes, cudaMemcpyHostToDevice));
}

static void peer_teardown(peer_t *p)
{
    KIT_CHECK(cudaSetDevice(p->a));
    for (int k = 0; k < STAGE_CHUNKS; k++)
        KIT_CHECK(cudaEventDestroy(p->staged[k]));
    KIT_CHECK(cudaStreamDestroy(p->sa));
    KIT_CHECK(cudaFree(p->A0));
    KIT_CHECK(cudaFree(p->B0));
    KIT_CHECK(cudaFree(p->C0));
    KIT_CHECK(cudaFree(p->X0));
    KIT_CHECK(cudaSetDevice(p->b));
    KIT_CHECK(cudaStreamDestroy(p->sb));
    KIT_CHECK(cudaFree(p->A1));
    KIT_CHECK(cudaFree(p->B1));
    KIT_CHECK(cudaFree(p->X1));
}

/* GPU a's A0 to GPU b's X1 through pinned host memory, chunk by chunk:
 * chunk k goes down to the host in a's stream, and up to b in b's stream
 * once it is there, while chunk k + 1 goes down. */
static void staged_by_kit(peer_t *p)
{
    for (int k = 0; k < STAGE_CHUNKS; k++) {
        unsigned int first, count;
        kit_chunk(p->n, STAGE_CHUNKS, k, &first, &count);
        KIT_CHECK(cudaSetDevice(p->a));
        KIT_CHECK(cudaMemcpyAsync(p->stage + first, p->A0 + first, count * sizeof(unsigned int),
                                  cudaMemcpyDeviceToHost, p->sa));
        KIT_CHECK(cudaEventRecord(p->staged[k], p->sa));
        KIT_CHECK(cudaSetDevice(p->b));
        KIT_CHECK(cudaStreamWaitEvent(p->sb, p->staged[k], 0));
        KIT_CHECK(cudaMemcpyAsync(p->X1 + first, p->stage + first, count * sizeof(unsigned int),
                                  cudaMemcpyHostToDevice, p->sb));
    }
    KIT_CHECK(cudaStreamSynchronize(p->sb));
}

static void peer_once(void *q)
{
    peer_t *p = (peer_t *)q;
    switch (p->what) {
    case COPY_AB:
    case STAGED_DRIVER:
        KIT_CHECK(cudaMemcpyPeerAsync(p->X1, p->b, p->A0, p->a, p->bytes, p->sa));
        KIT_CHECK(cudaStreamSynchronize(p->sa));
        break;
    case COPY_BA:
        KIT_CHECK(cudaMemcpyPeerAsync(p->X0, p->a, p->A1, p->b, p->bytes, p->sb));
        KIT_CHECK(cudaStreamSynchronize(p->sb));
        break;
    case COPY_BOTH:
        KIT_CHECK(cudaMemcpyPeerAsync(p->X1, p->b, p->A0, p->a, p->bytes, p->sa));
        KIT_CHECK(cudaMemcpyPeerAsync(p->X0, p->a, p->A1, p->b, p->bytes, p->sb));
        KIT_CHECK(cudaStreamSynchronize(p->sa));
        KIT_CHECK(cudaStreamSynchronize(p->sb));
        break;
    case REMOTE_ADD:
    case LOCAL_ADD:
        KIT_CHECK(cudaSetDevice(p->a));
        if (p->what == REMOTE_ADD)
            launch_add(p->A1, p->B1, p->C0, p->n, p->sa); /* reads GPU b's memory */
        else
            launch_add(p->A0, p->B0, p->C0, p->n, p->sa);
        KIT_CHECK(cudaStreamSynchronize(p->sa));
        break;
    case STAGED_KIT:
        staged_by_kit(p);
        break;
    }
}

static void peer_poison(void *q)
{
    peer_t *p = (peer_t *)q;
    int into_a = p->what == COPY_BA || p->what == COPY_BOTH, into_b = p->what != COPY_BA;
    int add = p->what == REMOTE_ADD || p->what == LOCAL_ADD;

    KIT_CHECK(cudaSetDevice(p->a));
    if (add)
        KIT_CHECK(cudaMemset(p->C0, 0xff, p->bytes));
    else if (into_a)
        KIT_CHECK(cudaMemset(p->X0, 0xff, p->bytes));
    KIT_CHECK(cudaDeviceSynchronize());
    KIT_CHECK(cudaSetDevice(p->b));
    if (!add && into_b)
        KIT_CHECK(cudaMemset(p->X1, 0xff, p->bytes));
    KIT_CHECK(cudaDeviceSynchronize());
}

/* Every word of what was written, against what it must hold: a copy
 * against the destination GPU's own copy of A (from the host), a sum
 * against A + B on the host. */
static long long peer_check(void *q)
{
    peer_t *p = (peer_t *)q;
    long long bad = 0;
    unsigned long long first;

    if (p->what == REMOTE_ADD || p->what == LOCAL_ADD) {
        KIT_CHECK(cudaSetDevice(p->a));
        KIT_CHECK(cudaMemcpy(p->stage, p->C0, p->bytes, cudaMemcpyDeviceToHost));
        bad = check_sum(p->A, p->B, p->stage, 0, 0, p->n, &first);
        if (bad && !p->told++)
            fprintf(stderr, "%s: %s: C[%llu] = %u but A + B = %u there\n", kit_program, p->name, first,
                    p->stage[first], p->A[first] + p->B[first]);
        return bad;
    }
    if (p->what == COPY_BA || p->what == COPY_BOTH) /* into GPU a */
        bad += device_differ(p->a, p->X0, p->A0, p->bytes);
    if (p->what != COPY_BA) /* into GPU b */
        bad += device_differ(p->b, p->X1, p->A1, p->bytes);
    if (bad && !p->told++)
        fprintf(stderr, "%s: %s: %lld words differ from the source\n", kit_program, p->name, bad);
    return bad;
}

static void measure_peer(peer_t *p, enum peer_what what, kit_row *row, const kit_policy *policy)
{
    kit_work w = {peer_poison, peer_once, peer_check, p, 0.0f, 1};
    p->what = what;
    p->name = row->name;
    p->told = 0;
    peer_poison(p);
    peer_once(p); /* warms up: a first peer copy maps the other GPU's memory */
    row->wrong = peer_check(p);
    if (row->wrong == 0) {
        const kit_policy focus = kit_policy_for(policy, row->key);
        row->t = kit_measure(&w, &focus);
        row->timed = 1;
    }
}

/* set_peer_access(a, b, on) judged in the student's process (judge_peer:
 * its answer, the errors and the access it leaves). Where that is another
 * process (grading), this one then sets its own access the same way, so
 * that what follows measures what the student's call asked for. */
static int peer_judged(int a, int b, int on, int supported, int kit)
{
    struct lab08_out o;
    memset(&o, 0, sizeof o);
    remote->lab08_peer(a, b, on, supported, kit, &o);
    print_said(o.text, NULL);
#if KIT_TIME_BY_CLOCK
    if (supported)
        access_both(a, b, on);
#endif
    return o.ok;
}

/* ---- --selftest: the kit's wrong versions must be caught ---------------------------- */

typedef struct {
    const char *key;
    enum flaw flaw;
    int min_gpus, min_streams, peer;
} selftest_case;

static const selftest_case selftests[] = {
    {"right", RIGHT, 1, 1, 0},
    {"wait-each-chunk", WAIT_EACH_CHUNK, 1, 2, 0},
    {"wait-each-gpu", WAIT_EACH_GPU, 2, 1, 0},
    {"default-stream", DEFAULT_STREAM, 1, 1, 0},
    {"sync-copy", SYNC_COPY, 1, 1, 0},
    {"no-wait", NO_WAIT, 1, 1, 0},
    {"one-stream", ONE_STREAM, 1, 2, 0},
    {"setup-one-gpu", SETUP_ONE_GPU, 2, 1, 0},
    {"setup-no-streams", SETUP_NO_STREAMS, 1, 1, 0},
    {"peer-right", RIGHT, 2, 1, 1},
    {"peer-linger", PEER_LINGER, 2, 1, 1},
    {"peer-one-way", PEER_ONE_WAY, 2, 1, 1},
};

/* Whether the job of r was done as asked: set up right, and its traced run
 * in order, right, done when it returned, no error left behind. */
static int job_judged_ok(const vec_run *r)
{
    return r->setup_ok && r->trace_ok && r->traced_wrong == 0 && r->early == 0 && r->left_errors == 0;
}

/* --selftest, in place of the lab (the GPUs open, the inputs drawn): its own
 * key: value lines, a line per case, and the verdict. Returns the exit code. */
static int run_selftest(host_data *h, int ngpus, int nstreams, int supported)
{
    int pass = 1;

    kit_kv("lab", "08-multi-gpu");
    kit_kv("gpus", "%d", ngpus);
    kit_kv("size", "%u", h->n);
    kit_kv("seed", "%llu", h->seed);
    if (ngpus >= 2)
        kit_kv("peer-access", supported ? "supported" : "not supported");
    for (int i = 0; i < KIT_COUNT(selftests); i++) {
        const selftest_case *t = &selftests[i];
        char key[64];
        int clean;

        snprintf(key, sizeof key, "selftest-%s", t->key);
        if (ngpus < t->min_gpus || nstreams < t->min_streams || (t->peer && !supported)) {
            kit_kv(key, "skipped (needs %s)", ngpus < t->min_gpus ? "two GPUs" : nstreams < t->min_streams ?
                   "two streams" : "two GPUs with peer access");
            continue;
        }
        fprintf(stderr, "%s: selftest %s:\n", kit_program, t->key);
        remote->lab08_reset(0, 1, 0, t->flaw);
        if (t->peer) {
            clean = peer_judged(0, 1, 1, supported, 1);
            remote->lab08_reset(0, 1, supported, t->flaw);
        } else {
            vec_run r;
            memset(&r, 0, sizeof r);
            r.h = h;
            r.kit = 1;
            r.name = t->key;
            clean = judge_job(&r, ngpus, nstreams) && job_judged_ok(&r);
            remote->lab08_close();
        }
        remote->lab08_reset(0, 1, 0, RIGHT);
        if (t->flaw == RIGHT) {
            kit_kv(key, clean ? "passed" : "FAILED");
            pass &= clean;
        } else {
            kit_kv(key, clean ? "MISSED" : "caught");
            pass &= !clean;
        }
    }
    host_teardown(h);
    return kit_finish(pass);
}

/* ---- the lab, declared once (kit_lab.h) ------------------------------------------------ */

/* What a row of either part's table has besides its kit_row. */
typedef struct {
    int gpus, streams;  /* the job's (part 2: GPUs 0 and 1, one stream) */
    double arrays;      /* arrays of --size its GB/s count: read and written */
    int judged_ok;      /* part 1: setup, trace, early returns, errors (part 2: 1) */
} row_info;

/* What the CUDA runtime says of GPU i's way to GPU j's memory: whether it
 * can reach it (cudaDeviceCanAccessPeer), and cudaDevP2PAttr... */
typedef struct {
    int can, access, atomics, rank; /* ...AccessSupported, NativeAtomicSupported, PerformanceRank */
} pair_facts;

struct lab {
    kit_run run;
    int ngpus_opt, nstreams, selftest;
    const char *timeline_path;
    int visible, ngpus;
    kit_device gpu[KIT_MAX_GPUS]; /* gpu[0]: run.dev, as the driver opened it */
    char bus[KIT_MAX_GPUS][32];
    pair_facts pair[KIT_MAX_GPUS][KIT_MAX_GPUS];
    int supported;                /* GPUs 0 and 1 can reach each other */
    unsigned long long n;
    host_data h;
    kit_policy peer_policy;
    double link_gbs[KIT_MAX_GPUS], link_all;
    kit_row rows[MAX_ROWS];       /* part 1's versions, then part 2's copies and kernels */
    row_info info[MAX_ROWS];
    int nvec, npeer;
    kit_table vec_table, peer_table;
    timeline_t timeline;
    int peer_ok;                  /* set_peer_access judged right, on and off */
    /* What part 1 comes to (links_again). */
    const kit_row *all;           /* the version on every GPU, with streams: the graded one */
    double link_scaling, speedup_all, speedup_serial, speedup_streams, scaling_need;
    int long_copies, scaling_judged;
};

/* How many times faster b ran than a; 0 where either was not timed. */
static double speedup(const kit_row *a, const kit_row *b)
{
    return a && b && a->timed && b->timed ? a->t.median_ms / b->t.median_ms : 0.0;
}

/* Part 1's version on gpus GPUs with streams streams each (NULL: not run). */
static const kit_row *version(const lab *L, int gpus, int streams)
{
    for (int i = 0; i < L->nvec; i++)
        if (L->info[i].gpus == gpus && L->info[i].streams == streams)
            return &L->rows[i];
    return NULL;
}

/* The least time a version on gpus GPUs can take: A's and B's bytes in at
 * the host links' speed measured (0: not known). */
static double floor_ms(const lab *L, int gpus)
{
    double link = gpus == 1 ? L->link_gbs[0] : gpus == L->ngpus ? L->link_all : 0.0;
    return link > 0 ? 2.0 * L->h.bytes / (link * 1e6) : 0.0;
}

/* The columns of both tables (kit_table.h); ctx is the lab. */
static const row_info *info_of(const kit_row *r, const void *ctx)
{
    const lab *L = (const lab *)ctx;
    return &L->info[r - L->rows];
}
static double col_gpus(const kit_row *r, const void *ctx) { return info_of(r, ctx)->gpus; }
static double col_streams(const kit_row *r, const void *ctx) { return info_of(r, ctx)->streams; }
static int col_timed(const kit_row *r, const void *) { return r->timed; }

/* GB/s of the bytes the row reads and writes; 0 where it was not timed. */
static double col_gbs(const kit_row *r, const void *ctx)
{
    return r->timed ? gbs(info_of(r, ctx)->arrays * ((const lab *)ctx)->h.bytes, r->t.median_ms) : 0.0;
}

/* Part 1: against one GPU with as many streams; its key: value line only
 * for several GPUs; the least time the version can take. */
static double col_vs_one(const kit_row *r, const void *ctx)
{
    double x = speedup(version((const lab *)ctx, 1, info_of(r, ctx)->streams), r);
    return x > 0 ? x : NAN;
}
static double col_speedup(const kit_row *r, const void *ctx)
{
    return info_of(r, ctx)->gpus == 1 ? NAN : col_vs_one(r, ctx);
}
static double col_floor(const kit_row *r, const void *ctx)
{
    double f = floor_ms((const lab *)ctx, info_of(r, ctx)->gpus);
    return f > 0 ? f : NAN;
}

/* A row's check word: FLAWED where its results are right but the job was
 * not done as asked (setup, trace, early returns, errors); and the CSV's
 * correct: right, and done as asked. */
static const char *row_check(const kit_row *r, const void *ctx)
{
    const char *word = kit_row_check_word(r);
    return strcmp(word, "ok") == 0 && !info_of(r, ctx)->judged_ok ? "FLAWED" : word;
}
static int row_correct(const kit_row *r, const void *ctx) { return r->wrong == 0 && info_of(r, ctx)->judged_ok; }

/* Both parts' CSV lines in one file: the part, the row's GPUs and streams. */
static const kit_column vec_columns[] = {
    {NULL, 0, 0, NULL, "gpus", 0, NULL, 0, col_gpus, NULL},
    {NULL, 0, 0, NULL, "streams", 0, NULL, 0, col_streams, NULL},
    {"time (ms)", 10, 3, "", "time_ms", 6, NULL, 0, kit_col_time, NULL},
    {"vs 1 GPU", 9, 2, "x", NULL, 0, NULL, 0, col_vs_one, NULL},
    {"copies in (ms)", 14, 3, "", NULL, 0, NULL, 0, col_floor, NULL},
    {NULL, 0, 0, NULL, "gbs", 3, NULL, 0, col_gbs, NULL},
    {NULL, 0, 0, NULL, NULL, 0, "speedup-%s", 2, col_speedup, NULL},
};

static const kit_column peer_columns[] = {
    {NULL, 0, 0, NULL, "gpus", 0, NULL, 0, col_gpus, NULL},
    {NULL, 0, 0, NULL, "streams", 0, NULL, 0, col_streams, NULL},
    {"time (ms)", 10, 3, "", "time_ms", 6, NULL, 0, kit_col_time, NULL},
    {"GB/s", 9, 1, "", "gbs", 3, "bandwidth-%s-gbs", 1, col_gbs, col_timed},
};

/* --timeline: a file; and not with --selftest (the driver has checked --csv). */
static int prepare(lab *L)
{
    if (L->timeline_path && strcmp(L->timeline_path, "-") == 0)
        kit_die(KIT_EXIT_USAGE, "--timeline: name a file (stdout holds the report)");
    if (L->timeline_path && L->selftest)
        kit_die(KIT_EXIT_USAGE, "--timeline: not with --selftest, which runs the kit's own versions (no timeline)");
    kit_output_check("--timeline", L->timeline_path);
    return -1;
}

/* GPU 0 is open (run.dev): the others, the size, the inputs, who can reach
 * whom; then --selftest ends the program, or the lab's timing is set. */
static void setup(lab *L)
{
    const kit_common *c = &L->run.c;
    int ngpus;
    unsigned long long n;

    L->gpu[0] = L->run.dev;
    KIT_CHECK(cudaGetDeviceCount(&L->visible));
    if (L->ngpus_opt > L->visible)
        kit_die(KIT_EXIT_USAGE, "--gpus %d: this machine has %d GPU%s", L->ngpus_opt, L->visible,
                L->visible == 1 ? "" : "s");
    ngpus = L->ngpus = L->ngpus_opt ? L->ngpus_opt : L->visible < KIT_MAX_GPUS ? L->visible : KIT_MAX_GPUS;
    for (int g = 1; g < ngpus; g++)
        kit_device_open(g, &L->gpu[g]);
    /* --focus all-gpus, the grader's metric: the row on every GPU. */
    if (kit_focus && strcmp(kit_focus, "all-gpus") == 0) {
        static char focus_all[32];
        snprintf(focus_all, sizeof focus_all, "gpus-%d", ngpus);
        kit_focus = focus_all;
    }

    /* The size: every GPU holds at most GPU_ARRAYS arrays of it, and
     * each chunk must have an element. */
    n = c->size ? c->size : L->selftest ? SELFTEST_SIZE : DEFAULT_SIZE;
    for (int g = 0; g < ngpus; g++) {
        const kit_device *d = &L->gpu[g];
        long long spare = d->free_bytes - (64ll << 20);
        unsigned long long fit = spare > 0 ? (unsigned long long)spare / (GPU_ARRAYS * sizeof(unsigned int)) : 0;
        if (n > fit) {
            if (c->size)
                kit_die(KIT_EXIT_USAGE, "--size %llu needs %.0f MiB on each GPU, but GPU %d (%s) has %.0f MiB "
                                        "free; choose a smaller --size", n, (GPU_ARRAYS * 4.0 * n + (64 << 20)) / 1048576.0,
                        g, d->name, d->free_bytes / 1048576.0);
            n = kit_pow2_floor(fit);
        }
    }
    if (!c->size && !L->selftest) {
        /* Three pinned host arrays: WSL 2 limits how much can be pinned. */
        int capped;
        n = kit_pinned_default_size(n, 1u << 20, 3 * sizeof(unsigned int), 0, &capped);
        if (capped)
            kit_pinned_capped_note(n, 3.0 * sizeof(unsigned int) * n);
    }
    if (n < (unsigned long long)ngpus * L->nstreams)
        kit_die(KIT_EXIT_USAGE, "--size %llu is too small for %d GPU%s of %d streams: every chunk needs an "
                                "element (at least %d)", n, ngpus, ngpus == 1 ? "" : "s", L->nstreams,
                ngpus * L->nstreams);
    L->n = n;
    host_setup(&L->h, (unsigned int)n, c->seed);

    /* Who can reach whom, and how (part 2 says it). */
    for (int i = 0; i < ngpus; i++) {
        KIT_CHECK(cudaDeviceGetPCIBusId(L->bus[i], sizeof L->bus[i], i));
        for (int j = 0; j < ngpus; j++) {
            pair_facts *x = &L->pair[i][j];
            if (i == j)
                continue;
            KIT_CHECK(cudaDeviceCanAccessPeer(&x->can, i, j));
            KIT_CHECK(cudaDeviceGetP2PAttribute(&x->rank, cudaDevP2PAttrPerformanceRank, i, j));
            KIT_CHECK(cudaDeviceGetP2PAttribute(&x->access, cudaDevP2PAttrAccessSupported, i, j));
            KIT_CHECK(cudaDeviceGetP2PAttribute(&x->atomics, cudaDevP2PAttrNativeAtomicSupported, i, j));
        }
    }
    L->supported = ngpus >= 2 && L->pair[0][1].can && L->pair[1][0].can;
    if (L->selftest)
        exit(run_selftest(&L->h, ngpus, L->nstreams, L->supported));

    /* Every run is checked on the host, which takes longer than the run:
     * few runs, and a looser target than the kit's 2%. */
    L->run.policy.max_reps = 15;
    L->run.policy.max_ms = 300.0;
    L->run.policy.noise = 0.03;
    L->peer_policy = L->run.policy;
    L->peer_policy.max_reps = 20;
}

/* The banner: the kit's line of every GPU, with its PCI bus. */
static void banner(lab *L)
{
    printf("%s\n", TITLE);
    for (int g = 0; g < L->ngpus; g++) {
        const kit_device *d = &L->gpu[g];
        printf("GPU %d: %s, compute capability %d.%d, %d SMs, %.1f MiB L2, %.1f GiB memory, PCI %s\n", g, d->name,
               d->cc_major, d->cc_minor, d->sms, d->l2_bytes / 1048576.0, d->global_bytes / 1073741824.0, L->bus[g]);
    }
    kit_platform_banner(); /* WSL 2 says so; a Linux host prints nothing */
    if (L->visible > L->ngpus)
        printf("(this program sees %d GPUs and uses %d: --gpus)\n", L->visible, L->ngpus);
    for (int g = 1; g < L->ngpus; g++)
        if (strcmp(L->gpu[g].name, L->gpu[0].name)) {
            printf("(the GPUs differ: with equal shares, all wait for the slowest)\n");
            break;
        }
}

/* The facts, one per line, for tests and graders. */
static void facts(lab *L)
{
    char key[32];
    kit_kv("gpus-visible", "%d", L->visible);
    kit_kv("gpus", "%d", L->ngpus);
    for (int g = 0; g < L->ngpus; g++) {
        snprintf(key, sizeof key, "device-%d", g);
        kit_kv(key, "%s", L->gpu[g].name);
        snprintf(key, sizeof key, "pci-bus-id-%d", g);
        kit_kv(key, "%s", L->bus[g]);
    }
    kit_kv("size", "%llu", L->n);
    kit_kv("streams", "%d", L->nstreams);
    kit_kv("pinned-host-bytes", "%zu", 3 * L->h.bytes);
    if (L->ngpus >= 2)
        kit_kv("multi-gpu", "ran (%d GPUs)", L->ngpus);
    else /* one GPU: all this program sees, or --gpus 1 */
        kit_kv("multi-gpu", L->visible < 2 ? "skipped (%d GPU)" : "skipped (--gpus %d)",
               L->visible < 2 ? L->visible : 1);
}

/* Part 1: the host links, then the job on one GPU, on powers of two of
 * them and on all, with --streams streams per GPU and, on one and on all,
 * with one; each judged, checked and timed (measure_vec). */
static void part1_measure(lab *L)
{
    int counts[8], nk = 0, ngpus = L->ngpus, nstreams = L->nstreams;
    vec_run r;

    L->link_all = measure_links(&L->h, ngpus, L->link_gbs, &L->run.policy);
    counts[nk++] = 1;
    for (int k = 2; k < ngpus; k *= 2)
        counts[nk++] = k;
    if (ngpus > 1)
        counts[nk++] = ngpus;
    memset(&r, 0, sizeof r);
    r.h = &L->h;
    /* --timeline: the version on every GPU, with streams (on one GPU, its own with streams). */
    r.traced_gpus = L->timeline_path ? ngpus : 0;
    r.traced_streams = nstreams;
    r.timeline = &L->timeline;
    for (int i = 0, failed = 0; i < nk && !failed; i++) {
        int k = counts[i];
        for (int serial = nstreams > 1 && (k == 1 || k == ngpus) ? 1 : 0; serial >= 0 && !failed; serial--) {
            kit_row *row = &L->rows[L->nvec];
            int s = serial ? 1 : nstreams;
            char key[32];
            snprintf(key, sizeof key, serial ? "gpus-%d-streams-1" : "gpus-%d", k);
            kit_row_name(row, key, ADD_TODOS, "%d GPU%s, %d stream%s%s", k, k == 1 ? "" : "s", s,
                         s == 1 ? "" : "s", k == 1 ? "" : " each");
            measure_vec(&r, row, k, s, &L->run.policy);
            if (!r.setup_ok)
                row->wrong = -1;
            row_info x = {k, s, 3.0 /* A and B read, C written */, job_judged_ok(&r)};
            L->info[L->nvec++] = x;
            failed = !r.setup_ok; /* the same setup fails again */
        }
    }
    host_inputs_free(&L->h);
    kit_table t = {"version", 28, L->rows, L->nvec, vec_columns, KIT_COUNT(vec_columns), L,
                   NULL, row_check, row_correct, NULL, NULL, NULL, 1};
    L->vec_table = t;
}

static void part1_print(lab *L)
{
    printf("\nPart 1: C = A + B, %s unsigned ints (%.0f MiB per array) in pinned host memory, seed %llu\n",
           kit_grouped(L->n), L->h.bytes / 1048576.0, L->run.c.seed);
    printf("host links, copies in alone: ");
    for (int g = 0; g < L->ngpus; g++)
        printf("%sGPU %d %.1f GB/s", g ? ", " : "", g, L->link_gbs[g]);
    if (L->ngpus > 1)
        printf("; all at once %.1f GB/s (%.2fx one GPU)", L->link_all, L->link_scaling);
    printf("\n\n");
    kit_table_print(&L->vec_table);
    printf("(copies in: A's and B's bytes at the links' speed measured above, the least the version can take)\n");
    if (L->timeline.done)
        printf("\ntimeline of %s, from your traced build: %d copies and kernels over %.3f ms, each GPU's\n"
               "clock on the host's within %.3f ms%s (--timeline %s; make report draws it)\n", L->timeline.version,
               L->timeline.o->nspans, L->timeline.o->run_ms, L->timeline.worst_uncertainty_ms,
               L->timeline.o->missed ? "; some copies not recorded" : "", L->timeline_path);
}

static void part1_csv(lab *L, FILE *f) { kit_table_csv(f, &L->vec_table, &L->run.dev, L->n, L->run.c.seed, 1); }

/* Part 1's lines; and --timeline's file, written here after the CSV. */
static void part1_kv(lab *L)
{
    const timeline_t *tl = &L->timeline;
    char key[48];

    for (int g = 0; g < L->ngpus; g++) {
        snprintf(key, sizeof key, "h2d-gbs-gpu-%d", g);
        kit_kv(key, "%.1f", L->link_gbs[g]);
    }
    if (L->ngpus > 1) {
        kit_kv("h2d-gbs-all-gpus", "%.1f", L->link_all);
        kit_kv("host-link-scaling", "%.2f", L->link_scaling);
    }
    kit_table_kv(&L->vec_table);
    if (L->all && L->all->timed) { /* the graded time, with its row's checks */
        kit_kv("time-all-gpus-ms", "%.4f", L->all->t.median_ms);
        kit_kv("wrong-elements-all-gpus", "%lld", L->all->wrong);
        kit_kv("bad-timed-runs-all-gpus", "%d", L->all->t.bad_runs);
    }
    kit_kv("speedup-all-gpus", "%.2f", L->speedup_all);
    if (L->ngpus >= 2) {
        kit_kv("speedup-all-gpus-needed", "%.2f", L->scaling_need);
        kit_kv("scaling-judged", "%s", L->scaling_judged ? "yes" : "no");
    }
    if (L->speedup_serial > 0)
        kit_kv("speedup-all-gpus-streams-1", "%.2f", L->speedup_serial);
    if (L->speedup_streams > 0)
        kit_kv("speedup-streams-1-gpu", "%.2f", L->speedup_streams);
    if (tl->done) {
        write_timeline(L->timeline_path, tl);
        kit_kv("timeline-version", "%s", tl->version);
        kit_kv("timeline-gpus", "%d", tl->ngpus);
        kit_kv("timeline-streams", "%d", tl->nstreams);
        kit_kv("timeline-spans", "%d", tl->o->nspans);
        kit_kv("timeline-kernels", "%d", tl->launches_seen);
        kit_kv("timeline-copies-missed", "%lld", tl->o->missed);
        kit_kv("timeline-ms", "%.4f", tl->o->run_ms);
        kit_kv("timeline-uncertainty-ms", "%.4f", tl->worst_uncertainty_ms);
        for (int g = 0; g < tl->ngpus; g++) {
            snprintf(key, sizeof key, "timeline-uncertainty-ms-gpu-%d", g);
            kit_kv(key, "%.4f", tl->o->uncertainty_ms[g]);
        }
        kit_kv("wrong-elements-timeline", "%lld", tl->wrong);
    } else if (L->timeline_path) {
        fprintf(stderr, "%s: --timeline %s: not written: the version on every GPU was not set up (above)\n",
                kit_program, L->timeline_path);
    }
}

/*
 * Every version right in every run and done as asked. The verdict by the
 * clock (in grading, the judge's): on every GPU at once the job must gain
 * at least a quarter (MIN_SHARE_OF_LINK_GAIN) of what the host links gain
 * when all copy at once (the kit measures both), judged where the links
 * gain at least MIN_LINK_SCALING; and no row may take less than
 * FLOOR_SHARE of the time its copies in need at the links' speed.
 */
static void part1_verdict(lab *L)
{
    for (int i = 0; i < L->nvec; i++) {
        if (!L->info[i].judged_ok)
            L->run.pass = 0;
        if (L->rows[i].wrong >= 0 && !kit_row_ok(&L->rows[i], L->n))
            L->run.pass = 0;
    }
    if (L->ngpus >= 2 && !L->scaling_judged && !L->long_copies)
        fprintf(stderr, "%s: note: the scaling is not judged: one GPU's copies in are %.1f MiB and take %.3f ms at "
                        "this size, too little against each operation's own cost (--size larger)\n", kit_program,
                2.0 * L->h.bytes / 1048576.0, floor_ms(L, 1));
    if (L->scaling_judged && L->speedup_all < L->scaling_need) {
        fprintf(stderr, "%s: %s: %.2fx one GPU, but the host links carry %.2fx at once, so at least %.2fx is "
                        "needed: do the GPUs work at the same time, each on its own share? (TODO(1) and "
                        "TODO(2))\n", kit_program, L->all->name, L->speedup_all, L->link_scaling, L->scaling_need);
        L->run.pass = 0;
    }
    for (int i = 0; i < L->nvec; i++) {
        const kit_row *r = &L->rows[i];
        double f = floor_ms(L, L->info[i].gpus);
        /* Judged at the scaling's sizes only: in small copies each
         * operation's own cost is most of the time measured alone, and
         * streams overlap it (a PTX-only build on an H100, 33 elements: 2
         * streams took 0.171 ms against 0.567 ms measured alone). */
        if (f > 0 && L->long_copies && r->timed && r->t.median_ms < FLOOR_SHARE * f) {
            fprintf(stderr, "%s: %s: %.3f ms, but its copies in alone take %.3f ms at the links' speed: the "
                            "work cannot have been done in that time\n", kit_program, r->name, r->t.median_ms, f);
            L->run.pass = 0;
        }
    }
    if (L->timeline.wrong)
        L->run.pass = 0;
}

/* Part 2's rows, in the order measured: with peer access on (only where
 * GPUs 0 and 1 can reach each other), then off from STAGED_DRIVER on. */
typedef struct {
    const char *key, *name;
    enum peer_what what;
    double arrays; /* of --size its GB/s count: bytes copied (both ways for "both"); an add's A, B and C */
} peer_case;

static const peer_case peer_cases[] = {
    {"peer-copy", "cudaMemcpyPeer GPU 0 -> 1, peer access on", COPY_AB, 1},
    {"peer-copy-back", "cudaMemcpyPeer GPU 1 -> 0, peer access on", COPY_BA, 1},
    {"peer-copy-both", "both at once, peer access on", COPY_BOTH, 2},
    {"remote-add", "GPU 0 adds A, B of GPU 1's memory", REMOTE_ADD, 3},
    {"local-add", "GPU 0 adds A, B of its own memory", LOCAL_ADD, 3},
    {"staged-copy", "cudaMemcpyPeer GPU 0 -> 1, peer access off", STAGED_DRIVER, 1},
    {"host-staged-copy", "GPU 0 -> host -> GPU 1, by the kit", STAGED_KIT, 1},
};

/* Part 2, with two GPUs or more: the student's set_peer_access between
 * GPUs 0 and 1, on and off, and the copies and kernels between them. */
static void part2_measure(lab *L)
{
    peer_t p;

    L->peer_ok = 1;
    if (L->ngpus >= 2) {
        peer_setup(&p, &L->h, 0, 1);
        L->peer_ok = peer_judged(0, 1, 1, L->supported, 0);
        for (int i = 0; i < KIT_COUNT(peer_cases); i++) {
            const peer_case *pc = &peer_cases[i];
            kit_row *row = &L->rows[L->nvec + L->npeer];
            row_info x = {2, 1, pc->arrays, 1};
            if (pc->what <= REMOTE_ADD && !L->supported)
                continue;
            if (pc->what == STAGED_DRIVER)
                L->peer_ok &= peer_judged(0, 1, 0, L->supported, 0);
            L->info[L->nvec + L->npeer++] = x;
            kit_row_name(row, pc->key, NULL, "%s", pc->name);
            measure_peer(&p, pc->what, row, &L->peer_policy);
        }
        peer_teardown(&p);
    }
    kit_table t = {"copy or kernel", 44, L->rows + L->nvec, L->npeer, peer_columns, KIT_COUNT(peer_columns), L,
                   NULL, row_check, row_correct, NULL, NULL, NULL, 2};
    L->peer_table = t;
}

/* Part 2's row key: its GB/s, or (ms) its time; 0 where it was not timed. */
static double peer_figure(const lab *L, const char *key, int ms)
{
    for (int i = L->nvec; i < L->nvec + L->npeer; i++) {
        const kit_row *r = &L->rows[i];
        if (r->timed && strcmp(r->key, key) == 0)
            return ms ? r->t.median_ms : col_gbs(r, L);
    }
    return 0.0;
}

static void part2_print(lab *L)
{
    int ngpus = L->ngpus;
    double on_gbs = peer_figure(L, "peer-copy", 0);

    if (ngpus < 2) {
        if (L->visible < 2)
            printf("\nThe multi-GPU part needs two GPUs; this program sees %d. This run timed one GPU only:\n"
                   "run it on a machine with two or more for the scaling and the peer-to-peer part.\n\n", L->visible);
        else
            printf("\nThe multi-GPU part needs two GPUs; --gpus 1 asked for one.\n\n");
        return;
    }
    printf("\nPart 2: GPUs 0 and 1, %.0f MiB per copy\n", L->h.bytes / 1048576.0);
    printf("peer access (cudaDeviceCanAccessPeer: can the row's GPU reach the column's memory?)\n%8s", "");
    for (int j = 0; j < ngpus; j++)
        printf(" GPU %-3d", j);
    printf("\n");
    for (int i = 0; i < ngpus; i++) {
        printf("GPU %-4d", i);
        for (int j = 0; j < ngpus; j++)
            printf(" %-7s", i == j ? "-" : L->pair[i][j].can ? "yes" : "no");
        printf("\n");
    }
    printf("\nthe topology as the CUDA runtime sees it (nvidia-smi topo -m says it in its own terms):\n");
    for (int i = 0; i < ngpus; i++)
        for (int j = 0; j < ngpus; j++)
            if (i != j)
                printf("  GPU %d -> GPU %d: peer access %s, native atomics %s, performance rank %d\n", i, j,
                       L->pair[i][j].access ? "supported" : "not supported", L->pair[i][j].atomics ? "yes" : "no",
                       L->pair[i][j].rank);
    printf("  the link between GPUs 0 and 1: %s\n\n",
           !L->supported ? "no peer access: every copy between the GPUs goes through the host"
           : on_gbs > PCIE_X16_GBS ? "faster than any PCIe x16 link: a direct link (NVLink)"
           : "at PCIe speed: through PCIe (a switch, or the CPU)");
    kit_table_print(&L->peer_table);
    if (!L->supported)
        printf("(GPUs 0 and 1 cannot reach each other: no row with peer access on)\n");
    printf("(GB/s: bytes copied, both ways for \"both\"; for the adds, A and B read and C written)\n");
    printf("\n");
}

static void part2_csv(lab *L, FILE *f) { kit_table_csv(f, &L->peer_table, &L->run.dev, L->n, L->run.c.seed, 0); }

static void part2_kv(lab *L)
{
    double on_gbs = peer_figure(L, "peer-copy", 0), staged_gbs = peer_figure(L, "staged-copy", 0);
    double kit_staged_gbs = peer_figure(L, "host-staged-copy", 0);
    double remote_ms = peer_figure(L, "remote-add", 1), local_ms = peer_figure(L, "local-add", 1);
    char key[48];

    if (L->ngpus < 2)
        return;
    for (int i = 0; i < L->ngpus; i++)
        for (int j = 0; j < L->ngpus; j++) {
            if (i == j)
                continue;
            snprintf(key, sizeof key, "peer-access-%d-%d", i, j);
            kit_kv(key, "%d", L->pair[i][j].can);
            snprintf(key, sizeof key, "p2p-performance-rank-%d-%d", i, j);
            kit_kv(key, "%d", L->pair[i][j].rank);
            snprintf(key, sizeof key, "p2p-native-atomics-%d-%d", i, j);
            kit_kv(key, "%d", L->pair[i][j].atomics);
        }
    kit_kv("peer-access", L->supported ? "supported" : "not supported");
    kit_table_kv(&L->peer_table);
    if (on_gbs > 0 && staged_gbs > 0)
        kit_kv("peer-over-staged", "%.2f", on_gbs / staged_gbs);
    if (kit_staged_gbs > 0 && staged_gbs > 0)
        kit_kv("staged-driver-over-kit", "%.2f", staged_gbs / kit_staged_gbs);
    if (remote_ms > 0 && local_ms > 0)
        kit_kv("remote-add-over-local", "%.2f", remote_ms / local_ms);
    kit_kv("peer-link", "%s", !L->supported ? "none" : on_gbs > PCIE_X16_GBS ? "nvlink-class" : "pcie-class");
    kit_kv("peer-access-checked", "%s", L->peer_ok ? "yes" : "no");
}

/* set_peer_access right, on and off; every copy and kernel right in every run. */
static void part2_verdict(lab *L)
{
    if (!L->peer_ok)
        L->run.pass = 0;
    for (int i = L->nvec; i < L->nvec + L->npeer; i++)
        if (!kit_row_ok(&L->rows[i], L->n))
            L->run.pass = 0;
}

/*
 * Last, after the student's last call (part 2): every GPU idle, and the
 * host links timed again with the student's process gone (grading), on
 * which part 1's bar and floors rest; then what part 1 comes to.
 */
static void links_again(lab *L)
{
    sync_gpus(L->ngpus);
    if (student_done(&L->h))
        L->link_all = measure_links(&L->h, L->ngpus, L->link_gbs, &L->run.policy);
    /* Against one GPU with as many streams (with --streams 1, one and the same). */
    const kit_row *one = version(L, 1, L->nstreams), *one_serial = version(L, 1, 1);
    L->all = version(L, L->ngpus, L->nstreams);
    L->speedup_all = speedup(one, L->all);
    L->speedup_serial = speedup(one_serial, version(L, L->ngpus, 1));
    L->speedup_streams = speedup(one_serial, one);
    L->link_scaling = L->ngpus > 1 && L->link_gbs[0] > 0 ? L->link_all / L->link_gbs[0] : 1.0;
    L->scaling_need = 1.0 + MIN_SHARE_OF_LINK_GAIN * (L->link_scaling - 1.0);
    L->long_copies = floor_ms(L, 1) >= MIN_SCALING_FLOOR_MS && 2.0 * L->h.bytes >= MIN_JUDGED_BYTES;
    L->scaling_judged = L->ngpus >= 2 && one && L->all && one->timed && L->all->timed &&
                        L->link_scaling >= MIN_LINK_SCALING && L->long_copies;
}

static void summary(lab *L)
{
    if (L->ngpus >= 2)
        kit_kv("summary", "%d GPUs %.2fx one GPU with %d streams each (%.2fx with one), copies included, at %s "
                          "elements; host links %.2fx; GPU 0 -> 1: %.0f GB/s with peer access, %.0f GB/s staged "
                          "through the host", L->ngpus, L->speedup_all, L->nstreams, L->speedup_serial,
               kit_grouped(L->n), L->link_scaling, peer_figure(L, "peer-copy", 0), peer_figure(L, "staged-copy", 0));
    else
        kit_kv("summary", "1 GPU: %d streams %.2fx one stream at %s elements; the multi-GPU part needs two GPUs",
               L->nstreams, L->speedup_streams, kit_grouped(L->n));
    kit_kv("course-k40", "no figure: the slides show the code for two GPUs (cudaSetDevice, then streams on each) "
                         "and for peer copies, without timings");
}

static void teardown(lab *L) { host_teardown(&L->h); }

static const kit_part parts[] = {
    {part1_measure, part1_print, part1_csv, part1_kv, part1_verdict},
    {part2_measure, part2_print, part2_csv, part2_kv, part2_verdict},
    /* Part 1's figures: measured last, as they rest on the links without the student's process. */
    {links_again, NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    static lab L;
    kit_common *c = &L.run.c;
    kit_option opts[] = {
        {"--size", KIT_OPT_SIZE, &c->size, "N",
         "elements per array (default: 67,108,864, less where a GPU has less memory)", KIT_MIN_SIZE,
         KIT_MAX_SIZE, NULL},
        {"--gpus", KIT_OPT_INT, &L.ngpus_opt, "G", "use GPUs 0 to G-1 (default: every GPU this program sees)", 1,
         KIT_MAX_GPUS, NULL},
        {"--streams", KIT_OPT_INT, &L.nstreams, "S", "streams (chunks) per GPU (default: 4)", 1, KIT_MAX_STREAMS,
         NULL},
        {"--reps", KIT_OPT_INT, &c->reps, "R",
         "timed runs of each version (default: until the median is steady); the median is reported", 1, 1000,
         NULL},
        {"--seed", KIT_OPT_U64, &c->seed, "S", "random seed (default: a fresh one, printed)", 0, 0, &c->seed_given},
        KIT_FOCUS_OPTION,
        {"--csv", KIT_OPT_STRING, &c->csv, "FILE", "also write the tables as CSV ('-': stdout)", 0, 0, NULL},
        {"--timeline", KIT_OPT_STRING, &L.timeline_path, "FILE",
         "trace one run more of the version on every GPU and write when each copy and kernel ran as CSV "
         "(gpu, operation, stream, start and end in ms, version)", 0, 0, NULL},
        {"--selftest", KIT_OPT_FLAG, &L.selftest, NULL,
         "run the kit's own wrong versions through the checks instead (for the kit's tests)", 0, 0, NULL},
    };
    const kit_lab lab08 = {
        "08-multi-gpu",
        TITLE,
        TITLE ". Spreads the course's vector addition over every GPU\n"
        "(cudaSetDevice, streams on each GPU, pinned host memory) and times it against\n"
        "one GPU; then, with two GPUs or more, peer-to-peer access between GPUs 0 and 1:\n"
        "which GPUs can reach which, copies with peer access on and off, and a kernel\n"
        "reading the other GPU's memory. Checks every result.",
        opts, KIT_COUNT(opts), prepare, setup, NULL, facts, summary, teardown, parts, KIT_COUNT(parts), banner,
    };
    kit_run_defaults(&L.run);
    L.nstreams = DEFAULT_STREAMS;
    return kit_lab_main(&lab08, &L, &L.run, argc, argv);
}
