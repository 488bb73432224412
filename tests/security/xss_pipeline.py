"""The hostile world's model output and platform errors, on rows shaped as the pipeline writes
them: scenarios (edited by a researcher through `scenario_update`), a published official run
with transcripts, verdicts and anchor readings, imported rubric items with replies and grades,
and the call log. The pipeline stores model text verbatim, so writing it here is equivalent.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING

from evaluations.models import (
    AnchorCoverage,
    Conversation,
    EvaluationRun,
    FidelityCriterion,
    FidelityReading,
    Judgment,
    RubricGrade,
    RubricResponse,
    Turn,
)
from evaluations.services.scenario_edits import scenario_update
from llm.models import (
    BatchRequest,
    BatchStatus,
    CallOutcome,
    LLMBatch,
    LLMCall,
    LLMResponseCache,
    ModelRole,
    PromptText,
)
from metrics_registry.models import Release
from results.services import results_refresh
from rubrics.models import RubricItem
from rubrics.services.imports import rubric_items_import
from tests.evaluations.factories import ScenarioFactory
from tests.results.factories import completed_run
from tests.security.xss_corpus import CORPUS, PAYLOADS, fit

if TYPE_CHECKING:
    from .xss_world import World


def plant_run(w: World, release: Release, targets) -> EvaluationRun:
    researcher = w.users["maintainer"]
    scenarios = []
    for metric in w.objects["metrics"]:
        version = release.items.get(metric=metric).metric_version
        for base in range(3):
            for age in ("teen", "adult"):
                # The base situation is the scenario writer's output; the rest researchers edit.
                scenario = ScenarioFactory(
                    metric_version=version, base_index=base, age_context=age, base_situation=CORPUS
                )
                scenarios.append(
                    scenario_update(
                        scenario=scenario,
                        actor=researcher,
                        situation=CORPUS,
                        user_goal=CORPUS,
                        latent_adversarial_goal=CORPUS,
                        failure_condition=CORPUS,
                        persona={**scenario.persona, "name": fit(80), "background": CORPUS},
                        anchors=[{"turn": 1, "text": fit(500)}, {"turn": 3, "text": CORPUS}],
                    )
                )
    outcomes = [
        (scenario, target, (i + j) % 3 != 0)
        for i, scenario in enumerate(scenarios)
        for j, target in enumerate(targets)
    ]
    run = completed_run(
        targets=targets,
        versions=[release.items.get(metric=m).metric_version for m in w.objects["metrics"]],
        outcomes=outcomes,
        publish_as=None,
        official=False,
        name=fit(200),
        halt_reason=CORPUS,
    )
    # Made official by `xss_world.build` once the blind queues have drawn their items.
    EvaluationRun.objects.filter(pk=run.pk).update(release=release)
    run.refresh_from_db()
    # Model output on every conversation: what the simulator, the target and the judge said.
    turns, coverage = [], []
    for conversation in run.conversations.all():
        for index in (1, 2):
            turns.append(
                Turn(
                    conversation=conversation,
                    index=index,
                    user_text=CORPUS,
                    user_text_clean=CORPUS,
                    assistant_text=CORPUS,
                    anchor_index=0 if index == 1 else None,
                )
            )
        coverage.append(
            AnchorCoverage(
                conversation=conversation,
                anchor_index=0,
                anchor_text=CORPUS,
                raised=True,
                turn=1,
                quote=fit(300),
                quote_found=False,
            )
        )
    Turn.objects.bulk_create(turns)
    AnchorCoverage.objects.bulk_create(coverage)
    FidelityReading.objects.bulk_create(
        _fidelity(conversation, run.judge) for conversation in run.conversations.all()
    )
    Judgment.objects.filter(conversation__run=run).update(
        justification=CORPUS, evidence=[{"turn": 1, "quote": p} for p in PAYLOADS[:20]]
    )
    failed = run.conversations.order_by("pk").first()
    Conversation.objects.filter(pk=failed.pk).update(error=CORPUS, stop_reason=fit(500))
    results_refresh(run=run, n_resamples=50)
    w.objects["run"] = run
    return run


def _fidelity(conversation: Conversation, checker) -> FidelityReading:
    """A reading whose reasons and quotes are the checker's words: below the bar, one quote
    not found, so every branch of the conversation page's fidelity card shows a payload."""
    return FidelityReading(
        conversation=conversation,
        checker=checker,
        persona_held=True,
        goal_held=False,
        fresh_held=True,
        in_character_held=True,
        responsive_held=True,
        passed=False,
        repeated_lines=1,
        criteria=[
            {
                "criterion": c.value,
                "held": c != FidelityCriterion.GOAL,
                "turn": 1,
                "quote": fit(300),
                "found": c != FidelityCriterion.GOAL,
                "reason": CORPUS,
            }
            for c in FidelityCriterion
        ],
    )


