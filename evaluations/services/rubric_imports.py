"""Importing rubric items (the MentalHealthBench form) from JSON Lines.

One JSON object per line:

    {"key": "mhb-0001", "title": "Exam stress", "acuity": "non_acute", "population": "teen",
     "language": "en", "source": "MentalHealthBench sample",
     "messages": [{"role": "user", "content": "…"}, {"role": "assistant", "content": "…"},
                  {"role": "user", "content": "…"}],
     "criteria": [{"text": "Asks what the user has tried", "points": 5,
                   "dimension": "context_seeking"}, …]}

Like the metric import: parse, validate with a reason per bad line (line numbers as an editor
shows them), then write everything or nothing unless bad lines are to be skipped. An item whose
key already exists is reported as a duplicate and left alone, so re-importing a file is harmless.
"""

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils.text import slugify

from core.exceptions import ApplicationError
from core.jsonsafe import json_loads_checked
from core.validators import text_length_problem

from ..models import Acuity, BehaviourDimension, Population, RubricCriterion, RubricItem
from ..rubric import MAX_POINTS, MIN_POINTS

MAX_IMPORT_LINES = 10_000
MESSAGE_ROLES = ("user", "assistant")


@dataclass(frozen=True)
class RubricImportProblem:
    line: int
    reason: str


@dataclass(frozen=True)
class RubricCriterionCandidate:
    text: str
    points: int
    dimension: str


@dataclass(frozen=True)
class RubricItemCandidate:
    line: int
    key: str
    title: str
    messages: list[dict]
    acuity: str
    population: str
    language: str
    source: str
    criteria: tuple[RubricCriterionCandidate, ...]


@dataclass
class RubricImportReport:
    dry_run: bool
    skip_bad_lines: bool
    total_lines: int = 0
    candidates: list[RubricItemCandidate] = field(default_factory=list)
    errors: list[RubricImportProblem] = field(default_factory=list)
    duplicates: list[RubricImportProblem] = field(default_factory=list)
    created_keys: list[str] = field(default_factory=list)
    committed: bool = False

    @property
    def blocked(self) -> bool:
        return bool(self.errors) and not self.skip_bad_lines

    @property
    def summary(self) -> str:
        counts = (
            f"{self.total_lines} lines: {len(self.candidates)} new, "
            f"{len(self.duplicates)} duplicates, {len(self.errors)} bad"
        )
        if self.committed:
            skipped = f", {len(self.errors)} bad lines skipped" if self.errors else ""
            return f"Imported {len(self.created_keys)} rubric items{skipped} ({counts})."
        if self.blocked:
            return (
                f"Nothing imported: fix the {len(self.errors)} bad lines or choose to skip them "
                f"({counts})."
            )
        if self.dry_run:
            return f"Dry run: {len(self.candidates)} rubric items would be imported ({counts})."
        return f"Nothing to import ({counts})."


def _choice_lookup(choices: type) -> dict[str, str]:
    """Accept the stored value, the label, and spellings with hyphens or spaces."""
    lookup: dict[str, str] = {}
    for value, label in choices.choices:
        for alias in (value, str(label), value.replace("_", "-"), value.replace("_", " ")):
            lookup[alias.casefold()] = value
    return lookup


_ACUITY = _choice_lookup(Acuity)
_POPULATION = _choice_lookup(Population)
_DIMENSION = _choice_lookup(BehaviourDimension)


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _messages_validate(raw: Any, reasons: list[str]) -> list[dict]:
    if not isinstance(raw, list) or not raw:
        reasons.append("messages must be a non-empty list of {role, content}")
        return []
    messages = []
    for position, message in enumerate(raw, start=1):
        if not isinstance(message, dict):
            reasons.append(f"message {position} is not an object")
            continue
        role = _text(message.get("role")).casefold()
        content = _text(message.get("content"))
        if role not in MESSAGE_ROLES:
            reasons.append(f'message {position} has role "{role}": use user or assistant')
        if not content:
            reasons.append(f"message {position} has no content")
        if problem := text_length_problem(content, what=f"message {position}"):
            reasons.append(problem)
        messages.append({"role": role, "content": content})
    if messages and messages[-1]["role"] != "user":
        reasons.append("the last message must be the user's (the reply to it is graded)")
    return messages


