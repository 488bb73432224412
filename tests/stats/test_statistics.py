"""Reliability statistics against reference implementations, textbook data and degenerate input."""

import math

import krippendorff
import numpy as np
import pytest
from scipy import stats as scipy_stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from stats import (
    bootstrap_ci,
    bootstrap_distribution,
    category_counts,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    majority_vote,
    pair_agreement,
    pass_rate_ci,
    percent_agreement,
    rank_stability,
    unanimity,
)

LEVELS = ["nominal", "ordinal", "interval", "ratio"]

# Fleiss (1971) as tabulated on Wikipedia and in statsmodels' tests: 10 items, 14 raters each.
FLEISS_WIKIPEDIA = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)

# Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability", example C: 4 observers x 12
# units, values 1-5, with missing values.
NAN = np.nan
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]
)
KRIPPENDORFF_2011_PUBLISHED = {
    "nominal": 0.743,
    "ordinal": 0.815,
    "interval": 0.849,
    "ratio": 0.797,
}


def reference_alpha(data, level):
    return krippendorff.alpha(reliability_data=data, level_of_measurement=level)


def random_counts(rng, n_items, n_raters, n_categories):
    probs = rng.dirichlet(np.ones(n_categories))
    return rng.multinomial(n_raters, probs, size=n_items)


def random_ratings(rng, n_raters, n_units, n_values, missing):
    """Correlated ratings: a true value per unit plus rater noise, with missing entries."""
    truth = rng.integers(0, n_values, size=n_units)
    noise = rng.integers(-1, 2, size=(n_raters, n_units)) * (rng.random((n_raters, n_units)) < 0.4)
    data = np.clip(truth + noise, 0, n_values - 1).astype(float)
    data[rng.random(data.shape) < missing] = np.nan
    return data


# --------------------------------------------------------------------------------------------
# Fleiss' kappa, percent agreement, unanimity
# --------------------------------------------------------------------------------------------


def test_fleiss_kappa_textbook_example():
    kappa = fleiss_kappa(FLEISS_WIKIPEDIA)
    assert kappa == pytest.approx(statsmodels_fleiss_kappa(FLEISS_WIKIPEDIA), abs=1e-12)
    assert round(kappa, 3) == 0.210
    assert percent_agreement(FLEISS_WIKIPEDIA) == pytest.approx(0.378, abs=5e-4)


