"""Reliability statistics for published results: agreement, bootstrap intervals, rank stability.

Pure NumPy/SciPy (no Django), so the functions can run in workers, notebooks and benchmarks alike.

Conventions shared by every function here:

* ``counts[i, k]`` is the number of raters who put item ``i`` in category ``k`` (the layout of
  ``statsmodels.stats.inter_rater.fleiss_kappa``); :func:`category_counts` builds it from labels.
* ``data[r, u]`` is rater ``r``'s value for unit ``u`` (the layout of Krippendorff and of the
  ``krippendorff`` package); ``np.nan`` (or ``None`` in object arrays) marks a missing value.
* Chance-corrected coefficients (Fleiss' and Cohen's kappa, Krippendorff's alpha) are ``0/0``
  when the data show no variation at all (every rating falls in one category). They return
  ``nan`` then -- "undefined", as scikit-learn and statsmodels do -- never ``1.0``: identical
  ratings say nothing about whether raters *could* discriminate, and a published table must not
  read that as perfect reliability. :func:`percent_agreement` and :func:`unanimity` still report
  the raw agreement (``1.0``) for such data.
* Input that cannot give a meaningful value raises ``ValueError`` with the reason: empty input,
  fewer than two raters, no pairable unit, mismatched lengths, non-finite numbers, negative or
  fractional counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as _scipy_stats

__all__ = [
    "bootstrap_ci",
    "bradley_terry",
    "category_counts",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha",
    "majority_vote",
    "pass_rate_ci",
    "percent_agreement",
    "rank_stability",
    "unanimity",
]

Level = Literal["nominal", "ordinal", "interval", "ratio"]
Statistic = Literal["mean", "median"] | Callable[[NDArray[np.float64]], float]

_NUMERIC_KINDS = "biuf"
_STRING_KINDS = "US"
# Upper bound on the elements of one temporary resampling matrix: ~32 MB of float64 keeps memory
# bounded while each NumPy call still amortises its overhead over millions of elements.
_CHUNK_ELEMENTS = 4_000_000


# --------------------------------------------------------------------------------------------
# Input helpers
# --------------------------------------------------------------------------------------------


def _is_missing_object(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _as_labels(values: ArrayLike) -> NDArray[Any]:
    """``np.asarray``, except that a list mixing strings with numbers or ``None``/``nan`` stays an
    object array: NumPy would silently turn ``[1, "a"]`` into ``["1", "a"]`` and ``nan`` into
    ``"nan"``, making ``1`` equal ``"1"`` and hiding missing values."""
    if isinstance(values, np.ndarray):
        return values
    arr = np.asarray(values)
    if arr.dtype.kind in _STRING_KINDS:
        objects = np.asarray(values, dtype=object)
        if not all(isinstance(v, str) for v in objects.flat):
            return objects
    return arr


def _factorize(
    values: ArrayLike, *, allow_missing: bool, what: str
) -> tuple[NDArray[np.intp], NDArray[Any]]:
    """Encode labels as integer codes into their sorted unique values; missing values get -1.

    Numbers: ``nan`` is missing, infinities are rejected. Strings: ``"nan"`` is missing, because
    NumPy turns ``np.nan`` into that string when it is mixed with strings (the ``krippendorff``
    package reads it the same way). Object arrays: ``None`` and float ``nan`` are missing.
    """
    arr = _as_labels(values)
    kind = arr.dtype.kind
    if kind in _NUMERIC_KINDS:
        arr = arr.astype(np.float64)
        missing = np.isnan(arr)
        if np.isinf(arr).any():
            raise ValueError(f"{what} must be finite; got an infinite value")
    elif kind in _STRING_KINDS:
        missing = arr == arr.dtype.type("nan")
    elif kind == "O":
        missing = np.frompyfunc(_is_missing_object, 1, 1)(arr).astype(bool)
        present = arr[~missing]
        if any(isinstance(v, float | np.floating) and math.isinf(v) for v in present):
            raise ValueError(f"{what} must be finite; got an infinite value")
    else:
        raise ValueError(f"{what} must be numbers or strings; got dtype {arr.dtype}")
    if missing.any() and not allow_missing:
        raise ValueError(f"{what} contain missing values (nan/None); drop those items first")
    present = arr[~missing]
    try:
        uniques = np.unique(present)
    except TypeError as exc:  # e.g. ints mixed with strings in an object array
        raise ValueError(
            f"{what} must be mutually comparable (all numbers or all strings)"
        ) from exc
    codes = np.full(arr.shape, -1, dtype=np.intp)
    codes[~missing] = np.searchsorted(uniques, present)
    return codes, uniques


def _counts_matrix(counts: ArrayLike) -> NDArray[np.int64]:
    """Validate an items x categories count table and return it as int64."""
    arr = np.asarray(counts)
    if arr.ndim != 2:
        raise ValueError(f"counts must be a 2-D items x categories array; got {arr.ndim}-D")
    if arr.size == 0:
        raise ValueError("counts is empty: at least one item and one category are needed")
    if arr.dtype.kind not in _NUMERIC_KINDS:
        raise ValueError(f"counts must be numeric; got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ValueError("counts must be finite")
    if (arr < 0).any():
        raise ValueError("counts must be non-negative")
    if (arr != np.round(arr)).any():
        raise ValueError("counts must be whole numbers of raters")
    return arr.astype(np.int64)


def _pair_agreement(counts: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Per-item share of agreeing rater pairs, and which items have >= 2 raters."""
    raters = counts.sum(axis=1)
    pairable = raters >= 2
    if not pairable.any():
        raise ValueError("agreement needs at least two raters on at least one item")
    c = counts[pairable]
    m = raters[pairable]
    # sum_k n_ik (n_ik - 1) agreeing ordered pairs out of m (m - 1).
    agree = ((c * (c - 1)).sum(axis=1)) / (m * (m - 1.0))
    return agree, pairable


