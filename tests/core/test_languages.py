import pytest
from django.core.exceptions import ValidationError
from django.utils import translation

from core.exceptions import ApplicationError
from core.languages import (
    language_display_name,
    language_tag_normalize,
    language_tag_problem,
    languages_pooled_note,
    validate_language_tag,
)
from core.services import reader_language_declare, user_reads_language


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("en", "en"),
        ("ES", "es"),
        ("pt-br", "pt-BR"),
        ("PT_br", "pt-BR"),
        ("zh-hans", "zh-Hans"),
        ("ZH-HANS-cn", "zh-Hans-CN"),
        ("hi", "hi"),
        ("es-419", "es-419"),
        (" sl-rozaj ", "sl-rozaj"),
    ],
)
def test_tags_take_their_standard_case(raw, normalised):
    assert language_tag_normalize(raw) == normalised


@pytest.mark.parametrize("raw", ["english", "e", "en-", "pt-BR-x", "12", "en US", "a" * 17, ""])
def test_what_is_not_a_tag_is_refused_with_examples(raw):
    problem = language_tag_problem(raw)
    assert problem is not None
    assert "pt-BR" in problem
    with pytest.raises(ValidationError):
        language_tag_normalize(raw)


def test_the_field_validator_asks_for_the_standard_spelling():
    validate_language_tag("pt-BR")
    with pytest.raises(ValidationError, match="pt-BR"):
        validate_language_tag("pt-br")


@pytest.mark.django_db
def test_a_reader_of_a_language_reads_its_regional_forms(expert_reviewer):
    assert not user_reads_language(user=expert_reviewer, language="pt-BR")
    reader_language_declare(user=expert_reviewer, language="PT")
    reader_language_declare(user=expert_reviewer, language="pt")  # again: no second row
    assert expert_reviewer.reader_languages.count() == 1
    assert user_reads_language(user=expert_reviewer, language="pt-BR")
    assert user_reads_language(user=expert_reviewer, language="pt")
    assert not user_reads_language(user=expert_reviewer, language="es")
    with pytest.raises(ApplicationError, match="not a language tag"):
        reader_language_declare(user=expert_reviewer, language="portuguese")


@pytest.mark.parametrize(
    ("reader", "names", "pooled"),
    [
        ("en", ("English", "Spanish"), "pooled across English and Spanish items"),
        # Spanish writes language names in lower case, also inside a sentence.
        ("es", ("inglés", "español"), "agregadas sobre los elementos en inglés y español"),
    ],
)
def test_language_names_follow_the_readers_writing_of_them(reader, names, pooled):
    with translation.override(reader):
        assert (language_display_name("en"), language_display_name("es")) == names
        assert language_display_name("xx-unknown") == "xx-unknown"
        assert languages_pooled_note(["en", "es"]) == pooled
