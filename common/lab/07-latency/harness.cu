/*
 * Lab 07: latency hiding, Little's law on this GPU - the harness.
 * The student's file: labs/07-latency/latency.cu; the handout:
 * handouts/07-latency.md.
 *
 * Part 1, latency: one thread chases pointers around a random cycle built
 *   on the host from --seed, each load's address the value of the last, in
 *   a working set that fits L1, one that fits only L2, and one that L2 does
 *   not hold (flushed before each run): clock cycles (clock64) and
 *   nanoseconds (%globaltimer) per load.
 * Part 2, bandwidth: the kit's streaming kernel (float4 loads, several in
 *   flight, full occupancy) reads an array of 8 L2s or more.
 * Part 3, Little's law: the student's littles_law turns latency and
 *   bandwidth into bytes, threads and warps in flight, for this GPU and for
 *   the course's Fermi and Kepler; the kit checks each figure.
 * Part 4, occupancy against bandwidth: the student's file's sum_tlp (one
 *   load in flight per thread) at 1 to 64 resident warps per SM, throttled
 *   with dynamic shared memory; where the curve flattens, against the law.
 * Part 5, ILP against TLP: the student's sum_ilp at 8 warps per SM with 1
 *   to 16 independent loads per thread.
 * Part 6, instruction throughput: float against double FMA, expf and sinf
 *   against __expf and __sinf and against a --use_fast_math build
 *   (07-latency/harness-fastmath.cu), beside the Programming Guide's throughputs;
 *   and what each loses in accuracy against a double CPU reference.
 *
 * Every streaming kernel writes one partial sum per thread; the inputs are
 * sixteenths, so every sum is exact in a float whatever the order, and each
 * is checked on the host. Every kernel is timed until the median is steady,
 * each timed run checked again (common/lib/kit_row.h).
 */
#include <thread>

#include "kit_check.h"
#include "kit_host.h"
#include "kit_rng.h"
#include "kit_row.h"

typedef struct lab lab; /* the lab's state, below */
#define KIT_LAB_STATE lab
#include "kit_lab.h" /* with kit_args.h, kit_device.h, kit_report.h, kit_timing.h */

#include "contract.h"
#include "kit_student.h"

#define LAT_MATH_TABLE lat_math_precise
#include "throughput.h"

#define LINE_BYTES 128
#define WORDS_PER_LINE (LINE_BYTES / 4)
#define L1_SET_BYTES (8u << 10)        /* fits the L1 of every GPU the kit runs on */
#define L2_SET_FRACTION 4              /* the L2 set: a quarter of the L2 */
#define DRAM_SET_L2S 4                 /* the DRAM set: 4 L2s... */
#define DRAM_SET_MIN (64ull << 20)     /* ...and at least 64 MiB */
#define MAX_SLOTS (1u << 18)           /* lines a cycle visits at most */
#define CHASE_RUNS 3
#define DEFAULT_STEPS 20000
#define STREAM_THREADS 256
#define ILP_WARPS 8                    /* warps per SM of the ILP rows */
#define KNEE_FRACTION 0.9              /* the knee: the first point at 90% of the curve's best */
#define MIN_ILP_SPEEDUP 2.0            /* 16 loads against 1 at ILP_WARPS, from DRAM */
#define MAX_EXACT_PER_THREAD (1u << 20) /* sixteenths up to 1: sums stay exact in a float */
#define MAP_SIZE (1u << 20)
#define DEFAULT_ITERATIONS 4096
#define MATH_THREADS 256

static const kit_student_api *timed = &kit_student_timed;
static const kit_student_api *counted = &kit_student_counted;

static const int sweep_warps[] = {1, 2, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48, 56, 64};

/* ---- host random numbers: the cycles and the inputs of the accuracy test -- */

static unsigned long long splitmix64(unsigned long long *s)
{
    unsigned long long z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A number in [0, n), n >= 1 (the modulo's bias is below 2^-40 here). */
static unsigned long long below(unsigned long long *s, unsigned long long n) { return splitmix64(s) % n; }

/* ---- Part 1: pointer chasing ------------------------------------------------ */

typedef struct {
    unsigned int end;
    long long cycles;
    unsigned long long ns;
} chase_out;

static __device__ __forceinline__ long long lat_clock(void)
{
    long long c;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)::"memory");
    return c;
}

static __device__ __forceinline__ unsigned long long lat_globaltimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}

/* One thread: `warm` steps untimed, then `steps` dependent loads timed. */
static __global__ void chase_kernel(const unsigned int *next, unsigned int start, unsigned int warm,
                                    unsigned int steps, chase_out *out)
{
    unsigned int j = start;
    unsigned long long t0, t1;
    long long c0, c1;

    for (unsigned int i = 0; i < warm; i++)
        j = next[j];
    t0 = lat_globaltimer();
    c0 = lat_clock();
    for (unsigned int i = 0; i < steps; i++)
        j = next[j];
    c1 = lat_clock();
    t1 = lat_globaltimer();
    out->end = j;
    out->cycles = c1 - c0;
    out->ns = t1 - t0;
}

/* next[order[i]] = order[i + 1]: the cycle, from the host's visiting order. */
static __global__ void link_kernel(unsigned int *next, const unsigned int *order, unsigned int slots)
{
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < slots; i += gridDim.x * blockDim.x)
        next[order[i]] = order[i + 1 == slots ? 0 : i + 1];
}

/* Reads one word of every 32-byte sector through L2 only (not L1): brings a
 * working set into L2, or pushes one out with another buffer. */
static __global__ void touch_kernel(const unsigned int *p, unsigned long long words, unsigned int *sink)
{
    unsigned int acc = 0;
    for (unsigned long long i = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) * 8; i < words;
         i += (unsigned long long)gridDim.x * blockDim.x * 8)
        acc += __ldcg(p + i);
    if (acc == 0x9e3779b9u)
        *sink = acc;
}

enum level { L1, L2, DRAM, LEVELS };
static const char *const level_key[LEVELS] = {"l1", "l2", "dram"};
static const char *const level_name[LEVELS] = {"L1", "L2", "DRAM only"};

typedef struct {
    unsigned long long bytes;
    unsigned int slots;   /* the cycle's length */
    unsigned int *order;  /* host: the cycle's elements in visiting order */
    unsigned int *d_next; /* device: the working set */
    unsigned int warm;
    double cycles, ns;    /* per load, medians of the runs */
    int wrong_runs;       /* runs that did not end where the cycle leads */
} chase_set;

/*
 * A random cycle through `bytes`: one element in each of up to MAX_SLOTS
 * lines (every line when there are fewer; otherwise one line drawn from
 * each of MAX_SLOTS equal strata), at a random word of its line, visited in
 * a random order. No two steps touch one line until the cycle comes round.
 */
static void chase_build(chase_set *c, unsigned long long bytes, unsigned long long *rng)
{
    unsigned long long lines = bytes / LINE_BYTES;
    unsigned int *d_order;

    c->bytes = lines * LINE_BYTES;
    c->slots = (unsigned int)(lines < MAX_SLOTS ? lines : MAX_SLOTS);
    c->order = (unsigned int *)kit_host_alloc(c->slots * sizeof(unsigned int));
    for (unsigned int k = 0; k < c->slots; k++) {
        unsigned long long lo = lines * k / c->slots, hi = lines * (k + 1) / c->slots;
        unsigned long long line = lo + below(rng, hi - lo);
        c->order[k] = (unsigned int)(line * WORDS_PER_LINE + below(rng, WORDS_PER_LINE));
    }
    for (unsigned int k = c->slots - 1; k > 0; k--) {
        unsigned int r = (unsigned int)below(rng, k + 1ull), tmp = c->order[k];
        c->order[k] = c->order[r];
        c->order[r] = tmp;
    }
    KIT_CHECK(cudaMalloc((void **)&c->d_next, c->bytes));
    KIT_CHECK(cudaMemset(c->d_next, 0, c->bytes)); /* the words off the cycle: read only by touch_kernel */
    KIT_CHECK(cudaMalloc((void **)&d_order, c->slots * sizeof(unsigned int)));
    KIT_CHECK(cudaMemcpy(d_order, c->order, c->slots * sizeof(unsigned int), cudaMemcpyHostToDevice));
    link_kernel<<<256, 256>>>(c->d_next, d_order, c->slots);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaDeviceSynchronize());
    KIT_CHECK(cudaFree(d_order));
}

