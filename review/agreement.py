"""Agreement figures of a queue, per question, per metric and per rater.

Every coefficient comes from `results.statistics` (tested there against statsmodels,
scikit-learn and the krippendorff package); this module only lays the ratings out:

* ``labels[item, rater]`` (None where a rater did not rate the item) for the count-based
  figures: percent agreement over items with >= 2 ratings; Fleiss' kappa over items that have
  exactly the required number of ratings (it needs the same number per item);
* ``data[rater, item]`` for Krippendorff's alpha, which takes missing ratings as they are;
  ordinal questions use their scale positions and the ordinal metric, the others nominal;
* bootstrap intervals resample items (a rating is not independent of the other ratings of the
  same item), so agreement and share intervals are clustered by item.

A coefficient that is undefined (a single category used throughout, no pairable item, a
resample without variation) is reported as None, shown as "—", never as a number.
"""

import math
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from statistics import median

import numpy as np
from django.conf import settings
from django.utils.crypto import salted_hmac

from results import statistics as stats

from .kinds import FORMS, Question, adapter_for
from .models import QueueItem, Rating, RatingQueue


def _resamples() -> int:
    return int(getattr(settings, "REVIEW_BOOTSTRAP_RESAMPLES", 2000))


@dataclass(frozen=True)
class Estimate:
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0

    @property
    def defined(self) -> bool:
        return self.value is not None


