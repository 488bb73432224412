"""A run's panel of judges, published: inter-judge agreement and each judge's own pass rates.

Read from the stored judgments (each carries its judge; `evaluations.services.panel` says
which repetitions are whose) and computed by `stats.panel`, the same rule that decided the
verdicts: each judge's verdict is the majority of its readings, the panel's the majority of
the judges'. Readings are pass/fail (present for a positive metric, absent for a negative
one), so a judge's figures read as pass rates. Part of the run analysis (`refresh`), so the
methodology page and the API read a stored snapshot.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.utils.translation import gettext_noop

from evaluations.models import ConversationStatus, EvaluationRun, Judgment
from evaluations.services.panel import run_panel
from metrics_registry.models import Polarity
from results.models import RunAnalysis
from stats.estimates import Exclusion
from stats.figures import proportion_estimate
from stats.panel import judge_pass_rates, panel_agreement, panel_verdicts

# A metric has three base scenarios: too few clusters for a bootstrap interval to cover (the
# pass-rate simulation found 71-87 %), so per metric alpha is published with n, no interval.
PER_METRIC_NO_INTERVAL = (
    "no interval: a metric's three base scenarios are too few for a bootstrap to cover"
)
METHOD_NOTE = (
    "percentile bootstrap drawing whole base scenarios (a scenario's teen and adult variants "
    "and replicates are not independent)"
)


def panel_readings(run: EvaluationRun) -> dict[str, Any]:
    """The completed conversations' readings as ``readings[conversation, judge, repetition]``
    (1 = the judge passed the reply, ``nan`` = no reading), with each conversation's target,
    metric version and base-scenario cluster code."""
    seats = run_panel(run)
    depth = max(seat.repetitions for seat in seats)
    where = {}
    for seat in seats:
        for k, number in enumerate(seat.numbers):
            where[number] = (seat.index, k)
    rows = (
        Judgment.objects.filter(
            conversation__run=run, conversation__status=ConversationStatus.COMPLETED
        )
        .values_list(
            "conversation_id",
            "repetition",
            "present",
            "conversation__target_id",
            "conversation__scenario__metric_version_id",
            "conversation__scenario__metric_version__polarity",
            "conversation__scenario__base_index",
        )
        .order_by("conversation_id", "repetition")
    )
    index: dict[int, int] = {}
    meta: list[tuple[int, int, int]] = []
    cells: list[tuple[int, int, int, float]] = []
    for conversation, repetition, present, target, version, polarity, base in rows:
        if repetition not in where:
            continue
        if conversation not in index:
            index[conversation] = len(meta)
            meta.append((target, version, base))
        judge, k = where[repetition]
        passed = present if polarity == Polarity.POSITIVE else not present
        cells.append((index[conversation], judge, k, float(passed)))
    readings = np.full((len(meta), len(seats), depth), np.nan)
    if cells:
        c, j, k, value = (np.array(column) for column in zip(*cells, strict=True))
        readings[c.astype(int), j.astype(int), k.astype(int)] = value
    info = np.array(meta, dtype=np.int64).reshape(-1, 3)
    clusters = np.unique(info[:, 1:], axis=0, return_inverse=True)[1].ravel()
    return {
        "readings": readings,
        "target": info[:, 0],
        "version": info[:, 1],
        "cluster": clusters,
        "seats": seats,
    }


def _agreement(readings, clusters, *, interval: bool = True, **options) -> dict[str, Any]:
    if not interval:
        options["n_resamples"] = 2  # the point value alone is kept
    figures = panel_agreement(readings, clusters, **options)
    out = {level: estimate.as_dict() for level, estimate in figures.items()}
    if not interval:
        for figure in out.values():
            figure.update(low=None, high=None, method=PER_METRIC_NO_INTERVAL)
    return out


def panel_figures(
    run: EvaluationRun,
    *,
    n_resamples: int = 2_000,
    seed: int = 0,
    metric_keys: dict[int, str] | None = None,
    target_names: dict[int, str] | None = None,
) -> dict[str, Any]:
    """Agreement among the judges (Krippendorff's alpha, ordinal and binary, overall and per
    metric) and each judge's pass rate per target beside its paired gap to the panel.

    ``{"available": False}`` for a run with one judge. Panel ties are counted (``ties``):
    they are left out of the pass rates as an exclusion of their own, never broken.
    """
    seats = run_panel(run)
    if len(seats) < 2:
        return {"available": False, "reason": gettext_noop("This run has one judge.")}
    data = panel_readings(run)
    readings, clusters = data["readings"], data["cluster"]
    judges = [
        {
            "position": seat.index,
            "name": seat.judge.name,
            "repetitions": seat.repetitions,
            "is_offline": seat.judge.is_offline,
        }
        for seat in seats
    ]
    if readings.shape[0] == 0:
        return {
            "available": False,
            "reason": gettext_noop("No conversation is judged yet."),
            "judges": judges,
        }
    options = {"n_resamples": n_resamples, "seed": seed}
    verdicts = panel_verdicts(readings)
    names = dict(metric_keys or {})
    per_metric = []
    for version in np.unique(data["version"]).tolist():
        mine = data["version"] == version
        per_metric.append(
            {
                "metric_version": int(version),
                "metric": names.get(version, str(version)),
                "n_conversations": int(mine.sum()),
                **_agreement(readings[mine], clusters[mine], interval=False, seed=seed),
            }
        )
    # Least agreement first, undefined figures last: that is where a rubric needs a look.
    per_metric.sort(key=lambda m: (m["binary"]["value"] is None, m["binary"]["value"] or 0))
    targets = dict(target_names or {})
    rates = judge_pass_rates(
        readings,
        data["target"],
        clusters,
        judges=[seat.index for seat in seats],
        **options,
    )
    panel_rates = []
    for target in sorted(set(data["target"].tolist())):
        mine = data["target"] == target
        decided = mine & ~verdicts.tie & np.isfinite(verdicts.verdict)
        panel_rates.append(
            {
                "target": int(target),
                "target_name": targets.get(int(target), str(target)),
                "pass_rate": proportion_estimate(
                    verdicts.verdict[decided],
                    clusters[decided],
                    over="base scenarios",
                    excluded=(
                        Exclusion(
                            gettext_noop("the judges tied"), int((mine & verdicts.tie).sum())
                        ),
                    ),
                    **options,
                ).as_dict(),
            }
        )
    return {
        "available": True,
        "judges": judges,
        "n_conversations": int(readings.shape[0]),
        "n_clusters": int(np.unique(clusters).size),
        "ties": int(verdicts.tie.sum()),
        "method": METHOD_NOTE,
        "overall": _agreement(readings, clusters, **options),
        "per_metric": per_metric,
        "panel_rates": panel_rates,
        "judge_rates": [
            {
                "judge": judges[rate.judge]["name"],
                "position": rate.judge,
                "target": int(rate.target),
                "target_name": targets.get(int(rate.target), str(rate.target)),
                "pass_rate": rate.pass_rate.as_dict(),
                "minus_panel": rate.minus_panel.as_dict(),
            }
            for rate in rates
        ],
    }


def panel_published(run: EvaluationRun) -> dict[str, Any]:
    """The panel figures of the run's stored analysis (what public pages and the API show)."""
    analysis = RunAnalysis.objects.filter(run=run).only("reliability").first()
    reliability = (analysis.reliability or {}) if analysis is not None else {}
    # Each judge's share of readings whose evidence supports its verdict: shown for a run of
    # one judge too, so it stands beside the panel's figures rather than inside them.
    support = {"evidence_support": (reliability.get("evidence") or {}).get("support", [])}
    stored = reliability.get("panel")
    if stored is not None:
        return {**stored, **support}
    if len(run_panel(run)) < 2:
        return {"available": False, "reason": gettext_noop("This run has one judge."), **support}
    return {
        "available": False,
        "reason": gettext_noop("The panel's figures are not computed yet."),
        **support,
    }
