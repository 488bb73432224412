"""The run's cells (`run_cells`) against the joined GROUP BY they replaced, on a run with both
ages, replicates, a regenerated scenario, scenarios of another run in the id range and every
kind of failure; and the summary rows' keys, which carry no database constraint."""

import io

import numpy as np
import pytest
from django.core.management import call_command
from django.db.models import Count, Q

from evaluations.models import (
    Conversation,
    ConversationStatus,
    EvaluationRun,
    ScenarioStatus,
)
from metrics_registry.models import Area, MetricVersion, Subarea
from results import selectors
from results.models import PassRateSummary, SummaryLevel
from results.services import summaries_refresh
from results.services.cells import (
    RunCells,
    failed_conversations,
    judged_conversations,
    run_cells,
)
from tests.llm.factories import OfflineConfigurationFactory
from tests.metrics_registry.factories import release_with
from tests.results.factories import completed_run, metric_version, scenario

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def joined_cells(run: EvaluationRun) -> RunCells:
    """The cells as the joined query counted them: one row per (target, version, base) with
    teen and adult counts side by side, then the failed conversations by variant and reason,
    then the versions' metadata."""
    rows = list(
        judged_conversations(run)
        .values_list("target_id", "scenario__metric_version_id", "scenario__base_index")
        .annotate(
            teen_n=Count("id", filter=Q(scenario__age_context="teen")),
            teen_passed=Count("id", filter=Q(scenario__age_context="teen", verdict_passed=True)),
            adult_n=Count("id", filter=Q(scenario__age_context="adult")),
            adult_passed=Count("id", filter=Q(scenario__age_context="adult", verdict_passed=True)),
        )
        .order_by("target_id", "scenario__metric_version_id", "scenario__base_index")
    )
    arr = np.array(rows, dtype=np.int64).reshape(-1, 7)
    target = np.concatenate([arr[:, 0], arr[:, 0]])
    version = np.concatenate([arr[:, 1], arr[:, 1]])
    base = np.concatenate([arr[:, 2], arr[:, 2]])
    age = np.concatenate([np.zeros(len(arr), np.int64), np.ones(len(arr), np.int64)])
    n = np.concatenate([arr[:, 3], arr[:, 5]]).astype(np.float64)
    passed = np.concatenate([arr[:, 4], arr[:, 6]]).astype(np.float64)
    keep = n > 0
    cells = RunCells(target[keep], version[keep], base[keep], age[keep], n[keep], passed[keep])
    cells.failed = list(
        failed_conversations(run)
        .values_list(
            "target_id",
            "scenario__metric_version_id",
            "scenario__base_index",
            "scenario__age_context",
            "failure",
        )
        .annotate(count=Count("id"))
        .order_by(
            "target_id",
            "scenario__metric_version_id",
            "scenario__base_index",
            "scenario__age_context",
            "failure",
        )
    )
    version_ids = sorted(set(cells.version.tolist()) | {row[1] for row in cells.failed})
    for pk, polarity, slug, weight in MetricVersion.objects.filter(pk__in=version_ids).values_list(
        "pk", "polarity", "metric__benchmark__slug", "metric__source_weight"
    ):
        cells.polarity[pk] = polarity
        cells.source[pk] = slug or "expert submissions"
        if weight is not None:
            cells.source_weight[pk] = float(weight)
    through = MetricVersion.subareas.through.objects.filter(metricversion_id__in=version_ids)
    for pk, subarea_id, area_id in through.values_list(
        "metricversion_id", "subarea_id", "subarea__area_id"
    ).order_by("metricversion_id", "subarea_id"):
        cells.subareas.setdefault(pk, []).append(subarea_id)
        if area_id not in cells.areas.setdefault(pk, []):
            cells.areas[pk].append(area_id)
    return cells


def assert_same_cells(new: RunCells, old: RunCells) -> None:
    for name in ("target", "version", "base", "age", "n", "passed"):
        a, b = getattr(new, name), getattr(old, name)
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    for name in ("polarity", "source", "source_weight", "subareas", "areas", "failed"):
        assert getattr(new, name) == getattr(old, name), name
    # Same order too: the metadata dictionaries are read in insertion order.
    assert list(new.polarity) == list(old.polarity)


@pytest.fixture
def mixed_run():
    """Two models, three metrics (one in two subareas), both ages, two replicates, a regenerated
    scenario whose retired predecessor still has conversations, another run's scenarios in
    between, and failures of every kind."""
    x, y = OfflineConfigurationFactory(name="X"), OfflineConfigurationFactory(name="Y")
    a = metric_version(subareas=("agency-purpose", "creativity"))
    b = metric_version(polarity="negative", subareas=("agency-purpose",))
    scenarios = {}
    for version in (a, b):
        for base in (0, 1, 2):
            for age in ("teen", "adult"):
                scenarios[(version.pk, base, age)] = scenario(version, base, age)
        # Another metric's scenarios between this run's: the id range holds them too.
        scenario(metric_version(), 0, "teen")
    retired = scenarios[(a.pk, 1, "adult")]
    retired.status = ScenarioStatus.RETIRED
    retired.save()
    regenerated = scenario(a, 1, "adult")
    outcomes = []
    for index, scen in enumerate([*scenarios.values(), regenerated]):
        for target in (x, y):
            for replicate in (0, 1):
                outcomes.append((scen, target, (index + target.pk + replicate) % 3 != 0, replicate))
    run = completed_run(targets=[x, y], versions=[a, b], outcomes=outcomes, replicates=2)
    failures = [
        (scenarios[(a.pk, 0, "teen")], x, ConversationStatus.FAILED, "Target: read timed out"),
        (scenarios[(a.pk, 0, "teen")], x, ConversationStatus.FAILED, "answered 500"),
        (scenarios[(a.pk, 2, "adult")], y, ConversationStatus.FAILED, "TIMEOUT after 60 s"),
        (scenarios[(b.pk, 1, "adult")], y, ConversationStatus.COMPLETED, ""),
        (scenarios[(b.pk, 1, "teen")], x, "not_judged", ""),
        (scenarios[(b.pk, 0, "teen")], y, ConversationStatus.PENDING, ""),
        (regenerated, y, ConversationStatus.FAILED, "answered 502"),
    ]
    for replicate, (scen, target, status, error) in enumerate(failures, start=2):
        Conversation.objects.create(
            run=run, scenario=scen, target=target, replicate=replicate, status=status, error=error
        )
    return run