def _finite(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _interval_over_items(n_items: int, statistic: Callable[[np.ndarray], float]):
    """Percentile bootstrap of `statistic(item_indices)` resampling items with replacement."""
    if n_items < 2:
        return None, None
    low, high = stats.bootstrap_ci(
        np.arange(n_items, dtype=float),
        n_resamples=_resamples(),
        statistic=lambda drawn: statistic(drawn.astype(int)),
    )
    return _finite(low), _finite(high)


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
        return Estimate(None)
    c = counts[pairable]
    value = stats.percent_agreement(c)
    if len(c) < 2:
        return Estimate(value, n=1)
    # Percent agreement is the mean of the per-item pair agreements, so resampling items is
    # the plain (vectorised) bootstrap of those per-item values.
    per_item = (c * (c - 1)).sum(axis=1) / (c.sum(axis=1) * (c.sum(axis=1) - 1.0))
    low, high = stats.bootstrap_ci(per_item, n_resamples=_resamples())
    return Estimate(value, _finite(low), _finite(high), n=len(c))


def fleiss(table: RatingsTable, *, intervals: bool = True) -> Estimate:
    counts = table.counts
    full = counts.sum(axis=1) == table.required
    if table.required < 2 or full.sum() < 2:
        return Estimate(None)
    c = counts[full]
    value = _finite(stats.fleiss_kappa(c))
    if not intervals:
        return Estimate(value, n=len(c))
    low, high = _interval_over_items(len(c), lambda idx: stats.fleiss_kappa(c[idx]))
    return Estimate(value, low, high, n=len(c))


def krippendorff(table: RatingsTable, *, intervals: bool = True) -> Estimate:
    level = table.question.level
    data = (table.numeric() if level == "ordinal" else table.labels).T
    if data.shape[0] < 2:
        return Estimate(None)
    try:
        value = _finite(stats.krippendorff_alpha(data, level=level))
    except ValueError:  # no unit with two ratings yet
        return Estimate(None)
    if not intervals:
        return Estimate(value, n=int(data.shape[1]))

    def resampled(idx: np.ndarray) -> float:
        try:
            return stats.krippendorff_alpha(data[:, idx], level=level)
        except ValueError:
            return math.nan

    low, high = _interval_over_items(data.shape[1], resampled)
    return Estimate(value, low, high, n=int(data.shape[1]))


def choice_shares(ratings: Sequence[Rating], question: Question) -> list[dict]:
    """Share of ratings per choice, with an item-clustered bootstrap interval."""
    relevant = [r for r in ratings if question.name in r.answers]
    out = []
    for choice in question.choices:
        hits = np.array([r.answers[question.name] == choice.value for r in relevant], float)
        if not len(hits):
            out.append({"choice": choice, "estimate": Estimate(None)})
            continue
        clusters = np.array([r.item_id for r in relevant])
        low = high = None
        if len(set(clusters.tolist())) >= 2:
            low, high = stats.bootstrap_ci(hits, clusters=clusters, n_resamples=_resamples())
        out.append(
            {"choice": choice, "estimate": Estimate(float(hits.mean()), low, high, len(hits))}
        )
    return out


def reference_agreement(table: RatingsTable, reference: dict[int, str]) -> dict | None:
    """Experts' majority against the automated judge: Cohen's kappa and share matching."""
    rows = [i for i, pk in enumerate(table.item_ids) if pk in reference]
    if len(rows) < 2:
        return None
    majority = stats.majority_vote(table.labels[rows])
    judge = np.array([reference[table.item_ids[i]] for i in rows], dtype=object)
    majority = np.array(majority, dtype=object)
    kappa = _finite(stats.cohen_kappa(majority.astype(str), judge.astype(str)))
    match = (majority == judge).astype(float)
    low, high = _interval_over_items(len(rows), lambda idx: float(match[idx].mean()))
    return {
        "cohen_kappa": Estimate(kappa, n=len(rows)),
        "majority_matches_judge": Estimate(float(match.mean()), low, high, len(rows)),
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
        out[rater_id] = Estimate(float(np.mean(hits)) if hits else None, n=len(hits))
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
    ratings, question, required, reference=None, *, coefficient_intervals: bool = True
) -> QuestionFigures | None:
    table = _table(ratings, question, required)
    if table is None:
        return None
    return QuestionFigures(
        question=question,
        items_rated=len(table.item_ids),
        ratings=sum(1 for r in ratings if question.name in r.answers),
        percent_agreement=percent_agreement(table),
        fleiss_kappa=fleiss(table, intervals=coefficient_intervals),
        krippendorff_alpha=krippendorff(table, intervals=coefficient_intervals),
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
        # Per metric the kappa/alpha intervals (one bootstrap fit per resample) would cost a
        # page load seconds per metric; the queue-level ones above carry the uncertainty.
        per_question = [
            _figures_for(rows, q, required, references.get(q.name), coefficient_intervals=False)
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
                "agreement_with_majority": with_majority.get(rater_id, Estimate(None)),
            }
        )
    return figures


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


EXPORT_COLUMNS_BASE = [
    "queue_id",
    "kind",
    "item_id",
    "object_id",
    "object_id_b",
    "metric_key",
    "subarea",
    "age_context",
    "model",
    "rater",
    "submitted_at",
    "seconds_spent",
    "undone",
]


def rater_pseudonym(queue: RatingQueue, rater_id: int) -> str:
    """A stable name for a rater within one queue that reveals neither the account nor links
    the same rater across queues: an HMAC keyed by the site secret, salted per queue."""
    digest = salted_hmac("review.rater-pseudonym", f"{queue.pk}:{rater_id}").hexdigest()
    return f"rater-{digest[:12]}"


def export_question_names(queue: RatingQueue) -> list[str]:
    names = [q.name for q in FORMS.get(queue.kind, ())]
    extra = set()
    for answers in Rating.objects.filter(queue=queue).values_list("answers", flat=True):
        extra.update(set(answers) - set(names))
    return names + sorted(extra)


def export_header(queue: RatingQueue) -> list[str]:
    return [*EXPORT_COLUMNS_BASE, *export_question_names(queue), "comment"]


def export_rows(queue: RatingQueue) -> Iterator[list]:
    names = export_question_names(queue)
    ratings = (
        Rating.objects.filter(queue=queue)
        .select_related("item", "item__metric")
        .order_by("item__position", "submitted_at", "id")
    )
    for rating in ratings.iterator(chunk_size=2000):
        item: QueueItem = rating.item
        yield [
            queue.pk,
            item.kind,
            item.pk,
            item.object_id,
            item.object_id_b or "",
            item.metric.key if item.metric_id else "",
            item.strata.get("subarea", ""),
            item.strata.get("age_context", ""),
            item.strata.get("model", ""),
            # Pseudonymous: the export circulates among researchers, rater identities do not.
            rater_pseudonym(queue, rating.rater_id),
            rating.submitted_at.isoformat(),
            rating.seconds_spent,
            "yes" if rating.undone else "no",
            *[rating.answers.get(name, "") for name in names],
            rating.comment,
        ]


def simulator_ranking(queue: RatingQueue) -> list[dict]:
    """Candidate user simulators ranked from blind pairwise choices, one table per question.

    Items carry the two candidates' names in ``strata["simulator_first"]`` and
    ``strata["simulator_second"]`` (set by the adapter when sampling); answers are canonical
    "first"/"second". Bradley-Terry log-strengths order the candidates when they are identified
    (otherwise win rates do); win rates come with item-clustered bootstrap intervals.
    """
    ratings = list(Rating.objects.current().filter(queue=queue).select_related("item"))
    tables = []
    for question in FORMS["simulator_pair"]:
        comparisons: list[tuple[int, str, str]] = []
        for rating in ratings:
            first = rating.item.strata.get("simulator_first")
            second = rating.item.strata.get("simulator_second")
            answer = rating.answers.get(question.name)
            if not (first and second and answer):
                continue
            winner, loser = (first, second) if answer == "first" else (second, first)
            comparisons.append((rating.item_id, winner, loser))
        if not comparisons:
            continue
        names = sorted({name for _, won, lost in comparisons for name in (won, lost)})
        index = {name: i for i, name in enumerate(names)}
        wins = np.zeros((len(names), len(names)))
        for _, winner, loser in comparisons:
            wins[index[winner], index[loser]] += 1
        try:
            strengths = stats.bradley_terry(wins)
        except ValueError:
            strengths = None
        rows = []
        for name in names:
            outcomes = [
                (item, float(won == name)) for item, won, lost in comparisons if name in (won, lost)
            ]
            values = np.array([v for _, v in outcomes])
            clusters = np.array([item for item, _ in outcomes])
            low = high = None
            if len(set(clusters.tolist())) >= 2:
                low, high = stats.bootstrap_ci(values, clusters=clusters, n_resamples=_resamples())
            rows.append(
                {
                    "candidate": name,
                    "strength": None if strengths is None else float(strengths[index[name]]),
                    "win_rate": Estimate(float(values.mean()), low, high, len(values)),
                }
            )
        rows.sort(
            key=lambda row: (
                -(row["strength"] if row["strength"] is not None else row["win_rate"].value),
                row["candidate"],
            )
        )
        tables.append({"question": question, "rows": rows, "identified": strengths is not None})
    return tables


def priorities_comparison() -> dict:
    """The user panel's priorities next to the clinicians' rubric weights, per dimension.

    Users: every current rating in user-priority queues; a dimension's priority is its mean
    importance on a 0-1 scale ("doesn't matter" 0, "somewhat" 0.5, "a lot" 1) with an
    item-clustered bootstrap interval. Clinicians: the sum of absolute criterion weights per
    dimension over all rubric criteria still in scoring (a heavy penalty is as much a clinical
    priority as a heavy reward). Both are also shown as shares of their total, and ranked;
    Kendall's tau (via `rank_stability`) says how similarly the two groups order dimensions.
    """
    from evaluations.models import BehaviourDimension, RubricCriterion

    from .kinds.questions import IMPORTANCE
    from .models import ItemKind
    from .selectors import rubric_criterion_ids_dropped

    scale = {choice.value: index / (len(IMPORTANCE) - 1) for index, choice in enumerate(IMPORTANCE)}
    ratings = list(
        Rating.objects.current()
        .filter(queue__kind=ItemKind.USER_PRIORITIES)
        .values_list("item_id", "answers")
    )
    dropped = rubric_criterion_ids_dropped()
    clinician_weight: dict[str, float] = defaultdict(float)
    for dimension, points in RubricCriterion.objects.exclude(pk__in=dropped).values_list(
        "dimension", "points"
    ):
        clinician_weight[dimension] += abs(points)

    user_mean: dict[str, Estimate] = {}
    for dimension, _label in BehaviourDimension.choices:
        pairs = [
            (item_id, scale[answers[f"dim_{dimension}"]])
            for item_id, answers in ratings
            if answers.get(f"dim_{dimension}") in scale
        ]
        if not pairs:
            continue
        values = np.array([value for _, value in pairs])
        clusters = np.array([item_id for item_id, _ in pairs])
        low = high = None
        if len(set(clusters.tolist())) >= 2:
            low, high = stats.bootstrap_ci(values, clusters=clusters, n_resamples=_resamples())
        user_mean[dimension] = Estimate(float(values.mean()), low, high, len(values))

    user_total = sum(e.value for e in user_mean.values()) or 1.0
    clinician_total = sum(clinician_weight.values()) or 1.0
    user_share = {d: e.value / user_total for d, e in user_mean.items()}
    # A dimension no criterion weights has a clinical weight of zero, not an unknown one.
    clinician_share = {
        d: clinician_weight.get(d, 0.0) / clinician_total
        for d in BehaviourDimension.values
        if d in clinician_weight or d in user_share
    }
    ranking = (
        stats.rank_stability(user_share, clinician_share)
        if user_share and clinician_share
        else None
    )
    rows = []
    for dimension, label in BehaviourDimension.choices:
        if dimension not in user_share and dimension not in clinician_share:
            continue
        rows.append(
            {
                "dimension": dimension,
                "label": label,
                "user_priority": user_mean.get(dimension, Estimate(None)),
                "user_share": user_share.get(dimension),
                "clinician_weight": clinician_weight.get(dimension, 0.0),
                "clinician_share": clinician_share.get(dimension),
                "user_rank": ranking["rank_a"].get(dimension) if ranking else None,
                "clinician_rank": ranking["rank_b"].get(dimension) if ranking else None,
                "difference": (
                    user_share[dimension] - clinician_share[dimension]
                    if dimension in user_share and dimension in clinician_share
                    else None
                ),
            }
        )
    rows.sort(key=lambda row: -(row["user_share"] or 0))
    return {
        "rows": rows,
        "ratings": len(ratings),
        "kendall_tau": _finite(ranking["kendall_tau"]) if ranking else None,
    }
