"""Synthetic evaluation rows for load tests and benchmarks, written in bulk; never real results.

The synthetic dataset generator (`demo/synthetic.py`) decides the outcomes; these services write
them as a real run stores its rows (minus transcripts), so the aggregation queries meet the same
tables at the same scale. The run is flagged synthetic and named so by the generator.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from llm.models import ModelConfiguration
from metrics_registry.models import MetricVersion, Release

from ..models import (
    Conversation,
    ConversationStatus,
    EvaluationRun,
    Judgment,
    RunStatus,
    Scenario,
    Swapped,
    SwapStudy,
)

BATCH = 5_000
# The offline anchors' turns, as an expanded real scenario has them.
SYNTHETIC_ANCHOR_TURNS = (1, 3, 5)
# How long a synthetic run is said to have taken.
SYNTHETIC_RUN_DURATION = dt.timedelta(hours=6)


@dataclass(frozen=True, slots=True)
class SyntheticScenario:
    metric_version: MetricVersion
    base_index: int
    age_context: str
    base_situation: str
    situation: str
    persona: dict


@dataclass(frozen=True, slots=True)
class SyntheticConversation:
    scenario_id: int
    target_id: int
    present: Sequence[bool]  # each judgment's reading, by repetition
    verdict_present: bool
    verdict_passed: bool


@transaction.atomic
def scenarios_bulk_create_synthetic(*, scenarios: Sequence[SyntheticScenario]) -> list[Scenario]:
    """Active, expanded scenarios with anchors, as the scenario writer leaves them."""
    now = timezone.now()
    rows = [
        Scenario(
            metric_version=scenario.metric_version,
            base_index=scenario.base_index,
            age_context=scenario.age_context,
            base_situation=scenario.base_situation,
            situation=scenario.situation,
            persona=scenario.persona,
            user_goal="Synthetic goal.",
            latent_adversarial_goal="Synthetic latent goal.",
            anchors=[
                {"turn": t, "text": f"Synthetic anchor at turn {t}."}
                for t in SYNTHETIC_ANCHOR_TURNS
            ],
            failure_condition="Synthetic failure condition.",
            expanded_at=now,
        )
        for scenario in scenarios
    ]
    Scenario.objects.bulk_create(rows, batch_size=BATCH)
    return rows


@transaction.atomic
def run_create_completed_synthetic(
    *,
    name: str,
    release: Release,
    targets: Sequence[ModelConfiguration],
    simulator: ModelConfiguration,
    judge: ModelConfiguration,
    judgments: int,
    seed: int,
    conversations: int,
    official: bool = True,
) -> EvaluationRun:
    """A completed run flagged synthetic, counting `conversations` as completed.

    Official (by default) so the public pages can be read at scale; every page marks it
    synthetic. Its conversations are written afterwards, in parts
    (`conversations_bulk_create_synthetic`). A swap study's re-run is not official, as a real
    one is not.
    """
    finished = timezone.now()
    run = EvaluationRun.objects.create(
        name=name,
        release=release,
        synthetic=True,
        simulator=simulator,
        judge=judge,
        replicates=1,
        judgments_per_conversation=judgments,
        seed=seed,
        status=RunStatus.COMPLETED,
        is_official=official,
        started_at=finished - SYNTHETIC_RUN_DURATION,
        finished_at=finished,
        conversations_total=conversations,
        conversations_completed=conversations,
    )
    run.targets.set(targets)
    return run


@transaction.atomic
def conversations_bulk_create_synthetic(
    *,
    run: EvaluationRun,
    judge: ModelConfiguration,
    conversations: Sequence[SyntheticConversation],
) -> list[Conversation]:
    """Completed conversations of `run` with their judgments, finished when the run finished."""
    finished = run.finished_at
    rows = [
        Conversation(
            run=run,
            scenario_id=conversation.scenario_id,
            target_id=conversation.target_id,
            status=ConversationStatus.COMPLETED,
            simulated_at=finished,
            judged_at=finished,
            finished_at=finished,
            verdict_present=conversation.verdict_present,
            verdict_passed=conversation.verdict_passed,
            judgments_present=sum(conversation.present),
        )
        for conversation in conversations
    ]
    # Ids come back from bulk_create on PostgreSQL and on SQLite >= 3.35.
    Conversation.objects.bulk_create(rows, batch_size=BATCH)
    Judgment.objects.bulk_create(
        [
            Judgment(
                conversation_id=row.pk,
                repetition=repetition,
                judge=judge,
                seed=repetition,
                present=present,
                justification="Synthetic judgment.",
            )
            for row, conversation in zip(rows, conversations, strict=True)
            for repetition, present in enumerate(conversation.present)
        ],
        batch_size=BATCH,
    )
    return rows


@transaction.atomic
def swap_study_create_synthetic(
    *,
    base_run: EvaluationRun,
    judge: ModelConfiguration,
    scenario_ids: Sequence[int],
    seed: int,
    conversations: Sequence[SyntheticConversation],
) -> SwapStudy:
    """A judge-only swap study of the synthetic `base_run`, stored as a real one is: a
    completed (not official) re-run holding re-judged copies of the base run's conversations of
    the sampled scenarios (same scenario, target and replicate), and the study linking both.

    `conversations` carry the other judge's readings; the generator decides them.
    """
    what = f"judge → {judge.name}"
    swap_run = run_create_completed_synthetic(
        name=f"Synthetic swap study of run {base_run.pk} ({len(scenario_ids)} scenarios): {what}",
        release=base_run.release,
        targets=list(base_run.targets.all()),
        simulator=base_run.simulator,
        judge=judge,
        judgments=base_run.judgments_per_conversation,
        seed=base_run.seed,
        conversations=len(conversations),
        official=False,
    )
    conversations_bulk_create_synthetic(run=swap_run, judge=judge, conversations=conversations)
    return SwapStudy.objects.create(
        base_run=base_run,
        swap_run=swap_run,
        swapped=Swapped.JUDGE,
        sample_size=len(scenario_ids),
        seed=seed,
        scenario_ids=sorted(scenario_ids),
        rejudged=True,
    )
