"""Rubric replies as the engine's work: the target's reply, the grading, the score.

Per reply: unless stored, ask the target and flush, then write the reply under the claim; grade
every counted criterion not yet graded (one call per criterion, those of one reply at once, or
one call for all), each grade stored as it comes; flush; score and mark completed under the
claim. Replies that start together are claimed and read together, and those that end together
are closed together (one transaction).
"""

from collections import defaultdict
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from llm.attribution import call_attribution
from rubrics.models import RubricCriterion

from ..crisis_selectors import crisis_lines_preload
from ..models import RubricGrade, RubricResponse
from ..services.claims import Claim, claims_take
from ..services.health import run_admits_work
from ..services.rubric_grading import (
    counting_criteria_ids,
    response_counted_criteria_freeze,
    rubric_grade_steps,
    rubric_reply_steps,
)
from ..services.rubric_runs import (
    rubric_replies_write,
    rubric_response_mark_failed,
    rubric_responses_finalize,
)
from .bridge import Bridge
from .coalesce import Coalescer
from .loading import run_seed_is_unique


@dataclass
class LoadedReply:
    response: RubricResponse | None = None
    claim: Claim | None = None
    criteria: list[RubricCriterion] = field(default_factory=list)
    graded: set[int] = field(default_factory=set)
    may_hit: bool = True
    finished: RubricResponse | None = None  # failed at once (its target is paused for the run)

    @property
    def target_id(self) -> int:
        return self.response.target_id


def rubric_responses_load(response_ids: list[int], worker: str) -> list[LoadedReply | None]:
    """Claim the replies and read their items, counted criteria and grades (database thread).

    One result per id, in order: None when there is nothing to do for this delivery (finished,
    claimed live elsewhere, run not running, or an id repeated). The counted criteria are
    frozen when grading begins: written with the reply (`rubric_replies_write`).
    """
    responses = {
        r.pk: r
        for r in RubricResponse.objects.filter(pk__in=response_ids).select_related(
            "run__judge", "item", "target"
        )
    }
    refusals: dict[int, str | None] = {}
    for pk, response in responses.items():
        refusal = run_admits_work(run=response.run, target_id=response.target_id)
        if refusal != "":
            refusals[pk] = refusal
    claims = claims_take(RubricResponse, pks=list(refusals), worker=worker)
    working = [responses[pk] for pk in claims if refusals[pk] is None]
    for response in working:
        # The claim counted this attempt (all-in-one grading takes a new seed per attempt).
        response.attempts = claims[response.pk].token
    # A reply not yet asked for takes the criteria counting now, written with the reply; one
    # replied but never graded (an older delivery) has them frozen now.
    fresh = [r for r in working if r.counted_criteria is None and not r.reply]
    for pk, ids in counting_criteria_ids(fresh).items():
        responses[pk].counted_criteria = ids
    response_counted_criteria_freeze(working)
    counted = {pk for response in working for pk in response.counted_criteria}
    criteria = {
        c.pk: c for c in RubricCriterion.objects.filter(pk__in=counted).order_by("position")
    }
    # Crisis-resources criteria are graded against their country's lines: read here, not in
    # the event loop.
    crisis_lines_preload({r.item.country for r in working} | {c.country for c in criteria.values()})
    graded: dict[int, set[int]] = defaultdict(set)
    for response_id, criterion_id in RubricGrade.objects.filter(
        response_id__in=[r.pk for r in working]
    ).values_list("response_id", "criterion_id"):
        graded[response_id].add(criterion_id)
    results: list[LoadedReply | None] = []
    for pk in response_ids:
        claim = claims.pop(pk, None)  # a repeated id finds its claim taken
        if claim is None:
            results.append(None)
        elif refusals[pk] is not None:
            failed = rubric_response_mark_failed(response_id=pk, error=refusals[pk], claim=claim)
            results.append(LoadedReply(finished=failed))
        else:
            response = responses[pk]
            mine = [criteria[c] for c in response.counted_criteria if c in criteria]
            results.append(
                LoadedReply(
                    response=response,
                    claim=claim,
                    criteria=sorted(mine, key=lambda c: c.position),
                    graded=graded[pk],
                    may_hit=claim.token > 1 or not run_seed_is_unique(response.run),
                )
            )
    return results


class RubricWork:
    def __init__(self, bridge: Bridge) -> None:
        self.write_reply = Coalescer(bridge, rubric_replies_write)
        self.finalize = Coalescer(bridge, rubric_responses_finalize)

    def load(self, ids: list[int], worker: str) -> list[LoadedReply | None]:
        return rubric_responses_load(ids, worker)

    def attribution(self, loaded: LoadedReply) -> AbstractContextManager:
        claim = loaded.claim
        return call_attribution(run_id=claim.run_id, work_item=claim.work_item, claim=claim.token)

    async def work(self, engine, loaded: LoadedReply) -> RubricResponse:
        response, claim = loaded.response, loaded.claim
        if not response.reply:
            result = await engine.drive(
                rubric_reply_steps(response=response), claim, loaded.may_hit
            )
            # The reply goes with the ids of its attempts: they are written first.
            await engine.flush_held(claim)
            response = await self.write_reply.submit((response, result, claim))
        await engine.drive(
            rubric_grade_steps(response=response, criteria=loaded.criteria, graded=loaded.graded),
            claim,
            loaded.may_hit,
        )
        await engine.flush_held(claim)
        return await self.finalize.submit((response, claim))

    def mark_failed(self, claim: Claim, message: str, error: Exception) -> RubricResponse:
        return rubric_response_mark_failed(response_id=claim.pk, error=message, claim=claim)
