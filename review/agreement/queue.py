"""Agreement figures of a queue, per question, per metric and per rater.

Every coefficient comes from `stats` (tested there against statsmodels,
scikit-learn and the krippendorff package) and is a `stats.estimates.Estimate` with its
interval and n; this module only lays the ratings out:

* ``labels[item, rater]`` (None where a rater did not rate the item) for the count-based
  figures: percent agreement over items with >= 2 ratings; Fleiss' kappa over items that have
  exactly the required number of ratings (it needs the same number per item);
* ``data[rater, item]`` for Krippendorff's alpha, which takes missing ratings as they are;
  ordinal questions use their scale positions and the ordinal metric, the others nominal;
* bootstrap intervals resample items (a rating is not independent of the other ratings of the
  same item), so agreement and share intervals are clustered by item.

A coefficient that is undefined (a single category used throughout, no pairable item) is an
insufficient estimate, shown as "not enough data", never as a number.
"""

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import median

import numpy as np
from django.conf import settings

import stats
from core.languages import language_display_name, languages_pooled_note
from stats.estimates import Estimate

from ..kinds import FORMS, Question, adapter_for
from ..models import Rating, RatingQueue
from .exports import rater_pseudonym

# Resamples of per-metric Krippendorff intervals (one alpha per resample, hundreds of metrics).
PER_METRIC_RESAMPLES = 200


def _resamples() -> int:
    return int(getattr(settings, "REVIEW_BOOTSTRAP_RESAMPLES", 2000))


def _none(unit: str = "coefficient", n: int = 0) -> Estimate:
    return Estimate.insufficient(n=n, unit=unit)


@dataclass
class RatingsTable:
    """Current ratings of one queue (or one metric within it) for one question."""

    question: Question
    item_ids: list[int]
    rater_ids: list[int]
    labels: np.ndarray  # object array items x raters, None where missing
    required: int

    @property
    def counts(self) -> np.ndarray:
        counts, _ = stats.category_counts(self.labels, categories=np.array(self.question.values))
        return counts

    def numeric(self) -> np.ndarray:
        """Scale positions (ordinal) as floats with nan for missing."""
        out = np.full(self.labels.shape, np.nan)
        for (i, r), value in np.ndenumerate(self.labels):
            if value is not None:
                out[i, r] = self.question.rank(value)
        return out


def _table(ratings: Sequence[Rating], question: Question, required: int) -> RatingsTable | None:
    relevant = [r for r in ratings if question.name in r.answers]
    if not relevant:
        return None
    item_ids = sorted({r.item_id for r in relevant})
    rater_ids = sorted({r.rater_id for r in relevant})
    row = {pk: i for i, pk in enumerate(item_ids)}
    col = {pk: j for j, pk in enumerate(rater_ids)}
    labels = np.full((len(item_ids), len(rater_ids)), None, dtype=object)
    for rating in relevant:
        labels[row[rating.item_id], col[rating.rater_id]] = rating.answers[question.name]
    return RatingsTable(question, item_ids, rater_ids, labels, required)


def percent_agreement(table: RatingsTable) -> Estimate:
    counts = table.counts
    pairable = counts.sum(axis=1) >= 2
    if not pairable.any():
        return _none("proportion")
    # Percent agreement is the mean of the per-item pair agreements: a bootstrap of that mean.
    per_item = stats.pair_agreement(counts)
    return stats.mean_estimate(per_item, unit="proportion", n_resamples=_resamples())


def fleiss(table: RatingsTable) -> Estimate:
    counts = table.counts
    full = counts.sum(axis=1) == table.required
    if table.required < 2 or not full.any():
        return _none()
    return stats.fleiss_estimate(counts[full], n_resamples=_resamples())


def krippendorff(table: RatingsTable, *, resamples: int | None = None) -> Estimate:
    level = table.question.level
    data = (table.numeric() if level == "ordinal" else table.labels).T
    if data.shape[0] < 2:
        return _none(n=int(data.shape[1]))

    def alpha(idx: np.ndarray) -> float:
        try:
            return stats.krippendorff_alpha(data[:, idx], level=level)
        except ValueError:  # a resample without a unit rated twice
            return math.nan

    return stats.resampled_estimate(
        int(data.shape[1]), alpha, n_resamples=resamples or _resamples()
    )


