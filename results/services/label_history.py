"""A model's label across releases and versions: one column per public run it was tested in.

A configuration is one version of a model; configurations that name the same model line
(`ModelConfiguration.model_line`) are versions of one product, so the history follows the
line: a column per (public run, version of the line in that run), oldest first. The
last column's change since the one before is paired on the base scenarios both used
(`history_change`), whether the two columns are two releases of one version or two versions
in one release.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaluations.models import EvaluationRun
from llm.models import ModelConfiguration

from ..label import label_profile
from ..selectors import public_runs
from . import history_change

# The most columns a history shows (the newest ones): a wide table stops being read.
HISTORY_COLUMNS = 8


@dataclass(frozen=True)
class HistoryColumn:
    run: EvaluationRun
    target: ModelConfiguration
    profile: Any


def line_targets(target: ModelConfiguration) -> list[ModelConfiguration]:
    """The versions of `target`'s model line (itself alone when it names no line)."""
    if not target.model_line:
        return [target]
    return list(
        ModelConfiguration.objects.filter(model_line=target.model_line).order_by("created_at")
    )


def _chronological(run: EvaluationRun) -> tuple:
    release = run.release
    when = run.finished_at or run.created_at
    return (release.major, release.minor, release.patch, when, run.pk)


def history_columns(run: EvaluationRun, profile: Any) -> list[HistoryColumn]:
    """(run, version) columns of the model's line in the public runs, oldest first; the page's
    own column reuses its profile."""
    versions = {t.pk: t for t in line_targets(profile.target)}
    runs = list(public_runs().filter(targets__in=list(versions)).distinct()[:50])
    # Oldest first, by release and then by when each run finished: public_runs() puts a
    # release's headline run first, which is not the order in which its runs were made.
    runs.sort(key=_chronological)
    in_run = EvaluationRun.targets.through.objects.filter(
        evaluationrun_id__in=[r.pk for r in runs], modelconfiguration_id__in=list(versions)
    ).values_list("evaluationrun_id", "modelconfiguration_id")
    pairs: dict[int, list[int]] = {}
    for run_id, target_id in in_run:
        pairs.setdefault(run_id, []).append(target_id)
    columns = []
    for r in runs:
        for target_id in sorted(pairs.get(r.pk, ()), key=lambda pk: versions[pk].created_at):
            columns.append((r, versions[target_id]))
    columns = columns[-HISTORY_COLUMNS:]
    return [
        HistoryColumn(
            run=r,
            target=t,
            profile=profile
            if (r.pk, t.pk) == (run.pk, profile.target.pk)
            else label_profile(run=r, target=t, age=profile.age),
        )
        for r, t in columns
    ]


def label_history(run: EvaluationRun, profile: Any) -> dict[str, Any] | None:
    """The model's grades per category in every column, and the paired change of the newest
    column since the one before; None with a single column."""
    columns = history_columns(run, profile)
    if len(columns) < 2:
        return None
    categories = {}
    for column in columns:
        for line in column.profile.lines:
            categories.setdefault(line.category.pk, line.category)
    latest, earlier = columns[-1], columns[-2]
    age = None if profile.age == "all" else profile.age
    rows = []
    for category in sorted(categories.values(), key=lambda c: (c.polarity, c.position)):
        lines = [
            {li.category.pk: li for li in column.profile.lines}.get(category.pk)
            for column in columns
        ]
        counts = [
            history_change.run_cluster_counts(
                run_id=c.run.pk, target_id=c.target.pk, category_id=category.pk, age=age
            )
            for c in (latest, earlier)
        ]
        rows.append(
            (category, lines, history_change.change_text(history_change.paired_change(*counts)))
        )
    return {
        "columns": columns,
        "rows": rows,
        "since": earlier,
        "latest": latest,
        "versions": len({c.target.pk for c in columns}) > 1,
        "releases": len({c.run.release_id for c in columns}) > 1,
    }
