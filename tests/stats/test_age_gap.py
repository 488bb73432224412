"""The teen-minus-adult test (``stats.age_gap``) against references on data with known answers,
and its bounds at the extremes."""

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stats import age_gap


def cells(teen, adult, n=1.0):
    """``passed[g, b, a, t]`` and ``n`` from teen and adult pass counts ``[g, b, t]``."""
    passed = np.stack([np.asarray(teen, float), np.asarray(adult, float)], axis=2)
    return passed, np.full(passed.shape, float(n))


def test_plain_paired_t_is_scipys_ttest_rel():
    """One model: the plain test is the paired t of the teen against the adult rates over the
    base scenarios, p-value and interval (clipped to [-1, 1]) alike."""
    rng = np.random.default_rng(4)
    teen = rng.binomial(10, 0.6, (30, 5, 1))
    adult = rng.binomial(10, 0.45, (30, 5, 1))
    found = age_gap.age_gap_test(*cells(teen, adult, n=10), moderate=False)
    for g in range(30):
        reference = scipy_stats.ttest_rel(teen[g, :, 0] / 10, adult[g, :, 0] / 10)
        low, high = reference.confidence_interval(0.95)
        assert found.p_value[g] == pytest.approx(reference.pvalue)
        assert found.low[g] == pytest.approx(max(low, -1.0))
        assert found.high[g] == pytest.approx(min(high, 1.0))
        assert found.difference[g] == pytest.approx((teen[g] - adult[g]).mean() / 10)


def test_between_base_distribution_recovers_two_known_variances():
    """Normal base differences whose between-base variance is 0 for half the metrics and 0.1
    for the other half (binomial part 0.02, 20 bases): the estimated distribution puts about
    half its mass near each, and a metric's posterior follows its own spread."""
    rng = np.random.default_rng(7)
    metrics, bases = 4000, 20
    tau2 = np.where(np.arange(metrics) % 2 == 0, 0.0, 0.1)
    binomial = np.full(metrics, 0.02)
    d = rng.normal(0.0, 1.0, (metrics, bases)) * np.sqrt(binomial + tau2)[:, None]
    mixture = age_gap.between_base_mixture(
        d.var(axis=1, ddof=1), np.full(metrics, bases - 1.0), binomial, 1.0
    )
    low = mixture.weights[mixture.grid < 0.03].sum()
    high = mixture.weights[(mixture.grid > 0.06) & (mixture.grid < 0.16)].sum()
    assert low == pytest.approx(0.5, abs=0.05)
    assert high == pytest.approx(0.5, abs=0.05)
    posterior_mean = (mixture.posterior * mixture.grid).sum(axis=1)
    assert posterior_mean[tau2 == 0].mean() < 0.02
    assert posterior_mean[tau2 > 0].mean() == pytest.approx(0.1, abs=0.02)


def test_null_p_values_are_uniform_when_the_model_holds():
    """Normal base differences with a known spread of between-base variances (3 bases): under
    the null the p-values are uniform -- 5 % below 0.05 (tolerance: 4 Monte Carlo standard
    errors of 6,000 metrics, and a margin for the estimated distribution)."""
    rng = np.random.default_rng(11)
    rejected = []
    for _ in range(4):
        metrics = 1500
        binomial = rng.uniform(0.01, 0.05, metrics)
        tau2 = rng.choice([0.0, 0.02, 0.08], metrics)
        d = rng.normal(0.0, 1.0, (metrics, 3)) * np.sqrt(binomial + tau2)[:, None]
        mixture = age_gap.between_base_mixture(
            d.var(axis=1, ddof=1), np.full(metrics, 2.0), binomial, 1.0
        )
        se = np.sqrt(mixture.variances / 3)
        tail = 2 * scipy_stats.norm.sf(np.abs(d.mean(axis=1))[:, None] / se)
        rejected.append((mixture.posterior * tail).sum(axis=1) < 0.05)
    rate = np.concatenate(rejected).mean()
    assert abs(rate - 0.05) < 4 * np.sqrt(0.05 * 0.95 / 6_000) + 0.005


def random_run(rng, metrics=200, bases=3, models=10):
    rates = rng.uniform(0.05, 0.95, (metrics, 1, 1, 1))
    shifts = rng.normal(0.0, 0.1, (metrics, bases, 2, models))
    p = np.clip(rates + shifts, 0.0, 1.0)
    passed = rng.binomial(1, p).astype(float)
    return passed, np.ones_like(passed)


