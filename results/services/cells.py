"""The run's outcomes at the grain every analysis starts from, fetched with GROUP BY queries.

A *cell* is (target, metric version, base scenario, age context) with its number of judged
conversations and how many passed: one row per cluster-and-age, whatever the number of
replicates. Counting happens in the database; Python only sees cells and metadata.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.db import connections
from django.db.models import Case, CharField, Count, F, Q, Value, When
from numpy.typing import NDArray

from evaluations.models import Conversation, ConversationStatus, EvaluationRun
from metrics_registry.models import MetricVersion

AGES = ("teen", "adult")


def numeric_rows(queryset) -> list[tuple]:
    """Rows of a ``values_list`` of ids and counts, fetched without the ORM's per-row
    converters (integers need none; tens of thousands of rows go straight to NumPy)."""
    sql, params = queryset.query.sql_with_params()
    with connections[queryset.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def judged_conversations(run: EvaluationRun):
    return Conversation.objects.filter(
        run=run, status=ConversationStatus.COMPLETED, verdict_passed__isnull=False
    )


def failed_conversations(run: EvaluationRun):
    """Conversations of the run without a verdict, annotated with why (``failure``).

    Anything that is not completed with a verdict counts: a target error or timeout, a
    conversation the judge could not judge, or any other state (its status is the reason), so a
    model is never scored only on the conversations it survived without that being said.
    """
    failed = ConversationStatus.FAILED
    timeout = Q(error__icontains="timeout") | Q(error__icontains="timed out")
    return (
        Conversation.objects.filter(run=run)
        .exclude(status=ConversationStatus.COMPLETED, verdict_passed__isnull=False)
        .annotate(
            failure=Case(
                When(status=ConversationStatus.COMPLETED, then=Value("not judged")),
                When(Q(status=failed) & timeout, then=Value("timeout")),
                When(status=failed, then=Value("error")),
                When(status="not_judged", then=Value("not judged")),
                default=F("status"),
                output_field=CharField(),
            )
        )
    )


@dataclass
class RunCells:
    target: NDArray[np.int64]
    version: NDArray[np.int64]
    base: NDArray[np.int64]
    age: NDArray[np.int64]  # index into AGES
    n: NDArray[np.float64]
    passed: NDArray[np.float64]
    # Metadata of the metric versions in the run.
    polarity: dict[int, str] = field(default_factory=dict)
    source: dict[int, str] = field(default_factory=dict)  # benchmark slug or "expert submissions"
    source_weight: dict[int, float] = field(default_factory=dict)  # the source's own, if given
    subareas: dict[int, list[int]] = field(default_factory=dict)
    areas: dict[int, list[int]] = field(default_factory=dict)
    # Conversations without a verdict: (target, version, base, age, reason, count) rows.
    failed: list[tuple[int, int, int, str, str, int]] = field(default_factory=list)

    @property
    def size(self) -> int:
        return int(self.n.size)


def run_cells(run: EvaluationRun) -> RunCells:
    """Four queries: the cell GROUP BY, the failed conversations' GROUP BY, the metric versions,
    their subareas."""
    rows = numeric_rows(
        judged_conversations(run)
        .values_list("target_id", "scenario__metric_version_id", "scenario__base_index")
        .annotate(
            teen_n=Count("id", filter=Q(scenario__age_context="teen")),
            teen_passed=Count("id", filter=Q(scenario__age_context="teen", verdict_passed=True)),
            adult_n=Count("id", filter=Q(scenario__age_context="adult")),
            adult_passed=Count("id", filter=Q(scenario__age_context="adult", verdict_passed=True)),
        )
        .order_by()
    )
    arr = np.array(rows, dtype=np.int64).reshape(-1, 7)
    # One row per (target, version, base) with both ages side by side -> two cells.
    target = np.concatenate([arr[:, 0], arr[:, 0]])
    version = np.concatenate([arr[:, 1], arr[:, 1]])
    base = np.concatenate([arr[:, 2], arr[:, 2]])
    age = np.concatenate([np.zeros(len(arr), np.int64), np.ones(len(arr), np.int64)])
    n = np.concatenate([arr[:, 3], arr[:, 5]]).astype(np.float64)
    passed = np.concatenate([arr[:, 4], arr[:, 6]]).astype(np.float64)
    keep = n > 0
    cells = RunCells(target[keep], version[keep], base[keep], age[keep], n[keep], passed[keep])

    cells.failed = list(
        failed_conversations(run)
        .values_list(
            "target_id",
            "scenario__metric_version_id",
            "scenario__base_index",
            "scenario__age_context",
            "failure",
        )
        .annotate(count=Count("id"))
        .order_by()
    )
    version_ids = sorted(set(cells.version.tolist()) | {row[1] for row in cells.failed})
    for pk, polarity, slug, weight in MetricVersion.objects.filter(pk__in=version_ids).values_list(
        "pk", "polarity", "metric__benchmark__slug", "metric__source_weight"
    ):
        cells.polarity[pk] = polarity
        cells.source[pk] = slug or "expert submissions"
        if weight is not None:
            cells.source_weight[pk] = float(weight)
    through = MetricVersion.subareas.through.objects.filter(metricversion_id__in=version_ids)
    for pk, subarea_id, area_id in through.values_list(
        "metricversion_id", "subarea_id", "subarea__area_id"
    ).order_by("metricversion_id", "subarea_id"):
        cells.subareas.setdefault(pk, []).append(subarea_id)
        if area_id not in cells.areas.setdefault(pk, []):
            cells.areas[pk].append(area_id)
    return cells
