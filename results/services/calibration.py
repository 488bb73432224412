"""Expert-calibrated pass rates per target and polarity, beside the judge's own.

The judge graded every conversation of a run; blind experts grade the run's calibration queue
(`review.services.calibration`: a random sample stratified by target and polarity, each item's
inclusion probability stored). ``stats.ppi.calibrated_mean`` corrects the judge's pass rate by
the judge's error measured on that sample (prediction-powered inference), with an interval
clustered by base scenario. Only the calibration queue's ratings are read here: a triage
queue's items were chosen for their disagreements and would bias the correction.

What is excluded, and said: conversations without a verdict (failed, or a panel tie) are
outside both figures, as they are outside every published pass rate; sampled conversations not
rated yet count as not drawn (the queue's order is random, so the rated ones are a random
subset of the sample).

The label shows a target's calibrated rate from ``LABEL_MIN_EXPERT_VERDICTS`` rated
conversations over ``LABEL_MIN_BASE_SCENARIOS`` base scenarios (``stats.ppi`` says why);
below that it says how many more ratings are needed. Figures are computed by the results
refresh and stored (`stored_figures`) under a stamp of the queue's ratings, which changes with
every rating submitted or undone: a page read after that computes them live until the next
refresh.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
from django.db.models import Count, Max, Q

from evaluations.models import Conversation, EvaluationRun
from evaluations.services.closing import verdict_passed
from review.blindness import blind_held_scenarios, ratings_published
from review.models import Rating, RatingQueue
from review.selectors import calibration_items, calibration_queue_for
from stats.estimates import Estimate
from stats.figures import proportion_estimate
from stats.ppi import (
    LABEL_MIN_BASE_SCENARIOS,
    LABEL_MIN_EXPERT_VERDICTS,
    calibrated_mean,
    large_enough_for_label,
)

from .calibration_published import published_calibrated, published_pass_rates
from .calibration_texts import NOT_DRAWN, NOT_RATED, THRESHOLD_TEXT, calibration_how_to_fill
from .figure_cells import CellStore, input_digest
from .stored_figures import RUN_PART, FigureKind, run_figures

JUDGE_RESAMPLES = 2_000
# Names what a stored rate holds, so rates stored under an earlier rule are drawn again.
CELL_VERSION = "bounded, published from the minimum, judge-only per polarity read"
ALL = "all"
POLARITIES = (ALL, "positive", "negative")


@dataclass(frozen=True)
class CalibratedRate:
    """One target's (or one target-polarity's) judge-only and calibrated pass rates."""

    target_id: int
    target_name: str
    polarity: str
    judge_only: Estimate
    calibrated: Estimate
    n_judged: int  # conversations with a judge verdict
    n_sample: int  # of them drawn into the calibration sample
    n_rated: int  # of those with an expert verdict so far
    base_scenarios_rated: int
    excluded_no_verdict: int  # failed or panel-tied conversations, outside both figures

    @property
    def on_label(self) -> bool:
        return self.polarity == ALL and large_enough_for_label(self.calibrated)

    @property
    def ratings_needed(self) -> int:
        """More rated conversations this target needs before its label shows the figure."""
        return max(0, LABEL_MIN_EXPERT_VERDICTS - self.n_rated)

    @property
    def base_scenarios_needed(self) -> int:
        return max(0, LABEL_MIN_BASE_SCENARIOS - self.base_scenarios_rated)

    def as_api(self) -> dict[str, Any]:
        return {
            "target": self.target_id,
            "target_name": self.target_name,
            "polarity": self.polarity,
            "judge_only": self.judge_only.as_dict(),
            "calibrated": self.calibrated.as_dict(),
            "n_judged": self.n_judged,
            "n_calibration_sample": self.n_sample,
            "n_expert_rated": self.n_rated,
            "base_scenarios_rated": self.base_scenarios_rated,
            "excluded_without_verdict": self.excluded_no_verdict,
            "on_label": self.on_label,
            "ratings_needed_for_label": self.ratings_needed,
            "base_scenarios_needed_for_label": self.base_scenarios_needed,
        }


@dataclass(frozen=True)
class Calibration:
    """A run's calibrated rates, and the queue they come from (None: no sample drawn yet)."""

    queue_id: int | None
    queue_name: str
    rates: list[CalibratedRate] = field(default_factory=list)
    synthetic: bool = False

    @property
    def drawn(self) -> bool:
        return self.queue_id is not None

    @property
    def rated(self) -> int:
        return sum(r.n_rated for r in self.rates if r.polarity == ALL)

    @property
    def reason(self) -> str:
        """Why no calibrated figure shows yet (blank once experts have rated)."""
        if not self.drawn:
            return NOT_DRAWN
        return NOT_RATED if self.rated == 0 else ""

    def for_target(self, target_id: int, polarity: str = ALL) -> CalibratedRate | None:
        return next(
            (r for r in self.rates if r.target_id == target_id and r.polarity == polarity), None
        )

    def as_api(self) -> dict[str, Any]:
        return {
            "calibration_queue": self.queue_id,
            "expert_rated": self.rated,
            "synthetic": self.synthetic,
            "threshold": {
                "min_expert_verdicts": LABEL_MIN_EXPERT_VERDICTS,
                "min_base_scenarios": LABEL_MIN_BASE_SCENARIOS,
                "text": THRESHOLD_TEXT,
            },
            "reason": self.reason,
            "how_to_fill": calibration_how_to_fill() if self.rated == 0 else "",
            "excluded": "Conversations without a verdict (failed or panel ties) are outside "
            "both rates; triage-queue ratings are never used; conversations held for blind "
            "expert review, and a blind queue's verdicts, count once the queue closes.",
            "rates": [r.as_api() for r in self.rates],
        }


