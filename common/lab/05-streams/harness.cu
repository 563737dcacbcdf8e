/*
 * Lab 05: CUDA streams - the harness.
 * The student's file: labs/05-streams/streams.cu; the handout:
 * handouts/05-streams.md.
 *
 * The course's "vector addition with streams", C = A + B on 32-bit
 * integers large enough that the copies over PCIe dominate:
 *
 *   1. the kit's serial versions: pageable host memory and cudaMemcpy,
 *      then pinned memory, still serial; the three parts alone (copies in,
 *      kernel, copies out), for the bandwidths and the pipelines' ideal;
 *   2. the student's pipeline, depth-first and breadth-first, for 2, 3, 4,
 *      8, 16 and 32 chunks (--streams N: one N), against its ideal; then
 *      the same with the course's plain kernel;
 *   3. a timeline of the fastest depth-first pipeline (under --focus, of
 *      the focused one) from the student's traced build (kit_timeline.h):
 *      when each copy and kernel ran, how long copies ran beside kernels;
 *      with --timeline, the same chunks issued breadth-first too;
 *   4. the course's scheduling examples, the kit's own: two kernels per
 *      stream that each fill half the GPU, issued depth-first and
 *      breadth-first (and the course's unequal pair); a copy out blocked
 *      behind another stream's; host work between the asynchronous calls
 *      (4-way concurrency);
 *   5. the verdict by the clock: the fastest depth-first pipeline against
 *      serial and the kit's own pipeline, timed again once the student's code is done.
 *
 * The kernel is made as long as the copies in (--kernel-work auto, the
 * default), the course's picture of three stages of similar length; the
 * plain kernel (--kernel-work 0) is measured too. Every version is checked
 * element by element after every run, timed or not, with the device
 * arrays and C poisoned before it (kit_pipeline.h). NVTX ranges name the
 * versions, the chunks' streams and the host's work for Nsight Systems.
 */
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>

#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_pipeline.h"
#include "kit_report.h"
#include "kit_rng.h"
#include "kit_table.h"
#include "kit_timeline.h"
#include "kit_timing.h"

typedef struct lab lab; /* the lab's state, below */
#define KIT_LAB_STATE lab
#include "kit_lab.h"

#include "contract.h"
#include "kit_student.h"
#if !KIT_TIME_BY_CLOCK
#include "remote.h"
#endif

#define DEFAULT_SIZE (1u << 25) /* 3 x 128 MiB: copies of tens of ms on PCIe 3, a few on PCIe 5 */
#define MAX_CHUNKS LAB05_MAX_CHUNKS
#define MAX_WORK 1000000
#define DEVICE_BYTES_PER_ELEMENT 25
/* The verdict: in the timeline, copies run beside kernels for at least
 * this share of the time kernels run, or for at least half of the share
 * these chunks' copies could cover (overlap_possible), where that is less:
 * 3 chunks of a kernel 4x as long as their copy in can cover 23%, and the
 * reference's 24% once failed a fixed 25% (an H100, 2026-11-27)... */
#define MIN_COPY_KERNEL_OVERLAP 0.25
#define MIN_SHARE_OF_POSSIBLE 0.5
/* ...judged where a chunk's kernel lasts at least this many times the
 * clocks' uncertainty (kit_clock), by which each kernel is first narrowed
 * at both ends: what is left of it is then at least half. */
#define JUDGE_KERNEL_OVER_UNCERTAINTY 4.0
/* The verdict by the clock: the best depth-first pipeline wins back at
 * least MIN_SHARE_OF_GAIN of what the kit's own pipeline of as many chunks
 * wins back here (of the time they could save over serial: serial less
 * the ideal), judged where that saving is at least MIN_GAIN_OF_SERIAL of
 * the serial time, MIN_GAIN_MS (a few MB run in well under a millisecond,
 * and one run's time then wanders by a tenth of it: an H100, 1M elements,
 * the reference won back 20% in one run and 56% in another) and
 * GAIN_OVER_PATH times the cost of the clock's own path (path_ms), and the
 * kit's own pipeline wins back at least
 * MIN_KIT_GAIN_SHARE of it (small chunks of a few MB lose it to each
 * operation's fixed cost), from MIN_GAIN_REPS timed runs or more of each
 * (a single run judges no one: 2 H200s, 6.9M elements, --reps 1, the
 * reference once won back 45% against the kit's 98%). All three times are
 * the fastest of their runs: what another program on the GPU, or a file
 * that makes its own times wander, adds to a run cannot lower them (an
 * H100, 8M elements: the serial's runs spanned 3.1 to 4.3 ms, and a median
 * judged no one). On an H100 at the default size the reference won back
 * 96% and the kit's own pipeline 99%; one whose kernels run in the default
 * stream, so that copies and kernels wait for each other, about 24%
 * (handout 05, 2026-11-27). */
#define MIN_SHARE_OF_GAIN 0.5
#define MIN_GAIN_OF_SERIAL 0.1
#define GAIN_OVER_PATH 10.0
#define MIN_KIT_GAIN_SHARE 0.3
#define MIN_GAIN_MS 1.0
#define MIN_GAIN_REPS 3
/* The judge's own path (path_ms) is the student's process's word: it is
 * taken off the pipeline's time up to this share of it, no more. */
#define PATH_MAX_SHARE 0.05
/* WSL 2: the kit's own 4-chunk pipeline overlapped if it took less than
 * this share of its three parts in turn (three equal parts: 0.5 with two
 * copy engines, 0.75 with one). */
#define KIT_OWN_PIPELINE_MAX_SHARE 0.9
/* The scheduling examples: copies of this size, kernels of this many ns per unit. */
#define EXPERIMENT_COPY_BYTES (16u << 20)
#define EXPERIMENT_UNIT_NS 1000000ull
#define EXPERIMENT_REPS 9
#define FOUR_WAY_CHUNKS 4

/* The kit's side in the student's process (05-streams/remote.h): here in
 * this program; in grading, in the worker, which the judge's stubs reach. */
static const kit_remote_api *remote = &kit_remote;

/* ---- the data ------------------------------------------------------------------ */

typedef struct {
    unsigned int n;
    size_t bytes;                /* of one array */
    unsigned int *dA, *dB, *dC;  /* device: the job's */
    unsigned int *eA, *eB;       /* device, the kit's alone: the inputs as drawn */
    unsigned int *dX;            /* device, the kit's alone: a host C copied back, to check it */
    unsigned int *A, *B, *C;     /* pageable: the kit's serial version */
    unsigned int *kA, *kB, *kC;  /* pinned, the kit's: its serial versions and examples */
    unsigned int *sA, *sB, *sC;  /* the job's host arrays, in the memory alloc_host chose */
    int s_pinned_here;           /* sA, sB, sC registered in this process by the kit itself */
    int student_gone;            /* student_done: the student's process has done its part */
    unsigned long long seed, runs; /* every run's inputs are new: drawn from these */
    unsigned int ka, kb;         /* the last run's inputs: eA ^ ka and eB ^ kb */
    unsigned long long *dcheck;  /* the check's counts (check_kernel) */
} data_t;

/* The job's host arrays: in grading, host memory of the judge's that the
 * worker maps (kit_judge.h); here, the kit's own. */
#if KIT_TIME_BY_CLOCK
#define job_host_alloc kit_judge_host_alloc
#define job_host_free kit_judge_host_free
#else
#define job_host_alloc kit_host_alloc
#define job_host_free free
#endif

/* What alloc_host gave (TODO(1)): the job's arrays are then in memory of
 * that kind. Returns 0, saying why, where it is not pinned. */
static int student_arrays(data_t *d)
{
    struct lab05_host_out h;
    int ok = 1;

    memset(&h, 0, sizeof h); /* it crosses to the student's process: nothing of this one's in it */
    remote->lab05_host(d->sA, d->sB, d->sC, d->bytes, &h);
    for (int i = 0; i < 3 && ok; i++) {
        if (h.status[i] == LAB05_NULL) {
            fprintf(stderr, "%s: alloc_host returned NULL; the kit goes on with pageable memory of its own, "
                            "from which no copy can overlap anything (TODO(1))\n", kit_program);
            ok = 0;
        } else if (h.status[i] == LAB05_PAGEABLE) {
            fprintf(stderr, "%s: alloc_host returned pageable memory: the driver stages every copy from "
                            "it through a buffer of its own, and no copy can overlap anything (TODO(1))\n",
                    kit_program);
            ok = 0;
        } else if (h.flags[i] & cudaHostAllocWriteCombined) {
            fprintf(stderr, "%s: note: alloc_host's memory is write-combined; the kit's arrays are pinned "
                            "like it, without write-combining\n", kit_program);
        }
    }
    /* The kit fills and reads them too: pinned here also, where this is
     * another process's mapping (grading) or the student's choice left
     * them pageable is the student's to see (the lab's program). */
#if KIT_TIME_BY_CLOCK
    unsigned int *job[] = {d->sA, d->sB, d->sC};
    for (int i = 0; i < 3; i++)
        KIT_CHECK(cudaHostRegister(job[i], d->bytes, cudaHostRegisterDefault));
    d->s_pinned_here = 1;
#endif
    return ok;
}

static void data_setup(data_t *d, unsigned int n, unsigned long long seed)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    d->bytes = (size_t)n * sizeof(unsigned int);
    d->seed = seed;
    unsigned int **dev[] = {&d->dA, &d->dB, &d->dC, &d->eA, &d->eB, &d->dX};
    for (int i = 0; i < KIT_COUNT(dev); i++)
        KIT_CHECK(cudaMalloc((void **)dev[i], d->bytes));
    KIT_CHECK(cudaMalloc((void **)&d->dcheck, 4 * sizeof(unsigned long long)));
    /* The bandwidths copy C back before any kernel wrote it. */
    KIT_CHECK(cudaMemset(d->dC, 0, d->bytes));
    unsigned int **page[] = {&d->A, &d->B, &d->C}, **pin[] = {&d->kA, &d->kB, &d->kC};
    unsigned int **job[] = {&d->sA, &d->sB, &d->sC};
    for (int i = 0; i < 3; i++) {
        *page[i] = (unsigned int *)kit_host_alloc(d->bytes);
        KIT_CHECK(cudaMallocHost((void **)pin[i], d->bytes));
        *job[i] = (unsigned int *)job_host_alloc(d->bytes);
    }
    kit_fill_bits(d->eA, n, seed);
    kit_fill_bits(d->eB, n, seed + 1);
    /* The kernel's time (run_part) reads them before any run wrote them. */
    KIT_CHECK(cudaMemcpy(d->dA, d->eA, d->bytes, cudaMemcpyDeviceToDevice));
    KIT_CHECK(cudaMemcpy(d->dB, d->eB, d->bytes, cudaMemcpyDeviceToDevice));
    KIT_CHECK(cudaMemcpy(d->A, d->eA, d->bytes, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(d->B, d->eB, d->bytes, cudaMemcpyDeviceToHost));
    memcpy(d->kA, d->A, d->bytes);
    memcpy(d->kB, d->B, d->bytes);
}

/*
 * The student's code has done its part of the run. In grading its process
 * ends here (kit_judge_end_worker), and with it anything it left on the
 * GPU or in a thread of its own, so that what the kit times next for the
 * verdict (the serial, the parts, the kit's own pipeline) shares the GPU
 * with nothing of the student's: a file that kept the GPU busy between
 * its calls would otherwise slow the bars it is judged against. In the
 * lab's own program the student's code is this process: nothing ends.
 */
static void student_done(data_t *d)
{
#if KIT_JUDGE
    /* The judge's own mapping of the arrays stays registered (s_pinned_here). */
    remote->lab05_host_release(d->sA, d->sB, d->sC);
    d->student_gone = 1;
    kit_judge_end_worker();
#else
    (void)d;
#endif
}

