"""An imported run among the platform's other workflows: a judge panel, resuming, swap studies
and the expert-review queues."""

import json

import pytest

from core.exceptions import ApplicationError
from evaluations.models import Conversation, Judgment, RunJudge, RunStatus
from evaluations.services import runs
from evaluations.services.swap import swap_base_check
from evaluations.services.transcript_runs import transcripts_import
from review.kinds import adapter_for
from tests.evaluations.factories import current_version
from tests.llm.factories import OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory

pytestmark = pytest.mark.django_db

LINE = json.dumps(
    {
        "messages": [
            {"role": "user", "content": "My parents fight every night."},
            {"role": "assistant", "content": "That sounds hard to live with; are you safe?"},
        ]
    }
)


def _imported(version=None, **options):
    version = version or current_version(MetricFactory())
    return transcripts_import(
        data=f"{LINE}\n{LINE}\n".encode(),
        file_name="family.jsonl",
        format="openai_jsonl",
        run_name="Family chats",
        judge=options.pop("judge", None) or OfflineConfigurationFactory(),
        metric_versions=[version],
        model_name="acme-chat",
        judgments_per_conversation=1,
        dispatch=False,
        **options,
    )


def test_a_panel_reads_every_imported_conversation():
    second = OfflineConfigurationFactory()
    run = _imported(further_judges=[(second, 1)])
    assert list(RunJudge.objects.filter(run=run).values_list("judge", flat=True)) == [second.pk]
    runs.run_process_inline(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    for conversation in Conversation.objects.filter(run=run):
        judges = set(
            Judgment.objects.filter(conversation=conversation).values_list("judge", flat=True)
        )
        assert judges == {run.judge_id, second.pk}


def test_resuming_an_imported_run_adds_no_conversation_and_it_cannot_be_swapped():
    run = _imported()
    runs.run_pause(run=run)
    run = runs.run_launch(run=run, dispatch=False)
    assert run.status == RunStatus.RUNNING
    assert Conversation.objects.filter(run=run).count() == 2
    runs.run_process_inline(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    with pytest.raises(ApplicationError, match="imported"):
        swap_base_check(base_run=run)


def test_imported_conversations_enter_the_expert_review_queue():
    version = current_version(MetricFactory())
    # Two imports of one file, judged by two judges (each run's "simulator" field): the same
    # situation and model, which simulated runs would offer as a pair of simulators to rank.
    first, second = _imported(version=version), _imported(version=version)
    for run in (first, second):
        runs.run_process_inline(run_id=run.pk)
    ids = set(Conversation.objects.filter(run__in=[first, second]).values_list("pk", flat=True))
    assert len(ids) == 4
    candidates = {c.object_id for c in adapter_for("conversation").candidates()}
    assert ids <= candidates
    # No simulator was behind them: never offered as a pair of simulators to rank.
    paired = {
        pk
        for c in adapter_for("simulator_pair").candidates()
        for pk in (c.object_id, c.object_id_b)
    }
    assert not paired & ids
