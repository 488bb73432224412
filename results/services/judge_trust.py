"""Judge trust per metric, per target model and per label category of a run.

Blind expert verdicts (external-panel ratings: the expert never saw the judge's verdict) on
the run's conversations are compared with the judge's verdict by ``stats.judge_trust``: the
agreement, Cohen's kappa (each with interval over base scenarios and n) and a plain-language
badge. Ratings made with the judge's verdict on screen measure endorsement, not agreement,
and are never used here.

The figures are computed by the results refresh and stored (`stored_figures`); a blind
verdict added or undone discards them as it commits, so until the refresh it books has run a
page computes them live: a new rating shows at once and nothing is stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.text import format_lazy
from django.utils.translation import gettext, gettext_lazy

from evaluations.models import EvaluationRun
from evaluations.services.panel import run_panel
from llm.providers.families import judge_family_effect_estimable, self_preference
from stats.estimates import Estimate
from stats.judge_trust import (
    CONTESTED,
    MIN_EXPERT_VERDICTS,
    NOT_CHECKED,
    VALIDATED,
    VALIDATED_AGREEMENT_LOW,
    VALIDATED_KAPPA,
    JudgeTrust,
)

from .figure_cells import CellStore
from .judge_bias import ModelGap, read_gaps, target_gaps
from .judge_trust_cells import (
    GROUPINGS,
    BlindRows,
    blind_rows,
    cell_label,
    cells_compute,
    cells_of,
    is_low,
    release_icc,
)
from .stored_figures import RUN_PART, FigureKind, run_figure_parts, run_figures

# Resamples per figure: a release has a few hundred cells, each with its own bootstrap.
TRUST_RESAMPLES = 2_000

# How experts fill a "not yet checked" figure: shown next to it, to visitors too, so it says
# who does what, not where in the workspace they do it.
# Lazy: the page reads it in the reader's language (the API in the request's).
HOW_TO_FILL = format_lazy(
    gettext_lazy(
        "Experts fill this in by rating conversations blind (without seeing the judge's verdict) "
        "in an external-panel rating queue, such as a run's calibration sample, which the "
        "project's researchers draw before the run is made official; a badge appears after "
        "{min_verdicts} verdicts."
    ),
    min_verdicts=MIN_EXPERT_VERDICTS,
)
THRESHOLDS = {
    "min_verdicts": MIN_EXPERT_VERDICTS,
    "agreement_low": VALIDATED_AGREEMENT_LOW,
    "kappa": VALIDATED_KAPPA,
}
BADGES = (VALIDATED, CONTESTED, NOT_CHECKED)


@dataclass(frozen=True)
class Trust:
    """One cell's judge trust as pages and the API show it."""

    agreement: Any
    kappa: Any
    badge: str
    reason: str
    synthetic: bool

    @property
    def low(self) -> bool:
        """Experts checked and the judge did not clear the bar: marked, never hidden."""
        return self.badge == CONTESTED

    @property
    def checked(self) -> bool:
        return self.badge != NOT_CHECKED

    def as_api(self) -> dict[str, Any]:
        return {
            "badge": self.badge,
            "reason": self.reason,
            "agreement": self.agreement,
            "kappa": self.kappa,
            "low_agreement": self.low,
            "synthetic": self.synthetic,
            "how_to_fill": "" if self.checked else HOW_TO_FILL,
        }


def run_judge_trust(run: EvaluationRun) -> dict[str, dict[Any, Trust]]:
    """Judge trust of ``run`` computed from its verdicts, keyed by ``metric`` key, ``target``
    id, ``metric_target`` (key, target id), ``category`` slug and ``category_target`` (slug,
    target id), plus ``all``. Cells with no blind verdict are absent (pages show them as not
    yet checked). Pages read the parts the refresh stored (`JUDGE_TRUST`) instead."""
    trust: dict[str, dict[Any, Trust]] = {grouping: {} for grouping in GROUPINGS}
    for key, figures in sorted(_all_cells(run).items()):
        grouping, label = cell_label(key)
        trust[grouping][label] = _trust(figures)
    return trust


