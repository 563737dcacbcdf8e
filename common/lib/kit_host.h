/*
 * kit_host.h - host-side helpers: memory that is checked, and checks that
 * use every CPU core.
 *
 * Checking every element of a 256 MiB result against a CPU reference is
 * what a lab's default run spends most of its time on; kit_parallel_check
 * splits it over the host's threads and still reports the first wrong
 * element, as a serial loop would.
 */
#ifndef KIT_HOST_H
#define KIT_HOST_H

#include <thread>

#include "kit_check.h"

static inline void *kit_host_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        kit_die(KIT_EXIT_FAIL, "cannot allocate %zu bytes of host memory", bytes);
    return p;
}

/*
 * check(begin, end, ctx, &first) examines elements [begin, end), returns how
 * many are wrong and sets first to the lowest wrong index (when any).
 * kit_parallel_check runs it over [0, n) on up to 16 threads and returns
 * the total; *first_wrong gets the lowest wrong index overall (n if none).
 */
typedef long long (*kit_check_range_fn)(unsigned long long begin, unsigned long long end, void *ctx,
                                        unsigned long long *first);

static inline long long kit_parallel_check(unsigned long long n, kit_check_range_fn check, void *ctx,
                                           unsigned long long *first_wrong)
{
    unsigned int threads = std::thread::hardware_concurrency();
    long long bad[16] = {0}, total = 0;
    unsigned long long first[16];
    std::thread pool[16];

    threads = threads < 1 ? 1 : threads > 16 ? 16 : threads;
    if (n < (1ull << 20))
        threads = 1;
    for (unsigned int t = 0; t < threads; t++) {
        unsigned long long b = n * t / threads, e = n * (t + 1) / threads;
        first[t] = n;
        pool[t] = std::thread([=, &bad, &first] { bad[t] = check(b, e, ctx, &first[t]); });
    }
    *first_wrong = n;
    for (unsigned int t = 0; t < threads; t++) {
        pool[t].join();
        total += bad[t];
        if (bad[t] && first[t] < *first_wrong)
            *first_wrong = first[t];
    }
    return total;
}

/* Sets bytes of p to `byte`, on up to 16 threads: poisoning a 128 MiB host
 * array before every timed run must not take longer than the run. */
static inline void kit_parallel_fill(void *p, int byte, size_t bytes)
{
    unsigned int threads = std::thread::hardware_concurrency();
    std::thread pool[16];

    threads = threads < 1 ? 1 : threads > 16 ? 16 : threads;
    if (bytes < (4u << 20))
        threads = 1;
    for (unsigned int t = 0; t < threads; t++) {
        size_t b = bytes / threads * t, e = t + 1 == threads ? bytes : bytes / threads * (t + 1);
        pool[t] = std::thread([=] { memset((char *)p + b, byte, e - b); });
    }
    for (unsigned int t = 0; t < threads; t++)
        pool[t].join();
}

#endif /* KIT_HOST_H */
