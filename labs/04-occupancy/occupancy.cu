/*
 * Lab 04: occupancy and SM efficiency. This file is yours.
 * Read handouts/04-occupancy.md first.
 *
 *   make run LAB=04                          build this file into the lab's program and run it
 *   make run LAB=04 ARGS=--calculator-only   check your calculator alone, on the CPU (no GPU needed)
 *   make run LAB=04 REF=1                    the same with the kit's answers
 *   make check LAB=04                        grade it as your instructor will
 *
 * The kit builds this file into a program (common/lab/04-occupancy/harness.cu)
 * that checks your occupancy calculator against the rules on seven GPUs
 * and against the CUDA runtime's own answers on yours, runs the kernels
 * below at the course's and the book's launch configurations, measures
 * their achieved occupancy and SM efficiency, times them, and checks every
 * element they write. Until all TODOs are done it says FAIL and why.
 *
 * The calculator is yours to write: the runtime's occupancy functions
 * (cudaOccupancy...) do not exist in this file. gpu_limits is in
 * common/lab/04-occupancy/contract.h. in_floats is `const float *` and
 * out_floats is `float *`: keep these types. The kit also makes a counted
 * copy of your compiled kernels (it traces each warp's SM and time there).
 */

/* ======== Part 1: an occupancy calculator ================================= */

/*
 * How many blocks of a kernel can one SM of GPU g hold at once? Each of the
 * SM's resources gives its own answer; the harness takes the smallest. The
 * rules are the hardware's, as NVIDIA's own calculator (cuda_occupancy.h)
 * applies them. Your functions must work for any GPU g describes.
 *
 * TODO(1) Warps and blocks. An SM holds at most g->max_warps_per_sm warps
 * and at most g->max_blocks_per_sm blocks. A block occupies whole warps:
 * its last warp takes a whole slot even when some of its lanes have no
 * thread. A block of more than g->max_threads_per_block threads cannot
 * launch at all. How many blocks of `threads` threads fit?
 */
int blocks_by_warps(const gpu_limits *g, int threads)
{
    return 0; /* TODO(1) */
}

/*
 * TODO(2) Registers. The compiler gives every thread of a kernel the same
 * number of registers, regs_per_thread (0: registers set no limit). The
 * hardware does not hand them out per thread: a warp takes its 32 threads'
 * registers at once, rounded up to a multiple of g->reg_alloc_unit. Nor is
 * an SM's register file one pool: it is split evenly among its
 * g->sub_partitions sub-partitions, one per warp scheduler, and each warp
 * lives with all its registers in one of them. A block whose warps need
 * more than g->max_regs_per_block registers cannot launch at all (the
 * hardware counts its warps rounded up to a multiple of g->sub_partitions).
 * How many blocks of `threads` threads fit in the registers of one SM?
 */
int blocks_by_registers(const gpu_limits *g, int threads, int regs_per_thread)
{
    return 0; /* TODO(2) */
}

/*
 * TODO(3) Shared memory. A block takes the shared memory it declares,
 * static and dynamic together (smem bytes), plus g->smem_reserved_per_block
 * bytes that the driver keeps for itself in every block (1 KiB from compute
 * capability 8.0 on, none before), rounded up to a multiple of
 * g->smem_alloc_unit. A block that declares more than g->max_smem_per_block
 * cannot launch at all. How many blocks fit in g->smem_per_sm? (A block
 * that takes no shared memory at all, reserved share included, is not
 * limited by it.)
 */
int blocks_by_shared_memory(const gpu_limits *g, int smem)
{
    return 0; /* TODO(3) */
}

/* ======== Parts 2 to 4: the course's kernel and the book's =============== */

/*
 * The course's occupancy kernel (notes 000): four vector operations
 * branched by warp, so no warp diverges, repeated `iterations` times so
 * that the branches dominate the time. The kit launches it in the course's
 * two scenarios: min(n, 1024) threads per block, and the work spread over
 * all SMs first.
 */
