"""Ranking robustness and paired comparisons."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as _scipy_stats
from scipy.sparse.csgraph import connected_components

from .bootstrap import cluster_sum_distribution
from .estimates import Estimate
from .percentiles import percentile_interval

# --------------------------------------------------------------------------------------------
# Ranking robustness
# --------------------------------------------------------------------------------------------


def _competition_ranks(scores: NDArray[np.float64]) -> NDArray[np.int64]:
    """1 + number of strictly better scores ("1224" ranking); scores already oriented."""
    sorted_desc = np.sort(scores)[::-1]
    return np.searchsorted(-sorted_desc, -scores, side="left").astype(np.int64) + 1


def rank_stability(
    scores_by_model_a: Mapping[Hashable, float],
    scores_by_model_b: Mapping[Hashable, float],
    higher_is_better: bool = True,
) -> dict[str, Any]:
    """How much a model ranking changes between two analyses (e.g. two weightings).

    Only models scored in both mappings are compared. Returns:

    * ``kendall_tau``: Kendall's tau-b between the two score lists (as ``scipy.stats.kendalltau``);
      ``nan`` with fewer than two models or when one analysis gives all models the same score.
    * ``n_models``; ``rank_a``/``rank_b``: model -> rank, 1 = best, ties share the best rank
      ("1224" competition ranking).
    * ``swaps``: pairs ``(x, y)`` adjacent in ranking a (x just above y, strictly better score in
      a) whose order is strictly reversed in b; ``swapped_adjacent_pairs`` = their number.
      Models tied in a are ordered by their order in ``scores_by_model_a`` but never count.
    * ``discordant_pairs``: all pairs ordered strictly oppositely; ``max_rank_change``: largest
      ``|rank_a - rank_b|``; ``only_in_a``/``only_in_b``: models left out.

    Raises ``ValueError`` for non-finite scores of compared models.
    """
    models = [m for m in scores_by_model_a if m in scores_by_model_b]
    only_a = [m for m in scores_by_model_a if m not in scores_by_model_b]
    only_b = [m for m in scores_by_model_b if m not in scores_by_model_a]
    raw_a = np.array([float(scores_by_model_a[m]) for m in models], dtype=np.float64)
    raw_b = np.array([float(scores_by_model_b[m]) for m in models], dtype=np.float64)
    if not (np.isfinite(raw_a).all() and np.isfinite(raw_b).all()):
        raise ValueError("scores must be finite")
    sign = 1.0 if higher_is_better else -1.0
    a, b = sign * raw_a, sign * raw_b  # oriented: larger = better
    n = len(models)

    if n >= 2 and np.ptp(a) > 0 and np.ptp(b) > 0:
        tau = float(_scipy_stats.kendalltau(a, b).statistic)
    else:
        tau = math.nan  # scipy also gives nan here, with a warning

    order = np.argsort(-a, kind="stable")
    first, second = order[:-1], order[1:]
    swapped = (a[first] > a[second]) & (b[first] < b[second])
    swaps = [(models[i], models[j]) for i, j in zip(first[swapped], second[swapped], strict=True)]

    rank_a, rank_b = _competition_ranks(a), _competition_ranks(b)
    discordant = 0
    if n >= 2:
        da = np.sign(np.subtract.outer(a, a))
        db = np.sign(np.subtract.outer(b, b))
        discordant = int(np.triu(da * db < 0, k=1).sum())
    return {
        "kendall_tau": tau,
        "n_models": n,
        "swapped_adjacent_pairs": len(swaps),
        "swaps": swaps,
        "rank_a": dict(zip(models, rank_a.tolist(), strict=True)),
        "rank_b": dict(zip(models, rank_b.tolist(), strict=True)),
        "discordant_pairs": discordant,
        "max_rank_change": int(np.abs(rank_a - rank_b).max()) if n else 0,
        "only_in_a": only_a,
        "only_in_b": only_b,
    }


def kendall_tau_b_rows(a_rows: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """Kendall's tau-b of each row of ``a_rows`` (rows, k) against ``b``: one ordering (k,)
    shared by every row, or one per row (rows, k) -- two rankings resampled together.

    The same coefficient as ``scipy.stats.kendalltau`` (tau-b, ties corrected), vectorised over
    bootstrap resamples: ``(concordant - discordant) / sqrt((n0 - ties_a) (n0 - ties_b))`` over
    the ``n0 = k (k - 1) / 2`` pairs. ``nan`` where a row (or ``b``) has no untied pair or
    holds a non-finite value.
    """
    a = np.atleast_2d(np.asarray(a_rows, dtype=np.float64))
    b = np.asarray(b, dtype=np.float64)
    if b.ndim not in (1, 2) or b.shape[-1] != a.shape[1] or (b.ndim == 2 and b.shape != a.shape):
        raise ValueError("a_rows must be (rows, k) and b (k,) or (rows, k)")
    k = a.shape[1]
    i, j = np.triu_indices(k, k=1)
    sa = np.sign(a[:, i] - a[:, j])
    sb = np.sign(b[..., i] - b[..., j])
    n0 = float(i.size)
    untied_a = np.count_nonzero(sa, axis=1).astype(np.float64)
    untied_b = np.count_nonzero(sb, axis=-1).astype(np.float64)
    with np.errstate(all="ignore"):
        tau = (sa * sb).sum(axis=1) / np.sqrt(untied_a * untied_b)
    finite_b = np.isfinite(b).all(axis=-1)
    bad = (untied_a == 0) | (untied_b == 0) | ~np.isfinite(a).all(axis=1) | ~finite_b | (n0 == 0)
    return np.where(bad, np.nan, tau)


# --------------------------------------------------------------------------------------------
# Paired comparisons
# --------------------------------------------------------------------------------------------


def bradley_terry(
    wins: ArrayLike, max_iter: int = 10_000, tol: float = 1e-10
) -> NDArray[np.float64]:
    """Bradley-Terry log-strengths from a paired-comparison table (Bradley & Terry 1952).

    ``wins[i, j]`` is how often candidate ``i`` was preferred over ``j``. The model says ``i``
    beats ``j`` with probability ``p_i / (p_i + p_j)``; the maximum-likelihood strengths are
    found with Hunter's (2004) MM iteration ``p_i <- W_i / sum_j n_ij / (p_i + p_j)`` and
    returned as ``log p`` centred on mean 0 (only differences are identified). This equals a
    logistic regression without intercept on +1/-1 indicators of the two candidates, e.g.
    ``statsmodels`` ``Logit``. The MLE exists only when every candidate can be reached from
    every other by a chain of wins (strongly connected comparison graph); otherwise -- someone
    never lost or never won -- raises ``ValueError``, as do non-square, negative or
    non-finite tables and fewer than two candidates.
    """
    w = np.asarray(wins, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError("wins must be a square candidates x candidates table")
    k = w.shape[0]
    if k < 2:
        raise ValueError("ranking needs at least two candidates")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("wins must be finite and non-negative")
    w = w.copy()
    np.fill_diagonal(w, 0.0)
    n_components, _ = connected_components(w > 0, directed=True, connection="strong")
    if n_components != 1:
        raise ValueError(
            "strengths are not identified: some candidate never won or never lost against the "
            "others (the comparison graph is not strongly connected)"
        )
    games = w + w.T
    won = w.sum(axis=1)
    p = np.ones(k)
    for _ in range(max_iter):
        denominator = (games / (p[:, None] + p[None, :])).sum(axis=1)
        updated = won / denominator
        updated /= np.exp(np.log(updated).mean())
        if np.max(np.abs(np.log(updated) - np.log(p))) < tol:
            p = updated
            break
        p = updated
    log_p = np.log(p)
    return log_p - log_p.mean()


BRADLEY_TERRY_BOOTSTRAP = "cluster bootstrap over rated items (percentile)"


def bradley_terry_estimates(
    items: ArrayLike,
    winner: ArrayLike,
    loser: ArrayLike,
    k: int,
    *,
    n_resamples: int = 2_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[Estimate]:
    """Each candidate's Bradley-Terry log-strength with a percentile interval from a bootstrap
    over rated items (the comparisons of one item are not independent).

    ``winner[c]`` beat ``loser[c]`` (indices 0..k-1) in comparison ``c`` of item ``items[c]``.
    A resample in which the strengths are not identified (someone never won or never lost)
    has no value; when more than 5 % of them are so, the interval is not drawn (the strengths
    rest on too few comparisons). Raises ``ValueError`` when the full table's strengths are not
    identified (as :func:`bradley_terry`).
    """
    w, lo = np.asarray(winner, dtype=np.intp), np.asarray(loser, dtype=np.intp)
    onehot = np.zeros((w.size, k * k))
    onehot[np.arange(w.size), w * k + lo] = 1.0
    codes = np.unique(np.asarray(items), return_inverse=True)[1].ravel()
    per_item = np.zeros((int(codes.max()) + 1, k * k))
    np.add.at(per_item, codes, onehot)
    point = bradley_terry(per_item.sum(axis=0).reshape(k, k))

    def strengths(sums: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.full((sums.shape[0], k), np.nan)
        for r, table in enumerate(sums.reshape(-1, k, k)):
            try:
                out[r] = bradley_terry(table, max_iter=2_000, tol=1e-8)
            except ValueError:
                continue
        return out

    low = high = np.full(k, np.nan)
    if per_item.shape[0] >= 2:
        dist = cluster_sum_distribution(per_item, strengths, n_resamples=n_resamples, seed=seed)
        if np.isfinite(dist).all(axis=1).mean() >= 0.95:
            low, high = percentile_interval(dist[np.isfinite(dist).all(axis=1)], confidence)
    n = np.bincount(np.concatenate([w, lo]), minlength=k)
    return [
        Estimate(
            value=float(point[i]),
            low=float(low[i]),
            high=float(high[i]),
            method=BRADLEY_TERRY_BOOTSTRAP,
            confidence=confidence,
            n=int(n[i]),
            n_clusters=int(per_item.shape[0]),
            unit="coefficient",
        )
        for i in range(k)
    ]
