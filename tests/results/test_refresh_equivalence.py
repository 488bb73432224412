"""The vectorised summary refresh against the row-by-row implementation it replaced
(tests/results/legacy_summaries.py), on a pipeline-produced run and on the synthetic dataset:
counts, rates and the metric rows' Wilson intervals identical; the pooled levels' intervals
equal to a metric-by-metric reference ending in statsmodels' Wilson interval. Its query count
does not grow with the number of metrics or models."""

import io
import math

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from statsmodels.stats.proportion import proportion_confint

import stats as statistics
from evaluations.models import Conversation, ConversationStatus, EvaluationRun
from results.models import PassRateSummary, SummaryLevel
from results.services import results_refresh
from results.services.cells import run_cells
from results.services.summaries import (
    POLARITIES,
    polarity_codes,
    scope_correlations,
)
from tests.evaluations.test_run_evaluation_command import offline_models  # noqa: F401
from tests.evaluations.test_runs import offline_release  # noqa: F401
from tests.results import legacy_summaries
from tests.stats.monte_carlo import assert_bounds_within_monte_carlo_error, expanded
from tests.stats.references import (
    effective_wilson_reference,
    metric_design_effects_reference,
)

pytestmark = pytest.mark.django_db

RESAMPLES = 500
KEY = (
    "level",
    "target_id",
    "polarity",
    "area_id",
    "subarea_id",
    "metric_version_id",
    "age_context",
)


def by_key(rows):
    return {tuple(getattr(r, f) for f in KEY): r for r in rows}


def monte_carlo_tolerance(low: float, high: float, n_resamples: int) -> float:
    """Five standard deviations of the difference between two independent percentile-bootstrap
    bounds of `n_resamples` resamples each, for a normal-shaped distribution of sd
    (high - low) / 3.92: the 2.5 % quantile's sampling sd is sqrt(q (1 - q) / B) / density,
    0.027 sd at B = 10,000 (so |delta| <= 0.01 for a rate's interval of width <= 0.2)."""
    q = 0.025
    sd = (high - low) / (2 * 1.959964)
    density = math.exp(-(1.959964**2) / 2) / math.sqrt(2 * math.pi)
    return 5 * math.sqrt(2) * math.sqrt(q * (1 - q) / n_resamples) / density * sd + 1e-12


def group_clusters(run: EvaluationRun) -> dict:
    """Each pooled group's clusters as {(version, base): [passed, n]}, counted cell by cell."""
    cells = run_cells(run)
    pol = polarity_codes(cells)
    out: dict = {}
    for i in range(cells.size):
        version, scope = int(cells.version[i]), ("teen", "adult")[cells.age[i]]
        keys = [
            (SummaryLevel.OVERALL, None, None),
            *((SummaryLevel.AREA, a, None) for a in cells.areas.get(version, [])),
            *((SummaryLevel.SUBAREA, None, s) for s in cells.subareas.get(version, [])),
        ]
        for level, area, subarea in keys:
            for age in (scope, "all"):
                key = (level, int(cells.target[i]), POLARITIES[pol[i]], area, subarea, None, age)
                cluster = out.setdefault(key, {}).setdefault((version, int(cells.base[i])), [0, 0])
                cluster[0] += int(cells.passed[i])
                cluster[1] += int(cells.n[i])
    return out


def reference_pooled_interval(clusters: dict, rho: float) -> tuple[float, float]:
    """The pooled levels' interval written out metric by metric, ending in statsmodels'
    Wilson interval at the effective size."""
    per_metric: dict = {}
    for (version, _base), (y, m) in clusters.items():
        sums = per_metric.setdefault(version, [0, 0, 0])
        sums[0], sums[1], sums[2] = sums[0] + y, sums[1] + m, sums[2] + m * m
    passed = sum(v[0] for v in per_metric.values())
    total = sum(v[1] for v in per_metric.values())
    p = passed / total
    variance = weighted_deff = 0.0
    for y, m, squares in per_metric.values():
        deff = 1 + (squares / m - 1) * rho
        shrunk = (y + p) / (m + 1)
        variance += m * shrunk * (1 - shrunk) * deff / total**2
        weighted_deff += m * deff / total
    size = p * (1 - p) / variance if 0 < p < 1 and variance > 0 else total / weighted_deff
    size = min(size, total)
    return proportion_confint(p * size, size, method="wilson")


