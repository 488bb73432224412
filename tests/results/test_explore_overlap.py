"""Explore's rows overlap where a metric is filed under several subareas: the page says so."""

import pytest
from django.urls import reverse

from results.services import results_refresh
from tests.llm.factories import OfflineConfigurationFactory
from tests.results.factories import completed_run, metric_version, scenario
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db


def _explore(client, run, target) -> str:
    url = reverse("results:explore")
    query = {"run": run.pk, "model": target.pk, "polarity": "positive"}
    return client.get(url, query).content.decode()


def test_explore_says_when_a_metric_counts_in_several_areas(client):
    target = OfflineConfigurationFactory(name="Offline overlap")
    single = metric_version(subareas=("agency-purpose",))
    shared = metric_version(subareas=("agency-purpose", "social-relationships"))
    outcomes = [
        (scenario(v, base, age), target, base != 0)
        for v in (single, shared)
        for base in range(3)
        for age in ("teen", "adult")
    ]
    run = completed_run(targets=[target], versions=[single, shared], outcomes=outcomes)
    results_refresh(run=run, n_resamples=50)
    html = _explore(client, run, target)
    note = html.split('data-testid="explore-overlap"')[1].split("</p>")[0]
    # 12 judged; the shared metric's 6 count in both areas and both subareas.
    assert "counts in each of them" in note
    assert "Offline overlap add up to 18 over the areas and 18 over the subareas" in note
    assert "though 12 were judged" in note


def test_explore_says_nothing_of_overlap_when_the_rows_do_not_overlap(client):
    run = published_run()
    target = run.targets.order_by("name").first()
    assert 'data-testid="explore-overlap"' not in _explore(client, run, target)
