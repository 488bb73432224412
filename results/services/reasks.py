"""What re-asking the judge for its evidence does to verdicts, for the methodology page.

Only readings whose quotes were not found are re-asked (`evaluations.services.judging`), so a
re-ask can move verdicts one way: a judge asked to prove "present" may fall back to "absent".
Here, per metric polarity, the share of re-asked readings whose verdict changed and how many
moved towards "absent"; and a sensitivity figure: the share of readings saying "present" over
all readings and over verified readings only (dropping every reading whose quotes stayed
unverified). Re-asks stored before the first verdict was kept have no flip and are left out.
Intervals: Wilson's score interval over the readings, treated as independent (re-asks are
rare, one or two per base scenario, so little clustering is left to account for).
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, F, Q
from django.utils.translation import gettext_noop

from evaluations.models import ConversationStatus, EvaluationRun, Judgment
from stats.estimates import Estimate
from stats.few_clusters import wilson_interval

FLIP_METHOD = "share of re-asked readings whose verdict changed; Wilson score interval"
PRESENT_METHOD = "share of judge readings saying present; Wilson score interval"


def _share(hits: int, n: int, method: str) -> dict[str, Any]:
    if n < 2:
        return Estimate.insufficient(
            n=n, method=method, reason=gettext_noop("fewer than two readings")
        ).as_dict()
    low, high = wilson_interval(hits, n)
    return Estimate(
        value=hits / n, low=float(low), high=float(high), method=method, n=n, n_clusters=n
    ).as_dict()


def reask_effects(run: EvaluationRun) -> dict[str, Any]:
    """Flip rates of evidence re-asks per polarity, and the verified-only sensitivity."""
    readings = Judgment.objects.filter(
        conversation__run=run, conversation__status=ConversationStatus.COMPLETED
    )
    flips = []
    for polarity in ("positive", "negative"):
        mine = readings.filter(
            conversation__scenario__metric_version__polarity=polarity,
            reasked_for_evidence=True,
            present_before_reask__isnull=False,
        ).aggregate(
            n=Count("pk"),
            flipped=Count("pk", filter=~Q(present=F("present_before_reask"))),
            to_absent=Count("pk", filter=Q(present_before_reask=True, present=False)),
        )
        flips.append(
            {
                "polarity": polarity,
                "flip_rate": _share(mine["flipped"], mine["n"], FLIP_METHOD),
                "to_absent": mine["to_absent"],
                "to_present": mine["flipped"] - mine["to_absent"],
            }
        )
    counts = readings.aggregate(
        n=Count("pk"),
        said_present=Count("pk", filter=Q(present=True)),
        verified=Count("pk", filter=Q(has_unverified_quotes=False)),
        verified_present=Count("pk", filter=Q(has_unverified_quotes=False, present=True)),
    )
    return {
        "flips": flips,
        "present_all": _share(counts["said_present"], counts["n"], PRESENT_METHOD),
        "present_verified_only": _share(
            counts["verified_present"], counts["verified"], PRESENT_METHOD
        ),
    }
