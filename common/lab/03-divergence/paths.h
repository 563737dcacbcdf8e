/*
 * paths.h (Lab 03) - which of the course's four operations gave each
 * element of C, and what that says about the paths a kernel's warps took.
 * Host code only, used by harness.cu on every element of the course's pair.
 *
 * The student chooses which threads take which path, so the kit does not
 * compute one expected C: it asks, for every element, which operations
 * give C[i] from A[i] and B[i]. Each is correctly rounded on the host as on
 * the GPU, so the operation a thread ran gives C[i] bit for bit. Inputs in
 * (0, 1] make two operations agree only rarely (A * B and A / B where
 * B = 1; a sum and a quotient that round to the same float), so an element
 * gets the set of operations that give it, and a warp took one path if one
 * operation gives all its elements.
 *
 * Warps are 32 consecutive elements from element 0: the course's launches
 * give a thread per element, tid = its index, in blocks of whole warps.
 */
#ifndef KIT_LAB_03_PATHS_H
#define KIT_LAB_03_PATHS_H

#include <stdio.h>
#include <string.h>

#define LAB03_OPS 4
#define LAB03_WARP 32

/* Each operation's share of the elements by warp: from 1/8 to 3/8 of them,
 * a block of 1024 elements either way (at small sizes, warp-aligned groups
 * as large as a block cannot share the elements more evenly). */
#define LAB03_SHARE_SLACK 1024ull

/* The operations (bit k: operation k) that give c from a and b, bit for bit. */
static inline unsigned int lab03_ops_giving(float a, float b, float c)
{
    float r[LAB03_OPS] = {a + b, a - b, a * b, a / b};
    unsigned int m = 0, cu, ru;
    memcpy(&cu, &c, sizeof cu);
    for (int k = 0; k < LAB03_OPS; k++) {
        memcpy(&ru, &r[k], sizeof ru);
        m |= (unsigned int)(ru == cu) << k;
    }
    return m;
}

static inline int lab03_lowest_op(unsigned int m) { return m & 1 ? 0 : m & 2 ? 1 : m & 4 ? 2 : 3; }

/* Whether a full warp's elements (their sets of operations) can be given
 * to the four operations 8 each: for every set S of operations, no more
 * elements than 8 per operation of S are given only by operations of S
 * (Hall's condition; 32 elements, 32 places). */
static inline int lab03_splits_evenly(const unsigned char *m)
{
    for (unsigned int s = 1; s < (1u << LAB03_OPS) - 1; s++) {
        int inside = 0;
        for (int l = 0; l < LAB03_WARP; l++)
            inside += (m[l] & ~s) == 0;
        if (inside > LAB03_WARP / LAB03_OPS * __builtin_popcount(s))
            return 0;
    }
    return 1;
}

typedef struct {
    unsigned long long n, warps, full_warps; /* the last warp may be part-full */
    unsigned long long one_path;             /* warps that one operation explains */
    unsigned long long even;                 /* full warps that split 8 lanes to each operation */
    unsigned long long paths;                /* over all warps: 1 for a one-path warp, else its
                                                elements' distinct operations */
    unsigned long long elements[LAB03_OPS];  /* per operation: a one-path warp's elements its
                                                operation's, any other's each its lowest */
    unsigned long long first_split, first_uneven; /* the first warp not one-path, full and not even
                                                     (warps if none) */
    unsigned int split_lanes[LAB03_OPS], uneven_lanes[LAB03_OPS]; /* their lanes per lowest operation */
} lab03_paths;

