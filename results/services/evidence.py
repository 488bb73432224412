"""How much of the judge's evidence is verified: quotes checked against the assistant's turns.

A reading whose quotes are not in the assistant's turns is asked again once
(`evaluations.services.judging`); what stays unverified is counted here for the methodology
page, as the share of judge readings with unverified quotes (an Estimate, cluster bootstrap over
base scenarios) and the number of conversations flagged.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q

from evaluations.models import Conversation, ConversationStatus, EvaluationRun, Judgment
from results.estimates import Estimate
from results.statistics import clustered_mean_ci

METHOD = "share of judge readings with quotes not in the assistant's turns; cluster bootstrap"


def evidence_verification(
    run: EvaluationRun, *, n_resamples: int = 10_000, seed: int = 0
) -> dict[str, Any]:
    # One row per base scenario (the bootstrap's cluster): readings, unverified, re-asked.
    rows = sorted(
        (f"{version}:{base}", n, unverified, reasked)
        for version, base, n, unverified, reasked in Judgment.objects.filter(
            conversation__run=run, conversation__status=ConversationStatus.COMPLETED
        )
        .values_list(
            "conversation__scenario__metric_version_id", "conversation__scenario__base_index"
        )
        .annotate(
            n=Count("id"),
            unverified=Count("id", filter=Q(has_unverified_quotes=True)),
            reasked=Count("id", filter=Q(reasked_for_evidence=True)),
        )
        .order_by()
    )
    if not rows:
        return {"unverified": Estimate.insufficient(method=METHOD).as_dict(), "reasked": 0}
    sizes = [n for _, n, _, _ in rows]
    sums = [unverified for _, _, unverified, _ in rows]
    low = high = None
    if len(rows) >= 2:
        # Clusters in the order of their labels, as bootstrap_ci numbers them.
        low, high = clustered_mean_ci(sums, sizes, n_resamples=n_resamples, seed=seed)
    estimate = Estimate(
        value=sum(sums) / sum(sizes),
        low=low,
        high=high,
        method=METHOD,
        n=sum(sizes),
        n_clusters=len(rows),
    )
    return {
        "unverified": estimate.as_dict(),
        "reasked": sum(reasked for _, _, _, reasked in rows),
        "conversations_flagged": Conversation.objects.filter(
            run=run, unverified_evidence=True
        ).count(),
    }
