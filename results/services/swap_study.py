"""The figures of a swap study (`evaluations.models.SwapStudy`), per polarity, never mixed.

The base run and the swap run are compared on the sampled scenarios both finished:

* each model's pass-rate shift (swap minus base) with a paired cluster-bootstrap interval;
* Kendall's tau-b between the two rankings of the models, with an interval;
* the share of metric verdicts that flip (pairs: the same scenario, model and replicate --
  the same conversation re-judged when the judge alone was swapped);
* in each arm, Spearman's rho over metrics between pass rates from a single judgment and from
  the majority of the judge's repetitions.

Intervals resample base scenarios (a scenario's teen and adult forms together), as every
published figure does. A model's grade **held** under the swap only when its letter grade on
the sampled scenarios (`results.label.grade_for`) is the same in both arms *and* the shift's
interval rules out a move of a full grade band (`GRADE_BAND_WIDTH`); an interval that merely
includes 0 is not enough (a shift of -25 pp [-62.5, 0] moves a grade by five bands). Every
other case says what moved (`swap_verdict_text`), in words a reader can check against the
figures beside it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
from django.utils.translation import gettext, gettext_lazy, gettext_noop

from evaluations.models import Conversation, ConversationStatus, Judgment, SwapStudy
from evaluations.services.panel import run_panel
from stats.estimates import Estimate
from stats.figures import DEFAULT_RESAMPLES
from stats.swap import pass_rate_shift, single_vs_majority, swap_rank_agreement, verdict_flip_share

from ..grades import GRADE_BANDS, grade_for
from ..models import RunAnalysis
from .figure_cells import CellStore, input_digest

# A grade band's width: the distance between neighbouring bounds of the grade scale (5 points
# from D- to A+; F, below 40 %, is wider but a move into or out of it crosses a bound anyway).
GRADE_BAND_WIDTH = (
    min(a[0] - b[0] for a, b in zip(GRADE_BANDS, GRADE_BANDS[1:], strict=False)) / 100
)
HELD_RULE = gettext_lazy(
    "A model's grade held when its letter grade on the sampled scenarios is the same with and "
    "without the swap and the interval of its pass-rate shift rules out a move of a full grade "
    "band (5 percentage points, the width of one band of the grade scale) either way. "
    "Otherwise the line says what moved: the grade, or only how far the interval lets it move."
)
# What a line says of its grade (the `verdict` field); `held` is True, False or None with it.
HELD, MOVED, UNCHANGED_WIDE, UNCHANGED_NO_INTERVAL, NO_RATE = (
    "held",
    "moved",
    "unchanged, interval admits a move",
    "unchanged, no interval",
    "no rate",
)
VERDICTS = (HELD, MOVED, UNCHANGED_WIDE, UNCHANGED_NO_INTERVAL, NO_RATE)
VERDICT_HELD = {HELD: True, MOVED: False}
# Bumped with the rule above: studies' stored cells drawn under another rule are drawn again.
VERDICT_RULE_VERSION = "grade unchanged and a full band ruled out"


def swap_verdict(grades: tuple[str, str], shift: Estimate) -> str:
    """Whether a grade held under the swap (the rule of ``HELD_RULE``), as a `verdict` code."""
    if "—" in grades:
        return NO_RATE
    if grades[0] != grades[1]:
        return MOVED
    if not shift.has_interval:
        return UNCHANGED_NO_INTERVAL
    if shift.low > -GRADE_BAND_WIDTH and shift.high < GRADE_BAND_WIDTH:
        return HELD
    return UNCHANGED_WIDE


def swap_verdict_text(line: dict[str, Any]) -> str:
    """A line's verdict in words, translated when read (pages, the command, the API)."""
    verdict = line.get("verdict")
    values = {
        "base": line.get("base_grade"),
        "swap": line.get("swap_grade"),
        "band": f"{GRADE_BAND_WIDTH * 100:.0f}",
    }
    if verdict == HELD:
        return (
            gettext(
                "held: grade %(base)s with and without the swap, and the shift's interval rules "
                "out a move of a full band (%(band)s points)"
            )
            % values
        )
    if verdict == MOVED:
        return gettext("grade moved from %(base)s to %(swap)s") % values
    if verdict == UNCHANGED_WIDE:
        return (
            gettext(
                "grade unchanged (%(base)s), but the shift's interval admits a move of a full band "
                "(%(band)s points)"
            )
            % values
        )
    if verdict == UNCHANGED_NO_INTERVAL:
        return (
            gettext(
                "grade unchanged (%(base)s); no interval (one base scenario), so how far it could "
                "move is not known"
            )
            % values
        )
    if verdict == NO_RATE:
        return gettext("no pass rate in one of the two arms")
    return gettext("not assessed under the current rule; shown after the next refresh")