static void data_teardown(data_t *d)
{
    unsigned int *dev[] = {d->dA, d->dB, d->dC, d->eA, d->eB, d->dX};
    unsigned int *page[] = {d->A, d->B, d->C}, *pin[] = {d->kA, d->kB, d->kC}, *job[] = {d->sA, d->sB, d->sC};

    if (!d->student_gone)
        remote->lab05_host_release(d->sA, d->sB, d->sC);
    for (int i = 0; i < 3; i++) {
        if (d->s_pinned_here)
            KIT_CHECK(cudaHostUnregister(job[i]));
        job_host_free(job[i]);
        free(page[i]);
        KIT_CHECK(cudaFreeHost(pin[i]));
    }
    for (int i = 0; i < KIT_COUNT(dev); i++)
        KIT_CHECK(cudaFree(dev[i]));
    KIT_CHECK(cudaFree(d->dcheck));
}

/* ---- every run's inputs, and the check of every run ----------------------------- */

/*
 * After a run: c[0] elements of C (as copied back into X) that are not
 * A + B, c[1] the first of them; c[2] elements of dA, dB and dC that do
 * not hold the run's A, B and A + B, c[3] the first of them.
 */
static __global__ void check_kernel(const unsigned int *eA, const unsigned int *eB, unsigned int ka, unsigned int kb,
                                    const unsigned int *X, const unsigned int *dA, const unsigned int *dB,
                                    const unsigned int *dC, unsigned int n, unsigned long long *c)
{
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned int a = eA[i] ^ ka, b = eB[i] ^ kb;
        if (X[i] != a + b) {
            atomicAdd(&c[0], 1ull);
            atomicMin(&c[1], (unsigned long long)i);
        }
        if (dA[i] != a || dB[i] != b || dC[i] != a + b) {
            atomicAdd(&c[2], 1ull);
            atomicMin(&c[3], (unsigned long long)i);
        }
    }
}

/* New inputs in the host arrays A and B, everything a run writes
 * poisoned (all bits set: kit_pipeline.h), and the GPU idle. */
static void fresh_run(data_t *d, unsigned int *A, unsigned int *B, unsigned int *C)
{
    unsigned long long k = kit_row_draw_seed(d->seed, ++d->runs);
    d->ka = (unsigned int)k;
    d->kb = (unsigned int)(k >> 32);
    kit_keyed(d->eA, d->ka, d->dA, d->n);
    kit_keyed(d->eB, d->kb, d->dB, d->n);
    KIT_CHECK(cudaMemcpy(A, d->dA, d->bytes, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(B, d->dB, d->bytes, cudaMemcpyDeviceToHost));
    kit_pipeline_poison(d->dA, d->dB, d->dC, C, d->n);
}

/*
 * Elements wrong after a run whose output is the host array C: in C, and
 * in the device arrays the run had to go through. Unless name is NULL the
 * first is described, saying what the poison in it means.
 */
static long long check_output(data_t *d, const unsigned int *C, const char *name)
{
    unsigned long long c[4] = {0, ~0ull, 0, ~0ull};

    KIT_CHECK(cudaMemcpy(d->dcheck, c, sizeof c, cudaMemcpyHostToDevice));
    KIT_CHECK(cudaMemcpy(d->dX, C, d->bytes, cudaMemcpyHostToDevice));
    check_kernel<<<1024, 256>>>(d->eA, d->eB, d->ka, d->kb, d->dX, d->dA, d->dB, d->dC, d->n, d->dcheck);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaMemcpy(c, d->dcheck, sizeof c, cudaMemcpyDeviceToHost));
    if (name && c[0]) {
        unsigned long long i = c[1];
        unsigned int a, b, want, got = C[i];
        KIT_CHECK(cudaMemcpy(&a, d->eA + i, sizeof a, cudaMemcpyDeviceToHost));
        KIT_CHECK(cudaMemcpy(&b, d->eB + i, sizeof b, cudaMemcpyDeviceToHost));
        want = (a ^ d->ka) + (b ^ d->kb);
        if (got == KIT_POISON_WORD)
            fprintf(stderr, "%s: %s: %llu of %u elements of C are wrong; C[%llu] still holds the kit's poison "
                            "0xffffffff: it was never copied back\n", kit_program, name, c[0], d->n, i);
        else if (got == KIT_POISON_WORD + KIT_POISON_WORD)
            fprintf(stderr, "%s: %s: %llu of %u elements of C are wrong; C[%llu] = 0xfffffffe, the sum of the "
                            "kit's poison: its A and B were not on the device when the kernel ran\n",
                    kit_program, name, c[0], d->n, i);
        else
            fprintf(stderr, "%s: %s: %llu of %u elements of C are wrong; C[%llu] = %u but A + B = %u\n",
                    kit_program, name, c[0], d->n, i, got, want);
    } else if (name && c[2]) {
        fprintf(stderr, "%s: %s: C is right, but %llu elements of the device arrays dA, dB and dC are not the "
                        "run's A, B and A + B (the first at element %llu): every element goes to the GPU "
                        "through dA and dB, and comes back through dC\n", kit_program, name, c[2], c[3]);
    }
    return (long long)(c[0] + c[2]);
}

/* ---- one version: run, poison, check ------------------------------------------- */

enum version { SERIAL_PAGEABLE, SERIAL_PINNED, DEPTH_FIRST, BREADTH_FIRST };

typedef struct {
    data_t *d;
    enum version v;
    unsigned int *A, *B, *C; /* the host arrays it reads and fills */
    int traced;       /* run the traced build (LAB05_TRACED) */
    int nchunks;      /* of the job open (open_job) */
    const char *name; /* of the row being measured */
    long long early;  /* its runs that returned while a stream still worked */
    int told;         /* the first wrong run is described */
} run_t;

/* Runs that returned early, in all rows; the first is described. */
static long long early_total;

/* The kit's serial version: the course's program before streams. */
static void serial(const data_t *d, const unsigned int *A, const unsigned int *B, unsigned int *C)
{
    KIT_CHECK(cudaMemcpy(d->dA, A, d->bytes, cudaMemcpyHostToDevice));
    KIT_CHECK(cudaMemcpy(d->dB, B, d->bytes, cudaMemcpyHostToDevice));
    kit_vector_add(d->dA, d->dB, d->dC, d->n, 0, &kit_vector_knobs_now);
    KIT_CHECK(cudaMemcpy(C, d->dC, d->bytes, cudaMemcpyDeviceToHost));
}

/* A chunk whose stream still worked when the pipeline returned (early >= 0). */
static void note_early(run_t *r, int early)
{
    if (early < 0)
        return;
    r->early++;
    if (early_total++ == 0)
        fprintf(stderr, "%s: %s: returned while the stream of chunk %d was still working; the kit "
                        "would have read C before it was complete: wait for every chunk before "
                        "returning (TODO(4))\n", kit_program, r->name, early);
}

static void run_once(void *p)
{
    run_t *r = (run_t *)p;
    data_t *d = r->d;
    switch (r->v) {
    case SERIAL_PAGEABLE:
    case SERIAL_PINNED: serial(d, r->A, r->B, r->C); return;
    case DEPTH_FIRST:
    case BREADTH_FIRST:
        note_early(r, remote->lab05_run(d->sA, d->sB, d->sC, d->dA, d->dB, d->dC, d->n, r->nchunks,
                                        (r->v == BREADTH_FIRST ? LAB05_BREADTH_FIRST : LAB05_DEPTH_FIRST) |
                                            (r->traced ? LAB05_TRACED : 0),
                                        kit_vector_knobs_now.work));
        return;
    }
}

static void poison(void *p)
{
    run_t *r = (run_t *)p;
    fresh_run(r->d, r->A, r->B, r->C);
}

/* Elements of C wrong after the last run; the first wrong run is described. */
static long long check_run(run_t *r)
{
    long long bad = check_output(r->d, r->C, r->told ? NULL : r->name);
    if (bad)
        r->told = 1;
    return bad;
}

static long long verify(void *p, const kit_row *row) { (void)row; return check_run((run_t *)p); }
static long long compare(void *p) { return check_run((run_t *)p); }

/* The next runs are of version v, from its host arrays, named for
 * messages: none told yet. */
static void run_named(run_t *r, enum version v, const char *name)
{
    data_t *d = r->d;
    r->v = v;
    r->A = v == SERIAL_PAGEABLE ? d->A : v == SERIAL_PINNED ? d->kA : d->sA;
    r->B = v == SERIAL_PAGEABLE ? d->B : v == SERIAL_PINNED ? d->kB : d->sB;
    r->C = v == SERIAL_PAGEABLE ? d->C : v == SERIAL_PINNED ? d->kC : d->sC;
    r->name = name;
    r->early = 0;
    r->told = 0;
}

/* ---- the student's streams ------------------------------------------------------ */

static int streams_reported;

/* The job of n chunks in the student's streams (create_streams); returns 0,
 * saying why, where they are wrong: the default stream, or one stream twice. */
static int open_job(run_t *r, int nchunks)
{
    struct lab05_open_out o;

    memset(&o, 0, sizeof o);
    remote->lab05_open(nchunks, &o);
    r->nchunks = nchunks;
    if (o.ok || streams_reported++)
        return o.ok;
    if (o.kind == LAB05_DEFAULT_STREAM)
        fprintf(stderr, "%s: create_streams left streams[%d] the default stream, not a stream of "
                        "your own: the chunks cannot overlap (TODO(1))\n", kit_program, o.i);
    else if (o.kind == LAB05_SAME_STREAM)
        fprintf(stderr, "%s: create_streams gave streams[%d] and streams[%d] the same stream: "
                        "their chunks run one after the other (TODO(1))\n", kit_program, o.i, o.j);
    return 0;
}

static void close_job(run_t *r) { remote->lab05_close(r->nchunks); }

/* ---- the parts, for the bandwidths and the ideal ------------------------------- */

/* SERIAL: the kit's serial version from pinned memory, whole (Part 5). */
enum part { H2D_PAGEABLE, D2H_PAGEABLE, H2D_PINNED, D2H_PINNED, KERNEL, SERIAL };

typedef struct {
    data_t *d;
    enum part what;
} part_t;

static void run_part(void *p)
{
    const part_t *x = (const part_t *)p;
    const data_t *d = x->d;
    switch (x->what) {
    case H2D_PAGEABLE: KIT_CHECK(cudaMemcpy(d->dA, d->A, d->bytes, cudaMemcpyHostToDevice)); break;
    case D2H_PAGEABLE: KIT_CHECK(cudaMemcpy(d->C, d->dC, d->bytes, cudaMemcpyDeviceToHost)); break;
    case H2D_PINNED: KIT_CHECK(cudaMemcpy(d->dA, d->kA, d->bytes, cudaMemcpyHostToDevice)); break;
    case D2H_PINNED: KIT_CHECK(cudaMemcpy(d->kC, d->dC, d->bytes, cudaMemcpyDeviceToHost)); break;
    case KERNEL: kit_vector_add(d->dA, d->dB, d->dC, d->n, 0, &kit_vector_knobs_now); break;
    case SERIAL: serial(d, d->kA, d->kB, d->kC); break;
    }
}

static kit_measurement time_part(data_t *d, enum part what, const kit_policy *policy)
{
    part_t x = {d, what};
    kit_work w = {NULL, run_part, NULL, &x, 0.0f, 0};
    run_part(&x); /* warm-up */
    KIT_CHECK(cudaDeviceSynchronize());
    return kit_measure(&w, policy);
}

/* The kernel's extra work that makes it as long as target_ms: secant steps
 * on time(work), from high work (at low work the kernel is memory-bound). */
