"""A run made of imported transcripts: judged like any other, never simulated.

`transcripts_import` reads the file (`transcript_import`), resolves what each conversation is
judged on, and writes the run, its conversations and their turns in one transaction: a file
with one bad line imports nothing. Each conversation is stored as already simulated
(`simulated_at` set), so the engine goes straight to the anchors (when its scenario has any),
the judges and the evidence checks; its fidelity is never read (there is no simulated user).

What a conversation is judged on: the metric its line names (``metric_key``, optionally
``metric_version``; else that metric's current version), else each metric version the import
names. Its situation: the scenario its line names (``scenario_id``, or ``base_index`` with the
metric version, age context and language), else the metric's "situation unknown" scenario
(`ScenarioStatus.IMPORTED`: no persona, no anchors, no failure condition — the judge reads the
metric's rubric alone). The model that answered is a configuration of the provider that is
never called (`llm.services.configuration_imported_get_or_create`).
"""

import random
from collections import defaultdict
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from core.languages import DEFAULT_LANGUAGE, language_tag_normalize, language_tag_problem
from core.progress import Progress, progress_ignore
from core.queueing import task_send
from core.validators import LINE_BREAKS, control_character_find
from llm.models import ModelConfiguration
from llm.services import configuration_imported_get_or_create
from metrics_registry.models import Metric, MetricVersion, Release

from ..models import (
    AgeContext,
    Conversation,
    EvaluationRun,
    RunStatus,
    Scenario,
    ScenarioStatus,
    TranscriptFormat,
    TranscriptImport,
    Turn,
)
from .panel import panel_configure
from .run_plans import release_check_metric_versions
from .transcript_import import (
    MAX_CONVERSATIONS,
    ImportedConversation,
    TranscriptFileInvalid,
    transcripts_parse,
)

BULK_BATCH = 500


@dataclass(frozen=True)
class _Placed:
    conversation: ImportedConversation
    scenario: Scenario
    model: str


def _metric_version(
    parsed: ImportedConversation, metrics: dict[str, Metric]
) -> MetricVersion | None:
    metric = metrics.get(parsed.metric_key)
    if metric is None:
        raise ApplicationError(
            _("the metric “%(key)s” does not exist.") % {"key": parsed.metric_key}
        )
    if parsed.metric_version is None:
        return metric.current_version
    version = next((v for v in metric.versions.all() if v.number == parsed.metric_version), None)
    if version is None:
        raise ApplicationError(
            _("the metric “%(key)s” has no version %(number)d.")
            % {"key": parsed.metric_key, "number": parsed.metric_version}
        )
    return version


def _scenario_version(scenario_id: int) -> MetricVersion:
    scenario = Scenario.objects.select_related("metric_version").filter(pk=scenario_id).first()
    if scenario is None:
        raise ApplicationError(_("the scenario %(id)d does not exist.") % {"id": scenario_id})
    return scenario.metric_version


class _Situations:
    """The scenario of each conversation; the "situation unknown" ones made once each."""

    def __init__(self, *, age_context: str, language: str) -> None:
        self.age_context = age_context
        self.language = language
        self.unknown: dict[tuple[int, str, str], Scenario] = {}
        # Read once per file, not once per line: a run export names a few scenarios many times.
        self.by_id: dict[int, Scenario | None] = {}
        self.by_slot: dict[tuple[int, int, str], Scenario | None] = {}

    def unknown_for(self, version: MetricVersion, age: str, language: str) -> Scenario:
        key = (version.pk, age, language)
        if key not in self.unknown:
            self.unknown[key], _created = Scenario.objects.get_or_create(
                metric_version=version,
                status=ScenarioStatus.IMPORTED,
                age_context=age,
                language=language,
                defaults={
                    "base_index": 0,
                    "base_situation": "",
                    "situation": "Unknown: imported transcripts that name no scenario.",
                },
            )
        return self.unknown[key]

    def place(self, parsed: ImportedConversation, version: MetricVersion) -> Scenario:
        age = parsed.age_context or self.age_context
        language = self.language
        if parsed.language:
            if problem := language_tag_problem(parsed.language):
                raise ApplicationError(problem)
            language = language_tag_normalize(parsed.language)
        if parsed.scenario_id is not None:
            if parsed.scenario_id not in self.by_id:
                self.by_id[parsed.scenario_id] = Scenario.objects.filter(
                    pk=parsed.scenario_id
                ).first()
            scenario = self.by_id[parsed.scenario_id]
            if scenario is not None and scenario.metric_version_id == version.pk:
                return scenario
            if parsed.base_index is None:
                # Named by id alone (a line of chat JSONL): a wrong id is the file's mistake.
                # A run export's or Inspect sample's id may be another platform's: its metric,
                # situation number and age find the scenario here, if there is one.
                raise ApplicationError(
                    _("the scenario %(id)d does not exist for this metric.")
                    % {"id": parsed.scenario_id}
                )
        if parsed.base_index is not None:
            slot = (version.pk, parsed.base_index, age)
            if slot not in self.by_slot:
                self.by_slot[slot] = (
                    Scenario.objects.active()
                    .filter(metric_version=version, base_index=parsed.base_index, age_context=age)
                    .first()
                )
            if self.by_slot[slot] is not None:
                return self.by_slot[slot]
        return self.unknown_for(version, age, language)


