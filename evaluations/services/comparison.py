"""Two runs of the same release side by side: the same model configuration, metric by metric.

Only a model configuration evaluated in both runs is compared, and only with itself: pooling
different targets of two runs would report swapping models as a change in behaviour. Each pass
rate is an `Estimate` with the per-metric interval the published pages use (Wilson on the
effective sample size: a metric has three base scenarios, too few for a bootstrap to cover; the
design effect comes from all metric x model groups of the run) and counts the failed
conversations it leaves out. A change is flagged as beyond the noise when the two intervals do
not overlap -- conservative, which suits a regression alarm.
"""

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Q

import stats as statistics
from core.exceptions import ApplicationError
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

    @property
    def change(self) -> float | None:
        if not (self.a.defined and self.b.defined):
            return None
        return self.b.value - self.a.value  # type: ignore[operator]

    @property
    def change_estimate(self) -> Estimate:
        """The change, for display; its interval is not drawn (the flag uses the two intervals)."""
        if self.change is None:
            return Estimate.insufficient(unit="difference")
        return Estimate(self.change, unit="difference", n=self.a.n + self.b.n, method="B minus A")

    @property
    def beyond_noise(self) -> bool:
        a, b = self.a, self.b
        if not (a.has_interval and b.has_interval):
            return False
        return a.high < b.low or b.high < a.low  # type: ignore[operator]


def _pass_rates(run: EvaluationRun) -> dict[tuple[int, int], tuple[tuple, Estimate]]:
    """(target, metric) -> ((model, key, name, polarity), pass rate estimate)."""
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
        return {}
    groups = np.array([r[0] * 1_000_003 + r[2] for r in rows], dtype=np.int64)
    n = np.array([r[-3] for r in rows], dtype=np.float64)
    passed = np.array([r[-2] for r in rows], dtype=np.float64)
    has = n > 0
    rho = statistics.intra_cluster_correlation(groups[has], passed[has], n[has])
    deff = statistics.design_effect(rho, float(n[has].mean()) if has.any() else 1.0)
    grouped: dict[tuple[int, int], dict] = defaultdict(
        lambda: {"n": 0, "passed": 0, "failed": 0, "clusters": 0}
    )
    for target, model, metric, key, name, polarity, _base, m, y, total in rows:
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
    return out


def runs_compare(*, run_a: EvaluationRun, run_b: EvaluationRun) -> list[MetricComparison]:
    """Per model configuration in both runs and metric: both pass rates, by size of change."""
    if run_a.pk == run_b.pk:
        raise ApplicationError("Choose two different runs to compare.")
    if run_a.release_id is None or run_a.release_id != run_b.release_id:
        raise ApplicationError(
            "Only runs of the same release can be compared: their metrics and scenarios must "
            "be the same for a change in pass rate to mean a change in behaviour."
        )
    a, b = _pass_rates(run_a), _pass_rates(run_b)
    shared_targets = {t for t, _ in a} & {t for t, _ in b}
    if not shared_targets:
        raise ApplicationError(
            "These runs have no model configuration in common. A comparison sets one model "
            "against itself across two runs; different models are compared on the results "
            "pages, not here."
        )
    missing = Estimate.insufficient(reason="not in this run")
    comparisons = []
    for pair in sorted(a.keys() | b.keys()):
        if pair[0] not in shared_targets:
            continue
        meta = (a.get(pair) or b[pair])[0]
        comparisons.append(
            MetricComparison(
                *meta,
                a=a[pair][1] if pair in a else missing,
                b=b[pair][1] if pair in b else missing,
            )
        )
    comparisons.sort(key=lambda c: (c.change is None, -abs(c.change or 0.0), c.model, c.metric_key))
    return comparisons