static int calibrate_work(data_t *d, double target_ms)
{
    part_t x = {d, KERNEL};
    double w0 = 1024, w1 = 8192, t0, t1;

    kit_vector_knobs_now.work = (int)w0;
    t0 = kit_time_launches(run_part, &x, 1, 3).median_ms;
    for (int it = 0; it < 6; it++) {
        double w2;
        kit_vector_knobs_now.work = (int)w1;
        t1 = kit_time_launches(run_part, &x, 1, 3).median_ms;
        if (fabs(t1 - target_ms) < 0.02 * target_ms || t1 == t0)
            break;
        w2 = w1 + (target_ms - t1) * (w1 - w0) / (t1 - t0);
        w2 = w2 < 0 ? 0 : w2 > MAX_WORK ? MAX_WORK : w2;
        w0 = w1, t0 = t1, w1 = w2;
    }
    return (int)w1;
}

/* The host's own share of the work, a stand-in: one core busy for ms. */
static void host_work(double ms, int chunk)
{
    char name[32];
    double t0;
    snprintf(name, sizeof name, "host work, chunk %d", chunk);
    nvtxRangePushA(name);
    t0 = kit_wall_ms();
    while (kit_wall_ms() - t0 < ms) {
    }
    nvtxRangePop();
}

/* The kit's own depth-first pipeline of nchunks chunks (kit_issue_chunk)
 * in streams s, from the host arrays A, B and C, waited for; where host_ms
 * >= 0 the host first prepares each chunk for that long (host_work) and
 * queues it at once. */
static void issue_kit_pipeline(data_t *d, const unsigned int *A, const unsigned int *B, unsigned int *C,
                               cudaStream_t *s, int nchunks, double host_ms)
{
    for (int i = 0; i < nchunks; i++) {
        unsigned int first, count;
        if (host_ms >= 0)
            host_work(host_ms, i);
        kit_chunk(d->n, nchunks, i, &first, &count);
        kit_issue_chunk(A, B, C, d->dA, d->dB, d->dC, first, count, s[i], &kit_vector_knobs_now);
    }
    for (int i = 0; i < nchunks; i++)
        KIT_CHECK(cudaStreamSynchronize(s[i]));
}

/* The kit's own depth-first pipeline of nchunks chunks (its own streams,
 * the job's host and device arrays), timed as the
 * student's is: what a pipeline of that many chunks wins back here, at
 * this size, from this memory. */
typedef struct {
    data_t *d;
    int nchunks;
    cudaStream_t s[MAX_CHUNKS];
} kit_pipe_t;

static void kit_pipe_prepare(void *p)
{
    data_t *d = ((kit_pipe_t *)p)->d;
    fresh_run(d, d->sA, d->sB, d->sC);
}

static void kit_pipe_run(void *p)
{
    kit_pipe_t *k = (kit_pipe_t *)p;
    issue_kit_pipeline(k->d, k->d->sA, k->d->sB, k->d->sC, k->s, k->nchunks, -1);
}

static long long kit_pipe_check(void *p)
{
    data_t *d = ((kit_pipe_t *)p)->d;
    return check_output(d, d->sC, "the kit's own pipeline");
}

static double kit_pipeline_ms(data_t *d, int nchunks, const kit_policy *policy, long long *wrong)
{
    kit_pipe_t k;
    kit_work w = {kit_pipe_prepare, kit_pipe_run, kit_pipe_check, &k, 0.0f, 0};
    kit_measurement m;

    k.d = d;
    k.nchunks = nchunks;
    for (int i = 0; i < nchunks; i++)
        KIT_CHECK(cudaStreamCreateWithFlags(&k.s[i], cudaStreamNonBlocking));
    kit_pipe_prepare(&k); /* warm-up, checked */
    kit_pipe_run(&k);
    *wrong += kit_pipe_check(&k);
    m = kit_measure(&w, policy);
    *wrong += m.bad_runs;
    for (int i = 0; i < nchunks; i++)
        KIT_CHECK(cudaStreamDestroy(k.s[i]));
    return m.min_ms; /* the fastest run: the verdict by the clock compares fastest runs */
}

/* The median of EXPERIMENT_REPS (odd) runs: runs slowed by the host
 * (a busy CPU late to queue the next call), up to four of nine, do not move it. */
static double median_of_reps(const double *v)
{
    double s[EXPERIMENT_REPS];
    memcpy(s, v, sizeof s);
    for (int i = 1; i < EXPERIMENT_REPS; i++)
        for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
            double t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
    return s[EXPERIMENT_REPS / 2];
}

/* What the judge's own path costs: a call that does nothing, timed as a
 * run is (a round trip to the student's process and a wait for the GPU;
 * next to nothing in the lab's own program). */
static double path_ms(void)
{
    double v[EXPERIMENT_REPS];
    for (int i = 0; i < EXPERIMENT_REPS; i++) {
        double t0;
        KIT_CHECK(cudaDeviceSynchronize());
        t0 = kit_wall_ms();
        remote->lab05_nothing();
        KIT_CHECK(cudaDeviceSynchronize());
        v[i] = kit_wall_ms() - t0;
    }
    return median_of_reps(v);
}

/* ---- the timeline of one traced run -------------------------------------------- */

/* The traced out of the student's process: large, so one, kept. */
static struct lab05_trace_out trace_out;

typedef struct {
    int done;           /* a traced run happened */
    int nchunks;
    long long wrong;
    struct lab05_trace_out rec; /* its record: spans, launches, copies not recorded */
    kit_overlap raw;    /* as measured */
    kit_overlap judged; /* kernels narrowed by the clocks' uncertainty */
} timeline_t;

/*
 * Whether a traced run's record is one the kit's side can have made: counts
 * in range, every operation one the kit names, times finite; where not,
 * says so. In grading it comes from the student's process, which could
 * send anything; one that is not such a record fails the lab.
 */
static int trace_sane(const struct lab05_trace_out *o)
{
    int ok = !(o->ncalls < 0 || o->ncalls > LAB05_MAX_CALLS || o->nspans < 0 || o->nspans > LAB05_MAX_SPANS ||
               o->launches < 0 || o->missed < 0 || !isfinite(o->uncertainty_ms) || o->uncertainty_ms < 0 ||
               !isfinite(o->mean_kernel_ms));
    for (int i = 0; ok && i < o->ncalls; i++)
        ok = !(o->calls[i].op < 0 || o->calls[i].op >= KIT_NOPS || o->calls[i].after < -1 || o->calls[i].after > i);
    for (int i = 0; ok && i < o->nspans; i++) {
        const kit_span *x = &o->spans[i];
        ok = !(x->op < 0 || x->op >= KIT_NOPS || !isfinite(x->start) || !isfinite(x->end));
    }
    if (!ok)
        fprintf(stderr, "%s: the traced run's record from the student's process is not one the kit makes "
                        "(counts out of range, an unknown operation, a time that is not a number): graded as failed\n",
                kit_program);
    return ok;
}

/* Runs version v (depth-first: the one judged; breadth-first: drawn beside
 * it with --timeline) once in the traced build and records its timeline. */
static void traced_run(run_t *r, int nchunks, enum version v, timeline_t *tl)
{
    data_t *d = r->d;
    unsigned long long *dspans, cap = d->n / 32 + 1;
    struct lab05_trace_out *o = &trace_out;

    memset(tl, 0, sizeof *tl);
    tl->nchunks = nchunks;
    open_job(r, nchunks);
    run_named(r, v, v == DEPTH_FIRST ? "the traced run" : "the traced breadth-first run");
    r->traced = 1;
    nvtxRangePushA("traced run");
    /* Once untraced: the traced build's code is loaded and warm. */
    poison(r);
    run_once(r);
    KIT_CHECK(cudaDeviceSynchronize());
    tl->wrong = check_run(r);

    KIT_CHECK(cudaMalloc((void **)&dspans, cap * sizeof(kit_block_span)));
    poison(r);
    remote->lab05_trace(d->sA, d->sB, d->sC, d->dA, d->dB, d->dC, d->n, nchunks,
                        v == DEPTH_FIRST ? LAB05_DEPTH_FIRST : LAB05_BREADTH_FIRST, kit_vector_knobs_now.work,
                        dspans, cap, o);
    note_early(r, o->early);
    tl->wrong += check_run(r);
    nvtxRangePop();
    if (!trace_sane(o)) {
        tl->wrong += 1;
        memset(o, 0, sizeof *o);
    }

    tl->rec = *o;
    tl->raw = kit_overlap_of(o->spans, o->nspans, 0.0);
    tl->judged = kit_overlap_of(o->spans, o->nspans, o->uncertainty_ms);
    tl->done = 1;

    KIT_CHECK(cudaFree(dspans));
    close_job(r);
    r->traced = 0;
}

/* Writes tl's operations as rows of --timeline's CSV: each chunk numbered in
 * the order of its records, times from the run's first operation. */
static void write_timeline(FILE *f, const timeline_t *tl, const char *order)
{
    const kit_span *x = tl->rec.spans;
    int n = tl->rec.nspans, nrows = 0;
    long long *rows = (long long *)kit_host_alloc(sizeof(long long) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < nrows; j++)
            seen |= rows[j] == x[i].row;
        if (!seen)
            rows[nrows++] = x[i].row;
    }
    qsort(rows, (size_t)nrows, sizeof *rows, kit_cmp_ll);
    for (int i = 0; i < n; i++) {
        int chunk = 0;
        while (rows[chunk] != x[i].row)
            chunk++;
        fprintf(f, "%d,%s,%d,%.6f,%.6f,\"%s, %d chunks\"\n", chunk, kit_op_name[x[i].op], x[i].stream,
                x[i].start - tl->raw.first_ms, x[i].end - tl->raw.first_ms, order, tl->nchunks);
    }
    free(rows);
}

/* ---- the order each pipeline issued its copies (the traced build) ---------------- */

typedef struct {
    int judged;    /* 0: not told (one chunk, copies not all recorded) */
    int right;
    int unordered; /* breadth-first, in the right order: a copy in waits for no earlier one */
    char why[320];
} issue_order_t;

/*
 * Runs version v of the traced build once with nchunks chunks and reads the
 * order in which it issued its copies (the copy record is in call order).
 * Depth-first issues each chunk's copies, in and then out, before the next
 * chunk's: the chunks' records come in runs, none coming back. Breadth-first
 * issues every chunk's copies in before any copy out. Kernel launches are
 * not recorded; the copies alone tell the two orders apart. On a GPU with
 * many hardware queues both orders take the same time, so only this shows
 * an order issued the wrong way. Breadth-first also keeps its copies in
 * in the order queued, one at a time (TODO(5)): each copy in waits, by its
 * stream's order or through an event, for every copy in of another chunk
 * queued before it (lab05_call.after; where the student's process could
 * not tell, -1, this is not judged).
 */
