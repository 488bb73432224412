"""Krippendorff's alpha for any number of raters, missing values and four levels of
measurement, and the parts (unit counts, coincidences, distances) its bootstraps reuse."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._inputs import _NUMERIC_KINDS, _as_labels, _factorize

Level = Literal["nominal", "ordinal", "interval", "ratio"]


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
    per_unit, uniques = krippendorff_unit_counts(data, level)
    m = per_unit.sum(axis=1)
    pairable = m >= 2
    if not pairable.any():
        raise ValueError("no pairable units: no unit has values from at least two raters")
    nu = per_unit[pairable]
    weighted = nu / (m[pairable] - 1.0)[:, None]
    coincidence = nu.T @ weighted
    coincidence[np.diag_indices(uniques.size)] -= weighted.sum(axis=0)
    return float(krippendorff_from_coincidence(coincidence[None], uniques, level)[0])


def krippendorff_unit_counts(
    data: ArrayLike, level: Level = "nominal"
) -> tuple[NDArray[np.float64], NDArray[Any]]:
    """``data[r, u]`` validated as :func:`krippendorff_alpha` does, as ``(counts, values)``:
    ``counts[u, v]`` raters gave unit ``u`` the value ``values[v]`` (sorted; numbers as float
    unless the level is nominal). Same errors as :func:`krippendorff_alpha`."""
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
    return per_unit.reshape(n_units, n_values).astype(np.float64), uniques


def krippendorff_unit_coincidences(counts: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each unit's share of the coincidence matrix, flattened: ``(units, V * V)``.

    For unit ``u`` with ``m_u`` values and value counts ``n_uc``: ``(n_uc n_uk - [c = k] n_uc)
    / (m_u - 1)``, zero for units with fewer than two values (not pairable). Summed over any
    multiset of units (a cluster bootstrap's resample) they give the coincidence matrix that
    :func:`krippendorff_from_coincidence` turns into alpha. Memory O(units x V^2): for
    verdicts on a short scale."""
    c = np.asarray(counts, dtype=np.float64)
    m = c.sum(axis=1)
    with np.errstate(all="ignore"):
        scale = np.where(m >= 2, 1.0 / (m - 1.0), 0.0)
    outer = c[:, :, None] * c[:, None, :]
    outer[:, np.arange(c.shape[1]), np.arange(c.shape[1])] -= c
    return (outer * scale[:, None, None]).reshape(c.shape[0], -1)


def krippendorff_from_coincidence(
    coincidence: NDArray[np.float64], values: NDArray[Any], level: Level = "nominal"
) -> NDArray[np.float64]:
    """Krippendorff's alpha of each coincidence matrix ``(rows, V, V)`` (or ``(rows, V * V)``)
    over the sorted ``values``: ``1 - (n - 1) sum o d / sum n_c n_k d`` with the level's squared
    distances (see :func:`krippendorff_alpha`); ``nan`` where at most one value occurs."""
    observed, expected, n, n_c = krippendorff_parts(coincidence, values, level)
    with np.errstate(all="ignore"):
        alpha = 1.0 - (n - 1.0) * observed / expected
    return np.where(np.count_nonzero(n_c > 0, axis=1) <= 1, np.nan, alpha)


def krippendorff_distances(
    n_c: NDArray[np.float64], values: NDArray[Any], level: Level
) -> NDArray[np.float64]:
    """The level's squared distances between the sorted ``values``, ``(rows, V, V)`` for the
    value totals ``n_c`` ``(rows, V)`` of each coincidence matrix (ordinal ones depend on
    them)."""
    v = len(values)
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(v), (n_c.shape[0], v, v))
    if level == "ordinal":
        # sum_{g=c..k} n_g - (n_c + n_k)/2 = mid_k - mid_c, mid = cumsum(n) - n/2.
        mid = np.cumsum(n_c, axis=1) - n_c / 2.0
        return (mid[:, None, :] - mid[:, :, None]) ** 2
    u = np.asarray(values, dtype=np.float64)
    if level == "interval":
        d = np.subtract.outer(u, u) ** 2
    else:
        total = np.add.outer(u, u)
        diff = np.subtract.outer(u, u)
        # c + k = 0 only for c = k = 0, whose distance is 0.
        d = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0) ** 2
    return np.broadcast_to(d, (n_c.shape[0], v, v))


def krippendorff_parts(
    coincidence: NDArray[np.float64], values: NDArray[Any], level: Level = "nominal"
) -> tuple[NDArray[np.float64], ...]:
    """Per coincidence matrix: ``sum o d``, ``sum n_c n_k d``, ``n`` and the value totals
    ``n_c`` -- alpha is ``1 - (n - 1) sum o d / sum n_c n_k d``."""
    v = len(values)
    o = np.asarray(coincidence, dtype=np.float64).reshape(-1, v, v)
    n_c = o.sum(axis=1)
    n = n_c.sum(axis=1)
    if level == "nominal":
        # Closed forms of the nominal sums avoid a V x V distance matrix.
        observed = n - np.trace(o, axis1=1, axis2=2)
        expected = n * n - (n_c * n_c).sum(axis=1)
    else:
        d = krippendorff_distances(n_c, values, level)
        observed = (o * d).sum(axis=(1, 2))
        expected = (n_c[:, :, None] * n_c[:, None, :] * d).sum(axis=(1, 2))
    return observed, expected, n, n_c
