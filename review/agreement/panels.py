"""Figures of the panel kinds: simulator pairs (Bradley-Terry) and user priorities."""

import math
from collections import defaultdict
from collections.abc import Iterable

import numpy as np
from django.utils.translation import gettext_noop

import stats
from rubrics.dimensions import dimension_choices
from rubrics.models import RubricCriterion
from stats.estimates import Estimate

from ..kinds import FORMS
from ..kinds.questions import IMPORTANCE
from ..models import ItemKind, Rating, RatingQueue
from .queue import _resamples


def _finite(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def ranking_languages(queue: RatingQueue) -> list[str]:
    """The languages of the queue's items (sorted tags): a ranking pools them unless one is
    chosen, and says so. One query."""
    return sorted(queue.items.order_by().values_list("language", flat=True).distinct())


def simulator_ranking(queue: RatingQueue, language: str = "") -> list[dict]:
    """Candidate user simulators ranked from blind pairwise choices, one table per question;
    over the items in `language` alone when one is given (a simulator convincing in English
    may not be in Spanish).

    Items carry the two candidates' names in ``strata["simulator_first"]`` and
    ``strata["simulator_second"]`` (set by the adapter when sampling); answers are canonical
    "first"/"second". Bradley-Terry log-strengths order the candidates when they are identified
    (otherwise win rates do); win rates come with item-clustered bootstrap intervals.
    """
    ratings = Rating.objects.current().filter(queue=queue).select_related("item")
    if language:
        ratings = ratings.filter(item__language=language)
    ratings = list(ratings)
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
            strengths = stats.bradley_terry_estimates(
                [item for item, _, _ in comparisons],
                [index[won] for _, won, _ in comparisons],
                [index[lost] for _, _, lost in comparisons],
                len(names),
                n_resamples=_resamples(),
            )
        except ValueError:
            strengths = None
        rows = []
        for name in names:
            outcomes = [
                (item, float(won == name)) for item, won, lost in comparisons if name in (won, lost)
            ]
            values = np.array([v for _, v in outcomes])
            clusters = np.array([item for item, _ in outcomes])
            rows.append(
                {
                    "candidate": name,
                    "pairs": len(outcomes),
                    "strength": None if strengths is None else strengths[index[name]],
                    "win_rate": stats.proportion_estimate(
                        values, clusters, over="pairs", n_resamples=_resamples()
                    ),
                }
            )
        rows.sort(
            key=lambda row: (
                -(row["strength"].value if row["strength"] is not None else row["win_rate"].value),
                row["candidate"],
            )
        )
        tables.append({"question": question, "rows": rows, "identified": strengths is not None})
    return tables


def priorities_comparison(
    *, criterion_ids: Iterable[int] | None = None, response_ids: Iterable[int] | None = None
) -> dict:
    """The user panel's priorities next to the clinicians' rubric weights, per dimension.

    Users: every current rating in user-priority queues; a dimension's priority is its mean
    importance on a 0-1 scale ("doesn't matter" 0, "somewhat" 0.5, "a lot" 1) with an
    item-clustered bootstrap interval. Clinicians: the sum of absolute criterion weights per
    dimension over all rubric criteria still in scoring (a heavy penalty is as much a clinical
    priority as a heavy reward). Both are also shown as shares of their total, and ranked;
    Kendall's tau (via `rank_stability`) says how similarly the two groups order dimensions.

    `criterion_ids` restricts the clinicians to those criteria (a release's frozen rubric) and
    `response_ids` the users to ratings of those replies (a run's); the answer also counts the
    distinct users and clinicians behind the figures.
    """
    dimensions = dimension_choices()

    scale = {choice.value: index / (len(IMPORTANCE) - 1) for index, choice in enumerate(IMPORTANCE)}
    user_ratings = Rating.objects.current().filter(queue__kind=ItemKind.USER_PRIORITIES)
    if response_ids is not None:
        user_ratings = user_ratings.filter(item__object_id__in=list(response_ids))
    ratings = list(user_ratings.values_list("item_id", "answers"))
    clinician_weight: dict[str, float] = defaultdict(float)
    # The clinicians' weights are those of criteria that count in scoring.
    criteria = (
        RubricCriterion.objects.filter(pk__in=list(criterion_ids))
        if criterion_ids is not None
        else RubricCriterion.objects.counting()
    )
    for dimension, points in criteria.values_list("dimension", "points"):
        clinician_weight[dimension] += abs(points)
    clinicians = (
        Rating.objects.current()
        .filter(queue__kind=ItemKind.RUBRIC_CRITERION, item__object_id__in=criteria.values("pk"))
        .values("rater")
        .distinct()
        .count()
    )

    user_mean: dict[str, Estimate] = {}
    raw_mean: dict[str, float] = {}
    for dimension, _label in dimensions:
        pairs = [
            (item_id, scale[answers[f"dim_{dimension}"]])
            for item_id, answers in ratings
            if answers.get(f"dim_{dimension}") in scale
        ]
        if not pairs:
            continue
        values = np.array([value for _, value in pairs])
        clusters = np.array([item_id for item_id, _ in pairs])
        raw_mean[dimension] = float(values.mean())
        user_mean[dimension] = stats.mean_estimate(
            values, clusters, unit="score", over="replies", n_resamples=_resamples()
        )

    user_total = sum(raw_mean.values()) or 1.0
    clinician_total = sum(clinician_weight.values()) or 1.0
    user_share = {d: value / user_total for d, value in raw_mean.items()}
    # A dimension no criterion weights has a clinical weight of zero, not an unknown one.
    clinician_share = {
        d: clinician_weight.get(d, 0.0) / clinician_total
        for d, _name in dimensions
        if d in clinician_weight or d in user_share
    }
    ranking = (
        stats.rank_stability(user_share, clinician_share)
        if user_share and clinician_share
        else None
    )
    share_estimates = _user_share_estimates(ratings, scale, list(raw_mean))
    tau = _tau_estimate(ratings, scale, list(raw_mean), clinician_share)
    rows = []
    for dimension, label in dimensions:
        if dimension not in user_share and dimension not in clinician_share:
            continue
        share = share_estimates.get(dimension, Estimate.insufficient())
        clinical = clinician_share.get(dimension)
        rows.append(
            {
                "dimension": dimension,
                "label": label,
                "user_priority": user_mean.get(dimension, Estimate.insufficient(unit="score")),
                "user_share": user_share.get(dimension),
                "user_share_estimate": share,
                "clinician_weight": clinician_weight.get(dimension, 0.0),
                "clinician_share": clinical,
                "user_rank": ranking["rank_a"].get(dimension) if ranking else None,
                "clinician_rank": ranking["rank_b"].get(dimension) if ranking else None,
                # Clinicians' weights are fixed numbers, not a sample: the difference carries
                # the users' interval shifted by the clinical share.
                "difference": _shifted(share, clinical),
            }
        )
    rows.sort(key=lambda row: -(row["user_share"] or 0))
    return {
        "rows": rows,
        "ratings": len(ratings),
        "kendall_tau": _finite(ranking["kendall_tau"]) if ranking else None,
        "kendall_tau_estimate": tau,
        "ranked_dimensions": len(raw_mean),
        "users": user_ratings.values("rater").distinct().count(),
        "clinicians": clinicians,
        "user_share": user_share,
        "clinician_share": clinician_share,
    }


def _rating_sums(
    ratings: list[tuple[int, dict]], scale: dict[str, float], dimensions: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Per rating: importance per dimension, then whether it was answered (for the means);
    and the rated reply of each rating (the resampled cluster)."""
    k = len(dimensions)
    sums = np.zeros((len(ratings), 2 * k))
    for i, (_, answers) in enumerate(ratings):
        for j, dimension in enumerate(dimensions):
            answer = answers.get(f"dim_{dimension}")
            if answer in scale:
                sums[i, j] = scale[answer]
                sums[i, k + j] = 1.0
    return sums, np.array([item_id for item_id, _ in ratings])


def _user_share_estimates(
    ratings: list[tuple[int, dict]], scale: dict[str, float], dimensions: list[str]
) -> dict[str, Estimate]:
    """Each dimension's share of the users' total importance, resampling rated replies."""
    if not dimensions:
        return {}
    k = len(dimensions)
    sums, clusters = _rating_sums(ratings, scale, dimensions)

    def share_of(j: int):
        def statistic(s: np.ndarray) -> np.ndarray:
            with np.errstate(all="ignore"):
                means = s[:, :k] / s[:, k:]
                return means[:, j] / np.nansum(means, axis=1)

        return statistic

    return {
        dimension: stats.sums_estimate(
            sums,
            share_of(j),
            clusters=clusters,
            unit="proportion",
            over="replies",
            n_resamples=_resamples(),
        )
        for j, dimension in enumerate(dimensions)
    }


def _tau_estimate(
    ratings: list[tuple[int, dict]],
    scale: dict[str, float],
    dimensions: list[str],
    clinician_share: dict[str, float],
) -> Estimate:
    """Kendall's tau-b between the users' and the clinicians' orderings of the dimensions the
    users rated, resampling rated replies (the clinicians' weights are fixed, not sampled)."""
    if len(dimensions) < 2:
        # Stored in English, the catalogue's id; pages translate it (results.stored_words).
        reason = gettext_noop("fewer than two dimensions rated")
        return Estimate.insufficient(n=len(ratings), reason=reason)
    k = len(dimensions)
    sums, clusters = _rating_sums(ratings, scale, dimensions)
    fixed = np.array([clinician_share.get(d, 0.0) for d in dimensions])

    def statistic(s: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            # A resample that drops every answer of a dimension leaves its mean undefined: nan.
            return stats.kendall_tau_b_rows(s[:, :k] / s[:, k:], fixed)

    return stats.sums_estimate(
        sums, statistic, clusters=clusters, over="replies", n_resamples=_resamples()
    )


def _shifted(share: Estimate, clinical: float | None) -> Estimate:
    if clinical is None or not share.defined:
        return Estimate.insufficient(n=share.n, unit="difference")
    return Estimate(
        value=share.value - clinical,
        low=None if share.low is None else share.low - clinical,
        high=None if share.high is None else share.high - clinical,
        method=share.method,
        n=share.n,
        n_clusters=share.n_clusters,
        unit="difference",
    )
