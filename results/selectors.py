"""Read side of the results app: which run a public page shows, and its precomputed rows."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from evaluations.models import EvaluationRun, RunStatus
from llm.models import ModelConfiguration, Provider
from metrics_registry.models import ReleaseStatus

from .models import PassRateSummary, SummaryLevel


def public_runs() -> QuerySet[EvaluationRun]:
    """Completed runs of published releases whose summaries exist, newest release first."""
    return (
        EvaluationRun.objects.filter(
            status=RunStatus.COMPLETED,
            release__status=ReleaseStatus.PUBLISHED,
            analysis__isnull=False,
        )
        .select_related("release", "analysis", "judge", "simulator")
        .order_by("-release__major", "-release__minor", "-release__patch", "-finished_at", "-pk")
    )


def public_run_default() -> EvaluationRun | None:
    """The latest published release's latest completed (and summarised) run."""
    return public_runs().first()


def run_targets(run: EvaluationRun) -> QuerySet[ModelConfiguration]:
    return run.targets.order_by("name")


def run_uses_offline_model(run: EvaluationRun) -> bool:
    """True when any target, the simulator or the judge is the offline demo model."""
    offline = Q(provider=Provider.OFFLINE)
    return (
        run.targets.filter(offline).exists()
        or ModelConfiguration.objects.filter(
            offline, pk__in=[run.judge_id, run.simulator_id]
        ).exists()
    )


def run_is_synthetic(run: EvaluationRun) -> bool:
    """True when the run, its release or any of its models is flagged synthetic."""
    return (
        run.synthetic
        or (run.release is not None and run.release.synthetic)
        or run.targets.filter(synthetic=True).exists()
        or ModelConfiguration.objects.filter(
            synthetic=True, pk__in=[run.judge_id, run.simulator_id]
        ).exists()
    )


def summaries(
    *, run: EvaluationRun, level: str, age_context: str = "all"
) -> QuerySet[PassRateSummary]:
    return PassRateSummary.objects.filter(run=run, level=level, age_context=age_context)


def overall_pass_rates(*, run: EvaluationRun) -> QuerySet[PassRateSummary]:
    return (
        summaries(run=run, level=SummaryLevel.OVERALL)
        .select_related("target")
        .order_by("polarity", "-rate", "target__name")
    )


def explore_subarea_rates(*, run: EvaluationRun, age_context: str = "all") -> list[dict]:
    """Subarea pass rates per model for one run and age context (the Explore query)."""
    return list(
        summaries(run=run, level=SummaryLevel.SUBAREA, age_context=age_context)
        .order_by("subarea__area__position", "subarea__position", "polarity", "target__name")
        .values(
            "subarea__area__name",
            "subarea__name",
            "polarity",
            "target__name",
            "rate",
            "ci_low",
            "ci_high",
            "n_conversations",
        )
    )


def metric_labels_for_versions(version_ids) -> dict[int, dict]:
    """Metric version id -> its metric's key and name, for tables that list metrics by version."""
    from metrics_registry.models import MetricVersion

    rows = MetricVersion.objects.filter(pk__in=list(version_ids)).values_list(
        "pk", "metric__key", "name"
    )
    return {pk: {"key": key, "name": name} for pk, key, name in rows}
