"""Readings of the label for parents, educators, policymakers and product developers."""

import pytest
from django.urls import reverse

from results import label
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
        said = next(s for s in reading.well + reading.badly + reading.middle + reading.thin if
                    s.startswith(line.category.name))  # fmt: skip
        assert f"{e.value * 100:.0f} % of {e.n} conversations" in said
        if line.thin:  # the label marks it thin: neither a strength nor a weakness
            assert said in reading.thin
        elif e.value >= DOES_WELL_FROM:
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


def test_a_category_the_label_marks_thin_is_neither_strength_nor_weakness_in_a_reading(
    client, monkeypatch
):
    """One rule for the label and its readings: what the label marks "thin evidence" is said,
    with its figures, under thin evidence and never under "Where it does well" or "badly"."""
    run = published_run(n_metrics=4)
    target = run.targets.order_by("name").first()
    monkeypatch.setattr(label, "THIN_N", 10**6)  # every category now has too few conversations
    profile = label._label_profile(run, target)
    assert all(line.thin for line in profile.lines)
    assert profile.strengths == profile.weaknesses == []
    reading = audience_reading(profile, AUDIENCES["developer"])
    assert reading.well == reading.badly == reading.middle == []
    assert len(reading.thin) == len(reading.lines)
    url = reverse("results:label-audience", args=[target.pk, "developer"]) + f"?run={run.pk}"
    html = client.get(url).content.decode()
    does_well = html.split('data-testid="does-well"')[1].split("</ul>")[0]
    does_badly = html.split('data-testid="does-badly"')[1].split("</ul>")[0]
    thin = html.split('data-testid="thin-lines"')[1].split("</ul>")[0]
    for line in reading.lines:
        assert line.category.name not in does_well + does_badly
        assert f"{line.category.name}: " in thin
        assert f"{line.estimate.n} conversations" in thin
    assert "with enough evidence" in does_well


def test_the_label_and_its_readings_sort_categories_by_one_rule():
    run = published_run(n_metrics=4)
    target = run.targets.order_by("name").first()
    profile = label._label_profile(run, target)
    reading = audience_reading(profile, AUDIENCES["developer"])
    for line in reading.lines:
        place = {
            "well": reading.well,
            "badly": reading.badly,
            "middle": reading.middle,
            "thin": reading.thin,
        }[line.standing]
        assert any(s.startswith(f"{line.category.name}:") for s in place)
        in_strengths = any(s.startswith(f"{line.category.name}:") for s in profile.strengths)
        assert in_strengths == (line.standing == "well")