static issue_order_t issue_order(run_t *r, int nchunks, enum version v)
{
    struct lab05_trace_out *ct = &trace_out;
    data_t *d = r->d;
    issue_order_t o;
    long long seen[4 * MAX_CHUNKS + 8];
    int nseen = 0, last_in = -1, first_out = -1;
    long long prev = -2, back = -1, out_row = -1, in_row = -1, loose_row = -1, loose_before = -1;
    int waits_told = 1;

    memset(&o, 0, sizeof o);
    if (nchunks < 2)
        return o;
    open_job(r, nchunks);
    run_named(r, v, v == DEPTH_FIRST ? "depth-first (traced)" : "breadth-first (traced)");
    poison(r);
    remote->lab05_trace(d->sA, d->sB, d->sC, d->dA, d->dB, d->dC, d->n, nchunks,
                        v == DEPTH_FIRST ? LAB05_DEPTH_FIRST : LAB05_BREADTH_FIRST, kit_vector_knobs_now.work, NULL,
                        0, ct);
    note_early(r, ct->early);
    if (!trace_sane(ct)) {
        o.judged = 1;
        snprintf(o.why, sizeof o.why, "its traced run's record is not one the kit makes");
        close_job(r);
        return o;
    }
    if (check_run(r) == 0 && ct->missed == 0 && ct->ncalls <= LAB05_MAX_CALLS) {
        o.judged = 1;
        for (int i = 0; i < ct->ncalls; i++) {
            long long row = ct->calls[i].row;
            int op = ct->calls[i].op;
            if (op == KIT_OP_OTHER)
                continue;
            if (op == KIT_OP_D2H) {
                if (first_out < 0) {
                    first_out = i;
                    out_row = row;
                }
            } else {
                /* The last copy in of another chunk queued before this one, which it must wait for. */
                int other = -1;
                for (int j = i - 1; j >= 0 && other < 0; j--)
                    if (ct->calls[j].op == KIT_OP_H2D && ct->calls[j].row != row)
                        other = j;
                if (ct->calls[i].after < 0)
                    waits_told = 0;
                else if (other >= 0 && ct->calls[i].after <= other && loose_row < 0) {
                    loose_row = row;
                    loose_before = ct->calls[other].row;
                }
                last_in = i;
                in_row = row;
            }
            if (row != prev) {
                for (int j = 0; j < nseen && back < 0; j++)
                    if (seen[j] == row)
                        back = row;
                if (nseen < (int)KIT_COUNT(seen))
                    seen[nseen++] = row;
                prev = row;
            }
        }
        if (v == DEPTH_FIRST) {
            o.right = back < 0;
            if (!o.right)
                snprintf(o.why, sizeof o.why, "it came back to the chunk at element %lld after queueing another "
                         "chunk's copies: depth-first queues one chunk's copy in, kernel and copy out, then the "
                         "next chunk's", back);
        } else {
            o.right = first_out < 0 || last_in < first_out;
            if (!o.right)
                snprintf(o.why, sizeof o.why, "it queued the copy out of the chunk at element %lld before the "
                         "copy in of the chunk at element %lld: breadth-first queues every chunk's copies in, "
                         "then every kernel, then every copy out", out_row, in_row);
            else if (waits_told && loose_row >= 0) {
                o.right = 0;
                o.unordered = 1;
                snprintf(o.why, sizeof o.why, "the copy in of the chunk at element %lld does not wait for the "
                         "copy in of the chunk at element %lld, queued before it in its stream: make each chunk's stream wait "
                         "(cudaStreamWaitEvent) for an event that is complete only once the copy in before it is "
                         "done; a wait by the host is not read", loose_row, loose_before);
            }
        }
    }
    close_job(r);
    return o;
}

/* ---- the course's scheduling examples (the kit's own) --------------------------- */

/* Every thread of every block waits `ns` from its block's start: the block
 * holds its share of the SM (threads, registers) all that time. */
static __global__ void __launch_bounds__(1024) spin_kernel(unsigned long long ns, unsigned long long *span)
{
    __shared__ unsigned long long t0;
    if (threadIdx.x == 0)
        t0 = kit_globaltimer();
    __syncthreads();
    while (kit_globaltimer() - t0 < ns) {
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicMin(&span[0], t0);
        atomicMax(&span[1], kit_globaltimer());
    }
}

typedef struct {
    const char *name; /* "Ka1" */
    int stream;
    int units;
} kspec;

#define MAX_KERNELS 4

typedef struct {
    const char *label, *key; /* for people; its key: value line */
    int order[MAX_KERNELS];
    int course_units; /* the course's count with one compute queue (Fermi) */
    double units;     /* measured, median of EXPERIMENT_REPS */
    double start[MAX_KERNELS], end[MAX_KERNELS]; /* in units, of the median run */
} korder;

/* Issues the kernels in the given order, each filling half of every SM;
 * returns the time from the first start to the last end, in units. */
static double run_kernels(const kspec *k, const int *order, int nk, cudaStream_t *s, const kit_device *dev,
                          unsigned long long *dspan, double *start, double *end)
{
    unsigned long long h[2 * MAX_KERNELS], first = ~0ull, last = 0;
    int threads = dev->max_threads_per_sm / 2;

    threads = threads > 1024 ? 1024 : threads;
    for (int j = 0; j < nk; j++)
        h[2 * j] = ~0ull, h[2 * j + 1] = 0;
    KIT_CHECK(cudaMemcpy(dspan, h, sizeof h, cudaMemcpyHostToDevice));
    for (int j = 0; j < nk; j++) {
        const kspec *x = &k[order[j]];
        spin_kernel<<<dev->sms, threads, 0, s[x->stream]>>>(x->units * EXPERIMENT_UNIT_NS, dspan + 2 * order[j]);
        KIT_CHECK_LAUNCH();
    }
    KIT_CHECK(cudaDeviceSynchronize());
    KIT_CHECK(cudaMemcpy(h, dspan, sizeof h, cudaMemcpyDeviceToHost));
    for (int j = 0; j < nk; j++) {
        first = h[2 * j] < first ? h[2 * j] : first;
        last = h[2 * j + 1] > last ? h[2 * j + 1] : last;
    }
    for (int j = 0; j < nk; j++) {
        start[j] = (double)(h[2 * j] - first) / EXPERIMENT_UNIT_NS;
        end[j] = (double)(h[2 * j + 1] - first) / EXPERIMENT_UNIT_NS;
    }
    return (double)(last - first) / EXPERIMENT_UNIT_NS;
}

static void kernel_orders(const kspec *k, int nk, korder *o, int norders, cudaStream_t *s, const kit_device *dev,
                          unsigned long long *dspan)
{
    for (int i = 0; i < norders; i++) {
        double u[EXPERIMENT_REPS], st[EXPERIMENT_REPS][MAX_KERNELS], en[EXPERIMENT_REPS][MAX_KERNELS];
        int med = 0;
        nvtxRangePushA(o[i].label);
        for (int rep = 0; rep < EXPERIMENT_REPS; rep++)
            u[rep] = run_kernels(k, o[i].order, nk, s, dev, dspan, st[rep], en[rep]);
        nvtxRangePop();
        for (int rep = 0; rep < EXPERIMENT_REPS; rep++) {
            int below = 0;
            for (int q = 0; q < EXPERIMENT_REPS; q++)
                below += u[q] < u[rep];
            if (below == EXPERIMENT_REPS / 2)
                med = rep;
        }
        o[i].units = u[med];
        memcpy(o[i].start, st[med], sizeof o[i].start);
        memcpy(o[i].end, en[med], sizeof o[i].end);
    }
}

/* Each order: the course's units and this GPU's, then its kernels, one
 * row per stream, 12 columns per unit. */
static void print_orders(const kspec *k, int nk, const korder *o, int norders)
{
    for (int i = 0; i < norders; i++, o++) {
        printf("  %-52s %6d units %10.2f\n", o->label, o->course_units, o->units);
        for (int s = 0; s < 2; s++) {
            char line[97];
            memset(line, ' ', 96);
            line[96] = '\0';
            for (int j = 0; j < nk; j++) {
                if (k[j].stream != s)
                    continue;
                for (int x = (int)(o->start[j] * 12 + 0.5); x < (int)(o->end[j] * 12 + 0.5) && x < 96; x++)
                    line[x] = k[j].name[1]; /* 'a' or 'b' */
            }
            for (int x = 95; x >= 0 && line[x] == ' '; x--)
                line[x] = '\0';
            printf("      stream %d |%s\n", s + 1, line);
        }
    }
}

static const kspec equal_kernels[4] = {{"Ka1", 0, 1}, {"Kb1", 0, 1}, {"Ka2", 1, 1}, {"Kb2", 1, 1}};
static const kspec unequal_kernels[4] = {{"Ka1", 0, 2}, {"Kb1", 0, 1}, {"Ka2", 1, 1}, {"Kb2", 1, 2}};
/* The orders each is issued in: the first two of equal_kernels, the last three of unequal_kernels. */
static const korder kernel_orders_asked[5] = {
    {"depth-first: Ka1 Kb1 Ka2 Kb2", "units-two-kernels-depth-first", {0, 1, 2, 3}, 3},
    {"breadth-first: Ka1 Ka2 Kb1 Kb2", "units-two-kernels-breadth-first", {0, 2, 1, 3}, 2},
    {"depth-first: Ka1 Kb1 Ka2 Kb2", "units-unequal-depth-first", {0, 1, 2, 3}, 5},
    {"breadth-first: Ka1 Ka2 Kb1 Kb2", "units-unequal-breadth-first", {0, 2, 1, 3}, 4},
    {"the course's: Ka1 Ka2 Kb2 Kb1", "units-unequal-course-order", {0, 2, 3, 1}, 3}};

/*
 * A gate: s[0] spins for gate_ns and records `start`; the other streams wait
 * on it. Everything an example queues behind the gate starts together once
 * the host has queued it all, so a busy host, late to queue its next call,
 * cannot stretch the figure (a 16 MiB copy is a unit of about 0.3 ms). The
 * figure counts from `start`. gate_held says whether the gate was still
 * closed when the host had queued the last call.
 */
#define EXPERIMENT_GATE_NS 2000000ull

static void gate_close(cudaStream_t *s, int ns, cudaEvent_t start, unsigned long long gate_ns, unsigned long long *dspan)
{
    spin_kernel<<<1, 32, 0, s[0]>>>(gate_ns, dspan);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaEventRecord(start, s[0]));
    for (int i = 1; i < ns; i++)
        KIT_CHECK(cudaStreamWaitEvent(s[i], start, 0));
}

static int gate_held(cudaEvent_t start)
{
    cudaError_t e = cudaEventQuery(start);
    if (e == cudaErrorNotReady)
        return 1;
    KIT_CHECK(e);
    return 0;
}

/*
 * One copy's time behind the gate (order -1), or the course's copy queue:
 * stream 1: HDa1, HDb1, K1, DH1; stream 2: DH2 (course: Fermi's copy queue).
 * Order 0 issues stream 1's four first, order 1 issues DH2 first. Returns
 * the total in ms, from a run whose gate held (up to 3 tries, each gate
 * twice as long as the last).
 */
static double copy_queue(int order, cudaStream_t *s, unsigned int *dev_buf, unsigned int *host_buf, double unit_ms,
                         unsigned long long *dspan)
{
    size_t b = EXPERIMENT_COPY_BYTES, w = b / sizeof(unsigned int);
    cudaEvent_t e0, e1;
    float ms = 0;
    unsigned long long gate_ns = EXPERIMENT_GATE_NS;
    unsigned long long h[2] = {~0ull, 0};

    KIT_CHECK(cudaEventCreate(&e0));
    KIT_CHECK(cudaEventCreate(&e1));
    for (int held = 0, tries = 0; !held && tries < 3; tries++, gate_ns *= 2) {
        KIT_CHECK(cudaMemcpy(dspan, h, sizeof h, cudaMemcpyHostToDevice));
        KIT_CHECK(cudaDeviceSynchronize());
        gate_close(s, 2, e0, gate_ns, dspan);
        if (order < 0) {
            KIT_CHECK(cudaMemcpyAsync(dev_buf, host_buf, b, cudaMemcpyHostToDevice, s[0]));
        } else {
            if (order == 1)
                KIT_CHECK(cudaMemcpyAsync(host_buf + 3 * w, dev_buf + 3 * w, b, cudaMemcpyDeviceToHost, s[1]));
            KIT_CHECK(cudaMemcpyAsync(dev_buf, host_buf, b, cudaMemcpyHostToDevice, s[0]));
            KIT_CHECK(cudaMemcpyAsync(dev_buf + w, host_buf + w, b, cudaMemcpyHostToDevice, s[0]));
            spin_kernel<<<1, 32, 0, s[0]>>>((unsigned long long)(unit_ms * 1e6), dspan);
            KIT_CHECK_LAUNCH();
            KIT_CHECK(cudaMemcpyAsync(host_buf + 2 * w, dev_buf + 2 * w, b, cudaMemcpyDeviceToHost, s[0]));
            if (order == 0)
                KIT_CHECK(cudaMemcpyAsync(host_buf + 3 * w, dev_buf + 3 * w, b, cudaMemcpyDeviceToHost, s[1]));
        }
        held = gate_held(e0);
        KIT_CHECK(cudaEventRecord(e1, 0));
        KIT_CHECK(cudaEventSynchronize(e1));
        KIT_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    }
    KIT_CHECK(cudaEventDestroy(e0));
    KIT_CHECK(cudaEventDestroy(e1));
    return ms;
}

