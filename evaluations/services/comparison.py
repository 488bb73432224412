"""Two runs of the same release side by side: the same model configuration, metric by metric.

Only a model configuration evaluated in both runs is compared, and only with itself: pooling
different targets of two runs would report swapping models as a change in behaviour. Each pass
rate is an `Estimate` with the per-metric interval the published pages use (Wilson on the
effective sample size: a metric has three base scenarios, too few for a bootstrap to cover; the
design effect comes from all metric x model groups of the run) and counts the failed
conversations it leaves out.

The change is estimated *paired*: both runs met the same base scenarios, so it is the mean over
the base scenarios both judged of run B's pass rate minus run A's, with the variance model of
the teen-versus-adult differences (each scenario's binomial sampling variance plus a
between-scenario variance whose distribution is estimated from every metric,
``stats.age_gap.age_gap_test``).
Two intervals that overlap are no evidence that nothing changed. A change is flagged as beyond
the noise when it is a discovery at a 5 % false discovery rate (Benjamini-Hochberg over every
metric and model compared), so a long table does not raise alarms by chance alone.
"""

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from django.db.models import Count, Q
from django.utils.translation import gettext as _

import stats as statistics
from core.exceptions import ApplicationError
from stats.age_gap import age_gap_test
from stats.estimates import Estimate, Exclusion

from ..models import ConversationStatus, EvaluationRun


@dataclass(frozen=True)
class MetricComparison:
    model: str
    metric_key: str
    name: str
    polarity: str
    a: Estimate
    b: Estimate
    # B minus A, paired by base scenario, and whether it is a discovery at FDR_LEVEL.
    change_estimate: Estimate = field(
        default_factory=lambda: Estimate.insufficient(unit="difference")
    )
    beyond_noise: bool = False

    @property
    def change(self) -> float | None:
        if not (self.a.defined and self.b.defined):
            return None
        return self.b.value - self.a.value  # type: ignore[operator]


FDR_LEVEL = 0.05
PAIRED_CHANGE_METHOD = (
    "paired change over the base scenarios both runs judged; binomial variance plus a "
    "between-base variance whose distribution is estimated from every metric and model "
    "compared (empirical Bayes); interval within [-1, 1]"
)
Counts = dict[tuple[int, int], dict[int, tuple[int, int]]]


def _pass_rates(run: EvaluationRun) -> tuple[dict[tuple[int, int], tuple[tuple, Estimate]], Counts]:
    """(target, metric) -> ((model, key, name, polarity), pass rate estimate), and
    (target, metric) -> {base: (passed, judged)}."""
    judged = Q(status=ConversationStatus.COMPLETED, verdict_passed__isnull=False)
    # Only the release's own metric versions: a run made before runs were held to their
    # release may hold others, and they are not part of what the release compares.
    conversations = run.conversations.filter(
        scenario__metric_version__release_items__release_id=run.release_id
    )
    rows = list(
        conversations.values_list(
            "target_id",
            "target__name",
            "scenario__metric_version__metric_id",
            "scenario__metric_version__metric__key",
            "scenario__metric_version__name",
            "scenario__metric_version__polarity",
            "scenario__base_index",
        )
        .annotate(
            n=Count("id", filter=judged),
            passed=Count("id", filter=judged & Q(verdict_passed=True)),
            total=Count("id"),
        )
        .order_by()
    )
    if not rows:
        return {}, {}
    groups = np.array([r[0] * 1_000_003 + r[2] for r in rows], dtype=np.int64)
    n = np.array([r[-3] for r in rows], dtype=np.float64)
    passed = np.array([r[-2] for r in rows], dtype=np.float64)
    has = n > 0
    rho = statistics.intra_cluster_correlation(groups[has], passed[has], n[has])
    deff = statistics.design_effect(rho, float(n[has].mean()) if has.any() else 1.0)
    grouped: dict[tuple[int, int], dict] = defaultdict(
        lambda: {"n": 0, "passed": 0, "failed": 0, "clusters": 0}
    )
    per_base: Counts = defaultdict(dict)
    for target, model, metric, key, name, polarity, base, m, y, total in rows:
        if m:
            old = per_base[(target, metric)].get(base, (0, 0))
            per_base[(target, metric)][base] = (old[0] + y, old[1] + m)
        group = grouped[(target, metric)]
        group["meta"] = (model, key, name, polarity)
        group["n"] += m
        group["passed"] += y
        group["failed"] += total - m
        group["clusters"] += 1 if m else 0
    out = {}
    for pair, g in grouped.items():
        excluded = (Exclusion("failed", g["failed"]),) if g["failed"] else ()
        if g["n"] == 0:
            estimate = Estimate.insufficient(n=0, excluded=excluded)
        else:
            low, high = statistics.effective_wilson(g["passed"], g["n"], deff)
            estimate = Estimate(
                g["passed"] / g["n"],
                float(low),
                float(high),
                method=statistics.WILSON_EFFECTIVE,
                n=g["n"],
                n_clusters=g["clusters"],
                excluded=excluded,
            )
        out[pair] = (g["meta"], estimate)
    return out, per_base


