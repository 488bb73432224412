"""How a model's pass rate changed from one run (release, model version) to another, paired.

A change is estimated on the base scenarios both runs used: a hard scenario lowers both rates
and cancels from the change, as between two models of one run (`stats.differences`). Runs of
releases that share no scenarios cannot be paired; the change is then reported as unpaired,
never as a paired figure.
"""

from collections import defaultdict
from typing import Any

import numpy as np
from django.utils.translation import gettext_noop

from evaluations.models import Conversation
from stats import differences

Cluster = tuple[int, int]  # (metric version, base situation)


def paired_change(
    later: dict[Cluster, tuple[int, int]], earlier: dict[Cluster, tuple[int, int]]
) -> dict[str, Any]:
    """The change of pass rate later − earlier on the clusters both hold, from
    `{cluster: (passed, conversations)}` per run; `paired` False with a reason when fewer than
    two clusters are shared."""
    shared = sorted(set(later) & set(earlier))
    if len(shared) < 2:
        return {
            "paired": False,
            "n_shared": len(shared),
            "reason": gettext_noop(
                "The two runs share too few scenarios for the change to be paired."
            ),
        }
    passed = np.array([[later[c][0], earlier[c][0]] for c in shared], dtype=float)
    n = np.array([[later[c][1], earlier[c][1]] for c in shared], dtype=float)
    result = differences.paired_rate_differences(passed, n, [c[0] for c in shared])
    return {
        "paired": True,
        "n_shared": len(shared),
        "estimate": result.estimates()[0].as_dict(),
        "method": differences.PAIRED_DIFFERENCE,
    }


def change_text(change: dict[str, Any]) -> str:
    """ "+12 points [4, 20] on 18 shared scenarios", or why there is no paired figure."""
    if not change["paired"]:
        return "cannot be paired: the two runs share too few scenarios"
    e = change["estimate"]
    return (
        f"{e['value'] * 100:+.0f} points [{e['low'] * 100:+.0f}, {e['high'] * 100:+.0f}] on "
        f"{change['n_shared']} shared base scenarios"
    )


def run_cluster_counts(
    *, run_id: int, target_id: int, category_id: int, age: str | None = None
) -> dict[Cluster, tuple[int, int]]:
    """`{(metric version, base situation): (passed, judged conversations)}` of one model on
    the metrics of one label category."""
    rows = Conversation.objects.filter(
        run_id=run_id,
        target_id=target_id,
        scenario__metric_version__label_category_id=category_id,
        verdict_passed__isnull=False,
    )
    if age:
        rows = rows.filter(scenario__age_context=age)
    counts: dict[Cluster, list[int]] = defaultdict(lambda: [0, 0])
    for version, base, passed in rows.values_list(
        "scenario__metric_version_id", "scenario__base_index", "verdict_passed"
    ):
        counts[(version, base)][0] += int(passed)
        counts[(version, base)][1] += 1
    return {key: (p, n) for key, (p, n) in counts.items()}
