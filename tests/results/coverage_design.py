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
``benchmarks/coverage.py`` (many, printing the figures with their Monte Carlo error; the
teen-adult test's also in ``benchmarks/teen_adult.py``).
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
from results.services.summaries import (
    metric_design_effects,
    metric_rows,
    pooled_rows,
    summary_inputs,
)
from results.services.teen_adult import (
    FDR,
    teen_adult_differences,
    teen_adult_subareas,
    teen_adult_test,
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


def _teen_adult_release(
    rng: np.random.Generator,
    design: Design,
    *,
    gap_sd_max: float,
    judge_noise: float,
    gap: float = 0.0,
    share: float = 0.0,
    targets: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Outcomes ``y[metric, base, age, model]``, each metric's true teen-minus-adult gap and
    its between-base gap SD.

    Each base scenario has its own gap (logit SD per metric uniform up to ``gap_sd_max``,
    symmetric about 0) and each variant its own effect; a random ``share`` of the metrics has
    a true gap of ``gap`` (sign at random) on the rate scale -- averaged over the models and
    the population of base scenarios, after the judge's noise, as the published difference
    estimates it -- set by a logit shift solved per metric. ``targets`` gives each metric's
    signed true gap instead (0: none).
    """
    metrics, models = design.metrics, design.models
    mu = rng.normal(0.8, 1.2, metrics)
    model = rng.normal(0.0, 0.4, models)
    base_sd = rng.uniform(0, 2.0, metrics)
    base = rng.normal(0.0, 1.0, (metrics, BASES)) * base_sd[:, None]
    gap_sd = rng.uniform(0.0, gap_sd_max, metrics)
    per_base = rng.normal(0.0, 1.0, (metrics, BASES)) * gap_sd[:, None]
    variant = rng.normal(0.0, 0.5, (metrics, BASES, 2))
    with_gap = rng.random(metrics) < share
    target = np.where(with_gap, gap * rng.choice([-1.0, 1.0], metrics), 0.0)
    if targets is not None:
        target = np.asarray(targets, dtype=np.float64)
        with_gap = target != 0
    # The population of one age's variants: base, half the base's gap, the variant effect.
    spread = np.sqrt(base_sd**2 + gap_sd**2 / 4 + 0.25)
    linear = mu[:, None] + model[None, :]

    def true_gap(shift: np.ndarray) -> np.ndarray:
        rates = [
            (
                special.expit(
                    linear[..., None]
                    + sign * shift[:, None, None] / 2
                    + spread[:, None, None] * GH_X
                )
                * GH_W
            )
            .sum(axis=-1)
            .mean(axis=1)
            for sign in (1.0, -1.0)
        ]
        return (1 - 2 * judge_noise) * (rates[0] - rates[1])

    low, high = np.full(metrics, -40.0), np.full(metrics, 40.0)
    for _ in range(60):
        mid = (low + high) / 2
        above = true_gap(mid) > target
        low, high = np.where(above, low, mid), np.where(above, mid, high)
    shift = np.where(with_gap, (low + high) / 2, 0.0)
    age = np.stack([per_base + shift[:, None], -per_base - shift[:, None]], axis=2) / 2
    eta = (mu[:, None, None] + base[:, :, None] + age + variant)[..., None] + model
    p = judge_noise + (1 - 2 * judge_noise) * special.expit(eta)
    return rng.binomial(1, p), np.where(with_gap, true_gap(shift), 0.0), gap_sd


def _teen_adult_p_values(y: np.ndarray, design: Design) -> np.ndarray:
    """The published p-values per metric (in metric order), as the robustness service
    computes them."""
    rows = teen_adult_differences(as_cells(y, design), {})
    p = np.full(design.metrics, np.nan)
    for row in rows:
        p[row["metric_version"]] = np.nan if row["p_value"] is None else row["p_value"]
    return p


def teen_adult_null(
    design: Design, *, replications: int, gap_sd_max: float, judge_noise: float, seed: int
) -> dict[str, float]:
    """No metric differs between teens and adults on average, but each base scenario has its
    own gap: per-metric rejection at 5 % (all metrics, and those with gap SD above 1.5) and
    the share of releases with any Benjamini-Hochberg discovery (the FDR under the complete
    null), as the robustness service computes them."""
    rng = np.random.default_rng(seed)
    any_discovery, rejected, spread = 0, [], []
    for _ in range(replications):
        y, _, gap_sd = _teen_adult_release(
            rng, design, gap_sd_max=gap_sd_max, judge_noise=judge_noise
        )
        p_values = _teen_adult_p_values(y, design)
        reject, _ = statistics.benjamini_hochberg(p_values, FDR)
        any_discovery += bool(reject.any())
        rejected.append(p_values < 0.05)
        spread.append(gap_sd)
    rejected, spread = np.concatenate(rejected), np.concatenate(spread)
    wide = rejected[spread > 1.5]
    return {
        "null rejection": float(rejected.mean()),
        "null rejection, gap SD > 1.5": float(wide.mean()),
        "n wide": int(wide.size),
        "n metrics": int(rejected.size),
        "any discovery": any_discovery / replications,
        "releases": replications,
    }


def teen_adult_power(
    design: Design,
    *,
    replications: int,
    gap: float,
    share: float,
    gap_sd_max: float,
    judge_noise: float,
    seed: int,
) -> dict[str, float]:
    """A ``share`` of the metrics has a true teen-adult gap of ``gap``: the share of them
    whose test rejects at 5 %, the share Benjamini-Hochberg counts as discoveries, the false
    discovery proportion among the discoveries (averaged over releases, 0 without any), and
    the power the service publishes for a ``gap`` at that release (mean over releases)."""
    rng = np.random.default_rng(seed)
    hits, found, false_share, published, smallest, bound = [], [], [], [], [], []
    covered = []
    for _ in range(replications):
        y, truth, _ = _teen_adult_release(
            rng, design, gap_sd_max=gap_sd_max, judge_noise=judge_noise, gap=gap, share=share
        )
        cells = as_cells(y, design)
        _, test = teen_adult_test(cells)
        reject, _ = statistics.benjamini_hochberg(test.p_value, FDR)
        real = truth != 0
        hits.append(test.p_value[real] < 0.05)
        covered.append((test.low <= truth)[real] & (truth <= test.high)[real])
        found.append(reject[real])
        false_share.append(float((reject & ~real).sum() / max(reject.sum(), 1)))
        published.append(test.mean_power(gap))
        smallest.append(test.minimum_detectable_gap(0.8) or np.nan)
        # The binomial noise alone, known exactly (no between-base variation): what any test
        # on these outcomes could at best reach.
        z, se = special.ndtri(0.975), test.se[:, 0]
        bound.append(float(np.mean(special.ndtr(gap / se - z) + special.ndtr(-gap / se - z))))
    hits, found = np.concatenate(hits), np.concatenate(found)
    return {
        "power": float(hits.mean()),
        "n with gap": int(hits.size),
        "BH share found": float(found.mean()),
        "false discovery proportion": float(np.mean(false_share)),
        "published power": float(np.mean(published)),
        "coverage with gap": float(np.concatenate(covered).mean()),
        "published minimum gap": float(np.nanmean(smallest)),
        "binomial-only bound": float(np.mean(bound)),
        "releases": replications,
    }


def teen_adult_subarea_power(
    design: Design,
    *,
    replications: int,
    gap: float,
    share: float,
    gap_sd_max: float,
    judge_noise: float,
    seed: int,
) -> dict[str, float]:
    """The subarea test (``teen_adult_subareas``). ``gap`` 0: no metric differs; the share of
    subareas rejected at 5 % and of releases with any Benjamini-Hochberg discovery. Otherwise a
    random ``share`` of the subareas has a true gap of ``gap`` in every one of its metrics
    (one sign per subarea; a metric in two such subareas takes the first's): the share of
    them rejected and counted, the false discovery proportion, the interval's coverage of the
    subarea's true gap (the mean of its metrics' ones) and the power the service publishes."""
    rng = np.random.default_rng(seed)
    groups = len(SUBAREAS)
    rejected, found, false_share, covered, published, smallest = [], [], [], [], [], []
    any_found = 0
    for _ in range(replications):
        chosen = rng.random(groups) < share if gap else np.zeros(groups, bool)
        sign = rng.choice([-1.0, 1.0], groups)
        targets = np.zeros(design.metrics)
        for m, subs in enumerate(design.subareas):
            hit = [s for s in subs if chosen[s]]
            if hit:
                targets[m] = gap * sign[hit[0]]
        y, truth, _ = _teen_adult_release(
            rng, design, gap_sd_max=gap_sd_max, judge_noise=judge_noise, targets=targets
        )
        summary = teen_adult_subareas(as_cells(y, design))
        rows = [row for row in summary["rows"] if row["p_value"] is not None]
        real = np.array([bool(chosen[row["subarea"]]) for row in rows])
        p = np.array([row["p_value"] for row in rows])
        reject = np.array([row["fdr_discovery"] for row in rows])
        members = [
            [m for m, subs in enumerate(design.subareas) if row["subarea"] in subs] for row in rows
        ]
        true_gap = np.array([truth[m].mean() for m in members])
        low = np.array([row["difference"]["low"] for row in rows])
        high = np.array([row["difference"]["high"] for row in rows])
        any_found += bool(reject.any())
        rejected.append(p[real] < 0.05 if gap else p < 0.05)
        found.append(reject[real] if gap else reject)
        false_share.append(float((reject & ~real).sum() / max(reject.sum(), 1)))
        inside = (low <= true_gap) & (true_gap <= high)
        covered.append(inside[real] if gap else inside)
        if summary["power"] and summary["power"]["power"] is not None:
            published.append(summary["power"]["power"])
            smallest.append(summary["power"]["minimum_gap"] or np.nan)
    rejected_all = np.concatenate(rejected)
    return {
        "rejection": float(rejected_all.mean()) if rejected_all.size else float("nan"),
        "n": int(rejected_all.size),
        "BH share found": float(np.concatenate(found).mean()),
        "any discovery": any_found / replications,
        "false discovery proportion": float(np.mean(false_share)),
        "coverage": float(np.concatenate(covered).mean()),
        "published power": float(np.mean(published)) if published else float("nan"),
        "published minimum gap": float(np.nanmean(smallest)) if smallest else float("nan"),
        "releases": replications,
    }


def teen_adult_report(
    *,
    demo_replications: int = 400,
    full_replications: int = 100,
    gap_sd_max: float = 2.0,
    judge_noise: float = 0.05,
    share: float = 0.3,
    seed: int = 2026,
) -> list[str]:
    """Lines of text: the teen-adult test at the demo's and the full design, null and power,
    each with its Monte Carlo standard error."""

    def error(rate: float, count: int) -> float:
        return float(np.sqrt(max(rate * (1 - rate), 1e-12) / max(count, 1)) * 100)

    lines = [
        f"teen - adult per metric; between-base gap SD up to {gap_sd_max:g} (logit), judge "
        f"noise {judge_noise:g}; power: a true gap in {share:.0%} of the metrics"
    ]
    designs = [
        (demo_design(), demo_replications),
        (full_design(np.random.default_rng(809)), full_replications),
    ]
    for design, replications in designs:
        null = teen_adult_null(
            design,
            replications=replications,
            gap_sd_max=gap_sd_max,
            judge_noise=judge_noise,
            seed=seed,
        )
        rate, anyone = null["null rejection"], null["any discovery"]
        lines.append(
            f"  {design.name}, {design.models} models, {replications} releases under the null:"
            f" rejection per metric {rate * 100:.2f} % ± {error(rate, null['n metrics']):.2f}"
            f" (gap SD > 1.5: {null['null rejection, gap SD > 1.5'] * 100:.1f} %); any BH "
            f"discovery {anyone * 100:.1f} % (± {error(0.05, replications):.1f} at 5 %)"
        )
        for gap in (0.10, 0.15):
            power = teen_adult_power(
                design,
                replications=max(2, replications // 2),
                gap=gap,
                share=share,
                gap_sd_max=gap_sd_max,
                judge_noise=judge_noise,
                seed=seed + 1,
            )
            hit, count = power["power"], power["n with gap"]
            lines.append(
                f"    gap {gap * 100:.0f} points: power per metric {hit * 100:.1f} % ± "
                f"{error(hit, count):.1f} (published {power['published power'] * 100:.1f} %;"
                f" binomial noise alone, known: {power['binomial-only bound'] * 100:.1f} %), BH"
                f" finds {power['BH share found'] * 100:.1f} % of them, false discovery "
                f"proportion {power['false discovery proportion'] * 100:.1f} %"
            )
            lines.append(
                f"    coverage of the true gap by the 95 % interval: "
                f"{power['coverage with gap'] * 100:.1f} %"
            )
        lines.append(
            f"    published minimum gap found with 80 % power: "
            f"{power['published minimum gap'] * 100:.1f} points"
        )
        lines += _subarea_lines(design, replications, gap_sd_max, judge_noise, share, seed, error)
    return lines


def _subarea_lines(design, replications, gap_sd_max, judge_noise, share, seed, error) -> list[str]:
    """The subarea test's lines of ``teen_adult_report``: null and power, as per metric."""
    options = {"gap_sd_max": gap_sd_max, "judge_noise": judge_noise, "share": share}
    null = teen_adult_subarea_power(
        design, replications=replications, gap=0.0, seed=seed, **options
    )
    lines = [
        f"    per subarea (base scenarios of its metrics pooled), under the null: rejection "
        f"{null['rejection'] * 100:.1f} % ± {error(null['rejection'], null['n']):.1f} "
        f"({null['n']} subareas); any BH discovery {null['any discovery'] * 100:.1f} %; "
        f"coverage {null['coverage'] * 100:.1f} %"
    ]
    for gap in (0.10, 0.15):
        power = teen_adult_subarea_power(
            design, replications=max(2, replications // 2), gap=gap, seed=seed + 1, **options
        )
        lines.append(
            f"      gap {gap * 100:.0f} points in every metric of {share:.0%} of the subareas: "
            f"power {power['rejection'] * 100:.1f} % ± {error(power['rejection'], power['n']):.1f}"
            f" ({power['n']} subareas; published {power['published power'] * 100:.1f} %), BH "
            f"finds {power['BH share found'] * 100:.1f} %, false discovery proportion "
            f"{power['false discovery proportion'] * 100:.1f} %, coverage of the true gap "
            f"{power['coverage'] * 100:.1f} %, published minimum gap "
            f"{power['published minimum gap'] * 100:.1f} points"
        )
    return lines