@pytest.mark.parametrize(
    ("seed", "n_items", "n_raters", "n_categories"),
    [(0, 10, 2, 2), (1, 50, 3, 4), (2, 200, 5, 3), (3, 7, 14, 6), (4, 1000, 2, 5), (5, 1, 4, 3)],
)
def test_fleiss_kappa_matches_statsmodels(seed, n_items, n_raters, n_categories):
    counts = random_counts(np.random.default_rng(seed), n_items, n_raters, n_categories)
    if np.count_nonzero(counts.sum(axis=0)) < 2:
        pytest.skip("degenerate draw")
    assert fleiss_kappa(counts) == pytest.approx(statsmodels_fleiss_kappa(counts), abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_percent_agreement_is_fleiss_observed_agreement(seed):
    counts = random_counts(np.random.default_rng(seed), 60, 4, 3)
    n = 4
    p_obs = percent_agreement(counts)
    p_cat = counts.sum(axis=0) / counts.sum()
    p_exp = (p_cat**2).sum()
    assert fleiss_kappa(counts) == pytest.approx((p_obs - p_exp) / (1 - p_exp), abs=1e-12)
    # Brute force: agreeing unordered rater pairs per item.
    labels = [np.repeat(np.arange(3), row) for row in counts]
    shares = [
        np.mean([lab[i] == lab[j] for i in range(n) for j in range(i + 1, n)]) for lab in labels
    ]
    assert p_obs == pytest.approx(np.mean(shares), abs=1e-12)


def test_percent_agreement_and_unanimity_with_unequal_rater_numbers():
    counts = np.array([[2, 0], [1, 1], [3, 0], [1, 0], [0, 0], [2, 1]])
    # Items with < 2 raters (rows 3 and 4) drop out: shares 1, 0, 1, 1/3.
    assert percent_agreement(counts) == pytest.approx((1 + 0 + 1 + 1 / 3) / 4)
    assert pair_agreement(counts).tolist() == pytest.approx([1, 0, 1, 1 / 3])
    assert unanimity(counts) == pytest.approx(2 / 4)


def test_unanimity():
    counts = np.array([[3, 0, 0], [2, 1, 0], [0, 0, 3], [1, 1, 1]])
    assert unanimity(counts) == 0.5


def test_one_category_only_is_undefined_kappa_but_full_agreement():
    counts = np.array([[4, 0], [4, 0], [4, 0]])
    assert math.isnan(fleiss_kappa(counts))
    with np.errstate(invalid="ignore"):
        assert math.isnan(statsmodels_fleiss_kappa(counts))  # reference agrees: 0/0
    assert math.isnan(fleiss_kappa(np.array([[3], [3]])))
    assert percent_agreement(counts) == 1.0
    assert unanimity(counts) == 1.0


def test_fleiss_kappa_perfect_agreement_with_variation_is_one():
    assert fleiss_kappa(np.array([[3, 0], [0, 3], [3, 0]])) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        (np.array([[2, 1], [1, 1]]), "same number of raters"),
        (np.array([[1, 0], [0, 1]]), "at least two raters"),
        (np.array([[0, 0], [0, 0]]), "at least two raters"),
        (np.zeros((0, 3)), "empty"),
        (np.array([1, 2, 3]), "2-D"),
        (np.array([[1.5, 1.5]]), "whole numbers"),
        (np.array([[-1, 3]]), "non-negative"),
        (np.array([[np.nan, 2]]), "finite"),
        (np.array([["a", "b"]]), "numeric"),
    ],
)
def test_fleiss_kappa_rejects_invalid_counts(counts, message):
    with pytest.raises(ValueError, match=message):
        fleiss_kappa(counts)


@pytest.mark.parametrize("func", [percent_agreement, unanimity])
def test_count_agreement_needs_a_rater_pair(func):
    with pytest.raises(ValueError, match="at least two raters"):
        func(np.array([[1, 0], [0, 1]]))
    with pytest.raises(ValueError, match="empty"):
        func(np.zeros((0, 2)))


def test_category_counts_round_trip():
    labels = np.array([["a", "b", "a"], ["c", "c", "c"], ["b", "nan", "a"]])
    counts, categories = category_counts(labels)
    assert categories.tolist() == ["a", "b", "c"]
    assert counts.tolist() == [[2, 1, 0], [0, 0, 3], [1, 1, 0]]
    counts, categories = category_counts([[1, 2], [2, np.nan]], categories=[0, 1, 2])
    assert counts.tolist() == [[0, 1, 1], [0, 0, 1]]
    with pytest.raises(ValueError, match="not among categories"):
        category_counts([[1, 5]], categories=[0, 1, 2])


# --------------------------------------------------------------------------------------------
# Cohen's kappa
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize(("seed", "n", "k"), [(0, 20, 2), (1, 100, 3), (2, 500, 5), (3, 37, 7)])
def test_cohen_kappa_matches_sklearn(seed, n, k, weights):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, k, size=n)
    b = np.where(rng.random(n) < 0.6, a, rng.integers(0, k, size=n))
    b[0] = k + 3  # a label only one rater uses, off the end of the scale
    expected = cohen_kappa_score(a, b, weights=weights)
    assert cohen_kappa(a, b, weights) == pytest.approx(expected, abs=1e-9)
    assert cohen_kappa(b, a, weights) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_string_labels_match_sklearn(weights):
    a = ["neg", "pos", "neg", "neu", "pos", "neu", "neg", "pos"]
    b = ["neg", "pos", "neg", "neu", "neg", "pos", "neu", "pos"]
    expected = cohen_kappa_score(a, b, weights=weights)
    assert cohen_kappa(a, b, weights) == pytest.approx(expected, abs=1e-12)
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_cohen_kappa_textbook_value():
    # The scikit-learn documentation example.
    y1 = ["negative", "positive", "negative", "neutral", "positive"]
    y2 = ["negative", "positive", "negative", "neutral", "negative"]
    assert cohen_kappa(y1, y2) == pytest.approx(0.6875)


