"""Teen versus adult: per metric and per subarea, the paired teen-minus-adult test of
:mod:`stats.age_gap`, the count of differences at a controlled false discovery rate, and what
the test can find at the run's design (its power).

A metric has three base scenarios, each tested with a teen and an adult persona: too few for
a per-metric test to find a gap of 10-15 points (at a full release's design no test could
find a 15-point gap in more than about a third of such metrics, whatever its method). A
subarea pools the base scenarios of all its metrics -- dozens at full scale -- so the same
test, with each base scenario still the pair of its own teen and adult variants, finds a gap
shared by a subarea's metrics. Its estimand is the teen-minus-adult difference averaged over
the subarea's base scenarios (every metric weighs by its number of base scenarios, equal in
a release). A metric in two subareas counts in both; the false discovery rate is controlled
over the subareas (Benjamini-Hochberg holds for the positive dependence this makes).

A base scenario written in two languages is paired within each language: its English teen
variant with its English adult one, its Spanish teen variant with its Spanish adult one
(`situations`), never a teen in one language with an adult in another.

The per-metric differences are one family of tests per release with the language
comparisons (`languages.language_tests`): the false discovery rate is controlled over all of
them at once, so a release that adds languages adds tests to the count, and each count says
how many tests it was made over (``fdr_family``). The subareas are their own family: each
pools metrics already tested one by one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import stats as statistics
from stats import age_gap
from stats.estimates import Estimate

from .cells import RunCells, situations

# False discovery rate at which "metrics with a teen-adult difference" are counted.
FDR = 0.05
# The gap whose chance of being found is published beside that count, and the chance at which
# the smallest findable gap is quoted.
POWER_GAP = 0.15
POWER_TARGET = 0.8


def _num(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def teen_adult_test(cells: RunCells) -> tuple[np.ndarray, age_gap.AgeGapTest]:
    """The run's metric versions (sorted) and their teen-minus-adult test
    (:func:`stats.age_gap.age_gap_test`), paired per model on each base scenario's teen and
    adult variants."""
    versions = np.unique(cells.version)
    targets, t_code = np.unique(cells.target, return_inverse=True)
    situation = situations(cells)
    bases = int(situation.max()) + 1 if situation.size else 0
    shape = (versions.size, bases, 2, targets.size)
    passed, n = np.zeros(shape), np.zeros(shape)
    index = (np.searchsorted(versions, cells.version), situation, cells.age, t_code.ravel())
    np.add.at(passed, index, cells.passed)
    np.add.at(n, index, cells.n)
    return versions, age_gap.age_gap_test(passed, n)


def teen_adult_differences(
    cells: RunCells, keys: dict[int, str], *, test: age_gap.AgeGapTest | None = None
) -> list[dict[str, Any]]:
    """Teen minus adult pass rate per metric (the mean over its base scenarios of each
    model's teen-variant rate minus its adult-variant rate), largest differences first, each
    with the p-value of its test for the false-discovery-rate count."""
    versions, found = teen_adult_test(cells) if test is None else (np.unique(cells.version), test)
    if versions.size == 0:
        return []
    v_code = np.searchsorted(versions, cells.version)
    teen = cells.age == 0
    totals = np.zeros((versions.size, 4))
    for column, (mask, values) in enumerate(
        ((teen, cells.passed), (teen, cells.n), (~teen, cells.passed), (~teen, cells.n))
    ):
        np.add.at(totals[:, column], v_code[mask], values[mask])
    estimates = found.estimates()
    out = []
    for i, v in enumerate(versions.tolist()):
        yt, nt, ya, na = totals[i]
        if nt == 0 or na == 0:
            continue
        out.append(
            {
                "metric_version": v,
                "metric": keys.get(v, str(v)),
                "polarity": cells.polarity.get(v, ""),
                "teen_rate": yt / nt,
                "adult_rate": ya / na,
                "difference": estimates[i].as_dict(),
                "p_value": _num(found.p_value[i]),
                "n_teen": int(nt),
                "n_adult": int(na),
            }
        )
    out.sort(key=lambda d: -abs(d["difference"]["value"] or 0.0))
    return out


def teen_adult_power(test: age_gap.AgeGapTest) -> dict[str, Any]:
    """What the per-metric test can find at this run's design (its models, base scenarios and
    conversations), from its fitted variances: the power for a true gap of ``POWER_GAP``
    averaged over the metrics, and the smallest gap found with ``POWER_TARGET`` probability."""
    testable = np.isfinite(test.p_value)
    return {
        "gap": POWER_GAP,
        "target": POWER_TARGET,
        "power": test.mean_power(POWER_GAP) if testable.any() else None,
        "minimum_gap": test.minimum_detectable_gap(POWER_TARGET) if testable.any() else None,
        "n_metrics": int(testable.sum()),
        "n_bases": int(np.median(test.n_bases[testable])) if testable.any() else 0,
    }


def grouped_teen_adult_test(
    cells: RunCells, groups: dict[int, list[int]]
) -> tuple[list[int], age_gap.AgeGapTest | None]:
    """The group ids (sorted) and the teen-minus-adult test of each group of metrics, whose
    base scenarios are all of its metrics' ones (``groups``: metric version -> its groups;
    a version in several groups counts in each). ``None`` without any group."""
    ids = sorted({g for gs in groups.values() for g in gs})
    if not ids or cells.size == 0:
        return [], None
    versions, v_code = np.unique(cells.version, return_inverse=True)
    v_code = v_code.ravel()
    member = np.zeros((versions.size, len(ids)), dtype=bool)
    column = {g: i for i, g in enumerate(ids)}
    for i, v in enumerate(versions.tolist()):
        for g in groups.get(v, ()):
            member[i, column[g]] = True
    targets, t_code = np.unique(cells.target, return_inverse=True)
    t_code = t_code.ravel()
    # A base scenario in one language is a (metric version, situation) pair: unique within a
    # group.
    situation = situations(cells)
    base_key = v_code.astype(np.int64) * (int(situation.max()) + 1) + situation
    per_group = []
    for k in range(len(ids)):
        rows = np.flatnonzero(member[v_code, k])
        keys, b_code = np.unique(base_key[rows], return_inverse=True)
        per_group.append((rows, b_code.ravel(), keys.size))
    shape = (len(ids), max(size for *_, size in per_group), 2, targets.size)
    passed, n = np.zeros(shape), np.zeros(shape)
    for k, (rows, b_code, _) in enumerate(per_group):
        index = (k, b_code, cells.age[rows], t_code[rows])
        np.add.at(passed, index, cells.passed[rows])
        np.add.at(n, index, cells.n[rows])
    return ids, age_gap.age_gap_test(passed, n)


def teen_adult_subareas(cells: RunCells) -> dict[str, Any]:
    """Per subarea, its teen-minus-adult difference with interval and p-value, whether the
    false-discovery-rate count finds it, and its power for a ``POWER_GAP`` difference; with
    the count and the test's power and smallest findable gap over the subareas."""
    ids, test = grouped_teen_adult_test(cells, cells.subareas)
    if test is None:
        return {"rows": [], "n_subareas": 0, "n_fdr_discoveries": 0, "fdr": FDR, "power": None}
    reject, adjusted = statistics.benjamini_hochberg(test.p_value, FDR)
    power = test.power(POWER_GAP)
    metrics = {g: 0 for g in ids}
    for gs in cells.subareas.values():
        for g in gs:
            metrics[g] += 1
    rows = [
        {
            "subarea": g,
            "name": cells.subarea_names.get(g, str(g)),
            "n_metrics": metrics[g],
            "difference": estimate.as_dict(),
            "p_value": _num(test.p_value[i]),
            "q_value": _num(adjusted[i]),
            "fdr_discovery": bool(reject[i]),
            "power": _num(power[i]),
        }
        for i, (g, estimate) in enumerate(zip(ids, test.estimates(), strict=True))
    ]
    return {
        "rows": rows,
        "n_subareas": int(np.isfinite(test.p_value).sum()),
        "n_fdr_discoveries": int(reject.sum()),
        "fdr": FDR,
        "power": teen_adult_power(test),
    }


