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

#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_host.h"
#include "kit_report.h"
#include "kit_rng.h"
#include "kit_row.h"
#include "kit_timing.h"

#include "contract.h"
#include "kit_student.h"

#define LAT_MATH_TABLE lat_math_precise
#define LAT_MATH_FAST 0
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

typedef struct {
    const char *key, *name;
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
                        kit_program, c->name, h.end, c->warm + steps);
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

typedef struct {
    enum sum_kind kind;
    unsigned int n, blocks, threads;
    size_t smem;
    int loads, warps_per_sm, blocks_per_sm;
    float *d_in, *d_partial, *d_keep, *h_partial;
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
    float *partial = r->d_partial;
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

static void sum_poison(void *p)
{
    sum_run *r = (sum_run *)p;
    KIT_CHECK(cudaMemset(r->d_partial, 0xff, sum_threads(r) * sizeof(float)));
}

static long long sum_verify(void *p, const kit_row *row)
{
    sum_run *r = (sum_run *)p;
    unsigned int T = sum_threads(r);
    const float *want = expected_partials(r->h_in, r->n, T, r->kind == STREAM ? 4 : 1);
    long long bad = 0;

    KIT_CHECK(cudaMemcpy(r->h_partial, r->d_partial, T * sizeof(float), cudaMemcpyDeviceToHost));
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

static void sum_keep(void *p)
{
    sum_run *r = (sum_run *)p;
    KIT_CHECK(cudaMemcpy(r->d_keep, r->d_partial, sum_threads(r) * sizeof(float), cudaMemcpyDeviceToDevice));
}

static long long sum_compare(void *p)
{
    sum_run *r = (sum_run *)p;
    return kit_device_differ(r->d_partial, r->d_keep, sum_threads(r) * sizeof(float));
}

/* Timed runs of the student's sums with inputs of their own: d_keep holds
 * what they must give. */
static void sum_refresh(void *p, unsigned long long draw)
{
    sum_run *r = (sum_run *)p;
    fill_sixteenths<<<1024, 256>>>(r->d_in, r->n, kit_row_draw_seed(r->seed, draw));
    expected_partials_device<<<1024, 256>>>(r->d_in, r->n, sum_threads(r), r->d_keep);
    KIT_CHECK_LAUNCH();
}

static void sum_restore(void *p)
{
    sum_run *r = (sum_run *)p;
    fill_sixteenths<<<1024, 256>>>(r->d_in, r->n, r->seed);
    KIT_CHECK_LAUNCH();
}

static void measure_sum(sum_run *r, kit_row *row, const kit_policy *policy, int count)
{
    int fresh = r->kind != STREAM;
    kit_row_work w = {r,
                      count ? sum_counted : NULL,
                      sum_timed,
                      sum_poison,
                      sum_verify,
                      sum_keep,
                      sum_compare,
                      fresh ? sum_refresh : NULL,
                      fresh ? sum_compare : NULL,
                      fresh ? sum_restore : NULL};
    kit_row_measure(row, &w, policy);
}

static double row_gbs(const kit_row *row, unsigned int n)
{
    return row->timed ? 4.0 * n / (row->t.median_ms * 1e6) : 0.0;
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
typedef struct {
    int cc, fp32, fp64, sfu;
} throughput_doc;

static const throughput_doc documented[] = {
    {70, 64, 32, 16}, {75, 64, 2, 16}, {80, 64, 32, 16}, {86, 128, 2, 16}, {89, 128, 2, 16}, {90, 128, 64, 16},
};

static const throughput_doc *documented_for(const kit_device *d)
{
    for (int i = 0; i < KIT_COUNT(documented); i++)
        if (documented[i].cc == d->cc_major * 10 + d->cc_minor)
            return &documented[i];
    return NULL;
}

typedef struct {
    const char *key, *name;
    const lat_math_api *api;
    int op;
} math_row_def;

static const math_row_def math_rows[] = {
    {"fma-f32", "fmaf, float", &lat_math_precise, LAT_FMA_F32},
    {"fma-f64", "fma, double", &lat_math_precise, LAT_FMA_F64},
    {"expf", "expf", &lat_math_precise, LAT_EXPF},
    {"expf-intrinsic", "__expf", &lat_math_precise, LAT_EXPF_INTRINSIC},
    {"expf-fast-math", "expf, --use_fast_math", &lat_math_fast, LAT_EXPF},
    {"sinf", "sinf", &lat_math_precise, LAT_SINF},
    {"sinf-intrinsic", "__sinf", &lat_math_precise, LAT_SINF_INTRINSIC},
    {"sinf-fast-math", "sinf, --use_fast_math", &lat_math_fast, LAT_SINF},
};
#define MATH_ROWS KIT_COUNT(math_rows)

typedef struct {
    const math_row_def *def;
    unsigned int blocks, threads;
    int iterations;
    void *d_out, *d_keep, *h_out;
    size_t bytes;
    double *ref; /* LAT_STARTS * LAT_CHAINS values */
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
                int is_exp = op == LAT_EXPF || op == LAT_EXPF_INTRINSIC;
                for (int i = 0; i < m->iterations; i++)
                    x = a * (is_exp ? exp(x) : sin(x)) + b;
            }
            ref[s * LAT_CHAINS + c] = x;
        }
}

static void math_timed(void *p)
{
    math_run *m = (math_run *)p;
    m->def->api->chain(m->def->op, m->d_out, m->blocks, m->threads, m->iterations);
}

static void math_poison(void *p)
{
    math_run *m = (math_run *)p;
    KIT_CHECK(cudaMemset(m->d_out, 0xff, m->bytes));
}

static long long math_verify(void *p, const kit_row *row)
{
    math_run *m = (math_run *)p;
    unsigned long long values = (unsigned long long)m->blocks * m->threads * LAT_CHAINS;
    int op = m->def->op;
    long long bad = 0;

    KIT_CHECK(cudaMemcpy(m->h_out, m->d_out, m->bytes, cudaMemcpyDeviceToHost));
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

static void math_keep(void *p)
{
    math_run *m = (math_run *)p;
    KIT_CHECK(cudaMemcpy(m->d_keep, m->d_out, m->bytes, cudaMemcpyDeviceToDevice));
}

static long long math_compare(void *p)
{
    math_run *m = (math_run *)p;
    return kit_device_differ(m->d_out, m->d_keep, m->bytes);
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
    int is_exp = op == LAT_EXPF || op == LAT_EXPF_INTRINSIC;

    api->map(op, d_x, d_y, n);
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaMemcpy(y, d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (unsigned int i = 0; i < n; i++) {
        double want = is_exp ? exp((double)x[i]) : sin((double)x[i]), err = fabs((double)y[i] - want);
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

/* Little's law's bandwidth for `loads` loads of 128 bytes per warp in flight
 * on every SM, capped at the measured bandwidth. */
static double law_gbs(double warps_loads, int sms, double latency_ns, double bandwidth)
{
    double gbs = warps_loads * 32 * 4 * sms / latency_ns;
    return gbs < bandwidth ? gbs : bandwidth;
}

/* ---- the lab, step by step ------------------------------------------------------ */

typedef struct {
    kit_common c;
    kit_device dev;
    int steps, only_loads, iterations;
    kit_policy policy;
    unsigned int n; /* floats in the streamed array */
    int pass;
    /* Part 1 */
    chase_set sets[LEVELS];
    double clock_ghz;
    /* Part 2 */
    sum_run base, stream;
    kit_counter counter;
    float *h_in;
    kit_row stream_row;
    double bandwidth;
    /* Part 3 */
    gpu_facts facts, fermi, kepler;
    in_flight mine, mine_fermi, mine_kepler, want;
    int law_ok;
    /* Part 4 */
    sum_run runs[KIT_COUNT(sweep_warps)];
    kit_row occ_rows[KIT_COUNT(sweep_warps)];
    int nocc, knee, full;
    double best_occ;
    /* Part 5 */
    sum_run ilp_runs[8];
    kit_row ilp_rows[8];
    int ilp_loads[8], nilp, ilp_counted;
    double best_ilp, ilp_1, ilp_16;
    /* Part 6 */
    const throughput_doc *doc;
    math_run mr[MATH_ROWS];
    kit_row mrows[MATH_ROWS];
    accuracy acc[MATH_ROWS];
    double rate[MATH_ROWS];
    int fast_differs;
} lab;

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
static void choose_size(lab *L)
{
    const kit_device *d = &L->dev;
    unsigned long long sets[LEVELS], chase, stream, need;
    unsigned long long most = 32ull * d->sms * MAX_EXACT_PER_THREAD;

    L->n = (unsigned int)(L->c.size ? L->c.size : kit_default_size(d->l2_bytes, d->free_bytes, 4, 8));
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

static void part1_latency(lab *L)
{
    unsigned long long bytes[LEVELS], rng = L->c.seed, flush_words = 2ull * L->dev.l2_bytes / 4;
    const char *keys[LEVELS] = {"l1", "l2", "dram"}, *names[LEVELS] = {"L1", "L2", "DRAM only"};
    unsigned int *d_flush, *d_sink;
    chase_out *d_out;
    double ratio[LEVELS];

    chase_set_sizes(&L->dev, bytes);
    KIT_CHECK(cudaMalloc((void **)&d_flush, flush_words * 4));
    KIT_CHECK(cudaMemset(d_flush, 0, flush_words * 4));
    KIT_CHECK(cudaMalloc((void **)&d_sink, sizeof(unsigned int)));
    KIT_CHECK(cudaMalloc((void **)&d_out, sizeof(chase_out)));
    KIT_CHECK(cudaMemset(d_out, 0, sizeof(chase_out))); /* its padding too: copied back whole */
    for (int lv = 0; lv < LEVELS; lv++) {
        chase_set *c = &L->sets[lv];
        memset(c, 0, sizeof *c);
        c->key = keys[lv];
        c->name = names[lv];
        chase_build(c, bytes[lv], &rng);
        chase_measure(c, (enum level)lv, (unsigned int)L->steps, d_flush, flush_words, d_out, d_sink);
        L->pass &= c->wrong_runs == 0;
        ratio[lv] = c->cycles / c->ns;
        KIT_CHECK(cudaFree(c->d_next));
        free(c->order);
    }
    L->clock_ghz = median_of(ratio, LEVELS);
    KIT_CHECK(cudaFree(d_flush));
    KIT_CHECK(cudaFree(d_sink));
    KIT_CHECK(cudaFree(d_out));
}

/* The streamed array (and its host copy), then the kit's float4 stream. */
static void part2_bandwidth(lab *L)
{
    sum_run *b = &L->base;
    size_t most_threads = (size_t)L->dev.sms * L->dev.max_threads_per_sm;

    memset(b, 0, sizeof *b);
    b->n = L->n;
    kit_counter_create(&L->counter, 0, 0);
    b->counter = &L->counter;
    KIT_CHECK(cudaMalloc((void **)&b->d_in, (size_t)L->n * 4));
    b->seed = L->c.seed;
    fill_sixteenths<<<1024, 256>>>(b->d_in, L->n, b->seed);
    KIT_CHECK_LAUNCH();
    L->h_in = (float *)kit_host_alloc((size_t)L->n * 4);
    KIT_CHECK(cudaMemcpy(L->h_in, b->d_in, (size_t)L->n * 4, cudaMemcpyDeviceToHost));
    b->h_in = L->h_in;
    KIT_CHECK(cudaMalloc((void **)&b->d_partial, most_threads * 4));
    KIT_CHECK(cudaMalloc((void **)&b->d_keep, most_threads * 4));
    b->h_partial = (float *)kit_host_alloc(most_threads * 4);

    L->stream = *b;
    L->stream.kind = STREAM;
    L->stream.threads = STREAM_THREADS;
    L->stream.blocks = (unsigned int)(L->dev.sms * active_blocks((const void *)stream_vec4, STREAM_THREADS, 0));
    kit_row_name(&L->stream_row, "stream", NULL, "the kit's float4 stream");
    measure_sum(&L->stream, &L->stream_row, &L->policy, 0);
    L->pass &= kit_row_ok(&L->stream_row, sum_threads(&L->stream));
    L->bandwidth = row_gbs(&L->stream_row, L->n);
}

/* The student's littles_law on this GPU's figures and on the notes'. */
static void part3_littles_law(lab *L)
{
    gpu_facts *g = &L->facts;

    memset(g, 0, sizeof *g);
    g->l1_cycles = L->sets[L1].cycles;
    g->l2_cycles = L->sets[L2].cycles;
    g->dram_cycles = L->sets[DRAM].cycles;
    g->clock_ghz = L->clock_ghz;
    g->bandwidth_gbs = L->bandwidth > 0 ? L->bandwidth : 1.0;
    g->sms = L->dev.sms;
    g->warp_size = L->dev.warp_size;
    g->bytes_per_load = 4;
    g->resident_warps = ILP_WARPS;
    L->fermi = *g;
    L->fermi.l1_cycles = L->fermi.l2_cycles = 0;
    L->fermi.dram_cycles = 800;
    L->fermi.clock_ghz = 1.566;
    L->fermi.bandwidth_gbs = 144;
    L->fermi.sms = 16;
    L->kepler = L->fermi;
    L->kepler.clock_ghz = 1.6;
    L->kepler.bandwidth_gbs = 250;
    memset(&L->mine, 0, sizeof L->mine);
    memset(&L->mine_fermi, 0, sizeof L->mine_fermi);
    memset(&L->mine_kepler, 0, sizeof L->mine_kepler);
    timed->littles_law(g, &L->mine);
    timed->littles_law(&L->fermi, &L->mine_fermi);
    timed->littles_law(&L->kepler, &L->mine_kepler);
    L->want = law_reference(g);
    L->law_ok = law_check("this GPU", g, &L->mine, 1);
    L->law_ok = L->law_ok && law_check("the course's Fermi", &L->fermi, &L->mine_fermi, 1);
    L->law_ok = L->law_ok && law_check("the course's Kepler", &L->kepler, &L->mine_kepler, 0);
    L->pass &= L->law_ok;
}

/* sum_tlp at each number of resident warps per SM the GPU can hold. */
static void part4_occupancy(lab *L)
{
    const void *kernel = kit_kernels_timed[KIT_KERNEL_sum_tlp];
    size_t most = allow_shared(kernel, &L->dev);

    L->full = -1;
    for (int i = 0; i < KIT_COUNT(sweep_warps); i++) {
        sum_run *r = &L->runs[L->nocc];
        kit_row *row = &L->occ_rows[L->nocc];
        char key[24];
        *r = L->base;
        r->kind = SUM_TLP;
        r->loads = 1;
        if (!occupancy_config(kernel, &L->dev, most, sweep_warps[i], r))
            continue;
        snprintf(key, sizeof key, "occ-%d", sweep_warps[i]);
        kit_row_name(row, key, NULL, "sum_tlp, %d warps/SM", sweep_warps[i]);
        /* Counted once, at full occupancy, to compare with sum_ilp's counts. */
        measure_sum(r, row, &L->policy, sweep_warps[i] == L->dev.max_warps_per_sm);
        L->pass &= kit_row_ok(row, sum_threads(r));
        if (sweep_warps[i] == L->dev.max_warps_per_sm)
            L->full = L->nocc;
        L->best_occ = fmax(L->best_occ, row_gbs(row, L->n));
        L->nocc++;
    }
    for (int i = 0; i < L->nocc && L->best_occ > 0; i++)
        if (!L->knee && row_gbs(&L->occ_rows[i], L->n) >= KNEE_FRACTION * L->best_occ)
            L->knee = L->runs[i].warps_per_sm;
}

/* sum_ilp at ILP_WARPS warps per SM: 1 to 16 loads per thread, and the
 * student's Little's-law K where it is none of these (or --loads K only). */
static void part5_ilp(lab *L)
{
    const void *kernel = kit_kernels_timed[KIT_KERNEL_sum_ilp];
    size_t most = allow_shared(kernel, &L->dev);
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
        sum_run *r = &L->ilp_runs[L->nilp];
        kit_row *row = &L->ilp_rows[L->nilp];
        char key[24];
        /* Counted once: with the most loads (or the one K asked for). */
        int count = ks[i] == (L->only_loads ? L->only_loads : LAT_MAX_LOADS);
        *r = L->base;
        r->kind = SUM_ILP;
        r->loads = ks[i];
        if (!occupancy_config(kernel, &L->dev, most, ILP_WARPS, r)) {
            fprintf(stderr, "%s: note: this GPU cannot hold sum_ilp at %d warps per SM; part 5 is left out\n",
                    kit_program, ILP_WARPS);
            break;
        }
        snprintf(key, sizeof key, "ilp-%d", ks[i]);
        kit_row_name(row, key, "TODO(2)", "sum_ilp, %d load%s/thread", ks[i], ks[i] > 1 ? "s" : "");
        L->ilp_loads[L->nilp] = ks[i];
        measure_sum(r, row, &L->policy, count);
        L->pass &= kit_row_ok(row, sum_threads(r));
        L->best_ilp = fmax(L->best_ilp, row_gbs(row, L->n));
        if (ks[i] == 1)
            L->ilp_1 = row_gbs(row, L->n);
        if (ks[i] == LAT_MAX_LOADS)
            L->ilp_16 = row_gbs(row, L->n);
        if (count)
            L->ilp_counted = L->nilp;
        L->nilp++;
    }
    kit_counter_destroy(&L->counter);
    KIT_CHECK(cudaFree(L->base.d_in));
    KIT_CHECK(cudaFree(L->base.d_partial));
    KIT_CHECK(cudaFree(L->base.d_keep));
    free(L->base.h_partial);
}

/* The compute-bound chains: timed, every thread's result checked. */
static void part6_throughput(lab *L)
{
    size_t most_values = (size_t)L->dev.sms * L->dev.max_threads_per_sm * LAT_CHAINS;
    void *d_out, *d_keep, *h_out;

    L->doc = documented_for(&L->dev);
    KIT_CHECK(cudaMalloc(&d_out, most_values * 8));
    KIT_CHECK(cudaMalloc(&d_keep, most_values * 8));
    h_out = kit_host_alloc(most_values * 8);
    for (int i = 0; i < MATH_ROWS; i++) {
        math_run *m = &L->mr[i];
        const math_row_def *d = &math_rows[i];
        int active = active_blocks(d->api->chain_kernel(d->op), MATH_THREADS, 0);
        unsigned long long threads;
        kit_row_work w = {m, NULL, math_timed, math_poison, math_verify, math_keep, math_compare, NULL, NULL, NULL};

        memset(m, 0, sizeof *m);
        m->def = d;
        m->threads = MATH_THREADS;
        m->blocks = (unsigned int)(L->dev.sms * (active > 0 ? active : 1));
        m->iterations = L->iterations;
        m->d_out = d_out;
        m->d_keep = d_keep;
        m->h_out = h_out;
        threads = (unsigned long long)m->blocks * m->threads;
        m->bytes = threads * LAT_CHAINS * (d->op == LAT_FMA_F64 ? 8 : 4);
        m->ref = (double *)kit_host_alloc(LAT_STARTS * LAT_CHAINS * sizeof(double));
        math_reference(m, m->ref);
        kit_row_name(&L->mrows[i], d->key, NULL, "%s", d->name);
        kit_row_measure(&L->mrows[i], &w, &L->policy);
        L->pass &= kit_row_ok(&L->mrows[i], threads * LAT_CHAINS);
        L->rate[i] = L->mrows[i].timed ? lat_chain_evaluations(d->op, threads, L->iterations) /
                                             (L->mrows[i].t.median_ms * 1e-3) / (L->dev.sms * L->clock_ghz * 1e9)
                                       : 0.0;
        free(m->ref);
        m->ref = NULL;
    }
    KIT_CHECK(cudaFree(d_out));
    KIT_CHECK(cudaFree(d_keep));
    free(h_out);
}

/* The functions' accuracy over MAP_SIZE inputs drawn from the seed. */
static void part6_accuracy(lab *L)
{
    float *x_exp = (float *)kit_host_alloc(MAP_SIZE * 4), *x_sin = (float *)kit_host_alloc(MAP_SIZE * 4);
    float *y = (float *)kit_host_alloc(MAP_SIZE * 4), *y_precise = (float *)kit_host_alloc(MAP_SIZE * 4);
    float *d_x_exp, *d_x_sin, *d_y;
    unsigned long long s = L->c.seed ^ 0x5eedull;

    for (unsigned int i = 0; i < MAP_SIZE; i++) {
        x_exp[i] = (float)(-10.0 + 20.0 * (double)(splitmix64(&s) >> 11) / 9007199254740992.0);
        x_sin[i] = (float)(M_PI * (-1.0 + 2.0 * (double)(splitmix64(&s) >> 11) / 9007199254740992.0));
    }
    KIT_CHECK(cudaMalloc((void **)&d_x_exp, MAP_SIZE * 4));
    KIT_CHECK(cudaMalloc((void **)&d_x_sin, MAP_SIZE * 4));
    KIT_CHECK(cudaMalloc((void **)&d_y, MAP_SIZE * 4));
    KIT_CHECK(cudaMemcpy(d_x_exp, x_exp, MAP_SIZE * 4, cudaMemcpyHostToDevice));
    KIT_CHECK(cudaMemcpy(d_x_sin, x_sin, MAP_SIZE * 4, cudaMemcpyHostToDevice));
    for (int i = 0; i < MATH_ROWS; i++) {
        const math_row_def *d = &math_rows[i];
        int is_exp = d->op == LAT_EXPF || d->op == LAT_EXPF_INTRINSIC;
        memset(&L->acc[i], 0, sizeof L->acc[i]);
        if (d->op == LAT_FMA_F32 || d->op == LAT_FMA_F64)
            continue;
        L->acc[i] = measure_accuracy(d->api, d->op, is_exp ? d_x_exp : d_x_sin, d_y, is_exp ? x_exp : x_sin, y,
                                     MAP_SIZE);
        if (L->acc[i].nans) {
            fprintf(stderr, "%s: %s gave %lld NaNs on finite inputs\n", kit_program, d->name, L->acc[i].nans);
            L->pass = 0;
        }
        /* The fast-math build must differ from the accurate one somewhere. */
        if (d->api == &lat_math_precise && (d->op == LAT_EXPF || d->op == LAT_SINF))
            memcpy(y_precise, y, MAP_SIZE * 4);
        if (d->api == &lat_math_fast)
            L->fast_differs += memcmp(y, y_precise, MAP_SIZE * 4) != 0;
    }
    KIT_CHECK(cudaFree(d_x_exp));
    KIT_CHECK(cudaFree(d_x_sin));
    KIT_CHECK(cudaFree(d_y));
    free(x_exp);
    free(x_sin);
    free(y);
    free(y_precise);
}

static double tlp_full_gbs(const lab *L) { return L->full >= 0 ? row_gbs(&L->occ_rows[L->full], L->n) : 0.0; }

static double ilp_fraction(const lab *L)
{
    double full = tlp_full_gbs(L);
    return full > 0 ? L->best_ilp / full : 0.0;
}

static void print_tables(const lab *L)
{
    const kit_device *d = &L->dev;
    const chase_set *sets = L->sets;
    const in_flight *mine = &L->mine;
    in_flight course_f = law_reference(&L->fermi), course_k = law_reference(&L->kepler);
    double lat_ns = sets[DRAM].ns, bw = L->bandwidth > 0 ? L->bandwidth : 1.0;
    unsigned int n = L->n;

    kit_banner("Lab 07: latency hiding, Little's law on this GPU", d);
    printf("Part 1: the latency of one load. One thread follows a random cycle, each load's address\n"
           "the value of the one before; %s dependent loads timed per working set, median of %d runs\n\n",
           kit_grouped((unsigned long long)L->steps), CHASE_RUNS);
    printf("%-12s %12s %12s %10s %10s  %s\n", "working set", "size", "lines", "cycles", "ns", "check");
    for (int lv = 0; lv < LEVELS; lv++)
        printf("%-12s %12s %12s %10.1f %10.1f  %s\n", sets[lv].name, bytes_text(sets[lv].bytes),
               kit_grouped(sets[lv].slots), sets[lv].cycles, sets[lv].ns, sets[lv].wrong_runs ? "WRONG" : "ok");
    printf("the SM clock while chasing: %.3f GHz (cycles per ns)\n", L->clock_ghz);
    printf("the course (notes 001 and 003): global memory 400 to 800 cycles, arithmetic 10 to 20\n\n");

    printf("Part 2: bandwidth. The kit's streaming kernel (float4 loads, 4 in flight per thread, full\n"
           "occupancy) reads %s floats, %s, %.1fx the L2: %.3f ms, %.0f GB/s  %s\n\n",
           kit_grouped(n), bytes_text(4ull * n), 4.0 * n / d->l2_bytes, L->stream_row.t.median_ms, L->bandwidth,
           kit_row_check_word(&L->stream_row));

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
           mine->threads, mine->warps, mine->warps_per_sm, d->max_warps_per_sm, ILP_WARPS, mine->loads_per_thread);

    printf("Part 4: sum_tlp (one load in flight per thread) against the warps resident per SM\n"
           "(exactly the blocks that fit at once; dynamic shared memory keeps more from fitting)\n\n");
    printf("%9s %8s %8s %10s %10s %10s %9s %9s %10s  %s\n", "warps/SM", "threads", "blocks", "shared", "in flight",
           "time (ms)", "GB/s", "of part 2", "law GB/s", "check");
    for (int i = 0; i < L->nocc; i++) {
        const sum_run *r = &L->runs[i];
        double gbs = row_gbs(&L->occ_rows[i], n);
        printf("%9d %8u %8d %10s %10.0f %10.3f %9.0f %8.0f%% %10.0f  %s%s\n", r->warps_per_sm, r->threads,
               r->blocks_per_sm, r->smem ? bytes_text(r->smem) : "0", r->warps_per_sm * 128.0,
               L->occ_rows[i].t.median_ms, gbs, 100 * gbs / bw, law_gbs(r->warps_per_sm, d->sms, lat_ns, bw),
               kit_row_check_word(&L->occ_rows[i]), r->warps_per_sm == L->knee ? "  <- knee" : "");
    }
    printf("(in flight: bytes per SM, one 128-byte load per warp; shared: dynamic shared memory per\n"
           "block; law: what Little's law allows with part 1's DRAM latency, capped at part 2's bandwidth)\n");
    printf("the curve reaches %.0f%% of its best at %d warps per SM; Little's law asks %.1f.\n\n",
           100 * KNEE_FRACTION, L->knee, L->want.warps_per_sm);

    printf("Part 5: sum_ilp (TODO(2)) at %d warps per SM, against the loads in flight per thread\n\n", ILP_WARPS);
    printf("%9s %9s %10s %10s %9s %9s %10s  %s\n", "loads", "warps/SM", "in flight", "time (ms)", "GB/s",
           "of part 2", "law GB/s", "check");
    for (int i = 0; i < L->nilp; i++) {
        double gbs = row_gbs(&L->ilp_rows[i], n);
        int k = L->ilp_loads[i];
        printf("%9d %9d %10.0f %10.3f %9.0f %8.0f%% %10.0f  %s%s\n", k, ILP_WARPS, ILP_WARPS * k * 128.0,
               L->ilp_rows[i].t.median_ms, gbs, 100 * gbs / bw, law_gbs((double)ILP_WARPS * k, d->sms, lat_ns, bw),
               kit_row_check_word(&L->ilp_rows[i]), k == L->want.loads_per_thread ? "  <- Little's law" : "");
    }
    if (L->full >= 0 && L->nilp)
        printf("the best of these: %.0f GB/s with %d warps per SM, %.0f%% of sum_tlp's %.0f GB/s with all %d.\n",
               L->best_ilp, ILP_WARPS, 100 * ilp_fraction(L), tlp_full_gbs(L), d->max_warps_per_sm);
    printf("\n");

    printf("Part 6: instruction throughput, %u threads x %d chains x %d steps; results per clock per SM\n"
           "(at the chase's %.3f GHz) beside the Programming Guide's arithmetic instruction table\n\n",
           L->mr[0].blocks * L->mr[0].threads, LAT_CHAINS, L->iterations, L->clock_ghz);
    printf("%-24s %10s %12s %12s %9s %12s %12s  %s\n", "operation", "time (ms)", "per clk/SM", "documented",
           "max ulp", "max abs err", "documented", "check");
    for (int i = 0; i < MATH_ROWS; i++) {
        const math_row_def *m = &math_rows[i];
        int fast = m->api == &lat_math_fast;
        int docv = !L->doc                  ? 0
                   : m->op == LAT_FMA_F32   ? L->doc->fp32
                   : m->op == LAT_FMA_F64   ? L->doc->fp64
                   : m->op == LAT_EXPF_INTRINSIC || m->op == LAT_SINF_INTRINSIC || fast ? L->doc->sfu
                                                                                         : 0;
        const char *bound = m->op == LAT_EXPF             ? (fast ? "2+|1.173x|" : "2 ulp")
                            : m->op == LAT_EXPF_INTRINSIC ? "2+|1.173x|"
                            : m->op == LAT_SINF           ? (fast ? "2^-21.41 abs" : "2 ulp")
                            : m->op == LAT_SINF_INTRINSIC ? "2^-21.41 abs"
                                                          : "-";
        printf("%-24s %10.3f %12.1f ", m->name, L->mrows[i].t.median_ms, L->rate[i]);
        if (docv)
            printf("%12d ", docv);
        else
            printf("%12s ", "-");
        if (m->op == LAT_FMA_F32 || m->op == LAT_FMA_F64)
            printf("%9s %12s %12s  %s\n", "-", "-", "-", kit_row_check_word(&L->mrows[i]));
        else
            printf("%9.1f %12.2e %12s  %s\n", L->acc[i].max_ulp, L->acc[i].max_abs, bound,
                   kit_row_check_word(&L->mrows[i]));
    }
    printf("(FMA rows count fused multiply-adds; the others one evaluation and one FMA each. The SFU\n"
           "figure, 16, is what __expf and __sinf need; expf and sinf are sequences of FP32 instructions.\n"
           "Accuracy over %s inputs: exp on [-10, 10], sin on [-pi, pi], against the CPU in double.)\n\n",
           kit_grouped(MAP_SIZE));
}

static void write_csv(const lab *L, FILE *csv)
{
    const kit_device *d = &L->dev;
    unsigned int n = L->n;
    unsigned long long seed = L->c.seed;

    fprintf(csv, "gpu,size,seed,part,row,warps_per_sm,loads_per_thread,time_ms,value,unit,correct\n");
    for (int lv = 0; lv < LEVELS; lv++) {
        const chase_set *c = &L->sets[lv];
        kit_csv_prefix(csv, d, n, seed);
        fprintf(csv, "latency,%s,1,1,%.6f,%.4f,cycles,%d\n", c->key, c->ns * L->steps * 1e-6, c->cycles,
                c->wrong_runs == 0);
        kit_csv_prefix(csv, d, n, seed);
        fprintf(csv, "latency,%s,1,1,%.6f,%.4f,ns,%d\n", c->key, c->ns * L->steps * 1e-6, c->ns, c->wrong_runs == 0);
    }
    kit_csv_prefix(csv, d, n, seed);
    fprintf(csv, "bandwidth,stream,%d,4,%.6f,%.1f,GB/s,%d\n", d->max_warps_per_sm, L->stream_row.t.median_ms,
            L->bandwidth, L->stream_row.wrong == 0);
    kit_csv_prefix(csv, d, n, seed);
    fprintf(csv, "littles-law,warps-per-sm,,,,%.4f,warps,%d\n", L->mine.warps_per_sm, L->law_ok);
    for (int i = 0; i < L->nocc; i++) {
        kit_csv_prefix(csv, d, n, seed);
        fprintf(csv, "occupancy,sum_tlp,%d,1,%.6f,%.1f,GB/s,%d\n", L->runs[i].warps_per_sm,
                L->occ_rows[i].t.median_ms, row_gbs(&L->occ_rows[i], n), L->occ_rows[i].wrong == 0);
    }
    for (int i = 0; i < L->nilp; i++) {
        kit_csv_prefix(csv, d, n, seed);
        fprintf(csv, "ilp,sum_ilp,%d,%d,%.6f,%.1f,GB/s,%d\n", ILP_WARPS, L->ilp_loads[i], L->ilp_rows[i].t.median_ms,
                row_gbs(&L->ilp_rows[i], n), L->ilp_rows[i].wrong == 0);
    }
    for (int i = 0; i < MATH_ROWS; i++) {
        kit_csv_prefix(csv, d, n, seed);
        fprintf(csv, "throughput,\"%s\",%d,,%.6f,%.3f,per clock per SM,%d\n", math_rows[i].name,
                d->max_warps_per_sm, L->mrows[i].t.median_ms, L->rate[i], L->mrows[i].wrong == 0);
    }
}

/* The facts, one per line, for tests and graders. */
static void print_facts(const lab *L)
{
    const kit_device *d = &L->dev;
    const chase_set *sets = L->sets;
    unsigned int n = L->n;
    char key[64], curve[1024];
    int len = 0;

    kit_kv("lab", "07-latency");
    kit_kv_device(d);
    kit_kv("size", "%u", n);
    kit_kv("working-set-bytes", "%llu", 4ull * n);
    kit_kv("working-set-over-l2", "%.2f", 4.0 * n / d->l2_bytes);
    kit_kv("seed", "%llu", L->c.seed);
    kit_kv("steps", "%d", L->steps);
    kit_kv("iterations", "%d", L->iterations);
    for (int lv = 0; lv < LEVELS; lv++) {
        snprintf(key, sizeof key, "latency-%s-cycles", sets[lv].key);
        kit_kv(key, "%.2f", sets[lv].cycles);
        snprintf(key, sizeof key, "latency-%s-ns", sets[lv].key);
        kit_kv(key, "%.2f", sets[lv].ns);
        snprintf(key, sizeof key, "working-set-%s-bytes", sets[lv].key);
        kit_kv(key, "%llu", sets[lv].bytes);
        snprintf(key, sizeof key, "wrong-chase-runs-%s", sets[lv].key);
        kit_kv(key, "%d", sets[lv].wrong_runs);
    }
    kit_kv("sm-clock-ghz", "%.4f", L->clock_ghz);
    kit_row_kv(&L->stream_row);
    kit_kv("bandwidth-gbs", "%.1f", L->bandwidth);

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

    for (int i = 0; i < L->nocc; i++) {
        kit_row_kv(&L->occ_rows[i]);
        snprintf(key, sizeof key, "bandwidth-occ-%d-gbs", L->runs[i].warps_per_sm);
        kit_kv(key, "%.1f", row_gbs(&L->occ_rows[i], n));
        snprintf(key, sizeof key, "shared-bytes-occ-%d", L->runs[i].warps_per_sm);
        kit_kv(key, "%zu", L->runs[i].smem);
    }
    kit_kv("occupancy-points", "%d", L->nocc);
    /* The curve on one line, warps:GB/s pairs in order, for the tests. */
    curve[0] = '\0';
    for (int i = 0; i < L->nocc && len < (int)sizeof curve - 32; i++)
        len += snprintf(curve + len, sizeof curve - len, "%s%d:%.1f", i ? " " : "", L->runs[i].warps_per_sm,
                        row_gbs(&L->occ_rows[i], n));
    kit_kv("occupancy-curve", "%s", curve);
    kit_kv("occupancy-knee-warps", "%d", L->knee);
    kit_kv("knee-over-prediction", "%.3f", L->want.warps_per_sm > 0 ? L->knee / L->want.warps_per_sm : 0.0);
    kit_kv("bandwidth-tlp-full-gbs", "%.1f", tlp_full_gbs(L));

    for (int i = 0; i < L->nilp; i++) {
        kit_row_kv(&L->ilp_rows[i]);
        snprintf(key, sizeof key, "bandwidth-ilp-%d-gbs", L->ilp_loads[i]);
        kit_kv(key, "%.1f", row_gbs(&L->ilp_rows[i], n));
    }
    kit_kv("ilp-warps-per-sm", "%d", ILP_WARPS);
    kit_kv("bandwidth-ilp-best-gbs", "%.1f", L->best_ilp);
    kit_kv("ilp-best-over-tlp-full", "%.3f", ilp_fraction(L));
    if (L->ilp_1 > 0 && L->ilp_16 > 0)
        kit_kv("ilp-16-over-1", "%.3f", L->ilp_16 / L->ilp_1);

    for (int i = 0; i < MATH_ROWS; i++) {
        kit_row_kv(&L->mrows[i]);
        snprintf(key, sizeof key, "rate-%s-per-clock-per-sm", math_rows[i].key);
        kit_kv(key, "%.2f", L->rate[i]);
        if (math_rows[i].op == LAT_FMA_F32 || math_rows[i].op == LAT_FMA_F64)
            continue;
        snprintf(key, sizeof key, "max-ulp-%s", math_rows[i].key);
        kit_kv(key, "%.3f", L->acc[i].max_ulp);
        snprintf(key, sizeof key, "max-abs-error-%s", math_rows[i].key);
        kit_kv(key, "%.4g", L->acc[i].max_abs);
        snprintf(key, sizeof key, "max-rel-error-%s", math_rows[i].key);
        kit_kv(key, "%.4g", L->acc[i].max_rel);
    }
    /* Rows 0 and 1: fmaf and fma; 2 and 3: expf and __expf; 5 and 6: sinf and __sinf. */
    if (L->mrows[0].timed && L->mrows[1].timed)
        kit_kv("ratio-f32-over-f64", "%.3f", L->rate[0] / L->rate[1]);
    if (L->doc)
        kit_kv("documented-ratio-f32-over-f64", "%.3f", (double)L->doc->fp32 / L->doc->fp64);
    if (L->mrows[2].timed && L->mrows[3].timed)
        kit_kv("speedup-expf-intrinsic", "%.3f", L->mrows[2].t.median_ms / L->mrows[3].t.median_ms);
    if (L->mrows[5].timed && L->mrows[6].timed)
        kit_kv("speedup-sinf-intrinsic", "%.3f", L->mrows[5].t.median_ms / L->mrows[6].t.median_ms);
    kit_kv("fast-math-differs", "%d", L->fast_differs == 2);

    kit_kv("summary", "a load from DRAM takes %.0f cycles (%.0f ns), the memory streams %.0f GB/s: %.0f KB in "
                      "flight, %.1f warps per SM at one load each; sum_tlp reaches %.0f%% of its best at %d; "
                      "%d warps with 16 loads each reach %.0f%% of sum_tlp with all %d",
           sets[DRAM].cycles, sets[DRAM].ns, L->bandwidth, L->want.bytes_in_flight / 1000, L->want.warps_per_sm,
           100 * KNEE_FRACTION, L->knee, ILP_WARPS, 100 * ilp_fraction(L), d->max_warps_per_sm);
    kit_kv("course-fermi", "800 cycles x 92 bytes/cycle (144 GB/s / 1.566 GHz) = 74 KB in flight, 18,500 "
                           "threads, 579 warps, 36 per SM of 16");
    kit_kv("course-kepler", "800 cycles x 96 bytes/cycle = 77 KB (printed); 250 GB/s / 1.6 GHz is 156 "
                            "bytes/cycle: 125 KB");
    kit_kv("course-k40", "the notes' Kepler: 250 GB/s / 1.6 GHz = 156 bytes/cycle (printed 96), x 800 cycles "
                         "= 125 KB in flight; global latency 400-800 cycles");
}

/*
 * The verdict, beyond what each step already judged (the kit's own
 * measurements sound, every partial sum right in every run, Little's law as
 * the kit computes it): sum_ilp's loads coalesced, each element read once,
 * and really in flight together; the fast-math part built with its flag.
 */
static void verdict(lab *L)
{
    unsigned int n = L->n;

    if (L->ilp_counted >= 0 && L->ilp_rows[L->ilp_counted].wrong == 0) {
        const kit_row *r = &L->ilp_rows[L->ilp_counted];
        unsigned long long lanes = r->counts.c[KIT_LD_LANES];
        if (lanes != n) {
            fprintf(stderr, "%s: %s: its threads made %llu loads, but the sums need each of the %u elements "
                            "loaded once (TODO(2))\n",
                    kit_program, r->name, lanes, n);
            L->pass = 0;
        }
        /* Whole warps of neighbours: 1 segment a request where the size is
         * a multiple of 32 (the kit's grid is), at most 2 where it is not. */
        if (n % 32 == 0 ? r->counts.c[KIT_LD_SEGMENTS] != r->counts.c[KIT_LD_REQUESTS]
                        : kit_row_segments(r) > 2.0) {
            fprintf(stderr, "%s: %s: %.2f segments per request, not %s: the 32 lanes of a warp must read 32 "
                            "neighbouring floats in each load (TODO(2))\n",
                    kit_program, r->name, kit_row_segments(r), n % 32 == 0 ? "1" : "2 at most");
            L->pass = 0;
        }
    }
    if (L->ilp_1 > 0 && L->ilp_16 > 0) {
        /* Judged where the loads come from DRAM and each thread has rounds to do. */
        unsigned long long T = (unsigned long long)L->dev.sms * ILP_WARPS * 32, from = L->dev.l2_bytes / 2;
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
            L->pass = 0;
        }
    }
    if (L->fast_differs != 2) {
        fprintf(stderr, "%s: the --use_fast_math build's expf and sinf gave the accurate functions' results: "
                        "07-latency/harness-fastmath.cu was not built with the flag (Makefile)\n",
                kit_program);
        L->pass = 0;
    }
}

int main(int argc, char **argv)
{
    static lab lab07; /* large: the rows of six parts */
    lab *L = &lab07;
    FILE *csv;
    kit_option opts[] = {
        KIT_LAB_OPTIONS(&L->c),
        {"--steps", KIT_OPT_INT, &L->steps, "S", "dependent loads timed in each pointer chase (default 20000)", 100,
         200000, NULL},
        {"--loads", KIT_OPT_INT, &L->only_loads, "K",
         "run sum_ilp with only this many loads per thread instead of 1, 2, 4, 8, 16", 1, LAT_MAX_LOADS, NULL},
        {"--iterations", KIT_OPT_INT, &L->iterations, "I",
         "steps of each compute-bound chain in part 6 (default 4096)", 1, 1 << 20, NULL},
    };

    kit_common_defaults(&L->c);
    L->c.reps = 0;
    L->steps = DEFAULT_STEPS;
    L->iterations = DEFAULT_ITERATIONS;
    L->pass = 1;
    kit_parse_args(argc, argv,
                   "Lab 07: latency hiding, Little's law on this GPU. Measures the latency of one\n"
                   "load (pointer chasing in L1, L2 and DRAM) and the memory bandwidth, checks\n"
                   "your littles_law against them, and times your sum_tlp and sum_ilp kernels\n"
                   "against the warps resident per SM and the loads in flight per thread; then\n"
                   "float against double, and expf and sinf against their intrinsics and\n"
                   "--use_fast_math, with the accuracy each loses.",
                   opts, KIT_COUNT(opts));
    kit_choose_seed(&L->c);
    kit_csv_check(L->c.csv);
    kit_device_open(L->c.device, &L->dev);
    L->policy = kit_policy_default(L->c.reps);
    choose_size(L);

    part1_latency(L);
    part2_bandwidth(L);
    part3_littles_law(L);
    part4_occupancy(L);
    part5_ilp(L);
    part6_throughput(L);
    part6_accuracy(L);

    csv = kit_csv_open(L->c.csv);
    if (csv != stdout)
        print_tables(L);
    if (csv) {
        write_csv(L, csv);
        kit_csv_close(csv);
    }
    print_facts(L);
    verdict(L);
    free(L->h_in);
    return kit_finish(L->pass);
}
