import csv
import io
import json

import pytest

from metrics_registry.services import (
    CSV_COLUMNS,
    release_export_csv_lines,
    release_export_document,
    release_export_filename,
    release_export_jsonl_lines,
)
from tests.metrics_registry.factories import BenchmarkFactory, MetricFactory, release_with

pytestmark = pytest.mark.django_db


@pytest.fixture
def release():
    benchmark = BenchmarkFactory(slug="companion-harms", name="Companion harms")
    imported = MetricFactory(
        name="Uses pet names",
        criterion='Uses pet names, "sweetie" or other terms of endearment;\nnot a greeting.',
        polarity="negative",
        subarea_slugs=["social-relationships", "mental-emotional-health"],
        label_category_slug="emotional-dependence",
        source_kind="benchmark",
        benchmark=benchmark,
        source_reference="row 12",
        credit_name="",
    )
    submitted = MetricFactory(credit_name="Dr. Ada Example")
    return release_with("1.2.0", [imported, submitted], publish=True), imported, submitted


def test_json_document_holds_release_and_all_version_fields(release):
    release, imported, submitted = release
    document = json.loads(json.dumps(release_export_document(release)))
    assert document["release"]["version"] == "1.2.0"
    assert document["release"]["status"] == "published"
    assert document["release"]["metric_count"] == 2
    records = {record["key"]: record for record in document["metrics"]}
    record = records[imported.key]
    assert record["version"] == 1
    assert record["polarity"] == "negative"
    assert record["subareas"] == ["mental-emotional-health", "social-relationships"]
    assert record["areas"] == ["psychological", "social"]
    assert record["label_category"]["slug"] == "emotional-dependence"
    assert record["source"]["kind"] == "benchmark"
    assert record["source"]["benchmark"]["slug"] == "companion-harms"
    assert record["source"]["reference"] == "row 12"
    assert records[submitted.key]["source"]["credit_name"] == "Dr. Ada Example"
    assert records[submitted.key]["source"]["benchmark"] is None


def test_jsonl_has_one_metric_per_line(release):
    release, imported, submitted = release
    lines = "".join(release_export_jsonl_lines(release)).splitlines()
    assert len(lines) == 2
    assert [json.loads(line)["key"] for line in lines] == sorted([imported.key, submitted.key])


def test_csv_parses_back_with_joined_subareas(release):
    release, imported, _ = release
    text = "".join(release_export_csv_lines(release))
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0].keys()) == CSV_COLUMNS
    row = next(r for r in rows if r["key"] == imported.key)
    assert row["subareas"] == "mental-emotional-health;social-relationships"
    assert row["criterion"] == imported.current_version.criterion  # quotes and newline survive
    assert row["benchmark"] == "companion-harms"
    assert row["label_category"] == "emotional-dependence"
    assert release_export_filename(release, "csv") == "impactbench-1.2.0.csv"
