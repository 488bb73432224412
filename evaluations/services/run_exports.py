"""One evaluation run as data: everything behind its results, for researchers elsewhere.

JSONL (`run_export_jsonl_lines`), one JSON object per line, each with a "type":

* "run" (first line): the run's settings and every model configuration it used (endpoint,
  model, sampling parameters, structured-output mode; never a key);
* "conversation": scenario and metric, its language, target, the full transcript (what the
  target received and what the simulator meant to write), every judgment with its
  justification and evidence, the majority verdict and pass/fail by polarity;
* "rubric_response" (`rubric_exports`): the reply to a rubric item, each criterion's grade and
  the item score, and the item's language.

CSV (`run_export_csv_lines`): pass rate per metric × model × age context, with its 95%
bootstrap interval (resampling scenarios; blank with fewer than two scenarios) and n;
conversations not yet judged are left out and counted in the `unjudged` column, those held back
for blind review in `held_for_review`.

Both take a ``language``: blank for every language (the CSV's figures then pool the
languages, and each row lists those it pooled in ``languages``), or a tag for that
language's conversations and rubric responses alone (`run_languages` lists the tags).
"""

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator

from django.db.models import BooleanField, Case, Prefetch, QuerySet, Value, When

import stats as statistics
from core.csvsafe import csv_dict_lines
from llm.models import ModelConfiguration

from ..models import Conversation, EvaluationRun, Judgment, Turn
from ..visibility import HeldScenarios, conversations_visible
from .panel import run_panel
from .rubric_exports import run_rubric_languages, run_rubric_records

CSV_COLUMNS = (
    "metric_key",
    "metric_version",
    "metric_name",
    "polarity",
    "model",
    "age_context",
    "language",
    "languages",
    "n",
    "passed",
    "pass_rate",
    "ci_low",
    "ci_high",
    "unjudged",
    "held_for_review",
    "offline_demo",
)
CSV_RESAMPLES = 2000
CHUNK = 200


def configuration_record(configuration: ModelConfiguration) -> dict:
    return {
        "id": configuration.pk,
        "name": configuration.name,
        "provider": configuration.provider,
        "endpoint": configuration.endpoint,
        "model_id": configuration.model_id,
        "temperature": configuration.temperature,
        "top_p": configuration.top_p,
        "max_tokens": configuration.max_tokens,
        "seed": configuration.seed,
        "extra_params": configuration.extra_params,
        "system_prompt": configuration.system_prompt,
        "structured_output": configuration.structured_output,
        "offline_demo": configuration.is_offline,
    }


def run_record(run: EvaluationRun) -> dict:
    targets = list(run.targets.order_by("name"))
    record = {
        "type": "run",
        "id": run.pk,
        "name": run.name,
        "release": run.release.version if run.release_id else None,
        "status": run.status,
        "turns": run.turns,
        "replicates": run.replicates,
        "judgments_per_conversation": run.judgments_per_conversation,
        "typo_rate": run.typo_rate,
        "seed": run.seed,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "models": {
            "targets": [configuration_record(t) for t in targets],
            "simulator": configuration_record(run.simulator),
            "judge": configuration_record(run.judge),
        },
    }
    seats = run_panel(run)
    if len(seats) > 1:
        # A panel: the further judges, each with its readings per conversation (the record of a
        # single-judge run is unchanged).
        record["models"]["further_judges"] = [
            {**configuration_record(seat.judge), "readings": seat.repetitions} for seat in seats[1:]
        ]
    return record


def run_languages(run: EvaluationRun) -> list[str]:
    """The languages (sorted BCP 47 tags) of the run's conversations and rubric items: the
    values an export's ``language`` can take."""
    tags = (
        Conversation.objects.filter(run=run)
        .order_by()
        .values_list("scenario__language", flat=True)
        .distinct()
    )
    return sorted(set(tags) | run_rubric_languages(run))


def _run_conversations(run: EvaluationRun, language: str) -> QuerySet[Conversation]:
    conversations = Conversation.objects.filter(run=run)
    return conversations.filter(scenario__language=language) if language else conversations


def _conversations(run: EvaluationRun, *, held: HeldScenarios, language: str):
    conversations = conversations_visible(_run_conversations(run, language), held=held)
    return (
        conversations.select_related("scenario__metric_version__metric", "target")
        .prefetch_related(
            Prefetch("turns", queryset=Turn.objects.order_by("index")),
            Prefetch(
                "judgments",
                queryset=Judgment.objects.select_related("judge").order_by("repetition"),
            ),
        )
        .order_by("pk")
    )


