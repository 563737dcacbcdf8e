/*
 * Lab 04: occupancy and SM efficiency.
 * Handout: handouts/04-occupancy.md
 *
 * Occupancy is the share of an SM's warp slots that a kernel keeps busy.
 * Threads, blocks, registers and shared memory per SM each cap how many
 * blocks an SM can hold; the tightest cap gives the theoretical occupancy.
 * The course's lesson: higher theoretical occupancy does not always mean a
 * faster kernel, because spreading the blocks over all SMs (SM efficiency)
 * can matter more, and achieved occupancy trails the theoretical one.
 *
 * The program:
 *   1. checks the student's occupancy calculator against
 *      cudaOccupancyMaxActiveBlocksPerMultiprocessor for many block sizes,
 *      register counts and shared-memory sizes (--k40: the course's K40
 *      table, computed on the CPU, no GPU needed);
 *   2. runs the course's two scenarios for n = 32 ... 65,536 elements and
 *      measures, per block, the SM it ran on and when (%smid, %globaltimer),
 *      which give achieved occupancy and SM efficiency with no profiler;
 *   3. shows a partial last wave: one block more than the GPU holds at once;
 *   4. sweeps 2D block shapes on a matrix sum (the book's sumMatrixOnGPU2D).
 */
#include "kit.h"

#define SCENARIO_ITERATIONS 100000 /* the course used 1,000,000 on a K40 */

/* What limits occupancy on a GPU: its per-SM resources and their units. */
typedef struct {
    int warp_size;
    int max_threads_per_block;
    int max_warps_per_sm;
    int max_blocks_per_sm;
    int regs_per_sm;
    int regs_per_block;
    int reg_alloc_unit;  /* registers are given to a warp in these units */
    int sub_partitions;  /* an SM's registers are split between its schedulers */
    long long smem_per_sm;
    long long smem_alloc_unit;   /* shared memory is given to a block in these units */
    long long smem_reserved;     /* the driver's own shared memory per block */
} occ_limits;

/* ===================================================================== */
/* Student code: the occupancy calculator                                */
/* ===================================================================== */

/* x rounded up to a multiple of unit: a helper for the calculator. */
#define ROUND_UP(x, unit) ((int)(((long long)(x) + (unit) - 1) / (unit) * (unit)))

/* ---- KIT STUDENT REGION BEGIN: TODO(1) ---- */
/*
 * TODO(1) Threads. A block of `threads` threads takes whole warps. How many
 * such blocks fit in the SM's warp slots? (A block larger than the GPU's
 * largest block fits zero times.)
 */
static int blocks_by_warps(const occ_limits *L, int threads)
{
    int warps = (threads + L->warp_size - 1) / L->warp_size;
    if (threads > L->max_threads_per_block)
        return 0;
    return L->max_warps_per_sm / warps;
}
/* ---- KIT STUDENT REGION END: TODO(1) ---- */

/* ---- KIT STUDENT REGION BEGIN: TODO(2) ---- */
/*
 * TODO(2) Registers. A warp gets regs_per_thread * 32 registers, rounded
 * up to reg_alloc_unit. The SM's registers are split evenly between its
 * sub_partitions schedulers, and a warp lives on one of them: count the
 * warps that fit in one part, times the parts, then whole blocks. A block
 * whose warps, rounded up to a multiple of sub_partitions, need more than
 * regs_per_block fits zero times. With 0 registers, registers are no limit
 * (return a large number).
 */
static int blocks_by_registers(const occ_limits *L, int threads, int regs_per_thread)
{
    int warps = (threads + L->warp_size - 1) / L->warp_size;
    int per_warp = ROUND_UP((long long)regs_per_thread * L->warp_size, L->reg_alloc_unit);
    int warps_per_sm;

    if (per_warp == 0)
        return 1 << 30;
    if ((long long)per_warp * ROUND_UP(warps, L->sub_partitions) > L->regs_per_block)
        return 0;
    warps_per_sm = (L->regs_per_sm / L->sub_partitions / per_warp) * L->sub_partitions;
    return warps_per_sm / warps;
}
/* ---- KIT STUDENT REGION END: TODO(2) ---- */

/* ---- KIT STUDENT REGION BEGIN: TODO(3) ---- */
/*
 * TODO(3) Shared memory. A block takes its own shared memory plus the
 * driver's reserved share, rounded up to smem_alloc_unit. How many blocks
 * fit in the SM's shared memory?
 */
static int blocks_by_shared_memory(const occ_limits *L, long long smem_per_block)
{
    int per_block = ROUND_UP(smem_per_block + L->smem_reserved, L->smem_alloc_unit);
    if (per_block == 0)
        return 1 << 30;
    return (int)(L->smem_per_sm / per_block);
}
/* ---- KIT STUDENT REGION END: TODO(3) ---- */

