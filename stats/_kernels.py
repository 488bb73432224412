"""Compiled loops of the resampling engine (numba), driven only by :mod:`.resampling`, and
the batched intervals' order statistics; imported only when one runs: numba takes ~0.1 s to
import and ~0.2 s more to set itself up on its first call (even loading cached code), which
Django's start-up should not pay.

One generator: indices come from xoshiro256** (seeded through ``np.random.SeedSequence``), two
32-bit halves an output, mapped to 0..span-1 by Lemire's multiply-shift with its rejection step,
so every index has exactly the same chance (``_draw``). Both kernels consume it the same way, so
counting g draws of g clusters into blocks (``count_draws``) and turning them straight into
means (``resample_means``) give the same resamples for the same state. Resampled means are
integer sums over integer sizes (exact), and their order statistics are found by counting them
into buckets, not by sorting.
"""

from __future__ import annotations

import os
import tempfile
from typing import cast

import numba
import numpy as np
from numpy.typing import NDArray

_32 = np.uint64(32)
_LOW = np.uint64(0xFFFFFFFF)
_CHUNK = 64


def _compiled(**options):
    """``numba.njit`` releasing the GIL, its machine code cached on disk: beside this file, or
    in the user's cache directory if this one is read-only, or else in a temporary directory
    (compiling takes seconds; loading the cache, milliseconds)."""

    def decorate(func):
        try:
            return numba.njit(nogil=True, cache=True, **options)(func)
        except RuntimeError:  # numba found nowhere to write its cache
            # numba.config sets its options from the environment at import (invisible to mypy).
            if numba.config.CACHE_DIR:  # type: ignore[attr-defined]
                return numba.njit(nogil=True, **options)(func)
            cache_dir = os.path.join(tempfile.gettempdir(), f"numba-{os.getuid()}")
            numba.config.CACHE_DIR = cache_dir  # type: ignore[attr-defined]
            return decorate(func)

    return decorate


def seeded_state(seed: int | None) -> NDArray[np.uint64]:
    """xoshiro256**'s 256-bit state from ``SeedSequence(seed)`` (never all zero)."""
    # uint64 as asked (numpy's stub gives the state either width, whatever is asked).
    state = cast("NDArray[np.uint64]", np.random.SeedSequence(seed).generate_state(4, np.uint64))
    if not state.any():  # the one state xoshiro cannot leave
        state[0] = 1
    return state


@_compiled(inline="always")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@_compiled(inline="always")
def _next(s0, s1, s2, s3):
    """xoshiro256** (Blackman and Vigna): one 64-bit output and the next state. The one
    generator of the engine; every kernel draws from it."""
    x = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return x, s0, s1, s2, s3


@_compiled(inline="always")
def _mapping(span, bits):
    """Lemire: a word w of b bits gives index (w span) >> b, unless (w span) mod 2^b falls
    below 2^b mod span (then redrawn): each index is then hit by exactly floor(2^b / span)
    words. A word is kept in a half's top bits (the rest zero), so the shifts are by 32
    whatever b. Returns the span, the mask keeping a word and the rejection floor."""
    wide = np.uint64(span)
    pad = np.uint64(32 - bits)
    keep = ((np.uint64(1) << np.uint64(bits)) - np.uint64(1)) << pad
    floor = ((np.uint64(1) << np.uint64(bits)) % wide) << pad
    return wide, keep, floor


@_compiled(inline="always")
def _draw(s0, s1, s2, s3, draws, span, keep, floor, block_of, counts):
    """``draws`` uniform indices in 0..span-1, each counted into ``counts[block_of[index]]``;
    returns the advanced xoshiro256** state. The one generator of the engine."""
    left = draws
    while left > 0:
        x, s0, s1, s2, s3 = _next(s0, s1, s2, s3)  # one 64-bit output: two draws
        m = (x & keep) * span
        if (m & _LOW) >= floor:
            counts[block_of[m >> _32]] += 1
            left -= 1
        if left > 0:
            m = ((x >> _32) & keep) * span
            if (m & _LOW) >= floor:
                counts[block_of[m >> _32]] += 1
                left -= 1
    return s0, s1, s2, s3


