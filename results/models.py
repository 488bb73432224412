"""Precomputed results: pass-rate summaries and the reliability/robustness snapshot of a run.

Public pages read only these rows. They are derived data, rebuilt as a whole by
`results.services.results_refresh` whenever a run finishes, so nothing here is edited by hand.
"""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop, pgettext_lazy

from core.languages import LANGUAGE_TAG_MAX_LENGTH
from stats.estimates import MIN_ITEMS, Estimate, Exclusion


class SummaryLevel(models.TextChoices):
    OVERALL = "overall", pgettext_lazy("summary level", "Overall")
    AREA = "area", pgettext_lazy("summary level", "Area")
    SUBAREA = "subarea", pgettext_lazy("summary level", "Subarea")
    METRIC = "metric", pgettext_lazy("summary level", "Metric")


class AgeScope(models.TextChoices):
    TEEN = "teen", _("Teen (13–17)")
    ADULT = "adult", _("Adult (18+)")
    ALL = "all", _("Teens and adults")


def _derived_key(to: str, related_name: str, *, optional: bool = False) -> models.ForeignKey:
    """A key of a derived row: no database constraint and no index of its own (see below)."""
    return models.ForeignKey(
        to,
        null=optional,
        blank=optional,
        on_delete=models.CASCADE,
        db_constraint=False,
        db_index=False,
        related_name=related_name,
    )


class PassRateSummary(models.Model):
    """Pass rate of one model on one group of metrics of one polarity in one age context.

    `area`, `subarea` and `metric_version` are filled according to `level` (the check
    constraint below). A metric in several subareas contributes to each of them.

    Derived data: the refresh replaces a run's rows as a whole, in one transaction, from the
    run's own rows, so every key is valid when written. The foreign keys therefore carry no
    database constraint (PostgreSQL would check six of them per row at commit, the larger part
    of the write) and no single-column index: every read filters by run and level, and the one
    index below serves them all. Deleting a referenced row still removes its summaries through
    Django's CASCADE emulation.
    """

    release = _derived_key("metrics_registry.Release", "pass_rate_summaries", optional=True)
    run = _derived_key("evaluations.EvaluationRun", "pass_rate_summaries")
    target = _derived_key("llm.ModelConfiguration", "pass_rate_summaries")
    polarity = models.CharField(max_length=8)
    level = models.CharField(max_length=8, choices=SummaryLevel.choices)
    area = _derived_key("metrics_registry.Area", "+", optional=True)
    subarea = _derived_key("metrics_registry.Subarea", "+", optional=True)
    metric_version = _derived_key("metrics_registry.MetricVersion", "+", optional=True)
    age_context = models.CharField(max_length=5, choices=AgeScope.choices)
    # Blank: every language of the run pooled. A tag: that language's conversations alone,
    # written only when the run's conversations span more than one language.
    language = models.CharField(max_length=LANGUAGE_TAG_MAX_LENGTH, blank=True, default="")
    n_conversations = models.PositiveIntegerField()
    n_passed = models.PositiveIntegerField()
    n_clusters = models.PositiveIntegerField(
        default=0, help_text="Base scenarios behind the rate (the bootstrap resamples these)."
    )
    rate = models.FloatField()
    # Null when fewer than two base scenarios are behind the rate: no interval can be drawn.
    ci_low = models.FloatField(null=True, blank=True)
    ci_high = models.FloatField(null=True, blank=True)
    # Conversations of the group without a verdict (target error, timeout, not judged ...):
    # left out of the rate, and always reported beside it.
    n_failed = models.PositiveIntegerField(
        default=0, help_text="Conversations without a verdict, left out of the rate."
    )
    failures = models.JSONField(
        default=dict, blank=True, help_text="Failed conversations by reason."
    )
    method = models.CharField(
        max_length=120, blank=True, help_text="How the interval was drawn (empty: bootstrap)."
    )

    class Meta:
        ordering = ["run", "level", "polarity", "target"]
        indexes = [
            # Every read filters by run and level; a metric's rows are found by version.
            models.Index(
                fields=["run", "level", "metric_version"], name="summary_run_level_version"
            ),
            # The API pages through a run's rows in primary-key order: an index walk.
            models.Index(fields=["run", "id"], name="summary_run_pk"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(level="overall", area__isnull=True, subarea__isnull=True)
                    | Q(level="area", area__isnull=False, subarea__isnull=True)
                    | Q(level="subarea", subarea__isnull=False)
                    | Q(level="metric", metric_version__isnull=False)
                ),
                name="summary_keys_match_level",
            ),
            models.CheckConstraint(
                condition=Q(n_passed__lte=models.F("n_conversations")),
                name="summary_passed_lte_total",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.run_id} {self.target_id} {self.level} {self.polarity} {self.age_context}"

    @property
    def estimate(self) -> Estimate:
        """This pass rate as the estimate every page renders (``{% estimate row.estimate %}``)."""
        excluded = tuple(
            Exclusion(reason=reason, count=int(count))
            for reason, count in sorted((self.failures or {}).items())
            if count
        )
        if not self.n_conversations:
            return Estimate.insufficient(
                n=0, reason=gettext_noop("no conversations"), excluded=excluded
            )
        if self.n_conversations < MIN_ITEMS:
            return Estimate.insufficient(
                n=self.n_conversations,
                n_clusters=self.n_clusters,
                reason=f"one conversation (the minimum is {MIN_ITEMS})",
                method=self.method,
                excluded=excluded,
            )
        return Estimate(
            value=self.rate,
            low=self.ci_low,
            high=self.ci_high,
            # Rows written before the method was stored came from the cluster bootstrap.
            method=self.method or "cluster bootstrap over base scenarios",
            n=self.n_conversations,
            n_clusters=self.n_clusters,
            excluded=excluded,
        )


