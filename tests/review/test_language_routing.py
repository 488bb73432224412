"""Raters who read it: every queue item carries the language its rater reads, and claims route
by it (issue 41)."""

import importlib

import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import translation

from core.models import ReaderLanguage
from core.roles import Role
from core.services import reader_language_declare, user_reads_language
from review.agreement import queue_figures
from review.kinds import adapter_for
from review.models import QueueItem
from review.selectors import rater_languages
from review.services import assignment_claim, queue_create, rating_submit
from tests.evaluations.factories import ScenarioFactory
from tests.factories import UserFactory
from tests.metrics_registry.factories import MetricFactory, metric_version_bump

from .factories import metric_queue, synthetic_candidates

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

GOOD = {"realistic": "yes"}


def expert(*languages: str):
    user = UserFactory(roles=[Role.EXPERT_REVIEWER])
    for language in languages:
        reader_language_declare(user=user, language=language)
    return user


def scenario_queue(*languages: str, researcher=None):
    """A queue of one scenario per language, each needing one rating."""
    for language in languages:
        ScenarioFactory(language=language)
    return queue_create(
        name="Scenarios",
        kind="scenario",
        created_by=researcher or UserFactory(),
        size=len(languages),
        required_ratings=1,
        seed=3,
    )


def claimed_language(queue, rater) -> str | None:
    assignment = assignment_claim(queue=queue, rater=rater)
    return None if assignment is None else assignment.item.language


def test_each_item_keeps_the_language_of_what_its_rater_reads():
    queue = scenario_queue("en", "es", "pt-BR")
    assert sorted(queue.items.values_list("language", flat=True)) == ["en", "es", "pt-BR"]


def test_a_metric_item_takes_its_current_versions_language():
    metric = MetricFactory(status="validated")
    metric_version_bump(metric, language="es")
    queue = metric_queue(n=1, required=1)
    assert queue.items.get().language == "es"


def test_an_item_whose_object_has_no_language_is_read_in_english():
    queue = metric_queue(n=2, candidates=synthetic_candidates(2))
    assert set(queue.items.values_list("language", flat=True)) == {"en"}


def test_a_spanish_item_goes_only_to_a_reader_of_spanish():
    queue = scenario_queue("es")
    assert claimed_language(queue, expert("en")) is None
    assert claimed_language(queue, expert()) is None
    assert claimed_language(queue, expert("en", "es")) == "es"


def test_a_reader_of_portuguese_gets_brazilian_portuguese_but_not_the_reverse():
    queue = scenario_queue("pt-BR", "pt")
    assert claimed_language(queue, expert("pt-BR")) == "pt-BR"
    reader = expert("pt")
    first = assignment_claim(queue=queue, rater=reader)
    assert first.item.language in {"pt", "pt-BR"}
    assert user_reads_language(user=reader, language="pt-BR")
    assert not user_reads_language(user=expert("pt-BR"), language="pt")


def test_a_rater_who_declared_no_language_reads_english():
    queue = scenario_queue("es", "en-GB", "en")
    rater = expert()
    seen = []
    while (assignment := assignment_claim(queue=queue, rater=rater)) is not None:
        seen.append(assignment.item.language)
        rating_submit(assignment=assignment, rater=rater, answers=_answers(assignment))
    assert sorted(seen) == ["en", "en-GB"]
    languages = rater_languages(queue=queue, rater=rater)
    assert not languages.read.declared
    assert languages.waiting_elsewhere == 1
    with translation.override("en"):
        assert languages.nothing_readable == (
            "No items left in the languages you read: English; 1 item waits in other languages."
        )
    with translation.override("es"):
        assert languages.nothing_readable == (
            "No quedan elementos en los idiomas que lee: inglés; 1 elemento espera en otros "
            "idiomas."
        )


def test_declaring_any_language_replaces_the_english_default():
    queue = scenario_queue("en")
    assert claimed_language(queue, expert("es")) is None


