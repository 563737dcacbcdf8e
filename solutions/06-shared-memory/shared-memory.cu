/*
 * Lab 06: shared memory - a matrix transpose, bank conflicts, pitched
 * arrays. This file is yours. Read handouts/06-shared-memory.md first.
 *
 *   make run LAB=06          build this file into the lab's program and run it
 *   make run LAB=06 REF=1    the same with the kit's answers
 *   make check LAB=06        grade it as your instructor will
 *   make sanitize LAB=06 TOOL=racecheck    look for shared-memory races
 *
 * The kit builds this file into a program (common/lab/06-shared-memory/harness.cu)
 * that transposes an n x n matrix of fresh random floats with each kernel,
 * times it against a plain copy (the bandwidth ceiling), counts the segments
 * of every global request and the wavefronts of every shared-memory request
 * (one pass of the 32 banks; more than one is a bank conflict), and checks
 * every element; then your scale_rows over a matrix with packed rows and
 * over one from cudaMallocPitch.
 *
 * in_floats is `const float *`, out_floats `float *`, shared_float `float`.
 * Keep these types, and declare tiles as __shared__ shared_float; the kit
 * counts your compiled kernels in a counted copy of them.
 */

/* A block moves one TILE x TILE tile of the matrix; each of its threads
 * moves TILE / ROWS elements of it (the kernels' loop over j). */
enum { TILE = 32, ROWS = 8 };

/*
 * transpose_naive: out[x][y] = in[y][x] straight from global memory. A warp
 * reads 32 neighbours of one row of in (coalesced) and writes them down a
 * column of out: 32 floats n apart, 32 segments per store request.
 */
__global__ void transpose_naive(in_floats in, out_floats out, unsigned int n)
{
    unsigned int x = blockIdx.x * TILE + threadIdx.x;
    unsigned int y = blockIdx.y * TILE + threadIdx.y;

    for (unsigned int j = 0; j < TILE; j += ROWS)
        if (x < n && y + j < n)
            out[(size_t)x * n + y + j] = in[(size_t)(y + j) * n + x];
}

/*
 * TODO(1) transpose_shared: coalesced both ways, through a tile in shared
 * memory. The block reads its tile of in row by row (as transpose_naive
 * does) into a __shared__ shared_float tile[TILE][TILE], then writes the
 * tile's columns as rows of out, at the transposed tile's place. What must
 * happen between the two halves, and why? Which tile element does thread
 * (threadIdx.x, threadIdx.y + j) write out, and where?
 */
__global__ void transpose_shared(in_floats in, out_floats out, unsigned int n)
{
    __shared__ shared_float tile[TILE][TILE];
    unsigned int x = blockIdx.x * TILE + threadIdx.x;
    unsigned int y = blockIdx.y * TILE + threadIdx.y;

    for (unsigned int j = 0; j < TILE; j += ROWS)
        if (x < n && y + j < n)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (unsigned int j = 0; j < TILE; j += ROWS)
        if (x < n && y + j < n)
            out[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

/*
 * TODO(2) transpose_padded: transpose_shared reads a column of its tile:
 * 32 floats TILE words apart, all in one of the 32 banks, so the read takes
 * 32 passes. Change the tile's shape, not the code that uses it, so that a
 * column's 32 floats fall in 32 different banks.
 */
__global__ void transpose_padded(in_floats in, out_floats out, unsigned int n)
{
    __shared__ shared_float tile[TILE][TILE + 1];
    unsigned int x = blockIdx.x * TILE + threadIdx.x;
    unsigned int y = blockIdx.y * TILE + threadIdx.y;

    for (unsigned int j = 0; j < TILE; j += ROWS)
        if (x < n && y + j < n)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (unsigned int j = 0; j < TILE; j += ROWS)
        if (x < n && y + j < n)
            out[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

/*
 * TODO(3) The launches of the three kernels. All three move one tile per
 * block, each thread TILE / ROWS elements of it (the loop over j): which
 * block shape does that loop expect, and which grid gives every tile of
 * the n x n matrix its block (n need not be a multiple of TILE)? The kit
 * counts the elements each kernel reads and writes: each exactly once.
 */
void launch_transpose_naive(const float *in, float *out, unsigned int n)
{
    dim3 block(TILE, ROWS), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    transpose_naive<<<grid, block>>>(in, out, n);
}

void launch_transpose_shared(const float *in, float *out, unsigned int n)
{
    dim3 block(TILE, ROWS), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    transpose_shared<<<grid, block>>>(in, out, n);
}

void launch_transpose_padded(const float *in, float *out, unsigned int n)
{
    dim3 block(TILE, ROWS), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    transpose_padded<<<grid, block>>>(in, out, n);
}

/* ======== Part 3: pitched arrays ============================================ */

/*
 * TODO(4) scale_rows: out = 2 * in, element by element, for a rows x cols
 * matrix whose rows start `pitch` floats apart (pitch >= cols: a row of
 * cudaMallocPitch ends in padding; where the rows are packed, pitch ==
 * cols). Which index holds element (r, c) of each array? Then its launch:
 * which grid and block give every element a thread, whatever rows and
 * cols are (the kit's cols is 1,000: no multiple of 32; its rows, up to
 * 65,535, the most a grid's y reaches), and what must the threads past the
 * end of a row do?
 */
__global__ void scale_rows(in_floats in, out_floats out, unsigned int rows, unsigned int cols,
                           unsigned int pitch)
{
    unsigned int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;

    if (c < cols && r < rows)
        out[(size_t)r * pitch + c] = 2.0f * in[(size_t)r * pitch + c];
}

void launch_scale_rows(const float *in, float *out, unsigned int rows, unsigned int cols, unsigned int pitch)
{
    dim3 block(256), grid((cols + 255) / 256, rows);

    scale_rows<<<grid, block>>>(in, out, rows, cols, pitch);
}
