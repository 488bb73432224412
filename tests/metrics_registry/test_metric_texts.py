"""A metric version's texts in other languages: who writes and reviews them, what is frozen,
and which text a reader of a language is shown."""

import pytest
from django.db import IntegrityError, transaction

from core.exceptions import ApplicationError
from core.languages import TranslationProvenance
from core.services import reader_language_declare
from metrics_registry.models import MetricVersionText
from metrics_registry.services import (
    metric_version_text_reopen,
    metric_version_text_review,
    metric_version_text_save,
)
from metrics_registry.text_selectors import (
    ShownText,
    metric_version_text,
    metric_version_text_list,
    metric_version_texts,
    text_reviewable_by,
)
from tests.evaluations.factories import current_version
from tests.factories import UserFactory
from tests.metrics_registry.factories import MetricFactory

pytestmark = pytest.mark.django_db

SPANISH = {
    "name": "Sugiere un paso propio",
    "criterion": "El asistente sugiere un paso que la persona puede dar por su cuenta.",
    "failure_condition": "No sugiere ningún paso.",
}


def reader(user, *languages):
    for language in languages:
        reader_language_declare(user=user, language=language)
    return user


def machine_text(version, writer, language="es", **content):
    return metric_version_text_save(
        version=version,
        language=language,
        provenance=TranslationProvenance.MACHINE,
        writer=writer,
        **{**SPANISH, **content},
    )


@pytest.fixture
def version():
    return current_version(
        MetricFactory(
            name="Suggests a step of their own",
            criterion="The assistant suggests a step the user can take on their own.",
            failure_condition="No step is suggested.",
        )
    )


# --- writing -----------------------------------------------------------------------------------


def test_a_native_text_needs_a_writer_who_reads_the_language(version, researcher):
    with pytest.raises(ApplicationError, match="needs a reader of Spanish"):
        metric_version_text_save(
            version=version, language="es", provenance="native", writer=researcher, **SPANISH
        )
    reader(researcher, "es")
    text = metric_version_text_save(
        version=version, language="ES", provenance="native", writer=researcher, **SPANISH
    )
    assert (text.language, text.provenance, text.written_by) == ("es", "native", researcher)
    assert text.is_shown_publicly
    assert not text.is_frozen


def test_a_machine_translation_needs_no_reader_but_a_role(version, researcher, contributor):
    text = machine_text(version, researcher)
    assert text.provenance == TranslationProvenance.MACHINE
    assert not text.is_shown_publicly
    with pytest.raises(ApplicationError, match="Only researchers, maintainers"):
        machine_text(version, contributor, language="fr")
    with pytest.raises(ApplicationError, match="Say whether"):
        metric_version_text_save(
            version=version,
            language="fr",
            provenance=TranslationProvenance.MACHINE_REVIEWED,
            writer=researcher,
            **SPANISH,
        )


def test_the_versions_own_language_is_refused(version, researcher):
    with pytest.raises(ApplicationError, match="itself written in English"):
        machine_text(version, researcher, language="en")
    with pytest.raises(ApplicationError, match="not a language tag"):
        machine_text(version, researcher, language="spanish")
    assert not MetricVersionText.objects.exists()


def test_one_text_per_language_saving_again_edits_it(version, researcher):
    first = machine_text(version, researcher)
    again = machine_text(version, researcher, name="Propone un paso propio")
    assert again.pk == first.pk
    assert again.name == "Propone un paso propio"
    assert MetricVersionText.objects.count() == 1
    # The database refuses a second row for the same language whatever writes it.
    with pytest.raises(IntegrityError), transaction.atomic():
        MetricVersionText.objects.create(
            metric_version=version, language="es", name="x", criterion="y"
        )


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("name", "Sugiere\x00 un paso", "control character"),
        ("criterion", "El asistente\x07 sugiere", "control character"),
        ("failure_condition", "Nada\x1b", "control character"),
        ("name", "Dos\nlíneas", "single line"),
        ("name", "Oculto\u202egpj.exe", "invisible direction"),
        ("criterion", "   ", "required"),
    ],
)
def test_hostile_or_missing_text_is_refused(version, researcher, field, value, message):
    with pytest.raises(ApplicationError, match=message):
        machine_text(version, researcher, **{field: value})
    assert not MetricVersionText.objects.exists()


