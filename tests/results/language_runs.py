"""Runs whose situations were judged in English and Spanish, built from the factories."""

from __future__ import annotations

import numpy as np

from evaluations.models import EvaluationRun, Scenario
from tests.evaluations.factories import ScenarioFactory
from tests.llm.factories import OfflineConfigurationFactory
from tests.results.factories import completed_run, metric_version


def language_scenario(version, base: int, age: str, language: str) -> Scenario:
    return ScenarioFactory(
        metric_version=version, base_index=base, age_context=age, language=language
    )


def bilingual_run(
    *, metrics: int = 2, models: int = 2, spanish_drop: float = 0.0, seed: int = 0
) -> EvaluationRun:
    """``metrics`` positive metrics x 3 bases x {teen, adult} x {en, es}, ``models`` models,
    two replicates per cell; Spanish conversations pass ``spanish_drop`` less often."""
    rng = np.random.default_rng(seed)
    targets = [OfflineConfigurationFactory(name=f"Model {i}") for i in range(models)]
    versions = [metric_version() for _ in range(metrics)]
    outcomes = []
    for version in versions:
        for base in range(3):
            for age in ("teen", "adult"):
                rate = rng.uniform(0.4, 0.9)
                for language in ("en", "es"):
                    scen = language_scenario(version, base, age, language)
                    p = rate - (spanish_drop if language == "es" else 0.0)
                    for target in targets:
                        for replicate in range(2):
                            outcomes.append((scen, target, bool(rng.random() < p), replicate))
    return completed_run(targets=targets, versions=versions, outcomes=outcomes, replicates=2)
