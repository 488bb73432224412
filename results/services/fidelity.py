"""Simulator fidelity as published figures: did the simulated users do their job?

Each completed conversation's `FidelityReading` says whether its simulated user met the bar (all
five criteria held). Per simulator configuration (a release's official runs may use different
simulators), this module publishes the share of conversations meeting the bar and the share
holding each criterion, each an Estimate: Wilson score interval on the effective sample size
over base scenarios (a situation's teen and adult forms and every model's conversation of it are
not independent), bounded so it never collapses to a point at 0 % or 100 %.

Conversations below the bar are never dropped: they are listed, and the judge's pass rates are
given twice (sensitivity), over every judged conversation and over those meeting the bar only,
with the same estimator on both sides so the difference is the bar's alone.

Computed with the run analysis (`refresh`) and stored in it: the public pages and the API read
the stored figures (`fidelity_published`) and draw nothing per request.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.db.models import Count, Q, QuerySet
from django.utils.translation import gettext_noop

from evaluations.models import Conversation, ConversationStatus, EvaluationRun
from evaluations.models.fidelity import CRITERION_FIELDS, FidelityCriterion
from results.models import RunAnalysis
from stats import proportion_from_clusters
from stats.estimates import Exclusion

from .fidelity_agreement import fidelity_expert_agreement

OVER = "base scenarios"
SHARE_METHOD = (
    "share of checked conversations; Wilson score interval on the effective sample size over "
    "base scenarios"
)
RATE_METHOD = (
    "judged conversations passed; Wilson score interval on the effective sample size over base "
    "scenarios (the same estimator with and without the conversations below the bar)"
)
NOT_CHECKED = "not checked"
FAILED = "failed"
NOT_FINISHED = "not finished"
NO_VERDICT = "no verdict"
BELOW_BAR = gettext_noop("below the fidelity bar")

# Per cluster (base scenario) and target: what the aggregate query counts.
COUNTS = {
    "completed": Q(status=ConversationStatus.COMPLETED),
    "failed": Q(status=ConversationStatus.FAILED),
    "checked": Q(status=ConversationStatus.COMPLETED, fidelity__isnull=False),
    "passed": Q(status=ConversationStatus.COMPLETED, fidelity__passed=True),
    **{
        f"held_{criterion.value}": Q(
            status=ConversationStatus.COMPLETED, **{f"fidelity__{name}": True}
        )
        for criterion, name in CRITERION_FIELDS.items()
    },
    "judged": Q(status=ConversationStatus.COMPLETED, verdict_passed__isnull=False),
    "judged_pass": Q(status=ConversationStatus.COMPLETED, verdict_passed=True),
    "judged_bar": Q(
        status=ConversationStatus.COMPLETED, verdict_passed__isnull=False, fidelity__passed=True
    ),
    "judged_bar_pass": Q(
        status=ConversationStatus.COMPLETED, verdict_passed=True, fidelity__passed=True
    ),
    "judged_below": Q(
        status=ConversationStatus.COMPLETED, verdict_passed__isnull=False, fidelity__passed=False
    ),
}


@dataclass
class _Tally:
    """Counts summed per base scenario: ``by_cluster[cluster][count name]``."""

    by_cluster: dict[str, dict[str, int]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(int))
    )

    def add(self, cluster: str, row: dict[str, Any]) -> None:
        for name in COUNTS:
            self.by_cluster[cluster][name] += row[name]

    def total(self, name: str) -> int:
        return sum(counts[name] for counts in self.by_cluster.values())

    def share(
        self, hits: str, of: str, *, excluded: Iterable[Exclusion], method: str
    ) -> dict[str, Any]:
        clusters = sorted(self.by_cluster)
        estimate = proportion_from_clusters(
            [self.by_cluster[c][hits] for c in clusters],
            [self.by_cluster[c][of] for c in clusters],
            over=OVER,
            excluded=tuple(excluded),
        )
        return replace(estimate, method=method).as_dict()


def fidelity_rows(runs: Sequence[EvaluationRun]) -> QuerySet:
    """One row per simulator, base scenario, target and polarity, with every count of
    `COUNTS`: the run's conversations are counted in the database, never loaded."""
    return (
        Conversation.objects.filter(run__in=runs)
        .values(
            "run__simulator_id",
            "run__simulator__name",
            "scenario__metric_version_id",
            "scenario__base_index",
            "scenario__metric_version__polarity",
            "target_id",
            "target__name",
        )
        .annotate(total=Count("pk"), **{name: Count("pk", filter=q) for name, q in COUNTS.items()})
        .order_by("run__simulator_id", "target_id")
    )


def below_bar_rows(runs: Sequence[EvaluationRun]) -> QuerySet:
    """The completed conversations whose simulated user fell below the bar, with what their
    listing shows."""
    return (
        Conversation.objects.filter(
            run__in=runs, status=ConversationStatus.COMPLETED, fidelity__passed=False
        )
        .values(
            "pk",
            "run__simulator_id",
            "scenario_id",
            "scenario__base_index",
            "scenario__age_context",
            "scenario__metric_version__metric__key",
            "target__name",
            "fidelity__repeated_lines",
            *(f"fidelity__{name}" for name in CRITERION_FIELDS.values()),
        )
        .order_by("run__simulator_id", "pk")
    )


def _exclusions(tally: _Tally, totals: dict[str, int]) -> list[Exclusion]:
    excluded = [
        Exclusion(NOT_CHECKED, tally.total("completed") - tally.total("checked")),
        Exclusion(FAILED, tally.total("failed")),
        Exclusion(NOT_FINISHED, totals["unfinished"]),
    ]
    return [e for e in excluded if e.count]