def test_cohen_kappa_degenerate_cases():
    assert math.isnan(cohen_kappa(["a", "a", "a"], ["a", "a", "a"]))
    assert math.isnan(cohen_kappa([1, 1], [1, 1], "quadratic"))
    # Each rater constant but different: no agreement beyond chance, defined as 0 (as sklearn).
    assert cohen_kappa(["a", "a"], ["b", "b"]) == pytest.approx(0.0)
    assert cohen_kappa([1, 2, 3], [1, 2, 3], "linear") == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "message"),
    [
        ([1, 2], [1], {}, "same length"),
        ([], [], {}, "empty"),
        ([1, np.nan], [1, 2], {}, "missing"),
        (["a", None], ["a", "b"], {}, "missing"),
        ([1, np.inf], [1, 2], {}, "finite"),
        ([1, "a"], [1, "a"], {}, "comparable"),
        ([1, 2], ["1", "2"], {}, "comparable"),
        ([1, 2], [1, 2], {"weights": "cubic"}, "weights"),
        ([[1, 2]], [[1, 2]], {}, "1-D"),
    ],
)
def test_cohen_kappa_rejects_invalid_input(a, b, kwargs, message):
    with pytest.raises(ValueError, match=message):
        cohen_kappa(a, b, **kwargs)


# --------------------------------------------------------------------------------------------
# Krippendorff's alpha
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_alpha_published_example(level):
    ours = krippendorff_alpha(KRIPPENDORFF_2011, level)
    reference = reference_alpha(KRIPPENDORFF_2011, level)
    assert ours == pytest.approx(reference, abs=1e-9)
    assert round(ours, 3) == KRIPPENDORFF_2011_PUBLISHED[level]
    assert round(reference, 3) == KRIPPENDORFF_2011_PUBLISHED[level]


def test_krippendorff_alpha_second_textbook_example():
    # Krippendorff's 3 coders x 15 units example (also in the krippendorff package docs).
    data = [
        [NAN, NAN, NAN, NAN, NAN, 3, 4, 1, 2, 1, 1, 3, 3, NAN, 3],
        [1, NAN, 2, 1, 3, 3, 4, 3, NAN, NAN, NAN, NAN, NAN, NAN, NAN],
        [NAN, NAN, 2, 1, 3, 4, 4, NAN, 2, 1, 1, 3, 3, NAN, 4],
    ]
    assert krippendorff_alpha(data, "nominal") == pytest.approx(0.691358, abs=1e-6)
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.810845, abs=1e-6)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    ("seed", "n_raters", "n_units", "n_values", "missing"),
    [
        (0, 2, 30, 2, 0.0),
        (1, 3, 50, 5, 0.2),
        (2, 5, 200, 7, 0.5),
        (3, 8, 20, 4, 0.7),
        (4, 4, 500, 11, 0.3),
    ],
)
def test_krippendorff_alpha_matches_package(seed, n_raters, n_units, n_values, missing, level):
    data = random_ratings(np.random.default_rng(seed), n_raters, n_units, n_values, missing)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = reference_alpha(data, level)
    assert krippendorff_alpha(data, level) == pytest.approx(expected, abs=1e-9, nan_ok=True)


