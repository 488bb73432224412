"""How far a judge can be trusted on a metric or a model: blind expert agreement and a badge.

The figures compare the judge's verdict with blind expert verdicts on the same conversations
from a *random* calibration sample. Ratings from a triage queue (conversations chosen because
judges or repetitions disagreed) must not be used here: chosen for disagreement, they would
understate agreement.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from stats.estimates import Estimate, Exclusion

from .figures import DEFAULT_RESAMPLES, cohen_estimate, proportion_estimate

VALIDATED = "validated"
CONTESTED = "contested"
NOT_CHECKED = "not yet checked by experts"

# Below this many blind expert verdicts no badge but "not yet checked": at 80 % agreement a
# 95 % interval from 30 verdicts already spans about +-0.15, so fewer could neither validate a
# judge nor fairly contest it.
MIN_EXPERT_VERDICTS = 30
# A judge is validated when even the interval's lower end of its agreement with experts
# reaches 0.70: about as well as experts agree with each other (physicians 55-75 % in
# HealthBench, human Krippendorff's alpha 0.71 in HumaneBench), and the lower bound, not the
# point value, so sampling luck cannot validate it.
VALIDATED_AGREEMENT_LOW = 0.70
# ... and its Cohen's kappa reaches 0.40 ("moderate", Landis & Koch 1977): raw agreement alone
# rewards a judge that passes everything on a metric experts also mostly pass.
VALIDATED_KAPPA = 0.40


@dataclass(frozen=True)
class JudgeTrust:
    """Agreement (share of conversations where judge and expert agree) and Cohen's kappa,
    each with interval and n, the badge, and a sentence saying why."""

    agreement: Estimate
    kappa: Estimate
    badge: str
    reason: str


def judge_trust(
    judge: ArrayLike,
    expert: ArrayLike,
    clusters: ArrayLike | None = None,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> JudgeTrust:
    """Blind expert agreement with the judge, and the badge it earns.

    ``judge[i]`` and ``expert[i]`` are the verdicts on one expert rating's conversation (one
    row per expert rating; ``nan`` where either is missing: excluded and counted).
    ``clusters`` (base scenarios) make the intervals a cluster bootstrap, which also keeps
    several experts' ratings of one conversation together.

    * ``agreement``: share of rows where the verdicts are equal, percentile bootstrap interval;
    * ``kappa``: Cohen's kappa (unweighted, as ``sklearn.metrics.cohen_kappa_score``) with the
      same bootstrap; undefined when both sides give one verdict throughout;
    * ``badge``: ``NOT_CHECKED`` below ``MIN_EXPERT_VERDICTS`` rows; ``VALIDATED`` when the
      agreement's lower bound is at least ``VALIDATED_AGREEMENT_LOW`` and kappa at least
      ``VALIDATED_KAPPA``; otherwise ``CONTESTED`` -- experts checked and the judge did not
      clear the bar (the ``reason`` says whether agreement or kappa fell short).

    Estimates agreement on the population the sample was drawn from (one metric, one target
    model); with unequal inclusion probabilities inside that cell it is unweighted.
    """
    j = np.asarray(judge, dtype=np.float64)
    e = np.asarray(expert, dtype=np.float64)
    if j.shape != e.shape or j.ndim != 1:
        raise ValueError("judge and expert must be 1-D and paired (one row per expert rating)")
    both = np.isfinite(j) & np.isfinite(e)
    excluded = (Exclusion("judge or expert verdict missing", int((~both).sum())),)
    grouped = None if clusters is None else np.asarray(clusters)[both]
    options = {
        "n_resamples": n_resamples,
        "seed": seed,
        "confidence": confidence,
        "over": "base scenarios" if clusters is not None else "ratings",
    }
    agreement = proportion_estimate(
        (j[both] == e[both]).astype(float), grouped, excluded=excluded, **options
    )
    kappa = cohen_estimate(j[both].tolist(), e[both].tolist(), grouped, **options)
    kappa = kappa.with_exclusions(excluded) if kappa.defined else kappa
    badge, reason = trust_badge(agreement, kappa)
    return JudgeTrust(agreement, kappa, badge, reason)


def trust_badge(agreement: Estimate, kappa: Estimate) -> tuple[str, str]:
    """The badge and its reason for an agreement and a kappa figure (thresholds above)."""
    n = agreement.n
    if n < MIN_EXPERT_VERDICTS or not agreement.defined:
        return NOT_CHECKED, (
            f"{n} blind expert verdicts so far; a badge needs {MIN_EXPERT_VERDICTS}"
        )
    if agreement.low is None:
        return CONTESTED, (
            f"experts agree with the judge on {agreement.value:.0%}, but every rating comes "
            "from one base scenario: no interval, so it cannot be validated"
        )
    low = agreement.low
    share = f"experts agree with the judge on {agreement.value:.0%} (lower bound {low:.0%})"
    if low < VALIDATED_AGREEMENT_LOW:
        return CONTESTED, f"{share}, below the {VALIDATED_AGREEMENT_LOW:.0%} needed"
    if not kappa.defined:
        return CONTESTED, f"{share}, but kappa is undefined: every verdict was the same"
    if kappa.value < VALIDATED_KAPPA:  # type: ignore[operator]
        return CONTESTED, (
            f"{share}, but only {kappa.value:.2f} beyond chance (kappa; "
            f"{VALIDATED_KAPPA:.2f} needed)"
        )
    return VALIDATED, f"{share}, kappa {kappa.value:.2f}"


def judge_trust_by(
    groups: ArrayLike,
    judge: ArrayLike,
    expert: ArrayLike,
    clusters: ArrayLike | None = None,
    **options: object,
) -> dict[Hashable, JudgeTrust]:
    """:func:`judge_trust` for each group (``groups[i]``: e.g. the metric, or the target model,
    of rating ``i``), in order of first appearance."""
    labels = list(groups.tolist() if isinstance(groups, np.ndarray) else groups)  # type: ignore[union-attr]
    j, e = np.asarray(judge, dtype=np.float64), np.asarray(expert, dtype=np.float64)
    c = None if clusters is None else np.asarray(clusters)
    # Each group's rows found in one pass: a mask per group would compare every rating with
    # every group (a release's metric × model cells: ~8,000 groups over ~50,000 ratings).
    members: dict[Hashable, list[int]] = {}
    for i, label in enumerate(labels):
        members.setdefault(label, []).append(i)
    out: dict[Hashable, JudgeTrust] = {}
    for label, rows in members.items():
        mine = np.asarray(rows, dtype=np.intp)
        out[label] = judge_trust(
            j[mine],
            e[mine],
            None if c is None else c[mine],
            **options,  # type: ignore[arg-type]
        )
    return out