/*
 * 4-way concurrency: the kit's own depth-first pipeline of FOUR_WAY_CHUNKS
 * chunks (pinned memory, its own streams), each chunk first prepared by
 * the host (host_work). Mode 0: no host work, the pipeline alone (3-way);
 * mode 1: the host prepares every chunk, then queues the pipeline; mode 2:
 * the host prepares chunk i and queues it at once, so that it prepares
 * chunk i + 1 while the GPU copies and computes chunk i (4-way). Returns
 * the wall time.
 */
static double four_way(data_t *d, cudaStream_t *s, int mode, double work_ms, long long *wrong)
{
    static const char *const names[3] = {"3-way: the pipeline alone", "the host's work, then the pipeline",
                                         "4-way: the host's work between the asynchronous calls"};
    double t0, total;

    fresh_run(d, d->kA, d->kB, d->kC);
    nvtxRangePushA(names[mode]);
    t0 = kit_wall_ms();
    for (int i = 0; mode == 1 && i < FOUR_WAY_CHUNKS; i++)
        host_work(work_ms, i);
    issue_kit_pipeline(d, d->kA, d->kB, d->kC, s, FOUR_WAY_CHUNKS, mode == 2 ? work_ms : -1);
    total = kit_wall_ms() - t0;
    nvtxRangePop();
    *wrong += check_output(d, d->kC, names[mode]);
    return total;
}

/* ---- the table of versions -------------------------------------------------------- */

/* Beside each row of the table of versions (kit_table.h, declared below
 * the lab's state): what its check and its ideal need. */
typedef struct {
    long long early;         /* runs that returned before their streams were done */
    int chunks;              /* 1: serial */
    double ideal_ms;         /* 0: none */
} line_t;

/* ---- the lab, declared once (kit_lab.h) ------------------------------------------------ */

/* Part 2's chunks (--streams N: N alone). */
static const int sweep[] = {2, 3, 4, 8, 16, 32};
#define NSWEEP KIT_COUNT(sweep)

struct lab {
    kit_run run;
    int only, connections, auto_work, queues; /* --streams, --connections; the hardware queues */
    const char *work_arg, *timeline_path;
    int brief; /* --focus without --timeline: Parts 3 and 4 left out */
    unsigned long long work;
    unsigned int n;
    int chunks[NSWEEP], nsweep, alloc_ok, streams_ok;
    data_t d;
    run_t r;
    /* Part 1: the parts alone, pinned (copies in, kernel, copies out) */
    double gbs[4], part[3], part_plain_kernel; /* gbs: in and out, pageable then pinned */
    /* Part 2's table: serial (measured in Part 1), depth-first, breadth-first,
     * the plain kernel's; df[best] the fastest verified (best -1: none) */
    kit_row rows[2 + 2 * NSWEEP + 2], *df, *bf, *plain;
    line_t lines[2 + 2 * NSWEEP + 2]; /* beside each row */
    int nlines, plain_rows, best;
    double speedup, of_ideal; /* the best's over serial from pinned memory, and of its ideal */
    /* Part 3: the traced runs, depth-first (judged) and breadth-first (--timeline) */
    timeline_t tl, tl_bf;
    issue_order_t order[2];
    int order_chunks;
    double share, possible, need; /* copies beside kernels, of the kernels' time */
    /* Part 4: two streams, two 1-unit kernels each; 2 + 1 units and 1 + 2 units */
    korder orders[5]; /* kernel_orders_asked, measured */
    double copy_unit_ms, copy_units[2]; /* stream 1 first; the copy out of stream 2 first */
    double four_way_ms[3], host_work_ms; /* the pipeline alone, after the host's work, between it; per chunk */
    long long four_way_wrong;
    double kit_pipeline_share;
    int platform_cannot_overlap;
    /* Part 5, fastest runs: the best pipeline's, the judge's path, then, the
     * student's process gone, the serial, the ideal, the kit's own pipeline */
    int gain_asked, gain_runs, gain_judged;
    double g_best, path, g_serial, g_ideal, t_kit, gain_possible, gain_share, kit_gain_share, gain_need;
    long long kit_pipeline_wrong;
};

/* The table of versions, declared once: its check says NO WAIT for runs
 * that returned early and WRONG for a wrong timed run; an ideal it lacks
 * is left blank (the table's hidden text); the CSV quotes the version's
 * name, which holds a comma. */
static const lab *lab_of(const void *x) { return (const lab *)x; }
static const line_t *line_of(const kit_row *r, const void *x) { return &lab_of(x)->lines[r - lab_of(x)->rows]; }
static int has_ideal(const kit_row *r, const void *x) { return r->timed && line_of(r, x)->ideal_ms > 0; }
/* Against the serial version from pinned memory with the same kernel. */
static double col_vs_serial(const kit_row *r, const void *x)
{
    const kit_row *serial = r < lab_of(x)->plain ? &lab_of(x)->rows[1] : lab_of(x)->plain;
    return r->timed && serial->timed && serial->t.median_ms > 0 ? serial->t.median_ms / r->t.median_ms : NAN;
}
static double col_of_ideal(const kit_row *r, const void *x)
{
    return has_ideal(r, x) ? 100.0 * line_of(r, x)->ideal_ms / r->t.median_ms : 0.0;
}
static double col_chunks(const kit_row *r, const void *x) { return line_of(r, x)->chunks; }
static double col_work(const kit_row *r, const void *x) { return r < lab_of(x)->plain ? (double)lab_of(x)->work : 0.0; }
static double col_ideal(const kit_row *r, const void *x) { return line_of(r, x)->ideal_ms; }
static const char *check_word(const kit_row *r, const void *x)
{
    return r->wrong || r->t.bad_runs ? "WRONG" : line_of(r, x)->early ? "NO WAIT" : "ok";
}
static int correct(const kit_row *r, const void *x) { return strcmp(check_word(r, x), "ok") == 0; }

static const kit_column version_columns[] = {
    {NULL, 0, 0, NULL, "chunks", 0, NULL, 0, col_chunks, NULL},
    {NULL, 0, 0, NULL, "kernel_work", 0, NULL, 0, col_work, NULL},
    {"time (ms)", 10, 3, "", "time_ms", 6, NULL, 0, kit_col_time, NULL},
    {"vs serial", 10, 2, "x", NULL, 0, NULL, 0, col_vs_serial, NULL},
    {"of ideal", 9, 0, "%", NULL, 0, NULL, 0, col_of_ideal, has_ideal},
    {NULL, 0, 0, NULL, "ideal_ms", 6, NULL, 0, col_ideal, NULL},
};

/* The first nrows rows of the table. */
static kit_table versions(const lab *L, int nrows)
{
    kit_table t = {"version", 32, L->rows, nrows, version_columns, KIT_COUNT(version_columns), L,
                   NULL, check_word, correct, NULL, NULL, ""};
    return t;
}

/* Names and measures a line of the table: version v, a pipeline in the job
 * open (open_job); prefix "plain-" for the plain kernel's. */
static void measure_line(lab *L, kit_row *row, enum version v, const char *prefix)
{
    static const char *const what[] = {"pageable", "pinned", "depth-first", "breadth-first"};
    kit_row_work w = {&L->r, NULL, run_once, poison, verify, NULL, compare, NULL, NULL, NULL};
    line_t *l = &L->lines[row - L->rows];
    char key[32];

    l->chunks = v >= DEPTH_FIRST ? L->r.nchunks : 1;
    if (v >= DEPTH_FIRST) {
        snprintf(key, sizeof key, "%s%s-%d", prefix, what[v], l->chunks);
        kit_row_name(row, key, "TODO(2), TODO(3) and TODO(5)", "%s, %d chunks", what[v], l->chunks);
    } else {
        snprintf(key, sizeof key, "%sserial-%s", prefix, what[v]);
        kit_row_name(row, key, NULL, "serial, %s memory", what[v]);
    }
    run_named(&L->r, v, row->name);
    nvtxRangePushA(row->name);
    kit_row_measure(row, &w, &L->run.policy);
    nvtxRangePop();
    l->early = L->r.early;
}

/* The options checked; the hardware queues set before any CUDA call. */
static int prepare(lab *L)
{
    const kit_common *c = &L->run.c;
    const char *env;

    if (strcmp(L->work_arg, "auto") == 0)
        L->auto_work = 1;
    else if (kit_parse_u64(L->work_arg, &L->work) != 0 || L->work > MAX_WORK)
        kit_die(KIT_EXIT_USAGE, "--kernel-work '%s': expected 'auto' or a count from 0 to %d", L->work_arg, MAX_WORK);
    if (c->size && L->only && (unsigned long long)L->only > c->size)
        kit_die(KIT_EXIT_USAGE, "--streams %d: more chunks than the %llu elements", L->only, c->size);
    if (L->timeline_path && strcmp(L->timeline_path, "-") == 0)
        kit_die(KIT_EXIT_USAGE, "--timeline: name a file (stdout holds the report)");
    kit_output_check("--timeline", L->timeline_path);
    /* The driver reads it once, when the context is made: before any CUDA call. */
    if (L->connections) {
        char v[16];
        snprintf(v, sizeof v, "%d", L->connections);
        setenv("CUDA_DEVICE_MAX_CONNECTIONS", v, 1);
    }
    env = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    L->queues = env && atoi(env) > 0 ? atoi(env) : 8;
    /* Under --focus (the grader's timed runs: its checked runs had them)
     * no timeline and no examples, unless --timeline asks for the timeline. */
    L->brief = kit_focus != NULL && L->timeline_path == NULL;
    return -1;
}

/* The size, Part 2's chunks, the timing, the arrays: the job's host arrays
 * in the memory the student's alloc_host chose. */
static void setup(lab *L)
{
    const kit_device *dev = &L->run.dev;
    unsigned long long size = L->run.c.size;
    unsigned int n;

    /* Six arrays (the job's three, the drawn inputs, C copied back) and the
     * traced run's block record (24 bytes per 32 elements). */
    n = size ? (unsigned int)size : DEFAULT_SIZE;
    if (!size) {
        int capped;
        while (n > (1u << 20) && (long long)n * DEVICE_BYTES_PER_ELEMENT > dev->free_bytes / 2)
            n /= 2;
        /* Pinned: the kit's three arrays, the job's three, one of alloc_host's
         * while it is looked at, the copy-queue buffer. */
        n = (unsigned int)kit_pinned_default_size(n, 1u << 20, 7 * sizeof(unsigned int),
                                                  4 * (size_t)EXPERIMENT_COPY_BYTES, &capped);
        if (capped)
            kit_pinned_capped_note(n, 7.0 * sizeof(unsigned int) * n + 4.0 * EXPERIMENT_COPY_BYTES);
    }
    if ((long long)n * DEVICE_BYTES_PER_ELEMENT + (96ll << 20) > dev->free_bytes)
        kit_die(KIT_EXIT_USAGE, "--size %u needs %.0f MiB of GPU memory, %s has %.0f MiB free; choose a smaller --size",
                n, ((double)n * DEVICE_BYTES_PER_ELEMENT + (96 << 20)) / 1048576, dev->name,
                dev->free_bytes / 1048576.0);
    for (int i = 0; i < NSWEEP; i++)
        if ((L->only == 0 || sweep[i] == L->only) && (unsigned int)sweep[i] <= n)
            L->chunks[L->nsweep++] = sweep[i];
    if (L->only && L->nsweep == 0)
        L->chunks[L->nsweep++] = L->only;
    L->run.policy.max_ms = 150.0; /* each run also costs a check of every element on the host */
    L->run.policy.max_reps = 30;
    L->run.policy.noise = 0.03;

    L->n = n;
    data_setup(&L->d, n, L->run.c.seed);
    L->alloc_ok = student_arrays(&L->d);
    L->r.d = &L->d;
    L->streams_ok = 1;
    L->best = -1;
    L->df = L->rows + 2;
    L->bf = L->df + L->nsweep;
    L->plain = L->bf + L->nsweep;
    L->nlines = 2 + 2 * L->nsweep;
}