def test_krippendorff_alpha_on_scaled_continuous_values():
    rng = np.random.default_rng(7)
    data = rng.gamma(2.0, size=(3, 40)).round(1)
    data[rng.random(data.shape) < 0.2] = np.nan
    for level in LEVELS:
        expected = reference_alpha(data, level)
        assert krippendorff_alpha(data, level) == pytest.approx(expected, abs=1e-9)


def test_krippendorff_alpha_string_labels_nominal():
    data = np.array(
        [["low", "high", None, "mid"], ["low", "high", "mid", "high"], [None, "high", "mid", None]],
        dtype=object,
    )
    # The package reads missing string entries as "nan".
    expected = reference_alpha(np.where(data == None, "nan", data).astype(str), "nominal")  # noqa: E711
    assert krippendorff_alpha(data, "nominal") == pytest.approx(expected, abs=1e-12)
    with pytest.raises(ValueError, match="numeric"):
        krippendorff_alpha(data, "ordinal")


def test_krippendorff_alpha_perfect_agreement_and_no_variation():
    assert krippendorff_alpha([[1, 2, 3], [1, 2, 3]], "interval") == pytest.approx(1.0)
    # One value only: 0/0, undefined (the package raises here).
    assert math.isnan(krippendorff_alpha([[2, 2, 2], [2, 2, np.nan]], "nominal"))
    with pytest.raises(ValueError, match="more than one value"):
        reference_alpha(np.array([[2.0, 2, 2], [2, 2, NAN]]), "nominal")
    # The only other value sits in an unpairable unit: the package returns nan too.
    data = np.array([[2, 2, 5], [2, 2, NAN]])
    assert math.isnan(krippendorff_alpha(data, "interval"))
    with np.errstate(invalid="ignore"):
        assert math.isnan(reference_alpha(data, "interval"))


def test_krippendorff_alpha_unpairable_units_drop_out():
    data = np.array([[1, 2, 3, 4, NAN], [1, 2, 4, NAN, NAN], [NAN, 2, 3, NAN, 5]])
    pairable_only = data[:, :3]
    for level in LEVELS:
        assert krippendorff_alpha(data, level) == pytest.approx(
            krippendorff_alpha(pairable_only, level), abs=1e-12
        )


@pytest.mark.parametrize(
    ("data", "level", "message"),
    [
        ([[1, 2, 3]], "nominal", "at least two raters"),
        ([[1, NAN], [NAN, 2]], "nominal", "no pairable units"),
        ([[NAN, NAN], [NAN, NAN]], "interval", "no pairable units"),
        (np.zeros((2, 0)), "nominal", "empty"),
        ([1, 2, 3], "nominal", "2-D"),
        ([[1, np.inf], [1, 2]], "interval", "finite"),
        ([[1, -2], [1, 2]], "ratio", "non-negative"),
        ([[1, 2], [1, 2]], "cardinal", "level"),
    ],
)
def test_krippendorff_alpha_rejects_invalid_input(data, level, message):
    with pytest.raises(ValueError, match=message):
        krippendorff_alpha(data, level)


# --------------------------------------------------------------------------------------------
# Majority vote
# --------------------------------------------------------------------------------------------


def test_majority_vote_ties_and_missing():
    labels = np.array([[1, 1, 0], [0, 1, np.nan], [0, 0, 1], [1, np.nan, np.nan]])
    assert majority_vote(labels).tolist() == [1, 0, 0, 1]
    assert majority_vote(labels, tie_break="highest").tolist() == [1, 1, 0, 1]
    words = np.array([["b", "a"], ["c", "c"]])
    assert majority_vote(words).tolist() == ["a", "c"]
    with pytest.raises(ValueError, match="without any label"):
        majority_vote([[1, 1], [NAN, NAN]])
    with pytest.raises(ValueError, match="tie_break"):
        majority_vote(labels, tie_break="random")


# --------------------------------------------------------------------------------------------
# Bootstrap intervals
# --------------------------------------------------------------------------------------------


