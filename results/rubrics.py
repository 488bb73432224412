"""Public rubric results: which runs show them, the figures per model (overall, per behaviour
dimension, acuity and population), the items behind any figure, and one graded reply with every
criterion, counted or excluded and why. Read by the public pages and the API alike.

A run's rubric results are public when the run is (official, completed, of a published release:
chosen like official metric runs). Scores are HealthBench's (`rubrics.scoring`): each figure is
the mean of unclipped item scores clipped to [0, 1], with an interval over items that keeps its
width and coverage with few items (every rubric item is its own conversation, so items are the
clusters) and n.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Exists, Max, OuterRef, Prefetch, QuerySet
from django.utils.translation import gettext, gettext_lazy, pgettext_lazy

from core.caches import page_cache_get, page_cache_set
from core.ids import identifier_parse
from evaluations.models import (
    ConversationStatus,
    EvaluationRun,
    RubricGrade,
    RubricResponse,
    RunStatus,
)
from evaluations.services.rubric_scores import (
    RubricFigure,
    RubricTargetScores,
    counted_grades,
    dimension_scores,
    run_rubric_scores,
)
from metrics_registry.models import ReleaseStatus
from review.models import CriterionConsensus
from rubrics.dimensions import DIMENSIONS
from rubrics.models import Acuity, Population, ReleaseRubricFreeze, RubricCriterion
from rubrics.scoring import item_score_or_none

from .charts import ForestRow, forest_svg
from .rubric_teen_adult import TeenAdultModel, public_rubric_teen_adult

FRAMEWORKS = {slug: frameworks for slug, _name, frameworks, _ in DIMENSIONS}
SECTIONS = (
    ("dimension", gettext_lazy("Behaviour dimension")),
    ("acuity", pgettext_lazy("rubric item", "Acuity")),
    ("population", pgettext_lazy("rubric item", "Population")),
)
WHAT_THEY_ARE = gettext_lazy(
    # The "%" signs are percentages, not placeholders: xgettext:no-python-format
    "Each score is HealthBench's: for every rubric item the points of the criteria the reply "
    "met, divided by the points it could reach (not clipped, so harmful replies go below zero); "
    "a figure is the mean of those item scores clipped to [0, 1], with a 95 % interval over "
    "items (the wider of a t interval and a Wilson interval, so a handful of perfect replies "
    "never reads as a certain perfect score; it held the true score at least 93 % of the time "
    "in simulation, from two items up) and n, the number of items. The items are defined synthetic "
    "conversations; only the model's final reply is graded, by an automated grader, against "
    "criteria that survived expert consensus (or were validated by a published benchmark) when "
    "the release was published."
)
WHAT_THEY_ARE_NOT = gettext_lazy(
    "They are not a ranking, not a measure of clinical safety or of suitability for therapy, and "
    "say nothing about long conversations or real use. Overlapping intervals are not evidence "
    "that two models are the same."
)


def rubric_run_languages(run: EvaluationRun) -> list[str]:
    """The languages of the run's rubric items (sorted tags). One query."""
    return sorted(
        RubricResponse.objects.filter(run=run)
        .order_by()
        .values_list("item__language", flat=True)
        .distinct()
    )


def public_rubric_runs() -> QuerySet[EvaluationRun]:
    """Official, completed runs of published releases that graded rubric replies, newest first."""
    return (
        EvaluationRun.objects.filter(
            is_official=True,
            status=RunStatus.COMPLETED,
            release__status=ReleaseStatus.PUBLISHED,
        )
        .filter(Exists(RubricResponse.objects.filter(run=OuterRef("pk"))))
        .select_related("release")
        .order_by("-release__major", "-release__minor", "-release__patch", "-finished_at", "-pk")
    )


def public_rubric_run(run_id: str | int | None) -> EvaluationRun | None:
    """The public rubric run asked for, or the latest; None for anything else."""
    runs = public_rubric_runs()
    pk = identifier_parse(run_id, name="run")
    if pk is None:
        return runs.first()
    return runs.filter(pk=pk).first()


@dataclass
class RubricChart:
    """One figure per group (a dimension, an acuity, a population): models side by side."""

    section: str
    key: str
    label: str
    frameworks: list[str]
    rows: list[tuple[RubricTargetScores, RubricFigure | None]]
    svg: str = ""


