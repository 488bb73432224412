"""Scenarios, evaluation runs, simulated conversations, judge verdicts and rubric items.

Uniqueness constraints are the backbone of idempotency: a Celery task that runs twice finds the
row it (or another worker) already wrote instead of writing a second one.
"""

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


class RubricGrading(models.TextChoices):
    PER_CRITERION = "per_criterion", "One grader call per criterion (HealthBench)"
    ALL_IN_ONE = "all_in_one", "One grader call for all criteria"


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
    use_anchors = models.BooleanField(
        default=True,
        help_text="Give the user simulator the scenario's anchor plan. Off, the simulator plays "
        "the persona and goals only, so replicates with and without anchors can be compared.",
    )
    rubric_grading = models.CharField(
        max_length=16, choices=RubricGrading.choices, default=RubricGrading.PER_CRITERION
    )
    synthetic = models.BooleanField(
        default=False,
        help_text="Generated for load tests and benchmarks (generate_synthetic_dataset): "
        "not results of any real model.",
    )
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
    # Budget and health (evaluations/services/health.py). The cap is in the configurations'
    # price units; the run stops handing out work once the call log's cost reaches it.
    spending_cap = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    halt_reason = models.TextField(blank=True)
    # {configuration id: reason} for targets paused in this run after persistent failures.
    paused_configurations = models.JSONField(default=dict, blank=True)
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


class FailureKind(models.TextChoices):
    """Why a failed conversation failed; summaries count each kind beside the pass rates."""

    TARGET_ERROR = "target_error", "Target error"
    SIMULATOR_ERROR = "simulator_error", "User simulator error"
    NOT_JUDGED = "not_judged", "Not judged (judge output unusable after retries)"
    TIMEOUT = "timeout", "Time limit"
    OTHER = "other", "Other error"


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
    reasked_for_evidence = models.BooleanField(
        default=False, help_text="The first reading quoted words not in the transcript."
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


class AnchorCoverage(models.Model):
    """Whether one anchor of the scenario was actually raised in a conversation, as read by a
    model of the judge's family from the user turns (not assumed from the plan)."""

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="anchor_coverage"
    )
    anchor_index = models.PositiveSmallIntegerField(help_text="Position in the scenario's anchors.")
    anchor_text = models.TextField()
    raised = models.BooleanField()
    turn = models.PositiveSmallIntegerField(null=True, blank=True)
    quote = models.TextField(blank=True)
    quote_found = models.BooleanField(
        default=False, help_text="The quote occurs in the user turn it names."
    )
    call_ids = models.JSONField(default=list, blank=True)
    is_offline = models.BooleanField(default=False)

    class Meta:
        ordering = ["conversation", "anchor_index"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "anchor_index"], name="anchor_coverage_unique_per_anchor"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.conversation_id} anchor {self.anchor_index}: raised={self.raised}"


# --- Rubric items: the second benchmark form ----------------------------------------------------


class RubricDimension(models.Model):
    """A behaviour dimension rubric criteria are tagged with: vocabulary kept as data.

    Seeded with MentalHealthBench's ten dimensions and HealthBench's five axes (accuracy is
    shared); a maintainer can add more in the admin without a code change.
    """

    slug = models.SlugField(max_length=40, unique=True)
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    frameworks = models.JSONField(
        default=list, blank=True, help_text='Benchmarks using it, e.g. ["HealthBench"].'
    )
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "slug"]

    def __str__(self) -> str:
        return self.name


