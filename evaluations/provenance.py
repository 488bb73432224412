"""Where a run's transcripts came from: simulated by the platform, or imported from a file (which
file, in which format, by whom and when). Read by every page and API payload that shows a run's
figures or a transcript, so an imported figure is never taken for a simulated result."""

from dataclasses import dataclass
from datetime import datetime

from .models import Conversation, EvaluationRun, TranscriptImport

SIMULATED = "simulated"
IMPORTED = "imported"


@dataclass(frozen=True)
class TranscriptSource:
    kind: str = SIMULATED
    file_name: str = ""
    format: str = ""
    format_label: str = ""
    imported_by: str = ""
    imported_at: datetime | None = None
    # A conversation's place in the file ("line 3", "sample 2 (id s-7)"); "" for a run.
    where: str = ""

    @property
    def is_imported(self) -> bool:
        return self.kind == IMPORTED

    def as_dict(self) -> dict:
        if not self.is_imported:
            return {"kind": SIMULATED}
        record = {
            "kind": IMPORTED,
            "file_name": self.file_name,
            "format": self.format,
            "imported_by": self.imported_by,
            "imported_at": self.imported_at.isoformat() if self.imported_at else None,
        }
        if self.where:
            record["where"] = self.where
        return record


def _source(found: TranscriptImport | None) -> TranscriptSource:
    if found is None:
        return TranscriptSource()
    person = found.imported_by
    return TranscriptSource(
        kind=IMPORTED,
        file_name=found.file_name,
        format=found.format,
        format_label=str(found.get_format_display()),
        imported_by=(person.get_full_name() or person.get_username()) if person else "",
        imported_at=found.imported_at,
    )


def run_transcript_source(run_id: int) -> TranscriptSource:
    """The run's source: one query."""
    found = TranscriptImport.objects.select_related("imported_by").filter(run_id=run_id).first()
    return _source(found)


def run_source(run: EvaluationRun) -> TranscriptSource:
    """The run's source, without a query when the run was read with its `transcript_import`
    (`results.selectors` reads public runs so)."""
    try:
        found = run.transcript_import
    except TranscriptImport.DoesNotExist:
        found = None
    return _source(found)


def conversation_transcript_source(
    conversation: Conversation, *, run_source: TranscriptSource | None = None
) -> TranscriptSource:
    """A conversation's source, with its place in the file; a simulated one costs no query,
    and `run_source` (its run's, when the caller has it) spares the imported ones theirs."""
    if not conversation.is_imported:
        return TranscriptSource()
    source = run_source or run_transcript_source(conversation.run_id)
    where = str((conversation.source_metadata or {}).get("where") or conversation.source_line)
    return TranscriptSource(**{**source.__dict__, "where": where})
