"""A reply to a rubric item and its grading, as steps the batch engine drives (`steps`).

The target answers the item's final user message (`rubric_reply_steps`); the grader then calls
once per criterion, HealthBench's way and the default, those calls of one reply at once
(`Together`), or once for all criteria (a run option; `rubric_grade_steps`). How often the two
modes disagree is measured on a sample (`grading_modes_compare`).

Which criteria are graded is frozen on the response when grading begins
(`RubricResponse.counted_criteria`): criteria validated by their source or that survived expert
consensus at that moment, or, in a run of a published release, the criteria frozen when it was
published (`rubrics.services.freeze`). Later reviews change what new runs grade, never a stored
score.

A criterion counts as met only when the grader quotes the reply's words that show it (found in
the reply, not content-free: `evidence_support.grade_quote_supports`). A "met" without such a
quote is asked once more; if still unsupported the grade is stored with `met` false and
`evidence_status` "unsupported", so scores treat it as not met and pages can count it.
"""

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from core.rows import stable_seed
from llm.exceptions import LLMError
from llm.models import ModelConfiguration, ModelRole
from rubrics.models import RubricCriterion
from rubrics.services.freeze import release_counted_criteria
from stats import bootstrap_ci
from stats.estimates import Estimate

from .. import rubric_prompts as prompts
from ..crisis_selectors import country_crisis_lines
from ..evidence_support import GradeEvidence, grade_quote_supports
from ..models import RubricGrade, RubricGrading, RubricResponse
from ..rubric_schemas import CriterionVerdict, RubricGradeSet
from .steps import Ask, Steps, Store, Together, drive_sync


def counting_criteria_ids(responses: list[RubricResponse]) -> dict[int, list[int]]:
    """The criteria that count now for each response's item (as frozen by its run's release,
    if published), by response: one read per release."""
    items_by_release: dict[int | None, set[int]] = defaultdict(set)
    for response in responses:
        items_by_release[response.run.release_id].add(response.item_id)
    counting: dict[tuple[int | None, int], list[int]] = defaultdict(list)
    for release_id, item_ids in items_by_release.items():
        criteria = release_counted_criteria(release_id=release_id).filter(item_id__in=item_ids)
        for item_id, pk in criteria.order_by("pk").values_list("item_id", "pk"):
            counting[(release_id, item_id)].append(pk)
    return {r.pk: counting[(r.run.release_id, r.item_id)] for r in responses}


def response_counted_criteria_freeze(responses: list[RubricResponse]) -> None:
    """Freeze the criteria that count for each response not yet graded (first use): one
    statement per distinct set. The engine writes a new reply's set with the reply instead
    (`rubric_replies_write`)."""
    todo = [response for response in responses if response.counted_criteria is None]
    if not todo:
        return
    by_set: dict[tuple[int, ...], list[int]] = defaultdict(list)
    for pk, ids in counting_criteria_ids(todo).items():
        by_set[tuple(ids)].append(pk)
    for ids, pks in by_set.items():
        # Only the first writer freezes the set; a re-delivered task reads it back.
        RubricResponse.objects.filter(pk__in=pks, counted_criteria__isnull=True).update(
            counted_criteria=list(ids)
        )
    stored = dict(
        RubricResponse.objects.filter(pk__in=[r.pk for r in todo]).values_list(
            "pk", "counted_criteria"
        )
    )
    for response in todo:
        response.counted_criteria = stored[response.pk]


def response_counted_criteria(response: RubricResponse) -> list[RubricCriterion]:
    """The criteria that count for this response, frozen on first use."""
    response_counted_criteria_freeze([response])
    return list(
        RubricCriterion.objects.filter(pk__in=response.counted_criteria).order_by("position")
    )


def rubric_reply_steps(*, response: RubricResponse) -> Steps:
    """The target's reply to the item's conversation; returns the chat result."""
    return (
        yield Ask(
            configuration=response.target,
            messages=prompts.rubric_target_messages(response.item),
            role=ModelRole.TARGET,
            purpose="evaluations.rubric_reply",
            seed=stable_seed(response.run.seed, "rubric", response.item_id, response.target_id),
        )
    )


