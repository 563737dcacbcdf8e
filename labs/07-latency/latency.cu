/*
 * Lab 07: latency hiding - Little's law on your GPU. This file is yours.
 * Read handouts/07-latency.md first.
 *
 *   make run LAB=07          build this file into the lab's program and run it
 *   make run LAB=07 REF=1    the same with the kit's answers
 *   make check LAB=07        grade it as your instructor will
 *
 * The kit builds this file into a program (common/lab/07-latency/harness.cu)
 * that measures how long one load takes (one thread chasing pointers
 * through L1, L2 and DRAM) and how many bytes per second the memory
 * delivers, hands both to your littles_law, and runs the two kernels below
 * at many occupancies, checking every partial sum they write. Until all
 * TODOs are done it says FAIL and why.
 *
 * in_floats is `const float *` and out_floats is `float *`: keep these
 * types. The kit also makes a counted copy of your compiled kernels, to see
 * your loads without a profiler.
 */

/* ======== Part 3: Little's law ============================================ */

/*
 * The course (notes 001, "latency hiding"): to keep a pipeline busy, the
 * work in flight must be latency x throughput. For memory:
 *
 *   bytes in flight = latency (cycles) x bandwidth (bytes per cycle)
 *
 * and a thread with one 4-byte load in flight holds 4 of those bytes.
 *
 * The kit fills g with what it measured on your GPU (and, for the course's
 * table, with the notes' Fermi and Kepler figures):
 *   g->l1_cycles, g->l2_cycles, g->dram_cycles   latency of one load that hits
 *                                                L1, hits L2, goes to DRAM
 *   g->clock_ghz        the clock those cycles count (cycles per nanosecond)
 *   g->bandwidth_gbs    the memory bandwidth to sustain, GB/s
 *   g->sms, g->warp_size, g->bytes_per_load (4: one float per thread)
 *   g->resident_warps   the warps per SM that sum_ilp below runs with
 *
 * TODO(1) Fill r: bytes_per_cycle, bytes_in_flight, then the threads, the
 * warps on the whole GPU and the warps per SM that keep that many bytes in
 * flight at one load each, as the notes do for Fermi (74 KB, 18,500
 * threads, 579 warps, 36 per SM). Which of the three latencies belongs in
 * the law when the bandwidth is the memory's? What does a GB/s divided by
 * a GHz give? Last, loads_per_thread: how many independent loads must each
 * thread keep in flight when only g->resident_warps warps per SM are there
 * to hold them (a whole number, at least 1)?
 */
void littles_law(const gpu_facts *g, in_flight *r)
{
    /* TODO(1) */
}

/* ======== Parts 4 and 5: thread-level against instruction-level parallelism */

/*
 * sum_tlp: a streaming kernel with one load in flight per thread. Thread t
 * of the grid's T threads adds up in[t], in[t + T], in[t + 2T], ... and
 * writes the sum to partial[t]. Each warp request reads 32 neighbouring
 * floats, one 128-byte segment. `#pragma unroll 1` keeps the compiler from
 * starting the next load before this one's value has been added: all the
 * parallelism is in the threads (TLP), so the bandwidth grows with the
 * warps resident per SM until Little's law is satisfied. The kit launches
 * exactly as many blocks as fit at once, and throttles how many fit with
 * dynamic shared memory that the kernel does not use.
 */
__global__ void sum_tlp(in_floats in, out_floats partial, unsigned int n)
{
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int T = gridDim.x * blockDim.x;
    float sum = 0.0f;

#pragma unroll 1
    for (unsigned int i = t; i < n; i += T)
        sum += in[i];
    partial[t] = sum;
}

/*
 * sum_ilp: the same sums, each thread keeping `loads` (1 to 16) independent
 * loads in flight: instruction-level parallelism (ILP), so that few warps
 * per SM hold as many bytes in flight as many warps of sum_tlp do.
 *
 * TODO(2) Thread t must still add up exactly in[t], in[t + T], in[t + 2T],
 * ... (the kit checks every partial[t]), but in rounds: a round starts
 * `loads` loads before it needs any of their values, then adds them. Which
 * elements should one round read so that every warp request is still one
 * coalesced 128-byte segment, and where does the next round start? Where
 * do the values wait meanwhile (registers: a loop the compiler unrolls
 * completely needs a bound it knows, 16, so loads is a limit inside it)?
 * What do the loads past `loads`, or past n, do?
 */
__global__ void sum_ilp(in_floats in, out_floats partial, unsigned int n, int loads)
{
    /* TODO(2) */
}
