"""No interval collapses to a point or leaves its range: every bounded constructor at 0 of n,
n of n, one item pair and one to three clusters; plain Wilson where nothing is clustered
(statsmodels); Newcombe's interval written out; and a small coverage check at the extremes."""

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

import stats as statistics
from stats.estimates import Estimate
from tests.stats import extremes_simulation as extremes
from tests.stats.references import effective_wilson_reference


def assert_bounded(e: Estimate, low: float, high: float) -> None:
    assert e.defined, e
    assert e.has_interval, e
    assert low <= e.low <= e.value <= e.high <= high, e
    assert e.high - e.low > 1e-6, e


SIZES = [2, 3, 7, 60, 809]
CLUSTERINGS = [None, 1, 2, 3]


def _labels(n, clusters):
    return None if clusters is None else np.arange(n) % clusters


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("clusters", CLUSTERINGS)
@pytest.mark.parametrize("share", [0.0, 1.0, 0.5])
def test_proportions_are_open_and_inside_zero_one(n, clusters, share):
    hits = np.zeros(n)
    hits[: int(round(share * n))] = 1.0
    e = statistics.proportion_estimate(hits, _labels(n, clusters))
    assert_bounded(e, 0.0, 1.0)
    assert e.sd is None or e.sd > 0
    # The same through the other ways a proportion is made.
    answers = np.where(hits == 1, "agreed", "disagreed")
    shares = statistics.share_estimates(answers, ["agreed", "disagreed"], _labels(n, clusters))
    assert shares["agreed"] == e
    assert statistics.mean_estimate(hits, _labels(n, clusters), unit="proportion") == e


@pytest.mark.parametrize("passed", [0, 1, 17, 59, 60])
def test_unclustered_proportions_are_statsmodels_wilson(passed):
    hits = np.r_[np.ones(passed), np.zeros(60 - passed)]
    e = statistics.proportion_estimate(hits)
    low, high = proportion_confint(passed, 60, method="wilson")
    assert (e.low, e.high) == pytest.approx((low, high), abs=1e-12)
    assert e.method == "Wilson score interval"
    assert e.value == passed / 60


def test_sixty_of_sixty_is_the_wilson_interval_not_a_point():
    e = statistics.proportion_estimate(np.ones(60))
    assert e.low == pytest.approx(0.9398, abs=1e-4)
    assert e.high == 1.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clustered_proportions_are_wilson_on_the_shrunk_design_effect(seed):
    rng = np.random.default_rng(seed)
    clusters = rng.integers(0, 12, 90)
    hits = (rng.random(90) < rng.beta(2, 3, 12)[clusters]).astype(float)
    e = statistics.proportion_estimate(hits, clusters)
    low, high = effective_wilson_reference(hits, clusters)
    assert (e.low, e.high) == pytest.approx((low, high), abs=1e-12)
    # A known correlation passed as the prior replaces the default of 1.
    known = statistics.proportion_estimate(hits, clusters, prior_icc=0.1)
    low, high = effective_wilson_reference(hits, clusters, prior=0.1)
    assert (known.low, known.high) == pytest.approx((low, high), abs=1e-12)
    assert known.width < e.width


def test_counts_per_cluster_give_the_proportion_of_the_items():
    rng = np.random.default_rng(3)
    clusters = rng.integers(0, 9, 70)
    hits = (rng.random(70) < 0.3).astype(float)
    passed = np.bincount(clusters, weights=hits)
    n = np.bincount(clusters)
    from_counts = statistics.proportion_from_clusters(passed, n, over="items")
    assert from_counts == statistics.proportion_estimate(hits, clusters)


def _pair(n, agree, clusters):
    """Two binary label lists with both labels used and ``agree`` of ``n`` items agreeing."""
    a = np.arange(n) % 2
    b = a.copy()
    b[agree:] = 1 - b[agree:]
    return a, b