def _rows(study: SwapStudy) -> list[dict[str, Any]]:
    return list(
        Conversation.objects.filter(
            run_id__in=(study.base_run_id, study.swap_run_id),
            scenario_id__in=study.scenario_ids,
            status=ConversationStatus.COMPLETED,
            verdict_passed__isnull=False,
        )
        .values(
            "pk",
            "run_id",
            "scenario_id",
            "target_id",
            "target__name",
            "replicate",
            "verdict_passed",
            "scenario__base_index",
            "scenario__metric_version_id",
            "scenario__metric_version__polarity",
        )
        # One order whatever plan the server chose: the figures' digest reads them in it.
        .order_by("pk")
    )


def _readings(study: SwapStudy, rows: list[dict[str, Any]]) -> dict[int, dict[int, bool]]:
    """{conversation: {repetition: present}} of each run's first judge (its repetitions)."""
    first = {run.pk: set(run_panel(run)[0].numbers) for run in (study.base_run, study.swap_run)}
    run_of = {r["pk"]: r["run_id"] for r in rows}
    out: dict[int, dict[int, bool]] = defaultdict(dict)
    for conversation, repetition, present in (
        Judgment.objects.filter(conversation_id__in=list(run_of))
        .values_list("conversation_id", "repetition", "present")
        .order_by("conversation_id", "repetition")
    ):
        if repetition in first[run_of[conversation]]:
            out[conversation][repetition] = present
    return out


def _cluster(row: dict[str, Any]) -> str:
    return f"{row['scenario__metric_version_id']}:{row['scenario__base_index']}"


def _model_line(
    target: int, name: str, base: list[dict], swap: list[dict], options: dict
) -> dict[str, Any]:
    clusters = {r["scenario_id"]: _cluster(r) for r in base + swap}
    shift = pass_rate_shift(
        [float(r["verdict_passed"]) for r in base],
        [r["scenario_id"] for r in base],
        [float(r["verdict_passed"]) for r in swap],
        [r["scenario_id"] for r in swap],
        clusters=clusters,
        **options,
    )
    shared = {r["scenario_id"] for r in base} & {r["scenario_id"] for r in swap}
    rates = []
    for arm in (base, swap):
        kept = [r["verdict_passed"] for r in arm if r["scenario_id"] in shared]
        rates.append(sum(kept) / len(kept) if kept else None)
    grades = [grade_for(rate) for rate in rates]
    verdict = swap_verdict((grades[0], grades[1]), shift)
    return {
        "target": target,
        "model": name,
        "shift": shift.as_dict(),
        "base_rate": rates[0],
        "swap_rate": rates[1],
        "base_grade": grades[0],
        "swap_grade": grades[1],
        "held": VERDICT_HELD.get(verdict),
        "verdict": verdict,
    }


def _rank_agreement(base: list[dict], swap: list[dict], models: list[int], options) -> Estimate:
    scenarios = sorted({r["scenario_id"] for r in base} & {r["scenario_id"] for r in swap})
    where = {s: i for i, s in enumerate(scenarios)}
    column = {m: j for j, m in enumerate(models)}
    arrays = np.zeros((4, len(scenarios), len(models)))
    cluster_of: dict[int, str] = {}
    for arm, rows in enumerate((base, swap)):
        for r in rows:
            if r["scenario_id"] in where and r["target_id"] in column:
                i, j = where[r["scenario_id"]], column[r["target_id"]]
                arrays[2 * arm, i, j] += r["verdict_passed"]
                arrays[2 * arm + 1, i, j] += 1
                cluster_of[r["scenario_id"]] = _cluster(r)
    return swap_rank_agreement(
        *arrays, clusters=[cluster_of[s] for s in scenarios] or None, **options
    )


def _flips(base: list[dict], swap: list[dict], options) -> Estimate:
    key = lambda r: (r["scenario_id"], r["target_id"], r["replicate"])  # noqa: E731
    swapped = {key(r): r for r in swap}
    pairs = [(r, swapped.get(key(r))) for r in base]
    # The base keys once: a set per swapped verdict made this quadratic (5 s at 3,000 pairs).
    in_base = {key(b) for b in base}
    pairs += [(None, r) for k, r in swapped.items() if k not in in_base]
    return verdict_flip_share(
        [np.nan if a is None else float(a["verdict_passed"]) for a, _ in pairs],
        [np.nan if b is None else float(b["verdict_passed"]) for _, b in pairs],
        [_cluster(a or b) for a, b in pairs],
        **options,
    )


