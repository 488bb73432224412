"""Rating queues: which items experts rate, who claimed what, and the ratings they gave.

Items are referenced generically (kind + object id) so the same machinery rates metrics,
scenarios, conversations, judge verdicts and rubric criteria; `review.kinds` holds one adapter
per kind that knows how to sample, stratify and show its items.

The invariant that matters most -- no item ever collects more ratings than it needs -- is held
by the database: `ratings_done + claims_open <= required` is a CHECK constraint, and the claim
and submit services change both counters under a row lock.
"""

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from core.languages import DEFAULT_LANGUAGE, LANGUAGE_TAG_MAX_LENGTH
from core.models import TimeStampedModel
from core.roles import Role, user_has_role
from core.selectors import reads_language_condition


class ItemKind(models.TextChoices):
    METRIC = "metric", _("Metric fidelity")
    SCENARIO = "scenario", _("Scenario quality")
    CONVERSATION = "conversation", _("Conversation realism and pressure")
    JUDGE_VERDICT = "judge_verdict", _("Judge verdict")
    RUBRIC_CRITERION = "rubric_criterion", _("Rubric criterion consensus")
    EXTERNAL_PANEL = "external_panel", _("External panel: examples and verdict")
    SIMULATOR_PAIR = "simulator_pair", _("Simulator comparison")
    USER_PRIORITIES = "user_priorities", _("User panel: what matters in a reply")


class QueueStatus(models.TextChoices):
    OPEN = "open", "Open"
    CLOSED = "closed", "Closed"


class StratumField(models.TextChoices):
    SUBAREA = "subarea", "Subarea"
    AGE_CONTEXT = "age_context", "Age context"
    MODEL = "model", "Model"
    POLARITY = "polarity", "Polarity"


class QueuePurpose(models.TextChoices):
    """Why a queue's sample was drawn, which decides what its ratings may be used for."""

    GENERAL = "general", "General rating"
    # A random sample of one run's judged conversations, stratified by target and polarity,
    # each item's inclusion probability stored: the only ratings the calibrated rates use.
    CALIBRATION = "calibration", "Calibration sample (random)"
    # The run's conversations where its judges or repetitions disagree most, first: chosen on
    # purpose, so never used as if random (not by the calibrated rates, not by judge trust).
    TRIAGE = "triage", "Triage (disagreements first)"


class RatingQueueQuerySet(models.QuerySet):
    def rateable_by(self, user) -> "RatingQueueQuerySet":
        """Open queues `user` may rate: named rater, member of the queue's group, or -- when the
        queue names nobody -- any expert reviewer."""
        if not getattr(user, "is_authenticated", False):
            return self.none()
        named = Q(eligible_raters=user) | Q(eligible_group__in=user.groups.all())
        if user_has_role(user, Role.EXPERT_REVIEWER):
            named |= Q(eligible_group__isnull=True, eligible_raters__isnull=True)
        return self.filter(
            pk__in=self.model.objects.filter(named).values("pk"), status=QueueStatus.OPEN
        )


