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
 *      (4-way concurrency).
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
#include <time.h>

#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_pipeline.h"
#include "kit_report.h"
#include "kit_rng.h"
#include "kit_row.h"
#include "kit_timeline.h"
#include "kit_timing.h"

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

static const char *const PIPELINE_TODOS = "TODO(2), TODO(3) and TODO(5)";

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

static unsigned int *pinned(size_t bytes)
{
    void *p = NULL;
    KIT_CHECK(cudaMallocHost(&p, bytes));
    return (unsigned int *)p;
}

/* The job's host arrays: in grading, host memory of the judge's that the
 * worker maps (kit_judge.h); here, the kit's own. */
static unsigned int *job_host_array(size_t bytes)
{
#if KIT_TIME_BY_CLOCK
    return (unsigned int *)kit_judge_host_alloc(bytes);
#else
    return (unsigned int *)kit_host_alloc(bytes);
#endif
}

static void job_host_free(unsigned int *p)
{
#if KIT_TIME_BY_CLOCK
    kit_judge_host_free(p);
#else
    free(p);
#endif
}

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
    KIT_CHECK(cudaHostRegister(d->sA, d->bytes, cudaHostRegisterDefault));
    KIT_CHECK(cudaHostRegister(d->sB, d->bytes, cudaHostRegisterDefault));
    KIT_CHECK(cudaHostRegister(d->sC, d->bytes, cudaHostRegisterDefault));
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
    KIT_CHECK(cudaMalloc((void **)&d->dA, d->bytes));
    KIT_CHECK(cudaMalloc((void **)&d->dB, d->bytes));
    KIT_CHECK(cudaMalloc((void **)&d->dC, d->bytes));
    KIT_CHECK(cudaMalloc((void **)&d->eA, d->bytes));
    KIT_CHECK(cudaMalloc((void **)&d->eB, d->bytes));
    KIT_CHECK(cudaMalloc((void **)&d->dX, d->bytes));
    KIT_CHECK(cudaMalloc((void **)&d->dcheck, 4 * sizeof(unsigned long long)));
    /* The bandwidths copy C back before any kernel wrote it. */
    KIT_CHECK(cudaMemset(d->dC, 0, d->bytes));
    d->A = (unsigned int *)kit_host_alloc(d->bytes);
    d->B = (unsigned int *)kit_host_alloc(d->bytes);
    d->C = (unsigned int *)kit_host_alloc(d->bytes);
    d->kA = pinned(d->bytes);
    d->kB = pinned(d->bytes);
    d->kC = pinned(d->bytes);
    d->sA = job_host_array(d->bytes);
    d->sB = job_host_array(d->bytes);
    d->sC = job_host_array(d->bytes);
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
    if (!d->student_gone)
        remote->lab05_host_release(d->sA, d->sB, d->sC);
    if (d->s_pinned_here) {
        KIT_CHECK(cudaHostUnregister(d->sA));
        KIT_CHECK(cudaHostUnregister(d->sB));
        KIT_CHECK(cudaHostUnregister(d->sC));
    }
    job_host_free(d->sA);
    job_host_free(d->sB);
    job_host_free(d->sC);
    KIT_CHECK(cudaFree(d->dA));
    KIT_CHECK(cudaFree(d->dB));
    KIT_CHECK(cudaFree(d->dC));
    KIT_CHECK(cudaFree(d->eA));
    KIT_CHECK(cudaFree(d->eB));
    KIT_CHECK(cudaFree(d->dX));
    KIT_CHECK(cudaFree(d->dcheck));
    free(d->A);
    free(d->B);
    free(d->C);
    KIT_CHECK(cudaFreeHost(d->kA));
    KIT_CHECK(cudaFreeHost(d->kB));
    KIT_CHECK(cudaFreeHost(d->kC));
}

/* ---- every run's inputs, and the check of every run ----------------------------- */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

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

/* The host arrays this version reads and fills. */
static unsigned int *input_a(const run_t *r)
{
    return r->v == SERIAL_PAGEABLE ? r->d->A : r->v == SERIAL_PINNED ? r->d->kA : r->d->sA;
}
static unsigned int *input_b(const run_t *r)
{
    return r->v == SERIAL_PAGEABLE ? r->d->B : r->v == SERIAL_PINNED ? r->d->kB : r->d->sB;
}
static unsigned int *output_of(const run_t *r)
{
    return r->v == SERIAL_PAGEABLE ? r->d->C : r->v == SERIAL_PINNED ? r->d->kC : r->d->sC;
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
    case SERIAL_PAGEABLE: serial(d, d->A, d->B, d->C); return;
    case SERIAL_PINNED: serial(d, d->kA, d->kB, d->kC); return;
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
    fresh_run(r->d, input_a(r), input_b(r), output_of(r));
}

/* Elements of C wrong after the last run; the first wrong run is described. */
static long long check_run(run_t *r)
{
    long long bad = check_output(r->d, output_of(r), r->told ? NULL : r->name);
    if (bad)
        r->told = 1;
    return bad;
}

static long long verify(void *p, const kit_row *row) { (void)row; return check_run((run_t *)p); }
static long long compare(void *p) { return check_run((run_t *)p); }

/* Measures a row; returns how many of its runs returned early. */
static long long measure(run_t *r, kit_row *row, const kit_policy *policy)
{
    kit_row_work w = {r, NULL, run_once, poison, verify, NULL, compare, NULL, NULL, NULL};
    r->name = row->name;
    r->early = 0;
    r->told = 0;
    nvtxRangePushA(row->name);
    kit_row_measure(row, &w, policy);
    nvtxRangePop();
    return r->early;
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

enum part { H2D_PAGEABLE, D2H_PAGEABLE, H2D_PINNED, D2H_PINNED, KERNEL };

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
    }
}

