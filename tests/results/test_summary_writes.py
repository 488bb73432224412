"""Replacing a run's summary rows: what is stored equals what the rows say, in their order
(overall, area, subarea, then metric rows), and a refresh that fails half-way leaves the
previous rows."""

import pytest

import stats
from results.models import PassRateSummary, SummaryLevel
from results.services import summaries_refresh
from results.services.cells import run_cells
from results.services.summaries import SUMMARY_COLUMNS, summary_rows
from tests.results.test_cells import mixed_run  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

LEVEL_ORDER = [SummaryLevel.OVERALL, SummaryLevel.AREA, SummaryLevel.SUBAREA, SummaryLevel.METRIC]


def stored(run) -> list[tuple]:
    return list(
        PassRateSummary.objects.filter(run=run).order_by("pk").values_list(*SUMMARY_COLUMNS)
    )


def test_stored_rows_are_the_computed_rows_in_their_order(mixed_run):  # noqa: F811
    count = summaries_refresh(run=mixed_run, n_resamples=50, seed=2)
    expected = summary_rows(mixed_run, run_cells(mixed_run), n_resamples=50, seed=2)
    assert count == len(expected) == PassRateSummary.objects.filter(run=mixed_run).count()
    # Readers walk the primary key level by level: overall, area, subarea, metric.
    assert stored(mixed_run) == expected
    levels = [LEVEL_ORDER.index(row[4]) for row in stored(mixed_run)]
    assert levels == sorted(levels)
    assert len(set(levels)) == 4
    # A second refresh replaces the rows rather than adding to them.
    assert summaries_refresh(run=mixed_run, n_resamples=50, seed=2) == count
    assert stored(mixed_run) == expected


def test_a_refresh_failing_half_way_keeps_the_previous_rows(mixed_run, monkeypatch):  # noqa: F811
    summaries_refresh(run=mixed_run, n_resamples=50)
    before = stored(mixed_run)

    def broken(*args, **kwargs):
        raise FloatingPointError("metric intervals failed")

    # The metric rows are built after the old rows are deleted.
    monkeypatch.setattr(stats, "effective_wilson", broken)
    with pytest.raises(FloatingPointError):
        summaries_refresh(run=mixed_run, n_resamples=50, seed=9)
    assert stored(mixed_run) == before
