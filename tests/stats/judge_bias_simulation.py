"""A judge harsh on some models, blind experts giving the truth: how often "judge agrees less
for this model" catches the harsh models and how often it flags the others (the suite and
``benchmarks/judge_bias.py`` share it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stats.judge_bias import agreement_gaps

BASES, VARIANTS = 3, 2  # per metric: each base scenario in a teen and an adult variant


@dataclass(frozen=True)
class Design:
    """The release simulated: ``metrics`` x ``models`` x 6 conversations, of which
    ``rated_per_model`` (None: all) get one blind expert verdict each."""

    metrics: int = 120
    models: int = 6
    harsh_models: int = 3
    harshness: float = 0.2  # share of true passes the judge fails for the harsh models
    judge_error: float = 0.02  # the judge's verdict flipped at random, for every model
    scenario_sd: float = 1.0  # base scenarios' effects on the pass logit
    rated_per_model: int | None = None


def simulated_ratings(design: Design, rng: np.random.Generator):
    """Model, metric, judge and expert verdicts and base scenario of each blind rating."""
    per_model = design.metrics * BASES * VARIANTS
    model = np.repeat(np.arange(design.models), per_model)
    metric = np.tile(np.repeat(np.arange(design.metrics), BASES * VARIANTS), design.models)
    base = np.tile(np.repeat(np.arange(design.metrics * BASES), VARIANTS), design.models)
    effect = rng.normal(0.0, design.scenario_sd, design.metrics * BASES)
    level = rng.normal(0.4, 0.5, design.models)
    truth = rng.random(model.size) < 1.0 / (1.0 + np.exp(-(level[model] + effect[base])))
    harsh = model < design.harsh_models
    missed = truth & harsh & (rng.random(model.size) < design.harshness)
    judge = (truth & ~missed) ^ (rng.random(model.size) < design.judge_error)
    if design.rated_per_model is not None:
        keep = np.concatenate(
            [
                m * per_model + rng.choice(per_model, design.rated_per_model, replace=False)
                for m in range(design.models)
            ]
        )
        model, metric, base, judge, truth = (a[keep] for a in (model, metric, base, judge, truth))
    return model, metric, judge.astype(float), truth.astype(float), base


def flag_rates(design: Design, replications: int, seed: int = 0) -> dict[str, float]:
    """Share of harsh models flagged (power) and of the others (false flags), with each's Monte
    Carlo standard error; ``below zero``: the same without the badge's floor on verdicts;
    ``any fair flagged``: share of releases in which any model the judge treats fairly is
    flagged (the family-wise false-flag rate)."""
    rng = np.random.default_rng(seed)
    counts = {"harsh": [0, 0, 0], "fair": [0, 0, 0]}  # flagged, below zero, models
    any_fair_flagged = 0
    for _ in range(replications):
        model, metric, judge, expert, base = simulated_ratings(design, rng)
        gaps = agreement_gaps(model, metric, judge, expert, base)
        any_fair_flagged += any(
            gap.agrees_less for name, gap in gaps.items() if name >= design.harsh_models
        )
        for name, gap in gaps.items():
            side = counts["harsh" if name < design.harsh_models else "fair"]
            side[0] += gap.agrees_less
            high = gap.difference.high
            side[1] += high is not None and high < 0
            side[2] += 1
    family = any_fair_flagged / replications
    out: dict[str, float] = {
        "any fair flagged": family,
        "any fair flagged se": (family * (1 - family) / replications) ** 0.5,
    }
    for side, (flagged, below, total) in counts.items():
        for name, hits in (("flagged", flagged), ("below zero", below)):
            rate = hits / total if total else float("nan")
            out[f"{side} {name}"] = rate
            out[f"{side} {name} se"] = (rate * (1 - rate) / total) ** 0.5 if total else float("nan")
    return out
