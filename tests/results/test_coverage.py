"""Do the published per-metric intervals cover at the platform's own design?

Simulated release: 400 metrics × 3 base scenarios × {teen, adult} × 10 models, one conversation
each. Pass probabilities follow a logistic model with metric, model, base-scenario and
scenario-variant effects (so teen and adult variants of one base are correlated); the true
value of a metric's pass rate (or teen-minus-adult difference) averages over the population of
base scenarios the three were drawn from. Coverage is measured over all metrics of several
simulated releases and must lie within 93-97 % for nominal 95 % intervals. The same loop also
shows that the percentile cluster bootstrap the platform used before does not.
"""

import numpy as np
import pytest
from scipy import special
from statsmodels.stats.multitest import multipletests

import stats as statistics
from results.services.cells import RunCells
from results.services.summaries import metric_design_effects
from stats.age_gap import age_gap_test

METRICS, BASES, MODELS = 400, 3, 10
RELEASES = 6
GH_X, GH_W = np.polynomial.hermite_e.hermegauss(40)
GH_W = GH_W / GH_W.sum()


def simulate(rng, *, sigma_base, sigma_variant, age_effect_sd):
    """Outcomes y[metric, base, age, model] and true rates truth[metric, age, model]."""
    mu = rng.normal(0.8, 1.2, METRICS)[:, None, None, None]
    model = rng.normal(0.0, 0.5, MODELS)[None, None, None, :]
    base = rng.normal(0.0, sigma_base, (METRICS, BASES))[:, :, None, None]
    variant = rng.normal(0.0, sigma_variant, (METRICS, BASES, 2))[:, :, :, None]
    half = rng.normal(0.0, age_effect_sd, METRICS)[:, None, None, None] / 2
    age = np.array([1.0, -1.0])[None, None, :, None] * half
    y = rng.binomial(1, special.expit(mu + model + base + variant + age))
    spread = np.hypot(sigma_base, sigma_variant)
    linear = (mu + model + age)[:, 0]  # metric, age, model
    truth = (special.expit(linear[..., None] + spread * GH_X) * GH_W).sum(axis=-1)
    return y, truth


def as_cells(y) -> RunCells:
    m, b, a, t = np.meshgrid(
        np.arange(METRICS), np.arange(BASES), np.arange(2), np.arange(MODELS), indexing="ij"
    )
    return RunCells(
        target=t.ravel(),
        version=m.ravel(),
        base=b.ravel(),
        age=a.ravel(),
        n=np.ones(y.size),
        passed=y.ravel().astype(np.float64),
        polarity=dict.fromkeys(range(METRICS), "positive"),
    )


DESIGNS = [
    {"sigma_base": 0.8, "sigma_variant": 0.5, "age_effect_sd": 0.0},
    {"sigma_base": 1.2, "sigma_variant": 0.8, "age_effect_sd": 0.6},
    {"sigma_base": 0.3, "sigma_variant": 0.3, "age_effect_sd": 0.3},
]


@pytest.mark.parametrize("design", DESIGNS)
def test_per_metric_intervals_cover_at_the_platform_design(design):
    rng = np.random.default_rng(20261201)
    rate_hits, diff_hits, boot_hits = [], [], []
    for _ in range(RELEASES):
        y, truth = simulate(rng, **design)
        # Per metric and model, teens and adults together: the published metric-level rate.
        deff = metric_design_effects(as_cells(y))["all"]
        passed = y.sum(axis=(1, 2))  # metric, model
        n = np.full(passed.shape, BASES * 2)
        low, high = statistics.effective_wilson(passed, n, deff)
        true_rate = truth.mean(axis=1)
        rate_hits.append((low <= true_rate) & (true_rate <= high))
        # Teen minus adult per metric, all models pooled, paired by base scenario.
        per_base = (y[:, :, 0, :] - y[:, :, 1, :]).mean(axis=-1)
        test = age_gap_test(y, np.ones_like(y))
        d_low, d_high = test.low, test.high
        true_diff = (truth[:, 0, :] - truth[:, 1, :]).mean(axis=-1)
        diff_hits.append((d_low <= true_diff) & (true_diff <= d_high))
        # The former method: percentile bootstrap over the three base scenarios.
        draws = rng.integers(0, BASES, size=(400, METRICS, BASES))
        resampled = np.take_along_axis(per_base[None].repeat(400, 0), draws, axis=2).mean(-1)
        b_low, b_high = np.quantile(resampled, [0.025, 0.975], axis=0)
        boot_hits.append((b_low <= true_diff) & (true_diff <= b_high))
    rate_coverage = np.mean(rate_hits)
    diff_coverage = np.mean(diff_hits)
    assert 0.93 <= rate_coverage <= 0.97, rate_coverage
    # The published teen-adult test: per-model binomial variance plus the between-base
    # variance's distribution over metrics, its interval inside [-1, 1].
    assert 0.93 <= diff_coverage <= 0.98, diff_coverage
    assert ((d_low >= -1.0) & (d_low < d_high) & (d_high <= 1.0)).all()
    assert np.mean(boot_hits) < 0.90  # three clusters: the bootstrap under-covers


def test_false_discoveries_are_controlled_when_no_metric_differs():
    rng = np.random.default_rng(7)
    any_discovery = 0
    uncorrected = []
    for _ in range(RELEASES * 2):
        y, _ = simulate(rng, sigma_base=0.8, sigma_variant=0.5, age_effect_sd=0.0)
        p = age_gap_test(y, np.ones_like(y)).p_value
        reject, _ = statistics.benjamini_hochberg(p, 0.05)
        any_discovery += bool(reject.any())
        uncorrected.append(np.mean(p < 0.05))
    # Under the complete null BH keeps the chance of any discovery at or below q.
    assert any_discovery <= 2
    # Per metric at its level: neither the 1 % of a floor that overstated the variance nor
    # more than the nominal 5 % (Monte Carlo error about 0.4 points here).
    assert 0.035 <= np.mean(uncorrected) <= 0.065, np.mean(uncorrected)


