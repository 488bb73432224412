"""Reading transcripts from outside: three formats, one shape, every line checked.

A file is read whole before anything is written (`transcript_runs` writes in one transaction),
and every problem is reported with where it is — "line 3" of a JSONL file, "sample 2" of an
Inspect log — so a person can fix the file in one pass. Formats:

* OpenAI chat JSONL: one conversation per line, ``{"messages": [{"role": ..., "content": ...}],
  "metadata": {...}}``; the metadata may name the model, the metric (``metric`` or
  ``metric_key``, with an optional ``metric_version``), a ``scenario_id``, ``language`` and
  ``age_context`` (teen or adult). ``model`` may also sit beside ``messages``.
* The platform's own run export (`run_exports`): its "conversation" lines, other lines skipped.
* An Inspect eval log as JSON (``samples[].messages``, the model in ``eval.model``), or as an
  ``.eval`` archive (``header.json`` and ``samples/*.json``).

Messages alternate user then assistant (system messages first, kept apart); the text each
holds is what the judge reads, so it must be non-empty text without control characters.
"""

import io
import zipfile
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from core.jsonsafe import json_loads_checked

from ..models import MAX_TURNS, AgeContext, TranscriptFormat

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_CONVERSATIONS = 2000
MAX_MESSAGE_CHARACTERS = 50_000
# The errors shown at once: enough to fix a file in one pass, not a page of thousands.
MAX_ERRORS_SHOWN = 50
ROLES = ("system", "user", "assistant")
# The sample metadata worth keeping beside an imported conversation (the export's prompts are
# the platform's own and would only repeat them).
_INSPECT_METADATA_KEPT = ("metric_key", "metric_version", "age_context", "base_index", "language")


@dataclass(frozen=True)
class ImportedTurn:
    user: str
    assistant: str
    user_as_written: str = ""


@dataclass(frozen=True)
class ImportedConversation:
    """One conversation as the file gave it; references are resolved when the run is made."""

    where: str  # "line 3", "sample 2": how errors and the provenance name it
    line: int  # its line (JSONL) or its sample's position (Inspect), 1-based
    turns: tuple[ImportedTurn, ...]
    model: str = ""
    source_id: str = ""
    metric_key: str = ""
    metric_version: int | None = None
    scenario_id: int | None = None
    base_index: int | None = None
    age_context: str = ""
    language: str = ""
    system: str = ""
    metadata: dict = field(default_factory=dict)


