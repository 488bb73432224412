"""Small hand-checkable runs: conversations with verdicts and judgments written directly."""

from collections.abc import Iterable

from django.utils import timezone

from evaluations.models import (
    Conversation,
    ConversationStatus,
    EvaluationRun,
    Judgment,
    RunStatus,
    Scenario,
)
from tests.evaluations.factories import EvaluationRunFactory, ScenarioFactory, current_version
from tests.metrics_registry.factories import MetricFactory, release_with


def metric_version(*, polarity="positive", subareas=("agency-purpose",), benchmark=None):
    label = "agency" if polarity == "positive" else "sycophancy"
    kwargs = {}
    if benchmark is not None:
        kwargs = {"source_kind": "benchmark", "benchmark": benchmark}
    metric = MetricFactory(
        polarity=polarity, subarea_slugs=subareas, label_category_slug=label, **kwargs
    )
    return current_version(metric)


def scenario(version, base: int, age: str) -> Scenario:
    return ScenarioFactory(metric_version=version, base_index=base, age_context=age)


def completed_run(
    *,
    targets,
    versions,
    outcomes: Iterable[tuple[Scenario, object, bool]],
    judgments: dict | None = None,
    publish_as: str | None = "1.0.0",
    replicates: int = 1,
    official: bool = True,
    **run_fields,
) -> EvaluationRun:
    """A completed run over `versions` (released and published as `publish_as`).

    `outcomes` = (scenario, target, passed[, replicate]); `judgments` maps an outcome's index to
    its list of judge readings (present True/False); by default three readings that agree.
    """
    release = None
    if publish_as:
        release = release_with(publish_as, [v.metric for v in versions], publish=True)
    run = EvaluationRunFactory(
        targets=list(targets),
        release=release,
        status=RunStatus.COMPLETED,
        finished_at=timezone.now(),
        judgments_per_conversation=3,
        replicates=replicates,
        is_official=official and release is not None,
        **run_fields,
    )
    for index, outcome in enumerate(outcomes):
        scen, target, passed = outcome[:3]
        replicate = outcome[3] if len(outcome) > 3 else 0
        positive = scen.metric_version.polarity == "positive"
        present = passed if positive else not passed
        conversation = Conversation.objects.create(
            run=run,
            scenario=scen,
            target=target,
            replicate=replicate,
            status=ConversationStatus.COMPLETED,
            verdict_present=present,
            verdict_passed=passed,
        )
        readings = (judgments or {}).get(index, [present] * 3)
        for repetition, reading in enumerate(readings):
            Judgment.objects.create(
                conversation=conversation,
                repetition=repetition,
                judge=run.judge,
                seed=repetition,
                present=reading,
                justification="Test reading.",
            )
    # The counter the services keep (public pages rank a release's runs by it).
    done = Conversation.objects.filter(run=run).count()
    run.conversations_completed = run.conversations_total = done
    run.save(update_fields=["conversations_completed", "conversations_total"])
    return run
