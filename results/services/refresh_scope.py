"""Refresh only what a change reaches: the dependency structure of a run's published figures.

What each figure of a run reads, and so what a change makes stale:

* the pass-rate summaries (`summaries_refresh`). A row's counts read only its own cells (one
  model's conversations of its metrics), but *every* row's interval reads the run-wide
  intra-cluster correlation (`summaries.scope_correlations`, pooled over every model x metric
  group): one model's or one metric's conversations changing moves every interval of the run,
  so such a change rewrites every row;
* the analysis (`RunAnalysis`), figure by figure:

  - robustness (weighting schemes, rank stability, every pair of models' difference
    simultaneous over all pairs, teen-vs-adult with its false-discovery count over all
    metrics) and failed-as-fail (the same run-wide correlation): every model and metric;
  - judge repeatability, evidence verification, anchor consistency and the judge panel's
    figures: pooled over every conversation of the run;
  - ``experts`` (blind agreement): the external-panel ratings, with the judge's verdicts;
  - ``endorsement``: the judge-verdict-queue ratings, with the judge's verdicts;
  - ``fidelity``: the conversation-queue realism ratings, with the fidelity check's readings;
  - ``swap``: the swap studies based on the run whose re-runs finished.

So a change to one model's or one metric's conversations refreshes both products (no figure is
left that does not read them), while a rating queue's ratings refresh the one figure of the
queue's kind and a swap re-run the swap figures, each merged into the stored analysis (ratings
of whole conversations feed the fidelity figures' agreement with experts). Within what a change
reaches, every figure is kept in cells keyed by a digest of their inputs (`figure_cells`): a
metric x model's judge trust, a model's calibrated rate, each reliability figure, each swap
study's polarity, the summary rows as one run-wide cell. Only the cells whose digest changed are
drawn again; the rest are reused, and the documents pages read are rebuilt only where they hold
a redrawn cell. A scoped or incremental refresh gives the very figures of a refresh from
scratch: each cell draws from its own seeded generator and reads only stored rows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from evaluations.models import EvaluationRun
from results.models import RefreshRequest, RunAnalysis, RunFigures
from review.kinds import adapter_for, kinds_with

from .fidelity import fidelity_figures
from .figure_cells import CellStore
from .refresh import (
    ANALYSIS,
    agreement_figure,
    analysis_refresh,
    results_refresh,
    stored_figures_compute,
    stored_figures_write,
)
from .reliability import expert_verdict_rows
from .summaries import DEFAULT_RESAMPLES
from .swap_study import swap_studies_for


def _experts(run: EvaluationRun, options: dict[str, int], cells: CellStore) -> dict[str, Any]:
    rows = expert_verdict_rows(run, ("blind",))["blind"]
    return agreement_figure(run, cells, "experts", rows, options)


def _endorsement(run: EvaluationRun, options: dict[str, int], cells: CellStore) -> dict[str, Any]:
    rows = expert_verdict_rows(run, ("judge_visible",))["judge_visible"]
    return agreement_figure(run, cells, "endorsement", rows, options)


def _fidelity(run: EvaluationRun, options: dict[str, int], cells: CellStore) -> dict[str, Any]:
    # Few rows per base scenario, no resampling of its shares: drawn whole, not in cells.
    return fidelity_figures(runs=[run], **options)


def _swap(run: EvaluationRun, options: dict[str, int], cells: CellStore) -> list[dict[str, Any]]:
    return swap_studies_for(run.pk, cells=cells, **options)


@dataclass(frozen=True)
class Figure:
    """One figure of the analysis computed on its own: where it sits and how it is made."""

    product: str  # "reliability" or "robustness"
    key: str
    compute: Callable[[EvaluationRun, dict[str, int], CellStore], Any]
    # The full refresh writes the key only when there is something (a run without studies).
    only_if_any: bool = False


FIGURES: dict[str, Figure] = {
    "experts": Figure("reliability", "experts", _experts),
    "endorsement": Figure("reliability", "endorsement", _endorsement),
    "fidelity": Figure("reliability", "fidelity", _fidelity),
    "swap": Figure("robustness", "swap", _swap, only_if_any=True),
}
# The figure each kind of rating queue feeds, as its adapter says (`KindAdapter.run_figure`);
# kinds not here feed no stored figure.
RATING_FIGURES = {kind: adapter_for(kind).run_figure for kind in kinds_with("run_figure")}


@dataclass(frozen=True)
class Change:
    """What changed in a run's data since its figures were computed."""

    targets: frozenset[int] = frozenset()  # models whose conversations or judgments changed
    versions: frozenset[int] = frozenset()  # metric versions whose conversations changed
    rating_kinds: frozenset[str] = frozenset()  # kinds of queues whose ratings changed
    swap_studies: bool = False  # a swap study based on the run finished its re-run