static double time_part(data_t *d, enum part what, const kit_policy *policy)
{
    part_t x = {d, what};
    kit_work w = {NULL, run_part, NULL, &x, 0.0f, 0};
    run_part(&x); /* warm-up */
    KIT_CHECK(cudaDeviceSynchronize());
    return kit_measure(&w, policy).median_ms;
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

/* The kit's own depth-first pipeline of nchunks chunks (kit_issue_chunk,
 * its own streams, the job's host and device arrays), timed as the
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
    data_t *d = k->d;
    for (int i = 0; i < k->nchunks; i++) {
        unsigned int first, count;
        kit_chunk(d->n, k->nchunks, i, &first, &count);
        kit_issue_chunk(d->sA, d->sB, d->sC, d->dA, d->dB, d->dC, first, count, k->s[i], &kit_vector_knobs_now);
    }
    for (int i = 0; i < k->nchunks; i++)
        KIT_CHECK(cudaStreamSynchronize(k->s[i]));
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

/* The kit's serial version from pinned memory, timed for the verdict by
 * the clock: its fastest run. */
static void kit_serial_run(void *p)
{
    data_t *d = (data_t *)p;
    serial(d, d->kA, d->kB, d->kC);
}

static double kit_serial_ms(data_t *d, const kit_policy *policy)
{
    kit_work w = {NULL, kit_serial_run, NULL, d, 0.0f, 0};
    kit_serial_run(d); /* warm-up */
    KIT_CHECK(cudaDeviceSynchronize());
    return kit_measure(&w, policy).min_ms;
}

/* What the judge's own path costs: a call that does nothing, timed as a
 * run is (a round trip to the student's process and a wait for the GPU;
 * next to nothing in the lab's own program). */
static double path_ms(void)
{
    double v[9];
    for (int i = 0; i < 9; i++) {
        double t0;
        KIT_CHECK(cudaDeviceSynchronize());
        t0 = kit_wall_ms();
        remote->lab05_nothing();
        KIT_CHECK(cudaDeviceSynchronize());
        v[i] = kit_wall_ms() - t0;
    }
    qsort(v, 9, sizeof v[0], cmp_double);
    return v[4];
}

/* ---- the timeline of one traced run -------------------------------------------- */

typedef struct {
    int done;           /* a traced run happened */
    int nchunks;
    long long wrong;
    kit_span *spans;
    int nspans;
    int launches;       /* kernel launches seen */
    double mean_kernel_ms;
    kit_overlap raw;    /* as measured */
    kit_overlap judged; /* kernels narrowed by the clocks' uncertainty */
    double uncertainty_ms;
    long long missed;   /* copies not recorded */
} timeline_t;

/* The traced out of the student's process: large, so one, kept. */
static struct lab05_trace_out trace_out;

/*
 * Whether a traced run's record is one the kit's side can have made: counts
 * in range, every operation one the kit names, times finite.
 * In grading it comes from the student's process, which could send
 * anything; one that is not such a record fails the lab.
 */
static int trace_sane(const struct lab05_trace_out *o)
{
    if (o->ncalls < 0 || o->ncalls > LAB05_MAX_CALLS || o->nspans < 0 || o->nspans > LAB05_MAX_SPANS ||
        o->launches < 0 || o->missed < 0 || !isfinite(o->uncertainty_ms) || o->uncertainty_ms < 0 ||
        !isfinite(o->mean_kernel_ms))
        return 0;
    for (int i = 0; i < o->ncalls; i++)
        if (o->calls[i].op < 0 || o->calls[i].op >= KIT_NOPS || o->calls[i].after < -1 || o->calls[i].after > i)
            return 0;
    for (int i = 0; i < o->nspans; i++) {
        const kit_span *x = &o->spans[i];
        if (x->op < 0 || x->op >= KIT_NOPS || !isfinite(x->start) || !isfinite(x->end))
            return 0;
    }
    return 1;
}

static void trace_broken(void)
{
    fprintf(stderr, "%s: the traced run's record from the student's process is not one the kit makes "
                    "(counts out of range, an unknown operation, a time that is not a number): graded as failed\n",
            kit_program);
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
    r->v = v;
    r->traced = 1;
    r->name = v == DEPTH_FIRST ? "the traced run" : "the traced breadth-first run";
    r->early = 0;
    r->told = 0;
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
        trace_broken();
        tl->wrong += 1;
        memset(o, 0, sizeof *o);
    }

    tl->nspans = o->nspans;
    tl->spans = (kit_span *)kit_host_alloc(sizeof(kit_span) * (size_t)(tl->nspans + 1));
    memcpy(tl->spans, o->spans, sizeof(kit_span) * (size_t)tl->nspans);
    tl->missed = o->missed;
    tl->launches = o->launches;
    tl->mean_kernel_ms = o->mean_kernel_ms;
    tl->uncertainty_ms = o->uncertainty_ms;
    tl->raw = kit_overlap_of(tl->spans, tl->nspans, 0.0);
    tl->judged = kit_overlap_of(tl->spans, tl->nspans, tl->uncertainty_ms);
    tl->done = 1;

    KIT_CHECK(cudaFree(dspans));
    close_job(r);
    r->traced = 0;
}

/* What copies could cover of the kernels' time in the traced run's depth-first
 * pipeline (kit_timeline.h), its kernels narrowed as in tl->judged. */
static double overlap_possible(const timeline_t *tl)
{
    return kit_overlap_possible(tl->spans, tl->nspans, tl->nchunks, tl->uncertainty_ms);
}

/* Writes tl's operations as rows of --timeline's CSV: each chunk numbered in
 * the order of its records, times from the run's first operation. */
