"""The other two formats: a run export imports back into a new run with the same transcripts,
and an Inspect eval log (as inspect_ai itself writes it, JSON or .eval) imports its samples."""

import json

import pytest

from evaluations.models import Conversation, RunStatus, ScenarioStatus
from evaluations.services import runs
from evaluations.services.run_exports import run_export_jsonl_lines
from evaluations.services.scenarios import scenarios_generate
from evaluations.services.transcript_import import TranscriptFileInvalid
from evaluations.services.transcript_runs import transcripts_import
from llm.models import ModelRole, Provider
from tests.evaluations.factories import current_version
from tests.llm.factories import ModelRoleAssignmentFactory, OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory

pytestmark = pytest.mark.django_db


def _transcripts(run) -> list[tuple]:
    """Every conversation's metric, situation, age and turns, in a stable order."""
    found = []
    for conversation in Conversation.objects.filter(run=run).select_related(
        "scenario__metric_version__metric"
    ):
        turns = tuple(
            (t.index, t.user_text, t.user_text_clean, t.assistant_text)
            for t in conversation.turns.order_by("index")
        )
        scenario = conversation.scenario
        found.append((scenario.metric_version.metric.key, scenario.pk, scenario.age_context, turns))
    return sorted(found)


@pytest.fixture
def finished_run(sent_tasks, django_capture_on_commit_callbacks):
    writer = OfflineConfigurationFactory()
    ModelRoleAssignmentFactory(role=ModelRole.SCENARIO_WRITER, configuration=writer)
    version = current_version(MetricFactory())
    scenarios_generate(metric_version=version)
    run = runs.run_create(
        name="Simulated",
        metric_versions=[version],
        targets=[OfflineConfigurationFactory(extra_params={"offline_profile": "careful"})],
        simulator=OfflineConfigurationFactory(),
        judge=OfflineConfigurationFactory(),
        turns=2,
        judgments_per_conversation=1,
        seed=3,
    )
    runs.run_launch(run=run, dispatch=False)
    runs.run_process_inline(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    return run


def test_a_run_export_imports_back_with_the_same_transcripts(finished_run):
    exported = "".join(run_export_jsonl_lines(finished_run)).encode()
    imported = transcripts_import(
        data=exported,
        file_name=f"impactbench-run-{finished_run.pk}.jsonl",
        format="run_export",
        run_name="Re-judged",
        judge=OfflineConfigurationFactory(),
        judgments_per_conversation=1,
        dispatch=False,
    )
    assert imported.conversations_total == 6
    assert _transcripts(imported) == _transcripts(finished_run)
    # The model is named as the export named it, and is never called.
    (target,) = imported.targets.all()
    assert target.provider == Provider.IMPORTED
    assert target.model_id == finished_run.targets.get().name
    runs.run_process_inline(run_id=imported.pk)
    imported.refresh_from_db()
    assert (imported.status, imported.conversations_completed) == (RunStatus.COMPLETED, 6)


def _inspect_log(version, scenario):
    # Imported here: loading inspect_ai costs seconds, paid by the slow tests that write logs.
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageUser,
        ContentReasoning,
        ContentText,
    )

    def sample(sample_id, metadata, replies):
        messages = [ChatMessageSystem(content="You are a helpful assistant.")]
        for user, reply in replies:
            messages += [
                ChatMessageUser(content=user),
                ChatMessageAssistant(
                    content=[ContentReasoning(reasoning="(hidden)"), ContentText(text=reply)]
                ),
            ]
        return EvalSample(
            id=sample_id,
            epoch=1,
            input="situation",
            target="present",
            metadata=metadata,
            messages=messages,
        )

    known = {
        "metric_key": version.metric.key,
        "metric_version": version.number,
        "base_index": scenario.base_index,
        "age_context": scenario.age_context,
    }
    return EvalLog(
        eval=EvalSpec(
            created="2025-05-01T00:00:00+00:00",
            task="impactbench",
            dataset=EvalDataset(),
            model="openai-api/local/acme-chat",
            config=EvalConfig(),
        ),
        samples=[
            sample(
                "s-known", known, [("I feel low today.", "I'm sorry; what is weighing on you?")]
            ),
            sample(
                "s-free",
                {"age_context": "teen"},
                [("hi", "Hello! How can I help?"), ("bored", "Want a few ideas to try?")],
            ),
        ],
    )


@pytest.mark.slow(reason="imports inspect_ai")
@pytest.mark.parametrize("suffix", ["json", "eval"])
def test_an_inspect_log_imports_its_samples(tmp_path, suffix):
    # Imported here: loading inspect_ai costs seconds, paid only by this slow test.
    from inspect_ai.log import write_eval_log

    ModelRoleAssignmentFactory(
        role=ModelRole.SCENARIO_WRITER, configuration=OfflineConfigurationFactory()
    )
    version = current_version(MetricFactory())
    scenarios_generate(metric_version=version)
    scenario = version.scenarios.get(base_index=1, age_context="adult")
    path = tmp_path / f"log.{suffix}"
    write_eval_log(_inspect_log(version, scenario), str(path))

    run = transcripts_import(
        data=path.read_bytes(),
        file_name=path.name,
        format="inspect_log",
        run_name="Inspect log",
        judge=OfflineConfigurationFactory(),
        metric_versions=[version],
        judgments_per_conversation=1,
        dispatch=False,
    )
    free, known = Conversation.objects.filter(run=run).order_by("source_id")
    assert known.scenario == scenario  # the sample's metadata names the situation
    assert known.source_id == "s-known#1"
    assert free.scenario.status == ScenarioStatus.IMPORTED
    assert free.scenario.age_context == "teen"
    assert [(t.user_text, t.assistant_text) for t in free.turns.order_by("index")] == [
        ("hi", "Hello! How can I help?"),
        ("bored", "Want a few ideas to try?"),
    ]
    assert run.targets.get().model_id == "openai-api/local/acme-chat"
    runs.run_process_inline(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED


def test_an_inspect_log_without_samples_is_refused():
    with pytest.raises(TranscriptFileInvalid, match='no "samples" list'):
        transcripts_import(
            data=json.dumps({"version": 2, "eval": {}}).encode(),
            file_name="empty.json",
            format="inspect_log",
            run_name="Empty",
            judge=OfflineConfigurationFactory(),
            model_name="m",
            dispatch=False,
        )


def test_an_imported_runs_export_imports_under_the_same_model():
    line = json.dumps(
        {
            "messages": [
                {"role": "user", "content": "Can you help me plan my week?"},
                {"role": "assistant", "content": "Gladly. What are the fixed commitments?"},
            ]
        }
    )
    version = current_version(MetricFactory())
    options = dict(
        run_name="Imported",
        judge=OfflineConfigurationFactory(),
        metric_versions=[version],
        judgments_per_conversation=1,
        dispatch=False,
    )
    first = transcripts_import(
        data=line.encode(), file_name="a.jsonl", format="openai_jsonl", model_name="acme", **options
    )
    runs.run_process_inline(run_id=first.pk)
    again = transcripts_import(
        data="".join(run_export_jsonl_lines(first)).encode(),
        file_name="export.jsonl",
        format="run_export",
        **options,
    )
    assert list(again.targets.all()) == list(first.targets.all())
    assert _transcripts(again) == _transcripts(first)
