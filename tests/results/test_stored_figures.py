"""Figures the refresh stores for the public pages (`results.services.stored_figures`): a page
read from them is the page computed live, stale ones are never read, and reading them costs
the same few queries whatever the size of the release."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from core.caches import page_cache
from results.models import RunAnalysis, RunFigures
from results.services import analysis_refresh
from results.services import calibration as calibration_module
from results.services import judge_trust as judge_trust_module
from results.services.calibration import CALIBRATION, run_calibration
from results.services.judge_trust import JUDGE_TRUST, run_judge_trust
from results.services.stored_figures import run_figures_compute
from review.models import Rating
from review.services import rating_undo_last
from tests.results.public_data import published_run
from tests.results.test_judge_trust_pages import _key, _rate_all

pytestmark = pytest.mark.django_db


def _live(kind, run):
    _, inputs = kind.inputs(run)
    return kind.compute(run, inputs)


def _no_live_figures(monkeypatch):
    """Make computing judge trust or calibrated rates fail: only stored figures can answer."""

    def refuse(*args, **kwargs):
        raise AssertionError("figures computed live")

    monkeypatch.setattr(judge_trust_module, "_by", refuse)
    monkeypatch.setattr(calibration_module, "_compute", refuse)


def _rated_and_refreshed(*, n_metrics: int = 2, version: str = "1.0.0"):
    run = published_run(n_metrics=n_metrics, version=version)
    _rate_all(run, agree=False)
    analysis_refresh(run=run)
    return run


def _urls(run) -> dict[str, str]:
    key = _key(run)
    target = run.targets.order_by("pk").first()
    return {
        "metric page": reverse("results:metric", args=[key]),
        "metric api": reverse("results-api:metric-results", args=[key]),
        "methodology": reverse("results:methodology"),
        "label": reverse("results:label", args=[target.pk]),
        "label api": reverse("results-api:label", args=[target.pk]),
        "explore": reverse("results:explore") + f"?model={target.pk}",
        "calibration api": reverse("results-api:run-calibration", args=[run.pk]),
    }


def test_the_refresh_stores_figures_equal_to_the_live_ones():
    run = _rated_and_refreshed()
    kinds = set(RunFigures.objects.filter(run=run).values_list("kind", flat=True))
    assert kinds == {"judge_trust", "calibration"}
    trust = run_judge_trust(run)
    assert trust == _live(JUDGE_TRUST, run)
    assert trust["metric"], "the blind verdicts give every metric a figure"
    assert run_calibration(run) == _live(CALIBRATION, run)


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


def test_stored_figures_are_not_read_once_their_inputs_changed(client, monkeypatch):
    run = _rated_and_refreshed()
    key = _key(run)
    row = RunFigures.objects.get(run=run, kind="judge_trust")
    tampered = json.loads(json.dumps(row.figures))
    for cell in tampered["metric"]:
        cell[1]["badge"] = "TAMPERED"
    RunFigures.objects.filter(pk=row.pk).update(figures=tampered)
    # Stored and current: what is stored is what is shown (the pages read it).
    assert run_judge_trust(run)["metric"][key].badge == "TAMPERED"
    url = reverse("results-api:metric-results", args=[key])
    assert client.get(url).json()["judge_trust"]["badge"] == "TAMPERED"

    # A rating undone and the refresh not run yet: computed live from today's verdicts.
    rating = Rating.objects.filter(undone=False).order_by("pk").last()
    rating_undo_last(queue=rating.queue, rater=rating.rater)
    assert Rating.objects.filter(pk=rating.pk, undone=True).exists()
    now = run_judge_trust(run)
    assert now["metric"][key].badge != "TAMPERED"
    assert now == _live(JUDGE_TRUST, run)
    page_cache().clear()
    assert client.get(url).json()["judge_trust"]["badge"] != "TAMPERED"


def test_figures_of_an_earlier_refresh_are_not_read():
    run = _rated_and_refreshed()
    row = RunFigures.objects.get(run=run, kind="calibration")
    tampered = {**row.figures, "queue_name": "TAMPERED"}
    RunFigures.objects.filter(pk=row.pk).update(figures=tampered)
    assert run_calibration(run).queue_name == "TAMPERED"
    # The run refreshed again (its verdicts reread) without these figures: not theirs.
    RunAnalysis.objects.filter(run=run).update(computed_at=timezone.now())
    assert run_calibration(run).queue_name != "TAMPERED"
    assert run_calibration(run) == _live(CALIBRATION, run)


def test_missing_stored_figures_are_computed_live():
    run = _rated_and_refreshed()
    stored = run_judge_trust(run)
    RunFigures.objects.filter(run=run).delete()
    assert run_judge_trust(run) == stored


def test_stored_figures_are_plain_json_read_back_exactly():
    run = _rated_and_refreshed()
    for kind in (JUDGE_TRUST, CALIBRATION):
        _, encoded = run_figures_compute(kind, run)
        assert json.loads(json.dumps(encoded)) == encoded
        assert kind.decode(encoded) == _live(kind, run)


def _queries(client, urls: dict[str, str]) -> dict[str, int]:
    counts = {}
    for name, url in urls.items():
        page_cache().clear()
        with CaptureQueriesContext(connection) as context:
            assert client.get(url).status_code == 200, name
        counts[name] = len(context.captured_queries)
    return counts


def test_pages_on_stored_figures_cost_the_same_queries_whatever_the_release_size(
    client, monkeypatch
):
    _no_live_figures(monkeypatch)
    small = _queries(client, _urls(_rated_and_refreshed(n_metrics=2)))
    # A second, larger release: its run is the latest, shown by default.
    large = _queries(client, _urls(_rated_and_refreshed(n_metrics=8, version="2.0.0")))
    assert small == large
    assert max(large.values()) <= 21
