"""A judge's quoted evidence marked where it occurs in a transcript: one way for every page that
shows it (the public conversation page, the rater's judge-verdict screen)."""

from collections.abc import Iterable
from dataclasses import dataclass

from .models import Judgment
from .quote_text import quote_span


@dataclass
class Piece:
    text: str
    marked: bool = False
    note: str = ""


def mark_quotes(text: str, quotes: list[tuple[str, str]]) -> list[Piece]:
    """Split `text` into pieces, marking every (quote, note) found in it (first occurrence).

    Overlapping quotes merge into the earlier mark; quotes not found leave the text unmarked
    (the verdict lists them as unverified).
    """
    spans: list[tuple[int, int, str]] = []
    for quote, note in quotes:
        quote = quote.strip()
        if not quote:
            continue
        # Found as the evidence check finds it (Unicode forms, case, optional marks).
        span = quote_span(quote, text)
        if span is not None:
            spans.append((*span, note))
    spans.sort()
    pieces: list[Piece] = []
    pos = 0
    for start, end, note in spans:
        if start < pos:
            if pieces and pieces[-1].marked and end > pos:
                pieces[-1].text += text[pos:end]
                pos = end
            continue
        if start > pos:
            pieces.append(Piece(text[pos:start]))
        pieces.append(Piece(text[start:end], True, note))
        pos = end
    if pos < len(text):
        pieces.append(Piece(text[pos:]))
    return pieces


def judgment_quotes(judgments: Iterable[Judgment]) -> dict[int, list[tuple[str, str]]]:
    """Turn index -> (quote, "Judge reading N") of every quote the judgments cite."""
    quotes: dict[int, list[tuple[str, str]]] = {}
    for judgment in judgments:
        for item in judgment.evidence or []:
            if isinstance(item, dict) and item.get("quote"):
                turn = int(item.get("turn") or 0)
                quotes.setdefault(turn, []).append(
                    (str(item["quote"]), f"Judge reading {judgment.repetition + 1}")
                )
    return quotes
