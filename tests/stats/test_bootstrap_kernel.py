"""The compiled batched bootstrap: its draws are the uniform cluster bootstrap (multinomial block
counts, an exact rejection step), each interval is np.quantile of that data set's resampled
means from those very draws, bit for bit, whatever the number of threads, within Monte Carlo
error of the engine drawing the data set alone."""

import numpy as np
import pytest

import stats as statistics
from stats import _kernels, batched, clustered_mean_intervals, resampling, shared_block_hits
from stats.quantiles import linear_neighbours
from tests.stats.monte_carlo import assert_bounds_within_monte_carlo_error, expanded


def assert_multinomial(blocks: np.ndarray, g: int, edges: list[int]) -> None:
    """Counts per block of g uniform draws with replacement: each row sums to g, and the means
    and covariances are the multinomial's, within five standard errors."""
    rows = blocks.shape[0]
    p = np.diff([0, *edges, g]) / g
    assert (blocks.sum(axis=1) == g).all()
    variance = g * p * (1 - p)
    np.testing.assert_array_less(np.abs(blocks.mean(axis=0) - g * p), 5 * np.sqrt(variance / rows))
    # A binomial's fourth central moment gives the sample variance's standard error.
    fourth = variance * (1 + 3 * (g - 2) * p * (1 - p))
    se = np.sqrt((fourth - variance**2) / rows)
    np.testing.assert_array_less(np.abs(blocks.var(axis=0, ddof=1) - variance), 5 * se)
    if p.size <= 10:  # covariances (near-normal standard error: sqrt((s_ii s_jj + s_ij^2) / n))
        expected = g * (np.diag(p) - np.outer(p, p))
        se = np.sqrt((np.outer(variance, variance) + expected**2) / rows)
        np.testing.assert_array_less(np.abs(np.cov(blocks.T) - expected), 5 * se + 1e-9)


@pytest.mark.parametrize(
    ("g", "edges", "rows"),
    [
        (2, [1], 20_000),
        (7, [1, 2, 5, 6], 20_000),
        (1_000, [1, 333, 998, 999], 10_000),  # 2^16 and 2^32 are not multiples of these g
        (21_846, [1, 7_282, 21_845], 4_000),
        (40_000, [1, 17_000, 39_999], 2_000),  # beyond the old binning's 32,768 clusters
        (100_003, [1, 50_000, 100_002], 1_000),
    ],
)
def test_block_counts_are_multinomial(g, edges, rows):
    """Including a lone first and last cluster: a skewed mapping of words to clusters shows."""
    assert_multinomial(shared_block_hits(g, edges, n_resamples=rows, seed=g), g, edges)


@pytest.mark.parametrize(("bits", "g"), [(8, 171), (8, 129), (12, 2_731)])
def test_every_cluster_has_the_same_chance_however_many_words_are_redrawn(monkeypatch, bits, g):
    """With words narrowed to a few bits, 2^bits is far from a multiple of g (171 clusters in
    256 words: 85 clusters would get two words, the others one; 129 leaves 127 words to redraw):
    without an exact rejection step some clusters are hit up to twice as often, which the
    per-cluster means below would show at once. The kernel is the one the intervals use."""
    monkeypatch.setattr(resampling, "_WORD_BITS", bits)
    edges = list(range(1, g))  # one block a cluster
    blocks = shared_block_hits(g, edges, n_resamples=4_000, seed=bits)
    assert_multinomial(blocks, g, edges)
    with pytest.raises(ValueError, match="clusters"):
        shared_block_hits((1 << bits) + 1, [1], n_resamples=10, seed=0)


def signatures_for_tests(seed: int) -> list[tuple[tuple[int, int, int], ...]]:
    """Data sets of 1 to 600 clusters, several with each number of clusters (sharing draws),
    some with few clusters (distributions of a few atoms) and some of a single kind."""
    rng = np.random.default_rng(seed)
    out = []
    for clusters in (1, 2, 2, 3, 5, 5, 40, 40, 40, 41, 150, 150, 600):
        sizes = rng.integers(1, 6, size=clusters)
        passed = rng.binomial(sizes, rng.uniform(0.05, 0.95))
        kinds, counts = np.unique(np.column_stack([passed, sizes]), axis=0, return_counts=True)
        out.append(tuple((int(y), int(n), int(c)) for (y, n), c in zip(kinds, counts, strict=True)))
    out.append(((3, 3, 40),))  # every mean 1: a constant distribution
    out.append(((0, 2, 39), (1, 1, 1)))  # one cluster of 40 passes: a wide atom at 0
    return out


