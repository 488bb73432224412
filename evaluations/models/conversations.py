"""Simulated conversations, their turns, the judge's readings and anchor coverage.

Uniqueness constraints are the backbone of idempotency: a Celery task that runs twice finds the
row it (or another worker) already wrote instead of writing a second one.
"""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from core.models import TimeStampedModel

from ..evidence_support import EvidenceStatus
from .runs import EvaluationRun
from .scenarios import Scenario


class ConversationStatus(models.TextChoices):
    PENDING = "pending", pgettext_lazy("conversation status", "Pending")
    RUNNING = "running", pgettext_lazy("conversation status", "Running")
    # Parked until the provider's batch holding its requests has ended (`services.batching`):
    # no claim, no worker, nothing lost if it takes a day.
    WAITING = "waiting", pgettext_lazy("conversation status", "Waiting for a batch")
    COMPLETED = "completed", pgettext_lazy("conversation status", "Completed")
    FAILED = "failed", pgettext_lazy("conversation status", "Failed")


class FailureKind(models.TextChoices):
    """Why a failed conversation failed; summaries count each kind beside the pass rates."""

    TARGET_ERROR = "target_error", _("Target error")
    SIMULATOR_ERROR = "simulator_error", _("User simulator error")
    NOT_JUDGED = "not_judged", _("Not judged (judge output unusable after retries)")
    TIMEOUT = "timeout", _("Time limit")
    OTHER = "other", _("Other error")


class Conversation(TimeStampedModel):
    """One simulated conversation of a scenario with a target model, and its verdict."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="conversations")
    scenario = models.ForeignKey(Scenario, on_delete=models.PROTECT, related_name="conversations")
    target = models.ForeignKey(
        "llm.ModelConfiguration", on_delete=models.PROTECT, related_name="conversations"
    )
    replicate = models.PositiveSmallIntegerField(default=0)
    status = models.CharField(
        max_length=10, choices=ConversationStatus.choices, default=ConversationStatus.PENDING
    )
    error = models.TextField(blank=True)
    failure_kind = models.CharField(
        max_length=16,
        choices=FailureKind.choices,
        blank=True,
        help_text="Set with status failed; a conversation the judge could not read is "
        "'not judged', never missing.",
    )
    attempts = models.PositiveIntegerField(default=0)
    simulated_at = models.DateTimeField(null=True, blank=True)
    stopped_early = models.BooleanField(default=False)
    stop_reason = models.TextField(blank=True)
    # The verdict, written once every judgment is in (majority of the judgments).
    verdict_present = models.BooleanField(null=True, blank=True)
    verdict_passed = models.BooleanField(null=True, blank=True)
    judgments_present = models.PositiveSmallIntegerField(default=0)
    # A panel of judges split evenly: completed without a verdict, reported as a tie (never
    # broken toward pass or fail) and left out of pass rates as an exclusion of its own.
    panel_tie = models.BooleanField(default=False)
    judged_at = models.DateTimeField(null=True, blank=True)
    unverified_evidence = models.BooleanField(
        default=False,
        help_text="Some judgment quoted words not found in the transcript, even after a re-ask.",
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    is_offline = models.BooleanField(default=False)
    # The claim of the worker processing it (evaluations/services/claims.py): `attempts` is the
    # fencing token, the lease is renewed by the worker's heartbeat while it works.
    claimed_by = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    dispatched_at = models.DateTimeField(null=True, blank=True)
    # Imported transcripts (the run's `transcript_import`): where in the file it was, its id
    # there, and what else the file said of it (its system prompt, its metadata). Null: the
    # platform simulated it.
    source_line = models.PositiveIntegerField(null=True, blank=True)
    source_id = models.CharField(max_length=200, blank=True)
    source_metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["run", "scenario", "target", "replicate"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "scenario", "target", "replicate"],
                name="conversation_unique_per_run_scenario_target_replicate",
            ),
        ]
        indexes = [
            models.Index(fields=["run", "status"], name="conversation_run_status"),
            # The conversations without a verdict, which every summary reports beside the rate:
            # few, and found without reading the run's judged ones.
            models.Index(
                fields=["run"],
                condition=~Q(status="completed", verdict_passed__isnull=False),
                name="conversation_run_unjudged",
            ),
            # The judged conversations' GROUP BY (scenario, target) of every results refresh:
            # read in group order from the index alone (the planner chooses it thanks to the
            # ndistinct statistics of migration 0010). One entry per conversation, written when
            # its verdict is (that update already changes indexed columns, so is not HOT).
            models.Index(
                fields=["run", "scenario", "target"],
                include=["verdict_passed"],
                condition=Q(status="completed", verdict_passed__isnull=False),
                name="conversation_run_judged",
            ),
            # The run page counts and lists the conversations with unverified evidence on every
            # poll: few, found without reading the run's other conversations.
            models.Index(
                fields=["run"],
                condition=Q(unverified_evidence=True),
                name="conversation_run_unverified",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.scenario} × {self.target} #{self.replicate}"

    @property
    def is_finished(self) -> bool:
        return self.status in (ConversationStatus.COMPLETED, ConversationStatus.FAILED)

    @property
    def is_imported(self) -> bool:
        """Imported, not simulated: there is no simulated user to check."""
        return self.source_line is not None

    @property
    def anchors_carried(self) -> list[int]:
        return sorted({t.anchor_index for t in self.turns.all() if t.anchor_index is not None})


class Turn(models.Model):
    """One exchange: the simulated user's message (as sent and as written) and the reply."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="turns")
    index = models.PositiveSmallIntegerField(help_text="1-based, as the judge and anchors count.")
    user_text = models.TextField(help_text="What the target received, typing artifacts included.")
    user_text_clean = models.TextField(help_text="What the simulator wrote.")
    assistant_text = models.TextField()
    assistant_cut_off = models.BooleanField(
        default=False,
        help_text="The target's reply stopped at max_tokens even when asked again with more room.",
    )
    anchor_index = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Position in the scenario's anchors raised at this turn."
    )
    simulator_call_ids = models.JSONField(default=list, blank=True)
    target_call_ids = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["conversation", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "index"], name="turn_unique_per_conversation"
            ),
            models.CheckConstraint(condition=Q(index__gte=1), name="turn_index_gte_1"),
        ]

    def __str__(self) -> str:
        return f"{self.conversation_id} turn {self.index}"


