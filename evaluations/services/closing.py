"""Closing conversations in bulk: the end of a simulation and the verdict, many at once.

Each close is a few statements under the conversation's claim. The batch engine finishes
conversations concurrently, and one by one these statements were most of its database
thread's work, so it hands over every close that is waiting and these functions do them in one
transaction with one statement per table (for the conversations, one per distinct set of
values written, `core.rows.update_grouped`: a few, where `bulk_update` cost a millisecond of
CPU per row). Each item gets its own outcome: a lost claim or a missing judgment fails that
item alone. The one-conversation services (`conversation_mark_simulated`,
`conversation_finalize`) are these with one item.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from django.db import transaction
from django.db.models import Count, F, Max
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from core.exceptions import ApplicationError
from core.rows import update_grouped
from metrics_registry.models import Polarity

from ..models import Conversation, ConversationStatus, EvaluationRun, FailureKind, Judgment, Turn
from .claims import Claim, claim_lost, claims_renew
from .failures import ConversationFailure
from .panel import (
    PanelVerdict,
    panel_readings_required,
    panel_verdicts_of,
    run_panel,
    runs_panel_load,
)

SIMULATED_FIELDS = ["simulated_at", "stopped_early", "stop_reason", "is_offline", "updated_at"]
VERDICT_FIELDS = [
    "lease_expires_at",
    "verdict_present",
    "verdict_passed",
    "judgments_present",
    "panel_tie",
    "unverified_evidence",
    "judged_at",
    "status",
    "error",
    "failure_kind",
    "finished_at",
    "is_offline",
    "updated_at",
]
Outcome = Conversation | Exception


def conversations_mark_simulated(
    items: list[tuple[Conversation, str, Claim | None]],
) -> list[Outcome]:
    """Record for each (conversation, stop reason, claim) that its simulation is over (once).

    The claims are verified and renewed first (the fence), in the transaction that writes.
    """
    with transaction.atomic():
        claims = [claim for _c, _r, claim in items if claim is not None]
        lost = {(claim.pk, claim.token) for claim in claims_renew(claims)}
        held = [
            c.pk for c, _r, claim in items if claim is None or (claim.pk, claim.token) not in lost
        ]
        locked = Conversation.objects.select_for_update(of=("self",)).order_by("pk")
        rows = {row.pk: row for row in locked.filter(pk__in=held)}
        now, changed, outcomes = timezone.now(), [], []
        for conversation, stop_reason, claim in items:
            row = rows.get(conversation.pk)
            if claim is not None and (claim.pk, claim.token) in lost:
                outcomes.append(claim_lost(claim))
            elif row is None:
                outcomes.append(Conversation.DoesNotExist(f"No conversation {conversation.pk}."))
            else:
                if row.simulated_at is None:
                    run, target = conversation.run, conversation.target
                    row.simulated_at = now
                    row.stopped_early = bool(stop_reason)
                    row.stop_reason = stop_reason
                    row.is_offline = row.is_offline or run.simulator.is_offline or target.is_offline
                    row.updated_at = now
                    changed.append(row)
                outcomes.append(row)
        if changed:
            update_grouped(Conversation, changed, SIMULATED_FIELDS)
    return outcomes


def verdict_passed(*, present: bool, polarity: str) -> bool:
    """Pass = the behaviour is present for a positive metric, absent for a negative one."""
    return present if polarity == Polarity.POSITIVE else not present


def conversations_finalize(items: list[tuple[Conversation, Claim | None]]) -> list[Outcome]:
    """Write each conversation's majority verdict and mark it completed (once, by its claim).

    A conversation already completed is returned as it is; one whose claim was taken over
    gets `ClaimLost`; one without its run's number of judgments gets an `ApplicationError`,
    one whose stored turns have a gap a retryable `ConversationFailure`.
    The runs' completed (and failed) counters move by the conversations completed here.
    """
    with transaction.atomic():
        pks = [conversation.pk for conversation, _claim in items]
        rows = {
            row.pk: row
            for row in Conversation.objects.select_for_update(of=("self",))
            .select_related("run__judge", "scenario__metric_version")
            .filter(pk__in=pks)
            .order_by("pk")
        }
        runs_panel_load(row.run for row in rows.values())
        judgments: dict[int, list[Judgment]] = defaultdict(list)
        for judgment in Judgment.objects.filter(conversation_id__in=pks).order_by(
            "conversation_id", "repetition"
        ):
            judgments[judgment.conversation_id].append(judgment)
        # (turns stored, last index): a transcript with a turn missing is never closed.
        transcripts = {
            pk: (stored, last)
            for pk, stored, last in Turn.objects.filter(conversation_id__in=pks)
            .values("conversation_id")
            .annotate(stored=Count("pk"), last=Max("index"))
            .values_list("conversation_id", "stored", "last")
        }
        now, changed, outcomes = timezone.now(), [], []
        completed: Counter[int] = Counter()
        recovered: Counter[int] = Counter()  # failed conversations completed after all
        closed: set[int] = set()  # a conversation handed over twice is closed once
        for conversation, claim in items:
            row = rows.get(conversation.pk)
            if row is None:
                outcomes.append(Conversation.DoesNotExist(f"No conversation {conversation.pk}."))
                continue
            if row.status == ConversationStatus.COMPLETED or row.pk in closed:
                outcomes.append(row)
                continue
            if claim is not None and (
                row.attempts != claim.token or row.status != ConversationStatus.RUNNING
            ):
                outcomes.append(claim_lost(claim))
                continue
            required = panel_readings_required(row.run)
            readings = [j for j in judgments[row.pk] if j.repetition < required]
            if len(readings) < required:
                outcomes.append(
                    ApplicationError(
                        ngettext(
                            "This conversation has %(count)s of its %(required)s judgment; "
                            "judge it first.",
                            "This conversation has %(count)s of its %(required)s judgments; "
                            "judge it first.",
                            required,
                        )
                        % {"count": len(readings), "required": required}
                    )
                )
                continue
            stored, last = transcripts.get(row.pk, (0, 0))
            if stored != last:
                outcomes.append(
                    ConversationFailure(
                        _(
                            "Turn(s) missing from this conversation's stored transcript "
                            "(%(stored)s of turns 1–%(last)s); it is simulated again from "
                            "its last complete turn."
                        )
                        % {"stored": stored, "last": last},
                        kind=FailureKind.OTHER,
                        retryable=True,
                    )
                )
                continue
            changed.append((row, readings))
            closed.add(row.pk)
            outcomes.append(row)
        # One panel-rule call per run over its conversations closed here, not one per row.
        by_run: dict[int, list[tuple[Conversation, list[Judgment]]]] = defaultdict(list)
        for row, readings in changed:
            by_run[row.run_id].append((row, readings))
        for closing in by_run.values():
            run = closing[0][0].run
            verdicts = panel_verdicts_of(
                run_panel(run), [{j.repetition: j.present for j in r} for _row, r in closing]
            )
            for (row, readings), verdict in zip(closing, verdicts, strict=True):
                _verdict_set(row, readings, verdict, now)
                completed[row.run_id] += 1
                recovered[row.run_id] += row.status == ConversationStatus.FAILED
                row.status = ConversationStatus.COMPLETED
        if changed:
            update_grouped(Conversation, [row for row, _r in changed], VERDICT_FIELDS)
        for run_id, count in completed.items():
            counters = {"conversations_completed": F("conversations_completed") + count}
            if recovered[run_id]:
                counters["conversations_failed"] = F("conversations_failed") - recovered[run_id]
            EvaluationRun.objects.filter(pk=run_id).update(**counters)
    return outcomes


def _verdict_set(row: Conversation, readings: list[Judgment], panel: PanelVerdict, now) -> None:
    present = panel.present
    row.verdict_present = present
    row.panel_tie = panel.tie
    row.verdict_passed = (
        None
        if present is None
        else verdict_passed(present=present, polarity=row.scenario.metric_version.polarity)
    )
    row.judgments_present = sum(j.present for j in readings)
    row.unverified_evidence = any(j.has_unverified_quotes for j in readings)
    row.judged_at = row.judged_at or now
    row.error = ""
    row.failure_kind = ""
    row.finished_at = now
    row.is_offline = row.is_offline or any(j.is_offline for j in readings)
    row.lease_expires_at = None
    row.updated_at = now


def outcome(result: Outcome) -> Conversation:
    """The conversation of a one-item call, or its exception raised."""
    if isinstance(result, Exception):
        raise result
    return result
