"""Krippendorff's alpha as a published figure: the units' coincidences summed per cluster, the
coefficient and its bounded interval drawn by :func:`.figures.sums_estimate`."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .coefficients import krippendorff_coefficient
from .estimates import Estimate, Exclusion
from .figures import sums_estimate
from .krippendorff import Level, krippendorff_unit_coincidences, krippendorff_unit_counts


def krippendorff_estimate(
    data: ArrayLike,
    level: Level = "nominal",
    clusters: ArrayLike | None = None,
    **options: Any,
) -> Estimate:
    """Krippendorff's alpha of ``data[rater, unit]`` (``nan`` = missing) with a percentile
    bootstrap interval over units, or over ``clusters`` (one label per unit, e.g. the base
    scenario) drawn whole. Alpha is a function of the units' summed coincidences, so each
    resample is one matrix product (:func:`sums_estimate`). Units with fewer than two values
    are left out (counted in ``excluded``); ``n`` counts the pairable units."""
    counts, values = krippendorff_unit_counts(data, level)
    pairable = counts.sum(axis=1) >= 2
    excluded = (Exclusion("fewer than two ratings", int((~pairable).sum())),)
    if clusters is not None:
        clusters = np.asarray(clusters)
        if clusters.shape != (counts.shape[0],):
            raise ValueError(f"clusters must have one label per unit ({counts.shape[0]})")
        clusters = clusters[pairable]
    if not pairable.any():
        return Estimate.insufficient(n=0, unit="coefficient", excluded=excluded)
    coincidences = krippendorff_unit_coincidences(counts[pairable])
    return sums_estimate(
        coincidences,
        krippendorff_coefficient(coincidences, values, level),
        clusters=clusters,
        unit="coefficient",
        excluded=excluded,
        **options,
    )
