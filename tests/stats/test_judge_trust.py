"""Judge trust: expert agreement and kappa against scikit-learn, and the badge's thresholds."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from stats import judge_trust, judge_trust_by
from stats.judge_trust import (
    CONTESTED,
    MIN_EXPERT_VERDICTS,
    NOT_CHECKED,
    VALIDATED,
    VALIDATED_AGREEMENT_LOW,
)


def _ratings(rng, n, accuracy, expert_pass=0.6):
    expert = (rng.random(n) < expert_pass).astype(float)
    judge = np.where(rng.random(n) < accuracy, expert, 1 - expert)
    return judge, expert


def test_agreement_and_kappa_match_references():
    rng = np.random.default_rng(0)
    judge, expert = _ratings(rng, 120, 0.85)
    expert[[3, 9]] = np.nan
    t = judge_trust(judge, expert, clusters=np.arange(120) // 4, n_resamples=500)
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
    rng = np.random.default_rng(3)
    one = judge_trust(*_ratings(rng, 60, 1.0), clusters=np.zeros(60), n_resamples=200)
    assert one.badge == CONTESTED
    assert "one base scenario" in one.reason


def test_interleaved_groups_get_exactly_their_own_rows_figures():
    rng = np.random.default_rng(5)
    n = 240
    groups = rng.choice(["a", "b", "c", "d"], size=n).tolist()
    judge, expert = _ratings(rng, n, 0.8)
    clusters = rng.integers(0, 30, size=n)
    table = judge_trust_by(groups, judge, expert, clusters, n_resamples=200)
    assert list(table) == list(dict.fromkeys(groups))  # order of first appearance
    for label, trust in table.items():
        mine = np.array([g == label for g in groups])
        alone = judge_trust(judge[mine], expert[mine], clusters[mine], n_resamples=200)
        assert trust == alone, label


@pytest.mark.parametrize(
    "case",
    ["mixed", "judge passes everything", "both constant", "few rows", "one cluster", "missing"],
)
def test_one_drawing_gives_each_figure_exactly_as_its_own_bootstrap(case):
    """Agreement and kappa share one drawing of the clusters (a refresh computes them for
    every metric x model cell); each must equal what its own estimator gives, exclusions and
    undefined cases included."""
    from stats import cohen_estimate, proportion_estimate
    from stats.estimates import Exclusion

    rng = np.random.default_rng(11)
    n = 4 if case == "few rows" else 90
    judge, expert = _ratings(rng, n, 0.8)
    clusters = np.zeros(n) if case == "one cluster" else rng.integers(0, 25, size=n)
    if case == "judge passes everything":
        judge = np.ones(n)
    if case == "both constant":
        judge, expert = np.ones(n), np.ones(n)
    if case == "missing":
        judge[[0, 5, 7]] = np.nan
    both = np.isfinite(judge) & np.isfinite(expert)
    excluded = (Exclusion("judge or expert verdict missing", int((~both).sum())),)
    options = {"n_resamples": 300, "seed": 4, "over": "base scenarios"}
    own_agreement = proportion_estimate(
        (judge[both] == expert[both]).astype(float), clusters[both], excluded=excluded, **options
    )
    own_kappa = cohen_estimate(
        judge[both].tolist(), expert[both].tolist(), clusters[both], **options
    )
    own_kappa = own_kappa.with_exclusions(excluded) if own_kappa.defined else own_kappa
    trust = judge_trust(judge, expert, clusters, n_resamples=300, seed=4)
    assert trust.agreement == own_agreement
    assert trust.kappa == own_kappa


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
    table = judge_trust_by(groups, judge, expert, clusters, n_resamples=400, seed=3)
    assert list(table) == list(dict.fromkeys(groups))
    labels = np.array(groups)
    intervals = 0
    for label, trust in table.items():
        mine = labels == label
        alone = judge_trust(
            judge[mine],
            expert[mine],
            None if clusters is None else clusters[mine],
            n_resamples=400,
            seed=3,
        )
        assert trust == alone, label
        intervals += trust.kappa.has_interval
    assert intervals >= 20  # most cells were resampled, not only the general path's


def test_a_batched_kappa_without_a_finite_value_reads_as_sums_estimates_gives_it():
    """Two verdict labels always give kappa a value, but should a cell's table ever not, the
    batched path says so as the general one would, instead of publishing nan."""
    import sys

    from stats import cohen_estimate
    from stats.bootstrap import cluster_hits

    module = sys.modules["stats.judge_trust"]
    cell = module._Cell(
        per_cluster=np.array([[1.0, 1.0, 0, 0, 0, 0], [1.0, 1.0, 0, 0, 0, 0]]),
        g=2,
        n=2,
        k=2,
        agreement=1.0,
        confusion=np.zeros(4),
        excluded=(),
        clusters=[0, 1],
    )
    (trust,) = module._resampled([cell], cluster_hits(2, 50, 0), 0.95)
    assert not trust.kappa.defined
    assert trust.kappa.reason == "undefined (no variation)"
    assert (trust.kappa.n, trust.kappa.n_clusters) == (2, 2)
    general = cohen_estimate([1.0, 1.0], [1.0, 1.0], [0, 1], n_resamples=50)
    assert not general.defined
    assert general.reason == trust.kappa.reason