def scipy_percentile_interval(x, statistic, n_resamples=10_000, seed=1):
    result = scipy_stats.bootstrap(
        (x,),
        statistic,
        n_resamples=n_resamples,
        method="percentile",
        vectorized=True,
        random_state=np.random.default_rng(seed),
    )
    return result.confidence_interval.low, result.confidence_interval.high


@pytest.mark.parametrize(
    ("seed", "kind", "n"),
    [(0, "binary", 400), (1, "binary", 3000), (2, "normal", 300), (3, "likert", 800)],
)
def test_unclustered_mean_interval_agrees_with_scipy(seed, kind, n):
    rng = np.random.default_rng(seed)
    x = {
        "binary": lambda: (rng.random(n) < 0.3).astype(float),
        "normal": lambda: rng.normal(5, 2, n),
        "likert": lambda: rng.integers(1, 6, n).astype(float),
    }[kind]()
    standard_error = x.std() / np.sqrt(n)
    low, high = bootstrap_ci(x, seed=seed)
    ref_low, ref_high = scipy_percentile_interval(x, np.mean)
    # Different random streams: endpoints differ by Monte Carlo noise (~0.04 SE at 10,000
    # resamples); 0.2 SE is a 5-sigma bound.
    assert low == pytest.approx(ref_low, abs=0.2 * standard_error)
    assert high == pytest.approx(ref_high, abs=0.2 * standard_error)
    assert low < x.mean() < high
    assert high - low == pytest.approx(2 * 1.96 * standard_error, rel=0.1)


