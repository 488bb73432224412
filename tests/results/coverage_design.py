"""Simulated releases at the platform's two designs, and the coverage of every published
estimate type on them, computed by the code that publishes them.

* demo: the demo catalogue's 64 metrics with their own subareas, areas and label categories
  (3-9 base-scenario clusters per subarea x polarity), 3 models;
* full: 809 metrics spread over the 14 subareas and 16 label categories, 10 models.

Every metric has 3 base scenarios in a teen and an adult variant, one conversation each per
model. Pass probabilities are logistic in a metric effect, a model effect, a base-scenario
effect whose SD differs between metrics (uniform up to ``sd_max``, 2.0 on the logit scale at
most), a variant effect and a teen-adult shift; the judge then flips a verdict with probability
``judge_noise``. The metrics of a release are fixed; the true value of a figure averages each
metric's rate over the population of base scenarios (Gauss-Hermite), after the judge's noise.

Used by ``tests/results/test_coverage_levels.py`` (few replications) and
``benchmarks/coverage.py`` (many, printing the figures with their Monte Carlo error).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from scipy import special

import stats as statistics
from metrics_registry.demo_catalog import DEMO_METRICS
from metrics_registry.taxonomy import AREAS, LABEL_CATEGORIES
from results.services.cells import RunCells
from results.services.robustness import FDR, teen_adult_differences
from results.services.summaries import (
    metric_design_effects,
    metric_rows,
    pooled_rows,
    summary_inputs,
)

BASES = 3
GH_X, GH_W = np.polynomial.hermite_e.hermegauss(40)
GH_W = GH_W / GH_W.sum()
SUBAREAS = [s[0] for a in AREAS for s in a["subareas"]]
AREA_OF = {s[0]: i for i, a in enumerate(AREAS) for s in a["subareas"]}
CATEGORIES = {c[0]: (i, c[2]) for i, c in enumerate(LABEL_CATEGORIES)}
ESTIMATE_TYPES = (
    "metric",
    "subarea",
    "area",
    "label category",
    "overall",
    "model difference",
    "model differences, all pairs at once",
)


@dataclass(frozen=True)
class Design:
    name: str
    polarity: np.ndarray  # per metric, 0 positive / 1 negative
    subareas: list[list[int]]  # per metric
    category: np.ndarray  # per metric, label category index
    models: int

    @property
    def metrics(self) -> int:
        return int(self.polarity.size)


def demo_design() -> Design:
    polarity = np.array([m[2] == "negative" for m in DEMO_METRICS], np.int64)
    subareas = [[SUBAREAS.index(s) for s in m[3]] for m in DEMO_METRICS]
    category = np.array([CATEGORIES[m[4]][0] for m in DEMO_METRICS], np.int64)
    return Design("demo (64 metrics)", polarity, subareas, category, models=3)


def full_design(rng: np.random.Generator, metrics: int = 809) -> Design:
    polarity = rng.integers(0, 2, metrics)
    subareas = [[int(s)] for s in rng.integers(0, len(SUBAREAS), metrics)]
    by_polarity = {
        p: [i for i, c in enumerate(LABEL_CATEGORIES) if (c[2] == "negative") == p] for p in (0, 1)
    }
    category = np.array([rng.choice(by_polarity[int(p)]) for p in polarity], np.int64)
    return Design("full release (809 metrics)", polarity, subareas, category, models=10)


def simulate(
    rng: np.random.Generator,
    design: Design,
    *,
    sd_max: float,
    judge_noise: float,
    spread: bool = False,
):
    """Outcomes ``y[metric, base, age, model]`` and true rates ``truth[metric, age, model]``
    (and with ``spread`` each metric's between-base SD)."""
    metrics, models = design.metrics, design.models
    mu = rng.normal(0.8, 1.2, metrics)[:, None, None, None]
    sd = rng.uniform(0.0, sd_max, metrics)
    model = rng.normal(0.0, 0.4, models)[None, None, None, :]
    base = (rng.normal(0.0, 1.0, (metrics, BASES)) * sd[:, None])[:, :, None, None]
    variant = rng.normal(0.0, 0.5, (metrics, BASES, 2))[:, :, :, None]
    shift = (
        rng.normal(0.0, 0.3, metrics)[:, None, None, None]
        * np.array([0.5, -0.5])[None, None, :, None]
    )
    observed = judge_noise + (1 - 2 * judge_noise) * special.expit(
        mu + model + base + variant + shift
    )
    y = rng.binomial(1, observed)
    linear = (mu + model + shift)[:, 0]  # metric, age, model
    spread_sd = np.hypot(sd, 0.5)[:, None, None, None]
    truth = (special.expit(linear[..., None] + spread_sd * GH_X) * GH_W).sum(axis=-1)
    truth = judge_noise + (1 - 2 * judge_noise) * truth
    return (y, truth, sd) if spread else (y, truth)


def as_cells(y: np.ndarray, design: Design) -> RunCells:
    m, b, a, t = np.meshgrid(*(np.arange(k) for k in y.shape), indexing="ij")
    names = ("positive", "negative")
    return RunCells(
        target=t.ravel(),
        version=m.ravel(),
        base=b.ravel(),
        age=a.ravel(),
        n=np.ones(y.size),
        passed=y.ravel().astype(np.float64),
        polarity={v: names[p] for v, p in enumerate(design.polarity.tolist())},
        subareas={v: list(s) for v, s in enumerate(design.subareas)},
        areas={
            v: sorted({AREA_OF[SUBAREAS[s]] for s in subs})
            for v, subs in enumerate(design.subareas)
        },
    )


def _true_rate(truth: np.ndarray, metrics: list[int], scope: str, model: int) -> float:
    ages = {"teen": [0], "adult": [1], "all": [0, 1]}[scope]
    return float(truth[np.ix_(metrics, ages, [model])].mean())


def coverage_hits(y: np.ndarray, truth: np.ndarray, design: Design) -> dict[str, list[bool]]:
    """Whether each published interval of one simulated release holds its true value."""
    cells = as_cells(y, design)
    run = SimpleNamespace(release_id=None, pk=None)
    inputs = summary_inputs(cells)
    hits: dict[str, list[bool]] = {name: [] for name in ESTIMATE_TYPES}
    members = {
        "overall": {0: list(range(design.metrics))},
        "subarea": {},
        "area": {},
        "metric": {v: [v] for v in range(design.metrics)},
    }
    for v, subs in enumerate(design.subareas):
        for s in subs:
            members["subarea"].setdefault(s, []).append(v)
        for a in cells.areas[v]:
            members["area"].setdefault(a, []).append(v)
    polarity = {"positive": 0, "negative": 1}
    for row in pooled_rows(run, cells, inputs=inputs) + metric_rows(run, cells, inputs=inputs):
        (_, _, target, pol, level, area, subarea, version, scope, n, *_rest) = row
        low, high = row[13], row[14]
        key = {"overall": 0, "area": area, "subarea": subarea, "metric": version}[level]
        metrics = [v for v in members[level][key] if design.polarity[v] == polarity[pol]]
        truth_value = _true_rate(truth, metrics, scope, target)
        hits[level].append(bool(low <= truth_value <= high))
    _label_hits(y, truth, design, hits["label category"])
    _difference_hits(y, truth, design, hits)
    return hits


def _label_hits(y, truth, design: Design, out: list[bool]) -> None:
    """The label's category rates, as ``results.label`` computes them (teens and adults)."""
    per_base = y.sum(axis=2)  # metric, base, model
    version = np.repeat(np.arange(design.metrics), BASES)
    for t in range(design.models):
        passed = per_base[:, :, t].ravel()
        sizes = np.full(passed.size, 2.0)
        rho = statistics.intra_cluster_correlation(version, passed, sizes)
        for c in np.unique(design.category):
            chosen = np.repeat(design.category == c, BASES)
            low, high = statistics.stratified_wilson(
                np.zeros(chosen.sum(), np.int64),
                version[chosen],
                passed[chosen],
                sizes[chosen],
                rho,
                n_groups=1,
            )
            value = _true_rate(truth, np.flatnonzero(design.category == c).tolist(), "all", t)
            out.append(bool(low[0] <= value <= high[0]))


def _difference_hits(y, truth, design: Design, hits: dict[str, list[bool]]) -> None:
    """Every pair of models' difference of overall rates per polarity, paired by base scenario:
    each pair on its own, and all pairs of a polarity at once."""
    for p in (0, 1):
        chosen = np.flatnonzero(design.polarity == p)
        passed = y[chosen].sum(axis=2).reshape(-1, design.models)  # (metric, base), model
        sizes = np.full(passed.shape, 2.0)
        stratum = np.repeat(chosen, BASES)
        result = statistics.paired_rate_differences(passed, sizes, stratum)
        true_rates = truth[chosen].mean(axis=(0, 1))
        true_diff = np.array([true_rates[i] - true_rates[j] for i, j in result.pairs])
        low, high = result.bounds(simultaneous=False)
        hits["model difference"] += ((low <= true_diff) & (true_diff <= high)).tolist()
        low, high = result.bounds(simultaneous=True)
        hits["model differences, all pairs at once"].append(
            bool(((low <= true_diff) & (true_diff <= high)).all())
        )


def coverage(
    design: Design, *, replications: int, sd_max: float, judge_noise: float, seed: int
) -> dict[str, tuple[float, float, int]]:
    """Per estimate type: coverage, its Monte Carlo standard error, number of intervals."""
    rng = np.random.default_rng(seed)
    hits: dict[str, list[bool]] = {name: [] for name in ESTIMATE_TYPES}
    for _ in range(replications):
        y, truth = simulate(rng, design, sd_max=sd_max, judge_noise=judge_noise)
        for name, got in coverage_hits(y, truth, design).items():
            hits[name] += got
    out = {}
    for name, got in hits.items():
        c = float(np.mean(got))
        out[name] = (c, float(np.sqrt(c * (1 - c) / len(got))), len(got))
    return out


def metric_coverage_by_spread(
    design: Design,
    *,
    replications: int,
    sd_max: float,
    judge_noise: float,
    seed: int,
    wide: float = 1.5,
) -> dict[str, tuple[float, float, int]]:
    """Coverage of the metric rates (both ages together) on the metrics whose between-base SD
    is at least ``wide``: with the published per-metric correlation (shrunk towards the
    run's), and with the run's one correlation for every metric."""
    rng = np.random.default_rng(seed)
    hits: dict[str, list[bool]] = {"per-metric correlation": [], "run's correlation": []}
    for _ in range(replications):
        y, truth, sd = simulate(rng, design, sd_max=sd_max, judge_noise=judge_noise, spread=True)
        cells = as_cells(y, design)
        true_rate = truth.mean(axis=1)  # metric, model
        run = SimpleNamespace(release_id=None, pk=None)
        for row in metric_rows(run, cells, inputs=summary_inputs(cells)):
            version, scope, target = row[7], row[8], row[2]
            if scope == "all" and sd[version] >= wide:
                truth_value = true_rate[version, target]
                hits["per-metric correlation"].append(bool(row[13] <= truth_value <= row[14]))
        deff = metric_design_effects(cells)["all"]
        passed = y.sum(axis=(1, 2))
        low, high = statistics.effective_wilson(passed, np.full(passed.shape, BASES * 2.0), deff)
        covered = (low <= true_rate) & (true_rate <= high)
        hits["run's correlation"] += covered[sd >= wide].ravel().tolist()
    out = {}
    for name, got in hits.items():
        c = float(np.mean(got))
        out[name] = (c, float(np.sqrt(c * (1 - c) / len(got))), len(got))
    return out


def separation(
    design: Design,
    *,
    replications: int,
    sd_max: float,
    judge_noise: float,
    seed: int,
    gap=(0.04, 0.09),
) -> dict[str, float | int]:
    """Power on pairs of models whose true overall rates differ by ``gap`` (per polarity): the
    share separated by the paired simultaneous interval (excludes zero) and by the two rates'
    own published intervals not overlapping."""
    rng = np.random.default_rng(seed)
    paired, overlap, count = 0, 0, 0
    run = SimpleNamespace(release_id=None, pk=None)
    for _ in range(replications):
        y, truth = simulate(rng, design, sd_max=sd_max, judge_noise=judge_noise)
        cells = as_cells(y, design)
        rows = pooled_rows(run, cells, inputs=summary_inputs(cells))
        own = {
            (row[2], row[3]): (row[13], row[14])
            for row in rows
            if row[4] == "overall" and row[8] == "all"
        }
        for p, polarity in enumerate(("positive", "negative")):
            chosen = np.flatnonzero(design.polarity == p)
            passed = y[chosen].sum(axis=2).reshape(-1, design.models)
            result = statistics.paired_rate_differences(
                passed, np.full(passed.shape, 2.0), np.repeat(chosen, BASES)
            )
            low, high = result.bounds()
            true_rates = truth[chosen].mean(axis=(0, 1))
            for k, (i, j) in enumerate(result.pairs):
                if not gap[0] <= abs(true_rates[i] - true_rates[j]) <= gap[1]:
                    continue
                count += 1
                paired += bool(low[k] > 0 or high[k] < 0)
                (li, hi), (lj, hj) = own[(i, polarity)], own[(j, polarity)]
                overlap += bool(hi < lj or hj < li)
    return {"pairs": count, "paired": paired / max(count, 1), "overlap": overlap / max(count, 1)}


def teen_adult_null(
    design: Design, *, replications: int, gap_sd_max: float, judge_noise: float, seed: int
) -> dict[str, float]:
    """No metric differs between teens and adults on average, but each base scenario has its
    own gap (logit SD per metric uniform up to ``gap_sd_max``, symmetric about 0): per-metric
    rejection at 5 % (all metrics, and those with gap SD above 1.5) and the share of releases
    with any Benjamini-Hochberg discovery (the FDR under the complete null), as the
    robustness service computes them."""
    rng = np.random.default_rng(seed)
    metrics, models = design.metrics, design.models
    any_discovery, rejected, spread = 0, [], []
    for _ in range(replications):
        mu = rng.normal(0.8, 1.2, metrics)[:, None, None, None]
        model = rng.normal(0.0, 0.4, models)[None, None, None, :]
        base = (rng.normal(0.0, 1.0, (metrics, BASES)) * rng.uniform(0, 2.0, metrics)[:, None])[
            :, :, None, None
        ]
        gap_sd = rng.uniform(0.0, gap_sd_max, metrics)
        gap = rng.normal(0.0, 1.0, (metrics, BASES)) * gap_sd[:, None]
        age = np.stack([gap / 2, -gap / 2], axis=2)[:, :, :, None]
        variant = rng.normal(0.0, 0.5, (metrics, BASES, 2))[:, :, :, None]
        p = judge_noise + (1 - 2 * judge_noise) * special.expit(mu + model + base + age + variant)
        cells = as_cells(rng.binomial(1, p), design)
        rows = teen_adult_differences(cells, {})
        order = [row["metric_version"] for row in rows]
        p_values = np.array([np.nan if r["p_value"] is None else r["p_value"] for r in rows])
        reject, _ = statistics.benjamini_hochberg(p_values, FDR)
        any_discovery += bool(reject.any())
        rejected.append(p_values < 0.05)
        spread.append(gap_sd[order])
    rejected, spread = np.concatenate(rejected), np.concatenate(spread)
    wide = rejected[spread > 1.5]
    return {
        "null rejection": float(rejected.mean()),
        "null rejection, gap SD > 1.5": float(wide.mean()),
        "n wide": int(wide.size),
        "any discovery": any_discovery / replications,
        "releases": replications,
    }