def test_cells_match_the_joined_group_by(mixed_run):
    new, old = run_cells(mixed_run), joined_cells(mixed_run)
    assert_same_cells(new, old)
    assert set(new.age.tolist()) == {0, 1}
    assert {row[4] for row in new.failed} == {"timeout", "error", "not judged", "pending"}
    # The regenerated scenario and its retired predecessor count as one cell.
    assert sorted(set(new.n.tolist())) == [2.0, 4.0]
    assert (new.n == 4).sum() == 2
    assert new.size == 2 * 2 * 3 * 2


def test_cells_match_the_joined_group_by_on_the_synthetic_dataset():
    call_command(
        "generate_synthetic_dataset",
        metrics=12,
        models=3,
        no_refresh=True,
        release_version="0.0.7",
        stdout=io.StringIO(),
    )
    run = EvaluationRun.objects.get(release__version="0.0.7", is_official=True)
    conversations = list(run.conversations.order_by("pk").values_list("pk", flat=True))
    Conversation.objects.filter(pk__in=conversations[::11]).update(
        status=ConversationStatus.FAILED, verdict_passed=None, error="server error"
    )
    assert_same_cells(run_cells(run), joined_cells(run))


def test_a_run_without_conversations_has_no_cells():
    x = OfflineConfigurationFactory(name="X")
    run = completed_run(targets=[x], versions=[metric_version()], outcomes=[])
    cells = run_cells(run)
    assert cells.size == 0
    assert cells.failed == []
    assert_same_cells(cells, joined_cells(run))


def test_summary_rows_join_their_run_model_and_groups(mixed_run):
    summaries_refresh(run=mixed_run, n_resamples=50)
    rows = PassRateSummary.objects.filter(run=mixed_run).select_related(
        "release", "run", "target", "area", "subarea", "metric_version__metric"
    )
    names = {t.pk: t.name for t in mixed_run.targets.all()}
    versions = set(mixed_run.release.items.values_list("metric_version", flat=True))
    subareas = {
        s: a
        for s, a in Subarea.objects.filter(slug__in=("agency-purpose", "creativity")).values_list(
            "pk", "area_id"
        )
    }
    levels = set()
    for row in rows:
        levels.add(row.level)
        assert row.run == mixed_run
        assert row.release == mixed_run.release
        assert row.target.name == names[row.target_id]
        if row.level == SummaryLevel.AREA:
            assert row.area.pk in subareas.values()
        elif row.level == SummaryLevel.SUBAREA:
            assert subareas[row.subarea.pk] == row.subarea.area_id
        elif row.level == SummaryLevel.METRIC:
            assert row.metric_version.pk in versions
            assert row.metric_version.polarity == row.polarity
            assert row.metric_version.metric.key
    assert levels == set(SummaryLevel.values)
    explored = selectors.explore_subarea_rates(run=mixed_run, age_context="all")
    assert {(r["subarea__name"], r["target__name"]) for r in explored} == {
        (name, target)
        for name in Subarea.objects.filter(pk__in=subareas).values_list("name", flat=True)
        for target in names.values()
    }


def test_deleting_what_a_summary_refers_to_deletes_the_summary(mixed_run):
    """The keys carry no database constraint; Django's CASCADE still removes the rows."""
    summaries_refresh(run=mixed_run, n_resamples=50)
    target = mixed_run.targets.first()
    area = Area.objects.create(slug="test-area", name="Test area")
    subarea = Subarea.objects.create(area=area, slug="test-subarea", name="Test subarea")
    version = metric_version()
    release = release_with("9.9.9", [])
    model = OfflineConfigurationFactory(name="Z")
    common = {
        "run": mixed_run,
        "target": target,
        "polarity": "positive",
        "age_context": "all",
        "n_conversations": 1,
        "n_passed": 1,
        "rate": 1.0,
    }
    referring = {
        "release": PassRateSummary.objects.create(release=release, level="overall", **common),
        "model": PassRateSummary.objects.create(level="overall", **{**common, "target": model}),
        "area": PassRateSummary.objects.create(level="area", area=area, **common),
        "subarea": PassRateSummary.objects.create(level="subarea", subarea=subarea, **common),
        "version": PassRateSummary.objects.create(level="metric", metric_version=version, **common),
    }
    before = PassRateSummary.objects.count()
    for name, referent in [
        ("release", release),
        ("model", model),
        ("subarea", subarea),
        ("area", area),
        ("version", version),
    ]:
        referent.delete()
        assert not PassRateSummary.objects.filter(pk=referring[name].pk).exists(), name
    assert PassRateSummary.objects.count() == before - len(referring)
    mixed_run.delete()
    assert not PassRateSummary.objects.exists()