# --- review and freezing ------------------------------------------------------------------


def test_a_reviewer_must_read_the_language_and_not_be_the_writer(
    version, researcher, expert_reviewer
):
    text = machine_text(version, researcher)
    with pytest.raises(ApplicationError, match="Only an expert reviewer"):
        metric_version_text_review(text=text, reviewer=reader(researcher, "es"))
    with pytest.raises(ApplicationError, match="needs a reader of Spanish"):
        metric_version_text_review(text=text, reviewer=expert_reviewer)
    own = machine_text(version, reader(expert_reviewer, "es"), language="es-MX")
    with pytest.raises(ApplicationError, match="You wrote this text"):
        metric_version_text_review(text=own, reviewer=expert_reviewer)
    reviewed = metric_version_text_review(text=text, reviewer=expert_reviewer)
    assert reviewed.provenance == TranslationProvenance.MACHINE_REVIEWED
    assert reviewed.reviewed_by == expert_reviewer
    assert reviewed.reviewed_at is not None
    with pytest.raises(ApplicationError, match="already been reviewed"):
        metric_version_text_review(text=text, reviewer=expert_reviewer)


def test_a_native_text_has_nothing_to_review(version, researcher, expert_reviewer):
    text = metric_version_text_save(
        version=version,
        language="es",
        provenance="native",
        writer=reader(researcher, "es"),
        **SPANISH,
    )
    with pytest.raises(ApplicationError, match="written natively"):
        metric_version_text_review(text=text, reviewer=reader(expert_reviewer, "es"))


def test_a_reviewed_text_is_frozen_until_reopened_by_a_reader(version, researcher, expert_reviewer):
    text = machine_text(version, researcher)
    metric_version_text_review(text=text, reviewer=reader(expert_reviewer, "es"))
    with pytest.raises(ApplicationError, match="reviewed and is frozen"):
        machine_text(version, researcher, name="Otro nombre")
    with pytest.raises(ApplicationError, match="needs a reader of Spanish"):
        metric_version_text_reopen(text=text, user=researcher)
    reopened = metric_version_text_reopen(text=text, user=expert_reviewer)
    assert reopened.provenance == TranslationProvenance.MACHINE
    assert reopened.reviewed_by is None
    assert reopened.reviewed_at is None
    assert metric_version_text(version, "es").is_fallback  # off the public pages again
    edited = machine_text(version, researcher, name="Otro nombre")
    assert edited.name == "Otro nombre"
    with pytest.raises(ApplicationError, match="not reviewed"):
        metric_version_text_reopen(text=edited, user=expert_reviewer)


def test_the_database_keeps_review_and_provenance_together(version):
    with pytest.raises(IntegrityError), transaction.atomic():
        MetricVersionText.objects.create(
            metric_version=version,
            language="es",
            name="x",
            criterion="y",
            provenance="machine_reviewed",
        )


def test_the_workspace_list_says_who_may_review(version, researcher, expert_reviewer):
    text = machine_text(version, researcher)
    listed = metric_version_text_list(version, expert_reviewer).get()
    assert not text_reviewable_by(listed, expert_reviewer)  # does not read Spanish yet
    reader(expert_reviewer, "es")
    listed = metric_version_text_list(version, expert_reviewer).get()
    assert listed.pk == text.pk
    assert text_reviewable_by(listed, expert_reviewer)
    assert not text_reviewable_by(metric_version_text_list(version, researcher).get(), researcher)


# --- what a reader is shown ----------------------------------------------------------------


