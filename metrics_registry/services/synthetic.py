"""Synthetic registry rows for load tests and benchmarks, written in bulk; never real metrics.

The synthetic dataset generator (`demo/synthetic.py`) decides what to create; these services
write it as the registry stores real rows, marked wherever a reader meets them: keys starting
SYN-, the credit line, and the release's synthetic flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from ..models import (
    Benchmark,
    KeyCounter,
    LabelCategory,
    Metric,
    MetricVersion,
    Release,
    ReleaseItem,
    ReleaseStatus,
    SourceKind,
    Subarea,
    ValidationStatus,
)
from .changelog import release_changelog_store

BATCH = 5_000
SYNTHETIC_KEY_PREFIX = "SYN-"
SYNTHETIC_KEY_COUNTER = "synthetic_metric"
SYNTHETIC_CREDIT = "Synthetic data (not a real contribution)"


@dataclass(frozen=True, slots=True)
class SyntheticMetric:
    name: str
    criterion: str
    polarity: str
    label_category: LabelCategory
    subareas: Sequence[Subarea]
    benchmark: Benchmark | None = None  # None: an expert submission


@transaction.atomic
def metrics_bulk_create_synthetic(*, metrics: Sequence[SyntheticMetric]) -> list[MetricVersion]:
    """Validated metrics with one version each (their current one) and their subareas.

    Keys come from their own counter, so synthetic metrics never take a real metric's key.
    """
    counter, _ = KeyCounter.objects.get_or_create(name=SYNTHETIC_KEY_COUNTER)
    KeyCounter.objects.filter(pk=counter.pk).update(last_value=F("last_value") + len(metrics))
    first = KeyCounter.objects.get(pk=counter.pk).last_value - len(metrics) + 1
    rows = [
        Metric(
            key=f"{SYNTHETIC_KEY_PREFIX}{first + i:06d}",
            validation_status=ValidationStatus.VALIDATED,
            source_kind=SourceKind.EXPERT_SUBMISSION
            if metric.benchmark is None
            else SourceKind.BENCHMARK,
            benchmark=metric.benchmark,
            credit_name=SYNTHETIC_CREDIT,
        )
        for i, metric in enumerate(metrics)
    ]
    Metric.objects.bulk_create(rows, batch_size=BATCH)
    now = timezone.now()
    versions = [
        MetricVersion(
            metric=row,
            number=1,
            name=metric.name,
            criterion=metric.criterion,
            polarity=metric.polarity,
            label_category=metric.label_category,
            rubric_notes="Synthetic rubric notes.",
            failure_condition="Synthetic failure condition.",
            created_at=now,
        )
        for row, metric in zip(rows, metrics, strict=True)
    ]
    MetricVersion.objects.bulk_create(versions, batch_size=BATCH)
    for row, version in zip(rows, versions, strict=True):
        row.current_version = version
    Metric.objects.bulk_update(rows, ["current_version"], batch_size=BATCH)
    through = MetricVersion.subareas.through
    through.objects.bulk_create(
        [
            through(metricversion=version, subarea=subarea)
            for version, metric in zip(versions, metrics, strict=True)
            for subarea in metric.subareas
        ],
        batch_size=BATCH,
    )
    return versions


@transaction.atomic
def release_publish_synthetic(
    *, version: str, title: str, notes: str, versions: Sequence[MetricVersion]
) -> Release:
    """A published release flagged synthetic, containing `versions`, in one bulk insert."""
    release = Release.objects.create(version=version, title=title, notes=notes, synthetic=True)
    ReleaseItem.objects.bulk_create(
        [ReleaseItem(release=release, metric_id=v.metric_id, metric_version=v) for v in versions],
        batch_size=BATCH,
    )
    # Published last: the database refuses changes to a published release's contents.
    release.status = ReleaseStatus.PUBLISHED
    release.published_at = timezone.now()
    release.save(update_fields=["status", "published_at"])
    # As a real publication keeps it: the synthetic release's page reads it back.
    release_changelog_store(release)
    return release
