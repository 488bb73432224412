"""Prediction-powered rates against ppi_py, and by simulation against a known truth."""

import numpy as np
import ppi_py
import pytest

from stats import calibrated_mean, large_enough_for_label, ppi_mean
from tests.stats import ppi_simulation as sim

SIZES = [(10, 40), (60, 600), (400, 25_000)]


def _data(rng, n, big_n, kind):
    if kind == "binary":
        y = rng.binomial(1, 0.6, n).astype(float)
        f = np.where(rng.random(n) < 0.8, y, 1 - y)
        f_u = rng.binomial(1, 0.68, big_n).astype(float)
    else:
        y = rng.normal(2.0, 1.0, n)
        f = y + rng.normal(0.4, 0.7, n)
        f_u = rng.normal(2.4, 1.2, big_n)
    return y, f, f_u


@pytest.mark.parametrize(("n", "big_n"), SIZES)
@pytest.mark.parametrize("kind", ["binary", "continuous"])
@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.37])
@pytest.mark.parametrize("weighted", [False, True])
def test_ppi_mean_matches_ppi_py(n, big_n, kind, lam, weighted):
    rng = np.random.default_rng(n * 7 + big_n + (lam is None) + 3 * weighted)
    y, f, f_u = _data(rng, n, big_n, kind)
    w = rng.uniform(0.2, 3.0, n) if weighted else None
    w_u = rng.uniform(0.5, 2.0, big_n) if weighted else None
    for confidence in (0.9, 0.95):
        e = ppi_mean(y, f, f_u, lam=lam, weights=w, weights_unlabelled=w_u, confidence=confidence)
        point = ppi_py.ppi_mean_pointestimate(y, f, f_u, lam=lam, w=w, w_unlabeled=w_u)
        low, high = ppi_py.ppi_mean_ci(
            y, f, f_u, alpha=1 - confidence, lam=lam, w=w, w_unlabeled=w_u
        )
        assert e.value == pytest.approx(float(np.squeeze(point)), abs=1e-9)
        assert e.low == pytest.approx(float(np.squeeze(low)), abs=1e-9)
        assert e.high == pytest.approx(float(np.squeeze(high)), abs=1e-9)
        assert e.n == n
        assert ("PPI++" in e.method) == (lam is None)


def test_power_tuning_never_widens_the_reference_interval():
    rng = np.random.default_rng(5)
    y, f, f_u = _data(rng, 80, 2_000, "binary")
    f = rng.binomial(1, 0.5, 80).astype(float)  # a useless judge: classical PPI pays for it
    tuned, classical, alone = (ppi_mean(y, f, f_u, lam=lam) for lam in (None, 1.0, 0.0))
    assert tuned.width <= classical.width
    assert tuned.width <= alone.width * 1.05


def test_calibrated_point_estimate_is_ppi_py_with_the_sample_inside_the_judged_set():
    # Without strata, the platform's estimator is ppi_py's point estimate with every judged
    # conversation as the unlabelled set and inverse inclusion probabilities as weights.
    rng = np.random.default_rng(11)
    big_n = 900
    judge = rng.binomial(1, 0.6, big_n).astype(float)
    truth = np.where(rng.random(big_n) < 0.85, judge, 1 - judge)
    pi = np.where(np.arange(big_n) % 3 == 0, 0.4, 0.2)
    sampled = rng.random(big_n) < pi
    expert = np.where(sampled, truth, np.nan)
    for lam in (0.0, 0.6, 1.0):
        e = calibrated_mean(judge, expert, inclusion_probability=pi, lam=lam)
        reference = ppi_py.ppi_mean_pointestimate(
            truth[sampled], judge[sampled], judge, lam=lam, w=1 / pi[sampled]
        )
        assert e.value == pytest.approx(float(np.squeeze(reference)), abs=1e-12)
        assert e.n == sampled.sum()


def test_calibrated_mean_post_stratifies():
    rng = np.random.default_rng(3)
    stratum = np.repeat([0, 1, 2], [300, 500, 200])
    judge = rng.binomial(1, 0.5, stratum.size).astype(float)
    truth = np.where(rng.random(stratum.size) < 0.8, judge, 1 - judge)
    expert = np.full(stratum.size, np.nan)
    sizes = {0: 30, 1: 20, 2: 40}
    pi = np.empty(stratum.size)
    for h, size in sizes.items():
        members = np.flatnonzero(stratum == h)
        chosen = rng.choice(members, size, replace=False)
        expert[chosen] = truth[chosen]
        pi[members] = size / members.size
    lam = 0.7
    expected = 0.0
    for h in sizes:
        inside = stratum == h
        s = inside & np.isfinite(expert)
        expected += inside.mean() * (
            lam * judge[inside].mean() + (expert[s] - lam * judge[s]).mean()
        )
    e = calibrated_mean(judge, expert, inclusion_probability=pi, strata=stratum, lam=lam)
    assert e.value == pytest.approx(expected, abs=1e-12)


