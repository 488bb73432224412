"""Finding a quoted phrase in the text it quotes, in any language. Plain Python.

A judge's quote is the transcript's words, but not always the same code points: a model may
send "está" composed (NFC) where the transcript holds it decomposed (NFD), straighten curly
quotes, leave out the Spanish opening "¿" and "¡", drop the direction marks that RTL text
carries, write a full-width comma as an ASCII one, or put a space into Chinese or Japanese
text, which has no spaces between words. Both sides are brought to one comparable form, and
every character of that form remembers where it came from, so a page can mark the original
words (`quote_span`) and a check can ask whether they are there (`quote_found`).

Letters themselves are never loosened: "esta" does not match "está" (a different word), and
case is folded as Unicode folds it. Only marks a writer may leave out are ignored: the opening
question and exclamation marks, the vowel points of Arabic and Hebrew, invisible controls.
"""

import re
import unicodedata

_QUOTE_MARKS = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "—": "-", "–": "-"})
_ELLIPSIS = re.compile(r"\.\.\.|…|\[\.\.\.\]")

_OPTIONAL = frozenset(
    "¿¡"
    # direction marks and embeddings of bidirectional text, zero-width characters, soft hyphen
    "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    "\u200b\u200c\u200d\u2060\ufeff\u00ad"
    # Arabic tatweel (a stretch, not a letter)
    "\u0640"
)


def _optional_mark(character: str) -> bool:
    """Arabic harakat and Hebrew points: vowel signs most text leaves out."""
    code = ord(character)
    return 0x064B <= code <= 0x0652 or 0x0591 <= code <= 0x05C7 or character in _OPTIONAL


# Scripts written without spaces between words.
UNSPACED_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR")


def unspaced(character: str) -> bool:
    return unicodedata.name(character, "").startswith(UNSPACED_SCRIPTS)


def _clusters(text: str) -> list[tuple[int, int, str]]:
    """(start, end, characters) of each base character with the combining marks after it."""
    clusters: list[tuple[int, int, str]] = []
    for index, character in enumerate(text):
        if clusters and unicodedata.combining(character) and not clusters[-1][2].isspace():
            start, _end, chars = clusters[-1]
            clusters[-1] = (start, index + 1, chars + character)
        else:
            clusters.append((index, index + 1, character))
    return clusters


def comparable(text: str) -> tuple[str, list[tuple[int, int]]]:
    """`text` in comparable form, and for each of its characters the span of `text` it
    stands for. Runs of whitespace become one space, none beside an unspaced-script letter."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    space_at: int | None = None
    for start, end, chars in _clusters(text):
        if chars.isspace():
            space_at = start if space_at is None else space_at
            continue
        folded = unicodedata.normalize("NFKC", chars).translate(_QUOTE_MARKS).casefold()
        folded = unicodedata.normalize("NFC", folded)
        kept = "".join(c for c in unicodedata.normalize("NFD", folded) if not _optional_mark(c))
        kept = unicodedata.normalize("NFC", kept)
        if not kept:
            continue
        if space_at is not None and out and not (unspaced(out[-1]) or unspaced(kept[0])):
            out.append(" ")
            spans.append((space_at, space_at + 1))
        space_at = None
        for character in kept:
            out.append(character)
            spans.append((start, end))
    return "".join(out), spans


def normalise_for_quotes(text: str) -> str:
    return comparable(text)[0]


def quote_span(quote: str, text: str) -> tuple[int, int] | None:
    """Where `quote` occurs in `text` (start, end in `text`), in the comparable form; quotes
    shortened with an ellipsis are found piece by piece, in order, and span all the pieces."""
    haystack, spans = comparable(text)
    pieces = [normalise_for_quotes(p).strip(" \"'") for p in _ELLIPSIS.split(quote)]
    pieces = [p for p in pieces if p]
    if not pieces:
        return None
    position = 0
    first = None
    for piece in pieces:
        found = haystack.find(piece, position)
        if found < 0:
            return None
        first = found if first is None else first
        position = found + len(piece)
    assert first is not None  # noqa: S101 - pieces is not empty
    return spans[first][0], spans[position - 1][1]


def quote_found(quote: str, turn_text: str) -> bool:
    """Whether `quote` occurs in the turn (see the module's notes on what is ignored)."""
    return quote_span(quote, turn_text) is not None