def _all_cells(run: EvaluationRun, rows: BlindRows | None = None) -> dict[str, dict[str, Any]]:
    rows = blind_rows(run) if rows is None else rows
    members, _ = cells_of(rows, resamples=TRUST_RESAMPLES, synthetic=False, digested=False)
    return cells_compute(rows, members, set(members), icc=release_icc(rows), **_drawing(run))


def _drawing(run: EvaluationRun) -> dict[str, Any]:
    synthetic = bool(getattr(run, "synthetic", False))

    def cell(t: JudgeTrust) -> dict[str, Any]:
        return _cell(Trust(t.agreement, t.kappa, t.badge, t.reason, synthetic))

    return {"resamples": TRUST_RESAMPLES, "cell": cell}


BLIND_VERDICTS = "blind verdicts"


def _inputs(run: EvaluationRun) -> tuple[str, None]:
    # No stamp to take per request: a blind verdict on the run discards its stored figures in
    # the rating's transaction (`freshness.on_ratings_changed`), and the refresh it books
    # draws them again.
    return BLIND_VERDICTS, None


def _documents(run: EvaluationRun, _: None) -> dict[str, Any]:
    """The run-wide part, one part per metric (what its page shows) and one per target (its
    label's categories and its contested metrics), every cell computed now."""
    rows = blind_rows(run)
    cells = _all_cells(run, rows)
    documents = _assemble(_parts(cells), cells, {k: is_low(v) for k, v in cells.items()})
    return _with_gaps(documents, run, rows, release_icc(rows))


def _with_gaps(
    documents: dict[str, Any], run: EvaluationRun, rows: BlindRows, icc: float
) -> dict[str, Any]:
    """The run-wide part holds each model's comparison with the others (`judge_bias`): it
    reads every blind verdict, and that part is rebuilt whenever any of them changes."""
    if RUN_PART in documents:
        synthetic = bool(getattr(run, "synthetic", False))
        documents[RUN_PART]["gaps"] = target_gaps(rows, icc=icc, synthetic=synthetic)
    return documents


def _refreshed(
    run: EvaluationRun, _: None, store: CellStore, previous: set[str]
) -> tuple[dict[str, Any], set[str]]:
    """The parts holding a cell whose blind verdicts changed (every part when none is
    stored), and the stored parts kept as they are; only the stale cells are drawn."""
    rows = blind_rows(run)
    synthetic = bool(getattr(run, "synthetic", False))
    icc = release_icc(rows)
    members, digests = cells_of(rows, resamples=TRUST_RESAMPLES, synthetic=synthetic, icc=icc)
    drawing = {**_drawing(run), "icc": icc}
    changed = store.stale(digests) | store.dropped(digests)
    store.put(cells_compute(rows, members, changed & set(digests), **drawing))
    parts = _parts(digests)
    rebuilt = {part for key in changed for part in _holding(key)} | (parts - previous)
    rebuilt &= parts
    whole = [k for k in digests if any(p in rebuilt for p in _whole_in(k))]
    flagged = [k for k in digests if any(p in rebuilt for p in _flag_in(k))]
    cells = store.stored(whole)
    low = {k: v == CONTESTED for k, v in store.stored_field(flagged, "badge").items()}
    documents = _with_gaps(_assemble(rebuilt, cells, low), run, rows, icc)
    return documents, parts - rebuilt


def _parts(cells) -> set[str]:
    """The parts the cells make: the run-wide one, one per metric and per target."""
    parts = {RUN_PART}
    for key in cells:
        grouping, label = cell_label(key)
        if grouping in ("metric", "target"):
            parts.add(f"{grouping}:{label}")
    return parts