def assert_same_summaries(run: EvaluationRun) -> None:
    """Counts, rates and failures identical to the row-by-row code; the metric rows' Wilson
    intervals identical; the pooled levels' as their reference."""
    legacy = by_key(
        legacy_summaries.summary_rows(run, run_cells(run), n_resamples=RESAMPLES, seed=0)
    )
    analysis = results_refresh(run=run, n_resamples=RESAMPLES)
    names = {t.pk: t.name for t in run.targets.all()}
    old_fails = legacy_summaries.failed_as_fail(
        run_cells(run), names, n_resamples=RESAMPLES, seed=0
    )
    new_fails = analysis.robustness["failed_as_fail"]
    assert len(new_fails) == len(old_fails)
    for new_row, old_row in zip(new_fails, old_fails, strict=True):
        # These failures are the target's (errors, timeouts): all charged, as before.
        assert new_row["n_platform_failed"] == 0
        assert {k: new_row[k] for k in old_row if k != "estimate"} == {
            k: v for k, v in old_row.items() if k != "estimate"
        }
        new_e, old_e = new_row["estimate"], old_row["estimate"]
        same = ("value", "n", "n_clusters", "excluded", "unit")
        assert {k: new_e[k] for k in same} == {k: old_e[k] for k in same}
        assert new_e["low"] < new_e["value"] < new_e["high"] or new_e["value"] in (0, 1)
        assert new_e["method"].startswith(statistics.STRATIFIED_WILSON)
    new = by_key(PassRateSummary.objects.filter(run=run))
    clusters = group_clusters(run)
    rho = {scope: r for scope, (r, _) in scope_correlations(run_cells(run)).items()}
    assert new.keys() == legacy.keys()
    assert {k[0] for k in new} == set(SummaryLevel.values)
    pooled = 0
    for key, row in new.items():
        old = legacy[key]
        assert (row.n_failed, row.failures) == (old.n_failed, old.failures)
        new_e, old_e = row.estimate.as_dict(), old.estimate.as_dict()
        if key[0] == SummaryLevel.METRIC:
            # Wilson on effective n (each metric's own correlation): no resampling, so no
            # tolerance; the bounds are checked in test_metric_intervals_are_wilson_on_effective_n.
            assert row.method == old.method
            bounds = ("low", "high", "sd")
            assert {k: v for k, v in new_e.items() if k not in bounds} == {
                k: v for k, v in old_e.items() if k not in bounds
            }, key
            continue
        assert row.method == statistics.STRATIFIED_WILSON
        same = ("value", "n", "n_clusters", "excluded", "unit", "reason")
        assert {k: new_e[k] for k in same} == {k: old_e[k] for k in same}, key
        if row.n_conversations >= 2:
            low, high = reference_pooled_interval(clusters[key], rho[key[-1]])
            assert (row.ci_low, row.ci_high) == pytest.approx((low, high), abs=1e-12), key
            assert row.ci_low < row.ci_high, key
            pooled += 1
    assert pooled > 0


def test_pipeline_run_summaries_match_the_row_by_row_refresh(offline_release, offline_models):  # noqa: F811
    call_command(
        "run_evaluation",
        "--release=1.0.0",
        "--targets=Careful,Terse",
        "--turns=2",
        "--judgments=3",
        "--yes",
        "--inline",
        stdout=io.StringIO(),
    )
    run = EvaluationRun.objects.get()
    assert run.conversations.filter(verdict_passed__isnull=False).count() == 24
    # Two conversations without a verdict, so the failure columns are compared too.
    failed = list(run.conversations.values_list("pk", flat=True)[:2])
    Conversation.objects.filter(pk__in=failed).update(
        status=ConversationStatus.FAILED, verdict_passed=None, error="request timed out"
    )
    assert_same_summaries(run)
    assert PassRateSummary.objects.filter(run=run, n_failed__gt=0).exists()


