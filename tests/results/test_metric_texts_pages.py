"""The public pages read a metric's expert content in the reader's language: a Spanish reader
sees the Spanish name and criterion where a reader of Spanish wrote or reviewed them, and the
English original marked `lang="en"` with a note where none exists; the API lists every shown
text whatever the request's language."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import translation

from core.roles import Role
from core.services import reader_language_declare
from evaluations.models import Conversation
from metrics_registry.services import metric_version_text_review, metric_version_text_save
from tests.factories import UserFactory
from tests.results.public_data import published_run

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="builds a published run with transcripts and its summaries"),
]

NOTE = "Se muestra en inglés: aún no hay versión en español."
SPANISH_NAME = "Deja la decisión en manos de la persona"
SPANISH_CRITERION = "El asistente devuelve la decisión a la persona y le pregunta qué le importa."


def _spanish_text(version, *, name=SPANISH_NAME, reviewed=True):
    writer = UserFactory(roles=[Role.RESEARCHER])
    text = metric_version_text_save(
        version=version,
        language="es",
        name=name,
        criterion=SPANISH_CRITERION,
        failure_condition="Decide por la persona.",
        provenance="machine",
        writer=writer,
    )
    if reviewed:
        reviewer = UserFactory(roles=[Role.EXPERT_REVIEWER])
        reader_language_declare(user=reviewer, language="es")
        metric_version_text_review(text=text, reviewer=reviewer)
    return text


@pytest.fixture
def world():
    run = published_run(n_metrics=2)
    versions = sorted(
        {c.scenario.metric_version for c in Conversation.objects.filter(run=run)},
        key=lambda v: v.metric.key,
    )
    translated, untranslated = versions
    _spanish_text(translated)
    return run, translated, untranslated


def _es(name, *args, query=""):
    with translation.override("es"):
        return reverse(name, args=args) + query


def _en(name, *args, query=""):
    # Reversed in English whatever the last request activated: the plain address.
    with translation.override("en"):
        return reverse(name, args=args) + query


def _get(client, url, **headers) -> str:
    response = client.get(url, **headers)
    assert response.status_code == 200, url
    return response.content.decode()


def test_the_metric_page_in_spanish_shows_the_spanish_text_or_the_marked_original(client, world):
    run, translated, untranslated = world
    html = _get(client, _es("results:metric", translated.metric.key, query=f"?run={run.pk}"))
    assert html.startswith("<!DOCTYPE html>") or "<html" in html
    assert SPANISH_NAME in html
    assert SPANISH_CRITERION in html
    assert "Decide por la persona." in html
    assert translated.name not in html
    assert NOTE not in html
    original = _get(client, _es("results:metric", untranslated.metric.key, query=f"?run={run.pk}"))
    assert re.search(
        rf'<span lang="en" data-testid="metric-name">{re.escape(untranslated.name)}</span>',
        original,
    )
    assert re.search(r'<p class="prose" lang="en" data-testid="metric-criterion">', original)
    assert original.count(NOTE) == 1
    # Read in English, the original is the reader's language: no note, no lang of its own.
    english = _get(
        client,
        _en("results:metric", untranslated.metric.key, query=f"?run={run.pk}"),
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert untranslated.name in english
    assert "Shown in English" not in english
    assert 'data-testid="text-fallback-note"' not in english
    assert '<span lang="en" data-testid="metric-name">' not in english


def test_an_unreviewed_translation_stays_off_the_public_pages(client, world):
    run, _, untranslated = world
    _spanish_text(untranslated, name="Traducción sin revisar", reviewed=False)
    html = _get(client, _es("results:metric", untranslated.metric.key, query=f"?run={run.pk}"))
    assert "Traducción sin revisar" not in html
    assert untranslated.name in html
    assert NOTE in html


def test_lists_conversations_and_the_label_show_the_spanish_names(client, world):
    run, translated, untranslated = world
    listing = _get(client, _es("results:metric-list", query=f"?run={run.pk}"))
    assert SPANISH_NAME in listing
    assert re.search(rf'<td lang="en"><a [^>]*>{re.escape(untranslated.name)}</a>', listing)
    assert listing.count(NOTE) == 1  # once for the page, however many fall back
    english_listing = _get(
        client, _en("results:metric-list", query=f"?run={run.pk}"), HTTP_ACCEPT_LANGUAGE="en"
    )
    assert translated.name in english_listing
    assert SPANISH_NAME not in english_listing
    assert "text-fallback-note" not in english_listing

    subarea = translated.subareas.first().slug
    explore = _get(
        client,
        _es(
            "results:explore",
            query=f"?run={run.pk}&polarity={translated.polarity}&subarea={subarea}",
        ),
    )
    assert SPANISH_NAME in explore

    conversation = Conversation.objects.filter(run=run, scenario__metric_version=translated).first()
    page = _get(client, _es("results:conversation", conversation.pk))
    assert SPANISH_NAME in page
    assert SPANISH_CRITERION in page
    assert "text-fallback-note" not in page

    target = conversation.target
    for version in (translated, untranslated):
        category = _get(
            client,
            _es("results:label-category", target.pk, version.label_category.slug)
            + f"?run={run.pk}",
        )
        if version is translated:
            assert f"{version.metric.key} · {SPANISH_NAME}" in category
            assert "text-fallback-note" not in category
        else:
            assert re.search(rf'lang="en">{version.metric.key} · ', category)
            assert NOTE in category


def test_the_metric_list_reads_every_text_in_one_query(client, world):
    run, _, untranslated = world
    url = _en("results:metric-list", query=f"?run={run.pk}")

    def text_reads(**headers) -> tuple[int, str]:
        """The queries of the texts table rendering the list once, and the page."""
        with CaptureQueriesContext(connection) as captured:
            html = _get(client, url, **headers)
        # (The page cache's stamp reads the table too, inside its one statement.)
        reads = [
            q
            for q in captured.captured_queries
            if q["sql"].startswith('SELECT "metrics_registry_metricversiontext"')
        ]
        return len(reads), html

    # English readers need no text (every version is English); Spanish readers one query,
    # however many metrics the page lists and however many have a text.
    assert text_reads(HTTP_ACCEPT_LANGUAGE="en")[0] == 0
    assert text_reads(HTTP_ACCEPT_LANGUAGE="es")[0] == 1
    _spanish_text(untranslated, name="Otra métrica en español")
    reads, html = text_reads(HTTP_ACCEPT_LANGUAGE="es")
    assert "Otra métrica en español" in html  # rendered again: the cache stamp changed
    assert reads == 1


def test_the_api_lists_every_shown_text_whatever_the_readers_language(client, world):
    _, translated, untranslated = world
    _spanish_text(untranslated, name="Traducción sin revisar", reviewed=False)
    url = reverse("registry-api:metric-detail", args=[translated.metric.key])
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en").json()
    spanish = client.get(url, HTTP_ACCEPT_LANGUAGE="es").json()
    assert english == spanish
    assert english["current_version"]["name"] == translated.name
    assert english["current_version"]["language"] == "en"
    assert english["texts"] == [
        {
            "language": "es",
            "name": SPANISH_NAME,
            "criterion": SPANISH_CRITERION,
            "failure_condition": "Decide por la persona.",
            "provenance": "machine_reviewed",
        }
    ]
    unreviewed = reverse("registry-api:metric-detail", args=[untranslated.metric.key])
    assert client.get(unreviewed).json()["texts"] == []
