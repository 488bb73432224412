"""Whether the judge agrees less with blind experts on one model than on the others.

A judge that fails a share of one model's true passes still agrees with experts on 85-90 % of
that model's conversations, enough for the absolute "validated" badge, while the rankings it
feeds are biased against that model. What catches it is the comparison: the judge's agreement
on the model minus its agreement on the other models *on the same metrics*.

* The model's agreement ``p1`` is over its ratings on metrics the other models were also
  rated on; the others' agreement ``p2`` is standardised to the model's metric mix (each
  metric's agreement on the other models, weighted by the model's number of ratings there),
  so a model rated mostly on hard metrics is not flagged for the metrics.
* Each side has a Wilson interval on its effective number of verdicts: Kish's effective size
  of the weights, over the design effect of the base scenarios
  (:func:`.judge_trust_intervals.effective_agreement_interval`).
* The difference's interval is Newcombe's (MOVER) from the two, which stays inside [-1, 1].
  The two sides share base scenarios (the same scenarios are rated for every model) and so
  are positively correlated; treating them as independent only widens the interval.
* Over K models the intervals are Bonferroni-adjusted (each at ``1 - alpha / K``), so the
  chance that any model is flagged when the judge treats all alike is nominally ``alpha / 2``;
  simulated (``benchmarks/judge_bias.py``), 3.3 % with 6 models and 4.4 % with 10 at alpha =
  0.05: this far in the tail the Wilson bounds run slightly short, still below 5 %.

"Judge agrees less for this model" is claimed only when the adjusted interval lies wholly
below 0 and the model has at least ``MIN_EXPERT_VERDICTS`` blind verdicts.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stats.estimates import MIN_ITEMS, Estimate

from .bounds import mover_difference
from .few_clusters import design_effect, effective_wilson
from .judge_trust import AGREEMENT_METHOD_CLUSTERED, MIN_EXPERT_VERDICTS
from .judge_trust_intervals import agreement_icc, effective_agreement_interval

AGREES_LESS = "judge agrees less for this model"
NOT_LESS = "no shown difference"
GAP_METHOD = (
    "Newcombe (MOVER) difference of Wilson intervals on effective numbers of verdicts, the "
    "other models standardised to this model's metrics"
)
GAP_METHOD_ADJUSTED = GAP_METHOD + ", Bonferroni-adjusted over {k} models"
WILSON = AGREEMENT_METHOD_CLUSTERED
WILSON_STANDARDISED = (
    "Wilson score interval on the effective number of verdicts (Kish's size of the metric "
    "weights over the design effect of base scenarios)"
)


@dataclass(frozen=True)
class AgreementGap:
    """The judge's agreement with experts on one model, on the other models (standardised to
    this model's metrics), their difference, and whether it shows the judge agrees less."""

    model: Estimate
    others: Estimate
    difference: Estimate
    agrees_less: bool


def agreement_gaps(
    models: Sequence[Hashable] | NDArray[Any],
    metrics: Sequence[Hashable] | NDArray[Any],
    judge: ArrayLike,
    expert: ArrayLike,
    clusters: ArrayLike,
    *,
    icc: float | None = None,
    confidence: float = 0.95,
    adjust: bool = True,
) -> dict[Hashable, AgreementGap]:
    """Per model (in order of first appearance), the judge's agreement on it against the
    others' on the same metrics (module doc). Row ``i`` is one blind rating: the model and the
    metric of its conversation, the judge's and the expert's verdicts (0/1, ``nan`` missing:
    left out) and its base scenario. ``icc``: the release's intra-cluster correlation of
    agreement (:func:`.judge_trust_intervals.agreement_icc` over metric x model cells when
    not given).
    ``adjust``: Bonferroni over the models compared."""
    j, e = np.asarray(judge, dtype=np.float64), np.asarray(expert, dtype=np.float64)
    both = np.isfinite(j) & np.isfinite(e)
    names, model = _codes(models)
    _, metric = _codes(metrics)
    _, cluster = _codes(clusters)
    model, metric, cluster = model[both], metric[both], cluster[both]
    agreed = (j[both] == e[both]).astype(np.float64)
    if icc is None:
        cells = model * (int(metric.max(initial=0)) + 1) + metric
        icc = agreement_icc(cells, j[both], e[both], cluster) if agreed.size else 0.0
    compared = max(len(names), 1)
    level = 1.0 - (1.0 - confidence) / compared if adjust else confidence
    method = GAP_METHOD_ADJUSTED.format(k=compared) if adjust and compared > 1 else GAP_METHOD
    rows = _Rows(metric, cluster, agreed, int(metric.max(initial=-1)) + 1)
    return {name: _gap(rows, model == code, icc, level, method) for code, name in enumerate(names)}


