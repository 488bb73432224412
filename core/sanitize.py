"""The one place user-written text is cleaned, for display and for prompts.

nh3 (Rust's ammonia) replaces bleach, which is unmaintained.
"""

import re
import unicodedata

import nh3

# Enough for formatted prose in submissions and comments; nothing that runs or loads.
ALLOWED_TAGS = {
    "p",
    "br",
    "strong",
    "em",
    "b",
    "i",
    "ul",
    "ol",
    "li",
    "blockquote",
    "code",
    "pre",
    "a",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}}
ALLOWED_URL_SCHEMES = {"http", "https", "mailto"}


def sanitize_html(text: str) -> str:
    """Keep harmless formatting, drop scripts, event handlers and unknown tags."""
    return nh3.clean(
        text or "",
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=ALLOWED_URL_SCHEMES,
        link_rel="nofollow noopener noreferrer",
    )


def strip_tags(text: str) -> str:
    """Plain text with every tag removed and entities left escaped (safe to render)."""
    return nh3.clean(text or "", tags=set())


# Characters a model may read as the "<" or "/" of a tag: ASCII and its look-alikes
# (fullwidth, small, angle brackets, modifier letters, Canadian syllabics, division slashes).
_TAG_OPENERS = "<\uff1c\ufe64\u2039\u3008\u2329\u27e8\u276e\u02c2\u1438"
_SLASHES = "/\\\u2215\u2044\uff0f\u29f8\u2571"
_OPENER = re.compile(f"[{_TAG_OPENERS}]")
# What may sit between "<" and the tag name without a model ignoring the tag: every character
# of the space, control, format, mark, surrogate, private-use and unassigned categories (bidi
# isolates, zero-width and tag characters, variation selectors, combining marks...), by Unicode
# category rather than by list, plus slashes and the blank symbols that render as nothing.
GAP_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn", "Mn", "Mc", "Me"})
_BLANK_SYMBOLS = "\u2800"  # BRAILLE PATTERN BLANK (So)
_LABEL = re.compile(r"^[a-z][a-z_]*$")


def _is_gap(char: str) -> bool:
    return (
        char in _SLASHES or char in _BLANK_SYMBOLS or unicodedata.category(char) in GAP_CATEGORIES
    )


def neutralise_tags(text: str) -> str:
    """`text` with every tag-like "<" (or look-alike) written as "&lt;"; other text unchanged.

    Tag-like: after the "<" and any run of gap characters comes a letter (or "_"), the start of
    a name. "3 < 4", "x <= y" and "a<-b" stay as written.
    """
    text = text or ""
    parts, start = [], 0
    for match in _OPENER.finditer(text):
        i = match.end()
        while i < len(text) and _is_gap(text[i]):
            i += 1
        if i < len(text) and (text[i].isalpha() or text[i] == "_"):
            parts += [text[start : match.start()], "&lt;"]
            start = match.end()
    parts.append(text[start:])
    return "".join(parts)


def fence_user_text(text: str, *, label: str) -> str:
    """Delimit user text inside a prompt so the model reads it as data, not as instructions.

    No tag of any name can open or close inside the text: every "<" (or look-alike) that starts
    something tag-like — whatever the case, spacing, slash or invisible characters before the
    name — is written as "&lt;". So neither a closing tag of this fence ("</BEHAVIOR>",
    "</ behavior >") nor a complete fake block of another fence survives. Deterministic, so
    identical material gives identical prompts (the response cache and the offline model rely
    on that).
    """
    if not _LABEL.match(label):
        raise ValueError(f"Fence labels are lowercase words: {label!r}")
    return f"<{label}>\n{neutralise_tags(text)}\n</{label}>"