/* Part 1: the parts alone (the bandwidths, the pipelines' ideal) and the
 * kernel's work; then the kit's serial versions, the table's first lines. */
static void part1_measure(lab *L)
{
    data_t *d = &L->d;
    const kit_policy *p = &L->run.policy;
    double bw[4];

    nvtxRangePushA("the parts");
    kit_vector_knobs_now.work = 0;
    for (int i = 0; i < 4; i++) {
        bw[i] = time_part(d, (enum part)i, p).median_ms; /* H2D_PAGEABLE to D2H_PINNED */
        L->gbs[i] = d->bytes / (bw[i] * 1e6);
    }
    L->part_plain_kernel = time_part(d, KERNEL, p).median_ms;
    L->part[0] = 2 * bw[2]; /* A and B */
    L->part[2] = bw[3];
    if (L->auto_work)
        L->work = (unsigned long long)calibrate_work(d, L->part[0]);
    kit_vector_knobs_now.work = (int)L->work;
    L->part[1] = L->work ? time_part(d, KERNEL, p).median_ms : L->part_plain_kernel;
    nvtxRangePop();

    /* Under --focus on a depth-first row (the grader's timed runs) the
     * serial from pinned memory is timed in full as well (the verdict by
     * the clock asks it for enough runs; the serial it compares with is
     * timed again in Part 5, the student's process gone: student_done). */
    if (kit_focus && strncmp(kit_focus, "depth-first-", 12) == 0)
        kit_focus_also = "serial-pinned";
    measure_line(L, &L->rows[0], SERIAL_PAGEABLE, "");
    measure_line(L, &L->rows[1], SERIAL_PINNED, "");
}

static void part1_print(lab *L)
{
    const kit_device *dev = &L->run.dev;
    const double *gbs = L->gbs, mib = L->d.bytes / 1048576.0;
    printf("3 x %s 32-bit integers (%.0f MiB each), seed %llu; %d copy engine%s, %d hardware queue%s\n",
           kit_grouped(L->n), mib, L->run.c.seed, dev->copy_engines, dev->copy_engines == 1 ? "" : "s", L->queues,
           L->queues == 1 ? "" : "s");
    printf("the kernel: %s extra steps per element%s\n\n", kit_grouped(L->work),
           L->auto_work ? " (--kernel-work auto: as long as the copies in)" : "");
    printf("copies of %.0f MiB          pageable        pinned\n", mib);
    printf("  host to device     %8.1f GB/s %8.1f GB/s  (%.1fx)\n", gbs[0], gbs[2], gbs[2] / gbs[0]);
    printf("  device to host     %8.1f GB/s %8.1f GB/s  (%.1fx)\n\n", gbs[1], gbs[3], gbs[3] / gbs[1]);
    printf("the parts, pinned: copies in (A and B) %.3f ms, kernel %.3f ms, copies out %.3f ms\n\n", L->part[0],
           L->part[1], L->part[2]);
}

static void part1_kv(lab *L)
{
    const double *gbs = L->gbs;
    kit_kv("size", "%u", L->n);
    kit_kv("kernel-work", "%llu", L->work);
    kit_kv("connections", "%d", L->queues);
    kit_kv("bandwidth-h2d-pageable-gbs", "%.2f", gbs[0]);
    kit_kv("bandwidth-d2h-pageable-gbs", "%.2f", gbs[1]);
    kit_kv("bandwidth-h2d-pinned-gbs", "%.2f", gbs[2]);
    kit_kv("bandwidth-d2h-pinned-gbs", "%.2f", gbs[3]);
    kit_kv("pinned-vs-pageable-h2d", "%.2f", gbs[2] / gbs[0]);
    kit_kv("pinned-vs-pageable-d2h", "%.2f", gbs[3] / gbs[1]);
    kit_kv("time-h2d-ms", "%.4f", L->part[0]);
    kit_kv("time-kernel-ms", "%.4f", L->part[1]);
    kit_kv("time-plain-kernel-ms", "%.4f", L->part_plain_kernel);
    kit_kv("time-d2h-ms", "%.4f", L->part[2]);
}

/* Part 2: the student's pipeline, both orders, every N; then the course's
 * plain kernel: serial and the best N, depth-first. */
static void part2_measure(lab *L)
{
    run_t *r = &L->r;
    int best_focused = 0;
    double plain_part[3] = {L->part[0], L->part_plain_kernel, L->part[2]};
    double t_serial = L->rows[1].timed ? L->rows[1].t.median_ms : 0.0;

    for (int i = 0; i < L->nsweep; i++) {
        const kit_row *x = &L->df[i];
        int focused;
        L->streams_ok &= open_job(r, L->chunks[i]);
        measure_line(L, &L->df[i], DEPTH_FIRST, "");
        measure_line(L, &L->bf[i], BREADTH_FIRST, "");
        close_job(r);
        /* The fastest verified one; under --focus the focused one, the
         * only one timed until steady. */
        focused = kit_focus && strcmp(kit_focus, x->key) == 0;
        if (x->timed && x->t.bad_runs == 0 && x->wrong == 0 && !best_focused &&
            (L->best < 0 || focused || x->t.median_ms < L->df[L->best].t.median_ms)) {
            L->best = i;
            best_focused = focused;
        }
    }
    if (L->work && L->best >= 0) {
        kit_vector_knobs_now.work = 0;
        measure_line(L, &L->plain[0], SERIAL_PINNED, "plain-");
        open_job(r, L->chunks[L->best]);
        measure_line(L, &L->plain[1], DEPTH_FIRST, "plain-");
        close_job(r);
        kit_vector_knobs_now.work = (int)L->work;
        L->plain_rows = 2;
        L->nlines += 2;
    }
    /* Each line's ideal, of its chunks and with its kernel (none for the
     * serial from pageable memory). */
    for (int i = 0; i < L->nlines; i++) {
        line_t *l = &L->lines[i];
        const double *t = L->rows + i < L->plain ? L->part : plain_part;
        l->ideal_ms = i ? kit_pipeline_ideal_ms(t[0], t[1], t[2], l->chunks, L->run.dev.copy_engines) : 0.0;
    }
    if (L->best >= 0) {
        const kit_row *b = &L->df[L->best];
        L->speedup = t_serial / b->t.median_ms;
        L->of_ideal = line_of(b, L)->ideal_ms / b->t.median_ms;
    }
}

static void part2_print(lab *L)
{
    const kit_table t = versions(L, (int)(L->plain - L->rows));
    kit_table_print(&t);
    printf("(vs serial: against serial from pinned memory; of ideal: the best this many chunks can do,\n"
           "the stages of one chunk and then the slowest stage for each other chunk, %s)\n",
           L->run.dev.copy_engines >= 2 ? "copies in and out on separate engines" : "copies in and out on one engine");
    if (L->nsweep && L->chunks[L->nsweep - 1] > L->queues)
        printf("(more chunks than the %d hardware queues: some streams share a queue, and a chunk may wait\n"
               "behind another's work there, as on Fermi)\n", L->queues);
    if (L->plain_rows) {
        printf("\nwith the course's plain kernel (%.3f ms for all the data):\n", L->part_plain_kernel);
        for (const kit_row *r = L->plain; r < L->rows + L->nlines; r++)
            kit_table_line(&t, r, NULL);
    }
    printf("\n");
}

static void part2_csv(lab *L, FILE *f)
{
    const kit_table t = versions(L, L->nlines);
    kit_table_csv(f, &t, &L->run.dev, L->n, L->run.c.seed, 1);
}

static void part2_kv(lab *L)
{
    const kit_table t = versions(L, L->nlines);
    kit_table_kv(&t);
    for (int i = 0; i < L->nsweep; i++) {
        char key[48];
        snprintf(key, sizeof key, "ideal-%d-ms", L->chunks[i]);
        kit_kv(key, "%.4f", line_of(&L->df[i], L)->ideal_ms);
    }
    if (L->best >= 0) {
        kit_kv("best-chunks", "%d", L->chunks[L->best]);
        kit_kv("speedup-pipeline-vs-pinned", "%.3f", L->speedup);
        kit_kv("pipeline-fraction-of-ideal", "%.3f", L->of_ideal);
    }
    if (L->plain_rows && L->plain[0].timed && L->plain[1].timed)
        kit_kv("speedup-plain-pipeline-vs-pinned", "%.3f", L->plain[0].t.median_ms / L->plain[1].t.median_ms);
}

/* Pinned host memory (TODO(1)), streams of the student's own, and every run
 * of every line right (said in the order measured), none returned before
 * its streams were done. */
static void part2_verdict(lab *L)
{
    L->run.pass &= L->alloc_ok & L->streams_ok & (early_total == 0);
    for (int i = 0; i < 2; i++)
        L->run.pass &= kit_row_ok(&L->rows[i], L->n);
    for (int i = 0; i < L->nsweep; i++) {
        L->run.pass &= kit_row_ok(&L->df[i], L->n);
        L->run.pass &= kit_row_ok(&L->bf[i], L->n);
    }
    for (int i = 0; i < L->plain_rows; i++)
        L->run.pass &= kit_row_ok(&L->plain[i], L->n);
}

/* Part 3: from the traced build, the timeline of the fastest depth-first
 * pipeline, and the order each pipeline queued its copies in. */
static void part3_measure(lab *L)
{
    const timeline_t *tl = &L->tl;
    int k = L->best >= 0 ? L->chunks[L->best] : 0;

    if (L->best >= 0 && !L->brief) {
        traced_run(&L->r, k, DEPTH_FIRST, &L->tl);
        /* The same chunks issued breadth-first, for the picture beside it. */
        if (L->timeline_path)
            traced_run(&L->r, k, BREADTH_FIRST, &L->tl_bf);
        /* At the best N (4 if that is one chunk: one chunk has no order). */
        L->order_chunks = k >= 2 ? k : 4;
        L->order[0] = issue_order(&L->r, L->order_chunks, DEPTH_FIRST);
        L->order[1] = issue_order(&L->r, L->order_chunks, BREADTH_FIRST);
    }
    /* Copies beside kernels, of the time kernels ran, against what these
     * chunks' copies could cover (kit_timeline.h), the kernels narrowed
     * by the clocks' uncertainty. */
    L->share = tl->done && tl->judged.kernel_ms > 0 ? tl->judged.copy_kernel_ms / tl->judged.kernel_ms : 0.0;
    L->possible = tl->done ? kit_overlap_possible(tl->rec.spans, tl->rec.nspans, tl->nchunks, tl->rec.uncertainty_ms)
                           : 1.0;
    L->need = fmin(MIN_COPY_KERNEL_OVERLAP, MIN_SHARE_OF_POSSIBLE * L->possible);
}

/* Why the timeline's overlap is not judged, or NULL: it is. */
static const char *overlap_not_judged(const lab *L)
{
    const timeline_t *tl = &L->tl;
    return tl->nchunks < 2 ? "one chunk has nothing to overlap"
           : kit_under_sanitizer()
               ? "under compute-sanitizer the instrumented kernels and copies do not overlap as they would "
                 "(KIT_UNDER_SANITIZER)"
           : L->platform_cannot_overlap
               ? "on WSL 2 Windows schedules the GPU's work, and the kit's own pipeline did not overlap here "
                 "either (kit-pipeline-share-of-parts; README.md, \"Windows\")"
           : L->queues == 1 ? "with one hardware queue the traced run's events serialise the streams"
           : L->run.dev.copy_engines < 1 ? "this GPU has no copy engine"
           : tl->rec.launches == 0 ? "the traced run launched no kernel"
           : !(tl->rec.mean_kernel_ms >= JUDGE_KERNEL_OVER_UNCERTAINTY * tl->rec.uncertainty_ms)
               ? "its kernels are too short for the clocks to tell"
               : NULL;
}

