"""Plain leads: every public results page opens with a sentence built from its own figures,
and keeps the intervals behind "How we know"."""

import html as htmllib
import re

import pytest
from django.urls import reverse
from django.utils import translation

from evaluations.models import Conversation
from results.models import PassRateSummary
from results.plain import conversation_lead, counted, interval_text, metric_lead
from stats.estimates import Estimate
from tests.results.public_data import published_run

LEAD = re.compile(r'data-testid="plain-lead">(.*?)</p>', re.S)


def _lead(html: str) -> str:
    found = LEAD.search(html)
    assert found, "the page has no plain lead"
    return htmllib.unescape(found.group(1))


def test_counts_and_interval_lines_say_what_the_figure_rests_on():
    e = Estimate(value=0.53, low=0.41, high=0.64, n=100, n_clusters=20, method="Wilson")
    assert counted(e) == "53 of 100 conversations"
    assert interval_text(e) == (
        "53 %, 95 % interval 41–64 %, n = 100 in 20 base scenarios (Wilson)"
    )
    # As many clusters as conversations: the clusters add nothing.
    one_each = Estimate(value=0.5, low=0.1, high=0.9, n=4, n_clusters=4, method="Wilson")
    assert interval_text(one_each) == "50 %, 95 % interval 10–90 %, n = 4 (Wilson)"
    # A checklist score counts rubric items, which are no base scenarios.
    score = Estimate(value=0.6, low=0.3, high=0.8, n=3, n_clusters=3, unit="score")
    assert interval_text(score, of_items=True) == "60 %, 95 % interval 30–80 %, n = 3 rubric items"
    with translation.override("es"):
        assert interval_text(score, of_items=True) == (
            "60 %, intervalo del 95 % 30–80 %, n = 3 ítems de rúbrica"
        )
    thin = Estimate.insufficient(n=1, reason="one conversation")
    assert counted(thin) == "too few conversations to say (1)"
    assert interval_text(thin) == "no figure (n = 1: one conversation)"


def test_a_conversation_that_failed_says_so_in_plain_words():
    e = Estimate(value=0.5, low=0.2, high=0.8, n=6, n_clusters=3)
    failed = conversation_lead("Model X", "negative", False, e)
    assert failed.sentence.startswith("In this test conversation, Model X did not avoid the")
    assert "avoided the harmful behaviour in 3 of 6 conversations" in failed.sentence
    passed = conversation_lead("Model X", "positive", True, None)
    assert passed.sentence == "In this test conversation, Model X showed the helpful behaviour."
    assert passed.how == ()


def test_a_metric_without_figures_does_not_invent_one():
    assert metric_lead("negative", []).sentence.startswith("No model has enough")


@pytest.mark.django_db
def test_every_public_page_leads_with_its_own_figures_before_anything_else(client):
    run = published_run(n_metrics=4)
    a, b = run.targets.order_by("name")[:2]
    conversation = Conversation.objects.filter(run=run, target=a).order_by("pk").first()
    version = conversation.scenario.metric_version
    rows = PassRateSummary.objects.filter(run=run, age_context="all")
    pages = {
        "explore": reverse("results:explore"),
        "metrics": reverse("results:metric-list"),
        "metric": reverse("results:metric", args=[version.metric.key]),
        "conversation": reverse("results:conversation", args=[conversation.pk]),
        "label": reverse("results:label", args=[a.pk]),
        "category": reverse("results:label-category", args=[a.pk, version.label_category.slug]),
        "compare": reverse("results:label-compare") + f"?a={a.pk}&b={b.pk}",
        "overview": reverse("results:label-overview"),
        "audience": reverse("results:label-audience", args=[a.pk, "parent"]),
        "methodology": reverse("results:methodology"),
        "release": reverse("metrics_registry:release_detail", args=[run.release.version]),
    }
    leads = {}
    for name, url in pages.items():
        html = client.get(url).content.decode()
        leads[name] = _lead(html)
        # First: before the run banner and before any table of figures.
        start = html.index('data-testid="plain-lead"')
        for later in ('data-testid="run-banner"', "<table"):
            if later in html:
                assert start < html.index(later), (name, later)

    metric_rows = rows.filter(level="metric", metric_version=version)
    passed = sum(r.n_passed for r in metric_rows)
    n = sum(r.n_conversations for r in metric_rows)
    verb = "showed the helpful" if version.polarity == "positive" else "avoided the harmful"
    assert (
        f"The models tested {verb} behaviour in {passed} of {n} conversations." in (leads["metric"])
    )
    mine = metric_rows.get(target=a)
    assert f"in {mine.n_passed} of {mine.n_conversations} conversations" in (leads["conversation"])
    # The label pools its categories: the same counts as the model's overall summaries.
    for polarity, words in (
        ("negative", "avoided the harmful"),
        ("positive", "showed the helpful"),
    ):
        overall = rows.get(level="overall", target=a, polarity=polarity)
        assert (
            f"{words} behaviour in {overall.n_passed} of {overall.n_conversations}"
            in (leads["label"])
        )
    assert leads["audience"] == leads["label"]
    assert "Release 1.0.0 tests AI models on 4 behaviours" in leads["metrics"]
    assert "Release 1.0.0 is a fixed list of 4 tests" in leads["release"]
    total = sum(r.n_conversations for r in rows.filter(level="overall"))
    assert f"rest on {total} judged test conversations with 2 models" in leads["methodology"]
    assert "2 models graded on" in leads["overview"]


@pytest.mark.django_db
def test_intervals_stay_on_the_page_behind_how_we_know(client):
    run = published_run(n_metrics=2)
    a = run.targets.order_by("name").first()
    html = client.get(reverse("results:label", args=[a.pk])).content.decode()
    details = html[html.index('data-testid="how-we-know"') :]
    details = details[: details.index("</details>")]
    assert "<summary>How we know</summary>" in details
    assert "95 % interval" in details
    assert "base scenarios" in details
    # The sentence above it carries no interval.
    assert "interval" not in _lead(html)


@pytest.mark.django_db
def test_rubric_pages_lead_with_what_the_replies_did(client):
    from evaluations.models import RubricResponse
    from tests.results.public_data import add_rubric_responses

    run = published_run(version="3.0.0")
    add_rubric_responses(run, n_items=6)
    careful, other = run.targets.order_by("pk")[:2]
    results = _lead(client.get(reverse("results:rubrics")).content.decode())
    assert "scored 2 models' replies to up to 6 health situations" in results
    first = RubricResponse.objects.get(run=run, target=other, item__key=f"pub-{run.pk}-0")
    reply = _lead(client.get(reverse("results:rubric-response", args=[first.pk])).content.decode())
    # Item 0: the second model met one rewarded check of three and the one penalised check.
    assert "did 1 of the 3 things a good reply does here" in reply
    assert "and 1 of the 1 things it should avoid" in reply
    items = _lead(
        client.get(
            reverse("results:rubric-items") + f"?run={run.pk}&model={careful.pk}"
        ).content.decode()
    )
    assert "These are the 6 graded replies behind one figure: 6 were scored" in items
