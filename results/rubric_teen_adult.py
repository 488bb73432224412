"""Teen against adult rubric scores: per model, the overall score and each behaviour
dimension's, teen items' figure minus adult items' figure, with its interval and both n.

The demo's (and HealthBench-format) teen and adult rubric items are different situations, not
variants of one base scenario, so nothing pairs them: the difference is of two independent
clipped means (:func:`stats.bounded_means.clipped_mean_difference_interval`, Welch's t with
each side's variance at least the Wilson-type bound, so items that all score alike do not read
as an exact difference; it held the true difference at least 95 % of the time in the suite's
simulation, ``tests/stats/test_bounded_means.py``). Criteria are written per item, so a
criterion has no teen and adult side of its own; the dimension is the finest shared grouping.

Teen items are compared with adult items of the same language only, as the pass rates' teen
and adult variants pair within a language: a run whose items span several languages has one
difference per model and language, never a teen item in one language against an adult item
in another (whose difference would mix the two languages' gap into the teen-adult one).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, Max
from django.utils.translation import get_language, gettext

from core.caches import page_cache_get, page_cache_set
from core.languages import language_display_name
from evaluations.models import ConversationStatus, EvaluationRun, RubricResponse
from evaluations.services.rubric_scores import counted_grades, dimension_scores
from rubrics.dimensions import dimension_labels
from rubrics.models import Population
from rubrics.scoring import item_score_or_none
from stats.bounded_means import WELCH_ITEMS, clipped_mean_difference_interval
from stats.estimates import Estimate

CACHE_SECONDS = 24 * 3600


@dataclass(frozen=True)
class TeenAdultRow:
    key: str  # "" for the overall score, else the dimension slug
    label: str
    estimate: Estimate  # teen minus adult
    n_teen: int
    n_adult: int


@dataclass(frozen=True)
class TeenAdultModel:
    target: str
    target_id: int
    rows: tuple[TeenAdultRow, ...]
    language: str = ""  # the BCP 47 tag of the items compared

    @property
    def language_name(self) -> str:
        return language_display_name(self.language) if self.language else ""


def _difference(teen: list[float], adult: list[float]) -> Estimate:
    n = len(teen) + len(adult)
    found = clipped_mean_difference_interval(teen, adult)
    if found is None:
        return Estimate.insufficient(
            n=n,
            unit="difference",
            method=WELCH_ITEMS,
            reason=f"fewer than two items on a side (teen {len(teen)}, adult {len(adult)})",
        )
    value, low, high, _df = found
    return Estimate(
        value=value, low=low, high=high, method=WELCH_ITEMS, n=n, n_clusters=n, unit="difference"
    )


def rubric_teen_adult(run: EvaluationRun, language: str = "") -> list[TeenAdultModel]:
    """Per model (by name) and language of the items, the overall and per-dimension
    teen-minus-adult differences; those of ``language`` alone when one is named."""
    responses = run.rubric_responses.filter(
        status=ConversationStatus.COMPLETED,
        item__population__in=[Population.TEEN, Population.ADULT],
    )
    if language:
        responses = responses.filter(item__language=language)
    responses = responses.select_related("item", "target").prefetch_related("grades__criterion")
    # scores[(target, language)][key][population] -> item scores
    scores: dict[tuple[int, str], dict[str, dict[str, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    names: dict[int, str] = {}
    for response in responses:
        names[response.target_id] = response.target.name
        grades = counted_grades(response)
        mine = scores[(response.target_id, response.item.language)]
        population = response.item.population
        score = item_score_or_none([g.criterion.points for g in grades], [g.met for g in grades])
        if score is None:
            continue
        mine[""][population].append(score)
        for dimension, value in dimension_scores(grades).items():
            mine[dimension][population].append(value)
    labels = dimension_labels()
    models = []
    for (target_id, tag), groups in scores.items():
        rows = []
        for key in ["", *sorted(k for k in groups if k)]:
            teen, adult = groups[key][Population.TEEN], groups[key][Population.ADULT]
            rows.append(
                TeenAdultRow(
                    key,
                    labels.get(key, key) if key else gettext("Overall"),
                    _difference(teen, adult),
                    len(teen),
                    len(adult),
                )
            )
        models.append(TeenAdultModel(names[target_id], target_id, tuple(rows), tag))
    return sorted(models, key=lambda m: (m.target.casefold(), m.language))


def public_rubric_teen_adult(run: EvaluationRun, language: str = "") -> list[TeenAdultModel]:
    """`rubric_teen_adult` in the page cache, under the replies' count and last change (and
    the reader's language: the labels are words)."""
    stamp = RubricResponse.objects.filter(run=run).aggregate(n=Count("pk"), last=Max("updated_at"))
    last = stamp["last"].timestamp() if stamp["last"] else 0
    words = get_language()
    key = f"rubric-teen-adult:{run.pk}:{language}:{words}:{stamp['n']}:{last:.6f}"
    found = page_cache_get(key)
    if found is None:
        found = rubric_teen_adult(run, language)
        page_cache_set(key, found, CACHE_SECONDS)
    return found
