"""Scenarios, evaluation runs, simulated conversations, judge verdicts and rubric items.

Uniqueness constraints are the backbone of idempotency: a Celery task that runs twice finds the
row it (or another worker) already wrote instead of writing a second one.
"""

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from core.models import TimeStampedModel

SCENARIO_BASE_COUNT = 3
TEEN_AGES = (13, 17)
ADULT_MIN_AGE = 18
DEFAULT_TURNS = 8
MAX_TURNS = 40


class AgeContext(models.TextChoices):
    TEEN = "teen", "Teen (13–17)"
    ADULT = "adult", "Adult (18+)"


class ScenarioStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    RETIRED = "retired", "Retired"


class ScenarioQuerySet(models.QuerySet):
    def active(self) -> "ScenarioQuerySet":
        return self.filter(status=ScenarioStatus.ACTIVE)

    def expanded(self) -> "ScenarioQuerySet":
        return self.filter(expanded_at__isnull=False)


class Scenario(TimeStampedModel):
    """One of the six test situations of a metric version: a base situation × an age context.

    Rows are created in two steps: the base situation (first writer call) and the expansion
    into persona, goals and anchors (second call), so an interrupted generation resumes at the
    variant it stopped on. `expanded_at` is null until the second step is done.
    """

    metric_version = models.ForeignKey(
        "metrics_registry.MetricVersion", on_delete=models.PROTECT, related_name="scenarios"
    )
    base_index = models.PositiveSmallIntegerField(
        validators=[MaxValueValidator(SCENARIO_BASE_COUNT - 1)]
    )
    age_context = models.CharField(max_length=5, choices=AgeContext.choices)
    base_situation = models.TextField(help_text="The situation shared by the teen and adult form.")
    situation = models.TextField(help_text="The situation adapted to this age context.")
    persona = models.JSONField(
        default=dict,
        blank=True,
        help_text="name, age, gender, background and other_attributes (a mapping).",
    )
    user_goal = models.TextField(blank=True)
    latent_adversarial_goal = models.TextField(blank=True)
    anchors = models.JSONField(
        default=list, blank=True, help_text='A list of {"turn": n, "text": "..."}, by turn.'
    )
    failure_condition = models.TextField(blank=True)
    status = models.CharField(
        max_length=8, choices=ScenarioStatus.choices, default=ScenarioStatus.ACTIVE, db_index=True
    )
    expanded_at = models.DateTimeField(null=True, blank=True)
    generation = models.PositiveSmallIntegerField(
        default=0, help_text="0 for the first generation, +1 per regeneration (varies the seed)."
    )
    generated_call_ids = models.JSONField(default=list, blank=True)
    is_offline = models.BooleanField(default=False)
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    edited_at = models.DateTimeField(null=True, blank=True)
    retired_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    retired_at = models.DateTimeField(null=True, blank=True)

    objects = ScenarioQuerySet.as_manager()

    class Meta:
        ordering = ["metric_version", "base_index", "-age_context", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["metric_version", "base_index", "age_context"],
                condition=Q(status="active"),
                name="scenario_one_active_per_variant",
            ),
            models.CheckConstraint(
                condition=Q(base_index__lte=SCENARIO_BASE_COUNT - 1),
                name="scenario_base_index_range",
            ),
            models.CheckConstraint(
                condition=Q(age_context__in=["teen", "adult"]), name="scenario_age_context_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.metric_version} · situation {self.base_index + 1} · {self.age_context}"

    @property
    def is_expanded(self) -> bool:
        return self.expanded_at is not None

    @property
    def is_active(self) -> bool:
        return self.status == ScenarioStatus.ACTIVE

    @property
    def label(self) -> str:
        return f"Situation {self.base_index + 1}, {self.get_age_context_display().lower()}"


class RunStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"
    CANCELLED = "cancelled", "Cancelled"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"


class EvaluationRun(TimeStampedModel):
    """Scenarios of some metric versions (and/or rubric items) × target models.

    Either a release (all its metric versions) or an explicit choice of metric versions; the
    explicit choice wins when both are given, so a subset of a release can be re-run.
    """

    name = models.CharField(max_length=200)
    release = models.ForeignKey(
        "metrics_registry.Release",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="evaluation_runs",
    )
    metric_versions = models.ManyToManyField(
        "metrics_registry.MetricVersion", blank=True, related_name="evaluation_runs"
    )
    rubric_items = models.ManyToManyField("RubricItem", blank=True, related_name="runs")
    targets = models.ManyToManyField(
        "llm.ModelConfiguration", related_name="evaluation_runs_as_target"
    )
    simulator = models.ForeignKey(
        "llm.ModelConfiguration", on_delete=models.PROTECT, related_name="+"
    )
    judge = models.ForeignKey("llm.ModelConfiguration", on_delete=models.PROTECT, related_name="+")
    turns = models.PositiveSmallIntegerField(
        default=DEFAULT_TURNS, validators=[MinValueValidator(1), MaxValueValidator(MAX_TURNS)]
    )
    replicates = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(20)]
    )
    judgments_per_conversation = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(1), MaxValueValidator(15)]
    )
    typo_rate = models.FloatField(
        default=0.03, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )
    seed = models.BigIntegerField(default=0)
    status = models.CharField(
        max_length=10, choices=RunStatus.choices, default=RunStatus.DRAFT, db_index=True
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Kept by the services with F() updates on every status change of a conversation, so the
    # progress page reads one row instead of counting tens of thousands.
    conversations_total = models.PositiveIntegerField(default=0)
    conversations_completed = models.PositiveIntegerField(default=0)
    conversations_failed = models.PositiveIntegerField(default=0)
    # Public pages read only official runs: a maintainer designates them per published release,
    # so a later test run never silently replaces what visitors see.
    is_official = models.BooleanField(default=False, db_index=True)
    official_changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    official_changed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(turns__gte=1), name="run_turns_gte_1"),
            models.CheckConstraint(condition=Q(replicates__gte=1), name="run_replicates_gte_1"),
            models.CheckConstraint(
                condition=Q(judgments_per_conversation__gte=1), name="run_judgments_gte_1"
            ),
            models.CheckConstraint(
                condition=Q(typo_rate__gte=0) & Q(typo_rate__lte=1), name="run_typo_rate_range"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def conversations_remaining(self) -> int:
        return max(
            0,
            self.conversations_total - self.conversations_completed - self.conversations_failed,
        )

    @property
    def is_finished(self) -> bool:
        return self.status in (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED)


class ConversationStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"


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
    attempts = models.PositiveIntegerField(default=0)
    simulated_at = models.DateTimeField(null=True, blank=True)
    stopped_early = models.BooleanField(default=False)
    stop_reason = models.TextField(blank=True)
    # The verdict, written once every judgment is in (majority of the judgments).
    verdict_present = models.BooleanField(null=True, blank=True)
    verdict_passed = models.BooleanField(null=True, blank=True)
    judgments_present = models.PositiveSmallIntegerField(default=0)
    judged_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Usage of every model call made for this conversation (simulator, target, judge).
    calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=8, default=Decimal(0))
    is_offline = models.BooleanField(default=False)

    class Meta:
        ordering = ["run", "scenario", "target", "replicate"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "scenario", "target", "replicate"],
                name="conversation_unique_per_run_scenario_target_replicate",
            ),
        ]
        indexes = [models.Index(fields=["run", "status"], name="conversation_run_status")]

    def __str__(self) -> str:
        return f"{self.scenario} × {self.target} #{self.replicate}"

    @property
    def is_finished(self) -> bool:
        return self.status in (ConversationStatus.COMPLETED, ConversationStatus.FAILED)

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
    has_unverified_quotes = models.BooleanField(default=False)
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


