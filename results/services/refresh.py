"""Rebuild everything the public pages show about one run, in one transaction."""

from __future__ import annotations

import time

from django.db import transaction
from django.utils import timezone

from evaluations.models import EvaluationRun
from llm.models import ModelConfiguration
from metrics_registry.models import MetricVersion
from results.models import PassRateSummary, RunAnalysis

from .cells import run_cells
from .evidence import evidence_verification
from .reliability import (
    anchor_consistency,
    expert_agreement,
    expert_verdict_rows,
    judge_repeatability,
)
from .robustness import robustness
from .summaries import DEFAULT_RESAMPLES, failed_as_fail, summary_rows


def summaries_refresh(
    *, run: EvaluationRun, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> RunAnalysis:
    """Recompute the run's pass-rate summaries and its reliability/robustness snapshot.

    Idempotent: the computation reads only stored rows, and the old rows are replaced (delete +
    insert) in one transaction, so readers see either the old or the new figures, never a mix.
    The slow part runs before the transaction opens.
    """
    started = time.perf_counter()
    cells = run_cells(run)
    rows = summary_rows(run, cells, n_resamples=n_resamples, seed=seed)
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
    verdict_rows = expert_verdict_rows(run)
    reliability = {
        "judge": judge_repeatability(run, n_resamples=n_resamples, seed=seed),
        # The validity figure: blind ratings only. Judge-visible ratings measure endorsement.
        "experts": expert_agreement(run, verdict_rows["blind"], n_resamples=n_resamples, seed=seed),
        "endorsement": expert_agreement(
            run, verdict_rows["judge_visible"], n_resamples=n_resamples, seed=seed
        ),
        "anchors": anchor_consistency(run, n_resamples=n_resamples, seed=seed),
        "evidence": evidence_verification(run, n_resamples=n_resamples, seed=seed),
    }
    robust = robustness(cells, names, keys, n_resamples=n_resamples, seed=seed)
    robust["failed_as_fail"] = failed_as_fail(cells, names, n_resamples=n_resamples, seed=seed)
    with transaction.atomic():
        PassRateSummary.objects.filter(run=run).delete()
        PassRateSummary.objects.bulk_create(rows, batch_size=2_000)
        analysis, _ = RunAnalysis.objects.update_or_create(
            run=run,
            defaults={
                "computed_at": timezone.now(),
                "n_resamples": n_resamples,
                "seconds": time.perf_counter() - started,
                "reliability": reliability,
                "robustness": robust,
            },
        )
    return analysis