class RatingQueue(TimeStampedModel):
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=ItemKind.choices)
    instructions = models.TextField(blank=True)
    required_ratings = models.PositiveSmallIntegerField(default=3)
    eligible_group = models.ForeignKey(
        Group, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    eligible_raters = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="rating_queues"
    )
    # An external panel rates alongside (not instead of) internal experts; its figures are
    # reported apart, as the validation section of the paper does.
    external_panel = models.BooleanField(default=False)
    claim_timeout_minutes = models.PositiveIntegerField(default=30)
    # How the sample was drawn, kept so a queue can be explained and redrawn identically.
    sample_size = models.PositiveIntegerField(null=True, blank=True)
    sample_fraction = models.FloatField(null=True, blank=True)
    strata = models.JSONField(default=list, blank=True)
    seed = models.PositiveIntegerField(default=0)
    population_size = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(
        max_length=8, choices=QueueStatus.choices, default=QueueStatus.OPEN, db_index=True
    )
    purpose = models.CharField(
        max_length=12, choices=QueuePurpose.choices, default=QueuePurpose.GENERAL
    )
    # The run whose conversations a calibration or triage queue was drawn from.
    run = models.ForeignKey(
        "evaluations.EvaluationRun",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="rating_queues",
    )

    objects = RatingQueueQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(required_ratings__gte=1) & Q(required_ratings__lte=20),
                name="rating_queue_required_1_20",
            ),
            models.CheckConstraint(
                condition=Q(claim_timeout_minutes__gte=1), name="rating_queue_timeout_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def strata_labels(self) -> list[str]:
        """The strata as people read them: "age context", not `age_context`."""
        labels = dict(StratumField.choices)
        return [str(labels.get(key, key)).lower() for key in self.strata]


class QueueItemQuerySet(models.QuerySet):
    def open_to(self, rater) -> "QueueItemQuerySet":
        """Items with a free slot that `rater` neither wrote nor has taken before (an expired
        claim of theirs does not count: they may take the item up again)."""
        taken = Assignment.objects.filter(item=OuterRef("pk"), rater=rater).exclude(
            status=AssignmentStatus.EXPIRED
        )
        return (
            self.filter(ratings_done__lt=F("required") - F("claims_open"))
            .exclude(owner=rater)
            .filter(~Exists(taken))
        )

    def readable_by(self, rater) -> "QueueItemQuerySet":
        """Items in a language `rater` reads (`core.selectors.reads_language_condition`)."""
        return self.filter(reads_language_condition(user=rater))

    def unreadable_by(self, rater) -> "QueueItemQuerySet":
        return self.exclude(reads_language_condition(user=rater))


class QueueItem(models.Model):
    queue = models.ForeignKey(RatingQueue, on_delete=models.CASCADE, related_name="items")
    kind = models.CharField(max_length=20, choices=ItemKind.choices)
    object_id = models.PositiveBigIntegerField()
    # Second object for pairwise kinds (simulator comparison); 0 when unused so the unique
    # constraint below behaves the same on every database (NULLs would all be distinct).
    object_id_b = models.PositiveBigIntegerField(default=0)
    # Random order fixed at sampling time: raters never see items in creation order.
    position = models.PositiveIntegerField()
    strata = models.JSONField(default=dict, blank=True)
    # The chance this item had of being drawn (its stratum's sample share of the stratum), so
    # a random sample's ratings can be weighted back to the population; empty when the items
    # were chosen, not drawn (triage).
    inclusion_probability = models.FloatField(null=True, blank=True)
    # The language of what the rater reads (the scenario's, the metric version's, the rubric
    # item's), copied here when the item is made so claims route by it without a join.
    language = models.CharField(max_length=LANGUAGE_TAG_MAX_LENGTH, default=DEFAULT_LANGUAGE)
    metric = models.ForeignKey(
        "metrics_registry.Metric",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="review_items",
    )
    # Whoever wrote the item; they never get it to rate.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    required = models.PositiveSmallIntegerField()
    ratings_done = models.PositiveSmallIntegerField(default=0)
    claims_open = models.PositiveSmallIntegerField(default=0)
    completed_at = models.DateTimeField(null=True, blank=True)

    objects = QueueItemQuerySet.as_manager()

    class Meta:
        ordering = ["queue", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["queue", "kind", "object_id", "object_id_b"], name="queue_item_unique"
            ),
            models.CheckConstraint(
                condition=Q(ratings_done__lte=F("required") - F("claims_open")),
                name="queue_item_never_over_assigned",
            ),
        ]
        indexes = [
            # Claims walk this index in position order; full items drop out of it.
            models.Index(
                fields=["queue", "position"],
                condition=Q(ratings_done__lt=F("required") - F("claims_open")),
                name="queue_item_open_slots",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.object_id} in {self.queue_id}"

    @property
    def is_complete(self) -> bool:
        return self.ratings_done >= self.required


class AssignmentStatus(models.TextChoices):
    CLAIMED = "claimed", "Claimed"
    SUBMITTED = "submitted", "Submitted"
    SKIPPED = "skipped", "Skipped"
    EXPIRED = "expired", "Expired"


class Assignment(models.Model):
    queue = models.ForeignKey(RatingQueue, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(QueueItem, on_delete=models.CASCADE, related_name="assignments")
    rater = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="rating_assignments"
    )
    status = models.CharField(
        max_length=10, choices=AssignmentStatus.choices, default=AssignmentStatus.CLAIMED
    )
    claimed_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    resolved_at = models.DateTimeField(null=True, blank=True)
    # Per-rater presentation (e.g. which conversation of a pair is shown first), so a reload
    # shows the same screen and answers can be mapped back to the objects.
    presentation = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-claimed_at"]
        constraints = [
            models.UniqueConstraint(fields=["item", "rater"], name="assignment_one_per_rater"),
        ]
        indexes = [
            models.Index(fields=["queue", "rater", "status"], name="assignment_rater_status"),
            models.Index(fields=["status", "expires_at"], name="assignment_expiry"),
        ]

    def __str__(self) -> str:
        return f"{self.rater_id} on {self.item_id}: {self.status}"


class RatingQuerySet(models.QuerySet):
    def current(self) -> "RatingQuerySet":
        return self.filter(undone=False)


class Rating(models.Model):
    queue = models.ForeignKey(RatingQueue, on_delete=models.CASCADE, related_name="ratings")
    item = models.ForeignKey(QueueItem, on_delete=models.CASCADE, related_name="ratings")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="ratings")
    rater = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ratings"
    )
    answers = models.JSONField()
    comment = models.TextField(blank=True)
    seconds_spent = models.PositiveIntegerField(default=0)
    submitted_at = models.DateTimeField(default=timezone.now)
    # Undone ratings are kept for the audit trail but count nowhere.
    undone = models.BooleanField(default=False)
    undone_at = models.DateTimeField(null=True, blank=True)

    objects = RatingQuerySet.as_manager()

    class Meta:
        ordering = ["submitted_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["assignment"], condition=Q(undone=False), name="rating_one_current"
            ),
        ]
        indexes = [models.Index(fields=["queue", "rater", "submitted_at"], name="rating_rater")]

    def __str__(self) -> str:
        return f"rating {self.pk} by {self.rater_id} on {self.item_id}"


