"""The one resampling engine: every bootstrap in :mod:`stats` draws its resamples here.

A resample of the cluster bootstrap is fully described by how often each cluster was drawn
(the statistics here are functions of the drawn clusters' sums or histograms), and clusters
that look alike can be counted together. So the engine hands back counts: per cluster, or per
block of consecutive clusters (a kind of cluster, a distinct value), per resample. All come
from the compiled xoshiro256** generator of :mod:`._kernels`, seeded through
``np.random.SeedSequence(seed)``: draws mapped to items and counted one by one, or, for many
draws into few blocks, split into the blocks by exact binomials (:mod:`._binomial`); a
resampled median's middle pair is found by binomial splits of the sorted support. A
:class:`Draws` is one seeded stream, and a caller wanting its resamples in chunks of rows gets
exactly the draws of one call for all of them.

The batched means (:meth:`Draws.means`) count draws one by one as :func:`block_hits` does, so
the summary intervals and the shared block counts with the same seed see the same resamples.

numba is imported when the first resample is drawn, not when this module is, so Django's
start-up does not pay for it; :func:`load_kernels` pays it ahead (e.g. while a refresh waits on
its database).
"""

from __future__ import annotations

import threading

import numpy as np
from numpy.typing import ArrayLike, NDArray

# Bits of generator output a draw takes (tests narrow it to make a bias visible).
_WORD_BITS = 32
# From this many draws per block on, a row's counts are split by binomials rather than counted
# draw by draw (measured break-even: a binomial split costs about a hundred single draws). A
# draw counted for `sums` also adds its block's values, so there splitting pays from half that.
_SPLIT_DRAWS = 96
_SPLIT_SUMMED_DRAWS = 48