def _stamp(queue: RatingQueue) -> str:
    """Changes whenever a rating the figures count is submitted or undone, or the queue's
    ratings start to count (one query)."""
    agg = ratings_published(Rating.objects.filter(queue=queue), undone=True).aggregate(
        n=Count("pk"), undone=Count("pk", filter=Q(undone=True)), last=Max("pk")
    )
    return f"{agg['n']}.{agg['undone'] or 0}.{agg['last'] or 0}"


def _conversations(run: EvaluationRun) -> list[dict[str, Any]]:
    return list(
        Conversation.objects.filter(run=run)
        # Held for blind review: neither listed nor counted until the hold ends.
        .exclude(scenario_id__in=blind_held_scenarios())
        .values(
            "pk",
            "target_id",
            "target__name",
            "verdict_passed",
            "scenario__metric_version_id",
            "scenario__base_index",
            "scenario__metric_version__polarity",
        )
        .order_by("pk")
    )


def _cell(
    rows: list[dict[str, Any]],
    sample: dict[int, tuple[float, float | None]],
    *,
    target: tuple[int, str],
    polarity: str,
) -> CalibratedRate:
    judged = [r for r in rows if r["verdict_passed"] is not None]
    judge = np.array([float(r["verdict_passed"]) for r in judged])
    clusters = [f"{r['scenario__metric_version_id']}:{r['scenario__base_index']}" for r in judged]
    expert = np.full(len(judged), np.nan)
    pi = np.full(len(judged), np.nan)
    n_sample = 0
    for i, r in enumerate(judged):
        if r["pk"] in sample:
            n_sample += 1
            pi[i], value = sample[r["pk"]]
            if value is not None:
                expert[i] = value
    rated = np.isfinite(expert)
    strata = [r["scenario__metric_version__polarity"] for r in judged]
    # A polarity's judge-only rate is the pass rate every page shows, read on the way out
    # (`run_calibration`); the rate over both polarities is the calibration's own, unless a
    # panel of judges publishes it too (then that one is read).
    judge_only = (
        proportion_estimate(judge, clusters, over="base scenarios", n_resamples=JUDGE_RESAMPLES)
        if polarity == ALL
        else Estimate.insufficient(n=len(judged), reason="pass rate not computed yet")
    )
    calibrated = calibrated_mean(
        judge,
        expert,
        inclusion_probability=np.where(rated, pi, 1.0),
        clusters=clusters,
        strata=strata if polarity == ALL else None,
    )
    base_scenarios_rated = len({c for c, ok in zip(clusters, rated, strict=True) if ok})
    calibrated = published_calibrated(calibrated, int(rated.sum()), base_scenarios_rated)
    return CalibratedRate(
        target_id=target[0],
        target_name=target[1],
        polarity=polarity,
        judge_only=judge_only,
        calibrated=calibrated,
        n_judged=len(judged),
        n_sample=n_sample,
        n_rated=int(rated.sum()),
        base_scenarios_rated=base_scenarios_rated,
        excluded_no_verdict=len(rows) - len(judged),
    )


def _compute(run: EvaluationRun, queue: RatingQueue | None) -> list[CalibratedRate]:
    rows, sample = _inputs_read(run, queue)
    return [_cell(cell, sample, target=t, polarity=p) for t, p, cell in _cell_rows(rows)]


def _inputs_read(run: EvaluationRun, queue: RatingQueue | None) -> tuple[list[dict], dict]:
    """The run's conversations, and the calibration sample's inclusion probability and expert
    pass share of each conversation in it."""
    rows = _conversations(run)
    polarity_of = {r["pk"]: r["scenario__metric_version__polarity"] for r in rows}
    sample: dict[int, tuple[float, float | None]] = {}
    for item in calibration_items(queue) if queue is not None else []:
        polarity = polarity_of.get(item.conversation_id)
        if polarity is None:
            continue
        passes = [verdict_passed(present=v, polarity=polarity) for v in item.verdicts]
        # Several experts on one conversation: the share of them that pass it.
        value = sum(passes) / len(passes) if passes else None
        sample[item.conversation_id] = (item.inclusion_probability, value)
    return rows, sample