def _place(
    conversations: list[ImportedConversation],
    *,
    metric_versions: list[MetricVersion],
    situations: _Situations,
    model_name: str,
) -> list[_Placed]:
    keys = {c.metric_key for c in conversations if c.metric_key}
    metrics = {
        m.key: m
        for m in Metric.objects.filter(key__in=keys)
        .select_related("current_version")
        .prefetch_related("versions")
    }
    placed: list[_Placed] = []
    errors: list[str] = []
    for parsed in conversations:
        try:
            model = parsed.model or model_name
            if not model:
                raise ApplicationError(
                    _("it names no model; give the model's name for the whole file.")
                )
            if parsed.metric_key:
                versions = [_metric_version(parsed, metrics)]
            elif parsed.scenario_id is not None:
                versions = [_scenario_version(parsed.scenario_id)]
            elif metric_versions:
                versions = list(metric_versions)
            else:
                raise ApplicationError(
                    _("it names no metric, and the import names none to judge it on.")
                )
            for version in versions:
                placed.append(_Placed(parsed, situations.place(parsed, version), model))
        except ApplicationError as error:
            errors.append(f"{parsed.where}: {error.message}")
    if errors:
        raise TranscriptFileInvalid(errors)
    if len(placed) > MAX_CONVERSATIONS:
        raise TranscriptFileInvalid(
            [
                _(
                    "Judged on every metric named, the file makes %(count)d conversations; at "
                    "most %(limit)d are imported at once."
                )
                % {"count": len(placed), "limit": MAX_CONVERSATIONS}
            ]
        )
    return placed


def _file_name_problem(file_name: str) -> str | None:
    """The file's name is shown on public pages beside the figures: one line, no control."""
    if control_character_find(file_name) or LINE_BREAKS.search(file_name):
        return _("The file's name holds a control character or a line break; rename the file.")
    if not file_name.strip():
        return _("The file has no name.")
    return None


def _check_settings(
    *, run_name: str, judge: ModelConfiguration, judgments: int, age_context: str, language: str
) -> None:
    if not run_name.strip():
        raise ApplicationError(_("Give the run a name."))
    if not judge.is_active or judge.is_imported:
        raise ApplicationError(_("The judge %(name)s is switched off.") % {"name": judge.name})
    if judgments < 1 or judgments % 2 == 0:
        raise ApplicationError(
            _("Use an odd number of judgments per conversation (1, 3, 5…) so a majority decides.")
        )
    if age_context not in AgeContext.values:
        raise ApplicationError(_("The age context is teen or adult."))
    if problem := language_tag_problem(language):
        raise ApplicationError(problem)