@dataclass
class RubricResults:
    run: EvaluationRun
    targets: list[RubricTargetScores]
    overall_svg: str
    sections: dict[str, list[RubricChart]] = field(default_factory=dict)
    frozen_criteria: int | None = None
    teen_adult: list[TeenAdultModel] = field(default_factory=list)

    @property
    def teen_adult_languages(self) -> list[str]:
        """The languages the teen-adult differences are given apart for."""
        return sorted({m.language for m in self.teen_adult})


def items_query(run: EvaluationRun, **filters: str | int | None) -> str:
    """The query string of the items behind a figure."""
    parts = [f"run={run.pk}"] + [f"{k}={v}" for k, v in filters.items() if v not in (None, "")]
    return "?" + "&".join(parts)


def _group_label(section: str, key: str, stored: str) -> str:
    """The group's name in the reader's language: acuities and populations are the interface's
    words (the cached scores carry them in English); dimensions are data, shown as stored."""
    if section == "acuity" and key in Acuity.values:
        return str(Acuity(key).label)
    if section == "population" and key in Population.values:
        return str(Population(key).label)
    return stored


def _charts(
    run: EvaluationRun, targets: list[RubricTargetScores], section: str, items_url: str
) -> list[RubricChart]:
    attribute = f"by_{section}"
    keys: dict[str, str] = {}
    for target in targets:
        for figure in getattr(target, attribute):
            keys.setdefault(figure.key, figure.label)
    order = {
        "dimension": [slug for slug, *_ in DIMENSIONS],
        "acuity": Acuity.values,
        "population": Population.values,
    }[section]
    charts = []
    for key in sorted(keys, key=lambda k: (order.index(k) if k in order else len(order), k)):
        rows = [
            (target, next((f for f in getattr(target, attribute) if f.key == key), None))
            for target in targets
        ]
        chart = RubricChart(
            section, key, _group_label(section, key, keys[key]), FRAMEWORKS.get(key, []), rows
        )
        title = gettext("%(group)s: rubric score per model") % {"group": chart.label}
        chart.svg = forest_svg(
            [
                ForestRow(
                    target.target,
                    figure.estimate,
                    href=items_url + items_query(run, model=target.target_id, **{section: key}),
                )
                for target, figure in rows
                if figure is not None
            ],
            title=title,
            unit="score",
        )
        charts.append(chart)
    return charts


SCORES_CACHE_SECONDS = 24 * 3600


def public_rubric_scores(run: EvaluationRun, language: str = "") -> list[RubricTargetScores]:
    """`run_rubric_scores`, kept in the shared cache: an official run's graded replies and its
    frozen rubric do not change, and the bootstraps behind its figures take seconds. The key
    carries the replies' count and last change, so a retried reply is seen at once."""
    stamp = RubricResponse.objects.filter(run=run).aggregate(n=Count("pk"), last=Max("updated_at"))
    last = stamp["last"].timestamp() if stamp["last"] else 0
    key = f"rubric-scores:{run.pk}:{language}:{stamp['n']}:{last:.6f}"
    scores = page_cache_get(key)
    if scores is None:
        scores = run_rubric_scores(run=run, language=language)
        page_cache_set(key, scores, SCORES_CACHE_SECONDS)
    return scores


def rubric_results(run: EvaluationRun, *, items_url: str, language: str = "") -> RubricResults:
    """Every figure of the run's rubric results, with charts linking to the items behind them;
    over one language's items when ``language`` names one."""
    targets = sorted(public_rubric_scores(run, language), key=lambda t: t.target.casefold())
    overall_svg = forest_svg(
        [
            ForestRow(
                t.target, t.overall.estimate, href=items_url + items_query(run, model=t.target_id)
            )
            for t in targets
            if t.overall is not None
        ],
        title=gettext("Overall rubric score per model (models in alphabetical order, not ranked)"),
        unit="score",
    )
    freeze = ReleaseRubricFreeze.objects.filter(release_id=run.release_id).first()
    return RubricResults(
        run=run,
        targets=targets,
        overall_svg=overall_svg,
        sections={s: _charts(run, targets, s, items_url) for s, _ in SECTIONS},
        frozen_criteria=freeze.criteria.count() if freeze else None,
        teen_adult=public_rubric_teen_adult(run, language),
    )