def choice_shares(ratings: Sequence[Rating], question: Question) -> list[dict]:
    """Share of ratings per choice, with an item-clustered bootstrap interval."""
    relevant = [r for r in ratings if question.name in r.answers]
    answers = [r.answers[question.name] for r in relevant]
    clusters = np.array([r.item_id for r in relevant])
    shares = stats.share_estimates(
        answers,
        [c.value for c in question.choices],
        clusters if relevant else None,
        over="rated items",
        n_resamples=_resamples(),
    )
    return [{"choice": c, "estimate": shares[c.value]} for c in question.choices]


def reference_agreement(table: RatingsTable, reference: dict[int, str]) -> dict | None:
    """Experts' majority against the automated judge: Cohen's kappa and share matching."""
    rows = [i for i, pk in enumerate(table.item_ids) if pk in reference]
    if len(rows) < 2:
        return None
    majority = np.array(stats.majority_vote(table.labels[rows]), dtype=object).astype(str)
    judge = np.array([reference[table.item_ids[i]] for i in rows], dtype=object).astype(str)
    return {
        "cohen_kappa": stats.cohen_estimate(majority, judge, n_resamples=_resamples()),
        "majority_matches_judge": stats.proportion_estimate(
            (majority == judge).astype(float), n_resamples=_resamples()
        ),
    }


def rater_agreement_with_majority(table: RatingsTable) -> dict[int, Estimate]:
    """Per rater: share of their ratings that match the majority of the *other* raters.

    Leave-one-out, so a rater is not compared with a majority they helped make; items where
    the others are fewer than two or tied are left out.
    """
    out: dict[int, Estimate] = {}
    counts = table.counts
    values = table.question.values
    for j, rater_id in enumerate(table.rater_ids):
        hits = []
        for i in range(len(table.item_ids)):
            own = table.labels[i, j]
            if own is None:
                continue
            others = counts[i].copy()
            others[values.index(own)] -= 1
            if others.sum() < 2 or (others == others.max()).sum() > 1:
                continue
            hits.append(values[int(others.argmax())] == own)
        out[rater_id] = stats.proportion_estimate(
            np.array(hits, dtype=float), n_resamples=_resamples()
        )
    return out


@dataclass
class QuestionFigures:
    question: Question
    items_rated: int
    ratings: int
    percent_agreement: Estimate
    fleiss_kappa: Estimate
    krippendorff_alpha: Estimate
    shares: list[dict]
    judge: dict | None = None


@dataclass
class QueueFigures:
    questions: list[QuestionFigures] = field(default_factory=list)
    metrics: list[dict] = field(default_factory=list)
    raters: list[dict] = field(default_factory=list)
    # Filled only when the rated items span more than one language: the figures above then
    # pool them, and each language's own figures (with their n) are here.
    languages: list[dict] = field(default_factory=list)

    @property
    def pooled_note(self) -> str:
        """The pooling said in words (pooled across English and Spanish items); "" for one."""
        if not self.languages:
            return ""
        return languages_pooled_note(row["language"] for row in self.languages)


def _questions_for(queue: RatingQueue, ratings: Sequence[Rating]) -> list[Question]:
    """The kind's questions plus item-specific ones (anchors) met in the ratings."""
    questions = list(FORMS.get(queue.kind, ()))
    known = {q.name for q in questions}
    try:
        adapter = adapter_for(queue.kind)
    except Exception:  # noqa: BLE001 - kinds without an adapter have only their base form
        return questions
    seen_items: set[int] = set()
    for rating in ratings:
        if rating.item_id in seen_items or set(rating.answers) <= known:
            continue
        seen_items.add(rating.item_id)
        for question in adapter.questions(rating.item):
            if question.name not in known:
                known.add(question.name)
                questions.append(question)
    return questions


