"""Two runs of the same release side by side, per metric, to catch regressions.

Each metric's pass rate gets a 95 % cluster-bootstrap interval (results.statistics), clustered
by base scenario: the teen and adult variants (and replicates) of one base situation are not
independent tests, so resampling them one by one would make intervals too narrow. A change is
flagged as beyond the noise when the two intervals do not overlap — conservative (a difference
can be significant with slightly overlapping intervals), which suits a regression alarm.
"""

from collections import defaultdict
from dataclasses import dataclass

from core.exceptions import ApplicationError
from results.statistics import pass_rate_ci

from ..models import ConversationStatus, EvaluationRun

COMPARISON_RESAMPLES = 2_000


@dataclass(frozen=True)
class PassRate:
    rate: float
    low: float | None
    high: float | None
    n: int


@dataclass(frozen=True)
class MetricComparison:
    metric_key: str
    name: str
    polarity: str
    a: PassRate | None
    b: PassRate | None

    @property
    def change(self) -> float | None:
        return None if self.a is None or self.b is None else self.b.rate - self.a.rate

    @property
    def beyond_noise(self) -> bool:
        a, b = self.a, self.b
        if a is None or b is None or None in (a.low, a.high, b.low, b.high):
            return False
        return a.high < b.low or b.high < a.low


def _pass_rates(run: EvaluationRun, *, seed: int) -> dict[int, tuple[str, str, str, PassRate]]:
    rows = run.conversations.filter(
        status=ConversationStatus.COMPLETED, verdict_passed__isnull=False
    ).values_list(
        "scenario__metric_version__metric_id",
        "scenario__metric_version__metric__key",
        "scenario__metric_version__name",
        "scenario__metric_version__polarity",
        "scenario__metric_version_id",
        "scenario__base_index",
        "verdict_passed",
    )
    grouped: dict[int, dict] = defaultdict(lambda: {"passed": [], "clusters": []})
    for metric_id, key, name, polarity, version_id, base_index, passed in rows.iterator():
        group = grouped[metric_id]
        group["meta"] = (key, name, polarity)
        group["passed"].append(bool(passed))
        group["clusters"].append(f"{version_id}:{base_index}")
    rates = {}
    for metric_id, group in grouped.items():
        passed, clusters = group["passed"], group["clusters"]
        low = high = None
        if len(set(clusters)) >= 2:
            ci = pass_rate_ci(passed, clusters, n_resamples=COMPARISON_RESAMPLES, seed=seed)
            low, high = ci["ci_low"], ci["ci_high"]
        rate = PassRate(rate=sum(passed) / len(passed), low=low, high=high, n=len(passed))
        rates[metric_id] = (*group["meta"], rate)
    return rates


def runs_compare(*, run_a: EvaluationRun, run_b: EvaluationRun) -> list[MetricComparison]:
    """Per metric of either run: both pass rates with intervals, sorted by size of change."""
    if run_a.pk == run_b.pk:
        raise ApplicationError("Choose two different runs to compare.")
    if run_a.release_id is None or run_a.release_id != run_b.release_id:
        raise ApplicationError(
            "Only runs of the same release can be compared: their metrics and scenarios must "
            "be the same for a change in pass rate to mean a change in behaviour."
        )
    a = _pass_rates(run_a, seed=0)
    b = _pass_rates(run_b, seed=0)
    comparisons = []
    for metric_id in a.keys() | b.keys():
        key, name, polarity, _ = a.get(metric_id) or b[metric_id]
        comparisons.append(
            MetricComparison(
                metric_key=key,
                name=name,
                polarity=polarity,
                a=a[metric_id][3] if metric_id in a else None,
                b=b[metric_id][3] if metric_id in b else None,
            )
        )
    comparisons.sort(
        key=lambda c: (c.change is None, -abs(c.change or 0.0), c.metric_key),
    )
    return comparisons
