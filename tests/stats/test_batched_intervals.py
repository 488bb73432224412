"""The batched cluster bootstrap's parts: tail quantiles against np.quantile (bit for bit),
the binned draws against the uniform cluster bootstrap, independence of the thread count."""

import numpy as np
import pytest

from stats import batched, clustered_mean_intervals, shared_block_hits
from stats import quantiles as quantiles_module
from stats.quantiles import quantile_rows


def distributions(rng, rows, n):
    """Continuous rows, rows of a few atoms, rates of many clusters, and a wide atom in a tail."""
    wide = rng.normal(size=(rows, n))
    wide[:, : n // 3] = wide.min()
    return [
        rng.normal(size=(rows, n)),
        rng.integers(0, 5, size=(rows, n)).astype(np.float64),
        rng.binomial(300, 0.6, size=(rows, n)) / 300,
        wide,
    ]


@pytest.mark.parametrize("n", [10, 1_999, 2_000, 5_001, 10_000])
@pytest.mark.parametrize(
    "q", [[0.025, 0.975], [0.05, 0.5, 0.95], [0.0, 1.0], [0.001, 0.999], [0.3], [0.975, 0.025]]
)
def test_quantile_rows_equal_numpy_quantile(n, q):
    rng = np.random.default_rng(n)
    for x in distributions(rng, 17, n):
        np.testing.assert_array_equal(quantile_rows(x, q), np.quantile(x, q, axis=1))


def test_rows_are_pre_selected_and_still_exact(monkeypatch):
    """The tails' pre-selection is what runs on 10,000 resamples (not the whole-row fallback),
    including rows whose threshold falls short and are sorted whole."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(40, 10_000))
    x[3, :2_000] = np.sort(x[3])[:2_000][::-1]  # the leading sample holds the smallest values
    sorted_whole = []
    real_sort = np.sort

    def spy(a, *args, **kwargs):
        sorted_whole.append(a.shape)
        return real_sort(a, *args, **kwargs)

    monkeypatch.setattr(quantiles_module.np, "sort", spy)
    np.testing.assert_array_equal(
        quantile_rows(x, [0.025, 0.975]), np.quantile(x, [0.025, 0.975], axis=1)
    )
    leading, whole, kept = sorted_whole
    assert leading[0] == 40  # the thresholds' sample...
    assert leading[1] < 2_000
    assert whole == (1, 10_000)  # row 3
    assert kept[0] == 39  # every other row: its tails only
    assert kept[1] < 2_000


def test_non_finite_rows_fall_back_to_numpy():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 4_000))
    x[1, 7] = np.nan
    x[2, 9] = np.inf
    np.testing.assert_array_equal(
        quantile_rows(x, [0.025, 0.975]), np.quantile(x, [0.025, 0.975], axis=1)
    )


def test_intervals_do_not_depend_on_the_number_of_threads(monkeypatch):
    rng = np.random.default_rng(8)
    signatures = []
    for clusters in (3, 40, 40, 90, 300, 300, 700):
        sizes = rng.integers(1, 5, size=clusters)
        passed = rng.binomial(sizes, 0.7)
        kinds = np.unique(np.column_stack([passed, sizes]), axis=0, return_counts=True)
        signatures.append(tuple((int(y), int(m), int(c)) for (y, m), c in zip(*kinds, strict=True)))
    monkeypatch.setattr(batched, "_THREADS", 1)
    one = clustered_mean_intervals(signatures, n_resamples=3_000, seed=4)
    monkeypatch.setattr(batched, "_THREADS", 2)
    two = clustered_mean_intervals(signatures, n_resamples=3_000, seed=4)
    np.testing.assert_array_equal(one[0], two[0])
    np.testing.assert_array_equal(one[1], two[1])


def test_binned_draws_give_every_cluster_the_same_chance():
    """A number of clusters whose 16-bit words leave a third of them to redraw: each block is
    hit g * size / g times on average, with multinomial variance, whatever its position (a
    redraw mapped to word % g would favour the first two thirds of the clusters)."""
    g = 21_846  # 65,536 // g = 2 cycles: words 43,692 and above are redrawn
    edges = [*range(10, g, 10), 21_844]
    blocks = shared_block_hits(g, edges, n_resamples=2_000, seed=6)
    assert blocks.shape == (2_000, len(edges) + 1)
    assert (blocks.sum(axis=1) == g).all()
    sizes = np.diff([0, *edges, g])
    # The last two clusters (never a word's first two cycles' leftovers) and the first ten.
    for block in (0, -1):
        p = sizes[block] / g
        hits = blocks[:, block]
        assert abs(hits.mean() - g * p) < 5 * np.sqrt(g * p * (1 - p) / hits.size)
        assert hits.var() == pytest.approx(g * p * (1 - p), rel=0.1)
    # Each tenth of the clusters.
    tenths = np.add.reduceat(blocks, np.arange(0, blocks.shape[1], blocks.shape[1] // 10), axis=1)
    share = np.add.reduceat(sizes, np.arange(0, sizes.size, sizes.size // 10)) / g
    assert tenths.mean(axis=0) == pytest.approx(g * share, rel=0.01)