def numpy_intervals(signatures, n_resamples, confidence, seed):
    """Each data set's means from the kernel's own block counts, and np.quantile of them."""
    tail = (1 - confidence) / 2
    cuts: dict[int, set[int]] = {}
    for signature in signatures:
        ends = np.cumsum([c for _, _, c in signature])
        cuts.setdefault(int(ends[-1]), set()).update(ends[:-1].tolist())
    out = []
    for signature in signatures:
        kinds = np.array(signature).reshape(-1, 3)
        g = int(kinds[:, 2].sum())
        if g < 2:
            out.append((np.nan, np.nan))
            continue
        edges = sorted(cuts[g])
        blocks = shared_block_hits(g, edges, n_resamples=n_resamples, seed=seed)
        kind = np.searchsorted(np.cumsum(kinds[:, 2]), [0, *edges], side="right")
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (blocks @ kinds[kind, 0].astype(float)) / (blocks @ kinds[kind, 1])
        out.append(tuple(np.quantile(means, [tail, 1 - tail])))
    return np.array(out).T


@pytest.mark.parametrize(
    ("n_resamples", "confidence"),
    [(10_000, 0.95), (10_000, 0.5), (10_000, 1.0), (2_001, 0.9), (37, 0.95), (1, 0.95)],
)
def test_each_interval_is_np_quantile_of_the_means_from_its_own_draws(
    monkeypatch, n_resamples, confidence
):
    signatures = signatures_for_tests(n_resamples)
    signatures.append(((0, 0, 1), (1, 1, 2)))  # a cluster of size 0: some means are 0 / 0
    expected = numpy_intervals(signatures, n_resamples, confidence, seed=5)
    for threads in (1, 2):
        monkeypatch.setattr(batched, "_THREADS", threads)
        with np.errstate(invalid="ignore", divide="ignore"):
            low, high = clustered_mean_intervals(signatures, n_resamples, confidence, seed=5)
        np.testing.assert_array_equal(low, expected[0])
        np.testing.assert_array_equal(high, expected[1])
    assert np.isnan(low[0])  # one cluster
    if n_resamples > 1_000:
        assert np.isnan(low[-1])  # np.quantile of means with a nan among them (all 3 draws size 0)


@pytest.mark.parametrize(
    "x",
    [
        np.random.default_rng(0).normal(size=(6, 10_000)),
        np.random.default_rng(1).integers(0, 3, size=(6, 10_000)).astype(float),
        np.sort(np.random.default_rng(2).exponential(size=(6, 10_000)), axis=1)[:, ::-1].copy(),
        np.random.default_rng(3).normal(size=(6, 10_000)) * 1e-308,  # subnormal spreads
        np.vstack([np.full(10_000, 0.25), np.r_[np.zeros(9_999), 1e300]]),
        np.random.default_rng(4).normal(size=(3, 7)),
    ],
)
@pytest.mark.parametrize("q", [[0.025, 0.975], [0.0, 0.5, 1.0], [0.3]])
def test_order_statistics_equal_sorting(x, q):
    n = x.shape[1]
    previous, following, _ = linear_neighbours(n, np.array(q))
    ranks = np.unique(np.concatenate([previous, following]))
    for buckets in (1, 256):
        out = np.empty((x.shape[0], ranks.size))
        _kernels.order_statistics(x, ranks, buckets, out)
        np.testing.assert_array_equal(out, np.sort(x, axis=1)[:, ranks])


def test_intervals_are_the_cluster_bootstrap_of_each_data_set_within_monte_carlo_error():
    signatures = signatures_for_tests(11)[1:]
    low, high = clustered_mean_intervals(signatures, n_resamples=10_000, seed=2)
    for signature, lo, hi in zip(signatures, low, high, strict=True):
        values, labels = expanded(signature)
        alone = statistics.bootstrap_distribution(values, labels, 10_000, seed=9)
        assert_bounds_within_monte_carlo_error({"low": lo, "high": hi}, alone, signature)