@pytest.mark.parametrize(("seed", "n"), [(0, 301), (1, 300), (2, 1000)])
def test_unclustered_median_interval_agrees_with_scipy(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.lognormal(size=n)
    ref_low, ref_high = scipy_percentile_interval(x, np.median)
    low, high = bootstrap_ci(x, statistic="median", seed=seed)
    tolerance = 0.1 * (ref_high - ref_low)
    assert low == pytest.approx(ref_low, abs=tolerance)
    assert high == pytest.approx(ref_high, abs=tolerance)


@pytest.mark.parametrize("n", [40, 41])
def test_median_order_statistic_sampler_matches_naive_resampling(n):
    # Medians from the engine's counts per distinct value: the distribution of resampling.
    rng = np.random.default_rng(5)
    x = rng.integers(0, 12, n).astype(float)
    naive = np.median(x[rng.integers(0, n, size=(40_000, n))], axis=1)
    for confidence in (0.5, 0.8, 0.9):
        tail = (1 - confidence) / 2
        ref = np.quantile(naive, [tail, 1 - tail])
        ours = bootstrap_ci(x, statistic="median", n_resamples=40_000, confidence=confidence)
        assert ours == pytest.approx(tuple(ref), abs=0.51)  # within half a support step


def test_percentile_interval_coverage_of_a_proportion():
    rng = np.random.default_rng(11)
    p, n, trials = 0.3, 200, 400
    covered = 0
    for trial in range(trials):
        x = (rng.random(n) < p).astype(float)
        low, high = bootstrap_ci(x, n_resamples=2000, seed=trial)
        covered += low <= p <= high
    assert 0.91 <= covered / trials <= 0.98


def test_cluster_bootstrap_covers_where_the_naive_interval_does_not():
    rng = np.random.default_rng(12)
    n_clusters, size, trials = 60, 5, 200
    clusters = np.repeat(np.arange(n_clusters), size)
    covered = {"clustered": 0, "naive": 0}
    for trial in range(trials):
        # Strong within-cluster correlation: a shared cluster effect plus small noise.
        x = np.repeat(rng.normal(size=n_clusters), size) + 0.3 * rng.normal(size=clusters.size)
        low, high = bootstrap_ci(x, clusters, n_resamples=1000, seed=trial)
        covered["clustered"] += low <= 0 <= high
        low, high = bootstrap_ci(x, n_resamples=1000, seed=trial)
        covered["naive"] += low <= 0 <= high
    assert 0.89 <= covered["clustered"] / trials <= 0.99
    assert covered["naive"] / trials < 0.75


@pytest.mark.parametrize("statistic", ["mean", "median"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cluster_bootstrap_of_constant_clusters_equals_bootstrap_of_cluster_values(seed, statistic):
    rng = np.random.default_rng(seed)
    n_clusters, size = 300, 6
    cluster_values = (rng.random(n_clusters) < 0.4).astype(float)
    if statistic == "median":
        cluster_values = rng.integers(0, 5, n_clusters).astype(float)
    x = np.repeat(cluster_values, size)
    clusters = np.repeat(rng.permutation(n_clusters), size)  # labels need not be sorted
    clustered = bootstrap_ci(x, clusters, seed=seed, statistic=statistic)
    per_cluster = bootstrap_ci(cluster_values, seed=seed + 100, statistic=statistic)
    naive = bootstrap_ci(x, seed=seed, statistic=statistic)
    spread = cluster_values.std() / np.sqrt(n_clusters)
    if statistic == "mean":
        assert clustered == pytest.approx(per_cluster, abs=0.2 * spread)
        # Identical values within clusters: clustering widens the interval by ~sqrt(size).
        ratio = (clustered[1] - clustered[0]) / (naive[1] - naive[0])
        assert ratio == pytest.approx(np.sqrt(size), rel=0.1)
    else:
        # Medians sit on the five support values; allow one half-step of Monte Carlo luck.
        assert clustered == pytest.approx(per_cluster, abs=0.5)


def test_cluster_bootstrap_mean_weights_clusters_by_size():
    # Unequal sizes: the statistic is sum of drawn sums / sum of drawn sizes (a ratio estimator).
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 12, size=150)
    cluster_values = rng.normal(size=150) + 0.1 * sizes  # larger clusters have larger values
    x = np.repeat(cluster_values, sizes) + 0.5 * rng.normal(size=sizes.sum())
    clusters = np.repeat(np.arange(150), sizes)
    sums = np.bincount(clusters, weights=x)
    draws = rng.integers(0, 150, size=(20_000, 150))
    reference = sums[draws].sum(axis=1) / sizes[draws].sum(axis=1)
    ref_low, ref_high = np.quantile(reference, [0.025, 0.975])
    low, high = bootstrap_ci(x, clusters, n_resamples=20_000)
    tolerance = 0.05 * (ref_high - ref_low)
    assert (low, high) == pytest.approx((ref_low, ref_high), abs=tolerance)
    # The size-weighted mean lies inside; the unweighted mean of cluster means is lower.
    assert low < x.mean() < high


@pytest.mark.parametrize("clustered", [False, True])
def test_callable_statistic_matches_builtin(clustered):
    rng = np.random.default_rng(4)
    x = rng.normal(size=120)
    clusters = np.repeat(np.arange(30), 4) if clustered else None
    builtin = bootstrap_ci(x, clusters, n_resamples=4000, statistic="mean")
    custom = bootstrap_ci(x, clusters, n_resamples=4000, statistic=np.mean)
    width = builtin[1] - builtin[0]
    assert custom == pytest.approx(builtin, abs=0.1 * width)
    builtin = bootstrap_ci(x, clusters, n_resamples=4000, statistic="median")
    custom = bootstrap_ci(x, clusters, n_resamples=4000, statistic=np.median)
    assert custom == pytest.approx(builtin, abs=0.15 * width)


def test_clustered_median_with_many_distinct_values():
    rng = np.random.default_rng(8)
    n_clusters, size = 1500, 4
    x = np.repeat(rng.normal(size=n_clusters), size) + 0.1 * rng.normal(size=n_clusters * size)
    clusters = np.repeat(np.arange(n_clusters), size)
    fast = bootstrap_ci(x, clusters, n_resamples=500, statistic="median")
    slow = bootstrap_ci(x, clusters, n_resamples=500, statistic=np.median)
    width = fast[1] - fast[0]
    assert fast == pytest.approx(slow, abs=0.25 * width)


def test_bootstrap_is_deterministic_per_seed_and_handles_string_cluster_labels():
    rng = np.random.default_rng(9)
    x = (rng.random(600) < 0.5).astype(float)
    clusters = np.array([f"scenario-{i // 6}" for i in range(600)])
    assert bootstrap_ci(x, clusters, seed=3) == bootstrap_ci(x, clusters, seed=3)
    assert bootstrap_ci(x, seed=3) == bootstrap_ci(x, seed=3)
    # Another seed, other draws. (Compared on the resampled means: binary data put both
    # intervals on a grid of 1/600, where two seeds' bounds often land on the same point.)
    one, other = (bootstrap_distribution(x, seed=s) for s in (3, 4))
    assert not np.array_equal(one, other)
    assert abs(one.mean() - other.mean()) < 5 * np.sqrt(2 * one.var() / one.size)
    mixed = np.array([i // 6 if i < 300 else f"s{i // 6}" for i in range(600)], dtype=object)
    assert bootstrap_ci(x, mixed, seed=3) == pytest.approx(bootstrap_ci(x, clusters, seed=3))


def test_bootstrap_degenerate_values():
    assert bootstrap_ci([0.5, 0.5, 0.5]) == (0.5, 0.5)
    assert bootstrap_ci([1.0, 1.0, 1.0, 1.0], clusters=[1, 1, 2, 2]) == (1.0, 1.0)
    assert bootstrap_ci([2.0, 2.0], statistic="median") == (2.0, 2.0)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([],), {}, "at least two values"),
        (([1.0],), {}, "at least two values"),
        (([1.0, np.nan],), {}, "finite"),
        (([1.0, np.inf],), {}, "finite"),
        (([[1.0, 2.0]],), {}, "1-D"),
        ((["a", "b"],), {}, "numeric"),
        (([1.0, 2.0], [1]), {}, "one label per value"),
        (([1.0, 2.0], [7, 7]), {}, "at least two clusters"),
        (([1.0, 2.0],), {"n_resamples": 0}, "n_resamples"),
        (([1.0, 2.0],), {"n_resamples": 2.5}, "n_resamples"),
        (([1.0, 2.0],), {"confidence": 1.0}, "confidence"),
        (([1.0, 2.0],), {"statistic": "mode"}, "statistic"),
    ],
)
def test_bootstrap_rejects_invalid_input(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        bootstrap_ci(*args, **kwargs)


def test_pass_rate_ci():
    passed = np.array([True, False, True, True] * 25)
    result = pass_rate_ci(passed, clusters=np.repeat(np.arange(50), 2), n_resamples=2000)
    assert result["pass_rate"] == 0.75
    assert result["ci_low"] < 0.75 < result["ci_high"]
    assert (result["n"], result["n_clusters"], result["confidence"]) == (100, 50, 0.95)
    assert pass_rate_ci(passed, n_resamples=2000)["n_clusters"] == 100
    with pytest.raises(ValueError, match="0/1"):
        pass_rate_ci([0.0, 0.5, 1.0])


# --------------------------------------------------------------------------------------------
# Rank stability
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "n_models", "ties"), [(0, 5, False), (1, 30, False), (2, 25, True)]
)
def test_rank_stability_tau_matches_scipy(seed, n_models, ties):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n_models)
    b = a + rng.normal(scale=0.5, size=n_models)
    if ties:
        a, b = a.round(0), b.round(0)
    models = [f"model-{i}" for i in range(n_models)]
    scores_a, scores_b = dict(zip(models, a, strict=True)), dict(zip(models, b, strict=True))
    result = rank_stability(scores_a, scores_b)
    assert result["kendall_tau"] == pytest.approx(scipy_stats.kendalltau(a, b).statistic, abs=1e-12)
    assert result["n_models"] == n_models
    inverted = rank_stability(scores_a, scores_b, higher_is_better=False)
    assert inverted["kendall_tau"] == pytest.approx(result["kendall_tau"], abs=1e-12)