def _whole_in(key: str) -> list[str]:
    """The parts showing this cell's figures."""
    grouping, label = cell_label(key)
    if grouping in ("all", "category", "target"):
        return [RUN_PART]
    if grouping == "metric":
        return [f"metric:{label}"]
    if grouping == "metric_target":
        return [f"metric:{label[0]}"]
    return [f"target:{label[1]}"]  # category_target


def _flag_in(key: str) -> list[str]:
    """The parts listing this cell among the contested (only its badge)."""
    grouping, label = cell_label(key)
    if grouping == "metric":
        return [RUN_PART]
    if grouping == "metric_target":
        return [f"target:{label[1]}"]
    return []


def _holding(key: str) -> list[str]:
    return [*_whole_in(key), *_flag_in(key)]


def _assemble(
    parts: set[str], cells: dict[str, dict[str, Any]], low: dict[str, bool]
) -> dict[str, Any]:
    """The documents of ``parts`` from the cells they show (``cells``) and list (``low``)."""
    by: dict[str, dict[Any, dict[str, Any]]] = {grouping: {} for grouping in GROUPINGS}
    for key in sorted(cells):
        grouping, label = cell_label(key)
        by[grouping][label] = cells[key]
    flagged: dict[str, list] = {"metric": [], "metric_target": []}
    for key in sorted(k for k, v in low.items() if v):
        grouping, label = cell_label(key)
        if grouping in flagged:
            flagged[grouping].append(label)
    of_metric: dict[str, list] = {}
    for (key, target_id), cell in by["metric_target"].items():
        of_metric.setdefault(key, []).append([target_id, cell])
    of_target: dict[int, list] = {}
    for (slug, target_id), cell in by["category_target"].items():
        of_target.setdefault(target_id, []).append([slug, cell])
    low_of_target: dict[int, list[str]] = {}
    for key, target_id in flagged["metric_target"]:
        low_of_target.setdefault(target_id, []).append(key)
    documents: dict[str, Any] = {}
    if RUN_PART in parts:
        documents[RUN_PART] = {
            "all": _listed(by["all"]),
            "category": _listed(by["category"]),
            "target": _listed(by["target"]),
            "low_metrics": sorted(flagged["metric"]),
        }
    for part in sorted(parts - {RUN_PART}):
        section, _, name = part.partition(":")
        if section == "metric":
            documents[part] = {"metric": by["metric"][name], "targets": of_metric.get(name, [])}
        else:
            target_id = int(name)
            documents[part] = {
                "category": of_target.get(target_id, []),
                "low_metrics": sorted(low_of_target.get(target_id, [])),
            }
    return documents


def _listed(cells: dict[Any, dict[str, Any]]) -> list[list]:
    # JSON has no integer keys: a list of [key, trust].
    return [[key, cell] for key, cell in cells.items()]


def _cell(t: Trust) -> dict[str, Any]:
    return {
        "agreement": t.agreement.as_dict(),
        "kappa": t.kappa.as_dict(),
        "badge": t.badge,
        "reason": t.reason,
        "synthetic": t.synthetic,
    }


def _trust(data: dict[str, Any]) -> Trust:
    return Trust(
        Estimate.from_dict(data["agreement"]),
        Estimate.from_dict(data["kappa"]),
        data["badge"],
        data["reason"],
        data["synthetic"],
    )


def _read(cells: list[list]) -> dict[Any, Trust]:
    return {key: _trust(data) for key, data in cells}


JUDGE_TRUST = FigureKind("judge_trust", _inputs, _documents, _refreshed)


def metric_judge_trust(run: EvaluationRun, metric_key: str) -> tuple[Trust | None, dict]:
    """A metric's judge trust overall and by target id (absent: no blind verdict yet)."""
    part = run_figures(JUDGE_TRUST, run, f"metric:{metric_key}")
    if part is None:
        return None, {}
    return _trust(part["metric"]), _read(part["targets"])