def _paired_changes(
    pairs: list[tuple[int, int]], a: Counts, b: Counts
) -> tuple[list[Estimate], list[bool]]:
    """B minus A per (target, metric), over the base scenarios both runs judged, and which
    changes are discoveries at FDR_LEVEL."""
    if not pairs:
        return [], []
    bases = sorted({base for pair in pairs for base in (a[pair].keys() | b[pair].keys())})
    at = {base: i for i, base in enumerate(bases)}
    shape = (len(pairs), len(bases))
    ya, na, yb, nb = (np.zeros(shape) for _ in range(4))
    for i, pair in enumerate(pairs):
        for base in a[pair].keys() & b[pair].keys():
            ya[i, at[base]], na[i, at[base]] = a[pair][base]
            yb[i, at[base]], nb[i, at[base]] = b[pair][base]
    # Run B in the first condition, run A in the second: one model, so one "model" column.
    passed = np.stack([yb, ya], axis=2)[..., None]
    judged = np.stack([nb, na], axis=2)[..., None]
    test = age_gap_test(passed, judged, method=PAIRED_CHANGE_METHOD)
    estimates, p_values = test.estimates(), test.p_value
    discoveries, _ = statistics.benjamini_hochberg(p_values, FDR_LEVEL)
    return estimates, discoveries.tolist()


def runs_compare(*, run_a: EvaluationRun, run_b: EvaluationRun) -> list[MetricComparison]:
    """Per model configuration in both runs and metric: both pass rates, by size of change."""
    if run_a.pk == run_b.pk:
        raise ApplicationError(_("Choose two different runs to compare."))
    if run_a.release_id is None or run_a.release_id != run_b.release_id:
        raise ApplicationError(
            _(
                "Only runs of the same release can be compared: their metrics and scenarios must "
                "be the same for a change in pass rate to mean a change in behaviour."
            )
        )
    (a, a_bases), (b, b_bases) = _pass_rates(run_a), _pass_rates(run_b)
    shared_targets = {t for t, _ in a} & {t for t, _ in b}
    if not shared_targets:
        raise ApplicationError(
            _(
                "These runs have no model configuration in common. A comparison sets one model "
                "against itself across two runs; different models are compared on the results "
                "pages, not here."
            )
        )
    missing = Estimate.insufficient(reason="not in this run")
    both = sorted(pair for pair in a_bases.keys() & b_bases.keys() if pair[0] in shared_targets)
    changes, flags = _paired_changes(both, a_bases, b_bases)
    paired = dict(zip(both, zip(changes, flags, strict=True), strict=True))
    comparisons = []
    for pair in sorted(a.keys() | b.keys()):
        if pair[0] not in shared_targets:
            continue
        meta = (a.get(pair) or b[pair])[0]
        change, flag = paired.get(pair, (Estimate.insufficient(unit="difference"), False))
        comparisons.append(
            MetricComparison(
                *meta,
                a=a[pair][1] if pair in a else missing,
                b=b[pair][1] if pair in b else missing,
                change_estimate=change,
                beyond_noise=flag,
            )
        )
    comparisons.sort(key=lambda c: (c.change is None, -abs(c.change or 0.0), c.model, c.metric_key))
    return comparisons