static double median_of(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/*
 * Times the chase CHASE_RUNS times: L1 warms its (small) cycle by walking it
 * once; L2 reads its whole set into L2 first; DRAM reads another buffer of
 * two L2s first, which leaves none of the set in L2.
 */
static void chase_measure(chase_set *c, enum level lv, unsigned int steps, const unsigned int *d_flush,
                          unsigned long long flush_words, chase_out *d_out, unsigned int *d_sink)
{
    double cyc[CHASE_RUNS], ns[CHASE_RUNS];
    chase_out h;

    c->warm = lv == L1 ? c->slots : 0;
    c->wrong_runs = 0;
    for (int r = 0; r < CHASE_RUNS; r++) {
        if (lv == L2)
            touch_kernel<<<1024, 256>>>(c->d_next, c->bytes / 4, d_sink);
        if (lv == DRAM)
            touch_kernel<<<1024, 256>>>(d_flush, flush_words, d_sink);
        KIT_CHECK_LAUNCH();
        chase_kernel<<<1, 1>>>(c->d_next, c->order[0], c->warm, steps, d_out);
        KIT_CHECK_LAUNCH();
        KIT_CHECK(cudaMemcpy(&h, d_out, sizeof h, cudaMemcpyDeviceToHost));
        if (h.end != c->order[(c->warm + (unsigned long long)steps) % c->slots]) {
            if (c->wrong_runs++ == 0)
                fprintf(stderr, "%s: the %s chase ended at element %u, not where %u steps of the cycle lead\n",
                        kit_program, level_name[lv], h.end, c->warm + steps);
        }
        cyc[r] = (double)h.cycles / steps;
        ns[r] = (double)h.ns / steps;
    }
    c->cycles = median_of(cyc, CHASE_RUNS);
    c->ns = median_of(ns, CHASE_RUNS);
}

/* ---- Parts 2, 4, 5: the streaming sums ------------------------------------- */

/* Sixteenths from 1/16 to 1: every partial sum is exact in a float. */
static __global__ void fill_sixteenths(float *p, unsigned long long n, unsigned long long seed)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    kit_rng s;

    kit_rng_thread(&s, seed, i);
    for (; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        p[i] = (float)(1 + (curand(&s) & 15)) * 0.0625f;
}

/*
 * The kit's streaming kernel, for the bandwidth: thread t adds the float4s
 * t, t + T, t + 2T, ... (four of them in flight at once), then, for the
 * last n % 4 elements, thread t < n % 4 adds element 4(n / 4) + t.
 */
static __global__ void stream_vec4(const float *in, float *partial, unsigned int n)
{
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x, T = gridDim.x * blockDim.x;
    unsigned int n4 = n / 4;
    const float4 *in4 = (const float4 *)in;
    float sum = 0.0f;

    for (unsigned long long q = t; q < n4; q += 4ull * T) {
        float4 v[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            unsigned long long i = q + (unsigned long long)k * T;
            v[k] = i < n4 ? in4[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int k = 0; k < 4; k++)
            sum += v[k].x + v[k].y + v[k].z + v[k].w;
    }
    if (t < n - 4 * n4)
        sum += in[4 * n4 + t];
    partial[t] = sum;
}

enum sum_kind { SUM_TLP, SUM_ILP, STREAM };

/* Which thread of T adds element i (g = 4 for the kit's float4 kernel). */
typedef struct {
    const float *in;
    unsigned int n, T, g;
    unsigned long long rows, main; /* rows of T*g elements; elements in them */
} partial_plan;

static void partial_rows(const partial_plan *p, unsigned long long r0, unsigned long long r1, float *acc)
{
    unsigned long long width = (unsigned long long)p->T * p->g;
    memset(acc, 0, p->T * sizeof(float));
    for (unsigned long long r = r0; r < r1; r++) {
        unsigned long long base = r * width, end = base + width < p->main ? base + width : p->main;
        const float *in = p->in + base;
        unsigned long long len = end - base;
        if (p->g == 1)
            for (unsigned long long j = 0; j < len; j++)
                acc[j] += in[j];
        else
            for (unsigned long long q = 0; q < len / 4; q++)
                acc[q] += (in[4 * q] + in[4 * q + 1]) + (in[4 * q + 2] + in[4 * q + 3]);
    }
}

/* The sums thread t of T must write, over every host core. */
static float *expected_partials(const float *in, unsigned int n, unsigned int T, unsigned int g)
{
    static struct {
        unsigned int T, g;
        float *sums;
    } cache[32];
    static int cached;
    partial_plan p = {in, n, T, g, 0, 0};
    unsigned int nt = std::thread::hardware_concurrency();
    float *acc, *sums;
    std::thread pool[16];

    for (int i = 0; i < cached; i++)
        if (cache[i].T == T && cache[i].g == g)
            return cache[i].sums;
    p.main = g == 4 ? 4ull * (n / 4) : n;
    p.rows = (p.main + (unsigned long long)T * g - 1) / ((unsigned long long)T * g);
    nt = nt < 1 ? 1 : nt > 16 ? 16 : nt;
    if (p.rows < nt * 4ull)
        nt = 1;
    acc = (float *)kit_host_alloc((size_t)nt * T * sizeof(float));
    for (unsigned int k = 0; k < nt; k++)
        pool[k] = std::thread(partial_rows, &p, p.rows * k / nt, p.rows * (k + 1) / nt, acc + (size_t)k * T);
    for (unsigned int k = 0; k < nt; k++)
        pool[k].join();
    sums = (float *)kit_host_alloc((size_t)T * sizeof(float));
    memcpy(sums, acc, (size_t)T * sizeof(float)); /* the first host thread's; the others' add in, exactly */
    for (unsigned int k = 1; k < nt; k++)
        for (unsigned int t = 0; t < T; t++)
            sums[t] += acc[(size_t)k * T + t];
    free(acc);
    for (unsigned long long i = p.main; i < n; i++)
        sums[i - p.main] += in[i];
    if (cached < 32) {
        cache[cached].T = T;
        cache[cached].g = g;
        cache[cached++].sums = sums;
    }
    return sums;
}

/* What a timed kernel writes (sum_run's and math_run's first member):
 * poisoned before each run, kept after the checked one, compared after
 * each timed one with what was kept, or what fresh inputs must give. */
typedef struct {
    void *d_out, *d_keep;
    size_t bytes;
} outputs;

static void outputs_poison(void *p)
{
    outputs *o = (outputs *)p;
    KIT_CHECK(cudaMemset(o->d_out, 0xff, o->bytes));
}

static void outputs_keep(void *p)
{
    outputs *o = (outputs *)p;
    KIT_CHECK(cudaMemcpy(o->d_keep, o->d_out, o->bytes, cudaMemcpyDeviceToDevice));
}

static long long outputs_compare(void *p)
{
    outputs *o = (outputs *)p;
    return kit_device_differ(o->d_out, o->d_keep, o->bytes);
}

typedef struct {
    outputs out; /* the partial sums, a float per thread */
    enum sum_kind kind;
    unsigned int n, blocks, threads;
    size_t smem;
    int loads, warps_per_sm, blocks_per_sm;
    float *d_in, *h_partial;
    const float *h_in;
    kit_counter *counter;
    unsigned long long seed; /* of in */
} sum_run;

/* partial[t] for T threads, thread t adding in[t], in[t + T], ...: the
 * kit's own sums of a timed run's fresh inputs (exact, as sixteenths). */
static __global__ void expected_partials_device(const float *in, unsigned int n, unsigned int T, float *partial)
{
    for (unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; t < T;
         t += (unsigned long long)gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (unsigned long long i = t; i < n; i += T)
            s += in[i];
        partial[t] = s;
    }
}

static void sum_launch(const sum_run *r, int counting)
{
    const float *in = r->d_in;
    float *partial = (float *)r->out.d_out;
    unsigned int n = r->n;
    int loads = r->loads;
    void *args[] = {(void *)&in, (void *)&partial, (void *)&n, (void *)&loads};
    const void *const *kernels = counting ? kit_kernels_counted : kit_kernels_timed;

    if (r->kind == STREAM) {
        stream_vec4<<<r->blocks, r->threads>>>(in, partial, n);
        return;
    }
    /* The counting build runs once, for its counts: without the throttle. */
    KIT_CHECK(cudaLaunchKernel(kernels[r->kind == SUM_TLP ? KIT_KERNEL_sum_tlp : KIT_KERNEL_sum_ilp],
                               dim3(r->blocks), dim3(r->threads), args, counting ? 0 : r->smem, 0));
}

static kit_counts sum_counted(void *p)
{
    sum_run *r = (sum_run *)p;
    kit_counter_reset(r->counter, NULL, 0);
    counted->configure_counting(&r->counter->cfg);
    sum_launch(r, 1);
    KIT_CHECK_LAUNCH();
    return kit_counter_read(r->counter);
}

static void sum_timed(void *p) { sum_launch((sum_run *)p, 0); }

static unsigned int sum_threads(const sum_run *r) { return r->blocks * r->threads; }

static long long sum_verify(void *p, const kit_row *row)
{
    sum_run *r = (sum_run *)p;
    unsigned int T = sum_threads(r);
    const float *want = expected_partials(r->h_in, r->n, T, r->kind == STREAM ? 4 : 1);
    long long bad = 0;

    KIT_CHECK(cudaMemcpy(r->h_partial, r->out.d_out, T * sizeof(float), cudaMemcpyDeviceToHost));
    for (unsigned int t = 0; t < T; t++) {
        if (r->h_partial[t] == want[t] || bad++)
            continue;
        if (r->kind == STREAM)
            fprintf(stderr, "%s: %s: partial[%u] = %.9g, not %.9g\n", kit_program, row->name, t,
                    r->h_partial[t], want[t]);
        else
            fprintf(stderr, "%s: %s: partial[%u] = %.9g, but in[%u] + in[%u + T] + in[%u + 2T] + ... = "
                            "%.9g (T = %u threads)\n",
                    kit_program, row->name, t, r->h_partial[t], t, t, t, want[t], T);
    }
    return bad;
}

/* Timed runs of the student's sums with inputs of their own: d_keep holds
 * what they must give. */
static void sum_refresh(void *p, unsigned long long draw)
{
    sum_run *r = (sum_run *)p;
    fill_sixteenths<<<1024, 256>>>(r->d_in, r->n, kit_row_draw_seed(r->seed, draw));
    expected_partials_device<<<1024, 256>>>(r->d_in, r->n, sum_threads(r), (float *)r->out.d_keep);
    KIT_CHECK_LAUNCH();
}

static void sum_restore(void *p)
{
    sum_run *r = (sum_run *)p;
    fill_sixteenths<<<1024, 256>>>(r->d_in, r->n, r->seed);
    KIT_CHECK_LAUNCH();
}

/* ---- occupancy: resident warps per SM from the block and shared memory ---- */

static int active_blocks(const void *kernel, int threads, size_t smem)
{
    int n = 0;
    KIT_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, smem));
    return n;
}