/* ===================================================================== */
/* The calculator's harness                                              */
/* ===================================================================== */

typedef struct {
    int blocks;       /* per SM */
    double occupancy; /* theoretical, 0..1 */
    const char *limit;
} occ_result;

static occ_result theoretical_occupancy(const occ_limits *L, int threads, int regs,
                                        long long smem)
{
    occ_result r;
    int by[4] = {blocks_by_warps(L, threads), L->max_blocks_per_sm,
                 blocks_by_registers(L, threads, regs), blocks_by_shared_memory(L, smem)};
    static const char *const names[4] = {"warps", "blocks", "registers", "shared memory"};
    int warps = (threads + L->warp_size - 1) / L->warp_size;

    r.blocks = by[0];
    r.limit = names[0];
    for (int i = 1; i < 4; i++)
        if (by[i] < r.blocks)
            r.blocks = by[i], r.limit = names[i];
    r.occupancy = (double)r.blocks * warps / L->max_warps_per_sm;
    return r;
}

/* The limits of this GPU: counts from the device, units by architecture
 * (the values the CUDA occupancy calculator uses). */
static occ_limits limits_of(const kit_device *d)
{
    occ_limits L;
    L.warp_size = d->warp_size;
    L.max_threads_per_block = d->max_threads_per_block;
    L.max_warps_per_sm = d->max_warps_per_sm;
    L.max_blocks_per_sm = d->max_blocks_per_sm;
    L.regs_per_sm = d->regs_per_sm;
    L.regs_per_block = d->regs_per_block;
    L.reg_alloc_unit = 256;
    L.sub_partitions = 4;
    L.smem_per_sm = d->smem_per_sm;
    L.smem_alloc_unit = d->cc_major >= 8 ? 128 : 256;
    L.smem_reserved = d->smem_reserved_per_block;
    return L;
}

/* The course's Tesla K40: 15 SMX, 2048 threads and 16 blocks per SMX. */
static occ_limits limits_k40(void)
{
    occ_limits L = {32, 1024, 64, 16, 65536, 65536, 256, 4, 49152, 256, 0};
    return L;
}

/* ===================================================================== */
/* Kernels                                                               */
/* ===================================================================== */

/* The course's occupancy kernel: four vector operations branched by warp
 * (no divergence), many iterations so that computing dominates. */
static __device__ __forceinline__ void scenario_body(const float *A, const float *B, float *C,
                                                     unsigned int n, int iters, const kit_trace *t)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    kit_trace_begin(t);
    if (tid < n) {
        for (int i = 0; i < iters; i++) {
            if ((tid / 32) % 4 == 0)
                C[tid] = A[tid] + B[tid];
            else if ((tid / 32) % 4 == 1)
                C[tid] = A[tid] - B[tid];
            else if ((tid / 32) % 4 == 2)
                C[tid] = A[tid] * B[tid];
            else
                C[tid] = A[tid] / B[tid];
        }
    }
    kit_trace_end(t);
}

__global__ void scenario_kernel(const float *A, const float *B, float *C, unsigned int n, int iters)
{
    scenario_body(A, B, C, n, iters, NULL);
}

__global__ void scenario_kernel_traced(const float *A, const float *B, float *C, unsigned int n,
                                       int iters, kit_trace trace)
{
    scenario_body(A, B, C, n, iters, &trace);
}

/*
 * For the partial wave: work bound by each SM's own arithmetic, not by a
 * resource the whole GPU shares (the scenario kernel's stores load the L2),
 * and the same for every warp. `zero` is always 0 but unknown to the
 * compiler, so the loop stays and C = A.
 */
static __device__ __forceinline__ void wave_body(const float *A, float *C, unsigned int n,
                                                 int iters, unsigned int zero, const kit_trace *t)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    unsigned int h = tid;
    kit_trace_begin(t);
    if (tid < n) {
        for (int i = 0; i < iters; i++)
            h = h * 1664525u + 1013904223u;
        C[tid] = A[tid] + (float)(h & zero);
    }
    kit_trace_end(t);
}

__global__ void wave_kernel(const float *A, float *C, unsigned int n, int iters, unsigned int zero)
{
    wave_body(A, C, n, iters, zero, NULL);
}

__global__ void wave_kernel_traced(const float *A, float *C, unsigned int n, int iters,
                                   unsigned int zero, kit_trace trace)
{
    wave_body(A, C, n, iters, zero, &trace);
}

