"""Swap-study statistics against scipy, with intervals recomputed from the engine's draws."""

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.proportion import proportion_confint

from stats import (
    kendall_tau_b_rows,
    pass_rate_shift,
    single_vs_majority,
    swap_rank_agreement,
    verdict_flip_share,
)
from stats.differences import paired_rate_differences
from stats.resampling import cluster_hits

B = 300


def _percentiles(values):
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    return np.quantile(finite, [0.025, 0.975])


def test_kendall_rows_against_scipy_with_both_rankings_varying():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, (50, 7)).astype(float)
    b = rng.integers(0, 4, (50, 7)).astype(float)
    expected = [scipy_stats.kendalltau(x, y).statistic for x, y in zip(a, b, strict=True)]
    np.testing.assert_allclose(kendall_tau_b_rows(a, b), expected, atol=1e-12)


def test_pass_rate_shift_pairs_by_scenario():
    rng = np.random.default_rng(1)
    s = 60
    difficulty = rng.beta(2, 2, s)
    o_s = np.repeat(np.arange(s), 3)
    w_s = np.repeat(np.arange(5, s + 8), 2)  # scenarios 60-67 only swapped, 0-4 only original
    o = (rng.random(o_s.size) < difficulty[o_s]).astype(float)
    w = (rng.random(w_s.size) < np.append(difficulty, np.full(8, 0.5))[w_s] - 0.15).astype(float)
    e = pass_rate_shift(o, o_s, w, w_s, n_resamples=B, seed=3)
    shared = np.arange(5, s)
    in_o, in_w = np.isin(o_s, shared), np.isin(w_s, shared)
    assert e.value == pytest.approx(w[in_w].mean() - o[in_o].mean(), abs=1e-12)
    assert e.n == shared.size
    assert e.excluded[0].count == 13
    per = lambda v, sc: np.array([v[sc == x].sum() for x in shared])  # noqa: E731
    cnt = lambda sc: np.array([(sc == x).sum() for x in shared], dtype=float)  # noqa: E731
    # The interval: the paired difference of the two arms' rates over the shared scenarios.
    result = paired_rate_differences(
        np.column_stack([per(w, w_s), per(o, o_s)]),
        np.column_stack([cnt(w_s), cnt(o_s)]),
        np.zeros(shared.size),
    )
    low, high = result.bounds(simultaneous=False)
    assert (e.low, e.high) == pytest.approx((low[0], high[0]), abs=1e-12)
    t_low, t_high = result.t_bounds(simultaneous=False)
    assert (e.low, e.high) == pytest.approx((t_low[0], t_high[0]), abs=0.01)
    assert e.high < 0  # the swapped simulator makes this model fail more


def test_rank_agreement_against_scipy_and_a_brute_force_cluster_bootstrap():
    rng = np.random.default_rng(2)
    scenarios, models = 40, 6
    quality = np.linspace(0.3, 0.8, models)
    n_o = rng.integers(2, 5, (scenarios, models)).astype(float)
    n_w = rng.integers(2, 5, (scenarios, models)).astype(float)
    p_o = rng.binomial(n_o.astype(int), quality).astype(float)
    p_w = rng.binomial(n_w.astype(int), quality[::-1] * 0.3 + quality * 0.7).astype(float)
    base = np.arange(scenarios) // 2
    e = swap_rank_agreement(p_o, n_o, p_w, n_w, base, n_resamples=B, seed=5)
    expected = scipy_stats.kendalltau(p_o.sum(0) / n_o.sum(0), p_w.sum(0) / n_w.sum(0))
    assert e.value == pytest.approx(expected.statistic, abs=1e-12)
    hits = cluster_hits(scenarios // 2, B, seed=5)[:, base]  # each base scenario's two rows
    taus = [
        scipy_stats.kendalltau((h @ p_o) / (h @ n_o), (h @ p_w) / (h @ n_w)).statistic for h in hits
    ]
    low, high = _percentiles(taus)
    # The hull of that percentile interval and the Wilson interval of the concordance share
    # (tau + 1) / 2 on half the six ranked models.
    score_low, score_high = proportion_confint((e.value + 1) / 2 * 3, 3, method="wilson")
    assert e.low == pytest.approx(max(-1, min(low, 2 * score_low - 1)), abs=1e-12)
    assert e.high == pytest.approx(min(1, max(high, 2 * score_high - 1)), abs=1e-12)
    assert e.n_clusters == scenarios // 2


def test_flip_share():
    original = np.array([1, 0, 1, 1, np.nan, 0, 0, 1])
    swapped = np.array([1, 1, 0, 1, 1, 0, np.nan, 1])
    e = verdict_flip_share(original, swapped, clusters=[0, 0, 1, 1, 2, 2, 3, 3], n_resamples=B)
    assert e.value == pytest.approx(2 / 6)
    assert e.n == 6
    assert e.excluded[0].count == 2


def test_single_judgment_against_majority_matches_scipy():
    rng = np.random.default_rng(7)
    metrics = 25
    per_metric = 24
    metric = np.repeat([f"m{i:02d}" for i in range(metrics)], per_metric)
    base = np.repeat(np.arange(metrics * 3), per_metric // 3)  # three base scenarios each
    rate = np.repeat(rng.uniform(0.1, 0.9, metrics), per_metric)
    readings = (rng.random((metric.size, 3)) < rate[:, None]).astype(float)
    readings[3, 0] = np.nan  # single reading missing: left out of both rates
    e = single_vs_majority(readings, metric, base, n_resamples=B, seed=2)
    keep = np.isfinite(readings[:, 0])
    majority = (np.nansum(readings, axis=1) >= 2).astype(float)
    labels = np.unique(metric)
    single_rates = [readings[keep & (metric == m), 0].mean() for m in labels]
    majority_rates = [majority[keep & (metric == m)].mean() for m in labels]
    assert e.value == pytest.approx(
        scipy_stats.spearmanr(single_rates, majority_rates).statistic, abs=1e-12
    )
    assert e.excluded[0].count == 1
    assert e.n == keep.sum()
    assert e.n_clusters == metrics * 3
    # The interval: scipy's rho over the metrics drawn in each resample of base scenarios.
    rows = np.flatnonzero(keep)
    hits = cluster_hits(metrics * 3, B, seed=2)
    code = np.searchsorted(labels, metric)
    rhos = []
    for h in hits:
        weight = h[base[rows]]
        n = np.bincount(code[rows], weights=weight, minlength=metrics)
        s = np.bincount(code[rows], weights=weight * readings[rows, 0], minlength=metrics)
        mj = np.bincount(code[rows], weights=weight * majority[rows], minlength=metrics)
        drawn = n > 0
        rhos.append(scipy_stats.spearmanr(s[drawn] / n[drawn], mj[drawn] / n[drawn]).statistic)
    low, high = _percentiles(rhos)
    score_low, score_high = proportion_confint(
        (e.value + 1) / 2 * metrics / 3, metrics / 3, method="wilson"
    )
    hull_low = min(low, 2 * score_low - 1)
    hull_high = min(1, max(high, 2 * score_high - 1))
    # ... then hulled with its reflection about the value (the basic bootstrap interval).
    assert e.low == pytest.approx(max(-1, min(hull_low, 2 * e.value - hull_high)), abs=1e-9)
    assert e.high == pytest.approx(min(1, max(hull_high, 2 * e.value - hull_low)), abs=1e-9)
    assert 0 < e.low < e.value <= e.high <= 1