/* Lets a kernel take all the shared memory a block may have, from the largest
 * carveout, so that dynamic shared memory can throttle it to one block. */
static size_t allow_shared(const void *kernel, const kit_device *d)
{
    struct cudaFuncAttributes fa;
    size_t most;

    KIT_CHECK(cudaFuncGetAttributes(&fa, kernel));
    most = (size_t)d->smem_per_block_optin - fa.sharedSizeBytes;
    KIT_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)most));
    KIT_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                   cudaSharedmemCarveoutMaxShared));
    return most;
}

/*
 * `warps` resident per SM: blocks of 8, 4, 2 or 1 warps (the largest that
 * divides), as many per SM as make `warps`, and the least dynamic shared
 * memory that lets no more blocks than that share an SM. Returns 0 where
 * the GPU cannot hold it so.
 */
static int occupancy_config(const void *kernel, const kit_device *d, size_t most, int warps, sum_run *r)
{
    int per_block = warps % 8 == 0 ? 8 : warps % 4 == 0 ? 4 : warps % 2 == 0 ? 2 : 1;
    int k = warps / per_block, threads = 32 * per_block;
    size_t lo = 0, hi = most;

    if (warps > d->max_warps_per_sm || k > d->max_blocks_per_sm)
        return 0;
    if (active_blocks(kernel, threads, 0) > k) {
        if (active_blocks(kernel, threads, most) > k)
            return 0;
        while (hi - lo > 256) { /* active(lo) > k >= active(hi) */
            size_t mid = (lo + hi) / 2 / 256 * 256;
            if (mid <= lo)
                mid = lo + 256;
            if (active_blocks(kernel, threads, mid) > k)
                lo = mid;
            else
                hi = mid;
        }
        lo = hi;
    }
    if (active_blocks(kernel, threads, lo) != k)
        return 0;
    r->threads = threads;
    r->blocks_per_sm = k;
    r->blocks = (unsigned int)(k * d->sms);
    r->smem = lo;
    r->warps_per_sm = warps;
    return 1;
}

/* ---- Part 3: Little's law, the kit's own -------------------------------- */

static in_flight law_reference(const gpu_facts *g)
{
    in_flight r;
    r.bytes_per_cycle = g->bandwidth_gbs / g->clock_ghz;
    r.bytes_in_flight = g->dram_cycles * r.bytes_per_cycle;
    r.threads = r.bytes_in_flight / g->bytes_per_load;
    r.warps = r.threads / g->warp_size;
    r.warps_per_sm = r.warps / g->sms;
    r.loads_per_thread = (int)ceil(r.warps_per_sm / g->resident_warps);
    if (r.loads_per_thread < 1)
        r.loads_per_thread = 1;
    return r;
}

static int close_to(double got, double want) { return fabs(got - want) <= 1e-6 * fabs(want) + 1e-9; }

/* loads_per_thread rounds warps_per_sm / resident_warps up: where that
 * quotient is a whole number, another honest order of the same divisions
 * may land a hair above it and round up once more. Either is accepted. */
static int loads_close_to(int got, const gpu_facts *g, const in_flight *want)
{
    double x = want->warps_per_sm / g->resident_warps;
    int lo = (int)ceil(x - 1e-6 * x), hi = (int)ceil(x + 1e-6 * x);
    return got >= (lo < 1 ? 1 : lo) && got <= (hi < 1 ? 1 : hi);
}

/* The student's figures for g against the kit's; says what is off. */
static int law_check(const char *who, const gpu_facts *g, const in_flight *got, int per_sm)
{
    in_flight want = law_reference(g);
    struct {
        const char *name;
        double got, want;
    } f[] = {{"bytes_per_cycle", got->bytes_per_cycle, want.bytes_per_cycle},
             {"bytes_in_flight", got->bytes_in_flight, want.bytes_in_flight},
             {"threads", got->threads, want.threads},
             {"warps", got->warps, want.warps},
             {"warps_per_sm", got->warps_per_sm, want.warps_per_sm},
             {"loads_per_thread", (double)got->loads_per_thread, (double)want.loads_per_thread}};
    int n = per_sm ? KIT_COUNT(f) : 2;

    for (int i = 0; i < n; i++)
        if (i == 5 ? !loads_close_to(got->loads_per_thread, g, &want) : !close_to(f[i].got, f[i].want)) {
            fprintf(stderr, "%s: littles_law for %s: %s = %.6g is not what Little's law gives from these "
                            "facts (latencies: L1 %.0f, L2 %.0f, DRAM %.0f cycles; %.3f GHz, %.0f GB/s, %d SMs; "
                            "TODO(1))\n",
                    kit_program, who, f[i].name, f[i].got, g->l1_cycles, g->l2_cycles, g->dram_cycles,
                    g->clock_ghz, g->bandwidth_gbs, g->sms);
            return 0;
        }
    return 1;
}

/* ---- Part 6: instruction throughput and accuracy ----------------------------- */

/* The Programming Guide's arithmetic instruction throughputs, results per
 * clock cycle per SM: 32-bit FMA, 64-bit FMA, and the special function unit
 * (__sinf, __cosf, __expf's exp2, __log2f, reciprocal square root). */
enum { DOC_FP32, DOC_FP64, DOC_SFU, DOC_NONE };

typedef struct {
    int cc, per_clock[DOC_NONE]; /* by DOC_FP32, DOC_FP64, DOC_SFU */
} throughput_doc;

static const throughput_doc documented[] = {
    {70, {64, 32, 16}}, {75, {64, 2, 16}}, {80, {64, 32, 16}},
    {86, {128, 2, 16}}, {89, {128, 2, 16}}, {90, {128, 64, 16}},
};

/* Part 6's rows. expf and sinf are sequences of FP32 instructions, so the
 * table documents no throughput for them; __expf and __sinf, and what
 * --use_fast_math makes of expf and sinf, run on the SFU. The FMA rows
 * measure no accuracy (their chains are checked bit for bit). */
typedef struct {
    const char *key, *name;
    const lat_math_api *api;
    int op;
    int doc;           /* its documented throughput: DOC_FP32, DOC_FP64, DOC_SFU, DOC_NONE */
    const char *bound; /* the Programming Guide's error bound; NULL: no accuracy measured */
} math_row_def;

static const math_row_def math_rows[] = {
    {"fma-f32", "fmaf, float", &lat_math_precise, LAT_FMA_F32, DOC_FP32, NULL},
    {"fma-f64", "fma, double", &lat_math_precise, LAT_FMA_F64, DOC_FP64, NULL},
    {"expf", "expf", &lat_math_precise, LAT_EXPF, DOC_NONE, "2 ulp"},
    {"expf-intrinsic", "__expf", &lat_math_precise, LAT_EXPF_INTRINSIC, DOC_SFU, "2+|1.173x|"},
    {"expf-fast-math", "expf, --use_fast_math", &lat_math_fast, LAT_EXPF, DOC_SFU, "2+|1.173x|"},
    {"sinf", "sinf", &lat_math_precise, LAT_SINF, DOC_NONE, "2 ulp"},
    {"sinf-intrinsic", "__sinf", &lat_math_precise, LAT_SINF_INTRINSIC, DOC_SFU, "2^-21.41 abs"},
    {"sinf-fast-math", "sinf, --use_fast_math", &lat_math_fast, LAT_SINF, DOC_SFU, "2^-21.41 abs"},
};
#define MATH_ROWS KIT_COUNT(math_rows)

typedef struct {
    outputs out; /* LAT_CHAINS values per thread */
    const math_row_def *def;
    unsigned int blocks, threads;
    int iterations;
    void *h_out;
    double ref[LAT_STARTS * LAT_CHAINS]; /* what each start's chains end at */
} math_run;

/* What chain c of start s ends at: bit for bit for the FMA chains (the
 * GPU's FMA rounds once, like fmaf and fma), in double for the others. */
