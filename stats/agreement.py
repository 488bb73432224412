"""Agreement among raters: Fleiss' and Cohen's kappa, shares, the majority vote
(Krippendorff's alpha is in :mod:`.krippendorff`)."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._inputs import (
    _NUMERIC_KINDS,
    _STRING_KINDS,
    _as_labels,
    _counts_matrix,
    _factorize,
    _pair_agreement,
)

# --------------------------------------------------------------------------------------------
# Agreement among raters
# --------------------------------------------------------------------------------------------


def category_counts(
    labels: ArrayLike, categories: ArrayLike | None = None
) -> tuple[NDArray[np.int64], NDArray[Any]]:
    """Turn ``labels[item, rater]`` into ``(counts, categories)`` for the count-based functions.

    ``counts[i, k]`` is how many raters gave item ``i`` category ``categories[k]``. Missing
    labels (``nan``/``None``) are not counted. ``categories`` defaults to the sorted unique
    labels; pass it to keep unused categories as zero columns (this matters for nothing here
    but keeps tables aligned) -- every label must then be one of them.
    """
    arr = _as_labels(labels)
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError("labels must be a non-empty 2-D items x raters array")
    codes, uniques = _factorize(arr, allow_missing=True, what="labels")
    if categories is not None:
        cats = np.asarray(categories)
        if cats.ndim != 1 or cats.size == 0 or len(np.unique(cats)) != cats.size:
            raise ValueError("categories must be a non-empty 1-D sequence of distinct labels")
        order = np.argsort(cats, kind="stable")
        pos = np.searchsorted(cats, uniques, sorter=order)
        pos = np.minimum(pos, cats.size - 1)
        found = cats[order[pos]] == uniques
        if not np.all(found):
            raise ValueError(f"labels not among categories: {uniques[~found].tolist()}")
        remap = order[pos]
        codes = np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)
        uniques = cats
    n_items, n_cat = arr.shape[0], uniques.size
    valid = codes >= 0
    rows = np.broadcast_to(np.arange(n_items)[:, None], arr.shape)[valid]
    flat = np.bincount(rows * n_cat + codes[valid], minlength=n_items * n_cat)
    return flat.reshape(n_items, n_cat).astype(np.int64), uniques


def fleiss_kappa(counts: ArrayLike) -> float:
    """Fleiss' kappa for many raters on nominal categories (Fleiss 1971).

    ``counts[i, k]`` raters put item ``i`` in category ``k``; every item must have the same
    number ``n >= 2`` of raters. With ``N`` items::

        P_i  = (sum_k n_ik^2 - n) / (n (n - 1))     share of agreeing rater pairs on item i
        P    = mean_i P_i                           observed agreement
        p_k  = sum_i n_ik / (N n)                   category shares
        P_e  = sum_k p_k^2                          chance agreement
        kappa = (P - P_e) / (1 - P_e)

    Same formula as ``statsmodels.stats.inter_rater.fleiss_kappa(method="fleiss")``.
    Returns ``nan`` when only one category is ever used (``P_e = 1``: 0/0, undefined; statsmodels
    also yields ``nan``). Raises ``ValueError`` for unequal rater numbers, fewer than two raters,
    empty or invalid counts.
    """
    c = _counts_matrix(counts)
    raters = c.sum(axis=1)
    if (raters != raters[0]).any():
        raise ValueError(
            "fleiss_kappa needs the same number of raters for every item; got between "
            f"{raters.min()} and {raters.max()} (use krippendorff_alpha for missing ratings)"
        )
    n = int(raters[0])
    if n < 2:
        raise ValueError(f"agreement needs at least two raters per item; got {n}")
    return float(fleiss_from_sums(fleiss_item_sums(c).sum(axis=0)[None, :])[0])


def fleiss_item_sums(counts: NDArray[np.int64]) -> NDArray[np.float64]:
    """Per item: ``[P_i, 1, n_i1, ..., n_iK]`` -- Fleiss' kappa is a function of their sums.

    Summed over any multiset of items (all items, or a bootstrap resample of clusters of items)
    these columns give :func:`fleiss_from_sums` everything it needs, so resampled kappas cost one
    matrix product instead of one call per resample. Items must share one number of raters.
    """
    c = np.asarray(counts, dtype=np.float64)
    m = c.sum(axis=1)
    with np.errstate(all="ignore"):
        pair = (c * (c - 1)).sum(axis=1) / (m * (m - 1.0))
    return np.column_stack([pair, np.ones(len(c)), c])


def fleiss_from_sums(sums: NDArray[np.float64]) -> NDArray[np.float64]:
    """Fleiss' kappa of each row of summed :func:`fleiss_item_sums` (``(rows, 2 + K)``).

    ``P = sum P_i / N``, ``p_k = sum n_ik / sum n``, ``P_e = sum p_k^2``, ``kappa = (P - P_e) /
    (1 - P_e)``; ``nan`` where only one category occurs (``P_e = 1``, undefined).
    """
    s = np.asarray(sums, dtype=np.float64)
    totals = s[:, 2:]
    with np.errstate(all="ignore"):
        p_obs = s[:, 0] / s[:, 1]
        p_cat = totals / totals.sum(axis=1, keepdims=True)
        p_exp = (p_cat * p_cat).sum(axis=1)
        kappa = (p_obs - p_exp) / (1.0 - p_exp)
    single = (totals > 0).sum(axis=1) <= 1
    return np.where(single, np.nan, kappa)


def pair_agreement(counts: ArrayLike) -> NDArray[np.float64]:
    """Per item with at least two raters, the share of its rater pairs that agree: the
    ``P_i`` that :func:`percent_agreement` averages, in item order, items with fewer than two
    raters left out (for a bootstrap of that mean over items). Same errors as
    :func:`percent_agreement`."""
    agree, _ = _pair_agreement(_counts_matrix(counts))
    return agree


def percent_agreement(counts: ArrayLike) -> float:
    """Mean over items of the share of agreeing rater pairs (Fleiss' observed agreement P).

    ``P_i = sum_k n_ik (n_ik - 1) / (n_i (n_i - 1))`` with ``n_i`` the raters of item ``i``.
    Unlike :func:`fleiss_kappa`, items may have different numbers of raters; items with fewer
    than two raters have no pair and are left out. Raises ``ValueError`` if no item has two
    raters. All raters always in one category gives ``1.0``.
    """
    return float(pair_agreement(counts).mean())


def unanimity(counts: ArrayLike) -> float:
    """Share of items on which all raters chose the same category.

    Items with fewer than two raters are left out (a lone rating agrees with nobody); raises
    ``ValueError`` if no item has two raters.
    """
    c = _counts_matrix(counts)
    raters = c.sum(axis=1)
    pairable = raters >= 2
    if not pairable.any():
        raise ValueError("agreement needs at least two raters on at least one item")
    return float((c[pairable].max(axis=1) == raters[pairable]).mean())


def _joint_codes(a: NDArray[Any], b: NDArray[Any]) -> tuple[NDArray[np.intp], int]:
    """Encode two label arrays over their shared sorted label set (numbers never equal strings)."""
    ka, kb = a.dtype.kind, b.dtype.kind
    if ka in _NUMERIC_KINDS and kb in _NUMERIC_KINDS:
        both: NDArray[Any] = np.concatenate([a.astype(np.float64), b.astype(np.float64)])
    elif ka in _STRING_KINDS and kb in _STRING_KINDS:
        both = np.concatenate([a.astype(str), b.astype(str)])
    else:
        # Object concatenation keeps 1 and "1" distinct; mixed types then fail to sort -> error.
        both = np.concatenate([a.astype(object), b.astype(object)])
    codes, uniques = _factorize(both, allow_missing=False, what="labels")
    return codes, uniques.size


def cohen_kappa(
    a: ArrayLike, b: ArrayLike, weights: Literal["linear", "quadratic"] | None = None
) -> float:
    """Cohen's kappa for two raters, optionally weighted (Cohen 1960, 1968).

    With the ``K`` sorted unique labels of both raters, confusion matrix ``O`` (counts), chance
    matrix ``E = outer(row totals, column totals) / n`` and disagreement weights ``w_ij`` =
    ``[i != j]`` (unweighted), ``|i - j|`` (linear) or ``(i - j)^2`` (quadratic) on the label
    *positions*::

        kappa = 1 - sum(w * O) / sum(w * E)

    which matches ``sklearn.metrics.cohen_kappa_score``. Labels may be numbers or strings (not
    mixed; ``1`` and ``"1"`` are different labels). Returns ``nan`` when both raters use one and
    the same label throughout (0/0, as scikit-learn). Raises ``ValueError`` for empty or
    different-length input, missing (``nan``/``None``) or infinite labels, or unknown weights.
    """
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic'; got {weights!r}")
    arr_a, arr_b = _as_labels(a), _as_labels(b)
    if arr_a.ndim != 1 or arr_b.ndim != 1:
        raise ValueError("a and b must be 1-D label sequences")
    if arr_a.size != arr_b.size:
        raise ValueError(f"a and b must have the same length; got {arr_a.size} and {arr_b.size}")
    if arr_a.size == 0:
        raise ValueError("a and b are empty")
    codes, k = _joint_codes(arr_a, arr_b)
    if k < 2:
        return math.nan
    n = arr_a.size
    pair = codes[:n] * k + codes[n:]
    observed = np.bincount(pair, minlength=k * k).astype(np.float64)
    return float(cohen_from_confusion(observed[None, :], k, weights)[0])


def cohen_pair_codes(a: ArrayLike, b: ArrayLike) -> tuple[NDArray[np.intp], int]:
    """Per item, the cell ``code_a * K + code_b`` of the K x K confusion table, and K.

    One-hot rows of these codes summed over a resample give its confusion table, so
    :func:`cohen_from_confusion` yields resampled kappas without re-encoding labels."""
    arr_a, arr_b = _as_labels(a), _as_labels(b)
    codes, k = _joint_codes(arr_a, arr_b)
    n = arr_a.size
    return codes[:n] * k + codes[n:], k


def cohen_from_confusion(
    observed: NDArray[np.float64],
    k: int,
    weights: Literal["linear", "quadratic"] | None = None,
) -> NDArray[np.float64]:
    """Cohen's kappa of each row of flattened K x K confusion counts (``(rows, K*K)``).

    ``kappa = 1 - sum(w * O) / sum(w * E)`` with ``E = outer(row totals, column totals) / n``;
    ``nan`` where both raters used one and the same label (0/0).
    """
    # Laid out (K, K, rows), contiguous: each sum adds whole vectors of rows, where summing
    # over the two short trailing axes of (rows, K, K) runs a tiny inner loop per row (4x the
    # time for the millions of resampled tables of a release's judge-trust cells).
    o = np.ascontiguousarray(
        np.asarray(observed, dtype=np.float64).reshape(-1, k, k).transpose(1, 2, 0)
    )
    n = o.sum(axis=(0, 1))
    diff = np.subtract.outer(np.arange(k), np.arange(k))
    if weights is None:
        w = (diff != 0).astype(np.float64)
    elif weights == "linear":
        w = np.abs(diff).astype(np.float64)
    else:
        w = (diff * diff).astype(np.float64)
    w = w[:, :, None]
    with np.errstate(all="ignore"):
        expected = o.sum(axis=1)[:, None, :] * o.sum(axis=0)[None, :, :] / n
        kappa = 1.0 - (w * o).sum(axis=(0, 1)) / (w * expected).sum(axis=(0, 1))
    return np.where(np.isfinite(kappa), kappa, np.nan)


def majority_vote(
    labels: ArrayLike, tie_break: Literal["lowest", "highest"] = "lowest"
) -> NDArray[Any]:
    """Most frequent label per item of ``labels[item, rater]``, ignoring missing (nan/None).

    Ties are broken deterministically by the sorted order of labels: ``"lowest"`` (default)
    takes the smallest tied label, ``"highest"`` the largest. For pass = 1 / fail = 0 the
    default resolves a split vote as a fail, the conservative reading. Returns a 1-D array of
    the winning labels (numbers come back as float). Raises ``ValueError`` if an item has no
    label at all.
    """
    if tie_break not in ("lowest", "highest"):
        raise ValueError(f"tie_break must be 'lowest' or 'highest'; got {tie_break!r}")
    counts, categories = category_counts(labels)
    if (counts.sum(axis=1) == 0).any():
        empty = np.flatnonzero(counts.sum(axis=1) == 0)
        raise ValueError(f"items without any label: {empty[:10].tolist()}")
    if tie_break == "lowest":
        winner = counts.argmax(axis=1)  # argmax returns the first (lowest) maximum
    else:
        winner = counts.shape[1] - 1 - counts[:, ::-1].argmax(axis=1)
    return categories[winner]
