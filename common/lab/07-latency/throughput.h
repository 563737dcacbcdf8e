/*
 * 07-latency/throughput.h - Lab 07's part 6, instruction throughput: the kit's
 * compute-bound kernels, built twice into one program:
 *
 *   harness.cu               as every kernel of the kit is built: expf and
 *                            sinf are the accurate library functions;
 *   harness-fastmath.cu      with --use_fast_math: expf and sinf become
 *                            __expf and __sinf, as the course's notes 003
 *                            describe for the flag.
 *
 * The file that includes this one defines LAT_MATH_TABLE (the name of the
 * table it exports) first.
 * The first part (types, constants, the chains' starting values) is also
 * what the harness's CPU reference uses.
 */
#ifndef KIT_LAB_07_MATH_H
#define KIT_LAB_07_MATH_H

#include <cuda_runtime.h>
#include <math.h>

/* What the kernels compute. */
enum lat_math_op {
    LAT_FMA_F32,         /* x = fmaf(x, a, b) */
    LAT_FMA_F64,         /* x = fma(x, a, b), in double */
    LAT_EXPF,            /* x = fmaf(expf(x), a, b) */
    LAT_EXPF_INTRINSIC,  /* the same with __expf */
    LAT_SINF,            /* x = fmaf(sinf(x), a, b) */
    LAT_SINF_INTRINSIC,  /* the same with __sinf */
    LAT_MATH_OPS
};

/* Each thread runs this many independent chains (so that a warp always has
 * an instruction ready), `iterations` steps each; a step of an FMA chain is
 * LAT_FMAS_PER_STEP fused multiply-adds, a step of a function chain one
 * evaluation and one FMA. Thread t starts from values that depend on
 * t % LAT_STARTS only, so that the CPU checks every thread's result from
 * LAT_STARTS chains. */
#define LAT_CHAINS 4
#define LAT_FMAS_PER_STEP 16
#define LAT_STARTS 64

/* An FMA chain (float or double); else expf's (either) or sinf's. */
static __host__ __device__ inline int lat_is_fma(int op) { return op == LAT_FMA_F32 || op == LAT_FMA_F64; }
static __host__ __device__ inline int lat_is_exp(int op) { return op == LAT_EXPF || op == LAT_EXPF_INTRINSIC; }

/* The constants of each chain: exact in a float. The FMA chains creep from
 * [1, 2) towards 1 by 2^-20 of the distance a step; the function chains
 * contract (|a f'(x)| < 1 near their fixed points), so rounding errors do
 * not grow. */
static __host__ __device__ inline double lat_chain_a(int op)
{
    return lat_is_fma(op) ? 1.0 - 1.0 / 1048576.0 : lat_is_exp(op) ? 0.5 : 0.875;
}

static __host__ __device__ inline double lat_chain_b(int op)
{
    return lat_is_fma(op) ? 1.0 / 1048576.0 : lat_is_exp(op) ? -0.875 : 0.25;
}

/* Chain c of start s: in [1, 2) for the FMA chains, in [-1, 1) otherwise. */
static __host__ __device__ inline double lat_chain_start(int op, unsigned int s, unsigned int c)
{
    double k = (double)(s * LAT_CHAINS + c) / (LAT_STARTS * LAT_CHAINS);
    return lat_is_fma(op) ? 1.0 + k : 2.0 * k - 1.0;
}

/* Evaluations (fused multiply-adds for the FMA chains) in one launch. */
static inline double lat_chain_evaluations(int op, unsigned long long threads, int iterations)
{
    return (double)threads * LAT_CHAINS * iterations * (lat_is_fma(op) ? LAT_FMAS_PER_STEP : 1);
}

typedef struct {
    /* out: LAT_CHAINS values per thread (floats; doubles for LAT_FMA_F64). */
    void (*chain)(int op, void *out, unsigned int blocks, unsigned int threads, int iterations);
    /* y[i] = f(x[i]) for the function ops (expf, __expf, sinf, __sinf). */
    void (*map)(int op, const float *x, float *y, unsigned int n);
    /* the chain kernel of op, for the occupancy API */
    const void *(*chain_kernel)(int op);
} lat_math_api;

extern "C" const lat_math_api lat_math_precise;
extern "C" const lat_math_api lat_math_fast;

#endif /* KIT_LAB_07_MATH_H */

/* ---- the kernels: once per including file --------------------------------- */

