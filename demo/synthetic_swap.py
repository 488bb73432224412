"""A synthetic judge-only swap study with planted behaviour, for the synthetic release.

A random sample of the synthetic run's scenarios (drawn by `evaluations.services.swap
.swap_sample`, as a real study's is) is re-judged by "Synthetic judge B", whose verdict on each
conversation is the base judge's verdict changed in a known way:

* with probability ``flip`` the verdict flips, whichever it was;
* otherwise, a pass is failed with probability ``harshness`` (judge B is stricter).

So, for a model whose base pass rate on the sample is ``p``, the expected share of verdicts
that flip is ``flip + (1 - flip) * harshness * p`` and the expected pass-rate shift (swap minus
base) is ``flip * (1 - 2p) - (1 - flip) * harshness * p`` (`planted_flip_share`,
`planted_shift`): `results.services.swap_study` computes its figures from the stored rows, and
tests check them against these. Judge B's repeated readings disagree with its verdict on at
most one reading (never the first), so its stored verdict is always the majority of them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evaluations.models import EvaluationRun, Scenario, SwapStudy
from evaluations.services.swap import swap_sample
from evaluations.services.synthetic import SyntheticConversation, swap_study_create_synthetic
from llm.models import ModelConfiguration

# A minority reading of judge B disagrees with its verdict this often (single vs majority).
READING_DISAGREEMENT = 0.1


def planted_flip_share(*, flip: float, harshness: float, base_pass_rate: float) -> float:
    """The expected share of verdicts judge B changes, given the base pass rate."""
    return flip + (1 - flip) * harshness * base_pass_rate


def planted_shift(*, flip: float, harshness: float, base_pass_rate: float) -> float:
    """The expected pass-rate shift (judge B minus the base judge), given the base pass rate."""
    p = base_pass_rate
    return flip * (1 - 2 * p) - (1 - flip) * harshness * p


def synthetic_swap_study_create(
    *,
    run: EvaluationRun,
    judge: ModelConfiguration,
    scenarios: Sequence[Scenario],
    targets: Sequence[ModelConfiguration],
    verdict_present: np.ndarray,
    positive: np.ndarray,
    size: int,
    flip: float,
    harshness: float,
    judgments: int,
    seed: int,
) -> SwapStudy:
    """Judge B's re-judging of ``size`` sampled scenarios of ``run`` (all its targets).

    ``verdict_present[s, t]`` is the base judge's verdict on scenario ``s`` for target ``t``,
    ``positive[s]`` whether the scenario's metric is positive (a pass is its presence).
    """
    sample = swap_sample(base_run=run, size=size, seed=seed)
    row_of = {scenario.pk: s for s, scenario in enumerate(scenarios)}
    rows = np.array([row_of[pk] for pk in sample], dtype=int)
    rng = np.random.default_rng([seed, 25])
    base_present = verdict_present[rows]
    base_passed = base_present == positive[rows][:, None]
    flipped = rng.random(base_present.shape) < flip
    failed = ~flipped & base_passed & (rng.random(base_present.shape) < harshness)
    present = base_present ^ (flipped | failed)
    passed = present == positive[rows][:, None]
    # One minority reading at most, never the first (which breaks an even number's tie).
    odd_one = rng.integers(1, judgments, size=present.shape) if judgments >= 3 else None
    disagree = rng.random(present.shape) < READING_DISAGREEMENT
    conversations = []
    for i, s in enumerate(rows):
        for t, target in enumerate(targets):
            readings = [bool(present[i, t])] * judgments
            if odd_one is not None and disagree[i, t]:
                readings[odd_one[i, t]] = not readings[odd_one[i, t]]
            conversations.append(
                SyntheticConversation(
                    scenario_id=scenarios[s].pk,
                    target_id=target.pk,
                    present=readings,
                    verdict_present=bool(present[i, t]),
                    verdict_passed=bool(passed[i, t]),
                )
            )
    return swap_study_create_synthetic(
        base_run=run, judge=judge, scenario_ids=sample, seed=seed, conversations=conversations
    )