# --- Rubric items: the second benchmark form ----------------------------------------------------


class BehaviourDimension(models.TextChoices):
    CONTEXT_SEEKING = "context_seeking", "Seeking relevant context"
    ACKNOWLEDGING_DISTRESS = "acknowledging_distress", "Acknowledging distress"
    USER_AGENCY = "user_agency", "Preserving user agency"
    ACTIONABLE_GUIDANCE = "actionable_guidance", "Actionable guidance"
    SAFETY_ESCALATION = "safety_escalation", "Safety and escalation"
    ACCURACY = "accuracy", "Accuracy"
    BOUNDARIES = "boundaries", "Appropriate boundaries"
    NO_UNSUPPORTED_ASSUMPTIONS = "no_unsupported_assumptions", "Avoiding unsupported assumptions"
    TONE_EMPATHY = "tone_empathy", "Tone and empathy"
    PROFESSIONAL_REFERRAL = "professional_referral", "Referral to professional help"


class Acuity(models.TextChoices):
    NON_ACUTE = "non_acute", "Non-acute"
    HIGH_ACUITY = "high_acuity", "High acuity"
    EMERGENCY = "emergency", "Emergency"


class Population(models.TextChoices):
    ADULT = "adult", "Adult"
    TEEN = "teen", "Teen"
    CAREGIVER = "caregiver", "Caregiver"
    CLINICIAN = "clinician", "Clinician"


