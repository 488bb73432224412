"""Reading the languages people read.

The rule for someone who declared none: they read English (`DEFAULT_READER_LANGUAGE`). Most
raters read English and most content is written in it, so a rater who never opened the
"Languages you read" page still gets work; they are told on their screen that this is the
assumption, and how to change it.
"""

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db.models import Exists, OuterRef, Q

from .languages import DEFAULT_LANGUAGE, language_display_name
from .models import ReaderLanguage

DEFAULT_READER_LANGUAGE = DEFAULT_LANGUAGE


@dataclass(frozen=True)
class LanguagesRead:
    """The tags a person reads and whether they declared them or were given the default."""

    tags: tuple[str, ...]
    declared: bool

    @property
    def names(self) -> list[str]:
        return [language_display_name(tag) for tag in self.tags]

    @property
    def listed(self) -> str:
        """The names as a rater reads them in a sentence: English, Spanish."""
        return ", ".join(self.names)


def reader_languages_declared(*, user: User) -> list[ReaderLanguage]:
    """The languages `user` declared, in tag order."""
    return list(ReaderLanguage.objects.filter(user=user).order_by("language"))


def languages_read(*, user: User) -> LanguagesRead:
    """What `user` reads for routing: their declarations, or English when they made none."""
    tags = tuple(ReaderLanguage.objects.filter(user=user).values_list("language", flat=True))
    if tags:
        return LanguagesRead(tags=tags, declared=True)
    return LanguagesRead(tags=(DEFAULT_READER_LANGUAGE,), declared=False)


def reads_language_condition(*, user: User, field: str = "language") -> Q:
    """A filter on rows whose `field` holds a language tag: the rows `user` reads.

    Declared languages follow `ReaderLanguageQuerySet.reading` (a reader of `pt` reads
    `pt-BR`); a user with no declaration reads English (`en` and `en-*`). Both are subqueries
    of the filtered query, so routing by language costs no query of its own.
    """
    declared = ReaderLanguage.objects.filter(user=user)
    default = Q(**{field: DEFAULT_READER_LANGUAGE}) | Q(
        **{f"{field}__startswith": f"{DEFAULT_READER_LANGUAGE}-"}
    )
    return Q(Exists(declared.reading(OuterRef(field)))) | (~Q(Exists(declared)) & default)
