"""Anchor coverage consistency across replicate simulations, from measured coverage.

Reads `AnchorCoverage` rows (a model of the judge's family read each conversation's user turns
and said, per anchor, whether it was raised), never the simulator's plan, so the figure can be
non-zero. A group is (scenario, target) with at least two checked, completed replicates; an
anchor of a group *disagrees* when some replicates raised it and some did not. The figure is
disagreeing anchors over all anchors, an Estimate with a Wilson interval on the effective sample
size (the replicates and variants of one base situation are not independent; `clustered_share`).

Run the same scenarios with and without anchors (`run_evaluation --no-anchors`) to see what the
anchors do for consistency.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any

import numpy as np
from django.utils.translation import gettext_noop

from evaluations.models import AnchorCoverage, Conversation, ConversationStatus, EvaluationRun
from stats import proportion_from_clusters
from stats.estimates import Estimate, Exclusion

WILSON = "Wilson score interval on the effective sample size (design effect over base scenarios)"
METHOD = f"share of anchors raised in some replicates and not others; {WILSON}"
# An anchor counts as raised only when the checker's quote was found in the user turn it named:
# an unverified "raised" may be the checker's invention, so it reads as not raised (and is
# counted, so a reader sees how many readings this rule turned).
UNVERIFIED = "raised readings whose quote was not found in the user turns (read as not raised)"


def verified_coverage(
    run: EvaluationRun, *, model: type = AnchorCoverage
) -> tuple[dict[int, dict[int, bool]], int]:
    """Per conversation of the run, per anchor: raised with a verified quote; and how many
    "raised" readings had no verified quote. `model` is `AnchorCoverage` (the first check) or
    `AnchorRecheck` (the second)."""
    coverage: dict[int, dict[int, bool]] = defaultdict(dict)
    unverified = 0
    for conversation_id, anchor, raised, found in (
        model.objects.filter(conversation__run=run)
        .values_list("conversation_id", "anchor_index", "raised", "quote_found")
        .order_by()
    ):
        coverage[conversation_id][anchor] = raised and found
        unverified += raised and not found
    return coverage, unverified


def completed_conversations(run: EvaluationRun) -> list[tuple]:
    """(pk, scenario, target, metric version, base index, metric key) of completed ones."""
    return list(
        Conversation.objects.filter(run=run, status=ConversationStatus.COMPLETED)
        .values_list(
            "pk",
            "scenario_id",
            "target_id",
            "scenario__metric_version_id",
            "scenario__base_index",
            "scenario__metric_version__metric__key",
        )
        .order_by()
    )


def anchor_consistency(
    run: EvaluationRun, *, n_resamples: int = 10_000, seed: int = 0, worst: int = 20
) -> dict[str, Any]:
    """The run's anchor disagreement across replicates (``disagreement``, an Estimate dict).

    ``n_resamples`` and ``seed`` are the refresh's common options; this interval draws nothing.
    """
    base = {"available": False, "use_anchors": run.use_anchors}
    if run.replicates < 2:
        return {
            **base,
            "reason": gettext_noop(
                "This run simulated each scenario once; consistency needs replicates "
                "(choose a run with replicates, such as an anchor study, above)."
            ),
        }
    completed = completed_conversations(run)
    if not completed:
        return {**base, "reason": gettext_noop("No completed conversations.")}
    coverage, unverified = verified_coverage(run)
    base["n_unverified"] = unverified
    groups, meta, unchecked = replicate_groups(completed, coverage)
    flags: list[float] = []
    clusters: list[str] = []
    per_scenario: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
    readings, single = anchor_disagreements(groups)
    for scenario, _target, disagree in readings:
        version, base_index, _ = meta[scenario]
        flags.append(float(disagree))
        clusters.append(f"{version}:{base_index}")
        per_scenario[scenario][0] += disagree
        per_scenario[scenario][1] += 1
    for scenario, _target in {(s, t) for s, t, _ in readings}:
        per_scenario[scenario][2] += 1
    exclusions = [
        Exclusion(gettext_noop("coverage not checked"), unchecked),
        Exclusion(gettext_noop("fewer than two checked replicates"), single),
    ]
    if not flags:
        estimate = Estimate.insufficient(n=0, method=METHOD, excluded=exclusions)
        return {
            **base,
            "reason": gettext_noop("No scenario has two checked replicates."),
            "disagreement": estimate.as_dict(),
        }
    estimate = clustered_share(
        flags, clusters, method=METHOD, excluded=[e for e in exclusions if e.count]
    )
    listed = [
        {
            "scenario": scenario,
            "metric": meta[scenario][2],
            "base_index": meta[scenario][1],
            "disagreement_rate": d / a,
            "n_anchors": a,
            "n_targets": t,
        }
        for scenario, (d, a, t) in per_scenario.items()
    ]
    listed.sort(key=lambda x: -x["disagreement_rate"])
    return {
        **base,
        "available": True,
        "disagreement": estimate.as_dict(),
        "n_groups": sum(1 for r in groups.values() if len(r) >= 2),
        "n_anchors": len(flags),
        "n_scenarios": len(listed),
        "worst_scenarios": listed[:worst],
    }


Groups = dict[tuple[int, int], list[dict[int, bool]]]


def replicate_groups(
    completed: list[tuple], coverage: dict[int, dict[int, bool]]
) -> tuple[Groups, dict[int, tuple[int, int, str]], int]:
    """Checked replicates per (scenario, target); each scenario's (version, base index, metric
    key); and how many completed conversations had no coverage check."""
    groups: Groups = defaultdict(list)
    meta: dict[int, tuple[int, int, str]] = {}
    unchecked = 0
    for pk, scenario, target, version, base_index, key in completed:
        if pk not in coverage:
            unchecked += 1
            continue
        groups[(scenario, target)].append(coverage[pk])
        meta[scenario] = (version, base_index, key)
    return groups, meta, unchecked


def anchor_disagreements(groups: Groups) -> tuple[list[tuple[int, int, bool]], int]:
    """(scenario, target, disagrees) per anchor of every group with two checked replicates,
    and how many replicates sat alone in their group."""
    readings = []
    single = 0
    for (scenario, target), replicates in groups.items():
        if len(replicates) < 2:
            single += len(replicates)
            continue
        for anchor in sorted(set().union(*replicates)):
            values = {r.get(anchor, False) for r in replicates}
            readings.append((scenario, target, len(values) > 1))
    return readings, single


def clustered_share(
    flags: list[float], clusters: list[str], *, method: str, excluded: list[Exclusion]
) -> Estimate:
    """The share of true flags, with a Wilson interval on the effective sample size.

    A run has a handful of base scenarios, too few for a percentile bootstrap to cover, and a
    share at 0 % (every cluster at zero) would get the interval [0 %, 0 %]. The design effect
    comes from the intra-cluster correlation of the flags across base scenarios, shrunk
    towards a prior (:func:`stats.proportion_from_clusters`).
    """
    n = len(flags)
    if n < 2:
        return Estimate.insufficient(n=n, method=method, excluded=excluded)
    per_cluster: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for cluster, flag in zip(clusters, flags, strict=True):
        per_cluster[cluster][0] += flag
        per_cluster[cluster][1] += 1
    hits = np.array([v[0] for v in per_cluster.values()])
    sizes = np.array([v[1] for v in per_cluster.values()])
    estimate = proportion_from_clusters(hits, sizes, over="base scenarios", excluded=excluded)
    return replace(estimate, method=method)
