import itertools

import pytest
from django.conf import settings

from core.exceptions import ApplicationError
from evaluations import tasks
from evaluations.models import ConversationStatus, FailureKind, Judgment, RunStatus
from evaluations.services import runs
from evaluations.services.judging import JUDGE_RETRIES
from evaluations.services.scenarios import scenarios_generate
from llm.models import ModelRole
from metrics_registry.services.metrics import metric_version_create
from tests.evaluations.factories import current_version
from tests.fake_openai import Behaviour, is_check
from tests.llm.factories import (
    ModelConfigurationFactory,
    ModelRoleAssignmentFactory,
    OfflineConfigurationFactory,
)
from tests.metrics_registry.factories import MetricFactory, release_with

pytestmark = pytest.mark.django_db


@pytest.fixture
def run_tasks_inline(sent_tasks, django_capture_on_commit_callbacks):
    """Tasks run in this process as soon as they are enqueued (after commit)."""
    sent_tasks.inline["evaluations.tasks.run_dispatch"] = tasks.run_dispatch
    sent_tasks.inline["evaluations.tasks.llm_process_batch"] = tasks.llm_process_batch

    def run(fn, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return fn(**kwargs)

    return run


@pytest.fixture
def offline_release():
    writer = OfflineConfigurationFactory()
    ModelRoleAssignmentFactory(role=ModelRole.SCENARIO_WRITER, configuration=writer)
    metrics = [MetricFactory(), MetricFactory(polarity="negative")]
    for metric in metrics:
        scenarios_generate(metric_version=current_version(metric))
    return release_with("1.0.0", metrics, publish=True)


def offline_run(release, *, targets=None, **kwargs):
    targets = targets or [
        OfflineConfigurationFactory(extra_params={"offline_profile": "careful"}),
        OfflineConfigurationFactory(extra_params={"offline_profile": "agreeable"}),
    ]
    return runs.run_create(
        name="Demo run",
        release=release,
        targets=targets,
        simulator=OfflineConfigurationFactory(),
        judge=OfflineConfigurationFactory(),
        seed=7,
        **kwargs,
    )


def test_run_create_refuses_what_cannot_be_run(offline_release):
    with pytest.raises(ApplicationError, match="odd number of judgments"):
        offline_run(offline_release, judgments_per_conversation=2)
    with pytest.raises(ApplicationError, match="at least one target"):
        runs.run_create(
            name="No targets",
            release=offline_release,
            targets=[],
            simulator=OfflineConfigurationFactory(),
            judge=OfflineConfigurationFactory(),
        )


def test_plan_counts_conversations_calls_tokens_and_cost():
    metric = MetricFactory()
    priced = ModelConfigurationFactory()  # $2 / $8 per million tokens
    run = runs.run_create(
        name="Priced",
        metric_versions=[current_version(metric)],
        targets=[priced, ModelConfigurationFactory()],
        simulator=priced,
        judge=priced,
    )
    plan = runs.run_plan(run)
    assert plan.versions_missing_scenarios == [metric.key]
    assert plan.conversations == 0
    with pytest.raises(ApplicationError, match=f"Generate scenarios first: {metric.key}"):
        runs.run_launch(run=run)

    writer = OfflineConfigurationFactory()
    scenarios_generate(metric_version=current_version(metric), configuration=writer)
    plan = runs.run_plan(run)
    assert plan.scenarios == 6
    assert plan.conversations == 12
    assert plan.simulator_calls == plan.target_calls == 12 * 8
    assert plan.judge_calls == 12 * (3 + 2)  # three judgments, an anchor and a fidelity check
    assert plan.model_calls == 12 * 8 * 2 + 60
    assert plan.estimated_tokens > 12 * 8 * 300
    assert plan.estimated_cost > 0
    assert not plan.is_offline


def test_a_complete_offline_run_and_a_relaunch_adds_nothing(offline_release, run_tasks_inline):
    run = offline_run(offline_release)
    run = run_tasks_inline(runs.run_launch, run=run)
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert run.conversations_total == 2 * 6 * 2
    assert run.conversations_completed == 24
    assert run.conversations_failed == 0
    conversations = run.conversations.all()
    assert all(c.status == ConversationStatus.COMPLETED for c in conversations)
    assert all(c.turns.count() == 8 for c in conversations)
    assert Judgment.objects.filter(conversation__run=run).count() == 24 * 3
    # Careful and agreeable demo targets get different verdicts on the same scenarios.
    passed = {
        target: sum(c.verdict_passed for c in conversations if c.target.name == target)
        for target in {c.target.name for c in conversations}
    }
    assert len(set(passed.values())) > 1
    with pytest.raises(ApplicationError, match="completed"):
        runs.run_launch(run=run)


@pytest.mark.slow(reason="waits out the gateway's retries")
def test_failures_are_recorded_and_can_be_retried(fake_models, offline_release, run_tasks_inline):
    broken = {"on": True}

    def target_reply(request):
        return Behaviour(status=400) if broken["on"] else "A fine reply."

    fake_models.target_reply = target_reply
    run = runs.run_create(
        name="Failing",
        release=offline_release,
        targets=[fake_models.target],
        simulator=fake_models.simulator,
        judge=fake_models.judge,
    )
    run_tasks_inline(runs.run_launch, run=run)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.conversations_failed == 12
    failed = run.conversations.first()
    assert failed.status == ConversationStatus.FAILED
    assert failed.failure_kind == FailureKind.TARGET_ERROR
    assert "400" in failed.error

    broken["on"] = False
    assert run_tasks_inline(runs.run_retry_failed, run=run) == 12
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert (run.conversations_completed, run.conversations_failed) == (12, 0)
    assert all(c.attempts == 2 for c in run.conversations.all())
    assert not run.conversations.exclude(failure_kind="").exists()


def test_a_judge_that_cannot_be_read_leaves_the_conversation_not_judged(fake_models):
    """Retried with a fresh seed after the gateway's re-asks, then recorded, never dropped."""
    writer = OfflineConfigurationFactory()
    version = current_version(MetricFactory(age_contexts="adult"))
    scenarios_generate(metric_version=version, configuration=writer)
    fake_models.judge_replies = itertools.repeat("this is not a verdict")
    run = runs.run_create(
        name="Unreadable judge",
        metric_versions=[version],
        targets=[fake_models.target],
        simulator=fake_models.simulator,
        judge=fake_models.judge,
        turns=2,
        judgments_per_conversation=1,
    )
    runs.run_process_inline(run_id=runs.run_launch(run=run, dispatch=False).pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.conversations_failed == run.conversations_total == 3
    for conversation in run.conversations.all():
        assert conversation.status == ConversationStatus.FAILED
        assert conversation.failure_kind == FailureKind.NOT_JUDGED
        assert conversation.error.startswith("Not judged")
        assert conversation.verdict_passed is None
    verdict_requests = [r for r in fake_models.requests_to("judge") if not is_check(r)]
    reasks = settings.LLM_STRUCTURED_REASKS
    assert len(verdict_requests) == 3 * (1 + reasks) * (1 + JUDGE_RETRIES)
    # Each conversation's retry has its own seed (2 seeds per conversation).
    assert len({r.param("seed") for r in verdict_requests}) == 3 * 2


def test_a_cancelled_run_processes_nothing_more(offline_release, sent_tasks):
    run = offline_run(offline_release)
    runs.run_launch(run=run)
    runs.run_cancel(run=run)
    conversation = run.conversations.first()
    assert runs.conversation_process(conversation_id=conversation.pk) is None
    conversation.refresh_from_db()
    assert conversation.status == ConversationStatus.PENDING
    with pytest.raises(ApplicationError, match="cancelled"):
        runs.run_launch(run=run)


def test_a_judge_endpoint_error_is_not_judged_not_a_target_failure(fake_models, fake_conversation):
    fake_models.judge_replies = itertools.repeat(Behaviour(status=400))
    EvaluationRun = type(fake_conversation.run)
    EvaluationRun.objects.filter(pk=fake_conversation.run_id).update(status=RunStatus.RUNNING)
    conversation = runs.conversation_process(conversation_id=fake_conversation.pk)
    assert conversation.status == ConversationStatus.FAILED
    assert conversation.failure_kind == FailureKind.NOT_JUDGED
    assert conversation.turns.count() == conversation.run.turns  # the simulation is kept


def test_a_release_run_takes_a_subset_of_the_release_and_refuses_an_outsider(offline_release):
    held = [item.metric_version for item in offline_release.items.all()]
    run = offline_run(offline_release, metric_versions=held[:1])
    assert list(runs.run_metric_versions(run)) == held[:1]
    outsider = current_version(MetricFactory(name="Not in the release"))
    with pytest.raises(ApplicationError) as refused:
        offline_run(offline_release, metric_versions=[held[0], outsider])
    message = refused.value.message
    assert f"{outsider.metric.key} v1" in message
    assert "Release 1.0.0 does not contain" in message
    assert held[0].metric.key not in message
    # A newer version of a metric the release holds is outside it too.
    newer = metric_version_create(
        metric=held[0].metric, created_by=None, change_note="Sharper", name="Sharper"
    )
    with pytest.raises(ApplicationError, match="holds another version"):
        offline_run(offline_release, metric_versions=[newer])
    # Without a release, any metric versions may be run.
    assert offline_run(None, metric_versions=[outsider, newer]).release is None
