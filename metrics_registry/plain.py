"""The release pages' plain first sentence, from the page's own count (no query)."""

from __future__ import annotations

from core.plain import Lead


def release_lead(release_version: str, n_metrics: int, published: bool) -> Lead:
    """A release page: a fixed list of tests, and where its results are."""
    state = "" if published else " It is a draft: nothing from it is public yet."
    return Lead(
        f"Release {release_version} is a fixed list of {n_metrics} test"
        f"{'s' if n_metrics != 1 else ''}: each checks one behaviour of an AI model, good or "
        f"bad, in simulated conversations.{state}"
    )
