"""Users and clinicians side by side for one rubric run: which behaviour dimensions each
weights (`review.agreement.priorities_comparison`, restricted to the release's frozen rubric
and the run's replies), and each model's score re-weighted by each audience's priorities beside
the benchmark's own score, which follows expert consensus. With a language, every figure is over
that language's items alone: their criteria, the users' ratings of their replies, their scores."""

from __future__ import annotations

from collections import defaultdict

from django.utils.translation import gettext_lazy, gettext_noop

from evaluations.models import ConversationStatus, EvaluationRun
from evaluations.services.rubric_scores import counted_grades
from review.agreement import priorities_comparison
from rubrics.models import ReleaseRubricFreeze, RubricCriterion
from rubrics.scoring import aggregate_estimate, weighted_item_score
from stats.estimates import Estimate

from .rubrics import public_rubric_responses

SCHEMES = (
    ("benchmark", gettext_lazy("Benchmark score (expert consensus weights, as published)")),
    ("clinicians", gettext_lazy("Re-weighted by clinicians' priorities")),
    ("users", gettext_lazy("Re-weighted by users' priorities")),
)


def _frozen_criterion_ids(run: EvaluationRun, language: str = "") -> list[int]:
    freeze = ReleaseRubricFreeze.objects.filter(release_id=run.release_id).first()
    criteria = freeze.criteria.all() if freeze is not None else RubricCriterion.objects.counting()
    if language:
        criteria = criteria.filter(item__language=language)
    return list(criteria.values_list("pk", flat=True))


def reweighted_scores(
    run: EvaluationRun,
    user_share: dict[str, float],
    clinician_share: dict[str, float],
    language: str = "",
) -> list[dict]:
    """Per model, the aggregate under each weighting: a criterion's points times its
    dimension's share of the audience's total priority (every dimension 1 for the benchmark)."""
    shares = {"benchmark": None, "clinicians": clinician_share, "users": user_share}
    per_model: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in public_rubric_responses(run, language=language):
        response = row.response
        if response.status != ConversationStatus.COMPLETED:
            continue
        grades = counted_grades(response)
        points = [g.criterion.points for g in grades]
        met = [g.met for g in grades]
        for scheme, share in shares.items():
            weights = [
                1.0 if share is None else share.get(g.criterion.dimension, 0.0) for g in grades
            ]
            score = weighted_item_score(points, met, weights) if grades else None
            if score is not None:
                per_model[response.target.name][scheme].append(score)
    rows = []
    for model in sorted(per_model, key=str.casefold):
        figures = {}
        for scheme, _label in SCHEMES:
            values = per_model[model][scheme]
            if scheme == "users" and not user_share:
                figures[scheme] = Estimate.insufficient(
                    unit="score", reason=gettext_noop("no user-panel ratings yet")
                )
                continue
            figures[scheme] = aggregate_estimate(values)[0]
        rows.append({"model": model, **figures})
    return rows


def rubric_priorities(run: EvaluationRun, language: str = "") -> dict:
    """The priorities comparison for the run's release and replies, and the re-weighted
    scores; over the items in `language` alone when one is given."""
    responses = run.rubric_responses.all()
    if language:
        responses = responses.filter(item__language=language)
    response_ids = list(responses.values_list("pk", flat=True))
    comparison = priorities_comparison(
        criterion_ids=_frozen_criterion_ids(run, language), response_ids=response_ids
    )
    return {
        **comparison,
        "schemes": SCHEMES,
        "reweighted": reweighted_scores(
            run, comparison["user_share"], comparison["clinician_share"], language
        ),
    }