def _finite_1d(values: ArrayLike, what: str) -> NDArray[np.float64]:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be 1-D; got {arr.ndim}-D")
    if arr.dtype.kind not in _NUMERIC_KINDS:
        raise ValueError(f"{what} must be numeric; got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(f"{what} must be finite (no nan or inf)")
    return arr


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
    totals = c.sum(axis=0)
    if np.count_nonzero(totals) <= 1:
        return math.nan
    p_obs = float(((c * (c - 1)).sum(axis=1) / (n * (n - 1.0))).mean())
    p_cat = totals / float(totals.sum())
    p_exp = float((p_cat * p_cat).sum())
    return (p_obs - p_exp) / (1.0 - p_exp)


def percent_agreement(counts: ArrayLike) -> float:
    """Mean over items of the share of agreeing rater pairs (Fleiss' observed agreement P).

    ``P_i = sum_k n_ik (n_ik - 1) / (n_i (n_i - 1))`` with ``n_i`` the raters of item ``i``.
    Unlike :func:`fleiss_kappa`, items may have different numbers of raters; items with fewer
    than two raters have no pair and are left out. Raises ``ValueError`` if no item has two
    raters. All raters always in one category gives ``1.0``.
    """
    agree, _ = _pair_agreement(_counts_matrix(counts))
    return float(agree.mean())


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
    ca, cb = codes[:n], codes[n:]
    observed = np.bincount(ca * k + cb, minlength=k * k).reshape(k, k).astype(np.float64)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / n
    diff = np.subtract.outer(np.arange(k), np.arange(k))
    if weights is None:
        w = (diff != 0).astype(np.float64)
    elif weights == "linear":
        w = np.abs(diff).astype(np.float64)
    else:
        w = (diff * diff).astype(np.float64)
    return float(1.0 - (w * observed).sum() / (w * expected).sum())


def krippendorff_alpha(data: ArrayLike, level: Level = "nominal") -> float:
    """Krippendorff's alpha for any number of raters, missing values and four metrics.

    ``data[r, u]`` is rater ``r``'s value for unit ``u``; ``np.nan`` (or ``None``) where missing.
    Following Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability": units with fewer
    than two values are not pairable and drop out. For each pairable unit with ``m_u`` values and
    value counts ``n_uc``, the coincidence matrix is ``o_ck = sum_u (n_uc n_uk - [c=k] n_uc) /
    (m_u - 1)``, with marginals ``n_c`` and total ``n``. Then::

        alpha = 1 - (n - 1) * sum_ck o_ck d_ck / sum_ck n_c n_k d_ck

    with squared distances ``d_ck``: nominal ``[c != k]``; ordinal ``(sum_{g=c..k} n_g - (n_c +
    n_k) / 2)^2``; interval ``(c - k)^2``; ratio ``((c - k) / (c + k))^2``. This matches
    ``krippendorff.alpha(reliability_data=data, level_of_measurement=level)``.

    Nominal data may be strings; the other levels need numbers (ratio: non-negative). Returns
    ``nan`` when all pairable values are equal (no variation, 0/0 -- the ``krippendorff`` package
    raises or returns ``nan`` there; ``nan`` keeps this consistent with the kappas). Raises
    ``ValueError`` for fewer than two raters, no pairable unit, empty data, infinite values or an
    unknown level. Memory is O(units x distinct values + distinct values^2).
    """
    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise ValueError(
            f"level must be 'nominal', 'ordinal', 'interval' or 'ratio'; got {level!r}"
        )
    arr = _as_labels(data)
    if arr.ndim != 2:
        raise ValueError(f"data must be a 2-D raters x units array; got {arr.ndim}-D")
    if arr.size == 0:
        raise ValueError("data is empty")
    if arr.shape[0] < 2:
        raise ValueError(f"agreement needs at least two raters; got {arr.shape[0]}")
    codes, uniques = _factorize(arr, allow_missing=True, what="data")
    if level != "nominal":
        if uniques.dtype.kind not in _NUMERIC_KINDS:
            raise ValueError(f"level {level!r} needs numeric values; encode ordered labels first")
        uniques = uniques.astype(np.float64)
        if level == "ratio" and uniques.size and uniques[0] < 0:
            raise ValueError("level 'ratio' needs non-negative values")

    n_units, n_values = arr.shape[1], uniques.size
    valid = codes >= 0
    unit = np.broadcast_to(np.arange(n_units), arr.shape)[valid]
    per_unit = np.bincount(unit * n_values + codes[valid], minlength=n_units * n_values)
    per_unit = per_unit.reshape(n_units, n_values).astype(np.float64)
    m = per_unit.sum(axis=1)
    pairable = m >= 2
    if not pairable.any():
        raise ValueError("no pairable units: no unit has values from at least two raters")
    nu = per_unit[pairable]
    weighted = nu / (m[pairable] - 1.0)[:, None]
    coincidence = nu.T @ weighted
    coincidence[np.diag_indices(n_values)] -= weighted.sum(axis=0)
    n_c = coincidence.sum(axis=0)
    if np.count_nonzero(n_c > 0) <= 1:
        return math.nan
    n = n_c.sum()

    if level == "nominal":
        # Closed forms of the nominal sums avoid a V x V distance matrix.
        observed = n - np.trace(coincidence)
        expected = n * n - (n_c * n_c).sum()
    else:
        if level == "ordinal":
            # sum_{g=c..k} n_g - (n_c + n_k)/2 = mid_k - mid_c with mid = cumsum(n) - n/2.
            mid = np.cumsum(n_c) - n_c / 2.0
            d = np.subtract.outer(mid, mid) ** 2
        elif level == "interval":
            d = np.subtract.outer(uniques, uniques) ** 2
        else:
            total = np.add.outer(uniques, uniques)
            diff = np.subtract.outer(uniques, uniques)
            # c + k = 0 only for c = k = 0, whose distance is 0.
            d = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0) ** 2
        observed = (coincidence * d).sum()
        expected = (np.outer(n_c, n_c) * d).sum()
    return float(1.0 - (n - 1.0) * observed / expected)


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


