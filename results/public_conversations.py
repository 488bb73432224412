"""Read side of the conversation pages: a conversation a reader may see, its transcript with
anchors and every judge's evidence marked where it occurs, and a run's list. Each function
runs a fixed number of queries (tests assert it)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet

from evaluations.evidence import Piece, judgment_quotes, mark_quotes
from evaluations.models import Conversation, EvaluationRun, Judgment, Turn
from metrics_registry.models import Subarea

from .selectors import public_conversations


@dataclass
class TurnView:
    turn: Turn
    anchor: dict | None
    user: list[Piece]
    assistant: list[Piece]


def conversation_for_reader(pk: int, *, include_private: bool = False) -> Conversation | None:
    """A conversation of a public run; maintainers and researchers may read any run's."""
    base = Conversation.objects.all() if include_private else public_conversations()
    return (
        base.select_related(
            "scenario__metric_version__metric__benchmark",
            "scenario__metric_version__label_category",
            "target",
            "run__release",
            "run__judge",
            "run__simulator",
            "fidelity__checker",
        )
        .prefetch_related(
            Prefetch("turns", queryset=Turn.objects.order_by("index")),
            Prefetch("judgments", queryset=Judgment.objects.order_by("repetition")),
            Prefetch(
                "scenario__metric_version__subareas",
                queryset=Subarea.objects.select_related("area"),
            ),
        )
        .filter(pk=pk)
        .first()
    )


def transcript(conversation: Conversation) -> list[TurnView]:
    """Turns with anchors attached and every judge's evidence quotes marked where they occur."""
    anchors = list(conversation.scenario.anchors or [])
    quotes = judgment_quotes(conversation.judgments.all())
    views = []
    for turn in conversation.turns.all():
        anchor = None
        if turn.anchor_index is not None and turn.anchor_index < len(anchors):
            anchor = anchors[turn.anchor_index]
        q = quotes.get(turn.index, [])
        views.append(
            TurnView(
                turn, anchor, mark_quotes(turn.user_text, q), mark_quotes(turn.assistant_text, q)
            )
        )
    return views


def run_conversation_list(run: EvaluationRun, *, status: str = "") -> QuerySet[Conversation]:
    conversations = Conversation.objects.filter(run=run)
    if status:
        conversations = conversations.filter(status=status)
    return conversations.select_related("scenario__metric_version__metric", "target").order_by(
        "scenario__metric_version__metric__key", "scenario__base_index", "target__name"
    )