class RubricItem(TimeStampedModel):
    """A synthetic conversation ending in a user message, graded by an expert-written rubric.

    Acuity, population and language describe the conversation, so they live here; each
    criterion carries its own behaviour dimension (per-dimension scores restrict the rubric).
    """

    key = models.SlugField(
        max_length=100, unique=True, help_text="Stable identifier from the file."
    )
    title = models.CharField(max_length=200, blank=True)
    messages = models.JSONField(
        help_text='[{"role": "user"|"assistant", "content": "..."}], ending with a user message.'
    )
    acuity = models.CharField(max_length=12, choices=Acuity.choices, db_index=True)
    population = models.CharField(max_length=10, choices=Population.choices, db_index=True)
    language = models.CharField(
        max_length=16, default="en", help_text="BCP 47 tag, e.g. en, pt-BR."
    )
    source = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key

    @property
    def final_user_message(self) -> str:
        return str(self.messages[-1].get("content", "")) if self.messages else ""


class RubricCriterion(models.Model):
    item = models.ForeignKey(RubricItem, on_delete=models.CASCADE, related_name="criteria")
    position = models.PositiveSmallIntegerField(default=0)
    text = models.TextField()
    points = models.SmallIntegerField(
        validators=[MinValueValidator(-10), MaxValueValidator(10)],
        help_text="−10..+10, not 0: positive rewards, negative penalises.",
    )
    dimension = models.CharField(max_length=32, choices=BehaviourDimension.choices)
    dropped = models.BooleanField(
        default=False,
        help_text="Dropped by expert consensus: still shown, left out of grading and scores.",
    )

    class Meta:
        ordering = ["item", "position"]
        verbose_name_plural = "rubric criteria"
        constraints = [
            models.CheckConstraint(
                condition=Q(points__gte=-10) & Q(points__lte=10) & ~Q(points=0),
                name="rubric_criterion_points_range_nonzero",
            ),
            models.UniqueConstraint(
                fields=["item", "position"], name="rubric_criterion_unique_position"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item_id}#{self.position} ({self.points:+d})"


class RubricResponse(TimeStampedModel):
    """A target model's reply to a rubric item's final user message, within a run."""

    run = models.ForeignKey(
        EvaluationRun, on_delete=models.CASCADE, related_name="rubric_responses"
    )
    item = models.ForeignKey(RubricItem, on_delete=models.PROTECT, related_name="responses")
    target = models.ForeignKey("llm.ModelConfiguration", on_delete=models.PROTECT, related_name="+")
    reply = models.TextField(blank=True)
    status = models.CharField(
        max_length=10, choices=ConversationStatus.choices, default=ConversationStatus.PENDING
    )
    error = models.TextField(blank=True)
    score = models.FloatField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    call_ids = models.JSONField(default=list, blank=True)
    is_offline = models.BooleanField(default=False)

    class Meta:
        ordering = ["run", "item", "target"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "item", "target"], name="rubric_response_unique_per_run_item_target"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item} × {self.target}"


class RubricGrade(models.Model):
    response = models.ForeignKey(RubricResponse, on_delete=models.CASCADE, related_name="grades")
    criterion = models.ForeignKey(RubricCriterion, on_delete=models.PROTECT, related_name="grades")
    met = models.BooleanField()
    justification = models.TextField(blank=True)
    call_ids = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["response", "criterion__position"]
        constraints = [
            models.UniqueConstraint(
                fields=["response", "criterion"], name="rubric_grade_unique_per_criterion"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.response_id} {self.criterion_id}: {'met' if self.met else 'not met'}"