# --------------------------------------------------------------------------------------------
# Bootstrap intervals
# --------------------------------------------------------------------------------------------


def _rows_per_chunk(width: int) -> int:
    return max(1, _CHUNK_ELEMENTS // max(width, 1))


def _median_from_histogram(
    hist: NDArray[np.float64], support: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Median of each row's multiset, given counts ``hist[r, j]`` of sorted ``support[j]``."""
    cum = np.cumsum(hist, axis=1)
    total = cum[:, -1]
    lo_rank = np.floor((total - 1) / 2)[:, None]  # 0-based ranks of the middle element(s)
    hi_rank = np.floor(total / 2)[:, None]
    lo = (cum <= lo_rank).sum(axis=1)
    hi = (cum <= hi_rank).sum(axis=1)
    return (support[lo] + support[hi]) / 2.0


def _resample_counts(
    rng: np.random.Generator, n_draws: int, weights: NDArray[np.int64], rows: int
) -> NDArray[np.float64]:
    """How often each of ``len(weights)`` groups is hit by ``n_draws`` uniform draws from the
    ``weights.sum()`` underlying units, for ``rows`` resamples: multinomial counts. Equivalent in
    distribution to drawing unit indices with replacement, at O(groups) instead of O(units)."""
    return rng.multinomial(n_draws, weights / weights.sum(), size=rows).astype(np.float64)


def _order_statistics(
    rng: np.random.Generator,
    n_draws: int,
    freq: NDArray[np.int64],
    ranks: tuple[int, int],
    rows: int,
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Support positions of the ``ranks`` (0-based) smallest of ``n_draws`` draws, per resample.

    Draws pick support point ``j`` with probability ``freq[j] / freq.sum()``. Rather than drawing
    them, descend a binary tree over the sorted support: the number of draws in the left half of
    a node holding ``c`` draws is ``Binomial(c, w_left / w_node)`` (the multinomial split), and
    only the half containing the wanted rank is followed. This samples the order statistic
    exactly, in O(rows log J) instead of O(rows n). Two ranks (the middle pair of an even
    sample) share the draws while they are in the same node; once apart, their subtrees are
    conditionally independent, so separate draws are exact too.
    """
    cum_w = np.concatenate([[0.0], np.cumsum(freq, dtype=np.float64)])
    paths = []
    for rank in ranks:
        paths.append(
            {
                "lo": np.zeros(rows, dtype=np.intp),
                "hi": np.full(rows, freq.size, dtype=np.intp),
                "count": np.full(rows, n_draws, dtype=np.int64),
                "rank": np.full(rows, rank, dtype=np.int64),
            }
        )
    while any((p["hi"] - p["lo"] > 1).any() for p in paths):
        lefts = []
        for p in paths:
            # Settled rows (one support point left) get mid = lo and p_left = 0: a no-op step.
            mid = (p["lo"] + p["hi"]) // 2
            p_left = (cum_w[mid] - cum_w[p["lo"]]) / (cum_w[p["hi"]] - cum_w[p["lo"]])
            lefts.append((mid, rng.binomial(p["count"], p_left)))
        a, b = paths
        same_node = (a["lo"] == b["lo"]) & (a["hi"] == b["hi"])
        lefts[1][1][same_node] = lefts[0][1][same_node]
        for p, (mid, left) in zip(paths, lefts, strict=True):
            go_left = p["rank"] < left
            p["hi"] = np.where(go_left, mid, p["hi"])
            p["lo"] = np.where(go_left, p["lo"], mid)
            p["rank"] = np.where(go_left, p["rank"], p["rank"] - left)
            p["count"] = np.where(go_left, left, p["count"] - left)
    return paths[0]["lo"], paths[1]["lo"]


def _bootstrap_unclustered(
    x: NDArray[np.float64], n_resamples: int, statistic: str, rng: np.random.Generator
) -> NDArray[np.float64]:
    n = x.size
    support, freq = np.unique(x, return_counts=True)
    if statistic == "median":
        lo, hi = _order_statistics(rng, n, freq, ((n - 1) // 2, n // 2), n_resamples)
        return (support[lo] + support[hi]) / 2.0
    out = np.empty(n_resamples)
    # Few distinct values (binary outcomes, Likert scores): a resample is fully described by how
    # often each distinct value was drawn, so draw those counts instead of n indices.
    by_counts = support.size * 4 <= n
    step = _rows_per_chunk(support.size if by_counts else n)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        if by_counts:
            out[start : start + rows] = _resample_counts(rng, n, freq, rows) @ support / n
        else:
            idx = rng.integers(0, n, size=(rows, n))
            out[start : start + rows] = x[idx].sum(axis=1) / n
    return out


def _bootstrap_clustered(
    x: NDArray[np.float64],
    cluster: NDArray[np.intp],
    n_clusters: int,
    n_resamples: int,
    statistic: str,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    g = n_clusters
    out = np.empty(n_resamples)
    if statistic == "mean":
        # The resampled mean depends on the drawn clusters only through their (sum, size), so
        # clusters sharing both are interchangeable: 8,090 clusters of six binary outcomes
        # collapse to 7 kinds and each resample is one 7-category multinomial draw.
        sizes = np.bincount(cluster, minlength=g).astype(np.float64)
        sums = np.bincount(cluster, weights=x, minlength=g)
        kinds, kind_of, freq = np.unique(
            np.column_stack([sums, sizes]), axis=0, return_inverse=True, return_counts=True
        )
        by_counts = kinds.shape[0] * 4 <= g
        if by_counts:
            sums, sizes = kinds[:, 0], kinds[:, 1]
        width = kinds.shape[0] if by_counts else g
        step = _rows_per_chunk(width)
        for start in range(0, n_resamples, step):
            rows = min(step, n_resamples - start)
            if by_counts:
                hits = _resample_counts(rng, g, freq, rows)
                out[start : start + rows] = (hits @ sums) / (hits @ sizes)
            else:
                idx = rng.integers(0, g, size=(rows, g))
                out[start : start + rows] = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
        return out

    # Median: the resample is the multiset union of the drawn clusters. Describe every cluster
    # by its histogram over the distinct values; the resample's histogram is then
    # (draws per cluster) @ (cluster histograms). Too many distinct values for a dense
    # histogram -> use each observation as its own support point, weighted by its cluster's draws.
    support, value_code = np.unique(x, return_inverse=True)
    if g * support.size <= _CHUNK_ELEMENTS:
        hist = np.bincount(cluster * support.size + value_code, minlength=g * support.size).reshape(
            g, support.size
        )
        kinds, freq = np.unique(hist, axis=0, return_counts=True)
        by_counts = kinds.shape[0] * 4 <= g
        profile = (kinds if by_counts else hist).astype(np.float64)
        step = _rows_per_chunk(max(profile.shape[0], support.size))
        for start in range(0, n_resamples, step):
            rows = min(step, n_resamples - start)
            if by_counts:
                hits = _resample_counts(rng, g, freq, rows)
            else:
                hits = _draw_cluster_hits(rng, g, rows)
            out[start : start + rows] = _median_from_histogram(hits @ profile, support)
        return out

    order = np.argsort(x, kind="stable")
    sorted_x, sorted_cluster = x[order], cluster[order]
    step = _rows_per_chunk(max(x.size, g))
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        hits = _draw_cluster_hits(rng, g, rows)
        out[start : start + rows] = _median_from_histogram(hits[:, sorted_cluster], sorted_x)
    return out


def _draw_cluster_hits(rng: np.random.Generator, g: int, rows: int) -> NDArray[np.float64]:
    """(rows, g) matrix: how often each of g clusters is drawn in g draws with replacement."""
    idx = rng.integers(0, g, size=(rows, g)) + (np.arange(rows) * g)[:, None]
    return np.bincount(idx.ravel(), minlength=rows * g).reshape(rows, g).astype(np.float64)


def _bootstrap_callable(
    x: NDArray[np.float64],
    cluster: NDArray[np.intp] | None,
    n_clusters: int,
    n_resamples: int,
    func: Callable[[NDArray[np.float64]], float],
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    out = np.empty(n_resamples)
    for r in range(n_resamples):
        if cluster is None:
            sample = x[rng.integers(0, x.size, size=x.size)]
        else:
            hits = np.bincount(rng.integers(0, n_clusters, size=n_clusters), minlength=n_clusters)
            sample = np.repeat(x, hits[cluster])  # every value once per draw of its cluster
        out[r] = float(func(sample))
    return out


def _cluster_codes(clusters: ArrayLike, n: int) -> tuple[NDArray[np.intp], int]:
    arr = np.asarray(clusters)
    if arr.ndim != 1 or arr.size != n:
        raise ValueError(f"clusters must be 1-D with one label per value ({n}); got {arr.shape}")
    try:
        _, codes = np.unique(arr, return_inverse=True)
    except TypeError:
        # Unorderable labels (e.g. ints and strings mixed): number them by first appearance.
        index: dict[Hashable, int] = {}
        codes = np.array([index.setdefault(label, len(index)) for label in arr.tolist()])
    codes = codes.astype(np.intp).ravel()
    return codes, int(codes.max()) + 1


def bootstrap_ci(
    values: ArrayLike,
    clusters: ArrayLike | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | None = 0,
    statistic: Statistic = "mean",
) -> tuple[float, float]:
    """Percentile bootstrap interval (Efron & Tibshirani 1993), optionally by cluster.

    Without ``clusters`` the ``n`` values are resampled with replacement ``n_resamples`` times.
    With ``clusters`` (one label per value) whole clusters are resampled with replacement -- the
    cluster bootstrap (Davison & Hinkley 1997, sec. 3.8), needed when values within a cluster
    (e.g. the variants of one base scenario) are not independent -- and the statistic is taken
    over all values of the drawn clusters: for the mean, ``sum of drawn cluster sums / sum of
    drawn cluster sizes``. The interval is the ``(1 - confidence) / 2`` and ``(1 + confidence) /
    2`` quantiles (linear interpolation) of the resampled statistics.

    ``statistic`` is ``"mean"``, ``"median"`` (both vectorized: resamples are drawn as counts
    per distinct value or per kind of cluster when that is cheaper, else as index matrices in
    memory-bounded chunks) or a callable on a 1-D array (one call per resample; slower).
    Deterministic for a given ``seed`` (``numpy.random.default_rng``). Constant values give
    ``(c, c)``. Raises ``ValueError`` for fewer than two values or clusters, non-finite values,
    mismatched ``clusters``, ``n_resamples < 1`` or ``confidence`` outside (0, 1).
    """
    x = _finite_1d(values, "values")
    if x.size < 2:
        raise ValueError(f"bootstrap needs at least two values; got {x.size}")
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer; got {n_resamples!r}")
    n_resamples = int(n_resamples)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1; got {confidence!r}")
    if not callable(statistic) and statistic not in ("mean", "median"):
        raise ValueError(f"statistic must be 'mean', 'median' or a callable; got {statistic!r}")
    rng = np.random.default_rng(seed)

    cluster: NDArray[np.intp] | None = None
    n_clusters = 0
    if clusters is not None:
        cluster, n_clusters = _cluster_codes(clusters, x.size)
        if n_clusters < 2:
            raise ValueError(f"cluster bootstrap needs at least two clusters; got {n_clusters}")

    if callable(statistic):
        dist = _bootstrap_callable(x, cluster, n_clusters, n_resamples, statistic, rng)
    elif cluster is None:
        dist = _bootstrap_unclustered(x, n_resamples, statistic, rng)
    else:
        dist = _bootstrap_clustered(x, cluster, n_clusters, n_resamples, statistic, rng)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(dist, [tail, 1.0 - tail])
    return float(low), float(high)


def pass_rate_ci(
    passed: ArrayLike,
    clusters: ArrayLike | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> dict[str, float | int]:
    """Pass rate of binary outcomes with its (cluster) bootstrap percentile interval.

    ``passed`` holds booleans or 0/1. Returns ``{"pass_rate", "ci_low", "ci_high", "n",
    "n_clusters", "confidence"}`` (``n_clusters`` = ``n`` without clusters). Errors as in
    :func:`bootstrap_ci`, plus ``ValueError`` for values other than 0/1.
    """
    x = _finite_1d(passed, "passed")
    if not np.isin(x, (0.0, 1.0)).all():
        raise ValueError("passed must hold only booleans or 0/1")
    low, high = bootstrap_ci(x, clusters, n_resamples, confidence, seed, "mean")
    n_clusters = x.size if clusters is None else _cluster_codes(clusters, x.size)[1]
    return {
        "pass_rate": float(x.mean()),
        "ci_low": low,
        "ci_high": high,
        "n": int(x.size),
        "n_clusters": int(n_clusters),
        "confidence": float(confidence),
    }


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
    from scipy.sparse.csgraph import connected_components

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
