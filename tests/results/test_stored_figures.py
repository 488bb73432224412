"""Figures the refresh stores for the public pages (`results.services.stored_figures`): a page
read from them is the page computed live, stale ones are never read, and reading them costs
the same few queries whatever the size of the release."""

import json

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from core.caches import page_cache
from results.models import PassRateSummary, RunAnalysis, RunFigures
from results.services import analysis_refresh
from results.services import calibration as calibration_module
from results.services import judge_trust as judge_trust_module
from results.services.calibration import CALIBRATION, run_calibration
from results.services.freshness import REFRESH_WHOLE
from results.services.judge_trust import JUDGE_TRUST, metric_judge_trust, run_judge_trust
from review.services import queue_set_status
from tests.results.public_data import published_run
from tests.results.test_judge_trust_pages import _key, _rate_all

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def _live(kind, run) -> dict:
    """The kind's documents computed now, as JSON reads them back."""
    _, inputs = kind.inputs(run)
    return json.loads(json.dumps(kind.compute(run, inputs), default=lambda v: v.item()))


def _stored(kind, run) -> dict:
    return dict(RunFigures.objects.filter(run=run, kind=kind.name).values_list("part", "figures"))


def _no_live_figures(monkeypatch):
    """Make computing judge trust or calibrated rates fail: only stored figures can answer."""

    def refuse(*args, **kwargs):
        raise AssertionError("figures computed live")

    monkeypatch.setattr(judge_trust_module, "_all_cells", refuse)
    monkeypatch.setattr(calibration_module, "_compute", refuse)


def _rated_and_refreshed(*, n_metrics: int = 2, version: str = "1.0.0"):
    run = published_run(n_metrics=n_metrics, version=version)
    _rate_all(run, agree=False)
    analysis_refresh(run=run)
    return run


def _urls(run) -> dict[str, str]:
    key = _key(run)
    target = run.targets.order_by("pk").first()
    of_run = f"?run={run.pk}"
    return {
        "metric page": reverse("results:metric", args=[key]) + of_run,
        "metric api": reverse("results-api:metric-results", args=[key]) + of_run,
        "methodology": reverse("results:methodology") + of_run,
        "label": reverse("results:label", args=[target.pk]) + of_run,
        "label api": reverse("results-api:label", args=[target.pk]) + of_run,
        "explore": reverse("results:explore") + f"{of_run}&model={target.pk}",
        "calibration api": reverse("results-api:run-calibration", args=[run.pk]),
    }


def test_the_refresh_stores_figures_equal_to_the_live_ones():
    run = _rated_and_refreshed()
    for kind in (JUDGE_TRUST, CALIBRATION):
        assert _stored(kind, run) == _live(kind, run), kind.name
    key = _key(run)
    trust = run_judge_trust(run)
    assert trust["metric"], "the blind verdicts give every metric a figure"
    overall, by_target = metric_judge_trust(run, key)
    assert overall == trust["metric"][key]
    assert by_target == {t: v for (k, t), v in trust["metric_target"].items() if k == key}
    assert by_target, "every target of the metric was rated"
    # A part per metric and per target besides the run-wide one, nothing more.
    parts = set(_stored(JUDGE_TRUST, run))
    assert parts == {""} | {f"metric:{k}" for k in trust["metric"]} | {
        f"target:{t}" for t in trust["target"]
    }


@pytest.mark.slow(reason="renders seven pages twice, from stored figures and computed live")
def test_pages_read_from_stored_figures_equal_the_pages_computed_live(client, monkeypatch):
    run = _rated_and_refreshed()
    urls = _urls(run)
    live = {}
    for name, url in urls.items():
        page_cache().clear()
        live[name] = client.get(url).content
    with monkeypatch.context() as patched:
        _no_live_figures(patched)
        for name, url in urls.items():
            page_cache().clear()
            response = client.get(url)
            assert response.status_code == 200, name
            assert response.content == live[name], name


