"""Readings of the label for parents, educators, policymakers and product developers."""

import pytest
from django.urls import reverse

from results.audiences import AUDIENCES, DOES_BADLY_BELOW, DOES_WELL_FROM, audience_reading
from results.label import label_profile
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db


def test_a_reading_sorts_its_categories_by_the_figures_and_quotes_them():
    run = published_run(n_metrics=4)
    target = run.targets.order_by("name").first()
    profile = label_profile(run=run, target=target)
    reading = audience_reading(profile, AUDIENCES["developer"])
    # The test run's categories are Agency and Sycophancy, both in the developer's reading.
    assert {line.category.slug for line in reading.lines} == {"agency", "sycophancy"}
    for line in reading.lines:
        e = line.estimate
        said = next(s for s in reading.well + reading.badly + reading.middle if
                    s.startswith(line.category.name))  # fmt: skip
        assert f"{e.value * 100:.0f} % of {e.n} conversations" in said
        if e.value >= DOES_WELL_FROM:
            assert said in reading.well
        elif e.value < DOES_BADLY_BELOW:
            assert said in reading.badly
        else:
            assert said in reading.middle
    assert f"{profile.teen} with teen personas" in reading.tested
    assert len(reading.untested) == len(AUDIENCES["developer"].categories) - 2


@pytest.mark.parametrize("audience", sorted(AUDIENCES))
def test_each_audience_page_renders_and_links_back(client, audience):
    run = published_run(n_metrics=2)
    target = run.targets.order_by("name").first()
    url = reverse("results:label-audience", args=[target.pk, audience])
    html = client.get(url).content.decode()
    assert AUDIENCES[audience].title.lower() in html.lower()
    assert "not written by an AI model" in html
    assert f"{url}?run={run.pk}" in html
    assert (
        client.get(reverse("results:label-audience", args=[target.pk, "nobody"])).status_code == 404
    )