static void write_timeline(FILE *f, const timeline_t *tl, const char *order)
{
    long long *rows = (long long *)kit_host_alloc(sizeof(long long) * (size_t)(tl->nspans + 1));
    int nrows = 0;
    for (int i = 0; i < tl->nspans; i++) {
        int seen = 0;
        for (int j = 0; j < nrows; j++)
            seen |= rows[j] == tl->spans[i].row;
        if (!seen)
            rows[nrows++] = tl->spans[i].row;
    }
    qsort(rows, (size_t)nrows, sizeof *rows, kit_cmp_ll);
    for (int i = 0; i < tl->nspans; i++) {
        int chunk = 0;
        while (rows[chunk] != tl->spans[i].row)
            chunk++;
        fprintf(f, "%d,%s,%d,%.6f,%.6f,\"%s, %d chunks\"\n", chunk, kit_op_name[tl->spans[i].op],
                tl->spans[i].stream, tl->spans[i].start - tl->raw.first_ms, tl->spans[i].end - tl->raw.first_ms,
                order, tl->nchunks);
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
    r->v = v;
    r->name = v == DEPTH_FIRST ? "depth-first (traced)" : "breadth-first (traced)";
    r->early = 0;
    r->told = 0;
    poison(r);
    remote->lab05_trace(d->sA, d->sB, d->sC, d->dA, d->dB, d->dC, d->n, nchunks,
                        v == DEPTH_FIRST ? LAB05_DEPTH_FIRST : LAB05_BREADTH_FIRST, kit_vector_knobs_now.work, NULL,
                        0, ct);
    note_early(r, ct->early);
    if (!trace_sane(ct)) {
        trace_broken();
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
    const char *label;
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

/* The kernels of one order, one row per stream, 12 columns per unit. */
static void print_kernel_rows(const kspec *k, int nk, const korder *o)
{
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

typedef struct {
    korder equal[2];   /* two streams, two 1-unit kernels each */
    korder unequal[3]; /* 2 + 1 units and 1 + 2 units */
    double copy_unit_ms;
    double copy_units[2];       /* stream 1 first; the copy out of stream 2 first */
    double four_way_ms[3];      /* the pipeline alone, after the host's work, between it */
    double host_work_ms;        /* per chunk */
    long long four_way_wrong;
} experiments_t;

static const kspec equal_kernels[4] = {{"Ka1", 0, 1}, {"Kb1", 0, 1}, {"Ka2", 1, 1}, {"Kb2", 1, 1}};
static const kspec unequal_kernels[4] = {{"Ka1", 0, 2}, {"Kb1", 0, 1}, {"Ka2", 1, 1}, {"Kb2", 1, 2}};

static double ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* The host's own share of the work, a stand-in: one core busy for ms. */
static void host_work(double ms, int chunk)
{
    struct timespec t0;
    char name[32];
    snprintf(name, sizeof name, "host work, chunk %d", chunk);
    nvtxRangePushA(name);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (ms_since(&t0) < ms) {
    }
    nvtxRangePop();
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
    struct timespec t0;
    double total;

    fresh_run(d, d->kA, d->kB, d->kC);
    nvtxRangePushA(names[mode]);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; mode == 1 && i < FOUR_WAY_CHUNKS; i++)
        host_work(work_ms, i);
    for (int i = 0; i < FOUR_WAY_CHUNKS; i++) {
        unsigned int first, count;
        if (mode == 2)
            host_work(work_ms, i);
        kit_chunk(d->n, FOUR_WAY_CHUNKS, i, &first, &count);
        kit_issue_chunk(d->kA, d->kB, d->kC, d->dA, d->dB, d->dC, first, count, s[i], &kit_vector_knobs_now);
    }
    for (int i = 0; i < FOUR_WAY_CHUNKS; i++)
        KIT_CHECK(cudaStreamSynchronize(s[i]));
    total = ms_since(&t0);
    nvtxRangePop();
    *wrong += check_output(d, d->kC, names[mode]);
    return total;
}

static void run_experiments(data_t *d, const kit_device *dev, double kernel_ms, experiments_t *x)
{
    cudaStream_t s[FOUR_WAY_CHUNKS];
    unsigned long long *dspan;
    unsigned int *dev_buf, *host_buf;
    korder eq[2] = {{"depth-first: Ka1 Kb1 Ka2 Kb2", {0, 1, 2, 3}, 3, 0, {0}, {0}},
                    {"breadth-first: Ka1 Ka2 Kb1 Kb2", {0, 2, 1, 3}, 2, 0, {0}, {0}}};
    korder un[3] = {{"depth-first: Ka1 Kb1 Ka2 Kb2", {0, 1, 2, 3}, 5, 0, {0}, {0}},
                    {"breadth-first: Ka1 Ka2 Kb1 Kb2", {0, 2, 1, 3}, 4, 0, {0}, {0}},
                    {"the course's: Ka1 Ka2 Kb2 Kb1", {0, 2, 3, 1}, 3, 0, {0}, {0}}};
    double v[EXPERIMENT_REPS];

    memset(x, 0, sizeof *x);
    for (int i = 0; i < FOUR_WAY_CHUNKS; i++) {
        KIT_CHECK(cudaStreamCreate(&s[i]));
        {
            char name[32];
            snprintf(name, sizeof name, "kit stream %d", i + 1);
            nvtxNameCudaStreamA(s[i], name);
        }
    }
    KIT_CHECK(cudaMalloc((void **)&dspan, 2 * MAX_KERNELS * sizeof *dspan));
    nvtxRangePushA("two kernels per stream, each half the GPU");
    kernel_orders(equal_kernels, 4, eq, 2, s, dev, dspan);
    kernel_orders(unequal_kernels, 4, un, 3, s, dev, dspan);
    nvtxRangePop();
    memcpy(x->equal, eq, sizeof eq);
    memcpy(x->unequal, un, sizeof un);

    /* The copy queue: units of one copy's time. */
    KIT_CHECK(cudaMalloc((void **)&dev_buf, 4 * (size_t)EXPERIMENT_COPY_BYTES));
    KIT_CHECK(cudaMemset(dev_buf, 0, 4 * (size_t)EXPERIMENT_COPY_BYTES)); /* copied out: initcheck */
    KIT_CHECK(cudaMallocHost((void **)&host_buf, 4 * (size_t)EXPERIMENT_COPY_BYTES));
    memset(host_buf, 0, 4 * (size_t)EXPERIMENT_COPY_BYTES);
    for (int rep = 0; rep < EXPERIMENT_REPS; rep++)
        v[rep] = copy_queue(-1, s, dev_buf, host_buf, 0, dspan);
    x->copy_unit_ms = median_of_reps(v);
    nvtxRangePushA("a copy out behind another stream's");
    for (int order = 0; order < 2; order++) {
        for (int rep = 0; rep < EXPERIMENT_REPS; rep++)
            v[rep] = copy_queue(order, s, dev_buf, host_buf, x->copy_unit_ms, dspan);
        x->copy_units[order] = median_of_reps(v) / x->copy_unit_ms;
    }
    nvtxRangePop();
    KIT_CHECK(cudaFree(dev_buf));
    KIT_CHECK(cudaFreeHost(host_buf));

    /* 4-way: the host works on each chunk as long as the GPU's kernel does. */
    x->host_work_ms = kernel_ms / FOUR_WAY_CHUNKS;
    for (int mode = 0; mode < 3; mode++) {
        for (int rep = 0; rep < EXPERIMENT_REPS; rep++)
            v[rep] = four_way(d, s, mode, x->host_work_ms, &x->four_way_wrong);
        x->four_way_ms[mode] = median_of_reps(v);
    }

    KIT_CHECK(cudaFree(dspan));
    for (int i = 0; i < FOUR_WAY_CHUNKS; i++)
        KIT_CHECK(cudaStreamDestroy(s[i]));
}

/* ---- the report ------------------------------------------------------------------ */

/* A line of the table: a row, and what it is compared with. */
typedef struct {
    const kit_row *row;
    long long early;         /* runs that returned before their streams were done */
    int chunks;              /* 1: serial */
    unsigned long long work; /* the kernel's */
    double serial_ms;        /* the serial version from pinned memory, same kernel (0: none) */
    double ideal_ms;         /* 0: none */
} line_t;

static const char *check_word(const line_t *l)
{
    return l->row->wrong || l->row->t.bad_runs ? "WRONG" : l->early ? "NO WAIT" : "ok";
}

static void print_line(const line_t *l)
{
    const kit_row *r = l->row;
    printf("%-32s", r->name);
    if (r->timed && l->serial_ms > 0)
        printf(" %10.3f %9.2fx", r->t.median_ms, l->serial_ms / r->t.median_ms);
    else if (r->timed)
        printf(" %10.3f %10s", r->t.median_ms, "-");
    else
        printf(" %10s %10s", "-", "-");
    if (r->timed && l->ideal_ms > 0)
        printf(" %8.0f%%", 100.0 * l->ideal_ms / r->t.median_ms);
    else
        printf(" %9s", "");
    printf("  %s\n", check_word(l));
}

static void csv_line(FILE *f, const kit_device *dev, unsigned int n, unsigned long long seed, const line_t *l)
{
    const kit_row *r = l->row;
    kit_csv_prefix(f, dev, n, seed);
    fprintf(f, "\"%s\",%d,%llu,%.6f,%.6f,%d\n", r->name, l->chunks, l->work, r->timed ? r->t.median_ms : 0.0,
            l->ideal_ms, r->wrong == 0 && r->t.bad_runs == 0 && l->early == 0);
}

static void print_experiments(const experiments_t *x, int connections)
{
    printf("The course's scheduling examples (the kit's own code), %d hardware queue%s; the course's\n"
           "figures are for Fermi, with one queue for kernels (--connections 1 to compare):\n\n",
           connections, connections == 1 ? "" : "s");
    printf("%-54s %12s %10s\n", "", "course", "this GPU");
    printf("two streams, two kernels each, every kernel half the GPU for 1 unit (%.1f ms):\n",
           EXPERIMENT_UNIT_NS / 1e6);
    for (int i = 0; i < 2; i++) {
        printf("  %-52s %6d units %10.2f\n", x->equal[i].label, x->equal[i].course_units, x->equal[i].units);
        print_kernel_rows(equal_kernels, 4, &x->equal[i]);
    }
    printf("the same with Ka1 and Kb2 2 units long, Kb1 and Ka2 1 unit:\n");
    for (int i = 0; i < 3; i++) {
        printf("  %-52s %6d units %10.2f\n", x->unequal[i].label, x->unequal[i].course_units,
               x->unequal[i].units);
        print_kernel_rows(unequal_kernels, 4, &x->unequal[i]);
    }
    printf("stream 1: HDa1 HDb1 K1 DH1, stream 2: DH2; 1 unit = one %u MiB copy (%.3f ms):\n",
           EXPERIMENT_COPY_BYTES >> 20, x->copy_unit_ms);
    printf("  %-52s %6d units %10.2f\n", "stream 1 issued first, then DH2", 5, x->copy_units[0]);
    printf("  %-52s %6d units %10.2f\n", "DH2 issued first", 4, x->copy_units[1]);
    printf("the host prepares each chunk (%d chunks, %.3f ms of host work each) for the pipeline:\n",
           FOUR_WAY_CHUNKS, x->host_work_ms);
    printf("  %-52s %12s %10.3f ms\n", "the pipeline alone (3-way)", "", x->four_way_ms[0]);
    printf("  %-52s %12s %10.3f ms\n", "the host's work, then the pipeline", "", x->four_way_ms[1]);
    printf("  %-52s %12s %10.3f ms\n", "the host's work between the asynchronous calls (4-way)", "",
           x->four_way_ms[2]);
    printf("\n");
}

static double ideal_of(const double part[3], int nchunks, int engines)
{
    return kit_pipeline_ideal_ms(part[0], part[1], part[2], nchunks, engines);
}

int main(int argc, char **argv)
{
    kit_common c;
    kit_device dev;
    long long kit_pipeline_wrong = 0;
    int only = 0, connections = 0, sweep[] = {2, 3, 4, 8, 16, 32}, nsweep = 0, chunks[KIT_COUNT(sweep)];
    const char *work_arg = "auto", *timeline_path = NULL;
    kit_option opts[] = {
        {"--size", KIT_OPT_SIZE, &c.size, "N",
         "elements per array (default: 33554432, fewer where the GPU's memory is small)", KIT_MIN_SIZE,
         KIT_MAX_SIZE, NULL},
        {"--reps", KIT_OPT_INT, &c.reps, "R",
         "timed runs of each version (default: until the median is steady); the median is reported", 1, 1000,
         NULL},
        {"--seed", KIT_OPT_U64, &c.seed, "S", "random seed (default: a fresh one, printed)", 0, 0, &c.seed_given},
        KIT_FOCUS_OPTION,
        {"--csv", KIT_OPT_STRING, &c.csv, "FILE", "also write the table as CSV ('-': stdout)", 0, 0, NULL},
        {"--device", KIT_OPT_INT, &c.device, "D", "which GPU to use", 0, 63, NULL},
        {"--streams", KIT_OPT_INT, &only, "N",
         "chunks, each in its own stream: only N instead of 2, 3, 4, 8, 16 and 32", 1, MAX_CHUNKS, NULL},
        {"--kernel-work", KIT_OPT_STRING, &work_arg, "W",
         "extra hash steps per element: a count, or 'auto' (default) to make the kernel as long as "
         "the copies in; 0 is the course's plain kernel", 0, 0, NULL},
        {"--connections", KIT_OPT_INT, &connections, "C",
         "hardware queues (sets CUDA_DEVICE_MAX_CONNECTIONS; default 8; 1 is Fermi's single queue)", 1, 32,
         NULL},
        {"--timeline", KIT_OPT_STRING, &timeline_path, "FILE",
         "write the timelines as CSV (chunk, operation, stream, start and end in ms, and the version: "
         "depth-first and breadth-first)",
         0, 0, NULL},
    };
    unsigned long long work = 0;
    int auto_work = 0, pass = 1, alloc_ok, streams_ok = 1, best = -1, best_focused = 0, queues, plain_rows = 0;
    data_t d;
    run_t r;
    kit_policy policy;
    kit_row serial_rows[2], df[KIT_COUNT(sweep)], bf[KIT_COUNT(sweep)], plain[2];
    long long df_early[KIT_COUNT(sweep)], bf_early[KIT_COUNT(sweep)], plain_early = 0;
    double part[3], part_plain_kernel, bw[4], ideal[KIT_COUNT(sweep)];
    timeline_t tl, tl_bf; /* the traced runs: depth-first (judged), breadth-first (--timeline) */
    issue_order_t order[2];
    int order_chunks = 0;
    experiments_t x;
    int brief;
    unsigned int n;
    const char *env;
    FILE *csv;

    kit_common_defaults(&c);
    c.reps = 0;
    kit_parse_args(argc, argv,
                   "Lab 05: CUDA streams. The course's vector addition with streams: serial from\n"
                   "pageable and from pinned memory, your pipeline depth-first and breadth-first\n"
                   "against its ideal, a timeline of one run, and the course's scheduling examples.",
                   opts, KIT_COUNT(opts));
    if (strcmp(work_arg, "auto") == 0)
        auto_work = 1;
    else if (kit_parse_u64(work_arg, &work) != 0 || work > MAX_WORK)
        kit_die(KIT_EXIT_USAGE, "--kernel-work '%s': expected 'auto' or a count from 0 to %d", work_arg, MAX_WORK);
    if (c.size && only && (unsigned long long)only > c.size)
        kit_die(KIT_EXIT_USAGE, "--streams %d: more chunks than the %llu elements", only, c.size);
    if (timeline_path && strcmp(timeline_path, "-") == 0)
        kit_die(KIT_EXIT_USAGE, "--timeline: name a file (stdout holds the report)");
    kit_csv_check(c.csv);
    kit_output_check("--timeline", timeline_path);
    /* The driver reads it once, when the context is made: before any CUDA call. */
    if (connections) {
        char v[16];
        snprintf(v, sizeof v, "%d", connections);
        setenv("CUDA_DEVICE_MAX_CONNECTIONS", v, 1);
    }
    env = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    queues = env && atoi(env) > 0 ? atoi(env) : 8;
    kit_choose_seed(&c);
    kit_device_open(c.device, &dev);

    /* Six arrays (the job's three, the drawn inputs, C copied back) and the
     * traced run's block record (24 bytes per 32 elements). */
    n = c.size ? (unsigned int)c.size : DEFAULT_SIZE;
    if (!c.size)
        while (n > (1u << 20) && (long long)n * DEVICE_BYTES_PER_ELEMENT > dev.free_bytes / 2)
            n /= 2;
    if (!c.size) {
        /* Pinned: the kit's three arrays, the job's three, one of alloc_host's
         * while it is looked at, the copy-queue buffer. */
        int capped;
        n = (unsigned int)kit_pinned_default_size(n, 1u << 20, 7 * sizeof(unsigned int),
                                                  4 * (size_t)EXPERIMENT_COPY_BYTES, &capped);
        if (capped)
            kit_pinned_capped_note(n, 7.0 * sizeof(unsigned int) * n + 4.0 * EXPERIMENT_COPY_BYTES);
    }
    if ((long long)n * DEVICE_BYTES_PER_ELEMENT + (96ll << 20) > dev.free_bytes)
        kit_die(KIT_EXIT_USAGE, "--size %u needs %.0f MiB of GPU memory, %s has %.0f MiB free; choose a smaller --size",
                n, ((double)n * DEVICE_BYTES_PER_ELEMENT + (96 << 20)) / 1048576, dev.name,
                dev.free_bytes / 1048576.0);
    for (int i = 0; i < KIT_COUNT(sweep); i++)
        if ((only == 0 || sweep[i] == only) && (unsigned int)sweep[i] <= n)
            chunks[nsweep++] = sweep[i];
    if (only && nsweep == 0)
        chunks[nsweep++] = only;
    policy = kit_policy_default(c.reps);
    policy.max_ms = 150.0; /* each run also costs a check of every element on the host */
    policy.max_reps = 30;
    policy.noise = 0.03;

    data_setup(&d, n, c.seed);
    alloc_ok = student_arrays(&d);
    memset(&r, 0, sizeof r);
    r.d = &d;

    /* 1. The parts alone, and the kernel's work. */
    nvtxRangePushA("the parts");
    kit_vector_knobs_now.work = 0;
    bw[0] = time_part(&d, H2D_PAGEABLE, &policy);
    bw[1] = time_part(&d, D2H_PAGEABLE, &policy);
    bw[2] = time_part(&d, H2D_PINNED, &policy);
    bw[3] = time_part(&d, D2H_PINNED, &policy);
    part_plain_kernel = time_part(&d, KERNEL, &policy);
    part[0] = 2 * bw[2]; /* A and B */
    part[2] = bw[3];
    if (auto_work)
        work = (unsigned long long)calibrate_work(&d, part[0]);
    kit_vector_knobs_now.work = (int)work;
    part[1] = work ? time_part(&d, KERNEL, &policy) : part_plain_kernel;
    nvtxRangePop();

    /* 1. The serial versions. Under --focus on a depth-first row (the
     * grader's timed runs) the serial from pinned memory is timed in full
     * as well (the verdict by the clock asks it for enough runs; the serial
     * it compares with is timed again at the end, the student's process
     * gone: student_done). */
    if (kit_focus && strncmp(kit_focus, "depth-first-", 12) == 0)
        kit_focus_also = "serial-pinned";
    r.v = SERIAL_PAGEABLE;
    kit_row_name(&serial_rows[0], "serial-pageable", NULL, "serial, pageable memory");
    measure(&r, &serial_rows[0], &policy);
    r.v = SERIAL_PINNED;
    kit_row_name(&serial_rows[1], "serial-pinned", NULL, "serial, pinned memory");
    measure(&r, &serial_rows[1], &policy);

    /* 2. The student's pipeline, both orders, every N. */
    for (int i = 0; i < nsweep; i++) {
        char key[32];
        streams_ok &= open_job(&r, chunks[i]);
        r.v = DEPTH_FIRST;
        snprintf(key, sizeof key, "depth-first-%d", chunks[i]);
        kit_row_name(&df[i], key, PIPELINE_TODOS, "depth-first, %d chunks", chunks[i]);
        df_early[i] = measure(&r, &df[i], &policy);
        int focused = kit_focus && strcmp(kit_focus, key) == 0;
        r.v = BREADTH_FIRST;
        snprintf(key, sizeof key, "breadth-first-%d", chunks[i]);
        kit_row_name(&bf[i], key, PIPELINE_TODOS, "breadth-first, %d chunks", chunks[i]);
        bf_early[i] = measure(&r, &bf[i], &policy);
        close_job(&r);
        ideal[i] = ideal_of(part, chunks[i], dev.copy_engines);
        /* The fastest verified one; under --focus the focused one, the
         * only one timed until steady. */
        if (df[i].timed && df[i].t.bad_runs == 0 && df[i].wrong == 0 && !best_focused &&
            (best < 0 || focused || df[i].t.median_ms < df[best].t.median_ms)) {
            best = i;
            best_focused = focused;
        }
    }

    /* 2. The course's plain kernel: serial and the best N, depth-first. */
    if (work && best >= 0) {
        char key[32];
        kit_vector_knobs_now.work = 0;
        r.v = SERIAL_PINNED;
        kit_row_name(&plain[0], "plain-serial-pinned", NULL, "serial, pinned memory");
        measure(&r, &plain[0], &policy);
        open_job(&r, chunks[best]);
        r.v = DEPTH_FIRST;
        snprintf(key, sizeof key, "plain-depth-first-%d", chunks[best]);
        kit_row_name(&plain[1], key, PIPELINE_TODOS, "depth-first, %d chunks", chunks[best]);
        plain_early = measure(&r, &plain[1], &policy);
        close_job(&r);
        kit_vector_knobs_now.work = (int)work;
        plain_rows = 2;
    }

    /*
     * 3. The timeline of the fastest depth-first pipeline, and 4. the
     * course's scheduling examples; both left out under --focus (the
     * grader's timed runs: its checked runs had them) unless --timeline
     * asks for the timeline.
     */
    brief = kit_focus != NULL && timeline_path == NULL;
    memset(&tl, 0, sizeof tl);
    memset(&tl_bf, 0, sizeof tl_bf);
    memset(&x, 0, sizeof x);
    memset(order, 0, sizeof order);
    if (best >= 0 && !brief) {
        traced_run(&r, chunks[best], DEPTH_FIRST, &tl);
        /* The same chunks issued breadth-first, for the picture beside it. */
        if (timeline_path)
            traced_run(&r, chunks[best], BREADTH_FIRST, &tl_bf);
        /* The order each pipeline issued its copies, at the best N (4 if
         * that is one chunk: one chunk has no order). */
        order_chunks = chunks[best] >= 2 ? chunks[best] : 4;
        order[0] = issue_order(&r, order_chunks, DEPTH_FIRST);
        order[1] = issue_order(&r, order_chunks, BREADTH_FIRST);
    }
    if (!brief) {
        nvtxRangePushA("the course's scheduling examples");
        run_experiments(&d, &dev, part[1], &x);
        nvtxRangePop();
    }

    /* ---- the table for people ---- */
    double t_serial = serial_rows[1].timed ? serial_rows[1].t.median_ms : 0.0;
    double t_best = best >= 0 ? df[best].t.median_ms : 0.0;
    double gbs[4];
    double share = tl.done && tl.judged.kernel_ms > 0 ? tl.judged.copy_kernel_ms / tl.judged.kernel_ms : 0.0;
    double possible = tl.done ? overlap_possible(&tl) : 1.0;
    double need = fmin(MIN_COPY_KERNEL_OVERLAP, MIN_SHARE_OF_POSSIBLE * possible);
    int judged = tl.done && tl.nchunks >= 2 && queues != 1 && dev.copy_engines >= 1 && tl.launches > 0 &&
                 tl.mean_kernel_ms >= JUDGE_KERNEL_OVER_UNCERTAINTY * tl.uncertainty_ms;
    /*
     * The kit's own pipeline (the 3-way example: 4 chunks, depth-first)
     * against its three parts in turn. On WSL 2, where Windows schedules
     * the GPU's work, the student's overlap is judged only where the kit's
     * own pipeline overlapped here: a machine that cannot overlap fails no
     * one for it.
     */
    double kit_parts_ms = part[0] + part[1] + part[2];
    double kit_pipeline_share = kit_parts_ms > 0 ? x.four_way_ms[0] / kit_parts_ms : 0.0;
    int platform_cannot_overlap = kit_on_wsl2() && kit_pipeline_share >= KIT_OWN_PIPELINE_MAX_SHARE;
    if (platform_cannot_overlap || kit_under_sanitizer())
        judged = 0;
    /*
     * The overlap by the clock that times the runs (in grading, the
     * judge's): the fastest depth-first pipeline must win back at least
     * MIN_SHARE_OF_GAIN of what its chunks could gain over serial from
     * pinned memory (serial less the ideal). The judge's own path (a round
     * trip to the student's process, path_ms) is taken off the pipeline's
     * time. Judged where the gain possible is large against the serial
     * time and against that path; the traced timeline above is the
     * student's picture of it, and can fail the lab too.
     */
    int gain_asked = best >= 0 && chunks[best] >= 2;
    double g_best = best >= 0 ? df[best].t.min_ms : 0.0;
    double path = gain_asked ? fmin(path_ms(), PATH_MAX_SHARE * g_best) : 0.0;
    /* What the student's pipeline is judged against, timed with the
     * student's process gone (student_done): the serial from pinned
     * memory, the parts (the ideal) and the kit's own pipeline. */
    student_done(&d);
    double g_serial = 0.0, g_ideal = 0.0, t_kit = 0.0;
    if (gain_asked) {
        double bar[3];
        int w = kit_vector_knobs_now.work;
        kit_vector_knobs_now.work = 0;
        bar[0] = 2 * time_part(&d, H2D_PINNED, &policy);
        bar[2] = time_part(&d, D2H_PINNED, &policy);
        kit_vector_knobs_now.work = w;
        bar[1] = time_part(&d, KERNEL, &policy);
        g_ideal = ideal_of(bar, chunks[best], dev.copy_engines);
        g_serial = kit_serial_ms(&d, &policy);
        t_kit = kit_pipeline_ms(&d, chunks[best], &policy, &kit_pipeline_wrong);
    }
    /* Times to judge by: the fastest of several runs each (one run tells
     * nothing; what anything else adds to a run cannot lower the fastest). */
    int gain_runs = gain_asked && df[best].t.reps >= MIN_GAIN_REPS && serial_rows[1].t.reps >= MIN_GAIN_REPS;
    double g_best_net = g_best - path > 0 ? g_best - path : 0.0;
    double gain_possible = best >= 0 ? g_serial - g_ideal : 0.0;
    double gain_share = gain_possible > 0 ? (g_serial - g_best_net) / gain_possible : 0.0;
    double kit_gain_share = gain_possible > 0 ? (g_serial - t_kit) / gain_possible : 0.0;
    double gain_need = MIN_SHARE_OF_GAIN * kit_gain_share;
    int gain_judged = gain_asked && queues != 1 && dev.copy_engines >= 1 && !platform_cannot_overlap &&
                      !kit_under_sanitizer() && gain_possible >= MIN_GAIN_OF_SERIAL * g_serial &&
                      gain_possible >= GAIN_OVER_PATH * path && gain_possible >= MIN_GAIN_MS &&
                      kit_gain_share >= MIN_KIT_GAIN_SHARE && gain_runs;
    for (int i = 0; i < 4; i++)
        gbs[i] = d.bytes / (bw[i] * 1e6);

    /* Every line of the table, in order: serial, depth-first, breadth-first, plain kernel. */
    line_t lines[2 + 2 * KIT_COUNT(sweep) + 2];
    int nlines = 0, first_plain;
    {
        double plain_part[3] = {part[0], part_plain_kernel, part[2]};
        double t_plain = plain_rows && plain[0].timed ? plain[0].t.median_ms : 0.0;
        line_t l0 = {&serial_rows[0], 0, 1, work, t_serial, 0.0};
        line_t l1 = {&serial_rows[1], 0, 1, work, t_serial, ideal_of(part, 1, 0)};
        lines[nlines++] = l0;
        lines[nlines++] = l1;
        for (int o = 0; o < 2; o++)
            for (int i = 0; i < nsweep; i++) {
                line_t l = {o ? &bf[i] : &df[i], o ? bf_early[i] : df_early[i], chunks[i], work, t_serial, ideal[i]};
                lines[nlines++] = l;
            }
        first_plain = nlines;
        for (int i = 0; i < plain_rows; i++) {
            int k = i ? chunks[best] : 1;
            line_t l = {&plain[i], i ? plain_early : 0, k, 0, t_plain,
                        ideal_of(plain_part, k, k == 1 ? 0 : dev.copy_engines)};
            lines[nlines++] = l;
        }
    }

    csv = kit_csv_open(c.csv);
    if (csv != stdout) {
        kit_banner("Lab 05: CUDA streams", &dev);
        printf("3 x %s 32-bit integers (%.0f MiB each), seed %llu; %d copy engine%s, %d hardware queue%s\n",
               kit_grouped(n), d.bytes / 1048576.0, c.seed, dev.copy_engines, dev.copy_engines == 1 ? "" : "s",
               queues, queues == 1 ? "" : "s");
        printf("the kernel: %s extra steps per element%s\n\n", kit_grouped(work),
               auto_work ? " (--kernel-work auto: as long as the copies in)" : "");
        printf("copies of %.0f MiB          pageable        pinned\n", d.bytes / 1048576.0);
        printf("  host to device     %8.1f GB/s %8.1f GB/s  (%.1fx)\n", gbs[0], gbs[2], gbs[2] / gbs[0]);
        printf("  device to host     %8.1f GB/s %8.1f GB/s  (%.1fx)\n\n", gbs[1], gbs[3], gbs[3] / gbs[1]);
        printf("the parts, pinned: copies in (A and B) %.3f ms, kernel %.3f ms, copies out %.3f ms\n\n", part[0],
               part[1], part[2]);
        printf("%-32s %10s %10s %9s  %s\n", "version", "time (ms)", "vs serial", "of ideal", "check");
        for (int i = 0; i < first_plain; i++)
            print_line(&lines[i]);
        printf("(vs serial: against serial from pinned memory; of ideal: the best this many chunks can do,\n"
               "the stages of one chunk and then the slowest stage for each other chunk, %s)\n",
               dev.copy_engines >= 2 ? "copies in and out on separate engines" : "copies in and out on one engine");
        if (nsweep && chunks[nsweep - 1] > queues)
            printf("(more chunks than the %d hardware queues: some streams share a queue, and a chunk may wait\n"
                   "behind another's work there, as on Fermi)\n", queues);
        if (plain_rows) {
            printf("\nwith the course's plain kernel (%.3f ms for all the data):\n", part_plain_kernel);
            for (int i = first_plain; i < nlines; i++)
                print_line(&lines[i]);
        }
        printf("\n");
        if (tl.done) {
            printf("timeline of depth-first, %d chunks, from your traced build (%.3f ms across; '>' copy in,\n"
                   "'#' kernel, '<' copy out):\n", tl.nchunks, tl.raw.last_ms - tl.raw.first_ms);
            kit_gantt_print(tl.spans, tl.nspans, 64, tl.raw.first_ms, tl.raw.last_ms);
            printf("  copies ran beside kernels for %.3f of the %.3f ms that kernels ran (%.0f%%);\n"
                   "  copies in beside copies out for %.3f ms; at most %d operations at once\n",
                   tl.raw.copy_kernel_ms, tl.raw.kernel_ms,
                   tl.raw.kernel_ms > 0 ? 100.0 * tl.raw.copy_kernel_ms / tl.raw.kernel_ms : 0.0,
                   tl.raw.h2d_d2h_ms, tl.raw.max_concurrent);
            if (queues == 1)
                printf("  (with one hardware queue the events around each copy wait in that queue too and\n"
                       "  serialise the streams: here the timed runs above are the ones to trust)\n");
            printf("\n");
        }
        if (order[0].judged || order[1].judged) {
            printf("the order your pipelines queued their copies in (traced build, %d chunks):\n", order_chunks);
            printf("  depth-first    %s\n", !order[0].judged ? "not told"
                                          : order[0].right  ? "chunk by chunk: in, kernel, out, then the next chunk"
                                                            : "WRONG: not chunk by chunk");
            printf("  breadth-first  %s\n\n", !order[1].judged ? "not told"
                                            : order[1].right  ? "every copy in, one after the other, then the kernels, "
                                                                "then every copy out"
                                            : order[1].unordered ? "WRONG: its copies in do not wait for each other"
                                                                 : "WRONG: a copy out before the last copy in");
        }
        if (brief)
            printf("(--focus: the timeline and the course's scheduling examples are left out;\n"
                   "run without --focus, or with --timeline FILE, for them)\n\n");
        else
            print_experiments(&x, queues);
        printf("The course: a three-stream pipeline overlaps copies in, kernels and copies out (3-way\n"
               "concurrency); with one queue, breadth-first issue of it takes 7 units, depth-first 5.\n");
        if (best >= 0)
            printf("this GPU: depth-first with %d chunks %.2fx over serial from pinned memory, %.0f%% of its "
                   "ideal.\n\n", chunks[best], t_serial / t_best, 100.0 * ideal[best] / t_best);
        else
            printf("this GPU: no pipeline verified.\n\n");
    }
    if (csv) {
        fprintf(csv, "gpu,size,seed,version,chunks,kernel_work,time_ms,ideal_ms,correct\n");
        for (int i = 0; i < nlines; i++)
            csv_line(csv, &dev, n, c.seed, &lines[i]);
        kit_csv_close(csv);
    }
    if (timeline_path && tl.done) {
        FILE *f = kit_csv_open(timeline_path);
        fprintf(f, "chunk,operation,stream,start_ms,end_ms,version\n");
        write_timeline(f, &tl, "depth-first");
        if (tl_bf.done)
            write_timeline(f, &tl_bf, "breadth-first");
        kit_csv_close(f);
    }

    /* ---- the facts, one per line ---- */
    kit_kv("lab", "05-streams");
    kit_kv_device(&dev);
    kit_kv("size", "%u", n);
    kit_kv("seed", "%llu", c.seed);
    kit_kv("kernel-work", "%llu", work);
    kit_kv("connections", "%d", queues);
    kit_kv("bandwidth-h2d-pageable-gbs", "%.2f", gbs[0]);
    kit_kv("bandwidth-d2h-pageable-gbs", "%.2f", gbs[1]);
    kit_kv("bandwidth-h2d-pinned-gbs", "%.2f", gbs[2]);
    kit_kv("bandwidth-d2h-pinned-gbs", "%.2f", gbs[3]);
    kit_kv("pinned-vs-pageable-h2d", "%.2f", gbs[2] / gbs[0]);
    kit_kv("pinned-vs-pageable-d2h", "%.2f", gbs[3] / gbs[1]);
    kit_kv("time-h2d-ms", "%.4f", part[0]);
    kit_kv("time-kernel-ms", "%.4f", part[1]);
    kit_kv("time-plain-kernel-ms", "%.4f", part_plain_kernel);
    kit_kv("time-d2h-ms", "%.4f", part[2]);
    kit_row_kv(&serial_rows[0]);
    kit_row_kv(&serial_rows[1]);
    for (int i = 0; i < nsweep; i++) {
        char key[48];
        kit_row_kv(&df[i]);
        kit_row_kv(&bf[i]);
        snprintf(key, sizeof key, "ideal-%d-ms", chunks[i]);
        kit_kv(key, "%.4f", ideal[i]);
    }
    for (int i = 0; i < plain_rows; i++)
        kit_row_kv(&plain[i]);
    if (best >= 0) {
        kit_kv("best-chunks", "%d", chunks[best]);
        kit_kv("speedup-pipeline-vs-pinned", "%.3f", t_serial / t_best);
        kit_kv("pipeline-fraction-of-ideal", "%.3f", ideal[best] / t_best);
    }
    if (plain_rows && plain[0].timed && plain[1].timed)
        kit_kv("speedup-plain-pipeline-vs-pinned", "%.3f", plain[0].t.median_ms / plain[1].t.median_ms);
    for (int i = 0; i < 2; i++)
        kit_kv(i == 0 ? "issue-order-depth-first" : "issue-order-breadth-first", "%s",
               !order[i].judged ? "not-told" : order[i].right ? "right" : "wrong");
    if (tl.done) {
        kit_kv("timeline-chunks", "%d", tl.nchunks);
        kit_kv("timeline-ms", "%.4f", tl.raw.last_ms - tl.raw.first_ms);
        kit_kv("timeline-kernel-launches", "%d", tl.launches);
        kit_kv("timeline-uncertainty-ms", "%.4f", tl.uncertainty_ms);
        kit_kv("overlap-kernel-ms", "%.4f", tl.raw.kernel_ms);
        kit_kv("overlap-copy-kernel-ms", "%.4f", tl.raw.copy_kernel_ms);
        kit_kv("overlap-copy-kernel-fraction", "%.3f", share);
        kit_kv("overlap-h2d-d2h-ms", "%.4f", tl.raw.h2d_d2h_ms);
        kit_kv("max-concurrent-operations", "%d", tl.raw.max_concurrent);
        kit_kv("overlap-copy-kernel-possible", "%.3f", possible);
        kit_kv("overlap-copy-kernel-needed", "%.3f", need);
        kit_kv("overlap-judged", "%s", judged ? "yes" : "no");
    }
    if (!brief) {
        kit_kv("kit-pipeline-share-of-parts", "%.3f", kit_pipeline_share);
        kit_kv("units-two-kernels-depth-first", "%.2f", x.equal[0].units);
        kit_kv("units-two-kernels-breadth-first", "%.2f", x.equal[1].units);
        kit_kv("units-unequal-depth-first", "%.2f", x.unequal[0].units);
        kit_kv("units-unequal-breadth-first", "%.2f", x.unequal[1].units);
        kit_kv("units-unequal-course-order", "%.2f", x.unequal[2].units);
        kit_kv("units-copy-queue-stream-1-first", "%.2f", x.copy_units[0]);
        kit_kv("units-copy-queue-dh2-first", "%.2f", x.copy_units[1]);
        kit_kv("time-3-way-ms", "%.4f", x.four_way_ms[0]);
        kit_kv("time-host-work-first-ms", "%.4f", x.four_way_ms[1]);
        kit_kv("time-4-way-ms", "%.4f", x.four_way_ms[2]);
    }
    kit_kv("timeline-and-examples", "%s", brief ? "left out (--focus)" : "run");
    {
        long long wrong = x.four_way_wrong + tl.wrong + tl_bf.wrong + kit_pipeline_wrong;
        for (int i = 0; i < 2; i++)
            wrong += serial_rows[i].wrong > 0 ? serial_rows[i].wrong : 0;
        for (int i = 0; i < nsweep; i++)
            wrong += (df[i].wrong > 0 ? df[i].wrong : 0) + (bf[i].wrong > 0 ? bf[i].wrong : 0);
        for (int i = 0; i < plain_rows; i++)
            wrong += plain[i].wrong > 0 ? plain[i].wrong : 0;
        kit_kv("wrong-elements", "%lld", wrong);
    }
    kit_kv("runs-returned-early", "%lld", early_total);
    if (best >= 0)
        kit_kv("summary", "pinned %.1fx pageable host to device; depth-first with %d chunks %.2fx over serial, "
                          "%.0f%% of its ideal; copies beside kernels %.0f%% of the kernel time",
               gbs[2] / gbs[0], chunks[best], t_serial / t_best, 100.0 * ideal[best] / t_best, 100.0 * share);
    else
        kit_kv("summary", "pinned %.1fx pageable host to device; no pipeline verified", gbs[2] / gbs[0]);
    kit_kv("course-k40", "a three-stream pipeline overlaps copies in, kernels and copies out (3-way "
                         "concurrency); with one queue two half-GPU kernels per stream take 3 units "
                         "depth-first, 2 breadth-first");

    if (gain_asked) {
        kit_kv("judge-path-ms", "%.4f", path);
        kit_kv("time-kit-pipeline-ms", "%.4f", t_kit);
        kit_kv("time-kit-serial-ms", "%.4f", g_serial);
        kit_kv("time-kit-ideal-ms", "%.4f", g_ideal);
        kit_kv("pipeline-gain-share", "%.3f", gain_share);
        kit_kv("pipeline-gain-kit-share", "%.3f", kit_gain_share);
        kit_kv("pipeline-gain-needed", "%.3f", gain_need);
        kit_kv("pipeline-gain-judged", "%s", gain_judged ? "yes" : "no");
    }

    /*
     * The verdict: pinned host memory, streams of the student's own, every
     * run of every version right (and not returned before its streams were
     * done), the pipeline faster than serial by enough of what overlap
     * could give, and in the traced run copies beside kernels.
     */
    pass &= alloc_ok & streams_ok & (early_total == 0);
    for (int i = 0; i < 2; i++)
        pass &= kit_row_ok(&serial_rows[i], n);
    for (int i = 0; i < nsweep; i++) {
        pass &= kit_row_ok(&df[i], n);
        pass &= kit_row_ok(&bf[i], n);
    }
    for (int i = 0; i < plain_rows; i++)
        pass &= kit_row_ok(&plain[i], n);
    if (tl.wrong || tl_bf.wrong || x.four_way_wrong)
        pass = 0;
    for (int i = 0; i < 2; i++)
        if (order[i].judged && !order[i].right) {
            fprintf(stderr, "%s: %s: %s (TODO(5))\n", kit_program,
                    i == 0 ? "pipeline_depth_first" : "pipeline_breadth_first", order[i].why);
            pass = 0;
        }
    if (brief) {
        /* --focus: the grader's checked runs judged the timeline. */
        fprintf(stderr, "%s: note: --focus: the timeline (and its overlap) is not judged in this run\n", kit_program);
    } else if (!tl.done) {
        fprintf(stderr, "%s: no depth-first pipeline verified, so there is no timeline to judge\n", kit_program);
        pass = 0;
    } else if (tl.missed) {
        fprintf(stderr, "%s: note: %lld copies of the traced run were not recorded\n", kit_program, tl.missed);
    }
    if (tl.done && !judged) {
        const char *why = tl.nchunks < 2 ? "one chunk has nothing to overlap"
                          : kit_under_sanitizer()
                              ? "under compute-sanitizer the instrumented kernels and copies do not overlap as "
                                "they would (KIT_UNDER_SANITIZER)"
                          : platform_cannot_overlap
                              ? "on WSL 2 Windows schedules the GPU's work, and the kit's own pipeline did not "
                                "overlap here either (kit-pipeline-share-of-parts; README.md, \"Windows\")"
                          : queues == 1 ? "with one hardware queue the traced run's events serialise the streams"
                          : dev.copy_engines < 1 ? "this GPU has no copy engine"
                          : tl.launches == 0 ? "the traced run launched no kernel"
                                             : "its kernels are too short for the clocks to tell";
        fprintf(stderr, "%s: note: the timeline's overlap is not judged: %s\n", kit_program, why);
        if (tl.launches == 0)
            pass = 0;
    } else if (judged && share < need) {
        fprintf(stderr, "%s: depth-first, %d chunks: in the timeline copies ran beside kernels for only %.3f of "
                        "the %.3f ms that kernels ran (%.0f%%, at least %.0f%% needed; these chunks' copies could "
                        "cover %.0f%%): is each kernel launched into its chunk's stream, and is every copy "
                        "asynchronous? (TODO(3))\n",
                kit_program, tl.nchunks, tl.judged.copy_kernel_ms, tl.judged.kernel_ms, 100.0 * share,
                100.0 * need, 100.0 * possible);
        pass = 0;
    }

    if (gain_judged && gain_share < gain_need) {
        fprintf(stderr, "%s: depth-first, %d chunks: %.3f ms at its fastest against %.3f ms serial from pinned "
                        "memory and an ideal of %.3f ms: it won back %.0f%% of what overlapping could, the kit's "
                        "own pipeline %.0f%% (at least half of that needed): do the chunks' copies and kernels "
                        "run beside each other? (TODO(3))\n",
                kit_program, chunks[best], g_best, g_serial, g_ideal, 100.0 * gain_share,
                100.0 * kit_gain_share);
        pass = 0;
    } else if (gain_asked && !gain_judged && !platform_cannot_overlap && !kit_under_sanitizer() && queues != 1) {
        if (!gain_runs)
            fprintf(stderr, "%s: note: the pipeline's time is not judged: too few timed runs (--reps 3 or more)\n",
                    kit_program);
        else if (gain_possible < MIN_GAIN_MS || gain_possible < MIN_GAIN_OF_SERIAL * g_serial ||
                 gain_possible < GAIN_OVER_PATH * path)
            fprintf(stderr, "%s: note: the pipeline's time is not judged: overlap could save only %.3f of the "
                            "%.3f ms serial here, too little for one run's clock to tell (--size larger)\n",
                    kit_program, gain_possible, g_serial);
        else
            fprintf(stderr, "%s: note: the pipeline's time is not judged: the kit's own pipeline of %d chunks "
                            "won back only %.0f%% of what overlapping could here (%.3f of %.3f ms)\n",
                    kit_program, chunks[best], 100.0 * kit_gain_share, g_serial - t_kit, gain_possible);
    }
    if (kit_pipeline_wrong)
        pass = 0;

    free(tl.spans);
    free(tl_bf.spans);
    data_teardown(&d);
    return kit_finish(pass);
}
