from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy, pgettext_lazy

from core.models import TimeStampedModel
from core.roles import Role, user_has_role


class AgeContext(models.TextChoices):
    TEEN = "teen", gettext_lazy("Teens (13–17)")
    ADULT = "adult", gettext_lazy("Adults (18+)")
    BOTH = "both", gettext_lazy("Both teens and adults")


class SubmissionStatus(models.TextChoices):
    DRAFT = "draft", pgettext_lazy("submission status", "Draft")
    SUBMITTED = "submitted", pgettext_lazy("submission status", "Submitted")
    DRAFTING = "drafting", pgettext_lazy("submission status", "Drafting metrics")
    DRAFTING_FAILED = "drafting_failed", pgettext_lazy("submission status", "Drafting failed")
    IN_REVIEW = "in_review", pgettext_lazy("submission status", "In review")
    ACCEPTED = "accepted", pgettext_lazy("submission status", "Accepted")
    CHANGES_REQUESTED = "changes_requested", pgettext_lazy("submission status", "Changes requested")
    DECLINED = "declined", pgettext_lazy("submission status", "Declined")
    WITHDRAWN = "withdrawn", pgettext_lazy("submission status", "Withdrawn")


# Statuses in which the contributor may still change the text.
EDITABLE_STATUSES = {SubmissionStatus.DRAFT, SubmissionStatus.CHANGES_REQUESTED}
FINAL_STATUSES = {SubmissionStatus.ACCEPTED, SubmissionStatus.DECLINED, SubmissionStatus.WITHDRAWN}


class SubmissionQuerySet(models.QuerySet):
    def visible_to(self, user) -> "SubmissionQuerySet":
        if user_has_role(user, Role.RESEARCHER, Role.MAINTAINER):
            return self
        if not user.is_authenticated:
            return self.none()
        return self.filter(contributor=user)


class Submission(TimeStampedModel):
    """A construct proposed by a domain expert, in their own words."""

    contributor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="submissions"
    )
    title = models.CharField(max_length=160)
    behavior = models.TextField()
    context = models.TextField(blank=True)
    supportive_examples = models.TextField(blank=True)
    harmful_examples = models.TextField(blank=True)
    justification = models.TextField(blank=True)
    age_context = models.CharField(
        max_length=8, choices=AgeContext.choices, default=AgeContext.BOTH
    )
    suggested_subareas = models.ManyToManyField(
        "metrics_registry.Subarea", blank=True, related_name="+"
    )
    expertise = models.CharField(max_length=300, blank=True)
    credit_name = models.CharField(max_length=160, blank=True)
    status = models.CharField(
        max_length=20,
        choices=SubmissionStatus.choices,
        default=SubmissionStatus.DRAFT,
        db_index=True,
    )
    submitted_at = models.DateTimeField(null=True, blank=True)
    drafting_error = models.TextField(blank=True)
    drafting_attempts = models.PositiveIntegerField(default=0)
    review_note = models.TextField(blank=True)
    # The new-submission form's one-time token: a second POST of the same form (a double click,
    # a retry after an error) finds the submission the first one made instead of a duplicate.
    creation_token = models.CharField(max_length=64, blank=True, default="", editable=False)

    objects = SubmissionQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["contributor", "creation_token"],
                condition=~models.Q(creation_token=""),
                name="submission_one_per_form_token",
            )
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def is_editable(self) -> bool:
        return self.status in EDITABLE_STATUSES

    @property
    def can_withdraw(self) -> bool:
        return self.status not in FINAL_STATUSES


class CitationKind(models.TextChoices):
    DOI = "doi", pgettext_lazy("citation kind", "DOI")
    URL = "url", pgettext_lazy("citation kind", "Web address")
    TEXT = "text", pgettext_lazy("citation kind", "Reference")


class Citation(models.Model):
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="citations")
    kind = models.CharField(max_length=8, choices=CitationKind.choices)
    value = models.CharField(max_length=1000)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.value

    @property
    def href(self) -> str:
        if self.kind == CitationKind.DOI:
            return f"https://doi.org/{self.value}"
        if self.kind == CitationKind.URL:
            return self.value
        return ""