def _single_vs_majority(rows: list[dict], readings, options) -> Estimate:
    width = max((len(readings.get(r["pk"], {})) for r in rows), default=0)
    if width < 3 or width % 2 == 0:
        return Estimate.insufficient(
            method="Spearman's rho",
            unit="coefficient",
            reason=gettext_noop("needs an odd number (3 or more) of judgments"),
        )
    matrix = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        for k, (_, present) in enumerate(sorted(readings.get(r["pk"], {}).items())):
            matrix[i, k] = float(present)
    return single_vs_majority(
        matrix,
        [r["scenario__metric_version_id"] for r in rows],
        [_cluster(r) for r in rows],
        **options,
    )


def swap_study_figures(
    study: SwapStudy,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    cells: CellStore | None = None,
) -> dict[str, Any]:
    """Every figure of the study, JSON-ready: study facts, then one block per polarity. With
    ``cells``, the polarities' figures are drawn only when the study's rows or readings
    changed since they were stored (`figure_cells`)."""
    options = {"n_resamples": n_resamples, "seed": seed}
    rows = _rows(study)
    readings = _readings(study, rows)
    polarities: dict[str, Any] = {}
    for polarity in sorted({r["scenario__metric_version__polarity"] for r in rows}):
        mine = [r for r in rows if r["scenario__metric_version__polarity"] == polarity]
        if cells is None:
            polarities[polarity] = _polarity(study, mine, readings, options)
            continue
        # One cell per polarity: its rows and their readings are all it reads.
        read = [(r["pk"], readings.get(r["pk"], {})) for r in mine]
        polarities[polarity] = cells.cached(
            f"swap:{study.pk}:{polarity}",
            input_digest(mine, read, options, VERDICT_RULE_VERSION),
            lambda mine=mine: _polarity(study, mine, readings, options),
        )
    return {
        "study": study.pk,
        "base_run": study.base_run_id,
        "swap_run": study.swap_run_id,
        "swapped": study.swapped,
        "swapped_label": study.get_swapped_display(),
        "base_judge": study.base_run.judge.name,
        "swap_judge": study.swap_run.judge.name,
        "base_simulator": study.base_run.simulator.name,
        "swap_simulator": study.swap_run.simulator.name,
        "rejudged": study.rejudged,
        # Either arm synthetic (the synthetic release's planted study): the figures are too.
        "synthetic": bool(study.base_run.synthetic or study.swap_run.synthetic),
        "sample_size": study.sample_size,
        "seed": study.seed,
        "held_rule": str(HELD_RULE),
        "polarities": polarities,
    }


def _polarity(
    study: SwapStudy, mine: list[dict[str, Any]], readings, options: dict[str, int]
) -> dict[str, Any]:
    """The figures of one polarity's rows."""
    base = [r for r in mine if r["run_id"] == study.base_run_id]
    swap = [r for r in mine if r["run_id"] == study.swap_run_id]
    names = {r["target_id"]: r["target__name"] for r in mine}
    models = sorted({r["target_id"] for r in base} & {r["target_id"] for r in swap}, key=names.get)
    return {
        "models": [
            _model_line(
                m,
                names[m],
                [r for r in base if r["target_id"] == m],
                [r for r in swap if r["target_id"] == m],
                options,
            )
            for m in models
        ],
        "rank_agreement": _rank_agreement(base, swap, models, options).as_dict(),
        "flip_share": _flips(base, swap, options).as_dict(),
        "single_vs_majority": {
            "base": _single_vs_majority(base, readings, options).as_dict(),
            "swap": _single_vs_majority(swap, readings, options).as_dict(),
        },
    }


def swap_studies_for(
    run_id: int, *, cells: CellStore | None = None, **options: int
) -> list[dict[str, Any]]:
    """The figures of every study based on the run whose re-run has completed, newest first
    (drawn again only where their inputs changed, with ``cells``)."""
    studies = SwapStudy.objects.filter(
        base_run_id=run_id, swap_run__status="completed"
    ).select_related(
        "base_run__judge", "base_run__simulator", "swap_run__judge", "swap_run__simulator"
    )
    return [swap_study_figures(study, cells=cells, **options) for study in studies]


def swap_lines_for_target(run_id: int, target_id: int) -> list[dict[str, Any]]:
    """What the model's label says of each swap study of the run: per polarity, whether its
    grade held and the shift behind it. One query (the studies' figures stored in the run's
    analysis), whatever the number of studies."""
    stored = (
        RunAnalysis.objects.filter(run_id=run_id).values_list("robustness__swap", flat=True).first()
    )
    lines = []
    for study in stored or []:
        polarities = [
            {"polarity": polarity, **line}
            for polarity, block in study["polarities"].items()
            for line in block["models"]
            if line.get("target") == target_id
        ]
        if polarities:
            lines.append(
                {**{k: v for k, v in study.items() if k != "polarities"}, "lines": polarities}
            )
    return lines