class RunAnalysis(models.Model):
    """Reliability and robustness figures of one run, as plain JSON for the methodology page.

    One row per run, replaced on every refresh. JSON because the figures are nested and read
    whole; the summaries that are filtered and sorted live in `PassRateSummary`.
    """

    run = models.OneToOneField(
        "evaluations.EvaluationRun", on_delete=models.CASCADE, related_name="analysis"
    )
    computed_at = models.DateTimeField()
    n_resamples = models.PositiveIntegerField()
    seconds = models.FloatField(default=0.0, help_text="How long the refresh took.")
    reliability = models.JSONField(default=dict)
    robustness = models.JSONField(default=dict)
    # What the run cost, from its call log (`services.run_cost`): totals, per model and role,
    # per target with the simulator's and judge's calls for its conversations.
    cost = models.JSONField(default=dict)

    def __str__(self) -> str:
        return f"Analysis of run {self.run_id}"


class RunFigures(models.Model):
    """Figures of a run that public pages show, computed by the refresh from expert ratings
    (judge trust, calibrated rates) and stored so a page on an empty cache only reads them.

    ``source`` names the inputs they were computed from (a fingerprint of the ratings read)
    and ``refreshed_at`` the refresh that wrote them; a reader compares both with the current
    ones and computes live when they differ, so stored figures are never shown once their
    inputs changed. One row per run, kind and part (a page reads only the part it shows).
    """

    run = models.ForeignKey(
        "evaluations.EvaluationRun", on_delete=models.CASCADE, related_name="stored_figures"
    )
    kind = models.CharField(max_length=32)
    # The part a page reads ("metric:<key>", "target:<id>"); "" the run-wide one.
    part = models.CharField(max_length=200, blank=True)
    source = models.CharField(max_length=64)
    # The `RunAnalysis.computed_at` of the refresh that wrote them: only the latest is read.
    refreshed_at = models.DateTimeField()
    computed_at = models.DateTimeField()
    figures = models.JSONField(default=dict)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "kind", "part"], name="run_figures_one_per_part")
        ]

    def __str__(self) -> str:
        return f"{self.kind} figures of run {self.run_id}"


class FigureCell(models.Model):
    """One cell of a run's figures (a metric x model's judge trust, a model's calibrated rate,
    a reliability figure) with a digest of the inputs it was computed from, so a refresh
    recomputes only the cells whose inputs changed (`results.services.figure_cells`).

    Derived and private to the refresh: pages read the documents assembled from the cells
    (`RunFigures`, `RunAnalysis`), never the cells.
    """

    run = models.ForeignKey(
        "evaluations.EvaluationRun", on_delete=models.CASCADE, related_name="figure_cells"
    )
    kind = models.CharField(max_length=32)
    key = models.CharField(max_length=200)
    digest = models.CharField(max_length=32)
    figures = models.JSONField(default=dict)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "kind", "key"], name="figure_cell_one_per_key")
        ]

    def __str__(self) -> str:
        return f"{self.kind} cell {self.key} of run {self.run_id}"


class RefreshRequest(models.Model):
    """A booked, debounced refresh of a run's figures (ratings changed since the last one).

    At most one per run (the primary key is the run): the booking is the debounce marker that
    every process sees. Deleted when the refresh starts.
    """

    run = models.OneToOneField(
        "evaluations.EvaluationRun",
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="refresh_request",
    )
    requested_at = models.DateTimeField(auto_now_add=True)
    # The analysis figures the changes since the booking reach (`refresh_scope.FIGURES`
    # names, e.g. ["experts"] for blind ratings); null: the whole analysis.
    figures = models.JSONField(null=True, blank=True, default=None)

    def __str__(self) -> str:
        return f"Refresh of run {self.run_id} booked at {self.requested_at:%H:%M:%S}"


class ReleaseExpertFigures(models.Model):
    """The expert figures of a release as they stood when it was published.

    Written once, in the publishing transaction (`results.services.expert_figures`); the public
    methodology page reads only this row, so a figure someone cites never moves as later
    ratings arrive. Staff pages show the live figures beside it.
    """

    release = models.OneToOneField(
        "metrics_registry.Release", on_delete=models.CASCADE, related_name="expert_figures"
    )
    frozen_at = models.DateTimeField()
    figures = models.JSONField(default=dict)

    def __str__(self) -> str:
        return f"Expert figures of release {self.release_id}, frozen {self.frozen_at:%Y-%m-%d}"


class AnchorStudy(models.Model):
    """A published anchor study: the same scenarios simulated with and without anchors, shown
    with the release whose metric versions it used. Neither run is official (the study is not
    a result about models), so the release is recorded here rather than on the runs; the
    figures are computed when the study is published and read whole by its page and API."""

    release = models.ForeignKey(
        "metrics_registry.Release", on_delete=models.PROTECT, related_name="anchor_studies"
    )
    with_anchors = models.ForeignKey(
        "evaluations.EvaluationRun", on_delete=models.CASCADE, related_name="+"
    )
    without_anchors = models.ForeignKey(
        "evaluations.EvaluationRun", on_delete=models.CASCADE, related_name="+"
    )
    published_at = models.DateTimeField()
    n_resamples = models.PositiveIntegerField()
    figures = models.JSONField(default=dict)

    class Meta:
        ordering = ["-published_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["with_anchors", "without_anchors"], name="anchor_study_unique_pair"
            ),
        ]

    def __str__(self) -> str:
        return f"Anchor study {self.with_anchors_id} vs {self.without_anchors_id}"
