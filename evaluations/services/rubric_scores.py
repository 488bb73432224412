"""Rubric scores of a run: HealthBench's item scores over the counted criteria, and their
aggregates per target, overall and per behaviour dimension, acuity and population
(`rubrics.scoring`: item scores unclipped, aggregates clipped means with a bootstrap interval
and the number of items).
"""

from collections import defaultdict
from dataclasses import dataclass, field

from rubrics.dimensions import dimension_labels as dimension_labels_read
from rubrics.models import Acuity, Population
from rubrics.scoring import aggregate_estimate, item_score_or_none
from stats.estimates import Estimate, Exclusion

from ..models import ConversationStatus, EvaluationRun, RubricGrade, RubricResponse


def counted_grades(response: RubricResponse) -> list[RubricGrade]:
    """The response's grades of the criteria frozen as counting for it."""
    counted = response.counted_criteria
    grades = list(response.grades.all())
    if counted is None:  # graded before criteria sets were frozen
        return [g for g in grades if g.criterion.counts]
    keep = set(counted)
    return [g for g in grades if g.criterion_id in keep]


def rubric_response_score(response: RubricResponse) -> float | None:
    """The item score over the counted criteria's grades; None without a positive one."""
    grades = counted_grades(response)
    return item_score_or_none([g.criterion.points for g in grades], [g.met for g in grades])


def dimension_scores(grades: list[RubricGrade]) -> dict[str, float]:
    """Per behaviour dimension, the item score over that dimension's criteria alone; a
    dimension without a positive criterion here has none (as simple-evals does for tags)."""
    scores = {}
    for dimension in sorted({g.criterion.dimension for g in grades}):
        mine = [g for g in grades if g.criterion.dimension == dimension]
        score = item_score_or_none([g.criterion.points for g in mine], [g.met for g in mine])
        if score is not None:
            scores[dimension] = score
    return scores


@dataclass
class RubricFigure:
    """One aggregate: its Estimate and HealthBench's bootstrap standard deviation."""

    label: str
    estimate: Estimate
    bootstrap_std: float | None
    key: str = ""  # the dimension, acuity or population slug; "" for the overall score


@dataclass
class RubricTargetScores:
    target: str
    is_offline: bool
    target_id: int | None = None
    items: int = 0
    overall: RubricFigure | None = None
    by_dimension: list[RubricFigure] = field(default_factory=list)
    by_acuity: list[RubricFigure] = field(default_factory=list)
    by_population: list[RubricFigure] = field(default_factory=list)


def _figures(groups: dict[str, list[float]], labels: dict, order, exclusions) -> list:
    figures = []
    for key in order:
        if groups.get(key):
            estimate, std = aggregate_estimate(groups[key])
            figures.append(
                RubricFigure(labels[key], estimate.with_exclusions(exclusions), std, key=key)
            )
    return figures


def run_rubric_scores(*, run: EvaluationRun, language: str = "") -> list[RubricTargetScores]:
    """Per target: overall, per behaviour dimension, per acuity and per population; over the
    items of one language when ``language`` names one (blank: every language).

    Each is HealthBench's aggregate of item scores. A dimension's item score restricts the
    rubric to that dimension's criteria and is left out where no positive criterion remains
    (as simple-evals does for rubric tags). Failed responses and responses with no counted
    positive criterion are listed as exclusions beside every figure.
    """
    responses = (
        run.rubric_responses.select_related("item", "target")
        .prefetch_related("grades__criterion")
        .order_by("target__name", "item__key")
    )
    if language:
        responses = responses.filter(item__language=language)
    by_target: dict[int, RubricTargetScores] = {}
    overall: dict[int, list[float]] = defaultdict(list)
    per_dimension: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    per_acuity: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    per_population: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    failed: dict[int, int] = defaultdict(int)
    unscored: dict[int, int] = defaultdict(int)
    for response in responses:
        scores = by_target.setdefault(
            response.target_id,
            RubricTargetScores(
                target=response.target.name,
                is_offline=response.target.is_offline,
                target_id=response.target_id,
            ),
        )
        if response.status == ConversationStatus.FAILED:
            failed[response.target_id] += 1
            continue
        if response.status != ConversationStatus.COMPLETED:
            continue
        grades = counted_grades(response)
        score = item_score_or_none([g.criterion.points for g in grades], [g.met for g in grades])
        if score is None:
            unscored[response.target_id] += 1
            continue
        scores.items += 1
        overall[response.target_id].append(score)
        per_acuity[response.target_id][response.item.acuity].append(score)
        per_population[response.target_id][response.item.population].append(score)
        for dimension, dimension_score in dimension_scores(grades).items():
            per_dimension[response.target_id][dimension].append(dimension_score)
    for target_id, scores in by_target.items():
        exclusions = [
            Exclusion("response failed", failed[target_id]),
            Exclusion("no counted positive criterion", unscored[target_id]),
        ]
        estimate, std = aggregate_estimate(overall[target_id])
        scores.overall = RubricFigure("Overall", estimate.with_exclusions(exclusions), std)
        scores.by_dimension = _figures(
            per_dimension[target_id],
            dimension_labels_read(),
            sorted(per_dimension[target_id]),
            exclusions,
        )
        scores.by_acuity = _figures(
            per_acuity[target_id], dict(Acuity.choices), Acuity.values, exclusions
        )
        scores.by_population = _figures(
            per_population[target_id], dict(Population.choices), Population.values, exclusions
        )
    return list(by_target.values())