def test_interval_is_bounded_holds_the_point_and_agrees_with_the_test():
    rng = np.random.default_rng(5)
    found = age_gap.age_gap_test(*random_run(rng))
    assert np.all(found.low >= -1.0)
    assert np.all(found.high <= 1.0)
    assert np.all(found.low <= found.difference)
    assert np.all(found.difference <= found.high)
    assert np.all(found.high > found.low)
    excludes = (found.low > 0) | (found.high < 0)
    np.testing.assert_array_equal(excludes, found.p_value < 0.05)


def test_every_teen_passing_and_every_adult_failing_stays_inside_the_bounds():
    rng = np.random.default_rng(6)
    passed, n = random_run(rng, metrics=50)
    passed[0, :, 0, :], passed[0, :, 1, :] = 1.0, 0.0  # teens all pass, adults all fail
    passed[1, :, 0, :], passed[1, :, 1, :] = 0.0, 0.0  # a metric at 0 % in both variants
    found = age_gap.age_gap_test(passed, n)
    assert found.difference[0] == 1.0
    assert found.high[0] == 1.0
    assert 0.0 < found.low[0] < 1.0
    assert found.p_value[0] < 1e-3
    # Nothing passes: one conversation per cell, yet the variance is not 0.
    assert found.difference[1] == 0.0
    assert found.variance[1] > 0.0
    assert found.low[1] < 0.0 < found.high[1]
    assert found.p_value[1] == pytest.approx(1.0)


@pytest.mark.parametrize("bases", [1, 2, 3])
def test_one_to_three_bases_get_an_interval(bases):
    """A metric with fewer bases than the others borrows the between-base distribution of all
    metrics; one with a single base has no variance of its own and still gets one."""
    rng = np.random.default_rng(bases)
    passed, n = random_run(rng, metrics=100)
    n[0, bases:] = 0.0
    passed[0, bases:] = 0.0
    found = age_gap.age_gap_test(passed, n)
    assert found.n_bases[0] == bases
    assert found.n[0] == bases * 2 * 10
    assert -1.0 <= found.low[0] <= found.difference[0] <= found.high[0] <= 1.0
    assert found.low[0] < found.high[0]
    assert np.isfinite(found.p_value[0])
    # Fewer bases, less information: a wider interval than a three-base metric's median.
    if bases < 3:
        assert found.high[0] - found.low[0] > np.median(found.high[1:] - found.low[1:])
    [estimate] = found.estimates()[:1]
    assert estimate.n_clusters == bases
    assert estimate.unit == "difference"


def test_a_metric_with_no_pair_is_insufficient():
    rng = np.random.default_rng(9)
    passed, n = random_run(rng, metrics=20)
    n[0, :, 1, :] = 0.0  # no adult conversation
    found = age_gap.age_gap_test(passed, n)
    assert np.isnan(found.p_value[0])
    estimate = found.estimates()[0]
    assert estimate.value is None
    assert "both variants" in estimate.reason


def test_power_and_minimum_gap_match_the_normal_formula_at_a_known_variance():
    """One variance with certainty: power is Phi(gap / se - z) + Phi(-gap / se - z), and the
    gap found with 80 % power is (z_0.975 + z_0.8) se."""
    se = 0.05
    one = np.ones((1, 1))
    test = age_gap.AgeGapTest(
        difference=np.zeros(1),
        low=np.full(1, -0.1),
        high=np.full(1, 0.1),
        p_value=np.ones(1),
        variance=np.full(1, 3 * se * se),
        df=np.full(1, np.inf),
        n_bases=np.full(1, 3),
        n=np.full(1, 60),
        confidence=0.95,
        method=age_gap.AGE_GAP_METHOD,
        se=se * one,
        posterior=one,
        half_width=np.full(1, scipy_stats.norm.ppf(0.975) * se),
    )
    z = scipy_stats.norm.ppf(0.975)
    expected = scipy_stats.norm.cdf(0.15 / se - z) + scipy_stats.norm.cdf(-0.15 / se - z)
    assert test.mean_power(0.15) == pytest.approx(expected)
    assert test.minimum_detectable_gap(0.8) == pytest.approx(
        (z + scipy_stats.norm.ppf(0.8)) * se, abs=1e-4
    )


def test_power_grows_with_the_gap_and_no_gap_is_the_level():
    rng = np.random.default_rng(12)
    found = age_gap.age_gap_test(*random_run(rng))
    assert found.mean_power(0.0) == pytest.approx(0.05, abs=1e-3)
    assert found.mean_power(0.05) < found.mean_power(0.15) < found.mean_power(0.3)
    gap = found.minimum_detectable_gap(0.8)
    assert gap is not None
    assert found.mean_power(gap) == pytest.approx(0.8, abs=1e-4)