def test_rank_stability_swaps_and_ranks():
    a = {"m1": 0.9, "m2": 0.8, "m3": 0.7, "m4": 0.6, "m5": 0.5, "only-a": 0.1}
    b = {"m1": 0.7, "m2": 0.8, "m3": 0.6, "m4": 0.65, "m5": 0.5, "only-b": 0.9}
    result = rank_stability(a, b)
    assert result["n_models"] == 5
    assert result["swaps"] == [("m1", "m2"), ("m3", "m4")]
    assert result["swapped_adjacent_pairs"] == 2
    assert result["rank_a"] == {"m1": 1, "m2": 2, "m3": 3, "m4": 4, "m5": 5}
    assert result["rank_b"] == {"m1": 2, "m2": 1, "m3": 4, "m4": 3, "m5": 5}
    assert result["discordant_pairs"] == 2
    assert result["max_rank_change"] == 1
    assert result["only_in_a"] == ["only-a"]
    assert result["only_in_b"] == ["only-b"]
    assert result["kendall_tau"] == pytest.approx(0.6)


def test_rank_stability_lower_is_better_and_ties():
    a = {"x": 1.0, "y": 2.0, "z": 2.0}
    b = {"x": 3.0, "y": 1.0, "z": 2.0}
    result = rank_stability(a, b, higher_is_better=False)
    assert result["rank_a"] == {"x": 1, "y": 2, "z": 2}  # ties share the best rank
    assert result["rank_b"] == {"x": 3, "y": 1, "z": 2}
    assert result["swaps"] == [("x", "y")]  # y and z are tied in a: never a swap