@dataclass(frozen=True)
class _Rows:
    metric: NDArray[np.int64]
    cluster: NDArray[np.int64]
    agreed: NDArray[np.float64]
    n_metrics: int


def _gap(
    rows: _Rows, mine: NDArray[np.bool_], icc: float, level: float, method: str
) -> AgreementGap:
    own = np.bincount(rows.metric[mine], minlength=rows.n_metrics)
    other = np.bincount(rows.metric[~mine], minlength=rows.n_metrics)
    shared = (own > 0) & (other > 0)
    first = mine & shared[rows.metric]
    second = ~mine & shared[rows.metric]
    n1, n2 = int(first.sum()), int(second.sum())
    g1, g2 = (np.unique(rows.cluster[side]).size for side in (first, second))
    if min(n1, n2) < MIN_ITEMS:
        reason = "too few ratings on metrics the other models were also rated on"
        figures = (
            Estimate.insufficient(n=n1, n_clusters=g1, reason=reason),
            Estimate.insufficient(n=n2, n_clusters=g2, reason=reason),
            Estimate.insufficient(n=n1 + n2, unit="difference", reason=reason),
        )
        return AgreementGap(*figures, agrees_less=False)
    p1 = float(rows.agreed[first].mean())
    low1, high1 = effective_agreement_interval(rows.agreed[first].sum(), n1, g1, icc, level)
    # Each other model's rating weighted so that every metric counts as much as it does in
    # this model's ratings: the others' agreement on this model's metric mix.
    weight = (own / n1)[rows.metric[second]] / other[rows.metric[second]]
    p2 = float(np.clip((weight * rows.agreed[second]).sum(), 0.0, 1.0))
    kish = float(1.0 / (weight * weight).sum())
    deff = design_effect(icc, n2 / g2)
    low2, high2 = effective_wilson(p2 * kish, kish, deff, level)
    # The two sides are different models' ratings: independent samples, correlation 0.
    low, high = mover_difference(p1, low1, high1, p2, low2, high2)
    d = p1 - p2
    model = Estimate(
        p1, float(low1), float(high1), method=WILSON, n=n1, n_clusters=g1, confidence=level
    )
    others = Estimate(
        p2,
        float(low2),
        float(high2),
        method=WILSON_STANDARDISED,
        n=n2,
        n_clusters=g2,
        confidence=level,
    )
    difference = Estimate(
        float(d),
        float(low),
        float(high),
        method=method,
        n=n1 + n2,
        n_clusters=int(np.unique(rows.cluster[first | second]).size),
        unit="difference",
        confidence=level,
    )
    agrees_less = n1 >= MIN_EXPERT_VERDICTS and float(high) < 0.0
    return AgreementGap(model, others, difference, agrees_less)


def _codes(
    values: Sequence[Hashable] | NDArray[Any] | ArrayLike,
) -> tuple[list[Hashable], NDArray[np.int64]]:
    """The distinct values in order of first appearance, and each value's index among them."""
    listed = values.tolist() if isinstance(values, np.ndarray) else list(values)  # type: ignore[arg-type]
    index: dict[Hashable, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in listed), np.int64, len(listed))
    return list(index), codes
