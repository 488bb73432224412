"""Rebuild what the public pages show about one run.

Two products, each replaced as a whole in its own transaction, so readers see either the old or
the new figures, never a mix:

* the pass-rate summaries (`summaries_refresh`): counts and intervals of every cell, the rows
  every results page reads;
* the run analysis (`analysis_refresh`): reliability and robustness, the `RunAnalysis` snapshot,
  with the figures pages would otherwise draw per request (judge trust, calibrated rates:
  `RunFigures`, marked with the snapshot's time) and what the run cost (`run_cost`).

A finished run needs both (`results_refresh`, one transaction); ratings arriving change only
the analysis. The slow parts run before a transaction opens, but for the summaries' bootstrap,
which is drawn while the metric rows are being written (`summary_writes`). What a change
reaches, and the refreshes scoped to it, are `refresh_scope`'s.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import transaction
from django.utils import timezone

import stats
from evaluations.models import EvaluationRun
from evaluations.services.panel import run_panel
from llm.models import ModelConfiguration
from metrics_registry.models import MetricVersion
from results.models import PassRateSummary, RunAnalysis

from .calibration import CALIBRATION
from .cells import RunCells, run_cells
from .evidence import evidence_verification
from .failed_as_fail import failed_as_fail
from .fidelity import fidelity_figures
from .figure_cells import CellStore, input_digest
from .judge_trust import JUDGE_TRUST
from .panel import panel_figures
from .reliability import (
    anchor_consistency,
    expert_agreement,
    expert_verdict_rows,
    rated_verdicts,
)
from .repeatability import judge_repeatability, judgment_counts
from .robustness import robustness
from .run_cost import run_cost_compute
from .stored_figures import Computed, run_figures_compute, run_figures_write
from .summaries import DEFAULT_RESAMPLES
from .summary_writes import summaries_replace
from .swap_study import swap_studies_for

# The kinds of cells (`figure_cells`) the summaries and the analysis keep.
SUMMARIES = "summaries"
ANALYSIS = "analysis"


def summaries_refresh(
    *, run: EvaluationRun, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> int:
    """Recompute the run's pass-rate summaries (counts and intervals of every cell); returns
    the number of rows."""
    cells = _cells_loading_kernels(run)
    store = CellStore(run, SUMMARIES)
    with transaction.atomic():
        count = _summaries(run, cells, store, n_resamples=n_resamples, seed=seed)
        store.write()
        return count


def analysis_refresh(
    *, run: EvaluationRun, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> RunAnalysis:
    """Recompute the run's reliability and robustness snapshot (`RunAnalysis`)."""
    started = time.perf_counter()
    cells = _cells_loading_kernels(run)
    store = CellStore(run, ANALYSIS)
    figures = _analysis(run, cells, n_resamples=n_resamples, seed=seed, store=store)
    figures["cost"] = run_cost_compute(run)
    stored = stored_figures_compute(run)
    with transaction.atomic():
        analysis = _analysis_write(run, figures, n_resamples, time.perf_counter() - started)
        store.write()
        stored_figures_write(run, stored, analysis)
        return analysis


