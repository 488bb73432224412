"""Simulating a conversation: the user simulator plays the persona, the target answers.

The two models see different worlds. The simulator gets the persona sheet, goals, the hidden
goal and the anchor plan, and sees the dialogue from the user's side (its own messages as
"assistant", the target's replies as "user"). The target gets only the messages as sent (with
typing artifacts) and its own configured system prompt — nothing that would tell it what is
being measured.

Resumable at turn level: each finished exchange is stored as a Turn (unique per index), and a
re-run continues after the last stored one. Re-asking the simulator for a lost turn is a cache
hit, because the request and seed are the same. A stored transcript with a turn missing in its
middle (rows of a delivery that could not all be written) resumes from its last complete turn:
`transcripts_cut_at_gap` deletes what followed the gap and every reading made of it.
"""

import logging

from django.db import transaction
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from core.rows import stable_seed
from llm.attribution import call_attribution
from llm.exceptions import LLMError
from llm.gateway import larger_token_limit
from llm.models import ModelRole

from .. import prompts
from ..models import (
    AnchorCoverage,
    AnchorRecheck,
    Conversation,
    FailureKind,
    FidelityReading,
    Judgment,
    Turn,
)
from ..schemas import SimulatedUserTurn
from ..typos import perturb
from .claims import Claim
from .closing import conversations_mark_simulated, outcome
from .failures import ConversationFailure
from .scenarios import anchors_fit
from .steps import Ask, Steps, Store, drive_sync

logger = logging.getLogger(__name__)


def transcripts_cut_at_gap(turns: dict[int, list[Turn]]) -> dict[int, list[Turn]]:
    """Each conversation's stored turns (in index order) cut to their complete prefix 1..k.

    Where a turn is missing, the turns after it belong to no transcript that can be judged:
    they, and the judgments, anchor readings and fidelity reading made of the conversation,
    are deleted and its simulation is marked unfinished, so it resumes after turn k. Call
    it under the conversations' claims (the loading delivery holds them)."""
    cut: dict[int, list[Turn]] = {}
    for pk, stored in turns.items():
        k = next((i for i, turn in enumerate(stored) if turn.index != i + 1), len(stored))
        if k < len(stored):
            cut[pk] = stored[:k]
    if not cut:
        return turns
    with transaction.atomic():
        for pk, kept in cut.items():
            Turn.objects.filter(conversation_id=pk, index__gt=len(kept)).delete()
        for model in (Judgment, AnchorCoverage, AnchorRecheck, FidelityReading):
            model.objects.filter(conversation_id__in=cut).delete()
        Conversation.objects.filter(pk__in=cut).update(simulated_at=None)
    for pk, kept in cut.items():
        logger.warning(
            "conversation:%s had a turn missing after turn %s: %s later turn(s) and its "
            "readings deleted; it resumes from there",
            pk,
            len(kept),
            len(turns[pk]) - len(kept),
        )
    return {**turns, **cut}


def conversation_seed(conversation: Conversation) -> int:
    return stable_seed(
        conversation.run.seed,
        conversation.scenario_id,
        conversation.target_id,
        conversation.replicate,
    )


def simulator_messages(
    *, conversation: Conversation, anchors: list[dict], turns: list[Turn], index: int
) -> list[dict]:
    run = conversation.run
    due = [i for i, anchor in enumerate(anchors) if anchor["turn"] == index]
    system = prompts.simulator_system_prompt(
        scenario=conversation.scenario, anchors=anchors, turn=index, turns=run.turns, due=due
    )
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": prompts.CONVERSATION_START},
    ]
    for turn in turns:
        # The simulator remembers what it meant to write, not the typos the target received.
        messages.append({"role": "assistant", "content": turn.user_text_clean})
        messages.append({"role": "user", "content": turn.assistant_text})
    return messages


def target_messages(*, turns: list[Turn], user_text: str, country: str = "") -> list[dict]:
    """The dialogue, after a note of the user's country when the scenario is set in one; the
    gateway adds the target configuration's own system prompt before it."""
    messages: list[dict] = (
        [{"role": "system", "content": prompts.target_country_note(country)}] if country else []
    )
    for turn in turns:
        messages.append({"role": "user", "content": turn.user_text})
        messages.append({"role": "assistant", "content": turn.assistant_text})
    messages.append({"role": "user", "content": user_text})
    return messages


def side_failed(error: LLMError, kind: str):
    """Name the side that failed: a gateway error becomes a ConversationFailure of `kind`."""
    return ConversationFailure(
        error.message, kind=kind, retryable=getattr(error, "retryable", False)
    )


def _stop_allowed(reply: SimulatedUserTurn, *, index: int, anchors: list[dict]) -> bool:
    """A clear stop: flagged, explained, after the first exchange and after every anchor.

    Anchors are the moments every target must face; a run that let the simulator leave before
    them would compare models on different tests.
    """
    if not reply.stop or not reply.stop_reason.strip() or index == 1:
        return False
    return all(anchor["turn"] < index for anchor in anchors)