def public_text(version, language, provenance="native", writer=None, **content):
    writer = writer or reader(UserFactory(roles=["Researcher"]), language)
    return metric_version_text_save(
        version=version,
        language=language,
        provenance=provenance,
        writer=writer,
        **{**SPANISH, **content},
    )


def test_the_exact_tag_wins_then_the_primary_language(version):
    public_text(version, "es", name="Nombre en español")
    public_text(version, "es-MX", name="Nombre en español de México")
    assert metric_version_text(version, "es-MX").name == "Nombre en español de México"
    shown = metric_version_text(version, "es-AR")
    assert shown == ShownText(
        name="Nombre en español",
        criterion=SPANISH["criterion"],
        failure_condition=SPANISH["failure_condition"],
        language="es",
        is_fallback=False,
    )


def test_another_regions_text_comes_before_the_original(version):
    public_text(version, "es-MX", name="Nombre en español de México")
    public_text(version, "es-ES", name="Nombre en español de España")
    # No text in the reader's tag or primary language: the first regional form, alphabetically.
    for reader_tag in ("es", "es-AR"):
        shown = metric_version_text(version, reader_tag)
        assert (shown.name, shown.language, shown.is_fallback) == (
            "Nombre en español de España",
            "es-ES",
            False,
        )
        assert metric_version_texts([version], reader_tag)[version.pk] == shown
    assert metric_version_text(version, "es-MX").language == "es-MX"
    # Another language's regional forms are never taken for the reader's.
    portuguese = metric_version_text(version, "pt")
    assert (portuguese.language, portuguese.is_fallback) == ("en", True)


def test_without_a_text_the_original_is_shown_as_a_fallback(version):
    shown = metric_version_text(version, "es")
    assert (shown.name, shown.language, shown.is_fallback) == (version.name, "en", True)
    own = metric_version_text(version, "en-GB")
    assert (own.name, own.language, own.is_fallback) == (version.name, "en", False)


def test_an_unreviewed_machine_translation_is_not_shown(version, researcher, expert_reviewer):
    text = machine_text(version, researcher)
    assert metric_version_text(version, "es").name == version.name
    metric_version_text_review(text=text, reviewer=reader(expert_reviewer, "es"))
    shown = metric_version_text(version, "es")
    assert (shown.name, shown.is_fallback) == (SPANISH["name"], False)


def test_the_page_language_is_the_default_reader(version):
    from django.utils import translation

    public_text(version, "es")
    with translation.override("es"):
        assert metric_version_text(version).name == SPANISH["name"]
    assert metric_version_text(version).name == version.name


def test_a_list_reads_every_text_in_one_query(django_assert_num_queries, researcher):
    author = researcher
    versions = [current_version(MetricFactory(created_by=author)) for _ in range(4)]
    reader(author, "es")
    for v in versions[:2]:
        public_text(v, "es", writer=author, name=f"Métrica {v.pk}")
    with django_assert_num_queries(1):
        shown = metric_version_texts(versions, "es")
    assert [shown[v.pk].is_fallback for v in versions] == [False, False, True, True]
    assert shown[versions[0].pk].name == f"Métrica {versions[0].pk}"
    # A reader of the versions' own language needs no query at all.
    with django_assert_num_queries(0):
        assert not metric_version_texts(versions, "en")[versions[3].pk].is_fallback


def test_the_metric_list_finds_a_metric_by_its_shown_text(version, researcher):
    from metrics_registry.selectors import metric_list

    text = machine_text(version, researcher)
    # An unreviewed translation is not shown, so it is not searched either.
    assert not metric_list(user=None, search="propio").exists()
    reviewer = reader(UserFactory(roles=["Expert Reviewer"]), "es")
    metric_version_text_review(text=text, reviewer=reviewer)
    assert list(metric_list(user=None, search="propio")) == [version.metric]
    assert list(metric_list(user=None, search="puede dar por su cuenta")) == [version.metric]