def run_judges(run: EvaluationRun) -> list:
    """The run's judge configurations: its first judge, then a panel's further judges."""
    return [seat.judge for seat in run_panel(run)]


def target_self_preference(run: EvaluationRun, target) -> dict | None:
    """``{"judge", "family"}`` when one of the run's judges is of the target's family."""
    return self_preference(run_judges(run), target)


def judge_family_effect(run: EvaluationRun) -> dict[str, Any]:
    """Whether the judge-family effect can be estimated for ``run``, and why not if not."""
    judges = run_judges(run)
    if judge_family_effect_estimable(judges):
        return {"estimable": True, "reason": ""}
    return {
        "estimable": False,
        "reason": gettext(
            "Not estimable with one judge: the effect of grading a model of the judge's "
            "own family needs at least two judges of different families in the same run."
        ),
    }


def metric_trust_rows(run: EvaluationRun, metric_key: str, targets) -> dict[str, Any]:
    """What a metric page shows: the metric's judge trust overall and per target, each
    target's self-preference note, and the judge-family effect's status."""
    overall, by_target = metric_judge_trust(run, metric_key)
    return {
        "overall": overall,
        "rows": [
            {
                "target": target,
                "trust": by_target.get(target.pk),
                "self_preference": target_self_preference(run, target),
            }
            for target in targets
        ],
        "how_to_fill": HOW_TO_FILL,
        "synthetic": bool(getattr(run, "synthetic", False)),
    }


def category_trust(run: EvaluationRun, slug: str, target=None) -> Trust | None:
    """A label category's judge trust, for one target when given (None: no blind verdict)."""
    return target_category_trust(run, target).get(slug)


def target_category_trust(run: EvaluationRun, target=None) -> dict[str, Trust]:
    """Every label category's judge trust by slug, for one target when given (absent: no blind
    verdict): one read for a whole label."""
    part = run_figures(JUDGE_TRUST, run, RUN_PART if target is None else f"target:{target.pk}")
    return _read(part["category"]) if part is not None else {}


def trust_api(trust: Trust | None) -> dict[str, Any]:
    """The API's judge-trust object; a cell with no blind verdict is not yet checked."""
    if trust is not None:
        return trust.as_api()
    return {
        "badge": NOT_CHECKED,
        "reason": "0 blind expert verdicts so far",
        "agreement": None,
        "kappa": None,
        "low_agreement": False,
        "synthetic": False,
        "how_to_fill": HOW_TO_FILL,
    }


def run_agreement_gaps(run: EvaluationRun) -> dict[int, ModelGap]:
    """Each target's judge agreement against the other targets', by target id (empty before
    two targets have blind verdicts)."""
    part = run_figures(JUDGE_TRUST, run, RUN_PART)
    return read_gaps(part.get("gaps")) if part is not None else {}


def target_trust_and_gap(run: EvaluationRun, target) -> tuple[dict[str, Trust], ModelGap | None]:
    """A label's judge trust by category slug and the target's agreement gap, from one read
    of the stored figures (both live in the judge-trust figures of the run)."""
    own = f"target:{target.pk}"
    parts = run_figure_parts(JUDGE_TRUST, run, (RUN_PART, own))
    trust = _read(parts[own]["category"]) if parts[own] is not None else {}
    whole = parts[RUN_PART]
    gaps = read_gaps(whole.get("gaps")) if whole is not None else {}
    return trust, gaps.get(target.pk)


def gap_api(gap: ModelGap | None) -> dict[str, Any] | None:
    """The API's comparison object; None before two models have blind verdicts."""
    return gap.as_api() if gap is not None else None


def low_trust_metrics(run: EvaluationRun, target=None) -> set[str]:
    """Metric keys whose judge trust (for ``target`` when given) is contested."""
    part = run_figures(JUDGE_TRUST, run, RUN_PART if target is None else f"target:{target.pk}")
    return set(part["low_metrics"]) if part is not None else set()
