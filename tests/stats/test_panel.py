"""A panel of judges: verdicts with ties kept, Krippendorff's alpha against the krippendorff
package (value and cluster-bootstrap interval), per-judge rates against the panel."""

import krippendorff
import numpy as np
import pytest

from stats import (
    judge_pass_rates,
    krippendorff_estimate,
    majority_vote,
    panel_agreement,
    panel_verdicts,
)
from stats.figures import sums_estimate
from stats.krippendorff import (
    krippendorff_from_coincidence,
    krippendorff_unit_coincidences,
    krippendorff_unit_counts,
)
from stats.resampling import cluster_hits
from tests.stats.test_statistics import KRIPPENDORFF_2011, KRIPPENDORFF_2011_PUBLISHED

NAN = np.nan


def test_ties_are_reported_never_broken():
    readings = np.array(
        [
            # judge 0 reps, judge 1 reps, judge 2 reps
            [[1, 1, 0], [1, 1, 1], [0, 0, 0]],  # judges 1, 1, 0 -> pass
            [[1, 0, NAN], [0, 0, 0], [1, 1, 1]],  # judge 0 tied -> judges 0, 1 split -> tie
            [[0, 0, 1], [1, 1, 0], [NAN, NAN, NAN]],  # judges 0, 1 split, judge 2 silent -> tie
            [[0, 0, 0], [0, 1, 0], [1, 1, 1]],  # 0, 0, 1 -> fail
        ],
        dtype=float,
    )
    p = panel_verdicts(readings)
    np.testing.assert_array_equal(p.tie, [False, True, True, False])
    np.testing.assert_array_equal(p.verdict[[0, 3]], [1.0, 0.0])
    assert np.isnan(p.verdict[[1, 2]]).all()
    np.testing.assert_array_equal(p.judge_tie[1], [True, False, False])
    assert np.isnan(p.judge_verdict[1, 0])
    assert np.isnan(p.judge_verdict[2, 2])
    assert not p.judge_tie[2, 2]  # no reading is not a tie
    # Where nobody ties, the panel verdict is the majority vote of the judges' verdicts.
    decided = ~p.tie
    np.testing.assert_array_equal(majority_vote(p.judge_verdict[decided]), p.verdict[decided])


def test_ordinal_mode_per_judge():
    readings = np.array([[[3, 3, 4], [4, 4, 4], [2, 3, 3]], [[1, 2, 3], [2, 2, 5], [2, 1, 2]]])
    p = panel_verdicts(readings)
    np.testing.assert_array_equal(p.judge_verdict[0], [3, 4, 3])
    assert p.verdict[0] == 3
    assert p.judge_tie[1, 0]
    assert p.verdict[1] == 2


