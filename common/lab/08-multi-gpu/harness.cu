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
#include "kit_timeline.h"
#include "kit_timing.h"

#include "contract.h"
#include "tools.h"
#include "kit_student.h"
#if !KIT_TIME_BY_CLOCK
#include "remote.h"
#endif

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
#define MAX_ROWS 12
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

/* C[i] == A[i] + B[i] for every i, on the host's cores. */
typedef struct {
    const unsigned int *A, *B, *C;
} sum_ctx;

static long long sum_range(unsigned long long begin, unsigned long long end, void *p, unsigned long long *first)
{
    const sum_ctx *k = (const sum_ctx *)p;
    long long bad = 0;
    for (unsigned long long i = begin; i < end; i++)
        if (k->C[i] != k->A[i] + k->B[i] && bad++ == 0)
            *first = i;
    return bad;
}

static long long check_sum(const unsigned int *A, const unsigned int *B, const unsigned int *C, unsigned int n,
                           unsigned long long *first)
{
    sum_ctx k = {A, B, C};
    return kit_parallel_check(n, sum_range, &k, first);
}

/* How long w->run takes by the host's clock (it returns when its work is done). */
static float wall_run(const kit_work *w)
{
    double t0 = kit_wall_ms();
    w->run(w->ctx);
    return (float)(kit_wall_ms() - t0);
}

/* kit_measure by the host's clock: w->run returns only when its work is
 * done, on however many GPUs, and no one GPU's events span it all. */
static kit_measurement measure_wall(const kit_work *w, const kit_policy *p)
{
    kit_work by_wall = *w;
    by_wall.wall_clock = 1;
    return kit_measure(&by_wall, p);
}

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

static long long sum_range_keyed(unsigned long long begin, unsigned long long end, void *p,
                                 unsigned long long *first)
{
    const host_data *h = (const host_data *)p;
    long long bad = 0;
    for (unsigned long long i = begin; i < end; i++)
        if (h->C[i] != (h->hA[i] ^ h->ka) + (h->hB[i] ^ h->kb) && bad++ == 0)
            *first = i;
    return bad;
}

/* Elements of C that are not the last run's A + B, against the kit's own
 * copies of them (the job's A and B are the student's to read, and change). */
