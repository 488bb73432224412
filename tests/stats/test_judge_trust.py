"""Judge trust: expert agreement and kappa against scikit-learn, and the badge's thresholds."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from stats import judge_trust, judge_trust_by
from stats.few_clusters import intra_cluster_correlation
from stats.judge_trust import (
    CONTESTED,
    MIN_EXPERT_VERDICTS,
    NOT_CHECKED,
    VALIDATED,
    VALIDATED_AGREEMENT_LOW,
)
from stats.judge_trust_intervals import ICC_PRIOR_CLUSTERS, agreement_icc


def _ratings(rng, n, accuracy, expert_pass=0.6):
    expert = (rng.random(n) < expert_pass).astype(float)
    judge = np.where(rng.random(n) < accuracy, expert, 1 - expert)
    return judge, expert


def test_agreement_and_kappa_match_references():
    rng = np.random.default_rng(0)
    judge, expert = _ratings(rng, 120, 0.85)
    expert[[3, 9]] = np.nan
    t = judge_trust(judge, expert, clusters=np.arange(120) // 4, icc=0.1, n_resamples=500)
    keep = np.isfinite(expert)
    assert t.agreement.value == pytest.approx(np.mean(judge[keep] == expert[keep]))
    assert t.kappa.value == pytest.approx(cohen_kappa_score(judge[keep], expert[keep]))
    assert t.agreement.n == 118
    assert t.agreement.n_clusters == 30
    assert t.agreement.excluded[0].count == 2
    assert t.agreement.low < t.agreement.value < t.agreement.high


def test_badges():
    rng = np.random.default_rng(1)
    few = judge_trust(*_ratings(rng, MIN_EXPERT_VERDICTS - 1, 1.0), n_resamples=200)
    assert few.badge == NOT_CHECKED
    assert str(MIN_EXPERT_VERDICTS) in few.reason

    good = judge_trust(*_ratings(rng, 300, 0.92), n_resamples=500)
    assert good.badge == VALIDATED
    assert good.agreement.low >= VALIDATED_AGREEMENT_LOW

    poor = judge_trust(*_ratings(rng, 300, 0.62), n_resamples=500)
    assert poor.badge == CONTESTED
    assert "below" in poor.reason

    # Passing everything agrees with experts who mostly pass, yet knows nothing: kappa 0.
    expert = (rng.random(300) < 0.93).astype(float)
    lazy = judge_trust(np.ones(300), expert, n_resamples=500)
    assert lazy.agreement.low >= VALIDATED_AGREEMENT_LOW
    assert lazy.badge == CONTESTED
    assert "beyond chance" in lazy.reason

    # Promising but too uncertain: checked, not shown to reach the bar.
    borderline = judge_trust(*_ratings(rng, 40, 0.75), n_resamples=500)
    assert borderline.badge == CONTESTED


def test_trust_per_metric_and_model():
    rng = np.random.default_rng(2)
    judge_a, expert_a = _ratings(rng, 200, 0.95)
    judge_b, expert_b = _ratings(rng, 200, 0.55)
    groups = [("empathy", "model-x")] * 200 + [("sycophancy", "model-x")] * 200
    table = judge_trust_by(
        groups,
        np.concatenate([judge_a, judge_b]),
        np.concatenate([expert_a, expert_b]),
        n_resamples=300,
    )
    assert list(table) == [("empathy", "model-x"), ("sycophancy", "model-x")]
    assert table[("empathy", "model-x")].badge == VALIDATED
    assert table[("sycophancy", "model-x")].badge == CONTESTED
    assert table[("empathy", "model-x")].kappa.value == pytest.approx(
        cohen_kappa_score(judge_a, expert_a)
    )


def test_ratings_from_one_base_scenario_cannot_validate():
    """With nothing to estimate the correlation from, a base scenario counts as one verdict:
    60 agreeing ratings of one scenario are not 60 pieces of evidence."""
    rng = np.random.default_rng(3)
    one = judge_trust(*_ratings(rng, 60, 1.0), clusters=np.zeros(60), n_resamples=200)
    assert one.badge == CONTESTED
    assert one.agreement.low < VALIDATED_AGREEMENT_LOW < one.agreement.high


def test_interleaved_groups_get_exactly_their_own_rows_figures():
    rng = np.random.default_rng(5)
    n = 240
    groups = rng.choice(["a", "b", "c", "d"], size=n).tolist()
    judge, expert = _ratings(rng, n, 0.8)
    clusters = rng.integers(0, 30, size=n)
    table = judge_trust_by(groups, judge, expert, clusters, icc=0.15, n_resamples=200)
    assert list(table) == list(dict.fromkeys(groups))  # order of first appearance
    for label, trust in table.items():
        mine = np.array([g == label for g in groups])
        alone = judge_trust(judge[mine], expert[mine], clusters[mine], icc=0.15, n_resamples=200)
        assert trust == alone, label


@pytest.mark.parametrize("clustered", [True, False])
def test_many_cells_resampled_together_get_exactly_their_own_figures(clustered, monkeypatch):
    """A release's ~8,000 metric x model cells share one drawing per cluster count and are
    resampled in batches: every cell must still get exactly what ``judge_trust`` gives it
    alone, across batch boundaries and beside cells that take the general path (too few rows,
    one base scenario, one verdict throughout, missing verdicts)."""
    import sys

    module = sys.modules["stats.judge_trust"]
    monkeypatch.setattr(module, "_CELLS_PER_PRODUCT", 7)
    rng = np.random.default_rng(17)
    groups, judge, expert, clusters = [], [], [], []
    for cell in range(60):
        n = int(rng.integers(2, 14))
        j, e = _ratings(rng, n, 0.8)
        if cell % 11 == 0:
            j = np.ones(n)
            e = np.ones(n)
        if cell % 7 == 0:
            e[0] = np.nan
        # Few cluster counts, so that many cells share one drawing (and batches split them).
        base = rng.integers(0, 3 if cell % 13 else 1, size=n) + 1000 * cell
        groups += [f"cell {cell}"] * n
        judge.append(j)
        expert.append(e)
        clusters.append(base)
    order = rng.permutation(len(groups))  # interleaved, as a refresh reads them
    groups = [groups[i] for i in order]
    judge = np.concatenate(judge)[order]
    expert = np.concatenate(expert)[order]
    clusters = np.concatenate(clusters)[order] if clustered else None
    table = judge_trust_by(groups, judge, expert, clusters, icc=0.2, n_resamples=400, seed=3)
    assert list(table) == list(dict.fromkeys(groups))
    labels = np.array(groups)
    intervals = 0
    for label, trust in table.items():
        mine = labels == label
        alone = judge_trust(
            judge[mine],
            expert[mine],
            None if clusters is None else clusters[mine],
            icc=0.2,
            n_resamples=400,
            seed=3,
        )
        assert trust == alone, label
        intervals += trust.kappa.has_interval
    assert intervals >= 20  # most cells were resampled, not only the general path's


def test_agreement_interval_is_wilson_on_the_effective_n_as_statsmodels_gives_it():
    rng = np.random.default_rng(21)
    judge, expert = _ratings(rng, 90, 0.8)
    agreed = int((judge == expert).sum())
    plain = judge_trust(judge, expert, n_resamples=200)  # every rating its own cluster
    low, high = proportion_confint(agreed, 90, alpha=0.05, method="wilson")
    assert (plain.agreement.low, plain.agreement.high) == pytest.approx((low, high))
    # 30 base scenarios of 3 ratings: deff = 1 + (3 - 1) rho, rho the release's shrunk
    # towards the cell's own by (G - 1) / (G - 1 + prior).
    clusters = np.arange(90) // 3
    per = np.bincount(clusters, weights=(judge == expert).astype(float))
    own = intra_cluster_correlation(np.zeros(30), per, np.full(30, 3.0))
    weight = 29 / (29 + ICC_PRIOR_CLUSTERS)
    deff = 1 + 2 * (weight * own + (1 - weight) * 0.3)
    t = judge_trust(judge, expert, clusters, icc=0.3, n_resamples=200)
    low, high = proportion_confint(agreed / deff, 90 / deff, alpha=0.05, method="wilson")
    assert (t.agreement.low, t.agreement.high) == pytest.approx((low, high))
    assert t.agreement.value == pytest.approx(agreed / 90)


def test_kappa_point_is_sklearns_and_its_interval_holds_the_mapped_agreement_interval():
    rng = np.random.default_rng(22)
    judge, expert = _ratings(rng, 60, 0.85)
    clusters = np.arange(60) // 6
    t = judge_trust(judge, expert, clusters, icc=0.1, n_resamples=300)
    assert t.kappa.value == pytest.approx(cohen_kappa_score(judge, expert))
    pe = np.mean(judge) * np.mean(expert) + np.mean(1 - judge) * np.mean(1 - expert)
    assert t.kappa.low <= (t.agreement.low - pe) / (1 - pe) + 1e-12
    assert t.kappa.high >= (t.agreement.high - pe) / (1 - pe) - 1e-12


@pytest.mark.parametrize("n", [2, 3, 6, 12, 40])
@pytest.mark.parametrize("scenarios", [1, 2, 3, None])
@pytest.mark.parametrize("agreeing", ["none", "all", "all but one"])
def test_intervals_have_positive_width_inside_their_range_at_every_n(n, scenarios, agreeing):
    """The cells that published "1.000 [1.000, 1.000]": few ratings, 1-3 base scenarios,
    judge and experts agreeing on every one (or on none)."""
    expert = np.arange(n) % 2.0
    judge = {"none": 1 - expert, "all": expert.copy()}.get(agreeing)
    if judge is None:
        judge = expert.copy()
        judge[0] = 1 - judge[0]
    clusters = None if scenarios is None else np.arange(n) % scenarios
    for icc in (None, 0.0, 0.4, 1.0):
        t = judge_trust(judge, expert, clusters, icc=icc, n_resamples=200)
        a, k = t.agreement, t.kappa
        assert 0.0 <= a.low <= a.value <= a.high <= 1.0
        assert a.high - a.low > 0.05
        assert k.defined
        assert -1.0 <= k.low <= k.value <= k.high <= 1.0
        assert k.high - k.low > 0.05


def test_kappa_without_variation_stays_undefined():
    for verdict in (0.0, 1.0):
        t = judge_trust(np.full(40, verdict), np.full(40, verdict), np.arange(40) // 2)
        assert t.agreement.value == 1.0
        assert t.agreement.low < 1.0
        assert not t.kappa.defined
        assert t.kappa.reason == "undefined (no variation)"
        assert t.badge == CONTESTED


def test_the_release_correlation_is_pooled_over_cells():
    """Cells whose scenarios differ sharply (all agree in one, none in another) have a high
    intra-cluster correlation; pooled over many cells it is the ANOVA estimate."""
    rng = np.random.default_rng(23)
    cells = np.repeat(np.arange(50), 6)
    scenario = np.repeat(np.arange(150), 2)
    agree_scenario = rng.random(150) < 0.8
    expert = rng.integers(0, 2, 300).astype(float)
    judge = np.where(agree_scenario[scenario], expert, 1 - expert)
    rho = agreement_icc(cells, judge, expert, scenario)
    assert rho == pytest.approx(1.0)
    judge = np.where(rng.random(300) < 0.8, expert, 1 - expert)
    assert agreement_icc(cells, judge, expert, scenario) < 0.3