@_compiled()
def count_draws(state, span, bits, draws, block_of, hits):
    """``hits[r, b]``: how many of row r's ``draws[r]`` uniform draws (with replacement) from
    0..span-1 fall in block b (``block_of[index]``). ``state`` is advanced in place."""
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    wide, keep, floor = _mapping(span, bits)
    counts = np.zeros(hits.shape[1], np.int64)
    for r in range(hits.shape[0]):
        for b in range(counts.size):
            counts[b] = 0
        s0, s1, s2, s3 = _draw(s0, s1, s2, s3, draws[r], wide, keep, floor, block_of, counts)
        for b in range(counts.size):
            hits[r, b] = counts[b]
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3


@_compiled()
def sum_draws(state, span, bits, draws, block_of, values, out):
    """``out[r, j]``: the sum of ``values[block_of[index], j]`` over row r's ``draws[r]``
    uniform draws from 0..span-1 (the draws of ``count_draws``, summed as they come instead of
    counted). ``state`` is advanced in place."""
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    wide, keep, floor = _mapping(span, bits)
    columns = values.shape[1]
    for r in range(out.shape[0]):
        for j in range(columns):
            out[r, j] = 0.0
        left = draws[r]
        while left > 0:
            x, s0, s1, s2, s3 = _next(s0, s1, s2, s3)  # one 64-bit output: two draws
            m = (x & keep) * wide
            if (m & _LOW) >= floor:
                b = block_of[m >> _32]
                for j in range(columns):
                    out[r, j] += values[b, j]
                left -= 1
            if left > 0:
                m = ((x >> _32) & keep) * wide
                if (m & _LOW) >= floor:
                    b = block_of[m >> _32]
                    for j in range(columns):
                        out[r, j] += values[b, j]
                    left -= 1
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3


@_compiled(error_model="numpy")
def resample_means(
    state, g, bits, block_of, n_resamples, kind_end, sum_step, size_step, set_start, means, hits
):
    """Draw ``n_resamples`` resamples of ``g`` clusters and give each data set's mean in each.

    A draw takes the top ``bits`` bits (at most 32; g <= 2^bits) of a half of an output.
    ``block_of[c]``: the block of cluster c (blocks are runs of clusters lying within one kind of
    every data set). Data set j owns kinds ``set_start[j]..set_start[j + 1]``, kind k ending
    with block ``kind_end[k] - 1``; a resample's sum is then the sum over its kinds of
    ``sum_step[k]`` (the kind's cluster sum less the next kind's) times the number of draws up
    to the kind's end, and likewise its size: ``means[j, r]`` is their ratio in resample r
    (integers held exactly in float64). ``hits``, if it has rows, receives each resample's
    count per block. ``state`` (xoshiro256**) is advanced in place.
    """
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    keep_hits = hits.shape[0] > 0
    n_blocks = block_of[g - 1] + 1  # block_of ascends
    counts = np.zeros(n_blocks, np.int64)
    # Draws up to each block's end, for a chunk of resamples: resamples along the rows, so the
    # sums below run over contiguous memory (vectorised) and each set's means are written in
    # runs rather than one per row of ``means`` a resample.
    upto = np.zeros((n_blocks + 1, _CHUNK))
    sums = np.empty(_CHUNK)
    sizes = np.empty(_CHUNK)
    span, keep, floor = _mapping(g, bits)
    n_sets = set_start.size - 1
    for start in range(0, n_resamples, _CHUNK):
        rows = min(_CHUNK, n_resamples - start)
        for r in range(rows):
            for b in range(n_blocks):
                counts[b] = 0
            s0, s1, s2, s3 = _draw(s0, s1, s2, s3, g, span, keep, floor, block_of, counts)
            total = 0
            for b in range(n_blocks):
                total += counts[b]
                upto[b + 1, r] = total
            if keep_hits:
                for b in range(n_blocks):
                    hits[start + r, b] = counts[b]
        for j in range(n_sets):
            for r in range(_CHUNK):
                sums[r] = 0.0
                sizes[r] = 0.0
            for k in range(set_start[j], set_start[j + 1]):
                end, step, size = kind_end[k], sum_step[k], size_step[k]
                for r in range(_CHUNK):
                    sums[r] += step * upto[end, r]
                    sizes[r] += size * upto[end, r]
            for r in range(rows):
                means[j, start + r] = sums[r] / sizes[r]
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3