def test_a_signature_in_sorted_order_gets_exactly_bootstrap_ci_of_its_values():
    """One engine: the batched means and bootstrap_ci draw the same resamples from the same
    seed (bootstrap_ci numbers its clusters by kind, in sorted order, and counts draws one by
    one for these few clusters a kind)."""
    for signature in signatures_for_tests(3)[1:]:
        ordered = tuple(sorted(signature))
        values, labels = expanded(ordered)
        low, high = clustered_mean_intervals([ordered], n_resamples=2_001, seed=7)
        shuffled = np.random.default_rng(len(values)).permutation(len(values))
        alone = statistics.bootstrap_ci(
            np.array(values)[shuffled], np.array(labels)[shuffled], n_resamples=2_001, seed=7
        )
        assert (low[0], high[0]) == alone, signature


def test_seeds_give_their_own_draws_and_the_same_draws_again():
    one = shared_block_hits(50, [10, 20], n_resamples=100, seed=1)
    np.testing.assert_array_equal(one, shared_block_hits(50, [10, 20], n_resamples=100, seed=1))
    assert not np.array_equal(one, shared_block_hits(50, [10, 20], n_resamples=100, seed=2))
    # The edges only group the draws.
    np.testing.assert_array_equal(
        one, np.add.reduceat(shared_block_hits(50, [5, 10, 20, 30], 100, seed=1), [0, 2, 3], axis=1)
    )


def test_kernels_load_ahead_of_the_first_bootstrap():
    statistics.load_kernels()
    assert _kernels.count_draws.signatures
    assert _kernels.resample_means.signatures
    assert _kernels.order_statistics.signatures


@pytest.mark.parametrize(
    ("sizes", "n"),
    [((3, 7), 40), ((3, 7), 3_000), ((33, 67), 48_540), ((999, 1), 100_000), ((2, 998), 7_000)],
)
def test_split_draws_are_binomial(sizes, n):
    """Counts of n draws into two blocks, split by binomials (or counted, for few draws), have
    the binomial distribution: a chi-square goodness-of-fit test on 20,000 rows."""
    from scipy import stats as scipy_stats

    rows = 20_000
    hits = resampling.Draws(n).counts(np.array(sizes), rows, draws=np.full(rows, n))
    assert (hits.sum(axis=1) == n).all()
    p = sizes[0] / sum(sizes)
    observed = np.bincount(hits[:, 0].astype(int), minlength=n + 1)
    expected = scipy_stats.binom.pmf(np.arange(n + 1), n, p) * rows
    # Pool the sparse tails so that every class expects at least five.
    order = np.argsort(-expected)
    keep = order[np.cumsum(expected[order]) <= rows - 5]
    classes = np.zeros(n + 1, dtype=int)
    classes[keep] = np.arange(1, keep.size + 1)
    obs = np.bincount(classes, weights=observed)
    exp = np.bincount(classes, weights=expected)
    assert scipy_stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-3


def test_split_draws_into_many_blocks_are_multinomial():
    sizes = np.array([1, 999, 5_000, 3, 40])
    g = int(sizes.sum())
    hits = resampling.Draws(3).counts(sizes, 20_000)
    assert_multinomial(hits, g, np.cumsum(sizes)[:-1].tolist())


@pytest.mark.parametrize("n", [3_001, 3_000])
def test_median_splits_draw_the_resampled_median(n):
    """The middle pair found by binomial splits against medians of resampled values: the same
    distribution over the support (chi-square test of homogeneity, 20,000 resamples each)."""
    from scipy import stats as scipy_stats

    rng = np.random.default_rng(n)
    x = rng.integers(0, 60, n).astype(float)
    ours = statistics.bootstrap_distribution(x, None, 20_000, seed=1, statistic="median")
    naive = np.concatenate(
        [np.median(x[rng.integers(0, n, size=(1_000, n))], axis=1) for _ in range(20)]
    )
    values = np.union1d(ours, naive)
    table = np.array([[np.sum(d == v) for v in values] for d in (ours, naive)])
    table = table[:, table.sum(axis=0) >= 10]
    assert scipy_stats.chi2_contingency(table).pvalue > 1e-3
