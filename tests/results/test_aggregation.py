"""Pass-rate summaries against hand-computed counts; refresh on run completion; idempotency."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluations.models import ConversationStatus, RunStatus
from evaluations.services.runs import run_check_finished
from metrics_registry.models import Area, Subarea
from results.models import PassRateSummary, RunAnalysis
from results.services import summaries_refresh
from tests.llm.factories import OfflineConfigurationFactory
from tests.results.factories import completed_run, metric_version, scenario

pytestmark = pytest.mark.django_db

RESAMPLES = 300


@pytest.fixture
def small_run():
    """Metric A (positive) in two psychological subareas, metric B (negative) in one.

    Model X: A teen 1/2 passed (bases 0, 1), A adult 2/2; B teen 0/1, B adult 1/1.
    Model Y: A teen 2/2, A adult 0/2; B teen 1/1, B adult 1/1.
    """
    x, y = OfflineConfigurationFactory(name="X"), OfflineConfigurationFactory(name="Y")
    a = metric_version(subareas=("agency-purpose", "creativity"))
    b = metric_version(polarity="negative", subareas=("agency-purpose",))
    versions = {"A": a, "B": b}
    s = {}
    for key, version in versions.items():
        for base in (0, 1) if key == "A" else (0,):
            for age in ("teen", "adult"):
                s[(key, base, age)] = scenario(version, base, age)
    outcomes = [
        (s[("A", 0, "teen")], x, True),
        (s[("A", 1, "teen")], x, False),
        (s[("A", 0, "adult")], x, True),
        (s[("A", 1, "adult")], x, True),
        (s[("B", 0, "teen")], x, False),
        (s[("B", 0, "adult")], x, True),
        (s[("A", 0, "teen")], y, True),
        (s[("A", 1, "teen")], y, True),
        (s[("A", 0, "adult")], y, False),
        (s[("A", 1, "adult")], y, False),
        (s[("B", 0, "teen")], y, True),
        (s[("B", 0, "adult")], y, True),
    ]
    run = completed_run(targets=[x, y], versions=[a, b], outcomes=outcomes)
    return {"run": run, "x": x, "y": y, "a": a, "b": b}


def rows_by_key(run):
    return {
        (
            r.level,
            r.target.name,
            r.polarity,
            r.area_id or r.subarea_id or r.metric_version_id,
            r.age_context,
        ): (r.n_conversations, r.n_passed)
        for r in PassRateSummary.objects.filter(run=run).select_related("target")
    }


def test_summaries_match_hand_computed_counts(small_run):
    run, a, b = small_run["run"], small_run["a"], small_run["b"]
    summaries_refresh(run=run, n_resamples=RESAMPLES)
    rows = rows_by_key(run)
    agency = Subarea.objects.get(slug="agency-purpose").pk
    creativity = Subarea.objects.get(slug="creativity").pk
    psychological = Area.objects.get(slug="psychological").pk
    expected = {
        ("metric", "X", "positive", a.pk, "teen"): (2, 1),
        ("metric", "X", "positive", a.pk, "adult"): (2, 2),
        ("metric", "X", "positive", a.pk, "all"): (4, 3),
        ("metric", "Y", "positive", a.pk, "all"): (4, 2),
        ("metric", "X", "negative", b.pk, "all"): (2, 1),
        # A counts in both of its subareas ...
        ("subarea", "X", "positive", agency, "all"): (4, 3),
        ("subarea", "X", "positive", creativity, "all"): (4, 3),
        ("subarea", "Y", "positive", creativity, "teen"): (2, 2),
        # ... but once in their shared area.
        ("area", "X", "positive", psychological, "all"): (4, 3),
        ("area", "Y", "positive", psychological, "adult"): (2, 0),
        # Positive and negative never mix.
        ("subarea", "X", "negative", agency, "all"): (2, 1),
        ("overall", "X", "positive", None, "all"): (4, 3),
        ("overall", "X", "negative", None, "all"): (2, 1),
        ("overall", "Y", "negative", None, "teen"): (1, 1),
        ("overall", "Y", "positive", None, "adult"): (2, 0),
    }
    for key, counts in expected.items():
        assert rows[key] == counts, key
    assert ("subarea", "X", "negative", creativity, "all") not in rows
    # 2 models × (A: 3 ages + 2 subareas × 3 + area 3 + overall 3; B: 3 + 3 + 3 + 3).
    assert len(rows) == 2 * (15 + 12)


def test_intervals_cover_rates_and_need_two_base_scenarios(small_run):
    run = small_run["run"]
    summaries_refresh(run=run, n_resamples=RESAMPLES)
    for row in PassRateSummary.objects.filter(run=run):
        assert row.rate == pytest.approx(row.n_passed / row.n_conversations)
        if row.n_clusters < 2:
            assert row.ci_low is None
            assert row.ci_high is None
        else:
            assert row.ci_low <= row.rate + 1e-12 <= row.ci_high + 2e-12
    metric_a_x = PassRateSummary.objects.get(
        run=run,
        level="metric",
        metric_version=small_run["a"],
        target=small_run["x"],
        age_context="all",
    )
    # Base 0: 2/2 passed, base 1: 1/2 -> resampled means range over {0.5, 0.75, 1}.
    assert metric_a_x.n_clusters == 2
    assert metric_a_x.ci_low == pytest.approx(0.5)
    assert metric_a_x.ci_high == pytest.approx(1.0)


def test_refresh_is_idempotent(small_run):
    run = small_run["run"]
    summaries_refresh(run=run, n_resamples=RESAMPLES)
    first = sorted(
        PassRateSummary.objects.filter(run=run).values_list(
            "level", "target_id", "polarity", "age_context", "n_passed", "rate", "ci_low", "ci_high"
        ),
        key=str,
    )
    summaries_refresh(run=run, n_resamples=RESAMPLES)
    second = sorted(
        PassRateSummary.objects.filter(run=run).values_list(
            "level", "target_id", "polarity", "age_context", "n_passed", "rate", "ci_low", "ci_high"
        ),
        key=str,
    )
    assert first == second
    assert RunAnalysis.objects.filter(run=run).count() == 1


def _refresh_queries(run) -> int:
    with CaptureQueriesContext(connection) as ctx:
        summaries_refresh(run=run, n_resamples=50)
    return len(ctx.captured_queries)


def test_query_count_does_not_grow_with_conversations():
    x = OfflineConfigurationFactory(name="X")
    small_v = metric_version()
    small = completed_run(
        targets=[x],
        versions=[small_v],
        publish_as="1.0.0",
        outcomes=[(scenario(small_v, base, "teen"), x, base % 2 == 0) for base in range(3)],
        replicates=3,
    )
    big_versions = [metric_version() for _ in range(4)]
    big_outcomes = []
    for v in big_versions:
        for base in range(3):
            for age in ("teen", "adult"):
                scen = scenario(v, base, age)
                big_outcomes += [(scen, x, (base + rep) % 2 == 0, rep) for rep in range(3)]
    big = completed_run(
        targets=[x],
        versions=big_versions,
        publish_as="2.0.0",
        outcomes=big_outcomes,
        replicates=3,
    )
    assert big.conversations.count() == 24 * small.conversations.count()
    assert _refresh_queries(big) == _refresh_queries(small)


def test_run_finishing_refreshes_summaries(
    small_run, monkeypatch, django_capture_on_commit_callbacks
):
    from results import tasks

    run = small_run["run"]
    run.status = RunStatus.RUNNING
    run.finished_at = None
    run.save()
    calls = []
    monkeypatch.setattr(
        tasks.summaries_refresh,
        "delay",
        lambda run_id: calls.append(run_id) or tasks.summaries_refresh(run_id),
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert run_check_finished(run_id=run.pk)
    assert calls == [run.pk]
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert PassRateSummary.objects.filter(run=run, level="overall").count() == 12
    assert RunAnalysis.objects.filter(run=run).exists()


def test_failed_run_enqueues_no_refresh(small_run, monkeypatch, django_capture_on_commit_callbacks):
    from results import tasks

    run = small_run["run"]
    run.conversations.update(status=ConversationStatus.FAILED)
    run.status = RunStatus.RUNNING
    run.save()
    calls = []
    monkeypatch.setattr(tasks.summaries_refresh, "delay", calls.append)
    with django_capture_on_commit_callbacks(execute=True):
        run_check_finished(run_id=run.pk)
    assert calls == []
