/*
 * Lab 05: CUDA streams, the course's "vector addition with streams". This
 * file is yours. Read handouts/05-streams.md first.
 *
 *   make run LAB=05          build this file into the lab's program and run it
 *   make run LAB=05 REF=1    the same with the kit's answers
 *   make check LAB=05        grade it as your instructor will
 *
 * The kit builds this file into a program (common/lab/05-streams/harness.cu)
 * that puts the host arrays in the kind of memory your alloc_host gives,
 * and runs your pipeline in both issue orders for 2 to 32 chunks, beside
 * its own serial versions. Every run gets fresh random numbers in A and B
 * and starts with the device arrays and C full of garbage; after every
 * run, timed or not, it checks every element of C, and of dA, dB and dC
 * (the data must go through them). It draws a timeline of one run, and
 * fails a pipeline in which no copy ran beside a kernel, which wins back
 * too little of what overlapping could save, whose issue orders are wrong,
 * or whose breadth-first copies in do not wait for each other (TODO(5)). Until all TODOs are done
 * it says FAIL and why.
 *
 * What the kit gives you:
 *   struct vector_pipeline   the job: host arrays A, B, C and device
 *                            arrays dA, dB, dC of n elements each,
 *                            streams[0] to streams[nchunks - 1] (yours:
 *                            TODO(1)), and events[0] to events[nchunks - 1]
 *                            (the kit's, for TODO(5))
 *                            (common/lab/05-streams/contract.h);
 *   vector_add               the course's kernel:
 *                            vector_add<<<blocks, threads, 0, stream>>>(A, B, C, n)
 *                            sets C[i] = A[i] + B[i] for every i < n, one
 *                            thread per element, i = blockIdx.x * blockDim.x
 *                            + threadIdx.x (the kit may give it extra work:
 *                            --kernel-work);
 *   CUDA_CHECK(call)         checks a CUDA call: on an error it names the
 *                            call, this file and the line, and stops. After
 *                            a launch: CUDA_CHECK(cudaGetLastError()).
 */

/* ======== Host memory and streams ========================================== */

/*
 * TODO(1) The pipeline's host resources: pinned memory and streams.
 *
 * The kit asks alloc_host for the memory of A, B and C, gives it back with
 * free_host, and keeps the arrays in memory of the kind you chose. A copy
 * from ordinary (pageable) memory goes through a staging buffer of the
 * driver: the CPU copies into it, the call returns only when the data has
 * left, and nothing overlaps it. Which allocation can the copy engines
 * read and write directly, and which call gives it back?
 *
 * Before a pipeline of n chunks the kit calls create_streams(streams, n),
 * and destroy_streams after it; chunk i's work goes into streams[i].
 * Which stream must none of them be, and why must no two chunks share
 * one? Then choose the kind: a blocking stream (cudaStreamCreate) waits
 * for the legacy default stream, and that stream for it; a non-blocking
 * one (cudaStreamCreateWithFlags, cudaStreamNonBlocking) does neither.
 * Either can run this pipeline: which would you rather have beside code
 * that launches into the default stream (the handout's question 10)?
 */
void *alloc_host(size_t bytes)
{
    return 0; /* TODO(1) */
}

void free_host(void *p)
{
    /* TODO(1) */
}

void create_streams(cudaStream_t *streams, int n)
{
    /* TODO(1) */
}

void destroy_streams(cudaStream_t *streams, int n)
{
    /* TODO(1) */
}

/* ======== The pipeline ===================================================== */

/*
 * TODO(2) Chunks. Chunk i of the job is elements [*first, *first + *count).
 * n is rarely a multiple of nchunks (the kit also runs 1,000,003 elements
 * in 7 chunks): where do the leftover elements go, so that every element
 * is in exactly one chunk and no chunk is much longer than the others?
 */
void chunk_of(unsigned int n, int nchunks, int i, unsigned int *first, unsigned int *count)
{
    /* TODO(2) */
}

/*
 * TODO(3) One chunk's three steps, each queued in chunk i's stream:
 * copy_in copies its part of A and B to the device, add runs vector_add on
 * it, copy_out copies its part of C back. Every call must return at once,
 * before the GPU has done the work: which copy call does that? Where does
 * the chunk start in each array, and how many blocks cover its elements?
 */
void copy_in(const struct vector_pipeline *p, int i)
{
    /* TODO(3) */
}

void add(const struct vector_pipeline *p, int i)
{
    /* TODO(3) */
}

void copy_out(const struct vector_pipeline *p, int i)
{
    /* TODO(3) */
}

/*
 * TODO(4) The wait. The kit reads C as soon as your pipeline returns, so
 * the host must first wait until every chunk is back. Which call waits for
 * your streams' work, and only for that?
 */
void wait_for_chunks(const struct vector_pipeline *p)
{
    /* TODO(4) */
}

/*
 * TODO(5) The course's two issue orders, depth-first and breadth-first
 * (the handout's "Scheduling"). On Fermi every copy in went into one
 * hardware queue, every kernel into a second and every copy out into a
 * third, each in the order issued, whatever its stream; an operation left
 * its queue only when the one before it in its own stream had finished.
 * So the order you issue in decides what waits behind what: a copy out
 * waits for its chunk's kernel, and everything queued behind it with it.
 * Write both orders from that; both return only when C is complete on the
 * host. The kit reads the order your code queued its copies in; with one
 * hardware queue the course predicts different times for the two orders
 * (question 9).
 *
 * Breadth-first queues every chunk's copy in before any kernel. On a GPU
 * with several copy engines as many of those copies as there are engines
 * start at once, share the one link and end late, and the first kernel,
 * which waits for chunk 0's alone, starts late (question 5). Give them
 * back the course's one copy at a time: in pipeline_breadth_first, each
 * chunk's copy in must wait until the copy in queued before it is done,
 * through the kit's events p->events[0] to p->events[nchunks - 1]
 * (cudaEventRecord(event, stream), cudaStreamWaitEvent: the kit reads
 * these calls, not a wait by the host). Which event does chunk i record,
 * where in its stream, and which event must its stream wait for, before
 * which call? The kit reads which copy in waits for which.
 */
void pipeline_depth_first(const struct vector_pipeline *p)
{
    /* TODO(5) */
}

void pipeline_breadth_first(const struct vector_pipeline *p)
{
    /* TODO(5) */
}
