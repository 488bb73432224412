"""The run analysis computed faster gives the same figures: one judgment GROUP BY shared by
judge repeatability and evidence verification (incomplete and unfinished conversations kept
apart as before), robustness on a second thread, per-metric intervals and percentiles without
the general engine's overheads -- each against the code path or NumPy routine it replaces."""

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from django.core.management import call_command
from django.db.models import Count, Q

import stats as statistics
from evaluations.models import Conversation, ConversationStatus, EvaluationRun, Judgment
from results.services import refresh
from results.services.cells import run_cells
from results.services.evidence import evidence_verification
from results.services.failed_as_fail import failed_as_fail
from results.services.figure_cells import CellStore
from results.services.repeatability import (
    _cluster_codes,
    _per_metric_intervals,
    _repeatability_stat,
    _repeatability_stat_columns,
    fleiss_item_sums,
    judge_repeatability,
    judgment_counts,
)
from results.services.robustness import robustness
from stats.percentiles import _quantile_pair
from tests.conftest import ROOT
from tests.stats.references import effective_wilson_reference

pytestmark = pytest.mark.django_db


@pytest.fixture
def run():
    call_command(
        "generate_synthetic_dataset",
        metrics=12,
        models=2,
        no_refresh=True,
        # The robustness figures compared here are the run's own, without a swap study's.
        swap_scenarios=0,
        release_version="0.0.7",
        stdout=io.StringIO(),
    )
    run = EvaluationRun.objects.get(release__version="0.0.7", is_official=True)
    conversations = list(run.conversations.order_by("pk").values_list("pk", flat=True))
    # Incomplete (a judgment missing) and unfinished conversations, and unverified quotes.
    Judgment.objects.filter(conversation_id__in=conversations[::17], repetition=0).delete()
    Conversation.objects.filter(pk__in=conversations[5::11]).update(
        status=ConversationStatus.RUNNING
    )
    judgments = Judgment.objects.filter(conversation__run=run).order_by("pk")
    Judgment.objects.filter(pk__in=list(judgments.values_list("pk", flat=True)[::7])).update(
        has_unverified_quotes=True
    )
    Judgment.objects.filter(pk__in=list(judgments.values_list("pk", flat=True)[::5])).update(
        reasked_for_evidence=True
    )
    return run


def test_judge_repeatability_from_the_shared_counts_equals_its_own_query(run):
    raters = run.judgments_per_conversation
    per_conversation = list(
        Judgment.objects.filter(conversation__run=run)
        .values("conversation_id")
        .annotate(k=Count("id"), present=Count("id", filter=Q(present=True)))
    )
    full = [c for c in per_conversation if c["k"] == raters]
    figures = judge_repeatability(run, n_resamples=300, per_metric_resamples=200)
    assert figures["n_conversations"] == len(full)
    assert figures["n_excluded_incomplete"] == len(per_conversation) - len(full) > 0
    counts = judgment_counts(run)
    assert (
        judge_repeatability(run, n_resamples=300, per_metric_resamples=200, counts=counts)
        == figures
    )


def test_evidence_counts_only_completed_conversations(run):
    counts = judgment_counts(run)
    figures = evidence_verification(run, n_resamples=400, seed=3, counts=counts)
    assert figures == evidence_verification(run, n_resamples=400, seed=3)
    rows = list(
        Judgment.objects.filter(
            conversation__run=run, conversation__status=ConversationStatus.COMPLETED
        ).values_list(
            "has_unverified_quotes",
            "reasked_for_evidence",
            "conversation__scenario__metric_version_id",
            "conversation__scenario__base_index",
        )
    )
    assert len(rows) < Judgment.objects.filter(conversation__run=run).count()
    flags = [float(unverified) for unverified, _, _, _ in rows]
    clusters = [f"{version}:{base}" for _, _, version, base in rows]
    low, high = effective_wilson_reference(flags, clusters)
    unverified = figures["unverified"]
    assert (unverified["low"], unverified["high"]) == pytest.approx((low, high), abs=1e-12)
    assert unverified["value"] == sum(flags) / len(flags)
    assert (unverified["n"], unverified["n_clusters"]) == (len(flags), len(set(clusters)))
    assert figures["reasked"] == sum(reasked for _, reasked, _, _ in rows)


def test_analysis_figures_do_not_depend_on_the_thread(run):
    cells = run_cells(run)
    figures = refresh._analysis(
        run, cells, n_resamples=300, seed=1, store=CellStore(run, refresh.ANALYSIS)
    )
    names = dict(
        Conversation.objects.filter(run=run).values_list("target_id", "target__name").distinct()
    )
    keys = {v: k for v, k in cells_keys(cells)}
    serial = robustness(cells, names, keys, n_resamples=300, seed=1)
    serial["failed_as_fail"] = failed_as_fail(cells, names, n_resamples=300, seed=1)
    # Through JSON both: the refresh keeps its figures as their JSON reads back.
    assert json.dumps(figures["robustness"], sort_keys=True) == json.dumps(
        json.loads(json.dumps(serial)), sort_keys=True
    )
    judge = judge_repeatability(run, n_resamples=300, seed=1)
    assert figures["reliability"]["judge"] == judge


