"""Rubric items in a run: their reply rows at launch, sending them to the batch engine, failing
and retrying them, their counts (their share of the plan is in `run_plans`).

A rubric reply is a work item like a conversation (claimed with a lease and a fencing token,
processed by the engine, `engine.rubrics`): the target replies to the item's final user
message and the judge grades the reply against its counted criteria (`rubric_grading`).
"""

from collections import defaultdict
from collections.abc import Sequence

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from core.queueing import task_send
from core.rows import update_grouped
from llm.models import ModelConfiguration
from rubrics.models import RubricItem
from rubrics.scoring import item_score_or_none

from ..models import ConversationStatus, EvaluationRun, RubricGrade, RubricResponse
from .claims import Claim, claim_lost, claims_renew
from .failures import work_item_mark_failed

BULK_BATCH = 1000
# The task that processes a batch of replies: the reaper looks for its ids in the broker.
RUBRIC_TASKS = ("evaluations.tasks.llm_process_rubric_batch",)


def rubric_items_from_keys(keys: Sequence[str]) -> list[RubricItem]:
    """The items named by key (command line); unknown keys raise ApplicationError."""
    items = list(RubricItem.objects.filter(key__in=keys))
    if keys and len(items) != len(set(keys)):
        found = {item.key for item in items}
        unknown = ", ".join(k for k in keys if k not in found)
        raise ApplicationError(_("Unknown rubric items: %(unknown)s.") % {"unknown": unknown})
    return items


def rubric_responses_create(*, run: EvaluationRun, targets: list[ModelConfiguration]) -> None:
    """At launch: the missing replies of the run (a no-op for those that exist)."""
    RubricResponse.objects.bulk_create(
        (
            RubricResponse(run=run, item=item, target=target, is_offline=target.is_offline)
            for item in run.rubric_items.all()
            for target in targets
        ),
        batch_size=BULK_BATCH,
        ignore_conflicts=True,
    )


def rubric_responses_send(response_ids: list[int]) -> None:
    """Hand replies to the batch engine's workers, ENGINE_BATCH_SIZE per task."""
    size = max(1, settings.ENGINE_BATCH_SIZE)
    for start in range(0, len(response_ids), size):
        batch = list(response_ids[start : start + size])
        task_send("evaluations.tasks.llm_process_rubric_batch", batch)


def rubric_response_mark_failed(
    *, response_id: int, error: str, claim: Claim | None = None
) -> RubricResponse:
    """Fail an unfinished reply (under its claim's fence when one is given)."""
    response, _ = work_item_mark_failed(RubricResponse, pk=response_id, error=error, claim=claim)
    return response


@transaction.atomic
def rubric_responses_retry_failed(*, run_id: int) -> int:
    """Failed replies back to pending (their reply and grades are kept); returns how many."""
    failed = RubricResponse.objects.filter(run_id=run_id, status=ConversationStatus.FAILED)
    return failed.update(status=ConversationStatus.PENDING)


Outcome = RubricResponse | Exception
FINALIZED_FIELDS = ["score", "status", "error", "lease_expires_at", "updated_at"]


def _lost_claims(claims: list[Claim | None]) -> set[tuple[int, int]]:
    """Verify and renew the claims (the fence, in the caller's transaction); the lost ones."""
    held = [claim for claim in claims if claim is not None]
    return {(claim.pk, claim.token) for claim in claims_renew(held)}


def rubric_replies_write(items: list[tuple[RubricResponse, object, Claim | None]]) -> list[Outcome]:
    """Write each (response, chat result, claim)'s reply, once and only by its claim's holder,
    with the criteria that count for it (`counted_criteria`, set on the response): frozen as
    grading begins.

    The result's attempts are in the call log already (their ids go with the reply). A reply
    written first by another delivery is kept, and read back with its criteria.
    """
    with transaction.atomic():
        lost = _lost_claims([claim for _response, _result, claim in items])
        outcomes: list[Outcome] = []
        for response, result, claim in items:
            if claim is not None and (claim.pk, claim.token) in lost:
                outcomes.append(claim_lost(claim))
                continue
            written = RubricResponse.objects.filter(pk=response.pk, reply="").update(
                reply=result.text,
                call_ids=list(result.call_ids),
                is_offline=result.is_offline,
                counted_criteria=response.counted_criteria,
            )
            if written:
                response.reply, response.call_ids = result.text, list(result.call_ids)
                response.is_offline = result.is_offline
            else:
                response.reply, response.counted_criteria = RubricResponse.objects.values_list(
                    "reply", "counted_criteria"
                ).get(pk=response.pk)
            outcomes.append(response)
    return outcomes


def rubric_responses_finalize(items: list[tuple[RubricResponse, Claim | None]]) -> list[Outcome]:
    """Score each response over its counted criteria's grades and mark it completed (once, by
    its claim). One without a grade for every counted criterion gets an ApplicationError."""
    with transaction.atomic():
        lost = _lost_claims([claim for _response, claim in items])
        pks = [response.pk for response, _claim in items]
        # (criterion, points, met) of each response's grades.
        grades: dict[int, list[tuple[int, int, bool]]] = defaultdict(list)
        for response_id, *grade in RubricGrade.objects.filter(response_id__in=pks).values_list(
            "response_id", "criterion_id", "criterion__points", "met"
        ):
            grades[response_id].append(tuple(grade))
        now, outcomes, completed = timezone.now(), [], []
        for response, claim in items:
            if claim is not None and (claim.pk, claim.token) in lost:
                outcomes.append(claim_lost(claim))
                continue
            counted = set(response.counted_criteria or [])
            mine = [g for g in grades[response.pk] if g[0] in counted]
            missing = counted - {criterion for criterion, _points, _met in mine}
            if missing:
                outcomes.append(
                    ApplicationError(
                        _(
                            "Rubric reply %(response_id)s lacks the grades of criteria "
                            "%(missing)s; retry it."
                        )
                        % {"response_id": response.pk, "missing": sorted(missing)}
                    )
                )
                continue
            response.score = item_score_or_none([g[1] for g in mine], [g[2] for g in mine])
            response.status, response.error = ConversationStatus.COMPLETED, ""
            response.lease_expires_at, response.updated_at = None, now
            completed.append(response)
            outcomes.append(response)
        # Replies closed together share a few scores: one statement per distinct score. The
        # claims were verified above, in this transaction, so each row is still this claim's.
        update_grouped(RubricResponse, completed, FINALIZED_FIELDS)
    return outcomes
