"""How much of the judge's evidence is verified: quotes checked against the assistant's turns.

A reading whose quotes are not in the assistant's turns is asked again once
(`evaluations.services.judging`); what stays unverified is counted here for the methodology
page, as the share of judge readings with unverified quotes (an Estimate: Wilson on the effective
sample size over base scenarios, open at 0 % too) and the number of conversations flagged.

Beyond being found, a reading's quotes must support its verdict (`evaluations.evidence_support`:
not content-free, not contradicting it). Per judge, the share of readings whose evidence
supports the verdict is published with the same interval (`judge_evidence_support`); readings
stored before the support check are left out and counted as such.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from django.db.models import Count, Q

from evaluations.evidence_support import EvidenceStatus
from evaluations.models import Conversation, ConversationStatus, EvaluationRun, Judgment
from stats import proportion_from_clusters
from stats.estimates import Estimate, Exclusion

from .reasks import reask_effects
from .repeatability import JUDGMENT_COLUMNS, judgment_counts

METHOD = (
    "share of judge readings with quotes not in the assistant's turns; Wilson score interval on "
    "the effective sample size over base scenarios"
)


def evidence_verification(
    run: EvaluationRun,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    counts: np.ndarray | None = None,
) -> dict[str, Any]:
    """The judge readings of completed conversations; ``counts``: the run's `judgment_counts`,
    if already read. ``n_resamples`` and ``seed`` are the callers' one set of options; the
    share's score interval draws nothing."""
    if counts is None:
        counts = judgment_counts(run)
    column = {name: counts[:, i] for i, name in enumerate(JUDGMENT_COLUMNS)}
    done = column["completed"] > 0
    # One row per base scenario (the bootstrap's cluster): readings, unverified, re-asked.
    version, base = column["version"][done], column["base"][done]
    key = version * (int(base.max(initial=0)) + 1) + base
    first, code = np.unique(key, return_index=True, return_inverse=True)[1:]
    totals = [
        np.bincount(code, weights=column[c][done], minlength=first.size).astype(np.int64).tolist()
        for c in ("k", "unverified", "reasked")
    ]
    labels = [
        f"{v}:{b}" for v, b in zip(version[first].tolist(), base[first].tolist(), strict=True)
    ]
    rows = sorted(zip(labels, *totals, strict=True))
    if not rows:
        return {"unverified": Estimate.insufficient(method=METHOD).as_dict(), "reasked": 0}
    sizes = [n for _, n, _, _ in rows]
    sums = [unverified for _, _, unverified, _ in rows]
    estimate = replace(
        proportion_from_clusters(sums, sizes, over="base scenarios", min_n=1), method=METHOD
    )
    return {
        "unverified": estimate.as_dict(),
        "reasked": sum(reasked for _, _, _, reasked in rows),
        "conversations_flagged": Conversation.objects.filter(
            run=run, unverified_evidence=True
        ).count(),
        "reasks": reask_effects(run),
        "support": judge_evidence_support(run),
    }


SUPPORT_METHOD = (
    "share of the judge's readings whose quotes support its verdict (found in the assistant's "
    "turns, not content-free, not contradicting it); Wilson score interval on the effective "
    "sample size over base scenarios"
)


def judge_evidence_support(run: EvaluationRun) -> list[dict[str, Any]]:
    """Per judge of the run: the share of its readings (of completed conversations) whose
    evidence supports the verdict, with each unsupported status counted."""
    rows = (
        Judgment.objects.filter(
            conversation__run=run, conversation__status=ConversationStatus.COMPLETED
        )
        .values(
            "judge_id",
            "judge__name",
            "conversation__scenario__metric_version_id",
            "conversation__scenario__base_index",
        )
        .annotate(
            checked=Count("pk", filter=~Q(evidence_status=EvidenceStatus.UNCHECKED)),
            supported=Count("pk", filter=Q(evidence_status=EvidenceStatus.SUPPORTED)),
            unchecked=Count("pk", filter=Q(evidence_status=EvidenceStatus.UNCHECKED)),
        )
        .order_by("judge_id")
    )
    by_judge: dict[int, dict[str, Any]] = {}
    for row in rows:
        judge = by_judge.setdefault(
            row["judge_id"], {"name": row["judge__name"], "sizes": [], "sums": [], "unchecked": 0}
        )
        judge["sizes"].append(row["checked"])
        judge["sums"].append(row["supported"])
        judge["unchecked"] += row["unchecked"]
    statuses: dict[int, dict[str, int]] = {}
    counts = (
        Judgment.objects.filter(
            conversation__run=run, conversation__status=ConversationStatus.COMPLETED
        )
        .values("judge_id", "evidence_status")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for row in counts:
        statuses.setdefault(row["judge_id"], {})[row["evidence_status"]] = row["n"]
    figures = []
    for judge_id, judge in by_judge.items():
        estimate = replace(
            proportion_from_clusters(
                judge["sums"],
                judge["sizes"],
                over="base scenarios",
                min_n=1,
                excluded=(
                    Exclusion("stored before quotes were checked for support", judge["unchecked"]),
                ),
            ),
            method=SUPPORT_METHOD,
        )
        mine = statuses.get(judge_id, {})
        figures.append(
            {
                "judge": judge["name"],
                "supported": estimate.as_dict(),
                "readings": sum(mine.values()),
                "by_status": [
                    {"status": status.value, "label": str(status.label), "count": mine[status]}
                    for status in EvidenceStatus
                    if mine.get(status)
                ],
            }
        )
    return figures