@pytest.fixture
def synthetic_run():
    call_command(
        "generate_synthetic_dataset",
        metrics=40,
        models=3,
        no_refresh=True,
        release_version="0.0.8",
        stdout=io.StringIO(),
    )
    return EvaluationRun.objects.get(release__version="0.0.8", is_official=True)


@pytest.mark.slow(reason="loads a synthetic release and refreshes it twice, batched and row by row")
def test_synthetic_summaries_match_the_row_by_row_refresh(synthetic_run):
    run = synthetic_run
    conversations = list(run.conversations.order_by("pk").values_list("pk", flat=True))
    Conversation.objects.filter(pk__in=conversations[::37]).update(
        status=ConversationStatus.FAILED, verdict_passed=None, error="server error"
    )
    assert_same_summaries(run)


@pytest.mark.slow(reason="refreshes a synthetic release")
def test_metric_intervals_are_wilson_on_effective_n(synthetic_run):
    """Checked against statsmodels' Wilson interval on n / deff and passed / deff."""
    run = synthetic_run
    results_refresh(run=run, n_resamples=RESAMPLES)
    cells = run_cells(run)
    rho = {scope: r for scope, (r, _) in scope_correlations(cells).items()}
    deff = metric_design_effects_reference(cells, rho)
    rows = list(PassRateSummary.objects.filter(run=run, level=SummaryLevel.METRIC))
    assert len(rows) == 40 * 3 * 3
    for row in rows:
        d = deff[(row.age_context, row.target_id, row.metric_version_id)]
        low, high = proportion_confint(
            row.n_passed / d, row.n_conversations / d, alpha=0.05, method="wilson"
        )
        assert row.ci_low == pytest.approx(low, abs=1e-12)
        assert row.ci_high == pytest.approx(high, abs=1e-12)


def test_intervals_of_many_compositions_equal_bootstrap_ci_with_the_shared_draws():
    """Compositions with the same number of clusters share one resampling; each interval is
    the engine's (bootstrap_ci) on its expanded values with those draws."""
    rng = np.random.default_rng(4)
    signatures = []
    for clusters in (1, 2, 3, 7, 7, 7, 40, 40, 300):
        sizes = rng.integers(1, 4, size=clusters)
        passed = rng.binomial(sizes, 0.6)
        signatures.append(legacy_summaries.signature_counter(zip(passed, sizes, strict=True)))
    low, high = statistics.clustered_mean_intervals(signatures, n_resamples=2_000, seed=3)
    assert np.isnan([low[0], high[0]]).all()  # one cluster: no interval
    cuts: dict[int, set[int]] = {}
    for signature in signatures:
        ends = np.cumsum([c for _, _, c in signature])
        cuts.setdefault(int(ends[-1]), set()).update(ends[:-1].tolist())
    for signature, lo, hi in zip(signatures[1:], low[1:], high[1:], strict=True):
        values, labels = expanded(signature)
        g = labels[-1] + 1
        edges = sorted(cuts[g])
        blocks = statistics.shared_block_hits(g, edges, n_resamples=2_000, seed=3)
        # Per-cluster hits: a block's count on its first cluster (a block is within one kind).
        hits = np.zeros((2_000, g))
        hits[:, [0, *edges]] = blocks
        shared = statistics.bootstrap_ci(values, labels, n_resamples=2_000, seed=3, hits=hits)
        assert (lo, hi) == pytest.approx(shared, abs=1e-12)
        # And within Monte Carlo error of the composition drawn on its own.
        old_dist = statistics.bootstrap_distribution(values, labels, 2_000, seed=11)
        assert_bounds_within_monte_carlo_error({"low": lo, "high": hi}, old_dist, signature)


