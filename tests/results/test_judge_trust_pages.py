"""Judge trust and self-preference on the metric page and in the metric and label API."""

import pytest
from django.test import TestCase
from django.urls import reverse

from evaluations.models import Conversation, EvaluationRun
from review.services import assignment_claim, queue_create, queue_set_status, rating_submit
from tests.factories import UserFactory
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db


def _rate_all(run, *, agree: bool = True, release: bool = True, size: int | None = None):
    rater = UserFactory()
    # Blind items are drawn from conversations not public yet: the queue is drawn while the
    # run is not official, as a researcher would before publishing it.
    official = run.is_official
    EvaluationRun.objects.filter(pk=run.pk).update(is_official=False)
    panel = queue_create(
        name="Panel",
        kind="external_panel",
        created_by=None,
        size=size or Conversation.objects.filter(run=run).count(),
        seed=1,
        required_ratings=1,
        eligible_raters=[rater],
        external_panel=True,
    )
    EvaluationRun.objects.filter(pk=run.pk).update(is_official=official)
    # Each rating's commit tells the results app (its figures drawn without it are dropped):
    # run those handlers, as a rater's own request would.
    with TestCase.captureOnCommitCallbacks(execute=True):
        while (assignment := assignment_claim(queue=panel, rater=rater)) is not None:
            present = Conversation.objects.get(pk=assignment.item.object_id).verdict_present
            verdict = present if agree else not present
            rating_submit(
                assignment=assignment,
                rater=rater,
                answers={"examples_adequate": "yes", "verdict": "present" if verdict else "absent"},
            )
        # A blind queue's ratings count once it is released.
        if release:
            queue_set_status(queue=panel, status="closed")
    return panel


def _key(run):
    conversation = Conversation.objects.filter(run=run).order_by("pk").first()
    return conversation.scenario.metric_version.metric.key


def test_metric_page_says_not_yet_checked_and_how_to_fill(client):
    run = published_run()
    html = client.get(reverse("results:metric", args=[_key(run)])).content.decode()
    assert 'data-testid="metric-judge-trust"' in html
    assert 'data-badge="not yet checked by experts"' in html
    assert 'data-testid="judge-trust-how-to-fill"' in html
    # Offline targets judged by the offline judge: the same family, said on every row.
    assert html.count('data-testid="self-preference"') == 2


def test_metric_page_and_api_show_rated_trust(client):
    run = published_run()
    _rate_all(run, agree=False)
    key = _key(run)
    html = client.get(reverse("results:metric", args=[key])).content.decode()
    assert 'data-testid="judge-trust-low"' not in html  # 6 verdicts per model: too few
    data = client.get(reverse("results-api:metric-results", args=[key])).json()
    assert data["judge_trust"]["badge"] == "not yet checked by experts"
    assert data["judge_trust"]["agreement"]["value"] == 0.0
    assert data["judge_trust"]["agreement"]["n"] == 12
    row = data["results"][0]
    assert row["judge_trust"]["agreement"]["n"] == 6
    assert row["judge_self_preference"] == {"judge": run.judge.name, "family": "offline"}


def test_label_api_has_trust_per_category_and_self_preference(client):
    run = published_run()
    target = run.targets.order_by("name").first()
    data = client.get(reverse("results-api:label", args=[target.pk])).json()
    assert data["judge_self_preference"]["family"] == "offline"
    assert all(line["judge_trust"]["badge"] for line in data["lines"])
    assert all(line["judge_trust"]["how_to_fill"] for line in data["lines"])


def test_label_category_page_shows_trust_and_methodology_states_thresholds(client):
    run = published_run()
    target = run.targets.order_by("name").first()
    html = client.get(reverse("results:label-category", args=[target.pk, "agency"])).content
    html = html.decode()
    assert 'data-testid="category-judge-trust"' in html
    assert 'data-badge="not yet checked by experts"' in html
    assert 'data-testid="self-preference"' in html
    page = client.get(reverse("results:methodology")).content.decode()
    assert 'data-testid="judge-trust-thresholds"' in page
    assert "Not estimable with one judge" in page


@pytest.mark.slow(reason="builds a release with expert ratings and renders its pages")
def test_label_marks_contested_categories_and_metric_page_marks_low_agreement(client):
    # Five positive metrics in one category: 30 blind verdicts per model, all disagreeing.
    run = published_run(n_metrics=10)
    _rate_all(run, agree=False)
    target = run.targets.order_by("name").first()
    html = client.get(reverse("results:label", args=[target.pk])).content.decode()
    assert 'data-testid="label-trust-note"' in html
    assert html.count('data-testid="judge-trust-low"') == 2  # agency and sycophancy
    assert 'data-testid="self-preference"' in html
    data = client.get(reverse("results-api:label", args=[target.pk])).json()
    assert {line["judge_trust"]["badge"] for line in data["lines"]} == {"contested"}
    assert all(line["judge_trust"]["low_agreement"] for line in data["lines"])


def test_explore_marks_contested_metrics_and_same_family_judge(client, monkeypatch):
    run = published_run()
    key = _key(run)
    url = reverse("results:explore") + "?subarea=agency-purpose"
    html = client.get(url).content.decode()
    assert 'data-testid="self-preference"' in html
    assert 'data-testid="judge-trust-low"' not in html
    # Which metrics are contested comes from the service (tested above); the page marks them.
    monkeypatch.setattr("results.views.explore.low_trust_metrics", lambda run: {key})
    html = client.get(url + "&polarity=positive&age=teen").content.decode()
    assert 'data-testid="judge-trust-low"' in html
