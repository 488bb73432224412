"""Input validation shared by the statistics modules."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

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
