/*
 * Lab 03: warp divergence. This file is yours.
 * Read handouts/03-divergence.md first.
 *
 *   make run LAB=03          build this file into the lab's program and run it
 *   make run LAB=03 REF=1    the same with the kit's answers
 *   make check LAB=03        grade it as your instructor will
 *
 * The kit builds this file into a program (common/lab/03-divergence/harness.cu)
 * that draws fresh random inputs, calls the launch functions below, times
 * every kernel, counts how many lanes of a warp execute each branch body,
 * and checks every element of every result. Until all TODOs are done it
 * says FAIL and why.
 *
 * in_floats is `const float *`, out_floats `float *`, in_uints `const
 * unsigned int *`, out_uints `unsigned int *`. The kit also makes a counted
 * copy of your compiled kernels: every load and store the compiler made
 * counts the lanes of the warp that make it together. A store inside a
 * branch body counts the lanes that run the body, so keep these types and
 * keep each store in its branch.
 */

/* ======== Part 1: the course's experiment ================================ */

/*
 * The course's pair: one thread per element; thread tid computes
 * C[tid] = A[tid] op B[tid], `iterations` times over (the course: 100),
 * where op is one of four, chosen by a chain of four branches:
 * 0: A + B, 1: A - B, 2: A * B, 3: A / B. Which threads take which path
 * is yours to choose; the kit finds, for every element, the operation that
 * gave C[i], and checks the paths your threads took.
 *
 * TODO(1) warp_divergence, the course's worst case: every warp splits
 * evenly over the four paths, as many of its threads on each. Which
 * number, computed from tid, sends the threads of every warp down all four
 * paths? Where does the loop go, and where the chain, so that each branch
 * body holds its own load and store? What must the threads of the last
 * block that have no element do? Predict (the handout's question 1): how
 * much slower than TODO(2)'s kernel will it run?
 */
__global__ void warp_divergence(in_floats A, in_floats B, out_floats C, unsigned int n,
                                int iterations)
{
    /* TODO(1) */
}

/*
 * TODO(2) warp_no_divergence: the same four operations, each still on
 * about a quarter of the elements (from 1/8 to 3/8 of them, give or take a
 * block of 1,024 on small arrays), but no warp may diverge: the threads of
 * a warp must all take the same path. Which number do all the threads of
 * one warp share, whatever the block, and how do you turn it into a path
 * so that each operation still gets its quarter?
 */
__global__ void warp_no_divergence(in_floats A, in_floats B, out_floats C, unsigned int n,
                                   int iterations)
{
    /* TODO(2) */
}

/* The course's launches: 1024 threads per block. */
void launch_warp_divergence(const float *A, const float *B, float *C, unsigned int n,
                            int iterations)
{
    warp_divergence<<<(n + 1023) / 1024, 1024>>>(A, B, C, n, iterations);
}

void launch_warp_no_divergence(const float *A, const float *B, float *C, unsigned int n,
                               int iterations)
{
    warp_no_divergence<<<(n + 1023) / 1024, 1024>>>(A, B, C, n, iterations);
}

/* ======== The book's kernels (simpleDivergence) =========================== */

/*
 * a = 100 on one side of a branch, b = 200 on the other, c = a + b.
 * mathKernel1 branches on even and odd threads, mathKernel2 on even and odd
 * warps, mathKernel3 like mathKernel1 with two separate predicates. Each
 * side is one assignment: short enough for the compiler to compute both
 * sides under a predicate instead of branching (see the handout).
 */
__global__ void mathKernel1(out_floats c, unsigned int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float a, b;
    a = b = 0.0f;

    if ((unsigned int)tid >= n)
        return;
    if (tid % 2 == 0) {
        a = 100.0f;
    } else {
        b = 200.0f;
    }
    c[tid] = a + b;
}

__global__ void mathKernel2(out_floats c, unsigned int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float a, b;
    a = b = 0.0f;

    if ((unsigned int)tid >= n)
        return;
    if ((tid / warpSize) % 2 == 0) {
        a = 100.0f;
    } else {
        b = 200.0f;
    }
    c[tid] = a + b;
}

__global__ void mathKernel3(out_floats c, unsigned int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float ia, ib;
    ia = ib = 0.0f;

    if ((unsigned int)tid >= n)
        return;
    bool ipred = (tid % 2 == 0);
    if (ipred) {
        ia = 100.0f;
    }
    if (!ipred) {
        ib = 200.0f;
    }
    c[tid] = ia + ib;
}

/*
 * mathKernel4 means to branch like mathKernel2, on even and odd warps, with
 * a shift and a mask instead of / and %. The book prints its condition as
 *
 *     int itid = tid >> 5;
 *     if (itid & 0x01 == 0) ...
 *
 * and the kit runs that too, as printed ("mathKernel4 as printed" in the
 * table: look at which side its threads take).
 *
 * TODO(3) How does C group `itid & 0x01 == 0`, and what does the branch
 * then do? Return the condition the book meant: nonzero for the threads of
 * an even-numbered warp, 0 for the others. Then say in a comment, in a
 * line, why the printed one sends every thread the same way.
 */