def test_alpha_matches_krippendorff_on_published_data():
    # Krippendorff (2011) example C as four judges' single readings of 12 conversations.
    readings = KRIPPENDORFF_2011.T[:, :, None]
    figures = panel_agreement(readings, pass_threshold=3)
    assert figures["ordinal"].value == pytest.approx(
        KRIPPENDORFF_2011_PUBLISHED["ordinal"], abs=5e-4
    )
    assert figures["ordinal"].value == pytest.approx(
        krippendorff.alpha(reliability_data=KRIPPENDORFF_2011, level_of_measurement="ordinal"),
        abs=1e-12,
    )
    binary = np.where(np.isnan(KRIPPENDORFF_2011), np.nan, KRIPPENDORFF_2011 >= 3)
    assert figures["binary"].value == pytest.approx(
        krippendorff.alpha(reliability_data=binary, level_of_measurement="nominal"), abs=1e-12
    )
    assert figures["binary"].excluded[0].count == 1  # the unit with one rating


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_cluster_bootstrap_interval_is_the_packages_alpha_over_resampled_scenarios(level):
    rng = np.random.default_rng(4)
    g, per = 30, 4
    truth = rng.integers(1, 6, g * per)
    data = np.where(rng.random((3, g * per)) < 0.7, truth, rng.integers(1, 6, (3, g * per)))
    data = data.astype(float)
    data[rng.random(data.shape) < 0.1] = np.nan
    scenario = np.repeat(rng.permutation(g), per)  # scenario labels not in unit order
    b = 300
    e = krippendorff_estimate(data, level, scenario, n_resamples=b, seed=7)
    hits = cluster_hits(g, b, seed=7).astype(int)  # columns: scenarios in sorted label order
    alphas = []
    for row in hits:
        units = np.concatenate(
            [np.tile(np.flatnonzero(scenario == s), k) for s, k in enumerate(row)]
        )
        alphas.append(
            krippendorff.alpha(reliability_data=data[:, units], level_of_measurement=level)
        )
    low, high = np.quantile(alphas, [0.025, 0.975])
    assert e.value == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement=level), abs=1e-12
    )
    # The engine's percentile interval of alpha is the package's alpha over the same draws ...
    counts, values = krippendorff_unit_counts(data, level)
    pairable = counts.sum(axis=1) >= 2
    bootstrap = sums_estimate(
        krippendorff_unit_coincidences(counts[pairable]),
        lambda s: krippendorff_from_coincidence(s, values, level),
        clusters=scenario[pairable],
        n_resamples=b,
        seed=7,
    )
    assert bootstrap.low == pytest.approx(low, abs=1e-9)
    assert bootstrap.high == pytest.approx(high, abs=1e-9)
    # ... and the published interval, its hull with the score interval of the disagreement,
    # holds it.
    assert e.low <= low + 1e-12
    assert e.high >= high - 1e-12
    assert e.n_clusters == g


def test_a_harsh_judge_shows_against_the_panel():
    rng = np.random.default_rng(2)
    n, reps = 600, 3
    scenario = np.arange(n) // 6
    target = np.where(np.arange(n) % 2 == 0, "model-a", "model-b")
    truth = (rng.random(n) < 0.6).astype(float)
    readings = np.empty((n, 3, reps))
    for j, harsh in enumerate([0.0, 0.0, 0.3]):
        noise = rng.random((n, reps)) < 0.1
        verdict = np.where(noise, 1 - truth[:, None], truth[:, None])
        readings[:, j] = np.where(rng.random((n, reps)) < harsh, 0.0, verdict)
    rates = judge_pass_rates(
        readings, target, scenario, judges=["kind", "fair", "harsh"], n_resamples=500
    )
    assert {(r.judge, r.target) for r in rates} == {
        (j, t) for j in ("kind", "fair", "harsh") for t in ("model-a", "model-b")
    }
    panel = panel_verdicts(readings)
    for r in rates:
        j = ["kind", "fair", "harsh"].index(r.judge)
        mine = target == r.target
        own = panel.judge_verdict[mine, j]
        assert r.pass_rate.value == pytest.approx(np.nanmean(own))
        both = np.isfinite(own) & np.isfinite(panel.verdict[mine])
        assert r.minus_panel.value == pytest.approx(np.mean(own[both] - panel.verdict[mine][both]))
        assert r.minus_panel.n_clusters == len(np.unique(scenario[mine]))
        if r.judge == "harsh":
            assert r.minus_panel.high < 0
        else:
            assert r.minus_panel.low <= 0.02


def test_ordinal_verdicts_need_a_threshold_for_pass_rates():
    readings = np.array([[[3, 4, 4], [2, 2, 2]], [[5, 5, 5], [1, 1, 4]]], dtype=float)
    with pytest.raises(ValueError, match="pass_threshold"):
        judge_pass_rates(readings, ["a", "a"])
    rates = judge_pass_rates(readings, ["a", "a"], pass_threshold=3)
    assert rates[0].pass_rate.value == 1.0
    assert rates[1].pass_rate.value == 0.0
