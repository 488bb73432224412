"""How far a judge can be trusted on a metric or a model: blind expert agreement and a badge.

The figures compare the judge's verdict with blind expert verdicts on the same conversations
from a *random* calibration sample. Ratings from a triage queue (conversations chosen because
judges or repetitions disagreed) must not be used here: chosen for disagreement, they would
understate agreement.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stats.estimates import MIN_ITEMS, Estimate, Exclusion

from .agreement import cohen_from_confusion, cohen_pair_codes
from .bootstrap import cluster_hits
from .bounds import coefficient_bounds, effective_size, proportion_bounds, proportion_sd
from .coefficients import cohen_chance
from .figures import (
    DEFAULT_RESAMPLES,
    Resampling,
    agreement_estimates,
    coefficient_method,
    proportion_method,
)
from .figures import _codes as cluster_codes
from .percentiles import bootstrap_sd, percentile_interval

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
    options: Resampling = {
        "n_resamples": n_resamples,
        "seed": seed,
        "confidence": confidence,
        "over": "base scenarios" if clusters is not None else "ratings",
    }
    # Both from one drawing of the clusters, each exactly as its own bootstrap would give it:
    # a release's refresh computes this for every metric x model cell (~8,000).
    agreement, kappa = agreement_estimates(j[both], e[both], grouped, **options)
    agreement = agreement.with_exclusions(excluded)
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
    if agreement.low is None or agreement.n_clusters == 1:
        return CONTESTED, (
            f"experts agree with the judge on {agreement.value:.0%}, but every rating comes "
            "from one base scenario: no interval, so it cannot be validated"
        )
    low = agreement.low
    share = f"experts agree with the judge on {agreement.value:.0%} (lower bound {low:.0%})"
    if low < VALIDATED_AGREEMENT_LOW:
        return CONTESTED, f"{share}, below the {VALIDATED_AGREEMENT_LOW:.0%} needed"
    if kappa.value is None:
        return CONTESTED, f"{share}, but kappa is undefined: every verdict was the same"
    if kappa.value < VALIDATED_KAPPA:
        return CONTESTED, (
            f"{share}, but only {kappa.value:.2f} beyond chance (kappa; "
            f"{VALIDATED_KAPPA:.2f} needed)"
        )
    return VALIDATED, f"{share}, kappa {kappa.value:.2f}"


def judge_trust_by(
    groups: Sequence[Hashable] | NDArray[Any],
    judge: ArrayLike,
    expert: ArrayLike,
    clusters: ArrayLike | None = None,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> dict[Hashable, JudgeTrust]:
    """:func:`judge_trust` for each group (``groups[i]``: e.g. the metric, or the target model,
    of rating ``i``), in order of first appearance; each group's figures exactly those
    :func:`judge_trust` gives its rows alone.

    A release has about 8,000 metric x model cells of a few ratings each, so drawing and
    reading each cell's bootstrap on its own costs far more than the arithmetic: the cells with
    the same number of clusters share their drawing (the one each would make with this seed)
    and are resampled in batches of one product each."""
    labels = list(groups.tolist() if isinstance(groups, np.ndarray) else groups)
    j, e = np.asarray(judge, dtype=np.float64), np.asarray(expert, dtype=np.float64)
    c = None if clusters is None else np.asarray(clusters)
    # Each group's rows found in one pass: a mask per group would compare every rating with
    # every group (a release's metric × model cells: ~8,000 groups over ~50,000 ratings).
    members: dict[Hashable, list[int]] = {}
    for i, label in enumerate(labels):
        members.setdefault(label, []).append(i)
    found: dict[Hashable, JudgeTrust] = {}
    by_size: dict[int, list[tuple[Hashable, _Cell]]] = {}
    for label, rows in members.items():
        mine = np.asarray(rows, dtype=np.intp)
        cell = _Cell.of(j[mine], e[mine], None if c is None else c[mine])
        if cell is None:  # nothing to resample together: the general path says why
            found[label] = judge_trust(
                j[mine],
                e[mine],
                None if c is None else c[mine],
                n_resamples=n_resamples,
                seed=seed,
                confidence=confidence,
            )
        else:
            by_size.setdefault(cell.g, []).append((label, cell))
    for g, cells in by_size.items():
        hits = cluster_hits(g, n_resamples, seed)
        for start in range(0, len(cells), _CELLS_PER_PRODUCT):
            batch = cells[start : start + _CELLS_PER_PRODUCT]
            trusts = _resampled([cell for _, cell in batch], hits, confidence)
            found.update(zip((label for label, _ in batch), trusts, strict=True))
    return {label: found[label] for label in members}  # in order of first appearance


# Cells resampled by one product: (cells, resamples, 6) floats, ~25 MB at 2,000 resamples.
_CELLS_PER_PRODUCT = 256


@dataclass(frozen=True)
class _Cell:
    """One group's per-cluster sums (agreed, rated, and the 2 x 2 confusion table, flattened),
    when its agreement comes from a bootstrap: enough rows and two clusters or more. ``k`` is
    1 when judge and expert gave one and the same verdict throughout (kappa undefined, as
    ``cohen_estimate`` says; the agreement is still resampled)."""

    per_cluster: NDArray[np.float64]
    g: int
    n: int
    k: int
    agreement: float
    confusion: NDArray[np.float64]
    excluded: tuple[Exclusion, ...]
    clusters: ArrayLike | None

    @classmethod
    def of(
        cls, judge: NDArray[np.float64], expert: NDArray[np.float64], clusters: ArrayLike | None
    ) -> _Cell | None:
        both = np.isfinite(judge) & np.isfinite(expert)
        n = int(both.sum())
        if n < MIN_ITEMS:
            return None
        x, y = judge[both], expert[both]
        pair, k = cohen_pair_codes(x, y)
        codes, g = cluster_codes(None if clusters is None else np.asarray(clusters)[both], n)
        if k not in (1, 2) or g < 2:
            return None
        sums = np.zeros((n, 6))
        sums[:, 0] = x == y
        sums[:, 1] = 1.0
        sums[np.arange(n), 2 + pair] = 1.0
        total = sums.sum(axis=0)
        per_cluster = np.zeros((g, 6))
        np.add.at(per_cluster, codes, sums)
        missing = Exclusion("judge or expert verdict missing", int((~both).sum()))
        kept = (missing,) if missing.count else ()
        return cls(per_cluster, g, n, k, float(total[0] / total[1]), total[2:], kept, clusters)


def _resampled(
    cells: list[_Cell], hits: NDArray[np.float64], confidence: float
) -> list[JudgeTrust]:
    """The cells' agreement and kappa, each with the interval and sd its own estimator gives
    (whole-number sums: the batched product is exact)."""
    resampled = hits @ np.stack([cell.per_cluster for cell in cells])  # (cells, B, 6)
    kappa = cohen_from_confusion(resampled[:, :, 2:].reshape(-1, 4), 2).reshape(len(cells), -1).T
    # The point kappas too in one call: row by row, cohen_from_confusion's own figures.
    points = cohen_from_confusion(np.stack([cell.confusion for cell in cells]), 2)
    k_low, k_high = percentile_interval(kappa, confidence)
    k_sd = [bootstrap_sd(column) for column in np.ascontiguousarray(kappa.T)]
    trusts = []
    for i, cell in enumerate(cells):
        # The bounds agreement_estimates gives: Wilson on the effective size, and the hull of
        # the bootstrap with its image for kappa (the agreement's effective size serves both).
        over = "base scenarios" if cell.clusters is not None else "ratings"
        common = partial(
            Estimate, confidence=confidence, n=cell.n, n_clusters=cell.g, excluded=cell.excluded
        )
        rate, low, high, agreement_size = proportion_bounds(
            cell.per_cluster[:, 0], cell.per_cluster[:, 1], confidence=confidence
        )
        # Kappa's effective size from the disagreements, as coefficient_interval counts them.
        disagreed = cell.per_cluster[:, 1] - cell.per_cluster[:, 0]
        size = effective_size(disagreed, cell.per_cluster[:, 1])
        agree = common(
            rate,
            low,
            high,
            unit="proportion",
            sd=proportion_sd(rate, agreement_size),
            method=proportion_method(cell.clusters, over),
        )
        method = coefficient_method(cell.clusters, over)
        # What cohen_estimate (one verdict throughout) and sums_estimates (no finite point
        # value) give when kappa is undefined.
        if cell.k == 1:
            kappa_i = Estimate.insufficient(
                n=cell.n, unit="coefficient", reason="undefined (no variation)"
            )
        elif not np.isfinite(points[i]):
            kappa_i = Estimate.insufficient(
                n=cell.n,
                n_clusters=cell.g,
                unit="coefficient",
                method=method,
                excluded=cell.excluded,
                reason="undefined (no variation)",
            )
        else:
            k_bounds = coefficient_bounds(
                float(points[i]),
                cohen_chance(cell.confusion, 2),
                size,
                bootstrap=(k_low[i], k_high[i]),
                confidence=confidence,
            )
            kappa_i = common(
                points[i], *k_bounds, unit="coefficient", sd=k_sd[i] or None, method=method
            )
        trusts.append(JudgeTrust(agree, kappa_i, *trust_badge(agree, kappa_i)))
    return trusts