class Draws:
    """One seeded stream of uniform draws with replacement (``seed`` None: fresh entropy)."""

    def __init__(self, seed: int | None) -> None:
        # numba: imported when first needed, not at Django's start-up
        from . import _binomial, _kernels

        self._kernels, self._binomial = _kernels, _binomial
        self.state = _kernels.seeded_state(seed)

    def counts(
        self,
        block_sizes: ArrayLike,
        rows: int,
        draws: ArrayLike | None = None,
        *,
        one_by_one: bool = False,
    ) -> NDArray[np.float64]:
        """``(rows, blocks)``: per row, how many of its draws fall in each block.

        The items ``0..sum(block_sizes) - 1`` are cut into consecutive blocks of
        ``block_sizes``; each row draws ``draws[r]`` items uniformly with replacement (by
        default as many as there are items: one resample of the cluster bootstrap). Many
        draws into few blocks are split into the blocks by binomials (the same distribution at
        a fraction of the cost); ``one_by_one`` always draws and counts every item, as
        :meth:`means` does.
        """
        sizes = np.asarray(block_sizes, dtype=np.int64)
        span = int(sizes.sum())
        _check_span(span)
        if draws is None:
            per_row = np.full(rows, span, dtype=np.int64)
        else:
            per_row = np.ascontiguousarray(draws, dtype=np.int64)
        hits = np.empty((rows, sizes.size))
        if not one_by_one and per_row.sum() > _SPLIT_DRAWS * sizes.size * rows:
            self._binomial.split_draws(self.state, sizes, per_row, hits)
            return hits
        block_of = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
        self._kernels.count_draws(self.state, span, _WORD_BITS, per_row, block_of, hits)
        return hits

    def sums(
        self, block_sizes: ArrayLike, values: NDArray[np.float64], rows: int
    ) -> NDArray[np.float64]:
        """``(rows, k)``: ``counts(block_sizes, rows) @ values`` (``values[b]``: block b's k
        numbers), without the counts matrix when the draws are counted one by one: each draw
        adds its block's values as it comes."""
        sizes = np.asarray(block_sizes, dtype=np.int64)
        span = int(sizes.sum())
        if span > _SPLIT_SUMMED_DRAWS * sizes.size:
            hits = np.empty((rows, sizes.size))
            self._binomial.split_draws(self.state, sizes, np.full(rows, span), hits)
            return hits @ values
        _check_span(span)
        block_of = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
        per_row = np.full(rows, span, dtype=np.int64)
        out = np.empty((rows, values.shape[1]))
        table = np.ascontiguousarray(values, dtype=np.float64)
        self._kernels.sum_draws(self.state, span, _WORD_BITS, per_row, block_of, table, out)
        return out

    def median_positions(
        self, n: int, weights: NDArray[np.int64], ranks: tuple[int, int], rows: int
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Support positions of the ``ranks`` (0-based) smallest of ``n`` draws from sorted
        support points weighted by ``weights``, per resample: the middle pair of a resampled
        median, without drawing the n values."""
        cum = np.concatenate([[0.0], np.cumsum(weights, dtype=np.float64)])
        low = np.empty(rows, dtype=np.int64)
        high = np.empty(rows, dtype=np.int64)
        self._binomial.median_positions(self.state, n, cum, ranks[0], ranks[1], low, high)
        return low, high

    def means(
        self,
        g: int,
        cuts: NDArray[np.int64],
        n_resamples: int,
        sets: tuple[NDArray, ...],
    ) -> NDArray[np.float64]:
        """Resampled means of many data sets of ``g`` clusters each, from one resampling of g
        clusters (blocks cut at ``cuts``): ``(data sets, n_resamples)``. ``sets``: each kind's
        end block, sum step and size step, and each set's first kind (see
        ``_kernels.resample_means``). The resamples are those of :func:`block_hits` for ``g``
        clusters with the same seed."""
        _check_span(g)
        block_of = np.repeat(np.arange(cuts.size - 1, dtype=np.int64), np.diff(cuts))
        means = np.empty((sets[-1].size - 1, n_resamples))
        self._kernels.resample_means(
            self.state, g, _WORD_BITS, block_of, n_resamples, *sets, means, _NO_HITS
        )
        return means


_NO_HITS = np.empty((0, 0))


def _check_span(span: int) -> None:
    if not 0 < span <= 1 << _WORD_BITS:
        raise ValueError(f"can resample 1 to 2^{_WORD_BITS} clusters, not {span}")


def block_hits(
    g: int, edges: ArrayLike, n_resamples: int = 10_000, seed: int | None = 0
) -> NDArray[np.float64]:
    """One cluster bootstrap of g clusters, as counts per block: ``(n_resamples, blocks)``.

    Clusters are numbered 0..g-1 and cut into consecutive blocks at ``edges`` (0 < e < g); row r
    counts how many of resample r's g draws (uniform, with replacement) land in each block.
    Whatever the edges (they only group the clusters), these are the draws every bootstrap of
    g clusters with ``seed`` makes.
    """
    cuts = np.unique(np.concatenate([[0, g], np.asarray(edges, dtype=np.int64)]))
    if cuts[0] != 0 or cuts[-1] != g:
        raise ValueError(f"edges must lie within 0..{g}")
    return Draws(seed).counts(np.diff(cuts), n_resamples, one_by_one=True)


def cluster_hits(g: int, n_resamples: int = 10_000, seed: int | None = 0) -> NDArray[np.float64]:
    """``(n_resamples, g)``: how often each of g clusters is drawn in each resample of g draws
    with replacement (:func:`block_hits` with a block per cluster)."""
    return Draws(seed).counts(np.ones(g, dtype=np.int64), n_resamples, one_by_one=True)


_loading: threading.Thread | None = None


def load_kernels(*, wait: bool = True) -> None:
    """Load the engine's compiled kernels now, compiling them if no cache has them.

    numba's set-up costs ~0.3 s in a fresh process, even with cached machine code; calling this
    first moves that cost off the first bootstrap. ``wait=False`` loads them on a background
    thread and returns at once, so the set-up overlaps whatever the caller does next (a refresh
    reads its run from the database meanwhile; the first resampling waits for the load if it is
    not done). The image runs it at build time to fill numba's cache.
    """
    global _loading
    if wait:
        _warm_up()
        return
    if _loading is None or not _loading.is_alive():
        _loading = threading.Thread(target=_warm_up, name="load-kernels", daemon=True)
        _loading.start()


def _warm_up() -> None:
    """One tiny call of each kernel, with the argument types the engine passes."""
    draws = Draws(0)
    two = np.ones(2, dtype=np.int64)
    draws.counts(two, 2)
    draws.counts(two, 2, draws=two)
    draws.counts(two, 2, draws=np.array([600, 600]))
    draws.sums(two, np.ones((2, 2)), 2)
    draws.median_positions(600, two, (299, 300), 2)
    ints = np.array([1, 2], dtype=np.int64)
    sets = (ints, np.ones(2), np.array([0.0, 1.0]), np.array([0, 2], dtype=np.int64))
    means = draws.means(2, np.array([0, 1, 2], dtype=np.int64), 4, sets)
    draws._kernels.order_statistics(means, np.array([0, 3]), 2, np.empty((1, 2)))