static long long check_c(const host_data *h, unsigned long long *first)
{
    return kit_parallel_check(h->n, sum_range_keyed, (void *)h, first);
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

static void close_job(vec_run *r)
{
    (void)r;
    remote->lab08_close();
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
    bad = check_c(h, &first);
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

typedef struct {
    int done;          /* a traced run happened */
    const char *version;
    int ngpus, nstreams;
    long long wrong;   /* elements wrong after it, one more if it returned early or left an error */
    int nspans, launches_seen;
    long long missed;
    double run_ms, uncertainty_ms[KIT_MAX_GPUS], worst_uncertainty_ms;
    struct lab08_span *spans;
} timeline_t;

/* The traced out of the student's process: large, so one, kept. */
static struct lab08_timeline_out timeline_out;

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
    tl->nspans = o->nspans;
    tl->missed = o->missed;
    tl->run_ms = o->run_ms;
    tl->spans = (struct lab08_span *)kit_host_alloc(sizeof(struct lab08_span) * (size_t)(o->nspans + 1));
    memcpy(tl->spans, o->spans, sizeof(struct lab08_span) * (size_t)o->nspans);
    for (int g = 0; g < r->ngpus; g++) {
        tl->uncertainty_ms[g] = o->uncertainty_ms[g];
        if (o->uncertainty_ms[g] > tl->worst_uncertainty_ms)
            tl->worst_uncertainty_ms = o->uncertainty_ms[g];
    }
    for (int i = 0; i < tl->nspans; i++)
        tl->launches_seen += tl->spans[i].op == KIT_OP_KERNEL;
    tl->done = 1;
}

/* --timeline's CSV: a row per span, the columns of Lab 05's with the GPU
 * first (chunk c of a GPU is its stream[c], so there is no chunk column). */
static void write_timeline(const char *path, const timeline_t *tl)
{
    FILE *f = kit_csv_open(path);
    fprintf(f, "gpu,operation,stream,start_ms,end_ms,version\n");
    for (int i = 0; i < tl->nspans; i++) {
        const struct lab08_span *x = &tl->spans[i];
        fprintf(f, "%d,%s,%d,%.6f,%.6f,\"%s\"\n", x->gpu, kit_op_name[x->op], x->stream, x->start_ms, x->end_ms,
                tl->version);
    }
    kit_csv_close(f);
}

static timeline_t timeline;

/* One row: the job judged, then checked and timed in the timed build. */
static void measure_vec(vec_run *r, kit_row *row, int ngpus, int nstreams, const kit_policy *policy)
{
    r->name = row->name;
    r->early = r->left_errors = 0;
    r->told = 0;
    if (judge_job(r, ngpus, nstreams)) {
        kit_work w = {vec_poison, vec_run_once, vec_check, r, 0.0f, 0};
        vec_poison(r);
        w.first_ms = wall_run(&w); /* the checked run, the first sample */
        vec_check(r);
        row->wrong = r->last_wrong;
        if (row->wrong == 0 && r->early == 0 && r->left_errors == 0) {
            const kit_policy focus = kit_policy_for(policy, row->key);
            row->t = measure_wall(&w, &focus);
            row->timed = 1;
        }
        /* After its timed runs, never among them. */
        if (ngpus == r->traced_gpus && nstreams == r->traced_streams)
            traced_timeline(r, row->name, &timeline);
    }
    close_job(r);
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
    kit_work w = {NULL, link_once, NULL, &l, 0.0f, 0};
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
        per[which] = gbs((double)h->bytes, measure_wall(&w, policy).median_ms);
    }
    if (ngpus > 1) {
        l.which = -1;
        link_once(&l);
        all = gbs((double)h->bytes, measure_wall(&w, policy).median_ms);
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

    switch (p->what) {
    case REMOTE_ADD:
    case LOCAL_ADD:
        KIT_CHECK(cudaSetDevice(p->a));
        KIT_CHECK(cudaMemcpy(p->stage, p->C0, p->bytes, cudaMemcpyDeviceToHost));
        bad = check_sum(p->A, p->B, p->stage, p->n, &first);
        if (bad && !p->told++)
            fprintf(stderr, "%s: %s: C[%llu] = %u but A + B = %u there\n", kit_program, p->name, first,
                    p->stage[first], p->A[first] + p->B[first]);
        return bad;
    case COPY_BA:
        bad = device_differ(p->a, p->X0, p->A0, p->bytes);
        break;
    case COPY_BOTH:
        bad = device_differ(p->a, p->X0, p->A0, p->bytes) + device_differ(p->b, p->X1, p->A1, p->bytes);
        break;
    default:
        bad = device_differ(p->b, p->X1, p->A1, p->bytes);
        break;
    }
    if (bad && !p->told++)
        fprintf(stderr, "%s: %s: %lld words differ from the source\n", kit_program, p->name, bad);
    return bad;
}

static void measure_peer(peer_t *p, enum peer_what what, kit_row *row, const kit_policy *policy)
{
    kit_work w = {peer_poison, peer_once, peer_check, p, 0.0f, 0};
    p->what = what;
    p->name = row->name;
    p->told = 0;
    peer_poison(p);
    peer_once(p); /* warms up: a first peer copy maps the other GPU's memory */
    row->wrong = peer_check(p);
    if (row->wrong == 0) {
        const kit_policy focus = kit_policy_for(policy, row->key);
        row->t = measure_wall(&w, &focus);
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
    for (int i = 0; supported && i < 2; i++) {
        int x = i ? b : a, y = i ? a : b;
        cudaError_t e;
        KIT_CHECK(cudaSetDevice(x));
        e = on ? cudaDeviceEnablePeerAccess(y, 0) : cudaDeviceDisablePeerAccess(y);
        if (e != cudaErrorPeerAccessAlreadyEnabled && e != cudaErrorPeerAccessNotEnabled)
            KIT_CHECK(e);
        cudaGetLastError();
    }
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

static int run_selftest(host_data *h, int ngpus, int nstreams, int supported)
{
    int pass = 1;

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
            clean = judge_job(&r, ngpus, nstreams) && r.trace_ok && r.traced_wrong == 0 && r.early == 0 &&
                    r.left_errors == 0;
            close_job(&r);
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
    return pass;
}

/* ---- the report --------------------------------------------------------------------- */

/* The row's check word, FLAWED where its results are right but the job was
 * not done as asked (setup, trace, early returns, errors). */
static const char *check_word(const kit_row *r, int judged_ok)
{
    const char *word = kit_row_check_word(r);
    return strcmp(word, "ok") == 0 && !judged_ok ? "FLAWED" : word;
}

typedef struct {
    kit_row row;
    int gpus, streams;
    int judged_ok; /* setup, trace, early returns, errors */
    double floor_ms; /* the copies in alone at the links' speed; 0: unknown */
} vec_row;

static void print_time(const kit_row *r)
{
    if (r->timed)
        printf(" %10.3f", r->t.median_ms);
    else
        printf(" %10s", "-");
}

int main(int argc, char **argv)
{
    kit_common c;
    kit_device dev[KIT_MAX_GPUS];
    int ngpus_opt = 0, nstreams = DEFAULT_STREAMS, selftest = 0, visible = 0, ngpus, pass = 1;
    const char *timeline_path = NULL;
    kit_option opts[] = {
        {"--size", KIT_OPT_SIZE, &c.size, "N",
         "elements per array (default: 67,108,864, less where a GPU has less memory)", KIT_MIN_SIZE,
         KIT_MAX_SIZE, NULL},
        {"--gpus", KIT_OPT_INT, &ngpus_opt, "G", "use GPUs 0 to G-1 (default: every GPU this program sees)", 1,
         KIT_MAX_GPUS, NULL},
        {"--streams", KIT_OPT_INT, &nstreams, "S", "streams (chunks) per GPU (default: 4)", 1, KIT_MAX_STREAMS,
         NULL},
        {"--reps", KIT_OPT_INT, &c.reps, "R",
         "timed runs of each version (default: until the median is steady); the median is reported", 1, 1000,
         NULL},
        {"--seed", KIT_OPT_U64, &c.seed, "S", "random seed (default: a fresh one, printed)", 0, 0, &c.seed_given},
        KIT_FOCUS_OPTION,
        {"--csv", KIT_OPT_STRING, &c.csv, "FILE", "also write the tables as CSV ('-': stdout)", 0, 0, NULL},
        {"--timeline", KIT_OPT_STRING, &timeline_path, "FILE",
         "trace one run more of the version on every GPU and write when each copy and kernel ran as CSV "
         "(gpu, operation, stream, start and end in ms, version)", 0, 0, NULL},
        {"--selftest", KIT_OPT_FLAG, &selftest, NULL,
         "run the kit's own wrong versions through the checks instead (for the kit's tests)", 0, 0, NULL},
    };
    host_data h;
    vec_row rows[MAX_ROWS];
    kit_row prow[7];
    int nrows = 0, nprow = 0, supported = 0, peer_ok = 1;
    int can[KIT_MAX_GPUS][KIT_MAX_GPUS];
    char bus[KIT_MAX_GPUS][32];
    double link_gbs[KIT_MAX_GPUS], link_all = 0.0;
    kit_policy policy, peer_policy;
    unsigned long long n;
    const char *multi = NULL;
    char multi_why[64];

    kit_common_defaults(&c);
    c.reps = 0;
    kit_parse_args(argc, argv,
                   "Lab 08: several GPUs. Spreads the course's vector addition over every GPU\n"
                   "(cudaSetDevice, streams on each GPU, pinned host memory) and times it against\n"
                   "one GPU; then, with two GPUs or more, peer-to-peer access between GPUs 0 and 1:\n"
                   "which GPUs can reach which, copies with peer access on and off, and a kernel\n"
                   "reading the other GPU's memory. Checks every result.",
                   opts, KIT_COUNT(opts));
    if (timeline_path && strcmp(timeline_path, "-") == 0)
        kit_die(KIT_EXIT_USAGE, "--timeline: name a file (stdout holds the report)");
    if (timeline_path && selftest)
        kit_die(KIT_EXIT_USAGE, "--timeline: not with --selftest, which runs the kit's own versions (no timeline)");
    kit_choose_seed(&c);
    kit_csv_check(c.csv);
    kit_output_check("--timeline", timeline_path);
    kit_device_open(0, &dev[0]);
    KIT_CHECK(cudaGetDeviceCount(&visible));
    if (ngpus_opt > visible)
        kit_die(KIT_EXIT_USAGE, "--gpus %d: this machine has %d GPU%s", ngpus_opt, visible, visible == 1 ? "" : "s");
    ngpus = ngpus_opt ? ngpus_opt : visible < KIT_MAX_GPUS ? visible : KIT_MAX_GPUS;
    for (int g = 1; g < ngpus; g++)
        kit_device_open(g, &dev[g]);
    /* --focus all-gpus, the grader's metric: the row on every GPU. */
    if (kit_focus && strcmp(kit_focus, "all-gpus") == 0) {
        static char focus_all[32];
        snprintf(focus_all, sizeof focus_all, "gpus-%d", ngpus);
        kit_focus = focus_all;
    }

    /* The size: every GPU holds at most GPU_ARRAYS arrays of it, and
     * each chunk must have an element. */
    n = c.size ? c.size : selftest ? SELFTEST_SIZE : DEFAULT_SIZE;
    for (int g = 0; g < ngpus; g++) {
        long long spare = dev[g].free_bytes - (64ll << 20);
        unsigned long long fit = spare > 0 ? (unsigned long long)spare / (GPU_ARRAYS * sizeof(unsigned int)) : 0;
        if (n > fit) {
            if (c.size)
                kit_die(KIT_EXIT_USAGE, "--size %llu needs %.0f MiB on each GPU, but GPU %d (%s) has %.0f MiB "
                                        "free; choose a smaller --size", n, (GPU_ARRAYS * 4.0 * n + (64 << 20)) / 1048576.0,
                        g, dev[g].name, dev[g].free_bytes / 1048576.0);
            n = kit_pow2_floor(fit);
        }
    }
    if (!c.size && !selftest) {
        /* Three pinned host arrays: WSL 2 limits how much can be pinned. */
        int capped;
        n = kit_pinned_default_size(n, 1u << 20, 3 * sizeof(unsigned int), 0, &capped);
        if (capped)
            kit_pinned_capped_note(n, 3.0 * sizeof(unsigned int) * n);
    }
    if (n < (unsigned long long)ngpus * nstreams)
        kit_die(KIT_EXIT_USAGE, "--size %llu is too small for %d GPU%s of %d streams: every chunk needs an "
                                "element (at least %d)", n, ngpus, ngpus == 1 ? "" : "s", nstreams, ngpus * nstreams);
    host_setup(&h, (unsigned int)n, c.seed);

    /* Who can reach whom. */
    for (int i = 0; i < ngpus; i++) {
        KIT_CHECK(cudaDeviceGetPCIBusId(bus[i], sizeof bus[i], i));
        for (int j = 0; j < ngpus; j++) {
            can[i][j] = 0;
            if (i != j)
                KIT_CHECK(cudaDeviceCanAccessPeer(&can[i][j], i, j));
        }
    }
    if (ngpus >= 2)
        supported = can[0][1] && can[1][0];

    if (selftest) {
        kit_kv("lab", "08-multi-gpu");
        kit_kv("gpus", "%d", ngpus);
        kit_kv("size", "%llu", n);
        kit_kv("seed", "%llu", c.seed);
        if (ngpus >= 2)
            kit_kv("peer-access", supported ? "supported" : "not supported");
        pass = run_selftest(&h, ngpus, nstreams, supported);
        host_teardown(&h);
        return kit_finish(pass);
    }

    /* Every run is checked on the host, which takes longer than the run:
     * few runs, and a looser target than the kit's 2%. */
    policy = kit_policy_default(c.reps);
    policy.max_reps = 15;
    policy.max_ms = 300.0;
    policy.noise = 0.03;
    peer_policy = policy;
    peer_policy.max_reps = 20;

    if (ngpus < 2) {
        multi = "skipped";
        snprintf(multi_why, sizeof multi_why, visible < 2 ? "%d GPU" : "--gpus %d", visible < 2 ? visible : ngpus);
    } else {
        multi = "ran";
        snprintf(multi_why, sizeof multi_why, "%d GPUs", ngpus);
    }

    /* ---- part 1 ---- */
    link_all = measure_links(&h, ngpus, link_gbs, &policy);
    {
        int counts[8], nk = 0;
        vec_run r;

        counts[nk++] = 1;
        for (int k = 2; k < ngpus; k *= 2)
            counts[nk++] = k;
        if (ngpus > 1)
            counts[nk++] = ngpus;
        memset(&r, 0, sizeof r);
        r.h = &h;
        r.kit = 0;
        /* --timeline: the version on every GPU, with streams (on one GPU, its own with streams). */
        r.traced_gpus = timeline_path ? ngpus : 0;
        r.traced_streams = nstreams;
        for (int i = 0; i < nk; i++) {
            int k = counts[i];
            for (int serial = nstreams > 1 && (k == 1 || k == ngpus) ? 1 : 0; serial >= 0; serial--) {
                vec_row *v = &rows[nrows++];
                int s = serial ? 1 : nstreams;
                char key[32];
                memset(v, 0, sizeof *v);
                snprintf(key, sizeof key, serial ? "gpus-%d-streams-1" : "gpus-%d", k);
                kit_row_name(&v->row, key, ADD_TODOS, "%d GPU%s, %d stream%s%s", k, k == 1 ? "" : "s", s,
                             s == 1 ? "" : "s", k == 1 ? "" : " each");
                v->gpus = k;
                v->streams = s;
                measure_vec(&r, &v->row, k, s, &policy);
                if (!r.setup_ok)
                    v->row.wrong = -1;
                v->judged_ok = r.setup_ok && r.trace_ok && r.traced_wrong == 0 && r.early == 0 &&
                               r.left_errors == 0;
                pass &= v->judged_ok;
                if (v->row.wrong >= 0)
                    pass &= kit_row_ok(&v->row, n);
                if (!r.setup_ok)
                    break; /* the same setup fails again */
            }
            if (!r.setup_ok)
                break;
        }
    }

    host_inputs_free(&h);

    /* ---- part 2 ---- */
    if (ngpus >= 2) {
        peer_t p;
        peer_setup(&p, &h, 0, 1);
        peer_ok = peer_judged(0, 1, 1, supported, 0);
        if (supported) {
            kit_row_name(&prow[nprow], "peer-copy", NULL, "cudaMemcpyPeer GPU 0 -> 1, peer access on");
            measure_peer(&p, COPY_AB, &prow[nprow++], &peer_policy);
            kit_row_name(&prow[nprow], "peer-copy-back", NULL, "cudaMemcpyPeer GPU 1 -> 0, peer access on");
            measure_peer(&p, COPY_BA, &prow[nprow++], &peer_policy);
            kit_row_name(&prow[nprow], "peer-copy-both", NULL, "both at once, peer access on");
            measure_peer(&p, COPY_BOTH, &prow[nprow++], &peer_policy);
            kit_row_name(&prow[nprow], "remote-add", NULL, "GPU 0 adds A, B of GPU 1's memory");
            measure_peer(&p, REMOTE_ADD, &prow[nprow++], &peer_policy);
        }
        kit_row_name(&prow[nprow], "local-add", NULL, "GPU 0 adds A, B of its own memory");
        measure_peer(&p, LOCAL_ADD, &prow[nprow++], &peer_policy);
        peer_ok &= peer_judged(0, 1, 0, supported, 0);
        kit_row_name(&prow[nprow], "staged-copy", NULL, "cudaMemcpyPeer GPU 0 -> 1, peer access off");
        measure_peer(&p, STAGED_DRIVER, &prow[nprow++], &peer_policy);
        kit_row_name(&prow[nprow], "host-staged-copy", NULL, "GPU 0 -> host -> GPU 1, by the kit");
        measure_peer(&p, STAGED_KIT, &prow[nprow++], &peer_policy);
        peer_teardown(&p);
        pass &= peer_ok;
        for (int i = 0; i < nprow; i++)
            pass &= kit_row_ok(&prow[i], n);
    }
    for (int g = 0; g < ngpus; g++) {
        KIT_CHECK(cudaSetDevice(g));
        KIT_CHECK(cudaDeviceSynchronize());
    }

    /* The host links again, with the student's process gone (grading):
     * the scaling's bar and each row's floor rest on them. */
    if (student_done(&h))
        link_all = measure_links(&h, ngpus, link_gbs, &policy);
    for (int i = 0; i < nrows; i++) {
        vec_row *v = &rows[i];
        if (v->gpus == 1 && link_gbs[0] > 0)
            v->floor_ms = 2.0 * h.bytes / (link_gbs[0] * 1e6);
        else if (v->gpus == ngpus && link_all > 0)
            v->floor_ms = 2.0 * h.bytes / (link_all * 1e6);
    }

    /* ---- what it comes to ---- */
    const kit_row *one = NULL, *all = NULL, *one_serial = NULL, *all_serial = NULL;
    for (int i = 0; i < nrows; i++) {
        const vec_row *v = &rows[i];
        if (v->gpus == 1)
            *(v->streams == nstreams ? &one : &one_serial) = &v->row;
        if (v->gpus == ngpus)
            *(v->streams == nstreams ? &all : &all_serial) = &v->row;
    }
    if (nstreams == 1)
        one_serial = one, all_serial = all;
    double speedup_all = one && all && one->timed && all->timed ? one->t.median_ms / all->t.median_ms : 0.0;
    double speedup_serial = one_serial && all_serial && one_serial->timed && all_serial->timed
                                ? one_serial->t.median_ms / all_serial->t.median_ms : 0.0;
    double speedup_streams = one && one_serial && one->timed && one_serial->timed
                                 ? one_serial->t.median_ms / one->t.median_ms : 0.0;
    double link_scaling = ngpus > 1 && link_gbs[0] > 0 ? link_all / link_gbs[0] : 1.0;
    double bw[7] = {0};
    for (int i = 0; i < nprow; i++)
        if (prow[i].timed) {
            int two = !strcmp(prow[i].key, "peer-copy-both");
            int add = strstr(prow[i].key, "add") != NULL;
            bw[i] = gbs((add ? 3.0 : two ? 2.0 : 1.0) * h.bytes, prow[i].t.median_ms);
        }
    double on_gbs = 0, staged_gbs = 0, kit_staged_gbs = 0, remote_ms = 0, local_ms = 0;
    for (int i = 0; i < nprow; i++) {
        const kit_row *x = &prow[i];
        if (!x->timed)
            continue;
        if (!strcmp(x->key, "peer-copy"))
            on_gbs = bw[i];
        else if (!strcmp(x->key, "staged-copy"))
            staged_gbs = bw[i];
        else if (!strcmp(x->key, "host-staged-copy"))
            kit_staged_gbs = bw[i];
        else if (!strcmp(x->key, "remote-add"))
            remote_ms = x->t.median_ms;
        else if (!strcmp(x->key, "local-add"))
            local_ms = x->t.median_ms;
    }
    /*
     * The verdict by the clock (in grading, the judge's): on every GPU at
     * once the job must gain at least a quarter (MIN_SHARE_OF_LINK_GAIN) of
     * what the host links gain
     * when all copy at once (the kit measures both here), judged where the
     * links gain at least MIN_LINK_SCALING; and no row may take less than
     * FLOOR_SHARE of the time its copies in need at the links' speed.
     */
    double one_floor_ms = link_gbs[0] > 0 ? 2.0 * h.bytes / (link_gbs[0] * 1e6) : 0.0;
    double scaling_need = 1.0 + MIN_SHARE_OF_LINK_GAIN * (link_scaling - 1.0);
    int long_copies = one_floor_ms >= MIN_SCALING_FLOOR_MS && 2.0 * h.bytes >= MIN_JUDGED_BYTES;
    int scaling_judged = ngpus >= 2 && one && all && one->timed && all->timed && link_scaling >= MIN_LINK_SCALING &&
                         long_copies;
    if (ngpus >= 2 && !scaling_judged && !long_copies)
        fprintf(stderr, "%s: note: the scaling is not judged: one GPU's copies in are %.1f MiB and take %.3f ms at "
                        "this size, too little against each operation's own cost (--size larger)\n", kit_program,
                2.0 * h.bytes / 1048576.0, one_floor_ms);
    if (scaling_judged && speedup_all < scaling_need) {
        fprintf(stderr, "%s: %s: %.2fx one GPU, but the host links carry %.2fx at once, so at least %.2fx is "
                        "needed: do the GPUs work at the same time, each on its own share? (TODO(1) and "
                        "TODO(2))\n", kit_program, all->name, speedup_all, link_scaling, scaling_need);
        pass = 0;
    }
    for (int i = 0; i < nrows; i++) {
        const vec_row *v = &rows[i];
        /* Judged at the scaling's sizes only: in small copies each
         * operation's own cost is most of the time measured alone, and
         * streams overlap it (a PTX-only build on an H100, 33 elements: 2
         * streams took 0.171 ms against 0.567 ms measured alone). */
        if (v->floor_ms > 0 && long_copies && v->row.timed &&
            v->row.t.median_ms < FLOOR_SHARE * v->floor_ms) {
            fprintf(stderr, "%s: %s: %.3f ms, but its copies in alone take %.3f ms at the links' speed: the "
                            "work cannot have been done in that time\n", kit_program, v->row.name,
                    v->row.t.median_ms, v->floor_ms);
            pass = 0;
        }
    }
    const char *link_words = ngpus < 2 ? "none (one GPU)"
                             : !supported ? "no peer access: every copy between the GPUs goes through the host"
                             : on_gbs > PCIE_X16_GBS ? "faster than any PCIe x16 link: a direct link (NVLink)"
                             : "at PCIe speed: through PCIe (a switch, or the CPU)";

    FILE *csv = kit_csv_open(c.csv);
    if (csv != stdout) {
        printf("Lab 08: several GPUs\n");
        for (int g = 0; g < ngpus; g++)
            printf("GPU %d: %s, compute capability %d.%d, %d SMs, %.1f GiB, PCI %s\n", g, dev[g].name,
                   dev[g].cc_major, dev[g].cc_minor, dev[g].sms, dev[g].global_bytes / 1073741824.0, bus[g]);
        kit_platform_banner(); /* WSL 2 says so; a Linux host prints nothing */
        if (visible > ngpus)
            printf("(this program sees %d GPUs and uses %d: --gpus)\n", visible, ngpus);
        for (int g = 1; g < ngpus; g++)
            if (strcmp(dev[g].name, dev[0].name)) {
                printf("(the GPUs differ: with equal shares, all wait for the slowest)\n");
                break;
            }
        printf("\nPart 1: C = A + B, %s unsigned ints (%.0f MiB per array) in pinned host memory, seed %llu\n",
               kit_grouped(n), h.bytes / 1048576.0, c.seed);
        printf("host links, copies in alone: ");
        for (int g = 0; g < ngpus; g++)
            printf("%sGPU %d %.1f GB/s", g ? ", " : "", g, link_gbs[g]);
        if (ngpus > 1)
            printf("; all at once %.1f GB/s (%.2fx one GPU)", link_all, link_scaling);
        printf("\n\n%-28s %10s %9s %14s  %s\n", "version", "time (ms)", "vs 1 GPU", "copies in (ms)", "check");
        for (int i = 0; i < nrows; i++) {
            const vec_row *v = &rows[i];
            const kit_row *base = v->streams == nstreams ? one : one_serial;
            printf("%-28s", v->row.name);
            print_time(&v->row);
            if (v->row.timed && base && base->timed)
                printf(" %8.2fx", base->t.median_ms / v->row.t.median_ms);
            else
                printf(" %9s", "-");
            if (v->floor_ms > 0)
                printf(" %14.3f", v->floor_ms);
            else
                printf(" %14s", "-");
            printf("  %s\n", check_word(&v->row, v->judged_ok));
        }
        printf("(copies in: A's and B's bytes at the links' speed measured above, the least the version can take)\n");
        if (timeline.done)
            printf("\ntimeline of %s, from your traced build: %d copies and kernels over %.3f ms, each GPU's\n"
                   "clock on the host's within %.3f ms%s (--timeline %s; make report draws it)\n", timeline.version,
                   timeline.nspans, timeline.run_ms, timeline.worst_uncertainty_ms,
                   timeline.missed ? "; some copies not recorded" : "", timeline_path);
        if (ngpus < 2) {
            if (visible < 2)
                printf("\nThe multi-GPU part needs two GPUs; this program sees %d. This run timed one GPU only:\n"
                       "run it on a machine with two or more for the scaling and the peer-to-peer part.\n", visible);
            else
                printf("\nThe multi-GPU part needs two GPUs; --gpus 1 asked for one.\n");
        } else {
            printf("\nPart 2: GPUs 0 and 1, %.0f MiB per copy\n", h.bytes / 1048576.0);
            printf("peer access (cudaDeviceCanAccessPeer: can the row's GPU reach the column's memory?)\n%8s", "");
            for (int j = 0; j < ngpus; j++)
                printf(" GPU %-3d", j);
            printf("\n");
            for (int i = 0; i < ngpus; i++) {
                printf("GPU %-4d", i);
                for (int j = 0; j < ngpus; j++)
                    printf(" %-7s", i == j ? "-" : can[i][j] ? "yes" : "no");
                printf("\n");
            }
            printf("\nthe topology as the CUDA runtime sees it (nvidia-smi topo -m says it in its own terms):\n");
            for (int i = 0; i < ngpus; i++)
                for (int j = 0; j < ngpus; j++) {
                    int rank = 0, acc = 0, atom = 0;
                    if (i == j)
                        continue;
                    KIT_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, i, j));
                    KIT_CHECK(cudaDeviceGetP2PAttribute(&acc, cudaDevP2PAttrAccessSupported, i, j));
                    KIT_CHECK(cudaDeviceGetP2PAttribute(&atom, cudaDevP2PAttrNativeAtomicSupported, i, j));
                    printf("  GPU %d -> GPU %d: peer access %s, native atomics %s, performance rank %d\n", i, j,
                           acc ? "supported" : "not supported", atom ? "yes" : "no", rank);
                }
            printf("  the link between GPUs 0 and 1: %s\n\n", link_words);
            printf("%-44s %10s %9s  %s\n", "copy or kernel", "time (ms)", "GB/s", "check");
            for (int i = 0; i < nprow; i++) {
                printf("%-44s", prow[i].name);
                print_time(&prow[i]);
                if (prow[i].timed)
                    printf(" %9.1f", bw[i]);
                else
                    printf(" %9s", "-");
                printf("  %s\n", check_word(&prow[i], 1));
            }
            if (!supported)
                printf("(GPUs 0 and 1 cannot reach each other: no row with peer access on)\n");
            printf("(GB/s: bytes copied, both ways for \"both\"; for the adds, A and B read and C written)\n");
        }
        printf("\n");
    }
    if (csv) {
        fprintf(csv, "gpu,size,seed,part,version,gpus,streams,time_ms,gbs,correct\n");
        for (int i = 0; i < nrows; i++) {
            kit_csv_prefix(csv, &dev[0], n, c.seed);
            fprintf(csv, "1,\"%s\",%d,%d,%.6f,%.3f,%d\n", rows[i].row.name, rows[i].gpus, rows[i].streams,
                    rows[i].row.timed ? rows[i].row.t.median_ms : 0.0,
                    rows[i].row.timed ? gbs(3.0 * h.bytes, rows[i].row.t.median_ms) : 0.0,
                    rows[i].row.wrong == 0 && rows[i].judged_ok);
        }
        for (int i = 0; i < nprow; i++) {
            kit_csv_prefix(csv, &dev[0], n, c.seed);
            fprintf(csv, "2,\"%s\",2,1,%.6f,%.3f,%d\n", prow[i].name, prow[i].timed ? prow[i].t.median_ms : 0.0,
                    bw[i], prow[i].wrong == 0);
        }
        kit_csv_close(csv);
    }

    if (timeline_path && timeline.done)
        write_timeline(timeline_path, &timeline);

    /* The facts, one per line, for tests and graders. */
    kit_kv("lab", "08-multi-gpu");
    kit_kv_device(&dev[0]);
    kit_kv("gpus-visible", "%d", visible);
    kit_kv("gpus", "%d", ngpus);
    for (int g = 0; g < ngpus; g++) {
        char key[32];
        snprintf(key, sizeof key, "device-%d", g);
        kit_kv(key, "%s", dev[g].name);
        snprintf(key, sizeof key, "pci-bus-id-%d", g);
        kit_kv(key, "%s", bus[g]);
    }
    kit_kv("size", "%llu", n);
    kit_kv("streams", "%d", nstreams);
    kit_kv("seed", "%llu", c.seed);
    kit_kv("pinned-host-bytes", "%zu", 3 * h.bytes);
    for (int g = 0; g < ngpus; g++) {
        char key[32];
        snprintf(key, sizeof key, "h2d-gbs-gpu-%d", g);
        kit_kv(key, "%.1f", link_gbs[g]);
    }
    if (ngpus > 1) {
        kit_kv("h2d-gbs-all-gpus", "%.1f", link_all);
        kit_kv("host-link-scaling", "%.2f", link_scaling);
    }
    for (int i = 0; i < nrows; i++)
        kit_row_kv(&rows[i].row);
    for (int i = 0; i < nrows; i++) {
        const kit_row *base = rows[i].streams == nstreams ? one : one_serial;
        char key[48];
        if (rows[i].gpus == 1 || !rows[i].row.timed || !base || !base->timed)
            continue;
        snprintf(key, sizeof key, "speedup-%s", rows[i].row.key);
        kit_kv(key, "%.2f", base->t.median_ms / rows[i].row.t.median_ms);
    }
    if (all && all->timed) { /* the graded time, with its row's checks */
        kit_kv("time-all-gpus-ms", "%.4f", all->t.median_ms);
        kit_kv("wrong-elements-all-gpus", "%lld", all->wrong);
        kit_kv("bad-timed-runs-all-gpus", "%d", all->t.bad_runs);
    }
    kit_kv("speedup-all-gpus", "%.2f", speedup_all);
    if (ngpus >= 2) {
        kit_kv("speedup-all-gpus-needed", "%.2f", scaling_need);
        kit_kv("scaling-judged", "%s", scaling_judged ? "yes" : "no");
    }
    if (speedup_serial > 0)
        kit_kv("speedup-all-gpus-streams-1", "%.2f", speedup_serial);
    if (speedup_streams > 0)
        kit_kv("speedup-streams-1-gpu", "%.2f", speedup_streams);
    kit_kv("multi-gpu", "%s (%s)", multi, multi_why);
    if (timeline.done) {
        kit_kv("timeline-version", "%s", timeline.version);
        kit_kv("timeline-gpus", "%d", timeline.ngpus);
        kit_kv("timeline-streams", "%d", timeline.nstreams);
        kit_kv("timeline-spans", "%d", timeline.nspans);
        kit_kv("timeline-kernels", "%d", timeline.launches_seen);
        kit_kv("timeline-copies-missed", "%lld", timeline.missed);
        kit_kv("timeline-ms", "%.4f", timeline.run_ms);
        kit_kv("timeline-uncertainty-ms", "%.4f", timeline.worst_uncertainty_ms);
        for (int g = 0; g < timeline.ngpus; g++) {
            char key[48];
            snprintf(key, sizeof key, "timeline-uncertainty-ms-gpu-%d", g);
            kit_kv(key, "%.4f", timeline.uncertainty_ms[g]);
        }
        kit_kv("wrong-elements-timeline", "%lld", timeline.wrong);
    } else if (timeline_path) {
        fprintf(stderr, "%s: --timeline %s: not written: the version on every GPU was not set up (above)\n",
                kit_program, timeline_path);
    }
    if (timeline.wrong)
        pass = 0;
    if (ngpus >= 2) {
        for (int i = 0; i < ngpus; i++)
            for (int j = 0; j < ngpus; j++) {
                char key[48];
                int rank = 0, atom = 0;
                if (i == j)
                    continue;
                KIT_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, i, j));
                KIT_CHECK(cudaDeviceGetP2PAttribute(&atom, cudaDevP2PAttrNativeAtomicSupported, i, j));
                snprintf(key, sizeof key, "peer-access-%d-%d", i, j);
                kit_kv(key, "%d", can[i][j]);
                snprintf(key, sizeof key, "p2p-performance-rank-%d-%d", i, j);
                kit_kv(key, "%d", rank);
                snprintf(key, sizeof key, "p2p-native-atomics-%d-%d", i, j);
                kit_kv(key, "%d", atom);
            }
        kit_kv("peer-access", supported ? "supported" : "not supported");
        for (int i = 0; i < nprow; i++) {
            char key[48];
            kit_row_kv(&prow[i]);
            snprintf(key, sizeof key, "bandwidth-%s-gbs", prow[i].key);
            kit_kv(key, "%.1f", bw[i]);
        }
        if (on_gbs > 0 && staged_gbs > 0)
            kit_kv("peer-over-staged", "%.2f", on_gbs / staged_gbs);
        if (kit_staged_gbs > 0 && staged_gbs > 0)
            kit_kv("staged-driver-over-kit", "%.2f", staged_gbs / kit_staged_gbs);
        if (remote_ms > 0 && local_ms > 0)
            kit_kv("remote-add-over-local", "%.2f", remote_ms / local_ms);
        kit_kv("peer-link", "%s", !supported ? "none" : on_gbs > PCIE_X16_GBS ? "nvlink-class" : "pcie-class");
        kit_kv("peer-access-checked", "%s", peer_ok ? "yes" : "no");
    }
    if (ngpus >= 2)
        kit_kv("summary", "%d GPUs %.2fx one GPU with %d streams each (%.2fx with one), copies included, at %s "
                          "elements; host links %.2fx; GPU 0 -> 1: %.0f GB/s with peer access, %.0f GB/s staged "
                          "through the host", ngpus, speedup_all, nstreams, speedup_serial, kit_grouped(n),
               link_scaling, on_gbs, staged_gbs);
    else
        kit_kv("summary", "1 GPU: %d streams %.2fx one stream at %s elements; the multi-GPU part needs two GPUs",
               nstreams, speedup_streams, kit_grouped(n));
    kit_kv("course-k40", "no figure: the slides show the code for two GPUs (cudaSetDevice, then streams on each) "
                         "and for peer copies, without timings");

    free(timeline.spans);
    host_teardown(&h);
    return kit_finish(pass);
}