# --- The items behind a figure -----------------------------------------------------------------


@dataclass
class ResponseRow:
    response: RubricResponse
    score: float | None  # the item score, or the dimension's score when one is asked for
    excluded: str = ""


def _graded_responses() -> QuerySet[RubricResponse]:
    return RubricResponse.objects.select_related("item", "target", "run").prefetch_related(
        Prefetch("grades", queryset=RubricGrade.objects.select_related("criterion"))
    )


def public_rubric_responses(
    run: EvaluationRun,
    *,
    target: str | int | None = None,
    dimension: str = "",
    acuity: str = "",
    population: str = "",
    language: str = "",
) -> list[ResponseRow]:
    """The run's rubric replies behind a figure, each with the score that entered it; replies
    that entered no figure (failed, or no counted positive criterion) say why. `language`
    keeps the replies to items in that language."""
    responses = _graded_responses().filter(run=run).order_by("item__key", "target__name")
    if language:
        responses = responses.filter(item__language=language)
    if target not in (None, ""):
        responses = responses.filter(target_id=int(target))
    if acuity:
        responses = responses.filter(item__acuity=acuity)
    if population:
        responses = responses.filter(item__population=population)
    rows = []
    for response in responses:
        if response.status == ConversationStatus.FAILED:
            rows.append(ResponseRow(response, None, gettext("response failed")))
            continue
        if response.status != ConversationStatus.COMPLETED:
            rows.append(ResponseRow(response, None, gettext("not finished")))
            continue
        grades = counted_grades(response)
        if dimension:
            if not any(g.criterion.dimension == dimension for g in grades):
                continue  # not behind this dimension's figure at all
            score = dimension_scores(grades).get(dimension)
            reason = (
                ""
                if score is not None
                else gettext("no counted positive criterion of this dimension")
            )
        else:
            score = item_score_or_none(
                [g.criterion.points for g in grades], [g.met for g in grades]
            )
            reason = "" if score is not None else gettext("no counted positive criterion")
        rows.append(ResponseRow(response, score, reason))
    return rows


def public_rubric_response(pk: int) -> RubricResponse | None:
    """A rubric reply of a public run, with its grades."""
    return _graded_responses().filter(run__in=public_rubric_runs().values("pk"), pk=pk).first()


@dataclass
class CriterionRow:
    criterion: RubricCriterion
    grade: RubricGrade | None
    counted: bool
    why: str


def _why(criterion: RubricCriterion, counted: bool, consensus: CriterionConsensus | None) -> str:
    """Why a criterion counted or not, in the reader's language."""
    tally = (
        " "
        + gettext("(%(reviews)d reviews: %(agrees)d agree, %(contradicts)d contradict)")
        % {
            "reviews": consensus.reviews,
            "agrees": consensus.agrees,
            "contradicts": consensus.contradicts,
        }
        if consensus
        else ""
    )
    if counted:
        if criterion.source_validated:
            return gettext("counted: validated by the published benchmark it comes from")
        return gettext("counted: survived expert consensus") + tally
    if criterion.consensus_state == "dropped":
        return gettext("excluded: dropped by expert consensus") + tally
    if criterion.consensus_state == "survived":
        return (
            gettext("excluded: reached consensus only after the release froze its rubric") + tally
        )
    return gettext("excluded: awaiting expert consensus when the reply was graded")


def rubric_response_criteria(response: RubricResponse) -> list[CriterionRow]:
    """Every criterion of the item, in order: its grade, whether it counted, and why."""
    grades = {g.criterion_id: g for g in response.grades.all()}
    counted = (
        set(response.counted_criteria)
        if response.counted_criteria is not None
        else {g.criterion_id for g in counted_grades(response)}
    )
    criteria = list(response.item.criteria.order_by("position"))
    consensus = {
        c.criterion_id: c
        for c in CriterionConsensus.objects.filter(criterion__in=[c.pk for c in criteria])
    }
    return [
        CriterionRow(
            criterion,
            grades.get(criterion.pk),
            criterion.pk in counted,
            _why(criterion, criterion.pk in counted, consensus.get(criterion.pk)),
        )
        for criterion in criteria
    ]