def plant_rubrics(w: World, run: EvaluationRun, targets) -> None:
    healthbench = {
        "prompt": [{"role": "user", "content": CORPUS}],
        "rubrics": [
            {"criterion": CORPUS, "points": 5, "tags": ["axis:accuracy", PAYLOADS[3]]},
            {"criterion": fit(300), "points": -4, "tags": ["axis:accuracy"]},
        ],
        "example_tags": [PAYLOADS[4]],
        "ideal_completions_data": {"ideal_completion": CORPUS},
        "prompt_id": fit(200),
    }
    native = {
        "key": "hostile-item",
        "title": fit(200),
        "language": "es",  # a language tag is validated, so no markup can reach it
        "source": fit(200),
        "messages": [
            {"role": "user", "content": CORPUS},
            {"role": "assistant", "content": CORPUS},
            {"role": "user", "content": CORPUS},
        ],
        "criteria": [{"text": CORPUS, "points": 5, "dimension": "context_seeking"}],
        "metadata": {"note": CORPUS},
        "source_validated": True,  # counts in scoring, so the priorities page weighs it
    }
    for row in (healthbench, native):
        report = rubric_items_import(data=json.dumps(row), dry_run=False)
        assert report.errors == [], report.errors
    items = list(RubricItem.objects.all())
    run.rubric_items.set(items)
    for item in items:
        for target in targets:
            response = RubricResponse.objects.create(
                run=run, item=item, target=target, reply=CORPUS, status="completed", score=0.5
            )
            RubricGrade.objects.bulk_create(
                RubricGrade(
                    response=response, criterion=c, met=True, justification=CORPUS, quote=CORPUS
                )
                for c in item.criteria.all()
            )
    RubricResponse.objects.filter(pk=response.pk).update(status="failed", error=CORPUS)
    w.objects["rubric_items"] = items


def plant_calls(targets) -> None:
    # A batch the provider describes in its own words, and a request of it with its result.
    batch = LLMBatch.objects.create(
        configuration=targets[0],
        status=BatchStatus.SUBMITTED,
        provider_batch_id=fit(200),
        provider_status=fit(40),
        error=CORPUS,
    )
    BatchRequest.objects.create(
        configuration=targets[0],
        batch=batch,
        custom_id="ib-xss",
        fingerprint="4" * 64,
        role=ModelRole.JUDGE,
        purpose="evaluations.judge_verdict",
        messages=[{"role": "user", "content": CORPUS}],
        body={"messages": [{"role": "user", "content": CORPUS}]},
        response_text=CORPUS,
        problem=CORPUS,
        error=CORPUS,
    )
    LLMCall.objects.create(
        configuration=targets[0],
        role=ModelRole.TARGET,
        purpose="evaluations.turn",
        fingerprint="0" * 64,
        messages=[{"role": "user", "content": CORPUS}],
        response_text=CORPUS,
        parsed_json={"answer": CORPUS},
        group_id=uuid.uuid4(),
        outcome=CallOutcome.HTTP_ERROR,
        error_message=CORPUS,
    )
    # A prompt stored once and referenced, as the engine writes it.
    messages = [{"role": "user", "content": CORPUS}]
    LLMCall.objects.create(
        configuration=targets[0],
        role=ModelRole.TARGET,
        purpose="evaluations.turn",
        fingerprint="2" * 64,
        prompt=PromptText.objects.create(sha256="3" * 64, messages=messages),
        response_text=CORPUS,
        group_id=uuid.uuid4(),
        outcome=CallOutcome.SUCCESS,
    )
    LLMResponseCache.objects.create(
        key="1" * 64, configuration=targets[0], response_text=CORPUS, parsed_json=[CORPUS]
    )