def _grade_evidence(met: bool, quote: str, reply: str) -> GradeEvidence:
    if not met:
        return GradeEvidence.NOT_NEEDED
    supported = grade_quote_supports(quote, reply)
    return GradeEvidence.SUPPORTED if supported else GradeEvidence.UNSUPPORTED


def _crisis_lines(response: RubricResponse, criteria: list[RubricCriterion]) -> dict:
    """The lines of each country a crisis-resources criterion is graded for (country → lines):
    loaded for the engine with the replies (`crisis_lines_preload`), else read now."""
    return {
        country: country_crisis_lines(country)
        for country in prompts.crisis_countries(response.item, criteria)
    }


def _criterion_steps(
    response: RubricResponse, criterion: RubricCriterion, judge: ModelConfiguration
) -> Steps:
    """One grader call for one criterion, and its grade stored.

    Its seed is the same on every attempt: a grade once stored is never asked again, and a
    reply that was recorded but not stored (a worker killed in between) answers the same
    request again from the cache instead of a second call. A "met" without a quote of the
    reply showing it is asked once more; if still unsupported it is stored as not met, with
    its status saying why."""
    messages = prompts.rubric_criterion_grade_messages(
        item=response.item,
        criterion=criterion,
        reply=response.reply,
        crisis_lines=_crisis_lines(response, [criterion]),
    )
    seed = stable_seed(response.run.seed, "rubric-grade", response.pk, criterion.pk)
    ask = {
        "configuration": judge,
        "schema": CriterionVerdict,
        "role": ModelRole.JUDGE,
        "purpose": "evaluations.rubric_grade",
    }
    result = yield Ask(messages=messages, seed=seed, **ask)
    calls = list(result.calls)
    status = _grade_evidence(result.output.criteria_met, result.output.quote, response.reply)
    reasked = status == GradeEvidence.UNSUPPORTED
    if reasked:
        try:
            again = yield Ask(
                messages=prompts.rubric_evidence_reask_messages(messages, [1]),
                seed=stable_seed(seed, "evidence"),
                **ask,
            )
        except LLMError:
            again = None  # the first grade stands, stored as unsupported
        if again is not None:
            result, calls = again, [*calls, *again.calls]
            status = _grade_evidence(again.output.criteria_met, again.output.quote, response.reply)
    grade = RubricGrade(
        response=response,
        criterion=criterion,
        met=status == GradeEvidence.SUPPORTED,
        justification=result.output.explanation.strip(),
        quote=result.output.quote.strip(),
        evidence_status=status,
        reasked_for_evidence=reasked,
    )
    yield Store(rows=[grade], unique=("response_id", "criterion_id"), calls={"call_ids": calls})


def _all_criteria_steps(
    response: RubricResponse,
    criteria: list[RubricCriterion],
    judge: ModelConfiguration,
    salt: object,
) -> Steps:
    """One grader call for all criteria; returns (criterion id → (met, justification)) and the
    call's result; raises when a criterion is missing from the answer."""
    grades, result = yield from _all_criteria_call(response, criteria, judge, salt)
    return {pk: (grade.met, grade.justification) for pk, grade in grades.items()}, result


def _all_criteria_call(
    response: RubricResponse,
    criteria: list[RubricCriterion],
    judge: ModelConfiguration,
    salt: object,
    messages: list[dict] | None = None,
) -> Steps:
    """One grader call for all criteria: (criterion id → its grade as answered, the result)."""
    result = yield Ask(
        configuration=judge,
        messages=messages
        or prompts.rubric_grade_messages(
            item=response.item,
            criteria=criteria,
            reply=response.reply,
            crisis_lines=_crisis_lines(response, criteria),
        ),
        schema=RubricGradeSet,
        role=ModelRole.JUDGE,
        purpose="evaluations.rubric_grades",
        seed=stable_seed(response.run.seed, "rubric-grade", response.pk, salt),
    )
    by_number = {grade.criterion: grade for grade in result.output.grades}
    missing = [n for n in range(1, len(criteria) + 1) if n not in by_number]
    if missing:
        raise ApplicationError(
            _(
                "The judge graded criteria %(graded)s but not %(missing)s of "
                "item %(item_key)s; retry the response."
            )
            % {"graded": sorted(by_number), "missing": missing, "item_key": response.item.key}
        )
    return {c.pk: by_number[n] for n, c in enumerate(criteria, start=1)}, result


