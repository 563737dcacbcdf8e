/*
 * kit_rng.h - random numbers on cuRAND's device API.
 *
 * The kit uses the Philox4_32_10 generator: counter-based, so a thread can
 * start its own stream inside the kernel in a few instructions, with no
 * state array in global memory. (The course pre-initialised one 48-byte
 * XORWOW state per thread and loaded it; at 64M threads that would be 3 GB.)
 *
 *   per-thread stream: subsequence = the thread's global index;
 *   per-warp stream:   subsequence = the warp's global index, under another
 *                      seed, so every lane of a warp draws the same numbers
 *                      in step (the course's grouping picks a warp's group
 *                      this way).
 *
 * The course maps a 32-bit random number r into [0, n) with one division,
 * r / NP, instead of the slower r % n. kit_np rounds NP up, so the result is
 * below n for every r and every n >= 2 (for powers of two it is exactly the
 * course's 2^32 / n).
 */
#ifndef KIT_RNG_H
#define KIT_RNG_H

#include <curand_kernel.h>

#include "kit_check.h"

typedef curandStatePhilox4_32_10_t kit_rng;

/* Keeps per-warp streams apart from per-thread streams of the same seed. */
#define KIT_WARP_STREAM_SALT 0x9e3779b97f4a7c15ull

static __device__ __forceinline__ void kit_rng_thread(kit_rng *s, unsigned long long seed,
                                                      unsigned long long thread)
{
    curand_init(seed, thread, 0, s);
}

static __device__ __forceinline__ void kit_rng_warp(kit_rng *s, unsigned long long seed,
                                                    unsigned long long warp)
{
    curand_init(seed ^ KIT_WARP_STREAM_SALT, warp, 0, s);
}

/* NP for the division trick: ceil(2^32 / n), for 2 <= n <= 2^32 - 1. */
static __host__ __device__ __forceinline__ unsigned int kit_np(unsigned long long n)
{
    return (unsigned int)(((1ull << 32) + n - 1) / n);
}

/* The same as a 64-bit number, which also serves n = 1 (NP = 2^32: every
 * r maps to 0), at the price of a 64-bit division. */
static __host__ __device__ __forceinline__ unsigned long long kit_np64(unsigned long long n)
{
    return ((1ull << 32) + n - 1) / n;
}

/* The course's mapping of a 32-bit random number into [0, n). */
static __host__ __device__ __forceinline__ unsigned int kit_map_to_range(unsigned int r,
                                                                         unsigned int np)
{
    return r / np;
}

/* Fills p[0..n) with uniform floats in (0, 1], one Philox stream per thread. */
static __global__ void kit_fill_uniform_kernel(float *p, unsigned long long n, unsigned long long seed)
{
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    kit_rng s;

    kit_rng_thread(&s, seed, i);
    for (; i < n; i += step)
        p[i] = curand_uniform(&s);
}

static inline void kit_fill_uniform(float *d_p, unsigned long long n, unsigned long long seed)
{
    kit_fill_uniform_kernel<<<1024, 256>>>(d_p, n, seed);
    KIT_CHECK_LAUNCH();
}

/* Fills p[0..n) with random 32-bit words, one Philox stream per thread. */
static __global__ void kit_fill_bits_kernel(unsigned int *p, unsigned long long n, unsigned long long seed)
{
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    kit_rng s;

    kit_rng_thread(&s, seed, i);
    for (; i < n; i += step)
        p[i] = curand(&s);
}

static inline void kit_fill_bits(unsigned int *d_p, unsigned long long n, unsigned long long seed)
{
    kit_fill_bits_kernel<<<1024, 256>>>(d_p, n, seed);
    KIT_CHECK_LAUNCH();
}

#endif /* KIT_RNG_H */
