"""How much of the judge's evidence is verified: quotes checked against the assistant's turns.

A reading whose quotes are not in the assistant's turns is asked again once
(`evaluations.services.judging`); what stays unverified is counted here for the methodology
page, as the share of judge readings with unverified quotes (an Estimate: Wilson on the effective
sample size over base scenarios, open at 0 % too) and the number of conversations flagged.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from evaluations.models import Conversation, EvaluationRun
from stats import proportion_from_clusters
from stats.estimates import Estimate

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
    }
