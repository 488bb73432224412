"""Transcripts imported into a run to be judged without simulation, and where they came from."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from core.models import TimeStampedModel

from .runs import EvaluationRun
from .scenarios import AgeContext


class TranscriptFormat(models.TextChoices):
    OPENAI_JSONL = "openai_jsonl", _("OpenAI chat JSONL")
    RUN_EXPORT = "run_export", _("ImpactBench run export (JSONL)")
    INSPECT_LOG = "inspect_log", _("Inspect eval log (.json or .eval)")


class TranscriptImport(TimeStampedModel):
    """The provenance of a run whose conversations were imported: the file, its format, who
    imported it and when. A run without one was simulated by the platform."""

    run = models.OneToOneField(
        EvaluationRun, on_delete=models.CASCADE, related_name="transcript_import"
    )
    file_name = models.CharField(max_length=255)
    format = models.CharField(max_length=16, choices=TranscriptFormat.choices)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    imported_at = models.DateTimeField()
    conversation_count = models.PositiveIntegerField(default=0)
    default_age_context = models.CharField(
        max_length=5,
        choices=AgeContext.choices,
        help_text="The age context of conversations whose line does not name one, as the "
        "importer declared it.",
    )

    class Meta:
        ordering = ["-imported_at"]

    def __str__(self) -> str:
        return f"{self.file_name} ({self.get_format_display()})"
