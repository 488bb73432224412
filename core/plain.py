"""What a public page says first: one plain sentence, and the evidence behind it.

Each app writes its own pages' sentences from their figures (`results.plain`,
`metrics_registry.plain`); the shape lives here so that every page's lead renders through one
include (`results/_plain_lead.html`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lead:
    """What a page says first, and the evidence behind it for "how we know"."""

    sentence: str
    how: tuple[str, ...] = ()