/* The paths of C, from mask[i] = lab03_ops_giving(A[i], B[i], C[i]), none 0. */
static inline void lab03_paths_of(const unsigned char *mask, unsigned long long n, lab03_paths *p)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->warps = (n + LAB03_WARP - 1) / LAB03_WARP;
    p->full_warps = n / LAB03_WARP;
    p->first_split = p->first_uneven = p->warps;
    for (unsigned long long w = 0; w < p->warps; w++) {
        const unsigned char *m = mask + w * LAB03_WARP;
        unsigned int lanes = n - w * LAB03_WARP < LAB03_WARP ? (unsigned int)(n - w * LAB03_WARP) : LAB03_WARP;
        unsigned int all = (1u << LAB03_OPS) - 1, per[LAB03_OPS] = {0, 0, 0, 0};
        for (unsigned int l = 0; l < lanes; l++) {
            all &= m[l];
            per[lab03_lowest_op(m[l])]++;
        }
        if (all) {
            p->one_path++;
            p->paths++;
            p->elements[lab03_lowest_op(all)] += lanes;
        } else {
            for (int k = 0; k < LAB03_OPS; k++) {
                p->paths += per[k] > 0;
                p->elements[k] += per[k];
            }
            if (p->first_split == p->warps) {
                p->first_split = w;
                memcpy(p->split_lanes, per, sizeof per);
            }
        }
        if (lanes == LAB03_WARP) {
            if (lab03_splits_evenly(m))
                p->even++;
            else if (p->first_uneven == p->warps) {
                p->first_uneven = w;
                memcpy(p->uneven_lanes, per, sizeof per);
            }
        }
    }
}

/* By thread (TODO(1)): every full warp takes all four paths, 8 lanes on
 * each. Says on stderr what is wrong; returns 1 when all is well. */
static inline int lab03_by_thread_ok(const lab03_paths *p, const char *prog, const char *name, const char *todo)
{
    const unsigned int *l = p->uneven_lanes;
    unsigned long long w = p->first_uneven;
    if (p->even == p->full_warps)
        return 1;
    fprintf(stderr,
            "%s: %s: %llu of %llu warps did not split evenly over the four paths; the first, warp %llu "
            "(elements %llu to %llu), ran A + B with %u lanes, A - B with %u, A * B with %u, A / B with %u: "
            "every warp must take all four paths, as many lanes on each (%s)\n",
            prog, name, p->full_warps - p->even, p->full_warps, w, w * LAB03_WARP, w * LAB03_WARP + LAB03_WARP - 1,
            l[0], l[1], l[2], l[3], todo);
    return 0;
}

/* Whether operation k's elements are from 1/8 to 3/8 of n, give or take
 * LAB03_SHARE_SLACK: |8 e - 2 n| <= n + 8 slack. */
static inline int lab03_share_ok(unsigned long long e, unsigned long long n)
{
    unsigned long long a = 8 * e, b = 2 * n;
    return (a > b ? a - b : b - a) <= n + 8 * LAB03_SHARE_SLACK;
}

/* By warp (TODO(2)): every warp takes one path, and each operation gets
 * about a quarter of the elements. Says on stderr what is wrong; returns 1
 * when all is well. */
static inline int lab03_by_warp_ok(const lab03_paths *p, const char *prog, const char *name, const char *todo)
{
    const unsigned int *l = p->split_lanes;
    const unsigned long long *e = p->elements;
    unsigned long long w = p->first_split, last = w * LAB03_WARP + LAB03_WARP - 1;
    int ok = 1;
    if (p->one_path != p->warps) {
        fprintf(stderr,
                "%s: %s: %llu of %llu warps took more than one path; the first, warp %llu (elements %llu to "
                "%llu), ran A + B with %u lanes, A - B with %u, A * B with %u, A / B with %u: all the threads "
                "of a warp must take the same path (%s)\n",
                prog, name, p->warps - p->one_path, p->warps, w, w * LAB03_WARP, last < p->n ? last : p->n - 1,
                l[0], l[1], l[2], l[3], todo);
        ok = 0;
    }
    for (int k = 0; k < LAB03_OPS; k++)
        if (!lab03_share_ok(e[k], p->n)) {
            fprintf(stderr,
                    "%s: %s: its warps ran A + B on %llu of the %llu elements, A - B on %llu, A * B on %llu, "
                    "A / B on %llu: each operation must get about a quarter of them (from 1/8 to 3/8, give "
                    "or take %llu elements, one block) (%s)\n",
                    prog, name, e[0], p->n, e[1], e[2], e[3], LAB03_SHARE_SLACK, todo);
            ok = 0;
            break;
        }
    return ok;
}

#endif /* KIT_LAB_03_PATHS_H */
