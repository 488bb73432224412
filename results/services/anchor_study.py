"""The anchor study: what anchors in the simulator's brief do to replicate consistency.

Two runs simulate the same scenarios with replicates, one with the anchors in the simulator's
brief and one without (`run_evaluation --no-anchors`). Each run's disagreement rate (the share
of anchors raised in some replicates of a scenario and model and not in others, an anchor
counting as raised only when its quote was verified in the user turns) comes from
`anchors.anchor_consistency`. Here:

* the paired difference of the two rates (with minus without), on the scenarios both runs
  checked, clustered by base scenario and stratified by metric (`stats.differences`: a hard
  base scenario raises both rates and cancels from the difference);
* the checker's own noise: every conversation of such runs is checked twice, independently
  (`AnchorRecheck`); the share of anchors whose two readings differ, with a Wilson interval on
  the effective sample size (the design effect of base-scenario clusters), so a checker that
  never disagreed with itself still gets an interval of positive width.

Disagreement between replicates includes the checker's noise: two readings of one conversation
differ at the noise rate, so replicates can appear to disagree even when the user raised the
same anchors. The two figures are published side by side for that reason.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
from django.utils import timezone
from django.utils.translation import gettext_noop

from evaluations.models import (
    AnchorCoverage,
    AnchorRecheck,
    Conversation,
    EvaluationRun,
    RunStatus,
)
from metrics_registry.models import Release, ReleaseStatus
from stats.differences import paired_rate_differences
from stats.estimates import Estimate, Exclusion

from ..models import AnchorStudy
from .anchors import (
    WILSON,
    anchor_consistency,
    anchor_disagreements,
    clustered_share,
    completed_conversations,
    replicate_groups,
    verified_coverage,
)

DIFFERENCE_METHOD = (
    "paired difference of disagreement rates (with minus without anchors) over the base "
    "scenarios both runs checked, stratified by metric; cluster-robust t"
)
NOISE_METHOD = f"share of anchors whose two independent checks of one conversation differ; {WILSON}"


def _run_cells(run: EvaluationRun) -> tuple[dict[tuple[int, int], list[int]], dict, int, int]:
    """Per (metric version, base index): [disagreeing anchors, anchors], keyed by scenario too,
    with how many completed conversations were unchecked or alone in their group."""
    coverage, _unverified = verified_coverage(run)
    groups, meta, unchecked = replicate_groups(completed_conversations(run), coverage)
    readings, single = anchor_disagreements(groups)
    per_scenario: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for scenario, _target, disagree in readings:
        per_scenario[scenario][0] += disagree
        per_scenario[scenario][1] += 1
    return per_scenario, meta, unchecked, single


def paired_difference(
    with_run: EvaluationRun, without_run: EvaluationRun, *, seed: int = 0
) -> dict[str, Any]:
    """Disagreement with anchors minus without, paired by scenario (an Estimate dict)."""
    on, on_meta, on_unchecked, on_single = _run_cells(with_run)
    off, off_meta, off_unchecked, off_single = _run_cells(without_run)
    shared = sorted(set(on) & set(off))
    unpaired = sum(on[s][1] for s in set(on) - set(off)) + sum(
        off[s][1] for s in set(off) - set(on)
    )
    excluded = [
        Exclusion(
            gettext_noop("conversations whose coverage was not checked"),
            on_unchecked + off_unchecked,
        ),
        Exclusion(
            gettext_noop("conversations without a second checked replicate"), on_single + off_single
        ),
        Exclusion(
            gettext_noop("anchors of scenarios checked in only one of the two runs"), unpaired
        ),
    ]
    excluded = [e for e in excluded if e.count]
    cells: dict[tuple[int, int], np.ndarray] = defaultdict(lambda: np.zeros(4))
    for scenario in shared:
        version, base_index, _ = on_meta[scenario]
        cell = cells[(version, base_index)]
        cell += (on[scenario][0], on[scenario][1], off[scenario][0], off[scenario][1])
    n_anchors = int(sum(c[1] + c[3] for c in cells.values()))
    if len(cells) < 2:
        return {
            "difference": Estimate.insufficient(
                n=n_anchors,
                unit="difference",
                method=DIFFERENCE_METHOD,
                n_clusters=len(cells),
                reason=gettext_noop("fewer than two base scenarios checked in both runs"),
                excluded=excluded,
            ).as_dict()
        }
    keys = sorted(cells)
    table = np.array([cells[k] for k in keys])
    result = paired_rate_differences(
        table[:, [0, 2]], table[:, [1, 3]], [k[0] for k in keys], seed=seed
    )
    low, high = result.bounds(simultaneous=False)
    estimate = Estimate(
        value=float(result.difference[0]),
        low=float(low[0]),
        high=float(high[0]),
        method=DIFFERENCE_METHOD,
        n=n_anchors,
        n_clusters=result.n_clusters,
        excluded=tuple(excluded),
        unit="difference",
    )
    return {
        "difference": estimate.as_dict(),
        "rate_with": float(result.rates[0]),
        "rate_without": float(result.rates[1]),
        "n_base_scenarios": len(keys),
        "n_scenarios": len(shared),
    }


def checker_noise(runs: list[EvaluationRun]) -> dict[str, Any]:
    """How often two independent checks of the same conversation read an anchor differently."""
    flags: list[tuple[str, bool]] = []
    not_rechecked = 0
    for run in runs:
        first, _ = verified_coverage(run, model=AnchorCoverage)
        second, _ = verified_coverage(run, model=AnchorRecheck)
        clusters = {
            pk: f"{version}:{base_index}"
            for pk, version, base_index in Conversation.objects.filter(run=run)
            .values_list("pk", "scenario__metric_version_id", "scenario__base_index")
            .order_by()
        }
        for conversation, readings in first.items():
            again = second.get(conversation)
            if again is None:
                not_rechecked += 1
                continue
            cluster = clusters[conversation]
            for anchor, raised in readings.items():
                flags.append((cluster, raised != again.get(anchor, False)))
    excluded = [
        Exclusion(gettext_noop("checked conversations without a second check"), not_rechecked)
    ]
    excluded = [e for e in excluded if e.count]
    return clustered_share(
        [float(differs) for _, differs in flags],
        [cluster for cluster, _ in flags],
        method=NOISE_METHOD,
        excluded=excluded,
    ).as_dict()


def anchor_study_figures(
    with_run: EvaluationRun, without_run: EvaluationRun, *, n_resamples: int = 10_000, seed: int = 0
) -> dict[str, Any]:
    """Everything the study's page and API answer publish (computed once, when published)."""
    on = anchor_consistency(with_run, n_resamples=n_resamples, seed=seed)
    off = anchor_consistency(without_run, n_resamples=n_resamples, seed=seed)
    return {
        "with_anchors": on,
        "without_anchors": off,
        "paired": paired_difference(with_run, without_run, seed=seed),
        "checker_noise": checker_noise([with_run, without_run]),
        "n_unverified": on.get("n_unverified", 0) + off.get("n_unverified", 0),
    }