__device__ int even_warp_bit_test(int tid)
{
    return 0; /* TODO(3) */
}

__global__ void mathKernel4(out_floats c, unsigned int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float ia, ib;
    ia = ib = 0.0f;

    if ((unsigned int)tid >= n)
        return;
    if (even_warp_bit_test(tid)) {
        ia = 100.0f;
    } else {
        ib = 200.0f;
    }
    c[tid] = ia + ib;
}

void launch_math_kernel(int which, float *c, unsigned int n)
{
    unsigned int blocks = (n + 255) / 256;

    switch (which) {
    case 1: mathKernel1<<<blocks, 256>>>(c, n); break;
    case 2: mathKernel2<<<blocks, 256>>>(c, n); break;
    case 3: mathKernel3<<<blocks, 256>>>(c, n); break;
    case 4: mathKernel4<<<blocks, 256>>>(c, n); break;
    }
}

/* ======== Part 2: make a divergent kernel warp-uniform ==================== */

/*
 * Every element i has a value x[i] in (0, 1] and a class cls[i], 0 to 3,
 * drawn at random, so that every warp holds elements of all four classes.
 * The work of an element is `work` steps of its class's own map of [0, 1)
 * into itself, driven by the element's value (think of four species of
 * particle, four materials, four kinds of token, each with its own code).
 * The kit computes the same maps on the host and checks every result bit
 * for bit: leave them as they are.
 */
__device__ float frac(float a) { return a - truncf(a); }

__device__ float square_map(float x, int work)
{
    float v = x;
    for (int k = 0; k < work; k++)
        v = frac(2.0f * fmaf(v, v, 0.3f) + x);
    return v;
}

__device__ float root_map(float x, int work)
{
    float v = x;
    for (int k = 0; k < work; k++)
        v = frac(8.0f * sqrtf(v + 0.5f) + x);
    return v;
}

__device__ float reciprocal_map(float x, int work)
{
    float v = x;
    for (int k = 0; k < work; k++)
        v = frac(1.0f / (v + 0.1f) + x);
    return v;
}

__device__ float linear_map(float x, int work)
{
    float v = x;
    for (int k = 0; k < work; k++)
        v = frac(fmaf(v, 9.87f, 0.123f) + x);
    return v;
}

/*
 * process_by_class: one thread per element, one branch per class. With the
 * classes mixed at random, each warp runs all four branches in turn.
 */
__global__ void process_by_class(in_floats x, in_uints cls, out_floats y, unsigned int n, int work)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (i >= n)
        return;
    unsigned int c = cls[i];
    if (c == 0)
        y[i] = square_map(x[i], work);
    else if (c == 1)
        y[i] = root_map(x[i], work);
    else if (c == 2)
        y[i] = reciprocal_map(x[i], work);
    else
        y[i] = linear_map(x[i], work);
}

void launch_process_by_class(const float *x, const unsigned int *cls, float *y, unsigned int n,
                             int work)
{
    process_by_class<<<(n + 255) / 256, 256>>>(x, cls, y, n, work);
}

/*
 * The same kernel, made warp-uniform by moving the data instead of the
 * code. The kit counts the elements of each class, calls your
 * partition_by_class, runs process_by_class unchanged on the partitioned
 * arrays (xs, cs), and puts each result back where its element came from:
 * y[from[j]] = ys[j]. The table shows what each step costs, and from which
 * work per element the whole detour pays.
 *
 * TODO(4) partition_by_class: group the elements by class. next[c] holds,
 * on entry, the first slot of class c's region (class 0's region first,
 * then 1, 2 and 3; the regions are as large as the classes). Give element
 * i a slot j of its own in its class's region, and write there its value
 * xs[j] = x[i], its class cs[j] and where it came from, from[j] = i. How
 * do threads of one class never take the same slot? The order inside a
 * region is yours. Four counters and millions of elements: how many
 * atomic operations does your kernel make on each counter, and could a
 * warp make one per class instead of one per element?
 * (__match_any_sync(mask, v) gives each lane the mask of the lanes in mask
 * that hold the same v; __popc counts the bits of a mask; __shfl_sync(mask,
 * v, lane) gives every lane in mask the v of lane `lane`.)
 */
__global__ void partition_by_class(in_floats x, in_uints cls, unsigned int n, unsigned int *next,
                                   out_floats xs, out_uints cs, out_uints from)
{
    /* TODO(4) */
}

void launch_partition_by_class(const float *x, const unsigned int *cls, unsigned int n,
                               unsigned int *next, float *xs, unsigned int *cs, unsigned int *from)
{
    partition_by_class<<<(n + 255) / 256, 256>>>(x, cls, n, next, xs, cs, from);
}
