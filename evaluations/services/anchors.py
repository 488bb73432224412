"""Anchor coverage, measured: which of the scenario's anchors the simulated user actually raised.

`Turn.anchor_index` records the plan (which anchor was due at a turn), not what the simulator
wrote, so it cannot show a replicate that skipped or blurred an anchor. After the simulation a
model of the judge's family reads the user turns (and nothing else: not the persona, goals or
plan instructions) and answers per anchor: raised or not, at which turn, with a quote. Each
answer is stored as an `AnchorCoverage` row; replicate consistency is computed from those rows
(`results.services.anchors`).

The check measures, it does not decide a verdict: if its output stays unusable the
conversation goes on without coverage rows, and the consistency figure counts it as excluded.
"""

import logging

from core.rows import stable_seed
from llm.exceptions import LLMError
from llm.models import ModelRole

from .. import prompts
from ..models import AnchorCoverage, Conversation, Turn
from ..schemas import AnchorCoverageCheck
from .claims import Claim
from .judging import quote_found
from .scenarios import anchors_fit
from .simulation import conversation_attribution, conversation_seed
from .steps import Ask, Steps, Store, drive_sync

logger = logging.getLogger(__name__)


def anchor_steps(*, conversation: Conversation, turns: list[Turn]) -> Steps:
    """Ask for and yield the coverage of every anchor (the caller checked none is stored)."""
    run = conversation.run
    # The anchors as fitted to the run's length: the same list the simulator was given (or,
    # without anchors, would have been given).
    anchors = anchors_fit(conversation.scenario.anchors or [], turns=run.turns)
    if not anchors or not turns:
        return []
    try:
        result = yield Ask(
            configuration=run.judge,
            messages=prompts.anchor_check_messages(anchors=anchors, turns=turns),
            schema=AnchorCoverageCheck,
            role=ModelRole.JUDGE,
            purpose="evaluations.anchor_check",
            seed=stable_seed(conversation_seed(conversation), "anchors"),
        )
    except LLMError as error:
        # Unusable output or an endpoint error alike: the figure counts it as unchecked.
        logger.warning("Anchor check of conversation %s failed: %s", conversation.pk, error)
        return []
    by_number = {answer.anchor: answer for answer in result.output.anchors}
    by_turn = {turn.index: turn.user_text_clean for turn in turns}
    rows = []
    for number, anchor in enumerate(anchors, start=1):
        answer = by_number.get(number)
        raised = bool(answer and answer.raised)
        turn = answer.turn if raised and answer.turn in by_turn else None
        quote = (answer.quote or "").strip() if raised else ""
        rows.append(
            AnchorCoverage(
                conversation=conversation,
                anchor_index=number - 1,
                anchor_text=anchor["text"],
                raised=raised,
                turn=turn,
                quote=quote[:2000],
                quote_found=bool(turn and quote and quote_found(quote, by_turn[turn])),
                is_offline=result.is_offline,
            )
        )
    return (yield Store(rows=rows, calls={"call_ids": result.calls}))


def conversation_anchors_check(
    *, conversation: Conversation, claim: Claim | None = None
) -> list[AnchorCoverage]:
    """Check and store coverage of every anchor of the scenario; existing rows are kept."""
    conversation = Conversation.objects.select_related("run__judge", "scenario").get(
        pk=conversation.pk
    )
    if conversation.anchor_coverage.exists():
        return list(conversation.anchor_coverage.all())
    turns = list(conversation.turns.order_by("index"))
    with conversation_attribution(conversation, claim):
        drive_sync(anchor_steps(conversation=conversation, turns=turns), claim)
    return list(conversation.anchor_coverage.all())