def test_the_claim_routes_by_language_in_the_same_number_of_queries():
    """The language rule is a subquery of the item query: declaring languages adds none."""
    counts = []
    for languages in ((), ("es", "en")):
        queue = metric_queue(n=2, candidates=synthetic_candidates(2))
        rater = expert(*languages)
        with CaptureQueriesContext(connection) as queries:
            assert assignment_claim(queue=queue, rater=rater) is not None
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_the_rate_page_says_why_nothing_is_readable(client):
    queue = scenario_queue("es", "de")
    rater = expert("en", "fr")
    client.force_login(rater)
    page = client.get(reverse("review:rate", args=[queue.pk])).content.decode()
    assert (
        "No items left in the languages you read: English, French; 2 items wait in other "
        "languages." in page
    )
    assert reverse("core:languages") in page


def test_the_rate_page_keeps_the_plain_message_when_the_queue_is_done(client):
    queue = scenario_queue("en")
    rater = expert()
    assignment = assignment_claim(queue=queue, rater=rater)
    rating_submit(assignment=assignment, rater=rater, answers=_answers(assignment))
    client.force_login(rater)
    page = client.get(reverse("review:rate", args=[queue.pk])).content.decode()
    assert "No items left in the languages you read" not in page
    assert "You have not said which languages you read" in page


def test_the_rater_queue_list_says_the_english_default(client):
    client.force_login(expert())
    page = client.get(reverse("review:rater-queues")).content.decode()
    assert "so you are given items in English" in page


def test_the_data_migration_fills_existing_items():
    queue = scenario_queue("es", "en")
    QueueItem.objects.filter(queue=queue).update(language="en")
    migration = importlib.import_module("review.migrations.0007_fill_queue_item_language")
    migration.fill_languages(apps, None)
    assert sorted(queue.items.values_list("language", flat=True)) == ["en", "es"]


def _answers(assignment):
    questions = adapter_for(assignment.item.kind).questions(assignment.item)
    return {q.name: q.values[0] for q in questions if q.required}


def test_declared_languages_are_stored_in_their_standard_spelling():
    rater = expert("PT_br")
    assert list(ReaderLanguage.objects.filter(user=rater).values_list("language", flat=True)) == [
        "pt-BR"
    ]


def rate_everything(queue, raters):
    for rater in raters:
        while (assignment := assignment_claim(queue=queue, rater=rater)) is not None:
            rating_submit(assignment=assignment, rater=rater, answers=_answers(assignment))


def two_language_queue():
    for language in ("en", "en", "es", "es"):
        ScenarioFactory(language=language)
    queue = queue_create(
        name="Scenarios", kind="scenario", created_by=UserFactory(), size=4, required_ratings=2
    )
    rate_everything(queue, [expert("en", "es"), expert("es", "en")])
    return queue


def test_agreement_is_reported_per_language_with_its_n_when_items_span_two():
    figures = queue_figures(two_language_queue())
    assert [(row["language"], row["items"], row["ratings"]) for row in figures.languages] == [
        ("en", 2, 4),
        ("es", 2, 4),
    ]
    for row in figures.languages:
        quality = next(f for f in row["questions"] if f.question.name == "quality")
        assert quality.items_rated == 2
        assert quality.percent_agreement.n == 2
        assert quality.percent_agreement.value == 1.0
    with translation.override("en"):
        assert figures.pooled_note == "pooled across English and Spanish items"


def test_one_language_is_not_split_nor_called_pooled():
    queue = scenario_queue("es", "es")
    rate_everything(queue, [expert("es")])
    figures = queue_figures(queue)
    assert figures.languages == []
    assert figures.pooled_note == ""


def test_the_queue_page_says_its_figures_pool_two_languages(client, researcher):
    queue = two_language_queue()
    client.force_login(researcher)
    page = client.get(reverse("review:queue-detail", args=[queue.pk])).content.decode()
    assert "pooled across English and Spanish items" in page
    assert 'data-testid="language-figures-en"' in page
    assert 'data-testid="language-figures-es"' in page