__global__ void scenario_kernel(in_floats A, in_floats B, out_floats C, unsigned int n, int iterations)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;

    if (tid >= n)
        return;
    for (int i = 0; i < iterations; i++) {
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

/* The book's sumMatrixOnGPU2D (notes 001): one thread per element of an
 * nx x ny matrix, in 2D blocks of the shapes the book tries. */
__global__ void sumMatrixOnGPU2D(in_floats A, in_floats B, out_floats C, int nx, int ny)
{
    unsigned int ix = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int iy = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned int idx = iy * nx + ix;

    if (ix < (unsigned int)nx && iy < (unsigned int)ny)
        C[idx] = A[idx] + B[idx];
}

/*
 * TODO(6) The course's scenario 2. Scenario 1 puts min(n, 1024) threads in
 * a block, so that at 1,024 elements one block, on one SM, does all the
 * work while the others wait. Scenario 2 spreads the work over the SMs
 * first: return the threads per block for n elements on a GPU of `sms`
 * SMs that launch no more blocks than there are SMs (on an idle GPU the
 * block scheduler then gives each its own SM, in practice: CUDA does not
 * promise where a block runs), with blocks as small as that allows (the
 * kit launches as many blocks as cover n). Which sizes can
 * a block have, and why should it be a whole number of warps? Where even
 * blocks of 1,024 threads need more blocks than there are SMs, every SM
 * gets work whatever you choose: any whole number of warps passes there.
 * (The course's code assumed 16 SMs; the kit passes this GPU's count, and
 * checks your function on GPUs of many sizes.) Then measure: the kit times
 * scenario 2's kernel at 1,024 elements in blocks of every power of two
 * from a warp to 1,024 threads, and shows how far your choice is from the
 * fastest. Predict first: which sizes tie for the fastest on your GPU, and
 * why?
 */
int scenario2_threads_per_block(unsigned int n, int sms)
{
    return 0; /* TODO(6) */
}

/* ======== Part 5: occupancy by design ===================================== */

/*
 * A kernel that needs many registers: every thread keeps HEAVY_VALUES
 * values live through `rounds` rounds of arithmetic, then writes their sum.
 * The kit launches heavy and heavy_bounded in blocks of HEAVY_THREADS.
 */
__device__ void heavy_body(in_floats x, out_floats y, unsigned int n, int rounds)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v[HEAVY_VALUES], a, sum = 0.0f;

    if (i >= n)
        return;
    a = x[i];
#pragma unroll
    for (int k = 0; k < HEAVY_VALUES; k++)
        v[k] = a * (float)(k + 1);
    for (int r = 0; r < rounds; r++) {
#pragma unroll
        for (int k = 0; k < HEAVY_VALUES; k++)
            v[k] = v[k] * 0.5f + v[(k + 1) % HEAVY_VALUES] * 0.25f + a;
    }
#pragma unroll
    for (int k = 0; k < HEAVY_VALUES; k++)
        sum += v[k];
    y[i] = sum;
}

__global__ void heavy(in_floats x, out_floats y, unsigned int n, int rounds)
{
    heavy_body(x, y, n, rounds);
}

/*
 * TODO(4) heavy_bounded: the same kernel, with at least HEAVY_TARGET_WARPS
 * warps resident per SM in blocks of HEAVY_THREADS, and, within that, as
 * many registers for each thread as possible (every register taken away
 * must live in memory instead). A launch bound (__launch_bounds__: the
 * CUDA C++ Programming Guide) tells the compiler how the kernel will be
 * launched, and the compiler chooses its registers to fit. What does each
 * of its parameters promise? How many registers does heavy use, what
 * occupancy does your calculator give it, and which bound reaches the
 * target without taking away more?
 */
__global__ void /* TODO(4) */
heavy_bounded(in_floats x, out_floats y, unsigned int n, int rounds)
{
    heavy_body(x, y, n, rounds);
}

/*
 * TODO(5) Throttling with shared memory. The kit lowers the occupancy of
 * the book's kernel, in blocks of `threads` threads, by giving each block
 * dynamic shared memory that it does not use. Return the least dynamic
 * shared memory, in bytes, that lets no more than `blocks` blocks share an
 * SM, for a kernel with regs_per_thread registers and static_smem bytes of
 * static shared memory (any size that is allocated the same as the least
 * is as good). (The kit asks only for fewer blocks than the other limits
 * allow, and has let the kernel declare up to g->max_smem_per_block.)
 * Work from your TODO(3): how much must each block take so that one more
 * block no longer fits, and what does the allocation unit do to that?
 */
int shared_memory_for_blocks(const gpu_limits *g, int threads, int regs_per_thread, int static_smem,
                             int blocks)
{
    return 0; /* TODO(5) */
}
