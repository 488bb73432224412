"""The key beside the Explore wheel: each area and subarea by name and number, with how many
of its metrics pass, sit in between or fail (as the wheel's tooltip reads on other sites)."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluations.models import EvaluationRun
from stats.estimates import Estimate

from .models import PassRateSummary, SummaryLevel

# A metric "passes" at a pass rate of 75 % or more (grade B and above), "fails" below 50 %;
# between the two it is neutral. Metrics without enough data are not counted.
PASSING_FROM = 0.75
FAILING_BELOW = 0.5


@dataclass
class MetricCounts:
    passing: int = 0
    neutral: int = 0
    failing: int = 0

    def add(self, rate: float) -> None:
        if rate >= PASSING_FROM:
            self.passing += 1
        elif rate < FAILING_BELOW:
            self.failing += 1
        else:
            self.neutral += 1


@dataclass
class KeyEntry:
    level: str
    number: str
    name: str
    estimate: Estimate | None
    href: str
    counts: MetricCounts = field(default_factory=MetricCounts)
    slug: str = ""
    # The selected subarea's metrics, numbered "n.m" as on the wheel's third ring.
    metrics: list[KeyEntry] = field(default_factory=list)
    # A metric's name shown in another language than the page's: its tag, for `lang`.
    lang: str = ""


def metric_counts(
    *, run: EvaluationRun, target_ids: list[int], age: str, polarity: str, language: str = ""
) -> dict[tuple[int, str, str], MetricCounts]:
    """(target id, "area" or "subarea", its slug) -> counts of its metrics by outcome. One query;
    a metric in two subareas of one area counts once for the area."""
    rows = (
        PassRateSummary.objects.filter(
            run=run,
            level=SummaryLevel.METRIC,
            age_context=age,
            language=language,
            polarity=polarity,
            target_id__in=target_ids,
            n_conversations__gt=0,
        )
        .values_list(
            "target_id",
            "metric_version_id",
            "metric_version__subareas__slug",
            "metric_version__subareas__area__slug",
            "rate",
        )
        .order_by()
    )
    counts: dict[tuple[int, str, str], MetricCounts] = {}
    seen: set[tuple[int, str, str, int]] = set()
    for target_id, version_id, subarea_id, area_id, rate in rows:
        if subarea_id is None or rate is None:
            continue
        for level, key in (("subarea", subarea_id), ("area", area_id)):
            if (target_id, level, key, version_id) in seen:
                continue
            seen.add((target_id, level, key, version_id))
            counts.setdefault((target_id, level, key), MetricCounts()).add(rate)
    return counts


def wheel_key(
    data, index: int, target_id: int, counts: dict[tuple[int, str, str], MetricCounts]
) -> list[KeyEntry]:
    """The key of the `index`-th wheel from the Explore table's rows (areas and subareas in
    wheel order), numbering subareas as the wheel does; the selected subarea lists its
    metrics."""
    rows = data.rows
    selected = data.subarea.slug if data.subarea else ""
    entries, n = [], 0
    for row in rows:
        number = ""
        if row.level == "subarea":
            n += 1
            number = str(n)
        entries.append(
            KeyEntry(
                row.level,
                number,
                row.label,
                row.estimates[index],
                row.href,
                counts.get((target_id, row.level, row.slug), MetricCounts()),
                row.slug,
            )
        )
        if row.level == "subarea" and row.slug == selected:
            entries[-1].metrics = [
                KeyEntry(
                    "metric",
                    f"{n}.{i + 1}",
                    m.label,
                    m.estimates[index],
                    m.href,
                    slug=m.slug,
                    lang=m.lang,
                )
                for i, m in enumerate(data.metric_rows)
            ]
    return entries
