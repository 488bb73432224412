"""The sensitivity of each model's overall pass rate to its own failures: counted as fails
instead of left out (the methodology page's "failures counted as fails")."""

from __future__ import annotations

import numpy as np

import stats as statistics
from results.models import AgeScope
from stats.estimates import Estimate, Exclusion

from .cells import PLATFORM_REASONS, RunCells
from .rollup import distinct_rows
from .summaries import POLARITIES, polarity_codes, scope_correlations


def failed_as_fail(
    cells: RunCells, names: dict[int, str], *, n_resamples: int, seed: int
) -> list[dict]:
    """Sensitivity of each model's overall pass rate: its own failures counted as fails.

    Target errors, timeouts and other errors count against the model; conversations the user
    simulator or the judge failed (the platform's own failures) are left out and reported
    apart, so a judge that cannot read a conversation never lowers the model's figure. Same
    interval as the published rate, on the cells (no query). (``n_resamples`` and ``seed`` are
    the refresh's; this interval does not resample.)
    """
    code = {v: POLARITIES.index(p) for v, p in cells.polarity.items()}
    charged = [row for row in cells.failed if row[1] in code and row[4] not in PLATFORM_REASONS]
    platform: dict[tuple[int, str], dict[str, int]] = {}
    for t, v, _b, _age, reason, c in cells.failed:
        if v in code and reason in PLATFORM_REASONS:
            counts = platform.setdefault((t, POLARITIES[code[v]]), {})
            counts[reason] = counts.get(reason, 0) + c
    failed = np.array(
        [(t, v, b, code[v], c) for t, v, b, _age, _reason, c in charged], np.int64
    ).reshape(-1, 5)
    pol = polarity_codes(cells)
    target = np.concatenate([cells.target, failed[:, 0]])
    polarity = np.concatenate([pol, failed[:, 3]])
    version = np.concatenate([cells.version, failed[:, 1]])
    base = np.concatenate([cells.base, failed[:, 2]])
    passed = np.concatenate([cells.passed, np.zeros(len(failed))])
    n = np.concatenate([cells.n, failed[:, 4].astype(np.float64)])
    if target.size == 0:
        return []
    # Clusters (target, polarity, version, base) with the model's failures counted as fails.
    first, inverse = distinct_rows(target, polarity, version, base)
    c_y = np.bincount(inverse, weights=passed)
    c_n = np.bincount(inverse, weights=n)
    g_first, g_of = distinct_rows(target[first], polarity[first])
    rho = scope_correlations(cells)[AgeScope.ALL.value][0]
    low, high = statistics.stratified_wilson(
        g_of, version[first], c_y, c_n, rho, n_groups=g_first.size
    )
    g_n = np.bincount(g_of, weights=c_n, minlength=g_first.size)
    g_y = np.bincount(g_of, weights=c_y, minlength=g_first.size)
    g_clusters = np.bincount(g_of, minlength=g_first.size)
    failed_n: dict[tuple[int, str], int] = {}
    for t, _v, _b, p, c in failed.tolist():
        failed_n[(t, POLARITIES[p])] = failed_n.get((t, POLARITIES[p]), 0) + c
    out = []
    for i, f in enumerate(first[g_first].tolist()):
        key = (int(target[f]), POLARITIES[polarity[f]])
        excluded = [Exclusion(r, c) for r, c in sorted(platform.get(key, {}).items())]
        estimate = Estimate(
            g_y[i] / g_n[i],
            float(low[i]),
            float(high[i]),
            method=f"{statistics.STRATIFIED_WILSON}; the model's failures counted as fails",
            n=int(g_n[i]),
            n_clusters=int(g_clusters[i]),
            excluded=tuple(excluded),
        )
        out.append(
            {
                "target": names.get(key[0], str(key[0])),
                "polarity": key[1],
                "n_failed": failed_n.get(key, 0),
                "n_platform_failed": sum(platform.get(key, {}).values()),
                "estimate": estimate.as_dict(),
            }
        )
    out.sort(key=lambda row: (row["polarity"], row["target"]))
    return out
