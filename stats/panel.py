"""A panel of judges: the panel's verdict, inter-judge agreement, and each judge's own rate.

Readings come as ``readings[conversation, judge, repetition]`` (``nan`` = no reading): binary
(0/1) or ordinal (numbers on one scale) verdicts. Each judge's verdict on a conversation is the
most frequent of its readings; the panel's verdict is the most frequent of the judges'
verdicts. A tie at either step is reported as a tie and never broken: a split panel is itself
a finding (the conversation is one an expert should look at), and breaking it toward pass or
fail would bias the published rate.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stats.estimates import Estimate, Exclusion

from .agreement import category_counts
from .differences import paired_difference_estimate
from .figures import DEFAULT_RESAMPLES, Resampling, proportion_estimate
from .krippendorff_figures import krippendorff_estimate


@dataclass(frozen=True)
class PanelVerdicts:
    """``verdict[c]``: the panel's verdict (``nan`` on a tie or with no judge verdict);
    ``tie[c]``: the judges' verdicts were split evenly between the most frequent values;
    ``judge_verdict[c, j]``: judge ``j``'s verdict (``nan`` if its readings tied or are
    missing); ``judge_tie[c, j]``: judge ``j``'s own readings tied."""

    verdict: NDArray[np.float64]
    tie: NDArray[np.bool_]
    judge_verdict: NDArray[np.float64]
    judge_tie: NDArray[np.bool_]


def _readings(readings: ArrayLike) -> NDArray[np.float64]:
    arr = np.asarray(readings, dtype=np.float64)
    if arr.ndim != 3 or 0 in arr.shape:
        raise ValueError(
            "readings must be a non-empty conversations x judges x repetitions array; "
            f"got shape {arr.shape}"
        )
    if np.isinf(arr).any():
        raise ValueError("readings must be finite (nan marks a missing reading)")
    return arr


def _mode_or_tie(labels: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Per row of ``labels[item, rater]``: the most frequent value (``nan`` if none or tied)
    and whether it tied."""
    out = np.full(labels.shape[0], np.nan)
    tie = np.zeros(labels.shape[0], dtype=bool)
    if np.isnan(labels).all():
        return out, tie
    counts, values = category_counts(labels)
    top = counts.max(axis=1)
    leaders = (counts == top[:, None]).sum(axis=1)
    tie = (top > 0) & (leaders > 1)
    decided = (top > 0) & ~tie
    out[decided] = values[counts[decided].argmax(axis=1)]
    return out, tie


def panel_verdicts(readings: ArrayLike) -> PanelVerdicts:
    """Each judge's verdict (mode of its repetitions) and the panel's (mode over judges).

    Ties are reported (``tie``, ``judge_tie``) and their verdict is ``nan``; a judge whose
    readings tie does not vote. Equals ``majority_vote`` wherever there is no tie (that
    function breaks ties; this one never does). Raises ``ValueError`` for input that is not a
    3-D numeric array.
    """
    arr = _readings(readings)
    c, j, r = arr.shape
    judge, judge_tie = _mode_or_tie(arr.reshape(c * j, r))
    judge, judge_tie = judge.reshape(c, j), judge_tie.reshape(c, j)
    verdict, tie = _mode_or_tie(judge)
    return PanelVerdicts(verdict, tie, judge, judge_tie)


def _passes(verdicts: NDArray[np.float64], pass_threshold: float | None) -> NDArray[np.float64]:
    if pass_threshold is None:
        present = verdicts[np.isfinite(verdicts)]
        if not np.isin(present, (0.0, 1.0)).all():
            raise ValueError("ordinal verdicts need a pass_threshold (pass = verdict >= it)")
        return verdicts
    return np.where(np.isfinite(verdicts), (verdicts >= pass_threshold).astype(float), np.nan)


def panel_agreement(
    readings: ArrayLike,
    clusters: ArrayLike | None = None,
    *,
    pass_threshold: float | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> dict[str, Estimate]:
    """Inter-judge agreement: Krippendorff's alpha over the judges' verdicts.

    Units are conversations, raters the judges, values each judge's verdict (the mode of its
    repetitions; a judge whose repetitions tie counts as missing for that conversation, and a
    conversation with fewer than two judge verdicts is left out). Returns ``{"ordinal",
    "binary"}``: alpha at the ordinal level on the verdicts as given, and at the nominal level
    on pass/fail (``verdict >= pass_threshold``; binary verdicts as they are) -- for two
    categories every level gives the same alpha, so for 0/1 verdicts both figures agree.

    The interval is the percentile interval of a bootstrap drawing whole ``clusters`` (the
    conversations' base scenarios: variants and repetitions of one scenario are not
    independent), or conversations without them -- the one resampling engine
    (:func:`.krippendorff_estimate`). Alpha measures agreement beyond chance
    among these judges on these conversations; it is undefined (``Estimate.insufficient``)
    when all verdicts are the same, and says nothing about whether the judges are right (that
    is expert agreement, :mod:`stats.judge_trust`).
    """
    verdicts = panel_verdicts(readings).judge_verdict
    options = {
        "n_resamples": n_resamples,
        "seed": seed,
        "confidence": confidence,
        "over": "base scenarios" if clusters is not None else "conversations",
    }
    return {
        "ordinal": krippendorff_estimate(verdicts.T, "ordinal", clusters, **options),
        "binary": krippendorff_estimate(
            _passes(verdicts, pass_threshold).T, "nominal", clusters, **options
        ),
    }


@dataclass(frozen=True)
class JudgeRate:
    """One judge's pass rate on one target, and its paired difference from the panel."""

    judge: Hashable
    target: Hashable
    pass_rate: Estimate
    minus_panel: Estimate


