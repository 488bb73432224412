"""Hostile bytes stop at the edge: C0 control characters in text, and line breaks in one-line
fields (titles become email subjects and CSV cells).

PostgreSQL refuses NUL in text, SQLite stores it; neither is something a person typed. Tab,
line feed and carriage return are kept where text may span lines.
"""

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.http import QueryDict
from django.utils.deconstruct import deconstructible
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

# C0 controls except tab (09), line feed (0a) and carriage return (0d).
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
LINE_BREAKS = re.compile(r"[\r\n\u0085\u2028\u2029]")
# Characters that change how a one-line text is displayed without being seen: bidi embeddings,
# overrides, isolates and marks (U+202E shows "gpj.exe" as "exe.jpg"), zero-width spaces and
# joiners of words, invisible operators, the BOM and tag characters. The zero-width (non-)joiners
# U+200C/U+200D stay allowed: Persian, Indic scripts and emoji sequences need them.
DISPLAY_SPOOFING = re.compile(
    "[\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
    "\U000e0000-\U000e007f]"
)


def control_character_find(text: str) -> str | None:
    """A description of the first control character in `text` ("U+0000 at position 3"), or None."""
    match = CONTROL_CHARACTERS.search(text or "")
    if match is None:
        return None
    # Translators: which character, by its Unicode code point, and where (counted from 1).
    return _("%(code_point)s at position %(position)d") % {
        "code_point": f"U+{ord(match.group()):04X}",
        "position": match.start() + 1,
    }


def display_spoofing_message(text: str) -> str | None:
    """Why a one-line text (a title, a name) is refused for hiding how it reads, or None."""
    match = DISPLAY_SPOOFING.search(text or "")
    if match is None:
        return None
    return _(
        "Contains an invisible direction or spacing character (%(code_point)s at position "
        "%(position)d) that changes how the text reads; remove it."
    ) % {"code_point": f"U+{ord(match.group()):04X}", "position": match.start() + 1}


def control_character_message(text: str) -> str | None:
    found = control_character_find(text)
    if found is None:
        return None
    return _("Contains a control character (%(found)s); remove it and try again.") % {
        "found": found
    }


def fields_control_character_message(data: QueryDict) -> str | None:
    """For the fields a view reads from ``request.POST`` itself (no form to show an error on):
    which field holds a control character, or None."""
    for key, values in data.lists():
        for text in (key, *values):
            if found := control_character_find(text):
                return _(
                    "The field %(key)r contains a control character (%(found)s); nothing was saved."
                ) % {"key": key, "found": found}
    return None


@deconstructible
class NoControlCharactersValidator:
    message = gettext_lazy("Contains a control character (%(found)s); remove it and try again.")
    code = "control_character"

    def __call__(self, value: object) -> None:
        if isinstance(value, str) and (found := control_character_find(value)):
            raise ValidationError(self.message % {"found": found}, code=self.code)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NoControlCharactersValidator)


@deconstructible
class SingleLineValidator:
    """One-line fields (titles, names): no line break, and nothing that disguises the text."""

    message = gettext_lazy("Must be a single line: remove the line break.")
    code = "line_break"

    def __call__(self, value: object) -> None:
        if isinstance(value, str) and LINE_BREAKS.search(value):
            raise ValidationError(self.message, code=self.code)
        if isinstance(value, str) and (problem := display_spoofing_message(value)):
            raise ValidationError(problem, code="display_spoofing")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleLineValidator)


no_control_characters = NoControlCharactersValidator()
single_line = SingleLineValidator()


def single_line_text(text: str) -> str:
    """`text` with every line break and control character turned into a space (email subjects)."""
    return " ".join(CONTROL_CHARACTERS.sub(" ", LINE_BREAKS.sub(" ", text or "")).split())


def text_max_length() -> int:
    """The documented cap on every free-text field (settings.TEXT_FIELD_MAX_LENGTH)."""
    return settings.TEXT_FIELD_MAX_LENGTH


def text_length_problem(text: str, *, what: str) -> str | None:
    """Why `text` is too long, or None; `what` names it in the reader's language."""
    limit = text_max_length()
    if isinstance(text, str) and len(text) > limit:
        return _("%(what)s is %(length)d characters long; at most %(limit)d are accepted") % {
            "what": what,
            "length": len(text),
            "limit": limit,
        }
    return None
