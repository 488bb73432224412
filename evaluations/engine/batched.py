"""What the engine knows of batch mode while it drives a batch of items (`services.batching`):
the runs that go by batch, their items' batch requests, and what each item asks for now."""

from llm.batches import batch_request_build
from llm.models import BatchRequest, BatchRequestStatus
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

    def answer(self, step: Ask, claim: Claim | None) -> BatchRequest | None:
        """The collected result that answers the ask, or None when it goes directly (not in
        batch mode, a role that does not wait, or a request the batch errored or let expire).
        Raises Parked when the answer is still to come, recording the request if new."""
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
            # Taken before (the item parked again since): from the cache, not paid twice.
            return None if row.taken else row
        if row.status in (BatchRequestStatus.PENDING, BatchRequestStatus.SUBMITTED):
            raise Parked
        return None