def judge_pass_rates(
    readings: ArrayLike,
    targets: ArrayLike,
    clusters: ArrayLike | None = None,
    *,
    judges: Sequence[Hashable] | None = None,
    pass_threshold: float | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> list[JudgeRate]:
    """Each judge's own pass rate per target, and how far it sits from the panel's.

    For judge ``j`` and target ``t`` (``targets[c]``: the conversation's target model):

    * ``pass_rate``: share of the target's conversations the judge passes (its own verdict,
      the mode of its repetitions; conversations where those tie are excluded and counted);
    * ``minus_panel``: the judge's pass rate minus the panel's on the same conversations --
      the mean over conversations of ``pass_j - pass_panel`` (paired by conversation), over
      those where both the judge and the panel have a verdict (panel ties excluded and
      counted). Positive: a kinder judge than the panel, negative: a harsher one.

    Both intervals treat whole base scenarios (``clusters``; conversations when ``None``) as
    the units, so a judge's harshness is judged against the spread over scenarios, not over
    correlated conversations: the rate's is Wilson on its effective size, the difference's
    Newcombe's paired score interval (:func:`.differences.paired_difference_estimate`), which
    stays open when the judge and the panel agree on every conversation. The panel includes
    the judge itself, so with few judges the difference is pulled toward zero; it estimates
    the gap to this panel, not to the truth (see :mod:`stats.ppi` for that).
    """
    arr = _readings(readings)
    panel = panel_verdicts(arr)
    target = np.asarray(targets)
    if target.shape != (arr.shape[0],):
        raise ValueError(f"targets must have one label per conversation ({arr.shape[0]})")
    cluster = None if clusters is None else np.asarray(clusters)
    if cluster is not None and cluster.shape != target.shape:
        raise ValueError(f"clusters must have one label per conversation ({arr.shape[0]})")
    names = list(judges) if judges is not None else list(range(arr.shape[1]))
    if len(names) != arr.shape[1]:
        raise ValueError(f"judges must name each of the {arr.shape[1]} judges")
    judge_pass = _passes(panel.judge_verdict, pass_threshold)
    panel_pass = _passes(panel.verdict, pass_threshold)
    options: Resampling = {
        "n_resamples": n_resamples,
        "seed": seed,
        "confidence": confidence,
        "over": "base scenarios" if cluster is not None else "conversations",
    }
    out = []
    for t in _unique(target):
        mine = target == t
        for j, name in enumerate(names):
            own = mine & np.isfinite(judge_pass[:, j])
            tied = Exclusion(
                "the judge's repetitions tied", int((mine & panel.judge_tie[:, j]).sum())
            )
            unread = Exclusion(
                "no reading by this judge",
                int((mine & ~panel.judge_tie[:, j] & ~np.isfinite(judge_pass[:, j])).sum()),
            )
            both = own & np.isfinite(panel_pass)
            split = Exclusion("the panel tied", int((own & panel.tie).sum()))
            rate = proportion_estimate(
                judge_pass[own, j],
                None if cluster is None else cluster[own],
                excluded=(tied, unread),
                **options,
            )
            sums = _paired_gap(
                judge_pass[both, j], panel_pass[both], None if cluster is None else cluster[both]
            )
            gap = paired_difference_estimate(
                sums[:, :2],
                sums[:, 2:],
                items=int(both.sum()),
                over=options["over"],
                confidence=confidence,
                excluded=(tied, unread, split),
            )
            out.append(JudgeRate(name, t, rate, gap))
    return out


def _paired_gap(
    judge: NDArray[np.float64], panel: NDArray[np.float64], clusters: NDArray | None
) -> NDArray[np.float64]:
    """Per cluster (conversation when ``clusters`` is None): the judge's and the panel's
    passes, and the conversations twice (each side's n)."""
    labels = np.arange(judge.size) if clusters is None else clusters
    code = np.unique(labels, return_inverse=True)[1].ravel()
    out = np.zeros((int(code.max()) + 1 if code.size else 0, 4))
    np.add.at(out, code, np.column_stack([judge, panel, np.ones_like(judge), np.ones_like(judge)]))
    return out


def _unique(labels: NDArray) -> list:
    seen: dict = {}
    for label in labels.tolist():
        seen.setdefault(label, None)
    return list(seen)
