"""Conversations as the engine's work: simulate, check anchors and fidelity, judge, finalize.

Per conversation: simulate from the stored turns, flush, mark simulated; check anchors and the
simulated user's fidelity; judge the missing repetitions; flush; finalize under the claim.
Conversations that end together are closed together (one transaction, `services.closing`).
"""

from contextlib import AbstractContextManager

from ..models import Conversation
from ..services.anchors import anchor_steps
from ..services.claims import Claim
from ..services.closing import conversations_finalize, conversations_mark_simulated
from ..services.failures import conversation_mark_failed, failure_kind_of
from ..services.fidelity import fidelity_steps
from ..services.judging import judge_steps
from ..services.simulation import conversation_attribution, simulate_steps
from .bridge import Bridge
from .coalesce import Coalescer
from .kinds import Parked
from .loading import Loaded, conversations_load


class ConversationWork:
    def __init__(self, bridge: Bridge) -> None:
        self.mark_simulated = Coalescer(bridge, conversations_mark_simulated)
        self.finalize = Coalescer(bridge, conversations_finalize)

    def load(self, ids: list[int], worker: str) -> list[Loaded | None]:
        return conversations_load(ids, worker)

    def attribution(self, loaded: Loaded) -> AbstractContextManager:
        return conversation_attribution(loaded.conversation, loaded.claim)

    async def work(self, engine, loaded: Loaded) -> Conversation:
        conversation, claim = loaded.conversation, loaded.claim
        turns = loaded.turns
        if conversation.simulated_at is None:
            stop_reason = await engine.drive(
                simulate_steps(conversation=conversation, turns=turns), claim, loaded.may_hit
            )
            await engine.flush_held(claim)
            await self.mark_simulated.submit((conversation, stop_reason, claim))
        # The checks and the judging do not wait on each other: in batch mode each goes as far
        # as the batch lets it, so one round of batches carries all their first requests.
        parked = False
        stages = [
            (not loaded.has_coverage, anchor_steps(conversation=conversation, turns=turns), True),
            (
                not loaded.has_fidelity,
                fidelity_steps(conversation=conversation, turns=turns),
                loaded.may_hit,
            ),
            (
                True,
                judge_steps(conversation=conversation, turns=turns, done=loaded.judged),
                loaded.may_hit,
            ),
        ]
        for wanted, steps, may_hit in stages:
            if not wanted:
                steps.close()
                continue
            try:
                await engine.drive(steps, claim, may_hit)
            except Parked:
                parked = True
        if parked:
            raise Parked
        await engine.flush_held(claim)
        return await self.finalize.submit((conversation, claim))

    def mark_failed(self, claim: Claim, message: str, error: Exception) -> Conversation:
        return conversation_mark_failed(
            conversation_id=claim.pk, error=message, kind=failure_kind_of(error), claim=claim
        )