@pytest.mark.parametrize("n", [2, 3, 8, 60])
@pytest.mark.parametrize("clusters", CLUSTERINGS)
@pytest.mark.parametrize("agree", ["all", "none", "some"])
def test_kappas_and_agreement_are_open_and_in_range(n, clusters, agree):
    count = {"all": n, "none": 0, "some": max(1, n // 2)}[agree]
    a, b = _pair(n, count, clusters)
    agreement, kappa = statistics.agreement_estimates(a, b, _labels(n, clusters))
    assert_bounded(agreement, 0.0, 1.0)
    assert kappa.value == pytest.approx(cohen_kappa_score(a, b))
    assert_bounded(kappa, -1.0, 1.0)


def test_sixty_agreements_of_sixty_read_below_one():
    a = np.arange(60) % 2
    agreement, kappa = statistics.agreement_estimates(a, a, np.arange(60) // 3)
    assert kappa.value == 1.0
    assert kappa.low < 1.0
    assert agreement.value == 1.0
    assert agreement.low < 1.0


def test_kappa_without_variation_stays_undefined():
    same = np.zeros(60)
    agreement, kappa = statistics.agreement_estimates(same, same, np.arange(60) // 3)
    assert kappa.value is None
    assert kappa.reason == "undefined (no variation)"
    assert_bounded(agreement, 0.0, 1.0)
    counts = np.column_stack([np.full(20, 3), np.zeros(20)])
    assert statistics.fleiss_estimate(counts).value is None
    assert statistics.krippendorff_estimate(np.ones((3, 20)), "nominal").value is None


def test_the_coefficient_bounds_are_the_image_of_the_disagreement_interval():
    """One cluster (no bootstrap): kappa = 1 - D_o / D_e maps statsmodels' Wilson interval of
    D_o on the items (the prior's design effect over one cluster of one item each is 1)."""
    a = np.array([0, 0, 1, 1, 0, 1, 0, 1, 1, 0])
    b = np.array([0, 0, 1, 1, 0, 1, 1, 1, 1, 1])
    kappa = statistics.cohen_estimate(a, b, np.arange(10), n_resamples=200)
    p_a, p_b = a.mean(), b.mean()
    chance = 1 - (p_a * p_b + (1 - p_a) * (1 - p_b))
    low_d, high_d = proportion_confint(2, 10, method="wilson")
    assert kappa.low <= 1 - high_d / chance + 1e-12
    assert kappa.high >= 1 - low_d / chance - 1e-12
    alone = statistics.cohen_estimate(a, b, np.zeros(10))
    low_d, high_d = proportion_confint(0.2 * 1, 1, method="wilson")  # ten items, one cluster
    assert (alone.low, alone.high) == pytest.approx(
        (max(-1, 1 - high_d / chance), min(1, 1 - low_d / chance)), abs=1e-12
    )


@pytest.mark.parametrize("clusters", CLUSTERINGS)
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_fleiss_and_krippendorff_are_open_and_in_range(clusters, level):
    units = 12
    data = np.tile(np.arange(units) % 3, (3, 1)).astype(float)  # full agreement
    e = statistics.krippendorff_estimate(data, level, _labels(units, clusters))
    assert e.value == 1.0
    assert_bounded(e, -1.0, 1.0)
    counts = np.column_stack([data[0] == 0, data[0] == 1, data[0] == 2]).astype(int) * 3
    e = statistics.fleiss_estimate(counts, _labels(units, clusters))
    assert e.value == 1.0
    assert_bounded(e, -1.0, 1.0)


def _newcombe(p1, n1, p2, n2, r, z):
    def wilson(p, n):
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return centre - half, centre + half

    l1, u1 = wilson(p1, n1)
    l2, u2 = wilson(p2, n2)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 - 2 * r * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 - 2 * r * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return low, high


@pytest.mark.parametrize(
    ("rates", "clusters"),
    [((1.0, 0.0), 2), ((0.0, 0.0), 3), ((1.0, 1.0), 2), ((1.0, 0.5), 3), ((0.6, 0.4), 20)],
)
def test_model_differences_are_bounded_and_open(rates, clusters):
    rng = np.random.default_rng(4)
    n = np.full((clusters, 2), 4.0)
    passed = np.column_stack([rng.binomial(4, p, clusters) for p in rates]).astype(float)
    result = statistics.paired_rate_differences(passed, n, np.zeros(clusters))
    for estimate in result.estimates():
        assert_bounded(estimate, -1.0, 1.0)
    low, high = result.bounds(simultaneous=False)
    expected = _newcombe(
        result.rates[0],
        result.effective[0],
        result.rates[1],
        result.effective[1],
        result.correlation[0],
        result.pointwise,
    )
    assert (low[0], high[0]) == pytest.approx(expected, abs=1e-12)


def test_a_hundred_point_difference_cannot_pass_a_hundred_points():
    passed = np.array([[2, 0], [2, 0], [2, 0]], dtype=float)
    e = statistics.paired_rate_differences(passed, np.full((3, 2), 2.0), [0, 1, 2]).estimates()[0]
    assert e.value == 1.0
    assert -1.0 <= e.low < 1.0
    assert e.high == 1.0


@pytest.mark.parametrize("clusters", [2, 3, 40])
@pytest.mark.parametrize("arms", [(1.0, 1.0), (0.0, 1.0), (0.0, 0.0)])
def test_swap_statistics_are_bounded_and_open(clusters, arms):
    scenarios = np.repeat(np.arange(clusters), 3)
    original = np.full(scenarios.size, arms[0])
    swapped = np.full(scenarios.size, arms[1])
    shift = statistics.pass_rate_shift(original, scenarios, swapped, scenarios)
    assert shift.value == arms[1] - arms[0]
    assert_bounded(shift, -1.0, 1.0)
    flips = statistics.verdict_flip_share(original, swapped, scenarios)
    assert_bounded(flips, 0.0, 1.0)


def test_single_judgment_ranking_metrics_as_three_is_not_read_as_exact():
    metrics = 20
    metric = np.repeat(np.arange(metrics), 6)
    rate = np.repeat(np.linspace(0.0, 1.0, metrics), 6)
    readings = np.repeat((np.arange(6)[None, :] < 6 * rate[::6, None]).reshape(-1, 1), 3, 1)
    e = statistics.single_vs_majority(readings.astype(float), metric, metric // 1)
    assert e.value == pytest.approx(1.0)
    assert_bounded(e, -1.0, 1.0)


def test_rank_agreement_is_open_when_the_order_never_changes():
    passed = np.tile(np.arange(5.0), (10, 1))
    n = np.full((10, 5), 5.0)
    e = statistics.swap_rank_agreement(passed, n, passed, n, n_resamples=200)
    assert e.value == 1.0
    assert_bounded(e, -1.0, 1.0)


@pytest.mark.slow(reason="a small coverage simulation of every bounded constructor")
def test_every_bounded_constructor_covers_at_its_extremes():
    """Few replications (the benchmark runs many): no zero-width interval anywhere, coverage
    within three Monte Carlo errors of 95 % or above it -- single vs majority too, whose
    percentile interval held a true rho of 1 in no data set of 20 metrics or more."""
    low_cases = []
    for case in extremes.cases(resamples=300):
        r = extremes.run(case, 60, seed=5)
        assert r["zero_width"] == 0.0, case
        if r["coverage"] < 0.95 - 3 * max(r["mc_error"], 0.028):
            low_cases.append((case.constructor, case.truth, case.clusters, r["coverage"]))
    assert not low_cases


@pytest.mark.parametrize("clusters", [None, 2, 3])
def test_a_judge_agreeing_with_its_panel_everywhere_is_not_an_exact_zero(clusters):
    readings = np.ones((12, 3, 1))
    readings[::2] = 0.0
    labels = None if clusters is None else np.arange(12) % clusters
    rates = statistics.judge_pass_rates(readings, np.zeros(12), labels, n_resamples=200)
    for rate in rates:
        assert rate.minus_panel.value == 0.0
        assert_bounded(rate.minus_panel, -1.0, 1.0)
        assert_bounded(rate.pass_rate, 0.0, 1.0)


@pytest.mark.parametrize(
    ("values", "unit"),
    [([1 / 6] * 2, "difference"), ([-1.0] * 5, "difference"), ([0.4] * 3, "score")],
)
def test_a_mean_of_equal_bounded_values_keeps_an_interval_of_positive_width(values, unit):
    """Every metric's teen-adult difference alike (two metrics at +1/6, say): every bootstrap
    resample agrees, and the mean's interval opens to the Wilson bound of its range."""
    e = statistics.mean_estimate(values, unit=unit, over="metrics", n_resamples=200)
    lo, hi = (-1.0, 1.0) if unit == "difference" else (0.0, 1.0)
    assert lo <= e.low <= e.value <= e.high <= hi
    assert e.high - e.low > 0.05
    # The score bound on the mapped scale, as statsmodels gives Wilson's interval.
    from statsmodels.stats.proportion import proportion_confint

    share = (e.value - lo) / (hi - lo)
    w_low, w_high = proportion_confint(share * len(values), len(values), method="wilson")
    assert e.low == pytest.approx(min(lo + w_low * (hi - lo), e.value))
    assert e.high == pytest.approx(max(lo + w_high * (hi - lo), e.value))
