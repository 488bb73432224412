"""Reading a metric version's expert content in a reader's language.

The rule every public page and the label follow: show the reader's language when a text a
reader of it wrote or reviewed exists — the exact tag first, then the reader's primary
language (an `es-MX` reader gets the `es` text), then another region's form of it (an `es` or
`es-AR` reader gets the `es-MX` text when it is the only Spanish one; the first tag in
alphabetical order when there are several) — and otherwise the version's own text, marked
as a fallback so the page can say so and set `lang` on it. The version's own text counts as the
reader's language when its tag matches the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import BooleanField, Exists, OuterRef, Prefetch, Q, QuerySet, Value
from django.utils.translation import get_language

from core.languages import DEFAULT_LANGUAGE, TranslationProvenance, language_primary
from core.models import ReaderLanguage
from core.pagecache import latest
from core.roles import Role, user_has_role

from .models import MetricVersion, MetricVersionText


@dataclass(frozen=True)
class ShownText:
    """What a reader is shown of a version: its name, criterion and failure condition in
    `language`; `is_fallback` when that is not the reader's language."""

    name: str
    criterion: str
    failure_condition: str
    language: str
    is_fallback: bool


def reader_language() -> str:
    """The language the current request is read in (the page's language)."""
    return get_language() or DEFAULT_LANGUAGE


def _pick(version: MetricVersion, texts: Iterable[MetricVersionText], reader: str) -> ShownText:
    primary = language_primary(reader)
    by_language = {text.language: text for text in texts}
    own_primary = language_primary(version.language)
    if version.language != reader:
        exact = by_language.get(reader)
        if exact is not None:
            return _shown(exact, fallback=False)
        if own_primary != primary:
            if (same := by_language.get(primary)) is not None:
                return _shown(same, fallback=False)
            regional = sorted(tag for tag in by_language if language_primary(tag) == primary)
            if regional:
                return _shown(by_language[regional[0]], fallback=False)
    return ShownText(
        name=version.name,
        criterion=version.criterion,
        failure_condition=version.failure_condition,
        language=version.language,
        is_fallback=own_primary != primary,
    )


def _shown(text: MetricVersionText, *, fallback: bool) -> ShownText:
    return ShownText(
        name=text.name,
        criterion=text.criterion,
        failure_condition=text.failure_condition,
        language=text.language,
        is_fallback=fallback,
    )


def _public_texts(version_ids: list[int], reader: str) -> QuerySet[MetricVersionText]:
    """The public texts that could be shown to `reader`: its exact tag, its primary language
    or another region's form of that language."""
    primary = language_primary(reader)
    return MetricVersionText.objects.shown_publicly().filter(
        Q(language__in={reader, primary}) | Q(language__istartswith=f"{primary}-"),
        metric_version_id__in=version_ids,
    )


def metric_version_text(version: MetricVersion, language: str | None = None) -> ShownText:
    """`version` as a reader of `language` (default: the page's language) is shown it.
    One query, none when the version is already in the reader's exact language."""
    reader = language or reader_language()
    if version.language == reader:
        return _pick(version, (), reader)
    return _pick(version, _public_texts([version.pk], reader), reader)


def metric_version_texts(
    versions: Iterable[MetricVersion], language: str | None = None
) -> dict[int, ShownText]:
    """`metric_version_text` for many versions (a list page), by version id: one query."""
    versions = list(versions)
    reader = language or reader_language()
    found: dict[int, list[MetricVersionText]] = {}
    if any(v.language != reader for v in versions):
        for text in _public_texts([v.pk for v in versions], reader):
            found.setdefault(text.metric_version_id, []).append(text)
    return {v.pk: _pick(v, found.get(v.pk, ()), reader) for v in versions}


def public_texts_prefetch(lookup: str) -> Prefetch:
    """Prefetch the texts shown publicly along `lookup` (ending in a version's `texts`) into
    `public_texts`, by language (the API's metric detail)."""
    return Prefetch(
        lookup,
        queryset=MetricVersionText.objects.shown_publicly().order_by("language"),
        to_attr="public_texts",
    )


# --- the researchers' workspace ------------------------------------------------------------------


def metric_version_text_list(
    version: MetricVersion, user: AbstractBaseUser | AnonymousUser
) -> QuerySet[MetricVersionText]:
    """Every text of `version`, reviewed or not, with who wrote and reviewed it, and whether
    `user` reads its language (`user_reads`): one query."""
    reads = (
        Exists(ReaderLanguage.objects.filter(user=user).reading(OuterRef("language")))
        if user.is_authenticated
        else Value(False, output_field=BooleanField())
    )
    return (
        version.texts.select_related("written_by", "reviewed_by")
        .annotate(user_reads=reads)
        .order_by("language")
    )


def text_reviewable_by(text: MetricVersionText, user: AbstractBaseUser | AnonymousUser) -> bool:
    """Whether `user` may review `text` now (to offer the button); `text` comes from
    `metric_version_text_list` for that user."""
    return (
        text.provenance == TranslationProvenance.MACHINE
        and user_has_role(user, Role.EXPERT_REVIEWER)
        and text.written_by_id != user.pk
        and bool(getattr(text, "user_reads", False))
    )


def metric_texts_stamp_sql() -> str:
    """The page cache's stamp part over texts: a text added, edited, reviewed or reopened
    changes what the public pages show."""
    table = MetricVersionText._meta.db_table
    return f"(SELECT COUNT(*) || '.' || {latest('updated_at')} FROM {table})"  # noqa: S608
