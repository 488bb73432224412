"""The workspace page of a version's texts: the form keeps what was typed when it is refused,
reviewers who read the language get the review button, a reviewed text is reopened to edit."""

import pytest
from django.urls import reverse

from core.services import reader_language_declare
from metrics_registry.models import MetricVersionText
from tests.evaluations.factories import current_version
from tests.metrics_registry.factories import MetricFactory

pytestmark = pytest.mark.django_db

FORM = {
    "language": "es",
    "name": "Sugiere un paso propio",
    "criterion": "El asistente sugiere un paso que la persona puede dar sola.",
    "failure_condition": "",
    "provenance": "native",
}


@pytest.fixture
def version():
    return current_version(MetricFactory(name="Suggests a step of their own"))


def _url(version, *parts):
    names = {(): "metric_version_texts", ("review",): "metric_version_text_review"}
    names[("reopen",)] = "metric_version_text_reopen"
    args = [version.metric.key, version.number, *(["es"] if parts else [])]
    return reverse(f"metrics_registry:{names[parts]}", args=args)


def test_a_refused_text_is_shown_again_with_the_reason(client_for, researcher, version):
    client = client_for(researcher)
    response = client.post(_url(version), FORM)
    # Native needs a reader of Spanish: the form comes back with the writer's words in it.
    assert response.status_code == 400
    html = response.content.decode()
    assert "needs a reader of Spanish" in html
    assert FORM["criterion"] in html
    assert 'value="Sugiere un paso propio"' in html
    assert not MetricVersionText.objects.exists()
    hostile = client.post(_url(version), {**FORM, "name": "Sugiere\x00 un paso"})
    assert hostile.status_code == 400
    assert "control character" in hostile.content.decode()
    assert not MetricVersionText.objects.exists()


def test_a_machine_translation_is_saved_then_reviewed_by_a_reader(
    client_for, researcher, expert_reviewer, version
):
    response = client_for(researcher).post(_url(version), {**FORM, "provenance": "machine"})
    assert response.status_code == 302
    text = MetricVersionText.objects.get()
    assert (text.provenance, text.written_by) == ("machine", researcher)

    client = client_for(expert_reviewer)
    page = client.get(_url(version)).content.decode()
    assert FORM["name"] in page
    assert 'data-testid="review-text"' not in page  # does not read Spanish yet
    reader_language_declare(user=expert_reviewer, language="es")
    page = client.get(_url(version)).content.decode()
    assert 'data-testid="review-text"' in page
    assert client.post(_url(version, "review")).status_code == 302
    text.refresh_from_db()
    assert text.provenance == "machine_reviewed"
    assert text.reviewed_by == expert_reviewer

    # Frozen now: an edit is refused; a reader reopens it, and the form comes filled in.
    refused = client_for(researcher).post(_url(version), {**FORM, "provenance": "machine"})
    assert "reviewed and is frozen" in refused.content.decode()
    client = client_for(expert_reviewer)
    reopened = client.post(_url(version, "reopen"))
    assert reopened.status_code == 302
    assert reopened["Location"].endswith("?language=es")
    text.refresh_from_db()
    assert text.provenance == "machine"
    form = client.get(reopened["Location"]).content.decode()
    assert 'value="Sugiere un paso propio"' in form


def test_the_registry_page_links_writers_to_the_texts(client, client_for, researcher, version):
    url = reverse("metrics_registry:metric_detail", args=[version.metric.key])
    assert 'data-testid="texts-link"' not in client.get(url).content.decode()
    assert 'data-testid="texts-link"' in client_for(researcher).get(url).content.decode()