@_compiled()
def _select(a, lo, hi, k):
    """Reorder ``a[lo:hi]`` so that ``a[k]`` is its (k - lo)-th smallest, none before it larger
    and none after it smaller (Hoare's quickselect, median-of-three pivots)."""
    hi -= 1
    rounds = 0
    state = 12345
    while hi > lo:
        rounds += 1
        mid = (lo + hi) >> 1
        if rounds > 16:  # an unlucky run of pivots (an adversarial order?): random ones from now
            state = (state * 1103515245 + 12345) % 2147483648
            mid = lo + state % (hi - lo + 1)
        if a[mid] < a[lo]:
            a[mid], a[lo] = a[lo], a[mid]
        if a[hi] < a[lo]:
            a[hi], a[lo] = a[lo], a[hi]
        if a[hi] < a[mid]:
            a[hi], a[mid] = a[mid], a[hi]
        pivot = a[mid]
        i = lo
        j = hi
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        # a[lo..j] <= pivot <= a[i..hi], and whatever lies between equals the pivot.
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return


@_compiled()
def _select_ranks(a, length, ranks, out):
    """``out[i]`` = the ``ranks[i]``-th smallest of ``a[:length]`` (ranks sorted, distinct)."""
    lo = 0
    for i in range(ranks.size):
        k = ranks[i]
        if i > 0 and k == ranks[i - 1] + 1:
            # The next one up is the least of what lies above the last: one scan, no partition.
            best = k
            for p in range(k + 1, length):
                if a[p] < a[best]:
                    best = p
            a[k], a[best] = a[best], a[k]
        else:
            _select(a, lo, length, k)
        out[i] = a[k]
        lo = k + 1


@_compiled(fastmath=True)
def _extremes(values):
    """The least and greatest of finite values (fastmath: vectorised, and exact for min/max)."""
    least = values[0]
    most = values[0]
    for v in values:
        least = min(least, v)
        most = max(most, v)
    return least, most


@_compiled()
def order_statistics(x, ranks, buckets, out):
    """``out[i] = np.sort(x[i])[ranks]`` for finite rows and sorted distinct ranks.

    Each row is counted into ``buckets`` equal-width buckets between its least and greatest
    value (the bucket is a non-decreasing function of the value, so the counts tell which
    bucket holds each rank); only the values in those buckets, a few dozen, are selected from.
    Three passes over the row with no branch to mispredict, where quickselect on random data
    mispredicts at every other comparison.
    """
    m, n = x.shape
    counts = np.empty(buckets + 1, np.int64)
    wanted = np.zeros(buckets + 1, np.bool_)
    work = np.empty(n)
    bucket_of = np.empty(n, np.int32)
    mapped = np.empty(ranks.size, np.int64)
    for row in range(m):
        values = x[row]
        least, most = _extremes(values)
        if not least < most:
            for i in range(ranks.size):
                out[row, i] = least
            continue
        # (v - least) * scale lies in [0, buckets]: rounding cannot carry it to buckets + 1.
        scale = buckets / (most - least)
        if not scale < np.inf:  # a subnormal spread: select from the whole row
            for p in range(n):
                work[p] = values[p]
            _select_ranks(work, n, ranks, out[row])
            continue
        for b in range(buckets + 1):
            counts[b] = 0
        for p in range(n):
            b = int((values[p] - least) * scale)
            bucket_of[p] = b
            counts[b] += 1
        below = 0  # values in the buckets before b
        b = 0
        taken = 0  # candidates in the wanted buckets before b
        for i in range(ranks.size):
            while below + counts[b] <= ranks[i]:
                below += counts[b]
                if wanted[b]:
                    taken += counts[b]
                b += 1
            wanted[b] = True
            mapped[i] = ranks[i] - below + taken
        found = 0
        for p in range(n):
            if wanted[bucket_of[p]]:
                work[found] = values[p]
                found += 1
        _select_ranks(work, found, mapped, out[row])
        for b in range(buckets + 1):
            wanted[b] = False
