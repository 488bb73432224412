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
from ..models import AnchorCoverage, AnchorRecheck, Conversation, Turn
from ..schemas import AnchorCoverageCheck
from .claims import Claim
from .judging import quote_found
from .scenarios import anchors_fit
from .simulation import conversation_attribution, conversation_seed
from .steps import Ask, Steps, Store, drive_sync

logger = logging.getLogger(__name__)


# The second, independent check (`AnchorRecheck`) runs where the consistency figures are
# published: runs with replicates (an anchor study). A run simulating each scenario once has
# no consistency figure the checker's noise could inflate, so it is not charged the call.
RECHECK_MIN_REPLICATES = 2


def _readings(
    result,
    *,
    anchors: list[dict],
    by_turn: dict[int, str],
    model: type,
    conversation,
    with_text: bool,
) -> list:
    by_number = {answer.anchor: answer for answer in result.output.anchors}
    rows = []
    for number, anchor in enumerate(anchors, start=1):
        answer = by_number.get(number)
        raised = bool(answer and answer.raised)
        turn = answer.turn if raised and answer.turn in by_turn else None
        quote = (answer.quote or "").strip() if raised else ""
        rows.append(
            model(
                conversation=conversation,
                anchor_index=number - 1,
                raised=raised,
                turn=turn,
                quote=quote[:2000],
                quote_found=bool(turn and quote and quote_found(quote, by_turn[turn])),
                is_offline=result.is_offline,
                **({"anchor_text": anchor["text"]} if with_text else {}),
            )
        )
    return rows


def anchor_steps(*, conversation: Conversation, turns: list[Turn]) -> Steps:
    """Ask for and yield the coverage of every anchor (the caller checked none is stored);
    in a run with replicates, ask a second time, independently, and yield that too."""
    run = conversation.run
    # The anchors as fitted to the run's length: the same list the simulator was given (or,
    # without anchors, would have been given).
    anchors = anchors_fit(conversation.scenario.anchors or [], turns=run.turns)
    if not anchors or not turns:
        return []
    messages = prompts.anchor_check_messages(
        anchors=anchors, turns=turns, language=conversation.scenario.language
    )
    seed = stable_seed(conversation_seed(conversation), "anchors")
    try:
        result = yield Ask(
            configuration=run.judge,
            messages=messages,
            schema=AnchorCoverageCheck,
            role=ModelRole.JUDGE,
            purpose="evaluations.anchor_check",
            seed=seed,
        )
    except LLMError as error:
        # Unusable output or an endpoint error alike: the figure counts it as unchecked.
        logger.warning("Anchor check of conversation %s failed: %s", conversation.pk, error)
        return []
    second = None
    if run.replicates >= RECHECK_MIN_REPLICATES:
        try:
            # Same prompt, another seed: what differs between the two is the checker's noise.
            second = yield Ask(
                configuration=run.judge,
                messages=messages,
                schema=AnchorCoverageCheck,
                role=ModelRole.JUDGE,
                purpose="evaluations.anchor_recheck",
                seed=stable_seed(seed, "recheck"),
            )
        except LLMError as error:
            # The noise figure counts the conversation as not rechecked; coverage still counts.
            logger.warning("Anchor recheck of conversation %s failed: %s", conversation.pk, error)
    by_turn = {turn.index: turn.user_text_clean for turn in turns}
    rows = _readings(
        result,
        anchors=anchors,
        by_turn=by_turn,
        model=AnchorCoverage,
        conversation=conversation,
        with_text=True,
    )
    stored = yield Store(rows=rows, calls={"call_ids": result.calls})
    if second is not None:
        again = _readings(
            second,
            anchors=anchors,
            by_turn=by_turn,
            model=AnchorRecheck,
            conversation=conversation,
            with_text=False,
        )
        yield Store(rows=again, calls={"call_ids": second.calls})
    return stored


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
