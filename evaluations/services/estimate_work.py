"""What a run still has to call, counted from its design and its stored rows, and the prior
tokens of a call when the call log has nothing to learn from (`estimates.run_estimate`)."""

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, Exists, IntegerField, OuterRef, Subquery

from llm.models import ModelConfiguration

from ..models import (
    AnchorCoverage,
    Conversation,
    ConversationStatus,
    EvaluationRun,
    FidelityReading,
    Judgment,
)
from . import run_plans as plans
from .estimate_history import SIMULATE, TARGET

CHARS_PER_TOKEN = 4
RUBRIC_REPLY = "evaluations.rubric_reply"
RUBRIC_GRADES = "evaluations.rubric_grades"


@dataclass
class Work:
    """What the run still has to do, counted from its design and its stored rows."""

    to_simulate: dict[int, int]  # target id → conversations to simulate
    anchor_checks: dict[int, int]  # target id → conversations needing an anchor check
    fidelity_checks: dict[int, int]
    judge_readings: dict[int, int]  # seat index → readings still to make
    conversations: int
    simulated: int


def work_count(run: EvaluationRun, targets: list[ModelConfiguration], seats: list) -> Work:
    scenarios = dict(plans.run_scenarios(run).values_list("pk", "anchors"))
    with_anchors = {pk for pk, anchors in scenarios.items() if anchors}
    stored = {
        (c["scenario_id"], c["target_id"], c["replicate"]): c
        for c in Conversation.objects.filter(run=run)
        .annotate(
            covered=Exists(AnchorCoverage.objects.filter(conversation=OuterRef("pk"))),
            checked=Exists(FidelityReading.objects.filter(conversation=OuterRef("pk"))),
            judged=Subquery(
                Judgment.objects.filter(conversation=OuterRef("pk"))
                .values("conversation")
                .annotate(n=Count("pk"))
                .values("n"),
                output_field=IntegerField(),
            ),
        )
        .values(
            "scenario_id",
            "target_id",
            "replicate",
            "status",
            "simulated_at",
            "covered",
            "checked",
            "judged",
        )
    }
    work = Work(defaultdict(int), defaultdict(int), defaultdict(int), defaultdict(int), 0, 0)
    keys = [(s, t.pk, r) for s in scenarios for t in targets for r in range(run.replicates)]
    # Conversations a swap study copied stand in for the sample's, whatever their keys.
    planned = set(keys)
    keys += [key for key in stored if key not in planned]
    for scenario_id, target_id, replicate in keys:
        row = stored.get((scenario_id, target_id, replicate))
        if row is not None and row["status"] == ConversationStatus.COMPLETED:
            continue
        work.conversations += 1
        simulated = row is not None and row["simulated_at"] is not None
        work.simulated += simulated
        if not simulated:
            work.to_simulate[target_id] += 1
        if scenario_id in with_anchors and not (row and row["covered"]):
            work.anchor_checks[target_id] += 1
        if not (row and row["checked"]):
            work.fidelity_checks[target_id] += 1
        judged = (row and row["judged"]) or 0
        for seat in seats:
            done = min(seat.repetitions, max(0, judged - seat.first))
            work.judge_readings[seat.index] += seat.repetitions - done
    return work


def prior_tokens(
    purpose: str, turn: int | None, run: EvaluationRun, target: ModelConfiguration | None
):
    """(prompt, completion) tokens of one call with no history, from the plan's rough sizes."""
    reply = plans.ASSISTANT_REPLY_TOKENS
    if target is not None and target.max_tokens:
        reply = min(reply, target.max_tokens)
    exchange = plans.USER_MESSAGE_TOKENS + reply
    if purpose == SIMULATE:
        return plans.SIMULATOR_BRIEF_TOKENS + (turn - 1) * exchange, plans.SIMULATOR_REPLY_TOKENS
    if purpose == TARGET:
        system = len(target.system_prompt) // CHARS_PER_TOKEN if target else 0
        return system + (turn - 1) * exchange + plans.USER_MESSAGE_TOKENS, reply
    if purpose == RUBRIC_REPLY:
        return plans.RUBRIC_ITEM_TOKENS, reply
    if purpose == RUBRIC_GRADES:
        return plans.RUBRIC_ITEM_TOKENS + reply + plans.RUBRIC_CRITERIA_TOKENS, (
            plans.RUBRIC_GRADES_TOKENS
        )
    return plans.JUDGE_INSTRUCTIONS_TOKENS + run.turns * exchange, plans.JUDGE_REPLY_TOKENS
