"""A metric version's expert content in other languages (`MetricVersionText`).

The version itself stays immutable and in the language it was written in; a text is one
language's name, criterion and failure condition of it, for readers of that language. Judges and
simulators keep using the version's own text: a text is what a person reads on a page.

Who may show a text to the public: a reader of the language wrote it (`native`), or a reader
who did not write it reviewed a machine translation (`machine_reviewed`). An unreviewed
machine translation (`machine`) is kept for review and never shown publicly.

Edits: a native or unreviewed text may be edited by its writers; a reviewed one is frozen, so
what the reviewer vouched for is what readers see. Correcting a reviewed text first reopens it
(`metric_version_text_reopen`): it goes back to "machine-translated, not reviewed", leaves the
public pages, and needs a new review (or a reader's native rewrite) to return.
"""

from django.conf import settings
from django.db import models
from django.utils import timezone

from core.languages import LANGUAGE_TAG_MAX_LENGTH, TranslationProvenance, validate_language_tag

from .metrics import MetricVersion

# Provenances a visitor may read: written or checked by a reader of the language.
PUBLIC_PROVENANCES = (TranslationProvenance.NATIVE, TranslationProvenance.MACHINE_REVIEWED)


class MetricVersionTextQuerySet(models.QuerySet):
    def shown_publicly(self) -> "MetricVersionTextQuerySet":
        return self.filter(provenance__in=PUBLIC_PROVENANCES)


class MetricVersionText(models.Model):
    """One language's name, criterion and failure condition of one metric version."""

    metric_version = models.ForeignKey(
        MetricVersion, on_delete=models.PROTECT, related_name="texts"
    )
    language = models.CharField(
        max_length=LANGUAGE_TAG_MAX_LENGTH,
        validators=[validate_language_tag],
        help_text="BCP 47 tag of this text; differs from the version's own language.",
    )
    name = models.CharField(max_length=200)
    criterion = models.TextField()
    failure_condition = models.TextField(blank=True)
    provenance = models.CharField(
        max_length=16, choices=TranslationProvenance.choices, default=TranslationProvenance.NATIVE
    )
    written_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    objects = MetricVersionTextQuerySet.as_manager()

    class Meta:
        ordering = ["metric_version", "language"]
        constraints = [
            models.UniqueConstraint(
                fields=["metric_version", "language"], name="metric_version_text_one_per_language"
            ),
            # A review is recorded exactly when the text is a reviewed machine translation.
            models.CheckConstraint(
                condition=(
                    models.Q(provenance="machine_reviewed", reviewed_at__isnull=False)
                    | (
                        ~models.Q(provenance="machine_reviewed")
                        & models.Q(reviewed_at__isnull=True)
                    )
                ),
                name="metric_version_text_review_recorded",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.metric_version_id} [{self.language}]: {self.name}"

    @property
    def is_frozen(self) -> bool:
        """A reviewed machine translation: what the reviewer vouched for stays as it is."""
        return self.provenance == TranslationProvenance.MACHINE_REVIEWED

    @property
    def is_shown_publicly(self) -> bool:
        return self.provenance in PUBLIC_PROVENANCES
