"""A release as data: the rows behind the JSON, JSONL and CSV downloads."""

import json
from collections.abc import Iterator
from typing import Any

from core.csvsafe import csv_dict_lines

from ..models import Release, ReleaseItem
from ..selectors import release_items

CSV_COLUMNS = (
    "key",
    "version",
    "name",
    "criterion",
    "polarity",
    "areas",
    "subareas",
    "label_category",
    "label_category_name",
    "rubric_notes",
    "failure_condition",
    "age_contexts",
    "validation_status",
    "source_kind",
    "benchmark",
    "benchmark_name",
    "benchmark_citation",
    "source_reference",
    "credit_name",
    "version_created_at",
    "change_note",
)


def release_export_metadata(release: Release) -> dict[str, Any]:
    return {
        "version": release.version,
        "title": release.title,
        "notes": release.notes,
        "status": release.status,
        "published_at": release.published_at.isoformat() if release.published_at else None,
        "metric_count": release.items.count(),
    }


def _metric_record(item: ReleaseItem) -> dict[str, Any]:
    version = item.metric_version
    metric = item.metric
    subareas = list(version.subareas.all())
    benchmark = metric.benchmark
    return {
        "key": metric.key,
        "version": version.number,
        "name": version.name,
        "criterion": version.criterion,
        "polarity": version.polarity,
        "areas": list(dict.fromkeys(subarea.area.slug for subarea in subareas)),
        "subareas": [subarea.slug for subarea in subareas],
        "label_category": {
            "slug": version.label_category.slug,
            "name": version.label_category.name,
            "polarity": version.label_category.polarity,
        },
        "rubric_notes": version.rubric_notes,
        "failure_condition": version.failure_condition,
        "age_contexts": version.age_contexts,
        "validation_status": metric.validation_status,
        "source": {
            "kind": metric.source_kind,
            "benchmark": (
                {
                    "slug": benchmark.slug,
                    "name": benchmark.name,
                    "citation": benchmark.citation,
                    "url": benchmark.url,
                    "license": benchmark.license,
                }
                if benchmark
                else None
            ),
            "reference": metric.source_reference,
            "credit_name": metric.credit_name,
        },
        "version_created_at": version.created_at.isoformat(),
        "change_note": version.change_note,
    }


def release_export_records(release: Release) -> Iterator[dict[str, Any]]:
    """One nested record per metric, in key order (the JSON and JSONL shape)."""
    for item in release_items(release).iterator(chunk_size=500):
        yield _metric_record(item)


def release_export_document(release: Release) -> dict[str, Any]:
    return {
        "release": release_export_metadata(release),
        "metrics": list(release_export_records(release)),
    }


def release_export_csv_rows(release: Release) -> Iterator[dict[str, str]]:
    """Flat rows for spreadsheets: lists joined with `;`, nested source fields spread out."""
    for record in release_export_records(release):
        benchmark = record["source"]["benchmark"] or {}
        yield {
            "key": record["key"],
            "version": str(record["version"]),
            "name": record["name"],
            "criterion": record["criterion"],
            "polarity": record["polarity"],
            "areas": ";".join(record["areas"]),
            "subareas": ";".join(record["subareas"]),
            "label_category": record["label_category"]["slug"],
            "label_category_name": record["label_category"]["name"],
            "rubric_notes": record["rubric_notes"],
            "failure_condition": record["failure_condition"],
            "age_contexts": record["age_contexts"],
            "validation_status": record["validation_status"],
            "source_kind": record["source"]["kind"],
            "benchmark": benchmark.get("slug", ""),
            "benchmark_name": benchmark.get("name", ""),
            "benchmark_citation": benchmark.get("citation", ""),
            "source_reference": record["source"]["reference"],
            "credit_name": record["source"]["credit_name"],
            "version_created_at": record["version_created_at"],
            "change_note": record["change_note"],
        }


def release_export_csv_lines(release: Release) -> Iterator[str]:
    """CSV text chunk by chunk, header first, for a streaming response."""
    chunk: list[str] = []
    size = 0
    for line in csv_dict_lines(CSV_COLUMNS, release_export_csv_rows(release)):
        chunk.append(line)
        size += len(line)
        if size > 16_384:
            yield "".join(chunk)
            chunk, size = [], 0
    yield "".join(chunk)


def release_export_jsonl_lines(release: Release) -> Iterator[str]:
    for record in release_export_records(release):
        yield json.dumps(record, ensure_ascii=False) + "\n"


def release_export_filename(release: Release, extension: str) -> str:
    return f"impactbench-{release.version}.{extension}"