def simulate_null_gaps(rng, *, gap_sd_max):
    """Outcomes y[metric, base, age, model] where each base scenario has its own teen-adult gap
    on the logit scale (SD per metric uniform up to gap_sd_max), symmetric about 0: the mean
    gap over the population of base scenarios is 0 for every metric. Returns y and the SDs."""
    mu = rng.normal(0.8, 1.2, METRICS)[:, None, None, None]
    model = rng.normal(0.0, 0.4, MODELS)[None, None, None, :]
    base = (
        rng.normal(0.0, 1.0, (METRICS, BASES))[:, :, None, None]
        * rng.uniform(0, 2.0, METRICS)[:, None, None, None]
    )
    gap_sd = rng.uniform(0.0, gap_sd_max, METRICS)
    gap = rng.normal(0.0, 1.0, (METRICS, BASES)) * gap_sd[:, None]
    age = np.stack([gap / 2, -gap / 2], axis=2)[:, :, :, None]
    variant = rng.normal(0.0, 0.5, (METRICS, BASES, 2))[:, :, :, None]
    noisy = 0.05 + 0.9 * special.expit(mu + model + base + age + variant)  # a judge that errs
    return rng.binomial(1, noisy), gap_sd


@pytest.mark.slow(reason="40 simulated releases of 400 metrics through the published test")
def test_teen_adult_discoveries_hold_their_levels_when_gaps_vary_between_scenarios():
    """No metric differs on average, but some metrics' gap varies widely between base
    scenarios (logit SD up to 2.0): the per-metric rejection rate stays at 5 %, and the chance
    of any Benjamini-Hochberg discovery at or below 5 % (under the complete null the FDR is
    that chance). One variance pooled across metrics rejected 9-14 % of the widely spread
    metrics' nulls and made a discovery in 15-27 % of releases. The published test places
    each metric in the distribution of between-base spreads by its own three bases (two
    degrees of freedom), which sometimes puts a widely spread metric too low: those metrics
    are rejected about 8 % of the time (measured 7.9 % here, 9.2 % in the full design of
    ``benchmarks/teen_adult.py``) -- more than 5 %, stated on the methodology page, and
    bounded here so that it cannot grow unseen."""
    rng = np.random.default_rng(23)
    releases = 40
    any_discovery, rejected, spread = 0, [], []
    for _ in range(releases):
        y, gap_sd = simulate_null_gaps(rng, gap_sd_max=2.0)
        p = age_gap_test(y, np.ones_like(y)).p_value
        reject, _ = statistics.benjamini_hochberg(p, 0.05)
        any_discovery += bool(reject.any())
        rejected.append(p < 0.05)
        spread.append(gap_sd)
    rejected, spread = np.concatenate(rejected), np.concatenate(spread)
    wide = rejected[spread > 1.5]
    fdr = any_discovery / releases
    print(
        f"per-metric null rejection {rejected.mean():.3f}, gap SD > 1.5: {wide.mean():.3f} "
        f"(± {np.sqrt(0.05 * 0.95 / wide.size):.3f}); any discovery {fdr:.3f} "
        f"(± {np.sqrt(0.05 * 0.95 / releases):.3f})"
    )
    assert rejected.mean() <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / rejected.size)
    assert wide.mean() <= 0.10
    assert fdr <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / releases)


def test_benjamini_hochberg_matches_statsmodels():
    rng = np.random.default_rng(3)
    p = np.concatenate([rng.uniform(size=80), rng.uniform(0, 0.002, size=20)])
    p[[5, 17]] = np.nan  # untestable metrics are neither tested nor counted
    reject, adjusted = statistics.benjamini_hochberg(p, 0.05)
    valid = np.isfinite(p)
    sm_reject, sm_adjusted, _, _ = multipletests(p[valid], alpha=0.05, method="fdr_bh")
    np.testing.assert_array_equal(reject[valid], sm_reject)
    np.testing.assert_allclose(adjusted[valid], sm_adjusted)
    assert not reject[~valid].any()
    assert 15 <= reject.sum() <= 25


def test_wilson_matches_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    w_low, w_high = statistics.wilson_interval(np.array([0, 3, 6]), np.array([6, 6, 6]))
    for i, passed in enumerate((0, 3, 6)):
        assert (w_low[i], w_high[i]) == pytest.approx(
            proportion_confint(passed, 6, method="wilson")
        )


def test_wilson_bounds_hold_the_rate_itself_at_every_effective_size():
    """All passed, none passed, anything between: the interval holds p exactly, with no bound
    an ulp past it (a rounding that made an all-pass upper bound 0.9999999999999999)."""
    from statsmodels.stats.proportion import proportion_confint

    m = np.linspace(1, 200, 20001)  # effective sizes: n / design effect, fractional
    for y in (m, np.zeros_like(m), np.floor(m * 0.37)):
        low, high = statistics.wilson_interval(y, m)
        assert (low <= y / m).all()
        assert (high >= y / m).all()
    low, high = statistics.wilson_interval(m, m)
    assert (high == 1.0).all()
    assert low[::997] == pytest.approx(
        [proportion_confint(k, k, method="wilson")[0] for k in m[::997]]
    )
