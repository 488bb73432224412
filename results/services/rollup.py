"""The run's cells rolled up into the groups of one summary level, in every age scope.

A group is (target, polarity, key) -- key the area, subarea or metric version, 0 overall; its
clusters are its base scenarios (target, version, base): for one age context each is a single
cell, for "all" a base's teen and adult cells merge. The members of a level (a cell once per
subarea or area of its metric) are sorted once, by (target, polarity, key, version, base, age):
the members of one age keep that order, and the clusters of "all" are its runs, so the three
scopes share one sort.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from results.models import AgeScope, SummaryLevel

from .cells import AGES, RunCells, packed_key, packing

SCOPES = (AgeScope.TEEN.value, AgeScope.ADULT.value, AgeScope.ALL.value)


@dataclass
class Groups:
    """The groups of one level and age scope, sorted by (target, polarity, key)."""

    target: NDArray[np.int64]
    polarity: NDArray[np.int64]  # index into POLARITIES
    key: NDArray[np.int64]
    n: NDArray[np.int64]
    passed: NDArray[np.int64]
    n_clusters: NDArray[np.int64]
    # Pooled levels only: every cluster (a base scenario of one metric) of the groups, in
    # group order -- its group (0, 1, ... in the order above), metric version, passed and n.
    c_group: NDArray[np.int64] | None = None
    c_version: NDArray[np.int64] | None = None
    c_passed: NDArray[np.int64] | None = None
    c_n: NDArray[np.int64] | None = None


def level_groups(
    cells: RunCells, level: str, polarity: NDArray[np.int64], *, clusters: bool
) -> list[tuple[str, Groups]]:
    """The groups of ``level`` in each age scope (SCOPES order) that has members."""
    cell_idx, key = memberships(cells, level)
    if cell_idx.size == 0:
        return []
    cols = (
        cells.target[cell_idx],
        polarity[cell_idx],
        key,
        cells.version[cell_idx],
        cells.base[cell_idx],
        cells.age[cell_idx],
    )
    order, group_of, cluster_of = _sorted_members(cols)
    key, member = key[order], cell_idx[order]  # each sorted member's key and cell
    age, n, passed = cells.age[member], cells.n[member], cells.passed[member]
    out = []
    for scope in SCOPES:
        if scope == AgeScope.ALL:
            members = np.arange(age.size)
        else:
            members = np.flatnonzero(age == AGES.index(scope))
            if members.size == 0:
                continue
        # The clusters: runs of equal (target, polarity, key, version, base); for one age each
        # member is one, unless the cells repeat one.
        c_starts = np.flatnonzero(_changes(cluster_of[members]))
        first = members[c_starts]
        if c_starts.size == members.size:
            c_n, c_y = n[first].astype(np.int64), passed[first].astype(np.int64)
        else:
            c_n = np.add.reduceat(n[members], c_starts).astype(np.int64)
            c_y = np.add.reduceat(passed[members], c_starts).astype(np.int64)
        c_group = group_of[first]
        new_c_group = _changes(c_group)
        starts = np.flatnonzero(new_c_group)
        head = first[starts]
        groups = Groups(
            target=cells.target[member[head]],
            polarity=polarity[member[head]],
            key=key[head],
            n=np.add.reduceat(c_n, starts),
            passed=np.add.reduceat(c_y, starts),
            n_clusters=np.diff(np.append(starts, c_group.size)),
        )
        if clusters:
            groups.c_group = np.cumsum(new_c_group) - 1
            groups.c_version = cells.version[member[first]]
            groups.c_passed, groups.c_n = c_y, c_n
        out.append((scope, groups))
    return out


def memberships(cells: RunCells, level: str) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(cell index, group key) pairs: a cell belongs to one group per subarea/area of its metric."""
    if level == SummaryLevel.OVERALL:
        return np.arange(cells.size), np.zeros(cells.size, np.int64)
    if level == SummaryLevel.METRIC:
        return np.arange(cells.size), cells.version
    mapping = cells.subareas if level == SummaryLevel.SUBAREA else cells.areas
    pairs = sorted((v, k) for v, keys in mapping.items() for k in keys)
    if not pairs:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    pv = np.array([p[0] for p in pairs], np.int64)
    pk = np.array([p[1] for p in pairs], np.int64)
    # Each version's first pair and number of pairs, looked up per cell in a table over the
    # versions' id range when it is not sparse (two binary searches per cell take longer).
    low = min(int(pv[0]), int(cells.version.min(initial=pv[0])))
    high = max(int(pv[-1]), int(cells.version.max(initial=pv[-1])))
    if high - low <= 4 * (cells.size + pv.size):
        firsts = np.searchsorted(pv, np.arange(low, high + 2))
        at = cells.version - low
        start = firsts[at]
        per_cell = firsts[at + 1] - start
    else:
        start = np.searchsorted(pv, cells.version, "left")
        per_cell = np.searchsorted(pv, cells.version, "right") - start
    cell_idx = np.repeat(np.arange(cells.size), per_cell)
    offsets = np.arange(per_cell.sum()) - np.repeat(np.cumsum(per_cell) - per_cell, per_cell)
    return cell_idx, pk[np.repeat(start, per_cell) + offsets]


def distinct_rows(*cols: NDArray[np.int64]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Distinct rows of the columns in lexicographic order: the index of one row of each, and
    the distinct row of every row (as ``np.unique(axis=0)``, by one sort of the columns packed
    into one integer key when they fit, else by one lexsort; no sort if already in order)."""
    key = packed_key(cols)
    if key is not None:
        order = (
            np.arange(key.size) if (key[1:] >= key[:-1]).all() else np.argsort(key, kind="stable")
        )
        ordered = key[order]
        change = np.ones(len(order), bool)
        np.not_equal(ordered[1:], ordered[:-1], out=change[1:])
    else:
        order = np.lexsort(cols[::-1])
        stacked = np.column_stack(cols)[order]
        change = np.ones(len(order), bool)
        change[1:] = np.any(stacked[1:] != stacked[:-1], axis=1)
    inverse = np.empty(len(order), np.intp)
    inverse[order] = np.cumsum(change) - 1
    return order[change], inverse


def _sorted_members(
    cols: tuple[NDArray[np.int64], ...],
) -> tuple[NDArray[np.intp], NDArray[np.int64], NDArray[np.int64]]:
    """The order of the members by (target, polarity, key, version, base, age) -- ``cols`` --
    and, in that order, each member's group and cluster as 0, 1, ... (runs of equal first
    three and first five columns)."""
    packed = packing(cols)
    if packed is None:
        order = np.lexsort(cols[::-1])
        ordered = [col[order] for col in cols]
        new_group = _changes(*ordered[:3])
        new_cluster = new_group | _changes(*ordered[3:5])
    else:
        key, widths = packed
        # Stable: a radix sort or merge of runs, two to four times quicker on these keys, which
        # come in long sorted runs (cells are in (age, target, version, base) order).
        order = np.argsort(key, kind="stable")
        ordered_key = key[order]
        new_group = _changes(ordered_key // (widths[3] * widths[4] * widths[5]))
        new_cluster = _changes(ordered_key // widths[5])
    return order, np.cumsum(new_group) - 1, np.cumsum(new_cluster) - 1


def _changes(*cols: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Where a row of the (sorted) columns differs from the one before; the first row does."""
    change = np.ones(cols[0].size, bool)
    if cols[0].size:
        change[1:] = cols[0][1:] != cols[0][:-1]
        for col in cols[1:]:
            change[1:] |= col[1:] != col[:-1]
    return change