def results_refresh(
    *, run: EvaluationRun, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> RunAnalysis:
    """Both products of a finished run from one reading of its cells, in one transaction;
    only the figures whose inputs changed are drawn again (`figure_cells`).

    Idempotent: the computation reads only stored rows, and the old rows are replaced.
    """
    started = time.perf_counter()
    cells = _cells_loading_kernels(run)
    store = CellStore(run, ANALYSIS)
    figures = _analysis(run, cells, n_resamples=n_resamples, seed=seed, store=store)
    figures["cost"] = run_cost_compute(run)
    stored = stored_figures_compute(run)
    summaries = CellStore(run, SUMMARIES)
    with transaction.atomic():
        _summaries(run, cells, summaries, n_resamples=n_resamples, seed=seed)
        analysis = _analysis_write(run, figures, n_resamples, time.perf_counter() - started)
        for cell_store in (summaries, store):
            cell_store.write()
        stored_figures_write(run, stored, analysis)
        return analysis


def _summaries(
    run: EvaluationRun, cells: RunCells, store: CellStore, *, n_resamples: int, seed: int
) -> int:
    """Rewrite the summary rows unless the cells they are counted from, and the drawing, are
    those of the rows stored; returns the number of rows. One run-wide cell: every row's
    interval reads the run-wide intra-cluster correlation (`summaries`)."""
    digest = input_digest(cells_digest(cells), n_resamples, seed)
    if not store.stale({"rows": digest}) and PassRateSummary.objects.filter(run=run).exists():
        return store.stored(["rows"])["rows"]["count"]
    count = summaries_replace(run, cells, n_resamples=n_resamples, seed=seed)
    store.put_one("rows", {"count": count})
    return count


def _cells_loading_kernels(run: EvaluationRun) -> RunCells:
    """The run's cells, while the resampling engine's compiled code loads in the background:
    numba's one-time set-up in a fresh process (~0.3 s) overlaps the wait on the database
    instead of delaying the first bootstrap."""
    stats.load_kernels(wait=False)
    return run_cells(run)


def _analysis(
    run: EvaluationRun, cells: RunCells, *, n_resamples: int, seed: int, store: CellStore
) -> dict:
    """Reliability and robustness: each figure from its stored cell when the digest of its
    inputs is unchanged (`figure_cells`), else drawn now. The run-wide figures with no input
    of their own to digest (anchor consistency, the judge panel's) are drawn every time."""
    names = dict(
        ModelConfiguration.objects.filter(pk__in=set(cells.target.tolist())).values_list(
            "pk", "name"
        )
    )
    keys = dict(
        MetricVersion.objects.filter(pk__in=set(cells.version.tolist())).values_list(
            "pk", "metric__key"
        )
    )
    options = {"n_resamples": n_resamples, "seed": seed}
    outcomes = cells_digest(cells)
    robust_digest = input_digest(outcomes, sorted(names.items()), sorted(keys.items()), options)
    # Robustness reads only the cells (no query), so it runs beside the judgment GROUP BY and
    # the reliability figures: NumPy and the database driver release the GIL. Every figure
    # draws from its own generator, so the figures do not depend on which thread computes them.
    with ThreadPoolExecutor(max_workers=1) as pool:
        robust_job = None
        if store.stale({"robustness": robust_digest}):
            robust_job = pool.submit(_robustness, cells, names, keys, options)
        verdict_rows = expert_verdict_rows(run)
        counts = judgment_counts(run)
        panel = len(run_panel(run)) > 1
        # A panel's repeatability is its first judge's: the others are other judges, not
        # repetitions (their agreement is the panel's own figure below).
        own = judgment_counts(run, first_judge_only=True) if panel else counts
        reliability = {
            "judge": store.cached(
                "judge",
                input_digest(own.tobytes(), sorted(keys.items()), options),
                lambda: judge_repeatability(run, counts=own, metric_keys=keys, **options),
            ),
            # The validity figure: blind ratings only. Judge-visible ratings measure endorsement.
            "experts": agreement_figure(run, store, "experts", verdict_rows["blind"], options),
            "endorsement": agreement_figure(
                run, store, "endorsement", verdict_rows["judge_visible"], options
            ),
            "anchors": anchor_consistency(run, **options),
            "evidence": store.cached(
                "evidence",
                input_digest(counts.tobytes(), options),
                lambda: evidence_verification(run, counts=counts, **options),
            ),
            # Drawn every time: its inputs (readings, ratings) have no digest of their own yet.
            "fidelity": fidelity_figures(runs=[run], **options),
        }
        if panel:
            reliability["panel"] = panel_figures(
                run, metric_keys=keys, target_names=names, **options
            )
        if robust_job is not None:
            robust = store.put_one("robustness", robust_job.result())
        else:
            robust = store.stored(["robustness"])["robustness"]
    # Swap studies based on this run (their re-runs finished): figures beside the others'
    # (the key only when there is one, so a run without studies has the analysis it had).
    studies = swap_studies_for(run.pk, cells=store, **options)
    if studies:
        robust = {**robust, "swap": studies}
    return {"reliability": reliability, "robustness": robust}


def agreement_figure(
    run: EvaluationRun, store: CellStore, name: str, rows: list, options: dict[str, int]
) -> dict[str, Any]:
    """Expert agreement of one kind of ratings, drawn again only when the ratings or the
    judge's verdicts on the rated conversations changed."""
    judged = rated_verdicts(run, rows)
    digest = input_digest(rows, sorted(judged.items()), options)
    return store.cached(name, digest, lambda: expert_agreement(run, rows, judged=judged, **options))


def _robustness(
    cells: RunCells, names: dict[int, str], keys: dict[int, str], options: dict[str, int]
) -> dict[str, Any]:
    robust = robustness(cells, names, keys, **options)
    robust["failed_as_fail"] = failed_as_fail(cells, names, **options)
    return robust


def cells_digest(cells: RunCells) -> str:
    """A digest of everything the summaries and robustness read: the run's cells and the
    metadata of their metric versions."""
    return input_digest(
        *(a.tobytes() for a in (cells.target, cells.version, cells.base, cells.age)),
        cells.language_codes.tobytes(),
        cells.languages,
        cells.n.tobytes(),
        cells.passed.tobytes(),
        cells.failed,
        cells.failed_language,
        sorted(cells.polarity.items()),
        sorted(cells.source.items()),
        sorted(cells.source_weight.items()),
        sorted(cells.subareas.items()),
        sorted(cells.areas.items()),
    )


# Figures public pages would otherwise draw on every request (bootstraps over expert ratings):
# computed with the analysis and stored beside it (`stored_figures`).
STORED_KINDS = (JUDGE_TRUST, CALIBRATION)


def stored_figures_compute(run: EvaluationRun) -> list[Computed]:
    return [run_figures_compute(kind, run) for kind in STORED_KINDS]


def stored_figures_write(
    run: EvaluationRun, computed: list[Computed], analysis: RunAnalysis
) -> None:
    for kind, figures in zip(STORED_KINDS, computed, strict=True):
        run_figures_write(kind, run, figures, refreshed_at=analysis.computed_at)


def _analysis_write(
    run: EvaluationRun, figures: dict[str, Any], n_resamples: int, seconds: float
) -> RunAnalysis:
    analysis, _ = RunAnalysis.objects.update_or_create(
        run=run,
        defaults={
            "computed_at": timezone.now(),
            "n_resamples": n_resamples,
            "seconds": seconds,
            **figures,
        },
    )
    return analysis
