/*
 * contract.h (Lab 04) - what labs/04-occupancy/occupancy.cu defines for its
 * harness (harness.cu), and the limits its occupancy calculator works
 * with.
 */
#ifndef KIT_LAB_04_H
#define KIT_LAB_04_H

/*
 * What caps the blocks an SM holds at once: the GPU's limits and the units
 * it allocates in. The harness fills one for this GPU (from the device's
 * attributes) and one for each GPU of its table (the course's Tesla K40,
 * Volta, Turing, Ampere, Ada, Hopper).
 */
typedef struct {
    const char *name;          /* "NVIDIA H100 80GB HBM3", "Tesla K40 (the course's)" */
    int cc_major, cc_minor;    /* compute capability */
    int warp_size;             /* threads per warp: 32 */
    int max_threads_per_block; /* a larger block cannot launch: 1,024 */
    int max_warps_per_sm;      /* warp slots of one SM: 64 on a K40 or an H100, 32 on Turing */
    int max_blocks_per_sm;     /* blocks one SM holds at most: 16 on a K40 or Turing, 32 on Hopper */
    int regs_per_sm;           /* 32-bit registers of one SM: 65,536 */
    int max_regs_per_block;    /* registers one block may have in all: 65,536 */
    int reg_alloc_unit;        /* registers go to a warp in multiples of this: 256 */
    int sub_partitions;        /* an SM's quarters, each with a warp scheduler and its share of
                                  the registers: 4 */
    int smem_per_sm;           /* shared memory of one SM, bytes */
    int max_smem_per_block;    /* the most shared memory (static and dynamic) one block of the
                                  kernel may declare: 48 KiB unless the kernel opted in to more */
    int smem_alloc_unit;       /* shared memory goes to a block in multiples of this: 256 bytes
                                  before compute capability 8.0, 128 from 8.0 on */
    int smem_reserved_per_block; /* the driver's own share of each block's shared memory: 1 KiB
                                    from compute capability 8.0 on, none before */
} gpu_limits;

#ifdef __cplusplus
/* In the grader's worker (common/harness/worker.cu) a gpu_limits arrives
 * without its name, which stays with the kit's judge: this one stands in. */
static inline void kit_worker_fix(gpu_limits *g) { g->name = "the GPU the kit describes"; }
#endif

#define KIT_STUDENT_FUNCTIONS(X)                                                                   \
    X(int, blocks_by_warps, (const gpu_limits *g, int threads))                                   \
    X(int, blocks_by_registers, (const gpu_limits *g, int threads, int regs_per_thread))          \
    X(int, blocks_by_shared_memory, (const gpu_limits *g, int smem))                              \
    X(int, shared_memory_for_blocks,                                                               \
      (const gpu_limits *g, int threads, int regs_per_thread, int static_smem, int blocks))         \
    X(int, scenario2_threads_per_block, (unsigned int n, int sms))

/* The kernels the harness launches itself, at the configurations it chooses. */
#define KIT_STUDENT_KERNELS(X)                                                                     \
    X(scenario_kernel, (in_floats A, in_floats B, out_floats C, unsigned int n, int iterations)) \
    X(sumMatrixOnGPU2D, (in_floats A, in_floats B, out_floats C, int nx, int ny))               \
    X(heavy, (in_floats x, out_floats y, unsigned int n, int rounds))                            \
    X(heavy_bounded, (in_floats x, out_floats y, unsigned int n, int rounds))

/* heavy and heavy_bounded run in blocks of this many threads; heavy_bounded
 * must keep at least HEAVY_TARGET_WARPS warps resident per SM, the most
 * every GPU the kit supports holds (Turing: 32). */
#define HEAVY_THREADS 256
#define HEAVY_TARGET_WARPS 32
/* Values each thread of heavy keeps in flight. */
#define HEAVY_VALUES 64

/*
 * The calculator is the lab file's own: in that file the runtime's
 * occupancy functions are names that do not exist. (The harness, which
 * compares the calculator with them, is compiled without this.)
 */
#ifdef KIT_STUDENT_FILE
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor occupancy_api_not_allowed_in_the_lab_file
#define cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags occupancy_api_not_allowed_in_the_lab_file
#define cudaOccupancyMaxPotentialBlockSize occupancy_api_not_allowed_in_the_lab_file
#define cudaOccupancyMaxPotentialBlockSizeWithFlags occupancy_api_not_allowed_in_the_lab_file
#define cudaOccupancyMaxPotentialBlockSizeVariableSMem occupancy_api_not_allowed_in_the_lab_file
#define cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags occupancy_api_not_allowed_in_the_lab_file
#define cudaOccupancyAvailableDynamicSMemPerBlock occupancy_api_not_allowed_in_the_lab_file
#define cudaOccupancyMaxPotentialClusterSize occupancy_api_not_allowed_in_the_lab_file
#define cudaOccupancyMaxActiveClusters occupancy_api_not_allowed_in_the_lab_file
#define cudaOccMaxActiveBlocksPerMultiprocessor occupancy_api_not_allowed_in_the_lab_file
#define cudaOccMaxPotentialOccupancyBlockSize occupancy_api_not_allowed_in_the_lab_file
#define cudaOccMaxPotentialOccupancyBlockSizeVariableSMem occupancy_api_not_allowed_in_the_lab_file
#define cudaOccAvailableDynamicSMemPerBlock occupancy_api_not_allowed_in_the_lab_file
#define cuOccupancyMaxActiveBlocksPerMultiprocessor occupancy_api_not_allowed_in_the_lab_file
#define cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags occupancy_api_not_allowed_in_the_lab_file
#define cudaGetDriverEntryPoint occupancy_api_not_allowed_in_the_lab_file
#define cudaGetDriverEntryPointByVersion occupancy_api_not_allowed_in_the_lab_file
#endif

#endif /* KIT_LAB_04_H */
