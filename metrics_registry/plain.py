"""The release pages' plain first sentence, from the page's own count (no query)."""

from __future__ import annotations

from django.utils.translation import gettext, ngettext

from core.plain import Lead


def release_lead(release_version: str, n_metrics: int, published: bool) -> Lead:
    """A release page: a fixed list of tests, and where its results are."""
    text = ngettext(
        "Release %(version)s is a fixed list of %(n)s test: each checks one behaviour of an AI "
        "model, good or bad, in simulated conversations.",
        "Release %(version)s is a fixed list of %(n)s tests: each checks one behaviour of an AI "
        "model, good or bad, in simulated conversations.",
        n_metrics,
    ) % {"version": release_version, "n": n_metrics}
    if not published:
        text += " " + gettext("It is a draft: nothing from it is public yet.")
    return Lead(text)
