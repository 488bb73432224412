"""Rubric items in a run: the target's reply to the final user message, graded by the judge.

Grading is one judge call per (item, reply), covering every criterion still in scoring, rather
than one call per criterion. A rubric has 5–15 criteria, so this is 5–15 times fewer judge calls
(and the conversation and reply are sent once, not once per criterion); the judge is told to
grade each criterion on its own, and each grade is stored with its own justification. A grade
missing from the judge's answer fails the response with a message naming the criteria, rather
than being guessed. Criteria dropped by expert consensus are neither graded nor scored; a
criterion dropped after grading keeps its stored grade, and scores are recomputed from grades
so they follow the current consensus.

Like conversations: a response is claimed, the slow calls happen outside transactions, the reply
is written once and grades are unique per (response, criterion), so a re-delivered task
continues where the last one stopped.
"""

import contextlib
import logging
from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Q

from core.exceptions import ApplicationError
from llm.attribution import call_attribution
from llm.gateway import chat, structured
from llm.models import ModelRole

from .. import prompts
from ..models import (
    Acuity,
    BehaviourDimension,
    ConversationStatus,
    EvaluationRun,
    RubricCriterion,
    RubricGrade,
    RubricResponse,
)
from ..rubric import aggregate_score, item_score
from ..schemas import RubricGradeSet
from .claims import Claim, ClaimLost, LeaseHeartbeat, claim_fence, claim_release, claim_take
from .simulation import create_unless_present, stable_seed

logger = logging.getLogger(__name__)
UNFINISHED = (ConversationStatus.PENDING, ConversationStatus.RUNNING)


def _reply_write(response: RubricResponse, claim: Claim | None) -> RubricResponse:
    if response.reply:
        return response
    result = chat(
        configuration=response.target,
        messages=prompts.rubric_target_messages(response.item),
        role=ModelRole.TARGET,
        purpose="evaluations.rubric_reply",
        seed=stable_seed(response.run.seed, "rubric", response.item_id, response.target_id),
    )
    # Written only by the claim's holder, and only if no reply was written first.
    with claim_fence(claim):
        RubricResponse.objects.filter(pk=response.pk, reply="").update(
            reply=result.text,
            call_ids=list(result.call_ids),
            is_offline=result.is_offline,
        )
    response.refresh_from_db()
    return response


def _grades_write(response: RubricResponse, claim: Claim | None) -> None:
    criteria = list(response.item.criteria.filter(dropped=False).order_by("position"))
    graded = set(response.grades.values_list("criterion_id", flat=True))
    if not criteria or all(c.pk in graded for c in criteria):
        return
    result = structured(
        configuration=response.run.judge,
        messages=prompts.rubric_grade_messages(
            item=response.item, criteria=criteria, reply=response.reply
        ),
        schema=RubricGradeSet,
        role=ModelRole.JUDGE,
        purpose="evaluations.rubric_grades",
        # A new seed per attempt: a retry after an unusable grading must not be answered by
        # the response cache with the same grading.
        seed=stable_seed(response.run.seed, "rubric-grade", response.pk, response.attempts),
    )
    by_number = {grade.criterion: grade for grade in result.output.grades}
    missing = [n for n in range(1, len(criteria) + 1) if n not in by_number]
    if missing:
        raise ApplicationError(
            f"The judge graded criteria {sorted(by_number)} but not {missing} of item "
            f"{response.item.key}; retry the response."
        )
    with claim_fence(claim):
        for number, criterion in enumerate(criteria, start=1):
            if criterion.pk in graded:
                continue
            grade = by_number[number]
            create_unless_present(
                RubricGrade,
                lookup={"response": response, "criterion": criterion},
                values={
                    "met": grade.met,
                    "justification": grade.justification.strip(),
                    "call_ids": list(result.call_ids),
                },
            )


def rubric_response_score(response: RubricResponse) -> float | None:
    """The item score over the grades of criteria still in scoring; None without any."""
    grades = [g for g in response.grades.select_related("criterion") if not g.criterion.dropped]
    if not any(g.criterion.points > 0 for g in grades):
        return None
    return item_score([g.criterion.points for g in grades], [g.met for g in grades])


def rubric_response_mark_failed(
    *, response_id: int, error: str, claim: Claim | None = None
) -> RubricResponse:
    try:
        with claim_fence(claim):
            response = RubricResponse.objects.select_for_update().get(pk=response_id)
            if response.status not in UNFINISHED:
                return response
            response.status = ConversationStatus.FAILED
            response.error = error[:5000]
            response.lease_expires_at = None
            response.save(update_fields=["status", "error", "lease_expires_at", "updated_at"])
    except ClaimLost:
        response = RubricResponse.objects.get(pk=response_id)
    return response


