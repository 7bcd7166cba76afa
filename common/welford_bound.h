// welford_bound.h -- how far a tree of Chan/Welford merges in float can land from the exact mean and variance (host, C11).
//
// Lesson 16 checks its Welford results (and CUB's) against these bounds;
// tests/welford_sim.c replays the kernel's merge order on the host and checks
// that they hold. The derivation, to first order in u = 2^-24 (each float
// operation rounds once, by at most u relative; an FMA only removes
// roundings). Data: n floats, mean mu, variance V (M2 = S = n V), largest |x|
// M, range R = max - min. A merge of a = (na, ma, Sa) and b = (nb, mb, Sb) is
//     n = na + nb;  d = mb - ma;  w = nb / n;  mean = ma + d w;  S = Sa + (Sb + d d na w)
// (a Welford trip of 4k floats is the same merge with b its own two-pass
// summary). D: the most merges on any path from an element to the answer.
//
// The mean. A merge's mean is a weighted average of its sides' (1 - w, w), so
// it carries no more than the larger error of the two, plus its own roundings:
// the sum, at most half an ulp of a number below M + R, and d, w, d w: 3 u R.
// A trip's own mean (16 differences x - K summed) is off by at most 17 u R.
//     E = D (ulp(M + R) / 2 + 3 u R) + 17 u R          bounds every partial mean's error.
// With the data shifted by 1000 that half ulp is 2^-15: no mean of such data
// can be held closer than a few ulps of 1000, however small the spread.
//
// The variance. Exactly, S = the sum over merges of d^2 h (h = na nb / n)
// plus the trips' own S, so:
//   - the products d d na w: 6 u per term, 6 u S in all; the two additions:
//     2 u times the merge's S, and merges at the same distance from the answer
//     hold disjoint data, so at most 2 u D S; a trip's fma chain 18 u S;
//   - d is off by the sides' mean errors (at most 2 E): d^2 h moves by
//     4 E |d| h + 4 E^2 h. Summed over merges, by Cauchy-Schwarz with
//     sum d^2 h <= S and H = sum h <= n L, L = min(log2 n, D / 4) (h is at
//     most the smaller side, which an element is on at most log2 n times, and
//     at most a quarter of the merge, each element in D merges):
//     4 E sqrt(S n L) + 4 E^2 n L;
//   - a trip's deviations x - K - dm round by u R each: 2 u R sqrt(n S) in all.
// Divided by n:
//     |V' - V| <= (2 D + 24) u V + 4 E sqrt(L V) + 4 E^2 L + 2 u R sqrt(V) + (19 u R)^2
// This is the conditioning: E grows with |mean| (the ulp of M) and V does
// not, so the bound relative to V grows as |mean| / sqrt(V) (about 1700 for
// uniform data shifted by 1000, without limit for a few nearly equal values)
// and with the depth D. Counts are exact floats up to 2^24. Beyond, a merge
// whose count passes 2^24 rounds it (Dc of them on a path at most: the
// count's relative error c = Dc u); its w and na then add 2 c R to that
// merge's mean error (2 Dc c R to E) and 3 c V + c V (the final M2 / count)
// to V's bound.
#ifndef WELFORD_BOUND_H
#define WELFORD_BOUND_H

#include <math.h>
#include <stddef.h>

#include "check.h" // float_ulp

// Merges with rounding on the longest path of a block_combine over m threads
// that hold data (threads 0..m-1: a merge with an empty side is exact): the
// shuffles within warp 0, then across the warps that hold any.
static inline double welford_block_depth(size_t m)
{
    size_t warps = (m + 31) / 32;
    return ceil(log2((double)(m < 32 ? (m ? m : 1) : 32))) + ceil(log2((double)(warps ? warps : 1)));
}

// The merges on the longest path through lesson 16's reduce_body, for n
// elements on a grid of `grid` blocks of `block` threads: a thread's trips
// (one merge each: of `unroll` float4s while they last, then single ones,
// fewer than `unroll` of those) and its tail element, its block's combine,
// the last block's loop over the partials (ceil(grid / block) - 1: the first
// meets the identity) and its combine of those. Every merge that rounds adds
// an element: never more than n. *count_depth: how many of them can see a
// count above 2^24: those of the last block, when each block holds fewer.
static inline double welford_depth(size_t n, size_t grid, size_t block, size_t unroll, double *count_depth)
{
    size_t threads = grid * block, n4 = (n + 3) / 4, per = (n4 + threads - 1) / threads;
    size_t per_unrolled = (n4 + unroll * threads - 1) / (unroll * threads) + unroll - 1;
    per = per < per_unrolled ? per : per_unrolled;
    double top = (double)((grid + block - 1) / block) - 1.0 + welford_block_depth(grid < block ? grid : block);
    double d = (double)per + 1.0 + welford_block_depth(n < block ? n : block) + top;
    d = d < (double)n ? d : (double)n;
    int blocks_small = (double)block * (4.0 * (double)((n4 + threads - 1) / threads) + 2.0) <= 16777216.0;
    *count_depth = blocks_small && top < d ? top : d;
    return d;
}

// The bounds above for n elements merged at most `depth` deep (`count_depth`
// of those merges may see counts above 2^24): *mean_tol for the mean, the
// return value for the variance. Neither is tighter than the float answer's
// own rounding (float_ulp).
static inline double welford_tol(double n, double depth, double count_depth, double mean, double max_abs, double range,
                                 double var, double *mean_tol)
{
    const double u = ldexp(1.0, -24);
    double c = n > 16777216.0 ? count_depth * u : 0.0;
    double e = depth * (float_ulp(max_abs + range) / 2.0 + 3.0 * u * range) + 2.0 * count_depth * c * range +
               17.0 * u * range;
    double l = n >= 2.0 ? fmin(log2(n), depth / 4.0) : 0.0;
    double tol = (2.0 * depth + 24.0) * u * var + 4.0 * c * var + 4.0 * e * sqrt(l * var) + 4.0 * e * e * l +
                 2.0 * u * range * sqrt(var) + (19.0 * u * range) * (19.0 * u * range);
    *mean_tol = fmax(e, float_ulp(mean));
    return fmax(tol, float_ulp(var));
}

#endif // WELFORD_BOUND_H