class TranscriptFileInvalid(ApplicationError):
    """The file cannot be imported; `errors` says where and why, one entry per problem."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors[:MAX_ERRORS_SHOWN]
        more = len(errors) - len(self.errors)
        summary = _("The file was not imported; nothing was saved. Fix these problems:")
        listed = "\n".join(self.errors)
        if more > 0:
            listed += "\n" + _("…and %(count)d more.") % {"count": more}
        super().__init__(f"{summary}\n{listed}")


class _LineProblem(Exception):
    pass


def _text(content: Any, *, index: int) -> str:
    """A message's text: a string, or Inspect's list of content parts (text parts joined)."""
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text") or ""))
            elif isinstance(part, dict) and part.get("type") == "reasoning":
                continue  # the model's hidden reasoning is not what the user read
            else:
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise _LineProblem(
                    _("message %(index)d holds a %(kind)s part; only text can be judged.")
                    % {"index": index, "kind": kind}
                )
        content = "\n".join(parts)
    if not isinstance(content, str):
        raise _LineProblem(
            _("message %(index)d has no text content (content must be a string).")
            % {"index": index}
        )
    if not content.strip():
        raise _LineProblem(_("message %(index)d is empty.") % {"index": index})
    if len(content) > MAX_MESSAGE_CHARACTERS:
        raise _LineProblem(
            _("message %(index)d has %(count)d characters; at most %(limit)d are accepted.")
            % {"index": index, "count": len(content), "limit": MAX_MESSAGE_CHARACTERS}
        )
    return content


def _turns(messages: Any) -> tuple[str, tuple[ImportedTurn, ...]]:
    """(the system text, the user/assistant turns) of a list of chat messages."""
    if not isinstance(messages, list) or not messages:
        raise _LineProblem(_('it has no "messages" list.'))
    system: list[str] = []
    turns: list[ImportedTurn] = []
    pending_user: str | None = None
    for index, message in enumerate(messages, start=1):
        if not isinstance(message, dict):
            raise _LineProblem(_("message %(index)d is not an object.") % {"index": index})
        role = message.get("role")
        if role not in ROLES:
            raise _LineProblem(
                _(
                    "message %(index)d has the unknown role “%(role)s”; use system, user or "
                    "assistant."
                )
                % {"index": index, "role": str(role)[:40]}
            )
        text = _text(message.get("content"), index=index)
        if role == "system":
            if turns or pending_user is not None:
                raise _LineProblem(
                    _("message %(index)d is a system message after the conversation began.")
                    % {"index": index}
                )
            system.append(text)
        elif role == "user":
            if pending_user is not None:
                raise _LineProblem(
                    _(
                        "message %(index)d is a second user message in a row; turns alternate "
                        "user, then assistant."
                    )
                    % {"index": index}
                )
            pending_user = text
        else:
            if pending_user is None:
                raise _LineProblem(
                    _("message %(index)d is an assistant message with no user message before it.")
                    % {"index": index}
                )
            turns.append(ImportedTurn(user=pending_user, assistant=text))
            pending_user = None
    if pending_user is not None:
        raise _LineProblem(_("the last user message has no assistant reply to judge."))
    if not turns:
        raise _LineProblem(_("it holds no user message answered by the assistant."))
    if len(turns) > MAX_TURNS:
        raise _LineProblem(
            _("it has %(count)d turns; at most %(limit)d are judged.")
            % {"count": len(turns), "limit": MAX_TURNS}
        )
    return "\n\n".join(system), tuple(turns)


def _integer(value: Any, name: str) -> int | None:
    if value in (None, ""):
        return None
    if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).isdigit():
        raise _LineProblem(_("%(name)s must be a whole number.") % {"name": name})
    return int(value)


def _age_context(value: Any) -> str:
    if value in (None, ""):
        return ""
    if value not in AgeContext.values:
        raise _LineProblem(
            _("age_context “%(value)s” is neither teen nor adult.") % {"value": str(value)[:20]}
        )
    return str(value)


def _string(value: Any, limit: int = 200) -> str:
    """A one-line name or id from the file: names and ids are shown on one line (titles, CSV
    cells), so line breaks and runs of spaces become one space."""
    if value in (None, ""):
        return ""
    return " ".join(str(value).split())[:limit]


def _openai_record(record: dict, *, where: str, line: int) -> ImportedConversation:
    metadata = record.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise _LineProblem(_('"metadata" must be an object.'))
    system, turns = _turns(record.get("messages"))
    return ImportedConversation(
        where=where,
        line=line,
        turns=turns,
        system=system,
        model=_string(metadata.get("model") or record.get("model")),
        source_id=_string(metadata.get("id") or record.get("id")),
        metric_key=_string(metadata.get("metric_key") or metadata.get("metric"), 40),
        metric_version=_integer(metadata.get("metric_version"), "metric_version"),
        scenario_id=_integer(metadata.get("scenario_id"), "scenario_id"),
        age_context=_age_context(metadata.get("age_context")),
        language=_string(metadata.get("language"), 20),
        metadata=metadata,
    )


def _run_export_record(record: dict, *, where: str, line: int) -> ImportedConversation | None:
    if record.get("type") != "conversation":
        return None  # the run's settings, rubric replies: nothing to judge here
    transcript = record.get("transcript")
    if not transcript:
        return None  # a conversation that failed before its first turn
    if not isinstance(transcript, list):
        raise _LineProblem(_('"transcript" must be a list of turns.'))
    turns = []
    for position, turn in enumerate(transcript, start=1):
        if not isinstance(turn, dict):
            raise _LineProblem(_("turn %(index)d is not an object.") % {"index": position})
        user = _text(turn.get("user"), index=2 * position - 1)
        written = turn.get("user_as_written") or user
        turns.append(
            ImportedTurn(
                user=user,
                assistant=_text(turn.get("assistant"), index=2 * position),
                user_as_written=_text(written, index=2 * position - 1),
            )
        )
    if len(turns) > MAX_TURNS:
        raise _LineProblem(
            _("it has %(count)d turns; at most %(limit)d are judged.")
            % {"count": len(turns), "limit": MAX_TURNS}
        )
    return ImportedConversation(
        where=where,
        line=line,
        turns=tuple(turns),
        model=_string(record.get("model")),
        source_id=_string(record.get("id")),
        metric_key=_string(record.get("metric_key"), 40),
        metric_version=_integer(record.get("metric_version"), "metric_version"),
        scenario_id=_integer(record.get("scenario_id"), "scenario_id"),
        base_index=_integer(record.get("base_index"), "base_index"),
        age_context=_age_context(record.get("age_context")),
        language=_string(record.get("language"), 20),
    )


def _jsonl(data: bytes, parse) -> tuple[list[ImportedConversation], list[str]]:
    conversations: list[ImportedConversation] = []
    errors: list[str] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        where = _("line %(number)d") % {"number": number}
        try:
            record = json_loads_checked(raw.decode("utf-8"))
            if not isinstance(record, dict):
                raise _LineProblem(_("it is not a JSON object."))
            parsed = parse(record, where=where, line=number)
        except UnicodeDecodeError:
            errors.append(_("%(where)s: it is not UTF-8 text.") % {"where": where})
        except ApplicationError as error:
            errors.append(f"{where}: {error.message}")
        except _LineProblem as problem:
            errors.append(f"{where}: {problem}")
        else:
            if parsed is not None:
                conversations.append(parsed)
    return conversations, errors


def _inspect_documents(data: bytes) -> tuple[dict, list[Any]]:
    """(the eval header, the samples) of an Inspect log: a JSON document or a .eval archive."""
    if zipfile.is_zipfile(io.BytesIO(data)):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            if sum(info.file_size for info in archive.infolist()) > MAX_FILE_BYTES:
                raise ApplicationError(
                    _("The archive unpacks to more than %(limit)d MB.")
                    % {"limit": MAX_FILE_BYTES // 1024 // 1024}
                )
            names = archive.namelist()
            if "header.json" not in names:
                raise ApplicationError(_("This .eval archive has no header.json."))
            header = json_loads_checked(archive.read("header.json").decode("utf-8"))
            samples = [
                json_loads_checked(archive.read(name).decode("utf-8"))
                for name in sorted(names)
                if name.startswith("samples/") and name.endswith(".json")
            ]
            return header, samples
    document = json_loads_checked(data.decode("utf-8"), max_depth=64)
    if not isinstance(document, dict) or not isinstance(document.get("samples"), list):
        raise ApplicationError(_('This is not an Inspect eval log: it has no "samples" list.'))
    return document, document["samples"]


def _inspect(data: bytes) -> tuple[list[ImportedConversation], list[str]]:
    try:
        header, samples = _inspect_documents(data)
    except UnicodeDecodeError:
        return [], [_("The log is not UTF-8 text.")]
    except (ApplicationError, zipfile.BadZipFile) as error:
        return [], [getattr(error, "message", str(error))]
    evaluation = header.get("eval") if isinstance(header.get("eval"), dict) else {}
    model = _string(evaluation.get("model"))
    conversations: list[ImportedConversation] = []
    errors: list[str] = []
    for number, sample in enumerate(samples, start=1):
        where = _("sample %(number)d") % {"number": number}
        try:
            if not isinstance(sample, dict):
                raise _LineProblem(_("it is not a JSON object."))
            metadata = sample.get("metadata") or {}
            if not isinstance(metadata, dict):
                raise _LineProblem(_('"metadata" must be an object.'))
            if sample.get("id") not in (None, ""):
                where = _("sample %(number)d (id %(id)s)") % {
                    "number": number,
                    "id": _string(sample["id"], 80),
                }
            system, turns = _turns(sample.get("messages"))
            epoch = _string(sample.get("epoch"), 10)
            conversations.append(
                ImportedConversation(
                    where=where,
                    line=number,
                    turns=turns,
                    system=system,
                    model=_string(metadata.get("model")) or model,
                    source_id=_string(sample.get("id")) + (f"#{epoch}" if epoch else ""),
                    metric_key=_string(metadata.get("metric_key") or metadata.get("metric"), 40),
                    metric_version=_integer(metadata.get("metric_version"), "metric_version"),
                    scenario_id=_integer(metadata.get("scenario_id"), "scenario_id"),
                    base_index=_integer(metadata.get("base_index"), "base_index"),
                    age_context=_age_context(metadata.get("age_context")),
                    language=_string(metadata.get("language"), 20),
                    metadata={k: v for k, v in metadata.items() if k in _INSPECT_METADATA_KEPT},
                )
            )
        except _LineProblem as problem:
            errors.append(f"{where}: {problem}")
    return conversations, errors


def transcripts_parse(*, data: bytes, format: str) -> list[ImportedConversation]:
    """Every conversation of the file, or `TranscriptFileInvalid` naming every bad line.

    Limits (stated in the messages): MAX_FILE_BYTES, MAX_CONVERSATIONS, MAX_TURNS turns and
    MAX_MESSAGE_CHARACTERS characters per message.
    """
    if len(data) > MAX_FILE_BYTES:
        raise TranscriptFileInvalid(
            [
                _("The file has %(size).1f MB; at most %(limit)d MB can be imported at once.")
                % {"size": len(data) / 1024 / 1024, "limit": MAX_FILE_BYTES // 1024 // 1024}
            ]
        )
    if format == TranscriptFormat.OPENAI_JSONL:
        conversations, errors = _jsonl(data, _openai_record)
    elif format == TranscriptFormat.RUN_EXPORT:
        conversations, errors = _jsonl(data, _run_export_record)
    elif format == TranscriptFormat.INSPECT_LOG:
        conversations, errors = _inspect(data)
    else:
        raise TranscriptFileInvalid([_("Unknown format “%(format)s”.") % {"format": format}])
    if errors:
        raise TranscriptFileInvalid(errors)
    if not conversations:
        raise TranscriptFileInvalid([_("The file holds no conversation to judge.")])
    if len(conversations) > MAX_CONVERSATIONS:
        raise TranscriptFileInvalid(
            [
                _("The file holds %(count)d conversations; at most %(limit)d are imported at once.")
                % {"count": len(conversations), "limit": MAX_CONVERSATIONS}
            ]
        )
    return conversations
