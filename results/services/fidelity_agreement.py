"""Experts check the checker: the fidelity check against experts' realism answers.

Experts rating a conversation answer whether it reads as realistic (`review`'s conversation
kind). Per conversation their majority is set against the fidelity check's `passed`: the share
of conversations where the two agree and Cohen's kappa, both resampling base scenarios as every
expert figure does (`expert_figures._panel_cell`). A conversation whose experts split evenly has
no majority and is left out, as is a rated conversation the checker has not read; both counted.

Ratings by the demo seed's simulated panel (`review.demo_realism`) are counted like any, and
the figure says how many there are (`n_seeded_demo_ratings`, `seeded_demo`), so no page shows
them as clinicians' answers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
from django.utils.translation import gettext_noop

import stats as statistics
from evaluations.models import Conversation, EvaluationRun
from review.kinds import kinds_with
from review.selectors import current_ratings_of, seeded_panel_rater_ids
from stats.estimates import Estimate, Exclusion

OVER = "base scenarios"
NO_RATINGS = gettext_noop("no expert realism ratings yet")
NO_PAIRS = gettext_noop("no conversation with both an expert majority and a fidelity reading")
TIED = "experts tied"
NOT_CHECKED = "not checked"


def realism_votes(runs: Sequence[EvaluationRun]) -> dict[int, dict[int, bool]]:
    """``votes[conversation][rater]``: whether the expert found the conversation realistic,
    from every current rating of the runs' conversations that answered the question."""
    ratings = current_ratings_of(
        kinds=kinds_with("release_figure", "conversations"),
        object_ids=Conversation.objects.filter(run__in=runs).values("pk"),
    )
    votes: dict[int, dict[int, bool]] = defaultdict(dict)
    for _, conversation, rater, answers in ratings:
        if answers.get("realistic") in ("yes", "no"):
            votes[conversation][rater] = answers["realistic"] == "yes"
    return votes


def expert_majorities(votes: dict[int, dict[int, bool]]) -> tuple[dict[int, bool], int]:
    """Each conversation's expert majority (realistic or not), and how many were tied."""
    majority: dict[int, bool] = {}
    ties = 0
    for conversation, by_rater in votes.items():
        yes = sum(by_rater.values())
        if yes * 2 == len(by_rater):
            ties += 1
        else:
            majority[conversation] = yes * 2 > len(by_rater)
    return majority, ties


def _none(reason: str, unit: str = "proportion", excluded=()) -> dict[str, Any]:
    return Estimate.insufficient(n=0, unit=unit, reason=reason, excluded=excluded).as_dict()


def fidelity_expert_agreement(
    *, runs: Sequence[EvaluationRun], n_resamples: int = 2_000, seed: int = 0
) -> dict[str, Any]:
    """Agreement share and Cohen's kappa between the fidelity check and the experts' majority
    realism answer, on the runs' conversations that have both (three queries; two without
    ratings)."""
    votes = realism_votes(runs)
    raters = {r for by_rater in votes.values() for r in by_rater}
    seeded = seeded_panel_rater_ids(raters) if raters else set()
    n_seeded = sum(1 for by_rater in votes.values() for r in by_rater if r in seeded)
    majority, ties = expert_majorities(votes)
    checked = {
        pk: (passed, f"{version}:{base}")
        for pk, passed, version, base in Conversation.objects.filter(
            pk__in=list(majority), fidelity__isnull=False
        ).values_list(
            "pk", "fidelity__passed", "scenario__metric_version_id", "scenario__base_index"
        )
    }
    excluded = [
        e
        for e in (
            Exclusion(TIED, ties),
            Exclusion(NOT_CHECKED, sum(1 for c in majority if c not in checked)),
        )
        if e.count
    ]
    ids = sorted(c for c in majority if c in checked)
    summary = {
        "n_ratings": sum(len(by_rater) for by_rater in votes.values()),
        "n_raters": len(raters),
        # Ratings by the demo's simulated panel, not clinicians (`seeded_demo`: any at all).
        "n_seeded_demo_ratings": n_seeded,
        "seeded_demo": n_seeded > 0,
        "n_conversations": len(votes),
        "n_pairs": len(ids),
        "excluded": [e.as_dict() for e in excluded],
    }
    if not ids:
        reason = NO_RATINGS if not votes else NO_PAIRS
        return {
            **summary,
            "reason": reason,
            "agreement": _none(reason, excluded=excluded),
            "cohen_kappa": _none(reason, unit="coefficient", excluded=excluded),
        }
    check = np.array([checked[c][0] for c in ids], dtype=np.int64)
    expert = np.array([majority[c] for c in ids], dtype=np.int64)
    clusters = np.array([checked[c][1] for c in ids])
    options = {"over": OVER, "n_resamples": n_resamples, "seed": seed, "excluded": excluded}
    return {
        **summary,
        "reason": "",
        "agreement": statistics.proportion_estimate(
            (check == expert).astype(np.float64), clusters, **options
        ).as_dict(),
        "cohen_kappa": statistics.cohen_estimate(check, expert, clusters, **options).as_dict(),
    }