static void math_reference(const math_run *m, double *ref)
{
    int op = m->def->op;
    for (unsigned int s = 0; s < LAT_STARTS; s++)
        for (unsigned int c = 0; c < LAT_CHAINS; c++) {
            double x = lat_chain_start(op, s, c), a = lat_chain_a(op), b = lat_chain_b(op);
            if (op == LAT_FMA_F32) {
                float xf = (float)x;
                for (long i = 0; i < (long)m->iterations * LAT_FMAS_PER_STEP; i++)
                    xf = fmaf(xf, (float)a, (float)b);
                x = xf;
            } else if (op == LAT_FMA_F64) {
                for (long i = 0; i < (long)m->iterations * LAT_FMAS_PER_STEP; i++)
                    x = fma(x, a, b);
            } else {
                for (int i = 0; i < m->iterations; i++)
                    x = a * (lat_is_exp(op) ? exp(x) : sin(x)) + b;
            }
            ref[s * LAT_CHAINS + c] = x;
        }
}

static void math_timed(void *p)
{
    math_run *m = (math_run *)p;
    m->def->api->chain(m->def->op, m->out.d_out, m->blocks, m->threads, m->iterations);
}

static long long math_verify(void *p, const kit_row *row)
{
    math_run *m = (math_run *)p;
    unsigned long long values = (unsigned long long)m->blocks * m->threads * LAT_CHAINS;
    int op = m->def->op;
    long long bad = 0;

    KIT_CHECK(cudaMemcpy(m->h_out, m->out.d_out, m->out.bytes, cudaMemcpyDeviceToHost));
    for (unsigned long long i = 0; i < values; i++) {
        unsigned long long t = i / LAT_CHAINS;
        double want = m->ref[(t % LAT_STARTS) * LAT_CHAINS + i % LAT_CHAINS], got;
        int ok;
        if (op == LAT_FMA_F64) {
            got = ((const double *)m->h_out)[i];
            ok = got == want;
        } else {
            got = ((const float *)m->h_out)[i];
            ok = op == LAT_FMA_F32 ? got == want : fabs(got - want) <= 1e-3 * fmax(1.0, fabs(want));
        }
        if (!ok && bad++ == 0)
            fprintf(stderr, "%s: %s: thread %llu's chain %llu ends at %.9g, not %.9g\n", kit_program,
                    row->name, t, i % LAT_CHAINS, got, want);
    }
    return bad;
}

/* Accuracy over MAP_SIZE inputs: the largest error in units in the last
 * place of the float nearest the true value, and the largest absolute and
 * relative errors. */
typedef struct {
    double max_ulp, max_abs, max_rel;
    long long nans;
} accuracy;

static double float_ulp(double r)
{
    int e;
    float f = (float)fabs(r);
    if (f == 0.0f)
        return ldexp(1.0, -149);
    frexpf(f, &e);
    return ldexp(1.0, e - 24 < -149 ? -149 : e - 24);
}

