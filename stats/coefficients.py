"""Chance-corrected coefficients ``1 - D_o / D_e`` as statistics of item sums, with what their
bounds need (:func:`.bounds.coefficient_bounds`): Cohen's and Fleiss' kappa and Krippendorff's
alpha, each item's share of the observed disagreement scaled to [0, 1], and the chance
disagreement ``D_e`` on the same scale, from the summed items of a figure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from .agreement import cohen_from_confusion, fleiss_from_sums
from .krippendorff import (
    Level,
    krippendorff_distances,
    krippendorff_from_coincidence,
    krippendorff_parts,
)


@dataclass(frozen=True)
class Coefficient:
    """A chance-corrected coefficient ``1 - D_o / D_e`` as a statistic of item sums, with what
    its bounds need (:func:`.bounds.coefficient_bounds`): each item's share of disagreement
    in [0, 1], and ``D_e`` (scaled to [0, 1]) from the summed items."""

    statistic: Callable[[NDArray[np.float64]], NDArray[np.float64]]
    disagreement: NDArray[np.float64]
    chance: Callable[[NDArray[np.float64]], float]

    def __call__(self, sums: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.statistic(sums)


def fleiss_coefficient(sums: NDArray[np.float64]) -> Coefficient:
    """Fleiss' kappa of :func:`.agreement.fleiss_item_sums`: an item disagrees by ``1 - P_i``."""

    def chance(total: NDArray[np.float64]) -> float:
        shares = total[0, 2:] / total[0, 2:].sum()
        return float(1.0 - (shares * shares).sum())

    return Coefficient(fleiss_from_sums, 1.0 - sums[:, 0], chance)


def _cohen_weights(k: int, weights: Literal["linear", "quadratic"] | None) -> NDArray:
    diff = np.subtract.outer(np.arange(k), np.arange(k))
    w = {None: (diff != 0) * 1.0, "linear": np.abs(diff) * 1.0, "quadratic": diff * diff * 1.0}
    return w[weights].ravel() / w[weights].max()


def cohen_chance(
    total: NDArray[np.float64], k: int, weights: Literal["linear", "quadratic"] | None = None
) -> float:
    """Cohen's chance disagreement, scaled to [0, 1], of one summed K x K confusion table."""
    table = np.asarray(total, dtype=np.float64).reshape(k, k)
    n = table.sum()
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / (n * n)
    return float((_cohen_weights(k, weights) * expected.ravel()).sum())


def cohen_coefficient(
    pair: NDArray[np.intp], k: int, weights: Literal["linear", "quadratic"] | None
) -> Coefficient:
    """Cohen's kappa of one-hot confusion cells ``pair``: an item disagrees by its cell's weight
    over the largest weight."""
    return Coefficient(
        lambda s: cohen_from_confusion(s, k, weights),
        _cohen_weights(k, weights)[pair],
        lambda total: cohen_chance(total, k, weights),
    )


def krippendorff_coefficient(
    coincidences: NDArray[np.float64], values: NDArray, level: Level
) -> Coefficient:
    """Krippendorff's alpha of :func:`.krippendorff.krippendorff_unit_coincidences`: a unit
    disagrees by its mean pairable distance over the largest distance between the values."""
    v = len(values)
    units = coincidences.reshape(-1, v, v)
    distances = krippendorff_distances(units.sum(axis=(0, 1))[None, :], values, level)[0]
    present = units.sum(axis=(0, 1)) > 0
    largest = float(distances[np.ix_(present, present)].max()) or 1.0
    with np.errstate(all="ignore"):
        per_unit = (units * distances).sum(axis=(1, 2)) / units.sum(axis=(1, 2)) / largest

    def chance(total: NDArray[np.float64]) -> float:
        _, expected, n, _ = krippendorff_parts(total, values, level)
        return float(expected[0] / (n[0] * (n[0] - 1.0)) / largest)

    return Coefficient(
        lambda s: krippendorff_from_coincidence(s, values, level),
        np.nan_to_num(per_unit),
        chance,
    )
