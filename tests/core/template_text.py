"""Text a person reads in a template that is not inside a translation tag.

`makemessages` collects only what `{% translate %}` and `{% blocktranslate %}` hold, so a bare
sentence in a template never reaches the catalogue and the catalogue checks cannot see it. This
walks a template with Django's own lexer: the text between tags (outside blocktranslate and
comment blocks, scripts, styles and code), and the attributes a person reads (title, alt,
placeholder, aria-label), must hold no word.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from django.template.base import Lexer, TokenType

# Code, not prose: scripts, styles and code shown to be copied (an embed snippet) stay as written.
UNREAD_ELEMENTS = {"script", "style", "code", "pre", "kbd", "samp"}
READ_ATTRIBUTES = {"title", "alt", "placeholder", "aria-label", "aria-description"}
# A word: two letters in a row, in any script. Numbers, punctuation, separators ("·", "—") and
# HTML entities say nothing a translator must see.
WORD = re.compile(r"[^\W\d_]{2,}")
# Product and standard names kept as written in every language.
UNTRANSLATED_NAMES = {"ImpactBench", "CSV", "JSON", "JSONL", "PDF", "PNG", "SVG", "API", "URL"}
TEMPLATE_VARIABLE = "\x00"
# An attribute that is one short code ("es", "MX" as a placeholder) is an example, not prose.
CODE = re.compile(r"^[A-Za-z]{2,3}$")  # stands for a {{ … }} or a tag inside an attribute value


# A link's address shown as its text ("/label/3/?run=5&age=teen"): its parameter names are code.
QUERY_PARAMETER = re.compile(r"[?&][A-Za-z_]+=")


def _words(text: str) -> list[str]:
    text = QUERY_PARAMETER.sub(" ", text)
    return [word for word in WORD.findall(text) if word not in UNTRANSLATED_NAMES]


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._skipping = 0  # inside one of UNREAD_ELEMENTS

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in UNREAD_ELEMENTS:
            self._skipping += 1
        for name, value in attrs:
            if name in READ_ATTRIBUTES and value and not CODE.match(value) and _words(value):
                shown = " ".join(value.replace(TEMPLATE_VARIABLE, "…").split())
                self.found.append(f'{name}="{shown}"')

    def handle_endtag(self, tag: str) -> None:
        if tag in UNREAD_ELEMENTS and self._skipping:
            self._skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self._skipping and _words(data):
            self.found.append(" ".join(data.replace(TEMPLATE_VARIABLE, "…").split()))


def bare_text(source: str) -> list[str]:
    """The pieces of readable text in template `source` that no translation tag holds."""
    skipping: list[str] = []  # the open blocktranslate / comment / verbatim blocks
    parts: list[str] = []
    for token in Lexer(source).tokenize():
        if token.token_type == TokenType.BLOCK:
            name = token.contents.split(maxsplit=1)[0] if token.contents else ""
            if name in {"blocktranslate", "blocktrans", "comment", "verbatim"}:
                skipping.append(name)
            elif name.startswith("end") and skipping and name[3:] == skipping[-1]:
                skipping.pop()
            elif not skipping:
                # A space, not a placeholder: an {% if %} inside a start tag (`<td{% if … %}
                # class="…"{% endif %}>`) must leave a tag the HTML parser still reads.
                parts.append(" ")
        elif token.token_type == TokenType.VAR and not skipping:
            # Spaced: `<td{{ shown|text_lang }}>` writes attributes into the tag.
            parts.append(f" {TEMPLATE_VARIABLE} ")
        elif token.token_type == TokenType.TEXT and not skipping:
            parts.append(token.contents)
    reader = _Reader()
    reader.feed("".join(parts))
    reader.close()
    return reader.found


def templates_bare_text(paths: list[Path]) -> dict[str, list[str]]:
    """`bare_text` of each template in `paths` that has any, by path."""
    found = {}
    for path in paths:
        pieces = bare_text(path.read_text(encoding="utf-8"))
        if pieces:
            found[str(path)] = pieces
    return found