def _figures_for(
    ratings, question, required, reference=None, *, alpha_resamples: int | None = None
) -> QuestionFigures | None:
    table = _table(ratings, question, required)
    if table is None:
        return None
    return QuestionFigures(
        question=question,
        items_rated=len(table.item_ids),
        ratings=sum(1 for r in ratings if question.name in r.answers),
        percent_agreement=percent_agreement(table),
        fleiss_kappa=fleiss(table),
        krippendorff_alpha=krippendorff(table, resamples=alpha_resamples),
        shares=choice_shares(ratings, question),
        judge=reference_agreement(table, reference) if reference else None,
    )


def queue_figures(queue: RatingQueue) -> QueueFigures:
    ratings = list(
        Rating.objects.current().filter(queue=queue).select_related("item", "item__metric")
    )
    figures = QueueFigures()
    if not ratings:
        return figures
    questions = _questions_for(queue, ratings)
    references = _references(queue, ratings)
    required = queue.required_ratings
    for question in questions:
        result = _figures_for(ratings, question, required, references.get(question.name))
        if result is not None:
            figures.questions.append(result)

    by_metric: dict[str, list[Rating]] = defaultdict(list)
    for rating in ratings:
        if rating.item.metric_id:
            by_metric[rating.item.metric.key].append(rating)
    for key in sorted(by_metric):
        rows = by_metric[key]
        # Kappas and shares resample sums (one matrix product); Krippendorff's alpha refits per
        # resample, so per metric it uses fewer resamples (its interval is coarser, not absent).
        per_question = [
            _figures_for(
                rows, q, required, references.get(q.name), alpha_resamples=PER_METRIC_RESAMPLES
            )
            for q in questions
        ]
        figures.metrics.append(
            {
                "key": key,
                "items": len({r.item_id for r in rows}),
                "ratings": len(rows),
                "questions": [f for f in per_question if f is not None],
            }
        )

    figures.languages = _per_language(ratings, questions, required, references)

    primary = _table(ratings, questions[0], required)
    with_majority = rater_agreement_with_majority(primary) if primary else {}
    by_rater: dict[int, list[Rating]] = defaultdict(list)
    for rating in ratings:
        by_rater[rating.rater_id].append(rating)
    for rater_id in sorted(by_rater):
        rows = by_rater[rater_id]
        figures.raters.append(
            {
                "rater": rater_pseudonym(queue, rater_id),
                "count": len(rows),
                "median_seconds": median(r.seconds_spent for r in rows),
                "agreement_with_majority": with_majority.get(rater_id, _none("proportion")),
            }
        )
    return figures


def _per_language(ratings, questions, required, references) -> list[dict]:
    """Each language's own figures, when the rated items span more than one: raters of one
    language agreeing says nothing about raters of another, so no figure may stand for both
    unless it says it pools them."""
    by_language: dict[str, list[Rating]] = defaultdict(list)
    for rating in ratings:
        by_language[rating.item.language].append(rating)
    if len(by_language) < 2:
        return []
    rows = []
    for tag in sorted(by_language):
        subset = by_language[tag]
        per_question = [
            _figures_for(subset, q, required, references.get(q.name)) for q in questions
        ]
        rows.append(
            {
                "language": tag,
                "name": language_display_name(tag),
                "items": len({r.item_id for r in subset}),
                "ratings": len(subset),
                "questions": [f for f in per_question if f is not None],
            }
        )
    return rows


def _references(queue: RatingQueue, ratings: Sequence[Rating]) -> dict[str, dict[int, str]]:
    """question name -> {item id: the judge's answer}, for kinds that have a judge."""
    try:
        adapter = adapter_for(queue.kind)
    except Exception:  # noqa: BLE001
        return {}
    out: dict[str, dict[int, str]] = defaultdict(dict)
    seen: set[int] = set()
    for rating in ratings:
        if rating.item_id in seen:
            continue
        seen.add(rating.item_id)
        for name, value in adapter.reference_answers(rating.item).items():
            out[name][rating.item_id] = value
    return dict(out)
