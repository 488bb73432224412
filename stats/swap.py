"""Robustness to swapping the judge or the user simulator.

A swap study re-runs a random sample of the release's scenarios with an alternative simulator
and/or judge. These functions compare the two arms on the scenarios both ran:

* :func:`pass_rate_shift` -- a model's pass-rate change, paired by scenario;
* :func:`swap_rank_agreement` -- Kendall's tau between the two rankings of the models;
* :func:`verdict_flip_share` -- the share of verdicts that change;
* :func:`single_vs_majority` -- whether one judgment ranks metrics as three do (Spearman's rho).

Every interval treats whole scenarios -- or whole base scenarios when ``clusters`` maps
scenarios to them -- as the independent units, both arms together, so the pairing is kept, and
none collapses to a point or leaves its range (:mod:`.bounds`): the shift is a paired
difference of rates (:func:`.differences.paired_rate_differences`, Newcombe's hybrid score
interval), the flip share a proportion (Wilson on the effective size), and the two rank
correlations the hull of the cluster bootstrap's percentile interval
(:func:`stats.figures.sums_estimate`, the same draws for both arms) and a score interval on
the ranked items.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as _scipy_stats

from stats.estimates import Estimate, Exclusion

from .bounds import RANK_HULL, rank_correlation_bounds
from .differences import paired_difference_estimate
from .figures import DEFAULT_RESAMPLES, proportion_estimate, sums_estimate
from .ranking import kendall_tau_b_rows


def _binary(values: ArrayLike, what: str) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64)
    if not np.isin(arr[np.isfinite(arr)], (0.0, 1.0)).all() or np.isinf(arr).any():
        raise ValueError(f"{what} must hold 0/1 verdicts (nan where missing)")
    return arr


def _over(clusters: object) -> str:
    return "base scenarios" if clusters is not None else "scenarios"


def pass_rate_shift(
    original: ArrayLike,
    original_scenarios: ArrayLike,
    swapped: ArrayLike,
    swapped_scenarios: ArrayLike,
    *,
    clusters: dict | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> Estimate:
    """One model's pass rate with the swap minus without it, paired by scenario.

    ``original[i]`` / ``swapped[k]`` are the model's pass/fail verdicts (0/1) of the two arms'
    conversations, with the scenario each ran. Only scenarios run in both arms count (the
    others are excluded and counted), so both rates describe the same scenarios::

        shift = sum_s passes_swapped / sum_s n_swapped - sum_s passes_original / sum_s n_original

    The interval is the paired difference of :func:`.differences.paired_rate_differences`
    over scenarios (or the base scenarios ``clusters[scenario]`` names): the pairing removes
    the scenarios' own difficulty from the spread, which is why it is narrower than comparing
    two independent rates; Newcombe's score bounds keep it inside [-1, 1] and open at 0 % and
    100 %. It does not apply when the swapped arm's scenarios were chosen by their results.
    ``n_resamples`` and ``seed`` are kept for the callers' one set of options (the max-t
    draw of one pair needs none).
    """
    o = _binary(original, "original")
    w = _binary(swapped, "swapped")
    o_s, w_s = np.asarray(original_scenarios), np.asarray(swapped_scenarios)
    if o_s.shape != o.shape or w_s.shape != w.shape:
        raise ValueError("each verdict needs its scenario")
    o_keep, w_keep = np.isfinite(o), np.isfinite(w)
    shared = np.intersect1d(o_s[o_keep], w_s[w_keep])
    index = {s: i for i, s in enumerate(shared.tolist())}
    sums = np.zeros((shared.size, 4))
    for col, (verdicts, scenarios, keep) in enumerate(((o, o_s, o_keep), (w, w_s, w_keep))):
        rows = np.array([index.get(s, -1) for s in scenarios[keep].tolist()], dtype=np.intp)
        inside = rows >= 0
        np.add.at(sums[:, 2 * col], rows[inside], verdicts[keep][inside])
        np.add.at(sums[:, 2 * col + 1], rows[inside], 1.0)
    unpaired = np.setdiff1d(np.union1d(o_s[o_keep], w_s[w_keep]), shared).size
    excluded = (Exclusion("scenario run in one arm only", int(unpaired)),)
    labels = shared.tolist() if clusters is None else [clusters[s] for s in shared.tolist()]
    _, code = np.unique(np.asarray(labels, dtype=object).astype(str), return_inverse=True)
    per_cluster = np.zeros((int(code.max()) + 1 if code.size else 0, 4))
    np.add.at(per_cluster, code.ravel(), sums)
    return paired_difference_estimate(
        per_cluster[:, [2, 0]],
        per_cluster[:, [3, 1]],
        items=int(shared.size),
        over=_over(clusters),
        confidence=confidence,
        excluded=excluded,
    )


def swap_rank_agreement(
    passed_original: ArrayLike,
    n_original: ArrayLike,
    passed_swapped: ArrayLike,
    n_swapped: ArrayLike,
    clusters: ArrayLike | None = None,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> Estimate:
    """Kendall's tau-b between the models' ranking without and with the swap.

    Arrays are ``[scenario, model]``: passes and conversations of each model on each scenario
    run in both arms. Each model's rate is its passes over its conversations (summed over
    scenarios) in each arm; tau-b (ties corrected, as ``scipy.stats.kendalltau``) compares the
    two lists of rates. 1: the same order; 0: unrelated; -1: reversed.

    The interval is a cluster bootstrap over scenarios (``clusters``: one base-scenario label
    per scenario row), drawing the same scenarios for every model and both arms, so it
    measures how far the ranking's agreement depends on which scenarios were sampled. With few
    models tau takes few values and its interval is coarse; undefined (insufficient) with
    fewer than two models or when one arm ties every model.
    """
    arrays = [np.asarray(a, dtype=np.float64) for a in (passed_original, n_original)]
    arrays += [np.asarray(a, dtype=np.float64) for a in (passed_swapped, n_swapped)]
    shape = arrays[0].shape
    if len(shape) != 2 or any(a.shape != shape for a in arrays):
        raise ValueError("passes and counts must be [scenario, model] arrays of one shape")
    k = shape[1]

    def tau(s: NDArray[np.float64]) -> NDArray[np.float64]:
        s = s.reshape(-1, 4, k)
        with np.errstate(all="ignore"):
            return kendall_tau_b_rows(s[:, 0] / s[:, 1], s[:, 2] / s[:, 3])

    figure = sums_estimate(
        np.stack(arrays, axis=1).reshape(shape[0], 4 * k),
        tau,
        clusters=clusters,
        over=_over(clusters),
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
    )
    return _rank_bounded(figure, k, "kendall", confidence)


def _rank_bounded(figure: Estimate, items: int, kind: str, confidence: float) -> Estimate:
    """The bootstrap figure of a rank correlation over ``items`` ranked items, hulled with the
    score interval of its concordance share (:func:`.bounds.rank_correlation_bounds`)."""
    if figure.value is None:
        return figure
    bootstrap = (
        (figure.low, figure.high) if figure.low is not None and figure.high is not None else None
    )
    low, high = rank_correlation_bounds(
        figure.value, items, kind=kind, bootstrap=bootstrap, confidence=confidence
    )
    return replace(figure, low=low, high=high, method=f"{RANK_HULL} ({figure.method})")


def verdict_flip_share(
    original: ArrayLike,
    swapped: ArrayLike,
    clusters: ArrayLike | None = None,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> Estimate:
    """Share of paired verdicts that differ between the arms.

    ``original[i]`` and ``swapped[i]`` are verdicts on the same unit: the same conversation
    re-judged (a judge swap), or the same scenario x model x metric re-run (a simulator swap).
    Pairs with a missing side are excluded and counted. The interval is a cluster bootstrap
    over ``clusters`` (base scenarios; units when ``None``). Flips include the noise of
    re-judging alone: compare with the share that flips between two repetitions of the same
    judge before reading it as the swap's effect.
    """
    a = np.asarray(original)
    b = np.asarray(swapped)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("original and swapped must be 1-D and paired")
    a_f, b_f = a.astype(np.float64), b.astype(np.float64)
    both = np.isfinite(a_f) & np.isfinite(b_f)
    return proportion_estimate(
        (a_f[both] != b_f[both]).astype(float),
        None if clusters is None else np.asarray(clusters)[both],
        over=_over(clusters),
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        excluded=(Exclusion("verdict missing in one arm", int((~both).sum())),),
    )


def single_vs_majority(
    readings: ArrayLike,
    metrics: ArrayLike,
    clusters: ArrayLike | None = None,
    *,
    single: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> Estimate:
    """Spearman's rho over metrics between pass rates from one judgment and from the majority.

    ``readings[c, r]`` are repetition ``r``'s 0/1 verdicts on conversation ``c`` (an odd number
    of repetitions, typically three; ``nan`` = missing), ``metrics[c]`` its metric. Per metric,
    the pass rate from repetition ``single`` alone and from the majority of the repetitions
    (conversations without that reading, or with a tied majority, are left out of both);
    rho is the rank correlation of the two lists of rates over metrics (average ranks for
    ties, as ``scipy.stats.spearmanr``). High rho: one judgment would rank metrics as three
    do, the repetitions buy little; it says nothing about whether either is right.

    The interval is a cluster bootstrap over ``clusters`` (base scenarios, each belonging to
    one metric; conversations when ``None``); a metric none of whose clusters is drawn drops
    out of that resample's rho.
    """
    arr = _binary(readings, "readings")
    if arr.ndim != 2 or not 0 <= single < arr.shape[1]:
        raise ValueError("readings must be conversations x repetitions, single one of them")
    metric_labels, metric = np.unique(np.asarray(metrics), return_inverse=True)
    metric = metric.ravel()
    if metric.size != arr.shape[0]:
        raise ValueError("metrics must have one label per conversation")
    ones = np.nansum(arr, axis=1)
    zeros = np.isfinite(arr).sum(axis=1) - ones
    keep = np.isfinite(arr[:, single]) & (ones != zeros)
    m = metric_labels.size
    rows = np.flatnonzero(keep)
    # Rows of the bootstrap: conversations, or -- far fewer, and the draws are the same --
    # the clusters' summed columns (memory O(rows x metrics)).
    unit = np.arange(rows.size) if clusters is None else np.asarray(clusters)[rows]
    labels, code = np.unique(unit, return_inverse=True)
    columns = np.zeros((labels.size, 3 * m))
    code = code.ravel()
    np.add.at(columns, (code, metric[rows]), arr[rows, single])
    np.add.at(columns, (code, m + metric[rows]), (ones > zeros)[rows].astype(float))
    np.add.at(columns, (code, 2 * m + metric[rows]), 1.0)

    def rho(s: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(all="ignore"):
            return _spearman_rows(s[:, :m] / s[:, 2 * m :], s[:, m : 2 * m] / s[:, 2 * m :])

    figure = sums_estimate(
        columns,
        rho,
        clusters=None if clusters is None else labels,
        over="base scenarios" if clusters is not None else "conversations",
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        excluded=(Exclusion("single reading missing or majority tied", int((~keep).sum())),),
    )
    bounded = _rank_bounded(figure, m, "spearman", confidence)
    return replace(_with_reflection(bounded), n=int(rows.size))


# Appended to the method of a figure whose interval is hulled with its reflection.
REFLECTED = "hulled with its reflection about the value (basic bootstrap)"


def _with_reflection(figure: Estimate) -> Estimate:
    """The interval hulled with its reflection about the value, inside [-1, 1].

    The rank correlation of sampled rates is biased below that of the rates themselves
    (each metric's rate carries its own sampling noise, which reorders metrics the two
    lists rank alike), and a percentile interval inherits that bias: in the coverage
    simulation (``tests/stats/extremes_simulation.py``) it held a true rho of 1 in 0 % of
    data sets of 20 and 64 metrics. The reflection (the basic bootstrap interval) corrects
    for a bias the resamples share; the hull keeps the percentile side, so the interval
    never loses width it had, and held the truth in every data set there.
    """
    if figure.value is None or figure.low is None or figure.high is None:
        return figure
    v = figure.value
    low = max(-1.0, min(figure.low, 2 * v - figure.high))
    high = min(1.0, max(figure.high, 2 * v - figure.low))
    return replace(figure, low=low, high=high, method=f"{figure.method}, {REFLECTED}")


def _spearman_rows(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Spearman's rho of each row pair over the columns finite in both (``nan`` when fewer
    than two, or one side is constant)."""
    present = np.isfinite(a) & np.isfinite(b)
    a = np.where(present, a, np.nan)
    b = np.where(present, b, np.nan)
    ra = _scipy_stats.rankdata(a, axis=1, nan_policy="omit")
    rb = _scipy_stats.rankdata(b, axis=1, nan_policy="omit")
    count = present.sum(axis=1)
    with np.errstate(all="ignore"):
        da = ra - np.nanmean(ra, axis=1, keepdims=True)
        db = rb - np.nanmean(rb, axis=1, keepdims=True)
        num = np.nansum(da * db, axis=1)
        den = np.sqrt(np.nansum(da * da, axis=1) * np.nansum(db * db, axis=1))
        out = num / den
    return np.where((count >= 2) & (den > 0), out, np.nan)