def anchor_study_publish(
    *,
    with_run: EvaluationRun,
    without_run: EvaluationRun,
    release: Release,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> AnchorStudy:
    """Compute the study's figures and publish them with `release` (again: replaced).

    Raises ValueError when the pair is not a study: the first run must simulate with anchors
    and the second without, both completed, with replicates, over the same metric versions,
    all of them items of the (published) release.
    """
    if not with_run.use_anchors or without_run.use_anchors:
        raise ValueError("The first run must use anchors and the second must not.")
    for run in (with_run, without_run):
        if run.status != RunStatus.COMPLETED:
            raise ValueError(f"Run {run.pk} is not completed.")
        if run.replicates < 2:
            raise ValueError(
                f"Run {run.pk} simulated each scenario once; a study needs replicates."
            )
    if release.status != ReleaseStatus.PUBLISHED:
        raise ValueError(f"Release {release.version} is not published.")
    versions = set(with_run.metric_versions.values_list("pk", flat=True))
    if versions != set(without_run.metric_versions.values_list("pk", flat=True)):
        raise ValueError("The two runs evaluated different metric versions.")
    outside = versions - set(release.items.values_list("metric_version_id", flat=True))
    if outside:
        raise ValueError(f"{len(outside)} metric versions of the runs are not in the release.")
    figures = anchor_study_figures(with_run, without_run, n_resamples=n_resamples, seed=seed)
    study, _ = AnchorStudy.objects.update_or_create(
        with_anchors=with_run,
        without_anchors=without_run,
        defaults={
            "release": release,
            "published_at": timezone.now(),
            "n_resamples": n_resamples,
            "figures": figures,
        },
    )
    return study