def test_shared_block_hits_are_the_binned_cluster_bootstrap():
    """Counts per block: multinomial(g, block share); each row sums to g; the means and
    covariances of binned uniform draws with replacement."""
    # Few clusters a block (drawn as cluster indices) and many (drawn as block multinomials).
    for g, edges in ((12, [3, 4, 9]), (200, [50, 120])):
        blocks = statistics.shared_block_hits(g, edges, n_resamples=40_000, seed=1)
        assert (blocks.sum(axis=1) == g).all()
        p = np.diff([0, *edges, g]) / g
        assert blocks.mean(axis=0) == pytest.approx(g * p, rel=0.02)
        expected = g * (np.diag(p) - np.outer(p, p))
        np.testing.assert_allclose(np.cov(blocks.T), expected, atol=0.05 * g * p.max())
    with pytest.raises(ValueError, match="within"):
        statistics.shared_block_hits(12, [13], 10, 0)


def count_refresh_queries(metrics: int, models: int, version: str) -> tuple[int, int]:
    """Queries of the first refresh of a synthetic release, and of a second one (every figure
    cell stored, nothing changed)."""
    call_command(
        "generate_synthetic_dataset",
        metrics=metrics,
        models=models,
        no_refresh=True,
        release_version=version,
        stdout=io.StringIO(),
    )
    run = EvaluationRun.objects.get(release__version=version, is_official=True)
    with CaptureQueriesContext(connection) as queries:
        results_refresh(run=run, n_resamples=50)
    assert run.pass_rate_summaries.filter(level=SummaryLevel.METRIC).count() == metrics * models * 3
    with CaptureQueriesContext(connection) as again:
        results_refresh(run=run, n_resamples=50)
    return len(queries), len(again)


@pytest.mark.slow(reason="refreshes releases of two sizes to compare their queries")
def test_refresh_query_count_does_not_grow_with_metrics_or_models():
    # On PostgreSQL the summaries and figure cells go in by COPY, which Django's query log does
    # not see; it is one statement whatever the number of rows.
    small = count_refresh_queries(6, 2, "0.0.5")
    large = count_refresh_queries(30, 4, "0.0.6")
    assert large == small


def legacy_percentile_interval(distribution, confidence=0.95):
    """The nanquantile-only version it replaced."""
    tail = (1.0 - confidence) / 2.0
    with np.errstate(all="ignore"):
        finite = np.isfinite(distribution).any(axis=0)
        safe = np.where(np.isfinite(distribution), distribution, np.nan)
        if not np.all(finite):
            safe = np.where(finite, safe, 0.0)
        low, high = np.nanquantile(safe, [tail, 1.0 - tail], axis=0)
    return np.where(finite, low, np.nan), np.where(finite, high, np.nan)


def test_percentile_interval_matches_nanquantile_with_undefined_resamples():
    rng = np.random.default_rng(1)
    dist = rng.normal(size=(999, 5, 3))
    dist[rng.random(dist.shape) < 0.01] = np.nan
    dist[:, 1, :] = rng.normal(size=(999, 3))  # no undefined resample
    dist[3, 2, 0] = np.inf
    dist[:, 4, 2] = np.nan  # never defined
    low, high = statistics.percentile_interval(dist)
    old_low, old_high = legacy_percentile_interval(dist)
    np.testing.assert_array_equal(low, old_low)
    np.testing.assert_array_equal(high, old_high)
    one = statistics.percentile_interval(dist[:, 1, 1])
    assert one == (low[1, 1], high[1, 1])