def test_rank_stability_degenerate_cases():
    one = rank_stability({"a": 1.0}, {"a": 2.0, "b": 1.0})
    assert math.isnan(one["kendall_tau"])
    assert (one["n_models"], one["swaps"], one["max_rank_change"]) == (1, [], 0)
    none = rank_stability({"a": 1.0}, {"b": 1.0})
    assert none["n_models"] == 0
    assert math.isnan(none["kendall_tau"])
    flat = rank_stability({"a": 1.0, "b": 1.0}, {"a": 1.0, "b": 2.0})
    assert math.isnan(flat["kendall_tau"])
    assert flat["swaps"] == []
    with pytest.raises(ValueError, match="finite"):
        rank_stability({"a": 1.0, "b": np.nan}, {"a": 1.0, "b": 2.0})


def test_kendall_tau_b_rows_matches_scipy_with_and_without_ties():
    from stats import kendall_tau_b_rows

    rng = np.random.default_rng(12)
    b = rng.integers(0, 4, size=7).astype(float)  # ties in the fixed ordering
    rows = rng.integers(0, 5, size=(200, 7)).astype(float)
    got = kendall_tau_b_rows(rows, b)
    for row, tau in zip(rows, got, strict=True):
        expected = scipy_stats.kendalltau(row, b).statistic
        if np.isnan(expected):
            assert np.isnan(tau)
        else:
            assert tau == pytest.approx(expected, abs=1e-12)
    continuous = rng.normal(size=(50, 9))
    fixed = rng.normal(size=9)
    assert kendall_tau_b_rows(continuous, fixed) == pytest.approx(
        [scipy_stats.kendalltau(r, fixed).statistic for r in continuous], abs=1e-12
    )
    assert np.isnan(kendall_tau_b_rows(np.ones((1, 3)), [1.0, 2.0, 3.0])[0])
    assert np.isnan(kendall_tau_b_rows([[1.0, np.nan, 2.0]], [1.0, 2.0, 3.0])[0])
