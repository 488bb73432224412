"""What a conversation needs before the engine drives it: its claim and its stored rows."""

from dataclasses import dataclass, field

from ..models import Conversation, EvaluationRun
from ..services.claims import Claim, claim_take
from ..services.health import run_admits_work

# Runs whose seed no other run shares, per process: their first attempts cannot hit the cache.
_unique_seed_runs: set[int] = set()


@dataclass
class Loaded:
    conversation: Conversation | None = None
    claim: Claim | None = None
    turns: list = field(default_factory=list)
    judged: set[int] = field(default_factory=set)
    has_coverage: bool = False
    may_hit: bool = True
    finished: Conversation | None = None  # failed at once (its target is paused for the run)


def _seed_is_unique(run: EvaluationRun) -> bool:
    if run.pk in _unique_seed_runs:
        return True
    unique = not EvaluationRun.objects.filter(seed=run.seed).exclude(pk=run.pk).exists()
    if unique:
        _unique_seed_runs.add(run.pk)
    return unique


def conversation_load(conversation_id: int, worker: str) -> Loaded | None:
    """Claim the conversation and read its stored turns and judgments (database thread).

    None when there is nothing to do for this delivery (finished, claimed live elsewhere, run
    not running). `may_hit` is false when no stored reply can match its requests: every seed
    derives from the run's seed, so on the first claim of a run whose seed is its own the
    cache holds nothing for it and the engine skips the lookups.
    """
    from ..services.processing import conversation_mark_failed

    conversation = (
        Conversation.objects.filter(pk=conversation_id)
        .select_related("run__simulator", "run__judge", "scenario__metric_version", "target")
        .first()
    )
    if conversation is None:
        return None
    refusal = run_admits_work(run=conversation.run, target_id=conversation.target_id)
    if refusal == "":
        return None
    claim = claim_take(Conversation, pk=conversation_id, worker=worker)
    if claim is None:
        return None
    if refusal is not None:
        # Its target is paused for the run: fail it with the reason rather than call again.
        failed = conversation_mark_failed(
            conversation_id=conversation_id, error=refusal, claim=claim
        )
        return Loaded(finished=failed)
    turns = list(conversation.turns.order_by("index"))
    judged = set(conversation.judgments.values_list("repetition", flat=True))
    has_coverage = conversation.anchor_coverage.exists()
    may_hit = claim.token > 1 or not _seed_is_unique(conversation.run)
    return Loaded(
        conversation=conversation,
        claim=claim,
        turns=turns,
        judged=judged,
        has_coverage=has_coverage,
        may_hit=may_hit,
    )