@transaction.atomic
def transcripts_import(
    *,
    data: bytes,
    file_name: str,
    format: str,
    run_name: str,
    judge: ModelConfiguration,
    metric_versions: list[MetricVersion] | None = None,
    further_judges: list[tuple[ModelConfiguration, int]] | None = None,
    judgments_per_conversation: int = 3,
    release: Release | None = None,
    model_name: str = "",
    age_context: str = AgeContext.ADULT,
    language: str = DEFAULT_LANGUAGE,
    imported_by: AbstractBaseUser | None = None,
    dispatch: bool = True,
    on_progress: Progress = progress_ignore,
) -> EvaluationRun:
    """A running run of the file's conversations, ready to judge; all or nothing.

    `TranscriptFileInvalid` names every bad line (nothing is written); `ApplicationError` a bad
    setting. `dispatch` false: the caller judges the run itself (`run_process_inline`).
    `age_context` and `language` apply to conversations whose line names none.
    """
    if problem := _file_name_problem(file_name):
        raise ApplicationError(problem)
    if format not in TranscriptFormat.values:
        raise ApplicationError(_("Unknown format “%(format)s”.") % {"format": format})
    _check_settings(
        run_name=run_name,
        judge=judge,
        judgments=judgments_per_conversation,
        age_context=age_context,
        language=language,
    )
    metric_versions = list(metric_versions or [])
    parsed = transcripts_parse(data=data, format=format)
    situations = _Situations(age_context=age_context, language=language_tag_normalize(language))
    placed = _place(
        parsed, metric_versions=metric_versions, situations=situations, model_name=model_name
    )
    versions = {p.scenario.metric_version_id: p.scenario.metric_version for p in placed}
    if release is not None:
        release_check_metric_versions(release=release, metric_versions=versions.values())
    targets = {
        name: configuration_imported_get_or_create(model_name=name)
        for name in sorted({p.model for p in placed})
    }
    now = timezone.now()
    run = EvaluationRun.objects.create(
        name=run_name.strip()[:200],
        release=release,
        # Nothing is simulated: the field is required, and the judge is the one model the
        # run calls (pages show "no simulator: imported transcripts" instead of its name).
        simulator=judge,
        judge=judge,
        turns=max(len(p.conversation.turns) for p in placed),
        judgments_per_conversation=judgments_per_conversation,
        typo_rate=0.0,
        seed=random.SystemRandom().randrange(2**31 - 1),
        created_by=imported_by,
        status=RunStatus.RUNNING,
        started_at=now,
        conversations_total=len(placed),
    )
    run.targets.set(targets.values())
    run.metric_versions.set(versions.values())
    if further_judges:
        panel_configure(run, list(further_judges))
    TranscriptImport.objects.create(
        run=run,
        file_name=file_name[:255],
        format=format,
        imported_by=imported_by,
        imported_at=now,
        conversation_count=len(placed),
        default_age_context=age_context,
    )
    _write_conversations(run, placed, targets=targets, now=now, on_progress=on_progress)
    if dispatch:
        transaction.on_commit(lambda: task_send("evaluations.tasks.run_dispatch", run.pk))
    return run


def _write_conversations(
    run: EvaluationRun,
    placed: list[_Placed],
    *,
    targets: dict[str, ModelConfiguration],
    now,
    on_progress: Progress,
) -> None:
    replicates: dict[tuple[int, int], int] = defaultdict(int)
    rows = []
    for item in placed:
        target = targets[item.model]
        slot = (item.scenario.pk, target.pk)
        rows.append(
            Conversation(
                run=run,
                scenario=item.scenario,
                target=target,
                # Several imported conversations of one situation and model: told apart as
                # replicates, as the run's unique key asks.
                replicate=replicates[slot],
                simulated_at=now,
                is_offline=run.judge.is_offline,
                source_line=item.conversation.line,
                source_id=item.conversation.source_id,
                source_metadata={
                    "where": item.conversation.where,
                    "system": item.conversation.system,
                    "metadata": item.conversation.metadata,
                },
            )
        )
        replicates[slot] += 1
    total = len(rows)
    for start in range(0, total, BULK_BATCH):
        chunk = rows[start : start + BULK_BATCH]
        created = Conversation.objects.bulk_create(chunk)
        turns = [
            Turn(
                conversation=conversation,
                index=index,
                user_text=turn.user,
                user_text_clean=turn.user_as_written or turn.user,
                assistant_text=turn.assistant,
            )
            for conversation, item in zip(created, placed[start : start + BULK_BATCH], strict=True)
            for index, turn in enumerate(item.conversation.turns, start=1)
        ]
        Turn.objects.bulk_create(turns, batch_size=BULK_BATCH)
        on_progress(min(start + BULK_BATCH, total), total, "import")