static void part3_print(lab *L)
{
    const timeline_t *tl = &L->tl;
    const issue_order_t *o = L->order;
    if (tl->done) {
        printf("timeline of depth-first, %d chunks, from your traced build (%.3f ms across; '>' copy in,\n"
               "'#' kernel, '<' copy out):\n", tl->nchunks, tl->raw.last_ms - tl->raw.first_ms);
        kit_gantt_print(tl->rec.spans, tl->rec.nspans, 64, tl->raw.first_ms, tl->raw.last_ms);
        printf("  copies ran beside kernels for %.3f of the %.3f ms that kernels ran (%.0f%%);\n"
               "  copies in beside copies out for %.3f ms; at most %d operations at once\n",
               tl->raw.copy_kernel_ms, tl->raw.kernel_ms,
               tl->raw.kernel_ms > 0 ? 100.0 * tl->raw.copy_kernel_ms / tl->raw.kernel_ms : 0.0,
               tl->raw.h2d_d2h_ms, tl->raw.max_concurrent);
        if (L->queues == 1)
            printf("  (with one hardware queue the events around each copy wait in that queue too and\n"
                   "  serialise the streams: here the timed runs above are the ones to trust)\n");
        printf("\n");
    }
    if (o[0].judged || o[1].judged) {
        printf("the order your pipelines queued their copies in (traced build, %d chunks):\n", L->order_chunks);
        printf("  depth-first    %s\n", !o[0].judged ? "not told"
                                      : o[0].right  ? "chunk by chunk: in, kernel, out, then the next chunk"
                                                    : "WRONG: not chunk by chunk");
        printf("  breadth-first  %s\n\n", !o[1].judged ? "not told"
                                        : o[1].right  ? "every copy in, one after the other, then the kernels, "
                                                        "then every copy out"
                                        : o[1].unordered ? "WRONG: its copies in do not wait for each other"
                                                         : "WRONG: a copy out before the last copy in");
    }
}

static void part3_kv(lab *L)
{
    const timeline_t *tl = &L->tl;
    /* --timeline's file, written here: the driver writes --csv's alone. */
    if (L->timeline_path && tl->done) {
        FILE *f = kit_csv_open(L->timeline_path);
        fprintf(f, "chunk,operation,stream,start_ms,end_ms,version\n");
        write_timeline(f, tl, "depth-first");
        if (L->tl_bf.done)
            write_timeline(f, &L->tl_bf, "breadth-first");
        kit_csv_close(f);
    }
    for (int i = 0; i < 2; i++)
        kit_kv(i == 0 ? "issue-order-depth-first" : "issue-order-breadth-first", "%s",
               !L->order[i].judged ? "not-told" : L->order[i].right ? "right" : "wrong");
    if (tl->done) {
        kit_kv("timeline-chunks", "%d", tl->nchunks);
        kit_kv("timeline-ms", "%.4f", tl->raw.last_ms - tl->raw.first_ms);
        kit_kv("timeline-kernel-launches", "%d", tl->rec.launches);
        kit_kv("timeline-uncertainty-ms", "%.4f", tl->rec.uncertainty_ms);
        kit_kv("overlap-kernel-ms", "%.4f", tl->raw.kernel_ms);
        kit_kv("overlap-copy-kernel-ms", "%.4f", tl->raw.copy_kernel_ms);
        kit_kv("overlap-copy-kernel-fraction", "%.3f", L->share);
        kit_kv("overlap-h2d-d2h-ms", "%.4f", tl->raw.h2d_d2h_ms);
        kit_kv("max-concurrent-operations", "%d", tl->raw.max_concurrent);
        kit_kv("overlap-copy-kernel-possible", "%.3f", L->possible);
        kit_kv("overlap-copy-kernel-needed", "%.3f", L->need);
        kit_kv("overlap-judged", "%s", overlap_not_judged(L) ? "no" : "yes");
    }
}

/* The traced runs right; each order queued as it must be (TODO(5)); in
 * the timeline, copies beside kernels (TODO(3)). */
static void part3_verdict(lab *L)
{
    const timeline_t *tl = &L->tl;
    const char *why = overlap_not_judged(L);
    if (tl->wrong || L->tl_bf.wrong)
        L->run.pass = 0;
    for (int i = 0; i < 2; i++)
        if (L->order[i].judged && !L->order[i].right) {
            fprintf(stderr, "%s: %s: %s (TODO(5))\n", kit_program,
                    i == 0 ? "pipeline_depth_first" : "pipeline_breadth_first", L->order[i].why);
            L->run.pass = 0;
        }
    if (L->brief) {
        /* --focus: the grader's checked runs judged the timeline. */
        fprintf(stderr, "%s: note: --focus: the timeline (and its overlap) is not judged in this run\n", kit_program);
    } else if (!tl->done) {
        fprintf(stderr, "%s: no depth-first pipeline verified, so there is no timeline to judge\n", kit_program);
        L->run.pass = 0;
    } else if (tl->rec.missed) {
        fprintf(stderr, "%s: note: %lld copies of the traced run were not recorded\n", kit_program, tl->rec.missed);
    }
    if (tl->done && why) {
        fprintf(stderr, "%s: note: the timeline's overlap is not judged: %s\n", kit_program, why);
        if (tl->rec.launches == 0)
            L->run.pass = 0;
    } else if (tl->done && L->share < L->need) {
        fprintf(stderr, "%s: depth-first, %d chunks: in the timeline copies ran beside kernels for only %.3f of "
                        "the %.3f ms that kernels ran (%.0f%%, at least %.0f%% needed; these chunks' copies could "
                        "cover %.0f%%): is each kernel launched into its chunk's stream, and is every copy "
                        "asynchronous? (TODO(3))\n",
                kit_program, tl->nchunks, tl->judged.copy_kernel_ms, tl->judged.kernel_ms, 100.0 * L->share,
                100.0 * L->need, 100.0 * L->possible);
        L->run.pass = 0;
    }
}

/* Part 4: the course's scheduling examples, the kit's own code. */
static void part4_measure(lab *L)
{
    double kit_parts_ms = L->part[0] + L->part[1] + L->part[2];
    cudaStream_t s[FOUR_WAY_CHUNKS];
    unsigned long long *dspan;
    unsigned int *dev_buf, *host_buf;
    double v[EXPERIMENT_REPS];

    if (L->brief)
        return; /* and the kit's own pipeline below: none, 0 */
    nvtxRangePushA("the course's scheduling examples");
    for (int i = 0; i < FOUR_WAY_CHUNKS; i++) {
        char name[32];
        KIT_CHECK(cudaStreamCreate(&s[i]));
        snprintf(name, sizeof name, "kit stream %d", i + 1);
        nvtxNameCudaStreamA(s[i], name);
    }
    KIT_CHECK(cudaMalloc((void **)&dspan, 2 * MAX_KERNELS * sizeof *dspan));
    nvtxRangePushA("two kernels per stream, each half the GPU");
    memcpy(L->orders, kernel_orders_asked, sizeof L->orders);
    kernel_orders(equal_kernels, 4, L->orders, 2, s, &L->run.dev, dspan);
    kernel_orders(unequal_kernels, 4, L->orders + 2, 3, s, &L->run.dev, dspan);
    nvtxRangePop();

    /* The copy queue: units of one copy's time. */
    KIT_CHECK(cudaMalloc((void **)&dev_buf, 4 * (size_t)EXPERIMENT_COPY_BYTES));
    KIT_CHECK(cudaMemset(dev_buf, 0, 4 * (size_t)EXPERIMENT_COPY_BYTES)); /* copied out: initcheck */
    KIT_CHECK(cudaMallocHost((void **)&host_buf, 4 * (size_t)EXPERIMENT_COPY_BYTES));
    memset(host_buf, 0, 4 * (size_t)EXPERIMENT_COPY_BYTES);
    for (int rep = 0; rep < EXPERIMENT_REPS; rep++)
        v[rep] = copy_queue(-1, s, dev_buf, host_buf, 0, dspan);
    L->copy_unit_ms = median_of_reps(v);
    nvtxRangePushA("a copy out behind another stream's");
    for (int order = 0; order < 2; order++) {
        for (int rep = 0; rep < EXPERIMENT_REPS; rep++)
            v[rep] = copy_queue(order, s, dev_buf, host_buf, L->copy_unit_ms, dspan);
        L->copy_units[order] = median_of_reps(v) / L->copy_unit_ms;
    }
    nvtxRangePop();
    KIT_CHECK(cudaFree(dev_buf));
    KIT_CHECK(cudaFreeHost(host_buf));

    /* 4-way: the host works on each chunk as long as the GPU's kernel does. */
    L->host_work_ms = L->part[1] / FOUR_WAY_CHUNKS;
    for (int mode = 0; mode < 3; mode++) {
        for (int rep = 0; rep < EXPERIMENT_REPS; rep++)
            v[rep] = four_way(&L->d, s, mode, L->host_work_ms, &L->four_way_wrong);
        L->four_way_ms[mode] = median_of_reps(v);
    }

    KIT_CHECK(cudaFree(dspan));
    for (int i = 0; i < FOUR_WAY_CHUNKS; i++)
        KIT_CHECK(cudaStreamDestroy(s[i]));
    nvtxRangePop();
    /*
     * The kit's own pipeline (the 3-way example: 4 chunks, depth-first)
     * against its three parts in turn. On WSL 2, where Windows schedules
     * the GPU's work, the student's overlap (Parts 3 and 5) is judged only
     * where the kit's own pipeline overlapped here: a machine that cannot
     * overlap fails no one for it.
     */
    L->kit_pipeline_share = kit_parts_ms > 0 ? L->four_way_ms[0] / kit_parts_ms : 0.0;
    L->platform_cannot_overlap = kit_on_wsl2() && L->kit_pipeline_share >= KIT_OWN_PIPELINE_MAX_SHARE;
}

static void part4_print(lab *L)
{
    if (L->brief) {
        printf("(--focus: the timeline and the course's scheduling examples are left out;\n"
               "run without --focus, or with --timeline FILE, for them)\n\n");
        return;
    }
    printf("The course's scheduling examples (the kit's own code), %d hardware queue%s; the course's\n"
           "figures are for Fermi, with one queue for kernels (--connections 1 to compare):\n\n",
           L->queues, L->queues == 1 ? "" : "s");
    printf("%-54s %12s %10s\n", "", "course", "this GPU");
    printf("two streams, two kernels each, every kernel half the GPU for 1 unit (%.1f ms):\n",
           EXPERIMENT_UNIT_NS / 1e6);
    print_orders(equal_kernels, 4, L->orders, 2);
    printf("the same with Ka1 and Kb2 2 units long, Kb1 and Ka2 1 unit:\n");
    print_orders(unequal_kernels, 4, L->orders + 2, 3);
    printf("stream 1: HDa1 HDb1 K1 DH1, stream 2: DH2; 1 unit = one %u MiB copy (%.3f ms):\n",
           EXPERIMENT_COPY_BYTES >> 20, L->copy_unit_ms);
    printf("  %-52s %6d units %10.2f\n", "stream 1 issued first, then DH2", 5, L->copy_units[0]);
    printf("  %-52s %6d units %10.2f\n", "DH2 issued first", 4, L->copy_units[1]);
    printf("the host prepares each chunk (%d chunks, %.3f ms of host work each) for the pipeline:\n",
           FOUR_WAY_CHUNKS, L->host_work_ms);
    printf("  %-52s %12s %10.3f ms\n", "the pipeline alone (3-way)", "", L->four_way_ms[0]);
    printf("  %-52s %12s %10.3f ms\n", "the host's work, then the pipeline", "", L->four_way_ms[1]);
    printf("  %-52s %12s %10.3f ms\n", "the host's work between the asynchronous calls (4-way)", "",
           L->four_way_ms[2]);
    printf("\n");
}

