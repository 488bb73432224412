"""How far a judge can be trusted on a metric or a model: blind expert agreement and a badge.

The figures compare the judge's verdict with blind expert verdicts on the same conversations
from a *random* calibration sample. Ratings from a triage queue (conversations chosen because
judges or repetitions disagreed) must not be used here: chosen for disagreement, they would
understate agreement.

A cell (a metric and a model) holds about six verdicts from three base scenarios. A cluster
bootstrap there has ten distinct resamples and, when judge and experts agree throughout, only
one value: "1.000 [1.000, 1.000]". So the agreement's interval is Wilson's score interval on
the *effective* number of verdicts (``n`` over the design effect of the base scenarios), which
has positive width inside [0, 1] at every n, 0 of n and n of n included; kappa's interval is
the bootstrap's widened to hold the agreement's interval mapped to kappa at the observed
chance agreement, so it too has positive width wherever kappa is defined.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stats.estimates import MIN_ITEMS, Estimate, Exclusion

from .agreement import cohen_from_confusion, cohen_pair_codes
from .bootstrap import cluster_hits
from .bounds import coefficient_image
from .few_clusters import intra_cluster_correlation
from .figures import DEFAULT_RESAMPLES
from .figures import _codes as cluster_codes
from .judge_trust_intervals import chance_agreement, effective_agreement_interval, shrunk_icc
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
# HealthBench, clinicians 0.77 in VERA-MH), and the lower bound, not the point value, so
# sampling luck cannot validate it.
VALIDATED_AGREEMENT_LOW = 0.70
# ... and its Cohen's kappa reaches 0.40 ("moderate", Landis & Koch 1977): raw agreement alone
# rewards a judge that passes everything on a metric experts also mostly pass.
VALIDATED_KAPPA = 0.40
AGREEMENT_METHOD = "Wilson score interval on the effective number of verdicts"
AGREEMENT_METHOD_CLUSTERED = (
    "Wilson score interval on the effective number of verdicts (design effect over base scenarios)"
)
KAPPA_METHOD = "agreement's Wilson interval mapped to kappa at the observed chance agreement"
KAPPA_METHOD_RESAMPLED = (
    "percentile bootstrap over {over}, widened to the agreement's Wilson interval mapped to "
    "kappa at the observed chance agreement"
)


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
    icc: float | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> JudgeTrust:
    """Blind expert agreement with the judge, and the badge it earns.

    ``judge[i]`` and ``expert[i]`` are the verdicts (0 or 1) on one expert rating's
    conversation (one row per expert rating; ``nan`` where either is missing: excluded and
    counted). ``clusters`` (base scenarios) keep correlated ratings together: the design effect
    of the agreement's interval and the units kappa's bootstrap resamples. ``icc`` is the
    release's intra-cluster correlation of agreement (``agreement_icc`` in
    :mod:`.judge_trust_intervals`, as are the two functions below); without it, this cell's
    own.

    * ``agreement``: share of rows where the verdicts are equal, Wilson interval on the
      effective n (``effective_agreement_interval``);
    * ``kappa``: Cohen's kappa (unweighted, as ``sklearn.metrics.cohen_kappa_score``), interval
      from ``bounds.coefficient_image`` joined with the cluster bootstrap's;
      undefined when both sides give one verdict throughout;
    * ``badge``: :func:`trust_badge`.

    Estimates agreement on the population the sample was drawn from (one metric, one target
    model); with unequal inclusion probabilities inside that cell it is unweighted.
    """
    j = np.asarray(judge, dtype=np.float64)
    e = np.asarray(expert, dtype=np.float64)
    if j.shape != e.shape or j.ndim != 1:
        raise ValueError("judge and expert must be 1-D and paired (one row per expert rating)")
    return judge_trust_by(
        np.zeros(j.size, dtype=np.intp),
        j,
        e,
        clusters,
        icc=icc,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
    ).get(0) or _insufficient(_Cell.of(j, e, None))  # no rows at all


def trust_badge(agreement: Estimate, kappa: Estimate) -> tuple[str, str]:
    """The badge and its reason for an agreement and a kappa figure (thresholds above)."""
    n = agreement.n
    if n < MIN_EXPERT_VERDICTS or not agreement.defined:
        return NOT_CHECKED, (
            f"{n} blind expert verdicts so far; a badge needs {MIN_EXPERT_VERDICTS}"
        )
    if agreement.low is None:
        return CONTESTED, (
            f"experts agree with the judge on {agreement.value:.0%}, but no interval could be "
            "drawn, so it cannot be validated"
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
    icc: float | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> dict[Hashable, JudgeTrust]:
    """:func:`judge_trust` for each group (``groups[i]``: e.g. the metric, or the target model,
    of rating ``i``), in order of first appearance; each group's figures exactly those
    :func:`judge_trust` gives its rows alone with the same ``icc`` (without one, the
    groups' pooled ``agreement_icc``).

    A release has about 8,000 metric x model cells of a few ratings each, so drawing and
    reading each cell's bootstrap on its own costs far more than the arithmetic: the cells with
    the same number of clusters share their drawing (the one each would make with this seed)
    and are resampled in batches of one product each; the Wilson intervals are one vectorised
    call for all cells."""
    labels = list(groups.tolist() if isinstance(groups, np.ndarray) else groups)
    j, e = np.asarray(judge, dtype=np.float64), np.asarray(expert, dtype=np.float64)
    c = None if clusters is None else np.asarray(clusters)
    if c is not None and c.shape != j.shape:
        raise ValueError(f"clusters must be 1-D with one label per item ({j.size})")
    # Each group's rows found in one pass: a mask per group would compare every rating with
    # every group (a release's metric × model cells: ~8,000 groups over ~50,000 ratings).
    members: dict[Hashable, list[int]] = {}
    for i, label in enumerate(labels):
        members.setdefault(label, []).append(i)
    found: dict[Hashable, JudgeTrust] = {}
    cells: list[tuple[Hashable, _Cell]] = []
    for label, rows in members.items():
        mine = np.asarray(rows, dtype=np.intp)
        cell = _Cell.of(j[mine], e[mine], None if c is None else c[mine])
        if cell.n < MIN_ITEMS:
            found[label] = _insufficient(cell)
        else:
            cells.append((label, cell))
    if cells:
        if icc is None:
            icc = _pooled_icc([cell for _, cell in cells])
        trusts = _figures([cell for _, cell in cells], icc, n_resamples, seed, confidence)
        found.update(zip((label for label, _ in cells), trusts, strict=True))
    return {label: found[label] for label in members}  # in order of first appearance


# Cells resampled by one product: (cells, resamples, 4) floats, ~16 MB at 2,000 resamples.
_CELLS_PER_PRODUCT = 256


@dataclass(frozen=True)
class _Cell:
    """One group's verdicts reduced to what its figures need: per-cluster sums (agreed, rated,
    and the 2 x 2 confusion table, flattened), ``k`` the number of distinct verdicts (1: kappa
    undefined), and the rows left out."""

    per_cluster: NDArray[np.float64]
    g: int
    n: int
    k: int
    clustered: bool
    excluded: tuple[Exclusion, ...]

    @property
    def agreed(self) -> float:
        return float(self.per_cluster[:, 0].sum())

    @property
    def confusion(self) -> NDArray[np.float64]:
        return self.per_cluster[:, 2:].sum(axis=0)

    @classmethod
    def of(
        cls, judge: NDArray[np.float64], expert: NDArray[np.float64], clusters: ArrayLike | None
    ) -> _Cell:
        both = np.isfinite(judge) & np.isfinite(expert)
        n = int(both.sum())
        x, y = judge[both], expert[both]
        missing = Exclusion("judge or expert verdict missing", int((~both).sum()))
        kept = (missing,) if missing.count else ()
        if n == 0:
            return cls(np.zeros((0, 6)), 0, 0, 0, clusters is not None, kept)
        if not np.isin(np.concatenate([x, y]), (0.0, 1.0)).all():
            raise ValueError("judge and expert verdicts must be 0 or 1")
        _, k = cohen_pair_codes(x, y)
        codes, g = cluster_codes(None if clusters is None else np.asarray(clusters)[both], n)
        sums = np.zeros((n, 6))
        sums[:, 0] = x == y
        sums[:, 1] = 1.0
        sums[np.arange(n), 2 + (2 * x + y).astype(np.intp)] = 1.0
        per_cluster = np.zeros((g, 6))
        np.add.at(per_cluster, codes, sums)
        return cls(per_cluster, g, n, k, clusters is not None, kept)

    def own_icc(self) -> float:
        if self.g < 2:
            return 0.0
        rated = self.per_cluster[:, 1]
        return intra_cluster_correlation(np.zeros(self.g), self.per_cluster[:, 0], rated)


def _pooled_icc(cells: list[_Cell]) -> float:
    """The release's ``agreement_icc`` from the cells' per-cluster sums; 1 (each base scenario
    counts as one verdict) when no cell has two clusters to estimate it from: with nothing
    known, the cautious reading."""
    if all(cell.g < 2 for cell in cells):
        return 1.0
    group = np.concatenate([np.full(cell.g, i) for i, cell in enumerate(cells)])
    stacked = np.concatenate([cell.per_cluster for cell in cells])
    return intra_cluster_correlation(group, stacked[:, 0], stacked[:, 1])


def _insufficient(cell: _Cell) -> JudgeTrust:
    common: dict[str, Any] = {"n": cell.n, "excluded": cell.excluded, "reason": "not enough data"}
    agreement = Estimate.insufficient(unit="proportion", **common)
    kappa = Estimate.insufficient(unit="coefficient", **common)
    return JudgeTrust(agreement, kappa, *trust_badge(agreement, kappa))


def _bootstrap_kappas(
    cells: list[_Cell], n_resamples: int, seed: int | None, confidence: float
) -> dict[int, tuple[float, float, float | None]]:
    """Percentile interval and sd of kappa for every cell with two clusters or more and two
    verdicts, by position: the cells with the same number of clusters share one drawing and
    are resampled in batches (whole-number sums: the batched product is exact)."""
    by_size: dict[int, list[int]] = {}
    for i, cell in enumerate(cells):
        if cell.g >= 2 and cell.k == 2:
            by_size.setdefault(cell.g, []).append(i)
    out: dict[int, tuple[float, float, float | None]] = {}
    for g, positions in by_size.items():
        hits = cluster_hits(g, n_resamples, seed)
        for start in range(0, len(positions), _CELLS_PER_PRODUCT):
            batch = positions[start : start + _CELLS_PER_PRODUCT]
            tables = np.stack([cells[i].per_cluster[:, 2:] for i in batch])
            resampled = hits @ tables  # (cells, B, 4)
            kappa = cohen_from_confusion(resampled.reshape(-1, 4), 2).reshape(len(batch), -1).T
            low, high = percentile_interval(kappa, confidence)
            for column, i in enumerate(batch):
                out[i] = (float(low[column]), float(high[column]), bootstrap_sd(kappa[:, column]))
    return out


def _figures(
    cells: list[_Cell], icc: float, n_resamples: int, seed: int | None, confidence: float
) -> list[JudgeTrust]:
    """Every cell's agreement, kappa and badge (cells of ``MIN_ITEMS`` rows or more)."""
    n = np.array([cell.n for cell in cells], dtype=np.float64)
    g = np.array([cell.g for cell in cells], dtype=np.float64)
    agreed = np.array([cell.agreed for cell in cells])
    own = np.array([cell.own_icc() for cell in cells])
    rho = shrunk_icc(own, g, icc)
    a_low, a_high = effective_agreement_interval(agreed, n, g, rho, confidence)
    confusion = np.stack([cell.confusion for cell in cells])
    points = cohen_from_confusion(confusion, 2)
    k_low, k_high = coefficient_image(a_low, a_high, chance_agreement(confusion))
    # The mapping holds the point up to rounding (an ulp past it at 0 agreements of n).
    with np.errstate(invalid="ignore"):
        k_low, k_high = np.fmin(k_low, points), np.fmax(k_high, points)
    resampled = _bootstrap_kappas(cells, n_resamples, seed, confidence)
    trusts = []
    for i, cell in enumerate(cells):
        over = "base scenarios" if cell.clustered else "ratings"
        common: dict[str, Any] = {
            "confidence": confidence,
            "n": cell.n,
            "n_clusters": cell.g,
            "excluded": cell.excluded,
        }
        agree = Estimate(
            float(agreed[i] / n[i]),
            float(a_low[i]),
            float(a_high[i]),
            method=AGREEMENT_METHOD_CLUSTERED if cell.clustered else AGREEMENT_METHOD,
            unit="proportion",
            **common,
        )
        if cell.k < 2 or not np.isfinite(points[i]):
            # No variation: kappa is 0/0, never the 1.0 a perfect table would suggest.
            kappa = Estimate.insufficient(
                n=cell.n,
                n_clusters=cell.g,
                excluded=cell.excluded,
                unit="coefficient",
                reason="undefined (no variation)",
            )
        elif i in resampled:
            low, high, sd = resampled[i]
            kappa = Estimate(
                float(points[i]),
                min(float(k_low[i]), low) if np.isfinite(low) else float(k_low[i]),
                max(float(k_high[i]), high) if np.isfinite(high) else float(k_high[i]),
                method=KAPPA_METHOD_RESAMPLED.format(over=over),
                unit="coefficient",
                sd=sd,
                **common,
            )
        else:
            kappa = Estimate(
                float(points[i]),
                float(k_low[i]),
                float(k_high[i]),
                method=KAPPA_METHOD,
                unit="coefficient",
                **common,
            )
        trusts.append(JudgeTrust(agree, kappa, *trust_badge(agree, kappa)))
    return trusts