class CriterionOrigin(models.TextChoices):
    PLATFORM = "platform", "Written on the platform (counts after expert consensus)"
    PUBLISHED = "published", "Imported from a published benchmark (validated by its source)"


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
    acuity = models.CharField(
        max_length=12, choices=Acuity.choices, blank=True, db_index=True, help_text="Optional."
    )
    population = models.CharField(
        max_length=10, choices=Population.choices, blank=True, db_index=True, help_text="Optional."
    )
    language = models.CharField(
        max_length=16, default="en", help_text="BCP 47 tag, e.g. en, pt-BR."
    )
    source = models.CharField(max_length=200, blank=True)
    source_format = models.CharField(
        max_length=20, default="impactbench", help_text='"impactbench" or "healthbench".'
    )
    external_id = models.CharField(
        max_length=200, blank=True, help_text="The identifier in the source file (prompt_id)."
    )
    metadata = models.JSONField(
        default=dict,
        blank=True,
        help_text="Kept from the source row: HealthBench's example_tags (themes, physician "
        "categories) and ideal_completions_data, and any other field it carried.",
    )

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key

    @property
    def final_user_message(self) -> str:
        return str(self.messages[-1].get("content", "")) if self.messages else ""


class CriterionConsensusState(models.TextChoices):
    UNREVIEWED = "unreviewed", "Awaiting consensus"
    SURVIVED = "survived", "Survived consensus"
    DROPPED = "dropped", "Dropped by consensus"


class RubricCriterionQuerySet(models.QuerySet):
    def counting(self) -> "RubricCriterionQuerySet":
        """Criteria that count in scoring: validated by their source or by expert consensus."""
        return self.filter(
            Q(origin=CriterionOrigin.PUBLISHED)
            | Q(consensus_state=CriterionConsensusState.SURVIVED)
        )


class RubricCriterion(models.Model):
    item = models.ForeignKey(RubricItem, on_delete=models.CASCADE, related_name="criteria")
    position = models.PositiveSmallIntegerField(default=0)
    text = models.TextField()
    points = models.SmallIntegerField(
        validators=[MinValueValidator(-10), MaxValueValidator(10)],
        help_text="−10..+10, not 0: positive rewards, negative penalises.",
    )
    dimension = models.CharField(
        max_length=40, help_text="A RubricDimension slug (checked on import and in forms)."
    )
    tags = models.JSONField(
        default=list, blank=True, help_text='As in the source, e.g. ["level:example", "axis:..."].'
    )
    # A published benchmark's criteria arrive validated by their source and count in scoring
    # without platform consensus.
    origin = models.CharField(
        max_length=10, choices=CriterionOrigin.choices, default=CriterionOrigin.PLATFORM
    )
    consensus_state = models.CharField(
        max_length=10,
        choices=CriterionConsensusState.choices,
        default=CriterionConsensusState.UNREVIEWED,
        help_text="Expert consensus on a criterion written on the platform.",
    )

    objects = RubricCriterionQuerySet.as_manager()

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

    @property
    def dimension_name(self) -> str:
        from .rubric_dimensions import dimension_label

        return dimension_label(self.dimension)

    @property
    def source_validated(self) -> bool:
        """Imported from a published benchmark: counts without platform consensus."""
        return self.origin == CriterionOrigin.PUBLISHED

    @property
    def counts(self) -> bool:
        return self.source_validated or self.consensus_state == CriterionConsensusState.SURVIVED


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
    score = models.FloatField(
        null=True, blank=True, help_text="HealthBench item score; not clipped, can be negative."
    )
    counted_criteria = models.JSONField(
        null=True,
        blank=True,
        help_text="Ids of the criteria that counted, frozen when grading began, so later "
        "reviews never change this score.",
    )
    attempts = models.PositiveIntegerField(default=0)
    call_ids = models.JSONField(default=list, blank=True)
    is_offline = models.BooleanField(default=False)
    claimed_by = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    dispatched_at = models.DateTimeField(null=True, blank=True)

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


class ReleaseRubricFreeze(models.Model):
    """The rubric criteria that counted when a release was published.

    Written once, in the publishing transaction; grading a run of that release counts exactly
    these criteria, so a later consensus review never changes a published release's scores.
    """

    release = models.OneToOneField(
        "metrics_registry.Release", on_delete=models.CASCADE, related_name="rubric_freeze"
    )
    criteria = models.ManyToManyField(RubricCriterion, related_name="+", blank=True)
    frozen_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"criteria counted in release {self.release_id}"