class SubmissionEvent(models.Model):
    """Every status change of a submission: who moved it, when, and why."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="events")
    from_status = models.CharField(max_length=20, choices=SubmissionStatus.choices, blank=True)
    to_status = models.CharField(max_length=20, choices=SubmissionStatus.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.submission_id}: {self.from_status or '∅'} → {self.to_status}"


class CandidateStatus(models.TextChoices):
    PENDING = "pending", pgettext_lazy("candidate status", "Pending review")
    ACCEPTED = "accepted", pgettext_lazy("candidate status", "Accepted")
    REJECTED = "rejected", pgettext_lazy("candidate status", "Rejected")
    RETURNED = "returned", pgettext_lazy("candidate status", "Sent back for changes")


class Fidelity(models.TextChoices):
    FAITHFUL = "faithful", gettext_lazy("Faithful to the submission")
    PARTLY = "partly", gettext_lazy("Partly faithful")
    UNFAITHFUL = "unfaithful", gettext_lazy("Unfaithful")


class MetricCandidate(TimeStampedModel):
    """A metric proposed by the drafting model from a submission, awaiting a researcher."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="candidates")
    position = models.PositiveSmallIntegerField(default=0)
    short_name = models.CharField(max_length=200)
    criterion = models.TextField()
    polarity = models.CharField(
        max_length=8,
        choices=[
            ("positive", pgettext_lazy("polarity", "Positive")),
            ("negative", pgettext_lazy("polarity", "Negative")),
        ],
    )
    subareas = models.ManyToManyField("metrics_registry.Subarea", related_name="+")
    label_category = models.ForeignKey(
        "metrics_registry.LabelCategory", on_delete=models.PROTECT, related_name="+"
    )
    rationale = models.TextField(blank=True)
    status = models.CharField(
        max_length=10,
        choices=CandidateStatus.choices,
        default=CandidateStatus.PENDING,
        db_index=True,
    )
    fidelity = models.CharField(max_length=10, choices=Fidelity.choices, blank=True)
    review_reason = models.TextField(blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    metric = models.ForeignKey(
        "metrics_registry.Metric",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="source_candidates",
    )
    # Provenance of the draft: which model calls produced it, and whether it was the stand-in.
    drafted_offline = models.BooleanField(default=False)
    drafting_call_ids = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["submission", "position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["submission", "position"], name="candidate_position_unique"
            ),
        ]

    def __str__(self) -> str:
        return self.short_name


class CandidateChange(models.Model):
    """One recorded change to a candidate: an edit, a rating or a decision, with who and when."""

    candidate = models.ForeignKey(MetricCandidate, on_delete=models.CASCADE, related_name="changes")
    action = models.CharField(max_length=20)
    changes = models.JSONField(default=dict, blank=True)
    note = models.TextField(blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.action} on candidate {self.candidate_id}"


class EnquiryKind(models.TextChoices):
    BENCHMARK = "benchmark", gettext_lazy("Propose a benchmark")
    CONTACT = "contact", gettext_lazy("Get in touch")


class EnquiryStatus(models.TextChoices):
    NEW = "new", pgettext_lazy("enquiry status", "New")
    ANSWERED = "answered", pgettext_lazy("enquiry status", "Answered")
    CLOSED = "closed", pgettext_lazy("enquiry status", "Closed without answer")


class Enquiry(TimeStampedModel):
    """A message from the public contact form, triaged by researchers and answered by email."""

    kind = models.CharField(max_length=12, choices=EnquiryKind.choices)
    name = models.CharField(max_length=160)
    email = models.EmailField()
    affiliation = models.CharField(max_length=200, blank=True)
    message = models.TextField(blank=True)
    benchmark_url = models.URLField(max_length=500, blank=True)
    # The site language the message was written from: the answer is sent in it.
    language = models.CharField(max_length=35, default="en")
    # A keyed hash of the sender's address, only for the rate limit; the address is not kept.
    client_hash = models.CharField(max_length=64, db_index=True)
    status = models.CharField(
        max_length=10, choices=EnquiryStatus.choices, default=EnquiryStatus.NEW, db_index=True
    )
    answer = models.TextField(blank=True)
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "enquiries"

    def __str__(self) -> str:
        return f"{self.get_kind_display()} from {self.name}"
