"""The one place user-written text is cleaned, for display and for prompts.

nh3 (Rust's ammonia) replaces bleach, which is unmaintained.
"""

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


def fence_user_text(text: str, *, label: str) -> str:
    """Delimit user text inside a prompt so the model reads it as data, not as instructions.

    The fence uses a label the text cannot close: any occurrence of the closing marker inside
    the text is neutralised first.
    """
    closing = f"</{label}>"
    body = (text or "").replace(closing, f"</ {label}>").replace(f"<{label}>", f"< {label}>")
    return f"<{label}>\n{body}\n{closing}"
