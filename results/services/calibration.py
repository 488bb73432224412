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
from dataclasses import fields, replace
from typing import Any

import numpy as np
from django.db.models import Count, Max, Q
from django.utils.translation import gettext_noop

from evaluations.models import Conversation, EvaluationRun
from evaluations.services.closing import verdict_passed
from review.blindness import blind_held_scenarios, ratings_published
from review.models import Rating, RatingQueue
from review.selectors import calibration_items, calibration_queue_for
from stats.estimates import Estimate
from stats.figures import proportion_estimate
from stats.ppi import calibrated_mean

from .calibration_published import published_calibrated, published_pass_rates
from .calibration_rates import ALL, POLARITIES, CalibratedRate, Calibration
from .figure_cells import CellStore, input_digest
from .stored_figures import RUN_PART, FigureKind, run_figures

JUDGE_RESAMPLES = 2_000
# Names what a stored rate holds, so rates stored under an earlier rule are drawn again.
CELL_VERSION = "bounded, published from the minimum, judge-only per polarity read"


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
            "scenario__language",
        )
        .order_by("pk")
    )


def _cell(
    rows: list[dict[str, Any]],
    sample: dict[int, tuple[float, float | None]],
    *,
    target: tuple[int, str],
    polarity: str,
    language: str = "",
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
        else Estimate.insufficient(n=len(judged), reason=gettext_noop("pass rate not computed yet"))
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
        language=language,
    )


def _compute(
    run: EvaluationRun, queue: RatingQueue | None
) -> tuple[list[CalibratedRate], list[CalibratedRate]]:
    """The rates over every language, and each target's rate per language (when several)."""
    rows, sample = _inputs_read(run, queue)
    rates = [_cell(cell, sample, target=t, polarity=p) for t, p, cell in _cell_rows(rows)]
    by_language = [
        _cell(cell, sample, target=t, polarity=ALL, language=language)
        for t, language, cell in _language_cell_rows(rows)
    ]
    return rates, by_language


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


def _language_cell_rows(rows: list[dict[str, Any]]) -> list[tuple[tuple[int, str], str, list]]:
    """(target, language, rows) of every per-language rate, over both polarities; none when
    the judged conversations are all in one language."""
    if len({r["scenario__language"] for r in rows if r["verdict_passed"] is not None}) < 2:
        return []
    by_cell: dict[tuple[int, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_cell[(r["target_id"], r["target__name"], r["scenario__language"])].append(r)
    return [
        ((target_id, name), language, by_cell[(target_id, name, language)])
        for target_id, name, language in sorted(by_cell, key=lambda k: (k[1], k[2]))
    ]


def _refreshed(
    run: EvaluationRun, queue: RatingQueue | None, store: CellStore, previous: set[str]
) -> tuple[dict[str, Any], set[str]]:
    """The run's one document, its rates drawn again only where a rate's conversations,
    verdicts or sample changed (`figure_cells`)."""
    rows, sample = _inputs_read(run, queue)
    # (key, target, polarity, language, rows): the pooled rates, then the per-language ones.
    cells = [(f"{t[0]}:{p}", t, p, "", cell) for t, p, cell in _cell_rows(rows)] + [
        (f"{t[0]}:{ALL}:{language}", t, ALL, language, cell)
        for t, language, cell in _language_cell_rows(rows)
    ]
    digests = {key: _digest(t, p, cell, sample, language) for key, t, p, language, cell in cells}
    stale = store.stale(digests)
    store.put(
        {
            key: _rate_encode(_cell(cell, sample, target=t, polarity=p, language=language))
            for key, t, p, language, cell in cells
            if key in stale
        }
    )
    stored = store.stored(list(digests))
    rates = [_rate_decode(stored[key]) for key, *_ in cells]
    synthetic = bool(getattr(run, "synthetic", False))
    calibration = Calibration(
        queue.pk if queue else None,
        queue.name if queue else "",
        [rate for rate in rates if not rate.language],
        synthetic,
        [rate for rate in rates if rate.language],
    )
    return {RUN_PART: _encode(calibration)}, set()


def _digest(
    target: tuple[int, str], polarity: str, rows: list[dict], sample: dict, language: str = ""
) -> str:
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
    # A per-language rate's language is part of its inputs; the pooled ones keep their digest.
    parts = (language,) if language else ()
    return input_digest(target, polarity, *parts, read, JUDGE_RESAMPLES, CELL_VERSION)


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
    # "languages": figures stored before the per-language rates existed are computed again
    # rather than read, so no page shows rates pooled over languages without saying so.
    source = f"languages:{queue.pk}:{_stamp(queue)}" if queue is not None else "languages:none"
    return source, queue


def _documents(run: EvaluationRun, queue: RatingQueue | None) -> dict[str, Any]:
    synthetic = bool(getattr(run, "synthetic", False))
    rates, by_language = _compute(run, queue)
    calibration = Calibration(
        queue.pk if queue else None, queue.name if queue else "", rates, synthetic, by_language
    )
    return {RUN_PART: _encode(calibration)}  # one small document: every page shows it whole


def _encode(calibration: Calibration) -> dict[str, Any]:
    return {
        "queue_id": calibration.queue_id,
        "queue_name": calibration.queue_name,
        "synthetic": calibration.synthetic,
        "rates": [_rate_encode(rate) for rate in calibration.rates],
        "by_language": [_rate_encode(rate) for rate in calibration.by_language],
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
    by_language = [_rate_decode(rate) for rate in data.get("by_language", ())]
    return Calibration(data["queue_id"], data["queue_name"], rates, data["synthetic"], by_language)


CALIBRATION = FigureKind("calibration", _inputs, _documents, _refreshed)
