"""Compiled binomial splits of the resampling engine (numba), on the generator of
:mod:`._kernels`: a resample's counts per block drawn as conditional binomials, and the median
of a resample found by descending a tree of binomial splits, instead of drawing every index.
Both are exact: they sample the very distribution that counting the draws one by one gives,
at O(blocks log n) or O(log n log J) per resample instead of O(n).

A binomial is drawn by Devroye's splitting at the median order statistic: the k-th smallest of
n uniforms is Beta(k, n + 1 - k); if it lies below p, those k points fall below p and the
other n - k are uniform above it, else the k - 1 points below it are uniform under it; so the
count is k + Bin(n - k, (p - u) / (1 - u)) or Bin(k - 1, p / u), for any k. Taking k near
n p, a few splits bring the expected successes (or failures) under ``_SMALL``, where the
binomial is drawn by inversion. The Beta variate is a ratio of Marsaglia and Tsang's gamma
variates.
"""

from __future__ import annotations

import math

import numpy as np

from ._kernels import _compiled, _next

_SMALL = 16.0
_UNIT = 2.0**-53


@_compiled()
def _uniform(state):
    """A double in (0, 1): the top 53 bits of an output, centred in their interval."""
    x, s0, s1, s2, s3 = _next(state[0], state[1], state[2], state[3])
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3
    return (float(x >> np.uint64(11)) + 0.5) * _UNIT


@_compiled()
def _normal(state):
    """Box and Muller's standard normal (one of the pair)."""
    radius = math.sqrt(-2.0 * math.log(_uniform(state)))
    return radius * math.cos(2.0 * math.pi * _uniform(state))


@_compiled()
def _gamma(state, shape):
    """Gamma(shape, 1) for shape >= 1 (Marsaglia and Tsang 2000, exact by rejection)."""
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = _normal(state)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        if math.log(_uniform(state)) < 0.5 * x * x + d - d * v + d * math.log(v):
            return d * v


@_compiled()
def _inversion(state, n, p):
    """Bin(n, p) by inversion of its distribution function, for n min(p, 1 - p) below
    ``_SMALL`` (a few steps); p above 1/2 through the complement."""
    if p > 0.5:
        return n - _inversion(state, n, 1.0 - p)
    q = 1.0 - p
    ratio = p / q
    first = math.exp(n * math.log(q))
    while True:
        u = _uniform(state)
        mass = first
        x = 0
        while u > mass and x <= n:
            u -= mass
            x += 1
            mass *= ((n + 1 - x) / x) * ratio
        if x <= n:  # else rounding left u above the last mass: draw again
            return x


@_compiled()
def _binomial(state, n, p):
    """Bin(n, p): how many of n uniform draws fall below p."""
    count = 0
    while True:
        if p <= 0.0 or n == 0:
            return count
        if p >= 1.0:
            return count + n
        if n * min(p, 1.0 - p) < _SMALL:
            return count + _inversion(state, n, p)
        # Split at the k-th smallest uniform with k near n p: it lands close to p, and the
        # binomial left over has about sqrt(n) expected successes or failures.
        k = min(max(int((n + 1) * p), 1), n)
        a = _gamma(state, float(k))
        u = a / (a + _gamma(state, float(n + 1 - k)))
        if u <= p:
            count += k
            n -= k
            p = (p - u) / (1.0 - u)
        else:
            n = k - 1
            p = p / u


@_compiled()
def split_draws(state, sizes, draws, hits):
    """``hits[r, b]``: how many of row r's ``draws[r]`` uniform draws from the items fall in
    block b (``sizes[b]`` items), as a chain of conditional binomials (the multinomial)."""
    total = 0
    for b in range(sizes.size):
        total += sizes[b]
    for r in range(hits.shape[0]):
        left = draws[r]
        rest = total
        for b in range(sizes.size - 1):
            taken = _binomial(state, left, sizes[b] / rest) if left > 0 else 0
            hits[r, b] = taken
            left -= taken
            rest -= sizes[b]
        hits[r, sizes.size - 1] = left


@_compiled()
def median_positions(state, n, cum_weights, rank_low, rank_high, low, high):
    """For each row r: the support positions ``low[r]``, ``high[r]`` of the ``rank_low``-th and
    ``rank_high``-th smallest (0-based) of n draws from the sorted support, point j drawn with
    probability proportional to its weight (``cum_weights``: 0, then the running sums).

    The draws in the left half of a node holding c of them are Bin(c, w_left / w_node) (the
    multinomial split), and only the half holding the wanted rank is followed. The two ranks
    share the splits while they are in the same node; once apart, their subtrees are
    conditionally independent, so separate splits are exact too.
    """
    points = cum_weights.size - 1
    for r in range(low.size):
        lo_a, hi_a, count_a, rank_a = 0, points, n, rank_low
        lo_b, hi_b, count_b, rank_b = 0, points, n, rank_high
        while hi_a - lo_a > 1 or hi_b - lo_b > 1:
            same = lo_a == lo_b and hi_a == hi_b
            left = 0
            if hi_a - lo_a > 1:
                mid = (lo_a + hi_a) >> 1
                share = (cum_weights[mid] - cum_weights[lo_a]) / (
                    cum_weights[hi_a] - cum_weights[lo_a]
                )
                left = _binomial(state, count_a, share)
                if rank_a < left:
                    hi_a, count_a = mid, left
                else:
                    lo_a, rank_a, count_a = mid, rank_a - left, count_a - left
            if hi_b - lo_b > 1:
                mid = (lo_b + hi_b) >> 1
                if not same:
                    share = (cum_weights[mid] - cum_weights[lo_b]) / (
                        cum_weights[hi_b] - cum_weights[lo_b]
                    )
                    left = _binomial(state, count_b, share)
                if rank_b < left:
                    hi_b, count_b = mid, left
                else:
                    lo_b, rank_b, count_b = mid, rank_b - left, count_b - left
        low[r] = lo_a
        high[r] = lo_b
