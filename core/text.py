"""Shortening text for people: on word boundaries, never mid-word."""

import textwrap


def shorten_words(text: str, width: int) -> str:
    """At most `width` characters, cut at a word boundary and marked with an ellipsis."""
    return textwrap.shorten(text, width=width, placeholder=" …")