def _criteria_validate(raw: Any, reasons: list[str]) -> list[RubricCriterionCandidate]:
    if not isinstance(raw, list) or not raw:
        reasons.append("criteria must be a non-empty list")
        return []
    criteria = []
    for position, criterion in enumerate(raw, start=1):
        if not isinstance(criterion, dict):
            reasons.append(f"criterion {position} is not an object")
            continue
        text = _text(criterion.get("text"))
        if not text:
            reasons.append(f"criterion {position} has no text")
        if problem := text_length_problem(text, what=f"criterion {position}"):
            reasons.append(problem)
        points = criterion.get("points")
        if isinstance(points, bool) or not isinstance(points, int):
            reasons.append(f"criterion {position} points {points!r} is not an integer")
            points = None
        elif points == 0 or not MIN_POINTS <= points <= MAX_POINTS:
            reasons.append(f"criterion {position} points {points} must be −10..+10 and not 0")
            points = None
        raw_dimension = _text(criterion.get("dimension"))
        dimension = _DIMENSION.get(raw_dimension.casefold())
        if dimension is None:
            reasons.append(
                f'criterion {position} has unknown dimension "{raw_dimension}": use one of '
                + ", ".join(BehaviourDimension.values)
            )
        if text and points is not None and dimension:
            criteria.append(RubricCriterionCandidate(text, points, dimension))
    if criteria and not any(c.points > 0 for c in criteria):
        reasons.append("no criterion has positive points, so the item cannot be scored")
    return criteria


def _line_validate(line: int, data: Any) -> RubricItemCandidate | str:
    if not isinstance(data, dict):
        return "the line is not a JSON object"
    reasons: list[str] = []
    key = slugify(_text(data.get("key")))
    if not key:
        reasons.append("missing key (a stable identifier such as mhb-0001)")
    messages = _messages_validate(data.get("messages"), reasons)
    criteria = _criteria_validate(data.get("criteria"), reasons)
    acuity = _ACUITY.get(_text(data.get("acuity")).casefold())
    if acuity is None:
        reasons.append(
            f'unknown acuity "{_text(data.get("acuity"))}": use non_acute, high_acuity or emergency'
        )
    population = _POPULATION.get(_text(data.get("population")).casefold())
    if population is None:
        reasons.append(
            f'unknown population "{_text(data.get("population"))}": use adult, teen, caregiver '
            "or clinician"
        )
    language = _text(data.get("language")) or "en"
    if len(language) > 16:
        reasons.append(f'language "{language[:20]}…" is not a language tag such as en or pt-BR')
    if reasons:
        return "; ".join(reasons)
    return RubricItemCandidate(
        line=line,
        key=key,
        title=_text(data.get("title"))[:200],
        messages=messages,
        acuity=acuity,
        population=population,
        language=language,
        source=_text(data.get("source"))[:200],
        criteria=tuple(criteria),
    )


def rubric_jsonl_parse(data: bytes | str) -> list[tuple[int, Any]]:
    """(line number, decoded JSON or the JSON error) for every non-blank line."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise ApplicationError(
                f"The file is not UTF-8 text (byte {error.start}); save it as UTF-8 JSON Lines."
            ) from error
    rows: list[tuple[int, Any]] = []
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            rows.append((number, json_loads_checked(raw)))
        except ApplicationError as error:
            rows.append((number, error))
    if not rows:
        raise ApplicationError("The file has no rubric items (one JSON object per line).")
    if len(rows) > MAX_IMPORT_LINES:
        raise ApplicationError(
            f"The file has {len(rows)} lines; split it into files of at most {MAX_IMPORT_LINES}."
        )
    return rows


@transaction.atomic
def rubric_items_import(
    *, data: bytes | str, dry_run: bool = True, skip_bad_lines: bool = False
) -> RubricImportReport:
    """Validate a JSONL file of rubric items and, unless dry or blocked, create them."""
    rows = rubric_jsonl_parse(data)
    report = RubricImportReport(
        dry_run=dry_run, skip_bad_lines=skip_bad_lines, total_lines=len(rows)
    )
    existing = set(RubricItem.objects.values_list("key", flat=True))
    seen: dict[str, int] = {}
    for number, decoded in rows:
        if isinstance(decoded, ApplicationError):
            report.errors.append(RubricImportProblem(number, decoded.message))
            continue
        result = _line_validate(number, decoded)
        if isinstance(result, str):
            report.errors.append(RubricImportProblem(number, result))
        elif result.key in seen:
            report.duplicates.append(
                RubricImportProblem(number, f"same key {result.key} as line {seen[result.key]}")
            )
        elif result.key in existing:
            report.duplicates.append(
                RubricImportProblem(number, f"rubric item {result.key} already exists")
            )
        else:
            seen[result.key] = number
            report.candidates.append(result)

    if dry_run or report.blocked or not report.candidates:
        return report
    for candidate in report.candidates:
        item = RubricItem.objects.create(
            key=candidate.key,
            title=candidate.title,
            messages=candidate.messages,
            acuity=candidate.acuity,
            population=candidate.population,
            language=candidate.language,
            source=candidate.source,
        )
        RubricCriterion.objects.bulk_create(
            RubricCriterion(
                item=item,
                position=position,
                text=criterion.text,
                points=criterion.points,
                dimension=criterion.dimension,
            )
            for position, criterion in enumerate(candidate.criteria)
        )
        report.created_keys.append(item.key)
    report.committed = True
    return report
