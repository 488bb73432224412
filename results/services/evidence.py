"""How much of the judge's evidence is verified: quotes checked against the assistant's turns.

A reading whose quotes are not in the assistant's turns is asked again once
(`evaluations.services.judging`); what stays unverified is counted here for the methodology
page, as the share of judge readings with unverified quotes (an Estimate, cluster bootstrap over
base scenarios) and the number of conversations flagged.
"""

from __future__ import annotations

from typing import Any

from evaluations.models import Conversation, ConversationStatus, EvaluationRun, Judgment
from results.estimates import Estimate
from results.statistics import bootstrap_ci

METHOD = "share of judge readings with quotes not in the assistant's turns; cluster bootstrap"


def evidence_verification(
    run: EvaluationRun, *, n_resamples: int = 10_000, seed: int = 0
) -> dict[str, Any]:
    rows = list(
        Judgment.objects.filter(
            conversation__run=run, conversation__status=ConversationStatus.COMPLETED
        )
        .values_list(
            "has_unverified_quotes",
            "reasked_for_evidence",
            "conversation__scenario__metric_version_id",
            "conversation__scenario__base_index",
        )
        .order_by()
    )
    if not rows:
        return {"unverified": Estimate.insufficient(method=METHOD).as_dict(), "reasked": 0}
    flags = [float(unverified) for unverified, _, _, _ in rows]
    clusters = [f"{version}:{base}" for _, _, version, base in rows]
    low = high = None
    if len(set(clusters)) >= 2:
        low, high = bootstrap_ci(flags, clusters=clusters, n_resamples=n_resamples, seed=seed)
    estimate = Estimate(
        value=sum(flags) / len(flags),
        low=low,
        high=high,
        method=METHOD,
        n=len(flags),
        n_clusters=len(set(clusters)),
    )
    return {
        "unverified": estimate.as_dict(),
        "reasked": sum(1 for _, reasked, _, _ in rows if reasked),
        "conversations_flagged": Conversation.objects.filter(
            run=run, unverified_evidence=True
        ).count(),
    }