static accuracy measure_accuracy(const lat_math_api *api, int op, const float *d_x, float *d_y, const float *x,
                                 float *y, unsigned int n)
{
    accuracy a = {0, 0, 0, 0};

    api->map(op, d_x, d_y, n);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaMemcpy(y, d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (unsigned int i = 0; i < n; i++) {
        double want = lat_is_exp(op) ? exp((double)x[i]) : sin((double)x[i]), err = fabs((double)y[i] - want);
        if (y[i] != y[i]) {
            a.nans++;
            continue;
        }
        a.max_ulp = fmax(a.max_ulp, err / float_ulp(want));
        a.max_abs = fmax(a.max_abs, err);
        if (want != 0.0)
            a.max_rel = fmax(a.max_rel, err / fabs(want));
    }
    return a;
}

/* ---- the report ---------------------------------------------------------------- */

static const char *bytes_text(unsigned long long b)
{
    static char bufs[4][32];
    static int next;
    char *s = bufs[next++ % 4];
    if (b >= (1ull << 20))
        snprintf(s, 32, "%.1f MiB", b / 1048576.0);
    else
        snprintf(s, 32, "%.0f KiB", b / 1024.0);
    return s;
}

/* ---- the lab, declared once (kit_lab.h) ------------------------------------------------ */

/* One point of the streaming sums (Parts 2, 4 and 5): the run, its row, and
 * the bandwidth it read the array at (0 where it was not timed). */
typedef struct {
    sum_run sum;
    kit_row row;
    double gbs;
} sum_point;

struct lab {
    kit_run run;
    int steps, only_loads, iterations;
    unsigned int n; /* floats in the streamed array */
    /* Part 1 */
    chase_set sets[LEVELS];
    double clock_ghz;
    /* Part 2: the streamed array; stream.gbs is the bandwidth */
    sum_run base;
    kit_counter counter;
    float *h_in;
    sum_point stream;
    /* Part 3 */
    gpu_facts facts, fermi, kepler;
    in_flight mine, mine_fermi, mine_kepler, want;
    int law_ok;
    /* Part 4 */
    sum_point occ[KIT_COUNT(sweep_warps)];
    int nocc, knee, full; /* full: the point at all the warps an SM holds, -1 none */
    double tlp_full;      /* its GB/s, 0 where none */
    /* Part 5 */
    sum_point ilp[8];
    int nilp, ilp_counted;
    double best_ilp, ilp_1, ilp_16, ilp_fraction; /* ilp_fraction: best_ilp over tlp_full */
    /* Part 6 */
    const throughput_doc *doc;
    math_run mr[MATH_ROWS];
    kit_row mrows[MATH_ROWS];
    accuracy acc[MATH_ROWS];
    double rate[MATH_ROWS];
    int fast_differs;
};

/* A line of the CSV: gpu, size and seed, then the part's own columns. */
static void csv_line(const lab *L, FILE *f, const char *fmt, ...)
{
    va_list ap;
    kit_csv_prefix(f, &L->run.dev, L->n, L->run.c.seed);
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
}

/* A row's own key: value key: pattern ("latency-%s-ns") filled with the row's key. */
static const char *key_of(const char *pattern, const char *key)
{
    static char name[96];
    snprintf(name, sizeof name, pattern, key);
    return name;
}

/* The chase's working sets: 8 KiB; a quarter of the L2; 4 L2s, at least 64 MiB. */
static void chase_set_sizes(const kit_device *d, unsigned long long bytes[LEVELS])
{
    unsigned long long l2 = (unsigned long long)d->l2_bytes;
    bytes[L1] = L1_SET_BYTES;
    bytes[L2] = l2 / L2_SET_FRACTION;
    bytes[DRAM] = l2 * DRAM_SET_L2S > DRAM_SET_MIN ? l2 * DRAM_SET_L2S : DRAM_SET_MIN;
}

/* The streamed array: 8 L2s or more (--size), its sums exact for every
 * thread at one warp per SM, everything within the GPU's free memory. */
static void setup(lab *L)
{
    const kit_device *d = &L->run.dev;
    unsigned long long sets[LEVELS], chase, stream, need;
    unsigned long long most = 32ull * d->sms * MAX_EXACT_PER_THREAD;

    L->n = (unsigned int)(L->run.c.size ? L->run.c.size : kit_default_size(d->l2_bytes, d->free_bytes, 4, 8));
    if (L->n > most)
        kit_die(KIT_EXIT_USAGE,
                "--size %u: at one warp per SM each thread would add up more than %u floats, and its sum "
                "would no longer be exact in a float; choose at most %llu",
                L->n, MAX_EXACT_PER_THREAD, most);
    /* The chase's sets are freed before the streamed array is made. */
    chase_set_sizes(d, sets);
    chase = sets[L1] + sets[L2] + sets[DRAM] + 2ull * d->l2_bytes;
    stream = 4ull * L->n + 8ull * d->sms * d->max_threads_per_sm;
    need = (chase > stream ? chase : stream) + (256ull << 20);
    if ((long long)need > d->free_bytes)
        kit_die(KIT_EXIT_USAGE, "--size %u needs %.0f MiB of GPU memory but %s has %.0f MiB free; choose a "
                                "smaller --size",
                L->n, need / 1048576.0, d->name, d->free_bytes / 1048576.0);
}

/* The run's key: value lines, after lab, device and seed. */
static void facts(lab *L)
{
    kit_kv("size", "%u", L->n);
    kit_kv("working-set-bytes", "%llu", 4ull * L->n);
    kit_kv("working-set-over-l2", "%.2f", 4.0 * L->n / L->run.dev.l2_bytes);
    kit_kv("steps", "%d", L->steps);
    kit_kv("iterations", "%d", L->iterations);
}

/* Part 1: the chase in each working set, each set freed before the next;
 * the SM clock, cycles per ns, from the three. */
static void part1_measure(lab *L)
{
    unsigned long long bytes[LEVELS], rng = L->run.c.seed, flush_words = 2ull * L->run.dev.l2_bytes / 4;
    unsigned int *d_flush, *d_sink;
    chase_out *d_out;
    double ratio[LEVELS];

    chase_set_sizes(&L->run.dev, bytes);
    KIT_CHECK(cudaMalloc((void **)&d_flush, flush_words * 4));
    KIT_CHECK(cudaMemset(d_flush, 0, flush_words * 4));
    KIT_CHECK(cudaMalloc((void **)&d_sink, sizeof(unsigned int)));
    KIT_CHECK(cudaMalloc((void **)&d_out, sizeof(chase_out)));
    KIT_CHECK(cudaMemset(d_out, 0, sizeof(chase_out))); /* its padding too: copied back whole */
    for (int lv = 0; lv < LEVELS; lv++) {
        chase_set *c = &L->sets[lv];
        chase_build(c, bytes[lv], &rng);
        chase_measure(c, (enum level)lv, (unsigned int)L->steps, d_flush, flush_words, d_out, d_sink);
        L->run.pass &= c->wrong_runs == 0; /* judged as it ran, where it said so */
        ratio[lv] = c->cycles / c->ns;
        KIT_CHECK(cudaFree(c->d_next));
        free(c->order);
    }
    L->clock_ghz = median_of(ratio, LEVELS);
    KIT_CHECK(cudaFree(d_flush));
    KIT_CHECK(cudaFree(d_sink));
    KIT_CHECK(cudaFree(d_out));
}

static void part1_print(lab *L)
{
    const chase_set *sets = L->sets;
    printf("Part 1: the latency of one load. One thread follows a random cycle, each load's address\n"
           "the value of the one before; %s dependent loads timed per working set, median of %d runs\n\n",
           kit_grouped((unsigned long long)L->steps), CHASE_RUNS);
    printf("%-12s %12s %12s %10s %10s  %s\n", "working set", "size", "lines", "cycles", "ns", "check");
    for (int lv = 0; lv < LEVELS; lv++)
        printf("%-12s %12s %12s %10.1f %10.1f  %s\n", level_name[lv], bytes_text(sets[lv].bytes),
               kit_grouped(sets[lv].slots), sets[lv].cycles, sets[lv].ns, sets[lv].wrong_runs ? "WRONG" : "ok");
    printf("the SM clock while chasing: %.3f GHz (cycles per ns)\n", L->clock_ghz);
    printf("the course (notes 001 and 003): global memory 400 to 800 cycles, arithmetic 10 to 20\n\n");
}

/* The CSV's head, for every part's lines; then each set's two. */
static void part1_csv(lab *L, FILE *f)
{
    fprintf(f, "gpu,size,seed,part,row,warps_per_sm,loads_per_thread,time_ms,value,unit,correct\n");
    for (int k = 0; k < 2 * LEVELS; k++) { /* each set's cycles per load, then its ns */
        const chase_set *c = &L->sets[k / 2];
        csv_line(L, f, "latency,%s,1,1,%.6f,%.4f,%s,%d\n", level_key[k / 2], c->ns * L->steps * 1e-6,
                 k % 2 ? c->ns : c->cycles, k % 2 ? "ns" : "cycles", c->wrong_runs == 0);
    }
}

static void part1_kv(lab *L)
{
    for (int lv = 0; lv < LEVELS; lv++) {
        const chase_set *c = &L->sets[lv];
        kit_kv(key_of("latency-%s-cycles", level_key[lv]), "%.2f", c->cycles);
        kit_kv(key_of("latency-%s-ns", level_key[lv]), "%.2f", c->ns);
        kit_kv(key_of("working-set-%s-bytes", level_key[lv]), "%llu", c->bytes);
        kit_kv(key_of("wrong-chase-runs-%s", level_key[lv]), "%d", c->wrong_runs);
    }
    kit_kv("sm-clock-ghz", "%.4f", L->clock_ghz);
}

/* Measures a point of the streaming sums (counted too where count is set)
 * and judges its row at once, as every row of this lab is judged: what is
 * wrong with it follows the row's own messages on stderr. */
static void point_measure(lab *L, sum_point *p, int count)
{
    int fresh = p->sum.kind != STREAM;
    kit_row_work w = {&p->sum, count ? sum_counted : NULL, sum_timed, outputs_poison, sum_verify, outputs_keep,
                      outputs_compare, fresh ? sum_refresh : NULL, fresh ? outputs_compare : NULL,
                      fresh ? sum_restore : NULL};
    p->sum.out.bytes = sum_threads(&p->sum) * sizeof(float);
    kit_row_measure(&p->row, &w, &L->run.policy);
    L->run.pass &= kit_row_ok(&p->row, sum_threads(&p->sum));
    p->gbs = p->row.timed ? 4.0 * L->n / (p->row.t.median_ms * 1e6) : 0.0;
}

/* Part 2: the streamed array (and its host copy), then the kit's float4 stream. */
static void part2_measure(lab *L)
{
    sum_run *b = &L->base, *s = &L->stream.sum;
    size_t most_threads = (size_t)L->run.dev.sms * L->run.dev.max_threads_per_sm;

    b->n = L->n;
    kit_counter_create(&L->counter, 0, 0);
    b->counter = &L->counter;
    KIT_CHECK(cudaMalloc((void **)&b->d_in, (size_t)L->n * 4));
    b->seed = L->run.c.seed;
    fill_sixteenths<<<1024, 256>>>(b->d_in, L->n, b->seed);
    KIT_CHECK_LAUNCH();
    L->h_in = (float *)kit_host_alloc((size_t)L->n * 4);
    KIT_CHECK(cudaMemcpy(L->h_in, b->d_in, (size_t)L->n * 4, cudaMemcpyDeviceToHost));
    b->h_in = L->h_in;
    KIT_CHECK(cudaMalloc(&b->out.d_out, most_threads * 4));
    KIT_CHECK(cudaMalloc(&b->out.d_keep, most_threads * 4));
    b->h_partial = (float *)kit_host_alloc(most_threads * 4);

    *s = *b;
    s->kind = STREAM;
    s->threads = STREAM_THREADS;
    s->blocks = (unsigned int)(L->run.dev.sms * active_blocks((const void *)stream_vec4, STREAM_THREADS, 0));
    kit_row_name(&L->stream.row, "stream", NULL, "the kit's float4 stream");
    point_measure(L, &L->stream, 0);
}

static void part2_print(lab *L)
{
    unsigned int n = L->n;
    printf("Part 2: bandwidth. The kit's streaming kernel (float4 loads, 4 in flight per thread, full\n"
           "occupancy) reads %s floats, %s, %.1fx the L2: %.3f ms, %.0f GB/s  %s\n\n",
           kit_grouped(n), bytes_text(4ull * n), 4.0 * n / L->run.dev.l2_bytes, L->stream.row.t.median_ms,
           L->stream.gbs, kit_row_check_word(&L->stream.row));
}

static void part2_csv(lab *L, FILE *f)
{
    csv_line(L, f, "bandwidth,stream,%d,4,%.6f,%.1f,GB/s,%d\n", L->run.dev.max_warps_per_sm,
             L->stream.row.t.median_ms, L->stream.gbs, L->stream.row.wrong == 0);
}

static void part2_kv(lab *L)
{
    kit_row_kv(&L->stream.row);
    kit_kv("bandwidth-gbs", "%.1f", L->stream.gbs);
}

/* Part 3: the student's littles_law on this GPU's figures and on the notes'
 * (contract.h's gpu_facts: latencies in L1, L2 and DRAM, clock, bandwidth,
 * SMs, warp size, bytes per load, resident warps). */
static void part3_measure(lab *L)
{
    const gpu_facts g = {L->sets[L1].cycles, L->sets[L2].cycles, L->sets[DRAM].cycles, L->clock_ghz,
                         L->stream.gbs > 0 ? L->stream.gbs : 1.0, L->run.dev.sms, L->run.dev.warp_size, 4, ILP_WARPS};
    const gpu_facts fermi = {0, 0, 800, 1.566, 144, 16, g.warp_size, 4, ILP_WARPS};
    const gpu_facts kepler = {0, 0, 800, 1.6, 250, 16, g.warp_size, 4, ILP_WARPS};

    L->facts = g;
    L->fermi = fermi;
    L->kepler = kepler;
    timed->littles_law(&L->facts, &L->mine);
    timed->littles_law(&L->fermi, &L->mine_fermi);
    timed->littles_law(&L->kepler, &L->mine_kepler);
    L->want = law_reference(&L->facts);
    /* Judged now, for the table's check word: the first figure off says so on stderr. */
    L->law_ok = law_check("this GPU", &L->facts, &L->mine, 1);
    L->law_ok = L->law_ok && law_check("the course's Fermi", &L->fermi, &L->mine_fermi, 1);
    L->law_ok = L->law_ok && law_check("the course's Kepler", &L->kepler, &L->mine_kepler, 0);
    L->run.pass &= L->law_ok;
}

static void part3_print(lab *L)
{
    const in_flight *mine = &L->mine;
    in_flight course_f = law_reference(&L->fermi), course_k = law_reference(&L->kepler);

    printf("Part 3: Little's law, your littles_law (TODO(1)): bytes in flight = latency x bandwidth\n\n");
    printf("%-16s %9s %9s %8s %16s %16s %16s  %s\n", "", "latency", "GB/s", "GHz", "bytes/cycle",
           "bytes in flight", "warps per SM", "check");
    printf("%-16s %9.0f %9.0f %8.3f %7.0f (%6.1f) %7.0f (%6.0f) %7.1f (%6.1f)\n", "Fermi (notes)", 800.0, 144.0, 1.566,
           92.0, L->mine_fermi.bytes_per_cycle, 74000.0, L->mine_fermi.bytes_in_flight, 36.0,
           L->mine_fermi.warps_per_sm);
    printf("%-16s %9.0f %9.0f %8.3f %7.0f (%6.1f) %7.0f (%6.0f) %16s\n", "Kepler (notes)", 800.0, 250.0, 1.6, 96.0,
           L->mine_kepler.bytes_per_cycle, 77000.0, L->mine_kepler.bytes_in_flight, "-");
    printf("%-16s %9.0f %9.0f %8.3f %16.1f %16.0f %16.1f  %s\n", "this GPU", L->facts.dram_cycles,
           L->facts.bandwidth_gbs, L->clock_ghz, mine->bytes_per_cycle, mine->bytes_in_flight, mine->warps_per_sm,
           L->law_ok ? "ok" : "WRONG");
    printf("(the notes' figures first, yours in brackets.) The notes' Kepler row is a slip: 250 GB/s /\n"
           "1.6 GHz is %.0f bytes per cycle, not 96, and 800 cycles of it are %.0f KB in flight, not 77.\n"
           "The notes divide Fermi's warps among 16 SMs; the Tesla C2070 they quote has 14 (%.0f per SM).\n",
           course_k.bytes_per_cycle, course_k.bytes_in_flight / 1000, course_f.warps / 14);
    printf("this GPU: %.0f threads, %.0f warps in flight at one 4-byte load each: %.1f warps per SM of "
           "the %d an SM holds;\nat %d warps per SM each thread must keep %d loads in flight.\n\n",
           mine->threads, mine->warps, mine->warps_per_sm, L->run.dev.max_warps_per_sm, ILP_WARPS,
           mine->loads_per_thread);
}

static void part3_csv(lab *L, FILE *f)
{
    csv_line(L, f, "littles-law,warps-per-sm,,,,%.4f,warps,%d\n", L->mine.warps_per_sm, L->law_ok);
}

static void part3_kv(lab *L)
{
    kit_kv("little-bytes-per-cycle", "%.4f", L->mine.bytes_per_cycle);
    kit_kv("little-bytes-in-flight", "%.1f", L->mine.bytes_in_flight);
    kit_kv("little-warps-per-sm", "%.4f", L->mine.warps_per_sm);
    kit_kv("little-loads-per-thread", "%d", L->mine.loads_per_thread);
    kit_kv("expected-little-warps-per-sm", "%.4f", L->want.warps_per_sm);
    kit_kv("expected-little-loads-per-thread", "%d", L->want.loads_per_thread);
    kit_kv("little-fermi-bytes-in-flight", "%.1f", L->mine_fermi.bytes_in_flight);
    kit_kv("little-fermi-warps-per-sm", "%.4f", L->mine_fermi.warps_per_sm);
    kit_kv("little-kepler-bytes-per-cycle", "%.4f", L->mine_kepler.bytes_per_cycle);
    kit_kv("little-kepler-bytes-in-flight", "%.1f", L->mine_kepler.bytes_in_flight);
    kit_kv("littles-law-check", "%s", L->law_ok ? "ok" : "wrong");
}

/* Part 4: sum_tlp at each number of resident warps per SM the GPU can hold;
 * the knee, the first point at KNEE_FRACTION of the best. */
static void part4_measure(lab *L)
{
    const void *kernel = kit_kernels_timed[KIT_KERNEL_sum_tlp];
    size_t most = allow_shared(kernel, &L->run.dev);
    double best = 0.0;

    L->full = -1;
    for (int i = 0; i < KIT_COUNT(sweep_warps); i++) {
        sum_point *p = &L->occ[L->nocc];
        int warps = sweep_warps[i], full = warps == L->run.dev.max_warps_per_sm;
        char key[24];
        p->sum = L->base;
        p->sum.kind = SUM_TLP;
        p->sum.loads = 1;
        if (!occupancy_config(kernel, &L->run.dev, most, warps, &p->sum))
            continue;
        snprintf(key, sizeof key, "occ-%d", warps);
        kit_row_name(&p->row, key, NULL, "sum_tlp, %d warps/SM", warps);
        /* Counted once, at full occupancy, to compare with sum_ilp's counts. */
        point_measure(L, p, full);
        if (full)
            L->full = L->nocc;
        best = fmax(best, p->gbs);
        L->nocc++;
    }
    for (int i = 0; i < L->nocc && best > 0; i++)
        if (!L->knee && L->occ[i].gbs >= KNEE_FRACTION * best)
            L->knee = L->occ[i].sum.warps_per_sm;
    L->tlp_full = L->full >= 0 ? L->occ[L->full].gbs : 0.0;
}

/* The columns Parts 4 and 5 share, for warp_loads loads of 128 bytes per
 * SM in flight: those bytes, the time, GB/s and their share of part 2's,
 * what Little's law allows with part 1's DRAM latency (capped at part 2's
 * bandwidth), the check; then mark. */
static void print_point(const lab *L, const sum_point *p, double warp_loads, const char *mark)
{
    double bw = L->facts.bandwidth_gbs; /* part 2's, 1 where it has none */
    double law = warp_loads * 32 * 4 * L->run.dev.sms / L->sets[DRAM].ns;

    printf("%10.0f %10.3f %9.0f %8.0f%% %10.0f  %s%s\n", warp_loads * 128.0, p->row.t.median_ms, p->gbs,
           100 * p->gbs / bw, law < bw ? law : bw, kit_row_check_word(&p->row), mark);
}

static void part4_print(lab *L)
{
    printf("Part 4: sum_tlp (one load in flight per thread) against the warps resident per SM\n"
           "(exactly the blocks that fit at once; dynamic shared memory keeps more from fitting)\n\n");
    printf("%9s %8s %8s %10s %10s %10s %9s %9s %10s  %s\n", "warps/SM", "threads", "blocks", "shared", "in flight",
           "time (ms)", "GB/s", "of part 2", "law GB/s", "check");
    for (int i = 0; i < L->nocc; i++) {
        const sum_run *r = &L->occ[i].sum;
        printf("%9d %8u %8d %10s ", r->warps_per_sm, r->threads, r->blocks_per_sm,
               r->smem ? bytes_text(r->smem) : "0");
        print_point(L, &L->occ[i], r->warps_per_sm, r->warps_per_sm == L->knee ? "  <- knee" : "");
    }
    printf("(in flight: bytes per SM, one 128-byte load per warp; shared: dynamic shared memory per\n"
           "block; law: what Little's law allows with part 1's DRAM latency, capped at part 2's bandwidth)\n");
    printf("the curve reaches %.0f%% of its best at %d warps per SM; Little's law asks %.1f.\n\n",
           100 * KNEE_FRACTION, L->knee, L->want.warps_per_sm);
}

static void part4_csv(lab *L, FILE *f)
{
    for (int i = 0; i < L->nocc; i++)
        csv_line(L, f, "occupancy,sum_tlp,%d,1,%.6f,%.1f,GB/s,%d\n", L->occ[i].sum.warps_per_sm,
                 L->occ[i].row.t.median_ms, L->occ[i].gbs, L->occ[i].row.wrong == 0);
}

static void part4_kv(lab *L)
{
    char curve[1024] = "";
    int len = 0;

    /* Each point's lines; and the curve on one line, warps:GB/s pairs in order, for the tests. */
    for (int i = 0; i < L->nocc; i++) {
        const sum_point *p = &L->occ[i];
        kit_row_kv(&p->row);
        kit_kv(key_of("bandwidth-%s-gbs", p->row.key), "%.1f", p->gbs);
        kit_kv(key_of("shared-bytes-%s", p->row.key), "%zu", p->sum.smem);
        if (len < (int)sizeof curve - 32)
            len += snprintf(curve + len, sizeof curve - len, "%s%d:%.1f", i ? " " : "", p->sum.warps_per_sm, p->gbs);
    }
    kit_kv("occupancy-points", "%d", L->nocc);
    kit_kv("occupancy-curve", "%s", curve);
    kit_kv("occupancy-knee-warps", "%d", L->knee);
    kit_kv("knee-over-prediction", "%.3f", L->want.warps_per_sm > 0 ? L->knee / L->want.warps_per_sm : 0.0);
    kit_kv("bandwidth-tlp-full-gbs", "%.1f", L->tlp_full);
}

/* Part 5: sum_ilp at ILP_WARPS warps per SM: 1 to 16 loads per thread, and
 * the student's Little's-law K where it is none of these (or --loads K
 * only). Then the streamed array is freed. */
static void part5_measure(lab *L)
{
    const void *kernel = kit_kernels_timed[KIT_KERNEL_sum_ilp];
    size_t most = allow_shared(kernel, &L->run.dev);
    int ks[8], nk = 0, k_law = L->want.loads_per_thread;

    if (L->only_loads)
        ks[nk++] = L->only_loads;
    else {
        for (int k = 1; k <= LAT_MAX_LOADS; k *= 2)
            ks[nk++] = k;
        if (k_law <= LAT_MAX_LOADS && (k_law & (k_law - 1)))
            ks[nk++] = k_law;
    }
    L->ilp_counted = -1;
    for (int i = 0; i < nk; i++) {
        sum_point *p = &L->ilp[L->nilp];
        char key[24];
        /* Counted once: with the most loads (or the one K asked for). */
        int count = ks[i] == (L->only_loads ? L->only_loads : LAT_MAX_LOADS);
        p->sum = L->base;
        p->sum.kind = SUM_ILP;
        p->sum.loads = ks[i];
        if (!occupancy_config(kernel, &L->run.dev, most, ILP_WARPS, &p->sum)) {
            fprintf(stderr, "%s: note: this GPU cannot hold sum_ilp at %d warps per SM; part 5 is left out\n",
                    kit_program, ILP_WARPS);
            break;
        }
        snprintf(key, sizeof key, "ilp-%d", ks[i]);
        kit_row_name(&p->row, key, "TODO(2)", "sum_ilp, %d load%s/thread", ks[i], ks[i] > 1 ? "s" : "");
        point_measure(L, p, count);
        L->best_ilp = fmax(L->best_ilp, p->gbs);
        if (ks[i] == 1)
            L->ilp_1 = p->gbs;
        if (ks[i] == LAT_MAX_LOADS)
            L->ilp_16 = p->gbs;
        if (count)
            L->ilp_counted = L->nilp;
        L->nilp++;
    }
    L->ilp_fraction = L->tlp_full > 0 ? L->best_ilp / L->tlp_full : 0.0;
    kit_counter_destroy(&L->counter);
    KIT_CHECK(cudaFree(L->base.d_in));
    KIT_CHECK(cudaFree(L->base.out.d_out));
    KIT_CHECK(cudaFree(L->base.out.d_keep));
    free(L->base.h_partial);
}

static void part5_print(lab *L)
{
    printf("Part 5: sum_ilp (TODO(2)) at %d warps per SM, against the loads in flight per thread\n\n", ILP_WARPS);
    printf("%9s %9s %10s %10s %9s %9s %10s  %s\n", "loads", "warps/SM", "in flight", "time (ms)", "GB/s",
           "of part 2", "law GB/s", "check");
    for (int i = 0; i < L->nilp; i++) {
        int k = L->ilp[i].sum.loads;
        printf("%9d %9d ", k, ILP_WARPS);
        print_point(L, &L->ilp[i], (double)ILP_WARPS * k, k == L->want.loads_per_thread ? "  <- Little's law" : "");
    }
    if (L->full >= 0 && L->nilp)
        printf("the best of these: %.0f GB/s with %d warps per SM, %.0f%% of sum_tlp's %.0f GB/s with all %d.\n",
               L->best_ilp, ILP_WARPS, 100 * L->ilp_fraction, L->tlp_full, L->run.dev.max_warps_per_sm);
    printf("\n");
}

static void part5_csv(lab *L, FILE *f)
{
    for (int i = 0; i < L->nilp; i++)
        csv_line(L, f, "ilp,sum_ilp,%d,%d,%.6f,%.1f,GB/s,%d\n", ILP_WARPS, L->ilp[i].sum.loads,
                 L->ilp[i].row.t.median_ms, L->ilp[i].gbs, L->ilp[i].row.wrong == 0);
}

static void part5_kv(lab *L)
{
    for (int i = 0; i < L->nilp; i++) {
        kit_row_kv(&L->ilp[i].row);
        kit_kv(key_of("bandwidth-%s-gbs", L->ilp[i].row.key), "%.1f", L->ilp[i].gbs);
    }
    kit_kv("ilp-warps-per-sm", "%d", ILP_WARPS);
    kit_kv("bandwidth-ilp-best-gbs", "%.1f", L->best_ilp);
    kit_kv("ilp-best-over-tlp-full", "%.3f", L->ilp_fraction);
    if (L->ilp_1 > 0 && L->ilp_16 > 0)
        kit_kv("ilp-16-over-1", "%.3f", L->ilp_16 / L->ilp_1);
}

/*
 * Beyond every row's sums, right in every run (judged as measured):
 * sum_ilp's loads coalesced, each element read once, and really in flight
 * together.
 */
static void part5_verdict(lab *L)
{
    unsigned int n = L->n;

    if (L->ilp_counted >= 0 && L->ilp[L->ilp_counted].row.wrong == 0) {
        const kit_row *r = &L->ilp[L->ilp_counted].row;
        unsigned long long lanes = r->counts.c[KIT_LD_LANES];
        if (lanes != n) {
            fprintf(stderr, "%s: %s: its threads made %llu loads, but the sums need each of the %u elements "
                            "loaded once (TODO(2))\n",
                    kit_program, r->name, lanes, n);
            L->run.pass = 0;
        }
        /* Whole warps of neighbours: 1 segment a request where the size is
         * a multiple of 32 (the kit's grid is), at most 2 where it is not. */
        if (n % 32 == 0 ? r->counts.c[KIT_LD_SEGMENTS] != r->counts.c[KIT_LD_REQUESTS]
                        : kit_row_segments(r) > 2.0) {
            fprintf(stderr, "%s: %s: %.2f segments per request, not %s: the 32 lanes of a warp must read 32 "
                            "neighbouring floats in each load (TODO(2))\n",
                    kit_program, r->name, kit_row_segments(r), n % 32 == 0 ? "1" : "2 at most");
            L->run.pass = 0;
        }
    }
    if (L->ilp_1 > 0 && L->ilp_16 > 0) {
        /* Judged where the loads come from DRAM and each thread has rounds to do. */
        unsigned long long T = (unsigned long long)L->run.dev.sms * ILP_WARPS * 32, from = L->run.dev.l2_bytes / 2;
        if (from < 64 * T)
            from = 64 * T;
        if (n < from)
            fprintf(stderr, "%s: note: at %u elements sum_ilp's 16 loads are not judged against 1 (from %llu "
                            "on they are)\n",
                    kit_program, n, from);
        else if (L->ilp_16 < MIN_ILP_SPEEDUP * L->ilp_1) {
            fprintf(stderr, "%s: sum_ilp: 16 loads per thread give %.0f GB/s, 1 load %.0f GB/s: less than %.0fx. "
                            "The loads are not in flight together: start all of a round's loads before "
                            "adding any of their values (TODO(2))\n",
                    kit_program, L->ilp_16, L->ilp_1, MIN_ILP_SPEEDUP);
            L->run.pass = 0;
        }
    }
}

/* Part 6's accuracy: each function's over MAP_SIZE inputs drawn from the
 * seed, exp's and then sin's in one array. */
static void part6_accuracy(lab *L)
{
    float *x = (float *)kit_host_alloc(2 * MAP_SIZE * 4), *y = (float *)kit_host_alloc(MAP_SIZE * 4);
    float *y_precise = (float *)kit_host_alloc(MAP_SIZE * 4), *d_x, *d_y;
    unsigned long long s = L->run.c.seed ^ 0x5eedull;

    for (unsigned int i = 0; i < MAP_SIZE; i++) {
        x[i] = (float)(-10.0 + 20.0 * (double)(splitmix64(&s) >> 11) / 9007199254740992.0);
        x[MAP_SIZE + i] = (float)(M_PI * (-1.0 + 2.0 * (double)(splitmix64(&s) >> 11) / 9007199254740992.0));
    }
    KIT_CHECK(cudaMalloc((void **)&d_x, 2 * MAP_SIZE * 4));
    KIT_CHECK(cudaMalloc((void **)&d_y, MAP_SIZE * 4));
    KIT_CHECK(cudaMemcpy(d_x, x, 2 * MAP_SIZE * 4, cudaMemcpyHostToDevice));
    for (int i = 0; i < MATH_ROWS; i++) {
        const math_row_def *d = &math_rows[i];
        size_t at = lat_is_exp(d->op) ? 0 : MAP_SIZE; /* its inputs */
        if (!d->bound)
            continue;
        L->acc[i] = measure_accuracy(d->api, d->op, d_x + at, d_y, x + at, y, MAP_SIZE);
        if (L->acc[i].nans) {
            fprintf(stderr, "%s: %s gave %lld NaNs on finite inputs\n", kit_program, d->name, L->acc[i].nans);
            L->run.pass = 0;
        }
        /* The fast-math build must differ from the accurate one somewhere. */
        if (d->api == &lat_math_precise && (d->op == LAT_EXPF || d->op == LAT_SINF))
            memcpy(y_precise, y, MAP_SIZE * 4);
        if (d->api == &lat_math_fast)
            L->fast_differs += memcmp(y, y_precise, MAP_SIZE * 4) != 0;
    }
    KIT_CHECK(cudaFree(d_x));
    KIT_CHECK(cudaFree(d_y));
    free(x);
    free(y);
    free(y_precise);
}

/* Part 6: the compute-bound chains, timed, every thread's result checked
 * (each row judged as measured); then each function's accuracy. */
static void part6_measure(lab *L)
{
    size_t most_values = (size_t)L->run.dev.sms * L->run.dev.max_threads_per_sm * LAT_CHAINS;
    void *d_out, *d_keep, *h_out;

    for (int i = 0; i < KIT_COUNT(documented); i++)
        if (documented[i].cc == L->run.dev.cc_major * 10 + L->run.dev.cc_minor)
            L->doc = &documented[i]; /* NULL where the table has no row for this GPU */
    KIT_CHECK(cudaMalloc(&d_out, most_values * 8));
    KIT_CHECK(cudaMalloc(&d_keep, most_values * 8));
    h_out = kit_host_alloc(most_values * 8);
    for (int i = 0; i < MATH_ROWS; i++) {
        math_run *m = &L->mr[i];
        const math_row_def *d = &math_rows[i];
        int active = active_blocks(d->api->chain_kernel(d->op), MATH_THREADS, 0);
        kit_row_work w = {m, NULL, math_timed, outputs_poison, math_verify, outputs_keep, outputs_compare,
                          NULL, NULL, NULL};

        m->def = d;
        m->threads = MATH_THREADS;
        m->blocks = (unsigned int)(L->run.dev.sms * (active > 0 ? active : 1));
        unsigned long long threads = (unsigned long long)m->blocks * m->threads;
        m->iterations = L->iterations;
        m->out.d_out = d_out;
        m->out.d_keep = d_keep;
        m->h_out = h_out;
        m->out.bytes = threads * LAT_CHAINS * (d->op == LAT_FMA_F64 ? 8 : 4);
        math_reference(m, m->ref);
        kit_row_name(&L->mrows[i], d->key, NULL, "%s", d->name);
        kit_row_measure(&L->mrows[i], &w, &L->run.policy);
        L->run.pass &= kit_row_ok(&L->mrows[i], threads * LAT_CHAINS);
        L->rate[i] = L->mrows[i].timed ? lat_chain_evaluations(d->op, threads, L->iterations) /
                                             (L->mrows[i].t.median_ms * 1e-3) /
                                             (L->run.dev.sms * L->clock_ghz * 1e9)
                                       : 0.0;
    }
    KIT_CHECK(cudaFree(d_out));
    KIT_CHECK(cudaFree(d_keep));
    free(h_out);
    part6_accuracy(L);
}

static void part6_print(lab *L)
{
    printf("Part 6: instruction throughput, %u threads x %d chains x %d steps; results per clock per SM\n"
           "(at the chase's %.3f GHz) beside the Programming Guide's arithmetic instruction table\n\n",
           L->mr[0].blocks * L->mr[0].threads, LAT_CHAINS, L->iterations, L->clock_ghz);
    printf("%-24s %10s %12s %12s %9s %12s %12s  %s\n", "operation", "time (ms)", "per clk/SM", "documented",
           "max ulp", "max abs err", "documented", "check");
    for (int i = 0; i < MATH_ROWS; i++) {
        const math_row_def *m = &math_rows[i];
        char doc[16] = "-";
        if (L->doc && m->doc != DOC_NONE)
            snprintf(doc, sizeof doc, "%d", L->doc->per_clock[m->doc]);
        printf("%-24s %10.3f %12.1f %12s ", m->name, L->mrows[i].t.median_ms, L->rate[i], doc);
        if (!m->bound)
            printf("%9s %12s %12s  %s\n", "-", "-", "-", kit_row_check_word(&L->mrows[i]));
        else
            printf("%9.1f %12.2e %12s  %s\n", L->acc[i].max_ulp, L->acc[i].max_abs, m->bound,
                   kit_row_check_word(&L->mrows[i]));
    }
    printf("(FMA rows count fused multiply-adds; the others one evaluation and one FMA each. The SFU\n"
           "figure, 16, is what __expf and __sinf need; expf and sinf are sequences of FP32 instructions.\n"
           "Accuracy over %s inputs: exp on [-10, 10], sin on [-pi, pi], against the CPU in double.)\n\n",
           kit_grouped(MAP_SIZE));
}

static void part6_csv(lab *L, FILE *f)
{
    for (int i = 0; i < MATH_ROWS; i++)
        csv_line(L, f, "throughput,\"%s\",%d,,%.6f,%.3f,per clock per SM,%d\n", math_rows[i].name,
                 L->run.dev.max_warps_per_sm, L->mrows[i].t.median_ms, L->rate[i], L->mrows[i].wrong == 0);
}

static void part6_kv(lab *L)
{
    for (int i = 0; i < MATH_ROWS; i++) {
        const char *key = math_rows[i].key;
        kit_row_kv(&L->mrows[i]);
        kit_kv(key_of("rate-%s-per-clock-per-sm", key), "%.2f", L->rate[i]);
        if (!math_rows[i].bound)
            continue;
        kit_kv(key_of("max-ulp-%s", key), "%.3f", L->acc[i].max_ulp);
        kit_kv(key_of("max-abs-error-%s", key), "%.4g", L->acc[i].max_abs);
        kit_kv(key_of("max-rel-error-%s", key), "%.4g", L->acc[i].max_rel);
    }
    /* Rows 0 and 1: fmaf and fma; 2 and 3: expf and __expf; 5 and 6: sinf and __sinf. */
    if (L->mrows[0].timed && L->mrows[1].timed)
        kit_kv("ratio-f32-over-f64", "%.3f", L->rate[0] / L->rate[1]);
    if (L->doc)
        kit_kv("documented-ratio-f32-over-f64", "%.3f",
               (double)L->doc->per_clock[DOC_FP32] / L->doc->per_clock[DOC_FP64]);
    if (L->mrows[2].timed && L->mrows[3].timed)
        kit_kv("speedup-expf-intrinsic", "%.3f", L->mrows[2].t.median_ms / L->mrows[3].t.median_ms);
    if (L->mrows[5].timed && L->mrows[6].timed)
        kit_kv("speedup-sinf-intrinsic", "%.3f", L->mrows[5].t.median_ms / L->mrows[6].t.median_ms);
    kit_kv("fast-math-differs", "%d", L->fast_differs == 2);
}

/* Beyond every row's results (judged as measured) and NaNs (as the
 * accuracy was measured): the fast-math part built with its flag. */
static void part6_verdict(lab *L)
{
    if (L->fast_differs != 2) {
        fprintf(stderr, "%s: the --use_fast_math build's expf and sinf gave the accurate functions' results: "
                        "07-latency/harness-fastmath.cu was not built with the flag (Makefile)\n",
                kit_program);
        L->run.pass = 0;
    }
}

static void summary(lab *L)
{
    kit_kv("summary", "a load from DRAM takes %.0f cycles (%.0f ns), the memory streams %.0f GB/s: %.0f KB in "
                      "flight, %.1f warps per SM at one load each; sum_tlp reaches %.0f%% of its best at %d; "
                      "%d warps with 16 loads each reach %.0f%% of sum_tlp with all %d",
           L->sets[DRAM].cycles, L->sets[DRAM].ns, L->stream.gbs, L->want.bytes_in_flight / 1000,
           L->want.warps_per_sm, 100 * KNEE_FRACTION, L->knee, ILP_WARPS, 100 * L->ilp_fraction,
           L->run.dev.max_warps_per_sm);
    kit_kv("course-fermi", "800 cycles x 92 bytes/cycle (144 GB/s / 1.566 GHz) = 74 KB in flight, 18,500 "
                           "threads, 579 warps, 36 per SM of 16");
    kit_kv("course-kepler", "800 cycles x 96 bytes/cycle = 77 KB (printed); 250 GB/s / 1.6 GHz is 156 "
                            "bytes/cycle: 125 KB");
    kit_kv("course-k40", "the notes' Kepler: 250 GB/s / 1.6 GHz = 156 bytes/cycle (printed 96), x 800 cycles "
                         "= 125 KB in flight; global latency 400-800 cycles");
}

static void teardown(lab *L) { free(L->h_in); }

static const kit_part parts[] = {
    {part1_measure, part1_print, part1_csv, part1_kv, NULL},
    {part2_measure, part2_print, part2_csv, part2_kv, NULL},
    {part3_measure, part3_print, part3_csv, part3_kv, NULL},
    {part4_measure, part4_print, part4_csv, part4_kv, NULL},
    {part5_measure, part5_print, part5_csv, part5_kv, part5_verdict},
    {part6_measure, part6_print, part6_csv, part6_kv, part6_verdict},
};

int main(int argc, char **argv)
{
    static lab L; /* large: the rows of six parts */
    kit_option opts[] = {
        KIT_LAB_OPTIONS(&L.run.c),
        {"--steps", KIT_OPT_INT, &L.steps, "S", "dependent loads timed in each pointer chase (default 20000)", 100,
         200000, NULL},
        {"--loads", KIT_OPT_INT, &L.only_loads, "K",
         "run sum_ilp with only this many loads per thread instead of 1, 2, 4, 8, 16", 1, LAT_MAX_LOADS, NULL},
        {"--iterations", KIT_OPT_INT, &L.iterations, "I",
         "steps of each compute-bound chain in part 6 (default 4096)", 1, 1 << 20, NULL},
    };
    const kit_lab lab07 = {
        "07-latency",
        "Lab 07: latency hiding, Little's law on this GPU",
        "Lab 07: latency hiding, Little's law on this GPU. Measures the latency of one\n"
        "load (pointer chasing in L1, L2 and DRAM) and the memory bandwidth, checks\n"
        "your littles_law against them, and times your sum_tlp and sum_ilp kernels\n"
        "against the warps resident per SM and the loads in flight per thread; then\n"
        "float against double, and expf and sinf against their intrinsics and\n"
        "--use_fast_math, with the accuracy each loses.",
        opts, KIT_COUNT(opts), NULL, setup, NULL, facts, summary, teardown, parts, KIT_COUNT(parts),
    };
    kit_run_defaults(&L.run);
    L.steps = DEFAULT_STEPS;
    L.iterations = DEFAULT_ITERATIONS;
    return kit_lab_main(&lab07, &L, &L.run, argc, argv);
}