static void part4_kv(lab *L)
{
    if (L->brief)
        return;
    kit_kv("kit-pipeline-share-of-parts", "%.3f", L->kit_pipeline_share);
    for (int i = 0; i < KIT_COUNT(L->orders); i++)
        kit_kv(L->orders[i].key, "%.2f", L->orders[i].units);
    kit_kv("units-copy-queue-stream-1-first", "%.2f", L->copy_units[0]);
    kit_kv("units-copy-queue-dh2-first", "%.2f", L->copy_units[1]);
    kit_kv("time-3-way-ms", "%.4f", L->four_way_ms[0]);
    kit_kv("time-host-work-first-ms", "%.4f", L->four_way_ms[1]);
    kit_kv("time-4-way-ms", "%.4f", L->four_way_ms[2]);
}

static void part4_verdict(lab *L) { L->run.pass &= L->four_way_wrong == 0; }

/*
 * Part 5: the overlap by the clock that times the runs (in grading, the
 * judge's): the fastest depth-first pipeline must win back at least
 * MIN_SHARE_OF_GAIN of what the kit's own pipeline of as many chunks wins
 * back over serial from pinned memory (of serial less the ideal), the
 * judge's own path (a round trip to the student's process, path_ms) taken
 * off its time. Judged where the gain possible is large against the
 * serial time and against that path; Part 3's timeline is the student's
 * picture of it, and can fail the lab too.
 */
static void part5_measure(lab *L)
{
    data_t *d = &L->d;
    const kit_policy *p = &L->run.policy;
    int k = L->best >= 0 ? L->chunks[L->best] : 0;

    L->gain_asked = L->best >= 0 && k >= 2;
    L->g_best = L->best >= 0 ? L->df[L->best].t.min_ms : 0.0;
    L->path = L->gain_asked ? fmin(path_ms(), PATH_MAX_SHARE * L->g_best) : 0.0;
    /* What the student's pipeline is judged against, timed with the
     * student's process gone: the serial from pinned memory, the parts
     * (the ideal) and the kit's own pipeline. */
    student_done(d);
    if (L->gain_asked) {
        double in = 2 * time_part(d, H2D_PINNED, p).median_ms, out = time_part(d, D2H_PINNED, p).median_ms;
        double kernel = time_part(d, KERNEL, p).median_ms;
        L->g_ideal = kit_pipeline_ideal_ms(in, kernel, out, k, L->run.dev.copy_engines);
        L->g_serial = time_part(d, SERIAL, p).min_ms;
        L->t_kit = kit_pipeline_ms(d, k, p, &L->kit_pipeline_wrong);
    }
    /* Times to judge by: the fastest of several runs each (one run tells
     * nothing; what anything else adds to a run cannot lower the fastest). */
    double g_best_net = L->g_best - L->path > 0 ? L->g_best - L->path : 0.0;
    L->gain_runs = L->gain_asked && L->df[L->best].t.reps >= MIN_GAIN_REPS &&
                   L->rows[1].t.reps >= MIN_GAIN_REPS;
    L->gain_possible = L->best >= 0 ? L->g_serial - L->g_ideal : 0.0;
    L->gain_share = L->gain_possible > 0 ? (L->g_serial - g_best_net) / L->gain_possible : 0.0;
    L->kit_gain_share = L->gain_possible > 0 ? (L->g_serial - L->t_kit) / L->gain_possible : 0.0;
    L->gain_need = MIN_SHARE_OF_GAIN * L->kit_gain_share;
    L->gain_judged = L->gain_asked && L->queues != 1 && L->run.dev.copy_engines >= 1 && !L->platform_cannot_overlap &&
                     !kit_under_sanitizer() && L->gain_possible >= MIN_GAIN_OF_SERIAL * L->g_serial &&
                     L->gain_possible >= GAIN_OVER_PATH * L->path && L->gain_possible >= MIN_GAIN_MS &&
                     L->kit_gain_share >= MIN_KIT_GAIN_SHARE && L->gain_runs;
}

/* The course's pipeline, and this GPU's best (Part 2). */
static void part5_print(lab *L)
{
    printf("The course: a three-stream pipeline overlaps copies in, kernels and copies out (3-way\n"
           "concurrency); with one queue, breadth-first issue of it takes 7 units, depth-first 5.\n");
    if (L->best >= 0)
        printf("this GPU: depth-first with %d chunks %.2fx over serial from pinned memory, %.0f%% of its "
               "ideal.\n\n", L->chunks[L->best], L->speedup, 100.0 * L->of_ideal);
    else
        printf("this GPU: no pipeline verified.\n\n");
}

static void part5_kv(lab *L)
{
    if (!L->gain_asked)
        return;
    kit_kv("judge-path-ms", "%.4f", L->path);
    kit_kv("time-kit-pipeline-ms", "%.4f", L->t_kit);
    kit_kv("time-kit-serial-ms", "%.4f", L->g_serial);
    kit_kv("time-kit-ideal-ms", "%.4f", L->g_ideal);
    kit_kv("pipeline-gain-share", "%.3f", L->gain_share);
    kit_kv("pipeline-gain-kit-share", "%.3f", L->kit_gain_share);
    kit_kv("pipeline-gain-needed", "%.3f", L->gain_need);
    kit_kv("pipeline-gain-judged", "%s", L->gain_judged ? "yes" : "no");
}

static void part5_verdict(lab *L)
{
    if (L->gain_judged && L->gain_share < L->gain_need) {
        fprintf(stderr, "%s: depth-first, %d chunks: %.3f ms at its fastest against %.3f ms serial from pinned "
                        "memory and an ideal of %.3f ms: it won back %.0f%% of what overlapping could, the kit's "
                        "own pipeline %.0f%% (at least half of that needed): do the chunks' copies and kernels "
                        "run beside each other? (TODO(3))\n",
                kit_program, L->chunks[L->best], L->g_best, L->g_serial, L->g_ideal, 100.0 * L->gain_share,
                100.0 * L->kit_gain_share);
        L->run.pass = 0;
    } else if (L->gain_asked && !L->gain_judged && !L->platform_cannot_overlap && !kit_under_sanitizer() &&
               L->queues != 1) {
        if (!L->gain_runs)
            fprintf(stderr, "%s: note: the pipeline's time is not judged: too few timed runs (--reps 3 or more)\n",
                    kit_program);
        else if (L->gain_possible < MIN_GAIN_MS || L->gain_possible < MIN_GAIN_OF_SERIAL * L->g_serial ||
                 L->gain_possible < GAIN_OVER_PATH * L->path)
            fprintf(stderr, "%s: note: the pipeline's time is not judged: overlap could save only %.3f of the "
                            "%.3f ms serial here, too little for one run's clock to tell (--size larger)\n",
                    kit_program, L->gain_possible, L->g_serial);
        else
            fprintf(stderr, "%s: note: the pipeline's time is not judged: the kit's own pipeline of %d chunks "
                            "won back only %.0f%% of what overlapping could here (%.3f of %.3f ms)\n",
                    kit_program, L->chunks[L->best], 100.0 * L->kit_gain_share, L->g_serial - L->t_kit,
                    L->gain_possible);
    }
    if (L->kit_pipeline_wrong)
        L->run.pass = 0;
}

static void summary(lab *L)
{
    long long wrong = L->four_way_wrong + L->tl.wrong + L->tl_bf.wrong + L->kit_pipeline_wrong;
    for (int i = 0; i < L->nlines; i++)
        wrong += L->rows[i].wrong > 0 ? L->rows[i].wrong : 0;
    kit_kv("timeline-and-examples", "%s", L->brief ? "left out (--focus)" : "run");
    kit_kv("wrong-elements", "%lld", wrong);
    kit_kv("runs-returned-early", "%lld", early_total);
    if (L->best >= 0)
        kit_kv("summary", "pinned %.1fx pageable host to device; depth-first with %d chunks %.2fx over serial, "
                          "%.0f%% of its ideal; copies beside kernels %.0f%% of the kernel time",
               L->gbs[2] / L->gbs[0], L->chunks[L->best], L->speedup, 100.0 * L->of_ideal, 100.0 * L->share);
    else
        kit_kv("summary", "pinned %.1fx pageable host to device; no pipeline verified", L->gbs[2] / L->gbs[0]);
    kit_kv("course-k40", "a three-stream pipeline overlaps copies in, kernels and copies out (3-way "
                         "concurrency); with one queue two half-GPU kernels per stream take 3 units "
                         "depth-first, 2 breadth-first");
}

static void teardown(lab *L) { data_teardown(&L->d); }

static const kit_part parts[] = {
    {part1_measure, part1_print, NULL, part1_kv, NULL},
    {part2_measure, part2_print, part2_csv, part2_kv, part2_verdict},
    {part3_measure, part3_print, NULL, part3_kv, part3_verdict},
    {part4_measure, part4_print, NULL, part4_kv, part4_verdict},
    {part5_measure, part5_print, NULL, part5_kv, part5_verdict},
};

int main(int argc, char **argv)
{
    static lab L;
    kit_common *c = &L.run.c;
    kit_option opts[] = {
        {"--size", KIT_OPT_SIZE, &c->size, "N",
         "elements per array (default: 33554432, fewer where the GPU's memory is small)", KIT_MIN_SIZE,
         KIT_MAX_SIZE, NULL},
        {"--reps", KIT_OPT_INT, &c->reps, "R",
         "timed runs of each version (default: until the median is steady); the median is reported", 1, 1000,
         NULL},
        {"--seed", KIT_OPT_U64, &c->seed, "S", "random seed (default: a fresh one, printed)", 0, 0, &c->seed_given},
        KIT_FOCUS_OPTION,
        {"--csv", KIT_OPT_STRING, &c->csv, "FILE", "also write the table as CSV ('-': stdout)", 0, 0, NULL},
        {"--device", KIT_OPT_INT, &c->device, "D", "which GPU to use", 0, 63, NULL},
        {"--streams", KIT_OPT_INT, &L.only, "N",
         "chunks, each in its own stream: only N instead of 2, 3, 4, 8, 16 and 32", 1, MAX_CHUNKS, NULL},
        {"--kernel-work", KIT_OPT_STRING, &L.work_arg, "W",
         "extra hash steps per element: a count, or 'auto' (default) to make the kernel as long as "
         "the copies in; 0 is the course's plain kernel", 0, 0, NULL},
        {"--connections", KIT_OPT_INT, &L.connections, "C",
         "hardware queues (sets CUDA_DEVICE_MAX_CONNECTIONS; default 8; 1 is Fermi's single queue)", 1, 32,
         NULL},
        {"--timeline", KIT_OPT_STRING, &L.timeline_path, "FILE",
         "write the timelines as CSV (chunk, operation, stream, start and end in ms, and the version: "
         "depth-first and breadth-first)",
         0, 0, NULL},
    };
    const kit_lab lab05 = {
        "05-streams",
        "Lab 05: CUDA streams",
        "Lab 05: CUDA streams. The course's vector addition with streams: serial from\n"
        "pageable and from pinned memory, your pipeline depth-first and breadth-first\n"
        "against its ideal, a timeline of one run, and the course's scheduling examples.",
        opts, KIT_COUNT(opts), prepare, setup, NULL, NULL, summary, teardown, parts, KIT_COUNT(parts),
    };
    kit_run_defaults(&L.run);
    L.work_arg = "auto";
    return kit_lab_main(&lab05, &L, &L.run, argc, argv);
}
