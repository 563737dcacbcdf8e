/*
 * Lab 02: grouping - semi-coalesced access. This file is yours.
 * Read handouts/02-grouping.md first; do Lab 01 before this one.
 *
 *   make run LAB=02          build this file into the lab's program and run it
 *   make run LAB=02 REF=1    the same with the kit's answers
 *   make check LAB=02        grade it as your instructor will
 *
 * The kit builds this file into a program (common/lab/02-grouping/harness.cu)
 * that sweeps the group size G from 1 segment to the whole array, times
 * your kernel against the course's coalesced and random ones, counts the
 * segments each warp request touches, checks every element and that every
 * warp stayed in one group, and compares your prediction with the sweep.
 *
 * in_floats is `const float *` and out_floats is `float *`; the kit counts
 * your kernel's loads in a counted copy of its compiled code (see Lab 01).
 * struct grouping and struct l1_facts are in common/lab/02-grouping/contract.h.
 */

/*
 * semi_coalesced_access: the course's grouping. The array is cut into
 * groups of g.group_elems consecutive floats (G segments of 128 bytes).
 * Each warp picks one group at random, the same for its 32 lanes; then
 * every thread computes C[tid] = A[x] + B[x], `iterations` times, each time
 * at a fresh random x inside its warp's group. The kit launches it as the
 * course does (you wrote such launches in Lab 01): 1024 threads per
 * block, a thread per element, the last block's surplus threads idle.
 *
 * TODO(1) The 32 lanes of a warp must agree on the group without talking
 * to each other. cuRAND streams are deterministic: curand_init(seed,
 * subsequence, offset, &state) with the same three values gives the same
 * numbers. Which stream gives every lane of a warp the same draw, and how
 * do you keep it apart from the streams the threads draw their own x from?
 * Map the draws into range the course's way (Lab 01): a group number in
 * [0, g.group_count) by dividing by g.np_groups (64-bit: why?), an offset
 * in [0, g.group_elems) by dividing by g.np_group.
 */
__global__ void semi_coalesced_access(in_floats A, in_floats B, out_floats C, unsigned int n,
                                      int iterations, struct grouping g, unsigned long long seed)
{
    /* TODO(1) */
}

/*
 * TODO(2) Predict, before you run the sweep, the largest G (a power of two)
 * that stays within 2x of the coalesced time on this GPU. A model to start
 * from: each warp keeps coming back to its own group of G segments, in A
 * and in B, so grouping stays cheap while the groups of all the warps that
 * are resident on an SM at once fit together in that SM's L1. How many
 * warps are resident at once with f.threads_per_block threads per block?
 * Return 0 if not even G = 1 fits.
 */
unsigned int largest_cached_group(struct l1_facts f)
{
    return 0; /* TODO(2) */
}