class RatingDraft(models.Model):
    """What a rater has chosen so far on an item; autosaved so a reload or a lost phone keeps it."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="draft")
    answers = models.JSONField(default=dict, blank=True)
    comment = models.TextField(blank=True)
    saved_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"draft of {self.assignment_id}"


class ContestedMetricKeep(models.Model):
    """A maintainer's written decision to keep a contested metric in new releases."""

    metric = models.OneToOneField(
        "metrics_registry.Metric", on_delete=models.CASCADE, related_name="contested_keep"
    )
    reason = models.TextField()
    kept_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    kept_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=~Q(reason=""), name="contested_keep_has_reason"),
        ]

    def __str__(self) -> str:
        return f"keep {self.metric_id}"


class CriterionConsensus(models.Model):
    """The expert consensus on one rubric criterion (MentalHealthBench's rule): it survives with
    at least three reviews, at least two agreeing and none contradicting; otherwise it is
    dropped from scoring."""

    criterion = models.OneToOneField(
        "rubrics.RubricCriterion", on_delete=models.CASCADE, related_name="consensus"
    )
    queue = models.ForeignKey(RatingQueue, on_delete=models.CASCADE, related_name="+")
    reviews = models.PositiveSmallIntegerField()
    agrees = models.PositiveSmallIntegerField()
    contradicts = models.PositiveSmallIntegerField()
    survives = models.BooleanField()
    decided_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "criterion consensus"

    def __str__(self) -> str:
        return f"criterion {self.criterion_id}: {'survives' if self.survives else 'dropped'}"
