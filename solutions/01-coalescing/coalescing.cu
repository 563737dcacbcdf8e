/*
 * Lab 01: coalesced access to global memory. This file is yours.
 * Read handouts/01-coalescing.md first.
 *
 *   make run LAB=01          build this file into the lab's program and run it
 *   make run LAB=01 REF=1    the same with the kit's answers
 *   make check LAB=01        grade it as your instructor will
 *
 * The kit builds this file into a program (common/lab/01-coalescing/harness.cu)
 * that draws fresh random inputs, calls your launch functions, times every
 * kernel, counts the memory segments each warp request touches, and checks
 * every element of every result. Until all TODOs are done it says FAIL and
 * why.
 *
 * in_floats is `const float *` and out_floats is `float *`: keep these
 * types (they are the kit's contract). The kit compiles this file once and
 * also makes a counted copy of your kernels from that compilation, a
 * counting call before each load and store, to measure them without a
 * profiler: what it counts is what the compiler made of your code.
 */

/* ======== Part 1: the course's experiment ================================ */

/*
 * full_coalesced_access: one thread per element; thread tid computes
 * C[tid] = A[x] + B[x], `iterations` times over (the course: 100).
 *
 * TODO(1) Choose x so that the 32 threads of a warp read 32 consecutive
 * floats, one 128-byte segment per request. What must the threads of the
 * last block that have no element do?
 */
__global__ void full_coalesced_access(in_floats A, in_floats B, out_floats C, unsigned int n,
                                      int iterations)
{
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;

    if (tid >= n)
        return;
    for (int i = 0; i < iterations; i++)
        C[tid] = A[tid] + B[tid];
}

/*
 * non_coalesced_access: the same, but every iteration reads A[x] and B[x]
 * at a fresh random x in [0, n).
 *
 * TODO(2) Random numbers come from cuRAND's device API: a state of type
 * curandStatePhilox4_32_10_t, started with curand_init(seed, subsequence,
 * offset, &state), gives one stream of 32-bit numbers, curand(&state).
 * Which subsequence must each thread take so that no two threads draw the
 * same numbers? Then map each 32-bit r into [0, n) the course's way,
 * without a modulo: np is the width of one of n equal parts of [0, 2^32).
 */
__global__ void non_coalesced_access(in_floats A, in_floats B, out_floats C, unsigned int n,
                                     int iterations, unsigned int np, unsigned long long seed)
{
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    curandStatePhilox4_32_10_t state;

    if (tid >= n)
        return;
    curand_init(seed, tid, 0, &state);
    for (int i = 0; i < iterations; i++) {
        unsigned int x = curand(&state) / np;
        C[tid] = A[x] + B[x];
    }
}

/*
 * TODO(3) The launches, on the default stream. Choose the threads per
 * block and the blocks so that each of the n elements has its thread,
 * whatever n is. What bounds a block's size on every GPU, why should it be
 * a whole number of warps, and which threads then have no element?
 * (The course chose one size; Lab 04 measures what the choice costs.)
 */
void launch_full_coalesced_access(const float *A, const float *B, float *C, unsigned int n,
                                  int iterations)
{
    unsigned int threads = 1024;
    unsigned int blocks = (n + threads - 1) / threads;

    full_coalesced_access<<<blocks, threads>>>(A, B, C, n, iterations);
}

void launch_non_coalesced_access(const float *A, const float *B, float *C, unsigned int n,
                                 int iterations, unsigned int np, unsigned long long seed)
{
    unsigned int threads = 1024;
    unsigned int blocks = (n + threads - 1) / threads;

    non_coalesced_access<<<blocks, threads>>>(A, B, C, n, iterations, np, seed);
}

