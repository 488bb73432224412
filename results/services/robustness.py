"""Robustness of model comparisons: weighting schemes, leave-one-benchmark-out, age contexts.

Per polarity (never mixed), every scheme scores each model as a weighted pass rate
sum(w * passed) / sum(w * n) over its conversations, with weights constant within a metric:

* default -- every conversation counts once (the published pooled rate);
* per metric -- each metric's pass rate counts once;
* per source benchmark -- each source's pooled pass rate counts once (expert submissions form
  one source);
* source benchmarks' own weights -- as per source benchmark, but within a source that gives
  every one of its metrics a weight (Spiral-Bench's scoring weights, say) each metric's pass
  rate counts in proportion to that weight; only shown when some source gives weights;
* per subarea -- each subarea's pooled pass rate counts once (a metric in two subareas counts
  in both, as in the summaries);
* leave out <benchmark> -- the default without that benchmark's metrics.

Intervals come from one paired cluster bootstrap per polarity: the same resampled base
scenarios score every model under every scheme. Weights are held fixed across resamples.

Whether two models differ is read from the interval of their *difference*, paired on the base
scenarios both met and simultaneous over all pairs (``model_differences``), never from whether
their own intervals overlap: overlapping intervals are no evidence of no difference, and
chaining models while neighbouring intervals overlap is not even transitive.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import stats as statistics
from stats import percentile_interval

from .cells import RunCells
from .languages import language_tests, languages_summary
from .teen_adult import teen_adult_summary

EXPERT_SOURCE = "expert submissions"


def _num(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


# Teen-vs-adult gaps smaller than this (in pass-rate units) have no direction to keep.
AGE_GAP_TOLERANCE = 0.005


def _scheme_weights(
    versions: np.ndarray,
    n_metric: np.ndarray,
    cells: RunCells,
) -> dict[str, np.ndarray]:
    """Weight per (metric, target) for each scheme; `n_metric[m, t]` = judged conversations."""
    m_count, _ = n_metric.shape
    sources = [cells.source.get(int(v), EXPERT_SOURCE) for v in versions]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_metric = np.where(n_metric > 0, 1.0 / n_metric, 0.0)
        n_source: dict[str, np.ndarray] = {}
        for i, s in enumerate(sources):
            n_source[s] = n_source.get(s, 0) + n_metric[i]
        per_source = np.array([np.where(n_source[s] > 0, 1.0 / n_source[s], 0.0) for s in sources])
        n_sub: dict[int, np.ndarray] = {}
        for i, v in enumerate(versions):
            for s in cells.subareas.get(int(v), []):
                n_sub[s] = n_sub.get(s, 0) + n_metric[i]
        per_subarea = np.zeros_like(n_metric)
        for i, v in enumerate(versions):
            for s in cells.subareas.get(int(v), []):
                per_subarea[i] += np.where(n_sub[s] > 0, 1.0 / n_sub[s], 0.0)
    weights = {
        "default": np.ones_like(n_metric),
        "equal per metric": per_metric,
        "equal per source benchmark": per_source.reshape(m_count, -1),
        "equal per subarea": per_subarea,
    }
    own = _source_own_weights(sources, versions, n_metric, per_source, cells)
    if own is not None:
        weights["source benchmarks' own weights"] = own
    # Leaving out the only source leaves nothing to compare: offered from two sources on.
    for source in sorted(set(sources) - {EXPERT_SOURCE}) if len(set(sources)) >= 2 else ():
        keep = np.array([s != source for s in sources], dtype=np.float64)[:, None]
        weights[f"leave out {source}"] = np.ones_like(n_metric) * keep
    return weights


def _source_own_weights(
    sources: list[str],
    versions: np.ndarray,
    n_metric: np.ndarray,
    per_source: np.ndarray,
    cells: RunCells,
) -> np.ndarray | None:
    """Per (metric, target): each source totals 1; inside a fully weighted source metric i
    gets w_i / sum(w of the source's metrics judged for that target), spread over its
    conversations. Sources without (complete) weights keep their pooled rate."""
    given = {int(v): cells.source_weight[int(v)] for v in versions if int(v) in cells.source_weight}
    weighted = {
        s
        for s in set(sources)
        if all(int(v) in given for v, t in zip(versions, sources, strict=True) if t == s)
    }
    if not weighted:
        return None
    result = np.array(per_source, dtype=np.float64).reshape(n_metric.shape)
    for source in weighted:
        rows = [i for i, s in enumerate(sources) if s == source]
        w = np.array([given[int(versions[i])] for i in rows])[:, None] * (n_metric[rows] > 0)
        total = w.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(total > 0, w / total, 0.0)
            result[rows] = np.where(n_metric[rows] > 0, share / n_metric[rows], 0.0)
    return result


def _polarity_robustness(
    cells: RunCells,
    polarity: str,
    targets: list[int],
    names: dict[int, str],
    n_resamples: int,
    seed: int,
) -> dict[str, Any] | None:
    pol = np.array([cells.polarity[v] == polarity for v in cells.version.tolist()])
    if not pol.any():
        return None
    t_index = {t: i for i, t in enumerate(targets)}
    tcol = np.array([t_index[t] for t in cells.target[pol].tolist()])
    version, base = cells.version[pol], cells.base[pol]
    versions, v_code = np.unique(version, return_inverse=True)
    # Clusters (version, base) in sorted order, from one packed key (`np.unique(axis=0)` sorts
    # rows by a slower path).
    key = version.astype(np.int64) * (int(base.max()) + 1) + base
    first, c_code = np.unique(key, return_index=True, return_inverse=True)[1:]
    clusters = np.column_stack([version[first], base[first]])
    v_code, c_code = v_code.ravel(), c_code.ravel()
    n_targets = len(targets)
    # Per cluster and target: passed and judged conversations (both ages).
    y = np.zeros((len(clusters), n_targets))
    n = np.zeros((len(clusters), n_targets))
    np.add.at(y, (c_code, tcol), cells.passed[pol])
    np.add.at(n, (c_code, tcol), cells.n[pol])
    n_metric = np.zeros((len(versions), n_targets))
    np.add.at(n_metric, (v_code, tcol), cells.n[pol])
    metric_of_cluster = np.searchsorted(versions, clusters[:, 0])
    weights = _scheme_weights(versions, n_metric, cells)

    schemes = list(weights)
    # Teen and adult sums per cluster and target, to see whether each model's teen-vs-adult
    # gap keeps its direction under every weighting.
    teen = cells.age[pol] == 0
    age_y = np.zeros((2, len(clusters), n_targets))
    age_n = np.zeros((2, len(clusters), n_targets))
    for a, mask in enumerate((teen, ~teen)):
        np.add.at(age_y[a], (c_code[mask], tcol[mask]), cells.passed[pol][mask])
        np.add.at(age_n[a], (c_code[mask], tcol[mask]), cells.n[pol][mask])

    def age_gaps(scheme: str) -> dict[str, float]:
        w = weights[scheme][metric_of_cluster]
        with np.errstate(all="ignore"):
            rates = (w * age_y).sum(axis=1) / (w * age_n).sum(axis=1)
        gaps = rates[0] - rates[1]
        return {names[t]: float(gaps[i]) for i, t in enumerate(targets) if math.isfinite(gaps[i])}

    # (clusters, schemes * targets) numerators and denominators, one matrix product per chunk.
    num = np.concatenate([weights[s][metric_of_cluster] * y for s in schemes], axis=1)
    den = np.concatenate([weights[s][metric_of_cluster] * n for s in schemes], axis=1)
    with np.errstate(all="ignore"):
        point = num.sum(axis=0) / den.sum(axis=0)
    g = len(clusters)
    if g >= 2:
        width = num.shape[1]

        def ratio(s: np.ndarray) -> np.ndarray:
            with np.errstate(all="ignore"):
                return s[:, :width] / s[:, width:]

        dist = statistics.cluster_sum_distribution(
            np.concatenate([num, den], axis=1), ratio, n_resamples=n_resamples, seed=seed
        )
        low, high = percentile_interval(dist)
    else:
        low = high = np.full(point.shape, np.nan)

    def block(values: np.ndarray, s: int) -> np.ndarray:
        return values[s * n_targets : (s + 1) * n_targets]

    results: list[dict[str, Any]] = []
    default_gaps: dict[str, float] = {}
    default_scores: dict[str, float] = {}
    for s, scheme in enumerate(schemes):
        scores, intervals = {}, {}
        for t, target in enumerate(targets):
            value = block(point, s)[t]
            if math.isfinite(value):
                scores[names[target]] = float(value)
                lo, hi = block(low, s)[t], block(high, s)[t]
                intervals[names[target]] = (
                    float(lo) if math.isfinite(lo) else float(value),
                    float(hi) if math.isfinite(hi) else float(value),
                )
        entry: dict[str, Any] = {
            "scheme": scheme,
            "scores": [
                {"model": m, "score": scores[m], "ci": list(intervals[m])} for m in sorted(scores)
            ],
        }
        gaps = age_gaps(scheme)
        entry["age_gaps"] = gaps
        if s == 0:
            default_scores = scores
            default_gaps = gaps
        else:
            # A gap within half a point counts as no direction at all.
            def direction(x: float) -> int:
                return 0 if abs(x) < AGE_GAP_TOLERANCE else (1 if x > 0 else -1)

            shared = [m for m in gaps if m in default_gaps]
            entry["age_pattern_flipped"] = [
                m for m in shared if direction(gaps[m]) != direction(default_gaps[m])
            ]
            entry["age_pattern_held"] = len(shared) - len(entry["age_pattern_flipped"])
            stability = statistics.rank_stability(default_scores, scores)
            entry.update(
                kendall_tau=_num(stability["kendall_tau"]),
                swaps=[list(pair) for pair in stability["swaps"]],
                max_rank_change=stability["max_rank_change"],
            )
        results.append(entry)
    return {
        "n_clusters": int(g),
        "n_metrics": len(versions),
        "schemes": results,
        "differences": model_differences(y, n, clusters[:, 0], [names[t] for t in targets]),
    }


def model_differences(
    passed: np.ndarray, n: np.ndarray, metric: np.ndarray, models: list[str]
) -> list[dict[str, Any]]:
    """Every pair of models' difference of pass rates (the published, unweighted ones), paired
    on the base scenarios both met and simultaneous over all pairs (``stats.differences``).
    ``passed[c, t]``, ``n[c, t]``: model t in cluster c (a base scenario of ``metric[c]``).
    Models are in alphabetical order, the first of a pair before the second; models without a
    judged conversation here are left out."""
    present = np.flatnonzero(n.sum(axis=0) > 0).tolist()
    order = sorted(present, key=lambda t: models[t])
    if len(order) < 2 or n.shape[0] < 2:
        return []
    result = statistics.paired_rate_differences(passed[:, order], n[:, order], metric)
    return [
        {"a": models[order[i]], "b": models[order[j]], "estimate": estimate.as_dict()}
        for (i, j), estimate in zip(result.pairs, result.estimates(), strict=True)
    ]


def robustness(
    cells: RunCells,
    names: dict[int, str],
    keys: dict[int, str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> dict[str, Any]:
    targets = sorted(set(cells.target.tolist()))
    languages = languages_summary(cells, names, keys)
    # One family of tests: the teen-adult control also marks the language differences.
    teen_adult = teen_adult_summary(
        cells, keys, n_resamples=n_resamples, seed=seed, language_tests=language_tests(languages)
    )
    return {
        "polarities": {
            polarity: _polarity_robustness(cells, polarity, targets, names, n_resamples, seed)
            for polarity in ("positive", "negative")
        },
        "teen_adult": teen_adult,
        "languages": languages,
    }