class Judgment(models.Model):
    """One judge reading of a conversation; several per conversation measure judge reliability."""

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="judgments"
    )
    repetition = models.PositiveSmallIntegerField()
    judge = models.ForeignKey("llm.ModelConfiguration", on_delete=models.PROTECT, related_name="+")
    seed = models.BigIntegerField()
    present = models.BooleanField()
    justification = models.TextField()
    evidence = models.JSONField(
        default=list,
        blank=True,
        help_text='[{"turn": n, "quote": "...", "found_in_transcript": b}]',
    )
    # Some quote is not found in the assistant's turn it names (kept beside the status,
    # which names only the first failure: a contradicting reading may also have these).
    has_unverified_quotes = models.BooleanField(default=False)
    evidence_status = models.CharField(
        max_length=16,
        choices=EvidenceStatus.choices,
        default=EvidenceStatus.UNCHECKED,
        help_text="Whether the quotes support the verdict (evaluations.evidence_support).",
    )
    reasked_for_evidence = models.BooleanField(
        default=False, help_text="The first reading's quotes did not support its verdict."
    )
    present_before_reask = models.BooleanField(
        null=True,
        blank=True,
        help_text="The first reading's verdict, kept when it was re-asked for its evidence "
        "(empty otherwise, and for readings stored before it was kept).",
    )
    call_ids = models.JSONField(default=list, blank=True)
    is_offline = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["conversation", "repetition"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "repetition"], name="judgment_unique_per_repetition"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.conversation_id} judgment {self.repetition}: present={self.present}"


class AnchorReading(models.Model):
    """What the anchor checker read for one anchor of a conversation: raised or not, where,
    and the quote it gave (verified against the user turn it names)."""

    anchor_index = models.PositiveSmallIntegerField(help_text="Position in the scenario's anchors.")
    raised = models.BooleanField()
    turn = models.PositiveSmallIntegerField(null=True, blank=True)
    quote = models.TextField(blank=True)
    quote_found = models.BooleanField(
        default=False, help_text="The quote occurs in the user turn it names."
    )
    call_ids = models.JSONField(default=list, blank=True)
    is_offline = models.BooleanField(default=False)

    class Meta:
        abstract = True


class AnchorCoverage(AnchorReading):
    """Whether one anchor of the scenario was actually raised in a conversation, as read by a
    model of the judge's family from the user turns (not assumed from the plan)."""

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="anchor_coverage"
    )
    anchor_text = models.TextField()

    class Meta(AnchorReading.Meta):
        ordering = ["conversation", "anchor_index"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "anchor_index"], name="anchor_coverage_unique_per_anchor"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.conversation_id} anchor {self.anchor_index}: raised={self.raised}"


class AnchorRecheck(AnchorReading):
    """A second, independent reading of one anchor's coverage in a conversation (same checker,
    another seed), kept apart from `AnchorCoverage`: comparing the two readings measures the
    checker's own noise, which the replicate-consistency figure would otherwise absorb."""

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="anchor_rechecks"
    )

    class Meta(AnchorReading.Meta):
        ordering = ["conversation", "anchor_index"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "anchor_index"], name="anchor_recheck_unique_per_anchor"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.conversation_id} anchor {self.anchor_index} (recheck): raised={self.raised}"