/*
 * TODO(5) Time a kernel yourself, as the course's experiments did. The kit
 * times every kernel of this lab itself; here you time one:
 * full_coalesced_access, through your launch_full_coalesced_access, on the
 * arrays and with the iterations given. Return the median, in milliseconds,
 * of `reps` timed launches (reps is odd, at most 15). Decide where a
 * launch's two CUDA events go, when the host may read the time between
 * them (a launch returns before its kernel ends), and what the first
 * launch costs that the next ones do not. The calls: cudaEventCreate,
 * cudaEventRecord, cudaEventSynchronize, cudaEventElapsedTime,
 * cudaEventDestroy. The kit compares your figure with its own.
 */
float time_full_coalesced_ms(const float *A, const float *B, float *C, unsigned int n, int iterations,
                             int reps)
{
    cudaEvent_t start, stop;
    float ms[15] = {0.0f}, t;

    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    /* A warm-up: the first launch also loads the kernel. */
    launch_full_coalesced_access(A, B, C, n, iterations);
    for (int i = 0; i < reps; i++) {
        cudaEventRecord(start, 0);
        launch_full_coalesced_access(A, B, C, n, iterations);
        cudaEventRecord(stop, 0);
        /* The launch returned at once: wait until the kernel has ended. */
        cudaEventSynchronize(stop);
        cudaEventElapsedTime(&ms[i], start, stop);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    /* The median: the middle one once sorted. */
    for (int i = 1; i < reps; i++)
        for (int j = i; j > 0 && ms[j - 1] > ms[j]; j--) {
            t = ms[j];
            ms[j] = ms[j - 1];
            ms[j - 1] = t;
        }
    return ms[reps / 2];
}

/* ======== Part 2: make a kernel coalesced ================================= */

/*
 * Sums of the rows and of the columns of an n x n matrix M, stored row by
 * row: M[r * n + c] is row r, column c.
 *
 * row_sums: one thread per row, walking along it. At each step the 32
 * threads of a warp read 32 different rows, n floats apart: 32 segments per
 * request.
 */
__global__ void row_sums(in_floats M, out_floats sums, unsigned int n)
{
    unsigned int r = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;

    if (r >= n)
        return;
    for (unsigned int c = 0; c < n; c++)
        sum += M[(size_t)r * n + c];
    sums[r] = sum;
}

/* column_sums: one thread per column, walking down it. At each step the
 * warp reads 32 neighbouring floats of one row: coalesced. */
__global__ void column_sums(in_floats M, out_floats sums, unsigned int n)
{
    unsigned int c = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;

    if (c >= n)
        return;
    for (unsigned int r = 0; r < n; r++)
        sum += M[(size_t)r * n + c];
    sums[c] = sum;
}

void launch_row_sums(const float *M, float *sums, unsigned int n)
{
    row_sums<<<(n + 255) / 256, 256>>>(M, sums, n);
}

void launch_column_sums(const float *M, float *sums, unsigned int n)
{
    column_sums<<<(n + 255) / 256, 256>>>(M, sums, n);
}

/*
 * TODO(4) row_sums_coalesced: the row sums again, with every request
 * coalesced. Which threads should work on one row, which elements should
 * each read, and how do they combine their partial sums into sums[r]? (The
 * lanes of a warp can add their values with __shfl_down_sync(0xffffffff,
 * value, offset), which gives each lane the value of the lane `offset`
 * above it.) Then launch it: how many threads and blocks does your choice
 * need?
 */
__global__ void row_sums_coalesced(in_floats M, out_floats sums, unsigned int n)
{
    unsigned int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32; /* a warp per row */
    unsigned int lane = threadIdx.x % 32;
    float sum = 0.0f;

    if (r >= n)
        return;
    for (unsigned int c = lane; c < n; c += 32)
        sum += M[(size_t)r * n + c];
    for (int offset = 16; offset > 0; offset /= 2)
        sum += __shfl_down_sync(0xffffffff, sum, offset);
    if (lane == 0)
        sums[r] = sum;
}

void launch_row_sums_coalesced(const float *M, float *sums, unsigned int n)
{
    unsigned int threads = 256;
    unsigned int blocks = (n + threads / 32 - 1) / (threads / 32);

    row_sums_coalesced<<<blocks, threads>>>(M, sums, n);
}