def _sensitivity(by_target: dict[tuple[int, str], dict[str, Any]]) -> list[dict[str, Any]]:
    """Per target and polarity: the judge's pass rate over every judged conversation, and over
    those meeting the bar only, with what the second leaves out."""
    figures = []
    for (_, polarity), target in sorted(by_target.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        tally: _Tally = target["tally"]
        judged = tally.total("judged")
        below = tally.total("judged_below")
        kept = tally.total("judged_bar")
        unchecked = judged - kept - below
        failed = [Exclusion(FAILED, tally.total("failed"))]
        no_verdict = tally.total("completed") - judged
        all_judged = tally.share(
            "judged_pass",
            "judged",
            excluded=[*failed, Exclusion(NO_VERDICT, no_verdict)],
            method=RATE_METHOD,
        )
        meeting = tally.share(
            "judged_bar_pass",
            "judged_bar",
            excluded=[
                Exclusion(BELOW_BAR, below),
                Exclusion(NOT_CHECKED, unchecked),
                *failed,
                Exclusion(NO_VERDICT, no_verdict),
            ],
            method=RATE_METHOD,
        )
        figures.append(
            {
                "target_id": target["id"],
                "target": target["name"],
                "polarity": polarity,
                "all_judged": all_judged,
                "meeting_bar": meeting,
                "left_out": below + unchecked,
                "left_out_below_bar": below,
                "left_out_not_checked": unchecked,
            }
        )
    return figures


def _below_bar_listing(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "conversation": row["pk"],
        "scenario": row["scenario_id"],
        "metric": row["scenario__metric_version__metric__key"],
        "situation": row["scenario__base_index"] + 1,
        "age_context": row["scenario__age_context"],
        "target": row["target__name"],
        "repeated_lines": row["fidelity__repeated_lines"],
        "failed_criteria": [
            criterion.value
            for criterion, name in CRITERION_FIELDS.items()
            if not row[f"fidelity__{name}"]
        ],
    }


def fidelity_figures(
    *, runs: Sequence[EvaluationRun], n_resamples: int = 2_000, seed: int = 0
) -> dict[str, Any]:
    """The fidelity figures of ``runs``, per simulator configuration (JSON-ready), and the
    experts' realism answers against the check. Four queries however many conversations."""
    simulators: dict[int, dict[str, Any]] = {}
    for row in fidelity_rows(runs):
        simulator = simulators.setdefault(
            row["run__simulator_id"],
            {
                "name": row["run__simulator__name"],
                "tally": _Tally(),
                "targets": {},
                "unfinished": 0,
            },
        )
        cluster = f"{row['scenario__metric_version_id']}:{row['scenario__base_index']}"
        simulator["tally"].add(cluster, row)
        simulator["unfinished"] += row["total"] - row["completed"] - row["failed"]
        target = simulator["targets"].setdefault(
            (row["target_id"], row["scenario__metric_version__polarity"]),
            {"id": row["target_id"], "name": row["target__name"], "tally": _Tally()},
        )
        target["tally"].add(cluster, row)
    below: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in below_bar_rows(runs):
        below[row["run__simulator_id"]].append(_below_bar_listing(row))
    figures = []
    for simulator_id, simulator in simulators.items():
        tally: _Tally = simulator["tally"]
        excluded = _exclusions(tally, {"unfinished": simulator["unfinished"]})
        figures.append(
            {
                "simulator_id": simulator_id,
                "simulator": simulator["name"],
                "n_checked": tally.total("checked"),
                "n_below_bar": tally.total("checked") - tally.total("passed"),
                "excluded": [e.as_dict() for e in excluded],
                "meets_bar": tally.share(
                    "passed", "checked", excluded=excluded, method=SHARE_METHOD
                ),
                "criteria": [
                    {
                        "criterion": criterion.value,
                        "held": tally.share(
                            f"held_{criterion.value}",
                            "checked",
                            excluded=excluded,
                            method=SHARE_METHOD,
                        ),
                    }
                    for criterion in FidelityCriterion
                ],
                "below_bar": below.get(simulator_id, []),
                "sensitivity": _sensitivity(simulator["targets"]),
            }
        )
    return {
        "available": bool(figures),
        "reason": "" if figures else "no conversations",
        "simulators": figures,
        "agreement": fidelity_expert_agreement(runs=runs, n_resamples=n_resamples, seed=seed),
    }


NOT_COMPUTED = "The fidelity figures are not computed yet for this run."


def fidelity_published(run: EvaluationRun) -> dict[str, Any]:
    """The fidelity figures stored with the run's analysis (what public pages and the API
    show), or why there are none; one query."""
    reliability = (
        RunAnalysis.objects.filter(run=run).values_list("reliability", flat=True).first() or {}
    )
    return fidelity_from_reliability(reliability)


def fidelity_from_reliability(reliability: dict[str, Any]) -> dict[str, Any]:
    """The fidelity part of an already read analysis (no query)."""
    stored = reliability.get("fidelity")
    if stored is None:
        return {"available": False, "reason": NOT_COMPUTED, "simulators": [], "agreement": None}
    return stored


def fidelity_labelled(figures: dict[str, Any]) -> dict[str, Any]:
    """The stored figures with each criterion's label in the reader's language (the stored
    JSON keeps keys only, so a page never shows the language the refresh ran in)."""
    labels = {c.value: str(c.label) for c in FidelityCriterion}
    return {
        **figures,
        "simulators": [
            {
                **simulator,
                "criteria": [
                    {**row, "label": labels.get(row["criterion"], row["criterion"])}
                    for row in simulator["criteria"]
                ],
                "below_bar": [
                    {**row, "failed_labels": [labels.get(k, k) for k in row["failed_criteria"]]}
                    for row in simulator["below_bar"]
                ],
            }
            for simulator in figures.get("simulators", [])
        ],
    }
