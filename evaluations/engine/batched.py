"""What the engine knows of batch mode while it drives a batch of items (`services.batching`):
the runs that go by batch, their items' batch requests, and what each item asks for now."""

from collections.abc import Awaitable, Callable

from llm.batches import batch_request_build
from llm.cache import cache_enabled
from llm.models import BatchRequest, BatchRequestStatus, LLMResponseCache
from llm.request import prepare_request

from ..services.batching import ask_may_wait, batch_state_load
from ..services.claims import Claim
from ..services.steps import Ask
from .kinds import Parked


class BatchAsks:
    def __init__(self) -> None:
        self.runs: set[int] = set()
        # By work item, then request fingerprint: what the item asked of earlier batches.
        self.answers: dict[str, dict[str, BatchRequest]] = {}
        # By item: the requests it asks for in this round (written when it is parked).
        self.asked: dict[int, list[BatchRequest]] = {}

    def load(self, claims: list[Claim]) -> None:
        """Read the batch state of newly claimed items (database thread)."""
        runs, answers = batch_state_load(claims)
        self.runs |= runs
        self.answers.update(answers)

    async def answer(
        self,
        step: Ask,
        claim: Claim | None,
        *,
        may_hit: bool,
        cached: Callable[[str], Awaitable[LLMResponseCache | None]],
    ) -> BatchRequest | None:
        """The collected result that answers the ask, or None when it goes directly (not in
        batch mode, a role that does not wait, a request the batch errored or let expire, or
        one the response cache answers). Raises Parked when the answer is still to come,
        recording the request if new."""
        if (
            claim is None
            or claim.run_id not in self.runs
            or not ask_may_wait(role=step.role, configuration=step.configuration)
        ):
            return None
        request = prepare_request(
            configuration=step.configuration,
            messages=step.messages,
            role=step.role,
            seed=step.seed,
            params=step.params or {},
            schema=step.schema,
        )
        row = self.answers.get(claim.work_item, {}).get(request.fingerprint)
        if row is None:
            # An answer the cache holds (a re-run with the same seed) costs nothing: it is not
            # worth a batch, nor a wait for one.
            caching = cache_enabled(configuration=step.configuration, use_cache=True)
            if may_hit and caching and await cached(request.fingerprint) is not None:
                return None
            self.asked.setdefault(claim.pk, []).append(
                batch_request_build(
                    configuration=step.configuration,
                    messages=request.messages,
                    parameters=request.parameters,
                    schema=step.schema,
                    role=step.role,
                    purpose=step.purpose,
                    fingerprint=request.fingerprint,
                    run_id=claim.run_id,
                    work_item=claim.work_item,
                    claim=claim.token,
                )
            )
            raise Parked
        if row.status == BatchRequestStatus.SUCCEEDED:
            # Its call-log row was written when it was collected: taking it (again, if the item
            # parked since) writes none.
            return row
        if row.status in (BatchRequestStatus.PENDING, BatchRequestStatus.SUBMITTED):
            raise Parked
        return None
