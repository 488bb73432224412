"""Swap studies: re-run a random sample of a run's scenarios with another judge or simulator.

The re-run is an ordinary run (`run_create`, `run_launch`, the batch engine) whose scenarios
are the sample (`run_plans.run_scenarios` reads it from the study). It keeps everything of the
base run but what is swapped: targets, turns, replicates, repetitions, anchors, the seed (so a
simulator swap differs from the base by its simulator, not by other draws).

A judge-only swap need not simulate again: the base run's finished conversations of the
sample are copied, turns and anchor checks included, marked simulated, so the engine only
judges them with the new judge. The comparison is then paired conversation by conversation.
"""

from __future__ import annotations

import random

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from llm.models import ModelConfiguration

from ..models import (
    AnchorCoverage,
    Conversation,
    ConversationStatus,
    EvaluationRun,
    RunStatus,
    Swapped,
    SwapStudy,
    TranscriptImport,
    Turn,
)
from .panel import run_panel
from .runs import run_create

MIN_SAMPLE = 2


def swap_sample(*, base_run: EvaluationRun, size: int, seed: int) -> list[int]:
    """`size` scenario ids drawn without replacement, uniformly, from those the base run
    finished a conversation on; sorted, so the same seed always gives the same list."""
    pool = sorted(
        set(
            base_run.conversations.filter(status=ConversationStatus.COMPLETED).values_list(
                "scenario_id", flat=True
            )
        )
    )
    if len(pool) < MIN_SAMPLE:
        raise ApplicationError(
            _("The run has fewer than two scenarios with finished conversations.")
        )
    # Reproducible from the recorded seed: a sample, not a secret.
    return sorted(random.Random(seed).sample(pool, min(size, len(pool))))  # noqa: S311


def _swapped(
    base_run: EvaluationRun, judge: ModelConfiguration | None, sim: ModelConfiguration | None
) -> str:
    new_judge = judge is not None and judge.pk != base_run.judge_id
    new_sim = sim is not None and sim.pk != base_run.simulator_id
    if new_judge and new_sim:
        return Swapped.BOTH
    if new_judge:
        return Swapped.JUDGE
    if new_sim:
        return Swapped.SIMULATOR
    raise ApplicationError(
        _("Choose a judge or a user simulator other than the run's own: nothing would be swapped.")
    )


def swap_base_check(*, base_run: EvaluationRun) -> None:
    """Refuse a run that cannot be the base of a study: one still going, or a study's re-run
    (its sample is already a comparison; a study of it would compare a sample of a sample)."""
    if base_run.status != RunStatus.COMPLETED:
        raise ApplicationError(_("Only a completed run can be the base of a swap study."))
    if SwapStudy.objects.filter(swap_run=base_run).exists():
        raise ApplicationError(_("This run is itself a swap study's re-run; choose the base run."))
    if TranscriptImport.objects.filter(run=base_run).exists():
        # Its models were never called and it had no simulator: nothing could be re-run.
        raise ApplicationError(
            _("This run's transcripts were imported: its conversations cannot be re-run.")
        )


@transaction.atomic
def swap_study_create(
    *,
    base_run: EvaluationRun,
    judge: ModelConfiguration | None = None,
    simulator: ModelConfiguration | None = None,
    sample_size: int,
    seed: int | None = None,
    created_by: AbstractBaseUser | None = None,
) -> SwapStudy:
    """The study and its draft swap run (launched like any run, from its page or the command)."""
    swap_base_check(base_run=base_run)
    if sample_size < MIN_SAMPLE:
        raise ApplicationError(
            _("Sample at least %(min_sample)s scenarios.") % {"min_sample": MIN_SAMPLE}
        )
    swapped = _swapped(base_run, judge, simulator)
    seed = seed if seed is not None else random.SystemRandom().randrange(2**31 - 1)
    sample = swap_sample(base_run=base_run, size=sample_size, seed=seed)
    keeps_judge = swapped == Swapped.SIMULATOR
    new_judge = base_run.judge if keeps_judge else judge
    new_sim = simulator if swapped != Swapped.JUDGE else base_run.simulator
    what = {
        Swapped.JUDGE: f"judge → {new_judge.name}",
        Swapped.SIMULATOR: f"simulator → {new_sim.name}",
        Swapped.BOTH: f"judge → {new_judge.name}, simulator → {new_sim.name}",
    }[swapped]
    swap_run = run_create(
        name=f"Swap study of run {base_run.pk} ({len(sample)} scenarios): {what}",
        release=base_run.release,
        metric_versions=list(base_run.metric_versions.all()),
        targets=list(base_run.targets.all()),
        simulator=new_sim,
        judge=new_judge,
        # A kept judge keeps its panel; a swapped judge replaces the whole panel.
        further_judges=[(s.judge, s.repetitions) for s in run_panel(base_run)[1:]]
        if keeps_judge
        else None,
        turns=base_run.turns,
        replicates=base_run.replicates,
        judgments_per_conversation=base_run.judgments_per_conversation,
        typo_rate=base_run.typo_rate,
        seed=base_run.seed,
        use_anchors=base_run.use_anchors,
        spending_cap=base_run.spending_cap,
        created_by=created_by,
    )
    study = SwapStudy.objects.create(
        base_run=base_run,
        swap_run=swap_run,
        swapped=swapped,
        sample_size=len(sample),
        seed=seed,
        scenario_ids=sample,
        rejudged=swapped == Swapped.JUDGE,
        created_by=created_by,
    )
    if study.rejudged:
        _copy_conversations(base_run, swap_run, sample)
    return study


def _copy_conversations(base_run: EvaluationRun, swap_run: EvaluationRun, sample: list[int]):
    """Copy the base run's finished conversations of the sample as simulated, unjudged ones."""
    originals = list(
        base_run.conversations.filter(
            status=ConversationStatus.COMPLETED, scenario_id__in=sample
        ).order_by("pk")
    )
    copies = Conversation.objects.bulk_create(
        [
            Conversation(
                run=swap_run,
                scenario_id=c.scenario_id,
                target_id=c.target_id,
                replicate=c.replicate,
                simulated_at=c.simulated_at,
                stopped_early=c.stopped_early,
                stop_reason=c.stop_reason,
                is_offline=c.is_offline or swap_run.judge.is_offline,
            )
            for c in originals
        ]
    )
    copy_of = {o.pk: c.pk for o, c in zip(originals, copies, strict=True)}
    Turn.objects.bulk_create(
        [
            Turn(
                conversation_id=copy_of[t.conversation_id],
                index=t.index,
                user_text=t.user_text,
                user_text_clean=t.user_text_clean,
                assistant_text=t.assistant_text,
                assistant_cut_off=t.assistant_cut_off,
                anchor_index=t.anchor_index,
                simulator_call_ids=t.simulator_call_ids,
                target_call_ids=t.target_call_ids,
            )
            for t in Turn.objects.filter(conversation_id__in=copy_of)
        ]
    )
    AnchorCoverage.objects.bulk_create(
        [
            AnchorCoverage(
                conversation_id=copy_of[a.conversation_id],
                anchor_index=a.anchor_index,
                anchor_text=a.anchor_text,
                raised=a.raised,
                turn=a.turn,
                quote=a.quote,
                quote_found=a.quote_found,
                call_ids=a.call_ids,
                is_offline=a.is_offline,
            )
            for a in AnchorCoverage.objects.filter(conversation_id__in=copy_of)
        ]
    )
