"""The key beside the Explore wheel: names, numbers and metric counts per segment."""

import pytest
from django.urls import reverse

from results.charts import Node, sunburst
from results.models import PassRateSummary
from results.wheel import FAILING_BELOW, PASSING_FROM, metric_counts
from stats.estimates import Estimate
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db


def _expected(run, target, polarity):
    rows = PassRateSummary.objects.filter(
        run=run, target=target, level="metric", age_context="all", polarity=polarity
    )
    passing = sum(r.rate >= PASSING_FROM for r in rows)
    failing = sum(r.rate < FAILING_BELOW for r in rows)
    return passing, rows.count() - passing - failing, failing


@pytest.mark.parametrize("polarity", ["positive", "negative"])
def test_each_subarea_counts_its_metrics_by_outcome(polarity):
    run = published_run(n_metrics=6)
    target = run.targets.order_by("name").first()
    counts = metric_counts(run=run, target_ids=[target.pk], age="all", polarity=polarity)
    # Every metric of the test run sits in the one subarea "agency-purpose".
    c = counts[(target.pk, "subarea", "agency-purpose")]
    assert (c.passing, c.neutral, c.failing) == _expected(run, target, polarity)
    area = next(v for (t, level, _), v in counts.items() if level == "area")
    assert (area.passing, area.neutral, area.failing) == (c.passing, c.neutral, c.failing)


def test_explore_page_shows_the_key_with_names_and_counts(client):
    run = published_run(n_metrics=4)
    target = run.targets.order_by("name").first()
    html = client.get(reverse("results:explore"), {"model": target.pk}).content.decode()
    assert 'data-testid="wheel-key"' in html
    passing, neutral, failing = _expected(run, target, "positive")
    assert f"{passing} passing, {neutral} neutral, {failing} failing" in html
    assert 'data-testid="wheel-name"' in html  # area names on the inner ring


def test_wheel_writes_area_names_where_they_fit_and_numbers_subareas():
    est = Estimate(value=0.6, low=0.5, high=0.7, n=30)
    areas = [
        Node("a", "Psychological", est, "", [Node(f"s{i}", f"Sub {i}", est) for i in range(12)]),
        Node("b", "Physical", est, "", [Node("t", "Only one", est)]),
    ]
    segments = sunburst(areas)
    names = {s.key: s.name for s in segments if s.ring == 0}
    assert names["a"] == "Psychological"
    assert names["b"] == ""  # one subarea's angle in 13 is too narrow even at 10 px
    assert [s.number for s in segments if s.ring == 1] == [str(i) for i in range(1, 14)]
    # With one in nine, the name fits in a smaller size.
    areas[0].children = areas[0].children[:8]
    narrow = next(s for s in sunburst(areas) if s.key == "b")
    assert narrow.name == "Physical"
    assert 10 <= narrow.name_size < 14
