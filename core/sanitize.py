"""The one place user-written text is cleaned, for display and for prompts.

nh3 (Rust's ammonia) replaces bleach, which is unmaintained.
"""

import re

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
# What may sit between "<" and the tag name without a model ignoring the tag: whitespace,
# slashes, control characters and invisible format characters (zero-width, BOM, bidi marks).
_GAP = rf"[\s{_SLASHES}\x00-\x1f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]*"
_TAG_START = re.compile(rf"[{_TAG_OPENERS}](?={_GAP}[^\W\d])")
_LABEL = re.compile(r"^[a-z][a-z_]*$")


def neutralise_tags(text: str) -> str:
    """`text` with every tag-like "<" (or look-alike) written as "&lt;"; other text unchanged."""
    return _TAG_START.sub("&lt;", text or "")


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