/* The book's sumMatrixOnGPU2D: one thread per element of an nx x ny matrix. */
static __device__ __forceinline__ void sum_matrix_body(const float *A, const float *B, float *C,
                                                       int nx, int ny, const kit_trace *t,
                                                       const kit_probe *probe)
{
    unsigned int ix = threadIdx.x + blockIdx.x * blockDim.x;
    unsigned int iy = threadIdx.y + blockIdx.y * blockDim.y;
    unsigned int idx = iy * nx + ix;
    int inside = ix < (unsigned int)nx && iy < (unsigned int)ny;
    kit_tally tally;

    kit_trace_begin(t);
    kit_tally_begin(&tally, probe, inside);
    if (inside) {
        kit_tally_access(&tally, probe, &A[idx]);
        C[idx] = A[idx] + B[idx];
    }
    kit_tally_end(&tally, probe);
    kit_trace_end(t);
}

__global__ void sumMatrixOnGPU2D(const float *A, const float *B, float *C, int nx, int ny)
{
    sum_matrix_body(A, B, C, nx, ny, NULL, NULL);
}

__global__ void sumMatrixOnGPU2D_traced(const float *A, const float *B, float *C, int nx, int ny,
                                        kit_trace trace, kit_probe probe)
{
    sum_matrix_body(A, B, C, nx, ny, &trace, &probe);
}

/* Register-hungry, for the calculator's check: 48 live accumulators. */
__global__ void many_registers(float *out, int n)
{
    float acc[48];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int k = 0; k < 48; k++)
        acc[k] = out[(i + k * 97) % n];
    for (int r = 0; r < 8; r++)
#pragma unroll
        for (int k = 0; k < 48; k++)
            acc[k] = acc[k] * acc[(k + 1) % 48] + 1.0f;
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 48; k++)
        s += acc[k];
    if (i < n)
        out[i] = s;
}

/* ===================================================================== */
/* Harness                                                               */
/* ===================================================================== */

typedef struct {
    float *A, *B, *C;        /* device */
    float *hA, *hB, *hC;     /* host */
    unsigned int n;          /* elements in use */
    int iters;
    int threads, blocks;     /* scenario and wave launches */
    int wave;                /* launch wave_kernel instead of the scenario kernel */
    int nx, ny, bx, by;      /* matrix launches */
    kit_trace trace;
    kit_probe probe;
} run_t;

static void launch_scenario(void *p)
{
    const run_t *r = (const run_t *)p;
    if (r->wave)
        wave_kernel<<<r->blocks, r->threads>>>(r->A, r->C, r->n, r->iters, 0u);
    else
        scenario_kernel<<<r->blocks, r->threads>>>(r->A, r->B, r->C, r->n, r->iters);
    KIT_CHECK_LAUNCH();
}

static void launch_matrix(void *p)
{
    const run_t *r = (const run_t *)p;
    dim3 block(r->bx, r->by), grid((r->nx + r->bx - 1) / r->bx, (r->ny + r->by - 1) / r->by);
    sumMatrixOnGPU2D<<<grid, block>>>(r->A, r->B, r->C, r->nx, r->ny);
    KIT_CHECK_LAUNCH();
}

/* Checks C after the scenario kernel on the first n elements. */
static long long verify_scenario(const run_t *r)
{
    long long bad = 0;
    KIT_CHECK(cudaMemcpy(r->hC, r->C, (size_t)r->n * sizeof(float), cudaMemcpyDeviceToHost));
    for (unsigned int i = 0; i < r->n; i++) {
        unsigned int path = (i / 32) % 4;
        float a = r->hA[i], b = r->hB[i];
        float want = r->wave ? a : path == 0 ? a + b : path == 1 ? a - b : path == 2 ? a * b : a / b;
        if (r->hC[i] != want && bad++ == 0)
            fprintf(stderr, "%s: scenario kernel, n = %u: C[%u] = %.9g, should be %.9g\n",
                    kit_program, r->n, i, r->hC[i], want);
    }
    return bad;
}

