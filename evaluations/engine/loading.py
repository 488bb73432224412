"""What a conversation needs before the engine drives it: its claim and its stored rows.

Conversations that start together are claimed and read together: one query per table for all
of them, not one per conversation.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from ..crisis_selectors import scenarios_crisis_lines_load
from ..models import (
    AnchorCoverage,
    Conversation,
    EvaluationRun,
    FidelityReading,
    Judgment,
    Turn,
)
from ..services.claims import Claim, claims_take
from ..services.failures import conversation_mark_failed
from ..services.health import run_admits_work
from ..services.panel import runs_panel_load
from ..services.simulation import transcripts_cut_at_gap

# Runs whose seed no other run shares, per process: their first attempts cannot hit the cache.
# Keyed by id and creation time: SQLite gives a deleted run's id to the next run made.
_unique_seed_runs: set[tuple[int, object]] = set()


@dataclass
class Loaded:
    conversation: Conversation | None = None
    claim: Claim | None = None
    turns: list = field(default_factory=list)
    judged: set[int] = field(default_factory=set)
    has_coverage: bool = False
    has_fidelity: bool = False
    may_hit: bool = True
    finished: Conversation | None = None  # failed at once (its target is paused for the run)

    @property
    def target_id(self) -> int:
        return self.conversation.target_id


def run_seed_is_unique(run: EvaluationRun) -> bool:
    """Whether no other run shares the run's seed (remembered per process)."""
    key = (run.pk, run.created_at)
    if key in _unique_seed_runs:
        return True
    unique = not EvaluationRun.objects.filter(seed=run.seed).exclude(pk=run.pk).exists()
    if unique:
        _unique_seed_runs.add(key)
    return unique


def conversations_load(conversation_ids: list[int], worker: str) -> list[Loaded | None]:
    """Claim the conversations and read their stored turns and judgments (database thread).

    One result per id, in order: None when there is nothing to do for this delivery
    (finished, claimed live elsewhere, run not running, or an id repeated). `may_hit` is
    false when no stored reply can match its requests: every seed derives from the run's
    seed, so on the first claim of a run whose seed is its own the cache holds nothing for it
    and the engine skips the lookups.
    """
    conversations = {
        c.pk: c
        for c in Conversation.objects.filter(pk__in=conversation_ids).select_related(
            "run__simulator",
            "run__judge",
            "run__fidelity_checker",
            "scenario__metric_version",
            "target",
        )
    }
    # The panels of the runs, so judging makes no query in the engine's event loop.
    runs_panel_load(c.run for c in conversations.values())
    scenarios_crisis_lines_load(c.scenario for c in conversations.values())
    refusals: dict[int, str | None] = {}
    for pk, conversation in conversations.items():
        refusal = run_admits_work(run=conversation.run, target_id=conversation.target_id)
        if refusal != "":
            refusals[pk] = refusal
    claims = claims_take(Conversation, pks=list(refusals), worker=worker)
    working = [pk for pk, claim in claims.items() if refusals[pk] is None]
    turns: dict[int, list] = defaultdict(list)
    for turn in Turn.objects.filter(conversation_id__in=working).order_by(
        "conversation_id", "index"
    ):
        turn.conversation = conversations[turn.conversation_id]
        turns[turn.conversation_id].append(turn)
    for pk, kept in transcripts_cut_at_gap(turns).items():
        if len(kept) < len(turns[pk]):  # resumed from its last complete turn
            turns[pk] = kept
            conversations[pk].simulated_at = None
    judged: dict[int, set[int]] = defaultdict(set)
    for pk, repetition in Judgment.objects.filter(conversation_id__in=working).values_list(
        "conversation_id", "repetition"
    ):
        judged[pk].add(repetition)
    covered = set(
        AnchorCoverage.objects.filter(conversation_id__in=working).values_list(
            "conversation_id", flat=True
        )
    )
    checked = set(
        FidelityReading.objects.filter(conversation_id__in=working).values_list(
            "conversation_id", flat=True
        )
    )
    results: list[Loaded | None] = []
    for pk in conversation_ids:
        claim = claims.pop(pk, None)  # a repeated id finds its claim taken
        if claim is None:
            results.append(None)
        elif refusals[pk] is not None:
            # Its target is paused for the run: fail it with the reason rather than call again.
            failed = conversation_mark_failed(conversation_id=pk, error=refusals[pk], claim=claim)
            results.append(Loaded(finished=failed))
        else:
            conversation = conversations[pk]
            results.append(
                Loaded(
                    conversation=conversation,
                    claim=claim,
                    turns=turns[pk],
                    judged=judged[pk],
                    has_coverage=pk in covered,
                    has_fidelity=pk in checked,
                    may_hit=claim.token > 1 or not run_seed_is_unique(conversation.run),
                )
            )
    return results
