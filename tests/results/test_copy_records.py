"""The metric rows' COPY data built in NumPy stores exactly what the rows say, including the
rows of another layout: failed conversations, undefined bounds, a run without a release."""

import numpy as np
import pytest
from django.db import connection

from results.models import PassRateSummary, SummaryLevel
from results.services import copy_records
from results.services.rollup import Groups
from results.services.summaries import SUMMARY_COLUMNS, MetricPart, _level_rows
from results.services.summary_writes import _copy_data
from tests.results.test_cells import mixed_run  # noqa: F401 (a fixture)

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="binary COPY is PostgreSQL's"),
]


def stored(run) -> list[tuple]:
    return list(
        PassRateSummary.objects.filter(run=run).order_by("pk").values_list(*SUMMARY_COLUMNS)
    )


@pytest.mark.parametrize("release", [True, False])
def test_records_store_what_the_rows_say(mixed_run, release):  # noqa: F811
    run = mixed_run
    targets = sorted(t.pk for t in mixed_run.targets.all())
    versions = list(mixed_run.release.items.values_list("metric_version", flat=True))[:2]
    if not release:
        run.release = None
    size = 6
    groups = Groups(
        target=np.array([targets[0]] * 3 + [targets[1]] * 3, np.int64),
        polarity=np.array([0, 0, 1, 0, 1, 1], np.int64),
        key=np.array([versions[0], versions[1], versions[0]] * 2, np.int64),
        n=np.array([3, 4, 5, 6, 7, 8], np.int64),
        passed=np.array([0, 4, 2, 3, 7, 1], np.int64),
        n_clusters=np.array([3, 3, 3, 2, 2, 2], np.int64),
    )
    low = np.array([0.0, np.nan, 0.1, 0.2, 0.3, 0.01])
    high = np.array([0.5, 0.9, np.inf, 0.8, 1.0, 0.4])
    failures = {
        (SummaryLevel.METRIC, targets[1], "negative", versions[1], "teen"): {"timeout": 2},
        (SummaryLevel.METRIC, targets[0], "positive", versions[0], "teen"): {"error": 1, "a": 3},
        (SummaryLevel.METRIC, targets[0], "positive", versions[0], "adult"): {"error": 9},
        (SummaryLevel.SUBAREA, targets[0], "positive", versions[0], "teen"): {"error": 5},
    }
    parts = [MetricPart("teen", groups, low, high), MetricPart("adult", groups, low[::-1], high)]
    data = b"".join(copy_records.metric_records(run, parts, "Wilson (test)", failures))
    expected = []
    for part in parts:
        expected += _level_rows(
            run,
            SummaryLevel.METRIC,
            part.scope,
            part.groups,
            part.low,
            part.high,
            "Wilson (test)",
            failures,
        )
    assert len(expected) == 2 * size
    PassRateSummary.objects.filter(run=mixed_run).delete()
    _copy_data([data], SUMMARY_COLUMNS)
    assert stored(mixed_run) == expected
    # The rows of another layout really were among them.
    assert sum(row[SUMMARY_COLUMNS.index("n_failed")] for row in expected) == 2 + 4 + 9
    assert any(row[SUMMARY_COLUMNS.index("ci_low")] is None for row in expected)
    assert any(row[SUMMARY_COLUMNS.index("ci_high")] is None for row in expected)


def test_uniform_records_are_the_bytes_of_one_row_at_a_time(mixed_run):  # noqa: F811
    groups = Groups(
        target=np.array([1, 2], np.int64),
        polarity=np.array([0, 1], np.int64),
        key=np.array([5, 6], np.int64),
        n=np.array([3, 4], np.int64),
        passed=np.array([1, 2], np.int64),
        n_clusters=np.array([3, 3], np.int64),
    )
    part = MetricPart("all", groups, np.array([0.1, 0.2]), np.array([0.7, 0.8]))
    data = b"".join(copy_records.metric_records(mixed_run, [part], "m", {}))
    rows = _level_rows(mixed_run, SummaryLevel.METRIC, "all", groups, part.low, part.high, "m", {})
    kinds = copy_records.column_kinds()
    one_by_one = b"".join(copy_records._record(list(row), kinds) for row in rows)
    assert data == copy_records.HEADER + one_by_one + copy_records.TRAILER