static long long verify_matrix(const run_t *r)
{
    long long bad = 0;
    size_t n = (size_t)r->nx * r->ny;
    KIT_CHECK(cudaMemcpy(r->hC, r->C, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++)
        if (r->hC[i] != r->hA[i] + r->hB[i] && bad++ == 0)
            fprintf(stderr, "%s: sumMatrixOnGPU2D (%d,%d): element %zu is wrong\n", kit_program,
                    r->bx, r->by, i);
    return bad;
}

/* One traced launch of the current scenario or matrix configuration. */
static kit_trace_stats traced(run_t *r, const kit_device *d, int matrix, kit_access_stats *acc)
{
    size_t blocks;
    kit_block_record *h;
    kit_trace_stats s;

    if (matrix) {
        dim3 block(r->bx, r->by), grid((r->nx + r->bx - 1) / r->bx, (r->ny + r->by - 1) / r->by);
        blocks = (size_t)grid.x * grid.y * ((r->bx * r->by + 31) / 32);
        kit_probe_reset(r->probe);
        sumMatrixOnGPU2D_traced<<<grid, block>>>(r->A, r->B, r->C, r->nx, r->ny, r->trace,
                                                 r->probe);
    } else {
        blocks = (size_t)r->blocks * ((r->threads + 31) / 32);
        if (r->wave)
            wave_kernel_traced<<<r->blocks, r->threads>>>(r->A, r->C, r->n, r->iters, 0u,
                                                          r->trace);
        else
            scenario_kernel_traced<<<r->blocks, r->threads>>>(r->A, r->B, r->C, r->n, r->iters,
                                                              r->trace);
    }
    KIT_CHECK_LAUNCH();
    KIT_CHECK(cudaDeviceSynchronize());
    h = (kit_block_record *)kit_host_alloc(blocks * sizeof *h);
    KIT_CHECK(cudaMemcpy(h, r->trace.records, blocks * sizeof *h, cudaMemcpyDeviceToHost));
    s = kit_trace_analyze(h, blocks, d->sms, d->max_warps_per_sm);
    free(h);
    if (matrix && acc)
        *acc = kit_probe_read(r->probe);
    return s;
}

/* The course's scenario 2: as many blocks as SMs first, at least a warp. */
static int scenario2_threads(unsigned int n, int sms)
{
    unsigned int t = (n + sms - 1) / sms;
    t = (t + 31) / 32 * 32;
    return t < 32 ? 32 : t > 1024 ? 1024 : (int)t;
}

/* One configuration: the calculator's blocks per SM against the runtime's;
 * describes the first few disagreements. Returns 1 when they differ. */
static int compare_one(const occ_limits *L, const void *kernel, const char *name,
                       const struct cudaFuncAttributes *fa, int threads, long long smem,
                       int *wrong)
{
    int api = 0;
    occ_result mine = theoretical_occupancy(L, threads, fa->numRegs,
                                            (long long)fa->sharedSizeBytes + smem);
    KIT_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&api, kernel, threads, (size_t)smem));
    if (api == mine.blocks)
        return 0;
    if ((*wrong)++ < 5)
        fprintf(stderr, "%s: %s, %d threads: the calculator says %d blocks per SM, the runtime %d "
                        "(%d registers, %lld B shared memory)\n",
                kit_program, name, threads, mine.blocks, api, fa->numRegs,
                (long long)fa->sharedSizeBytes + smem);
    return 1;
}

/*
 * The calculator against the runtime's answer, on a fixed grid of block
 * sizes and shared-memory sizes and on RANDOM_CONFIGURATIONS more per
 * kernel drawn from the seed (any block size, any number of bytes), so
 * that a calculator fitted to the grid does not pass. Returns the
 * mismatches and sets *checked to the number of configurations.
 */
