"""Language tags (BCP 47) on content: one check and one spelling for every app.

A tag names the language text is written in: `en`, `es`, `pt-BR`, `zh-Hans`, `hi`. The check
covers the tag shapes content uses — a language, then an optional script, region and variants
(RFC 5646 §2.1) — without the IANA registry, so `xx` passes while `english` or `en-` does not.
Case is normalised as RFC 5646 §2.1.1 recommends: language and variants lowercase, script in
title case, region in uppercase (`PT-br` → `pt-BR`, `zh-hans` → `zh-Hans`); an underscore
(`pt_BR`, as many files write it) is read as a hyphen.
"""

import re
from collections.abc import Iterable

from django.conf.locale import LANG_INFO
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.text import get_text_list
from django.utils.translation import get_language, gettext, gettext_lazy
from django.utils.translation import gettext as _

DEFAULT_LANGUAGE = "en"
# The stored column's width: enough for language-script-region (`zh-Hans-CN` is 10).
LANGUAGE_TAG_MAX_LENGTH = 16

# ISO 639 codes only: RFC 5646's 5–8 letter language subtags are reserved and none is
# registered, so accepting them would let `english` or `spanish` pass as tags.
_LANGUAGE = re.compile(r"^[a-z]{2,3}$")
_SCRIPT = re.compile(r"^[a-z]{4}$")
_REGION = re.compile(r"^[a-z]{2}$|^[0-9]{3}$")
_VARIANT = re.compile(r"^[a-z0-9]{5,8}$|^[0-9][a-z0-9]{3}$")


def _subtags_normalize(subtags: list[str]) -> list[str] | None:
    """The subtags in their standard case, or None when they do not form a tag."""
    if not subtags or not _LANGUAGE.match(subtags[0]):
        return None
    normalised = [subtags[0]]
    rest = subtags[1:]
    if rest and _SCRIPT.match(rest[0]):
        normalised.append(rest.pop(0).title())
    if rest and _REGION.match(rest[0]):
        normalised.append(rest.pop(0).upper())
    for variant in rest:
        if not _VARIANT.match(variant):
            return None
        normalised.append(variant)
    return normalised


class TranslationProvenance(models.TextChoices):
    """How text in one language came to be: every app that keeps translated content (scenarios,
    a metric version's texts) records it with these values, so one rule reads them all."""

    NATIVE = "native", gettext_lazy("Written natively")
    MACHINE = "machine", gettext_lazy("Machine-translated, not reviewed")
    MACHINE_REVIEWED = "machine_reviewed", gettext_lazy("Machine-translated and reviewed")


def language_tag_problem(raw: str) -> str | None:
    """Why `raw` is not a language tag, in words a person can act on, or None."""
    tag = (raw or "").strip()
    if not tag:
        return _("Give a language tag such as en, es, pt-BR or zh-Hans.")
    if len(tag) > LANGUAGE_TAG_MAX_LENGTH:
        return _(
            "“%(tag)s” is not a language tag: a tag has at most %(limit)d characters, "
            "such as en, es, pt-BR or zh-Hans."
        ) % {"tag": tag[:20], "limit": LANGUAGE_TAG_MAX_LENGTH}
    if _subtags_normalize(tag.replace("_", "-").lower().split("-")) is None:
        return _(
            "“%(tag)s” is not a language tag: write a language code, then an optional script "
            "and region, such as en, es, pt-BR or zh-Hans."
        ) % {"tag": tag}
    return None


def language_tag_normalize(raw: str) -> str:
    """`raw` in its standard spelling (`PT_br` → `pt-BR`); ValidationError if it is no tag."""
    if problem := language_tag_problem(raw):
        raise ValidationError(problem, code="language_tag")
    subtags = _subtags_normalize(raw.strip().replace("_", "-").lower().split("-"))
    assert subtags is not None  # noqa: S101 - language_tag_problem checked it
    return "-".join(subtags)


def validate_language_tag(value: str) -> None:
    """Model and form field validator: the value must be a tag in its standard spelling."""
    normalised = language_tag_normalize(value)
    if normalised != value:
        raise ValidationError(
            _("Write the language tag as %(tag)s."), code="language_tag", params={"tag": normalised}
        )


def language_primary(tag: str) -> str:
    """The language subtag alone (`pt-BR` → `pt`), to match a reader of Portuguese."""
    return tag.split("-", 1)[0].lower()


# Reader languages that write the names of languages in lower case (CLDR's usage).
LOWER_CASE_LANGUAGE_NAMES = frozenset(
    {"ca", "cs", "da", "es", "fi", "fr", "it", "nb", "nn", "no", "pl", "pt", "ro", "ru", "sv", "uk"}
)


def language_display_name(tag: str) -> str:
    """`en` → "English", `pt-BR` → "Brazilian Portuguese"; an unknown tag is shown as given."""
    tag = str(tag or "").strip()
    info = LANG_INFO.get(tag.lower()) or LANG_INFO.get(language_primary(tag))
    if info and "name" in info:
        # Django's own catalogue translates its language names into the reader's language,
        # capitalised as a label; these languages write them in lower case within a sentence
        # ("conversaciones en español"), where most of our uses put them.
        name = gettext(info["name"])
        if language_primary(get_language() or "") in LOWER_CASE_LANGUAGE_NAMES:
            return name[:1].lower() + name[1:]
        return name
    return tag


def languages_pooled_note(tags: Iterable[str]) -> str:
    """How a figure over items in several languages says so: "pooled across English and
    Spanish items". Every pooled agreement or rate figure names its languages with this."""
    names = get_text_list([language_display_name(tag) for tag in tags], gettext("and"))
    return gettext("pooled across %(languages)s items") % {"languages": names}


def text_fallback_note(shown: Iterable[str], reader: str | None = None) -> str:
    """What a page says when expert content is shown in another language than the reader's:
    "Shown in English: no Spanish version yet." ``shown`` holds the tags of what is shown
    (several on a list page); ``reader`` defaults to the page's language."""
    reader = reader or get_language() or DEFAULT_LANGUAGE
    names = get_text_list(
        [language_display_name(tag) for tag in dict.fromkeys(shown)], gettext("and")
    )
    return gettext("Shown in %(shown)s: no %(reader)s version yet.") % {
        "shown": names,
        "reader": language_display_name(language_primary(reader)),
    }