def rubric_response_process(
    *, response_id: int, check_finished: bool = True, worker: str = "", heartbeat: bool = False
) -> RubricResponse | None:
    """Reply, grade the missing criteria, score. The task body (failure policy as for
    conversations: permanent errors fail the response, transient ones propagate)."""
    from .processing import is_permanent, run_check_finished

    claim = claim_take(RubricResponse, pk=response_id, worker=worker)
    if claim is None:
        return None
    try:
        response = RubricResponse.objects.select_related("run__judge", "item", "target").get(
            pk=response_id
        )
        with (
            LeaseHeartbeat(claim) if heartbeat else contextlib.nullcontext(),
            call_attribution(run_id=claim.run_id, work_item=claim.work_item, claim=claim.token),
        ):
            response = _reply_write(response, claim)
            _grades_write(response, claim)
        with claim_fence(claim):
            RubricResponse.objects.filter(pk=response.pk, status__in=UNFINISHED).update(
                score=rubric_response_score(response),
                status=ConversationStatus.COMPLETED,
                error="",
                lease_expires_at=None,
            )
        response.refresh_from_db()
    except ClaimLost:
        return None
    except Exception as error:
        if not is_permanent(error):
            claim_release(claim)
            raise
        response = rubric_response_mark_failed(
            response_id=response_id, error=error.message, claim=claim
        )
    if check_finished:
        run_check_finished(run_id=response.run_id)
    return response


# --- Reading the scores -------------------------------------------------------------------------


@dataclass
class RubricTargetScores:
    target: str
    is_offline: bool
    items: int = 0
    overall: float | None = None
    by_dimension: list[tuple[str, float, int]] = field(default_factory=list)
    by_acuity: list[tuple[str, float, int]] = field(default_factory=list)


def _mean(scores: list[float]) -> float | None:
    return aggregate_score(scores) if scores else None


def run_rubric_scores(*, run: EvaluationRun) -> list[RubricTargetScores]:
    """Per target: overall, per behaviour dimension and per acuity (aggregate_score of items).

    A dimension's score restricts each item's rubric to that dimension's criteria and averages
    over the items where that leaves a positive criterion to reach.
    """
    responses = (
        run.rubric_responses.filter(status=ConversationStatus.COMPLETED)
        .select_related("item", "target")
        .prefetch_related("grades__criterion")
        .order_by("target__name", "item__key")
    )
    by_target: dict[int, RubricTargetScores] = {}
    overall: dict[int, list[float]] = defaultdict(list)
    per_dimension: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    per_acuity: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for response in responses:
        scores = by_target.setdefault(
            response.target_id,
            RubricTargetScores(target=response.target.name, is_offline=response.target.is_offline),
        )
        grades = [g for g in response.grades.all() if not g.criterion.dropped]
        if not any(g.criterion.points > 0 for g in grades):
            continue
        score = item_score([g.criterion.points for g in grades], [g.met for g in grades])
        scores.items += 1
        overall[response.target_id].append(score)
        per_acuity[response.target_id][response.item.acuity].append(score)
        dimensions = {g.criterion.dimension for g in grades}
        for dimension in dimensions:
            mine = [g for g in grades if g.criterion.dimension == dimension]
            if any(g.criterion.points > 0 for g in mine):
                per_dimension[response.target_id][dimension].append(
                    item_score([g.criterion.points for g in mine], [g.met for g in mine])
                )
    dimension_labels = dict(BehaviourDimension.choices)
    acuity_labels = dict(Acuity.choices)
    for target_id, scores in by_target.items():
        scores.overall = _mean(overall[target_id])
        scores.by_dimension = [
            (dimension_labels[d], aggregate_score(v), len(v))
            for d, v in sorted(per_dimension[target_id].items())
        ]
        scores.by_acuity = [
            (
                acuity_labels[a],
                aggregate_score(per_acuity[target_id][a]),
                len(per_acuity[target_id][a]),
            )
            for a in Acuity.values
            if per_acuity[target_id].get(a)
        ]
    return list(by_target.values())


def rubric_unfinished_exists(run_id: int) -> bool:
    return RubricResponse.objects.filter(run_id=run_id, status__in=UNFINISHED).exists()


def rubric_counts(run_id: int) -> dict[str, int]:
    from django.db.models import Count

    return RubricResponse.objects.filter(run_id=run_id).aggregate(
        total=Count("pk"),
        completed=Count("pk", filter=Q(status=ConversationStatus.COMPLETED)),
        failed=Count("pk", filter=Q(status=ConversationStatus.FAILED)),
    )


def rubric_criterion_set_dropped(*, criterion_id: int, dropped: bool) -> bool:
    """Record expert consensus on a criterion: a dropped one is left out of grading and scores.

    Returns whether anything changed. Stored grades are kept; scores are recomputed from grades
    of criteria that are not dropped, so the change applies to existing runs as well.
    """
    return bool(
        RubricCriterion.objects.filter(pk=criterion_id)
        .exclude(dropped=dropped)
        .update(dropped=dropped)
    )