#define RANDOM_CONFIGURATIONS 64
static int check_calculator(const occ_limits *L, int print, unsigned long long seed,
                            int *checked_out)
{
    const void *kernels[3] = {(const void *)scenario_kernel, (const void *)sumMatrixOnGPU2D,
                              (const void *)many_registers};
    const char *names[3] = {"scenario_kernel", "sumMatrixOnGPU2D", "many_registers"};
    const int threads[] = {32, 64, 96, 128, 160, 192, 256, 384, 512, 640, 768, 896, 1024};
    const long long smem[] = {0, 1000, 8192, 30000, 49152};
    int checked = 0, wrong = 0;

    for (int k = 0; k < 3; k++) {
        struct cudaFuncAttributes fa;
        KIT_CHECK(cudaFuncGetAttributes(&fa, kernels[k]));
        if (print)
            printf("  %-18s %3d registers, %zu bytes of static shared memory\n", names[k],
                   fa.numRegs, fa.sharedSizeBytes);
        for (size_t t = 0; t < sizeof threads / sizeof *threads; t++)
            for (size_t m = 0; m < sizeof smem / sizeof *smem; m++, checked++)
                compare_one(L, kernels[k], names[k], &fa, threads[t], smem[m], &wrong);
        for (int i = 0; i < RANDOM_CONFIGURATIONS; i++, checked++) {
            /* splitmix64: two numbers from the seed, the kernel and i */
            unsigned long long x = seed + 0x9e3779b97f4a7c15ULL * (unsigned long long)(k * 1000 + i + 1);
            x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
            x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
            x ^= x >> 31;
            int t = 1 + (int)(x % (unsigned long long)L->max_threads_per_block);
            long long m = (long long)((x >> 32) % (unsigned long long)(49152 - fa.sharedSizeBytes + 1));
            compare_one(L, kernels[k], names[k], &fa, t, m, &wrong);
        }
    }
    if (print)
        printf("  %d configurations: the calculator agrees with "
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor in %d\n\n", checked, checked - wrong);
    *checked_out = checked;
    return wrong;
}

/* The course's K40 table, on the CPU: 25%, 50%, then 100%. */
static int print_k40(void)
{
    occ_limits L = limits_k40();
    occ_result r[6];
    int ok = 1;

    printf("Tesla K40 (15 SMX, 2048 threads and 16 blocks per SMX), 16 registers a thread:\n");
    printf("%-18s %12s %12s  %s\n", "threads per block", "blocks/SMX", "occupancy", "limit");
    for (int i = 0, t = 32; i < 6; i++, t *= 2) {
        r[i] = theoretical_occupancy(&L, t, 16, 0);
        printf("%-18d %12d %11.0f%%  %s\n", t, r[i].blocks, 100 * r[i].occupancy, r[i].limit);
        ok &= fabs(r[i].occupancy - (i == 0 ? 0.25 : i == 1 ? 0.5 : 1.0)) < 1e-9;
    }
    printf("\n");
    for (int i = 0, t = 32; i < 6; i++, t *= 2) {
        char key[48];
        snprintf(key, sizeof key, "k40-occupancy-%d", t);
        kit_kv(key, "%.4f", r[i].occupancy);
    }
    if (!ok)
        fprintf(stderr, "%s: the calculator does not give the course's K40 table (25%%, 50%%, "
                        "then 100%%)\n", kit_program);
    return kit_finish(ok);
}

typedef struct {
    int n, threads, blocks;
    double theoretical, achieved, sm_efficiency, ms;
} scenario_row;

typedef struct {
    int bx, by, valid;
    double ms, theoretical;
    kit_trace_stats ts;
    kit_access_stats acc;
    char error[96];
} shape_row;

static void scenario_kv(const char *key, const scenario_row *s)
{
    char k[80];
    snprintf(k, sizeof k, "%s-threads", key), kit_kv(k, "%d", s->threads);
    snprintf(k, sizeof k, "%s-blocks", key), kit_kv(k, "%d", s->blocks);
    snprintf(k, sizeof k, "%s-theoretical", key), kit_kv(k, "%.4f", s->theoretical);
    snprintf(k, sizeof k, "%s-achieved", key), kit_kv(k, "%.4f", s->achieved);
    snprintf(k, sizeof k, "%s-sm-efficiency", key), kit_kv(k, "%.4f", s->sm_efficiency);
    snprintf(k, sizeof k, "%s-time-ms", key), kit_kv(k, "%.4f", s->ms);
}

/* Measures one scenario launch: traced, then timed and checked. */
static scenario_row run_scenario(run_t *r, const kit_device *d, const occ_limits *L,
                                 const kit_common *c, int n, int threads, int blocks,
                                 long long *wrong)
{
    struct cudaFuncAttributes fa;
    scenario_row s;
    kit_trace_stats ts;

    KIT_CHECK(cudaFuncGetAttributes(&fa, r->wave ? (const void *)wave_kernel
                                                 : (const void *)scenario_kernel));
    r->n = n;
    r->threads = threads;
    r->blocks = blocks;
    s.n = n;
    s.threads = threads;
    s.blocks = blocks;
    s.theoretical = theoretical_occupancy(L, threads, fa.numRegs, (long long)fa.sharedSizeBytes)
                        .occupancy;
    ts = traced(r, d, 0, NULL);
    s.achieved = ts.achieved_occupancy;
    s.sm_efficiency = ts.sm_efficiency;
    KIT_CHECK(cudaMemset(r->C, 0xff, (size_t)n * sizeof(float)));
    s.ms = kit_time_launches(launch_scenario, r, c->warmup, c->reps).median_ms;
    *wrong += verify_scenario(r);
    return s;
}

int main(int argc, char **argv)
{
    kit_common c;
    kit_device dev;
    int k40 = 0, iters = SCENARIO_ITERATIONS, max_n = 65536, launch_illegal = 0;
    kit_option opts[] = {
        KIT_COMMON_OPTIONS(&c),
        {"--iterations", KIT_OPT_INT, &iters, "I", "loop count of the scenario kernel", 1,
         10000000, NULL},
        {"--max-elements", KIT_OPT_INT, &max_n, "N",
         "largest n of the scenarios (from 32, doubling; default 65536)", 32, 1 << 24, NULL},
        {"--k40", KIT_OPT_FLAG, &k40, NULL,
         "print the course's K40 occupancy table from the calculator and exit (no GPU needed)", 0,
         0, NULL},
        {"--launch-illegal", KIT_OPT_FLAG, &launch_illegal, NULL,
         "launch the (256, 8) block too, as the book does, and show the runtime's error", 0, 0,
         NULL},
    };
    static const int shapes[][2] = {{32, 32}, {32, 16}, {16, 32}, {16, 16}, {64, 2},
                                    {128, 2}, {256, 1}, {256, 8}};
    enum { NSHAPES = sizeof shapes / sizeof shapes[0] };
    scenario_row sc[2][24], wave[2];
    shape_row sh[NSHAPES];
    int nsizes = 0, pass, mismatches, configurations;
    long long wrong = 0;
    occ_limits L;
    run_t r;
    size_t cap;
    FILE *csv;

    kit_common_defaults(&c);
    c.reps = 5;
    c.warmup = 1;
    kit_parse_args(argc, argv,
                   "Lab 04: occupancy and SM efficiency. Checks an occupancy calculator against\n"
                   "the CUDA runtime, runs the course's two launch scenarios with achieved\n"
                   "occupancy and SM efficiency measured per block, shows a partial last wave,\n"
                   "and sweeps 2D block shapes on a matrix of --size elements.",
                   opts, KIT_COUNT(opts));
    if (k40)
        return print_k40();
    if (max_n & (max_n - 1))
        kit_die(KIT_EXIT_USAGE, "--max-elements %d: must be a power of two", max_n);
    kit_choose_seed(&c);
    csv = kit_csv_open(c.csv);
    kit_device_open(c.device, &dev);
    L = limits_of(&dev);

    /* A square matrix of at least 8 L2s of data, as in the memory labs; room
     * for the scenarios and for (SMs + 1) blocks of 1024 threads. */
    unsigned long long elems = c.size ? c.size
                                      : kit_default_size(dev.l2_bytes, dev.free_bytes, 12, 16);
    int side = (int)sqrt((double)elems) / 32 * 32;
    side = side < 32 ? 32 : side;
    cap = (size_t)side * side;
    if (cap < (size_t)max_n)
        cap = max_n;
    if (cap < (size_t)(dev.sms * dev.max_blocks_per_sm + 1) * 1024)
        cap = (size_t)(dev.sms * dev.max_blocks_per_sm + 1) * 1024;
    if ((long long)(cap * 16 + (64u << 20)) > dev.free_bytes)
        kit_die(KIT_EXIT_USAGE, "--size %llu needs %.0f MiB of GPU memory, %s has %.0f MiB free",
                elems, cap * 16 / 1048576.0, dev.name, dev.free_bytes / 1048576.0);

    memset(&r, 0, sizeof r);
    r.iters = iters;
    KIT_CHECK(cudaMalloc((void **)&r.A, cap * sizeof(float)));
    KIT_CHECK(cudaMalloc((void **)&r.B, cap * sizeof(float)));
    KIT_CHECK(cudaMalloc((void **)&r.C, cap * sizeof(float)));
    /* One trace record per warp: cap elements are at most cap / 32 + 1 warps
     * of the scenarios, and the matrix's blocks are whole warps. */
    KIT_CHECK(cudaMalloc((void **)&r.trace.records, (cap / 32 + 64) * sizeof(kit_block_record)));
    r.probe = kit_probe_create();
    r.hA = (float *)kit_host_alloc(cap * sizeof(float));
    r.hB = (float *)kit_host_alloc(cap * sizeof(float));
    r.hC = (float *)kit_host_alloc(cap * sizeof(float));
    kit_fill_uniform(r.A, cap, c.seed);
    kit_fill_uniform(r.B, cap, c.seed + 1);
    KIT_CHECK(cudaMemcpy(r.hA, r.A, cap * sizeof(float), cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(r.hB, r.B, cap * sizeof(float), cudaMemcpyDeviceToHost));

    kit_banner("Lab 04: occupancy and SM efficiency", &dev);
    printf("per SM: %d threads (%d warps), %d blocks, %d registers, %lld KiB shared memory "
           "(%lld B reserved per block)\n\n",
           dev.max_threads_per_sm, dev.max_warps_per_sm, dev.max_blocks_per_sm, dev.regs_per_sm,
           dev.smem_per_sm / 1024, dev.smem_reserved_per_block);

    /* 1. The calculator. */
    printf("1. the occupancy calculator against the CUDA runtime:\n");
    mismatches = check_calculator(&L, 1, c.seed, &configurations);

    /* 2. The course's two scenarios. */
    for (int n = 32; n <= max_n; n *= 2, nsizes++) {
        int t1 = n < 1024 ? n : 1024, t2 = scenario2_threads(n, dev.sms);
        sc[0][nsizes] = run_scenario(&r, &dev, &L, &c, n, t1, (n + t1 - 1) / t1, &wrong);
        sc[1][nsizes] = run_scenario(&r, &dev, &L, &c, n, t2, (n + t2 - 1) / t2, &wrong);
    }
    printf("2. the course's scenarios, %d iterations, %d SMs (the course assumed 16):\n"
           "   scenario 1: min(n, 1024) threads per block; scenario 2: the blocks spread over "
           "the SMs first\n", iters, dev.sms);
    printf("%7s |%8s %7s %7s %9s %8s %10s |%8s %7s %7s %9s %8s %10s\n", "n", "threads", "blocks",
           "theor.", "achieved", "SM eff.", "time (ms)", "threads", "blocks", "theor.",
           "achieved", "SM eff.", "time (ms)");
    for (int i = 0; i < nsizes; i++) {
        printf("%7d |", sc[0][i].n);
        for (int s = 0; s < 2; s++)
            printf("%8d %7d %6.0f%% %8.1f%% %7.2f%% %10.3f |", sc[s][i].threads, sc[s][i].blocks,
                   100 * sc[s][i].theoretical, 100 * sc[s][i].achieved,
                   100 * sc[s][i].sm_efficiency, sc[s][i].ms);
        printf("%s\n", sc[1][i].ms < 0.95 * sc[0][i].ms ? " S2 faster" : "");
    }

    /* 3. A partial last wave: every block slot of the GPU filled once, then
     * one block more, which must wait for a second wave on its own. */
    {
        int per_sm = 0, full;
        KIT_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, wave_kernel, 1024, 0));
        full = dev.sms * per_sm;
        r.wave = 1;
        r.iters = 20 * iters; /* about as long as a scenario launch */
        wave[0] = run_scenario(&r, &dev, &L, &c, full * 1024, 1024, full, &wrong);
        wave[1] = run_scenario(&r, &dev, &L, &c, (full + 1) * 1024, 1024, full + 1, &wrong);
        r.wave = 0;
        r.iters = iters;
        printf("\n3. a partial last wave: %d SMs x %d blocks of 1024 threads fill the GPU once\n"
               "   (a kernel that computes in registers, the same for every warp)\n",
               dev.sms, per_sm);
        for (int w = 0; w < 2; w++)
            printf("   %4d blocks (%9s elements): %8.3f ms, SM efficiency %5.1f%%, achieved "
                   "occupancy %5.1f%%\n",
                   wave[w].blocks, kit_grouped(wave[w].n), wave[w].ms, 100 * wave[w].sm_efficiency,
                   100 * wave[w].achieved);
        printf("   one block more (%.2f%% more work) takes %.2fx the time: it runs alone in a\n"
               "   second wave while every other SM waits idle.\n\n",
               100.0 / full, wave[1].ms / wave[0].ms);
    }

    /* 4. 2D block shapes on the book's matrix sum. */
    r.nx = r.ny = side;
    printf("4. sumMatrixOnGPU2D on a %d x %d matrix of floats (%.0f MiB each):\n", side, side,
           (double)side * side * 4 / 1048576);
    printf("   %-10s %-12s %10s %8s %9s %13s %12s\n", "block", "grid", "time (ms)", "theor.",
           "achieved", "segments/req", "sectors/req");
    for (int k = 0; k < NSHAPES; k++) {
        shape_row *s = &sh[k];
        cudaError_t e;
        struct cudaFuncAttributes fa;
        memset(s, 0, sizeof *s);
        s->bx = r.bx = shapes[k][0];
        s->by = r.by = shapes[k][1];
        /* A block larger than the GPU allows is refused here; with
         * --launch-illegal it is launched, as the book does, to see the error. */
        if (r.bx * r.by > dev.max_threads_per_block && !launch_illegal) {
            printf("   (%d,%d)     not launched: %d threads per block, at most %d; the launch "
                   "would fail\n", r.bx, r.by, r.bx * r.by, dev.max_threads_per_block);
            continue;
        }
        sumMatrixOnGPU2D<<<dim3((side + r.bx - 1) / r.bx, (side + r.by - 1) / r.by),
                           dim3(r.bx, r.by)>>>(r.A, r.B, r.C, side, side);
        e = cudaGetLastError();
        if (e != cudaSuccess) {
            snprintf(s->error, sizeof s->error, "%s: %d threads per block, at most %d",
                     cudaGetErrorName(e), r.bx * r.by, dev.max_threads_per_block);
            printf("   (%d,%d)     launch failed: %s\n", r.bx, r.by, s->error);
            continue;
        }
        KIT_CHECK(cudaDeviceSynchronize());
        s->valid = 1;
        KIT_CHECK(cudaFuncGetAttributes(&fa, (const void *)sumMatrixOnGPU2D));
        s->theoretical =
            theoretical_occupancy(&L, r.bx * r.by, fa.numRegs, (long long)fa.sharedSizeBytes)
                .occupancy;
        s->ts = traced(&r, &dev, 1, &s->acc);
        KIT_CHECK(cudaMemset(r.C, 0xff, cap * sizeof(float)));
        s->ms = kit_time_launches(launch_matrix, &r, c.warmup, c.reps).median_ms;
        wrong += verify_matrix(&r);
        {
            char blk[16], grd[32];
            snprintf(blk, sizeof blk, "(%d,%d)", r.bx, r.by);
            snprintf(grd, sizeof grd, "(%d,%d)", (side + r.bx - 1) / r.bx,
                     (side + r.by - 1) / r.by);
            printf("   %-10s %-12s %10.3f %7.0f%% %8.1f%% %13.2f %12.2f\n", blk, grd, s->ms,
                   100 * s->theoretical, 100 * s->ts.achieved_occupancy,
                   s->acc.segments_per_request, s->acc.sectors_per_request);
        }
    }
    printf("\ncourse, Tesla K40, 1,000,000 iterations: scenario 2 beat scenario 1 from "
           "1,024 to 8,192\nelements (e.g. 0.70 against 0.74-0.75) with lower theoretical "
           "occupancy; one block: 6.54%% SM efficiency.\n\n");

    if (csv) {
        fprintf(csv, "scenario,n,threads,blocks,theoretical,achieved,sm_efficiency,time_ms\n");
        for (int s = 0; s < 2; s++)
            for (int i = 0; i < nsizes; i++)
                fprintf(csv, "%d,%d,%d,%d,%.4f,%.4f,%.4f,%.6f\n", s + 1, sc[s][i].n,
                        sc[s][i].threads, sc[s][i].blocks, sc[s][i].theoretical,
                        sc[s][i].achieved, sc[s][i].sm_efficiency, sc[s][i].ms);
        kit_csv_close(csv);
    }

    kit_kv("lab", "04-occupancy");
    kit_kv_device(&dev);
    kit_kv("seed", "%llu", c.seed);
    kit_kv("reps", "%d", c.reps);
    kit_kv("iterations", "%d", iters);
    kit_kv("calculator-configurations", "%d", configurations);
    kit_kv("calculator-mismatches", "%d", mismatches);
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < nsizes; i++) {
            char key[32];
            snprintf(key, sizeof key, "s%d-%d", s + 1, sc[s][i].n);
            scenario_kv(key, &sc[s][i]);
        }
    scenario_kv("wave-full", &wave[0]);
    scenario_kv("wave-plus-one", &wave[1]);
    kit_kv("wave-slowdown", "%.3f", wave[1].ms / wave[0].ms);
    kit_kv("matrix-side", "%d", side);
    for (int k = 0; k < NSHAPES; k++) {
        char key[64];
        snprintf(key, sizeof key, "shape-%dx%d-valid", sh[k].bx, sh[k].by);
        kit_kv(key, "%s", sh[k].valid ? "yes" : "no");
        if (!sh[k].valid)
            continue;
        snprintf(key, sizeof key, "shape-%dx%d-time-ms", sh[k].bx, sh[k].by);
        kit_kv(key, "%.4f", sh[k].ms);
        snprintf(key, sizeof key, "shape-%dx%d-achieved", sh[k].bx, sh[k].by);
        kit_kv(key, "%.4f", sh[k].ts.achieved_occupancy);
        snprintf(key, sizeof key, "shape-%dx%d-segments-per-request", sh[k].bx, sh[k].by);
        kit_kv(key, "%.4f", sh[k].acc.segments_per_request);
        snprintf(key, sizeof key, "shape-%dx%d-sectors-per-request", sh[k].bx, sh[k].by);
        kit_kv(key, "%.4f", sh[k].acc.sectors_per_request);
    }
    kit_kv("wrong-elements", "%lld", wrong);
    {
        int i1024 = 5; /* n = 1024 is the sixth size */
        if (nsizes > i1024)
            kit_kv("summary", "at 1,024 elements scenario 2 took %.3f ms against %.3f ms (%.2fx) "
                              "with %.0f%% against %.0f%% theoretical occupancy; one block: %.2f%% "
                              "SM efficiency",
                   sc[1][i1024].ms, sc[0][i1024].ms, sc[0][i1024].ms / sc[1][i1024].ms,
                   100 * sc[1][i1024].theoretical, 100 * sc[0][i1024].theoretical,
                   100 * sc[0][0].sm_efficiency);
    }
    kit_kv("course-k40", "at 1,024 elements scenario 2 took 0.70 against 0.74 (1.06x) with 50%% "
                         "against 100%% theoretical occupancy; one block: 6.54%% SM efficiency");

    /* The verdict: the calculator agrees with the runtime everywhere, and
     * every kernel's output is right. */
    pass = mismatches == 0 && wrong == 0;
    if (mismatches)
        fprintf(stderr, "%s: the calculator disagrees with the runtime in %d configurations\n",
                kit_program, mismatches);
    if (wrong)
        fprintf(stderr, "%s: %lld wrong elements\n", kit_program, wrong);

    kit_probe_destroy(r.probe);
    KIT_CHECK(cudaFree(r.trace.records));
    KIT_CHECK(cudaFree(r.A));
    KIT_CHECK(cudaFree(r.B));
    KIT_CHECK(cudaFree(r.C));
    free(r.hA);
    free(r.hB);
    free(r.hC);
    return kit_finish(pass);
}