def test_stored_figures_are_not_read_once_their_inputs_changed(
    client, django_capture_on_commit_callbacks, sent_tasks
):
    run = published_run(n_metrics=2)
    # Half the run rated in a released blind queue, a quarter in one still open.
    _rate_all(run, agree=False, size=12)
    panel = _rate_all(run, release=False, size=6)
    analysis_refresh(run=run)
    key = _key(run)
    row = RunFigures.objects.get(run=run, kind="judge_trust", part=f"metric:{key}")
    RunFigures.objects.filter(pk=row.pk).update(
        figures={**row.figures, "metric": {**row.figures["metric"], "badge": "TAMPERED"}}
    )
    # Stored and current: what is stored is what is shown (the pages read it).
    assert metric_judge_trust(run, key)[0].badge == "TAMPERED"
    url = reverse("results-api:metric-results", args=[key])
    assert client.get(url).json()["judge_trust"]["badge"] == "TAMPERED"

    # The blind queue released: its commit discards the stored figures, so pages compute them
    # live, with its verdicts, until the refresh it sends stores them again.
    with django_capture_on_commit_callbacks(execute=False) as committed:
        queue_set_status(queue=panel, status="closed")
    assert committed, "the release tells the results app"
    sent_tasks.inline[REFRESH_WHOLE] = lambda run_id: None  # the refresh behind it, not run
    for callback in committed:
        callback()
    current = RunFigures.objects.filter(refreshed_at=F("run__analysis__computed_at"))
    assert not current.filter(run=run, kind="judge_trust").exists()
    overall, _ = metric_judge_trust(run, key)
    assert overall.badge != "TAMPERED"
    assert overall == run_judge_trust(run)["metric"][key]
    page_cache().clear()
    assert client.get(url).json()["judge_trust"]["badge"] != "TAMPERED"


def test_figures_of_an_earlier_refresh_are_not_read():
    run = _rated_and_refreshed()
    row = RunFigures.objects.get(run=run, kind="calibration", part="")
    RunFigures.objects.filter(pk=row.pk).update(figures={**row.figures, "queue_name": "TAMPERED"})
    assert run_calibration(run).queue_name == "TAMPERED"
    # The run refreshed again (its verdicts reread) without these figures: not theirs.
    RunAnalysis.objects.filter(run=run).update(computed_at=timezone.now())
    assert run_calibration(run).queue_name != "TAMPERED"
    assert _live(CALIBRATION, run) == {"": {**row.figures}}


def test_missing_stored_figures_are_computed_live():
    run = _rated_and_refreshed()
    key = _key(run)
    stored = metric_judge_trust(run, key)
    calibration = run_calibration(run)
    RunFigures.objects.filter(run=run).delete()
    assert metric_judge_trust(run, key) == stored
    assert run_calibration(run) == calibration


def _queries(client, urls: dict[str, str]) -> dict[str, int]:
    counts = {}
    for name, url in urls.items():
        # The values the page cache may key on are read once per data stamp, not per page.
        client.get(url)
        page_cache().clear()
        with CaptureQueriesContext(connection) as context:
            assert client.get(url).status_code == 200, name
        counts[name] = len(context.captured_queries)
    return counts


@pytest.mark.slow(reason="publishes releases of two sizes to compare their queries")
def test_pages_on_stored_figures_cost_the_same_queries_whatever_the_release_size(
    client, monkeypatch
):
    small_run = _rated_and_refreshed(n_metrics=2)
    large_run = _rated_and_refreshed(n_metrics=8, version="2.0.0")
    # The second panel's queue may hold conversations of the first run: its figures changed.
    analysis_refresh(run=small_run)
    _no_live_figures(monkeypatch)
    small = _queries(client, _urls(small_run))
    large = _queries(client, _urls(large_run))
    assert small == large
    # test_public_pages' ceiling, and one more for a second release's run named in ?run=.
    assert max(large.values()) <= 23


def test_the_refresh_leaves_the_planner_the_count_of_summary_rows_it_wrote():
    """A page of the API walks the index only if the planner knows how many rows a run has
    (autovacuum may not have analysed the table yet)."""
    if connection.vendor != "postgresql":
        pytest.skip("the planner's statistics are PostgreSQL's")
    published_run()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples FROM pg_class WHERE relname = %s", [PassRateSummary._meta.db_table]
        )
        assert cursor.fetchone()[0] == PassRateSummary.objects.count() > 0