def test_tuned_lambda_minimises_the_clustered_variance():
    rng = np.random.default_rng(8)
    d = sim.draw(sim.TARGETS[0], rng)
    common = {"inclusion_probability": d.inclusion, "clusters": d.scenario, "strata": d.polarity}
    tuned = calibrated_mean(d.judge, d.expert, **common)
    for lam in np.linspace(0, 1, 11):
        assert tuned.sd <= calibrated_mean(d.judge, d.expert, lam=lam, **common).sd + 1e-15


def test_too_little_expert_data_is_reported_not_estimated():
    judge = np.array([1.0, 0.0, 1.0, 1.0])
    one = calibrated_mean(judge, np.array([1.0, np.nan, np.nan, np.nan]))
    assert not one.defined
    assert "fewer than 2 expert verdicts" in one.reason
    same_cluster = calibrated_mean(
        judge, np.array([1.0, 0.0, np.nan, np.nan]), clusters=[0, 0, 1, 1]
    )
    assert "fewer than two base scenarios" in same_cluster.reason
    with pytest.raises(ValueError, match="one entry per conversation"):
        calibrated_mean(judge, np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="inclusion probabilities"):
        calibrated_mean(judge, np.array([1.0, 0.0, np.nan, 1.0]), inclusion_probability=0.0)


@pytest.mark.slow(reason="a coverage simulation")
def test_calibrated_interval_covers_where_the_judge_only_interval_does_not():
    # A judge kind to one target and harsh to the other, heterogeneous base scenarios, 300 of
    # 960 conversations rated by experts (stratified by polarity, unequal probabilities).
    # 2 x 700 replications: the Monte Carlo sd of a 95 % coverage is 0.6 points.
    results = [sim.coverage(target, 700, seed=20 + i) for i, target in enumerate(sim.TARGETS)]
    pooled = np.mean([r["calibrated"]["coverage"] for r in results])
    assert 0.93 <= pooled <= 0.97, results
    for r in results:
        assert 0.92 <= r["calibrated"]["coverage"] <= 0.98, r
        assert r["judge only"]["coverage"] < 0.5, r
        assert r["calibrated"]["width"] < r["experts only"]["width"], r
        # Unbiased despite the judge's bias (Monte Carlo sd of the mean ~0.001).
        assert abs(r["calibrated"]["mean"] - r["calibrated"]["truth"]) < 0.005, r
        assert abs(r["judge only"]["mean"] - r["judge only"]["truth"]) > 0.05, r


@pytest.mark.parametrize("crossed_strata", [False, True])
def test_clustered_variance_is_statsmodels_cluster_robust_when_experts_rate_everything(
    crossed_strata,
):
    # Every conversation rated (pi = 1): the calibrated rate is the expert mean and its interval
    # the CR1 cluster-robust one of an intercept-only regression, t on G - 1 df. Strata that
    # cut across base scenarios cannot centre them, so they leave the interval unchanged.
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(12)
    g = 25
    scenario = np.repeat(np.arange(g), rng.integers(2, 9, g))
    p = rng.beta(2, 2, g)[scenario]
    expert = (rng.random(scenario.size) < p).astype(float)
    judge = np.where(rng.random(scenario.size) < 0.8, expert, 1 - expert)
    strata = np.arange(scenario.size) % 2 if crossed_strata else None
    e = calibrated_mean(
        judge, expert, inclusion_probability=1.0, clusters=scenario, strata=strata, bounded=False
    )
    fit = sm.OLS(expert, np.ones(scenario.size)).fit(
        cov_type="cluster", cov_kwds={"groups": scenario}, use_t=True
    )
    low, high = fit.conf_int()[0]
    assert e.value == pytest.approx(expert.mean(), abs=1e-12)
    assert e.sd == pytest.approx(fit.bse[0], abs=1e-12)
    assert (e.low, e.high) == pytest.approx((low, high), abs=1e-12)