#if defined(LAT_MATH_TABLE) && !defined(LAT_MATH_KERNELS_DONE)
#define LAT_MATH_KERNELS_DONE

namespace {

template <int OP> static __device__ __forceinline__ float lat_f(float x)
{
    switch (OP) {
    case LAT_EXPF: return expf(x);
    case LAT_EXPF_INTRINSIC: return __expf(x);
    case LAT_SINF: return sinf(x);
    default: return __sinf(x);
    }
}

template <int OP> static __global__ void lat_chain_f32(float *out, int iterations)
{
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x, s = t % LAT_STARTS;
    const float a = (float)lat_chain_a(OP), b = (float)lat_chain_b(OP);
    float x[LAT_CHAINS];

#pragma unroll
    for (int c = 0; c < LAT_CHAINS; c++)
        x[c] = (float)lat_chain_start(OP, s, c);
    if (OP == LAT_FMA_F32) {
        for (int i = 0; i < iterations; i++)
#pragma unroll
            for (int k = 0; k < LAT_FMAS_PER_STEP; k++)
#pragma unroll
                for (int c = 0; c < LAT_CHAINS; c++)
                    x[c] = fmaf(x[c], a, b);
    } else {
#pragma unroll 4
        for (int i = 0; i < iterations; i++)
#pragma unroll
            for (int c = 0; c < LAT_CHAINS; c++)
                x[c] = fmaf(lat_f<OP>(x[c]), a, b);
    }
#pragma unroll
    for (int c = 0; c < LAT_CHAINS; c++)
        out[(size_t)t * LAT_CHAINS + c] = x[c];
}

static __global__ void lat_chain_f64(double *out, int iterations)
{
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x, s = t % LAT_STARTS;
    const double a = lat_chain_a(LAT_FMA_F64), b = lat_chain_b(LAT_FMA_F64);
    double x[LAT_CHAINS];

#pragma unroll
    for (int c = 0; c < LAT_CHAINS; c++)
        x[c] = lat_chain_start(LAT_FMA_F64, s, c);
    for (int i = 0; i < iterations; i++)
#pragma unroll
        for (int k = 0; k < LAT_FMAS_PER_STEP; k++)
#pragma unroll
            for (int c = 0; c < LAT_CHAINS; c++)
                x[c] = fma(x[c], a, b);
#pragma unroll
    for (int c = 0; c < LAT_CHAINS; c++)
        out[(size_t)t * LAT_CHAINS + c] = x[c];
}

template <int OP> static __global__ void lat_map(const float *x, float *y, unsigned int n)
{
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = lat_f<OP>(x[i]);
}

static const void *chain_kernel(int op)
{
    switch (op) {
    case LAT_FMA_F32: return (const void *)lat_chain_f32<LAT_FMA_F32>;
    case LAT_FMA_F64: return (const void *)lat_chain_f64;
    case LAT_EXPF: return (const void *)lat_chain_f32<LAT_EXPF>;
    case LAT_EXPF_INTRINSIC: return (const void *)lat_chain_f32<LAT_EXPF_INTRINSIC>;
    case LAT_SINF: return (const void *)lat_chain_f32<LAT_SINF>;
    default: return (const void *)lat_chain_f32<LAT_SINF_INTRINSIC>;
    }
}

/* Launches op's chain kernel, the one chain_kernel names. Like a <<< >>>
 * launch it returns nothing: a failed launch is the caller's
 * KIT_CHECK_LAUNCH to find (cudaGetLastError). */
static void chain(int op, void *out, unsigned int blocks, unsigned int threads, int iterations)
{
    void *args[] = {&out, &iterations};
    (void)cudaLaunchKernel(chain_kernel(op), dim3(blocks), dim3(threads), args, 0, 0);
}

static void map(int op, const float *x, float *y, unsigned int n)
{
    switch (op) {
    case LAT_EXPF: lat_map<LAT_EXPF><<<1024, 256>>>(x, y, n); break;
    case LAT_EXPF_INTRINSIC: lat_map<LAT_EXPF_INTRINSIC><<<1024, 256>>>(x, y, n); break;
    case LAT_SINF: lat_map<LAT_SINF><<<1024, 256>>>(x, y, n); break;
    default: lat_map<LAT_SINF_INTRINSIC><<<1024, 256>>>(x, y, n); break;
    }
}

} /* namespace */

extern "C" const lat_math_api LAT_MATH_TABLE = {chain, map, chain_kernel};

#endif /* LAT_MATH_TABLE */
