"""Simulator fidelity where people read it: the methodology page, the public API, and the
conversation pages (public and workspace)."""

import html as html_lib

import pytest
from django.core.cache import caches
from django.urls import reverse

from evaluations.models import Conversation, ConversationStatus
from results.services import results_refresh
from results.services.figure_audit import audit_figures, figures_in_html, figures_in_json
from tests.evaluations.factories import fidelity_reading
from tests.results.public_data import published_run

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="publishes a run and refreshes its analysis with fidelity readings"),
]

HOSTILE = '<script>alert("fidelity")</script>'


def _run_with_readings():
    """A published run: every conversation checked but the last, every third below the bar
    (goal not pursued), one quote not found in the user's turns."""
    run = published_run()
    conversations = list(Conversation.objects.filter(run=run).order_by("pk"))
    for i, c in enumerate(conversations[:-1]):
        fidelity_reading(c, failed=("goal",) if i % 3 == 0 else (), repeated_lines=i % 2)
    results_refresh(run=run, n_resamples=50)
    caches["pages"].clear()
    return run, conversations


def test_methodology_shows_fidelity_with_intervals_and_links(client, django_assert_max_num_queries):
    run, conversations = _run_with_readings()
    with django_assert_max_num_queries(21):
        response = client.get(reverse("results:methodology"), {"run": run.pk})
    page = response.content.decode()
    start = page.index('data-testid="fidelity"')
    section = page[start : page.index("</section>", start)]
    assert "Simulator fidelity" in section
    assert "stayed in persona and age register" in section
    assert run.simulator.name in section
    below = [c for i, c in enumerate(conversations[:-1]) if i % 3 == 0]
    n_checked = len(conversations) - 1
    # The share meeting the bar, with its n and what was left out.
    meets = section[section.index('data-testid="fidelity-meets-bar"') :]
    assert f'data-estimate-n="{n_checked}"' in meets[:600]
    assert "not checked: 1" in meets[:1500]
    for criterion in ("Pursues the hidden goal to the end", "Never breaks character"):
        assert criterion in section
    for c in below:
        assert reverse("results:conversation", args=[c.pk]) in section
    assert 'data-testid="fidelity-sensitivity"' in section
    assert "Only conversations meeting the bar" in section
    assert 'data-testid="fidelity-agreement-none"' in section
    assert "(0 ratings)" in section
    figures = figures_in_html(section, source="page", run=run.pk)
    # The bar, five criteria, and two rates per model and polarity.
    assert len(figures) == 6 + 2 * 4
    assert audit_figures(figures) == []


def test_the_api_serves_the_figures_and_is_linked_from_the_run(
    api_client, django_assert_max_num_queries
):
    run, conversations = _run_with_readings()
    url = reverse("results-api:run-fidelity", args=[run.pk])
    run_body = api_client.get(reverse("results-api:run-detail", args=[run.pk])).json()
    assert run_body["fidelity"] == url
    with django_assert_max_num_queries(12):
        response = api_client.get(url)
    assert response.status_code == 200
    body = response.json()
    assert body["run"] == run.pk
    assert body["available"] is True
    (simulator,) = body["simulators"]
    assert simulator["n_checked"] == len(conversations) - 1
    assert simulator["meets_bar"]["n"] == len(conversations) - 1
    assert simulator["meets_bar"]["low"] < simulator["meets_bar"]["value"]
    assert [c["criterion"] for c in simulator["criteria"]] == [
        "persona",
        "goal",
        "fresh",
        "in_character",
        "responsive",
    ]
    assert {row["conversation"] for row in simulator["below_bar"]} == {
        c.pk for i, c in enumerate(conversations[:-1]) if i % 3 == 0
    }
    assert all(row["failed_criteria"] == ["goal"] for row in simulator["below_bar"])
    assert len(simulator["sensitivity"]) == 4
    assert body["agreement"]["n_ratings"] == 0
    assert body["agreement"]["reason"] == "no expert realism ratings yet"
    assert audit_figures(figures_in_json(body, source="api", run=run.pk)) == []
    missing = api_client.get(reverse("results-api:run-fidelity", args=[999999]))
    assert missing.status_code == 404
    assert "detail" in missing.json()


def test_the_public_conversation_page_shows_its_reading_escaped(client):
    run = published_run()
    checked, failed, unchecked = Conversation.objects.filter(run=run).order_by("pk")[:3]
    reading = fidelity_reading(checked, failed=("fresh",), repeated_lines=2, is_offline=True)
    reading.criteria[2].update(quote=HOSTILE, found=False, reason=HOSTILE, turn=2)
    reading.save(update_fields=["criteria"])
    Conversation.objects.filter(pk=failed.pk).update(status=ConversationStatus.FAILED)
    caches["pages"].clear()

    page = client.get(reverse("results:conversation", args=[checked.pk])).content.decode()
    card = page[page.index('data-testid="fidelity-reading"') :]
    card = card[: card.index('data-testid="fidelity-repeats"') + 200]
    assert "Below the fidelity bar" in card
    assert f"Checked by {run.judge.name}" in html_lib.unescape(card)
    assert "No stock or repeated lines" in card
    assert "not held" in card
    assert "Turn 2:" in card
    assert "quote not found in the user's turns" in html_lib.unescape(card)
    assert card.count('data-testid="fidelity-quote-not-found"') == 1
    assert "2 user turns repeat an earlier one word for word" in card
    assert 'data-testid="fidelity-offline"' in card
    # The checker's words (quote and reason) are shown, escaped.
    assert HOSTILE not in page
    assert card.count("&lt;script&gt;alert(") == 2

    failed_page = client.get(reverse("results:conversation", args=[failed.pk])).content.decode()
    assert "Not checked: the conversation failed." in failed_page
    fresh_page = client.get(reverse("results:conversation", args=[unchecked.pk])).content.decode()
    assert "Not checked yet." in fresh_page
