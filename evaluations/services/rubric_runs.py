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

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import transaction
from django.db.models import Count, Q, Sum

from core.exceptions import ApplicationError
from llm.gateway import chat, structured
from llm.models import LLMCall, ModelRole

from .. import prompts
from ..models import (
    Acuity,
    ConversationStatus,
    EvaluationRun,
    RubricCriterion,
    RubricGrade,
    RubricResponse,
    RunStatus,
)
from ..rubric import aggregate_score, item_score
from ..rubric_dimensions import dimension_labels as dimension_labels_read
from ..schemas import RubricGradeSet
from .simulation import create_unless_present, stable_seed

logger = logging.getLogger(__name__)
UNFINISHED = (ConversationStatus.PENDING, ConversationStatus.RUNNING)


def rubric_response_claim(*, response_id: int) -> RubricResponse | None:
    with transaction.atomic():
        response = (
            RubricResponse.objects.select_for_update()
            .select_related("run")
            .filter(pk=response_id)
            .first()
        )
        if response is None or response.run.status != RunStatus.RUNNING:
            return None
        if response.status not in UNFINISHED:
            return None
        response.status = ConversationStatus.RUNNING
        response.attempts += 1
        response.save(update_fields=["status", "attempts", "updated_at"])
        return response


def _reply_write(response: RubricResponse) -> RubricResponse:
    if response.reply:
        return response
    result = chat(
        configuration=response.target,
        messages=prompts.rubric_target_messages(response.item),
        role=ModelRole.TARGET,
        purpose="evaluations.rubric_reply",
        seed=stable_seed(response.run.seed, "rubric", response.item_id, response.target_id),
    )
    # Written only if no other delivery of the task wrote a reply first.
    RubricResponse.objects.filter(pk=response.pk, reply="").update(
        reply=result.text,
        call_ids=list(result.call_ids),
        is_offline=result.is_offline,
    )
    response.refresh_from_db()
    return response


def _grades_write(response: RubricResponse) -> None:
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


@transaction.atomic
def rubric_response_mark_failed(*, response_id: int, error: str) -> RubricResponse:
    response = RubricResponse.objects.select_for_update().get(pk=response_id)
    if response.status not in UNFINISHED:
        return response
    response.status = ConversationStatus.FAILED
    response.error = error[:5000]
    response.save(update_fields=["status", "error", "updated_at"])
    return response


def rubric_response_process(
    *, response_id: int, check_finished: bool = True
) -> RubricResponse | None:
    """Reply, grade the missing criteria, score. The task body."""
    from .runs import run_check_finished

    response = rubric_response_claim(response_id=response_id)
    if response is None:
        return None
    try:
        response = RubricResponse.objects.select_related("run__judge", "item", "target").get(
            pk=response.pk
        )
        response = _reply_write(response)
        _grades_write(response)
        with transaction.atomic():
            RubricResponse.objects.filter(pk=response.pk, status__in=UNFINISHED).update(
                score=rubric_response_score(response),
                status=ConversationStatus.COMPLETED,
                error="",
            )
        response.refresh_from_db()
    except ApplicationError as error:
        response = rubric_response_mark_failed(response_id=response_id, error=error.message)
    except Exception as error:
        logger.exception("Rubric response %s failed unexpectedly", response_id)
        response = rubric_response_mark_failed(
            response_id=response_id, error=f"{type(error).__name__}: {error}"
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
    dimension_labels = dimension_labels_read()
    acuity_labels = dict(Acuity.choices)
    for target_id, scores in by_target.items():
        scores.overall = _mean(overall[target_id])
        scores.by_dimension = [
            (dimension_labels.get(d, d), aggregate_score(v), len(v))
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


def rubric_usage(run_id: int) -> dict:
    """Calls, tokens and cost of a run's rubric work (target replies and grading), read from
    the call log through the call ids its rows keep."""
    call_ids: set[int] = set()
    for ids in RubricResponse.objects.filter(run_id=run_id).values_list("call_ids", flat=True):
        call_ids.update(ids or [])
    for ids in RubricGrade.objects.filter(response__run_id=run_id).values_list(
        "call_ids", flat=True
    ):
        call_ids.update(ids or [])
    if not call_ids:
        return {"calls": 0, "tokens": 0, "cost": Decimal(0)}
    usage = LLMCall.objects.filter(pk__in=call_ids).aggregate(
        calls=Count("pk"),
        prompt=Sum("prompt_tokens"),
        completion=Sum("completion_tokens"),
        cost=Sum("cost_estimate"),
    )
    return {
        "calls": usage["calls"] or 0,
        "tokens": (usage["prompt"] or 0) + (usage["completion"] or 0),
        "cost": usage["cost"] or Decimal(0),
    }


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