@pytest.mark.slow(reason="refreshes every metric alone and together")
def test_per_metric_repeatability_equals_each_metric_on_its_own(synthetic_run):
    from evaluations.models import Judgment
    from results.services.reliability import _repeatability_figures, judge_repeatability
    from stats.bounds import cluster_correlation

    run = synthetic_run
    figures = judge_repeatability(run, n_resamples=300, per_metric_resamples=400)
    assert len(figures["per_metric"]) == 40
    rows = Judgment.objects.filter(conversation__run=run).values_list(
        "conversation_id",
        "conversation__scenario__metric_version_id",
        "conversation__scenario__base_index",
        "present",
    )
    by_conversation: dict[int, list] = {}
    for conversation, version, base, present in rows:
        by_conversation.setdefault(conversation, [version, base, 0])[2] += bool(present)
    # Each metric's correlation is shrunk towards the run's, from every conversation's
    # unanimity in its (metric version, base scenario).
    keys = sorted({(v[0], v[1]) for v in by_conversation.values()})
    unanimous = np.zeros(len(keys))
    sizes = np.zeros(len(keys))
    for version, base, present in by_conversation.values():
        unanimous[keys.index((version, base))] += present in (0, 3)
        sizes[keys.index((version, base))] += 1
    run_icc = cluster_correlation(unanimous, sizes)
    for metric in figures["per_metric"]:
        items = [v for v in by_conversation.values() if v[0] == metric["metric_version"]]
        # The metric alone, through the one-data-set two-stage bootstrap.
        alone = _repeatability_figures(
            np.array([v[2] for v in items]),
            3,
            np.array([v[1] for v in items]),
            400,
            0,
            two_stage=True,
            prior_icc=run_icc,
        )
        assert "two-stage" in alone["fleiss_kappa"]["method"]
        for figure in ("unanimity", "fleiss_kappa"):
            shared, own = metric[figure], alone[figure]
            assert {k: v for k, v in shared.items() if k not in ("low", "high")} == {
                k: v for k, v in own.items() if k not in ("low", "high")
            }
            # Same draws; the sums may be added in another order (float rounding only).
            for bound in ("low", "high"):
                assert (shared[bound] is None) == (own[bound] is None)
                if own[bound] is not None:
                    assert shared[bound] == pytest.approx(own[bound], abs=1e-12)
        assert {k: metric[k] for k in ("n_conversations", "n_clusters")} == {
            k: alone[k] for k in ("n_conversations", "n_clusters")
        }


def test_evidence_share_from_grouped_counts_equals_bootstrap_over_readings(synthetic_run):
    from evaluations.models import Judgment
    from results.services.evidence import evidence_verification

    run = synthetic_run
    judgments = Judgment.objects.filter(conversation__run=run)
    Judgment.objects.filter(pk__in=list(judgments.values_list("pk", flat=True)[::13])).update(
        has_unverified_quotes=True, reasked_for_evidence=True
    )
    figures = evidence_verification(run, n_resamples=700, seed=2)
    rows = list(
        judgments.values_list(
            "has_unverified_quotes",
            "conversation__scenario__metric_version_id",
            "conversation__scenario__base_index",
        )
    )
    flags = [float(flag) for flag, _, _ in rows]
    clusters = [f"{version}:{base}" for _, version, base in rows]
    low, high = effective_wilson_reference(flags, clusters)
    unverified = figures["unverified"]
    assert (unverified["low"], unverified["high"]) == pytest.approx((low, high), abs=1e-12)
    assert unverified["value"] == sum(flags) / len(flags)
    assert (unverified["n"], unverified["n_clusters"]) == (len(flags), len(set(clusters)))
    assert figures["reasked"] == len(judgments[::13])
    # With few clusters the engine draws cluster indices (not kinds): the same as bootstrap_ci.
    for sums, sizes in (([0, 1, 1, 2, 0, 3], [3, 3, 2, 4, 1, 3]), ([1, 0], [2, 2])):
        values = [1.0] * sum(sums) + [0.0] * (sum(sizes) - sum(sums))
        labels = [i for i, y in enumerate(sums) for _ in range(y)]
        labels += [
            i for i, (y, n) in enumerate(zip(sums, sizes, strict=True)) for _ in range(n - y)
        ]
        assert statistics.clustered_mean_ci(sums, sizes, 999, seed=5) == statistics.bootstrap_ci(
            values, labels, 999, seed=5
        )