@dataclass(frozen=True)
class Dependents:
    """What a change makes stale: the summaries or not; the whole analysis (None) or the
    named `FIGURES`."""

    summaries: bool
    analysis: frozenset[str] | None


def dependents(change: Change) -> Dependents:
    """The figures that read what changed (the module docstring's table)."""
    if change.targets or change.versions:
        return Dependents(summaries=True, analysis=None)
    figures = {RATING_FIGURES[k] for k in change.rating_kinds if k in RATING_FIGURES}
    if change.swap_studies:
        figures.add("swap")
    return Dependents(summaries=False, analysis=frozenset(figures))


def refresh_for(
    run: EvaluationRun, change: Change, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> RunAnalysis | None:
    """Recompute what ``change`` reaches, and nothing else; returns the analysis."""
    needs = dependents(change)
    if needs.analysis is None:
        # Nothing changes the summaries without changing the whole analysis.
        return results_refresh(run=run, n_resamples=n_resamples, seed=seed)
    if needs.analysis:
        return figures_refresh(run=run, names=needs.analysis, n_resamples=n_resamples, seed=seed)
    return RunAnalysis.objects.filter(run=run).first()


def figures_refresh(
    *,
    run: EvaluationRun,
    names: Iterable[str],
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> RunAnalysis:
    """Recompute the named `FIGURES` and merge them into the stored analysis; the whole
    analysis when there is none yet, or it was drawn with another number of resamples."""
    started = time.perf_counter()
    stored = RunAnalysis.objects.filter(run=run).only("pk", "n_resamples").first()
    if stored is None or stored.n_resamples != n_resamples:
        return analysis_refresh(run=run, n_resamples=n_resamples, seed=seed)
    options = {"n_resamples": n_resamples, "seed": seed}
    cells = CellStore(run, ANALYSIS)
    figures = {name: FIGURES[name].compute(run, options, cells) for name in sorted(set(names))}
    # The figures pages read from `RunFigures` (judge trust, calibrated rates) draw on expert
    # ratings: drawn again when ratings changed, else carried over to the new snapshot (pages
    # read only those written with the run's latest analysis).
    rated = set(names) & set(RATING_FIGURES.values())
    page_figures = stored_figures_compute(run) if rated else None
    with transaction.atomic():
        # Read again under a lock: a figure merged meanwhile by another refresh is kept.
        analysis = RunAnalysis.objects.select_for_update().get(pk=stored.pk)
        previous = analysis.computed_at
        for name, value in figures.items():
            figure = FIGURES[name]
            product = getattr(analysis, figure.product)
            if figure.only_if_any and not value:
                product.pop(figure.key, None)
            else:
                product[figure.key] = value
        analysis.computed_at = timezone.now()
        analysis.seconds = time.perf_counter() - started
        analysis.save(update_fields=["reliability", "robustness", "computed_at", "seconds"])
        cells.write(drop_unnamed=False)
        if page_figures is not None:
            stored_figures_write(run, page_figures, analysis)
        else:
            RunFigures.objects.filter(run=run, refreshed_at=previous).update(
                refreshed_at=analysis.computed_at
            )
    return analysis


def refresh_booked(run_id: int, figures: Iterable[str] | None = None) -> None:
    """Run the refresh booked by `freshness.refresh_soon`: the figures the booking names
    together with ``figures`` (the whole analysis if either says so, or when there is neither
    a booking nor figures: a late task whose booking a refresh already took). Ratings do not
    move a pass rate, so the summaries stay. The booking is released first, so ratings that
    arrive while the figures are recomputed book the next refresh instead of being lost."""
    with transaction.atomic():
        booking = RefreshRequest.objects.select_for_update().filter(run_id=run_id).first()
        if booking is not None:
            booking.delete()
    wanted = None if figures is None else set(figures)
    if booking is not None:
        booked = booking.figures
        wanted = None if booked is None else set(booked) | (wanted or set())
    run = EvaluationRun.objects.filter(pk=run_id).first()
    if run is None:
        return
    if wanted is None:
        analysis_refresh(run=run)
    elif wanted:
        figures_refresh(run=run, names=wanted)