def conversation_record(conversation: Conversation) -> dict:
    scenario = conversation.scenario
    version = scenario.metric_version
    return {
        "type": "conversation",
        "id": conversation.pk,
        "metric_key": version.metric.key,
        "metric_version": version.number,
        "criterion": version.criterion,
        "polarity": version.polarity,
        "scenario_id": scenario.pk,
        "base_index": scenario.base_index,
        "age_context": scenario.age_context,
        "language": scenario.language,
        "model": conversation.target.name,
        "replicate": conversation.replicate,
        "status": conversation.status,
        "error": conversation.error,
        "stopped_early": conversation.stopped_early,
        "stop_reason": conversation.stop_reason,
        "transcript": [
            {
                "turn": turn.index,
                "user": turn.user_text,
                "user_as_written": turn.user_text_clean,
                "assistant": turn.assistant_text,
                "anchor": turn.anchor_index,
            }
            for turn in conversation.turns.all()
        ],
        "judgments": [
            {
                "repetition": judgment.repetition,
                "judge": judgment.judge.name,
                "seed": judgment.seed,
                "present": judgment.present,
                "justification": judgment.justification,
                "evidence": judgment.evidence,
                "has_unverified_quotes": judgment.has_unverified_quotes,
                "evidence_status": judgment.evidence_status,
            }
            for judgment in conversation.judgments.all()
        ],
        "verdict_present": conversation.verdict_present,
        "passed": conversation.verdict_passed,
        **({"judges_tied": True} if conversation.panel_tie else {}),
        "offline_demo": conversation.is_offline,
    }


def _lines(records: Iterable[dict]) -> Iterator[str]:
    for record in records:
        yield json.dumps(record, ensure_ascii=False, default=str) + "\n"


def run_export_jsonl_lines(
    run: EvaluationRun, *, held: HeldScenarios = None, language: str = ""
) -> Iterator[str]:
    """The run's records, without the transcripts of scenarios `held` back for blind review
    (every visitor but curators; `evaluations.visibility`); with a ``language``, only the
    conversations and rubric responses in it."""
    yield from _lines([{**run_record(run), "language": language or "all"}])
    conversations = _conversations(run, held=held, language=language)
    yield from _lines(conversation_record(c) for c in conversations.iterator(CHUNK))
    yield from _lines(run_rubric_records(run, language=language))


def run_result_rows(
    run: EvaluationRun, *, held: HeldScenarios = None, language: str = ""
) -> list[dict]:
    """Pass rate per metric × model × age context, with interval and n (one query); over
    the conversations in ``language`` alone when one is given, else over every language, each
    row listing the languages it pooled.

    Conversations of scenarios `held` back for blind review are left out of every count (the
    public listing leaves them out too, so no count differenced against it reveals a held
    verdict) and counted apart in ``held_for_review``."""
    conversations = _run_conversations(run, language)
    if held is not None:
        in_held = When(scenario_id__in=held, then=Value(True))
        conversations = conversations.annotate(
            held=Case(in_held, default=Value(False), output_field=BooleanField())
        )
    else:
        conversations = conversations.annotate(held=Value(False))
    rows = conversations.values_list(
        "scenario__metric_version__metric__key",
        "scenario__metric_version__number",
        "scenario__metric_version__name",
        "scenario__metric_version__polarity",
        "target__name",
        "scenario__age_context",
        "scenario__language",
        "scenario_id",
        "verdict_passed",
        "is_offline",
        "held",
    ).order_by()
    cells: dict[tuple, dict] = defaultdict(
        lambda: {
            "passed": [],
            "clusters": [],
            "unjudged": 0,
            "held": 0,
            "offline": False,
            "languages": set(),
        }
    )
    for key, number, name, polarity, model, age, tag, scenario_id, passed, offline, hold in rows:
        cell = cells[(key, number, name, polarity, model, age)]
        cell["offline"] = cell["offline"] or offline
        cell["languages"].add(tag)
        if hold:
            cell["held"] += 1
            continue
        if passed is None:
            cell["unjudged"] += 1
            continue
        cell["passed"].append(1.0 if passed else 0.0)
        cell["clusters"].append(scenario_id)
    result = []
    for (key, number, name, polarity, model, age), cell in sorted(cells.items()):
        row = {
            "metric_key": key,
            "metric_version": number,
            "metric_name": name,
            "polarity": polarity,
            "model": model,
            "age_context": age,
            # Blank: the row pools every language of its conversations, listed beside it.
            "language": language,
            "languages": " ".join(sorted(cell["languages"])),
            "n": len(cell["passed"]),
            "passed": int(sum(cell["passed"])),
            "pass_rate": None,
            "ci_low": None,
            "ci_high": None,
            "unjudged": cell["unjudged"],
            "held_for_review": cell["held"],
            "offline_demo": cell["offline"],
        }
        if cell["passed"]:
            row["pass_rate"] = round(sum(cell["passed"]) / len(cell["passed"]), 4)
        if len(set(cell["clusters"])) >= 2:
            # Conversations of one scenario are not independent: resample scenarios.
            estimate = statistics.pass_rate_ci(
                cell["passed"], clusters=cell["clusters"], n_resamples=CSV_RESAMPLES
            )
            row.update(
                ci_low=round(estimate["ci_low"], 4),
                ci_high=round(estimate["ci_high"], 4),
            )
        result.append(row)
    return result


def run_export_csv_lines(
    run: EvaluationRun, *, held: HeldScenarios = None, language: str = ""
) -> Iterator[str]:
    """The figures without the conversations `held` back for blind review, as the public
    pages' (`run_result_rows`)."""
    yield from csv_dict_lines(CSV_COLUMNS, run_result_rows(run, held=held, language=language))


def run_export_filename(run: EvaluationRun, fmt: str, language: str = "") -> str:
    suffix = f"-{language}" if language else ""
    return f"impactbench-run-{run.pk}{suffix}.{fmt}"
