/*
 * Lab 08: several GPUs - the course's vector addition spread over every GPU
 * of the machine, then peer-to-peer access between two of them. This file
 * is yours. Read handouts/08-multi-gpu.md first.
 *
 *   make run LAB=08          build this file into the lab's program and run it
 *   make run LAB=08 REF=1    the same with the kit's answers
 *   make check LAB=08        grade it as your instructor will
 *
 * The kit builds this file into a program (common/lab/08-multi-gpu/harness.cu)
 * that runs your gpus_add on one GPU and on all of them, with one stream
 * and with several per GPU, on A, B and C in pinned host memory. Every run
 * gets fresh random numbers in A and B and starts with the device arrays
 * and C full of garbage; after every run, timed or not, it checks every
 * element of C. On every GPU at once the job must gain enough of what the
 * host links gain at once. A traced run shows it the order in which you
 * queued the work. With
 * two GPUs or more it then asks your set_peer_access for access between
 * GPUs 0 and 1 and measures copies and a kernel across them. On a machine
 * with one GPU that part is skipped and said so. Until TODO(1) and
 * TODO(2) are done it says FAIL and why; TODO(3) runs, and can fail, only
 * with two GPUs or more.
 *
 * What the kit gives you:
 *   struct multi_gpu, struct gpu_share   the job (common/lab/08-multi-gpu/contract.h):
 *                        host arrays A, B, C of n elements; for each GPU g
 *                        below ngpus, gpu[g].device (the number to pass to
 *                        cudaSetDevice) and the room for the rest of its part;
 *   CUDA_CHECK(call)     checks a CUDA call: on an error it names the call,
 *                        this file and the line, and stops. After a launch:
 *                        CUDA_CHECK(cudaGetLastError()).
 */

/* The course's kernel: C[i] = A[i] + B[i], one thread per element. */
__global__ void vector_add(const unsigned int *A, const unsigned int *B, unsigned int *C, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n)
        C[i] = A[i] + B[i];
}

/* Part i of n elements cut into `parts` nearly equal parts:
 * [*first, *first + *count), from i * n / parts (rounded down) to where
 * part i + 1 starts; in 64 bits, since i * n passes 2^32. */
void share_of(unsigned int n, int parts, int i, unsigned int *first, unsigned int *count)
{
    unsigned int from = (unsigned int)((unsigned long long)n * i / parts);
    unsigned int to = (unsigned int)((unsigned long long)n * (i + 1) / parts);

    *first = from;
    *count = to - from;
}

/* ======== Part 1: one vector addition, every GPU ========================== */

/*
 * TODO(1) Each GPU's part. For every GPU g below m->ngpus, fill in
 * m->gpu[g]: which elements it gets (first, count; every element on exactly
 * one GPU), its three device arrays of count elements, and m->nstreams
 * streams. cudaMalloc and cudaStreamCreate take no GPU number: on which GPU
 * do they allocate, and what must you do before them? (The kit frees what
 * you made, GPU by GPU.)
 */
void gpus_setup(struct multi_gpu *m)
{
    /* TODO(1) */
}

/*
 * TODO(2) The per-GPU loop. Queue each GPU's share as m->nstreams chunks,
 * chunk c in the GPU's stream[c]: its part of A and B to the GPU, then
 * vector_add on it, then its part of C back. Return only when C is
 * complete. The GPUs are meant to work at the same time: when may the host
 * wait, and when must it not? Which GPU must be current when you launch
 * into a GPU's stream? Note where each chunk starts in the host arrays and
 * where in the GPU's own.
 */
void gpus_add(const struct multi_gpu *m)
{
    /* TODO(2) */
}

/* ======== Part 2: peer-to-peer ============================================= */

/*
 * TODO(3) Peer access between GPUs a and b, both ways: on = 1 turns it on,
 * on = 0 off. Return 1 when each GPU can now read and write the other's
 * memory directly, 0 otherwise. Not every pair of GPUs can: which call
 * tells you, before you try? cudaDeviceEnablePeerAccess(peer, 0) and
 * cudaDeviceDisablePeerAccess(peer) act for the current GPU, in one
 * direction. The kit calls your function twice with the same arguments, as
 * programs often do: what do those calls return the second time, and what
 * would that leave for the next CUDA_CHECK(cudaGetLastError()) to find?
 */
int set_peer_access(int a, int b, int on)
{
    return 0; /* TODO(3) */
}