def rubric_grade_steps(
    *, response: RubricResponse, criteria: list[RubricCriterion], graded: set[int]
) -> Steps:
    """Grade every counted criterion not in `graded`, in the run's grading mode; each grade is
    stored under the claim's fence (unique per response and criterion)."""
    todo = [c for c in criteria if c.pk not in graded]
    if not todo:
        return
    judge = response.run.judge
    if response.run.rubric_grading == RubricGrading.ALL_IN_ONE:
        # A new seed per attempt: a retry after a grade was missing must not be answered by
        # the cache with the same incomplete grades.
        salt = response.attempts
        grades, result = yield from _all_criteria_call(response, criteria, judge, salt)
        calls = list(result.calls)
        status = {pk: _grade_evidence(g.met, g.quote, response.reply) for pk, g in grades.items()}
        numbers = [
            n
            for n, c in enumerate(criteria, start=1)
            if c in todo and status[c.pk] == GradeEvidence.UNSUPPORTED
        ]
        reasked: set[int] = set()
        if numbers:
            messages = prompts.rubric_evidence_reask_messages(
                prompts.rubric_grade_messages(
                    item=response.item,
                    criteria=criteria,
                    reply=response.reply,
                    crisis_lines=_crisis_lines(response, criteria),
                ),
                numbers,
            )
            reasked = {criteria[n - 1].pk for n in numbers}
            try:
                again, second = yield from _all_criteria_call(
                    response, criteria, judge, (salt, "evidence"), messages
                )
            except (LLMError, ApplicationError):
                again = None  # the first grades stand, the unquoted ones stored unsupported
            if again is not None:
                calls += second.calls
                # Only the criteria that lacked a quote take the second answer: the others
                # were already graded with their evidence.
                for pk in reasked:
                    grades[pk] = again[pk]
                    status[pk] = _grade_evidence(again[pk].met, again[pk].quote, response.reply)
        rows = [
            RubricGrade(
                response=response,
                criterion=c,
                met=status[c.pk] == GradeEvidence.SUPPORTED,
                justification=grades[c.pk].justification.strip(),
                quote=grades[c.pk].quote.strip(),
                evidence_status=status[c.pk],
                reasked_for_evidence=c.pk in reasked,
            )
            for c in todo
        ]
        yield Store(rows=rows, calls={"call_ids": calls})
        return
    yield Together([_criterion_steps(response, c, judge) for c in todo])


@dataclass(frozen=True)
class GradingModeComparison:
    """Per-criterion grades (stored) against an all-in-one grading of the same replies."""

    disagreement: Estimate
    responses: int
    criteria: int
    disagreeing: int


def grading_modes_compare(
    responses: list[RubricResponse], *, judge: ModelConfiguration | None = None
) -> GradingModeComparison:
    """Grade each response again all-in-one and count criteria graded differently.

    The share of disagreeing criterion grades carries a bootstrap interval clustered by
    response (the criteria of one reply are not independent).
    """
    flags: list[float] = []
    clusters: list[int] = []
    for response in responses:
        stored = {g.criterion_id: g.met for g in response.grades.all()}
        criteria = [c for c in response_counted_criteria(response) if c.pk in stored]
        if not criteria:
            continue
        other, _result = drive_sync(
            _all_criteria_steps(response, criteria, judge or response.run.judge, "mode-comparison")
        )
        for criterion in criteria:
            flags.append(float(stored[criterion.pk] != other[criterion.pk][0]))
            clusters.append(response.pk)
    n_responses = len(set(clusters))
    method = "share of criterion grades that differ; bootstrap over responses"
    if not flags:
        estimate = Estimate.insufficient(n=0, method=method)
    elif n_responses < 2:
        estimate = Estimate(value=float(np.mean(flags)), n=len(flags), n_clusters=1, method=method)
    else:
        low, high = bootstrap_ci(flags, clusters=clusters, n_resamples=2000, seed=0)
        estimate = Estimate(
            value=float(np.mean(flags)),
            low=low,
            high=high,
            n=len(flags),
            n_clusters=n_responses,
            method=method,
        )
    return GradingModeComparison(
        disagreement=estimate,
        responses=n_responses,
        criteria=len(flags),
        disagreeing=int(sum(flags)),
    )
