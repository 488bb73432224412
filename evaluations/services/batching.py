"""A run's side of batch mode: which asks wait for a provider's batch, parking the items that
asked, and sending them back to the engine once their answers are in.

In a run with `use_batch`, an ask of the judge family (verdicts, anchor and fidelity checks,
rubric grades) to a configuration whose provider has a batch API (`llm.batches`) is answered
from a collected batch result when there is one; otherwise the engine records it as a batch
request and carries on with the item's other asks that do not wait for that answer (every
judge repetition, the anchor and the fidelity check go in one round), then parks the item:
status "waiting", no claim, no worker. The reaper submits and polls the batches and, once no
request of an item is still open, makes it pending and sends it again; the engine then finds
the answers and goes on through the normal paths. A re-ask of a malformed answer, or a request
the batch errored or let expire, is sent directly.
"""

from collections.abc import Iterable
from typing import Any

from django.db.models import Model
from django.utils import timezone

from llm.batches import (
    batch_answers,
    batch_requests_add,
    batch_requests_open,
    batch_supported,
)
from llm.models import BatchRequest, ModelConfiguration, ModelRole

from ..models import ConversationStatus, EvaluationRun, RunStatus
from .claims import Claim, claim_fence

# The roles whose answers may wait: none of them is what a simulated conversation waits for.
BATCH_ROLES = (ModelRole.JUDGE, ModelRole.FIDELITY_CHECKER)


def ask_may_wait(*, role: str, configuration: ModelConfiguration) -> bool:
    return role in BATCH_ROLES and batch_supported(configuration)


def batch_state_load(claims: list[Claim]) -> tuple[set[int], dict[str, dict[str, BatchRequest]]]:
    """The runs among the claims' that go by batch, and their items' batch requests."""
    run_ids = {claim.run_id for claim in claims}
    batch_runs = set(
        EvaluationRun.objects.filter(pk__in=run_ids, use_batch=True).values_list("pk", flat=True)
    )
    items = [claim.work_item for claim in claims if claim.run_id in batch_runs]
    return batch_runs, (batch_answers(work_items=items) if items else {})


def batch_item_park(claim: Claim, requests: list[BatchRequest]) -> bool:
    """Record the item's new batch requests and park it, under its claim (ClaimLost if lost)."""
    with claim_fence(claim):
        batch_requests_add(requests)
        return bool(
            claim.model.objects.filter(
                pk=claim.pk, attempts=claim.token, status=ConversationStatus.RUNNING
            ).update(status=ConversationStatus.WAITING, lease_expires_at=None, claimed_by="")
        )


def batch_items_resume(kinds: Iterable[tuple[type[Model], Any]]) -> int:
    """Send back the parked items of running runs with no batch request still open.

    `kinds` holds (model, send) of each kind of work item. Conditional on the item still
    waiting, so two reapers resume it once."""
    resumed = 0
    for model, send in kinds:
        waiting = list(
            model.objects.filter(
                status=ConversationStatus.WAITING, run__status=RunStatus.RUNNING
            ).values_list("pk", flat=True)[:2000]
        )
        if not waiting:
            continue
        name = model._meta.model_name
        open_items = batch_requests_open(work_items=[f"{name}:{pk}" for pk in waiting])
        ready = [pk for pk in waiting if f"{name}:{pk}" not in open_items]
        if not ready:
            continue
        back = model.objects.filter(pk__in=ready, status=ConversationStatus.WAITING)
        ids = list(back.values_list("pk", flat=True))
        back.update(status=ConversationStatus.PENDING, dispatched_at=timezone.now())
        resumed += len(ids)
        send(ids)
    return resumed