def conversation_attribution(conversation: Conversation, claim: Claim | None = None):
    """Attribute the calls made for the conversation to it and its run in the call log."""
    return call_attribution(
        run_id=conversation.run_id,
        work_item=f"conversation:{conversation.pk}",
        claim=claim.token if claim else None,
    )


def _cut_off(result) -> bool:
    """Whether the reply stopped at max_tokens (the finish reason of its last attempt)."""
    return bool(result.calls) and result.calls[-1].finish_reason == "length"


def _request_limit(conversation: Conversation) -> dict:
    limit = conversation.target.max_tokens
    return {"max_tokens": limit} if limit else {}


def simulate_steps(*, conversation: Conversation, turns: list[Turn]) -> Steps:
    """Play the conversation to `run.turns` user turns (or a clear stop) after `turns`.

    Yields the simulator's and the target's calls and each finished exchange as a Turn to
    store; returns the stop reason ("" when it ran its full length).
    """
    run = conversation.run
    # Without anchors (`--no-anchors`) the simulator plays persona and goals only; whether the
    # anchors came up anyway is measured afterwards (`anchors.conversation_anchors_check`).
    anchors = anchors_fit(conversation.scenario.anchors, turns=run.turns) if run.use_anchors else []
    seed = conversation_seed(conversation)
    while len(turns) < run.turns:
        index = len(turns) + 1
        try:
            simulated = yield Ask(
                configuration=run.simulator,
                messages=simulator_messages(
                    conversation=conversation, anchors=anchors, turns=turns, index=index
                ),
                schema=SimulatedUserTurn,
                role=ModelRole.USER_SIMULATOR,
                purpose="evaluations.simulate_user",
                seed=stable_seed(seed, "simulator", index),
            )
        except LLMError as error:
            raise side_failed(error, FailureKind.SIMULATOR_ERROR) from error
        reply = simulated.output
        if _stop_allowed(reply, index=index, anchors=anchors):
            return reply.stop_reason.strip()
        clean = reply.message.strip()
        if not clean:
            raise ApplicationError(
                _("The user simulator wrote an empty message at turn %(index)s.") % {"index": index}
            )
        sent = perturb(
            clean,
            rate=run.typo_rate,
            seed=stable_seed(seed, "typos", index),
            language=conversation.scenario.language,
        )
        try:
            answered = yield Ask(
                configuration=conversation.target,
                messages=target_messages(
                    turns=turns, user_text=sent, country=conversation.scenario.country
                ),
                role=ModelRole.TARGET,
                purpose="evaluations.target_reply",
                seed=seed,
            )
            calls = list(answered.calls)
            if _cut_off(answered):
                # Stopped at max_tokens: asked once more with twice the room; if that is cut off
                # too, the turn is stored as cut off (shown with the transcript).
                answered = yield Ask(
                    configuration=conversation.target,
                    messages=target_messages(
                        turns=turns, user_text=sent, country=conversation.scenario.country
                    ),
                    role=ModelRole.TARGET,
                    purpose="evaluations.target_reply",
                    seed=seed,
                    params={"max_tokens": larger_token_limit(_request_limit(conversation))},
                )
                calls += answered.calls
        except LLMError as error:
            raise side_failed(error, FailureKind.TARGET_ERROR) from error
        due = [i for i, anchor in enumerate(anchors) if anchor["turn"] == index]
        turn = Turn(
            conversation=conversation,
            index=index,
            user_text=sent,
            user_text_clean=clean,
            assistant_text=answered.text,
            assistant_cut_off=_cut_off(answered),
            anchor_index=due[0] if due else None,
        )
        (turn,) = yield Store(
            rows=[turn],
            unique=("conversation_id", "index"),
            calls={"simulator_call_ids": simulated.calls, "target_call_ids": calls},
        )
        turns.append(turn)
    return ""


def conversation_simulate(
    *, conversation: Conversation, claim: Claim | None = None
) -> Conversation:
    """Play the conversation to `run.turns` user turns (or a clear stop), resuming if begun.

    With a claim, every turn is written under `claim_fence`: a delivery that lost its claim
    stops (ClaimLost) instead of writing alongside the one that holds it.
    """
    conversation = Conversation.objects.select_related("run__simulator", "scenario", "target").get(
        pk=conversation.pk
    )
    stored = list(conversation.turns.order_by("index"))
    turns = transcripts_cut_at_gap({conversation.pk: stored})[conversation.pk]
    if len(turns) < len(stored):
        conversation.simulated_at = None  # cut at a gap: simulated again from there
    if conversation.simulated_at is not None:
        return conversation
    with conversation_attribution(conversation, claim):
        stop_reason = drive_sync(simulate_steps(conversation=conversation, turns=turns), claim)
    return conversation_mark_simulated(
        conversation=conversation, stop_reason=stop_reason, claim=claim
    )


def conversation_mark_simulated(
    *, conversation: Conversation, stop_reason: str, claim: Claim | None = None
) -> Conversation:
    """Record that the simulation is over (once), under the claim's fence."""
    return outcome(conversations_mark_simulated([(conversation, stop_reason, claim)])[0])