def _cell_rows(rows: list[dict[str, Any]]) -> list[tuple[tuple[int, str], str, list[dict]]]:
    """(target, polarity, rows) of every rate, targets by name."""
    by_target: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_target[(r["target_id"], r["target__name"])].append(r)
    cells = []
    for target in sorted(by_target, key=lambda t: t[1]):
        target_rows = by_target[target]
        for polarity in POLARITIES:
            cell_rows = [
                r
                for r in target_rows
                if polarity == ALL or r["scenario__metric_version__polarity"] == polarity
            ]
            if cell_rows:
                cells.append((target, polarity, cell_rows))
    return cells


def _refreshed(
    run: EvaluationRun, queue: RatingQueue | None, store: CellStore, previous: set[str]
) -> tuple[dict[str, Any], set[str]]:
    """The run's one document, its rates drawn again only where a rate's conversations,
    verdicts or sample changed (`figure_cells`)."""
    rows, sample = _inputs_read(run, queue)
    cells = _cell_rows(rows)
    digests = {f"{t[0]}:{p}": _digest(t, p, cell, sample) for t, p, cell in cells}
    stale = store.stale(digests)
    store.put(
        {
            f"{t[0]}:{p}": _rate_encode(_cell(cell, sample, target=t, polarity=p))
            for t, p, cell in cells
            if f"{t[0]}:{p}" in stale
        }
    )
    stored = store.stored(list(digests))
    rates = [_rate_decode(stored[key]) for key in digests]
    synthetic = bool(getattr(run, "synthetic", False))
    calibration = Calibration(
        queue.pk if queue else None, queue.name if queue else "", rates, synthetic
    )
    return {RUN_PART: _encode(calibration)}, set()


def _digest(target: tuple[int, str], polarity: str, rows: list[dict], sample: dict) -> str:
    """What one rate reads: its conversations' verdicts, clusters and strata, their sample
    entries, and the resamples of the judge-only interval."""
    read = [
        (
            r["pk"],
            r["verdict_passed"],
            r["scenario__metric_version_id"],
            r["scenario__base_index"],
            r["scenario__metric_version__polarity"],
            sample.get(r["pk"]),
        )
        for r in rows
    ]
    return input_digest(target, polarity, read, JUDGE_RESAMPLES, CELL_VERSION)


def run_calibration(run: EvaluationRun) -> Calibration:
    """The run's calibrated rates from its latest calibration queue: stored by the refresh,
    computed live when the queue's ratings changed since (`CALIBRATION`). Four queries when
    stored: the queue and its ratings' stamp, the figures, and the pass rates the run already
    publishes, which are its judge-only rates (`calibration_published`)."""
    calibration = _decode(run_figures(CALIBRATION, run))
    published = published_pass_rates(run)
    rates = [
        replace(rate, judge_only=published[(rate.target_id, rate.polarity)])
        if (rate.target_id, rate.polarity) in published
        else rate
        for rate in calibration.rates
    ]
    return replace(calibration, rates=rates)


def _inputs(run: EvaluationRun) -> tuple[str, RatingQueue | None]:
    queue = calibration_queue_for(run)
    # Before a sample is drawn the rates are still computed, judge-only filled and calibrated
    # awaiting verdicts: the page shows what will appear once experts rate.
    return (f"{queue.pk}:{_stamp(queue)}" if queue is not None else "none"), queue


def _documents(run: EvaluationRun, queue: RatingQueue | None) -> dict[str, Any]:
    synthetic = bool(getattr(run, "synthetic", False))
    rates = _compute(run, queue)
    calibration = Calibration(
        queue.pk if queue else None, queue.name if queue else "", rates, synthetic
    )
    return {RUN_PART: _encode(calibration)}  # one small document: every page shows it whole


def _encode(calibration: Calibration) -> dict[str, Any]:
    return {
        "queue_id": calibration.queue_id,
        "queue_name": calibration.queue_name,
        "synthetic": calibration.synthetic,
        "rates": [_rate_encode(rate) for rate in calibration.rates],
    }


def _rate_encode(rate: CalibratedRate) -> dict[str, Any]:
    return {
        **{f.name: getattr(rate, f.name) for f in fields(CalibratedRate)},
        "judge_only": rate.judge_only.as_dict(),
        "calibrated": rate.calibrated.as_dict(),
    }


def _rate_decode(rate: dict[str, Any]) -> CalibratedRate:
    return CalibratedRate(
        **{
            **rate,
            "judge_only": Estimate.from_dict(rate["judge_only"]),
            "calibrated": Estimate.from_dict(rate["calibrated"]),
        }
    )


def _decode(data: dict[str, Any]) -> Calibration:
    rates = [_rate_decode(rate) for rate in data["rates"]]
    return Calibration(data["queue_id"], data["queue_name"], rates, data["synthetic"])


CALIBRATION = FigureKind("calibration", _inputs, _documents, _refreshed)
