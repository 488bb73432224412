"""Stratified random samples of rating candidates: proportional allocation, reproducible by seed.

Pure Python, no database: the queue service hands in the candidates and stores what comes back.
"""

import math
import random
from collections import defaultdict
from collections.abc import Sequence

from django.utils.translation import gettext as _

from core.exceptions import ApplicationError

from .kinds.base import Candidate

StratumKey = tuple[str, ...]


def sample_size_for(population: int, *, size: int | None, fraction: float | None) -> int:
    """How many items to draw: an explicit size (capped at the population) or a fraction."""
    if (size is None) == (fraction is None):
        raise ApplicationError(_("Give either a sample size or a fraction, not both."))
    if size is not None:
        if size < 1:
            raise ApplicationError(_("The sample size must be at least 1."))
        return min(size, population)
    if not 0 < fraction <= 1:
        raise ApplicationError(_("The fraction must be above 0 and at most 1 (e.g. 0.105)."))
    # At least one item: a fraction of a small population must not round to an empty queue.
    return min(population, max(1, round(fraction * population)))


def allocate_proportionally(sizes: dict[StratumKey, int], total: int) -> dict[StratumKey, int]:
    """Hamilton's largest-remainder allocation of `total` across strata of the given sizes.

    Each stratum gets floor(total * N_h / N), then the leftover units go to the largest
    fractional parts (ties: the larger stratum, then the stratum key), so the result is exact,
    proportional within one unit, and deterministic.
    """
    population = sum(sizes.values())
    if population == 0 or total == 0:
        return dict.fromkeys(sizes, 0)
    quotas = {key: total * n / population for key, n in sizes.items()}
    shares = {key: math.floor(quota) for key, quota in quotas.items()}
    leftover = total - sum(shares.values())
    order = sorted(sizes, key=lambda key: (-(quotas[key] - shares[key]), -sizes[key], key))
    for key in order[:leftover]:
        shares[key] += 1
    return shares


def _stratum(candidate: Candidate, strata: Sequence[str]) -> StratumKey:
    return tuple(str(candidate.strata.get(name, "")) for name in strata)


def inclusion_probabilities(
    population: Sequence[Candidate], chosen: Sequence[Candidate], *, strata: Sequence[str]
) -> dict[tuple[int, int], float]:
    """Each chosen item's chance of being drawn: its stratum's sample count over the stratum's
    size (a simple random sample within each stratum), keyed by (object_id, object_id_b)."""
    sizes: dict[StratumKey, int] = defaultdict(int)
    drawn: dict[StratumKey, int] = defaultdict(int)
    for candidate in population:
        sizes[_stratum(candidate, strata)] += 1
    for candidate in chosen:
        drawn[_stratum(candidate, strata)] += 1
    return {
        (c.object_id, c.object_id_b): drawn[key] / sizes[key]
        for c in chosen
        for key in [_stratum(c, strata)]
    }


def stratified_sample(
    candidates: Sequence[Candidate],
    *,
    strata: Sequence[str],
    size: int | None = None,
    fraction: float | None = None,
    seed: int = 0,
) -> list[Candidate]:
    """A proportional stratified sample, returned in a random (seeded) rating order."""
    if not candidates:
        raise ApplicationError(_("There is nothing of this kind to sample from yet."))
    total = sample_size_for(len(candidates), size=size, fraction=fraction)
    groups: dict[StratumKey, list[Candidate]] = defaultdict(list)
    for candidate in candidates:
        groups[_stratum(candidate, strata)].append(candidate)
    shares = allocate_proportionally({key: len(group) for key, group in groups.items()}, total)
    rng = random.Random(seed)  # noqa: S311 - sampling, not security
    chosen: list[Candidate] = []
    for key in sorted(groups):
        group = sorted(groups[key], key=lambda c: (c.object_id, c.object_id_b))
        chosen.extend(rng.sample(group, shares[key]))
    rng.shuffle(chosen)
    return chosen