def test_calibrated_interval_keeps_coverage_with_few_base_scenarios():
    # 20 base scenarios, 40 expert verdicts: too few clusters to tune lambda (classical PPI),
    # the t interval on G - H df still covers. 2 x 800 replications.
    design = {"scenarios_per_polarity": 10, "expert_sample": (24, 16)}
    d = sim.draw(sim.TARGETS[0], np.random.default_rng(0), **design)
    assert "too few base scenarios" in sim.intervals(d)["calibrated"].method
    results = [
        sim.coverage(target, 800, seed=40 + i, judge_only=False, **design)
        for i, target in enumerate(sim.TARGETS)
    ]
    pooled = np.mean([r["calibrated"]["coverage"] for r in results])
    assert 0.93 <= pooled <= 0.97, results
    for r in results:
        assert r["calibrated"]["width"] < r["experts only"]["width"], r


def test_calibrated_figure_on_the_label_only_with_enough_expert_verdicts():
    rng = np.random.default_rng(9)
    d = sim.draw(sim.TARGETS[1], rng)
    full = sim.intervals(d, judge_only=False)["calibrated"]
    assert full.n == 300
    assert full.n_clusters == len(np.unique(d.scenario[np.isfinite(d.expert)]))
    assert large_enough_for_label(full)
    small = sim.draw(sim.TARGETS[1], rng, scenarios_per_polarity=10, expert_sample=(24, 16))
    assert not large_enough_for_label(sim.intervals(small, judge_only=False)["calibrated"])


def test_a_calibrated_rate_below_zero_is_published_inside_its_interval_in_range():
    # Experts fail every sampled conversation the judge passed: the correction overshoots and
    # the unbounded PPI estimate is negative, as it is for ppi_py.
    judge = np.array([1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    expert = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, np.nan, np.nan, 0.0, np.nan, 0.0, 0.0])
    clusters = np.arange(judge.size) // 2
    unbounded = calibrated_mean(judge, expert, clusters=clusters, lam=1.0, bounded=False)
    sampled = np.isfinite(expert)
    reference = ppi_py.ppi_mean_pointestimate(expert[sampled], judge[sampled], judge, lam=1.0)
    assert unbounded.value == pytest.approx(float(np.squeeze(reference)), abs=1e-12)
    assert unbounded.value < 0
    e = calibrated_mean(judge, expert, clusters=clusters, lam=1.0)
    assert e.value == 0.0
    assert e.low == 0.0 < e.high <= 1.0
    # The bounded interval holds what the unbounded one holds of [0, 1].
    assert e.high >= min(1.0, unbounded.high)
    assert e.sd == unbounded.sd
    mirrored = calibrated_mean(1 - judge, 1 - expert, clusters=clusters, lam=1.0)
    assert (mirrored.value, mirrored.high) == (1.0, 1.0)
    assert mirrored.low == pytest.approx(1 - e.high, abs=1e-12)


def test_a_calibrated_rate_with_no_spread_still_has_an_interval_of_positive_width():
    # Judge and experts agree on every conversation and all fail: the PPI standard error is 0;
    # the interval rests on the experts' own sample size instead.
    judge = np.zeros(40)
    expert = np.where(np.arange(40) % 2 == 0, 0.0, np.nan)
    e = calibrated_mean(judge, expert, clusters=np.arange(40) // 2)
    assert e.sd == 0.0
    assert e.value == 0.0 == e.low < e.high < 0.5


@pytest.mark.parametrize("target", sim.BOUNDARY_TARGETS, ids=lambda t: t.name)
def test_calibrated_interval_covers_true_rates_of_zero_and_one(target):
    # The smallest design the pages publish (100 verdicts over 20 base scenarios); 400
    # replications (Monte Carlo sd of a 95 % coverage: 1.1 points).
    design = {"scenarios_per_polarity": 10, "expert_sample": (60, 40)}
    r = sim.coverage(target, 400, seed=60, judge_only=False, **design)
    assert r["calibrated"]["bounded"] == 1.0, r
    assert r["calibrated"]["coverage"] >= 0.95, r


def test_calibrated_interval_covers_at_the_smallest_published_design():
    # 100 expert verdicts over 20 base scenarios: the minimum every page publishes from.
    design = {"scenarios_per_polarity": 10, "expert_sample": (60, 40)}
    results = [
        sim.coverage(target, 500, seed=70 + i, judge_only=False, **design)
        for i, target in enumerate(sim.TARGETS)
    ]
    for r in results:
        assert r["calibrated"]["bounded"] == 1.0, r
    pooled = np.mean([r["calibrated"]["coverage"] for r in results])
    assert 0.93 <= pooled <= 0.975, results