def cells_keys(cells):
    from metrics_registry.models import MetricVersion

    return MetricVersion.objects.filter(pk__in=set(cells.version.tolist())).values_list(
        "pk", "metric__key"
    )


def test_per_metric_intervals_equal_the_batched_two_stage_bootstrap():
    rng = np.random.default_rng(4)
    raters = 3
    present = rng.integers(0, raters + 1, size=400)
    present[:30] = raters  # a metric without variation: kappa undefined in every resample
    base = rng.integers(0, 3, size=400)
    base[31:150] = np.repeat([0, 1, 2], [40, 40, 39])
    groups = [
        np.arange(lo, hi) for lo, hi in ((0, 30), (30, 31), (31, 150), (150, 280), (280, 400))
    ]
    per_item = np.column_stack(
        [(present == 0) | (present == raters), fleiss_item_sums(np.c_[present, raters - present])]
    ).astype(np.float64)
    low, high = _per_metric_intervals(per_item, groups, base, n_resamples=500, seed=2)
    resampled = [i for i, g in enumerate(groups) if g.size >= 2]
    dists = statistics.two_stage_sum_distributions(
        [per_item[groups[i]] for i in resampled],
        [base[groups[i]] for i in resampled],
        _repeatability_stat,
        n_resamples=500,
        seed=2,
    )
    old_low, old_high = statistics.percentile_interval(np.stack(dists, axis=1))
    np.testing.assert_array_equal(low[resampled], old_low)
    np.testing.assert_array_equal(high[resampled], old_high)
    # A single item: no interval; no variation: unanimity's interval, no kappa's.
    assert np.isnan(np.r_[low[1], high[1], low[0, 1]]).all()
    assert not np.isnan(low[0, 0])


def test_repeatability_statistic_by_columns_is_fleiss_from_sums():
    rng = np.random.default_rng(5)
    sums = rng.integers(0, 6, size=(200, 5)).astype(np.float64)
    sums[:, 1] = rng.integers(0, 18, size=200) / 3.0
    sums[:40, 3] = 0.0  # one category only: kappa undefined
    sums[40:60, 4] = 0.0
    out = np.empty((200, 2, 1))
    _repeatability_stat_columns(sums.T[:, :, None].copy(), out)
    expected = _repeatability_stat(sums)
    np.testing.assert_array_equal(out[:, :, 0], expected)
    assert np.isnan(out[:60, 1, 0]).all()


@pytest.mark.parametrize("n", [2, 3, 40, 41, 399, 400, 2_000, 9_999, 10_000])
@pytest.mark.parametrize("tail", [0.025, 0.05, 0.005, 0.2])
def test_quantile_pair_is_numpy_quantile(n, tail):
    rng = np.random.default_rng(n)
    dist = rng.normal(size=(n, 3, 2))
    dist[:, 1] = np.round(dist[:, 1])  # ties
    expected = np.quantile(dist, [tail, 1.0 - tail], axis=0)
    np.testing.assert_array_equal(_quantile_pair(dist, tail), expected)
    confidence = 1.0 - 2 * tail
    inner = (1.0 - confidence) / 2.0  # as percentile_interval computes it
    low, high = np.quantile(dist[:, 0, 0], [inner, 1.0 - inner])
    assert statistics.percentile_interval(dist[:, 0, 0], confidence) == (low, high)


def test_cluster_codes_from_packed_keys_are_numpy_unique_rows():
    rng = np.random.default_rng(6)
    version = rng.integers(1, 900, size=5_000)
    base = rng.integers(0, 7, size=5_000)
    expected = np.unique(np.column_stack([version, base]), axis=0, return_inverse=True)[1]
    np.testing.assert_array_equal(_cluster_codes(version, base), expected.ravel())


@pytest.mark.parametrize("g", [2, 50, 383, 384, 1_380])
def test_cluster_hits_count_the_draws_of_each_resample(g):
    from stats.resampling import Draws, cluster_hits

    rows = 37
    hits = cluster_hits(g, rows, seed=g)
    assert (hits.sum(axis=1) == g).all()
    # The same draws, binned per block of clusters (the layout the summary intervals use)...
    edges = list(range(1, g, max(1, g // 10)))
    blocks = statistics.shared_block_hits(g, edges, n_resamples=rows, seed=g)
    np.testing.assert_array_equal(np.add.reduceat(hits, [0, *edges], axis=1), blocks)
    # ...and drawn in chunks of rows from one stream, as the chunked bootstraps draw them.
    draws, each = Draws(g), np.ones(g, dtype=np.int64)
    np.testing.assert_array_equal(np.vstack([draws.counts(each, 20), draws.counts(each, 17)]), hits)
    assert hits.dtype == np.float64


@pytest.mark.slow(reason="starts Django in a fresh interpreter")
def test_django_start_up_does_not_import_numba():
    """numba takes a few hundred milliseconds to import: only a bootstrap that runs pays it."""
    code = (
        "import sys, django; django.setup();"
        "from django.urls import get_resolver; get_resolver().url_patterns;"
        "import stats, results.services, results.tasks;"
        "assert 'numba' not in sys.modules, 'numba imported at start-up'"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "impactbench_site.settings.test"}
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True)  # noqa: S603