def fdr_control(tests: Sequence[dict[str, Any]]) -> int:
    """Benjamini-Hochberg at ``FDR`` over ``tests`` (dicts holding a ``p_value``, None when
    untestable), writing each one's ``q_value`` and ``fdr_discovery``; the number counted."""
    p_values = [np.nan if t["p_value"] is None else t["p_value"] for t in tests]
    reject, adjusted = statistics.benjamini_hochberg(p_values, FDR)
    for t, rejected, q in zip(tests, reject.tolist(), adjusted.tolist(), strict=True):
        t["fdr_discovery"] = bool(rejected)
        t["q_value"] = _num(q)
    return int(np.isfinite(np.asarray(p_values, dtype=np.float64)).sum())


def teen_adult_summary(
    cells: RunCells,
    keys: dict[int, str],
    *,
    n_resamples: int,
    seed: int,
    language_tests: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """What the methodology page and the API publish of teen versus adult; the false
    discovery rate controlled over its per-metric tests and the ``language_tests`` (which get
    their ``q_value`` and ``fdr_discovery`` too) as one family."""
    _, test = teen_adult_test(cells)
    differences = teen_adult_differences(cells, keys, test=test)
    excluding_zero = [d for d in differences if Estimate.from_dict(d["difference"]).excludes_zero]
    counted = fdr_control([*differences, *language_tests])
    teen_counted = sum(d["p_value"] is not None for d in differences)
    values = [d["difference"]["value"] for d in differences if d["difference"]["value"] is not None]
    mean_difference = statistics.mean_estimate(
        values, unit="difference", over="metrics", n_resamples=n_resamples, seed=seed
    )
    return {
        "n_metrics": len(differences),
        "n_interval_excludes_zero": len(excluding_zero),
        "n_fdr_discoveries": sum(d["fdr_discovery"] for d in differences),
        "fdr": FDR,
        "fdr_family": {
            "n_tests": counted,
            "n_teen_adult": teen_counted,
            "n_language": counted - teen_counted,
            "n_language_discoveries": sum(t["fdr_discovery"] for t in language_tests),
        },
        "mean_difference": mean_difference.as_dict(),
        "power": teen_adult_power(test),
        "largest": differences[:25],
        "subareas": teen_adult_subareas(cells),
    }
